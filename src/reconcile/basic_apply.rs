//! A small [`TaskApplier`] over the kube API with upstream's generic apply rule (cvo-spec row
//! 89/90, pkg/cvo/internal/generic.go) and the ClusterOperator health check (§2.8.3,
//! internal/operatorstatus.go). It is the engine's fallback until the per-kind apply layer
//! (`reconcile::apply`) is wired in, and the reference the scenario tests run against.
//!
//! Per manifest: GET; absent ⇒ CREATE (create-only manifests stop here); present ⇒ copy every
//! top-level key but `apiVersion`/`kind`/`metadata`/`status` from the manifest, key-merge labels
//! and annotations, and UPDATE only if that changed the object. Dry-run sends no write and
//! returns the [`Drift`]. Deletion manifests DELETE in Updating mode only.

use std::{collections::HashMap, sync::Mutex};

use futures::{FutureExt, future::BoxFuture};
use kube::{
    Api, Client,
    api::{ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams},
    discovery::Scope,
};
use serde_json::{Map, Value};

use super::{
    errors::{ApiErrorKind, UpdateEffect, UpdateError},
    payload::{PayloadState, Task},
    sync_worker::{Drift, TaskApplier, TaskContext, TaskOutcome},
};
use crate::openshift::{ClusterOperator, ConditionStatus};

/// Discovery cache: (group, version, kind) → (resource, namespaced).
type ResourceCache = HashMap<(String, String, String), (ApiResource, bool)>;

/// The generic applier (see the module docs). Discovery results are cached per
/// group/version/kind for the applier's life.
pub struct BasicApplier {
    client: Client,
    resources: Mutex<ResourceCache>,
}

impl std::fmt::Debug for BasicApplier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicApplier").finish_non_exhaustive()
    }
}

/// Turns a kube error into the update error of §2.4.1: `Could not update {task}: {cause}`.
pub fn api_update_error(task: &Task, err: &kube::Error) -> UpdateError {
    let kind = match err {
        kube::Error::Api(s) => ApiErrorKind::from_status(s.code, &s.reason),
        _ => ApiErrorKind::ServiceUnavailable,
    };
    let (reason, cause) = kind.reason_and_cause();
    let message = if cause.is_empty() {
        format!("Could not update {task}")
    } else {
        format!("Could not update {task}: {cause}")
    };
    let mut e = UpdateError::new(reason, message).with_name(task.manifest.id.name.clone());
    e.nested = vec![super::errors::SyncError::plain(err.to_string())];
    e
}

fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

