//! Port of pkg/cvo/sync_worker.go: the sync worker that applies a release payload, pass after
//! pass, in the initializing / updating / reconciling states (cvo-spec §1.H, §2.0, §2.1).
//!
//! The worker owns one [`SyncWork`] at a time (the payload to apply and the mode). A spawned
//! loop runs apply passes over the task graph of the payload ([`graph_for_state`] +
//! [`run_graph`]) with the mode's worker count; a pass applies each manifest through a
//! [`TaskApplier`], retrying API errors with the upstream backoff. After a successful pass the
//! worker is Reconciling and waits the resync interval `I`; after a failed pass it backs off
//! `I/8`, `I/4`, `I/2`, then `I` (±20 % jitter). New work cancels the running pass at once.
//!
//! Progress (done / total tasks, per-task state, drift, the current failure summarised with
//! [`summarize_task_graph_errors`]) is published on a `watch` channel as a [`WorkerView`].

use std::{
    collections::{BTreeMap, BTreeSet, HashSet},
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use chrono::{DateTime, Utc};
use futures::{FutureExt, future::BoxFuture};
use rand::Rng;
use serde::Serialize;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::{
    capability::CapabilitiesStatus,
    errors::{SyncError, UpdateEffect, UpdateError, summarize_task_graph_errors},
    payload::{
        ComponentOverride, GraphError, InclusionConfig, Payload, PayloadState, Task, TaskRunner,
        graph_for_state, include, run_graph, run_level_and_component,
    },
    worker_status::{LoadPayloadStatus, SyncWorkerStatus},
};
use crate::openshift::Release;

/// Backoff of one manifest's retries (upstream `wait.Backoff` in cvo.go / sync_worker.go).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RetryPolicy {
    /// Wait after the first failure.
    pub initial: Duration,
    /// Multiplier per further failure.
    pub factor: f64,
    /// Longest wait.
    pub cap: Duration,
    /// Attempts in all (the first one included).
    pub attempts: u32,
}

impl RetryPolicy {
    /// Wait before attempt `n + 1` after `n` failures (`n ≥ 1`).
    pub fn delay(&self, failures: u32) -> Duration {
        let exp = i32::try_from(failures.saturating_sub(1)).unwrap_or(i32::MAX);
        self.initial.mul_f64(self.factor.powi(exp)).min(self.cap)
    }
}

/// Every interval the engine uses (cvo-spec §2.0). [`EngineTimings::upstream`] gives upstream's
/// values; tests and the demo use [`EngineTimings::scaled`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EngineTimings {
    /// The resync interval `I` (upstream: random in [2 min, 4 min), chosen at start): wait
    /// between reconciling passes, and the base of the error backoff and the apply timeouts.
    pub resync_interval: Duration,
    /// Jitter factor of the error backoff (upstream 0.2: ±20 %).
    pub jitter: f64,
    /// Per-manifest retries while updating / reconciling (10 s ×1.3, cap 15 s, 3 attempts).
    pub retry: RetryPolicy,
    /// Per-manifest retries while initializing (1 s ×2, cap 15 s, 4 attempts).
    pub retry_initializing: RetryPolicy,
    /// Status notifier: at most one ClusterVersion status write per interval (15 s) ...
    pub status_interval: Duration,
    /// ... with this burst (2); edges bypass it.
    pub status_burst: u32,
    /// How often the ClusterVersion is re-read (upstream reacts to informer events; the startup
    /// poll is 3 s).
    pub cv_poll: Duration,
    /// Lease duration (HA 137 s).
    pub lease_duration: Duration,
    /// Lease renew deadline (HA 107 s).
    pub lease_renew_deadline: Duration,
    /// Lease retry period (HA 26 s).
    pub lease_retry_period: Duration,
    /// Shortest interval between two published engine snapshots.
    pub snapshot_interval: Duration,
}

impl Default for EngineTimings {
    fn default() -> Self {
        Self::upstream()
    }
}

