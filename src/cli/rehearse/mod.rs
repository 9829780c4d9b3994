//! `cvo rehearse`: an update rehearsed on a simulated copy of a cluster.
//!
//! From a snapshot or must-gather (what `--from` reads, [`crate::cluster::snapshot::load`])
//! and a target release (a payload directory, or a pull spec pulled into the cache first):
//! the snapshot is loaded into an in-process [`Simulator`] (never a real cluster), the demo's
//! simulated operators, MCO and kubelet ([`crate::sim::operators`]) play the cluster's
//! controllers with the target's operator versions, `spec.desiredUpdate` is set to the target
//! (`force: true`, so the rehearsal goes on past a blocking precondition, which the report
//! names), and the reconcile engine runs in active-apply on a simulated clock (`--speed` times
//! as fast as the wall clock) until the ClusterVersion is Completed for the target and every
//! pool is updated, or the timeout. What changed is found by comparing, for every object the
//! target payload names, the simulator's copy before the engine started with its copy at the
//! end (created, deleted, or changed outside `status` and the server-set metadata): the same
//! answer on every run, however the engine's passes fell. The [`report::Report`] is built from
//! those, the ClusterOperators, pools and nodes before and after, the snapshot's
//! conditional-update risks and its `status.history`.
//!
//! Nothing is written anywhere but the simulator; the only network access is pulling a
//! `--to-image` release image (as `cvo payload pull` does).

pub mod report;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::Context as _;
use serde_json::{Value, json};

use crate::l10n::trf;
use crate::{
    clock::Clock,
    cluster::{
        ClusterState,
        update_request::{self, Flags, Outcome as PlanOutcome, Request, VerdictState},
    },
    openshift::ClusterVersion,
    reconcile::{
        Engine, EngineConfig,
        api::{EngineHandle, LocalPayloads, StatusSnapshot},
    },
    sim::{
        Simulator,
        operators::{
            OperatorSimConfig, OperatorSimHandle,
            scenario::{Degrade, OperatorBehaviour, OperatorScenario, SimDuration},
        },
    },
};
use report::{Change, ManifestChange, Report};

/// Default `--speed`: the simulated clock runs this many times as fast as the wall clock.
pub const DEFAULT_SPEED: f64 = 50.0;

/// The default `--timeout`: 60 s plus 1800 s divided by the speed (a must-gather's pools
/// roll node by node after the operators).
pub fn default_timeout(speed: f64) -> Duration {
    Duration::from_secs_f64(60.0 + 1800.0 / speed)
}

/// What the rehearsal runs.
#[derive(Clone, Debug)]
pub struct RehearseOptions {
    /// Snapshot files or directories (`--from`).
    pub from: Vec<PathBuf>,
    /// The target release's payload directory.
    pub payload: PathBuf,
    /// The target's pull spec: the image given with `--to-image`, else `file://DIR`.
    pub image: String,
    /// Simulated-time speed (> 0).
    pub speed: f64,
    /// Wall-clock limit of the run.
    pub timeout: Duration,
    /// Let the ClusterOperators the snapshot shows Degraded recover once they run the target
    /// (`--assume-recovery`); by default they stay Degraded, as nothing says the new release
    /// fixes them, and the rehearsal shows the update waiting on them.
    pub assume_recovery: bool,
}

/// How long nothing may move (no task done, no ClusterOperator reaching the target) while a
/// ClusterOperator kept Degraded has not reached the target before the rehearsal stops as
/// stalled: 10 minutes of simulated time, when `oc adm upgrade status` calls an update
/// stalled. Upstream's CVO waits on a Degraded operator and reports Failing with
/// `ClusterOperatorDegraded` after 40 minutes (`pkg/cvo/internal/operatorstatus.go` in
/// openshift/cluster-version-operator, effect FailAfterInterval).
pub const STALL_AFTER: Duration = Duration::from_secs(600);

/// What the rehearsal collects while it runs; shared with the caller so that a dashboard
/// that quits early still gets a report of what was reached.
#[derive(Clone, Debug, Default)]
pub struct Collected {
    /// The engine's last snapshot.
    pub last: Option<Arc<StatusSnapshot>>,
    /// The ClusterVersion reached Completed for the target.
    pub completed: bool,
    /// The rehearsal stopped early: nothing moved for [`STALL_AFTER`] of simulated time while
    /// an operator kept Degraded had not reached the target.
    pub stalled: bool,
}

