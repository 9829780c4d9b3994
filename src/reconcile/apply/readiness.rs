//! Readiness checks after an apply (upstream `lib/resourcebuilder/apps.go`,
//! `apiext.go`, `batch.go`) and the ClusterOperator health check (upstream
//! `pkg/cvo/internal/operatorstatus.go` `checkOperatorHealth`). Pure functions on the live object.

use k8s_openapi::{
    api::{
        apps::v1::{DaemonSet, Deployment},
        batch::v1::Job,
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};

use super::PayloadState;
use crate::openshift::{condition::ConditionStatus, config_v1::ClusterOperator};
use crate::reconcile::errors::{UpdateEffect, UpdateError, reasons};

fn ns_name(m: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        m.namespace.as_deref().unwrap_or_default(),
        m.name.as_deref().unwrap_or_default()
    )
}

/// Deployment readiness: being deleted; `ReplicaFailure=True` ⇒ `WorkloadNotProgressing`;
/// `Available=False` and `Progressing=False` ⇒ `WorkloadNotAvailable`; `Progressing=False` with
/// reason `ProgressDeadlineExceeded` ⇒ `WorkloadNotProgressing`; otherwise ready (HEAD upstream
/// does not wait for the rollout to finish).
pub fn check_deployment(d: &Deployment) -> Result<(), UpdateError> {
    let n = ns_name(&d.metadata);
    if d.metadata.deletion_timestamp.is_some() {
        return Err(UpdateError::failed(format!("deployment {n} is being deleted")).with_name(n));
    }
    let conds = d
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let find = |t: &str| conds.iter().find(|c| c.type_.as_deref() == Some(t));
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    if let Some(c) = find("ReplicaFailure").filter(|c| c.status.as_deref() == Some("True")) {
        return Err(UpdateError::fail(
            reasons::WORKLOAD_NOT_PROGRESSING,
            format!(
                "deployment {n} has a replica failure {}: {}",
                text(&c.reason),
                text(&c.message)
            ),
        )
        .with_name(n));
    }
    let avail = find("Available");
    let prog = find("Progressing");
    if let (Some(a), Some(p)) = (avail, prog)
        && a.status.as_deref() == Some("False")
        && p.status.as_deref() == Some("False")
    {
        return Err(UpdateError::fail(
            reasons::WORKLOAD_NOT_AVAILABLE,
            format!(
                "deployment {n} is not available {} ({}) or progressing {} ({})",
                text(&a.reason),
                text(&a.message),
                text(&p.reason),
                text(&p.message)
            ),
        )
        .with_name(n));
    }
    if let Some(p) = prog
        && p.status.as_deref() == Some("False")
        && p.reason.as_deref() == Some("ProgressDeadlineExceeded")
    {
        return Err(UpdateError::fail(
            reasons::WORKLOAD_NOT_PROGRESSING,
            format!(
                "deployment {n} is Progressing=False: ProgressDeadlineExceeded: {}",
                text(&p.message)
            ),
        )
        .with_name(n));
    }
    Ok(())
}

/// DaemonSet readiness: only the deletion check.
pub(crate) fn check_daemon_set(d: &DaemonSet) -> Result<(), UpdateError> {
    let n = ns_name(&d.metadata);
    if d.metadata.deletion_timestamp.is_some() {
        return Err(UpdateError::failed(format!("daemonset {n} is being deleted")).with_name(n));
    }
    Ok(())
}

/// CRD readiness: needs `Established=True`.
pub(crate) fn check_custom_resource_definition(crd: &CustomResourceDefinition) -> Result<(), UpdateError> {
    let n = crd.metadata.name.clone().unwrap_or_default();
    let conds = crd
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    match conds.iter().find(|c| c.type_ == "Established") {
        Some(c) if c.status == "True" => Ok(()),
        Some(c) => Err(UpdateError::failed(format!(
            "CustomResourceDefinition {n} Established={}, {}: {}",
            c.status,
            c.reason.as_deref().unwrap_or_default(),
            c.message.as_deref().unwrap_or_default()
        ))
        .with_name(n)),
        None => {
            let list: Vec<String> = conds
                .iter()
                .map(|c| format!("{}={}", c.type_, c.status))
                .collect();
            Err(UpdateError::failed(format!(
                "CustomResourceDefinition {n} does not declare an Established status condition: [{}]",
                list.join(" ")
            ))
            .with_name(n))
        }
    }
}

