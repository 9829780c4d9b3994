//! The language of a command's own words (`l10n`): the global `--lang en|ru` flag (or
//! `CVO_LANG`), else the locale environment (`LC_ALL`, `LC_MESSAGES`, `LANG`, in POSIX order).
//! `cvo status` and `cvo upgrade` print what `oc adm upgrade` prints and scripts parse it: they
//! stay English unless the language is asked for with the flag (or `CVO_LANG`), whatever the
//! locale says.

pub use crate::l10n::Lang;

/// The global `--lang` flag (flattened into the top-level command line).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LangArgs {
    /// The language of cvo's own words: en or ru (default: from LC_ALL, LC_MESSAGES, LANG;
    /// `cvo status` and `cvo upgrade` stay English unless this is given).
    #[arg(
        long,
        value_name = "LANG",
        env = "CVO_LANG",
        global = true,
        value_parser = parse_choice,
        help_heading = "Language (global)"
    )]
    lang: Option<Choice>,
}

impl LangArgs {
    /// The language asked for with `--lang` or a non-empty `CVO_LANG`, if any.
    pub fn lang(&self) -> Option<Lang> {
        self.lang.and_then(|c| c.0)
    }
}

/// A `--lang`/`CVO_LANG` value: a language, or none for an empty `CVO_LANG=` (set but empty
/// counts as not set, as with the locale variables).
#[derive(Clone, Copy, Debug)]
pub struct Choice(Option<Lang>);

fn parse_choice(s: &str) -> Result<Choice, String> {
    if s.is_empty() {
        return Ok(Choice(None));
    }
    parse(s).map(|l| Choice(Some(l)))
}

/// clap's parser of `--lang`: `en` or `ru`; the error names the value.
pub fn parse(s: &str) -> Result<Lang, String> {
    Lang::parse(s)
}

/// The language of a run of `command` (its name, as `main` gives it: `status`, `upgrade`,
/// `tui`, ...): `flag` when given; English for `status` and `upgrade`; else the locale
/// environment's ([`Lang::from_locale_env`]).
pub fn resolve(flag: Option<Lang>, command: &str, var: impl Fn(&str) -> Option<String>) -> Lang {
    match flag {
        Some(lang) => lang,
        None if matches!(command, "status" | "upgrade") => Lang::En,
        None => Lang::from_locale_env(var),
    }
}

/// Sets the process's language for a run of `command` ([`resolve`] on the process's
/// environment).
pub fn choose(flag: Option<Lang>, command: &str) {
    crate::l10n::set(resolve(flag, command, |k| std::env::var(k).ok()));
}

/// Sets the process's language to English for a run whose output is data (`-o json`,
/// `-o yaml`): the documents other tools read hold cvo's texts (messages, reasons, verdicts)
/// in English whatever `--lang` or the locale says. Called by a command before it computes
/// anything when that output is chosen.
pub fn data_output() {
    crate::l10n::set(Lang::En);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ru_locale(k: &str) -> Option<String> {
        (k == "LANG").then(|| "ru_RU.UTF-8".to_owned())
    }

    #[test]
    fn status_and_upgrade_stay_english_under_a_russian_locale() {
        assert_eq!(resolve(None, "status", ru_locale), Lang::En);
        assert_eq!(resolve(None, "upgrade", ru_locale), Lang::En);
        assert_eq!(resolve(Some(Lang::Ru), "status", ru_locale), Lang::Ru);
        assert_eq!(resolve(Some(Lang::Ru), "upgrade", |_| None), Lang::Ru);
    }

    #[test]
    fn other_commands_follow_the_locale_unless_the_flag_says_otherwise() {
        assert_eq!(resolve(None, "tui", ru_locale), Lang::Ru);
        assert_eq!(resolve(None, "demo", ru_locale), Lang::Ru);
        assert_eq!(resolve(None, "demo", |_| None), Lang::En);
        assert_eq!(resolve(Some(Lang::En), "demo", ru_locale), Lang::En);
    }
}
