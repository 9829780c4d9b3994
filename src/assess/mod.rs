//! Pure functions from cluster state to an assessment of the update: what
//! `oc adm upgrade status` computes (`openshift/oc pkg/cli/admin/upgrade/status/`).
//!
//! [`assess`] is the entry point. It never does I/O and never panics on input data: problems
//! that stop the assessment (no ClusterVersion, no ClusterOperators, no `Progressing`
//! condition) are reported in [`Assessment::error`]; pools and nodes are assessed even then
//! ([`Assessment::node_pools`]), so every view of them (the dashboard, `cvo status`) comes from
//! here.
//!
//! Durations are carried twice: as raw signed nanoseconds / `DateTime<Utc>` for the dashboard,
//! and as the exact text `oc` prints (Go duration strings shortened by
//! `openshift/oc pkg/cli/admin/upgrade/status/status.go` `shortDuration`).

pub mod alerts;
pub mod blocked;
pub mod controlplane;
pub mod durations;
pub mod fleet;
pub mod health;
pub mod insight_text;
pub mod nodes;
pub mod overview;
pub mod updates;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::cluster::ClusterState;

/// The whole assessment of a cluster's update at one instant
/// (`openshift/oc pkg/cli/admin/upgrade/status/status.go` `Run`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assessment {
    /// The instant durations are measured against.
    pub now: Option<DateTime<Utc>>,
    /// Why no assessment could be made (no ClusterVersion, no ClusterOperators, no
    /// `Progressing` condition). When set, the other fields are defaults, except
    /// [`Assessment::pools_despite_error`].
    pub error: Option<String>,
    /// Whether an update is in progress: ClusterVersion `Progressing=True`, or some non-master
    /// pool with nodes is not fully updated. `false` prints `The cluster is not updating.`
    pub updating: bool,
    /// Name of the ClusterVersion (normally `version`).
    pub cluster_version_name: String,
    /// Newest `Completed` history entry's version: `None` when the history has
    /// no Completed entry, never the desired version in disguise.
    pub current_version: Option<String>,
    /// `status.desired.version` of the ClusterVersion.
    pub desired_version: Option<String>,
    /// When the current update started: `history[0].startedTime`, or the `Progressing`
    /// transition time with an empty history.
    pub started_at: Option<DateTime<Utc>>,
    /// `now − started_at`, rounded to the second.
    pub updating_for: DurationValue,
    /// Control-plane assessment (operators, versions, completion, estimate). Computed even
    /// when not updating (then it describes the last update), though `oc` does not print it.
    pub control_plane: ControlPlane,
    /// Every MachineConfigPool in list order, the `master` pool included
    /// (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go`).
    pub pools: Vec<PoolAssessment>,
    /// When [`Assessment::error`] is set: every MachineConfigPool and its nodes as far as they
    /// can be assessed without the rest (no target version without a ClusterVersion), for
    /// views that show them anyway (the dashboard). Empty otherwise ([`Assessment::pools`]
    /// holds them); never serialized, so `cvo status -o json` prints only the error's fields.
    #[serde(skip)]
    pub pools_despite_error: Vec<PoolAssessment>,
    /// Whether some non-master pool has at least one node: the `= Worker Upgrade =` section.
    pub show_worker_section: bool,
    /// Update-health insights, sorted as `oc` prints them
    /// (`openshift/oc pkg/cli/admin/upgrade/status/health.go`). Empty when not updating.
    pub health: UpdateHealth,
    /// The ClusterVersion `Failing` condition when it is not `False` (a failing
    /// update must win the headline even while `Progressing=True`); `None` when not failing or
    /// when the condition is missing (see [`Assessment::failing_condition_missing`]).
    pub failing: Option<ConditionSummary>,
    /// Whether the ClusterVersion has no `Failing` condition at all.
    pub failing_condition_missing: bool,
    /// The ClusterVersion `Progressing` condition (e.g. `Working towards 4.15.0: 106 of 863 done`).
    pub progressing: Option<ConditionSummary>,
    /// There are nodes but no MachineConfigs (e.g. a must-gather without them): node versions are
    /// unknown (`?`), so every node counts as outdated and, as with `oc`, the workers make the
    /// cluster look like it is updating. Views should say so rather than trust the node columns.
    pub node_versions_unknown: bool,
}

