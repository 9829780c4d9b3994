//! The one read side of a process: shared, typed caches of the cluster's objects, one watch per
//! kind (informers, as client-go's shared informer factory gives the upstream CVO,
//! `pkg/start/start.go` `NewSharedInformerFactory`).
//!
//! An [`Informers`] registry is created once per process over one client and handed to every
//! reader: the dashboard's feed ([`crate::cluster::live::watch_state_from`]), the engine
//! (`EngineConfig::informers`: its ClusterVersion, the ClusterOperators its nudges follow, the
//! CVO Lease) and the operator's metrics and readiness. Asking twice for the same kind (same
//! namespace and field selector) returns the same [`Informer`]: one LIST and one WATCH on the
//! wire however many readers.
//!
//! Each informer runs kube-runtime's [`watcher`](kube::runtime::watcher()) (paginated LIST,
//! then WATCH from its resourceVersion with bookmarks, re-opened where it ended) into
//! kube-runtime's reflector store ([`kube::runtime::reflector::store`]), with what the dashboard
//! needs on top (`driver.rs`, `observe.rs`):
//!
//! - per-kind [`Health`]: listing, synced, failed (the [`ApiFailure`] line, since when, and
//!   the HTTP status when the server answered), or not served (a 404 list: no CRD; the store
//!   is empty and ready, and the kind is looked at again every [`NOT_SERVED_RELOOK`]);
//! - an expired resourceVersion (`410 Gone`), whether it comes as the HTTP answer to the watch
//!   request, as an `ERROR` event or as a bare `Status` line, restarts the watcher: a fresh
//!   LIST (kube-runtime's watcher alone re-watches from the expired version after an HTTP 410);
//! - any other failure is recorded and retried after kube-runtime's default backoff
//!   ([`kube::runtime::watcher::DefaultBackoff`]: 0.8 s doubling to 30 s, with jitter, so kinds
//!   do not retry in lockstep), which starts over at the next event;
//! - a failure clears as soon as the kind lists or a WATCH request is answered again, not only
//!   when an event arrives (the informer's client sees the answer, `observe.rs`);
//! - a watch the server closes sooner than 200 ms after it opened, before any event, is
//!   re-opened only after a backoff step (client-go's reflector: "very short watch",
//!   `k8s.io/client-go/tools/cache/reflector.go`); one that delivered events re-opens at once;
//! - `managedFields` are dropped before caching.
//!
//! Every change of a store or of its health bumps the informer's change counter
//! ([`Informer::changes`]), a `tokio::sync::watch` channel: readers wait on it and read the
//! newest state, so a slow reader never holds up the watch.

mod api_failure;
mod driver;
mod observe;

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    fmt::Debug,
    sync::{Arc, Mutex},
    time::Duration,
};

pub use api_failure::{ApiFailure, error_chain};
use chrono::{DateTime, Utc};
use kube::{
    Api, Client, Resource,
    core::NamespaceResourceScope,
    runtime::{
        reflector::{self, ObjectRef, Store},
        watcher,
    },
};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

/// Server-side timeout of each WATCH request (seconds); the watcher then re-opens it from the
/// last resourceVersion. A dead connection is noticed within it (plus kube-runtime's 5 s idle
/// margin).
pub const WATCH_TIMEOUT_SECS: u32 = 60;

/// How often a kind the cluster does not serve (a 404 list) is looked at again (a CRD may be
/// created later).
pub const NOT_SERVED_RELOOK: Duration = Duration::from_secs(30);

/// A kind's watch health.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health {
    /// The first list has not completed.
    Listing,
    /// Listed, and the watch has not failed since.
    Synced,
    /// The cluster does not serve the kind (its list answered 404): the store is empty.
    NotServed,
    /// The last list or watch failed.
    Failed {
        /// One line: the [`ApiFailure`] text, e.g. `watch nodes: ... (code 503)`.
        message: String,
        /// When the failures began (kept while they go on).
        since: DateTime<Utc>,
        /// Whether the kind had completed a list before (its store holds that list).
        listed: bool,
        /// The HTTP status the server answered with (`None`: no answer: connection, TLS,
        /// timeout), e.g. 403 when the credentials may not list the kind.
        code: Option<u16>,
    },
}

impl Health {
    /// Whether the store holds a complete list (synced, not served, or failing after a list).
    pub fn listed(&self) -> bool {
        match self {
            Health::Listing => false,
            Health::Synced | Health::NotServed => true,
            Health::Failed { listed, .. } => *listed,
        }
    }

    /// The current failure, `(message, since)`.
    pub fn failure(&self) -> Option<(&str, DateTime<Utc>)> {
        match self {
            Health::Failed { message, since, .. } => Some((message, *since)),
            _ => None,
        }
    }
}

/// What an informer's task shares with its handles and its client.
pub(crate) struct Shared {
    /// The kind's label (its plural, e.g. `clusteroperators`).
    label: String,
    health: watch::Sender<Health>,
    /// Bumped on every change of the store or the health.
    changes: watch::Sender<u64>,
}

