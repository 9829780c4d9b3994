//! The update-service client: which releases this cluster can update to, and whether each
//! conditional one is recommended (upstream `pkg/cvo/availableupdates.go`,
//! `pkg/cincinnati/cincinnati.go`, `pkg/clusterconditions/**` in
//! openshift/cluster-version-operator).
//!
//! - [`graph`]: the `/graph` response and the next hops from one version.
//! - [`client`]: the HTTP request (proxy, trusted CA, timeout, capped body) and a
//!   Prometheus-compatible query API for PromQL risks.
//! - [`risks`]: matching rules, the PromQL throttle and cache, the `Recommended` condition.
//!
//! [`spawn`] runs the polling loop beside the engine: it refetches on the first run, when the
//! upstream, channel, architecture, version or cluster ID change, and at least
//! [`UpdatesTimings::interval`] after the last attempt; a transport or response failure keeps
//! the last good graph (with RetrievedUpdates=False) until [`UpdatesTimings::max_age`] has
//! passed since the last success; a change of the accepted risks, or a Recommended still
//! Unknown, only re-evaluates the risks (the latter after [`UpdatesTimings::reevaluate`]).
//! Results are published as [`FetchedUpdates`] and written by the engine with
//! [`apply_to_status`].

pub mod beyond;
pub mod client;
pub mod graph;
pub mod risks;

use std::{sync::Arc, time::Duration};

use chrono::{DateTime, Utc};
use tokio::{sync::watch, time::Instant};
use tokio_util::sync::CancellationToken;

pub use crate::reconcile::api::FetchedUpdates;
use crate::{
    openshift::{
        ClusterVersion, ClusterVersionStatus, Release,
        condition::{Condition, ConditionStatus},
        config_v1::ConditionalUpdate,
    },
    reconcile::status::{RETRIEVED_UPDATES, set_condition},
};
use client::{Egress, GraphQuery};
use risks::{PromQlEvaluator, PromQlTimings, RiskEvaluator};

/// Why updates could not be retrieved: the RetrievedUpdates=False reason and message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}: {message}")]
pub struct UpdateError {
    /// `NoUpstream`, `InvalidURI`, `InvalidID`, `NoArchitecture`, `NoCurrentVersion`,
    /// `NoChannel`, `InvalidCurrentVersion`, `InvalidRequest`, `RemoteFailed`,
    /// `ResponseFailed`, `ResponseInvalid`, `VersionNotFound`.
    pub reason: String,
    /// The message.
    pub message: String,
}

impl UpdateError {
    /// An error with `reason` and `message`.
    pub fn new(reason: &str, message: impl Into<String>) -> Self {
        Self {
            reason: reason.to_string(),
            message: message.into(),
        }
    }

    /// Whether the last good graph survives this failure (transport and response failures).
    fn keeps_cache(&self) -> bool {
        matches!(
            self.reason.as_str(),
            "RemoteFailed" | "ResponseFailed" | "ResponseInvalid"
        )
    }

    /// Whether the failure came from the update service itself (its message gets upstream's
    /// `Unable to retrieve available updates: ` prefix).
    fn client_side(&self) -> bool {
        matches!(
            self.reason.as_str(),
            "InvalidRequest" | "RemoteFailed" | "ResponseFailed" | "ResponseInvalid" | "VersionNotFound"
        )
    }
}

/// The polling intervals (upstream `pkg/cvo/availableupdates.go`).
#[derive(Clone, Debug)]
pub struct UpdatesTimings {
    /// Minimum time between two fetches with unchanged inputs (the reconcile interval `I`,
    /// 2–4 min upstream).
    pub interval: Duration,
    /// Without a success for this long, a failure drops the last good graph (24 h).
    pub max_age: Duration,
    /// Re-evaluation delay while some Recommended is Unknown (1 s).
    pub reevaluate: Duration,
    /// One graph request's timeout (60 min).
    pub request_timeout: Duration,
}

