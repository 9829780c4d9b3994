//! Readiness and liveness of the operator, from what it observes: the API server probe, the
//! watches' health, the engine's own errors and the CVO Lease.
//!
//! - **Ready** (`/readyz` 200): the API server answered the last probe, every watch has listed
//!   and none is failing, the engine can read its ClusterVersion, and (active-apply) the Lease
//!   state is known: this process leads, or it knows who does. Otherwise 503 with one reason per
//!   line. When the watches have listed again after an outage, the operator is ready at once:
//!   the watches answering prove the API server answers (no wait for the next probe), and the
//!   engine error recorded during the outage no longer counts (a different error does).
//! - **Live** (`/healthz` 200): the engine task runs. A stopped engine makes the process exit
//!   anyway; liveness covers an engine that stopped without the process noticing.

use std::sync::Mutex;

use crate::{
    cluster::FeedStatus,
    reconcile::api::{EngineMode, StatusSnapshot},
};

/// What readiness is decided from; updated by the operator's observers.
#[derive(Clone, Debug, Default)]
pub struct HealthInputs {
    /// The last API server probe: `Ok` answered, `Err` why not; `None` before the first.
    pub api: Option<Result<(), String>>,
    /// The watches' feed status.
    pub feed: FeedStatus,
    /// The engine's latest snapshot is taken into account through these fields.
    pub engine_error: Option<String>,
    /// Watch-only or active-apply.
    pub mode: EngineMode,
    /// This process holds the Lease.
    pub leader: bool,
    /// The Lease holder, when known.
    pub lease_holder: Option<String>,
    /// The engine task has stopped.
    pub engine_stopped: bool,
    /// `engine_error` was recorded before the watches recovered from an outage: it does not
    /// count until the engine reports another.
    pub engine_error_stale: bool,
}

impl HealthInputs {
    /// Takes the engine's part from a snapshot.
    pub fn observe_engine(&mut self, s: &StatusSnapshot) {
        if s.last_error != self.engine_error {
            self.engine_error_stale = false;
        }
        self.engine_error = s.last_error.clone();
        self.mode = s.mode;
        self.leader = s.leader;
        self.lease_holder = s.lease_holder.clone();
    }

    /// Takes the watches' status. Watches that listed again after failing (every one listed,
    /// none failing) mean the API server answers: the probe's last failure and the engine's
    /// error of the outage stop counting at once, without waiting for the next probe or turn.
    pub fn observe_feed(&mut self, feed: FeedStatus) {
        let was_failing = matches!(&self.feed, FeedStatus::Live { error: Some(_), .. });
        let healthy = matches!(
            &feed,
            FeedStatus::Live {
                synced: true,
                error: None
            }
        );
        if was_failing && healthy {
            self.api = Some(Ok(()));
            self.engine_error_stale = self.engine_error.is_some();
        }
        self.feed = feed;
    }

    /// Why the operator is not ready, one reason each; empty ⇒ ready.
    pub fn not_ready(&self) -> Vec<String> {
        let mut why = Vec::new();
        match &self.api {
            None => why.push("the API server has not been probed yet".to_string()),
            Some(Err(e)) => why.push(format!("the API server does not answer: {e}")),
            Some(Ok(())) => {}
        }
        match &self.feed {
            FeedStatus::Live { synced, error } => {
                if let Some(e) = error {
                    why.push(format!(
                        "watches failing since {}: {}",
                        e.since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        e.message
                    ));
                } else if !synced {
                    why.push("the watches have not listed yet".to_string());
                }
            }
            FeedStatus::Static => why.push("no watches".to_string()),
        }
        if let Some(e) = self.engine_error.as_ref().filter(|_| !self.engine_error_stale) {
            why.push(format!("the engine: {}", e.lines().next().unwrap_or_default()));
        }
        if self.mode == EngineMode::ActiveApply && !self.leader && self.lease_holder.is_none() {
            why.push("the CVO Lease has not been read yet".to_string());
        }
        if self.engine_stopped {
            why.push("the engine stopped".to_string());
        }
        why
    }

    /// Why the operator is not live; empty ⇒ live.
    pub fn not_live(&self) -> Vec<String> {
        if self.engine_stopped {
            vec!["the engine stopped".to_string()]
        } else {
            Vec::new()
        }
    }
}

/// [`HealthInputs`] shared between the observers and the HTTP server.
#[derive(Debug, Default)]
pub struct Health(Mutex<HealthInputs>);

