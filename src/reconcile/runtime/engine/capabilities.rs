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
/// `Update`, `priorCaps`): the enabled capabilities of the worker's current work and the
/// ClusterVersion's `status.capabilities.enabledCapabilities`, sorted, without repeats.
/// Upstream takes the work's once it has one and the status' before (so a restarted engine
/// keeps what an earlier one enabled); cvo takes both, since a capability is never disabled:
/// the work's cover a status write that has not come back yet, the status' cover what the
/// cluster's own CVO enabled while this engine watches.
pub(super) fn prior_capabilities(current: Option<&SyncWork>, cv: &ClusterVersion) -> Vec<String> {
    let mut prior: BTreeSet<String> = cv
        .status
        .capabilities
        .enabled_capabilities
        .iter()
        .cloned()
        .collect();
    if let Some(work) = current {
        prior.extend(work.capabilities.enabled.iter().cloned());
    }
    prior.into_iter().collect()
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::reconcile::payload::{
        Manifest, PayloadState,
        capability::{CapabilitiesSpec, set_capabilities},
    };

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A ConfigMap manifest `name` under `capability` (`""`: none).
    fn configmap(name: &str, capability: &str) -> Arc<Manifest> {
        let mut ann = json!({"include.release.openshift.io/self-managed-high-availability": "true"});
        if !capability.is_empty() {
            ann["capability.openshift.io/name"] = json!(capability);
        }
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns", "annotations": ann}});
        Arc::new(Manifest::from_object(obj, &format!("0000_10_{name}.yaml"), 0).unwrap())
    }

    fn payload(version: &str, manifests: Vec<Arc<Manifest>>) -> Payload {
        Payload {
            release: crate::reconcile::payload::Release {
                version: version.into(),
                ..Default::default()
            },
            previous: Vec::new(),
            architecture: "amd64".into(),
            parsed_version: semver::Version::parse(version).unwrap(),
            image_references: Default::default(),
            manifest_hash: String::new(),
            manifests,
            excluded: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn baseline_none(previously_enabled: &[&str]) -> ClusterCapabilities {
        let spec = CapabilitiesSpec {
            baseline_capability_set: Some("None".into()),
            additional_enabled_capabilities: Vec::new(),
        };
        let prior: Vec<String> = previously_enabled.iter().map(|s| s.to_string()).collect();
        set_capabilities(Some(&spec), &prior, &BTreeSet::new())
    }

    #[test]
    fn a_running_resource_moved_under_a_disabled_capability_enables_it() {
        let current = payload(
            "4.16.0",
            vec![configmap("gamma", ""), configmap("storage", "Storage")],
        );
        // gamma moves under Console; delta is new under Insights; storage stays under Storage,
        // which the cluster does not run: only Console is enabled.
        let update = payload(
            "4.17.0",
            vec![
                configmap("gamma", "Console"),
                configmap("delta", "Insights"),
                configmap("storage", "Storage"),
            ],
        );
        let caps = enable_implicitly(baseline_none(&[]), &update, Some(&current), &BTreeSet::new());
        assert_eq!(caps.enabled, set(&["Console"]));
        assert_eq!(caps.implicitly_enabled, set(&["Console"]));
        assert_eq!(caps.status().enabled, set(&["Console"]));
    }

    #[test]
    fn the_first_load_enables_nothing_implicitly() {
        let update = payload("4.17.0", vec![configmap("gamma", "Console")]);
        let caps = enable_implicitly(baseline_none(&[]), &update, None, &BTreeSet::new());
        assert_eq!(caps, baseline_none(&[]));
        assert!(caps.enabled.is_empty());
    }

    #[test]
    fn an_implicitly_enabled_capability_stays_through_the_next_update() {
        // Console was enabled implicitly by an earlier update; the next one keeps gamma under it.
        let current = payload("4.17.0", vec![configmap("gamma", "Console")]);
        let update = payload("4.18.0", vec![configmap("gamma", "Console")]);
        let caps = enable_implicitly(
            baseline_none(&["Console"]),
            &update,
            Some(&current),
            &BTreeSet::new(),
        );
        assert_eq!(caps.enabled, set(&["Console"]));
        assert_eq!(caps.implicitly_enabled, set(&["Console"]));
    }

    #[test]
    fn prior_capabilities_are_the_works_and_the_status() {
        let mut cv = ClusterVersion::default();
        cv.status.capabilities.enabled_capabilities = vec!["Insights".into()];
        assert_eq!(prior_capabilities(None, &cv), ["Insights"]);
        let caps = baseline_none(&[]).with_implicitly_enabled(set(&["Console"]));
        let work = SyncWork {
            generation: 1,
            desired: Default::default(),
            force: false,
            overrides: Vec::new(),
            capabilities: caps.status(),
            feature_gates: BTreeSet::new(),
            payload: Arc::new(payload("4.17.0", Vec::new())),
            state: PayloadState::Updating,
            load_status: Default::default(),
            implicitly_enabled: vec!["Console".into()],
        };
        // The work's, even while the status written from it has not come back yet, and the
        // status'.
        assert_eq!(prior_capabilities(Some(&work), &cv), ["Console", "Insights"]);
        cv.status.capabilities.enabled_capabilities = vec!["Console".into()];
        assert_eq!(prior_capabilities(Some(&work), &cv), ["Console"]);
    }
}
