//! The [`Command`]s of the contract, as ClusterVersion spec patches or engine switches.

use chrono::Utc;

use super::{CommandError, EngineLoop};
use crate::reconcile::api::{Command, CommandOutcome, EngineMode};

impl EngineLoop {
    pub(super) async fn command(&mut self, c: Command) {
        let text = c.to_string();
        let result = self.run_command(c).await.map_err(|e| e.to_string());
        self.last_command = Some(outcome(&text, result, self.cfg.timings.clock.now()));
    }

    pub(super) async fn run_command(&mut self, c: Command) -> Result<String, CommandError> {
        let name = self.cfg.cluster_version_name.clone();
        match c {
            Command::ReconcileNow => {
                self.worker.notify();
                Ok("pass requested".into())
            }
            Command::CheckLease => {
                self.read_lease().await;
                Ok(match self.lease_info.as_ref().and_then(|l| l.holder.clone()) {
                    _ if self.cfg.lease.is_none() => "no Lease configured".into(),
                    Some(h) => format!("Lease held by {h}"),
                    None => "Lease free".into(),
                })
            }
            Command::SetMode(m) if m == self.mode => Ok(format!("already {}", mode_word(m))),
            Command::SetMode(m) => {
                if m == EngineMode::ActiveApply && self.cfg.lease.is_some() {
                    // Never fight another CVO: refuse while another holder's lease is alive.
                    self.read_lease().await;
                    if let Some(why) = self.lease_info.as_ref().and_then(|l| l.blocks_switch()) {
                        return Err(CommandError::LeaseHeld(why));
                    }
                }
                self.mode = m;
                if m == EngineMode::WatchOnly {
                    // Who holds the Lease from now on, live ([`super::lease_follow`]).
                    self.start_lease_feed();
                }
                if m == EngineMode::ActiveApply {
                    self.start_elector().await;
                } else if let Some((_, h)) = self.leader.take() {
                    self.switch.set(true);
                    let released = h.release().await;
                    if let Some(lc) = &self.cfg.lease {
                        self.lease_info = Some(crate::reconcile::api::LeaseInfo {
                            lease: format!("{}/{}", lc.namespace, lc.name),
                            read_at: Some(Utc::now()),
                            error: released.err().map(|e| e.to_string()),
                            ..Default::default()
                        });
                    }
                }
                let write = m == EngineMode::ActiveApply && self.leading();
                self.switch.set(!write);
                self.worker.set_dry_run(!write);
                Ok(format!("switched to {}", mode_word(m)))
            }
            Command::Shutdown => Ok("stopping".into()),
            Command::Request(request) => {
                // The administrator's own request: written in both modes, through the client
                // without the watch-only guard (like the Lease), by the one write path of
                // requests (its patch is in scope by construction).
                crate::spec_request::send(self.lease_client.clone(), &name, &request.patch, false)
                    .await
                    .map_err(|err| CommandError::Send {
                        name: name.clone(),
                        err,
                    })?;
                Ok(format!("ClusterVersion {name} spec patched"))
            }
        }
    }
}

/// `watch-only` / `active-apply`.
fn mode_word(m: EngineMode) -> &'static str {
    match m {
        EngineMode::WatchOnly => "watch-only",
        EngineMode::ActiveApply => "active-apply",
    }
}

/// The outcome of `cmd`, handled at `at` (the engine's clock, [`EngineTimings::clock`]: the
/// demo's simulated one, so the dashboard measures its age on the clock it shows).
///
/// [`EngineTimings::clock`]: crate::reconcile::EngineTimings::clock
pub(super) fn outcome(
    cmd: &str,
    result: Result<String, String>,
    at: chrono::DateTime<Utc>,
) -> CommandOutcome {
    CommandOutcome {
        command: cmd.to_string(),
        result,
        at,
    }
}
