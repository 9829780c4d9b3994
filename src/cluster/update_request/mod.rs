//! The update request: what `oc adm upgrade` (and the dashboard's updates view) asks of a
//! cluster, decided before anything is written.
//!
//! [`plan`] is pure: the ClusterVersion as read, a [`Request`] and the [`Flags`] give either an
//! [`Outcome`] (a [`Plan`] with the JSON merge patch to send, or "no change" with oc's `info:`
//! line) or a [`Refusal`] naming the blocking precondition and the flag that waives it. Every
//! precondition is reported as a [`Verdict`], so a confirm popup can list them.
//! [`Plan::spec_patch`] hands the patch to the one write path of requests
//! ([`crate::spec_request::send`]), which refuses before any request when the caller is
//! read-only.
//!
//! Patches touch `spec.desiredUpdate` or `spec.channel` only, never the whole object.
//!
//! Upstream: `pkg/cli/admin/upgrade/upgrade.go` and `pkg/cli/admin/upgrade/channel/channel.go`
//! in openshift/oc (the request, its client-side guards and texts), and
//! `pkg/payload/precondition/clusterversion/{upgradeable,rollback,gianthop}.go` in
//! openshift/cluster-version-operator (the cluster-side preconditions that `--force` waives,
//! checked here before writing so a blocked request makes no write).

mod preconditions;
pub mod pullspec;

use std::fmt;

use serde_json::{Value, json};

pub use preconditions::bypass_warning_start;

use crate::l10n::{tr, trf};
use crate::openshift::{ClusterVersion, ConditionalUpdate, ConditionalUpdateRisk, Release};
use pullspec::{PullSpec, same_image};

/// What the administrator asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// `--to VERSION`: a version from the available (or, with `--allow-not-recommended`, the
    /// conditional) updates. `image`, when given (a row picked in the dashboard), must match too.
    ToVersion {
        /// Semantic version, e.g. `4.16.4`.
        version: String,
        /// The release image of the picked row, if known.
        image: Option<String>,
    },
    /// `--to-image PULLSPEC`: a release image, by digest (a tag only with `--force`, and the
    /// caller resolves the tag to a digest before planning).
    ToImage {
        /// The pull spec.
        pullspec: String,
    },
    /// `--to-latest`: the highest semantic version among the candidates.
    ToLatest,
    /// `--clear`: cancel the requested update (accepted risks are kept).
    Clear,
    /// `--to-multi-arch`: the current version as a multi-architecture release
    /// (`desiredUpdate.architecture: Multi`).
    ToMultiArch,
    /// `upgrade channel C`: set `spec.channel` (empty clears it).
    Channel(String),
    /// Replace `spec.desiredUpdate.acceptRisks` with these risk names.
    AcceptRisks(Vec<String>),
}

/// The waivers of `oc adm upgrade`, all off by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `--allow-not-recommended`: a conditional update whose Recommended is not True.
    pub allow_not_recommended: bool,
    /// `--allow-explicit-upgrade`: an image that is not among the listed updates.
    pub allow_explicit_upgrade: bool,
    /// `--allow-upgrade-with-warnings`: the client guards (Invalid, Failing, Progressing).
    pub allow_upgrade_with_warnings: bool,
    /// `--force`: the cluster-side preconditions (Upgradeable, rollback, giant hop), a by-tag
    /// pull spec, and release verification (written as `desiredUpdate.force`).
    pub force: bool,
    /// `--allow-explicit-channel` (`upgrade channel`): a channel that is not one of the
    /// release's channels, or clearing a channel that is one of them.
    pub allow_explicit_channel: bool,
    /// Not a waiver but a fact the caller reads: whether the cluster's FeatureGate `cluster`
    /// enables `ClusterUpdateAcceptRisks` for its current version
    /// ([`crate::openshift::FeatureGate::accept_risks`]). Without it the cluster rejects
    /// `spec.desiredUpdate.acceptRisks`, so [`Request::AcceptRisks`] is refused.
    pub accept_risks_gate: bool,
}

/// A flag that waives a precondition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiver {
    /// `--allow-not-recommended`.
    AllowNotRecommended,
    /// `--allow-explicit-upgrade`.
    AllowExplicitUpgrade,
    /// `--allow-upgrade-with-warnings`.
    AllowUpgradeWithWarnings,
    /// `--force`.
    Force,
    /// `--allow-explicit-channel`.
    AllowExplicitChannel,
}

