use serde_json::json;

use super::cluster_operators::operator_version;
use super::json::condition;
use super::*;

#[tokio::test]
async fn idle_pass_writes_nothing_and_is_cheap() {
    let sim = crate::sim::demo_cluster().expect("seed");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/payloads");
    let cfg = OperatorSimConfig::with_payloads(&[dir.join("4.16.3"), dir.join("4.16.4")]).expect("payloads");
    let (tx, _rx) = watch::channel(Arc::new(Vec::new()));
    let mut st = State::new(cfg, tx);
    let rv = sim.resource_version();
    let t0 = std::time::Instant::now();
    for _ in 0..20 {
        assert_eq!(st.pass(&sim, Instant::now()), None);
    }
    eprintln!("idle pass: {:?}", t0.elapsed() / 20);
    let now = Instant::now();
    let t0 = std::time::Instant::now();
    st.workloads(&sim, now);
    let t1 = std::time::Instant::now();
    st.operators(&sim, now);
    let t2 = std::time::Instant::now();
    mco::pass(&mut st, &sim, now);
    eprintln!(
        "workloads {:?} operators {:?} mco {:?}",
        t1 - t0,
        t2 - t1,
        t2.elapsed()
    );
    assert_eq!(sim.resource_version(), rv, "a settled cluster needs no writes");
    assert!(st.log.is_empty());
}

async fn wait_for(what: &str, f: impl FnMut() -> bool) {
    super::test_wait::wait_until(what, Duration::from_secs(20), f).await;
}

/// Without payload knowledge: the Deployment named `<co>-operator` in a related namespace
/// rolls out, then the ClusterOperator reports its `RELEASE_VERSION` for `operator` and for
/// operands that were at the old operator version.
///
/// On tokio's paused clock (the simulated operators time everything with `tokio::time`): the
/// rollout and the delay are virtual time, so the elapsed time is exactly what the scenario
/// asks for, whatever the machine's load, and is bounded on both sides.
#[tokio::test(start_paused = true)]
async fn rolls_out_and_reports_without_payloads() {
    let sim = Simulator::new();
    sim.insert(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "openshift-foo"}}))
        .expect("ns");
    sim.insert(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "foo-operator", "namespace": "openshift-foo", "generation": 2},
        "spec": {"replicas": 2, "selector": {}, "template": {"spec": {"containers": [
            {"name": "op", "env": [{"name": "RELEASE_VERSION", "value": "2.0"}]}]}}},
        "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2},
    }))
    .expect("deployment");
    sim.insert(json!({
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
        "metadata": {"name": "foo"},
        "status": {
            "relatedObjects": [{"group": "", "resource": "namespaces", "name": "openshift-foo"}],
            "versions": [
                {"name": "operator", "version": "1.0"},
                {"name": "foo-operand", "version": "1.0"},
                {"name": "kube", "version": "1.29.6"},
            ],
        },
    }))
    .expect("co");
    let scenario = OperatorScenario::from_yaml("operators:\n  foo: {delay: 1s}\n").expect("scenario");
    let ops = spawn(
        sim.clone(),
        OperatorSimConfig::default().speed(20.0).with_scenario(scenario),
    );
    let t0 = Instant::now();
    wait_for("foo at 2.0", || {
        sim.get("config.openshift.io", "clusteroperators", "", "foo")
            .is_some_and(|c| operator_version(&c) == "2.0")
    })
    .await;
    // rollout 2 s + delay 1 s at speed 20 = 150 ms, seen by the 10 ms poll of `wait_for` and
    // after the simulator's 5 ms burst pauses.
    let took = t0.elapsed();
    assert!(
        (Duration::from_millis(150)..Duration::from_millis(180)).contains(&took),
        "{took:?}"
    );
    let d = sim
        .get("apps", "deployments", "openshift-foo", "foo-operator")
        .expect("deployment");
    assert_eq!(d["status"]["observedGeneration"], 2);
    assert_eq!(d["status"]["readyReplicas"], 2);
    assert_eq!(d["status"]["updatedReplicas"], 2);
    let co = sim
        .get("config.openshift.io", "clusteroperators", "", "foo")
        .expect("co");
    assert_eq!(
        co["status"]["versions"],
        json!([
            {"name": "operator", "version": "2.0"},
            {"name": "foo-operand", "version": "2.0"},
            {"name": "kube", "version": "1.29.6"},
        ])
    );
    for (t, want) in [
        ("Available", "True"),
        ("Progressing", "False"),
        ("Degraded", "False"),
    ] {
        assert_eq!(condition(&co, t).expect(t)["status"], want, "{t}");
    }
    let log: Vec<String> = ops.events.borrow().iter().map(|e| e.text.clone()).collect();
    assert_eq!(
        log,
        [
            "deployment openshift-foo/foo-operator: rolling out generation 2",
            "deployment openshift-foo/foo-operator: generation 2 rolled out",
            "clusteroperator foo: Working towards 2.0",
            "clusteroperator foo: at version 2.0",
        ]
    );
    assert!(ops.stats().passes >= 3);
}

/// A scenario's `changes` run on the simulated clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenario_changes_run_scaled() {
    let sim = Simulator::new();
    sim.insert(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}))
        .expect("ns");
    sim.insert(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": {"k": "a"}}))
        .expect("cm");
    let scenario = OperatorScenario::from_yaml(
        "speed: 50\nchanges:\n  - after: 5\n    patch: {apiVersion: v1, kind: ConfigMap, name: c, namespace: ns, data: {k: b}}\n",
    )
    .expect("scenario");
    let ops = spawn(sim.clone(), OperatorSimConfig::default().with_scenario(scenario));
    let t0 = Instant::now();
    wait_for("patched", || {
        sim.get("", "configmaps", "ns", "c")
            .is_some_and(|c| c["data"]["k"] == "b")
    })
    .await;
    assert!(t0.elapsed() >= Duration::from_millis(95), "{:?}", t0.elapsed());
    // The event is published just after the patch: under load the test can see the patch first.
    wait_for("the scenario's event", || !ops.events.borrow().is_empty()).await;
    assert_eq!(ops.events.borrow()[0].text, "scenario: patched ConfigMap c");
}
