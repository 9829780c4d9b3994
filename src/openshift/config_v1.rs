//! `config.openshift.io/v1` ClusterVersion and ClusterOperator.
//!
//! Port of `openshift/api config/v1/types_cluster_version.go` and `types_cluster_operator.go`.

use chrono::{DateTime, Utc};
use k8s_openapi::{ClusterResourceScope, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use serde::{Deserialize, Serialize};

use super::{Condition, condition::find, openshift_resource, serialize_with_type_meta};

/// The cluster's version singleton (named `version`): `spec` is the wish, `status` the truth.
/// Serializes with `apiVersion: config.openshift.io/v1` and `kind: ClusterVersion`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVersion {
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: ClusterVersionSpec,
    /// The observed state, written by the CVO.
    #[serde(default)]
    pub status: ClusterVersionStatus,
}
openshift_resource!(
    ClusterVersion,
    "config.openshift.io",
    "v1",
    "ClusterVersion",
    "clusterversions",
    ClusterResourceScope
);
serialize_with_type_meta!(ClusterVersion, metadata, spec, status);

/// `spec` of ClusterVersion.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVersionSpec {
    /// Unique cluster id (UUID) sent to the update service.
    #[serde(default, rename = "clusterID", skip_serializing_if = "Option::is_none")]
    pub cluster_id: Option<String>,
    /// The update the administrator asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_update: Option<Update>,
    /// Update service URL; empty means the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// Update channel, e.g. `stable-4.14`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// Optional capabilities to enable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<ClusterVersionCapabilitiesSpec>,
    /// Signature stores to check release signatures against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signature_stores: Vec<SignatureStore>,
    /// Manifests the CVO must leave unmanaged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<ComponentOverride>,
}

/// A target release: `spec.desiredUpdate`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Update {
    /// `Multi` to migrate to a multi-architecture payload, or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Semantic version of the target release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Pull spec of the target release image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Skip verification and precondition checks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
    /// Conditional-update risks the administrator accepts (feature gate ClusterUpdateAcceptRisks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accept_risks: Vec<AcceptRisk>,
}

/// A risk name accepted for a conditional update.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AcceptRisk {
    /// The risk's name.
    #[serde(default)]
    pub name: String,
}

/// `spec.capabilities`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVersionCapabilitiesSpec {
    /// Baseline set: `None`, `v4.11`, ..., `vCurrent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_capability_set: Option<String>,
    /// Capabilities enabled on top of the baseline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_enabled_capabilities: Vec<String>,
}

/// `spec.signatureStores[]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SignatureStore {
    /// HTTPS URL of the store.
    #[serde(default)]
    pub url: String,
    /// ConfigMap (in openshift-config) holding the CA bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<ConfigMapNameReference>,
}

/// A reference to a ConfigMap by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigMapNameReference {
    /// ConfigMap name.
    #[serde(default)]
    pub name: String,
}

/// `spec.overrides[]`: one manifest the CVO must not manage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ComponentOverride {
    /// Kind of the object.
    #[serde(default)]
    pub kind: String,
    /// API group of the object.
    #[serde(default)]
    pub group: String,
    /// Namespace, empty for cluster-scoped objects.
    #[serde(default)]
    pub namespace: String,
    /// Name of the object.
    #[serde(default)]
    pub name: String,
    /// Whether the CVO leaves the object alone.
    #[serde(default)]
    pub unmanaged: bool,
}

/// `status` of ClusterVersion.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVersionStatus {
    /// The release the CVO is applying or has applied.
    #[serde(default)]
    pub desired: Release,
    /// Updates applied to the cluster, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<UpdateHistory>,
    /// Generation of `spec` last acted upon.
    #[serde(default)]
    pub observed_generation: i64,
    /// Hash of the applied payload's manifests.
    #[serde(default)]
    pub version_hash: String,
    /// Enabled and known capabilities.
    #[serde(default)]
    pub capabilities: ClusterVersionCapabilitiesStatus,
    /// Available, Progressing, Failing, RetrievedUpdates, Upgradeable, ReleaseAccepted, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Recommended updates from the update service; `null` when not retrieved. Always
    /// serialized (the CRD requires the key, upstream `AvailableUpdates []Release
    /// json:"availableUpdates"`).
    #[serde(default)]
    pub available_updates: Option<Vec<Release>>,
    /// Updates with known risks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditional_updates: Vec<ConditionalUpdate>,
    /// Risks of the conditional updates, by name (feature gate ClusterUpdateAcceptRisks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditional_update_risks: Vec<ConditionalUpdateRisk>,
}

