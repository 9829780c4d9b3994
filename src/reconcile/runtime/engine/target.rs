//! Target selection and payload loading (upstream `pkg/cvo/cvo.go` `sync`, the payload
//! retriever of `pkg/cvo/updatepayload.go`, `pkg/cvo/sync_worker.go` `loadUpdatedPayload`).

use std::sync::Arc;

use super::{EngineLoop, PayloadLoadError, capabilities};
use crate::openshift::Release;
use crate::reconcile::{
    api::{EngineMode, PullProgress, Resolution, ResolveFailure, ResolveRequest},
    errors::SyncError,
    payload::{
        ComponentOverride, LoadOptions, Payload, PayloadState,
        capability::{CapabilitiesSpec, CapabilitiesStatus, set_capabilities},
        load_update,
    },
    runtime::sync_worker::{SyncWork, WorkerView, initial_state},
    status::{
        upgradeable::{PreconditionFailure, Target, run_preconditions, summarize},
        validation::validate_cluster_version,
        worker_status::LoadPayloadStatus,
    },
};

impl EngineLoop {
    /// Target selection and payload loading (upstream pkg/cvo/cvo.go `sync`, updatepayload.go
    /// `findUpdateFromConfig`).
    pub(super) fn update_worker(&mut self) {
        // No pass before the first lease decision: a pass started before it would run
        // watch-only and be cancelled (or counted) when the lease comes, so the first pass
        // after start-up is the one that writes (upstream runs no sync worker before leading).
        if self.blocked.is_some() || self.lease_pending() {
            return;
        }
        // Verified release signatures are saved into the cluster in active-apply only
        // (upstream's persister runs every two reconcile intervals).
        if self.mode == EngineMode::ActiveApply && self.leading() && !self.switch.is_read_only() {
            self.cfg.payloads.persist_signatures(
                &self.api.clone().into_client(),
                self.cfg.timings.resync_interval * crate::reconcile::signature::configmap::PERSIST_INTERVALS,
            );
        }
        let own = self.own_release();
        let cv = self.cv.clone().unwrap_or_default();
        let errs = validate_cluster_version(&cv, self.accept_risks_gate());
        let desired_invalid = errs.iter().any(|e| e.field.starts_with("spec.desiredUpdate"));
        let current = self.worker.work();
        // Without a (valid) desired update the target is the release the cluster runs, as the
        // ClusterVersion's status says; our own release only on a first install.
        let running = crate::reconcile::status::upgradeable::current_release(&cv);
        let mut target = running.clone().unwrap_or_else(|| Target {
            version: own.version.clone(),
            image: own.image.clone(),
        });
        let mut force = false;
        // The image came from the update service's list (see `trust`).
        let mut listed = false;
        // Upstream resolves spec.desiredUpdate only once the worker is initialized (cvo.go `sync`);
        // our payload resolution is synchronous, so the first turn already takes it. This keeps a
        // restarted engine on the update it was doing instead of bouncing through its own
        // release (which would add a history entry).
        if !desired_invalid && let Some(du) = &cv.spec.desired_update {
            {
                let image = du.image.clone().unwrap_or_default();
                let version = du.version.clone().unwrap_or_default();
                if !image.is_empty() {
                    target = Target { version, image };
                    force = du.force;
                } else if !version.is_empty()
                    && let Some(r) = cv
                        .status
                        .available_updates
                        .iter()
                        .flatten()
                        .find(|r| r.version == version && !r.image.is_empty())
                {
                    target = Target {
                        version,
                        image: r.image.clone(),
                    };
                    force = du.force;
                    listed = true;
                }
            }
        }
        if target.image.is_empty() {
            return;
        }
        let overrides: Vec<ComponentOverride> = cv
            .spec
            .overrides
            .iter()
            .map(|o| ComponentOverride {
                kind: o.kind.clone(),
                group: o.group.clone(),
                namespace: o.namespace.clone(),
                name: o.name.clone(),
                unmanaged: o.unmanaged,
            })
            .collect();
        let caps_spec = cv.spec.capabilities.as_ref().map(|c| CapabilitiesSpec {
            baseline_capability_set: c.baseline_capability_set.clone(),
            additional_enabled_capabilities: c.additional_enabled_capabilities.clone(),
        });
        let caps = set_capabilities(
            caps_spec.as_ref(),
            &capabilities::prior_capabilities(current.as_deref(), &cv),
            &Default::default(),
        );
        let caps_status = CapabilitiesStatus {
            known: caps.known.clone(),
            enabled: caps.enabled.clone(),
        };
        let generation = cv.metadata.generation.unwrap_or(0);
        // The target ends every retrieval of an earlier one (a cleared or replaced request
        // stops downloading and verifying at once, also when the work in hand is kept).
        self.cfg.payloads.cancel_others(&ResolveRequest {
            image: target.image.clone(),
            version: target.version.clone(),
            force,
            current: false,
        });
        if let Some(cur) = &current
            && cur.desired.image == target.image
            && cur.force == force
            && cur.overrides == overrides
            && cur.capabilities.enabled == caps_status.enabled
        {
            // Which enabled capabilities are implicit changes without changing the work
            // (sync_worker.go `Update`), e.g. when the spec enables an implicit one.
            let implicitly_enabled: Vec<String> = caps.implicitly_enabled.iter().cloned().collect();
            if cur.generation != generation || cur.implicitly_enabled != implicitly_enabled {
                let mut w = (**cur).clone();
                w.generation = generation;
                w.implicitly_enabled = implicitly_enabled;
                self.worker.update(w);
            }
            // Back on the work in hand (a cleared or replaced request whose release was still
            // being retrieved or had failed): ReleaseAccepted speaks of it again, not of the
            // request that is gone.
            self.pulling = None;
            self.worker.restore_load_status(&cur.load_status);
            return;
        }
        // Version change while initializing is ignored (upstream sync_worker.go `Update`).
        if let Some(cur) = &current
            && cur.state == PayloadState::Initializing
            && cur.desired.image != target.image
            && cur.desired.image == own.image
            && !cv
                .status
                .history
                .iter()
                .any(|h| h.state == crate::openshift::UpdateState::Completed)
        {
            return;
        }
        // The release the cluster already runs (accepted, so verified or forced, when it was
        // taken) and our own are not verified again and skip the preconditions, as upstream's
        // own release (`info.Local` in pkg/cvo/sync_worker.go).
        // The operator's own payload is "local" only while it is the release the cluster runs
        // (or before any release was accepted): requested on a cluster that runs another
        // release, it is an update like any other and gets the preconditions.
        let own_payload = target.image == own.image;
        let local = match &running {
            Some(r) => r.image == target.image,
            None => own_payload,
        };
        let v = |t: &Target| {
            if t.version.is_empty() {
                String::new()
            } else {
                t.version.clone()
            }
        };
        let now = self.cfg.timings.clock.now();
        let mut load = LoadPayloadStatus {
            release: Release {
                version: v(&target),
                image: target.image.clone(),
                ..Release::default()
            },
            local,
            last_transition_time: Some(now),
            ..LoadPayloadStatus::default()
        };
        let request = ResolveRequest {
            image: target.image.clone(),
            version: target.version.clone(),
            force,
            current: local,
        };
        let (payload, forced_risk, verified) = match self.load_target(&request, listed) {
            Ok(p) => p,
            Err(Loading::Pending(progress)) => {
                // ReleaseAccepted Unknown while the pull runs; the running work goes on. The
                // status keeps its first transition time while the same pull is pending.
                self.pulling = Some(progress);
                let lps = self.worker.view().status.load_payload_status;
                if !(lps.step == "RetrievePayload"
                    && lps.failure.is_none()
                    && !lps.success
                    && lps.release.image == target.image)
                {
                    self.worker
                        .set_load_status(LoadPayloadStatus::retrieving(&load.release, now));
                }
                return;
            }
            Err(Loading::Failed(e)) => {
                self.pulling = None;
                let msg = e.to_string();
                load.step = e.step().into();
                load.failure = Some(match e.reason() {
                    Some(reason) => crate::reconcile::errors::UpdateError::new(reason, msg.clone()).into(),
                    None => SyncError::plain(msg.clone()),
                });
                load.message = match e {
                    PayloadLoadError::Retrieve(_) | PayloadLoadError::Verify(_) => format!(
                        "Retrieving payload failed version=\"{}\" image=\"{}\" failure={msg}",
                        target.version, target.image
                    ),
                    _ => format!(
                        "Loading payload failed version=\"{}\" image=\"{}\" failure={msg}",
                        target.version, target.image
                    ),
                };
                self.worker.set_load_status(load);
                return;
            }
        };
        self.pulling = None;
        if own_payload {
            self.own_release = to_release(&payload.release);
            self.own_release.image = own.image.clone();
        }
        let mut accepted_risks = String::new();
        if let Some(risk) = forced_risk {
            accepted_risks = risk;
        }
        if !target.version.is_empty() && target.version != payload.release.version {
            let msg = format!(
                "release image version {} does not match the expected upstream version {}",
                payload.release.version, target.version
            );
            if !force {
                load.step = "VerifyPayloadVersion".into();
                load.message = format!(
                    "Verifying payload failed version=\"{}\" image=\"{}\" failure={msg}",
                    target.version, target.image
                );
                load.failure = Some(SyncError::plain(msg));
                self.worker.set_load_status(load);
                return;
            }
            // Forced: taken as the payload says (history records its own version), the waived
            // check recorded with the accepted risks.
            let waived = format!(
                "Target release version=\"{}\" image=\"{}\" {msg}, but continuing anyway because the update was forced",
                target.version, target.image
            );
            accepted_risks = join_risks(&accepted_risks, &waived);
        }
        let mut release = to_release(&payload.release);
        release.image = target.image.clone();
        load.release = release.clone();
        load.verified = verified;
        // Every target other than the running release is checked, also by a new process whose
        // worker holds no work yet (a one-shot `cvo reconcile`).
        if !local && (current.is_some() || running.is_some()) {
            let t = Target {
                version: release.version.clone(),
                image: release.image.clone(),
            };
            let failures: Vec<PreconditionFailure> = run_preconditions(&cv, &t)
                .into_iter()
                .map(PreconditionFailure::Check)
                .collect();
            if let Some((ue, blocking)) = summarize(&failures, force) {
                if blocking {
                    load.step = "PreconditionChecks".into();
                    load.message = format!(
                        "Preconditions failed for payload loaded version=\"{}\" image=\"{}\": {}",
                        release.version, release.image, ue.message
                    );
                    load.failure = Some(ue.into());
                    self.worker.set_load_status(load);
                    return;
                }
                accepted_risks = join_risks(&accepted_risks, &ue.message);
            }
        }
        load.success = true;
        load.step = "PayloadLoaded".into();
        load.accepted_risks = accepted_risks;
        load.message = format!(
            "Payload loaded version=\"{}\" image=\"{}\" architecture=\"{}\"",
            release.version, release.image, payload.architecture
        );
        let state = match &current {
            None => initial_state(&cv.status.history, &release.image),
            Some(c) if c.state == PayloadState::Initializing => PayloadState::Initializing,
            Some(_) => PayloadState::Updating,
        };
        let caps = capabilities::enable_implicitly(
            caps,
            &payload,
            current.as_ref().map(|c| &*c.payload),
            &Default::default(),
        );
        self.worker.update(SyncWork {
            generation,
            desired: release,
            force,
            overrides,
            capabilities: caps.status(),
            feature_gates: Default::default(),
            payload,
            state,
            load_status: load,
            implicitly_enabled: caps.implicitly_enabled.iter().cloned().collect(),
        });
    }

