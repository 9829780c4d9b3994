//! `cvo operator start`: the headless operator, in place of the upstream operator's process
//! (`cmd/cluster-version-operator/start.go`, `pkg/start/start.go` in
//! openshift/cluster-version-operator). It runs the same engine as `cvo reconcile` (one
//! [`Engine::spawn`] over the cluster of the in-cluster config or a kubeconfig), forever:
//!
//! - active-apply holding the CVO Lease `NAMESPACE/NAME` (upstream's timings, SNO when the
//!   Infrastructure says `controlPlaneTopology: SingleReplica`), or `--watch-only`: a second
//!   opinion that never takes the Lease and never writes;
//! - `/metrics` (upstream's cluster families and the engine's `cvo_` ones, see
//!   [`crate::reconcile::metrics`]), `/readyz` and `/healthz` on `--listen`: HTTPS with
//!   `--serving-cert-file`/`--serving-key-file` (reloaded on change), `/metrics` only for
//!   scrapers the API server authenticates and authorizes (`--metrics-auth kube`); plain HTTP
//!   only with `--insecure-http`;
//! - logs as text or JSON on stderr, and in daily rotated files with `--log-dir`;
//! - SIGTERM / SIGINT: the engine stops starting tasks, stops writing and releases the Lease,
//!   within [`GRACE`] (upstream's 2 minutes); exit 0. An engine that stops on its own exits 1.

pub mod endpoint;
pub mod events;
pub mod health;
pub mod logs;
pub mod scrape_auth;
pub mod tls_files;

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, sync::Arc, time::Duration};

use clap::{Args, Subcommand};

use self::{health::Health, logs::LogFormat};
use super::args::{KubeconfigArgs, RegistryArgs, UpdateServiceArgs};
use crate::reconcile::{
    Engine, EngineConfig, EngineTimings, LeaseConfig, LeaseTimings,
    api::{EngineMode, LocalPayloads, PayloadResolver, StatusSnapshot},
    metrics::{Installer, Metrics},
};

/// Upstream's graceful shutdown: the engine has this long to stop after SIGTERM (the pod's
/// `terminationGracePeriodSeconds` is 130).
pub const GRACE: Duration = Duration::from_secs(120);
/// How often the API server is probed (`GET /version`) for readiness.
pub const PROBE_EVERY: Duration = Duration::from_secs(5);
/// How often the API server is probed while it does not answer.
pub const PROBE_RETRY: Duration = Duration::from_secs(1);
/// How long one probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// `cvo operator` subcommands.
#[derive(Subcommand, Debug)]
pub enum OperatorCommand {
    /// Run the operator: reconcile the cluster to its release, serve metrics and health.
    Start(Box<StartArgs>),
}

/// Flags of `cvo operator start` (upstream's names where upstream has the flag).
#[derive(Args, Debug)]
pub struct StartArgs {
    /// The release image this operator runs (upstream's required flag); without --payload its
    /// payload is pulled from the registry.
    #[arg(long, value_name = "PULLSPEC", required_unless_present = "payload")]
    pub release_image: Option<String>,
    /// The release payload directory (`manifests/` + `release-manifests/`) instead of pulling
    /// --release-image (upstream reads `/` of its own image).
    #[arg(long, value_name = "DIR")]
    pub payload: Option<PathBuf>,
    /// Address of the metrics and health endpoint.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:9099")]
    pub listen: SocketAddr,
    /// PEM certificate (chain) for HTTPS on --listen.
    #[arg(long, value_name = "FILE", requires = "serving_key_file")]
    pub serving_cert_file: Option<PathBuf>,
    /// PEM private key for HTTPS on --listen.
    #[arg(long, value_name = "FILE", requires = "serving_cert_file")]
    pub serving_key_file: Option<PathBuf>,
    /// Serve --listen over plain HTTP, without certificates (local runs and tests only).
    #[arg(long, conflicts_with_all = ["serving_cert_file", "serving_key_file"])]
    pub insecure_http: bool,
    /// Who may read /metrics: `kube`, callers the API server authenticates (client certificate
    /// of the cluster's client CA, or bearer token via TokenReview) and authorizes for get on
    /// /metrics (SubjectAccessReview); `none`, anyone (local runs and tests only).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = MetricsAuth::Kube)]
    pub metrics_auth: MetricsAuth,
    /// Name of the ClusterVersion and of the Lease (upstream `CVO_NAME`).
    #[arg(long, env = "CVO_NAME", value_name = "NAME", default_value = "version")]
    pub name: String,
    /// The node this pod runs on (upstream `--node-name`/`NODE_NAME`), logged at start.
    #[arg(long, env = "NODE_NAME", value_name = "N")]
    pub node_name: Option<String>,
    /// Never write and never take the Lease: report what would change (drift) in metrics and
    /// logs, beside the operator that applies.
    #[arg(long)]
    pub watch_only: bool,
    /// Log format on stderr and in --log-dir.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Also write logs into daily rotated files in this directory (7 kept).
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// Lease duration in seconds (default upstream's: 137, or 270 on a single-replica control
    /// plane); the renew deadline and retry period keep upstream's proportions.
    #[arg(long, value_name = "SECS")]
    pub lease_duration: Option<u32>,
    /// Seconds between reconciling passes (default upstream's: random in [120, 240)).
    #[arg(long, value_name = "SECS")]
    pub resync_interval: Option<f64>,
    #[command(flatten)]
    pub cluster: KubeconfigArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub updates: UpdateServiceArgs,
}

