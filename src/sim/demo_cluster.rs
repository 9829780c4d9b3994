//! The live demo's starting cluster: every object of `assets/demo-cluster/*.yaml` (a 4.16.3
//! cluster as it is after 4.16.3 completed: ClusterVersion, 33 ClusterOperators, pools, nodes,
//! MachineConfigs and every workload of the 4.16.3 payload, status included), embedded in the
//! binary, and the demo channel's release images from `assets/update-graph.json`.

use anyhow::Context;
use serde::Deserialize;
use serde_json::Value;

use super::Simulator;

/// The embedded seed files, in load order: `(file name, YAML text)`.
const SEED: &[(&str, &str)] = &[
    (
        "workloads.yaml",
        include_str!("../../assets/demo-cluster/workloads.yaml"),
    ),
    ("mc.yaml", include_str!("../../assets/demo-cluster/mc.yaml")),
    ("mcp.yaml", include_str!("../../assets/demo-cluster/mcp.yaml")),
    ("node.yaml", include_str!("../../assets/demo-cluster/node.yaml")),
    ("co.yaml", include_str!("../../assets/demo-cluster/co.yaml")),
    ("cv.yaml", include_str!("../../assets/demo-cluster/cv.yaml")),
    (
        "featuregate.yaml",
        include_str!("../../assets/demo-cluster/featuregate.yaml"),
    ),
];

/// The embedded demo update graph (Cincinnati JSON).
const UPDATE_GRAPH: &str = include_str!("../../assets/update-graph.json");

/// The release the demo cluster runs.
pub const DEMO_FROM_VERSION: &str = "4.16.3";
/// The release the demo updates to (the recommended update from [`DEMO_FROM_VERSION`]).
pub const DEMO_TO_VERSION: &str = "4.16.4";

/// The objects of the demo seed, in load order: Namespaces and CustomResourceDefinitions
/// first (so namespaced objects and custom resources have a home), then the rest in file order.
///
/// # Errors
/// A one-line error naming the embedded file when it does not parse (a build defect).
pub fn demo_objects() -> anyhow::Result<Vec<Value>> {
    let mut first = Vec::new();
    let mut rest = Vec::new();
    for (file, text) in SEED {
        for (i, de) in serde_norway::Deserializer::from_str(text).enumerate() {
            let v = Value::deserialize(de)
                .with_context(|| format!("assets/demo-cluster/{file}: document {i}"))?;
            let items = match v["kind"].as_str() {
                Some("List") => v["items"].as_array().cloned().unwrap_or_default(),
                Some(_) => vec![v],
                None => continue,
            };
            for o in items {
                match o["kind"].as_str() {
                    Some("Namespace" | "CustomResourceDefinition") => first.push(o),
                    _ => rest.push(o),
                }
            }
        }
    }
    first.extend(rest);
    Ok(first)
}

/// A simulator holding the demo cluster at [`DEMO_FROM_VERSION`]: every object of
/// `assets/demo-cluster/` (about 330), status included, not audited. The ClusterVersion's
/// `spec.desiredUpdate` is 4.16.3 (image from the update graph) and its history is Completed
/// 4.16.3, then 4.16.0.
///
/// # Errors
/// When an embedded object cannot be stored; the error names its kind and name.
pub fn demo_cluster() -> anyhow::Result<Simulator> {
    demo_cluster_with_images(&std::collections::BTreeMap::new())
}

/// [`demo_cluster`] with release images replaced: every occurrence of a key of `images` in a
/// string of any object (ClusterVersion desired and history, condition messages, the CVO's
/// Deployment) becomes its value. `cvo demo --registry` runs the cluster on the 4.16.3 it
/// pushed to the local registry this way.
///
/// # Errors
/// As [`demo_cluster`].
pub fn demo_cluster_with_images(
    images: &std::collections::BTreeMap<String, String>,
) -> anyhow::Result<Simulator> {
    let mut objects = demo_objects()?;
    shift_times(&mut objects, chrono::Utc::now() - chrono::Duration::hours(1));
    if !images.is_empty() {
        for o in objects.iter_mut() {
            visit_strings(o, &mut |s| {
                for (from, to) in images {
                    if s.contains(from.as_str()) {
                        *s = s.replace(from.as_str(), to);
                    }
                }
            });
        }
    }
    let sim = Simulator::new();
    for o in objects {
        let kind = o["kind"].as_str().unwrap_or_default().to_owned();
        let name = o["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        sim.insert(o)
            .map_err(|e| anyhow::anyhow!("demo cluster: {kind} {name}: {}", e.message))?;
    }
    Ok(sim)
}

/// Calls `f` on every string value in `v` (not on keys).
fn visit_strings(v: &mut Value, f: &mut dyn FnMut(&mut String)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter_mut().for_each(|x| visit_strings(x, f)),
        Value::Object(m) => m.values_mut().for_each(|x| visit_strings(x, f)),
        _ => {}
    }
}