impl EngineTimings {
    /// Upstream's timings (pkg/start/start.go `resyncPeriod`, cvo.go, sync_worker.go); `I` is
    /// drawn from [2 min, 4 min).
    pub fn upstream() -> Self {
        let secs = rand::thread_rng().gen_range(120.0..240.0);
        Self {
            resync_interval: Duration::from_secs_f64(secs),
            jitter: 0.2,
            retry: RetryPolicy {
                initial: Duration::from_secs(10),
                factor: 1.3,
                cap: Duration::from_secs(15),
                attempts: 3,
            },
            retry_initializing: RetryPolicy {
                initial: Duration::from_secs(1),
                factor: 2.0,
                cap: Duration::from_secs(15),
                attempts: 4,
            },
            status_interval: Duration::from_secs(15),
            status_burst: 2,
            cv_poll: Duration::from_secs(3),
            lease_duration: Duration::from_secs(137),
            lease_renew_deadline: Duration::from_secs(107),
            lease_retry_period: Duration::from_secs(26),
            snapshot_interval: Duration::from_millis(100),
        }
    }

    /// Upstream's timings with `I` fixed at 3 min and every interval multiplied by `factor`
    /// (e.g. `0.001` turns 3 min into 180 ms). The snapshot interval is not scaled.
    pub fn scaled(factor: f64) -> Self {
        let mut t = Self::upstream();
        t.resync_interval = Duration::from_secs(180);
        let s = |d: Duration| d.mul_f64(factor);
        Self {
            resync_interval: s(t.resync_interval),
            jitter: t.jitter,
            retry: RetryPolicy {
                initial: s(t.retry.initial),
                cap: s(t.retry.cap),
                ..t.retry
            },
            retry_initializing: RetryPolicy {
                initial: s(t.retry_initializing.initial),
                cap: s(t.retry_initializing.cap),
                ..t.retry_initializing
            },
            status_interval: s(t.status_interval),
            status_burst: t.status_burst,
            cv_poll: s(t.cv_poll),
            lease_duration: s(t.lease_duration),
            lease_renew_deadline: s(t.lease_renew_deadline),
            lease_retry_period: s(t.lease_retry_period),
            snapshot_interval: t.snapshot_interval,
        }
    }

    /// Wait after the `attempt`-th consecutive failed pass (`attempt ≥ 1`): `I/8`, `I/4`,
    /// `I/2`, then `I`, each ±`jitter` (sync_worker.go `Start`).
    pub fn error_backoff(&self, attempt: u32) -> Duration {
        let base = match attempt {
            0 | 1 => self.resync_interval / 8,
            2 => self.resync_interval / 4,
            3 => self.resync_interval / 2,
            _ => self.resync_interval,
        };
        jittered(base, self.jitter)
    }

    /// Apply timeout of one pass: `I` while initializing, `2·I` otherwise.
    pub fn apply_timeout(&self, state: PayloadState) -> Duration {
        match state {
            PayloadState::Initializing => self.resync_interval,
            _ => self.resync_interval * 2,
        }
    }
}

fn jittered(d: Duration, jitter: f64) -> Duration {
    if jitter <= 0.0 {
        return d;
    }
    let f = rand::thread_rng().gen_range((1.0 - jitter)..(1.0 + jitter));
    d.mul_f64(f)
}

