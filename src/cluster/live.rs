//! A live cluster: a `kube::Client` from kubeconfig or in-cluster config (as kubectl finds
//! them), a one-shot [`fetch_state`] for the CLI, and [`watch_state`], which keeps a
//! [`ClusterState`] current with kube-runtime watchers and reflectors.
//!
//! Each kind's informer ([`crate::informers`], shared with the process's other readers) relists
//! on an expired resourceVersion however it arrives, backs off with jitter per kind and never
//! ends on an error; errors are reported in [`FeedStatus::Live`] ("API unreachable since T")
//! until that kind lists or watches again.
//! The client's own retries of 429/503/504 are capped ([`CLIENT_RETRIES`]) so failures reach
//! the watch layer within one backoff step. `managedFields` are dropped before caching and
//! MachineConfigs are watched as metadata only, so the cache holds only what the assessment
//! reads.

use std::{fmt::Debug, path::Path, sync::Arc, time::Duration};

use k8s_openapi::api::{apps::v1::Deployment, core::v1::Node};
use kube::{
    Api, Client, Resource,
    api::ListParams,
    config::{KubeConfigOptions, Kubeconfig},
    core::PartialObjectMeta,
};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use super::{ClusterState, FeedError, FeedStatus, overrides::Overrides};
use crate::informers::{Informer, Informers, WATCH_TIMEOUT_SECS};
use crate::openshift::{ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool};

/// Namespace and name of the machine-config-operator Deployment.
const MCO_NAMESPACE: &str = "openshift-machine-config-operator";
const MCO_NAME: &str = "machine-config-operator";

/// A connected client and the name of the context it came from.
pub struct Connection {
    /// The client.
    pub client: Client,
    /// Context name, or `in-cluster`.
    pub context: String,
    /// The API server URL.
    pub server: String,
    /// The proxy the API traffic goes through, if any (credentials hidden) and where it was
    /// configured, e.g. `http://proxy:3128 from HTTPS_PROXY`.
    pub proxy: Option<String>,
    /// The credential, trusted authorities and proxy, for requests to the cluster's routes.
    pub http: super::overrides::HttpAccess,
}

impl Connection {
    /// The server, context and proxy for error messages: `URL (context "NAME")`, with
    /// `, through proxy P from SOURCE` inside the parentheses when a proxy is used.
    pub fn describe(&self) -> String {
        match &self.proxy {
            Some(p) => format!("{} (context {:?}, through proxy {p})", self.server, self.context),
            None => format!("{} (context {:?})", self.server, self.context),
        }
    }
}

/// Connects as kubectl does: `--kubeconfig FILE` if given, else `$KUBECONFIG` (several paths
/// merged) or `~/.kube/config`, else the in-cluster service account. `context` picks a
/// kubeconfig context (default: `current-context`). The API traffic goes through the proxy
/// kubectl would use ([`super::proxy`]: the cluster's `proxy-url`, else `HTTPS_PROXY` /
/// `HTTP_PROXY` unless `NO_PROXY` covers the server), also in a cluster.
///
/// # Errors
/// A one-line error naming the kubeconfig file or the context when it cannot be read, has no
/// such context, or yields no usable client configuration; naming the `proxy-url` field or
/// the environment variable when a proxy URL is unusable.
pub async fn connect(kubeconfig: Option<&Path>, context: Option<&str>) -> anyhow::Result<Connection> {
    connect_with(kubeconfig, context, &Overrides::default()).await
}