/// Moves every RFC 3339 timestamp in `objects` (creation times, condition transitions, history
/// start and completion) by the same amount, so that the latest one is `latest`: the seed was
/// written in 2024, and a dashboard showing "Available since 861d" would not look like a
/// cluster running today. Relative order and gaps are kept.
pub fn shift_times(objects: &mut [Value], latest: chrono::DateTime<chrono::Utc>) {
    fn parse(s: &str) -> Option<chrono::DateTime<chrono::Utc>> {
        // Only full `YYYY-MM-DDTHH:MM:SS[.frac]Z` strings: a name or a version never parses.
        if s.len() < 20 || !s.ends_with('Z') || s.as_bytes().get(10) != Some(&b'T') {
            return None;
        }
        chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.with_timezone(&chrono::Utc))
    }
    let mut max = None;
    for o in objects.iter_mut() {
        visit_strings(o, &mut |s| {
            if let Some(t) = parse(s) {
                max = max.max(Some(t));
            }
        });
    }
    let Some(max) = max else { return };
    let delta = latest - max;
    for o in objects.iter_mut() {
        visit_strings(o, &mut |s| {
            if let Some(t) = parse(s) {
                *s = (t + delta).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            }
        });
    }
}

/// The release image (pull spec) of `version` in the demo update graph, e.g. the 4.16.4
/// `quay.io/openshift-release-dev/ocp-release@sha256:8878…` image that `spec.desiredUpdate`
/// names to start the demo update; `None` for a version not in the graph.
pub fn demo_release_image(version: &str) -> Option<String> {
    let g: Value = serde_json::from_str(UPDATE_GRAPH).ok()?;
    g["nodes"]
        .as_array()?
        .iter()
        .find(|n| n["version"] == version)
        .and_then(|n| n["payload"].as_str())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_times_moves_every_timestamp_by_the_same_amount() {
        let mut objs = vec![serde_json::json!({
            "metadata": {"name": "2024-07-10T15:10:51Z-not-a-time", "creationTimestamp": "2024-06-27T07:58:31Z"},
            "status": {"history": [{"startedTime": "2024-07-10T14:02:17Z", "completionTime": "2024-07-10T15:10:51Z", "version": "4.16.3"}]}
        })];
        let latest = chrono::DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
            .expect("time")
            .with_timezone(&chrono::Utc);
        shift_times(&mut objs, latest);
        let h = &objs[0]["status"]["history"][0];
        assert_eq!(h["completionTime"], "2026-11-30T12:00:00Z");
        assert_eq!(h["startedTime"], "2026-11-30T10:51:26Z");
        assert_eq!(h["version"], "4.16.3");
        assert_eq!(objs[0]["metadata"]["name"], "2024-07-10T15:10:51Z-not-a-time");
    }

    #[test]
    fn seed_holds_every_kind_with_status() {
        let sim = demo_cluster().expect("seed");
        assert_eq!(
            sim.list_objects("config.openshift.io", "clusteroperators").len(),
            33
        );
        assert_eq!(sim.list_objects("apps", "deployments").len(), 34);
        assert_eq!(sim.list_objects("", "nodes").len(), 6);
        assert_eq!(
            sim.list_objects("machineconfiguration.openshift.io", "machineconfigpools")
                .len(),
            2
        );
        assert_eq!(
            sim.list_objects("apiextensions.k8s.io", "customresourcedefinitions")
                .len(),
            31
        );
        let d = sim
            .get(
                "apps",
                "deployments",
                "openshift-machine-config-operator",
                "machine-config-operator",
            )
            .expect("mco deployment");
        assert_eq!(d["status"]["readyReplicas"], 1);
        let cv = sim
            .get("config.openshift.io", "clusterversions", "", "version")
            .expect("cv");
        assert_eq!(cv["spec"]["desiredUpdate"]["version"], "4.16.3");
        assert_eq!(cv["status"]["history"][0]["state"], "Completed");
        assert_eq!(cv["status"]["history"][0]["version"], "4.16.3");
        assert_eq!(
            cv["spec"]["desiredUpdate"]["image"].as_str(),
            demo_release_image(DEMO_FROM_VERSION).as_deref()
        );
        assert!(
            demo_release_image(DEMO_TO_VERSION)
                .expect("4.16.4")
                .starts_with("quay.io/openshift-release-dev/ocp-release@sha256:8878")
        );
        assert_eq!(sim.audit().writes(), 0);
    }
}
