//! The control plane: operator classification, versions, duration, completion and the time
//! estimate (`openshift/oc pkg/cli/admin/upgrade/status/controlplane.go`).

use chrono::{DateTime, Utc};

use super::durations::{HOUR, MINUTE, SECOND, between, round, short, trunc};
use super::{
    ControlPlane, ControlPlaneAssessment, DurationValue, Estimate, EstimateKind, Impact, Insight, Level,
    OperatorHealth, Resource, UpdatingOperator, VersionTransition,
};
use crate::openshift::{ClusterOperator, ClusterVersion, Condition, UpdateState};

/// Runbook for degraded operators.
pub const REF_DEGRADED: &str = "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDegraded.md";
/// Runbook for unavailable operators.
pub const REF_DOWN: &str = "https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator/ClusterOperatorDown.md";
/// Docs on gathering ClusterVersion history.
pub const REF_HISTORY: &str = "https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/gathering-data-cluster-update.html#gathering-clusterversion-history-cli_troubleshooting_updates";

/// Kind string of ClusterVersion resources in insights.
pub const CV_KIND: &str = "clusterversions.config.openshift.io";
/// Kind string of ClusterOperator resources in insights.
pub const CO_KIND: &str = "clusteroperators.config.openshift.io";

/// Whether the operator is part of the release payload (some annotation key starts with
/// `exclude.release.openshift.io/` or `include.release.openshift.io/`).
pub fn is_platform_operator(co: &ClusterOperator) -> bool {
    co.metadata.annotations.as_ref().is_some_and(|a| {
        a.keys().any(|k| {
            k.starts_with("exclude.release.openshift.io/") || k.starts_with("include.release.openshift.io/")
        })
    })
}

/// The last condition of `type_` (when a type repeats, the last one wins).
fn last_condition<'a>(co: &'a ClusterOperator, type_: &str) -> Option<&'a Condition> {
    co.status.conditions.iter().rev().find(|c| c.type_ == type_)
}

/// `timewise(x)`: the fraction of the update's time spent when `x` of the operators are done
/// (`openshift/oc pkg/cli/admin/upgrade/status/controlplane.go` `timewiseComplete`).
pub fn timewise(x: f64) -> f64 {
    if x < 0.25 {
        -0.03078788 + 2.62886 * x - 3.823954 * x.powi(2)
    } else if x < 0.9 {
        0.1851215 + 1.64994 * x - 4.676898 * x.powi(2) + 5.451824 * x.powi(3) - 2.125286 * x.powi(4)
    } else {
        25053.32 - 107394.3 * x + 172527.2 * x.powi(2) - 123107.0 * x.powi(3) + 32921.81 * x.powi(4)
    }
}

/// `estimateTimeToComplete`: the remaining time in nanoseconds.
pub fn estimate(baseline: i64, to_last_observed: i64, updating_for: i64, x: f64) -> i64 {
    if x >= 1.0 {
        return 0;
    }
    let secs = |d: i64| d as f64 / 1e9;
    let tw = timewise(x);
    let total = if x > 0.0 && tw > 0.0 && to_last_observed > 5 * MINUTE {
        secs(to_last_observed) / tw
    } else {
        secs(baseline)
    };
    let rem = total - secs(updating_for);
    let factor = if rem >= 0.0 { 1.2 } else { 1.0 / 1.2 };
    let est = ((rem * factor).trunc() as i64).saturating_mul(SECOND);
    if est > 10 * MINUTE {
        round(est, MINUTE)
    } else {
        est
    }
}

/// Output of [`assess_control_plane`].
pub struct ControlPlaneResult {
    /// The assessment.
    pub control_plane: ControlPlane,
    /// CO insights (CO order) then the previous-incomplete insight.
    pub co_insights: Vec<Insight>,
    /// The previous-incomplete insight, if any.
    pub history_insight: Option<Insight>,
}

