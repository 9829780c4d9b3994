//! The ratatui dashboard (feature `tui`).

pub mod logging;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use crate::{assess::alerts::Alerts, cluster::ClusterState};

/// What the dashboard shows.
pub struct UiOptions {
    /// The cluster state feed (static for snapshots, live for clusters).
    pub feed: watch::Receiver<Arc<ClusterState>>,
    /// Firing alerts, if given.
    pub alerts: Option<Alerts>,
    /// Fixed "now"; `None` means the wall clock (live) or the snapshot time (static).
    pub now: Option<DateTime<Utc>>,
}

/// Runs the dashboard until the user quits. (Stub.)
///
/// # Errors
/// Terminal I/O errors.
pub async fn run(_opts: UiOptions) -> anyhow::Result<()> {
    Ok(())
}
