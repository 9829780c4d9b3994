//! The catalogue against the code: every key the code uses has a Russian text with the same
//! placeholders, and the catalogue has no key the code does not use.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{Lang, RU_FTL, keys, scoped};

/// One use of `tr!`/`trf!` in the source: its key, English text, and where.
#[derive(Debug)]
struct Use {
    key: String,
    en: String,
    formatted: bool,
    at: String,
}

/// Reads a Rust string literal's body starting after its opening quote: the text (escapes
/// resolved) and the rest after the closing quote.
fn string_literal(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                '\\' => out.push('\\'),
                '"' => out.push('"'),
                '\'' => out.push('\''),
                '\n' => {
                    // A continued line: the next line's leading white space is skipped.
                    let rest = &s[i + 2..];
                    let skip = rest.len() - rest.trim_start().len();
                    for _ in 0..skip {
                        chars.next();
                    }
                }
                other => panic!("escape \\{other} in a tr! literal is not read by this test"),
            },
            c => out.push(c),
        }
    }
    None
}

fn uses_in(file: &Path, root: &Path, out: &mut Vec<Use>) {
    let src = std::fs::read_to_string(file).expect("read a source file");
    let rel = file.strip_prefix(root).unwrap_or(file).display().to_string();
    for (i, _) in src.match_indices("t") {
        let formatted = src[i..].starts_with("trf!(");
        let plain = src[i..].starts_with("tr!(") || src[i..].starts_with("txt!(");
        if !(formatted || plain) {
            continue;
        }
        // Part of a longer name, or this test's own patterns in quotes.
        if i > 0 && src[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '"') {
            continue;
        }
        // The macros' own definitions and doc examples are not uses.
        let line_start = src[..i].rfind('\n').map_or(0, |n| n + 1);
        let line = src[line_start..].lines().next().unwrap_or("");
        if line.trim_start().starts_with("//") || line.contains("macro_rules!") {
            continue;
        }
        let open = src[i..].find('(').expect("the macro's parenthesis");
        let after = &src[i + open + 1..];
        let after = after.trim_start();
        let Some(after) = after.strip_prefix('"') else {
            continue; // the macro's own pattern (`$key:literal`)
        };
        let at = format!("{rel}:{}", src[..i].lines().count());
        let (key, rest) = string_literal(after).unwrap_or_else(|| panic!("{at}: key"));
        let rest = rest
            .trim_start()
            .strip_prefix(',')
            .unwrap_or_else(|| panic!("{at}: a comma after the key {key}"));
        let rest = rest
            .trim_start()
            .strip_prefix('"')
            .unwrap_or_else(|| panic!("{at}: the English text of {key} must be a string literal"));
        let (en, _) = string_literal(rest).unwrap_or_else(|| panic!("{at}: English text"));
        out.push(Use {
            key,
            en,
            formatted,
            at,
        });
    }
}

fn walk(dir: &Path, root: &Path, out: &mut Vec<Use>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read a source directory")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, root, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            uses_in(&p, root, out);
        }
    }
}

fn code_uses() -> Vec<Use> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(&root.join("src"), root, &mut out);
    out
}

/// The placeholder names of an English `format!` literal: `{name}`, `{name:>5}`; `{{` is not
/// one.
fn english_placeholders(en: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = en;
    while let Some(i) = rest.find('{') {
        if rest[i + 1..].starts_with('{') {
            rest = &rest[i + 2..];
            continue;
        }
        let end = rest[i..].find('}').map_or(rest.len(), |e| i + e);
        let name = rest[i + 1..end].split(':').next().unwrap_or("");
        out.insert(name.to_owned());
        rest = &rest[(end + 1).min(rest.len())..];
    }
    out
}

/// The variables a Fluent message refers to: every `$name`.
fn fluent_placeholders(body: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in body.match_indices('$') {
        let name: String = body[i + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        out.insert(name);
    }
    out
}

/// Each catalogue key with its whole entry (the continuation lines included).
fn catalogue() -> BTreeMap<&'static str, String> {
    catalogue_of(RU_FTL)
}

fn catalogue_of(ftl: &'static str) -> BTreeMap<&'static str, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<&'static str> = None;
    for line in ftl.lines() {
        if let Some(key) = keys(line).next() {
            assert!(
                out.insert(key, line.to_owned()).is_none(),
                "ru/*.ftl: key {key} twice"
            );
            current = Some(key);
        } else if line.starts_with(' ') {
            if let Some(k) = current {
                let e = out.get_mut(k).expect("the current key");
                e.push('\n');
                e.push_str(line);
            }
        } else {
            current = None;
        }
    }
    out
}

