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

mod mco;
pub mod releases;
pub mod scenario;

use std::{
    collections::{BTreeMap, VecDeque},
    path::PathBuf,
    sync::Arc,
    time::Duration,
};

use chrono::{DateTime, Utc};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::{Value, json};
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
}

impl Default for OperatorSimConfig {
    fn default() -> Self {
        Self {
            speed: 1.0,
            seed: 0,
            scenario: OperatorScenario::default(),
            releases: Releases::default(),
            timings: SimTimings::default(),
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
    let task = tokio::spawn(run(sim, cfg, tx, stats.clone()));
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

fn now_str() -> String {
    Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Sets condition `type_` in `conds` (a JSON array), keeping `lastTransitionTime` when the
/// status does not change.
pub(crate) fn set_condition(conds: &mut Value, type_: &str, status: &str, reason: &str, message: &str) {
    if !conds.is_array() {
        *conds = json!([]);
    }
    let Some(list) = conds.as_array_mut() else { return };
    let now = now_str();
    let same = |c: &Value, k: &str, want: &str| c[k].as_str().unwrap_or_default() == want;
    match list.iter_mut().find(|c| c["type"] == type_) {
        Some(c) if same(c, "status", status) && same(c, "reason", reason) && same(c, "message", message) => {}
        Some(c) => {
            if c["status"] != status {
                c["lastTransitionTime"] = json!(now);
            }
            c["status"] = json!(status);
            c["reason"] = json!(reason);
            c["message"] = json!(message);
        }
        None => list.push(json!({
            "type": type_, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": now,
        })),
    }
}

fn condition<'a>(o: &'a Value, type_: &str) -> Option<&'a Value> {
    o["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// FNV-1a, for stable per-operator seeds and rendered-config names.
pub(crate) fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn str_at<'a>(o: &'a Value, ptr: &str) -> &'a str {
    o.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

fn int_at(o: &Value, ptr: &str) -> Option<i64> {
    o.pointer(ptr).and_then(Value::as_i64)
}

/// The `operator` entry of a ClusterOperator's `status.versions` (empty when absent).
fn operator_version(co: &Value) -> &str {
    co["status"]["versions"]
        .as_array()
        .and_then(|l| l.iter().find(|v| v["name"] == "operator"))
        .and_then(|v| v["version"].as_str())
        .unwrap_or_default()
}

/// `RELEASE_VERSION` of the first container that sets it.
fn release_version(d: &Value) -> Option<String> {
    d.pointer("/spec/template/spec/containers")?
        .as_array()?
        .iter()
        .flat_map(|c| c["env"].as_array().into_iter().flatten())
        .find(|e| e["name"] == "RELEASE_VERSION")
        .and_then(|e| e["value"].as_str())
        .map(str::to_owned)
}

/// Whether a Deployment's current generation is rolled out and available.
fn rolled_out(d: &Value) -> bool {
    let gen_ = int_at(d, "/metadata/generation").unwrap_or(1);
    let want = int_at(d, "/spec/replicas").unwrap_or(1);
    int_at(d, "/status/observedGeneration") == Some(gen_)
        && int_at(d, "/status/updatedReplicas").unwrap_or(0) >= want
        && int_at(d, "/status/availableReplicas").unwrap_or(0) >= want
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
            at: Utc::now(),
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

    /// Deployments, DaemonSets, StatefulSets and Jobs.
    fn workloads(&mut self, sim: &Simulator, now: Instant) -> Option<Instant> {
        let mut next = None;
        let mut keep = Vec::new();
        for (plural, kind) in [
            ("deployments", "Deployment"),
            ("daemonsets", "DaemonSet"),
            ("statefulsets", "StatefulSet"),
        ] {
            let mut nodes = 0;
            if kind == "DaemonSet" {
                sim.for_each_object("", "nodes", |_| nodes += 1);
            }
            // Copy only the workloads that are not settled.
            let mut todo = Vec::new();
            sim.for_each_object("apps", plural, |o| {
                let gen_ = int_at(o, "/metadata/generation").unwrap_or(1);
                if !(o["metadata"]["deletionTimestamp"].is_string()
                    || int_at(o, "/status/observedGeneration") == Some(gen_) && settled(o, kind))
                {
                    todo.push(o.clone());
                }
            });
            for mut o in todo {
                let ns = str_at(&o, "/metadata/namespace").to_owned();
                let name = str_at(&o, "/metadata/name").to_owned();
                let gen_ = int_at(&o, "/metadata/generation").unwrap_or(1);
                let key = format!("{kind}/{ns}/{name}");
                keep.push(key.clone());
                let crashloop = kind == "Deployment"
                    && self
                        .cfg
                        .releases
                        .operator_of(&ns, &name)
                        .is_some_and(|co| self.behaviour(co).crashloop);
                let at = match self.rollouts.get(&key) {
                    Some((g, at)) if *g == gen_ => *at,
                    _ => {
                        let at = now + self.scaled(self.cfg.timings.rollout);
                        self.rollouts.insert(key.clone(), (gen_, at));
                        self.event(format!(
                            "{} {ns}/{name}: rolling out generation {gen_}",
                            kind.to_lowercase()
                        ));
                        at
                    }
                };
                let replicas = match kind {
                    "DaemonSet" => nodes,
                    _ => int_at(&o, "/spec/replicas").unwrap_or(1),
                };
                let status = if now < at {
                    next = earliest(next, at);
                    progressing_status(kind, &o, gen_, replicas)
                } else if crashloop {
                    let deadline = at + self.scaled(self.cfg.timings.progress_deadline);
                    if now < deadline {
                        next = earliest(next, deadline);
                    }
                    crashloop_status(&o, gen_, replicas, now >= deadline)
                } else {
                    self.event(format!(
                        "{} {ns}/{name}: generation {gen_} rolled out",
                        kind.to_lowercase()
                    ));
                    rolled_out_status(kind, &o, gen_, replicas)
                };
                if o["status"] != status {
                    o["status"] = status;
                    if let Err(e) = sim.update_status(o) {
                        tracing::debug!(target: "sim_operators", "status of {key}: {e}");
                        next = earliest(next, now + Duration::from_millis(50));
                    }
                }
            }
        }
        self.rollouts.retain(|k, _| keep.contains(k));
        for mut j in sim.list_objects("batch", "jobs") {
            if int_at(&j, "/status/succeeded").unwrap_or(0) > 0
                || j["metadata"]["deletionTimestamp"].is_string()
            {
                continue;
            }
            let now_s = now_str();
            j["status"] = json!({
                "startTime": now_s, "completionTime": now_s, "succeeded": 1, "active": 0,
                "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": now_s}],
            });
            let name = format!(
                "{}/{}",
                str_at(&j, "/metadata/namespace"),
                str_at(&j, "/metadata/name")
            );
            if sim.update_status(j).is_ok() {
                self.event(format!("job {name}: complete"));
            }
        }
        next
    }
}

/// Whether a workload's status already says its observed generation is fully rolled out
/// (or, for a crash-looping Deployment, that the sim already wrote its final state).
fn settled(o: &Value, kind: &str) -> bool {
    match kind {
        "Deployment" => {
            rolled_out(o)
                || condition(o, "Progressing").is_some_and(|c| c["reason"] == "ProgressDeadlineExceeded")
        }
        "DaemonSet" => {
            int_at(o, "/status/updatedNumberScheduled") == int_at(o, "/status/desiredNumberScheduled")
                && int_at(o, "/status/numberAvailable") == int_at(o, "/status/desiredNumberScheduled")
        }
        _ => {
            let want = int_at(o, "/spec/replicas").unwrap_or(1);
            int_at(o, "/status/updatedReplicas") == Some(want)
                && int_at(o, "/status/readyReplicas") == Some(want)
        }
    }
}

impl State {
    /// The delay of operator `co` towards `target`, at the current speed.
    fn operator_delay(&self, co: &str, target: &str) -> Duration {
        if let Some(d) = self.behaviour(co).delay {
            return self.scaled(d.0);
        }
        let t = &self.cfg.timings;
        let mean = t.operator.get(co).copied().unwrap_or(t.operator_default);
        let mut rng = StdRng::seed_from_u64(self.cfg.seed ^ fnv(&[co, target]));
        let f: f64 = rng.gen_range(0.7..1.3);
        self.scaled(mean.mul_f64(f))
    }

