//! `cvo status`: the text of `oc adm upgrade status` and a stable JSON form.
//!
//! The text form reproduces `openshift/oc pkg/cli/admin/upgrade/status/status.go` (and the
//! `controlplane.go`, `workerpool.go`, `health.go` writers) byte for byte.
//!
//! The JSON form is [`Assessment`] serialised with camelCase keys. Top-level keys:
//! - `now`: RFC 3339 instant the assessment was made at;
//! - `error`: why no assessment could be made, or `null`;
//! - `updating`: `false` means "The cluster is not updating.";
//! - `clusterVersionName`, `currentVersion` (newest Completed history entry or `null`),
//!   `desiredVersion`, `startedAt`, `updatingFor` (`{nanos, text}`);
//! - `controlPlane`: `assessment`, `targetVersion`, `previousVersion`, `transition`,
//!   `versionsText`, `duration`, `completionPercent`, `operatorsTotal/Updated/Waiting`,
//!   `updatingOperators[]`, `estimate` (`kind`, `remaining`, `estimatedTotal`, `baseline`,
//!   `text`), `operatorHealth`, `multiArch`, ...;
//! - `pools[]`: every MachineConfigPool (`isMaster` marks the control plane) with counts and
//!   `nodes[]` (`name`, `assessment`, `phase`, `version`, `estimate`, `message`, flags);
//! - `showWorkerSection`;
//! - `health`: `insights[]` (`startedAt`, `since`, `level`, `impact`, `summary`,
//!   `description`, `reference`, `resources[]`) and `defaultOnly`;
//! - `failing` / `progressing`: the ClusterVersion conditions (`status`, `reason`, `message`,
//!   `since`), `failing` only when not `False`; `failingConditionMissing`.
//!
//! Durations are objects `{nanos, text}` (signed nanoseconds and the text `oc` prints); times are
//! RFC 3339 strings or `null`; enums are the words `oc` prints (`"Progressing - Slow"`,
//! `"API Availability"`), except `transition` and `estimate.kind`, which are identifiers.
//! Keys are only ever added, never renamed.

use crate::l10n::{tr, trf};
use std::fmt::Write as _;

use super::tabwriter;
use crate::assess::{Assessment, ControlPlaneAssessment, Insight, Level, PoolAssessment, insight_text};

/// `--details`: which sections get their detailed form.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Details {
    /// Every section.
    All,
    /// Node tables.
    Nodes,
    /// Update-health insights.
    Health,
    /// Updating operators.
    Operators,
}

/// Which detailed forms are enabled.
#[derive(Clone, Copy)]
struct Want {
    operators: bool,
    nodes: bool,
    health: bool,
}

impl Want {
    fn from(d: Option<Details>) -> Self {
        let all = d == Some(Details::All);
        Self {
            operators: all || d == Some(Details::Operators),
            nodes: all || d == Some(Details::Nodes),
            health: all || d == Some(Details::Health),
        }
    }
}

/// Go `%.0f` of a percentage: round half to even on the exact binary value.
fn pct(x: f64) -> String {
    format!("{x:.0}")
}

