//! The simulator's object store: JSON objects keyed by resource type, namespace and name, with
//! kube-apiserver semantics for `resourceVersion`, `uid`, `creationTimestamp`,
//! `metadata.generation`, finalizers, optimistic concurrency and an event log for watches.

use std::collections::{BTreeMap, VecDeque};

use serde_json::{Map, Value, json};

/// A kind the simulator serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceType {
    /// API group (`""` for the core group).
    pub group: &'static str,
    /// API version, e.g. `v1`.
    pub version: &'static str,
    /// Plural resource name used in URLs, e.g. `configmaps`.
    pub plural: &'static str,
    /// Kind, e.g. `ConfigMap`.
    pub kind: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Whether the kind has a `/status` subresource.
    pub status_subresource: bool,
}

impl ResourceType {
    /// `apiVersion` of objects of this kind (`v1` or `group/version`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The qualified resource name used in error messages (`configmaps`,
    /// `clusterversions.config.openshift.io`).
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_owned()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

const fn rt(
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
    status_subresource: bool,
) -> ResourceType {
    ResourceType {
        group,
        version,
        plural,
        kind,
        namespaced,
        status_subresource,
    }
}

/// The kinds the simulator serves.
pub const BUILTIN: &[ResourceType] = &[
    rt("", "v1", "namespaces", "Namespace", false, true),
    rt("", "v1", "configmaps", "ConfigMap", true, false),
    rt("", "v1", "secrets", "Secret", true, false),
    rt("", "v1", "nodes", "Node", false, true),
    rt("", "v1", "pods", "Pod", true, true),
    rt("apps", "v1", "deployments", "Deployment", true, true),
    rt("coordination.k8s.io", "v1", "leases", "Lease", true, false),
    rt(
        "config.openshift.io",
        "v1",
        "clusterversions",
        "ClusterVersion",
        false,
        true,
    ),
    rt(
        "config.openshift.io",
        "v1",
        "clusteroperators",
        "ClusterOperator",
        false,
        true,
    ),
    rt(
        "machineconfiguration.openshift.io",
        "v1",
        "machineconfigpools",
        "MachineConfigPool",
        false,
        true,
    ),
    rt(
        "machineconfiguration.openshift.io",
        "v1",
        "machineconfigs",
        "MachineConfig",
        false,
        false,
    ),
];

/// The served kind with this group, version and plural.
pub fn find_type(group: &str, version: &str, plural: &str) -> Option<&'static ResourceType> {
    BUILTIN
        .iter()
        .find(|t| t.group == group && t.version == version && t.plural == plural)
}

/// The served kind with this `apiVersion` and `kind`.
pub fn find_kind(api_version: &str, kind: &str) -> Option<&'static ResourceType> {
    BUILTIN
        .iter()
        .find(|t| t.api_version() == api_version && t.kind == kind)
}

/// An API error, rendered as a Kubernetes `Status` body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// kube-apiserver reason (`NotFound`, `AlreadyExists`, `Conflict`, ...).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
}

impl ApiError {
    /// A new error.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
        }
    }

    /// `404 NotFound` for `name` of `t`.
    pub fn not_found(t: &ResourceType, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} {name:?} not found", t.qualified()))
    }

    /// `400 BadRequest`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// `422 Invalid` for `name` of `t`.
    pub fn invalid(t: &ResourceType, name: &str, detail: &str) -> Self {
        Self::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {detail}", t.kind),
        )
    }

    /// The `Status` object kube-apiserver returns.
    pub fn to_status(&self) -> Value {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        })
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

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
    pub resource: &'static ResourceType,
    /// The object after the change (before removal, for `Deleted`, with the new rv).
    pub object: Value,
    /// The object before the change (`None` for `Added`): lets a watch with a selector turn
    /// an object entering or leaving the selection into `ADDED` or `DELETED`.
    pub previous: Option<Value>,
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

