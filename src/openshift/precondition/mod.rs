//! The cluster-side update preconditions on the ClusterVersion: the one set of rules and
//! texts that both the engine (when it loads a new release) and the update request (`cvo
//! upgrade` and the dashboard's confirm popup, before anything is written) evaluate.
//!
//! Each check takes the ClusterVersion as read and the target release's version, and returns
//! `None` when it passes or the [`PreconditionError`] upstream's check returns: a blocking
//! failure, or a non-blocking warning (`non_blocking`, recorded by the cluster as an accepted
//! risk). The current version is `status.desired.version`; versions are parsed strictly, as
//! upstream's `github.com/blang/semver/v4` `Parse` does, with its error texts
//! ([`parse_version`]).
//!
//! Upstream (openshift/cluster-version-operator): `pkg/payload/precondition/precondition.go`
//! (`Error`), `pkg/payload/precondition/clusterversion/rollback.go`, `gianthop.go` and
//! `upgradeable.go`; tests in the same directory (`*_test.go`), mirrored in `tests.rs`.

use super::go_quote;
use semver::Version;

use super::{ClusterVersion, UpdateState};

/// Name of the rollback precondition.
pub const ROLLBACK: &str = "ClusterVersionRollback";
/// Name of the giant-hop precondition.
pub const GIANT_HOP: &str = "ClusterVersionGiantHop";
/// Name of the Upgradeable precondition.
pub const UPGRADEABLE: &str = "ClusterVersionUpgradeable";

/// The message of the overrides warning's condition (upstream `upgradeable.go`
/// `ClusterVersionOverridesCondition`; it says "upgrades" where the Upgradeable risk of
/// `pkg/risk/overrides` says "updates").
pub const OVERRIDES_MESSAGE: &str = "Disabling ownership via cluster version overrides prevents upgrades between minor or major versions. Please remove overrides before requesting a minor or major version update.";

/// A failed precondition (upstream `precondition.Error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreconditionError {
    /// Precondition name, e.g. `ClusterVersionRollback`.
    pub name: String,
    /// CamelCase reason, e.g. `LowDesiredVersion`.
    pub reason: String,
    /// Message.
    pub message: String,
    /// A warning: recorded as an accepted risk, does not block.
    pub non_blocking: bool,
}

impl std::fmt::Display for PreconditionError {
    /// `Precondition "{name}" failed because of "{reason}": {message}` (upstream `Summarize`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Precondition {:?} failed because of {:?}: {}",
            self.name, self.reason, self.message
        )
    }
}

fn failure(name: &str, reason: &str, message: String, non_blocking: bool) -> PreconditionError {
    PreconditionError {
        name: name.into(),
        reason: reason.into(),
        message,
        non_blocking,
    }
}

/// Go's `strconv.ParseUint(s, 10, 64)` for a string of ASCII digits (or empty), with its
/// error text.
fn parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse::<u64>()
        .map_err(|_| format!("strconv.ParseUint: parsing {}: value out of range", go_quote(s)))
}

fn only_digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

