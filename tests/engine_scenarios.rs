//! Scenario tests of the reconcile engine through the real `kube::Client`, with timings scaled
//! down (`EngineTimings::scaled`): against the in-process simulator, or against the real
//! kube-apiserver of `CVO_TEST_KUBECONFIG` (`tests/common/cluster.rs`: unique object names per
//! test, CRDs installed, clean-up). Payloads are generated in temporary directories. A test
//! task plays the cluster operators (sets ClusterOperator status: straight into the simulator
//! store, unaudited, or through `/status` on the real server). Request-count assertions use the
//! engine's own counters on both servers, and the simulator's audit log as well on the
//! simulator.

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
};
use serde_json::{Value, json};

#[path = "common/cluster.rs"]
mod cluster;
mod common;
use cluster::{CO, CONFIGMAP, CRD, CV, Handle, LEASE, LEASE_NS, NAMESPACE, TestCluster};
use common::Unmet;

const IMAGE_1: &str = "example.com/release@sha256:1111";
const IMAGE_2: &str = "example.com/release@sha256:2222";
const NS: &str = "openshift-test";

fn timings() -> EngineTimings {
    EngineTimings::scaled(0.005)
}

/// The names a test's payload uses: its namespace and ClusterOperator (unique per test on the
/// real server, [`Handle::name`]).
#[derive(Clone, Debug)]
struct Names {
    ns: String,
    op: String,
    cv: String,
}

impl Names {
    fn of(h: &Handle) -> Self {
        Self {
            ns: h.name(NS),
            op: h.name("op"),
            cv: h.name("version"),
        }
    }
}

/// The cluster of a test, with its objects cleaned up at the end on the real server.
async fn cluster() -> (TestCluster, Names) {
    let mut t = TestCluster::new().await;
    let n = Names::of(&t);
    t.clean_up(CV, "", &n.cv);
    t.clean_up(CO, "", &n.op);
    t.clean_up(NAMESPACE, "", &n.ns);
    t.clean_up(LEASE, LEASE_NS, &n.cv);
    (t, n)
}

/// Writes a release payload for `version` into `dir`: a namespace, two ConfigMaps, the
/// ClusterOperator `op` expecting `operator` = `version`, plus `extra` manifests.
fn write_payload(dir: &Path, version: &str, n: &Names, extra: &[(&str, String)]) {
    let (ns, op) = (&n.ns, &n.op);
    let p = common::PayloadDir::new(dir, version);
    let ann = common::ANN;
    let mut files: Vec<(&str, String)> = vec![
        (
            "0000_00_test_namespace.yaml",
            format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n{ann}"),
        ),
        (
            "0000_10_alpha_configmap.yaml",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alpha\n  namespace: {ns}\n{ann}data:\n  version: \"{version}\"\n"
            ),
        ),
        (
            "0000_20_beta_configmap.yaml",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: beta\n  namespace: {ns}\n{ann}data:\n  fixed: \"yes\"\n"
            ),
        ),
        (
            "0000_30_op_clusteroperator.yaml",
            format!(
                "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: {op}\n{ann}status:\n  versions:\n  - name: operator\n    version: \"{version}\"\n"
            ),
        ),
    ];
    files.extend(extra.iter().cloned());
    p.files(&files);
}

struct Fixture {
    _tmp: tempfile::TempDir,
    v1: PathBuf,
    v2: PathBuf,
}

fn payloads(n: &Names, extra1: &[(&str, String)], extra2: &[(&str, String)]) -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let v1 = tmp.path().join("v1");
    let v2 = tmp.path().join("v2");
    write_payload(&v1, "1.0.0", n, extra1);
    write_payload(&v2, "1.1.0", n, extra2);
    Fixture { _tmp: tmp, v1, v2 }
}

fn config(f: &Fixture, n: &Names, mode: EngineMode) -> EngineConfig {
    EngineConfig {
        mode,
        cluster_version_name: n.cv.clone(),
        timings: timings(),
        ..EngineConfig::new(Arc::new(LocalPayloads {
            own_image: IMAGE_1.into(),
            own_dir: f.v1.clone(),
            others: BTreeMap::from([(IMAGE_2.to_string(), f.v2.clone())]),
        }))
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

/// Plays the operator `op`: once the ClusterOperator exists, sets its status per `behaviour`
/// ([`Handle::put_status`]: unaudited on the simulator), reporting `status.desired.version` of
/// the ClusterVersion after `delay`.
fn play_operator(h: &Handle, behaviour: Arc<std::sync::Mutex<OpBehaviour>>, delay: Duration) {
    let h = h.clone();
    let n = Names::of(&h);
    let every = Duration::from_millis(if h.is_real() { 25 } else { 10 });
    tokio::spawn(async move {
        let mut seen: Option<(String, tokio::time::Instant)> = None;
        loop {
            tokio::time::sleep(every).await;
            let Some(mut co) = h.get(CO, "", &n.op).await else {
                continue;
            };
            let desired = h
                .get(CV, "", &n.cv)
                .await
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
                h.put_status(CO, co).await;
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

async fn cv_of(h: &Handle) -> ClusterVersion {
    let v = h
        .get(CV, "", &h.name("version"))
        .await
        .expect("ClusterVersion exists");
    serde_json::from_value(v).expect("ClusterVersion decodes")
}

/// Write requests among the engine's requests by verb.
fn writes_of(requests: &BTreeMap<String, u64>) -> u64 {
    requests
        .iter()
        .filter(|(v, _)| cvo::reconcile::runtime::client::is_write_verb(v))
        .map(|(_, n)| n)
        .sum()
}

fn cond(cv: &ClusterVersion, t: &str) -> (String, String, String) {
    let c = find(&cv.status.conditions, t).unwrap_or_else(|| panic!("condition {t} missing"));
    (
        c.status.as_str().to_string(),
        c.reason().to_string(),
        c.message().to_string(),
    )
}

async fn install(t: &Handle, f: &Fixture) -> EngineHandle {
    play_operator(t, healthy(), Duration::from_millis(30));
    let mut h = Engine::spawn(t.client(), config(f, &Names::of(t), EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_install_reaches_completed() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let started = std::time::Instant::now();
    let h = install(&t, &f).await;
    let cv = cv_of(&t).await;
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
    let alpha = t.get(CONFIGMAP, &n.ns, "alpha").await.expect("alpha applied");
    assert_eq!(alpha["data"]["version"], "1.0.0");
    assert!(t.get(NAMESPACE, "", &n.ns).await.is_some());
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
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let mut h = install(&t, &f).await;
    // Let the status settle, then count two more full passes.
    let c0 = wait_snapshot(&mut h, "a reconciling pass", 10, |s| {
        s.completed >= 2 && !s.running
    })
    .await
    .counters
    .clone();
    let p0 = c0.passes;
    if let Some(sim) = t.sim() {
        sim.clear_audit();
    }
    let snap = wait_snapshot(&mut h, "two more passes", 10, |s| {
        s.counters.passes >= p0 + 2 && !s.running
    })
    .await;
    // The engine's own count, on both servers.
    assert_eq!(
        writes_of(&snap.counters.requests) - writes_of(&c0.requests),
        0,
        "writes on a converged cluster: {:?} then {:?}",
        c0.requests,
        snap.counters.requests
    );
    // Passes are served from the watch caches, the ClusterVersion and the ClusterOperators
    // (whose health is read every pass) from the process's informers: a converged pass sends
    // no request at all, where upstream GETs every manifest.
    let total = |c: &cvo::reconcile::api::Counters| c.requests.values().sum::<u64>();
    let passes = snap.counters.passes - p0;
    let per_pass = (total(&snap.counters) - total(&c0)) / passes;
    assert!(
        per_pass == 0,
        "{per_pass} requests per converged pass over {passes} passes: {:?} then {:?}",
        c0.requests,
        snap.counters.requests
    );
    let Some(sim) = t.sim() else {
        assert_eq!(snap.state, cvo::reconcile::api::EngineState::Reconciling);
        h.shutdown().await;
        return;
    };
    // And the simulator's audit log of every request.
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
    let reads: Vec<String> = audit
        .entries
        .iter()
        .filter(|e| e.verb == "get")
        .map(|e| e.path.clone())
        .collect();
    assert_eq!(reads, Vec::<String>::new(), "converged passes read nothing");
    assert_eq!(snap.state, cvo::reconcile::api::EngineState::Reconciling);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_only_reports_drift_and_writes_nothing() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    t.create(
        NAMESPACE,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n.ns,
        "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"}}}),
    )
    .await;
    t.create(CONFIGMAP, json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "alpha", "namespace": n.ns, "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"}},
        "data": {"version": "0.9.0"}}))
        .await;
    play_operator(&t, healthy(), Duration::ZERO);
    t.create(CO, json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator", "metadata": {"name": n.op}, "spec": {}})).await;
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::WatchOnly));
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
    assert!(!by_name.contains_key(n.ns.as_str()), "namespace exists, no drift");
    assert_eq!(
        writes_of(&snap.counters.requests),
        0,
        "{:?}",
        snap.counters.requests
    );
    if let Some(sim) = t.sim() {
        assert_eq!(sim.audit().writes(), 0, "{:?}", sim.audit().counts());
    }
    assert!(t.get(CONFIGMAP, &n.ns, "beta").await.is_none());
    assert!(
        t.get(CV, "", &n.cv).await.is_none(),
        "watch-only creates no ClusterVersion"
    );
    assert_eq!(snap.mode, EngineMode::WatchOnly);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_only_client_refuses_writes() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::WatchOnly));
    // A pass asked for at once and a later one: watch-only computes the drift of both and
    // writes nothing (no ClusterVersion, no manifest, no status).
    h.commands
        .send(cvo::reconcile::api::Command::ReconcileNow)
        .await
        .expect("send");
    let snap = wait_snapshot(&mut h, "command outcome", 10, |s| s.last_command.is_some()).await;
    let out = snap.last_command.clone().expect("outcome");
    assert_eq!(out.result, Ok("pass requested".to_string()));
    let snap = wait_snapshot(&mut h, "two passes", 20, |s| s.recent_passes.len() >= 2).await;
    assert!(
        !snap.drift.is_empty(),
        "the payload's objects are missing: drift expected"
    );
    assert_eq!(
        writes_of(&snap.counters.requests),
        0,
        "{:?}",
        snap.counters.requests
    );
    if let Some(sim) = t.sim() {
        assert_eq!(sim.audit().writes(), 0);
    }
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifest_rejected_by_the_server_fails_with_its_reason() {
    let (t, n) = cluster().await;
    let ns = &n.ns;
    let bad = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n  namespace: {ns}\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\ndata: {{}}\n"
    );
    let f = payloads(&n, &[("0000_25_bad_configmap.yaml", bad)], &[]);
    play_operator(&t, healthy(), Duration::ZERO);
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "Failing", 20, |s| s.failing().is_some()).await;
    let cv = cv_of(&t).await;
    let (st, reason, msg) = cond(&cv, "Failing");
    assert_eq!(
        (st.as_str(), reason.as_str()),
        ("True", "UpdatePayloadResourceInvalid")
    );
    assert_eq!(
        msg,
        format!(
            "Could not update configmap \"{ns}/Bad_Name\" (4 of 5): the object is invalid, possibly due to local cluster configuration"
        )
    );
    assert_eq!(
        cond(&cv, "Progressing").2,
        "Unable to apply 1.0.0: some cluster configuration is invalid"
    );
    assert_eq!(cv.status.history[0].state, UpdateState::Partial);
    h.shutdown().await;
}

