//! Port of lib/capability/capability.go: known capabilities, the baseline sets of
//! `spec.capabilities.baselineCapabilitySet`, and `SetCapabilities` (known / enabled /
//! implicitly enabled).
//!
//! Capability names and baseline sets are those of openshift/api `config/v1`
//! (`KnownClusterVersionCapabilities`, `ClusterVersionCapabilitySets`). Sets are `BTreeSet`s, so
//! their order is Go's `sets.List` byte order (uppercase before lowercase).

use std::collections::BTreeSet;

/// Every capability openshift/api knows, in its declaration order.
pub const KNOWN_CAPABILITIES: &[&str] = &[
    "openshift-samples",
    "baremetal",
    "marketplace",
    "Console",
    "Insights",
    "Storage",
    "CSISnapshot",
    "NodeTuning",
    "MachineAPI",
    "Build",
    "DeploymentConfig",
    "ImageRegistry",
    "OperatorLifecycleManager",
    "CloudCredential",
    "Ingress",
    "CloudControllerManager",
    "OperatorLifecycleManagerV1",
    "ClusterAPI",
    "CompatibilityRequirements",
];

/// Capabilities that exist only when one of the listed feature gates is enabled
/// (capability.go `featureGatedCapabilities`).
pub(crate) const FEATURE_GATED_CAPABILITIES: &[(&str, &[&str])] = &[
    (
        "CompatibilityRequirements",
        &[
            "CRDCompatibilityRequirementOperator",
            "ClusterAPIMachineManagement",
        ],
    ),
    ("ClusterAPI", &["ClusterAPIMachineManagement"]),
];

/// The values of `baselineCapabilitySet`, oldest first (the names of [`BASELINE_ADDITIONS`]).
pub const BASELINE_SETS: &[&str] = &[
    "None", "v4.11", "v4.12", "v4.13", "v4.14", "v4.15", "v4.16", "v4.17", "v4.18", "vCurrent",
];

/// What each baseline set enables beyond the set before it, oldest first: openshift/api
/// `config/v1` `ClusterVersionCapabilitySets` lists every set in full, and each holds the one
/// before it (`vCurrent` is `v4.18`), so a set is the union of its row and the rows above.
pub const BASELINE_ADDITIONS: &[(&str, &[&str])] = &[
    ("None", &[]),
    (
        "v4.11",
        &["baremetal", "marketplace", "openshift-samples", "MachineAPI"],
    ),
    ("v4.12", &["Console", "Insights", "Storage", "CSISnapshot"]),
    ("v4.13", &["NodeTuning"]),
    ("v4.14", &["Build", "DeploymentConfig", "ImageRegistry"]),
    ("v4.15", &["OperatorLifecycleManager", "CloudCredential"]),
    ("v4.16", &["Ingress", "CloudControllerManager"]),
    ("v4.17", &[]),
    ("v4.18", &["OperatorLifecycleManagerV1"]),
    ("vCurrent", &[]),
];

/// The default baseline when `spec.capabilities` or its baseline is unset.
pub const DEFAULT_BASELINE: &str = "vCurrent";

/// The capabilities the baseline set `name` enables (sorted), or `None` for an unknown set name.
pub fn baseline_set(name: &str) -> Option<BTreeSet<&'static str>> {
    let last = BASELINE_ADDITIONS.iter().position(|(n, _)| *n == name)?;
    Some(
        BASELINE_ADDITIONS[..=last]
            .iter()
            .flat_map(|(_, added)| added.iter().copied())
            .collect(),
    )
}

/// `spec.capabilities` of a ClusterVersion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CapabilitiesSpec {
    /// `baselineCapabilitySet`; `None` or empty ⇒ `vCurrent`. An unknown name enables nothing
    /// from the baseline (as a Go map miss does).
    pub baseline_capability_set: Option<String>,
    /// `additionalEnabledCapabilities`.
    pub additional_enabled_capabilities: Vec<String>,
}

/// The capabilities of a cluster (capability.go `ClusterCapabilities`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterCapabilities {
    /// Every capability this version knows (minus feature-gated ones whose gates are off).
    pub known: BTreeSet<String>,
    /// Enabled: baseline ∪ additional ∪ implicitly enabled.
    pub enabled: BTreeSet<String>,
    /// Enabled only because they were enabled before and can never be disabled.
    pub implicitly_enabled: BTreeSet<String>,
}

impl ClusterCapabilities {
    /// `status.capabilities` in the shape the filters take: `(known, enabled)` sorted.
    pub fn status(&self) -> CapabilitiesStatus {
        CapabilitiesStatus {
            known: self.known.clone(),
            enabled: self.enabled.clone(),
        }
    }

    /// These capabilities with `implicitly_enabled` as the implicitly enabled set, each of them
    /// also enabled (capability.go `SetFromImplicitlyEnabledCapabilities`). `implicitly_enabled`
    /// replaces the old set: callers pass a superset of it (what
    /// [`super::implicitly_enabled_capabilities`] returns), so nothing enabled is dropped.
    pub fn with_implicitly_enabled(mut self, implicitly_enabled: BTreeSet<String>) -> Self {
        self.enabled.extend(implicitly_enabled.iter().cloned());
        self.implicitly_enabled = implicitly_enabled;
        self
    }
}

