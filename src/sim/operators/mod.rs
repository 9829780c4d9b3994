//! Simulated cluster operators and kubelet: a tokio task that plays, on a [`Simulator`], the
//! controllers an update needs, so the reconcile engine's update progresses as on a cluster.
//!
//! What it does, level-triggered on the store (it wakes on every write and on its own timers,
//! and is idle otherwise):
//! - **Workloads** (the kubelet and the workload controllers): a Deployment, DaemonSet or
//!   StatefulSet whose `metadata.generation` is ahead of `status.observedGeneration` is rolling
//!   out: status Progressing at once, then after the rollout delay all replicas updated, ready
//!   and available. Jobs complete (`succeeded: 1`, `Complete=True`). CRDs are established by the
//!   simulator itself.
//! - **ClusterOperators**: once an operator's Deployment has rolled out a new `RELEASE_VERSION`,
//!   its ClusterOperator goes `Progressing=True` ("Working towards V"), then after a delay drawn
//!   per operator (seeded; `kube-apiserver`, `etcd`, `network` and `machine-config` are slow)
//!   reports the versions of the payload's ClusterOperator manifest for V (what the engine's
//!   health check waits for; upstream `pkg/cvo/internal/operatorstatus.go`), `Available=True`,
//!   `Progressing=False`, `Degraded=False`.
//! - **machine-config** ([`mco`]): when the operator is done with its own work it renders a new
//!   MachineConfig per pool (annotated with the release version), points each pool at it and
//!   updates the nodes one at a time per pool (maxUnavailable 1): drain (cordoned), reboot
//!   (`Ready=False`), done, as the machine-config daemon does; pools count and report
//!   `Updating`/`Updated`. The ClusterOperator reaches the new version when the `master` pool is
//!   updated (upstream MCO waits for the required pools); workers may still be updating when
//!   the ClusterVersion completes.
//! - [`OperatorScenario`] can fix an operator's delay, make it degrade, stall or crash-loop.
//!
//! Every delay is divided by [`OperatorSimConfig::speed`]. At speed 1 the demo update
//! 4.16.3 → 4.16.4 takes about 3 minutes of simulated time along its critical path (2 s
//! rollout per run level, the operator delays of the slowest operator of each level, then
//! machine-config: 10 s plus 3 master nodes × 14 s), plus the engine's own latency; the
//! worker pool rolls in parallel with the master pool.

mod cluster_operators;
mod json;
mod mco;
pub mod releases;
pub mod scenario;
#[cfg(test)]
mod tests;
mod workloads;

use std::{
    collections::{BTreeMap, VecDeque},
    path::PathBuf,
    sync::Arc,
    time::Duration,
};

use chrono::{DateTime, Utc};
use tokio::{sync::watch, task::JoinHandle, time::Instant};

pub use releases::Releases;
pub use scenario::{Degrade, OperatorBehaviour, OperatorScenario, SimDuration};

use super::Simulator;

/// How the simulated operators run.
#[derive(Clone, Debug)]
pub struct OperatorSimConfig {
    /// Time speed: every delay is divided by it (10 = ten times faster). Must be > 0.
    pub speed: f64,
    /// Seed of the per-operator delay draws (same seed, same delays).
    pub seed: u64,
    /// Per-operator behaviours (its `speed`/`seed`, when set, were already applied by
    /// [`OperatorSimConfig::with_scenario`]).
    pub scenario: OperatorScenario,
    /// What each release's operators report ([`Releases::from_payload_dirs`]). Without it a
    /// ClusterOperator reports `operator` (and operands that were at the old operator version)
    /// at its Deployment's `RELEASE_VERSION`, and other operand versions unchanged.
    pub releases: Releases,
    /// Base delays at speed 1.
    pub timings: SimTimings,
    /// The clock of the times the operators write (condition transitions, events): the wall
    /// clock, or the demo's simulated one.
    pub clock: crate::clock::Clock,
}

impl Default for OperatorSimConfig {
    fn default() -> Self {
        Self {
            speed: 1.0,
            seed: 0,
            scenario: OperatorScenario::default(),
            releases: Releases::default(),
            timings: SimTimings::default(),
            clock: crate::clock::Clock::wall(),
        }
    }
}

impl OperatorSimConfig {
    /// Speed 1, seed 0, the operators of the payloads in `payload_dirs` (e.g. both demo
    /// payloads, `assets/payloads/4.16.3` and `assets/payloads/4.16.4`).
    ///
    /// # Errors
    /// A payload cannot be read (the error names the file).
    pub fn with_payloads(payload_dirs: &[PathBuf]) -> anyhow::Result<Self> {
        Ok(Self {
            releases: Releases::from_payload_dirs(payload_dirs)?,
            ..Self::default()
        })
    }

