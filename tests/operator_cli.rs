//! `cvo operator start` as a separate process (the debug binary) against `cvo sim serve`: it
//! completes the release and `/metrics` shows upstream's series (parsed with a Prometheus
//! text-format parser); no log line carries the bearer token or Secret data; SIGTERM mid-update
//! exits within the grace period and a restart continues the same history entry; two operators
//! share one Lease and only the leader writes (the API audit log agrees); `kill -9` of the
//! leader hands over within the lease duration; readiness is false while the API server does
//! not answer and true again after.

mod common;

use std::{
    collections::BTreeSet,
    io::{BufRead, BufReader, Read, Write},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

/// `--lease-duration` of the tests: renew deadline 7.8 s, retry period 1.9 s.
const LEASE_SECS: u64 = 10;

/// A running `cvo sim serve` with an audit log; killed on drop.
struct Sim {
    child: Child,
    kubeconfig: PathBuf,
    audit: PathBuf,
    dir: tempfile::TempDir,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Sim {
    fn start(extra: &[&str]) -> Sim {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let audit = dir.path().join("audit.log");
        let mut args: Vec<std::ffi::OsString> = vec!["--audit-log".into(), audit.clone().into()];
        args.extend(extra.iter().map(Into::into));
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let (child, _) = common::spawn_sim_serve(&kubeconfig, &args, Stdio::null(), Duration::from_secs(10));
        let payload = dir.path().join("payload");
        write_payload(&payload);
        Sim {
            child,
            kubeconfig,
            audit,
            dir,
        }
    }

    fn payload(&self) -> PathBuf {
        self.dir.path().join("payload")
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .expect("kill runs")
            .success();
        assert!(ok, "kill {sig}");
    }

    /// The audit log entries so far.
    fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The ClusterVersion `version`, as JSON (`None`: absent or unreadable).
    fn cluster_version(&self) -> Option<Value> {
        self.with_client(|client| async move {
            let api: kube::Api<cvo::openshift::config_v1::ClusterVersion> = kube::Api::all(client);
            let cv = tokio::time::timeout(Duration::from_secs(3), api.get_opt("version"))
                .await
                .ok()?
                .ok()??;
            serde_json::to_value(cv).ok()
        })
        .flatten()
    }

    /// Runs `f` with a client of the simulator, on a runtime of its own; `None` when the
    /// kubeconfig does not connect.
    fn with_client<T, F: std::future::Future<Output = T>>(
        &self,
        f: impl FnOnce(kube::Client) -> F,
    ) -> Option<T> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let conn = cvo::cluster::live::connect(Some(&self.kubeconfig), None)
                .await
                .ok()?;
            Some(f(conn.client).await)
        })
    }

    /// The `events.k8s.io/v1` Events in `ns`, as JSON.
    fn events(&self, ns: &str) -> Vec<Value> {
        self.with_client(|client| async move {
            let api: kube::Api<k8s_openapi::api::events::v1::Event> = kube::Api::namespaced(client, ns);
            let list = api.list(&Default::default()).await.expect("list Events");
            list.items
                .into_iter()
                .filter_map(|e| serde_json::to_value(e).ok())
                .collect()
        })
        .expect("connect")
    }

    /// The bearer token of the kubeconfig.
    fn token(&self) -> String {
        let kc = std::fs::read_to_string(&self.kubeconfig).expect("kubeconfig");
        let v: Value = serde_norway::from_str(&kc).expect("kubeconfig YAML");
        v["users"][0]["user"]["token"]
            .as_str()
            .expect("token")
            .to_string()
    }
}

/// The secret value the payload's Secret carries (base64 in the manifest).
const SECRET_PLAIN: &str = "o16-secret-value-never-logged";

/// A payload of a namespace, six ConfigMaps and a Secret, version 1.0.0.
fn write_payload(dir: &Path) {
    write_payload_n(dir, 6);
}

