//! `cvo upgrade recommend` against the `oc adm upgrade recommend` examples (openshift/oc
//! `pkg/cli/admin/upgrade/recommend/examples/`, copied to `tests/fixtures/oc-upgrade-recommend/`):
//! 5 scenarios × (plain, `--show-outdated-releases`, `--version V`), compared line for line,
//! once through the library (the text and the error) and once through the built binary (stdout,
//! stderr, exit code).

mod common;

use std::path::{Path, PathBuf};

use cvo::cli::upgrade::recommend::{AlertSource, Options, recommend};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oc-upgrade-recommend")
}

/// oc's test-mode line about the missing alerts file (its wording; cvo words it its own way).
fn oc_no_data(scenario: &str) -> String {
    format!(
        "This --mock-clusterversion run did not have alert data available at examples/{scenario}-alerts.json"
    )
}

/// Prints the first differing lines with some context.
fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.split('\n').collect();
    let a: Vec<&str> = actual.split('\n').collect();
    let first = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let start = first.saturating_sub(2);
    let mut out = format!("@@ first difference at line {} @@\n", first + 1);
    for l in e.iter().take(start + 8).skip(start) {
        out.push_str(&format!("-{l:?}\n"));
    }
    for l in a.iter().take(start + 8).skip(start) {
        out.push_str(&format!("+{l:?}\n"));
    }
    out
}

/// The expected file for a mode: `None` plain, `Some("")` outdated, `Some(V)` version.
fn expected_file(scenario: &str, mode: Mode) -> String {
    match mode {
        Mode::Plain => format!("{scenario}.output"),
        Mode::Outdated => format!("{scenario}.show-outdated-releases-output"),
        Mode::Version(v) => format!("{scenario}.version-{v}-output"),
    }
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Plain,
    Outdated,
    Version(&'static str),
}

fn through_library(scenario: &str, mode: Mode) {
    let cv_path = dir().join(format!("{scenario}-cv.yaml"));
    let state = cvo::cluster::snapshot::load(std::slice::from_ref(&cv_path)).expect("cv loads");
    let cv = state.cluster_version.expect("a ClusterVersion");
    let alerts_path = dir().join(format!("{scenario}-alerts.json"));
    let alerts = if alerts_path.exists() {
        AlertSource::Alerts(cvo::assess::alerts::load(&alerts_path).expect("alerts load"))
    } else {
        AlertSource::NoData(oc_no_data(scenario))
    };
    let opts = Options {
        version: match mode {
            Mode::Version(v) => Some(semver::Version::parse(v).expect("semver")),
            _ => None,
        },
        show_outdated: matches!(mode, Mode::Outdated),
        ..Options::default()
    };
    let out = recommend(&cv, &alerts, &opts);
    let mut actual = out.stdout.clone();
    if let Some(e) = &out.error {
        actual += &format!("\nerror: {e}\n");
    }
    let file = expected_file(scenario, mode);
    let expected = std::fs::read_to_string(dir().join(&file)).expect("expected output");
    assert!(
        actual == expected,
        "{file} differs:\n{}",
        diff(&expected, &actual)
    );
    assert_eq!(out.stderr, "", "{file}: no warnings expected");
}

fn through_binary(scenario: &str, mode: Mode) {
    let mut cmd = common::cvo();
    // Relative paths, as oc's examples were produced with.
    cmd.current_dir(dir())
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "off")
        .args(["upgrade", "recommend", "--from"])
        .arg(format!("{scenario}-cv.yaml"));
    match mode {
        Mode::Plain => {}
        Mode::Outdated => {
            cmd.arg("--show-outdated-releases");
        }
        Mode::Version(v) => {
            cmd.args(["--version", v]);
        }
    }
    let out = cmd.output().expect("cvo runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let ours = format!("This --from run did not have alert data available at {scenario}-alerts.json");
    let has_alerts = Path::new(&dir().join(format!("{scenario}-alerts.json"))).exists();
    assert_eq!(stdout.contains(&ours), !has_alerts, "{stdout}");
    let mut actual = stdout.replace(&ours, &oc_no_data(scenario));
    let file = expected_file(scenario, mode);
    let expected = std::fs::read_to_string(dir().join(&file)).expect("expected output");
    match expected.rsplit_once("\nerror: ") {
        Some((_, e)) => {
            assert_eq!(out.status.code(), Some(1), "{file}: {stderr}");
            assert_eq!(stderr, format!("cvo: {e}"), "{file}");
            actual += &format!("\nerror: {e}");
        }
        None => {
            assert_eq!(out.status.code(), Some(0), "{file}: {stderr}");
            assert_eq!(stderr, "", "{file}");
        }
    }
    assert!(
        actual == expected,
        "{file} (binary) differs:\n{}",
        diff(&expected, &actual)
    );
}

macro_rules! scenario {
    ($name:ident, $scenario:literal, $version:literal) => {
        mod $name {
            use super::*;
            #[test]
            fn plain() {
                through_library($scenario, Mode::Plain);
                through_binary($scenario, Mode::Plain);
            }
            #[test]
            fn show_outdated_releases() {
                through_library($scenario, Mode::Outdated);
                through_binary($scenario, Mode::Outdated);
            }
            #[test]
            fn version() {
                through_library($scenario, Mode::Version($version));
                through_binary($scenario, Mode::Version($version));
            }
        }
    };
}

scenario!(
    longest_not_recommended,
    "4.12.16-longest-not-recommended",
    "4.12.51"
);
scenario!(longest_recommended, "4.12.16-longest-recommended", "4.12.51");
scenario!(all_recommended, "4.14.1-all-recommended", "4.12.51");
scenario!(degraded_monitoring, "4.16.27-degraded-monitoring", "4.16.32");
scenario!(okd_scos, "4.19.0-okd-scos.16", "4.19.0-okd-scos.17");

#[test]
fn accepting_every_issue_ends_with_the_accepted_line_and_exit_0() {
    let out = common::cvo()
        .current_dir(dir())
        .env("RUST_LOG", "off")
        .args([
            "upgrade",
            "recommend",
            "--from",
            "4.16.27-degraded-monitoring-cv.yaml",
            "--version",
            "4.16.32",
        ])
        .args([
            "--accept",
            "ClusterOperatorDown,Failing,PodDisruptionBudgetAtLimit",
        ])
        .output()
        .expect("cvo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("accepted Failing=True:\n"), "{stdout}");
    assert!(
        stdout.contains("but were explicitly accepted via --accept: recommended/CriticalAlerts/ClusterOperatorDown/0, recommended/PodDisruptionBudgetAlerts/PodDisruptionBudgetAtLimit/1\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("Update to 4.16.32 has no known issues relevant to this cluster other than the accepted ClusterOperatorDown,Failing,PodDisruptionBudgetAtLimit.\n"),
        "{stdout}"
    );
}

#[test]
fn flag_errors_are_usage_errors() {
    for (args, want) in [
        (vec!["--quiet"], "--quiet can only be set when --version is set"),
        (
            vec!["--version", "4.16.32", "--show-outdated-releases"],
            "when --version is set, --show-outdated-releases is unnecessary",
        ),
        (vec!["--version", "4.16"], "cannot parse SemVer target \"4.16\""),
    ] {
        let out = common::cvo()
            .current_dir(dir())
            .env("RUST_LOG", "off")
            .args([
                "upgrade",
                "recommend",
                "--from",
                "4.16.27-degraded-monitoring-cv.yaml",
            ])
            .args(&args)
            .output()
            .expect("cvo runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}