async fn request_update(t: &Handle) {
    let api: kube::Api<ClusterVersion> = kube::Api::all(t.client());
    api.patch(
        &t.name("version"),
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"spec": {"desiredUpdate": {"version": "1.1.0", "image": IMAGE_2}}})),
    )
    .await
    .expect("patch desiredUpdate");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_1_to_2_waits_for_the_operator_then_completes() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let behaviour = healthy();
    play_operator(&t, behaviour.clone(), Duration::from_millis(400));
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    request_update(&t).await;
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
    let cv = cv_of(&t).await;
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
        t.get(CONFIGMAP, &n.ns, "alpha").await.expect("alpha")["data"]["version"],
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
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let behaviour = healthy();
    play_operator(&t, behaviour.clone(), Duration::from_millis(30));
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    *behaviour.lock().expect("lock") = OpBehaviour::Unavailable;
    request_update(&t).await;
    wait_snapshot(&mut h, "Failing", 20, |s| s.failing().is_some()).await;
    let cv = cv_of(&t).await;
    assert_eq!(
        cond(&cv, "Failing"),
        (
            "True".into(),
            "ClusterOperatorNotAvailable".into(),
            format!("Cluster operator {} is not available", n.op)
        )
    );
    assert_eq!(
        cond(&cv, "Progressing").2,
        format!(
            "Unable to apply 1.1.0: the cluster operator {} is not available",
            n.op
        )
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_degraded_mid_update_is_named() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let behaviour = healthy();
    play_operator(&t, behaviour.clone(), Duration::from_millis(30));
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    *behaviour.lock().expect("lock") = OpBehaviour::Degraded;
    request_update(&t).await;
    let s = wait_snapshot(&mut h, "degraded reported", 20, |s| {
        s.failure
            .as_ref()
            .is_some_and(|f| f.reason == "ClusterOperatorDegraded")
    })
    .await;
    assert_eq!(
        s.failure.as_ref().map(|f| f.message.as_str()),
        Some(format!("Cluster operator {} is degraded", n.op).as_str())
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_mid_update_then_restart_resumes_without_duplicate_history() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let behaviour = healthy();
    play_operator(&t, behaviour.clone(), Duration::from_millis(30));
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    *behaviour.lock().expect("lock") = OpBehaviour::Stuck;
    request_update(&t).await;
    wait_snapshot(&mut h, "update in progress", 10, |s| {
        s.cluster_version
            .as_ref()
            .is_some_and(|c| c.history.first().is_some_and(|e| e.version == "1.1.0"))
    })
    .await;
    h.abort().await;
    let before = cv_of(&t).await.status.history;
    assert_eq!(before.len(), 2);
    assert_eq!(
        (before[0].state, before[0].version.as_str()),
        (UpdateState::Partial, "1.1.0")
    );
    *behaviour.lock().expect("lock") = OpBehaviour::Healthy;
    let mut h2 = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    wait_snapshot(
        &mut h2,
        "resumed update Completed",
        20,
        StatusSnapshot::is_completed,
    )
    .await;
    let after = cv_of(&t).await.status.history;
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

/// Issue 26 point 4, capabilities are never silently lost (upstream pkg/cvo/sync_worker.go
/// `syncPayload`, pkg/payload/payload.go `GetImplicitlyEnabledCapabilities`): with the baseline
/// capability set `None`, 1.0.0 applies the ConfigMap `gamma` under no capability and 1.1.0
/// moves it under `Console`, which is not enabled. The update enables Console implicitly
/// (status.capabilities, ImplicitlyEnabledCapabilities) and applies gamma's 1.1.0 content
/// before it claims Completed; a restarted engine keeps Console enabled and gamma managed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_moving_a_resource_under_a_disabled_capability_enables_it_implicitly() {
    let (t, n) = cluster().await;
    let gamma = |version: &str, capability: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gamma\n  namespace: {}\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n{capability}data:\n  version: \"{version}\"\n",
            n.ns
        )
    };
    let file = "0000_20_gamma_configmap.yaml";
    let f = payloads(
        &n,
        &[(file, gamma("1.0.0", ""))],
        &[(
            file,
            gamma("1.1.0", "    capability.openshift.io/name: Console\n"),
        )],
    );
    t.create(
        CV,
        json!({
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterVersion",
            "metadata": {"name": n.cv},
            "spec": {
                "clusterID": "6a1f0c3e-5b7d-4e2a-9c1b-0d2e3f4a5b6c",
                "capabilities": {"baselineCapabilitySet": "None"}
            }
        }),
    )
    .await;
    let mut h = install(&t, &f).await;
    let cv = cv_of(&t).await;
    assert_eq!(cv.status.capabilities.enabled_capabilities, Vec::<String>::new());
    assert_eq!(
        cond(&cv, "ImplicitlyEnabledCapabilities"),
        (
            "False".into(),
            "AsExpected".into(),
            "Capabilities match configured spec".into()
        )
    );
    let version_of_gamma = || async {
        t.get(CONFIGMAP, &n.ns, "gamma").await.expect("gamma exists")["data"]["version"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(version_of_gamma().await, "1.0.0");

    request_update(&t).await;
    let s = wait_snapshot(&mut h, "update Completed", 20, |s| {
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == "1.1.0")
    })
    .await;
    assert_eq!((s.done, s.total), (5, 5), "gamma is applied, not skipped");
    let cv = cv_of(&t).await;
    assert_eq!(cv.status.capabilities.enabled_capabilities, ["Console"]);
    assert_eq!(
        cond(&cv, "ImplicitlyEnabledCapabilities"),
        (
            "True".into(),
            "CapabilitiesImplicitlyEnabled".into(),
            "The following capabilities could not be disabled: Console".into()
        )
    );
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
    assert_eq!(version_of_gamma().await, "1.1.0");
    h.shutdown().await;

    // While no engine runs, gamma is edited; a restarted engine still applies it (Console is
    // still enabled, from status.capabilities) and still reports Console as implicitly enabled.
    let mut edited = t.get(CONFIGMAP, &n.ns, "gamma").await.expect("gamma exists");
    edited["data"]["version"] = json!("edited");
    assert!(t.edit(CONFIGMAP, edited).await, "gamma edited");
    let mut h2 = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    let s = wait_snapshot(&mut h2, "a whole pass after the restart", 20, |s| {
        s.counters.passes >= 1 && s.is_completed()
    })
    .await;
    assert_eq!((s.done, s.total), (5, 5));
    assert_eq!(version_of_gamma().await, "1.1.0");
    let cv = cv_of(&t).await;
    assert_eq!(cv.status.capabilities.enabled_capabilities, ["Console"]);
    assert_eq!(
        cond(&cv, "ImplicitlyEnabledCapabilities").2,
        "The following capabilities could not be disabled: Console"
    );

    // Once the spec enables Console itself, nothing is implicit any more (the work is the same:
    // the enabled capabilities did not change).
    let api: kube::Api<ClusterVersion> = kube::Api::all(t.client());
    api.patch(
        &n.cv,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(
            json!({"spec": {"capabilities": {"additionalEnabledCapabilities": ["Console"]}}}),
        ),
    )
    .await
    .expect("patch spec.capabilities");
    wait_snapshot(&mut h2, "ImplicitlyEnabledCapabilities False", 10, |s| {
        s.cluster_version.as_ref().is_some_and(|c| {
            find(&c.conditions, "ImplicitlyEnabledCapabilities").is_some_and(|c| c.is_false())
        })
    })
    .await;
    let cv = cv_of(&t).await;
    assert_eq!(cv.status.capabilities.enabled_capabilities, ["Console"]);
    assert_eq!(
        cond(&cv, "ImplicitlyEnabledCapabilities"),
        (
            "False".into(),
            "AsExpected".into(),
            "Capabilities match configured spec".into()
        )
    );
    h2.shutdown().await;
}

