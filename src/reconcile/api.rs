//! THE contract between the reconcile engine and the outside (the dashboard, the CLI): a
//! `watch` channel of [`StatusSnapshot`]s (latest value only, so a slow reader never backs up
//! the engine) and an `mpsc` channel of [`Command`]s. The engine validates each command and
//! reports its outcome in the next snapshot ([`StatusSnapshot::last_command`]).
//!
//! ```no_run
//! # async fn demo(client: kube::Client) -> anyhow::Result<()> {
//! use cvo::reconcile::{Engine, EngineConfig, api::Command};
//! let cfg = EngineConfig::local("/release".into(), None)?;
//! let mut h = Engine::spawn(client, cfg);
//! h.status.changed().await?;
//! println!("{:.0}%", h.status.borrow().fraction * 100.0);
//! h.commands.send(Command::Shutdown).await?;
//! # Ok(()) }
//! ```

use std::{collections::BTreeMap, sync::Arc};

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::cow_vec::CowVec;

mod lease;
mod payloads;
pub mod updates;
pub use lease::{LeaseInfo, SCALE_DOWN_HINT};
pub use payloads::{
    LocalPayloads, PayloadResolver, PullProgress, Resolution, ResolveFailure, ResolveRequest,
};
use tokio::sync::{mpsc, watch};
pub use updates::{FetchedUpdates, NotOffered, WhyNotOffered};

use serde_json::Value;

use crate::openshift::{ClusterVersion, ClusterVersionStatus, Release};

/// The ClusterVersion condition type `Failing` (upstream `pkg/cvo/status.go`).
const FAILING: &str = "Failing";

/// Whether the engine writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EngineMode {
    /// Observe and compute drift; never write (dry-run apply + a client refusing writes).
    #[default]
    WatchOnly,
    /// Apply the payload and write ClusterVersion status (only while holding the lease).
    ActiveApply,
}

/// What the engine is doing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "detail", rename_all = "camelCase")]
pub enum EngineState {
    /// Reading the ClusterVersion and loading the payload.
    #[default]
    Starting,
    /// Active-apply without the lease; the holder is in [`StatusSnapshot::lease_holder`].
    WaitingForLease,
    /// First install of the release.
    Initializing,
    /// Moving to a new release.
    Updating,
    /// At level, re-applying periodically.
    Reconciling,
    /// No ClusterVersion and not allowed to create one; the text says what is missing.
    Blocked(String),
    /// Shut down.
    Stopped,
}

/// One changed field: a path such as `.spec.template.spec.containers[0].image` and the value
/// before (`None` when absent) and after (`None` when removed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldChange {
    /// JSON path, `.`-separated keys and `[i]` indices.
    pub path: String,
    /// Live value, if present.
    pub from: Option<Value>,
    /// Value after the merge, if present.
    pub to: Option<Value>,
}

/// What an apply changed or, in watch-only mode, would change.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Drift {
    /// Nothing.
    None,
    /// The object is absent and would be created as `object` (watch-only), or was created
    /// (active-apply).
    Create {
        /// Watch-only: the object as it would be sent, shared (snapshots and the pass that found
        /// the drift hold the same allocation, never a copy each). `None` after an active
        /// pass's create: the object is in the cluster, and a pass that creates a whole release
        /// would otherwise hold a second copy of every manifest until it ends (about 2.6 KiB
        /// per created object at 5,000 manifests, measured with heaptrack).
        #[serde(skip_serializing_if = "Option::is_none")]
        object: Option<Arc<Value>>,
    },
    /// The live object differs in these fields.
    Update {
        /// Changed fields: keys present on the live object in key order, then added keys.
        diff: Vec<FieldChange>,
    },
    /// The object would be deleted.
    Delete,
}

impl Drift {
    /// Whether there is no change.
    pub fn is_none(&self) -> bool {
        matches!(self, Self::None)
    }

