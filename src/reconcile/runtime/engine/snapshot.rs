//! The [`StatusSnapshot`] the engine publishes, with its event log.

use std::{collections::BTreeMap, sync::Arc};

use tokio::time::Instant;

use super::EngineLoop;
use crate::reconcile::{
    api::{Counters, EngineMode, EngineState, Failure, RunLevelProgress, StatusSnapshot, TaskState},
    payload::PayloadState,
    runtime::sync_worker::WorkerView,
};

/// How long an unchanged snapshot goes without being sent again (with a fresh `at`).
const IDLE_REPUBLISH: std::time::Duration = std::time::Duration::from_secs(30);

impl EngineLoop {
    pub(super) fn publish(&mut self, force: bool) {
        let now = Instant::now();
        // Every turn is observed for the event log (so short-lived changes are logged), but
        // snapshots are sent at most every half snapshot interval unless an event was added or
        // the ClusterVersion status was written since the last one: a dashboard showing both
        // (the header reads the ClusterVersion, the gauge this snapshot) then never shows a
        // write the gauge has not caught up with for longer than this turn.
        let v = self.worker.view();
        let mut snap = self.snapshot_of(&v, force);
        let before = self.events.seq();
        self.events.observe(&snap);
        let logged = self.events.seq() != before;
        let wrote = self.snapshot.borrow().counters.status_writes != snap.counters.status_writes;
        if !force
            && !logged
            && !wrote
            && self
                .last_publish
                .is_some_and(|t| now.duration_since(t) < self.cfg.timings.snapshot_interval / 2)
        {
            return;
        }
        snap.events = self.events.events();
        // A turn that changed nothing but the snapshot's time (the idle engine's once-a-second
        // re-read of the ClusterVersion) sends nothing, so an idle dashboard is not woken to
        // find nothing to draw; the time is refreshed at least every [`IDLE_REPUBLISH`] (the
        // switch popup judges the Lease at it).
        let same = {
            let cur = self.snapshot.borrow();
            let at = snap.at;
            snap.at = cur.at;
            let same = **cur == snap;
            snap.at = at;
            same
        };
        if same
            && !force
            && self
                .last_publish
                .is_some_and(|t| now.duration_since(t) < IDLE_REPUBLISH)
        {
            return;
        }
        self.last_publish = Some(now);
        self.snapshot.send_replace(Arc::new(snap));
    }

