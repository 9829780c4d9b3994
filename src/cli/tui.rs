//! `cvo tui`, and `cvo` with no subcommand: the dashboard on the cluster of the kubeconfig (or
//! on `--from` snapshot files). On a live cluster it drives the embedded reconcile engine,
//! watch-only at start: the engine takes the release the ClusterVersion is at (or moving to),
//! gets its payload (`--payload DIR` or the release image from its registry), and computes what
//! the CVO would apply without writing. The `m` key switches to active-apply, which takes the
//! CVO Lease only when no other holder is alive (upstream's CVO campaigns for the same Lease,
//! `pkg/start/start.go` in openshift/cluster-version-operator).

use std::{collections::BTreeSet, path::PathBuf, process::ExitCode, sync::Arc};

use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, GroupVersionKind},
};

use super::{args::RegistryArgs, runtime};
use crate::reconcile::{
    Engine, EngineConfig, EngineTimings,
    api::{EngineHandle, EngineMode, LocalPayloads, PayloadResolver},
};

/// What the live engine of the dashboard reads from the cluster at start, as upstream's CVO
/// takes it: the release its CVO works toward (ClusterVersion `status.desired.image`, else
/// `spec.desiredUpdate.image`), which the engine takes as its own release, the feature set and the enabled feature gates of that version
/// (FeatureGate `cluster`), and the cluster profile (the in-cluster CVO Deployment's
/// `CLUSTER_PROFILE`, else upstream's default). Capabilities and overrides the engine reads
/// from the ClusterVersion itself on every turn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterInputs {
    /// The release image the cluster is at or moving to (`None`: no ClusterVersion, or no
    /// image in it).
    pub target_image: Option<String>,
    /// Its version, if known.
    pub target_version: Option<String>,
    /// `spec.featureSet` of FeatureGate `cluster` (`""`: Default).
    pub feature_set: String,
    /// The gates `status.featureGates` lists as enabled for the target version.
    pub feature_gates: BTreeSet<String>,
    /// The cluster profile.
    pub profile: String,
}

/// Reads the [`ClusterInputs`] (three GETs; a missing object leaves its defaults).
///
/// # Errors
/// The ClusterVersion cannot be read (other than absent), one line naming it.
pub async fn cluster_inputs(client: &Client) -> anyhow::Result<ClusterInputs> {
    let mut out = ClusterInputs {
        profile: crate::reconcile::payload::filter::DEFAULT_CLUSTER_PROFILE.to_string(),
        ..ClusterInputs::default()
    };
    let cvs: Api<crate::openshift::ClusterVersion> = Api::all(client.clone());
    let cv = cvs
        .get_opt("version")
        .await
        .map_err(|e| anyhow::anyhow!("reading ClusterVersion version: {e}"))?;
    if let Some(cv) = cv {
        // The release the cluster's CVO works toward: the engine plays that CVO (its own
        // release), and a spec.desiredUpdate on top makes it the target, as upstream.
        let spec = cv.spec.desired_update.as_ref();
        let status = cv.status.desired.clone();
        out.target_image = Some(status.image.clone())
            .filter(|i| !i.is_empty())
            .or_else(|| spec.and_then(|d| d.image.clone()).filter(|i| !i.is_empty()));
        out.target_version = Some(status.version.clone())
            .filter(|v| !v.is_empty())
            .or_else(|| spec.and_then(|d| d.version.clone()).filter(|v| !v.is_empty()));
    }
    let fg = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("config.openshift.io", "v1", "FeatureGate"),
        "featuregates",
    );
    let fgs: Api<DynamicObject> = Api::all_with(client.clone(), &fg);
    if let Ok(Some(g)) = fgs.get_opt("cluster").await {
        let (set, gates) = feature_gates(&g.data, out.target_version.as_deref());
        out.feature_set = set;
        out.feature_gates = gates;
    }
    let deps: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(client.clone(), "openshift-cluster-version");
    if let Ok(Some(d)) = deps.get_opt("cluster-version-operator").await {
        let env = d
            .spec
            .template
            .spec
            .into_iter()
            .flat_map(|p| p.containers)
            .flat_map(|c| c.env.unwrap_or_default());
        if let Some(p) = env
            .filter(|e| e.name == "CLUSTER_PROFILE")
            .find_map(|e| e.value.filter(|v| !v.is_empty()))
        {
            out.profile = p;
        }
    }
    Ok(out)
}

