//! The dashboard's overview decisions, made once here so that every view words the same
//! verdict: each ClusterOperator's status (the one status word of the operator table) and why
//! it waits, the completion counts, the operator health counts, and the headline (what
//! decides the one line at the top: Failing over Unavailable over Progressing, a blocked
//! update, the control-plane assessment of `oc adm upgrade status`).
//!
//! [`overview`] reads the [`ClusterState`] and the [`Assessment`] made from it; while the
//! assessment says an update is in progress, its control-plane numbers win over the counts
//! made from the ClusterOperators alone, so the dashboard and `cvo status` agree.
//!
//! Pure: no I/O, no text for a screen (the views word, colour and order).

use crate::{
    cluster::{ClusterState, FeedStatus},
    openshift::{ClusterOperator, ClusterVersion, Condition, ConditionStatus},
};

use super::{
    Assessment, ControlPlaneAssessment, Impact, Insight, Level, NodeAssessmentState, OperatorHealth,
    PoolAssessment, Resource, blocked,
};

/// A ClusterOperator's status, most decisive first (`Unavailable` wins over `Degraded`,
/// which wins over `Progressing`, and so on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OperatorStatus {
    /// Available, not degraded, not progressing, at the target version.
    Ok,
    /// `Progressing=True`.
    Progressing,
    /// Not at the target version and not progressing: waiting for its update.
    Pending,
    /// `Degraded=True`, still available.
    Degraded,
    /// `Available` missing or not True.
    Unavailable,
    /// `Upgradeable=False`: blocks the next minor update.
    NotUpgradeable,
    /// Available, Degraded and Progressing all missing, or one of them Unknown.
    #[default]
    Unknown,
}

/// One ClusterOperator as the overview decides it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OperatorState {
    /// Name.
    pub name: String,
    /// Its `operator` version (empty when not reported).
    pub version: String,
    /// Whether `version` is the ClusterVersion's desired version (true when no version is
    /// desired).
    pub at_target: bool,
    /// `Available` status (`None` when missing).
    pub available: Option<ConditionStatus>,
    /// `Progressing` status.
    pub progressing: Option<ConditionStatus>,
    /// `Degraded` status.
    pub degraded: Option<ConditionStatus>,
    /// `Upgradeable` status.
    pub upgradeable: Option<ConditionStatus>,
    /// The status.
    pub status: OperatorStatus,
    /// The condition that decided the status (`None` when it has no condition at all).
    pub decided_by: Option<Condition>,
    /// For a [`OperatorStatus::Pending`] operator whose deciding condition has no message:
    /// the release it waits to update to (`?` when the ClusterVersion desires none).
    pub waiting_for: Option<String>,
}

/// The status of `co` and the condition that decided it; `at_target`: its version is the
/// desired one.
pub fn operator_status(co: &ClusterOperator, at_target: bool) -> (OperatorStatus, Option<&Condition>) {
    let available = co.condition("Available");
    let degraded = co.condition("Degraded");
    let progressing = co.condition("Progressing");
    let upgradeable = co.condition("Upgradeable");
    if available.is_none() && degraded.is_none() && progressing.is_none() {
        return (OperatorStatus::Unknown, None);
    }
    if !available.is_some_and(Condition::is_true) {
        return (OperatorStatus::Unavailable, available);
    }
    if degraded.is_some_and(Condition::is_true) {
        return (OperatorStatus::Degraded, degraded);
    }
    if progressing.is_some_and(Condition::is_true) {
        return (OperatorStatus::Progressing, progressing);
    }
    if !at_target {
        return (OperatorStatus::Pending, progressing.or(available));
    }
    if upgradeable.is_some_and(Condition::is_false) {
        return (OperatorStatus::NotUpgradeable, upgradeable);
    }
    if [available, degraded, progressing]
        .iter()
        .any(|c| c.is_some_and(|c| c.status == ConditionStatus::Unknown))
    {
        return (OperatorStatus::Unknown, available);
    }
    (OperatorStatus::Ok, available)
}

/// `co` against the desired version `desired` (`None`: the ClusterVersion desires none).
pub fn operator_state(co: &ClusterOperator, desired: Option<&str>) -> OperatorState {
    let version = co.operator_version().unwrap_or("").to_owned();
    let at_target = desired.is_none_or(|d| d == version);
    let (status, decider) = operator_status(co, at_target);
    let silent = decider.is_none_or(|c| c.message().trim().is_empty());
    let status_of = |t: &str| co.condition(t).map(|c| c.status);
    OperatorState {
        name: co.name().to_owned(),
        at_target,
        available: status_of("Available"),
        progressing: status_of("Progressing"),
        degraded: status_of("Degraded"),
        upgradeable: status_of("Upgradeable"),
        status,
        decided_by: decider.cloned(),
        waiting_for: (status == OperatorStatus::Pending && silent).then(|| desired.unwrap_or("?").to_owned()),
        version,
    }
}

