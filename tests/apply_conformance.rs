//! The apply layer (`cvo::reconcile::apply`): merge ("ensure") semantics per kind, manifest
//! modifiers, readiness and ClusterOperator health checks — the cases of upstream
//! `pkg/cvo/internal/operatorstatus_test.go`, `lib/resourcemerge/*_test.go`,
//! `lib/resourcebuilder/*_test.go` and `pkg/cvo/internal/generic_test.go` — and the apply step
//! through a real `kube::Client`: zero writes on a converged cluster, also after the server
//! filled defaults, and dry-run (watch-only) drift with zero writes. The apply tests run on the
//! in-process simulator, or on the real cluster `CVO_TEST_KUBECONFIG` names (each in a
//! namespace and CRD group of its own); `sim_*` tests run on a simulator in any case.

use std::{future::Future, time::Duration};

use cvo::{
    openshift::config_v1::ClusterOperator,
    reconcile::apply::{
        Applier, ApplyContext, Drift, ProxyStatus, TlsProfile, build_required,
        builders::{self, inject_proxy, inject_tls, update_pod_spec_with_internal_lb},
        kinds::*,
        merge::merge_owner_refs,
        merge_manifest,
        podspec::{ensure_env, ensure_tolerations},
        readiness::{check_deployment, check_job, check_operator_health},
    },
    reconcile::errors::UpdateEffect,
    reconcile::payload::PayloadState,
    sim::Simulator,
};
use k8s_openapi::{
    api::{
        apps::v1::Deployment,
        batch::v1::Job,
        core::v1::{ConfigMap, EnvVar, PodSpec, Service, Toleration},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    apimachinery::pkg::apis::meta::v1::OwnerReference,
};
use kube::Client;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

mod common;

fn de<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("test object decodes")
}

async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(Duration::from_secs(10), f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out: {what}"),
    }
}

// ---------------------------------------------------------------- operator health
// Upstream pkg/cvo/internal/operatorstatus_test.go Test_checkOperatorHealth.

fn co(name: &str, conditions: Value, versions: Value) -> ClusterOperator {
    de(json!({
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
        "metadata": {"name": name},
        "status": {"conditions": conditions, "versions": versions},
    }))
}

fn expected_co() -> ClusterOperator {
    co(
        "test-co",
        json!([]),
        json!([{"name": "operator", "version": "v1"}]),
    )
}

#[test]
fn c45_cluster_operator_not_found() {
    let e = check_operator_health(&expected_co(), None, PayloadState::Updating).expect_err("missing CO");
    assert_eq!(e.reason, "UpdatePayloadResourceNotFound");
    assert_eq!(
        e.message,
        "clusteroperators.config.openshift.io \"test-co\" not found"
    );
    assert_eq!(e.name, "test-co");
}

#[test]
fn c45_no_expected_versions() {
    let e = check_operator_health(&co("test-co", json!([]), json!([])), None, PayloadState::Updating)
        .expect_err("no versions");
    assert_eq!(e.reason, "ClusterOperatorNoVersions");
    assert_eq!(
        e.message,
        "Cluster operator test-co does not declare expected versions"
    );
    assert_eq!(e.effect, UpdateEffect::Fail);
}

#[test]
fn c46_available_not_degraded_versions_not_reached() {
    let ok_conds = json!([{"type": "Available", "status": "True"}, {"type": "Degraded", "status": "False"}]);
    // Unlike upstream, the message names the operand and the version it waits for.
    for (live_versions, waiting) in [
        (json!([]), "operator v1 (not reported yet)"),
        (
            json!([{"name": "operator", "version": "v0"}]),
            "operator v1 (reports v0)",
        ),
    ] {
        let live = co("test-co", ok_conds.clone(), live_versions);
        let e =
            check_operator_health(&expected_co(), Some(&live), PayloadState::Updating).expect_err("updating");
        assert_eq!(e.reason, "ClusterOperatorUpdating");
        assert_eq!(e.effect, UpdateEffect::None);
        assert_eq!(
            e.message,
            format!("Cluster operator test-co is updating versions: waiting for {waiting}")
        );
        assert_eq!(
            e.nested_text().as_deref(),
            Some(
                "cluster operator test-co is available and not degraded but has not finished updating to target version"
            )
        );
    }
    // while initializing, versions not reached is not an error
    let live = co("test-co", ok_conds, json!([]));
    assert_eq!(
        check_operator_health(&expected_co(), Some(&live), PayloadState::Initializing),
        Ok(())
    );
}

#[test]
fn c47_not_available() {
    let versions = json!([{"name": "operator", "version": "v1"}]);
    for conds in [
        json!([]),
        json!([{"type": "Available", "status": "False"}, {"type": "Degraded", "status": "True"}]),
    ] {
        let live = co("test-co", conds.clone(), versions.clone());
        let e = check_operator_health(&expected_co(), Some(&live), PayloadState::Updating)
            .expect_err("unavailable");
        assert_eq!(e.reason, "ClusterOperatorNotAvailable");
        assert_eq!(e.effect, UpdateEffect::Fail);
        assert_eq!(e.message, "Cluster operator test-co is not available");
        assert_eq!(
            e.nested_text().as_deref(),
            Some("cluster operator test-co: available=false, progressing=true, degraded=true, undone="),
            "conditions {conds}"
        );
    }
}

#[test]
fn c48_degraded_fails_after_interval_and_reports_while_initializing() {
    let live = co(
        "test-co",
        json!([
            {"type": "Available", "status": "True"},
            {"type": "Degraded", "status": "True", "reason": "RandomReason", "message": "random error"},
        ]),
        json!([{"name": "operator", "version": "v1"}]),
    );
    let e = check_operator_health(&expected_co(), Some(&live), PayloadState::Updating).expect_err("degraded");
    assert_eq!(e.reason, "ClusterOperatorDegraded");
    assert_eq!(e.effect, UpdateEffect::FailAfterInterval);
    assert_eq!(e.message, "Cluster operator test-co is degraded");
    assert_eq!(
        e.nested_text().as_deref(),
        Some("cluster operator test-co is Degraded=True: RandomReason, random error")
    );
    let e =
        check_operator_health(&expected_co(), Some(&live), PayloadState::Initializing).expect_err("degraded");
    assert_eq!(e.effect, UpdateEffect::Report);
}

