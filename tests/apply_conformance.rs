//! The apply layer (`cvo::reconcile::apply`): merge ("ensure") semantics per kind, manifest
//! modifiers, readiness and ClusterOperator health checks — the cases of upstream
//! `pkg/cvo/internal/operatorstatus_test.go`, `lib/resourcemerge/*_test.go`,
//! `lib/resourcebuilder/*_test.go` and `pkg/cvo/internal/generic_test.go` — and the apply step
//! against the simulator through a real `kube::Client`: zero writes on a converged cluster, also
//! after the server filled defaults, and dry-run (watch-only) drift with zero writes.

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

fn sim_client() -> (Simulator, Client) {
    let sim = Simulator::new();
    let client = Client::new(sim.clone(), "default");
    (sim, client)
}

fn machine_config(name: &str, kargs: &[&str], create_only: bool) -> Value {
    let mut v = json!({
        "apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
        "metadata": {"name": name, "labels": {"a": "b"}},
        "spec": {"kernelArguments": kargs},
    });
    if create_only {
        v["metadata"]["annotations"] = json!({"release.openshift.io/create-only": "TRUE"});
    }
    v
}

#[tokio::test]
async fn c91_create_only_unknown_kind() {
    let (sim, client) = sim_client();
    let applier = Applier::new(client);
    let ctx = ApplyContext::default();
    let out = within("create", applier.apply(&ctx, &machine_config("mc", &["x"], true)))
        .await
        .expect("created");
    assert!(out.wrote);
    assert!(matches!(out.drift, Drift::Create { .. }));
    assert_eq!(sim.audit().count("create"), 1);
    let before = sim.get("machineconfiguration.openshift.io", "machineconfigs", "", "mc");
    let out = within(
        "no update",
        applier.apply(&ctx, &machine_config("mc", &["y"], true)),
    )
    .await
    .expect("create-only present");
    assert!(!out.wrote);
    assert_eq!(out.drift, Drift::None);
    assert_eq!(sim.audit().writes(), 1, "no update issued");
    assert_eq!(
        sim.get("machineconfiguration.openshift.io", "machineconfigs", "", "mc"),
        before
    );
}

// ---------------------------------------------------------------- apply against the simulator

fn manifests() -> Vec<Value> {
    vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-demo", "labels": {"x": "y"}}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "openshift-demo"},
               "data": {"k": "v"}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "op", "namespace": "openshift-demo"},
               "spec": {"selector": {"matchLabels": {"app": "op"}},
                        "template": {"metadata": {"labels": {"app": "op"}},
                                     "spec": {"containers": [{"name": "op", "image": "quay.io/op:1",
                                        "ports": [{"name": "https", "containerPort": 8443}],
                                        "resources": {"requests": {"cpu": "10m", "memory": "50Mi"}},
                                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8443}}}],
                                              "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}]}}}}),
        machine_config("mc", &["a=1"], false),
    ]
}

async fn apply_all(applier: &Applier, ctx: &ApplyContext) -> Vec<Drift> {
    let mut out = Vec::new();
    for m in manifests() {
        let o = within("apply", applier.apply(ctx, &m)).await.expect("applied");
        out.push(o.drift);
    }
    out
}

#[tokio::test]
async fn second_apply_over_unchanged_cluster_makes_zero_writes() {
    let (sim, client) = sim_client();
    let applier = Applier::new(client);
    let ctx = ApplyContext {
        mode: PayloadState::Updating,
        cluster_version_uid: Some("cv-uid".into()),
        ..Default::default()
    };
    let first = apply_all(&applier, &ctx).await;
    assert!(
        first.iter().all(|d| matches!(d, Drift::Create { .. })),
        "{first:?}"
    );
    assert_eq!(sim.audit().count("create"), 4);
    let cm = sim
        .get("", "configmaps", "openshift-demo", "cfg")
        .expect("configmap");
    assert_eq!(cm["metadata"]["ownerReferences"][0]["uid"], "cv-uid");
    assert_eq!(cm["metadata"]["ownerReferences"][0]["controller"], true);
    sim.clear_audit();
    let second = apply_all(&applier, &ctx).await;
    assert!(second.iter().all(Drift::is_none), "{second:?}");
    let audit = sim.audit();
    assert_eq!(audit.writes(), 0, "{:?}", audit.counts());
    assert_eq!(audit.count("get"), 4);
    assert_eq!(
        audit.count("discovery"),
        0,
        "the MachineConfig resource comes from the discovery cache"
    );
}

