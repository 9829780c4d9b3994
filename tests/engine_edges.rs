//! The engine's edges through `cvo::cli::reconcile::run` (what `cvo reconcile` runs) and the
//! engine itself, against the in-process simulator: `--once` is exactly one pass and, on a
//! converged cluster, a reconciling one; a deleted ClusterOperator is pre-created with its
//! `relatedObjects` while reconciling; the wait on an operator names the operand and version;
//! a payload that cannot be loaded ends the run with its reason and leaves Progressing and the
//! history alone; a Lease held by another cvo ends the run naming the holder and until when.
//!
//! Self-contained (no `tests/common`): payloads are generated in temporary directories and a
//! test task plays the ClusterOperator (sets its status directly in the simulator store).

mod common;
use std::{
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use cvo::{
    cli::reconcile::{ReconcileOptions, ReconcileSummary, Until, exit, render_text, run},
    openshift::{ClusterVersion, UpdateState, condition::find},
    reconcile::{
        Engine, EngineConfig, EngineTimings,
        api::{EngineMode, StatusSnapshot},
    },
    sim::Simulator,
};
use serde_json::{Value, json};

const NS: &str = "openshift-edges";
const CO: &str = "edge-op";

fn client(sim: &Simulator) -> kube::Client {
    kube::Client::new(sim.clone(), "default")
}

/// Writes a payload for `version` into `dir`: a namespace, a ConfigMap and the ClusterOperator
/// [`CO`] (label `owner: edges`, two related objects) expecting `operator` and the operand
/// `edge-operand` at `version`.
fn write_payload(dir: &Path, version: &str) {
    common::PayloadDir::new(dir, version).component(
        "edges",
        NS,
        CO,
        version,
        "  labels:\n    owner: edges\n",
        &format!(
            "  relatedObjects:\n  - group: \"\"\n    resource: namespaces\n    name: {NS}\n  - group: \"\"\n    resource: configmaps\n    namespace: {NS}\n    name: settings\n  versions:\n  - name: operator\n    version: \"{version}\"\n  - name: edge-operand\n    version: \"{version}\"\n"
        ),
    );
}

/// What the played operator reports.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Reports {
    /// Available, not degraded, `operator` and `edge-operand` at the version given.
    Both,
    /// Available, not degraded, only `operator`.
    OperatorOnly,
    /// Nothing: the operator is gone (its ClusterOperator is left as it is).
    Nothing,
}

/// Plays [`CO`]: every 10 ms, once it exists, sets its status per `mode` at `version`.
fn play_operator(sim: &Simulator, mode: Arc<Mutex<Reports>>, version: &'static str) {
    let sim = sim.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let m = *mode.lock().expect("lock");
            let Some(mut co) = sim.get("config.openshift.io", "clusteroperators", "", CO) else {
                continue;
            };
            let versions = match m {
                Reports::Both => json!([
                    {"name": "operator", "version": version},
                    {"name": "edge-operand", "version": version}
                ]),
                Reports::OperatorOnly => json!([{"name": "operator", "version": version}]),
                Reports::Nothing => continue,
            };
            let t = "2026-01-01T00:00:00Z";
            let mut status = json!({
                "conditions": [
                    {"type": "Available", "status": "True", "lastTransitionTime": t, "reason": "AsExpected", "message": ""},
                    {"type": "Degraded", "status": "False", "lastTransitionTime": t, "reason": "AsExpected", "message": ""},
                    {"type": "Progressing", "status": "False", "lastTransitionTime": t}
                ],
                "versions": versions
            });
            if let Some(r) = co.pointer("/status/relatedObjects") {
                status["relatedObjects"] = r.clone();
            }
            if co.get("status") != Some(&status) {
                co["status"] = status;
                let _ = sim.insert(co);
            }
        }
    });
}

fn opts(dir: &Path, until: Until, dry_run: bool) -> ReconcileOptions {
    ReconcileOptions {
        payload: dir.to_path_buf(),
        release_image: None,
        dry_run,
        until,
        timeout: Some(Duration::from_secs(30)),
        timings: EngineTimings::scaled(0.05),
        lease: true,
    }
}

fn cv_of(sim: &Simulator) -> ClusterVersion {
    let v = sim
        .get("config.openshift.io", "clusterversions", "", "version")
        .expect("ClusterVersion exists");
    serde_json::from_value(v).expect("ClusterVersion decodes")
}

