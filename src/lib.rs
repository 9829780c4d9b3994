//! cvo: a Cluster Version Operator for OpenShift-compatible clusters.
//!
//! One binary with three faces: a ratatui dashboard (`ui`, behind the `tui` feature), a headless
//! operator, and one-shot commands (`cli`). The simulated Kubernetes API (`sim`), the live demo
//! (`cli::demo`) and its embedded payloads are behind the `sim` feature; both features are on by
//! default, and `--no-default-features` builds the engine and the one-shot commands alone. See
//! the "Layout" section of README.md for the layout.

pub mod assess;
pub mod cli;
pub mod cluster;
pub mod openshift;
pub mod reconcile;
#[cfg(feature = "sim")]
pub mod sim;
#[cfg(feature = "tui")]
pub mod ui;
