//! Conformance cases for `reconcile::payload`, ported from upstream
//! `pkg/payload/task_graph_test.go`, `pkg/payload/task_test.go`, `pkg/payload/payload_test.go`,
//! `lib/capability/capability_test.go`, `pkg/cvo/cvo_scenarios_test.go`
//! `TestCVO_MajorVersionManifestFiltering` and `pkg/cvo/featuregate_integration_test.go`.

#![allow(clippy::unwrap_used)]

mod common;

use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use common::upstream_fixture;
use cvo::reconcile::payload::{
    self, Buckets, GraphError, InclusionConfig, LoadOptions, Manifest, Task, TaskGraph, TaskNode, TaskRunner,
    by_number_and_component,
    capability::{self, CapabilitiesSpec, CapabilitiesStatus},
    flatten_by_number_and_component, implicitly_enabled_capabilities, include, run_graph, shift_order,
};
use futures::{FutureExt, future::BoxFuture};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn manifest(file: &str, kind: &str, api: &str, ns: &str, name: &str) -> Arc<Manifest> {
    let mut meta = json!({"name": name});
    if !ns.is_empty() {
        meta["namespace"] = json!(ns);
    }
    Arc::new(
        Manifest::from_object(
            json!({"apiVersion": api, "kind": kind, "metadata": meta}),
            file,
            0,
        )
        .unwrap(),
    )
}

/// Tasks named by file (kind ConfigMap, name = file), index/total 0 as upstream's tests build them.
fn tasks(files: &[&str]) -> Vec<Task> {
    files
        .iter()
        .map(|f| Task {
            index: 0,
            total: 0,
            manifest: manifest(f, "ConfigMap", "v1", "default", f),
        })
        .collect()
}

fn files(b: &Buckets) -> Option<Vec<Vec<Vec<String>>>> {
    b.as_ref().map(|bs| {
        bs.iter()
            .map(|nodes| {
                nodes
                    .iter()
                    .map(|n| n.tasks.iter().map(|t| t.manifest.file.clone()).collect())
                    .collect()
            })
            .collect()
    })
}

fn v(x: &[&[&[&str]]]) -> Option<Vec<Vec<Vec<String>>>> {
    Some(
        x.iter()
            .map(|b| {
                b.iter()
                    .map(|n| n.iter().map(|s| s.to_string()).collect())
                    .collect()
            })
            .collect(),
    )
}

#[test]
fn c01_by_number_and_component_parallel_components() {
    let t = tasks(&["0000_01_a-b-c_file1", "0000_01_x-y-z_file2"]);
    assert_eq!(
        files(&by_number_and_component(&t)),
        v(&[&[&["0000_01_a-b-c_file1"], &["0000_01_x-y-z_file2"]]])
    );
}

#[test]
fn c03_by_number_and_component_trivial_inputs() {
    assert_eq!(files(&by_number_and_component(&tasks(&[]))), None);
    assert_eq!(files(&by_number_and_component(&tasks(&["a"]))), None);
    assert_eq!(
        files(&by_number_and_component(&tasks(&["0000_01_x-y-z_file1"]))),
        None
    );
    assert_eq!(
        files(&by_number_and_component(&tasks(&["a", "b", "c"]))),
        v(&[&[&["a", "b", "c"]]])
    );
    assert_eq!(
        files(&by_number_and_component(&tasks(&[
            "0000_01_x-y-z_file1",
            "0000_01_x-y-z_file2"
        ]))),
        v(&[&[&["0000_01_x-y-z_file1", "0000_01_x-y-z_file2"]]])
    );
}

#[test]
fn c04_serial_levels_coalesce() {
    let t = tasks(&["0000_10_a_x.yaml", "0000_10_b_y.yaml", "0000_20_a_z.yaml"]);
    assert_eq!(
        files(&by_number_and_component(&t)),
        v(&[
            &[&["0000_10_a_x.yaml"], &["0000_10_b_y.yaml"]],
            &[&["0000_20_a_z.yaml"]]
        ])
    );
    let t = tasks(&["0000_10_a_x.yaml", "0000_20_b_y.yaml"]);
    assert_eq!(
        files(&by_number_and_component(&t)),
        v(&[&[&["0000_10_a_x.yaml", "0000_20_b_y.yaml"]]])
    );
}

