//! [`ClusterVerifier`]: the engine's release verifier on a cluster. The keys and default
//! stores come from the own release payload's verification ConfigMap, the stores from the
//! ClusterVersion's `spec.signatureStores` (re-read on each verification; a change rebuilds
//! the verifier), the HTTP clients from the cluster's proxy and trusted CA bundle, and the
//! signature ConfigMaps of `openshift-config-managed` are listed again at most every
//! [`RELIST_INTERVAL`]. What verified is saved into `signatures-managed` when the engine asks
//! ([`ReleaseVerifier::persist`], active-apply only).
//!
//! Upstream: `loadReleaseVerifierFromConfigMap` and `Run` in `pkg/cvo/cvo.go`,
//! `pkg/customsignaturestore/customsignaturestore.go` in openshift/cluster-version-operator;
//! `pkg/verify/store/configmap/configmap.go` and `pkg/verify/persist.go` in openshift/library-go.

use std::{
    collections::BTreeMap,
    path::Path,
    sync::{Arc, Mutex},
};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams},
};
use tokio::time::Instant;

use super::{
    Verifier,
    config::{CONFIG_MANAGED_NAMESPACE, ConfigError, SIGNATURE_STORE_CA_NAMESPACE, find_in_payload},
    configmap::{MANAGED_SIGNATURES_NAME, RELIST_INTERVAL, SIGNATURES_LABEL, managed_signatures_config_map},
};
use crate::openshift::config_v1::SignatureStore;
use crate::reconcile::payload::retrieve::{ReleaseVerifier, egress::ClusterEgress};

/// Field manager of the `signatures-managed` writes.
const FIELD_MANAGER: &str = "cluster-version-operator";

/// `verify_release` mapped to the engine's hook: `Ok(())` when the digest verified, the
/// [`super::VerifyError`] text otherwise (it names the stores and keys tried).
impl ReleaseVerifier for Verifier {
    fn verify<'a>(&'a self, pullspec: &'a str, digest: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.verify_release(pullspec, digest)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    }
}

/// What the own payload says about verification, once known.
enum Own {
    /// The own payload is not known yet (being pulled).
    Unknown,
    /// Its verification ConfigMap (`None`: there is none, every update is rejected), or why it
    /// cannot be used.
    Known(Box<Result<Option<ConfigMap>, ConfigError>>),
}

/// The verifier built last and what it was built from.
#[derive(Default)]
struct Built {
    /// `spec.signatureStores` (JSON, `null` when unset) and the CA bundles they name, plus the
    /// egress: a different value rebuilds the verifier (and forgets its cache).
    key: Option<String>,
    verifier: Option<Arc<Verifier>>,
    /// When the signature ConfigMaps were listed last.
    listed_at: Option<Instant>,
    /// The signature ConfigMaps listed last.
    config_maps: Vec<ConfigMap>,
}

/// The engine's verifier on a cluster (see the module documentation). Reads go through the
/// client given to [`ClusterVerifier::new`]; the save goes through the engine's client.
pub struct ClusterVerifier {
    client: kube::Client,
    cluster_version: String,
    own: Mutex<Own>,
    built: tokio::sync::Mutex<Built>,
    /// The `signatures-managed` content saved last (saved again only when it changes).
    saved: Mutex<Option<BTreeMap<String, Vec<Vec<u8>>>>>,
}

impl std::fmt::Debug for ClusterVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterVerifier")
            .field("cluster_version", &self.cluster_version)
            .finish_non_exhaustive()
    }
}

impl ClusterVerifier {
    /// A verifier reading the ClusterVersion `cluster_version`, ConfigMaps and the Proxy
    /// through `client`; its keys come from the own payload ([`ReleaseVerifier::own_payload`]).
    pub fn new(client: kube::Client, cluster_version: &str) -> Self {
        Self {
            client,
            cluster_version: cluster_version.to_string(),
            own: Mutex::new(Own::Unknown),
            built: tokio::sync::Mutex::new(Built::default()),
            saved: Mutex::new(None),
        }
    }

