//! The update-service graph (Cincinnati `/graph` v1 response) and the next hops from one
//! version: upstream `GetUpdates` in `pkg/cincinnati/cincinnati.go` of
//! openshift/cluster-version-operator.
//!
//! Shape: `{"nodes": [{version, payload, metadata}], "edges": [[from index, to index]],
//! "conditionalEdges": [{"edges": [{from, to}], "risks": [{url, name, message,
//! matchingRules}]}]}`. Edges name nodes by index, conditional edges by version string. The
//! node metadata key [`CHANNELS_KEY`] lists a node's channels (comma separated), [`URL_KEY`]
//! its errata URL.
//!
//! Checks beyond upstream's (which trusts the service): an edge naming a node past the end is
//! `ResponseInvalid` (upstream would index out of range), and so are two nodes with the same
//! version (upstream silently takes the first). Cycles are harmless: only edges leaving the
//! current version are read.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::openshift::config_v1::{ConditionalUpdate, ConditionalUpdateRisk, Release};

use super::{UpdateError, risks::prune_invalid};

/// Metadata key of a node's channels.
pub const CHANNELS_KEY: &str = "io.openshift.upgrades.graph.release.channels";
/// Metadata key of a node's errata URL.
pub const URL_KEY: &str = "url";

/// One release of the graph.
#[derive(Clone, Debug, Deserialize)]
pub struct Node {
    /// Semantic version (strict SemVer 2.0).
    pub version: semver::Version,
    /// Release image pull spec.
    pub payload: String,
    /// Free-form metadata (channels, errata URL, manifest ref).
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

/// A conditional edge group: every `from → to` pair shares the risks.
#[derive(Clone, Debug, Deserialize)]
pub struct ConditionalEdges {
    /// The pairs, by version string.
    #[serde(default)]
    pub edges: Vec<VersionEdge>,
    /// The risks of taking any of these edges.
    #[serde(default)]
    pub risks: Vec<ConditionalUpdateRisk>,
}

/// A conditional edge by version string (compared as text, as upstream does).
#[derive(Clone, Debug, Deserialize)]
pub struct VersionEdge {
    /// Origin version.
    pub from: String,
    /// Destination version.
    pub to: String,
}

/// A parsed graph whose edge indices have been checked.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Graph {
    /// Releases.
    pub nodes: Vec<Node>,
    /// Recommended edges `[from, to]` by node index.
    #[serde(default)]
    pub edges: Vec<[usize; 2]>,
    /// Conditional edges.
    #[serde(default)]
    pub conditional_edges: Vec<ConditionalEdges>,
}

/// What the graph offers from one version (`GetUpdates`' results).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NextHops {
    /// The current release as the graph describes it (url, channels).
    pub current: Release,
    /// Recommended next hops in edge order, minus those also listed as conditional.
    pub updates: Vec<Release>,
    /// Conditional next hops with their risks (matching rules pruned to recognized, valid
    /// ones), without targets declared by two or more conditional edges.
    pub conditional: Vec<ConditionalUpdate>,
}

impl Graph {
    /// Parses a response body. Errors are `ResponseInvalid` with the JSON path, and edge or
    /// duplicate-node problems.
    ///
    /// # Errors
    /// [`UpdateError`] with reason `ResponseInvalid`.
    pub fn parse(bytes: &[u8]) -> Result<Self, UpdateError> {
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        let g: Graph = serde_path_to_error::deserialize(de)
            .map_err(|e| UpdateError::new("ResponseInvalid", format!("{} at {}", e.inner(), e.path())))?;
        let n = g.nodes.len();
        if let Some((i, [a, b])) = g.edges.iter().enumerate().find(|(_, [a, b])| *a >= n || *b >= n) {
            return Err(UpdateError::new(
                "ResponseInvalid",
                format!("edges[{i}] = [{a}, {b}] names a node past the {n} nodes"),
            ));
        }
        let mut seen: HashMap<&semver::Version, usize> = HashMap::with_capacity(n);
        for (i, node) in g.nodes.iter().enumerate() {
            if let Some(first) = seen.insert(&node.version, i) {
                return Err(UpdateError::new(
                    "ResponseInvalid",
                    format!("nodes[{first}] and nodes[{i}] both have version {}", node.version),
                ));
            }
        }
        Ok(g)
    }

