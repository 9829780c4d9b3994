//! Leader election (`cvo::reconcile::runtime::leader`) against the simulated API server through a real
//! `kube::Client`: acquiring, waiting behind a holder, taking over after expiry, release,
//! losing the lease on a renew conflict, a deleted Lease or a passed renew deadline, and
//! `leaseTransitions`. Timings are a few hundred milliseconds, so the whole file runs in seconds.

use std::{
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use cvo::{
    reconcile::runtime::leader::{LeaderElector, LeaderError, LeaderState, LeaseConfig, LeaseTimings},
    sim::Simulator,
};
use http_body_util::{BodyExt, Full};
use k8s_openapi::api::coordination::v1::Lease;
use kube::{
    Api, Client,
    api::{DeleteParams, Patch, PatchParams},
};
use serde_json::{Value, json};
use tokio::{sync::watch, time::Instant};

mod common;
use common::Unmet;

const NS: &str = "openshift-cluster-version";
const NAME: &str = "version";
const LIMIT: Duration = Duration::from_secs(10);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// 1 s lease, 800 ms renew deadline, 200 ms retry period.
fn fast() -> LeaseTimings {
    LeaseTimings::new(ms(1000), ms(800), ms(200)).expect("valid timings")
}

/// A simulator holding the Lease's namespace (creating a namespaced object needs it).
fn simulator() -> Simulator {
    let sim = Simulator::new();
    sim.insert(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .expect("namespace");
    sim
}

fn client(sim: &Simulator) -> Client {
    Client::new(sim.clone(), "default")
}

fn elector(c: Client, id: &str, timings: LeaseTimings) -> LeaderElector {
    let cfg = LeaseConfig::cvo(id, timings);
    LeaderElector::new(c, cfg).expect("elector")
}

async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out: {what}"),
    }
}

/// Waits (at most 10 s) for a state matching `pred`; returns it.
async fn wait_state(
    rx: &mut watch::Receiver<LeaderState>,
    what: &str,
    pred: impl Fn(&LeaderState) -> bool,
) -> LeaderState {
    match common::watch_until(rx, LIMIT, pred).await {
        Ok(v) => v,
        Err(Unmet::Closed(last)) => {
            panic!("elector ended while waiting for {what}; last state: {last:?}")
        }
        Err(Unmet::TimedOut(last)) => panic!("timed out waiting for {what}; last state: {last:?}"),
    }
}

fn leading(s: &LeaderState) -> bool {
    s.is_leading()
}

fn lease(sim: &Simulator) -> Value {
    sim.get("coordination.k8s.io", "leases", NS, NAME)
        .expect("the lease exists")
}

fn spec_str(l: &Value, field: &str) -> Option<String> {
    l["spec"][field].as_str().map(str::to_owned)
}

fn spec_time(l: &Value, field: &str) -> DateTime<Utc> {
    let s = spec_str(l, field).unwrap_or_else(|| panic!("spec.{field} set in {l}"));
    DateTime::parse_from_rfc3339(&s)
        .unwrap_or_else(|e| panic!("spec.{field} {s:?}: {e}"))
        .with_timezone(&Utc)
}

fn lease_writes(sim: &Simulator) -> usize {
    sim.audit()
        .entries
        .iter()
        .filter(|e| e.path.contains("/leases"))
        .filter(|e| matches!(e.verb, "create" | "update" | "patch" | "delete"))
        .count()
}

#[tokio::test]
async fn one_elector_acquires_and_renews() {
    let sim = simulator();
    let (mut rx, handle) = elector(client(&sim), "a", fast()).spawn();
    let state = wait_state(&mut rx, "a leads", leading).await;

    let first = lease(&sim);
    assert_eq!(spec_str(&first, "holderIdentity").as_deref(), Some("a"));
    assert_eq!(first["spec"]["leaseDurationSeconds"], json!(1));
    assert_eq!(first["spec"]["leaseTransitions"], json!(0));
    let acquired = spec_time(&first, "acquireTime");
    assert_eq!(state, LeaderState::Leading { since: acquired });
    // MicroTime: microsecond precision on the wire.
    let raw = spec_str(&first, "renewTime").expect("renewTime");
    assert_eq!(raw.len(), "2026-11-30T09:43:49.123456Z".len(), "{raw}");
    assert_eq!(sim.audit().count("create"), 1);

    tokio::time::sleep(ms(700)).await;
    let later = lease(&sim);
    assert!(
        spec_time(&later, "renewTime") > spec_time(&first, "renewTime"),
        "renewed: {later}"
    );
    assert_eq!(spec_time(&later, "acquireTime"), acquired);
    assert_eq!(later["spec"]["leaseTransitions"], json!(0));
    // ~3 renewals in 700 ms at a 200 ms retry period, each a single update (no read).
    let updates = sim.audit().count("update");
    assert!((2..=5).contains(&updates), "{updates} renewals in 700 ms");
    assert!(rx.borrow().is_leading());

    within("release", handle.release()).await.expect("released");
    assert_eq!(*rx.borrow(), LeaderState::Released);
}

