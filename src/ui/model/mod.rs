//! The view model: every row and value the dashboard shows, derived once per cluster-state
//! change (never per frame) from [`ClusterState`] and, for the facts of
//! `oc adm upgrade status`, from the [`Assessment`](crate::assess::Assessment).
//!
//! [`Dashboard::build`] words what [`assess::overview`] decided (operator statuses and why
//! one waits, completion, operator health, the headline) and lists the ClusterVersion's
//! conditions and history; [`adapter::dashboard`](super::adapter::dashboard) is the single
//! adapter that adds what the assessment computes: pool and node rows always (there is no
//! second pool assignment here), and while an update is in progress the completion's duration
//! and estimate, and insights. No verdict is made here: only words, severities and order.
//!
//! Submodules: [`rows`] (table texts, severities, filtering), [`detail`] (detail and YAML
//! popup content), [`feed`] (what the screen says about the feed).
//! Ages are not formatted here: rows keep timestamps and the view formats them against the
//! app's clock.

pub mod detail;
pub mod feed;
pub mod rows;
pub mod updates;

use crate::l10n::{Text, tr, trf, txt};
use chrono::{DateTime, Utc};

use super::{text, theme::Level};
use crate::{
    assess::{
        self, OperatorHealth,
        overview::{OperatorState, OperatorStatus, Overview, Progress},
    },
    cluster::{ClusterState, FeedStatus},
    openshift::{ClusterVersion, Condition, ConditionStatus, UpdateState},
};

/// Annotation prefix the machine-config daemon writes on nodes.
pub const MCO_PREFIX: &str = "machineconfiguration.openshift.io/";

/// Everything the dashboard displays.
#[derive(Clone, Debug, Default)]
pub struct Dashboard {
    /// Where the data comes from (`snapshot …`, a context name, `demo`).
    pub source: String,
    /// Feed health line: text and severity.
    pub feed: (String, Level),
    /// Newest Completed history entry; `None` when no update ever completed.
    pub current_version: Option<String>,
    /// The release being applied, when an update is in progress (or no update completed).
    pub target_version: Option<String>,
    /// Update channel.
    pub channel: Option<String>,
    /// The assessment headline (Failing wins over Progressing).
    pub headline: Headline,
    /// Control-plane completion, when an update is in progress.
    pub completion: Option<Completion>,
    /// `N Healthy, M Unavailable, K Available but degraded`.
    pub operator_health: String,
    /// ClusterVersion conditions.
    pub conditions: Vec<ConditionRow>,
    /// ClusterOperators, in name order.
    pub operators: Vec<OperatorRow>,
    /// Update history, newest first.
    pub history: Vec<HistoryRow>,
    /// MachineConfigPools.
    pub pools: Vec<PoolRow>,
    /// Nodes, grouped by pool.
    pub nodes: Vec<NodeRow>,
    /// Update-health insights, most severe first.
    pub insights: Vec<InsightRow>,
    /// A live feed that has not received any object yet (syncing or unreachable): every
    /// panel says so instead of drawing conclusions from empty lists.
    pub no_data: bool,
    /// Update targets, requests and why there are none ([`updates::UpdatesModel`]).
    pub updates: updates::UpdatesModel,
}

/// The one-line summary at the top of the screen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Headline {
    /// What the word is: `Assessment` only for the control-plane assessment `cvo status`
    /// prints; `Cluster`, `Update`, `API`; empty for `FAILING` (the Failing condition).
    pub label: String,
    /// `FAILING`, `Progressing`, `Stalled`, `Up to date`, ...
    pub word: String,
    /// Severity of the word.
    pub level: Level,
    /// Reason and first message line of the deciding condition.
    pub detail: String,
    /// Secondary information (progress while failing).
    pub secondary: Option<String>,
}

/// Control-plane completion.
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
    /// `updated / total`; may be above 1 or not finite in broken inputs.
    pub ratio: f64,
    /// How long the update has been running.
    pub duration: Option<String>,
    /// Estimated time remaining, or why there is none.
    pub estimate: String,
}

/// A ClusterVersion condition row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConditionRow {
    /// Condition type.
    pub type_: String,
    /// Status.
    pub status: ConditionStatus,
    /// Reason.
    pub reason: String,
    /// Full message (the table shows one line).
    pub message: String,
    /// Last transition.
    pub since: Option<DateTime<Utc>>,
    /// Severity of this condition in its current status.
    pub level: Level,
}

