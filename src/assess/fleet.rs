//! One row per cluster of a fleet (`cvo fleet`, cvo only): what an administrator of many
//! clusters scans first, decided from the same assessment `cvo status` makes
//! ([`super::assess`], [`super::overview::overview`]) and the same reading of update targets
//! as `cvo upgrade recommend` ([`super::updates::UpdateOffer`]). Pure: the fleet's watches
//! live in [`crate::cluster::fleet`], the words in the fleet view and the CLI.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{overview::overview, updates::UpdateOffer};
use crate::cluster::{
    fleet::{Member, Reach},
    update_request::compare_versions_desc,
};

/// What decides a row's colour and its place when sorted by state, most urgent first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowState {
    /// The API server does not answer (or the context cannot be used).
    Unreachable,
    /// The API server refuses the credentials or the permission to read (401, 403).
    Denied,
    /// ClusterVersion `Failing=True`.
    Failing,
    /// Some ClusterOperator is degraded or unavailable (not failing).
    Degraded,
    /// An update is in progress.
    Updating,
    /// No ClusterVersion (not OpenShift?).
    NoClusterVersion,
    /// No answer yet.
    #[default]
    Connecting,
    /// At its version, nothing failing or degraded.
    UpToDate,
}

/// A condition as a row carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RowCondition {
    /// Reason (may be empty).
    pub reason: String,
    /// Message (may be empty).
    pub message: String,
}

/// One cluster of the fleet: every value of the `cvo fleet` table (and its JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetRow {
    /// The kubeconfig context.
    pub context: String,
    /// The API server URL (empty when the context could not be configured).
    pub server: String,
    /// Whether the API server answers (its ClusterVersion and ClusterOperator watches list;
    /// also true when it answers 401 or 403, state `denied`).
    pub reachable: bool,
    /// The row's state.
    pub state: RowState,
    /// Why the cluster is unreachable or denied (one line).
    pub error: Option<String>,
    /// The newest Completed release in history (`None`: none completed yet).
    pub version: Option<String>,
    /// `spec.channel` (`None`: none set).
    pub channel: Option<String>,
    /// The release being applied (`status.desired.version` when not the current one), else a
    /// requested one no CVO has taken yet (`spec.desiredUpdate` version or image).
    pub desired: Option<String>,
    /// Completion while updating, in percent (the share of ClusterOperators at the target,
    /// the control plane's when the assessment assessed the update, as `cvo status`).
    pub progress_percent: Option<f64>,
    /// The control-plane assessment while updating (`Progressing`, `Progressing - Slow`,
    /// `Stalled`, `Completed`), as `cvo status` prints it.
    pub assessment: Option<String>,
    /// ClusterVersion `Progressing` condition's status is True.
    pub progressing: bool,
    /// ClusterVersion `Failing=True`: its reason and message.
    pub failing: Option<RowCondition>,
    /// How many targets `status.availableUpdates` lists (recommended), JSON
    /// `availableUpdates`.
    #[serde(rename = "availableUpdates")]
    pub updates_recommended: usize,
    /// How many `status.conditionalUpdates` lists, JSON `conditionalUpdates`.
    #[serde(rename = "conditionalUpdates")]
    pub updates_conditional: usize,
    /// Distinct risk names over the conditional updates.
    pub conditional_risks: usize,
    /// ClusterOperators counted.
    pub operators: usize,
    /// Of them Degraded (and available).
    pub operators_degraded: usize,
    /// Of them not Available.
    pub operators_unavailable: usize,
    /// The CVO Lease's holder (`None`: no Lease, released, or not readable).
    pub lease_holder: Option<String>,
    /// Whether that holder still holds it (renewed within its duration).
    pub lease_alive: bool,
}