impl StartArgs {
    /// Namespace of the CVO Lease and events: `-n/--namespace`, else `CVO_NAMESPACE` (upstream's
    /// variable), else `openshift-cluster-version`.
    pub fn namespace(&self) -> String {
        self.cluster
            .namespace
            .clone()
            .or_else(|| std::env::var("CVO_NAMESPACE").ok().filter(|v| !v.is_empty()))
            .unwrap_or_else(|| "openshift-cluster-version".to_owned())
    }
}

/// `--metrics-auth`: who may read `/metrics`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricsAuth {
    /// TokenReview / client certificate, then SubjectAccessReview (upstream's protection).
    Kube,
    /// No check.
    None,
}

/// The endpoint's transport from the flags: the certificate pair, or `None` with
/// `--insecure-http`.
///
/// # Errors
/// [`super::UsageError`] naming the flags when neither certificates nor `--insecure-http` are
/// given, or when `--insecure-http` would carry bearer tokens in clear (`--metrics-auth kube`).
pub fn transport(a: &StartArgs) -> anyhow::Result<Option<(PathBuf, PathBuf)>> {
    match (&a.serving_cert_file, &a.serving_key_file, a.insecure_http) {
        (Some(c), Some(k), false) => Ok(Some((c.clone(), k.clone()))),
        (_, _, true) if a.metrics_auth == MetricsAuth::Kube => Err(super::UsageError(
            "--insecure-http: scrapers' bearer tokens would cross the network in clear; add \
             --metrics-auth=none, or serve HTTPS with --serving-cert-file/--serving-key-file"
                .into(),
        )
        .into()),
        (_, _, true) => Ok(None),
        _ => Err(super::UsageError(format!(
            "--listen {}: HTTPS needs --serving-cert-file and --serving-key-file (plain HTTP only \
             with --insecure-http)",
            a.listen
        ))
        .into()),
    }
}

/// `cvo operator ...`.
///
/// # Errors
/// As [`start`].
pub fn run(cmd: OperatorCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        OperatorCommand::Start(a) => start(*a),
    }
}

/// Lease timings from `--lease-duration`: upstream's HA proportions (107/137, 26/137).
fn lease_timings(secs: u32) -> anyhow::Result<LeaseTimings> {
    let d = Duration::from_secs(u64::from(secs.max(1)));
    LeaseTimings::new(d, d.mul_f64(107.0 / 137.0), d.mul_f64(26.0 / 137.0))
        .map_err(|e| super::UsageError(format!("--lease-duration {secs}: {e}")).into())
}

/// The `RetrievedUpdates=False` reason and message of an operator started without an update
/// service (neither `--fetch-updates` nor `--update-service`): upstream's reason for "no update
/// service set", with cvo's message saying how to enable retrieval.
pub fn not_fetched() -> (String, String) {
    (NOT_FETCHED_REASON.to_string(), NOT_FETCHED_MESSAGE.to_string())
}

