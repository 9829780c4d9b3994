//! Logging for every command: one-shot and headless commands log to stderr (default level
//! `warn`, see [`DEFAULT_STDERR_FILTER`]), the dashboard logs to a file (`ui::logging`, default `info,kube=warn`) so the
//! screen stays clean. `RUST_LOG` overrides the filter for both (`EnvFilter` syntax, e.g.
//! `RUST_LOG=debug` or `RUST_LOG=cvo=debug,kube=info`).
//!
//! `-v LEVEL` (kubectl's verbosity flag, global) chooses the filter of stderr logging and of
//! the operator's logs instead, over `RUST_LOG` ([`verbosity_filter`] says what each level
//! shows); the dashboard's log file keeps `RUST_LOG`.
//!
//! Nothing cvo logs carries a secret: bearer tokens, client keys and kubeconfig contents are
//! never put in log fields (kube's own request spans carry the method and URL only).

use std::io::IsTerminal as _;

use tracing_subscriber::{EnvFilter, fmt, prelude::*};

/// Where a command's logs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogSink {
    /// Standard error: one-shot and headless commands.
    Stderr,
    /// The dashboard's log file: commands that draw on the terminal.
    #[cfg(feature = "tui")]
    File,
    /// None here: the command installs its own subscriber (`cvo operator start`, whose
    /// `--log-format` and `--log-dir` decide).
    Own,
}

/// Keeps the logger flushing; hold it until the command ends.
#[must_use = "dropping the guard stops the file logger"]
pub struct LogGuard {
    #[cfg(feature = "tui")]
    _file: Option<tracing_appender::non_blocking::WorkerGuard>,
}

/// The filter of stderr logging when `RUST_LOG` is not set: warnings and errors, except kube's
/// per-request "failed with error/status" lines (`kube_client::client::builder`), which repeat
/// an error the request returns and cvo reports itself (a one-line error stays one line).
pub const DEFAULT_STDERR_FILTER: &str = "warn,kube_client::client::builder=off";

/// The `-v` level given on the command line, set once by `main` ([`set_verbosity`]).
static VERBOSITY: std::sync::OnceLock<u8> = std::sync::OnceLock::new();

/// Records `-v LEVEL` for the loggers installed after it. Later calls are ignored.
pub fn set_verbosity(level: u8) {
    let _ = VERBOSITY.set(level);
}

/// The filter of `-v LEVEL`, after kubectl's levels (0 the default, 6 each request's URL,
/// 8 and up everything):
///
/// | level | shows |
/// |---|---|
/// | 0 | warnings and errors (the default) |
/// | 1–2 | cvo's progress (`info`) |
/// | 3–5 | cvo's debug lines |
/// | 6–7 | and each API request (`kube_client` / `kube_runtime` debug: method, URL, status) |
/// | 8+ | everything at debug, cvo and kube at trace (HTTP, TLS) |
pub fn verbosity_filter(level: u8) -> &'static str {
    match level {
        0 => DEFAULT_STDERR_FILTER,
        1..=2 => "info,kube_client::client::builder=off",
        3..=5 => "info,cvo=debug,kube_client::client::builder=off",
        6..=7 => "info,cvo=debug,kube_client=debug,kube_runtime=debug",
        _ => "debug,cvo=trace,kube_client=trace,kube_runtime=trace",
    }
}

/// The filter of a logger whose default is `default`: `-v`'s when given, else `RUST_LOG`'s,
/// else `default`.
pub fn env_filter(default: &str) -> EnvFilter {
    if let Some(level) = VERBOSITY.get() {
        return EnvFilter::new(verbosity_filter(*level));
    }
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default))
}

/// Installs the global tracing subscriber for `sink`. Does nothing when one is already
/// installed.
///
/// # Errors
/// For [`LogSink::File`], when no log directory can be created.
pub fn init(sink: LogSink) -> anyhow::Result<LogGuard> {
    match sink {
        LogSink::Stderr => {
            init_stderr();
            Ok(LogGuard {
                #[cfg(feature = "tui")]
                _file: None,
            })
        }
        LogSink::Own => Ok(LogGuard {
            #[cfg(feature = "tui")]
            _file: None,
        }),
        #[cfg(feature = "tui")]
        LogSink::File => Ok(LogGuard {
            _file: crate::ui::logging::init_file_logging()?,
        }),
    }
}

/// Logs to stderr, filtered by `RUST_LOG` (else [`DEFAULT_STDERR_FILTER`]); colours only on a
/// terminal. Returns whether this call installed the subscriber.
pub fn init_stderr() -> bool {
    let filter = env_filter(DEFAULT_STDERR_FILTER);
    let layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    tracing_subscriber::registry()
        .with(filter)
        .with(layer)
        .try_init()
        .is_ok()
}