/// The row of `m` at `now`.
pub fn row(m: &Member, now: DateTime<Utc>) -> FleetRow {
    let state = &m.state;
    let mut r = FleetRow {
        context: m.context.clone(),
        server: m.server.clone(),
        reachable: matches!(m.reach, Reach::Reachable | Reach::Denied(_)),
        ..FleetRow::default()
    };
    if let Reach::Unreachable(e) | Reach::Denied(e) = &m.reach {
        r.error = Some(e.message.clone());
    }
    if let Some(l) = &m.lease
        && !l.holder.is_empty()
    {
        r.lease_holder = Some(l.holder.clone());
        r.lease_alive = l.alive(now);
    }
    let Some(cv) = &state.cluster_version else {
        r.state = match m.reach {
            Reach::Unreachable(_) => RowState::Unreachable,
            Reach::Denied(_) => RowState::Denied,
            Reach::Connecting => RowState::Connecting,
            Reach::Reachable => RowState::NoClusterVersion,
        };
        return r;
    };
    let a = super::assess(state, None, now);
    let o = overview(state, &a);
    let offer = UpdateOffer::from_cluster_version(cv);
    r.version = cv.current_version().map(str::to_owned);
    r.channel = cv.spec.channel.clone().filter(|c| !c.is_empty());
    let desired = Some(cv.status.desired.version.clone()).filter(|v| !v.is_empty());
    r.desired = match &offer.requested {
        Some(q) if !q.version.is_empty() => Some(q.version.clone()),
        Some(q) => Some(q.image.clone()),
        None => desired.filter(|d| Some(d.as_str()) != r.version.as_deref()),
    };
    if o.updating {
        r.progress_percent = o.completion.as_ref().map(|c| (c.ratio * 1000.0).round() / 10.0);
        if a.error.is_none() && a.updating {
            r.assessment = Some(a.control_plane.assessment.as_str().to_owned());
        }
    }
    r.progressing = cv.condition("Progressing").is_some_and(|c| c.is_true());
    r.failing = cv
        .condition("Failing")
        .filter(|c| c.is_true())
        .map(|c| RowCondition {
            reason: c.reason().to_owned(),
            message: c.message().to_owned(),
        });
    r.updates_recommended = offer.recommended.len();
    r.updates_conditional = offer.conditional.len();
    let mut risks: Vec<&str> = offer
        .conditional
        .iter()
        .flat_map(|t| t.risks.iter().map(|k| k.risk.name.as_str()))
        .collect();
    risks.sort_unstable();
    risks.dedup();
    r.conditional_risks = risks.len();
    r.operators = o.health.total;
    r.operators_degraded = o.health.degraded;
    r.operators_unavailable = o.health.unavailable;
    r.state = if matches!(m.reach, Reach::Unreachable(_)) {
        RowState::Unreachable
    } else if matches!(m.reach, Reach::Denied(_)) {
        RowState::Denied
    } else if r.failing.is_some() {
        RowState::Failing
    } else if r.operators_degraded + r.operators_unavailable > 0 {
        RowState::Degraded
    } else if o.updating {
        RowState::Updating
    } else {
        RowState::UpToDate
    };
    r
}

/// How rows are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SortKey {
    /// By context name.
    #[default]
    Name,
    /// Newest version first (no version last), then by name.
    Version,
    /// Most urgent state first ([`RowState`] order), then by name.
    State,
}

impl SortKey {
    /// The next key (the view's sort key cycles name → version → state).
    pub fn next(self) -> Self {
        match self {
            Self::Name => Self::Version,
            Self::Version => Self::State,
            Self::State => Self::Name,
        }
    }
}

/// Orders `a` before `b` by `key` (ties by context name).
pub fn compare(a: &FleetRow, b: &FleetRow, key: SortKey) -> Ordering {
    let by_name = || a.context.cmp(&b.context);
    match key {
        SortKey::Name => by_name(),
        SortKey::Version => match (&a.version, &b.version) {
            (Some(x), Some(y)) => compare_versions_desc(x, y).then_with(by_name),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => by_name(),
        },
        SortKey::State => a.state.cmp(&b.state).then_with(by_name),
    }
}

#[cfg(test)]
mod tests;