/// [`connect`] with the command line's [`Overrides`] applied to the configuration the
/// kubeconfig (or the in-cluster account) gives. With `--server` and neither a kubeconfig
/// nor an in-cluster account, the overrides alone make the configuration (as kubectl does).
///
/// # Errors
/// As [`connect`].
pub async fn connect_with(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    overrides: &Overrides,
) -> anyhow::Result<Connection> {
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..Default::default()
    };
    let from_env = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
    let (kc, origin) = if let Some(path) = kubeconfig {
        let kc = Kubeconfig::read_from(path)
            .map_err(|e| anyhow::anyhow!("kubeconfig {}: {}", path.display(), kubeconfig_error(&e)))?;
        (Some(kc), path.display().to_string())
    } else if let Some(paths) = &from_env {
        let origin = format!("{} (from KUBECONFIG)", paths.to_string_lossy());
        let kc = Kubeconfig::read()
            .map_err(|e| anyhow::anyhow!("kubeconfig {origin}: {}", kubeconfig_error(&e)))?;
        (Some(kc), origin)
    } else {
        let default = home_kubeconfig();
        let kc = match &default {
            Some(p) if p.exists() => Some(
                Kubeconfig::read_from(p)
                    .map_err(|e| anyhow::anyhow!("kubeconfig {}: {}", p.display(), kubeconfig_error(&e)))?,
            ),
            _ => None,
        };
        let origin = default
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "~/.kube/config".into());
        (kc, origin)
    };
    let env = |k: &str| std::env::var(k).ok();
    // A bad proxy variable is named before kube's loader (which reads HTTPS_PROXY) sees it.
    super::proxy::check_env(&env).map_err(anyhow::Error::msg)?;
    let mut proxy_field = None;
    let (config, context_name) = match kc {
        Some(mut kc) => {
            let name =
                checked_context(&kc, context).map_err(|e| anyhow::anyhow!("kubeconfig {origin}: {e}"))?;
            proxy_field = take_proxy_url(&mut kc, &name)
                .map(|(cluster, url)| (format!("kubeconfig {origin}: cluster {cluster:?} proxy-url"), url));
            let config = kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| match &e {
                    // With the kubeconfig's proxy-url taken out, kube's loader reads only the
                    // environment's proxy settings (and parses NO_PROXY more strictly than Go:
                    // an empty entry is an error there).
                    kube::config::KubeconfigError::ParseNoProxy(inner) => anyhow::anyhow!(
                        "NO_PROXY {:?}: {} (remove empty entries)",
                        env("NO_PROXY").or_else(|| env("no_proxy")).unwrap_or_default(),
                        one_line(inner)
                    ),
                    kube::config::KubeconfigError::ParseProxyUrl(inner) => anyhow::anyhow!(
                        "HTTPS_PROXY {:?}: not a URL ({})",
                        super::proxy::redact(
                            &env("HTTPS_PROXY")
                                .or_else(|| env("https_proxy"))
                                .unwrap_or_default()
                        ),
                        one_line(inner)
                    ),
                    _ => anyhow::anyhow!("kubeconfig {origin}: {}", one_line(&e)),
                })?;
            (config, name)
        }
        None if overrides.server.is_some() && context.is_none() && kube::Config::incluster().is_err() => {
            (kube::Config::new(http::Uri::default()), "--server".to_owned())
        }
        None => {
            if context.is_some() {
                anyhow::bail!("--context given but there is no kubeconfig at {origin}");
            }
            let config = kube::Config::incluster().map_err(|ic_err| {
                anyhow::anyhow!(
                    "no cluster to reach: no kubeconfig at {origin} and not running in a cluster ({}); \
                     use --kubeconfig, KUBECONFIG or --from PATH",
                    one_line(&ic_err)
                )
            })?;
            (config, "in-cluster".to_owned())
        }
    };
    let mut config = config;
    overrides.apply(&mut config);
    let server = config.cluster_url.to_string();
    let proxy = super::proxy::for_server(
        &config.cluster_url,
        proxy_field.as_ref().map(|(f, v)| (f.as_str(), v.as_str())),
        &env,
    )
    .map_err(anyhow::Error::msg)?;
    match &proxy {
        Some(p) => tracing::debug!("API server {server} through proxy {} ({})", p.redacted(), p.from),
        None => tracing::debug!("API server {server}: direct connection"),
    }
    let proxy_text = proxy
        .as_ref()
        .map(|p| format!("{} from {}", p.redacted(), p.from));
    config.proxy_url = proxy.map(|p| p.url);
    // Watches end server-side after WATCH_TIMEOUT_SECS; a read that stalls longer than this
    // means a half-open connection, so the watcher reconnects.
    config.read_timeout = Some(Duration::from_secs(u64::from(WATCH_TIMEOUT_SECS) + 15));
    config.connect_timeout = Some(Duration::from_secs(10));
    if let Ok(ua) = http::HeaderValue::from_str(&crate::user_agent()) {
        config.headers.push((http::header::USER_AGENT, ua));
    }
    // kube's own retry of 429/503/504 (15 tries from 5 ms) would hide an outage from the
    // watch layer and hammer the server: replaced by a short, capped one.
    config.default_retry = false;
    let http = super::overrides::HttpAccess::of(&config);
    let builder = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| anyhow::anyhow!("client: {}", one_line(&e)))?;
    let client = match overrides.request_timeout {
        // Under the retry: each try has the whole limit.
        Some(limit) => builder
            .with_layer(&super::overrides::RequestTimeoutLayer(limit))
            .with_layer(&tower::buffer::BufferLayer::new(1024))
            .with_layer(&tower::retry::RetryLayer::new(client_retry()))
            .build(),
        None => builder
            .with_layer(&tower::buffer::BufferLayer::new(1024))
            .with_layer(&tower::retry::RetryLayer::new(client_retry()))
            .build(),
    };
    Ok(Connection {
        client,
        context: context_name,
        server,
        proxy: proxy_text,
        http,
    })
}