    /// A `kubectl diff`-like text for the object described by `task` (such as `deployment
    /// "ns/op"`): `+ create {task}`, `- delete {task}`, or `~ update {task}` followed by one
    /// indented `{path}: {from} -> {to}` line per field (`<absent>` for a missing side, values as
    /// compact JSON); `None` when there is no change.
    pub fn render(&self, task: &str) -> Option<String> {
        let side = |v: &Option<Value>| v.as_ref().map_or_else(|| "<absent>".to_owned(), Value::to_string);
        match self {
            Self::None => None,
            Self::Create { .. } => Some(format!("+ create {task}")),
            Self::Delete => Some(format!("- delete {task}")),
            Self::Update { diff } => {
                let mut out = format!("~ update {task}");
                for c in diff {
                    out.push_str(&format!("\n    {}: {} -> {}", c.path, side(&c.from), side(&c.to)));
                }
                Some(out)
            }
        }
    }
}

impl Drift {
    /// This drift of an object of `kind` (`Kind` for core kinds, `group/Kind` otherwise) with
    /// Secret values masked as `kubectl diff` masks them ([`crate::openshift::mask`]): every
    /// value of `data`/`stringData` is `***`, a changed one `*** (before)` / `*** (after)`.
    /// Other kinds come back as they are.
    pub fn masked(&self, kind: &str) -> Drift {
        use crate::openshift::mask;
        if !mask::is_secret_kind(kind) {
            return self.clone();
        }
        match self {
            Self::Create { object } => Self::Create {
                object: object
                    .as_ref()
                    .map(|o| Arc::new(mask::mask_secret(o).into_owned())),
            },
            Self::Update { diff } => Self::Update {
                diff: diff
                    .iter()
                    .map(|c| {
                        let (from, to) =
                            mask::mask_secret_field(kind, &c.path, c.from.as_ref(), c.to.as_ref());
                        FieldChange {
                            path: c.path.clone(),
                            from,
                            to,
                        }
                    })
                    .collect(),
            },
            Self::None | Self::Delete => self.clone(),
        }
    }
}

/// A drift record of one task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DriftRecord {
    /// The task, e.g. `configmap "ns/name" (3 of 10)`.
    pub task: String,
    /// `group/kind` (`v1` core kinds: just `kind`), namespace and name of the object.
    pub kind: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The change.
    pub drift: Drift,
}

/// State of one task in the current (or last) pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "detail", rename_all = "lowercase")]
pub enum TaskState {
    /// Not started in this pass.
    Pending,
    /// Being applied.
    Running,
    /// Applied.
    Done,
    /// Failed with this error.
    Failed(String),
    /// Left out at apply time, with why (capability, override, feature gate).
    Skipped(String),
}

/// One task as the worker reports it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskProgress {
    /// 1-based index in the payload.
    pub index: usize,
    /// `{kind} "{ns/}{name}" ({i} of {n})`.
    pub name: String,
    /// Run level parsed from the file name (`0000_NN_...`), if any.
    pub run_level: Option<u32>,
    /// Component parsed from the file name, if any.
    pub component: Option<String>,
    /// The task's state.
    pub state: TaskState,
}

/// Progress of one run level (tasks without a parsed level are under `None`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunLevelProgress {
    /// The `NN` of `0000_NN_component_*`.
    pub level: Option<u32>,
    /// Tasks in this level.
    pub total: usize,
    /// Applied.
    pub done: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped at apply time.
    pub skipped: usize,
}

/// A current failure in one line: reason and message.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Failure {
    /// Reason, e.g. `ClusterOperatorDegraded` (empty for untyped errors).
    pub reason: String,
    /// Message.
    pub message: String,
}

/// The outcome of the last command.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommandOutcome {
    /// The command as text.
    pub command: String,
    /// `Ok(message)` or `Err(why)`.
    pub result: Result<String, String>,
    /// When it was handled.
    pub at: DateTime<Utc>,
}

