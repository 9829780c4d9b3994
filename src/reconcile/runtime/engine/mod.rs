//! The engine loop: the I/O around the sync worker and the pure status algorithm (upstream
//! pkg/cvo/cvo.go `sync`, status.go `applyClusterVersionStatus`, sync_worker.go
//! `runThrottledStatusNotifier`).
//!
//! Each turn reads the ClusterVersion (creating it when configured to), validates it, picks the
//! target release, loads its payload through a [`PayloadResolver`] when the work changed, hands
//! the work to the [`SyncWorker`], computes the status with [`compute_status`] and writes it
//! through the `/status` subresource only when it changed and conflict-safe (409 ⇒ re-GET,
//! abort if the uid changed, retry once). Edges (a new target, Completed, Failing set or
//! cleared, a new run level) are written at once and progress-only changes at most once per
//! [`EngineTimings::status_interval`] (1 s): a deliberate difference from upstream's 15 s
//! notifier throttle, under which the status trails the work by up to 15 s.

use std::{collections::BTreeMap, path::PathBuf, sync::Arc};

use tokio::time::Instant;

use kube::{Api, Client, api::PostParams};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::openshift::{ClusterVersion, ClusterVersionStatus, Release};
use crate::reconcile::{
    api::{
        Command, CommandOutcome, EngineHandle, EngineMode, LocalPayloads, PayloadResolver, PullProgress,
        StatusSnapshot,
    },
    apply::{KubeApplier, TaskApplier},
    payload::{LoadOptions, Payload},
    runtime::{
        EngineTimings,
        client::{ReadOnlySwitch, RequestCounters, guarded_client},
        sync_worker::SyncWorker,
    },
};

mod absence;
mod capabilities;
mod commands;
mod lease_follow;

/// How long a stopping engine waits for the tasks already running to end before its final
/// status write (half of the operator's 120 s grace period, which also covers the write and
/// the Lease release).
pub const FINAL_STATUS_WAIT: std::time::Duration = std::time::Duration::from_secs(60);
mod cv_feed;
mod error;
mod gates;
mod poll;
mod snapshot;
mod status_write;
mod target;
mod trust;

pub use error::{CommandError, EngineError, PayloadLoadError};

