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
}
