//! The live feed (`cluster::live::watch_state`) under faults, against the simulator: an HTTP
//! `410` answer to a watch request relists, the stale mark clears when the watch is back
//! (without any event), a lone event is published without waiting while a burst is gathered,
//! and through `connect` (a real HTTPS client against `cvo sim serve`) a 503 outage reaches the
//! feed within one backoff step with no request bursts.

use std::{
    ffi::OsStr,
    process::Stdio,
    sync::Arc,
    time::{Duration, Instant},
};

use cvo::{
    cluster::{ClusterState, FeedStatus, live},
    sim::{
        Simulator, demo_cluster,
        faults::{Faults, Timed},
    },
};
use serde_json::{Value, json};
use tokio::sync::watch;

mod common;

fn client(sim: &Simulator) -> kube::Client {
    kube::Client::new(sim.clone(), "default")
}

fn healthy(s: &Arc<ClusterState>) -> bool {
    matches!(
        s.feed,
        FeedStatus::Live {
            synced: true,
            error: None
        }
    )
}

fn failing(s: &Arc<ClusterState>) -> bool {
    matches!(s.feed, FeedStatus::Live { error: Some(_), .. })
}

fn node(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
}

fn has_node(s: &ClusterState, name: &str) -> bool {
    s.nodes.iter().any(|n| n.metadata.name.as_deref() == Some(name))
}