    /// The versions `co` reports when it runs `target`.
    fn target_versions(&self, co: &Value, name: &str, target: &str) -> Value {
        if let Some(v) = self.cfg.releases.versions(target, name) {
            return Value::Array(
                v.iter()
                    .map(|(n, ver)| json!({"name": n, "version": ver}))
                    .collect(),
            );
        }
        let old = co["status"]["versions"]
            .as_array()
            .and_then(|l| l.iter().find(|v| v["name"] == "operator"))
            .and_then(|v| v["version"].as_str())
            .map(str::to_owned);
        let mut list: Vec<Value> = co["status"]["versions"].as_array().cloned().unwrap_or_default();
        for v in &mut list {
            if v["name"] == "operator" || (old.is_some() && v["version"].as_str() == old.as_deref()) {
                v["version"] = json!(target);
            }
        }
        if !list.iter().any(|v| v["name"] == "operator") {
            list.insert(0, json!({"name": "operator", "version": target}));
        }
        Value::Array(list)
    }

    /// The operator Deployment of ClusterOperator `co`: from the payloads, else a Deployment
    /// named after the operator in one of its related namespaces.
    fn deployment_key(
        &self,
        co: &Value,
        deps: &BTreeMap<(String, String), Option<String>>,
    ) -> Option<(String, String)> {
        let name = str_at(co, "/metadata/name");
        if let Some((ns, dn)) = self.cfg.releases.deployment_of(name) {
            return Some((ns.to_owned(), dn.to_owned()));
        }
        let candidates = [
            name.to_owned(),
            format!("{name}-operator"),
            format!("cluster-{name}-operator"),
        ];
        co["status"]["relatedObjects"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["resource"] == "namespaces")
            .filter_map(|r| r["name"].as_str())
            .find_map(|ns| {
                candidates
                    .iter()
                    .map(|c| (ns.to_owned(), c.clone()))
                    .find(|k| deps.contains_key(k))
            })
    }