/// Severity of an [`EngineEvent`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EventLevel {
    /// Normal progress (state change, pass finished, command handled).
    #[default]
    Info,
    /// Something to look at (a task retried, a lease lost).
    Warning,
    /// A failure (pass failed, Failing set, command refused).
    Error,
}

/// One line of the engine's event log, as the dashboard's log pane and `cvo demo --headless`
/// print it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EngineEvent {
    /// Increasing sequence number (1 for the first event), so a reader of successive snapshots
    /// prints each event once.
    pub seq: u64,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Severity.
    pub level: EventLevel,
    /// One line of text, e.g. `state Updating → Reconciling` or `pass 3 failed: ...`.
    pub text: String,
}

/// How many events a snapshot keeps (oldest dropped first).
pub const EVENT_LOG_LEN: usize = 200;

/// How many finished passes a snapshot keeps ([`StatusSnapshot::recent_passes`]).
pub const RECENT_PASSES: usize = 16;

/// How a finished pass ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PassOutcome {
    /// Every included task was applied (tasks whose failure is only reported may be listed).
    Done,
    /// Some task failed.
    Failed,
    /// The pass hit its apply timeout (`I` while initializing, `2·I` otherwise).
    TimedOut,
}

impl PassOutcome {
    /// `done`, `failed` or `timed out`, as the pass log line says it.
    pub fn word(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Failed => "failed",
            Self::TimedOut => "timed out",
        }
    }
}

/// One finished apply pass (ok, failed or timed out; a pass interrupted by new work, a mode
/// switch or shutdown is not one): what the pass log line says and the pass metrics count.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassSummary {
    /// Its number: [`Counters::passes`] once it finished (1 for the first).
    pub number: u64,
    /// Wall time from its start to its end, in seconds.
    pub seconds: f64,
    /// Run without writing (watch-only, or active-apply without the Lease).
    pub watch_only: bool,
    /// The payload state it ran in: `Initializing`, `Updating` or `Reconciling`.
    pub state: String,
    /// How it ended.
    pub outcome: PassOutcome,
    /// Tasks applied.
    pub done: usize,
    /// Tasks in the payload.
    pub total: usize,
    /// Apply writes it sent (create, update, patch, delete).
    pub writes: u64,
    /// Tasks that failed in it (blocking or only reported).
    pub failed: usize,
    /// The first failure, one line: `Reason: message` (`None` when nothing failed).
    pub first_failure: Option<String>,
    /// Resources that differ from the payload (watch-only: would be changed; active-apply:
    /// were changed).
    pub drift: usize,
}

/// Counters since the engine started.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counters {
    /// Apply passes finished.
    pub passes: u64,
    /// Writes the apply layer sent.
    pub apply_writes: u64,
    /// ClusterVersion status writes.
    pub status_writes: u64,
    /// API requests by verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`).
    pub requests: BTreeMap<String, u64>,
    /// Non-read requests the watch-only client refused.
    pub refused_writes: u64,
    /// Write requests to the CVO Lease (take, renewals, release) among `requests`.
    pub lease_writes: u64,
    /// Passes asked for because one of the payload's objects changed in the cluster
    /// (watch-only: the drift re-checked at most once per `EngineTimings::drift_recheck`).
    pub drift_rechecks: u64,
}

