//! The engine's runtime: everything that does I/O against the cluster and runs over time.
//!
//! - [`engine`]: the loop around the sync worker (read the ClusterVersion, pick the target,
//!   load its payload, write the status) and [`Engine::spawn`], the entry point;
//! - [`sync_worker`]: apply passes over a payload's task graph, with retries and backoff;
//! - [`timings`]: every interval the engine uses;
//! - [`client`]: the request counter and the watch-only guard around the `kube::Client`;
//! - [`leader`]: Lease-based leader election;
//! - [`co_nudge`]: wakes the sync worker when a ClusterOperator changes;
//! - [`events`]: the event log of the snapshot;

pub mod client;
pub mod co_nudge;
pub mod engine;
pub mod events;
pub mod leader;
pub mod sync_worker;
pub mod timings;

pub use engine::{Engine, EngineConfig};
pub use timings::{EngineTimings, RetryPolicy};