/// A condition reduced to what a view shows (`openshift/api config/v1 ClusterOperatorStatusCondition`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionSummary {
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Machine-readable reason (may be empty).
    pub reason: String,
    /// Human-readable message (may span lines).
    pub message: String,
    /// `lastTransitionTime`.
    pub since: Option<DateTime<Utc>>,
}

impl From<&crate::openshift::Condition> for ConditionSummary {
    fn from(c: &crate::openshift::Condition) -> Self {
        Self {
            status: c.status.as_str().to_owned(),
            reason: c.reason().to_owned(),
            message: c.message().to_owned(),
            since: c.last_transition_time,
        }
    }
}

impl Assessment {
    /// The `master` pool, when there is one.
    pub fn master_pool(&self) -> Option<&PoolAssessment> {
        self.pools.iter().find(|p| p.is_master)
    }
    /// The non-master pools, in list order.
    pub fn worker_pools(&self) -> impl Iterator<Item = &PoolAssessment> {
        self.pools.iter().filter(|p| !p.is_master)
    }
    /// Every pool and its nodes, whether or not the assessment as a whole succeeded:
    /// [`Assessment::pools`], or [`Assessment::pools_despite_error`] when
    /// [`Assessment::error`] is set.
    pub fn node_pools(&self) -> &[PoolAssessment] {
        if self.error.is_some() {
            &self.pools_despite_error
        } else {
            &self.pools
        }
    }
}

/// A duration: signed nanoseconds plus the text `oc` prints for it
/// (`openshift/oc pkg/cli/admin/upgrade/status/status.go` `shortDuration`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DurationValue {
    /// Signed nanoseconds.
    pub nanos: i64,
    /// As printed, e.g. `1h4m41s`, `now`, `6m8s`.
    pub text: String,
}

impl DurationValue {
    /// A value from nanoseconds, with `short()` text.
    pub fn new(nanos: i64) -> Self {
        Self {
            nanos,
            text: durations::short(nanos),
        }
    }
    /// Whole seconds (truncated toward zero).
    pub fn seconds(&self) -> i64 {
        self.nanos / 1_000_000_000
    }
}

/// The control-plane verdict (`openshift/oc pkg/cli/admin/upgrade/status/controlplane.go`
/// `assessmentState`). There is no `Unknown`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum ControlPlaneAssessment {
    /// Moving, on time.
    #[default]
    Progressing,
    /// Behind the estimate by less than 10 minutes.
    #[serde(rename = "Progressing - Slow")]
    ProgressingSlow,
    /// Behind the estimate by more than 10 minutes.
    Stalled,
    /// Every platform operator is at the target version.
    Completed,
}

impl ControlPlaneAssessment {
    /// As `oc` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Progressing => "Progressing",
            Self::ProgressingSlow => "Progressing - Slow",
            Self::Stalled => "Stalled",
            Self::Completed => "Completed",
        }
    }
}

/// How the target version relates to the previous one (the `Target Version:` line,
/// `openshift/oc pkg/cli/admin/upgrade/status/controlplane.go` `versions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum VersionTransition {
    /// No history at all: target and previous are `unknown`.
    #[default]
    Unknown,
    /// One history entry: `{target} (a new install)`.
    NewInstall,
    /// `{target} (from {previous})`.
    From,
    /// The previous entry is Partial: `{target} (from incomplete {previous})`.
    FromIncomplete,
    /// Same version, different image: `{target} to Multi-Architecture`.
    MultiArch,
}

