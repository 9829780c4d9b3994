//! The simulator's object store: JSON objects keyed by resource type, namespace and name, with
//! kube-apiserver semantics for `resourceVersion`, `uid`, `creationTimestamp`,
//! `metadata.generation`, finalizers, optimistic concurrency and an event log for watches.
//!
//! The served kinds live in a registry inside the store: the [`builtin_types`] plus the kinds
//! that stored CustomResourceDefinitions define. Lifecycles the real control plane runs in
//! controllers happen here synchronously, at the write that triggers them:
//! - a CustomResourceDefinition is registered and gets `Established` / `NamesAccepted`
//!   conditions (upstream: apiextensions-apiserver `pkg/controller/establish`,
//!   `pkg/controller/status`); deleting it removes its objects and its kinds
//!   (`pkg/controller/finalizer`, finalizer `customresourcecleanup.apiextensions.k8s.io`);
//! - a Namespace gets `spec.finalizers: [kubernetes]` and `status.phase: Active`; deleting it
//!   marks it `Terminating`, deletes its objects, and removes it once they are gone
//!   (kubernetes `pkg/controller/namespace`).

mod builtin_schemas;
mod crd;
mod defaults;
mod error;
mod namespace;
mod rules;
mod schema;
mod stored;
#[cfg(test)]
mod tests;
mod types;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value, json};

pub use builtin_schemas::crd_of as builtin_crd;
use crd::crd_types;
pub use error::{ApiError, Cause};
pub use stored::Stored;
pub use types::{CRD_CLEANUP_FINALIZER, ResourceType, TypeRef, builtin_types};

/// Kind of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Object created.
    Added,
    /// Object changed (including a deletion that waits on finalizers).
    Modified,
    /// Object removed.
    Deleted,
}

impl EventType {
    /// The wire name (`ADDED`, `MODIFIED`, `DELETED`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One entry of the event log.
#[derive(Clone, Debug)]
pub struct Event {
    /// The resourceVersion the change produced.
    pub rv: u64,
    /// What happened.
    pub event_type: EventType,
    /// The kind of the object.
    pub resource: TypeRef,
    /// The object after the change (before removal, for `Deleted`, with the new rv): the
    /// same allocation the store holds, not a copy.
    pub object: Arc<Stored>,
    /// The object before the change (`None` for `Added`): lets a watch with a selector turn
    /// an object entering or leaving the selection into `ADDED` or `DELETED`. The allocation
    /// the store held (and the previous event's `object`), so it costs no memory of its own.
    pub previous: Option<Arc<Stored>>,
}

impl Event {
    /// Whether the event concerns objects of `t` (any served version of its resource).
    pub fn concerns(&self, t: &ResourceType) -> bool {
        self.resource.group == t.group && self.resource.plural == t.plural
    }
}

/// Which part of an object a write replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// The main resource: for kinds with a status subresource, `status` is kept.
    Main,
    /// The `/status` subresource: only `status` changes.
    Status,
    /// Everything, status included (loading a snapshot).
    All,
}

/// Whether a namespace can take new objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamespaceState {
    /// No such namespace.
    Missing,
    /// Present and active.
    Active,
    /// Being deleted (`status.phase: Terminating`).
    Terminating,
}

/// Objects of one kind by (namespace, name), in their compact form ([`Stored`]). Each version
/// of an object is one immutable `Arc`: the store, the event log (`object` of its event,
/// `previous` of the next one) and a dry run's copy of the store share it, so the window of
/// watch events costs no copies of current objects.
type Objects = BTreeMap<(String, String), Arc<Stored>>;

/// The in-memory object store.
#[derive(Clone, Debug)]
pub struct Store {
    types: Vec<TypeRef>,
    /// Storage key (`group/plural`) -> (namespace, name) -> object.
    objects: BTreeMap<String, Objects>,
    rv: u64,
    uid_counter: u64,
    events: VecDeque<Event>,
    capacity: usize,
    /// Watches from a resourceVersion below this are `410 Expired`.
    oldest_watchable: u64,
    /// How long a created CRD waits to be established.
    establish_delay: std::time::Duration,
    /// Created CRDs not yet established, with when they will be.
    pending_crds: BTreeMap<String, std::time::Instant>,
    /// The clock of the times the store writes (`creationTimestamp`, `deletionTimestamp`,
    /// `managedFields` times, CRD conditions): the wall clock, or the demo's simulated one.
    clock: crate::clock::Clock,
}

