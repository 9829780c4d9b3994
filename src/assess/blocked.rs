//! What `oc adm upgrade status` does not say: an update that is blocked while oc's rules read
//! "The cluster is not updating." or "Update is proceeding well". cvo adds these as
//! update-health insights (so `cvo status` and the dashboard's health panel and headline say
//! the same), leaving oc's own text as it is:
//!
//! - [`not_accepted`]: the administrator requested an update (`spec.desiredUpdate`) and the CVO
//!   refused its release (`ReleaseAccepted=False`, e.g. the signature could not be verified or
//!   the payload not retrieved; openshift/cluster-version-operator `pkg/cvo/cvo.go` sets it).
//!   oc shows the cluster as not updating, the target as `-`.
//! - [`waiting_on_operands`]: a ClusterOperator reports the target for its `operator` version
//!   (so oc counts it updated) but the CVO still waits on it, because an operand version the
//!   payload's manifest expects is still the previous release's (the CVO's check is
//!   `checkOperatorHealth` in `lib/resourcebuilder/` / `pkg/cvo/internal/operatorstatus.go`;
//!   its Progressing message names the operator: `waiting on <name>`).

use chrono::{DateTime, Utc};

use super::controlplane::{CO_KIND, CV_KIND, REF_HISTORY};
use super::durations::{SECOND, between, short, trunc};
use super::{Impact, Insight, Level, Resource};
use crate::openshift::{ClusterOperator, ClusterVersion, ConditionStatus};

/// Whether `i` is one of this module's insights (an update blocked where oc's rules see none):
/// the dashboard's headline names it.
pub fn is_blocked(i: &Insight) -> bool {
    i.impact == Impact::UpdateStalled
        && (i.summary.starts_with("requested update to ") || i.summary.starts_with("waiting on "))
        && i.resources.len() == 1
}

/// How long an operator must have been silent (no condition change) while the CVO waits on it
/// before [`waiting_on_operands`] names it: 10 minutes, in nanoseconds.
pub const WAIT_THRESHOLD: i64 = 10 * 60 * SECOND;

