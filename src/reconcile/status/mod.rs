//! The ClusterVersion status algorithm as pure functions (upstream
//! `pkg/cvo/status.go updateClusterVersionStatus`, `mergeOperatorHistory`,
//! `syncFailingStatus`, `pkg/cvo/status_history.go prune`).
//!
//! [`compute_status`] takes the existing status, the sync worker's report and the other inputs,
//! and returns the new status; the sync worker writes it through the `/status` subresource when
//! it differs from the existing one ([`status_changed`]).

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};

use crate::reconcile::errors::{
    SyncError, UpdateEffect, filter_error_for_failing_condition, summary_for_reason,
};

pub mod upgradeable;
pub mod validation;
pub mod worker_status;

use self::{
    upgradeable::{Risk, upgradeable_condition},
    validation::{FieldError, invalid_message},
    worker_status::{LoadPayloadStatus, SyncWorkerStatus, equal_digest},
};
use crate::openshift::{
    ClusterVersionStatus, Condition, ConditionStatus, Release, UpdateHistory, UpdateState,
};

/// Condition type `Available`.
pub const AVAILABLE: &str = "Available";
/// Condition type `Progressing`.
pub const PROGRESSING: &str = "Progressing";
/// Condition type `Failing` (the CV has no `Degraded`).
pub const FAILING: &str = "Failing";
/// Condition type `RetrievedUpdates`.
pub(crate) const RETRIEVED_UPDATES: &str = "RetrievedUpdates";
/// Condition type `Upgradeable`.
pub(crate) const UPGRADEABLE: &str = "Upgradeable";
/// Condition type `ReleaseAccepted`.
pub(crate) const RELEASE_ACCEPTED: &str = "ReleaseAccepted";
/// Condition type `ImplicitlyEnabledCapabilities`.
pub(crate) const IMPLICITLY_ENABLED_CAPABILITIES: &str = "ImplicitlyEnabledCapabilities";
/// Condition type `Invalid`.
pub(crate) const INVALID: &str = "Invalid";
/// Maximum `status.history` length (`MaxHistory`).
pub(crate) const MAX_HISTORY: usize = 100;

/// Condition types HEAD deletes on every sync: the stray `ImplicitlyEnabled` and the legacy
/// Upgradeable sub-conditions (upstream `pkg/cvo/status.go`).
pub(crate) const LEGACY_CONDITIONS: &[&str] = &[
    "ImplicitlyEnabled",
    "UpgradeableAdminAckRequired",
    "UpgradeableDeletesInProgress",
    "UpgradeableClusterOperators",
    "UpgradeableClusterVersionOverrides",
    "UpgradeableUpgradeInProgress",
];

const SLOW_PREFIX: &str = "Slow::";

/// Sets a condition the way `resourcemerge.SetOperatorStatusCondition` does: appended with
/// `lastTransitionTime = now` when absent; otherwise reason and message replaced and
/// `lastTransitionTime` moved only when the status changes. Empty reason/message are stored as
/// absent (Go's `omitempty`).
pub fn set_condition(
    conds: &mut Vec<Condition>,
    type_: &str,
    status: ConditionStatus,
    reason: &str,
    message: &str,
    now: DateTime<Utc>,
) {
    let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
    if let Some(c) = conds.iter_mut().find(|c| c.type_ == type_) {
        if c.status != status {
            c.status = status;
            c.last_transition_time = Some(now);
        }
        c.reason = opt(reason);
        c.message = opt(message);
    } else {
        conds.push(Condition {
            type_: type_.to_string(),
            status,
            last_transition_time: Some(now),
            reason: opt(reason),
            message: opt(message),
            observed_generation: None,
        });
    }
}

/// Removes every condition of `type_`.
pub(crate) fn remove_condition(conds: &mut Vec<Condition>, type_: &str) {
    conds.retain(|c| c.type_ != type_);
}

