//! `cvo --help` in Russian (issue 32): the command tree clap builds from `main.rs`'s derive,
//! with every about, argument help and help heading replaced by the catalogue's Russian text,
//! and clap's own words (`Usage:`, `Commands:`, `Options:`, `Arguments:`, `Print help`,
//! `Print version`, the `help` subcommand) in Russian too.
//!
//! The language must be known before clap parses (clap prints the help while parsing), so it
//! is read from the raw arguments ([`lang_before_parse`]: `--lang X` or `--lang=X`, else
//! `CVO_LANG`, else the locale). Help follows the locale for every command, `cvo status` and
//! `cvo upgrade` included: scripts parse those commands' output, not their help.
//!
//! In English nothing is touched ([`localized`] returns the command as derived), so the
//! English help stays byte for byte what clap prints and the catalogue is never parsed.
//!
//! The catalogue keys are generated from the tree (`src/l10n/ru/help.ftl`):
//! - `clap-about-PATH` (and `clap-about-PATH-long`) for a command's about, PATH being the
//!   command names below `cvo` joined with `-` (`cvo` itself for the top);
//! - `clap-arg-ID` for an argument's help wherever the argument appears (ID is clap's id with
//!   `_` as `-`), or `clap-arg-PATH--ID` for one command's own text (looked up first);
//!   `-long` after either for the long help;
//! - `clap-after-PATH` (and `clap-after-PATH-long`) for the text after a command's help;
//! - `clap-heading-SLUG` for a help heading (its English words, lower case, joined by `-`).
//!
//! [`problems`] lists what is missing or unused, for the test that walks the whole tree.
//! What stays English: clap's error messages, the bracketed `[env: ..]`, `[default: ..]` and
//! `[possible values: ..]` notes, the long help's list of possible values with their
//! descriptions, value names (`<FILE>`), usage tokens (`[OPTIONS]`, `<COMMAND>`), and the man
//! page and completion scripts (`cvo man`, `cvo completion`).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;

use clap::{Arg, ArgAction, Command};

use crate::l10n::{self, Lang, tr};

/// The prefix of the generated keys; the catalogue test of `l10n` leaves them to [`problems`].
pub const KEY_PREFIX: &str = "clap-";

/// The language of a run's help, from its raw arguments `args` (the program name first) and
/// the environment read through `var`: the last `--lang X` / `--lang=X` before a `--`, else a
/// non-empty `CVO_LANG`, else the locale ([`Lang::from_locale_env`]). A value that is not a
/// language gives English (clap then reports it).
pub fn lang_before_parse(args: &[OsString], var: impl Fn(&str) -> Option<String>) -> Lang {
    let mut flag = None;
    let mut it = args.iter().skip(1).filter_map(|a| a.to_str());
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        if a == "--lang" {
            flag = it.next().map(str::to_owned);
        } else if let Some(v) = a.strip_prefix("--lang=") {
            flag = Some(v.to_owned());
        }
    }
    match flag.or_else(|| var("CVO_LANG")).filter(|v| !v.is_empty()) {
        Some(v) => Lang::parse(&v).unwrap_or(Lang::En),
        None => Lang::from_locale_env(var),
    }
}

/// `cmd` ready to parse this process's command line: as it is in English, in Russian
/// ([`russian`]) when [`lang_before_parse`] says so for the process's arguments and
/// environment.
pub fn localized(cmd: Command) -> Command {
    let args: Vec<OsString> = std::env::args_os().collect();
    match lang_before_parse(&args, |k| std::env::var(k).ok()) {
        Lang::En => cmd,
        Lang::Ru => l10n::scoped(Lang::Ru, || russian(cmd)),
    }
}

/// `cmd` with its help in the current language (call it in Russian: [`l10n::scoped`]). The
/// tree is built (`Command::build`) so that clap's `help` subcommand can be translated too.
pub fn russian(cmd: Command) -> Command {
    let with_version = cmd.get_version().is_some() && cmd.is_propagate_version_set();
    let mut cmd = arrange(cmd, "", with_version);
    cmd.build();
    help_subcommands(cmd)
}

/// The catalogue path of a command below `parent` (`""` for the top).
fn path_of(parent: &str, name: &str) -> String {
    match parent {
        "" => "cvo".to_owned(),
        "cvo" => name.to_owned(),
        p => format!("{p}-{name}"),
    }
}

