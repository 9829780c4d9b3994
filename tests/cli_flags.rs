//! oc's day-2 flags and habits, through the built binary: `--version` names the commit,
//! `cvo completion` and `cvo man`, `-v`, the dashboard's flags before a command, a closed
//! stdout (`cvo get co | head -1`, also under `-w`), `cvo get -o jsonpath=/custom-columns=`,
//! `-l` and `-w` against `cvo sim serve`, `--request-timeout` against a server that never
//! answers, and `--as`, `--token`, `--server` against the real kube-apiserver of
//! `CVO_TEST_KUBECONFIG` (RBAC on: a ServiceAccount's token and impersonation of it are denied
//! what its role does not grant).

#[path = "common/cluster.rs"]
mod cluster;
mod common;

use std::{
    io::{BufRead as _, BufReader, Read as _},
    path::PathBuf,
    process::Stdio,
    time::{Duration, Instant},
};

/// `cvo sim serve --demo` (the demo cluster: 30+ ClusterOperators, labelled nodes); killed
/// on drop.
struct Sim {
    child: std::process::Child,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn demo() -> Sim {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let (child, _) = common::spawn_sim_serve(
        &kubeconfig,
        &["--demo".as_ref()],
        Stdio::null(),
        Duration::from_secs(30),
    );
    Sim {
        child,
        kubeconfig,
        _dir: dir,
    }
}

impl Sim {
    fn cvo(&self, args: &[&str]) -> (i32, String, String) {
        let mut all = args.to_vec();
        all.extend(["--kubeconfig", self.kubeconfig.to_str().expect("UTF-8 temp path")]);
        common::cvo_offline(&all)
    }
}

#[test]
fn version_names_the_commit() {
    let (code, out, _) = common::cvo_offline(&["--version"]);
    assert_eq!(code, 0);
    let want_prefix = format!("cvo {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(out.starts_with(&want_prefix) && out.ends_with(")\n"), "{out}");
    let commit = &out[want_prefix.len()..out.len() - 2];
    assert!(
        commit == "unknown" || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{commit:?}"
    );
    // Every subcommand says the same.
    let (_, sub, _) = common::cvo_offline(&["upgrade", "channel", "--version"]);
    assert_eq!(sub, format!("cvo-upgrade-channel {}", &out["cvo ".len()..]));
}

#[test]
fn completion_scripts_and_man_pages() {
    for (shell, marker) in [
        ("bash", "complete -F _cvo"),
        ("zsh", "#compdef cvo"),
        ("fish", "complete -c cvo"),
    ] {
        let (code, out, err) = common::cvo_offline(&["completion", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains(marker), "{shell}: no {marker:?}");
        // The flags and subcommands are there.
        assert!(
            out.contains("allow-explicit-channel") && out.contains("request-timeout"),
            "{shell}"
        );
    }
    let (code, _, err) = common::cvo_offline(&["completion", "tcsh"]);
    assert_eq!(code, 2, "{err}");
    let (code, page, _) = common::cvo_offline(&["man"]);
    assert_eq!(code, 0);
    assert!(page.contains(".TH cvo 1"), "{page}");
    assert!(page.contains("upgrade"), "{page}");
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, _, err) = common::cvo_offline(&["man", "--dir", dir.path().to_str().expect("UTF-8")]);
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(dir.path().join("cvo-upgrade-channel.1")).expect("page written");
    assert!(page.contains("allow\\-explicit\\-channel"), "{page}");
    assert!(err.starts_with("wrote ") && err.contains("cvo-get.1"), "{err}");
}

#[test]
fn dashboard_flags_before_a_command_are_a_usage_error() {
    let (code, _, err) = common::cvo_offline(&["--read-only", "status"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "error: --read-only is a flag of the dashboard (`cvo` alone); it cannot be used with `cvo status`"
        ),
        "{err}"
    );
    // The global flags may stand before the command.
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upgrade/cv-4.16.3.yaml");
    let f = fixture.to_str().expect("UTF-8");
    let (code, out, err) = common::cvo_offline(&[
        "-n",
        "x",
        "--as",
        "y",
        "--request-timeout",
        "5s",
        "get",
        "cv",
        "--from",
        f,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NAME      VERSION"), "{out}");
    let (code, _, err) = common::cvo_offline(&["get", "cv", "--from", f, "--request-timeout", "soon"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("expected a duration such as 30s, 1m or 500ms"),
        "{err}"
    );
}

#[test]
fn verbosity_six_logs_each_request() {
    let sim = demo();
    let out = common::cvo()
        .args(["-v", "6", "get", "cv", "--kubeconfig"])
        .arg(&sim.kubeconfig)
        .env_remove("KUBECONFIG")
        .env_remove("RUST_LOG")
        .output()
        .expect("cvo runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("DEBUG") && err.contains("clusterversions/version"),
        "{err}"
    );
    // The default (and -v 0): nothing on stderr.
    let (code, _, err) = sim.cvo(&["get", "cv", "-v", "0"]);
    assert_eq!((code, err.as_str()), (0, ""));
}

/// `cvo get co | head -1`: the reader goes away; cvo exits 0 without a word, never a panic.
#[test]
fn a_closed_stdout_ends_quietly() {
    let sim = demo();
    for args in [
        vec!["get", "co"],
        vec!["get", "co", "-o", "yaml"],
        vec!["get", "co", "-w"],
    ] {
        let started = Instant::now();
        let mut child = common::cvo()
            .args(&args)
            .arg("--kubeconfig")
            .arg(&sim.kubeconfig)
            .env_remove("KUBECONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cvo runs");
        let reader = child.stdout.take().expect("stdout");
        if args.contains(&"-w") {
            // The watch has printed its table and waits for changes when the reader goes.
            let mut first = String::new();
            BufReader::new(reader).read_line(&mut first).expect("a line");
            assert!(first.starts_with("NAME "), "{first}");
        } else {
            // Closed before cvo writes: its write meets EPIPE.
            drop(reader);
        }
        let status = child.wait().expect("exits");
        let mut err = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut err)
            .expect("stderr");
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{args:?} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn jsonpath_custom_columns_and_label_selectors() {
    let sim = demo();
    let (code, out, err) = sim.cvo(&[
        "get",
        "co",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}={.status.versions[?(@.name==\"operator\")].version}{\"\\n\"}{end}",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 20, "{out}");
    assert!(lines.contains(&"etcd=4.16.3"), "{out}");
    let (code, out, err) = sim.cvo(&["get", "cv", "version", "-o", "jsonpath={.status.desired.version}"]);
    assert_eq!((code, out.as_str()), (0, "4.16.3"), "{err}");
    let (code, out, err) = sim.cvo(&[
        "get",
        "co",
        "etcd",
        "-o",
        "custom-columns=NAME:.metadata.name,AVAILABLE:.status.conditions[?(@.type==\"Available\")].status,NOPE:.spec.nope",
    ]);
    assert_eq!(
        (code, out.as_str()),
        (0, "NAME   AVAILABLE   NOPE\netcd   True        <none>\n"),
        "{err}"
    );
    let (code, out, err) = sim.cvo(&[
        "get",
        "nodes",
        "-l",
        "node-role.kubernetes.io/worker",
        "-o",
        "name",
    ]);
    assert_eq!(code, 0, "{err}");
    let workers: Vec<&str> = out.lines().collect();
    let (_, all, _) = sim.cvo(&["get", "nodes", "-o", "name"]);
    let (_, masters, _) = sim.cvo(&[
        "get",
        "nodes",
        "-l",
        "!node-role.kubernetes.io/worker",
        "-o",
        "name",
    ]);
    assert!(!workers.is_empty() && !masters.trim().is_empty(), "{out}");
    assert_eq!(workers.len() + masters.lines().count(), all.lines().count());
    assert!(workers.iter().all(|w| w.starts_with("node/")), "{out}");
    for (args, want) in [
        (
            vec!["get", "co", "-o", "jsonpath={.items[0}"],
            "unclosed action \"{.items[0}\"",
        ),
        (
            vec!["get", "co", "-o", "go-template={{.kind}}"],
            "unknown output format \"go-template\"",
        ),
        (
            vec!["get", "co", "-l", "a in b"],
            "unable to parse requirement \"a in b\"",
        ),
    ] {
        let (code, _, err) = sim.cvo(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(
            err.starts_with("error: invalid value") && err.contains(want),
            "{args:?}: {err}"
        );
    }
}

/// `cvo get co -w`: the table, then the row of each changed object; `--request-timeout` ends
/// the watch (exit 0).
#[test]
fn watch_prints_the_rows_that_change() {
    let sim = demo();
    let child = common::cvo()
        .args(["get", "co", "-w", "--request-timeout", "8s", "--kubeconfig"])
        .arg(&sim.kubeconfig)
        .env_remove("KUBECONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cvo runs");
    std::thread::sleep(Duration::from_secs(3));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let conn = cvo::cluster::live::connect(Some(&sim.kubeconfig), None)
            .await
            .expect("connect");
        let api: kube::Api<cvo::openshift::ClusterOperator> = kube::Api::all(conn.client);
        api.patch(
            "etcd",
            &Default::default(),
            &kube::api::Patch::Merge(serde_json::json!({"metadata": {"labels": {"watched": "yes"}}})),
        )
        .await
        .expect("label etcd");
        api.delete("baremetal", &Default::default())
            .await
            .expect("delete baremetal");
    });
    let started = Instant::now();
    let out = child.wait_with_output().expect("exits");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("NAME "), "{stdout}");
    let header_rows = lines.iter().filter(|l| l.starts_with("NAME ")).count();
    assert_eq!(header_rows, 1, "{stdout}");
    let tail: Vec<&str> = lines[lines.len() - 2..].to_vec();
    assert!(
        tail[0].starts_with("etcd ") && tail[1].starts_with("baremetal "),
        "{stdout}"
    );
    // The rows line up with the header.
    let col = lines[0].find("VERSION").expect("VERSION column");
    assert_eq!(&tail[0][col..col + 6], "4.16.3", "{stdout}");
}

/// `--request-timeout` against a server that accepts connections and never answers: one line
/// naming the flag, well before the default timeouts.
#[test]
fn request_timeout_cuts_a_silent_server_short() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    let started = Instant::now();
    let (code, _, err) = common::cvo_offline(&[
        "get",
        "co",
        "--server",
        &format!("https://{addr}"),
        "--token",
        "t",
        "--insecure-skip-tls-verify",
        "--request-timeout",
        "1500ms",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("request timed out after 1500ms (--request-timeout)"),
        "{err}"
    );
    assert!(!err.contains("--token t") && !err.contains(" t "), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "{:?}",
        started.elapsed()
    );
}

/// `--token`, `--as` and `--server` on the real kube-apiserver: a ServiceAccount allowed to
/// read ClusterOperators and nothing else, reached through its token or impersonated by the
/// admin; a kubeconfig with a wrong server URL reaches the server through `--server`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real kube-apiserver (CVO_TEST_KUBECONFIG): .ci/run's real-server step runs it with --include-ignored"]
async fn token_as_and_server_on_the_real_server() {
    use k8s_openapi::api::{
        authentication::v1::{TokenRequest, TokenRequestSpec},
        core::v1::{Namespace, ServiceAccount},
        rbac::v1::{ClusterRole, ClusterRoleBinding},
    };
    use kube::api::{DeleteParams, PostParams};
    let test = "token_as_and_server_on_the_real_server";
    let Some(admin) = cluster::real_kubeconfig() else {
        common::skip(test, "CVO_TEST_KUBECONFIG is not set (a real kube-apiserver)");
        return;
    };
    let t = cluster::TestCluster::new().await;
    let ns = t.name("cvo-flags");
    let co = t.name("flags-op");
    t.create(
        cluster::CO,
        serde_json::json!({"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
            "metadata": {"name": co, "labels": {"cvo-flags": ns}}, "spec": {}}),
    )
    .await;
    let client = t.client();
    let pp = PostParams::default();
    let namespaces: kube::Api<Namespace> = kube::Api::all(client.clone());
    namespaces
        .create(
            &pp,
            &serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).expect("ns"),
        )
        .await
        .expect("create namespace");
    let sas: kube::Api<ServiceAccount> = kube::Api::namespaced(client.clone(), &ns);
    sas.create(
        &pp,
        &serde_json::from_value(serde_json::json!({"metadata": {"name": "viewer"}})).expect("sa"),
    )
    .await
    .expect("create ServiceAccount");
    let roles: kube::Api<ClusterRole> = kube::Api::all(client.clone());
    roles
        .create(
            &pp,
            &serde_json::from_value(serde_json::json!({"metadata": {"name": ns},
                "rules": [{"apiGroups": ["config.openshift.io"], "resources": ["clusteroperators"],
                           "verbs": ["get", "list", "watch"]}]}))
            .expect("role"),
        )
        .await
        .expect("create ClusterRole");
    let bindings: kube::Api<ClusterRoleBinding> = kube::Api::all(client.clone());
    bindings
        .create(
            &pp,
            &serde_json::from_value(serde_json::json!({"metadata": {"name": ns},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ns},
                "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": ns}]}))
            .expect("binding"),
        )
        .await
        .expect("create ClusterRoleBinding");
    let token = sas
        .create_token_request(
            "viewer",
            &pp,
            &TokenRequest {
                spec: Some(TokenRequestSpec {
                    expiration_seconds: Some(600),
                    ..TokenRequestSpec::default()
                }),
                ..TokenRequest::default()
            },
        )
        .await
        .expect("token")
        .status
        .and_then(|s| s.token)
        .expect("a token in the status");
    let sa = format!("system:serviceaccount:{ns}:viewer");
    let kc = admin.to_str().expect("UTF-8").to_owned();
    let selector = format!("cvo-flags={ns}");
    let run = move |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::cvo_offline(&args)
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let results = tokio::task::spawn_blocking({
        let (kc, token, sa, selector) = (kc.clone(), token.clone(), sa.clone(), selector.clone());
        let dir = tempfile::tempdir().expect("tempdir");
        move || {
            // The token reads what its role grants, and is refused the rest.
            let mut r = vec![run(s(&[
                "get",
                "co",
                "-l",
                &selector,
                "-o",
                "name",
                "--kubeconfig",
                &kc,
                "--token",
                &token,
            ]))];
            r.push(run(s(&["get", "nodes", "--kubeconfig", &kc, "--token", &token])));
            // The admin impersonating the ServiceAccount: the same answers.
            r.push(run(s(&[
                "--as",
                &sa,
                "get",
                "co",
                "-l",
                &selector,
                "-o",
                "name",
                "--kubeconfig",
                &kc,
            ])));
            r.push(run(s(&["get", "nodes", "--kubeconfig", &kc, "--as", &sa])));
            // A kubeconfig whose server is wrong, corrected by --server.
            let text = std::fs::read_to_string(&kc).expect("kubeconfig");
            let mut doc: serde_json::Value = serde_norway::from_str(&text).expect("kubeconfig YAML");
            let cluster = &mut doc["clusters"][0]["cluster"]["server"];
            let server = cluster.as_str().expect("a server").to_owned();
            *cluster = "https://127.0.0.1:1".into();
            let wrong = dir.path().join("wrong-server");
            std::fs::write(&wrong, serde_norway::to_string(&doc).expect("YAML")).expect("write");
            let w = wrong.to_str().expect("UTF-8");
            r.push(run(s(&[
                "get",
                "co",
                "-l",
                &selector,
                "-o",
                "name",
                "--kubeconfig",
                w,
            ])));
            r.push(run(s(&[
                "get",
                "co",
                "-l",
                &selector,
                "-o",
                "name",
                "--kubeconfig",
                w,
                "--server",
                &server,
            ])));
            r
        }
    })
    .await
    .expect("joins");
    let _ = bindings.delete(&ns, &DeleteParams::default()).await;
    let _ = roles.delete(&ns, &DeleteParams::default()).await;
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
    t.delete(cluster::CO, "", &co).await;
    let want_co = format!("clusteroperator.config.openshift.io/{co}\n");
    let forbidden = format!(
        "nodes is forbidden: User \"{sa}\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
    );
    assert_eq!(
        (results[0].0, results[0].1.as_str()),
        (0, want_co.as_str()),
        "{}",
        results[0].2
    );
    assert_eq!(results[1].0, 1);
    assert!(results[1].2.contains(&forbidden), "{}", results[1].2);
    assert!(!results[1].2.contains(&token), "the token is never printed");
    assert_eq!(
        (results[2].0, results[2].1.as_str()),
        (0, want_co.as_str()),
        "{}",
        results[2].2
    );
    assert_eq!(results[3].0, 1);
    assert!(results[3].2.contains(&forbidden), "{}", results[3].2);
    assert_eq!(results[4].0, 1);
    assert!(results[4].2.contains("https://127.0.0.1:1/"), "{}", results[4].2);
    assert_eq!(
        (results[5].0, results[5].1.as_str()),
        (0, want_co.as_str()),
        "{}",
        results[5].2
    );
    // The audit log attributes each request to `cvo get` and records the impersonation.
    if let Ok(path) = std::env::var("CVO_TEST_AUDIT_LOG") {
        let log = std::fs::read_to_string(&path).unwrap_or_default();
        let agent = format!("cvo/{} (get)", env!("CARGO_PKG_VERSION"));
        let impersonated = log.lines().any(|l| {
            l.contains(&agent)
                && l.contains("\"impersonatedUser\"")
                && l.contains(&format!("\"username\":\"{sa}\""))
        });
        assert!(impersonated, "no impersonated `cvo get` request in {path}");
    }
}

/// A kubeconfig that cannot be read is named once (kube's own text repeats it, quoted twice).
#[test]
fn a_missing_kubeconfig_is_named_once() {
    let (code, _, err) = common::cvo_offline(&["status", "--kubeconfig", "/no/such/kc"]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "cvo: kubeconfig /no/such/kc: No such file or directory (os error 2)\n"
    );
    let out = common::cvo()
        .args(["get", "co"])
        .env("KUBECONFIG", "/no/such/a:/no/such/b")
        .env("RUST_LOG", "off")
        .output()
        .expect("cvo runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "cvo: kubeconfig /no/such/a:/no/such/b (from KUBECONFIG): /no/such/a: No such file or directory (os error 2)\n"
    );
}