/// Everything the UI and the CLI see of the engine.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusSnapshot {
    /// What the engine is doing.
    pub state: EngineState,
    /// Watch-only or active-apply.
    pub mode: EngineMode,
    /// The release being applied.
    pub desired: Option<Release>,
    /// done / total.
    pub fraction: f32,
    /// Tasks applied in the current pass.
    pub done: usize,
    /// Tasks in the payload.
    pub total: usize,
    /// Consecutive complete passes.
    pub completed: u32,
    /// Consecutive failed passes.
    pub attempt: u32,
    /// A pass is running.
    pub running: bool,
    /// Per run level.
    pub run_levels: Vec<RunLevelProgress>,
    /// Per task, by index (task `i` of the payload at `i - 1`).
    pub tasks: CowVec<TaskProgress>,
    /// The current failure, summarised.
    pub failure: Option<Failure>,
    /// The failing tasks of the current pass with their errors.
    pub failures: Vec<Failure>,
    /// Drift of the last pass (watch-only: what would change; active: what changed).
    pub drift: CowVec<DriftRecord>,
    /// Holder of the CVO lease, if known.
    pub lease_holder: Option<String>,
    /// The CVO Lease as last read or held (`None`: no Lease configured, or not read yet).
    pub lease: Option<LeaseInfo>,
    /// Whether this engine holds the lease.
    pub leader: bool,
    /// The last command's outcome.
    pub last_command: Option<CommandOutcome>,
    /// Counters.
    pub counters: Counters,
    /// The ClusterVersion as the engine last read or wrote it (derefs to its status).
    pub cluster_version: Option<ClusterVersionView>,
    /// The last error of the engine loop itself (reading / writing the ClusterVersion).
    pub last_error: Option<String>,
    /// When this snapshot was made.
    pub at: Option<DateTime<Utc>>,
    /// The last [`EVENT_LOG_LEN`] engine events, oldest first.
    pub events: Arc<Vec<EngineEvent>>,
    /// Why the target release's payload cannot be used (retrieved, loaded, verified or
    /// accepted): the ReleaseAccepted=False message, while it is so.
    pub payload_error: Option<String>,
    /// The release image pull in progress (ReleaseAccepted Unknown, step `RetrievePayload`).
    pub payload_pull: Option<PullProgress>,
    /// What the engine's own update-service client fetched and evaluated last (both modes; in
    /// watch-only it is shown beside what the cluster's CVO wrote). `None` ⇒ no update
    /// service configured or nothing fetched yet.
    pub updates: Option<Arc<FetchedUpdates>>,
    /// Whether the FeatureGate `cluster` enables `ClusterUpdateAcceptRisks` for the current
    /// version, as the engine read it last (it decides whether `spec.desiredUpdate.acceptRisks`
    /// is valid). `None` ⇒ not read (no update service configured and no risk accepted) or
    /// the read failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_risks_gate: Option<bool>,
    /// The last [`RECENT_PASSES`] finished passes, oldest first (the metrics take each pass's
    /// duration from here, however short it was).
    pub recent_passes: Arc<Vec<PassSummary>>,
    /// Release images this engine accepted without a verified signature because they were
    /// registered with it ([`Resolution::Ready`]'s `registered`: its own release, a
    /// [`LocalPayloads`] directory, the demo's embedded releases), sorted: a history entry of
    /// one of them says `verified: false` because there was no signature to check, not
    /// because a check was waived.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub registered_unverified: Vec<String>,
}

/// The ClusterVersion the engine last read or wrote, shared, not copied: the object of the
/// process's ClusterVersion informer ([`crate::informers`]) itself, or the answer to the
/// engine's own status write until the informer's copy catches up with it. A snapshot is
/// published at every step of a pass, so it carries a reference (`Arc`) rather than a copy of
/// the status with its history and update lists.
///
/// Derefs to the object's `status` (what readers of a snapshot look at); serializes as the
/// status too. Two views are equal when their statuses are.
#[derive(Clone, Debug, Default)]
pub struct ClusterVersionView(Arc<ClusterVersion>);

impl ClusterVersionView {
    /// The whole object (metadata and spec as well as status).
    pub fn object(&self) -> &ClusterVersion {
        &self.0
    }
}

impl std::ops::Deref for ClusterVersionView {
    type Target = ClusterVersionStatus;

    fn deref(&self) -> &ClusterVersionStatus {
        &self.0.status
    }
}

impl From<Arc<ClusterVersion>> for ClusterVersionView {
    fn from(cv: Arc<ClusterVersion>) -> Self {
        Self(cv)
    }
}