    /// The verification ConfigMap of the own payload, `Err` while it is unknown or unusable.
    fn verification(&self) -> Result<Option<ConfigMap>, String> {
        match &*self.own.lock().unwrap_or_else(|p| p.into_inner()) {
            Own::Unknown => Err("the release verifier is not configured yet: the payload of the running release is not loaded".into()),
            Own::Known(known) => match known.as_ref() {
                Ok(cm) => Ok(cm.clone()),
                Err(e) => Err(e.to_string()),
            },
        }
    }

    /// `spec.signatureStores` of the ClusterVersion: `None` when unset (or no ClusterVersion),
    /// `Some(vec![])` when an empty list (which fails every verification, as upstream).
    async fn signature_stores(&self) -> Result<Option<Vec<SignatureStore>>, String> {
        use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
        // Read untyped: an empty list and an unset field differ here.
        let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(
            "config.openshift.io",
            "v1",
            "ClusterVersion",
        ));
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &ar);
        let cv = api
            .get_opt(&self.cluster_version)
            .await
            .map_err(|e| format!("reading ClusterVersion {}: {e}", self.cluster_version))?;
        match cv.as_ref().and_then(|o| o.data.pointer("/spec/signatureStores")) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|e| {
                format!(
                    "ClusterVersion {} spec.signatureStores: {e}",
                    self.cluster_version
                )
            }),
        }
    }

    /// The `ca.crt` of each ConfigMap `openshift-config/<name>` the stores name.
    async fn store_cas(&self, stores: &[SignatureStore]) -> BTreeMap<String, String> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), SIGNATURE_STORE_CA_NAMESPACE);
        let mut out = BTreeMap::new();
        for name in stores
            .iter()
            .filter_map(|s| s.ca.as_ref().map(|c| c.name.clone()))
            .filter(|n| !n.is_empty())
        {
            if out.contains_key(&name) {
                continue;
            }
            match api.get_opt(&name).await {
                Ok(Some(cm)) => {
                    if let Some(ca) = cm.data.and_then(|d| d.get("ca.crt").cloned()) {
                        out.insert(name, ca);
                    }
                }
                Ok(None) => {
                    tracing::warn!("signature store CA {SIGNATURE_STORE_CA_NAMESPACE}/{name} does not exist")
                }
                Err(e) => tracing::warn!("reading {SIGNATURE_STORE_CA_NAMESPACE}/{name}: {e}"),
            }
        }
        out
    }

    /// The signature ConfigMaps of `openshift-config-managed`, or `None` when the list fails
    /// (the previous list is kept).
    async fn list_signature_config_maps(&self) -> Option<Vec<ConfigMap>> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), CONFIG_MANAGED_NAMESPACE);
        match api.list(&ListParams::default().labels(SIGNATURES_LABEL)).await {
            Ok(l) => Some(l.items),
            Err(e) => {
                tracing::warn!("listing signature config maps in {CONFIG_MANAGED_NAMESPACE}: {e}");
                None
            }
        }
    }

    /// The verifier for the cluster as it is now: rebuilt when `spec.signatureStores`, their
    /// CAs or the egress changed, with the signature ConfigMaps re-listed when
    /// [`RELIST_INTERVAL`] has passed.
    async fn current(&self) -> Result<Arc<Verifier>, String> {
        let verification = self.verification()?;
        let stores = self.signature_stores().await?;
        let cas = self.store_cas(stores.as_deref().unwrap_or_default()).await;
        let egress = ClusterEgress::read(&self.client).await;
        let key = serde_json::json!({
            "stores": stores,
            "cas": cas,
            "egress": format!("{egress:?}"),
        })
        .to_string();
        let mut built = self.built.lock().await;
        if built.listed_at.is_none_or(|t| t.elapsed() >= RELIST_INTERVAL)
            && let Some(cms) = self.list_signature_config_maps().await
        {
            built.config_maps = cms;
            built.listed_at = Some(Instant::now());
            if let Some(v) = &built.verifier {
                v.set_signature_config_maps(built.config_maps.clone());
            }
        }
        if built.key.as_deref() != Some(key.as_str()) || built.verifier.is_none() {
            let v = build(
                verification.as_ref(),
                stores.as_deref(),
                &cas,
                egress,
                built.config_maps.clone(),
            )
            .map_err(|e| e.to_string())?;
            tracing::info!("{}", v.describe());
            built.verifier = Some(Arc::new(v));
            built.key = Some(key);
        }
        built
            .verifier
            .clone()
            .ok_or_else(|| "the release verifier could not be built".to_string())
    }

    /// Creates or updates `openshift-config-managed/signatures-managed` with the signatures
    /// verified so far, through `client`, when they changed since the last save.
    ///
    /// # Errors
    /// The write failed (the next call tries again).
    pub async fn save(&self, client: &kube::Client) -> Result<(), String> {
        let Some(v) = self.built.lock().await.verifier.clone() else {
            return Ok(());
        };
        let sigs = v.signatures();
        if sigs.is_empty() {
            return Ok(());
        }
        if self
            .saved
            .lock()
            .map(|s| s.as_ref() == Some(&sigs))
            .unwrap_or(false)
        {
            return Ok(());
        }
        let mut cm = managed_signatures_config_map(&sigs)?;
        cm.metadata.managed_fields = None;
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), CONFIG_MANAGED_NAMESPACE);
        let mut value = serde_json::to_value(&cm).map_err(|e| e.to_string())?;
        value["apiVersion"] = "v1".into();
        value["kind"] = "ConfigMap".into();
        api.patch(
            MANAGED_SIGNATURES_NAME,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(value),
        )
        .await
        .map_err(|e| format!("saving {CONFIG_MANAGED_NAMESPACE}/{MANAGED_SIGNATURES_NAME}: {e}"))?;
        tracing::info!(
            "saved {} verified release signature(s) into {CONFIG_MANAGED_NAMESPACE}/{MANAGED_SIGNATURES_NAME}",
            sigs.values().map(Vec::len).sum::<usize>()
        );
        if let Ok(mut s) = self.saved.lock() {
            *s = Some(sigs);
        }
        Ok(())
    }
}