type Key = (&'static str, &'static str, &'static str, String, String);

/// The in-memory object store.
#[derive(Clone, Debug)]
pub struct Store {
    objects: BTreeMap<Key, Value>,
    rv: u64,
    uid_counter: u64,
    events: VecDeque<Event>,
    capacity: usize,
    /// Watches from a resourceVersion below this are `410 Expired`.
    oldest_watchable: u64,
}

impl Default for Store {
    fn default() -> Self {
        Self::with_event_capacity(10_000)
    }
}

fn key(t: &'static ResourceType, ns: &str, name: &str) -> Key {
    (t.group, t.version, t.plural, ns.to_owned(), name.to_owned())
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Everything of an object but `metadata` and `status`: what a `generation` bump tracks.
fn spec_part(o: &Value) -> Map<String, Value> {
    let mut m = o.as_object().cloned().unwrap_or_default();
    for k in ["metadata", "status", "apiVersion", "kind"] {
        m.remove(k);
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

fn meta_str<'a>(o: &'a Value, field: &str) -> Option<&'a str> {
    o.get("metadata")?.get(field)?.as_str()
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
    /// An empty store keeping at most `capacity` events for watches.
    pub fn with_event_capacity(capacity: usize) -> Self {
        Self {
            objects: BTreeMap::new(),
            rv: 0,
            uid_counter: 0,
            events: VecDeque::new(),
            capacity: capacity.max(1),
            oldest_watchable: 0,
        }
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
        self.events.iter().filter(move |e| e.rv > rv)
    }

    fn next_uid(&mut self) -> String {
        self.uid_counter += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.uid_counter)
    }

    fn record(
        &mut self,
        t: &'static ResourceType,
        event_type: EventType,
        object: Value,
        previous: Option<Value>,
    ) {
        self.events.push_back(Event {
            rv: self.rv,
            event_type,
            resource: t,
            object,
            previous,
        });
        while self.events.len() > self.capacity {
            if let Some(e) = self.events.pop_front() {
                self.oldest_watchable = e.rv;
            }
        }
    }

    /// The object, if present.
    pub fn get(&self, t: &'static ResourceType, ns: &str, name: &str) -> Option<&Value> {
        self.objects.get(&key(t, ns, name))
    }

    /// Objects of `t`, in `ns` (or all namespaces when `None`), ordered by namespace and name.
    pub fn list(&self, t: &'static ResourceType, ns: Option<&str>) -> Vec<&Value> {
        self.objects
            .iter()
            .filter(|((g, v, p, n, _), _)| {
                *g == t.group && *v == t.version && *p == t.plural && ns.is_none_or(|ns| ns == n)
            })
            .map(|(_, o)| o)
            .collect()
    }

    /// Creates an object. `ns` is `""` for cluster-scoped kinds. The name comes from
    /// `metadata.name`, else `metadata.generateName` plus a suffix. With [`WriteMode::Main`] a
    /// kind with a status subresource starts with no `status`.
    ///
    /// # Errors
    /// `409 AlreadyExists`, or `422 Invalid` when there is no name.
    pub fn create(
        &mut self,
        t: &'static ResourceType,
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
        if !is_dns_subdomain(&name) {
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
        if self.objects.contains_key(&key(t, ns, &name)) {
            return Err(ApiError::new(
                409,
                "AlreadyExists",
                format!("{} {name:?} already exists", t.qualified()),
            ));
        }
        self.rv += 1;
        meta.insert("name".into(), json!(name));
        if t.namespaced {
            meta.insert("namespace".into(), json!(ns));
        } else {
            meta.remove("namespace");
        }
        if mode != WriteMode::All || !meta.contains_key("uid") {
            meta.insert("uid".into(), json!(uid));
        }
        if mode != WriteMode::All || !meta.contains_key("creationTimestamp") {
            meta.insert("creationTimestamp".into(), json!(now()));
        }
        meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
        meta.insert("generation".into(), json!(1));
        meta.remove("deletionTimestamp");
        if let Some(o) = obj.as_object_mut() {
            o.insert("apiVersion".into(), json!(t.api_version()));
            o.insert("kind".into(), json!(t.kind));
            if mode == WriteMode::Main && t.status_subresource {
                o.remove("status");
            }
        }
        self.objects.insert(key(t, ns, &name), obj.clone());
        self.record(t, EventType::Added, obj.clone(), None);
        Ok(obj)
    }

    /// Replaces an object (or, with [`WriteMode::Status`], its `status`). A non-empty
    /// `metadata.resourceVersion` in `obj` must match the stored one. `generation` is bumped
    /// when anything but `metadata` and `status` changes. Removing the last finalizer of an
    /// object being deleted removes it.
    ///
    /// # Errors
    /// `404 NotFound`, `409 Conflict` on a stale resourceVersion, `400 BadRequest` when the
    /// body names another object.
    pub fn update(
        &mut self,
        t: &'static ResourceType,
        ns: &str,
        name: &str,
        mut obj: Value,
        mode: WriteMode,
    ) -> Result<Value, ApiError> {
        let k = key(t, ns, name);
        let old = self
            .objects
            .get(&k)
            .cloned()
            .ok_or_else(|| ApiError::not_found(t, name))?;
        let meta = meta_mut(t, &mut obj)?;
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
            return Err(ApiError::new(
                409,
                "Conflict",
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
        // System-owned metadata is kept from the stored object.
        let old_meta = old
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let generation = old_meta.get("generation").and_then(Value::as_i64).unwrap_or(1);
        let bump = spec_part(&old) != spec_part(&new);
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
        meta.insert(
            "generation".into(),
            json!(if bump { generation + 1 } else { generation }),
        );
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
        let finalizers_left = meta
            .get("finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if meta.contains_key("deletionTimestamp") && !finalizers_left {
            self.objects.remove(&k);
            self.record(t, EventType::Deleted, new.clone(), Some(old));
            return Ok(new);
        }
        self.objects.insert(k, new.clone());
        self.record(t, EventType::Modified, new.clone(), Some(old));
        Ok(new)
    }

    /// Deletes an object: removed at once, or, when it has finalizers, marked with
    /// `deletionTimestamp` until the last finalizer is removed. Returns the object as of the
    /// deletion.
    ///
    /// # Errors
    /// `404 NotFound`.
    pub fn delete(&mut self, t: &'static ResourceType, ns: &str, name: &str) -> Result<Value, ApiError> {
        let k = key(t, ns, name);
        let mut obj = self
            .objects
            .get(&k)
            .cloned()
            .ok_or_else(|| ApiError::not_found(t, name))?;
        let meta = meta_mut(t, &mut obj)?;
        let has_finalizers = meta
            .get("finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if has_finalizers {
            if meta.contains_key("deletionTimestamp") {
                return Ok(obj);
            }
            self.rv += 1;
            meta.insert("deletionTimestamp".into(), json!(now()));
            meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
            let previous = self.objects.insert(k, obj.clone());
            self.record(t, EventType::Modified, obj.clone(), previous);
            return Ok(obj);
        }
        self.rv += 1;
        meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
        let previous = self.objects.remove(&k);
        self.record(t, EventType::Deleted, obj.clone(), previous);
        Ok(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm() -> &'static ResourceType {
        find_type("", "v1", "configmaps").expect("configmaps served")
    }

    #[test]
    fn create_update_delete_semantics() -> Result<(), ApiError> {
        let mut s = Store::default();
        let o = s.create(
            cm(),
            "ns",
            json!({"metadata":{"name":"a"},"data":{"k":"v"}}),
            WriteMode::Main,
        )?;
        assert_eq!(meta_str(&o, "resourceVersion"), Some("1"));
        assert_eq!(o["metadata"]["generation"], json!(1));
        let dup = s.create(cm(), "ns", json!({"metadata":{"name":"a"}}), WriteMode::Main);
        assert_eq!(dup.map_err(|e| e.reason), Err("AlreadyExists"));
        let g = s.create(
            cm(),
            "ns",
            json!({"metadata":{"generateName":"x-"}}),
            WriteMode::Main,
        )?;
        assert!(meta_str(&g, "name").is_some_and(|n| n.starts_with("x-") && n.len() == 7));
        let mut upd = o.clone();
        upd["metadata"]["labels"] = json!({"l": "1"});
        let u = s.update(cm(), "ns", "a", upd, WriteMode::Main)?;
        assert_eq!(u["metadata"]["generation"], json!(1));
        let stale = s.update(cm(), "ns", "a", o.clone(), WriteMode::Main);
        assert_eq!(stale.map_err(|e| e.code), Err(409));
        let mut upd = u.clone();
        upd["data"]["k"] = json!("w");
        let u = s.update(cm(), "ns", "a", upd, WriteMode::Main)?;
        assert_eq!(u["metadata"]["generation"], json!(2));
        s.delete(cm(), "ns", "a")?;
        assert!(s.get(cm(), "ns", "a").is_none());
        let kinds: Vec<_> = s.events_since(0).map(|e| e.event_type).collect();
        assert_eq!(
            kinds,
            [
                EventType::Added,
                EventType::Added,
                EventType::Modified,
                EventType::Modified,
                EventType::Deleted
            ]
        );
        Ok(())
    }

    #[test]
    fn finalizers_delay_deletion() -> Result<(), ApiError> {
        let mut s = Store::default();
        s.create(
            cm(),
            "ns",
            json!({"metadata":{"name":"a","finalizers":["f"]}}),
            WriteMode::Main,
        )?;
        let d = s.delete(cm(), "ns", "a")?;
        assert!(d["metadata"]["deletionTimestamp"].is_string());
        let mut u = d.clone();
        u["metadata"]["finalizers"] = json!([]);
        s.update(cm(), "ns", "a", u, WriteMode::Main)?;
        assert!(s.get(cm(), "ns", "a").is_none());
        Ok(())
    }

    #[test]
    fn event_capacity_expires_old_versions() -> Result<(), ApiError> {
        let mut s = Store::with_event_capacity(2);
        for n in ["a", "b", "c"] {
            s.create(cm(), "ns", json!({"metadata":{"name":n}}), WriteMode::Main)?;
        }
        assert_eq!(s.oldest_watchable(), 1);
        Ok(())
    }
}
