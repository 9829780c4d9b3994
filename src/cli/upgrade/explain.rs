//! What `cvo upgrade` and `cvo upgrade recommend` add to `oc adm upgrade`'s text, each only where
//! oc's output does not cover the situation (cvo only; upstream openshift/oc
//! `pkg/cli/admin/upgrade/upgrade.go` prints none of it):
//!
//! - [`not_picked_up`]: `spec.desiredUpdate` asks for a release that no cluster-version operator
//!   has read yet (the ClusterVersion's `metadata.generation` is newer than
//!   `status.observedGeneration`);
//! - [`not_fetched`]: `RetrievedUpdates=False` `NoUpstream` (a cvo operator started without an
//!   update service, or no service set) as one line saying how to enable retrieval;
//! - [`last_good_line`]: after a transport or response failure, how old the kept updates are
//!   (the time a cvo operator wrote into the message, else at least the failure's age);
//! - [`ask`] and [`section`]: the update service's whole channel graph, asked by cvo itself on a
//!   live cluster, and the releases newer than the current one that it does not offer, with why
//!   ([`crate::reconcile::updates::beyond::not_offered`]), naming the service asked.

use crate::l10n::{tr, trf};
use std::{sync::Arc, time::Duration};

use chrono::{DateTime, Utc};

use crate::{
    assess::{
        durations::{SECOND, between, short, trunc},
        updates::UpdateOffer,
    },
    cluster::ClusterState,
    openshift::{ClusterVersion, ConditionStatus},
    reconcile::{
        api::{NotOffered, WhyNotOffered, updates::last_good_answer},
        updates::{UpdateInputs, UpdatesConfig, beyond, client, graph::Graph, risks::NoPrometheus},
    },
};

/// How long `cvo upgrade` waits for the update service (connect and body together).
pub const ASK_TIMEOUT: Duration = Duration::from_secs(5);

/// At most this many releases are listed; the rest are counted.
const MAX_ROWS: usize = 10;

/// The `RetrievedUpdates=False` reasons after which the listed updates are a kept earlier
/// answer (upstream keeps its cache for these: transport and response failures).
const KEEPS_CACHE: [&str; 3] = ["RemoteFailed", "ResponseFailed", "ResponseInvalid"];

/// What the update service answered `cvo upgrade` for the cluster's channel.
#[derive(Clone, Debug, PartialEq)]
pub struct Explained {
    /// The service asked (without its query string).
    pub upstream: String,
    /// The channel asked for.
    pub channel: String,
    /// The version asked from (`status.desired.version`).
    pub from: String,
    /// Whether the channel's graph holds that version at all.
    pub in_graph: bool,
    /// How many releases newer than `from` the graph holds.
    pub newer: usize,
    /// The newer releases it does not offer, newest first, with why.
    pub not_offered: Vec<NotOffered>,
}

/// The outcome of [`ask`]: the answer, or the service asked and why it gave none.
pub type Asked = Result<Explained, (String, String)>;

/// The line for a requested update that no cluster-version operator has picked up
/// ([`crate::assess::blocked::requested_unobserved`]).
pub fn not_picked_up(cv: &ClusterVersion) -> Option<String> {
    let (target, generation, observed) = crate::assess::blocked::requested_unobserved(cv)?;
    Some(trf!(
        "explain-not-picked-up",
        "info: The update to {target} requested in spec.desiredUpdate has not been picked up by a cluster-version operator yet (the ClusterVersion is at generation {generation}, its status at {observed}).",
        target = target,
        generation = generation.to_string(),
        observed = observed.to_string()
    ))
}

/// One line for `RetrievedUpdates=False` `NoUpstream`: updates are not retrieved, with the
/// condition's message (a cvo operator's says which flag enables retrieval), else how to set
/// an update service.
pub fn not_fetched(cv: &ClusterVersion) -> Option<String> {
    let c = cv.condition("RetrievedUpdates")?;
    if c.status != ConditionStatus::False || c.reason() != "NoUpstream" {
        return None;
    }
    let msg = c.message().split_whitespace().collect::<Vec<_>>().join(" ");
    let how = if msg.contains("--fetch-updates") {
        msg
    } else {
        format!(
            "{msg} {}",
            tr!(
                "explain-set-upstream",
                "Set spec.upstream to an update service URL to retrieve them."
            )
        )
        .trim_start()
        .to_string()
    };
    Some(trf!(
        "explain-not-fetched",
        "info: Available updates are not retrieved (RetrievedUpdates=False, NoUpstream): {how}",
        how = how
    ))
}

