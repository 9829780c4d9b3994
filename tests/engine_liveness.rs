//! What a watch-only engine follows live (issue 29), against the in-process simulator or the
//! real kube-apiserver of `CVO_TEST_KUBECONFIG` (`tests/common/cluster.rs`):
//!
//! - a change of a payload object in the cluster re-checks the drift within a second or so,
//!   without `r` (`Command::ReconcileNow`) and without a request for the object (the watch
//!   caches have it); a burst of changes costs one pass, a steady stream at most one a second;
//! - the CVO Lease: a new holder, a renewal, a release and a deletion show in the snapshot as
//!   they happen, and a holder that stops renewing is shown expired once its time is up, with
//!   no further read of the Lease;
//! - the release images accepted unsigned because registered, for the history's VERIFIED.

use std::{path::Path, sync::Arc, time::Duration};

use cvo::reconcile::{
    Engine, EngineConfig, EngineTimings,
    api::{Drift, EngineHandle, EngineMode, LocalPayloads, StatusSnapshot},
    runtime::leader::{LeaseConfig, LeaseTimings},
};
use serde_json::{Value, json};

#[path = "common/cluster.rs"]
mod cluster;
mod common;
use cluster::{CO, CONFIGMAP, CV, Handle, LEASE, LEASE_NS, NAMESPACE, TestCluster};
use common::Unmet;

const IMAGE: &str = "example.com/release@sha256:1111";
const ANN: &str = "include.release.openshift.io/self-managed-high-availability";

/// A payload of one namespace, two ConfigMaps and a ClusterOperator, all named for the test.
fn write_payload(dir: &Path, h: &Handle) {
    let (ns, op) = (h.name("openshift-live"), h.name("op"));
    let p = common::PayloadDir::new(dir, "1.0.0");
    let files = [
        (
            "0000_00_ns.yaml",
            json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "annotations": {ANN: "true"}}}),
        ),
        (
            "0000_10_alpha.yaml",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "alpha", "namespace": ns, "annotations": {ANN: "true"}},
            "data": {"version": "1.0.0"}}),
        ),
        (
            "0000_20_beta.yaml",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "beta", "namespace": ns, "annotations": {ANN: "true"}},
            "data": {"fixed": "yes"}}),
        ),
        (
            "0000_30_op.yaml",
            json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
            "metadata": {"name": op, "annotations": {ANN: "true"}}, "spec": {},
            "status": {"versions": [{"name": "operator", "version": "1.0.0"}]}}),
        ),
    ];
    for (name, body) in files {
        p.file(name, &body.to_string());
    }
}

fn config(dir: &Path, h: &Handle) -> EngineConfig {
    let mut timings = EngineTimings::scaled(0.005);
    // Only the events may start a pass after the first one (no resync, no error backoff in
    // the test's time).
    timings.resync_interval = Duration::from_secs(600);
    EngineConfig {
        mode: EngineMode::WatchOnly,
        create_cluster_version: false,
        cluster_version_name: h.name("version"),
        timings,
        ..EngineConfig::new(Arc::new(LocalPayloads {
            own_image: IMAGE.into(),
            own_dir: dir.to_path_buf(),
            others: Default::default(),
        }))
    }
}

async fn wait_snapshot(
    h: &mut EngineHandle,
    what: &str,
    limit: Duration,
    pred: impl Fn(&StatusSnapshot) -> bool,
) -> Arc<StatusSnapshot> {
    match common::watch_until(&mut h.status, limit, |s| pred(s)).await {
        Ok(v) => v,
        Err(Unmet::Closed(_)) => panic!("engine stopped while waiting for {what}"),
        Err(Unmet::TimedOut(cur)) => panic!(
            "timed out waiting for {what}; passes {} rechecks {} drift {:?} lease {:?} error {:?} payload {:?}",
            cur.counters.passes,
            cur.counters.drift_rechecks,
            cur.drift.iter().map(|d| &d.name).collect::<Vec<_>>(),
            cur.lease,
            cur.last_error,
            cur.payload_error
        ),
    }
}

