//! The engine views (`cvo demo`): snapshots of the sync gauge, task graph, drift view, event
//! log and confirm popup built from synthetic [`StatusSnapshot`]s, colour asserts, the command
//! channel, and the event loop redrawing on engine snapshots.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::json;
use tokio::sync::mpsc;

use super::*;
use crate::cow_vec::CowVec;
use crate::{
    openshift::Release,
    reconcile::api::{
        Command, CommandOutcome, Drift, DriftRecord, EngineEvent, EngineMode, EngineState, EventLevel,
        FieldChange, RunLevelProgress, StatusSnapshot, TaskProgress, TaskState,
    },
};

mod live;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.to_utc()).expect("time")
}

/// A task state by letter: `d` done, `r` running, `p` pending, `f` failed, `s` skipped.
fn state(ch: char, comp: &str) -> TaskState {
    match ch {
        'd' => TaskState::Done,
        'r' => TaskState::Running,
        'f' => TaskState::Failed(format!(
            "ClusterOperator {comp} is degraded: RolloutStuck: deployment {comp} has 0/3 ready replicas"
        )),
        's' => TaskState::Skipped("capability Console is disabled".into()),
        _ => TaskState::Pending,
    }
}

/// The engine's own aggregation, as the engine publishes it (tests stand in for the engine).
fn run_levels(tasks: &[TaskProgress]) -> Vec<RunLevelProgress> {
    let mut out: Vec<RunLevelProgress> = Vec::new();
    for t in tasks {
        let i = match out.iter().position(|r| r.level == t.run_level) {
            Some(i) => i,
            None => {
                out.push(RunLevelProgress {
                    level: t.run_level,
                    ..Default::default()
                });
                out.len() - 1
            }
        };
        let r = &mut out[i];
        r.total += 1;
        match t.state {
            TaskState::Done => r.done += 1,
            TaskState::Failed(_) => r.failed += 1,
            TaskState::Skipped(_) => r.skipped += 1,
            _ => {}
        }
    }
    out
}