/// `mergeEqualVersions` (upstream `pkg/cvo/status.go`, test `Test_mergeEqualVersions`): whether
/// history entry `last` is the same release as `desired`, filling in its missing version or image
/// from `desired` when it is.
pub fn merge_equal_versions(last: &mut UpdateHistory, desired: &Release) -> bool {
    if !desired.image.is_empty() && desired.image == last.image {
        if desired.version.is_empty() {
            return true;
        }
        if last.version.is_empty() || desired.version == last.version {
            last.version = desired.version.clone();
            return true;
        }
    }
    if !desired.version.is_empty()
        && desired.version == last.version
        && (last.image.is_empty() || desired.image == last.image)
    {
        last.image = desired.image.clone();
        return true;
    }
    false
}

/// Inputs of the history merge (upstream `pkg/cvo/status.go` `mergeOperatorHistory`).
#[derive(Clone, Debug)]
pub struct HistoryMerge<'a> {
    /// The release being applied.
    pub desired: &'a Release,
    /// Its signature was verified (sticky on history[0]).
    pub verified: bool,
    /// The worker completed ≥1 full pass.
    pub completed: bool,
    /// Accepted-risks text for the entry.
    pub accepted_risks: &'a str,
    /// The payload is local (accepted risks of a merged entry are then left alone).
    pub local: bool,
    /// Now.
    pub now: DateTime<Utc>,
}

/// Merges the desired release into `status.history` and sets `status.desired`
/// (`mergeOperatorHistory`); with an empty image nothing but the history list itself is touched.
/// Prunes to [`MAX_HISTORY`].
pub fn merge_operator_history(status: &mut ClusterVersionStatus, m: &HistoryMerge<'_>) {
    let desired = m.desired;
    if desired.image.is_empty() {
        return;
    }
    let risks = (!m.accepted_risks.is_empty()).then(|| m.accepted_risks.to_string());
    let now = m.now;
    if status.history.is_empty() {
        status.history.push(UpdateHistory {
            state: UpdateState::Partial,
            started_time: Some(now),
            completion_time: None,
            version: desired.version.clone(),
            image: desired.image.clone(),
            verified: false,
            accepted_risks: risks.clone(),
        });
    }
    let last = &mut status.history[0];
    if merge_equal_versions(last, desired) {
        if m.completed {
            last.state = UpdateState::Completed;
            if last.completion_time.is_none() {
                last.completion_time = Some(now);
            }
        }
        if !m.local {
            last.accepted_risks = risks;
        }
    } else {
        if last.completion_time.is_none() {
            last.completion_time = Some(now);
        }
        let entry = UpdateHistory {
            state: if m.completed {
                UpdateState::Completed
            } else {
                UpdateState::Partial
            },
            started_time: Some(now),
            completion_time: m.completed.then_some(now),
            version: desired.version.clone(),
            image: desired.image.clone(),
            verified: false,
            accepted_risks: risks,
        };
        status.history.insert(0, entry);
    }
    if m.verified {
        status.history[0].verified = true;
    }
    prune_history(&mut status.history, MAX_HISTORY);
    status.desired = desired.clone();
}

fn version_field(v: &str, i: usize) -> &str {
    v.split('.').nth(i).unwrap_or("")
}

/// Removes the least informative entry when `history` is longer than `max` (upstream
/// `pkg/cvo/status_history.go prune`, test `Test_prune`). Entries are newest first; exactly one is
/// removed.
pub fn prune_history(history: &mut Vec<UpdateHistory>, max: usize) {
    if history.len() <= max {
        return;
    }
    let completed = |i: usize| history[i].state == UpdateState::Completed;
    let minor = |i: usize| version_field(&history[i].version, 1);
    let micro = |i: usize| version_field(&history[i].version, 2);
    let newer_completed = |i: usize| (0..i).rev().find(|&j| completed(j));
    let older_completed = |i: usize| (i + 1..history.len()).find(|&j| completed(j));
    let most_recent_completed = (0..history.len()).find(|&j| completed(j));

    let mut lowest: Option<(usize, f64)> = None;
    for i in 0..history.len() {
        let weight: f64 = if i == max || i <= 4 || Some(i) == most_recent_completed {
            1000.0
        } else if completed(i) {
            let first = newer_completed(i).is_none_or(|j| minor(j) != minor(i));
            let last = older_completed(i).is_none_or(|j| minor(j) != minor(i));
            if first || last { 30.0 } else { 0.0 }
        } else {
            match (newer_completed(i), older_completed(i)) {
                (Some(n), Some(o)) if minor(n) != minor(o) => 20.0,
                (Some(n), Some(o)) if micro(n) != micro(o) => -20.0,
                _ => 0.0,
            }
        };
        let rank = weight - 1.01 * i as f64;
        if lowest.is_none_or(|(_, r)| rank < r) {
            lowest = Some((i, rank));
        }
    }
    if let Some((i, _)) = lowest {
        history.remove(i);
    }
}

