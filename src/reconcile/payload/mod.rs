//! Port of pkg/payload (and library-go pkg/manifest): the release payload engine.
//!
//! 1. [`load`]: read a payload directory (`manifests/` rendered as templates, then
//!    `release-manifests/`), `release-metadata`, `image-references`, the `versionHash`;
//! 2. [`filter`]: which manifests a cluster applies and why others are excluded;
//! 3. [`task_graph`]: tasks, the task graph per [`PayloadState`], and [`run_graph`].
//!
//! ```no_run
//! use cvo::reconcile::payload::{self, PayloadState, Task};
//! let p = payload::load_update("/release".as_ref(), &payload::LoadOptions::default())?;
//! let (graph, workers) = payload::graph_for_state(Task::from_manifests(&p.manifests), PayloadState::Updating, 0);
//! println!("{} nodes, {workers} workers, hash {}", graph.nodes.len(), p.manifest_hash);
//! # Ok::<(), payload::LoadError>(())
//! ```

pub mod capability;
pub mod digest;
pub mod files;
pub mod filter;
pub mod load;
pub mod manifest;
pub mod retrieve;
pub mod task_graph;
pub mod template;
pub mod yaml;

pub use filter::{
    ComponentOverride, ExclusionReason, InclusionConfig, implicitly_enabled_capabilities, include,
};
pub use load::{
    ImageReferences, LoadError, LoadOptions, LoadedPayload, Payload, PayloadLayout, Release, ReleaseMetadata,
    load_dir, load_update, manifest_hash,
};
pub use manifest::{InvalidManifest, Manifest, ManifestError, ResourceId, parse_manifests};
pub use task_graph::{
    Buckets, GraphError, PayloadState, Task, TaskGraph, TaskNode, TaskRunner, by_number_and_component,
    flatten_by_number_and_component, graph_for_state, permute_order, run_graph, run_level_and_component,
    shift_order,
};
pub use template::{RenderConfig, TemplateError};