/// A synthetic snapshot: `spec` is (run level, component, task states by letter).
fn snapshot_of(mode: EngineMode, spec: &[(u32, &str, &str)]) -> StatusSnapshot {
    let mut tasks = Vec::new();
    let n: usize = spec.iter().map(|(_, _, s)| s.len()).sum();
    for (level, comp, states) in spec {
        for ch in states.chars() {
            let i = tasks.len() + 1;
            tasks.push(TaskProgress {
                index: i,
                name: format!("deployment \"openshift-{comp}/{comp}-{i}\" ({i} of {n})"),
                run_level: Some(*level),
                component: Some((*comp).to_string()),
                state: state(ch, comp),
            });
        }
    }
    let done = tasks.iter().filter(|t| t.state == TaskState::Done).count();
    let failed = tasks.iter().any(|t| matches!(t.state, TaskState::Failed(_)));
    #[allow(clippy::cast_precision_loss)]
    let fraction = done as f32 / tasks.len().max(1) as f32;
    StatusSnapshot {
        state: EngineState::Updating,
        mode,
        desired: Some(Release {
            version: "4.16.4".into(),
            image: "quay.io/openshift-release-dev/ocp-release@sha256:4164".into(),
            ..Default::default()
        }),
        fraction,
        done,
        total: tasks.len(),
        running: true,
        run_levels: run_levels(&tasks),
        failure: failed.then(|| crate::reconcile::api::Failure {
            reason: "ClusterOperatorDegraded".into(),
            message: "Cluster operator kube-apiserver is degraded".into(),
        }),
        tasks: tasks.into(),
        lease_holder: Some("cvo-demo-7f9c".into()),
        leader: mode == EngineMode::ActiveApply,
        last_command: Some(CommandOutcome {
            command: "mode active-apply".into(),
            result: Ok("now active-apply".into()),
            at: at("2024-07-20T10:40:00Z"),
        }),
        events: Arc::new(vec![
            EngineEvent {
                seq: 1,
                at: at("2024-07-20T10:39:58Z"),
                level: EventLevel::Info,
                text: "state Starting → Updating".into(),
            },
            EngineEvent {
                seq: 2,
                at: at("2024-07-20T10:40:01Z"),
                level: EventLevel::Warning,
                text: "task deployment \"openshift-kube-apiserver/kube-apiserver-9\" retried".into(),
            },
            EngineEvent {
                seq: 3,
                at: at("2024-07-20T10:40:07Z"),
                level: EventLevel::Error,
                text: "pass 2 failed: ClusterOperator kube-apiserver is degraded".into(),
            },
        ]),
        drift: CowVec::from(vec![
            DriftRecord {
                task: "configmap \"openshift-etcd/etcd-config\" (3 of 40)".into(),
                kind: "ConfigMap".into(),
                namespace: "openshift-etcd".into(),
                name: "etcd-config".into(),
                drift: Drift::Update {
                    diff: vec![
                        FieldChange {
                            path: "data.version".into(),
                            from: Some(json!("4.16.3")),
                            to: Some(json!("4.16.4")),
                        },
                        FieldChange {
                            path: "data.quota".into(),
                            from: None,
                            to: Some(json!("8Gi")),
                        },
                    ],
                },
            },
            DriftRecord {
                task: "namespace \"openshift-insights\" (1 of 40)".into(),
                kind: "Namespace".into(),
                namespace: String::new(),
                name: "openshift-insights".into(),
                drift: Drift::Create {
                    object: Some(Arc::new(json!({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": "openshift-insights"}}))),
                },
            },
            DriftRecord {
                task: "deployment \"openshift-old/legacy\" (9 of 40)".into(),
                kind: "apps/Deployment".into(),
                namespace: "openshift-old".into(),
                name: "legacy".into(),
                drift: Drift::Delete,
            },
            DriftRecord {
                task: "configmap \"openshift-etcd/same\" (4 of 40)".into(),
                kind: "ConfigMap".into(),
                namespace: "openshift-etcd".into(),
                name: "same".into(),
                drift: Drift::None,
            },
        ]),
        at: Some(at("2024-07-20T10:40:08Z")),
        ..Default::default()
    }
}

/// Mid-update: levels 00–10 done, 20 has a failed component, 50 and later pending.
pub(super) fn mid_update(mode: EngineMode) -> StatusSnapshot {
    snapshot_of(
        mode,
        &[
            (0, "cluster-version-operator", "ddd"),
            (3, "config-operator", "dddd"),
            (10, "etcd", "ddddd"),
            (10, "kube-apiserver", "ddddddd"),
            (10, "openshift-apiserver", "ddddd"),
            (20, "kube-controller-manager", "dddr"),
            (20, "kube-scheduler", "ddfpp"),
            (20, "console", "ss"),
            (25, "machine-api", "pppp"),
            (30, "machine-config", "ppppp"),
            (40, "network", "pppppp"),
            (50, "ingress", "ppp"),
            (50, "dns", "pp"),
            (50, "monitoring", "pppppppp"),
            (60, "insights", "pp"),
            (70, "marketplace", "ppp"),
        ],
    )
}

pub(super) fn engine_app(snap: StatusSnapshot, w: u16, h: u16) -> (App, mpsc::Receiver<Command>) {
    let mut app = app_for(demo(), w, h);
    let (tx, rx) = mpsc::channel(4);
    app.attach_engine(Arc::new(snap), tx);
    (app, rx)
}

fn text_of(app: &App) -> String {
    screen_text(draw(app).backend().buffer()).join("\n")
}

// ---------------------------------------------------------------- snapshots

#[test]
fn snapshot_engine_overview_mid_update() {
    let (app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 80, 24);
    insta::assert_snapshot!("engine_overview_80x24", draw(&app).backend());
    let (app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 160, 48);
    insta::assert_snapshot!("engine_overview_160x48", draw(&app).backend());
}

#[test]
fn snapshot_engine_task_graph_with_a_failed_component() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 80, 24);
    key(&mut app, KeyCode::Char('7'));
    assert_eq!(app.tab, Tab::Tasks);
    insta::assert_snapshot!("engine_tasks_80x24", draw(&app).backend());
    // Select the failed cell with the filter, open its tasks.
    chars(&mut app, "/failed");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    insta::assert_snapshot!("engine_tasks_failed_detail_80x24", draw(&app).backend());
    let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 160, 48);
    key(&mut app, KeyCode::Char('7'));
    insta::assert_snapshot!("engine_tasks_160x48", draw(&app).backend());
}

#[test]
fn snapshot_engine_drift_view() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::WatchOnly), 80, 24);
    key(&mut app, KeyCode::Char('8'));
    assert_eq!(app.tab, Tab::Drift);
    insta::assert_snapshot!("engine_drift_80x24", draw(&app).backend());
    key(&mut app, KeyCode::Enter);
    insta::assert_snapshot!("engine_drift_detail_80x24", draw(&app).backend());
    let (mut app, _rx) = engine_app(mid_update(EngineMode::WatchOnly), 160, 48);
    key(&mut app, KeyCode::Char('8'));
    insta::assert_snapshot!("engine_drift_160x48", draw(&app).backend());
}

