//! `cvo fleet` end to end: one `cvo sim serve --clusters 3` process plus a context whose port
//! refuses connections, one whose server accepts TCP but never answers and one whose token
//! the simulator refuses; the JSON table has a row per context with the right values, the dead
//! ones are marked within `--timeout` and never hold up the others; context selection;
//! `--watch` prints a change promptly.

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use cvo::openshift::ClusterVersion;
use k8s_openapi::api::{coordination::v1::Lease, core::v1::Namespace};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

mod common;

/// Three simulated clusters, and the kubeconfig with two dead contexts added.
struct Fleet {
    sim: std::process::Child,
    kubeconfig: PathBuf,
    _silent: std::net::TcpListener,
    _dir: tempfile::TempDir,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.sim.kill();
        let _ = self.sim.wait();
    }
}

fn demo_cluster() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo-cluster")
}

impl Fleet {
    fn start() -> Fleet {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let from = demo_cluster();
        let (sim, line) = common::spawn_sim_serve(
            &kubeconfig,
            &[
                "--clusters".as_ref(),
                "3".as_ref(),
                "--from".as_ref(),
                from.as_os_str(),
            ],
            Stdio::null(),
            Duration::from_secs(20),
        );
        assert!(line.contains("and 2 more clusters"), "{line}");
        // A port nothing listens on: connection refused.
        let refused = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let refused_port = refused.local_addr().expect("addr").port();
        drop(refused);
        // A listener never accepted from: TCP connects, TLS is never answered.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let silent_port = silent.local_addr().expect("addr").port();
        let text = std::fs::read_to_string(&kubeconfig).expect("kubeconfig");
        let mut kc: Value = serde_norway::from_str(&text).expect("yaml");
        let ca = kc["clusters"][0]["cluster"]["certificate-authority-data"].clone();
        for (name, port) in [("dead", refused_port), ("silent", silent_port)] {
            kc["clusters"].as_array_mut().expect("clusters").push(json!({
                "name": name,
                "cluster": {"server": format!("https://127.0.0.1:{port}"), "certificate-authority-data": ca},
            }));
            kc["contexts"].as_array_mut().expect("contexts").push(json!({
                "name": name, "context": {"cluster": name, "user": "cvo-sim-0"},
            }));
        }
        // The first simulated cluster with a token it refuses: 401.
        kc["users"]
            .as_array_mut()
            .expect("users")
            .push(json!({"name": "bad", "user": {"token": "wrong"}}));
        kc["contexts"].as_array_mut().expect("contexts").push(json!({
            "name": "badtoken", "context": {"cluster": "cvo-sim-0", "user": "bad"},
        }));
        std::fs::write(&kubeconfig, serde_norway::to_string(&kc).expect("yaml")).expect("write");
        Fleet {
            sim,
            kubeconfig,
            _silent: silent,
            _dir: dir,
        }
    }

    fn client(&self, rt: &tokio::runtime::Runtime, context: &str) -> kube::Client {
        let kc = kube::config::Kubeconfig::read_from(&self.kubeconfig).expect("kubeconfig");
        let opts = kube::config::KubeConfigOptions {
            context: Some(context.into()),
            ..Default::default()
        };
        rt.block_on(async {
            let config = kube::Config::from_custom_kubeconfig(kc, &opts)
                .await
                .expect("config");
            kube::Client::try_from(config).expect("client")
        })
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Sets the ClusterVersion's Failing condition to True with `reason`.
fn make_failing(rt: &tokio::runtime::Runtime, client: kube::Client, reason: &str) {
    let api: Api<ClusterVersion> = Api::all(client);
    rt.block_on(async {
        let cv = api.get("version").await.expect("cv");
        let mut conds: Vec<Value> = cv
            .status
            .conditions
            .iter()
            .map(|c| serde_json::to_value(c).expect("condition"))
            .filter(|c| c["type"] != "Failing")
            .collect();
        conds.push(json!({"type": "Failing", "status": "True", "reason": reason,
            "message": "Cluster operator etcd is degraded", "lastTransitionTime": "2026-01-01T00:00:00Z"}));
        api.patch_status(
            "version",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": conds}})),
        )
        .await
        .expect("patch status");
    });
}

/// Creates the CVO Lease held by `holder`, renewed now.
fn hold_lease(rt: &tokio::runtime::Runtime, client: kube::Client, holder: &str) {
    rt.block_on(async {
        let ns: Api<Namespace> = Api::all(client.clone());
        let _ = ns
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": "openshift-cluster-version"}})).expect("ns"),
            )
            .await;
        let leases: Api<Lease> = Api::namespaced(client, "openshift-cluster-version");
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let lease: Lease = serde_json::from_value(json!({
            "metadata": {"name": "version"},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 137, "renewTime": now, "acquireTime": now},
        }))
        .expect("lease");
        leases.create(&PostParams::default(), &lease).await.expect("create lease");
    });
}