/// After a transport or response failure with updates still listed: `  Last good answer: …`,
/// the age (and time, and service) a cvo operator recorded in the message, else at least the
/// failure's age.
pub fn last_good_line(cv: &ClusterVersion, now: DateTime<Utc>) -> Option<String> {
    let c = cv.condition("RetrievedUpdates")?;
    if c.status != ConditionStatus::False || !KEEPS_CACHE.contains(&c.reason()) {
        return None;
    }
    if UpdateOffer::from_cluster_version(cv).is_empty() {
        return None;
    }
    let age = |t: DateTime<Utc>| match short(trunc(between(now, t).max(0), SECOND)).as_str() {
        "now" => "0s".to_string(),
        d => d.to_string(),
    };
    Some(match last_good_answer(c.message()) {
        Some((upstream, at)) => trf!(
            "explain-last-good",
            "  Last good answer: {age} ago, at {at} from {upstream}",
            age = age(at),
            at = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            upstream = upstream
        ),
        None => match c.last_transition_time {
            Some(t) => trf!(
                "explain-last-good-before",
                "  Last good answer: more than {age} ago (before RetrievedUpdates turned False at {at})",
                age = age(t),
                at = t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
            None => tr!(
                "explain-last-good-unknown",
                "  Last good answer: before RetrievedUpdates turned False (time unknown)"
            )
            .to_string(),
        },
    })
}

/// The cluster's architecture as the update service spells it: `multi` for a Multi release,
/// else a control-plane node's (else any node's) `status.nodeInfo.architecture`, else this
/// machine's.
fn cluster_arch(cv: &ClusterVersion, state: &ClusterState) -> String {
    let inputs = UpdateInputs::of(cv);
    if inputs.desired_arch == "Multi" || inputs.current_arch == "Multi" {
        return "multi".into();
    }
    let arch = |n: &k8s_openapi::api::core::v1::Node| {
        n.status
            .as_ref()
            .and_then(|s| s.node_info.as_ref())
            .map(|i| i.architecture.clone())
            .filter(|a| !a.is_empty())
    };
    let control_plane = |n: &&k8s_openapi::api::core::v1::Node| {
        n.metadata.labels.as_ref().is_some_and(|l| {
            l.contains_key("node-role.kubernetes.io/master")
                || l.contains_key("node-role.kubernetes.io/control-plane")
        })
    };
    state
        .nodes
        .iter()
        .filter(control_plane)
        .chain(state.nodes.iter())
        .find_map(arch)
        .unwrap_or_else(|| crate::reconcile::updates::go_arch(std::env::consts::ARCH).to_string())
}

/// The proxy of this machine's environment (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, or their
/// lower-case forms), as curl and Go read them.
fn env_egress() -> client::Egress {
    let var = |k: &str| {
        std::env::var(k)
            .ok()
            .or_else(|| std::env::var(k.to_lowercase()).ok())
            .filter(|v| !v.is_empty())
    };
    let p = client::ProxySettings {
        http_proxy: var("HTTP_PROXY"),
        https_proxy: var("HTTPS_PROXY"),
        no_proxy: var("NO_PROXY"),
    };
    client::Egress {
        proxy: (p != client::ProxySettings::default()).then_some(p),
        ca_bundle: None,
    }
}

/// Asks the update service the cluster is configured with (`spec.upstream`, else the default)
/// for the channel's graph, from this machine (its environment's proxy, [`ASK_TIMEOUT`]), and
/// explains what it does not offer. `None` when there is nothing to ask (no channel, no or an
/// unparsable current version, an invalid cluster ID: the cluster's own RetrievedUpdates says
/// so).
pub fn ask(cv: &ClusterVersion, state: &ClusterState) -> Option<Asked> {
    let inputs = UpdateInputs::of(cv);
    let mut cfg = UpdatesConfig::new(Arc::new(NoPrometheus), ASK_TIMEOUT);
    cfg.arch = cluster_arch(cv, state);
    let (query, version) = inputs.query(&cfg).ok()?;
    let mut shown = query.upstream.clone();
    if let Ok(mut u) = reqwest::Url::parse(&query.upstream) {
        u.set_query(None);
        shown = u.to_string();
    }
    let fail = |e: String| Some(Err((shown.clone(), e)));
    let http = match client::http_client(&env_egress(), ASK_TIMEOUT) {
        Ok(h) => h,
        Err(e) => return fail(e),
    };
    let rt = match crate::cli::runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(e.to_string()),
    };
    let user_agent = format!("cvo/{}", env!("CARGO_PKG_VERSION"));
    let body = match rt.block_on(client::fetch_graph(&http, &query, &user_agent, cfg.max_body)) {
        Ok(b) => b,
        Err(e) => return fail(format!("{}: {}", e.reason, e.message)),
    };
    let graph = match Graph::parse(&body) {
        Ok(g) => g,
        Err(e) => return fail(format!("{}: {}", e.reason, e.message)),
    };
    Some(Ok(explain(&graph, &version, cv, shown, query.channel)))
}

/// The explanation of `graph` for the cluster of `cv`, asked of `upstream` for `channel`.
pub fn explain(
    graph: &Graph,
    version: &semver::Version,
    cv: &ClusterVersion,
    upstream: String,
    channel: String,
) -> Explained {
    let inputs = UpdateInputs::of(cv);
    Explained {
        upstream,
        channel,
        from: version.to_string(),
        in_graph: graph
            .nodes
            .iter()
            .any(|n| n.version.cmp_precedence(version).is_eq()),
        newer: graph
            .nodes
            .iter()
            .filter(|n| n.version.cmp_precedence(version).is_gt())
            .count(),
        not_offered: beyond::not_offered(
            graph,
            version,
            &inputs.desired_arch,
            &inputs.current_arch,
            &cv.status.conditional_updates,
        ),
    }
}

