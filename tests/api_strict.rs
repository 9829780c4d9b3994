//! The simulator answers as kube-apiserver does where an administrator or a test trips first
//! (issue 31): the ClusterVersion and ClusterOperator CRDs' schemas and validation rules,
//! `DELETE` with a dry run or preconditions, `/healthz` `/livez` `/readyz`, the system
//! namespaces, short names in discovery, and the `Table` columns of Deployments, Namespaces
//! and ClusterOperators.
//!
//! Every case runs on the simulator and, with `CVO_TEST_KUBECONFIG`, on that kube-apiserver
//! (`tests/common/cluster.rs`); the expected values are what kube-apiserver v1.36.2 (as
//! OpenShift carries it, `../shared/tools/kube-apiserver`) answered.

use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};

#[path = "common/cluster.rs"]
mod cluster;
mod common;

use cluster::{CO, CONFIGMAP, CV, NAMESPACE, TestCluster};

const LIMIT: Duration = Duration::from_secs(20);

/// Sends `body` (JSON, or nothing when empty) with `method` to `path`; returns the status
/// code, the `Content-Type` and the answer's text.
async fn send(
    c: &Client,
    method: &str,
    path: &str,
    body: &Value,
    accept: Option<&str>,
) -> (u16, String, String) {
    let mut req = http::Request::builder().method(method).uri(path);
    if let Some(a) = accept {
        req = req.header("accept", a);
    }
    let body = if body.is_null() {
        Vec::new()
    } else {
        req = req.header("content-type", "application/json");
        serde_json::to_vec(body).expect("json")
    };
    let req = req.body(kube::client::Body::from(body)).expect("request");
    let resp = tokio::time::timeout(LIMIT, c.send(req))
        .await
        .expect("in time")
        .expect("response");
    let code = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = http_body_util::BodyExt::collect(resp.into_body())
        .await
        .expect("body")
        .to_bytes();
    (code, ct, String::from_utf8_lossy(&bytes).into_owned())
}

/// Creates a namespace named after `base` (unique on a shared real server) with a raw POST,
/// to be deleted when the test ends; its name.
async fn new_namespace(t: &mut TestCluster, c: &Client, base: &str) -> String {
    let ns = t.name(base);
    let (code, body) = json_send(
        c,
        "POST",
        "/api/v1/namespaces",
        &json!({"metadata": {"name": ns}}),
    )
    .await;
    assert_eq!(code, 201, "namespace {ns}: {body}");
    t.clean_up(NAMESPACE, "", &ns);
    ns
}