/// Options of a `cvo reconcile` run. On the real server a pass of the 1,000-manifest payload
/// takes longer than the simulator's scaled apply timeout (`I` = 9 s): there the timings are
/// scaled less (`I` = 36 s) and the run may take up to 5 minutes.
fn cli_opts(
    t: &Handle,
    dir: &Path,
    until: cvo::cli::reconcile::Until,
    dry_run: bool,
) -> cvo::cli::reconcile::ReconcileOptions {
    let (factor, limit) = if t.is_real() { (0.2, 300) } else { (0.05, 60) };
    cvo::cli::reconcile::ReconcileOptions {
        payload: dir.to_path_buf(),
        release_image: None,
        dry_run,
        until,
        timeout: Some(Duration::from_secs(limit)),
        timings: EngineTimings::scaled(factor),
        lease: true,
    }
}

/// A payload of `n` ConfigMaps over 10 run levels and 5 components, no ClusterOperator.
fn big_payload(dir: &Path, names: &Names, n: usize) {
    let ns = &names.ns;
    write_payload(dir, "1.0.0", names, &[]);
    let rm = dir.join("release-manifests");
    std::fs::remove_file(rm.join("0000_30_op_clusteroperator.yaml")).expect("rm co");
    for i in 0..n {
        let body = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: {ns}\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\ndata:\n  index: \"{i}\"\n"
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
    let (mut t, n) = cluster().await;
    // `cvo reconcile` uses the ClusterVersion `version` and the CVO Lease: on the real server
    // this is the one test that does; it starts from none.
    t.clean_up(CV, "", "version");
    t.clean_up(LEASE, LEASE_NS, "version");
    if t.is_real() {
        t.delete(CV, "", "version").await;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("big");
    big_payload(&dir, &n, 1000);
    let s = run(t.client(), &cli_opts(&t, &dir, Until::Complete, false))
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

    if let Some(sim) = t.sim() {
        sim.clear_audit();
    }
    let before = t.get(CV, "", "version").await;
    let s = run(t.client(), &cli_opts(&t, &dir, Until::Once, false))
        .await
        .expect("runs");
    let after = t.get(CV, "", "version").await;
    if before != after {
        // Which status fields moved, to tell a timing flake from a real write.
        let b = before.as_ref().map(|v| v["status"].clone()).unwrap_or_default();
        let a = after.as_ref().map(|v| v["status"].clone()).unwrap_or_default();
        let moved: Vec<String> = b
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, v)| a.get(k.as_str()) != Some(v))
            .map(|(k, v)| format!("{k}: {v} -> {}", a.get(k.as_str()).cloned().unwrap_or_default()))
            .collect();
        panic!(
            "a converged pass leaves the ClusterVersion alone; status moved: {moved:#?}\nmetadata {} -> {}\n{}",
            before.as_ref().map(|v| v["metadata"].clone()).unwrap_or_default(),
            after.as_ref().map(|v| v["metadata"].clone()).unwrap_or_default(),
            render_text(&s)
        );
    }
    assert_eq!(s.exit_code, 0, "{}", render_text(&s));
    assert_eq!(s.status_writes, 0);
    // The only writes are the Lease's: acquire (release comes after the summary).
    assert!(
        s.writes <= 1
            && s.requests.get("create").copied().unwrap_or(0) + s.requests.get("patch").copied().unwrap_or(0)
                == 0,
        "converged pass writes: {:?}",
        s.requests
    );
    if let Some(sim) = t.sim() {
        // The simulator's audit: the Lease's acquire and release, nothing else.
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
        assert!(
            s.writes as usize <= writes.len(),
            "the summary is taken before the lease is released"
        );
    }
    assert_eq!(s.image, image, "the pseudo pull spec is stable");
    eprintln!("converged --once: {:.3}s {:?}", s.seconds, s.requests);

    // Drift: change one ConfigMap, delete another; dry-run reports both and writes nothing.
    let mut cm = t.get(CONFIGMAP, &n.ns, "cm-7").await.expect("cm-7");
    cm["data"]["index"] = json!("changed");
    assert!(t.edit(CONFIGMAP, cm).await, "edit cm-7");
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::namespaced(t.client(), &n.ns);
    api.delete("cm-8", &Default::default())
        .await
        .expect("delete cm-8");
    if let Some(sim) = t.sim() {
        sim.clear_audit();
    }
    let s = run(t.client(), &cli_opts(&t, &dir, Until::Once, true))
        .await
        .expect("runs");
    assert_eq!(s.writes, 0, "{:?}", s.requests);
    if let Some(sim) = t.sim() {
        assert_eq!(sim.audit().writes(), 0);
    }
    assert_eq!(s.drift.len(), 2, "{:?}", s.drift);
    let text = render_text(&s);
    assert!(
        text.contains("-.data.index: \"changed\"\n+.data.index: \"7\""),
        "{text}"
    );
    assert!(
        text.contains(&format!("--- ConfigMap {}/cm-8 (absent)", n.ns)),
        "{text}"
    );
    assert!(
        text.contains("2 objects would change (watch-only: nothing was written)"),
        "{text}"
    );

    // Issue 26 points 1 and 2 through the command: another payload directory is not applied
    // unless spec.desiredUpdate asks for it (exit 5 before the run, one line naming both
    // releases), and asked for with a version its release-metadata contradicts, it is refused
    // naming both versions; nothing is written either way.
    let other = tmp.path().join("other");
    write_payload(&other, "1.1.0", &n, &[]);
    let other_image = LocalPayloads::pseudo_pull_spec(&other).expect("canonical");
    let before = t.get(CV, "", "version").await;
    let s = run(t.client(), &cli_opts(&t, &other, Until::Complete, false))
        .await
        .expect("runs");
    assert_eq!(
        (s.outcome.as_str(), s.exit_code),
        ("payload-error", 5),
        "{}",
        render_text(&s)
    );
    assert_eq!(
        s.reason.as_deref(),
        Some(
            format!(
                "--payload is release {other_image}, but the cluster runs 1.0.0 ({image}) and spec.desiredUpdate of ClusterVersion version does not request {other_image}: cvo changes a cluster's release only when spec.desiredUpdate asks for it (set spec.desiredUpdate.image to {other_image} to update to this payload)"
            )
            .as_str()
        )
    );
    assert_eq!(t.get(CV, "", "version").await, before, "nothing written");
    let api: kube::Api<ClusterVersion> = kube::Api::all(t.client());
    api.patch(
        "version",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(
            json!({"spec": {"desiredUpdate": {"image": other_image, "version": "1.2.0"}}}),
        ),
    )
    .await
    .expect("request the other payload as 1.2.0");
    let s = run(t.client(), &cli_opts(&t, &other, Until::Complete, false))
        .await
        .expect("runs");
    assert_eq!(
        (s.outcome.as_str(), s.exit_code),
        ("payload-error", 5),
        "{}",
        render_text(&s)
    );
    assert_eq!(
        s.reason.as_deref(),
        Some(
            format!(
                "Verifying payload failed version=\"1.2.0\" image=\"{other_image}\" failure=release image version 1.1.0 does not match the expected upstream version 1.2.0"
            )
            .as_str()
        )
    );
    let cv: ClusterVersion =
        serde_json::from_value(t.get(CV, "", "version").await.expect("cv")).expect("decodes");
    assert_eq!(
        (cv.status.desired.version.as_str(), cv.status.history.len()),
        ("1.0.0", 1),
        "nothing accepted"
    );
    assert_eq!(
        t.get(CONFIGMAP, &n.ns, "alpha").await.expect("alpha")["data"]["version"],
        "1.0.0"
    );
}

