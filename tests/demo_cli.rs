//! `cvo demo` on the built binary: the live update 4.16.3 → 4.16.4 headless until Completed,
//! a degraded-operator scenario ending with the failure, bad flags, and `--snapshot` (the
//! static demo).

mod common;

use std::{
    path::PathBuf,
    process::Output,
    time::{Duration, Instant},
};

fn cvo(args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let out = common::cvo().args(args).output().expect("run cvo");
    (out, started.elapsed())
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/scenarios")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn headless_until_complete_reaches_completed_4_16_4() {
    let (o, took) = cvo(&[
        "demo",
        "--headless",
        "--until-complete",
        "--speed",
        "20",
        "--timeout",
        "55",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}\nstderr:\n{err}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    for want in [
        "requesting update to 4.16.4",
        "desired update accepted: 4.16.4",
        "history: 4.16.4 Partial (update started)",
        "progress ",
        "update to 4.16.4 Completed",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
    // The history table ends the output: 4.16.4 Completed on top of 4.16.3 Completed.
    let table: Vec<Vec<&str>> = out
        .lines()
        .skip_while(|l| !l.starts_with("STATE"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        table.first().map(|r| r[..4].to_vec()),
        Some(vec!["STATE", "VERSION", "STARTED", "COMPLETED"])
    );
    let rows: Vec<(&str, &str)> = table.iter().skip(1).map(|r| (r[0], r[1])).collect();
    assert_eq!(
        rows[..2],
        [("Completed", "4.16.4"), ("Completed", "4.16.3")],
        "{out}"
    );
}

#[test]
fn degraded_operator_scenario_ends_failing_naming_it() {
    let s = fixture("demo-cli-degraded.yaml");
    let (o, took) = cvo(&[
        "demo",
        "--headless",
        "--until-complete",
        "--speed",
        "20",
        "--timeout",
        "55",
        "--scenario",
        &s,
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "stdout:\n{out}\nstderr:\n{err}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let last = out
        .lines()
        .find(|l| l.contains("ERROR update failing:"))
        .unwrap_or_else(|| panic!("no failing line in:\n{out}"));
    assert!(last.contains("ClusterOperatorDegraded"), "{last}");
    assert!(last.contains("console"), "{last}");
    assert!(!out.contains("update to 4.16.4 Completed"), "{out}");
}

#[test]
fn bad_flags_and_scenarios_are_one_line_errors() {
    for (args, code, want) in [
        (
            vec!["demo", "--headless", "--speed", "0"],
            2,
            "--speed 0: must be a positive number",
        ),
        (
            vec!["demo", "--headless", "--speed", "-3"],
            2,
            "--speed -3: must be a positive number",
        ),
        (
            vec!["demo", "--headless", "--speed", "NaN"],
            2,
            "--speed NaN: must be a positive number",
        ),
        (
            vec!["demo", "--headless", "--speed", "fast"],
            2,
            "invalid value 'fast' for '--speed <N>'",
        ),
        (
            vec!["demo", "--headless", "--until-complete", "--timeout", "0"],
            2,
            "--timeout 0: must be a positive",
        ),
        (
            vec!["demo", "--snapshot", "--speed", "2"],
            2,
            "cannot be used with",
        ),
        (
            vec!["demo", "--headless", "--scenario", "/nonexistent/s.yaml"],
            1,
            "/nonexistent/s.yaml",
        ),
    ] {
        let (o, _) = cvo(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let garbage = fixture("demo-cli-garbage.yaml");
    let (o, _) = cvo(&["demo", "--headless", "--scenario", &garbage]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cvo: ") && err.contains("demo-cli-garbage.yaml"),
        "{err}"
    );
}

#[test]
fn snapshot_headless_prints_the_static_stuck_update() {
    let (o, _) = cvo(&["demo", "--snapshot", "--headless"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("4.16.4"), "{out}");
    assert!(out.contains("machine-config"), "{out}");
}