/// The version text used in conditions: version, else image, else `<unknown>`.
pub(crate) fn version_string(r: &Release) -> String {
    if !r.version.is_empty() {
        r.version.clone()
    } else if !r.image.is_empty() {
        r.image.clone()
    } else {
        "<unknown>".into()
    }
}

/// Fills missing version, URL and channels of `release` from `candidates` (available and
/// conditional updates, the current release from the update service), matching by digest
/// first and then by version (`mergeReleaseMetadata`).
pub(crate) fn merge_release_metadata(release: &Release, candidates: &[Release]) -> Release {
    let mut merged = release.clone();
    if !(release.version.is_empty() || release.url.is_none() || release.channels.is_empty()) {
        return merged;
    }
    let found = candidates
        .iter()
        .find(|c| !release.image.is_empty() && equal_digest(&c.image, &release.image))
        .or_else(|| {
            candidates
                .iter()
                .find(|c| !release.version.is_empty() && c.version == release.version)
        });
    if let Some(c) = found {
        if merged.version.is_empty() {
            merged.version = c.version.clone();
        }
        if merged.url.is_none() {
            merged.url = c.url.clone();
        }
        if merged.channels.is_empty() {
            merged.channels = c.channels.clone();
        }
        if merged.architecture.is_none() {
            merged.architecture = c.architecture.clone();
        }
    }
    merged
}

/// Everything besides the existing status and the worker report that the status depends on.
#[derive(Clone, Debug)]
pub struct StatusInputs<'a> {
    /// The clock.
    pub now: DateTime<Utc>,
    /// The operator's own release (`--release-image` and its payload): fills gaps in the
    /// worker's actual release when the images are equal.
    pub operator_release: &'a Release,
    /// Releases known from the update service, to fill desired metadata.
    pub release_metadata: &'a [Release],
    /// Feature gate ImageStreamImportMode: keep `status.desired.architecture`.
    pub status_release_architecture: bool,
    /// Spec validation errors ([`crate::reconcile::status::validation::validate_cluster_version`]).
    pub validation_errors: &'a [FieldError],
    /// Upgradeable risks that apply, or `None` to leave the Upgradeable condition untouched.
    pub upgradeable_risks: Option<&'a [Risk]>,
    /// Error from evaluating the Upgradeable risk sources, if any.
    pub upgradeable_error: Option<&'a str>,
    /// When each ClusterOperator's update started (for the 30/40/90-minute rules).
    pub co_update_start_times: &'a HashMap<String, DateTime<Utc>>,
}