#[test]
fn the_catalogue_parses_without_errors() {
    let parsed = fluent_bundle::FluentResource::try_new(RU_FTL.to_owned());
    if let Err((_, errors)) = parsed {
        panic!("ru/*.ftl does not parse: {errors:?}");
    }
}

#[test]
fn every_key_of_the_code_has_a_russian_text_with_its_placeholders_and_no_other() {
    let uses = code_uses();
    assert!(uses.len() > 100, "found only {} uses of tr!/trf!", uses.len());
    let problems = mismatches(&uses, &catalogue());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checker on made-up code and catalogue: a key without Russian, a Russian key no code
/// uses, placeholders that differ and one key with two English texts are each named.
#[test]
fn the_catalogue_check_names_each_kind_of_mismatch() {
    let u = |key: &str, en: &str, formatted| Use {
        key: key.into(),
        en: en.into(),
        formatted,
        at: "made-up.rs:1".into(),
    };
    let uses = [
        u("a", "A", false),
        u("b", "B {n}", true),
        u("c", "C {n}", true),
        u("d", "D", false),
        u("d", "D2", false),
    ];
    let cat = catalogue_of("a = А\nb = Б { $m }\nc = В { $n }\nd = Г\norphan = О\n");
    let problems = mismatches(&uses, &cat);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].contains("key b: placeholders"), "{problems:#?}");
    assert!(
        problems[1].contains("key d has another English text"),
        "{problems:#?}"
    );
    assert!(
        problems[2].contains("key orphan is used nowhere"),
        "{problems:#?}"
    );
    let missing = mismatches(&uses[..1], &catalogue_of("b = Б\n"));
    assert!(
        missing.iter().any(|p| p.contains("key a has no Russian text")),
        "{missing:#?}"
    );
}

/// What differs between the uses of `tr!`/`trf!`/`txt!` and a catalogue (empty: nothing).
fn mismatches(uses: &[Use], cat: &BTreeMap<&'static str, String>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut english: BTreeMap<&str, &Use> = BTreeMap::new();
    for u in uses {
        if let Some(first) = english.insert(&u.key, u)
            && (first.en != u.en || first.formatted != u.formatted)
        {
            problems.push(format!(
                "{}: key {} has another English text at {}",
                u.at, u.key, first.at
            ));
        }
        let Some(entry) = cat.get(u.key.as_str()) else {
            problems.push(format!("{}: key {} has no Russian text in ru/*.ftl", u.at, u.key));
            continue;
        };
        let en = if u.formatted {
            english_placeholders(&u.en)
        } else {
            BTreeSet::new()
        };
        let ru = fluent_placeholders(entry);
        if en != ru {
            problems.push(format!(
                "{}: key {}: placeholders {en:?} in English, {ru:?} in Russian",
                u.at, u.key
            ));
        }
    }
    for key in cat.keys() {
        // The keys `cli::help_l10n` makes from clap's command tree: its own test (in
        // main.rs, where the tree is) checks them both ways.
        if key.starts_with(crate::cli::help_l10n::KEY_PREFIX) {
            continue;
        }
        if !english.contains_key(key) {
            problems.push(format!("ru/*.ftl: key {key} is used nowhere in the code"));
        }
    }
    problems
}