/// A ClusterOperator row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OperatorRow {
    /// Name.
    pub name: String,
    /// `operator` version.
    pub version: String,
    /// Whether `version` is the ClusterVersion's desired version.
    pub at_target: bool,
    /// Available status (`None` when missing).
    pub available: Option<ConditionStatus>,
    /// Progressing status.
    pub progressing: Option<ConditionStatus>,
    /// Degraded status.
    pub degraded: Option<ConditionStatus>,
    /// Upgradeable status.
    pub upgradeable: Option<ConditionStatus>,
    /// Short status word: `OK`, `PROG`, `DEGR`, `UNAV`, `NOUP`, `PEND`, `UNKN`.
    pub status: &'static str,
    /// Severity.
    pub level: Level,
    /// Transition time of the condition that decided the status.
    pub since: Option<DateTime<Utc>>,
    /// Reason of that condition.
    pub reason: String,
    /// Message of that condition.
    pub message: String,
}

/// A history entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistoryRow {
    /// Version (may be empty).
    pub version: String,
    /// `Completed` / `Partial`.
    pub state: &'static str,
    /// Start.
    pub started: Option<DateTime<Utc>>,
    /// Completion.
    pub completed: Option<DateTime<Utc>>,
    /// Signature verified.
    pub verified: bool,
    /// Release image.
    pub image: String,
    /// Accepted risks.
    pub accepted_risks: String,
    /// Severity (Partial entries other than the current one are warnings).
    pub level: Level,
}

/// A MachineConfigPool row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolRow {
    /// Name.
    pub name: String,
    /// `Completed`, `Progressing`, `Pending`, `Degraded`, `Excluded`, `Empty`.
    pub assessment: String,
    /// Nodes at the target.
    pub updated: usize,
    /// Nodes in the pool.
    pub total: usize,
    /// e.g. `2 Available, 1 Progressing, 0 Draining`.
    pub status: String,
    /// `spec.paused`.
    pub paused: bool,
    /// Severity.
    pub level: Level,
}

/// A node row.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeRow {
    /// Name.
    pub name: String,
    /// Pool the node belongs to.
    pub pool: String,
    /// `Completed`, `Progressing`, `Outdated`, `Degraded`, `Unavailable`, `Excluded`.
    pub assessment: String,
    /// `Updated`, `Updating`, `Rebooting`, `Draining`, `Pending`, `Paused`.
    pub phase: String,
    /// Release of the node's current config (`?` when unknown).
    pub version: String,
    /// Estimated time to finish (`-`, `?`, `+5m`).
    pub estimate: String,
    /// Full message (the table shows one line).
    pub message: String,
    /// Severity.
    pub level: Level,
}

/// An update-health insight.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InsightRow {
    /// `Error`, `Warning`, `Info`, `Critical`.
    pub level_word: String,
    /// Severity.
    pub level: Level,
    /// Summary line.
    pub message: String,
    /// Since when.
    pub since: Option<DateTime<Utc>>,
    /// The SINCE text `cvo status` prints (`58m18s`), when the assessment computed it.
    pub since_text: Option<String>,
    /// Impact (e.g. `API Availability`).
    pub impact: String,
    /// Long description.
    pub description: String,
    /// Affected resources (`kind: name`).
    pub resources: Vec<String>,
    /// Reference URL.
    pub reference: String,
}

impl Dashboard {
    /// Builds the view model from a cluster state and the [`Overview`] decided from it
    /// ([`assess::overview::overview`]): everything but pools, nodes and insights, which
    /// [`super::adapter::dashboard`] takes from the assessment, and the completion's duration
    /// and estimate, which it adds when the assessment assessed the update.
    pub fn build(state: &ClusterState, o: &Overview) -> Self {
        let cv = state.cluster_version.as_ref();
        let operators: Vec<OperatorRow> = o.operators.iter().map(operator_row).collect();
        let conditions = cv.map(condition_rows).unwrap_or_default();
        let history = cv.map(history_rows).unwrap_or_default();
        let current_version = cv.and_then(ClusterVersion::current_version).map(str::to_owned);
        let target_version = if o.updating { o.desired.clone() } else { None };
        Self {
            source: state.source.clone(),
            feed: feed_line(&state.feed),
            current_version,
            target_version,
            channel: cv
                .and_then(|cv| cv.spec.channel.clone())
                .filter(|c| !c.is_empty()),
            headline: headline(&o.headline),
            completion: o.completion.as_ref().map(|c| Completion {
                updated: c.updated,
                total: c.total,
                updating: c.updating,
                waiting: c.waiting,
                ratio: c.ratio,
                duration: None,
                estimate: tr!("completion-estimate-unknown", "unknown").into(),
            }),
            operator_health: operator_health(&o.health),
            conditions,
            operators,
            history,
            pools: Vec::new(),
            nodes: Vec::new(),
            insights: Vec::new(),
            no_data: waiting_for_data(state),
            updates: updates::UpdatesModel::default(),
        }
    }
}

