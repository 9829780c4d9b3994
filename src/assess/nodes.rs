//! Nodes and MachineConfigPools: pool membership, per-node assessment, pool assessment and the
//! node / paused-pool insights (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go`,
//! `openshift/oc pkg/cli/admin/upgrade/status/mco/node.go`).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::durations::{MINUTE, between};
use super::{
    Impact, Insight, Level, NodeAssessment, NodeAssessmentState, NodePhase, PoolAssessment,
    PoolAssessmentState, Resource,
};
use crate::openshift::{ClusterVersion, MachineConfig, MachineConfigPool, time_to_chrono};

const PREFIX: &str = "machineconfiguration.openshift.io/";
/// `https://docs.openshift.com/...#understanding-the-machine-config-operator`.
pub const REF_MCO: &str = "https://docs.openshift.com/container-platform/latest/post_installation_configuration/machine-configuration-tasks.html#understanding-the-machine-config-operator";
/// Docs on pausing pools.
pub const REF_PAUSE: &str = "https://docs.openshift.com/container-platform/latest/support/troubleshooting/troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues";

/// Whether `labels` match `selector` with Kubernetes label-selector semantics
/// (`k8s.io/apimachinery metav1.LabelSelectorAsSelector`): `None` matches nothing, an empty
/// selector matches everything.
pub fn selector_matches(selector: Option<&LabelSelector>, labels: &BTreeMap<String, String>) -> bool {
    let Some(sel) = selector else { return false };
    if let Some(ml) = &sel.match_labels
        && ml.iter().any(|(k, v)| labels.get(k) != Some(v))
    {
        return false;
    }
    for req in sel.match_expressions.iter().flatten() {
        let values = req.values.as_deref().unwrap_or_default();
        let val = labels.get(&req.key);
        let ok = match req.operator.as_str() {
            "In" => val.is_some_and(|v| values.contains(v)),
            "NotIn" => val.is_none_or(|v| !values.contains(v)),
            "Exists" => val.is_some(),
            "DoesNotExist" => val.is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Assigns each node to a pool: `master` first, then custom pools in list order, then `worker`
/// (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go` `whichPool`). Returns, per pool
/// index, the node indices in node-list order.
pub fn assign_nodes(pools: &[MachineConfigPool], nodes: &[Node]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); pools.len()];
    let empty = BTreeMap::new();
    let order: Vec<usize> = {
        let master = pools.iter().position(|p| p.name() == "master");
        let worker = pools.iter().position(|p| p.name() == "worker");
        let custom = (0..pools.len()).filter(|&i| Some(i) != master && Some(i) != worker);
        master.into_iter().chain(custom).chain(worker).collect()
    };
    for (ni, node) in nodes.iter().enumerate() {
        let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
        if let Some(&pi) = order
            .iter()
            .find(|&&pi| selector_matches(pools[pi].spec.node_selector.as_ref(), labels))
        {
            out[pi].push(ni);
        }
    }
    out
}

/// `ver(mcName)`: the release version annotation of the MachineConfig named `name`.
fn mc_version<'a>(mcs: &'a [MachineConfig], name: Option<&str>) -> Option<&'a str> {
    let name = name?;
    let mc = mcs.iter().find(|m| m.metadata.name.as_deref() == Some(name))?;
    let v = mc
        .metadata
        .annotations
        .as_ref()?
        .get("machineconfiguration.openshift.io/release-image-version")?;
    (!v.is_empty()).then_some(v.as_str())
}

/// A "bad" node condition (`openshift/oc pkg/cli/admin/upgrade/status/mco/node.go`).
struct BadCondition {
    reason: String,
    message: String,
    time: Option<DateTime<Utc>>,
}

pub use crate::openshift::go_quote;

/// The whole result of assessing a pool: the row data plus its insights in generation order.
pub struct PoolResult {
    /// The pool and its sorted nodes.
    pub pool: PoolAssessment,
    /// Node insights (node-list order) then the paused-pool insight.
    pub insights: Vec<Insight>,
}

/// Inputs shared by every node assessment.
pub struct NodeContext<'a> {
    /// The ClusterVersion; `None` when there is none (the assessment then reports an error,
    /// but pools and nodes are still assessed, with no target version).
    pub cv: Option<&'a ClusterVersion>,
    /// MachineConfigs (for release versions).
    pub mcs: &'a [MachineConfig],
    /// The assessment instant.
    pub now: DateTime<Utc>,
    /// The clock the "serious unavailability" ages are measured against (`oc` uses the real
    /// wall clock here even in mock mode; see [`super::assess_with_wall_clock`]).
    pub wall_clock: DateTime<Utc>,
}

