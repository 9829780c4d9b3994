//! The CVO Lease followed live (cvo only: upstream's elector reads the Lease every retry
//! period, 26 s, and only while it campaigns; a watch-only cvo has no elector).
//!
//! With a Lease configured, a watch-only engine watches that one Lease
//! ([`super::cv_feed::ObjectFeed`] over the process's informer of that Lease), from its start or from
//! its switch to watch-only on, and [`EngineLoop::follow_lease`] keeps [`StatusSnapshot::lease`]
//! current (in active-apply the elector knows the Lease: held, or its holder as read each
//! retry period):
//!
//! - each event of the watch (a renewal, a new holder, a release, a deletion) replaces it, and
//!   the loop publishes a snapshot at once ([`EngineLoop::run`]'s Lease branch);
//! - a holder that stops renewing sends no event: each turn of the loop (at least every 10 s
//!   while quiet, `poll.rs`) judges it again against the clock and marks it expired once
//!   `renewTime + leaseDurationSeconds` has passed;
//! - while the watch has not listed or fails (a server that refuses the watch), the Lease is
//!   read with a GET instead, at most once per [`LEASE_REREAD`]; never while this engine leads
//!   (the elector knows the Lease then).
//!
//! [`StatusSnapshot::lease`]: crate::reconcile::api::StatusSnapshot::lease

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;

use super::{EngineLoop, cv_feed::Seen};

/// Shortest interval between two GETs of the Lease while its watch cannot tell.
pub(super) const LEASE_REREAD: Duration = Duration::from_secs(10);

/// The watch of the CVO Lease and what the engine took from it.
pub(super) struct LeaseFollow {
    /// The watch.
    pub(super) feed: super::cv_feed::ObjectFeed<Lease>,
    /// Moves at each event of the watch; the loop waits on clones of it and marks it seen.
    pub(super) rx: tokio::sync::watch::Receiver<u64>,
    /// The feed's event count last taken into [`EngineLoop::lease_info`].
    applied: Option<u64>,
    /// When the Lease was last read with a GET because the watch could not tell.
    read: Option<tokio::time::Instant>,
}

impl EngineLoop {
    /// Starts watching the CVO Lease when one is configured and no watch runs yet.
    pub(super) fn start_lease_feed(&mut self) {
        let Some(lc) = &self.cfg.lease else { return };
        if self.lease_follow.is_some() {
            return;
        }
        let informer = self
            .informers
            .namespaced::<Lease>(&lc.namespace, Some(&format!("metadata.name={}", lc.name)));
        let feed = super::cv_feed::ObjectFeed::start(informer, Some(&lc.namespace), &lc.name);
        let mut rx = feed.changes();
        rx.borrow_and_update();
        self.lease_follow = Some(LeaseFollow {
            feed,
            rx,
            applied: None,
            read: None,
        });
    }

    /// Brings [`EngineLoop::lease_info`] up to date (see the module doc): the watch's newest
    /// state when it has one not taken yet; else a GET when the watch cannot tell (at most
    /// every [`LEASE_REREAD`], never while leading); else the Lease as held, its holder judged
    /// again against the clock.
    pub(super) async fn follow_lease(&mut self) {
        let Some(lc) = self.cfg.lease.clone() else { return };
        let now = chrono::Utc::now();
        let step = match &self.lease_follow {
            None => Step::Judge,
            Some(f) if f.feed.live() => {
                let generation = *f.feed.changes().borrow();
                if f.applied == Some(generation) {
                    Step::Judge
                } else {
                    let lease = match f.feed.seen() {
                        Seen::Present(l) => Some(l),
                        Seen::Absent | Seen::Unknown => None,
                    };
                    Step::Take(generation, lease)
                }
            }
            Some(f) if !self.leading_now() && f.read.is_none_or(|t| t.elapsed() >= LEASE_REREAD) => {
                Step::Read
            }
            Some(_) => Step::Judge,
        };
        match step {
            Step::Take(generation, lease) => {
                if let Some(f) = &mut self.lease_follow {
                    f.applied = Some(generation);
                }
                self.lease_info = Some(crate::reconcile::runtime::leader::lease_info_of(
                    &lc,
                    lease.as_deref(),
                    now,
                ));
            }
            Step::Read => {
                if let Some(f) = &mut self.lease_follow {
                    f.read = Some(tokio::time::Instant::now());
                }
                self.read_lease().await;
            }
            Step::Judge => {
                if let Some(info) = &mut self.lease_info {
                    expire(info, now);
                }
            }
        }
    }

    /// Whether the elector says this engine holds the Lease now.
    fn leading_now(&self) -> bool {
        self.leader
            .as_ref()
            .is_some_and(|(rx, _)| rx.borrow().is_leading())
    }
}

/// What [`EngineLoop::follow_lease`] does on a turn.
enum Step {
    /// Take the watch's newest state (its event count, the Lease or `None` when absent).
    Take(u64, Option<std::sync::Arc<Lease>>),
    /// Read the Lease with a GET (the watch cannot tell).
    Read,
    /// Judge the Lease as held against the clock.
    Judge,
}

/// Marks a holder that was alive as expired once its `renewTime + leaseDurationSeconds` is
/// before `now` (a renewal would have come as a watch event).
fn expire(info: &mut crate::reconcile::api::LeaseInfo, now: chrono::DateTime<chrono::Utc>) {
    if info.alive && !info.ours && info.expires().is_some_and(|t| t < now) {
        info.alive = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::api::LeaseInfo;

    #[test]
    fn a_holder_that_stopped_renewing_expires_with_the_clock() {
        let renewed = chrono::DateTime::parse_from_rfc3339("2024-07-20T10:00:00Z")
            .map(|t| t.to_utc())
            .expect("time");
        let mut info = LeaseInfo {
            lease: "openshift-cluster-version/version".into(),
            holder: Some("other_1".into()),
            renew_time: Some(renewed),
            duration_seconds: Some(137),
            alive: true,
            ..LeaseInfo::default()
        };
        expire(&mut info, renewed + chrono::Duration::seconds(137));
        assert!(info.alive, "alive up to renewTime + duration");
        expire(&mut info, renewed + chrono::Duration::seconds(138));
        assert!(!info.alive, "expired after it");
        assert!(
            info.blocks_switch().is_none(),
            "an expired holder no longer blocks"
        );
        // Our own Lease is the elector's to judge.
        let mut ours = LeaseInfo {
            ours: true,
            alive: true,
            ..info.clone()
        };
        expire(&mut ours, renewed + chrono::Duration::seconds(500));
        assert!(ours.alive);
    }
}