#[test]
fn snapshot_engine_log_pane_and_confirm_popup() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::WatchOnly), 80, 24);
    assert!(!app.show_log, "24 rows: the log starts hidden");
    key(&mut app, KeyCode::Char('e'));
    assert!(app.show_log);
    insta::assert_snapshot!("engine_log_80x24", draw(&app).backend());
    key(&mut app, KeyCode::Char('m'));
    insta::assert_snapshot!("engine_confirm_active_80x24", draw(&app).backend());
}

// ---------------------------------------------------------------- behaviour

#[test]
fn gauge_numbers_come_from_the_snapshot() {
    let mut snap = mid_update(EngineMode::ActiveApply);
    // Numbers no recomputation could produce: the screen must show these.
    snap.fraction = 0.25;
    snap.done = 123;
    snap.total = 492;
    let (app, _rx) = engine_app(snap, 120, 40);
    let text = text_of(&app);
    assert!(
        text.contains("123 of 492 manifests applied (25%) · at run level 20 · 1 failed"),
        "{text}"
    );
    assert!(text.contains("Desired 4.16.4"), "{text}");
    assert!(text.contains("Engine Updating"), "{text}");
    assert!(text.contains("cvo-demo-7f9c (we lead)"), "{text}");
    assert!(text.contains("mode active-apply: now active-apply"), "{text}");
}