/// `ellipsis(s, n)`: at most `n` runes, the last three `...` when cut.
fn ellipsis(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(n.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

/// Renders the text form of `oc adm upgrade status [--details ...]`.
///
/// An assessment that could not be made renders as its error, prefixed `error: `.
pub fn render_text(a: &Assessment, details: Option<Details>) -> String {
    if let Some(e) = &a.error {
        return format!("{}{e}\n", tr!("error-prefix", "error: "));
    }
    if !a.updating {
        let mut out = tr!("status-not-updating", "The cluster is not updating.").to_owned() + "\n";
        // oc stops here; cvo adds its own insights (a requested release not accepted).
        if !a.health.insights.is_empty() {
            out.push('\n');
            out.push_str(tr!("status-update-health", "= Update Health ="));
            out.push('\n');
            health(
                &a.health.insights,
                details == Some(Details::Health) || details == Some(Details::All),
                &mut out,
            );
        }
        return out;
    }
    let want = Want::from(details);
    let mut out = String::new();
    control_plane(a, want, &mut out);
    if let Some(master) = a.master_pool() {
        node_table(master, want, &mut out);
    }
    if a.show_worker_section {
        out.push('\n');
        out.push_str(tr!("status-worker-upgrade", "= Worker Upgrade ="));
        out.push('\n');
        let mut t = String::from("\n");
        t += &header(&[
            tr!("status-col-worker-pool", "WORKER POOL"),
            tr!("col-assessment", "ASSESSMENT"),
            tr!("col-completion", "COMPLETION"),
            tr!("col-status", "STATUS"),
        ]);
        for p in a.worker_pools() {
            if p.total == 0 {
                let _ = writeln!(
                    t,
                    "{}\tEmpty\t\t{}",
                    p.name,
                    trf!("status-pool-total", "{n} Total", n = p.total)
                );
                continue;
            }
            let _ = write!(
                t,
                "{}\t{}\t{}% ({}/{})\t{}",
                p.name,
                p.assessment.as_str(),
                pct(p.completion_percent),
                p.total - p.outdated,
                p.total,
                trf!(
                    "status-pool-counts",
                    "{available} Available, {progressing} Progressing, {draining} Draining",
                    available = p.available,
                    progressing = p.progressing,
                    draining = p.draining
                )
            );
            if p.excluded > 0 {
                t += &trf!("status-pool-excluded", ", {n} Excluded", n = p.excluded);
            }
            if p.degraded > 0 {
                t += &trf!("status-pool-degraded", ", {n} Degraded", n = p.degraded);
            }
            t.push('\n');
        }
        out.push_str(&tabwriter::format(&t, 0, 3));
        for p in a.worker_pools() {
            node_table(p, want, &mut out);
        }
    }
    out.push('\n');
    out.push_str(tr!("status-update-health", "= Update Health ="));
    out.push('\n');
    health(
        &a.health.insights,
        want.health && !a.health.default_only,
        &mut out,
    );
    out
}

fn control_plane(a: &Assessment, want: Want, out: &mut String) {
    let cp = &a.control_plane;
    out.push_str(tr!("status-control-plane", "= Control Plane ="));
    out.push('\n');
    if cp.assessment == ControlPlaneAssessment::Completed {
        let at = cp
            .completion_at
            .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_default();
        out.push_str(&trf!(
            "status-completed",
            "Update to {target} successfully completed at {at} (duration: {duration})",
            target = cp.target_version,
            at = at,
            duration = cp.duration.text
        ));
        out.push('\n');
        return;
    }
    out.push_str(&trf!(
        "status-assessment",
        "Assessment:      {v}",
        v = cp.assessment.as_str()
    ));
    out.push('\n');
    out.push_str(&trf!(
        "status-target-version",
        "Target Version:  {v}",
        v = cp.versions_text
    ));
    out.push('\n');
    if !cp.updating_operators.is_empty() {
        let names: Vec<&str> = cp.updating_operators.iter().map(|o| o.name.as_str()).collect();
        out.push_str(&trf!(
            "status-updating",
            "Updating:        {v}",
            v = names.join(", ")
        ));
        out.push('\n');
    }
    out.push_str(&trf!(
        "status-completion",
        "Completion:      {percent}% ({updated} operators updated, {updating} updating, {waiting} waiting)",
        percent = pct(cp.completion_percent),
        updated = cp.operators_updated,
        updating = cp.updating_operators.len(),
        waiting = cp.operators_waiting
    ));
    out.push('\n');
    match &cp.estimate.text {
        Some(eta) => {
            out.push_str(&trf!(
                "status-duration-eta",
                "Duration:        {duration} (Est. Time Remaining: {eta})",
                duration = cp.duration.text,
                eta = eta
            ));
            out.push('\n');
        }
        None => {
            out.push_str(&trf!(
                "status-duration",
                "Duration:        {duration}",
                duration = cp.duration.text
            ));
            out.push('\n');
        }
    }
    let h = &cp.operator_health;
    out.push_str(&trf!(
        "status-operator-health",
        "Operator Health: {n} Healthy",
        n = h.healthy
    ));
    if h.unavailable > 0 {
        out.push_str(&trf!(
            "status-unavailable",
            ", {n} Unavailable",
            n = h.unavailable
        ));
    }
    if h.degraded > 0 {
        out.push_str(&trf!(
            "status-degraded",
            ", {n} Available but degraded",
            n = h.degraded
        ));
    }
    out.push('\n');

    if want.operators && !cp.updating_operators.is_empty() {
        out.push('\n');
        out.push_str(tr!("status-updating-operators", "Updating Cluster Operators"));
        let mut t = String::from("\n");
        t += &header(&[
            tr!("col-name", "NAME"),
            tr!("col-since", "SINCE"),
            tr!("col-reason", "REASON"),
            tr!("col-message", "MESSAGE"),
        ]);
        for o in &cp.updating_operators {
            let reason = if o.reason.is_empty() {
                "-"
            } else {
                o.reason.as_str()
            };
            let mut lines = o.message.split('\n');
            let first = lines.next().unwrap_or("");
            let _ = writeln!(
                t,
                "{}\t{}\t{}\t{first}",
                o.name,
                o.since_duration.text,
                ellipsis(reason, 20)
            );
            for l in lines {
                let _ = writeln!(t, "\t\t\t{l}");
            }
        }
        out.push_str(&tabwriter::format(&t, 0, 3));
    }
}

fn node_table(p: &PoolAssessment, want: Want, out: &mut String) {
    if p.nodes.is_empty() {
        return;
    }
    if p.is_master {
        if p.completion_percent == 100.0 {
            let v = p.nodes.first().and_then(|n| n.version.as_deref()).unwrap_or("");
            out.push('\n');
            out.push_str(&trf!(
                "status-cp-nodes-done",
                "All control plane nodes successfully updated to {v}",
                v = v
            ));
            out.push('\n');
            return;
        }
        out.push('\n');
        out.push_str(tr!("status-cp-nodes", "Control Plane Nodes"));
    } else {
        out.push('\n');
        out.push_str(&trf!(
            "status-worker-nodes",
            "Worker Pool Nodes: {pool}",
            pool = p.name
        ));
    }
    let mut t = String::from("\n");
    t += &header(&[
        tr!("col-name", "NAME"),
        tr!("col-assessment", "ASSESSMENT"),
        tr!("col-phase", "PHASE"),
        tr!("col-version", "VERSION"),
        tr!("col-est", "EST"),
        tr!("col-message", "MESSAGE"),
    ]);
    let (mut total, mut completed, mut available, mut progressing, mut outdated, mut draining, mut excluded) =
        (0, 0, 0, 0, 0, 0, 0);
    for (i, n) in p.nodes.iter().enumerate() {
        let omit = !want.nodes && i >= 10 && !n.is_degraded && (!n.is_unavailable || n.is_updating);
        if omit {
            total += 1;
            if n.is_updated {
                completed += 1;
            } else {
                outdated += 1;
            }
            if !n.is_unavailable {
                available += 1;
            }
            if n.assessment == crate::assess::NodeAssessmentState::Progressing {
                progressing += 1;
            }
            match n.phase {
                crate::assess::NodePhase::Draining => draining += 1,
                crate::assess::NodePhase::Paused => excluded += 1,
                _ => {}
            }
            continue;
        }
        let _ = writeln!(
            t,
            "{}\t{}\t{}\t{}\t{}\t{}",
            n.name,
            n.assessment.as_str(),
            n.phase.as_str(),
            n.version.as_deref().unwrap_or("?"),
            n.estimate,
            n.message
        );
    }
    out.push_str(&tabwriter::format(&t, 0, 3));
    if total > 0 {
        out.push_str("...\n");
        out.push_str(&trf!(
            "status-omitted-nodes",
            "Omitted additional {total} Total, {completed} Completed, {available} Available, {progressing} Progressing, {outdated} Outdated, {draining} Draining, {excluded} Excluded, and 0 Degraded nodes.",
            total = total,
            completed = completed,
            available = available,
            progressing = progressing,
            outdated = outdated,
            draining = draining,
            excluded = excluded
        ));
        out.push('\n');
        out.push_str(tr!(
            "status-omitted-hint",
            "Pass along --details=nodes to see all information."
        ));
        out.push('\n');
    }
}

/// A table's header line: the column names, tab-separated, ending the line.
fn header(columns: &[&str]) -> String {
    columns.join("\t") + "\n"
}

/// The labels of `--details=health`'s insight blocks, in the current language, and the width
/// they are padded to (13 in English, as oc: "Description: "; the longest Russian label and a
/// space, counted in characters, which are cells here).
struct HealthLabels {
    message: &'static str,
    since: &'static str,
    level: &'static str,
    impact: &'static str,
    reference: &'static str,
    resources: &'static str,
    description: &'static str,
    width: usize,
}

impl HealthLabels {
    fn current() -> HealthLabels {
        let mut l = HealthLabels {
            message: tr!("status-label-message", "Message: "),
            since: tr!("status-label-since", "Since:"),
            level: tr!("status-label-level", "Level:"),
            impact: tr!("status-label-impact", "Impact:"),
            reference: tr!("status-label-reference", "Reference:"),
            resources: tr!("status-label-resources", "Resources:"),
            description: tr!("status-label-description", "Description:"),
            width: 13,
        };
        let longest = [l.since, l.level, l.impact, l.reference, l.description]
            .iter()
            .map(|s| s.chars().count() + 1)
            .max()
            .unwrap_or(13);
        l.width = longest.max(13);
        l
    }
}

fn health(insights: &[Insight], detailed: bool, out: &mut String) {
    let labels = HealthLabels::current();
    if detailed {
        for (i, ins) in insights.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let w = labels.width;
            let _ = writeln!(out, "{}{}", labels.message, insight_text::summary(&ins.summary));
            let _ = writeln!(out, "  {:<w$}{}", labels.since, ins.since);
            let _ = writeln!(out, "  {:<w$}{}", labels.level, ins.level.as_str());
            let _ = writeln!(out, "  {:<w$}{}", labels.impact, ins.impact.as_str());
            let _ = writeln!(out, "  {:<w$}{}", labels.reference, ins.reference);
            if !ins.resources.is_empty() {
                let _ = writeln!(out, "  {}", labels.resources);
                let mut kinds: Vec<&str> = ins.resources.iter().map(|r| r.kind.as_str()).collect();
                kinds.sort_unstable();
                kinds.dedup();
                let longest = kinds.iter().map(|k| k.chars().count() + 2).max().unwrap_or(0);
                for k in kinds {
                    let mut names: Vec<&str> = ins
                        .resources
                        .iter()
                        .filter(|r| r.kind == k)
                        .map(|r| r.name.as_str())
                        .collect();
                    names.sort_unstable();
                    let label = format!("{k}: ");
                    let _ = writeln!(out, "    {label:<longest$}{}", names.join(", "));
                }
            }
            let desc = insight_text::description(&ins.description)
                .replace('\n', &format!("\n{}, ", " ".repeat(w + 2)));
            let _ = writeln!(out, "  {:<w$}{desc}", labels.description);
        }
        return;
    }
    let mut t = header(&[
        tr!("col-since", "SINCE"),
        tr!("col-level", "LEVEL"),
        tr!("col-impact", "IMPACT"),
        tr!("col-message", "MESSAGE"),
    ]);
    for ins in insights {
        let _ = writeln!(
            t,
            "{}\t{}\t{}\t{}",
            ins.since,
            ins.level.as_str(),
            ins.impact.as_str(),
            insight_text::summary(&ins.summary)
        );
    }
    out.push_str(&tabwriter::format(&t, 0, 3));
    if insights.len() > 1 || insights.first().is_some_and(|i| i.level != Level::Info) {
        out.push('\n');
        out.push_str(tr!(
            "status-run-details",
            "Run with --details=health for additional description and links to related online documentation"
        ));
        out.push('\n');
    }
}

/// Renders the YAML form: the JSON form's document (same keys) as YAML.
///
/// # Errors
/// Only if serialisation fails.
pub fn render_yaml(a: &Assessment) -> anyhow::Result<String> {
    Ok(serde_norway::to_string(&serde_json::to_value(a)?)?)
}

/// Renders the JSON form (see the module documentation for the shape).
///
/// # Errors
/// Only if serialisation fails.
pub fn render_json(a: &Assessment) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(a)? + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_ties_round_half_even() {
        assert_eq!(pct(12.5), "12");
        assert_eq!(pct(37.5), "38");
        assert_eq!(pct(62.5), "62");
        assert_eq!(pct(87.5), "88");
        assert_eq!(pct(100.0 / 3.0), "33");
    }

    #[test]
    fn ellipsis_cuts_at_runes() {
        assert_eq!(
            ellipsis("NodeInstaller::PetrDoesNotLikeLongLines", 20),
            "NodeInstaller::Pe..."
        );
        assert_eq!(ellipsis("short", 20), "short");
    }
}
