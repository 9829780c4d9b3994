//! The engine loop: the I/O around the sync worker and the pure status algorithm (upstream
//! pkg/cvo/cvo.go `sync`, status.go `applyClusterVersionStatus`; cvo-spec §2.1, rows 84, 87).
//!
//! Each turn reads the ClusterVersion (creating it when configured to), validates it, picks the
//! target release, loads its payload through a [`PayloadResolver`] when the work changed, hands
//! the work to the [`SyncWorker`], computes the status with [`compute_status`] and writes it
//! through the `/status` subresource only when it changed, throttled (15 s, burst 2, edges
//! bypass) and conflict-safe (409 ⇒ re-GET, abort if the uid changed, retry once).

use std::{collections::BTreeMap, path::PathBuf, sync::Arc, time::Instant};

use chrono::Utc;
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{
    api::{
        Command, CommandOutcome, Counters, EngineHandle, EngineMode, EngineState, Failure, RunLevelProgress,
        StatusSnapshot,
    },
    basic_apply::KubeApplier,
    capability::{CapabilitiesSpec, CapabilitiesStatus, set_capabilities},
    client::{ReadOnlySwitch, RequestCounters, guarded_client},
    errors::SyncError,
    payload::{ComponentOverride, LoadOptions, Payload, PayloadState, load_update},
    status::{StatusInputs, compute_status, no_desired_image_failure, status_changed},
    sync_worker::{EngineTimings, SyncWork, SyncWorker, TaskApplier, TaskState, WorkerView, initial_state},
    upgradeable::{
        PreconditionFailure, Target, cluster_version_updating_risk, overrides_risk, run_preconditions,
        summarize,
    },
    validation::validate_cluster_version,
    worker_status::{LoadPayloadStatus, StatusThrottle},
};
use crate::openshift::{ClusterVersion, ClusterVersionStatus, Release};

/// Finds the payload directory of a release image (upstream: the payload retriever, which
/// downloads the image; cvo-spec §1.D rows 40–41).
pub trait PayloadResolver: Send + Sync {
    /// The operator's own release image (`--release-image`): its payload is local, unverified
    /// and exempt from preconditions.
    fn own_image(&self) -> String;
    /// The payload directory of `image`.
    ///
    /// # Errors
    /// Why the payload cannot be had (becomes `Unable to download and prepare the update:
    /// {err}`).
    fn resolve(&self, image: &str) -> Result<PathBuf, String>;
}

/// Payload directories on the local disk, keyed by image.
#[derive(Clone, Debug, Default)]
pub struct LocalPayloads {
    /// The operator's own release image.
    pub own_image: String,
    /// Its payload directory.
    pub own_dir: PathBuf,
    /// Other releases the engine may update to, by image.
    pub others: BTreeMap<String, PathBuf>,
}

impl LocalPayloads {
    /// The stable pseudo pull spec of a payload directory that has no release image:
    /// `file://{absolute, canonical path}`. It is not an image a registry serves; it names the
    /// directory the payload was read from, so the same directory is the same release in
    /// ClusterVersion history across restarts.
    ///
    /// # Errors
    /// The directory cannot be canonicalised (e.g. it does not exist).
    pub fn pseudo_pull_spec(dir: &std::path::Path) -> std::io::Result<String> {
        Ok(format!("file://{}", std::fs::canonicalize(dir)?.display()))
    }
}

impl PayloadResolver for LocalPayloads {
    fn own_image(&self) -> String {
        self.own_image.clone()
    }
    fn resolve(&self, image: &str) -> Result<PathBuf, String> {
        if image == self.own_image {
            return Ok(self.own_dir.clone());
        }
        self.others
            .get(image)
            .cloned()
            .ok_or_else(|| format!("no payload is known for image {image}"))
    }
}

