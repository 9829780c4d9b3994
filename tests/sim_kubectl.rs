//! What kubectl needs from the simulator: `/version`, OpenAPI v3 with server-side field
//! validation, and server-side `Table` answers with the OpenShift printer columns; checked
//! on the HTTP answers in process, then with kubectl itself against `cvo sim serve` (skipped
//! with a printed reason when kubectl is absent; a failure under CI).

use std::{ffi::OsStr, process::Stdio, time::Duration};

use cvo::sim::{Simulator, demo_cluster};
use serde_json::Value;

mod common;

async fn get(sim: &Simulator, path: &str, accept: &str) -> Value {
    let client = kube::Client::new(sim.clone(), "default");
    let req = http::Request::get(path)
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .expect("request");
    client.request::<Value>(req).await.expect(path)
}

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

fn headers(table: &Value) -> Vec<&str> {
    table["columnDefinitions"]
        .as_array()
        .expect("columnDefinitions")
        .iter()
        .filter(|c| c["priority"] == 0)
        .map(|c| c["name"].as_str().unwrap_or_default())
        .collect()
}

fn row<'a>(table: &'a Value, name: &str) -> &'a Vec<Value> {
    table["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["cells"].as_array().expect("cells"))
        .find(|c| c[0] == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

#[tokio::test]
async fn version_and_openapi_v3_with_field_validation() {
    let sim = demo_cluster().expect("demo");
    let v = get(&sim, "/version", "application/json").await;
    assert_eq!(
        (v["major"].as_str(), v["minor"].as_str()),
        (Some("1"), Some("36"))
    );
    assert!(v["gitVersion"].as_str().is_some_and(|g| g.starts_with("v1.36.")));

    let root = get(&sim, "/openapi/v3", "application/json").await;
    let url = root["paths"]["apis/config.openshift.io/v1"]["serverRelativeURL"]
        .as_str()
        .expect("config.openshift.io/v1 listed");
    assert!(
        url.starts_with("/openapi/v3/apis/config.openshift.io/v1?hash="),
        "{url}"
    );
    assert!(root["paths"]["api/v1"].is_object());
    let doc = get(&sim, url, "application/json").await;
    let patch = &doc["paths"]["/apis/config.openshift.io/v1/clusteroperators/{name}"]["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"]["kind"],
        "ClusterOperator"
    );
    let params: Vec<&str> = patch["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .map(|p| p["name"].as_str().unwrap_or_default())
        .collect();
    assert!(params.contains(&"fieldValidation"), "{params:?}");
    let core = get(&sim, "/openapi/v3/api/v1", "application/json").await;
    assert!(core["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"].is_object());
}

#[tokio::test]
async fn tables_carry_the_openshift_printer_columns() {
    let sim = demo_cluster().expect("demo");
    let co = get(&sim, "/apis/config.openshift.io/v1/clusteroperators", TABLE).await;
    assert_eq!(co["kind"], "Table");
    assert_eq!(
        headers(&co),
        ["Name", "Version", "Available", "Progressing", "Degraded", "Since"]
    );
    let mc = row(&co, "machine-config");
    assert_eq!(mc[1], "4.16.3");
    assert_eq!((mc[2].as_str(), mc[4].as_str()), (Some("True"), Some("False")));
    assert!(
        mc[5]
            .as_str()
            .is_some_and(|s| s.ends_with('d') || s.ends_with('h')),
        "age {}",
        mc[5]
    );
    // Rows carry the object's metadata (includeObject=Metadata, the default).
    assert_eq!(co["rows"][0]["object"]["kind"], "PartialObjectMetadata");

    let cv = get(
        &sim,
        "/apis/config.openshift.io/v1/clusterversions/version",
        TABLE,
    )
    .await;
    assert_eq!(
        headers(&cv),
        ["Name", "Version", "Available", "Progressing", "Since", "Status"]
    );
    assert_eq!(row(&cv, "version")[1], "4.16.3");

    let mcp = get(
        &sim,
        "/apis/machineconfiguration.openshift.io/v1/machineconfigpools",
        TABLE,
    )
    .await;
    assert_eq!(headers(&mcp)[1..5], ["Config", "Updated", "Updating", "Degraded"]);
    assert!(row(&mcp, "master")[5].is_number(), "MachineCount is a number");

    let nodes = get(&sim, "/api/v1/nodes", TABLE).await;
    assert_eq!(headers(&nodes), ["Name", "Status", "Roles", "Age", "Version"]);
    let first = &nodes["rows"][0]["cells"];
    assert!(
        ["Ready", "NotReady", "Unknown"]
            .iter()
            .any(|s| first[1].as_str().is_some_and(|c| c.starts_with(s))),
        "{first}"
    );

    // Without the Table Accept header the same path answers the plain list.
    let plain = get(&sim, "/api/v1/nodes", "application/json").await;
    assert_eq!(plain["kind"], "NodeList");
}

/// `cvo sim serve` with the demo snapshot; kubectl against it.
#[test]
fn kubectl_get_prints_the_openshift_columns_and_apply_needs_no_flags() {
    const TEST: &str = "kubectl_get_prints_the_openshift_columns_and_apply_needs_no_flags";
    if std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_err()
    {
        common::skip(TEST, "kubectl not found on PATH");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let args: Vec<&OsStr> = vec![OsStr::new("--from"), demo.as_os_str()];
    let (mut child, _) = common::spawn_sim_serve(&kubeconfig, &args, Stdio::null(), Duration::from_secs(30));
    let kubectl = |args: &[&str]| {
        let out = std::process::Command::new("kubectl")
            .env("KUBECONFIG", &kubeconfig)
            .args(args)
            .output()
            .expect("kubectl runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let get = kubectl(&["get", "co,clusterversion,mcp,nodes"]);
    let version = kubectl(&["version", "-o", "json"]);
    let manifest = dir.path().join("cm.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: demo}\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t1, namespace: demo}\ndata: {a: b}\n",
    )
    .expect("manifest");
    let apply = kubectl(&["apply", "-f", &manifest.to_string_lossy()]);
    let _ = child.kill();
    let _ = child.wait();

    assert!(get.0, "kubectl get failed: {}", get.2);
    let lines: Vec<&str> = get.1.lines().collect();
    let header = |first: &str| {
        lines
            .iter()
            .find(|l| l.split_whitespace().nth(1) == Some(first))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
    };
    assert_eq!(
        header("VERSION").expect("a VERSION header"),
        ["NAME", "VERSION", "AVAILABLE", "PROGRESSING", "DEGRADED", "SINCE"]
    );
    assert!(
        lines.iter().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["NAME", "VERSION", "AVAILABLE", "PROGRESSING", "SINCE", "STATUS"]),
        "clusterversion header missing:\n{}",
        get.1
    );
    assert!(header("CONFIG").is_some(), "mcp header missing:\n{}", get.1);
    assert!(
        lines.iter().any(
            |l| l.split_whitespace().collect::<Vec<_>>() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
        ),
        "nodes header missing:\n{}",
        get.1
    );
    assert!(
        lines.iter().any(
            |l| l.starts_with("clusteroperator.config.openshift.io/machine-config ")
                && l.split_whitespace().nth(1) == Some("4.16.3")
        ),
        "{}",
        get.1
    );
    assert!(version.0, "kubectl version failed: {}", version.2);
    assert!(version.1.contains("\"serverVersion\""), "{}", version.1);
    assert!(apply.0, "kubectl apply failed: {}", apply.2);
    assert!(apply.1.contains("configmap/t1 created"), "{}", apply.1);
}
