//! What `oc adm upgrade status` does not say: an update that is blocked while oc's rules read
//! "The cluster is not updating." or "Update is proceeding well". cvo adds these as
//! update-health insights (so `cvo status` and the dashboard's health panel and headline say
//! the same), leaving oc's own text as it is:
//!
//! - [`not_accepted`]: the administrator requested an update (`spec.desiredUpdate`) and the CVO
//!   refused its release (`ReleaseAccepted=False`, e.g. the signature could not be verified or
//!   the payload not retrieved; openshift/cluster-version-operator `pkg/cvo/cvo.go` sets it).
//!   oc shows the cluster as not updating, the target as `-`.
//! - [`not_picked_up`]: the administrator requested an update that no cluster-version operator
//!   has read yet (`metadata.generation` newer than `status.observedGeneration`; upstream's CVO
//!   writes the generation it synced in `pkg/cvo/status.go`): no CVO runs, or none leads.
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
        && (i.summary.starts_with("requested update to ")
            || i.summary.starts_with("waiting on ")
            || i.summary.starts_with("waiting for release "))
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
    if requested_unobserved(cv).is_some() {
        return None; // The condition is about an earlier request.
    }
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

/// The target of `spec.desiredUpdate` (its version, else its image) with the ClusterVersion's
/// generation and the status's observed one, when the request names a release other than
/// `status.desired` (by image when it has one, else by version) and no cluster-version
/// operator has observed that generation (`status.observedGeneration` set and older).
pub fn requested_unobserved(cv: &ClusterVersion) -> Option<(String, i64, i64)> {
    let du = cv.spec.desired_update.as_ref()?;
    let version = du.version.as_deref().unwrap_or("");
    let image = du.image.as_deref().unwrap_or("");
    let desired = &cv.status.desired;
    let differs = if image.is_empty() {
        !version.is_empty() && version != desired.version
    } else {
        image != desired.image
    };
    let generation = cv.metadata.generation?;
    let observed = cv.status.observed_generation;
    if !differs || observed <= 0 || generation <= observed {
        return None;
    }
    let target = if version.is_empty() { image } else { version };
    Some((target.to_owned(), generation, observed))
}

/// The requested update no cluster-version operator has picked up ([`requested_unobserved`]):
/// `requested update to X not picked up by a cluster-version operator` (level Warning, impact
/// Update Stalled, no start time: the ClusterVersion does not say when it was requested).
pub fn not_picked_up(cv: &ClusterVersion) -> Option<Insight> {
    let (target, generation, observed) = requested_unobserved(cv)?;
    Some(Insight {
        started_at: None,
        level: Level::Warning,
        impact: Impact::UpdateStalled,
        summary: format!("requested update to {target} not picked up by a cluster-version operator"),
        description: format!(
            "spec.desiredUpdate asks for {target}, but no cluster-version operator has read the \
             ClusterVersion since: it is at generation {generation}, its status at {observed}. \
             Check that a cluster-version operator runs and holds the Lease \
             openshift-cluster-version/version (its logs say why it does not sync)."
        ),
        reference: REF_HISTORY.to_owned(),
        resources: vec![Resource {
            kind: CV_KIND.to_owned(),
            name: cv.metadata.name.clone().unwrap_or_default(),
        }],
        ..Default::default()
    })
}