/// The test's ClusterVersion (so the engine loop is quiet: nothing to look for), and the
/// in-sync objects of the payload: the namespace, both ConfigMaps, the ClusterOperator.
async fn create_in_sync(t: &TestCluster) {
    let (ns, op) = (t.name("openshift-live"), t.name("op"));
    t.create(
        CV,
        json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"name": t.name("version")},
        "spec": {"clusterID": "00000000-0000-0000-0000-000000000029"}}),
    )
    .await;
    t.create(
        NAMESPACE,
        json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns, "annotations": {ANN: "true"}}}),
    )
    .await;
    for (name, data) in [
        ("alpha", json!({"version": "1.0.0"})),
        ("beta", json!({"fixed": "yes"})),
    ] {
        t.create(
            CONFIGMAP,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "annotations": {ANN: "true"}}, "data": data}),
        )
        .await;
    }
    t.create(
        CO,
        json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
        "metadata": {"name": op, "annotations": {ANN: "true"}}, "spec": {}}),
    )
    .await;
    // The operator reports its version, Available and not Degraded.
    let mut co = t.get(CO, "", &op).await.expect("the ClusterOperator exists");
    co["status"] = json!({
        "conditions": [
            {"type": "Available", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "AsExpected"},
            {"type": "Degraded", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "AsExpected"}
        ],
        "versions": [{"name": "operator", "version": "1.0.0"}]
    });
    assert!(
        t.put_status(CO, co).await,
        "the ClusterOperator's status is written"
    );
}

/// Sets `data.version` of alpha (a GET and a PUT on the real server).
async fn set_alpha(t: &Handle, version: &str) {
    let ns = t.name("openshift-live");
    for _ in 0..10 {
        let mut cm = t.get(CONFIGMAP, &ns, "alpha").await.expect("alpha exists");
        cm["data"]["version"] = json!(version);
        if t.edit(CONFIGMAP, cm).await {
            return;
        }
    }
    panic!("alpha could not be edited (conflicts)");
}

fn alpha_drift(s: &StatusSnapshot) -> Option<Value> {
    s.drift
        .iter()
        .find(|d| d.name == "alpha")
        .and_then(|d| match &d.drift {
            Drift::Update { diff } => diff
                .iter()
                .find(|c| c.path == ".data.version")
                .and_then(|c| c.from.clone()),
            _ => None,
        })
}