use commands::outcome;

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
    /// engine's guarded client.
    pub applier: Option<Arc<dyn TaskApplier>>,
    /// Leader election for active-apply: `Some` ⇒ the engine writes only while it holds this
    /// Lease (a non-leader runs watch-only passes and reports the holder); `None` ⇒ no
    /// election (tests, single-writer tools).
    pub lease: Option<crate::reconcile::runtime::leader::LeaseConfig>,
    /// The update service: `Some` ⇒ the engine polls it ([`crate::reconcile::updates::spawn`])
    /// for the desired version, `spec.channel` and `spec.upstream` (or the override), shows the
    /// result in [`StatusSnapshot::updates`] and, in active-apply, writes `availableUpdates`,
    /// `conditionalUpdates` and `RetrievedUpdates`; `None` ⇒ those fields are left as they are.
    pub update_graph: Option<crate::reconcile::updates::UpdatesConfig>,
    /// Without [`Self::update_graph`]: `Some((reason, message))` ⇒ the engine writes
    /// `RetrievedUpdates=False` with them (the operator started without an update service says
    /// so, `availableUpdates` and `conditionalUpdates` are left as they are); `None` ⇒ the
    /// condition is left as it is too.
    pub updates_not_fetched: Option<(String, String)>,
    /// The process's informers ([`crate::informers`]): `Some` ⇒ the engine's ClusterVersion,
    /// the ClusterOperators its nudges follow and the CVO Lease are read from these shared
    /// stores (one watch per kind for the whole process: `cvo tui`'s dashboard and engine,
    /// the operator's metrics and engine); `None` ⇒ the engine starts a registry of its own
    /// over its guarded client (its requests then count in [`StatusSnapshot::counters`]).
    pub informers: Option<crate::informers::Informers>,
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
    /// Active-apply over `payloads`, creating the ClusterVersion `version` when absent, with
    /// upstream's timings, the payload loaded as found, the per-kind apply layer, no Lease, no
    /// update service and informers of its own: the base each face (and each test) changes
    /// field by field (`EngineConfig { mode, ..EngineConfig::new(payloads) }`).
    pub fn new(payloads: Arc<dyn PayloadResolver>) -> Self {
        Self {
            mode: EngineMode::ActiveApply,
            payloads,
            create_cluster_version: true,
            cluster_version_name: "version".into(),
            timings: EngineTimings::upstream(),
            load_options: LoadOptions::default(),
            applier: None,
            lease: None,
            update_graph: None,
            updates_not_fetched: None,
            informers: None,
        }
    }

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
        Ok(Self::new(Arc::new(LocalPayloads {
            own_image,
            own_dir: dir,
            others: BTreeMap::new(),
        })))
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
        let informers = cfg
            .informers
            .clone()
            .unwrap_or_else(|| crate::informers::Informers::new(client.clone()));
        // The payload's ClusterOperators are read from the informer the nudges follow (and the
        // dashboard shows): one watch of the kind per process.
        let applier: Arc<dyn TaskApplier> = match &cfg.applier {
            Some(a) => a.clone(),
            None => Arc::new(
                KubeApplier::for_cluster_version(client.clone(), &cfg.cluster_version_name)
                    .sharing_cluster_operators(informers.all(None)),
            ),
        };
        let shutdown = CancellationToken::new();
        let worker = SyncWorker::start(
            applier,
            cfg.timings.clone(),
            cfg.mode == EngineMode::WatchOnly || leading_needed,
            shutdown.clone(),
        );
        crate::reconcile::runtime::co_nudge::spawn(informers.all(None), worker.clone(), shutdown.clone());
        let (snap_tx, snap_rx) = watch::channel(Arc::new(StatusSnapshot {
            mode: cfg.mode,
            ..StatusSnapshot::default()
        }));
        let (cmd_tx, cmd_rx) = mpsc::channel(16);
        let pacer = status_write::StatusPacer::new(cfg.timings.status_interval);
        let events_clock = cfg.timings.clock.clone();
        // The elector writes its Lease whatever the mode: it gets a client with the counter but
        // without the watch-only guard.
        let lease_client = guarded_client(raw.clone(), counters.clone(), ReadOnlySwitch::new(false));
        let (updates_in, updates_rx) = match cfg.update_graph.clone() {
            Some(u) => {
                let (tx, rx) = watch::channel(None);
                let out = crate::reconcile::updates::spawn(u, rx, Some(client.clone()), shutdown.clone());
                (Some(tx), Some(out))
            }
            None => (None, None),
        };
        let mut lp = EngineLoop {
            informers,
            updates_in,
            updates_rx,
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
            cv_feed: None,
            pacer,
            deferred_write: None,
            status_writes: 0,
            last_command: None,
            last_error: None,
            blocked: None,
            loaded: None,
            pulling: None,
            own_release: Release::default(),
            _worker_guard: shutdown.clone().drop_guard(),
            shutdown,
            last_publish: None,
            events: crate::reconcile::runtime::events::EventLog::with_clock(events_clock),
            gates: gates::Gates::default(),
            lease_info: None,
            lease_follow: None,
            registered_unverified: Default::default(),
            polls: Arc::default(),
            absence: absence::Absence::default(),
        };
        let polls = lp.polls.clone();
        let task = tokio::spawn(async move { lp.run(cmd_rx).await });
        EngineHandle::new(snap_rx, cmd_tx)
            .with_task(task.abort_handle())
            .with_polls(polls)
    }
}