#[tokio::test]
async fn second_waits_and_names_the_holder() {
    let sim = simulator();
    let (mut a_rx, a) = elector(client(&sim), "a", fast()).spawn();
    wait_state(&mut a_rx, "a leads", leading).await;
    let (mut b_rx, b) = elector(client(&sim), "b", fast()).spawn();
    let waiting = wait_state(
        &mut b_rx,
        "b names a",
        |s| matches!(s, LeaderState::Acquiring { holder: Some(h), .. } if h == "a"),
    )
    .await;
    assert_eq!(waiting.to_string(), "waiting for the lease held by a");

    // Two lease durations: a keeps renewing, b never gets in.
    tokio::time::sleep(ms(2000)).await;
    assert!(a_rx.borrow().is_leading());
    assert!(!b_rx.borrow().is_leading());
    assert!(
        !b_rx.has_changed().expect("b runs"),
        "b's state stayed put: {:?}",
        *b_rx.borrow()
    );
    assert_eq!(spec_str(&lease(&sim), "holderIdentity").as_deref(), Some("a"));
    assert_eq!(lease(&sim)["spec"]["leaseTransitions"], json!(0));

    within("release b", b.release()).await.expect("b stops");
    assert_eq!(*b_rx.borrow(), LeaderState::Released);
    // b never led, so its release wrote nothing: a still holds and renews.
    tokio::time::sleep(ms(300)).await;
    assert_eq!(spec_str(&lease(&sim), "holderIdentity").as_deref(), Some("a"));
    within("release a", a.release()).await.expect("a released");
}

#[tokio::test]
async fn takeover_after_the_holder_stops_renewing() {
    let sim = simulator();
    let (mut a_rx, a) = elector(client(&sim), "a", fast()).spawn();
    wait_state(&mut a_rx, "a leads", leading).await;
    let (mut b_rx, b) = elector(client(&sim), "b", fast()).spawn();
    wait_state(
        &mut b_rx,
        "b waits for a",
        |s| matches!(s, LeaderState::Acquiring { holder: Some(h), .. } if h == "a"),
    )
    .await;

    a.abort(); // a crash: no release
    tokio::time::sleep(ms(50)).await;
    let crashed_at = Instant::now();
    let last_renew = spec_time(&lease(&sim), "renewTime");
    let state = wait_state(&mut b_rx, "b takes over", leading).await;
    let took = crashed_at.elapsed();

    let l = lease(&sim);
    assert_eq!(spec_str(&l, "holderIdentity").as_deref(), Some("b"));
    assert_eq!(l["spec"]["leaseTransitions"], json!(1));
    let acquired = spec_time(&l, "acquireTime");
    assert_eq!(state, LeaderState::Leading { since: acquired });
    // Not before a's lease expired (renewTime + 1 s), and soon after: the lease duration plus
    // at most one jittered retry (2.2 x 200 ms) and some slack.
    assert!(
        acquired > last_renew + chrono::Duration::seconds(1),
        "b acquired at {acquired}, a's lease ran to {last_renew} + 1s"
    );
    assert!(took < ms(2000), "takeover took {took:?}");
    // a's channel keeps its last value after the crash.
    assert!(a_rx.borrow().is_leading());
    within("release b", b.release()).await.expect("b released");
}