    /// Sets the speed.
    pub fn speed(mut self, speed: f64) -> Self {
        self.speed = speed;
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Uses `scenario`; its `speed` and `seed`, when given, replace the current ones.
    pub fn with_scenario(mut self, scenario: OperatorScenario) -> Self {
        if let Some(s) = scenario.speed {
            self.speed = s;
        }
        if let Some(s) = scenario.seed {
            self.seed = s;
        }
        self.scenario = scenario;
        self
    }
}

/// Base delays at speed 1 (divided by the speed).
#[derive(Clone, Debug)]
pub struct SimTimings {
    /// A workload's rollout (new pods ready).
    pub rollout: Duration,
    /// A crash-looping Deployment's progress deadline (then `ProgressDeadlineExceeded`).
    pub progress_deadline: Duration,
    /// Mean operator delay by ClusterOperator name; others get [`SimTimings::operator_default`].
    /// Each draw is uniform in ±30 % of the mean.
    pub operator: BTreeMap<String, Duration>,
    /// Mean delay of operators not in [`SimTimings::operator`].
    pub operator_default: Duration,
    /// Node drain (cordoned, `state: Working`).
    pub node_drain: Duration,
    /// Node reboot (`Ready=False`, `state: Rebooting`).
    pub node_reboot: Duration,
}

impl Default for SimTimings {
    fn default() -> Self {
        let s = Duration::from_secs;
        Self {
            rollout: s(2),
            progress_deadline: s(60),
            operator: [
                ("kube-apiserver", 25),
                ("etcd", 15),
                ("network", 15),
                ("machine-config", 10),
                ("monitoring", 8),
                ("kube-controller-manager", 6),
                ("openshift-apiserver", 6),
                ("authentication", 6),
                ("kube-scheduler", 5),
                ("ingress", 5),
                ("console", 4),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), s(v)))
            .collect(),
            operator_default: s(3),
            node_drain: s(4),
            node_reboot: s(10),
        }
    }
}

/// One line of the simulated operators' activity log.
#[derive(Clone, Debug, PartialEq)]
pub struct SimEvent {
    /// Increasing sequence number (1 for the first).
    pub seq: u64,
    /// When it happened.
    pub at: DateTime<Utc>,
    /// E.g. `clusteroperator kube-apiserver: Working towards 4.16.4`.
    pub text: String,
}

/// Work counters of the simulated operators.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SimStats {
    /// Passes over the store (one per wake-up).
    pub passes: u64,
    /// Time spent in passes (CPU-bound work; the task sleeps otherwise).
    pub busy: Duration,
}

/// The running simulated operators. Dropping it stops them (the task is aborted).
pub struct OperatorSimHandle {
    task: JoinHandle<()>,
    stats: Arc<std::sync::Mutex<SimStats>>,
    /// The last [`EVENT_LOG`] events, newest last.
    pub events: watch::Receiver<Arc<Vec<SimEvent>>>,
}

/// How many events [`OperatorSimHandle::events`] keeps.
pub const EVENT_LOG: usize = 200;

impl OperatorSimHandle {
    /// Stops the simulated operators.
    pub fn shutdown(self) {
        self.task.abort();
    }

    /// Passes made and time spent in them so far.
    pub fn stats(&self) -> SimStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }

    /// Whether the task has ended (it only ends when stopped or on a panic).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl Drop for OperatorSimHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts the simulated operators on `sim` (must be called inside a tokio runtime). Writes go
/// straight to the store (not audited), as `/status` updates or metadata/spec updates with
/// resourceVersion checks; a conflict is retried on the next pass.
///
/// The scenario's `faults` (when not empty) are set on the simulator at once, and its
/// `changes` are applied `after` seconds of simulated time (divided by the speed) from now,
/// each logged as an event.
pub fn spawn(sim: Simulator, cfg: OperatorSimConfig) -> OperatorSimHandle {
    let (tx, events) = watch::channel(Arc::new(Vec::new()));
    let stats = Arc::new(std::sync::Mutex::new(SimStats::default()));
    if cfg.scenario.faults != crate::sim::Faults::default()
        && let Err(e) = sim.set_faults(cfg.scenario.faults.clone())
    {
        tracing::warn!("scenario faults: {e}");
    }
    let clock = cfg.clock.clone();
    let task = tokio::spawn(json::CLOCK.scope(clock, run(sim, cfg, tx, stats.clone())));
    OperatorSimHandle { task, stats, events }
}

/// The kinds whose changes wake the simulated operators.
const WATCHED: &[(&str, &str)] = &[
    ("apps", "deployments"),
    ("apps", "daemonsets"),
    ("apps", "statefulsets"),
    ("batch", "jobs"),
    ("config.openshift.io", "clusteroperators"),
    ("", "nodes"),
    ("machineconfiguration.openshift.io", "machineconfigpools"),
    ("machineconfiguration.openshift.io", "machineconfigs"),
];