#[test]
fn c49_missing_degraded_counts_as_degraded() {
    let versions = json!([{"name": "operator", "version": "v1"}]);
    let live = co(
        "test-co",
        json!([{"type": "Available", "status": "True"}]),
        versions.clone(),
    );
    let e = check_operator_health(&expected_co(), Some(&live), PayloadState::Updating).expect_err("degraded");
    assert_eq!(e.reason, "ClusterOperatorDegraded");
    assert_eq!(e.effect, UpdateEffect::FailAfterInterval);
    assert_eq!(
        e.nested_text().as_deref(),
        Some("cluster operator test-co: available=true, progressing=true, degraded=true, undone=")
    );
    let healthy = co(
        "test-co",
        json!([
            {"type": "Available", "status": "True"},
            {"type": "Degraded", "status": "False"},
            {"type": "Progressing", "status": "True"},
        ]),
        versions,
    );
    assert_eq!(
        check_operator_health(&expected_co(), Some(&healthy), PayloadState::Updating),
        Ok(())
    );
}

// ---------------------------------------------------------------- merges
// Upstream lib/resourcemerge/*_test.go.

fn deployment(spec: Value) -> Deployment {
    de(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}, "spec": spec}),
    )
}

#[test]
fn c63_ensure_deployment() {
    let mut m = false;
    let mut e = deployment(json!({"replicas": 2}));
    ensure_deployment(&mut m, &mut e, &deployment(json!({})));
    assert!(m, "replicas 2 vs required nil is modified");
    assert_eq!(e.spec.replicas, Some(1));

    let mut m = false;
    let mut e = deployment(json!({"replicas": 2}));
    ensure_deployment(&mut m, &mut e, &deployment(json!({"replicas": 2})));
    assert!(!m);

    let mut m = false;
    let mut e = deployment(json!({"replicas": 1, "strategy": {"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}));
    let before = e.clone();
    ensure_deployment(&mut m, &mut e, &deployment(json!({"strategy": {}})));
    assert!(!m, "empty strategy equals the server default");
    assert_eq!(e, before);

    let mut m = false;
    ensure_deployment(
        &mut m,
        &mut e,
        &deployment(json!({"strategy": {"type": "Recreate"}})),
    );
    assert!(m);
    assert_eq!(e.spec.strategy.and_then(|s| s.type_).as_deref(), Some("Recreate"));
}

fn tolerations(v: Value) -> Option<Vec<Toleration>> {
    Some(de(v))
}

#[test]
fn c64_ensure_tolerations() {
    let a = json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"});
    let b = json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"});
    let c = json!({"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"});

    let mut m = false;
    let mut e = tolerations(json!([a, c]));
    ensure_tolerations(&mut m, &mut e, &None);
    assert!(!m);
    assert_eq!(e, tolerations(json!([a, c])));

    let mut m = false;
    let mut e = tolerations(json!([a, b]));
    ensure_tolerations(&mut m, &mut e, &tolerations(json!([b, a])));
    assert!(!m);

    let mut m = false;
    let mut e = tolerations(json!([a, c, a]));
    ensure_tolerations(&mut m, &mut e, &tolerations(json!([a, b])));
    assert!(m);
    assert_eq!(
        e,
        tolerations(json!([a, c, b])),
        "duplicate removed, missing appended, extra kept"
    );
}

fn oref(uid: &str, controller: Option<bool>) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "Owner".into(),
        name: "o".into(),
        uid: uid.into(),
        controller,
        block_owner_deletion: None,
    }
}

#[test]
fn c65_merge_owner_refs() {
    let mut m = false;
    let mut e = Some(vec![oref("uid-2", None), oref("uid-3", None)]);
    merge_owner_refs(&mut m, &mut e, &Some(vec![oref("uid-1", None)]));
    assert!(m);
    assert_eq!(
        e,
        Some(vec![
            oref("uid-2", None),
            oref("uid-3", None),
            oref("uid-1", None)
        ])
    );

    let mut m = false;
    let mut e = Some(vec![oref("uid-1", Some(false))]);
    merge_owner_refs(&mut m, &mut e, &Some(vec![oref("uid-1", Some(true))]));
    assert!(m);
    assert_eq!(e, Some(vec![oref("uid-1", Some(true))]));
}

fn service(spec: Value) -> Service {
    de(
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "ns"}, "spec": spec}),
    )
}

#[test]
fn c66_ensure_service_ports_and_type() {
    let p1 = json!({"name": "a", "port": 80, "protocol": "TCP", "targetPort": 80});
    let p2 = json!({"name": "b", "port": 443, "protocol": "TCP", "targetPort": 8443});
    let mut m = false;
    let mut e = service(json!({"type": "ClusterIP", "ports": [p1, p2]}));
    ensure_service(&mut m, &mut e, &service(json!({"ports": [p2, p1]})));
    assert!(!m, "same ports in another order");

    let mut m = false;
    ensure_service(
        &mut m,
        &mut e,
        &service(json!({"ports": [{"name": "a", "port": 80}, p2]})),
    );
    assert!(!m, "omitted protocol and targetPort equal their defaults");

    let mut m = false;
    ensure_service(
        &mut m,
        &mut e,
        &service(json!({"ports": [{"name": "a", "port": 81}]})),
    );
    assert!(m);
    let ports = e.spec.as_ref().and_then(|s| s.ports.clone()).unwrap_or_default();
    assert_eq!(ports.len(), 1, "port b removed");
    assert_eq!(ports[0].port, 81);

    let mut m = false;
    let mut e = service(json!({"type": ""}));
    ensure_service(&mut m, &mut e, &service(json!({"type": ""})));
    assert!(m, "empty type is set to ClusterIP");
    assert_eq!(e.spec.and_then(|s| s.type_).as_deref(), Some("ClusterIP"));

    let mut m = false;
    let mut e = service(json!({"type": "ClusterIP"}));
    ensure_service(&mut m, &mut e, &service(json!({})));
    assert!(!m);
}

#[test]
fn c67_job_selector_is_an_error_and_env_field_ref_defaults() {
    let job = |spec: Value| -> Job { de(json!({"metadata": {"name": "j"}, "spec": spec})) };
    let mut m = false;
    let mut e = job(json!({"template": {}}));
    let err = ensure_job(
        &mut m,
        &mut e,
        &job(json!({"selector": {"matchLabels": {"a": "b"}}, "template": {}})),
    )
    .expect_err("selector rejected");
    assert_eq!(err.reason, "UpdatePayloadFailed");
    assert!(err.message.contains("spec.selector"), "{}", err.message);
    assert!(ensure_job(&mut m, &mut e, &job(json!({"template": {}}))).is_ok());

    let env = |v: Value| -> Option<Vec<EnvVar>> { Some(de(v)) };
    let mut m = false;
    let mut e = env(
        json!([{"name": "NODE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}]),
    );
    ensure_env(
        &mut m,
        &mut e,
        &env(json!([{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}])),
    );
    assert!(!m);

    let mut m = false;
    let mut e = env(json!([{"name": "KUBERNETES_SERVICE_HOST", "value": "a"}]));
    ensure_env(
        &mut m,
        &mut e,
        &env(json!([{"name": "KUBERNETES_SERVICE_HOST", "value": "b"}])),
    );
    assert!(m);
    assert_eq!(e.and_then(|v| v[0].value.clone()).as_deref(), Some("b"));
}

fn crd(annotations: Value, ca_bundle: Option<&str>) -> CustomResourceDefinition {
    let mut cc = json!({"service": {"namespace": "ns", "name": "svc"}});
    if let Some(b) = ca_bundle {
        cc["caBundle"] = json!(b);
    }
    de(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "annotations": annotations},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": true}],
            "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": cc}},
        },
    }))
}