impl Waiver {
    /// The command-line flag, e.g. `--force`.
    pub fn flag(self) -> &'static str {
        match self {
            Self::AllowNotRecommended => "--allow-not-recommended",
            Self::AllowExplicitUpgrade => "--allow-explicit-upgrade",
            Self::AllowUpgradeWithWarnings => "--allow-upgrade-with-warnings",
            Self::Force => "--force",
            Self::AllowExplicitChannel => "--allow-explicit-channel",
        }
    }

    fn given(self, flags: &Flags) -> bool {
        match self {
            Self::AllowNotRecommended => flags.allow_not_recommended,
            Self::AllowExplicitUpgrade => flags.allow_explicit_upgrade,
            Self::AllowUpgradeWithWarnings => flags.allow_upgrade_with_warnings,
            Self::Force => flags.force,
            Self::AllowExplicitChannel => flags.allow_explicit_channel,
        }
    }
}

impl fmt::Display for Waiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.flag())
    }
}

/// The result of one precondition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerdictState {
    /// The check passed.
    Passed,
    /// The check failed and the flag given waived it.
    Waived(Waiver),
    /// The check failed; the request is refused unless the flag (if any) is given.
    Blocking(Option<Waiver>),
    /// The check failed without blocking: the cluster's precondition is a non-blocking warning
    /// (e.g. `ClusterVersionOverridesSet`), which the cluster records as an accepted risk. The
    /// verdict names the reason; the plan's warnings carry the cluster's whole text.
    Warning,
    /// The check could not be made here (e.g. the version of an explicit image is unknown until
    /// the cluster loads it); the cluster checks it again.
    Unchecked,
}

/// One precondition's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Stable name, e.g. `ClusterVersionUpgradeable`, `ClusterFailing`.
    pub name: &'static str,
    /// Passed, waived, a warning, blocking or unchecked.
    pub state: VerdictState,
    /// One line (or oc's indented block) saying what was found.
    pub message: String,
}

impl Verdict {
    fn passed(name: &'static str, message: impl Into<String>) -> Self {
        Self {
            name,
            state: VerdictState::Passed,
            message: message.into(),
        }
    }

    /// A failed check: waived when `waiver` is among `flags`, blocking otherwise.
    fn failed(name: &'static str, waiver: Option<Waiver>, flags: &Flags, message: impl Into<String>) -> Self {
        let state = match waiver {
            Some(w) if w.given(flags) => VerdictState::Waived(w),
            w => VerdictState::Blocking(w),
        };
        Self {
            name,
            state,
            message: message.into(),
        }
    }

    /// Whether the verdict blocks the request.
    pub fn is_blocking(&self) -> bool {
        matches!(self.state, VerdictState::Blocking(_))
    }
}

/// A request that can be sent.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The ClusterVersion to patch (`version`).
    pub name: String,
    /// The JSON merge patch: `{"spec":{"desiredUpdate":…}}` or `{"spec":{"channel":…}}`.
    pub patch: Value,
    /// The release requested, for `ToVersion`/`ToImage`/`ToLatest`.
    pub target: Option<Release>,
    /// Every precondition checked, in order; none is blocking.
    pub verdicts: Vec<Verdict>,
    /// The risks of a not-recommended conditional update accepted by `--allow-not-recommended`.
    pub waived_risks: Vec<ConditionalUpdateRisk>,
    /// Warnings to show before sending, each one line or block (oc prints them as
    /// `warning: …` on stderr).
    pub warnings: Vec<String>,
    /// What to print after a successful write, e.g. `Requested update to 4.16.4`; empty when
    /// oc prints nothing (a channel change).
    pub done: String,
}

impl Plan {
    /// The plan's patch as the write path takes it ([`crate::spec_request::SpecPatch`]).
    ///
    /// # Errors
    /// [`crate::spec_request::ScopeError`] if the patch touches more than `spec.desiredUpdate`
    /// and `spec.channel` (never for a plan [`plan`] made).
    pub fn spec_patch(&self) -> Result<crate::spec_request::SpecPatch, crate::spec_request::ScopeError> {
        crate::spec_request::SpecPatch::new(self.patch.clone())
    }