/// Job readiness: succeeded ⇒ ready; no active pods and some failed ⇒ `deadline exceeded,
/// reason: "{r}", message: "{m}"` (from the `Failed` condition, defaults `DeadlineExceeded` /
/// `Job was active longer than specified deadline`); still running ⇒ ready (non-blocking).
pub fn check_job(job: &Job) -> Result<(), UpdateError> {
    let Some(s) = &job.status else { return Ok(()) };
    if s.succeeded.unwrap_or(0) > 0 {
        return Ok(());
    }
    if s.active.unwrap_or(0) == 0 && s.failed.unwrap_or(0) > 0 {
        let failed = s
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Failed" && c.status == "True");
        let reason = failed
            .and_then(|c| c.reason.clone())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| "DeadlineExceeded".to_owned());
        let message = failed
            .and_then(|c| c.message.clone())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "Job was active longer than specified deadline".to_owned());
        return Err(UpdateError::failed(format!(
            "deadline exceeded, reason: {reason:?}, message: {message:?}"
        ))
        .with_name(ns_name(&job.metadata)));
    }
    Ok(())
}

/// The ClusterOperator health check (upstream `pkg/cvo/internal/operatorstatus.go`
/// `checkOperatorHealth`, tests in `operatorstatus_test.go` `Test_checkOperatorHealth`). `expected`
/// is the payload's manifest (its `status.versions` are the expectations), `live` the object on the
/// cluster (`None` when it does not exist).
///
/// Errors, in order: no expected versions ⇒ Fail `ClusterOperatorNoVersions`; `live` missing ⇒
/// Fail `UpdatePayloadResourceNotFound` (the raw NotFound of upstream, message in kube-apiserver's
/// words); not Available ⇒ Fail `ClusterOperatorNotAvailable`; Degraded (or no Degraded
/// condition) ⇒ `ClusterOperatorDegraded` with effect FailAfterInterval (Report while
/// initializing); versions not reached (not initializing) ⇒ None `ClusterOperatorUpdating`,
/// whose message, unlike upstream's, names each operand and the version it waits for, e.g.
/// `Cluster operator dns is updating versions: waiting for coredns 4.16.4 (not reported yet),
/// operator 4.16.4 (reports 4.16.3)` (the plural form and the nested text are upstream's).
/// Every error's `name` is the operator's name.
pub fn check_operator_health(
    expected: &ClusterOperator,
    live: Option<&ClusterOperator>,
    mode: PayloadState,
) -> Result<(), UpdateError> {
    let n = expected.name().to_owned();
    if expected.status.versions.is_empty() {
        return Err(UpdateError::fail(
            reasons::CO_NO_VERSIONS,
            format!("Cluster operator {n} does not declare expected versions"),
        )
        .with_plural(
            "ClusterOperatorsNoVersions",
            "Cluster operators %s do not declare expected versions",
        )
        .with_name(n));
    }
    let Some(live) = live else {
        return Err(UpdateError::fail(
            reasons::RESOURCE_NOT_FOUND,
            format!("clusteroperators.config.openshift.io \"{n}\" not found"),
        )
        .with_name(n));
    };
    let mut undone: Vec<String> = expected
        .status
        .versions
        .iter()
        .filter_map(
            |want| match live.status.versions.iter().find(|v| v.name == want.name) {
                None => Some(format!("{} to {}", want.name, want.version)),
                Some(have) if have.version != want.version => {
                    Some(format!("{} from {} to {}", want.name, have.version, want.version))
                }
                Some(_) => None,
            },
        )
        .collect();
    undone.sort();
    let status_of = |t: &str| live.condition(t).map(|c| c.status);
    let available = status_of("Available") == Some(ConditionStatus::True);
    let degraded = status_of("Degraded") != Some(ConditionStatus::False);
    let progressing = status_of("Progressing") != Some(ConditionStatus::False);
    let default_nested = format!(
        "cluster operator {n}: available={available}, progressing={progressing}, degraded={degraded}, undone={}",
        undone.join(", ")
    );
    if !available {
        let nested = match live.condition("Available") {
            Some(c) if !c.message().is_empty() => format!(
                "cluster operator {n} is Available={}: {}: {}",
                c.status,
                c.reason(),
                c.message()
            ),
            _ => default_nested,
        };
        return Err(UpdateError::fail(
            reasons::CO_NOT_AVAILABLE,
            format!("Cluster operator {n} is not available"),
        )
        .with_plural(
            "ClusterOperatorsNotAvailable",
            "Cluster operators %s are not available",
        )
        .with_nested(nested)
        .with_name(n));
    }
    if degraded {
        let nested = match live.condition("Degraded") {
            Some(c) if !c.message().is_empty() => format!(
                "cluster operator {n} is Degraded={}: {}, {}",
                c.status,
                c.reason(),
                c.message()
            ),
            _ => default_nested,
        };
        let effect = if mode == PayloadState::Initializing {
            UpdateEffect::Report
        } else {
            UpdateEffect::FailAfterInterval
        };
        return Err(
            UpdateError::fail(reasons::CO_DEGRADED, format!("Cluster operator {n} is degraded"))
                .with_plural("ClusterOperatorsDegraded", "Cluster operators %s are degraded")
                .with_effect(effect)
                .with_nested(nested)
                .with_name(n),
        );
    }
    if !undone.is_empty() && mode != PayloadState::Initializing {
        return Err(UpdateError::fail(
            reasons::CO_UPDATING,
            format!(
                "Cluster operator {n} is updating versions: waiting for {}",
                waiting_for(expected, live)
            ),
        )
        .with_plural(
            crate::reconcile::api::OPERATORS_UPDATING_REASONS[1],
            "Cluster operators %s are updating versions",
        )
        .with_effect(UpdateEffect::None)
        .with_nested(format!(
            "cluster operator {n} is available and not degraded but has not finished updating to target version"
        ))
        .with_name(n));
    }
    Ok(())
}

