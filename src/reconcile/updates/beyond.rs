//! Why a newer release of the channel is not offered (cvo only: upstream's
//! `pkg/cvo/availableupdates.go` in openshift/cluster-version-operator reads only the edges
//! leaving the current version and says nothing about the rest of the channel).
//!
//! The update service's `/graph` answer for a channel holds every release of that channel
//! ([`Graph::nodes`]), so the releases newer than the current version that are not offered can
//! be named, each with its reason: no edge from the current version (with the first hop of a
//! path of plain edges, when there is one), a conditional edge whose risks apply here (or could
//! not be evaluated), or a conditional edge dropped because its declaration is unusable.
//! [`not_offered`] is pure: the engine calls it with its own risk evaluation, `cvo upgrade`
//! with the ClusterVersion's `status.conditionalUpdates`.

use std::collections::{HashMap, VecDeque};

use super::{
    graph::{Graph, release_of},
    risks::prune_invalid,
};
use crate::{
    openshift::{ConditionStatus, condition::find, config_v1::ConditionalUpdate},
    reconcile::api::{NotOffered, WhyNotOffered},
};

/// The releases of `graph` newer than `version` (SemVer precedence) that are not offered as a
/// recommended update from it, newest first, each with why (see the module doc).
///
/// `evaluated` holds the conditional updates with their `Recommended` condition (matched to a
/// conditional target by image, else by version): a target whose `Recommended` is `True` is
/// offered and left out; one whose condition is missing is [`WhyNotOffered::Blocked`] with
/// `recommended: None`. A target of both a plain and a conditional edge counts as conditional
/// (as upstream keeps it). Nothing is returned when `version` is not a node of the graph, or
/// during a migration to the `Multi` architecture (`desired_arch` `Multi`, `current_arch` not),
/// where the graph offers only the current release.
pub fn not_offered(
    graph: &Graph,
    version: &semver::Version,
    desired_arch: &str,
    current_arch: &str,
    evaluated: &[ConditionalUpdate],
) -> Vec<NotOffered> {
    let Some(idx) = graph
        .nodes
        .iter()
        .position(|n| n.version.cmp_precedence(version).is_eq())
    else {
        return Vec::new();
    };
    if desired_arch == "Multi" && current_arch != desired_arch {
        return Vec::new();
    }
    let first_hops = first_hops(graph, idx);
    // Conditional edges from `version`, by target version text: the risks of the first
    // declaration and how many declare it.
    let from = version.to_string();
    let mut conditional: HashMap<&str, (usize, &[crate::openshift::config_v1::ConditionalUpdateRisk])> =
        HashMap::new();
    for group in &graph.conditional_edges {
        for e in group.edges.iter().filter(|e| e.from == from) {
            conditional
                .entry(e.to.as_str())
                .and_modify(|(n, _)| *n += 1)
                .or_insert((1, &group.risks));
        }
    }
    let mut newer: Vec<usize> = (0..graph.nodes.len())
        .filter(|&i| graph.nodes[i].version.cmp_precedence(version).is_gt())
        .collect();
    newer.sort_by(|&a, &b| graph.nodes[b].version.cmp_precedence(&graph.nodes[a].version));
    let mut out = Vec::new();
    for i in newer {
        let node = &graph.nodes[i];
        let release = release_of(node);
        let why = match conditional.get(node.version.to_string().as_str()) {
            Some((declared, risks)) => {
                let unusable = *declared > 1
                    || risks
                        .iter()
                        .any(|r| prune_invalid(&r.matching_rules).0.is_empty());
                if unusable {
                    WhyNotOffered::UnusableConditionalEdge
                } else {
                    let cu = evaluated
                        .iter()
                        .find(|c| !c.release.image.is_empty() && c.release.image == node.payload)
                        .or_else(|| evaluated.iter().find(|c| c.release.version == release.version));
                    let recommended = cu.and_then(|c| find(&c.conditions, "Recommended")).cloned();
                    if recommended
                        .as_ref()
                        .is_some_and(|c| c.status == ConditionStatus::True)
                    {
                        continue;
                    }
                    WhyNotOffered::Blocked {
                        risks: risks.to_vec(),
                        recommended,
                    }
                }
            }
            None if first_hops[i] == Some(i) => continue,
            None => WhyNotOffered::NoEdge {
                via: first_hops[i].map(|h| graph.nodes[h].version.to_string()),
            },
        };
        out.push(NotOffered { release, why });
    }
    out
}

