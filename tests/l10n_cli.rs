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

/// `--lang ru` is the one way to `cvo status` in Russian: its headings, labels and column
/// names (what oc prints as assessments, phases, levels and impacts stays: scripts match them).
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
    // The tables' column names in Russian, aligned by cells; oc's values as they are.
    assert!(
        russian.contains("\nПУЛ РАБОЧИХ УЗЛОВ   ОЦЕНКА        ЗАВЕРШЕНИЕ   СТАТУС\n"),
        "{russian}"
    );
    assert!(
        russian.contains(
            "\nworker              Progressing   0% (0/2)     доступны: 1, обновляются: 1, освобождаются: 1\n"
        ),
        "{russian}"
    );
    assert!(
        russian.contains("\nПРОШЛО   УРОВЕНЬ   ВЛИЯНИЕ   СООБЩЕНИЕ\n14m4s    Info      None      "),
        "{russian}"
    );
    assert!(!russian.contains("ASSESSMENT"), "{russian}");
    assert!(
        english.contains("\nWORKER POOL   ASSESSMENT    COMPLETION   STATUS\n"),
        "{english}"
    );
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

/// `cvo --lang ru upgrade recommend`: oc's headings, labels and listing in Russian; the checks'
/// types, reasons and messages, versions and images as they are. Without the flag (and under a
/// Russian locale) the output is the English one, byte for byte.
#[test]
fn lang_ru_asks_upgrade_recommend_for_russian() {
    let from = demo_cluster();
    let args = ["upgrade", "recommend", "--from", from.as_str()];
    let (code, russian, err) = cvo_in(&[], &[&["--lang", "ru"][..], &args].concat());
    assert_eq!(code, 0, "{err}");
    for line in [
        "Следующие условия нашли поводы для беспокойства при обновлении этого кластера до более новых релизов: recommended/Alert",
        "recommended/Alert=Unknown:",
        "  Причина: NoTestData",
        "  Сообщение: У этого запуска с --from нет данных об оповещениях (файл --alerts FILE не указан)",
        "Канал обновлений: stable-4.16 (доступные каналы: candidate-4.16, fast-4.16, stable-4.16)",
        "Обновления до 4.16:",
        "  Версия: 4.16.5",
        "  Причина: OVNKubernetesEgressIPRegression",
        "  ВЕРСИЯ      ПРОБЛЕМЫ",
        "  4.16.4      известных проблем, касающихся этого кластера, нет",
    ] {
        assert!(
            russian.lines().any(|l| l == line),
            "no line {line:?} in:\n{russian}"
        );
    }
    let (code, english, err) = cvo_in(RU, &args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        english.lines().count(),
        russian.lines().count(),
        "{english}\n{russian}"
    );
    assert!(
        english.contains("\n  VERSION     ISSUES\n  4.16.4      no known issues relevant to this cluster\n"),
        "{english}"
    );
    assert!(!english.contains("Причина"), "{english}");
}

/// `cvo --lang ru upgrade ...`'s refusals and usage errors are Russian; without the flag they
/// are oc's English under any locale.
#[test]
fn lang_ru_words_upgrades_refusals_and_usage_errors() {
    let from = demo_cluster();
    for (args, russian, english) in [
        (
            vec!["upgrade", "--to", "x.y"],
            "cvo: --to должен быть семантической версией (например, 4.0.1 или 4.1.0-nightly-20181104): ",
            "cvo: --to must be a semantic version (e.g. 4.0.1 or 4.1.0-nightly-20181104): ",
        ),
        (
            vec!["upgrade", "--to", "4.16.4", "--from", &from],
            "cvo: --from только для чтения: для --to, --to-image, --to-latest, --to-multi-arch и --clear нужен кластер (kubeconfig)\n",
            "cvo: --from is read-only: --to, --to-image, --to-latest, --to-multi-arch and --clear need a cluster (kubeconfig)\n",
        ),
        (
            vec!["upgrade", "recommend", "--from", &from, "--version", "4.16.4"],
            "cvo: проблемы, которые касаются этого кластера, но не перечислены в --accept: AlertNoTestData\n",
            "cvo: issues that apply to this cluster but which were not included in --accept: AlertNoTestData\n",
        ),
    ] {
        let (code, _, err) = cvo_in(&[], &[&["--lang", "ru"][..], &args].concat());
        assert_ne!(code, 0, "{args:?}");
        assert!(err.starts_with(russian), "{args:?}: {err}");
        let (en_code, _, err) = cvo_in(RU, &args);
        assert_eq!(en_code, code, "{args:?}");
        assert!(err.starts_with(english), "{args:?}: {err}");
    }
}

