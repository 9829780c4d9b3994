//! The language of cvo's own words: the dashboard's views, help, popups and confirmations and
//! the one-shot commands' own messages, in English (the default) or Russian (DropApp Plus's
//! administrators read their cluster version operator's documentation in Russian).
//!
//! English costs nothing at run time: every English text stays a compiled-in `&'static str` or a
//! `format!` at its call site ([`tr!`], [`trf!`]); no catalogue is parsed, no map built. The
//! Russian catalogue (`src/l10n/ru/*.ftl`, Fluent syntax, read with the `fluent-bundle` crate) is
//! embedded with `include_str!` and parsed into a bundle the first time a Russian text is asked
//! for, once per process.
//!
//! Each text has a key (`help-title`) and its English text at the call site; the catalogue has
//! the key's Russian text with the same placeholders (`{ $version }` for `{version}`). A unit
//! test (`l10n::tests`) reads every `tr!`/`trf!` of `src/` and fails when a key has no Russian
//! entry, the catalogue has a key the code does not use, or the placeholders differ.
//!
//! What is never translated: what mirrors `oc` in `cvo status` and `cvo upgrade` unless
//! `--lang ru` is given (scripts parse them; `cli::lang`), the engine's condition reasons and
//! messages written into ClusterVersion status (API data other tools read), resource kinds and
//! condition types (ClusterVersion, Available, Progressing, ...), logs, and `-o json|yaml`
//! documents (a command producing one runs in English: `cli::lang::data_output`).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use fluent_bundle::{FluentArgs, FluentResource, FluentValue, concurrent::FluentBundle};

#[cfg(test)]
mod tests;

/// A language cvo speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Lang {
    /// English: the texts in the code, byte for byte.
    #[default]
    En,
    /// Russian: the catalogue `src/l10n/ru/*.ftl`.
    Ru,
}

impl Lang {
    /// The language a `--lang` value names: `en` or `ru` (case-insensitive, a region such as
    /// `ru_RU` or `ru-RU` allowed). Errors name the value.
    pub fn parse(s: &str) -> Result<Lang, String> {
        match s.to_ascii_lowercase().get(..2) {
            Some("en") if s.len() == 2 || s[2..].starts_with(['_', '-', '.']) => Ok(Lang::En),
            Some("ru") if s.len() == 2 || s[2..].starts_with(['_', '-', '.']) => Ok(Lang::Ru),
            _ => Err(format!("unknown language {s:?}: expected en or ru")),
        }
    }

    /// The language of a POSIX locale environment, read through `var`: the first of `LC_ALL`,
    /// `LC_MESSAGES` and `LANG` that is set and not empty decides (POSIX precedence); a value
    /// starting with `ru` is Russian, anything else (and none set) English.
    pub fn from_locale_env(var: impl Fn(&str) -> Option<String>) -> Lang {
        let value = ["LC_ALL", "LC_MESSAGES", "LANG"]
            .into_iter()
            .filter_map(&var)
            .find(|v| !v.is_empty());
        match value {
            Some(v) if v.starts_with("ru") => Lang::Ru,
            _ => Lang::En,
        }
    }
}

/// The process's language, as [`set`] left it (0 English, 1 Russian).
static PROCESS: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// A language for this thread only ([`scoped`]): tests render both languages side by side.
    static THREAD: Cell<Option<Lang>> = const { Cell::new(None) };
}

/// Sets the process's language (called once by the command line, `cli::lang`).
pub fn set(lang: Lang) {
    PROCESS.store(u8::from(lang == Lang::Ru), Ordering::Relaxed);
}

/// The language texts are produced in now: this thread's [`scoped`] language, else the
/// process's ([`set`]).
pub fn current() -> Lang {
    THREAD.with(Cell::get).unwrap_or_else(|| {
        if PROCESS.load(Ordering::Relaxed) == 1 {
            Lang::Ru
        } else {
            Lang::En
        }
    })
}

/// Runs `f` with `lang` as this thread's language, then restores the one before (even when
/// `f` panics). Used by tests and by whatever renders for another reader than the process's.
pub fn scoped<R>(lang: Lang, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Lang>);
    impl Drop for Restore {
        fn drop(&mut self) {
            THREAD.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(THREAD.with(|t| t.replace(Some(lang))));
    f()
}

/// The Russian catalogue, as embedded: Fluent syntax, one message per key, from the files of
/// `src/l10n/ru/` (the dashboard's words, the one-shot commands' messages, clap's `--help`, the
/// engine's event log) joined in that order.
pub const RU_FTL: &str = concat!(
    include_str!("ru/dashboard.ftl"),
    "\n",
    include_str!("ru/commands.ftl"),
    "\n",
    include_str!("ru/help.ftl"),
    "\n",
    include_str!("ru/events.ftl"),
);

/// The parsed Russian catalogue and its plain texts (messages without placeholders, formatted
/// once, so [`text`] can hand out `&'static str`).
struct Russian {
    bundle: FluentBundle<FluentResource>,
    plain: HashMap<&'static str, &'static str>,
}

/// Built by the first Russian text ([`russian`]); never for English.
static RUSSIAN: OnceLock<Russian> = OnceLock::new();

/// Whether this process has parsed the Russian catalogue (never, while every text asked for
/// was English).
pub fn catalogue_loaded() -> bool {
    RUSSIAN.get().is_some()
}

fn russian() -> &'static Russian {
    RUSSIAN.get_or_init(|| {
        // The catalogue is checked by `l10n::tests` (it parses without errors); a broken entry
        // here would only lose that entry, which then shows its key.
        let resource = match FluentResource::try_new(RU_FTL.to_owned()) {
            Ok(r) => r,
            Err((r, _errors)) => r,
        };
        let mut bundle = FluentBundle::new_concurrent(vec![
            "ru".parse::<unic_langid::LanguageIdentifier>()
                .unwrap_or_default(),
        ]);
        // Bidi isolation marks would be cells of disputed width in a terminal.
        bundle.set_use_isolating(false);
        let _overriding = bundle.add_resource(resource);
        let mut plain = HashMap::new();
        for key in keys(RU_FTL) {
            let Some(pattern) = bundle.get_message(key).and_then(|m| m.value()) else {
                continue;
            };
            let mut errors = Vec::new();
            let text = bundle.format_pattern(pattern, None, &mut errors);
            if errors.is_empty() {
                plain.insert(key, &*Box::leak(text.into_owned().into_boxed_str()));
            }
        }
        Russian { bundle, plain }
    })
}