impl UpdatesTimings {
    /// Upstream's values with reconcile interval `interval`.
    pub fn upstream(interval: Duration) -> Self {
        Self {
            interval,
            max_age: Duration::from_secs(24 * 3600),
            reevaluate: Duration::from_secs(1),
            request_timeout: client::GRAPH_TIMEOUT,
        }
    }
}

/// How the engine asks for updates.
#[derive(Clone)]
pub struct UpdatesConfig {
    /// Replaces `spec.upstream` (upstream's `--update-service` flag; tests and the demo point
    /// it at a local service).
    pub upstream_override: Option<String>,
    /// The cluster's architecture as the update service spells it (`amd64`, `arm64`, ...),
    /// sent unless the desired release is Multi.
    pub arch: String,
    /// Proxy and extra CA; `None` ⇒ read the cluster's Proxy `cluster` (status) and the
    /// ConfigMap `openshift-config-managed/trusted-ca-bundle` (`ca-bundle.crt`) at each fetch.
    pub egress: Option<Egress>,
    /// Answers PromQL rules.
    pub promql: Arc<dyn PromQlEvaluator>,
    /// The PromQL throttle and cache.
    pub promql_timings: PromQlTimings,
    /// Polling.
    pub timings: UpdatesTimings,
    /// Largest accepted graph body in bytes.
    pub max_body: usize,
    /// `User-Agent` of graph requests.
    pub user_agent: String,
    /// The clock of [`FetchedUpdates::last_attempt`] and [`FetchedUpdates::last_success`]:
    /// the wall clock, or the demo's simulated one (the engine's,
    /// [`crate::reconcile::EngineTimings::clock`]), so that the dashboard measures their ages
    /// on the clock it shows. The polling intervals above are timers, not read from it.
    pub clock: crate::clock::Clock,
}

impl std::fmt::Debug for UpdatesConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpdatesConfig")
            .field("upstream_override", &self.upstream_override)
            .field("arch", &self.arch)
            .field("timings", &self.timings)
            .finish_non_exhaustive()
    }
}

impl UpdatesConfig {
    /// Upstream's defaults: no override, this machine's architecture, the cluster's egress,
    /// `promql` for risks, reconcile interval `interval`.
    pub fn new(promql: Arc<dyn PromQlEvaluator>, interval: Duration) -> Self {
        Self {
            upstream_override: None,
            arch: go_arch(std::env::consts::ARCH).to_string(),
            egress: None,
            promql,
            promql_timings: PromQlTimings::upstream(),
            timings: UpdatesTimings::upstream(interval),
            max_body: client::DEFAULT_MAX_BODY,
            user_agent: format!("ClusterVersionOperator/{}", env!("CARGO_PKG_VERSION")),
            clock: crate::clock::Clock::wall(),
        }
    }
}

/// Rust's architecture names as Go's (`GOARCH`), which the update service uses.
pub fn go_arch(rust: &str) -> &str {
    match rust {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64le",
        other => other,
    }
}

/// What the request depends on, read from the ClusterVersion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateInputs {
    /// `spec.upstream`.
    pub upstream: Option<String>,
    /// `spec.channel`.
    pub channel: String,
    /// `spec.clusterID`.
    pub cluster_id: String,
    /// `status.desired.version`: what the cluster is reconciling.
    pub version: String,
    /// `spec.desiredUpdate.architecture` (`Multi` or empty).
    pub desired_arch: String,
    /// `status.desired.architecture`.
    pub current_arch: String,
    /// `spec.desiredUpdate.acceptRisks[].name`.
    pub accepted: Vec<String>,
}

