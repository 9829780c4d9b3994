//! The cluster's FeatureGate singleton (`featuregates.config.openshift.io/cluster`, openshift/api
//! `config/v1/types_feature.go`): which feature set the administrator chose, and which gates
//! the cluster-config-operator rendered as enabled for each release version.
//!
//! The CVO reads the gates of its own (current) version from `status.featureGates` and treats
//! a FeatureGate without an entry for that version as "nothing enabled" (upstream
//! `pkg/featuregates/featuregates.go` `CvoGatesFromFeatureGate` in
//! openshift/cluster-version-operator).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

use super::{openshift_resource, serialize_with_type_meta};

/// The gate that allows `spec.desiredUpdate.acceptRisks` and `status.conditionalUpdateRisks`.
pub const CLUSTER_UPDATE_ACCEPT_RISKS: &str = "ClusterUpdateAcceptRisks";

/// The name of the one FeatureGate the cluster reads.
pub const FEATURE_GATE_NAME: &str = "cluster";

/// `featuregates.config.openshift.io`: the feature set (spec) and the rendered gates per
/// version (status). Serializes with `apiVersion` and `kind`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureGate {
    /// Object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The administrator's choice.
    #[serde(default)]
    pub spec: FeatureGateSpec,
    /// What the cluster-config-operator rendered.
    #[serde(default)]
    pub status: FeatureGateStatus,
}
openshift_resource!(
    FeatureGate,
    "config.openshift.io",
    "v1",
    "FeatureGate",
    "featuregates",
    k8s_openapi::ClusterResourceScope
);
serialize_with_type_meta!(FeatureGate, metadata, spec, status);

/// `spec` of FeatureGate.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureGateSpec {
    /// `Default` (or empty), `TechPreviewNoUpgrade`, `DevPreviewNoUpgrade`, `CustomNoUpgrade`,
    /// `OKD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_set: Option<String>,
    /// The gates of a `CustomNoUpgrade` feature set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_no_upgrade: Option<CustomFeatureGates>,
}

/// `spec.customNoUpgrade`: gate names switched on and off.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomFeatureGates {
    /// Gate names to enable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled: Vec<String>,
    /// Gate names to disable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<String>,
}

/// `status` of FeatureGate.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureGateStatus {
    /// The rendered gates, one entry per release version the cluster runs or ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_gates: Vec<FeatureGateDetails>,
}

/// `status.featureGates[]`: the gates of one release version.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureGateDetails {
    /// The release version, e.g. `4.16.3`.
    #[serde(default)]
    pub version: String,
    /// Enabled gates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled: Vec<FeatureGateAttributes>,
    /// Disabled gates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<FeatureGateAttributes>,
}

/// One gate of [`FeatureGateDetails`].
#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
pub struct FeatureGateAttributes {
    /// The gate's name, e.g. `ClusterUpdateAcceptRisks`.
    #[serde(default)]
    pub name: String,
}

impl FeatureGate {
    /// Whether `gate` is enabled for release `version`: listed under `enabled` in the
    /// `status.featureGates` entry of that version. No entry for the version means not
    /// enabled (upstream's defaults for an unknown version).
    pub fn enabled(&self, version: &str, gate: &str) -> bool {
        self.status
            .feature_gates
            .iter()
            .filter(|d| d.version == version)
            .any(|d| d.enabled.iter().any(|g| g.name == gate))
    }

    /// Whether [`CLUSTER_UPDATE_ACCEPT_RISKS`] is enabled for `version`.
    pub fn accept_risks(&self, version: &str) -> bool {
        self.enabled(version, CLUSTER_UPDATE_ACCEPT_RISKS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(yaml: &str) -> FeatureGate {
        serde_norway::from_str(yaml).expect("FeatureGate")
    }

    #[test]
    fn a_gate_counts_only_for_the_version_it_is_rendered_for() {
        let fg = gate(
            "apiVersion: config.openshift.io/v1\nkind: FeatureGate\nmetadata: {name: cluster}\n\
             spec: {featureSet: CustomNoUpgrade, customNoUpgrade: {enabled: [ClusterUpdateAcceptRisks]}}\n\
             status:\n  featureGates:\n  - version: 4.16.3\n    enabled: [{name: ClusterUpdateAcceptRisks}]\n    disabled: [{name: Other}]\n\
             \x20 - version: 4.16.4\n    disabled: [{name: ClusterUpdateAcceptRisks}]\n",
        );
        assert_eq!(fg.spec.feature_set.as_deref(), Some("CustomNoUpgrade"));
        assert!(fg.accept_risks("4.16.3"));
        assert!(!fg.accept_risks("4.16.4"), "disabled there");
        assert!(
            !fg.accept_risks("4.16.5"),
            "no entry for the version: not enabled"
        );
        assert!(!fg.enabled("4.16.3", "Other"));
        assert!(!FeatureGate::default().accept_risks("4.16.3"));
        let out = serde_json::to_value(&fg).expect("serializes");
        assert_eq!(out["kind"], "FeatureGate");
        assert_eq!(
            out["status"]["featureGates"][0]["enabled"][0]["name"],
            "ClusterUpdateAcceptRisks"
        );
    }
}
