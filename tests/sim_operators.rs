//! The live demo end to end without the UI: the demo cluster seed, the simulated operators and
//! the reconcile engine in active-apply, updating 4.16.3 → 4.16.4 on the in-process simulator.

use std::{collections::BTreeMap, path::PathBuf, sync::Arc, time::Duration};

use cvo::{
    openshift::{ClusterVersion, UpdateState},
    reconcile::{
        Engine, EngineConfig, EngineTimings,
        api::{EngineHandle, LocalPayloads, StatusSnapshot},
    },
    sim::{
        Simulator,
        demo_cluster::{DEMO_FROM_VERSION, DEMO_TO_VERSION, demo_cluster, demo_release_image},
        operators::{self, OperatorScenario, OperatorSimConfig},
    },
};
use serde_json::{Value, json};

mod common;
use common::Unmet;

fn payload(v: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets/payloads")
        .join(v)
}

fn image(v: &str) -> String {
    demo_release_image(v).expect("version in the demo graph")
}

/// Engine timings for the tests: `SIMOPS_ENGINE_SCALE` (default 0.01) of upstream's.
fn engine_timings() -> EngineTimings {
    let f = std::env::var("SIMOPS_ENGINE_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.01);
    EngineTimings::scaled(f)
}

fn engine_config(timings: EngineTimings) -> EngineConfig {
    EngineConfig {
        create_cluster_version: false,
        timings,
        ..EngineConfig::new(Arc::new(LocalPayloads {
            own_image: image(DEMO_FROM_VERSION),
            own_dir: payload(DEMO_FROM_VERSION),
            others: BTreeMap::from([(image(DEMO_TO_VERSION), payload(DEMO_TO_VERSION))]),
        }))
    }
}

fn sim_config(speed: f64, scenario: OperatorScenario) -> OperatorSimConfig {
    OperatorSimConfig::with_payloads(&[payload(DEMO_FROM_VERSION), payload(DEMO_TO_VERSION)])
        .expect("payloads")
        .speed(speed)
        .seed(1)
        .with_scenario(scenario)
}

/// Sets `spec.desiredUpdate` to 4.16.4, as `oc adm upgrade --to` does.
fn request_update(sim: &Simulator) {
    let mut cv = sim
        .get("config.openshift.io", "clusterversions", "", "version")
        .expect("cv");
    cv["spec"]["desiredUpdate"] =
        json!({"version": DEMO_TO_VERSION, "image": image(DEMO_TO_VERSION), "force": false});
    sim.replace(cv).expect("desiredUpdate written");
}

async fn wait_snapshot(
    h: &mut EngineHandle,
    what: &str,
    secs: u64,
    dump: Option<(&Simulator, &operators::OperatorSimHandle)>,
    pred: impl Fn(&StatusSnapshot) -> bool,
) -> Arc<StatusSnapshot> {
    let cur = match common::watch_until(&mut h.status, Duration::from_secs(secs), |s| pred(s)).await {
        Ok(v) => return v,
        Err(Unmet::Closed(_)) => panic!("engine stopped while waiting for {what}"),
        Err(Unmet::TimedOut(cur)) => cur,
    };
    if let Some((sim, ops)) = dump {
        for e in ops.events.borrow().iter() {
            eprintln!("sim {} {}", e.at.format("%H:%M:%S%.3f"), e.text);
        }
        for d in sim.list_objects("apps", "deployments") {
            eprintln!(
                "deployment {}/{} gen {} status {}",
                d["metadata"]["namespace"], d["metadata"]["name"], d["metadata"]["generation"], d["status"]
            );
        }
        for d in sim.list_objects("config.openshift.io", "clusteroperators") {
            eprintln!("co {} status {}", d["metadata"]["name"], d["status"]);
        }
    }
    panic!(
        "timed out waiting for {what}; state {:?} done {}/{} failure {:?} failures {:?} error {:?} history {:?}",
        cur.state,
        cur.done,
        cur.total,
        cur.failure,
        cur.failures,
        cur.last_error,
        cur.cluster_version.as_ref().map(|c| &c.history)
    )
}

fn cv_of(sim: &Simulator) -> ClusterVersion {
    serde_json::from_value(
        sim.get("config.openshift.io", "clusterversions", "", "version")
            .expect("cv"),
    )
    .expect("cv decodes")
}

fn operator_version(co: &Value) -> &str {
    co["status"]["versions"]
        .as_array()
        .and_then(|l| l.iter().find(|v| v["name"] == "operator"))
        .and_then(|v| v["version"].as_str())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_update_completes_with_simulated_operators() {
    let sim = demo_cluster().expect("seed");
    let ops = operators::spawn(sim.clone(), sim_config(50.0, OperatorScenario::default()));
    let mut h = Engine::spawn(
        kube::Client::new(sim.clone(), "default"),
        engine_config(engine_timings()),
    );
    // At level on 4.16.3 first: the seed is what 4.16.3 applied.
    wait_snapshot(&mut h, "4.16.3 reconciled", 120, None, |s| s.completed >= 1).await;
    let started = std::time::Instant::now();
    request_update(&sim);
    let snap = wait_snapshot(&mut h, "4.16.4 Completed", 300, Some((&sim, &ops)), |s| {
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == DEMO_TO_VERSION)
    })
    .await;
    let took = started.elapsed();
    if std::env::var_os("SIMOPS_DEBUG").is_some() {
        for e in snap.events.iter() {
            eprintln!("engine {} {}", e.at.format("%H:%M:%S%.3f"), e.text);
        }
        for e in ops.events.borrow().iter() {
            eprintln!("sim {} {}", e.at.format("%H:%M:%S%.3f"), e.text);
        }
    }
    let cv = cv_of(&sim);
    let top = &cv.status.history[0];
    assert_eq!(
        (top.state, top.version.as_str()),
        (UpdateState::Completed, DEMO_TO_VERSION)
    );
    assert_eq!(cv.status.history[1].version, DEMO_FROM_VERSION);
    // 265 tasks (the TechPreview CRD is excluded); a reconciling pass may already be running.
    assert_eq!(snap.total, 265);

    // Every ClusterOperator at 4.16.4, with the payload's operand versions.
    let cos = sim.list_objects("config.openshift.io", "clusteroperators");
    assert_eq!(cos.len(), 33);
    for co in &cos {
        assert_eq!(
            operator_version(co),
            DEMO_TO_VERSION,
            "{}",
            co["metadata"]["name"]
        );
    }
    let kas = sim
        .get("config.openshift.io", "clusteroperators", "", "kube-apiserver")
        .expect("kas");
    assert!(
        kas["status"]["versions"]
            .as_array()
            .expect("versions")
            .contains(&json!({"name": "kube-apiserver", "version": "1.29.7"})),
        "{}",
        kas["status"]["versions"]
    );

    // Pools: master is updated when machine-config reports 4.16.4; workers follow.
    let pools_done = || {
        sim.list_objects("machineconfiguration.openshift.io", "machineconfigpools")
            .iter()
            .all(|p| {
                p["status"]["updatedMachineCount"] == p["status"]["machineCount"]
                    && p["status"]["configuration"]["name"] == p["spec"]["configuration"]["name"]
            })
    };
    common::wait_until("worker pool updated", Duration::from_secs(30), pools_done).await;
    for p in sim.list_objects("machineconfiguration.openshift.io", "machineconfigpools") {
        let cfg = p["spec"]["configuration"]["name"]
            .as_str()
            .expect("config")
            .to_owned();
        let mc = sim
            .get("machineconfiguration.openshift.io", "machineconfigs", "", &cfg)
            .expect("rendered config exists");
        assert_eq!(
            mc["metadata"]["annotations"]["machineconfiguration.openshift.io/release-image-version"],
            DEMO_TO_VERSION
        );
        let updated = p["status"]["conditions"]
            .as_array()
            .and_then(|l| l.iter().find(|c| c["type"] == "Updated"))
            .expect("Updated condition");
        assert_eq!(updated["status"], "True", "{}", p["metadata"]["name"]);
        assert_eq!(p["status"]["machineCount"], 3);
        assert_eq!(p["status"]["readyMachineCount"], 3);
    }
    for n in sim.list_objects("", "nodes") {
        let a = &n["metadata"]["annotations"];
        let cur = a["machineconfiguration.openshift.io/currentConfig"]
            .as_str()
            .expect("current");
        assert_eq!(a["machineconfiguration.openshift.io/desiredConfig"], cur);
        assert_eq!(a["machineconfiguration.openshift.io/state"], "Done");
        let mc = sim
            .get("machineconfiguration.openshift.io", "machineconfigs", "", cur)
            .expect("mc");
        assert_eq!(
            mc["metadata"]["annotations"]["machineconfiguration.openshift.io/release-image-version"],
            DEMO_TO_VERSION,
            "{}",
            n["metadata"]["name"]
        );
        assert!(n["spec"]["unschedulable"].is_null());
    }
    let log = ops.events.borrow().clone();
    assert!(
        log.iter()
            .any(|e| e.text.starts_with("node ") && e.text.contains("rebooting")),
        "{:?}",
        log.iter().map(|e| &e.text).collect::<Vec<_>>()
    );
    let st = ops.stats();
    eprintln!(
        "speed-50 update 4.16.3 -> 4.16.4 completed in {took:?}; simulated operators: {} passes, {:?} busy",
        st.passes, st.busy
    );
    ops.shutdown();
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn degraded_operator_is_named_by_the_engine() {
    let scenario = OperatorScenario::from_file(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenarios/demo-degraded.yaml"),
    )
    .expect("scenario");
    let sim = demo_cluster().expect("seed");
    let _ops = operators::spawn(sim.clone(), sim_config(50.0, scenario));
    let mut h = Engine::spawn(
        kube::Client::new(sim.clone(), "default"),
        engine_config(engine_timings()),
    );
    wait_snapshot(&mut h, "4.16.3 reconciled", 120, None, |s| s.completed >= 1).await;
    request_update(&sim);
    let snap = wait_snapshot(
        &mut h,
        "ClusterOperatorDegraded naming monitoring",
        120,
        None,
        |s| {
            s.failure
                .as_ref()
                .is_some_and(|f| f.reason == "ClusterOperatorDegraded" && f.message.contains("monitoring"))
        },
    )
    .await;
    let co = sim
        .get("config.openshift.io", "clusteroperators", "", "monitoring")
        .expect("monitoring");
    assert_eq!(operator_version(&co), DEMO_FROM_VERSION);
    assert!(!snap.is_completed());
    h.shutdown().await;
}

/// Runs the demo update with `scenario` (a file in tests/fixtures/scenarios) until the engine's
/// failure satisfies `pred`; returns the snapshot and the simulator.
async fn failing_update(
    file: &str,
    what: &str,
    pred: impl Fn(&cvo::reconcile::api::Failure) -> bool,
) -> (Arc<StatusSnapshot>, Simulator) {
    let scenario = OperatorScenario::from_file(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/scenarios")
            .join(file),
    )
    .expect("scenario");
    let sim = demo_cluster().expect("seed");
    let ops = operators::spawn(sim.clone(), sim_config(50.0, scenario));
    let mut h = Engine::spawn(
        kube::Client::new(sim.clone(), "default"),
        engine_config(engine_timings()),
    );
    wait_snapshot(&mut h, "4.16.3 reconciled", 120, None, |s| s.completed >= 1).await;
    request_update(&sim);
    let snap = wait_snapshot(&mut h, what, 300, Some((&sim, &ops)), |s| {
        s.failure.as_ref().is_some_and(&pred)
    })
    .await;
    h.shutdown().await;
    (snap, sim)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_operator_holds_the_update_at_its_level() {
    let (snap, sim) = failing_update("demo-stall.yaml", "console named as updating", |f| {
        f.reason == "ClusterOperatorUpdating" && f.message.contains("console")
    })
    .await;
    assert!(!snap.is_completed());
    let co = sim
        .get("config.openshift.io", "clusteroperators", "", "console")
        .expect("console");
    assert_eq!(operator_version(&co), DEMO_FROM_VERSION);
    let progressing = co["status"]["conditions"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["type"] == "Progressing"))
        .expect("Progressing");
    assert_eq!(progressing["status"], "True");
    assert_eq!(progressing["message"], "Working towards 4.16.4");
    // machine-config (run level 80) was never reached.
    let mco = sim
        .get("config.openshift.io", "clusteroperators", "", "machine-config")
        .expect("mco");
    assert_eq!(operator_version(&mco), DEMO_FROM_VERSION);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashlooping_operator_deployment_fails_the_update() {
    let (snap, sim) = failing_update(
        "demo-crashloop.yaml",
        "authentication deployment not available",
        |f| f.message.contains("authentication-operator") && f.reason.starts_with("Workload"),
    )
    .await;
    let f = snap.failure.clone().expect("failure");
    eprintln!("crashloop failure: {}: {}", f.reason, f.message);
    let d = sim
        .get(
            "apps",
            "deployments",
            "openshift-authentication-operator",
            "authentication-operator",
        )
        .expect("deployment");
    assert_eq!(d["status"]["readyReplicas"], 0);
    assert!(
        d["status"]["conditions"].to_string().contains("CrashLoopBackOff"),
        "{}",
        d["status"]
    );
    let co = sim
        .get("config.openshift.io", "clusteroperators", "", "authentication")
        .expect("co");
    assert_eq!(operator_version(&co), DEMO_FROM_VERSION);
}