/// What the worker applies: one loaded payload in one mode (upstream `SyncWork`). The work
/// identity ([`SyncWork::same_work`]) is image + force + overrides + enabled capabilities +
/// enabled feature gates (cvo-spec row 77).
#[derive(Clone, Debug)]
pub struct SyncWork {
    /// ClusterVersion `metadata.generation` this work was accepted for.
    pub generation: i64,
    /// The release being applied (version from the payload, image = the target pull spec).
    pub desired: Release,
    /// `spec.desiredUpdate.force`.
    pub force: bool,
    /// `spec.overrides`.
    pub overrides: Vec<ComponentOverride>,
    /// Known / enabled capabilities (apply-time filter).
    pub capabilities: CapabilitiesStatus,
    /// Enabled feature gates.
    pub feature_gates: BTreeSet<String>,
    /// The loaded payload.
    pub payload: Arc<Payload>,
    /// Initializing, Updating or Reconciling.
    pub state: PayloadState,
    /// Outcome of the payload load (ReleaseAccepted).
    pub load_status: LoadPayloadStatus,
    /// Capabilities the worker could not disable.
    pub implicitly_enabled: Vec<String>,
}

impl SyncWork {
    /// Whether `other` is the same work (`equalSyncWork`): same image and force, equal
    /// overrides, enabled capabilities and feature gates.
    pub fn same_work(&self, other: &SyncWork) -> bool {
        self.desired.image == other.desired.image
            && self.force == other.force
            && self.overrides == other.overrides
            && self.capabilities.enabled == other.capabilities.enabled
            && self.feature_gates == other.feature_gates
    }

    /// The apply-time filter (capabilities, overrides, feature gates; cvo-spec §2.2).
    pub fn apply_filter(&self) -> InclusionConfig {
        InclusionConfig {
            capabilities: Some(self.capabilities.clone()),
            overrides: self.overrides.clone(),
            enabled_feature_gates: Some(self.feature_gates.clone()),
            ..InclusionConfig::default()
        }
    }
}

// The apply layer's drift vocabulary is the engine's: one type for a changed field and for a
// task's change, whichever applier produced it.
pub use super::apply::diff::{Drift, FieldChange};

/// A drift record of one task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DriftRecord {
    /// The task, e.g. `configmap "ns/name" (3 of 10)`.
    pub task: String,
    /// `group/kind` (`v1` core kinds: just `kind`), namespace and name of the object.
    pub kind: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The change.
    pub drift: Drift,
}

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
/// cvo-spec §2.4.1) are retried with the mode's [`RetryPolicy`]; any other (readiness,
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
}

/// State of one task in the current (or last) pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "detail", rename_all = "lowercase")]
pub enum TaskState {
    /// Not started in this pass.
    Pending,
    /// Being applied.
    Running,
    /// Applied.
    Done,
    /// Failed with this error.
    Failed(String),
    /// Left out at apply time, with why (capability, override, feature gate).
    Skipped(String),
}

/// One task as the worker reports it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskProgress {
    /// 1-based index in the payload.
    pub index: usize,
    /// `{kind} "{ns/}{name}" ({i} of {n})`.
    pub name: String,
    /// Run level parsed from the file name (`0000_NN_...`), if any.
    pub run_level: Option<u32>,
    /// Component parsed from the file name, if any.
    pub component: Option<String>,
    /// The task's state.
    pub state: TaskState,
}

/// What the worker publishes: the upstream status plus per-task detail.
#[derive(Clone, Debug, Default)]
pub struct WorkerView {
    /// The upstream worker status (drives the ClusterVersion status).
    pub status: SyncWorkerStatus,
    /// The state of the current work (`None` before any work).
    pub state: Option<PayloadState>,
    /// Tasks of the current / last pass, by index.
    pub tasks: Arc<Vec<TaskProgress>>,
    /// Drift found by the last complete pass (the current pass's records while it runs).
    pub drift: Arc<Vec<DriftRecord>>,
    /// Consecutive failed passes (upstream `Attempt`).
    pub attempt: u32,
    /// Passes run since start.
    pub passes: u64,
    /// Write requests the applier reported since start.
    pub writes: u64,
    /// Writes in the last finished pass.
    pub last_pass_writes: u64,
    /// A pass is running.
    pub running: bool,
    /// When the last pass finished.
    pub last_pass_end: Option<DateTime<Utc>>,
    /// When each ClusterOperator's check started in the current apply series (recorded on the
    /// first check, cleared on success, reset when a series starts with `attempt == 0`); feeds
    /// the 30/40/90-minute rules of the status (internal/operatorstatus.go).
    pub co_update_start_times: Arc<std::collections::HashMap<String, DateTime<Utc>>>,
}