/// A release: `{version, image, url, channels, architecture}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Release {
    /// `Multi` for a multi-architecture payload, or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// Semantic version.
    #[serde(default)]
    pub version: String,
    /// Release image pull spec.
    #[serde(default)]
    pub image: String,
    /// Errata or release-notes URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Channels the release is in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<String>,
}

/// `Partial` or `Completed`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpdateState {
    /// Every manifest of the release has been applied.
    Completed,
    /// The update has not finished (or never will).
    #[default]
    #[serde(other)]
    Partial,
}

/// One entry of `status.history`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateHistory {
    /// `Completed` or `Partial`.
    #[serde(default)]
    pub state: UpdateState,
    /// When the update started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_time: Option<DateTime<Utc>>,
    /// When it completed, or when it was superseded; `null` while in progress. Always
    /// serialized (the CRD requires the key, upstream `CompletionTime *metav1.Time
    /// json:"completionTime"`).
    #[serde(default)]
    pub completion_time: Option<DateTime<Utc>>,
    /// Semantic version; may be empty.
    #[serde(default)]
    pub version: String,
    /// Release image pull spec.
    #[serde(default)]
    pub image: String,
    /// Whether the release signature was verified.
    #[serde(default)]
    pub verified: bool,
    /// Risks accepted when the update was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_risks: Option<String>,
}

/// `status.capabilities`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterVersionCapabilitiesStatus {
    /// Capabilities that are on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled_capabilities: Vec<String>,
    /// Capabilities this release knows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_capabilities: Vec<String>,
}

/// An update that is supported but may not be recommended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionalUpdate {
    /// The target release.
    #[serde(default)]
    pub release: Release,
    /// Risks that apply to the update.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risks: Vec<ConditionalUpdateRisk>,
    /// Names of risks in `status.conditionalUpdateRisks` (feature gate ClusterUpdateAcceptRisks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risk_names: Vec<String>,
    /// `Recommended` and friends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A risk of a conditional update.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionalUpdateRisk {
    /// Link to a description of the risk.
    #[serde(default)]
    pub url: String,
    /// CamelCase name of the risk.
    #[serde(default)]
    pub name: String,
    /// Description of the risk.
    #[serde(default)]
    pub message: String,
    /// When the risk applies to this cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matching_rules: Vec<ClusterCondition>,
    /// `Applies` condition (feature gate ClusterUpdateAcceptRisks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A matching rule: `Always`, or `PromQL` with a query.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterCondition {
    /// `Always` or `PromQL`.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// The query, for `PromQL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promql: Option<PromQLClusterCondition>,
}

/// `{promql: "..."}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromQLClusterCondition {
    /// A PromQL query returning 0 or 1.
    #[serde(default)]
    pub promql: String,
}

impl ClusterVersion {
    /// The condition of `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        find(&self.status.conditions, type_)
    }

    /// The version the cluster runs: the newest `Completed` history entry (never
    /// the desired one when no update completed). `None` when history has no Completed entry.
    pub fn current_version(&self) -> Option<&str> {
        self.status
            .history
            .iter()
            .find(|h| h.state == UpdateState::Completed)
            .map(|h| h.version.as_str())
    }
}

/// A cluster operator's reported status. Serializes with `apiVersion: config.openshift.io/v1`
/// and `kind: ClusterOperator`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterOperator {
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Empty by design; `null` serializes as `{}` (the CRD requires an object, upstream's
    /// `ClusterOperatorSpec struct{}`).
    #[serde(default)]
    pub spec: serde_json::Value,
    /// What the operator reports.
    #[serde(default)]
    pub status: ClusterOperatorStatus,
}
openshift_resource!(
    ClusterOperator,
    "config.openshift.io",
    "v1",
    "ClusterOperator",
    "clusteroperators",
    ClusterResourceScope
);
impl Serialize for ClusterOperator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Spec<'a>(&'a serde_json::Value);
        impl Serialize for Spec<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                empty_object_if_null(self.0, s)
            }
        }
        let mut st = s.serialize_struct("ClusterOperator", 5)?;
        st.serialize_field("apiVersion", <Self as k8s_openapi::Resource>::API_VERSION)?;
        st.serialize_field("kind", <Self as k8s_openapi::Resource>::KIND)?;
        st.serialize_field("metadata", &self.metadata)?;
        st.serialize_field("spec", &Spec(&self.spec))?;
        st.serialize_field("status", &self.status)?;
        st.end()
    }
}

