//! How often the engine loop turns without an event: every
//! [`crate::reconcile::runtime::EngineTimings::cv_poll`] while something may change with the
//! passing of time alone, every [`QUIET_POLL`] once the cluster is quiet.
//!
//! Upstream's operator has no such poll: its ClusterVersion informer and its queue wake it
//! (`pkg/cvo/cvo.go`), and the status is recomputed when the sync worker reports. Here the
//! loop also wakes on every ClusterVersion event ([`super::cv_feed`]), on worker progress, on
//! leadership, update-service and pull changes; the poll covers what no event announces:
//! - the time rules of the status (the 30/40/90-minute rules of `convertErrorToProgressing`,
//!   upstream `pkg/cvo/status.go`), which apply only while the worker reports a failure;
//! - a held-back progress write ([`super::status_write`]), which has its own instant anyway;
//! - reading the ClusterVersion with a GET while its watch has not listed or fails;
//! - the FeatureGate re-read ([`super::gates`], every 30 s at most).

use std::time::Duration;

use super::EngineLoop;

/// The loop's poll while quiet: at level, the last pass complete and without failure (a
/// reconciling pass may be running: a failure in it wakes the loop and ends the quiet), the
/// ClusterVersion watch live, no write held back, no pull or error pending. Nothing in the
/// status depends on the time then; the poll only keeps the FeatureGate re-read going (at most
/// 30 s + 10 s apart). An idle engine (the demo after its update, `cvo tui`, the operator at
/// level) turns once per 10 s instead of once a second.
pub(super) const QUIET_POLL: Duration = Duration::from_secs(10);

impl EngineLoop {
    /// Whether nothing the engine reports can change without an event (see [`QUIET_POLL`]).
    pub(super) fn quiet(&self) -> bool {
        if !self.cv_feed.as_ref().is_some_and(super::cv_feed::CvFeed::live)
            || self.deferred_write.is_some()
            || self.blocked.is_some()
            || self.last_error.is_some()
            || self.pulling.is_some()
            || self.cv.is_none()
        {
            return false;
        }
        let v = self.worker.view();
        let st = &v.status;
        st.reconciling && st.failure.is_none() && st.completed > 0 && st.load_payload_status.failure.is_none()
    }

    /// The wait until the next turn without an event: [`QUIET_POLL`] when [`Self::quiet`]
    /// (never shorter than the configured poll), else the configured
    /// [`crate::reconcile::runtime::EngineTimings::cv_poll`].
    pub(super) fn poll_interval(&self) -> Duration {
        let poll = self.cfg.timings.cv_poll;
        if self.quiet() { poll.max(QUIET_POLL) } else { poll }
    }
}
