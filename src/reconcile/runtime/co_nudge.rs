//! ClusterOperator event nudges (upstream `pkg/cvo/cvo.go`
//! `clusterOperatorEventHandler`): when a ClusterOperator's `operator` version or its
//! Available / Degraded status changes, the sync worker is asked for a pass at once instead of
//! sleeping out its error backoff, so an update moves on as soon as the operators it waits for
//! are done. Ignored while the worker is idly reconciling (no failed pass pending).

use std::collections::HashMap;

use kube::ResourceExt;
use tokio_util::sync::CancellationToken;

use crate::informers::Informer;
use crate::openshift::{ClusterOperator, condition::ConditionStatus};
use crate::reconcile::runtime::sync_worker::SyncWorker;

/// What a nudge looks at: the `operator` version, Available and Degraded.
type Fingerprint = (Option<String>, Option<ConditionStatus>, Option<ConditionStatus>);

fn fingerprint(co: &ClusterOperator) -> Fingerprint {
    (
        co.status
            .versions
            .iter()
            .find(|v| v.name == "operator")
            .map(|v| v.version.clone()),
        co.condition("Available").map(|c| c.status),
        co.condition("Degraded").map(|c| c.status),
    )
}

/// Follows the ClusterOperators of `operators` (the process's shared informer) until
/// `shutdown`, nudging `worker` on changes.
pub(crate) fn spawn(operators: Informer<ClusterOperator>, worker: SyncWorker, shutdown: CancellationToken) {
    tokio::spawn(async move {
        // Subscribed before the first read: the shared informer may have listed already.
        let mut changes = operators.changes();
        let read = || -> HashMap<String, Fingerprint> {
            operators
                .objects()
                .iter()
                .map(|co| (co.name_any(), fingerprint(co)))
                .collect()
        };
        let mut seen = if operators.health().listed() {
            read()
        } else {
            HashMap::new()
        };
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                r = changes.changed() => if r.is_err() { return },
            }
            changes.borrow_and_update();
            if !operators.health().listed() {
                continue;
            }
            let now = read();
            let changed: Vec<&String> = now
                .iter()
                .filter(|(name, fp)| seen.get(*name).is_some_and(|old| old != *fp))
                .map(|(name, _)| name)
                .collect();
            // Only a worker waiting out the backoff after a failed pass is woken: a running
            // pass sees the change itself, and a nudge queued behind it would start a needless
            // extra pass.
            let backing_off = {
                let v = worker.subscribe();
                let v = v.borrow();
                !v.running && v.attempt > 0
            };
            if let Some(first) = changed.first()
                && backing_off
            {
                tracing::debug!("clusteroperator {first} changed: nudging the sync worker");
                worker.notify();
            }
            seen = now;
        }
    });
}