/// The control plane: operators, versions, completion, duration and estimate
/// (`openshift/oc pkg/cli/admin/upgrade/status/controlplane.go` `assessControlPlaneStatus`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlPlane {
    /// Progressing, Progressing - Slow, Stalled or Completed.
    pub assessment: ControlPlaneAssessment,
    /// `history[0].version`; its image when the entry has no version yet (an update requested
    /// by image whose release has not been loaded; oc prints a blank); `unknown` without
    /// history.
    pub target_version: String,
    /// The target's version is not known yet (`history[0].version` or `status.desired.version`
    /// empty): no estimate is made and no operator can count as updated.
    pub target_version_unknown: bool,
    /// `history[1].version`, or `unknown`.
    pub previous_version: String,
    /// How target and previous relate.
    pub transition: VersionTransition,
    /// Whether the previous update (`history[1]`) never completed.
    pub previous_incomplete: bool,
    /// The last Completed version before the incomplete previous one (`unknown` if none).
    pub last_complete_version: Option<String>,
    /// The text after `Target Version:`.
    pub versions_text: String,
    /// `history[0].startedTime`.
    pub started_at: Option<DateTime<Utc>>,
    /// `history[0].completionTime` when the entry is Completed, else `now`.
    pub completion_at: Option<DateTime<Utc>>,
    /// The `Duration:` value (rounded to the minute above 10 minutes, else to the second).
    pub duration: DurationValue,
    /// Unrounded `completion_at − started_at`.
    pub updating_for_raw: DurationValue,
    /// Updated / total × 100.
    pub completion_percent: f64,
    /// Platform operators counted.
    pub operators_total: usize,
    /// Platform operators at the target version.
    pub operators_updated: usize,
    /// Their names (not serialized: `cvo status -o json` has the count).
    #[serde(skip)]
    pub updated_names: Vec<String>,
    /// Platform operators not updated, with Progressing=False.
    pub operators_waiting: usize,
    /// Platform operators not updated, with Progressing=True, in list order.
    pub updating_operators: Vec<UpdatingOperator>,
    /// Estimated time remaining (and what `oc` prints for it).
    pub estimate: Estimate,
    /// Platform-operator health counts.
    pub operator_health: OperatorHealth,
    /// Whether a single- to multi-architecture migration is underway.
    pub multi_arch: bool,
}

/// A platform operator that is moving to the target version
/// (`openshift/oc pkg/cli/admin/upgrade/status/controlplane.go` `UpdatingClusterOperator`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdatingOperator {
    /// ClusterOperator name.
    pub name: String,
    /// `Progressing.lastTransitionTime`.
    pub since: Option<DateTime<Utc>>,
    /// `now − since`, as printed in the SINCE column.
    pub since_duration: DurationValue,
    /// `Progressing.reason` (may be empty).
    pub reason: String,
    /// `Progressing.message` (may span lines).
    pub message: String,
}

/// What the `Est. Time Remaining` shows
/// (`openshift/oc pkg/cli/admin/upgrade/status/controlplane.go` `estimateTimeToComplete`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum EstimateKind {
    /// No estimate is shown (completed, or the estimate is exactly zero).
    #[default]
    None,
    /// A remaining duration.
    Remaining,
    /// Under ten minutes (`<10m`), including slightly negative estimates.
    UnderTenMinutes,
    /// `N/A for Multi-Architecture Migration`.
    NotAvailableMultiArch,
    /// More than 10 minutes overdue: `N/A; estimate duration was {estimated total}`.
    NotAvailableOverdue,
}

/// The estimate of time remaining for the control plane.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    /// What is shown.
    pub kind: EstimateKind,
    /// Remaining time (negative when overdue); zero when not computed.
    pub remaining: DurationValue,
    /// `Trunc(updating for + remaining, 1min)`: what the whole update was estimated to take.
    pub estimated_total: DurationValue,
    /// The baseline used: the last completed update's duration, or one hour.
    pub baseline: DurationValue,
    /// The text after `Est. Time Remaining: `, or `None` when the bracket is omitted.
    pub text: Option<String>,
}

/// Platform-operator health (`Operator Health:` line).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorHealth {
    /// Operators counted.
    pub total: usize,
    /// Neither unavailable nor degraded.
    pub healthy: usize,
    /// Available missing or not True.
    pub unavailable: usize,
    /// Available but Degraded=True.
    pub degraded: usize,
}

/// A pool's verdict (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go` `assessmentState`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum PoolAssessmentState {
    /// Every node updated (also a pool with no nodes, for completion purposes).
    Completed,
    /// No node has started.
    #[default]
    Pending,
    /// Some node is degraded.
    Degraded,
    /// Some node is excluded (paused pool).
    Excluded,
    /// Moving.
    Progressing,
    /// The pool has no nodes (printed `Empty`).
    Empty,
}