/// Whether `state` is a live feed that is syncing or failing and has no object yet.
pub fn waiting_for_data(state: &ClusterState) -> bool {
    let live_not_ok = matches!(
        &state.feed,
        FeedStatus::Live { synced: false, .. } | FeedStatus::Live { error: Some(_), .. }
    );
    live_not_ok
        && state.cluster_version.is_none()
        && state.cluster_operators.is_empty()
        && state.machine_config_pools.is_empty()
        && state.nodes.is_empty()
}

fn feed_line(feed: &FeedStatus) -> (String, Level) {
    match feed {
        FeedStatus::Static => (tr!("feed-static", "static snapshot").into(), Level::Info),
        FeedStatus::Live { error: Some(e), .. } => (
            trf!(
                "feed-unreachable-since",
                "API unreachable since {since}",
                since = e.since.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            ),
            Level::Error,
        ),
        FeedStatus::Live { synced: false, .. } => {
            (tr!("feed-live-syncing", "live, syncing…").into(), Level::Warn)
        }
        FeedStatus::Live { synced: true, .. } => (tr!("feed-live", "live").into(), Level::Ok),
    }
}

/// The severity of a ClusterVersion condition in its status.
fn cv_condition_level(c: &Condition) -> Level {
    use ConditionStatus::{False, True, Unknown};
    match (c.type_.as_str(), c.status) {
        (_, Unknown) => Level::Unknown,
        ("Failing", True) | ("Available" | "ReleaseAccepted" | "RetrievedUpdates", False) => Level::Error,
        ("Progressing", True) => Level::Warn,
        ("Upgradeable", False) => Level::Blocked,
        ("Failing" | "Progressing" | "ImplicitlyEnabledCapabilities", False)
        | ("Available" | "ReleaseAccepted" | "RetrievedUpdates" | "Upgradeable", True) => Level::Ok,
        _ => Level::Info,
    }
}

/// The ClusterVersion conditions, Failing, Progressing and Available first (what an
/// administrator must see on a small terminal), the others in the order of the status.
fn condition_rows(cv: &ClusterVersion) -> Vec<ConditionRow> {
    const FIRST: [&str; 3] = ["Failing", "Progressing", "Available"];
    let rank = |t: &str| FIRST.iter().position(|f| *f == t).unwrap_or(FIRST.len());
    let mut conds: Vec<_> = cv.status.conditions.iter().collect();
    conds.sort_by_key(|c| rank(&c.type_));
    conds
        .into_iter()
        .map(|c| ConditionRow {
            type_: c.type_.clone(),
            status: c.status,
            reason: c.reason().to_owned(),
            message: c.message().to_owned(),
            since: c.last_transition_time,
            level: cv_condition_level(c),
        })
        .collect()
}

fn history_rows(cv: &ClusterVersion) -> Vec<HistoryRow> {
    cv.status
        .history
        .iter()
        .enumerate()
        .map(|(i, h)| HistoryRow {
            version: h.version.clone(),
            state: match h.state {
                UpdateState::Completed => "Completed",
                UpdateState::Partial => "Partial",
            },
            started: h.started_time,
            completed: h.completion_time,
            verified: h.verified,
            image: h.image.clone(),
            accepted_risks: h.accepted_risks.clone().unwrap_or_default(),
            level: match (h.state, i) {
                (UpdateState::Completed, _) => Level::Ok,
                (UpdateState::Partial, 0) => Level::Warn,
                (UpdateState::Partial, _) => Level::Blocked,
            },
        })
        .collect()
}

/// The operator status words, with what they mean (help legend and detail popup).
pub const STATUS_WORDS: [(&str, Text); 7] = [
    (
        "OK",
        txt!("status-word-ok", "available, not degraded, at the target version"),
    ),
    ("PROG", txt!("status-word-prog", "progressing (Progressing=True)")),
    (
        "PEND",
        txt!(
            "status-word-pend",
            "not at the target version yet, not progressing: waiting"
        ),
    ),
    (
        "DEGR",
        txt!("status-word-degr", "degraded (Degraded=True), still available"),
    ),
    (
        "UNAV",
        txt!("status-word-unav", "not available (Available=False or missing)"),
    ),
    (
        "NOUP",
        txt!(
            "status-word-noup",
            "Upgradeable=False: blocks the next minor update"
        ),
    ),
    ("UNKN", txt!("status-word-unkn", "conditions missing or Unknown")),
];

