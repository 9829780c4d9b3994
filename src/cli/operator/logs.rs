//! The operator's logs: human text or one JSON object per line (`--log-format`), on stderr and,
//! with `--log-dir`, also in daily rotated files `DIR/cvo-operator.log.YYYY-MM-DD` (written by a
//! background thread, so a slow disk never stalls the engine).
//!
//! The filter is `-v LEVEL`'s when given ([`crate::cli::logging::verbosity_filter`]), else
//! `RUST_LOG` when set, else [`DEFAULT_FILTER`]. Nothing logged carries a secret:
//! the engine and the watches log object names, verbs and error texts, never request headers,
//! kubeconfig contents, pull secrets or Secret data.

use std::path::Path;

use clap::ValueEnum;
use tracing_subscriber::{Layer as _, fmt, prelude::*};

/// The filter when `RUST_LOG` is not set: the operator's own progress at `info`, kube's
/// per-request error lines off (cvo reports those errors itself).
pub const DEFAULT_FILTER: &str = "info,kube_client::client::builder=off,kube_runtime=warn";

/// File name prefix of the rotated log files in `--log-dir`.
pub const FILE_PREFIX: &str = "cvo-operator.log";

/// `--log-format`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    // (No doc comments on the variants: clap would print them in `--help`.)
    #[default]
    Text,
    Json,
}

/// Keeps the file writer flushing; hold it until the operator exits.
#[must_use = "dropping the guard stops the file logger"]
pub struct LogGuard {
    _file: Option<tracing_appender::non_blocking::WorkerGuard>,
}

/// Installs the global subscriber: `format` on stderr, and the same lines in daily rotated
/// files under `dir` when given (created if absent).
///
/// # Errors
/// `--log-dir DIR: ...` when the directory cannot be created or written; a subscriber already
/// installed.
pub fn init(format: LogFormat, dir: Option<&Path>) -> anyhow::Result<LogGuard> {
    let filter = || crate::cli::logging::env_filter(DEFAULT_FILTER);
    let layer = |w: fmt::writer::BoxMakeWriter| -> Box<dyn tracing_subscriber::Layer<_> + Send + Sync> {
        match format {
            LogFormat::Text => fmt::layer().with_writer(w).with_ansi(false).boxed(),
            LogFormat::Json => fmt::layer()
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .with_writer(w)
                .boxed(),
        }
    };
    let mut layers = vec![
        layer(fmt::writer::BoxMakeWriter::new(std::io::stderr))
            .with_filter(filter())
            .boxed(),
    ];
    let mut guard = None;
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("--log-dir {}: {e}", dir.display()))?;
        let appender = tracing_appender::rolling::RollingFileAppender::builder()
            .rotation(tracing_appender::rolling::Rotation::DAILY)
            .filename_prefix(FILE_PREFIX)
            .max_log_files(7)
            .build(dir)
            .map_err(|e| anyhow::anyhow!("--log-dir {}: {e}", dir.display()))?;
        let (w, g) = crate::logfile::file_writer(appender);
        guard = Some(g);
        layers.push(
            layer(fmt::writer::BoxMakeWriter::new(w))
                .with_filter(filter())
                .boxed(),
        );
    }
    tracing_subscriber::registry()
        .with(layers)
        .try_init()
        .map_err(|e| anyhow::anyhow!("logging: {e}"))?;
    Ok(LogGuard { _file: guard })
}
