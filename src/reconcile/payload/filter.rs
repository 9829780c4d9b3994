//! Port of library-go `pkg/manifest/manifest.go` `Include` /
//! `IncludeAllowUnknownCapabilities` and CVO lib/manifest/manifest.go
//! `GetImplicitlyEnabledCapabilities`: which manifests a cluster applies, and why the others are
//! left out.
//!
//! Filters run in upstream's order and the first failing one decides the
//! [`ExclusionReason`]. A filter whose input is `None` in [`InclusionConfig`] is skipped, as a
//! nil pointer is upstream.

use std::{borrow::Borrow, collections::BTreeSet, fmt};

use super::manifest::Manifest;
use crate::reconcile::payload::capability::CapabilitiesStatus;

/// `release.openshift.io/feature-set`.
pub(crate) const FEATURE_SET_ANNOTATION: &str = "release.openshift.io/feature-set";
/// `release.openshift.io/feature-gate`.
pub(crate) const FEATURE_GATE_ANNOTATION: &str = "release.openshift.io/feature-gate";
/// `release.openshift.io/major-version`.
pub(crate) const MAJOR_VERSION_ANNOTATION: &str = "release.openshift.io/major-version";
/// The cluster profile used when `CLUSTER_PROFILE` is unset.
pub const DEFAULT_CLUSTER_PROFILE: &str = "self-managed-high-availability";

/// Feature-set names the annotation may list (openshift/api `features.AllFeatureSets` plus
/// `CustomNoUpgrade`; `""` is spelled `Default`), byte-sorted.
pub(crate) const KNOWN_FEATURE_SETS: &[&str] = &[
    "CustomNoUpgrade",
    "Default",
    "DevPreviewNoUpgrade",
    "OKD",
    "TechPreviewNoUpgrade",
];

/// One `spec.overrides[]` entry of a ClusterVersion.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComponentOverride {
    /// Kind of the overridden object.
    pub kind: String,
    /// API group.
    pub group: String,
    /// Namespace (ignored for cluster-scoped manifests).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `true` ⇒ the CVO stops managing the object.
    pub unmanaged: bool,
}

/// What the filters compare manifests against (CVO lib/manifest `InclusionConfiguration`).
#[derive(Clone, Debug, Default)]
pub struct InclusionConfig {
    /// `EXCLUDE_MANIFESTS`: manifests annotated `exclude.release.openshift.io/<id>: "true"` go.
    pub exclude_identifier: Option<String>,
    /// The cluster feature set (`""` ⇒ `Default`).
    pub required_feature_set: Option<String>,
    /// The cluster profile (`include.release.openshift.io/<profile>` must be `"true"`).
    pub profile: Option<String>,
    /// Known and enabled capabilities.
    pub capabilities: Option<CapabilitiesStatus>,
    /// Do not exclude for capability names outside `capabilities.known`.
    pub allow_unknown_capabilities: bool,
    /// `spec.overrides`; an unmanaged match excludes.
    pub overrides: Vec<ComponentOverride>,
    /// Enabled feature gates of the current version.
    pub enabled_feature_gates: Option<BTreeSet<String>>,
    /// Major version of the payload (for `release.openshift.io/major-version`).
    pub major_version: Option<u64>,
}