/// The payload state the worker starts a new release in (cvo-spec row 76): no Completed entry
/// in history ⇒ Initializing; `history[0]` Completed for `image` ⇒ Reconciling; else Updating.
pub fn initial_state(history: &[crate::openshift::UpdateHistory], image: &str) -> PayloadState {
    use crate::openshift::UpdateState;
    if !history.iter().any(|h| h.state == UpdateState::Completed) {
        return PayloadState::Initializing;
    }
    match history.first() {
        Some(h) if h.state == UpdateState::Completed && h.image == image => PayloadState::Reconciling,
        _ => PayloadState::Updating,
    }
}

struct Inner {
    work: Mutex<Option<Arc<SyncWork>>>,
    pass_cancel: Mutex<CancellationToken>,
    wake: Notify,
    view: watch::Sender<WorkerView>,
    dry_run: std::sync::atomic::AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Handle of the running sync worker. Cheap to clone.
#[derive(Clone)]
pub struct SyncWorker {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SyncWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncWorker").finish_non_exhaustive()
    }
}

impl SyncWorker {
    /// Starts the worker loop on the current tokio runtime. It idles until [`Self::update`]
    /// gives it work and stops when `shutdown` fires (cancelling the running pass).
    pub fn start(
        applier: Arc<dyn TaskApplier>,
        timings: EngineTimings,
        dry_run: bool,
        shutdown: CancellationToken,
    ) -> SyncWorker {
        let (view, _) = watch::channel(WorkerView::default());
        let inner = Arc::new(Inner {
            work: Mutex::new(None),
            pass_cancel: Mutex::new(CancellationToken::new()),
            wake: Notify::new(),
            view,
            dry_run: std::sync::atomic::AtomicBool::new(dry_run),
        });
        let w = SyncWorker { inner };
        let run = w.clone();
        tokio::spawn(async move { run.run(applier, timings, shutdown).await });
        w
    }

    /// The published view.
    pub fn subscribe(&self) -> watch::Receiver<WorkerView> {
        self.inner.view.subscribe()
    }

    /// The current view.
    pub fn view(&self) -> WorkerView {
        self.inner.view.borrow().clone()
    }

    /// The current work, if any.
    pub fn work(&self) -> Option<Arc<SyncWork>> {
        lock(&self.inner.work).clone()
    }

    /// Switches between watch-only (dry-run) and active passes; cancels the running pass.
    pub fn set_dry_run(&self, dry_run: bool) {
        let old = self
            .inner
            .dry_run
            .swap(dry_run, std::sync::atomic::Ordering::SeqCst);
        if old != dry_run {
            lock(&self.inner.pass_cancel).cancel();
            self.inner.wake.notify_one();
        }
    }