#[test]
fn c05_flatten_by_number_and_component() {
    assert_eq!(
        files(&flatten_by_number_and_component(&tasks(&["a", "b", "c"]))),
        v(&[&[&["a", "b", "c"]]]),
        "unparseable names coalesce into one node"
    );
    let three = flatten_by_number_and_component(&tasks(&["a", "0000_01_x-y-z_file1", "c"]));
    assert_eq!(files(&three), v(&[&[&["a", "0000_01_x-y-z_file1", "c"]]]));
    let t = tasks(&[
        "0000_01_a-b-c_file1",
        "0000_01_x-y-z_file1",
        "0000_01_x-y-z_file2",
        "0000_02_x-y-z_file2",
        "0000_02_x-y-z_file3",
    ]);
    assert_eq!(
        files(&flatten_by_number_and_component(&t)),
        v(&[&[
            &["0000_01_a-b-c_file1"],
            &["0000_01_x-y-z_file1", "0000_01_x-y-z_file2"],
            &["0000_02_x-y-z_file2", "0000_02_x-y-z_file3"],
        ]])
    );
}

fn pod(n: &str) -> Task {
    Task {
        index: 0,
        total: 0,
        manifest: manifest(n, "Pod", "v1", "default", n),
    }
}
fn job(n: &str) -> Task {
    Task {
        index: 0,
        total: 0,
        manifest: manifest(n, "Job", "batch/v1", "default", n),
    }
}

fn shape(g: &TaskGraph) -> Vec<(Vec<String>, Vec<usize>, Vec<usize>)> {
    g.nodes
        .iter()
        .map(|n| {
            (
                n.tasks.iter().map(|t| t.manifest.file.clone()).collect(),
                n.in_.clone(),
                n.out.clone(),
            )
        })
        .collect()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn c06_split_on_jobs_numbering() {
    let mut g = TaskGraph::new(vec![pod("p1"), pod("p2"), job("j"), pod("p3")]);
    g.split(|t| t.manifest.is_job());
    assert_eq!(
        shape(&g),
        vec![
            (s(&["j"]), vec![1], vec![2]),
            (s(&["p1", "p2"]), vec![], vec![0]),
            (s(&["p3"]), vec![0], vec![])
        ]
    );
    let mut g = TaskGraph::new(vec![job("j1"), pod("p1"), pod("p2"), job("j2")]);
    g.split(|t| t.manifest.is_job());
    assert_eq!(
        shape(&g),
        vec![
            (s(&["j1"]), vec![], vec![2]),
            (s(&["j2"]), vec![2], vec![]),
            (s(&["p1", "p2"]), vec![0], vec![1])
        ]
    );
    let mut g = TaskGraph::new(vec![pod("p"), job("j")]);
    g.split(|t| t.manifest.is_job());
    assert_eq!(
        shape(&g),
        vec![(s(&["j"]), vec![1], vec![]), (s(&["p"]), vec![], vec![0])]
    );
}

#[test]
fn c09_shift_order() {
    let b = |names: &[&str]| -> Buckets {
        Some(vec![
            tasks(names)
                .into_iter()
                .map(|t| TaskNode {
                    tasks: vec![t],
                    ..Default::default()
                })
                .collect(),
        ])
    };
    let three = ["01", "02", "03"];
    assert_eq!(
        files(&shift_order(b(&three), 1, 2)),
        v(&[&[&["02"], &["03"], &["01"]]])
    );
    assert_eq!(
        files(&shift_order(b(&three), 2, 3)),
        v(&[&[&["03"], &["01"], &["02"]]])
    );
    assert_eq!(
        files(&shift_order(b(&["01", "02"]), 1, 8)),
        v(&[&[&["02"], &["01"]]])
    );
    assert_eq!(
        files(&shift_order(b(&["01", "02"]), 2, 8)),
        v(&[&[&["01"], &["02"]]])
    );
}

/// Records executed task names; fails or cancels on named tasks.
struct Recorder {
    executed: Mutex<Vec<String>>,
    fail: Vec<(&'static str, &'static str)>,
    cancel_on: Option<&'static str>,
    outer: CancellationToken,
}

impl TaskRunner for Recorder {
    type Error = String;
    fn run<'a>(
        &'a self,
        _cancel: &'a CancellationToken,
        task: &'a Task,
    ) -> BoxFuture<'a, Result<(), String>> {
        async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            let name = task.manifest.file.as_str();
            if let Some((_, msg)) = self.fail.iter().find(|(n, _)| *n == name) {
                return Err(msg.to_string());
            }
            if self.cancel_on == Some(name) {
                self.outer.cancel();
            }
            self.executed.lock().unwrap().push(name.to_string());
            Ok(())
        }
        .boxed()
    }
}

