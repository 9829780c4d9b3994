//! One apply pass of the sync worker: the task graph of the work run with the mode's worker
//! count, each task applied through the [`TaskApplier`] with retries, progress and drift
//! published as the pass goes (upstream `pkg/cvo/sync_worker.go` `apply`).

use std::{
    collections::{BTreeMap, HashSet},
    sync::{Arc, Mutex},
};

use chrono::{DateTime, Utc};
use futures::{FutureExt, future::BoxFuture};
use tokio_util::sync::CancellationToken;

use super::{SyncWork, SyncWorker, lock};
use crate::cow_vec::CowVec;
use crate::reconcile::{
    api::{Drift, DriftRecord, TaskProgress, TaskState},
    apply::{TaskApplier, TaskContext},
    errors::{SyncError, UpdateEffect, summarize_task_graph_errors},
    payload::{
        GraphError, PayloadState, Task, TaskRunner, graph_for_state, include, run_graph,
        run_level_and_component,
    },
    runtime::EngineTimings,
};

pub(super) enum PassResult {
    /// Every task applied; `reported` is a Report-effect failure to show.
    Ok { reported: Option<SyncError> },
    /// Some task failed; the summarised failure (`None` if only interruptions).
    Failed(Option<SyncError>),
    /// The apply timeout ended it (a failed pass without a failure of its own).
    TimedOut,
    /// Cancelled by new work, a mode switch or shutdown.
    Interrupted(String),
}

pub(super) struct Pass<'a> {
    pub(super) worker: &'a SyncWorker,
    pub(super) work: &'a Arc<SyncWork>,
    pub(super) applier: &'a dyn TaskApplier,
    pub(super) timings: &'a EngineTimings,
    pub(super) dry_run: bool,
    pub(super) cancel: &'a CancellationToken,
}

/// The pass's progress. The task states and drift records are the ones the worker publishes:
/// a publish clones the chunk tables (copy-on-write, [`CowVec`]) and the next write copies only
/// the chunk it touches, so publishing after every task is O(changed), not O(tasks).
struct PassState {
    co_start: Arc<std::collections::HashMap<String, DateTime<Utc>>>,
    tasks: CowVec<TaskProgress>,
    drift: CowVec<DriftRecord>,
    reported: Vec<SyncError>,
    done: usize,
    writes: u64,
    precreated: HashSet<usize>,
}