    /// Loads the payload of the target release (cached by image): its directory comes from
    /// the resolver, which may still be pulling it ([`Loading::Pending`]). Returns the payload,
    /// a verification failure accepted by `force` and whether the signature verified.
    #[tracing::instrument(name = "payload_load", skip(self))]
    pub(super) fn load(
        &mut self,
        request: &ResolveRequest,
    ) -> Result<(Arc<Payload>, Option<String>, bool), Loading> {
        let image = request.image.as_str();
        let resolution = self.cfg.payloads.poll(request);
        let (dir, risk, verified) = match resolution {
            Resolution::Ready {
                dir,
                accepted_risk,
                verified,
                registered,
            } => {
                let risk = super::trust::unverified_waiver(request, verified, registered, accepted_risk)
                    .map_err(Loading::Failed)?;
                if registered && !verified {
                    self.registered_unverified.insert(image.to_owned());
                }
                (dir, risk, verified)
            }
            Resolution::Pending(p) => return Err(Loading::Pending(p)),
            Resolution::Failed(ResolveFailure::Retrieve(e)) => {
                return Err(Loading::Failed(PayloadLoadError::Retrieve(e)));
            }
            Resolution::Failed(ResolveFailure::Verify(e)) => {
                return Err(Loading::Failed(PayloadLoadError::Verify(e)));
            }
        };
        if let Some((i, p)) = &self.loaded
            && i == image
        {
            return Ok((p.clone(), risk, verified));
        }
        let opts = LoadOptions {
            release_image: image.to_string(),
            ..self.cfg.load_options.clone()
        };
        let p =
            load_update(&dir, &opts).map_err(|err| Loading::Failed(PayloadLoadError::Load { dir, err }))?;
        let p = Arc::new(p);
        self.loaded = Some((image.to_string(), p.clone()));
        Ok((p, risk, verified))
    }
}

/// A payload that is not (yet) loaded.
#[derive(Debug)]
pub(super) enum Loading {
    /// The resolver is still retrieving it.
    Pending(PullProgress),
    /// It cannot be had or does not load.
    Failed(PayloadLoadError),
}

impl EngineLoop {
    /// Why the target release's payload could not be retrieved, loaded, verified or accepted
    /// (the ReleaseAccepted=False message), while it is so; `None` once it loads.
    pub(super) fn payload_error(v: &WorkerView) -> Option<String> {
        let lps = &v.status.load_payload_status;
        lps.failure.as_ref().map(|_| lps.message.clone())
    }
}

/// The ClusterVersion form of a payload's release.
fn to_release(r: &crate::reconcile::payload::Release) -> Release {
    Release {
        architecture: r.architecture.clone(),
        version: r.version.clone(),
        image: r.image.clone(),
        url: r.url.clone(),
        channels: r.channels.clone(),
    }
}

/// `a` and `b` on separate lines (either may be empty), as the load status' accepted risks are
/// joined.
fn join_risks(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}\n{b}"),
    }
}