/// `status` of ClusterOperator.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterOperatorStatus {
    /// Available, Progressing, Degraded, Upgradeable, EvaluationConditionsDetected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Versions of the operator and its operands, e.g. `{name: operator, version: 4.14.1}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<OperandVersion>,
    /// Objects useful to debug the operator.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_objects: Vec<ObjectReference>,
    /// Operator-specific data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<serde_json::Value>,
}

/// `{name, version}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OperandVersion {
    /// `operator` for the operator itself, or an operand's name.
    #[serde(default)]
    pub name: String,
    /// Its version.
    #[serde(default)]
    pub version: String,
}

/// `{group, resource, namespace, name}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ObjectReference {
    /// API group; empty for the core group.
    #[serde(default)]
    pub group: String,
    /// Plural resource name.
    #[serde(default)]
    pub resource: String,
    /// Namespace, if namespaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Object name.
    #[serde(default)]
    pub name: String,
}

fn empty_object_if_null<S: serde::Serializer>(v: &serde_json::Value, s: S) -> Result<S::Ok, S::Error> {
    if v.is_null() {
        serde_json::Map::new().serialize(s)
    } else {
        v.serialize(s)
    }
}

impl ClusterOperator {
    /// The operator's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }
    /// The condition of `type_`, if present.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        find(&self.status.conditions, type_)
    }
    /// The version reported under the name `operator`, if any.
    pub fn operator_version(&self) -> Option<&str> {
        self.status
            .versions
            .iter()
            .find(|v| v.name == "operator")
            .map(|v| v.version.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn cluster_version_body_is_what_the_crd_requires() {
        let cv = ClusterVersion {
            metadata: ObjectMeta {
                name: Some("version".into()),
                ..Default::default()
            },
            spec: ClusterVersionSpec {
                cluster_id: Some("id".into()),
                ..Default::default()
            },
            status: ClusterVersionStatus {
                history: vec![UpdateHistory {
                    started_time: Some(DateTime::UNIX_EPOCH),
                    version: "1.0.0".into(),
                    ..Default::default()
                }],
                ..Default::default()
            },
        };
        let v = serde_json::to_value(&cv).expect("encodes");
        assert_eq!(
            (&v["apiVersion"], &v["kind"]),
            (&json!("config.openshift.io/v1"), &json!("ClusterVersion"))
        );
        let status = v["status"].as_object().expect("status");
        assert_eq!(status.get("availableUpdates"), Some(&Value::Null));
        for key in ["desired", "observedGeneration", "versionHash", "availableUpdates"] {
            assert!(status.contains_key(key), "status.{key} missing: {status:?}");
        }
        let h0 = v["status"]["history"][0].as_object().expect("history entry");
        for key in ["completionTime", "image", "startedTime", "state", "verified"] {
            assert!(h0.contains_key(key), "history[].{key} missing: {h0:?}");
        }
        assert_eq!(h0["completionTime"], Value::Null);
        let back: ClusterVersion = serde_json::from_value(v).expect("decodes");
        assert_eq!(back, cv);
    }

    #[test]
    fn cluster_operator_body_has_type_meta_and_an_object_spec() {
        let co = ClusterOperator {
            metadata: ObjectMeta {
                name: Some("op".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let v = serde_json::to_value(&co).expect("encodes");
        assert_eq!(
            (&v["apiVersion"], &v["kind"], &v["spec"]),
            (
                &json!("config.openshift.io/v1"),
                &json!("ClusterOperator"),
                &json!({})
            )
        );
        let back: ClusterOperator = serde_json::from_value(v).expect("decodes");
        assert_eq!(back.metadata, co.metadata);
    }
}
