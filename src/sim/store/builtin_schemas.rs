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

/// One embedded upstream CRD file: the kind it defines and the feature set it is for.
struct CrdFile {
    file: &'static str,
    group: &'static str,
    plural: &'static str,
    /// Its `release.openshift.io/feature-set` annotation; `None`: one CRD for every set.
    feature_set: Option<&'static str>,
    text: &'static str,
}

macro_rules! crd_file {
    ($file:literal, $plural:literal, $set:expr) => {
        CrdFile {
            file: $file,
            group: "config.openshift.io",
            plural: $plural,
            feature_set: $set,
            text: include_str!(concat!("../../../assets/crds/", $file)),
        }
    };
}

/// Upstream's CRD files, as embedded: ClusterVersion has one per feature set, ClusterOperator
/// one for all.
const CRD_FILES: [CrdFile; 5] = [
    crd_file!(
        "0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
        "clusterversions",
        Some("Default")
    ),
    crd_file!(
        "0000_00_cluster-version-operator_01_clusterversions-CustomNoUpgrade.crd.yaml",
        "clusterversions",
        Some("CustomNoUpgrade")
    ),
    crd_file!(
        "0000_00_cluster-version-operator_01_clusterversions-TechPreviewNoUpgrade.crd.yaml",
        "clusterversions",
        Some("TechPreviewNoUpgrade")
    ),
    crd_file!(
        "0000_00_cluster-version-operator_01_clusterversions-DevPreviewNoUpgrade.crd.yaml",
        "clusterversions",
        Some("DevPreviewNoUpgrade")
    ),
    crd_file!(
        "0000_00_cluster-version-operator_01_clusteroperators.crd.yaml",
        "clusteroperators",
        None
    ),
];

/// Embedded CRD `i` of [`CRD_FILES`], parsed on first use (a process parses only the ones its
/// cluster's feature set needs: each is about 0.3 MB once parsed). A file that does not parse
/// is `None` (and its kind served without a schema); the unit test below keeps that from
/// happening.
fn parsed(i: usize) -> Option<&'static Value> {
    static PARSED: [OnceLock<Option<Value>>; 5] = [const { OnceLock::new() }; 5];
    let f = &CRD_FILES[i];
    PARSED[i]
        .get_or_init(|| match serde_norway::from_str::<Value>(f.text) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!("embedded CRD {} does not parse: {e}", f.file);
                None
            }
        })
        .as_ref()
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
    let of_kind = |set: &str| {
        CRD_FILES
            .iter()
            .position(|f| f.group == group && f.plural == plural && f.feature_set.is_none_or(|s| s == set))
    };
    parsed(of_kind(wanted).or_else(|| of_kind("Default"))?)
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
        for (i, f) in CRD_FILES.iter().enumerate() {
            let crd = parsed(i).unwrap_or_else(|| panic!("{} parses", f.file));
            assert_eq!(
                crd["metadata"]["annotations"]["release.openshift.io/feature-set"].as_str(),
                f.feature_set,
                "{}",
                f.file
            );
            assert_eq!(
                (
                    crd["spec"]["group"].as_str(),
                    crd["spec"]["names"]["plural"].as_str()
                ),
                (Some(f.group), Some(f.plural))
            );
        }
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