/// The HTTP status codes the client retries itself: the fixed set of kube's `RetryPolicy`
/// (`kube-client/src/client/retry.rs`), which this client installs ([`connect`]).
pub const CLIENT_RETRIED_CODES: [u16; 3] = [429, 503, 504];

/// Retries of a request answered with one of [`CLIENT_RETRIED_CODES`] made by the client itself (after
/// [`CLIENT_RETRY_MIN`], doubling, honouring `Retry-After` up to [`CLIENT_RETRY_MAX`]); beyond
/// them the caller sees the error (the watch layer then backs off per kind).
pub const CLIENT_RETRIES: u32 = 2;
/// First delay of the client's own retry.
pub const CLIENT_RETRY_MIN: Duration = Duration::from_millis(250);
/// Longest delay of the client's own retry.
pub const CLIENT_RETRY_MAX: Duration = Duration::from_secs(2);

fn client_retry() -> kube::client::retry::RetryPolicy {
    kube::client::retry::RetryPolicy::new(CLIENT_RETRY_MIN, CLIENT_RETRY_MAX, CLIENT_RETRIES, true)
        .unwrap_or_default()
}

/// Removes every cluster's `proxy-url` from `kc` (kube's loader would parse it, and apply
/// `NO_PROXY` to it, which kubectl does not) and returns the one of context `context`'s
/// cluster: (cluster name, URL).
fn take_proxy_url(kc: &mut Kubeconfig, context: &str) -> Option<(String, String)> {
    let cluster = kc
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone())?;
    let mut found = None;
    for named in &mut kc.clusters {
        if let Some(c) = named.cluster.as_mut()
            && let Some(url) = c.proxy_url.take()
            && named.name == cluster
            && found.is_none()
        {
            found = Some((named.name.clone(), url));
        }
    }
    found
}

/// `~/.kube/config`, if a home directory is known.
pub(super) fn home_kubeconfig() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| Path::new(&h).join(".kube").join("config"))
}

/// The context to use: `context`, else `current-context`; it must exist in the kubeconfig.
fn checked_context(kc: &Kubeconfig, context: Option<&str>) -> Result<String, String> {
    let names: Vec<&str> = kc.contexts.iter().map(|c| c.name.as_str()).collect();
    let list = if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    };
    let name = match context {
        Some(c) => c.to_owned(),
        None => match kc.current_context.as_deref().filter(|c| !c.is_empty()) {
            Some(c) => c.to_owned(),
            None => {
                return Err(format!(
                    "no current-context set; pass --context NAME (contexts: {list})"
                ));
            }
        },
    };
    if names.contains(&name.as_str()) {
        Ok(name)
    } else {
        Err(format!("no context named {name:?} (contexts: {list})"))
    }
}

/// A kubeconfig loading error as one line that does not repeat the file's path (the caller's
/// prefix names it): kube's `failed to read kubeconfig from '"PATH"': E` becomes `E`, or
/// `PATH: E` when the file is one of several in `KUBECONFIG`.
pub(super) fn kubeconfig_error(e: &kube::config::KubeconfigError) -> String {
    match e {
        kube::config::KubeconfigError::ReadConfig(io, path) => {
            let several = std::env::var_os("KUBECONFIG").is_some_and(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .count()
                    > 1
            });
            if several {
                format!("{}: {io}", path.display())
            } else {
                io.to_string()
            }
        }
        other => one_line(other),
    }
}

/// Flattens an error chain into one line.
pub(super) fn one_line(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

/// Lists every object of `K` (paginated, 500 per page). A missing kind (HTTP 404, e.g. no
/// MachineConfigPool CRD on a HyperShift guest) yields an empty list.
async fn list_all<K>(api: &Api<K>, label: &str) -> anyhow::Result<Vec<K>>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let mut out = Vec::new();
    let mut params = ListParams::default().limit(500);
    loop {
        let page = match api.list(&params).await {
            Ok(p) => p,
            Err(e) if is_not_found(&e) => return Ok(out),
            Err(e) => return Err(super::api_error::ApiFailure::new(format!("list {label}"), &e).into()),
        };
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        out.extend(page.items);
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(out),
        }
    }
}