impl PoolAssessmentState {
    /// As `oc` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "Completed",
            Self::Pending => "Pending",
            Self::Degraded => "Degraded",
            Self::Excluded => "Excluded",
            Self::Progressing => "Progressing",
            Self::Empty => "Empty",
        }
    }
}

/// One MachineConfigPool and its nodes (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolAssessment {
    /// Pool name.
    pub name: String,
    /// Whether this is the `master` pool (control-plane nodes).
    pub is_master: bool,
    /// `spec.paused`.
    pub paused: bool,
    /// The ASSESSMENT column.
    pub assessment: PoolAssessmentState,
    /// Updated / total × 100 (100 for an empty pool).
    pub completion_percent: f64,
    /// Node count.
    pub total: usize,
    /// Nodes at the target version.
    pub updated: usize,
    /// Nodes not at the target version.
    pub outdated: usize,
    /// Nodes waiting to start.
    pub pending: usize,
    /// Nodes that are not unavailable.
    pub available: usize,
    /// Nodes progressing (and not degraded).
    pub progressing: usize,
    /// Nodes draining.
    pub draining: usize,
    /// Nodes excluded by a paused pool.
    pub excluded: usize,
    /// Degraded nodes.
    pub degraded: usize,
    /// The nodes, sorted as `oc` prints them (assessment, phase, name).
    pub nodes: Vec<NodeAssessment>,
}

/// A node's verdict (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go` `nodeAssessment`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum NodeAssessmentState {
    /// The node's MCD reports Degraded/Unreconcilable.
    Degraded,
    /// The node is not available and not updating.
    Unavailable,
    /// Being updated.
    Progressing,
    /// In a paused pool.
    Excluded,
    /// Waiting for its update.
    #[default]
    Outdated,
    /// At the target version.
    Completed,
}

impl NodeAssessmentState {
    /// As `oc` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Degraded => "Degraded",
            Self::Unavailable => "Unavailable",
            Self::Progressing => "Progressing",
            Self::Excluded => "Excluded",
            Self::Outdated => "Outdated",
            Self::Completed => "Completed",
        }
    }
}

/// A node's update phase (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go` `nodePhase`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum NodePhase {
    /// Being drained.
    Draining,
    /// Applying the new config.
    Updating,
    /// Rebooting into it.
    Rebooting,
    /// In a paused pool.
    Paused,
    /// Not started.
    #[default]
    Pending,
    /// Done.
    Updated,
}

impl NodePhase {
    /// As `oc` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draining => "Draining",
            Self::Updating => "Updating",
            Self::Rebooting => "Rebooting",
            Self::Paused => "Paused",
            Self::Pending => "Pending",
            Self::Updated => "Updated",
        }
    }
}

/// One node row (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go` `nodeDisplayData`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeAssessment {
    /// Node name.
    pub name: String,
    /// Pool the node belongs to.
    pub pool: String,
    /// The ASSESSMENT column.
    pub assessment: NodeAssessmentState,
    /// The PHASE column.
    pub phase: NodePhase,
    /// Release version of the node's current MachineConfig, if known (`?` when not).
    pub version: Option<String>,
    /// The EST column: `+10m`, `+5m`, `?` or `-`.
    pub estimate: String,
    /// The MESSAGE column, raw (may span lines; node name replaced by `<node>`).
    pub message: String,
    /// At the target version.
    pub is_updated: bool,
    /// Moving to the target version.
    pub is_updating: bool,
    /// Unavailable (not ready, unschedulable, MCD working, ...).
    pub is_unavailable: bool,
    /// MCD state Degraded/Unreconcilable.
    pub is_degraded: bool,
    /// Reasons for unavailability, joined ` | `.
    pub unavailable_reason: String,
    /// Earliest time of the unavailability conditions.
    pub unavailable_since: Option<DateTime<Utc>>,
}

/// Insight severity (`openshift/oc pkg/cli/admin/upgrade/status/health.go` `impactLevel`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Level {
    /// Informational.
    #[default]
    Info,
    /// Needs attention.
    Warning,
    /// Something is broken.
    Error,
    /// Something is badly broken.
    Critical,
}

impl Level {
    /// As `oc` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "Info",
            Self::Warning => "Warning",
            Self::Error => "Error",
            Self::Critical => "Critical",
        }
    }
}

