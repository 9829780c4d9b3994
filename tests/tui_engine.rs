//! The dashboard's embedded engine on a live cluster (`cvo tui`, `cvo` alone), against a
//! `cvo sim serve` child process with an audit log: watch-only finds no drift on a converged
//! cluster and the exact field diff on a drifted one while writing nothing; a live foreign
//! Lease refuses the switch to active-apply (nothing written); an expired one is taken and the
//! engine applies; switching back releases the Lease with one write and logs a switch, not a
//! lost lease.
//!
//! With `CVO_TEST_KUBECONFIG` (and `CVO_TEST_AUDIT_LOG`, the server's JSON audit log: `up.sh`
//! with `AUDIT_LOG`) the same scenarios run against that real kube-apiserver instead, one at a
//! time (they share the ClusterVersion `version` and its Lease), counting cvo's requests
//! (`User-Agent: cvo/...`) from its audit log, and delete what they created when they end.

#[path = "common/cluster.rs"]
mod cluster;
mod common;

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::Arc,
    time::Duration,
};

use cvo::{
    cli::{
        args::RegistryArgs,
        tui::{PayloadSource, spawn_engine, spawn_engine_sharing},
    },
    reconcile::{
        EngineTimings,
        api::{Command as EngineCommand, Drift, EngineHandle, EngineMode, StatusSnapshot},
    },
};
use k8s_openapi::api::{coordination::v1::Lease, core::v1::ConfigMap};
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use serde_json::json;

/// The cluster of a test: a `cvo sim serve` child, or the real server of `CVO_TEST_KUBECONFIG`
/// (then `child` is `None` and `_turn` keeps the other tests of this file waiting).
struct Server {
    child: Option<Child>,
    kubeconfig: PathBuf,
    audit: PathBuf,
    dir: tempfile::TempDir,
    _turn: Option<tokio::sync::MutexGuard<'static, ()>>,
}

