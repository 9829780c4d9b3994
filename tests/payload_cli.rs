//! `cvo payload inspect` run as a user runs it, plus fixture loading counts and property tests
//! of the task graph.

#![allow(clippy::unwrap_used)]

mod common;

use std::{collections::BTreeMap, sync::Arc};

use cvo::reconcile::payload::{self, LoadOptions, Manifest, PayloadState, Task};
use proptest::prelude::*;

/// The one runner of the tests (`common::cvo_offline`): no KUBECONFIG, logging off.
fn cvo(args: &[&str]) -> (i32, String, String) {
    common::cvo_offline(args)
}

fn shared(rel: &str, test: &str) -> Option<String> {
    common::upstream_fixture(rel, test).map(|p| p.to_string_lossy().into_owned())
}

#[test]
fn inspect_openshift_api_payload_text() {
    let Some(dir) = shared("release-payload/openshift-api-payload-manifests", "inspect_text") else {
        return;
    };
    let (code, out, err) = cvo(&["payload", "inspect", &dir]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("Release:       unknown (no release-metadata)\n"),
        "{out}"
    );
    assert!(
        out.contains("Manifests: 96 loaded, 38 included, 58 excluded\n"),
        "{out}"
    );
    assert!(
        out.contains("  excluded by feature-set: 52\n  excluded by profile: 4\n"),
        "{out}"
    );
    assert!(
        out.contains("step  2: [2] 10-config-operator (16) | [3] 10-openshift-controller-manager (1)"),
        "{out}"
    );
    // Profiles change what is excluded.
    let (_, hyper, _) = cvo(&["payload", "inspect", &dir, "--profile", "hypershift"]);
    assert!(
        hyper.contains("include.release.openshift.io/hypershift unset"),
        "{hyper}"
    );
    assert_ne!(
        hyper.lines().find(|l| l.starts_with("Manifests:")),
        out.lines().find(|l| l.starts_with("Manifests:"))
    );
}

#[test]
fn inspect_json_fields() {
    let Some(dir) = shared("cvo-repo/pkg/cvo/testdata/payloadtest", "inspect_json") else {
        return;
    };
    let (code, out, err) = cvo(&[
        "payload",
        "inspect",
        &dir,
        "--exclude",
        "exclude-test",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON output");
    assert_eq!(v["release"]["version"], "1.0.0-abc");
    assert_eq!(v["release"]["hash"], "DL-FFQ2Uem8=");
    assert_eq!(
        v["release"]["channels"],
        serde_json::json!(["channel-a", "channel-b", "channel-c"])
    );
    let ms = v["manifests"].as_array().unwrap();
    assert_eq!(ms.len(), 4);
    assert_eq!(ms[3]["file"], "release-manifests/0000_20_a_exclude.yml");
    assert_eq!(ms[3]["index"], 0);
    assert_eq!(ms[3]["included"], false);
    assert_eq!(
        ms[3]["excluded_reason"],
        "exclude.release.openshift.io/exclude-test=true"
    );
    let nodes = v["graph"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0]["id"], 0);
    assert_eq!(nodes[0]["tasks"][0], "release-manifests/0000_10_a_file.json#0");
    assert_eq!(v["graph"]["workers"], 16);
}

#[test]
fn inspect_reports_every_bad_file_and_document() {
    let dir = format!("{}/tests/fixtures/payload/bad", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = cvo(&["payload", "inspect", &dir]);
    assert_eq!(code, 1);
    assert_eq!(out, "");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].contains("0000_10_a_one.yaml#1: resource with fields"),
        "{err}"
    );
    assert!(
        lines[1].contains("0000_20_b_two.json#0: metadata.name is a number, not a string"),
        "{err}"
    );
    assert!(lines[2].contains("0000_30_c_three.yml#0: invalid YAML"), "{err}");
    let (code, _, err) = cvo(&["payload", "inspect", "/nonexistent/payload"]);
    assert_eq!(
        (code, err.as_str()),
        (1, "cvo: /nonexistent/payload: not a directory\n")
    );
}