/// The reason [`not_fetched`] writes (upstream's `NoUpstream`).
pub const NOT_FETCHED_REASON: &str = "NoUpstream";
/// The message [`not_fetched`] writes.
pub const NOT_FETCHED_MESSAGE: &str = "This cvo operator was started without --fetch-updates or --update-service, so it does not retrieve available updates; the updates listed, if any, are not refreshed. Start it with --fetch-updates (spec.upstream, or the default update service) or --update-service URL to retrieve them.";

/// `cvo operator start`: runs until SIGTERM / SIGINT (exit 0) or the engine stops (exit 1).
///
/// # Errors
/// Bad flag values (usage), a payload directory that is not one, unusable serving
/// certificates, a port that cannot be bound, a kubeconfig that cannot be used, a logger that
/// cannot be installed.
pub fn start(a: StartArgs) -> anyhow::Result<ExitCode> {
    let _log = logs::init(a.log_format, a.log_dir.as_deref())?;
    if let Some(p) = &a.payload {
        super::payload::check_payload_dir(p)?;
    }
    let lease_override = a.lease_duration.map(lease_timings).transpose()?;
    let mut timings = EngineTimings::upstream();
    if let Some(s) = a.resync_interval {
        if !(s.is_finite() && s > 0.0) {
            return Err(
                super::UsageError(format!("--resync-interval {s}: must be a positive number")).into(),
            );
        }
        timings.resync_interval = Duration::from_secs_f64(s);
    }
    let reloader = match transport(&a)? {
        Some((c, k)) => Some(tls_files::Reloader::load(&c, &k)?),
        None => None,
    };
    let retrieve = super::payload::retrieve_options(&a.registry)?;
    let rt = super::runtime()?;
    let code = rt.block_on(async move {
        let stop = crate::signals::StopSignals::install(false)?.next();
        let metrics = Metrics::new();
        metrics.set_update_service(a.updates.update_service.clone());
        let health = Arc::new(Health::default());
        let server = endpoint::Server::bind(a.listen, reloader.as_ref().map(tls_files::Reloader::live)).await?;
        let addr = server.local_addr()?;
        let scheme = server.scheme();
        tracing::info!(
            listen = %addr,
            scheme,
            node = a.node_name.as_deref().unwrap_or(""),
            watch_only = a.watch_only,
            metrics_auth = ?a.metrics_auth,
            "cvo operator starting"
        );
        let conn = a.cluster.connect().await?;
        let client = counting_client(conn.client.clone(), metrics.clone());
        // One registry for the process: the engine and the metrics share its watches.
        let informers = crate::informers::Informers::new(client.clone());
        let updates = a.updates.config(timings.resync_interval, Some(&client))?;
        // The update service this operator asks (each answer's URL is in the engine's log).
        let service = match &updates {
            Some(u) => u
                .upstream_override
                .clone()
                .unwrap_or_else(|| "spec.upstream, else the default update service".into()),
            None => "none: available updates are not retrieved (RetrievedUpdates=False NoUpstream)".into(),
        };
        tracing::info!(update_service = %service, "available updates");
        // The own payload from a directory or from its registry; every other release image
        // (a desired update) from its registry, verified.
        let local = match (&a.payload, &a.release_image) {
            (Some(dir), image) => LocalPayloads {
                own_image: match image {
                    Some(i) => i.clone(),
                    None => LocalPayloads::pseudo_pull_spec(dir)
                        .map_err(|e| anyhow::anyhow!("--payload {}: {e}", dir.display()))?,
                },
                own_dir: dir.clone(),
                ..LocalPayloads::default()
            },
            (None, Some(image)) => LocalPayloads {
                own_image: image.clone(),
                ..LocalPayloads::default()
            },
            (None, None) => anyhow::bail!("--release-image or --payload is required"),
        };
        let payloads: Arc<dyn PayloadResolver> = super::payload::cluster_payloads(
            client.clone(),
            local,
            retrieve,
            a.registry.registry_auth.is_some(),
            &a.name,
        );
        let own_image = payloads.own_image();
        let mut cfg = EngineConfig::local(std::env::temp_dir(), Some(own_image.clone()))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        cfg.payloads = payloads;
        cfg.cluster_version_name = a.name.clone();
        if updates.is_none() {
            cfg.updates_not_fetched = Some(not_fetched());
        }
        cfg.update_graph = updates;
        cfg.mode = if a.watch_only {
            EngineMode::WatchOnly
        } else {
            EngineMode::ActiveApply
        };
        if !a.watch_only {
            let lt = match lease_override {
                Some(t) => t,
                None => LeaseTimings::for_topology(single_replica(&client).await),
            };
            let mut lc = LeaseConfig::cvo(crate::reconcile::default_identity(), lt);
            lc.namespace = a.namespace();
            lc.name = a.name.clone();
            tracing::info!(identity = %lc.identity, lease = %format!("{}/{}", lc.namespace, lc.name), "leader election");
            cfg.lease = Some(lc);
        }
        cfg.timings = timings;
        cfg.informers = Some(informers.clone());
        let h = Engine::spawn(client.clone(), cfg);

        let kube_auth = a.metrics_auth == MetricsAuth::Kube;
        let tls_task = reloader.map(|r| {
            let client = kube_auth.then(|| client.clone());
            // The first poll of the client CA is at once.
            tokio::spawn(r.run(client))
        });
        let http_task = tokio::spawn(server.serve(endpoint::State {
            metrics: metrics.clone(),
            health: health.clone(),
            auth: kube_auth.then(|| Arc::new(scrape_auth::ScrapeAuth::new(client.clone()))),
        }));
        let feed_task = tokio::spawn(observe_cluster(
            informers.clone(),
            conn.context.clone(),
            metrics.clone(),
            health.clone(),
        ));
        let probe_task = tokio::spawn(probe_api(client.clone(), health.clone()));
        let installer_task = tokio::spawn(observe_installer(client.clone(), metrics.clone()));
        // The ready line (tests and scripts wait for it).
        // A closed stdout is no reason to stop serving.
        let _ = crate::cli::out::println(&format!("cvo operator serving {scheme}://{addr}"));

        let (ev_tx, ev_rx) = tokio::sync::mpsc::channel(64);
        let events_task = tokio::spawn(events::record(client.clone(), a.namespace(), a.name.clone(), ev_rx));
        let mut decider = events::Decider::default();

        let mut status = h.status.clone();
        tokio::pin!(stop);
        let outcome = loop {
            let snap: Arc<StatusSnapshot> = status.borrow_and_update().clone();
            metrics.observe(&snap, &own_image);
            health.update(|x| x.observe_engine(&snap));
            for n in decider.next(&snap) {
                let _ = ev_tx.try_send(n);
            }
            tokio::select! {
                r = status.changed() => {
                    if r.is_err() {
                        health.update(|x| x.engine_stopped = true);
                        tracing::error!("the engine stopped");
                        break Err(());
                    }
                }
                sig = &mut stop => {
                    tracing::info!(signal = sig.name(), grace_seconds = GRACE.as_secs(), "stopping: the engine stops starting tasks, stops writing and releases the Lease");
                    break Ok(());
                }
            }
        };
        let started = std::time::Instant::now();
        if tokio::time::timeout(GRACE, h.clone().shutdown()).await.is_err() {
            tracing::warn!("the engine did not stop within {}s; aborted it", GRACE.as_secs());
            h.abort().await;
        }
        tracing::info!(seconds = format!("{:.2}", started.elapsed().as_secs_f64()), "stopped");
        for t in [http_task, feed_task, probe_task, installer_task, events_task].into_iter().chain(tls_task) {
            t.abort();
        }
        anyhow::Ok(if outcome.is_ok() { ExitCode::SUCCESS } else { ExitCode::from(super::EXIT_FAILURE) })
    });
    rt.shutdown_timeout(Duration::from_secs(2));
    code
}