/// Control-plane completion: operators at the target, moving to it, waiting for it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Completion {
    /// Operators at the target version.
    pub updated: usize,
    /// Operators counted.
    pub total: usize,
    /// Operators progressing toward the target.
    pub updating: usize,
    /// Operators not yet started.
    pub waiting: usize,
    /// `updated / total` (0 without operators); may be above 1 or not finite in broken
    /// inputs.
    pub ratio: f64,
    /// Whether the numbers are the assessment's control plane (platform operators, with
    /// duration and estimate in [`Assessment::control_plane`]) rather than every
    /// ClusterOperator's version.
    pub assessed: bool,
}

/// Completion counted over every ClusterOperator's version.
pub fn completion(ops: &[OperatorState]) -> Completion {
    let total = ops.len();
    let updated = ops.iter().filter(|o| o.at_target).count();
    let progressing = |o: &&OperatorState| o.progressing == Some(ConditionStatus::True);
    let updating = ops.iter().filter(|o| !o.at_target).filter(progressing).count();
    let waiting = ops.iter().filter(|o| !o.at_target).count() - updating;
    #[allow(clippy::cast_precision_loss)]
    let ratio = if total == 0 {
        0.0
    } else {
        updated as f64 / total as f64
    };
    Completion {
        updated,
        total,
        updating,
        waiting,
        ratio,
        assessed: false,
    }
}

/// Health counts over every ClusterOperator: unavailable, degraded (and available), the
/// rest healthy.
pub fn health(ops: &[OperatorState]) -> OperatorHealth {
    let count = |s: OperatorStatus| ops.iter().filter(|o| o.status == s).count();
    let unavailable = count(OperatorStatus::Unavailable);
    let degraded = count(OperatorStatus::Degraded);
    OperatorHealth {
        total: ops.len(),
        healthy: ops.len() - unavailable - degraded,
        unavailable,
        degraded,
    }
}

/// Why there is no ClusterVersion to speak of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoClusterVersion {
    /// A live feed that cannot reach the API server.
    Unreachable,
    /// A live feed that has not listed yet.
    Syncing,
    /// The cluster (or snapshot) has none: not OpenShift?
    Absent,
}

/// The progress kept beside a headline that another fact wins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Progress {
    /// The share of ClusterOperators at the target version.
    OperatorsUpdated(f64),
    /// The control-plane assessment and its completion ratio (what `cvo status` prints as
    /// `Assessment:` and `Completion:`).
    Assessed(ControlPlaneAssessment, f64),
}

/// A worker pool that has not reached the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolProgress {
    /// Pool name.
    pub name: String,
    /// Nodes at the target.
    pub updated: usize,
    /// Nodes in the pool.
    pub total: usize,
    /// `spec.paused`.
    pub paused: bool,
}

/// What decides the headline, most decisive first.
#[derive(Clone, Debug, PartialEq)]
pub enum Headline {
    /// No ClusterVersion.
    NoClusterVersion(NoClusterVersion),
    /// `Failing=True` (wins even while progressing).
    Failing {
        /// The Failing condition.
        condition: Condition,
        /// The update's progress, when one is in progress.
        progress: Option<Progress>,
    },
    /// `Available=False` (not failing).
    Unavailable {
        /// The Available condition.
        condition: Condition,
        /// The update's progress, when one is in progress.
        progress: Option<Progress>,
    },
    /// `Progressing=True`, with no assessment of it (the assessment could not be made).
    Progressing {
        /// The Progressing condition.
        condition: Condition,
    },
    /// Not updating.
    UpToDate {
        /// `Upgradeable=False`, if so.
        not_upgradeable: Option<Condition>,
        /// The Available condition, if any.
        available: Option<Condition>,
    },
    /// The first insight of [`blocked`] (what `oc`'s rules miss): the update does not
    /// proceed.
    Blocked {
        /// The insight's summary.
        summary: String,
        /// Whether the insight is an error (else a warning).
        error: bool,
        /// The control-plane progress, while an update is assessed.
        progress: Option<Progress>,
    },
    /// The control plane is Completed; worker pools are not.
    WorkersPending {
        /// The control plane's version.
        target: String,
        /// The worker pools with nodes not at the target.
        pools: Vec<PoolProgress>,
    },
    /// The control-plane assessment of `oc adm upgrade status` while updating.
    ControlPlane {
        /// Progressing, Progressing - Slow or Stalled.
        assessment: ControlPlaneAssessment,
        /// The ClusterVersion's Progressing condition, if any.
        progressing: Option<Condition>,
        /// The target version.
        target: String,
    },
}

