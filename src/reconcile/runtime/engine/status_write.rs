//! Computing and writing the ClusterVersion status: only when changed, conflict-safe (upstream
//! `pkg/cvo/status.go` `syncStatus`, `applyClusterVersionStatus`), edges at once and progress
//! at most once a second ([`StatusPacer`], a deliberate difference from upstream's 15 s
//! throttle, `runThrottledStatusNotifier` in `pkg/cvo/sync_worker.go`).

use kube::api::PostParams;
use tokio::time::Instant;

use super::{EngineError, EngineLoop};
use crate::openshift::{ClusterVersion, ClusterVersionStatus};
use crate::reconcile::{
    api::{EngineMode, TaskProgress, TaskState},
    status::{
        StatusInputs, compute_status, no_desired_image_failure, status_changed,
        upgradeable::{cluster_version_updating_risk, overrides_risk},
        validation::validate_cluster_version,
        worker_status::LoadPayloadStatus,
    },
};

impl EngineLoop {
    pub(super) fn worker_status(&self) -> crate::reconcile::status::worker_status::SyncWorkerStatus {
        let v = self.worker.view();
        let mut st = v.status;
        if st.actual.image.is_empty() && self.worker.work().is_none() && self.blocked.is_none() {
            // No target: report the NoDesiredImage failure (upstream pkg/cvo/cvo.go `sync`).
            if self.cfg.payloads.own_image().is_empty() {
                st.failure = Some(no_desired_image_failure());
            }
        }
        st
    }

    /// The new status. The Upgradeable risks are evaluated against the status being written
    /// (its Progressing), so one write reaches a fixed point instead of trailing by one.
    pub(super) fn compute(
        &self,
        existing: &ClusterVersion,
        worker: &crate::reconcile::status::worker_status::SyncWorkerStatus,
    ) -> ClusterVersionStatus {
        let errs = validate_cluster_version(existing, self.accept_risks_gate());
        let co_start = self.worker.view().co_update_start_times;
        let mut inputs = StatusInputs {
            now: self.cfg.timings.clock.now(),
            operator_release: &self.own_release,
            release_metadata: &[],
            status_release_architecture: false,
            validation_errors: &errs,
            upgradeable_risks: None,
            upgradeable_error: None,
            co_update_start_times: &co_start,
        };
        let first = compute_status(&existing.status, worker, &inputs);
        let probe = ClusterVersion {
            metadata: existing.metadata.clone(),
            spec: existing.spec.clone(),
            status: first,
        };
        let risks: Vec<_> = [cluster_version_updating_risk(&probe), overrides_risk(&probe)]
            .into_iter()
            .flatten()
            .collect();
        inputs.upgradeable_risks = Some(&risks);
        let mut st = compute_status(&existing.status, worker, &inputs);
        let lps = &worker.load_payload_status;
        if worker.actual.image.is_empty()
            && (lps.failure.is_some() || (lps.step == "RetrievePayload" && !lps.success))
        {
            // No payload was ever loaded (it failed, or its image is still being pulled): say
            // so in ReleaseAccepted and leave the rest as it is (no "Working towards
            // <unknown>", no history entry without an image).
            let mut kept = existing.status.clone();
            let accepted =
                crate::openshift::condition::find(&st.conditions, crate::reconcile::status::RELEASE_ACCEPTED)
                    .cloned();
            if let Some(c) = accepted {
                match kept
                    .conditions
                    .iter_mut()
                    .find(|k| k.type_ == crate::reconcile::status::RELEASE_ACCEPTED)
                {
                    Some(k) => *k = c,
                    None => kept.conditions.push(c),
                }
            }
            return kept;
        }
        if let Some(f) = self.fetched_updates() {
            crate::reconcile::updates::apply_to_status(&mut st, &f, inputs.now);
        } else if let Some((reason, message)) = &self.cfg.updates_not_fetched
            && self.cfg.update_graph.is_none()
        {
            crate::reconcile::status::set_condition(
                &mut st.conditions,
                crate::reconcile::status::RETRIEVED_UPDATES,
                crate::openshift::ConditionStatus::False,
                reason,
                message,
                inputs.now,
            );
        }
        st
    }

