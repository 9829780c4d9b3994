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

use std::{
    collections::{BTreeMap, VecDeque},
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex, MutexGuard},
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body::Frame;
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::patch::{self, Part, PatchType};
use super::store::{ApiError, EventType, NamespaceState, Store, TypeRef, WriteMode};
use crate::cluster::ClusterState;

/// How often an idle watch with bookmarks gets one, unless
/// [`Simulator::set_bookmark_interval`] says otherwise.
pub const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// The body of every simulator response.
pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// One request as the audit log records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    /// HTTP method.
    pub method: String,
    /// URL path.
    pub path: String,
    /// URL query (without `?`), possibly empty.
    pub query: String,
    /// Kubernetes verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`, `discovery`, or `unknown`.
    pub verb: &'static str,
    /// Whether the request was a dry run (`?dryRun=All`): it changed nothing.
    pub dry_run: bool,
    /// HTTP status code of the response (a watch that later reports an error in its stream
    /// still counts as 200).
    pub code: u16,
    /// When the request arrived.
    pub time: chrono::DateTime<chrono::Utc>,
    /// Time to the response head (for a watch: to the start of its stream), injected latency
    /// included.
    pub duration: Duration,
    /// The fault injected into this request, if any (see [`super::faults`]): `error 429`,
    /// `error 500`, `error 503`, `timeout` (hung, then 504), `gone` (410 Expired event),
    /// `conflict`, or for a served watch `watch drop after N events` / `... after S s` (the
    /// drop is armed; the stream may end earlier on its own).
    pub fault: Option<String>,
}

/// The request audit log.
#[derive(Clone, Debug, Default)]
pub struct Audit {
    /// Every request, oldest first.
    pub entries: Vec<AuditEntry>,
}

impl Audit {
    /// Number of requests with this verb.
    pub fn count(&self, verb: &str) -> usize {
        self.entries.iter().filter(|e| e.verb == verb).count()
    }

    /// Number of requests per verb.
    pub fn counts(&self) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for e in &self.entries {
            *m.entry(e.verb).or_default() += 1;
        }
        m
    }

    /// Number of write requests (create, update, patch, delete, deletecollection), whatever
    /// their outcome; dry runs are not counted.
    pub fn writes(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| !e.dry_run)
            .filter(|e| {
                matches!(
                    e.verb,
                    "create" | "update" | "patch" | "delete" | "deletecollection"
                )
            })
            .count()
    }
}

