//! The CustomResourceDefinitions behind the OpenShift kinds the simulator serves built in.
//!
//! On a cluster, `clusterversions.config.openshift.io` and `clusteroperators.config.openshift.io`
//! are CRDs: kube-apiserver prunes, defaults and validates their objects against the CRDs'
//! `openAPIV3Schema` (with the `x-kubernetes-validations` rules) and prints them with their
//! `additionalPrinterColumns`. The simulator serves both kinds without a stored CRD, so it
//! takes the same schemas and columns from upstream's CRDs, embedded here
//! (`assets/crds/`, from openshift/api `config/v1/zz_generated.crd-manifests/`).

use std::sync::OnceLock;

use serde_json::Value;

/// Upstream's CRD files, as embedded: ClusterVersion has one per feature set (the
/// `release.openshift.io/feature-set` annotation says which), ClusterOperator one for all.
const CRD_FILES: [(&str, &str); 5] = [
    (
        "0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
        include_str!(
            "../../../assets/crds/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml"
        ),
    ),
    (
        "0000_00_cluster-version-operator_01_clusterversions-CustomNoUpgrade.crd.yaml",
        include_str!(
            "../../../assets/crds/0000_00_cluster-version-operator_01_clusterversions-CustomNoUpgrade.crd.yaml"
        ),
    ),
    (
        "0000_00_cluster-version-operator_01_clusterversions-TechPreviewNoUpgrade.crd.yaml",
        include_str!(
            "../../../assets/crds/0000_00_cluster-version-operator_01_clusterversions-TechPreviewNoUpgrade.crd.yaml"
        ),
    ),
    (
        "0000_00_cluster-version-operator_01_clusterversions-DevPreviewNoUpgrade.crd.yaml",
        include_str!(
            "../../../assets/crds/0000_00_cluster-version-operator_01_clusterversions-DevPreviewNoUpgrade.crd.yaml"
        ),
    ),
    (
        "0000_00_cluster-version-operator_01_clusteroperators.crd.yaml",
        include_str!("../../../assets/crds/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml"),
    ),
];

/// The embedded CRDs, parsed once. A file that does not parse is left out (and its kind
/// served without a schema); the unit test below keeps that from happening.
fn crds() -> &'static [Value] {
    static CRDS: OnceLock<Vec<Value>> = OnceLock::new();
    CRDS.get_or_init(|| {
        CRD_FILES
            .iter()
            .filter_map(|(file, text)| match serde_norway::from_str::<Value>(text) {
                Ok(v) => Some(v),
                Err(e) => {
                    tracing::warn!("embedded CRD {file} does not parse: {e}");
                    None
                }
            })
            .collect()
    })
}

/// The embedded CRD of the built-in kind `group`/`plural` for the cluster's feature set
/// (`FeatureGate` `cluster` `spec.featureSet`: `""` is `Default`), if the simulator has one.
/// A kind with one CRD for every feature set has no annotation; a feature set without its
/// own file falls back to `Default`'s.
pub fn crd_of(group: &str, plural: &str, feature_set: &str) -> Option<&'static Value> {
    let wanted = if feature_set.is_empty() {
        "Default"
    } else {
        feature_set
    };
    let of_kind = || {
        crds()
            .iter()
            .filter(move |c| c["spec"]["group"] == group && c["spec"]["names"]["plural"] == plural)
    };
    let set_of = |c: &Value| {
        c["metadata"]["annotations"]["release.openshift.io/feature-set"]
            .as_str()
            .map(str::to_owned)
    };
    of_kind()
        .find(|c| set_of(c).is_none_or(|s| s == wanted))
        .or_else(|| of_kind().find(|c| set_of(c).as_deref() == Some("Default")))
}

/// The `openAPIV3Schema` of `version` of the built-in kind `group`/`plural` for
/// `feature_set` (see [`crd_of`]), if its CRD is embedded.
pub fn schema_of(group: &str, plural: &str, version: &str, feature_set: &str) -> Option<&'static Value> {
    crd_of(group, plural, feature_set)?["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == version)
        .map(|v| &v["schema"]["openAPIV3Schema"])
        .filter(|s| s.is_object())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_crds_parse_and_have_schemas() {
        assert_eq!(crds().len(), CRD_FILES.len());
        let cv = schema_of("config.openshift.io", "clusterversions", "v1", "").expect("cv schema");
        assert_eq!(cv["required"], serde_json::json!(["spec"]));
        let accept = |set: &str| {
            schema_of("config.openshift.io", "clusterversions", "v1", set).expect("cv schema")["properties"]
                ["spec"]["properties"]["desiredUpdate"]["properties"]
                .get("acceptRisks")
                .is_some()
        };
        // acceptRisks is behind a feature gate: absent from the Default CRD.
        assert_eq!(
            [
                accept(""),
                accept("Default"),
                accept("CustomNoUpgrade"),
                accept("TechPreviewNoUpgrade"),
                accept("OKD")
            ],
            [false, false, true, true, false]
        );
        for set in ["", "CustomNoUpgrade"] {
            let co = schema_of("config.openshift.io", "clusteroperators", "v1", set).expect("co schema");
            assert_eq!(co["properties"]["spec"]["type"], "object");
        }
        assert!(schema_of("config.openshift.io", "clusterversions", "v2", "").is_none());
        assert!(crd_of("", "configmaps", "").is_none());
    }
}
