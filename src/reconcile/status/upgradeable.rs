//! The Upgradeable condition and the update preconditions (upstream
//! `pkg/risk/**`, `pkg/cvo/status.go setUpgradeableCondition`, `pkg/payload/precondition/**`;
//! tests in `pkg/cvo/cvo_test.go`, `precondition/**_test.go`). Pure functions over the
//! ClusterVersion and the target release.

use crate::openshift::{ClusterVersion, ConditionStatus, condition::find, precondition};
use crate::reconcile::errors::{UpdateEffect, UpdateError};

/// An Upgradeable risk: a reason-like name and a message (`matchingRules: [Always]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Risk {
    /// Risk name, e.g. `ClusterVersionOverrides`, `AdminAck-ack-4.20-foo`.
    pub name: String,
    /// Human-readable description.
    pub message: String,
    /// Link to more information, if any.
    pub url: String,
}

impl Risk {
    /// A risk with a name and message.
    pub fn new(name: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            message: message.into(),
            url: String::new(),
        }
    }
}

/// Whether `s` may be a condition reason: `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`.
pub(crate) fn is_reason_safe(s: &str) -> bool {
    let b = s.as_bytes();
    let Some((&first, rest)) = b.split_first() else {
        return false;
    };
    if !first.is_ascii_alphabetic() {
        return false;
    }
    if let Some(&last) = rest.last()
        && !(last.is_ascii_alphanumeric() || last == b'_')
    {
        return false;
    }
    rest.iter()
        .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b',' || c == b':')
}

/// The Upgradeable condition for the applicable `risks` (upstream `pkg/cvo/status.go`
/// `setUpgradeableCondition`): none and no error ⇒ `None`
/// (remove the condition); none with an evaluation error ⇒ Unknown `EvaluationFailed`; one ⇒
/// False with the risk name as reason (or `RiskNameNotCompatibleWithReasonProperty`) and its
/// message; several ⇒ False `MultipleReasons` `Cluster should not be upgraded between minor or
/// major versions for multiple reasons:\n* {m1}\n* {m2}`. Returns `(status, reason, message)`.
pub(crate) fn upgradeable_condition(
    risks: &[Risk],
    error: Option<&str>,
) -> Option<(ConditionStatus, String, String)> {
    match risks {
        [] => error.map(|e| {
            (
                ConditionStatus::Unknown,
                "EvaluationFailed".to_string(),
                e.to_string(),
            )
        }),
        [one] => {
            let reason = if is_reason_safe(&one.name) {
                one.name.clone()
            } else {
                "RiskNameNotCompatibleWithReasonProperty".into()
            };
            Some((ConditionStatus::False, reason, one.message.clone()))
        }
        many => {
            let mut msg = String::from(
                "Cluster should not be upgraded between minor or major versions for multiple reasons:",
            );
            for r in many {
                msg.push_str("\n* ");
                msg.push_str(&r.message);
            }
            Some((ConditionStatus::False, "MultipleReasons".into(), msg))
        }
    }
}

/// Risk `ClusterVersionUpdating` when the CV's Progressing is True.
pub(crate) fn cluster_version_updating_risk(cv: &ClusterVersion) -> Option<Risk> {
    cv.condition("Progressing").filter(|c| c.is_true()).map(|_| {
        Risk::new(
            "ClusterVersionUpdating",
            "An update is already in progress and the details are in the Progressing condition.",
        )
    })
}

/// Risk `ClusterVersionOverrides` when any `spec.overrides` entry is unmanaged.
pub(crate) fn overrides_risk(cv: &ClusterVersion) -> Option<Risk> {
    cv.spec.overrides.iter().any(|o| o.unmanaged).then(|| {
        Risk::new(
            "ClusterVersionOverrides",
            "Disabling ownership via cluster version overrides prevents updates between minor or major versions. Please remove overrides before requesting a minor or major version update.",
        )
    })
}

/// A failed precondition (`precondition.Error`): one type with the update request's checks.
pub use crate::openshift::precondition::PreconditionError;

/// The release being targeted by an update.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// Target version (from the loaded payload).
    pub version: String,
    /// Target image.
    pub image: String,
}