#[test]
fn c68_crd_keeps_injected_ca_bundle_only_when_annotated() {
    let ann = json!({"service.beta.openshift.io/inject-cabundle": "true"});
    let mut m = false;
    let mut e = crd(ann.clone(), Some("Y2E="));
    ensure_custom_resource_definition(&mut m, &mut e, &crd(ann, None));
    assert!(!m, "annotated: live bundle kept");

    let mut m = false;
    let mut e = crd(json!({}), Some("Y2E="));
    ensure_custom_resource_definition(&mut m, &mut e, &crd(json!({}), None));
    assert!(m, "not annotated: bundle removed");
    let bundle = e
        .spec
        .conversion
        .and_then(|c| c.webhook)
        .and_then(|w| w.client_config)
        .and_then(|c| c.ca_bundle);
    assert_eq!(bundle, None);
}

// ---------------------------------------------------------------- builders
// Upstream lib/resourcebuilder/*_test.go, pkg/cvo/internal/generic_test.go.

fn pod_spec() -> PodSpec {
    de(json!({
        "containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}, {"name": "b"}],
        "initContainers": [{"name": "init"}],
    }))
}

fn env_names(c: &k8s_openapi::api::core::v1::Container) -> Vec<String> {
    c.env.iter().flatten().map(|e| e.name.clone()).collect()
}

#[test]
fn c88_inject_proxy() {
    let mut spec = pod_spec();
    inject_proxy(&mut spec, &["a", "init"], &ProxyStatus::default()).expect("no proxy");
    assert_eq!(spec, pod_spec(), "no proxy values: unchanged");

    let proxy = ProxyStatus {
        http_proxy: "http://p:3128".into(),
        https_proxy: "https://p:3129".into(),
        no_proxy: ".cluster.local".into(),
    };
    let mut spec = pod_spec();
    inject_proxy(&mut spec, &["a", "init"], &proxy).expect("proxy");
    assert_eq!(
        env_names(&spec.containers[0]),
        ["X", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"]
    );
    assert!(env_names(&spec.containers[1]).is_empty(), "b not named");
    let init = spec.init_containers.as_ref().expect("init containers");
    assert_eq!(env_names(&init[0]), ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"]);
    assert_eq!(
        init[0].env.as_ref().and_then(|e| e[2].value.clone()).as_deref(),
        Some(".cluster.local")
    );

    let err = inject_proxy(&mut pod_spec(), &["nope"], &proxy).expect_err("unknown container");
    assert_eq!(
        err.message,
        "requested injection for non-existent container: \"nope\""
    );
}

#[test]
fn c89_internal_load_balancer() {
    let base: PodSpec = de(json!({"containers": [{"name": "cvo", "env": [
        {"name": "KUBERNETES_SERVICE_HOST", "value": "old"}, {"name": "OTHER", "value": "x"}]}]}));
    let mut spec = base.clone();
    update_pod_spec_with_internal_lb(&mut spec, "cvo", "", "6443");
    assert_eq!(spec, base, "empty host: unchanged");

    update_pod_spec_with_internal_lb(&mut spec, "cvo", "api-int.example.com", "6443");
    let env: Vec<(String, String)> = spec.containers[0]
        .env
        .iter()
        .flatten()
        .map(|e| (e.name.clone(), e.value.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        env,
        [
            (
                "KUBERNETES_SERVICE_HOST".to_owned(),
                "api-int.example.com".to_owned()
            ),
            ("OTHER".into(), "x".into()),
            ("KUBERNETES_SERVICE_PORT".into(), "6443".into()),
        ]
    );

    let mut spec: PodSpec = de(json!({"containers": [{"name": "cvo"}]}));
    update_pod_spec_with_internal_lb(&mut spec, "cvo", "h", "");
    assert_eq!(
        env_names(&spec.containers[0]),
        ["KUBERNETES_SERVICE_PORT", "KUBERNETES_SERVICE_HOST"]
    );
    assert_eq!(
        spec.containers[0]
            .env
            .as_ref()
            .and_then(|e| e[0].value.clone())
            .as_deref(),
        Some("443")
    );
    assert_eq!(
        builders::internal_lb_from_url("https://api-int.c.example.com:6443"),
        Some(("api-int.c.example.com".into(), "6443".into()))
    );
    assert_eq!(
        builders::internal_lb_from_url("https://h"),
        Some(("h".into(), "443".into()))
    );
}

fn tls_cm(annotation: Option<&str>, data: Option<Value>) -> ConfigMap {
    let mut v = json!({"metadata": {"name": "c", "namespace": "ns"}});
    if let Some(a) = annotation {
        v["metadata"]["annotations"] = json!({"config.openshift.io/inject-tls": a});
    }
    if let Some(d) = data {
        v["data"] = d;
    }
    de(v)
}

#[test]
fn c90_inject_tls_config_map() {
    let operator_config = "apiVersion: operator.openshift.io/v1alpha1\nkind: GenericOperatorConfig\nservingInfo:\n  bindAddress: 0.0.0.0:8443\n";
    let profile = TlsProfile::from_apiserver(None);
    let data = json!({"config.yaml": operator_config});
    for cm in [
        tls_cm(None, Some(data.clone())),
        tls_cm(Some("false"), Some(data.clone())),
        tls_cm(Some(""), Some(data.clone())),
        tls_cm(Some("true"), None),
        tls_cm(Some("true"), Some(json!({}))),
        tls_cm(Some("true"), Some(json!({"config.yaml": "{not: [yaml"}))),
        tls_cm(
            Some("true"),
            Some(json!({"config.yaml": "apiVersion: config.openshift.io/v1\nkind: GenericOperatorConfig\n"})),
        ),
    ] {
        let mut c = cm.clone();
        assert!(!inject_tls(&mut c, &profile));
        assert_eq!(c, cm, "untouched");
    }
    let mut c = tls_cm(Some("true"), Some(data));
    assert!(
        inject_tls(&mut c, &profile),
        "APIServer missing: default profile injected"
    );
    let text = c
        .data
        .as_ref()
        .and_then(|d| d.get("config.yaml"))
        .cloned()
        .unwrap_or_default();
    let doc: Value = serde_norway::from_str(&text).expect("yaml");
    assert_eq!(doc["servingInfo"]["minTLSVersion"], "VersionTLS12");
    assert_eq!(doc["servingInfo"]["bindAddress"], "0.0.0.0:8443");
    assert_eq!(doc["servingInfo"]["cipherSuites"][0], "TLS_AES_128_GCM_SHA256");
    let again = c.clone();
    assert!(!inject_tls(&mut c, &profile), "already matching: no change");
    assert_eq!(c, again);
}

// ---------------------------------------------------------------- apply against a server

/// A request the applier sent: `(verb, path)`; verbs as the simulator's audit names them.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(&'static str, String)>>>;

/// The verb of a request: discovery, get, list, watch, create, update, patch, delete,
/// deletecollection; dry-run writes are `dry-run`.
fn verb_of(method: &http::Method, uri: &http::Uri) -> &'static str {
    let query = uri.query().unwrap_or_default();
    let segs: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    // After /api/v1 or /apis/group/version.
    let rest: &[&str] = match segs.as_slice() {
        ["api", _, rest @ ..] => rest,
        ["apis", _, _, rest @ ..] => rest,
        _ => &[],
    };
    if rest.is_empty() {
        return "discovery";
    }
    let rest = match rest {
        ["namespaces", _, tail @ ..] if !tail.is_empty() => tail,
        r => r,
    };
    let named = rest.len() > 1;
    if query.contains("dryRun=All") && *method != http::Method::GET {
        return "dry-run";
    }
    match (method.as_str(), named) {
        ("GET", true) => "get",
        ("GET", false) if query.contains("watch=") => "watch",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "unknown",
    }
}

/// Where an apply test runs: the in-process simulator, or the real cluster
/// `CVO_TEST_KUBECONFIG` names. The applier's client counts its requests by verb (the same
/// way on both); the test's own reads and writes go through `admin`, uncounted. Each test
/// gets a namespace of its own and, when asked, a CRD of its own.
struct Env {
    sim: Option<Simulator>,
    client: Client,
    admin: Client,
    seen: Seen,
    ns: String,
    crd: Option<(String, kube::api::ApiResource)>,
}

fn suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()) ^ d.as_secs());
    let n = nanos
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(
            N.fetch_add(1, Ordering::Relaxed)
                .wrapping_mul(1_442_695_040_888_963_407),
        )
        .wrapping_add(u64::from(std::process::id()));
    format!("{:08x}", n >> 32)
}

