//! `cvo sim serve` end to end (the real binary over HTTPS), and the live feed against a
//! simulator that drops watches and forces `410 Gone`.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

use cvo::{
    cluster::live::watch_state,
    openshift::ClusterOperator,
    sim::{
        Faults, Simulator,
        faults::{ErrorRule, WatchFaults},
    },
};
use serde_json::{Value, json};

mod common;

/// A running `cvo sim serve`; killed on drop.
struct Server {
    child: Child,
    kubeconfig: PathBuf,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the server with `args` and waits (10 s at most) for its ready line.
    fn start(args: &[&str]) -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let (child, line) =
            common::spawn_sim_serve(&kubeconfig, &args, Stdio::inherit(), Duration::from_secs(10));
        assert!(
            line.trim_end()
                .ends_with(&format!("kubeconfig: {}", kubeconfig.display()))
        );
        let url = line
            .split_whitespace()
            .nth(3)
            .expect("url in the ready line")
            .to_owned();
        Server {
            child,
            kubeconfig,
            url,
            _dir: dir,
        }
    }
}

/// Runs `cvo` with `args`: (exit success, stdout, stderr).
/// The one runner of the tests (`common::cvo_offline`), with success as a flag.
fn cvo(args: &[&str]) -> (bool, String, String) {
    let (code, out, err) = common::cvo_offline(args);
    (code == 0, out, err)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The scenario names of the oc-upgrade-status fixtures (one per `*.output` file).
fn scenarios(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("fixtures dir readable")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".output").map(str::to_owned))
        .collect();
    v.sort();
    v
}

/// Copies of the list files `inputs` into `dir` with their items in name order, the order a
/// kube-apiserver lists objects in (etcd key order). oc's example files are hand-assembled:
/// `4.14.1-workers-started-updating-multiple-pools-mcp.yaml` lists `master, worker, infra`,
/// which no API server returns, and `oc adm upgrade status` prints pools in list order.
fn api_ordered(inputs: &[PathBuf], dir: &Path) -> Vec<PathBuf> {
    inputs
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).expect("fixture readable");
            let mut v: Value = serde_norway::from_str(&text).expect("fixture is YAML");
            if let Some(items) = v.get_mut("items").and_then(Value::as_array_mut) {
                items.sort_by(|a, b| {
                    let k = |o: &Value| o["metadata"]["name"].as_str().unwrap_or_default().to_owned();
                    k(a).cmp(&k(b))
                });
            }
            let out = dir.join(p.file_name().expect("file name"));
            std::fs::write(&out, serde_json::to_string(&v).expect("JSON")).expect("write copy");
            out
        })
        .collect()
}