/// The release the cluster runs, as its ClusterVersion's status says: `status.desired` (the
/// release the CVO last accepted and applies), else the newest history entry; `None` before
/// any release was accepted (a first install, whose release is the operator's own).
///
/// Upstream's CVO is always its own release: the payload carries the CVO's Deployment, so once
/// an update is accepted the CVO that runs is the new release's, and clearing
/// `spec.desiredUpdate` keeps the cluster where it is. cvo is not part of the payload, so the
/// status stands in for "own": an operator started with an older `--release-image` never
/// rolls the cluster back to it (`--release-image` is the first install's default only).
pub fn current_release(cv: &crate::openshift::ClusterVersion) -> Option<Target> {
    let desired = &cv.status.desired;
    if !desired.image.is_empty() {
        return Some(Target {
            version: desired.version.clone(),
            image: desired.image.clone(),
        });
    }
    cv.status
        .history
        .iter()
        .find(|h| !h.image.is_empty())
        .map(|h| Target {
            version: h.version.clone(),
            image: h.image.clone(),
        })
}

fn perr(name: &str, reason: &str, message: String, non_blocking: bool) -> PreconditionError {
    PreconditionError {
        name: name.into(),
        reason: reason.into(),
        message,
        non_blocking,
    }
}

/// `ClusterVersionRecommendedUpdate` (always a warning; upstream test `TestRecommendedUpdate`):
/// whether the target is a recommended update of the current version.
pub fn check_recommended_update(cv: &ClusterVersion, target: &Target) -> Option<PreconditionError> {
    const N: &str = "ClusterVersionRecommendedUpdate";
    let c = &cv.status.desired.version;
    let t = &target.version;
    let warn = |reason: &str, message: String| Some(perr(N, reason, message, true));
    if cv
        .status
        .available_updates
        .iter()
        .flatten()
        .any(|r| r.version == *t)
    {
        return None;
    }
    if let Some(cu) = cv
        .status
        .conditional_updates
        .iter()
        .find(|u| u.release.version == *t)
    {
        return match find(&cu.conditions, "Recommended") {
            Some(rc) if rc.is_true() => None,
            Some(rc) if rc.is_false() => warn(
                rc.reason(),
                format!("Update from {c} to {t} is not recommended:\n\n{}", rc.message()),
            ),
            Some(rc) => warn(
                rc.reason(),
                format!(
                    "Update from {c} to {t} is Recommended={}: {}: {}",
                    rc.status,
                    rc.reason(),
                    rc.message()
                ),
            ),
            None => warn(
                "UnknownConditionType",
                format!(
                    "Update from {c} to {t} has a status.conditionalUpdates entry, but no Recommended condition."
                ),
            ),
        };
    }
    if cv.spec.channel.as_deref().unwrap_or("").is_empty() {
        return warn(
            "NoChannel",
            format!(
                "Configured channel is unset, so the recommended status of updating from {c} to {t} is unknown."
            ),
        );
    }
    let msg = match cv.condition("RetrievedUpdates") {
        None => {
            format!("No RetrievedUpdates, so the recommended status of updating from {c} to {t} is unknown.")
        }
        Some(ru) if ru.is_true() => format!(
            "RetrievedUpdates=True ({}), so the update from {c} to {t} is probably neither recommended nor supported.",
            ru.reason()
        ),
        Some(ru) => format!(
            "RetrievedUpdates={} ({}), so the recommended status of updating from {c} to {t} is unknown.",
            ru.status,
            ru.reason()
        ),
    };
    warn("UnknownUpdate", msg)
}

/// Runs all preconditions in upstream order (Rollback, GiantHop, Upgradeable,
/// RecommendedUpdate) and returns the failures. The first three are the shared checks of
/// [`crate::openshift::precondition`], which the update request runs too.
pub(crate) fn run_preconditions(cv: &ClusterVersion, target: &Target) -> Vec<PreconditionError> {
    let version = target.version.as_str();
    [
        precondition::rollback(cv, version),
        precondition::giant_hop(cv, version),
        precondition::upgradeable(cv, version),
        check_recommended_update(cv, target),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// One precondition failure as `Summarize` sees it: a precondition error or a plain error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreconditionFailure {
    /// A precondition error, rendered `Precondition "{name}" failed because of "{reason}": {msg}`.
    Check(PreconditionError),
    /// Any other error (e.g. the check could not run), rendered as-is; blocking.
    Other(String),
}

impl std::fmt::Display for PreconditionFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Check(e) => e.fmt(f),
            Self::Other(s) => f.write_str(s),
        }
    }
}

