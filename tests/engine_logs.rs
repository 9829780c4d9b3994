//! The engine's log lines an on-call engineer reads, captured from the engine itself on the
//! in-process simulator: a watch-only pass is one INFO line with its drift count and the
//! drifted resources named (each at debug level); a ClusterVersion CRD that is not served is
//! one ERROR line naming what to install, and its installation is noticed.
//!
//! One global subscriber for the whole binary (a scoped one races with other threads over
//! tracing's callsite interest cache) and one test at a time (the lines carry no test name).

mod common;
use std::{
    path::Path,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use cvo::{
    reconcile::{Engine, EngineConfig, EngineTimings, api::EngineMode},
    sim::Simulator,
};

const NS: &str = "openshift-logs";
const CO: &str = "logs-op";

fn client(sim: &Simulator) -> kube::Client {
    kube::Client::new(sim.clone(), "default")
}

/// A payload for `version` in `dir`: a namespace, a ConfigMap and the ClusterOperator [`CO`].
fn write_payload(dir: &Path, version: &str) {
    common::PayloadDir::new(dir, version).component(
        "logs",
        NS,
        CO,
        version,
        "",
        &format!("  versions:\n  - name: operator\n    version: \"{version}\"\n"),
    );
}

/// The buffer every log line of this binary goes to (text format, no ANSI, debug level).
fn buffer() -> &'static Arc<Mutex<Vec<u8>>> {
    static BUF: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    BUF.get_or_init(|| {
        #[derive(Clone)]
        struct Buf(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Arc::new(Mutex::new(Vec::new()));
        let w = Buf(buf.clone());
        let sub = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .with_writer(move || w.clone())
            .finish();
        tracing::subscriber::set_global_default(sub).expect("the only subscriber");
        buf
    })
}

/// Holds the other tests off and empties the buffer; the lines logged while the guard lives
/// are this test's.
async fn capture_logs() -> (tokio::sync::MutexGuard<'static, ()>, &'static Arc<Mutex<Vec<u8>>>) {
    static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let g = SERIAL.lock().await;
    let buf = buffer();
    buf.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
    (g, buf)
}

fn text_of(buf: &Arc<Mutex<Vec<u8>>>) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap_or_else(std::sync::PoisonError::into_inner)).into_owned()
}

/// A watch-only pass logs one info line with its drift count and the drifted resources named
/// (all of them, one per line, at debug level) and records the pass for the metrics.
#[tokio::test]
async fn a_watch_only_pass_logs_one_line_naming_its_drift() {
    let (_serial, logs) = capture_logs().await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("p");
    write_payload(&dir, "1.0.0");
    let sim = Simulator::new();
    let mut cfg = EngineConfig::local(dir.clone(), None).expect("config");
    cfg.mode = EngineMode::WatchOnly;
    cfg.timings = EngineTimings::scaled(0.05);
    let mut h = Engine::spawn(client(&sim), cfg);
    let limit = tokio::time::Instant::now() + Duration::from_secs(10);
    let s = loop {
        let s = h.status.borrow_and_update().clone();
        if s.counters.passes >= 1 && !s.recent_passes.is_empty() {
            break s;
        }
        assert!(tokio::time::Instant::now() < limit, "no pass: {s:#?}");
        let _ = tokio::time::timeout_at(limit, h.status.changed()).await;
    };
    h.shutdown().await;
    let p = &s.recent_passes[0];
    assert_eq!(
        (p.number, p.watch_only, p.drift, p.writes),
        (1, true, 2, 0),
        "{p:?}"
    );
    assert!(p.seconds > 0.0 && p.seconds < 10.0, "{p:?}");
    let text = text_of(logs);
    let pass_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" INFO ") && l.contains(": pass ") && l.contains(" pass=1 "))
        .collect();
    assert_eq!(pass_lines.len(), 1, "{text}");
    let l = pass_lines[0];
    // The ClusterOperator of the payload does not exist (nothing plays it here): the pass fails
    // on it, and says so.
    for field in [
        "pass failed pass=1 mode=\"watch-only\" state=Initializing done=2 total=3 ",
        " writes=0 drift=2 ",
        &format!("drifted=\"Namespace {NS}, ConfigMap {NS}/settings\""),
        &format!(
            "failed=1 reason=\"UpdatePayloadResourceNotFound: clusteroperators.config.openshift.io \\\"{CO}\\\" not found\""
        ),
    ] {
        assert!(l.contains(field), "{field} not in {l}");
    }
    // Every drifted resource at debug level, field paths only.
    assert!(
        text.lines().any(|l| l.contains(" DEBUG ")
            && l.ends_with(&format!(
                "drift pass=1 change=\"create\" resource=\"ConfigMap {NS}/settings\""
            ))),
        "{text}"
    );
}