struct EngineLoop {
    /// Where the engine's watches come from ([`EngineConfig::informers`], or its own).
    informers: crate::informers::Informers,
    /// Inputs of the update-service loop (from the ClusterVersion read last).
    updates_in: Option<watch::Sender<Option<crate::reconcile::updates::UpdateInputs>>>,
    /// What the update-service loop fetched last.
    updates_rx: Option<watch::Receiver<Option<Arc<crate::reconcile::updates::FetchedUpdates>>>>,
    lease_client: Client,
    leader: Option<(
        watch::Receiver<crate::reconcile::runtime::leader::LeaderState>,
        crate::reconcile::runtime::leader::LeaderHandle,
    )>,
    api: Api<ClusterVersion>,
    cfg: EngineConfig,
    mode: EngineMode,
    worker: SyncWorker,
    counters: RequestCounters,
    switch: ReadOnlySwitch,
    snapshot: watch::Sender<Arc<StatusSnapshot>>,
    cv: Option<Arc<ClusterVersion>>,
    /// The watch of the ClusterVersion (started with the loop).
    cv_feed: Option<cv_feed::CvFeed>,
    /// When status writes may go out ([`status_write::StatusPacer`]).
    pacer: status_write::StatusPacer,
    /// A progress-only status write held back until this instant.
    deferred_write: Option<Instant>,
    status_writes: u64,
    last_command: Option<CommandOutcome>,
    last_error: Option<String>,
    blocked: Option<String>,
    /// The payload loaded last, by image.
    loaded: Option<(String, Arc<Payload>)>,
    /// The release image pull the resolver reports pending ([`StatusSnapshot::payload_pull`]).
    pulling: Option<PullProgress>,
    own_release: Release,
    shutdown: CancellationToken,
    last_publish: Option<Instant>,
    /// The event log ([`StatusSnapshot::events`]).
    events: crate::reconcile::runtime::events::EventLog,
    /// The cluster's feature gates the engine follows ([`gates::Gates`]).
    gates: gates::Gates,
    /// Stops the worker when the loop is dropped (also on abort).
    _worker_guard: tokio_util::sync::DropGuard,
    /// The CVO Lease as last read ([`StatusSnapshot::lease`]); while leading, the snapshot says
    /// so instead.
    lease_info: Option<crate::reconcile::api::LeaseInfo>,
    /// The watch of the CVO Lease ([`lease_follow`]), with a Lease configured.
    lease_follow: Option<lease_follow::LeaseFollow>,
    /// Images accepted unsigned because registered ([`StatusSnapshot::registered_unverified`]).
    registered_unverified: std::collections::BTreeSet<String>,
    /// Turns on the poll timer ([`EngineHandle::polls`]).
    polls: Arc<std::sync::atomic::AtomicU64>,
    /// What was said last about a missing ClusterVersion or CRD ([`absence`]).
    absence: absence::Absence,
}

