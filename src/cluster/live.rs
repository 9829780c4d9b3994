//! A live cluster: kubeconfig / in-cluster client, one-shot fetch, and watchers.

use std::{path::Path, sync::Arc};

use tokio::sync::watch;

use super::ClusterState;

/// A connected client and the name of the context it came from.
pub struct Connection {
    /// The client.
    pub client: kube::Client,
    /// Context name (or `in-cluster`).
    pub context: String,
}

/// Connects like kubectl. (Stub.)
///
/// # Errors
/// A broken kubeconfig or unreachable cluster.
pub async fn connect(_kubeconfig: Option<&Path>, _context: Option<&str>) -> anyhow::Result<Connection> {
    anyhow::bail!("live clusters are not implemented yet")
}

/// Lists every kind once. (Stub.)
///
/// # Errors
/// API errors.
pub async fn fetch_state(_client: &kube::Client, _context: &str) -> anyhow::Result<ClusterState> {
    anyhow::bail!("live clusters are not implemented yet")
}

/// Starts watchers; returns the feed. (Stub.)
pub fn watch_state(_client: kube::Client, context: String) -> watch::Receiver<Arc<ClusterState>> {
    watch::channel(Arc::new(ClusterState { source: context, ..Default::default() })).1
}