/// Why a manifest is left out; `Display` gives upstream's (log-only) text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExclusionReason {
    /// The object has no annotations at all.
    NoAnnotations,
    /// `exclude.release.openshift.io/<id>: "true"`.
    Excluded {
        /// The full annotation name.
        annotation: String,
    },
    /// Both feature-set and feature-gate annotations.
    FeatureSetAndGate,
    /// The feature-set annotation lists a name outside [`KNOWN_FEATURE_SETS`].
    UnknownFeatureSet {
        /// The unknown entry.
        entry: String,
        /// The whole annotation value.
        value: String,
    },
    /// The cluster's feature set is not listed.
    FeatureSetMismatch {
        /// The cluster feature set (`Default` for `""`).
        required: String,
        /// The listed sets, sorted.
        listed: Vec<String>,
    },
    /// A `Gate` entry whose gate is off.
    FeatureGateRequired(String),
    /// A `-Gate` entry whose gate is on.
    FeatureGateForbidden(String),
    /// `major-version` on a kind other than FeatureGate / CustomResourceDefinition.
    MajorVersionWrongKind,
    /// An entry that is not a number.
    MajorVersionInvalid {
        /// Entry without its `-`.
        entry: String,
        /// Whether it was an exclusion (`-N`).
        excluded: bool,
    },
    /// The same version both included and excluded.
    MajorVersionOverlap(Vec<u64>),
    /// The payload major version is excluded (`-N`).
    MajorVersionExcluded(u64),
    /// Versions are listed and the payload's is not among them.
    MajorVersionNotListed(u64),
    /// `include.release.openshift.io/<profile>` missing.
    ProfileUnset {
        /// The annotation name.
        annotation: String,
    },
    /// `include.release.openshift.io/<profile>` present but not `"true"`.
    ProfileValue {
        /// The annotation name.
        annotation: String,
        /// Its value.
        value: String,
    },
    /// Capability names the cluster does not know.
    UnknownCapabilities(Vec<String>),
    /// Known capabilities that are not enabled.
    DisabledCapabilities(Vec<String>),
    /// An unmanaged `spec.overrides` entry matches.
    Overridden,
}

impl ExclusionReason {
    /// A short stable name for grouping (`profile`, `feature-set`, `capability`, ...).
    pub fn category(&self) -> &'static str {
        use ExclusionReason::*;
        match self {
            NoAnnotations => "no-annotations",
            Excluded { .. } => "exclude",
            FeatureSetAndGate | UnknownFeatureSet { .. } | FeatureSetMismatch { .. } => "feature-set",
            FeatureGateRequired(_) | FeatureGateForbidden(_) => "feature-gate",
            MajorVersionWrongKind
            | MajorVersionInvalid { .. }
            | MajorVersionOverlap(_)
            | MajorVersionExcluded(_)
            | MajorVersionNotListed(_) => "major-version",
            ProfileUnset { .. } | ProfileValue { .. } => "profile",
            UnknownCapabilities(_) | DisabledCapabilities(_) => "capability",
            Overridden => "override",
        }
    }
}

impl fmt::Display for ExclusionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ExclusionReason::*;
        match self {
            NoAnnotations => write!(f, "no annotations"),
            Excluded { annotation } => write!(f, "{annotation}=true"),
            FeatureSetAndGate => write!(
                f,
                "both feature set and feature gate annotations are present: manifests may specify \
                 either a feature set or a feature gate, but not both"
            ),
            UnknownFeatureSet { entry, value } => write!(
                f,
                "unrecognized value {entry:?} in {FEATURE_SET_ANNOTATION}={value}; known values are: {}",
                KNOWN_FEATURE_SETS.join(",")
            ),
            FeatureSetMismatch { required, listed } => {
                write!(
                    f,
                    "{required:?} is required, and {FEATURE_SET_ANNOTATION}={}",
                    listed.join(",")
                )
            }
            FeatureGateRequired(g) => write!(f, "feature gate {g} is required but not enabled"),
            FeatureGateForbidden(g) => {
                write!(
                    f,
                    "feature gate {g} is enabled but manifest requires it to be disabled"
                )
            }
            MajorVersionWrongKind => write!(
                f,
                "major version filtering is only supported for feature gates and custom resources"
            ),
            MajorVersionInvalid { entry, excluded } => write!(
                f,
                "invalid {} major version {entry:?} in annotation: strconv.ParseUint: parsing {entry:?}: invalid syntax",
                if *excluded { "excluded" } else { "included" }
            ),
            MajorVersionOverlap(v) => {
                let list: Vec<String> = v.iter().map(u64::to_string).collect();
                write!(
                    f,
                    "inclusion and exclusion requirements overlap: [{}]",
                    list.join(" ")
                )
            }
            MajorVersionExcluded(m) => write!(f, "major version {m} matches excluded version {m}"),
            MajorVersionNotListed(m) => write!(f, "major version {m} does not match any required versions"),
            ProfileUnset { annotation } => write!(f, "{annotation} unset"),
            ProfileValue { annotation, value } => write!(f, "unrecognized value {annotation}={value}"),
            UnknownCapabilities(c) => write!(f, "unrecognized capability names: {}", c.join(", ")),
            DisabledCapabilities(c) => write!(f, "disabled capabilities: {}", c.join(", ")),
            Overridden => write!(f, "overridden"),
        }
    }
}