/// The Progressing interpretation of a failure (upstream `updateClusterVersionStatus`): `(reason,
/// message, skip_failure)`; reasons of slow operators carry the `Slow::` prefix.
fn convert_error_to_progressing(
    now: DateTime<Utc>,
    failure: Option<&SyncError>,
    starts: &HashMap<String, DateTime<Utc>>,
) -> (String, String, bool) {
    let Some(u) = failure.and_then(SyncError::as_update) else {
        return (String::new(), String::new(), false);
    };
    let names: Vec<String> = if u.names.is_empty() {
        vec![u.name.clone()]
    } else {
        u.names.clone()
    };
    match u.effect {
        UpdateEffect::Report => (u.reason.clone(), u.message.clone(), false),
        UpdateEffect::Fail | UpdateEffect::Unset => (String::new(), String::new(), false),
        UpdateEffect::None => {
            let mut exceeded = Vec::new();
            let mut machine_config = false;
            for name in &names {
                let mcfg = name == "machine-config";
                let limit = Duration::minutes(if mcfg { 90 } else { 30 });
                if starts.get(name).is_some_and(|t| *t < now - limit) {
                    if mcfg {
                        machine_config = true;
                    } else {
                        exceeded.push(name.as_str());
                    }
                }
            }
            let slow = format!("{SLOW_PREFIX}{}", u.reason);
            match (exceeded.is_empty(), machine_config) {
                (false, false) => (
                    slow,
                    format!(
                        "waiting on {} over 30 minutes which is longer than expected",
                        exceeded.join(", ")
                    ),
                    true,
                ),
                (false, true) => (
                    slow,
                    format!(
                        "waiting on {} over 30 minutes and machine-config over 90 minutes which is longer than expected",
                        exceeded.join(", ")
                    ),
                    true,
                ),
                (true, true) => (
                    slow,
                    "waiting on machine-config over 90 minutes which is longer than expected".into(),
                    true,
                ),
                (true, false) => (u.reason.clone(), format!("waiting on {}", names.join(", ")), true),
            }
        }
        UpdateEffect::FailAfterInterval => {
            let threshold = now - Duration::minutes(40);
            let exceeded: Vec<&str> = names
                .iter()
                .filter(|n| starts.get(*n).is_none_or(|t| *t < threshold))
                .map(String::as_str)
                .collect();
            if exceeded.is_empty() {
                (
                    u.reason.clone(),
                    format!("waiting up to 40 minutes on {}", u.name),
                    true,
                )
            } else {
                (
                    u.reason.clone(),
                    format!(
                        "wait has exceeded 40 minutes for these operators: {}",
                        exceeded.join(", ")
                    ),
                    false,
                )
            }
        }
    }
}

