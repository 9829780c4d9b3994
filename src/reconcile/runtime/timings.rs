//! Every interval the engine uses, upstream's values or scaled for tests and the demo
//! (upstream `pkg/start/start.go` `resyncPeriod`, `pkg/cvo/cvo.go`, `pkg/cvo/sync_worker.go`).

use std::time::Duration;

use rand::Rng;
use serde::Serialize;

use crate::reconcile::payload::PayloadState;

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

/// Jitter of one manifest's retries: ±10 % around [`RetryPolicy::delay`] (upstream's
/// `wait.Backoff` has none; tasks failing together on one API server outage then retry
/// together, which this spreads).
pub const RETRY_JITTER: f64 = 0.1;

impl RetryPolicy {
    /// Wait before attempt `n + 1` after `n` failures (`n ≥ 1`), without jitter.
    pub fn delay(&self, failures: u32) -> Duration {
        let exp = i32::try_from(failures.saturating_sub(1)).unwrap_or(i32::MAX);
        self.initial.mul_f64(self.factor.powi(exp)).min(self.cap)
    }

    /// [`Self::delay`] ±[`RETRY_JITTER`]: the wait the sync worker sleeps.
    pub fn jittered_delay(&self, failures: u32) -> Duration {
        crate::clock::jittered(self.delay(failures), RETRY_JITTER)
    }
}

/// Every interval the engine uses (upstream `pkg/start/start.go`, `pkg/cvo/cvo.go`,
/// `sync_worker.go`). [`EngineTimings::upstream`] gives upstream's values; tests and the demo use
/// [`EngineTimings::scaled`].
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
    /// Shortest interval between two ClusterVersion status writes that only report progress
    /// (1 s, not scaled); edges (a new target, Completed, Failing, a new run level) are written
    /// at once. Deliberately not upstream's notifier (`runThrottledStatusNotifier` in
    /// `pkg/cvo/sync_worker.go`: one write per 15 s, burst 2), under which Progressing and
    /// history trail the sync by up to 15 s.
    pub status_interval: Duration,
    /// How often the engine loop turns without an event, re-reading the ClusterVersion
    /// (upstream reacts to informer events; the startup poll is 3 s). Once the cluster is quiet
    /// (at level, no failure, the ClusterVersion watch live) the loop turns every 10 s instead,
    /// or this interval if longer (`engine/poll.rs`).
    pub cv_poll: Duration,
    /// Lease duration (HA 137 s).
    pub lease_duration: Duration,
    /// Lease renew deadline (HA 107 s).
    pub lease_renew_deadline: Duration,
    /// Lease retry period (HA 26 s).
    pub lease_retry_period: Duration,
    /// Shortest interval between two passes a change of a payload object asks for in
    /// watch-only (1 s, not scaled): the drift is re-checked when the applier's watches see
    /// one of the payload's objects change, a burst of changes costing one pass, never a
    /// request storm (cvo only: upstream re-checks on its resync interval).
    pub drift_recheck: Duration,
    /// Shortest interval between two published engine snapshots.
    pub snapshot_interval: Duration,
    /// The clock of the times the engine writes (history, condition transitions, when each
    /// ClusterOperator's update started) and of the 30/40/90-minute rules: the wall clock,
    /// or the demo's simulated clock ([`crate::clock::Clock::simulated`]). Not scaled with
    /// the intervals above: those are timers, this says what time it is.
    #[serde(skip)]
    pub clock: crate::clock::Clock,
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
            status_interval: Duration::from_secs(1),
            cv_poll: Duration::from_secs(3),
            lease_duration: Duration::from_secs(137),
            lease_renew_deadline: Duration::from_secs(107),
            lease_retry_period: Duration::from_secs(26),
            drift_recheck: Duration::from_secs(1),
            snapshot_interval: Duration::from_millis(100),
            clock: crate::clock::Clock::wall(),
        }
    }

    /// Upstream's timings with `I` fixed at 3 min and every interval multiplied by `factor`
    /// (e.g. `0.001` turns 3 min into 180 ms). The snapshot interval and the status progress
    /// interval are not scaled (progress writes stay at most one a second).
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
            status_interval: t.status_interval,
            cv_poll: s(t.cv_poll),
            lease_duration: s(t.lease_duration),
            lease_renew_deadline: s(t.lease_renew_deadline),
            lease_retry_period: s(t.lease_retry_period),
            drift_recheck: t.drift_recheck,
            snapshot_interval: t.snapshot_interval,
            clock: t.clock,
        }
    }

    /// Wait after the `attempt`-th consecutive failed pass (`attempt ≥ 1`): `I/8`, `I/4`,
    /// `I/2`, then `I`, each ±`jitter` (sync_worker.go `Start`).
    pub(crate) fn error_backoff(&self, attempt: u32) -> Duration {
        let base = match attempt {
            0 | 1 => self.resync_interval / 8,
            2 => self.resync_interval / 4,
            3 => self.resync_interval / 2,
            _ => self.resync_interval,
        };
        crate::clock::jittered(base, self.jitter)
    }

    /// Apply timeout of one pass: `I` while initializing, `2·I` otherwise.
    pub(crate) fn apply_timeout(&self, state: PayloadState) -> Duration {
        match state {
            PayloadState::Initializing => self.resync_interval,
            _ => self.resync_interval * 2,
        }
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
        // The worker sleeps the jittered wait: within ±10 %, and not the same every time.
        let waits: Vec<Duration> = (0..20).map(|_| t.retry.jittered_delay(2)).collect();
        assert!(
            waits
                .iter()
                .all(|w| *w >= Duration::from_secs_f64(11.7) && *w < Duration::from_secs_f64(14.3)),
            "{waits:?}"
        );
        assert!(waits.iter().any(|w| *w != waits[0]), "{waits:?}");
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
}