impl BasicApplier {
    /// An applier writing through `client`.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            resources: Mutex::new(HashMap::new()),
        }
    }

    async fn api(&self, task: &Task) -> Result<Api<DynamicObject>, UpdateError> {
        let m = &task.manifest;
        let key = (m.group.clone(), m.version.clone(), m.id.kind.clone());
        let cached = self
            .resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
            .cloned();
        let (ar, namespaced) = match cached {
            Some(x) => x,
            None => {
                let gvk = GroupVersionKind::gvk(&m.group, &m.version, &m.id.kind);
                let (ar, caps) = kube::discovery::pinned_kind(&self.client, &gvk)
                    .await
                    .map_err(|e| {
                        let (reason, cause) = ApiErrorKind::NoKindMatch.reason_and_cause();
                        let mut u = UpdateError::new(reason, format!("Could not update {task}: {cause}"));
                        u.nested = vec![super::errors::SyncError::plain(e.to_string())];
                        u
                    })?;
                let v = (ar, caps.scope == Scope::Namespaced);
                self.resources
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(key, v.clone());
                v
            }
        };
        Ok(if namespaced {
            Api::namespaced_with(self.client.clone(), &m.id.namespace, &ar)
        } else {
            Api::all_with(self.client.clone(), &ar)
        })
    }

    async fn apply_task(&self, task: &Task, ctx: TaskContext<'_>) -> Result<TaskOutcome, UpdateError> {
        let m = &task.manifest;
        let delete = m
            .delete_requested()
            .map_err(|e| UpdateError::new("UpdatePayloadIntegrity", e))?;
        let api = self.api(task).await?;
        let live = api
            .get_opt(&m.id.name)
            .await
            .map_err(|e| api_update_error(task, &e))?;
        if delete {
            return self.delete(task, ctx, &api, live).await;
        }
        if m.id.kind == "ClusterOperator" && m.group == "config.openshift.io" {
            let live = live.ok_or_else(|| {
                let (reason, cause) = ApiErrorKind::NotFound.reason_and_cause();
                UpdateError::new(reason, format!("Could not update {task}: {cause}"))
                    .with_name(m.id.name.clone())
            })?;
            check_operator_health(&m.object, &live, ctx.state)?;
            return Ok(TaskOutcome {
                drift: Drift::None,
                wrote: false,
            });
        }
        let mut required = m.object.clone();
        if let Some(o) = required.as_object_mut() {
            o.remove("status");
        }
        let Some(live) = live else {
            if ctx.dry_run {
                return Ok(TaskOutcome {
                    drift: Drift::Create { object: required },
                    wrote: false,
                });
            }
            let obj: DynamicObject = serde_json::from_value(required.clone()).map_err(|e| {
                UpdateError::new("UpdatePayloadFailed", format!("Could not update {task}: {e}"))
            })?;
            api.create(&PostParams::default(), &obj)
                .await
                .map_err(|e| api_update_error(task, &e))?;
            return Ok(TaskOutcome {
                drift: Drift::Create { object: required },
                wrote: true,
            });
        };
        if m.create_only() {
            return Ok(TaskOutcome {
                drift: Drift::None,
                wrote: false,
            });
        }
        let live_v = serde_json::to_value(&live)
            .map_err(|e| UpdateError::new("UpdatePayloadFailed", format!("Could not update {task}: {e}")))?;
        let merged = generic_merge(&live_v, &required);
        if merged == live_v {
            return Ok(TaskOutcome {
                drift: Drift::None,
                wrote: false,
            });
        }
        let diff = super::apply::diff_values(&live_v, &merged);
        if ctx.dry_run {
            return Ok(TaskOutcome {
                drift: Drift::Update { diff },
                wrote: false,
            });
        }
        let obj: DynamicObject = serde_json::from_value(merged)
            .map_err(|e| UpdateError::new("UpdatePayloadFailed", format!("Could not update {task}: {e}")))?;
        api.replace(&m.id.name, &PostParams::default(), &obj)
            .await
            .map_err(|e| api_update_error(task, &e))?;
        Ok(TaskOutcome {
            drift: Drift::Update { diff },
            wrote: true,
        })
    }

    async fn delete(
        &self,
        task: &Task,
        ctx: TaskContext<'_>,
        api: &Api<DynamicObject>,
        live: Option<DynamicObject>,
    ) -> Result<TaskOutcome, UpdateError> {
        let none = TaskOutcome {
            drift: Drift::None,
            wrote: false,
        };
        if ctx.state != PayloadState::Updating || live.is_none() {
            return Ok(none);
        }
        if ctx.dry_run {
            return Ok(TaskOutcome {
                drift: Drift::Delete,
                wrote: false,
            });
        }
        match api.delete(&task.manifest.id.name, &DeleteParams::default()).await {
            Ok(_) => Ok(TaskOutcome {
                drift: Drift::Delete,
                wrote: true,
            }),
            Err(e) if is_not_found(&e) => Ok(none),
            Err(e) => Err(api_update_error(task, &e)),
        }
    }

    async fn precreate(&self, task: &Task, ctx: TaskContext<'_>) -> Result<bool, UpdateError> {
        if ctx.dry_run {
            return Ok(false);
        }
        let m = &task.manifest;
        let api = self.api(task).await?;
        if api
            .get_opt(&m.id.name)
            .await
            .map_err(|e| api_update_error(task, &e))?
            .is_some()
        {
            return Ok(false);
        }
        let mut obj = m.object.clone();
        let related = m.object.pointer("/status/relatedObjects").cloned();
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
        }
        let obj: DynamicObject = serde_json::from_value(obj)
            .map_err(|e| UpdateError::new("UpdatePayloadFailed", format!("Could not update {task}: {e}")))?;
        let mut created = api
            .create(&PostParams::default(), &obj)
            .await
            .map_err(|e| api_update_error(task, &e))?;
        if let Some(related) = related {
            created.data["status"] = serde_json::json!({ "relatedObjects": related });
            api.replace_status(&m.id.name, &PostParams::default(), &created)
                .await
                .map_err(|e| api_update_error(task, &e))?;
        }
        Ok(true)
    }
}

impl TaskApplier for BasicApplier {
    fn apply<'a>(
        &'a self,
        task: &'a Task,
        ctx: TaskContext<'a>,
    ) -> BoxFuture<'a, Result<TaskOutcome, UpdateError>> {
        self.apply_task(task, ctx).boxed()
    }

    fn precreate_cluster_operator<'a>(
        &'a self,
        task: &'a Task,
        ctx: TaskContext<'a>,
    ) -> BoxFuture<'a, Result<bool, UpdateError>> {
        self.precreate(task, ctx).boxed()
    }
}

