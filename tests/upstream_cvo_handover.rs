//! Issue 27 point 4: cvo does not fight the upstream CVO it replaces. The release payload
//! carries upstream's own Deployment `openshift-cluster-version/cluster-version-operator`
//! (upstream `install/0000_00_cluster-version-operator_30_deployment.yaml`, copied in
//! `tests/fixtures/upstream/cvo-repo/install/`); the engine applies it with `spec.replicas: 0`
//! (`cvo::reconcile::apply::builders::hand_over_upstream_cvo`), so it neither resurrects nor
//! scales back up the operator it replaces, while the rest of its spec tracks the release. A
//! watch-only engine reports no replicas drift for it (`builders::dry_run_handover`).
//!
//! The merge rules are checked pure; the engine runs on the in-process simulator, or on the
//! real kube-apiserver of `CVO_TEST_KUBECONFIG` (docs/testing.md). Upstream's Deployment has a
//! fixed namespace and name, so on the real server the scenarios of this file run one at a
//! time ([`SERIAL`]) and delete it when they end.

use std::{collections::BTreeMap, path::Path, sync::Arc, time::Duration};

use cvo::reconcile::{
    Engine, EngineConfig, EngineTimings,
    api::{Drift, EngineHandle, EngineMode, LocalPayloads, StatusSnapshot},
    apply::{
        ApplyContext, build_required,
        builders::{UPSTREAM_CVO_DEPLOYMENT, hand_over_upstream_cvo},
        merge_manifest,
    },
    payload::PayloadState,
};
use k8s_openapi::api::apps::v1::Deployment;
use serde_json::{Value, json};

#[path = "common/cluster.rs"]
mod cluster;
mod common;
use cluster::{CV, Handle, Res, TestCluster};
use common::Unmet;

const IMAGE: &str = "example.com/release@sha256:1111";
const DEPLOYMENT: Res = Res("apps", "v1", "Deployment", "deployments", true);
const UPSTREAM_FILE: &str = "cvo-repo/install/0000_00_cluster-version-operator_30_deployment.yaml";
const UPSTREAM_NAMESPACE_FILE: &str = "cvo-repo/install/0000_00_cluster-version-operator_00_namespace.yaml";

