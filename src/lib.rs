//! cvo: a Cluster Version Operator for OpenShift-compatible clusters.
//!
//! One binary with three faces: a ratatui dashboard (`ui`, behind the `tui` feature), a headless
//! operator, and one-shot commands (`cli`). The simulated Kubernetes API (`sim`), the live demo
//! (`cli::demo`) and its embedded payloads are behind the `sim` feature; both features are on by
//! default, and `--no-default-features` builds the engine and the one-shot commands alone. See
//! the "Layout" section of README.md for the layout.

pub mod assess;
pub mod cli;
pub mod clock;
pub mod cluster;
#[cfg(any(feature = "tui", feature = "operator"))]
pub mod logfile;
pub mod openshift;
pub mod reconcile;
#[cfg(feature = "sim")]
pub mod sim;
#[cfg(feature = "tui")]
pub mod ui;

/// The commands [`user_agent`] recognises as the first non-flag argument.
const COMMANDS: [&str; 8] = [
    "reconcile",
    "status",
    "get",
    "tui",
    "demo",
    "sim",
    "payload",
    "operator",
];

/// The `User-Agent` of every request cvo sends, so audit logs attribute requests:
/// `cvo/<version> (<command>)`, the command being the first argument of the process that names
/// a subcommand (`reconcile`, `status`, `get`, `tui`, `demo`, `sim`, `payload`), else `cvo`
/// (tests, or `cvo` with no command).
pub fn user_agent() -> String {
    let command = std::env::args()
        .skip(1)
        .find(|a| COMMANDS.contains(&a.as_str()))
        .unwrap_or_else(|| "cvo".to_owned());
    format!("cvo/{} ({command})", env!("CARGO_PKG_VERSION"))
}