impl Default for Store {
    fn default() -> Self {
        Self::with_event_capacity(10_000)
    }
}

/// What a `generation` bump tracks: everything but `metadata` (and `status`, for kinds with a
/// status subresource).
fn spec_part(t: &ResourceType, o: &Value) -> Map<String, Value> {
    let mut m = o.as_object().cloned().unwrap_or_default();
    for k in ["metadata", "apiVersion", "kind"] {
        m.remove(k);
    }
    if t.status_subresource {
        m.remove("status");
    }
    m
}

/// Whether `name` is a lowercase RFC 1123 subdomain (what kube-apiserver requires of most
/// object names).
pub fn is_dns_subdomain(name: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !name.is_empty()
        && name.len() <= 253
        && name.starts_with(alnum)
        && name.ends_with(alnum)
        && name.chars().all(|c| alnum(c) || c == '-' || c == '.')
}

/// Why `name` is not a valid path segment name (kube-apiserver `path.ValidatePathSegmentName`,
/// used for RBAC object names), or `None` when it is.
pub fn path_segment_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("name or generateName is required")
    } else if name == "." || name == ".." {
        Some("may not be '.' or '..'")
    } else if name.contains('/') {
        Some("may not contain '/'")
    } else if name.contains('%') {
        Some("may not contain '%'")
    } else {
        None
    }
}

fn meta_str<'a>(o: &'a Value, field: &str) -> Option<&'a str> {
    o.get("metadata")?.get(field)?.as_str()
}

fn has_finalizers(o: &Value) -> bool {
    o["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty())
}

/// The object's `metadata` map, created if missing. Errors when `o` is not an object.
fn meta_mut<'a>(t: &ResourceType, o: &'a mut Value) -> Result<&'a mut Map<String, Value>, ApiError> {
    let obj = o
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request(format!("{} body is not a JSON object", t.kind)))?;
    let m = obj.entry("metadata").or_insert_with(|| json!({}));
    if !m.is_object() {
        *m = json!({});
    }
    m.as_object_mut()
        .ok_or_else(|| ApiError::bad_request("metadata is not an object"))
}

impl Store {
    /// An empty store serving the [`builtin_types`], keeping at most `capacity` events for
    /// watches.
    pub fn with_event_capacity(capacity: usize) -> Self {
        Self {
            types: builtin_types(),
            objects: BTreeMap::new(),
            rv: 0,
            uid_counter: 0,
            events: VecDeque::new(),
            capacity: capacity.max(1),
            oldest_watchable: 0,
            establish_delay: std::time::Duration::ZERO,
            pending_crds: BTreeMap::new(),
            clock: crate::clock::Clock::wall(),
        }
    }

    /// Takes the times it writes from `clock` from now on (the demo's simulated clock).
    pub fn set_clock(&mut self, clock: crate::clock::Clock) {
        self.clock = clock;
    }

    /// Now on the store's clock, as kube-apiserver writes a `metav1.Time` (RFC 3339, seconds).
    pub fn now(&self) -> String {
        self.clock
            .now()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }

    /// The store's clock.
    pub fn clock(&self) -> &crate::clock::Clock {
        &self.clock
    }

