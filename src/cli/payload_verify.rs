//! `cvo payload verify DIGEST|PULLSPEC@DIGEST`: is a release signed by every configured key?
//! Keys and stores come from files and URLs (`--keys`, `--store`), or from the cluster
//! (`--from-cluster`: the `openshift-config-managed/release-verification` ConfigMap,
//! `spec.signatureStores` with their CA bundles, and the signature ConfigMaps), flags
//! replacing what the cluster says. Verification itself is `reconcile::signature`.

use std::{collections::BTreeMap, process::ExitCode, time::Duration};

use crate::l10n::trf;
use anyhow::Context as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client,
    api::{ListParams, ObjectList},
};

use super::{UsageError, args::VerifyArgs};
use crate::{
    openshift::config_v1::SignatureStore,
    reconcile::signature::{
        Verifier, VerifierConfig, VerifyError,
        config::{
            CONFIG_MANAGED_NAMESPACE, SIGNATURE_STORE_CA_NAMESPACE, VERIFICATION_CONFIG_MAP_NAME,
            custom_stores,
        },
        configmap::SIGNATURES_LABEL,
    },
};

/// Runs `cvo payload verify`: prints which keyring accepted which signature (exit 0), or why
/// the release is not verified, naming every store and key tried (exit 1).
///
/// # Errors
/// Usage errors (no keys or stores without `--from-cluster`, bad timeout), unreadable key
/// files, bad store URLs, an unreachable cluster.
pub fn run(a: VerifyArgs) -> anyhow::Result<ExitCode> {
    if !a.from_cluster && (a.keys.is_empty() || a.stores.is_empty()) {
        return Err(UsageError("give --keys FILE and --store URL, or --from-cluster".to_string()).into());
    }
    let timeout = match a.timeout {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(UsageError(format!("--timeout {s}: must be a positive number")).into());
        }
        Some(s) => Some(Duration::from_secs_f64(s)),
        None => None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let verifier = build(&a).await?;
        let verifier = match timeout {
            Some(t) => verifier.with_timeout(t),
            None => verifier,
        };
        tracing::info!("{}", verifier.describe());
        match verifier.verify(&a.release).await {
            Ok(ok) => {
                let mut text = trf!("verify-verified", "verified {digest}", digest = ok.digest);
                text.push('\n');
                for by in &ok.by {
                    text += &trf!(
                        "verify-signed-by",
                        "  {keyring}: key {key} signed {identity} ({source})",
                        keyring = by.keyring,
                        key = by.key,
                        identity = by.identity,
                        source = by.source
                    );
                    text.push('\n');
                }
                super::out::print(&text)?;
                Ok(ExitCode::SUCCESS)
            }
            Err(e @ (VerifyError::InvalidDigest(_) | VerifyError::NoDigest)) => {
                Err(UsageError(format!("{}: {e}", a.release)).into())
            }
            Err(e) => {
                super::out::println(&trf!(
                    "verify-not-verified",
                    "not verified: {e}",
                    e = e.to_string()
                ))?;
                Ok(ExitCode::from(super::EXIT_FAILURE))
            }
        }
    })
}

/// The verifier of the flags: files and URLs, over what the cluster says with `--from-cluster`.
async fn build(a: &VerifyArgs) -> anyhow::Result<Verifier> {
    let from_files = VerifierConfig::from_files(&a.keys, &a.stores)?;
    if !a.from_cluster {
        return Ok(Verifier::new(from_files)?);
    }
    let conn = a.cluster.connect().await?;
    let client = conn.client;
    let managed: Api<ConfigMap> = Api::namespaced(client.clone(), CONFIG_MANAGED_NAMESPACE);
    let cm = managed
        .get_opt(VERIFICATION_CONFIG_MAP_NAME)
        .await
        .with_context(|| {
            format!("reading ConfigMap {CONFIG_MANAGED_NAMESPACE}/{VERIFICATION_CONFIG_MAP_NAME}")
        })?;
    let mut config = match &cm {
        Some(cm) => VerifierConfig::from_config_map(cm)?,
        None if !a.keys.is_empty() => VerifierConfig {
            keyrings: Vec::new(),
            stores: Vec::new(),
        },
        None => return Ok(Verifier::reject()),
    };
    if !a.keys.is_empty() {
        config.keyrings = from_files.keyrings;
    }
    let custom = if a.stores.is_empty() {
        let spec = signature_stores(&client).await?;
        let cas = ca_bundles(&client, spec.as_deref().unwrap_or_default()).await?;
        custom_stores(spec.as_deref(), |name| cas.get(name).cloned())?
    } else {
        config.stores = from_files.stores;
        None
    };
    let signatures: ObjectList<ConfigMap> = managed
        .list(&ListParams::default().labels(SIGNATURES_LABEL))
        .await
        .with_context(|| {
            format!("listing ConfigMaps in {CONFIG_MANAGED_NAMESPACE} labelled {SIGNATURES_LABEL}")
        })?;
    Ok(Verifier::new(config)?
        .with_custom_stores(custom)?
        .with_signature_config_maps(signatures.items))
}

/// `spec.signatureStores` of the ClusterVersion `version`, read raw so that unset (`None`) and
/// an empty list (`Some([])`) stay apart.
async fn signature_stores(client: &Client) -> anyhow::Result<Option<Vec<SignatureStore>>> {
    let req = http::Request::get("/apis/config.openshift.io/v1/clusterversions/version").body(Vec::new())?;
    let cv: serde_json::Value = client
        .request(req)
        .await
        .context("reading ClusterVersion version")?;
    match cv.pointer("/spec/signatureStores") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => Ok(Some(
            serde_json::from_value(v.clone()).context("ClusterVersion spec.signatureStores")?,
        )),
    }
}

/// `ca.crt` of each ConfigMap `openshift-config/<name>` the stores name (absent ones skipped).
async fn ca_bundles(client: &Client, stores: &[SignatureStore]) -> anyhow::Result<BTreeMap<String, String>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), SIGNATURE_STORE_CA_NAMESPACE);
    let mut out = BTreeMap::new();
    for name in stores
        .iter()
        .filter_map(|s| s.ca.as_ref().map(|c| c.name.clone()))
    {
        if name.is_empty() || out.contains_key(&name) {
            continue;
        }
        let cm = api
            .get_opt(&name)
            .await
            .with_context(|| format!("reading ConfigMap {SIGNATURE_STORE_CA_NAMESPACE}/{name}"))?;
        if let Some(ca) = cm.and_then(|c| c.data).and_then(|d| d.get("ca.crt").cloned()) {
            out.insert(name, ca);
        }
    }
    Ok(out)
}