async fn env() -> Env {
    env_with(false).await
}

/// A fresh environment; with `crd`, a cluster-scoped CRD `widgets.<unique group>` (kind
/// Widget, v1, any `spec`) is created and established first.
async fn env_with(crd: bool) -> Env {
    env_on(std::env::var_os("CVO_TEST_KUBECONFIG"), crd).await
}

/// A fresh environment on the cluster `kubeconfig` names, or on a new simulator when `None`.
async fn env_on(kubeconfig: Option<std::ffi::OsString>, crd: bool) -> Env {
    let seen: Seen = std::sync::Arc::default();
    let record = {
        let seen = seen.clone();
        move |req: http::Request<kube::client::Body>| {
            let v = verb_of(req.method(), req.uri());
            seen.lock().expect("seen").push((v, req.uri().path().to_owned()));
            req
        }
    };
    let (sim, client, admin) = match kubeconfig {
        Some(path) => {
            let kc = kube::config::Kubeconfig::read_from(&path).expect("CVO_TEST_KUBECONFIG readable");
            let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await
                .expect("kubeconfig usable");
            let admin = Client::try_from(cfg.clone()).expect("client");
            let client = kube::client::ClientBuilder::try_from(cfg)
                .expect("client builder")
                .with_layer(&tower::util::MapRequestLayer::new(record))
                .build();
            (None, client, admin)
        }
        None => {
            let sim = Simulator::new();
            let client = Client::new(tower::util::MapRequest::new(sim.clone(), record), "default");
            (Some(sim.clone()), client, Client::new(sim, "default"))
        }
    };
    let ns = format!("cvo-apply-{}", suffix());
    let mut e = Env {
        sim,
        client,
        admin,
        seen,
        ns,
        crd: None,
    };
    e.put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": e.ns}}))
        .await;
    if crd {
        let group = format!("t{}.cvo.example.com", suffix());
        let name = format!("widgets.{group}");
        e.put(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name},
            "spec": {"group": group, "scope": "Cluster",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}}))
            .await;
        let gvk = kube::api::GroupVersionKind::gvk(&group, "v1", "Widget");
        let ar = kube::api::ApiResource::from_gvk_with_plural(&gvk, "widgets");
        let probe: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(e.admin.clone(), &ar);
        common::poll(
            "crd served",
            Duration::from_secs(60),
            Duration::from_millis(100),
            || async {
                probe
                    .list(&kube::api::ListParams::default())
                    .await
                    .ok()
                    .map(|_| ())
            },
        )
        .await;
        e.crd = Some((name, ar));
    }
    e.clear();
    e
}