/// Everything the overview decides for one cluster state.
#[derive(Clone, Debug, PartialEq)]
pub struct Overview {
    /// The ClusterOperators, in the state's order.
    pub operators: Vec<OperatorState>,
    /// `status.desired.version` (`None` when empty or no ClusterVersion).
    pub desired: Option<String>,
    /// An update is in progress by the ClusterVersion: `Progressing=True`, or the desired
    /// version is not the current one.
    pub updating: bool,
    /// Completion, while updating: the assessment's control plane when it assessed the
    /// update, else counted over every ClusterOperator.
    pub completion: Option<Completion>,
    /// Operator health: the assessment's platform operators when it assessed the update,
    /// else every ClusterOperator.
    pub health: OperatorHealth,
    /// The headline.
    pub headline: Headline,
}

/// Decides the overview of `state`, given the assessment `a` made from it.
pub fn overview(state: &ClusterState, a: &Assessment) -> Overview {
    let cv = state.cluster_version.as_ref();
    let desired = cv
        .map(|cv| cv.status.desired.version.clone())
        .filter(|v| !v.is_empty());
    let operators: Vec<OperatorState> = state
        .cluster_operators
        .iter()
        .map(|co| operator_state(co, desired.as_deref()))
        .collect();
    let current = cv.and_then(ClusterVersion::current_version);
    let progressing = cv
        .and_then(|cv| cv.condition("Progressing"))
        .is_some_and(Condition::is_true);
    let updating = progressing || (desired.is_some() && desired.as_deref() != current);
    let mut completion = updating.then(|| self::completion(&operators));
    let mut health = health(&operators);
    let mut headline = cv_headline(
        cv,
        completion.as_ref().map(|c| Progress::OperatorsUpdated(c.ratio)),
        &state.feed,
    );
    if a.error.is_none() && !a.updating {
        // Not updating by oc's rules, yet blocked (a requested release not accepted).
        if let Some(b) = blocked_headline(a, None) {
            headline = b;
        }
    }
    if a.error.is_none() && a.updating {
        let cp = &a.control_plane;
        let ratio = cp.completion_percent / 100.0;
        completion = Some(Completion {
            updated: cp.operators_updated,
            total: cp.operators_total,
            updating: cp.updating_operators.len(),
            waiting: cp.operators_waiting,
            ratio,
            assessed: true,
        });
        health = cp.operator_health.clone();
        headline = assessed_headline(cv, a, ratio);
    }
    Overview {
        operators,
        desired,
        updating,
        completion,
        health,
        headline,
    }
}

/// The headline from the ClusterVersion alone: Failing wins over Available=False over
/// Progressing; progress stays beside the first two.
fn cv_headline(cv: Option<&ClusterVersion>, progress: Option<Progress>, feed: &FeedStatus) -> Headline {
    let Some(cv) = cv else {
        return Headline::NoClusterVersion(match feed {
            FeedStatus::Live { error: Some(_), .. } => NoClusterVersion::Unreachable,
            FeedStatus::Live { synced: false, .. } => NoClusterVersion::Syncing,
            _ => NoClusterVersion::Absent,
        });
    };
    let true_cond = |t: &str| cv.condition(t).filter(|c| c.is_true()).cloned();
    let false_cond = |t: &str| cv.condition(t).filter(|c| c.is_false()).cloned();
    if let Some(condition) = true_cond("Failing") {
        return Headline::Failing { condition, progress };
    }
    if let Some(condition) = false_cond("Available") {
        return Headline::Unavailable { condition, progress };
    }
    if let Some(condition) = true_cond("Progressing") {
        return Headline::Progressing { condition };
    }
    Headline::UpToDate {
        not_upgradeable: false_cond("Upgradeable"),
        available: cv.condition("Available").cloned(),
    }
}

/// While the assessment assessed an update: Failing wins, then a blocked update, then the
/// worker pools once the control plane is done, then the control-plane assessment.
fn assessed_headline(cv: Option<&ClusterVersion>, a: &Assessment, ratio: f64) -> Headline {
    let cp = &a.control_plane;
    let progress = Progress::Assessed(cp.assessment, ratio);
    if let Some(condition) = cv
        .and_then(|cv| cv.condition("Failing"))
        .filter(|c| c.is_true())
        .cloned()
    {
        return Headline::Failing {
            condition,
            progress: Some(progress),
        };
    }
    if let Some(b) = blocked_headline(a, Some(progress)) {
        return b;
    }
    if cp.assessment == ControlPlaneAssessment::Completed {
        return Headline::WorkersPending {
            target: cp.target_version.clone(),
            pools: a
                .worker_pools()
                .filter(|p| p.total > 0 && p.updated < p.total)
                .map(|p| PoolProgress {
                    name: p.name.clone(),
                    updated: p.updated,
                    total: p.total,
                    paused: p.paused,
                })
                .collect(),
        };
    }
    Headline::ControlPlane {
        assessment: cp.assessment,
        progressing: cv.and_then(|cv| cv.condition("Progressing")).cloned(),
        target: cp.target_version.clone(),
    }
}