/// `spec.featureSet` and the enabled gates of `version` (else of the first listed version)
/// from a FeatureGate's body.
fn feature_gates(data: &serde_json::Value, version: Option<&str>) -> (String, BTreeSet<String>) {
    let set = data
        .pointer("/spec/featureSet")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    let lists = data
        .pointer("/status/featureGates")
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default();
    let pick = lists
        .iter()
        .find(|l| version.is_some() && l.get("version").and_then(|v| v.as_str()) == version)
        .or_else(|| lists.first());
    let gates = pick
        .and_then(|l| l.get("enabled"))
        .and_then(|e| e.as_array())
        .into_iter()
        .flatten()
        .filter_map(|g| g.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .collect();
    (set, gates)
}

/// Where the live engine's payloads come from.
#[derive(Clone, Debug)]
pub enum PayloadSource {
    /// `--payload DIR`: this directory is the payload of the cluster's target release (read
    /// at start); any other release is pulled.
    Dir(PathBuf),
    /// No `--payload`: release images from their registries (the cluster's
    /// pull secret unless `--registry-auth` is given).
    Registry,
}

/// The engine configuration of the dashboard on a live cluster: watch-only at start, never
/// creating a ClusterVersion, campaigning for the CVO Lease (upstream HA timings) only after
/// a confirmed switch to active-apply.
///
/// # Errors
/// Unusable registry flags (an unreadable `--registry-auth`); a `--payload` directory that
/// does not exist.
pub fn engine_config(
    client: &Client,
    inputs: &ClusterInputs,
    payload: &PayloadSource,
    registry: &RegistryArgs,
    timings: EngineTimings,
) -> anyhow::Result<EngineConfig> {
    let local = match payload {
        PayloadSource::Dir(dir) => {
            if !dir.is_dir() {
                anyhow::bail!("--payload {}: not a directory", dir.display());
            }
            let pseudo = LocalPayloads::pseudo_pull_spec(dir)
                .map_err(|e| anyhow::anyhow!("--payload {}: {e}", dir.display()))?;
            LocalPayloads {
                own_image: inputs.target_image.clone().unwrap_or(pseudo),
                own_dir: dir.clone(),
                ..LocalPayloads::default()
            }
        }
        PayloadSource::Registry => LocalPayloads {
            own_image: inputs.target_image.clone().unwrap_or_default(),
            ..LocalPayloads::default()
        },
    };
    let payloads: Arc<dyn PayloadResolver> = super::payload::cluster_payloads(
        client.clone(),
        local,
        super::payload::retrieve_options(registry)?,
        registry.registry_auth.is_some(),
        "version",
    );
    let mut cfg = EngineConfig::local(std::env::temp_dir(), Some(payloads.own_image()))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    cfg.payloads = payloads;
    cfg.mode = EngineMode::WatchOnly;
    cfg.create_cluster_version = false;
    cfg.timings = timings;
    cfg.load_options.profile = inputs.profile.clone();
    cfg.load_options.required_feature_set = inputs.feature_set.clone();
    cfg.load_options.enabled_feature_gates = inputs.feature_gates.clone();
    cfg.lease = Some(crate::reconcile::LeaseConfig::cvo(
        crate::reconcile::default_identity(),
        crate::reconcile::LeaseTimings::HA,
    ));
    Ok(cfg)
}

/// Reads the [`ClusterInputs`] and spawns the watch-only engine on `client`, with watches of
/// its own.
///
/// # Errors
/// As [`cluster_inputs`] and [`engine_config`].
pub async fn spawn_engine(
    client: Client,
    payload: &PayloadSource,
    registry: &RegistryArgs,
    timings: EngineTimings,
) -> anyhow::Result<EngineHandle> {
    spawn_engine_sharing(client, None, payload, registry, timings).await
}

/// [`spawn_engine`] reading its ClusterVersion, ClusterOperators and Lease from the process's
/// `informers` when given (`cvo tui`: the dashboard's feed reads the same ones, so each kind
/// is watched once).
///
/// # Errors
/// As [`cluster_inputs`] and [`engine_config`].
pub async fn spawn_engine_sharing(
    client: Client,
    informers: Option<&crate::informers::Informers>,
    payload: &PayloadSource,
    registry: &RegistryArgs,
    timings: EngineTimings,
) -> anyhow::Result<EngineHandle> {
    let inputs = cluster_inputs(&client).await?;
    tracing::info!(?inputs, "dashboard engine: cluster inputs");
    let mut cfg = engine_config(&client, &inputs, payload, registry, timings)?;
    cfg.informers = informers.cloned();
    Ok(Engine::spawn(client, cfg))
}

/// The payload flag as a [`PayloadSource`]: the directory given, else the registry.
pub fn payload_source(flag: Option<&std::path::Path>) -> PayloadSource {
    match flag {
        Some(p) => PayloadSource::Dir(p.to_path_buf()),
        None => PayloadSource::Registry,
    }
}

/// `cvo tui` / `cvo`: the dashboard; on a live cluster with the embedded engine unless
/// `--no-engine`.
///
/// # Errors
/// Usage errors of `--now`; a `--payload` that is not a release image root (checked first);
/// a file or cluster that cannot be read; bad engine flags; a terminal failure.
pub fn run(a: super::args::TuiArgs) -> anyhow::Result<ExitCode> {
    let (now, alerts) = a.view.now_and_alerts()?;
    // Before the terminal is taken: a bad directory would otherwise only leave the engine off,
    // with the reason in the log file.
    if let Some(p) = a
        .payload
        .as_deref()
        .filter(|_| !a.no_engine && !a.view.source.is_snapshot())
    {
        super::payload::check_payload_dir(p)?;
    }
    let rt = runtime()?;
    rt.block_on(async {
        let mut requests = None;
        let mut engine = None;
        let feed = if a.view.source.is_snapshot() {
            crate::cluster::static_feed(crate::cluster::snapshot::load(&a.view.source.from)?)
        } else {
            let conn = a.view.source.cluster.connect().await?;
            // One registry for the process: the feed and the engine share its watches.
            let informers = crate::informers::Informers::new(conn.client.clone());
            if !a.no_engine {
                let source = payload_source(a.payload.as_deref());
                match spawn_engine_sharing(
                    conn.client.clone(),
                    Some(&informers),
                    &source,
                    &a.registry,
                    EngineTimings::upstream(),
                )
                .await
                {
                    Ok(h) => engine = Some(h),
                    // An unreachable API or a cluster without a ClusterVersion still gets the
                    // dashboard (which says what it cannot see); only the engine views are off.
                    Err(e) => tracing::warn!("the engine did not start: {e:#}"),
                }
            }
            if engine.is_none() && !a.read_only {
                requests = Some(super::request_writer::spawn(
                    conn.client.clone(),
                    "version".into(),
                ));
            }
            crate::cluster::live::watch_state_from(&informers, conn.context)
        };
        let handle = engine.clone();
        let r = crate::ui::run(crate::ui::UiOptions {
            feed,
            alerts,
            now,
            engine,
            requests,
            read_only: a.read_only,
            clock: crate::clock::Clock::wall(),
            release_source: None,
            banner: None,
            back_leaves: false,
        })
        .await;
        if let Some(h) = handle {
            // Releases the Lease if the engine took it.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(10), h.shutdown()).await;
        }
        r
    })?;
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_gates_of_the_target_version() {
        let fg = serde_json::json!({
            "spec": {"featureSet": "TechPreviewNoUpgrade"},
            "status": {"featureGates": [
                {"version": "4.16.3", "enabled": [{"name": "A"}], "disabled": [{"name": "B"}]},
                {"version": "4.16.4", "enabled": [{"name": "B"}, {"name": "C"}]}
            ]}
        });
        let (set, gates) = feature_gates(&fg, Some("4.16.4"));
        assert_eq!(set, "TechPreviewNoUpgrade");
        assert_eq!(gates.into_iter().collect::<Vec<_>>(), ["B", "C"]);
        let (_, first) = feature_gates(&fg, Some("9.9.9"));
        assert_eq!(first.into_iter().collect::<Vec<_>>(), ["A"]);
        let (set, none) = feature_gates(&serde_json::json!({}), None);
        assert_eq!((set.as_str(), none.len()), ("", 0));
    }

    #[test]
    fn a_payload_flag_is_a_directory_or_the_registry() {
        let dir = std::env::temp_dir();
        assert!(matches!(payload_source(Some(&dir)), PayloadSource::Dir(d) if d == dir));
        assert!(matches!(payload_source(None), PayloadSource::Registry));
    }
}
