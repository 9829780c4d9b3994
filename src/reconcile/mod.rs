//! The reconcile engine: everything that decides what the CVO applies and how, with no UI
//! dependency (compiles with `--no-default-features`).
//!
//! Layers, and the only allowed dependencies between them (`a → b`: `a` uses `b`):
//!
//! - [`api`]: THE contract with the outside (the dashboard, `cvo reconcile`, `cvo demo`): the
//!   [`api::StatusSnapshot`] the engine publishes, the [`api::Command`]s it takes, the
//!   [`api::EngineHandle`] that carries both, and where payloads come from
//!   ([`api::PayloadResolver`]). It depends on nothing else in `reconcile`; everything else
//!   may depend on it.
//! - [`errors`]: the one error vocabulary of the engine (upstream `pkg/payload/task.go`
//!   `UpdateError`, the API-error classes, condensing and summarising), shared by the apply
//!   layer, the sync worker and the status algorithm.
//! - [`payload`]: load a release payload directory, filter its manifests (capabilities,
//!   profiles, overrides), build the task graph and run it. Pure but for reading files.
//! - [`apply`]: per-kind merge ("ensure"), readiness, ClusterOperator health, deletions and the
//!   apply step with dry-run drift; [`apply::KubeApplier`] is the sync worker's applier.
//!   Depends on `payload`, `errors`, `api`.
//! - [`status`]: the pure ClusterVersion status algorithm: the sync worker's report
//!   ([`status::worker_status`]), conditions and history ([`status`]), spec validation
//!   ([`status::validation`]) and Upgradeable / preconditions ([`status::upgradeable`]). No I/O,
//!   no clock. Depends on `errors`, `payload`.
//! - [`runtime`]: the engine loop, the sync worker, the guarded client, leader election, the
//!   event log; [`Engine::spawn`] starts it. Depends on all of the above.
//! - [`updates`]: the update-service client (graph request, next hops, risk evaluation, the
//!   polling loop) behind `availableUpdates`, `conditionalUpdates` and `RetrievedUpdates`.
//!
//! Callers start the engine with [`Engine::spawn`] and an [`EngineConfig`], then use only
//! [`api`] types.

pub mod api;
pub mod apply;
pub mod errors;
pub mod metrics;
pub mod payload;
pub mod runtime;
pub mod signature;
pub mod status;
pub mod updates;

pub use runtime::{
    Engine, EngineConfig, EngineTimings, RetryPolicy,
    leader::{LeaseConfig, LeaseTimings, default_identity},
};
pub use updates::UpdatesConfig;