#[tokio::test]
async fn server_defaults_do_not_cause_updates() {
    let (sim, client) = sim_client();
    let applier = Applier::new(client);
    let ctx = ApplyContext::default();
    apply_all(&applier, &ctx).await;
    // what a kube-apiserver would have filled in
    let mut d = sim
        .get("apps", "deployments", "openshift-demo", "op")
        .expect("deployment");
    d["spec"]["replicas"] = json!(1);
    d["spec"]["revisionHistoryLimit"] = json!(10);
    d["spec"]["progressDeadlineSeconds"] = json!(600);
    d["spec"]["strategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}});
    let pod = &mut d["spec"]["template"]["spec"];
    pod["dnsPolicy"] = json!("ClusterFirst");
    pod["restartPolicy"] = json!("Always");
    pod["schedulerName"] = json!("default-scheduler");
    pod["securityContext"] = json!({});
    pod["terminationGracePeriodSeconds"] = json!(30);
    pod["volumes"][0]["configMap"]["defaultMode"] = json!(420);
    let c = &mut pod["containers"][0];
    c["imagePullPolicy"] = json!("IfNotPresent");
    c["terminationMessagePath"] = json!("/dev/termination-log");
    c["terminationMessagePolicy"] = json!("File");
    c["ports"][0]["protocol"] = json!("TCP");
    c["resources"]["requests"]["cpu"] = json!("0.01");
    c["readinessProbe"] = json!({"httpGet": {"path": "/healthz", "port": 8443, "scheme": "HTTP"},
        "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3});
    d["status"] = json!({"conditions": [{"type": "Available", "status": "True"}]});
    sim.insert(d).expect("defaulted deployment stored");
    sim.clear_audit();
    let drift = apply_all(&applier, &ctx).await;
    assert!(drift.iter().all(Drift::is_none), "{drift:?}");
    assert_eq!(sim.audit().writes(), 0);
}

#[tokio::test]
async fn dry_run_reports_drift_and_writes_nothing() {
    let (sim, client) = sim_client();
    let applier = Applier::new(client);
    // the namespace exists, the rest does not; the namespace has drifted (label changed)
    sim.insert(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-demo", "labels": {"x": "z"}}}))
        .expect("namespace");
    sim.clear_audit();
    let ctx = ApplyContext {
        dry_run: true,
        ..Default::default()
    };
    let drift = apply_all(&applier, &ctx).await;
    assert_eq!(sim.audit().writes(), 0, "{:?}", sim.audit().counts());
    let Drift::Update { diff } = &drift[0] else {
        panic!("namespace drift {:?}", drift[0]);
    };
    assert_eq!(diff.len(), 1);
    assert_eq!(diff[0].path, ".metadata.labels.x");
    assert_eq!(
        (diff[0].from.clone(), diff[0].to.clone()),
        (Some(json!("z")), Some(json!("y")))
    );
    assert!(
        drift[1..].iter().all(|d| matches!(d, Drift::Create { .. })),
        "{drift:?}"
    );

    // a drifted deployment image shows as one field change
    let active = ApplyContext::default();
    apply_all(&applier, &active).await;
    let mut d = sim
        .get("apps", "deployments", "openshift-demo", "op")
        .expect("deployment");
    d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("quay.io/op:0");
    sim.insert(d).expect("drifted");
    sim.clear_audit();
    let drift = apply_all(&applier, &ctx).await;
    assert_eq!(sim.audit().writes(), 0);
    let Drift::Update { diff } = &drift[2] else {
        panic!("deployment drift {:?}", drift[2]);
    };
    assert_eq!(
        diff.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        [".spec.template.spec.containers[0].image"]
    );
    // applying for real repairs it with one update
    sim.clear_audit();
    apply_all(&applier, &active).await;
    assert_eq!(sim.audit().counts().get("update"), Some(&1));
    let d = sim
        .get("apps", "deployments", "openshift-demo", "op")
        .expect("deployment");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "quay.io/op:1"
    );
}

#[tokio::test]
async fn cluster_operator_is_health_checked_not_created() {
    let (sim, client) = sim_client();
    let applier = Applier::new(client);
    let manifest = json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
        "metadata": {"name": "test-co"}, "status": {"versions": [{"name": "operator", "version": "v1"}]}});
    let ctx = ApplyContext {
        mode: PayloadState::Updating,
        ..Default::default()
    };
    let e = within("co", applier.apply(&ctx, &manifest))
        .await
        .expect_err("not found");
    assert_eq!(e.reason, "UpdatePayloadResourceNotFound");
    assert_eq!(sim.audit().writes(), 0);
    assert!(
        within("precreate", applier.precreate_cluster_operator(&ctx, &manifest))
            .await
            .expect("precreated")
    );
    let mut live = sim
        .get("config.openshift.io", "clusteroperators", "", "test-co")
        .expect("co");
    live["status"] = json!({"conditions": [{"type": "Available", "status": "True"}, {"type": "Degraded", "status": "False"}],
        "versions": [{"name": "operator", "version": "v0"}]});
    sim.insert(live).expect("status");
    let e = within("co", applier.apply(&ctx, &manifest))
        .await
        .expect_err("updating");
    assert_eq!(
        (e.reason.as_str(), e.effect),
        ("ClusterOperatorUpdating", UpdateEffect::None)
    );
    let mut live = sim
        .get("config.openshift.io", "clusteroperators", "", "test-co")
        .expect("co");
    live["status"]["versions"][0]["version"] = json!("v1");
    sim.insert(live).expect("status");
    sim.clear_audit();
    let out = within("co", applier.apply(&ctx, &manifest))
        .await
        .expect("healthy");
    assert!(!out.wrote);
    assert_eq!(sim.audit().writes(), 0, "status never written");
}

#[tokio::test]
async fn deletion_manifest_deletes_once_in_updating_mode_only() {
    let (sim, client) = sim_client();
    let applier = Applier::new(client);
    sim.insert(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}))
        .expect("ns");
    sim.insert(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "old", "namespace": "ns"}}),
    )
    .expect("cm");
    let del = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "old", "namespace": "ns", "annotations": {"release.openshift.io/delete": "true"}}});
    sim.clear_audit();
    let out = within("reconciling", applier.apply(&ApplyContext::default(), &del))
        .await
        .expect("no-op");
    assert_eq!((out.drift, out.wrote), (Drift::None, false));
    assert_eq!(sim.audit().entries.len(), 0, "no request outside Updating mode");
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
    assert_eq!(sim.audit().writes(), 0);
    let out = within("delete", applier.apply(&updating, &del))
        .await
        .expect("deleted");
    assert_eq!((out.drift, out.wrote), (Drift::Delete, true));
    assert_eq!(sim.audit().count("delete"), 1);
    assert!(sim.get("", "configmaps", "ns", "old").is_none());
    within("verify", applier.apply(&updating, &del))
        .await
        .expect("verified");
    assert_eq!(sim.audit().count("delete"), 1);
    assert!(applier.deletions_in_progress().is_empty());
    let mut bad = del.clone();
    bad["metadata"]["annotations"]["release.openshift.io/delete"] = json!("yes");
    let e = within("bad", applier.apply(&updating, &bad))
        .await
        .expect_err("invalid");
    assert_eq!(
        e.message,
        "invalid delete annotation \"release.openshift.io/delete\" with value \"yes\""
    );
}