    /// ClusterOperators follow their Deployments.
    fn operators(&mut self, sim: &Simulator, now: Instant) -> Option<Instant> {
        let mut next = None;
        // Deployment -> the RELEASE_VERSION it runs (None while rolling out).
        let mut deps: BTreeMap<(String, String), Option<String>> = BTreeMap::new();
        sim.for_each_object("apps", "deployments", |d| {
            let key = (
                str_at(d, "/metadata/namespace").to_owned(),
                str_at(d, "/metadata/name").to_owned(),
            );
            deps.insert(key, if rolled_out(d) { release_version(d) } else { None });
        });
        // Copy only the operators with something to do.
        let mut todo = Vec::new();
        sim.for_each_object("config.openshift.io", "clusteroperators", |co| {
            let name = str_at(co, "/metadata/name");
            let Some(Some(running)) = self.deployment_key(co, &deps).and_then(|k| deps.get(&k)) else {
                return;
            };
            if *running != operator_version(co) || self.work.contains_key(name) {
                todo.push((co.clone(), running.clone()));
            }
        });
        for (co, running) in todo {
            let name = str_at(&co, "/metadata/name").to_owned();
            let b = self.behaviour(&name);
            let w = match self.work.get(&name) {
                Some(w) if w.target == running => w.clone(),
                _ => {
                    let never = b.stall || b.degrade.is_some();
                    let w = OpWork {
                        target: running.clone(),
                        started: now,
                        done_at: (!never).then(|| now + self.operator_delay(&name, &running)),
                    };
                    self.event(format!("clusteroperator {name}: Working towards {running}"));
                    self.work.insert(name.clone(), w.clone());
                    w
                }
            };
            let mut status = co["status"].clone();
            let working = format!("Working towards {running}");
            let mut finished = false;
            if let Some(d) = &b.degrade {
                let at = w.started + self.scaled(d.after.0);
                if now >= at {
                    let msg = if d.message.is_empty() {
                        format!("{name} failed to update to {running}")
                    } else {
                        d.message.clone()
                    };
                    if condition(&co, "Degraded").is_none_or(|c| c["status"] != "True") {
                        self.event(format!("clusteroperator {name}: Degraded {}: {msg}", d.reason));
                    }
                    set_condition(&mut status["conditions"], "Degraded", "True", &d.reason, &msg);
                } else {
                    next = earliest(next, at);
                }
                set_condition(
                    &mut status["conditions"],
                    "Progressing",
                    "True",
                    "Upgrading",
                    &working,
                );
            } else if name == "machine-config" {
                set_condition(
                    &mut status["conditions"],
                    "Progressing",
                    "True",
                    "Upgrading",
                    &working,
                );
                match w.done_at {
                    Some(at) if now >= at => {
                        // Its own work is done: roll the pools; the version once master is.
                        self.mco.target = Some(running.clone());
                        if mco::master_updated(sim, &running) {
                            finished = true;
                        }
                    }
                    Some(at) => next = earliest(next, at),
                    None => {}
                }
            } else {
                match w.done_at {
                    Some(at) if now >= at => finished = true,
                    Some(at) => {
                        next = earliest(next, at);
                        set_condition(
                            &mut status["conditions"],
                            "Progressing",
                            "True",
                            "Upgrading",
                            &working,
                        );
                    }
                    None => set_condition(
                        &mut status["conditions"],
                        "Progressing",
                        "True",
                        "Upgrading",
                        &working,
                    ),
                }
            }
            if finished {
                status["versions"] = self.target_versions(&co, &name, &running);
                let msg = format!("Cluster version is {running}");
                set_condition(
                    &mut status["conditions"],
                    "Available",
                    "True",
                    "AsExpected",
                    "All is well",
                );
                set_condition(
                    &mut status["conditions"],
                    "Progressing",
                    "False",
                    "AsExpected",
                    &msg,
                );
                set_condition(
                    &mut status["conditions"],
                    "Degraded",
                    "False",
                    "AsExpected",
                    "All is well",
                );
            }
            if status != co["status"] {
                let mut o = co.clone();
                o["status"] = status;
                match sim.update_status(o) {
                    Ok(_) if finished => {
                        self.work.remove(&name);
                        self.event(format!("clusteroperator {name}: at version {running}"));
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::debug!(target: "sim_operators", "status of {name}: {e}");
                        next = earliest(next, now + Duration::from_millis(50));
                    }
                }
            } else if finished {
                self.work.remove(&name);
            }
        }
        next
    }
}

pub(crate) fn earliest(a: Option<Instant>, b: Instant) -> Option<Instant> {
    Some(a.map_or(b, |a| a.min(b)))
}

fn progressing_status(kind: &str, o: &Value, gen_: i64, replicas: i64) -> Value {
    let mut s = o["status"].clone();
    if !s.is_object() {
        s = json!({});
    }
    s["observedGeneration"] = json!(gen_);
    match kind {
        "DaemonSet" => {
            s["desiredNumberScheduled"] = json!(replicas);
            s["currentNumberScheduled"] = json!(replicas);
            s["updatedNumberScheduled"] = json!(0);
        }
        _ => {
            s["replicas"] = json!(replicas);
            s["updatedReplicas"] = json!(0);
            if kind == "Deployment" {
                let name = str_at(o, "/metadata/name");
                set_condition(
                    &mut s["conditions"],
                    "Progressing",
                    "True",
                    "ReplicaSetUpdated",
                    &format!("ReplicaSet \"{name}-{gen_}\" is progressing."),
                );
            }
        }
    }
    s
}

fn rolled_out_status(kind: &str, o: &Value, gen_: i64, replicas: i64) -> Value {
    let mut s = o["status"].clone();
    if !s.is_object() {
        s = json!({});
    }
    s["observedGeneration"] = json!(gen_);
    match kind {
        "DaemonSet" => {
            for k in [
                "desiredNumberScheduled",
                "currentNumberScheduled",
                "updatedNumberScheduled",
                "numberReady",
                "numberAvailable",
            ] {
                s[k] = json!(replicas);
            }
            s["numberMisscheduled"] = json!(0);
        }
        "StatefulSet" => {
            for k in [
                "replicas",
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
            ] {
                s[k] = json!(replicas);
            }
            let rev = format!("{}-{gen_}", str_at(o, "/metadata/name"));
            s["currentRevision"] = json!(rev);
            s["updateRevision"] = json!(rev);
        }
        _ => {
            for k in [
                "replicas",
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
            ] {
                s[k] = json!(replicas);
            }
            if let Some(m) = s.as_object_mut() {
                m.remove("unavailableReplicas");
            }
            let name = str_at(o, "/metadata/name");
            set_condition(
                &mut s["conditions"],
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
            );
            set_condition(
                &mut s["conditions"],
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                &format!("ReplicaSet \"{name}-{gen_}\" has successfully progressed."),
            );
        }
    }
    s
}

fn crashloop_status(o: &Value, gen_: i64, replicas: i64, past_deadline: bool) -> Value {
    let mut s = o["status"].clone();
    if !s.is_object() {
        s = json!({});
    }
    let name = str_at(o, "/metadata/name");
    let container = o
        .pointer("/spec/template/spec/containers/0/name")
        .and_then(Value::as_str)
        .unwrap_or(name);
    s["observedGeneration"] = json!(gen_);
    s["replicas"] = json!(replicas);
    s["updatedReplicas"] = json!(replicas);
    s["readyReplicas"] = json!(0);
    s["availableReplicas"] = json!(0);
    s["unavailableReplicas"] = json!(replicas);
    set_condition(
        &mut s["conditions"],
        "Available",
        "False",
        "MinimumReplicasUnavailable",
        &format!(
            "Deployment does not have minimum availability: pod {name}-{gen_}-0: container {container} is in CrashLoopBackOff (back-off restarting failed container)"
        ),
    );
    if past_deadline {
        set_condition(
            &mut s["conditions"],
            "Progressing",
            "False",
            "ProgressDeadlineExceeded",
            &format!("ReplicaSet \"{name}-{gen_}\" has timed out progressing."),
        );
    } else {
        set_condition(
            &mut s["conditions"],
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            &format!("ReplicaSet \"{name}-{gen_}\" is progressing."),
        );
    }
    s
}

/// The tests' one copy of the wait helpers (the integration tests reach it through `common`).
#[cfg(test)]
#[path = "../../../tests/common/wait.rs"]
mod test_wait;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_pass_writes_nothing_and_is_cheap() {
        let sim = crate::sim::demo_cluster().expect("seed");
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/payloads");
        let cfg =
            OperatorSimConfig::with_payloads(&[dir.join("4.16.3"), dir.join("4.16.4")]).expect("payloads");
        let (tx, _rx) = watch::channel(Arc::new(Vec::new()));
        let mut st = State::new(cfg, tx);
        let rv = sim.resource_version();
        let t0 = std::time::Instant::now();
        for _ in 0..20 {
            assert_eq!(st.pass(&sim, Instant::now()), None);
        }
        eprintln!("idle pass: {:?}", t0.elapsed() / 20);
        let now = Instant::now();
        let t0 = std::time::Instant::now();
        st.workloads(&sim, now);
        let t1 = std::time::Instant::now();
        st.operators(&sim, now);
        let t2 = std::time::Instant::now();
        mco::pass(&mut st, &sim, now);
        eprintln!(
            "workloads {:?} operators {:?} mco {:?}",
            t1 - t0,
            t2 - t1,
            t2.elapsed()
        );
        assert_eq!(sim.resource_version(), rv, "a settled cluster needs no writes");
        assert!(st.log.is_empty());
    }

