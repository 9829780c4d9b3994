//! Where a verifier's keys and stores come from: the `release-verification` ConfigMap of the
//! release payload (also present in the cluster as `openshift-config-managed/
//! release-verification`), `spec.signatureStores` of the ClusterVersion, or files given to the
//! CLI.
//!
//! Upstream: `NewFromConfigMapData` in `pkg/verify/configmap.go` of openshift/library-go,
//! `loadReleaseVerifierFromConfigMap` in `pkg/cvo/cvo.go` and `pkg/customsignaturestore/
//! customsignaturestore.go` in openshift/cluster-version-operator.

use std::{
    collections::BTreeMap,
    fmt,
    path::{Path, PathBuf},
};

use k8s_openapi::api::core::v1::ConfigMap;
use serde::Deserialize as _;

use super::openpgp::Keyring;
use crate::openshift::config_v1::SignatureStore;

/// Annotation marking the payload ConfigMap that configures verification.
pub const VERIFICATION_CONFIG_MAP_ANNOTATION: &str = "release.openshift.io/verification-config-map";
/// Namespace of the verification ConfigMap and of signature ConfigMaps.
pub const CONFIG_MANAGED_NAMESPACE: &str = "openshift-config-managed";
/// Name of the verification ConfigMap in the cluster.
pub const VERIFICATION_CONFIG_MAP_NAME: &str = "release-verification";
/// Namespace of the CA bundles `spec.signatureStores[].ca` names (key `ca.crt`).
pub const SIGNATURE_STORE_CA_NAMESPACE: &str = "openshift-config";
/// Data-key prefix of a keyring in the verification ConfigMap.
pub const KEY_PREFIX: &str = "verifier-public-key-";
/// Data-key prefix of a store URL in the verification ConfigMap.
pub const STORE_PREFIX: &str = "store-";

/// A configuration that cannot be used, with upstream's wording (`pkg/verify/configmap.go`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Where signatures for a digest are looked up: `<url>/<algo>=<hex>/signature-<N>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreLocation {
    /// An `http://` or `https://` store (trailing `/` removed).
    Http(String),
    /// A `file://` store: the directory (relative paths resolve against the working directory).
    File(PathBuf),
}

/// One signature store and, for `spec.signatureStores`, the CA bundle (PEM) that signs its
/// certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Store {
    /// Where it is.
    pub location: StoreLocation,
    /// PEM certificates trusted for this store, on top of none (they replace the system roots).
    pub ca_pem: Option<String>,
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            StoreLocation::Http(u) => f.write_str(u),
            StoreLocation::File(p) => write!(f, "file://{}", p.display()),
        }
    }
}

impl Store {
    /// Parses a store URL (`file://`, `http://`, `https://`; surrounding blanks trimmed).
    ///
    /// # Errors
    /// `must be a valid URL with scheme file://, http://, or https://`.
    pub fn parse(url: &str) -> Result<Store, ConfigError> {
        let url = url.trim();
        let bad = || ConfigError("must be a valid URL with scheme file://, http://, or https://".to_string());
        if let Some(path) = url.strip_prefix("file://") {
            if path.is_empty() {
                return Err(bad());
            }
            return Ok(Store {
                location: StoreLocation::File(PathBuf::from(path.trim_end_matches('/'))),
                ca_pem: None,
            });
        }
        let parsed = reqwest::Url::parse(url).map_err(|_| bad())?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(bad());
        }
        Ok(Store {
            location: StoreLocation::Http(url.trim_end_matches('/').to_string()),
            ca_pem: None,
        })
    }
}

/// Keyrings and default stores: what the verification ConfigMap provides.
#[derive(Clone, Debug)]
pub struct VerifierConfig {
    /// Every keyring must have signed a release; sorted by name.
    pub keyrings: Vec<Keyring>,
    /// The default stores, in data-key order.
    pub stores: Vec<Store>,
}

impl VerifierConfig {
    /// Reads the `data` of a verification ConfigMap: `verifier-public-key-*` keyrings (armored
    /// or binary) and `store-*` URLs; other keys are ignored with a warning. `src` names the
    /// ConfigMap in errors (`the config map openshift-config-managed/release-verification`).
    ///
    /// # Errors
    /// An invalid key or store, no store, or no key, worded as upstream.
    pub fn from_data(src: &str, data: &BTreeMap<String, String>) -> Result<VerifierConfig, ConfigError> {
        let mut keyrings = Vec::new();
        let mut stores = Vec::new();
        for (k, v) in data {
            if k.starts_with(KEY_PREFIX) {
                let ring = Keyring::parse(k, v.as_bytes()).map_err(|e| {
                    ConfigError(format!(
                        "{src} has an invalid key {k:?} that must be a GPG public key: {e}"
                    ))
                })?;
                keyrings.push(ring);
            } else if k.starts_with(STORE_PREFIX) {
                let store = Store::parse(v)
                    .map_err(|e| ConfigError(format!("{src} has an invalid key {k:?}: {e}")))?;
                stores.push(store);
            } else {
                tracing::warn!(
                    "An unexpected key was found in {src} and will be ignored (expected store-* or verifier-public-key-*): {k}"
                );
            }
        }
        if stores.is_empty() {
            return Err(ConfigError(format!(
                "{src} did not provide any signature stores to read from and cannot be used"
            )));
        }
        if keyrings.is_empty() {
            return Err(ConfigError(format!(
                "{src} did not provide any GPG public keys to verify signatures from and cannot be used"
            )));
        }
        Ok(VerifierConfig { keyrings, stores })
    }