/// Computes the new ClusterVersion status from the existing one and the sync worker's report
/// (upstream `pkg/cvo/status.go` `updateClusterVersionStatus`): observedGeneration, versionHash
/// (only when the worker has one), desired + history (`mergeOperatorHistory`, `prune`),
/// capabilities, and the conditions Upgradeable, Invalid, ImplicitlyEnabledCapabilities,
/// ReleaseAccepted, Available, Failing, Progressing and RetrievedUpdates (created in that order
/// when absent). Legacy condition types are removed. Pure: the same inputs give the same status.
pub fn compute_status(
    existing: &ClusterVersionStatus,
    worker: &SyncWorkerStatus,
    inputs: &StatusInputs<'_>,
) -> ClusterVersionStatus {
    let now = inputs.now;
    let mut st = existing.clone();
    for t in LEGACY_CONDITIONS {
        remove_condition(&mut st.conditions, t);
    }
    if let Some(risks) = inputs.upgradeable_risks {
        match upgradeable_condition(risks, inputs.upgradeable_error) {
            Some((status, reason, message)) => {
                set_condition(&mut st.conditions, UPGRADEABLE, status, &reason, &message, now);
            }
            None => remove_condition(&mut st.conditions, UPGRADEABLE),
        }
    }

    st.observed_generation = worker.generation;
    if !worker.version_hash.is_empty() {
        st.version_hash = worker.version_hash.clone();
    }

    let mut actual = worker.actual.clone();
    let own = inputs.operator_release;
    if actual.image == own.image {
        if actual.version.is_empty() {
            actual.version = own.version.clone();
        }
        if actual.url.is_none() {
            actual.url = own.url.clone();
        }
        if actual.architecture.is_none() {
            actual.architecture = own.architecture.clone();
        }
        if actual.channels.is_empty() {
            actual.channels = own.channels.clone();
        }
    }
    let version = version_string(&worker.actual);
    let mut desired = merge_release_metadata(&actual, inputs.release_metadata);
    if !inputs.status_release_architecture {
        desired.architecture = None;
    }
    let lps: &LoadPayloadStatus = &worker.load_payload_status;
    let risks_msg = if desired.image == lps.release.image {
        lps.accepted_risks.as_str()
    } else {
        ""
    };
    merge_operator_history(
        &mut st,
        &HistoryMerge {
            desired: &desired,
            verified: worker.verified,
            completed: worker.completed > 0,
            accepted_risks: risks_msg,
            local: lps.local,
            now,
        },
    );
    st.capabilities = worker.capabilities.status.clone();

    let invalid = !inputs.validation_errors.is_empty();
    match invalid_message(inputs.validation_errors) {
        Some(msg) => set_condition(
            &mut st.conditions,
            INVALID,
            ConditionStatus::True,
            "InvalidClusterVersion",
            &msg,
            now,
        ),
        None => remove_condition(&mut st.conditions, INVALID),
    }

    let mut implicit = worker.capabilities.implicitly_enabled.clone();
    implicit.sort();
    if implicit.is_empty() {
        set_condition(
            &mut st.conditions,
            IMPLICITLY_ENABLED_CAPABILITIES,
            ConditionStatus::False,
            "AsExpected",
            "Capabilities match configured spec",
            now,
        );
    } else {
        set_condition(
            &mut st.conditions,
            IMPLICITLY_ENABLED_CAPABILITIES,
            ConditionStatus::True,
            "CapabilitiesImplicitlyEnabled",
            &format!(
                "The following capabilities could not be disabled: {}",
                implicit.join(", ")
            ),
            now,
        );
    }

    if !lps.step.is_empty() {
        let status = if lps.step == "PayloadLoaded" {
            ConditionStatus::True
        } else if lps.failure.is_some() {
            ConditionStatus::False
        } else {
            ConditionStatus::Unknown
        };
        set_condition(
            &mut st.conditions,
            RELEASE_ACCEPTED,
            status,
            &lps.step,
            &lps.message,
            now,
        );
    }

    if worker.completed > 0 {
        set_condition(
            &mut st.conditions,
            AVAILABLE,
            ConditionStatus::True,
            "",
            &format!("Done applying {version}"),
            now,
        );
    }
    if !st.conditions.iter().any(|c| c.type_ == AVAILABLE) {
        set_condition(&mut st.conditions, AVAILABLE, ConditionStatus::False, "", "", now);
    }

    // Step A: progressing interpretation, and the failure filtered for Failing.
    let original = worker.failure.as_ref();
    let mut failure: Option<SyncError> = original.cloned();
    let (mut p_reason, mut p_msg, mut skip) = (String::new(), String::new(), false);
    if !worker.reconciling && !st.history.is_empty() {
        (p_reason, p_msg, skip) = convert_error_to_progressing(now, original, inputs.co_update_start_times);
        failure = filter_error_for_failing_condition(original, UpdateEffect::None);
    }

    // Step B: Failing.
    let (mut f_status, mut f_reason, mut f_msg) = (ConditionStatus::False, String::new(), String::new());
    if let Some(f) = failure.as_ref().filter(|_| !skip) {
        f_status = ConditionStatus::True;
        f_reason = f.reason().to_string();
        f_msg = f.to_string();
    }
    if failure.is_some() && p_reason.starts_with(SLOW_PREFIX) {
        f_status = ConditionStatus::Unknown;
        f_reason = "SlowClusterOperator".into();
        f_msg = p_msg.clone();
    }
    if let Some(stripped) = p_reason.strip_prefix(SLOW_PREFIX) {
        p_reason = stripped.to_string();
    }
    set_condition(&mut st.conditions, FAILING, f_status, &f_reason, &f_msg, now);

    // Step C: Progressing.
    if let Some(err) = original.filter(|_| !skip) {
        let mut msg = p_msg.clone();
        let mut reason = String::new();
        if let Some(u) = err.as_update() {
            reason = u.reason.clone();
            if msg.is_empty() {
                msg = summary_for_reason(&reason, &u.name);
            }
        } else if msg.is_empty() {
            msg = "an error occurred".into();
        }
        if worker.reconciling {
            set_condition(
                &mut st.conditions,
                PROGRESSING,
                ConditionStatus::False,
                &reason,
                &format!("Error while reconciling {version}: {msg}"),
                now,
            );
        } else {
            set_condition(
                &mut st.conditions,
                PROGRESSING,
                ConditionStatus::True,
                &reason,
                &format!("Unable to apply {version}: {msg}"),
                now,
            );
        }
    } else {
        let mut reason = if invalid {
            "InvalidClusterVersion".to_string()
        } else {
            String::new()
        };
        if worker.reconciling {
            let message = if invalid {
                format!("Stopped at {version}: the cluster version is invalid")
            } else {
                format!("Cluster version is {version}")
            };
            set_condition(
                &mut st.conditions,
                PROGRESSING,
                ConditionStatus::False,
                &reason,
                &message,
                now,
            );
        } else {
            let fraction = worker.fraction();
            let pct = (fraction * 100.0).trunc();
            let message = if invalid {
                format!("Reconciling {version}: the cluster version is invalid")
            } else if fraction > 0.0 && skip {
                reason = p_reason.clone();
                format!(
                    "Working towards {version}: {} of {} done ({pct:.0}% complete), {p_msg}",
                    worker.done, worker.total
                )
            } else if fraction > 0.0 {
                format!(
                    "Working towards {version}: {} of {} done ({pct:.0}% complete)",
                    worker.done, worker.total
                )
            } else if skip {
                reason = p_reason.clone();
                format!("Working towards {version}: {p_msg}")
            } else {
                format!("Working towards {version}")
            };
            set_condition(
                &mut st.conditions,
                PROGRESSING,
                ConditionStatus::True,
                &reason,
                &message,
                now,
            );
        }
    }

    if !st.conditions.iter().any(|c| c.type_ == RETRIEVED_UPDATES) {
        set_condition(
            &mut st.conditions,
            RETRIEVED_UPDATES,
            ConditionStatus::False,
            "",
            "",
            now,
        );
    }
    st
}

