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

use std::{
    collections::{BTreeMap, VecDeque},
    sync::Arc,
};

use serde_json::{Map, Value, json};

/// A kind the simulator serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceType {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Plural resource name used in URLs, e.g. `configmaps`.
    pub plural: String,
    /// Singular resource name, e.g. `configmap`.
    pub singular: String,
    /// Kind, e.g. `ConfigMap`.
    pub kind: String,
    /// Short names served in discovery (`cm`).
    pub short_names: Vec<String>,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Whether the kind has a `/status` subresource.
    pub status_subresource: bool,
    /// Whether the kind keeps `metadata.generation` (Deployments, CRD-defined kinds, ...;
    /// not ConfigMaps, Secrets, Namespaces, RBAC, ...).
    pub generation: bool,
    /// Defined by a CustomResourceDefinition (named here): strategic merge patch is refused
    /// with `415`, as kube-apiserver does for custom resources.
    pub crd: Option<String>,
}

/// A shared handle on a served kind.
pub type TypeRef = Arc<ResourceType>;

impl ResourceType {
    /// `apiVersion` of objects of this kind (`v1` or `group/version`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The qualified resource name used in error messages (`configmaps`,
    /// `clusterversions.config.openshift.io`).
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The qualified kind used in `Invalid` messages (`ConfigMap`,
    /// `ClusterVersion.config.openshift.io`).
    pub fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// Whether this is the core `Namespace` kind.
    pub fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.plural == "namespaces"
    }

    /// Whether this is `CustomResourceDefinition` (`apiextensions.k8s.io`).
    pub fn is_crd(&self) -> bool {
        self.group == CRD_GROUP && self.plural == "customresourcedefinitions"
    }

    /// Storage key of the kind: objects are shared by every version of a group's resource.
    fn storage_key(&self) -> String {
        format!("{}/{}", self.group, self.plural)
    }
}

const CRD_GROUP: &str = "apiextensions.k8s.io";
/// The finalizer kube-apiserver puts on CustomResourceDefinitions.
pub const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// `(group, version, plural, kind, short names, namespaced, status subresource, generation)`
/// of the built-in kinds, as kube-apiserver 1.3x and the OpenShift CRDs declare them.
type Spec = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    bool,
    bool,
    bool,
);

const OCP_CONFIG: &str = "config.openshift.io";
const MCO: &str = "machineconfiguration.openshift.io";

