//! What kubectl needs from the simulator: `/version`, OpenAPI v3 with server-side field
//! validation, server-side `Table` answers with the OpenShift printer columns, and protobuf
//! request bodies of built-in kinds (kubectl's captured bodies; `415` for custom resources,
//! `400` for a malformed one; `tests/kubectl_protobuf.rs` compares with a real server); checked
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
        [
            "Name",
            "Version",
            "Available",
            "Progressing",
            "Degraded",
            "Since",
            "Message"
        ]
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

async fn answer(sim: &Simulator, req: http::Request<Vec<u8>>) -> (u16, String, Value) {
    let client = kube::Client::new(sim.clone(), "default");
    match client.request::<Value>(req).await {
        Ok(v) => (200, String::new(), v),
        Err(kube::Error::Api(s)) => (s.code, s.reason.clone(), Value::String(s.message.clone())),
        Err(e) => panic!("{e}"),
    }
}

#[tokio::test]
async fn table_watch_events_carry_the_printer_columns() {
    use futures::TryStreamExt;
    let sim = demo_cluster().expect("demo");
    let list = get(&sim, "/apis/config.openshift.io/v1/clusteroperators", TABLE).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    let client = kube::Client::new(sim.clone(), "default");
    let req = http::Request::get(format!(
        "/apis/config.openshift.io/v1/clusteroperators?watch=true&resourceVersion={rv}&timeoutSeconds=5"
    ))
    .header(http::header::ACCEPT, TABLE)
    .body(Vec::new())
    .expect("request");
    let events = client.request_events::<Value>(req).await.expect("watch");
    futures::pin_mut!(events);
    for version in ["9.9.8", "9.9.9"] {
        let mut dns = sim
            .get("config.openshift.io", "clusteroperators", "", "dns")
            .expect("dns");
        dns["status"]["versions"] = serde_json::json!([{"name": "operator", "version": version}]);
        sim.update_status(dns).expect("status write");
    }
    let mut tables = Vec::new();
    while tables.len() < 2 {
        match events.try_next().await.expect("event") {
            Some(kube::api::WatchEvent::Modified(t)) => tables.push(t),
            Some(other) => panic!("unexpected event {other:?}"),
            None => panic!("watch ended after {} events", tables.len()),
        }
    }
    assert_eq!(tables[0]["kind"], "Table");
    // Column definitions in the first event only (kube-apiserver sets NoHeaders after it).
    assert_eq!(
        headers(&tables[0]),
        [
            "Name",
            "Version",
            "Available",
            "Progressing",
            "Degraded",
            "Since",
            "Message"
        ]
    );
    assert!(tables[1]["columnDefinitions"].is_null(), "{}", tables[1]);
    assert_eq!(row(&tables[0], "dns")[1], "9.9.8");
    assert_eq!(row(&tables[1], "dns")[1], "9.9.9");
    assert_eq!(tables[1]["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

fn protobuf_fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/protobuf/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn protobuf_post(path: &str, body: Vec<u8>) -> http::Request<Vec<u8>> {
    http::Request::post(path)
        .header(http::header::CONTENT_TYPE, "application/vnd.kubernetes.protobuf")
        .header(
            http::header::ACCEPT,
            "application/vnd.kubernetes.protobuf,application/json",
        )
        .body(body)
        .expect("request")
}

#[tokio::test]
async fn protobuf_bodies_of_built_in_kinds_are_decoded_and_refused_for_custom_resources() {
    let sim = demo_cluster().expect("demo");
    // kubectl v1.32's `create namespace x` (captured): created, answered in JSON.
    let req = protobuf_post(
        "/api/v1/namespaces",
        protobuf_fixture("kubectl-1.32-namespace.pb"),
    );
    let (code, _, ns) = answer(&sim, req).await;
    assert_eq!((code, ns["kind"].as_str()), (200, Some("Namespace")));
    assert_eq!(ns["metadata"]["name"], "x");
    assert_eq!(ns["status"]["phase"], "Active");
    let req = protobuf_post(
        "/api/v1/namespaces/x/configmaps",
        protobuf_fixture("kubectl-1.32-configmap.pb"),
    );
    let (code, _, cm) = answer(&sim, req).await;
    assert_eq!(code, 200, "{cm}");
    assert_eq!(cm["data"], serde_json::json!({"a": "b", "c": "d"}));
    // `kubectl auth can-i get pods`: allowed, nothing stored.
    let req = protobuf_post(
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        protobuf_fixture("kubectl-1.32-selfsubjectaccessreview.pb"),
    );
    let (code, _, review) = answer(&sim, req).await;
    assert_eq!(code, 200, "{review}");
    assert_eq!(review["status"], serde_json::json!({"allowed": true}));
    assert_eq!(review["spec"]["resourceAttributes"]["resource"], "pods");
    // A custom resource has no protobuf form: 415, as kube-apiserver answers for a CRD.
    let req = protobuf_post(
        "/apis/config.openshift.io/v1/clusteroperators",
        b"k8s\0\n\x29\n\x16config.openshift.io/v1\x12\x0fClusterOperator".to_vec(),
    );
    let (code, reason, message) = answer(&sim, req).await;
    assert_eq!((code, reason.as_str()), (415, "UnsupportedMediaType"));
    assert_eq!(
        message,
        "the body of the request was in an unknown format - accepted media types include: \
         application/json, application/yaml"
    );
    // Not protobuf at all: 400 with kube-apiserver's text.
    let req = protobuf_post("/api/v1/namespaces", b"garbage".to_vec());
    let (code, reason, message) = answer(&sim, req).await;
    assert_eq!((code, reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        message,
        "the object provided is unrecognized (must be of type Namespace): provided data does \
         not appear to be a protobuf message, expected prefix [107 56 115 0] (67617262616765)"
    );
    // A ConfigMap's body sent to the namespaces: refused as the JSON one is.
    let req = protobuf_post(
        "/api/v1/namespaces",
        protobuf_fixture("kubectl-1.32-configmap.pb"),
    );
    let (code, reason, message) = answer(&sim, req).await;
    assert_eq!((code, reason.as_str()), (400, "BadRequest"), "{message}");
    assert!(
        message
            .as_str()
            .is_some_and(|m| m.starts_with("ConfigMap in version \"v1\" cannot be handled as a Namespace")),
        "{message}"
    );
    // Another media type still is 415.
    let req = http::Request::post("/api/v1/namespaces")
        .header(http::header::CONTENT_TYPE, "application/cbor")
        .body(vec![0xa0])
        .expect("request");
    let (code, reason, _) = answer(&sim, req).await;
    assert_eq!((code, reason.as_str()), (415, "UnsupportedMediaType"));
    // Protobuf first, JSON after it: answered in JSON.
    let req = http::Request::get("/api/v1/namespaces/openshift-machine-config-operator")
        .header(
            http::header::ACCEPT,
            "application/vnd.kubernetes.protobuf,application/json",
        )
        .body(Vec::new())
        .expect("request");
    let (code, _, ns) = answer(&sim, req).await;
    assert_eq!((code, ns["kind"].as_str()), (200, Some("Namespace")));
    // Protobuf only: 406.
    let req = http::Request::get("/openapi/v2")
        .header(
            http::header::ACCEPT,
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        )
        .body(Vec::new())
        .expect("request");
    let (code, reason, _) = answer(&sim, req).await;
    assert_eq!((code, reason.as_str()), (406, "NotAcceptable"));
    // A YAML body is decoded.
    let req = http::Request::post("/api/v1/namespaces")
        .header(http::header::CONTENT_TYPE, "application/yaml")
        .body(b"apiVersion: v1\nkind: Namespace\nmetadata: {name: from-yaml}\n".to_vec())
        .expect("request");
    let (code, _, created) = answer(&sim, req).await;
    assert_eq!(
        (code, created["metadata"]["name"].as_str()),
        (200, Some("from-yaml"))
    );
}

#[tokio::test]
async fn openapi_v2_in_json_and_schemas_with_top_level_fields() {
    let sim = demo_cluster().expect("demo");
    let v2 = get(&sim, "/openapi/v2", "application/json").await;
    assert_eq!(v2["swagger"], "2.0");
    let put = &v2["paths"]["/apis/config.openshift.io/v1/clusteroperators/{name}"]["put"];
    let body = put["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .find(|p| p["in"] == "body")
        .expect("a body parameter");
    assert_eq!(
        body["schema"]["$ref"],
        "#/definitions/config.openshift.io.v1.ClusterOperator"
    );
    let co = &v2["definitions"]["config.openshift.io.v1.ClusterOperator"];
    assert_eq!(co["properties"]["spec"]["type"], "object");
    assert_eq!(
        co["x-kubernetes-group-version-kind"][0]["kind"],
        "ClusterOperator"
    );
    // v3 carries the same schema; a CRD-defined kind gets its CRD's openAPIV3Schema.
    let v3 = get(
        &sim,
        "/openapi/v3/apis/config.openshift.io/v1",
        "application/json",
    )
    .await;
    assert_eq!(
        v3["components"]["schemas"]["config.openshift.io.v1.ClusterOperator"]["properties"]["status"]["type"],
        "object"
    );
    let client = kube::Client::new(sim.clone(), "default");
    let crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "description": "How big."}}}}}}}]},
        }))
        .expect("crd");
    kube::Api::all(client)
        .create(&kube::api::PostParams::default(), &crd)
        .await
        .expect("create crd");
    let doc = get(&sim, "/openapi/v3/apis/example.com/v1", "application/json").await;
    assert_eq!(
        doc["components"]["schemas"]["example.com.v1.Widget"]["properties"]["spec"]["properties"]["size"]["description"],
        "How big."
    );
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
    let explain = kubectl(&["explain", "co.spec"]);
    let raw_v2 = kubectl(&["get", "--raw", "/openapi/v2"]);
    let create_ns = kubectl(&["create", "namespace", "from-kubectl"]);
    // kubectl get -w: a Table watch; the change below shows as a row with the columns.
    let mut watch = std::process::Command::new("kubectl")
        .env("KUBECONFIG", &kubeconfig)
        .args(["get", "co", "dns", "-w", "--request-timeout=20s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get -w");
    let lines = std::sync::mpsc::channel::<String>();
    let stdout = watch.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        use std::io::BufRead;
        for l in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.0.send(l);
        }
    });
    let mut watched = Vec::new();
    while let Ok(l) = lines.1.recv_timeout(Duration::from_secs(15)) {
        watched.push(l);
        if watched.len() == 2 {
            // Header and the listed row are out: change the object.
            let status =
                serde_json::json!({"status": {"versions": [{"name": "operator", "version": "9.9.9"}]}});
            let patch = kubectl(&[
                "patch",
                "co",
                "dns",
                "--subresource=status",
                "--type=merge",
                "-p",
                &status.to_string(),
            ]);
            assert!(patch.0, "kubectl patch failed: {}", patch.2);
        }
        if watched.len() == 3 {
            break;
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
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
        [
            "NAME",
            "VERSION",
            "AVAILABLE",
            "PROGRESSING",
            "DEGRADED",
            "SINCE",
            "MESSAGE"
        ]
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
    assert!(explain.0, "kubectl explain co.spec failed: {}", explain.2);
    assert!(explain.1.contains("FIELD: spec <Object>"), "{}", explain.1);
    assert!(raw_v2.0, "kubectl get --raw /openapi/v2 failed: {}", raw_v2.2);
    assert!(
        raw_v2.1.contains("\"swagger\":\"2.0\""),
        "{}",
        &raw_v2.1[..raw_v2.1.len().min(200)]
    );
    // kubectl sends a protobuf body here: decoded as kube-apiserver decodes it.
    assert!(create_ns.0, "kubectl create namespace failed: {}", create_ns.2);
    assert_eq!(create_ns.1.trim(), "namespace/from-kubectl created");
    assert_eq!(watched.len(), 3, "{watched:?}");
    assert_eq!(
        watched[0].split_whitespace().collect::<Vec<_>>(),
        [
            "NAME",
            "VERSION",
            "AVAILABLE",
            "PROGRESSING",
            "DEGRADED",
            "SINCE",
            "MESSAGE"
        ]
    );
    assert_eq!(
        watched[2].split_whitespace().take(2).collect::<Vec<_>>(),
        ["dns", "9.9.9"]
    );
}