async fn json_send(c: &Client, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let (code, _, text) = send(c, method, path, body, None).await;
    (code, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The causes of an `Invalid` answer as sorted `reason field: message` lines (kube-apiserver
/// lists schema errors in no fixed order).
fn causes(answer: &Value) -> Vec<String> {
    let mut v: Vec<String> = answer["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{} {}: {}",
                c["reason"].as_str().unwrap_or_default(),
                c["field"].as_str().unwrap_or_default(),
                c["message"].as_str().unwrap_or_default()
            )
        })
        .collect();
    v.sort();
    v
}

const CVS: &str = "/apis/config.openshift.io/v1/clusterversions";
const NOT_CHECKED: &str = "FieldValueInvalid <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

fn cv(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn cluster_version_type_errors_are_refused_as_the_crd_refuses_them() {
    let t = TestCluster::new().await;
    let c = t.client();
    let name = t.name("cv-types");
    let (code, answer) = json_send(
        &c,
        "POST",
        CVS,
        &cv(
            &name,
            json!({"clusterID": "c", "channel": 123,
            "desiredUpdate": {"version": "4.16.4", "force": "yes"}}),
        ),
    )
    .await;
    assert_eq!((code, answer["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        causes(&answer),
        [
            NOT_CHECKED,
            "FieldValueTypeInvalid spec.channel: Invalid value: \"integer\": spec.channel in body must be of type string: \"integer\"",
            "FieldValueTypeInvalid spec.desiredUpdate.force: Invalid value: \"string\": spec.desiredUpdate.force in body must be of type boolean: \"string\"",
        ]
    );
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!(
            "ClusterVersion.config.openshift.io \"{name}\" is invalid: ["
        )),
        "{message}"
    );
    assert_eq!(
        (
            &answer["details"]["kind"],
            &answer["details"]["group"],
            &answer["details"]["name"]
        ),
        (
            &json!("ClusterVersion"),
            &json!("config.openshift.io"),
            &json!(name)
        )
    );
    // spec is required; a missing clusterID too.
    let (code, answer) = json_send(
        &c,
        "POST",
        CVS,
        &json!({"apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion", "metadata": {"name": name}}),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        causes(&answer),
        [NOT_CHECKED, "FieldValueRequired spec: Required value"]
    );
    // Nothing was stored.
    let (code, _) = json_send(&c, "GET", &format!("{CVS}/{name}"), &Value::Null).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn cluster_version_validation_rules_are_evaluated() {
    let mut t = TestCluster::new().await;
    let c = t.client();
    let name = t.name("cv-rules");
    let (code, answer) = json_send(
        &c,
        "POST",
        CVS,
        &cv(&name, json!({"clusterID": "c",
            "desiredUpdate": {"architecture": "Multi", "image": "quay.io/x@sha256:0000000000000000000000000000000000000000000000000000000000000000"},
            "capabilities": {"baselineCapabilitySet": "None", "additionalEnabledCapabilities": ["marketplace"]}})),
    )
    .await;
    assert_eq!(code, 422, "{answer}");
    assert_eq!(
        causes(&answer),
        [
            "FieldValueInvalid <nil>: Invalid value: the `marketplace` capability requires the `OperatorLifecycleManager` capability, which is neither explicitly or implicitly enabled in this cluster, please enable the `OperatorLifecycleManager` capability",
            "FieldValueInvalid spec.desiredUpdate: Invalid value: \"object\": no such key: version evaluating rule: Version must be set if Architecture is set",
            "FieldValueInvalid spec.desiredUpdate: Invalid value: cannot set both Architecture and Image",
        ]
    );
    // A valid one is stored, with the schema's defaults and unknown fields pruned.
    let (code, stored) = json_send(
        &c,
        "POST",
        CVS,
        &cv(
            &name,
            json!({"clusterID": "c", "channel": "stable-4.16", "bogus": 1,
            "desiredUpdate": {"architecture": "Multi", "version": "4.16.4"},
            "capabilities": {"baselineCapabilitySet": "None",
                "additionalEnabledCapabilities": ["marketplace", "OperatorLifecycleManager"]}}),
        ),
    )
    .await;
    assert_eq!(code, 201, "{stored}");
    t.clean_up(CV, "", &name);
    assert_eq!(
        stored["spec"],
        json!({"clusterID": "c", "channel": "stable-4.16",
            "desiredUpdate": {"architecture": "Multi", "version": "4.16.4"},
            "capabilities": {"baselineCapabilitySet": "None",
                "additionalEnabledCapabilities": ["marketplace", "OperatorLifecycleManager"]}})
    );
    // An update is held to the same rules.
    let mut bad = stored.clone();
    bad["spec"]["desiredUpdate"]["image"] = json!("quay.io/x@sha256:1");
    let (code, answer) = json_send(&c, "PUT", &format!("{CVS}/{name}"), &bad).await;
    assert_eq!(code, 422);
    assert_eq!(
        causes(&answer),
        ["FieldValueInvalid spec.desiredUpdate: Invalid value: cannot set both Architecture and Image"]
    );
}

#[tokio::test]
async fn cluster_operator_status_is_held_to_its_schema() {
    let mut t = TestCluster::new().await;
    let c = t.client();
    let name = t.name("co-schema");
    let path = format!("/apis/config.openshift.io/v1/clusteroperators/{name}");
    let (code, created) = json_send(
        &c,
        "POST",
        "/apis/config.openshift.io/v1/clusteroperators",
        &json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
            "metadata": {"name": name}, "spec": {}}),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    t.clean_up(CO, "", &name);
    let mut with = created.clone();
    with["status"] = json!({"conditions": [{"type": "Available", "status": "True"}],
        "versions": [{"name": "operator"}]});
    let (code, answer) = json_send(&c, "PUT", &format!("{path}/status"), &with).await;
    assert_eq!(code, 422, "{answer}");
    assert_eq!(
        causes(&answer),
        [
            "FieldValueRequired status.conditions[0].lastTransitionTime: Required value",
            "FieldValueRequired status.versions[0].version: Required value",
        ]
    );
}

#[tokio::test]
async fn delete_dry_run_deletes_nothing_and_preconditions_conflict() {
    let mut t = TestCluster::new().await;
    let c = t.client();
    let ns = new_namespace(&mut t, &c, "strict-del").await;
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    let (code, cm) = json_send(
        &c,
        "POST",
        &cms,
        &json!({"metadata": {"name": "c1"}, "data": {"a": "b"}}),
    )
    .await;
    assert_eq!(code, 201);
    t.clean_up(CONFIGMAP, &ns, "c1");
    let path = format!("{cms}/c1");
    let uid = cm["metadata"]["uid"].as_str().expect("uid").to_owned();
    let rv = cm["metadata"]["resourceVersion"].as_str().expect("rv").to_owned();

    // kubectl delete --dry-run=server sends DeleteOptions with dryRun in the body. An object
    // without finalizers is answered with a Success Status, dry run or not.
    let success = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": "c1", "kind": "configmaps", "uid": uid}});
    let (code, answer) = json_send(
        &c,
        "DELETE",
        &path,
        &json!({"kind": "DeleteOptions",
        "apiVersion": "v1", "dryRun": ["All"]}),
    )
    .await;
    assert_eq!((code, &answer), (200, &success));
    let (code, answer) = json_send(&c, "DELETE", &format!("{path}?dryRun=All"), &Value::Null).await;
    assert_eq!((code, &answer), (200, &success));
    let (code, still) = json_send(&c, "GET", &path, &Value::Null).await;
    assert_eq!((code, &still["metadata"]["resourceVersion"]), (200, &json!(rv)));

    let (code, answer) = json_send(&c, "DELETE", &path, &json!({"preconditions": {"uid": "x"}})).await;
    assert_eq!(
        (code, &answer["reason"], &answer["message"], &answer["details"]),
        (
            409,
            &json!("Conflict"),
            &json!(format!(
                "Operation cannot be fulfilled on ConfigMap \"c1\": the UID in the precondition (x) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            )),
            &json!({"name": "c1", "kind": "ConfigMap"})
        )
    );
    let (code, answer) = json_send(
        &c,
        "DELETE",
        &path,
        &json!({"preconditions": {"resourceVersion": "1"}}),
    )
    .await;
    assert_eq!(
        (code, &answer["message"]),
        (
            409,
            &json!(format!(
                "Operation cannot be fulfilled on ConfigMap \"c1\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({rv}). The object might have been modified"
            ))
        )
    );
    // A dry run still checks the preconditions.
    let (code, _) = json_send(
        &c,
        "DELETE",
        &path,
        &json!({"dryRun": ["All"], "preconditions": {"resourceVersion": "1"}}),
    )
    .await;
    assert_eq!(code, 409);
    let (code, _) = json_send(&c, "GET", &path, &Value::Null).await;
    assert_eq!(code, 200);
    // Matching preconditions delete it.
    let (code, answer) = json_send(
        &c,
        "DELETE",
        &path,
        &json!({"preconditions": {"uid": uid, "resourceVersion": rv}}),
    )
    .await;
    assert_eq!((code, &answer), (200, &success));
    let (code, _) = json_send(&c, "GET", &path, &Value::Null).await;
    assert_eq!(code, 404);

    // A custom resource's conflict names its qualified kind.
    let name = t.name("co-pre");
    let (code, _) = json_send(&c, "POST", "/apis/config.openshift.io/v1/clusteroperators",
        &json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator", "metadata": {"name": name}, "spec": {}})).await;
    assert_eq!(code, 201);
    t.clean_up(CO, "", &name);
    let (code, answer) = json_send(
        &c,
        "DELETE",
        &format!("/apis/config.openshift.io/v1/clusteroperators/{name}"),
        &json!({"preconditions": {"resourceVersion": "1"}}),
    )
    .await;
    assert_eq!(code, 409);
    assert!(
        answer["message"].as_str().unwrap_or_default().starts_with(&format!(
            "Operation cannot be fulfilled on ClusterOperator.config.openshift.io \"{name}\": the ResourceVersion in the precondition (1) does not match"
        )),
        "{answer}"
    );
    assert_eq!(
        answer["details"],
        json!({"name": name, "group": "config.openshift.io", "kind": "ClusterOperator"})
    );
}

#[tokio::test]
async fn health_endpoints_and_the_system_namespaces() {
    let t = TestCluster::new().await;
    if let Some(sim) = t.sim() {
        // What `cvo sim serve` starts with.
        sim.add_system_namespaces().expect("namespaces");
    }
    let c = t.client();
    for endpoint in ["/healthz", "/livez", "/readyz"] {
        let (code, ct, text) = send(&c, "GET", endpoint, &Value::Null, None).await;
        assert_eq!(
            (code, ct.as_str(), text.as_str()),
            (200, "text/plain; charset=utf-8", "ok")
        );
        let (code, _, text) = send(&c, "GET", &format!("{endpoint}/ping"), &Value::Null, None).await;
        assert_eq!((code, text.as_str()), (200, "ok"));
        let (code, _, text) = send(&c, "GET", &format!("{endpoint}?verbose"), &Value::Null, None).await;
        assert_eq!(code, 200);
        assert!(text.starts_with("[+]ping ok\n[+]log ok\n"), "{text}");
        let name = endpoint.trim_start_matches('/');
        assert!(text.ends_with(&format!("{name} check passed\n")), "{text}");
        let (code, _, _) = send(
            &c,
            "GET",
            &format!("{endpoint}/no-such-check"),
            &Value::Null,
            None,
        )
        .await;
        assert_eq!(code, 404);
    }
    for ns in ["default", "kube-node-lease", "kube-public", "kube-system"] {
        let (code, o) = json_send(&c, "GET", &format!("/api/v1/namespaces/{ns}"), &Value::Null).await;
        assert_eq!(code, 200, "{ns}");
        assert_eq!(
            (&o["metadata"]["labels"], &o["spec"], &o["status"]),
            (
                &json!({"kubernetes.io/metadata.name": ns}),
                &json!({"finalizers": ["kubernetes"]}),
                &json!({"phase": "Active"})
            )
        );
    }
}

/// The short names discovery gives `plural` in `group_version`.
async fn short_names(c: &Client, group_version: &str, plural: &str) -> Value {
    let path = if group_version == "v1" {
        "/api/v1".to_owned()
    } else {
        format!("/apis/{group_version}")
    };
    let (code, list) = json_send(c, "GET", &path, &Value::Null).await;
    assert_eq!(code, 200);
    list["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == plural))
        .map(|r| r.get("shortNames").cloned().unwrap_or(Value::Null))
        .unwrap_or_else(|| panic!("{plural} not in {group_version}"))
}

#[tokio::test]
async fn discovery_gives_the_short_names_kubectl_resolves() {
    let t = TestCluster::new().await;
    let c = t.client();
    assert_eq!(
        short_names(&c, "config.openshift.io/v1", "clusteroperators").await,
        json!(["co"])
    );
    // Upstream's ClusterVersion CRD declares no short name: `kubectl get cv` is an error on a
    // real cluster, and on the simulator.
    assert_eq!(
        short_names(&c, "config.openshift.io/v1", "clusterversions").await,
        Value::Null
    );
    assert_eq!(short_names(&c, "apps/v1", "deployments").await, json!(["deploy"]));
    assert_eq!(short_names(&c, "v1", "namespaces").await, json!(["ns"]));
}

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// `(name, type, priority)` of a Table's columns, and its first row's cells (Age cells,
/// which depend on the clock, as `"<age>"`).
async fn table(c: &Client, path: &str) -> (Vec<(String, String, u64)>, Vec<Value>) {
    let (code, _, text) = send(c, "GET", path, &Value::Null, Some(TABLE)).await;
    assert_eq!(code, 200, "{text}");
    let t: Value = serde_json::from_str(&text).expect("table");
    let cols: Vec<(String, String, u64)> = t["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["type"].as_str().unwrap_or_default().to_owned(),
                c["priority"].as_u64().unwrap_or(99),
            )
        })
        .collect();
    let cells: Vec<Value> = t["rows"][0]["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .zip(&cols)
        .map(|(v, (n, _, _))| {
            if n == "Age" || n == "Since" {
                json!("<age>")
            } else {
                v.clone()
            }
        })
        .collect();
    (cols, cells)
}

fn col(name: &str, ty: &str, priority: u64) -> (String, String, u64) {
    (name.to_owned(), ty.to_owned(), priority)
}

#[tokio::test]
async fn tables_of_deployments_namespaces_and_cluster_operators() {
    let mut t = TestCluster::new().await;
    let c = t.client();
    let ns = new_namespace(&mut t, &c, "strict-table").await;
    let (code, _) = json_send(
        &c,
        "POST",
        &format!("/apis/apps/v1/namespaces/{ns}/deployments"),
        &json!({"metadata": {"name": "d1"}, "spec": {"replicas": 2,
            "selector": {"matchLabels": {"app": "d1"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
            "template": {"metadata": {"labels": {"app": "d1", "tier": "a"}}, "spec": {"containers": [
                {"name": "c", "image": "quay.io/x/y:1"}, {"name": "s", "image": "quay.io/x/z:2"}]}}}}),
    )
    .await;
    assert_eq!(code, 201);
    let (cols, cells) = table(&c, &format!("/apis/apps/v1/namespaces/{ns}/deployments")).await;
    assert_eq!(
        cols,
        [
            col("Name", "string", 0),
            col("Ready", "string", 0),
            col("Up-to-date", "string", 0),
            col("Available", "string", 0),
            col("Age", "string", 0),
            col("Containers", "string", 1),
            col("Images", "string", 1),
            col("Selector", "string", 1),
        ]
    );
    assert_eq!(
        cells,
        [
            json!("d1"),
            json!("0/2"),
            json!(0),
            json!(0),
            json!("<age>"),
            json!("c,s"),
            json!("quay.io/x/y:1,quay.io/x/z:2"),
            json!("app=d1,tier in (a,b)")
        ]
    );

    let (cols, cells) = table(&c, &format!("/api/v1/namespaces/{ns}")).await;
    assert_eq!(
        cols,
        [
            col("Name", "string", 0),
            col("Status", "string", 0),
            col("Age", "string", 0)
        ]
    );
    assert_eq!(cells, [json!(ns), json!("Active"), json!("<age>")]);

    let name = t.name("co-table");
    let cos = "/apis/config.openshift.io/v1/clusteroperators";
    let (code, created) = json_send(
        &c,
        "POST",
        cos,
        &json!({"apiVersion": "config.openshift.io/v1",
        "kind": "ClusterOperator", "metadata": {"name": name}, "spec": {}}),
    )
    .await;
    assert_eq!(code, 201);
    t.clean_up(CO, "", &name);
    let co_cols = [
        col("Name", "string", 0),
        col("Version", "string", 0),
        col("Available", "string", 0),
        col("Progressing", "string", 0),
        col("Degraded", "string", 0),
        col("Since", "date", 0),
        col("Message", "string", 0),
    ];
    let path = format!("{cos}/{name}");
    let (cols, cells) = table(&c, &path).await;
    assert_eq!(cols, co_cols);
    assert_eq!(
        cells,
        [
            json!(name),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            json!("<age>"),
            Value::Null
        ]
    );
    // The message is Available=False's, else Degraded=True's, else Progressing=True's.
    let at = "2026-01-01T00:00:00Z";
    let cases = [
        (["True", "False", "False"], Value::Null),
        (["True", "True", "False"], json!("prog-msg")),
        (["True", "True", "True"], json!("deg\nline2")),
        (["False", "True", "True"], json!("avail-msg")),
        (["Unknown", "False", "False"], Value::Null),
    ];
    let mut current = created;
    for ([a, p, d], want) in cases {
        current["status"] = json!({"conditions": [
            {"type": "Available", "status": a, "lastTransitionTime": at, "message": "avail-msg"},
            {"type": "Progressing", "status": p, "lastTransitionTime": at, "message": "prog-msg"},
            {"type": "Degraded", "status": d, "lastTransitionTime": at, "message": "deg\nline2"}],
            "versions": [{"name": "operator", "version": "4.16.4"}]});
        let (code, written) = json_send(&c, "PUT", &format!("{path}/status"), &current).await;
        assert_eq!(code, 200, "{written}");
        current = written;
        let (_, cells) = table(&c, &path).await;
        assert_eq!(
            cells,
            [
                json!(name),
                json!("4.16.4"),
                json!(a),
                json!(p),
                json!(d),
                json!("<age>"),
                want
            ],
            "{a} {p} {d}"
        );
    }
}

#[tokio::test]
async fn scale_subresource_of_deployments() {
    let mut t = TestCluster::new().await;
    let c = t.client();
    let ns = new_namespace(&mut t, &c, "strict-scale").await;
    let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let (code, d) = json_send(
        &c,
        "POST",
        &deployments,
        &json!({"metadata": {"name": "d1"}, "spec": {"replicas": 2,
            "selector": {"matchLabels": {"app": "d1"}},
            "template": {"metadata": {"labels": {"app": "d1"}}, "spec": {"containers": [
                {"name": "c", "image": "quay.io/x/y:1"}]}}}}),
    )
    .await;
    assert_eq!(code, 201);
    let scale = format!("{deployments}/d1/scale");
    let meta = |o: &Value| {
        json!({"name": "d1", "namespace": ns, "uid": o["metadata"]["uid"],
            "resourceVersion": o["metadata"]["resourceVersion"], "creationTimestamp": o["metadata"]["creationTimestamp"]})
    };
    let (code, s) = json_send(&c, "GET", &scale, &Value::Null).await;
    assert_eq!(
        (code, s),
        (
            200,
            json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta(&d),
                "spec": {"replicas": 2}, "status": {"replicas": 0, "selector": "app=d1"}})
        )
    );
    // kubectl scale: a merge patch of the Scale.
    let req = http::Request::patch(&scale)
        .header("content-type", "application/merge-patch+json")
        .body(kube::client::Body::from(br#"{"spec":{"replicas":3}}"#.to_vec()))
        .expect("request");
    let resp = tokio::time::timeout(LIMIT, c.send(req))
        .await
        .expect("in time")
        .expect("response");
    assert_eq!(resp.status().as_u16(), 200);
    let (_, d) = json_send(&c, "GET", &format!("{deployments}/d1"), &Value::Null).await;
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(d["metadata"]["generation"], 2);
    // A PUT with a stale resourceVersion conflicts; a negative count is invalid.
    let (code, answer) = json_send(
        &c,
        "PUT",
        &scale,
        &json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": "d1", "namespace": ns, "resourceVersion": "1"}, "spec": {"replicas": 5}}),
    )
    .await;
    assert_eq!(
        (code, &answer["message"], &answer["details"]),
        (
            409,
            &json!(
                "Operation cannot be fulfilled on deployments.apps \"d1\": the object has been modified; please apply your changes to the latest version and try again"
            ),
            &json!({"name": "d1", "group": "apps", "kind": "deployments"})
        )
    );
    let (code, answer) = json_send(
        &c,
        "PUT",
        &scale,
        &json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": "d1", "namespace": ns}, "spec": {"replicas": -1}}),
    )
    .await;
    assert_eq!(
        (code, &answer["message"], &answer["details"]),
        (
            422,
            &json!(
                "Scale.autoscaling \"d1\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
            ),
            &json!({"name": "d1", "group": "autoscaling", "kind": "Scale", "causes": [{"reason": "FieldValueInvalid",
                "message": "Invalid value: -1: must be greater than or equal to 0", "field": "spec.replicas"}]})
        )
    );
    let (code, s) = json_send(
        &c,
        "PUT",
        &scale,
        &json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": "d1", "namespace": ns}, "spec": {"replicas": 5}}),
    )
    .await;
    assert_eq!(
        (code, &s["spec"], &s["status"]),
        (
            200,
            &json!({"replicas": 5}),
            &json!({"replicas": 0, "selector": "app=d1"})
        )
    );
    let (code, answer) = json_send(&c, "GET", &format!("{deployments}/nope/scale"), &Value::Null).await;
    assert_eq!(
        (code, &answer["message"]),
        (404, &json!("deployments.apps \"nope\" not found"))
    );
    // ConfigMaps have no /scale.
    let (code, _) = json_send(
        &c,
        "GET",
        &format!("/api/v1/namespaces/{ns}/configmaps/x/scale"),
        &Value::Null,
    )
    .await;
    assert_eq!(code, 404);
}

/// kubectl, on the real server of `CVO_TEST_KUBECONFIG` or on a `cvo sim serve` (which
/// starts with what kube-apiserver starts with); `None` when kubectl is not on PATH.
struct Kubectl {
    kubeconfig: std::path::PathBuf,
    child: Option<std::process::Child>,
    _dir: tempfile::TempDir,
}

impl Kubectl {
    fn start(test: &str) -> Option<Self> {
        if std::process::Command::new("kubectl")
            .args(["version", "--client"])
            .output()
            .is_err()
        {
            common::skip(test, "kubectl not found on PATH");
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        if let Some(real) = cluster::real_kubeconfig() {
            return Some(Self {
                kubeconfig: real,
                child: None,
                _dir: dir,
            });
        }
        let kubeconfig = dir.path().join("kubeconfig");
        let (child, _) = common::spawn_sim_serve(
            &kubeconfig,
            &[],
            std::process::Stdio::null(),
            Duration::from_secs(30),
        );
        Some(Self {
            kubeconfig,
            child: Some(child),
            _dir: dir,
        })
    }

    /// `(success, stdout, stderr)` of `kubectl ARGS` (with `stdin` as its input).
    fn run(&self, args: &[&str], stdin: &str) -> (bool, String, String) {
        use std::io::Write;
        let mut child = std::process::Command::new("kubectl")
            .env("KUBECONFIG", &self.kubeconfig)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        if let Some(mut i) = child.stdin.take() {
            i.write_all(stdin.as_bytes()).expect("stdin");
        }
        let out = child.wait_with_output().expect("kubectl output");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn kubectl_scale_explain_and_the_move_from_client_side_to_server_side_apply() {
    let Some(k) = Kubectl::start("kubectl_scale_explain_and_the_move_from_client_side_to_server_side_apply")
    else {
        return;
    };
    let ns = format!("strict-kubectl-{}", std::process::id());
    let manifest = |data: &str| {
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: ssa, namespace: {ns}}}\ndata: {data}\n"
        )
    };
    let (ok, out, err) = k.run(&["apply", "-f", "-"], &manifest("{a: \"1\", b: \"2\"}"));
    assert!(ok, "{err}");
    assert_eq!(out, format!("namespace/{ns} created\nconfigmap/ssa created\n"));
    // The same objects applied server-side without `b`: kubectl moves the client-side
    // apply's fields to its apply manager first, so `b` goes.
    let (ok, out, err) = k.run(&["apply", "--server-side", "-f", "-"], &manifest("{a: \"1\"}"));
    assert!(ok, "{err}");
    assert_eq!(
        out,
        format!("namespace/{ns} serverside-applied\nconfigmap/ssa serverside-applied\n")
    );
    let (ok, out, err) = k.run(&["get", "cm", "ssa", "-n", &ns, "-o", "jsonpath={.data}"], "");
    assert!(ok, "{err}");
    assert_eq!(out, r#"{"a":"1"}"#);

    let deployment = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d1, namespace: {ns}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: d1}}}}\n  template:\n    metadata: {{labels: {{app: d1}}}}\n    spec: {{containers: [{{name: c, image: quay.io/x/y:1}}]}}\n"
    );
    let (ok, _, err) = k.run(&["apply", "-f", "-"], &deployment);
    assert!(ok, "{err}");
    let (ok, out, err) = k.run(&["scale", "-n", &ns, "deployment/d1", "--replicas=3"], "");
    assert!(ok, "{err}");
    assert_eq!(out, "deployment.apps/d1 scaled\n");
    let (_, out, _) = k.run(
        &[
            "get",
            "-n",
            &ns,
            "deployment/d1",
            "-o",
            "jsonpath={.spec.replicas}",
        ],
        "",
    );
    assert_eq!(out, "3");

    let (ok, out, err) = k.run(&["explain", "deployment.spec.replicas"], "");
    assert!(ok, "{err}");
    assert!(
        out.starts_with("GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nFIELD: replicas <integer>\n\n\nDESCRIPTION:\n    Number of desired pods."),
        "{out}"
    );
    let (ok, out, err) = k.run(&["explain", "pod.spec.containers.image"], "");
    assert!(ok, "{err}");
    assert!(out.contains("FIELD: image <string>"), "{out}");
    let (ok, out, err) = k.run(&["explain", "clusterversion.spec.desiredUpdate.version"], "");
    assert!(ok, "{err}");
    assert!(
        out.starts_with("GROUP:      config.openshift.io\nKIND:       ClusterVersion\nVERSION:    v1\n\nFIELD: version <string>\n"),
        "{out}"
    );
    // No `cv` short name (upstream's CRD declares none); `co` is one.
    let (ok, _, err) = k.run(&["get", "cv"], "");
    assert!(!ok);
    assert_eq!(err, "error: the server doesn't have a resource type \"cv\"\n");
    let (ok, _, err) = k.run(&["get", "co"], "");
    assert!(ok, "{err}");
    let _ = k.run(&["delete", "ns", &ns, "--wait=false"], "");
}

/// Sends a JSON merge patch to `path`; returns the status code and the answer.
async fn merge_patch(c: &Client, path: &str, body: &Value) -> (u16, Value) {
    let req = http::Request::builder()
        .method("PATCH")
        .uri(path)
        .header("content-type", "application/merge-patch+json")
        .body(serde_json::to_vec(body).unwrap_or_default())
        .expect("request");
    let answer = tokio::time::timeout(LIMIT, c.send(req.map(kube::client::Body::from)))
        .await
        .expect("answered in time")
        .expect("sent");
    let code = answer.status().as_u16();
    let bytes = http_body_util::BodyExt::collect(answer.into_body())
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// CRD validation ratcheting (GA in kube-apiserver 1.33): after the CRD tightens its schema,
/// an object stored under the old schema can still be updated as long as the invalid value is
/// unchanged; changing that value to another invalid one is refused with the new rule.
#[tokio::test]
async fn an_unchanged_invalid_value_is_ratcheted_after_the_schema_tightens() {
    let t = TestCluster::new().await;
    let c = t.client();
    let group = format!("{}.ratchet.cvo.example.com", t.name("g"));
    let crd_name = format!("gizmos.{group}");
    let crd = |size: Value| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": crd_name},
            "spec": {"group": group, "scope": "Cluster",
                "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "size": size, "note": {"type": "string"}}}}}}}]}})
    };
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let (code, _) = json_send(&c, "POST", crds, &crd(json!({"type": "string"}))).await;
    assert_eq!(code, 201);
    let gizmos = format!("/apis/{group}/v1/gizmos");
    let gizmo = |name: &str, size: &str| {
        json!({"apiVersion": format!("{group}/v1"), "kind": "Gizmo",
            "metadata": {"name": name}, "spec": {"size": size, "note": "a"}})
    };
    // Served (on kube-apiserver a moment after the create).
    let mut code = 0;
    for _ in 0..100 {
        code = json_send(&c, "POST", &gizmos, &gizmo("g1", "0123456789abc"))
            .await
            .0;
        if code == 201 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(code, 201, "the Gizmo kind was never served");
    // The schema tightens: size at most 5 characters.
    let (_, live) = json_send(&c, "GET", &format!("{crds}/{crd_name}"), &Value::Null).await;
    let mut tightened = crd(json!({"type": "string", "maxLength": 5}));
    tightened["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
    let (code, _) = json_send(&c, "PUT", &format!("{crds}/{crd_name}"), &tightened).await;
    assert_eq!(code, 200);
    // In force (on kube-apiserver once its handler took the new schema): a new long one is refused.
    let mut refused = Value::Null;
    for _ in 0..100 {
        let (code, answer) = json_send(&c, "POST", &gizmos, &gizmo("g2", "0123456789abc")).await;
        if code == 422 {
            refused = answer;
            break;
        }
        if code == 201 {
            let _ = json_send(&c, "DELETE", &format!("{gizmos}/g2"), &Value::Null).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let too_long = "FieldValueTooLong spec.size: Too long: may not be more than 5 bytes";
    assert_eq!(causes(&refused), [too_long], "{refused:#}");
    // g1's size is unchanged: another field changes, the update is ratcheted.
    let g1 = format!("{gizmos}/g1");
    let (code, answer) = merge_patch(&c, &g1, &json!({"spec": {"note": "b"}})).await;
    assert_eq!(code, 200, "{answer:#}");
    assert_eq!(answer["spec"], json!({"size": "0123456789abc", "note": "b"}));
    // Changing the invalid value to another invalid one is refused.
    let (code, answer) = merge_patch(&c, &g1, &json!({"spec": {"size": "abcdefghijk"}})).await;
    assert_eq!(code, 422, "{answer:#}");
    assert_eq!(causes(&answer), [too_long]);
    // To a valid one: accepted.
    let (code, _) = merge_patch(&c, &g1, &json!({"spec": {"size": "abc"}})).await;
    assert_eq!(code, 200);
    let _ = json_send(&c, "DELETE", &format!("{crds}/{crd_name}"), &Value::Null).await;
}