/// One test at a time on the real server.
static REAL_SERVER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Server {
    async fn start() -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        if let Some(kubeconfig) = cluster::real_kubeconfig() {
            let turn = REAL_SERVER.lock().await;
            let audit = std::env::var_os("CVO_TEST_AUDIT_LOG")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .expect("CVO_TEST_KUBECONFIG needs CVO_TEST_AUDIT_LOG: the server's audit log (up.sh AUDIT_LOG=...)");
            let server = Server {
                child: None,
                kubeconfig,
                audit,
                dir,
                _turn: Some(turn),
            };
            let c = client(&server).await;
            cluster::install_crds(&c).await;
            let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(c);
            let _ = ns
                .create(
                    &Default::default(),
                    &serde_json::from_value(json!({"metadata": {"name": "openshift-cluster-version"}}))
                        .expect("namespace"),
                )
                .await;
            return server;
        }
        let kubeconfig = dir.path().join("kubeconfig");
        let audit = dir.path().join("audit.jsonl");
        let args = [std::ffi::OsStr::new("--audit-log"), audit.as_os_str()];
        let (child, _) = common::spawn_sim_serve(&kubeconfig, &args, Stdio::null(), Duration::from_secs(10));
        Server {
            child: Some(child),
            kubeconfig,
            audit,
            dir,
            _turn: None,
        }
    }

    fn is_real(&self) -> bool {
        self.child.is_none()
    }

    /// On the real server: deletes the shared objects a scenario leaves (the ClusterVersion
    /// `version`, its Lease, the verification record) and `extra` (`(api, namespace, name)`
    /// with namespace empty for cluster-scoped objects), so the next scenario starts clean.
    async fn clean_up(&self, extra: &[(kube::api::ApiResource, &str, &str)]) {
        if !self.is_real() {
            return;
        }
        let c = client(self).await;
        let gvk = |g: &str, v: &str, k: &str, plural: &str| {
            kube::api::ApiResource::from_gvk_with_plural(&kube::api::GroupVersionKind::gvk(g, v, k), plural)
        };
        let mut all = vec![
            (
                gvk("config.openshift.io", "v1", "ClusterVersion", "clusterversions"),
                "",
                "version",
            ),
            (
                gvk("coordination.k8s.io", "v1", "Lease", "leases"),
                "openshift-cluster-version",
                "version",
            ),
            (
                gvk("", "v1", "ConfigMap", "configmaps"),
                "openshift-cluster-version",
                "cvo-verified-manifests",
            ),
        ];
        all.extend(extra.iter().cloned());
        for (ar, ns, name) in all {
            let api: Api<kube::api::DynamicObject> = if ns.is_empty() {
                Api::all_with(c.clone(), &ar)
            } else {
                Api::namespaced_with(c.clone(), ns, &ar)
            };
            match api.delete(name, &Default::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => eprintln!("cleaning up {} {ns}/{name}: {e}", ar.kind),
            }
        }
    }

    /// Audit lines so far.
    fn audit_len(&self) -> usize {
        self.audit_lines().len()
    }

    /// Audit lines so far as `{verb, path, query}` (the simulator's shape). On the real server:
    /// the requests of cvo (`User-Agent: cvo/...`), whatever their client: completed ones, and
    /// watches once started.
    fn audit_lines(&self) -> Vec<serde_json::Value> {
        let lines = std::fs::read_to_string(&self.audit).unwrap_or_default();
        let lines = lines
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok());
        if !self.is_real() {
            return lines.collect();
        }
        lines
            .filter(|e| {
                // A watch is logged when its response starts (it completes when it ends).
                let stage = if e["verb"] == "watch" {
                    "ResponseStarted"
                } else {
                    "ResponseComplete"
                };
                e["stage"] == stage && e["userAgent"].as_str().is_some_and(|ua| ua.starts_with("cvo/"))
            })
            .map(|e| {
                let uri = e["requestURI"].as_str().unwrap_or_default();
                let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
                json!({"verb": e["verb"], "path": path, "query": query})
            })
            .collect()
    }

    /// Writes (create, update, patch, delete; not dry runs) after audit line `from`, as
    /// `VERB PATH`.
    fn writes_since(&self, from: usize) -> Vec<String> {
        self.audit_lines()
            .into_iter()
            .skip(from)
            .filter(|l| {
                let verb = l["verb"].as_str().unwrap_or_default();
                let query = l["query"].as_str().unwrap_or_default();
                ["create", "update", "patch", "delete"].contains(&verb) && !query.contains("dryRun")
            })
            .map(|l| {
                format!(
                    "{} {}",
                    l["verb"].as_str().unwrap_or("?"),
                    l["path"].as_str().unwrap_or("?")
                )
            })
            .collect()
    }
}

/// A small payload: a namespace and two ConfigMaps.
fn payload(dir: &Path) {
    let p = common::PayloadDir::new(dir, "1.0.0");
    let ann = common::ANN;
    p.file(
        "0000_00_tui_00_ns.yaml",
        &format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-tui\n{ann}"),
    );
    for (i, name) in ["alpha", "beta"].iter().enumerate() {
        p.file(
            &format!("0000_10_tui_{i:02}_cm.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: openshift-tui\n{ann}data:\n  key: \"payload\"\n"
            ),
        );
    }
}

async fn client(server: &Server) -> kube::Client {
    cvo::cluster::live::connect(Some(&server.kubeconfig), None)
        .await
        .expect("connect")
        .client
}

