//! The reconcile engine: everything that decides what the CVO applies and how, with no UI
//! dependency (compiles with `--no-default-features`; design.md "Layout").
//!
//! - [`payload`]: load a release payload directory, filter its manifests, build the task graph
//!   and run it;
//! - [`apply`]: per-kind merge ("ensure"), readiness, ClusterOperator health and the apply
//!   step with dry-run drift;
//! - [`leader`]: Lease-based leader election, so only one active cvo writes to a cluster;
//! - [`capability`]: known / enabled / implicitly enabled capabilities;
//! - the pure core of the ClusterVersion status writer: the error vocabulary ([`errors`]), the
//!   sync worker's report ([`worker_status`]), the status algorithm ([`status`]), spec
//!   validation ([`validation`]) and Upgradeable / preconditions ([`upgradeable`]);
//! - the engine: the sync worker ([`sync_worker`]), the loop around it ([`engine`]), the client
//!   guards ([`client`]), a generic applier ([`basic_apply`]) and the contract with the outside
//!   ([`api`]).

pub mod apply;
pub mod capability;
pub mod errors;
pub mod leader;
pub mod payload;
pub mod status;
pub mod upgradeable;
pub mod validation;
pub mod worker_status;

pub mod api;
pub mod basic_apply;
pub mod client;
pub mod co_nudge;
pub mod engine;
pub mod events;
pub mod sync_worker;
pub mod update_graph;
