//! The reconcile engine (design.md "Layout"), with no UI dependency: it compiles without the
//! `tui` feature and never imports `crate::sim`.
//!
//! - [`payload`]: load a release payload directory, filter its manifests, build the task graph
//!   and run it; [`capability`]: known / enabled / implicitly enabled capabilities;
//! - [`apply`]: resource merge ("ensure") per kind, builders, readiness and ClusterOperator health
//!   checks, and the apply step with its dry-run drift;
//! - the pure core of the ClusterVersion status writer: the error vocabulary ([`errors`]), the
//!   sync worker's report ([`worker_status`]), the status algorithm ([`status`]), spec
//!   validation ([`validation`]) and Upgradeable / preconditions ([`upgradeable`]);
//! - [`leader`]: Lease-based leader election.

pub mod apply;
pub mod capability;
pub mod errors;
pub mod leader;
pub mod payload;
pub mod status;
pub mod upgradeable;
pub mod validation;
pub mod worker_status;
