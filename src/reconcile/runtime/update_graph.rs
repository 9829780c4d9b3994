//! A local update-service graph (Cincinnati format) as the source of `status.availableUpdates`,
//! `status.conditionalUpdates` and the `RetrievedUpdates` condition (upstream
//! pkg/cvo/availableupdates.go `evaluateConditionalUpdates` and pkg/cincinnati/cincinnati.go
//! `GetUpdates`). The demo uses `assets/update-graph.json`.
//!
//! The graph is `{"nodes": [{version, payload, metadata}], "edges": [[from, to]],
//! "conditionalEdges": [{"edges": [{from, to}], "risks": [{url, name, message, matchingRules}]}]}`
//! (edges by node index, conditional edges by version). The `metadata` key
//! `io.openshift.upgrades.graph.release.channels` lists a node's channels (comma separated).
//!
//! Differences from upstream: no HTTP fetch (the graph is local and read once); `PromQL`
//! matching rules cannot be evaluated here, so such a risk makes Recommended `Unknown`
//! (`EvaluationFailed`), as upstream does when its query fails; no accept-risks gate.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::openshift::{
    ClusterVersionStatus, Release,
    condition::ConditionStatus,
    config_v1::{ClusterCondition, ConditionalUpdate, ConditionalUpdateRisk},
};
use crate::reconcile::status::{RETRIEVED_UPDATES, set_condition};

/// Metadata key of a node's channels.
pub(crate) const CHANNELS_KEY: &str = "io.openshift.upgrades.graph.release.channels";
/// Metadata key of a node's errata URL.
pub(crate) const URL_KEY: &str = "url";
/// The ConditionalUpdate condition type.
pub(crate) const RECOMMENDED: &str = "Recommended";

#[derive(Clone, Debug, Deserialize)]
struct Node {
    version: semver::Version,
    payload: String,
    #[serde(default)]
    metadata: std::collections::BTreeMap<String, String>,
}

#[derive(Clone, Debug, Deserialize)]
struct ConditionalEdge {
    edges: Vec<VersionEdge>,
    risks: Vec<Risk>,
}

#[derive(Clone, Debug, Deserialize)]
struct VersionEdge {
    from: semver::Version,
    to: semver::Version,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Risk {
    #[serde(default)]
    url: String,
    name: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    matching_rules: Vec<Rule>,
}

#[derive(Clone, Debug, Deserialize)]
struct Rule {
    #[serde(rename = "type")]
    type_: String,
    #[serde(default)]
    promql: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Graph {
    nodes: Vec<Node>,
    #[serde(default)]
    edges: Vec<[usize; 2]>,
    #[serde(default)]
    conditional_edges: Vec<ConditionalEdge>,
}

/// A parsed update graph, or why it could not be parsed (then every evaluation reports
/// `RetrievedUpdates=False` with reason `ResponseInvalid`).
#[derive(Clone, Debug)]
pub struct UpdateGraph {
    graph: Result<Graph, String>,
}

/// What the graph says for one cluster: the content of `availableUpdates`,
/// `conditionalUpdates`, and the `RetrievedUpdates` condition.
#[derive(Clone, Debug, PartialEq)]
pub struct Updates {
    /// Recommended next hops plus conditional updates whose Recommended is True, semver
    /// descending.
    pub available: Vec<Release>,
    /// Conditional updates with their risks and Recommended condition, semver descending.
    pub conditional: Vec<ConditionalUpdate>,
    /// `Ok(())` ⇒ RetrievedUpdates=True; `Err((reason, message))` ⇒ False.
    pub retrieved: Result<(), (String, String)>,
}

impl UpdateGraph {
    /// Parses a graph from JSON. Never fails: a bad graph is kept as its error (one line,
    /// naming `source` and the JSON path).
    pub fn parse(source: &str, bytes: &[u8]) -> Self {
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        let graph = serde_path_to_error::deserialize::<_, Graph>(de)
            .map_err(|e| format!("{source}: {} at {}", e.inner(), e.path()))
            .and_then(|g| {
                let n = g.nodes.len();
                match g.edges.iter().find(|[a, b]| *a >= n || *b >= n) {
                    Some([a, b]) => Err(format!(
                        "{source}: edge [{a}, {b}] names a node past the {n} nodes"
                    )),
                    None => Ok(g),
                }
            });
        Self { graph }
    }

