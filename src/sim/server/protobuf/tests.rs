use std::io::Write;

use prost::Message;
use prost_reflect::{DynamicMessage, Value as P};
use serde_json::json;

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/protobuf/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A message of `name` with `fields` set.
fn msg(name: &str, fields: Vec<(&str, P)>) -> DynamicMessage {
    let desc = pool()
        .expect("pool")
        .get_message_by_name(name)
        .unwrap_or_else(|| panic!("no {name}"));
    let mut m = DynamicMessage::new(desc);
    for (f, v) in fields {
        m.try_set_field_by_name(f, v)
            .unwrap_or_else(|e| panic!("{name}.{f}: {e}"));
    }
    m
}

fn meta(name: &str) -> String {
    format!("k8s.io.apimachinery.pkg.apis.meta.v1.{name}")
}

/// The body kubectl sends: magic, `runtime.Unknown` with `typeMeta` and `raw`.
fn envelope(api_version: &str, kind: &str, object: &DynamicMessage) -> Vec<u8> {
    let type_meta = msg(
        "k8s.io.apimachinery.pkg.runtime.TypeMeta",
        vec![
            ("apiVersion", P::String(api_version.into())),
            ("kind", P::String(kind.into())),
        ],
    );
    let unknown = msg(
        "k8s.io.apimachinery.pkg.runtime.Unknown",
        vec![
            ("typeMeta", P::Message(type_meta)),
            ("raw", P::Bytes(object.encode_to_vec().into())),
        ],
    );
    let mut body = MAGIC.to_vec();
    body.extend(unknown.encode_to_vec());
    body
}

#[test]
fn descriptor_asset_is_current() {
    let root = format!("{}/assets/protobuf", env!("CARGO_MANIFEST_DIR"));
    let mut compiler = protox::Compiler::new([&root]).expect("compiler");
    compiler.include_imports(true).include_source_info(false);
    compiler
        .open_files(PROTO_FILES)
        .expect("the .proto files compile");
    let fresh = compiler.encode_file_descriptor_set();
    let mut stored = Vec::new();
    flate2::read::GzDecoder::new(ASSET)
        .read_to_end(&mut stored)
        .expect("asset is gzip");
    if std::env::var_os("CVO_REFRESH_ASSETS").is_some_and(|v| v == "1") {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&fresh).expect("gzip");
        let path = format!("{root}/builtin-kinds.binpb.gz");
        std::fs::write(&path, gz.finish().expect("gzip")).expect(&path);
        return;
    }
    assert!(
        fresh == stored,
        "assets/protobuf/builtin-kinds.binpb.gz is stale: CVO_REFRESH_ASSETS=1 cargo test --lib protobuf"
    );
    // Every package named in PACKAGES is in it.
    let pool = pool().expect("pool");
    for (group, package) in PACKAGES {
        assert!(
            pool.get_message_by_name(&format!("{package}.ObjectReference"))
                .is_some()
                || pool.all_messages().any(|m| m.package_name() == package),
            "{group}: no {package}"
        );
    }
}

#[test]
fn kubectl_create_bodies_decode_as_kube_apiserver_stores_them() {
    let ns = decode(&fixture("kubectl-1.32-namespace.pb"), "v1", "Namespace").expect("namespace");
    assert_eq!(
        ns,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}, "spec": {}, "status": {}})
    );
    let cm = decode(&fixture("kubectl-1.32-configmap.pb"), "v1", "ConfigMap").expect("configmap");
    assert_eq!(
        cm,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"},
               "data": {"a": "b", "c": "d"}})
    );
    let secret = decode(&fixture("kubectl-1.32-secret.pb"), "v1", "Secret").expect("secret");
    assert_eq!(
        secret,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"},
               "data": {"password": "aHVudGVyMg=="}})
    );
    let deploy = decode(&fixture("kubectl-1.32-deployment.pb"), "apps/v1", "Deployment").expect("deployment");
    assert_eq!(
        deploy,
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "labels": {"app": "web"}},
               "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "resources": {}}]}},
                        "strategy": {}},
               "status": {}})
    );
    let svc = decode(&fixture("kubectl-1.32-service.pb"), "v1", "Service").expect("service");
    assert_eq!(
        svc,
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "svc1", "labels": {"app": "svc1"}},
               "spec": {"ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                        "selector": {"app": "svc1"}, "type": "ClusterIP"},
               "status": {"loadBalancer": {}}})
    );
    let job = decode(&fixture("kubectl-1.32-job.pb"), "batch/v1", "Job").expect("job");
    assert_eq!(
        job,
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j1"},
               "spec": {"template": {"metadata": {},
                                     "spec": {"containers": [{"name": "j1", "image": "busybox", "resources": {}}],
                                              "restartPolicy": "Never"}}},
               "status": {}})
    );
    let sa = decode(&fixture("kubectl-1.32-serviceaccount.pb"), "v1", "ServiceAccount").expect("sa");
    assert_eq!(
        sa,
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa1"}})
    );
    let token = decode(
        &fixture("kubectl-1.32-tokenrequest.pb"),
        "authentication.k8s.io/v1",
        "TokenRequest",
    )
    .expect("token request");
    assert_eq!(
        token,
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {},
               "spec": {}, "status": {}})
    );
    let ssar = decode(
        &fixture("kubectl-1.32-selfsubjectaccessreview.pb"),
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
    )
    .expect("review");
    assert_eq!(
        ssar,
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
               "spec": {"resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"}},
               "status": {}})
    );
}