impl Shared {
    fn bump(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Records a failure (logged at `warn`), keeping the first failure's time.
    fn failed(&self, message: String, code: Option<u16>) {
        tracing::warn!("{message}");
        self.health.send_modify(|h| {
            let since = h.failure().map_or_else(Utc::now, |(_, s)| s);
            let listed = h.listed();
            *h = Health::Failed {
                message,
                since,
                listed,
                code,
            };
        });
        self.bump();
    }

    /// The list completed.
    fn listed(&self) {
        self.health.send_replace(Health::Synced);
        self.bump();
    }

    /// The kind is not served.
    fn not_served(&self) {
        self.health.send_replace(Health::NotServed);
        self.bump();
    }

    /// A WATCH was answered or an event arrived: a failure after a list clears.
    fn reached(&self) {
        let cleared = self.health.send_if_modified(|h| match h {
            Health::Failed { listed: true, .. } => {
                *h = Health::Synced;
                true
            }
            _ => false,
        });
        if cleared {
            tracing::info!(kind = %self.label, "watch re-established");
            self.bump();
        }
    }
}

/// A shared cache of one kind: kube-runtime's reflector [`Store`], its [`Health`] and a change
/// counter. Cloning gives another handle to the same watch; the watch stops when the last
/// handle (and its registry) is dropped.
pub struct Informer<K: Resource<DynamicType = ()> + Clone + 'static> {
    inner: Arc<Inner<K>>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Clone for Informer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<K: Resource<DynamicType = ()> + Clone + 'static> {
    store: Store<K>,
    shared: Arc<Shared>,
    task: tokio::task::AbortHandle,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Drop for Inner<K> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Informer<K> {
    /// The reflector store (kube-runtime): `state()`, `get()`, `wait_until_ready()`.
    pub fn store(&self) -> &Store<K> {
        &self.inner.store
    }

    /// Every cached object (arbitrary order).
    pub fn objects(&self) -> Vec<Arc<K>> {
        self.inner.store.state()
    }

    /// The cached object `name` (in `namespace`, `None` for a cluster-scoped kind).
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        let r = match namespace {
            Some(ns) => ObjectRef::new(name).within(ns),
            None => ObjectRef::new(name),
        };
        self.inner.store.get(&r)
    }

    /// The kind's health now.
    pub fn health(&self) -> Health {
        self.inner.shared.health.borrow().clone()
    }

    /// A receiver that changes on every change of the store or the health. What happened
    /// before the call counts as seen: subscribe first, then read the store.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.shared.changes.subscribe()
    }

    /// The kind's label (its plural, e.g. `clusteroperators`).
    pub fn label(&self) -> &str {
        &self.inner.shared.label
    }
}

/// Registry key: the stored type, the namespace and the field selector.
type Key = (TypeId, Option<String>, Option<String>);

/// The process's informers over one client (see the module doc). Cloning shares the registry.
#[derive(Clone)]
pub struct Informers {
    client: Client,
    kinds: Arc<Mutex<HashMap<Key, Box<dyn Any + Send + Sync>>>>,
    /// `(label, namespace, fields)` of each informer started, in start order.
    started: Arc<Mutex<Vec<String>>>,
}

impl Debug for Informers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informers")
            .field("started", &self.started())
            .finish_non_exhaustive()
    }
}

impl Informers {
    /// An empty registry over `client`; informers start when first asked for.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            kinds: Arc::default(),
            started: Arc::default(),
        }
    }

    /// The informers started so far, one line each: `label` plus ` in NAMESPACE` and
    /// ` where FIELDS` when set, in start order.
    pub fn started(&self) -> Vec<String> {
        self.started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The informer of every `K` (all namespaces, or a cluster-scoped kind) matching the field
    /// selector `fields` (e.g. `metadata.name=version`), started on first use. Must be called
    /// inside a tokio runtime. For metadata only, ask for `PartialObjectMeta<K>` (kube's
    /// `Api<PartialObjectMeta<K>>` sends metadata-only requests).
    pub fn all<K>(&self, fields: Option<&str>) -> Informer<K>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.get_or_start(None, fields, |c| Api::all(c))
    }

    /// The informer of the `K`s in `namespace` matching `fields`, as [`Informers::all`].
    pub fn namespaced<K>(&self, namespace: &str, fields: Option<&str>) -> Informer<K>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
    {
        self.get_or_start(Some(namespace), fields, |c| Api::namespaced(c, namespace))
    }

    fn get_or_start<S>(
        &self,
        namespace: Option<&str>,
        fields: Option<&str>,
        make_api: impl FnOnce(Client) -> Api<S>,
    ) -> Informer<S>
    where
        S: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let key: Key = (
            TypeId::of::<S>(),
            namespace.map(str::to_owned),
            fields.map(str::to_owned),
        );
        let mut kinds = self
            .kinds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = kinds.get(&key).and_then(|b| b.downcast_ref::<Informer<S>>()) {
            return i.clone();
        }
        let label = S::plural(&()).into_owned();
        let mut line = label.clone();
        if let Some(ns) = namespace {
            line.push_str(&format!(" in {ns}"));
        }
        if let Some(f) = fields {
            line.push_str(&format!(" where {f}"));
        }
        let shared = Arc::new(Shared {
            label,
            health: watch::channel(Health::Listing).0,
            changes: watch::channel(0).0,
        });
        let client = observe::observed(self.client.clone(), shared.clone());
        let api = make_api(client);
        let mut cfg = watcher::Config::default().timeout(WATCH_TIMEOUT_SECS);
        if let Some(f) = fields {
            cfg = cfg.fields(f);
        }
        let (store, writer) = reflector::store::<S>();
        let task = tokio::spawn(driver::run(
            move || futures::StreamExt::boxed(watcher(api.clone(), cfg.clone())),
            writer,
            shared.clone(),
        ))
        .abort_handle();
        let informer = Informer {
            inner: Arc::new(Inner { store, shared, task }),
        };
        kinds.insert(key, Box::new(informer.clone()));
        self.started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(line);
        informer
    }
}