#[test]
fn cells_and_modes_are_coloured() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 120, 40);
    key(&mut app, KeyCode::Char('7'));
    let t = draw(&app);
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "✓ etcd 5/5").expect("done cell on screen");
    assert_eq!(buf[(x + 2, y)].fg, Color::Green, "done cell is green");
    let (x, y) = find(buf, "✗ kube-scheduler 2/5").expect("failed cell on screen");
    assert_eq!(buf[(x + 2, y)].fg, Color::Red, "failed cell is red");
    let (x, y) = find(buf, "» kube-controller-manager 3/4").expect("running cell on screen");
    assert_eq!(buf[(x + 2, y)].fg, Color::Yellow, "running cell is yellow");
    let (x, y) = find(buf, "- console 0/2").expect("skipped cell on screen");
    assert!(
        buf[(x + 2, y)].modifier.contains(Modifier::DIM),
        "skipped cell is dim"
    );
    // The first cell is selected (reversed).
    let (x, y) = find(buf, "✓ cluster-version-operator 3/3").expect("first cell");
    assert!(buf[(x, y)].modifier.contains(Modifier::REVERSED));
    // Mode colours: active-apply magenta reversed, watch-only light blue, never alike.
    let (x, y) = find(buf, "active-apply").expect("mode in the header");
    assert_eq!(y, 0);
    assert_eq!(buf[(x, y)].fg, Color::Magenta);
    assert!(buf[(x, y)].modifier.contains(Modifier::REVERSED));
    let (app, _rx) = engine_app(mid_update(EngineMode::WatchOnly), 120, 40);
    let t = draw(&app);
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "watch-only").expect("mode in the header");
    assert_eq!(y, 0);
    assert_eq!(buf[(x, y)].fg, Color::LightBlue);
    assert!(!buf[(x, y)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn log_levels_are_coloured_newest_last() {
    let (app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 120, 40);
    assert!(app.show_log, "40 rows: the log starts shown");
    let t = draw(&app);
    let buf = t.backend().buffer();
    let (_, y_warn) = find(buf, "WARN").expect("warning line");
    let (x, y_err) = find(buf, "ERROR pass 2 failed").expect("error line");
    assert!(y_err > y_warn, "newest at the bottom");
    assert_eq!(buf[(x, y_err)].fg, Color::Red);
    let (x, y) = find(buf, "WARN").expect("warning line");
    assert_eq!(buf[(x, y)].fg, Color::Yellow);
}

#[test]
fn confirm_sends_set_mode_and_esc_sends_nothing() {
    let (mut app, mut rx) = engine_app(mid_update(EngineMode::WatchOnly), 80, 24);
    // Esc cancels: nothing sent.
    key(&mut app, KeyCode::Char('m'));
    assert!(matches!(
        app.popup.as_ref().map(|p| &p.kind),
        Some(PopupKind::Confirm(EngineMode::ActiveApply))
    ));
    let text = text_of(&app);
    assert!(text.contains("openshift-cluster-version/version"), "{text}");
    key(&mut app, KeyCode::Esc);
    assert!(app.popup.is_none());
    assert!(rx.try_recv().is_err(), "Esc sends nothing");
    // `n` cancels too; `j` in the popup does nothing.
    key(&mut app, KeyCode::Char('m'));
    key(&mut app, KeyCode::Char('j'));
    assert!(app.popup.is_some());
    key(&mut app, KeyCode::Char('n'));
    assert!(app.popup.is_none());
    assert!(rx.try_recv().is_err(), "n sends nothing");
    // `y` confirms.
    key(&mut app, KeyCode::Char('m'));
    key(&mut app, KeyCode::Char('y'));
    assert!(app.popup.is_none());
    assert_eq!(
        rx.try_recv().ok(),
        Some(Command::SetMode(EngineMode::ActiveApply))
    );
    assert!(
        app.flash
            .as_ref()
            .is_some_and(|(m, _)| m.contains("mode active-apply"))
    );
    // Enter confirms; from active-apply the switch goes to watch-only.
    let (mut app, mut rx) = engine_app(mid_update(EngineMode::ActiveApply), 80, 24);
    key(&mut app, KeyCode::Char('m'));
    assert!(text_of(&app).contains("cvo stops writing and releases the Lease at once"));
    key(&mut app, KeyCode::Enter);
    assert_eq!(rx.try_recv().ok(), Some(Command::SetMode(EngineMode::WatchOnly)));
    // `r` asks for a pass.
    key(&mut app, KeyCode::Char('r'));
    assert_eq!(rx.try_recv().ok(), Some(Command::ReconcileNow));
}

#[test]
fn a_full_command_channel_never_blocks() {
    let mut app = app_for(demo(), 80, 24);
    let (tx, mut rx) = mpsc::channel(1);
    app.attach_engine(Arc::new(mid_update(EngineMode::WatchOnly)), tx);
    key(&mut app, KeyCode::Char('r'));
    key(&mut app, KeyCode::Char('r'));
    assert!(
        app.flash
            .as_ref()
            .is_some_and(|(m, _)| m.starts_with("engine busy")),
        "{:?}",
        app.flash
    );
    assert_eq!(rx.try_recv().ok(), Some(Command::ReconcileNow));
    assert!(rx.try_recv().is_err(), "the second one was not queued");
    drop(rx);
    key(&mut app, KeyCode::Char('r'));
    assert!(
        app.flash
            .as_ref()
            .is_some_and(|(m, _)| m.starts_with("engine stopped"))
    );
}

#[test]
fn without_an_engine_the_engine_views_and_keys_are_absent() {
    let mut app = app_for(demo(), 120, 40);
    for c in ['7', '8', 'm', 'r', 'e'] {
        // Answered with why in the footer (see live::engine_keys_without_an_engine_say_why...).
        key(&mut app, KeyCode::Char(c));
    }
    app.flash = None;
    assert_eq!(app.tab, Tab::Overview);
    assert!(app.popup.is_none());
    let text = text_of(&app);
    assert!(!text.contains("Tasks"), "{text}");
    assert!(
        text.lines().next().is_some_and(|l| l.contains("│ watch-only")),
        "{text}"
    );
    // Tab cycles through the six cluster views only.
    for _ in 0..6 {
        key(&mut app, KeyCode::Tab);
        assert!(Tab::CLUSTER.contains(&app.tab));
    }
    assert_eq!(app.tab, Tab::Overview);
}

#[test]
fn with_an_engine_help_lists_every_key_and_tab_reaches_the_engine_views() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 120, 90);
    key(&mut app, KeyCode::Char('?'));
    let text = text_of(&app);
    for b in super::super::keys::BINDINGS {
        assert!(text.contains(b.desc.en), "help describes {}", b.desc.en);
    }
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::BackTab);
    assert_eq!(app.tab, Tab::Drift);
    key(&mut app, KeyCode::BackTab);
    assert_eq!(app.tab, Tab::Tasks);
}