/// How to run the engine.
#[derive(Clone)]
pub struct EngineConfig {
    /// Watch-only or active-apply at start.
    pub mode: EngineMode,
    /// Where payloads come from.
    pub payloads: Arc<dyn PayloadResolver>,
    /// Create ClusterVersion `version` when it is absent (upstream never does; `cvo reconcile`
    /// does). Active-apply only.
    pub create_cluster_version: bool,
    /// Name of the ClusterVersion (upstream `CVO_NAME`, default `version`).
    pub cluster_version_name: String,
    /// Intervals.
    pub timings: EngineTimings,
    /// Payload load options (profile, exclude id, feature set).
    pub load_options: LoadOptions,
    /// The apply layer; `None` ⇒ [`KubeApplier`] (the per-kind apply layer) over the
    /// engine's guarded client. [`super::basic_apply::BasicApplier`] is the generic-only one.
    pub applier: Option<Arc<dyn TaskApplier>>,
    /// Leader election for active-apply: `Some` ⇒ the engine writes only while it holds this
    /// Lease (a non-leader runs watch-only passes and reports the holder); `None` ⇒ no
    /// election (tests, single-writer tools).
    pub lease: Option<super::leader::LeaseConfig>,
    /// A local update graph: `Some` ⇒ the status gets `availableUpdates`,
    /// `conditionalUpdates` and `RetrievedUpdates` from it for the desired version and
    /// `spec.channel` ([`super::update_graph::UpdateGraph::merge_into`]); `None` ⇒ those fields
    /// are left as they are (upstream would query the update service).
    pub update_graph: Option<Arc<super::update_graph::UpdateGraph>>,
}

impl std::fmt::Debug for EngineConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineConfig")
            .field("mode", &self.mode)
            .field("own_image", &self.payloads.own_image())
            .field("create_cluster_version", &self.create_cluster_version)
            .field("timings", &self.timings)
            .finish_non_exhaustive()
    }
}

impl EngineConfig {
    /// Active-apply over the payload in `dir`, own image `release_image` or
    /// [`LocalPayloads::pseudo_pull_spec`], creating the ClusterVersion if absent, upstream
    /// timings.
    ///
    /// # Errors
    /// `dir` cannot be canonicalised.
    pub fn local(dir: PathBuf, release_image: Option<String>) -> std::io::Result<Self> {
        let own_image = match release_image {
            Some(i) => i,
            None => LocalPayloads::pseudo_pull_spec(&dir)?,
        };
        Ok(Self {
            mode: EngineMode::ActiveApply,
            payloads: Arc::new(LocalPayloads {
                own_image,
                own_dir: dir,
                others: BTreeMap::new(),
            }),
            create_cluster_version: true,
            cluster_version_name: "version".into(),
            timings: EngineTimings::upstream(),
            load_options: LoadOptions::default(),
            applier: None,
            lease: None,
            update_graph: None,
        })
    }
}

/// Starts engines.
#[derive(Debug)]
pub struct Engine;

impl Engine {
    /// Spawns the engine on the current tokio runtime. `client` is wrapped with the request
    /// counter and the watch-only guard ([`guarded_client`]).
    pub fn spawn(client: Client, cfg: EngineConfig) -> EngineHandle {
        let counters = RequestCounters::default();
        let leading_needed = cfg.lease.is_some() && cfg.mode == EngineMode::ActiveApply;
        let switch = ReadOnlySwitch::new(cfg.mode == EngineMode::WatchOnly || leading_needed);
        let raw = client;
        let client = guarded_client(raw.clone(), counters.clone(), switch.clone());
        let applier: Arc<dyn TaskApplier> = match &cfg.applier {
            Some(a) => a.clone(),
            None => Arc::new(KubeApplier::new(client.clone())),
        };
        let shutdown = CancellationToken::new();
        let worker = SyncWorker::start(
            applier,
            cfg.timings.clone(),
            cfg.mode == EngineMode::WatchOnly || leading_needed,
            shutdown.clone(),
        );
        super::co_nudge::spawn(client.clone(), worker.clone(), shutdown.clone());
        let (snap_tx, snap_rx) = watch::channel(Arc::new(StatusSnapshot {
            mode: cfg.mode,
            ..StatusSnapshot::default()
        }));
        let (cmd_tx, cmd_rx) = mpsc::channel(16);
        let throttle = StatusThrottle::new(cfg.timings.status_interval, cfg.timings.status_burst);
        // The elector writes its Lease whatever the mode: it gets a client with the counter but
        // without the watch-only guard.
        let lease_client = guarded_client(raw.clone(), counters.clone(), ReadOnlySwitch::new(false));
        let mut lp = EngineLoop {
            lease_client,
            leader: None,
            api: Api::all(client.clone()),
            mode: cfg.mode,
            cfg,
            worker,
            counters,
            switch,
            snapshot: snap_tx,
            cv: None,
            throttle,
            deferred_write: None,
            last_offered: None,
            status_writes: 0,
            last_command: None,
            last_error: None,
            blocked: None,
            loaded: None,
            own_release: Release::default(),
            _worker_guard: shutdown.clone().drop_guard(),
            shutdown,
            last_publish: None,
            events: super::events::EventLog::new(),
        };
        let task = tokio::spawn(async move { lp.run(cmd_rx).await });
        EngineHandle {
            status: snap_rx,
            commands: cmd_tx,
            task,
        }
    }
}

