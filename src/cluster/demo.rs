//! The demo cluster shipped in `assets/demo/`: a mid-update cluster with a stuck operator.

use super::ClusterState;

/// Loads the demo cluster. (Stub.)
///
/// # Errors
/// Only if the embedded assets are malformed.
pub fn demo_state() -> anyhow::Result<ClusterState> {
    Ok(ClusterState {
        source: "demo".into(),
        ..Default::default()
    })
}