fn lease(identity: &str, n: &Names) -> cvo::reconcile::runtime::leader::LeaseConfig {
    let t = cvo::reconcile::runtime::leader::LeaseTimings::new(
        Duration::from_secs(1),
        Duration::from_millis(800),
        Duration::from_millis(100),
    )
    .expect("valid timings");
    let mut c = cvo::reconcile::runtime::leader::LeaseConfig::cvo(identity, t);
    c.name = n.cv.clone();
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_engines_one_lease() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    play_operator(&t, healthy(), Duration::from_millis(30));
    let mut a_cfg = config(&f, &n, EngineMode::ActiveApply);
    a_cfg.lease = Some(lease("engine-a", &n));
    let mut a = Engine::spawn(t.client(), a_cfg);
    wait_snapshot(&mut a, "A leads and completes", 20, |s| {
        s.leader && s.is_completed()
    })
    .await;
    let mut b_cfg = config(&f, &n, EngineMode::ActiveApply);
    b_cfg.lease = Some(lease("engine-b", &n));
    let mut b = Engine::spawn(t.client(), b_cfg);
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
    let lease = t.get(LEASE, LEASE_NS, &n.cv).await.expect("lease");
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
    let (t, n) = cluster().await;
    write_payload(&v1, "1.0.0", &n, &[]);
    write_payload(&v2, "2.0.0", &n, &[]);
    let f = Fixture { _tmp: tmp, v1, v2 };
    play_operator(&t, healthy(), Duration::from_millis(30));
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    let api: kube::Api<ClusterVersion> = kube::Api::all(t.client());
    let patch = |force: bool| json!({"spec": {"desiredUpdate": {"version": "2.0.0", "image": IMAGE_2, "force": force}}});
    api.patch(
        &n.cv,
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
    let cv = cv_of(&t).await;
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
        &n.cv,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(patch(true)),
    )
    .await
    .expect("patch");
    wait_snapshot(&mut h, "forced update Completed", 20, |s| {
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == "2.0.0")
    })
    .await;
    let cv = cv_of(&t).await;
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

/// Upstream `pkg/payload/precondition/clusterversion/gianthop.go` and `upgradeable.go`, as the
/// engine runs them when it loads a release: from 4.16.3 a 6.0.0 target is refused (only 4.y to
/// 5.0 crosses a major version) and 5.0.0 is taken; at 5.0.0 with an unmanaged override
/// (Upgradeable=False), the patch update to 5.0.1 is taken and the cluster's non-blocking
/// `ClusterVersionOverridesSet` warning is recorded in the history entry's accepted risks, in
/// upstream's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn giant_hop_allows_only_four_to_five_zero_and_warnings_are_accepted_risks() {
    const IMAGE_3: &str = "example.com/release@sha256:3333";
    const IMAGE_4: &str = "example.com/release@sha256:4444";
    let tmp = tempfile::tempdir().expect("tempdir");
    let (t, n) = cluster().await;
    let dirs: Vec<PathBuf> = ["4.16.3", "6.0.0", "5.0.0", "5.0.1"]
        .iter()
        .map(|v| {
            let dir = tmp.path().join(v);
            write_payload(&dir, v, &n, &[]);
            dir
        })
        .collect();
    let f = Fixture {
        _tmp: tmp,
        v1: dirs[0].clone(),
        v2: dirs[1].clone(),
    };
    let mut cfg = config(&f, &n, EngineMode::ActiveApply);
    cfg.payloads = Arc::new(LocalPayloads {
        own_image: IMAGE_1.into(),
        own_dir: dirs[0].clone(),
        others: BTreeMap::from([
            (IMAGE_2.to_string(), dirs[1].clone()),
            (IMAGE_3.to_string(), dirs[2].clone()),
            (IMAGE_4.to_string(), dirs[3].clone()),
        ]),
    });
    play_operator(&t, healthy(), Duration::from_millis(30));
    let mut h = Engine::spawn(t.client(), cfg);
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    let api: kube::Api<ClusterVersion> = kube::Api::all(t.client());
    let merge = |body: Value| {
        let api = api.clone();
        let name = n.cv.clone();
        async move {
            api.patch(
                &name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(body),
            )
            .await
            .expect("patch");
        }
    };
    let no_channel = |from: &str, to: &str| {
        format!(
            "Precondition \"ClusterVersionRecommendedUpdate\" failed because of \"NoChannel\": Configured channel is unset, so the recommended status of updating from {from} to {to} is unknown."
        )
    };

    // 4.16.3 to 6.0.0: blocked.
    merge(json!({"spec": {"desiredUpdate": {"version": "6.0.0", "image": IMAGE_2}}})).await;
    wait_snapshot(&mut h, "ReleaseAccepted False", 10, |s| {
        s.cluster_version
            .as_ref()
            .is_some_and(|c| find(&c.conditions, "ReleaseAccepted").is_some_and(|r| r.is_false()))
    })
    .await;
    let cv = cv_of(&t).await;
    assert_eq!(
        cond(&cv, "ReleaseAccepted"),
        (
            "False".into(),
            "PreconditionChecks".into(),
            format!(
                "Preconditions failed for payload loaded version=\"6.0.0\" image=\"{IMAGE_2}\": Multiple precondition checks failed:\n\
                 * Precondition \"ClusterVersionGiantHop\" failed because of \"MajorVersionUpdate\": 6.0.0 has a larger major version than the current target 4.16.3 (6 > 4), and only updates within the current major version are supported.\n\
                 * {}",
                no_channel("4.16.3", "6.0.0")
            )
        )
    );
    assert_eq!(cv.status.desired.version, "4.16.3", "the old work is kept");

    // 4.16.3 to 5.0.0: upstream's one exception; only the channel warning is accepted.
    merge(json!({"spec": {"desiredUpdate": {"version": "5.0.0", "image": IMAGE_3}}})).await;
    wait_snapshot(&mut h, "5.0.0 Completed", 20, |s| {
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == "5.0.0")
    })
    .await;
    let cv = cv_of(&t).await;
    assert_eq!(cond(&cv, "ReleaseAccepted").1, "PayloadLoaded");
    assert_eq!(
        cv.status.history[0].accepted_risks.as_deref(),
        Some(no_channel("4.16.3", "5.0.0").as_str())
    );

    // An unmanaged override makes the cluster not Upgradeable; a patch update still goes, with
    // the overrides warning.
    merge(json!({"spec": {"overrides": [{"kind": "Deployment", "group": "apps", "namespace": n.ns, "name": "unrelated", "unmanaged": true}]}})).await;
    wait_snapshot(&mut h, "Upgradeable False", 10, |s| {
        s.cluster_version
            .as_ref()
            .is_some_and(|c| find(&c.conditions, "Upgradeable").is_some_and(|u| u.is_false()))
    })
    .await;
    merge(json!({"spec": {"desiredUpdate": {"version": "5.0.1", "image": IMAGE_4}}})).await;
    wait_snapshot(&mut h, "5.0.1 Completed", 20, |s| {
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == "5.0.1")
    })
    .await;
    let cv = cv_of(&t).await;
    assert_eq!(
        cv.status.history[0].accepted_risks.as_deref(),
        Some(
            format!(
                "Multiple precondition checks failed:\n\
                 * Precondition \"ClusterVersionUpgradeable\" failed because of \"ClusterVersionOverridesSet\": Retarget from 5.0.0 to 5.0.1 is not blocked by ClusterVersionOverridesSet. But the cluster-version operator is not managing these resources; they are currently the responsibility of the agent that set the overrides: Disabling ownership via cluster version overrides prevents upgrades between minor or major versions. Please remove overrides before requesting a minor or major version update.\n\
                 * {}",
                no_channel("5.0.0", "5.0.1")
            )
            .as_str()
        )
    );
    h.shutdown().await;
}