    /// What the patch writes, one `path = value` line per leaf, sorted by key, e.g.
    /// `spec.desiredUpdate.version = "4.16.4"`; `null` removes the field. For a confirm popup.
    pub fn written(&self) -> Vec<String> {
        fn walk(path: &str, v: &Value, out: &mut Vec<String>) {
            match v {
                Value::Object(map) if !map.is_empty() => {
                    for (k, child) in map {
                        walk(&format!("{path}.{k}"), child, out);
                    }
                }
                other => out.push(format!("{path} = {other}")),
            }
        }
        let mut out = Vec::new();
        if let Value::Object(map) = &self.patch {
            for (k, v) in map {
                walk(k, v, &mut out);
            }
        }
        out
    }
}

/// A request that needs no write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoChange {
    /// oc's line, e.g. `info: Cluster is already at version 4.16.4`.
    pub message: String,
}

/// What [`plan`] decided.
// One value per administrator request: boxing the plan would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Send this patch.
    Plan(Plan),
    /// Nothing to write.
    NoChange(NoChange),
}

/// A refused request: nothing may be written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// The name of the first blocking precondition (a [`Verdict::name`]).
    pub precondition: &'static str,
    /// The full text (oc's wording, ending with the flag that would waive it when one does).
    pub message: String,
    /// The flag that waives it, if any.
    pub waiver: Option<Waiver>,
    /// Every verdict computed before the refusal.
    pub verdicts: Vec<Verdict>,
}

/// Decides `request` against `cv` (as read from the cluster) with `flags`.
///
/// # Errors
/// [`Refusal`] when a precondition blocks and its flag is not given, when the target is not
/// found, or when the request is malformed (a pull spec without a repository or digest).
pub fn plan(cv: &ClusterVersion, request: &Request, flags: &Flags) -> Result<Outcome, Refusal> {
    match request {
        Request::Clear => Ok(clear(cv)),
        Request::ToMultiArch => preconditions::multi_arch(cv, flags),
        Request::Channel(channel) => set_channel(cv, channel, flags),
        Request::AcceptRisks(names) => accept_risks(cv, names, flags.accept_risks_gate),
        Request::ToVersion { .. } | Request::ToImage { .. } | Request::ToLatest => {
            preconditions::update(cv, request, flags)
        }
    }
}

fn cv_name(cv: &ClusterVersion) -> String {
    cv.metadata.name.clone().unwrap_or_else(|| "version".to_string())
}

fn no_change(message: impl Into<String>) -> Outcome {
    Outcome::NoChange(NoChange {
        message: message.into(),
    })
}

/// `version`, else `image`, else `<unknown>` (oc's `updateVersionString`).
fn version_or_image(version: Option<&str>, image: Option<&str>) -> String {
    [version, image]
        .into_iter()
        .flatten()
        .find(|s| !s.is_empty())
        .unwrap_or("<unknown>")
        .to_string()
}

fn clear(cv: &ClusterVersion) -> Outcome {
    let Some(original) = &cv.spec.desired_update else {
        return no_change(tr!("req-no-update", "info: No update in progress"));
    };
    let desired_update = if original.accept_risks.is_empty() {
        Value::Null
    } else {
        // Keep the accepted risks; drop everything that names a target.
        json!({"architecture": null, "version": null, "image": null, "force": null})
    };
    let desired = &cv.status.desired;
    let equivalent = match (original.image.as_deref(), original.version.as_deref()) {
        (Some(i), _) if !i.is_empty() && !desired.image.is_empty() => i == desired.image,
        (_, Some(v)) if !v.is_empty() && !desired.version.is_empty() => v == desired.version,
        _ => false,
    };
    let done = if equivalent {
        let at = version_or_image(Some(&desired.version), Some(&desired.image));
        trf!("req-cleared", "Cleared the update field, still at {at}", at = at)
    } else {
        let to = version_or_image(original.version.as_deref(), original.image.as_deref());
        trf!("req-cancelled", "Cancelled requested upgrade to {to}", to = to)
    };
    Outcome::Plan(Plan {
        name: cv_name(cv),
        patch: json!({"spec": {"desiredUpdate": desired_update}}),
        target: None,
        verdicts: Vec::new(),
        waived_risks: Vec::new(),
        warnings: Vec::new(),
        done,
    })
}

/// The precondition name of the channel check of [`Request::Channel`].
pub const CHANNEL_KNOWN: &str = "ChannelKnown";

