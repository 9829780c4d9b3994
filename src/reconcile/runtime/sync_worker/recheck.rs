//! Drift re-checked when a payload object changes (cvo only: upstream's sync worker compares
//! the cluster with the payload on its resync interval, 2–4 minutes, or when its work
//! changes).
//!
//! In watch-only the applier keeps full-object watches of the payload's objects
//! ([`crate::reconcile::apply::watch_cache`]); each change of one of them moves the applier's
//! [`TaskApplier::payload_changes`] counter. This task turns those moves into passes, bounded:
//!
//! - the first change of a burst waits [`SETTLE`] for the rest of it, so `kubectl apply` of
//!   several objects costs one pass;
//! - two re-checks are at least [`EngineTimings::drift_recheck`] apart (1 s), however many
//!   events arrive; a change during a running pass asks for one more pass after it, never
//!   more (the worker's wake-up is a single permit);
//! - in active-apply nothing is asked: a pass there writes, and upstream's resync interval
//!   stays the only re-check (the engine's own writes are events too).
//!
//! A watch-only re-check reads from the watch caches: objects whose `resourceVersion` did not
//! move since they were last found in sync are skipped without a request.

use std::time::Duration;

use tokio::{sync::watch, time::Instant};
use tokio_util::sync::CancellationToken;

use super::SyncWorker;
use crate::reconcile::runtime::EngineTimings;

/// How long a burst of changes may go on before its one re-check starts.
pub(crate) const SETTLE: Duration = Duration::from_millis(200);