impl NodeContext<'_> {
    fn target0(&self) -> Option<&str> {
        self.cv?.status.history.first().map(|h| h.version.as_str())
    }

    /// cvo's addition for snapshots without MachineConfigs (must-gather, insights archives),
    /// where `oc` would call every node outdated at version `?` and the cluster updating: when
    /// the ClusterVersion is not Progressing, its newest history entry is Completed, and the
    /// node is settled on its pool's rendered config (`currentConfig == desiredConfig ==
    /// status.configuration.name`, `state: Done`), the node runs that completed version.
    /// `None` whenever MachineConfigs are known or any of that does not hold.
    fn settled_version_without_mcs(
        &self,
        pool: &MachineConfigPool,
        current: Option<&str>,
        desired: Option<&str>,
        state: &str,
    ) -> Option<&str> {
        if !self.mcs.is_empty() || state != "Done" || current.is_none() || current != desired {
            return None;
        }
        let cv = self.cv?;
        if cv.condition("Progressing").is_none_or(|c| c.is_true()) {
            return None;
        }
        let pool_config = pool.status.configuration.name.as_deref();
        if pool_config != current {
            return None;
        }
        let h0 = cv.status.history.first()?;
        (h0.state == crate::openshift::UpdateState::Completed && !h0.version.is_empty())
            .then_some(h0.version.as_str())
    }

    fn multi_arch_in_progress(&self) -> bool {
        let Some(cv) = self.cv else { return false };
        let h = &cv.status.history;
        h.len() > 1
            && h[0].version == h[1].version
            && h[0].image != h[1].image
            && cv.condition("Progressing").is_some_and(|c| c.is_true())
    }
}

/// Assesses one pool and its nodes (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go`
/// `assessNodesStatus`, `assessMachineConfigPool`).
pub fn assess_pool(ctx: &NodeContext<'_>, pool: &MachineConfigPool, nodes: &[&Node]) -> PoolResult {
    let mut insights = Vec::new();
    let mut rows = Vec::new();
    for node in nodes {
        let (row, mut ins) = assess_node(ctx, pool, node);
        insights.append(&mut ins);
        rows.push(row);
    }
    rows.sort_by(|a, b| {
        a.assessment
            .cmp(&b.assessment)
            .then(a.phase.cmp(&b.phase))
            .then_with(|| a.name.cmp(&b.name))
    });

    let mut p = PoolAssessment {
        name: pool.name().to_owned(),
        is_master: pool.name() == "master",
        paused: pool.spec.paused,
        total: rows.len(),
        ..Default::default()
    };
    for n in &rows {
        if !n.is_unavailable {
            p.available += 1;
        }
        if n.is_degraded {
            p.degraded += 1;
        }
        match n.phase {
            NodePhase::Paused => {
                p.excluded += 1;
                p.outdated += 1;
            }
            NodePhase::Pending => {
                p.pending += 1;
                p.outdated += 1;
            }
            NodePhase::Draining => {
                p.draining += 1;
                p.outdated += 1;
                if !n.is_degraded {
                    p.progressing += 1;
                }
            }
            NodePhase::Updating | NodePhase::Rebooting => {
                p.outdated += 1;
                if !n.is_degraded {
                    p.progressing += 1;
                }
            }
            NodePhase::Updated => p.updated += 1,
        }
    }
    p.assessment = if p.updated == p.total {
        PoolAssessmentState::Completed
    } else if p.pending == p.total {
        PoolAssessmentState::Pending
    } else if p.degraded > 0 {
        PoolAssessmentState::Degraded
    } else if p.excluded > 0 {
        PoolAssessmentState::Excluded
    } else {
        PoolAssessmentState::Progressing
    };
    if p.total == 0 {
        p.assessment = PoolAssessmentState::Empty;
        p.completion_percent = 100.0;
    } else {
        p.completion_percent = p.updated as f64 / p.total as f64 * 100.0;
    }
    if p.excluded > 0 && pool.spec.paused {
        insights.push(Insight {
            level: Level::Warning,
            impact: Impact::UpdateStalled,
            summary: format!("Outdated nodes in a paused pool '{}' will not be updated", p.name),
            description:
                "Pool is paused, which stops all changes to the nodes in the pool, including updates. \
                          The nodes will not be updated until the pool is unpaused by the administrator."
                    .to_owned(),
            reference: REF_PAUSE.to_owned(),
            resources: vec![Resource {
                kind: "machineconfigpools.machineconfiguration.openshift.io".to_owned(),
                name: p.name.clone(),
            }],
            ..Default::default()
        });
    }
    p.nodes = rows;
    PoolResult { pool: p, insights }
}