struct Shared {
    store: Mutex<Store>,
    audit: Mutex<Audit>,
    changes: watch::Sender<u64>,
    bookmark_interval: Mutex<Duration>,
    hooks: super::faults::Hooks,
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
                hooks: super::faults::Hooks::default(),
            }),
        }
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
        let out = if !name.is_empty() && store.get(t, &ns, &name).is_some() {
            store.update(t, &ns, &name, obj, WriteMode::All)
        } else {
            store.create(t, &ns, obj, WriteMode::All)
        };
        let rv = store.resource_version();
        drop(store);
        self.notify(rv);
        out
    }

    /// Sets how often watches that allow bookmarks (`allowWatchBookmarks=true`) get a
    /// periodic `BOOKMARK` event while idle (default [`DEFAULT_BOOKMARK_INTERVAL`], about what
    /// kube-apiserver's watch cache does). Applies to watches started afterwards.
    pub fn set_bookmark_interval(&self, every: Duration) {
        *lock(&self.shared.bookmark_interval) = every.max(Duration::from_millis(10));
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
        store.get(&t, ns, name).cloned()
    }

    /// Drops the watch event log: watches from any earlier resourceVersion get `410 Expired`.
    pub fn compact(&self) {
        self.lock().compact();
    }

    /// A copy of the request audit log.
    pub fn audit(&self) -> Audit {
        lock(&self.shared.audit).clone()
    }

    /// Empties the request audit log.
    pub fn clear_audit(&self) {
        lock(&self.shared.audit).entries.clear();
    }

    /// The fault-injection and audit hooks.
    pub(super) fn hooks(&self) -> &super::faults::Hooks {
        &self.shared.hooks
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
    /// by namespace then name) under the store lock, without copying them; `f` must not call
    /// back into the simulator. Not recorded in the audit log.
    pub fn for_each_object(&self, group: &str, plural: &str, mut f: impl FnMut(&Value)) {
        let store = self.lock();
        let Some(t) = store.find_plural(group, plural) else {
            return;
        };
        for o in store.list(&t, None) {
            f(o);
        }
    }

    /// Every stored object of the kind `group`/`plural` (all namespaces), ordered by namespace
    /// then name; empty for a kind the simulator does not serve. Not recorded in the audit log.
    pub fn list_objects(&self, group: &str, plural: &str) -> Vec<Value> {
        let store = self.lock();
        let Some(t) = store.find_plural(group, plural) else {
            return Vec::new();
        };
        store.list(&t, None).into_iter().cloned().collect()
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
        store.types().iter().map(|t| store.list(t, None).len()).sum()
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
        lock(&self.shared.audit).entries.push(entry);
    }

    /// Serves one request (the body already read); returns the verb and the response.
    fn respond(&self, parts: &http::request::Parts, body: &[u8]) -> (&'static str, Response<ResponseBody>) {
        let (verb, result) = self.dispatch(parts, body);
        let response = match result {
            Ok(Reply::Json(code, v)) => json_response(code, &v),
            Ok(Reply::Stream(b)) => {
                let mut r = Response::new(b);
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/json"),
                );
                r
            }
            Err(e) => json_response(e.code, &e.to_status()),
        };
        (verb, response)
    }

    fn dispatch(&self, parts: &http::request::Parts, body: &[u8]) -> (&'static str, Result<Reply, ApiError>) {
        let path = parts.uri.path();
        let query = parse_query(parts.uri.query().unwrap_or_default());
        let route = match route(path, &self.lock()) {
            Ok(r) => r,
            Err(e) => return ("unknown", Err(e)),
        };
        let (t, ns, name, sub) = match route {
            Route::Discovery(v) => {
                return (
                    "discovery",
                    if parts.method == Method::GET {
                        Ok(Reply::Json(200, v))
                    } else {
                        Err(method_not_allowed(&parts.method))
                    },
                );
            }
            Route::Resource { t, ns, name, sub } => (t, ns, name, sub),
        };
        let meta_only = parts
            .headers
            .get(header::ACCEPT)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|a| a.contains("as=PartialObjectMetadata"));
        let ns_str = ns.clone().unwrap_or_default();
        let status = sub.is_some();
        let mode = if status {
            WriteMode::Status
        } else {
            WriteMode::Main
        };
        let m = &parts.method;
        let dry_run = query.get("dryRun").is_some_and(|d| d == "All");
        let manager = field_manager(parts, &query);
        match (m, name) {
            (&Method::GET, Some(name)) => ("get", self.get_one(&t, &ns_str, &name, meta_only)),
            (&Method::GET, None) if query.get("watch").is_some_and(|w| w == "true" || w == "1") => {
                ("watch", self.watch(&t, ns, &query, meta_only))
            }
            (&Method::GET, None) => ("list", self.list(&t, ns.as_deref(), &query, meta_only)),
            (&Method::POST, None) if !status => {
                ("create", self.create(&t, ns.as_deref(), body, dry_run, &manager))
            }
            (&Method::PUT, Some(name)) => (
                "update",
                self.update(&t, &ns_str, &name, body, mode, dry_run, &manager),
            ),
            (&Method::PATCH, Some(name)) => {
                let ct = parts
                    .headers
                    .get(header::CONTENT_TYPE)
                    .and_then(|h| h.to_str().ok())
                    .unwrap_or_default();
                (
                    "patch",
                    self.patch(&t, &ns_str, &name, ct, &query, body, mode, dry_run, &manager),
                )
            }
            (&Method::DELETE, Some(name)) if !status => ("delete", self.delete(&t, &ns_str, &name, dry_run)),
            (&Method::DELETE, None) => (
                "deletecollection",
                self.delete_collection(&t, ns.as_deref(), &query, dry_run),
            ),
            _ => ("unknown", Err(method_not_allowed(m))),
        }
    }

    /// Runs a write on the store, or with `dry_run` (`?dryRun=All`) on a copy of it, so the
    /// answer is what the write would return and nothing changes.
    fn mutate(
        &self,
        dry_run: bool,
        f: impl FnOnce(&mut Store) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        if dry_run {
            let mut copy = self.lock().clone();
            return f(&mut copy);
        }
        let mut store = self.lock();
        let out = f(&mut store);
        let rv = store.resource_version();
        drop(store);
        self.notify(rv);
        out
    }

    fn get_one(&self, t: &TypeRef, ns: &str, name: &str, meta_only: bool) -> Result<Reply, ApiError> {
        let store = self.lock();
        let o = store
            .get(t, ns, name)
            .ok_or_else(|| ApiError::not_found(t, name))?;
        Ok(Reply::Json(200, if meta_only { partial(o) } else { o.clone() }))
    }

    fn list(
        &self,
        t: &TypeRef,
        ns: Option<&str>,
        query: &BTreeMap<String, String>,
        meta_only: bool,
    ) -> Result<Reply, ApiError> {
        let sel = Selectors::parse(query)?;
        let limit = match query.get("limit").filter(|l| !l.is_empty()) {
            Some(l) => l
                .parse::<usize>()
                .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
            None => 0,
        };
        let after = match query.get("continue").filter(|c| !c.is_empty()) {
            Some(c) => Some(decode_continue(c)?),
            None => None,
        };
        let store = self.lock();
        let rv = store.resource_version();
        let mut items: Vec<&Value> = store
            .list(t, ns)
            .into_iter()
            .filter(|o| sel.matches(o))
            .filter(|o| after.as_ref().is_none_or(|a| &object_key(o) > a))
            .collect();
        let mut list_meta = json!({"resourceVersion": rv.to_string()});
        if limit > 0 && items.len() > limit {
            let remaining = items.len() - limit;
            items.truncate(limit);
            if let Some(last) = items.last() {
                list_meta["continue"] = json!(encode_continue(&object_key(last)));
                list_meta["remainingItemCount"] = json!(remaining);
            }
        }
        let items: Vec<Value> = items
            .into_iter()
            .map(|o| if meta_only { partial(o) } else { o.clone() })
            .collect();
        let (kind, api_version) = if meta_only {
            (
                "PartialObjectMetadataList".to_owned(),
                "meta.k8s.io/v1".to_owned(),
            )
        } else {
            (format!("{}List", t.kind), t.api_version())
        };
        Ok(Reply::Json(
            200,
            json!({"kind": kind, "apiVersion": api_version, "metadata": list_meta, "items": items}),
        ))
    }

    fn create(
        &self,
        t: &TypeRef,
        ns: Option<&str>,
        body: &[u8],
        dry_run: bool,
        manager: &str,
    ) -> Result<Reply, ApiError> {
        let obj = parse_body(body)?;
        let ns = match (t.namespaced, ns) {
            (true, Some(ns)) => ns.to_owned(),
            (true, None) => {
                return Err(ApiError::bad_request(format!(
                    "a namespace is required to create {}",
                    t.qualified()
                )));
            }
            (false, _) => String::new(),
        };
        if let Some(body_ns) = obj["metadata"]["namespace"].as_str()
            && t.namespaced
            && !body_ns.is_empty()
            && body_ns != ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let name = obj["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        let mut obj = obj;
        if let Some(m) = obj["metadata"].as_object_mut() {
            m.remove("managedFields");
        }
        patch::managed_update(t, None, &mut obj, manager, Part::Main);
        self.mutate(dry_run, |s| {
            check_namespace(s, t, &ns, &name)?;
            s.create(t, &ns, obj, WriteMode::Main)
        })
        .map(|o| Reply::Json(201, o))
    }

    #[allow(clippy::too_many_arguments)]
    fn update(
        &self,
        t: &TypeRef,
        ns: &str,
        name: &str,
        body: &[u8],
        mode: WriteMode,
        dry_run: bool,
        manager: &str,
    ) -> Result<Reply, ApiError> {
        let obj = parse_body(body)?;
        if mode == WriteMode::Status && !t.status_subresource {
            return Err(ApiError::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            ));
        }
        let part = if mode == WriteMode::Status {
            Part::Status
        } else {
            Part::Main
        };
        let mut obj = obj;
        self.mutate(dry_run, |s| {
            if let Some(current) = s.get(t, ns, name) {
                // managedFields are the server's: a client's copy is ignored.
                obj["metadata"]["managedFields"] = current["metadata"]["managedFields"].clone();
                patch::managed_update(t, Some(current), &mut obj, manager, part);
            }
            s.update(t, ns, name, obj, mode)
        })
        .map(|o| Reply::Json(200, o))
    }

    #[allow(clippy::too_many_arguments)]
    fn patch(
        &self,
        t: &TypeRef,
        ns: &str,
        name: &str,
        content_type: &str,
        query: &BTreeMap<String, String>,
        body: &[u8],
        mode: WriteMode,
        dry_run: bool,
        manager: &str,
    ) -> Result<Reply, ApiError> {
        let kind = PatchType::from_content_type(content_type, t)?;
        if kind == PatchType::Apply && query.get("fieldManager").is_none_or(|m| m.is_empty()) {
            return Err(ApiError::new(
                422,
                "Invalid",
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            ));
        }
        if mode == WriteMode::Status && !t.status_subresource {
            return Err(not_found_path());
        }
        let part = if mode == WriteMode::Status {
            Part::Status
        } else {
            Part::Main
        };
        let force = query.get("force").is_some_and(|f| f == "true");
        let patch = match kind {
            PatchType::Json => Value::Null,
            PatchType::Apply => {
                let v: Value = serde_norway::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
                if !v.is_object() {
                    return Err(ApiError::bad_request("the apply body is not an object"));
                }
                if let Some(n) = v["metadata"]["name"].as_str()
                    && n != name
                {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({n}) does not match the name on the URL ({name})"
                    )));
                }
                v
            }
            PatchType::Merge | PatchType::Strategic => parse_body(body)?,
        };
        let mut created = false;
        let out = self.mutate(dry_run, |s| {
            let Some(current) = s.get(t, ns, name).cloned() else {
                // Server-side apply creates a missing object (not through /status).
                if kind == PatchType::Apply && mode == WriteMode::Main {
                    check_namespace(s, t, ns, name)?;
                    let mut obj = patch::apply(t, None, &patch, manager, part, force)?;
                    obj["metadata"]["name"] = json!(name);
                    created = true;
                    return s.create(t, ns, obj, WriteMode::Main);
                }
                return Err(ApiError::not_found(t, name));
            };
            let obj = match kind {
                PatchType::Apply => patch::apply(t, Some(&current), &patch, manager, part, force)?,
                other => {
                    let mut obj = current.clone();
                    match other {
                        PatchType::Json => patch::json_patch(&mut obj, body)?,
                        PatchType::Strategic => patch::strategic_merge(&mut obj, &patch)?,
                        _ => json_patch::merge(&mut obj, &patch),
                    }
                    patch::managed_update(t, Some(&current), &mut obj, manager, part);
                    obj
                }
            };
            s.update(t, ns, name, obj, mode)
        })?;
        Ok(Reply::Json(if created { 201 } else { 200 }, out))
    }

    fn delete(&self, t: &TypeRef, ns: &str, name: &str, dry_run: bool) -> Result<Reply, ApiError> {
        self.mutate(dry_run, |s| s.delete(t, ns, name))
            .map(|o| Reply::Json(200, o))
    }

    /// Deletes every object of `t` in `ns` (all namespaces when `None`) that the selectors
    /// match; answers with the list of deleted (or finalizer-held) objects.
    fn delete_collection(
        &self,
        t: &TypeRef,
        ns: Option<&str>,
        query: &BTreeMap<String, String>,
        dry_run: bool,
    ) -> Result<Reply, ApiError> {
        let sel = Selectors::parse(query)?;
        let mut deleted = Vec::new();
        self.mutate(dry_run, |s| {
            let targets: Vec<(String, String)> = s
                .list(t, ns)
                .into_iter()
                .filter(|o| sel.matches(o))
                .map(object_key)
                .collect();
            for (ns, name) in targets {
                deleted.push(s.delete(t, &ns, &name)?);
            }
            Ok(Value::Null)
        })?;
        Ok(Reply::Json(
            200,
            json!({"kind": format!("{}List", t.kind), "apiVersion": t.api_version(), "metadata": {}, "items": deleted}),
        ))
    }

    fn watch(
        &self,
        t: &TypeRef,
        ns: Option<String>,
        query: &BTreeMap<String, String>,
        meta_only: bool,
    ) -> Result<Reply, ApiError> {
        let sel = Selectors::parse(query)?;
        let timeout = match query.get("timeoutSeconds").filter(|s| !s.is_empty()) {
            Some(s) => Some(
                s.parse::<u64>()
                    .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds {s:?}")))?,
            ),
            None => None,
        };
        let from = query.get("resourceVersion").map(String::as_str).unwrap_or("");
        let mut rx = self.shared.changes.subscribe();
        rx.borrow_and_update();
        let store = self.lock();
        let mut pending = VecDeque::new();
        let last = if from.is_empty() || from == "0" {
            // No version: synthetic ADDED events for the current objects, then changes.
            for o in store.list(t, ns.as_deref()) {
                if sel.matches(o) {
                    pending.push_back(event_line("ADDED", o, meta_only));
                }
            }
            store.resource_version()
        } else {
            from.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {from:?}")))?
        };
        drop(store);
        let bookmark_every = *lock(&self.shared.bookmark_interval);
        let state = WatchState {
            sim: self.clone(),
            t: t.clone(),
            ns,
            sel,
            last,
            pending,
            rx,
            deadline: timeout.map(|s| tokio::time::Instant::now() + Duration::from_secs(s)),
            done: false,
            meta_only,
            bookmarks: query.get("allowWatchBookmarks").is_some_and(|b| b == "true"),
            bookmark_every,
            next_bookmark: tokio::time::Instant::now() + bookmark_every,
        };
        let stream = futures::stream::unfold(state, |mut st| async move {
            loop {
                if let Some(b) = st.pending.pop_front() {
                    return Some((Ok::<_, Infallible>(Frame::data(b)), st));
                }
                if st.done {
                    return None;
                }
                st.rx.borrow_and_update();
                st.poll_store();
                if !st.pending.is_empty() || st.done {
                    continue;
                }
                let next_bookmark = st.bookmarks.then_some(st.next_bookmark);
                let wake = match (st.deadline, next_bookmark) {
                    (Some(d), Some(b)) => Some(d.min(b)),
                    (d, b) => d.or(b),
                };
                let changed = match wake {
                    Some(w) => match tokio::time::timeout_at(w, st.rx.changed()).await {
                        Ok(r) => r,
                        Err(_) if st.deadline.is_none_or(|d| tokio::time::Instant::now() < d) => {
                            // A periodic BOOKMARK with the version this watch has seen.
                            st.next_bookmark = tokio::time::Instant::now() + st.bookmark_every;
                            let b = json!({"type": "BOOKMARK", "object": {
                                "kind": st.t.kind, "apiVersion": st.t.api_version(),
                                "metadata": {"resourceVersion": st.last.to_string()},
                            }});
                            st.pending.push_back(line_bytes(&b));
                            continue;
                        }
                        Err(_) => {
                            // Timed out: a final BOOKMARK (when asked for) carries the
                            // current version, so the client resumes without a relist.
                            if !st.bookmarks {
                                return None;
                            }
                            st.done = true;
                            let rv = st.sim.resource_version();
                            let b = json!({"type": "BOOKMARK", "object": {
                                "kind": st.t.kind, "apiVersion": st.t.api_version(),
                                "metadata": {"resourceVersion": rv.to_string()},
                            }});
                            st.pending.push_back(line_bytes(&b));
                            continue;
                        }
                    },
                    None => st.rx.changed().await,
                };
                if changed.is_err() {
                    return None;
                }
            }
        });
        Ok(Reply::Stream(StreamBody::new(stream).boxed_unsync()))
    }
}