fn only_alphanumerics(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn leading_zero(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// Parses `s` as a strict semantic version, the way upstream's `semver.Parse`
/// (`github.com/blang/semver/v4`) does: `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`, no leading
/// zeros in numbers, no `v` prefix.
///
/// # Errors
/// Upstream's error text, e.g. `Version string empty`, `No Major.Minor.Patch elements found`,
/// `Invalid character(s) found in minor number "1x"`,
/// `Patch number must not contain leading zeroes "01"`.
pub fn parse_version(s: &str) -> Result<Version, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    for (what, number) in [("major", major), ("minor", minor)] {
        if !only_digits(number) {
            return Err(format!(
                "Invalid character(s) found in {what} number {}",
                go_quote(number)
            ));
        }
        if leading_zero(number) {
            let title = if what == "major" { "Major" } else { "Minor" };
            return Err(format!(
                "{title} number must not contain leading zeroes {}",
                go_quote(number)
            ));
        }
        parse_uint(number)?;
    }
    let (rest, build) = match rest.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (rest, None),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((p, pre)) => (p, Some(pre)),
        None => (rest, None),
    };
    if !only_digits(patch) {
        return Err(format!(
            "Invalid character(s) found in patch number {}",
            go_quote(patch)
        ));
    }
    if leading_zero(patch) {
        return Err(format!(
            "Patch number must not contain leading zeroes {}",
            go_quote(patch)
        ));
    }
    parse_uint(patch)?;
    for identifier in pre.into_iter().flat_map(|p| p.split('.')) {
        if identifier.is_empty() {
            return Err("Prerelease is empty".into());
        }
        if only_digits(identifier) {
            if leading_zero(identifier) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    go_quote(identifier)
                ));
            }
            parse_uint(identifier)?;
        } else if !only_alphanumerics(identifier) {
            return Err(format!(
                "Invalid character(s) found in prerelease {}",
                go_quote(identifier)
            ));
        }
    }
    for identifier in build.into_iter().flat_map(|b| b.split('.')) {
        if identifier.is_empty() {
            return Err("Build meta data is empty".into());
        }
        if !only_alphanumerics(identifier) {
            return Err(format!(
                "Invalid character(s) found in build meta data {}",
                go_quote(identifier)
            ));
        }
    }
    Version::parse(s).map_err(|e| e.to_string())
}

/// The current and target versions, or the failure upstream's checks return when one does
/// not parse: the current one ⇒ warning `InvalidCurrentVersion` ("do not block on issues that
/// require an update to fix"); the target ⇒ blocking `InvalidDesiredVersion`.
fn versions(name: &str, cv: &ClusterVersion, target: &str) -> Result<(Version, Version), PreconditionError> {
    let current = parse_version(&cv.status.desired.version)
        .map_err(|e| failure(name, "InvalidCurrentVersion", e, true))?;
    let target = parse_version(target).map_err(|e| failure(name, "InvalidDesiredVersion", e, false))?;
    Ok((current, target))
}

/// `ClusterVersionRollback` (upstream `rollback.go`, test `TestRollbackRun`): a target below
/// the current one is allowed only when it is the cluster's previous version (the first
/// history entry other than the current version and image) in the same major.minor.
/// Failures: `LowDesiredVersion` (blocking); unparsable versions as in upstream.
pub fn rollback(cv: &ClusterVersion, target: &str) -> Option<PreconditionError> {
    let (c, t) = match versions(ROLLBACK, cv, target) {
        Ok(v) => v,
        Err(e) => return Some(e),
    };
    if !t.cmp_precedence(&c).is_lt() {
        return None;
    }
    let low = |message: String| Some(failure(ROLLBACK, "LowDesiredVersion", message, false));
    let desired_image = &cv.status.desired.image;
    // Upstream stops at the first entry that differs; one that does not parse counts as none.
    let previous = cv
        .status
        .history
        .iter()
        .find(|h| h.version != c.to_string() || h.image != *desired_image)
        .and_then(|h| parse_version(&h.version).ok().map(|v| (v, h.image.as_str())));
    let Some((p, p_image)) = previous else {
        return low(format!(
            "{t} is less than the current target {c}, and the cluster has no previous Semantic Version"
        ));
    };
    if !t.cmp_precedence(&p).is_eq() {
        return low(format!(
            "{t} is less than the current target {c}, and the only supported rollback is to the cluster's previous version {p} ({p_image})"
        ));
    }
    if p.major == c.major && p.minor == c.minor {
        return None;
    }
    low(format!(
        "{t} is less than the current target {c} and matches the cluster's previous version, but rollbacks that change major or minor versions are not recommended"
    ))
}