/// What an insight affects (`openshift/oc pkg/cli/admin/upgrade/status/health.go` `impactType`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Impact {
    /// No impact.
    #[default]
    None,
    /// Cluster APIs may be unavailable.
    #[serde(rename = "API Availability")]
    ApiAvailability,
    /// The update does not proceed.
    #[serde(rename = "Update Stalled")]
    UpdateStalled,
    /// The update is slower.
    #[serde(rename = "Update Speed")]
    UpdateSpeed,
    /// Unknown (alerts).
    Unknown,
}

impl Impact {
    /// As `oc` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::ApiAvailability => "API Availability",
            Self::UpdateStalled => "Update Stalled",
            Self::UpdateSpeed => "Update Speed",
            Self::Unknown => "Unknown",
        }
    }
}

/// An object an insight is about.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The kind string as `oc` prints it, e.g. `clusteroperators.config.openshift.io`, `nodes`.
    pub kind: String,
    /// Object name (for alerts, `{namespace/}{alertname}`).
    pub name: String,
}

/// One update-health insight (`openshift/oc pkg/cli/admin/upgrade/status/health.go`
/// `updateInsight`).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Insight {
    /// When the situation began; `None` is the zero time (printed `-`).
    pub started_at: Option<DateTime<Utc>>,
    /// The SINCE column text (`-`, `now`, `58m18s`, ...).
    pub since: String,
    /// Severity.
    pub level: Level,
    /// Impact type.
    pub impact: Impact,
    /// The MESSAGE column.
    pub summary: String,
    /// Longer description (may span lines).
    pub description: String,
    /// Documentation / runbook URL.
    pub reference: String,
    /// Objects concerned.
    pub resources: Vec<Resource>,
}

/// The `= Update Health =` section.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateHealth {
    /// Insights, sorted (most recent first, then by level, most severe first).
    pub insights: Vec<Insight>,
    /// Whether only the default `Update is proceeding well` insight is present (then the
    /// detailed form is never used).
    pub default_only: bool,
}

/// Error text when the ClusterOperator list is empty (`openshift/oc pkg/cli/admin/upgrade/status/status.go`).
pub const NO_OPERATORS: &str =
    "no cluster operator information available - you must be connected to an OpenShift version 4 server";
/// Error text when there is no ClusterVersion.
pub const NO_CLUSTER_VERSION: &str = "no cluster version information available - you must be connected to an \
                                      OpenShift version 4 server to fetch the current version";
/// Error text when the ClusterVersion has no `Progressing` condition.
pub const NO_PROGRESSING: &str =
    "no current Progressing info, see `oc describe clusterversion` for more details.";

/// Assesses `state` at `now`, with optional firing alerts
/// (`openshift/oc pkg/cli/admin/upgrade/status/status.go` `Run`).
///
/// Never panics on input data; an assessment that cannot be made carries [`Assessment::error`].
/// Every age is measured against `now` (see [`assess_with_wall_clock`] for `oc`'s one exception).
pub fn assess(state: &ClusterState, alerts: Option<&alerts::Alerts>, now: DateTime<Utc>) -> Assessment {
    assess_with_wall_clock(state, alerts, now, now)
}