/// A CRD and, right after it in the same component, a custom resource of it: the engine waits
/// for the CRD to be `Established` and asks discovery again, so the custom resource is created
/// in the same pass (on the real server the kind is unknown for a moment after the CRD is).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resource_right_after_its_crd_is_created_in_the_same_pass() {
    let (mut t, n) = cluster().await;
    let group = format!("{}.example.com", t.name("widgets"));
    let crd_name = format!("gadgets.{group}");
    t.clean_up(CRD, "", &crd_name);
    let ann = "  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n";
    let crd = format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {crd_name}\n{ann}spec:\n  group: {group}\n  names: {{kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              size: {{type: integer}}\n"
    );
    let cr = format!(
        "apiVersion: {group}/v1\nkind: Gadget\nmetadata:\n  name: g1\n  namespace: {}\n{ann}spec:\n  size: 3\n",
        n.ns
    );
    let f = payloads(
        &n,
        &[
            ("0000_15_gadgets_00_crd.yaml", crd.clone()),
            ("0000_15_gadgets_01_cr.yaml", cr.clone()),
        ],
        &[],
    );
    let h = install(&t, &f).await;
    let snap = h.status.borrow().clone();
    assert_eq!((snap.done, snap.total), (6, 6));
    assert_eq!(snap.failure, None);
    let gadgets = cluster::Res(
        Box::leak(group.clone().into_boxed_str()),
        "v1",
        "Gadget",
        "gadgets",
        true,
    );
    let g1 = t
        .get(gadgets, &n.ns, "g1")
        .await
        .expect("the custom resource exists");
    assert_eq!(g1["spec"]["size"], 3);
    h.shutdown().await;
}

/// A first install whose custom resources come before their CRDs in the task graph (issue
/// 28): Initializing applies every component at once, so each custom resource waits for the
/// CRD watch to show its kind served instead of failing the pass or polling discovery; the
/// install completes in its first pass, with no CRD read after its create, and the next
/// passes read no payload object (the CRDs' readiness was recorded while Initializing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resources_before_their_crds_wait_for_them_in_the_first_pass() {
    let (mut t, n) = cluster().await;
    if let Some(sim) = t.sim() {
        // Established later than discovery's retries (0.1 + 0.3 + 0.9 s) would wait: only a
        // wait on the CRD watch keeps the first pass free of failed tasks.
        sim.set_crd_establish_delay(Duration::from_millis(1600));
    }
    let group = format!("{}.example.com", t.name("gizmos"));
    let ann = "  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n";
    let mut extra = Vec::new();
    for k in 0..3 {
        let crd_name = format!("gizmo{k}s.{group}");
        t.clean_up(CRD, "", &crd_name);
        extra.push((
            format!("0000_16_gizmos_{k:02}_crd.yaml"),
            format!(
                "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {crd_name}\n{ann}spec:\n  group: {group}\n  names: {{kind: Gizmo{k}, plural: gizmo{k}s, singular: gizmo{k}, listKind: Gizmo{k}List}}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n"
            ),
        ));
        extra.push((
            format!("0000_12_early{k}_cr.yaml"),
            format!(
                "apiVersion: {group}/v1\nkind: Gizmo{k}\nmetadata:\n  name: g{k}\n  namespace: {}\n{ann}spec:\n  k: {k}\n",
                n.ns
            ),
        ));
    }
    let extra: Vec<(&str, String)> = extra.iter().map(|(f, b)| (f.as_str(), b.clone())).collect();
    let f = payloads(&n, &extra, &[]);
    play_operator(&t, healthy(), Duration::from_millis(30));
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    // Every snapshot until Completed: no task of any pass may have failed on the way.
    let mut failures = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let s = h.status.borrow_and_update().clone();
        if let Some(f) = &s.failure {
            failures.push(format!("{f:?}"));
        }
        if s.is_completed() {
            break;
        }
        tokio::time::timeout_at(deadline, h.status.changed())
            .await
            .expect("install Completed within 20 s")
            .expect("engine running");
    }
    assert_eq!(
        failures,
        Vec::<String>::new(),
        "no custom resource failed for want of its CRD"
    );
    let snap = h.status.borrow().clone();
    assert_eq!((snap.done, snap.total), (10, 10));
    for k in 0..3 {
        let gizmos = cluster::Res(
            Box::leak(group.clone().into_boxed_str()),
            "v1",
            Box::leak(format!("Gizmo{k}").into_boxed_str()),
            Box::leak(format!("gizmo{k}s").into_boxed_str()),
            true,
        );
        let g = t
            .get(gizmos, &n.ns, &format!("g{k}"))
            .await
            .expect("the custom resource exists");
        assert_eq!(g["spec"]["k"], k);
    }
    if let Some(sim) = t.sim() {
        let audit = sim.audit().entries;
        let polled: Vec<String> = audit
            .iter()
            .filter(|e| e.verb == "get" && e.path.contains("customresourcedefinitions/"))
            .map(|e| e.path.clone())
            .collect();
        assert_eq!(polled, Vec::<String>::new(), "no CRD polled");
        // One look before the pass (the CRDs do not exist yet), none while it waits.
        let discovery = audit
            .iter()
            .filter(|e| e.verb == "discovery" && e.path.contains(&group))
            .count();
        assert!(
            discovery <= 1,
            "{discovery} discovery requests for the custom resources' group"
        );
    }
    h.shutdown().await;
}

/// Serves plain HTTP on 127.0.0.1, answering every request `404` with a `Status` body, and
/// records each request's `User-Agent`. Returns the kubeconfig file and the recorded agents.
async fn agent_recorder(dir: &Path) -> (PathBuf, Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let seen = s2.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf).to_string();
                let agent = head
                    .lines()
                    .find_map(|l| {
                        l.split_once(':')
                            .filter(|(k, _)| k.eq_ignore_ascii_case("user-agent"))
                    })
                    .map(|(_, v)| v.trim().to_owned())
                    .unwrap_or_default();
                seen.lock().expect("lock").push(agent);
                let body = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"not here","reason":"NotFound","code":404}"#;
                let resp = format!(
                    "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    let kc = dir.join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"http://127.0.0.1:{port}\"}}\nusers:\n- name: u\n  user: {{}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        ),
    )
    .expect("write kubeconfig");
    (kc, seen)
}

/// Every request of `cvo status`, `cvo get`, `cvo upgrade` and `cvo reconcile` says who sent it:
/// `User-Agent: cvo/<version> (<command>)`, so audit logs attribute requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_carries_the_user_agent_of_its_command() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (kc, seen) = agent_recorder(tmp.path()).await;
    let dir = tmp.path().join("payload");
    write_payload(
        &dir,
        "1.0.0",
        &Names {
            ns: NS.into(),
            op: "op".into(),
            cv: "version".into(),
        },
        &[],
    );
    let version = env!("CARGO_PKG_VERSION");
    for (command, args) in [
        ("status", vec!["status"]),
        ("get", vec!["get", "co"]),
        ("upgrade", vec!["upgrade", "channel"]),
        ("upgrade", vec!["upgrade", "recommend"]),
        (
            "reconcile",
            vec![
                "reconcile",
                "--payload",
                dir.to_str().expect("utf-8"),
                "--once",
                "--timeout",
                "3",
            ],
        ),
    ] {
        seen.lock().expect("lock").clear();
        let mut args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        args.extend([
            "--kubeconfig".to_owned(),
            kc.to_str().expect("utf-8 kubeconfig path").to_owned(),
        ]);
        let (_, _, stderr) = tokio::task::spawn_blocking(move || {
            common::cvo_offline(&args.iter().map(String::as_str).collect::<Vec<_>>())
        })
        .await
        .expect("joins");
        let agents = seen.lock().expect("lock").clone();
        assert!(!agents.is_empty(), "cvo {command} sent no request: {stderr}");
        let want = format!("cvo/{version} ({command})");
        assert!(agents.iter().all(|a| *a == want), "cvo {command}: {agents:?}");
    }
}

