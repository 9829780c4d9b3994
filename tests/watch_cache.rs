//! Passes from watch caches, against the in-process simulator: the apply layer with its
//! metadata-only watch caches (`Applier::prepare_pass`), then whole engine passes. Every request
//! is read back from the simulator's audit log.

use std::{collections::BTreeMap, path::Path, sync::Arc, time::Duration};

use cvo::{
    reconcile::{
        Engine, EngineConfig, EngineTimings,
        api::{LocalPayloads, StatusSnapshot},
        apply::{Applier, ApplyContext, Drift},
    },
    sim::{
        Simulator,
        audit::AuditEntry,
        faults::{ErrorRule, Faults, WatchFaults},
    },
};
use serde_json::{Value, json};

mod common;
use common::Unmet;

const NS: &str = "openshift-cache";

fn client(sim: &Simulator) -> kube::Client {
    kube::Client::new(sim.clone(), "default")
}

fn namespace() -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
}

fn config_map(i: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("cm-{i}"), "namespace": NS},
        "data": {"index": i.to_string()}})
}

fn secret(i: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("secret-{i}"), "namespace": NS},
        "type": "Opaque", "data": {"index": "MQ=="}})
}

/// A namespace, 6 ConfigMaps and 4 Secrets.
fn manifests() -> Vec<Value> {
    let mut v = vec![namespace()];
    v.extend((0..6).map(config_map));
    v.extend((0..4).map(secret));
    v
}

/// Requests naming one object of the test namespace (GET, PUT, POST of a name...).
fn object_requests(audit: &[AuditEntry]) -> Vec<String> {
    audit
        .iter()
        .filter(|e| e.verb != "list" && e.verb != "watch" && e.path.contains(NS))
        .map(|e| format!("{} {}", e.verb, e.path))
        .collect()
}

/// Applies every manifest; returns the drifts.
async fn apply_all(a: &Applier, ms: &[Value]) -> Vec<Drift> {
    let ctx = ApplyContext::default();
    let mut out = Vec::new();
    for m in ms {
        out.push(a.apply(&ctx, m).await.expect("apply").drift);
    }
    out
}