impl UpdateInputs {
    /// The inputs of `cv`.
    pub fn of(cv: &ClusterVersion) -> Self {
        let du = cv.spec.desired_update.as_ref();
        Self {
            upstream: cv.spec.upstream.clone().filter(|u| !u.is_empty()),
            channel: cv.spec.channel.clone().unwrap_or_default(),
            cluster_id: cv.spec.cluster_id.clone().unwrap_or_default(),
            version: cv.status.desired.version.clone(),
            desired_arch: du.and_then(|d| d.architecture.clone()).unwrap_or_default(),
            current_arch: cv.status.desired.architecture.clone().unwrap_or_default(),
            accepted: du
                .map(|d| d.accept_risks.iter().map(|r| r.name.clone()).collect())
                .unwrap_or_default(),
        }
    }

    /// The graph request, or the first failing pre-check in upstream's order: `NoUpstream`,
    /// `InvalidURI`, `InvalidID`, `NoArchitecture`, `NoCurrentVersion`, `NoChannel`,
    /// `InvalidCurrentVersion`.
    ///
    /// # Errors
    /// [`UpdateError`] with upstream's reason and message.
    pub fn query(&self, cfg: &UpdatesConfig) -> Result<(GraphQuery, semver::Version), UpdateError> {
        let upstream = cfg
            .upstream_override
            .clone()
            .or_else(|| self.upstream.clone())
            .unwrap_or_else(|| client::DEFAULT_UPSTREAM.to_string());
        if upstream.is_empty() {
            return Err(UpdateError::new(
                "NoUpstream",
                "No updateService server has been set to retrieve updates.",
            ));
        }
        reqwest::Url::parse(&upstream).map_err(|e| {
            UpdateError::new("InvalidURI", format!("failed to parse update service URL: {e}"))
        })?;
        let id = uuid::Uuid::parse_str(&self.cluster_id)
            .map_err(|e| UpdateError::new("InvalidID", format!("invalid cluster ID: {e}")))?;
        let arch = if self.desired_arch == "Multi" || self.current_arch == "Multi" {
            "multi".to_string()
        } else {
            cfg.arch.clone()
        };
        if arch.is_empty() {
            return Err(UpdateError::new(
                "NoArchitecture",
                "Architecture has not been configured.",
            ));
        }
        if self.version.is_empty() {
            return Err(UpdateError::new(
                "NoCurrentVersion",
                "The cluster version does not have a semantic version assigned and cannot calculate valid upgrades.",
            ));
        }
        if self.channel.is_empty() {
            return Err(UpdateError::new(
                "NoChannel",
                "The update channel has not been configured.",
            ));
        }
        let v = semver::Version::parse(&self.version).map_err(|_| {
            UpdateError::new(
                "InvalidCurrentVersion",
                "The current cluster version is not a valid semantic version and cannot be used to calculate upgrades.",
            )
        })?;
        Ok((
            GraphQuery {
                upstream,
                arch,
                channel: self.channel.clone(),
                id: id.to_string(),
                version: v.to_string(),
            },
            v,
        ))
    }
}

/// Fetches, parses and computes the next hops for `query` (no risk evaluation).
///
/// # Errors
/// [`UpdateError`] from the request, the body or the graph.
pub async fn fetch_next_hops(
    http: &reqwest::Client,
    cfg: &UpdatesConfig,
    inputs: &UpdateInputs,
    query: &GraphQuery,
    version: &semver::Version,
) -> Result<graph::NextHops, UpdateError> {
    fetch_graph_and_hops(http, cfg, inputs, query, version)
        .await
        .map(|(_, h)| h)
}

/// As [`fetch_next_hops`], also returning the whole graph (for [`beyond::not_offered`]).
///
/// # Errors
/// As [`fetch_next_hops`].
pub async fn fetch_graph_and_hops(
    http: &reqwest::Client,
    cfg: &UpdatesConfig,
    inputs: &UpdateInputs,
    query: &GraphQuery,
    version: &semver::Version,
) -> Result<(Arc<graph::Graph>, graph::NextHops), UpdateError> {
    let body = client::fetch_graph(http, query, &cfg.user_agent, cfg.max_body).await?;
    let g = graph::Graph::parse(&body)?;
    let hops = g.next_hops(
        version,
        &inputs.desired_arch,
        &inputs.current_arch,
        &query.channel,
    )?;
    Ok((Arc::new(g), hops))
}

