//! The seam between the sync worker and the apply layer ([`TaskApplier`], upstream
//! `pkg/payload/task.go` `ResourceBuilder`) and its implementation over the per-kind apply
//! layer ([`KubeApplier`]).

use futures::{FutureExt, future::BoxFuture};
use kube::Client;
use tokio_util::sync::CancellationToken;

use crate::reconcile::{
    api::Drift,
    errors::UpdateError,
    payload::{PayloadState, Task},
};

/// What one apply of a manifest did.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskOutcome {
    /// The change made (or, dry-run, the change that would be made).
    pub drift: Drift,
    /// Whether a write request was sent.
    pub wrote: bool,
}

/// Context of one task apply.
#[derive(Clone, Copy, Debug)]
pub struct TaskContext<'a> {
    /// The mode of the pass.
    pub state: PayloadState,
    /// Watch-only: send no write request, report drift instead.
    pub dry_run: bool,
    /// Fires when the pass is cancelled.
    pub cancel: &'a CancellationToken,
}

/// Applies one manifest to the cluster: the seam between the sync worker and the apply layer
/// (upstream `ResourceBuilder`, "for testing").
///
/// Errors are [`UpdateError`]s. Those whose reason starts with `UpdatePayload` (API errors,
/// upstream `pkg/payload/task.go`) are retried with the mode's [`crate::reconcile::RetryPolicy`]; any other (readiness,
/// ClusterOperator health) fails the task at once, as upstream's typed errors do.
pub trait TaskApplier: Send + Sync {
    /// Applies `task` (GET → create / merge → update, then readiness / health).
    fn apply<'a>(
        &'a self,
        task: &'a Task,
        ctx: TaskContext<'a>,
    ) -> BoxFuture<'a, Result<TaskOutcome, UpdateError>>;

    /// Creates the ClusterOperator of `task` if it is absent (pre-creation before its run
    /// level). Returns whether it wrote. Errors are ignored by the worker.
    fn precreate_cluster_operator<'a>(
        &'a self,
        task: &'a Task,
        ctx: TaskContext<'a>,
    ) -> BoxFuture<'a, Result<bool, UpdateError>>;

    /// Called before a pass applies `tasks` (the watch caches start here). Default: nothing.
    fn prepare_pass<'a>(&'a self, tasks: &'a [Task], ctx: TaskContext<'a>) -> BoxFuture<'a, ()> {
        let _ = (tasks, ctx);
        futures::future::ready(()).boxed()
    }

    /// Called when a pass ends, however it ended (the watch caches save their verification
    /// record here; that write is not a payload object's and is not counted as one). Default:
    /// nothing.
    fn finish_pass<'a>(&'a self, ctx: TaskContext<'a>) -> BoxFuture<'a, ()> {
        let _ = ctx;
        futures::future::ready(()).boxed()
    }

    /// A counter that moves when one of the payload's objects changes in the cluster, as the
    /// applier's watches of a watch-only pass see it: the sync worker then re-checks the drift
    /// ([`crate::reconcile::runtime::EngineTimings::drift_recheck`]). Default: `None` (no
    /// watches; drift is re-checked on the resync interval only).
    fn payload_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }
}

/// The per-kind apply layer ([`super::Applier`]: typed "ensure" merges, readiness,
/// ClusterOperator health, deletions) as a [`TaskApplier`]; its errors get the task's position
/// in their `Could not update ...` message.
pub struct KubeApplier {
    inner: super::Applier,
}

impl std::fmt::Debug for KubeApplier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeApplier").finish_non_exhaustive()
    }
}

impl KubeApplier {
    /// The apply layer over `client`, for the ClusterVersion `version` (the one every cluster
    /// has).
    pub fn new(client: Client) -> Self {
        Self::for_cluster_version(client, "version")
    }

    /// The apply layer over `client` for the ClusterVersion `cluster_version`: its watch
    /// caches keep their verification record apart from other ClusterVersions' engines
    /// (`openshift-cluster-version/cvo-verified-manifests[-NAME]`).
    pub fn for_cluster_version(client: Client, cluster_version: &str) -> Self {
        Self {
            inner: super::Applier::for_cluster_version(client, cluster_version),
        }
    }

    /// This applier reading ClusterOperators from `informer`, the process's
    /// ([`super::Applier::share_cluster_operators`]).
    pub fn sharing_cluster_operators(
        self,
        informer: crate::informers::Informer<crate::openshift::ClusterOperator>,
    ) -> Self {
        self.inner.share_cluster_operators(informer);
        self
    }

    fn context(ctx: TaskContext<'_>) -> super::ApplyContext {
        super::ApplyContext {
            mode: ctx.state,
            dry_run: ctx.dry_run,
            ..super::ApplyContext::default()
        }
    }
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
                .apply_object(&actx, &*task.manifest)
                .await
                .map_err(|e| with_task_position(e, task))?;
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
                .precreate_cluster_operator(&actx, &task.manifest.object())
                .await
        }
        .boxed()
    }

    fn prepare_pass<'a>(&'a self, tasks: &'a [Task], ctx: TaskContext<'a>) -> BoxFuture<'a, ()> {
        async move {
            let manifests: Vec<&dyn super::PayloadObject> = tasks
                .iter()
                .map(|t| &*t.manifest as &dyn super::PayloadObject)
                .collect();
            let wait = if ctx.dry_run {
                super::watch_cache::WATCH_ONLY_SYNC_WAIT
            } else {
                super::watch_cache::SYNC_WAIT
            };
            self.inner.prepare_pass_of(&manifests, ctx.dry_run, wait).await;
        }
        .boxed()
    }

    fn finish_pass<'a>(&'a self, ctx: TaskContext<'a>) -> BoxFuture<'a, ()> {
        async move {
            self.inner.finish_pass(ctx.dry_run).await;
        }
        .boxed()
    }

    fn payload_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.inner.payload_changes())
    }
}
