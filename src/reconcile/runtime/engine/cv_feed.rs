//! The engine's view of one object it follows: the process's informer of that object alone
//! (`fieldSelector metadata.name=...`, [`crate::informers`]: kube-runtime's watcher and
//! reflector store, shared with the dashboard's feed and the operator's metrics when they run
//! in the same process). Two are followed:
//!
//! - its ClusterVersion (upstream reads it through an informer's lister, `pkg/cvo/cvo.go`
//!   `cvLister`), so a turn of the engine loop costs no request and a change to the spec wakes
//!   the loop at once. Until the watch has listed, and whenever it cannot, the loop reads with a
//!   GET as before;
//! - the CVO Lease (cvo only: upstream's elector polls it every retry period, 26 s, and only
//!   while campaigning), so who holds it is shown as it changes, in watch-only too, and a switch
//!   popup never judges a Lease read minutes ago ([`super::lease_follow`]).

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use kube::Resource;
use tokio::sync::watch;

use crate::informers::{Health, Informer};
use crate::openshift::ClusterVersion;

/// The watch of the engine's ClusterVersion.
pub(super) type CvFeed = ObjectFeed<ClusterVersion>;

/// One object of an informer (the process's shared watch of its kind).
pub(super) struct ObjectFeed<K: Resource<DynamicType = ()> + Clone + 'static> {
    informer: Informer<K>,
    /// The object's namespace (`None`: cluster-scoped) and name.
    namespace: Option<String>,
    name: String,
    /// The start of the informer's current failure when a GET succeeded since: the server
    /// answers again, and the watch (which re-opens without an event when nothing changed) is
    /// trusted again.
    recovered: Mutex<Option<DateTime<Utc>>>,
}

/// What the feed knows of the object.
pub(super) enum Seen<K> {
    /// The watch has not listed yet, fails, or the kind is not served: ask the server.
    Unknown,
    /// The object does not exist.
    Absent,
    /// The object as last seen (the informer's own, shared).
    Present(std::sync::Arc<K>),
}

impl<K> ObjectFeed<K>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    /// Follows the object `name` (in `namespace`) through `informer` (whose field selector
    /// should name it, `metadata.name={name}`).
    pub(super) fn start(informer: Informer<K>, namespace: Option<&str>, name: &str) -> Self {
        Self {
            informer,
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
            recovered: Mutex::new(None),
        }
    }

    /// The object as the watch last saw it; [`Seen::Unknown`] before the first list and while
    /// the watch fails (so the loop reads with a GET and a server that went away shows as an
    /// error, not as a stale object).
    pub(super) fn seen(&self) -> Seen<K> {
        if !self.live() {
            return Seen::Unknown;
        }
        match self.informer.get(self.namespace.as_deref(), &self.name) {
            Some(o) => Seen::Present(o),
            None => Seen::Absent,
        }
    }

    /// Whether the watch has listed and is not failing: the loop learns of every change to the
    /// object from its events, without polling.
    pub(super) fn live(&self) -> bool {
        match self.informer.health() {
            Health::Synced => true,
            Health::Failed {
                listed: true, since, ..
            } => {
                *self
                    .recovered
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    == Some(since)
            }
            Health::Failed { .. } | Health::Listing | Health::NotServed => false,
        }
    }

    /// A GET of the object succeeded: the server answers again, and the watch (which
    /// re-watches without an event when nothing changed) is trusted again.
    pub(super) fn recovered(&self) {
        if let Some((_, since)) = self.informer.health().failure() {
            *self
                .recovered
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(since);
        }
    }

    /// A receiver that changes on every event and health change (for the loop's `select!`).
    pub(super) fn changes(&self) -> watch::Receiver<u64> {
        self.informer.changes()
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