/// The dashboard's confirmed request (`Command::Request`) is the administrator's write, not the
/// engine's: written in watch-only too, as one PATCH of `spec`; a patch reaching past
/// `spec.desiredUpdate`/`spec.channel` cannot even be made into a request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_only_writes_the_administrators_request_and_nothing_else() {
    use cvo::{
        reconcile::api::Command,
        spec_request::{Request, SpecPatch},
    };
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    t.create(
        CV,
        json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
            "metadata": {"name": n.cv}, "spec": {"clusterID": "00000000-0000-0000-0000-000000000001",
            "channel": "stable-1"}}),
    )
    .await;
    let mut h = Engine::spawn(t.client(), config(&f, &n, EngineMode::WatchOnly));
    let before = t.sim().map(|s| s.audit().writes());
    h.commands
        .send(Command::Request(Request {
            patch: SpecPatch::new(json!({"spec": {"channel": "fast-1",
                "desiredUpdate": {"version": "2.0.0", "image": IMAGE_2}}}))
            .expect("in scope"),
            summary: "upgrade --to 2.0.0".into(),
        }))
        .await
        .expect("send");
    let snap = wait_snapshot(&mut h, "request outcome", 10, |s| s.last_command.is_some()).await;
    let out = snap.last_command.clone().expect("outcome");
    assert_eq!(out.command, "upgrade --to 2.0.0");
    assert_eq!(out.result, Ok(format!("ClusterVersion {} spec patched", n.cv)));
    assert_eq!(snap.mode, EngineMode::WatchOnly);
    let cv = t.get(CV, "", &n.cv).await.expect("cv");
    assert_eq!(cv["spec"]["channel"], "fast-1");
    assert_eq!(cv["spec"]["desiredUpdate"]["version"], "2.0.0");
    assert_eq!(
        cv["spec"]["clusterID"], "00000000-0000-0000-0000-000000000001",
        "a merge patch keeps the rest"
    );
    assert_eq!(
        writes_of(&snap.counters.requests),
        1,
        "{:?}",
        snap.counters.requests
    );
    if let (Some(sim), Some(before)) = (t.sim(), before) {
        assert_eq!(sim.audit().writes() - before, 1, "{:?}", sim.audit().counts());
    }
    let evil = json!({"spec": {"upstream": "https://evil.example.com"}});
    assert_eq!(
        SpecPatch::new(evil.clone()).map_err(|e| e.to_string()),
        Err(format!(
            "refused: a request may patch only spec.desiredUpdate and spec.channel, not {evil}"
        ))
    );
    h.commands.send(Command::ReconcileNow).await.expect("send");
    let snap = wait_snapshot(&mut h, "pass requested", 10, |s| {
        s.last_command
            .as_ref()
            .is_some_and(|c| c.command == "reconcile now")
    })
    .await;
    assert_eq!(writes_of(&snap.counters.requests), 1, "no second write");
    h.shutdown().await;
}

/// Merge-patches `spec.desiredUpdate` of the test's ClusterVersion (`null` clears it).
async fn set_desired_update(t: &Handle, du: Value) {
    let api: kube::Api<ClusterVersion> = kube::Api::all(t.client());
    api.patch(
        &t.name("version"),
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"spec": {"desiredUpdate": du}})),
    )
    .await
    .expect("patch desiredUpdate");
}

/// What the cluster runs, as the test reads it: history (state, version, image) newest first,
/// `status.desired`'s version and the payload's ConfigMap `alpha` version.
async fn release_state(t: &Handle, n: &Names) -> (Vec<(UpdateState, String, String)>, String, Value) {
    let cv = cv_of(t).await;
    let hist = cv
        .status
        .history
        .iter()
        .map(|h| (h.state, h.version.clone(), h.image.clone()))
        .collect();
    let alpha = t.get(CONFIGMAP, &n.ns, "alpha").await.expect("alpha")["data"]["version"].clone();
    (hist, cv.status.desired.version, alpha)
}

/// Whether the snapshot's ClusterVersion has ReleaseAccepted with `status` (`True`, `False`,
/// `Unknown`) and a message containing `text`.
fn release_accepted(s: &StatusSnapshot, status: &str, text: &str) -> bool {
    s.cluster_version.as_ref().is_some_and(|c| {
        find(&c.conditions, "ReleaseAccepted")
            .is_some_and(|r| r.status.as_str() == status && r.message().contains(text))
    })
}

/// Installs 1.0.0, requests 1.1.0 and waits until the update is Completed.
async fn installed_then_updated(t: &Handle, f: &Fixture) -> EngineHandle {
    let mut h = install(t, f).await;
    request_update(t).await;
    wait_snapshot(&mut h, "update to 1.1.0 Completed", 20, |s| {
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == "1.1.0")
    })
    .await;
    h
}

/// Waits until the engine has taken `generation` of the ClusterVersion and finished at least
/// `passes` more sync passes after that (the snapshot's pass counter), so a test can assert
/// what those passes did not do.
async fn wait_passes_after(h: &mut EngineHandle, what: &str, passes: u64) {
    let start = h.status.borrow().counters.passes;
    wait_snapshot(h, what, 20, |s| s.counters.passes >= start + passes).await;
}

/// Issue 26 point 1: the engine never changes the release unless the spec asks. After an
/// update to 1.1.0 completes: clearing `desiredUpdate`, an invalid one (bad version, an image
/// no resolver knows) and a restart of an engine whose own release (`--release-image`) is
/// 1.0.0 all keep the cluster at 1.1.0 (upstream's CVO is always the current release).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_unrequested_downgrade_after_an_update() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let mut h = installed_then_updated(&t, &f).await;
    let at_b = release_state(&t, &n).await;
    assert_eq!(
        at_b,
        (
            vec![
                (UpdateState::Completed, "1.1.0".into(), IMAGE_2.into()),
                (UpdateState::Completed, "1.0.0".into(), IMAGE_1.into()),
            ],
            "1.1.0".into(),
            json!("1.1.0")
        )
    );

    // `cvo upgrade --clear` / `desiredUpdate: null`.
    set_desired_update(&t, Value::Null).await;
    wait_passes_after(&mut h, "passes after the clear", 2).await;
    assert_eq!(release_state(&t, &n).await, at_b, "cleared: still at 1.1.0");

    // An invalid desired update: reported Invalid, nothing applied.
    set_desired_update(&t, json!({"version": "not-a-version"})).await;
    wait_snapshot(&mut h, "Invalid=True", 10, |s| {
        s.cluster_version
            .as_ref()
            .is_some_and(|c| find(&c.conditions, "Invalid").is_some_and(|c| c.is_true()))
    })
    .await;
    wait_passes_after(&mut h, "passes with the invalid spec", 2).await;
    let cv = cv_of(&t).await;
    assert!(
        cond(&cv, "Invalid").2.contains("spec.desiredUpdate.version"),
        "{:?}",
        cond(&cv, "Invalid")
    );
    assert_eq!(
        release_state(&t, &n).await,
        at_b,
        "invalid version: still at 1.1.0"
    );

    // A garbage image: no payload for it, ReleaseAccepted False, the cluster stays.
    set_desired_update(&t, json!({"version": null, "image": "garbage"})).await;
    wait_snapshot(&mut h, "ReleaseAccepted=False for the garbage image", 10, |s| {
        release_accepted(s, "False", "garbage")
    })
    .await;
    wait_passes_after(&mut h, "passes with the garbage image", 2).await;
    assert_eq!(release_state(&t, &n).await, at_b, "garbage image: still at 1.1.0");

    // A new engine whose own release is 1.0.0 (as `cvo operator start --release-image A`),
    // with the spec cleared: it takes the release from the ClusterVersion.
    h.shutdown().await;
    set_desired_update(&t, Value::Null).await;
    let mut h2 = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    wait_snapshot(&mut h2, "restarted engine Completed", 20, |s| {
        s.is_completed() && s.counters.passes >= 2
    })
    .await;
    let s = h2.status.borrow().clone();
    assert_eq!(s.desired.as_ref().map(|d| d.image.as_str()), Some(IMAGE_2));
    assert_eq!(
        release_state(&t, &n).await,
        at_b,
        "restarted with an older own release: still at 1.1.0"
    );
    h2.shutdown().await;
}

/// A resolver whose own release is `v1` and which retrieves [`IMAGE_2`] and `IMAGE_3` forever
/// (a download that never ends), recording which retrievals the engine cancelled.
struct HangingResolver {
    v1: PathBuf,
    cancelled: std::sync::Mutex<Vec<String>>,
    pending: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

const IMAGE_3: &str = "example.com/release@sha256:3333";

impl cvo::reconcile::api::PayloadResolver for HangingResolver {
    fn own_image(&self) -> String {
        IMAGE_1.into()
    }
    fn resolve(&self, image: &str) -> Result<PathBuf, String> {
        if image == IMAGE_1 {
            Ok(self.v1.clone())
        } else {
            Err(format!("{image} is not retrieved yet"))
        }
    }
    fn poll(&self, request: &cvo::reconcile::api::ResolveRequest) -> cvo::reconcile::api::Resolution {
        use cvo::reconcile::api::{PullProgress, Resolution};
        if request.image == IMAGE_1 {
            return Resolution::Ready {
                dir: self.v1.clone(),
                accepted_risk: None,
                verified: false,
                registered: true,
            };
        }
        self.pending.lock().expect("lock").insert(request.image.clone());
        Resolution::Pending(PullProgress {
            image: request.image.clone(),
            ..PullProgress::default()
        })
    }
    fn cancel_others(&self, keep: &cvo::reconcile::api::ResolveRequest) {
        let mut pending = self.pending.lock().expect("lock");
        let gone: Vec<String> = pending.iter().filter(|i| **i != keep.image).cloned().collect();
        for i in gone {
            pending.remove(&i);
            self.cancelled.lock().expect("lock").push(i);
        }
    }
}

/// Issue 26 point 5: clearing or replacing a request while its release is being retrieved
/// cancels the retrieval at once, and ReleaseAccepted and the snapshot stop naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_or_retarget_during_a_download_cancels_it() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    play_operator(&t, healthy(), Duration::from_millis(30));
    let resolver = Arc::new(HangingResolver {
        v1: f.v1.clone(),
        cancelled: Default::default(),
        pending: Default::default(),
    });
    let mut cfg = config(&f, &n, EngineMode::ActiveApply);
    cfg.payloads = resolver.clone();
    let mut h = Engine::spawn(t.client(), cfg);
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;