    /// Writes the status when it changed, conflict-safe (upstream pkg/cvo/status.go
    /// `applyClusterVersionStatus`), paced by [`StatusPacer`]: edges at once, progress-only
    /// changes at most once per [`crate::reconcile::runtime::EngineTimings::status_interval`]
    /// (a held-back write is due at [`EngineLoop::deferred_write`]).
    pub(super) async fn write_status(&mut self) {
        if self.mode != EngineMode::ActiveApply || !self.leading() || self.switch.is_read_only() {
            return;
        }
        let Some(cv) = self.cv.clone() else {
            return;
        };
        let worker = self.worker_status();
        let new = self.compute(&cv, &worker);
        if same_status(&cv.status, &new) {
            return;
        }
        let now = Instant::now();
        let key = PaceKey::of(&worker, current_run_level(&self.worker.view().tasks));
        if let Some(due) = self.pacer.due(&key, &worker, now) {
            self.deferred_write = Some(due);
            return;
        }
        self.deferred_write = None;
        match self
            .put_status(std::sync::Arc::unwrap_or_clone(cv), &worker)
            .await
        {
            Ok(written) => {
                self.status_writes += 1;
                self.cv = Some(std::sync::Arc::new(written));
                self.pacer.wrote(key, worker, now);
            }
            Err(e) => {
                tracing::warn!("{e}");
                self.last_error = Some(e.to_string());
                self.cv = None;
            }
        }
    }

    /// The last status write of a stopping engine: the worker's final progress goes out
    /// whatever the pacer would hold back (still only when the status changed, and only while
    /// this engine may write).
    pub(super) async fn final_status_write(&mut self) {
        self.pacer = StatusPacer::new(self.cfg.timings.status_interval);
        self.deferred_write = None;
        let before = self.status_writes;
        self.write_status().await;
        if self.status_writes > before {
            tracing::info!("wrote the final ClusterVersion status");
        }
    }

    #[tracing::instrument(name = "status_write", skip_all, fields(name = %self.cfg.cluster_version_name))]
    pub(super) async fn put_status(
        &self,
        mut cv: ClusterVersion,
        worker: &crate::reconcile::status::worker_status::SyncWorkerStatus,
    ) -> Result<ClusterVersion, EngineError> {
        let name = self.cfg.cluster_version_name.clone();
        let uid = cv.metadata.uid.clone();
        for attempt in 0..2 {
            let mut obj = cv.clone();
            obj.status = self.compute(&cv, worker);
            match self.api.replace_status(&name, &PostParams::default(), &obj).await {
                Ok(w) => return Ok(w),
                Err(kube::Error::Api(s)) if s.code == 409 && attempt == 0 => {
                    let fresh = self.api.get(&name).await.map_err(|err| EngineError::Reread {
                        name: name.clone(),
                        err,
                    })?;
                    if fresh.metadata.uid != uid {
                        return Err(EngineError::Recreated);
                    }
                    if !status_changed(&fresh.status, &self.compute(&fresh, worker)) {
                        return Ok(fresh);
                    }
                    cv = fresh;
                }
                Err(err) => return Err(EngineError::WriteStatus { name, err }),
            }
        }
        Err(EngineError::Conflict { name })
    }
}

/// Status equality for the write decision, ignoring condition timestamps that `compute_status`
/// only moves on a status change anyway.
fn same_status(a: &ClusterVersionStatus, b: &ClusterVersionStatus) -> bool {
    !status_changed(a, b)
}

/// What makes a status write an edge: a new target (generation, image, version), the payload
/// load outcome, the worker's state (initializing, reconciling), Completed reached, Failing set
/// or cleared, or a new run level started. Anything else the worker reports (the done count,
/// the last progress time, a new failure message) is progress.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct PaceKey {
    generation: i64,
    image: String,
    version: String,
    load: LoadPayloadStatus,
    initial: bool,
    reconciling: bool,
    completed: bool,
    failing: bool,
    /// `(no level, level)` of the lowest run level with unfinished tasks; `None` when every
    /// task is done or skipped.
    run_level: Option<(bool, u32)>,
}

impl PaceKey {
    pub(super) fn of(
        w: &crate::reconcile::status::worker_status::SyncWorkerStatus,
        run_level: Option<(bool, u32)>,
    ) -> Self {
        Self {
            generation: w.generation,
            image: w.actual.image.clone(),
            version: w.actual.version.clone(),
            load: w.load_payload_status.clone(),
            initial: w.initial,
            reconciling: w.reconciling,
            completed: w.completed > 0,
            failing: w.failure.is_some(),
            run_level,
        }
    }
}

/// The lowest run level with a task neither done nor skipped (tasks without a level count as
/// after every level), as `(no level, level)`; `None` when every task is finished.
pub(super) fn current_run_level(tasks: &crate::cow_vec::CowVec<TaskProgress>) -> Option<(bool, u32)> {
    tasks
        .iter()
        .filter(|t| !matches!(t.state, TaskState::Done | TaskState::Skipped(_)))
        .map(|t| (t.run_level.is_none(), t.run_level.unwrap_or(0)))
        .min()
}

