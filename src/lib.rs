//! cvo: a Cluster Version Operator for OpenShift-compatible clusters.
//!
//! One binary with three faces: a ratatui dashboard (`ui`, behind the `tui` feature), a headless
//! operator, and one-shot commands (`cli`). See `docs/design.md` for the layout.

pub mod assess;
pub mod cli;
pub mod cluster;
pub mod openshift;
pub mod reconcile;
pub mod sim;
#[cfg(feature = "tui")]
pub mod ui;
