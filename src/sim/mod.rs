//! An in-memory Kubernetes API for the demo and tests: an object store with kube-apiserver
//! semantics ([`store`]) behind a `tower::Service` that a `kube::Client` talks to
//! ([`server::Simulator`]), with a request audit log. The reconcile engine never imports it.

pub mod server;
pub mod store;

pub use server::{Audit, AuditEntry, Simulator};