#[test]
fn drift_filter_and_create_yaml() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::WatchOnly), 120, 40);
    key(&mut app, KeyCode::Char('8'));
    assert_eq!(
        app.visible_rows(Tab::Drift).len(),
        3,
        "Drift::None records are left out"
    );
    chars(&mut app, "/data.version");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.visible_rows(Tab::Drift), vec![0]);
    let text = text_of(&app);
    assert!(text.contains("data.version: \"4.16.3\" → \"4.16.4\""), "{text}");
    key(&mut app, KeyCode::Esc);
    chars(&mut app, "/create");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('y'));
    match app.popup.as_ref().map(|p| &p.kind) {
        Some(PopupKind::Yaml(y)) => assert!(y.contains("name: openshift-insights"), "{y}"),
        other => panic!("expected the YAML of the object to create, got {other:?}"),
    }
}

#[test]
fn task_graph_scrolls_to_keep_the_selection_visible() {
    let spec: Vec<(u32, String, &str)> = (0..40).map(|i| (i, format!("component-{i:02}"), "dd")).collect();
    let spec: Vec<(u32, &str, &str)> = spec.iter().map(|(l, c, s)| (*l, c.as_str(), *s)).collect();
    let (mut app, _rx) = engine_app(snapshot_of(EngineMode::ActiveApply, &spec), 80, 24);
    key(&mut app, KeyCode::Char('7'));
    key(&mut app, KeyCode::Char('G'));
    let text = text_of(&app);
    assert!(
        text.contains("component-39 2/2"),
        "the last cell is visible: {text}"
    );
    assert!(!text.contains("component-00 "), "the first scrolled away: {text}");
    key(&mut app, KeyCode::Char('g'));
    let text = text_of(&app);
    assert!(text.contains("component-00 2/2"), "{text}");
}

#[test]
fn engine_snapshots_update_the_view() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 80, 24);
    let same = app.engine.as_ref().map(|e| e.snap.clone()).expect("engine");
    assert!(
        !app.update(Action::Engine(same)),
        "the same snapshot changes nothing"
    );
    let mut next = mid_update(EngineMode::ActiveApply);
    next.state = EngineState::Reconciling;
    assert!(app.update(Action::Engine(Arc::new(next))));
    assert!(text_of(&app).contains("Engine Reconciling"));
}

mod event_loop {
    use std::{io, time::Duration};

    use futures::channel::mpsc as fmpsc;
    use ratatui::crossterm::event::Event;
    use tokio::sync::watch;

    use super::*;
    use crate::{
        reconcile::api::EngineHandle,
        ui::{UiOptions, event_loop},
    };