/// What [`follow`] needs to tell a stalled rehearsal from a slow one: the simulated clock and
/// the ClusterOperators kept Degraded (empty: never stops early).
#[derive(Clone, Debug)]
pub struct Held {
    /// The rehearsal's simulated clock.
    pub clock: Clock,
    /// The ClusterOperators kept Degraded.
    pub operators: Vec<String>,
}

/// A running rehearsal.
pub struct Rehearsal {
    /// The simulated cluster.
    pub sim: Simulator,
    /// The engine.
    pub engine: EngineHandle,
    /// The simulated operators.
    pub operators: OperatorSimHandle,
    /// The simulated clock.
    pub clock: Clock,
    /// The cluster as loaded from the snapshot.
    pub before: ClusterState,
    /// The target's version.
    pub version: String,
    /// The target's pull spec.
    pub image: String,
    /// The verdicts and refusal, decided before the rehearsal.
    pub preconditions: (Vec<report::PreconditionRow>, Option<String>),
    /// The ClusterOperators the snapshot shows Degraded.
    pub degraded: Vec<report::DegradedOperator>,
    /// Whether they may recover (`--assume-recovery`).
    pub assume_recovery: bool,
    start: chrono::DateTime<chrono::Utc>,
    /// Every object the target payload names, as the snapshot had it.
    tracked: Vec<Tracked>,
    /// What was collected so far.
    pub collected: Arc<Mutex<Collected>>,
    /// The shared watches of the simulated cluster (the engine's and the dashboard's).
    pub informers: crate::informers::Informers,
}

