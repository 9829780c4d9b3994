//! An in-memory Kubernetes API for the demo and tests: an object store with kube-apiserver
//! semantics ([`store`]) behind a `tower::Service` that a `kube::Client` talks to
//! ([`server::Simulator`]), with a request audit log. The reconcile engine never imports it.
//! [`faults`] injects latency, errors, dropped watches, `410 Gone` and `409 Conflict`
//! ([`Simulator::set_faults`]); [`serve`] is `cvo sim serve`, the simulator over HTTPS with a
//! kubeconfig, an audit log file and scripted scenarios.
//!
//! ```no_run
//! # async fn demo(state: &cvo::cluster::ClusterState) -> anyhow::Result<()> {
//! let sim = cvo::sim::Simulator::from_state(state)?;
//! let client = kube::Client::new(sim.clone(), "default");
//! let seen = cvo::cluster::live::fetch_state(&client, "sim").await?;
//! assert_eq!(sim.audit().writes(), 0);
//! # let _ = seen;
//! # Ok(())
//! # }
//! ```

pub mod faults;
pub mod serve;
pub mod server;
pub mod store;

pub use faults::Faults;
pub use server::{Audit, AuditEntry, Simulator};
pub use store::{ApiError, ResourceType};