fn fleet(kubeconfig: &Path, args: &[&str]) -> (i32, String, String, Duration) {
    let t = Instant::now();
    let out = common::cvo()
        .arg("fleet")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env("XDG_STATE_HOME", std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .expect("cvo fleet runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

#[test]
fn the_json_table_has_every_context_and_marks_the_dead_ones_within_the_timeout() {
    let f = Fleet::start();
    let rt = runtime();
    make_failing(&rt, f.client(&rt, "cvo-sim-1"), "ClusterOperatorDegraded");
    hold_lease(&rt, f.client(&rt, "cvo-sim-2"), "cvo-sim-2-leader_1");
    let (code, out, err, took) = fleet(&f.kubeconfig, &["-o", "json", "--timeout", "3"]);
    assert_eq!(code, 0, "{err}");
    // The silent one is waited for until the timeout, no longer.
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(8),
        "{took:?}"
    );
    let doc: Value = serde_json::from_str(&out).expect("JSON");
    let rows = doc["clusters"].as_array().expect("clusters");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["context"].as_str()).collect();
    assert_eq!(
        names,
        [
            "badtoken",
            "cvo-sim-0",
            "cvo-sim-1",
            "cvo-sim-2",
            "dead",
            "silent"
        ]
    );
    // The API answers, refusing the token.
    let denied = &rows[0];
    assert_eq!(
        (denied["reachable"].as_bool(), denied["state"].as_str()),
        (Some(true), Some("denied"))
    );
    let e = denied["error"].as_str().expect("error");
    assert!(e.contains("code 401"), "{e}");
    let ok = &rows[1];
    assert_eq!(ok["reachable"], true);
    assert_eq!(ok["state"], "up-to-date");
    assert_eq!(ok["version"], "4.16.3");
    assert_eq!(ok["channel"], "stable-4.16");
    assert_eq!(ok["desired"], Value::Null);
    assert_eq!(
        (ok["availableUpdates"].as_u64(), ok["conditionalUpdates"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(ok["conditionalRisks"], 1);
    assert_eq!(ok["operators"], 33);
    assert_eq!(
        (
            ok["operatorsDegraded"].as_u64(),
            ok["operatorsUnavailable"].as_u64()
        ),
        (Some(0), Some(0))
    );
    assert_eq!(ok["leaseHolder"], Value::Null);
    assert!(
        ok["server"]
            .as_str()
            .is_some_and(|s| s.starts_with("https://127.0.0.1:"))
    );
    let failing = &rows[2];
    assert_eq!(failing["state"], "failing");
    assert_eq!(failing["failing"]["reason"], "ClusterOperatorDegraded");
    assert_eq!(failing["reachable"], true);
    let leased = &rows[3];
    assert_eq!(leased["state"], "up-to-date");
    assert_eq!(leased["leaseHolder"], "cvo-sim-2-leader_1");
    assert_eq!(leased["leaseAlive"], true);
    let dead = &rows[4];
    assert_eq!(
        (dead["reachable"].as_bool(), dead["state"].as_str()),
        (Some(false), Some("unreachable"))
    );
    let e = dead["error"].as_str().expect("error");
    assert!(e.contains("Connection refused"), "{e}");
    let silent = &rows[5];
    assert_eq!(silent["state"], "unreachable");
    assert_eq!(silent["error"], "no answer within 3s");
    // The watches' warnings go to the log file, not stderr: every row carries its error.
    assert!(!err.contains("WARN"), "{err}");
}

#[test]
fn contexts_are_chosen_by_name_or_expression_and_a_bad_choice_is_a_usage_error() {
    let f = Fleet::start();
    let (code, out, err, took) = fleet(&f.kubeconfig, &["-o", "table", "--contexts", "dead,cvo-sim-2"]);
    assert_eq!(code, 0, "{err}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("CONTEXT ") && lines[0].contains(" STATE ") && lines[0].contains(" LEASE "));
    assert!(
        lines[1].starts_with("cvo-sim-2 ")
            && lines[1].contains(" up-to-date ")
            && lines[1].contains(" 4.16.3 "),
        "{out}"
    );
    assert!(
        lines[2].starts_with("dead ")
            && lines[2].contains(" unreachable ")
            && lines[2].contains("Connection refused"),
        "{out}"
    );
    let (code, out, err, _) = fleet(
        &f.kubeconfig,
        &[
            "-o",
            "json",
            "--contexts-regex",
            "^cvo-sim-[12]$",
            "--sort",
            "state",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).expect("JSON");
    let names: Vec<&str> = doc["clusters"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["context"].as_str())
        .collect();
    assert_eq!(names, ["cvo-sim-1", "cvo-sim-2"]);
    let (code, _, err, _) = fleet(&f.kubeconfig, &["-o", "json", "--contexts", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--contexts: no context named \"nope\""), "{err}");
    let (code, _, err, _) = fleet(&f.kubeconfig, &["-o", "json", "--contexts-regex", "("]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--contexts-regex \"(\""), "{err}");
    let (code, _, err, _) = fleet(&f.kubeconfig, &["-o", "json", "--context", "dead"]);
    assert_eq!(code, 2, "{err}");
    // The simulator's own check of --clusters.
    let out = common::cvo()
        .args(["sim", "serve", "--clusters", "0", "--kubeconfig-out"])
        .arg(f.kubeconfig.with_file_name("unused"))
        .output()
        .expect("cvo sim serve runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--clusters 0: give 1 to 1000"));
    let missing = f.kubeconfig.with_file_name("missing");
    let (code, _, err, _) = fleet(&missing, &["-o", "json"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("kubeconfig") && err.contains("missing"), "{err}");
}

#[test]
fn watch_prints_a_change_on_one_cluster_promptly() {
    let f = Fleet::start();
    let rt = runtime();
    let mut child = common::cvo()
        .args([
            "fleet",
            "-o",
            "json",
            "--watch",
            "--contexts",
            "cvo-sim-0,cvo-sim-1",
            "--kubeconfig",
        ])
        .arg(&f.kubeconfig)
        .env("XDG_STATE_HOME", std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cvo fleet --watch");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let (_, first) = rx.recv_timeout(Duration::from_secs(15)).expect("first table");
    let doc: Value = serde_json::from_str(&first).expect("one JSON document per line");
    assert_eq!(doc["clusters"][1]["state"], "up-to-date");
    let patched = Instant::now();
    make_failing(&rt, f.client(&rt, "cvo-sim-1"), "Boom");
    let seen = loop {
        let (at, line) = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("a line after the change");
        let doc: Value = serde_json::from_str(&line).expect("JSON line");
        if doc["clusters"][1]["state"] == "failing" {
            assert_eq!(doc["clusters"][1]["failing"]["reason"], "Boom");
            assert_eq!(doc["clusters"][0]["state"], "up-to-date");
            break at;
        }
    };
    let latency = seen.saturating_duration_since(patched);
    eprintln!("change on screen after {latency:?} (patch request included)");
    assert!(latency < Duration::from_secs(1), "{latency:?}");
    let _ = child.kill();
    let _ = child.wait();
}