/// Requests (all verbs but watch) the engine sent, from its counters.
fn requests(s: &StatusSnapshot) -> u64 {
    s.counters
        .requests
        .iter()
        .filter(|(v, _)| v.as_str() != "watch")
        .map(|(_, n)| n)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_payload_object_rechecks_the_drift_without_r() {
    let mut t = TestCluster::new().await;
    let ns = t.name("openshift-live");
    t.clean_up(NAMESPACE, "", &ns);
    t.clean_up(CO, "", &t.name("op"));
    t.clean_up(CV, "", &t.name("version"));
    create_in_sync(&t).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    write_payload(tmp.path(), &t);
    let mut h = Engine::spawn(t.client(), config(tmp.path(), &t));
    let first = wait_snapshot(&mut h, "the first pass", Duration::from_secs(30), |s| {
        s.counters.passes >= 1 && !s.running
    })
    .await;
    assert_eq!(alpha_drift(&first), None, "alpha is in sync at first");
    // The own release of a local payload directory: accepted unsigned as registered, which
    // the dashboard's history says instead of a bare "no".
    assert_eq!(first.registered_unverified, vec![IMAGE.to_string()]);
    assert_eq!(first.counters.drift_rechecks, 0);
    // Settle: nothing else asks for a pass.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before = h.status.borrow().clone();
    assert_eq!(
        before.counters.passes, first.counters.passes,
        "no pass without a change"
    );

    // One change: one re-check, quickly, and no request for the object.
    let audit_before = t.sim().map(|s| s.audit().entries.len());
    let edited = std::time::Instant::now();
    set_alpha(&t, "tampered").await;
    let s = wait_snapshot(&mut h, "alpha's drift", Duration::from_secs(5), |s| {
        alpha_drift(s).is_some() && !s.running
    })
    .await;
    let latency = edited.elapsed();
    assert_eq!(alpha_drift(&s), Some(json!("tampered")));
    assert_eq!(s.counters.drift_rechecks, 1, "one change, one re-check");
    assert_eq!(s.counters.passes, before.counters.passes + 1);
    let sent = requests(&s) - requests(&before);
    eprintln!(
        "re-check after one change: drift seen {latency:?} after the edit, {sent} requests (watches aside): {:?} -> {:?}",
        before.counters.requests, s.counters.requests
    );
    assert!(latency < Duration::from_secs(3), "{latency:?}");
    // The simulator's engine sends nothing else meanwhile; on the real server the engine's
    // own turns (a ClusterVersion GET while its watch catches up, the FeatureGate re-read)
    // may fall in the window.
    let other = if t.is_real() { 2 } else { 0 };
    assert!(
        sent <= other,
        "a re-check reads the watch caches, not the server: {sent}"
    );
    if let (Some(sim), Some(from)) = (t.sim(), audit_before) {
        let engine_gets: Vec<String> = sim.audit().entries[from..]
            .iter()
            .filter(|e| e.verb == "get" && e.path.contains(&ns))
            .map(|e| e.path.clone())
            .collect();
        assert!(
            engine_gets.is_empty(),
            "objects come from the watch cache: {engine_gets:?}"
        );
    }

    // A burst of 20 changes in about 100 ms: one or two passes, not twenty.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let before = h.status.borrow().clone();
    for i in 0..20 {
        set_alpha(&t, &format!("burst-{i}")).await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let s = wait_snapshot(&mut h, "the burst's last value", Duration::from_secs(5), |s| {
        alpha_drift(s) == Some(json!("burst-19")) && !s.running
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = h.status.borrow().clone();
    let passes = after.counters.passes - before.counters.passes;
    let rechecks = after.counters.drift_rechecks - before.counters.drift_rechecks;
    eprintln!(
        "burst of 20 changes: {passes} passes, {rechecks} re-checks, {} requests",
        requests(&after) - requests(&before)
    );
    assert!((1..=2).contains(&rechecks), "{rechecks} re-checks for one burst");
    assert!(
        requests(&after) - requests(&before) <= other,
        "no request for the burst"
    );
    assert_eq!(passes, rechecks, "every pass was a re-check");
    assert!(alpha_drift(&s).is_some());

    // Back in sync: the drift goes away the same way.
    set_alpha(&t, "1.0.0").await;
    wait_snapshot(&mut h, "alpha in sync again", Duration::from_secs(5), |s| {
        alpha_drift(s).is_none() && !s.running
    })
    .await;
    h.shutdown().await;
}

fn lease_config(t: &Handle) -> LeaseConfig {
    let timings = LeaseTimings::new(
        Duration::from_secs(137),
        Duration::from_secs(107),
        Duration::from_secs(26),
    )
    .expect("valid timings");
    let mut c = LeaseConfig::cvo("cvo-test_1", timings);
    c.name = t.name("version");
    c
}

/// Writes the test's Lease: `holder` (empty: released) renewed `age` seconds ago, for 137 s.
async fn put_lease(t: &Handle, holder: &str, age: i64) {
    let name = t.name("version");
    let renew = (chrono::Utc::now() - chrono::Duration::seconds(age))
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string();
    let spec = json!({"holderIdentity": holder, "leaseDurationSeconds": 137,
        "acquireTime": renew, "renewTime": renew});
    for _ in 0..10 {
        match t.get(LEASE, LEASE_NS, &name).await {
            None => {
                t.create(
                    LEASE,
                    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": name, "namespace": LEASE_NS}, "spec": spec}),
                )
                .await;
                return;
            }
            Some(mut l) => {
                l["spec"] = spec.clone();
                if t.edit(LEASE, l).await {
                    return;
                }
            }
        }
    }
    panic!("the Lease could not be written (conflicts)");
}

/// GETs of the test's Lease in the simulator's audit log since entry `from`.
fn lease_gets(t: &Handle, from: usize) -> usize {
    let name = t.name("version");
    t.sim().map_or(0, |sim| {
        sim.audit().entries[from..]
            .iter()
            .filter(|e| e.verb == "get" && e.path.ends_with(&format!("/leases/{name}")))
            .count()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_is_followed_live_in_watch_only() {
    let mut t = TestCluster::new().await;
    let name = t.name("version");
    t.clean_up(LEASE, LEASE_NS, &name);
    if t.get(NAMESPACE, "", LEASE_NS).await.is_none() {
        t.create(
            NAMESPACE,
            json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": LEASE_NS}}),
        )
        .await;
    }
    put_lease(&t, "in-cluster-cvo_1", 0).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    write_payload(tmp.path(), &t);
    let mut cfg = config(tmp.path(), &t);
    cfg.lease = Some(lease_config(&t));
    let audit_start = t.sim().map_or(0, |s| s.audit().entries.len());
    let mut h = Engine::spawn(t.client(), cfg);
    let holder = |s: &StatusSnapshot| s.lease.as_ref().and_then(|l| l.holder.clone());
    let alive = |s: &StatusSnapshot| s.lease.as_ref().is_some_and(|l| l.alive);
    let s = wait_snapshot(&mut h, "the first holder", Duration::from_secs(10), |s| {
        holder(s).as_deref() == Some("in-cluster-cvo_1") && alive(s)
    })
    .await;
    assert!(s.lease.as_ref().and_then(|l| l.blocks_switch()).is_some());
    // Let the watch list before counting reads.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let gets_at_start = lease_gets(&t, audit_start);

    // A new holder shows without anyone asking.
    let changed = std::time::Instant::now();
    put_lease(&t, "in-cluster-cvo_2", 0).await;
    wait_snapshot(&mut h, "the new holder", Duration::from_secs(3), |s| {
        holder(s).as_deref() == Some("in-cluster-cvo_2") && alive(s)
    })
    .await;
    let latency = changed.elapsed();
    eprintln!("a new Lease holder showed {latency:?} after the write");
    assert!(latency < Duration::from_secs(2), "{latency:?}");

    // Renewed long ago: expired at once, and the switch is no longer refused.
    put_lease(&t, "in-cluster-cvo_2", 600).await;
    let s = wait_snapshot(&mut h, "the stale holder expired", Duration::from_secs(3), |s| {
        holder(s).as_deref() == Some("in-cluster-cvo_2") && !alive(s)
    })
    .await;
    assert!(s.lease.as_ref().and_then(|l| l.blocks_switch()).is_none());

    // Renewed 135 s ago (137 s lease): alive now, expired two seconds later with no event.
    put_lease(&t, "in-cluster-cvo_3", 135).await;
    wait_snapshot(
        &mut h,
        "the holder about to expire",
        Duration::from_secs(3),
        |s| holder(s).as_deref() == Some("in-cluster-cvo_3") && alive(s),
    )
    .await;
    let s = wait_snapshot(
        &mut h,
        "expiry judged on the clock",
        Duration::from_secs(8),
        |s| holder(s).as_deref() == Some("in-cluster-cvo_3") && !alive(s),
    )
    .await;
    assert!(s.lease.as_ref().and_then(|l| l.blocks_switch()).is_none());

    // Released, then deleted: free.
    put_lease(&t, "", 0).await;
    wait_snapshot(&mut h, "released", Duration::from_secs(3), |s| {
        s.lease.is_some() && holder(s).is_none()
    })
    .await;
    put_lease(&t, "in-cluster-cvo_4", 0).await;
    wait_snapshot(&mut h, "taken again", Duration::from_secs(3), |s| {
        holder(s).as_deref() == Some("in-cluster-cvo_4")
    })
    .await;
    t.delete(LEASE, LEASE_NS, &name).await;
    wait_snapshot(&mut h, "deleted", Duration::from_secs(3), |s| {
        s.lease.is_some() && holder(s).is_none()
    })
    .await;
    // All of it from the watch: no GET of the Lease after the first list.
    if t.sim().is_some() {
        let gets = lease_gets(&t, audit_start) - gets_at_start;
        assert_eq!(gets, 0, "the Lease was read with GETs while its watch was live");
    }
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_switch_to_watch_only_the_lease_is_followed() {
    use cvo::reconcile::api::Command;
    let mut t = TestCluster::new().await;
    let name = t.name("version");
    t.clean_up(LEASE, LEASE_NS, &name);
    if t.get(NAMESPACE, "", LEASE_NS).await.is_none() {
        t.create(
            NAMESPACE,
            json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": LEASE_NS}}),
        )
        .await;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    write_payload(tmp.path(), &t);
    let mut cfg = config(tmp.path(), &t);
    cfg.mode = EngineMode::ActiveApply;
    cfg.lease = Some(lease_config(&t));
    let mut h = Engine::spawn(t.client(), cfg);
    wait_snapshot(&mut h, "leading", Duration::from_secs(10), |s| s.leader).await;
    h.commands
        .send(Command::SetMode(EngineMode::WatchOnly))
        .await
        .expect("send");
    wait_snapshot(&mut h, "released in watch-only", Duration::from_secs(10), |s| {
        s.mode == EngineMode::WatchOnly && s.lease.as_ref().is_some_and(|l| l.holder.is_none())
    })
    .await;
    // Another CVO takes the Lease: shown without `m` or any other command.
    put_lease(&t, "in-cluster-cvo_9", 0).await;
    let s = wait_snapshot(&mut h, "the other holder", Duration::from_secs(3), |s| {
        s.lease
            .as_ref()
            .is_some_and(|l| l.holder.as_deref() == Some("in-cluster-cvo_9") && l.alive && !l.ours)
    })
    .await;
    assert!(s.lease.as_ref().and_then(|l| l.blocks_switch()).is_some());
    assert_eq!(
        s.last_command.as_ref().map(|c| c.command.as_str()),
        Some("mode watch-only"),
        "no command since the switch"
    );
    h.shutdown().await;
}

/// A server that answers the Lease's LIST and WATCH with 503 (simulator only): the engine
/// reads the Lease with a GET instead, at most once per 10 s, and still shows a new holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_its_watch_the_lease_is_read_at_most_every_ten_seconds() {
    use cvo::sim::faults::{Faults, Timed};
    let t = TestCluster::new().await;
    let Some(sim) = t.sim().cloned() else {
        // A real server cannot be made to refuse the Lease's watch: `cargo test` runs this case
        // on the simulator, and `.ci/run`'s real-server step leaves it out with `--skip`.
        common::skip(
            "without_its_watch_the_lease_is_read_at_most_every_ten_seconds",
            "faults are injected in the simulator only",
        );
        return;
    };
    let refuse = |verb: &str| Timed {
        verb: Some(verb.into()),
        resource: Some("leases.coordination.k8s.io".into()),
        error: Some(503),
        ..Timed::default()
    };
    sim.set_faults(Faults {
        timed: vec![refuse("list"), refuse("watch")],
        ..Faults::default()
    })
    .expect("faults");
    t.create(
        NAMESPACE,
        json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": LEASE_NS}}),
    )
    .await;
    put_lease(&t, "in-cluster-cvo_1", 0).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    write_payload(tmp.path(), &t);
    let mut cfg = config(tmp.path(), &t);
    cfg.lease = Some(lease_config(&t));
    let mut h = Engine::spawn(t.client(), cfg);
    let holder = |s: &StatusSnapshot| s.lease.as_ref().and_then(|l| l.holder.clone());
    wait_snapshot(&mut h, "the first holder", Duration::from_secs(5), |s| {
        holder(s).as_deref() == Some("in-cluster-cvo_1")
    })
    .await;
    let start = sim.audit().entries.len();
    let since = std::time::Instant::now();
    put_lease(&t, "in-cluster-cvo_2", 0).await;
    wait_snapshot(&mut h, "the new holder, by a GET", Duration::from_secs(15), |s| {
        holder(s).as_deref() == Some("in-cluster-cvo_2")
    })
    .await;
    let took = since.elapsed();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let elapsed = since.elapsed().as_secs_f64();
    let gets = lease_gets(&t, start);
    eprintln!("without the Lease's watch: new holder after {took:?}; {gets} GETs in {elapsed:.1} s");
    assert!(took <= Duration::from_secs(12), "{took:?}");
    assert!(
        (1..=2).contains(&gets),
        "{gets} GETs of the Lease in {elapsed:.1} s: at most one per 10 s"
    );
    h.shutdown().await;
}