/// The generic merge (generic.go): `required`'s top-level keys other than `apiVersion`, `kind`,
/// `metadata` and `status` replace the live ones; labels and annotations are key-merged.
pub fn generic_merge(live: &Value, required: &Value) -> Value {
    let mut out = live.clone();
    let (Some(o), Some(r)) = (out.as_object_mut(), required.as_object()) else {
        return out;
    };
    for (k, v) in r {
        if matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status") {
            continue;
        }
        o.insert(k.clone(), v.clone());
    }
    for key in ["labels", "annotations"] {
        let Some(req) = required
            .pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let meta = o.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            let entry = meta.entry(key).or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            if let Some(e) = entry.as_object_mut() {
                for (k, v) in req {
                    e.insert(k.clone(), v.clone());
                }
            }
        }
    }
    out
}

/// The ClusterOperator health check (cvo-spec §2.8.3, internal/operatorstatus.go
/// `checkOperatorHealth`): the manifest's `status.versions` are the expectations.
///
/// # Errors
/// `ClusterOperatorNoVersions` (Fail), `ClusterOperatorNotAvailable` (Fail),
/// `ClusterOperatorDegraded` (FailAfterInterval; Report while initializing) or
/// `ClusterOperatorUpdating` (None; not while initializing), each with its plural form.
#[allow(clippy::result_large_err)] // UpdateError is the worker's error type everywhere
pub fn check_operator_health(
    manifest: &Value,
    live: &DynamicObject,
    state: PayloadState,
) -> Result<(), UpdateError> {
    let name = live.metadata.name.clone().unwrap_or_default();
    let expected: Vec<(String, String)> = manifest
        .pointer("/status/versions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| {
                    (
                        v["name"].as_str().unwrap_or_default().to_string(),
                        v["version"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    if expected.is_empty() {
        return Err(UpdateError::new(
            "ClusterOperatorNoVersions",
            format!("Cluster operator {name} does not declare expected versions"),
        )
        .with_effect(UpdateEffect::Fail)
        .with_name(name.clone())
        .with_plural(
            "ClusterOperatorsNoVersions",
            "Cluster operators %s do not declare expected versions",
        ));
    }
    let co: ClusterOperator = serde_json::to_value(live)
        .and_then(serde_json::from_value)
        .unwrap_or_default();
    let mut undone: Vec<String> = Vec::new();
    for (n, v) in &expected {
        match co.status.versions.iter().find(|x| &x.name == n) {
            Some(cur) if &cur.version == v => {}
            Some(cur) => undone.push(format!("{n} from {} to {v}", cur.version)),
            None => undone.push(format!("{n} to {v}")),
        }
    }
    undone.sort();
    let cond = |t: &str| co.condition(t);
    let available = cond("Available").is_some_and(|c| c.status == ConditionStatus::True);
    let degraded = !cond("Degraded").is_some_and(|c| c.status == ConditionStatus::False);
    let progressing = cond("Progressing").is_some_and(|c| c.status == ConditionStatus::True);
    let nested = |text: String| vec![super::errors::SyncError::plain(text)];
    if !available {
        let mut e = UpdateError::new(
            "ClusterOperatorNotAvailable",
            format!("Cluster operator {name} is not available"),
        )
        .with_effect(UpdateEffect::Fail)
        .with_name(name.clone())
        .with_plural(
            "ClusterOperatorsNotAvailable",
            "Cluster operators %s are not available",
        );
        e.nested = nested(match cond("Available") {
            Some(c) if !c.message().is_empty() => format!(
                "cluster operator {name} is Available={}: {}: {}",
                c.status.as_str(),
                c.reason(),
                c.message()
            ),
            _ => format!(
                "cluster operator {name}: available={available}, progressing={progressing}, degraded={degraded}, undone={}",
                undone.join(", ")
            ),
        });
        return Err(e);
    }
    if degraded {
        let effect = if state == PayloadState::Initializing {
            UpdateEffect::Report
        } else {
            UpdateEffect::FailAfterInterval
        };
        let mut e = UpdateError::new(
            "ClusterOperatorDegraded",
            format!("Cluster operator {name} is degraded"),
        )
        .with_effect(effect)
        .with_name(name.clone())
        .with_plural("ClusterOperatorsDegraded", "Cluster operators %s are degraded");
        e.nested = nested(match cond("Degraded") {
            Some(c) if !c.message().is_empty() => format!(
                "cluster operator {name} is Degraded={}: {}, {}",
                c.status.as_str(),
                c.reason(),
                c.message()
            ),
            _ => format!(
                "cluster operator {name}: available={available}, progressing={progressing}, degraded={degraded}, undone={}",
                undone.join(", ")
            ),
        });
        return Err(e);
    }
    if !undone.is_empty() && state != PayloadState::Initializing {
        let mut e = UpdateError::new(
            "ClusterOperatorUpdating",
            format!("Cluster operator {name} is updating versions"),
        )
        .with_effect(UpdateEffect::None)
        .with_name(name.clone())
        .with_plural(
            "ClusterOperatorsUpdating",
            "Cluster operators %s are updating versions",
        );
        e.nested = nested(format!(
            "cluster operator {name} is available and not degraded but has not finished updating to target version"
        ));
        return Err(e);
    }
    Ok(())
}

/// The per-kind apply layer ([`super::apply::Applier`]: typed "ensure" merges, readiness,
/// ClusterOperator health, deletions) as a [`TaskApplier`]: modes, drift and errors converted
/// to the sync worker's vocabulary (the apply layer's `UpdateError` → [`UpdateError`], with
/// the plural reason and message of the ClusterOperator errors for condensing).
pub struct KubeApplier {
    inner: super::apply::Applier,
}

impl std::fmt::Debug for KubeApplier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeApplier").finish_non_exhaustive()
    }
}

impl KubeApplier {
    /// The apply layer over `client`.
    pub fn new(client: Client) -> Self {
        Self {
            inner: super::apply::Applier::new(client),
        }
    }

    fn context(ctx: TaskContext<'_>) -> super::apply::ApplyContext {
        super::apply::ApplyContext {
            mode: match ctx.state {
                PayloadState::Initializing => super::apply::SyncMode::Initializing,
                PayloadState::Updating => super::apply::SyncMode::Updating,
                PayloadState::Reconciling => super::apply::SyncMode::Reconciling,
            },
            dry_run: ctx.dry_run,
            ..super::apply::ApplyContext::default()
        }
    }
}

/// The apply layer's error in the worker's vocabulary.
pub fn convert_apply_error(e: super::apply::UpdateError) -> UpdateError {
    use super::apply::UpdateEffect as E;
    let effect = match e.effect {
        Some(E::None) => UpdateEffect::None,
        Some(E::Report) => UpdateEffect::Report,
        Some(E::Fail) => UpdateEffect::Fail,
        Some(E::FailAfterInterval) => UpdateEffect::FailAfterInterval,
        None => UpdateEffect::Unset,
    };
    let plural = match e.reason.as_str() {
        "ClusterOperatorNotAvailable" => Some((
            "ClusterOperatorsNotAvailable",
            "Cluster operators %s are not available",
        )),
        "ClusterOperatorDegraded" => Some(("ClusterOperatorsDegraded", "Cluster operators %s are degraded")),
        "ClusterOperatorUpdating" => Some((
            "ClusterOperatorsUpdating",
            "Cluster operators %s are updating versions",
        )),
        "ClusterOperatorNoVersions" => Some((
            "ClusterOperatorsNoVersions",
            "Cluster operators %s do not declare expected versions",
        )),
        _ => None,
    };
    let mut u = UpdateError::new(e.reason, e.message)
        .with_effect(effect)
        .with_name(e.name);
    if let Some((r, f)) = plural {
        u = u.with_plural(r, f);
    }
    if let Some(n) = e.nested {
        u.nested = vec![super::errors::SyncError::plain(n)];
    }
    u
}

/// `Could not update {kind} "{ns/name}"...` of the apply layer gets the task's position:
/// `Could not update {kind} "{ns/name}" ({i} of {n})...` (task.go `Task.String`).
fn with_task_position(mut e: UpdateError, task: &Task) -> UpdateError {
    let full = task.to_string();
    if let Some((short, _)) = full.rsplit_once(" (") {
        let from = format!("Could not update {short}");
        if e.message.starts_with(&from) && !e.message.starts_with(&format!("Could not update {full}")) {
            e.message = e.message.replacen(&from, &format!("Could not update {full}"), 1);
        }
    }
    e
}

impl TaskApplier for KubeApplier {
    fn apply<'a>(
        &'a self,
        task: &'a Task,
        ctx: TaskContext<'a>,
    ) -> BoxFuture<'a, Result<TaskOutcome, UpdateError>> {
        async move {
            let actx = Self::context(ctx);
            let out = self
                .inner
                .apply(&actx, &task.manifest.object)
                .await
                .map_err(|e| with_task_position(convert_apply_error(e), task))?;
            Ok(TaskOutcome {
                drift: out.drift,
                wrote: out.wrote,
            })
        }
        .boxed()
    }

    fn precreate_cluster_operator<'a>(
        &'a self,
        task: &'a Task,
        ctx: TaskContext<'a>,
    ) -> BoxFuture<'a, Result<bool, UpdateError>> {
        async move {
            let actx = Self::context(ctx);
            self.inner
                .precreate_cluster_operator(&actx, &task.manifest.object)
                .await
                .map_err(convert_apply_error)
        }
        .boxed()
    }
}
