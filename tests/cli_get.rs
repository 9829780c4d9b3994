//! `cvo get` run as a user runs it: the real binary on snapshot files.

/// The one runner of the tests (`common::cvo_offline`): no KUBECONFIG, logging off.
fn cvo(args: &[&str]) -> (i32, String, String) {
    common::cvo_offline(args)
}

fn local(name: &str) -> String {
    format!("{}/tests/fixtures/snapshots/{name}", env!("CARGO_MANIFEST_DIR"))
}

mod common;

fn shared(rel: &str) -> Option<String> {
    common::upstream_fixture(rel, rel).map(|p| p.to_string_lossy().into_owned())
}

#[test]
fn clusterversion_without_completed_history_has_empty_version() {
    let (code, out, err) = cvo(&["get", "clusterversion", "--from", &local("partial-history.yaml")]);
    assert_eq!(code, 0, "{err}");
    // Snapshot time is the newest condition (11:00 from etcd) + 368975ns: Progressing is 1h old.
    assert_eq!(
        out,
        "NAME      VERSION   AVAILABLE   PROGRESSING   SINCE   STATUS\n\
         version             False       True          60m     Working towards 4.16.4: 512 of 905 done (56% complete) waiting on etcd\n"
    );
}

#[test]
fn clusteroperators_multiline_message_stays_on_one_row() {
    let (code, out, err) = cvo(&["get", "co", "--from", &local("partial-history.yaml")]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(
        lines[1],
        "etcd   4.16.4    True        True          False      30m     NodeInstallerProgressing: 1 node is at revision 7 and 2 at revision 8"
    );
}

#[test]
fn get_reads_a_must_gather_directory() {
    let Some(dir) = shared("must-gather-clean-snapshots/azure") else {
        return;
    };
    let (code, out, err) = cvo(&["get", "cv", "--from", &dir]);
    assert_eq!(code, 0, "{err}");
    let row = out.lines().nth(1).expect("a row");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[..4], ["version", "4.8.11", "True", "False"], "{out}");
}

#[test]
fn get_reads_insights_archive_json_without_kind() {
    let Some(file) = shared("insights-operator/archive-sample-version.json") else {
        return;
    };
    let (code, out, err) = cvo(&["get", "cv", "--from", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|r| r.starts_with("version   4.7.16 ")),
        "{out}"
    );
}

#[test]
fn bad_input_is_a_one_line_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("broken.yaml");
    std::fs::write(&bad, "kind: ClusterVersion\nstatus: [\n").expect("write");
    let (code, out, err) = cvo(&["get", "cv", "--from", &bad.to_string_lossy()]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("broken.yaml"), "{err}");

    let (code, _, err) = cvo(&["get", "cv", "--from", "/no/such/snapshot"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("cvo: /no/such/snapshot: "), "{err}");

    let (code, _, err) = cvo(&["get", "widgets", "--from", &local("partial-history.yaml")]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown kind"), "{err}");
}

#[test]
fn broken_kubeconfig_is_a_one_line_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, "apiVersion: v1\nclusters: [\n").expect("write");
    let (code, _, err) = cvo(&["get", "cv", "--kubeconfig", &kc.to_string_lossy()]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("cvo: kubeconfig {}: ", kc.display())),
        "{err}"
    );
}

#[test]
fn snapshot_without_clusterversion_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("nodes.yaml");
    std::fs::write(&f, "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n").expect("write");
    let (code, _, err) = cvo(&["get", "cv", "--from", &f.to_string_lossy()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("clusterversions.config.openshift.io \"version\" not found"),
        "{err}"
    );
}

#[test]
fn kubeconfig_context_errors_name_the_context() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: u, user: {token: t}}]\ncontexts: [{name: ctx, context: {cluster: c, user: u}}]\n\
         current-context: ''\n",
    )
    .expect("write");
    let kcs = kc.to_string_lossy();
    let (code, _, err) = cvo(&["get", "cv", "--kubeconfig", &kcs]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no current-context set; pass --context NAME (contexts: ctx)"),
        "{err}"
    );
    let (code, _, err) = cvo(&["get", "cv", "--kubeconfig", &kcs, "--context", "prod"]);
    assert_eq!(code, 1);
    assert!(err.contains("no context named \"prod\" (contexts: ctx)"), "{err}");
    // A closed port on loopback: the error names the server and context, on one line.
    let (code, _, err) = cvo(&["get", "cv", "--kubeconfig", &kcs, "--context", "ctx"]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cvo: https://127.0.0.1:1/ (context \"ctx\"): "),
        "{err}"
    );
}