/// Assesses one node (`openshift/oc pkg/cli/admin/upgrade/status/workerpool.go` `assessNode`).
fn assess_node(
    ctx: &NodeContext<'_>,
    pool: &MachineConfigPool,
    node: &Node,
) -> (NodeAssessment, Vec<Insight>) {
    let name = node.metadata.name.clone().unwrap_or_default();
    let empty = BTreeMap::new();
    let ann = node.metadata.annotations.as_ref().unwrap_or(&empty);
    let get = |k: &str| ann.get(&format!("{PREFIX}{k}")).map(String::as_str);
    let current = get("currentConfig");
    let desired = get("desiredConfig");
    let state = get("state").unwrap_or("");
    let reason_ann = get("reason").unwrap_or("");

    let inferred = ctx.settled_version_without_mcs(pool, current, desired, state);
    let cur_ver = mc_version(ctx.mcs, current).or(inferred);
    let des_ver = mc_version(ctx.mcs, desired).or(inferred);
    let target0 = ctx.target0();
    let has_desired_key = desired.is_some();
    let matched = current.unwrap_or("") == desired.unwrap_or("");
    let pool_config = pool
        .spec
        .configuration
        .as_ref()
        .and_then(|c| c.name.as_deref())
        .unwrap_or("");
    let desired_is_pool = desired.unwrap_or("") == pool_config;
    let multi_arch = ctx.multi_arch_in_progress();

    let is_updated = cur_ver.is_some()
        && cur_ver == target0
        && (!multi_arch || !has_desired_key || (matched && desired_is_pool));
    let is_updating = !is_updated
        && cur_ver.is_some()
        && des_ver.is_some()
        && des_ver == target0
        && !matched
        && desired_is_pool;
    let is_degraded = !desired.unwrap_or("").is_empty() && matches!(state, "Degraded" | "Unreconcilable");

    // Unavailability (mco/node.go).
    let mut bad: Vec<BadCondition> = Vec::new();
    for c in node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
    {
        let reason = match (c.type_.as_str(), c.status.as_str()) {
            ("Ready", s) if s != "True" => "Not ready",
            ("DiskPressure", s) if s != "False" => "Disk pressure",
            ("NetworkUnavailable", s) if s != "False" => "Network unavailable",
            _ => continue,
        };
        bad.push(BadCondition {
            reason: reason.to_owned(),
            message: c.message.clone().unwrap_or_default(),
            time: c.last_transition_time.as_ref().map(time_to_chrono),
        });
    }
    if node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false) {
        bad.push(BadCondition {
            reason: "Node is marked unschedulable".into(),
            message: String::new(),
            time: None,
        });
    }
    let mut unavailable = !bad.is_empty();
    if !unavailable {
        let cur = current.unwrap_or("");
        let des = desired.unwrap_or("");
        let cur_img = get("currentImage");
        let des_img = get("desiredImage");
        let images_ok = (cur_img.is_none() && des_img.is_none())
            || matches!((cur_img, des_img), (Some(a), Some(b)) if !a.is_empty() && a == b);
        let done = !cur.is_empty() && cur == des && images_ok && state == "Done";
        if !done && !matches!(state, "Degraded" | "Unreconcilable") {
            bad.push(BadCondition {
                reason: "Machine Config Daemon is processing the node".into(),
                message: String::new(),
                time: None,
            });
            unavailable = true;
        }
    }
    // Desired-image check.
    let pool_labels = pool.metadata.labels.as_ref();
    let newest = pool
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("machineconfiguration.openshift.io/newestImageEquivalentConfig"))
        .map(String::as_str)
        .unwrap_or("");
    let layered = pool_labels
        .is_some_and(|l| l.contains_key("machineconfiguration.openshift.io/layering-enabled"))
        && !newest.is_empty();
    let desired_image = get("desiredImage").unwrap_or("");
    let image_ok = if layered {
        if desired_image == newest {
            true
        } else {
            bad.push(BadCondition {
                reason: format!(
                    "Node has an unexpected annotation machineconfiguration.openshift.io/newestImageEquivalentConfig={newest}"
                ),
                message: String::new(),
                time: None,
            });
            false
        }
    } else {
        desired_image.is_empty()
    };
    let is_unavailable = unavailable && image_ok;

    let unav_reason = bad
        .iter()
        .map(|b| b.reason.as_str())
        .collect::<Vec<_>>()
        .join(" | ");
    let unav_summary = bad
        .iter()
        .map(|b| match b.reason.as_str() {
            "Not ready" => format!("Node {name} is not ready"),
            "Disk pressure" => format!("Node {name} has disk pressure"),
            "Network unavailable" => format!("Node {name} has unavailable network"),
            r => r.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" | ");
    let unav_desc = bad
        .iter()
        .map(|b| match b.reason.as_str() {
            "Not ready" => format!(
                "Node has a Ready!=True condition with Reason \"Not ready\" and message {}",
                go_quote(&b.message)
            ),
            "Disk pressure" => format!(
                "Node has a DiskPressure!=False condition with Reason \"Disk pressure\" and message {}",
                go_quote(&b.message)
            ),
            "Network unavailable" => format!(
                "Node has a NetworkUnavailable!=False condition with Reason \"Network unavailable\" and message {}",
                go_quote(&b.message)
            ),
            r => r.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" | ");
    let unav_since = bad.iter().filter_map(|b| b.time).min();
    let serious = bad.iter().any(|b| {
        let age = b.time.map(|t| between(ctx.wall_clock, t)).unwrap_or(i64::MAX);
        match b.reason.as_str() {
            "Node is marked unschedulable" | "Machine Config Daemon is processing the node" => false,
            "Not ready" => age >= 5 * MINUTE,
            "Disk pressure" | "Network unavailable" => age >= MINUTE,
            _ => true,
        }
    });

    // Phase.
    let desired_drain = get("desiredDrain").unwrap_or("");
    let last_drain = get("lastAppliedDrain").unwrap_or("");
    let draining = if desired_drain.is_empty() || last_drain.is_empty() {
        false
    } else if desired_drain != last_drain && desired_drain.split('-').next() == Some("drain") {
        true
    } else {
        is_updating && state == "Done"
    };
    let phase = if is_updating && draining {
        NodePhase::Draining
    } else if is_updating {
        match state {
            "Rebooting" => NodePhase::Rebooting,
            "Done" => NodePhase::Updated,
            _ => NodePhase::Updating,
        }
    } else if is_updated {
        NodePhase::Updated
    } else if pool.spec.paused {
        NodePhase::Paused
    } else {
        NodePhase::Pending
    };
    let (mut assessment, mut estimate) = match phase {
        NodePhase::Paused => (NodeAssessmentState::Excluded, "-"),
        NodePhase::Pending => (NodeAssessmentState::Outdated, "?"),
        NodePhase::Draining => (NodeAssessmentState::Progressing, "+10m"),
        NodePhase::Updating | NodePhase::Rebooting => (NodeAssessmentState::Progressing, "+5m"),
        NodePhase::Updated => (NodeAssessmentState::Completed, "-"),
    };
    let mut message = String::new();
    let mut insights = Vec::new();
    let node_resource = || {
        vec![Resource {
            kind: "nodes".to_owned(),
            name: name.clone(),
        }]
    };
    if is_unavailable && !is_updating {
        assessment = NodeAssessmentState::Unavailable;
        message = unav_reason.clone();
        estimate = if is_updated { "-" } else { "?" };
        if serious {
            insights.push(Insight {
                started_at: unav_since,
                level: Level::Warning,
                impact: Impact::UpdateSpeed,
                summary: unav_summary,
                description: if is_degraded {
                    reason_ann.to_owned()
                } else {
                    unav_desc
                },
                reference: REF_MCO.to_owned(),
                resources: node_resource(),
                ..Default::default()
            });
        }
    }
    if is_degraded {
        assessment = NodeAssessmentState::Degraded;
        message = reason_ann.to_owned();
        estimate = if is_updated { "-" } else { "?" };
        insights.push(Insight {
            started_at: None,
            level: Level::Error,
            impact: Impact::UpdateStalled,
            summary: format!("Node {name} is degraded"),
            description: reason_ann.to_owned(),
            reference: REF_MCO.to_owned(),
            resources: node_resource(),
            ..Default::default()
        });
    }
    if name.len() >= 8 && !message.is_empty() {
        message = message.replace(&name, "<node>");
    }
    let row = NodeAssessment {
        name: name.clone(),
        pool: pool.name().to_owned(),
        assessment,
        phase,
        version: cur_ver.map(str::to_owned),
        estimate: estimate.to_owned(),
        message,
        is_updated,
        is_updating,
        is_unavailable,
        is_degraded,
        unavailable_reason: unav_reason,
        unavailable_since: unav_since,
    };
    (row, insights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_like_go() {
        assert_eq!(go_quote("a\"b\\c\nd\te–f"), "\"a\\\"b\\\\c\\nd\\te–f\"");
        assert_eq!(go_quote("\u{1}"), "\"\\x01\"");
    }

    #[test]
    fn selectors() {
        let mut labels = BTreeMap::new();
        labels.insert("node-role.kubernetes.io/worker".to_owned(), String::new());
        assert!(!selector_matches(None, &labels));
        assert!(selector_matches(Some(&LabelSelector::default()), &labels));
        let mut ml = BTreeMap::new();
        ml.insert("node-role.kubernetes.io/worker".to_owned(), String::new());
        let sel = LabelSelector {
            match_labels: Some(ml),
            ..Default::default()
        };
        assert!(selector_matches(Some(&sel), &labels));
        assert!(!selector_matches(Some(&sel), &BTreeMap::new()));
    }
}