/// A verifier from the verification ConfigMap, the stores, their CAs and the egress.
fn build(
    verification: Option<&ConfigMap>,
    stores: Option<&[SignatureStore]>,
    cas: &BTreeMap<String, String>,
    egress: ClusterEgress,
    config_maps: Vec<ConfigMap>,
) -> Result<Verifier, ConfigError> {
    let Some(cm) = verification else {
        return Ok(Verifier::reject());
    };
    let custom = super::config::custom_stores(stores, |name| cas.get(name).cloned())?;
    Verifier::with_egress(super::VerifierConfig::from_config_map(cm)?, egress)?
        .with_custom_stores(custom)
        .map(|v| v.with_signature_config_maps(config_maps))
}

impl ReleaseVerifier for ClusterVerifier {
    fn verify<'a>(&'a self, pullspec: &'a str, digest: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let v = self.current().await?;
            v.verify_release(pullspec, digest)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    }

    fn own_payload(&self, dir: &Path) {
        let mut own = self.own.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(*own, Own::Unknown) {
            let found = find_in_payload(dir);
            match &found {
                Ok(Some(cm)) => tracing::info!(
                    "release verification keys from {}/{} of the payload {}",
                    cm.metadata.namespace.as_deref().unwrap_or_default(),
                    cm.metadata.name.as_deref().unwrap_or_default(),
                    dir.display()
                ),
                Ok(None) => tracing::warn!(
                    "the payload {} has no release verification config map: updates to other release images are refused unless forced",
                    dir.display()
                ),
                Err(e) => tracing::warn!("release verification config map of {}: {e}", dir.display()),
            }
            *own = Own::Known(Box::new(found));
        }
    }

    fn persist<'a>(&'a self, client: &'a kube::Client) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self.save(client))
    }
}
