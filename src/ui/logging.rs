//! File logging for the dashboard: never to the screen.

use tracing_appender::non_blocking::WorkerGuard;

/// Starts logging to a file. (Stub.)
///
/// # Errors
/// When the log directory cannot be created.
pub fn init_file_logging() -> anyhow::Result<Option<WorkerGuard>> {
    Ok(None)
}
