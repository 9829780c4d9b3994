//! Firing alerts: the Prometheus `/api/v1/alerts` response.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The alerts of a Prometheus `/api/v1/alerts` response. (Stub.)
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Alerts {}

/// Reads a Prometheus `/api/v1/alerts` JSON file.
///
/// # Errors
/// A one-line error naming the file when it cannot be read or decoded.
pub fn load(path: &Path) -> anyhow::Result<Alerts> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