/// Re-checks the drift of `worker` on each move of `changes` (see the module doc) until
/// `shutdown`.
pub(super) fn spawn(
    worker: SyncWorker,
    mut changes: watch::Receiver<u64>,
    timings: &EngineTimings,
    shutdown: CancellationToken,
) {
    let min_gap = timings.drift_recheck;
    tokio::spawn(async move {
        // The first re-check may start as soon as the first burst settles.
        let mut last: Option<Instant> = None;
        changes.borrow_and_update();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                r = changes.changed() => if r.is_err() { return },
            }
            let settled = Instant::now() + SETTLE;
            let due = last.map_or(settled, |l| settled.max(l + min_gap));
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep_until(due) => {}
            }
            // Everything seen until now is covered by the pass asked for below.
            changes.borrow_and_update();
            if !worker.is_dry_run() || worker.work().is_none() {
                continue;
            }
            tracing::debug!("a payload object changed: re-checking the drift");
            worker.inner.view.send_modify(|v| v.rechecks += 1);
            worker.notify();
            last = Some(Instant::now());
        }
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::{FutureExt, future::BoxFuture};

    use super::*;
    use crate::reconcile::{
        apply::{TaskApplier, TaskContext, TaskOutcome},
        errors::UpdateError,
        payload::Task,
    };

    /// An applier that applies nothing and reports the changes counter `rx`.
    struct Quiet(watch::Receiver<u64>);

    impl TaskApplier for Quiet {
        fn apply<'a>(
            &'a self,
            _task: &'a Task,
            _ctx: TaskContext<'a>,
        ) -> BoxFuture<'a, Result<TaskOutcome, UpdateError>> {
            futures::future::ready(Ok(TaskOutcome {
                drift: crate::reconcile::api::Drift::None,
                wrote: false,
            }))
            .boxed()
        }
        fn precreate_cluster_operator<'a>(
            &'a self,
            _task: &'a Task,
            _ctx: TaskContext<'a>,
        ) -> BoxFuture<'a, Result<bool, UpdateError>> {
            futures::future::ready(Ok(false)).boxed()
        }
        fn payload_changes(&self) -> Option<watch::Receiver<u64>> {
            Some(self.0.clone())
        }
    }

    /// Work of one ConfigMap manifest, reconciling.
    fn work() -> super::super::SyncWork {
        let obj = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "ns"}});
        let manifest =
            crate::reconcile::payload::Manifest::from_object(obj, "0000_10_a.yaml", 0).expect("a manifest");
        let payload = crate::reconcile::payload::Payload {
            release: crate::reconcile::payload::Release {
                version: "1.0.0".into(),
                ..Default::default()
            },
            previous: Vec::new(),
            architecture: "amd64".into(),
            parsed_version: semver::Version::new(1, 0, 0),
            image_references: Default::default(),
            manifest_hash: String::new(),
            manifests: vec![Arc::new(manifest)],
            excluded: Vec::new(),
            warnings: Vec::new(),
        };
        super::super::SyncWork {
            generation: 1,
            desired: crate::openshift::Release {
                version: "1.0.0".into(),
                image: "example.com/release@sha256:1".into(),
                ..Default::default()
            },
            force: false,
            overrides: Vec::new(),
            capabilities: Default::default(),
            feature_gates: Default::default(),
            payload: Arc::new(payload),
            state: crate::reconcile::payload::PayloadState::Reconciling,
            load_status: Default::default(),
            implicitly_enabled: Vec::new(),
        }
    }

    /// Passes finished so far.
    fn passes(w: &SyncWorker) -> u64 {
        w.view().passes
    }

    // On tokio's paused clock: the resync interval (3 min) never fires during the test, so
    // every pass after the first is a re-check.
    #[tokio::test(start_paused = true)]
    async fn bursts_cost_one_pass_and_rechecks_are_a_second_apart_only_in_watch_only() {
        let (tx, rx) = watch::channel(0u64);
        let mut timings = EngineTimings::scaled(1.0);
        timings.drift_recheck = Duration::from_secs(1);
        let shutdown = CancellationToken::new();
        let w = SyncWorker::start(Arc::new(Quiet(rx)), timings, true, shutdown.clone());
        w.update(work());
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(passes(&w), 1, "the first pass");

        // A burst of 50 changes within 100 ms: one re-check, after it settles.
        for _ in 0..50 {
            tx.send_modify(|n| *n += 1);
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(passes(&w), 1, "not before the burst settles");
        tokio::time::sleep(SETTLE).await;
        assert_eq!(passes(&w), 2, "one pass for the burst");
        assert_eq!(w.view().rechecks, 1);

        // A steady stream (one change every 50 ms for 5 s): at most one pass a second.
        for _ in 0..100 {
            tx.send_modify(|n| *n += 1);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let streamed = passes(&w) - 2;
        assert!(
            (4..=6).contains(&streamed),
            "5 s of changes: about one re-check a second, got {streamed}"
        );

        // Active-apply: changes ask for nothing.
        w.set_dry_run(false);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let before = passes(&w);
        for _ in 0..10 {
            tx.send_modify(|n| *n += 1);
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(passes(&w), before, "no re-check in active-apply");
        shutdown.cancel();
    }

    /// Issue 26's rollback report, the race behind it: an active-apply engine waiting for the
    /// Lease compares in watch-only passes; one that completes must not count as the update
    /// applied once the engine leads (it wrote a Completed history entry for a release whose
    /// changed ConfigMap it had not written yet).
    #[tokio::test(start_paused = true)]
    async fn a_watch_only_pass_never_reads_as_an_applied_release_once_passes_turn_active() {
        use crate::reconcile::payload::PayloadState::{Reconciling, Updating};
        let (_tx, rx) = watch::channel(0u64);
        let shutdown = CancellationToken::new();
        let w = SyncWorker::start(
            Arc::new(Quiet(rx)),
            EngineTimings::scaled(1.0),
            true,
            shutdown.clone(),
        );
        let mut updating = work();
        updating.state = Updating;
        w.update(updating);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let v = w.view();
        assert_eq!(
            (v.passes, v.status.completed),
            (1, 1),
            "a watch-only pass compared everything"
        );

        // The Lease is ours: passes turn active, and nothing of the watch-only pass remains.
        w.set_dry_run(false);
        let v = w.view();
        assert_eq!(v.state, Some(Updating));
        assert_eq!(v.status.completed, 0);
        assert!(!v.status.reconciling);
        assert_eq!(w.work().map(|c| c.state), Some(Updating));

        // The first active pass that completes earns Reconciling ...
        tokio::time::sleep(Duration::from_millis(50)).await;
        let v = w.view();
        assert_eq!((v.passes, v.status.completed), (2, 1));
        assert_eq!(v.state, Some(Reconciling));
        assert!(v.status.reconciling);

        // ... and keeps it through a spell of watch-only passes.
        w.set_dry_run(true);
        tokio::time::sleep(Duration::from_millis(50)).await;
        w.set_dry_run(false);
        let v = w.view();
        assert_eq!(v.state, Some(Reconciling));
        assert!(v.status.reconciling);
        assert_eq!(w.work().map(|c| c.state), Some(Reconciling));
        shutdown.cancel();
    }
}