/// The `version` of `DIR/release-manifests/release-metadata`.
///
/// # Errors
/// The file is missing, not JSON, or has no version (one line naming it).
pub fn payload_version(dir: &Path) -> anyhow::Result<String> {
    let p = dir.join("release-manifests").join("release-metadata");
    let text = std::fs::read_to_string(&p).with_context(|| format!("--payload: {}", p.display()))?;
    let v: Value = serde_json::from_str(&text).with_context(|| format!("{}", p.display()))?;
    v["version"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .with_context(|| format!("{}: no version", p.display()))
}

/// The stand-in pull spec of a directory target in the precondition checks: a directory has no
/// registry pull spec, so the request is decided as for a release image by digest.
const DIR_STANDIN: &str =
    "registry.invalid/rehearsal@sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// The request's preconditions as `cvo upgrade --to-image IMAGE --read-only` decides them: first
/// with no flag (the refusal oc would print), then with every waiver, so that every check is
/// listed (a check a flag waived is shown as `blocking` with the flag that waives it). The
/// cluster's own preconditions (Upgradeable, rollback, giant hop), which a pull spec alone
/// leaves unchecked, are decided with the target's known `version`. A directory target
/// (`file://`) is decided as an image by digest ([`DIR_STANDIN`]).
pub fn preconditions(
    cv: &ClusterVersion,
    version: &str,
    image: &str,
) -> (Vec<report::PreconditionRow>, Option<String>) {
    use crate::openshift::precondition::{self as pc, GIANT_HOP, ROLLBACK, UPGRADEABLE};
    let pullspec = if image.starts_with("file://") {
        DIR_STANDIN
    } else {
        image
    };
    let request = Request::ToImage {
        pullspec: pullspec.to_string(),
    };
    let all = Flags {
        allow_not_recommended: true,
        allow_explicit_upgrade: true,
        allow_upgrade_with_warnings: true,
        force: true,
        ..Flags::default()
    };
    let verdicts = match update_request::plan(cv, &request, &all) {
        Ok(PlanOutcome::Plan(p)) => p.verdicts,
        Ok(PlanOutcome::NoChange(n)) => {
            return (Vec::new(), Some(n.message));
        }
        Err(r) => r.verdicts,
    };
    let mut rows: Vec<report::PreconditionRow> = Vec::new();
    let mut refusal = None;
    for v in &verdicts {
        let mut row = report::PreconditionRow::from(v);
        let cluster_check = match v.name {
            UPGRADEABLE => {
                Some(pc::upgradeable as fn(&ClusterVersion, &str) -> Option<pc::PreconditionError>)
            }
            ROLLBACK => Some(pc::rollback as fn(&ClusterVersion, &str) -> Option<pc::PreconditionError>),
            GIANT_HOP => Some(pc::giant_hop as fn(&ClusterVersion, &str) -> Option<pc::PreconditionError>),
            _ => None,
        };
        if let Some(check) = cluster_check
            && v.state == VerdictState::Unchecked
        {
            match check(cv, version) {
                None => {
                    row.state = "passed".into();
                    row.message = trf!(
                        "rehearse-check-passed",
                        "{current} to {version}: passed",
                        current = cv.status.desired.version,
                        version = version
                    );
                }
                Some(e) if e.non_blocking => {
                    row.state = "warning".into();
                    row.message = e.to_string();
                }
                Some(e) => {
                    row.state = "blocking".into();
                    let waive = trf!("dry-would-waive", " ({flag} would waive it)", flag = "--force");
                    row.name = format!("{}{waive}", v.name);
                    row.message = e.to_string();
                    refusal.get_or_insert_with(|| format!("{e}{waive}"));
                }
            }
        } else if let VerdictState::Waived(w) = v.state {
            row.state = "blocking".into();
            let waive = trf!("dry-would-waive", " ({flag} would waive it)", flag = w.flag());
            row.name = format!("{}{waive}", row.name);
            refusal
                .get_or_insert_with(|| format!("{}{waive}", row.message.lines().next().unwrap_or_default()));
        }
        if pullspec == DIR_STANDIN && v.name == "PullSpec" {
            row.message = trf!(
                "rehearse-payload-dir",
                "{image} is a payload directory, decided as a release image by digest",
                image = image
            );
        }
        row.message = row.message.replace(DIR_STANDIN, image);
        rows.push(row);
    }
    (rows, refusal.map(|r| r.replace(DIR_STANDIN, image)))
}

impl Rehearsal {
    /// Loads the snapshot, starts the simulated operators and the engine on the target.
    ///
    /// # Errors
    /// The snapshot cannot be read or has no ClusterVersion; the payload has no version; the
    /// simulator refuses an object.
    pub async fn start(opts: &RehearseOptions) -> anyhow::Result<Self> {
        let mut before = crate::cluster::snapshot::load(&opts.from)?;
        before.sort();
        let cv = before.cluster_version.clone().context(
            "--from: the snapshot has no ClusterVersion (clusterversions.yaml or a ClusterVersion object)",
        )?;
        let version = payload_version(&opts.payload)?;
        let preconditions = preconditions(&cv, &version, &opts.image);
        let sim = Simulator::from_state(&before).map_err(|e| anyhow::anyhow!("--from: {}", e.message))?;
        sim.keep_audit(false);
        let tracked = track(&sim, &opts.payload)?;
        let clock = Clock::simulated(opts.speed);
        sim.set_clock(clock.clone());
        let degraded = degraded_operators(&before);
        let mut scenario = OperatorScenario::default();
        if !opts.assume_recovery {
            for d in &degraded {
                let behaviour = OperatorBehaviour {
                    degrade: Some(Degrade {
                        after: SimDuration::default(),
                        reason: d.reason.clone(),
                        message: d.message.clone(),
                    }),
                    ..OperatorBehaviour::default()
                };
                scenario.operators.insert(d.name.clone(), behaviour);
            }
        }
        let mut ops = OperatorSimConfig::with_payloads(std::slice::from_ref(&opts.payload))?
            .speed(opts.speed)
            .with_scenario(scenario);
        ops.clock = clock.clone();
        let operators = crate::sim::operators::spawn(sim.clone(), ops);
        // The request, as `oc adm upgrade --to-image IMAGE --force` would write it.
        let name = cv.metadata.name.clone().unwrap_or_else(|| "version".into());
        let mut obj = sim
            .get("config.openshift.io", "clusterversions", "", &name)
            .context("the simulator lost the ClusterVersion")?;
        obj["spec"]["desiredUpdate"] = json!({"version": version, "image": opts.image, "force": true});
        sim.replace(obj)
            .map_err(|e| anyhow::anyhow!("simulated ClusterVersion: {}", e.message))?;
        let client = kube::Client::new(sim.clone(), "default");
        let informers = crate::informers::Informers::new(client.clone());
        let mut timings = super::demo::engine_timings(opts.speed);
        timings.clock = clock.clone();
        let cfg = EngineConfig {
            create_cluster_version: false,
            cluster_version_name: name,
            timings,
            informers: Some(informers.clone()),
            ..EngineConfig::new(Arc::new(LocalPayloads {
                own_image: opts.image.clone(),
                own_dir: opts.payload.clone(),
                others: BTreeMap::new(),
            }))
        };
        let engine = Engine::spawn(client, cfg);
        Ok(Self {
            start: clock.now(),
            sim,
            engine,
            operators,
            clock,
            before,
            version,
            image: opts.image.clone(),
            preconditions,
            degraded,
            assume_recovery: opts.assume_recovery,
            tracked,
            collected: Arc::new(Mutex::new(Collected::default())),
            informers,
        })
    }

    /// Follows the engine until the target is Completed and every pool updated, or
    /// `timeout`, keeping the engine's last snapshot in [`Rehearsal::collected`].
    pub async fn follow(&self, timeout: Duration) {
        follow(
            self.engine.status.clone(),
            self.sim.clone(),
            self.version.clone(),
            self.collected.clone(),
            timeout,
            self.held(),
        )
        .await;
    }

    /// The operators kept Degraded, for [`follow`].
    pub fn held(&self) -> Held {
        Held {
            clock: self.clock.clone(),
            operators: if self.assume_recovery {
                Vec::new()
            } else {
                self.degraded.iter().map(|d| d.name.clone()).collect()
            },
        }
    }

    /// The report of what was collected so far.
    pub async fn report(&self) -> Report {
        let after =
            crate::cluster::live::fetch_state(&kube::Client::new(self.sim.clone(), "default"), "rehearsal")
                .await
                .ok();
        let c = self.collected.lock().map(|c| c.clone()).unwrap_or_default();
        let cv = self.before.cluster_version.clone().unwrap_or_default();
        let changes = changes(&self.sim, &self.tracked);
        let total = c.last.as_ref().map_or(0, |s| s.total);
        let mut r = Report {
            from_version: cv.status.desired.version.clone(),
            to_version: self.version.clone(),
            to_image: self.image.clone(),
            preconditions: self.preconditions.0.clone(),
            refusal: self.preconditions.1.clone(),
            degraded: self.degraded.clone(),
            assume_recovery: self.assume_recovery,
            manifests: report::group_manifests(&changes),
            payload_manifests: total,
            risks: report::risks_for(&cv, &self.version, &self.image),
            estimate: report::estimate(&cv, changes.len(), total),
            ..Report::default()
        };
        if let Some(after) = &after {
            r.operators = operator_rolls(&self.before, after);
            r.pools = pool_rolls(&self.before, after);
        }
        r.outcome = report::Outcome {
            completed: c.completed,
            simulated_secs: (self.clock.now() - self.start).num_milliseconds() as f64 / 1000.0,
            done: c.last.as_ref().map_or(0, |s| s.done),
            total,
            stuck: if c.completed {
                None
            } else if c.stalled
                && let Some(names) = self.waiting_on_held(after.as_ref())
            {
                Some(format!(
                    "waiting on {names}: Degraded in the snapshot and kept Degraded (the cluster's CVO would wait on {} and report Failing, ClusterOperatorDegraded, after 40 min; --assume-recovery rehearses {} recovering)",
                    if names.contains(',') { "them" } else { "it" },
                    if names.contains(',') { "them" } else { "it" },
                ))
            } else {
                c.last.as_deref().map(|s| stuck(s, &self.version))
            },
            stalled: c.stalled,
        };
        r
    }

    /// The operators kept Degraded that have not reached the target in `after`, joined with
    /// `, ` (`None`: none, or they may recover).
    fn waiting_on_held(&self, after: Option<&ClusterState>) -> Option<String> {
        let after = after?;
        let held = self.held().operators;
        let names: Vec<&str> = after
            .cluster_operators
            .iter()
            .filter(|c| operator_version(c) != self.version)
            .filter_map(|c| c.metadata.name.as_deref())
            .filter(|n| held.iter().any(|h| h == n))
            .collect();
        (!names.is_empty()).then(|| names.join(", "))
    }

    /// Stops the engine and the simulated operators.
    pub async fn stop(self) {
        self.engine.shutdown().await;
        self.operators.shutdown();
    }
}

/// The `operator` version of a ClusterOperator (empty when it reports none).
fn operator_version(co: &crate::openshift::ClusterOperator) -> String {
    co.status
        .versions
        .iter()
        .find(|v| v.name == "operator")
        .map(|v| v.version.clone())
        .unwrap_or_default()
}

/// The ClusterOperators `Degraded=True` in `state`, by name, with the condition's reason and
/// message on one line.
pub fn degraded_operators(state: &ClusterState) -> Vec<report::DegradedOperator> {
    let mut out: Vec<report::DegradedOperator> = state
        .cluster_operators
        .iter()
        .filter_map(|co| {
            let c = co.condition("Degraded").filter(|c| c.is_true())?;
            Some(report::DegradedOperator {
                name: co.metadata.name.clone().unwrap_or_default(),
                reason: c.reason().to_string(),
                message: c.message().split_whitespace().collect::<Vec<_>>().join(" "),
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The ClusterOperators whose `operator` version differs after the rehearsal (or that are new).
pub fn operator_rolls(before: &ClusterState, after: &ClusterState) -> Vec<report::OperatorRoll> {
    let old: BTreeMap<String, String> = before
        .cluster_operators
        .iter()
        .map(|c| (c.metadata.name.clone().unwrap_or_default(), operator_version(c)))
        .collect();
    let mut out: Vec<report::OperatorRoll> = after
        .cluster_operators
        .iter()
        .filter_map(|c| {
            let name = c.metadata.name.clone().unwrap_or_default();
            let from = old.get(&name).cloned().unwrap_or_default();
            let to = operator_version(c);
            (from != to).then_some(report::OperatorRoll { name, from, to })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

const CURRENT_CONFIG: &str = "machineconfiguration.openshift.io/currentConfig";

/// Whether `node` carries every label of the pool's `spec.nodeSelector.matchLabels`.
fn in_pool(pool: &Value, node: &k8s_openapi::api::core::v1::Node) -> bool {
    let Some(want) = pool["spec"]["nodeSelector"]["matchLabels"].as_object() else {
        return false;
    };
    let labels = node.metadata.labels.clone().unwrap_or_default();
    !want.is_empty()
        && want
            .iter()
            .all(|(k, v)| labels.get(k).map(String::as_str) == Some(v.as_str().unwrap_or_default()))
}

/// The pools whose configuration changed, with the nodes whose `currentConfig` changed.
pub fn pool_rolls(before: &ClusterState, after: &ClusterState) -> Vec<report::PoolRoll> {
    let cfg = |n: &k8s_openapi::api::core::v1::Node| {
        n.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(CURRENT_CONFIG).cloned())
            .unwrap_or_default()
    };
    let old_nodes: BTreeMap<String, String> = before
        .nodes
        .iter()
        .map(|n| (n.metadata.name.clone().unwrap_or_default(), cfg(n)))
        .collect();
    let old_pools: BTreeMap<String, String> = before
        .machine_config_pools
        .iter()
        .map(|p| (p.metadata.name.clone().unwrap_or_default(), pool_config(p)))
        .collect();
    let mut out = Vec::new();
    for p in &after.machine_config_pools {
        let name = p.metadata.name.clone().unwrap_or_default();
        let v = serde_json::to_value(p).unwrap_or_default();
        let mut rebooted: Vec<String> = after
            .nodes
            .iter()
            .filter(|n| in_pool(&v, n))
            .filter(|n| {
                let nn = n.metadata.name.clone().unwrap_or_default();
                old_nodes.get(&nn).is_some_and(|c| *c != cfg(n))
            })
            .filter_map(|n| n.metadata.name.clone())
            .collect();
        rebooted.sort();
        let changed = old_pools.get(&name).is_some_and(|c| *c != pool_config(p));
        if !changed && rebooted.is_empty() {
            continue;
        }
        let nodes = v["status"]["machineCount"].as_u64().unwrap_or(0) as usize;
        let updated =
            crate::openshift::condition::find(&p.status.conditions, "Updated").is_some_and(|c| c.is_true());
        out.push(report::PoolRoll {
            name,
            rebooted,
            nodes,
            updated,
        });
    }
    out
}

fn pool_config(p: &crate::openshift::MachineConfigPool) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v["spec"]["configuration"]["name"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Where the rehearsal stands when it did not complete: Failing, the engine's failure, the
/// payload error, or the run level the pass is at.
pub fn stuck(s: &StatusSnapshot, version: &str) -> String {
    if let Some(e) = &s.payload_error {
        return format!("the target release cannot be used: {e}");
    }
    if s.desired.as_ref().is_none_or(|d| d.version != version) {
        return format!("the engine never took up {version}");
    }
    if let Some((r, m)) = s.failing() {
        return if r.is_empty() { m } else { format!("{r}: {m}") };
    }
    if let Some(f) = &s.failure {
        return format!("{}: {}", f.reason, f.message);
    }
    if s.done == 0 && s.run_levels.iter().all(|r| r.done == 0) {
        return "the rehearsal ended before the engine's first pass applied anything".into();
    }
    let level = s
        .run_levels
        .iter()
        .find(|r| r.done + r.skipped + r.failed < r.total)
        .map(|r| {
            format!(
                "run level {}: {}/{} done",
                r.level.map(|l| format!("{l:02}")).unwrap_or_else(|| "--".into()),
                r.done,
                r.total
            )
        });
    match level {
        Some(l) => l,
        None if s.is_completed() => "the ClusterVersion completed; pools still rolling".into(),
        None => "waiting for ClusterOperators to report the new versions".into(),
    }
}

/// The task index of a drift record's task text, `... (I of N)`.
/// One object the target payload names, with its copy in the simulator before the rehearsal.
#[derive(Clone, Debug)]
struct Tracked {
    api_version: String,
    kind: String,
    namespace: String,
    name: String,
    /// `Kind ns/name` (`group/Kind` outside the core group), as the drift records name it.
    object: String,
    run_level: Option<u32>,
    component: Option<String>,
    before: Option<Value>,
}

/// The simulator's copy of an object, if its kind is served and it exists.
fn lookup(sim: &Simulator, api_version: &str, kind: &str, ns: &str, name: &str) -> Option<Value> {
    let t = sim.find_kind(api_version, kind)?;
    sim.get(&t.group, &t.plural, ns, name)
}

/// Every object the payload in `dir` names (once, in payload order; all of them, whether or
/// not the cluster's profile and capabilities include them: an object nothing touches
/// compares equal), with its copy in `sim` now.
///
/// # Errors
/// The payload does not load.
fn track(sim: &Simulator, dir: &Path) -> anyhow::Result<Vec<Tracked>> {
    let loaded = crate::reconcile::payload::load::load_dir(dir, &Default::default())
        .map_err(|e| anyhow::anyhow!("--payload {}: {e}", dir.display()))?;
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for m in &loaded.manifests {
        let id = &m.id;
        let kind = if id.group.is_empty() {
            id.kind.clone()
        } else {
            format!("{}/{}", id.group, id.kind)
        };
        let object = if id.namespace.is_empty() {
            format!("{kind} {}", id.name)
        } else {
            format!("{kind} {}/{}", id.namespace, id.name)
        };
        if !seen.insert(object.clone()) {
            continue;
        }
        let api_version = if m.group.is_empty() {
            m.version.clone()
        } else {
            format!("{}/{}", m.group, m.version)
        };
        let level = crate::reconcile::payload::task_graph::run_level_and_component(&m.file);
        out.push(Tracked {
            before: lookup(sim, &api_version, &id.kind, &id.namespace, &id.name),
            api_version,
            kind: id.kind.clone(),
            namespace: id.namespace.clone(),
            name: id.name.clone(),
            object,
            run_level: level.as_ref().map(|l| l.0),
            component: level.map(|l| l.1),
        });
    }
    Ok(out)
}

/// An object without what the server and the controllers write (`status`, `resourceVersion`,
/// `managedFields`, `generation`, `uid`, `creationTimestamp`): what a manifest sets.
fn desired_part(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("status");
        if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in [
                "resourceVersion",
                "managedFields",
                "generation",
                "uid",
                "creationTimestamp",
                "selfLink",
            ] {
                m.remove(k);
            }
        }
    }
    v
}

/// What happened to each tracked object between the snapshot and `sim` now: created (absent
/// before), deleted (absent now), changed ([`desired_part`] differs); unchanged objects are
/// left out.
fn changes(sim: &Simulator, tracked: &[Tracked]) -> Vec<ManifestChange> {
    tracked
        .iter()
        .filter_map(|t| {
            let after = lookup(sim, &t.api_version, &t.kind, &t.namespace, &t.name);
            let change = match (&t.before, &after) {
                (None, Some(_)) => Change::Created,
                (Some(_), None) => Change::Deleted,
                (Some(b), Some(a)) if desired_part(b) != desired_part(a) => Change::Changed,
                _ => return None,
            };
            Some(ManifestChange {
                run_level: t.run_level,
                component: t.component.clone(),
                object: t.object.clone(),
                change,
            })
        })
        .collect()
}

fn pools_updated(sim: &Simulator) -> bool {
    sim.list_objects("machineconfiguration.openshift.io", "machineconfigpools")
        .iter()
        .all(|p| {
            p["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Updated" && c["status"] == "True")
        })
}

/// Follows `status` until the target `version` is Completed and every pool Updated, or
/// `timeout`, keeping the last snapshot and whether it was Completed in `into`.
pub async fn follow(
    mut status: tokio::sync::watch::Receiver<Arc<StatusSnapshot>>,
    sim: Simulator,
    version: String,
    into: Arc<Mutex<Collected>>,
    timeout: Duration,
    held: Held,
) {
    let deadline = tokio::time::Instant::now() + timeout;
    // (tasks done, operators at the target) and when it last changed, in simulated time.
    let mut progress: Option<((usize, usize), chrono::DateTime<chrono::Utc>)> = None;
    loop {
        let s = status.borrow_and_update().clone();
        let done = s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == version);
        if let Ok(mut c) = into.lock() {
            c.completed |= done;
            c.last = Some(s.clone());
        }
        if done && pools_updated(&sim) {
            return;
        }
        if !done && !held.operators.is_empty() {
            let (at_target, held_behind) = operators_at(&sim, &version, &held.operators);
            let now = held.clock.now();
            let key = (s.done, at_target);
            match progress {
                Some((k, _)) if k != key => progress = Some((key, now)),
                None => progress = Some((key, now)),
                Some((_, since)) => {
                    let still = (now - since).to_std().unwrap_or_default();
                    if held_behind && still >= STALL_AFTER {
                        if let Ok(mut c) = into.lock() {
                            c.stalled = true;
                        }
                        return;
                    }
                }
            }
        }
        tokio::select! {
            r = status.changed() => if r.is_err() { return },
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
            () = tokio::time::sleep_until(deadline) => return,
        }
        if tokio::time::Instant::now() >= deadline {
            return;
        }
    }
}

/// How many ClusterOperators in `sim` report `version` as their `operator` version, and
/// whether one of `held` does not.
fn operators_at(sim: &Simulator, version: &str, held: &[String]) -> (usize, bool) {
    let (mut at, mut behind) = (0, false);
    sim.for_each_object("config.openshift.io", "clusteroperators", |co| {
        let reached = co["status"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|v| v["name"] == "operator" && v["version"] == version);
        if reached {
            at += 1;
        } else if held.iter().any(|h| co["metadata"]["name"] == h.as_str()) {
            behind = true;
        }
    });
    (at, behind)
}

/// Runs a rehearsal to its end (or the timeout) and returns the report; with `tui`, the
/// dashboard shows the simulated cluster meanwhile and the report is of what was reached when
/// it quits (or when the rehearsal ended, whichever is later).
///
/// # Errors
/// See [`Rehearsal::start`]; the dashboard's terminal errors.
pub async fn run(opts: &RehearseOptions, tui: bool) -> anyhow::Result<Report> {
    let r = Rehearsal::start(opts).await?;
    if tui {
        dashboard(&r, opts.timeout).await?;
    } else {
        r.follow(opts.timeout).await;
    }
    let report = r.report().await;
    r.stop().await;
    Ok(report)
}

/// The dashboard on the rehearsal's simulated cluster, its engine and clock, while the
/// rehearsal is followed in the background.
#[cfg(feature = "tui")]
async fn dashboard(r: &Rehearsal, timeout: Duration) -> anyhow::Result<()> {
    let follower = tokio::spawn(follow(
        r.engine.status.clone(),
        r.sim.clone(),
        r.version.clone(),
        r.collected.clone(),
        timeout,
        r.held(),
    ));
    let shown = crate::ui::run(crate::ui::UiOptions {
        feed: crate::cluster::live::watch_state_from(&r.informers, "rehearsal".into()),
        alerts: None,
        now: None,
        engine: Some(r.engine.clone()),
        requests: None,
        read_only: true,
        clock: r.clock.clone(),
        release_source: None,
        banner: Some(REHEARSAL_HEADER.into()),
        back_leaves: false,
    })
    .await;
    follower.abort();
    shown
}

/// Without the `tui` feature there is no dashboard.
#[cfg(not(feature = "tui"))]
async fn dashboard(_r: &Rehearsal, _timeout: Duration) -> anyhow::Result<()> {
    anyhow::bail!("this cvo is built without the dashboard (feature `tui`)")
}

/// What the dashboard's header says during a rehearsal.
pub const REHEARSAL_HEADER: &str = "rehearsal: nothing is written to your cluster";

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(name: &str, value: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": "default"}, "data": {"a": value}})
    }

    #[test]
    fn stuck_says_where_the_rehearsal_stood() {
        let target = crate::openshift::Release {
            version: "4.16.4".into(),
            ..Default::default()
        };
        let mut s = StatusSnapshot::default();
        assert_eq!(stuck(&s, "4.16.4"), "the engine never took up 4.16.4");
        s.desired = Some(target);
        assert_eq!(
            stuck(&s, "4.16.4"),
            "the rehearsal ended before the engine's first pass applied anything"
        );
        s.done = 40;
        s.run_levels = vec![crate::reconcile::api::RunLevelProgress {
            level: Some(12),
            done: 7,
            total: 9,
            ..Default::default()
        }];
        assert_eq!(stuck(&s, "4.16.4"), "run level 12: 7/9 done");
    }

    #[test]
    fn changes_compare_the_snapshot_with_the_end_outside_status_and_server_fields() {
        let sim = Simulator::new();
        sim.add_system_namespaces().expect("namespaces");
        for name in ["kept", "rewritten", "changed", "gone"] {
            sim.insert(cm(name, "1")).expect("insert");
        }
        let tracked: Vec<Tracked> = ["kept", "rewritten", "changed", "gone", "new"]
            .iter()
            .map(|name| Tracked {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "default".into(),
                name: (*name).into(),
                object: format!("ConfigMap default/{name}"),
                run_level: Some(50),
                component: Some("x".into()),
                before: lookup(&sim, "v1", "ConfigMap", "default", name),
            })
            .collect();
        assert!(tracked[4].before.is_none() && tracked[0].before.is_some());
        // The same content written again moves only resourceVersion and managedFields.
        let mut same = sim
            .get("", "configmaps", "default", "rewritten")
            .expect("rewritten");
        same["data"]["a"] = json!("1");
        sim.replace(same).expect("replace");
        let mut other = sim.get("", "configmaps", "default", "changed").expect("changed");
        other["data"]["a"] = json!("2");
        sim.replace(other).expect("replace");
        let gone = sim.get("", "configmaps", "default", "gone").expect("gone");
        sim.remove(&gone).expect("remove");
        sim.insert(cm("new", "1")).expect("insert");
        let got: Vec<(String, Change)> = changes(&sim, &tracked)
            .into_iter()
            .map(|c| (c.object, c.change))
            .collect();
        assert_eq!(
            got,
            [
                ("ConfigMap default/changed".to_string(), Change::Changed),
                ("ConfigMap default/gone".to_string(), Change::Deleted),
                ("ConfigMap default/new".to_string(), Change::Created),
            ]
        );
    }
}
