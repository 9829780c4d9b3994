//! The rehearsal's report: what `cvo rehearse` prints (text, or the same as JSON). Pure: built
//! from what the rehearsal collected ([`Report`]'s fields), rendered by [`render_text`].

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::Duration as ChronoDuration;
use serde::Serialize;

use crate::cluster::update_request::{Verdict, VerdictState};
use crate::l10n::{tr, trf};
use crate::openshift::{ClusterVersion, UpdateState};

/// Everything the rehearsal found, in the order the text prints it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The cluster's current version (the snapshot's ClusterVersion `status.desired`).
    pub from_version: String,
    /// The target release's version (its `release-metadata`).
    pub to_version: String,
    /// The target's pull spec (`file://DIR` for a payload directory).
    pub to_image: String,
    /// The request's preconditions, as `cvo upgrade --to-image --read-only` decides them.
    pub preconditions: Vec<PreconditionRow>,
    /// The refusal `oc adm upgrade` would print, if a precondition blocks (the rehearsal
    /// then runs the update as if `--force` were given).
    pub refusal: Option<String>,
    /// The ClusterOperators the snapshot shows `Degraded=True`, as it shows them.
    pub degraded: Vec<DegradedOperator>,
    /// Whether the rehearsal let them recover once they run the target release
    /// (`--assume-recovery`); by default they stay Degraded and never report the target.
    pub assume_recovery: bool,
    /// Manifests created, changed and deleted, per run level and component.
    pub manifests: Vec<ManifestGroup>,
    /// Manifests of the payload (after filtering), for the share of the payload that changes.
    pub payload_manifests: usize,
    /// ClusterOperators whose versions changed.
    pub operators: Vec<OperatorRoll>,
    /// MachineConfigPools whose configuration changed, with their nodes that rebooted.
    pub pools: Vec<PoolRoll>,
    /// Conditional-update risks of the snapshot's ClusterVersion for the target.
    pub risks: Vec<RiskRow>,
    /// The duration estimate from the cluster's history.
    pub estimate: Estimate,
    /// How the rehearsal ended.
    pub outcome: Outcome,
}

/// A ClusterOperator that is `Degraded=True` in the snapshot: its name and the condition's
/// reason and message (one line).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DegradedOperator {
    /// `metadata.name`.
    pub name: String,
    /// The Degraded condition's reason (may be empty).
    pub reason: String,
    /// The Degraded condition's message, on one line (may be empty).
    pub message: String,
}

/// One precondition's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PreconditionRow {
    /// E.g. `ClusterVersionUpgradeable`.
    pub name: String,
    /// `passed`, `waived`, `blocking`, `warning` or `unchecked`.
    pub state: String,
    /// What was found.
    pub message: String,
}

impl From<&Verdict> for PreconditionRow {
    fn from(v: &Verdict) -> Self {
        let state = match v.state {
            VerdictState::Passed => "passed",
            VerdictState::Waived(_) => "waived",
            VerdictState::Blocking(_) => "blocking",
            VerdictState::Warning => "warning",
            VerdictState::Unchecked => "unchecked",
        };
        Self {
            name: v.name.to_string(),
            state: state.to_string(),
            message: v.message.trim_end().to_string(),
        }
    }
}

/// What happens to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Created.
    Created,
    /// Changed (fields differ).
    Changed,
    /// Deleted (a deletion manifest).
    Deleted,
}

/// The manifests of one run level and component that change.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ManifestGroup {
    /// The `NN` of `0000_NN_component_*` (`None`: no run level in the file name).
    pub run_level: Option<u32>,
    /// The component of the file name (`-` when none).
    pub component: String,
    /// Created objects, `kind ns/name`.
    pub created: Vec<String>,
    /// Changed objects.
    pub changed: Vec<String>,
    /// Deleted objects.
    pub deleted: Vec<String>,
}

/// One changed manifest as the rehearsal saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestChange {
    /// Run level of its file.
    pub run_level: Option<u32>,
    /// Component of its file.
    pub component: Option<String>,
    /// `kind ns/name` (or `kind name`).
    pub object: String,
    /// What happens.
    pub change: Change,
}