/// The status written when the main sync keeps failing (`syncFailingStatus`, test
/// `TestOperator_syncFailingStatus`): Available False, Failing True with the error text and no
/// reason, Progressing keeps True/False (False when absent) with `Error ensuring the cluster
/// version is up to date: {err}`, and the operator's `current` release merged into history as not
/// completed.
pub fn failing_status(
    existing: &ClusterVersionStatus,
    current: &Release,
    err: &str,
    now: DateTime<Utc>,
) -> ClusterVersionStatus {
    let mut st = existing.clone();
    set_condition(&mut st.conditions, AVAILABLE, ConditionStatus::False, "", "", now);
    set_condition(&mut st.conditions, FAILING, ConditionStatus::True, "", err, now);
    let progressing = if st
        .conditions
        .iter()
        .any(|c| c.type_ == PROGRESSING && c.is_true())
    {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    };
    set_condition(
        &mut st.conditions,
        PROGRESSING,
        progressing,
        "",
        &format!("Error ensuring the cluster version is up to date: {err}"),
        now,
    );
    merge_operator_history(
        &mut st,
        &HistoryMerge {
            desired: current,
            verified: false,
            completed: false,
            accepted_risks: "",
            local: false,
            now,
        },
    );
    st
}

/// The status when the sync has no target image (upstream `pkg/cvo/cvo.go` `sync`, test
/// `TestCVO_StartupAndSync`): the worker report with the failure `NoDesiredImage` / `No configured
/// operator version, unable to update cluster`.
pub fn no_desired_image_failure() -> SyncError {
    crate::reconcile::errors::UpdateError::new(
        "NoDesiredImage",
        "No configured operator version, unable to update cluster",
    )
    .into()
}

/// Whether `new` differs from `old` in a way worth an `UpdateStatus` call: semantic equality
/// (`equality.Semantic.DeepEqual`), which for our types is structural equality.
pub fn status_changed(old: &ClusterVersionStatus, new: &ClusterVersionStatus) -> bool {
    old != new
}
