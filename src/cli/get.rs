//! `cvo get`: the short tables of `oc get clusterversion` / `oc get clusteroperators`.

use chrono::{DateTime, Utc};

use crate::cluster::ClusterState;

/// `NAME VERSION AVAILABLE PROGRESSING SINCE STATUS`. (Stub.)
///
/// # Errors
/// When the state has no ClusterVersion.
pub fn cluster_version_table(_state: &ClusterState, _now: DateTime<Utc>) -> anyhow::Result<String> {
    Ok(String::new())
}

/// `NAME VERSION AVAILABLE PROGRESSING DEGRADED SINCE MESSAGE`. (Stub.)
pub fn cluster_operators_table(_state: &ClusterState, _now: DateTime<Utc>) -> String {
    String::new()
}