impl Health {
    /// Changes the inputs under the lock.
    pub fn update(&self, f: impl FnOnce(&mut HealthInputs)) {
        f(&mut self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    }

    /// A copy of the inputs.
    pub fn get(&self) -> HealthInputs {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::FeedError;

    fn healthy() -> HealthInputs {
        HealthInputs {
            api: Some(Ok(())),
            feed: FeedStatus::Live {
                synced: true,
                error: None,
            },
            mode: EngineMode::ActiveApply,
            leader: true,
            ..HealthInputs::default()
        }
    }

    #[test]
    fn ready_only_when_api_watches_engine_and_lease_are_healthy() {
        assert_eq!(healthy().not_ready(), Vec::<String>::new());
        let mut h = healthy();
        h.api = Some(Err("no answer within 3s".into()));
        assert_eq!(
            h.not_ready(),
            ["the API server does not answer: no answer within 3s"]
        );
        let mut h = healthy();
        h.feed = FeedStatus::Live {
            synced: true,
            error: Some(FeedError {
                message: "watch clusteroperators: 503".into(),
                since: chrono::DateTime::from_timestamp(0, 0).unwrap_or_default(),
            }),
        };
        assert_eq!(
            h.not_ready(),
            ["watches failing since 1970-01-01T00:00:00Z: watch clusteroperators: 503"]
        );
        let mut h = healthy();
        h.feed = FeedStatus::Live {
            synced: false,
            error: None,
        };
        assert_eq!(h.not_ready(), ["the watches have not listed yet"]);
        // A follower that knows the leader is ready; one that has not read the Lease is not.
        let mut h = healthy();
        h.leader = false;
        h.lease_holder = Some("other".into());
        assert!(h.not_ready().is_empty());
        h.lease_holder = None;
        assert_eq!(h.not_ready(), ["the CVO Lease has not been read yet"]);
        // Watch-only takes no Lease.
        h.mode = EngineMode::WatchOnly;
        assert!(h.not_ready().is_empty());
        h.engine_error = Some("reading ClusterVersion version: 500\nmore".into());
        assert_eq!(h.not_ready(), ["the engine: reading ClusterVersion version: 500"]);
        assert!(h.not_live().is_empty());
        h.engine_stopped = true;
        assert_eq!(h.not_live(), ["the engine stopped"]);
    }

    /// After an outage the operator is ready as soon as the watches have listed again: not
    /// after the next API probe, nor after the engine's next turn.
    #[test]
    fn ready_as_soon_as_the_watches_resync_after_an_outage() {
        let failing = || FeedStatus::Live {
            synced: true,
            error: Some(FeedError {
                message: "watch clusteroperators: connection refused".into(),
                since: chrono::DateTime::from_timestamp(0, 0).unwrap_or_default(),
            }),
        };
        let mut h = healthy();
        h.observe_feed(failing());
        h.api = Some(Err("connection refused".into()));
        let outage = StatusSnapshot {
            last_error: Some("reading ClusterVersion version: connection refused".into()),
            mode: EngineMode::ActiveApply,
            leader: true,
            ..StatusSnapshot::default()
        };
        h.observe_engine(&outage);
        assert_eq!(h.not_ready().len(), 3, "{:?}", h.not_ready());
        // Relisting (not synced yet) is not enough.
        h.observe_feed(FeedStatus::Live {
            synced: false,
            error: Some(FeedError {
                message: "list clusteroperators: connection refused".into(),
                since: chrono::DateTime::from_timestamp(0, 0).unwrap_or_default(),
            }),
        });
        assert!(!h.not_ready().is_empty());
        h.observe_feed(FeedStatus::Live {
            synced: true,
            error: None,
        });
        assert_eq!(h.not_ready(), Vec::<String>::new());
        // The same snapshot again keeps it ready; another error counts at once.
        h.observe_engine(&outage);
        assert!(h.not_ready().is_empty());
        let forbidden = StatusSnapshot {
            last_error: Some("reading ClusterVersion version: forbidden (Forbidden)".into()),
            ..outage.clone()
        };
        h.observe_engine(&forbidden);
        assert_eq!(
            h.not_ready(),
            ["the engine: reading ClusterVersion version: forbidden (Forbidden)"]
        );
        // A healthy feed that was never failing does not clear a probe failure.
        let mut h = healthy();
        h.api = Some(Err("no answer within 3s".into()));
        h.observe_feed(FeedStatus::Live {
            synced: true,
            error: None,
        });
        assert_eq!(
            h.not_ready(),
            ["the API server does not answer: no answer within 3s"]
        );
    }
}