#[test]
fn every_russian_text_formats_without_errors_and_is_not_empty() {
    let ru = super::russian();
    let mut problems = Vec::new();
    for (key, entry) in catalogue() {
        let vars = fluent_placeholders(&entry);
        let mut args = fluent_bundle::FluentArgs::new();
        for v in &vars {
            args.set(v.clone(), 2);
        }
        let pattern = ru.bundle.get_message(key).and_then(|m| m.value());
        let Some(pattern) = pattern else {
            problems.push(format!("{key}: no value"));
            continue;
        };
        let mut errors = Vec::new();
        let text = ru.bundle.format_pattern(pattern, Some(&args), &mut errors);
        if !errors.is_empty() {
            problems.push(format!("{key}: {errors:?}"));
        }
        if text.trim().is_empty() {
            problems.push(format!("{key}: empty"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The spaces a text starts and ends with (`None` for an end that is a placeholder).
fn edges(text: &str, placeholder_ends: bool) -> (Option<usize>, Option<usize>) {
    let lead = text.len() - text.trim_start_matches(' ').len();
    let trail = text.len() - text.trim_end_matches(' ').len();
    let starts_open = placeholder_ends && text.starts_with('{') && !text.starts_with("{{");
    let ends_open = placeholder_ends && text.ends_with('}') && !text.ends_with("}}");
    ((!starts_open).then_some(lead), (!ends_open).then_some(trail))
}

/// Fluent trims a message's leading and trailing blanks: a Russian text that must keep them
/// (a label followed by its value, a hint's separators) writes them as `{" "}`. The spaces a
/// text starts and ends with are the same in both languages, so labels and values never run
/// together.
#[test]
fn russian_texts_keep_the_spaces_around_the_english() {
    let ru = super::russian();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for u in code_uses() {
        if !seen.insert(u.key.clone()) {
            continue;
        }
        let Some(pattern) = ru.bundle.get_message(&u.key).and_then(|m| m.value()) else {
            continue; // the other test names it
        };
        let mut args = fluent_bundle::FluentArgs::new();
        for v in english_placeholders(&u.en) {
            args.set(v, 2);
        }
        let mut errors = Vec::new();
        let text = ru.bundle.format_pattern(pattern, Some(&args), &mut errors);
        let (en_lead, en_trail) = edges(&u.en, u.formatted);
        let (ru_lead, ru_trail) = edges(&text, false);
        if en_lead.is_some_and(|n| Some(n) != ru_lead) || en_trail.is_some_and(|n| Some(n) != ru_trail) {
            problems.push(format!(
                "{}: key {}: English {:?}, Russian {:?}",
                u.at, u.key, u.en, text
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn english_is_the_literal_and_russian_the_catalogue() {
    let n = 3usize;
    let en = scoped(Lang::En, || {
        (
            super::tr!("tab-overview", "Overview"),
            super::trf!("sync-retry", "retry {n}", n = n),
        )
    });
    assert_eq!(en, ("Overview", "retry 3".to_owned()));
    let ru = scoped(Lang::Ru, || {
        (
            super::tr!("tab-overview", "Overview"),
            super::trf!("sync-retry", "retry {n}", n = n),
        )
    });
    assert_eq!(ru, ("Обзор", "повтор 3".to_owned()));
    // A `Text` in a const table follows the thread's language too.
    const T: super::Text = super::txt!("tab-drift", "Drift");
    assert_eq!(scoped(Lang::En, || T.get()), "Drift");
    assert_eq!(scoped(Lang::Ru, || T.get()), "Дрейф");
}

#[test]
fn russian_plural_forms_follow_the_number() {
    let f = |errors: usize| {
        scoped(Lang::Ru, || {
            super::trf!(
                "header-insight-errors",
                "{count} ({errors} errors)",
                count = 7usize,
                errors = errors
            )
        })
    };
    assert_eq!(f(1), "7 (1 ошибка)");
    assert_eq!(f(3), "7 (3 ошибки)");
    assert_eq!(f(5), "7 (5 ошибок)");
    assert_eq!(f(21), "7 (21 ошибка)");
}

#[test]
fn the_locale_environment_decides_in_posix_order() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    };
    assert_eq!(Lang::from_locale_env(env(&[])), Lang::En);
    assert_eq!(Lang::from_locale_env(env(&[("LANG", "ru_RU.UTF-8")])), Lang::Ru);
    assert_eq!(
        Lang::from_locale_env(env(&[("LANG", "ru_RU.UTF-8"), ("LC_MESSAGES", "C")])),
        Lang::En
    );
    assert_eq!(
        Lang::from_locale_env(env(&[("LANG", "en_US.UTF-8"), ("LC_MESSAGES", "ru_RU")])),
        Lang::Ru
    );
    assert_eq!(
        Lang::from_locale_env(env(&[("LC_MESSAGES", "ru_RU"), ("LC_ALL", "en_US.UTF-8")])),
        Lang::En
    );
    // An empty variable is not set.
    assert_eq!(
        Lang::from_locale_env(env(&[("LC_ALL", ""), ("LANG", "ru_RU.UTF-8")])),
        Lang::Ru
    );
    assert_eq!(Lang::from_locale_env(env(&[("LANG", "C.UTF-8")])), Lang::En);
}

#[test]
fn lang_values_parse_and_others_are_errors() {
    assert_eq!(Lang::parse("ru"), Ok(Lang::Ru));
    assert_eq!(Lang::parse("RU"), Ok(Lang::Ru));
    assert_eq!(Lang::parse("ru_RU.UTF-8"), Ok(Lang::Ru));
    assert_eq!(Lang::parse("en"), Ok(Lang::En));
    assert!(Lang::parse("de").expect_err("de").contains("\"de\""));
    assert!(Lang::parse("rus").is_err());
    assert!(Lang::parse("").is_err());
}