/// Groups changes by run level, then component (both ascending), names sorted.
pub fn group_manifests(changes: &[ManifestChange]) -> Vec<ManifestGroup> {
    let mut by: BTreeMap<(Option<u32>, String), ManifestGroup> = BTreeMap::new();
    for c in changes {
        let component = c.component.clone().unwrap_or_else(|| "-".into());
        let g = by
            .entry((c.run_level, component.clone()))
            .or_insert_with(|| ManifestGroup {
                run_level: c.run_level,
                component,
                ..ManifestGroup::default()
            });
        match c.change {
            Change::Created => g.created.push(c.object.clone()),
            Change::Changed => g.changed.push(c.object.clone()),
            Change::Deleted => g.deleted.push(c.object.clone()),
        }
    }
    let mut out: Vec<ManifestGroup> = by.into_values().collect();
    for g in &mut out {
        g.created.sort();
        g.changed.sort();
        g.deleted.sort();
    }
    out
}

/// A ClusterOperator that rolls: its `operator` version before and after.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OperatorRoll {
    /// Name.
    pub name: String,
    /// The `operator` version before (empty: the operator is new).
    pub from: String,
    /// After (empty: not reached when the rehearsal ended).
    pub to: String,
}

/// A MachineConfigPool that rolls and the nodes that reboot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PoolRoll {
    /// Pool name.
    pub name: String,
    /// Nodes of the pool whose `currentConfig` changed (they were drained and rebooted).
    pub rebooted: Vec<String>,
    /// Nodes of the pool (machineCount).
    pub nodes: usize,
    /// Whether the pool reported Updated at the end.
    pub updated: bool,
}

/// One conditional-update risk for the target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RiskRow {
    /// Risk name.
    pub name: String,
    /// Its `Applies` condition (`True`, `False`, `Unknown`, or empty when not evaluated).
    pub applies: String,
    /// Message.
    pub message: String,
    /// URL.
    pub url: String,
}

/// The risks of the snapshot's conditional updates whose release is `version` (or `image`).
pub fn risks_for(cv: &ClusterVersion, version: &str, image: &str) -> Vec<RiskRow> {
    let mut out = Vec::new();
    for cu in &cv.status.conditional_updates {
        if cu.release.version != version && cu.release.image != image {
            continue;
        }
        for r in &cu.risks {
            let applies = crate::openshift::condition::find(&r.conditions, "Applies")
                .map(|c| c.status.to_string())
                .unwrap_or_default();
            out.push(RiskRow {
                name: r.name.clone(),
                applies,
                message: r.message.clone(),
                url: r.url.clone(),
            });
        }
    }
    out
}

/// The duration estimate and how it was computed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Estimate {
    /// Minutes of each previous completed update (newest first; the install, the oldest
    /// entry, left out).
    pub previous_minutes: Vec<i64>,
    /// Their median, minutes (`None`: no previous update).
    pub median_minutes: Option<i64>,
    /// Changed manifests / payload manifests (0..=1).
    pub share: f64,
    /// The estimate, minutes: the median × max(share, 0.5) (`None`: no history).
    pub minutes: Option<i64>,
    /// How it was computed, one sentence.
    pub method: String,
}

/// The estimate from the ClusterVersion's history: the median duration of its completed
/// updates (every Completed entry with both times but the oldest, which is the install),
/// scaled by the share of the payload that changes, never below half of it (operators and
/// node reboots take their time even for a small change).
pub fn estimate(cv: &ClusterVersion, changed: usize, total: usize) -> Estimate {
    let hist = &cv.status.history;
    let updates = hist.len().saturating_sub(1);
    let mut previous: Vec<i64> = hist
        .iter()
        .take(updates)
        .filter(|h| h.state == UpdateState::Completed)
        .filter_map(|h| Some(h.completion_time? - h.started_time?))
        .map(|d: ChronoDuration| d.num_minutes())
        .collect();
    let share = if total == 0 {
        0.0
    } else {
        (changed as f64 / total as f64).min(1.0)
    };
    let newest_first = previous.clone();
    previous.sort_unstable();
    let median = (!previous.is_empty()).then(|| previous[previous.len() / 2]);
    let minutes = median.map(|m| (m as f64 * share.max(0.5)).round() as i64);
    let method = match median {
        Some(m) => format!(
            "median of {} previous update(s) in status.history ({m} min) × max(share of the payload that changes {:.0}%, 50%)",
            newest_first.len(),
            share * 100.0
        ),
        None => {
            "no previous update in status.history (only the install): no estimate from this cluster".into()
        }
    };
    Estimate {
        previous_minutes: newest_first,
        median_minutes: median,
        share,
        minutes,
        method,
    }
}