/// A payload of a namespace, `cms` ConfigMaps and a Secret, version 1.0.0.
fn write_payload_n(dir: &Path, cms: usize) {
    let p = common::PayloadDir::new(dir, "1.0.0");
    let w = |name: &str, text: String| {
        p.file(name, &text);
    };
    let ann = common::ANN;
    w(
        "0000_00_ns.yaml",
        format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-o16\n{ann}"),
    );
    for i in 1..=cms {
        w(
            &format!("0000_{i:02}0_cm.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n  namespace: openshift-o16\n{ann}data:\n  a: \"{i}\"\n"
            ),
        );
    }
    let b64 = base64_encode(SECRET_PLAIN.as_bytes());
    w(
        "0000_70_secret.yaml",
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: openshift-o16\n{ann}type: Opaque\ndata:\n  password: {b64}\n"
        ),
    );
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// A running `cvo operator start`; SIGKILLed on drop. Its stderr is collected.
struct Op {
    child: Child,
    port: u16,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Op {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Op {
    fn start(sim: &Sim, extra: &[&str]) -> Op {
        Op::start_with(sim, &sim.payload(), extra)
    }

    /// As [`Op::start`] with the payload directory `payload`.
    fn start_with(sim: &Sim, payload: &Path, extra: &[&str]) -> Op {
        let mut child = common::cvo()
            .args([
                "operator",
                "start",
                "--listen",
                "127.0.0.1:0",
                "--insecure-http",
                "--metrics-auth=none",
            ])
            .arg("--payload")
            .arg(payload)
            .arg("--kubeconfig")
            .arg(&sim.kubeconfig)
            .args(["--lease-duration", &LEASE_SECS.to_string()])
            .args(if extra.contains(&"--resync-interval") {
                &[][..]
            } else {
                &["--resync-interval", "2"][..]
            })
            .args(extra)
            .env_remove("KUBECONFIG")
            .env("RUST_LOG", "debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cvo operator starts");
        let stderr = common::collect_stderr(&mut child);
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("ready line");
        let port = line
            .trim()
            .strip_prefix("cvo operator serving http://127.0.0.1:")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("ready line {line:?}; stderr: {}", stderr.lock().expect("lock")));
        Op { child, port, stderr }
    }

    fn logs(&self) -> String {
        self.stderr.lock().expect("lock").clone()
    }

    /// `GET path`: (status, body); status 0 when the endpoint does not answer.
    fn get(&self, path: &str) -> (u16, String) {
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return (0, String::new());
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let _ = write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        );
        let mut resp = String::new();
        let _ = s.read_to_string(&mut resp);
        let code = resp.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let body = resp
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (code, body)
    }

    fn metrics(&self) -> prometheus_parse::Scrape {
        let (code, body) = self.get("/metrics");
        assert_eq!(code, 200, "/metrics: {body}");
        prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_string())))
            .expect("Prometheus text format")
    }

    /// Waits for exit at most `within`: (exit code, time taken).
    fn wait_exit(&mut self, within: Duration) -> (i32, Duration) {
        let t = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                return (st.code().unwrap_or(-1), t.elapsed());
            }
            assert!(
                t.elapsed() < within,
                "still running after {within:?}: {}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The value of the sample `name{labels}` (labels must match exactly), any metric type but
/// histograms and summaries.
fn value(s: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    s.samples
        .iter()
        .find(|x| {
            x.metric == name
                && x.labels.len() == labels.len()
                && labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v))
        })
        .and_then(|x| match x.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => Some(v),
            _ => None,
        })
}

/// Successful writes (2xx) of `cvo_api_requests_total`.
fn ok_writes(s: &prometheus_parse::Scrape) -> f64 {
    s.samples
        .iter()
        .filter(|x| x.metric == "cvo_api_requests_total")
        .filter(|x| {
            matches!(
                x.labels.get("verb"),
                Some("create" | "update" | "patch" | "delete")
            )
        })
        .filter(|x| x.labels.get("code").is_some_and(|c| c.starts_with('2')))
        .filter_map(|x| match x.value {
            prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) => Some(v),
            _ => None,
        })
        .sum()
}

fn wait_for(what: &str, within: Duration, mut f: impl FnMut() -> bool) -> Duration {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < within, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    t.elapsed()
}

fn completed(cv: &Value) -> bool {
    cv["status"]["history"][0]["state"] == "Completed"
}

fn is_write(e: &Value) -> bool {
    matches!(e["verb"].as_str(), Some("create" | "update" | "patch" | "delete"))
}

