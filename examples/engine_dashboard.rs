//! The dashboard driving the embedded engine on the in-process simulator, before `cvo demo`
//! does it for real: the demo cluster at 4.16.3 (`assets/demo-cluster`), the engine in
//! active-apply on `assets/payloads/4.16.3` (timings scaled by 0.01), told after 4 s to update
//! to `assets/payloads/4.16.4`, and a crude stand-in for the simulated operators that reports
//! each ClusterOperator at the desired payload's versions a few seconds after the desired
//! version changed (`kube-apiserver` and `machine-config` slower).
//!
//! ```sh
//! cargo run --example engine_dashboard            # q quits
//! ENGINE_DASHBOARD_HEADLESS=60 cargo run --example engine_dashboard   # no UI, 60 s
//! ```

use std::{collections::BTreeMap, path::PathBuf, sync::Arc, time::Duration};

use cvo::{
    cluster::{live::watch_state, snapshot},
    reconcile::api::{Command, Engine, EngineConfig, EngineTimings, LocalPayloads},
    sim::Simulator,
    ui::{EngineLink, UiOptions},
};
use serde_json::{Value, json};

/// `name -> status.versions` of every ClusterOperator manifest of the payload.
fn payload_versions(dir: &std::path::Path) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir.join("release-manifests"))? {
        let path = entry?.path();
        if !path.to_string_lossy().ends_with("_clusteroperator.yaml") {
            continue;
        }
        let doc: Value = serde_norway::from_str(&std::fs::read_to_string(&path)?)?;
        let name = doc
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let versions = doc.pointer("/status/versions").cloned().unwrap_or(json!([]));
        out.insert(name, versions);
    }
    Ok(out)
}

/// Reports each ClusterOperator at the versions of the payload the ClusterVersion desires,
/// `delay(name)` after the desired version changed.
fn play_operators(sim: Simulator, payloads: BTreeMap<String, BTreeMap<String, Value>>) {
    tokio::spawn(async move {
        let mut since: Option<(String, tokio::time::Instant)> = None;
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let desired = sim
                .get("config.openshift.io", "clusterversions", "", "version")
                .and_then(|cv| {
                    cv.pointer("/status/desired/version")
                        .and_then(Value::as_str)
                        .map(String::from)
                })
                .unwrap_or_default();
            if since.as_ref().is_none_or(|(v, _)| *v != desired) {
                since = Some((desired.clone(), tokio::time::Instant::now()));
            }
            let Some(((_, t0), versions)) = since.as_ref().zip(payloads.get(&desired)) else {
                continue;
            };
            for (i, (name, want)) in versions.iter().enumerate() {
                let Some(mut co) = sim.get("config.openshift.io", "clusteroperators", "", name) else {
                    continue;
                };
                let slow = matches!(name.as_str(), "kube-apiserver" | "machine-config");
                let delay = Duration::from_millis(if slow { 15_000 } else { 2_000 + 300 * i as u64 });
                if t0.elapsed() < delay || co.pointer("/status/versions") == Some(want) {
                    continue;
                }
                co["status"] = json!({
                    "conditions": [
                        {"type": "Available", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "AsExpected"},
                        {"type": "Degraded", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "AsExpected"},
                        {"type": "Progressing", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "AsExpected"},
                        {"type": "Upgradeable", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "AsExpected"}
                    ],
                    "versions": want,
                });
                let _ = sim.insert(co);
            }
        }
    });
}

const IMAGE_4163: &str = "quay.io/openshift-release-dev/ocp-release@sha256:32dcf759cde27a222fb983364eb95ce93be6acfd33de9210390b1c2f2bd6a9c2";
const IMAGE_4164: &str = "quay.io/openshift-release-dev/ocp-release@sha256:8878f38c39bf31828fcd6909657523a97dabf8dd21425d6f2d760433d191071e";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
    let cluster = root.join("demo-cluster");
    let paths: Vec<PathBuf> = ["cv", "co", "mc", "mcp", "node", "workloads"]
        .iter()
        .map(|k| cluster.join(format!("{k}.yaml")))
        .collect();
    let state = snapshot::load(&paths)?;
    let sim = Simulator::from_state(&state).map_err(|e| anyhow::anyhow!("simulator: {e:?}"))?;
    let old = root.join("payloads/4.16.3");
    let new = root.join("payloads/4.16.4");
    let payloads = BTreeMap::from([
        ("4.16.3".to_string(), payload_versions(&old)?),
        ("4.16.4".to_string(), payload_versions(&new)?),
    ]);
    play_operators(sim.clone(), payloads);
    let client = kube::Client::new(sim.clone(), "default");
    let mut cfg = EngineConfig::local(old.clone(), Some(IMAGE_4163.into()))?;
    cfg.payloads = Arc::new(LocalPayloads {
        own_image: IMAGE_4163.into(),
        own_dir: old,
        others: BTreeMap::from([(IMAGE_4164.to_string(), new)]),
    });
    cfg.timings = EngineTimings::scaled(0.01);
    let engine = Engine::spawn(client.clone(), cfg);
    // After a few seconds at 4.16.3, ask for 4.16.4 (what `cvo demo` starts with).
    let commands = engine.commands.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(4)).await;
        let _ = commands
            .send(Command::SetDesiredUpdate {
                version: Some("4.16.4".into()),
                image: Some(IMAGE_4164.into()),
                force: true,
            })
            .await;
    });
    if let Ok(secs) = std::env::var("ENGINE_DASHBOARD_HEADLESS") {
        // For measuring the dashboard's share of the CPU: the same run without it.
        tokio::time::sleep(Duration::from_secs(secs.parse().unwrap_or(60))).await;
        engine.shutdown().await;
        return Ok(());
    }
    let feed = watch_state(client, "simulator".into());
    let result = cvo::ui::run(UiOptions {
        feed,
        alerts: None,
        now: None,
        engine: Some(EngineLink {
            status: engine.status.clone(),
            commands: engine.commands.clone(),
        }),
    })
    .await;
    engine.shutdown().await;
    result
}