/// A view of a ClusterVersion with this status and no metadata or spec (tests, and readers
/// that have only a status).
impl From<ClusterVersionStatus> for ClusterVersionView {
    fn from(status: ClusterVersionStatus) -> Self {
        Self(Arc::new(ClusterVersion {
            status,
            ..ClusterVersion::default()
        }))
    }
}

impl PartialEq for ClusterVersionView {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.status == other.0.status
    }
}

impl Serialize for ClusterVersionView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.status.serialize(s)
    }
}

impl StatusSnapshot {
    /// Whether the ClusterVersion says the desired release is applied: a Completed history entry
    /// for it on top and Failing not True.
    pub fn is_completed(&self) -> bool {
        let Some(cv) = &self.cluster_version else {
            return false;
        };
        let top = cv.history.first();
        top.is_some_and(|h| h.state == crate::openshift::UpdateState::Completed)
            && self
                .desired
                .as_ref()
                .is_none_or(|d| top.is_some_and(|h| h.image == d.image))
            && !crate::openshift::condition::find(&cv.conditions, FAILING).is_some_and(|c| c.is_true())
    }

    /// The Failing condition when it is True: `(reason, message)`.
    pub fn failing(&self) -> Option<(String, String)> {
        let cv = self.cluster_version.as_ref()?;
        let c = crate::openshift::condition::find(&cv.conditions, FAILING)?;
        c.is_true()
            .then(|| (c.reason().to_string(), c.message().to_string()))
    }

    /// Whether the pass's failed tasks are only ClusterOperators still updating: active-apply,
    /// the pass summary's reason is one of [`OPERATORS_UPDATING_REASONS`] and the
    /// ClusterVersion's Failing condition is not True. Never in watch-only: the engine waits on
    /// nobody there (it only compares).
    pub fn only_waiting(&self) -> bool {
        self.mode == EngineMode::ActiveApply
            && self.failing().is_none()
            && self
                .failure
                .as_ref()
                .is_some_and(|f| OPERATORS_UPDATING_REASONS.contains(&f.reason.as_str()))
    }

    /// Watch-only: `(in sync, compared)`, the manifests the last comparison found as the
    /// payload says (tasks done, less those with a drift record that has a change) and the
    /// manifests compared (every task but the skipped ones); `None` in active-apply.
    pub fn in_sync(&self) -> Option<(usize, usize)> {
        (self.mode == EngineMode::WatchOnly).then(|| {
            let (mut done, mut skipped) = (0usize, 0usize);
            for t in self.tasks.iter() {
                match t.state {
                    TaskState::Done => done += 1,
                    TaskState::Skipped(_) => skipped += 1,
                    _ => {}
                }
            }
            let differ: std::collections::BTreeSet<&str> = self
                .drift
                .iter()
                .filter(|r| !matches!(r.drift, Drift::None))
                .map(|r| r.task.as_str())
                .collect();
            (done.saturating_sub(differ.len()), self.tasks.len() - skipped)
        })
    }
}

/// The failure reasons of a pass waiting on ClusterOperators that have not reported the
/// release's versions yet: one operator (`ClusterOperatorUpdating`) and several
/// (`ClusterOperatorsUpdating`), as the engine's readiness check words them
/// (`reconcile::apply::readiness`; upstream `pkg/cvo/internal/operatorstatus.go`). Such a pass
/// waits; it is not broken.
pub const OPERATORS_UPDATING_REASONS: [&str; 2] = ["ClusterOperatorUpdating", "ClusterOperatorsUpdating"];