/// The condition-style name of a status word (`DEGR` → `Degraded`); empty for unknown words.
pub fn status_name(word: &str) -> &'static str {
    match word {
        "OK" => "Healthy",
        "PROG" => "Progressing",
        "PEND" => "Pending",
        "DEGR" => "Degraded",
        "UNAV" => "Unavailable",
        "NOUP" => "Not upgradeable",
        "UNKN" => "Unknown",
        _ => "",
    }
}

/// What a status word means; empty for unknown words.
pub fn status_meaning(word: &str) -> &'static str {
    STATUS_WORDS
        .iter()
        .find(|(w, _)| *w == word)
        .map_or("", |(_, m)| m.get())
}

/// The status word and severity of an operator status.
pub fn status_word(s: OperatorStatus) -> (&'static str, Level) {
    match s {
        OperatorStatus::Unknown => ("UNKN", Level::Unknown),
        OperatorStatus::Unavailable => ("UNAV", Level::Error),
        OperatorStatus::Degraded => ("DEGR", Level::Error),
        OperatorStatus::Progressing => ("PROG", Level::Warn),
        OperatorStatus::Pending => ("PEND", Level::Warn),
        OperatorStatus::NotUpgradeable => ("NOUP", Level::Blocked),
        OperatorStatus::Ok => ("OK", Level::Ok),
    }
}

fn operator_row(o: &OperatorState) -> OperatorRow {
    let (status, level) = status_word(o.status);
    let decider = o.decided_by.as_ref();
    let message = match &o.waiting_for {
        Some(v) => trf!("operator-waiting-to-update", "waiting to update to {v}", v = v),
        None => decider.map(|c| c.message().to_owned()).unwrap_or_default(),
    };
    OperatorRow {
        name: o.name.clone(),
        version: o.version.clone(),
        at_target: o.at_target,
        available: o.available,
        progressing: o.progressing,
        degraded: o.degraded,
        upgradeable: o.upgradeable,
        status,
        level,
        since: decider.and_then(|c| c.last_transition_time),
        reason: decider.map(|c| c.reason().to_owned()).unwrap_or_default(),
        message,
    }
}

/// `N healthy, M unavailable, K degraded` (the last two only when not zero).
pub(crate) fn operator_health(h: &OperatorHealth) -> String {
    let mut s = trf!("health-healthy", "{n} healthy", n = h.healthy);
    if h.unavailable > 0 {
        s.push_str(&trf!(
            "health-unavailable",
            ", {n} unavailable",
            n = h.unavailable
        ));
    }
    if h.degraded > 0 {
        s.push_str(&trf!("health-degraded", ", {n} degraded", n = h.degraded));
    }
    s
}

/// A condition as one line: `Reason: message`, or whichever of the two is present.
pub(crate) fn cond_detail(c: &Condition) -> String {
    let msg = text::one_line(c.message());
    match (c.reason(), msg.is_empty()) {
        ("", _) => msg,
        (r, true) => r.to_owned(),
        (r, false) => format!("{r}: {msg}"),
    }
}

/// The headline word for a true `Failing` condition (upper case: a condition, not an
/// assessment).
pub const FAILING: &str = "FAILING";

