//! A live cluster: a `kube::Client` from kubeconfig or in-cluster config (as kubectl finds
//! them), a one-shot [`fetch_state`] for the CLI, and [`watch_state`], which keeps a
//! [`ClusterState`] current with kube-runtime watchers and reflectors.
//!
//! Watches reconnect with kube-runtime's default exponential backoff (with jitter and a cap) and
//! never end on an error; errors are reported in [`FeedStatus::Live`] ("API unreachable since
//! T") until the next successful event. `managedFields` are dropped before caching and
//! MachineConfigs are watched as metadata only, so the cache holds only what the assessment
//! reads.

use std::{
    fmt::Debug,
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::TryStreamExt;
use k8s_openapi::api::{apps::v1::Deployment, core::v1::Node};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::ListParams,
    config::{KubeConfigOptions, Kubeconfig},
    core::PartialObjectMeta,
    runtime::{
        WatchStreamExt,
        reflector::{self, Store},
        watcher,
    },
};
use serde::de::DeserializeOwned;
use tokio::sync::{Notify, watch};

use super::{ClusterState, FeedError, FeedStatus};
use crate::openshift::{ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool};

/// Namespace and name of the machine-config-operator Deployment.
const MCO_NAMESPACE: &str = "openshift-machine-config-operator";
const MCO_NAME: &str = "machine-config-operator";
/// Server-side timeout of each watch request (seconds); the watcher then re-watches.
const WATCH_TIMEOUT_SECS: u32 = 60;

/// A connected client and the name of the context it came from.
pub struct Connection {
    /// The client.
    pub client: Client,
    /// Context name, or `in-cluster`.
    pub context: String,
    /// The API server URL.
    pub server: String,
}

/// Connects as kubectl does: `--kubeconfig FILE` if given, else `$KUBECONFIG` (several paths
/// merged) or `~/.kube/config`, else the in-cluster service account. `context` picks a
/// kubeconfig context (default: `current-context`).
///
/// # Errors
/// A one-line error naming the kubeconfig file or the context when it cannot be read, has no
/// such context, or yields no usable client configuration.
pub async fn connect(kubeconfig: Option<&Path>, context: Option<&str>) -> anyhow::Result<Connection> {
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..Default::default()
    };
    let from_env = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
    let (kc, origin) = if let Some(path) = kubeconfig {
        let kc = Kubeconfig::read_from(path)
            .map_err(|e| anyhow::anyhow!("kubeconfig {}: {}", path.display(), one_line(&e)))?;
        (Some(kc), path.display().to_string())
    } else if let Some(paths) = &from_env {
        let origin = format!("{} (from KUBECONFIG)", paths.to_string_lossy());
        let kc = Kubeconfig::read().map_err(|e| anyhow::anyhow!("kubeconfig {origin}: {}", one_line(&e)))?;
        (Some(kc), origin)
    } else {
        let default = home_kubeconfig();
        let kc = match &default {
            Some(p) if p.exists() => Some(
                Kubeconfig::read_from(p)
                    .map_err(|e| anyhow::anyhow!("kubeconfig {}: {}", p.display(), one_line(&e)))?,
            ),
            _ => None,
        };
        let origin = default
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "~/.kube/config".into());
        (kc, origin)
    };
    let (config, context_name) = match kc {
        Some(kc) => {
            let name =
                checked_context(&kc, context).map_err(|e| anyhow::anyhow!("kubeconfig {origin}: {e}"))?;
            let config = kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| anyhow::anyhow!("kubeconfig {origin}: {}", one_line(&e)))?;
            (config, name)
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
    let server = config.cluster_url.to_string();
    // Watches end server-side after WATCH_TIMEOUT_SECS; a read that stalls longer than this
    // means a half-open connection, so the watcher reconnects.
    config.read_timeout = Some(Duration::from_secs(u64::from(WATCH_TIMEOUT_SECS) + 15));
    config.connect_timeout = Some(Duration::from_secs(10));
    if let Ok(ua) = http::HeaderValue::from_str(&crate::user_agent()) {
        config.headers.push((http::header::USER_AGENT, ua));
    }
    let client = Client::try_from(config).map_err(|e| anyhow::anyhow!("client: {}", one_line(&e)))?;
    Ok(Connection {
        client,
        context: context_name,
        server,
    })
}