/// The operands `live` has not reported at the version `expected` lists, in the manifest's
/// order: `{operand} {version} (not reported yet)` or `{operand} {version} (reports {current})`,
/// `, `-joined.
fn waiting_for(expected: &ClusterOperator, live: &ClusterOperator) -> String {
    expected
        .status
        .versions
        .iter()
        .filter_map(
            |want| match live.status.versions.iter().find(|v| v.name == want.name) {
                None => Some(format!("{} {} (not reported yet)", want.name, want.version)),
                Some(have) if have.version != want.version => Some(format!(
                    "{} {} (reports {})",
                    want.name, want.version, have.version
                )),
                Some(_) => None,
            },
        )
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn co(versions: serde_json::Value) -> ClusterOperator {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
            "metadata": {"name": "dns"},
            "status": {
                "conditions": [
                    {"type": "Available", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                    {"type": "Degraded", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z"}
                ],
                "versions": versions
            }
        }))
        .expect("ClusterOperator decodes")
    }

    #[test]
    fn the_updating_message_names_each_operand_and_version_in_manifest_order() {
        let expected = co(serde_json::json!([
            {"name": "operator", "version": "4.16.4"},
            {"name": "coredns", "version": "4.16.4"},
            {"name": "kube-rbac-proxy", "version": "4.16.4"}
        ]));
        let live = co(serde_json::json!([
            {"name": "operator", "version": "4.16.3"},
            {"name": "kube-rbac-proxy", "version": "4.16.4"}
        ]));
        let e = check_operator_health(&expected, Some(&live), PayloadState::Updating).expect_err("updating");
        assert_eq!(e.reason, "ClusterOperatorUpdating");
        assert_eq!(
            e.message,
            "Cluster operator dns is updating versions: waiting for operator 4.16.4 (reports 4.16.3), coredns 4.16.4 (not reported yet)"
        );
        assert_eq!(
            e.plural_message_format,
            "Cluster operators %s are updating versions"
        );
        assert_eq!(
            check_operator_health(&expected, Some(&expected.clone()), PayloadState::Updating),
            Ok(())
        );
    }
}
