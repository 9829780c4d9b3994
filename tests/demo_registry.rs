//! `cvo demo --registry`: the demo's releases in a real local registry (Debian's
//! `docker-registry`, [`common::Registry`]). With the registry, the demo pushes its three
//! releases, signs them with a key it generates, and the update to 4.16.4 is pulled from the
//! registry (its manifest and blobs asked for after the pushes), verified (history
//! `verified: true`), applied and Completed. Without one answering, the demo says so and runs
//! on the embedded payloads as before. A `--registry` that is not `HOST:PORT` is a usage error.
//!
//! Without `docker-registry` the registry test skips with a printed reason; under CI that is a
//! failure.

mod common;

use std::process::Output;

use common::Registry;

const REPO: &str = "openshift-release-dev/ocp-release";

fn demo(registry: &str) -> Output {
    common::cvo()
        .args([
            "demo",
            "--headless",
            "--until-complete",
            "--speed",
            "20",
            "--timeout",
            "90",
            "--registry",
            registry,
        ])
        .env_remove("CVO_DEMO_REGISTRY")
        .output()
        .expect("run cvo")
}

/// The history table at the end of the output: `(state, version, verified)` per row.
fn history(out: &str) -> Vec<(String, String, String)> {
    out.lines()
        .skip_while(|l| !l.starts_with("STATE"))
        .skip(1)
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (
                w.first().copied().unwrap_or_default().to_string(),
                w.get(1).copied().unwrap_or_default().to_string(),
                w.last().copied().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn with_a_registry_the_update_is_pulled_verified_and_completed() {
    let Some(mut reg) = Registry::start("with_a_registry_the_update_is_pulled_verified_and_completed") else {
        return;
    };
    let o = demo(&reg.addr);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}\nstderr:\n{err}");
    let source = format!(
        "INFO  demo: releases from the registry {} ({REPO} 4.16.3, 4.16.4, 4.16.5; pushed and signed with a demo key in ",
        reg.addr
    );
    assert!(out.contains(&source), "no {source:?} in:\n{out}");
    assert!(out.contains("update to 4.16.4 Completed"), "{out}");
    let rows = history(&out);
    assert_eq!(
        rows.first(),
        Some(&("Completed".into(), "4.16.4".into(), "true".into())),
        "{out}"
    );
    assert_eq!(
        rows.get(1).map(|r| (r.0.as_str(), r.1.as_str())),
        Some(("Completed", "4.16.3"))
    );

    // The three releases are in the registry, by tag.
    let tags = reg
        .storage
        .join("docker/registry/v2/repositories")
        .join(REPO)
        .join("_manifests/tags");
    let digest_of = |v: &str| {
        std::fs::read_to_string(tags.join(v).join("current/link"))
            .unwrap_or_else(|e| panic!("tag {v} not pushed: {e}"))
            .trim()
            .to_string()
    };
    let target = digest_of("4.16.4");
    assert!(target.starts_with("sha256:"), "{target}");
    digest_of("4.16.3");
    digest_of("4.16.5");
    // 4.16.4 was pulled by digest after the pushes (its manifest, then its one layer); the
    // running 4.16.3 comes from its directory, and 4.16.5 was not asked for.
    reg.stop();
    let reqs = reg.requests();
    let last_push = reqs
        .iter()
        .rposition(|r| r.starts_with("PUT "))
        .unwrap_or_else(|| panic!("no push in {reqs:#?}"));
    let pulled: Vec<&String> = reqs[last_push + 1..]
        .iter()
        .filter(|r| r.starts_with("GET ") && *r != "GET /v2/")
        .collect();
    let hex = target.trim_start_matches("sha256:");
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            reg.storage
                .join("docker/registry/v2/blobs/sha256")
                .join(&hex[..2])
                .join(hex)
                .join("data"),
        )
        .expect("4.16.4 manifest blob"),
    )
    .expect("manifest JSON");
    let layer = manifest["layers"][0]["digest"].as_str().expect("layer digest");
    assert_eq!(
        pulled,
        [
            &format!("GET /v2/{REPO}/manifests/{target}"),
            &format!("GET /v2/{REPO}/blobs/{layer}")
        ],
        "{reqs:#?}"
    );
}

#[test]
fn without_a_registry_the_embedded_payloads_are_used_and_said() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let o = demo(&format!("127.0.0.1:{port}"));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}");
    let source = format!(
        "INFO  demo: releases embedded in cvo (no registry answers at http://127.0.0.1:{port}/v2/: connection refused)"
    );
    assert!(out.contains(&source), "no {source:?} in:\n{out}");
    assert!(out.contains("update to 4.16.4 Completed"), "{out}");
    // As before: the embedded release is not signed by anyone the demo knows.
    assert_eq!(
        history(&out).first(),
        Some(&("Completed".into(), "4.16.4".into(), "false".into())),
        "{out}"
    );
}

#[test]
fn a_registry_that_is_not_host_port_is_a_usage_error() {
    let o = demo("http://127.0.0.1:5000/v2");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "--registry \"http://127.0.0.1:5000/v2\": give HOST:PORT (e.g. 127.0.0.1:5000), without a scheme or path, or `none`"
        ),
        "{err}"
    );
}