/// The headline's words for what decided it ([`assess::overview::Headline`]).
fn headline(h: &assess::overview::Headline) -> Headline {
    use assess::overview::{Headline as H, NoClusterVersion};
    let line = |label: &str, word: &str, level: Level, detail: String, secondary: Option<String>| Headline {
        label: label.into(),
        word: word.into(),
        level,
        detail,
        secondary,
    };
    let progress = |p: &Option<Progress>| {
        p.map(|p| match p {
            Progress::OperatorsUpdated(r) => trf!(
                "headline-operators-updated",
                "{percent} of operators updated",
                percent = percent_label(r)
            ),
            Progress::Assessed(a, r) => trf!(
                "headline-assessed",
                "Assessment {assessment} · control plane {percent}",
                assessment = a.as_str(),
                percent = percent_label(r)
            ),
        })
    };
    match h {
        H::NoClusterVersion(why) => {
            let (label, word, detail) = match why {
                NoClusterVersion::Unreachable => (
                    "API",
                    tr!("headline-unreachable", "Unreachable"),
                    tr!(
                        "headline-unreachable-detail",
                        "no ClusterVersion received yet: the API server cannot be reached"
                    ),
                ),
                NoClusterVersion::Syncing => (
                    "API",
                    tr!("headline-syncing", "Syncing"),
                    tr!(
                        "headline-syncing-detail",
                        "waiting for the first list of ClusterVersion, ClusterOperators, pools and nodes"
                    ),
                ),
                NoClusterVersion::Absent => (
                    "",
                    tr!("headline-no-cv", "No ClusterVersion"),
                    tr!(
                        "headline-no-cv-detail",
                        "this cluster has no clusterversion/version (not OpenShift?)"
                    ),
                ),
            };
            line(label, word, Level::Unknown, detail.into(), None)
        }
        H::Failing {
            condition,
            progress: p,
        } => line("", FAILING, Level::Error, cond_detail(condition), progress(p)),
        H::Unavailable {
            condition,
            progress: p,
        } => line(
            tr!("headline-cluster", "Cluster"),
            "Unavailable",
            Level::Error,
            cond_detail(condition),
            progress(p),
        ),
        H::Progressing { condition } => line(
            tr!("headline-update", "Update"),
            "Progressing",
            Level::Warn,
            cond_detail(condition),
            None,
        ),
        H::UpToDate {
            not_upgradeable: Some(u),
            ..
        } => line(
            tr!("headline-cluster", "Cluster"),
            tr!("headline-up-to-date", "Up to date"),
            Level::Ok,
            trf!(
                "headline-not-upgradeable",
                "not upgradeable: {why}",
                why = cond_detail(u)
            ),
            None,
        ),
        H::UpToDate {
            not_upgradeable: None,
            available,
        } => line(
            tr!("headline-cluster", "Cluster"),
            tr!("headline-up-to-date", "Up to date"),
            Level::Ok,
            available.as_ref().map(cond_detail).unwrap_or_default(),
            None,
        ),
        H::Blocked {
            summary,
            error,
            progress: p,
        } => line(
            tr!("headline-update", "Update"),
            tr!("headline-blocked", "Blocked"),
            if *error { Level::Error } else { Level::Warn },
            crate::assess::insight_text::summary(summary).into_owned(),
            progress(p),
        ),
        H::WorkersPending { target, pools } => {
            let pools: Vec<String> = pools
                .iter()
                .map(|p| {
                    let paused = if p.paused {
                        tr!("headline-pool-paused", " paused")
                    } else {
                        ""
                    };
                    format!("{} {}/{}{paused}", p.name, p.updated, p.total)
                })
                .collect();
            line(
                tr!("headline-update", "Update"),
                "Progressing",
                Level::Warn,
                trf!(
                    "headline-workers-pending",
                    "control plane Completed (updated to {target}); worker pools not done: {pools}",
                    target = target,
                    pools = if pools.is_empty() {
                        "-".into()
                    } else {
                        pools.join(", ")
                    }
                ),
                None,
            )
        }
        H::ControlPlane {
            assessment,
            progressing,
            target,
        } => line(
            tr!("headline-assessment", "Assessment"),
            assessment.as_str(),
            match assessment {
                assess::ControlPlaneAssessment::Stalled => Level::Error,
                _ => Level::Warn,
            },
            progressing
                .as_ref()
                .map(cond_detail)
                .unwrap_or_else(|| trf!("headline-update-to", "update to {target}", target = target)),
            None,
        ),
    }
}

/// `42%`, `100%`, `over 100%` or `n/a` (as `cvo status` prints percentages), never panicking on odd
/// ratios.
pub fn percent_label(ratio: f64) -> String {
    if !ratio.is_finite() || ratio < 0.0 {
        "n/a".into()
    } else if ratio > 1.0 {
        "over 100%".into()
    } else {
        format!("{:.0}%", ratio * 100.0)
    }
}

/// The sync progress as the ClusterVersion's Progressing message words it ("N of M done (P%
/// complete)", `pkg/cvo/status.go`: the percentage truncated, never rounded up), so the gauge
/// and the header show the same number for the same write: `4%` for 13 of 265 (4.9 %), `n/a`
/// for odd ratios.
pub fn sync_percent_label(ratio: f64) -> String {
    if !ratio.is_finite() || ratio < 0.0 {
        "n/a".into()
    } else {
        format!("{:.0}%", (ratio.min(1.0) * 100.0).trunc())
    }
}

/// A ratio safe for a gauge: finite and within `0..=1`.
pub fn clamp_ratio(ratio: f64) -> f64 {
    if ratio.is_finite() {
        ratio.clamp(0.0, 1.0)
    } else {
        0.0
    }
}