impl Env {
    fn api(&self, api_version: &str, kind: &str, ns: Option<&str>) -> kube::Api<kube::api::DynamicObject> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let plural = match kind {
            "Widget" => "widgets".to_owned(),
            k => format!("{}s", k.to_lowercase()),
        };
        let ar = kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk(group, version, kind),
            &plural,
        );
        match ns {
            Some(ns) => kube::Api::namespaced_with(self.admin.clone(), ns, &ar),
            None => kube::Api::all_with(self.admin.clone(), &ar),
        }
    }

    fn api_for(&self, o: &Value) -> kube::Api<kube::api::DynamicObject> {
        self.api(
            o["apiVersion"].as_str().unwrap_or_default(),
            o["kind"].as_str().unwrap_or_default(),
            o["metadata"]["namespace"].as_str(),
        )
    }

    /// The live object `o` names (apiVersion, kind, name, namespace), if any.
    async fn get(&self, o: &Value) -> Option<Value> {
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        within("get", self.api_for(o).get_opt(name))
            .await
            .expect("get")
            .map(|d| serde_json::to_value(d).expect("json"))
    }

    /// Creates `o`, or replaces the live object (its main resource, then its status when `o`
    /// has one), as a controller or an administrator would; not counted.
    async fn put(&self, mut o: Value) -> Value {
        let api = self.api_for(&o);
        let name = o["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        let pp = kube::api::PostParams::default();
        let Some(live) = self.get(&o).await else {
            let obj: kube::api::DynamicObject = serde_json::from_value(o).expect("object");
            let made = within("create", api.create(&pp, &obj)).await.expect("created");
            return serde_json::to_value(made).expect("json");
        };
        o["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
        let obj: kube::api::DynamicObject = serde_json::from_value(o.clone()).expect("object");
        let mut out = within("replace", api.replace(&name, &pp, &obj))
            .await
            .expect("replaced");
        if o.get("status").is_some() && out.data.get("status") != o.get("status") {
            let mut st = o;
            st["metadata"]["resourceVersion"] = json!(out.metadata.resource_version);
            let obj: kube::api::DynamicObject = serde_json::from_value(st).expect("object");
            if let Ok(s) = within("replace status", api.replace_status(&name, &pp, &obj)).await {
                out = s;
            }
        }
        serde_json::to_value(out).expect("json")
    }

    fn clear(&self) {
        self.seen.lock().expect("seen").clear();
    }

    /// Requests the applier sent since the last [`Env::clear`], by verb.
    fn counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let mut m = std::collections::BTreeMap::new();
        for (v, _) in self.seen.lock().expect("seen").iter() {
            *m.entry(*v).or_default() += 1;
        }
        m
    }

    fn count(&self, verb: &str) -> usize {
        self.counts().get(verb).copied().unwrap_or(0)
    }

    fn requests(&self) -> usize {
        self.seen.lock().expect("seen").len()
    }

    fn writes(&self) -> usize {
        ["create", "update", "patch", "delete", "deletecollection"]
            .iter()
            .map(|v| self.count(v))
            .sum()
    }

    fn widget(&self, name: &str, args: &[&str], create_only: bool) -> Value {
        let (_, ar) = self.crd.as_ref().expect("env_with(true)");
        let mut v = json!({
            "apiVersion": ar.api_version, "kind": "Widget",
            "metadata": {"name": name, "labels": {"a": "b"}},
            "spec": {"kernelArguments": args},
        });
        if create_only {
            v["metadata"]["annotations"] = json!({"release.openshift.io/create-only": "TRUE"});
        }
        v
    }

    /// The manifests of the apply tests: the test namespace, a ConfigMap, a Deployment and a
    /// Widget (with [`env_with`]).
    fn manifests(&self) -> Vec<Value> {
        let ns = &self.ns;
        let mut v = vec![
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"x": "y"}}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": ns},
                   "data": {"k": "v"}}),
            deployment_manifest("op", ns),
        ];
        if self.crd.is_some() {
            v.push(self.widget(&format!("w-{ns}"), &["a=1"], false));
        }
        v
    }

    /// Removes what the test made (namespace, widgets, CRD).
    async fn done(self) {
        let dp = kube::api::DeleteParams::default();
        if let Some((name, _)) = &self.crd {
            let crds = self.api("apiextensions.k8s.io/v1", "CustomResourceDefinition", None);
            let _ = crds.delete(name, &dp).await;
        }
        let _ = self.api("v1", "Namespace", None).delete(&self.ns, &dp).await;
    }
}