struct WatchState {
    sim: Simulator,
    t: TypeRef,
    ns: Option<String>,
    sel: Selectors,
    last: u64,
    pending: VecDeque<Bytes>,
    rx: watch::Receiver<u64>,
    deadline: Option<tokio::time::Instant>,
    done: bool,
    meta_only: bool,
    bookmarks: bool,
    bookmark_every: Duration,
    next_bookmark: tokio::time::Instant,
}

impl WatchState {
    /// Queues the events after `last` that this watch selects, or a `410 Expired` error when
    /// the log no longer reaches back to `last`.
    fn poll_store(&mut self) {
        let store = self.sim.lock();
        if self.last < store.oldest_watchable() {
            let e = ApiError::new(
                410,
                "Expired",
                format!(
                    "too old resource version: {} ({})",
                    self.last,
                    store.oldest_watchable()
                ),
            );
            let line = json!({"type": "ERROR", "object": e.to_status()});
            self.pending.push_back(line_bytes(&line));
            self.done = true;
            return;
        }
        for e in store.events_since(self.last) {
            if !e.concerns(&self.t) {
                continue;
            }
            let ns = e.object["metadata"]["namespace"].as_str().unwrap_or_default();
            if self.ns.as_deref().is_some_and(|want| want != ns) {
                continue;
            }
            // As kube-apiserver does, an object entering the selection is ADDED and one
            // leaving it is DELETED.
            let now = self.sel.matches(&e.object);
            let before = e.previous.as_ref().is_some_and(|p| self.sel.matches(p));
            let kind = match e.event_type {
                EventType::Added if now => "ADDED",
                EventType::Modified if now && before => "MODIFIED",
                EventType::Modified if now => "ADDED",
                EventType::Modified if before => "DELETED",
                EventType::Deleted if now || before => "DELETED",
                _ => continue,
            };
            self.pending
                .push_back(event_line(kind, &e.object, self.meta_only));
        }
        self.last = store.resource_version();
    }
}

