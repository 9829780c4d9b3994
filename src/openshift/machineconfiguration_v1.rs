//! `machineconfiguration.openshift.io/v1` MachineConfigPool and MachineConfig.
//!
//! Port of `openshift/api machineconfiguration/v1/types.go`.

use k8s_openapi::{
    ClusterResourceScope,
    apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta},
};
use serde::{Deserialize, Serialize};

use super::{Condition, condition::find, openshift_resource, serialize_with_type_meta};

/// A pool of nodes that share machine configuration (`master`, `worker`, custom pools).
/// Serializes with `apiVersion` and `kind`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct MachineConfigPool {
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: MachineConfigPoolSpec,
    /// Observed state.
    #[serde(default)]
    pub status: MachineConfigPoolStatus,
}
openshift_resource!(
    MachineConfigPool,
    "machineconfiguration.openshift.io",
    "v1",
    "MachineConfigPool",
    "machineconfigpools",
    ClusterResourceScope
);
serialize_with_type_meta!(MachineConfigPool, metadata, spec, status);

/// `spec` of MachineConfigPool.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineConfigPoolSpec {
    /// Selects the MachineConfigs of the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_config_selector: Option<LabelSelector>,
    /// Selects the nodes of the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<LabelSelector>,
    /// Whether updates of the pool's nodes are paused.
    #[serde(default)]
    pub paused: bool,
    /// Nodes that may be updating at once: an integer or a percentage string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<serde_json::Value>,
    /// The rendered MachineConfig the pool should run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<MachineConfigPoolStatusConfiguration>,
    /// Pinned image sets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pinned_image_sets: Vec<NameRef>,
    /// OS image stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_image_stream: Option<NameRef>,
}

/// `{name}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NameRef {
    /// The name.
    #[serde(default)]
    pub name: String,
}

/// An object reference with the MachineConfigs it was rendered from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineConfigPoolStatusConfiguration {
    /// API version of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Field path within the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
    /// Kind of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name of the rendered MachineConfig.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Resource version of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// UID of the referent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The MachineConfigs rendered into it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source: Vec<k8s_openapi::api::core::v1::ObjectReference>,
}

/// `status` of MachineConfigPool.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineConfigPoolStatus {
    /// Generation observed by the controller.
    #[serde(default)]
    pub observed_generation: i64,
    /// The rendered MachineConfig the pool's nodes are moving to.
    #[serde(default)]
    pub configuration: MachineConfigPoolStatusConfiguration,
    /// Nodes in the pool.
    #[serde(default)]
    pub machine_count: i32,
    /// Nodes at the current configuration.
    #[serde(default)]
    pub updated_machine_count: i32,
    /// Nodes ready and at the current configuration.
    #[serde(default)]
    pub ready_machine_count: i32,
    /// Nodes not ready or updating.
    #[serde(default)]
    pub unavailable_machine_count: i32,
    /// Nodes marked degraded.
    #[serde(default)]
    pub degraded_machine_count: i32,
    /// Updated, Updating, Degraded, NodeDegraded, RenderDegraded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Certificate expiry of the pool's nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cert_expirys: Vec<CertExpiry>,
    /// Per-synchroniser progress (PinnedImageSets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pool_synchronizers_status: Vec<PoolSynchronizerStatus>,
    /// OS image stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_image_stream: Option<NameRef>,
}

/// A certificate and when it expires.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CertExpiry {
    /// Bundle name.
    #[serde(default)]
    pub bundle: String,
    /// Subject.
    #[serde(default)]
    pub subject: String,
    /// Expiry time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<String>,
}

/// Progress of one pool synchroniser.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolSynchronizerStatus {
    /// e.g. `PinnedImageSets`.
    #[serde(default)]
    pub pool_synchronizer_type: String,
    /// Nodes.
    #[serde(default)]
    pub machine_count: i64,
    /// Updated nodes.
    #[serde(default)]
    pub updated_machine_count: i64,
    /// Ready nodes.
    #[serde(default)]
    pub ready_machine_count: i64,
    /// Available nodes.
    #[serde(default)]
    pub available_machine_count: i64,
    /// Unavailable nodes.
    #[serde(default)]
    pub unavailable_machine_count: i64,
    /// Generation observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl MachineConfigPool {
    /// The pool's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }
    /// The condition of `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        find(&self.status.conditions, type_)
    }
}

/// A MachineConfig. Only metadata is kept: `oc adm upgrade status` reads the
/// `machineconfiguration.openshift.io/release-image-version` annotation of rendered configs to
/// learn which release a node's config belongs to; the Ignition `spec` is dropped on decode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineConfig {
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
}
openshift_resource!(
    MachineConfig,
    "machineconfiguration.openshift.io",
    "v1",
    "MachineConfig",
    "machineconfigs",
    ClusterResourceScope
);
