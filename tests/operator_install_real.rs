//! Issue 27 point 5 on the real kube-apiserver of `CVO_TEST_KUBECONFIG` (docs/testing.md):
//! `kubectl apply` of the top-level files of `install/` is accepted (the ClusterVersion and
//! ClusterOperator CRDs installed first, as docs/operator.md asks; objects whose CRDs may be absent
//! live under `install/monitoring/`), then `cvo operator start` runs as a local process with a
//! kubeconfig holding a token of the install's ServiceAccount (TokenRequest API, `kubectl
//! create token`), applies a small payload that carries RBAC of its own (a ClusterRole granting
//! everything, bindings) to Completed, and the API audit log (`CVO_TEST_AUDIT_LOG`) shows no
//! request of `system:serviceaccount:openshift-cluster-version:cvo` denied (403).
//!
//! Pods never run on that server: the Deployment is only accepted, the operator is this
//! process.

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

#[path = "common/cluster.rs"]
mod cluster;
mod common;
use cluster::{CV, LEASE, LEASE_NS, NAMESPACE, Res, TestCluster};

const SA_USER: &str = "system:serviceaccount:openshift-cluster-version:cvo";
const CLUSTER_ROLE: Res = Res(
    "rbac.authorization.k8s.io",
    "v1",
    "ClusterRole",
    "clusterroles",
    false,
);
const CLUSTER_ROLE_BINDING: Res = Res(
    "rbac.authorization.k8s.io",
    "v1",
    "ClusterRoleBinding",
    "clusterrolebindings",
    false,
);

/// `kubectl --kubeconfig KC ARGS`: (success, stdout, stderr).
fn kubectl(kc: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .expect("kubectl runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The top-level YAML files of `install/` (what `kubectl apply -f install/` applies), sorted.
fn install_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("install");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("install/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    v.sort();
    v
}

/// A kubeconfig for the server of `admin` that authenticates with `token` only.
fn token_kubeconfig(admin: &Path, token: &str, out: &Path) {
    let text = std::fs::read_to_string(admin).expect("admin kubeconfig");
    let kc: Value = serde_norway::from_str(&text).expect("admin kubeconfig parses");
    let cluster = &kc["clusters"][0]["cluster"];
    let doc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "real", "cluster": {
            "server": cluster["server"],
            "certificate-authority-data": cluster["certificate-authority-data"],
        }}],
        "users": [{"name": "cvo", "user": {"token": token}}],
        "contexts": [{"name": "cvo", "context": {"cluster": "real", "user": "cvo"}}],
        "current-context": "cvo",
    });
    std::fs::write(out, serde_json::to_string(&doc).expect("encodes")).expect("write kubeconfig");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(out, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
}

