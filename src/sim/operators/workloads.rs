//! The kubelet and the workload controllers: Deployments, DaemonSets and StatefulSets roll
//! out (or crash-loop), Jobs complete.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::State;
use super::json::{condition, earliest, int_at, now_str, set_condition, str_at};
use crate::sim::Simulator;

impl State {
    /// Deployments, DaemonSets, StatefulSets and Jobs.
    pub(super) fn workloads(&mut self, sim: &Simulator, now: Instant) -> Option<Instant> {
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

/// Whether a Deployment's current generation is rolled out and available.
pub(super) fn rolled_out(d: &Value) -> bool {
    let gen_ = int_at(d, "/metadata/generation").unwrap_or(1);
    let want = int_at(d, "/spec/replicas").unwrap_or(1);
    int_at(d, "/status/observedGeneration") == Some(gen_)
        && int_at(d, "/status/updatedReplicas").unwrap_or(0) >= want
        && int_at(d, "/status/availableReplicas").unwrap_or(0) >= want
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
