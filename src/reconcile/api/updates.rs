//! What the engine's update-service client fetched, as the snapshot carries it.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Release;

/// The result of the engine's update-service client: what it would write into
/// `status.availableUpdates`, `status.conditionalUpdates` and the `RetrievedUpdates`
/// condition (upstream `pkg/cvo/availableupdates.go` in openshift/cluster-version-operator).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchedUpdates {
    /// The update service URL asked (without its query string).
    pub upstream: String,
    /// The channel asked for.
    pub channel: String,
    /// The version the updates are from.
    pub version: String,
    /// Recommended updates (plain edges plus conditional ones whose Recommended is True),
    /// semver descending; `None` when there are none (upstream writes `null`).
    pub available: Option<Vec<Release>>,
    /// Conditional updates with their risks and `Recommended` condition, semver descending.
    pub conditional: Vec<crate::openshift::config_v1::ConditionalUpdate>,
    /// `None` ⇒ RetrievedUpdates=True; `Some((reason, message))` ⇒ False (e.g. `NoChannel`,
    /// `RemoteFailed`, `ResponseFailed`, `ResponseInvalid`, `VersionNotFound`).
    pub retrieved_error: Option<(String, String)>,
    /// When the update service was last asked (on [`crate::reconcile::updates::UpdatesConfig::clock`]:
    /// the wall clock, or the demo's simulated one).
    pub last_attempt: Option<DateTime<Utc>>,
    /// When it last answered with a usable graph (same clock); the updates above are from then when the
    /// last attempt failed with a transport or response error (the last good graph is kept).
    pub last_success: Option<DateTime<Utc>>,
    /// Some Recommended condition is Unknown (a risk could not be evaluated yet); the client
    /// re-evaluates in about a second.
    pub pending_evaluation: bool,
    /// The newer releases of the channel that are not offered, newest first (from the last
    /// good graph; empty when none or when no graph was read).
    pub not_offered: Vec<NotOffered>,
}

/// A release of the channel, newer than the version the updates are from, that the update
/// service does not offer as a recommended update, and why (cvo's explanation of "why no
/// updates"; upstream writes nothing of the kind). Computed by
/// [`crate::reconcile::updates::beyond::not_offered`] from the whole channel graph.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotOffered {
    /// The release as the graph describes it (version, image, errata URL, channels).
    pub release: Release,
    /// Why it is not offered.
    pub why: WhyNotOffered,
}

/// Why a newer release of the channel is not offered.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum WhyNotOffered {
    /// No edge (plain or conditional) leads to it from the current version. `via`: the
    /// offered update (a plain edge from the current version) after which the graph's plain
    /// edges reach it, if any.
    NoEdge {
        /// The version to update to first, if a path of plain edges exists.
        via: Option<String>,
    },
    /// A conditional edge leads to it, but its declaration is unusable (a risk with no
    /// recognized, valid matching rule, or the target declared by two conditional edges), so
    /// it is dropped, as upstream drops it.
    UnusableConditionalEdge,
    /// A conditional edge whose risks apply to this cluster, or could not be evaluated
    /// (`Recommended` is not `True`).
    Blocked {
        /// The risks of the edge.
        risks: Vec<crate::openshift::config_v1::ConditionalUpdateRisk>,
        /// Its `Recommended` condition; `None` when no evaluation names the target yet.
        recommended: Option<crate::openshift::condition::Condition>,
    },
}

/// The sentence cvo appends to a `RetrievedUpdates=False` message while the updates it lists
/// are a kept earlier answer: `The updates listed are the last good answer of {upstream}, at
/// {RFC 3339 to the second}.` (cvo only; upstream's message ends before it). Read back by
/// [`last_good_answer`].
pub fn last_good_note(upstream: &str, at: DateTime<Utc>) -> String {
    format!(
        "{LAST_GOOD_PREFIX}{upstream}, at {}.",
        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

const LAST_GOOD_PREFIX: &str = "The updates listed are the last good answer of ";

/// The update service and time of a [`last_good_note`] in a `RetrievedUpdates` message, if
/// the message carries one (a cvo operator wrote it).
pub fn last_good_answer(message: &str) -> Option<(String, DateTime<Utc>)> {
    let rest = &message[message.rfind(LAST_GOOD_PREFIX)? + LAST_GOOD_PREFIX.len()..];
    let (upstream, at) = rest.rsplit_once(", at ")?;
    let at = at.trim_end().strip_suffix('.')?;
    let at = DateTime::parse_from_rfc3339(at).ok()?.with_timezone(&Utc);
    Some((upstream.to_string(), at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_good_note_reads_back() {
        let t = DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default();
        let note = last_good_note("https://u.example/graph?x=1", t);
        assert_eq!(
            note,
            "The updates listed are the last good answer of https://u.example/graph?x=1, at 2026-01-02T03:04:05Z."
        );
        let msg = format!("Unable to retrieve available updates: GET x: refused {note}");
        assert_eq!(
            last_good_answer(&msg),
            Some(("https://u.example/graph?x=1".to_string(), t))
        );
        assert_eq!(
            last_good_answer("Unable to retrieve available updates: refused"),
            None
        );
        assert_eq!(
            last_good_answer(&format!("{LAST_GOOD_PREFIX}x, at yesterday.")),
            None
        );
    }
}