/// Converges the simulated cluster to the payload with `cvo reconcile --once` (which also
/// creates the ClusterVersion naming the payload's `file://` pseudo pull spec).
fn converge(server: &Server, payload: &Path) {
    let payload = payload.to_str().expect("utf-8 payload path");
    let kubeconfig = server.kubeconfig.to_str().expect("utf-8 kubeconfig path");
    let (code, stdout, stderr) = common::cvo_offline(&[
        "reconcile",
        "--once",
        "--timeout",
        "60",
        "--payload",
        payload,
        "--kubeconfig",
        kubeconfig,
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// Waits (30 s at most) for a snapshot that satisfies `ok`.
async fn wait_for(
    h: &mut EngineHandle,
    what: &str,
    ok: impl Fn(&StatusSnapshot) -> bool,
) -> Arc<StatusSnapshot> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let s = h.status.borrow_and_update().clone();
        if ok(&s) {
            return s;
        }
        if tokio::time::timeout_at(deadline, h.status.changed())
            .await
            .is_err()
        {
            panic!(
                "timed out waiting for {what}; last snapshot: state {:?} mode {:?} passes {} running {} last command {:?} payload error {:?} events {:#?}",
                s.state,
                s.mode,
                s.counters.passes,
                s.running,
                s.last_command,
                s.payload_error,
                s.events.iter().map(|e| e.text.clone()).collect::<Vec<_>>()
            );
        }
    }
}

/// A whole pass finished after `passes` passes.
fn pass_after(passes: u64) -> impl Fn(&StatusSnapshot) -> bool {
    move |s| s.counters.passes > passes && !s.running
}

fn changed(s: &StatusSnapshot) -> Vec<(String, Drift)> {
    s.drift
        .iter()
        .filter(|d| !d.drift.is_none())
        .map(|d| (format!("{}/{}", d.namespace, d.name), d.drift.clone()))
        .collect()
}

async fn put_lease(client: &kube::Client, holder: &str, renewed: chrono::DateTime<chrono::Utc>) {
    let api: Api<Lease> = Api::namespaced(client.clone(), "openshift-cluster-version");
    let t = renewed.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let body = json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "version", "namespace": "openshift-cluster-version"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 137, "renewTime": t, "acquireTime": t}
    });
    api.patch(
        "version",
        &PatchParams::apply("test").force(),
        &Patch::Apply(&body),
    )
    .await
    .expect("write the Lease");
}

