//! `cvo rehearse` end to end in process: a must-gather and an `oc adm upgrade status`
//! snapshot rehearsed to the 4.16.4 payload of `assets/payloads` on the simulator, and the
//! command line's refusals.

mod common;

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
        assume_recovery: false,
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
    // The same report worded in Russian (what a Russian locale prints): the labels, states and
    // sentences; names, versions and the report's own messages as they are.
    let ru = cvo::l10n::scoped(cvo::l10n::Lang::Ru, || render_text(&r, false));
    assert_eq!(ru.lines().count(), text.lines().count(), "{ru}");
    for line in [
        "Целевой релиз: file://",
        "  блокирует    ClusterVersionGiantHop (--force would waive it): ",
        "  пройдено     Invalid: the ClusterVersion is valid",
        "Манифесты: создано 233, изменено 0, удалено 0 из 265 в полезной нагрузке релиза",
        "  УРОВЕНЬ ЗАПУСКА   КОМПОНЕНТ ",
        "  master: перезагружено узлов 3 из 3, Updated: ",
        "Оценка длительности:",
        "  Завершена: выполнено задач 265 из 265 за ",
    ] {
        assert!(
            ru.lines().any(|l| l.starts_with(line)),
            "no line {line:?} in:\n{ru}"
        );
    }
    Ok(())
}

fn degraded_4_14_1() -> Vec<PathBuf> {
    let dir = root().join("tests/fixtures/upstream/oc-upgrade-status");
    ["cv", "co", "mcp", "node", "mc"]
        .iter()
        .map(|k| dir.join(format!("4.14.1-degraded-{k}.yaml")))
        .collect()
}

/// oc's 4.14.1 example has etcd, kube-apiserver, kube-controller-manager and kube-scheduler
/// Degraded: by default they stay Degraded, the update waits on etcd (run level 12, the first
/// of them), nothing moves for 10 simulated minutes and the rehearsal stops as stalled, naming
/// them; nothing after their run levels is applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_degraded_in_the_snapshot_stay_degraded_and_the_rehearsal_stalls_on_them()
-> anyhow::Result<()> {
    let r = run(&opts(degraded_4_14_1()), false).await?;
    let names: Vec<&str> = r.degraded.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "etcd",
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler"
        ]
    );
    assert_eq!(r.degraded[1].reason, "NodeController_MasterNodesReady");
    assert!(
        r.degraded[1]
            .message
            .starts_with("NodeControllerDegraded: The master nodes not ready: node \"ip-10-0-12-74.ec2.internal\" not ready"),
        "{}",
        r.degraded[1].message
    );
    assert!(!r.assume_recovery);
    assert!(!r.outcome.completed, "{:?}", r.outcome);
    assert!(r.outcome.stalled, "{:?}", r.outcome);
    assert!(r.outcome.done < r.outcome.total, "{:?}", r.outcome);
    let stuck = r.outcome.stuck.clone().unwrap_or_default();
    assert!(
        stuck.starts_with("waiting on etcd, kube-apiserver, kube-controller-manager, kube-scheduler: Degraded in the snapshot and kept Degraded"),
        "{stuck}"
    );
    // None of them reached 4.16.4; the machine-config operator (run level 80) never rolled.
    for o in &r.operators {
        assert!(!(names.contains(&o.name.as_str()) && o.to == "4.16.4"), "{o:?}");
        assert!(!(o.name == "machine-config" && o.to == "4.16.4"), "{o:?}");
    }
    let text = render_text(&r, false);
    assert!(
        text.contains("Degraded in the snapshot: 4 ClusterOperator(s), kept Degraded in the rehearsal (--assume-recovery rehearses them recovering):\n  etcd  EtcdEndpoints_ErrorUpdatingEtcdEndpoints::"),
        "{text}"
    );
    assert!(text.contains("  Stalled: "), "{text}");
    assert!(
        text.contains("nothing moved for 10 min, so the rehearsal stopped"),
        "{text}"
    );
    Ok(())
}

/// With `--assume-recovery` the same snapshot rehearses to Completed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oc_upgrade_status_snapshot_rehearses_with_its_history() -> anyhow::Result<()> {
    let mut o = opts(degraded_4_14_1());
    o.assume_recovery = true;
    let r = run(&o, false).await?;
    assert!(r.assume_recovery);
    assert_eq!(r.degraded.len(), 4);
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
    assert!(
        text.contains("Degraded in the snapshot: 4 ClusterOperator(s), assumed to recover once they run 4.16.4 (--assume-recovery):"),
        "{text}"
    );
    Ok(())
}

#[test]
fn the_command_refuses_a_cluster_and_a_missing_target() -> anyhow::Result<()> {
    let mg = root().join("tests/fixtures/upstream/must-gather-clean-snapshots/aws");
    let out = common::cvo()
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
    let out = common::cvo().args(["rehearse", "--from"]).arg(&mg).output()?;
    assert_eq!(out.status.code(), Some(2));
    Ok(())
}