/// A simulator with the payload in `dir` applied until Completed, and the operator played.
async fn converged(dir: &Path) -> (Simulator, Arc<Mutex<Reports>>) {
    write_payload(dir, "1.0.0");
    let sim = Simulator::new();
    // The operator runs before the install reaches it (else the first check, right after the
    // pre-creation, would find it unavailable and the install would be Failing).
    sim.insert(json!({
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
        "metadata": {"name": CO},
        "status": {
            "conditions": [
                {"type": "Available", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "AsExpected", "message": ""},
                {"type": "Degraded", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "AsExpected", "message": ""},
                {"type": "Progressing", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z"}
            ],
            "versions": [
                {"name": "operator", "version": "1.0.0"},
                {"name": "edge-operand", "version": "1.0.0"}
            ]
        }
    }))
    .expect("CO");
    let mode = Arc::new(Mutex::new(Reports::Both));
    play_operator(&sim, mode.clone(), "1.0.0");
    let s = run(client(&sim), &opts(dir, Until::Complete, false))
        .await
        .expect("runs");
    assert_eq!(
        (s.outcome.as_str(), s.exit_code),
        ("complete", 0),
        "{}",
        render_text(&s)
    );
    (sim, mode)
}

fn co_of(sim: &Simulator) -> Option<Value> {
    sim.get("config.openshift.io", "clusteroperators", "", CO)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_is_exactly_one_reconciling_pass_on_a_converged_cluster() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("p");
    let (sim, _mode) = converged(&dir).await;
    for i in 0..10 {
        let s = run(client(&sim), &opts(&dir, Until::Once, false))
            .await
            .expect("runs");
        assert_eq!(
            (s.outcome.as_str(), s.exit_code, s.passes),
            ("pass-done", 0, 1),
            "run {i}: {}",
            render_text(&s)
        );
        assert_eq!((s.done, s.total), (3, 3), "run {i}");
        assert_eq!(
            s.status_writes, 0,
            "run {i}: a converged pass leaves the status alone"
        );
    }
    // The ClusterOperator metadata merge is a reconciling-only rule: a label removed by hand
    // comes back in the first (and only) pass after start-up.
    let mut co = co_of(&sim).expect("CO");
    co["metadata"]["labels"] = json!({});
    sim.insert(co).expect("edit CO");
    let s = run(client(&sim), &opts(&dir, Until::Once, false))
        .await
        .expect("runs");
    assert_eq!(
        (s.outcome.as_str(), s.passes),
        ("pass-done", 1),
        "{}",
        render_text(&s)
    );
    let co = co_of(&sim).expect("CO");
    assert_eq!(co["metadata"]["labels"], json!({"owner": "edges"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_cluster_operator_is_precreated_while_reconciling() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("p");
    let (sim, mode) = converged(&dir).await;
    // The operator breaks and its ClusterOperator is deleted.
    *mode.lock().expect("lock") = Reports::Nothing;
    let api: kube::Api<cvo::openshift::ClusterOperator> = kube::Api::all(client(&sim));
    api.delete(CO, &Default::default()).await.expect("delete CO");
    assert!(co_of(&sim).is_none());
    let s = run(client(&sim), &opts(&dir, Until::Once, false))
        .await
        .expect("runs");
    // The pass fails on the operator (not available), but the ClusterOperator is back with
    // the related objects must-gather follows.
    assert_eq!(
        (s.outcome.as_str(), s.exit_code),
        ("pass-done", exit::FAILING),
        "{}",
        render_text(&s)
    );
    let co = co_of(&sim).expect("CO pre-created");
    assert_eq!(
        co["status"]["relatedObjects"],
        json!([
            {"group": "", "resource": "namespaces", "name": NS},
            {"group": "", "resource": "configmaps", "namespace": NS, "name": "settings"}
        ])
    );
    assert_eq!(co["metadata"]["labels"], json!({"owner": "edges"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_on_an_operator_names_the_operand_and_version() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("p");
    let (sim, mode) = converged(&dir).await;
    *mode.lock().expect("lock") = Reports::OperatorOnly;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let s = run(client(&sim), &opts(&dir, Until::Once, false))
        .await
        .expect("runs");
    assert_eq!(s.exit_code, exit::FAILING, "{}", render_text(&s));
    assert_eq!(
        s.failure.as_deref(),
        Some(
            "ClusterOperatorUpdating: Cluster operator edge-op is updating versions: waiting for edge-operand 1.0.0 (not reported yet)"
        ),
        "{}",
        render_text(&s)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_that_cannot_load_ends_the_run_and_leaves_progressing_alone() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("p");
    let (sim, _mode) = converged(&dir).await;
    let before = cv_of(&sim).status;
    let broken = tmp.path().join("broken");
    std::fs::create_dir_all(&broken).expect("mkdir");
    let broken_image = cvo::reconcile::api::LocalPayloads::pseudo_pull_spec(&broken).expect("canonical");

    // Not requested: refused before the run, naming what the cluster runs (the engine never
    // changes the release unless spec.desiredUpdate asks for it).
    let s = run(client(&sim), &opts(&broken, Until::Once, false))
        .await
        .expect("runs");
    assert_eq!(
        (s.outcome.as_str(), s.exit_code),
        ("payload-error", exit::PAYLOAD)
    );
    assert_eq!(
        s.reason.as_deref(),
        Some(
            format!(
                "--payload is release {broken_image}, but the cluster runs 1.0.0 ({}) and spec.desiredUpdate of ClusterVersion version does not request {broken_image}: cvo changes a cluster's release only when spec.desiredUpdate asks for it (set spec.desiredUpdate.image to {broken_image} to update to this payload)",
                before.desired.image
            )
            .as_str()
        )
    );
    assert_eq!(cv_of(&sim).status, before, "nothing written");
    let api: kube::Api<ClusterVersion> = kube::Api::all(client(&sim));
    api.patch(
        "version",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(serde_json::json!({"spec": {"desiredUpdate": {"image": broken_image}}})),
    )
    .await
    .expect("request the broken payload");
    let before = cv_of(&sim).status;

    // `cvo reconcile --dry-run` and `--once`: exit 5 at once, with the reason, and no claim
    // about the drift.
    for dry_run in [true, false] {
        let started = std::time::Instant::now();
        let s = run(client(&sim), &opts(&broken, Until::Once, dry_run))
            .await
            .expect("runs");
        let text = render_text(&s);
        assert_eq!(
            (s.outcome.as_str(), s.exit_code),
            ("payload-error", exit::PAYLOAD),
            "{text}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        let reason = s.reason.clone().unwrap_or_default();
        assert!(
            reason.starts_with("Loading payload failed version=\"\" image=\"file://"),
            "{reason}"
        );
        assert!(!text.contains("would change"), "{text}");
        assert!(text.contains("release: <not loaded> (file://"), "{text}");
        if dry_run {
            assert!(
                text.contains(
                    "drift unknown: no whole pass ran (payload-error; watch-only: nothing was written)"
                ),
                "{text}"
            );
        }
    }

    // The engine writes why in ReleaseAccepted and leaves Progressing and the history alone
    // (no "Working towards <unknown>").
    let mut cfg = EngineConfig::local(broken.clone(), None).expect("config");
    cfg.timings = EngineTimings::scaled(0.05);
    let mut h = Engine::spawn(client(&sim), cfg);
    let limit = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let s: Arc<StatusSnapshot> = h.status.borrow_and_update().clone();
        let accepted = s
            .cluster_version
            .as_ref()
            .and_then(|c| find(&c.conditions, "ReleaseAccepted").cloned());
        if accepted.is_some_and(|c| c.is_false()) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < limit,
            "no ReleaseAccepted=False: {s:#?}"
        );
        let _ = tokio::time::timeout_at(limit, h.status.changed()).await;
    }
    h.shutdown().await;
    let after = cv_of(&sim).status;
    let accepted = find(&after.conditions, "ReleaseAccepted").expect("ReleaseAccepted");
    assert_eq!((accepted.is_false(), accepted.reason()), (true, "LoadPayload"));
    assert!(
        accepted.message().starts_with("Loading payload failed"),
        "{}",
        accepted.message()
    );
    let progressing = |st: &cvo::openshift::ClusterVersionStatus| {
        find(&st.conditions, "Progressing").map(|c| (c.status, c.message().to_string()))
    };
    assert_eq!(progressing(&after), progressing(&before));
    assert_eq!(
        progressing(&after).map(|p| p.1),
        Some("Cluster version is 1.0.0".to_string())
    );
    assert_eq!(after.history, before.history);
    assert_eq!(after.history[0].state, UpdateState::Completed);
    assert_eq!(after.desired, before.desired);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_held_by_another_cvo_ends_the_run_naming_the_holder() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("p");
    write_payload(&dir, "1.0.0");
    let sim = Simulator::new();
    let renew = chrono::Utc::now();
    sim.insert(json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "openshift-cluster-version"}
    }))
    .expect("namespace");
    sim.insert(json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "version", "namespace": "openshift-cluster-version"},
        "spec": {
            "holderIdentity": "other-cvo",
            "leaseDurationSeconds": 137,
            "acquireTime": renew.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            "renewTime": renew.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
        }
    }))
    .expect("lease");
    sim.clear_audit();
    let s: ReconcileSummary = run(client(&sim), &opts(&dir, Until::Once, false))
        .await
        .expect("runs");
    assert_eq!(
        (s.outcome.as_str(), s.exit_code),
        ("lease-held", exit::LEASE_HELD),
        "{}",
        render_text(&s)
    );
    let until = (renew + chrono::Duration::seconds(137)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let reason = s.reason.clone().unwrap_or_default();
    assert!(
        reason.starts_with(&format!(
            "the CVO Lease openshift-cluster-version/version is held by other-cvo until {until} (in "
        )),
        "{reason}"
    );
    assert!(reason.ends_with("s); nothing was applied"), "{reason}");
    assert_eq!(s.passes, 0);
    assert_eq!(sim.audit().writes(), 0, "{:?}", sim.audit().entries);
    let lease = sim
        .get(
            "coordination.k8s.io",
            "leases",
            "openshift-cluster-version",
            "version",
        )
        .expect("lease");
    assert_eq!(lease["spec"]["holderIdentity"], "other-cvo");
    assert!(!render_text(&s).contains("would change"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_says_what_the_run_was_waiting_for() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("p");
    write_payload(&dir, "1.0.0");
    // A kind the server does not serve: its apply is retried (1 s, 2 s, 4 s while
    // initializing), so the first pass runs for 7 s.
    std::fs::write(
        dir.join("release-manifests/0000_20_edges_widget.yaml"),
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n",
    )
    .expect("write");
    let sim = Simulator::new();
    let mut o = opts(&dir, Until::Complete, false);
    o.timeout = Some(Duration::from_millis(1500));
    o.timings = EngineTimings::scaled(1.0);
    let started = std::time::Instant::now();
    let s = run(client(&sim), &o).await.expect("runs");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        (s.outcome.as_str(), s.exit_code),
        ("timeout", exit::TIMEOUT),
        "{}",
        render_text(&s)
    );
    let reason = s.reason.clone().unwrap_or_default();
    assert!(
        reason.starts_with("timed out after 1.5s waiting for pass 1 to finish: "),
        "{reason}"
    );
    assert!(reason.ends_with(" 2/4 tasks done"), "{reason}");
    // The Lease was released on the way out.
    let lease = sim
        .get(
            "coordination.k8s.io",
            "leases",
            "openshift-cluster-version",
            "version",
        )
        .expect("lease");
    assert!(
        lease["spec"]["holderIdentity"].as_str().is_none_or(str::is_empty),
        "{lease}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_in_watch_only_mode_waits_for_no_lease() {
    // Watch-only has no lease to wait for: its first pass runs at once.
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("p");
    write_payload(&dir, "1.0.0");
    let sim = Simulator::new();
    let mut cfg = EngineConfig::local(dir.clone(), None).expect("config");
    cfg.mode = EngineMode::WatchOnly;
    cfg.timings = EngineTimings::scaled(0.05);
    let mut h = Engine::spawn(client(&sim), cfg);
    let limit = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let s = h.status.borrow_and_update().clone();
        if s.counters.passes >= 1 && !s.running {
            // The namespace and the ConfigMap; a ClusterOperator is never created by a pass.
            let names: Vec<&str> = s.drift.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(names, [NS, "settings"], "{:?}", s.drift);
            break;
        }
        assert!(tokio::time::Instant::now() < limit, "no pass: {s:#?}");
        let _ = tokio::time::timeout_at(limit, h.status.changed()).await;
    }
    h.shutdown().await;
    assert_eq!(sim.audit().writes(), 0);
}
