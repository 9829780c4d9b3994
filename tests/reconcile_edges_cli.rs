//! `cvo reconcile` never hangs and always says why (the real binary): the exit-code table in
//! `--help`, an unreachable API server (exit 4 at once), a payload that cannot be loaded (exit
//! 5), progress on stderr while it waits, and SIGTERM / SIGINT releasing the Lease and printing
//! the summary (exit 143 / 130), an API server that goes away mid-run (exit 4). The cluster is
//! a `cvo sim serve` child process.

mod common;

use std::{
    io::{BufRead, BufReader, Read},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

/// A running `cvo sim serve`; killed on drop.
struct Server {
    child: Child,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts an empty simulated cluster and waits (10 s at most) for its ready line.
    fn start() -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let (child, _) = common::spawn_sim_serve(&kubeconfig, &[], Stdio::null(), Duration::from_secs(10));
        Server {
            child,
            kubeconfig,
            _dir: dir,
        }
    }

    /// The CVO Lease's `spec.holderIdentity` (`None`: no Lease, or no holder).
    fn lease_holder(&self) -> Option<String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let conn = cvo::cluster::live::connect(Some(&self.kubeconfig), None)
                .await
                .expect("connect");
            let api: kube::Api<k8s_openapi::api::coordination::v1::Lease> =
                kube::Api::namespaced(conn.client, "openshift-cluster-version");
            api.get_opt("version")
                .await
                .expect("get lease")
                .and_then(|l| l.spec)
                .and_then(|s| s.holder_identity)
                .filter(|h| !h.is_empty())
        })
    }
}

/// A payload: a namespace, a kind the server does not serve (its apply is retried for 7 s while
/// initializing, so a first pass takes that long) and a ClusterOperator nobody plays.
fn payload(dir: &Path) {
    let p = common::PayloadDir::new(dir, "1.0.0");
    let rm = &p.manifests;
    let ann = common::ANN;
    std::fs::write(
        rm.join("0000_00_ns.yaml"),
        format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-edges\n{ann}"),
    )
    .expect("write");
    std::fs::write(
        rm.join("0000_20_widget.yaml"),
        format!("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n{ann}"),
    )
    .expect("write");
    std::fs::write(
        rm.join("0000_30_co.yaml"),
        format!(
            "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: edge-op\n{ann}status:\n  versions:\n  - name: operator\n    version: \"1.0.0\"\n"
        ),
    )
    .expect("write");
}

/// Runs `cvo` with `args`; returns (exit code, stdout, stderr, time taken).
fn cvo(args: &[&str]) -> (i32, String, String, Duration) {
    let started = Instant::now();
    let (code, stdout, stderr) = common::cvo_offline(args);
    (code, stdout, stderr, started.elapsed())
}

#[test]
fn help_lists_the_exit_codes() {
    let (code, out, _, _) = cvo(&["reconcile", "--help"]);
    assert_eq!(code, 0);
    for line in [
        "Exit codes:",
        "  0    done: the pass finished without failure, or the release is Completed",
        "  3    timeout: --timeout passed first (stderr says what it was waiting for)",
        "  4    the API server cannot be reached (at start, or for 30 s during the run)",
        "  5    the payload cannot be retrieved, loaded, verified or accepted",
        "  6    another cvo holds the CVO Lease (stderr says who, and until when)",
        "  130  stopped by SIGINT, 143 by SIGTERM: the Lease is released and the summary printed",
    ] {
        assert!(out.lines().any(|l| l == line), "{line:?} missing from:\n{out}");
    }
}

#[test]
fn an_unreachable_api_server_exits_4_at_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = tmp.path().join("p");
    payload(&p);
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let kc = tmp.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
        ),
    )
    .expect("kubeconfig");
    let p = p.to_str().expect("utf-8");
    let kc = kc.to_str().expect("utf-8");
    for mode in ["--once", "--until-complete", "--dry-run"] {
        let (code, out, err, took) = cvo(&["reconcile", "--payload", p, "--kubeconfig", kc, mode]);
        assert_eq!(code, 4, "{mode}: {out}{err}");
        assert!(took < Duration::from_secs(5), "{mode}: took {took:?}");
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("cvo: the API server cannot be reached: "),
            "{mode}: {err}"
        );
        assert!(out.contains("outcome: unreachable\n"), "{mode}: {out}");
        assert!(out.contains("release: <not loaded> (file://"), "{mode}: {out}");
        assert!(!out.contains("would change"), "{mode}: {out}");
    }
}