/// `(verb, code, fault)` of the requests on nodes, oldest first.
fn node_requests(sim: &Simulator) -> Vec<(&'static str, u16, Option<String>)> {
    sim.audit()
        .entries
        .into_iter()
        .filter(|e| e.path == "/api/v1/nodes")
        .map(|e| (e.verb, e.code, e.fault))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_410_answer_to_a_watch_request_leads_to_a_fresh_list() {
    let sim = demo_cluster().expect("demo cluster");
    sim.set_faults(Faults {
        timed: vec![Timed {
            verb: Some("watch".into()),
            resource: Some("nodes".into()),
            gone_http_next: 1,
            ..Timed::default()
        }],
        ..Faults::default()
    })
    .expect("faults");
    let mut rx = live::watch_state(client(&sim), "sim".into());
    common::wait_for(&mut rx, "first sync", healthy).await;
    // The first watch of nodes is answered 410; the next request must be a LIST, and the
    // watch after it succeeds.
    let deadline = Instant::now() + Duration::from_secs(10);
    let reqs = loop {
        let reqs = node_requests(&sim);
        if reqs.len() >= 4 || Instant::now() > deadline {
            break reqs;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let shape: Vec<(&str, u16)> = reqs.iter().take(4).map(|r| (r.0, r.1)).collect();
    assert_eq!(
        shape,
        [("list", 200), ("watch", 410), ("list", 200), ("watch", 200)],
        "requests on nodes: {reqs:?}"
    );
    assert_eq!(reqs[1].2.as_deref(), Some("gone (HTTP 410)"));
    // The node added after the relist arrives through the new watch.
    sim.insert(node("after-relist")).expect("insert");
    common::wait_for(&mut rx, "node after relist", |s| has_node(s, "after-relist")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stale_mark_clears_when_the_watch_is_back_without_any_event() {
    let sim = demo_cluster().expect("demo cluster");
    // Every watch ends at t=2 s, watches are refused (503) until t=4 s; lists always work, and
    // nothing changes in the cluster.
    sim.set_faults(Faults {
        timed: vec![
            Timed {
                from: 2.0,
                drop_watches: true,
                ..Timed::default()
            },
            Timed {
                from: 2.0,
                until: Some(4.0),
                verb: Some("watch".into()),
                error: Some(503),
                ..Timed::default()
            },
        ],
        ..Faults::default()
    })
    .expect("faults");
    let started = Instant::now();
    let mut rx = live::watch_state(client(&sim), "sim".into());
    common::wait_for(&mut rx, "first sync", healthy).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the first sync must come before the outage"
    );
    let rv = sim.resource_version();
    let stale = common::wait_for(&mut rx, "the watch failure", failing).await;
    let FeedStatus::Live { error: Some(e), .. } = &stale.feed else {
        unreachable!()
    };
    assert!(e.message.contains("watch"), "{}", e.message);
    // Back at t=4 s (plus one backoff step of at most 1.6 s): healthy again, with no event.
    common::wait_for(&mut rx, "recovery without an event", healthy).await;
    assert_eq!(sim.resource_version(), rv, "nothing changed in the cluster");
    let lists = sim.audit().count("list");
    assert_eq!(lists, 6, "one list per kind: no relist was needed");
}

/// Waits (with the clock paused, so "waiting" is virtual and exact) until no task has work.
async fn settle() {
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[tokio::test(start_paused = true)]
async fn a_lone_event_is_published_at_once_and_a_burst_is_gathered() {
    let sim = demo_cluster().expect("demo cluster");
    let mut rx = live::watch_state(client(&sim), "sim".into());
    common::wait_for(&mut rx, "first sync", healthy).await;
    settle().await;
    rx.borrow_and_update();

    // A lone event: published with no timer in between (virtual time does not move).
    let t0 = tokio::time::Instant::now();
    sim.insert(node("lone")).expect("insert");
    rx.changed().await.expect("feed alive");
    assert!(has_node(&rx.borrow_and_update(), "lone"));
    assert_eq!(
        t0.elapsed(),
        Duration::ZERO,
        "a lone event must not wait for a coalescing timer"
    );

    // A burst of 100 events: gathered into a few states, the last holding all of them.
    settle().await;
    let mut states = 0;
    for i in 0..100 {
        sim.insert(node(&format!("burst-{i}"))).expect("insert");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while let Ok(Ok(())) = tokio::time::timeout_at(deadline, rx.changed()).await {
        states += 1;
        if has_node(&rx.borrow_and_update(), "burst-99") {
            break;
        }
    }
    let last = rx.borrow().clone();
    assert_eq!(
        last.nodes
            .iter()
            .filter(|n| n
                .metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("burst-")))
            .count(),
        100
    );
    assert!((1..=3).contains(&states), "{states} states for one burst");
}

/// Event → state latency, wall clock, on a multi-threaded runtime: printed (`--nocapture`),
/// not asserted (the machine may be loaded). Every event must arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_to_state_latency_is_reported() {
    let sim = demo_cluster().expect("demo cluster");
    let mut rx = live::watch_state(client(&sim), "sim".into());
    common::wait_for(&mut rx, "first sync", healthy).await;
    let mut samples = Vec::new();
    for i in 0..40 {
        tokio::time::sleep(Duration::from_millis(120)).await;
        let name = format!("probe-{i}");
        let t0 = Instant::now();
        sim.insert(node(&name)).expect("insert");
        let got: Result<Arc<ClusterState>, _> =
            common::watch_until(&mut rx, Duration::from_secs(5), |s: &Arc<ClusterState>| {
                has_node(s, &name)
            })
            .await;
        assert!(got.is_ok(), "{name} never reached the feed");
        samples.push(t0.elapsed());
    }
    samples.sort();
    let median = samples[samples.len() / 2];
    let p90 = samples[samples.len() * 9 / 10];
    eprintln!(
        "event -> state latency over {} events: median {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        samples.len(),
        median.as_secs_f64() * 1e3,
        p90.as_secs_f64() * 1e3,
        samples[samples.len() - 1].as_secs_f64() * 1e3
    );
}

/// Request times per kind path from `cvo sim serve`'s audit log.
fn audit_times(log: &str) -> Vec<(String, chrono::DateTime<chrono::Utc>, u16)> {
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let t = chrono::DateTime::parse_from_rfc3339(v["time"].as_str()?).ok()?;
            Some((
                v["path"].as_str()?.to_owned(),
                t.with_timezone(&chrono::Utc),
                u16::try_from(v["status"].as_u64()?).ok()?,
            ))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_of_503s_reaches_the_feed_within_one_backoff_step_without_bursts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let audit = dir.path().join("audit.jsonl");
    let scenario = dir.path().join("outage.yaml");
    let snapshot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    std::fs::write(
        &scenario,
        format!(
            "from: [{}]\nfaults:\n  timed:\n    - {{from: 3, drop_watches: true}}\n    - {{from: 3, until: 15, error: 503}}\n",
            snapshot.display()
        ),
    )
    .expect("scenario");
    let args: Vec<&OsStr> = vec![
        OsStr::new("--scenario"),
        scenario.as_os_str(),
        OsStr::new("--audit-log"),
        audit.as_os_str(),
    ];
    let (mut child, _) = common::spawn_sim_serve(&kubeconfig, &args, Stdio::null(), Duration::from_secs(30));
    let start = Instant::now();
    let result = async {
        let conn = live::connect(Some(&kubeconfig), None).await.expect("connect");
        let mut rx: watch::Receiver<Arc<ClusterState>> = live::watch_state(conn.client, conn.context);
        common::wait_for(&mut rx, "first sync", healthy).await;
        let down = common::watch_until(&mut rx, Duration::from_secs(12), failing).await;
        let shown_after = start.elapsed();
        let back = common::watch_until(&mut rx, Duration::from_secs(25), healthy).await;
        (down.is_ok(), shown_after, back.is_ok())
    }
    .await;
    let _ = child.kill();
    let _ = child.wait();
    let (down, shown_after, back) = result;
    assert!(down, "the 503 outage from t=3 s never reached the feed");
    // t=3 s + the client's two retries (0.25 + 0.5 s, plus jitter) + one backoff step (<= 1.6 s).
    assert!(
        shown_after < Duration::from_secs(7),
        "outage shown only after {shown_after:?}"
    );
    assert!(back, "the feed did not recover after the outage");
    let log = std::fs::read_to_string(&audit).expect("audit log");
    let entries = audit_times(&log);
    let mut paths: Vec<&String> = entries.iter().filter(|e| e.2 == 503).map(|e| &e.0).collect();
    paths.sort();
    paths.dedup();
    assert!(paths.len() >= 5, "503s for {} kinds only", paths.len());
    for p in paths {
        let times: Vec<_> = entries
            .iter()
            .filter(|e| &e.0 == p && e.2 == 503)
            .map(|e| e.1)
            .collect();
        // 12 s of outage: the client's capped retries and the watch layer's exponential
        // backoff, never the 15 quick retries kube's client makes by itself.
        assert!(times.len() <= 18, "{p}: {} requests answered 503", times.len());
        let min_gap = times
            .windows(2)
            .map(|w| w[1] - w[0])
            .min()
            .unwrap_or(chrono::Duration::seconds(1));
        assert!(
            min_gap >= chrono::Duration::milliseconds(200),
            "{p}: requests {min_gap:?} apart during the outage"
        );
    }
}

/// A server that closes every watch at once, before any event, is not hammered: the feed
/// re-opens such a watch only after a backoff step (client-go: "very short watch"). A short
/// watch that delivered events is re-opened at once (`sim_serve.rs`,
/// `watches_survive_drops_and_forced_410s`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_closed_before_any_event_are_reopened_after_a_backoff() {
    let sim = demo_cluster().expect("demo cluster");
    sim.set_faults(Faults {
        watch: cvo::sim::faults::WatchFaults {
            drop_after_secs: Some(0.01),
            ..Default::default()
        },
        ..Faults::default()
    })
    .expect("faults");
    let mut rx = live::watch_state(client(&sim), "sim".into());
    common::wait_for(&mut rx, "first sync", healthy).await;
    let watches = |sim: &Simulator| {
        node_requests(sim)
            .iter()
            .filter(|(verb, _, _)| *verb == "watch")
            .count()
    };
    let before = watches(&sim);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let opened = watches(&sim) - before;
    // Each watch closes within 10 ms and waits one backoff step (0.8 s, jittered) before the
    // next: a handful in 3 s, not hundreds.
    assert!((1..=8).contains(&opened), "{opened} node watches in 3 s");
    // Changes still arrive, one short watch at a time.
    sim.insert(node("late")).expect("node");
    common::wait_for(&mut rx, "the new node", |s| has_node(s, "late")).await;
}

/// A failing list reaches the dashboard as one sentence (the Status's message, reason and
/// code, as `cvo status` prints it), never kube's debug form of the Status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_on_a_list_reaches_the_feed_as_one_sentence() {
    let sim = demo_cluster().expect("demo cluster");
    sim.set_faults(Faults {
        timed: vec![Timed {
            verb: Some("list".into()),
            resource: Some("clusteroperators".into()),
            error: Some(500),
            ..Timed::default()
        }],
        ..Faults::default()
    })
    .expect("faults");
    let mut rx = live::watch_state(client(&sim), "sim".into());
    let failed = common::wait_for(&mut rx, "the list failure", failing).await;
    let FeedStatus::Live { error: Some(e), .. } = &failed.feed else {
        unreachable!()
    };
    assert_eq!(
        e.message,
        "list clusteroperators: Internal error occurred: injected fault (reason InternalError, code 500)"
    );
}