#[test]
fn special_types_take_their_json_forms() {
    let time = msg(
        &meta("Time"),
        vec![("seconds", P::I64(1_700_000_000)), ("nanos", P::I32(5))],
    );
    let micro = msg(
        &meta("MicroTime"),
        vec![("seconds", P::I64(1_700_000_000)), ("nanos", P::I32(123_456_789))],
    );
    let fields = msg(
        &meta("FieldsV1"),
        vec![("Raw", P::Bytes(br#"{"f:data":{}}"#.to_vec().into()))],
    );
    let managed = msg(
        &meta("ManagedFieldsEntry"),
        vec![
            ("manager", P::String("kubectl".into())),
            ("time", P::Message(time.clone())),
            ("fieldsV1", P::Message(fields)),
        ],
    );
    let object_meta = msg(
        &meta("ObjectMeta"),
        vec![
            ("name", P::String("l".into())),
            ("generation", P::I64(1 << 40)),
            ("creationTimestamp", P::Message(time)),
            // Go's zero time: an empty message, written as absent.
            ("deletionTimestamp", P::Message(msg(&meta("Time"), vec![]))),
            ("managedFields", P::List(vec![P::Message(managed)])),
        ],
    );
    let spec = msg(
        "k8s.io.api.coordination.v1.LeaseSpec",
        vec![
            ("holderIdentity", P::String("me".into())),
            ("leaseDurationSeconds", P::I32(137)),
            ("renewTime", P::Message(micro)),
            ("leaseTransitions", P::I32(0)),
        ],
    );
    let lease = msg(
        "k8s.io.api.coordination.v1.Lease",
        vec![("metadata", P::Message(object_meta)), ("spec", P::Message(spec))],
    );
    let v = decode(
        &envelope("coordination.k8s.io/v1", "Lease", &lease),
        "coordination.k8s.io/v1",
        "Lease",
    )
    .expect("lease");
    assert_eq!(
        v,
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": "l", "generation": 1_099_511_627_776_i64,
                            "creationTimestamp": "2023-11-14T22:13:20Z",
                            "managedFields": [{"manager": "kubectl", "time": "2023-11-14T22:13:20Z",
                                               "fieldsV1": {"f:data": {}}}]},
               "spec": {"holderIdentity": "me", "leaseDurationSeconds": 137,
                        "renewTime": "2023-11-14T22:13:20.123456Z"}})
    );

    let quantity = |q: &str| {
        P::Message(msg(
            "k8s.io.apimachinery.pkg.api.resource.Quantity",
            vec![("string", P::String(q.into()))],
        ))
    };
    let limits = std::collections::HashMap::from([(MapKey::String("memory".into()), quantity("128Mi"))]);
    let resources = msg(
        "k8s.io.api.core.v1.ResourceRequirements",
        vec![("limits", P::Map(limits))],
    );
    let int_or = |port: Option<i32>, name: &str| {
        let fields = match port {
            Some(p) => vec![("type", P::I64(0)), ("intVal", P::I32(p))],
            None => vec![("type", P::I64(1)), ("strVal", P::String(name.into()))],
        };
        P::Message(msg("k8s.io.apimachinery.pkg.util.intstr.IntOrString", fields))
    };
    let probe_handler = msg(
        "k8s.io.api.core.v1.ProbeHandler",
        vec![(
            "httpGet",
            P::Message(msg(
                "k8s.io.api.core.v1.HTTPGetAction",
                vec![("path", P::String("/".into())), ("port", int_or(None, "http"))],
            )),
        )],
    );
    let probe = msg(
        "k8s.io.api.core.v1.Probe",
        vec![
            ("handler", P::Message(probe_handler)),
            ("periodSeconds", P::I32(0)),
        ],
    );
    let container = msg(
        "k8s.io.api.core.v1.Container",
        vec![
            ("name", P::String("c".into())),
            (
                "args",
                P::List(vec![P::String(String::new()), P::String("-v".into())]),
            ),
            ("resources", P::Message(resources)),
            ("livenessProbe", P::Message(probe)),
            ("stdin", P::Bool(false)),
            ("tty", P::Bool(true)),
        ],
    );
    // Embedded Go structs (`json:",inline"`) give their fields to the parent.
    let local = msg(
        "k8s.io.api.core.v1.LocalObjectReference",
        vec![("name", P::String("cm".into()))],
    );
    let key_ref = msg(
        "k8s.io.api.core.v1.ConfigMapKeySelector",
        vec![
            ("localObjectReference", P::Message(local.clone())),
            ("key", P::String("k".into())),
        ],
    );
    let source = msg(
        "k8s.io.api.core.v1.EnvVarSource",
        vec![("configMapKeyRef", P::Message(key_ref))],
    );
    let env = msg(
        "k8s.io.api.core.v1.EnvVar",
        vec![("name", P::String("E".into())), ("valueFrom", P::Message(source))],
    );
    let container = {
        let mut c = container;
        c.set_field_by_name("env", P::List(vec![P::Message(env)]));
        c
    };
    let cm_volume = msg(
        "k8s.io.api.core.v1.ConfigMapVolumeSource",
        vec![("localObjectReference", P::Message(local))],
    );
    let volume_source = msg(
        "k8s.io.api.core.v1.VolumeSource",
        vec![("configMap", P::Message(cm_volume))],
    );
    let volume = msg(
        "k8s.io.api.core.v1.Volume",
        vec![
            ("name", P::String("v".into())),
            ("volumeSource", P::Message(volume_source)),
        ],
    );
    let pod_spec = msg(
        "k8s.io.api.core.v1.PodSpec",
        vec![
            ("containers", P::List(vec![P::Message(container)])),
            ("volumes", P::List(vec![P::Message(volume)])),
        ],
    );
    let pod = msg("k8s.io.api.core.v1.Pod", vec![("spec", P::Message(pod_spec))]);
    let v = decode(&envelope("v1", "Pod", &pod), "v1", "Pod").expect("pod");
    assert_eq!(
        v["spec"]["containers"][0],
        json!({"name": "c", "args": ["", "-v"], "resources": {"limits": {"memory": "128Mi"}},
               "livenessProbe": {"httpGet": {"path": "/", "port": "http"}}, "tty": true,
               "env": [{"name": "E", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}]})
    );
    assert_eq!(
        v["spec"]["volumes"],
        json!([{"name": "v", "configMap": {"name": "cm"}}])
    );

    let raw = msg(
        "k8s.io.apimachinery.pkg.runtime.RawExtension",
        vec![("raw", P::Bytes(br#"{"a":[1,2]}"#.to_vec().into()))],
    );
    let revision = msg(
        "k8s.io.api.apps.v1.ControllerRevision",
        vec![("data", P::Message(raw)), ("revision", P::I64(3))],
    );
    let v = decode(
        &envelope("apps/v1", "ControllerRevision", &revision),
        "apps/v1",
        "ControllerRevision",
    )
    .expect("revision");
    assert_eq!(
        v,
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "data": {"a": [1, 2]}, "revision": 3})
    );

    let cm = msg(
        "k8s.io.api.core.v1.ConfigMap",
        vec![
            (
                "binaryData",
                P::Map(std::collections::HashMap::from([(
                    MapKey::String("b".into()),
                    P::Bytes(vec![0, 255].into()),
                )])),
            ),
            ("immutable", P::Bool(true)),
        ],
    );
    let v = decode(&envelope("v1", "ConfigMap", &cm), "v1", "ConfigMap").expect("configmap");
    assert_eq!(
        v,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "binaryData": {"b": "AP8="}, "immutable": true})
    );
}

