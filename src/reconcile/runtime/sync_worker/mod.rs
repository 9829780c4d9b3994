//! Port of pkg/cvo/sync_worker.go: the sync worker that applies a release payload, pass after
//! pass, in the initializing / updating / reconciling states (`SyncWorker.Start`, `Update`,
//! `apply`).
//!
//! The worker owns one [`SyncWork`] at a time (the payload to apply and the mode). A spawned
//! loop runs apply passes over the task graph of the payload ([`crate::reconcile::payload::graph_for_state`] +
//! [`crate::reconcile::payload::run_graph`]) with the mode's worker count; a pass applies each manifest through a
//! [`TaskApplier`], retrying API errors with the upstream backoff. After a successful pass the
//! worker is Reconciling and waits the resync interval `I`; after a failed pass it backs off
//! `I/8`, `I/4`, `I/2`, then `I` (±20 % jitter). New work cancels the running pass at once.
//!
//! Progress (done / total tasks, per-task state, drift, the current failure summarised with
//! [`crate::reconcile::errors::summarize_task_graph_errors`]) is published on a `watch` channel as a [`WorkerView`].

use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::cow_vec::CowVec;
use crate::openshift::Release;
use crate::reconcile::{
    api::{DriftRecord, PassOutcome, TaskProgress},
    apply::TaskApplier,
    payload::{ComponentOverride, InclusionConfig, Payload, PayloadState, capability::CapabilitiesStatus},
    runtime::EngineTimings,
    status::worker_status::{LoadPayloadStatus, SyncWorkerStatus},
};

mod pass;
mod recheck;
mod summary;

use pass::{Pass, PassResult};

/// What the worker applies: one loaded payload in one mode (upstream `SyncWork`). The work
/// identity ([`SyncWork::same_work`]) is image + force + overrides + enabled capabilities +
/// enabled feature gates (upstream `equalSyncWork`, `calculateNextFrom`).
#[derive(Clone, Debug)]
pub(crate) struct SyncWork {
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
    pub(crate) fn same_work(&self, other: &SyncWork) -> bool {
        self.desired.image == other.desired.image
            && self.force == other.force
            && self.overrides == other.overrides
            && self.capabilities.enabled == other.capabilities.enabled
            && self.feature_gates == other.feature_gates
    }

    /// The apply-time filter (capabilities, overrides, feature gates; upstream library-go
    /// `pkg/manifest/manifest.go` `Include`).
    pub(crate) fn apply_filter(&self) -> InclusionConfig {
        InclusionConfig {
            capabilities: Some(self.capabilities.clone()),
            overrides: self.overrides.clone(),
            enabled_feature_gates: Some(self.feature_gates.clone()),
            ..InclusionConfig::default()
        }
    }
}

/// How long a pass cancelled by its apply timeout may take to publish its last progress.
const TIMEOUT_GRACE: Duration = Duration::from_secs(2);

/// How a pass ended, for [`SyncWorker::finish_pass`].
struct Ended {
    result: PassResult,
    /// The work was replaced while it ran.
    work_changed: bool,
    /// It ran without writing.
    dry_run: bool,
    /// When it started.
    started: std::time::Instant,
}

/// What the worker publishes: the upstream status plus per-task detail.
#[derive(Clone, Debug, Default)]
pub(crate) struct WorkerView {
    /// The upstream worker status (drives the ClusterVersion status).
    pub status: SyncWorkerStatus,
    /// The state of the current work (`None` before any work).
    pub state: Option<PayloadState>,
    /// Tasks of the current / last pass, by index (shared copy-on-write with the pass).
    pub tasks: CowVec<TaskProgress>,
    /// Drift found by the last complete pass (the current pass's records while it runs).
    pub drift: CowVec<DriftRecord>,
    /// Consecutive failed passes (upstream `Attempt`).
    pub attempt: u32,
    /// Passes run to their end since start (ok or failed); a pass interrupted by new work, a
    /// mode switch or shutdown does not count, so `--once` means one whole pass.
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
    /// The last [`crate::reconcile::api::RECENT_PASSES`] finished passes, oldest first.
    pub recent_passes: Arc<Vec<crate::reconcile::api::PassSummary>>,
    /// Passes asked for because a payload object changed (watch-only, [`recheck`]).
    pub rechecks: u64,
}