#[test]
fn a_payload_that_cannot_load_exits_5_with_the_reason() {
    let server = Server::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let kc = server.kubeconfig.to_str().expect("utf-8");
    // A release image root (so `cvo reconcile` does not refuse it before the run) whose
    // release-metadata cannot be read: the engine's load fails.
    let rm = tmp.path().join("release-manifests");
    std::fs::create_dir_all(tmp.path().join("manifests")).expect("mkdir");
    std::fs::create_dir_all(&rm).expect("mkdir");
    std::fs::write(rm.join("release-metadata"), "{not json").expect("write");
    std::fs::write(rm.join("image-references"), "kind: ImageStream\n").expect("write");
    let p = tmp.path().to_str().expect("utf-8");
    for mode in ["--once", "--dry-run", "--until-complete"] {
        let (code, out, err, took) = cvo(&["reconcile", "--payload", p, "--kubeconfig", kc, mode]);
        assert_eq!(code, 5, "{mode}: {out}{err}");
        assert!(took < Duration::from_secs(10), "{mode}: took {took:?}");
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("cvo: Loading payload failed version=\"\" image=\"file://"),
            "{mode}: {err}"
        );
        assert!(out.contains("outcome: payload-error\n"), "{mode}: {out}");
        assert!(!out.contains("would change"), "{mode}: {out}");
    }
}

/// Starts `cvo reconcile --until-complete` on `server`, waits until it holds the Lease and has
/// printed a progress line, sends `signal`; returns (exit code, stdout, stderr).
fn stopped_by(server: &Server, payload: &Path, signal: &str) -> (i32, String, String) {
    let mut child = common::cvo()
        .args(["reconcile", "--until-complete", "--payload"])
        .arg(payload)
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .env("RUST_LOG", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cvo reconcile starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let limit = Instant::now() + Duration::from_secs(20);
    let mut err = String::new();
    while !err.contains("cvo: waiting for ") {
        let left = limit.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no progress line within 20 s: {err}"));
        err.push_str(&line);
        err.push('\n');
    }
    while server.lease_holder().is_none() {
        assert!(Instant::now() < limit, "the Lease was never taken: {err}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let started = Instant::now();
    let code = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st.code().unwrap_or(-1);
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "still running 15 s after {signal}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    stdout.read_to_string(&mut out).expect("stdout");
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(1)) {
        err.push_str(&line);
        err.push('\n');
    }
    (code, out, err)
}

#[test]
fn sigterm_and_sigint_release_the_lease_and_print_the_summary() {
    let server = Server::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = tmp.path().join("p");
    payload(&p);
    for (signal, name, want) in [("-TERM", "SIGTERM", 143), ("-INT", "SIGINT", 130)] {
        let (code, out, err) = stopped_by(&server, &p, signal);
        assert_eq!(code, want, "{name}: {out}{err}");
        assert!(out.contains("outcome: interrupted\n"), "{name}: {out}");
        assert!(out.contains("release: 1.0.0 (file://"), "{name}: {out}");
        assert!(out.contains("API requests: "), "{name}: {out}");
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(&format!("cvo: stopped by {name} while waiting for ")),
            "{name}: {err}"
        );
        assert_eq!(server.lease_holder(), None, "{name}: the Lease is released");
    }
}

/// Progress lines written by the run, shared with the test.
#[derive(Clone, Default)]
struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn an_api_server_that_goes_away_mid_run_ends_it_with_exit_4() {
    use cvo::cli::reconcile::{ReconcileOptions, RunControl, Until, exit, render_text, run_with};
    let server = Server::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = tmp.path().join("p");
    payload(&p);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let lines = Lines::default();
    let (s, took) = rt.block_on(async {
        let conn = cvo::cluster::live::connect(Some(&server.kubeconfig), None)
            .await
            .expect("connect");
        let mut timings = cvo::reconcile::EngineTimings::upstream();
        timings.cv_poll = Duration::from_millis(200);
        let opts = ReconcileOptions {
            payload: p.clone(),
            release_image: None,
            dry_run: false,
            until: Until::Complete,
            timeout: Some(Duration::from_secs(60)),
            timings,
            lease: true,
        };
        let ctl = RunControl {
            progress: Box::new(lines.clone()),
            progress_every: Duration::from_millis(200),
            unreachable_grace: Duration::from_secs(1),
            ..RunControl::default()
        };
        // The server dies 2 s into the run, while the first pass retries its unknown kind.
        let pid = server.child.id().to_string();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(2));
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        });
        let started = Instant::now();
        let s = run_with(conn.client, &opts, ctl).await.expect("runs");
        (s, started.elapsed())
    });
    assert_eq!(
        (s.outcome.as_str(), s.exit_code),
        ("unreachable", exit::UNREACHABLE),
        "{}",
        render_text(&s)
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let reason = s.reason.clone().unwrap_or_default();
    assert!(
        reason.starts_with("the API server has been unreachable for 1"),
        "{reason}"
    );
    assert!(reason.contains("Connection refused"), "{reason}");
    let progress = String::from_utf8(lines.0.lock().expect("lock").clone()).expect("utf-8");
    assert!(
        progress
            .lines()
            .any(|l| l.starts_with("cvo: waiting for the ClusterVersion (reading ClusterVersion version: ")),
        "{progress}"
    );
}
