//! [`Simulator`]: the in-memory API server as a `tower::Service`, so
//! `kube::Client::new(sim.clone(), "default")` talks to it as to a kube-apiserver.
//!
//! Served: discovery (`/api`, `/api/v1`, `/apis`, `/apis/{group}/{version}`) of the kinds in
//! the store's registry (built-in and CRD-defined); for every kind, get, list
//! (`labelSelector`, `fieldSelector` on `metadata.name` / `metadata.namespace`, `limit` +
//! `continue`), watch (`resourceVersion`, `timeoutSeconds`, `allowWatchBookmarks`), create,
//! update, patch (JSON, merge, strategic merge, server-side apply; see [`super::patch`]),
//! delete, deletecollection, and the `/status` subresource. Metadata-only requests
//! (`Accept: ...;as=PartialObjectMetadata`) get `PartialObjectMetadata`. Errors are `Status`
//! bodies with kube-apiserver's reasons.
//! Every request is recorded in an [`Audit`] log.

mod body;
mod builtin_openapi;
mod handlers;
mod media;
mod openapi;
mod protobuf;
mod reply;
mod route;
mod scale;
mod selectors;
mod table;
#[cfg(test)]
mod tests;
mod watches;

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex, MutexGuard},
    task::{Context, Poll},
    time::Duration,
};

use http::{Request, Response};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::audit::{Audit, AuditEntry};
use super::faults::{Faults, Hooks};
use super::response::{ResponseBody, json_response};
use super::store::{ApiError, Store, TypeRef, WriteMode};
use crate::cluster::ClusterState;
use route::{parse_query, request_verb};

/// How often an idle watch with bookmarks gets one, unless
/// [`Simulator::set_bookmark_interval`] says otherwise.
pub const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

struct Shared {
    store: Mutex<Store>,
    audit: Mutex<Audit>,
    changes: watch::Sender<u64>,
    bookmark_interval: Mutex<Duration>,
    hooks: Hooks,
    /// Whether requests are kept in `audit` (the sink, if any, sees them either way).
    keep_audit: std::sync::atomic::AtomicBool,
}

/// The in-memory Kubernetes API. Cheap to clone; clones share one store.
#[derive(Clone)]
pub struct Simulator {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("resource_version", &self.lock().resource_version())
            .finish()
    }
}