/// The `ReleaseAccepted` condition type of the ClusterVersion.
const RELEASE_ACCEPTED: &str = "ReleaseAccepted";

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The requested update the CVO did not accept: `requested update to X not accepted:
/// <reason>: <message>` (level Error, impact Update Stalled, since the condition's last
/// transition), when `ReleaseAccepted` is `False` and an update is requested
/// (`spec.desiredUpdate`; X is its version, else its image). `None` otherwise.
pub fn not_accepted(cv: &ClusterVersion) -> Option<Insight> {
    let c = cv.condition(RELEASE_ACCEPTED)?;
    if c.status != ConditionStatus::False {
        return None;
    }
    let requested = cv.spec.desired_update.as_ref()?;
    let target = requested
        .version
        .as_deref()
        .filter(|v| !v.is_empty())
        .or(requested.image.as_deref().filter(|i| !i.is_empty()))?;
    let name = cv.metadata.name.clone().unwrap_or_default();
    let message = one_line(c.message());
    let why = match (c.reason().is_empty(), message.is_empty()) {
        (false, false) => format!("{}: {message}", c.reason()),
        (false, true) => c.reason().to_owned(),
        (true, false) => message.clone(),
        (true, true) => "no reason given".to_owned(),
    };
    Some(Insight {
        started_at: c.last_transition_time,
        level: Level::Error,
        impact: Impact::UpdateStalled,
        summary: format!("requested update to {target} not accepted: {why}"),
        description: format!(
            "The cluster stays at its current release: the release requested in \
             spec.desiredUpdate ({target}) was refused by the cluster-version operator \
             (ReleaseAccepted=False). Fix the cause (signature stores, registry access), request \
             another release, or clear the request (cvo upgrade --clear). {message}"
        )
        .trim_end()
        .to_owned(),
        reference: REF_HISTORY.to_owned(),
        resources: vec![Resource {
            kind: CV_KIND.to_owned(),
            name,
        }],
        ..Default::default()
    })
}

/// The ClusterOperator names of a Progressing message's `waiting on a, b` clause (up to ` over`
/// or the end).
fn waiting_on(message: &str) -> Vec<String> {
    let Some(i) = message.rfind("waiting on ") else {
        return Vec::new();
    };
    let rest = &message[i + "waiting on ".len()..];
    let rest = rest.split(" over ").next().unwrap_or(rest);
    rest.split(',')
        .map(|s| s.trim().trim_end_matches('.').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// One insight per operand the CVO waits for: `waiting on <operator> to report <operand>
/// <version> for <duration>` (level Warning, impact Update Stalled). A ClusterOperator counts
/// when the ClusterVersion's Progressing=True message names it (`waiting on ...`), its
/// `operator` version already is the target (`status.desired.version`) and it is not
/// Progressing (else oc lists it as updating), and an operand still
/// reports the previous release's version (the newest Completed history entry); where no
/// operand is at the previous version, one insight says `its operand versions`. Only operators
/// whose latest condition change is at least [`WAIT_THRESHOLD`] old count. The duration
/// runs from the operator's latest condition change (when it last said anything), else from
/// the Progressing condition's, measured at `now`.
pub fn waiting_on_operands(
    cv: &ClusterVersion,
    operators: &[ClusterOperator],
    now: DateTime<Utc>,
) -> Vec<Insight> {
    let Some(p) = cv.condition("Progressing").filter(|p| p.is_true()) else {
        return Vec::new();
    };
    let target = cv.status.desired.version.as_str();
    if target.is_empty() {
        return Vec::new();
    }
    let previous = cv.current_version().filter(|v| *v != target);
    let mut out = Vec::new();
    for name in waiting_on(p.message()) {
        let Some(co) = operators.iter().find(|c| c.name() == name) else {
            continue;
        };
        if co.operator_version() != Some(target) || co.condition("Progressing").is_some_and(|c| c.is_true()) {
            continue; // oc already lists it as updating.
        }
        let since = co
            .status
            .conditions
            .iter()
            .filter_map(|c| c.last_transition_time)
            .max()
            .or(p.last_transition_time);
        // A rollout the operator has just finished reporting may take a moment to show in its
        // operand versions (real clusters pass through this for seconds): only a wait of
        // WAIT_THRESHOLD is named.
        if since.is_some_and(|t| between(now, t) < WAIT_THRESHOLD) {
            continue;
        }
        let waited = since.map_or_else(
            || "an unknown time".to_owned(),
            |t| match short(trunc(between(now, t), SECOND)).as_str() {
                "now" => "0s".to_owned(),
                d => d.to_owned(),
            },
        );
        let stale: Vec<&str> = co
            .status
            .versions
            .iter()
            .filter(|v| v.name != "operator" && previous.is_some_and(|p| v.version == p))
            .map(|v| v.name.as_str())
            .collect();
        let operands: Vec<String> = if stale.is_empty() {
            vec!["its operand versions".to_owned()]
        } else {
            stale.iter().map(|o| format!("{o} {target}")).collect()
        };
        for what in operands {
            out.push(Insight {
                started_at: since,
                level: Level::Warning,
                impact: Impact::UpdateStalled,
                summary: format!("waiting on {name} to report {what} for {waited}"),
                description: format!(
                    "Cluster operator {name} reports version {target} for itself, so oc counts it \
                     updated, but the cluster-version operator waits until every version the \
                     release's manifest lists is reported ({}). Check the operator's operands and \
                     logs.",
                    one_line(p.message())
                ),
                reference: REF_HISTORY.to_owned(),
                resources: vec![Resource {
                    kind: CO_KIND.to_owned(),
                    name: name.clone(),
                }],
                ..Default::default()
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_on_reads_the_progressing_clause() {
        assert_eq!(
            waiting_on("Working towards 4.16.4: 904 of 905 done (99% complete), waiting on etcd, dns"),
            ["etcd", "dns"]
        );
        assert_eq!(
            waiting_on(
                "Working towards 1.2.3: waiting on co-timeout over 30 minutes which is longer than expected"
            ),
            ["co-timeout"]
        );
        assert!(waiting_on("Cluster version is 4.16.4").is_empty());
    }
}
