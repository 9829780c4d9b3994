//! Passes from watch caches (cvo only: upstream `pkg/cvo/sync_worker.go` GETs every manifest on
//! every pass).
//!
//! [`WatchCaches`] keeps one watch (a kube-runtime reflector store, [`super::watch_store`]) per
//! kind of the payload, started by [`super::Applier::prepare_pass`] when a pass begins (and, for
//! a kind defined by a CRD of the payload, at its first manifest once discovery knows it),
//! stopped when a new payload no longer has the kind. Active passes keep metadata only
//! (`PartialObjectMeta`); watch-only passes keep the full objects the payload names (without
//! `managedFields`) and compute each drift from them, so they never GET a payload object, even
//! on a cluster without a verification record (one an upstream CVO runs). With them
//! [`super::Applier::apply`]
//!
//! - skips a manifest whose live object still has the `resourceVersion` it had when the engine
//!   last verified it against the same manifest (a [`manifest_hash`] of the manifest, what the
//!   build adds to it and this binary's version): any write to the object, its metadata or its status changes the
//!   `resourceVersion`, so a skipped manifest is one whose apply would change nothing;
//! - creates an object the synced cache knows absent without a GET (a `409` falls back to GET and
//!   update);
//! - at a pass's start, waits (as long as for the first lists) until the caches show the objects
//!   this process created: a loaded server's watch lags its writes, and an object created a
//!   moment ago but not yet in the cache is neither created again nor read.
//!
//! A cache is trusted only once its list is complete (`InitDone`); a watch error marks it
//! unsynced and restarts its watch with a fresh list, so it never serves what it may have missed.
//! Untrusted or missing caches answer [`Known::Unknown`] and the apply GETs as before.
//!
//! What the engine verified is kept per object as (manifest hash, resourceVersion) and saved at
//! the end of a pass that changed it to the ConfigMap
//! `openshift-cluster-version/cvo-verified-manifests` (server-side apply), so a new process (a
//! `cvo reconcile --once`, the next leader) starts from it instead of GETting every manifest.
//! Nothing is saved in watch-only mode; a missing namespace or a refused write only costs the
//! next process its GETs.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, Patch, PatchParams},
};
use serde_json::Value;
use tokio::sync::watch;

use crate::informers::Informer;
use crate::openshift::ClusterOperator;

use super::{
    ApplyContext, ApplyOutcome, Drift, ManifestId, PayloadObject, decode, lock,
    watch_store::{KindStore, Lookup, ObjectName, SyncState},
};
use crate::reconcile::{
    errors::{ApiErrorKind, UpdateError},
    payload::digest::Fnv,
};

mod crds;

/// Namespace of the verification record.
pub const RECORD_NAMESPACE: &str = "openshift-cluster-version";
/// Name of the ConfigMap holding the verification record.
pub const RECORD_NAME: &str = "cvo-verified-manifests";
/// Key of the record in the ConfigMap's `data`: one `{object key hash} {manifest hash}
/// {resourceVersion}` line per object (hashes as 16 hex digits).
const RECORD_KEY: &str = "verified";
/// How long [`super::Applier::prepare_pass`] waits for the first lists of the watches it
/// starts; a cache still listing after that is passed by (GETs) and used once synced.
pub const SYNC_WAIT: Duration = Duration::from_secs(2);
/// How long a watch-only pass waits for the first lists of the full-object watches it starts
/// (or until each has failed): any GET a pass sends instead costs the server more than waiting
/// for the list, and watch-only has no deadline to keep (cvo's choice).
pub const WATCH_ONLY_SYNC_WAIT: Duration = Duration::from_secs(20);
/// How long [`super::Applier::prepare_pass`] waits for the kinds' discovery.
const RESOLVE_WAIT: Duration = Duration::from_secs(1);
/// A record bigger than this (bytes) is not saved (a ConfigMap holds at most 1 MiB).
const RECORD_MAX_BYTES: usize = 900 * 1024;

/// What a cache knows of one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Known {
    /// No synced cache for the kind: ask the server.
    Unknown,
    /// The synced cache has no such object.
    Absent,
    /// The synced cache has it at this `resourceVersion`.
    Present {
        /// `metadata.resourceVersion` of the cached object.
        resource_version: String,
        /// The cached object as a GET returns it (without `metadata.managedFields`) when the
        /// cache keeps full objects (watch-only passes), else `None`.
        object: Option<Value>,
    },
}

/// FNV-1a 64 over `parts` (each followed by a 0 byte).
fn fnv(parts: &[&str]) -> u64 {
    let mut h = Fnv::new();
    for p in parts {
        h.part(p);
    }
    h.0
}

