//! The machine-config part of the simulated operators: the render controller (a new rendered
//! MachineConfig per pool for the new release), the node controller (one node at a time per
//! pool, `maxUnavailable` 1) and the machine-config daemon on each node (drain, reboot, done),
//! with the pool status the MCO reports. Upstream: openshift/machine-config-operator
//! `pkg/controller/render`, `pkg/controller/node` (`getAllCandidateMachines`, pool status in
//! `status.go`), `pkg/daemon` (the `machineconfiguration.openshift.io/state` annotation:
//! Working → Done; `desiredDrain`/`lastAppliedDrain` `drain-`/`uncordon-` prefixes).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::State;
use super::json::{earliest, fnv, int_at, set_condition, str_at};
use crate::sim::Simulator;

const MCO_GROUP: &str = "machineconfiguration.openshift.io";
const ANN: &str = "machineconfiguration.openshift.io/";
/// The rendered config's release annotation (what `cvo status` reads for node versions).
const RELEASE_ANN: &str = "machineconfiguration.openshift.io/release-image-version";

/// Machine-config progress kept between passes.
#[derive(Clone, Debug, Default)]
pub struct Mco {
    /// The release the operator has finished its own work for: pools are rolled to it.
    pub target: Option<String>,
    /// Node name -> when its current phase (drain or reboot) ends.
    timers: BTreeMap<String, Instant>,
}

fn mc_version(sim: &Simulator, name: &str) -> Option<String> {
    let mc = sim.get(MCO_GROUP, "machineconfigs", "", name)?;
    mc["metadata"]["annotations"][RELEASE_ANN]
        .as_str()
        .map(str::to_owned)
}

/// Whether the `master` pool is fully updated to a rendered config of `version`.
pub fn master_updated(sim: &Simulator, version: &str) -> bool {
    let Some(p) = sim.get(MCO_GROUP, "machineconfigpools", "", "master") else {
        return true;
    };
    let spec = str_at(&p, "/spec/configuration/name");
    str_at(&p, "/status/configuration/name") == spec
        && mc_version(sim, spec).as_deref() == Some(version)
        && int_at(&p, "/status/updatedMachineCount") == int_at(&p, "/status/machineCount")
}

fn matches(selector: &Value, labels: &Value) -> bool {
    let Some(ml) = selector["matchLabels"].as_object() else {
        return false;
    };
    ml.iter().all(|(k, v)| &labels[k] == v)
}

fn ann<'a>(node: &'a Value, key: &str) -> &'a str {
    node["metadata"]["annotations"][format!("{ANN}{key}")]
        .as_str()
        .unwrap_or_default()
}

fn ready(node: &Value) -> bool {
    node["status"]["conditions"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["type"] == "Ready"))
        .is_some_and(|c| c["status"] == "True")
}

/// Renders new configs when the operator is done, then moves nodes and pool status.
pub(crate) fn pass(st: &mut State, sim: &Simulator, now: Instant) -> Option<Instant> {
    if let Some(target) = st.mco.target.clone() {
        render(st, sim, &target);
    }
    let mut next = None;
    let nodes = sim.list_objects("", "nodes");
    for pool in sim.list_objects(MCO_GROUP, "machineconfigpools") {
        let members: Vec<&Value> = nodes
            .iter()
            .filter(|n| matches(&pool["spec"]["nodeSelector"], &n["metadata"]["labels"]))
            // master first: a node in both pools belongs to master.
            .filter(|n| {
                pool["metadata"]["name"] == "master"
                    || !n["metadata"]["labels"]
                        .as_object()
                        .is_some_and(|l| l.contains_key("node-role.kubernetes.io/master"))
            })
            .collect();
        let cfg = str_at(&pool, "/spec/configuration/name").to_owned();
        if cfg.is_empty() {
            continue;
        }
        if !pool["spec"]["paused"].as_bool().unwrap_or(false)
            && let Some(t) = nodes_pass(st, sim, &members, &cfg, now)
        {
            next = earliest(next, t);
        }
        pool_status(st, sim, &pool, &members, &cfg);
    }
    next
}