fn line_bytes(v: &Value) -> Bytes {
    let mut b = serde_json::to_vec(v).unwrap_or_default();
    b.push(b'\n');
    Bytes::from(b)
}

fn event_line(kind: &str, o: &Value, meta_only: bool) -> Bytes {
    let object = if meta_only { partial(o) } else { o.clone() };
    line_bytes(&json!({"type": kind, "object": object}))
}

/// The `PartialObjectMetadata` form of an object.
fn partial(o: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": o.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// The field manager of a write: `?fieldManager=`, else what kube-apiserver derives from the
/// `User-Agent` (its part before the first `/`, at most 128 characters), else `unknown`.
/// Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go`
/// (`managerOrUserAgent`).
fn field_manager(parts: &http::request::Parts, query: &BTreeMap<String, String>) -> String {
    if let Some(m) = query.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.clone();
    }
    let ua = parts
        .headers
        .get(header::USER_AGENT)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let prefix: String = ua
        .split('/')
        .next()
        .unwrap_or_default()
        .chars()
        .take(128)
        .collect();
    if prefix.is_empty() {
        "unknown".into()
    } else {
        prefix
    }
}

/// kube-apiserver's NamespaceLifecycle admission: new objects need an existing namespace
/// that is not being deleted (`404 NotFound` / `403 Forbidden`). Upstream:
/// `plugin/pkg/admission/namespace/lifecycle/admission.go`.
fn check_namespace(s: &Store, t: &TypeRef, ns: &str, name: &str) -> Result<(), ApiError> {
    if !t.namespaced {
        return Ok(());
    }
    match s.namespace_state(ns) {
        NamespaceState::Active => Ok(()),
        NamespaceState::Missing => Err(ApiError::new(
            404,
            "NotFound",
            format!("namespaces {ns:?} not found"),
        )),
        NamespaceState::Terminating => Err(ApiError::forbidden(
            t,
            name,
            &format!("unable to create new content in namespace {ns} because it is being terminated"),
        )),
    }
}

