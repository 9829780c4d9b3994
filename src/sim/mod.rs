//! An in-memory Kubernetes API for the demo and tests: an object store with kube-apiserver
//! semantics ([`store`]) behind a `tower::Service` that a `kube::Client` talks to
//! ([`server::Simulator`]), with a request audit log. The reconcile engine never imports it.
//! [`faults`] injects latency, errors, dropped watches, `410 Gone` (in the stream or as the
//! HTTP answer) and `409 Conflict`, also timed and per resource or verb
//! ([`Simulator::set_faults`]); [`serve`] is `cvo sim serve`, the simulator over HTTPS with a
//! kubeconfig, an audit log file and scripted scenarios. [`demo_cluster`] seeds the live demo's
//! cluster (4.16.3, everything of `assets/demo-cluster/`, embedded) and [`operators`] plays the
//! cluster operators, the machine-config pools and nodes and the kubelet during an update.
//!
//! What it does as kube-apiserver does (`tests/api_conformance.rs` checks each, and runs the
//! same cases against a real cluster when `CVO_TEST_KUBECONFIG` is set):
//! - kinds: core, apps, batch, coordination, RBAC, apiextensions, admissionregistration,
//!   policy, scheduling, events, apiregistration, and the OpenShift `config.openshift.io` /
//!   `machineconfiguration.openshift.io` kinds ([`store::builtin_types`]); creating a
//!   CustomResourceDefinition serves its kind (scope, versions, status subresource) and marks
//!   it `Established`; deleting it removes its objects and kind;
//! - `/version`, OpenAPI v3 per group-version with the write parameters kubectl checks for
//!   server-side field validation, and `Table` answers (`kubectl get`, and its watch `get -w`) with each kind's
//!   printer columns (a CRD's `additionalPrinterColumns`, the OpenShift kinds', Nodes');
//! - discovery, get, list (label/field selectors, `limit`/`continue`, `resourceVersionMatch`
//!   `Exact` served from the event log and `NotOlderThan`), watch (from a
//!   resourceVersion, `410 Expired`, `timeoutSeconds`, the `initial-events-end` bookmark and
//!   one every [`server::DEFAULT_BOOKMARK_INTERVAL`]), create (`generateName`, `409 AlreadyExists`),
//!   update (`409 Conflict`), delete (finalizers, `deletionTimestamp`), deletecollection,
//!   `dryRun`, the status subresource, `metadata.generation` on spec changes of the kinds that
//!   keep one, `uid`, `creationTimestamp`;
//! - patches ([`patch`]): JSON patch, JSON merge patch, strategic merge patch with the
//!   built-in merge keys (`415` for CRD-defined kinds), server-side apply with
//!   `managedFields`, conflicts naming the manager, and `force`; other writes record `Update`
//!   entries for their `fieldManager` (or the `User-Agent` prefix, else `unknown`);
//! - namespaces: `Terminating` on delete, contents deleted, then removed; creating in a
//!   terminating namespace is `403 Forbidden`, in a missing one `404 NotFound`.
//!
//! - custom resources need `apiVersion` and `kind` (built-in kinds may leave them out) and are
//!   pruned, defaulted and validated against their CRD's `openAPIV3Schema` (`422 Invalid` with
//!   kube-apiserver's messages and `details.causes`), their `/status` too; a replace needs
//!   their `resourceVersion`; built-in kinds get kube-apiserver's server-side defaults (pod
//!   templates, Deployment, DaemonSet, StatefulSet, Job, Service, Secret, PriorityClass, ...)
//!   and lose zero values Go omits;
//! - a created CRD answers with an empty status and is established (its kind served) within
//!   the create, or after [`Simulator::set_crd_establish_delay`].
//!
//! Differences: controllers run synchronously inside the write that triggers them (a namespace
//! emptied at once; a CRD established at once unless delayed), and the window after a CRD is
//! established in which kube-apiserver answers `429 storage is (re)initializing` is not
//! played; CRD schemas are checked without CEL rules, `allOf`/`anyOf`/`oneOf` or list-type
//! uniqueness; the OpenShift kinds served built in have no schema; a CRD's objects are
//! removed without waiting on their finalizers; built-in kinds are not validated beyond names
//! and kinds; list semantics for server-side apply come from the merge-key table, not OpenAPI;
//! a watch from a version the event log no longer holds is `410 Expired` (a real server keeps
//! versions until etcd is compacted, every 5 minutes); the log holds a bounded window of
//! events ([`Simulator::set_event_capacity`]); OpenAPI documents (v3, and v2 in JSON) carry a
//! CRD-defined kind's schema but only the top-level fields of other kinds (`kubectl explain
//! co.spec` works, `kubectl explain cm.data` does not), and `fieldValidation` is accepted but
//! not enforced; a TokenRequest (`kubectl create token`) is not served. Request bodies in
//! protobuf (kubectl's typed clients: `kubectl create namespace|configmap|deployment|secret`,
//! `kubectl auth can-i`) are decoded for the built-in kinds of core, apps, batch, rbac,
//! policy, networking, scheduling, coordination, authorization and authentication `v1`
//! (`server/protobuf.rs`; a pointer field set to its zero, `--replicas=0`, reads as absent);
//! for custom resources they are `415 UnsupportedMediaType`, as on a real server. A
//! SelfSubjectAccessReview is allowed (the one user is an administrator) and not stored, and
//! `authorization.k8s.io` is not in discovery. Answers are JSON: an `Accept` without a JSON
//! type is `406 NotAcceptable`, one with protobuf first (kubectl's) is answered in
//! JSON. Objects are stored as their JSON text ([`store::Stored`]), so memory is about their
//! JSON size per object and version kept.
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

pub mod alerts_endpoint;
pub mod audit;
pub mod demo_cluster;
pub mod faults;
pub mod operators;
pub mod patch;
pub mod response;
pub mod serve;
pub mod server;
pub mod store;
pub mod update_service;

pub use audit::{Audit, AuditEntry};
pub use demo_cluster::demo_cluster;
pub use faults::Faults;
pub use operators::{OperatorScenario, OperatorSimConfig, OperatorSimHandle};
pub use server::Simulator;
pub use store::{ApiError, ResourceType};