struct EngineLoop {
    lease_client: Client,
    leader: Option<(
        watch::Receiver<super::leader::LeaderState>,
        super::leader::LeaderHandle,
    )>,
    api: Api<ClusterVersion>,
    cfg: EngineConfig,
    mode: EngineMode,
    worker: SyncWorker,
    counters: RequestCounters,
    switch: ReadOnlySwitch,
    snapshot: watch::Sender<Arc<StatusSnapshot>>,
    cv: Option<ClusterVersion>,
    throttle: StatusThrottle,
    deferred_write: Option<Instant>,
    last_offered: Option<super::worker_status::SyncWorkerStatus>,
    status_writes: u64,
    last_command: Option<CommandOutcome>,
    last_error: Option<String>,
    blocked: Option<String>,
    /// The payload loaded last, by image.
    loaded: Option<(String, Arc<Payload>)>,
    own_release: Release,
    shutdown: CancellationToken,
    last_publish: Option<Instant>,
    /// The event log ([`StatusSnapshot::events`]).
    events: super::events::EventLog,
    /// Stops the worker when the loop is dropped (also on abort).
    _worker_guard: tokio_util::sync::DropGuard,
}

fn err_text(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} ({})", s.message, s.reason),
        other => other.to_string(),
    }
}

impl EngineLoop {
    async fn run(&mut self, mut cmds: mpsc::Receiver<Command>) {
        let mut worker_rx = self.worker.subscribe();
        self.start_elector().await;
        let poll = self.cfg.timings.cv_poll;
        let mut next_poll = tokio::time::Instant::now();
        loop {
            let wake_at = match self.deferred_write {
                Some(t) => next_poll.min(tokio::time::Instant::from_std(t)),
                None => next_poll,
            };
            let publish_at = tokio::time::Instant::now() + self.cfg.timings.snapshot_interval;
            let mut leader_rx = self.leader.as_ref().map(|(rx, _)| rx.clone());
            let leader_changed = async {
                match leader_rx.as_mut() {
                    Some(rx) => {
                        if rx.changed().await.is_err() {
                            std::future::pending::<()>().await;
                        }
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = leader_changed => {
                    // The select waited on a clone; mark the value seen on the kept receiver too,
                    // or every later clone would report this same change again at once.
                    if let Some((rx, _)) = self.leader.as_mut() {
                        rx.borrow_and_update();
                    }
                    self.apply_leadership().await;
                    self.sync().await;
                }
                () = tokio::time::sleep_until(wake_at) => {
                    if tokio::time::Instant::now() >= next_poll {
                        next_poll = tokio::time::Instant::now() + poll;
                    }
                    // A deferred status write that is due is taken (or found unneeded) by this
                    // sync; left set, its past instant would wake the loop at once, forever.
                    if self.deferred_write.is_some_and(|t| Instant::now() >= t) {
                        self.deferred_write = None;
                    }
                    self.sync().await;
                }
                r = worker_rx.changed() => {
                    if r.is_err() {
                        break;
                    }
                    // Coalesce bursts of task progress.
                    tokio::time::sleep_until(publish_at.min(wake_at)).await;
                    worker_rx.borrow_and_update();
                    self.sync_status_only().await;
                }
                c = cmds.recv() => {
                    match c {
                        None | Some(Command::Shutdown) => {
                            self.last_command = Some(outcome("shutdown", Ok("stopping".into())));
                            break;
                        }
                        Some(c) => {
                            self.command(c).await;
                            self.sync().await;
                        }
                    }
                }
            }
            self.publish(false);
        }
        self.shutdown.cancel();
        // Stop writing before giving the lease up.
        self.switch.set(true);
        if let Some((_, h)) = self.leader.take()
            && let Err(e) = h.release().await
        {
            tracing::debug!("releasing the lease: {e}");
        }
        self.publish(true);
    }

    /// Starts the elector in active-apply mode when a lease is configured; with
    /// `create_cluster_version` the Lease namespace is created if absent.
    async fn start_elector(&mut self) {
        let Some(lc) = self.cfg.lease.clone() else {
            return;
        };
        if self.mode != EngineMode::ActiveApply || self.leader.is_some() {
            return;
        }
        if self.cfg.create_cluster_version {
            let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(self.lease_client.clone());
            if let Ok(None) = ns.get_opt(&lc.namespace).await {
                let obj = k8s_openapi::api::core::v1::Namespace {
                    metadata: kube::api::ObjectMeta {
                        name: Some(lc.namespace.clone()),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                if let Err(e) = ns.create(&PostParams::default(), &obj).await {
                    tracing::debug!("creating namespace {}: {e}", lc.namespace);
                }
            }
        }
        match super::leader::LeaderElector::new(self.lease_client.clone(), lc) {
            Ok(e) => self.leader = Some(e.spawn()),
            Err(e) => self.last_error = Some(format!("leader election: {e}")),
        }
    }

    fn leading(&self) -> bool {
        match &self.leader {
            Some((rx, _)) => rx.borrow().is_leading(),
            None => self.cfg.lease.is_none(),
        }
    }

    /// Follows the lease: writes are allowed only while leading; a lost lease stops them at
    /// once and starts a new campaign.
    async fn apply_leadership(&mut self) {
        if self.mode != EngineMode::ActiveApply {
            return;
        }
        let leading = self.leading();
        self.switch.set(!leading);
        self.worker.set_dry_run(!leading);
        let ended = self
            .leader
            .as_ref()
            .is_some_and(|(rx, _)| matches!(*rx.borrow(), super::leader::LeaderState::Lost { .. }));
        if ended {
            tracing::warn!("lost the lease; campaigning again");
            self.leader = None;
            self.start_elector().await;
        }
    }

    fn own_release(&mut self) -> Release {
        if self.own_release.image.is_empty() {
            self.own_release.image = self.cfg.payloads.own_image();
        }
        self.own_release.clone()
    }

    /// One full turn: read the CV, update the worker, write status.
    async fn sync(&mut self) {
        match self.read_cluster_version().await {
            Ok(()) => self.last_error = None,
            Err(e) => {
                self.last_error = Some(e);
                return;
            }
        }
        self.update_worker();
        self.write_status().await;
    }

    /// Status only (after worker progress): no ClusterVersion re-read unless none is cached.
    async fn sync_status_only(&mut self) {
        if self.cv.is_none() && self.blocked.is_none() {
            self.sync().await;
            return;
        }
        self.write_status().await;
    }

    async fn read_cluster_version(&mut self) -> Result<(), String> {
        let name = self.cfg.cluster_version_name.clone();
        match self.api.get_opt(&name).await {
            Ok(Some(cv)) => {
                self.cv = Some(cv);
                self.blocked = None;
                Ok(())
            }
            Ok(None) => {
                self.cv = None;
                if self.mode == EngineMode::ActiveApply && self.cfg.create_cluster_version {
                    let cv = ClusterVersion {
                        metadata: kube::api::ObjectMeta {
                            name: Some(name.clone()),
                            ..Default::default()
                        },
                        spec: crate::openshift::ClusterVersionSpec {
                            cluster_id: Some(random_uuid_v4()),
                            ..Default::default()
                        },
                        status: ClusterVersionStatus::default(),
                    };
                    let created = self
                        .api
                        .create(&PostParams::default(), &cv)
                        .await
                        .map_err(|e| format!("creating ClusterVersion {name}: {}", err_text(&e)))?;
                    tracing::info!("created ClusterVersion {name}");
                    self.cv = Some(created);
                    self.blocked = None;
                } else if self.mode == EngineMode::ActiveApply {
                    self.blocked = Some(format!("waiting for ClusterVersion {name} to exist"));
                } else {
                    self.blocked = None;
                }
                Ok(())
            }
            Err(e) => Err(format!("reading ClusterVersion {name}: {}", err_text(&e))),
        }
    }

    /// Target selection and payload loading (cvo-spec §2.1 steps 2–5).
    fn update_worker(&mut self) {
        if self.blocked.is_some() {
            return;
        }
        let own = self.own_release();
        let cv = self.cv.clone().unwrap_or_default();
        let errs = validate_cluster_version(&cv, false);
        let desired_invalid = errs.iter().any(|e| e.field.starts_with("spec.desiredUpdate"));
        let current = self.worker.work();
        let mut target = Target {
            version: own.version.clone(),
            image: own.image.clone(),
        };
        let mut force = false;
        // Upstream resolves spec.desiredUpdate only once the worker is initialized (C78); our
        // payload resolution is synchronous, so the first turn already takes it. This keeps a
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
            &cv.status.capabilities.enabled_capabilities,
            &Default::default(),
        );
        let caps_status = CapabilitiesStatus {
            known: caps.known.clone(),
            enabled: caps.enabled.clone(),
        };
        let generation = cv.metadata.generation.unwrap_or(0);
        if let Some(cur) = &current
            && cur.desired.image == target.image
            && cur.force == force
            && cur.overrides == overrides
            && cur.capabilities.enabled == caps_status.enabled
        {
            if cur.generation != generation {
                let mut w = (**cur).clone();
                w.generation = generation;
                self.worker.update(w);
            }
            return;
        }
        // Version change while initializing is ignored (row 78).
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
        let local = target.image == own.image;
        let v = |t: &Target| {
            if t.version.is_empty() {
                String::new()
            } else {
                t.version.clone()
            }
        };
        let now = Utc::now();
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
        let payload = match self.load(&target.image) {
            Ok(p) => p,
            Err((step, msg)) => {
                load.step = step.into();
                load.message = match step {
                    "RetrievePayload" => format!(
                        "Retrieving payload failed version=\"{}\" image=\"{}\" failure={msg}",
                        target.version, target.image
                    ),
                    _ => format!(
                        "Loading payload failed version=\"{}\" image=\"{}\" failure={msg}",
                        target.version, target.image
                    ),
                };
                load.failure = Some(SyncError::plain(msg));
                self.worker.set_load_status(load);
                return;
            }
        };
        if local {
            self.own_release = to_release(&payload.release);
            self.own_release.image = own.image.clone();
        }
        if !target.version.is_empty() && target.version != payload.release.version {
            load.step = "VerifyPayloadVersion".into();
            let msg = format!(
                "release image version {} does not match the expected upstream version {}",
                payload.release.version, target.version
            );
            load.message = format!(
                "Verifying payload failed version=\"{}\" image=\"{}\" failure={msg}",
                target.version, target.image
            );
            load.failure = Some(SyncError::plain(msg));
            self.worker.set_load_status(load);
            return;
        }
        let mut release = to_release(&payload.release);
        release.image = target.image.clone();
        load.release = release.clone();
        let mut accepted_risks = String::new();
        if !local && current.is_some() {
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
                accepted_risks = ue.message;
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
        self.worker.update(SyncWork {
            generation,
            desired: release,
            force,
            overrides,
            capabilities: caps_status,
            feature_gates: Default::default(),
            payload,
            state,
            load_status: load,
            implicitly_enabled: caps.implicitly_enabled.iter().cloned().collect(),
        });
    }

    /// Loads the payload of `image` (cached by image). Errors: `(step, message)`.
    fn load(&mut self, image: &str) -> Result<Arc<Payload>, (&'static str, String)> {
        if let Some((i, p)) = &self.loaded
            && i == image
        {
            return Ok(p.clone());
        }
        let dir = self.cfg.payloads.resolve(image).map_err(|e| {
            (
                "RetrievePayload",
                format!("Unable to download and prepare the update: {e}"),
            )
        })?;
        let opts = LoadOptions {
            release_image: image.to_string(),
            ..self.cfg.load_options.clone()
        };
        let p = load_update(&dir, &opts).map_err(|e| {
            (
                "LoadPayload",
                format!("Error loading manifests from {}: {e}", dir.display()),
            )
        })?;
        let p = Arc::new(p);
        self.loaded = Some((image.to_string(), p.clone()));
        Ok(p)
    }

    fn worker_status(&self) -> super::worker_status::SyncWorkerStatus {
        let v = self.worker.view();
        let mut st = v.status;
        if st.actual.image.is_empty() && self.worker.work().is_none() && self.blocked.is_none() {
            // No target: report the NoDesiredImage failure (C73).
            if self.cfg.payloads.own_image().is_empty() {
                st.failure = Some(no_desired_image_failure());
            }
        }
        st
    }

    /// The new status. The Upgradeable risks are evaluated against the status being written
    /// (its Progressing), so one write reaches a fixed point instead of trailing by one.
    fn compute(
        &self,
        existing: &ClusterVersion,
        worker: &super::worker_status::SyncWorkerStatus,
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
        if let Some(g) = &self.cfg.update_graph {
            let channel = existing.spec.channel.clone().unwrap_or_default();
            g.merge_into(&mut st, &channel, inputs.now);
        }
        st
    }

    /// Writes the status when it changed, throttled and conflict-safe (row 84, 87).
    async fn write_status(&mut self) {
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
                    self.last_error = Some(e);
                    self.cv = None;
                }
            }
        }
    }

    async fn put_status(
        &self,
        mut cv: ClusterVersion,
        worker: &super::worker_status::SyncWorkerStatus,
    ) -> Result<ClusterVersion, String> {
        let name = self.cfg.cluster_version_name.clone();
        let uid = cv.metadata.uid.clone();
        for attempt in 0..2 {
            let mut obj = cv.clone();
            obj.status = self.compute(&cv, worker);
            match self.api.replace_status(&name, &PostParams::default(), &obj).await {
                Ok(w) => return Ok(w),
                Err(kube::Error::Api(s)) if s.code == 409 && attempt == 0 => {
                    let fresh = self
                        .api
                        .get(&name)
                        .await
                        .map_err(|e| format!("re-reading ClusterVersion {name}: {}", err_text(&e)))?;
                    if fresh.metadata.uid != uid {
                        return Err("cluster version was deleted and recreated, cannot update status".into());
                    }
                    if !status_changed(&fresh.status, &self.compute(&fresh, worker)) {
                        return Ok(fresh);
                    }
                    cv = fresh;
                }
                Err(e) => return Err(format!("writing ClusterVersion {name} status: {}", err_text(&e))),
            }
        }
        Err(format!("writing ClusterVersion {name} status: conflict"))
    }

    async fn command(&mut self, c: Command) {
        let text = c.to_string();
        let result = self.run_command(c).await;
        self.last_command = Some(outcome(&text, result));
    }

    async fn run_command(&mut self, c: Command) -> Result<String, String> {
        let name = self.cfg.cluster_version_name.clone();
        let patch = |v: serde_json::Value| v;
        let body = match c {
            Command::ReconcileNow => {
                self.worker.notify();
                return Ok("pass requested".into());
            }
            Command::SetMode(m) => {
                self.mode = m;
                if m == EngineMode::ActiveApply {
                    self.start_elector().await;
                } else if let Some((_, h)) = self.leader.take() {
                    self.switch.set(true);
                    let _ = h.release().await;
                }
                let write = m == EngineMode::ActiveApply && self.leading();
                self.switch.set(!write);
                self.worker.set_dry_run(!write);
                return Ok(format!("mode {m:?}"));
            }
            Command::Shutdown => return Ok("stopping".into()),
            Command::SetDesiredUpdate {
                version,
                image,
                force,
            } => {
                if version.as_deref().is_none_or(str::is_empty) && image.as_deref().is_none_or(str::is_empty)
                {
                    return Err("SetDesiredUpdate needs a version or an image".into());
                }
                if let Some(v) = version.as_deref().filter(|v| !v.is_empty())
                    && semver::Version::parse(v).is_err()
                {
                    return Err(format!("version {v:?} is not a semantic version (1.2.3[-...])"));
                }
                patch(serde_json::json!({"spec": {"desiredUpdate": {
                    "version": version, "image": image, "force": force}}}))
            }
            Command::ClearDesiredUpdate => patch(serde_json::json!({"spec": {"desiredUpdate": null}})),
            Command::SetChannel(ch) => {
                let v = if ch.is_empty() {
                    serde_json::Value::Null
                } else {
                    serde_json::Value::String(ch)
                };
                patch(serde_json::json!({"spec": {"channel": v}}))
            }
            Command::AcceptRisks(names) => {
                let risks: Vec<_> = names.iter().map(|n| serde_json::json!({"name": n})).collect();
                patch(serde_json::json!({"spec": {"desiredUpdate": {"acceptRisks": risks}}}))
            }
        };
        if self.mode == EngineMode::WatchOnly {
            return Err("refused: the engine is watch-only".into());
        }
        self.api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .map_err(|e| format!("patching ClusterVersion {name}: {}", err_text(&e)))?;
        Ok(format!("ClusterVersion {name} spec patched"))
    }

    fn publish(&mut self, force: bool) {
        let now = Instant::now();
        // Every turn is observed for the event log (so short-lived changes are logged), but
        // snapshots are sent at most every half snapshot interval unless an event was added.
        let v = self.worker.view();
        let mut snap = self.snapshot_of(&v, force);
        let before = self.events.seq();
        self.events.observe(&snap);
        let logged = self.events.seq() != before;
        if !force
            && !logged
            && self
                .last_publish
                .is_some_and(|t| now.duration_since(t) < self.cfg.timings.snapshot_interval / 2)
        {
            return;
        }
        self.last_publish = Some(now);
        snap.events = self.events.events();
        self.snapshot.send_replace(Arc::new(snap));
    }

    fn snapshot_of(&self, v: &WorkerView, stopped: bool) -> StatusSnapshot {
        let state = if stopped {
            EngineState::Stopped
        } else if self.mode == EngineMode::ActiveApply && !self.leading() {
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
            lease_holder: self.lease_holder(),
            leader: self.mode == EngineMode::ActiveApply && self.leading(),
            last_command: self.last_command.clone(),
            counters,
            cluster_version: self.cv.as_ref().map(|c| c.status.clone()),
            last_error: self.last_error.clone(),
            at: Some(Utc::now()),
            // Filled by `publish` from the event log.
            events: Default::default(),
        }
    }
}

impl EngineLoop {
    fn lease_holder(&self) -> Option<String> {
        let (rx, _) = self.leader.as_ref()?;
        match &*rx.borrow() {
            super::leader::LeaderState::Leading { .. } => self.cfg.lease.as_ref().map(|l| l.identity.clone()),
            super::leader::LeaderState::Acquiring { holder, .. } => holder.clone(),
            _ => None,
        }
    }
}

/// Status equality for the write decision, ignoring condition timestamps that `compute_status`
/// only moves on a status change anyway.
fn same_status(a: &ClusterVersionStatus, b: &ClusterVersionStatus) -> bool {
    !status_changed(a, b)
}

fn outcome(cmd: &str, result: Result<String, String>) -> CommandOutcome {
    CommandOutcome {
        command: cmd.to_string(),
        result,
        at: Utc::now(),
    }
}

/// A random RFC 4122 version-4 UUID (for a created ClusterVersion's `spec.clusterID`).
pub fn random_uuid_v4() -> String {
    use rand::RngCore;
    let mut b = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(b).to_string()
}

/// The ClusterVersion form of a payload's release.
fn to_release(r: &super::payload::Release) -> Release {
    Release {
        architecture: r.architecture.clone(),
        version: r.version.clone(),
        image: r.image.clone(),
        url: r.url.clone(),
        channels: r.channels.clone(),
    }
}
