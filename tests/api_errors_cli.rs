//! An API error reads as one sentence (the server's message, reason and code), never kube's
//! debug form of the Status, and a 5xx is retried a bounded number of times first. The cluster
//! is a `cvo sim serve` child process answering every list with 500.

mod common;

use std::{
    ffi::OsStr,
    process::Stdio,
    time::{Duration, Instant},
};

#[test]
fn a_500_is_retried_then_printed_as_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let from = format!(
        "{}/tests/fixtures/snapshots/settled-no-machineconfigs.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let args: Vec<&OsStr> = ["--from", from.as_str(), "--error", "list=500:1"]
        .into_iter()
        .map(OsStr::new)
        .collect();
    let (mut child, _) = common::spawn_sim_serve(&kubeconfig, &args, Stdio::null(), Duration::from_secs(10));
    for cmd in [&["status"][..], &["get", "co"][..]] {
        let started = Instant::now();
        let out = common::cvo()
            .args(cmd)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .env("RUST_LOG", "off")
            .output()
            .expect("cvo runs");
        let took = started.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{cmd:?}: {err}");
        assert!(
            err.trim_end().ends_with(
                "(context \"cvo-sim\"): list clusteroperators: Internal error occurred: injected fault \
                 (reason InternalError, code 500)"
            ),
            "{cmd:?}: {err}"
        );
        assert!(!err.contains("Status {") && !err.contains("ApiError"), "{err}");
        // Three retries, 0.5 + 1 + 2 s apart (each jittered by ±20 %: 2.8 s at the least),
        // and no more (`a_504_costs_three_requests_and_a_500_four` counts the requests).
        assert!(
            took >= Duration::from_millis(2800),
            "{cmd:?}: not retried ({took:?})"
        );
        assert!(
            took < Duration::from_secs(10),
            "{cmd:?}: retried too long ({took:?})"
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Live, `cvo get KIND` reads only KIND: a failing (or forbidden) list of another kind does not
/// fail it, and an error names the kind asked for. Every list answers 500 here: `get cv` (one
/// GET) prints its table; `get nodes` fails naming nodes; neither touched ClusterOperators.
#[test]
fn get_reads_only_the_kind_asked_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let audit = dir.path().join("audit.jsonl");
    let from = format!(
        "{}/tests/fixtures/snapshots/settled-no-machineconfigs.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let args: Vec<&OsStr> = [
        OsStr::new("--from"),
        OsStr::new(from.as_str()),
        OsStr::new("--error"),
        OsStr::new("list=500:1"),
        OsStr::new("--audit-log"),
        audit.as_os_str(),
    ]
    .into_iter()
    .collect();
    let (mut child, _) = common::spawn_sim_serve(&kubeconfig, &args, Stdio::null(), Duration::from_secs(10));
    let cvo = |cmd: &[&str]| {
        common::cvo()
            .args(cmd)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .env("RUST_LOG", "off")
            .output()
            .expect("cvo runs")
    };
    let out = cvo(&["get", "cv"]);
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        stdout.starts_with("NAME      VERSION   AVAILABLE   PROGRESSING   SINCE")
            && stdout.contains("\nversion   4.16.3    True        False"),
        "{stdout}"
    );
    let out = cvo(&["get", "nodes"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.trim_end().ends_with(
            "list nodes: Internal error occurred: injected fault (reason InternalError, code 500)"
        ),
        "{err}"
    );
    let _ = child.kill();
    let _ = child.wait();
    let log = std::fs::read_to_string(&audit).expect("audit log");
    assert!(log.contains("\"path\":\"/api/v1/nodes\""), "{log}");
    for other in ["clusteroperators", "machineconfig", "deployments"] {
        assert!(!log.contains(other), "{other} was read:\n{log}");
    }
}

/// A 504 (or 503, 429) is retried by the client itself, twice (`CLIENT_RETRIES`), and not again
/// on top of that: `cvo get nodes` sends 3 requests and ends in a few seconds. It sent 12
/// (three client tries for each of four command tries), 43 s at 3 s a request. A 500 is
/// retried by the command only: 4 requests.
#[test]
fn a_504_costs_three_requests_and_a_500_four() {
    let from = format!(
        "{}/tests/fixtures/snapshots/settled-no-machineconfigs.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    for (code, requests) in [(504, 3), (500, 4)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let audit = dir.path().join("audit.jsonl");
        let rule = format!("list={code}:1");
        let args: Vec<&OsStr> = [
            OsStr::new("--from"),
            OsStr::new(from.as_str()),
            OsStr::new("--error"),
            OsStr::new(rule.as_str()),
            OsStr::new("--timeout-ms"),
            OsStr::new("300"),
            OsStr::new("--audit-log"),
            audit.as_os_str(),
        ]
        .into_iter()
        .collect();
        let (mut child, _) =
            common::spawn_sim_serve(&kubeconfig, &args, Stdio::null(), Duration::from_secs(10));
        let started = Instant::now();
        let out = common::cvo()
            .args(["get", "nodes", "--kubeconfig"])
            .arg(&kubeconfig)
            .env("RUST_LOG", "off")
            .output()
            .expect("cvo runs");
        let took = started.elapsed();
        let _ = child.kill();
        let _ = child.wait();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{code}: {err}");
        assert!(
            err.trim_end().ends_with(&format!("code {code})")),
            "{code}: {err}"
        );
        let log = std::fs::read_to_string(&audit).expect("audit log");
        let sent = log
            .lines()
            .filter(|l| l.contains("\"path\":\"/api/v1/nodes\""))
            .count();
        assert_eq!(sent, requests, "{code}: {took:?}\n{log}");
        assert!(took < Duration::from_secs(10), "{code}: took {took:?}");
    }
}