/// The payload state the worker starts a new release in (upstream pkg/cvo/cvo.go `sync`): no
/// Completed entry in history ⇒ Initializing; `history[0]` Completed for `image` ⇒ Reconciling;
/// else Updating.
pub(crate) fn initial_state(history: &[crate::openshift::UpdateHistory], image: &str) -> PayloadState {
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
    /// The work's state as the cluster has earned it: given with the work ([`SyncWorker::update`])
    /// and promoted to Reconciling only by an active pass that completed. A watch-only pass
    /// that completes compares; it applies nothing, so when passes turn active
    /// ([`SyncWorker::set_dry_run`]) the work and the view go back to this state: what a
    /// watch-only pass saw never reads as an applied release (a Completed history entry).
    earned: Mutex<Option<PayloadState>>,
    /// Cancelled when the worker loop has returned (after `shutdown`, once the running pass
    /// has ended: no task starts after `shutdown`, running ones finish).
    stopped: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Handle of the running sync worker. Cheap to clone.
#[derive(Clone)]
pub(crate) struct SyncWorker {
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
            earned: Mutex::new(None),
            stopped: CancellationToken::new(),
        });
        let w = SyncWorker { inner };
        if let Some(changes) = applier.payload_changes() {
            recheck::spawn(w.clone(), changes, &timings, shutdown.clone());
        }
        let run = w.clone();
        tokio::spawn(async move {
            let _stopped = run.inner.stopped.clone().drop_guard();
            run.run(applier, timings, shutdown).await;
        });
        w
    }

    /// Resolves once the worker loop has stopped (after its `shutdown` token fired and the
    /// running pass ended, its progress published in [`Self::view`]).
    pub(crate) async fn stopped(&self) {
        self.inner.stopped.cancelled().await;
    }

    /// The published view.
    pub(crate) fn subscribe(&self) -> watch::Receiver<WorkerView> {
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

    /// Whether passes run without writing (watch-only, or active-apply without the Lease).
    pub(crate) fn is_dry_run(&self) -> bool {
        self.inner.dry_run.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Switches between watch-only (dry-run) and active passes; cancels the running pass.
    pub(crate) fn set_dry_run(&self, dry_run: bool) {
        let old = self
            .inner
            .dry_run
            .swap(dry_run, std::sync::atomic::Ordering::SeqCst);
        if old != dry_run {
            lock(&self.inner.pass_cancel).cancel();
            if old && !dry_run {
                self.forget_watch_only_completion();
            }
            self.inner.wake.notify_one();
        }
    }

    /// Passes turn active: the work and the view go back to the state active passes earned
    /// (see `Inner::earned`); consecutive completed passes start again from 0.
    fn forget_watch_only_completion(&self) {
        let Some(earned) = *lock(&self.inner.earned) else {
            return;
        };
        {
            let mut cur = lock(&self.inner.work);
            if let Some(c) = cur.as_mut()
                && c.state != earned
            {
                let mut w = (**c).clone();
                w.state = earned;
                *c = Arc::new(w);
            }
        }
        self.inner.view.send_modify(|v| {
            v.status.completed = 0;
            v.status.reconciling = earned == PayloadState::Reconciling;
            v.status.initial = earned == PayloadState::Initializing;
            v.state = Some(earned);
        });
    }

    /// Gives the worker new work (upstream `Update`, after the payload is loaded). Different
    /// work cancels the running pass and starts a new one at once; the same work with a new
    /// generation or other implicitly enabled capabilities only updates those.
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
            let caps = crate::reconcile::status::worker_status::CapabilitiesStatus {
                status: crate::openshift::ClusterVersionCapabilitiesStatus {
                    enabled_capabilities: work.capabilities.enabled.iter().cloned().collect(),
                    known_capabilities: work.capabilities.known.iter().cloned().collect(),
                },
                implicitly_enabled: work.implicitly_enabled.clone(),
            };
            *cur = Some(Arc::new(work));
            *lock(&self.inner.earned) = Some(state);
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
                // Upstream sync_worker.go: the status carries the new payload's VerifiedImage.
                v.status.verified = load.verified;
                v.status.load_payload_status = load;
                v.status.capabilities = caps;
                v.state = Some(state);
                v.attempt = 0;
            });
            self.inner.wake.notify_one();
        } else {
            let implicit = work.implicitly_enabled;
            if let Some(c) = cur.as_mut()
                && (c.generation != generation || c.implicitly_enabled != implicit)
            {
                let mut w = (**c).clone();
                w.generation = generation;
                w.implicitly_enabled = implicit.clone();
                *c = Arc::new(w);
            }
            drop(cur);
            self.inner.view.send_if_modified(|v| {
                let m =
                    v.status.generation != generation || v.status.capabilities.implicitly_enabled != implicit;
                v.status.generation = generation;
                v.status.capabilities.implicitly_enabled = implicit;
                m
            });
        }
    }

    /// Records a payload load outcome without changing the work (a failed load keeps the old
    /// work, as upstream `SyncWorker.Update` does).
    pub(crate) fn set_load_status(&self, load: LoadPayloadStatus) {
        self.inner.view.send_if_modified(|v| {
            let m = v.status.load_payload_status != load;
            v.status.load_payload_status = load;
            m
        });
    }

    /// Puts `load` (the load status of the work in hand) back when the reported one names
    /// another release (a cleared or replaced request that was being retrieved or failed);
    /// reads the view in place, without a copy.
    pub(crate) fn restore_load_status(&self, load: &LoadPayloadStatus) {
        self.inner.view.send_if_modified(|v| {
            let other = v.status.load_payload_status.release.image != load.release.image;
            if other {
                v.status.load_payload_status = load.clone();
            }
            other
        });
    }

    /// Asks for a pass now (upstream `notify`; ignored while idly reconciling only in that a
    /// pass runs at once either way here).
    pub(crate) fn notify(&self) {
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
            // The pass about to start answers every wake-up asked for until now: a permit left
            // stored (the select above may have taken the timer branch) would start a second,
            // needless pass right after this one.
            let _ = futures::FutureExt::now_or_never(self.inner.wake.notified());
            let cancel = {
                let mut c = lock(&self.inner.pass_cancel);
                *c = shutdown.child_token();
                c.clone()
            };
            let dry_run = self.inner.dry_run.load(std::sync::atomic::Ordering::SeqCst);
            let attempt = self.inner.view.borrow().attempt;
            let timeout = timings.apply_timeout(work.state);
            let started = std::time::Instant::now();
            let pass = Pass {
                worker: &self,
                work: &work,
                applier: applier.as_ref(),
                timings: &timings,
                dry_run,
                cancel: &cancel,
            };
            let run = pass.run(attempt);
            tokio::pin!(run);
            let result = tokio::select! {
                r = &mut run => r,
                () = tokio::time::sleep(timeout) => {
                    // A timed-out pass is a failed pass whose context errors summarise to no
                    // failure (sync_worker.go `apply` with the deadline of `Start`). Cancelled,
                    // it gets a moment to publish where it stood (the task it was retrying,
                    // with its last error), for the pass line and the status.
                    cancel.cancel();
                    let _ = tokio::time::timeout(TIMEOUT_GRACE, &mut run).await;
                    PassResult::TimedOut
                }
            };
            cancel.cancel();
            let work_changed = !lock(&self.inner.work)
                .as_ref()
                .is_some_and(|w| Arc::ptr_eq(w, &work));
            if shutdown.is_cancelled() {
                return;
            }
            let ended = Ended {
                result,
                work_changed,
                dry_run,
                started,
            };
            next = self.finish_pass(&work, ended, &timings);
        }
    }

    /// Books the end of a pass and logs its line (a finished pass; an interrupted one at
    /// debug level only); returns when the next one starts.
    fn finish_pass(&self, work: &Arc<SyncWork>, ended: Ended, timings: &EngineTimings) -> Option<Duration> {
        let Ended {
            result,
            work_changed,
            dry_run,
            started,
        } = ended;
        let now = timings.clock.now();
        // A watch-only pass that ended after passes turned active counts for nothing.
        let result = if dry_run && !self.is_dry_run() && matches!(result, PassResult::Ok { .. }) {
            PassResult::Interrupted("passes turned active".into())
        } else {
            result
        };
        let mut promote = false;
        let mut next = None;
        let mut logged = None;
        self.inner.view.send_modify(|v| {
            v.running = false;
            if !matches!(result, PassResult::Interrupted(_)) {
                v.passes += 1;
            }
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
                PassResult::TimedOut => {
                    // A timed-out pass is a failed pass whose context errors summarise to no
                    // failure (sync_worker.go `apply` with the deadline of `Start`).
                    v.status.completed = 0;
                    v.attempt += 1;
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
            let outcome = match &result {
                PassResult::Ok { .. } => PassOutcome::Done,
                PassResult::Failed(_) => PassOutcome::Failed,
                PassResult::TimedOut => PassOutcome::TimedOut,
                PassResult::Interrupted(_) => return,
            };
            let s = summary::summarize(
                v,
                summary::Finished {
                    number: v.passes,
                    seconds: started.elapsed().as_secs_f64(),
                    watch_only: dry_run,
                    state: work.state.to_string(),
                    outcome,
                    timeout_secs: timings.apply_timeout(work.state).as_secs(),
                },
            );
            summary::remember(&mut v.recent_passes, s.clone());
            logged = Some((s, v.drift.clone()));
        });
        if let Some((s, drift)) = logged {
            summary::log_pass(&s, &drift);
        }
        if promote && !work_changed {
            if !dry_run {
                *lock(&self.inner.earned) = Some(PayloadState::Reconciling);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

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