enum Reply {
    Json(u16, Value),
    Stream(ResponseBody),
}

/// The Kubernetes verb of a request, as [`Simulator::respond`] will name it (`unknown` for
/// a path that is not served).
pub(super) fn request_verb(parts: &http::request::Parts, store: &Store) -> &'static str {
    let (name, status) = match route(parts.uri.path(), store) {
        Ok(Route::Discovery(_)) => return "discovery",
        Ok(Route::Resource { name, sub, .. }) => (name, sub.is_some()),
        Err(_) => return "unknown",
    };
    let watch = parse_query(parts.uri.query().unwrap_or_default())
        .get("watch")
        .is_some_and(|w| w == "true" || w == "1");
    match (&parts.method, name.is_some()) {
        (&Method::GET, true) => "get",
        (&Method::GET, false) if watch => "watch",
        (&Method::GET, false) => "list",
        (&Method::POST, false) if !status => "create",
        (&Method::PUT, true) => "update",
        (&Method::PATCH, true) => "patch",
        (&Method::DELETE, true) if !status => "delete",
        (&Method::DELETE, false) => "deletecollection",
        _ => "unknown",
    }
}

pub(super) fn json_response(code: u16, v: &Value) -> Response<ResponseBody> {
    let bytes = Bytes::from(serde_json::to_vec(v).unwrap_or_default());
    let mut r = Response::new(Full::new(bytes).boxed_unsync());
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn method_not_allowed(m: &Method) -> ApiError {
    ApiError::new(
        405,
        "MethodNotAllowed",
        format!("the server does not allow this method on the requested resource ({m})"),
    )
}

fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(ApiError::bad_request("the request body is not a JSON object"));
    }
    Ok(v)
}