#[tokio::test]
async fn unknown_kind_is_type_missing_and_api_errors_are_mapped() {
    let (_sim, client) = sim_client();
    let applier = Applier::new(client);
    let m = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    let e = within("unknown", applier.apply(&ApplyContext::default(), &m))
        .await
        .expect_err("type missing");
    assert_eq!(e.reason, "UpdatePayloadResourceTypeMissing");
    assert_eq!(
        e.message,
        "Could not update widget \"w\": the server does not recognize this resource, check extension API servers"
    );
    // a ConfigMap in a namespace that does not exist: the server's NotFound
    let cm =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "missing"}});
    let e = within("ns missing", applier.apply(&ApplyContext::default(), &cm))
        .await
        .expect_err("not found");
    assert_eq!(e.reason, "UpdatePayloadResourceNotFound");
    assert_eq!(
        e.message,
        "Could not update configmap \"missing/c\": resource may have been deleted"
    );
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
    let (sim, client) = sim_client();
    let applier = Applier::new(client);
    let ctx = ApplyContext {
        mode: PayloadState::Updating,
        cluster_version_uid: Some("cv".into()),
        ..Default::default()
    };
    let mut all = vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bulk"}})];
    for i in 0..999 {
        all.push(if i % 3 == 0 {
            let mut d = manifests()[2].clone();
            d["metadata"] = json!({"name": format!("d{i}"), "namespace": "bulk"});
            d
        } else {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}"), "namespace": "bulk"},
                   "data": {"i": i.to_string()}})
        });
    }
    let t = std::time::Instant::now();
    for m in &all {
        within("apply", applier.apply(&ctx, m)).await.expect("applied");
    }
    let first = t.elapsed();
    assert_eq!(sim.audit().count("create"), 1000);
    sim.clear_audit();
    let t = std::time::Instant::now();
    for m in &all {
        let out = within("apply", applier.apply(&ctx, m)).await.expect("applied");
        assert!(out.drift.is_none(), "{:?}", out.drift);
    }
    let second = t.elapsed();
    let audit = sim.audit();
    assert_eq!(audit.writes(), 0);
    assert_eq!(audit.count("get"), 1000);
    eprintln!(
        "1000 manifests: first pass {first:?} (1000 creates), converged pass {second:?} (1000 gets, 0 writes)"
    );
}