/// Why one release is not offered, in a few words (never suggesting `--force`).
pub fn why_text(n: &NotOffered, from: &str) -> String {
    match &n.why {
        WhyNotOffered::NoEdge { via: Some(v) } => {
            trf!(
                "explain-why-via",
                "no update from {from} yet; reachable by updating to {v} first",
                from = from,
                v = v
            )
        }
        WhyNotOffered::NoEdge { via: None } => trf!(
            "explain-why-no-path",
            "no update path from {from} in this channel",
            from = from
        ),
        WhyNotOffered::UnusableConditionalEdge => trf!(
            "explain-why-unusable",
            "its conditional update from {from} is dropped: a risk has no recognized matching rule, or the update is declared twice",
            from = from
        ),
        WhyNotOffered::Blocked { risks, recommended } => {
            let names: Vec<&str> = risks.iter().map(|r| r.name.as_str()).collect();
            let names = if names.is_empty() {
                "-".to_string()
            } else {
                names.join(", ")
            };
            match recommended {
                Some(c) if c.status == ConditionStatus::False => {
                    trf!(
                        "explain-why-not-recommended",
                        "not recommended: risk {names} applies to this cluster",
                        names = names
                    )
                }
                Some(c) => trf!(
                    "explain-why-unevaluated",
                    "recommended status {status}{reason}: risk {names} could not be evaluated",
                    status = c.status.as_str(),
                    reason = if c.reason().is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", c.reason())
                    },
                    names = names
                ),
                None => trf!(
                    "explain-why-pending",
                    "conditional update with risk {names}, not evaluated by the cluster yet",
                    names = names
                ),
            }
        }
    }
}

/// The section `cvo upgrade` and `cvo upgrade recommend` print after oc's text: what the
/// service asked lists beyond the offered updates, starting with a blank line. `details`
/// names where a blocked update's risk is shown in full.
pub fn section(asked: &Explained, details: &str) -> String {
    let e = asked;
    let mut out = String::from("\n");
    if !e.in_graph {
        out += &trf!(
            "explain-not-in-graph",
            "The update service {upstream} does not list {from} in channel {channel}, so it offers no update from it.",
            upstream = e.upstream,
            from = e.from,
            channel = e.channel
        );
        out.push('\n');
        return out;
    }
    if e.not_offered.is_empty() {
        out += &if e.newer == 0 {
            trf!(
                "explain-nothing-newer",
                "The update service {upstream} lists no release newer than {from} in channel {channel}.",
                upstream = e.upstream,
                from = e.from,
                channel = e.channel
            )
        } else {
            trf!(
                "explain-all-offered",
                "The update service {upstream} offers every release newer than {from} in channel {channel}.",
                upstream = e.upstream,
                from = e.from,
                channel = e.channel
            )
        };
        out.push('\n');
        return out;
    }
    out += &trf!(
        "explain-not-offered",
        "Releases in channel {channel} newer than {from} that are not offered (update service {upstream}):",
        channel = e.channel,
        from = e.from,
        upstream = e.upstream
    );
    out.push('\n');
    let mut table = format!(
        "  {}\t{}\n",
        tr!("upgrade-col-version", "VERSION"),
        tr!("explain-col-why", "WHY")
    );
    for n in e.not_offered.iter().take(MAX_ROWS) {
        table += &format!("  {}\t{}\n", n.release.version, why_text(n, &e.from));
    }
    out += &crate::cli::tabwriter::format(&table, 14, 1);
    if e.not_offered.len() > MAX_ROWS {
        out += &trf!(
            "explain-older-not-offered",
            "  And {count} older releases not offered.",
            count = e.not_offered.len() - MAX_ROWS
        );
        out.push('\n');
    }
    if e.not_offered
        .iter()
        .any(|n| matches!(n.why, WhyNotOffered::Blocked { .. }))
    {
        out += &trf!(
            "explain-risks-in-full",
            "A not recommended update's risks are shown in full {details}.",
            details = details
        );
        out.push('\n');
    }
    out
}

/// The line logged when the update service could not be asked.
pub fn failed_line(upstream: &str, err: &str) -> String {
    format!("cvo could not ask the update service {upstream} which releases it does not offer: {err}")
}

/// Logs why the update service could not be asked (level `info`: shown with `-v 1`), so that
/// a machine without a way to the service (a disconnected cluster's) prints what oc prints.
pub fn log_failure(asked: Option<&Asked>) {
    if let Some(Err((upstream, e))) = asked {
        tracing::info!("{}", failed_line(upstream, e));
    }
}

#[cfg(test)]
mod tests;
