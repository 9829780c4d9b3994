//! The served kinds: [`ResourceType`] and the table of built-in kinds.

use std::sync::Arc;

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
    pub(super) fn storage_key(&self) -> String {
        format!("{}/{}", self.group, self.plural)
    }
}

pub(super) const CRD_GROUP: &str = "apiextensions.k8s.io";
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
        true,
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
    (
        OCP_CONFIG,
        "v1",
        "imagedigestmirrorsets",
        "ImageDigestMirrorSet",
        &["idms"],
        false,
        true,
        true,
    ),
    (
        "operator.openshift.io",
        "v1alpha1",
        "imagecontentsourcepolicies",
        "ImageContentSourcePolicy",
        &[],
        false,
        false,
        true,
    ),
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