/// For every node, the first hop of a shortest path of plain edges from node `from` (`Some(i)`
/// for a direct successor `i`); `None` where no path leads (and for `from` itself).
fn first_hops(graph: &Graph, from: usize) -> Vec<Option<usize>> {
    let n = graph.nodes.len();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &[a, b] in &graph.edges {
        if a < n && b < n {
            next[a].push(b);
        }
    }
    let mut hop: Vec<Option<usize>> = vec![None; n];
    let mut seen = vec![false; n];
    seen[from] = true;
    let mut queue = VecDeque::new();
    for &b in &next[from] {
        if !seen[b] {
            seen[b] = true;
            hop[b] = Some(b);
            queue.push_back(b);
        }
    }
    while let Some(a) = queue.pop_front() {
        for &b in &next[a] {
            if !seen[b] {
                seen[b] = true;
                hop[b] = hop[a];
                queue.push_back(b);
            }
        }
    }
    hop
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openshift::condition::Condition;

    /// 4.16.2 → 4.16.3 → 4.16.4 → 4.16.6; 4.16.3 →? 4.16.5 (risk R); 4.17.0 alone;
    /// 4.16.7 reached by a conditional edge with an unrecognized rule only.
    const GRAPH: &str = r#"{
      "nodes": [
        {"version": "4.16.2", "payload": "img@sha256:2"},
        {"version": "4.16.3", "payload": "img@sha256:3"},
        {"version": "4.16.4", "payload": "img@sha256:4"},
        {"version": "4.16.5", "payload": "img@sha256:5", "metadata": {"url": "https://errata/5"}},
        {"version": "4.16.6", "payload": "img@sha256:6"},
        {"version": "4.17.0", "payload": "img@sha256:17"},
        {"version": "4.16.7", "payload": "img@sha256:7"}
      ],
      "edges": [[0, 1], [1, 2], [2, 4], [0, 3]],
      "conditionalEdges": [
        {"edges": [{"from": "4.16.3", "to": "4.16.5"}],
         "risks": [{"url": "https://bug/R", "name": "R", "message": "m",
                    "matchingRules": [{"type": "Always"}]}]},
        {"edges": [{"from": "4.16.3", "to": "4.16.7"}],
         "risks": [{"url": "https://bug/Q", "name": "Q", "message": "q",
                    "matchingRules": [{"type": "Martian"}]}]}
      ]
    }"#;

    fn graph() -> Graph {
        Graph::parse(GRAPH.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn v(s: &str) -> semver::Version {
        semver::Version::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn evaluated(status: ConditionStatus) -> Vec<ConditionalUpdate> {
        vec![ConditionalUpdate {
            release: crate::openshift::Release {
                version: "4.16.5".into(),
                image: "img@sha256:5".into(),
                ..Default::default()
            },
            conditions: vec![Condition {
                type_: "Recommended".into(),
                status,
                reason: Some("R".into()),
                message: Some("m".into()),
                ..Default::default()
            }],
            ..Default::default()
        }]
    }

    fn summary(list: &[NotOffered]) -> Vec<String> {
        list.iter()
            .map(|n| {
                let why = match &n.why {
                    WhyNotOffered::NoEdge { via: Some(v) } => format!("no edge, via {v}"),
                    WhyNotOffered::NoEdge { via: None } => "no edge".into(),
                    WhyNotOffered::UnusableConditionalEdge => "unusable".into(),
                    WhyNotOffered::Blocked { risks, recommended } => format!(
                        "blocked by {} ({})",
                        risks
                            .iter()
                            .map(|r| r.name.as_str())
                            .collect::<Vec<_>>()
                            .join(","),
                        recommended
                            .as_ref()
                            .map_or("not evaluated", |c| c.status.as_str())
                    ),
                };
                format!("{} {why}", n.release.version)
            })
            .collect()
    }

    #[test]
    fn names_every_newer_release_not_offered_with_why() {
        let got = not_offered(&graph(), &v("4.16.3"), "", "", &evaluated(ConditionStatus::False));
        assert_eq!(
            summary(&got),
            [
                "4.17.0 no edge",
                "4.16.7 unusable",
                "4.16.6 no edge, via 4.16.4",
                "4.16.5 blocked by R (False)",
            ]
        );
        assert_eq!(got[3].release.url.as_deref(), Some("https://errata/5"));
        assert_eq!(got[3].release.image, "img@sha256:5");
    }

    #[test]
    fn a_recommended_conditional_update_is_offered() {
        let got = not_offered(&graph(), &v("4.16.3"), "", "", &evaluated(ConditionStatus::True));
        assert_eq!(
            summary(&got),
            ["4.17.0 no edge", "4.16.7 unusable", "4.16.6 no edge, via 4.16.4"]
        );
        let unknown = not_offered(
            &graph(),
            &v("4.16.3"),
            "",
            "",
            &evaluated(ConditionStatus::Unknown),
        );
        assert!(summary(&unknown).contains(&"4.16.5 blocked by R (Unknown)".to_string()));
        let none = not_offered(&graph(), &v("4.16.3"), "", "", &[]);
        assert!(summary(&none).contains(&"4.16.5 blocked by R (not evaluated)".to_string()));
    }

    #[test]
    fn from_another_version_and_edge_cases() {
        // From 4.16.2: 4.16.3 and 4.16.5 are plain edges; 4.16.4 and 4.16.6 via 4.16.3.
        let got = not_offered(&graph(), &v("4.16.2"), "", "", &[]);
        assert_eq!(
            summary(&got),
            [
                "4.17.0 no edge",
                "4.16.7 no edge",
                "4.16.6 no edge, via 4.16.3",
                "4.16.4 no edge, via 4.16.3",
            ]
        );
        // The newest release: nothing newer.
        assert!(not_offered(&graph(), &v("4.17.0"), "", "", &[]).is_empty());
        // Not in the channel, or migrating to Multi: nothing to say here.
        assert!(not_offered(&graph(), &v("4.15.0"), "", "", &[]).is_empty());
        assert!(not_offered(&graph(), &v("4.16.3"), "Multi", "", &[]).is_empty());
    }

    #[test]
    fn a_target_declared_twice_is_unusable() {
        let mut g = graph();
        let first = g.conditional_edges[0].clone();
        g.conditional_edges.push(first);
        let got = not_offered(&g, &v("4.16.3"), "", "", &evaluated(ConditionStatus::False));
        assert!(summary(&got).contains(&"4.16.5 unusable".to_string()), "{got:?}");
    }
}