impl EngineLoop {
    async fn run(&mut self, mut cmds: mpsc::Receiver<Command>) {
        let mut worker_rx = self.worker.subscribe();
        let feed = cv_feed::CvFeed::start(
            self.informers
                .all(Some(&format!("metadata.name={}", self.cfg.cluster_version_name))),
            None,
            &self.cfg.cluster_version_name,
        );
        let mut cv_rx = feed.changes();
        self.cv_feed = Some(feed);
        self.start_elector().await;
        if self.mode == EngineMode::WatchOnly {
            // Who holds the Lease, for the dashboard, before anyone asks to switch (one GET;
            // the Lease's watch follows it from its first list on).
            self.read_lease().await;
        }
        if self.mode == EngineMode::WatchOnly {
            self.start_lease_feed();
        }
        let mut next_poll = tokio::time::Instant::now();
        let pull_wakeup = self.cfg.payloads.wakeup();
        loop {
            // Leaving the quiet state (a failure, a new target) brings the next poll in.
            let poll = self.poll_interval();
            next_poll = next_poll.min(tokio::time::Instant::now() + poll);
            let pull_progressed = async {
                match &pull_wakeup {
                    Some(n) => n.notified().await,
                    None => std::future::pending::<()>().await,
                }
            };
            let wake_at = match self.deferred_write {
                Some(t) => next_poll.min(t),
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
            // The Lease's watch (watch-only: started with it or with the switch to it).
            let mut lease_rx = self.lease_follow.as_ref().map(|f| f.rx.clone());
            let mut updates_rx = self.updates_rx.clone();
            let updates_changed = async {
                match updates_rx.as_mut() {
                    Some(rx) => {
                        if rx.changed().await.is_err() {
                            std::future::pending::<()>().await;
                        }
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = updates_changed => {
                    // Mark the value seen on the kept receiver (the select waited on a clone).
                    if let Some(rx) = self.updates_rx.as_mut() {
                        rx.borrow_and_update();
                    }
                    self.sync_status_only().await;
                }
                () = leader_changed => {
                    // The select waited on a clone; mark the value seen on the kept receiver too,
                    // or every later clone would report this same change again at once.
                    if let Some((rx, _)) = self.leader.as_mut() {
                        rx.borrow_and_update();
                    }
                    self.apply_leadership().await;
                    self.sync().await;
                }
                () = pull_progressed => {
                    // A background release pull moved on or finished: poll it again.
                    self.sync().await;
                }
                () = tokio::time::sleep_until(wake_at) => {
                    if tokio::time::Instant::now() >= next_poll {
                        next_poll = tokio::time::Instant::now() + poll;
                        self.polls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    // A deferred status write that is due is taken (or found unneeded) by this
                    // sync; left set, its past instant would wake the loop at once, forever.
                    if self.deferred_write.is_some_and(|t| Instant::now() >= t) {
                        self.deferred_write = None;
                    }
                    self.sync().await;
                }
                () = lease_changed(lease_rx.as_mut()) => {
                    // The select waited on a clone; mark the event seen on the kept receiver.
                    if let Some(f) = self.lease_follow.as_mut() {
                        f.rx.borrow_and_update();
                    }
                    // A new holder, a renewal or a release: shown at once (the publish below),
                    // nothing else to do.
                    self.follow_lease().await;
                }
                r = cv_rx.changed(), if self.cv_feed.is_some() => {
                    if r.is_ok() {
                        cv_rx.borrow_and_update();
                        self.sync().await;
                    } else {
                        // The feed's task ended (it does not, short of a panic): fall back to
                        // the poll, which reads with a GET.
                        self.cv_feed = None;
                    }
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
                            self.last_command = Some(outcome(
                                "shutdown",
                                Ok("stopping".into()),
                                self.cfg.timings.clock.now(),
                            ));
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
        // Graceful shutdown (upstream pkg/start/start.go: the operator's controllers stop, then
        // the elector, `ReleaseOnCancel`, gives the Lease up): no task starts any more; the
        // running ones finish; the ClusterVersion status gets the worker's final progress
        // (not held back by the pacer) while the Lease is still ours; then writes stop and the
        // Lease is released.
        self.shutdown.cancel();
        if tokio::time::timeout(FINAL_STATUS_WAIT, self.worker.stopped())
            .await
            .is_err()
        {
            tracing::warn!(
                "the running tasks did not end within {}s; writing the status as it is",
                FINAL_STATUS_WAIT.as_secs()
            );
        }
        self.final_status_write().await;
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
        match crate::reconcile::runtime::leader::LeaderElector::new(self.lease_client.clone(), lc) {
            Ok(e) => self.leader = Some(e.spawn()),
            Err(e) => self.last_error = Some(format!("leader election: {e}")),
        }
    }

    /// Reads the CVO Lease once into [`Self::lease_info`] (no Lease configured: nothing).
    async fn read_lease(&mut self) {
        if let Some(lc) = &self.cfg.lease {
            let info = crate::reconcile::runtime::leader::read_lease(&self.lease_client, lc).await;
            self.lease_info = Some(info);
        }
    }

    /// Active-apply with a lease whose first acquire attempt has not told yet whether we lead or
    /// who else does (also while a new campaign starts after a lost lease), or that we lead but
    /// have not switched the worker to writing yet ([`Self::apply_leadership`] comes next).
    fn lease_pending(&self) -> bool {
        if self.mode != EngineMode::ActiveApply || self.cfg.lease.is_none() {
            return false;
        }
        match &self.leader {
            Some((rx, _)) => match &*rx.borrow() {
                crate::reconcile::runtime::leader::LeaderState::Acquiring { holder: None, .. } => true,
                crate::reconcile::runtime::leader::LeaderState::Leading { .. } => self.switch.is_read_only(),
                _ => false,
            },
            None => true,
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
        let ended = self.leader.as_ref().is_some_and(|(rx, _)| {
            matches!(
                *rx.borrow(),
                crate::reconcile::runtime::leader::LeaderState::Lost { .. }
            )
        });
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
    #[tracing::instrument(level = "debug", name = "engine_sync", skip_all, fields(mode = ?self.mode))]
    async fn sync(&mut self) {
        self.follow_lease().await;
        match self.read_cluster_version().await {
            Ok(()) => self.last_error = None,
            Err(e) => {
                self.last_error = Some(e.to_string());
                return;
            }
        }
        self.refresh_gates().await;
        self.update_worker();
        if let (Some(tx), Some(cv)) = (&self.updates_in, &self.cv) {
            let mut inputs = crate::reconcile::updates::UpdateInputs::of(cv);
            if !self.accept_risks_gate() {
                // Accepted risks count only with the gate (the ClusterVersion is Invalid then).
                inputs.accepted.clear();
            }
            tx.send_if_modified(|cur| {
                let changed = cur.as_ref() != Some(&inputs);
                if changed {
                    *cur = Some(inputs);
                }
                changed
            });
        }
        self.write_status().await;
    }

    /// The update-service loop's latest result.
    fn fetched_updates(&self) -> Option<Arc<crate::reconcile::updates::FetchedUpdates>> {
        self.updates_rx.as_ref().and_then(|rx| rx.borrow().clone())
    }

    /// Status only (after worker progress): no ClusterVersion re-read unless none is cached.
    async fn sync_status_only(&mut self) {
        if self.cv.is_none() && self.blocked.is_none() {
            self.sync().await;
            return;
        }
        self.write_status().await;
    }

    /// Logs what is missing (or found again) once per change ([`absence::Absence`]).
    fn say_absence(&mut self, now: Option<absence::Missing>) {
        let name = &self.cfg.cluster_version_name;
        if let Some(l) = self.absence.change(now, name, self.mode) {
            if l.error {
                tracing::error!("{}", l.text);
            } else {
                tracing::info!("{}", l.text);
            }
        }
    }

    async fn read_cluster_version(&mut self) -> Result<(), EngineError> {
        let name = self.cfg.cluster_version_name.clone();
        let seen = self
            .cv_feed
            .as_ref()
            .map_or(cv_feed::Seen::Unknown, cv_feed::CvFeed::seen);
        let got = match seen {
            cv_feed::Seen::Present(cv) => Ok(Some(cv)),
            // The watch may not have seen a ClusterVersion this loop just created or read.
            cv_feed::Seen::Absent if self.cv.is_none() => Ok(None),
            cv_feed::Seen::Absent | cv_feed::Seen::Unknown => {
                let got = self.api.get_opt(&name).await.map(|o| o.map(Arc::new));
                if got.is_ok()
                    && let Some(f) = &self.cv_feed
                {
                    f.recovered();
                }
                got
            }
        };
        // kube-apiserver answers a group it does not serve with a plain-text 404, which kube's
        // `get_opt` does not take for "absent": both are absent here, discovery tells which.
        let got = match got {
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
            other => other,
        };
        match got {
            Ok(Some(cv)) => {
                self.say_absence(None);
                // The watch trails this loop's own status writes: keep the newer object.
                if !self.cv.as_ref().is_some_and(|held| cv_feed::older(&cv, held)) {
                    self.cv = Some(cv);
                }
                self.blocked = None;
                Ok(())
            }
            Ok(None) => {
                self.cv = None;
                // A 404 is also what an unserved resource answers: discovery tells.
                match absence::served(&self.lease_client).await {
                    Ok(false) => {
                        self.say_absence(Some(absence::Missing::Crd));
                        self.blocked = None;
                        return Err(EngineError::NotServed);
                    }
                    Ok(true) => {}
                    Err(e) => tracing::debug!("discovery of {}: {e}", absence::GROUP_VERSION),
                }
                let created = self.mode == EngineMode::ActiveApply && self.cfg.create_cluster_version;
                self.say_absence(Some(absence::Missing::Object { created }));
                // Created only once this engine may write (it holds the Lease when it needs
                // one); until then the turn waits, as for any absent ClusterVersion.
                if self.mode == EngineMode::ActiveApply
                    && self.cfg.create_cluster_version
                    && !self.switch.is_read_only()
                {
                    let cv = ClusterVersion {
                        metadata: kube::api::ObjectMeta {
                            name: Some(name.clone()),
                            ..Default::default()
                        },
                        spec: crate::openshift::ClusterVersionSpec {
                            cluster_id: Some(uuid::Uuid::new_v4().to_string()),
                            ..Default::default()
                        },
                        status: ClusterVersionStatus::default(),
                    };
                    let created = self
                        .api
                        .create(&PostParams::default(), &cv)
                        .await
                        .map_err(|err| EngineError::Create {
                            name: name.clone(),
                            err,
                        })?;
                    tracing::info!("created ClusterVersion {name}");
                    self.cv = Some(Arc::new(created));
                    self.blocked = None;
                } else if self.mode == EngineMode::ActiveApply {
                    self.blocked = Some(format!("waiting for ClusterVersion {name} to exist"));
                } else {
                    self.blocked = None;
                }
                Ok(())
            }
            Err(err) => Err(EngineError::Read { name, err }),
        }
    }
}

/// The next event of the Lease's watch; never resolves without a watch (or once it ended).
async fn lease_changed(rx: Option<&mut watch::Receiver<u64>>) {
    if let Some(rx) = rx
        && rx.changed().await.is_ok()
    {
        return;
    }
    std::future::pending().await
}