fn deployment_manifest(name: &str, ns: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": name, "namespace": ns},
           "spec": {"selector": {"matchLabels": {"app": "op"}},
                    "template": {"metadata": {"labels": {"app": "op"}},
                                 "spec": {"containers": [{"name": "op", "image": "quay.io/op:1",
                                    "ports": [{"name": "https", "containerPort": 8443}],
                                    "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}},
                                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8443}}}],
                                          "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}]}}}})
}

#[tokio::test]
async fn c91_create_only_unknown_kind() {
    let e = env_with(true).await;
    let applier = Applier::new(e.client.clone());
    let ctx = ApplyContext::default();
    let name = format!("w-{}", e.ns);
    let out = within("create", applier.apply(&ctx, &e.widget(&name, &["x"], true)))
        .await
        .expect("created");
    assert!(out.wrote);
    // A create keeps no copy of the object: it is in the cluster.
    assert!(
        matches!(out.drift, Drift::Create { object: None }),
        "{:?}",
        out.drift
    );
    assert_eq!(e.count("create"), 1);
    let before = e.get(&e.widget(&name, &[], true)).await;
    let out = within("no update", applier.apply(&ctx, &e.widget(&name, &["y"], true)))
        .await
        .expect("create-only present");
    assert!(!out.wrote);
    assert_eq!(out.drift, Drift::None);
    assert_eq!(e.writes(), 1, "no update issued");
    assert_eq!(e.get(&e.widget(&name, &[], true)).await, before);
    e.done().await;
}

async fn apply_all(applier: &Applier, ctx: &ApplyContext, manifests: &[Value]) -> Vec<Drift> {
    let mut out = Vec::new();
    for m in manifests {
        let o = within("apply", applier.apply(ctx, m)).await.expect("applied");
        out.push(o.drift);
    }
    out
}

/// The ClusterVersion uid the engine puts in owner references: on a real cluster with a
/// garbage collector, an owner that does not exist would get the objects collected, so
/// none there.
fn cv_uid(e: &Env) -> Option<String> {
    e.sim.as_ref().map(|_| "cv-uid".to_owned())
}

#[tokio::test]
async fn second_apply_over_unchanged_cluster_makes_zero_writes() {
    let e = env_with(true).await;
    let applier = Applier::new(e.client.clone());
    let ctx = ApplyContext {
        mode: PayloadState::Updating,
        cluster_version_uid: cv_uid(&e),
        ..Default::default()
    };
    let manifests = e.manifests();
    // The namespace exists already (the test's own): it is updated with the label.
    let first = apply_all(&applier, &ctx, &manifests).await;
    assert!(matches!(first[0], Drift::Update { .. }), "{first:?}");
    assert!(
        first[1..]
            .iter()
            .all(|d| matches!(d, Drift::Create { object: None })),
        "{first:?}"
    );
    assert_eq!(e.count("create"), 3);
    if e.sim.is_some() {
        let cm = e.get(&manifests[1]).await.expect("configmap");
        assert_eq!(cm["metadata"]["ownerReferences"][0]["uid"], "cv-uid");
        assert_eq!(cm["metadata"]["ownerReferences"][0]["controller"], true);
    }
    e.clear();
    let second = apply_all(&applier, &ctx, &manifests).await;
    assert!(second.iter().all(Drift::is_none), "{second:?}");
    assert_eq!(e.writes(), 0, "{:?}", e.counts());
    assert_eq!(e.count("get"), 4);
    assert_eq!(
        e.count("discovery"),
        0,
        "the Widget resource comes from the discovery cache"
    );
    e.done().await;
}

#[tokio::test]
async fn server_defaults_do_not_cause_updates() {
    let e = env().await;
    let applier = Applier::new(e.client.clone());
    let ctx = ApplyContext::default();
    let manifests = e.manifests();
    apply_all(&applier, &ctx, &manifests).await;
    // The server filled in its defaults; an administrator writes the CPU request in another
    // notation and a controller reports status.
    let mut d = e.get(&manifests[2]).await.expect("deployment");
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(
        (
            &pod["dnsPolicy"],
            &pod["containers"][0]["terminationMessagePath"],
            &d["spec"]["revisionHistoryLimit"]
        ),
        (&json!("ClusterFirst"), &json!("/dev/termination-log"), &json!(10)),
        "server-side defaults"
    );
    d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("0.01");
    d["status"] = json!({"conditions": [{"type": "Available", "status": "True"}]});
    e.put(d).await;
    e.clear();
    let drift = apply_all(&applier, &ctx, &manifests).await;
    assert!(drift.iter().all(Drift::is_none), "{drift:?}");
    assert_eq!(e.writes(), 0);
    e.done().await;
}

#[tokio::test]
async fn dry_run_reports_drift_and_writes_nothing() {
    let e = env_with(true).await;
    let applier = Applier::new(e.client.clone());
    // the namespace exists, the rest does not; the namespace has drifted (label changed)
    let mut ns = e
        .get(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": e.ns}}))
        .await
        .expect("namespace");
    ns["metadata"]["labels"]["x"] = json!("z");
    e.put(ns).await;
    e.clear();
    let ctx = ApplyContext {
        dry_run: true,
        ..Default::default()
    };
    let manifests = e.manifests();
    let drift = apply_all(&applier, &ctx, &manifests).await;
    assert_eq!(e.writes(), 0, "{:?}", e.counts());
    let Drift::Update { diff } = &drift[0] else {
        panic!("namespace drift {:?}", drift[0]);
    };
    assert_eq!(diff.len(), 1, "{diff:?}");
    assert_eq!(diff[0].path, ".metadata.labels.x");
    assert_eq!(
        (diff[0].from.clone(), diff[0].to.clone()),
        (Some(json!("z")), Some(json!("y")))
    );
    // Watch-only: each create carries the object as it would be sent.
    for d in &drift[1..] {
        let Drift::Create { object: Some(o) } = d else {
            panic!("not a create with its object: {d:?}");
        };
        assert!(o["metadata"]["name"].is_string(), "{o}");
    }

    // a drifted deployment image shows as one field change
    let active = ApplyContext::default();
    apply_all(&applier, &active, &manifests).await;
    let mut d = e.get(&manifests[2]).await.expect("deployment");
    d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("quay.io/op:0");
    e.put(d).await;
    e.clear();
    let drift = apply_all(&applier, &ctx, &manifests).await;
    assert_eq!(e.writes(), 0);
    let Drift::Update { diff } = &drift[2] else {
        panic!("deployment drift {:?}", drift[2]);
    };
    assert_eq!(
        diff.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        [".spec.template.spec.containers[0].image"]
    );
    // applying for real repairs it with one update
    e.clear();
    apply_all(&applier, &active, &manifests).await;
    assert_eq!(e.count("update"), 1, "{:?}", e.counts());
    let d = e.get(&manifests[2]).await.expect("deployment");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "quay.io/op:1"
    );
    e.done().await;
}

/// Simulator only: it serves ClusterOperator built in (a real server needs the CRD, which
/// `tests/engine_scenarios.rs` installs for its runs there).
#[tokio::test]
async fn sim_cluster_operator_is_health_checked_not_created() {
    let e = env_on(None, false).await;
    let applier = Applier::new(e.client.clone());
    let manifest = json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
        "metadata": {"name": "test-co"}, "status": {"versions": [{"name": "operator", "version": "v1"}]}});
    let ctx = ApplyContext {
        mode: PayloadState::Updating,
        ..Default::default()
    };
    let e1 = within("co", applier.apply(&ctx, &manifest))
        .await
        .expect_err("not found");
    assert_eq!(e1.reason, "UpdatePayloadResourceNotFound");
    assert_eq!(e.writes(), 0);
    assert!(
        within("precreate", applier.precreate_cluster_operator(&ctx, &manifest))
            .await
            .expect("precreated")
    );
    let mut live = e.get(&manifest).await.expect("co");
    // (The CRD requires each condition's lastTransitionTime.)
    let at = "2026-01-01T00:00:00Z";
    live["status"] = json!({"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": at},
        {"type": "Degraded", "status": "False", "lastTransitionTime": at}],
        "versions": [{"name": "operator", "version": "v0"}]});
    e.put(live).await;
    let e2 = within("co", applier.apply(&ctx, &manifest))
        .await
        .expect_err("updating");
    assert_eq!(
        (e2.reason.as_str(), e2.effect),
        ("ClusterOperatorUpdating", UpdateEffect::None)
    );
    let mut live = e.get(&manifest).await.expect("co");
    live["status"]["versions"][0]["version"] = json!("v1");
    e.put(live).await;
    e.clear();
    let out = within("co", applier.apply(&ctx, &manifest))
        .await
        .expect("healthy");
    assert!(!out.wrote);
    assert_eq!(e.writes(), 0, "status never written");
    e.done().await;
}

#[tokio::test]
async fn deletion_manifest_deletes_once_in_updating_mode_only() {
    let e = env().await;
    let applier = Applier::new(e.client.clone());
    let ns = e.ns.clone();
    e.put(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "old", "namespace": ns}}))
        .await;
    let del = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "old", "namespace": ns, "annotations": {"release.openshift.io/delete": "true"}}});
    e.clear();
    let out = within("reconciling", applier.apply(&ApplyContext::default(), &del))
        .await
        .expect("no-op");
    assert_eq!((out.drift, out.wrote), (Drift::None, false));
    assert_eq!(e.requests(), 0, "no request outside Updating mode");
    let updating = ApplyContext {
        mode: PayloadState::Updating,
        ..Default::default()
    };
    let dry = ApplyContext {
        dry_run: true,
        ..updating.clone()
    };
    let out = within("dry", applier.apply(&dry, &del)).await.expect("dry");
    assert_eq!((out.drift, out.wrote), (Drift::Delete, false));
    assert_eq!(e.writes(), 0);
    let out = within("delete", applier.apply(&updating, &del))
        .await
        .expect("deleted");
    assert_eq!((out.drift, out.wrote), (Drift::Delete, true));
    assert_eq!(e.count("delete"), 1);
    assert!(e.get(&del).await.is_none());
    within("verify", applier.apply(&updating, &del))
        .await
        .expect("verified");
    assert_eq!(e.count("delete"), 1);
    assert!(applier.deletions_in_progress().is_empty());
    let mut bad = del.clone();
    bad["metadata"]["annotations"]["release.openshift.io/delete"] = json!("yes");
    let err = within("bad", applier.apply(&updating, &bad))
        .await
        .expect_err("invalid");
    assert_eq!(
        err.message,
        "invalid delete annotation \"release.openshift.io/delete\" with value \"yes\""
    );
    e.done().await;
}

