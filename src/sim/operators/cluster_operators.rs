//! The cluster operators: once an operator's Deployment runs a new release, its
//! ClusterOperator goes Progressing, then after the operator's delay reports the release's
//! versions (what upstream `pkg/cvo/internal/operatorstatus.go` waits for).

use std::{collections::BTreeMap, time::Duration};

use rand::{Rng, SeedableRng, rngs::StdRng};

use serde_json::{Value, json};
use tokio::time::Instant;

use super::json::{condition, earliest, fnv, set_condition, str_at};
use super::mco;
use super::workloads::rolled_out;
use super::{OpWork, State};
use crate::sim::Simulator;

/// The `operator` entry of a ClusterOperator's `status.versions` (empty when absent).
pub(super) fn operator_version(co: &Value) -> &str {
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
    pub(super) fn operators(&mut self, sim: &Simulator, now: Instant) -> Option<Instant> {
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