const BUILTIN: &[Spec] = &[
    ("", "v1", "namespaces", "Namespace", &["ns"], false, true, false),
    ("", "v1", "configmaps", "ConfigMap", &["cm"], true, false, false),
    ("", "v1", "secrets", "Secret", &[], true, false, false),
    ("", "v1", "nodes", "Node", &["no"], false, true, false),
    ("", "v1", "pods", "Pod", &["po"], true, true, true),
    ("", "v1", "services", "Service", &["svc"], true, true, false),
    (
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        &["sa"],
        true,
        false,
        false,
    ),
    ("", "v1", "events", "Event", &["ev"], true, false, false),
    (
        "apps",
        "v1",
        "deployments",
        "Deployment",
        &["deploy"],
        true,
        true,
        true,
    ),
    ("apps", "v1", "daemonsets", "DaemonSet", &["ds"], true, true, true),
    (
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        &["rs"],
        true,
        true,
        true,
    ),
    (
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        &["sts"],
        true,
        true,
        true,
    ),
    ("batch", "v1", "jobs", "Job", &[], true, true, true),
    ("batch", "v1", "cronjobs", "CronJob", &["cj"], true, true, true),
    (
        "coordination.k8s.io",
        "v1",
        "leases",
        "Lease",
        &[],
        true,
        false,
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "roles",
        "Role",
        &[],
        true,
        false,
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        "RoleBinding",
        &[],
        true,
        false,
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "ClusterRole",
        &[],
        false,
        false,
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        &[],
        false,
        false,
        false,
    ),
    (
        CRD_GROUP,
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        &["crd", "crds"],
        false,
        true,
        true,
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        &[],
        false,
        false,
        true,
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        &[],
        false,
        false,
        true,
    ),
    (
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        &["pdb"],
        true,
        true,
        true,
    ),
    (
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        &["pc"],
        false,
        false,
        false,
    ),
    (
        "events.k8s.io",
        "v1",
        "events",
        "Event",
        &["ev"],
        true,
        false,
        false,
    ),
    (
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "APIService",
        &[],
        false,
        true,
        false,
    ),
    (
        OCP_CONFIG,
        "v1",
        "clusterversions",
        "ClusterVersion",
        &[],
        false,
        true,
        true,
    ),
    (
        OCP_CONFIG,
        "v1",
        "clusteroperators",
        "ClusterOperator",
        &["co"],
        false,
        true,
        true,
    ),
    (
        OCP_CONFIG,
        "v1",
        "infrastructures",
        "Infrastructure",
        &[],
        false,
        true,
        true,
    ),
    (
        OCP_CONFIG,
        "v1",
        "featuregates",
        "FeatureGate",
        &[],
        false,
        true,
        true,
    ),
    (OCP_CONFIG, "v1", "proxies", "Proxy", &[], false, true, true),
    (OCP_CONFIG, "v1", "networks", "Network", &[], false, true, true),
    (OCP_CONFIG, "v1", "dnses", "DNS", &[], false, true, true),
    (OCP_CONFIG, "v1", "ingresses", "Ingress", &[], false, true, true),
    (
        OCP_CONFIG,
        "v1",
        "apiservers",
        "APIServer",
        &[],
        false,
        true,
        true,
    ),
    (
        OCP_CONFIG,
        "v1",
        "authentications",
        "Authentication",
        &[],
        false,
        true,
        true,
    ),
    (OCP_CONFIG, "v1", "images", "Image", &[], false, true, true),
    (OCP_CONFIG, "v1", "oauths", "OAuth", &[], false, true, true),
    (
        OCP_CONFIG,
        "v1",
        "schedulers",
        "Scheduler",
        &[],
        false,
        true,
        true,
    ),
    (OCP_CONFIG, "v1", "consoles", "Console", &[], false, true, true),
    (OCP_CONFIG, "v1", "builds", "Build", &[], false, false, true),
    (OCP_CONFIG, "v1", "projects", "Project", &[], false, true, true),
    (
        MCO,
        "v1",
        "machineconfigpools",
        "MachineConfigPool",
        &["mcp"],
        false,
        true,
        true,
    ),
    (
        MCO,
        "v1",
        "machineconfigs",
        "MachineConfig",
        &["mc"],
        false,
        false,
        true,
    ),
];

/// The kinds every simulator serves: core (Namespace, ConfigMap, Secret, Node, Pod, Service,
/// ServiceAccount, Event), apps (Deployment, DaemonSet, ReplicaSet, StatefulSet), batch (Job,
/// CronJob), Lease, RBAC, CustomResourceDefinition, webhook configurations,
/// PodDisruptionBudget, PriorityClass, events.k8s.io Event, APIService, and the OpenShift
/// `config.openshift.io` and `machineconfiguration.openshift.io` kinds (cluster-scoped, with
/// a status subresource, as their CRDs in openshift/api declare).
pub fn builtin_types() -> Vec<TypeRef> {
    BUILTIN
        .iter()
        .map(
            |&(group, version, plural, kind, short, namespaced, status, generation)| {
                Arc::new(ResourceType {
                    group: group.into(),
                    version: version.into(),
                    plural: plural.into(),
                    singular: kind.to_lowercase(),
                    kind: kind.into(),
                    short_names: short.iter().map(|s| (*s).to_owned()).collect(),
                    namespaced,
                    status_subresource: status,
                    generation,
                    crd: None,
                })
            },
        )
        .collect()
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
            format!("{} \"{name}\" is invalid: {detail}", t.qualified_kind()),
        )
    }

    /// `403 Forbidden` for `name` of `t`.
    pub fn forbidden(t: &ResourceType, name: &str, detail: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!("{} {name:?} is forbidden: {detail}", t.qualified()),
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
    pub resource: TypeRef,
    /// The object after the change (before removal, for `Deleted`, with the new rv).
    pub object: Value,
    /// The object before the change (`None` for `Added`): lets a watch with a selector turn
    /// an object entering or leaving the selection into `ADDED` or `DELETED`.
    pub previous: Option<Value>,
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

type Objects = BTreeMap<(String, String), Value>;

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
}

