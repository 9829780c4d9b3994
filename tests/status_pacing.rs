//! When the engine writes the ClusterVersion status: edges (Completed, a new run level, ...) at
//! once, progress-only changes at most once a second. Tokio's paused clock drives the engine,
//! a test applier (each task takes 20 ms) and the in-process simulator; a recording layer in
//! front of the simulator notes the (virtual) time and the written status of every status PUT.

#![cfg(feature = "sim")]

mod common;
use std::{
    path::Path,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::Duration,
};

use cvo::{
    openshift::{ClusterVersion, UpdateState, condition::find},
    reconcile::{
        Engine, EngineConfig, EngineTimings,
        api::{Drift, StatusSnapshot},
        apply::{TaskApplier, TaskContext, TaskOutcome},
        errors::UpdateError,
        payload::Task,
    },
    sim::Simulator,
};
use futures::{FutureExt, future::BoxFuture};
use tokio::time::Instant;

/// Tasks per run level, and run levels: 5 × 40 tasks of 20 ms applied one at a time (one
/// component per level) make a 4 s pass.
const PER_LEVEL: usize = 40;
const LEVELS: usize = 5;
const TASK_TIME: Duration = Duration::from_millis(20);

/// One status write as the simulator stored it.
#[derive(Clone, Debug)]
struct Written {
    at: Instant,
    completed: bool,
    progressing: String,
}

/// The simulator behind a layer that records every successful ClusterVersion status PUT.
#[derive(Clone)]
struct Recorder {
    sim: Simulator,
    writes: Arc<Mutex<Vec<Written>>>,
}

impl tower::Service<http::Request<kube::client::Body>> for Recorder {
    type Response = <Simulator as tower::Service<http::Request<kube::client::Body>>>::Response;
    type Error = <Simulator as tower::Service<http::Request<kube::client::Body>>>::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower::Service::poll_ready(&mut self.sim, cx)
    }

    fn call(&mut self, req: http::Request<kube::client::Body>) -> Self::Future {
        let status_put = req.method() == http::Method::PUT
            && req.uri().path().contains("/clusterversions/")
            && req.uri().path().ends_with("/status");
        let fut = tower::Service::call(&mut self.sim, req);
        let sim = self.sim.clone();
        let writes = self.writes.clone();
        Box::pin(async move {
            let r = fut.await;
            if status_put
                && r.as_ref().is_ok_and(|r| r.status().is_success())
                && let Some(v) = sim.get("config.openshift.io", "clusterversions", "", "version")
                && let Ok(cv) = serde_json::from_value::<ClusterVersion>(v)
            {
                let completed = cv
                    .status
                    .history
                    .first()
                    .is_some_and(|h| h.state == UpdateState::Completed);
                let progressing = find(&cv.status.conditions, "Progressing")
                    .map(|c| c.message().to_string())
                    .unwrap_or_default();
                if let Ok(mut w) = writes.lock() {
                    w.push(Written {
                        at: Instant::now(),
                        completed,
                        progressing,
                    });
                }
            }
            r
        })
    }
}

/// Applies nothing: each task takes [`TASK_TIME`] and reports a create; the time the last
/// task finished is kept.
#[derive(Default)]
struct SlowApplier {
    last_done: Mutex<Option<Instant>>,
}

impl TaskApplier for SlowApplier {
    fn apply<'a>(
        &'a self,
        _task: &'a Task,
        _ctx: TaskContext<'a>,
    ) -> BoxFuture<'a, Result<TaskOutcome, UpdateError>> {
        async move {
            tokio::time::sleep(TASK_TIME).await;
            if let Ok(mut t) = self.last_done.lock() {
                *t = Some(Instant::now());
            }
            Ok(TaskOutcome {
                drift: Drift::None,
                wrote: true,
            })
        }
        .boxed()
    }

    fn precreate_cluster_operator<'a>(
        &'a self,
        _task: &'a Task,
        _ctx: TaskContext<'a>,
    ) -> BoxFuture<'a, Result<bool, UpdateError>> {
        async { Ok(false) }.boxed()
    }
}