fn graph(nodes: &[(&[&str], &[usize], &[usize])]) -> TaskGraph {
    TaskGraph {
        nodes: nodes
            .iter()
            .map(|(t, i, o)| TaskNode {
                in_: i.to_vec(),
                tasks: tasks(t),
                out: o.to_vec(),
            })
            .collect(),
    }
}

async fn run(
    g: &TaskGraph,
    workers: usize,
    fail: Vec<(&'static str, &'static str)>,
    cancel_on: Option<&'static str>,
) -> (Vec<String>, Vec<String>) {
    let outer = CancellationToken::new();
    let r = Recorder {
        executed: Mutex::new(Vec::new()),
        fail,
        cancel_on,
        outer: outer.clone(),
    };
    let errs = tokio::time::timeout(Duration::from_secs(5), run_graph(g, workers, &outer, &r))
        .await
        .expect("run_graph finishes within 5 s");
    let mut msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
    msgs.sort();
    let mut executed = r.executed.into_inner().unwrap();
    executed.sort();
    (executed, msgs)
}

#[tokio::test]
async fn c10_task_error_interrupts_node_processing() {
    let g = graph(&[
        (&["c"], &[2], &[]),
        (&["d"], &[2], &[3]),
        (&["a", "b"], &[], &[0, 1]),
        (&["e"], &[1], &[]),
    ]);
    let (executed, errs) = run(&g, 2, vec![("d", "error A")], None).await;
    assert_eq!(executed, s(&["a", "b", "c"]));
    assert_eq!(errs, s(&["error A"]));
}

#[tokio::test]
async fn c11_task_errors_in_parallel_nodes_both_reported() {
    let g = graph(&[
        (&["a"], &[], &[1]),
        (&["b"], &[0], &[2, 4, 8]),
        (&["c1"], &[1], &[3]),
        (&["c2"], &[2], &[7]),
        (&["d1"], &[1], &[5]),
        (&["d2"], &[4], &[6]),
        (&["d3"], &[5], &[7]),
        (&["e"], &[3, 6], &[]),
        (&["f"], &[1], &[]),
    ]);
    let (executed, errs) = run(&g, 2, vec![("c1", "error - c1"), ("f", "error - f")], None).await;
    assert_eq!(executed, s(&["a", "b", "d1", "d2", "d3"]));
    assert_eq!(errs, s(&["error - c1", "error - f"]));
}

