//! kubectl's protobuf request bodies (issue 31): `kubectl create namespace|configmap|deployment|
//! secret generic` and `kubectl auth can-i` send `application/vnd.kubernetes.protobuf`; run
//! against `cvo sim serve`, and against the real kube-apiserver of `CVO_TEST_KUBECONFIG` when
//! it is set. The objects read back (`kubectl get -o json`) must be what kube-apiserver v1.36
//! stores for the same commands, less what every server makes up (`uid`, `resourceVersion`,
//! times) and the field sets of `managedFields` (one `Update` entry by `kubectl-create` on
//! both). Skipped with a printed reason when kubectl is absent (a
//! failure under CI).

use std::{
    ffi::OsStr,
    path::PathBuf,
    process::{Child, Stdio},
    time::Duration,
};

use serde_json::{Value, json};

#[path = "common/cluster.rs"]
mod cluster;
mod common;

/// The server the commands go to: `cvo sim serve` (killed on drop) or the real one.
struct Target {
    kubeconfig: PathBuf,
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Target {
    fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        if let Some(kubeconfig) = cluster::real_kubeconfig() {
            return Self {
                kubeconfig,
                child: None,
                _dir: dir,
            };
        }
        let kubeconfig = dir.path().join("kubeconfig");
        let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
        let args: Vec<&OsStr> = vec![OsStr::new("--from"), demo.as_os_str()];
        let (child, _) = common::spawn_sim_serve(&kubeconfig, &args, Stdio::null(), Duration::from_secs(30));
        Self {
            kubeconfig,
            child: Some(child),
            _dir: dir,
        }
    }

    /// kubectl with `args`: (success, stdout, stderr).
    fn kubectl(&self, args: &[&str]) -> (bool, String, String) {
        let out = std::process::Command::new("kubectl")
            .env("KUBECONFIG", &self.kubeconfig)
            .args(args)
            .output()
            .expect("kubectl runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.kubectl(args);
        assert!(ok, "kubectl {args:?} failed: {err}");
        out
    }
}

/// `o` without what each server makes up, the namespace's name as `NS`.
fn normalized(mut o: Value, ns: &str) -> Value {
    let meta = o["metadata"].as_object_mut().expect("metadata");
    for k in ["uid", "resourceVersion", "creationTimestamp"] {
        assert!(meta.remove(k).is_some(), "no metadata.{k}");
    }
    if meta.get("namespace").is_some() {
        meta.insert("namespace".into(), json!("NS"));
    }
    if meta.get("name").and_then(Value::as_str) == Some(ns) {
        meta.insert("name".into(), json!("NS"));
    }
    if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut)
        && labels.get("kubernetes.io/metadata.name").and_then(Value::as_str) == Some(ns)
    {
        labels.insert("kubernetes.io/metadata.name".into(), json!("NS"));
    }
    // One Update entry by kubectl create; its field set is not compared: the simulator's
    // tracks the fields of the body as sent, kube-apiserver's those of the defaulted object
    // (docs/commands.md).
    let managed = meta.remove("managedFields").expect("managedFields");
    assert_eq!(managed.as_array().map(Vec::len), Some(1), "{managed}");
    let api_version = o["apiVersion"].clone();
    assert_eq!(
        (
            &managed[0]["manager"],
            &managed[0]["operation"],
            &managed[0]["apiVersion"]
        ),
        (&json!("kubectl-create"), &json!("Update"), &api_version),
        "{managed}"
    );
    // The Deployment's status is its controller's (none runs on the simulator).
    if o["kind"] == "Deployment" {
        o.as_object_mut().expect("object").remove("status");
    }
    o
}

#[test]
fn kubectl_create_and_auth_can_i_send_protobuf_and_store_what_kube_apiserver_stores() {
    const TEST: &str = "kubectl_create_and_auth_can_i_send_protobuf_and_store_what_kube_apiserver_stores";
    if std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_err()
    {
        common::skip(TEST, "kubectl not found on PATH");
        return;
    }
    let target = Target::start();
    let ns = format!("pb-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    // The body is protobuf (kubectl logs its request headers at -v=8).
    let (ok, out, log) = target.kubectl(&["create", "namespace", &ns, "-v=8"]);
    assert!(ok, "kubectl create namespace failed: {log}");
    assert_eq!(out.trim(), format!("namespace/{ns} created"));
    assert!(
        log.lines().any(|l| l
            .trim_end()
            .ends_with("Content-Type: application/vnd.kubernetes.protobuf")),
        "{log}"
    );
    let created = [
        target.ok(&[
            "-n",
            &ns,
            "create",
            "configmap",
            "cm1",
            "--from-literal=a=b",
            "--from-literal=empty=",
        ]),
        target.ok(&["-n", &ns, "create", "deployment", "web", "--image=nginx:1.27"]),
        target.ok(&[
            "-n",
            &ns,
            "create",
            "secret",
            "generic",
            "s1",
            "--from-literal=password=hunter2",
        ]),
    ];
    assert_eq!(
        created.map(|c| c.trim().to_owned()),
        [
            "configmap/cm1 created",
            "deployment.apps/web created",
            "secret/s1 created"
        ]
    );
    assert_eq!(
        target.ok(&["auth", "can-i", "get", "pods", "-n", &ns]).trim(),
        "yes"
    );
    assert_eq!(
        target.ok(&["auth", "can-i", "create", "deployments.apps"]).trim(),
        "yes"
    );

    let get = |what: &str| {
        let out = target.ok(&["-n", &ns, "get", what, "-o", "json", "--show-managed-fields"]);
        normalized(serde_json::from_str(&out).expect("JSON"), &ns)
    };
    let namespace = get(&format!("namespace/{ns}"));
    assert_eq!(
        namespace,
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": "NS", "labels": {"kubernetes.io/metadata.name": "NS"}},
               "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
    );
    assert_eq!(
        get("configmap/cm1"),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b", "empty": ""},
               "metadata": {"name": "cm1", "namespace": "NS"}})
    );
    assert_eq!(
        get("secret/s1"),
        json!({"apiVersion": "v1", "kind": "Secret", "data": {"password": "aHVudGVyMg=="}, "type": "Opaque",
               "metadata": {"name": "s1", "namespace": "NS"}})
    );
    assert_eq!(
        get("deployment/web"),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": "NS", "generation": 1, "labels": {"app": "web"}},
               "spec": {"progressDeadlineSeconds": 600, "replicas": 1, "revisionHistoryLimit": 10,
                        "selector": {"matchLabels": {"app": "web"}},
                        "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
                                                              "name": "nginx", "resources": {},
                                                              "terminationMessagePath": "/dev/termination-log",
                                                              "terminationMessagePolicy": "File"}],
                                              "dnsPolicy": "ClusterFirst", "restartPolicy": "Always",
                                              "schedulerName": "default-scheduler", "securityContext": {},
                                              "terminationGracePeriodSeconds": 30}}}})
    );
    let _ = target.kubectl(&["delete", "namespace", &ns, "--wait=false"]);
}