/// `~/.kube/config`, if a home directory is known.
fn home_kubeconfig() -> Option<std::path::PathBuf> {
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

/// Flattens an error chain into one line.
fn one_line(e: &dyn std::error::Error) -> String {
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

/// Reads the whole [`ClusterState`] once (for `cvo status` and `cvo get`).
///
/// # Errors
/// A one-line error when the API cannot be reached or a list fails (other than a 404 for a
/// kind the cluster does not serve).
pub async fn fetch_state(client: &Client, context: &str) -> anyhow::Result<ClusterState> {
    let cv_api: Api<ClusterVersion> = Api::all(client.clone());
    let cluster_version = match cv_api.get_opt("version").await {
        Ok(cv) => cv,
        Err(e) if is_not_found(&e) => None,
        Err(e) => return Err(super::api_error::ApiFailure::new("get clusterversion version", &e).into()),
    };
    let cluster_operators =
        list_all::<ClusterOperator>(&Api::all(client.clone()), "clusteroperators").await?;
    let machine_config_pools =
        list_all::<MachineConfigPool>(&Api::all(client.clone()), "machineconfigpools").await?;
    let machine_configs =
        list_all::<PartialObjectMeta<MachineConfig>>(&Api::all(client.clone()), "machineconfigs")
            .await?
            .into_iter()
            .map(|m| MachineConfig { metadata: m.metadata })
            .collect();
    let nodes = list_all::<Node>(&Api::all(client.clone()), "nodes").await?;
    let mco_api: Api<Deployment> = Api::namespaced(client.clone(), MCO_NAMESPACE);
    let mco_deployment = mco_api.get_opt(MCO_NAME).await.ok().flatten();
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

/// kube-runtime's default backoff (exponential from 0.8 s to 30 s, with jitter) made to
/// survive the `Init` event a watcher emits before each relist attempt: kube's
/// `StreamBackoff` resets its backoff on any successful item, and that `Init` would otherwise
/// reset it before every retry, making a dead API server cost one request per second per watch
/// forever (as administrators reported). Here a reset counts only once no error has been seen for
/// [`SteadyBackoff::QUIET`].
#[derive(Default)]
struct SteadyBackoff {
    inner: watcher::DefaultBackoff,
    last_error: Option<std::time::Instant>,
}

impl SteadyBackoff {
    /// How long without errors before the backoff starts again from its shortest delay.
    const QUIET: Duration = Duration::from_secs(10);
}

impl Iterator for SteadyBackoff {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        self.last_error = Some(std::time::Instant::now());
        self.inner.next()
    }
}

impl kube::runtime::utils::Backoff for SteadyBackoff {
    fn reset(&mut self) {
        if self.last_error.is_none_or(|t| t.elapsed() >= Self::QUIET) {
            self.last_error = None;
            self.inner.reset();
        }
    }
}

/// Watch parameters: server-side timeout, bookmarks on (kube-runtime default).
fn watch_config() -> watcher::Config {
    watcher::Config::default().timeout(WATCH_TIMEOUT_SECS)
}

/// Shared health of the watches: per-kind readiness and the current error.
#[derive(Default)]
struct Health {
    /// Kinds whose initial list has completed.
    synced: std::collections::BTreeSet<&'static str>,
    /// Per kind, the current error when the last event of its watch was an error.
    errors: std::collections::BTreeMap<&'static str, FeedError>,
}

impl Health {
    /// The error to show: the first failing kind's message, since the earliest failure.
    fn error(&self) -> Option<FeedError> {
        let first = self.errors.values().next()?;
        let since = self.errors.values().map(|e| e.since).min().unwrap_or(first.since);
        let more = self.errors.len() - 1;
        let message = if more == 0 {
            first.message.clone()
        } else {
            format!("{} (and {more} more watches failing)", first.message)
        };
        Some(FeedError { message, since })
    }
}

/// Number of kinds watched.
const KINDS: usize = 6;

/// Runs one reflector for `K` until the process ends: events feed `writer`, every event wakes
/// `notify`, errors are recorded in `health` (and retried with backoff, never ending the watch).
fn spawn_reflector<K>(
    api: Api<K>,
    config: watcher::Config,
    label: &'static str,
    notify: Arc<Notify>,
    health: Arc<Mutex<Health>>,
) -> Store<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Default,
{
    let (store, writer) = reflector::store();
    let stream = watcher(api, config)
        .backoff(SteadyBackoff::default())
        .modify(|o: &mut K| o.managed_fields_mut().clear())
        .reflect(writer);
    tokio::spawn(drive(stream, label, notify, health));
    store
}

async fn drive<S, K>(stream: S, label: &'static str, notify: Arc<Notify>, health: Arc<Mutex<Health>>)
where
    S: futures::Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send,
{
    let mut stream = std::pin::pin!(stream);
    loop {
        match stream.try_next().await {
            Ok(Some(event)) => {
                if let Ok(mut h) = health.lock() {
                    match event {
                        // `Init` only announces a (re)list attempt: it proves nothing about
                        // the API being reachable, so the error (and its start) stays.
                        watcher::Event::Init => {}
                        watcher::Event::InitDone => {
                            h.synced.insert(label);
                            h.errors.remove(label);
                        }
                        _ => {
                            h.errors.remove(label);
                        }
                    }
                }
                notify.notify_one();
            }
            Ok(None) => {
                tracing::warn!(kind = label, "watch stream ended");
                return;
            }
            Err(e) => {
                let message = format!("watch {label}: {}", one_line(&e));
                tracing::warn!("{message}");
                if let Ok(mut h) = health.lock() {
                    let since = h.errors.get(label).map_or_else(chrono::Utc::now, |old| old.since);
                    h.errors.insert(label, FeedError { message, since });
                }
                notify.notify_one();
            }
        }
    }
}

/// Starts watchers for ClusterVersion, ClusterOperators, MachineConfigPools, MachineConfigs
/// (metadata), Nodes and the machine-config-operator Deployment, and returns a feed of
/// [`ClusterState`]s. Bursts of events are coalesced: at most one new state per 200 ms.
/// Must be called inside a tokio runtime; the watchers live as long as the runtime.
pub fn watch_state(client: Client, context: String) -> watch::Receiver<Arc<ClusterState>> {
    let notify = Arc::new(Notify::new());
    let health = Arc::new(Mutex::new(Health::default()));
    let (n, h) = (&notify, &health);
    let cv = spawn_reflector::<ClusterVersion>(
        Api::all(client.clone()),
        watch_config().fields("metadata.name=version"),
        "clusterversions",
        n.clone(),
        h.clone(),
    );
    let co = spawn_reflector::<ClusterOperator>(
        Api::all(client.clone()),
        watch_config(),
        "clusteroperators",
        n.clone(),
        h.clone(),
    );
    let mcp = spawn_reflector::<MachineConfigPool>(
        Api::all(client.clone()),
        watch_config(),
        "machineconfigpools",
        n.clone(),
        h.clone(),
    );
    let mc = spawn_reflector::<PartialObjectMeta<MachineConfig>>(
        Api::all(client.clone()),
        watch_config(),
        "machineconfigs",
        n.clone(),
        h.clone(),
    );
    let nodes = spawn_reflector::<Node>(
        Api::all(client.clone()),
        watch_config(),
        "nodes",
        n.clone(),
        h.clone(),
    );
    let mco = spawn_reflector::<Deployment>(
        Api::namespaced(client, MCO_NAMESPACE),
        watch_config().fields(&format!("metadata.name={MCO_NAME}")),
        "deployments",
        n.clone(),
        h.clone(),
    );
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
    tokio::spawn(async move {
        loop {
            notify.notified().await;
            // Coalesce a burst of events (a relist brings hundreds) into one state.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let (synced, error) = match health.lock() {
                Ok(h) => (h.synced.len() >= KINDS, h.error()),
                Err(_) => (false, None),
            };
            let mut state = ClusterState {
                source: source.clone(),
                cluster_version: cv.state().first().map(|o| (**o).clone()),
                cluster_operators: co.state().iter().map(|o| (**o).clone()).collect(),
                machine_config_pools: mcp.state().iter().map(|o| (**o).clone()).collect(),
                machine_configs: mc
                    .state()
                    .iter()
                    .map(|o| MachineConfig {
                        metadata: o.metadata.clone(),
                    })
                    .collect(),
                nodes: nodes.state().iter().map(|o| (**o).clone()).collect(),
                mco_deployment: mco.state().first().map(|o| (**o).clone()),
                feed: FeedStatus::Live { synced, error },
            };
            state.sort_all_by_name();
            if tx.send(Arc::new(state)).is_err() {
                return;
            }
        }
    });
    rx
}