#[test]
fn fixture_payloads_load_with_expected_counts() {
    let opts = LoadOptions::default();
    let cases: &[(&str, usize)] = &[
        ("release-payload/openshift-api-payload-manifests", 96),
        ("release-payload/oc-mirror-release-manifests", 1),
        ("release-payload/operator-manifests/cluster-dns-operator", 20),
        ("cvo-repo/install", 19),
    ];
    for (rel, want) in cases {
        let Some(dir) = common::upstream_fixture(rel, "fixture_payloads_load_with_expected_counts") else {
            return;
        };
        let p = payload::load_dir(&dir, &opts).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(p.manifests.len(), *want, "{rel}");
    }
    let Some(dir) = common::upstream_fixture("release-payload/oc-mirror-release-manifests", "oc-mirror")
    else {
        return;
    };
    let p = payload::load_dir(&dir, &opts).unwrap();
    let md = p.metadata.unwrap();
    assert_eq!(md.release.version, "4.12.0");
    assert_eq!(md.previous.len(), 21);
    assert_eq!(p.image_references.unwrap().tags.len(), 183);
}

fn synthetic(files: &[(u8, u8, bool)]) -> Vec<Arc<Manifest>> {
    let mut names: Vec<String> = files
        .iter()
        .enumerate()
        .map(|(i, (l, c, _))| format!("0000_{l:02}_c{c}_{i:03}.yaml"))
        .collect();
    names.sort();
    names
        .iter()
        .zip(files)
        .enumerate()
        .map(|(i, (n, (_, _, job)))| {
            let (api, kind) = if *job {
                ("batch/v1", "Job")
            } else {
                ("v1", "ConfigMap")
            };
            let obj =
                serde_json::json!({"apiVersion": api, "kind": kind, "metadata": {"name": format!("m{i}")}});
            Arc::new(Manifest::from_object(obj, n, 0).unwrap())
        })
        .collect()
}

proptest! {
    #[test]
    fn graph_holds_every_task_once_and_never_goes_back_a_run_level(
        files in prop::collection::vec((0u8..6, 0u8..4, prop::bool::weighted(0.05)), 0..40),
        mode in prop::sample::select(vec![PayloadState::Updating, PayloadState::Initializing, PayloadState::Reconciling]),
        attempt in 0u64..20,
    ) {
        let ms = synthetic(&files);
        let (g, workers) = payload::graph_for_state(Task::from_manifests(&ms), mode, attempt);
        prop_assert!(workers >= 1);
        let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
        for t in g.tasks() {
            *seen.entry(t.index).or_default() += 1;
        }
        prop_assert_eq!(seen.len(), ms.len());
        prop_assert!(seen.values().all(|c| *c == 1));
        let level = |t: &Task| payload::run_level_and_component(&t.manifest.file).map(|x| x.0);
        for (i, n) in g.nodes.iter().enumerate() {
            for o in &n.out {
                prop_assert!(g.nodes[*o].in_.contains(&i), "edge {} -> {} not mirrored", i, o);
            }
        }
        if mode == PayloadState::Updating {
            // Highest run level among a node's tasks and all its ancestors' (fixpoint over the DAG).
            let own: Vec<Option<u32>> = g.nodes.iter().map(|n| n.tasks.iter().filter_map(level).max()).collect();
            let mut upto = own.clone();
            for _ in 0..=g.nodes.len() {
                for (i, node) in g.nodes.iter().enumerate() {
                    let best = node.in_.iter().filter_map(|p| upto[*p]).chain(own[i]).max();
                    upto[i] = best;
                }
            }
            for (i, n) in g.nodes.iter().enumerate() {
                let lowest = n.tasks.iter().filter_map(level).min();
                let before = n.in_.iter().filter_map(|p| upto[*p]).max();
                if let (Some(lo), Some(b)) = (lowest, before) {
                    prop_assert!(b <= lo, "node {} (level {}) runs after a level-{} task", i, lo, b);
                }
            }
        }
    }
}
