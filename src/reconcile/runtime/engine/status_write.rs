//! Computing and writing the ClusterVersion status: throttled, only when changed, and
//! conflict-safe (upstream `pkg/cvo/status.go` `syncStatus`, `applyClusterVersionStatus`).

use super::*;

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
        let errs = validate_cluster_version(existing, false);
        let co_start = self.worker.view().co_update_start_times;
        let mut inputs = StatusInputs {
            now: Utc::now(),
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
        if worker.actual.image.is_empty() && worker.load_payload_status.failure.is_some() {
            // No payload was ever loaded: say why in ReleaseAccepted and leave the rest as it
            // is (no "Working towards <unknown>", no history entry without an image).
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
        if let Some(g) = &self.cfg.update_graph {
            let channel = existing.spec.channel.clone().unwrap_or_default();
            g.merge_into(&mut st, &channel, inputs.now);
        }
        st
    }

    /// Writes the status when it changed, throttled and conflict-safe (upstream pkg/cvo/status.go
    /// `applyClusterVersionStatus`, sync_worker.go `runThrottledStatusNotifier`).
    pub(super) async fn write_status(&mut self) {
        if self.mode != EngineMode::ActiveApply || !self.leading() || self.switch.is_read_only() {
            return;
        }
        let Some(cv) = self.cv.clone() else {
            return;
        };
        let worker = self.worker_status();
        let new = self.compute(&cv, &worker);
        if !same_status(&cv.status, &new) {
            let now = Instant::now();
            match self.deferred_write {
                Some(t) if now < t => return,
                Some(_) => self.deferred_write = None,
                None => {
                    let offered_changed = self.last_offered.as_ref() != Some(&worker);
                    if offered_changed {
                        let wait = self.throttle.offer(&worker, now);
                        self.last_offered = Some(worker.clone());
                        if !wait.is_zero() {
                            self.deferred_write = Some(now + wait);
                            return;
                        }
                    }
                }
            }
            match self.put_status(cv, &worker).await {
                Ok(written) => {
                    self.status_writes += 1;
                    self.cv = Some(written);
                }
                Err(e) => {
                    tracing::warn!("{e}");
                    self.last_error = Some(e.to_string());
                    self.cv = None;
                }
            }
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