/// Like [`assess`], but node "serious unavailability" ages (Not ready for 5 minutes, disk
/// pressure / network unavailable for 1 minute) are measured against `wall_clock`, as
/// `oc adm upgrade status --mock-clusterversion` does with the real clock
/// (`openshift/oc pkg/cli/admin/upgrade/status/mco/layered_node_state.go` `SeriouslyUnavailable`).
pub fn assess_with_wall_clock(
    state: &ClusterState,
    alerts: Option<&alerts::Alerts>,
    now: DateTime<Utc>,
    wall_clock: DateTime<Utc>,
) -> Assessment {
    let mut out = Assessment {
        now: Some(now),
        ..Default::default()
    };
    // Pools and nodes first: they are assessed even when the rest cannot be.
    let ctx = nodes::NodeContext {
        cv: state.cluster_version.as_ref(),
        mcs: &state.machine_configs,
        now,
        wall_clock,
    };
    let membership = nodes::assign_nodes(&state.machine_config_pools, &state.nodes);
    let mut pools = Vec::new();
    let mut node_insights = Vec::new();
    for (pool, members) in state.machine_config_pools.iter().zip(&membership) {
        let pool_nodes: Vec<_> = members.iter().filter_map(|&i| state.nodes.get(i)).collect();
        let mut r = nodes::assess_pool(&ctx, pool, &pool_nodes);
        node_insights.append(&mut r.insights);
        pools.push(r.pool);
    }
    let Some(cv) = state.cluster_version.as_ref() else {
        out.error = Some(NO_CLUSTER_VERSION.to_owned());
        out.pools_despite_error = pools;
        return out;
    };
    out.cluster_version_name = cv.metadata.name.clone().unwrap_or_default();
    out.current_version = cv.current_version().map(str::to_owned);
    out.desired_version = Some(cv.status.desired.version.clone()).filter(|v| !v.is_empty());
    if state.cluster_operators.is_empty() {
        out.error = Some(NO_OPERATORS.to_owned());
        out.pools_despite_error = pools;
        return out;
    }
    let failing = cv.condition("Failing");
    out.failing_condition_missing = failing.is_none();
    out.failing = failing.filter(|f| !f.is_false()).map(ConditionSummary::from);
    out.progressing = cv.condition("Progressing").map(ConditionSummary::from);
    let Some(progressing) = cv.condition("Progressing") else {
        out.error = Some(NO_PROGRESSING.to_owned());
        out.pools_despite_error = pools;
        return out;
    };

    out.node_versions_unknown = !state.nodes.is_empty() && state.machine_configs.is_empty();
    out.pools = pools;
    let worker_outdated = out
        .worker_pools()
        .any(|p| p.total > 0 && p.completion_percent != 100.0);
    let show_workers = out.worker_pools().any(|p| p.total > 0);
    out.show_worker_section = show_workers;
    out.updating = progressing.is_true() || worker_outdated;

    out.started_at = cv
        .status
        .history
        .first()
        .and_then(|h| h.started_time)
        .or(progressing.last_transition_time);
    let updating_for = out
        .started_at
        .map(|s| durations::round(durations::between(now, s), durations::SECOND))
        .unwrap_or_default();
    out.updating_for = DurationValue::new(updating_for);
    let mco_image = state
        .mco_deployment
        .as_ref()
        .and_then(|d| d.spec.template.spec.as_ref())
        .and_then(|s| s.containers.iter().find(|c| c.name == "machine-config-operator"))
        .and_then(|c| c.image.clone())
        .unwrap_or_default();
    let cp = controlplane::assess_control_plane(cv, &state.cluster_operators, &mco_image, now);
    out.control_plane = cp.control_plane;
    // The CVO still waits on operators oc counts updated: the update is not complete.
    blocked::keep_in_progress(
        &mut out.control_plane,
        &blocked::operand_waits(cv, &state.cluster_operators),
        now,
    );
    // What oc's rules miss (a refused release, an operand the CVO still waits on): cvo's own
    // insights, shown whether or not oc would call the cluster updating.
    let blocked: Vec<Insight> = blocked::not_accepted(cv)
        .into_iter()
        .chain(blocked::not_picked_up(cv))
        .chain(blocked::target_unknown(cv, now))
        .chain(blocked::waiting_on_operands(cv, &state.cluster_operators, now))
        .collect();
    // Not updating: `oc` prints only "The cluster is not updating."; the control plane is still
    // assessed (operator health, versions) for the dashboard, but there are no insights.
    if !out.updating {
        if !blocked.is_empty() {
            let (insights, _) = health::finish(blocked, now, 0);
            out.health = UpdateHealth {
                insights,
                default_only: false,
            };
        }
        return out;
    }

    let mut insights = node_insights;
    if let Some(a) = alerts {
        insights.extend(health::alert_insights(a, out.started_at));
    }
    insights.extend(health::cluster_version_insight(cv, now));
    insights.extend(cp.co_insights);
    insights.extend(cp.history_insight);
    insights.extend(blocked);
    let (insights, default_only) = health::finish(insights, now, updating_for);
    out.health = UpdateHealth {
        insights,
        default_only,
    };
    out
}

#[cfg(test)]
mod tests;