/// What [`fetch_some`] reads: everything `cvo status` assesses, or the one kind `cvo get`
/// prints (so `cvo get nodes` needs neither access to nor a working list of the others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// The ClusterVersion `version`, ClusterOperators, MachineConfigPools, MachineConfigs
    /// (metadata), Nodes and the machine-config-operator Deployment.
    All,
    /// The ClusterVersion `version` only (one GET).
    ClusterVersion,
    /// ClusterOperators only.
    ClusterOperators,
    /// MachineConfigPools only.
    MachineConfigPools,
    /// Nodes only.
    Nodes,
}

/// Reads the whole [`ClusterState`] once (for `cvo status`): [`fetch_some`] with
/// [`Reads::All`].
///
/// # Errors
/// A one-line error when the API cannot be reached or a list fails (other than a 404 for a
/// kind the cluster does not serve).
pub async fn fetch_state(client: &Client, context: &str) -> anyhow::Result<ClusterState> {
    fetch_some(client, context, Reads::All).await
}

/// Reads the kinds `reads` names into a [`ClusterState`] once (the others are left empty).
///
/// # Errors
/// A one-line error naming the request when the API cannot be reached or a read fails (other
/// than a 404 for a kind the cluster does not serve).
pub async fn fetch_some(client: &Client, context: &str, reads: Reads) -> anyhow::Result<ClusterState> {
    let wants = |r: Reads| reads == Reads::All || reads == r;
    let cv_api: Api<ClusterVersion> = Api::all(client.clone());
    let cluster_version = if wants(Reads::ClusterVersion) {
        match cv_api.get_opt("version").await {
            Ok(cv) => cv,
            Err(e) if is_not_found(&e) => None,
            Err(e) => return Err(super::api_error::ApiFailure::new("get clusterversion version", &e).into()),
        }
    } else {
        None
    };
    let cluster_operators = if wants(Reads::ClusterOperators) {
        list_all::<ClusterOperator>(&Api::all(client.clone()), "clusteroperators").await?
    } else {
        Vec::new()
    };
    let machine_config_pools = if wants(Reads::MachineConfigPools) {
        list_all::<MachineConfigPool>(&Api::all(client.clone()), "machineconfigpools").await?
    } else {
        Vec::new()
    };
    let machine_configs = if reads == Reads::All {
        list_all::<PartialObjectMeta<MachineConfig>>(&Api::all(client.clone()), "machineconfigs")
            .await?
            .into_iter()
            .map(|m| MachineConfig { metadata: m.metadata })
            .collect()
    } else {
        Vec::new()
    };
    let nodes = if wants(Reads::Nodes) {
        list_all::<Node>(&Api::all(client.clone()), "nodes").await?
    } else {
        Vec::new()
    };
    let mco_deployment = if reads == Reads::All {
        let mco_api: Api<Deployment> = Api::namespaced(client.clone(), MCO_NAMESPACE);
        mco_api.get_opt(MCO_NAME).await.ok().flatten()
    } else {
        None
    };
    let mut state = ClusterState {
        source: format!("context {context}"),
        cluster_version,
        cluster_operators,
        machine_config_pools,
        machine_configs,
        nodes,
        mco_deployment,
        feed: FeedStatus::Live {
            synced: true,
            error: None,
        },
    };
    for n in &mut state.nodes {
        n.metadata.managed_fields = None;
    }
    state.sort();
    Ok(state)
}

/// After a state is published, further changes within this window are gathered into the next
/// state: a lone event is published at once, a burst (a relist, a rollout) costs at most one
/// state per window.
pub const COALESCE: Duration = Duration::from_millis(50);

/// The informers the dashboard's feed reads, from one registry.
struct Kinds {
    cv: Informer<ClusterVersion>,
    co: Informer<ClusterOperator>,
    mcp: Informer<MachineConfigPool>,
    mc: Informer<PartialObjectMeta<MachineConfig>>,
    nodes: Informer<Node>,
    mco: Informer<Deployment>,
}

/// The field selector of the ClusterVersion informer every reader shares (the dashboard, the
/// engine, the operator's metrics): the one `version`.
pub const CLUSTER_VERSION_FIELDS: &str = "metadata.name=version";