/// `cvo tui`'s shape: the dashboard's feed and the watch-only engine in one process over one
/// registry of informers. Exactly one LIST and one WATCH of ClusterVersions and of
/// ClusterOperators serve both, the payload's ClusterOperator included (no GET of it either),
/// counted from the server's audit log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_and_its_engine_share_one_watch_per_kind() {
    let server = Server::start().await;
    let p = server.dir.path().join("payload");
    payload(&p);
    // A ClusterOperator of the payload, as every real payload has them: the engine's payload
    // cache reads it from the shared informer rather than a watch of its own.
    common::PayloadDir::new(&p, "1.0.0").file(
        "0000_20_tui_00_clusteroperator.yaml",
        &format!(
            "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: {TUI_OPERATOR}\n{}status:\n  versions:\n  - name: operator\n    version: \"1.0.0\"\n",
            common::ANN
        ),
    );
    let c = client(&server).await;
    healthy_operator(&c, TUI_OPERATOR, "1.0.0").await;
    converge(&server, &p);
    let start = server.audit_len();
    let informers = cvo::informers::Informers::new(c.clone());
    let mut h = spawn_engine_sharing(
        c.clone(),
        Some(&informers),
        &PayloadSource::Registry,
        &RegistryArgs::default(),
        EngineTimings::scaled(0.01),
    )
    .await
    .expect("engine");
    let mut feed = cvo::cluster::live::watch_state_from(&informers, "test".into());
    let s = wait_for(&mut h, "the first watch-only pass", pass_after(0)).await;
    assert_eq!(s.payload_error, None);
    let state = common::wait_for(&mut feed, "the feed's first sync", |s| {
        matches!(
            s.feed,
            cvo::cluster::FeedStatus::Live {
                synced: true,
                error: None
            }
        )
    })
    .await;
    assert!(
        state.cluster_version.is_some(),
        "the feed shows the ClusterVersion"
    );
    // A second pass reads the ClusterVersion and the operators again: from the same stores.
    let passes = s.counters.passes;
    h.commands.send(EngineCommand::ReconcileNow).await.expect("send");
    let s = wait_for(&mut h, "a second pass", pass_after(passes)).await;
    // One ClusterVersion in memory, not two: the engine's snapshot holds the informer's object.
    let cached = informers
        .all::<cvo::openshift::ClusterVersion>(Some(cvo::cluster::live::CLUSTER_VERSION_FIELDS))
        .get(None, "version")
        .expect("the informer holds the ClusterVersion");
    let held = s.cluster_version.as_ref().expect("the snapshot's ClusterVersion");
    assert!(
        std::ptr::eq(held.object(), &*cached),
        "the snapshot holds a copy of the ClusterVersion (resourceVersion {:?}), not the informer's (resourceVersion {:?})",
        held.object().metadata.resource_version,
        cached.metadata.resource_version
    );
    let lines: Vec<serde_json::Value> = server.audit_lines().into_iter().skip(start).collect();
    let count = |verb: &str, plural: &str| {
        let path = format!("/apis/config.openshift.io/v1/{plural}");
        lines
            .iter()
            .filter(|l| l["verb"] == verb && l["path"] == path.as_str())
            .count()
    };
    let counts = [
        ("list clusterversions", count("list", "clusterversions")),
        ("watch clusterversions", count("watch", "clusterversions")),
        ("list clusteroperators", count("list", "clusteroperators")),
        ("watch clusteroperators", count("watch", "clusteroperators")),
        (
            "get clusteroperators",
            lines
                .iter()
                .filter(|l| {
                    l["verb"] == "get"
                        && l["path"]
                            .as_str()
                            .is_some_and(|p| p.starts_with("/apis/config.openshift.io/v1/clusteroperators/"))
                })
                .count(),
        ),
    ];
    assert_eq!(
        counts,
        [
            ("list clusterversions", 1),
            ("watch clusterversions", 1),
            ("list clusteroperators", 1),
            ("watch clusteroperators", 1),
            ("get clusteroperators", 0),
        ],
        "started informers: {:?}",
        informers.started()
    );
    let _ = tokio::time::timeout(Duration::from_secs(10), h.shutdown()).await;
    let co = kube::api::ApiResource::erase::<cvo::openshift::ClusterOperator>(&());
    server.clean_up(&[(co, "", TUI_OPERATOR)]).await;
}

/// The ClusterOperator of [`the_dashboard_and_its_engine_share_one_watch_per_kind`]'s payload.
const TUI_OPERATOR: &str = "tui-operator";

