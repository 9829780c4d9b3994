//! ClusterOperator event nudges (upstream `pkg/cvo/cvo.go`
//! `clusterOperatorEventHandler`): when a ClusterOperator's `operator` version or its
//! Available / Degraded status changes, the sync worker is asked for a pass at once instead of
//! sleeping out its error backoff, so an update moves on as soon as the operators it waits for
//! are done. Ignored while the worker is idly reconciling (no failed pass pending).

use std::collections::HashMap;

use futures::StreamExt;
use kube::{
    Api, Client, ResourceExt,
    runtime::{WatchStreamExt, watcher},
};
use tokio_util::sync::CancellationToken;

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

/// Watches ClusterOperators with `client` until `shutdown`, nudging `worker` on changes.
pub(crate) fn spawn(client: Client, worker: SyncWorker, shutdown: CancellationToken) {
    tokio::spawn(async move {
        let api: Api<ClusterOperator> = Api::all(client);
        let stream = watcher(api, watcher::Config::default()).default_backoff();
        let mut stream = std::pin::pin!(stream);
        let mut seen: HashMap<String, Fingerprint> = HashMap::new();
        loop {
            let ev = tokio::select! {
                () = shutdown.cancelled() => return,
                ev = stream.next() => ev,
            };
            match ev {
                Some(Ok(watcher::Event::Apply(co) | watcher::Event::InitApply(co))) => {
                    let fp = fingerprint(&co);
                    let changed = seen
                        .insert(co.name_any(), fp.clone())
                        .is_some_and(|old| old != fp);
                    // Only a worker waiting out the backoff after a failed pass is woken: a
                    // running pass sees the change itself, and a nudge queued behind it would
                    // start a needless extra pass.
                    let backing_off = {
                        let v = worker.subscribe();
                        let v = v.borrow();
                        !v.running && v.attempt > 0
                    };
                    if changed && backing_off {
                        tracing::debug!(
                            "clusteroperator {} changed: nudging the sync worker",
                            co.name_any()
                        );
                        worker.notify();
                    }
                }
                Some(Ok(watcher::Event::Delete(co))) => {
                    seen.remove(&co.name_any());
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => tracing::debug!("clusteroperator watch: {e}"),
                None => return,
            }
        }
    });
}