fn check_feature_set(required: &str, m: &Manifest) -> Result<(), ExclusionReason> {
    let required = if required.is_empty() { "Default" } else { required };
    let Some(value) = m.annotations.get(FEATURE_SET_ANNOTATION) else {
        return Ok(());
    };
    let mut listed = BTreeSet::new();
    for entry in value.split(',') {
        if !KNOWN_FEATURE_SETS.contains(&entry) {
            return Err(ExclusionReason::UnknownFeatureSet {
                entry: entry.to_string(),
                value: value.clone(),
            });
        }
        listed.insert(entry.to_string());
    }
    if listed.contains(required) {
        Ok(())
    } else {
        Err(ExclusionReason::FeatureSetMismatch {
            required: required.to_string(),
            listed: listed.into_iter().collect(),
        })
    }
}

fn check_feature_gates(enabled: &BTreeSet<String>, m: &Manifest) -> Result<(), ExclusionReason> {
    let Some(value) = m.annotations.get(FEATURE_GATE_ANNOTATION) else {
        return Ok(());
    };
    for req in value.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        match req.strip_prefix('-') {
            Some(gate) if enabled.contains(gate) => {
                return Err(ExclusionReason::FeatureGateForbidden(gate.to_string()));
            }
            Some(_) => {}
            None if !enabled.contains(req) => {
                return Err(ExclusionReason::FeatureGateRequired(req.to_string()));
            }
            None => {}
        }
    }
    Ok(())
}

fn check_major_version(major: u64, m: &Manifest) -> Result<(), ExclusionReason> {
    let Some(value) = m.annotations.get(MAJOR_VERSION_ANNOTATION) else {
        return Ok(());
    };
    let feature_gate = m.group == "config.openshift.io" && m.id.kind == "FeatureGate";
    let crd = m.group == "apiextensions.k8s.io" && m.id.kind == "CustomResourceDefinition";
    if !feature_gate && !crd {
        return Err(ExclusionReason::MajorVersionWrongKind);
    }
    let mut included = BTreeSet::new();
    let mut excluded = BTreeSet::new();
    for req in value.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        let (entry, is_excl) = match req.strip_prefix('-') {
            Some(e) => (e, true),
            None => (req, false),
        };
        // Go's ParseUint takes ASCII digits only (no sign, no spaces).
        let parsed = if !entry.is_empty() && entry.bytes().all(|b| b.is_ascii_digit()) {
            entry.parse::<u64>().ok()
        } else {
            None
        };
        let Some(v) = parsed else {
            return Err(ExclusionReason::MajorVersionInvalid {
                entry: entry.to_string(),
                excluded: is_excl,
            });
        };
        if is_excl {
            excluded.insert(v);
        } else {
            included.insert(v);
        }
    }
    let overlap: Vec<u64> = included.intersection(&excluded).copied().collect();
    if !overlap.is_empty() {
        Err(ExclusionReason::MajorVersionOverlap(overlap))
    } else if included.contains(&major) {
        Ok(())
    } else if excluded.contains(&major) {
        Err(ExclusionReason::MajorVersionExcluded(major))
    } else if !included.is_empty() {
        Err(ExclusionReason::MajorVersionNotListed(major))
    } else {
        Ok(())
    }
}

fn check_capabilities(
    caps: &CapabilitiesStatus,
    allow_unknown: bool,
    m: &Manifest,
) -> Result<(), ExclusionReason> {
    let mut unknown = Vec::new();
    let mut disabled = Vec::new();
    for c in m.capabilities() {
        if !allow_unknown && !caps.known.contains(&c) {
            unknown.push(c);
            continue;
        }
        if !caps.enabled.contains(&c) {
            disabled.push(c);
        }
    }
    if !unknown.is_empty() {
        return Err(ExclusionReason::UnknownCapabilities(unknown));
    }
    if !disabled.is_empty() {
        return Err(ExclusionReason::DisabledCapabilities(disabled));
    }
    Ok(())
}