/// When the engine writes the ClusterVersion status (this repository's rule, not upstream's):
/// an edge ([`PaceKey`] differs from the last write's) or a change that is not the worker's
/// (spec, validation, update graph: the worker status equals the last write's) goes out at
/// once; a progress-only change at least `interval` after the last write. Upstream instead
/// lets one notification through per 15 s with a burst of 2 (`runThrottledStatusNotifier` in
/// `pkg/cvo/sync_worker.go`), so Progressing and history trail the work by up to 15 s.
#[derive(Debug)]
pub(super) struct StatusPacer {
    interval: std::time::Duration,
    last: Option<(
        PaceKey,
        crate::reconcile::status::worker_status::SyncWorkerStatus,
        Instant,
    )>,
}

impl StatusPacer {
    /// Progress-only writes at most once per `interval`.
    pub(super) fn new(interval: std::time::Duration) -> Self {
        Self { interval, last: None }
    }

    /// `None` ⇒ write now; `Some(t)` ⇒ a progress-only change to hold back until `t`.
    pub(super) fn due(
        &self,
        key: &PaceKey,
        worker: &crate::reconcile::status::worker_status::SyncWorkerStatus,
        now: Instant,
    ) -> Option<Instant> {
        let (k, w, at) = self.last.as_ref()?;
        if k != key || w == worker {
            return None;
        }
        let due = *at + self.interval;
        (now < due).then_some(due)
    }

    /// Records a write made at `now` for `key` and `worker`.
    pub(super) fn wrote(
        &mut self,
        key: PaceKey,
        worker: crate::reconcile::status::worker_status::SyncWorkerStatus,
        now: Instant,
    ) {
        self.last = Some((key, worker, now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openshift::Release;
    use crate::reconcile::status::worker_status::SyncWorkerStatus;
    use std::time::Duration;

    fn worker(done: usize, completed: u32) -> SyncWorkerStatus {
        SyncWorkerStatus {
            generation: 1,
            done,
            total: 10,
            completed,
            actual: Release {
                version: "4.16.0".into(),
                image: "img".into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn edges_go_at_once_and_progress_at_most_once_per_interval() {
        let mut p = StatusPacer::new(Duration::from_secs(1));
        let t0 = Instant::now();
        let level = |l| Some((false, l));
        let w0 = worker(0, 0);
        let k0 = PaceKey::of(&w0, level(10));
        // Nothing written yet: the first write goes at once.
        assert_eq!(p.due(&k0, &w0, t0), None);
        p.wrote(k0.clone(), w0.clone(), t0);
        // Progress 300 ms later: held back to one second after the last write.
        let w1 = worker(3, 0);
        let k1 = PaceKey::of(&w1, level(10));
        assert_eq!(k1, k0);
        assert_eq!(
            p.due(&k1, &w1, t0 + Duration::from_millis(300)),
            Some(t0 + Duration::from_secs(1))
        );
        assert_eq!(p.due(&k1, &w1, t0 + Duration::from_secs(1)), None);
        // Same worker status (a spec or graph change): at once.
        assert_eq!(p.due(&k0, &w0, t0 + Duration::from_millis(10)), None);
        // A new run level: at once.
        let k2 = PaceKey::of(&w1, level(20));
        assert_eq!(p.due(&k2, &w1, t0 + Duration::from_millis(300)), None);
        // Completed (the pass finished): at once.
        let w3 = worker(10, 1);
        assert_eq!(
            p.due(&PaceKey::of(&w3, None), &w3, t0 + Duration::from_millis(301)),
            None
        );
        // Failing set: at once.
        let mut w4 = worker(3, 0);
        w4.failure = Some(crate::reconcile::errors::SyncError::plain("boom".to_string()));
        assert_eq!(
            p.due(&PaceKey::of(&w4, level(10)), &w4, t0 + Duration::from_millis(302)),
            None
        );
        // A new target: at once.
        let mut w5 = worker(0, 0);
        w5.actual.image = "other".into();
        assert_eq!(
            p.due(&PaceKey::of(&w5, level(10)), &w5, t0 + Duration::from_millis(303)),
            None
        );
    }

    #[test]
    fn the_current_run_level_is_the_lowest_unfinished() {
        use crate::cow_vec::CowVec;
        let t = |level: Option<u32>, state| TaskProgress {
            index: 1,
            name: String::new(),
            run_level: level,
            component: None,
            state,
        };
        let tasks: CowVec<_> = vec![
            t(Some(10), TaskState::Done),
            t(Some(20), TaskState::Skipped("cap".into())),
            t(Some(30), TaskState::Failed("x".into())),
            t(None, TaskState::Pending),
            t(Some(40), TaskState::Running),
        ]
        .into();
        assert_eq!(current_run_level(&tasks), Some((false, 30)));
        let done: CowVec<_> = vec![t(Some(10), TaskState::Done), t(None, TaskState::Pending)].into();
        assert_eq!(current_run_level(&done), Some((true, 0)));
        let all: CowVec<_> = vec![t(Some(10), TaskState::Done)].into();
        assert_eq!(current_run_level(&all), None);
    }
}