/// What a verification is valid for: the manifest as the payload has it (its
/// [`object_digest`]), everything [`super::build_required`] adds to it (the ClusterVersion UID,
/// the proxy, the internal load balancer, the TLS profile) and this binary's version (the merge
/// rules are the binary's). The same inputs build the same object, so a verified manifest is
/// skipped without building it.
pub fn manifest_hash(ctx: &ApplyContext, digest: u64) -> u64 {
    use std::fmt::Write as _;
    let mut h = Fnv::new();
    h.part(env!("CARGO_PKG_VERSION"));
    let _ = write!(
        h,
        "{:?}|{:?}|{:?}|{:?}|{digest:016x}",
        ctx.cluster_version_uid, ctx.proxy, ctx.internal_lb, ctx.tls_profile
    );
    h.0
}

/// Whether a server of this `/version` major and minor serves streaming lists (1.34 and later;
/// a minor like `36+` counts as 36).
fn streams_lists(major: &str, minor: &str) -> bool {
    let num = |s: &str| {
        s.trim_end_matches(|c: char| !c.is_ascii_digit())
            .parse::<u32>()
            .ok()
    };
    matches!((num(major), num(minor)), (Some(1), Some(m)) if m >= 34)
}

/// Hash identifying an object: apiVersion, kind, namespace, name.
fn object_key(id: &ManifestId) -> u64 {
    fnv(&[&id.api_version, &id.kind, &id.namespace, &id.name])
}

/// Whether a manifest's verification may be recorded and reused: not ClusterOperators (their
/// health is read every pass). A kind with a readiness check (Deployment, DaemonSet, Job,
/// CRD) is recorded only when its check passed on the object left by the apply, also while
/// Initializing, where a failed check does not fail the apply but is not recorded either (a
/// later pass runs it again).
pub(crate) fn cacheable(id: &ManifestId) -> bool {
    !(id.group() == "config.openshift.io" && id.kind == "ClusterOperator")
}

/// One kind's watch: its store (metadata or full objects), whether the store is complete, and
/// the task feeding it (aborted on drop).
struct KindWatch {
    ar: ApiResource,
    store: KindStore,
    synced: watch::Receiver<SyncState>,
    /// Bumped at every event the store applied.
    events: watch::Receiver<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for KindWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// (apiVersion, kind) of a watched kind.
type KindKey = (String, String);

/// The key of the CustomResourceDefinition kind.
fn crd_key() -> KindKey {
    (
        "apiextensions.k8s.io/v1".into(),
        "CustomResourceDefinition".into(),
    )
}

/// The verification record: object key hash → (manifest hash, resourceVersion).
#[derive(Debug, Default)]
struct Record {
    entries: HashMap<u64, (u64, String)>,
    /// Whether the record was read from the cluster (once per process).
    loaded: bool,
    /// Whether entries changed since the last save.
    dirty: bool,
}

impl Record {
    fn parse(&mut self, text: &str) {
        for line in text.lines() {
            let mut f = line.split(' ');
            let (Some(k), Some(h), Some(rv), None) = (f.next(), f.next(), f.next(), f.next()) else {
                continue;
            };
            if let (Ok(k), Ok(h)) = (u64::from_str_radix(k, 16), u64::from_str_radix(h, 16))
                && !rv.is_empty()
            {
                self.entries.insert(k, (h, rv.to_owned()));
            }
        }
    }