/// Whether the Infrastructure `cluster` says `controlPlaneTopology: SingleReplica` (upstream
/// then uses the SNO Lease timings); `false` when it cannot be read.
async fn single_replica(client: &kube::Client) -> bool {
    use kube::{
        api::{ApiResource, DynamicObject},
        core::GroupVersionKind,
    };
    let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "config.openshift.io",
        "v1",
        "Infrastructure",
    ));
    let api: kube::Api<DynamicObject> = kube::Api::all_with(client.clone(), &ar);
    match tokio::time::timeout(PROBE_TIMEOUT, api.get_opt("cluster")).await {
        Ok(Ok(Some(o))) => o.data["status"]["controlPlaneTopology"] == "SingleReplica",
        _ => false,
    }
}

/// A client that counts every request in `cvo_api_requests_total{verb, code}`.
fn counting_client(client: kube::Client, metrics: Metrics) -> kube::Client {
    let ns = client.default_namespace().to_string();
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let client = client.clone();
        let metrics = metrics.clone();
        async move {
            let verb = crate::reconcile::runtime::client::verb_of(
                req.method(),
                req.uri().path(),
                req.uri().query().unwrap_or_default(),
            );
            let r = client.send(req).await;
            metrics.api_request(verb, r.as_ref().map_or(0, |resp| resp.status().as_u16()));
            r
        }
    });
    kube::Client::new(svc, ns)
}