/// `status.capabilities` (`knownCapabilities`, `enabledCapabilities`), what the manifest filters
/// compare against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CapabilitiesStatus {
    /// `knownCapabilities`.
    pub known: BTreeSet<String>,
    /// `enabledCapabilities`.
    pub enabled: BTreeSet<String>,
}

impl CapabilitiesStatus {}

/// Capabilities none of whose enabling gates is in `enabled_gates`.
fn excluded_capabilities(enabled_gates: &BTreeSet<String>) -> BTreeSet<String> {
    FEATURE_GATED_CAPABILITIES
        .iter()
        .filter(|(_, gates)| !gates.iter().any(|g| enabled_gates.contains(*g)))
        .map(|(c, _)| c.to_string())
        .collect()
}

/// Computes known / enabled / implicitly enabled capabilities (capability.go `SetCapabilities`).
///
/// - `spec`: `spec.capabilities` (`None` ⇒ baseline `vCurrent`, no additional ones);
/// - `previously_enabled`: capabilities enabled so far (status enabled ∪ implicitly enabled ∪
///   `--always-enable-capabilities`); any of them the spec does not enable becomes implicitly
///   enabled, since a capability can never be disabled;
/// - `enabled_gates`: enabled feature gates; gated capabilities without an enabled gate are
///   removed from all three sets.
pub fn set_capabilities(
    spec: Option<&CapabilitiesSpec>,
    previously_enabled: &[String],
    enabled_gates: &BTreeSet<String>,
) -> ClusterCapabilities {
    let excluded = excluded_capabilities(enabled_gates);
    let known: BTreeSet<String> = KNOWN_CAPABILITIES
        .iter()
        .map(|s| s.to_string())
        .filter(|c| !excluded.contains(c))
        .collect();
    let baseline = spec
        .and_then(|s| s.baseline_capability_set.as_deref())
        .filter(|b| !b.is_empty())
        .unwrap_or(DEFAULT_BASELINE);
    let mut enabled: BTreeSet<String> = baseline_set(baseline)
        .unwrap_or_default()
        .into_iter()
        .map(str::to_owned)
        .collect();
    if let Some(s) = spec {
        enabled.extend(s.additional_enabled_capabilities.iter().cloned());
    }
    let mut implicitly_enabled = BTreeSet::new();
    for c in previously_enabled {
        if enabled.insert(c.clone()) {
            implicitly_enabled.insert(c.clone());
        }
    }
    enabled.retain(|c| !excluded.contains(c));
    implicitly_enabled.retain(|c| !excluded.contains(c));
    ClusterCapabilities {
        known,
        enabled,
        implicitly_enabled,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_baseline_name_resolves_and_only_known_names_appear() {
        let names: Vec<&str> = BASELINE_ADDITIONS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, BASELINE_SETS);
        for b in BASELINE_SETS {
            let caps = baseline_set(b).unwrap();
            for c in caps {
                assert!(KNOWN_CAPABILITIES.contains(&c), "{b}: {c}");
            }
        }
        assert!(baseline_set("v4.99").is_none());
        assert_eq!(baseline_set("None"), Some(BTreeSet::new()));
        assert_eq!(
            baseline_set("v4.11"),
            Some(BTreeSet::from([
                "MachineAPI",
                "baremetal",
                "marketplace",
                "openshift-samples"
            ]))
        );
        assert_eq!(baseline_set("v4.17"), baseline_set("v4.16"));
        assert_eq!(baseline_set("vCurrent"), baseline_set("v4.18"));
        let current = baseline_set("vCurrent").unwrap();
        assert_eq!(current.len(), 17);
        // openshift/api's vCurrent: every known capability but the two feature-gated ones.
        let gated: Vec<&str> = FEATURE_GATED_CAPABILITIES.iter().map(|(c, _)| *c).collect();
        for c in KNOWN_CAPABILITIES {
            assert_eq!(current.contains(c), !gated.contains(c), "{c}");
        }
    }

    #[test]
    fn previously_enabled_outside_spec_become_implicit() {
        let spec = CapabilitiesSpec {
            baseline_capability_set: Some("None".into()),
            additional_enabled_capabilities: vec![],
        };
        let c = set_capabilities(Some(&spec), &["Console".into()], &BTreeSet::new());
        assert_eq!(c.enabled, set(&["Console"]));
        assert_eq!(c.implicitly_enabled, set(&["Console"]));
    }

    #[test]
    fn implicitly_enabled_capabilities_are_added_to_the_enabled_ones() {
        let spec = CapabilitiesSpec {
            baseline_capability_set: Some("None".into()),
            additional_enabled_capabilities: vec!["Console".into()],
        };
        let c = set_capabilities(Some(&spec), &["Insights".into()], &BTreeSet::new())
            .with_implicitly_enabled(set(&["Insights", "Storage"]));
        assert_eq!(c.enabled, set(&["Console", "Insights", "Storage"]));
        assert_eq!(c.implicitly_enabled, set(&["Insights", "Storage"]));
        assert_eq!(c.status().enabled, set(&["Console", "Insights", "Storage"]));
    }

    #[test]
    fn gated_capability_appears_with_its_gate() {
        let gates = set(&["ClusterAPIMachineManagement"]);
        let c = set_capabilities(None, &[], &gates);
        assert!(c.known.contains("ClusterAPI"));
        assert!(c.known.contains("CompatibilityRequirements"));
    }
}