    fn render(&self) -> String {
        let mut lines: Vec<String> = self
            .entries
            .iter()
            .map(|(k, (h, rv))| format!("{k:016x} {h:016x} {rv}\n"))
            .collect();
        lines.sort_unstable();
        lines.concat()
    }
}

/// The metadata-only watch caches of the payload's kinds and the record of verified manifests.
/// Inert until [`super::Applier::prepare_pass`] names the kinds to watch.
pub struct WatchCaches {
    client: Client,
    /// Kinds of the current payload with their objects' `(namespace, name)` (a kind wanted but
    /// not watched yet starts at its next manifest).
    wanted: Mutex<HashMap<KindKey, Arc<HashSet<ObjectName>>>>,
    /// Whether new watches keep full objects (of the payload's objects only): set by a
    /// watch-only pass, whose drift is then computed from the cache instead of a GET.
    full: Mutex<bool>,
    watches: Mutex<HashMap<KindKey, KindWatch>>,
    record: Mutex<Record>,
    /// Whether the server streams lists (`sendInitialEvents`), once asked.
    streaming: Mutex<Option<bool>>,
    /// `(group, version, kind)` of every kind a CRD of the current payload defines.
    payload_crd_kinds: Mutex<HashSet<(String, String, String)>>,
    /// Kinds of the CRDs this process created ([`Self::crd_created`]), each with the objects
    /// of it this process created since.
    fresh: Mutex<HashMap<KindKey, HashSet<ObjectName>>>,
    /// Objects this process created that the synced cache of their kind has not shown yet
    /// (the watch's `ADDED` event is still on its way: a loaded server's watch lags its
    /// writes). [`Self::wait_own_creates`] waits for them when a pass starts, and
    /// [`Self::known`] answers [`Known::Unknown`] for one still unseen, never
    /// [`Known::Absent`] (a create from that would only get `409 AlreadyExists` and a GET).
    unseen: Mutex<HashMap<KindKey, HashSet<ObjectName>>>,
    /// The verification record's ConfigMap name (in [`RECORD_NAMESPACE`]), one per
    /// ClusterVersion: see [`record_name`].
    record_name: String,
    /// Bumped by the full-object watches (watch-only passes) at each change of a payload
    /// object ([`Self::payload_changes`]).
    payload_changes: Arc<watch::Sender<u64>>,
    /// The process's ClusterOperator informer, when it has one ([`Self::share_cluster_operators`]):
    /// the ClusterOperator kind is then read from it, in every mode, and never watched again.
    cluster_operators: Mutex<Option<Informer<ClusterOperator>>>,
}

/// Whether `(apiVersion, kind)` is ClusterOperator's.
fn is_cluster_operator_kind(key: &KindKey) -> bool {
    key.0 == "config.openshift.io/v1" && key.1 == "ClusterOperator"
}

/// The verification record's ConfigMap for the ClusterVersion `cluster_version`:
/// [`RECORD_NAME`] for `version` (the one every cluster has), `{RECORD_NAME}-{cluster_version}`
/// for any other, so engines of different ClusterVersions never share a record.
pub fn record_name(cluster_version: &str) -> String {
    if cluster_version == "version" {
        RECORD_NAME.to_owned()
    } else {
        format!("{RECORD_NAME}-{cluster_version}")
    }
}

impl std::fmt::Debug for WatchCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchCaches").finish_non_exhaustive()
    }
}

impl WatchCaches {
    /// No caches yet, over `client`, keeping the verification record of the ClusterVersion
    /// `cluster_version` ([`record_name`]).
    pub fn new(client: Client, cluster_version: &str) -> Self {
        Self {
            client,
            wanted: Mutex::new(HashMap::new()),
            full: Mutex::new(false),
            watches: Mutex::new(HashMap::new()),
            record: Mutex::new(Record::default()),
            streaming: Mutex::new(None),
            fresh: Mutex::new(HashMap::new()),
            unseen: Mutex::new(HashMap::new()),
            payload_crd_kinds: Mutex::new(HashSet::new()),
            record_name: record_name(cluster_version),
            payload_changes: Arc::new(watch::channel(0).0),
            cluster_operators: Mutex::new(None),
        }
    }

    /// Reads ClusterOperators from `informer` (the process's, [`crate::informers`]) instead of a
    /// watch of their own: one watch of the kind per process, and an active pass reads each
    /// operator's health from it as upstream reads its lister
    /// (`pkg/cvo/internal/operatorstatus.go`) instead of a GET per operator.
    pub fn share_cluster_operators(&self, informer: Informer<ClusterOperator>) {
        lock(&self.watches).retain(|k, _| !is_cluster_operator_kind(k));
        *lock(&self.cluster_operators) = Some(informer);
    }

    /// Whether ClusterOperators come from the process's informer.
    pub(crate) fn shares_cluster_operators(&self) -> bool {
        lock(&self.cluster_operators).is_some()
    }

    /// Whether the process's ClusterOperator informer has listed and holds `name` (a presence
    /// check: nothing is copied or serialized). False without a shared informer, before its
    /// list and while its watch fails.
    pub(crate) fn shared_cluster_operator_exists(&self, name: &str) -> bool {
        lock(&self.cluster_operators).as_ref().is_some_and(|i| {
            matches!(i.health(), crate::informers::Health::Synced) && i.get(None, name).is_some()
        })
    }

    /// A counter the full-object watches (those of watch-only passes) bump at each change of
    /// one of the payload's objects after their first list, and at each relist after it: the
    /// sync worker re-checks the drift when it moves.
    pub fn payload_changes(&self) -> watch::Receiver<u64> {
        self.payload_changes.subscribe()
    }

