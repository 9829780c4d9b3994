//! File logging for the dashboard: never to the screen (the alternate screen would be
//! corrupted). Logs go to `$XDG_STATE_HOME/cvo/cvo.log`, else `~/.local/state/cvo/cvo.log`,
//! else the temp dir; `RUST_LOG` chooses the filter (default `info,kube=warn`).

use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::{EnvFilter, fmt, prelude::*};

/// Name of the log file inside the log directory.
pub const LOG_FILE: &str = "cvo.log";

/// The directory logs go to, by the rules above (`state_home` and `home` passed in so the
/// choice is testable).
pub fn log_dir(state_home: Option<&Path>, home: Option<&Path>) -> PathBuf {
    match (state_home, home) {
        (Some(s), _) if s.is_absolute() => s.join("cvo"),
        (_, Some(h)) if h.is_absolute() => h.join(".local/state/cvo"),
        _ => std::env::temp_dir().join("cvo"),
    }
}

/// Starts logging to a file and returns the guard that flushes it; keep it alive until exit.
/// Returns `Ok(None)` when a global subscriber is already installed.
///
/// # Errors
/// When no log directory can be created (the preferred one, then the temp dir).
pub fn init_file_logging() -> anyhow::Result<Option<WorkerGuard>> {
    let state_home = std::env::var_os("XDG_STATE_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let preferred = log_dir(state_home.as_deref(), home.as_deref());
    let dir = match std::fs::create_dir_all(&preferred) {
        Ok(()) => preferred,
        Err(_) => {
            let fallback = std::env::temp_dir().join("cvo");
            std::fs::create_dir_all(&fallback)
                .map_err(|e| anyhow::anyhow!("cannot create log directory {}: {e}", fallback.display()))?;
            fallback
        }
    };
    let appender = tracing_appender::rolling::never(&dir, LOG_FILE);
    let (writer, guard) = crate::logfile::file_writer(appender);
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,kube=warn"));
    let layer = fmt::layer().with_writer(writer).with_ansi(false);
    match tracing_subscriber::registry().with(filter).with(layer).try_init() {
        Ok(()) => {
            tracing::info!(dir = %dir.display(), "cvo dashboard logging started");
            Ok(Some(guard))
        }
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_dir_prefers_xdg_state_home() {
        let d = log_dir(Some(Path::new("/state")), Some(Path::new("/home/u")));
        assert_eq!(d, PathBuf::from("/state/cvo"));
        let d = log_dir(None, Some(Path::new("/home/u")));
        assert_eq!(d, PathBuf::from("/home/u/.local/state/cvo"));
        // Relative XDG paths are invalid by the spec and ignored.
        let d = log_dir(Some(Path::new("rel")), None);
        assert_eq!(d, std::env::temp_dir().join("cvo"));
    }
}