/// The message keys of a Fluent catalogue, in order: each line that starts with an identifier
/// followed by ` =`.
pub fn keys(ftl: &'static str) -> impl Iterator<Item = &'static str> {
    ftl.lines().filter_map(|line| {
        let (key, _) = line.split_once(" =")?;
        let ok = key.starts_with(|c: char| c.is_ascii_lowercase())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        ok.then_some(key)
    })
}

/// The text of `key` in the current language: `en` itself in English; the catalogue's text in
/// Russian (the key itself when the catalogue lacks it, which `l10n::tests` forbids). The empty
/// key is the empty text in every language ([`Text::NONE`]).
pub fn text(key: &'static str, en: &'static str) -> &'static str {
    match current() {
        _ if key.is_empty() => en,
        Lang::En => en,
        Lang::Ru => russian().plain.get(key).copied().unwrap_or(key),
    }
}

/// The Russian text of a message without placeholders, if the catalogue has it: for keys made
/// at run time (`cli::help_l10n`'s, from the command tree), which [`text`] cannot take.
pub fn message(key: &str) -> Option<&'static str> {
    russian().plain.get(key).copied()
}

/// A text known at compile time, for tables built in `const` (the key registry): its key and
/// English text; [`Text::get`] gives it in the current language. Written with [`txt!`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Text {
    /// The catalogue key.
    pub key: &'static str,
    /// The English text.
    pub en: &'static str,
}

impl Text {
    /// No text: empty in every language, with no catalogue entry.
    pub const NONE: Text = Text { key: "", en: "" };

    /// A text from its key and English words.
    pub const fn new(key: &'static str, en: &'static str) -> Text {
        Text { key, en }
    }

    /// The text in the current language ([`text`]).
    pub fn get(self) -> &'static str {
        text(self.key, self.en)
    }
}

/// One placeholder's value for [`format_ru`]: numbers stay numbers (Russian plural forms
/// select on them), everything else is text.
pub trait ToArg {
    /// The value Fluent formats.
    fn to_arg(&self) -> FluentValue<'_>;
}

impl ToArg for str {
    fn to_arg(&self) -> FluentValue<'_> {
        FluentValue::from(self)
    }
}

impl ToArg for String {
    fn to_arg(&self) -> FluentValue<'_> {
        FluentValue::from(self.as_str())
    }
}

impl ToArg for std::borrow::Cow<'_, str> {
    fn to_arg(&self) -> FluentValue<'_> {
        FluentValue::from(&**self)
    }
}

impl<T: ToArg + ?Sized> ToArg for &T {
    fn to_arg(&self) -> FluentValue<'_> {
        (**self).to_arg()
    }
}

macro_rules! number_arg {
    ($($t:ty),*) => {$(
        impl ToArg for $t {
            fn to_arg(&self) -> FluentValue<'_> {
                FluentValue::from(*self)
            }
        }
    )*};
}
number_arg!(u8, u16, u32, u64, usize, i32, i64, isize, f64);

/// The Russian text of `key` with its placeholders filled (`args`: name, value); the key
/// itself when the catalogue lacks it.
pub fn format_ru(key: &str, args: &[(&'static str, FluentValue<'_>)]) -> String {
    let ru = russian();
    let Some(pattern) = ru.bundle.get_message(key).and_then(|m| m.value()) else {
        return key.to_owned();
    };
    let mut fargs = FluentArgs::with_capacity(args.len());
    for (name, value) in args {
        fargs.set(*name, value.clone());
    }
    let mut errors = Vec::new();
    ru.bundle
        .format_pattern(pattern, Some(&fargs), &mut errors)
        .into_owned()
}

/// `tr!("key", "English")`: a `&'static str` in the current language ([`text`]).
macro_rules! tr {
    ($key:literal, $en:literal $(,)?) => {
        $crate::l10n::text($key, $en)
    };
}
pub(crate) use tr;

/// `txt!("key", "English")`: a [`Text`], usable in `const` items.
#[cfg_attr(not(feature = "tui"), allow(unused_macros))]
macro_rules! txt {
    ($key:literal, $en:literal $(,)?) => {
        $crate::l10n::Text::new($key, $en)
    };
}
#[cfg_attr(not(feature = "tui"), allow(unused_imports))]
pub(crate) use txt;

/// `trf!("key", "English {name}", name = value, ...)`: a `String` in the current language.
/// English is `format!` of the literal (so every argument must be used); Russian is the
/// catalogue's message with the same placeholder names (`{ $name }`).
macro_rules! trf {
    ($key:literal, $en:literal $(, $name:ident = $val:expr)* $(,)?) => {
        match $crate::l10n::current() {
            $crate::l10n::Lang::En => format!($en $(, $name = $val)*),
            $crate::l10n::Lang::Ru => $crate::l10n::format_ru(
                $key,
                &[$((stringify!($name), $crate::l10n::ToArg::to_arg(&$val))),*],
            ),
        }
    };
}
pub(crate) use trf;