    /// Whether to list by streaming (kube-apiserver 1.34 and later serve `sendInitialEvents`,
    /// the watch-list feature): asks `/version` once per process; unanswered means no.
    async fn streaming(&self) -> bool {
        if let Some(s) = *lock(&self.streaming) {
            return s;
        }
        let s = match self.client.apiserver_version().await {
            Ok(info) => streams_lists(&info.major, &info.minor),
            Err(e) => {
                tracing::debug!("asking the server version: {e}");
                false
            }
        };
        *lock(&self.streaming) = Some(s);
        s
    }

    /// Starts the watch of `ar` under `key` unless running; returns its sync flag if it started
    /// it. In full mode the watch keeps the full objects of the payload's objects of the kind,
    /// else the metadata of every object of it.
    pub(crate) fn start(&self, key: &KindKey, ar: &ApiResource) -> Option<watch::Receiver<SyncState>> {
        let streaming = lock(&self.streaming).unwrap_or(false);
        let keys = if *lock(&self.full) {
            Some(lock(&self.wanted).get(key).cloned().unwrap_or_default())
        } else {
            None
        };
        let shared = if is_cluster_operator_kind(key) {
            lock(&self.cluster_operators).clone()
        } else {
            None
        };
        let mut watches = lock(&self.watches);
        if watches.contains_key(key) {
            return None;
        }
        let (store, rx, events, task) = match shared {
            Some(informer) => KindStore::share(informer, &self.payload_changes),
            None => KindStore::start(&self.client, ar, keys, streaming, &self.payload_changes),
        };
        watches.insert(
            key.clone(),
            KindWatch {
                ar: ar.clone(),
                store,
                synced: rx.clone(),
                events,
                task,
            },
        );
        Some(rx)
    }

    /// Starts the watch of every wanted kind that has none yet, resolving each with `resolve`
    /// (the kinds of CRDs created during the pass, left unwatched until it ended). Does not
    /// wait for their lists.
    pub(crate) async fn start_missing<F, Fut>(&self, resolve: F)
    where
        F: Fn(ManifestId) -> Fut,
        Fut: std::future::Future<Output = Option<ApiResource>>,
    {
        let missing: Vec<KindKey> = {
            let watches = lock(&self.watches);
            lock(&self.wanted)
                .keys()
                .filter(|k| !watches.contains_key(*k))
                .filter(|k| self.shares_cluster_operators() || !is_cluster_operator_kind(k))
                .cloned()
                .collect()
        };
        for key in missing {
            let id = ManifestId {
                api_version: key.0.clone(),
                kind: key.1.clone(),
                namespace: String::new(),
                name: String::new(),
            };
            if let Some(ar) = resolve(id).await {
                let _ = self.start(&key, &ar);
            }
        }
    }

    /// Sets the kinds of the current payload with their objects and whether the caches keep
    /// full objects (`full`, watch-only), and stops every watch that cannot serve them: of a
    /// kind no longer in the payload, a metadata watch when `full`, a full watch missing some
    /// of its kind's objects. A full watch serves a metadata pass too (it has the
    /// `resourceVersion`s), so switching to active-apply restarts nothing.
    pub(crate) fn set_wanted(&self, kinds: HashMap<KindKey, Arc<HashSet<ObjectName>>>, full: bool) {
        *lock(&self.full) = full;
        lock(&self.watches).retain(|k, w| {
            kinds
                .get(k)
                .is_some_and(|names| (w.store.is_full() || !full) && w.store.covers(names))
        });
        *lock(&self.wanted) = kinds;
    }

    /// The sync flags of the watches still on their first list.
    fn listing(&self) -> Vec<watch::Receiver<SyncState>> {
        lock(&self.watches)
            .values()
            .filter(|w| *w.synced.borrow() == SyncState::Listing)
            .map(|w| w.synced.clone())
            .collect()
    }

    /// Kinds watched now, as `apiVersion/kind`, sorted.
    pub fn watched(&self) -> Vec<String> {
        let mut v: Vec<String> = lock(&self.watches)
            .keys()
            .map(|(av, k)| format!("{av}/{k}"))
            .collect();
        v.sort();
        v
    }

