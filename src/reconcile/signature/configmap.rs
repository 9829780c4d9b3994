//! Signatures kept in ConfigMaps of `openshift-config-managed` labelled
//! `release.openshift.io/verification-signatures`: reading them (every `binaryData` key that
//! starts with `<algo>-<hex>`), and the ConfigMaps the CVO writes.
//!
//! Upstream: `pkg/verify/store/configmap/configmap.go` (the `signatures-managed` ConfigMap the
//! CVO persists verified signatures into, keys `<algo>-<hex>-<i>` from 0) and
//! `GetSignaturesAsConfigmap` in `pkg/verify/configmap.go` (one ConfigMap per digest named
//! `<algo>-<hex>`, keys from 1, what `oc adm release mirror` writes), openshift/library-go.

use std::collections::BTreeMap;

use k8s_openapi::{ByteString, api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ObjectMeta};

use super::config::CONFIG_MANAGED_NAMESPACE;

/// Label of a ConfigMap holding release signatures.
pub const SIGNATURES_LABEL: &str = "release.openshift.io/verification-signatures";
/// Name of the ConfigMap the CVO saves verified signatures into.
pub const MANAGED_SIGNATURES_NAME: &str = "signatures-managed";
/// How often upstream saves verified signatures: every 2 reconcile intervals (`pkg/cvo/cvo.go`
/// `Run` in openshift/cluster-version-operator); the engine multiplies its interval.
pub const PERSIST_INTERVALS: u32 = 2;
/// Least time between two LISTs of signature ConfigMaps (upstream's limiter).
pub const RELIST_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);

/// `<algo>-<hex>` for a digest `algo:hex` (colons are not allowed in ConfigMap keys).
///
/// # Errors
/// `the provided digest must be of the form ALGO:HASH`.
pub fn digest_key_prefix(digest: &str) -> Result<String, String> {
    match digest.split_once(':') {
        Some((algo, hex)) if !algo.is_empty() && !hex.is_empty() && !hex.contains(':') => {
            Ok(format!("{algo}-{hex}"))
        }
        _ => Err("the provided digest must be of the form ALGO:HASH".to_string()),
    }
}

/// Whether `cm` is a signature ConfigMap (namespace and label).
pub fn is_signature_config_map(cm: &ConfigMap) -> bool {
    cm.metadata.namespace.as_deref() == Some(CONFIG_MANAGED_NAMESPACE)
        && cm
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(SIGNATURES_LABEL))
}

/// The signatures for `digest` in `config_maps` (only signature ConfigMaps count), as
/// `(where, bytes)` with `where` = `config map NS/NAME key KEY`, ConfigMaps by name, keys in
/// order.
pub fn signatures_in(config_maps: &[ConfigMap], digest: &str) -> Vec<(String, Vec<u8>)> {
    let Ok(prefix) = digest_key_prefix(digest) else {
        return Vec::new();
    };
    let mut cms: Vec<&ConfigMap> = config_maps
        .iter()
        .filter(|c| is_signature_config_map(c))
        .collect();
    cms.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut out = Vec::new();
    for cm in cms {
        let name = cm.metadata.name.as_deref().unwrap_or_default();
        for (k, v) in cm.binary_data.iter().flatten() {
            if k.starts_with(&prefix) {
                out.push((
                    format!("config map {CONFIG_MANAGED_NAMESPACE}/{name} key {k}"),
                    v.0.clone(),
                ));
            }
        }
    }
    out
}

fn signature_meta(name: String) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(CONFIG_MANAGED_NAMESPACE.to_string()),
        labels: Some(BTreeMap::from([(SIGNATURES_LABEL.to_string(), String::new())])),
        ..ObjectMeta::default()
    }
}

/// The `openshift-config-managed/signatures-managed` ConfigMap holding `signatures` (verified
/// signatures by digest, e.g. [`super::Verifier::signatures`]): label
/// `release.openshift.io/verification-signatures: ""`, `binaryData` keys `<algo>-<hex>-<i>`
/// with `i` from 0. Pure; the engine creates or updates it in active-apply.
///
/// # Errors
/// A digest that is not `ALGO:HASH`.
pub fn managed_signatures_config_map(
    signatures: &BTreeMap<String, Vec<Vec<u8>>>,
) -> Result<ConfigMap, String> {
    let mut data = BTreeMap::new();
    for (digest, sigs) in signatures {
        let prefix = digest_key_prefix(digest)?;
        for (i, s) in sigs.iter().enumerate() {
            data.insert(format!("{prefix}-{i}"), ByteString(s.clone()));
        }
    }
    Ok(ConfigMap {
        metadata: signature_meta(MANAGED_SIGNATURES_NAME.to_string()),
        binary_data: Some(data),
        ..ConfigMap::default()
    })
}

/// One digest's signatures as their own ConfigMap: name `<algo>-<hex>`, keys
/// `<algo>-<hex>-<n>` with `n` from 1 (the form release mirroring tools write).
///
/// # Errors
/// A digest that is not `ALGO:HASH`.
pub fn digest_signatures_config_map(digest: &str, signatures: &[Vec<u8>]) -> Result<ConfigMap, String> {
    let prefix = digest_key_prefix(digest)?;
    let data = signatures
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("{prefix}-{}", i + 1), ByteString(s.clone())))
        .collect();
    Ok(ConfigMap {
        metadata: signature_meta(prefix),
        binary_data: Some(data),
        ..ConfigMap::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7";

    #[test]
    fn the_managed_config_map_is_upstreams_shape_and_reads_back() {
        let sigs = BTreeMap::from([(D.to_string(), vec![b"one".to_vec(), b"two".to_vec()])]);
        let cm = managed_signatures_config_map(&sigs).expect("valid digest");
        let v = serde_json::to_value(&cm).expect("json");
        assert_eq!(v["metadata"]["name"], "signatures-managed");
        assert_eq!(v["metadata"]["namespace"], "openshift-config-managed");
        assert_eq!(
            v["metadata"]["labels"]["release.openshift.io/verification-signatures"],
            ""
        );
        let keys: Vec<&String> = cm.binary_data.as_ref().expect("data").keys().collect();
        assert_eq!(
            keys,
            [
                "sha256-e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7-0",
                "sha256-e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7-1"
            ]
        );
        // base64 on the wire, as binaryData is.
        assert_eq!(
            v["binaryData"]["sha256-e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7-0"],
            "b25l"
        );
        let found = signatures_in(&[cm], D);
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].1, b"two");
        assert!(
            found[0]
                .0
                .starts_with("config map openshift-config-managed/signatures-managed key sha256-e3f1"),
            "{}",
            found[0].0
        );
    }

    #[test]
    fn per_digest_config_maps_count_from_one_and_need_the_label() {
        let mut cm = digest_signatures_config_map(D, &[b"x".to_vec()]).expect("valid digest");
        assert_eq!(
            cm.metadata.name.as_deref(),
            Some("sha256-e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7")
        );
        assert!(
            cm.binary_data
                .as_ref()
                .expect("data")
                .contains_key(&format!("{}-1", cm.metadata.name.clone().unwrap_or_default()))
        );
        assert_eq!(signatures_in(std::slice::from_ref(&cm), D).len(), 1);
        assert!(signatures_in(std::slice::from_ref(&cm), "sha256:ffff").is_empty());
        cm.metadata.labels = None;
        assert!(signatures_in(&[cm], D).is_empty());
        assert_eq!(
            digest_key_prefix("sha256"),
            Err("the provided digest must be of the form ALGO:HASH".to_string())
        );
    }
}
