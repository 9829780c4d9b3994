//! Scenario tests of the reconcile engine against the in-process simulator, through the real
//! `kube::Client`, with timings scaled down (`EngineTimings::scaled`). Payloads are generated in
//! temporary directories. A test task plays the cluster operators (sets ClusterOperator status
//! directly in the simulator store, unaudited).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use cvo::{
    openshift::{ClusterVersion, UpdateState, condition::find},
    reconcile::{
        Engine, EngineConfig, EngineTimings,
        api::{Drift, EngineHandle, EngineMode, LocalPayloads, StatusSnapshot},
    },
    sim::Simulator,
};
use serde_json::{Value, json};

mod common;
use common::Unmet;

const IMAGE_1: &str = "example.com/release@sha256:1111";
const IMAGE_2: &str = "example.com/release@sha256:2222";
const NS: &str = "openshift-test";

fn timings() -> EngineTimings {
    EngineTimings::scaled(0.005)
}

/// Writes a release payload for `version` into `dir`: a namespace, two ConfigMaps, the
/// ClusterOperator `op` expecting `operator` = `version`, plus `extra` manifests.
fn write_payload(dir: &Path, version: &str, extra: &[(&str, String)]) {
    let rm = dir.join("release-manifests");
    std::fs::create_dir_all(dir.join("manifests")).expect("mkdir manifests");
    std::fs::create_dir_all(&rm).expect("mkdir release-manifests");
    std::fs::write(
        rm.join("release-metadata"),
        json!({"kind": "cincinnati-metadata-v0", "version": version, "previous": [], "metadata": {}})
            .to_string(),
    )
    .expect("write metadata");
    std::fs::write(
        rm.join("image-references"),
        format!("kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata:\n  name: {version}\n"),
    )
    .expect("write image-references");
    let ann = "  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n";
    let mut files: Vec<(&str, String)> = vec![
        (
            "0000_00_test_namespace.yaml",
            format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {NS}\n{ann}"),
        ),
        (
            "0000_10_alpha_configmap.yaml",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alpha\n  namespace: {NS}\n{ann}data:\n  version: \"{version}\"\n"
            ),
        ),
        (
            "0000_20_beta_configmap.yaml",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: beta\n  namespace: {NS}\n{ann}data:\n  fixed: \"yes\"\n"
            ),
        ),
        (
            "0000_30_op_clusteroperator.yaml",
            format!(
                "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: op\n{ann}status:\n  versions:\n  - name: operator\n    version: \"{version}\"\n"
            ),
        ),
    ];
    files.extend(extra.iter().cloned());
    for (name, body) in files {
        std::fs::write(rm.join(name), body).expect("write manifest");
    }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    v1: PathBuf,
    v2: PathBuf,
}

fn payloads(extra1: &[(&str, String)], extra2: &[(&str, String)]) -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let v1 = tmp.path().join("v1");
    let v2 = tmp.path().join("v2");
    write_payload(&v1, "1.0.0", extra1);
    write_payload(&v2, "1.1.0", extra2);
    Fixture { _tmp: tmp, v1, v2 }
}

fn config(f: &Fixture, mode: EngineMode) -> EngineConfig {
    EngineConfig {
        mode,
        payloads: Arc::new(LocalPayloads {
            own_image: IMAGE_1.into(),
            own_dir: f.v1.clone(),
            others: BTreeMap::from([(IMAGE_2.to_string(), f.v2.clone())]),
        }),
        create_cluster_version: true,
        cluster_version_name: "version".into(),
        timings: timings(),
        load_options: Default::default(),
        applier: None,
        lease: None,
        update_graph: None,
    }
}

/// How the simulated operator `op` behaves.
#[derive(Clone, Copy, PartialEq)]
enum OpBehaviour {
    /// Reports the version CV status.desired asks for, after a delay.
    Healthy,
    /// Never reports a new version.
    Stuck,
    /// Reports Degraded=True (still Available).
    Degraded,
    /// Reports Available=False.
    Unavailable,
}