    /// Reads a verification ConfigMap object (its `data`), named `the config map NS/NAME`.
    ///
    /// # Errors
    /// As [`VerifierConfig::from_data`].
    pub fn from_config_map(cm: &ConfigMap) -> Result<VerifierConfig, ConfigError> {
        let src = format!(
            "the config map {}/{}",
            cm.metadata.namespace.as_deref().unwrap_or_default(),
            cm.metadata.name.as_deref().unwrap_or_default()
        );
        VerifierConfig::from_data(&src, &cm.data.clone().unwrap_or_default())
    }

    /// Keyrings from files (each file one keyring, named by its file name) and store URLs, for
    /// `cvo payload verify`.
    ///
    /// # Errors
    /// A file that cannot be read or holds no public key, or a bad store URL (named).
    pub fn from_files(keys: &[PathBuf], stores: &[String]) -> Result<VerifierConfig, ConfigError> {
        let mut keyrings = Vec::new();
        for path in keys {
            let data = std::fs::read(path).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            let ring = Keyring::parse(&name, &data)
                .map_err(|e| ConfigError(format!("{}: not a GPG public key: {e}", path.display())))?;
            keyrings.push(ring);
        }
        keyrings.sort_by(|a, b| a.name().cmp(b.name()));
        let stores = stores
            .iter()
            .map(|s| Store::parse(s).map_err(|e| ConfigError(format!("store {s:?}: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(VerifierConfig { keyrings, stores })
    }
}

/// `spec.signatureStores` resolved: `None` when unset (the default stores apply), `Some(vec)`
/// otherwise (an empty list is an error at verification time, as upstream). `ca_bundle(name)`
/// returns the `ca.crt` of the ConfigMap `openshift-config/<name>`, if any.
///
/// # Errors
/// A store URL that is not http(s), named by its index.
pub fn custom_stores(
    spec: Option<&[SignatureStore]>,
    ca_bundle: impl Fn(&str) -> Option<String>,
) -> Result<Option<Vec<Store>>, ConfigError> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(spec.len());
    for (i, s) in spec.iter().enumerate() {
        let mut store = Store::parse(&s.url).map_err(|e| {
            ConfigError(format!(
                "ClusterVersion spec.signatureStores[{i}].url {:?}: {e}",
                s.url
            ))
        })?;
        if matches!(store.location, StoreLocation::File(_)) {
            return Err(ConfigError(format!(
                "ClusterVersion spec.signatureStores[{i}].url {:?}: must be an http:// or https:// URL",
                s.url
            )));
        }
        store.ca_pem =
            s.ca.as_ref()
                .filter(|c| !c.name.is_empty())
                .and_then(|c| ca_bundle(&c.name));
        out.push(store);
    }
    Ok(Some(out))
}

/// The verification ConfigMap of a payload directory: the first (in file-name order) ConfigMap
/// manifest under `release-manifests/` annotated [`VERIFICATION_CONFIG_MAP_ANNOTATION`];
/// `Ok(None)` when there is none (upstream then rejects every update: "verification is not
/// possible").
///
/// # Errors
/// A directory that cannot be listed, or a matching manifest that cannot be parsed (named).
pub fn find_in_payload(dir: &Path) -> Result<Option<ConfigMap>, ConfigError> {
    let manifests = if dir.join("release-manifests").is_dir() {
        dir.join("release-manifests")
    } else {
        dir.to_path_buf()
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&manifests)
        .map_err(|e| ConfigError(format!("{}: {e}", manifests.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        })
        .collect();
    files.sort();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if !text.contains(VERIFICATION_CONFIG_MAP_ANNOTATION) {
            continue;
        }
        for doc in serde_norway::Deserializer::from_str(&text) {
            // Documents of other kinds fail to deserialize as a ConfigMap: skip them.
            let Ok(cm) = ConfigMap::deserialize(doc) else {
                continue;
            };
            let annotated = cm
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(VERIFICATION_CONFIG_MAP_ANNOTATION));
            if annotated {
                return Ok(Some(cm));
            }
        }
    }
    Ok(None)
}