/// The unmanaged-or-not override entry for a manifest (match on group, kind, name and, for
/// namespaced objects, namespace).
pub(crate) fn override_for<'a>(
    m: &Manifest,
    overrides: &'a [ComponentOverride],
) -> Option<&'a ComponentOverride> {
    overrides.iter().find(|o| {
        let ns = if m.id.namespace.is_empty() {
            ""
        } else {
            o.namespace.as_str()
        };
        o.group == m.id.group && o.kind == m.id.kind && o.name == m.id.name && ns == m.id.namespace
    })
}

/// Whether the cluster described by `cfg` applies `m` (library-go `Include`): `Ok` or the first
/// reason it is left out.
///
/// # Errors
/// The [`ExclusionReason`] of the first failing filter.
pub fn include(m: &Manifest, cfg: &InclusionConfig) -> Result<(), ExclusionReason> {
    if m.annotations.is_empty() && !m.has_annotations_field() {
        return Err(ExclusionReason::NoAnnotations);
    }
    if let Some(id) = &cfg.exclude_identifier {
        let annotation = format!("exclude.release.openshift.io/{id}");
        if m.annotations.get(&annotation).is_some_and(|v| v == "true") {
            return Err(ExclusionReason::Excluded { annotation });
        }
    }
    if cfg.required_feature_set.is_some()
        && cfg.enabled_feature_gates.is_some()
        && m.annotations.contains_key(FEATURE_SET_ANNOTATION)
        && m.annotations.contains_key(FEATURE_GATE_ANNOTATION)
    {
        return Err(ExclusionReason::FeatureSetAndGate);
    }
    if let Some(fs) = &cfg.required_feature_set {
        check_feature_set(fs, m)?;
    }
    if let Some(gates) = &cfg.enabled_feature_gates {
        check_feature_gates(gates, m)?;
    }
    if let Some(major) = cfg.major_version {
        check_major_version(major, m)?;
    }
    if let Some(profile) = &cfg.profile {
        let annotation = format!("include.release.openshift.io/{profile}");
        match m.annotations.get(&annotation) {
            None => return Err(ExclusionReason::ProfileUnset { annotation }),
            Some(v) if v != "true" => {
                return Err(ExclusionReason::ProfileValue {
                    annotation,
                    value: v.clone(),
                });
            }
            Some(_) => {}
        }
    }
    if let Some(caps) = &cfg.capabilities {
        check_capabilities(caps, cfg.allow_unknown_capabilities, m)?;
    }
    if override_for(m, &cfg.overrides).is_some_and(|o| o.unmanaged) {
        return Err(ExclusionReason::Overridden);
    }
    Ok(())
}

/// Capabilities an update must enable implicitly (CVO lib/manifest
/// `GetImplicitlyEnabledCapabilities`): for each update manifest the update config excludes
/// (unknown capabilities allowed), a current manifest with the same identity that the current
/// config includes makes the update manifest's capabilities not on the current manifest, not
/// already implicit and not enabled now, implicitly enabled. Starts from
/// `current_implicitly_enabled`. Both manifest lists may hold `Manifest`s or `Arc<Manifest>`s
/// (a loaded [`super::Payload`]'s).
pub fn implicitly_enabled_capabilities<U: Borrow<Manifest>, C: Borrow<Manifest>>(
    update: &[U],
    current: &[C],
    update_cfg: &InclusionConfig,
    current_cfg: &InclusionConfig,
    current_implicitly_enabled: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut update_cfg = update_cfg.clone();
    update_cfg.allow_unknown_capabilities = true;
    let mut current_cfg = current_cfg.clone();
    current_cfg.allow_unknown_capabilities = true;
    let enabled_now: BTreeSet<String> = current_cfg
        .capabilities
        .as_ref()
        .map(|c| c.enabled.clone())
        .unwrap_or_default();
    let mut ret = current_implicitly_enabled.clone();
    for um in update.iter().map(Borrow::borrow) {
        if include(um, &update_cfg).is_ok() {
            continue;
        }
        for cm in current.iter().map(Borrow::borrow).filter(|cm| cm.id == um.id) {
            if include(cm, &current_cfg).is_err() {
                continue;
            }
            let cur_caps: BTreeSet<String> = cm.capabilities().into_iter().collect();
            for c in um.capabilities() {
                if !cur_caps.contains(&c)
                    && !current_implicitly_enabled.contains(&c)
                    && !enabled_now.contains(&c)
                {
                    ret.insert(c);
                }
            }
        }
    }
    ret
}