/// The Russian text of a generated key, if the catalogue has it.
fn ru(key: &str) -> Option<&'static str> {
    l10n::message(key)
}

/// The key of a heading: its words in lower case joined by `-`.
fn heading_key(heading: &str) -> String {
    let slug: Vec<String> = heading
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    format!("{KEY_PREFIX}heading-{}", slug.join("-"))
}

/// The keys an argument's help is looked up under, the command's own first.
fn arg_keys(path: &str, arg: &Arg) -> [String; 2] {
    let id = arg.get_id().as_str().replace('_', "-");
    [
        format!("{KEY_PREFIX}arg-{path}--{id}"),
        format!("{KEY_PREFIX}arg-{id}"),
    ]
}

/// Whether clap would offer a long help for `cmd` (`Command::long_help_exists_` in
/// clap_builder's `builder/command.rs`), for the words of the `--help` flag.
fn long_help_exists(cmd: &Command) -> bool {
    let long = |a: &Arg| {
        !a.is_hide_set()
            && (a.get_long_help().is_some()
                || a.is_hide_long_help_set()
                || a.is_hide_short_help_set()
                || (!a.is_hide_possible_values_set()
                    && a.get_possible_values()
                        .iter()
                        .any(|v| !v.is_hide_set() && v.get_help().is_some())))
    };
    cmd.get_long_about().is_some() || cmd.get_arguments().any(long)
}

/// One command and its subcommands before clap builds them: texts translated, clap's own
/// `--help`/`--version` replaced by ours in Russian, the unheaded options under a Russian
/// heading (and listed first, as clap lists `Options:` first), the template's `Usage:` in
/// Russian.
fn arrange(cmd: Command, parent: &str, with_version: bool) -> Command {
    let path = path_of(parent, cmd.get_name());
    let long = long_help_exists(&cmd);
    // clap counts a command without a version (a subcommand before `propagate_version` gives
    // it the top's) as one whose version flag is off: ask a copy that has one.
    let own_version = with_version && !cmd.clone().version("").is_disable_version_flag_set();
    let mut cmd = cmd;
    if let Some(t) = ru(&format!("{KEY_PREFIX}about-{path}")) {
        cmd = cmd.about(t);
    }
    if let Some(t) = ru(&format!("{KEY_PREFIX}about-{path}-long")) {
        cmd = cmd.long_about(t);
    }
    if let Some(t) = ru(&format!("{KEY_PREFIX}after-{path}")) {
        cmd = cmd.after_help(t);
    }
    if let Some(t) = ru(&format!("{KEY_PREFIX}after-{path}-long")) {
        cmd = cmd.after_long_help(t);
    }
    let options = tr!("help-clap-options", "Options");
    let arguments = tr!("help-clap-arguments", "Arguments");
    cmd = cmd.mut_args(|a| translate_arg(a, &path, options, arguments));
    // Under a heading of their own, clap sorts the positionals as options (by display order,
    // then name): keep their order of position.
    let mut position = 0;
    cmd = cmd.mut_args(|a| {
        if !a.is_positional() {
            return a;
        }
        position += 1;
        a.display_order(position)
    });
    // Ours first, then every argument under a heading of its own moved after them, so that
    // the options come first as in English.
    let help = Arg::new("help")
        .short('h')
        .long("help")
        .action(ArgAction::Help)
        .help_heading(options);
    let help = if long {
        help.help(tr!(
            "help-clap-print-help-more",
            "Print help (see more with '--help')"
        ))
        .long_help(tr!(
            "help-clap-print-help-summary",
            "Print help (see a summary with '-h')"
        ))
    } else {
        help.help(tr!("help-clap-print-help", "Print help"))
    };
    cmd = cmd.disable_help_flag(true).arg(help);
    if own_version {
        cmd = cmd.disable_version_flag(true).arg(
            Arg::new("version")
                .short('V')
                .long("version")
                .action(ArgAction::Version)
                .help(tr!("help-clap-print-version", "Print version"))
                .help_heading(options),
        );
    }
    let later: Vec<String> = cmd
        .get_arguments()
        .filter(|a| {
            a.get_help_heading()
                .is_some_and(|h| h != options && h != arguments)
        })
        .map(|a| a.get_id().to_string())
        .collect();
    for id in later {
        cmd = cmd.mut_arg(id, |a| a);
    }
    let usage = cmd.get_styles().get_usage();
    let usage = format!("{usage}{}{usage:#}", tr!("help-clap-usage", "Usage:"));
    cmd = cmd
        .help_template(format!(
            "{{before-help}}{{about-with-newline}}\n{usage} {{usage}}\n\n{{all-args}}{{after-help}}"
        ))
        .subcommand_help_heading(tr!("help-clap-commands", "Commands"));
    cmd.mut_subcommands(|sc| arrange(sc, &path, with_version))
}