    set_desired_update(&t, json!({"version": "1.1.0", "image": IMAGE_2})).await;
    wait_snapshot(&mut h, "retrieving 1.1.0", 10, |s| {
        s.payload_pull.as_ref().is_some_and(|p| p.image == IMAGE_2) && release_accepted(s, "Unknown", IMAGE_2)
    })
    .await;

    // A new target: the first download stops, ReleaseAccepted names the new one.
    set_desired_update(&t, json!({"version": null, "image": IMAGE_3})).await;
    wait_snapshot(&mut h, "retrieving the new target", 5, |s| {
        s.payload_pull.as_ref().is_some_and(|p| p.image == IMAGE_3) && release_accepted(s, "Unknown", IMAGE_3)
    })
    .await;
    assert_eq!(
        *resolver.cancelled.lock().expect("lock"),
        vec![IMAGE_2.to_string()]
    );

    // Cleared: that download stops too, and within a few seconds nothing names it.
    set_desired_update(&t, Value::Null).await;
    let s = wait_snapshot(&mut h, "back on 1.0.0", 5, |s| {
        s.payload_pull.is_none() && release_accepted(s, "True", IMAGE_1)
    })
    .await;
    assert_eq!(
        *resolver.cancelled.lock().expect("lock"),
        vec![IMAGE_2.to_string(), IMAGE_3.to_string()]
    );
    let cv = cv_of(&t).await;
    let (st, reason, msg) = cond(&cv, "ReleaseAccepted");
    assert_eq!((st.as_str(), reason.as_str()), ("True", "PayloadLoaded"), "{msg}");
    assert!(!msg.contains(IMAGE_3), "{msg}");
    assert_eq!(s.desired.as_ref().map(|d| d.version.as_str()), Some("1.0.0"));
    assert_eq!(cv.status.history.len(), 1, "{:#?}", cv.status.history);
    h.shutdown().await;
}

/// Issue 26 point 2: a payload must be the release it claims. A requested version that the
/// payload's release-metadata contradicts is refused (ReleaseAccepted False naming both
/// versions) unless forced, and then history records the payload's own version with the waived
/// check; an engine whose own payload directory is not the release the ClusterVersion says the
/// cluster runs under that image applies nothing from it (history never pairs one release's
/// version with another's image).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_must_be_the_release_it_claims() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let mut h = install(&t, &f).await;
    set_desired_update(&t, json!({"version": "1.2.0", "image": IMAGE_2})).await;
    wait_snapshot(&mut h, "ReleaseAccepted False on the version", 10, |s| {
        release_accepted(s, "False", "does not match")
    })
    .await;
    let cv = cv_of(&t).await;
    assert_eq!(
        cond(&cv, "ReleaseAccepted"),
        (
            "False".into(),
            "VerifyPayloadVersion".into(),
            format!(
                "Verifying payload failed version=\"1.2.0\" image=\"{IMAGE_2}\" failure=release image version 1.1.0 does not match the expected upstream version 1.2.0"
            )
        )
    );
    assert_eq!(
        cv.status.history.len(),
        1,
        "nothing accepted: {:#?}",
        cv.status.history
    );
    assert_eq!(cv.status.desired.version, "1.0.0");

    // Forced: the payload's own version is recorded, with the waived check.
    set_desired_update(&t, json!({"version": "1.2.0", "image": IMAGE_2, "force": true})).await;
    wait_snapshot(&mut h, "forced update Completed", 20, |s| {
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.image == IMAGE_2)
    })
    .await;
    let cv = cv_of(&t).await;
    let h0 = &cv.status.history[0];
    assert_eq!((h0.version.as_str(), h0.image.as_str()), ("1.1.0", IMAGE_2));
    let risks = h0.accepted_risks.clone().unwrap_or_default();
    assert!(
        risks.contains(&format!(
            "Target release version=\"1.2.0\" image=\"{IMAGE_2}\" release image version 1.1.0 does not match the expected upstream version 1.2.0, but continuing anyway because the update was forced"
        )),
        "{risks}"
    );
    h.shutdown().await;

    // An engine that claims the 1.0.0 directory is the release image the cluster runs (1.1.0):
    // refused, nothing applied, history unchanged.
    set_desired_update(&t, Value::Null).await;
    let before = cv_of(&t).await.status.history;
    let mut cfg = config(&f, &n, EngineMode::ActiveApply);
    cfg.payloads = Arc::new(LocalPayloads {
        own_image: IMAGE_2.into(),
        own_dir: f.v1.clone(),
        others: BTreeMap::new(),
    });
    let mut h2 = Engine::spawn(t.client(), cfg);
    wait_snapshot(&mut h2, "the mislabelled payload refused", 10, |s| {
        release_accepted(
            s,
            "False",
            "release image version 1.0.0 does not match the expected upstream version 1.1.0",
        )
    })
    .await;
    wait_passes_after(&mut h2, "passes", 0).await;
    assert_eq!(cv_of(&t).await.status.history, before);
    assert_eq!(
        t.get(CONFIGMAP, &n.ns, "alpha").await.expect("alpha")["data"]["version"],
        "1.1.0"
    );
    h2.shutdown().await;
}

/// Sets `status.availableUpdates` of the test's ClusterVersion to `updates` (as the update
/// service loop would), again until the server holds it (a status write of the engine may
/// come in between).
async fn list_updates(t: &Handle, updates: Value) {
    for _ in 0..50 {
        let mut cv = t
            .get(CV, "", &t.name("version"))
            .await
            .expect("ClusterVersion exists");
        if cv["status"]["availableUpdates"] == updates {
            return;
        }
        cv["status"]["availableUpdates"] = updates.clone();
        t.put_status(CV, cv).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("status.availableUpdates did not stay {updates}");
}

/// Issue 26 point 3: a compromised update service lists 1.1.0 with a `file://` image naming a
/// real payload directory, and the administrator asks for version 1.1.0: nothing of it is
/// loaded or applied, ReleaseAccepted is False naming why. A spec naming that path directly
/// (forced, even) is refused by the production resolver: the directory is not registered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_file_image_is_refused_and_nothing_of_it_applied() {
    use cvo::reconcile::payload::retrieve::{RegistryPayloads, RetrieveOptions, Retriever};
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let cache = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(&f, &n, EngineMode::ActiveApply);
    cfg.payloads = Arc::new(RegistryPayloads::new(
        LocalPayloads {
            own_image: IMAGE_1.into(),
            own_dir: f.v1.clone(),
            others: BTreeMap::new(),
        },
        Retriever::new(RetrieveOptions::new(Some(cache.path().to_path_buf()))),
    ));
    play_operator(&t, healthy(), Duration::from_millis(30));
    let mut h = Engine::spawn(t.client(), cfg);
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    let evil = LocalPayloads::pseudo_pull_spec(&f.v2).expect("canonical v2");
    list_updates(&t, json!([{"version": "1.1.0", "image": evil}])).await;
    let api: kube::Api<ClusterVersion> = kube::Api::all(t.client());
    let request = |du: Value| {
        let api = api.clone();
        let name = n.cv.clone();
        async move {
            api.patch(
                &name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(json!({"spec": {"desiredUpdate": du}})),
            )
            .await
            .expect("patch desiredUpdate");
        }
    };
    request(json!({"version": "1.1.0"})).await;
    let why = format!(
        "The update cannot be verified: the update service lists release image \"{evil}\" for version 1.1.0, which is a file:// location, not a registry pull spec; only a release image by digest can be verified (name one in spec.desiredUpdate.image)"
    );
    wait_snapshot(&mut h, "ReleaseAccepted False (listed file image)", 10, |s| {
        release_accepted(s, "False", &why)
    })
    .await;
    let cv = cv_of(&t).await;
    assert_eq!(
        cond(&cv, "ReleaseAccepted"),
        (
            "False".into(),
            "RetrievePayload".into(),
            format!("Retrieving payload failed version=\"1.1.0\" image=\"{evil}\" failure={why}")
        )
    );
    // Nothing of 1.1.0: the running release goes on, its history alone.
    assert_eq!(cv.status.desired.version, "1.0.0");
    assert_eq!(cv.status.history.len(), 1, "{:#?}", cv.status.history);
    assert_eq!(
        t.get(CONFIGMAP, &n.ns, "alpha").await.expect("alpha")["data"]["version"],
        "1.0.0"
    );

    // The same path named in the spec, forced: not a registered payload, refused.
    request(json!({"version": "1.1.0", "image": evil, "force": true})).await;
    let why = format!(
        "Unable to download and prepare the update: {evil} is not a payload registered with this operator: a file:// release is read only when it is the operator's own release or a payload given to it on its command line, never because a ClusterVersion or an update service names the path"
    );
    wait_snapshot(
        &mut h,
        "ReleaseAccepted False (unregistered file image)",
        10,
        |s| release_accepted(s, "False", &why),
    )
    .await;
    let cv = cv_of(&t).await;
    assert_eq!(cond(&cv, "ReleaseAccepted").1, "RetrievePayload");
    assert_eq!(cv.status.desired.version, "1.0.0");
    assert_eq!(
        t.get(CONFIGMAP, &n.ns, "alpha").await.expect("alpha")["data"]["version"],
        "1.0.0"
    );
    h.shutdown().await;
}