    /// What the cache of `id`'s kind knows of it. A wanted kind without a watch (a custom
    /// resource whose CRD appeared during the pass) gets its watch started and answers
    /// [`Known::Unknown`] until synced.
    ///
    /// A kind of a CRD this process created ([`Self::crd_created`]) answers without its watch
    /// until that is synced: [`Known::Absent`] for an object this process has not created,
    /// [`Known::Unknown`] for one it has.
    pub(crate) fn known(&self, id: &ManifestId, ar: &ApiResource, namespaced: bool) -> Known {
        let key = (id.api_version.clone(), id.kind.clone());
        // The object as the caches key it: cluster-scoped objects without a namespace.
        let name: ObjectName = (
            if namespaced {
                id.namespace.clone()
            } else {
                String::new()
            },
            id.name.clone(),
        );
        let fresh = |watches: std::sync::MutexGuard<'_, HashMap<KindKey, KindWatch>>| {
            drop(watches);
            let fresh = lock(&self.fresh);
            let created = fresh.get(&key)?;
            Some(if created.contains(&name) {
                Known::Unknown
            } else {
                Known::Absent
            })
        };
        let watches = lock(&self.watches);
        let Some(w) = watches.get(&key) else {
            if let Some(known) = fresh(watches) {
                return known;
            }
            if lock(&self.wanted).contains_key(&key) {
                let _ = self.start(&key, ar);
            }
            return Known::Unknown;
        };
        if *w.synced.borrow() != SyncState::Synced {
            return fresh(watches).unwrap_or(Known::Unknown);
        }
        match w.store.lookup(&w.ar, &id.namespace, &id.name, namespaced) {
            Lookup::Unknown => Known::Unknown,
            Lookup::Absent => {
                if lock(&self.unseen).get(&key).is_some_and(|u| u.contains(&name)) {
                    Known::Unknown
                } else {
                    Known::Absent
                }
            }
            Lookup::Present(resource_version, object) => {
                // Seen now: a later absence is a deletion, not the watch lagging.
                let mut unseen = lock(&self.unseen);
                if let Some(u) = unseen.get_mut(&key) {
                    u.remove(&name);
                }
                Known::Present {
                    resource_version,
                    object,
                }
            }
        }
    }

    /// Whether `id` at `resource_version` was verified against a manifest of hash `hash`.
    pub(crate) fn is_verified(&self, id: &ManifestId, hash: u64, resource_version: &str) -> bool {
        !resource_version.is_empty()
            && lock(&self.record)
                .entries
                .get(&object_key(id))
                .is_some_and(|(h, rv)| *h == hash && rv == resource_version)
    }

    /// Records that `id` at `resource_version` matches the manifest of hash `hash`.
    pub(crate) fn verified(&self, id: &ManifestId, hash: u64, resource_version: &str) {
        if resource_version.is_empty() {
            return;
        }
        let mut r = lock(&self.record);
        let entry = (hash, resource_version.to_owned());
        if r.entries.get(&object_key(id)) != Some(&entry) {
            r.entries.insert(object_key(id), entry);
            r.dirty = true;
        }
    }

    /// Forgets the verification of `id` (its apply failed or would change it).
    pub(crate) fn forget(&self, id: &ManifestId) {
        let mut r = lock(&self.record);
        if r.entries.remove(&object_key(id)).is_some() {
            r.dirty = true;
        }
    }

    /// Reads the saved record once per process (absent or unreadable: start empty) and keeps
    /// only the entries of `ids` (the current payload).
    pub(crate) async fn load_record(&self, ids: &[ManifestId]) {
        if !lock(&self.record).loaded {
            let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), RECORD_NAMESPACE);
            let text = match api.get_opt(&self.record_name).await {
                Ok(cm) => cm
                    .and_then(|cm| cm.data)
                    .and_then(|mut d| d.remove(RECORD_KEY))
                    .unwrap_or_default(),
                Err(e) => {
                    tracing::debug!("reading {RECORD_NAMESPACE}/{}: {e}", self.record_name);
                    String::new()
                }
            };
            let mut r = lock(&self.record);
            r.parse(&text);
            r.loaded = true;
        }
        let keep: HashSet<u64> = ids.iter().map(object_key).collect();
        let mut r = lock(&self.record);
        let before = r.entries.len();
        r.entries.retain(|k, _| keep.contains(k));
        if r.entries.len() != before {
            r.dirty = true;
        }
    }

    /// Saves the record if it changed (server-side apply of the ConfigMap). Returns whether it
    /// was saved. Failures are logged and retried after the next pass, except a `404` (no
    /// namespace `openshift-cluster-version`): then the next change saves it.
    pub(crate) async fn save_record(&self) -> bool {
        let text = {
            let mut r = lock(&self.record);
            if !r.dirty {
                return false;
            }
            r.dirty = false;
            r.render()
        };
        if text.len() > RECORD_MAX_BYTES {
            tracing::debug!("verification record of {} bytes not saved", text.len());
            return false;
        }
        let cm = serde_json::json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": self.record_name, "namespace": RECORD_NAMESPACE},
            "data": {RECORD_KEY: text},
        });
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), RECORD_NAMESPACE);
        match api
            .patch(
                &self.record_name,
                &PatchParams::apply("cvo").force(),
                &Patch::Apply(&cm),
            )
            .await
        {
            Ok(_) => true,
            Err(e) => {
                tracing::debug!("saving {RECORD_NAMESPACE}/{}: {e}", self.record_name);
                if ApiErrorKind::of(&e) != ApiErrorKind::NotFound {
                    lock(&self.record).dirty = true;
                }
                false
            }
        }
    }

    /// Waits until the watches of `flags` have synced (or failed) or `limit` passed.
    /// Forgets the objects this process created that the synced caches now show, and returns
    /// the event counters of the kinds still waited on (each marked seen before its store is
    /// read, so an event after the read wakes the waiter). A kind without a watch is dropped;
    /// one not synced is kept but not waited on.
    fn settle_unseen(&self) -> Vec<watch::Receiver<u64>> {
        let watches = lock(&self.watches);
        let mut unseen = lock(&self.unseen);
        let mut waiting = Vec::new();
        unseen.retain(|key, names| {
            let Some(w) = watches.get(key) else {
                return false;
            };
            if *w.synced.borrow() != SyncState::Synced {
                return true;
            }
            let mut events = w.events.clone();
            events.borrow_and_update();
            names.retain(|(ns, name)| {
                matches!(w.store.lookup(&w.ar, ns, name, !ns.is_empty()), Lookup::Absent)
            });
            if names.is_empty() {
                return false;
            }
            waiting.push(events);
            true
        });
        waiting
    }

    /// Waits at most `limit` until the synced caches show every object this process created
    /// (a pass then finds them as the server has them, instead of creating them again); what
    /// is still unseen then is forgotten.
    async fn wait_own_creates(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let mut waiting = self.settle_unseen();
            if waiting.is_empty() {
                return;
            }
            let any = futures::future::select_all(waiting.iter_mut().map(|rx| Box::pin(rx.changed())));
            if !matches!(tokio::time::timeout_at(deadline, any).await, Ok((Ok(()), _, _))) {
                // Not shown within a whole wait (deleted since, or named in a way the cache
                // does not key it), or its watch ended: not waited on again; the pass GETs
                // what it cannot tell.
                lock(&self.unseen).clear();
                return;
            }
        }
    }

    async fn wait_synced(flags: Vec<watch::Receiver<SyncState>>, limit: Duration) {
        let all = futures::future::join_all(flags.into_iter().map(|mut rx| async move {
            let _ = rx.wait_for(|s| *s != SyncState::Listing).await;
        }));
        let _ = tokio::time::timeout(limit, all).await;
    }
}