enum Route {
    Discovery(Value),
    Resource {
        t: TypeRef,
        ns: Option<String>,
        name: Option<String>,
        sub: Option<String>,
    },
}

fn not_found_path() -> ApiError {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

/// `(group, versions)` of the served API groups, in registration order.
fn group_versions(store: &Store) -> Vec<(String, Vec<String>)> {
    let mut v: Vec<(String, Vec<String>)> = Vec::new();
    for t in store.types() {
        if t.group.is_empty() {
            continue;
        }
        match v.iter_mut().find(|(g, _)| *g == t.group) {
            Some((_, vs)) if !vs.contains(&t.version) => vs.push(t.version.clone()),
            Some(_) => {}
            None => v.push((t.group.clone(), vec![t.version.clone()])),
        }
    }
    v
}

fn resource_list(store: &Store, group: &str, version: &str) -> Value {
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let mut resources = Vec::new();
    for t in store
        .types()
        .iter()
        .filter(|t| t.group == group && t.version == version)
    {
        let mut r = json!({
            "name": t.plural, "singularName": t.singular, "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        });
        if !t.short_names.is_empty() {
            r["shortNames"] = json!(t.short_names);
        }
        resources.push(r);
        if t.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced,
                "kind": t.kind, "verbs": ["get", "patch", "update"],
            }));
        }
    }
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
}

