//! `cvo rehearse` end to end in process: a must-gather and an `oc adm upgrade status`
//! snapshot rehearsed to the 4.16.4 payload of `assets/payloads` on the simulator, and the
//! command line's refusals.

use std::{path::PathBuf, time::Duration};

use cvo::cli::rehearse::{RehearseOptions, report::render_text, run};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn opts(from: Vec<PathBuf>) -> RehearseOptions {
    let payload = root().join("assets/payloads/4.16.4");
    RehearseOptions {
        from,
        image: format!("file://{}", payload.display()),
        payload,
        speed: 100.0,
        timeout: Duration::from_secs(90),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_must_gather_rehearses_to_completion() -> anyhow::Result<()> {
    let mg = root().join("tests/fixtures/upstream/must-gather-clean-snapshots/aws");
    let r = run(&opts(vec![mg]), false).await?;
    assert!(r.outcome.completed, "{:?}", r.outcome);
    assert_eq!(r.from_version, "4.8.0-0.nightly-2021-07-31-065602");
    assert_eq!(r.to_version, "4.16.4");
    // 4.8 -> 4.16 is a giant hop: blocking, --force waives it.
    let hop = r
        .preconditions
        .iter()
        .find(|p| p.name.starts_with("ClusterVersionGiantHop"))
        .expect("the giant-hop verdict");
    assert_eq!(hop.state, "blocking");
    assert!(hop.name.ends_with("(--force would waive it)"), "{}", hop.name);
    assert!(r.refusal.is_some());
    // The must-gather holds no workloads: the payload's objects are created, all but the 31
    // ClusterOperators it has (left as they are: their status is the operators') and the
    // ConfigMap 4.16.4 deletes (absent before and after), on every run: 265 - 31 - 1.
    let count = |f: fn(&cvo::cli::rehearse::report::ManifestGroup) -> usize| -> usize {
        r.manifests.iter().map(f).sum()
    };
    assert_eq!(r.payload_manifests, 265);
    assert_eq!(
        (
            count(|g| g.created.len()),
            count(|g| g.changed.len()),
            count(|g| g.deleted.len())
        ),
        (233, 0, 0)
    );
    let mco = r
        .manifests
        .iter()
        .find(|g| g.component == "machine-config-operator")
        .expect("the MCO's manifests");
    assert_eq!(mco.run_level, Some(80));
    assert!(
        mco.created.iter().any(|n| n.contains("machine-config-operator")),
        "{:?}",
        mco.created
    );
    let mc = r
        .operators
        .iter()
        .find(|o| o.name == "machine-config")
        .expect("machine-config rolls");
    assert_eq!(
        (mc.from.as_str(), mc.to.as_str()),
        ("4.8.0-0.nightly-2021-07-31-065602", "4.16.4")
    );
    let names: Vec<&str> = r.pools.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["master", "worker"]);
    for p in &r.pools {
        assert_eq!((p.rebooted.len(), p.nodes, p.updated), (3, 3, true), "{p:?}");
    }
    // The install is its only history entry: no estimate, and the report says why.
    assert_eq!(r.estimate.minutes, None);
    let text = render_text(&r, false);
    assert!(text.contains("no previous update in status.history"), "{text}");
    assert!(text.contains("  Completed: "), "{text}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oc_upgrade_status_snapshot_rehearses_with_its_history() -> anyhow::Result<()> {
    let dir = root().join("tests/fixtures/upstream/oc-upgrade-status");
    let from = ["cv", "co", "mcp", "node", "mc"]
        .iter()
        .map(|k| dir.join(format!("4.14.1-degraded-{k}.yaml")))
        .collect();
    let r = run(&opts(from), false).await?;
    assert_eq!(r.to_version, "4.16.4");
    assert!(r.from_version.starts_with("4.14"), "{}", r.from_version);
    assert!(r.outcome.completed, "{:?}", r.outcome);
    // Its ClusterVersion is failing (etcd and kube-apiserver degraded): oc's client guard.
    let failing = r
        .preconditions
        .iter()
        .find(|p| p.name.starts_with("Failing"))
        .expect("the Failing verdict");
    assert_eq!(failing.state, "blocking");
    assert!(
        failing.message.contains("etcd, kube-apiserver are degraded"),
        "{}",
        failing.message
    );
    let pull = r
        .preconditions
        .iter()
        .find(|p| p.name == "PullSpec")
        .expect("PullSpec");
    assert!(
        pull.message
            .ends_with("is a payload directory, decided as a release image by digest")
    );
    assert!(r.operators.iter().any(|o| o.to == "4.16.4"), "{:?}", r.operators);
    let text = render_text(&r, true);
    assert!(text.contains("Manifests: "), "{text}");
    assert!(text.contains("Estimated duration:"), "{text}");
    Ok(())
}

#[test]
fn the_command_refuses_a_cluster_and_a_missing_target() -> anyhow::Result<()> {
    let bin = env!("CARGO_BIN_EXE_cvo");
    let mg = root().join("tests/fixtures/upstream/must-gather-clean-snapshots/aws");
    let out = std::process::Command::new(bin)
        .args(["rehearse", "--from"])
        .arg(&mg)
        .args([
            "--payload",
            "assets/payloads/4.16.4",
            "--kubeconfig",
            "/nonexistent",
        ])
        .current_dir(root())
        .output()?;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--kubeconfig") && err.contains("never"), "{err}");
    let out = std::process::Command::new(bin)
        .args(["rehearse", "--from"])
        .arg(&mg)
        .output()?;
    assert_eq!(out.status.code(), Some(2));
    Ok(())
}