    /// Gives the worker new work (upstream `Update`, after the payload is loaded). Different
    /// work cancels the running pass and starts a new one at once; the same work with a new
    /// generation only updates the reported generation.
    pub fn update(&self, work: SyncWork) {
        let mut cur = lock(&self.inner.work);
        let changed = cur.as_ref().is_none_or(|c| !c.same_work(&work));
        let generation = work.generation;
        if changed {
            tracing::info!(
                "sync worker: new work {} ({}) in state {}",
                work.desired.version,
                work.desired.image,
                work.state
            );
            let total = work.payload.manifests.len();
            let load = work.load_status.clone();
            let desired = work.desired.clone();
            let state = work.state;
            let hash = work.payload.manifest_hash.clone();
            let arch = work.payload.architecture.clone();
            let caps = super::worker_status::CapabilitiesStatus {
                status: crate::openshift::ClusterVersionCapabilitiesStatus {
                    enabled_capabilities: work.capabilities.enabled.iter().cloned().collect(),
                    known_capabilities: work.capabilities.known.iter().cloned().collect(),
                },
                implicitly_enabled: work.implicitly_enabled.clone(),
            };
            *cur = Some(Arc::new(work));
            drop(cur);
            lock(&self.inner.pass_cancel).cancel();
            self.inner.view.send_modify(|v| {
                v.status.generation = generation;
                v.status.actual = desired;
                v.status.total = total;
                v.status.done = 0;
                v.status.completed = 0;
                v.status.failure = None;
                v.status.reconciling = state == PayloadState::Reconciling;
                v.status.initial = state == PayloadState::Initializing;
                v.status.version_hash = hash;
                v.status.architecture = arch;
                v.status.load_payload_status = load;
                v.status.capabilities = caps;
                v.state = Some(state);
                v.attempt = 0;
            });
            self.inner.wake.notify_one();
        } else {
            if let Some(c) = cur.as_mut()
                && c.generation != generation
            {
                let mut w = (**c).clone();
                w.generation = generation;
                *c = Arc::new(w);
            }
            drop(cur);
            self.inner.view.send_if_modified(|v| {
                let m = v.status.generation != generation;
                v.status.generation = generation;
                m
            });
        }
    }

    /// Records a payload load outcome without changing the work (a failed load keeps the old
    /// work; cvo-spec §2.1 "failure ⇒ keep old work").
    pub fn set_load_status(&self, load: LoadPayloadStatus) {
        self.inner.view.send_if_modified(|v| {
            let m = v.status.load_payload_status != load;
            v.status.load_payload_status = load;
            m
        });
    }

    /// Asks for a pass now (upstream `notify`; ignored while idly reconciling only in that a
    /// pass runs at once either way here).
    pub fn notify(&self) {
        self.inner.wake.notify_one();
    }

    async fn run(self, applier: Arc<dyn TaskApplier>, timings: EngineTimings, shutdown: CancellationToken) {
        let mut next: Option<Duration> = None; // None: wait for work / wake only
        loop {
            let wake = self.inner.wake.notified();
            tokio::pin!(wake);
            let have_work = lock(&self.inner.work).is_some();
            if !have_work || next.is_some() {
                let timer = async {
                    match next {
                        Some(d) if have_work => tokio::time::sleep(d).await,
                        _ => std::future::pending::<()>().await,
                    }
                };
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = &mut wake => {},
                    () = timer => {},
                }
            }
            if shutdown.is_cancelled() {
                return;
            }
            let Some(work) = lock(&self.inner.work).clone() else {
                next = None;
                continue;
            };
            let cancel = {
                let mut c = lock(&self.inner.pass_cancel);
                *c = shutdown.child_token();
                c.clone()
            };
            let dry_run = self.inner.dry_run.load(std::sync::atomic::Ordering::SeqCst);
            let attempt = self.inner.view.borrow().attempt;
            let timeout = timings.apply_timeout(work.state);
            let pass = Pass {
                worker: &self,
                work: &work,
                applier: applier.as_ref(),
                timings: &timings,
                dry_run,
                cancel: &cancel,
            };
            let result = tokio::select! {
                r = pass.run(attempt) => r,
                () = tokio::time::sleep(timeout) => {
                    // A timed-out pass is a failed pass whose context errors summarise to no
                    // failure (sync_worker.go `apply` with the deadline of `Start`).
                    cancel.cancel();
                    tracing::info!("sync worker: pass timed out after {timeout:?}");
                    PassResult::Failed(None)
                }
            };
            cancel.cancel();
            let work_changed = !lock(&self.inner.work)
                .as_ref()
                .is_some_and(|w| Arc::ptr_eq(w, &work));
            if shutdown.is_cancelled() {
                return;
            }
            next = self.finish_pass(&work, result, work_changed, &timings);
        }
    }

    /// Books the end of a pass; returns when the next one starts.
    fn finish_pass(
        &self,
        work: &Arc<SyncWork>,
        result: PassResult,
        work_changed: bool,
        timings: &EngineTimings,
    ) -> Option<Duration> {
        let now = Utc::now();
        let mut promote = false;
        let mut next = None;
        self.inner.view.send_modify(|v| {
            v.running = false;
            v.passes += 1;
            v.last_pass_end = Some(now);
            match &result {
                PassResult::Ok { reported } => {
                    v.status.completed += 1;
                    v.attempt = 0;
                    v.status.failure = reported.clone();
                    promote = work.state != PayloadState::Reconciling;
                    if !work_changed {
                        v.status.reconciling = true;
                        v.status.initial = false;
                        v.state = Some(PayloadState::Reconciling);
                    }
                    next = Some(timings.resync_interval);
                }
                PassResult::Failed(err) => {
                    v.status.completed = 0;
                    v.attempt += 1;
                    if err.is_some() {
                        v.status.failure = err.clone();
                    }
                    next = Some(timings.error_backoff(v.attempt));
                }
                PassResult::Interrupted(why) => {
                    tracing::debug!("sync worker: pass interrupted: {why}");
                    next = Some(Duration::ZERO);
                }
            }
            if work_changed {
                next = Some(Duration::ZERO);
            }
        });
        if promote && !work_changed {
            let mut cur = lock(&self.inner.work);
            if let Some(c) = cur.as_mut()
                && Arc::ptr_eq(c, work)
            {
                let mut w = (**c).clone();
                w.state = PayloadState::Reconciling;
                *c = Arc::new(w);
            }
        }
        next
    }
}

