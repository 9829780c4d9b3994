//! Capabilities are never disabled, and never silently lost by an update (upstream
//! `pkg/cvo/sync_worker.go` `Update` and `syncPayload`, `pkg/payload/payload.go`
//! `GetImplicitlyEnabledCapabilities`, `lib/capability/capability.go`).
//!
//! A turn starts from the capabilities enabled so far ([`prior_capabilities`]): any of them the
//! spec no longer enables stays enabled, implicitly. When a new payload loads while the worker
//! holds one, a resource the held payload applies that the new payload moves under a capability
//! that is not enabled makes that capability implicitly enabled ([`enable_implicitly`]), so the
//! resource is still applied, with the new release's content, instead of being left behind
//! unmanaged while the update reports Completed.

use std::collections::BTreeSet;

use crate::openshift::ClusterVersion;
use crate::reconcile::{
    payload::{InclusionConfig, Payload, capability::ClusterCapabilities, implicitly_enabled_capabilities},
    runtime::sync_worker::SyncWork,
};

/// The capabilities enabled so far, which a turn must keep enabled (upstream sync_worker.go
/// `Update`, `priorCaps`): the enabled capabilities of the worker's current work, or, before
/// the worker has work (at start-up), the ClusterVersion's `status.capabilities.enabledCapabilities`,
/// so a restarted engine keeps what an earlier one enabled.
pub(super) fn prior_capabilities(current: Option<&SyncWork>, cv: &ClusterVersion) -> Vec<String> {
    match current {
        Some(work) => work.capabilities.enabled.iter().cloned().collect(),
        None => cv.status.capabilities.enabled_capabilities.clone(),
    }
}

/// `caps` plus the capabilities loading `update` while the worker holds `current` implicitly
/// enables (upstream sync_worker.go `syncPayload` then `SetFromImplicitlyEnabledCapabilities`):
/// each manifest of `update` that `caps` leaves out whose resource `current` applies under
/// `caps` enables the capabilities it names that the current manifest does not. Both payloads
/// are filtered with `caps`, `feature_gates` and their own major version; unknown capability
/// names are allowed. Without a current payload (the first load) `caps` is returned as is.
pub(super) fn enable_implicitly(
    caps: ClusterCapabilities,
    update: &Payload,
    current: Option<&Payload>,
    feature_gates: &BTreeSet<String>,
) -> ClusterCapabilities {
    let Some(current) = current else {
        return caps;
    };
    let cfg = |p: &Payload| InclusionConfig {
        capabilities: Some(caps.status()),
        enabled_feature_gates: Some(feature_gates.clone()),
        major_version: Some(p.parsed_version.major),
        ..InclusionConfig::default()
    };
    let implicit = implicitly_enabled_capabilities(
        &update.manifests,
        &current.manifests,
        &cfg(update),
        &cfg(current),
        &caps.implicitly_enabled,
    );
    let added: Vec<&String> = implicit.difference(&caps.implicitly_enabled).collect();
    if !added.is_empty() {
        tracing::info!(
            "release {} moves resources the cluster runs under disabled capabilities; implicitly enabling {added:?}",
            update.release.version
        );
    }
    caps.with_implicitly_enabled(implicit)
}