#[tokio::test]
async fn c12_cancellation_without_task_errors_is_reported() {
    let g = graph(&[(&["a"], &[], &[1]), (&["b"], &[0], &[])]);
    let (executed, errs) = run(&g, 1, vec![], Some("a")).await;
    assert_eq!(executed, s(&["a"]));
    assert_eq!(
        errs,
        s(&[
            "1 incomplete task nodes, beginning with configmap \"default/b\" (0 of 0)",
            "context canceled"
        ])
    );
    // The error values themselves, not only their text.
    let outer = CancellationToken::new();
    outer.cancel();
    let r = Recorder {
        executed: Mutex::new(Vec::new()),
        fail: vec![],
        cancel_on: None,
        outer: outer.clone(),
    };
    let errs = run_graph(&g, 1, &outer, &r).await;
    assert!(
        matches!(
            errs.as_slice(),
            [GraphError::Incomplete { count: 2, .. }, GraphError::Canceled]
        ),
        "{errs:?}"
    );
}

#[tokio::test]
async fn c12_cancellation_starts_no_further_task_of_a_running_node() {
    // Upstream sync_worker.go `apply`: the node function checks the context before each task.
    // A SIGTERM mid-pass must not run the rest of a (possibly long) node.
    let g = graph(&[(&["a", "b", "c"], &[], &[1]), (&["d"], &[0], &[])]);
    let (executed, errs) = run(&g, 1, vec![], Some("a")).await;
    assert_eq!(executed, s(&["a"]));
    assert_eq!(
        errs,
        s(&[
            "2 incomplete task nodes, beginning with configmap \"default/a\" (0 of 0)",
            "context canceled"
        ])
    );
}

#[test]
fn c13_task_string() {
    let t = Task {
        index: 5,
        total: 10,
        manifest: manifest("f.json", "Ingress", "networking.k8s.io/v1", "foo", "file-json"),
    };
    assert_eq!(t.to_string(), "ingress \"foo/file-json\" (5 of 10)");
    let mut m = (*manifest("file-json", "X", "v1", "", "file-json")).clone();
    m.id.kind.clear();
    let t = Task {
        index: 0,
        total: 0,
        manifest: Arc::new(m),
    };
    assert_eq!(t.to_string(), " \"file-json\" (0 of 0)");
    let mut m = (*manifest("list_manifest.yaml", "List", "v1", "", "x")).clone();
    m.id.name.clear();
    let t = Task {
        index: 0,
        total: 0,
        manifest: Arc::new(m),
    };
    assert_eq!(t.to_string(), "list \"list_manifest.yaml\" (0 of 0)");
}

fn cvo_testdata(rel: &str, test: &str) -> Option<std::path::PathBuf> {
    upstream_fixture(&format!("cvo-repo/pkg/cvo/testdata/{rel}"), test)
}

#[test]
fn c14_load_update() {
    let Some(dir) = cvo_testdata("payloadtest", "c14_load_update") else {
        return;
    };
    let opts = LoadOptions {
        release_image: "image:1".into(),
        exclude_identifier: "exclude-test".into(),
        ..LoadOptions::default()
    };
    let p = payload::load_update(&dir, &opts).unwrap();
    let names: Vec<&str> = p.manifests.iter().map(|m| m.file.as_str()).collect();
    assert_eq!(
        names,
        ["0000_10_a_file.json", "0000_10_a_file.yaml", "0000_10_a_file.yml"]
    );
    assert_eq!(p.release.version, "1.0.0-abc");
    assert_eq!(p.release.image, "image:1");
    assert_eq!(p.release.url.as_deref(), Some("https://example.com/v1.0.0-abc"));
    assert_eq!(p.release.channels, s(&["channel-a", "channel-b", "channel-c"]));
    assert_eq!(p.release.architecture, None);
    assert_eq!(p.architecture, payload::load::runtime_architecture());
    assert_eq!(p.manifest_hash, "DL-FFQ2Uem8=");
    assert_eq!(p.previous, s(&["1.1.1", "1.2.2"]));
    assert_eq!(
        String::from_utf8(p.manifests[1].raw().into_owned()).unwrap(),
        r#"{"apiVersion":"v1","kind":"Test","metadata":{"annotations":{"include.release.openshift.io/self-managed-high-availability":"true"},"name":"file-yaml"}}"#
    );
    assert_eq!(p.excluded.len(), 1);
    assert_eq!(
        p.excluded[0].1.to_string(),
        "exclude.release.openshift.io/exclude-test=true"
    );
}

