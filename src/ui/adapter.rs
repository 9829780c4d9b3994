//! The single place where the dashboard meets the assessment of `oc adm upgrade status`
//! ([`crate::assess`]): builds the [`Dashboard`] from the cluster state and the overview
//! [`assess::overview`] decides (headline, completion, operator statuses and health), then
//! overlays what the assessment computes (the completion's duration and estimate, pools and
//! nodes, update-health insights), so the dashboard and `cvo status` never disagree. Pools and
//! nodes come only from the assessment, even when it reports an error. Nothing is decided
//! here: the assessment's verdicts are mapped to words and severities.

use chrono::{DateTime, Utc};

use super::{
    model::{Dashboard, InsightRow, NodeRow, PoolRow},
    theme::Level,
};
use crate::{
    assess::{
        self, Assessment, EstimateKind, NodeAssessmentState, PoolAssessmentState, alerts::Alerts,
        overview::Overview,
    },
    cluster::ClusterState,
};

/// The view model for `state` at `now`.
pub fn dashboard(state: &ClusterState, alerts: Option<&Alerts>, now: DateTime<Utc>) -> Dashboard {
    let a = assess::assess(state, alerts, now);
    let o = assess::overview::overview(state, &a);
    let mut d = Dashboard::build(state, &o);
    d.updates = super::model::updates::UpdatesModel::build(state.cluster_version.as_ref(), now);
    apply_assessment(&mut d, state, &a, &o);
    d
}

/// Overlays an assessment on a dashboard built from the same state and its overview `o`: pools,
/// nodes, insights (the overview's fallback insights when the assessment makes none), and while the update is assessed the target's words and the completion's
/// duration and estimate.
pub fn apply_assessment(d: &mut Dashboard, state: &ClusterState, a: &Assessment, o: &Overview) {
    // Pools and nodes come from the assessment only, also when it reports an error.
    // Control-plane pool first (as `oc` prints it), then the others in list order.
    let pools = a.node_pools();
    let master = pools.iter().filter(|p| p.is_master);
    let others = pools.iter().filter(|p| !p.is_master);
    d.pools = master.clone().chain(others.clone()).map(pool_row).collect();
    d.nodes = master
        .chain(others)
        .flat_map(|p| p.nodes.iter().map(node_row))
        .collect();
    d.insights = assess::overview::fallback_insights(state, o, a)
        .iter()
        .map(insight_row)
        .collect();
    if a.error.is_none() && !a.updating && !a.health.insights.is_empty() {
        // Not updating by oc's rules, yet blocked (a requested release not accepted): the
        // health panel says so, as `cvo status` does (the overview's headline too).
        d.insights = a.health.insights.iter().map(insight_row).collect();
    }
    if a.error.is_some() || !a.updating {
        return;
    }
    let cp = &a.control_plane;
    if !cp.target_version.is_empty() && cp.target_version != "unknown" {
        // `4.14.1 (from 4.14.0)` says nothing the Version field does not; keep the other forms
        // (`from incomplete …`, `to Multi-Architecture`, `a new install`).
        let redundant = d
            .current_version
            .as_ref()
            .map(|c| format!("{} (from {c})", cp.target_version));
        d.target_version = if redundant.as_ref() == Some(&cp.versions_text) {
            Some(cp.target_version.clone())
        } else {
            Some(cp.versions_text.clone())
        };
    }
    if let Some(c) = d.completion.as_mut() {
        c.duration = Some(cp.duration.text.clone());
        c.estimate = match (cp.estimate.kind, &cp.estimate.text) {
            (EstimateKind::None, _) | (_, None) => "-".into(),
            (_, Some(t)) => t.clone(),
        };
    }
    d.insights = a.health.insights.iter().map(insight_row).collect();
}

fn pool_row(p: &assess::PoolAssessment) -> PoolRow {
    let level = match p.assessment {
        PoolAssessmentState::Completed => Level::Ok,
        PoolAssessmentState::Pending => Level::Info,
        PoolAssessmentState::Degraded => Level::Error,
        PoolAssessmentState::Excluded => Level::Blocked,
        PoolAssessmentState::Progressing => Level::Warn,
        PoolAssessmentState::Empty => Level::Unknown,
    };
    let mut status = if p.total == 0 {
        format!("{} Total", p.total)
    } else {
        format!(
            "{} Available, {} Progressing, {} Draining",
            p.available, p.progressing, p.draining
        )
    };
    if p.excluded > 0 {
        status.push_str(&format!(", {} Excluded", p.excluded));
    }
    if p.degraded > 0 {
        status.push_str(&format!(", {} Degraded", p.degraded));
    }
    if p.paused {
        status.push_str(" (pool paused)");
    }
    PoolRow {
        name: p.name.clone(),
        assessment: p.assessment.as_str().into(),
        updated: p.updated,
        total: p.total,
        status,
        paused: p.paused,
        level,
    }
}

fn node_row(n: &assess::NodeAssessment) -> NodeRow {
    let level = match n.assessment {
        NodeAssessmentState::Degraded | NodeAssessmentState::Unavailable => Level::Error,
        NodeAssessmentState::Progressing => Level::Warn,
        NodeAssessmentState::Excluded => Level::Blocked,
        NodeAssessmentState::Outdated => Level::Info,
        NodeAssessmentState::Completed => Level::Ok,
    };
    NodeRow {
        name: n.name.clone(),
        pool: n.pool.clone(),
        assessment: n.assessment.as_str().into(),
        phase: n.phase.as_str().into(),
        version: n.version.clone().unwrap_or_else(|| "?".into()),
        estimate: n.estimate.clone(),
        message: n.message.clone(),
        level,
    }
}

fn insight_row(i: &assess::Insight) -> InsightRow {
    let level = match i.level {
        assess::Level::Info => Level::Info,
        assess::Level::Warning => Level::Warn,
        assess::Level::Error | assess::Level::Critical => Level::Error,
    };
    InsightRow {
        level_word: i.level.as_str().into(),
        level,
        message: i.summary.clone(),
        since: i.started_at,
        // Empty for the fallback insights, whose age the assessment did not measure.
        since_text: (!i.since.is_empty()).then(|| i.since.clone()),
        impact: i.impact.as_str().into(),
        description: i.description.clone(),
        resources: i
            .resources
            .iter()
            .map(|r| format!("{}: {}", r.kind, r.name))
            .collect(),
        reference: i.reference.clone(),
    }
}