/// Repeats `pass` until the audit log of one repetition satisfies `done`, for at most 5 s
/// (the watch caches follow the server asynchronously); returns that audit log.
async fn until_pass<T, F: std::future::Future<Output = T>>(
    sim: &Simulator,
    what: &str,
    mut pass: impl FnMut() -> F,
    done: impl Fn(&[AuditEntry]) -> bool,
) -> Vec<AuditEntry> {
    let start = tokio::time::Instant::now();
    loop {
        sim.clear_audit();
        pass().await;
        let audit = sim.audit().entries;
        if done(&audit) {
            return audit;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{what}: still {:?}",
            object_requests(&audit)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn prepared(sim: &Simulator, ms: &[Value]) -> Applier {
    let a = Applier::new(client(sim));
    let refs: Vec<&Value> = ms.iter().collect();
    a.prepare_pass_within(&refs, Duration::from_secs(2)).await;
    a
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_apply_creates_without_gets_then_a_converged_pass_sends_nothing() {
    let sim = Simulator::new();
    let ms = manifests();
    let a = prepared(&sim, &ms).await;
    assert_eq!(
        a.caches().watched(),
        ["v1/ConfigMap", "v1/Namespace", "v1/Secret"]
    );
    sim.clear_audit();
    let drifts = apply_all(&a, &ms).await;
    assert!(
        drifts.iter().all(|d| matches!(d, Drift::Create { object: None })),
        "{drifts:?}"
    );
    let audit = sim.audit().entries;
    // (the watches themselves may start after their list has synced the cache)
    let verbs: Vec<&str> = audit.iter().map(|e| e.verb).filter(|v| *v != "watch").collect();
    assert_eq!(verbs, vec!["create"; 11], "known absent: created without a GET");

    let audit = until_pass(&sim, "a converged pass", || apply_all(&a, &ms), |a| a.is_empty()).await;
    assert!(audit.is_empty());
    assert!(apply_all(&a, &ms).await.iter().all(|d| *d == Drift::None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_changed_behind_the_engine_is_reapplied_and_a_deleted_one_recreated() {
    let sim = Simulator::new();
    let ms = manifests();
    let a = prepared(&sim, &ms).await;
    apply_all(&a, &ms).await;
    until_pass(&sim, "converged", || apply_all(&a, &ms), |a| a.is_empty()).await;

    let mut cm = sim.get("", "configmaps", NS, "cm-3").expect("cm-3");
    cm["data"]["index"] = json!("changed");
    sim.insert(cm).expect("edit cm-3");
    let audit = until_pass(&sim, "cm-3 re-applied", || apply_all(&a, &ms), |a| !a.is_empty()).await;
    assert_eq!(
        object_requests(&audit),
        [
            format!("get /api/v1/namespaces/{NS}/configmaps/cm-3"),
            format!("update /api/v1/namespaces/{NS}/configmaps/cm-3"),
        ]
    );
    assert_eq!(
        sim.get("", "configmaps", NS, "cm-3").expect("cm-3")["data"]["index"],
        "3"
    );
    until_pass(
        &sim,
        "converged after the update",
        || apply_all(&a, &ms),
        |a| a.is_empty(),
    )
    .await;

    sim.remove(&secret(2)).expect("delete secret-2");
    let audit = until_pass(
        &sim,
        "secret-2 re-created",
        || apply_all(&a, &ms),
        |a| !a.is_empty(),
    )
    .await;
    assert_eq!(
        object_requests(&audit),
        [format!("create /api/v1/namespaces/{NS}/secrets")],
        "known absent: re-created without a GET"
    );
    assert!(sim.get("", "secrets", NS, "secret-2").is_some());
    until_pass(&sim, "converged again", || apply_all(&a, &ms), |a| a.is_empty()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsynced_cache_falls_back_to_gets() {
    let sim = Simulator::new();
    // The simulator answers `/version` as kube-apiserver 1.36 does, so the caches first list
    // by streaming (a watch with `sendInitialEvents`), then by LIST: both fail.
    let failing = |verb: &str| ErrorRule {
        verb: verb.into(),
        code: 500,
        rate: 1.0,
    };
    sim.set_faults(Faults {
        errors: vec![failing("list"), failing("watch")],
        ..Faults::default()
    })
    .expect("faults");
    let ms = manifests();
    let a = prepared(&sim, &ms).await;
    sim.clear_audit();
    apply_all(&a, &ms).await;
    let gets = sim.audit().entries.iter().filter(|e| e.verb == "get").count();
    assert_eq!(gets, 11, "every manifest is read: the caches never listed");
    sim.clear_audit();
    let drifts = apply_all(&a, &ms).await;
    assert!(drifts.iter().all(|d| *d == Drift::None), "{drifts:?}");
    let verbs = sim.audit().counts();
    assert_eq!(verbs.get("get"), Some(&11), "{verbs:?}");
    assert_eq!(verbs.get("update"), None, "{verbs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_error_invalidates_the_cache_until_it_lists_again() {
    let sim = Simulator::new();
    // Watches end every 0.2 s and are resumed; then one of them gets 410 Gone while lists fail.
    let drop_often = WatchFaults {
        drop_after_secs: Some(0.2),
        ..WatchFaults::default()
    };
    sim.set_faults(Faults {
        watch: drop_often.clone(),
        ..Faults::default()
    })
    .expect("faults");
    let ms = manifests();
    let a = prepared(&sim, &ms).await;
    apply_all(&a, &ms).await;
    until_pass(&sim, "converged", || apply_all(&a, &ms), |a| a.is_empty()).await;
    sim.set_faults(Faults {
        errors: vec![ErrorRule {
            verb: "list".into(),
            code: 500,
            rate: 1.0,
        }],
        watch: WatchFaults {
            gone_next: 100,
            ..drop_often.clone()
        },
        ..Faults::default()
    })
    .expect("faults");
    let audit = until_pass(
        &sim,
        "the cache invalidated",
        || apply_all(&a, &ms),
        |a| a.iter().filter(|e| e.verb == "get").count() == 11,
    )
    .await;
    assert!(audit.iter().all(|e| e.verb != "update" && e.verb != "create"));
    // Lists work again: the caches resync and the pass is served from them.
    sim.set_faults(Faults {
        watch: drop_often,
        ..Faults::default()
    })
    .expect("faults");
    until_pass(&sim, "resynced", || apply_all(&a, &ms), |a| a.is_empty()).await;
}

/// A payload of `n` ConfigMaps and Secrets in one namespace over 5 run levels.
fn payload(dir: &Path, n: usize) {
    let p = common::PayloadDir::new(dir, "1.0.0");
    let ann = common::ANN;
    p.file(
        "0000_05_a_namespace.yaml",
        &format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {NS}\n{ann}"),
    );
    for i in 0..n {
        let body = if i % 2 == 0 {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: {NS}\n{ann}data:\n  index: \"{i}\"\n"
            )
        } else {
            format!(
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret-{i}\n  namespace: {NS}\n{ann}type: Opaque\ndata:\n  index: MQ==\n"
            )
        };
        p.file(&format!("0000_{:02}_c{}_{i:04}.yaml", 10 + i % 5, i % 3), &body);
    }
}

async fn wait(
    h: &mut cvo::reconcile::api::EngineHandle,
    what: &str,
    pred: impl Fn(&StatusSnapshot) -> bool,
) -> Arc<StatusSnapshot> {
    match common::watch_until(&mut h.status, Duration::from_secs(20), |s| pred(s)).await {
        Ok(v) => v,
        Err(Unmet::Closed(_)) => panic!("engine stopped while waiting for {what}"),
        Err(Unmet::TimedOut(cur)) => panic!("timed out waiting for {what}: {:?}", cur.last_error),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_passes_on_a_converged_cluster_read_no_payload_object() {
    let tmp = tempfile::tempdir().expect("tempdir");
    payload(tmp.path(), 200);
    let sim = Simulator::new();
    let cfg = EngineConfig {
        timings: EngineTimings::scaled(0.005),
        ..EngineConfig::new(Arc::new(LocalPayloads {
            own_image: "example.com/release@sha256:1111".into(),
            own_dir: tmp.path().to_path_buf(),
            others: BTreeMap::new(),
        }))
    };
    let mut h = Engine::spawn(client(&sim), cfg);
    let first = wait(&mut h, "Completed", StatusSnapshot::is_completed).await;
    let p0 = first.counters.passes;
    let second = wait(&mut h, "a second pass", |s| s.counters.passes > p0 && !s.running).await;
    sim.clear_audit();
    let p1 = second.counters.passes;
    let snap = wait(&mut h, "two more passes", |s| {
        s.counters.passes >= p1 + 2 && !s.running
    })
    .await;
    let audit = sim.audit().entries;
    assert_eq!(
        object_requests(&audit),
        Vec::<String>::new(),
        "converged passes read and write no payload object"
    );
    let writes: Vec<String> = audit
        .iter()
        .filter(|e| cvo::reconcile::runtime::client::is_write_verb(e.verb))
        .map(|e| format!("{} {} {}", e.verb, e.path, e.code))
        .collect();
    assert_eq!(writes, Vec::<String>::new());
    assert_eq!(
        snap.counters.apply_writes, second.counters.apply_writes,
        "no apply writes since"
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_process_starts_from_the_saved_verification_record() {
    use cvo::cli::reconcile::{ReconcileOptions, Until, run};
    let tmp = tempfile::tempdir().expect("tempdir");
    payload(tmp.path(), 300);
    let sim = Simulator::new();
    sim.insert(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "openshift-cluster-version"}}))
        .expect("namespace");
    let opts = |until| ReconcileOptions {
        payload: tmp.path().to_path_buf(),
        release_image: None,
        dry_run: false,
        until,
        timeout: Some(Duration::from_secs(60)),
        timings: EngineTimings::scaled(0.05),
        lease: true,
    };
    let s = run(client(&sim), &opts(Until::Complete)).await.expect("runs");
    assert_eq!((s.outcome.as_str(), s.done, s.total), ("complete", 301, 301));
    let record = sim
        .get(
            "",
            "configmaps",
            "openshift-cluster-version",
            "cvo-verified-manifests",
        )
        .expect("the record is saved");
    let lines = record["data"]["verified"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!(lines, 301, "one entry per applied manifest");

    sim.clear_audit();
    let s = run(client(&sim), &opts(Until::Once)).await.expect("runs");
    assert_eq!(s.exit_code, 0);
    let audit = sim.audit().entries;
    assert_eq!(
        object_requests(&audit),
        Vec::<String>::new(),
        "no payload object read"
    );
    let mut lists: Vec<&str> = audit
        .iter()
        .filter(|e| e.verb == "list")
        .map(|e| e.path.as_str())
        .collect();
    lists.sort_unstable();
    assert_eq!(
        lists,
        [
            "/apis/config.openshift.io/v1/clusteroperators",
            "/apis/config.openshift.io/v1/clusterversions",
        ],
        "one LIST for the ClusterOperators' watch and one for the ClusterVersion's"
    );
    // The payload kinds are listed by streaming (the simulator answers `/version` as
    // kube-apiserver 1.36, which serves `sendInitialEvents`): one such watch per kind.
    let mut streamed: Vec<&str> = audit
        .iter()
        .filter(|e| e.verb == "watch" && e.query.contains("sendInitialEvents=true"))
        .map(|e| e.path.as_str())
        .collect();
    streamed.sort_unstable();
    assert_eq!(
        streamed,
        ["/api/v1/configmaps", "/api/v1/namespaces", "/api/v1/secrets"],
        "one streaming list per payload kind"
    );
    assert!(
        audit
            .iter()
            .filter(|e| cvo::reconcile::runtime::client::is_write_verb(e.verb))
            .all(|e| e.path.contains("/leases/")),
        "only the Lease is written"
    );
}

/// Dry-run (watch-only) apply of every manifest; returns the drifts.
async fn compare_all(a: &Applier, ms: &[Value]) -> Vec<Drift> {
    let ctx = ApplyContext {
        dry_run: true,
        ..ApplyContext::default()
    };
    let mut out = Vec::new();
    for m in ms {
        out.push(a.apply(&ctx, m).await.expect("dry-run apply").drift);
    }
    out
}

// Paused time: the simulator's 2.5 s latency and the pass's waits are virtual (no wall-clock
// wait), and exact.
#[tokio::test(start_paused = true)]
async fn a_watch_only_pass_waits_for_slow_lists_instead_of_getting_each_object() {
    use cvo::reconcile::apply::watch_cache::WATCH_ONLY_SYNC_WAIT;
    let sim = Simulator::new();
    let ms = manifests();
    for m in &ms {
        sim.insert(m.clone()).expect("insert");
    }
    // Every request takes 2.5 s: longer than an active pass waits for its lists (2 s).
    sim.set_faults(Faults {
        latency_ms: 2500,
        ..Faults::default()
    })
    .expect("faults");
    let a = Applier::new(client(&sim));
    let refs: Vec<&Value> = ms.iter().collect();
    sim.clear_audit();
    a.prepare_pass_with(&refs, true, WATCH_ONLY_SYNC_WAIT).await;
    let drifts = compare_all(&a, &ms).await;
    assert!(drifts.iter().all(|d| *d == Drift::None), "{drifts:?}");
    assert_eq!(
        object_requests(&sim.audit().entries),
        Vec::<String>::new(),
        "the objects come from the lists, not from GETs"
    );
}

// Paused time: "stops waiting" is measured on the virtual clock, so a pass that waited out
// WATCH_ONLY_SYNC_WAIT (20 s) fails the test at once and a loaded machine cannot.
#[tokio::test(start_paused = true)]
async fn a_watch_only_pass_stops_waiting_when_the_lists_fail() {
    use cvo::reconcile::apply::watch_cache::WATCH_ONLY_SYNC_WAIT;
    let sim = Simulator::new();
    let ms = manifests();
    for m in &ms {
        sim.insert(m.clone()).expect("insert");
    }
    let failing = |verb: &str| ErrorRule {
        verb: verb.into(),
        code: 500,
        rate: 1.0,
    };
    sim.set_faults(Faults {
        errors: vec![failing("list"), failing("watch")],
        ..Faults::default()
    })
    .expect("faults");
    let a = Applier::new(client(&sim));
    let refs: Vec<&Value> = ms.iter().collect();
    let start = tokio::time::Instant::now();
    a.prepare_pass_with(&refs, true, WATCH_ONLY_SYNC_WAIT).await;
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "waited {:?} for lists that fail",
        start.elapsed()
    );
    sim.clear_audit();
    let drifts = compare_all(&a, &ms).await;
    assert!(drifts.iter().all(|d| *d == Drift::None), "{drifts:?}");
    let gets = sim.audit().entries.iter().filter(|e| e.verb == "get").count();
    assert_eq!(gets, 11, "without caches every object is read");
}