fn route(path: &str, store: &Store) -> Result<Route, ApiError> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api"] => {
            return Ok(Route::Discovery(json!({
                "kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "sim"}],
            })));
        }
        ["api", "v1"] => return Ok(Route::Discovery(resource_list(store, "", "v1"))),
        ["apis"] => {
            let groups: Vec<Value> = group_versions(store)
                .into_iter()
                .map(|(g, vs)| {
                    let gvs: Vec<Value> = vs
                        .iter()
                        .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                        .collect();
                    json!({"name": g, "preferredVersion": gvs[0].clone(), "versions": gvs})
                })
                .collect();
            return Ok(Route::Discovery(
                json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
            ));
        }
        ["apis", g, v] => {
            if store.types().iter().any(|t| t.group == *g && t.version == *v) {
                return Ok(Route::Discovery(resource_list(store, g, v)));
            }
            return Err(not_found_path());
        }
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(not_found_path()),
    };
    let namespace_sub = rest.len() == 3 && matches!(rest[2], "status" | "finalize");
    let (ns, rest) = if rest.len() >= 3 && rest[0] == "namespaces" && !namespace_sub {
        (Some(rest[1].to_owned()), &rest[2..])
    } else {
        (None, rest)
    };
    let (plural, name, sub) = match rest {
        [p] => (*p, None, None),
        [p, n] => (*p, Some((*n).to_owned()), None),
        [p, n, s] => (*p, Some((*n).to_owned()), Some((*s).to_owned())),
        _ => return Err(not_found_path()),
    };
    let t = store
        .find_type(group, version, plural)
        .ok_or_else(not_found_path)?;
    if (ns.is_some() && !t.namespaced) || name.as_deref() == Some("") {
        return Err(not_found_path());
    }
    if let Some(s) = &sub
        && !(s == "status" && t.status_subresource)
    {
        return Err(not_found_path());
    }
    Ok(Route::Resource { t, ns, name, sub })
}

/// The query string as a map (`application/x-www-form-urlencoded`: `+` is a space, `%XX` a
/// byte, a malformed escape is kept as it is); a repeated key keeps its last value.
fn parse_query(q: &str) -> BTreeMap<String, String> {
    form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

/// `(namespace, name)` of an object: the list order and the continue position.
fn object_key(o: &Value) -> (String, String) {
    let m = &o["metadata"];
    (
        m["namespace"].as_str().unwrap_or_default().to_owned(),
        m["name"].as_str().unwrap_or_default().to_owned(),
    )
}

fn encode_continue(k: &(String, String)) -> String {
    format!("{}\u{0}{}", k.0, k.1)
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn decode_continue(token: &str) -> Result<(String, String), ApiError> {
    let bad = || ApiError::bad_request(format!("invalid continue token {token:?}"));
    if !token.len().is_multiple_of(2) || !token.is_ascii() {
        return Err(bad());
    }
    let bytes = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&token[i..i + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| bad())?;
    let s = String::from_utf8(bytes).map_err(|_| bad())?;
    let (ns, name) = s.split_once('\u{0}').ok_or_else(bad)?;
    Ok((ns.to_owned(), name.to_owned()))
}

/// One label requirement.
#[derive(Clone, Debug)]
enum LabelReq {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// The label and field selectors of a list or watch.
#[derive(Clone, Debug, Default)]
struct Selectors {
    labels: Vec<LabelReq>,
    /// `(field, value, equal)`.
    fields: Vec<(String, String, bool)>,
}

/// Splits at commas outside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().map(str::trim).filter(|p| !p.is_empty()).collect()
}

fn set_values(s: &str) -> Option<Vec<String>> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_owned()).collect())
}