#[tokio::test]
async fn unknown_kind_is_type_missing_and_api_errors_are_mapped() {
    let e = env().await;
    let applier = Applier::new(e.client.clone());
    let m = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    let err = within("unknown", applier.apply(&ApplyContext::default(), &m))
        .await
        .expect_err("type missing");
    assert_eq!(err.reason, "UpdatePayloadResourceTypeMissing");
    assert_eq!(
        err.message,
        "Could not update widget \"w\": the server does not recognize this resource, check extension API servers"
    );
    // a ConfigMap in a namespace that does not exist: the server's NotFound
    let missing = format!("{}-missing", e.ns);
    let cm =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": missing}});
    let err = within("ns missing", applier.apply(&ApplyContext::default(), &cm))
        .await
        .expect_err("not found");
    assert_eq!(err.reason, "UpdatePayloadResourceNotFound");
    assert_eq!(
        err.message,
        format!("Could not update configmap \"{missing}/c\": resource may have been deleted")
    );
    e.done().await;
}

#[test]
fn readiness_of_deployment_and_job() {
    let mut d = deployment(json!({}));
    assert_eq!(check_deployment(&d), Ok(()));
    d.status = Some(de(json!({"conditions": [
        {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": "m1"},
        {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "m2"}]})));
    let e = check_deployment(&d).expect_err("not available");
    assert_eq!(e.reason, "WorkloadNotAvailable");
    assert_eq!(
        e.message,
        "deployment ns/d is not available MinimumReplicasUnavailable (m1) or progressing ProgressDeadlineExceeded (m2)"
    );
    let job: Job =
        de(json!({"metadata": {"name": "j", "namespace": "ns"}, "status": {"active": 0, "failed": 1}}));
    let e = check_job(&job).expect_err("failed job");
    assert_eq!(
        e.message,
        "deadline exceeded, reason: \"DeadlineExceeded\", message: \"Job was active longer than specified deadline\""
    );
    let job: Job = de(json!({"metadata": {"name": "j"}, "status": {"active": 1}}));
    assert_eq!(check_job(&job), Ok(()));
}

/// Every manifest of the real payload fixtures merged into itself (after the modifiers) is
/// unmodified: the merge rules are idempotent on real objects of every typed kind.
#[test]
fn real_payload_manifests_merge_into_themselves_unmodified() {
    let Some(dir) = common::upstream_fixture("", "real_payload_manifests_merge_into_themselves_unmodified")
    else {
        return;
    };
    let roots = [dir.join("cvo-repo/install"), dir.join("release-payload")];
    let mut files = Vec::new();
    let mut stack: Vec<_> = roots.to_vec();
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            for e in std::fs::read_dir(&p).expect("readable dir").flatten() {
                stack.push(e.path());
            }
        } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.push(p);
        }
    }
    let ctx = ApplyContext {
        cluster_version_uid: Some("uid".into()),
        ..Default::default()
    };
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        for doc in serde_norway::Deserializer::from_str(&text) {
            let Ok(v) = <Value as serde::Deserialize>::deserialize(doc) else {
                continue;
            };
            if v["kind"].as_str().is_none() || v["metadata"]["name"].as_str().is_none() {
                continue;
            }
            let required = build_required(&ctx, &v).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let (modified, _, merged) = merge_manifest(PayloadState::Reconciling, &required, &required)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(!modified, "{} merged into itself is modified", f.display());
            // and once more over the merged object (what the server returns after an update)
            let (again, _, _) = merge_manifest(PayloadState::Reconciling, &merged, &required).expect("merge");
            assert!(!again, "{}", f.display());
            *kinds
                .entry(v["kind"].as_str().unwrap_or_default().to_owned())
                .or_default() += 1;
        }
    }
    assert!(
        kinds.get("CustomResourceDefinition").copied().unwrap_or(0) > 50,
        "{kinds:?}"
    );
    for k in [
        "Deployment",
        "Namespace",
        "ConfigMap",
        "Service",
        "ServiceAccount",
        "ClusterRoleBinding",
    ] {
        assert!(kinds.contains_key(k), "{k} missing from {kinds:?}");
    }
}

/// 1,000 manifests (ConfigMaps and Deployments): the first pass creates them all, the second
/// (converged) pass sends one GET each and no write. Prints both durations.
#[tokio::test]
async fn thousand_manifests_converge_then_zero_writes() {
    let e = env().await;
    let applier = Applier::new(e.client.clone());
    let ctx = ApplyContext {
        mode: PayloadState::Updating,
        cluster_version_uid: cv_uid(&e),
        ..Default::default()
    };
    let ns = e.ns.clone();
    let mut all = Vec::new();
    for i in 0..1000 {
        all.push(if i % 3 == 0 {
            deployment_manifest(&format!("d{i}"), &ns)
        } else {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}"), "namespace": ns},
                   "data": {"i": i.to_string()}})
        });
    }
    let t = std::time::Instant::now();
    for m in &all {
        within("apply", applier.apply(&ctx, m)).await.expect("applied");
    }
    let first = t.elapsed();
    assert_eq!(e.count("create"), 1000);
    e.clear();
    let t = std::time::Instant::now();
    for m in &all {
        let out = within("apply", applier.apply(&ctx, m)).await.expect("applied");
        assert!(out.drift.is_none(), "{:?}", out.drift);
    }
    let second = t.elapsed();
    assert_eq!(e.writes(), 0);
    assert_eq!(e.count("get"), 1000);
    eprintln!(
        "1000 manifests: first pass {first:?} (1000 creates), converged pass {second:?} (1000 gets, 0 writes)"
    );
    e.done().await;
}