/// How the rehearsal ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// The ClusterVersion reached Completed for the target.
    pub completed: bool,
    /// Simulated seconds from the request to the end (Completed or the timeout).
    pub simulated_secs: f64,
    /// Tasks done / total in the last pass.
    pub done: usize,
    /// Tasks in the payload.
    pub total: usize,
    /// Where it got stuck: the Failing message, the engine's failure, the operators kept
    /// Degraded it waits on, or the run level it was at (`None` when completed).
    pub stuck: Option<String>,
    /// The rehearsal ended early: nothing moved for [`super::STALL_AFTER`] of simulated time
    /// while it waited on operators kept Degraded.
    pub stalled: bool,
}

fn level(l: Option<u32>) -> String {
    l.map(|l| format!("{l:02}")).unwrap_or_else(|| "--".into())
}

/// The report as text; `details` lists each manifest's name under its group.
pub fn render_text(r: &Report, details: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}",
        trf!(
            "rehearse-title",
            "Rehearsal of the update {from} -> {to} on a simulated copy of the cluster: nothing was written to your cluster.",
            from = r.from_version,
            to = r.to_version
        )
    );
    let _ = writeln!(
        o,
        "{}",
        trf!("rehearse-target", "Target release: {image}", image = r.to_image)
    );
    let _ = writeln!(
        o,
        "\n{}",
        tr!(
            "rehearse-preconditions",
            "Preconditions (as `cvo upgrade --to-image --read-only` decides them):"
        )
    );
    if r.preconditions.is_empty() {
        let _ = writeln!(o, "{}", tr!("dry-none-apply", "  (none apply to this request)"));
    }
    // The state column as the dry run of `cvo upgrade` words and pads it.
    let width = match crate::l10n::current() {
        crate::l10n::Lang::En => 10,
        crate::l10n::Lang::Ru => 13,
    };
    let continuation = format!("\n{}", " ".repeat(width + 4));
    for p in &r.preconditions {
        let msg = p
            .message
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(&continuation);
        let state = match p.state.as_str() {
            "passed" => tr!("dry-passed", "passed"),
            "waived" => tr!("dry-waived", "waived"),
            "blocking" => tr!("dry-blocking", "blocking"),
            "warning" => tr!("dry-warning", "warning"),
            "unchecked" => tr!("dry-unchecked", "unchecked"),
            other => other,
        };
        let _ = writeln!(o, "  {state:<width$}{}: {msg}", p.name);
    }
    if let Some(refusal) = &r.refusal {
        let _ = writeln!(
            o,
            "{}",
            trf!(
                "rehearse-refused",
                "  => the request would be refused: {refusal}",
                refusal = refusal
            )
        );
        let _ = writeln!(
            o,
            "{}",
            tr!(
                "rehearse-as-if-forced",
                "     (the rehearsal went on as if --force were given)"
            )
        );
    }
    if !r.degraded.is_empty() {
        let how = if r.assume_recovery {
            trf!(
                "rehearse-assume-recovery",
                "assumed to recover once they run {version} (--assume-recovery)",
                version = r.to_version
            )
        } else {
            tr!(
                "rehearse-kept-degraded",
                "kept Degraded in the rehearsal (--assume-recovery rehearses them recovering)"
            )
            .to_string()
        };
        let _ = writeln!(
            o,
            "\n{}",
            trf!(
                "rehearse-degraded",
                "Degraded in the snapshot: {n} ClusterOperator(s), {how}:",
                n = r.degraded.len(),
                how = how
            )
        );
        for d in &r.degraded {
            let why = match (d.reason.is_empty(), d.message.is_empty()) {
                (true, true) => tr!("rehearse-no-reason", "no reason given").to_string(),
                (false, true) => d.reason.clone(),
                (true, false) => d.message.clone(),
                (false, false) => format!("{}: {}", d.reason, d.message),
            };
            // A Degraded message can run to a kilobyte (etcd lists its members): the text
            // keeps the first 200 characters, `-o json` the whole message.
            let why = match why.char_indices().nth(200) {
                Some((i, _)) => format!(
                    "{}{}",
                    &why[..i],
                    tr!("rehearse-clipped", "... (-o json has all of it)")
                ),
                None => why,
            };
            let _ = writeln!(o, "  {}  {why}", d.name);
        }
    }
    let count = |f: fn(&ManifestGroup) -> usize| r.manifests.iter().map(f).sum::<usize>();
    let (c, u, d) = (
        count(|g| g.created.len()),
        count(|g| g.changed.len()),
        count(|g| g.deleted.len()),
    );
    let _ = writeln!(
        o,
        "\n{}",
        trf!(
            "rehearse-manifests",
            "Manifests: {c} created, {u} changed, {d} deleted of {total} in the payload",
            c = c,
            u = u,
            d = d,
            total = r.payload_manifests
        )
    );
    let _ = writeln!(
        o,
        "{}",
        tr!(
            "rehearse-created-note",
            "  (an object the snapshot does not hold counts as created: a must-gather holds no workloads)"
        )
    );
    if !r.manifests.is_empty() {
        let mut t = format!(
            "  {}\t{}\t{}\t{}\t{}\n",
            tr!("rehearse-col-run-level", "RUN LEVEL"),
            tr!("rehearse-col-component", "COMPONENT"),
            tr!("rehearse-col-created", "CREATED"),
            tr!("rehearse-col-changed", "CHANGED"),
            tr!("rehearse-col-deleted", "DELETED")
        );
        for g in &r.manifests {
            let _ = writeln!(
                t,
                "  {}\t{}\t{}\t{}\t{}",
                level(g.run_level),
                g.component,
                g.created.len(),
                g.changed.len(),
                g.deleted.len()
            );
        }
        let table = super::super::tabwriter::format(&t, 0, 3);
        let mut lines = table.lines();
        if let Some(header) = lines.next() {
            let _ = writeln!(o, "{}", header.trim_end());
        }
        // Each row, then (with `details`) its objects: `+` created, `~` changed, `-` deleted.
        for (row, g) in lines.zip(&r.manifests) {
            let _ = writeln!(o, "{}", row.trim_end());
            if details {
                for (what, names) in [("+", &g.created), ("~", &g.changed), ("-", &g.deleted)] {
                    for n in names {
                        let _ = writeln!(o, "      {what} {n}");
                    }
                }
            }
        }
    }
    let _ = writeln!(
        o,
        "\n{}",
        trf!(
            "rehearse-operators",
            "ClusterOperators that roll: {n}",
            n = r.operators.len()
        )
    );
    for op in &r.operators {
        let from = if op.from.is_empty() {
            tr!("rehearse-new", "(new)")
        } else {
            &op.from
        };
        let to = if op.to.is_empty() {
            tr!("rehearse-not-reached", "(not reached)")
        } else {
            &op.to
        };
        let _ = writeln!(o, "  {} {from} -> {to}", op.name);
    }
    let nodes: usize = r.pools.iter().map(|p| p.rebooted.len()).sum();
    let _ = writeln!(
        o,
        "\n{}",
        trf!(
            "rehearse-pools",
            "MachineConfigPools that roll: {n} ({nodes} node reboot(s))",
            n = r.pools.len(),
            nodes = nodes
        )
    );
    for p in &r.pools {
        let _ = writeln!(
            o,
            "  {}: {}: {}",
            p.name,
            if p.updated {
                trf!(
                    "rehearse-pool-updated",
                    "{rebooted}/{nodes} node(s) rebooted, Updated",
                    rebooted = p.rebooted.len(),
                    nodes = p.nodes
                )
            } else {
                trf!(
                    "rehearse-pool-updating",
                    "{rebooted}/{nodes} node(s) rebooted, still updating",
                    rebooted = p.rebooted.len(),
                    nodes = p.nodes
                )
            },
            p.rebooted.join(", ")
        );
    }
    let _ = writeln!(
        o,
        "\n{}",
        trf!(
            "rehearse-risks",
            "Risks that apply to {version} (from the cluster's conditionalUpdates):",
            version = r.to_version
        )
    );
    if r.risks.is_empty() {
        let _ = writeln!(o, "{}", tr!("rehearse-no-risks", "  none known"));
    }
    for k in &r.risks {
        let applies = if k.applies.is_empty() {
            tr!("rehearse-not-evaluated", "not evaluated")
        } else {
            &k.applies
        };
        let _ = writeln!(
            o,
            "{}",
            trf!(
                "rehearse-risk",
                "  {name} (applies: {applies}): {message} {url}",
                name = k.name,
                applies = applies,
                message = k.message.trim(),
                url = k.url
            )
        );
    }
    let _ = writeln!(o, "\n{}", tr!("rehearse-estimate", "Estimated duration:"));
    match r.estimate.minutes {
        Some(m) => {
            let _ = writeln!(
                o,
                "{}",
                trf!(
                    "rehearse-about",
                    "  about {m} min: {method}",
                    m = m,
                    method = r.estimate.method
                )
            );
        }
        None => {
            let _ = writeln!(o, "  {}", r.estimate.method);
        }
    }
    let _ = writeln!(o, "\n{}", tr!("rehearse-rehearsal", "Rehearsal:"));
    let secs = format!("{:.0}", r.outcome.simulated_secs);
    if r.outcome.completed {
        let _ = writeln!(
            o,
            "{}",
            trf!(
                "rehearse-completed",
                "  Completed: {done}/{total} tasks in {secs} s of simulated time",
                done = r.outcome.done,
                total = r.outcome.total,
                secs = secs
            )
        );
    } else if r.outcome.stalled {
        let _ = writeln!(
            o,
            "{}",
            trf!(
                "rehearse-stalled",
                "  Stalled: {done}/{total} tasks after {secs} s of simulated time; nothing moved for {min} min, so the rehearsal stopped",
                done = r.outcome.done,
                total = r.outcome.total,
                secs = secs,
                min = super::STALL_AFTER.as_secs() / 60
            )
        );
    } else {
        let _ = writeln!(
            o,
            "{}",
            trf!(
                "rehearse-not-completed",
                "  NOT completed after {secs} s of simulated time: {done}/{total} tasks",
                secs = secs,
                done = r.outcome.done,
                total = r.outcome.total
            )
        );
    }
    if let Some(s) = &r.outcome.stuck {
        let _ = writeln!(o, "{}", trf!("rehearse-stuck", "  stuck: {s}", s = s));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openshift::{ClusterVersionStatus, UpdateHistory};
    use chrono::TimeZone as _;

    fn entry(state: UpdateState, start_h: u32, minutes: i64) -> UpdateHistory {
        let s = chrono::Utc
            .with_ymd_and_hms(2024, 1, 1, start_h, 0, 0)
            .single()
            .unwrap_or_default();
        UpdateHistory {
            state,
            started_time: Some(s),
            completion_time: Some(s + ChronoDuration::minutes(minutes)),
            version: String::new(),
            image: String::new(),
            verified: false,
            accepted_risks: None,
        }
    }

    fn cv(history: Vec<UpdateHistory>) -> ClusterVersion {
        ClusterVersion {
            status: ClusterVersionStatus {
                history,
                ..ClusterVersionStatus::default()
            },
            ..ClusterVersion::default()
        }
    }

    #[test]
    fn estimate_is_the_median_of_updates_without_the_install_scaled_by_the_share() {
        let c = cv(vec![
            entry(UpdateState::Completed, 9, 80),
            entry(UpdateState::Partial, 7, 30),
            entry(UpdateState::Completed, 5, 60),
            entry(UpdateState::Completed, 3, 100),
            entry(UpdateState::Completed, 1, 40), // the install
        ]);
        let e = estimate(&c, 75, 100);
        assert_eq!(e.previous_minutes, vec![80, 60, 100]);
        assert_eq!(e.median_minutes, Some(80));
        assert_eq!(e.minutes, Some(60));
        assert!(
            e.method
                .starts_with("median of 3 previous update(s) in status.history (80 min)"),
            "{}",
            e.method
        );
        // A small change is never estimated below half the median.
        assert_eq!(estimate(&c, 1, 100).minutes, Some(40));
    }

    #[test]
    fn no_estimate_from_an_install_alone() {
        let e = estimate(&cv(vec![entry(UpdateState::Completed, 1, 40)]), 10, 10);
        assert_eq!(e.minutes, None);
        assert!(e.method.starts_with("no previous update"), "{}", e.method);
    }

    #[test]
    fn manifests_group_by_run_level_then_component() {
        let ch = |l: Option<u32>, c: &str, o: &str, change| ManifestChange {
            run_level: l,
            component: Some(c.into()),
            object: o.into(),
            change,
        };
        let g = group_manifests(&[
            ch(Some(50), "dns", "deployment ns/b", Change::Changed),
            ch(Some(5), "config", "namespace x", Change::Created),
            ch(Some(50), "dns", "deployment ns/a", Change::Changed),
            ch(Some(50), "dns", "configmap ns/old", Change::Deleted),
        ]);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].run_level, g[0].component.as_str()), (Some(5), "config"));
        assert_eq!(g[1].changed, vec!["deployment ns/a", "deployment ns/b"]);
        assert_eq!(g[1].deleted, vec!["configmap ns/old"]);
        let r = Report {
            from_version: "4.16.3".into(),
            to_version: "4.16.4".into(),
            to_image: "file:///p".into(),
            manifests: g,
            payload_manifests: 10,
            preconditions: vec![PreconditionRow {
                name: "ClusterVersionUpgradeable".into(),
                state: "blocking".into(),
                message: "no".into(),
            }],
            refusal: Some("refused".into()),
            operators: vec![OperatorRoll {
                name: "dns".into(),
                from: "4.16.3".into(),
                to: "4.16.4".into(),
            }],
            pools: vec![PoolRoll {
                name: "master".into(),
                rebooted: vec!["m1".into(), "m2".into()],
                nodes: 3,
                updated: false,
            }],
            estimate: estimate(&cv(vec![]), 0, 0),
            outcome: Outcome {
                completed: false,
                simulated_secs: 120.0,
                done: 3,
                total: 10,
                stuck: Some("waiting on dns".into()),
                stalled: false,
            },
            degraded: vec![
                DegradedOperator {
                    name: "dns".into(),
                    reason: "DNSDegraded".into(),
                    message: "2 of 6 pods not ready".into(),
                },
                DegradedOperator {
                    name: "etcd".into(),
                    ..DegradedOperator::default()
                },
            ],
            ..Report::default()
        };
        let t = render_text(&r, true);
        for want in [
            "Rehearsal of the update 4.16.3 -> 4.16.4 on a simulated copy of the cluster: nothing was written to your cluster.\nTarget release: file:///p\n",
            "  blocking  ClusterVersionUpgradeable: no\n",
            "  => the request would be refused: refused\n",
            "\nDegraded in the snapshot: 2 ClusterOperator(s), kept Degraded in the rehearsal (--assume-recovery rehearses them recovering):\n  dns  DNSDegraded: 2 of 6 pods not ready\n  etcd  no reason given\n",
            "Manifests: 1 created, 2 changed, 1 deleted of 10 in the payload\n",
            "  50          dns         0         2         1\n",
            "  50          dns         0         2         1\n      ~ deployment ns/a\n      ~ deployment ns/b\n      - configmap ns/old\n",
            "  dns 4.16.3 -> 4.16.4\n",
            "MachineConfigPools that roll: 1 (2 node reboot(s))\n",
            "  master: 2/3 node(s) rebooted, still updating: m1, m2\n",
            "  NOT completed after 120 s of simulated time: 3/10 tasks\n",
            "  stuck: waiting on dns\n",
        ] {
            assert!(t.contains(want), "missing {want:?} in\n{t}");
        }
    }
}