/// A resolver that reports every release but the own one as neither signature-verified nor
/// registered (what a registry resolver without a verifier reports), serving the payloads of
/// a [`LocalPayloads`].
#[derive(Debug)]
struct Unsigned(LocalPayloads);

impl cvo::reconcile::api::PayloadResolver for Unsigned {
    fn own_image(&self) -> String {
        self.0.own_image.clone()
    }

    fn resolve(&self, image: &str) -> Result<PathBuf, String> {
        self.0.resolve(image)
    }

    fn poll(&self, request: &cvo::reconcile::api::ResolveRequest) -> cvo::reconcile::api::Resolution {
        use cvo::reconcile::api::{Resolution, ResolveFailure};
        match self.0.resolve(&request.image) {
            Ok(dir) => Resolution::Ready {
                dir,
                accepted_risk: None,
                verified: false,
                registered: request.image == self.0.own_image,
            },
            Err(e) => Resolution::Failed(ResolveFailure::Retrieve(e)),
        }
    }
}

/// Issue 26 point 3: a release whose signature was not verified is refused (ReleaseAccepted
/// False, nothing applied) until the update is forced; then it is applied and history[0]
/// names the waived verification in its accepted risks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unverified_release_is_refused_until_forced_and_the_waiver_is_in_history() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let mut cfg = config(&f, &n, EngineMode::ActiveApply);
    cfg.payloads = Arc::new(Unsigned(LocalPayloads {
        own_image: IMAGE_1.into(),
        own_dir: f.v1.clone(),
        others: BTreeMap::from([(IMAGE_2.to_string(), f.v2.clone())]),
    }));
    play_operator(&t, healthy(), Duration::from_millis(30));
    let mut h = Engine::spawn(t.client(), cfg);
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    request_update(&t).await;
    let why = format!(
        "no signature of release image \"{IMAGE_2}\" was verified and it is not a payload registered with this operator"
    );
    wait_snapshot(&mut h, "ReleaseAccepted False (unverified)", 10, |s| {
        release_accepted(s, "False", &why)
    })
    .await;
    let cv = cv_of(&t).await;
    assert_eq!(
        cond(&cv, "ReleaseAccepted"),
        (
            "False".into(),
            "RetrievePayload".into(),
            format!(
                "Retrieving payload failed version=\"1.1.0\" image=\"{IMAGE_2}\" failure=The update cannot be verified: {why}"
            )
        )
    );
    assert_eq!(cv.status.desired.version, "1.0.0");
    assert_eq!(
        t.get(CONFIGMAP, &n.ns, "alpha").await.expect("alpha")["data"]["version"],
        "1.0.0"
    );
    let api: kube::Api<ClusterVersion> = kube::Api::all(t.client());
    api.patch(
        &n.cv,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"spec": {"desiredUpdate": {"force": true}}})),
    )
    .await
    .expect("patch force");
    wait_snapshot(&mut h, "forced update Completed", 20, |s| {
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == "1.1.0")
    })
    .await;
    let cv = cv_of(&t).await;
    assert_eq!(cond(&cv, "ReleaseAccepted").1, "PayloadLoaded");
    let h0 = &cv.status.history[0];
    assert_eq!(
        (h0.state, h0.version.as_str(), h0.image.as_str()),
        (UpdateState::Completed, "1.1.0", IMAGE_2)
    );
    let risks = h0.accepted_risks.clone().unwrap_or_default();
    assert_eq!(
        risks.lines().next(),
        Some(
            format!(
                "Target release version=\"1.1.0\" image=\"{IMAGE_2}\" cannot be verified, but continuing anyway because the update was forced: {why}"
            )
            .as_str()
        ),
        "{risks}"
    );
    assert_eq!(
        t.get(CONFIGMAP, &n.ns, "alpha").await.expect("alpha")["data"]["version"],
        "1.1.0"
    );
    h.shutdown().await;
}

/// The operator's own payload requested on a cluster that runs another release is an update
/// like any other: the preconditions run (here ClusterVersionRollback refuses 1.1.0 → 1.0.0),
/// in the running engine and in a new one whose worker holds no work yet (a one-shot
/// `cvo reconcile`), and nothing of it is applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operators_own_older_release_requested_runs_the_preconditions() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    let mut h = installed_then_updated(&t, &f).await;
    let at_b = release_state(&t, &n).await;
    // The text "Preconditions failed ..." comes with reason PreconditionChecks only.
    let refused = |s: &StatusSnapshot| {
        release_accepted(s, "False", "ClusterVersionRollback")
            && s.cluster_version.as_ref().is_some_and(|c| {
                find(&c.conditions, "ReleaseAccepted").is_some_and(|r| r.reason() == "PreconditionChecks")
            })
    };
    set_desired_update(&t, json!({"version": null, "image": IMAGE_1})).await;
    wait_snapshot(&mut h, "the rollback refused by its precondition", 10, refused).await;
    wait_passes_after(&mut h, "passes", 1).await;
    assert_eq!(release_state(&t, &n).await, at_b, "still at 1.1.0");
    h.shutdown().await;

    let mut h2 = Engine::spawn(t.client(), config(&f, &n, EngineMode::ActiveApply));
    wait_snapshot(&mut h2, "a new engine refuses it too", 10, refused).await;
    let cv = cv_of(&t).await;
    assert!(
        cond(&cv, "ReleaseAccepted").2.starts_with(&format!(
            "Preconditions failed for payload loaded version=\"1.0.0\" image=\"{IMAGE_1}\": "
        )),
        "{:?}",
        cond(&cv, "ReleaseAccepted")
    );
    assert_eq!(release_state(&t, &n).await, at_b, "still at 1.1.0");
    h2.shutdown().await;
}

/// An operator started without an update service (`cvo operator start` without
/// `--fetch-updates` or `--update-service`: [`cvo::cli::operator::not_fetched`]) says so in
/// `RetrievedUpdates=False` `NoUpstream`, and `cvo upgrade` on that cluster prints one line
/// saying updates are not retrieved and how to enable them (issue 29).
#[cfg(feature = "operator")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_without_an_update_service_says_updates_are_not_retrieved() {
    let (t, n) = cluster().await;
    let f = payloads(&n, &[], &[]);
    play_operator(&t, healthy(), Duration::from_millis(30));
    let mut cfg = config(&f, &n, EngineMode::ActiveApply);
    cfg.updates_not_fetched = Some(cvo::cli::operator::not_fetched());
    let mut h = Engine::spawn(t.client(), cfg);
    wait_snapshot(&mut h, "install Completed", 20, StatusSnapshot::is_completed).await;
    let mut cv = cv_of(&t).await;
    for _ in 0..50 {
        if find(&cv.status.conditions, "RetrievedUpdates").is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        cv = cv_of(&t).await;
    }
    assert_eq!(
        cond(&cv, "RetrievedUpdates"),
        (
            "False".into(),
            "NoUpstream".into(),
            cvo::cli::operator::NOT_FETCHED_MESSAGE.into()
        )
    );
    assert_eq!(cv.status.available_updates, None, "left as it was");
    h.shutdown().await;
    // What `cvo upgrade` prints of it.
    let (out, err) = cvo::cli::upgrade::status_view(&cv, false);
    assert_eq!(
        err,
        format!(
            "info: Available updates are not retrieved (RetrievedUpdates=False, NoUpstream): {}\n",
            cvo::cli::operator::NOT_FETCHED_MESSAGE
        )
    );
    assert!(!out.contains("No updates available"), "{out}");
}
