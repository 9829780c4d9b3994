//! An API error reads as one sentence (the server's message, reason and code), never kube's
//! debug form of the Status, and a 5xx is retried a bounded number of times first. The cluster
//! is a `cvo sim serve` child process answering every list with 500.

mod common;

use std::{
    ffi::OsStr,
    process::{Command, Stdio},
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
        let out = Command::new(env!("CARGO_BIN_EXE_cvo"))
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
        // Three retries, 0.5 + 1 + 2 s apart, and no more.
        assert!(
            took >= Duration::from_millis(3500),
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
