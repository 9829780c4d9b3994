//! Issue 18 item 1, end to end on the demo's simulated clock: with a degraded operator the
//! engine's 40-minute rule (`ClusterOperatorDegraded` fails the update after 40 minutes,
//! upstream `pkg/cvo/status.go` `convertErrorToProgressing`) and the assessment's (a degraded
//! operator is an Error insight after 40 minutes, `oc adm upgrade status`) run on the clock the
//! demo shows: at `--speed 200` the ClusterVersion goes Failing about 12 s after the engine
//! starts waiting, never before 40 simulated minutes, and then the header, the health panel
//! and the task graph all say the update is failing. On the wall clock the test would time
//! out (40 real minutes).

use std::{path::PathBuf, time::Duration};

use chrono::{DateTime, Utc};

use super::*;
use crate::{
    cli::demo::{DemoOptions, LiveDemo},
    reconcile::api::StatusSnapshot,
    ui::theme::Level,
};

const SPEED: f64 = 200.0;

fn progressing(s: &StatusSnapshot) -> String {
    s.cluster_version
        .as_ref()
        .and_then(|c| crate::openshift::condition::find(&c.conditions, "Progressing"))
        .map(|c| c.message().to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_degraded_operator_fails_the_update_after_40_simulated_minutes_everywhere() {
    let scenario =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenarios/demo-cli-degraded.yaml");
    let live = LiveDemo::start(&DemoOptions {
        scenario: Some(scenario),
        speed: Some(SPEED),
        auto: true,
        ..Default::default()
    })
    .await
    .expect("demo starts");
    let clock = live.clock.clone();
    let mut status = live.engine.status.clone();
    // The first snapshot whose Progressing waits on console (the engine's clock starts its 40
    // minutes at or before it), then the first with Failing=True.
    let mut waiting_since: Option<DateTime<Utc>> = None;
    let mut timeline = Vec::new();
    let limit = Duration::from_secs_f64(60.0 + 3.0 * 40.0 * 60.0 / SPEED);
    let failing = tokio::time::timeout(limit, async {
        loop {
            let s = status.borrow_and_update().clone();
            let now = clock.now();
            let p = progressing(&s);
            // The engine starts its 40 minutes at its first check of console, while the task
            // runs: the first snapshot showing the task running or failed (snapshots are at
            // most 100 ms apart) is close to it; the "waiting" status can trail it by a paced status
            // write and more on a loaded machine.
            let console_running = s.tasks.iter().any(|t| {
                t.name.starts_with("clusteroperator \"console\"")
                    && matches!(
                        t.state,
                        crate::reconcile::api::TaskState::Running
                            | crate::reconcile::api::TaskState::Failed(_)
                    )
            });
            if waiting_since.is_none()
                && (console_running || p.contains("waiting up to 40 minutes on console"))
            {
                waiting_since = Some(now);
                timeline.push(format!("{now}: {p} (console task running: {console_running})"));
            }
            if let Some(f) = s.failing() {
                timeline.push(format!("{now}: Failing {f:?}"));
                return (s, now);
            }
            if status.changed().await.is_err() {
                panic!("the engine stopped: {timeline:#?}");
            }
        }
    })
    .await;
    let (snap, failed_at) = failing.unwrap_or_else(|_| {
        panic!(
            "no Failing=True within {limit:?} ({} simulated minutes): {timeline:#?}",
            limit.as_secs_f64() * SPEED / 60.0
        )
    });
    let waited = failed_at - waiting_since.expect("the engine waited on console first");
    let (reason, message) = snap.failing().expect("failing");
    assert_eq!(reason, "ClusterOperatorDegraded", "{message}");
    assert!(message.contains("console"), "{message}");
    // Not before 40 simulated minutes, and not long after. The snapshot that shows the wait
    // can trail the engine's start of it (a snapshot interval; by one status interval, 1 s of
    // real time or 200 simulated seconds, when only the "waiting" status shows it), and
    // Failing is written at the first re-read or pass retry after the 40 minutes.
    let pacing = chrono::Duration::seconds(SPEED as i64);
    assert!(
        waited >= chrono::Duration::minutes(40) - pacing - chrono::Duration::seconds(5),
        "Failing after {waited} of waiting: {timeline:#?}"
    );
    assert!(
        waited <= chrono::Duration::minutes(52),
        "Failing only after {waited} of waiting: {timeline:#?}"
    );

    // The dashboard on the same clock: the feed's ClusterVersion says Failing too.
    let client = kube::Client::new(live.sim.clone(), "default");
    let mut feed = crate::cluster::live::watch_state(client, "demo".into());
    let state = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let st = feed.borrow_and_update().clone();
            let failing = st
                .cluster_version
                .as_ref()
                .and_then(|cv| cv.condition("Failing"))
                .is_some_and(|c| c.is_true());
            let console = st
                .cluster_operators
                .iter()
                .any(|co| co.metadata.name.as_deref() == Some("console"));
            if failing && console {
                return st;
            }
            if feed.changed().await.is_err() {
                panic!("the cluster feed ended");
            }
        }
    })
    .await
    .expect("the feed shows Failing=True and the ClusterOperators");
    // Once the operator has been degraded for 40 simulated minutes too (the assessment counts
    // from the Degraded condition's transition), every view says the update is failing.
    let console = state
        .cluster_operators
        .iter()
        .find(|co| co.metadata.name.as_deref() == Some("console"))
        .expect("console ClusterOperator");
    let degraded_at = console
        .condition("Degraded")
        .filter(|c| c.is_true())
        .and_then(|c| c.last_transition_time)
        .unwrap_or_else(|| {
            panic!(
                "console is not Degraded with a transition time: {:#?}",
                console.status
            )
        });
    let due = degraded_at + chrono::Duration::minutes(41);
    while clock.now() < due {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let state = feed.borrow().clone();
    let mut app = app_for(demo(), 160, 48);
    let (tx, _rx) = tokio::sync::mpsc::channel(4);
    app.attach_engine(live.engine.status.borrow().clone(), tx);
    app.set_clock(clock.clone());
    app.update(Action::State(state));
    app.update(Action::Engine(live.engine.status.borrow().clone()));
    live.stop().await;
    let d = &app.dash;
    assert_eq!(d.headline.word, crate::ui::model::FAILING, "{:?}", d.headline);
    let degraded = d
        .insights
        .iter()
        .find(|i| i.message.contains("Cluster Operator console is degraded"))
        .unwrap_or_else(|| panic!("no console insight: {:#?}", d.insights));
    assert_eq!(degraded.level, Level::Error, "{degraded:#?}");
    assert!(
        !d.insights.iter().any(|i| i.message.contains("proceeding well")),
        "{:#?}",
        d.insights
    );
    let overview = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(overview.contains("FAILING"), "{overview}");
    assert!(!overview.contains("Update is proceeding well"), "{overview}");
    // The task graph: console's cell failed (✗), not waiting (~).
    key(&mut app, KeyCode::Char('7'));
    let graph = screen_text(draw(&app).backend().buffer()).join("\n");
    let console: Vec<&str> = graph.lines().filter(|l| l.contains("console")).collect();
    assert!(console.iter().any(|l| l.contains("✗")), "{console:#?}\n{graph}");
    assert!(!graph.contains("~ "), "{graph}");
}