impl Selectors {
    fn parse(query: &BTreeMap<String, String>) -> Result<Self, ApiError> {
        let mut sel = Self::default();
        for req in split_top(query.get("labelSelector").map(String::as_str).unwrap_or("")) {
            let bad = || ApiError::bad_request(format!("unable to parse requirement: {req:?}"));
            let r = if let Some((k, v)) = req.split_once("!=") {
                LabelReq::NotEq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = req.split_once("==") {
                LabelReq::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = req.split_once('=') {
                LabelReq::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = req.split_once(" notin ") {
                LabelReq::NotIn(k.trim().into(), set_values(v).ok_or_else(bad)?)
            } else if let Some((k, v)) = req.split_once(" in ") {
                LabelReq::In(k.trim().into(), set_values(v).ok_or_else(bad)?)
            } else if let Some(k) = req.strip_prefix('!') {
                LabelReq::NotExists(k.trim().into())
            } else if req.contains(char::is_whitespace) || req.contains(['(', ')']) {
                return Err(bad());
            } else {
                LabelReq::Exists(req.into())
            };
            sel.labels.push(r);
        }
        for req in split_top(query.get("fieldSelector").map(String::as_str).unwrap_or("")) {
            let (k, v, eq) = if let Some((k, v)) = req.split_once("!=") {
                (k, v, false)
            } else if let Some((k, v)) = req.split_once("==") {
                (k, v, true)
            } else if let Some((k, v)) = req.split_once('=') {
                (k, v, true)
            } else {
                return Err(ApiError::bad_request(format!("invalid field selector: {req:?}")));
            };
            let k = k.trim();
            if !matches!(k, "metadata.name" | "metadata.namespace") {
                return Err(ApiError::bad_request(format!("field label not supported: {k}")));
            }
            sel.fields.push((k.to_owned(), v.trim().to_owned(), eq));
        }
        Ok(sel)
    }

    fn matches(&self, o: &Value) -> bool {
        let labels = o["metadata"]["labels"].as_object();
        let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        let labels_ok = self.labels.iter().all(|r| match r {
            LabelReq::Eq(k, v) => label(k) == Some(v.as_str()),
            LabelReq::NotEq(k, v) => label(k) != Some(v.as_str()),
            LabelReq::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            LabelReq::NotIn(k, vs) => label(k).is_none_or(|l| vs.iter().all(|v| v != l)),
            LabelReq::Exists(k) => label(k).is_some(),
            LabelReq::NotExists(k) => label(k).is_none(),
        });
        labels_ok
            && self.fields.iter().all(|(k, v, eq)| {
                let field = k.strip_prefix("metadata.").unwrap_or(k);
                let actual = o["metadata"][field].as_str().unwrap_or_default();
                (actual == v) == *eq
            })
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
            // Injected faults (latency, errors, forced 410 / 409) come first; a watch that
            // is served may be cut short by an injected drop.
            let verb = request_verb(&parts, &sim.lock());
            let (verb, response, fault) = match sim.hooks().before(&sim, &parts, verb).await {
                Some((response, fault)) => (verb, response, Some(fault)),
                None => {
                    let (verb, response) = sim.respond(&parts, &bytes);
                    let (response, fault) = sim.hooks().after(verb, response);
                    (verb, response, fault)
                }
            };
            sim.record(&parts, verb, response.status().as_u16(), start, fault);
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_and_continue_round_trip() -> Result<(), ApiError> {
        let q = parse_query("labelSelector=app%3Dweb%2Ctier+in+(a%2Cb)&limit=2");
        assert_eq!(
            q.get("labelSelector").map(String::as_str),
            Some("app=web,tier in (a,b)")
        );
        let k = ("ns".to_owned(), "name".to_owned());
        assert_eq!(decode_continue(&encode_continue(&k))?, k);
        assert!(decode_continue("zz").is_err());
        assert_eq!(parse_query("k=%").get("k").map(String::as_str), Some("%"));
        assert_eq!(parse_query("k=a%2").get("k").map(String::as_str), Some("a%2"));
        Ok(())
    }

    #[test]
    fn merge_patch_rfc7386() {
        let mut t = json!({"a": 1, "b": {"c": 2, "d": 3}});
        json_patch::merge(&mut t, &json!({"a": null, "b": {"c": 4}, "e": [1]}));
        assert_eq!(t, json!({"b": {"c": 4, "d": 3}, "e": [1]}));
    }

    #[test]
    fn routes() {
        let s = Store::default();
        assert!(matches!(
            route("/api/v1/namespaces/ns/configmaps/x", &s),
            Ok(Route::Resource {
                ns: Some(_),
                name: Some(_),
                sub: None,
                ..
            })
        ));
        assert!(matches!(
            route("/api/v1/namespaces/ns/status", &s),
            Ok(Route::Resource {
                ns: None,
                sub: Some(_),
                ..
            })
        ));
        assert!(matches!(
            route("/apis/config.openshift.io/v1/clusterversions/version/status", &s),
            Ok(Route::Resource { sub: Some(_), .. })
        ));
        assert!(route("/apis/config.openshift.io/v1/namespaces/x/clusterversions", &s).is_err());
        assert!(route("/api/v1/configmaps/x/status", &s).is_err());
        assert!(route("/apis/nope/v1", &s).is_err());
    }
}