#[tokio::test]
async fn release_hands_over_at_once_and_transitions_count() {
    let sim = simulator();
    // A 5 s lease: a handover well under 5 s can only come from the release.
    let slow_expiry = LeaseTimings::new(ms(5000), ms(4000), ms(200)).expect("timings");
    let (mut a_rx, a) = elector(client(&sim), "a", slow_expiry).spawn();
    wait_state(&mut a_rx, "a leads", leading).await;
    let (mut b_rx, b) = elector(client(&sim), "b", slow_expiry).spawn();
    let (mut c_rx, c) = elector(client(&sim), "c", slow_expiry).spawn();
    wait_state(&mut b_rx, "b waits", |s| {
        matches!(s, LeaderState::Acquiring { holder: Some(_), .. })
    })
    .await;
    wait_state(&mut c_rx, "c waits", |s| {
        matches!(s, LeaderState::Acquiring { holder: Some(_), .. })
    })
    .await;

    let released_at = Instant::now();
    within("release a", a.release()).await.expect("a released");
    assert_eq!(*a_rx.borrow(), LeaderState::Released);
    // One of b and c takes over within a retry period or two, not after 5 s.
    let (mut next_rx, next, mut last_rx, last, next_id) = tokio::select! {
        _ = wait_state(&mut b_rx, "b leads", leading) => (b_rx, b, c_rx, c, "b"),
        _ = wait_state(&mut c_rx, "c leads", leading) => (c_rx, c, b_rx, b, "c"),
    };
    let took = released_at.elapsed();
    assert!(took < ms(1500), "handover took {took:?}");
    let l = lease(&sim);
    assert_eq!(spec_str(&l, "holderIdentity").as_deref(), Some(next_id));
    assert_eq!(l["spec"]["leaseTransitions"], json!(1));
    assert_eq!(l["spec"]["leaseDurationSeconds"], json!(5));
    wait_state(
        &mut last_rx,
        "the other names the new holder",
        |s| matches!(s, LeaderState::Acquiring { holder: Some(h), .. } if h == next_id),
    )
    .await;

    // Dropping the handle releases too.
    drop(next);
    wait_state(&mut next_rx, "dropped elector released", |s| {
        *s == LeaderState::Released
    })
    .await;
    wait_state(&mut last_rx, "third leads", leading).await;
    let l = lease(&sim);
    assert_eq!(l["spec"]["leaseTransitions"], json!(2));
    assert!(spec_str(&l, "holderIdentity").is_some_and(|h| h != next_id && h != "a"));

    within("release last", last.release()).await.expect("released");
    let l = lease(&sim);
    assert_eq!(l["spec"].get("holderIdentity"), None, "holder cleared: {l}");
    assert_eq!(l["spec"]["leaseDurationSeconds"], json!(1));
    assert_eq!(l["spec"]["leaseTransitions"], json!(2), "release keeps the count");
}

#[tokio::test]
async fn a_foreign_write_makes_the_renewal_conflict_and_the_lease_lost() {
    let sim = simulator();
    let (mut rx, handle) = elector(client(&sim), "a", fast()).spawn();
    wait_state(&mut rx, "a leads", leading).await;

    let bumped_at = Instant::now();
    let patch = json!({"metadata": {"annotations": {"someone": "else"}}});
    Api::<Lease>::namespaced(client(&sim), NS)
        .patch(NAME, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("foreign patch");
    let state = wait_state(&mut rx, "a lost", |s| matches!(s, LeaderState::Lost { .. })).await;
    let took = bumped_at.elapsed();
    assert!(
        took < ms(500),
        "lost {took:?} after the foreign write, not at the next renewal"
    );
    let LeaderState::Lost { reason } = state else {
        unreachable!()
    };
    assert!(reason.contains("409 Conflict"), "{reason}");
    match within("join", handle.join()).await {
        Err(LeaderError::Lost { lease, reason }) => {
            assert_eq!(lease, "openshift-cluster-version/version");
            assert!(reason.contains("another writer"), "{reason}");
        }
        other => panic!("expected Lost, got {other:?}"),
    }

    // A lost leader neither renews nor releases.
    let writes = lease_writes(&sim);
    tokio::time::sleep(ms(600)).await;
    assert_eq!(lease_writes(&sim), writes);
    assert_eq!(spec_str(&lease(&sim), "holderIdentity").as_deref(), Some("a"));
}

#[tokio::test]
async fn a_missing_namespace_is_reported_while_acquiring() {
    let sim = Simulator::new();
    let (mut rx, handle) = elector(client(&sim), "a", fast()).spawn();
    let state = wait_state(&mut rx, "an error", |s| {
        matches!(s, LeaderState::Acquiring { error: Some(_), .. })
    })
    .await;
    assert_eq!(
        state.to_string(),
        "waiting for the lease: 404 NotFound: namespaces \"openshift-cluster-version\" not found"
    );
    sim.insert(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .expect("namespace");
    wait_state(&mut rx, "a leads once the namespace exists", leading).await;
    within("release", handle.release()).await.expect("released");
}

#[tokio::test]
async fn a_deleted_lease_is_lost() {
    let sim = simulator();
    let (mut rx, handle) = elector(client(&sim), "a", fast()).spawn();
    wait_state(&mut rx, "a leads", leading).await;
    Api::<Lease>::namespaced(client(&sim), NS)
        .delete(NAME, &DeleteParams::default())
        .await
        .expect("delete");
    let state = wait_state(&mut rx, "a lost", |s| matches!(s, LeaderState::Lost { .. })).await;
    assert!(
        state
            .to_string()
            .starts_with("lost the lease: deleted (404 NotFound"),
        "{state}"
    );
    assert!(handle.join().await.is_err());
}

/// A client whose requests fail with `500 InternalError` while `failing` is set.
fn flaky_client(sim: &Simulator, failing: Arc<AtomicBool>) -> Client {
    let sim = sim.clone();
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let mut sim = sim.clone();
        let failing = failing.load(Ordering::SeqCst);
        async move {
            if failing {
                let body = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "InternalError", "message": "injected", "code": 500});
                let resp = http::Response::builder()
                    .status(500)
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(body.to_string())).boxed_unsync())
                    .expect("response");
                return Ok(resp);
            }
            tower::Service::call(&mut sim, req).await
        }
    });
    Client::new(svc, "default")
}

