//! `cvo upgrade` and `cvo upgrade recommend` on a live cluster say which newer releases of the
//! channel the update service does not offer and why (no edge from the current version; a
//! blocked conditional edge with its risk), naming the service they asked, never suggesting
//! `--force` (issue 29). The cluster is `cvo sim serve`, or the real kube-apiserver of
//! `CVO_TEST_KUBECONFIG` (`tests/common/cluster.rs`); the update service is a loopback stub
//! named by the ClusterVersion's `spec.upstream`.

use std::{
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::Value;

#[path = "common/cluster.rs"]
mod cluster;
mod common;

/// The channel: 4.16.3 → 4.16.4 → 4.16.6, 4.16.3 → 4.17.1, 4.16.3 →? 4.16.5 (risk BadThing),
/// and 4.18.0 with no edge at all.
const GRAPH: &str = r#"{
  "nodes": [
    {"version": "4.16.3", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:0000000000000000000000000000000000000000000000000000000000000000"},
    {"version": "4.16.4", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:4444444444444444444444444444444444444444444444444444444444444444"},
    {"version": "4.16.5", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:5555555555555555555555555555555555555555555555555555555555555555"},
    {"version": "4.16.6", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:6666666666666666666666666666666666666666666666666666666666666666"},
    {"version": "4.17.1", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:1717171717171717171717171717171717171717171717171717171717171717"},
    {"version": "4.18.0", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:1818181818181818181818181818181818181818181818181818181818181818"}
  ],
  "edges": [[0, 1], [0, 4], [1, 3]],
  "conditionalEdges": [{"edges": [{"from": "4.16.3", "to": "4.16.5"}],
    "risks": [{"url": "https://example.com/bad-thing", "name": "BadThing",
               "message": "Bad things happen to clusters with a proxy.",
               "matchingRules": [{"type": "Always"}]}]}]
}"#;

/// A one-thread HTTP/1.1 stub answering every request with [`GRAPH`]; records request lines.
fn graph_stub() -> (String, Arc<Mutex<Vec<String>>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    std::thread::spawn(move || {
        for stream in l.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 2 {
                line.clear();
            }
            if let Ok(mut v) = s.lock() {
                v.push(first.trim_end().to_string());
            }
            let resp = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{GRAPH}",
                GRAPH.len()
            );
            let _ = stream.write_all(resp.as_bytes());
        }
    });
    (format!("http://{addr}/graph"), seen)
}

/// The ClusterVersion of `tests/fixtures/upgrade/cv-4.16.3.yaml` with `spec.upstream`.
fn cv_text(upstream: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upgrade/cv-4.16.3.yaml");
    std::fs::read_to_string(path).expect("fixture").replace(
        "  channel: stable-4.16\n",
        &format!("  channel: stable-4.16\n  upstream: {upstream}\n"),
    )
}

/// `cvo ARGS --kubeconfig K` with no proxy from the environment: (exit code, stdout, stderr).
fn cvo(args: &[&str], kubeconfig: &Path) -> (i32, String, String) {
    let out = common::cvo()
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env_remove("KUBECONFIG")
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .env("RUST_LOG", "off")
        .output()
        .expect("cvo runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn section(upstream: &str) -> String {
    format!(
        "\nReleases in channel stable-4.16 newer than 4.16.3 that are not offered (update service {upstream}):\n  VERSION     WHY\n  4.18.0      no update path from 4.16.3 in this channel\n  4.16.6      no update from 4.16.3 yet; reachable by updating to 4.16.4 first\n  4.16.5      not recommended: risk BadThing applies to this cluster\n"
    )
}

/// What both servers must show: the section after oc's text in `cvo upgrade` and
/// `cvo upgrade recommend`, why one `--version` is refused, the service asked with the
/// cluster's channel, version and ID.
fn check(kubeconfig: &Path, upstream: &str, seen: &Arc<Mutex<Vec<String>>>) {
    let (code, out, err) = cvo(&["upgrade"], kubeconfig);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "");
    let oc_part = "Cluster version is 4.16.3\n\nUpstream: ";
    assert!(out.starts_with(oc_part), "{out}");
    assert!(
        out.ends_with(&format!(
            "re-run the command with --include-not-recommended.\n{}A not recommended update's risks are shown in full with --include-not-recommended.\n",
            section(upstream)
        )),
        "{out}"
    );
    assert!(!out.contains("--force"), "{out}");
    let (code, out, err) = cvo(
        &["upgrade", "recommend", "--accept", "FailedToCompletePrecheck"],
        kubeconfig,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.ends_with(&format!(
            "{}A not recommended update's risks are shown in full with --version VERSION.\n",
            section(upstream)
        )),
        "{out}"
    );
    assert!(!out.contains("--force"), "{out}");
    let (code, out, err) = cvo(&["upgrade", "recommend", "--version", "4.16.6"], kubeconfig);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.ends_with(
            "\n4.16.6 is in channel stable-4.16 but not offered: no update from 4.16.3 yet; reachable by updating to 4.16.4 first.\n"
        ),
        "{out}\n{err}"
    );
    let seen = seen.lock().map(|v| v.clone()).unwrap_or_default();
    assert!(!seen.is_empty());
    for line in &seen {
        assert!(
            line.starts_with("GET /graph?")
                && line.contains("channel=stable-4.16")
                && line.contains("version=4.16.3")
                && line.contains("id=5a7e7b52-8d0f-4b8e-9d7e-3b1c0e6f2a11"),
            "{line}"
        );
    }
}

#[test]
fn upgrade_and_recommend_say_what_the_channel_does_not_offer_on_the_simulator() {
    let (upstream, seen) = graph_stub();
    let dir = tempfile::tempdir().expect("tempdir");
    let cv = dir.path().join("cv.yaml");
    std::fs::write(&cv, cv_text(&upstream)).expect("write cv");
    let kubeconfig = dir.path().join("kubeconfig");
    let (mut child, _) = common::spawn_sim_serve(
        &kubeconfig,
        &["--from".as_ref(), cv.as_os_str()],
        Stdio::null(),
        Duration::from_secs(20),
    );
    let result = std::panic::catch_unwind(|| check(&kubeconfig, &upstream, &seen));
    let _ = child.kill();
    let _ = child.wait();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// The same on the real kube-apiserver of `CVO_TEST_KUBECONFIG` (nothing to do without it):
/// the ClusterVersion `version` is created and its status written through `/status`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_and_recommend_say_what_the_channel_does_not_offer_on_the_real_server() {
    let Some(kubeconfig) = cluster::real_kubeconfig() else {
        return;
    };
    let (upstream, seen) = graph_stub();
    let t = cluster::TestCluster::new().await;
    let mut cv: Value = serde_norway::from_str(&cv_text(&upstream)).expect("fixture YAML");
    let status = cv["status"].take();
    t.delete(cluster::CV, "", "version").await;
    t.create(cluster::CV, cv).await;
    let mut stored = t.get(cluster::CV, "", "version").await.expect("created");
    stored["status"] = status;
    assert!(t.put_status(cluster::CV, stored).await, "status written");
    let result = tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(|| check(&kubeconfig, &upstream, &seen))
    })
    .await
    .expect("joined");
    t.delete(cluster::CV, "", "version").await;
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