impl super::Applier {
    /// Starts a pass over `manifests` (upstream has no such step): resolves their kinds, starts
    /// the metadata-only watches of those the server knows (a kind defined by a CRD of the
    /// payload starts at its first manifest after the CRD exists), stops the watches of kinds no
    /// longer in the payload, reads the verification record, and waits up to [`SYNC_WAIT`] for
    /// the first lists of the watches it started. Never fails: a kind that cannot be watched is
    /// applied with GETs.
    pub async fn prepare_pass(&self, manifests: &[&Value]) {
        self.prepare_pass_with(manifests, false, SYNC_WAIT).await;
    }

    /// [`Self::prepare_pass`] waiting at most `wait` for the new watches' first lists.
    pub async fn prepare_pass_within(&self, manifests: &[&Value], wait: Duration) {
        self.prepare_pass_with(manifests, false, wait).await;
    }

    /// [`Self::prepare_pass`] for a pass that is `watch_only` or not, waiting at most `wait` for
    /// the new watches' first lists (or their failures; the engine's watch-only passes wait
    /// [`WATCH_ONLY_SYNC_WAIT`], its active ones [`SYNC_WAIT`]).
    ///
    /// A watch-only pass (cvo's choice; upstream has no watch-only mode) watches full objects,
    /// ClusterOperators included, and computes each manifest's drift from the cached object
    /// instead of a GET, so its first pass on a cluster cvo never verified costs one list and
    /// one watch per kind instead of one GET per manifest. Only the payload's objects are kept,
    /// without `managedFields`: the memory grows with the payload, not with the cluster. An
    /// active pass keeps metadata only and GETs what it did not verify before: a write is
    /// built from a fresh read (never from a cache a moment behind), and the verification
    /// record it saves makes every later pass, and the next process, cheap.
    pub async fn prepare_pass_with(&self, manifests: &[&Value], watch_only: bool, wait: Duration) {
        let manifests: Vec<&dyn PayloadObject> = manifests.iter().map(|m| *m as &dyn PayloadObject).collect();
        self.prepare_pass_of(&manifests, watch_only, wait).await;
    }