    /// Keeps at most `capacity` events from now on (dropping the oldest beyond it: watches
    /// from their versions get `410 Expired`, as after an etcd compaction).
    pub fn set_event_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.max(1);
        while self.events.len() > self.capacity {
            if let Some(e) = self.events.pop_front() {
                self.oldest_watchable = e.rv;
            }
        }
    }

    /// Every served kind: built-in first, then CRD-defined ones in registration order.
    pub fn types(&self) -> &[TypeRef] {
        &self.types
    }

    /// The served kind with this group, version and plural.
    pub fn find_type(&self, group: &str, version: &str, plural: &str) -> Option<TypeRef> {
        self.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
            .cloned()
    }

    /// The served kind with this `apiVersion` and `kind`.
    pub fn find_kind(&self, api_version: &str, kind: &str) -> Option<TypeRef> {
        self.types
            .iter()
            .find(|t| t.kind == kind && t.api_version() == api_version)
            .cloned()
    }

    /// The first served version of `group`'s resource `plural`.
    pub fn find_plural(&self, group: &str, plural: &str) -> Option<TypeRef> {
        self.types
            .iter()
            .find(|t| t.group == group && t.plural == plural)
            .cloned()
    }

    /// The current (latest) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    /// The oldest resourceVersion a watch may start from.
    pub fn oldest_watchable(&self) -> u64 {
        self.oldest_watchable
    }

    /// Drops the whole event log: watches from any earlier resourceVersion get `410 Expired`.
    pub fn compact(&mut self) {
        self.events.clear();
        self.oldest_watchable = self.rv;
    }

    /// Events after `rv`, oldest first.
    pub fn events_since(&self, rv: u64) -> impl Iterator<Item = &Event> {
        let start = self.events.partition_point(|e| e.rv <= rv);
        self.events.range(start..)
    }

    fn next_uid(&mut self) -> String {
        self.uid_counter += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.uid_counter)
    }

    fn record(
        &mut self,
        t: &TypeRef,
        event_type: EventType,
        object: Arc<Stored>,
        previous: Option<Arc<Stored>>,
    ) {
        self.events.push_back(Event {
            rv: self.rv,
            event_type,
            resource: t.clone(),
            object,
            previous,
        });
        while self.events.len() > self.capacity {
            if let Some(e) = self.events.pop_front() {
                self.oldest_watchable = e.rv;
            }
        }
    }

    /// The object, if present (parsed from its stored text: a copy).
    pub fn get(&self, t: &ResourceType, ns: &str, name: &str) -> Option<Value> {
        self.get_stored(t, ns, name).map(|o| o.value())
    }

    /// Whether the object is present.
    pub fn contains(&self, t: &ResourceType, ns: &str, name: &str) -> bool {
        self.get_stored(t, ns, name).is_some()
    }

    /// The object as stored (its JSON text, name, namespace and labels), if present.
    pub fn get_stored(&self, t: &ResourceType, ns: &str, name: &str) -> Option<&Arc<Stored>> {
        self.objects
            .get(&t.storage_key())?
            .get(&(ns.to_owned(), name.to_owned()))
    }

    /// Objects of `t`, in `ns` (or all namespaces when `None`), ordered by namespace and
    /// name, as stored (no parsing).
    pub fn list_stored(&self, t: &ResourceType, ns: Option<&str>) -> Vec<&Arc<Stored>> {
        let Some(objs) = self.objects.get(&t.storage_key()) else {
            return Vec::new();
        };
        match ns {
            None => objs.values().collect(),
            Some(ns) => objs
                .range((ns.to_owned(), String::new())..)
                .take_while(|((n, _), _)| n == ns)
                .map(|(_, o)| o)
                .collect(),
        }
    }

    /// Objects of `t`, in `ns` (or all namespaces when `None`), ordered by namespace and name
    /// (parsed: copies).
    pub fn list(&self, t: &ResourceType, ns: Option<&str>) -> Vec<Value> {
        self.list_stored(t, ns).into_iter().map(|o| o.value()).collect()
    }

    fn insert_object(
        &mut self,
        t: &ResourceType,
        ns: &str,
        name: &str,
        obj: Arc<Stored>,
    ) -> Option<Arc<Stored>> {
        self.objects
            .entry(t.storage_key())
            .or_default()
            .insert((ns.to_owned(), name.to_owned()), obj)
    }

    fn remove_object(&mut self, t: &ResourceType, ns: &str, name: &str) -> Option<Arc<Stored>> {
        let objs = self.objects.get_mut(&t.storage_key())?;
        let out = objs.remove(&(ns.to_owned(), name.to_owned()));
        if objs.is_empty() {
            self.objects.remove(&t.storage_key());
        }
        out
    }

    /// Creates an object. `ns` is `""` for cluster-scoped kinds. The name comes from
    /// `metadata.name`, else `metadata.generateName` plus a suffix. With [`WriteMode::Main`] a
    /// kind with a status subresource starts with no `status`. Namespaces get
    /// `spec.finalizers: [kubernetes]` and phase `Active`; CustomResourceDefinitions are
    /// registered and established.
    ///
    /// # Errors
    /// `409 AlreadyExists`, or `422 Invalid` when there is no name or a CRD is malformed.
    pub fn create(
        &mut self,
        t: &TypeRef,
        ns: &str,
        mut obj: Value,
        mode: WriteMode,
    ) -> Result<Value, ApiError> {
        let uid = self.next_uid();
        let meta = meta_mut(t, &mut obj)?;
        let mut name = meta.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
        if name.is_empty() {
            let prefix = meta
                .get("generateName")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if prefix.is_empty() {
                return Err(ApiError::invalid(
                    t,
                    "",
                    "metadata.name: Required value: name or generateName is required",
                ));
            }
            // Same alphabet as kube-apiserver's random suffix; derived from the uid counter.
            const ALPHA: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
            let mut n = self.uid_counter.wrapping_mul(2_654_435_761);
            let mut suffix = String::new();
            for _ in 0..5 {
                suffix.push(char::from(ALPHA[(n % ALPHA.len() as u64) as usize]));
                n /= ALPHA.len() as u64;
            }
            name = format!("{prefix}{suffix}");
        }
        if t.group == "rbac.authorization.k8s.io" {
            // RBAC objects only need to be a valid path segment (`system:openshift:...` is fine):
            // kube-apiserver pkg/apis/rbac/validation uses path.ValidatePathSegmentName.
            if let Some(why) = path_segment_problem(&name) {
                return Err(ApiError::invalid(
                    t,
                    &name,
                    &format!("metadata.name: Invalid value: {name:?}: {why}"),
                ));
            }
        } else if !is_dns_subdomain(&name) {
            return Err(ApiError::invalid(
                t,
                &name,
                &format!(
                    "metadata.name: Invalid value: {name:?}: a lowercase RFC 1123 subdomain must \
                     consist of lower case alphanumeric characters, '-' or '.', and must start and \
                     end with an alphanumeric character"
                ),
            ));
        }
        if self.contains(t, ns, &name) {
            return Err(ApiError::conflict(
                t,
                "AlreadyExists",
                &name,
                format!("{} {name:?} already exists", t.qualified()),
            ));
        }
        meta.insert("name".into(), json!(name));
        if t.is_crd() {
            crd_types(&obj).map_err(|d| ApiError::invalid(t, &name, &d))?;
        }
        if mode == WriteMode::Main
            && t.status_subresource
            && let Some(o) = obj.as_object_mut()
        {
            o.remove("status");
        }
        if mode != WriteMode::All {
            self.admit_custom(t, &name, &mut obj, None, schema::Root::Object)?;
            defaults::apply(t, &mut obj, &uid, true);
            if t.is_crd() {
                obj["status"] = crd::initial_crd_status(&obj);
            }
        }
        let now = self.now();
        let meta = meta_mut(t, &mut obj)?;
        self.rv += 1;
        if t.namespaced {
            meta.insert("namespace".into(), json!(ns));
        } else {
            meta.remove("namespace");
        }
        if mode != WriteMode::All || !meta.contains_key("uid") {
            meta.insert("uid".into(), json!(uid));
        }
        if mode != WriteMode::All || !meta.contains_key("creationTimestamp") {
            meta.insert("creationTimestamp".into(), json!(now));
        }
        meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
        if !t.generation {
            meta.remove("generation");
        } else if mode != WriteMode::All || !meta.get("generation").is_some_and(Value::is_i64) {
            meta.insert("generation".into(), json!(1));
        }
        meta.remove("deletionTimestamp");
        if t.is_crd() {
            let f = meta.entry("finalizers").or_insert_with(|| json!([]));
            if let Some(f) = f.as_array_mut()
                && !f.iter().any(|x| x == CRD_CLEANUP_FINALIZER)
            {
                f.push(json!(CRD_CLEANUP_FINALIZER));
            }
        }
        if let Some(o) = obj.as_object_mut() {
            o.insert("apiVersion".into(), json!(t.api_version()));
            o.insert("kind".into(), json!(t.kind));
        }
        if t.is_namespace() {
            if !obj["spec"]["finalizers"].is_array() {
                obj["spec"]["finalizers"] = json!(["kubernetes"]);
            }
            if !obj["status"]["phase"].is_string() {
                obj["status"]["phase"] = json!("Active");
            }
        }
        let shared = Arc::new(Stored::new(&obj));
        self.insert_object(t, ns, &name, shared.clone());
        self.record(t, EventType::Added, shared, None);
        if t.is_crd() {
            if mode == WriteMode::All || self.establish_delay.is_zero() {
                self.sync_crd(t, &name)?;
            } else {
                let at = std::time::Instant::now() + self.establish_delay;
                self.pending_crds.insert(name.clone(), at);
            }
        }
        Ok(obj)
    }

    /// Replaces an object (or, with [`WriteMode::Status`], its `status`). A non-empty
    /// `metadata.resourceVersion` in `obj` must match the stored one. `generation` is bumped
    /// when anything but `metadata` (and `status`, for kinds with a status subresource)
    /// changes. Removing the last finalizer of an object being deleted removes it.
    ///
    /// # Errors
    /// `404 NotFound`, `409 Conflict` on a stale resourceVersion, `400 BadRequest` when the
    /// body names another object, `422 Invalid` for a malformed CRD.
    pub fn update(
        &mut self,
        t: &TypeRef,
        ns: &str,
        name: &str,
        obj: Value,
        mode: WriteMode,
    ) -> Result<Value, ApiError> {
        if t.is_crd() && mode != WriteMode::Status {
            let mut check = obj.clone();
            check["metadata"]["name"] = json!(name);
            crd_types(&check).map_err(|d| ApiError::invalid(t, name, &d))?;
        }
        let out = self.write(t, ns, name, obj, mode)?;
        if t.is_crd() && self.contains(t, ns, name) && !self.pending_crds.contains_key(name) {
            self.sync_crd(t, name)?;
        }
        Ok(out)
    }

    fn write(
        &mut self,
        t: &TypeRef,
        ns: &str,
        name: &str,
        mut obj: Value,
        mode: WriteMode,
    ) -> Result<Value, ApiError> {
        let stored = self
            .get_stored(t, ns, name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(t, name))?;
        let old = stored.value();
        let meta = meta_mut(t, &mut obj)?;
        let sent_managed = meta.get("managedFields").cloned();
        if let Some(n) = meta.get("name").and_then(Value::as_str)
            && !n.is_empty()
            && n != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        if let Some(rv) = meta.get("resourceVersion").and_then(Value::as_str)
            && !rv.is_empty()
            && Some(rv) != meta_str(&old, "resourceVersion")
        {
            return Err(ApiError::conflict(
                t,
                "Conflict",
                name,
                format!(
                    "Operation cannot be fulfilled on {} {name:?}: the object has been modified; \
                     please apply your changes to the latest version and try again",
                    t.qualified()
                ),
            ));
        }
        let mut new = match mode {
            WriteMode::Status => {
                let mut n = old.clone();
                if let (Some(o), status) = (n.as_object_mut(), obj.get("status").cloned()) {
                    match status {
                        Some(s) => o.insert("status".into(), s),
                        None => o.remove("status"),
                    };
                }
                n
            }
            WriteMode::Main | WriteMode::All => {
                let mut n = obj;
                if let Some(o) = n.as_object_mut() {
                    o.insert("apiVersion".into(), json!(t.api_version()));
                    o.insert("kind".into(), json!(t.kind));
                    if mode == WriteMode::Main && t.status_subresource {
                        match old.get("status") {
                            Some(s) => o.insert("status".into(), s.clone()),
                            None => o.remove("status"),
                        };
                    }
                }
                n
            }
        };
        if mode != WriteMode::All {
            let root = if mode == WriteMode::Status {
                schema::Root::Status
            } else {
                schema::Root::Object
            };
            self.admit_custom(t, name, &mut new, Some(&old), root)?;
        }
        if mode == WriteMode::Main {
            defaults::keep_allocated(t, &old, &mut new);
            let uid = meta_str(&old, "uid").unwrap_or_default().to_owned();
            defaults::apply(t, &mut new, &uid, false);
            defaults::track_template(t, &old, &mut new);
        }
        // System-owned metadata is kept from the stored object.
        let old_meta = old
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let generation = old_meta.get("generation").and_then(Value::as_i64).unwrap_or(1);
        let bump = spec_part(t, &old) != spec_part(t, &new);
        if t.is_namespace() && mode != WriteMode::All {
            // spec.finalizers only changes through /finalize.
            new["spec"]["finalizers"] = old["spec"]["finalizers"].clone();
        }
        let meta = meta_mut(t, &mut new)?;
        for f in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
        ] {
            match old_meta.get(f) {
                Some(v) => meta.insert(f.into(), v.clone()),
                None => meta.remove(f),
            };
        }
        if mode == WriteMode::Status {
            meta.clone_from(&old_meta);
            // The field managers of the status write, as the server computed them.
            match &sent_managed {
                Some(m) => meta.insert("managedFields".into(), m.clone()),
                None => meta.remove("managedFields"),
            };
        }
        if t.generation {
            meta.insert(
                "generation".into(),
                json!(if bump { generation + 1 } else { generation }),
            );
        } else {
            meta.remove("generation");
        }
        meta.insert(
            "resourceVersion".into(),
            old_meta.get("resourceVersion").cloned().unwrap_or(json!("")),
        );
        if new == old {
            return Ok(old);
        }
        self.rv += 1;
        let meta = meta_mut(t, &mut new)?;
        meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
        let held = has_finalizers(&new)
            || (t.is_namespace()
                && new["spec"]["finalizers"]
                    .as_array()
                    .is_some_and(|f| !f.is_empty()));
        let shared = Arc::new(Stored::new(&new));
        if new["metadata"]["deletionTimestamp"].is_string() && !held {
            self.remove_object(t, ns, name);
            self.record(t, EventType::Deleted, shared, Some(stored));
            self.after_removal(t, ns);
            return Ok(new);
        }
        self.insert_object(t, ns, name, shared.clone());
        self.record(t, EventType::Modified, shared, Some(stored));
        Ok(new)
    }

    /// Deletes an object: removed at once, or, when it has finalizers, marked with
    /// `deletionTimestamp` until the last finalizer is removed. Returns the object as of the
    /// deletion. A namespace goes `Terminating`, its objects are deleted and it goes away
    /// once they are; a CustomResourceDefinition takes its objects and kinds with it.
    ///
    /// # Errors
    /// `404 NotFound`.
    pub fn delete(&mut self, t: &TypeRef, ns: &str, name: &str) -> Result<Value, ApiError> {
        let mut obj = self
            .get(t, ns, name)
            .ok_or_else(|| ApiError::not_found(t, name))?;
        let held = has_finalizers(&obj) || t.is_namespace();
        if held {
            if obj["metadata"]["deletionTimestamp"].is_string() {
                return Ok(obj);
            }
            self.rv += 1;
            let now = self.now();
            let meta = meta_mut(t, &mut obj)?;
            meta.insert("deletionTimestamp".into(), json!(now));
            meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
            if t.is_namespace() {
                obj["status"]["phase"] = json!("Terminating");
            }
            let shared = Arc::new(Stored::new(&obj));
            let previous = self.insert_object(t, ns, name, shared.clone());
            self.record(t, EventType::Modified, shared, previous);
            if t.is_namespace() {
                for (ct, cname) in self.namespace_contents(name) {
                    self.delete(&ct, name, &cname)?;
                }
                self.finalize_namespace(name)?;
            } else if t.is_crd() {
                self.cleanup_crd(t, name)?;
            }
            return Ok(obj);
        }
        self.rv += 1;
        meta_mut(t, &mut obj)?.insert("resourceVersion".into(), json!(self.rv.to_string()));
        let previous = self.remove_object(t, ns, name);
        self.record(t, EventType::Deleted, Arc::new(Stored::new(&obj)), previous);
        self.after_removal(t, ns);
        Ok(obj)
    }
}