/// `ClusterVersionGiantHop` (upstream `gianthop.go`, test `TestGiantHopRun`): a larger major
/// version is blocked (`MajorVersionUpdate`) except upstream's one exception, 4.y to 5.0; a
/// minor version more than one beyond the current one is blocked
/// (`MultipleMinorVersionsUpdate`, compared as upstream does, whatever the majors).
pub fn giant_hop(cv: &ClusterVersion, target: &str) -> Option<PreconditionError> {
    let (c, t) = match versions(GIANT_HOP, cv, target) {
        Ok(v) => v,
        Err(e) => return Some(e),
    };
    if t.major > c.major {
        // Upstream's temporary access from 4 to 5.0, "to be reverted once we are in v5
        // development".
        let to_five = c.major == 4 && t.major == 5;
        if to_five && t.minor == 0 {
            return None;
        }
        let supported = if to_five {
            "the current major version or to 5.0"
        } else {
            "the current major version"
        };
        return Some(failure(
            GIANT_HOP,
            "MajorVersionUpdate",
            format!(
                "{t} has a larger major version than the current target {c} ({} > {}), and only updates within {supported} are supported.",
                t.major, c.major
            ),
            false,
        ));
    }
    if t.minor > c.minor.saturating_add(1) {
        return Some(failure(
            GIANT_HOP,
            "MultipleMinorVersionsUpdate",
            format!(
                "{t} is more than one minor version beyond the current target {c} ({}.{} > {}.({}+1)), and only updates within the current minor version or to the next minor version are supported.",
                t.major, t.minor, c.major, c.minor
            ),
            false,
        ));
    }
    None
}

/// The version the cluster completed (upstream `GetCurrentVersion`): the first `Completed`
/// history entry, else the oldest entry, else none.
fn completed_version(cv: &ClusterVersion) -> Option<&str> {
    let history = &cv.status.history;
    history
        .iter()
        .find(|h| h.state == UpdateState::Completed)
        .or_else(|| history.last())
        .map(|h| h.version.as_str())
        .filter(|v| !v.is_empty())
}

/// `Major` or `Minor` when a major or minor update from the completed version to `current`
/// is in progress (Progressing=True), with the completed version (upstream
/// `majorOrMinorUpdateFrom` and `internal.UpdateType`).
fn major_or_minor_update(cv: &ClusterVersion, current: &Version) -> Option<(String, &'static str)> {
    let completed_text = completed_version(cv)?;
    let completed = parse_version(completed_text).ok()?;
    if !cv.condition("Progressing").is_some_and(|p| p.is_true()) {
        return None;
    }
    let kind = if completed.major < current.major {
        "Major"
    } else if completed.major == current.major && completed.minor < current.minor {
        "Minor"
    } else {
        return None;
    };
    Some((completed_text.to_string(), kind))
}

/// `ClusterVersionUpgradeable` (upstream `upgradeable.go`, test `TestUpgradeableRun`): while
/// the ClusterVersion's Upgradeable is False, a minor or major update is blocked with that
/// condition's reason and message. A target not above the current one, or in the same
/// major.minor, passes, with two warnings: unmanaged overrides (`ClusterVersionOverridesSet`)
/// and a patch retarget while a minor or major update is in progress
/// (`{Minor|Major}VersionClusterUpdateInProgress`). Upgradeable absent or not False passes
/// without parsing anything.
pub fn upgradeable(cv: &ClusterVersion, target: &str) -> Option<PreconditionError> {
    let up = cv.condition("Upgradeable").filter(|c| c.is_false())?;
    let (c, t) = match versions(UPGRADEABLE, cv, target) {
        Ok(v) => v,
        Err(e) => return Some(e),
    };
    let patch_only = t.major == c.major && t.minor == c.minor;
    if !(t.cmp_precedence(&c).is_le() || patch_only) {
        return Some(failure(UPGRADEABLE, up.reason(), up.message().to_string(), false));
    }
    if cv.spec.overrides.iter().any(|o| o.unmanaged) {
        let reason = "ClusterVersionOverridesSet";
        return Some(failure(
            UPGRADEABLE,
            reason,
            format!(
                "Retarget from {c} to {t} is not blocked by {reason}. But the cluster-version operator is not managing these resources; they are currently the responsibility of the agent that set the overrides: {OVERRIDES_MESSAGE}"
            ),
            true,
        ));
    }
    if patch_only && let Some((completed, kind)) = major_or_minor_update(cv, &c) {
        return Some(failure(
            UPGRADEABLE,
            &format!("{kind}VersionClusterUpdateInProgress"),
            format!(
                "Retarget to {t} while a {} version update from {completed} to {c} is in progress",
                kind.to_lowercase()
            ),
            true,
        ));
    }
    None
}

#[cfg(test)]
mod tests;