enum PassResult {
    /// Every task applied; `reported` is a Report-effect failure to show.
    Ok { reported: Option<SyncError> },
    /// Some task failed; the summarised failure (`None` if only interruptions).
    Failed(Option<SyncError>),
    /// Cancelled by new work, a mode switch, shutdown or the apply timeout.
    Interrupted(String),
}

struct Pass<'a> {
    worker: &'a SyncWorker,
    work: &'a Arc<SyncWork>,
    applier: &'a dyn TaskApplier,
    timings: &'a EngineTimings,
    dry_run: bool,
    cancel: &'a CancellationToken,
}

struct PassState {
    co_start: std::collections::HashMap<String, DateTime<Utc>>,
    tasks: Vec<TaskProgress>,
    drift: Vec<DriftRecord>,
    reported: Vec<SyncError>,
    done: usize,
    writes: u64,
    precreated: HashSet<usize>,
}

impl Pass<'_> {
    async fn run(&self, attempt: u32) -> PassResult {
        let work = self.work;
        let filter = work.apply_filter();
        let tasks = Task::from_manifests(&work.payload.manifests);
        let mut progress = Vec::with_capacity(tasks.len());
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
            (*self.worker.inner.view.borrow().co_update_start_times).clone()
        };
        let state = Mutex::new(PassState {
            co_start,
            tasks: progress,
            drift: Vec::new(),
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
        let tasks = Arc::new(s.tasks.clone());
        let drift = Arc::new(s.drift.clone());
        let done = s.done;
        let writes = s.writes;
        let co_start = Arc::new(s.co_start.clone());
        drop(s);
        self.worker.inner.view.send_modify(|v| {
            v.co_update_start_times = co_start;
            // statusWrapper.Report (C21): after a failed pass, a re-run of the same release
            // that has not yet caught up with the last reported progress is not reported (done
            // count and per-task states alike), so the sync fraction and the task graph do not
            // fall back while a pass re-applies what is done.
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
    graph: &'a super::payload::TaskGraph,
    node_of: &'a BTreeMap<usize, usize>,
}

impl Runner<'_> {
    fn set_state(&self, task: &Task, st: TaskState) {
        let mut s = lock(self.state);
        if let Some(p) = s.tasks.get_mut(task.index.saturating_sub(1)) {
            p.state = st;
        }
    }

    /// Pre-creates the ClusterOperators of `task`'s node the first time the node runs
    /// (sync_worker.go `apply`, Precreating builder; errors ignored).
    async fn precreate(&self, task: &Task, ctx: TaskContext<'_>) {
        let Some(&node) = self.node_of.get(&task.index) else {
            return;
        };
        if !lock(self.state).precreated.insert(node) {
            return;
        }
        if ctx.state == PayloadState::Reconciling {
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
            lock(self.state)
                .co_start
                .entry(n.clone())
                .or_insert_with(Utc::now);
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
                        () = tokio::time::sleep(policy.delay(failures)) => {}
                    }
                }
            }
        };
        match result {
            Ok(outcome) => {
                let mut s = lock(self.state);
                if let Some(n) = &co_name {
                    s.co_start.remove(n);
                }
                s.done += 1;
                if outcome.wrote {
                    s.writes += 1;
                }
                if outcome.drift != Drift::None {
                    let m = &task.manifest;
                    s.drift.push(DriftRecord {
                        task: task.to_string(),
                        kind: if m.group.is_empty() {
                            m.id.kind.clone()
                        } else {
                            format!("{}/{}", m.group, m.id.kind)
                        },
                        namespace: m.id.namespace.clone(),
                        name: m.id.name.clone(),
                        drift: outcome.drift,
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
                    e.task = Some(super::errors::TaskRef {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delays_follow_upstream() {
        let t = EngineTimings::upstream();
        assert_eq!(t.retry.delay(1), Duration::from_secs(10));
        assert_eq!(t.retry.delay(2), Duration::from_secs(13));
        assert_eq!(t.retry.delay(3), Duration::from_secs(15));
        assert_eq!(t.retry_initializing.delay(1), Duration::from_secs(1));
        assert_eq!(t.retry_initializing.delay(3), Duration::from_secs(4));
        assert_eq!(t.retry_initializing.delay(5), Duration::from_secs(15));
        assert!(
            t.resync_interval >= Duration::from_secs(120) && t.resync_interval < Duration::from_secs(240)
        );
    }

    #[test]
    fn error_backoff_is_i_over_8_4_2_then_i() {
        let mut t = EngineTimings::scaled(1.0);
        t.jitter = 0.0;
        let i = t.resync_interval;
        assert_eq!(t.error_backoff(1), i / 8);
        assert_eq!(t.error_backoff(2), i / 4);
        assert_eq!(t.error_backoff(3), i / 2);
        assert_eq!(t.error_backoff(4), i);
        assert_eq!(t.error_backoff(9), i);
        t.jitter = 0.2;
        for _ in 0..50 {
            let d = t.error_backoff(4);
            assert!(d >= i.mul_f64(0.8) && d <= i.mul_f64(1.2), "{d:?}");
        }
        assert_eq!(t.apply_timeout(PayloadState::Initializing), i);
        assert_eq!(t.apply_timeout(PayloadState::Updating), i * 2);
    }

    #[test]
    fn initial_state_follows_history() {
        use crate::openshift::{UpdateHistory, UpdateState};
        let h = |state, image: &str| UpdateHistory {
            state,
            image: image.into(),
            ..Default::default()
        };
        assert_eq!(initial_state(&[], "a"), PayloadState::Initializing);
        assert_eq!(
            initial_state(&[h(UpdateState::Partial, "a")], "a"),
            PayloadState::Initializing
        );
        assert_eq!(
            initial_state(&[h(UpdateState::Completed, "a")], "a"),
            PayloadState::Reconciling
        );
        assert_eq!(
            initial_state(&[h(UpdateState::Completed, "a")], "b"),
            PayloadState::Updating
        );
        assert_eq!(
            initial_state(
                &[h(UpdateState::Partial, "b"), h(UpdateState::Completed, "a")],
                "b"
            ),
            PayloadState::Updating
        );
    }
}