#[test]
fn durations_read_as_go_prints_them() {
    for (ns, text) in [
        (0, "0s"),
        (1, "1ns"),
        (1_500, "1.5µs"),
        (250_000_000, "250ms"),
        (1_500_000_000, "1.5s"),
        (123_000_000_000, "2m3s"),
        (3_600_000_000_000, "1h0m0s"),
        (3_661_000_000_001, "1h1m1.000000001s"),
        (-5_000_000_000, "-5s"),
    ] {
        assert_eq!(go_duration(ns), text, "{ns}");
    }
    let d = msg(&meta("Duration"), vec![("duration", P::I64(90_000_000_000))]);
    assert_eq!(message_json(&d), Ok(Some(json!("1m30s"))));
    let verbs = msg(
        &meta("Verbs"),
        vec![("items", P::List(vec![P::String("get".into())]))],
    );
    assert_eq!(message_json(&verbs), Ok(Some(json!(["get"]))));
}

#[test]
fn malformed_bodies_are_400_with_kube_apiservers_texts() {
    let err = decode(b"garbage", "v1", "Namespace").expect_err("no magic");
    assert_eq!((err.code, err.reason), (400, "BadRequest"));
    assert_eq!(
        err.message,
        "the object provided is unrecognized (must be of type Namespace): provided data does not \
         appear to be a protobuf message, expected prefix [107 56 115 0] (67617262616765)"
    );
    let err = decode(
        b"k8s\0\x0a\x0f\x0a\x02v1\x12\x09Namespace\x12\x05\xff\xff",
        "v1",
        "Namespace",
    )
    .expect_err("cut envelope");
    assert_eq!(
        err.message,
        "the object provided is unrecognized (must be of type Namespace): unexpected EOF \
         (6b3873000a0f0a02763112094e616d6573706163651205ffff)"
    );
    let err = decode(
        b"k8s\0\x0a\x0f\x0a\x02v1\x12\x09Namespace\x12\x03\x0a\x01\xff",
        "v1",
        "Namespace",
    )
    .expect_err("cut object");
    assert_eq!(
        err.message,
        "Namespace in version \"v1\" cannot be handled as a Namespace: unexpected EOF"
    );
    // Longer bodies are cut at 30 bytes.
    let long = [b'x'; 40];
    let err = decode(&long, "v1", "Namespace").expect_err("no magic");
    assert!(
        err.message.ends_with(&format!("({} ...)", "78".repeat(30))),
        "{}",
        err.message
    );
    // Bad JSON inside a RawExtension.
    let raw = msg(
        "k8s.io.apimachinery.pkg.runtime.RawExtension",
        vec![("raw", P::Bytes(b"{".to_vec().into()))],
    );
    let revision = msg(
        "k8s.io.api.apps.v1.ControllerRevision",
        vec![("data", P::Message(raw))],
    );
    let err = decode(
        &envelope("apps/v1", "ControllerRevision", &revision),
        "apps/v1",
        "ControllerRevision",
    )
    .expect_err("bad raw");
    assert_eq!(err.code, 400);
    assert!(
        err.message
            .starts_with("ControllerRevision in version \"v1\" cannot be handled as a ControllerRevision: "),
        "{}",
        err.message
    );
    assert!(!err.message.contains('\n'));
}

#[test]
fn another_kind_comes_back_as_its_type_only() {
    let cm = msg("k8s.io.api.core.v1.ConfigMap", vec![]);
    let v = decode(&envelope("v1", "ConfigMap", &cm), "v1", "Namespace").expect("decoded");
    assert_eq!(v, json!({"apiVersion": "v1", "kind": "ConfigMap"}));
    // An empty type in the envelope is the endpoint's.
    let ns = msg("k8s.io.api.core.v1.Namespace", vec![]);
    let v = decode(&envelope("", "", &ns), "v1", "Namespace").expect("decoded");
    assert_eq!(v, json!({"apiVersion": "v1", "kind": "Namespace"}));
    assert!(has_descriptor("apps/v1", "Deployment"));
    assert!(has_descriptor(
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview"
    ));
    assert!(!has_descriptor("config.openshift.io/v1", "ClusterVersion"));
    assert!(!has_descriptor("apps/v1beta1", "Deployment"));
    assert!(!has_descriptor("v1", "Widget"));
}