/// The commands' last line on an error: in Russian it says what kind of failure it is before
/// the error's own text; in English it is what it always was, under any locale for `status`
/// and `upgrade` and without a Russian locale for the others.
#[test]
fn the_error_line_says_what_failed_in_russian() {
    let dir = std::env::temp_dir().join(format!("cvo-l10n-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kc = dir.join("kubeconfig");
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    std::fs::write(
        &kc,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: dead\n  cluster: {server: \"https://127.0.0.1:9\"}\ncontexts:\n- name: dead\n  context: {cluster: dead, user: u}\ncurrent-context: dead\nusers:\n- name: u\n  user: {token: abc}\n",
    )
    .expect("write kubeconfig");
    let kc = kc.display().to_string();
    let head = "https://127.0.0.1:9/ (context \"dead\"): list clusteroperators: ServiceError: ";
    let (code, _, english) = cvo_in(&[], &["get", "co", "--kubeconfig", &kc]);
    assert_eq!(code, 1, "{english}");
    assert!(english.starts_with(&format!("cvo: {head}")), "{english}");
    let (code, _, russian) = cvo_in(RU, &["get", "co", "--kubeconfig", &kc]);
    assert_eq!(code, 1, "{russian}");
    assert_eq!(
        russian,
        format!("cvo: кластер недоступен: {}", &english["cvo: ".len()..])
    );
    // `cvo status` keeps oc's English under the locale, and is Russian with --lang ru.
    let (_, _, status_en) = cvo_in(RU, &["status", "--kubeconfig", &kc]);
    assert!(
        status_en.starts_with("cvo: https://127.0.0.1:9/ (context \"dead\"): get clusterversion version: "),
        "{status_en}"
    );
    let (_, _, status_ru) = cvo_in(&[], &["--lang", "ru", "status", "--kubeconfig", &kc]);
    assert_eq!(
        status_ru,
        format!("cvo: кластер недоступен: {}", &status_en["cvo: ".len()..])
    );
    let (code, _, bad) = cvo_in(RU, &["get", "co", "--kubeconfig", "/nonexistent/kubeconfig"]);
    assert_eq!(code, 1);
    assert_eq!(
        bad,
        "cvo: ошибка файла: kubeconfig /nonexistent/kubeconfig: No such file or directory (os error 2)\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `cvo payload inspect` follows the locale: its labels and counts in Russian under
/// `LANG=ru_RU.UTF-8`, aligned in one column; English without it; `-o json` is data, English
/// (byte for byte the same) whatever the language.
#[test]
fn payload_inspect_follows_the_locale_and_its_json_stays_english() {
    let dir = format!("{}/assets/payloads/4.16.4", env!("CARGO_MANIFEST_DIR"));
    let (code, russian, err) = cvo_in(RU, &["payload", "inspect", &dir]);
    assert_eq!(code, 0, "{err}");
    let (code, english, err) = cvo_in(&[], &["payload", "inspect", &dir]);
    assert_eq!(code, 0, "{err}");
    assert!(
        english.starts_with("Release:       4.16.4\nArchitecture:  "),
        "{english}"
    );
    assert!(
        russian.starts_with("Релиз:          4.16.4\nАрхитектура:    "),
        "{russian}"
    );
    for line in [
        "Каналы:         candidate-4.16, fast-4.16, stable-4.16",
        "Манифесты: загружено 266, включено 265, исключено 1",
        "  исключено по feature-set: 1",
        "Исключённые манифесты:",
    ] {
        assert!(
            russian.lines().any(|l| l == line),
            "no line {line:?} in:\n{russian}"
        );
    }
    assert!(
        russian.contains("\n  шаг  1: [1] 00-cluster-version-operator"),
        "{russian}"
    );
    assert!(russian.contains("(по 265 включённым манифестам)"), "{russian}");
    assert_eq!(russian.lines().count(), english.lines().count());
    let json_en = cvo_in(&[], &["payload", "inspect", &dir, "-o", "json"]);
    assert_eq!(json_en.0, 0, "{}", json_en.2);
    assert_eq!(cvo_in(RU, &["payload", "inspect", &dir, "-o", "json"]), json_en);
    assert_eq!(
        cvo_in(&[], &["--lang", "ru", "payload", "inspect", &dir, "-o", "json"]),
        json_en
    );
}

/// `cvo status -o json|yaml` is data: `--lang ru` leaves it English, byte for byte.
#[test]
fn status_documents_stay_english_with_lang_ru() {
    let from = demo_cluster();
    for format in ["json", "yaml"] {
        let args = ["status", "--from", from.as_str(), "-o", format];
        let english = cvo_in(&[], &args);
        assert_eq!(english.0, 0, "{}", english.2);
        assert!(!english.1.is_empty());
        assert_eq!(
            cvo_in(&[], &[&["--lang", "ru"][..], &args].concat()),
            english,
            "{format}"
        );
    }
}

/// `cvo get` follows the locale for its own messages; its tables are oc's printer columns and
/// values, byte for byte the same under a Russian locale.
#[test]
fn get_words_its_messages_and_keeps_ocs_tables() {
    let cv = format!(
        "{}/tests/fixtures/upstream/oc-upgrade-status/4.14.1-workers-started-updating-multiple-pools-cv.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    assert_eq!(
        cvo_in(RU, &["get", "co", "--from", &cv]),
        (0, "Ресурсы не найдены\n".to_owned(), String::new())
    );
    assert_eq!(
        cvo_in(&[], &["get", "co", "--from", &cv]),
        (0, "No resources found\n".to_owned(), String::new())
    );
    let (code, _, err) = cvo_in(RU, &["get", "foo", "--from", &cv]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("cvo: неизвестный вид ресурса «foo»; известные: clusterversion (cv)"),
        "{err}"
    );
    let from = demo_cluster();
    for kind in ["clusterversion", "co", "mcp", "nodes"] {
        let english = cvo_in(&[], &["get", kind, "--from", &from]);
        assert_eq!(english.0, 0, "{}", english.2);
        assert_eq!(cvo_in(RU, &["get", kind, "--from", &from]), english, "{kind}");
    }
}

/// `cvo --lang ru status --details health`: the insight blocks' labels and the insights' own
/// sentences in Russian, the labels padded to one column; levels and impacts as oc's.
#[test]
fn lang_ru_words_the_health_details() {
    let s = format!(
        "{}/tests/fixtures/upstream/oc-upgrade-status/4.14.1-degraded",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut args = vec!["--lang".to_owned(), "ru".to_owned(), "status".to_owned()];
    for k in ["cv", "co", "mcp", "node", "mc"] {
        args.extend(["--from".to_owned(), format!("{s}-{k}.yaml")]);
    }
    args.extend(["--details".to_owned(), "health".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, russian, err) = cvo_in(&[], &args);
    assert!(!russian.is_empty(), "{err}");
    for line in [
        "  Уровень:     Error",
        "  Влияние:     API Availability",
        "  Ресурсы:",
        "    clusteroperators.config.openshift.io: control-plane-machine-set",
    ] {
        assert!(
            russian.lines().any(|l| l == line),
            "no line {line:?} in:\n{russian}"
        );
    }
    assert!(
        russian.contains("\n  Ссылка:      https://github.com/openshift/runbooks/"),
        "{russian}"
    );
    assert!(russian.contains("\n  Описание:    "), "{russian}");
    assert!(!russian.contains("Impact:"), "{russian}");
    // The insights' own sentences too (`assess::insight_text`), with the API's data as it is.
    assert!(
        russian.lines().any(|l| l
            == "Сообщение: Кластерный оператор control-plane-machine-set недоступен (UnavailableReplicas)"),
        "{russian}"
    );
    assert!(!russian.contains(" is unavailable"), "{russian}");
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
        "--registry",
        "none",
    ];
    let (code, out, err) = cvo_in(RU, &args);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    for want in [
        " INFO  состояние ",
        " INFO  желаемое обновление принято: 4.16.4 (quay.io/",
        " INFO  запрос обновления до 4.16.4 (как `oc adm upgrade --to 4.16.4`)",
        " INFO  демо: релизы, встроенные в cvo (реестр не запрошен)",
        " INFO  история обновлений: 4.16.4 Partial (обновление начато)",
        " INFO  уровень запуска 00 пройден (",
        "ClusterVersion Progressing=True: Working towards 4.16.4",
        " INFO  история обновлений: 4.16.4 Completed",
        // The closing history table in the dashboard's words (the states as the API says).
        "СОСТОЯНИЕ   ВЕРСИЯ   НАЧАЛО",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
    // Which passes' starts the log catches depends on timing (a pass may start and end between
    // two snapshots): some pass's.
    assert!(
        out.lines()
            .any(|l| l.contains(" INFO  проход ") && l.ends_with(" начат")),
        "no pass start in:\n{out}"
    );
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
        " INFO  run level 00 done (",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
    assert!(
        out.lines()
            .any(|l| l.contains(" INFO  pass ") && l.ends_with(" started")),
        "no pass start in:\n{out}"
    );
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