/// A small cluster: the ClusterVersion fixes the snapshot's time (2024-06-01T11:00:00Z), a pool,
/// a ready control-plane node and a cordoned, not-ready worker.
fn nodes_and_pools(dir: &std::path::Path) -> String {
    let f = dir.join("cluster.yaml");
    std::fs::write(
        &f,
        r#"apiVersion: config.openshift.io/v1
kind: ClusterVersion
metadata: {name: version}
status:
  desired: {version: 4.16.3}
  history: [{state: Completed, version: 4.16.3, startedTime: "2024-06-01T09:00:00Z"}]
  conditions:
  - {type: Available, status: "True", lastTransitionTime: "2024-06-01T11:00:00Z"}
  - {type: Progressing, status: "False", lastTransitionTime: "2024-06-01T11:00:00Z", message: Cluster version is 4.16.3}
---
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfigPool
metadata: {name: master, creationTimestamp: "2024-05-01T11:00:00Z"}
status:
  configuration: {name: rendered-master-1a2b}
  machineCount: 3
  readyMachineCount: 2
  updatedMachineCount: 3
  degradedMachineCount: 0
  conditions:
  - {type: Updated, status: "True", lastTransitionTime: "2024-06-01T10:00:00Z"}
  - {type: Updating, status: "False", lastTransitionTime: "2024-06-01T10:00:00Z"}
  - {type: Degraded, status: "False", lastTransitionTime: "2024-06-01T10:00:00Z"}
---
apiVersion: v1
kind: Node
metadata:
  name: master-0
  creationTimestamp: "2024-05-31T05:00:00Z"
  labels: {node-role.kubernetes.io/master: "", node-role.kubernetes.io/control-plane: ""}
  managedFields: [{manager: kubelet, operation: Update}]
status:
  conditions: [{type: Ready, status: "True"}]
  addresses: [{type: InternalIP, address: 10.0.0.10}, {type: Hostname, address: master-0}]
  nodeInfo: {kubeletVersion: v1.29.6+aba1e8d, osImage: "Red Hat Enterprise Linux CoreOS 416.94", kernelVersion: 5.14.0-427.el9.x86_64, containerRuntimeVersion: cri-o://1.29.6, machineID: m, systemUUID: s, bootID: b, kubeProxyVersion: "", operatingSystem: linux, architecture: amd64}
---
apiVersion: v1
kind: Node
metadata:
  name: worker-0
  creationTimestamp: "2024-06-01T10:55:00Z"
  labels: {kubernetes.io/role: worker}
spec: {unschedulable: true}
status:
  conditions: [{type: Ready, status: "False"}]
"#,
    )
    .expect("write");
    f.to_string_lossy().into_owned()
}

#[test]
fn get_nodes_prints_kubectls_columns_and_wide() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = nodes_and_pools(dir.path());
    let (code, out, err) = cvo(&["get", "nodes", "--from", &f]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "NAME       STATUS                        ROLES                  AGE   VERSION\n\
         master-0   Ready                         control-plane,master   30h   v1.29.6+aba1e8d\n\
         worker-0   NotReady,SchedulingDisabled   worker                 5m    \n"
    );
    let (code, out, err) = cvo(&["get", "no", "master-0", "-o", "wide", "--from", &f]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "NAME       STATUS   ROLES                  AGE   VERSION           INTERNAL-IP   EXTERNAL-IP   OS-IMAGE                                 KERNEL-VERSION          CONTAINER-RUNTIME\n\
         master-0   Ready    control-plane,master   30h   v1.29.6+aba1e8d   10.0.0.10     <none>        Red Hat Enterprise Linux CoreOS 416.94   5.14.0-427.el9.x86_64   cri-o://1.29.6\n"
    );
}

#[test]
fn get_machineconfigpools_prints_the_crd_columns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = nodes_and_pools(dir.path());
    let (code, out, err) = cvo(&["get", "mcp", "--from", &f]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "NAME     CONFIG                 UPDATED   UPDATING   DEGRADED   MACHINECOUNT   READYMACHINECOUNT   UPDATEDMACHINECOUNT   DEGRADEDMACHINECOUNT   AGE\n\
         master   rendered-master-1a2b   True      False      False      3              2                   3                     0                      31d\n"
    );
}

#[test]
fn get_output_name_json_and_yaml() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = nodes_and_pools(dir.path());
    let (code, out, err) = cvo(&["get", "nodes", "-o", "name", "--from", &f]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "node/master-0\nnode/worker-0\n");
    let (_, out, _) = cvo(&["get", "cv", "-o", "name", "--from", &f]);
    assert_eq!(out, "clusterversion.config.openshift.io/version\n");
    // One object by name: the object itself, apiVersion and kind first, no managedFields.
    let (code, out, err) = cvo(&["get", "node", "master-0", "-o", "json", "--from", &f]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        (v["apiVersion"].as_str(), v["kind"].as_str()),
        (Some("v1"), Some("Node"))
    );
    assert_eq!(v["metadata"]["name"], "master-0");
    assert!(v["metadata"].get("managedFields").is_none(), "{out}");
    assert!(
        out.starts_with("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Node\","),
        "{out}"
    );
    // No name: a List.
    let (code, out, err) = cvo(&["get", "mcp", "-o", "yaml", "--from", &f]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_norway::from_str(&out).expect("yaml");
    assert_eq!(v["kind"], "List");
    assert_eq!(v["items"][0]["kind"], "MachineConfigPool");
    assert_eq!(
        v["items"][0]["apiVersion"],
        "machineconfiguration.openshift.io/v1"
    );
    assert_eq!(v["items"][0]["status"]["machineCount"], 3);
}

#[test]
fn unknown_kinds_and_names_say_what_exists() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = nodes_and_pools(dir.path());
    let (code, out, err) = cvo(&["get", "pods", "--from", &f]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert_eq!(
        err,
        "cvo: unknown kind \"pods\"; known kinds: clusterversion (cv), clusteroperators (co), \
         machineconfigpools (mcp), nodes (no)\n"
    );
    let (code, _, err) = cvo(&["get", "node", "nope", "--from", &f]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("cvo: nodes \"nope\" not found in "), "{err}");
    // Kinds without objects: kubectl's line.
    let (code, out, _) = cvo(&["get", "co", "--from", &f]);
    assert_eq!((code, out.as_str()), (0, "No resources found\n"));
}
