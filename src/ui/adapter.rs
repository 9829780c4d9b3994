//! The single place where the dashboard meets the assessment of `oc adm upgrade status`:
//! builds the [`Dashboard`] from the cluster state and overlays what the assessment knows.

use chrono::{DateTime, Utc};

use super::model::Dashboard;
use crate::{assess::alerts::Alerts, cluster::ClusterState};

/// The view model for `state` at `now`.
pub fn dashboard(state: &ClusterState, _alerts: Option<&Alerts>, _now: DateTime<Utc>) -> Dashboard {
    Dashboard::build(state)
}