/// Plays the operator `op`: once the ClusterOperator exists, sets its status (unaudited) per
/// `behaviour`, reporting `status.desired.version` of the ClusterVersion after `delay`.
fn play_operator(sim: &Simulator, behaviour: Arc<std::sync::Mutex<OpBehaviour>>, delay: Duration) {
    let sim = sim.clone();
    tokio::spawn(async move {
        let mut seen: Option<(String, tokio::time::Instant)> = None;
        loop {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let Some(mut co) = sim.get("config.openshift.io", "clusteroperators", "", "op") else {
                continue;
            };
            let desired = sim
                .get("config.openshift.io", "clusterversions", "", "version")
                .and_then(|cv| {
                    cv.pointer("/status/desired/version")
                        .and_then(Value::as_str)
                        .map(String::from)
                })
                .unwrap_or_else(|| "1.0.0".into());
            let now = tokio::time::Instant::now();
            match &seen {
                Some((v, _)) if *v == desired => {}
                _ => seen = Some((desired.clone(), now)),
            }
            let b = *behaviour.lock().expect("lock");
            let current = co
                .pointer("/status/versions/0/version")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let reported = match (&seen, b) {
                (_, OpBehaviour::Stuck) if !current.is_empty() => current.clone(),
                (Some((v, since)), _) if now.duration_since(*since) >= delay => v.clone(),
                _ if current.is_empty() => "0.0.0".into(),
                _ => current.clone(),
            };
            let (avail, degraded) = match b {
                OpBehaviour::Degraded => ("True", "True"),
                OpBehaviour::Unavailable => ("False", "False"),
                _ => ("True", "False"),
            };
            let status = json!({
                "conditions": [
                    {"type": "Available", "status": avail, "lastTransitionTime": "2026-01-01T00:00:00Z",
                     "reason": if avail == "True" { "AsExpected" } else { "Down" }, "message": if avail == "True" { "" } else { "op is down" }},
                    {"type": "Degraded", "status": degraded, "lastTransitionTime": "2026-01-01T00:00:00Z",
                     "reason": if degraded == "True" { "Broken" } else { "AsExpected" }, "message": if degraded == "True" { "op is broken" } else { "" }},
                    {"type": "Progressing", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z"}
                ],
                "versions": [{"name": "operator", "version": reported}]
            });
            if co.get("status") != Some(&status) {
                co["status"] = status;
                let _ = sim.insert(co);
            }
        }
    });
}

fn healthy() -> Arc<std::sync::Mutex<OpBehaviour>> {
    Arc::new(std::sync::Mutex::new(OpBehaviour::Healthy))
}

async fn wait_snapshot(
    h: &mut EngineHandle,
    what: &str,
    secs: u64,
    pred: impl Fn(&StatusSnapshot) -> bool,
) -> Arc<StatusSnapshot> {
    match common::watch_until(&mut h.status, Duration::from_secs(secs), |s| pred(s)).await {
        Ok(v) => v,
        Err(Unmet::Closed(_)) => panic!("engine stopped while waiting for {what}"),
        Err(Unmet::TimedOut(cur)) => panic!(
            "timed out waiting for {what}; state {:?} done {}/{} failure {:?} error {:?} cv {:#?}",
            cur.state, cur.done, cur.total, cur.failure, cur.last_error, cur.cluster_version
        ),
    }
}

fn cv_of(sim: &Simulator) -> ClusterVersion {
    let v = sim
        .get("config.openshift.io", "clusterversions", "", "version")
        .expect("ClusterVersion exists");
    serde_json::from_value(v).expect("ClusterVersion decodes")
}

fn cond(cv: &ClusterVersion, t: &str) -> (String, String, String) {
    let c = find(&cv.status.conditions, t).unwrap_or_else(|| panic!("condition {t} missing"));
    (
        c.status.as_str().to_string(),
        c.reason().to_string(),
        c.message().to_string(),
    )
}

fn client(sim: &Simulator) -> kube::Client {
    kube::Client::new(sim.clone(), "default")
}

async fn install(sim: &Simulator, f: &Fixture) -> EngineHandle {
    play_operator(sim, healthy(), Duration::from_millis(30));
    let mut h = Engine::spawn(client(sim), config(f, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_install_reaches_completed() {
    let f = payloads(&[], &[]);
    let sim = Simulator::new();
    let started = std::time::Instant::now();
    let h = install(&sim, &f).await;
    let cv = cv_of(&sim);
    assert_eq!(cv.status.history.len(), 1, "{:#?}", cv.status.history);
    let h0 = &cv.status.history[0];
    assert_eq!(
        (h0.state, h0.version.as_str(), h0.image.as_str()),
        (UpdateState::Completed, "1.0.0", IMAGE_1)
    );
    assert!(h0.completion_time.is_some());
    assert_eq!(cv.status.desired.version, "1.0.0");
    assert_eq!(
        cond(&cv, "Available"),
        ("True".into(), String::new(), "Done applying 1.0.0".into())
    );
    assert_eq!(cond(&cv, "Failing").0, "False");
    assert_eq!(
        cond(&cv, "Progressing"),
        ("False".into(), String::new(), "Cluster version is 1.0.0".into())
    );
    assert_eq!(cond(&cv, "ReleaseAccepted").1, "PayloadLoaded");
    assert_eq!(
        cond(&cv, "ReleaseAccepted").2,
        format!(
            "Payload loaded version=\"1.0.0\" image=\"{IMAGE_1}\" architecture=\"{}\"",
            std::env::consts::ARCH
                .replace("x86_64", "amd64")
                .replace("aarch64", "arm64")
        )
    );
    let p = cvo::reconcile::payload::load_update(&f.v1, &Default::default()).expect("payload loads");
    assert_eq!(cv.status.version_hash, p.manifest_hash);
    assert!(cv.spec.cluster_id.as_deref().is_some_and(|id| id.len() == 36));
    let alpha = sim.get("", "configmaps", NS, "alpha").expect("alpha applied");
    assert_eq!(alpha["data"]["version"], "1.0.0");
    assert!(sim.get("", "namespaces", "", NS).is_some());
    let snap = h.status.borrow().clone();
    assert_eq!((snap.done, snap.total), (4, 4));
    assert!(
        snap.counters.requests.get("create").copied().unwrap_or(0) >= 4,
        "{:?}",
        snap.counters.requests
    );
    eprintln!(
        "install: {:?}, requests {:?}",
        started.elapsed(),
        snap.counters.requests
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converged_cluster_second_pass_makes_zero_writes() {
    let f = payloads(&[], &[]);
    let sim = Simulator::new();
    let mut h = install(&sim, &f).await;
    // Let the status settle, then count two more full passes.
    let p0 = wait_snapshot(&mut h, "a reconciling pass", 10, |s| s.completed >= 2)
        .await
        .counters
        .passes;
    sim.clear_audit();
    let snap = wait_snapshot(&mut h, "two more passes", 10, |s| {
        s.counters.passes >= p0 + 2 && !s.running
    })
    .await;
    let audit = sim.audit();
    assert_eq!(
        audit.writes(),
        0,
        "writes on a converged cluster: {:?}",
        audit
            .entries
            .iter()
            .filter(|e| e.verb != "get")
            .collect::<Vec<_>>()
    );
    assert!(
        audit.count("get") >= 8,
        "each pass GETs every manifest: {:?}",
        audit.counts()
    );
    assert_eq!(snap.state, cvo::reconcile::api::EngineState::Reconciling);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_only_reports_drift_and_writes_nothing() {
    let f = payloads(&[], &[]);
    let sim = Simulator::new();
    sim.insert(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS,
        "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"}}}),
    )
    .expect("seed ns");
    sim.insert(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "alpha", "namespace": NS, "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"}},
        "data": {"version": "0.9.0"}}))
        .expect("seed alpha");
    play_operator(&sim, healthy(), Duration::ZERO);
    sim.insert(json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator", "metadata": {"name": "op"}})).expect("seed co");
    let mut h = Engine::spawn(client(&sim), config(&f, EngineMode::WatchOnly));
    let snap = wait_snapshot(&mut h, "a dry-run pass", 10, |s| {
        s.counters.passes >= 1 && !s.running
    })
    .await;
    let by_name: BTreeMap<&str, &Drift> = snap.drift.iter().map(|d| (d.name.as_str(), &d.drift)).collect();
    match by_name.get("alpha") {
        Some(Drift::Update { diff }) => {
            assert_eq!(diff.len(), 1, "{diff:?}");
            assert_eq!(diff[0].path, ".data.version");
            assert_eq!(diff[0].from, Some(json!("0.9.0")));
            assert_eq!(diff[0].to, Some(json!("1.0.0")));
        }
        other => panic!("alpha drift: {other:?}"),
    }
    assert!(
        matches!(by_name.get("beta"), Some(Drift::Create { .. })),
        "{by_name:?}"
    );
    assert!(!by_name.contains_key(NS), "namespace exists, no drift");
    assert_eq!(sim.audit().writes(), 0, "{:?}", sim.audit().counts());
    assert!(sim.get("", "configmaps", NS, "beta").is_none());
    assert!(
        sim.get("config.openshift.io", "clusterversions", "", "version")
            .is_none(),
        "watch-only creates no ClusterVersion"
    );
    assert_eq!(snap.mode, EngineMode::WatchOnly);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_only_client_refuses_writes() {
    let f = payloads(&[], &[]);
    let sim = Simulator::new();
    let mut h = Engine::spawn(client(&sim), config(&f, EngineMode::WatchOnly));
    h.commands
        .send(cvo::reconcile::api::Command::SetChannel("stable-1".into()))
        .await
        .expect("send");
    let snap = wait_snapshot(&mut h, "command outcome", 10, |s| s.last_command.is_some()).await;
    let out = snap.last_command.clone().expect("outcome");
    assert_eq!(out.result, Err("refused: the engine is watch-only".to_string()));
    assert_eq!(sim.audit().writes(), 0);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifest_rejected_by_the_server_fails_with_its_reason() {
    let bad = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n  namespace: {NS}\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\ndata: {{}}\n"
    );
    let f = payloads(&[("0000_25_bad_configmap.yaml", bad)], &[]);
    let sim = Simulator::new();
    play_operator(&sim, healthy(), Duration::ZERO);
    let mut h = Engine::spawn(client(&sim), config(&f, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "Failing", 20, |s| s.failing().is_some()).await;
    let cv = cv_of(&sim);
    let (st, reason, msg) = cond(&cv, "Failing");
    assert_eq!(
        (st.as_str(), reason.as_str()),
        ("True", "UpdatePayloadResourceInvalid")
    );
    assert_eq!(
        msg,
        format!(
            "Could not update configmap \"{NS}/Bad_Name\" (4 of 5): the object is invalid, possibly due to local cluster configuration"
        )
    );
    assert_eq!(
        cond(&cv, "Progressing").2,
        "Unable to apply 1.0.0: some cluster configuration is invalid"
    );
    assert_eq!(cv.status.history[0].state, UpdateState::Partial);
    h.shutdown().await;
}

async fn request_update(sim: &Simulator) {
    let api: kube::Api<ClusterVersion> = kube::Api::all(client(sim));
    api.patch(
        "version",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"spec": {"desiredUpdate": {"version": "1.1.0", "image": IMAGE_2}}})),
    )
    .await
    .expect("patch desiredUpdate");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_1_to_2_waits_for_the_operator_then_completes() {
    let f = payloads(&[], &[]);
    let sim = Simulator::new();
    let behaviour = healthy();
    play_operator(&sim, behaviour.clone(), Duration::from_millis(400));
    let mut h = Engine::spawn(client(&sim), config(&f, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    request_update(&sim).await;
    // While the operator has not reported 1.1.0, Progressing is True and names the target.
    let s = wait_snapshot(&mut h, "updating", 10, |s| {
        s.state == cvo::reconcile::api::EngineState::Updating
            && s.cluster_version.as_ref().is_some_and(|c| {
                find(&c.conditions, "Progressing")
                    .is_some_and(|p| p.is_true() && p.message().starts_with("Working towards 1.1.0"))
            })
    })
    .await;
    assert_eq!(s.desired.as_ref().map(|d| d.image.as_str()), Some(IMAGE_2));
    wait_snapshot(&mut h, "update Completed", 20, StatusSnapshot::is_completed).await;
    let cv = cv_of(&sim);
    let hist: Vec<_> = cv
        .status
        .history
        .iter()
        .map(|h| (h.state, h.version.as_str()))
        .collect();
    assert_eq!(
        hist,
        vec![
            (UpdateState::Completed, "1.1.0"),
            (UpdateState::Completed, "1.0.0")
        ]
    );
    assert_eq!(cond(&cv, "Progressing").2, "Cluster version is 1.1.0");
    assert_eq!(
        sim.get("", "configmaps", NS, "alpha").expect("alpha")["data"]["version"],
        "1.1.0"
    );
    // The event log tells the same story, in order.
    let s = h.status.borrow().clone();
    let texts: Vec<&str> = s.events.iter().map(|e| e.text.as_str()).collect();
    let mut from = 0;
    for want in [
        "desired update accepted: 1.0.0",
        "history: 1.0.0 Completed",
        "state Reconciling → Updating",
        "desired update accepted: 1.1.0",
        "ClusterVersion Progressing=True: Working towards 1.1.0",
        "history: 1.1.0 Partial",
        "history: 1.1.0 Completed",
    ] {
        let at = texts[from..]
            .iter()
            .position(|t| t.starts_with(want))
            .unwrap_or_else(|| panic!("no {want:?} after event {from} in {texts:#?}"));
        from += at + 1;
    }
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_unavailable_mid_update_fails_naming_it() {
    let f = payloads(&[], &[]);
    let sim = Simulator::new();
    let behaviour = healthy();
    play_operator(&sim, behaviour.clone(), Duration::from_millis(30));
    let mut h = Engine::spawn(client(&sim), config(&f, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    *behaviour.lock().expect("lock") = OpBehaviour::Unavailable;
    request_update(&sim).await;
    wait_snapshot(&mut h, "Failing", 20, |s| s.failing().is_some()).await;
    let cv = cv_of(&sim);
    assert_eq!(
        cond(&cv, "Failing"),
        (
            "True".into(),
            "ClusterOperatorNotAvailable".into(),
            "Cluster operator op is not available".into()
        )
    );
    assert_eq!(
        cond(&cv, "Progressing").2,
        "Unable to apply 1.1.0: the cluster operator op is not available"
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_degraded_mid_update_is_named() {
    let f = payloads(&[], &[]);
    let sim = Simulator::new();
    let behaviour = healthy();
    play_operator(&sim, behaviour.clone(), Duration::from_millis(30));
    let mut h = Engine::spawn(client(&sim), config(&f, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    *behaviour.lock().expect("lock") = OpBehaviour::Degraded;
    request_update(&sim).await;
    let s = wait_snapshot(&mut h, "degraded reported", 20, |s| {
        s.failure
            .as_ref()
            .is_some_and(|f| f.reason == "ClusterOperatorDegraded")
    })
    .await;
    assert_eq!(
        s.failure.as_ref().map(|f| f.message.as_str()),
        Some("Cluster operator op is degraded")
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_mid_update_then_restart_resumes_without_duplicate_history() {
    let f = payloads(&[], &[]);
    let sim = Simulator::new();
    let behaviour = healthy();
    play_operator(&sim, behaviour.clone(), Duration::from_millis(30));
    let mut h = Engine::spawn(client(&sim), config(&f, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    *behaviour.lock().expect("lock") = OpBehaviour::Stuck;
    request_update(&sim).await;
    wait_snapshot(&mut h, "update in progress", 10, |s| {
        s.cluster_version
            .as_ref()
            .is_some_and(|c| c.history.first().is_some_and(|e| e.version == "1.1.0"))
    })
    .await;
    h.abort().await;
    let before = cv_of(&sim).status.history;
    assert_eq!(before.len(), 2);
    assert_eq!(
        (before[0].state, before[0].version.as_str()),
        (UpdateState::Partial, "1.1.0")
    );
    *behaviour.lock().expect("lock") = OpBehaviour::Healthy;
    let mut h2 = Engine::spawn(client(&sim), config(&f, EngineMode::ActiveApply));
    wait_snapshot(
        &mut h2,
        "resumed update Completed",
        20,
        StatusSnapshot::is_completed,
    )
    .await;
    let after = cv_of(&sim).status.history;
    let hist: Vec<_> = after.iter().map(|h| (h.state, h.version.as_str())).collect();
    assert_eq!(
        hist,
        vec![
            (UpdateState::Completed, "1.1.0"),
            (UpdateState::Completed, "1.0.0")
        ]
    );
    assert_eq!(
        after[0].started_time, before[0].started_time,
        "the same history entry completed"
    );
    h2.shutdown().await;
}

fn cli_opts(
    dir: &Path,
    until: cvo::cli::reconcile::Until,
    dry_run: bool,
) -> cvo::cli::reconcile::ReconcileOptions {
    cvo::cli::reconcile::ReconcileOptions {
        payload: dir.to_path_buf(),
        release_image: None,
        dry_run,
        until,
        timeout: Some(Duration::from_secs(60)),
        timings: EngineTimings::scaled(0.05),
        lease: true,
    }
}

/// A payload of `n` ConfigMaps over 10 run levels and 5 components, no ClusterOperator.
fn big_payload(dir: &Path, n: usize) {
    write_payload(dir, "1.0.0", &[]);
    let rm = dir.join("release-manifests");
    std::fs::remove_file(rm.join("0000_30_op_clusteroperator.yaml")).expect("rm co");
    for i in 0..n {
        let body = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: {NS}\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\ndata:\n  index: \"{i}\"\n"
        );
        std::fs::write(
            rm.join(format!("0000_{:02}_comp{}_cm{i:04}.yaml", 40 + i % 10, i % 5)),
            body,
        )
        .expect("write");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_until_complete_then_once_makes_zero_writes_then_dry_run_shows_drift() {
    use cvo::cli::reconcile::{Until, render_text, run};
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("big");
    big_payload(&dir, 1000);
    let sim = Simulator::new();
    let s = run(client(&sim), &cli_opts(&dir, Until::Complete, false))
        .await
        .expect("runs");
    assert_eq!(
        (s.outcome.as_str(), s.exit_code),
        ("complete", 0),
        "{}",
        render_text(&s)
    );
    assert_eq!((s.done, s.total), (1003, 1003));
    assert!(
        s.requests.get("create").copied().unwrap_or(0) >= 1003,
        "{:?}",
        s.requests
    );
    eprintln!(
        "until-complete, 1003 manifests: {:.3}s {:?}",
        s.seconds, s.requests
    );
    let image = s.image.clone();
    assert!(image.starts_with("file:///"), "{image}");

    sim.clear_audit();
    let before = sim.get("config.openshift.io", "clusterversions", "", "version");
    let s = run(client(&sim), &cli_opts(&dir, Until::Once, false))
        .await
        .expect("runs");
    let after = sim.get("config.openshift.io", "clusterversions", "", "version");
    assert_eq!(before, after, "a converged pass leaves the ClusterVersion alone");
    assert_eq!(s.exit_code, 0, "{}", render_text(&s));
    // The only writes are the Lease's: acquire and release.
    let writes: Vec<_> = sim
        .audit()
        .entries
        .into_iter()
        .filter(|e| cvo::reconcile::runtime::client::is_write_verb(e.verb))
        .collect();
    assert!(
        writes.len() <= 2 && writes.iter().all(|e| e.path.contains("/leases/")),
        "converged pass writes: {writes:?}"
    );
    assert_eq!(s.status_writes, 0);
    assert!(
        s.writes as usize <= writes.len(),
        "the summary is taken before the lease is released"
    );
    assert_eq!(s.image, image, "the pseudo pull spec is stable");
    eprintln!("converged --once: {:.3}s {:?}", s.seconds, s.requests);

    // Drift: change one ConfigMap, delete another; dry-run reports both and writes nothing.
    let mut cm = sim.get("", "configmaps", NS, "cm-7").expect("cm-7");
    cm["data"]["index"] = json!("changed");
    sim.insert(cm).expect("edit");
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::namespaced(client(&sim), NS);
    api.delete("cm-8", &Default::default())
        .await
        .expect("delete cm-8");
    sim.clear_audit();
    let s = run(client(&sim), &cli_opts(&dir, Until::Once, true))
        .await
        .expect("runs");
    assert_eq!(sim.audit().writes(), 0);
    assert_eq!(s.drift.len(), 2, "{:?}", s.drift);
    let text = render_text(&s);
    assert!(
        text.contains("-.data.index: \"changed\"\n+.data.index: \"7\""),
        "{text}"
    );
    assert!(
        text.contains(&format!("--- ConfigMap {NS}/cm-8 (absent)")),
        "{text}"
    );
    assert!(
        text.contains("2 objects would change (watch-only: nothing was written)"),
        "{text}"
    );
}

fn lease(identity: &str) -> cvo::reconcile::runtime::leader::LeaseConfig {
    let t = cvo::reconcile::runtime::leader::LeaseTimings::new(
        Duration::from_secs(1),
        Duration::from_millis(800),
        Duration::from_millis(100),
    )
    .expect("valid timings");
    cvo::reconcile::runtime::leader::LeaseConfig::cvo(identity, t)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_engines_one_lease() {
    let f = payloads(&[], &[]);
    let sim = Simulator::new();
    play_operator(&sim, healthy(), Duration::from_millis(30));
    let mut a_cfg = config(&f, EngineMode::ActiveApply);
    a_cfg.lease = Some(lease("engine-a"));
    let mut a = Engine::spawn(client(&sim), a_cfg);
    wait_snapshot(&mut a, "A leads and completes", 20, |s| {
        s.leader && s.is_completed()
    })
    .await;
    let mut b_cfg = config(&f, EngineMode::ActiveApply);
    b_cfg.lease = Some(lease("engine-b"));
    let mut b = Engine::spawn(client(&sim), b_cfg);
    let s = wait_snapshot(&mut b, "B waits naming A", 10, |s| {
        s.state == cvo::reconcile::api::EngineState::WaitingForLease
            && s.lease_holder.as_deref() == Some("engine-a")
    })
    .await;
    assert!(!s.leader);
    // B keeps waiting through several retry periods and writes nothing but its own campaign.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let s = b.status.borrow().clone();
    assert!(!s.leader);
    assert_eq!((s.counters.apply_writes, s.counters.status_writes), (0, 0));
    assert_eq!(
        s.counters.refused_writes, 0,
        "dry-run passes send no writes to refuse"
    );
    // A steps down (releases the lease); B takes over at once.
    a.shutdown().await;
    let s = wait_snapshot(&mut b, "B leads", 10, |s| s.leader).await;
    assert_eq!(s.lease_holder.as_deref(), Some("engine-b"));
    let lease = sim
        .get(
            "coordination.k8s.io",
            "leases",
            "openshift-cluster-version",
            "version",
        )
        .expect("lease");
    assert_eq!(lease["spec"]["holderIdentity"], "engine-b");
    b.shutdown().await;
}

/// Upstream pkg/cvo/cvo_scenarios_test.go TestCVO_UpgradePreconditionFailing in spirit: a blocking
/// precondition (a major-version hop, ClusterVersionGiantHop) keeps the old work and reports
/// ReleaseAccepted False `PreconditionChecks`; forcing goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_precondition_rejects_the_release_until_forced() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let v1 = tmp.path().join("v1");
    let v2 = tmp.path().join("v2");
    write_payload(&v1, "1.0.0", &[]);
    write_payload(&v2, "2.0.0", &[]);
    let f = Fixture { _tmp: tmp, v1, v2 };
    let sim = Simulator::new();
    play_operator(&sim, healthy(), Duration::from_millis(30));
    let mut h = Engine::spawn(client(&sim), config(&f, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    let api: kube::Api<ClusterVersion> = kube::Api::all(client(&sim));
    let patch = |force: bool| json!({"spec": {"desiredUpdate": {"version": "2.0.0", "image": IMAGE_2, "force": force}}});
    api.patch(
        "version",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(patch(false)),
    )
    .await
    .expect("patch");
    wait_snapshot(&mut h, "ReleaseAccepted False", 10, |s| {
        s.cluster_version
            .as_ref()
            .is_some_and(|c| find(&c.conditions, "ReleaseAccepted").is_some_and(|r| r.is_false()))
    })
    .await;
    let cv = cv_of(&sim);
    let (st, reason, msg) = cond(&cv, "ReleaseAccepted");
    assert_eq!((st.as_str(), reason.as_str()), ("False", "PreconditionChecks"));
    assert_eq!(
        msg,
        format!(
            "Preconditions failed for payload loaded version=\"2.0.0\" image=\"{IMAGE_2}\": Multiple precondition checks failed:\n\
             * Precondition \"ClusterVersionGiantHop\" failed because of \"MajorVersionUpdate\": 2.0.0 has a larger major version than the current target 1.0.0 (2 > 1), and only updates within the current major version are supported.\n\
             * Precondition \"ClusterVersionRecommendedUpdate\" failed because of \"NoChannel\": Configured channel is unset, so the recommended status of updating from 1.0.0 to 2.0.0 is unknown."
        )
    );
    assert_eq!(cv.status.desired.version, "1.0.0", "the old work is kept");
    api.patch(
        "version",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(patch(true)),
    )
    .await
    .expect("patch");
    wait_snapshot(&mut h, "forced update Completed", 20, |s| {
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == "2.0.0")
    })
    .await;
    let cv = cv_of(&sim);
    assert_eq!(cond(&cv, "ReleaseAccepted").1, "PayloadLoaded");
    assert!(
        cv.status.history[0]
            .accepted_risks
            .as_deref()
            .is_some_and(|r| r.starts_with("Forced through blocking failures: ")),
        "{:?}",
        cv.status.history[0].accepted_risks
    );
    h.shutdown().await;
}