/// Assesses the control plane (`openshift/oc pkg/cli/admin/upgrade/status/controlplane.go`
/// `assessControlPlaneStatus`). `mco_image` is the machine-config-operator Deployment image
/// (`""` when unknown).
pub fn assess_control_plane(
    cv: &ClusterVersion,
    cos: &[ClusterOperator],
    mco_image: &str,
    now: DateTime<Utc>,
) -> ControlPlaneResult {
    let target = cv.status.desired.version.as_str();
    let mut cp = ControlPlane::default();
    let mut updated = 0usize;
    let mut total = 0usize;
    let mut health = OperatorHealth::default();
    let mut last_observed: Option<DateTime<Utc>> = None;
    let mut mco_started: Option<DateTime<Utc>> = None;
    let mut co_insights = Vec::new();

    for co in cos.iter().filter(|c| is_platform_operator(c)) {
        let name = co.name();
        let image_upgrading = name == "machine-config"
            && co
                .status
                .versions
                .iter()
                .any(|v| v.name == "operator-image" && v.version != mco_image);
        let is_updated = !image_upgrading
            && co
                .status
                .versions
                .iter()
                .any(|v| v.name == "operator" && v.version == target);
        total += 1;
        if is_updated {
            updated += 1;
            cp.updated_names.push(name.to_owned());
        }
        let available = last_condition(co, "Available");
        let degraded = last_condition(co, "Degraded");
        if let Some(p) = last_condition(co, "Progressing") {
            if let Some(t) = p.last_transition_time {
                last_observed = Some(last_observed.map_or(t, |l| l.max(t)));
            }
            if !is_updated && p.is_true() {
                cp.updating_operators.push(UpdatingOperator {
                    name: name.to_owned(),
                    since: p.last_transition_time,
                    since_duration: DurationValue::new(
                        p.last_transition_time
                            .map(|t| between(now, t))
                            .unwrap_or(i64::MAX),
                    ),
                    reason: p.reason().to_owned(),
                    message: p.message().to_owned(),
                });
                if name == "machine-config" {
                    mco_started = p.last_transition_time;
                }
            } else if !is_updated && p.is_false() {
                cp.operators_waiting += 1;
            }
        }
        match (available, degraded) {
            (Some(a), _) if !a.is_true() => health.unavailable += 1,
            (None, _) => health.unavailable += 1,
            (_, Some(d)) if d.is_true() => health.degraded += 1,
            _ => {}
        }
        let resource = || {
            vec![Resource {
                kind: CO_KIND.to_owned(),
                name: name.to_owned(),
            }]
        };
        if let Some(a) = available.filter(|a| a.is_false()) {
            let ltt = a.last_transition_time;
            let age = ltt.map(|t| between(now, t)).unwrap_or(i64::MAX);
            if age > 5 * MINUTE {
                co_insights.push(Insight {
                    started_at: ltt,
                    level: if age > 20 * MINUTE {
                        Level::Error
                    } else {
                        Level::Warning
                    },
                    impact: Impact::ApiAvailability,
                    summary: format!("Cluster Operator {name} is unavailable ({})", a.reason()),
                    description: non_empty_or(a.message(), "<no message>"),
                    reference: REF_DOWN.to_owned(),
                    resources: resource(),
                    ..Default::default()
                });
            }
        }
        if let Some(d) = degraded.filter(|d| d.is_true()) {
            let ltt = d.last_transition_time;
            let age = ltt.map(|t| between(now, t)).unwrap_or(i64::MAX);
            if age > 5 * MINUTE {
                co_insights.push(Insight {
                    started_at: ltt,
                    level: if age > 40 * MINUTE {
                        Level::Error
                    } else {
                        Level::Warning
                    },
                    impact: Impact::ApiAvailability,
                    summary: format!("Cluster Operator {name} is degraded ({})", d.reason()),
                    description: non_empty_or(d.message(), "<no message>"),
                    reference: REF_DEGRADED.to_owned(),
                    resources: resource(),
                    ..Default::default()
                });
            }
        }
    }
    health.total = total;
    health.healthy = total.saturating_sub(health.unavailable + health.degraded);
    cp.operator_health = health;
    cp.operators_total = total;
    cp.operators_updated = updated;
    // An update to a release not loaded yet (requested by image; `history[0]` Partial with no
    // version) has updated nothing yet, whatever oc's count says (cvo only).
    let target_not_loaded = cv
        .status
        .history
        .first()
        .is_some_and(|h| h.version.is_empty() && h.state == UpdateState::Partial);
    let completed = updated == total && !target_not_loaded;
    cp.assessment = if completed {
        ControlPlaneAssessment::Completed
    } else {
        ControlPlaneAssessment::Progressing
    };
    if let Some(m) = mco_started
        && total - updated == 1
    {
        last_observed = Some(m);
    }

    let history = &cv.status.history;
    let mut to_last_observed = 0i64;
    let mut updating_for = 0i64;
    if let Some(h0) = history.first() {
        let started = h0.started_time;
        cp.started_at = started;
        let started_ns = started.unwrap_or_default();
        let lo = match last_observed {
            Some(l) if l > started_ns => l,
            _ => now,
        };
        to_last_observed = between(lo, started_ns);
        let completion_at = if h0.state == UpdateState::Completed {
            h0.completion_time
        } else {
            Some(now)
        };
        cp.completion_at = completion_at;
        updating_for = between(completion_at.unwrap_or_default(), started_ns);
    }
    cp.updating_for_raw = DurationValue::new(updating_for);
    let duration = if updating_for > 10 * MINUTE {
        round(updating_for, MINUTE)
    } else {
        round(updating_for, SECOND)
    };
    cp.duration = DurationValue::new(duration);

    // Versions.
    cp.target_version = "unknown".to_owned();
    cp.previous_version = "unknown".to_owned();
    let mut history_insight = None;
    if let Some(h0) = history.first() {
        cp.target_version = if h0.version.is_empty() && !h0.image.is_empty() {
            h0.image.clone()
        } else {
            h0.version.clone()
        };
        cp.target_version_unknown = h0.version.is_empty() || target.is_empty();
    }
    if history.len() == 1 {
        cp.transition = VersionTransition::NewInstall;
        cp.versions_text = format!("{} (a new install)", cp.target_version);
    } else if let Some(h1) = history.get(1) {
        cp.previous_version = h1.version.clone();
        let multi = history[0].version == h1.version && history[0].image != h1.image;
        if h1.state == UpdateState::Partial {
            cp.transition = VersionTransition::FromIncomplete;
            cp.previous_incomplete = true;
            cp.versions_text = format!("{} (from incomplete {})", cp.target_version, cp.previous_version);
        } else if multi {
            cp.transition = VersionTransition::MultiArch;
            cp.multi_arch = true;
            cp.versions_text = format!("{} to Multi-Architecture", cp.target_version);
        } else {
            cp.transition = VersionTransition::From;
            cp.versions_text = format!("{} (from {})", cp.target_version, cp.previous_version);
        }
        if !completed && h1.state == UpdateState::Partial {
            let last_complete = history
                .iter()
                .skip(2)
                .find(|h| h.state == UpdateState::Completed)
                .map_or_else(|| "unknown".to_owned(), |h| h.version.clone());
            cp.last_complete_version = Some(last_complete.clone());
            history_insight = Some(Insight {
                started_at: history[0].started_time,
                level: Level::Warning,
                impact: Impact::None,
                summary: format!(
                    "Previous update to {} never completed, last complete update was {last_complete}",
                    cp.previous_version
                ),
                description: format!(
                    "Current update to {} was initiated while the previous update to version {} was still in progress",
                    cp.target_version, cp.previous_version
                ),
                reference: REF_HISTORY.to_owned(),
                resources: vec![Resource {
                    kind: CV_KIND.to_owned(),
                    name: cv.metadata.name.clone().unwrap_or_default(),
                }],
                ..Default::default()
            });
        }
    } else {
        cp.transition = VersionTransition::Unknown;
        cp.versions_text = format!("{} (from {})", cp.target_version, cp.previous_version);
    }

    // Completion and estimate.
    let x = if total == 0 {
        1.0
    } else {
        updated as f64 / total as f64
    };
    cp.completion_percent = x * 100.0;
    let mut est_value = Estimate::default();
    // No estimate for a target whose version is not known yet: nothing can be updated to it.
    if x <= 1.0 && !completed && !cp.target_version_unknown {
        let mut baseline = HOUR;
        if history.len() >= 3
            && let Some(h) = history[1..history.len() - 1]
                .iter()
                .find(|h| h.state == UpdateState::Completed)
            && let (Some(s), Some(c)) = (h.started_time, h.completion_time)
        {
            baseline = between(c, s);
        }
        let est = estimate(baseline, to_last_observed, updating_for, x);
        let est_total = trunc(updating_for.saturating_add(est), MINUTE);
        if est < -10 * MINUTE {
            cp.assessment = ControlPlaneAssessment::Stalled;
        } else if est < 0 {
            cp.assessment = ControlPlaneAssessment::ProgressingSlow;
        }
        let (kind, text) = if est == 0 {
            (EstimateKind::None, None)
        } else if cp.multi_arch {
            (
                EstimateKind::NotAvailableMultiArch,
                Some("N/A for Multi-Architecture Migration".to_owned()),
            )
        } else if est < -10 * MINUTE {
            (
                EstimateKind::NotAvailableOverdue,
                Some(format!("N/A; estimate duration was {}", short(est_total))),
            )
        } else if est < 10 * MINUTE {
            (EstimateKind::UnderTenMinutes, Some("<10m".to_owned()))
        } else {
            (EstimateKind::Remaining, Some(short(est)))
        };
        est_value = Estimate {
            kind,
            remaining: DurationValue::new(est),
            estimated_total: DurationValue::new(est_total),
            baseline: DurationValue::new(baseline),
            text,
        };
    }
    cp.estimate = est_value;
    ControlPlaneResult {
        control_plane: cp,
        co_insights,
        history_insight,
    }
}

fn non_empty_or(s: &str, default: &str) -> String {
    if s.is_empty() {
        default.to_owned()
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timewise_values() {
        assert!((timewise(32.0 / 33.0) - 0.697644).abs() < 1e-5);
        assert!((timewise(30.0 / 33.0) - 0.529002).abs() < 1e-5);
    }

    #[test]
    fn estimate_degraded_fixture() {
        // 4.14.1-degraded: toLastObserved 54m9s, cpUpdatingFor 7130 s (+368975 ns), x = 32/33.
        let est = estimate(
            HOUR,
            54 * MINUTE + 9 * SECOND,
            7130 * SECOND + 368_975,
            32.0 / 33.0,
        );
        assert_eq!(est, -2060 * SECOND);
    }
}