/// One scenario at a time: they share upstream's fixed Deployment on the real server.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Upstream's Deployment manifest as the payload holds it.
fn upstream_manifest() -> Option<String> {
    let p = common::upstream_fixture(UPSTREAM_FILE, "upstream_cvo_handover")?;
    Some(std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// Upstream's Deployment rendered for `IMAGE`, as JSON.
fn upstream_rendered() -> Option<Value> {
    let text = upstream_manifest()?
        .replace("{{.ReleaseImage}}", IMAGE)
        .replace("{{ .ClusterProfile }}", "self-managed-high-availability");
    Some(serde_norway::from_str(&text).expect("upstream's Deployment parses"))
}

fn replicas(v: &Value) -> Option<i64> {
    v["spec"]["replicas"].as_i64()
}

#[test]
fn the_upstream_deployment_is_recognised_by_namespace_and_name() {
    let Some(manifest) = upstream_rendered() else {
        return;
    };
    let (ns, name, container) = UPSTREAM_CVO_DEPLOYMENT;
    assert_eq!(manifest["metadata"]["namespace"], ns);
    assert_eq!(manifest["metadata"]["name"], name);
    assert_eq!(
        manifest["spec"]["template"]["spec"]["containers"][0]["name"],
        container
    );
    assert_eq!(replicas(&manifest), None, "upstream leaves replicas unset (1)");
    let mut d: Deployment = serde_json::from_value(manifest.clone()).expect("decodes");
    assert!(hand_over_upstream_cvo(&mut d));
    assert_eq!(d.spec.replicas, Some(0));
    // Another Deployment, or the same name in another namespace, is left alone.
    for (ns, name) in [("openshift-cluster-version", "cvo"), ("other", name)] {
        let mut other = manifest.clone();
        other["metadata"]["namespace"] = json!(ns);
        other["metadata"]["name"] = json!(name);
        let mut d: Deployment = serde_json::from_value(other.clone()).expect("decodes");
        assert!(!hand_over_upstream_cvo(&mut d), "{ns}/{name}");
        assert_eq!(d.spec.replicas, None, "{ns}/{name}");
        let built = build_required(&ApplyContext::default(), &other).expect("builds");
        assert_eq!(replicas(&built), None, "{ns}/{name}");
    }
}

#[test]
fn the_merge_keeps_zero_and_scales_one_down_to_zero() {
    let Some(manifest) = upstream_rendered() else {
        return;
    };
    let ctx = ApplyContext::default();
    let required = build_required(&ctx, &manifest).expect("builds");
    assert_eq!(replicas(&required), Some(0));
    // The rest of the manifest is applied as it is: the image tracks the release.
    assert_eq!(
        required["spec"]["template"]["spec"]["containers"][0]["image"],
        IMAGE
    );
    for mode in [
        PayloadState::Initializing,
        PayloadState::Updating,
        PayloadState::Reconciling,
    ] {
        // Live at 0 (scaled down by the administrator, or by an earlier pass): unchanged.
        let mut live = required.clone();
        live["spec"]["replicas"] = json!(0);
        let (modified, _, merged) = merge_manifest(mode, &live, &required).expect("merges");
        assert!(!modified, "{mode:?}: {merged}");
        // Live at 1 (upstream's CVO still running, or scaled back up): down to 0.
        live["spec"]["replicas"] = json!(1);
        let (modified, _, merged) = merge_manifest(mode, &live, &required).expect("merges");
        assert!(modified, "{mode:?}");
        assert_eq!(replicas(&merged), Some(0), "{mode:?}");
        // Any other field of the live object that drifted is still put back.
        live["spec"]["replicas"] = json!(0);
        live["spec"]["template"]["spec"]["containers"][0]["image"] = json!("old@sha256:0");
        let (modified, _, merged) = merge_manifest(mode, &live, &required).expect("merges");
        assert!(modified, "{mode:?}");
        assert_eq!(
            merged["spec"]["template"]["spec"]["containers"][0]["image"],
            IMAGE
        );
        assert_eq!(replicas(&merged), Some(0), "{mode:?}");
    }
}

/// A payload of two manifests: upstream's namespace and Deployment (from the fixture), in
/// `manifests/`, the operator's own manifests that the engine renders (`{{.ReleaseImage}}`),
/// where upstream's CVO image holds them.
fn write_payload(dir: &Path, deployment: &str) {
    let p = common::PayloadDir::new(dir, "1.0.0");
    let ns = common::upstream_fixture(UPSTREAM_NAMESPACE_FILE, "upstream_cvo_handover")
        .expect("upstream's namespace manifest");
    let ns = std::fs::read_to_string(&ns).expect("read upstream's namespace manifest");
    p.own_file("0000_00_cluster-version-operator_00_namespace.yaml", &ns)
        .own_file("0000_00_cluster-version-operator_30_deployment.yaml", deployment);
}

fn config(dir: &Path, cv: &str) -> EngineConfig {
    EngineConfig {
        cluster_version_name: cv.to_owned(),
        timings: EngineTimings::scaled(0.005),
        ..EngineConfig::new(Arc::new(LocalPayloads {
            own_image: IMAGE.into(),
            own_dir: dir.to_path_buf(),
            others: BTreeMap::new(),
        }))
    }
}

async fn wait_snapshot(
    h: &mut EngineHandle,
    what: &str,
    pred: impl Fn(&StatusSnapshot) -> bool,
) -> Arc<StatusSnapshot> {
    match common::watch_until(&mut h.status, Duration::from_secs(30), |s| pred(s)).await {
        Ok(v) => v,
        Err(Unmet::Closed(_)) => panic!("engine stopped while waiting for {what}"),
        Err(Unmet::TimedOut(cur)) => panic!(
            "timed out waiting for {what}; state {:?} done {}/{} failure {:?} error {:?}",
            cur.state, cur.done, cur.total, cur.failure, cur.last_error
        ),
    }
}

/// Waits until the engine has finished `n` more passes.
async fn passes(h: &mut EngineHandle, n: u64) {
    let start = h.status.borrow().counters.passes;
    wait_snapshot(h, &format!("{n} more passes"), |s| {
        s.counters.passes >= start + n && !s.running
    })
    .await;
}

/// The live upstream Deployment (it must exist).
async fn live(t: &Handle) -> Value {
    let (ns, name, _) = UPSTREAM_CVO_DEPLOYMENT;
    t.get(DEPLOYMENT, ns, name)
        .await
        .expect("the upstream CVO Deployment exists")
}

/// The cluster of a scenario: the ClusterVersion and upstream's Deployment are deleted when it
/// ends (on the real server), and before it starts (a scenario that failed earlier).
async fn cluster() -> TestCluster {
    let mut t = TestCluster::new().await;
    let (ns, name, _) = UPSTREAM_CVO_DEPLOYMENT;
    if t.is_real() {
        t.delete(DEPLOYMENT, ns, name).await;
        for _ in 0..100 {
            if t.get(DEPLOYMENT, ns, name).await.is_none() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let cv = t.name("version");
    t.clean_up(CV, "", &cv);
    t.clean_up(DEPLOYMENT, ns, name);
    t
}

/// The namespace exists before a test creates upstream's Deployment in it.
async fn ensure_namespace(t: &Handle) {
    let ns = UPSTREAM_CVO_DEPLOYMENT.0;
    if t.get(cluster::NAMESPACE, "", ns).await.is_none() {
        t.create(
            cluster::NAMESPACE,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
        .await;
    }
}

/// The cluster already runs upstream's Deployment at `replicas` (the administrator scaled it
/// down before starting cvo, or did not).
async fn existing_upstream(t: &Handle, replicas: i64) {
    let Some(mut d) = upstream_rendered() else { return };
    d["spec"]["replicas"] = json!(replicas);
    ensure_namespace(t).await;
    t.create(DEPLOYMENT, d).await;
}

/// Issue 27 point 4: an upstream CVO Deployment scaled to 0 stays at 0 over N passes (and the
/// engine does not even write it); scaled back to 1 behind cvo's back, the next passes put it
/// at 0 again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scaled_down_upstream_cvo_stays_at_zero_and_is_scaled_down_again() {
    let _one = SERIAL.lock().await;
    let Some(manifest) = upstream_manifest() else {
        return;
    };
    let t = cluster().await;
    existing_upstream(&t, 0).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    write_payload(tmp.path(), &manifest);
    let mut h = Engine::spawn(t.client(), config(tmp.path(), &t.name("version")));
    wait_snapshot(&mut h, "install Completed", StatusSnapshot::is_completed).await;
    // The first pass may fill fields the manifest states and the existing object lacked; after
    // it, nothing is written to the Deployment.
    let after_install = live(&t).await;
    assert_eq!(replicas(&after_install), Some(0), "not scaled up by the install");
    let rv0 = after_install["metadata"]["resourceVersion"].clone();
    passes(&mut h, 4).await;
    let d = live(&t).await;
    assert_eq!(replicas(&d), Some(0), "still 0 after 4 more passes");
    assert_eq!(
        d["metadata"]["resourceVersion"], rv0,
        "the engine did not write it in 4 passes (the manifest matches it at 0)"
    );
    // Its spec follows the release: the payload's image (the manifest's own, rendered).
    assert_eq!(d["spec"]["template"]["spec"]["containers"][0]["image"], IMAGE);

    // Someone (or something) scales it back to 1: the next passes scale it down again.
    let mut up = d.clone();
    up["spec"]["replicas"] = json!(1);
    assert!(t.edit(DEPLOYMENT, up).await, "the edit to 1 is written");
    assert_eq!(replicas(&live(&t).await), Some(1));
    passes(&mut h, 2).await;
    let d = live(&t).await;
    assert_eq!(replicas(&d), Some(0), "scaled down to 0 again");
    passes(&mut h, 3).await;
    assert_eq!(replicas(&live(&t).await), Some(0), "and it stays at 0");
    let snap = h.status.borrow().clone();
    assert!(snap.is_completed(), "{:?}", snap.failure);
    h.shutdown().await;
}

/// Issue 27 point 4: cvo started while the upstream CVO still runs (1 replica): the engine's
/// first pass scales it to 0 and it stays there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_upstream_cvo_ends_at_zero() {
    let _one = SERIAL.lock().await;
    let Some(manifest) = upstream_manifest() else {
        return;
    };
    let t = cluster().await;
    existing_upstream(&t, 1).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    write_payload(tmp.path(), &manifest);
    let mut h = Engine::spawn(t.client(), config(tmp.path(), &t.name("version")));
    wait_snapshot(&mut h, "install Completed", StatusSnapshot::is_completed).await;
    assert_eq!(
        replicas(&live(&t).await),
        Some(0),
        "scaled down by the first pass"
    );
    passes(&mut h, 3).await;
    assert_eq!(replicas(&live(&t).await), Some(0), "and it stays at 0");
    h.shutdown().await;
}

/// Issue 27 point 4: on a cluster without it (cvo installed first), the engine creates
/// upstream's Deployment at 0 replicas: it never starts the operator it replaces.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absent_upstream_cvo_is_created_at_zero() {
    let _one = SERIAL.lock().await;
    let Some(manifest) = upstream_manifest() else {
        return;
    };
    let t = cluster().await;
    let tmp = tempfile::tempdir().expect("tempdir");
    write_payload(tmp.path(), &manifest);
    let mut h = Engine::spawn(t.client(), config(tmp.path(), &t.name("version")));
    wait_snapshot(&mut h, "install Completed", StatusSnapshot::is_completed).await;
    let d = live(&t).await;
    assert_eq!(replicas(&d), Some(0), "created at 0: {}", d["spec"]);
    passes(&mut h, 3).await;
    assert_eq!(replicas(&live(&t).await), Some(0));
    h.shutdown().await;
}

/// The replicas changes a watch-only engine reports for upstream's Deployment.
fn replicas_drift(s: &StatusSnapshot) -> Vec<String> {
    let (ns, name, _) = UPSTREAM_CVO_DEPLOYMENT;
    s.drift
        .iter()
        .filter(|d| d.namespace == ns && d.name == name)
        .flat_map(|d| match &d.drift {
            Drift::Update { diff } => diff
                .iter()
                .filter(|c| c.path == ".spec.replicas")
                .map(|c| format!("{:?} -> {:?}", c.from, c.to))
                .collect(),
            other => vec![format!("{other:?}")],
        })
        .collect()
}

/// A watch-only engine (the dashboard's, `--watch-only`) beside the upstream CVO that runs the
/// cluster reports no replicas drift for its Deployment, and none either once cvo took over
/// (0); it writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_only_beside_the_upstream_cvo_reports_no_replicas_drift() {
    let _one = SERIAL.lock().await;
    let Some(manifest) = upstream_manifest() else {
        return;
    };
    let t = cluster().await;
    existing_upstream(&t, 1).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    write_payload(tmp.path(), &manifest);
    let mut cfg = config(tmp.path(), &t.name("version"));
    cfg.mode = EngineMode::WatchOnly;
    let mut h = Engine::spawn(t.client(), cfg);
    let snap = wait_snapshot(&mut h, "a watch-only pass", |s| {
        s.counters.passes >= 1 && !s.running
    })
    .await;
    assert_eq!(
        replicas_drift(&snap),
        Vec::<String>::new(),
        "upstream's CVO runs: its 1 stands"
    );
    assert_eq!(replicas(&live(&t).await), Some(1));

    // cvo took over: upstream's at 0, still no drift (the 0 is what cvo keeps).
    let mut d = live(&t).await;
    d["spec"]["replicas"] = json!(0);
    assert!(t.edit(DEPLOYMENT, d).await);
    passes(&mut h, 2).await;
    let snap = h.status.borrow().clone();
    assert_eq!(
        replicas_drift(&snap),
        Vec::<String>::new(),
        "cvo runs: its 0 stands"
    );
    assert_eq!(replicas(&live(&t).await), Some(0));
    let writes: u64 = snap
        .counters
        .requests
        .iter()
        .filter(|(v, _)| cvo::reconcile::runtime::client::is_write_verb(v))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(writes, 0, "{:?}", snap.counters.requests);
    h.shutdown().await;
}