    // On tokio's paused clock: the producer's 3 ms steps and the loop's 250 ms coalescing
    // window are virtual time, so the count of redraws does not depend on the machine's load.
    #[tokio::test(start_paused = true)]
    async fn engine_snapshots_redraw_coalesced() {
        let mut t = Terminal::new(TestBackend::new(100, 30)).expect("terminal");
        let mut first = mid_update(EngineMode::ActiveApply);
        first.done = 1;
        let (status_tx, status) = watch::channel(Arc::new(first));
        let (commands, _cmd_rx) = mpsc::channel(4);
        let (keys, events) = fmpsc::unbounded::<io::Result<Event>>();
        let opts = UiOptions {
            feed: crate::cluster::static_feed(demo()),
            alerts: None,
            now: None,
            engine: Some(EngineHandle::new(status, commands)),
            requests: None,
            read_only: false,
            clock: crate::clock::Clock::wall(),
            release_source: None,
            banner: None,
            back_leaves: false,
        };
        let producer = async move {
            // 100 snapshots in about 0.3 s: coalesced to a few redraws.
            for i in 0..100_usize {
                let mut s = mid_update(EngineMode::ActiveApply);
                s.done = 1000 + i;
                let _ = status_tx.send(Arc::new(s));
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
            tokio::time::sleep(Duration::from_millis(400)).await;
            keys.unbounded_send(Ok(Event::Key(KeyEvent::new(
                KeyCode::Char('q'),
                KeyModifiers::NONE,
            ))))
            .expect("send q");
            tokio::time::sleep(Duration::from_secs(5)).await;
        };
        let stats = tokio::select! {
            s = tokio::time::timeout(
                Duration::from_secs(10),
                event_loop(&mut t, events, opts, Palette::color(), std::future::pending()),
            ) => s.expect("ends in time").expect("no error"),
            () = producer => panic!("the loop did not quit"),
        };
        let text = screen_text(t.backend().buffer()).join("\n");
        assert!(text.contains("1099 of"), "the last snapshot is on screen: {text}");
        assert!(stats.snapshots >= 2, "{stats:?}");
        assert!(stats.snapshots <= 6, "bursts are coalesced: {stats:?}");
        assert!(stats.frames <= 7, "{stats:?}");
    }

    #[tokio::test]
    async fn idle_engine_means_no_redraw() {
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let (_status_tx, status) = watch::channel(Arc::new(mid_update(EngineMode::WatchOnly)));
        let (commands, _cmd_rx) = mpsc::channel(4);
        let opts = UiOptions {
            feed: crate::cluster::static_feed(demo()),
            alerts: None,
            now: None,
            engine: Some(EngineHandle::new(status, commands)),
            requests: None,
            read_only: false,
            clock: crate::clock::Clock::wall(),
            release_source: None,
            banner: None,
            back_leaves: false,
        };
        let stop = async {
            tokio::time::sleep(Duration::from_millis(800)).await;
            "test"
        };
        let stats = tokio::time::timeout(
            Duration::from_secs(10),
            event_loop(&mut t, futures::stream::pending(), opts, Palette::color(), stop),
        )
        .await
        .expect("ends in time")
        .expect("no error");
        assert_eq!(stats.frames, 1, "{stats:?}");
        assert_eq!(stats.snapshots, 1, "{stats:?}");
    }
}

#[test]
fn an_open_task_detail_follows_new_snapshots() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 100, 40);
    key(&mut app, KeyCode::Char('7'));
    chars(&mut app, "/kube-scheduler");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    assert!(text_of(&app).contains("2/5 done, 1 failed"));
    // The next snapshot: the failed task applied.
    let mut next = mid_update(EngineMode::ActiveApply);
    let mut tasks = next.tasks.to_vec();
    for t in &mut tasks {
        if matches!(t.state, TaskState::Failed(_)) {
            t.state = TaskState::Done;
        }
    }
    next.tasks = tasks.into();
    app.update(Action::Engine(Arc::new(next)));
    let text = text_of(&app);
    assert!(text.contains("3/5 done, 0 failed"), "{text}");
    assert!(!text.contains("Failed tasks"), "{text}");
}

#[test]
fn drift_words_follow_the_mode() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 120, 40);
    key(&mut app, KeyCode::Char('8'));
    let text = text_of(&app);
    // mid_update runs a pass towards 4.16.4: what it changed is the update's own doing.
    assert!(
        text.contains("changes the update to 4.16.4 made (its own, not drift)[3]"),
        "{text}"
    );
    assert!(text.contains("created (was absent)"), "{text}");
    assert!(text.contains("deleted"), "{text}");
    assert!(!text.contains("would be"), "{text}");
}