    /// The payload pull spec of `version`, if the graph has that node.
    pub fn image_of(&self, version: &str) -> Option<&str> {
        let v = semver::Version::parse(version).ok()?;
        self.nodes
            .iter()
            .find(|n| n.version == v)
            .map(|n| n.payload.as_str())
    }

    /// The next hops from `version` (`GetUpdates`): the node equal to `version` (else
    /// `VersionNotFound` naming `channel`); a migration to `Multi` (desired arch `Multi`,
    /// current not) offers only the current release; recommended hops are the destinations of
    /// edges from that node in edge order; each conditional edge from `version` gives the
    /// target with its group's risks (a missing target node is `ResponseInvalid`); a target
    /// both recommended and conditional is kept only as conditional; a conditional update with
    /// a risk whose matching rules are all unrecognized or invalid is dropped; a target
    /// declared by two or more conditional edges is dropped altogether.
    ///
    /// # Errors
    /// [`UpdateError`] `VersionNotFound` or `ResponseInvalid`.
    pub fn next_hops(
        &self,
        version: &semver::Version,
        desired_arch: &str,
        current_arch: &str,
        channel: &str,
    ) -> Result<NextHops, UpdateError> {
        let Some(idx) = self
            .nodes
            .iter()
            .position(|n| n.version.cmp_precedence(version).is_eq())
        else {
            return Err(UpdateError::new(
                "VersionNotFound",
                format!(
                    "currently reconciling cluster version {version} not found in the {channel:?} channel"
                ),
            ));
        };
        let current = release_of(&self.nodes[idx]);
        if desired_arch == "Multi" && current_arch != desired_arch {
            return Ok(NextHops {
                updates: vec![current.clone()],
                current,
                conditional: Vec::new(),
            });
        }
        let mut updates: Vec<Release> = self
            .edges
            .iter()
            .filter(|[a, _]| *a == idx)
            .map(|[_, b]| release_of(&self.nodes[*b]))
            .collect();
        let from = version.to_string();
        let mut conditional: Vec<ConditionalUpdate> = Vec::new();
        for group in &self.conditional_edges {
            for e in group.edges.iter().filter(|e| e.from == from) {
                let Some(target) = self.nodes.iter().find(|n| n.version.to_string() == e.to) else {
                    return Err(UpdateError::new(
                        "ResponseInvalid",
                        format!("no node for conditional update {}", e.to),
                    ));
                };
                conditional.push(ConditionalUpdate {
                    release: release_of(target),
                    risks: group.risks.clone(),
                    risk_names: Vec::new(),
                    conditions: Vec::new(),
                });
            }
        }
        updates.retain(|u| !conditional.iter().any(|c| c.release.image == u.image));
        conditional.retain_mut(|cu| {
            for r in &mut cu.risks {
                let (kept, errs) = prune_invalid(&r.matching_rules);
                if kept.is_empty() {
                    tracing::warn!(
                        "conditional update to {}, risk {:?}, has no recognized valid matching rule; dropping the target ({})",
                        cu.release.version,
                        r.name,
                        errs.join(", ")
                    );
                    return false;
                }
                r.matching_rules = kept;
            }
            true
        });
        let mut count: HashMap<&str, usize> = HashMap::new();
        for c in &conditional {
            *count.entry(c.release.image.as_str()).or_default() += 1;
        }
        let dup: Vec<String> = count
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(i, _)| i.to_string())
            .collect();
        if !dup.is_empty() {
            tracing::warn!(
                "the update service declares several conditional updates to {dup:?}; dropping them all"
            );
            conditional.retain(|c| !dup.contains(&c.release.image));
        }
        Ok(NextHops {
            current,
            updates,
            conditional,
        })
    }
}

/// A node as a `Release`: version, image, errata URL, channels split on `,` and sorted by
/// byte order (upstream `convertRetrievedUpdateToRelease`; no trimming).
pub fn release_of(n: &Node) -> Release {
    let mut channels: Vec<String> = n
        .metadata
        .get(CHANNELS_KEY)
        .map(|c| c.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    channels.sort();
    Release {
        architecture: None,
        version: n.version.to_string(),
        image: n.payload.clone(),
        url: n.metadata.get(URL_KEY).cloned(),
        channels,
    }
}