/// An update whose target version is not known yet: `history[0]` is Partial with no version
/// (requested by image; the release has not been loaded) while Progressing is True. oc prints
/// a blank target and `Update is proceeding well` with an estimate; cvo names the image:
/// `waiting for release <image> to be loaded: its version is not known yet` (level Info and
/// impact None for the first [`WAIT_THRESHOLD`], then Warning and Update Stalled; since the
/// entry's start).
pub fn target_unknown(cv: &ClusterVersion, now: DateTime<Utc>) -> Option<Insight> {
    cv.condition("Progressing").filter(|p| p.is_true())?;
    let h0 = cv.status.history.first()?;
    if h0.state != crate::openshift::UpdateState::Partial || !h0.version.is_empty() {
        return None;
    }
    let image = if h0.image.is_empty() {
        cv.status.desired.image.as_str()
    } else {
        h0.image.as_str()
    };
    let long = h0.started_time.is_some_and(|t| between(now, t) >= WAIT_THRESHOLD);
    let (level, impact) = if long {
        (Level::Warning, Impact::UpdateStalled)
    } else {
        (Level::Info, Impact::None)
    };
    let accepted = cv
        .condition(RELEASE_ACCEPTED)
        .map(|c| {
            let m = one_line(c.message());
            format!(" ReleaseAccepted={} {}: {m}", c.status.as_str(), c.reason())
                .trim_end()
                .to_owned()
        })
        .unwrap_or_default();
    Some(Insight {
        started_at: h0.started_time,
        level,
        impact,
        summary: format!("waiting for release {image} to be loaded: its version is not known yet"),
        description: format!(
            "The update was requested by image and the cluster-version operator has not loaded \
             the release yet (retrieving, verifying), so no operator can report its version and \
             no time estimate can be made.{accepted}"
        ),
        reference: REF_HISTORY.to_owned(),
        resources: vec![Resource {
            kind: CV_KIND.to_owned(),
            name: cv.metadata.name.clone().unwrap_or_default(),
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

/// An operator the cluster-version operator waits on although it reports the target for
/// itself ([`operand_waits`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandWait {
    /// ClusterOperator name.
    pub name: String,
    /// When the wait started: the operator's latest condition change, but never before the
    /// update started (`history[0].startedTime`), so an operator silent since long before the
    /// update is not said to have been waited on for weeks; else the Progressing condition's
    /// change.
    pub since: Option<DateTime<Utc>>,
    /// What it should report: `<operand> <target>` per operand still at the previous
    /// release, or `its operand versions` when none is.
    pub operands: Vec<String>,
    /// `Available` is not `True` (counted unavailable in the operator health).
    pub unavailable: bool,
    /// `Available` but `Degraded=True` (counted degraded in the operator health).
    pub degraded: bool,
}

/// The operators the ClusterVersion's Progressing=True message waits on (`waiting on ...`)
/// whose `operator` version already is the target (`status.desired.version`) and that are not
/// Progressing (else oc lists them as updating), whatever the wait's length.
pub fn operand_waits(cv: &ClusterVersion, operators: &[ClusterOperator]) -> Vec<OperandWait> {
    let Some(p) = cv.condition("Progressing").filter(|p| p.is_true()) else {
        return Vec::new();
    };
    let target = cv.status.desired.version.as_str();
    if target.is_empty() {
        return Vec::new();
    }
    let previous = cv.current_version().filter(|v| *v != target);
    let started = cv.status.history.first().and_then(|h| h.started_time);
    let mut out = Vec::new();
    for name in waiting_on(p.message()) {
        let Some(co) = operators.iter().find(|c| c.name() == name) else {
            continue;
        };
        if co.operator_version() != Some(target) || co.condition("Progressing").is_some_and(|c| c.is_true()) {
            continue; // oc already lists it as updating.
        }
        let last_change = co
            .status
            .conditions
            .iter()
            .filter_map(|c| c.last_transition_time)
            .max();
        let since = match (last_change, started) {
            (Some(c), Some(s)) => Some(c.max(s)),
            (c, s) => c.or(s).or(p.last_transition_time),
        };
        let stale: Vec<String> = co
            .status
            .versions
            .iter()
            .filter(|v| v.name != "operator" && previous.is_some_and(|p| v.version == p))
            .map(|v| format!("{} {target}", v.name))
            .collect();
        let unavailable = !co.condition("Available").is_some_and(|c| c.is_true());
        let degraded = !unavailable && co.condition("Degraded").is_some_and(|c| c.is_true());
        out.push(OperandWait {
            name,
            since,
            unavailable,
            degraded,
            operands: if stale.is_empty() {
                vec!["its operand versions".to_owned()]
            } else {
                stale
            },
        });
    }
    out
}

/// One insight per operand the CVO waits for: `waiting on <operator> to report <operand>
/// <version> for <duration>` (level Warning, impact Update Stalled), for the
/// [`operand_waits`] at least [`WAIT_THRESHOLD`] old at `now` (a rollout the operator has
/// just finished reporting may take a moment to show in its operand versions; real clusters
/// pass through this for seconds).
pub fn waiting_on_operands(
    cv: &ClusterVersion,
    operators: &[ClusterOperator],
    now: DateTime<Utc>,
) -> Vec<Insight> {
    let progressing = cv
        .condition("Progressing")
        .map(|p| one_line(p.message()))
        .unwrap_or_default();
    let target = cv.status.desired.version.as_str();
    let mut out = Vec::new();
    for w in operand_waits(cv, operators) {
        if w.since.is_some_and(|t| between(now, t) < WAIT_THRESHOLD) {
            continue;
        }
        let waited = waited_text(w.since, now);
        let name = &w.name;
        for what in &w.operands {
            out.push(Insight {
                started_at: w.since,
                level: Level::Warning,
                impact: Impact::UpdateStalled,
                summary: format!("waiting on {name} to report {what} for {waited}"),
                description: format!(
                    "Cluster operator {name} reports version {target} for itself, so oc counts it \
                     updated, but the cluster-version operator waits until every version the \
                     release's manifest lists is reported ({progressing}). Check the operator's \
                     operands and logs."
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

/// `now − since` truncated to the second as oc prints durations (`0s` rather than `now`).
fn waited_text(since: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    since.map_or_else(
        || "an unknown time".to_owned(),
        |t| match short(trunc(between(now, t), SECOND)).as_str() {
            "now" => "0s".to_owned(),
            d => d.to_owned(),
        },
    )
}

/// Keeps the control plane in progress while the cluster-version operator waits on operators
/// that oc counts updated (`waits`, from [`operand_waits`]) and oc would call the control plane
/// Completed: each is counted as updating
/// instead, with its wait's start as SINCE, reason `OperandVersions` and what it should report
/// as the message; the assessment is Stalled once a wait reaches [`WAIT_THRESHOLD`], else
/// Progressing (never Completed); no estimate is shown (the wait is not one oc's curve knows).
pub fn keep_in_progress(cp: &mut super::ControlPlane, waits: &[OperandWait], now: DateTime<Utc>) {
    // Only where oc would print "successfully completed": otherwise oc's text already says the
    // update is in progress, and stays as oc prints it.
    if cp.assessment != super::ControlPlaneAssessment::Completed {
        return;
    }
    let mut stalled = false;
    let mut changed = false;
    for w in waits {
        if cp.updating_operators.iter().any(|o| o.name == w.name) {
            continue;
        }
        if cp.updated_names.contains(&w.name) {
            cp.updated_names.retain(|n| *n != w.name);
            cp.operators_updated = cp.operators_updated.saturating_sub(1);
        } else {
            // Not one oc counts (no release annotation): counted now, as the CVO waits on it,
            // in the operator health too.
            cp.operators_total += 1;
            let h = &mut cp.operator_health;
            h.total += 1;
            if w.unavailable {
                h.unavailable += 1;
            } else if w.degraded {
                h.degraded += 1;
            } else {
                h.healthy += 1;
            }
        }
        changed = true;
        let age = w.since.map_or(i64::MAX, |t| between(now, t));
        stalled |= age >= WAIT_THRESHOLD;
        cp.updating_operators.push(super::UpdatingOperator {
            name: w.name.clone(),
            since: w.since,
            since_duration: super::DurationValue::new(age),
            reason: "OperandVersions".to_owned(),
            message: format!("waiting to report {}", w.operands.join(", ")),
        });
    }
    if !changed {
        return;
    }
    cp.completion_percent = if cp.operators_total == 0 {
        100.0
    } else {
        cp.operators_updated as f64 / cp.operators_total as f64 * 100.0
    };
    cp.assessment = if stalled {
        super::ControlPlaneAssessment::Stalled
    } else {
        super::ControlPlaneAssessment::Progressing
    };
    cp.estimate = super::Estimate::default();
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

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn yaml<T: serde::de::DeserializeOwned>(y: &str) -> T {
        serde_norway::from_str(y).unwrap_or_else(|e| panic!("yaml: {e}"))
    }

    /// 4.16.3 → 4.16.4 since 09:00, the CVO waiting on kube-apiserver.
    const UPDATING: &str = r#"
metadata: {name: version, generation: 2}
spec: {desiredUpdate: {version: 4.16.4}}
status:
  observedGeneration: 2
  desired: {version: 4.16.4, image: "q/r@sha256:44"}
  history:
  - {state: Partial, version: 4.16.4, image: "q/r@sha256:44", startedTime: "2024-06-02T09:00:00Z"}
  - {state: Completed, version: 4.16.3, image: "q/r@sha256:33", startedTime: "2024-06-01T10:00:00Z", completionTime: "2024-06-01T11:00:00Z"}
  conditions:
  - {type: Progressing, status: "True", lastTransitionTime: "2024-05-01T00:00:00Z", message: "Working towards 4.16.4: 904 of 905 done (99% complete), waiting on kube-apiserver"}
"#;

    /// kube-apiserver at 4.16.4 for itself, raw-internal still 4.16.3, silent since May.
    const KAS: &str = r#"
metadata: {name: kube-apiserver}
status:
  versions: [{name: operator, version: 4.16.4}, {name: raw-internal, version: 4.16.3}]
  conditions:
  - {type: Available, status: "True", lastTransitionTime: "2024-05-01T00:00:00Z"}
  - {type: Progressing, status: "False", lastTransitionTime: "2024-05-01T00:00:00Z"}
"#;

    #[test]
    fn a_wait_is_measured_from_the_updates_start_not_an_old_condition() {
        let cv: ClusterVersion = yaml(UPDATING);
        let mut kas: ClusterOperator = yaml(KAS);
        let waits = operand_waits(&cv, std::slice::from_ref(&kas));
        assert_eq!(
            waits,
            [OperandWait {
                name: "kube-apiserver".into(),
                since: Some(t("2024-06-02T09:00:00Z")),
                operands: vec!["raw-internal 4.16.4".into()],
                unavailable: false,
                degraded: false,
            }]
        );
        let got = waiting_on_operands(&cv, std::slice::from_ref(&kas), t("2024-06-02T09:45:00Z"));
        assert_eq!(
            got.iter().map(|i| i.summary.as_str()).collect::<Vec<_>>(),
            ["waiting on kube-apiserver to report raw-internal 4.16.4 for 45m"]
        );
        // A condition change after the start is when the wait started.
        kas.status.conditions[1].last_transition_time = Some(t("2024-06-02T09:30:00Z"));
        let waits = operand_waits(&cv, std::slice::from_ref(&kas));
        assert_eq!(waits[0].since, Some(t("2024-06-02T09:30:00Z")));
        assert!(waiting_on_operands(&cv, std::slice::from_ref(&kas), t("2024-06-02T09:35:00Z")).is_empty());
    }

    #[test]
    fn the_control_plane_stays_in_progress_while_the_cvo_waits() {
        let cv: ClusterVersion = yaml(UPDATING);
        let kas: ClusterOperator = yaml(KAS);
        let waits = operand_waits(&cv, std::slice::from_ref(&kas));
        let completed = || super::super::ControlPlane {
            assessment: super::super::ControlPlaneAssessment::Completed,
            operators_total: 2,
            operators_updated: 2,
            updated_names: vec!["dns".into(), "kube-apiserver".into()],
            completion_percent: 100.0,
            ..Default::default()
        };
        let mut cp = completed();
        keep_in_progress(&mut cp, &waits, t("2024-06-02T09:05:00Z"));
        assert_eq!(cp.assessment, super::super::ControlPlaneAssessment::Progressing);
        assert_eq!((cp.operators_total, cp.operators_updated), (2, 1));
        assert!((cp.completion_percent - 50.0).abs() < 1e-9);
        assert_eq!(cp.updating_operators.len(), 1);
        let u = &cp.updating_operators[0];
        assert_eq!(
            (u.name.as_str(), u.since, u.reason.as_str(), u.message.as_str()),
            (
                "kube-apiserver",
                Some(t("2024-06-02T09:00:00Z")),
                "OperandVersions",
                "waiting to report raw-internal 4.16.4"
            )
        );
        let mut cp = completed();
        keep_in_progress(&mut cp, &waits, t("2024-06-02T09:10:00Z"));
        assert_eq!(cp.assessment, super::super::ControlPlaneAssessment::Stalled);
        // Not Completed in oc's eyes: left as oc says it.
        let mut cp = completed();
        cp.assessment = super::super::ControlPlaneAssessment::Progressing;
        keep_in_progress(&mut cp, &waits, t("2024-06-02T09:10:00Z"));
        assert!(cp.updating_operators.is_empty());
    }

    #[test]
    fn an_unloaded_target_is_info_then_stalled() {
        let mut cv: ClusterVersion = yaml(UPDATING);
        assert!(
            target_unknown(&cv, t("2024-06-02T09:05:00Z")).is_none(),
            "version known"
        );
        cv.status.history[0].version.clear();
        cv.status.desired.version.clear();
        let i = target_unknown(&cv, t("2024-06-02T09:05:00Z")).unwrap_or_else(|| panic!("insight"));
        assert_eq!(
            (i.level, i.impact, i.summary.as_str(), i.started_at),
            (
                Level::Info,
                Impact::None,
                "waiting for release q/r@sha256:44 to be loaded: its version is not known yet",
                Some(t("2024-06-02T09:00:00Z"))
            )
        );
        let i = target_unknown(&cv, t("2024-06-02T09:10:00Z")).unwrap_or_else(|| panic!("insight"));
        assert_eq!((i.level, i.impact), (Level::Warning, Impact::UpdateStalled));
        assert!(is_blocked(&i));
    }

    #[test]
    fn a_request_is_unobserved_only_when_the_generations_say_so() {
        let mut cv: ClusterVersion = yaml(UPDATING);
        assert_eq!(requested_unobserved(&cv), None, "observed");
        cv.metadata.generation = Some(3);
        assert_eq!(
            requested_unobserved(&cv),
            None,
            "the request is status.desired already"
        );
        cv.spec.desired_update = Some(crate::openshift::config_v1::Update {
            image: Some("q/r@sha256:55".into()),
            ..Default::default()
        });
        assert_eq!(requested_unobserved(&cv), Some(("q/r@sha256:55".into(), 3, 2)));
        let i = not_picked_up(&cv).unwrap_or_else(|| panic!("insight"));
        assert_eq!(
            (i.level, i.impact, i.summary.as_str()),
            (
                Level::Warning,
                Impact::UpdateStalled,
                "requested update to q/r@sha256:55 not picked up by a cluster-version operator"
            )
        );
        assert!(is_blocked(&i) || i.summary.starts_with("requested update to "));
        cv.status.observed_generation = 0;
        assert_eq!(requested_unobserved(&cv), None, "no CVO ever wrote it: not said");
    }
}