    async fn wait_for(what: &str, f: impl FnMut() -> bool) {
        super::test_wait::wait_until(what, Duration::from_secs(20), f).await;
    }

    /// Without payload knowledge: the Deployment named `<co>-operator` in a related namespace
    /// rolls out, then the ClusterOperator reports its `RELEASE_VERSION` for `operator` and for
    /// operands that were at the old operator version.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rolls_out_and_reports_without_payloads() {
        let sim = Simulator::new();
        sim.insert(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-foo"}}))
            .expect("ns");
        sim.insert(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "foo-operator", "namespace": "openshift-foo", "generation": 2},
            "spec": {"replicas": 2, "selector": {}, "template": {"spec": {"containers": [
                {"name": "op", "env": [{"name": "RELEASE_VERSION", "value": "2.0"}]}]}}},
            "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2},
        }))
        .expect("deployment");
        sim.insert(json!({
            "apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
            "metadata": {"name": "foo"},
            "status": {
                "relatedObjects": [{"group": "", "resource": "namespaces", "name": "openshift-foo"}],
                "versions": [
                    {"name": "operator", "version": "1.0"},
                    {"name": "foo-operand", "version": "1.0"},
                    {"name": "kube", "version": "1.29.6"},
                ],
            },
        }))
        .expect("co");
        let scenario = OperatorScenario::from_yaml("operators:\n  foo: {delay: 1s}\n").expect("scenario");
        let ops = spawn(
            sim.clone(),
            OperatorSimConfig::default().speed(20.0).with_scenario(scenario),
        );
        let t0 = Instant::now();
        wait_for("foo at 2.0", || {
            sim.get("config.openshift.io", "clusteroperators", "", "foo")
                .is_some_and(|c| operator_version(&c) == "2.0")
        })
        .await;
        // rollout 2 s + delay 1 s at speed 20 = 150 ms.
        assert!(t0.elapsed() >= Duration::from_millis(140), "{:?}", t0.elapsed());
        let d = sim
            .get("apps", "deployments", "openshift-foo", "foo-operator")
            .expect("deployment");
        assert_eq!(d["status"]["observedGeneration"], 2);
        assert_eq!(d["status"]["readyReplicas"], 2);
        assert_eq!(d["status"]["updatedReplicas"], 2);
        let co = sim
            .get("config.openshift.io", "clusteroperators", "", "foo")
            .expect("co");
        assert_eq!(
            co["status"]["versions"],
            json!([
                {"name": "operator", "version": "2.0"},
                {"name": "foo-operand", "version": "2.0"},
                {"name": "kube", "version": "1.29.6"},
            ])
        );
        for (t, want) in [
            ("Available", "True"),
            ("Progressing", "False"),
            ("Degraded", "False"),
        ] {
            assert_eq!(condition(&co, t).expect(t)["status"], want, "{t}");
        }
        let log: Vec<String> = ops.events.borrow().iter().map(|e| e.text.clone()).collect();
        assert_eq!(
            log,
            [
                "deployment openshift-foo/foo-operator: rolling out generation 2",
                "deployment openshift-foo/foo-operator: generation 2 rolled out",
                "clusteroperator foo: Working towards 2.0",
                "clusteroperator foo: at version 2.0",
            ]
        );
        assert!(ops.stats().passes >= 3);
    }

    /// A scenario's `changes` run on the simulated clock.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn scenario_changes_run_scaled() {
        let sim = Simulator::new();
        sim.insert(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}))
            .expect("ns");
        sim.insert(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": {"k": "a"}}))
            .expect("cm");
        let scenario = OperatorScenario::from_yaml(
            "speed: 50\nchanges:\n  - after: 5\n    patch: {apiVersion: v1, kind: ConfigMap, name: c, namespace: ns, data: {k: b}}\n",
        )
        .expect("scenario");
        let ops = spawn(sim.clone(), OperatorSimConfig::default().with_scenario(scenario));
        let t0 = Instant::now();
        wait_for("patched", || {
            sim.get("", "configmaps", "ns", "c")
                .is_some_and(|c| c["data"]["k"] == "b")
        })
        .await;
        assert!(t0.elapsed() >= Duration::from_millis(95), "{:?}", t0.elapsed());
        assert_eq!(ops.events.borrow()[0].text, "scenario: patched ConfigMap c");
    }
}