/// [`Headline::Blocked`] with the first insight oc's rules miss, if any.
fn blocked_headline(a: &Assessment, progress: Option<Progress>) -> Option<Headline> {
    let i = a.health.insights.iter().find(|i| blocked::is_blocked(i))?;
    Some(Headline::Blocked {
        summary: i.summary.clone(),
        error: i.level >= Level::Error,
        progress,
    })
}

/// Insights read from the state when the assessment makes none (no update in progress, or it
/// could not assess): the ClusterVersion failing to proceed, each unavailable or degraded
/// ClusterOperator, each degraded or unavailable node, each paused pool with outdated nodes;
/// most severe first. Their SINCE text is empty: the assessment did not measure it. Pools and
/// nodes are the assessment's ([`Assessment::node_pools`]), the control-plane pool first.
pub fn fallback_insights(state: &ClusterState, o: &Overview, a: &Assessment) -> Vec<Insight> {
    const CO_REF: &str =
        "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/";
    let resource = |kind: &str, name: &str| {
        vec![Resource {
            kind: kind.into(),
            name: name.into(),
        }]
    };
    let mut out = Vec::new();
    if let Some(f) = state
        .cluster_version
        .as_ref()
        .and_then(|cv| cv.condition("Failing"))
        .filter(|c| c.is_true())
    {
        out.push(Insight {
            started_at: f.last_transition_time,
            level: Level::Warning,
            impact: Impact::UpdateStalled,
            summary: format!(
                "Cluster Version version is failing to proceed with the update ({})",
                f.reason()
            ),
            description: f.message().to_owned(),
            reference: format!("{CO_REF}ClusterOperatorDegraded.md"),
            resources: resource("clusterversions.config.openshift.io", "version"),
            ..Insight::default()
        });
    }
    for co in &state.cluster_operators {
        let Some(op) = o.operators.iter().find(|s| s.name == co.name()) else {
            continue;
        };
        let (what, cond, runbook) = match op.status {
            OperatorStatus::Unavailable => {
                ("unavailable", co.condition("Available"), "ClusterOperatorDown.md")
            }
            OperatorStatus::Degraded => ("degraded", co.condition("Degraded"), "ClusterOperatorDegraded.md"),
            _ => continue,
        };
        out.push(Insight {
            started_at: cond.and_then(|c| c.last_transition_time),
            level: Level::Error,
            impact: Impact::ApiAvailability,
            summary: format!(
                "Cluster Operator {} is {what} ({})",
                co.name(),
                cond.map_or("", Condition::reason)
            ),
            description: cond.map(Condition::message).unwrap_or_default().to_owned(),
            reference: format!("{CO_REF}{runbook}"),
            resources: resource("clusteroperators.config.openshift.io", co.name()),
            ..Insight::default()
        });
    }
    let pools = a.node_pools();
    let pools: Vec<&PoolAssessment> = pools
        .iter()
        .filter(|p| p.is_master)
        .chain(pools.iter().filter(|p| !p.is_master))
        .collect();
    for n in pools.iter().flat_map(|p| &p.nodes).filter(|n| {
        matches!(
            n.assessment,
            NodeAssessmentState::Degraded | NodeAssessmentState::Unavailable
        )
    }) {
        out.push(Insight {
            level: Level::Error,
            impact: Impact::UpdateStalled,
            summary: format!("Node {} is {}", n.name, n.assessment.as_str().to_lowercase()),
            description: n.message.clone(),
            resources: resource("nodes", &n.name),
            ..Insight::default()
        });
    }
    for p in pools.iter().filter(|p| p.paused && p.updated < p.total) {
        out.push(Insight {
            level: Level::Info,
            impact: Impact::UpdateStalled,
            summary: format!("Outdated nodes in a paused pool '{}' will not be updated", p.name),
            description:
                "Pool is paused, which stops all changes to the nodes in the pool, including updates. \
                          The nodes will not be updated until the pool is unpaused by the administrator."
                    .into(),
            resources: resource("machineconfigpools.machineconfiguration.openshift.io", &p.name),
            ..Insight::default()
        });
    }
    out.sort_by_key(|i| std::cmp::Reverse(i.level));
    out
}

#[cfg(test)]
mod tests;