/// oc's `upgrade channel`: when the release lists its channels, a channel outside them, or
/// clearing a channel inside them, needs `--allow-explicit-channel`; with no list, any channel
/// is set with a warning.
fn set_channel(cv: &ClusterVersion, channel: &str, flags: &Flags) -> Result<Outcome, Refusal> {
    let current = cv.spec.channel.as_deref().unwrap_or("");
    if channel == current {
        return Ok(no_change(if current.is_empty() {
            tr!(
                "req-channel-already-clear",
                "info: Cluster channel is already clear (no change)"
            )
            .to_string()
        } else {
            trf!(
                "req-channel-already",
                "info: Cluster is already in {current} (no change)",
                current = current
            )
        }));
    }
    let channels = &cv.status.desired.channels;
    let version = &cv.status.desired.version;
    let list = channels.join(", ");
    let mut warnings = Vec::new();
    let mut verdicts = Vec::new();
    let waiver = Some(Waiver::AllowExplicitChannel);
    let refuse = |message: String, mut verdicts: Vec<Verdict>| {
        verdicts.push(Verdict {
            name: CHANNEL_KNOWN,
            state: VerdictState::Blocking(waiver),
            message: message.clone(),
        });
        Refusal {
            precondition: CHANNEL_KNOWN,
            message,
            waiver,
            verdicts,
        }
    };
    if channels.is_empty() {
        if !channel.is_empty() {
            let message = trf!(
                "req-channel-unknown",
                "No channels known to be compatible with the current version {version:?}; unable to validate {channel:?}. Setting the update channel to {channel:?} anyway.",
                version = version,
                channel = channel
            );
            verdicts.push(Verdict {
                name: CHANNEL_KNOWN,
                state: VerdictState::Unchecked,
                message: message.clone(),
            });
            warnings.push(message);
        }
    } else if channel.is_empty() {
        if channels.iter().any(|c| c == current) {
            let message = trf!(
                "req-channel-clear-refused",
                "You are requesting to clear the update channel. The current channel {current:?} is one of the available channels, you must pass --allow-explicit-channel to continue",
                current = current
            );
            if !flags.allow_explicit_channel {
                return Err(refuse(message, verdicts));
            }
            verdicts.push(Verdict::failed(CHANNEL_KNOWN, waiver, flags, message));
        } else {
            verdicts.push(Verdict::passed(
                CHANNEL_KNOWN,
                trf!(
                    "req-channel-current-unlisted",
                    "the current channel {current:?} is not one of the available channels ({list})",
                    current = current,
                    list = list
                ),
            ));
        }
    } else if channels.iter().any(|c| c == channel) {
        verdicts.push(Verdict::passed(
            CHANNEL_KNOWN,
            trf!(
                "req-channel-listed",
                "{version} is in {channel}",
                version = version,
                channel = channel
            ),
        ));
    } else {
        let refused = trf!(
            "req-channel-refused",
            "the requested channel {channel:?} is not one of the available channels ({list}), you must pass --allow-explicit-channel to continue",
            channel = channel,
            list = list
        );
        if !flags.allow_explicit_channel {
            return Err(refuse(refused, verdicts));
        }
        verdicts.push(Verdict::failed(CHANNEL_KNOWN, waiver, flags, refused));
        warnings.push(trf!(
            "req-channel-explicit",
            "The requested channel {channel:?} is not one of the available channels ({list}). You have used --allow-explicit-channel to proceed anyway. Setting the update channel to {channel:?}.",
            channel = channel,
            list = list
        ));
    }
    if channel.is_empty() {
        warnings.push(trf!(
            "req-channel-clearing",
            "Clearing channel {current:?}; cluster will no longer request available update recommendations.",
            current = current
        ));
    }
    let value = if channel.is_empty() {
        Value::Null
    } else {
        Value::String(channel.to_string())
    };
    Ok(Outcome::Plan(Plan {
        name: cv_name(cv),
        patch: json!({"spec": {"channel": value}}),
        target: None,
        verdicts,
        waived_risks: Vec::new(),
        warnings,
        done: String::new(),
    }))
}

/// The precondition name of the feature-gate check of [`Request::AcceptRisks`].
pub const ACCEPT_RISKS_GATE: &str = "ClusterUpdateAcceptRisksGate";