fn write_payload(dir: &Path) {
    let p = common::PayloadDir::new(dir, "1.0.0");
    let rm = &p.manifests;
    let ann = common::ANN;
    for l in 0..LEVELS {
        for i in 0..PER_LEVEL {
            let level = 10 + 10 * l;
            std::fs::write(
                rm.join(format!("0000_{level:02}_comp{l}_{i:03}-configmap.yaml")),
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{l}-{i}\n  namespace: ns\n{ann}"
                ),
            )
            .expect("write manifest");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn completed_is_written_at_once_and_progress_at_most_once_a_second() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write_payload(tmp.path());
    let sim = Simulator::new();
    let writes = Arc::new(Mutex::new(Vec::new()));
    let client = kube::Client::new(
        Recorder {
            sim: sim.clone(),
            writes: writes.clone(),
        },
        "default",
    );
    let applier = Arc::new(SlowApplier::default());
    let mut cfg = EngineConfig::local(
        tmp.path().to_path_buf(),
        Some("example.com/release@sha256:1".into()),
    )
    .expect("payload dir");
    cfg.timings = EngineTimings::scaled(0.1);
    cfg.applier = Some(applier.clone());
    let start = Instant::now();
    let mut h = Engine::spawn(client, cfg);
    let deadline = start + Duration::from_secs(60);
    loop {
        if h.status.borrow_and_update().is_completed() {
            break;
        }
        let r = tokio::time::timeout_at(deadline, h.status.changed()).await;
        let s = h.status.borrow().clone();
        assert!(
            matches!(r, Ok(Ok(()))),
            "not Completed within a minute of virtual time: {:?} {}/{} failure {:?} error {:?} cv {:#?}",
            s.state,
            s.done,
            s.total,
            s.failure,
            s.last_error,
            s.cluster_version
        );
    }
    let snap: Arc<StatusSnapshot> = h.status.borrow().clone();
    h.shutdown().await;
    let writes = writes.lock().expect("writes").clone();
    let last_task = applier.last_done.lock().expect("last task").expect("tasks ran");
    assert_eq!((snap.done, snap.total), (LEVELS * PER_LEVEL, LEVELS * PER_LEVEL));
    let pass = last_task - start;
    assert!(pass >= TASK_TIME * (LEVELS * PER_LEVEL) as u32, "{pass:?}");

    // Completed follows the last task within one write, and within the engine's 100 ms
    // coalescing of worker progress (upstream's throttle could hold it back 15 s).
    let first_completed = writes
        .iter()
        .position(|w| w.completed)
        .unwrap_or_else(|| panic!("no Completed write: {writes:#?}"));
    let after_last: Vec<&Written> = writes.iter().filter(|w| w.at >= last_task).collect();
    assert!(
        !after_last.is_empty() && after_last.len() <= 2 && after_last.last().is_some_and(|w| w.completed),
        "writes after the last task: {after_last:#?}"
    );
    let lag = writes[first_completed].at - last_task;
    assert!(
        lag <= Duration::from_millis(250),
        "Completed written {lag:?} after the last task"
    );

    // During the pass: a write less than a second after the one before it is an edge, here a
    // run level that just started (its first few tasks done) or the first writes (nothing done).
    let during: Vec<&Written> = writes.iter().filter(|w| w.at < last_task).collect();
    for pair in during.windows(2) {
        let gap = pair[1].at - pair[0].at;
        if gap < Duration::from_secs(1) {
            let done = done_of(&pair[1].progressing);
            assert!(
                done.is_some_and(|d| d % PER_LEVEL <= 6),
                "a progress-only write {gap:?} after the one before: {pair:#?}"
            );
        }
    }
    let secs = pass.as_secs_f64();
    assert!(
        (during.len() as f64) <= secs + LEVELS as f64 + 3.0,
        "{} writes in a {secs:.1} s pass: {during:#?}",
        during.len()
    );
    // Progress is written while the pass runs, not only at its end: at least one write per run
    // level and a second.
    let distinct: std::collections::BTreeSet<usize> =
        during.iter().filter_map(|w| done_of(&w.progressing)).collect();
    assert!(
        distinct.len() as f64 >= secs.min(LEVELS as f64),
        "{distinct:?} in {during:#?}"
    );
}

/// The done count of a Progressing message `Working towards V: D of N done (...)`.
fn done_of(msg: &str) -> Option<usize> {
    let (head, _) = msg.split_once(" of ")?;
    head.rsplit(' ').next()?.parse().ok()
}