/// A ClusterVersion CRD that is not served (a Kubernetes cluster without OpenShift's config
/// API) is one ERROR line naming what to install, not a create that fails every turn; once the
/// CRD is served the engine creates its ClusterVersion and says so.
#[tokio::test]
async fn a_missing_cluster_version_crd_is_one_error_line_naming_what_to_install() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (_serial, logs) = capture_logs().await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("p");
    write_payload(&dir, "1.0.0");
    let sim = Simulator::new();
    let inner = client(&sim);
    let served = Arc::new(AtomicBool::new(false));
    let cv_creates = Arc::new(AtomicUsize::new(0));
    let (s2, c2) = (served.clone(), cv_creates.clone());
    // As kube-apiserver answers for a group it does not serve: 404, a plain-text body.
    let svc = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let (inner, served, creates) = (inner.clone(), s2.clone(), c2.clone());
        async move {
            let path = req.uri().path().to_string();
            let unserved =
                path == "/apis/config.openshift.io" || path.starts_with("/apis/config.openshift.io/");
            if unserved && !served.load(Ordering::SeqCst) {
                if req.method() == http::Method::POST && path.ends_with("/clusterversions") {
                    creates.fetch_add(1, Ordering::SeqCst);
                }
                return Ok::<_, kube::Error>(
                    http::Response::builder()
                        .status(404)
                        .body(kube::client::Body::from(b"404 page not found".to_vec()))
                        .expect("response"),
                );
            }
            inner.send(req).await
        }
    });
    let mut cfg = EngineConfig::local(dir.clone(), None).expect("config");
    cfg.timings = EngineTimings::scaled(0.05);
    let want = "ClusterVersion CRD (config.openshift.io/v1 clusterversions) is not served: install the CRDs \
                first (docs/operator.md: kubectl apply -f tests/fixtures/crds/)";
    let mut h = Engine::spawn(kube::Client::new(svc, "default"), cfg);
    let limit = tokio::time::Instant::now() + Duration::from_secs(10);
    // Several turns with the CRD missing.
    let mut turns = 0;
    while turns < 5 {
        let s = h.status.borrow_and_update().clone();
        if s.last_error.as_deref() == Some(want) {
            turns += 1;
        }
        assert!(tokio::time::Instant::now() < limit, "no CRD error: {s:#?}");
        let _ = tokio::time::timeout(Duration::from_millis(100), h.status.changed()).await;
    }
    assert_eq!(
        cv_creates.load(Ordering::SeqCst),
        0,
        "no create of an unserved kind"
    );
    served.store(true, Ordering::SeqCst);
    let limit = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let s = h.status.borrow_and_update().clone();
        if s.last_error.is_none() && s.cluster_version.is_some() {
            break;
        }
        assert!(tokio::time::Instant::now() < limit, "no recovery: {s:#?}");
        let _ = tokio::time::timeout_at(limit, h.status.changed()).await;
    }
    h.shutdown().await;
    let text = text_of(logs);
    let errors: Vec<&str> = text.lines().filter(|l| l.contains(" ERROR ")).collect();
    assert_eq!(errors.len(), 1, "{text}");
    assert!(errors[0].ends_with(want), "{}", errors[0]);
    let served_at = text
        .find("ClusterVersion CRD is served now")
        .expect("recovery line");
    let created_at = text.find("created ClusterVersion version").expect("create line");
    assert!(served_at < created_at, "{text}");
}
