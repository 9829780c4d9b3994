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

/// Upstream's CRD files, as embedded.
const CRD_FILES: [(&str, &str); 2] = [
    (
        "0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
        include_str!(
            "../../../assets/crds/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml"
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

/// The embedded CRD of the built-in kind `group`/`plural`, if the simulator has one.
pub fn crd_of(group: &str, plural: &str) -> Option<&'static Value> {
    crds()
        .iter()
        .find(|c| c["spec"]["group"] == group && c["spec"]["names"]["plural"] == plural)
}

/// The `openAPIV3Schema` of `version` of the built-in kind `group`/`plural`, if its CRD is
/// embedded.
pub fn schema_of(group: &str, plural: &str, version: &str) -> Option<&'static Value> {
    crd_of(group, plural)?["spec"]["versions"]
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
        let cv = schema_of("config.openshift.io", "clusterversions", "v1").expect("cv schema");
        assert_eq!(cv["required"], serde_json::json!(["spec"]));
        let co = schema_of("config.openshift.io", "clusteroperators", "v1").expect("co schema");
        assert_eq!(co["properties"]["spec"]["type"], "object");
        assert!(schema_of("config.openshift.io", "clusterversions", "v2").is_none());
        assert!(crd_of("", "configmaps").is_none());
    }
}
