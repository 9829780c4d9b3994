//! The language of the commands (issue 32): a Russian locale leaves `cvo status` and `cvo
//! upgrade` in oc's English byte for byte (scripts parse them), `--lang` is checked, and the
//! locale variables decide the other commands' own messages in POSIX order (LC_ALL, then
//! LC_MESSAGES, then LANG).

use std::process::Command;

/// Runs cvo with `args` and exactly the locale variables `env` (the others removed); returns
/// (exit code, stdout, stderr).
fn cvo_in(env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cvo"));
    cmd.args(args)
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "off")
        .stdin(std::process::Stdio::null());
    for k in ["LC_ALL", "LC_MESSAGES", "LANG", "CVO_LANG"] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("cvo runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn demo_cluster() -> String {
    format!("{}/assets/demo-cluster", env!("CARGO_MANIFEST_DIR"))
}

const RU: &[(&str, &str)] = &[("LANG", "ru_RU.UTF-8")];
const ALL_RU: &[(&str, &str)] = &[("LC_ALL", "ru_RU.UTF-8")];

#[test]
fn a_russian_locale_leaves_status_and_upgrade_in_ocs_english() {
    let from = demo_cluster();
    for args in [
        vec!["status", "--from", &from],
        vec!["status", "--from", &from, "--details", "all"],
        vec!["upgrade", "--from", &from],
        vec!["upgrade", "recommend", "--from", &from],
    ] {
        let english = cvo_in(&[], &args);
        assert!(!english.1.is_empty(), "{args:?} printed nothing: {english:?}");
        for env in [RU, ALL_RU] {
            assert_eq!(cvo_in(env, &args), english, "{args:?} under {env:?}");
        }
    }
}

/// `--lang ru` is the one way to `cvo status` in Russian: its headings and labels (what oc
/// prints as assessments, phases and column names stays).
#[test]
fn lang_ru_asks_status_for_russian() {
    let s = format!(
        "{}/tests/fixtures/upstream/oc-upgrade-status/4.14.1-workers-started-updating-multiple-pools",
        env!("CARGO_MANIFEST_DIR")
    );
    let files: Vec<String> = ["cv", "co", "mcp", "node", "mc"]
        .iter()
        .map(|k| format!("{s}-{k}.yaml"))
        .collect();
    let mut args = vec!["status"];
    for f in &files {
        args.extend(["--from", f.as_str()]);
    }
    let (code, english, err) = cvo_in(RU, &args);
    assert_eq!(code, 0, "{err}");
    assert!(english.starts_with("= Control Plane =\n"), "{english}");
    let mut ru_args = vec!["--lang", "ru"];
    ru_args.extend(args.iter().copied());
    let (code, russian, err) = cvo_in(&[], &ru_args);
    assert_eq!(code, 0, "{err}");
    assert!(russian.starts_with("= Управляющий слой =\n"), "{russian}");
    assert!(russian.contains("Целевая версия:"), "{russian}");
    assert!(russian.contains("= Обновление рабочих узлов ="), "{russian}");
    // oc's table headers and assessments stay.
    assert!(russian.contains("ASSESSMENT"), "{russian}");
    assert_eq!(
        russian.lines().count(),
        english.lines().count(),
        "the same lines, worded in Russian"
    );
}

/// `cvo --lang ru upgrade`: the status view's own lines in Russian, the update targets as they
/// are.
#[test]
fn lang_ru_asks_upgrade_for_russian() {
    let from = demo_cluster();
    let (code, english, err) = cvo_in(RU, &["upgrade", "--from", &from]);
    assert_eq!(code, 0, "{err}");
    assert!(
        english.contains("Channel: stable-4.16 (available channels: "),
        "{english}"
    );
    assert!(english.contains("Recommended updates:"), "{english}");
    let (code, russian, err) = cvo_in(&[], &["--lang", "ru", "upgrade", "--from", &from]);
    assert_eq!(code, 0, "{err}");
    assert!(
        russian.contains("Канал обновлений: stable-4.16 (доступные каналы: "),
        "{russian}"
    );
    assert!(russian.contains("Рекомендуемые обновления:"), "{russian}");
    assert!(russian.contains("4.16.4"), "{russian}");
}