#[test]
fn completes_the_release_serves_upstream_metrics_and_logs_no_secret() {
    let sim = Sim::start(&[]);
    let logs = tempfile::tempdir().expect("tempdir");
    let op = Op::start(
        &sim,
        &[
            "--log-format",
            "json",
            "--log-dir",
            &logs.path().to_string_lossy(),
            "--node-name",
            "n1",
        ],
    );
    wait_for("the release Completed", Duration::from_secs(60), || {
        sim.cluster_version().is_some_and(|cv| completed(&cv))
    });
    let image = format!(
        "file://{}",
        std::fs::canonicalize(sim.payload()).expect("canonical").display()
    );
    let m = {
        let mut m = op.metrics();
        // The metrics follow the watch a moment later; and a reconciling pass (every 2 s here)
        // starts again from 0 applied, so the sample is read between passes.
        for _ in 0..50 {
            if value(
                &m,
                "cluster_operator_up",
                &[("name", "version"), ("version", "1.0.0"), ("reason", "")],
            ) == Some(1.0)
                && value(
                    &m,
                    "cluster_version_payload",
                    &[("version", "1.0.0"), ("type", "applied")],
                ) == Some(8.0)
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            m = op.metrics();
        }
        m
    };
    let cv = |ty: &str, from: &str| {
        value(
            &m,
            "cluster_version",
            &[
                ("type", ty),
                ("version", "1.0.0"),
                ("image", &image),
                ("from_version", from),
            ],
        )
    };
    assert!(cv("completed", "").is_some_and(|v| v > 1.7e9), "{:?}", m.samples);
    assert!(cv("initial", "").is_some_and(|v| v > 1.7e9));
    assert!(cv("cluster", "1.0.0").is_some_and(|v| v > 1.7e9));
    assert_eq!(
        cv("current", "1.0.0"),
        Some(0.0),
        "the payload's creation time is unknown"
    );
    assert_eq!(
        value(
            &m,
            "cluster_operator_up",
            &[("name", "version"), ("version", "1.0.0"), ("reason", "")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &m,
            "cluster_operator_conditions",
            &[("name", "version"), ("condition", "Failing"), ("reason", "")]
        ),
        Some(0.0)
    );
    assert_eq!(
        value(
            &m,
            "cluster_version_payload",
            &[("version", "1.0.0"), ("type", "applied")]
        ),
        Some(8.0)
    );
    assert_eq!(
        value(
            &m,
            "cluster_version_payload",
            &[("version", "1.0.0"), ("type", "pending")]
        ),
        Some(0.0)
    );
    assert_eq!(
        value(
            &m,
            "cluster_installer",
            &[("type", ""), ("version", ""), ("invoker", "")]
        ),
        Some(1.0)
    );
    assert_eq!(value(&m, "cvo_leader", &[]), Some(1.0));
    assert!(value(&m, "cvo_passes_total", &[]).is_some_and(|v| v >= 1.0));
    assert!(
        ok_writes(&m) >= 9.0,
        "namespace, 7 objects, the ClusterVersion at least"
    );
    assert_eq!(op.get("/readyz"), (200, "ok\n".into()));
    assert_eq!(op.get("/healthz"), (200, "ok\n".into()));
    // The Event upstream records on the ClusterVersion, in the operator's namespace.
    let events = sim.events("openshift-cluster-version");
    let loaded = events
        .iter()
        .find(|e| e["reason"] == "PayloadLoaded")
        .unwrap_or_else(|| panic!("no PayloadLoaded Event: {events:?}"));
    assert_eq!(loaded["type"], "Normal");
    assert_eq!(loaded["regarding"]["kind"], "ClusterVersion");
    assert_eq!(loaded["regarding"]["name"], "version");
    assert_eq!(
        loaded["note"],
        format!("Payload loaded version=\"1.0.0\" image={image:?}")
    );

    // The operator is cluster-admin (install/02-rbac.yaml); that its requests are granted
    // is checked on a real kube-apiserver's audit log (tests/operator_install_real.rs).
    let audit = sim.audit();
    let sent: BTreeSet<String> = audit
        .iter()
        .filter_map(|e| e["verb"].as_str().map(str::to_string))
        .filter(|v| v != "discovery" && v != "unknown")
        .collect();
    assert!(sent.contains("watch") && sent.contains("update"), "{sent:?}");

    // The logs: on stderr and in the log directory, JSON lines, no token and no Secret data.
    let mut op = op;
    let status = Command::new("kill")
        .args(["-TERM", &op.child.id().to_string()])
        .status();
    assert!(status.is_ok_and(|s| s.success()));
    let (code, _) = op.wait_exit(Duration::from_secs(20));
    assert_eq!(code, 0, "{}", op.logs());
    let stderr = op.logs();
    let files: Vec<PathBuf> = std::fs::read_dir(logs.path())
        .expect("log dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0]
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("cvo-operator.log."), "{name}");
    let file = std::fs::read_to_string(&files[0]).expect("log file");
    assert!(file.lines().count() > 10, "{file}");
    for l in file.lines() {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        assert!(v["level"].is_string() && v["timestamp"].is_string(), "{l}");
    }
    assert!(file.contains("\"message\":\"cvo operator starting\""), "{file}");
    assert!(file.contains("\"node\":\"n1\""), "{file}");
    let token = sim.token();
    assert!(token.len() > 20);
    for (what, text) in [("stderr", &stderr), ("the log file", &file)] {
        assert!(
            text.contains("DEBUG") || text.contains("\"DEBUG\""),
            "{what} has debug lines"
        );
        for secret in [
            token.as_str(),
            SECRET_PLAIN,
            &base64_encode(SECRET_PLAIN.as_bytes()),
        ] {
            assert!(!text.contains(secret), "{what} carries a secret");
        }
    }
}

#[test]
fn sigterm_mid_update_stops_within_the_grace_period_and_a_restart_resumes_the_entry() {
    // 60 ms per request and 62 manifests: the release takes several seconds to apply, and
    // its progress moves faster than the paced status writes (at most one a second).
    let sim = Sim::start(&["--latency-ms", "60"]);
    let payload = sim.dir.path().join("payload-62");
    write_payload_n(&payload, 60);
    // A 30 s resync interval: the initializing pass may take 30 s (not 2 s) and is still
    // running at the SIGTERM.
    let mut op = Op::start_with(&sim, &payload, &["--resync-interval", "30"]);
    let mut started = None;
    wait_for("a Partial history entry", Duration::from_secs(60), || {
        let cv = sim.cluster_version();
        let h = cv.as_ref().map(|cv| cv["status"]["history"][0].clone());
        if let Some(h) = h.filter(|h| h["state"] == "Partial") {
            started = Some(h["startedTime"].clone());
            return true;
        }
        false
    });
    // Mid-pass: some of the ConfigMaps are there (the audit log is local: no API latency).
    let created_cms = || {
        sim.audit()
            .iter()
            .filter(|e| e["verb"] == "create" && e["path"] == "/api/v1/namespaces/openshift-o16/configmaps")
            .count()
    };
    wait_for("5 ConfigMaps created", Duration::from_secs(60), || {
        created_cms() >= 5
    });
    let sigterm_at = chrono::Utc::now();
    let status = Command::new("kill")
        .args(["-TERM", &op.child.id().to_string()])
        .status();
    assert!(status.is_ok_and(|s| s.success()));
    let (code, took) = op.wait_exit(Duration::from_secs(120));
    assert_eq!(code, 0, "{}", op.logs());
    assert!(took < Duration::from_secs(30), "stopped in {took:?}");
    let logs = op.logs();
    assert!(logs.contains("released the lease"), "{logs}");
    let cv = sim.cluster_version().expect("ClusterVersion");
    assert_eq!(
        cv["status"]["history"][0]["state"], "Partial",
        "stopped mid-update: {cv}"
    );
    // The audit log: the ClusterVersion status is written after the SIGTERM, and the last
    // status write comes before the Lease is released (the Lease's last update); after the
    // release, nothing is written.
    let audit = sim.audit();
    let time = |e: &Value| {
        e["time"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&chrono::Utc))
            .expect("audit time")
    };
    let status_writes: Vec<usize> = (0..audit.len())
        .filter(|&i| {
            audit[i]["verb"] == "update"
                && audit[i]["path"] == "/apis/config.openshift.io/v1/clusterversions/version/status"
        })
        .collect();
    let lease_writes: Vec<usize> = (0..audit.len())
        .filter(|&i| is_write(&audit[i]) && audit[i]["path"].as_str().is_some_and(|p| p.contains("/leases")))
        .collect();
    let last_status = *status_writes.last().expect("status writes");
    let release = *lease_writes.last().expect("Lease writes");
    assert!(
        time(&audit[last_status]) > sigterm_at,
        "no status write after the SIGTERM ({sigterm_at}): last {}",
        audit[last_status]
    );
    assert!(
        last_status < release,
        "the last status write {} follows the Lease release {}",
        audit[last_status],
        audit[release]
    );
    assert!(
        audit[release + 1..].iter().all(|e| !is_write(e)),
        "writes after the release: {:?}",
        &audit[release + 1..]
    );
    // That last write carries the final progress: every object created is counted done.
    // (The namespace openshift-o16 is the first task: one more than the objects in it.)
    let created = 1 + audit
        .iter()
        .filter(|e| e["verb"] == "create" && e["status"] == 201)
        .filter(|e| {
            e["path"]
                .as_str()
                .is_some_and(|p| p.starts_with("/api/v1/namespaces/openshift-o16/"))
        })
        .count();
    let progressing = cv["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Progressing")
        .and_then(|c| c["message"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        created > 0 && created < 62,
        "{created} objects created before the SIGTERM"
    );
    assert!(
        progressing.starts_with(&format!("Working towards 1.0.0: {created} of 62 done")),
        "{created} objects created; the final status says {progressing:?}"
    );

    let _op2 = Op::start_with(&sim, &payload, &[]);
    wait_for(
        "the release Completed after the restart",
        Duration::from_secs(90),
        || sim.cluster_version().is_some_and(|cv| completed(&cv)),
    );
    let cv = sim.cluster_version().expect("ClusterVersion");
    let history = cv["status"]["history"].as_array().cloned().unwrap_or_default();
    assert_eq!(history.len(), 1, "one history entry: {history:?}");
    assert_eq!(
        history[0]["startedTime"],
        started.unwrap_or_default(),
        "the same entry"
    );
    assert_eq!(history[0]["version"], "1.0.0");
}

#[test]
fn two_operators_share_one_lease_only_the_leader_writes_and_kill_9_hands_over() {
    let sim = Sim::start(&[]);
    let mut a = Op::start(&sim, &[]);
    wait_for("A leads", Duration::from_secs(30), || {
        value(&a.metrics(), "cvo_leader", &[]) == Some(1.0)
    });
    let b = Op::start(&sim, &[]);
    wait_for("B knows the holder (ready)", Duration::from_secs(30), || {
        b.get("/readyz").0 == 200
    });
    wait_for("the release Completed", Duration::from_secs(60), || {
        sim.cluster_version().is_some_and(|cv| completed(&cv))
    });
    // Let B run a few reconciling passes of its own (every 2 s).
    std::thread::sleep(Duration::from_secs(5));
    // The leader's successful writes bracket the audit log's: read A, the audit log, A again
    // (a write in flight may be in one and not yet the other: try a few times).
    let mut bracket = (0.0, 0.0, 0.0);
    for _ in 0..20 {
        let before = ok_writes(&a.metrics());
        let audit_writes = sim
            .audit()
            .iter()
            .filter(|e| is_write(e) && e["status"].as_u64().is_some_and(|c| (200..300).contains(&c)))
            .count() as f64;
        let after = ok_writes(&a.metrics());
        bracket = (before, audit_writes, after);
        if before <= audit_writes && audit_writes <= after {
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let (before, audit_writes, after) = bracket;
    let bm = b.metrics();
    assert_eq!(value(&bm, "cvo_leader", &[]), Some(0.0));
    assert_eq!(ok_writes(&bm), 0.0, "the follower wrote nothing");
    assert!(
        value(&bm, "cvo_passes_total", &[]).is_some_and(|v| v >= 1.0),
        "the follower runs passes"
    );
    assert!(
        before <= audit_writes && audit_writes <= after,
        "every successful write in the audit log is the leader's: {before} <= {audit_writes} <= {after}"
    );

    // kill -9 the leader: B takes over within the lease duration (plus retry periods).
    let killed_at = chrono::Utc::now();
    a.child.kill().expect("kill -9");
    let _ = a.child.wait();
    let took = wait_for("B leads", Duration::from_secs(LEASE_SECS * 3), || {
        value(&b.metrics(), "cvo_leader", &[]) == Some(1.0)
    });
    let first_write = sim
        .audit()
        .iter()
        .filter(|e| is_write(e))
        .filter_map(|e| {
            e["time"]
                .as_str()
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        })
        .find(|t| *t > killed_at)
        .map(|t| (t.with_timezone(&chrono::Utc) - killed_at).num_milliseconds());
    // A follower counts the lease duration from when it saw the last renewal (up to one retry
    // period late) and tries again every retry period (1.9 s, up to 1.2x jitter).
    let limit = Duration::from_secs(LEASE_SECS) + Duration::from_millis(2 * 2300) + Duration::from_secs(1);
    assert!(took <= limit, "handover took {took:?}");
    let first_write = first_write.expect("B wrote after the handover");
    assert!(
        first_write <= limit.as_millis() as i64,
        "first write {first_write} ms after the kill"
    );
    eprintln!("handover: B leads {took:?} after kill -9; its first write {first_write} ms after");
}

#[test]
fn readiness_is_false_while_the_api_server_does_not_answer() {
    let sim = Sim::start(&[]);
    let active = Op::start(&sim, &[]);
    wait_for("the release Completed", Duration::from_secs(60), || {
        sim.cluster_version().is_some_and(|cv| completed(&cv))
    });
    // A second opinion beside it: watch-only never takes the Lease and never writes.
    let op = Op::start(&sim, &["--watch-only"]);
    wait_for("the watch-only operator ready", Duration::from_secs(30), || {
        op.get("/readyz").0 == 200
    });
    let m = op.metrics();
    assert_eq!(value(&m, "cvo_leader", &[]), Some(0.0));
    assert_eq!(ok_writes(&m), 0.0);
    assert!(m.samples.iter().all(|x| !(x.metric == "cvo_api_requests_total"
        && matches!(
            x.labels.get("verb"),
            Some("create" | "update" | "patch" | "delete")
        ))));
    sim.signal("-STOP");
    for o in [&op, &active] {
        let mut why = String::new();
        wait_for(
            "not ready while the API server is stopped",
            Duration::from_secs(15),
            || {
                let (code, body) = o.get("/readyz");
                why = body;
                code == 503
            },
        );
        assert!(why.contains("the API server does not answer"), "{why}");
        assert_eq!(o.get("/healthz").0, 200, "alive all the same");
    }
    sim.signal("-CONT");
    for o in [&op, &active] {
        wait_for("ready again", Duration::from_secs(30), || {
            o.get("/readyz").0 == 200
        });
    }
}

/// The demo's 4.16.3 release image (`assets/demo-cluster/cv.yaml`, `assets/update-graph.json`):
/// the release `cvo sim serve --demo` runs.
const DEMO_IMAGE: &str = "quay.io/openshift-release-dev/ocp-release@sha256:32dcf759cde27a222fb983364eb95ce93be6acfd33de9210390b1c2f2bd6a9c2";

#[test]
fn converged_demo_cluster_passes_write_only_lease_renewals() {
    // The live demo's cluster: 4.16.3 with every object of its payload (268 manifests), as the
    // payload has them. The operator runs that release: nothing to create or update.
    let sim = Sim::start(&["--demo"]);
    let payload = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/payloads/4.16.3");
    let op = Op::start_with(&sim, &payload, &["--release-image", DEMO_IMAGE]);
    let passes = || value(&op.metrics(), "cvo_passes_total", &[]).unwrap_or(0.0);
    wait_for("the first pass", Duration::from_secs(90), || passes() >= 1.0);
    // From here on: whole passes, counted from the audit log.
    let from = sim.audit().len();
    let p0 = passes();
    let t0 = Instant::now();
    wait_for("3 more passes", Duration::from_secs(90), || passes() >= p0 + 3.0);
    let took = t0.elapsed();
    let audit = sim.audit();
    let window = &audit[from..];
    let writes: Vec<&Value> = window.iter().filter(|e| is_write(e)).collect();
    let lease_path = "/apis/coordination.k8s.io/v1/namespaces/openshift-cluster-version/leases/version";
    let other: Vec<&&Value> = writes
        .iter()
        .filter(|e| !(e["verb"] == "update" && e["path"] == lease_path && e["status"] == 200))
        .collect();
    assert!(
        other.is_empty(),
        "{} passes on a converged cluster wrote more than Lease renewals: {other:#?}",
        passes() - p0
    );
    // The leader renews every retry period (1.9 s with --lease-duration 10), no more.
    let expected = took.as_secs_f64() / 1.9;
    let renewals = writes.len() as f64;
    assert!(
        renewals >= 1.0 && renewals <= expected + 2.0,
        "{renewals} Lease renewals in {took:?} (about {expected:.1} expected)"
    );
    // Each pass checks the 33 ClusterOperators' health from the process's one ClusterOperator
    // informer (upstream reads its lister): no GET of an operator, and one LIST of the kind
    // since the start, however many passes.
    let co_gets = window
        .iter()
        .filter(|e| {
            e["verb"] == "get"
                && e["path"]
                    .as_str()
                    .is_some_and(|p| p.contains("/clusteroperators/"))
        })
        .count();
    assert_eq!(co_gets, 0, "ClusterOperator GETs in 3 converged passes");
    let co_lists = audit
        .iter()
        .filter(|e| e["verb"] == "list" && e["path"] == "/apis/config.openshift.io/v1/clusteroperators")
        .count();
    assert_eq!(co_lists, 1, "ClusterOperator lists since the start");
    // Since the start, on a cluster that already runs the release: no object write at all;
    // the ClusterVersion status at most once (this operator's first), one PayloadLoaded Event,
    // the verified-manifests record once, the Lease's create.
    let count = |verb: &str, path: &str| {
        audit
            .iter()
            .filter(|e| e["verb"] == verb && e["path"].as_str().is_some_and(|p| p.starts_with(path)))
            .count()
    };
    let all_writes = audit.iter().filter(|e| is_write(e)).count();
    let status = count(
        "update",
        "/apis/config.openshift.io/v1/clusterversions/version/status",
    );
    let events = count(
        "create",
        "/apis/events.k8s.io/v1/namespaces/openshift-cluster-version/events",
    );
    let record = count(
        "patch",
        "/api/v1/namespaces/openshift-cluster-version/configmaps/cvo-verified-manifests",
    );
    let lease = count(
        "create",
        "/apis/coordination.k8s.io/v1/namespaces/openshift-cluster-version/leases",
    ) + count("update", lease_path);
    assert!(status <= 1, "{status} status writes");
    assert_eq!((events, record), (1, 1));
    assert_eq!(
        all_writes,
        status + events + record + lease,
        "object writes on a converged cluster: {:#?}",
        audit.iter().filter(|e| is_write(e)).collect::<Vec<_>>()
    );
}

impl Sim {
    /// Merge-patches `spec.desiredUpdate` of the ClusterVersion `version` (`null` clears it).
    fn set_desired_update(&self, du: Value) {
        self.with_client(|client| async move {
            let api: kube::Api<cvo::openshift::config_v1::ClusterVersion> = kube::Api::all(client);
            api.patch(
                "version",
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(json!({"spec": {"desiredUpdate": du}})),
            )
            .await
            .expect("patch desiredUpdate");
        })
        .expect("connect");
    }
}

/// Issue 26 point 1, as reported: after an update to B completes, `cvo operator start` with the
/// older release A (`--payload A`, whose pseudo pull spec is its `--release-image`) and no
/// desired update keeps the cluster at B: no "A Partial" history entry, B's objects stay.
#[test]
fn an_operator_started_with_an_older_release_never_rolls_the_cluster_back() {
    let sim = Sim::start(&[]);
    let a = sim.payload();
    let b = sim.dir.path().join("payload-b");
    write_payload(&b);
    // B's release metadata and image references over A's: 1.1.0, updating from 1.0.0.
    let rm = common::PayloadDir::with_previous(&b, "1.1.0", &["1.0.0"]).manifests;
    let cm1 = std::fs::read_to_string(rm.join("0000_010_cm.yaml")).expect("cm1");
    std::fs::write(rm.join("0000_010_cm.yaml"), cm1.replace("a: \"1\"", "a: \"b\"")).expect("cm1");
    let image = |dir: &Path| {
        format!(
            "file://{}",
            std::fs::canonicalize(dir).expect("canonical").display()
        )
    };
    let history = |sim: &Sim| -> Vec<(String, String, String)> {
        let cv = sim.cluster_version().unwrap_or_default();
        cv["status"]["history"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| {
                (
                    h["state"].as_str().unwrap_or("").to_string(),
                    h["version"].as_str().unwrap_or("").to_string(),
                    h["image"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };

    // Install A; then B, requested by spec.desiredUpdate, with B's directory as the payload.
    let op = Op::start_with(&sim, &a, &[]);
    wait_for("A Completed", Duration::from_secs(60), || {
        sim.cluster_version().is_some_and(|cv| completed(&cv))
    });
    drop(op);
    sim.set_desired_update(json!({"image": image(&b)}));
    let op = Op::start_with(&sim, &b, &[]);
    let t0 = Instant::now();
    while !history(&sim)
        .first()
        .is_some_and(|h| h.0 == "Completed" && h.1 == "1.1.0")
    {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "B not Completed within 60 s: {:#?}\n{}",
            sim.cluster_version().map(|cv| cv["status"].clone()),
            op.logs()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(op);
    let at_b = history(&sim);
    assert_eq!(
        at_b,
        vec![
            ("Completed".into(), "1.1.0".into(), image(&b)),
            ("Completed".into(), "1.0.0".into(), image(&a)),
        ]
    );

    // `cvo upgrade --clear`, then an operator of the older release A. The cluster runs B, whose
    // directory this operator was not given: it says so and applies nothing (A never).
    sim.set_desired_update(Value::Null);
    let op = Op::start_with(&sim, &a, &[]);
    let b_image = image(&b);
    wait_for("ReleaseAccepted False naming B", Duration::from_secs(60), || {
        sim.cluster_version().is_some_and(|cv| {
            cv["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| {
                    c["type"] == "ReleaseAccepted"
                        && c["status"] == "False"
                        && c["message"].as_str().is_some_and(|m| {
                            m.contains(&format!(
                                "{b_image} is not a payload registered with this operator"
                            ))
                        })
                })
        })
    });
    // Two more resync intervals (2 s each).
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(history(&sim), at_b, "still at B: {}", op.logs());
    assert_eq!(
        value(&op.metrics(), "cvo_passes_total", &[]),
        Some(0.0),
        "no pass of A"
    );
    let cm1 = sim
        .audit()
        .iter()
        .filter(|e| is_write(e) && e["path"].as_str().is_some_and(|p| p.ends_with("/configmaps/cm1")))
        .count();
    let cm1_log: Vec<String> = sim
        .audit()
        .iter()
        .filter(|e| {
            e["path"]
                .as_str()
                .is_some_and(|p| p.contains("cm1") || p.ends_with("/configmaps"))
        })
        .map(|e| e.to_string())
        .collect();
    assert_eq!(cm1, 1, "cm1 written once, for B, never back to A: {cm1_log:#?}");
}

/// A sample of `name` without labels from the raw `/metrics` text (histogram `_count`/`_sum`
/// lines included).
fn raw_sample(op: &Op, name: &str) -> Option<f64> {
    let (_, body) = op.get("/metrics");
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The log lines an on-call engineer reads (text format): a watch-only operator on a cluster
/// without a ClusterVersion says once, as an ERROR, what to create; each of its passes is one
/// INFO line with the drift count and the drifted resources named, and the drift is exported
/// (`cvo_drift_resources`); the pass histogram counts every pass. Once an active operator has
/// applied the release, the watch-only one sees no drift, says the ClusterVersion exists now
/// and its passes are `done`. No line holds the Secret's value.
#[test]
fn watch_only_logs_and_exports_its_drift_and_every_pass_is_one_line() {
    let sim = Sim::start(&[]);
    let watcher = Op::start(&sim, &["--watch-only"]);
    wait_for("two watch-only passes", Duration::from_secs(30), || {
        raw_sample(&watcher, "cvo_passes_total").unwrap_or(0.0) >= 2.0
    });
    let logs = watcher.logs();
    let errors: Vec<&str> = logs.lines().filter(|l| l.contains(" ERROR ")).collect();
    assert_eq!(
        errors.len(),
        1,
        "one ERROR line for the absent ClusterVersion however many turns: {logs}"
    );
    assert!(
        errors[0].ends_with(
            "ClusterVersion version does not exist: create it (config.openshift.io/v1 ClusterVersion version \
             with spec.clusterID; the installer does), or run an active-apply cvo, which creates it"
        ),
        "{}",
        errors[0]
    );
    let pass_lines: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains(" INFO ") && l.contains(": pass "))
        .collect();
    assert!(pass_lines.len() >= 2, "{logs}");
    // Namespace, six ConfigMaps and the Secret would be created.
    assert!(
        pass_lines[0].contains(" pass=1 mode=\"watch-only\" state=Initializing "),
        "{}",
        pass_lines[0]
    );
    // A whole pass counts as done in watch-only too: the next one reconciles.
    assert!(
        pass_lines[1].contains(" pass=2 mode=\"watch-only\" state=Reconciling "),
        "{}",
        pass_lines[1]
    );
    for l in &pass_lines[..2] {
        assert!(
            l.contains(" done=8 total=8 ") && l.contains(" writes=0 drift=8 "),
            "{l}"
        );
        assert!(
            l.contains(
                " drifted=\"Namespace openshift-o16, ConfigMap openshift-o16/cm1, ConfigMap openshift-o16/cm2, \
                 ConfigMap openshift-o16/cm3, ConfigMap openshift-o16/cm4, (+3 more)\""
            ),
            "{l}"
        );
    }
    assert_eq!(raw_sample(&watcher, "cvo_drift_resources"), Some(8.0));
    let passes = raw_sample(&watcher, "cvo_passes_total").expect("passes");
    let timed = raw_sample(&watcher, "cvo_pass_duration_seconds_count").expect("histogram");
    // A pass may finish between the two reads.
    assert!(
        timed == passes || timed == passes + 1.0,
        "{timed} timed of {passes} passes"
    );

    let _active = Op::start(&sim, &[]);
    wait_for("the release Completed", Duration::from_secs(60), || {
        sim.cluster_version().is_some_and(|cv| completed(&cv))
    });
    wait_for("no drift left", Duration::from_secs(30), || {
        raw_sample(&watcher, "cvo_drift_resources") == Some(0.0)
    });
    let logs = watcher.logs();
    assert!(
        logs.lines()
            .any(|l| l.contains(" INFO ") && l.ends_with("ClusterVersion version exists now")),
        "{logs}"
    );
    assert!(
        logs.lines().any(|l| l.contains(" INFO ")
            && l.contains(": pass done ")
            && l.contains(" done=8 total=8 ")
            && l.ends_with(" writes=0 drift=0")),
        "{logs}"
    );
    assert_eq!(
        logs.lines().filter(|l| l.contains(" ERROR ")).count(),
        1,
        "{logs}"
    );
    assert!(!logs.contains(SECRET_PLAIN), "the Secret's value is logged");
    let passes = raw_sample(&watcher, "cvo_passes_total").expect("passes");
    let timed = raw_sample(&watcher, "cvo_pass_duration_seconds_count").expect("histogram");
    assert!(
        timed == passes || timed == passes + 1.0,
        "{timed} timed of {passes} passes"
    );
}