/// Replaces the accepted risks; refused unless the cluster has the ClusterUpdateAcceptRisks
/// gate (upstream `lib/validation/validation.go` in openshift/cluster-version-operator marks
/// a ClusterVersion naming accepted risks without it Invalid, after which the CVO takes no
/// request). Clearing them is always allowed: it is how such a ClusterVersion is repaired.
fn accept_risks(cv: &ClusterVersion, names: &[String], gate: bool) -> Result<Outcome, Refusal> {
    let mut unique: Vec<&str> = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if !unique.contains(&n) {
            unique.push(n);
        }
    }
    if !unique.is_empty() && !gate {
        let version = &cv.status.desired.version;
        let message = trf!(
            "req-accept-gate-off",
            "the FeatureGate \"cluster\" does not enable {gate} for {version}: the cluster would mark spec.desiredUpdate.acceptRisks Forbidden (acceptRisks must not be specified) and take no further request; take a conditional update with --allow-not-recommended instead",
            gate = crate::openshift::feature_gate::CLUSTER_UPDATE_ACCEPT_RISKS,
            version = version
        );
        let verdict = Verdict {
            name: ACCEPT_RISKS_GATE,
            state: VerdictState::Blocking(None),
            message: message.clone(),
        };
        return Err(Refusal {
            precondition: ACCEPT_RISKS_GATE,
            message,
            waiver: None,
            verdicts: vec![verdict],
        });
    }
    let current: Vec<&str> = cv
        .spec
        .desired_update
        .iter()
        .flat_map(|u| u.accept_risks.iter().map(|r| r.name.as_str()))
        .collect();
    // oc's texts (`pkg/cli/admin/upgrade/accept/accept.go`).
    let shown = trf!(
        "req-accept-shown",
        "info: Accept risks are [{list}]",
        list = unique.join(", ")
    );
    if current == unique {
        return Ok(no_change(tr!(
            "req-accept-unchanged",
            "info: Accept risks are not changed"
        )));
    }
    let value = if unique.is_empty() {
        Value::Null
    } else {
        Value::Array(unique.iter().map(|n| json!({"name": n})).collect())
    };
    let verdicts = if unique.is_empty() {
        Vec::new()
    } else {
        vec![Verdict::passed(
            ACCEPT_RISKS_GATE,
            trf!(
                "req-accept-gate-on",
                "{gate} is enabled for {version}",
                gate = crate::openshift::feature_gate::CLUSTER_UPDATE_ACCEPT_RISKS,
                version = cv.status.desired.version
            ),
        )]
    };
    Ok(Outcome::Plan(Plan {
        name: cv_name(cv),
        patch: json!({"spec": {"desiredUpdate": {"acceptRisks": value}}}),
        target: None,
        verdicts,
        waived_risks: Vec::new(),
        warnings: Vec::new(),
        done: shown,
    }))
}

/// The Recommended condition of a conditional update, if any.
fn recommended(update: &ConditionalUpdate) -> Option<&crate::openshift::Condition> {
    crate::openshift::condition::find(&update.conditions, "Recommended")
}

/// Whether release `r` matches `--to` version or `--to-image` pull spec (oc's `targetMatch`:
/// the version, the exact image, or the same digest).
fn target_match(r: &Release, version: Option<&str>, image: Option<&str>) -> bool {
    if let Some(v) = version.filter(|v| !v.is_empty())
        && r.version == v
    {
        return image.is_none_or(|i| same_image(&r.image, i));
    }
    match (version, image) {
        (None, Some(i)) if !i.is_empty() => same_image(&r.image, i),
        _ => false,
    }
}

/// Releases sorted by semantic version, highest first; unparseable versions after, in
/// reverse lexical order (oc's `sortReleasesBySemanticVersions`).
pub fn sort_releases_desc(releases: &mut [Release]) {
    releases.sort_by(|a, b| compare_versions_desc(&a.version, &b.version));
}

/// The order of [`sort_releases_desc`] on version strings.
pub fn compare_versions_desc(a: &str, b: &str) -> std::cmp::Ordering {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(x), Ok(y)) => y.cmp_precedence(&x),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => b.cmp(a),
    }
}

/// Parses a pull spec for [`Request::ToImage`], with oc's messages.
///
/// # Errors
/// The text after `--to-image must be a valid image pull spec: `.
pub fn parse_pullspec(text: &str) -> Result<PullSpec, pullspec::PullSpecError> {
    PullSpec::parse(text)
}

#[cfg(test)]
mod tests;
