//! `cvo status` against the `oc adm upgrade status` fixtures
//! (`openshift/oc pkg/cli/admin/upgrade/status/examples/`, copied to `tests/fixtures/upstream/`).
//!
//! One test per scenario × detail level compares the rendered text with the expected output
//! byte for byte; an end-to-end test runs the built binary.

use std::path::PathBuf;

use cvo::cli::status::{Details, render_text};

mod common;

/// The oc-upgrade-status fixtures, or `None` after a visible skip notice naming `test`.
fn fixtures_dir(test: &str) -> Option<PathBuf> {
    common::upstream_fixture("oc-upgrade-status", test)
}

/// Prints the first differing lines with some context, unified-diff style.
fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.split('\n').collect();
    let a: Vec<&str> = actual.split('\n').collect();
    let first = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let start = first.saturating_sub(3);
    let mut out = format!("@@ first difference at line {} @@\n", first + 1);
    for l in e.iter().take(start + 3 + 10).skip(start) {
        out.push_str(&format!("-{l:?}\n"));
    }
    for l in a.iter().take(start + 3 + 10).skip(start) {
        out.push_str(&format!("+{l:?}\n"));
    }
    out
}

fn check(scenario: &str, details: Option<Details>) {
    let Some(dir) = fixtures_dir(&format!("{scenario} ({details:?})")) else {
        return;
    };
    let state =
        cvo::cluster::snapshot::load(&common::scenario_inputs(&dir, scenario)).expect("fixture loads");
    let now = state.snapshot_time().expect("fixture has condition times");
    let assessment = cvo::assess::assess(&state, None, now);
    let actual = render_text(&assessment, details);
    let file = if details.is_some() {
        format!("{scenario}.detailed-output")
    } else {
        format!("{scenario}.output")
    };
    let expected = std::fs::read_to_string(dir.join(&file)).expect("expected output readable");
    assert!(
        actual == expected,
        "{file} differs:\n{}",
        diff(&expected, &actual)
    );
}

macro_rules! fixture_tests {
    ($($plain:ident, $detailed:ident => $scenario:literal;)*) => {
        $(
            #[test]
            fn $plain() {
                check($scenario, None);
            }
            #[test]
            fn $detailed() {
                check($scenario, Some(Details::All));
            }
        )*
    };
}

fixture_tests! {
    degraded, degraded_detailed => "4.14.1-degraded";
    paused_worker_pool, paused_worker_pool_detailed => "4.14.1-paused-worker-pool";
    multiple_pools, multiple_pools_detailed => "4.14.1-workers-started-updating-multiple-pools";
    cos_not_annotated, cos_not_annotated_detailed => "4.15.0-ec2-b02-cos-not-annotated";
    ec2_early, ec2_early_detailed => "4.15.0-ec2-early";
    compact, compact_detailed => "4.16.0-compact";
    single_node, single_node_detailed => "4.16.0-single-node";
    no_version_upgrading, no_version_upgrading_detailed => "no-version-upgrading";
    not_upgrading, not_upgrading_detailed => "not-upgrading";
    to_multi_arch, to_multi_arch_detailed => "to-multi-arch";
}

#[test]
fn nodes_detail_shows_operators_table_only_when_asked() {
    let Some(dir) = fixtures_dir("nodes_detail_shows_operators_table_only_when_asked") else {
        return;
    };
    let state = cvo::cluster::snapshot::load(&common::scenario_inputs(&dir, "4.14.1-degraded"))
        .expect("fixture loads");
    let now = state.snapshot_time().expect("times");
    let a = cvo::assess::assess(&state, None, now);
    let ops = render_text(&a, Some(Details::Operators));
    assert!(ops.contains("Updating Cluster Operators"));
    assert!(ops.contains("Run with --details=health"));
    let nodes = render_text(&a, Some(Details::Nodes));
    assert!(!nodes.contains("Updating Cluster Operators"));
    let health = render_text(&a, Some(Details::Health));
    assert!(health.contains("  Description: "));
    assert!(!health.contains("Updating Cluster Operators"));
}

#[test]
fn json_has_documented_top_level_keys() {
    let Some(dir) = fixtures_dir("json_has_documented_top_level_keys") else {
        return;
    };
    let state = cvo::cluster::snapshot::load(&common::scenario_inputs(&dir, "4.14.1-degraded"))
        .expect("fixture loads");
    let now = state.snapshot_time().expect("times");
    let a = cvo::assess::assess(&state, None, now);
    let json = cvo::cli::status::render_json(&a).expect("serialises");
    let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    for key in [
        "now",
        "error",
        "updating",
        "controlPlane",
        "pools",
        "health",
        "currentVersion",
        "startedAt",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["controlPlane"]["assessment"], "Stalled");
    assert_eq!(v["controlPlane"]["estimate"]["kind"], "NotAvailableOverdue");
}

#[test]
fn binary_end_to_end() {
    let Some(dir) = fixtures_dir("binary_end_to_end") else {
        return;
    };
    let scenario = "4.16.0-single-node";
    let mut cmd = common::cvo();
    cmd.arg("status");
    for f in common::scenario_inputs(&dir, scenario) {
        cmd.arg("--from").arg(f);
    }
    cmd.args(["--details", "all"]);
    let out = cmd.output().expect("cvo runs");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected =
        std::fs::read_to_string(dir.join(format!("{scenario}.detailed-output"))).expect("readable");
    let actual = String::from_utf8_lossy(&out.stdout);
    assert!(actual == expected, "differs:\n{}", diff(&expected, &actual));
}

#[test]
fn binary_reports_missing_cluster_version() {
    let Some(dir) = fixtures_dir("binary_reports_missing_cluster_version") else {
        return;
    };
    let out = common::cvo()
        .args(["status", "--now", "2024-01-01T00:00:00Z", "--from"])
        .arg(dir.join("not-upgrading-co.yaml"))
        .output()
        .expect("cvo runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "stderr: {err}");
    assert!(
        err.starts_with("cvo: no ClusterVersion in snapshot "),
        "stderr: {err}"
    );
    assert!(err.contains("not-upgrading-co.yaml"), "stderr: {err}");
}