#[test]
fn operators_still_updating_are_waiting_not_failed() {
    let mut snap = mid_update(EngineMode::ActiveApply);
    snap.failure = Some(crate::reconcile::api::Failure {
        reason: "ClusterOperatorUpdating".into(),
        message: "Cluster operator kube-scheduler is updating versions".into(),
    });
    let (mut app, _rx) = engine_app(snap, 120, 40);
    let text = text_of(&app);
    assert!(
        text.contains("Waiting Cluster operator kube-scheduler is updating versions"),
        "{text}"
    );
    assert!(!text.contains("Failing Cluster"), "{text}");
    // The gauge's run level says waiting too, not failed.
    assert!(text.contains("at run level 20 · 1 waiting"), "{text}");
    assert!(!text.contains("1 failed"), "{text}");
    key(&mut app, KeyCode::Char('7'));
    let t = draw(&app);
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "~ kube-scheduler 2/5").expect("waiting cell");
    assert_eq!(buf[(x + 2, y)].fg, Color::Yellow, "waiting is yellow, not red");
    // Once the ClusterVersion says Failing, the same cell is red.
    let mut snap = mid_update(EngineMode::ActiveApply);
    snap.failure = Some(crate::reconcile::api::Failure {
        reason: "ClusterOperatorUpdating".into(),
        message: "Cluster operator kube-scheduler is updating versions".into(),
    });
    let mut cv = crate::openshift::ClusterVersionStatus::default();
    set_condition(
        &mut cv.conditions,
        "Failing",
        ConditionStatus::True,
        "ClusterOperatorUpdating",
        "Cluster operator kube-scheduler is updating versions",
    );
    snap.cluster_version = Some(cv.into());
    let (mut app, _rx) = engine_app(snap, 120, 40);
    key(&mut app, KeyCode::Char('7'));
    assert!(text_of(&app).contains("✗ kube-scheduler 2/5"));
}

/// Random keys, engine keys and new snapshots mixed, at several sizes: no panic, and every
/// frame keeps the selection inside the rows.
#[test]
fn random_keys_and_snapshots_never_panic() {
    let keys = [
        KeyCode::Char('j'),
        KeyCode::Char('k'),
        KeyCode::Char('G'),
        KeyCode::Char('g'),
        KeyCode::Char('/'),
        KeyCode::Char('f'),
        KeyCode::Char('?'),
        KeyCode::Char('y'),
        KeyCode::Char('n'),
        KeyCode::Char('m'),
        KeyCode::Char('r'),
        KeyCode::Char('e'),
        KeyCode::Char('7'),
        KeyCode::Char('8'),
        KeyCode::Enter,
        KeyCode::Esc,
        KeyCode::Tab,
        KeyCode::PageDown,
        KeyCode::Backspace,
    ];
    let snaps = [
        mid_update(EngineMode::ActiveApply),
        mid_update(EngineMode::WatchOnly),
        StatusSnapshot::default(),
        snapshot_of(EngineMode::ActiveApply, &[(0, "only", "f")]),
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for (w, h) in [(60u16, 15u16), (80, 24), (33, 7), (200, 60)] {
        let mut app = app_for(demo(), w, h);
        // A channel nobody reads: sends fill it, then report "busy", never block.
        let (tx, _rx) = mpsc::channel(2);
        app.attach_engine(Arc::new(mid_update(EngineMode::ActiveApply)), tx);
        for n in 0..400 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let k = keys[usize::try_from(seed % keys.len() as u64).unwrap_or(0)];
            key(&mut app, k);
            if n % 37 == 0 {
                let s = snaps[usize::try_from(seed % snaps.len() as u64).unwrap_or(0)].clone();
                app.update(Action::Engine(Arc::new(s)));
            }
            app.quit = false;
            let _ = draw(&app);
            let rows = app.visible_rows(app.tab).len();
            assert!(app.view().selected < rows.max(1), "selection in range");
        }
    }
}

#[test]
fn a_release_image_pull_shows_its_progress_in_the_engine_line() {
    let mut snap = mid_update(EngineMode::ActiveApply);
    snap.payload_pull = Some(crate::reconcile::api::PullProgress {
        image: "quay.io/openshift-release-dev/ocp-release@sha256:0123456789abcdef".into(),
        digest: Some("sha256:0123456789abcdef0123".into()),
        bytes_done: 12_500_000,
        bytes_total: 104_900_000,
        layers_done: 1,
        layers_total: 3,
    });
    let (app, _rx) = engine_app(snap, 160, 48);
    let t = draw(&app);
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "Pulling sha256:0123456789ab layers 1/3, 12.5/104.9 MB").expect("pull on screen");
    let line: String = (0..buf.area.width)
        .map(|i| buf[(i, y)].symbol().to_string())
        .collect();
    assert!(line.trim_start().starts_with("Engine Updating"), "{line}");
    assert_eq!(buf[(x + 9, y)].fg, app.palette.warn.fg.unwrap_or_default());
    // Without a pull, no such words.
    let (app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 160, 48);
    assert!(!text_of(&app).contains("Pulling"));
}