/// A release payload `1.0.0` with a namespace, a ConfigMap, a ClusterRole granting every verb
/// on every resource, a ClusterRoleBinding and a namespaced Role and RoleBinding: the RBAC
/// a release applies, which only a subject holding those permissions may create.
fn write_payload(dir: &Path, name: &str) {
    let p = common::PayloadDir::new(dir, "1.0.0");
    let ann = common::ANN;
    let files = [
        (
            "0000_10_test_00_namespace.yaml",
            format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n{ann}"),
        ),
        (
            "0000_10_test_01_configmap.yaml",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n  namespace: {name}\n{ann}data:\n  a: b\n"
            ),
        ),
        (
            "0000_10_test_02_serviceaccount.yaml",
            format!(
                "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: operand\n  namespace: {name}\n{ann}"
            ),
        ),
        (
            "0000_10_test_03_clusterrole.yaml",
            format!(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {name}\n{ann}rules:\n- apiGroups: [\"*\"]\n  resources: [\"*\"]\n  verbs: [\"*\"]\n- nonResourceURLs: [\"*\"]\n  verbs: [\"*\"]\n"
            ),
        ),
        (
            "0000_10_test_04_clusterrolebinding.yaml",
            format!(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: {name}\n{ann}roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {name}\nsubjects:\n- kind: ServiceAccount\n  name: operand\n  namespace: {name}\n"
            ),
        ),
        (
            "0000_10_test_05_role.yaml",
            format!(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: operand\n  namespace: {name}\n{ann}rules:\n- apiGroups: [\"\"]\n  resources: [\"secrets\"]\n  verbs: [\"get\", \"list\", \"watch\", \"create\", \"delete\"]\n"
            ),
        ),
        (
            "0000_10_test_06_rolebinding.yaml",
            format!(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: operand\n  namespace: {name}\n{ann}roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: operand\nsubjects:\n- kind: ServiceAccount\n  name: operand\n  namespace: {name}\n"
            ),
        ),
    ];
    p.files(&files);
}

/// A running `cvo operator start`; killed on drop.
struct Op {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Op {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Op {
    fn logs(&self) -> String {
        self.stderr.lock().expect("lock").clone()
    }
}

/// Audit events (stage ResponseComplete) appended to `log` after byte `from`.
fn audit_events(log: &Path, from: u64) -> Vec<Value> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    f.seek(SeekFrom::Start(from)).expect("seek");
    let mut text = String::new();
    f.read_to_string(&mut text).expect("read audit log");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["stage"] == "ResponseComplete")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real kube-apiserver (CVO_TEST_KUBECONFIG): .ci/run's real-server step runs it with --include-ignored"]
async fn the_install_is_accepted_and_the_operator_runs_as_its_service_account_with_no_denial() {
    let test = "the_install_is_accepted_and_the_operator_runs_as_its_service_account_with_no_denial";
    let Some(admin) = cluster::real_kubeconfig() else {
        common::skip(test, "CVO_TEST_KUBECONFIG is not set (a real kube-apiserver)");
        return;
    };
    // The CRDs first (docs/operator.md: install the ClusterVersion and ClusterOperator CRDs first).
    let mut t = TestCluster::new().await;
    let name = t.name("rbac");
    let cv = t.name("version");
    t.clean_up(CV, "", &cv);
    t.clean_up(LEASE, LEASE_NS, &cv);
    t.clean_up(NAMESPACE, "", &name);
    t.clean_up(CLUSTER_ROLE, "", &name);
    t.clean_up(CLUSTER_ROLE_BINDING, "", &name);

    // kubectl apply -f install/ (its top-level files; what needs the Prometheus Operator's
    // CRDs lives in install/monitoring/, which a non-recursive apply leaves out).
    let files = install_files();
    assert!(files.len() >= 4, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        assert!(
            !text.contains("apiVersion: monitoring.coreos.com/"),
            "{} needs the Prometheus Operator's CRDs: it belongs in install/monitoring/",
            f.display()
        );
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("install");
    let dir = dir.display().to_string();
    let argv = ["apply", "-f", dir.as_str()];
    let (ok, out, err) = kubectl(&admin, &argv);
    assert!(ok, "kubectl apply refused:\n{out}\n{err}");
    eprintln!("kubectl apply:\n{out}{err}");
    for what in [
        "namespace/openshift-cluster-version",
        "serviceaccount/cvo",
        "clusterrolebinding.rbac.authorization.k8s.io/cvo-cluster-admin",
        "deployment.apps/cvo",
    ] {
        assert!(out.contains(what), "{what} not applied:\n{out}");
    }

    // A token of the install's ServiceAccount (TokenRequest API) in a kubeconfig of its own.
    let (ok, token, err) = kubectl(
        &admin,
        &[
            "create",
            "token",
            "cvo",
            "-n",
            "openshift-cluster-version",
            "--duration",
            "1h",
        ],
    );
    assert!(ok, "kubectl create token: {err}");
    let token = token.trim().to_owned();
    assert!(token.len() > 100, "a JWT");
    let tmp = tempfile::tempdir().expect("tempdir");
    let kc = tmp.path().join("cvo.kubeconfig");
    token_kubeconfig(&admin, &token, &kc);
    let (ok, who, err) = kubectl(
        &kc,
        &["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"],
    );
    assert!(ok, "kubectl auth whoami: {err}");
    assert_eq!(who, SA_USER);

    let payload = tmp.path().join("payload");
    write_payload(&payload, &name);
    let audit = std::env::var_os("CVO_TEST_AUDIT_LOG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let audit_from = audit
        .as_ref()
        .and_then(|p| std::fs::metadata(p).ok())
        .map_or(0, |m| m.len());

    // The operator, as that ServiceAccount. (`--listen 127.0.0.1:0`: plain HTTP on loopback,
    // the metrics endpoint is not what this test checks.)
    let mut child = common::cvo()
        .args([
            "operator",
            "start",
            "--listen",
            "127.0.0.1:0",
            "--insecure-http",
            "--metrics-auth=none",
            "--payload",
        ])
        .arg(&payload)
        .arg("--kubeconfig")
        .arg(&kc)
        .args(["--name", &cv, "--namespace", LEASE_NS])
        .args(["--lease-duration", "10", "--resync-interval", "2"])
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cvo operator starts");
    let stderr = common::collect_stderr(&mut child);
    let stdout = child.stdout.take().expect("stdout");
    let mut op = Op { child, stderr };
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("ready line");
    assert!(
        line.starts_with("cvo operator serving "),
        "ready line {line:?}; stderr: {}",
        op.logs()
    );

    // Completed.
    let started = Instant::now();
    let completed = loop {
        let state = t
            .get(CV, "", &cv)
            .await
            .and_then(|v| v.pointer("/status/history/0/state").cloned());
        if state == Some(json!("Completed")) {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "not Completed in 120 s (history state {state:?}); operator log:\n{}",
            op.logs()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    eprintln!("{test}: Completed after {completed:?}");
    let cr = t
        .get(CLUSTER_ROLE, "", &name)
        .await
        .expect("the payload's ClusterRole applied");
    assert_eq!(cr["rules"][0]["verbs"], json!(["*"]));
    assert!(t.get(CLUSTER_ROLE_BINDING, "", &name).await.is_some());

    // Reconciling passes (every 2 s) and Lease renewals (every ~1.9 s) are audited too.
    tokio::time::sleep(Duration::from_secs(5)).await;

    // A clean stop (SIGTERM: the Lease is released).
    let pid = op.child.id().to_string();
    let st = Command::new("kill").args(["-TERM", &pid]).status().expect("kill");
    assert!(st.success());
    let t0 = Instant::now();
    let code = loop {
        if let Some(st) = op.child.try_wait().expect("wait") {
            break st.code().unwrap_or(-1);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(130),
            "still running: {}",
            op.logs()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, 0, "{}", op.logs());
    let logs = op.logs();
    assert!(!logs.contains(&token), "the token is never logged");

    // The audit log: every request of the ServiceAccount, none denied.
    let Some(audit) = audit else {
        common::skip(
            test,
            "CVO_TEST_AUDIT_LOG is not set: the denied-request count is not checked",
        );
        return;
    };
    let events = audit_events(&audit, audit_from);
    let mine: Vec<&Value> = events
        .iter()
        .filter(|e| e["user"]["username"] == SA_USER)
        .collect();
    let denied: Vec<String> = mine
        .iter()
        .filter(|e| e["responseStatus"]["code"] == 403)
        .map(|e| format!("{} {}", e["verb"], e["requestURI"]))
        .collect();
    let verbs = |v: &str| mine.iter().filter(|e| e["verb"] == v).count();
    eprintln!(
        "{test}: {} requests by {SA_USER}: {} get, {} list, {} watch, {} create, {} update, {} patch, {} delete; {} denied",
        mine.len(),
        verbs("get"),
        verbs("list"),
        verbs("watch"),
        verbs("create"),
        verbs("update"),
        verbs("patch"),
        verbs("delete"),
        denied.len()
    );
    assert!(
        mine.len() >= 20 && verbs("create") >= 7,
        "the operator's requests are in the audit log: {} requests, {} creates",
        mine.len(),
        verbs("create")
    );
    assert!(
        denied.is_empty(),
        "denied (403) requests of {SA_USER}: {denied:#?}"
    );
}