impl Pass<'_> {
    #[tracing::instrument(
        name = "pass",
        skip_all,
        fields(version = %self.work.desired.version, state = %self.work.state, attempt, dry_run = self.dry_run)
    )]
    pub(super) async fn run(&self, attempt: u32) -> PassResult {
        let work = self.work;
        let filter = work.apply_filter();
        let tasks = Task::from_manifests(&work.payload.manifests);
        let ctx = TaskContext {
            state: work.state,
            dry_run: self.dry_run,
            cancel: self.cancel,
        };
        let included: Vec<Task> = tasks
            .iter()
            .filter(|t| include(&t.manifest, &filter).is_ok())
            .cloned()
            .collect();
        tokio::select! {
            () = self.applier.prepare_pass(&included, ctx) => {}
            () = self.cancel.cancelled() => {}
        }
        drop(included);
        let mut progress = CowVec::new();
        let mut skipped = HashSet::new();
        for t in &tasks {
            let (run_level, component) = run_level_and_component(&t.manifest.file).unzip();
            let state = match include(&t.manifest, &filter) {
                Ok(()) => TaskState::Pending,
                Err(why) => {
                    skipped.insert(t.index);
                    TaskState::Skipped(why.to_string())
                }
            };
            progress.push(TaskProgress {
                index: t.index,
                name: t.to_string(),
                run_level,
                component,
                state,
            });
        }
        let (graph, workers) = graph_for_state(tasks, work.state, u64::from(attempt));
        let mut node_of = BTreeMap::new();
        for (i, n) in graph.nodes.iter().enumerate() {
            for t in &n.tasks {
                node_of.insert(t.index, i);
            }
        }
        let co_start = if attempt == 0 {
            Default::default()
        } else {
            self.worker.inner.view.borrow().co_update_start_times.clone()
        };
        let state = Mutex::new(PassState {
            co_start,
            tasks: progress,
            drift: CowVec::new(),
            reported: Vec::new(),
            done: 0,
            writes: 0,
            precreated: HashSet::new(),
        });
        self.publish(&state, true);
        let runner = Runner {
            pass: self,
            state: &state,
            skipped: &skipped,
            graph: &graph,
            node_of: &node_of,
        };
        let errs = run_graph(&graph, workers, self.cancel, &runner).await;
        self.applier.finish_pass(ctx).await;
        self.publish(&state, false);
        let cancelled = self.cancel.is_cancelled();
        let reported = std::mem::take(&mut lock(&state).reported);
        if errs.is_empty() {
            return PassResult::Ok {
                reported: summarize_task_graph_errors(reported),
            };
        }
        let mut all: Vec<SyncError> = errs
            .into_iter()
            .map(|e| match e {
                GraphError::Task(e) => e,
                other if cancelled => SyncError::Interrupted(other.to_string()),
                other => SyncError::plain(other.to_string()),
            })
            .collect();
        if cancelled && all.iter().all(|e| matches!(e, SyncError::Interrupted(_))) {
            return PassResult::Interrupted("pass cancelled".into());
        }
        all.extend(reported);
        PassResult::Failed(summarize_task_graph_errors(all))
    }

    fn publish(&self, state: &Mutex<PassState>, running: bool) {
        let s = lock(state);
        let tasks = s.tasks.clone();
        let drift = s.drift.clone();
        let done = s.done;
        let writes = s.writes;
        let co_start = s.co_start.clone();
        drop(s);
        // A pass whose work was replaced (a new desired release: `SyncWorker::update` cancelled
        // it and reset the progress) reports nothing more: its tasks finishing after the cancel
        // would count as the new release's progress ("Working towards 4.16.4: 240 of 265 done"
        // while the 4.16.4 pass has not started). Upstream's reports carry their own release
        // (`SyncWorkerStatus.Actual`); here the view's is the new one already.
        let replaced = lock(&self.worker.inner.work)
            .as_ref()
            .is_none_or(|w| !w.same_work(self.work));
        if replaced {
            if !running {
                // Its writes were sent all the same.
                self.worker.inner.view.send_modify(|v| v.writes += writes);
            }
            return;
        }
        self.worker.inner.view.send_modify(|v| {
            v.co_update_start_times = co_start;
            // statusWrapper.Report (upstream sync_worker.go): after a failed pass, a re-run of the
            // same release that has not yet caught up with the last reported progress is not
            // reported (done count and per-task states alike), so the sync fraction and the task
            // graph do not fall back while a pass re-applies what is done.
            let catching_up = running && v.status.failure.is_some() && done < v.status.done;
            if !catching_up {
                v.status.done = done;
                v.tasks = tasks;
                v.drift = drift;
            }
            v.status.total = self.work.payload.manifests.len();
            v.running = running;
            if !running {
                v.writes += writes;
                v.last_pass_writes = writes;
            }
        });
    }
}

struct Runner<'a> {
    pass: &'a Pass<'a>,
    state: &'a Mutex<PassState>,
    skipped: &'a HashSet<usize>,
    graph: &'a crate::reconcile::payload::TaskGraph,
    node_of: &'a BTreeMap<usize, usize>,
}

