//! cvo: a Cluster Version Operator for OpenShift-compatible clusters.
//!
//! One binary with three faces: a ratatui dashboard (`ui`, behind the `tui` feature), a headless
//! operator (`cli::operator`, behind the `operator` feature), and one-shot commands (`cli`). The
//! simulated Kubernetes API (`sim`), the live demo (`cli::demo`) and its embedded payloads are
//! behind the `sim` feature; all three features are on by default, and `--no-default-features`
//! builds the engine and the one-shot commands alone. See docs/architecture.md for the layout
//! and where each command and behaviour lives, docs/commands.md for every command.

pub mod assess;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod cow_vec;
pub mod informers;
pub mod l10n;
#[cfg(any(feature = "tui", feature = "operator"))]
pub mod logfile;
pub mod openshift;
pub mod reconcile;
pub mod signals;
#[cfg(feature = "sim")]
pub mod sim;
pub mod spec_request;
#[cfg(feature = "tui")]
pub mod ui;

/// The name of the command this process runs, set once by `main` ([`set_command_name`]).
static COMMAND_NAME: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Records the command this process runs (`status`, `get`, `upgrade`, ...), which
/// [`user_agent`] names. Called once by `main` after parsing; later calls are ignored.
pub fn set_command_name(name: &'static str) {
    let _ = COMMAND_NAME.set(name);
}

/// The `User-Agent` of every request cvo sends, so audit logs attribute requests:
/// `cvo/<version> (<command>)`, the command being the one `main` parsed
/// ([`set_command_name`]: `status`, `get`, `upgrade`, `tui`, `reconcile`, `operator`, ...),
/// else `cvo` (tests, library use).
pub fn user_agent() -> String {
    let command = COMMAND_NAME.get().copied().unwrap_or("cvo");
    format!("cvo/{} ({command})", env!("CARGO_PKG_VERSION"))
}
