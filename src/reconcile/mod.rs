//! The reconcile engine, with no UI dependency (design.md "Layout"); compiles with
//! `--no-default-features` and never imports `crate::sim`.
//!
//! - [`leader`]: Lease-based leader election, so only one active cvo writes to a cluster.

pub mod leader;