/// A request to the engine; the outcome is in the next snapshot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Command {
    /// Run an apply pass now.
    ReconcileNow,
    /// Write an administrator's confirmed request ([`crate::spec_request::Request`]: a merge
    /// patch of `spec.desiredUpdate` and/or `spec.channel` only, as `oc adm upgrade` writes it,
    /// `pkg/cli/admin/upgrade/upgrade.go` in openshift/oc) with [`crate::spec_request::send`],
    /// the one write path of requests. Written in both modes: watch-only stops the engine
    /// applying manifests and writing status, not the administrator.
    Request(crate::spec_request::Request),
    /// Switch between watch-only and active-apply. With a Lease configured, the switch to
    /// active-apply is refused while another holder's Lease is alive
    /// ([`LeaseInfo::blocks_switch`]); the switch back releases the Lease at once.
    SetMode(EngineMode),
    /// Read the CVO Lease now and publish who holds it ([`StatusSnapshot::lease`]): one GET,
    /// no write (the dashboard's `m` sends it before asking to switch).
    CheckLease,
    /// Stop the engine.
    Shutdown,
}

impl std::fmt::Display for Command {
    /// The command as an administrator would type it, e.g. `upgrade --to 4.16.4`,
    /// `mode active-apply` (shown in the dashboard header and the event log).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::ReconcileNow => f.write_str("reconcile now"),
            Command::CheckLease => f.write_str("check lease"),
            Command::Request(r) => f.write_str(&r.summary),
            Command::SetMode(EngineMode::WatchOnly) => f.write_str("mode watch-only"),
            Command::SetMode(EngineMode::ActiveApply) => f.write_str("mode active-apply"),
            Command::Shutdown => f.write_str("shutdown"),
        }
    }
}

/// The engine as the outside holds it: the latest snapshot and the command channel. The
/// dashboard, `cvo reconcile` and `cvo demo` all hold this one type. Cheap to clone; every
/// clone reads the same snapshots and sends to the same engine.
#[derive(Clone, Debug)]
pub struct EngineHandle {
    /// Latest snapshot. Closed (`changed()` errs) once the engine has stopped.
    pub status: watch::Receiver<Arc<StatusSnapshot>>,
    /// Commands to the engine.
    pub commands: mpsc::Sender<Command>,
    /// Aborts the engine task, when this handle started it.
    task: Option<tokio::task::AbortHandle>,
    /// Turns of the engine loop on its poll timer ([`EngineHandle::polls`]).
    polls: Arc<std::sync::atomic::AtomicU64>,
}

impl EngineHandle {
    /// A handle over an engine's two channels (the engine itself builds one with its task;
    /// tests build one over channels they drive).
    pub fn new(status: watch::Receiver<Arc<StatusSnapshot>>, commands: mpsc::Sender<Command>) -> Self {
        Self {
            status,
            commands,
            task: None,
            polls: Arc::default(),
        }
    }

    /// How many times the engine loop has turned on its poll timer rather than on an event:
    /// once per `cv_poll` (`EngineTimings::cv_poll`), once per 10 s while the cluster is quiet
    /// (`reconcile/runtime/engine/poll.rs`). 0 for a handle over channels a test drives.
    pub fn polls(&self) -> u64 {
        self.polls.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The handle counting into `polls` (the engine's own counter).
    #[must_use]
    pub(crate) fn with_polls(mut self, polls: Arc<std::sync::atomic::AtomicU64>) -> Self {
        self.polls = polls;
        self
    }

    /// A handle that can also abort the engine task.
    #[must_use]
    pub fn with_task(mut self, task: tokio::task::AbortHandle) -> Self {
        self.task = Some(task);
        self
    }

    /// Sends [`Command::Shutdown`] and waits for the engine to stop.
    pub async fn shutdown(mut self) {
        let _ = self.commands.send(Command::Shutdown).await;
        self.stopped().await;
    }

    /// Kills the engine task at once, as a crash would (no lease release, no final snapshot),
    /// and waits for it to end. Without a task (see [`Self::new`]) it only waits.
    pub async fn abort(mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
        self.stopped().await;
    }

    /// Waits until the engine has stopped (its snapshot sender is gone).
    pub async fn stopped(&mut self) {
        while self.status.changed().await.is_ok() {}
    }
}

#[cfg(test)]
mod tests;