/// One argument's help, long help and heading in the current language.
fn translate_arg(a: Arg, path: &str, options: &'static str, arguments: &'static str) -> Arg {
    let [own, shared] = arg_keys(path, &a);
    let mut a = a;
    // Only the texts the argument has: a shared key must not give help to one without.
    if a.get_help().is_some()
        && let Some(t) = ru(&own).or_else(|| ru(&shared))
    {
        a = a.help(t);
    }
    if a.get_long_help().is_some()
        && let Some(t) = ru(&format!("{own}-long")).or_else(|| ru(&format!("{shared}-long")))
    {
        a = a.long_help(t);
    }
    let heading = match a.get_help_heading() {
        Some(h) => match ru(&heading_key(h)) {
            Some(t) => t,
            None => return a,
        },
        None if a.is_positional() => arguments,
        None => options,
    };
    a.help_heading(heading)
}

/// clap's `help` subcommand (made by `Command::build`) in the current language, in every
/// command that has one.
fn help_subcommands(cmd: Command) -> Command {
    cmd.mut_subcommands(|sc| {
        if sc.get_name() == "help" {
            sc.about(tr!(
                "help-clap-help-command",
                "Print this message or the help of the given subcommand(s)"
            ))
        } else {
            help_subcommands(sc)
        }
    })
}

/// What the Russian catalogue lacks for the help of `cmd` (as derived, not yet built), and
/// the generated keys it has that no help uses, one line each; empty when every about,
/// argument help and heading of the tree has its Russian text. A shared `clap-arg-ID` that
/// would serve two different English texts is named too (one of them needs its
/// `clap-arg-PATH--ID`).
pub fn problems(cmd: &Command) -> Vec<String> {
    let mut walk = Walk::default();
    walk.command(cmd, "");
    let mut out = walk.missing;
    for (key, texts) in &walk.shared {
        if texts.len() > 1 {
            out.push(format!(
                "{key} serves different English texts ({}): give each command its own \
                 {KEY_PREFIX}arg-PATH--ID",
                texts.iter().cloned().collect::<Vec<_>>().join(" | ")
            ));
        }
    }
    for key in l10n::keys(l10n::RU_FTL).filter(|k| k.starts_with(KEY_PREFIX)) {
        if !walk.used.contains(key) {
            out.push(format!("ru/help.ftl: key {key} is used by no help text"));
        }
    }
    out
}

/// What [`problems`] gathers on its walk.
#[derive(Default)]
struct Walk {
    used: BTreeSet<String>,
    missing: Vec<String>,
    /// Each shared argument key used, with the English texts it stands for.
    shared: BTreeMap<String, BTreeSet<String>>,
}

impl Walk {
    fn text(&mut self, keys: &[String], en: &str, what: &str) {
        match keys.iter().find(|k| ru(k).is_some()) {
            Some(k) => {
                self.used.insert(k.clone());
                if keys.len() == 2 && *k == keys[1] {
                    self.shared.entry(k.clone()).or_default().insert(en.to_owned());
                }
            }
            None => self.missing.push(format!(
                "{what}: no Russian text under {} for {en:?}",
                keys.join(" or ")
            )),
        }
    }