impl Default for Store {
    fn default() -> Self {
        Self::with_event_capacity(10_000)
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
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

/// The kinds a CustomResourceDefinition defines (one per served version), or the `Invalid`
/// detail naming the bad field.
fn crd_types(crd: &Value) -> Result<Vec<ResourceType>, String> {
    let spec = &crd["spec"];
    let name = meta_str(crd, "name").unwrap_or_default();
    let field = |f: &str| -> Result<String, String> {
        match spec.pointer(f).and_then(Value::as_str) {
            Some(s) if !s.is_empty() => Ok(s.to_owned()),
            _ => Err(format!("spec{}: Required value", f.replace('/', "."))),
        }
    };
    let group = field("/group")?;
    let plural = field("/names/plural")?;
    let kind = field("/names/kind")?;
    if name != format!("{plural}.{group}") {
        return Err(format!(
            "metadata.name: Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"
        ));
    }
    let namespaced = match spec["scope"].as_str() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        other => {
            return Err(format!(
                "spec.scope: Unsupported value: {:?}: supported values: \"Cluster\", \"Namespaced\"",
                other.unwrap_or_default()
            ));
        }
    };
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        return Err(
            "spec.versions: Invalid value: null: must have exactly one version marked as storage version"
                .into(),
        );
    }
    let singular = spec["names"]["singular"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map_or_else(|| kind.to_lowercase(), str::to_owned);
    let short_names: Vec<String> = spec["names"]["shortNames"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for v in &versions {
        let Some(version) = v["name"].as_str().filter(|s| !s.is_empty()) else {
            return Err("spec.versions[].name: Required value".into());
        };
        if v["served"].as_bool() != Some(true) {
            continue;
        }
        out.push(ResourceType {
            group: group.clone(),
            version: version.to_owned(),
            plural: plural.clone(),
            singular: singular.clone(),
            kind: kind.clone(),
            short_names: short_names.clone(),
            namespaced,
            status_subresource: v["subresources"]["status"].is_object(),
            generation: true,
            crd: Some(name.to_owned()),
        });
    }
    Ok(out)
}

/// The status kube-apiserver's CRD controllers give an accepted CustomResourceDefinition;
/// `old` keeps condition transition times.
fn crd_status(crd: &Value) -> Value {
    let names = &crd["spec"]["names"];
    let kind = names["kind"].as_str().unwrap_or_default();
    let mut accepted = names.clone();
    if accepted["singular"].as_str().is_none_or(str::is_empty) {
        accepted["singular"] = json!(kind.to_lowercase());
    }
    if accepted["listKind"].as_str().is_none_or(str::is_empty) {
        accepted["listKind"] = json!(format!("{kind}List"));
    }
    let old = &crd["status"]["conditions"];
    let time = |ty: &str| -> Value {
        old.as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == ty && c["status"] == "True"))
            .map_or_else(|| json!(now()), |c| c["lastTransitionTime"].clone())
    };
    let stored: Vec<Value> = crd["spec"]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"].as_bool() == Some(true))
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": time("NamesAccepted")},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": time("Established")},
        ],
        "acceptedNames": accepted,
        "storedVersions": stored,
    })
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

    fn record(&mut self, t: &TypeRef, event_type: EventType, object: Value, previous: Option<Value>) {
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

    /// The object, if present.
    pub fn get(&self, t: &ResourceType, ns: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&t.storage_key())?
            .get(&(ns.to_owned(), name.to_owned()))
    }

    /// Objects of `t`, in `ns` (or all namespaces when `None`), ordered by namespace and name.
    pub fn list(&self, t: &ResourceType, ns: Option<&str>) -> Vec<&Value> {
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

    /// Whether namespace `ns` exists and takes new objects.
    pub fn namespace_state(&self, ns: &str) -> NamespaceState {
        let key = ("/namespaces".to_owned(), (String::new(), ns.to_owned()));
        match self.objects.get(&key.0).and_then(|o| o.get(&key.1)) {
            None => NamespaceState::Missing,
            Some(o) if o["metadata"]["deletionTimestamp"].is_string() => NamespaceState::Terminating,
            Some(_) => NamespaceState::Active,
        }
    }

    /// `(kind, name)` of every object in namespace `ns`.
    fn namespace_contents(&self, ns: &str) -> Vec<(TypeRef, String)> {
        let mut out = Vec::new();
        for (key, objs) in &self.objects {
            let Some(t) = self
                .types
                .iter()
                .find(|t| t.namespaced && &t.storage_key() == key)
            else {
                continue;
            };
            for ((_, name), _) in objs
                .range((ns.to_owned(), String::new())..)
                .take_while(|((n, _), _)| n == ns)
            {
                out.push((t.clone(), name.clone()));
            }
        }
        out
    }

    fn insert_object(&mut self, t: &ResourceType, ns: &str, name: &str, obj: Value) -> Option<Value> {
        self.objects
            .entry(t.storage_key())
            .or_default()
            .insert((ns.to_owned(), name.to_owned()), obj)
    }

    fn remove_object(&mut self, t: &ResourceType, ns: &str, name: &str) -> Option<Value> {
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
        if self.get(t, ns, &name).is_some() {
            return Err(ApiError::new(
                409,
                "AlreadyExists",
                format!("{} {name:?} already exists", t.qualified()),
            ));
        }
        meta.insert("name".into(), json!(name));
        if t.is_crd() {
            crd_types(&obj).map_err(|d| ApiError::invalid(t, &name, &d))?;
        }
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
            meta.insert("creationTimestamp".into(), json!(now()));
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
            if mode == WriteMode::Main && t.status_subresource {
                o.remove("status");
            }
        }
        if t.is_namespace() {
            if !obj["spec"]["finalizers"].is_array() {
                obj["spec"]["finalizers"] = json!(["kubernetes"]);
            }
            if !obj["status"]["phase"].is_string() {
                obj["status"]["phase"] = json!("Active");
            }
        }
        self.insert_object(t, ns, &name, obj.clone());
        self.record(t, EventType::Added, obj.clone(), None);
        if t.is_crd() {
            self.sync_crd(t, &name)?;
        }
        Ok(obj)
    }

    /// Registers the kinds of CRD `name` (replacing earlier ones) and writes its accepted
    /// status when it changed.
    fn sync_crd(&mut self, t: &TypeRef, name: &str) -> Result<(), ApiError> {
        let Some(crd) = self.get(t, "", name).cloned() else {
            return Ok(());
        };
        if crd["metadata"]["deletionTimestamp"].is_string() {
            return Ok(());
        }
        let types = crd_types(&crd).map_err(|d| ApiError::invalid(t, name, &d))?;
        self.types.retain(|x| x.crd.as_deref() != Some(name));
        self.types.extend(types.into_iter().map(Arc::new));
        let status = crd_status(&crd);
        if crd["status"] != status {
            let mut with = crd.clone();
            with["status"] = status;
            self.write(t, "", name, with, WriteMode::Status)?;
        }
        Ok(())
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
        if t.is_crd() && self.get(t, ns, name).is_some() {
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
        let old = self
            .get(t, ns, name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(t, name))?;
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
        if new["metadata"]["deletionTimestamp"].is_string() && !held {
            self.remove_object(t, ns, name);
            self.record(t, EventType::Deleted, new.clone(), Some(old));
            self.after_removal(t, ns);
            return Ok(new);
        }
        self.insert_object(t, ns, name, new.clone());
        self.record(t, EventType::Modified, new.clone(), Some(old));
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
            .cloned()
            .ok_or_else(|| ApiError::not_found(t, name))?;
        let held = has_finalizers(&obj) || t.is_namespace();
        if held {
            if obj["metadata"]["deletionTimestamp"].is_string() {
                return Ok(obj);
            }
            self.rv += 1;
            let meta = meta_mut(t, &mut obj)?;
            meta.insert("deletionTimestamp".into(), json!(now()));
            meta.insert("resourceVersion".into(), json!(self.rv.to_string()));
            if t.is_namespace() {
                obj["status"]["phase"] = json!("Terminating");
            }
            let previous = self.insert_object(t, ns, name, obj.clone());
            self.record(t, EventType::Modified, obj.clone(), previous);
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
        self.record(t, EventType::Deleted, obj.clone(), previous);
        self.after_removal(t, ns);
        Ok(obj)
    }

    fn after_removal(&mut self, t: &ResourceType, ns: &str) {
        if t.namespaced && self.namespace_state(ns) == NamespaceState::Terminating {
            // Errors here would only mean the namespace vanished meanwhile.
            let _ = self.finalize_namespace(ns);
        }
    }

    /// Removes a terminating namespace's `kubernetes` finalizer once it holds no objects
    /// (what the namespace controller does through `/finalize`).
    fn finalize_namespace(&mut self, ns: &str) -> Result<(), ApiError> {
        if !self.namespace_contents(ns).is_empty() {
            return Ok(());
        }
        let Some(t) = self.find_plural("", "namespaces") else {
            return Ok(());
        };
        let Some(mut obj) = self.get(&t, "", ns).cloned() else {
            return Ok(());
        };
        if obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
        {
            obj["spec"]["finalizers"] = json!([]);
            self.write(&t, "", ns, obj, WriteMode::All)?;
        }
        Ok(())
    }

    /// Deletes every object of a deleted CRD's kinds, unregisters them, and drops the cleanup
    /// finalizer (what apiextensions-apiserver's finalizer controller does).
    fn cleanup_crd(&mut self, t: &TypeRef, name: &str) -> Result<(), ApiError> {
        let kinds: Vec<TypeRef> = self
            .types
            .iter()
            .filter(|x| x.crd.as_deref() == Some(name))
            .cloned()
            .collect();
        if let Some(ct) = kinds.first() {
            let targets: Vec<(String, String)> = self
                .objects
                .get(&ct.storage_key())
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            for (ns, n) in targets {
                if let Some(mut o) = self.remove_object(ct, &ns, &n) {
                    self.rv += 1;
                    o["metadata"]["resourceVersion"] = json!(self.rv.to_string());
                    self.record(ct, EventType::Deleted, o.clone(), Some(o));
                    self.after_removal(ct, &ns);
                }
            }
        }
        self.types.retain(|x| x.crd.as_deref() != Some(name));
        if let Some(mut crd) = self.get(t, "", name).cloned() {
            if let Some(f) = crd["metadata"]["finalizers"].as_array_mut() {
                f.retain(|x| x != CRD_CLEANUP_FINALIZER);
            }
            self.write(t, "", name, crd, WriteMode::All)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typ(s: &Store, group: &str, plural: &str) -> TypeRef {
        s.find_plural(group, plural).expect("served")
    }

    #[test]
    fn rbac_names_are_path_segments_others_dns_subdomains() -> Result<(), ApiError> {
        let mut s = Store::default();
        let cr = typ(&s, "rbac.authorization.k8s.io", "clusterroles");
        let o = s.create(
            &cr,
            "",
            json!({"metadata":{"name":"system:openshift:scc:privileged"}}),
            WriteMode::Main,
        )?;
        assert_eq!(meta_str(&o, "name"), Some("system:openshift:scc:privileged"));
        let slash = s.create(&cr, "", json!({"metadata":{"name":"a/b"}}), WriteMode::Main);
        assert_eq!(slash.map_err(|e| e.code), Err(422));
        let cm = typ(&s, "", "configmaps");
        let colon = s.create(&cm, "ns", json!({"metadata":{"name":"a:b"}}), WriteMode::Main);
        assert_eq!(colon.map_err(|e| e.code), Err(422));
        Ok(())
    }

    #[test]
    fn create_update_delete_semantics() -> Result<(), ApiError> {
        let mut s = Store::default();
        let cm = typ(&s, "", "configmaps");
        let o = s.create(
            &cm,
            "ns",
            json!({"metadata":{"name":"a"},"data":{"k":"v"}}),
            WriteMode::Main,
        )?;
        assert_eq!(meta_str(&o, "resourceVersion"), Some("1"));
        assert!(
            o["metadata"].get("generation").is_none(),
            "ConfigMaps have no generation"
        );
        let dup = s.create(&cm, "ns", json!({"metadata":{"name":"a"}}), WriteMode::Main);
        assert_eq!(dup.map_err(|e| e.reason), Err("AlreadyExists"));
        let g = s.create(
            &cm,
            "ns",
            json!({"metadata":{"generateName":"x-"}}),
            WriteMode::Main,
        )?;
        assert!(meta_str(&g, "name").is_some_and(|n| n.starts_with("x-") && n.len() == 7));
        let mut upd = o.clone();
        upd["metadata"]["labels"] = json!({"l": "1"});
        let u = s.update(&cm, "ns", "a", upd, WriteMode::Main)?;
        let stale = s.update(&cm, "ns", "a", o.clone(), WriteMode::Main);
        assert_eq!(stale.map_err(|e| e.code), Err(409));
        s.delete(&cm, "ns", "a")?;
        assert!(s.get(&cm, "ns", "a").is_none());
        assert_eq!(u["metadata"]["labels"]["l"], "1");
        let kinds: Vec<_> = s.events_since(0).map(|e| e.event_type).collect();
        assert_eq!(
            kinds,
            [
                EventType::Added,
                EventType::Added,
                EventType::Modified,
                EventType::Deleted
            ]
        );
        Ok(())
    }

    #[test]
    fn generation_tracks_spec_of_kinds_that_keep_it() -> Result<(), ApiError> {
        let mut s = Store::default();
        let d = typ(&s, "apps", "deployments");
        let o = s.create(
            &d,
            "ns",
            json!({"metadata":{"name":"a"},"spec":{"replicas":1}}),
            WriteMode::Main,
        )?;
        assert_eq!(o["metadata"]["generation"], json!(1));
        let mut upd = o.clone();
        upd["metadata"]["labels"] = json!({"l": "1"});
        let u = s.update(&d, "ns", "a", upd, WriteMode::Main)?;
        assert_eq!(u["metadata"]["generation"], json!(1));
        let mut upd = u.clone();
        upd["spec"]["replicas"] = json!(2);
        let u = s.update(&d, "ns", "a", upd, WriteMode::Main)?;
        assert_eq!(u["metadata"]["generation"], json!(2));
        let mut st = u.clone();
        st["status"] = json!({"replicas": 2});
        let u = s.update(&d, "ns", "a", st, WriteMode::Status)?;
        assert_eq!(u["metadata"]["generation"], json!(2));
        Ok(())
    }

    #[test]
    fn finalizers_delay_deletion() -> Result<(), ApiError> {
        let mut s = Store::default();
        let cm = typ(&s, "", "configmaps");
        s.create(
            &cm,
            "ns",
            json!({"metadata":{"name":"a","finalizers":["f"]}}),
            WriteMode::Main,
        )?;
        let d = s.delete(&cm, "ns", "a")?;
        assert!(d["metadata"]["deletionTimestamp"].is_string());
        let mut u = d.clone();
        u["metadata"]["finalizers"] = json!([]);
        s.update(&cm, "ns", "a", u, WriteMode::Main)?;
        assert!(s.get(&cm, "ns", "a").is_none());
        Ok(())
    }

    #[test]
    fn event_capacity_expires_old_versions() -> Result<(), ApiError> {
        let mut s = Store::with_event_capacity(2);
        let cm = typ(&s, "", "configmaps");
        for n in ["a", "b", "c"] {
            s.create(&cm, "ns", json!({"metadata":{"name":n}}), WriteMode::Main)?;
        }
        assert_eq!(s.oldest_watchable(), 1);
        Ok(())
    }

    #[test]
    fn crd_registers_and_cleans_up_its_kind() -> Result<(), ApiError> {
        let mut s = Store::default();
        let crd_t = typ(&s, CRD_GROUP, "customresourcedefinitions");
        let crd = json!({"metadata": {"name": "widgets.example.com"}, "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}}],
        }});
        s.create(&crd_t, "", crd, WriteMode::Main)?;
        let w = s.find_type("example.com", "v1", "widgets").expect("registered");
        assert!(w.namespaced && w.status_subresource && w.crd.is_some());
        let stored = s.get(&crd_t, "", "widgets.example.com").expect("crd");
        assert_eq!(stored["status"]["conditions"][1]["type"], "Established");
        assert_eq!(stored["status"]["acceptedNames"]["listKind"], "WidgetList");
        s.create(&w, "ns", json!({"metadata": {"name": "w1"}}), WriteMode::Main)?;
        let rv = s.resource_version();
        s.delete(&crd_t, "", "widgets.example.com")?;
        assert!(s.find_type("example.com", "v1", "widgets").is_none());
        assert!(s.get(&w, "ns", "w1").is_none());
        assert!(s.get(&crd_t, "", "widgets.example.com").is_none());
        let deleted: Vec<_> = s
            .events_since(rv)
            .filter(|e| e.event_type == EventType::Deleted)
            .map(|e| e.resource.kind.clone())
            .collect();
        assert_eq!(deleted, ["Widget", "CustomResourceDefinition"]);
        let bad = json!({"metadata": {"name": "x"}, "spec": {"group": "g.io", "scope": "Cluster",
            "names": {"plural": "ys", "kind": "Y"}, "versions": [{"name": "v1", "served": true}]}});
        assert_eq!(
            s.create(&crd_t, "", bad, WriteMode::Main).map_err(|e| e.code),
            Err(422)
        );
        Ok(())
    }

    #[test]
    fn namespace_terminates_after_its_objects_go() -> Result<(), ApiError> {
        let mut s = Store::default();
        let ns_t = typ(&s, "", "namespaces");
        let cm = typ(&s, "", "configmaps");
        let ns = s.create(&ns_t, "", json!({"metadata": {"name": "n"}}), WriteMode::Main)?;
        assert_eq!(
            (ns["status"]["phase"].as_str(), &ns["spec"]["finalizers"]),
            (Some("Active"), &json!(["kubernetes"]))
        );
        s.create(
            &cm,
            "n",
            json!({"metadata": {"name": "held", "finalizers": ["f"]}}),
            WriteMode::Main,
        )?;
        s.create(&cm, "n", json!({"metadata": {"name": "free"}}), WriteMode::Main)?;
        let d = s.delete(&ns_t, "", "n")?;
        assert_eq!(d["status"]["phase"], "Terminating");
        assert_eq!(s.namespace_state("n"), NamespaceState::Terminating);
        assert!(s.get(&cm, "n", "free").is_none());
        let mut held = s.get(&cm, "n", "held").cloned().expect("held by finalizer");
        held["metadata"]["finalizers"] = json!([]);
        s.update(&cm, "n", "held", held, WriteMode::Main)?;
        assert_eq!(s.namespace_state("n"), NamespaceState::Missing);
        Ok(())
    }
}
