//! The reconcile engine: everything that decides what the CVO applies and how, with no UI
//! dependency (compiles with `--no-default-features`).
//!
//! - [`payload`]: load a release payload directory, filter its manifests, build the task graph
//!   and run it;
//! - [`capability`]: known / enabled / implicitly enabled capabilities.

pub mod capability;
pub mod payload;
