//! Pure functions from cluster state to an assessment of the update: what
//! `oc adm upgrade status` computes (`openshift/oc pkg/cli/admin/upgrade/status/`).

pub mod alerts;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::cluster::ClusterState;

/// The whole assessment of a cluster's update at one instant. (Stub: filled by the assess work.)
#[derive(Clone, Debug, Default, Serialize)]
pub struct Assessment {
    /// The instant durations are measured against.
    pub now: Option<DateTime<Utc>>,
}

/// Assesses `state` at `now`, with optional firing alerts.
pub fn assess(_state: &ClusterState, _alerts: Option<&alerts::Alerts>, now: DateTime<Utc>) -> Assessment {
    Assessment { now: Some(now) }
}