#[test]
fn status_over_https_equals_status_from_files_for_every_fixture() {
    let Some(dir) = common::upstream_fixture("oc-upgrade-status", "sim_serve fixtures") else {
        return;
    };
    let names = scenarios(&dir);
    assert!(names.len() >= 10, "found only {names:?}");
    let mut failures = Vec::new();
    for name in &names {
        let tmp = tempfile::tempdir().expect("tempdir");
        let inputs = api_ordered(&common::scenario_inputs(&dir, name), tmp.path());
        let state = cvo::cluster::snapshot::load(&inputs).expect("fixture loads");
        let now = state
            .snapshot_time()
            .expect("fixture has condition times")
            .to_rfc3339();
        let mut serve_args = Vec::new();
        for p in &inputs {
            serve_args.extend(["--from", s(p)]);
        }
        let server = Server::start(&serve_args);
        for details in [None, Some("all")] {
            let mut offline: Vec<&str> = vec!["status", "--now", &now];
            offline.extend(&serve_args);
            let mut live: Vec<&str> = vec!["status", "--now", &now, "--kubeconfig", s(&server.kubeconfig)];
            if let Some(d) = details {
                offline.extend(["--details", d]);
                live.extend(["--details", d]);
            }
            let (ok_off, want, err_off) = cvo(&offline);
            let (ok_live, got, err_live) = cvo(&live);
            assert!(ok_off, "{name}: cvo status --from failed: {err_off}");
            assert!(!want.is_empty(), "{name}: empty offline output");
            if !ok_live || got != want {
                failures.push(format!(
                    "{name} (details {details:?}): exit ok {ok_live}, stderr {err_live:?}\n--- from files\n{want}\n--- over https\n{got}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn get_co_over_https() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snapshots");
    let snap = dir.join("settled-no-machineconfigs.yaml");
    let server = Server::start(&["--from", s(&snap)]);
    let (ok, got, err) = cvo(&["get", "co", "--kubeconfig", s(&server.kubeconfig)]);
    assert!(ok, "{err}");
    let (_, want, _) = cvo(&["get", "co", "--from", s(&snap)]);
    // AGE columns differ (wall clock vs snapshot time); names and conditions must not.
    let cols = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| l.split_whitespace().take(5).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(cols(&got), cols(&want));
    assert!(got.lines().count() > 1, "{got}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&server.kubeconfig)
            .expect("kubeconfig")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the kubeconfig holds a token");
        // SIGINT stops the server with exit code 0.
        let mut server = server;
        let pid = server.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .expect("kill")
                .success()
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let status = loop {
            if let Some(st) = server.child.try_wait().expect("try_wait") {
                break st;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "still running 5 s after SIGINT"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{status:?}");
    }
}

fn client_with_token(rt: &tokio::runtime::Runtime, kubeconfig: &Path, token: Option<&str>) -> kube::Client {
    let text = std::fs::read_to_string(kubeconfig).expect("kubeconfig written");
    let mut kc: Value = serde_norway::from_str(&text).expect("kubeconfig is YAML");
    match token {
        Some(t) => kc["users"][0]["user"]["token"] = json!(t),
        None => kc["users"][0]["user"] = json!({}),
    }
    let kc: kube::config::Kubeconfig = serde_json::from_value(kc).expect("kubeconfig shape");
    rt.block_on(async {
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .expect("config");
        kube::Client::try_from(config).expect("client")
    })
}

#[test]
fn wrong_or_missing_token_gets_401_unauthorized() {
    let snap =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snapshots/partial-history.yaml");
    let server = Server::start(&["--from", s(&snap)]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for token in [Some("not-the-token"), None] {
        let client = client_with_token(&rt, &server.kubeconfig, token);
        let api: kube::Api<ClusterOperator> = kube::Api::all(client);
        match rt.block_on(api.list(&Default::default())) {
            Err(kube::Error::Api(st)) => {
                assert_eq!(
                    (st.code, st.reason.as_str()),
                    (401, "Unauthorized"),
                    "token {token:?}"
                );
            }
            other => panic!("token {token:?}: expected 401, got {other:?}"),
        }
    }
    // The right token works through the same path.
    let text = std::fs::read_to_string(&server.kubeconfig).expect("kubeconfig");
    let kc: Value = serde_norway::from_str(&text).expect("yaml");
    let good = kc["users"][0]["user"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    assert!(good.len() >= 32);
    let api: kube::Api<ClusterOperator> =
        kube::Api::all(client_with_token(&rt, &server.kubeconfig, Some(&good)));
    let list = rt
        .block_on(api.list(&Default::default()))
        .expect("list with the token");
    assert!(!list.items.is_empty());
    assert!(server.url.starts_with("https://127.0.0.1:"));
    let (ok, _, err) = cvo(&["status", "--kubeconfig", s(&server.kubeconfig)]);
    assert!(ok, "{err}");
}

#[test]
fn missing_or_garbage_scenario_is_a_one_line_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kc");
    let missing = dir.path().join("nope.yaml");
    let garbage = dir.path().join("garbage.yaml");
    std::fs::write(
        &garbage,
        "from: [a]\nchanges:\n  - after: 1\n    frobnicate: {}\n",
    )
    .expect("write");
    let bad_fault = dir.path().join("bad-fault.yaml");
    std::fs::write(
        &bad_fault,
        "faults:\n  errors: [{verb: list, code: 429, rate: 2}]\n",
    )
    .expect("write");
    for (file, needle) in [
        (&missing, "nope.yaml"),
        (&garbage, "frobnicate"),
        (&bad_fault, "rate 2"),
    ] {
        let (ok, out, err) = cvo(&[
            "sim",
            "serve",
            "--port",
            "0",
            "--kubeconfig-out",
            s(&kc),
            "--scenario",
            s(file),
        ]);
        assert!(!ok, "{} accepted", file.display());
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.starts_with("cvo: scenario ") && err.contains(needle), "{err}");
        assert!(err.contains(s(file)), "{err}");
    }
    assert!(!kc.exists(), "no kubeconfig is written when the scenario is bad");
    let (ok, _, err) = cvo(&[
        "sim",
        "serve",
        "--kubeconfig-out",
        s(&kc),
        "--error",
        "list=418:0.5",
    ]);
    assert!(!ok && err.contains("418"), "{err}");
}

#[test]
fn scenario_changes_a_cluster_operator_on_time_and_audit_log_records_requests() {
    let scenario =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenarios/co-degrades.yaml");
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = dir.path().join("audit.jsonl");
    let server = Server::start(&["--scenario", s(&scenario), "--audit-log", s(&audit)]);
    let kc = s(&server.kubeconfig).to_owned();
    let (ok, before, err) = cvo(&["get", "co", "--kubeconfig", &kc]);
    assert!(ok, "{err}");
    let degraded = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("dns "))
            .map(|l| l.split_whitespace().nth(4) == Some("True"))
    };
    assert_eq!(degraded(&before), Some(false), "{before}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, now, _) = cvo(&["get", "co", "--kubeconfig", &kc]);
        if degraded(&now) == Some(true) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "dns never degraded:\n{now}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = std::fs::read_to_string(&audit).expect("audit log written");
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("each audit line is JSON"))
        .collect();
    assert!(lines.len() >= 6, "{log}");
    let first = &lines[0];
    for k in ["time", "method", "path", "verb", "status", "duration_ms"] {
        assert!(first.get(k).is_some(), "no {k} in {first}");
    }
    assert!(chrono::DateTime::parse_from_rfc3339(first["time"].as_str().unwrap_or("")).is_ok());
    assert!(lines.iter().any(|l| l["verb"] == "list" && l["status"] == 200));
    // The scenario's faults: 40 ms latency on every request.
    assert!(
        lines
            .iter()
            .all(|l| l["duration_ms"].as_f64().unwrap_or(0.0) >= 40.0),
        "{log}"
    );
}

/// A ClusterOperator with one condition carrying `message`.
fn co(name: &str, message: &str) -> Value {
    json!({
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
        "metadata": {"name": name}, "spec": {},
        "status": {"conditions": [{"type": "Available", "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "message": message}]},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_survive_drops_and_forced_410s() {
    let sim = Simulator::new();
    for i in 0..5 {
        sim.insert(co(&format!("op-{i}"), "start")).expect("seed");
    }
    sim.set_faults(Faults {
        seed: 7,
        watch: WatchFaults {
            drop_after_events: Some(3),
            gone_next: 3,
            gone_rate: 0.2,
            ..Default::default()
        },
        errors: vec![ErrorRule {
            verb: "list".into(),
            code: 429,
            rate: 0.1,
        }],
        ..Default::default()
    })
    .expect("valid faults");
    let client = kube::Client::new(sim.clone(), "default");
    let mut rx = watch_state(client, "sim".into());
    // A writer changes operators while watches are being dropped and expired.
    for step in 0..40 {
        let name = match step % 5 {
            0 if step > 20 => "op-new".to_owned(),
            i => format!("op-{i}"),
        };
        sim.insert(co(&name, &format!("step {step}"))).expect("update");
        if step == 20 {
            sim.insert(co("op-new", "created")).expect("create");
            sim.remove(&co("op-0", "")).expect("delete");
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    let expected: Vec<ClusterOperator> = {
        let mut v: Vec<ClusterOperator> = ["op-1", "op-2", "op-3", "op-4", "op-new"]
            .iter()
            .map(|n| {
                let o = sim
                    .get("config.openshift.io", "clusteroperators", "", n)
                    .expect("in the store");
                serde_json::from_value(o).expect("a ClusterOperator")
            })
            .collect();
        v.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        v
    };
    assert_eq!(
        expected[0].status.conditions.first().map(|c| c.message.clone()),
        Some(Some("step 36".to_owned()))
    );
    let seen = common::wait_for(&mut rx, "watched operators equal the store", |st| {
        let mut got = st.cluster_operators.clone();
        // The feed drops managedFields (`Some([])`); the store has none (`None`).
        for o in &mut got {
            o.metadata.managed_fields = None;
        }
        got.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        got == expected
    })
    .await;
    assert_eq!(seen.cluster_operators.len(), 5);
    let audit = sim.audit();
    let faults = |f: &str| {
        audit
            .entries
            .iter()
            .filter(|e| e.fault.as_deref().is_some_and(|x| x.starts_with(f)))
            .count()
    };
    assert!(faults("gone") >= 3, "gone: {}", faults("gone"));
    assert!(faults("watch drop") >= 1, "drops: {}", faults("watch drop"));
    assert!(audit.count("watch") > 6, "{:?}", audit.counts());
}

#[tokio::test]
async fn injected_errors_and_conflicts_answer_like_kube_apiserver() {
    let sim = Simulator::new();
    sim.insert(co("dns", "ok")).expect("seed");
    let client = kube::Client::new(sim.clone(), "default");
    let api: kube::Api<ClusterOperator> = kube::Api::all(client);
    sim.set_faults(Faults {
        conflict_next: 2,
        errors: vec!["get=429:1".parse().expect("rule")],
        ..Default::default()
    })
    .expect("valid");
    let pp = kube::api::PatchParams::default();
    let patch = kube::api::Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}}));
    for _ in 0..2 {
        match api.patch("dns", &pp, &patch).await {
            Err(kube::Error::Api(st)) => assert_eq!((st.code, st.reason.as_str()), (409, "Conflict")),
            other => panic!("expected 409, got {other:?}"),
        }
    }
    api.patch("dns", &pp, &patch)
        .await
        .expect("third patch goes through");
    match api.get("dns").await {
        Err(kube::Error::Api(st)) => assert_eq!((st.code, st.reason.as_str()), (429, "TooManyRequests")),
        other => panic!("expected 429, got {other:?}"),
    }
    let audit = sim.audit();
    let faults: Vec<Option<&str>> = audit.entries.iter().map(|e| e.fault.as_deref()).collect();
    assert_eq!(
        faults,
        [Some("conflict"), Some("conflict"), None, Some("error 429")]
    );
    sim.set_faults(Faults::default()).expect("off");
    assert!(api.get("dns").await.is_ok());
    assert!(
        sim.set_faults(Faults {
            errors: vec![ErrorRule {
                verb: "list".into(),
                code: 418,
                rate: 0.5
            }],
            ..Default::default()
        })
        .is_err()
    );
}
