//! The reconcile engine, with no UI dependency (design.md "Layout").
//!
//! This part holds the pure core of the ClusterVersion status writer: the error vocabulary
//! ([`errors`]), the sync worker's report ([`worker_status`]), the status algorithm
//! ([`status`]), spec validation ([`validation`]) and Upgradeable / preconditions
//! ([`upgradeable`]). None of them does I/O.

pub mod errors;
pub mod status;
pub mod upgradeable;
pub mod validation;
pub mod worker_status;