#[test]
fn lang_takes_en_or_ru_and_names_a_bad_value() {
    let (code, _, err) = cvo_in(&[], &["--lang", "de", "status"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown language \"de\""), "{err}");
    let (code, _, err) = cvo_in(&[("CVO_LANG", "xx")], &["status", "--from", &demo_cluster()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("\"xx\""), "{err}");
    // Set but empty is not set.
    let (code, out, err) = cvo_in(&[("CVO_LANG", "")], &["status", "--from", &demo_cluster()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("The cluster is not updating."), "{out}");
}

/// The dashboard's refusal without a terminal is a message of cvo's own: Russian under a
/// Russian locale, English when a variable of higher rank says otherwise or `--lang en`.
#[test]
fn the_locale_variables_decide_the_dashboards_own_messages_in_posix_order() {
    let from = demo_cluster();
    let args = ["--from", from.as_str()];
    let russian = "панели нужен терминал";
    let english = "the dashboard needs a terminal";
    for (env, want) in [
        (&[][..], english),
        (RU, russian),
        (&[("LANG", "ru_RU.UTF-8"), ("LC_MESSAGES", "C")][..], english),
        (&[("LANG", "C"), ("LC_MESSAGES", "ru_RU.UTF-8")][..], russian),
        (
            &[("LC_MESSAGES", "ru_RU.UTF-8"), ("LC_ALL", "en_US.UTF-8")][..],
            english,
        ),
        (&[("LC_ALL", ""), ("LANG", "ru_RU.UTF-8")][..], russian),
        (&[("CVO_LANG", "ru")][..], russian),
    ] {
        let (code, _, err) = cvo_in(env, &args);
        assert_ne!(code, 0, "{env:?}: {err}");
        assert!(err.contains(want), "{env:?}: {err}");
    }
    let mut with_flag = vec!["--lang", "en"];
    with_flag.extend(args);
    let (_, _, err) = cvo_in(RU, &with_flag);
    assert!(err.contains(english), "--lang en under LANG=ru: {err}");
    let mut with_flag = vec!["--lang", "ru"];
    with_flag.extend(args);
    let (_, _, err) = cvo_in(&[], &with_flag);
    assert!(err.contains(russian), "--lang ru: {err}");
}

/// English costs nothing: texts asked for in English never parse the catalogue; the first
/// Russian one does, once. (This suite runs cvo in child processes otherwise, so nothing else in
/// this process asks for a text.)
#[test]
fn english_texts_never_parse_the_russian_catalogue() {
    use cvo::l10n::{Lang, Text, catalogue_loaded, set, text};
    set(Lang::En);
    assert_eq!(text("tab-overview", "Overview"), "Overview");
    assert_eq!(Text::new("tab-drift", "Drift").get(), "Drift");
    assert!(
        !catalogue_loaded(),
        "an English text parsed the Russian catalogue"
    );
    set(Lang::Ru);
    assert_eq!(text("tab-overview", "Overview"), "Обзор");
    assert!(catalogue_loaded());
    set(Lang::En);
    assert_eq!(text("tab-overview", "Overview"), "Overview");
}

// ------------------------------------------------ the engine's event log (issue 32)

/// `cvo demo --headless` under a Russian locale prints the engine's event lines in Russian
/// (state, desired update, passes, run levels, history), with the API's words (condition
/// types, reasons, Completed/Partial, versions) in Latin; in English the same lines are the
/// English ones.
#[test]
fn the_headless_demo_prints_the_engines_events_in_the_locales_language() {
    let args = [
        "demo",
        "--headless",
        "--until-complete",
        "--speed",
        "60",
        "--timeout",
        "55",
    ];
    let (code, out, err) = cvo_in(RU, &args);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    for want in [
        " INFO  состояние ",
        " INFO  желаемое обновление принято: 4.16.4 (quay.io/",
        " INFO  история обновлений: 4.16.4 Partial (обновление начато)",
        " INFO  проход 2 начат",
        " INFO  уровень запуска 00 пройден (",
        "ClusterVersion Progressing=True: Working towards 4.16.4",
        " INFO  история обновлений: 4.16.4 Completed",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
    for english in [
        "desired update accepted",
        "history: ",
        "pass 2 started",
        "run level 00 done",
    ] {
        assert!(!out.contains(english), "{english:?} in the Russian demo:\n{out}");
    }
    let (code, out, err) = cvo_in(&[], &args);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    for want in [
        " INFO  desired update accepted: 4.16.4 (quay.io/",
        " INFO  history: 4.16.4 Partial (update started)",
        " INFO  pass 2 started",
        " INFO  run level 00 done (",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
    assert!(!out.contains("проход"), "{out}");
}

// ------------------------------------------------ clap's --help (issue 32)

/// The subcommands a help lists under `Commands:` (or `Команды:`) but clap's own `help`.
fn commands_of(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:" && *l != "Команды:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

/// The flags, positionals and commands of a help, in order (what must not move when the
/// words are translated).
fn tokens_of(help: &str) -> Vec<String> {
    let mut out = commands_of(help);
    out.extend(help.lines().filter_map(|l| {
        let t = l.trim_start();
        let first = t.split("  ").next()?;
        t.starts_with(['-', '<', '[']).then(|| first.trim().to_owned())
    }));
    out
}

/// Every command's `--help` (and `-h`) under a Russian locale: the same lines, flags,
/// positionals and commands in the same order as in English, clap's words in Russian and no
/// English sentence left; `--lang en` under the Russian locale is the English help byte for
/// byte, `--lang ru` without a locale the Russian one. The English help never has a Russian
/// letter.
#[test]
fn every_commands_help_is_russian_under_a_russian_locale() {
    let cyrillic = |s: &str| {
        s.chars()
            .any(|c| ('а'..='я').contains(&c.to_lowercase().next().unwrap_or(c)))
    };
    let mut paths: Vec<Vec<String>> = vec![vec![]];
    let mut i = 0;
    while i < paths.len() {
        let path = paths[i].clone();
        i += 1;
        for flag in ["--help", "-h"] {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push(flag);
            let shown = format!("cvo {} {flag}", path.join(" "));
            let (code, en, err) = cvo_in(&[], &args);
            assert_eq!(code, 0, "{shown}: {err}");
            let (code, ru, err) = cvo_in(RU, &args);
            assert_eq!(code, 0, "{shown}: {err}");
            if flag == "--help" {
                paths.extend(commands_of(&en).into_iter().map(|c| {
                    let mut p = path.clone();
                    p.push(c);
                    p
                }));
            }
            assert!(!cyrillic(&en), "{shown} in English:\n{en}");
            assert_eq!(en.lines().count(), ru.lines().count(), "{shown}:\n{en}\n{ru}");
            assert_eq!(tokens_of(&en), tokens_of(&ru), "{shown}:\n{ru}");
            assert!(ru.contains("\nВызов: cvo"), "{shown}:\n{ru}");
            assert!(ru.contains("Показать справку"), "{shown}:\n{ru}");
            for english in [
                "Usage:",
                "Options:",
                "Commands:",
                "Arguments:",
                "Print help",
                "Print version",
                "(global",
                " the ",
                " of ",
            ] {
                assert!(!ru.contains(english), "{shown}: {english:?} in\n{ru}");
            }
            // The about, first line, is Russian.
            let about = ru.lines().next().unwrap_or_default();
            assert!(cyrillic(about), "{shown}: {about}");
            let mut with_en = vec!["--lang", "en"];
            with_en.extend(&args);
            assert_eq!(cvo_in(RU, &with_en).1, en, "{shown} with --lang en");
            let mut with_ru = vec!["--lang=ru"];
            with_ru.extend(&args);
            assert_eq!(cvo_in(&[], &with_ru).1, ru, "{shown} with --lang=ru");
        }
    }
    assert!(paths.len() >= 20, "only {} commands: {paths:?}", paths.len());
}

/// One command's Russian help as a whole: headings, positionals in their order, the help
/// subcommand's words.
#[test]
fn the_russian_help_of_payload_pull_and_of_upgrade() {
    let (code, ru, err) = cvo_in(RU, &["payload", "pull", "--help"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("ru_help_payload_pull", ru);
    let (_, ru, _) = cvo_in(RU, &["upgrade", "--help"]);
    assert!(
        ru.contains("Вызов: cvo upgrade [OPTIONS]\n       cvo upgrade <COMMAND>\n"),
        "{ru}"
    );
    assert!(
        ru.contains("\nКоманды:\n  channel    Показать, задать или сбросить канал обновлений\n"),
        "{ru}"
    );
    assert!(
        ru.contains("  help       Показать эту справку или справку указанных подкоманд\n"),
        "{ru}"
    );
    assert!(
        ru.contains("\nПодключение к кластеру (глобальные: до или после команды):\n"),
        "{ru}"
    );
    // `cvo help upgrade` is the same help.
    assert_eq!(cvo_in(RU, &["help", "upgrade"]).1, ru);
}