/// Evaluates the risks of `hops` and assembles the published result (upstream
/// `evaluateConditionalUpdates`): each conditional update gets its Recommended condition;
/// those Recommended=True join the plain updates in `available` (deduplicated by image);
/// both lists semver descending, an empty `available` as `None`.
pub async fn evaluate(
    eval: &RiskEvaluator,
    hops: &graph::NextHops,
    accepted: &[String],
) -> (Option<Vec<Release>>, Vec<ConditionalUpdate>, bool) {
    let applies = risks::evaluate_risks(eval, &hops.conditional).await;
    let mut available = hops.updates.clone();
    let mut conditional = hops.conditional.clone();
    let mut pending = false;
    for cu in &mut conditional {
        let rec = risks::recommended(&cu.risks, &applies, accepted);
        pending |= rec.status == ConditionStatus::Unknown;
        if rec.status == ConditionStatus::True && !available.iter().any(|r| r.image == cu.release.image) {
            available.push(cu.release.clone());
        }
        cu.conditions = vec![rec];
    }
    let key = |r: &Release| semver::Version::parse(&r.version).ok();
    available.sort_by_key(|r| std::cmp::Reverse(key(r)));
    conditional.sort_by_key(|c| std::cmp::Reverse(key(&c.release)));
    ((!available.is_empty()).then_some(available), conditional, pending)
}

/// Writes `f` into `st`: `availableUpdates`, `conditionalUpdates` and `RetrievedUpdates`
/// (True with no reason, or False with the reason and message). A Recommended condition
/// whose status did not change keeps its transition time, so repeating a merge changes
/// nothing.
pub fn apply_to_status(st: &mut ClusterVersionStatus, f: &FetchedUpdates, now: DateTime<Utc>) {
    let old = std::mem::take(&mut st.conditional_updates);
    st.conditional_updates = f
        .conditional
        .iter()
        .cloned()
        .map(|mut cu| {
            let prev = old.iter().find(|o| o.release.image == cu.release.image);
            for c in &mut cu.conditions {
                let p: Option<&Condition> = prev.and_then(|p| {
                    p.conditions
                        .iter()
                        .find(|p| p.type_ == c.type_ && p.status == c.status)
                });
                c.last_transition_time = p.and_then(|p| p.last_transition_time).or(Some(now));
            }
            cu
        })
        .collect();
    st.available_updates = f.available.clone();
    let (status, reason, message) = match &f.retrieved_error {
        None => (ConditionStatus::True, "", ""),
        Some((r, m)) => (ConditionStatus::False, r.as_str(), m.as_str()),
    };
    set_condition(
        &mut st.conditions,
        RETRIEVED_UPDATES,
        status,
        reason,
        message,
        now,
    );
}

/// Reads the cluster's egress settings: the Proxy `cluster` status (`httpProxy`,
/// `httpsProxy`, `noProxy`) and the trusted CA bundle ConfigMap; either missing is no
/// setting.
async fn cluster_egress(kube: &kube::Client) -> Egress {
    use kube::{
        Api,
        api::{ApiResource, DynamicObject, GroupVersionKind},
    };
    let ar = ApiResource::from_gvk(&GroupVersionKind::gvk("config.openshift.io", "v1", "Proxy"));
    let proxies: Api<DynamicObject> = Api::all_with(kube.clone(), &ar);
    let proxy = match proxies.get_opt("cluster").await {
        Ok(Some(p)) => {
            let s = p.data.get("status");
            let field = |k: &str| {
                s.and_then(|s| s.get(k))
                    .and_then(serde_json::Value::as_str)
                    .filter(|v| !v.is_empty())
                    .map(str::to_string)
            };
            let ps = client::ProxySettings {
                http_proxy: field("httpProxy"),
                https_proxy: field("httpsProxy"),
                no_proxy: field("noProxy"),
            };
            (ps != client::ProxySettings::default()).then_some(ps)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::debug!("reading the cluster Proxy: {e}");
            None
        }
    };
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(kube.clone(), "openshift-config-managed");
    let ca_bundle = match cms.get_opt("trusted-ca-bundle").await {
        Ok(Some(cm)) => cm
            .data
            .and_then(|d| d.get("ca-bundle.crt").cloned())
            .filter(|s| !s.is_empty())
            .map(String::into_bytes),
        _ => None,
    };
    Egress { proxy, ca_bundle }
}

