//! The engine's view of its ClusterVersion: a watch of that one object (upstream reads it
//! through an informer's lister, `pkg/cvo/cvo.go` `cvLister`), so a turn of the engine loop
//! costs no request and a change to the spec wakes the loop at once. Until the watch has
//! listed, and whenever it cannot, the loop reads with a GET as before.

use std::sync::atomic::Ordering;

use futures::StreamExt;
use kube::{
    Api,
    runtime::{
        WatchStreamExt,
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use tokio::sync::watch;

use crate::openshift::ClusterVersion;

/// A running watch of one ClusterVersion. Dropping it stops the watch.
pub(super) struct CvFeed {
    store: Store<ClusterVersion>,
    name: String,
    /// Whether the store holds a complete list (true after the first list or initial events).
    synced: watch::Receiver<bool>,
    /// Bumped on every event after the first list.
    changed: watch::Receiver<u64>,
    /// Whether the watch failed since it last delivered an event (shared with its task).
    failing: std::sync::Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CvFeed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the feed knows of the ClusterVersion.
pub(super) enum Seen {
    /// The watch has not listed yet (or the store was reset): ask the server.
    Unknown,
    /// The ClusterVersion does not exist.
    Absent,
    /// The ClusterVersion as last seen.
    Present(Box<ClusterVersion>),
}

impl CvFeed {
    /// Starts watching the ClusterVersion `name` through `api` (`fieldSelector
    /// metadata.name={name}`, kube-runtime's watcher with its default backoff).
    pub(super) fn start(api: Api<ClusterVersion>, name: &str) -> Self {
        let (reader, writer) = reflector::store();
        let (synced_tx, synced) = watch::channel(false);
        let (changed_tx, changed) = watch::channel(0u64);
        let failing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fail = failing.clone();
        let cfg = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let stream = watcher(api, cfg).default_backoff().reflect(writer);
        let task = tokio::spawn(async move {
            futures::pin_mut!(stream);
            while let Some(ev) = stream.next().await {
                fail.store(ev.is_err(), Ordering::Relaxed);
                match ev {
                    Ok(watcher::Event::InitDone) => {
                        synced_tx.send_replace(true);
                        changed_tx.send_modify(|n| *n += 1);
                    }
                    Ok(watcher::Event::Init) => {}
                    Ok(watcher::Event::InitApply(_)) => {}
                    Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_)) => {
                        changed_tx.send_modify(|n| *n += 1);
                    }
                    Err(e) => tracing::debug!("watching the ClusterVersion: {e}"),
                }
            }
        });
        Self {
            store: reader,
            name: name.to_owned(),
            synced,
            changed,
            failing,
            task,
        }
    }

    /// The ClusterVersion as the watch last saw it; [`Seen::Unknown`] before the first list
    /// and while the watch fails (so the loop reads with a GET and a server that went away
    /// shows as an error, not as a stale object).
    pub(super) fn seen(&self) -> Seen {
        if !*self.synced.borrow() || self.failing.load(Ordering::Relaxed) {
            return Seen::Unknown;
        }
        match self.store.get(&ObjectRef::new(&self.name)) {
            Some(cv) => Seen::Present(Box::new((*cv).clone())),
            None => Seen::Absent,
        }
    }

    /// Whether the watch has listed and is not failing: the loop learns of every change to the
    /// ClusterVersion from its events, without polling.
    pub(super) fn live(&self) -> bool {
        *self.synced.borrow() && !self.failing.load(Ordering::Relaxed)
    }

    /// A GET of the ClusterVersion succeeded: the server answers again, and the watch (which
    /// re-watches without an event when nothing changed) is trusted again.
    pub(super) fn recovered(&self) {
        self.failing.store(false, Ordering::Relaxed);
    }

    /// A receiver that changes on every event (for the loop's `select!`).
    pub(super) fn changes(&self) -> watch::Receiver<u64> {
        self.changed.clone()
    }
}

/// Whether `a` is older than `b` by resourceVersion, when both are integers (kube-apiserver's
/// and the simulator's are etcd revisions; an opaque pair is not ordered and gives `false`).
pub(super) fn older(a: &ClusterVersion, b: &ClusterVersion) -> bool {
    let rv = |c: &ClusterVersion| {
        c.metadata
            .resource_version
            .as_deref()
            .and_then(|s| s.parse::<u64>().ok())
    };
    matches!((rv(a), rv(b)), (Some(x), Some(y)) if x < y)
}