    pub(super) fn snapshot_of(&self, v: &WorkerView, stopped: bool) -> StatusSnapshot {
        // One read of the elector's state for the whole snapshot: two reads could straddle an
        // acquire and say "waiting for the lease, held by <ourselves>".
        let lease_state = self.leader.as_ref().map(|(rx, _)| rx.borrow().clone());
        let leading = match &lease_state {
            Some(ls) => ls.is_leading(),
            None => self.cfg.lease.is_none(),
        };
        let state = if stopped {
            EngineState::Stopped
        } else if self.mode == EngineMode::ActiveApply && !leading {
            EngineState::WaitingForLease
        } else if let Some(b) = &self.blocked {
            EngineState::Blocked(b.clone())
        } else {
            match v.state {
                None => EngineState::Starting,
                Some(PayloadState::Initializing) => EngineState::Initializing,
                Some(PayloadState::Updating) => EngineState::Updating,
                Some(PayloadState::Reconciling) => EngineState::Reconciling,
            }
        };
        let mut levels: BTreeMap<Option<u32>, RunLevelProgress> = BTreeMap::new();
        let mut failures = Vec::new();
        for t in v.tasks.iter() {
            let l = levels.entry(t.run_level).or_insert_with(|| RunLevelProgress {
                level: t.run_level,
                ..Default::default()
            });
            l.total += 1;
            match &t.state {
                TaskState::Done => l.done += 1,
                TaskState::Failed(e) => {
                    l.failed += 1;
                    failures.push(Failure {
                        reason: t.name.clone(),
                        message: e.clone(),
                    });
                }
                TaskState::Skipped(_) => l.skipped += 1,
                _ => {}
            }
        }
        let counters = Counters {
            passes: v.passes,
            apply_writes: v.writes,
            status_writes: self.status_writes,
            requests: self.counters.snapshot(),
            refused_writes: self.counters.refused(),
            lease_writes: self.counters.lease_writes(),
            drift_rechecks: v.rechecks,
        };
        let failure = v.status.failure.as_ref().map(|f| Failure {
            reason: f.reason().to_string(),
            message: f.to_string(),
        });
        StatusSnapshot {
            state,
            mode: self.mode,
            desired: (!v.status.actual.image.is_empty()).then(|| v.status.actual.clone()),
            fraction: v.status.fraction(),
            done: v.status.done,
            total: v.status.total,
            completed: v.status.completed,
            attempt: v.attempt,
            running: v.running,
            run_levels: levels.into_values().collect(),
            tasks: v.tasks.clone(),
            failure,
            failures,
            drift: v.drift.clone(),
            lease_holder: self.lease_holder(lease_state.as_ref()),
            lease: self.lease_of(lease_state.as_ref()),
            leader: self.mode == EngineMode::ActiveApply && leading,
            last_command: self.last_command.clone(),
            counters,
            cluster_version: self
                .cv
                .clone()
                .map(crate::reconcile::api::ClusterVersionView::from),
            last_error: self.last_error.clone(),
            at: Some(self.cfg.timings.clock.now()),
            // Filled by `publish` from the event log.
            events: Default::default(),
            payload_error: Self::payload_error(v),
            payload_pull: self.pulling.clone(),
            updates: self.fetched_updates(),
            accept_risks_gate: self.gates.accept_risks,
            recent_passes: v.recent_passes.clone(),
            registered_unverified: self.registered_unverified.iter().cloned().collect(),
        }
    }

    /// The Lease as the snapshot shows it: ours and alive while the elector leads, else the
    /// holder the elector last saw (waiting), else the last read.
    pub(super) fn lease_of(
        &self,
        ls: Option<&crate::reconcile::runtime::leader::LeaderState>,
    ) -> Option<crate::reconcile::api::LeaseInfo> {
        use crate::reconcile::runtime::leader::LeaderState;
        let lc = self.cfg.lease.as_ref()?;
        let mut info = self
            .lease_info
            .clone()
            .unwrap_or_else(|| crate::reconcile::api::LeaseInfo {
                lease: format!("{}/{}", lc.namespace, lc.name),
                ..Default::default()
            });
        match ls {
            Some(LeaderState::Leading { since }) => {
                info.holder = Some(lc.identity.clone());
                info.ours = true;
                info.alive = true;
                info.error = None;
                info.duration_seconds = i32::try_from(lc.timings.lease_duration.as_secs()).ok();
                // Held since it was acquired: known without a read (the Lease is on the wall
                // clock). Not "now": a time that changes every turn would make every snapshot
                // new and wake an idle dashboard each second for nothing to draw.
                info.read_at = Some(*since);
            }
            Some(LeaderState::Acquiring { holder: Some(h), .. }) if info.holder.as_ref() != Some(h) => {
                info.holder = Some(h.clone());
                info.ours = false;
                info.alive = true;
                info.read_at = Some(chrono::Utc::now());
            }
            _ => {}
        }
        Some(info)
    }

    /// Who holds the Lease by the elector's state `ls` (read once by the caller).
    pub(super) fn lease_holder(
        &self,
        ls: Option<&crate::reconcile::runtime::leader::LeaderState>,
    ) -> Option<String> {
        match ls? {
            crate::reconcile::runtime::leader::LeaderState::Leading { .. } => {
                self.cfg.lease.as_ref().map(|l| l.identity.clone())
            }
            crate::reconcile::runtime::leader::LeaderState::Acquiring { holder, .. } => holder.clone(),
            _ => None,
        }
    }
}