    /// Reads and parses a graph file (an unreadable file is kept as the error, like bad JSON).
    pub fn from_file(path: &Path) -> Self {
        match std::fs::read(path) {
            Ok(b) => Self::parse(&path.display().to_string(), &b),
            Err(e) => Self {
                graph: Err(format!("{}: {e}", path.display())),
            },
        }
    }

    /// Why the graph is unusable, if it is.
    pub fn error(&self) -> Option<&str> {
        self.graph.as_ref().err().map(String::as_str)
    }

    /// The payload pull spec of `version`, if the graph has that node.
    pub fn image_of(&self, version: &str) -> Option<String> {
        let g = self.graph.as_ref().ok()?;
        let v = semver::Version::parse(version).ok()?;
        g.nodes.iter().find(|n| n.version == v).map(|n| n.payload.clone())
    }

    /// The updates from `current` in `channel` (availableupdates.go / cincinnati.go
    /// `GetUpdates`). `RetrievedUpdates=False` reasons: `NoChannel` (empty channel),
    /// `NoCurrentVersion`, `InvalidCurrentVersion`, `VersionNotFound` (current not in the
    /// channel), `ResponseInvalid` (bad graph).
    pub fn updates(&self, current: &str, channel: &str) -> Updates {
        let fail = |reason: &str, message: String| Updates {
            available: Vec::new(),
            conditional: Vec::new(),
            retrieved: Err((reason.to_string(), message)),
        };
        let g = match &self.graph {
            Ok(g) => g,
            Err(e) => {
                return fail(
                    "ResponseInvalid",
                    format!("Unable to retrieve available updates: {e}"),
                );
            }
        };
        if channel.is_empty() {
            return fail("NoChannel", "The update channel has not been configured.".into());
        }
        if current.is_empty() {
            return fail(
                "NoCurrentVersion",
                "The cluster version does not have a semantic version assigned and cannot calculate valid upgrades."
                    .into(),
            );
        }
        let Ok(cur) = semver::Version::parse(current) else {
            return fail(
                "InvalidCurrentVersion",
                format!("The current cluster version {current:?} is not a valid semantic version"),
            );
        };
        let in_channel = |n: &Node| {
            n.metadata
                .get(CHANNELS_KEY)
                .is_some_and(|c| c.split(',').any(|c| c.trim() == channel))
        };
        let Some(from) = g.nodes.iter().position(|n| n.version == cur && in_channel(n)) else {
            return fail(
                "VersionNotFound",
                format!(
                    "Unable to retrieve available updates: currently reconciling cluster version {current} not found in the {channel:?} channel"
                ),
            );
        };
        let mut available: Vec<Release> = g
            .edges
            .iter()
            .filter(|[a, _]| *a == from)
            .filter_map(|[_, b]| g.nodes.get(*b))
            .filter(|n| in_channel(n))
            .map(release_of)
            .collect();
        let mut conditional = Vec::new();
        for ce in &g.conditional_edges {
            for e in ce.edges.iter().filter(|e| e.from == cur) {
                let Some(to) = g.nodes.iter().find(|n| n.version == e.to && in_channel(n)) else {
                    continue;
                };
                if available.iter().any(|r| r.image == to.payload) {
                    // A recommended edge wins over a conditional one (cincinnati.go).
                    continue;
                }
                let cu = evaluate(release_of(to), &ce.risks);
                if cu.conditions.iter().any(|c| c.is_true()) {
                    available.push(cu.release.clone());
                }
                conditional.push(cu);
            }
        }
        let key = |r: &Release| semver::Version::parse(&r.version).ok();
        available.sort_by_key(|r| std::cmp::Reverse(key(r)));
        available.dedup_by(|a, b| a.image == b.image);
        conditional.sort_by_key(|c| std::cmp::Reverse(key(&c.release)));
        Updates {
            available,
            conditional,
            retrieved: Ok(()),
        }
    }