#[tokio::test]
async fn transient_errors_are_retried_until_the_renew_deadline() {
    let sim = simulator();
    let failing = Arc::new(AtomicBool::new(false));
    // 2 s lease, 1 s renew deadline, 200 ms retry.
    let t = LeaseTimings::new(ms(2000), ms(1000), ms(200)).expect("timings");
    let (mut rx, handle) = elector(flaky_client(&sim, failing.clone()), "a", t).spawn();
    wait_state(&mut rx, "a leads", leading).await;

    // A short outage (about two renewals) is ridden out.
    failing.store(true, Ordering::SeqCst);
    tokio::time::sleep(ms(450)).await;
    failing.store(false, Ordering::SeqCst);
    tokio::time::sleep(ms(500)).await;
    assert!(rx.borrow().is_leading(), "{:?}", *rx.borrow());
    assert!(!rx.has_changed().expect("running"), "never left Leading");

    // A long one is not: Lost at the renew deadline, before the 2 s lease expires.
    let last_renew = spec_time(&lease(&sim), "renewTime");
    failing.store(true, Ordering::SeqCst);
    let outage = Instant::now();
    let state = wait_state(&mut rx, "a lost", |s| matches!(s, LeaderState::Lost { .. })).await;
    let took = outage.elapsed();
    assert!(state.to_string().contains("renew deadline 1s"), "{state}");
    assert!(state.to_string().contains("injected"), "{state}");
    assert!(took <= ms(1400), "lost after {took:?}");
    let lost_at = Utc::now();
    assert!(
        lost_at < last_renew + chrono::Duration::seconds(2),
        "stopped before the lease expired"
    );
    assert!(matches!(handle.join().await, Err(LeaderError::Lost { .. })));
}

#[tokio::test]
async fn an_existing_expired_lease_is_taken_and_a_valid_one_respected() {
    let sim = simulator();
    let now = Utc::now();
    let stamp = |t: DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    // Held by "old", renewed 10 s ago with a 5 s duration: expired.
    sim.insert(json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {"holderIdentity": "old", "leaseDurationSeconds": 5, "leaseTransitions": 7,
                 "acquireTime": stamp(now - chrono::Duration::seconds(60)),
                 "renewTime": stamp(now - chrono::Duration::seconds(10))},
    }))
    .expect("seed");
    let (mut rx, handle) = elector(client(&sim), "a", fast()).spawn();
    wait_state(&mut rx, "a takes the expired lease", leading).await;
    let l = lease(&sim);
    assert_eq!(l["spec"]["leaseTransitions"], json!(8));
    assert_eq!(l["spec"]["leaseDurationSeconds"], json!(1));
    assert!(spec_time(&l, "acquireTime") >= now);
    within("release", handle.release()).await.expect("released");

    // Held by "other", renewed just now with a 60 s duration: valid, however short our own
    // timings are.
    sim.insert(json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {"holderIdentity": "other", "leaseDurationSeconds": 60, "leaseTransitions": 9,
                 "renewTime": stamp(Utc::now())},
    }))
    .expect("seed");
    let (mut rx, handle) = elector(client(&sim), "b", fast()).spawn();
    wait_state(
        &mut rx,
        "b waits for other",
        |s| matches!(s, LeaderState::Acquiring { holder: Some(h), .. } if h == "other"),
    )
    .await;
    let writes = lease_writes(&sim);
    tokio::time::sleep(ms(1500)).await;
    assert!(!rx.borrow().is_leading());
    assert_eq!(lease_writes(&sim), writes, "a waiting candidate only reads");
    within("release", handle.release()).await.expect("stopped");
}