/// Creates the ClusterOperator `name` reporting `version` and healthy (Available, not
/// Degraded, not Progressing), as its operator would.
async fn healthy_operator(c: &kube::Client, name: &str, version: &str) {
    let api: Api<cvo::openshift::ClusterOperator> = Api::all(c.clone());
    let co: cvo::openshift::ClusterOperator = serde_json::from_value(json!({
        "metadata": {"name": name}, "spec": {}
    }))
    .expect("ClusterOperator");
    api.create(&Default::default(), &co)
        .await
        .expect("create the ClusterOperator");
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let cond = |t: &str, s: &str| json!({"type": t, "status": s, "lastTransitionTime": now});
    let status = json!({"status": {
        "conditions": [cond("Available", "True"), cond("Degraded", "False"), cond("Progressing", "False")],
        "versions": [{"name": "operator", "version": version}],
    }});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("report the ClusterOperator's status");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_only_then_active_apply_with_lease_safety() {
    let server = Server::start().await;
    let p = server.dir.path().join("payload");
    payload(&p);
    converge(&server, &p);
    let c = client(&server).await;

    // 1. Watch-only on the converged cluster: 0 drift, 0 writes.
    let start = server.audit_len();
    let timings = EngineTimings::scaled(0.01);
    let mut h = spawn_engine(
        c.clone(),
        &PayloadSource::Registry,
        &RegistryArgs::default(),
        timings,
    )
    .await
    .expect("engine");
    let s = wait_for(&mut h, "the first watch-only pass", pass_after(0)).await;
    assert_eq!(s.mode, EngineMode::WatchOnly);
    assert_eq!(s.payload_error, None);
    assert_eq!(s.total, 3, "{:?}", s.tasks);
    assert_eq!(changed(&s), vec![], "a converged cluster has no drift");
    let lease = s.lease.clone().expect("the Lease was read at start");
    assert_eq!(
        (lease.holder, lease.alive),
        (None, false),
        "cvo reconcile released it"
    );
    assert_eq!(server.writes_since(start), Vec::<String>::new());

    // 2. Drift: someone edits a ConfigMap; the next pass shows exactly that field.
    let cms: Api<ConfigMap> = Api::namespaced(c.clone(), "openshift-tui");
    cms.patch(
        "beta",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"key": "edited"}})),
    )
    .await
    .expect("edit");
    let from = server.audit_len();
    let passes = s.counters.passes;
    h.commands.send(EngineCommand::ReconcileNow).await.expect("send");
    let s = wait_for(&mut h, "a pass that sees the edit", |s| {
        pass_after(passes)(s) && !changed(s).is_empty()
    })
    .await;
    let drift = changed(&s);
    assert_eq!(drift.len(), 1, "{drift:?}");
    assert_eq!(drift[0].0, "openshift-tui/beta");
    let Drift::Update { diff } = &drift[0].1 else {
        panic!("{drift:?}")
    };
    let fields: Vec<(String, Option<serde_json::Value>, Option<serde_json::Value>)> = diff
        .iter()
        .map(|f| (f.path.clone(), f.from.clone(), f.to.clone()))
        .collect();
    assert_eq!(
        fields,
        vec![(
            ".data.key".to_string(),
            Some(json!("edited")),
            Some(json!("payload"))
        )]
    );
    assert_eq!(
        server.writes_since(from),
        Vec::<String>::new(),
        "watch-only wrote"
    );

    // 3. A live foreign Lease: the switch is refused, nothing is written.
    put_lease(&c, "in-cluster-cvo_1", chrono::Utc::now()).await;
    let from = server.audit_len();
    h.commands
        .send(EngineCommand::SetMode(EngineMode::ActiveApply))
        .await
        .expect("send");
    let s = wait_for(&mut h, "the refusal", |s| {
        s.last_command
            .as_ref()
            .is_some_and(|c| c.command == "mode active-apply")
    })
    .await;
    let why = s
        .last_command
        .as_ref()
        .expect("outcome")
        .result
        .clone()
        .expect_err("refused");
    assert!(why.contains("held by in-cluster-cvo_1"), "{why}");
    assert!(
        why.contains("oc scale deployment/cluster-version-operator"),
        "{why}"
    );
    assert_eq!(s.mode, EngineMode::WatchOnly);
    let lease = s.lease.clone().expect("lease");
    assert_eq!(
        (lease.holder.as_deref(), lease.alive, lease.ours),
        (Some("in-cluster-cvo_1"), true, false)
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        server.writes_since(from),
        Vec::<String>::new(),
        "a refused switch wrote"
    );

    // 4. The same Lease expired: the switch takes it and the engine applies (repairs the edit).
    put_lease(
        &c,
        "in-cluster-cvo_1",
        chrono::Utc::now() - chrono::Duration::hours(1),
    )
    .await;
    h.commands
        .send(EngineCommand::SetMode(EngineMode::ActiveApply))
        .await
        .expect("send");
    let s = wait_for(&mut h, "leading", |s| s.leader).await;
    assert_eq!(s.mode, EngineMode::ActiveApply);
    assert!(
        s.lease.as_ref().is_some_and(|l| l.ours && l.alive),
        "{:?}",
        s.lease
    );
    let passes = s.counters.passes;
    h.commands.send(EngineCommand::ReconcileNow).await.expect("send");
    wait_for(&mut h, "an applying pass", pass_after(passes)).await;
    let beta = cms.get("beta").await.expect("get");
    assert_eq!(
        beta.data.and_then(|d| d.get("key").cloned()).as_deref(),
        Some("payload"),
        "active-apply repaired the drift"
    );

    // 5. Back to watch-only: the Lease is released with one write, and nothing else is written.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let from = server.audit_len();
    h.commands
        .send(EngineCommand::SetMode(EngineMode::WatchOnly))
        .await
        .expect("send");
    let s = wait_for(&mut h, "watch-only again", |s| {
        s.mode == EngineMode::WatchOnly && !s.leader
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let writes = server.writes_since(from);
    assert_eq!(
        writes,
        vec![
            "update /apis/coordination.k8s.io/v1/namespaces/openshift-cluster-version/leases/version"
                .to_string()
        ],
    );
    let leases: Api<Lease> = Api::namespaced(c.clone(), "openshift-cluster-version");
    let holder = leases
        .get("version")
        .await
        .expect("lease")
        .spec
        .and_then(|s| s.holder_identity);
    assert_eq!(holder, None, "released");
    let texts: Vec<String> = s.events.iter().map(|e| e.text.clone()).collect();
    assert!(
        texts
            .iter()
            .any(|t| t == "lease released: watch-only, writes stopped"),
        "{texts:#?}"
    );
    assert!(!texts.iter().any(|t| t.contains("lease lost")), "{texts:#?}");
    h.shutdown().await;
    let ns = kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&());
    server.clean_up(&[(ns, "", "openshift-tui")]).await;
}