impl Kinds {
    fn of(informers: &Informers) -> Self {
        Self {
            cv: informers.all(Some(CLUSTER_VERSION_FIELDS)),
            co: informers.all(None),
            mcp: informers.all(None),
            mc: informers.all(None),
            nodes: informers.all(None),
            mco: informers.namespaced(MCO_NAMESPACE, Some(&format!("metadata.name={MCO_NAME}"))),
        }
    }

    /// Each kind's change counter.
    fn changes(&self) -> Vec<watch::Receiver<u64>> {
        vec![
            self.cv.changes(),
            self.co.changes(),
            self.mcp.changes(),
            self.mc.changes(),
            self.nodes.changes(),
            self.mco.changes(),
        ]
    }

    /// Whether every kind has listed, and the failure to show: the first failing kind's
    /// message (in the order above) since the earliest failure, with how many more fail.
    fn feed(&self) -> FeedStatus {
        let health = [
            self.cv.health(),
            self.co.health(),
            self.mcp.health(),
            self.mc.health(),
            self.nodes.health(),
            self.mco.health(),
        ];
        let synced = health.iter().all(crate::informers::Health::listed);
        let failures: Vec<(&str, chrono::DateTime<chrono::Utc>)> = health
            .iter()
            .filter_map(crate::informers::Health::failure)
            .collect();
        let error = failures.first().map(|(first, _)| {
            let since = failures
                .iter()
                .map(|(_, s)| *s)
                .min()
                .unwrap_or_else(chrono::Utc::now);
            let more = failures.len() - 1;
            let message = if more == 0 {
                (*first).to_owned()
            } else {
                format!("{first} (and {more} more watches failing)")
            };
            FeedError { message, since }
        });
        FeedStatus::Live { synced, error }
    }

    fn state(&self, source: &str) -> ClusterState {
        let mut state = ClusterState {
            source: source.to_owned(),
            cluster_version: self.cv.objects().first().map(|o| (**o).clone()),
            cluster_operators: self.co.objects().iter().map(|o| (**o).clone()).collect(),
            machine_config_pools: self.mcp.objects().iter().map(|o| (**o).clone()).collect(),
            machine_configs: self
                .mc
                .objects()
                .iter()
                .map(|o| MachineConfig {
                    metadata: o.metadata.clone(),
                })
                .collect(),
            nodes: self.nodes.objects().iter().map(|o| (**o).clone()).collect(),
            mco_deployment: self.mco.objects().first().map(|o| (**o).clone()),
            feed: self.feed(),
        };
        state.sort_all_by_name();
        state
    }
}

/// [`watch_state_from`] over a registry of its own: for a process with no other reader of
/// the cluster (tests, `cvo demo`'s dashboard).
pub fn watch_state(client: Client, context: String) -> watch::Receiver<Arc<ClusterState>> {
    watch_state_from(&Informers::new(client), context)
}

/// Reads ClusterVersion `version`, ClusterOperators, MachineConfigPools, MachineConfigs
/// (metadata), Nodes and the machine-config-operator Deployment from the process's
/// `informers` (see [`crate::informers`] for relists, backoff and health; a kind another
/// reader already watches is not watched again), and returns a feed of [`ClusterState`]s. A
/// change is published at once; changes during the following [`COALESCE`] window are gathered
/// into one state. Must be called inside a tokio runtime; the feed lives as long as the
/// runtime.
pub fn watch_state_from(informers: &Informers, context: String) -> watch::Receiver<Arc<ClusterState>> {
    let kinds = Kinds::of(informers);
    let source = format!("context {context}");
    let initial = ClusterState {
        source: source.clone(),
        feed: FeedStatus::Live {
            synced: false,
            error: None,
        },
        ..Default::default()
    };
    let (tx, rx) = watch::channel(Arc::new(initial));
    // Subscribed before the first state is read: a shared informer may have listed already,
    // and a change from here on is never missed.
    let mut changes = kinds.changes();
    tokio::spawn(async move {
        loop {
            for c in &mut changes {
                c.borrow_and_update();
            }
            if tx.send(Arc::new(kinds.state(&source))).is_err() {
                return;
            }
            // Gather what arrives in the next window into one state.
            tokio::time::sleep(COALESCE).await;
            // Wait for any kind's change (a change during the window is still unseen and
            // wakes this at once).
            // ... or for the last reader to go (a dashboard opened from `cvo fleet` and
            // closed): the task ends and its watches with it.
            let waits = changes.iter_mut().map(|c| Box::pin(c.changed()));
            tokio::select! {
                (r, _, _) = futures::future::select_all(waits) => if r.is_err() {
                    return;
                },
                () = tx.closed() => return,
            }
        }
    });
    rx
}