/// A new rendered MachineConfig of `target` for each pool whose config is of another release.
fn render(st: &mut State, sim: &Simulator, target: &str) {
    for mut pool in sim.list_objects(MCO_GROUP, "machineconfigpools") {
        let pname = str_at(&pool, "/metadata/name").to_owned();
        let cur = str_at(&pool, "/spec/configuration/name").to_owned();
        if mc_version(sim, &cur).as_deref() == Some(target) {
            continue;
        }
        let h1 = fnv(&[&pname, target, "a"]);
        let h2 = fnv(&[&pname, target, "b"]);
        let name = format!("rendered-{pname}-{h1:016x}{h2:016x}");
        if sim.get(MCO_GROUP, "machineconfigs", "", &name).is_none() {
            let spec = sim
                .get(MCO_GROUP, "machineconfigs", "", &cur)
                .map(|m| m["spec"].clone())
                .unwrap_or_else(|| json!({"config": {"ignition": {"version": "3.4.0"}}}));
            let mc = json!({
                "apiVersion": "machineconfiguration.openshift.io/v1",
                "kind": "MachineConfig",
                "metadata": {
                    "name": name,
                    "labels": {"machineconfiguration.openshift.io/role": pname},
                    "annotations": {
                        RELEASE_ANN: target,
                        "machineconfiguration.openshift.io/generated-by-controller-version": format!("sim-{target}"),
                    },
                    "ownerReferences": [{
                        "apiVersion": "machineconfiguration.openshift.io/v1",
                        "kind": "MachineConfigPool",
                        "name": pname,
                        "uid": str_at(&pool, "/metadata/uid"),
                        "controller": true,
                    }],
                },
                "spec": spec,
            });
            if let Err(e) = sim.insert(mc) {
                tracing::debug!(target: "sim_operators", "machineconfig {name}: {e}");
                continue;
            }
        }
        pool["spec"]["configuration"]["name"] = json!(name);
        pool["spec"]["configuration"]["source"] = Value::Null;
        if let Some(m) = pool["spec"]["configuration"].as_object_mut() {
            m.remove("source");
        }
        match sim.replace(pool) {
            Ok(_) => st.event(format!("machineconfigpool {pname}: rendered {name} for {target}")),
            Err(e) => tracing::debug!(target: "sim_operators", "machineconfigpool {pname}: {e}"),
        }
    }
}

/// Advances the nodes of one pool towards `cfg`; returns the next timer.
fn nodes_pass(
    st: &mut State,
    sim: &Simulator,
    members: &[&Value],
    cfg: &str,
    now: Instant,
) -> Option<Instant> {
    let mut next = None;
    let mut busy = 0;
    for n in members {
        let name = str_at(n, "/metadata/name").to_owned();
        if ann(n, "currentConfig") == cfg || ann(n, "desiredConfig") != cfg {
            continue;
        }
        busy += 1;
        let state = ann(n, "state").to_owned();
        let phase = if state == "Rebooting" {
            st.cfg.timings.node_reboot
        } else {
            st.cfg.timings.node_drain
        };
        let phase = st.scaled(phase);
        let at = *st.mco.timers.entry(name.clone()).or_insert(now + phase);
        if now < at {
            next = earliest(next, at);
            continue;
        }
        st.mco.timers.remove(&name);
        if state == "Rebooting" {
            finish_node(st, sim, n, cfg);
        } else {
            reboot_node(st, sim, n, cfg);
            let at = now + st.scaled(st.cfg.timings.node_reboot);
            st.mco.timers.insert(name, at);
            next = earliest(next, at);
        }
    }
    if busy == 0 {
        // maxUnavailable 1: start the next node, by name.
        let mut waiting: Vec<&&Value> = members
            .iter()
            .filter(|n| ann(n, "currentConfig") != cfg)
            .collect();
        waiting.sort_by_key(|n| str_at(n, "/metadata/name").to_owned());
        if let Some(n) = waiting.first() {
            let name = str_at(n, "/metadata/name").to_owned();
            start_node(st, sim, n, cfg);
            let at = now + st.scaled(st.cfg.timings.node_drain);
            st.mco.timers.insert(name, at);
            next = earliest(next, at);
        }
    }
    next
}

fn set_ann(n: &mut Value, key: &str, v: &str) {
    if !n["metadata"]["annotations"].is_object() {
        n["metadata"]["annotations"] = json!({});
    }
    n["metadata"]["annotations"][format!("{ANN}{key}")] = json!(v);
}

fn set_ready(sim: &Simulator, mut n: Value, ok: bool) -> Result<Value, crate::sim::ApiError> {
    let (status, reason, msg) = if ok {
        ("True", "KubeletReady", "kubelet is posting ready status")
    } else {
        (
            "False",
            "KubeletNotReady",
            "node is rebooting to apply the new machine config",
        )
    };
    set_condition(&mut n["status"]["conditions"], "Ready", status, reason, msg);
    sim.update_status(n)
}

/// Node controller + daemon: desired config set, cordoned, draining.
fn start_node(st: &mut State, sim: &Simulator, n: &Value, cfg: &str) {
    let mut n = (*n).clone();
    let name = str_at(&n, "/metadata/name").to_owned();
    set_ann(&mut n, "desiredConfig", cfg);
    set_ann(&mut n, "desiredDrain", &format!("drain-{cfg}"));
    set_ann(&mut n, "state", "Working");
    set_ann(&mut n, "reason", "");
    n["spec"]["unschedulable"] = json!(true);
    match sim.replace(n) {
        Ok(_) => st.event(format!("node {name}: draining for {cfg}")),
        Err(e) => tracing::debug!(target: "sim_operators", "node {name}: {e}"),
    }
}