/// A watch that lags the server's writes (a loaded kube-apiserver; on the simulator, every
/// watch event 400 ms late): the pass after a first apply that created ConfigMaps waits until
/// the watch shows them, so it neither creates them again (a `409`, then a GET) nor reads
/// them: it reads and writes nothing.
#[tokio::test]
async fn the_pass_after_creates_waits_for_the_lagging_watch_instead_of_creating_again() {
    let e = env().await;
    if let Some(sim) = &e.sim {
        let mut f = sim.faults();
        f.watch.event_delay_ms = 400;
        sim.set_faults(f).expect("faults");
    }
    let cms: Vec<Value> = (0..5)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("lag-{i}"), "namespace": e.ns}, "data": {"i": i.to_string()}})
        })
        .collect();
    let refs: Vec<&Value> = cms.iter().collect();
    let applier = Applier::new(e.client.clone());
    within(
        "prepare",
        applier.prepare_pass_within(&refs, Duration::from_secs(5)),
    )
    .await;
    for m in &cms {
        let out = within("apply", applier.apply(&ApplyContext::default(), m))
            .await
            .expect("applied");
        assert!(out.wrote, "{m}");
    }
    within("finish", applier.finish_pass(true)).await;
    // At once the next pass: its start waits for the watch to show the five creates.
    e.clear();
    within(
        "prepare",
        applier.prepare_pass_within(&refs, Duration::from_secs(5)),
    )
    .await;
    for m in &cms {
        let out = within("apply", applier.apply(&ApplyContext::default(), m))
            .await
            .expect("applied");
        assert!(!out.wrote && out.drift.is_none(), "{m}: {:?}", out.drift);
    }
    let requests: Vec<_> = e
        .seen
        .lock()
        .expect("seen")
        .iter()
        .filter(|(v, _)| !matches!(*v, "watch" | "list" | "discovery"))
        .cloned()
        .collect();
    assert_eq!(
        requests,
        Vec::<(&str, String)>::new(),
        "the pass after the creates reads and writes nothing"
    );
    if let Some(sim) = &e.sim {
        sim.set_faults(Default::default()).expect("no faults");
    }
    e.done().await;
}

/// A payload's CRDs and their custom resources, applied as a first (Initializing) pass then a
/// converged (Reconciling) one, on both servers (issue 28): each CRD's `Established` comes from
/// the CRD watch (no GET of a CRD after its create), the custom resources' kinds from the CRDs
/// (no discovery request for their group), each custom resource is created without a GET, and
/// their watches open when the pass ends; the CRDs' readiness is recorded, so the converged
/// pass reads no payload object at all.
#[tokio::test]
async fn crds_and_their_custom_resources_first_apply_from_the_crd_watch() {
    let e = env().await;
    if let Some(sim) = &e.sim {
        // As on kube-apiserver: the create answers before the CRD is Established.
        sim.set_crd_establish_delay(Duration::from_millis(150));
    }
    let group = format!("t{}.cvo.example.com", suffix());
    let mut crds = Vec::new();
    let mut crs = Vec::new();
    for k in 0..3 {
        let (kind, plural) = (format!("Gadget{k}"), format!("gadget{k}s"));
        crds.push(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                "names": {"plural": plural, "singular": format!("gadget{k}"), "kind": kind, "listKind": format!("{kind}List")},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}}));
        for i in 0..2 {
            crs.push(json!({"apiVersion": format!("{group}/v1"), "kind": kind,
                "metadata": {"name": format!("g{i}"), "namespace": e.ns}, "spec": {"i": i}}));
        }
    }
    let all: Vec<Value> = crds.iter().chain(&crs).cloned().collect();
    let refs: Vec<&Value> = all.iter().collect();
    let applier = Applier::new(e.client.clone());
    let init = ApplyContext {
        mode: PayloadState::Initializing,
        ..Default::default()
    };
    within(
        "prepare",
        applier.prepare_pass_within(&refs, Duration::from_secs(5)),
    )
    .await;
    assert!(
        applier
            .caches()
            .watched()
            .contains(&"apiextensions.k8s.io/v1/CustomResourceDefinition".to_owned()),
        "{:?}",
        applier.caches().watched()
    );
    e.clear();
    for m in &all {
        let out = within("apply", applier.apply(&init, m)).await.expect("applied");
        assert!(out.wrote, "{m}");
        if m["kind"] == "CustomResourceDefinition" {
            let live = out.live.expect("the live CRD");
            let established = live["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Established" && c["status"] == "True")
            });
            assert!(
                established,
                "the apply returns once the CRD is Established: {live}"
            );
        }
    }
    within("finish", applier.finish_pass(false)).await;
    let seen = e.seen.lock().expect("seen").clone();
    let crd_gets: Vec<_> = seen
        .iter()
        .filter(|(v, p)| *v == "get" && p.contains("customresourcedefinitions/"))
        .collect();
    assert_eq!(crd_gets, Vec::<&(&str, String)>::new(), "no CRD is polled");
    let discovery: Vec<_> = seen
        .iter()
        .filter(|(_, p)| p.contains(&group) && !p.contains("/namespaces/"))
        .collect();
    assert!(
        discovery.iter().all(|(v, _)| *v == "watch" || *v == "list"),
        "the custom resources' kinds come from the CRDs, not discovery: {discovery:?}"
    );
    let cr_requests: Vec<_> = seen
        .iter()
        .filter(|(_, p)| p.contains("/namespaces/") && p.contains(&group))
        .collect();
    assert_eq!(
        cr_requests.iter().filter(|(v, _)| *v == "create").count(),
        6,
        "{cr_requests:?}"
    );
    assert!(
        cr_requests.iter().all(|(v, _)| *v == "create"),
        "each custom resource is created without a GET: {cr_requests:?}"
    );
    let watched = applier.caches().watched();
    for k in 0..3 {
        assert!(
            watched.contains(&format!("{group}/v1/Gadget{k}")),
            "the pass's end opens the custom resources' watches: {watched:?}"
        );
    }
    // The converged pass: the CRDs' readiness was recorded while Initializing.
    let reconciling = ApplyContext::default();
    e.clear();
    within(
        "prepare",
        applier.prepare_pass_within(&refs, Duration::from_secs(5)),
    )
    .await;
    for m in &all {
        let out = within("apply", applier.apply(&reconciling, m))
            .await
            .expect("applied");
        assert!(out.drift.is_none(), "{m}: {:?}", out.drift);
    }
    let reads: Vec<_> = e
        .seen
        .lock()
        .expect("seen")
        .iter()
        .filter(|(v, _)| !matches!(*v, "watch" | "list" | "discovery"))
        .cloned()
        .collect();
    assert_eq!(
        reads,
        Vec::<(&str, String)>::new(),
        "the converged pass reads and writes nothing"
    );
    // Clean up the CRDs (cluster-scoped) on the shared real server.
    for c in &crds {
        let name = c["metadata"]["name"].as_str().unwrap_or_default();
        let _ = e.api_for(c).delete(name, &Default::default()).await;
    }
    e.done().await;
}