#[test]
fn c15_load_update_architecture() {
    let Some(dir) = cvo_testdata("payloadtestarch", "c15_load_update_architecture") else {
        return;
    };
    let p = payload::load_update(&dir, &LoadOptions::default()).unwrap();
    assert_eq!(p.release.architecture.as_deref(), Some("Multi"));
    assert_eq!(p.architecture, "Multi");
    assert_eq!(p.manifest_hash, "fvnVhLw92pE=");
}

#[test]
fn c16_unknown_template_fields_skip_the_file() {
    let Some(dir) = upstream_fixture("cvo-repo/pkg/payload/testdata/payload-unknown-template", "c16") else {
        return;
    };
    let opts = LoadOptions {
        release_image: "quay.io/rel:1".into(),
        ..LoadOptions::default()
    };
    let p = payload::load_update(&dir, &opts).unwrap();
    assert_eq!(p.manifests.len(), 1);
    assert_eq!(p.manifests[0].id.name, "valid-manifest");
    assert_eq!(p.manifests[0].object()["data"]["release-image"], "quay.io/rel:1");
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(
        p.warnings[0].contains("0000_50_unknown-field.yaml"),
        "{:?}",
        p.warnings
    );
}

fn cap_manifest(caps: &str, extra: serde_json::Value) -> Manifest {
    let mut ann = json!({"capability.openshift.io/name": caps});
    if let Some(o) = extra.as_object() {
        for (k, v) in o {
            ann[k] = v.clone();
        }
    }
    Manifest::from_object(
        json!({"apiVersion": "k8s.io/v1", "kind": "Test", "metadata": {"name": "name1", "namespace": "ns1", "annotations": ann}}),
        "file_1.yaml",
        0,
    )
    .unwrap()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn caps_cfg(enabled: &[&str], known: &[&str]) -> InclusionConfig {
    InclusionConfig {
        capabilities: Some(CapabilitiesStatus {
            known: set(known),
            enabled: set(enabled),
        }),
        ..InclusionConfig::default()
    }
}

#[test]
fn c17_implicitly_enabled_capabilities() {
    let current = vec![cap_manifest("cap1", json!({}))];
    let update = vec![cap_manifest("cap2", json!({}))];
    let cfg = caps_cfg(&["cap1"], &["cap1", "cap2"]);
    let none = BTreeSet::new();
    assert_eq!(
        implicitly_enabled_capabilities(&update, &current, &cfg, &cfg, &none),
        set(&["cap2"])
    );
    let unknown = caps_cfg(&["cap1"], &["cap1"]);
    assert_eq!(
        implicitly_enabled_capabilities(&update, &current, &unknown, &unknown, &none),
        set(&["cap2"])
    );
    let both = caps_cfg(&["cap1", "cap2"], &["cap1", "cap2"]);
    assert_eq!(
        implicitly_enabled_capabilities(&update, &current, &both, &both, &none),
        set(&[])
    );
    assert_eq!(
        implicitly_enabled_capabilities(&update, &current, &cfg, &cfg, &set(&["cap2"])),
        set(&["cap2"])
    );
    let excluded_current = vec![cap_manifest(
        "cap1",
        json!({"exclude.release.openshift.io/x": "true"}),
    )];
    let mut ex = cfg.clone();
    ex.exclude_identifier = Some("x".into());
    assert_eq!(
        implicitly_enabled_capabilities(&update, &excluded_current, &ex, &ex, &none),
        set(&[])
    );
    assert_eq!(
        implicitly_enabled_capabilities(&[] as &[Manifest], &current, &cfg, &cfg, &set(&["c9"])),
        set(&["c9"])
    );
    assert_eq!(
        implicitly_enabled_capabilities(&update, &[] as &[Manifest], &cfg, &cfg, &set(&["c9"])),
        set(&["c9"])
    );
}

#[test]
fn c17_fixture_pair_test1() {
    let Some(dir) = cvo_testdata("payloadcapabilitytest/test1", "c17_fixture_pair_test1") else {
        return;
    };
    let read = |sub: &str| {
        payload::load::read_manifest_dir(&dir.join(sub), "", &[], None)
            .unwrap()
            .manifests
    };
    let (current, update) = (read("current"), read("update"));
    let cfg = caps_cfg(&["cap1"], &["cap1", "cap2"]);
    assert_eq!(
        implicitly_enabled_capabilities(&update, &current, &cfg, &cfg, &BTreeSet::new()),
        set(&["cap2"])
    );
}

/// The rest of upstream pkg/payload/payload_test.go `TestGetImplicitlyEnabledCapabilities`, on
/// its fixture pairs (`test1` is [`c17_fixture_pair_test1`]): (directory, known, enabled,
/// implicitly enabled before, implicitly enabled after). A missing `current` or `update`
/// directory is an empty payload; `test10` lists its update manifest twice, as upstream does.
#[test]
fn c17_fixture_pairs() {
    let caps = |n: std::ops::RangeInclusive<u32>| -> Vec<String> { n.map(|i| format!("cap{i}")).collect() };
    let complex_known: Vec<String> = caps(1..=24)
        .into_iter()
        .chain(caps(111..=119))
        .chain(caps(1110..=1116))
        .collect();
    let complex_after: Vec<String> = ["cap000".to_string()]
        .into_iter()
        .chain(caps(111..=119))
        .chain(caps(1110..=1116))
        .collect();
    let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    #[allow(clippy::type_complexity)]
    let cases: Vec<(&str, Vec<String>, Vec<String>, Vec<String>, Vec<String>)> = vec![
        ("test2", v(&[]), v(&[]), v(&[]), v(&[])),
        ("test3", v(&["cap2"]), v(&["cap2"]), v(&[]), v(&[])),
        (
            "test4",
            v(&["cap1", "cap2"]),
            v(&["cap1", "cap2"]),
            v(&[]),
            v(&[]),
        ),
        (
            "test5",
            v(&["cap1", "cap2"]),
            v(&["cap1"]),
            v(&["cap2"]),
            v(&["cap2"]),
        ),
        ("test6", v(&["cap1", "cap2"]), v(&["cap1"]), v(&[]), v(&["cap2"])),
        (
            "test7",
            complex_known,
            caps(1..=24),
            v(&["cap000", "cap111", "cap112", "cap113", "cap114"]),
            complex_after,
        ),
        ("test8", v(&["cap1"]), v(&["cap1"]), v(&["cap1"]), v(&["cap1"])),
        ("test9", v(&["cap1"]), v(&["cap1"]), v(&["cap1"]), v(&["cap1"])),
        ("test10", v(&["cap1", "cap2"]), v(&["cap1"]), v(&[]), v(&["cap2"])),
    ];
    for (test, known, enabled, before, after) in cases {
        let Some(dir) = cvo_testdata(&format!("payloadcapabilitytest/{test}"), "c17_fixture_pairs") else {
            return;
        };
        let read = |sub: &str| {
            let d = dir.join(sub);
            if !d.exists() {
                return Vec::new();
            }
            payload::load::read_manifest_dir(&d, "", &[], None)
                .unwrap()
                .manifests
        };
        let (current, mut update) = (read("current"), read("update"));
        if test == "test10" {
            update.push(update[0].clone());
        }
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let enabled: Vec<&str> = enabled.iter().map(String::as_str).collect();
        let cfg = caps_cfg(&enabled, &known);
        let before: BTreeSet<String> = before.into_iter().collect();
        let after: BTreeSet<String> = after.into_iter().collect();
        assert_eq!(
            implicitly_enabled_capabilities(&update, &current, &cfg, &cfg, &before),
            after,
            "{test}"
        );
    }
}

#[test]
fn c69_set_capabilities() {
    let none = BTreeSet::new();
    let c = capability::set_capabilities(None, &[], &none);
    let vcurrent: BTreeSet<String> = capability::baseline_set("vCurrent")
        .unwrap()
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(c.enabled, vcurrent);
    assert_eq!(
        c.known.len(),
        capability::KNOWN_CAPABILITIES.len() - 2,
        "gated ClusterAPI/CompatibilityRequirements absent"
    );
    assert!(!c.known.contains("ClusterAPI") && !c.known.contains("CompatibilityRequirements"));
    let spec = |b: &str, add: &[&str]| CapabilitiesSpec {
        baseline_capability_set: Some(b.into()),
        additional_enabled_capabilities: add.iter().map(|s| s.to_string()).collect(),
    };
    assert!(
        capability::set_capabilities(Some(&spec("None", &[])), &[], &none)
            .enabled
            .is_empty()
    );
    assert_eq!(
        capability::set_capabilities(Some(&spec("v4.11", &[])), &[], &none).enabled,
        set(&["MachineAPI", "baremetal", "marketplace", "openshift-samples"])
    );
    assert_eq!(
        capability::set_capabilities(Some(&spec("None", &["cap1", "cap2", "cap3"])), &[], &none).enabled,
        set(&["cap1", "cap2", "cap3"])
    );
    let gated = capability::set_capabilities(
        Some(&spec("None", &["ClusterAPI", "CompatibilityRequirements"])),
        &[],
        &none,
    );
    assert!(gated.enabled.is_empty(), "{:?}", gated.enabled);
}

#[test]
fn c81_major_version_manifest_filtering() {
    let Some(dir) = cvo_testdata("majorversiontest-v5", "c81") else {
        return;
    };
    let p = payload::load_update(&dir, &LoadOptions::default()).unwrap();
    assert_eq!(p.parsed_version.major, 5);
    let names: Vec<&str> = p.manifests.iter().map(|m| m.id.name.as_str()).collect();
    assert_eq!(
        names,
        ["noversion", "version5only", "version4or5", "excludeversion3"]
    );
    assert_eq!(p.excluded.len(), 1);
    assert_eq!(p.excluded[0].0.id.name, "version4only");
    assert_eq!(
        p.excluded[0].1.to_string(),
        "major version 5 does not match any required versions"
    );
    // Only FeatureGate and CRD objects may carry the annotation.
    let cm = Manifest::from_object(
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x", "annotations": {"release.openshift.io/major-version": "5"}}}),
        "f.yaml",
        0,
    )
    .unwrap();
    let cfg = InclusionConfig {
        major_version: Some(5),
        ..InclusionConfig::default()
    };
    assert_eq!(
        include(&cm, &cfg).unwrap_err().to_string(),
        "major version filtering is only supported for feature gates and custom resources"
    );
}

#[test]
fn c82_feature_gate_manifest_inclusion() {
    let Some(dir) = cvo_testdata("featuregatetest", "c82") else {
        return;
    };
    let load = |gates: &[&str]| {
        let opts = LoadOptions {
            enabled_feature_gates: set(gates),
            ..LoadOptions::default()
        };
        let p = payload::load_update(&dir, &opts).unwrap();
        p.manifests.iter().map(|m| m.id.name.clone()).collect::<Vec<_>>()
    };
    assert_eq!(load(&[]), s(&["always-included", "legacy-excluded"]));
    assert_eq!(
        load(&["ExperimentalFeature"]),
        s(&["always-included", "experimental-feature", "legacy-excluded"])
    );
    assert_eq!(load(&["LegacyFeature"]), s(&["always-included"]));
    let p = payload::load_update(&dir, &LoadOptions::default()).unwrap();
    let reasons: Vec<String> = p.excluded.iter().map(|(_, r)| r.to_string()).collect();
    assert_eq!(
        reasons,
        s(&["feature gate ExperimentalFeature is required but not enabled"])
    );
}