async fn run(
    sim: Simulator,
    cfg: OperatorSimConfig,
    tx: watch::Sender<Arc<Vec<SimEvent>>>,
    stats: Arc<std::sync::Mutex<SimStats>>,
) {
    let mut changes = sim.subscribe();
    let start = Instant::now();
    let mut script: VecDeque<(Instant, crate::sim::serve::Change)> = {
        let mut v: Vec<_> = cfg.scenario.changes.clone();
        v.sort_by(|a, b| a.after.total_cmp(&b.after));
        let speed = if cfg.speed.is_finite() && cfg.speed > 0.0 {
            cfg.speed
        } else {
            1.0
        };
        v.into_iter()
            .map(|c| (start + Duration::from_secs_f64(c.after.max(0.0) / speed), c))
            .collect()
    };
    let mut st = State::new(cfg, tx);
    let mut seen: Option<u64> = None;
    let mut next: Option<Instant> = None;
    loop {
        while script.front().is_some_and(|(at, _)| *at <= Instant::now()) {
            if let Some((_, c)) = script.pop_front() {
                let text = match crate::sim::serve::apply_change(&sim, &c) {
                    Ok(t) => format!("scenario: {t}"),
                    Err(e) => format!("scenario: {e}"),
                };
                st.event(text);
            }
        }
        let rv = *changes.borrow_and_update();
        let due = next.is_some_and(|t| t <= Instant::now());
        // Only writes to the kinds it plays (or a due timer) are worth a look.
        if due || seen.is_none_or(|s| sim.changed_since(s, WATCHED)) {
            seen = Some(rv);
            let t0 = std::time::Instant::now();
            next = st.pass(&sim, Instant::now());
            if let Ok(mut s) = stats.lock() {
                s.passes += 1;
                s.busy += t0.elapsed();
            }
        } else {
            seen = Some(rv);
        }
        let wake = [next, script.front().map(|(at, _)| *at)]
            .into_iter()
            .flatten()
            .min();
        let timer = async {
            match wake {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = changes.changed() => {
                if r.is_err() {
                    return;
                }
                // Let a burst of writes land before looking.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            () = timer => {}
        }
    }
}

/// What an operator is doing towards a release.
#[derive(Clone, Debug)]
struct OpWork {
    /// The release its Deployment runs.
    target: String,
    started: Instant,
    /// When it reaches the target (operators that never finish: `None`).
    done_at: Option<Instant>,
}

pub(crate) struct State {
    cfg: OperatorSimConfig,
    tx: watch::Sender<Arc<Vec<SimEvent>>>,
    log: VecDeque<SimEvent>,
    seq: u64,
    /// Workload key (`kind/ns/name`) -> (generation, when its rollout completes).
    rollouts: BTreeMap<String, (i64, Instant)>,
    /// ClusterOperator name -> work in progress.
    work: BTreeMap<String, OpWork>,
    mco: mco::Mco,
}

impl State {
    fn new(cfg: OperatorSimConfig, tx: watch::Sender<Arc<Vec<SimEvent>>>) -> Self {
        Self {
            cfg,
            tx,
            log: VecDeque::new(),
            seq: 0,
            rollouts: BTreeMap::new(),
            work: BTreeMap::new(),
            mco: mco::Mco::default(),
        }
    }

    fn speed(&self) -> f64 {
        if self.cfg.speed.is_finite() && self.cfg.speed > 0.0 {
            self.cfg.speed
        } else {
            1.0
        }
    }

    /// `d` at the current speed.
    pub(crate) fn scaled(&self, d: Duration) -> Duration {
        Duration::from_secs_f64(d.as_secs_f64() / self.speed())
    }

    pub(crate) fn event(&mut self, text: String) {
        tracing::debug!(target: "sim_operators", "{text}");
        self.seq += 1;
        self.log.push_back(SimEvent {
            seq: self.seq,
            at: json::now(),
            text,
        });
        while self.log.len() > EVENT_LOG {
            self.log.pop_front();
        }
        self.tx.send_replace(Arc::new(self.log.iter().cloned().collect()));
    }

    fn behaviour(&self, co: &str) -> OperatorBehaviour {
        self.cfg.scenario.operators.get(co).cloned().unwrap_or_default()
    }

    /// One look at the cluster; returns the next timer.
    fn pass(&mut self, sim: &Simulator, now: Instant) -> Option<Instant> {
        let next = [
            self.workloads(sim, now),
            self.operators(sim, now),
            mco::pass(self, sim, now),
        ];
        next.into_iter().flatten().min()
    }
}

/// The tests' one copy of the wait helpers (the integration tests reach it through `common`).
#[cfg(test)]
#[path = "../../../tests/common/wait.rs"]
mod test_wait;