/// Secret values from the engine's drift never reach the screen: the drift view, the detail
/// popup and the YAML of a Secret to create show `***` (a changed value `*** (before)` →
/// `*** (after)`), even when the records handed to the dashboard were not masked.
#[test]
fn secret_values_are_masked_in_the_drift_view_detail_and_yaml() {
    let mut snap = mid_update(EngineMode::WatchOnly);
    snap.drift = CowVec::from(vec![
        DriftRecord {
            task: "secret \"openshift-config/pull\" (2 of 40)".into(),
            kind: "Secret".into(),
            namespace: "openshift-config".into(),
            name: "pull".into(),
            drift: Drift::Update {
                diff: vec![FieldChange {
                    path: ".data.password".into(),
                    from: Some(json!("b2xkLXNlY3JldA==")),
                    to: Some(json!("bmV3LXNlY3JldA==")),
                }],
            },
        },
        DriftRecord {
            task: "secret \"openshift-config/new\" (3 of 40)".into(),
            kind: "Secret".into(),
            namespace: "openshift-config".into(),
            name: "new".into(),
            drift: Drift::Create {
                object: Some(Arc::new(json!({"apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": "new", "namespace": "openshift-config"},
                    "stringData": {"token": "plain-token-value"}}))),
            },
        },
    ]);
    let (mut app, _rx) = engine_app(snap, 140, 40);
    key(&mut app, KeyCode::Char('8'));
    let text = text_of(&app);
    assert!(
        !text.contains("b2xkLXNlY3JldA") && !text.contains("bmV3LXNlY3JldA"),
        "{text}"
    );
    key(&mut app, KeyCode::Enter);
    let text = text_of(&app);
    assert!(
        text.contains(".data.password: \"*** (before)\" → \"*** (after)\""),
        "{text}"
    );
    assert!(!text.contains("bmV3LXNlY3JldA"), "{text}");
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Char('y'));
    match app.popup.as_ref().map(|p| &p.kind) {
        Some(PopupKind::Yaml(y)) => {
            assert!(y.contains("token: '***'"), "{y}");
            assert!(!y.contains("plain-token-value"), "{y}");
        }
        other => panic!("expected the YAML of the Secret to create, got {other:?}"),
    }
}

/// The drift view's KIND is a name an administrator types back (`oc get deployment ...`): it is
/// shown whole whatever the object's length, and the OBJECT column gives way. At 100 columns a
/// 60-character object squeezed `Deployment` to `Deploym…`.
#[test]
fn the_drift_kind_is_shown_whole_beside_a_long_object_name() {
    let mut snap = mid_update(EngineMode::WatchOnly);
    let name = "cluster-monitoring-operator-prometheus-adapter-metrics-reader";
    snap.drift = CowVec::from(vec![DriftRecord {
        task: format!("deployment \"openshift-monitoring/{name}\" (7 of 40)"),
        kind: "apps/Deployment".into(),
        namespace: "openshift-monitoring".into(),
        name: name.into(),
        drift: Drift::Delete,
    }]);
    for (w, h) in [(100, 30), (80, 24)] {
        let (mut app, _rx) = engine_app(snap.clone(), w, h);
        key(&mut app, KeyCode::Char('8'));
        let text = text_of(&app);
        let row = text
            .lines()
            .find(|l| l.contains("openshift-monitoring/"))
            .unwrap_or_else(|| panic!("{w}x{h}: no drift row\n{text}"));
        assert!(row.contains(" Deployment "), "{w}x{h}: {row}\n{text}");
        assert!(!row.contains("Deploym…"), "{w}x{h}: {row}");
    }
}