impl Default for Simulator {
    fn default() -> Self {
        Self::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn internal(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(500, "InternalError", e.to_string())
}

impl Simulator {
    /// An empty API server (no objects, not even namespaces).
    pub fn new() -> Self {
        Self::with_event_capacity(10_000)
    }

    /// An empty API server whose watch log keeps at most `capacity` events; watches from
    /// older resourceVersions get `410 Expired`.
    pub fn with_event_capacity(capacity: usize) -> Self {
        let (changes, _) = watch::channel(0);
        Self {
            shared: Arc::new(Shared {
                store: Mutex::new(Store::with_event_capacity(capacity)),
                audit: Mutex::new(Audit::default()),
                changes,
                bookmark_interval: Mutex::new(DEFAULT_BOOKMARK_INTERVAL),
                hooks: Hooks::default(),
                keep_audit: std::sync::atomic::AtomicBool::new(true),
            }),
        }
    }

    /// Creates the namespaces a new kube-apiserver makes for itself (`default`, `kube-system`,
    /// `kube-public`, `kube-node-lease`) where absent, as a client would create them (defaults
    /// and the `kubernetes.io/metadata.name` label). `cvo sim serve` starts with them.
    /// Upstream: `pkg/controlplane/controller/systemnamespaces` in kubernetes/kubernetes.
    ///
    /// # Errors
    /// When a namespace cannot be stored.
    pub fn add_system_namespaces(&self) -> Result<(), ApiError> {
        let mut store = self.lock();
        let t = store
            .find_plural("", "namespaces")
            .ok_or_else(|| internal("namespaces not served"))?;
        for name in ["default", "kube-node-lease", "kube-public", "kube-system"] {
            if !store.contains(&t, "", name) {
                store.create(&t, "", json!({"metadata": {"name": name}}), WriteMode::Main)?;
            }
        }
        let rv = store.resource_version();
        drop(store);
        self.notify(rv);
        Ok(())
    }

    /// An API server holding the objects of `state`, status included.
    ///
    /// # Errors
    /// When an object cannot be stored (it does not serialize, or has no name).
    pub fn from_state(state: &ClusterState) -> Result<Self, ApiError> {
        let sim = Self::new();
        sim.load(state)?;
        Ok(sim)
    }

    /// An API server holding an offline snapshot read with [`crate::cluster::snapshot::load`].
    ///
    /// # Errors
    /// When the snapshot cannot be read, or an object cannot be stored.
    pub fn from_snapshot(paths: &[std::path::PathBuf]) -> anyhow::Result<Self> {
        let state = crate::cluster::snapshot::load(paths)?;
        Ok(Self::from_state(&state)?)
    }

    fn lock(&self) -> MutexGuard<'_, Store> {
        lock(&self.shared.store)
    }

    fn notify(&self, rv: u64) {
        self.shared.changes.send_replace(rv);
    }

    /// Stores the objects of `state` (ClusterVersion, ClusterOperators, MachineConfigPools,
    /// MachineConfigs, Nodes, the MCO Deployment and its namespace), status included,
    /// replacing objects of the same name. The audit log is not touched.
    ///
    /// # Errors
    /// When an object cannot be stored (it does not serialize, or has no name).
    pub fn load(&self, state: &ClusterState) -> Result<(), ApiError> {
        let typ = |plural: &str| -> Result<TypeRef, ApiError> {
            let store = self.lock();
            store
                .types()
                .iter()
                .find(|t| t.plural == plural && t.crd.is_none())
                .cloned()
                .ok_or_else(|| internal(format!("{plural} not served")))
        };
        let mut objects: Vec<(TypeRef, Value)> = Vec::new();
        let v = |o: &dyn erased::Ser| o.to_value();
        if let Some(cv) = &state.cluster_version {
            objects.push((typ("clusterversions")?, v(cv)?));
        }
        for o in &state.cluster_operators {
            objects.push((typ("clusteroperators")?, v(o)?));
        }
        for o in &state.machine_config_pools {
            objects.push((typ("machineconfigpools")?, v(o)?));
        }
        for o in &state.machine_configs {
            objects.push((typ("machineconfigs")?, v(o)?));
        }
        for o in &state.nodes {
            objects.push((typ("nodes")?, v(o)?));
        }
        if let Some(d) = &state.mco_deployment {
            let d = v(d)?;
            let ns = d["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_owned();
            objects.push((typ("namespaces")?, json!({"metadata": {"name": ns}})));
            objects.push((typ("deployments")?, d));
        }
        for (t, o) in objects {
            self.insert_as(&t, o)?;
        }
        Ok(())
    }

    /// Stores `obj` (its kind taken from `apiVersion` and `kind`) as is, status included:
    /// created, or replacing the object of the same name. For seeding and simulated
    /// controllers; not recorded in the audit log.
    ///
    /// # Errors
    /// `400 BadRequest` for a kind the simulator does not serve, or an object without a name.
    pub fn insert(&self, obj: Value) -> Result<Value, ApiError> {
        let api_version = obj["apiVersion"].as_str().unwrap_or_default();
        let kind = obj["kind"].as_str().unwrap_or_default();
        let t = self.lock().find_kind(api_version, kind).ok_or_else(|| {
            ApiError::bad_request(format!(
                "no kind {kind:?} is registered for version {api_version:?}"
            ))
        })?;
        self.insert_as(&t, obj)
    }

    fn insert_as(&self, t: &TypeRef, mut obj: Value) -> Result<Value, ApiError> {
        let ns = if t.namespaced {
            obj["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_owned()
        } else {
            String::new()
        };
        let name = obj["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            m.remove("managedFields");
        }
        let mut store = self.lock();
        let out = if !name.is_empty() && store.contains(t, &ns, &name) {
            store.update(t, &ns, &name, obj, WriteMode::All)
        } else {
            store.create(t, &ns, obj, WriteMode::All)
        };
        let rv = store.resource_version();
        drop(store);
        self.notify(rv);
        out
    }

    /// Keeps at most `capacity` watch events (the window a watch can resume from); older
    /// versions answer `410 Expired`, as kube-apiserver does after etcd compacted them.
    pub fn set_event_capacity(&self, capacity: usize) {
        self.lock().set_event_capacity(capacity);
    }

    /// Sets how often watches that allow bookmarks (`allowWatchBookmarks=true`) get a
    /// periodic `BOOKMARK` event while idle (default [`DEFAULT_BOOKMARK_INTERVAL`], about what
    /// kube-apiserver's watch cache does). Applies to watches started afterwards.
    pub fn set_bookmark_interval(&self, every: Duration) {
        *lock(&self.shared.bookmark_interval) = every.max(Duration::from_millis(10));
    }

    /// Makes CustomResourceDefinitions created from now on wait `delay` before they are
    /// established and their kinds served (discovery, endpoints), as kube-apiserver's CRD
    /// controllers take a moment: until then their `status` has no conditions and requests
    /// to the new kind are `404 NotFound`. Zero (the default) establishes them within the
    /// create.
    pub fn set_crd_establish_delay(&self, delay: Duration) {
        self.lock().set_establish_delay(delay);
    }

    /// Establishes the CRDs whose delay is over; after a request that left some waiting,
    /// wakes up when the next one is due (so watchers see it without another request).
    fn establish_due(&self, wake: bool) {
        let mut store = self.lock();
        let changed = store.establish_due(std::time::Instant::now());
        let rv = store.resource_version();
        let next = store.next_establish();
        drop(store);
        if changed {
            self.notify(rv);
        }
        if let Some(at) = next.filter(|_| wake)
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            let sim = self.clone();
            rt.spawn(async move {
                tokio::time::sleep_until(at.into()).await;
                let mut store = sim.lock();
                let changed = store.establish_due(std::time::Instant::now());
                let rv = store.resource_version();
                drop(store);
                if changed {
                    sim.notify(rv);
                }
            });
        }
    }

    /// The current resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.lock().resource_version()
    }

    /// The stored object, if any (`ns` is ignored for cluster-scoped kinds).
    pub fn get(&self, group: &str, plural: &str, ns: &str, name: &str) -> Option<Value> {
        let store = self.lock();
        let t = store.find_plural(group, plural)?;
        let ns = if t.namespaced { ns } else { "" };
        store.get(&t, ns, name)
    }

    /// Drops the watch event log: watches from any earlier resourceVersion get `410 Expired`.
    pub fn compact(&self) {
        self.lock().compact();
    }

    /// A copy of the request audit log.
    pub fn audit(&self) -> Audit {
        lock(&self.shared.audit).clone()
    }

    /// Takes the times the API server writes (`creationTimestamp`, `deletionTimestamp`,
    /// `managedFields` times, CRD condition transitions) from `clock` from now on: the live
    /// demo's simulated clock, so that what the engine creates is stamped on the clock the
    /// dashboard shows. The wall clock by default. `Table` answers (`kubectl get` ages, only
    /// over HTTP: `cvo sim serve`, which keeps the wall clock) still measure the wall clock.
    pub fn set_clock(&self, clock: crate::clock::Clock) {
        self.lock().set_clock(clock);
    }

    /// Whether requests are kept in the in-memory audit log ([`Simulator::audit`]; on by
    /// default). `cvo sim serve` and the live demo (`cvo demo`) turn it off, so a long-running
    /// server does not grow with every request; an [`on_audit`](Simulator::on_audit) sink still sees each request.
    pub fn keep_audit(&self, keep: bool) {
        self.shared
            .keep_audit
            .store(keep, std::sync::atomic::Ordering::Relaxed);
        if !keep {
            self.clear_audit();
        }
    }

    /// Empties the request audit log.
    pub fn clear_audit(&self) {
        lock(&self.shared.audit).entries.clear();
    }

    /// Puts `faults` in force from now on (resetting the RNG to its seed and the "next N"
    /// counters). Empty faults switch injection off.
    ///
    /// # Errors
    /// A one-line message when [`Faults::validate`] fails; the faults in force do not change.
    pub fn set_faults(&self, faults: Faults) -> Result<(), String> {
        self.shared.hooks.set_faults(faults)
    }

    /// The faults in force (`Faults::default()` when none).
    pub fn faults(&self) -> Faults {
        self.shared.hooks.faults()
    }

    /// Calls `sink` with every new audit entry (after the response head is ready), e.g. to
    /// write an audit log file. Replaces an earlier sink.
    pub fn on_audit(&self, sink: impl Fn(&AuditEntry) + Send + Sync + 'static) {
        self.shared.hooks.on_audit(Box::new(sink));
    }

    /// Removes the object `r` names (`apiVersion`, `kind`, `metadata.name`,
    /// `metadata.namespace`), as a simulated controller would; not recorded in the audit log.
    ///
    /// # Errors
    /// `400 BadRequest` for a kind the simulator does not serve, `404 NotFound` for a missing
    /// object.
    pub fn remove(&self, r: &Value) -> Result<Value, ApiError> {
        let api_version = r["apiVersion"].as_str().unwrap_or_default();
        let kind = r["kind"].as_str().unwrap_or_default();
        let t = self.lock().find_kind(api_version, kind).ok_or_else(|| {
            ApiError::bad_request(format!(
                "no kind {kind:?} is registered for version {api_version:?}"
            ))
        })?;
        let ns = if t.namespaced {
            r["metadata"]["namespace"].as_str().unwrap_or("default")
        } else {
            ""
        };
        let name = r["metadata"]["name"].as_str().unwrap_or_default();
        self.mutate(false, |s| s.delete(&t, ns, name))
    }

    /// A receiver of the store's resourceVersion, updated after every write (API or
    /// [`Simulator::insert`]); simulated controllers wait on it instead of polling.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }

    /// Whether an object of one of `kinds` (`(group, plural)` pairs) changed after
    /// resourceVersion `rv`; `true` as well when the event log no longer reaches back to `rv`.
    pub fn changed_since(&self, rv: u64, kinds: &[(&str, &str)]) -> bool {
        let store = self.lock();
        if rv < store.oldest_watchable() {
            return true;
        }
        store.events_since(rv).any(|e| {
            kinds
                .iter()
                .any(|(g, p)| e.resource.group == *g && e.resource.plural == *p)
        })
    }

    /// Calls `f` on every stored object of the kind `group`/`plural` (all namespaces, ordered
    /// by namespace then name) under the store lock, each parsed from its stored text; `f` must not call
    /// back into the simulator. Not recorded in the audit log.
    pub fn for_each_object(&self, group: &str, plural: &str, mut f: impl FnMut(&Value)) {
        let store = self.lock();
        let Some(t) = store.find_plural(group, plural) else {
            return;
        };
        for o in store.list_stored(&t, None) {
            f(&o.value());
        }
    }

    /// Every stored object of the kind `group`/`plural` (all namespaces), ordered by namespace
    /// then name; empty for a kind the simulator does not serve. Not recorded in the audit log.
    pub fn list_objects(&self, group: &str, plural: &str) -> Vec<Value> {
        let store = self.lock();
        let Some(t) = store.find_plural(group, plural) else {
            return Vec::new();
        };
        store.list(&t, None)
    }

    /// Writes `obj`'s `status` (only), as a controller writes the `/status` subresource; a
    /// non-empty `metadata.resourceVersion` must match the stored one. Not audited.
    ///
    /// # Errors
    /// `400 BadRequest` for a kind the simulator does not serve, `404 NotFound`, `409 Conflict`.
    pub fn update_status(&self, obj: Value) -> Result<Value, ApiError> {
        self.update_as(obj, WriteMode::Status)
    }

    /// Replaces the main resource of `obj` (metadata and spec; the stored `status` is kept for
    /// kinds with a status subresource), as a controller's update does; a non-empty
    /// `metadata.resourceVersion` must match the stored one. Not audited.
    ///
    /// # Errors
    /// `400 BadRequest` for a kind the simulator does not serve, `404 NotFound`, `409 Conflict`.
    pub fn replace(&self, obj: Value) -> Result<Value, ApiError> {
        self.update_as(obj, WriteMode::Main)
    }

    fn update_as(&self, obj: Value, mode: WriteMode) -> Result<Value, ApiError> {
        let api_version = obj["apiVersion"].as_str().unwrap_or_default();
        let kind = obj["kind"].as_str().unwrap_or_default();
        let t = self.lock().find_kind(api_version, kind).ok_or_else(|| {
            ApiError::bad_request(format!(
                "no kind {kind:?} is registered for version {api_version:?}"
            ))
        })?;
        let ns = if t.namespaced {
            obj["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_owned()
        } else {
            String::new()
        };
        let name = obj["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        self.mutate(false, |s| s.update(&t, &ns, &name, obj, mode))
    }

    /// The served kind with this `apiVersion` and `kind` (built in or CRD-defined), if any.
    pub fn find_kind(&self, api_version: &str, kind: &str) -> Option<super::store::TypeRef> {
        self.lock().find_kind(api_version, kind)
    }

    /// The number of stored objects, all kinds.
    pub fn object_count(&self) -> usize {
        let store = self.lock();
        store
            .types()
            .iter()
            .map(|t| store.list_stored(t, None).len())
            .sum()
    }

    fn record(
        &self,
        parts: &http::request::Parts,
        verb: &'static str,
        code: u16,
        start: (chrono::DateTime<chrono::Utc>, std::time::Instant),
        fault: Option<String>,
    ) {
        let entry = AuditEntry {
            method: parts.method.to_string(),
            path: parts.uri.path().to_owned(),
            query: parts.uri.query().unwrap_or_default().to_owned(),
            dry_run: parts
                .uri
                .query()
                .is_some_and(|q| parse_query(q).get("dryRun").is_some_and(|d| d == "All")),
            verb,
            code,
            time: start.0,
            duration: start.1.elapsed(),
            fault,
        };
        self.shared.hooks.audited(&entry);
        if self.shared.keep_audit.load(std::sync::atomic::Ordering::Relaxed) {
            lock(&self.shared.audit).entries.push(entry);
        }
    }
}

/// Serializing any typed object to JSON (object-safe helper for [`Simulator::load`]).
mod erased {
    use super::{ApiError, Value, internal};

    pub trait Ser {
        fn to_value(&self) -> Result<Value, ApiError>;
    }

    impl<T: serde::Serialize> Ser for T {
        fn to_value(&self) -> Result<Value, ApiError> {
            serde_json::to_value(self).map_err(internal)
        }
    }
}

impl tower::Service<Request<kube::client::Body>> for Simulator {
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let sim = self.clone();
        Box::pin(async move {
            let start = (chrono::Utc::now(), std::time::Instant::now());
            let (parts, body) = req.into_parts();
            let bytes = match body.collect_bytes().await {
                Ok(bytes) => bytes,
                Err(e) => {
                    let err = ApiError::bad_request(format!("reading the request body: {e}"));
                    sim.record(&parts, "unknown", 400, start, None);
                    return Ok(json_response(400, &err.to_status()));
                }
            };
            sim.establish_due(false);
            // Injected faults (latency, errors, forced 410 / 409) come first; a watch that
            // is served may be cut short by an injected drop.
            let verb = request_verb(&parts, &sim.lock());
            let (verb, response, fault) = match sim
                .shared
                .hooks
                .before(|| sim.resource_version(), &parts, verb)
                .await
            {
                Some((response, fault)) => (verb, response, Some(fault)),
                None => {
                    let (verb, response) = sim.respond(&parts, &bytes);
                    let (response, fault) = sim.shared.hooks.after(&parts, verb, response);
                    (verb, response, fault)
                }
            };
            sim.record(&parts, verb, response.status().as_u16(), start, fault);
            if verb == "create" {
                sim.establish_due(true);
            }
            Ok(response)
        })
    }
}
