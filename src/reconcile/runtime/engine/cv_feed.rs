//! The engine's view of one object it follows: a watch of that object alone (`fieldSelector
//! metadata.name=...`, kube-runtime's watcher and reflector). Two are followed:
//!
//! - its ClusterVersion (upstream reads it through an informer's lister, `pkg/cvo/cvo.go`
//!   `cvLister`), so a turn of the engine loop costs no request and a change to the spec wakes
//!   the loop at once. Until the watch has listed, and whenever it cannot, the loop reads with a
//!   GET as before;
//! - the CVO Lease (cvo only: upstream's elector polls it every retry period, 26 s, and only
//!   while campaigning), so who holds it is shown as it changes, in watch-only too, and a switch
//!   popup never judges a Lease read minutes ago ([`super::lease_follow`]).

use std::sync::atomic::Ordering;

use futures::StreamExt;
use kube::{
    Api, Resource,
    runtime::{
        WatchStreamExt,
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use crate::openshift::ClusterVersion;

/// The watch of the engine's ClusterVersion.
pub(super) type CvFeed = ObjectFeed<ClusterVersion>;

/// A running watch of one object. Dropping it stops the watch.
pub(super) struct ObjectFeed<K: Resource<DynamicType = ()> + Clone + 'static> {
    store: Store<K>,
    /// The object's reference (name, and namespace for a namespaced kind).
    object: ObjectRef<K>,
    /// Whether the store holds a complete list (true after the first list or initial events).
    synced: watch::Receiver<bool>,
    /// Bumped on every event after the first list.
    changed: watch::Receiver<u64>,
    /// Whether the watch failed since it last delivered an event (shared with its task).
    failing: std::sync::Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Drop for ObjectFeed<K> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the feed knows of the object.
pub(super) enum Seen<K> {
    /// The watch has not listed yet (or the store was reset): ask the server.
    Unknown,
    /// The object does not exist.
    Absent,
    /// The object as last seen.
    Present(Box<K>),
}

impl<K> ObjectFeed<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    /// Starts watching the object `name` through `api` (`fieldSelector metadata.name={name}`,
    /// kube-runtime's watcher with its default backoff); `namespace` is the object's, empty
    /// for a cluster-scoped kind (and `api` then covers it).
    pub(super) fn start(api: Api<K>, namespace: &str, name: &str) -> Self {
        let (reader, writer) = reflector::store();
        let (synced_tx, synced) = watch::channel(false);
        let (changed_tx, changed) = watch::channel(0u64);
        let failing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fail = failing.clone();
        let cfg = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let stream = watcher(api, cfg).default_backoff().reflect(writer);
        let what = K::kind(&()).into_owned();
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
                    Err(e) => tracing::debug!("watching the {what}: {e}"),
                }
            }
        });
        let object = if namespace.is_empty() {
            ObjectRef::new(name)
        } else {
            ObjectRef::new(name).within(namespace)
        };
        Self {
            store: reader,
            object,
            synced,
            changed,
            failing,
            task,
        }
    }

    /// The object as the watch last saw it; [`Seen::Unknown`] before the first list and while
    /// the watch fails (so the loop reads with a GET and a server that went away shows as an
    /// error, not as a stale object).
    pub(super) fn seen(&self) -> Seen<K> {
        if !self.live() {
            return Seen::Unknown;
        }
        match self.store.get(&self.object) {
            Some(o) => Seen::Present(Box::new((*o).clone())),
            None => Seen::Absent,
        }
    }

    /// Whether the watch has listed and is not failing: the loop learns of every change to the
    /// object from its events, without polling.
    pub(super) fn live(&self) -> bool {
        *self.synced.borrow() && !self.failing.load(Ordering::Relaxed)
    }

    /// A GET of the object succeeded: the server answers again, and the watch (which
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