    fn command(&mut self, cmd: &Command, parent: &str) {
        if cmd.is_hide_set() {
            return;
        }
        let path = path_of(parent, cmd.get_name());
        let what = format!("`{}`", path.replace('-', " "));
        if let Some(about) = cmd.get_about() {
            self.text(&[format!("{KEY_PREFIX}about-{path}")], &about.to_string(), &what);
        }
        if let Some(about) = cmd.get_long_about() {
            let key = format!("{KEY_PREFIX}about-{path}-long");
            self.text(&[key], &about.to_string(), &what);
        }
        if let Some(after) = cmd.get_after_help() {
            let key = format!("{KEY_PREFIX}after-{path}");
            self.text(&[key], &after.to_string(), &what);
        }
        if let Some(after) = cmd.get_after_long_help() {
            let key = format!("{KEY_PREFIX}after-{path}-long");
            self.text(&[key], &after.to_string(), &what);
        }
        if cmd.get_before_help().is_some() || cmd.get_before_long_help().is_some() {
            self.missing.push(format!(
                "{what}: a before_help, which this module does not translate"
            ));
        }
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let [own, shared] = arg_keys(&path, a);
            let what = format!("{what} argument {}", a.get_id());
            if let Some(h) = a.get_help() {
                self.text(&[own.clone(), shared.clone()], &h.to_string(), &what);
            }
            if let Some(h) = a.get_long_help() {
                let keys = [format!("{own}-long"), format!("{shared}-long")];
                self.text(&keys, &h.to_string(), &what);
            }
            if let Some(h) = a.get_help_heading() {
                self.text(&[heading_key(h)], h, &what);
            }
        }
        for sc in cmd.get_subcommands() {
            self.command(sc, &path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        std::iter::once("cvo")
            .chain(a.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn the_help_language_comes_from_the_flag_then_cvo_lang_then_the_locale() {
        let ru_locale = |k: &str| (k == "LANG").then(|| "ru_RU.UTF-8".to_owned());
        let none = |_: &str| None;
        assert_eq!(lang_before_parse(&args(&["--help"]), none), Lang::En);
        assert_eq!(lang_before_parse(&args(&["--help"]), ru_locale), Lang::Ru);
        assert_eq!(
            lang_before_parse(&args(&["status", "--help"]), ru_locale),
            Lang::Ru
        );
        assert_eq!(lang_before_parse(&args(&["--lang", "ru", "-h"]), none), Lang::Ru);
        assert_eq!(
            lang_before_parse(&args(&["upgrade", "--lang=ru", "-h"]), none),
            Lang::Ru
        );
        assert_eq!(
            lang_before_parse(&args(&["--lang", "en", "-h"]), ru_locale),
            Lang::En
        );
        // After `--` nothing is a flag; a bad value is clap's to report, in English.
        assert_eq!(lang_before_parse(&args(&["--", "--lang", "ru"]), none), Lang::En);
        assert_eq!(
            lang_before_parse(&args(&["--lang", "de", "-h"]), ru_locale),
            Lang::En
        );
        let cvo_lang = |k: &str| (k == "CVO_LANG").then(|| "ru".to_owned());
        assert_eq!(lang_before_parse(&args(&["-h"]), cvo_lang), Lang::Ru);
        let empty = |k: &str| match k {
            "CVO_LANG" => Some(String::new()),
            "LANG" => Some("ru_RU.UTF-8".to_owned()),
            _ => None,
        };
        assert_eq!(lang_before_parse(&args(&["-h"]), empty), Lang::Ru);
    }

    #[test]
    fn heading_keys_are_the_headings_words() {
        assert_eq!(heading_key("Logging (global)"), "clap-heading-logging-global");
        assert_eq!(
            heading_key("Cluster connection (global: before or after the command)"),
            "clap-heading-cluster-connection-global-before-or-after-the-command"
        );
    }

    /// A small tree: a missing about, a missing argument help and an unused key are named,
    /// and a shared key serving two English texts is caught.
    #[test]
    fn problems_names_what_is_missing() {
        let cmd = Command::new("cvo").about("Top").subcommand(
            Command::new("zzz-made-up")
                .about("Nothing")
                .arg(Arg::new("flag-a").long("a").help("A")),
        );
        let p = problems(&cmd);
        assert!(
            p.iter()
                .any(|l| l.contains("clap-about-zzz-made-up") && l.contains("\"Nothing\"")),
            "{p:#?}"
        );
        assert!(
            p.iter()
                .any(|l| l.contains("clap-arg-zzz-made-up--flag-a or clap-arg-flag-a")),
            "{p:#?}"
        );
    }
}