impl Runner<'_> {
    fn set_state(&self, task: &Task, st: TaskState) {
        let mut s = lock(self.state);
        if let Some(p) = s.tasks.get_mut(task.index.saturating_sub(1)) {
            p.state = st;
        }
    }

    /// Pre-creates the ClusterOperators of `task`'s node the first time the node runs, in every
    /// mode, reconciling included, so a deleted ClusterOperator comes back with its
    /// `relatedObjects` for must-gather to follow even while its operator is broken
    /// (sync_worker.go `apply`, Precreating builder, openshift/cluster-version-operator#840;
    /// errors ignored).
    async fn precreate(&self, task: &Task, ctx: TaskContext<'_>) {
        let Some(&node) = self.node_of.get(&task.index) else {
            return;
        };
        if !lock(self.state).precreated.insert(node) {
            return;
        }
        let Some(n) = self.graph.nodes.get(node) else {
            return;
        };
        for t in &n.tasks {
            let m = &t.manifest;
            if m.id.kind == "ClusterOperator"
                && m.group == "config.openshift.io"
                && !self.skipped.contains(&t.index)
            {
                match self.pass.applier.precreate_cluster_operator(t, ctx).await {
                    Ok(true) => lock(self.state).writes += 1,
                    Ok(false) => {}
                    Err(e) => tracing::debug!("pre-creating {t}: {e}"),
                }
            }
        }
    }

    async fn run_task(&self, cancel: &CancellationToken, task: &Task) -> Result<(), SyncError> {
        if self.skipped.contains(&task.index) {
            return Ok(());
        }
        let pass = self.pass;
        let ctx = TaskContext {
            state: pass.work.state,
            dry_run: pass.dry_run,
            cancel,
        };
        self.precreate(task, ctx).await;
        self.set_state(task, TaskState::Running);
        let co_name = (task.manifest.id.kind == "ClusterOperator"
            && task.manifest.group == "config.openshift.io")
            .then(|| task.manifest.id.name.clone());
        if let Some(n) = &co_name {
            let mut s = lock(self.state);
            if !s.co_start.contains_key(n) {
                Arc::make_mut(&mut s.co_start).insert(n.clone(), pass.timings.clock.now());
            }
        }
        let policy = if ctx.state == PayloadState::Initializing {
            pass.timings.retry_initializing
        } else {
            pass.timings.retry
        };
        let mut failures = 0;
        let result = loop {
            match pass.applier.apply(task, ctx).await {
                Ok(outcome) => break Ok(outcome),
                Err(e) => {
                    failures += 1;
                    let retryable = e.reason.starts_with("UpdatePayload");
                    if !retryable || failures >= policy.attempts || cancel.is_cancelled() {
                        break Err(e);
                    }
                    tracing::debug!("{task}: attempt {failures} failed: {e}");
                    tokio::select! {
                        () = cancel.cancelled() => break Err(e),
                        () = tokio::time::sleep(policy.jittered_delay(failures)) => {}
                    }
                }
            }
        };
        match result {
            Ok(outcome) => {
                let mut s = lock(self.state);
                if let Some(n) = &co_name
                    && s.co_start.contains_key(n)
                {
                    Arc::make_mut(&mut s.co_start).remove(n);
                }
                s.done += 1;
                if outcome.wrote {
                    s.writes += 1;
                }
                if outcome.drift != Drift::None {
                    let m = &task.manifest;
                    let kind = if m.group.is_empty() {
                        m.id.kind.clone()
                    } else {
                        format!("{}/{}", m.group, m.id.kind)
                    };
                    // Secret values never leave the engine: every reader of the drift (CLI,
                    // JSON, dashboard) gets them masked.
                    let drift = if crate::openshift::mask::is_secret_kind(&kind) {
                        outcome.drift.masked(&kind)
                    } else {
                        outcome.drift
                    };
                    s.drift.push(DriftRecord {
                        task: task.to_string(),
                        kind,
                        namespace: m.id.namespace.clone(),
                        name: m.id.name.clone(),
                        drift,
                    });
                }
                if let Some(p) = s.tasks.get_mut(task.index.saturating_sub(1)) {
                    p.state = TaskState::Done;
                }
                drop(s);
                self.pass.publish(self.state, true);
                Ok(())
            }
            Err(e) => {
                let mut e = e;
                if e.task.is_none() {
                    let m = &task.manifest;
                    e.task = Some(crate::reconcile::errors::TaskRef {
                        index: task.index,
                        total: task.total,
                        group: m.group.clone(),
                        kind: m.id.kind.clone(),
                        namespace: m.id.namespace.clone(),
                        name: m.id.name.clone(),
                    });
                }
                let text = e.to_string();
                if e.effect == UpdateEffect::Report {
                    let mut s = lock(self.state);
                    s.done += 1;
                    s.reported.push(e.into());
                    if let Some(p) = s.tasks.get_mut(task.index.saturating_sub(1)) {
                        p.state = TaskState::Failed(text);
                    }
                    drop(s);
                    self.pass.publish(self.state, true);
                    return Ok(());
                }
                self.set_state(task, TaskState::Failed(text));
                self.pass.publish(self.state, true);
                if cancel.is_cancelled() {
                    return Err(SyncError::Interrupted(format!("{task}: {e}")));
                }
                Err(e.into())
            }
        }
    }
}

impl TaskRunner for Runner<'_> {
    type Error = SyncError;

    fn run<'a>(
        &'a self,
        cancel: &'a CancellationToken,
        task: &'a Task,
    ) -> BoxFuture<'a, Result<(), SyncError>> {
        self.run_task(cancel, task).boxed()
    }
}