/// The polling loop's memory between turns.
#[derive(Default)]
struct PollState {
    key: Option<GraphQuery>,
    last_attempt: Option<Instant>,
    /// [`Self::last_attempt`] on [`UpdatesConfig::clock`].
    last_attempt_wall: Option<DateTime<Utc>>,
    last_success: Option<Instant>,
    /// [`Self::last_success`] on [`UpdatesConfig::clock`].
    last_success_wall: Option<DateTime<Utc>>,
    hops: Option<graph::NextHops>,
    /// The graph [`Self::hops`] came from (kept and dropped with them).
    graph: Option<Arc<graph::Graph>>,
    error: Option<UpdateError>,
    accepted: Vec<String>,
    pending: bool,
    evaluated: bool,
    /// The HTTP client of the last fetch and the egress it was built for: rebuilt only when
    /// the egress changes (building one loads the platform's CA roots, the costliest part of
    /// an idle poll).
    http: Option<(Egress, reqwest::Client)>,
}

/// Starts the polling loop: it reads inputs from `inputs` (`None` ⇒ nothing to ask yet) and
/// publishes on the returned channel; `kube` is used for the cluster's egress when `cfg`
/// names none. Ends with `shutdown`.
pub fn spawn(
    cfg: UpdatesConfig,
    mut inputs: watch::Receiver<Option<UpdateInputs>>,
    kube: Option<kube::Client>,
    shutdown: CancellationToken,
) -> watch::Receiver<Option<Arc<FetchedUpdates>>> {
    let (tx, rx) = watch::channel(None);
    tokio::spawn(async move {
        let eval = RiskEvaluator::new(cfg.promql.clone(), cfg.promql_timings.clone());
        let mut st = PollState::default();
        // The first turn runs at once, on the inputs the channel starts with.
        let mut wake: Option<Instant> = Some(Instant::now());
        loop {
            let sleep = async {
                match wake {
                    Some(t) => tokio::time::sleep_until(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = shutdown.cancelled() => break,
                r = inputs.changed() => if r.is_err() { break },
                () = sleep => {}
            }
            let Some(inp) = inputs.borrow_and_update().clone() else {
                continue;
            };
            let (published, next) = turn(&cfg, &eval, kube.as_ref(), &mut st, &inp).await;
            wake = next;
            if let Some(p) = published {
                tx.send_if_modified(|cur| {
                    if cur.as_deref() == Some(&p) {
                        false
                    } else {
                        *cur = Some(Arc::new(p));
                        true
                    }
                });
            }
        }
    });
    rx
}

/// One turn of the loop: fetch if due, evaluate, say what to publish and when to wake next.
async fn turn(
    cfg: &UpdatesConfig,
    eval: &RiskEvaluator,
    kube: Option<&kube::Client>,
    st: &mut PollState,
    inp: &UpdateInputs,
) -> (Option<FetchedUpdates>, Option<Instant>) {
    let now = Instant::now();
    let (query, version) = match inp.query(cfg) {
        Ok(q) => q,
        Err(e) => {
            *st = PollState::default();
            let f = FetchedUpdates {
                version: inp.version.clone(),
                channel: inp.channel.clone(),
                retrieved_error: Some((e.reason, e.message)),
                ..FetchedUpdates::default()
            };
            return (Some(f), None);
        }
    };
    let changed = st.key.as_ref() != Some(&query);
    let due = st
        .last_attempt
        .is_none_or(|t| now.duration_since(t) >= cfg.timings.interval);
    let stale = st
        .last_success
        .is_none_or(|t| now.duration_since(t) >= cfg.timings.max_age);
    if changed || due || (stale && st.error.is_some()) {
        if changed {
            st.hops = None;
            st.graph = None;
            st.last_success = None;
            st.last_success_wall = None;
        }
        st.key = Some(query.clone());
        st.last_attempt = Some(now);
        st.last_attempt_wall = Some(cfg.clock.now());
        let egress = match (&cfg.egress, kube) {
            (Some(e), _) => e.clone(),
            (None, Some(k)) => cluster_egress(k).await,
            (None, None) => Egress::default(),
        };
        let http = match st.http.take() {
            Some((e, c)) if e == egress => Ok(c),
            _ => client::http_client(&egress, cfg.timings.request_timeout),
        };
        let res = match http {
            Ok(http) => {
                let r = fetch_graph_and_hops(&http, cfg, inp, &query, &version).await;
                st.http = Some((egress, http));
                r
            }
            Err(e) => Err(UpdateError::new("InvalidRequest", e)),
        };
        match res {
            Ok((g, h)) => {
                st.hops = Some(h);
                st.graph = Some(g);
                st.error = None;
                st.last_success = Some(Instant::now());
                st.last_success_wall = Some(cfg.clock.now());
            }
            Err(e) => {
                let stale = st
                    .last_success
                    .is_none_or(|t| now.duration_since(t) >= cfg.timings.max_age);
                if !e.keeps_cache() || stale {
                    st.hops = None;
                    st.graph = None;
                }
                // Once per distinct failure (a service that stays down is not one line per poll).
                if st.error.as_ref().is_some_and(|p| p.to_string() == e.to_string()) {
                    tracing::debug!("retrieving available updates from {}: {e}", query.upstream);
                } else {
                    tracing::warn!("retrieving available updates from {}: {e}", query.upstream);
                }
                st.error = Some(e);
            }
        }
        st.evaluated = false;
    } else if st.accepted == inp.accepted && !st.pending && st.evaluated {
        return (None, Some(st.last_attempt.unwrap_or(now) + cfg.timings.interval));
    }
    st.accepted = inp.accepted.clone();
    let (available, conditional, pending) = match &st.hops {
        Some(h) => evaluate(eval, h, &inp.accepted).await,
        None => (None, Vec::new(), false),
    };
    st.pending = pending;
    st.evaluated = true;
    let upstream = match reqwest::Url::parse(&query.upstream) {
        Ok(mut u) => {
            u.set_query(None);
            u.to_string()
        }
        Err(_) => query.upstream.clone(),
    };
    let not_offered = st.graph.as_deref().map_or_else(Vec::new, |g| {
        beyond::not_offered(g, &version, &inp.desired_arch, &inp.current_arch, &conditional)
    });
    // The updates kept after a failure are the last good answer's: the message says from when.
    let kept_since = st.hops.as_ref().and(st.last_success_wall);
    let f = FetchedUpdates {
        retrieved_error: st.error.as_ref().map(|e| {
            let mut m = if e.client_side() {
                format!("Unable to retrieve available updates: {}", e.message)
            } else {
                e.message.clone()
            };
            if let Some(t) = kept_since {
                m.push(' ');
                m.push_str(&crate::reconcile::api::updates::last_good_note(&upstream, t));
            }
            (e.reason.clone(), m)
        }),
        upstream,
        channel: query.channel.clone(),
        version: query.version.clone(),
        available,
        conditional,
        last_attempt: st.last_attempt_wall,
        last_success: st.last_success_wall,
        pending_evaluation: pending,
        not_offered,
    };
    let next_fetch = st.last_attempt.unwrap_or(now) + cfg.timings.interval;
    let next = if pending {
        next_fetch.min(Instant::now() + cfg.timings.reevaluate)
    } else {
        next_fetch
    };
    (Some(f), Some(next))
}

#[cfg(test)]
mod tests;