    /// [`Self::prepare_pass_with`] for manifests that may keep their objects as text: only the
    /// payload's CustomResourceDefinitions are parsed (the kinds they define).
    pub(crate) async fn prepare_pass_of(
        &self,
        manifests: &[&dyn PayloadObject],
        watch_only: bool,
        wait: Duration,
    ) {
        let mut ids = Vec::with_capacity(manifests.len());
        let mut kinds: HashMap<KindKey, ManifestId> = HashMap::new();
        let mut names: HashMap<KindKey, HashSet<ObjectName>> = HashMap::new();
        let mut crds = Vec::new();
        for m in manifests {
            if let Ok(id) = m.identity() {
                if id.api_version == "apiextensions.k8s.io/v1" && id.kind == "CustomResourceDefinition" {
                    crds.push(*m);
                }
                let key = (id.api_version.clone(), id.kind.clone());
                names
                    .entry(key.clone())
                    .or_default()
                    .insert((id.namespace.clone(), id.name.clone()));
                kinds.entry(key).or_insert_with(|| id.clone());
                ids.push(id);
            }
        }
        let names = names.into_iter().map(|(k, v)| (k, Arc::new(v))).collect();
        self.cache.set_wanted(names, watch_only);
        *lock(&self.cache.payload_crd_kinds) = crds
            .iter()
            .flat_map(|m| {
                let object = m.required();
                let spec = &object["spec"];
                let group = spec["group"].as_str().unwrap_or_default().to_owned();
                let kind = spec["names"]["kind"].as_str().unwrap_or_default().to_owned();
                spec["versions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v["name"].as_str())
                    .map(move |v| (group.clone(), v.to_owned(), kind.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        self.cache.streaming().await;
        // Kinds resolved together, for at most RESOLVE_WAIT (a watch-only pass: `wait`, as
        // its lists): a kind whose CRD does not exist yet is started at its first manifest
        // instead. ClusterOperators are read every active pass (their health), so only a full
        // cache serves them: the process's shared informer, or in watch-only passes a watch.
        let resolve_wait = if watch_only { wait } else { RESOLVE_WAIT };
        // The CRD kind first: once its watch has listed, the kinds the payload's CRDs define
        // resolve from it, with no discovery request (and none for a CRD not created yet).
        let mut started = Vec::new();
        if let Some(id) = kinds.get(&crd_key())
            && let Ok((ar, _)) = self.resource_with_retries(id, 0).await
            && let Some(rx) = self.cache.start(&crd_key(), &ar)
        {
            WatchCaches::wait_synced(vec![rx.clone()], wait).await;
            started.push(rx);
        }
        let resolve = kinds
            .iter()
            .filter(|(key, id)| {
                *key != &crd_key()
                    && (watch_only
                        || self.cache.shares_cluster_operators()
                        || !(id.group() == "config.openshift.io" && id.kind == "ClusterOperator"))
            })
            .map(|(key, id)| async move {
                let defined = lock(&self.cache.payload_crd_kinds).contains(&(
                    id.group().to_owned(),
                    id.version().to_owned(),
                    id.kind.clone(),
                ));
                let r = if defined && self.cache.crd_events().is_some() {
                    Ok(self
                        .cache
                        .served_kind(id.group(), id.version(), &id.kind)
                        .ok_or_else(|| UpdateError::failed("not served yet")))
                } else {
                    tokio::time::timeout(resolve_wait, self.resource_with_retries(id, 0)).await
                };
                (key, r)
            });
        for (key, r) in futures::future::join_all(resolve).await {
            if let Ok(Ok((ar, _))) = r {
                started.extend(self.cache.start(key, &ar));
            }
        }
        // Watches opened earlier and still listing (those the last pass opened as it ended)
        // are waited for too.
        started.extend(self.cache.listing());
        self.cache.load_record(&ids).await;
        WatchCaches::wait_synced(started, wait).await;
        self.cache.wait_own_creates(wait).await;
    }

    /// Ends a pass: opens the watches of the payload's kinds that have none yet (the kinds of
    /// CRDs created during the pass: the next pass then finds them synced), then saves the
    /// verification record if it changed, unless `dry_run`. Returns whether it wrote the
    /// record.
    pub async fn finish_pass(&self, dry_run: bool) -> bool {
        self.cache
            .start_missing(|id| async move {
                tokio::time::timeout(RESOLVE_WAIT, self.resource_with_retries(&id, 0))
                    .await
                    .ok()?
                    .ok()
                    .map(|(ar, _)| ar)
            })
            .await;
        !dry_run && self.cache.save_record().await
    }

    /// In a watch-only pass, what the full-object cache knows of `id`: `Some(None)` absent,
    /// `Some(Some(object))` present; `None` when it cannot tell (or the pass writes) and the
    /// caller must GET.
    pub(crate) fn cached(
        &self,
        ctx: &ApplyContext,
        id: &ManifestId,
        ar: &ApiResource,
        namespaced: bool,
    ) -> Option<Option<Value>> {
        if !ctx.dry_run {
            return None;
        }
        match self.cache.known(id, ar, namespaced) {
            Known::Absent => Some(None),
            Known::Present { object: Some(o), .. } => Some(Some(o)),
            _ => None,
        }
    }

    /// In an active pass, a ClusterOperator as the process's shared informer holds it
    /// ([`WatchCaches::share_cluster_operators`]) when that has listed it; `None` (the caller
    /// GETs) without a shared informer, before its list, while its watch fails, or for an
    /// operator it has not seen (one created a moment ago).
    pub(crate) fn shared_cluster_operator(
        &self,
        ctx: &ApplyContext,
        id: &ManifestId,
        ar: &ApiResource,
    ) -> Option<Value> {
        if ctx.dry_run || !self.cache.shares_cluster_operators() {
            return None;
        }
        match self.cache.known(id, ar, false) {
            Known::Present { object, .. } => object,
            _ => None,
        }
    }

    /// Lets the watch caches read ClusterOperators from the process's informer
    /// ([`WatchCaches::share_cluster_operators`]).
    pub fn share_cluster_operators(&self, informer: Informer<ClusterOperator>) {
        self.cache.share_cluster_operators(informer);
    }

    /// The watch caches.
    pub fn caches(&self) -> &WatchCaches {
        &self.cache
    }

    /// Creates an object the synced cache knows absent, without a GET. Returns the outcome, or,
    /// when the server answers `409 AlreadyExists` (the cache had not seen it yet), the live
    /// object for the caller's merge. Records the verification when `hash` is set.
    ///
    /// Errors: the create's or the fallback GET's API error as upstream `pkg/payload/task.go`
    /// maps it (the `409` itself if the object is gone again), the readiness check's error.
    pub(crate) async fn create_known_absent(
        &self,
        ctx: &ApplyContext,
        api: &Api<DynamicObject>,
        id: &ManifestId,
        required: &Value,
        hash: Option<u64>,
    ) -> Result<Result<ApplyOutcome, Value>, UpdateError> {
        let task = id.task();
        let obj: DynamicObject = decode(&task, "manifest", required)?;
        let created = match self.create(api, id, &obj).await {
            Ok(c) => c,
            Err(e) if ApiErrorKind::of(&e) == ApiErrorKind::AlreadyExists => {
                return match self.get(api, id).await? {
                    Some(live) => Ok(Err(live)),
                    None => Err(UpdateError::from_api(&task, &e)),
                };
            }
            Err(e) => return Err(self.write_error(id, &e)),
        };
        self.after_create(ctx, api, id, hash, &created).await.map(Ok)
    }
}

impl WatchCaches {
    /// After an apply of `id` left the object `after`: records the verification when the object
    /// now matches the manifest (no drift, or written: `after` is the server's answer) and
    /// `hash` is set; forgets it otherwise (a dry run that found drift).
    pub(crate) fn after_apply(
        &self,
        id: &ManifestId,
        hash: Option<u64>,
        drift: &Drift,
        wrote: bool,
        after: &Value,
    ) {
        if wrote && matches!(drift, Drift::Create { .. }) {
            let key = (id.api_version.clone(), id.kind.clone());
            let name = (id.namespace.clone(), id.name.clone());
            let mut fresh = lock(&self.fresh);
            if let Some(created) = fresh.get_mut(&key) {
                created.insert(name.clone());
            }
            drop(fresh);
            lock(&self.unseen).entry(key).or_default().insert(name);
        }
        match hash {
            Some(h) if wrote || *drift == Drift::None => {
                self.verified(
                    id,
                    h,
                    after["metadata"]["resourceVersion"].as_str().unwrap_or_default(),
                );
            }
            _ => self.forget(id),
        }
    }
}

#[cfg(test)]
mod tests;