    /// Merges [`Self::updates`] for the status's desired version and `channel` into `st`:
    /// `availableUpdates`, `conditionalUpdates` and `RetrievedUpdates` (condition timestamps
    /// move only when a status changes, so a repeated merge is a no-op).
    pub(crate) fn merge_into(&self, st: &mut ClusterVersionStatus, channel: &str, now: DateTime<Utc>) {
        let u = self.updates(&st.desired.version, channel);
        let old = std::mem::take(&mut st.conditional_updates);
        st.conditional_updates = u
            .conditional
            .into_iter()
            .map(|mut cu| {
                // Keep the transition time of an unchanged Recommended.
                if let Some(prev) = old.iter().find(|o| o.release.image == cu.release.image) {
                    for c in &mut cu.conditions {
                        if let Some(p) = prev.conditions.iter().find(|p| p.type_ == c.type_)
                            && p.status == c.status
                        {
                            c.last_transition_time = p.last_transition_time;
                        }
                    }
                }
                cu
            })
            .collect();
        for cu in &mut st.conditional_updates {
            for c in &mut cu.conditions {
                c.last_transition_time.get_or_insert(now);
            }
        }
        match u.retrieved {
            Ok(()) => {
                st.available_updates = Some(u.available);
                set_condition(
                    &mut st.conditions,
                    RETRIEVED_UPDATES,
                    ConditionStatus::True,
                    "",
                    "",
                    now,
                );
            }
            Err((reason, message)) => {
                st.available_updates = None;
                set_condition(
                    &mut st.conditions,
                    RETRIEVED_UPDATES,
                    ConditionStatus::False,
                    &reason,
                    &message,
                    now,
                );
            }
        }
    }
}

fn release_of(n: &Node) -> Release {
    Release {
        architecture: None,
        version: n.version.to_string(),
        image: n.payload.clone(),
        url: n.metadata.get(URL_KEY).cloned(),
        channels: n
            .metadata
            .get(CHANNELS_KEY)
            .map(|c| {
                let mut v: Vec<String> = c.split(',').map(|s| s.trim().to_string()).collect();
                v.sort();
                v
            })
            .unwrap_or_default(),
    }
}

/// Whether `s` can be a condition reason (`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`).
fn reason_safe(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "_,:".contains(c))
        && s.chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Combines Recommended reasons (upstream pkg/cvo/availableupdates.go `newRecommendedReason`).
fn combine(now: &str, want: &str) -> String {
    const NOT_EXPOSED: &str = "NotExposedToRisks";
    const EVAL_FAILED: &str = "EvaluationFailed";
    const EXPOSED: &str = "ExposedToRisks";
    const ACCEPTED: &str = "AllExposedRisksAccepted";
    let r = if now == NOT_EXPOSED
        || now == want
        || (now == ACCEPTED && want != NOT_EXPOSED)
        || (now == EVAL_FAILED && want == EXPOSED)
    {
        want
    } else if want == NOT_EXPOSED
        || (now == EVAL_FAILED && want == ACCEPTED)
        || (now == EXPOSED && (want == ACCEPTED || want == EVAL_FAILED))
    {
        now
    } else {
        "MultipleReasons"
    };
    r.to_string()
}

/// The conditional update of `release` with `risks` (`evaluateConditionalUpdates`): an
/// `Always` risk applies (Recommended=False, reason the risk name); a `PromQL` risk cannot be
/// evaluated here (Recommended=Unknown, EvaluationFailed).
fn evaluate(release: Release, risks: &[Risk]) -> ConditionalUpdate {
    let mut status = ConditionStatus::True;
    let mut reason = "NotExposedToRisks".to_string();
    let mut messages: Vec<String> = Vec::new();
    for r in risks {
        let always = r.matching_rules.iter().any(|m| m.type_ == "Always");
        if always {
            status = ConditionStatus::False;
            let want = if reason_safe(&r.name) {
                r.name.as_str()
            } else {
                "ExposedToRisks"
            };
            reason = combine(&reason, want);
            messages.push(format!("{} {}", r.message, r.url).trim().to_string());
        } else {
            if status != ConditionStatus::False {
                status = ConditionStatus::Unknown;
            }
            reason = combine(&reason, "EvaluationFailed");
            messages.push(format!(
                "Could not evaluate exposure to update risk {} (cvo cannot evaluate {} matching rules)",
                r.name,
                r.matching_rules
                    .first()
                    .map(|m| m.type_.as_str())
                    .unwrap_or("empty")
            ));
        }
    }
    let message = if messages.is_empty() {
        "The update is recommended, because none of the conditional update risks apply to this cluster."
            .to_string()
    } else {
        messages.join("\n\n")
    };
    ConditionalUpdate {
        release,
        risks: risks
            .iter()
            .map(|r| ConditionalUpdateRisk {
                url: r.url.clone(),
                name: r.name.clone(),
                message: r.message.clone(),
                matching_rules: r
                    .matching_rules
                    .iter()
                    .map(|m| ClusterCondition {
                        type_: m.type_.clone(),
                        promql: m
                            .promql
                            .as_ref()
                            .and_then(|p| serde_json::from_value(p.clone()).ok()),
                    })
                    .collect(),
                conditions: Vec::new(),
            })
            .collect(),
        risk_names: Vec::new(),
        conditions: vec![crate::openshift::condition::Condition {
            type_: RECOMMENDED.into(),
            status,
            last_transition_time: None,
            reason: Some(reason),
            message: Some(message),
            observed_generation: None,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEMO: &str = include_str!("../../../assets/update-graph.json");

    #[test]
    fn demo_graph_from_4_16_3_has_one_available_and_one_conditional_update() {
        let g = UpdateGraph::parse("assets/update-graph.json", DEMO.as_bytes());
        assert_eq!(g.error(), None);
        let u = g.updates("4.16.3", "stable-4.16");
        assert_eq!(u.retrieved, Ok(()));
        let versions: Vec<&str> = u.available.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(versions, ["4.16.4"]);
        assert!(
            u.available[0]
                .image
                .ends_with("8878f38c39bf31828fcd6909657523a97dabf8dd21425d6f2d760433d191071e")
        );
        assert_eq!(
            u.available[0].url.as_deref(),
            Some("https://access.redhat.com/errata/RHSA-2024:4613")
        );
        assert_eq!(u.conditional.len(), 1);
        let cu = &u.conditional[0];
        assert_eq!(cu.release.version, "4.16.5");
        assert_eq!(cu.risks[0].name, "OVNKubernetesEgressIPRegression");
        let rec = &cu.conditions[0];
        assert_eq!(rec.type_, "Recommended");
        assert_eq!(rec.status, ConditionStatus::False);
        assert_eq!(rec.reason(), "OVNKubernetesEgressIPRegression");
        assert!(
            rec.message()
                .ends_with("Update to 4.16.4 first. https://issues.redhat.com/browse/OCPBUGS-37029")
        );
        // From 4.16.4 the next hop is 4.16.5, no conditional update.
        let u = g.updates("4.16.4", "stable-4.16");
        assert_eq!(
            u.available.iter().map(|r| r.version.as_str()).collect::<Vec<_>>(),
            ["4.16.5"]
        );
        assert!(u.conditional.is_empty());
        assert_eq!(g.image_of("4.16.4"), Some(u_image_4164()));
        assert_eq!(g.image_of("4.17.0"), None);
    }

    fn u_image_4164() -> String {
        "quay.io/openshift-release-dev/ocp-release@sha256:8878f38c39bf31828fcd6909657523a97dabf8dd21425d6f2d760433d191071e".into()
    }

    #[test]
    fn merge_matches_the_seeded_demo_cluster_status() -> anyhow::Result<()> {
        let text = include_str!("../../../assets/demo-cluster/cv.yaml");
        let cv: crate::openshift::ClusterVersion = serde_norway::from_str(text)?;
        let g = UpdateGraph::parse("assets/update-graph.json", DEMO.as_bytes());
        let mut st = cv.status.clone();
        let now = Utc::now();
        g.merge_into(&mut st, "stable-4.16", now);
        assert_eq!(st.available_updates, cv.status.available_updates);
        assert_eq!(st.conditional_updates.len(), 1);
        assert_eq!(
            st.conditional_updates[0].release,
            cv.status.conditional_updates[0].release
        );
        assert_eq!(
            st.conditional_updates[0].risks,
            cv.status.conditional_updates[0].risks
        );
        assert_eq!(
            st.conditional_updates[0].conditions[0].message,
            cv.status.conditional_updates[0].conditions[0].message
        );
        // Merging again changes nothing (no status write loop).
        let again = {
            let mut s = st.clone();
            g.merge_into(&mut s, "stable-4.16", now + chrono::Duration::seconds(5));
            s
        };
        assert_eq!(again, st);
        Ok(())
    }

    #[test]
    fn bad_inputs_set_retrieved_updates_false_with_a_reason() {
        let g = UpdateGraph::parse("g.json", b"{\"nodes\": [{\"version\": \"x\"}]}");
        let e = g.error().unwrap_or_default().to_string();
        assert!(e.starts_with("g.json: ") && e.contains("nodes[0]"), "{e}");
        assert!(!e.contains('\n'));
        let mut st = ClusterVersionStatus::default();
        st.desired.version = "4.16.3".into();
        g.merge_into(&mut st, "stable-4.16", Utc::now());
        let c = crate::openshift::condition::find(&st.conditions, RETRIEVED_UPDATES)
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            (c.status, c.reason()),
            (ConditionStatus::False, "ResponseInvalid")
        );
        assert_eq!(st.available_updates, None);

        let g = UpdateGraph::parse("g.json", b"{\"nodes\": [], \"edges\": [[0, 1]]}");
        assert!(g.error().is_some_and(|e| e.contains("edge [0, 1]")));

        let g = UpdateGraph::parse("g", DEMO.as_bytes());
        let reason = |v: &str, ch: &str| g.updates(v, ch).retrieved.err().map(|(r, _)| r);
        assert_eq!(reason("4.16.3", "").as_deref(), Some("NoChannel"));
        assert_eq!(reason("", "stable-4.16").as_deref(), Some("NoCurrentVersion"));
        assert_eq!(
            reason("four", "stable-4.16").as_deref(),
            Some("InvalidCurrentVersion")
        );
        assert_eq!(
            reason("4.16.9", "stable-4.16").as_deref(),
            Some("VersionNotFound")
        );
        assert_eq!(reason("4.16.3", "eus-4.16").as_deref(), Some("VersionNotFound"));
    }

    #[test]
    fn promql_risk_is_unknown_evaluation_failed() {
        let json = br#"{"nodes": [
            {"version": "1.0.0", "payload": "a", "metadata": {"io.openshift.upgrades.graph.release.channels": "c"}},
            {"version": "1.0.1", "payload": "b", "metadata": {"io.openshift.upgrades.graph.release.channels": "c"}}],
          "edges": [],
          "conditionalEdges": [{"edges": [{"from": "1.0.0", "to": "1.0.1"}],
             "risks": [{"name": "R", "url": "u", "message": "m", "matchingRules": [{"type": "PromQL", "promql": {"promql": "up"}}]}]}]}"#;
        let u = UpdateGraph::parse("g", json).updates("1.0.0", "c");
        assert!(u.available.is_empty());
        let c = &u.conditional[0].conditions[0];
        assert_eq!(
            (c.status, c.reason()),
            (ConditionStatus::Unknown, "EvaluationFailed")
        );
    }

    #[test]
    fn reason_combination_follows_upstream() {
        assert_eq!(
            combine("NotExposedToRisks", "AllExposedRisksAccepted"),
            "AllExposedRisksAccepted"
        );
        assert_eq!(
            combine("AllExposedRisksAccepted", "NotExposedToRisks"),
            "AllExposedRisksAccepted"
        );
        assert_eq!(
            combine("EvaluationFailed", "NotExposedToRisks"),
            "EvaluationFailed"
        );
        assert_eq!(
            combine("EvaluationFailed", "AllExposedRisksAccepted"),
            "EvaluationFailed"
        );
        assert_eq!(combine("EvaluationFailed", "ExposedToRisks"), "ExposedToRisks");
        assert_eq!(
            combine("AllExposedRisksAccepted", "ExposedToRisks"),
            "ExposedToRisks"
        );
        assert_eq!(combine("RiskA", "RiskB"), "MultipleReasons");
    }
}