/// `precondition.Summarize` (upstream `pkg/payload/precondition/precondition.go`, test
/// `TestSummarize`): `None` when nothing failed; otherwise the UE `UpgradePreconditionCheckFailed`
/// (name `PreconditionCheck`, effect `Fail` when blocking, `None` otherwise) and whether it blocks.
/// One failure ⇒ its text; several ⇒ `Multiple precondition checks failed:\n* …`; forced + blocking
/// ⇒ prefix `Forced through blocking failures: ` and non-blocking.
pub fn summarize(errs: &[PreconditionFailure], force: bool) -> Option<(UpdateError, bool)> {
    if errs.is_empty() {
        return None;
    }
    let mut blocking = errs
        .iter()
        .any(|e| !matches!(e, PreconditionFailure::Check(p) if p.non_blocking));
    let mut msg = match errs {
        [one] => one.to_string(),
        many => {
            let mut s = String::from("Multiple precondition checks failed:");
            for e in many {
                s.push_str("\n* ");
                s.push_str(&e.to_string());
            }
            s
        }
    };
    if force && blocking {
        msg = format!("Forced through blocking failures: {msg}");
        blocking = false;
    }
    let effect = if blocking {
        UpdateEffect::Fail
    } else {
        UpdateEffect::None
    };
    Some((
        UpdateError::new("UpgradePreconditionCheckFailed", msg)
            .with_name("PreconditionCheck")
            .with_effect(effect),
        blocking,
    ))
}

/// An admin gate whose name is not `ack-{4|5}.{minor}-{description}` (upstream
/// `pkg/risk/adminack`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{gate} configmap gate name has invalid format; must comply with \"ack-[4-5].<minor>-<description>\""
)]
pub struct InvalidAdminGate {
    /// The gate's name.
    pub gate: String,
}

/// Whether admin gate `gate` (a key of ConfigMap `openshift-config-managed/admin-gates`)
/// applies to a cluster at `current_version` (`pkg/risk/adminack gateApplicableToCurrentVersion`,
/// test `Test_gateApplicableToCurrentVersion`). Gates are named `ack-{4|5}.{minor}-{description}`;
/// they apply when their major.minor equals the current one. A malformed name is an error naming
/// the gate.
pub fn admin_gate_applies(gate: &str, current_version: &str) -> Result<bool, InvalidAdminGate> {
    let bad = || {
        Err(InvalidAdminGate {
            gate: gate.to_owned(),
        })
    };
    let Some(rest) = gate.strip_prefix("ack-") else {
        return bad();
    };
    let mut chars = rest.char_indices();
    let Some((_, major)) = chars.next().filter(|(_, c)| *c == '4' || *c == '5') else {
        return bad();
    };
    if rest.as_bytes().get(1) != Some(&b'.') {
        return bad();
    }
    let after_dot = &rest[2..];
    let digits = after_dot.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return bad();
    }
    let minor = &after_dot[..digits];
    let tail = &after_dot[digits..];
    let Some(desc) = tail.strip_prefix('-') else {
        return bad();
    };
    if desc.is_empty() || desc.starts_with('-') {
        return bad();
    }
    let mut parts = current_version.split('.');
    let (cur_major, cur_minor) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    Ok(cur_major == major.to_string() && cur_minor == minor)
}

/// The risk of one applicable admin gate (upstream `pkg/risk/adminack`, test
/// `Test_checkAdminGate`): `None` when `acks` holds `gate: "true"`; otherwise risk
/// `AdminAck-{gate}` with the gate's value as message and the first `https://` URI in it (up to
/// whitespace) as URL.
pub fn admin_gate_risk(
    gate: &str,
    value: &str,
    acks: &std::collections::BTreeMap<String, String>,
) -> Option<Risk> {
    if acks.get(gate).is_some_and(|v| v == "true") {
        return None;
    }
    let url = value
        .find("https://")
        .map(|i| {
            value[i..]
                .split(char::is_whitespace)
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    Some(Risk {
        name: format!("AdminAck-{gate}"),
        message: value.to_string(),
        url,
    })
}
