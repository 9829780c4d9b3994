//! The live feed (`cluster::live::watch_state`) against an in-process fake API server behind
//! `kube::Client::new`: the initial lists populate the state, a watch event shows up in the
//! next state, and a failing API is reported (with its start time) without ending the feed.

use std::{
    collections::HashMap,
    convert::Infallible,
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use cvo::cluster::{FeedStatus, live::watch_state};
use futures::StreamExt;
use http::{Request, Response, StatusCode};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody, combinators::UnsyncBoxBody};
use serde_json::{Value, json};
use tokio::sync::mpsc;

mod common;

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// The fake API: lists per URL path, open watch channels per path, and a switch to fail.
#[derive(Default)]
struct FakeApi {
    lists: HashMap<String, Value>,
    watchers: Vec<(String, mpsc::UnboundedSender<Bytes>)>,
    failing: bool,
    requests: usize,
    /// Requests per URL path.
    per_path: HashMap<String, usize>,
}

fn full(status: StatusCode, v: &Value) -> Response<Body> {
    let bytes = Bytes::from(serde_json::to_vec(v).unwrap_or_default());
    let body = http_body_util::Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut r = Response::new(body);
    *r.status_mut() = status;
    r
}

fn handle(api: &Arc<Mutex<FakeApi>>, req: &Request<kube::client::Body>) -> Response<Body> {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let mut api = api.lock().expect("fake api lock");
    api.requests += 1;
    *api.per_path.entry(path.clone()).or_default() += 1;
    if api.failing {
        return full(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcd is down","reason":"InternalError","code":500}),
        );
    }
    if query.contains("watch=true") {
        let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
        api.watchers.push((path, tx));
        let stream = tokio_stream_from(rx).map(|b| Ok::<_, Infallible>(Frame::data(b)));
        return Response::new(StreamBody::new(stream).boxed_unsync());
    }
    let list = api.lists.get(&path).cloned().unwrap_or_else(
        || json!({"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}),
    );
    full(StatusCode::OK, &list)
}

fn tokio_stream_from(mut rx: mpsc::UnboundedReceiver<Bytes>) -> impl futures::Stream<Item = Bytes> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

fn list(kind: &str, api_version: &str, items: Vec<Value>) -> Value {
    json!({"kind": format!("{kind}List"), "apiVersion": api_version, "metadata": {"resourceVersion": "1"}, "items": items})
}

fn operator(name: &str, version: &str, degraded: &str) -> Value {
    json!({
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
        "metadata": {"name": name, "resourceVersion": "1"},
        "status": {
            "conditions": [
                {"type": "Available", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"},
                {"type": "Degraded", "status": degraded, "lastTransitionTime": "2024-01-01T00:00:00Z", "message": "line one\nline two"}
            ],
            "versions": [{"name": "operator", "version": version}]
        }
    })
}

fn fake_cluster() -> Arc<Mutex<FakeApi>> {
    let mut api = FakeApi::default();
    let cv = json!({
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"name": "version", "resourceVersion": "1"},
        "spec": {"channel": "stable-4.16"},
        "status": {"desired": {"version": "4.16.4", "image": "example/release:4.16.4"},
                   "history": [{"state": "Completed", "version": "4.16.3", "image": "x", "verified": true}]}
    });
    api.lists.insert(
        "/apis/config.openshift.io/v1/clusterversions".into(),
        list("ClusterVersion", "config.openshift.io/v1", vec![cv]),
    );
    api.lists.insert(
        "/apis/config.openshift.io/v1/clusteroperators".into(),
        list(
            "ClusterOperator",
            "config.openshift.io/v1",
            vec![
                operator("etcd", "4.16.3", "False"),
                operator("dns", "4.16.3", "False"),
            ],
        ),
    );
    api.lists.insert(
        "/api/v1/nodes".into(),
        list(
            "Node",
            "v1",
            vec![
                json!({"apiVersion":"v1","kind":"Node","metadata":{"name":"master-0","resourceVersion":"1"}}),
            ],
        ),
    );
    Arc::new(Mutex::new(api))
}

fn client_for(api: &Arc<Mutex<FakeApi>>) -> kube::Client {
    let api = api.clone();
    let svc = tower::service_fn(move |req: Request<kube::client::Body>| {
        let resp = handle(&api, &req);
        async move { Ok::<_, Infallible>(resp) }
    });
    kube::Client::new(svc, "default")
}

#[tokio::test]
async fn initial_lists_fill_the_state_and_watch_events_update_it() {
    let api = fake_cluster();
    let mut rx = watch_state(client_for(&api), "fake".into());
    let state = common::wait_for(&mut rx, "initial lists", |s| {
        s.cluster_operators.len() == 2
            && matches!(
                s.feed,
                FeedStatus::Live {
                    synced: true,
                    error: None
                }
            )
    })
    .await;
    assert_eq!(state.source, "context fake");
    assert_eq!(
        state.cluster_operators[0].name(),
        "dns",
        "operators sorted by name"
    );
    assert_eq!(state.nodes.len(), 1);
    assert_eq!(
        state.cluster_version.as_ref().and_then(|cv| cv.current_version()),
        Some("4.16.3")
    );

    // A MODIFIED event for etcd (now Degraded=True at 4.16.4) reaches the next state.
    let started = std::time::Instant::now();
    let event = json!({"type": "MODIFIED", "object": operator("etcd", "4.16.4", "True")});
    let mut line = serde_json::to_vec(&event).expect("json");
    line.push(b'\n');
    {
        let api = api.lock().expect("lock");
        let senders: Vec<_> = api
            .watchers
            .iter()
            .filter(|(p, _)| p.ends_with("/clusteroperators"))
            .map(|(_, tx)| tx.clone())
            .collect();
        assert!(
            !senders.is_empty(),
            "the feed must hold a watch on clusteroperators"
        );
        for tx in senders {
            let _ = tx.send(Bytes::from(line.clone()));
        }
    }
    let state = common::wait_for(&mut rx, "etcd update", |s| {
        s.cluster_operators
            .iter()
            .any(|o| o.name() == "etcd" && o.operator_version() == Some("4.16.4"))
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "watch event took {:?}",
        started.elapsed()
    );
    let etcd = state
        .cluster_operators
        .iter()
        .find(|o| o.name() == "etcd")
        .expect("etcd");
    assert!(etcd.condition("Degraded").is_some_and(|c| c.is_true()));
}

#[tokio::test]
async fn a_failing_api_is_reported_and_the_feed_keeps_going() {
    let api = fake_cluster();
    api.lock().expect("lock").failing = true;
    let mut rx = watch_state(client_for(&api), "down".into());
    let state = common::wait_for(&mut rx, "error report", |s| {
        matches!(&s.feed, FeedStatus::Live { error: Some(_), .. })
    })
    .await;
    let FeedStatus::Live {
        error: Some(err),
        synced,
    } = &state.feed
    else {
        unreachable!()
    };
    assert!(!synced);
    assert!(err.message.contains("etcd is down"), "{}", err.message);
    let first_since = err.since;

    // The API comes back: the backoff retries, the state fills and the error clears.
    api.lock().expect("lock").failing = false;
    let state = common::wait_for(&mut rx, "recovery", |s| {
        matches!(
            &s.feed,
            FeedStatus::Live {
                synced: true,
                error: None
            }
        )
    })
    .await;
    assert!(state.cluster_version.is_some());
    assert_eq!(state.cluster_operators.len(), 2);
    assert!(first_since <= chrono::Utc::now());
    // Backoff: while failing, the watchers did not spin (6 kinds, bounded retries).
    let requests = api.lock().expect("lock").requests;
    assert!(requests < 200, "watchers retried {requests} times: no backoff?");
}

#[tokio::test]
async fn a_dead_api_is_retried_with_growing_backoff_and_a_steady_since() {
    let api = fake_cluster();
    api.lock().expect("lock").failing = true;
    let mut rx = watch_state(client_for(&api), "dead".into());
    let first = common::wait_for(&mut rx, "error report", |s| {
        matches!(&s.feed, FeedStatus::Live { error: Some(_), .. })
    })
    .await;
    let FeedStatus::Live {
        error: Some(first_err),
        ..
    } = &first.feed
    else {
        unreachable!()
    };
    let since = first_err.since;
    // Ten seconds of a dead API: 0.8 s, 1.6 s, 3.2 s, 6.4 s (+ jitter) between attempts means at most
    // four attempts per watched kind; a backoff reset before every retry would make seven or more.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while tokio::time::Instant::now() < deadline {
        if tokio::time::timeout_at(deadline, rx.changed()).await.is_err() {
            break;
        }
        let state = rx.borrow_and_update().clone();
        if let FeedStatus::Live { error: Some(e), .. } = &state.feed {
            assert_eq!(
                e.since, since,
                "'API unreachable since' must not move while the API stays down"
            );
        }
    }
    let api = api.lock().expect("lock");
    let cv = api
        .per_path
        .get("/apis/config.openshift.io/v1/clusterversions")
        .copied()
        .unwrap_or(0);
    let co = api
        .per_path
        .get("/apis/config.openshift.io/v1/clusteroperators")
        .copied()
        .unwrap_or(0);
    assert!(
        (1..=5).contains(&cv),
        "clusterversions requested {cv} times in 10 s"
    );
    assert!(
        (1..=5).contains(&co),
        "clusteroperators requested {co} times in 10 s"
    );
}