/// Drained: rebooting, not ready.
fn reboot_node(st: &mut State, sim: &Simulator, n: &Value, cfg: &str) {
    let mut n = (*n).clone();
    let name = str_at(&n, "/metadata/name").to_owned();
    set_ann(&mut n, "lastAppliedDrain", &format!("drain-{cfg}"));
    set_ann(&mut n, "state", "Rebooting");
    match sim.replace(n).and_then(|n| set_ready(sim, n, false)) {
        Ok(_) => st.event(format!("node {name}: rebooting into {cfg}")),
        Err(e) => tracing::debug!(target: "sim_operators", "node {name}: {e}"),
    }
}

/// Back up at the new config: uncordoned, ready, Done.
fn finish_node(st: &mut State, sim: &Simulator, n: &Value, cfg: &str) {
    let mut n = (*n).clone();
    let name = str_at(&n, "/metadata/name").to_owned();
    set_ann(&mut n, "currentConfig", cfg);
    set_ann(&mut n, "state", "Done");
    set_ann(&mut n, "desiredDrain", &format!("uncordon-{cfg}"));
    set_ann(&mut n, "lastAppliedDrain", &format!("uncordon-{cfg}"));
    if let Some(s) = n["spec"].as_object_mut() {
        s.remove("unschedulable");
    }
    match sim.replace(n).and_then(|n| set_ready(sim, n, true)) {
        Ok(_) => st.event(format!("node {name}: updated to {cfg}")),
        Err(e) => tracing::debug!(target: "sim_operators", "node {name}: {e}"),
    }
}

/// The pool's counters and conditions from its nodes (fresh from the store).
fn pool_status(st: &mut State, sim: &Simulator, pool: &Value, members: &[&Value], cfg: &str) {
    let fresh: Vec<Value> = members
        .iter()
        .filter_map(|n| sim.get("", "nodes", "", str_at(n, "/metadata/name")))
        .collect();
    let total = fresh.len() as i64;
    let updated = fresh
        .iter()
        .filter(|n| {
            ann(n, "currentConfig") == cfg && ann(n, "desiredConfig") == cfg && ann(n, "state") == "Done"
        })
        .count() as i64;
    let unschedulable = |n: &Value| n["spec"]["unschedulable"].as_bool().unwrap_or(false);
    let ready_count = fresh
        .iter()
        .filter(|n| {
            ann(n, "currentConfig") == cfg && ann(n, "state") == "Done" && ready(n) && !unschedulable(n)
        })
        .count() as i64;
    let unavailable = fresh
        .iter()
        .filter(|n| !ready(n) || unschedulable(n) || ann(n, "currentConfig") != ann(n, "desiredConfig"))
        .count() as i64;
    let mut s = pool["status"].clone();
    if !s.is_object() {
        s = json!({});
    }
    s["machineCount"] = json!(total);
    s["updatedMachineCount"] = json!(updated);
    s["readyMachineCount"] = json!(ready_count);
    s["unavailableMachineCount"] = json!(unavailable);
    s["degradedMachineCount"] = json!(0);
    s["observedGeneration"] = json!(int_at(pool, "/metadata/generation").unwrap_or(1));
    let done = updated == total;
    if done {
        s["configuration"]["name"] = json!(cfg);
        set_condition(
            &mut s["conditions"],
            "Updated",
            "True",
            "",
            &format!("All nodes are updated with MachineConfig {cfg}"),
        );
        set_condition(&mut s["conditions"], "Updating", "False", "", "");
    } else {
        set_condition(&mut s["conditions"], "Updated", "False", "", "");
        set_condition(
            &mut s["conditions"],
            "Updating",
            "True",
            "",
            &format!("All nodes are updating to MachineConfig {cfg}"),
        );
    }
    if s != pool["status"] {
        let pname = str_at(pool, "/metadata/name").to_owned();
        let was_done = pool["status"]["conditions"]
            .as_array()
            .and_then(|l| l.iter().find(|c| c["type"] == "Updated"))
            .is_some_and(|c| c["status"] == "True");
        let mut p = pool.clone();
        p["status"] = s;
        // The pool object may be stale after render(): write status on the latest.
        if let Some(latest) = sim.get(MCO_GROUP, "machineconfigpools", "", &pname) {
            p["metadata"] = latest["metadata"].clone();
        }
        match sim.update_status(p) {
            Ok(_) if done && !was_done => st.event(format!("machineconfigpool {pname}: Updated ({cfg})")),
            Ok(_) => {}
            Err(e) => tracing::debug!(target: "sim_operators", "machineconfigpool {pname}: {e}"),
        }
    }
}
