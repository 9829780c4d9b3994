//! The single place where the dashboard meets the assessment of `oc adm upgrade status`
//! ([`crate::assess`]): builds the [`Dashboard`] from the cluster state, then overlays what
//! the assessment computes (headline word, completion and estimate, operator health, pools and
//! nodes, update-health insights), so the dashboard and `cvo status` never disagree. Pools and
//! nodes come only from the assessment, even when it reports an error.

use chrono::{DateTime, Utc};

use super::{
    model::{
        Completion, Dashboard, Headline, InsightRow, NodeRow, PoolRow, cond_detail, fallback_insights,
        percent_label,
    },
    theme::Level,
};
use crate::{
    assess::{
        self, Assessment, ControlPlaneAssessment, EstimateKind, NodeAssessmentState, PoolAssessmentState,
        alerts::Alerts,
    },
    cluster::ClusterState,
};

/// The view model for `state` at `now`.
pub fn dashboard(state: &ClusterState, alerts: Option<&Alerts>, now: DateTime<Utc>) -> Dashboard {
    let mut d = Dashboard::build(state);
    d.updates = super::model::updates::UpdatesModel::build(state.cluster_version.as_ref(), now);
    let a = assess::assess(state, alerts, now);
    apply_assessment(&mut d, state, &a);
    d
}

/// Overlays an assessment on a dashboard built from the same state.
pub fn apply_assessment(d: &mut Dashboard, state: &ClusterState, a: &Assessment) {
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
    d.insights = fallback_insights(state, d);
    if a.error.is_none() && !a.updating && !a.health.insights.is_empty() {
        // Not updating by oc's rules, yet blocked (a requested release not accepted): the
        // health panel and the headline say so, as `cvo status` does.
        d.insights = a.health.insights.iter().map(insight_row).collect();
        if let Some(b) = blocked_headline(a, None) {
            d.headline = b;
        }
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
    let ratio = cp.completion_percent / 100.0;
    d.completion = Some(Completion {
        updated: cp.operators_updated,
        total: cp.operators_total,
        updating: cp.updating_operators.len(),
        waiting: cp.operators_waiting,
        ratio,
        duration: Some(cp.duration.text.clone()),
        estimate: match (cp.estimate.kind, &cp.estimate.text) {
            (EstimateKind::None, _) | (_, None) => "-".into(),
            (_, Some(t)) => t.clone(),
        },
    });
    let h = &cp.operator_health;
    let mut health = format!("{} healthy", h.healthy);
    if h.unavailable > 0 {
        health.push_str(&format!(", {} unavailable", h.unavailable));
    }
    if h.degraded > 0 {
        health.push_str(&format!(", {} degraded", h.degraded));
    }
    d.operator_health = health;
    d.headline = headline(state, a, ratio);
    d.insights = a.health.insights.iter().map(insight_row).collect();
}

/// Failing wins the headline; the control-plane assessment and progress stay visible as
/// secondary information. Once the control plane is done, worker pools keep
/// the update "Progressing" until every pool is at the target.
fn headline(state: &ClusterState, a: &Assessment, ratio: f64) -> Headline {
    let cp = &a.control_plane;
    let cv = state.cluster_version.as_ref();
    // What `cvo status` prints as `Assessment:` and `Completion:`.
    let progress = format!(
        "Assessment {} · control plane {}",
        cp.assessment.as_str(),
        percent_label(ratio)
    );
    let workers: Vec<String> = a
        .worker_pools()
        .filter(|p| p.total > 0 && p.updated < p.total)
        .map(|p| {
            let paused = if p.paused { " paused" } else { "" };
            format!("{} {}/{}{paused}", p.name, p.updated, p.total)
        })
        .collect();
    if let Some(f) = cv.and_then(|cv| cv.condition("Failing")).filter(|c| c.is_true()) {
        return Headline {
            label: String::new(),
            word: super::model::FAILING.into(),
            level: Level::Error,
            detail: cond_detail(f),
            secondary: Some(progress),
        };
    }
    if let Some(b) = blocked_headline(a, Some(progress.clone())) {
        return b;
    }
    if cp.assessment == ControlPlaneAssessment::Completed {
        return Headline {
            label: "Update".into(),
            word: "Progressing".into(),
            level: Level::Warn,
            detail: format!(
                "control plane Completed (updated to {}); worker pools not done: {}",
                cp.target_version,
                if workers.is_empty() {
                    "-".into()
                } else {
                    workers.join(", ")
                }
            ),
            secondary: None,
        };
    }
    let level = match cp.assessment {
        ControlPlaneAssessment::Stalled => Level::Error,
        _ => Level::Warn,
    };
    let detail = cv
        .and_then(|cv| cv.condition("Progressing"))
        .map(cond_detail)
        .unwrap_or_else(|| format!("update to {}", cp.target_version));
    Headline {
        label: "Assessment".into(),
        word: cp.assessment.as_str().into(),
        level,
        detail,
        secondary: None,
    }
}

/// `Update Blocked` with the first insight oc's rules miss ([`assess::blocked`]), if any.
fn blocked_headline(a: &Assessment, secondary: Option<String>) -> Option<Headline> {
    let i = a
        .health
        .insights
        .iter()
        .find(|i| assess::blocked::is_blocked(i))?;
    Some(Headline {
        label: "Update".into(),
        word: "Blocked".into(),
        level: if i.level >= assess::Level::Error {
            Level::Error
        } else {
            Level::Warn
        },
        detail: i.summary.clone(),
        secondary,
    })
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
        since_text: Some(i.since.clone()),
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