/// Keeps the upstream families' inputs current from the cluster watches (ClusterVersion,
/// ClusterOperators, ...) and readiness informed of the watches' health; counts watch
/// failures in `cvo_watch_restarts_total`.
async fn observe_cluster(
    informers: crate::informers::Informers,
    context: String,
    metrics: Metrics,
    health: Arc<Health>,
) {
    let mut feed = crate::cluster::live::watch_state_from(&informers, context);
    let mut failing = false;
    loop {
        let state = feed.borrow_and_update().clone();
        metrics.set_cluster(state.cluster_version.clone(), state.cluster_operators.clone());
        let now_failing = matches!(
            &state.feed,
            crate::cluster::FeedStatus::Live { error: Some(_), .. }
        );
        if now_failing && !failing {
            metrics.watch_restart();
        }
        failing = now_failing;
        health.update(|h| h.observe_feed(state.feed.clone()));
        if feed.changed().await.is_err() {
            return;
        }
    }
}

/// Probes the API server every [`PROBE_EVERY`] for readiness, and every [`PROBE_RETRY`]
/// (jittered ±20 %) while it does not answer, so readiness follows its return closely. Logs
/// a failure once per distinct message and the recovery once.
async fn probe_api(client: kube::Client, health: Arc<Health>) {
    let mut failing: Option<String> = None;
    loop {
        let r = match tokio::time::timeout(PROBE_TIMEOUT, client.apiserver_version()).await {
            Err(_) => Err(format!("no answer within {}s", PROBE_TIMEOUT.as_secs())),
            Ok(Ok(_) | Err(kube::Error::Api(_))) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
        };
        let next = match &r {
            Ok(()) => {
                if failing.take().is_some() {
                    tracing::info!("API server probe: answered again");
                }
                PROBE_EVERY
            }
            Err(e) => {
                if failing.as_ref() != Some(e) {
                    tracing::warn!("API server probe: {e}");
                    failing = Some(e.clone());
                }
                crate::clock::jittered(PROBE_RETRY, 0.2)
            }
        };
        health.update(|h| h.api = Some(r));
        tokio::time::sleep(next).await;
    }
}

/// Reads the installer ConfigMaps (`openshift-config/openshift-install`, else
/// `openshift-install-manifests`) for `cluster_installer`, at start and every 10 minutes.
async fn observe_installer(client: kube::Client, metrics: Metrics) {
    use k8s_openapi::api::core::v1::ConfigMap;
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client, "openshift-config");
    let mut tick = tokio::time::interval(Duration::from_secs(600));
    loop {
        tick.tick().await;
        let mut found = Installer::Unknown;
        for (name, kind) in [
            ("openshift-install", "openshift-install"),
            ("openshift-install-manifests", "other"),
        ] {
            match api.get_opt(name).await {
                Ok(Some(cm)) => {
                    let data = cm.data.unwrap_or_default();
                    found = Installer::Known {
                        kind,
                        version: data.get("version").cloned(),
                        invoker: data.get("invoker").cloned(),
                    };
                    break;
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::debug!("reading ConfigMap openshift-config/{name}: {e}");
                    break;
                }
            }
        }
        metrics.set_installer(found);
    }
}