/// Whether an audit line is a request naming one object of the payload written by
/// `scripts/gen-payload.sh` (its namespaces `openshift-compNN`, ClusterRoles `cvo-bench-cr-N`,
/// CRDs `widgetN.cvo.example.com`).
fn names_payload_object(path: &str) -> bool {
    path.contains("/namespaces/openshift-comp")
        || path.contains("/clusterroles/cvo-bench-cr-")
        || path.contains("/customresourcedefinitions/widget")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_watch_only_pass_on_an_unchecked_cluster_lists_each_kind_once_and_gets_nothing() {
    let server = Server::start().await;
    let p = server.dir.path().join("payload");
    let generated = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/gen-payload.sh"))
        .arg(&p)
        .arg("120")
        .output()
        .expect("gen-payload.sh runs");
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    converge(&server, &p);
    let c = client(&server).await;
    // A cluster cvo has not checked: no verification record (an upstream CVO never writes one).
    let records: Api<ConfigMap> = Api::namespaced(c.clone(), "openshift-cluster-version");
    records
        .delete("cvo-verified-manifests", &Default::default())
        .await
        .expect("the record existed");
    // One object edited behind the engine's back, one Secret too (its values stay masked).
    let cms: Api<ConfigMap> = Api::namespaced(c.clone(), "openshift-comp03");
    cms.patch(
        "cm-3",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"index": "edited"}})),
    )
    .await
    .expect("edit cm-3");
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(c.clone(), "openshift-comp00");
    secrets
        .patch(
            "secret-7",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"index": "c2VjcmV0LXZhbHVl"}})),
        )
        .await
        .expect("edit secret-7");

    let start = server.audit_len();
    let mut h = spawn_engine(
        c.clone(),
        &PayloadSource::Registry,
        &RegistryArgs::default(),
        EngineTimings::scaled(0.01),
    )
    .await
    .expect("engine");
    let s = wait_for(&mut h, "the first watch-only pass", pass_after(0)).await;
    assert_eq!((s.mode, s.total), (EngineMode::WatchOnly, 120));
    let mut drift = changed(&s);
    drift.sort_by(|a, b| a.0.cmp(&b.0));
    let fields = |i: usize| -> Vec<(String, Option<serde_json::Value>, Option<serde_json::Value>)> {
        let Drift::Update { diff } = &drift[i].1 else {
            panic!("{drift:?}")
        };
        diff.iter()
            .map(|f| (f.path.clone(), f.from.clone(), f.to.clone()))
            .collect()
    };
    let names: Vec<&str> = drift.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["openshift-comp00/secret-7", "openshift-comp03/cm-3"],
        "only the edited objects drifted"
    );
    assert_eq!(
        fields(1),
        [(".data.index".to_owned(), Some(json!("edited")), Some(json!("3")))]
    );
    // The cached Secret's values never leave the engine.
    assert_eq!(
        fields(0),
        [(
            ".data.index".to_owned(),
            Some(json!("*** (before)")),
            Some(json!("*** (after)"))
        )]
    );
    assert!(!format!("{:?}", s.drift).contains("c2VjcmV0LXZhbHVl"));

    let audit: Vec<serde_json::Value> = server.audit_lines().into_iter().skip(start).collect();
    let verb_path = |l: &serde_json::Value| {
        (
            l["verb"].as_str().unwrap_or_default().to_owned(),
            l["path"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let gets: Vec<String> = audit
        .iter()
        .map(verb_path)
        .filter(|(v, p)| v == "get" && names_payload_object(p))
        .map(|(_, p)| p)
        .collect();
    assert_eq!(gets, Vec::<String>::new(), "no payload object is read with a GET");
    let mut per_type: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for (v, p) in audit.iter().map(verb_path) {
        if v == "list" || v == "watch" {
            *per_type.entry((v, p)).or_default() += 1;
        }
    }
    let repeated: Vec<String> = per_type
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|((v, p), n)| format!("{n} x {v} {p}"))
        .collect();
    assert_eq!(repeated, Vec::<String>::new(), "{per_type:#?}");
    // The payload's kinds are all watched (10: Namespace, CRD, ConfigMap, Secret,
    // ServiceAccount, Role, RoleBinding, ClusterRole, Service, Widget0).
    let payload_kinds = [
        "/api/v1/namespaces",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "/api/v1/configmaps",
        "/api/v1/secrets",
        "/api/v1/serviceaccounts",
        "/apis/rbac.authorization.k8s.io/v1/roles",
        "/apis/rbac.authorization.k8s.io/v1/rolebindings",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "/api/v1/services",
        "/apis/cvo.example.com/v1/widget0",
    ];
    for k in payload_kinds {
        assert!(
            per_type.keys().any(|(_, p)| p == k),
            "{k} not listed: {per_type:#?}"
        );
    }
    assert_eq!(server.writes_since(start), Vec::<String>::new());
    h.shutdown().await;
    use k8s_openapi::{
        api::{core::v1::Namespace, rbac::v1::ClusterRole},
        apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    };
    let erase = kube::api::ApiResource::erase::<Namespace>(&());
    let namespaces: Vec<String> = (0..7).map(|c| format!("openshift-comp{c:02}")).collect();
    let roles: Vec<String> = (0..6).map(|k| format!("cvo-bench-cr-{}", 11 + 20 * k)).collect();
    let mut extra: Vec<(kube::api::ApiResource, &str, &str)> = namespaces
        .iter()
        .map(|n| (erase.clone(), "", n.as_str()))
        .collect();
    let cr = kube::api::ApiResource::erase::<ClusterRole>(&());
    extra.extend(roles.iter().map(|n| (cr.clone(), "", n.as_str())));
    extra.push((
        kube::api::ApiResource::erase::<CustomResourceDefinition>(&()),
        "",
        "widget0.cvo.example.com",
    ));
    server.clean_up(&extra).await;
}
