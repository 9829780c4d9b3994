//! Helpers shared by the integration tests (each test crate uses a part of them).

#![allow(dead_code)]

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use cvo::cluster::ClusterState;
use tokio::sync::watch;

/// The shared real-cluster fixtures (`../shared/fixtures/<rel>` beside the crate), or `None`
/// after telling the person running the tests that `test` is skipped. The notice is written
/// straight to stderr, past libtest's output capture, so a fresh clone's `cargo test` shows
/// which tests did not run.
pub fn shared_fixture(rel: &str, test: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel);
    if p.exists() {
        return Some(p);
    }
    let _ = writeln!(
        std::io::stderr(),
        "skipping {test}: ../shared/fixtures/{rel} not found"
    );
    None
}

/// The input files of `oc-upgrade-status` fixture scenario `s` in `dir`: the five required
/// ones plus the optional machine-config-operator Deployment.
pub fn scenario_inputs(dir: &Path, s: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["cv", "co", "mcp", "mc", "node"]
        .iter()
        .map(|k| dir.join(format!("{s}-{k}.yaml")))
        .collect();
    let mco = dir.join(format!("{s}-mco-deployment.yaml"));
    if mco.is_file() {
        v.push(mco);
    }
    v
}

/// Waits (at most 10 s) until the feed holds a state for which `pred` is true; panics naming
/// `what` on timeout or when the feed closes.
pub async fn wait_for(
    rx: &mut watch::Receiver<Arc<ClusterState>>,
    what: &str,
    pred: impl Fn(&ClusterState) -> bool,
) -> Arc<ClusterState> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let current = rx.borrow_and_update().clone();
        if pred(&current) {
            return current;
        }
        match tokio::time::timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => panic!("feed closed while waiting for {what}"),
            Err(_) => panic!("timed out waiting for {what}; last state: {current:?}"),
        }
    }
}
