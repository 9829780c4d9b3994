//! The idle dashboard: after an update, snapshots that change nothing visible draw nothing
//! (the reconciling engine's passes, fields no view shows), and the demo's simulated clock
//! (ages, the header's note, no negative durations).

use std::{sync::Arc, time::Duration};

use tokio::sync::{mpsc, watch};

use super::{
    engine::{engine_app, mid_update},
    *,
};
use crate::{
    clock::Clock,
    reconcile::api::{EngineHandle, EngineMode, EngineState, StatusSnapshot},
    ui::{UiOptions, event_loop},
};

/// The snapshot of an engine reconciling an applied release, `done` tasks into a pass.
fn reconciling(done: usize, passes: u64) -> StatusSnapshot {
    let mut s = mid_update(EngineMode::ActiveApply);
    s.state = EngineState::Reconciling;
    s.failure = None;
    s.attempt = 0;
    s.done = done;
    s.fraction = done as f32 / s.total as f32;
    s.running = done < s.total;
    s.counters.passes = passes;
    s
}

#[test]
fn a_reconciling_engine_shows_the_release_applied_whatever_the_pass() {
    let (mut app, _rx) = engine_app(reconciling(0, 7), 80, 24);
    let first = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(
        first.contains("all 68 manifests applied · reconciling"),
        "{first}"
    );
    for (done, passes) in [(10, 7), (40, 7), (68, 8), (5, 9)] {
        app.update(Action::Engine(Arc::new(reconciling(done, passes))));
        let now = screen_text(draw(&app).backend().buffer()).join("\n");
        assert_eq!(
            now, first,
            "pass progress {done} (pass {passes}) changed the screen"
        );
    }
    // A failing reconcile pass is news again: live progress and the failure.
    let mut failing = reconciling(30, 9);
    failing.failure = mid_update(EngineMode::ActiveApply).failure;
    app.update(Action::Engine(Arc::new(failing)));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("30 of 68 manifests applied"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn snapshots_that_change_nothing_visible_draw_nothing() {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let (status_tx, status) = watch::channel(Arc::new(reconciling(68, 1)));
    let (commands, _cmd_rx) = mpsc::channel(4);
    let opts = UiOptions {
        feed: crate::cluster::static_feed(demo()),
        alerts: None,
        now: None,
        engine: Some(EngineHandle::new(status, commands)),
        requests: None,
        read_only: false,
        clock: Clock::wall(),
        release_source: None,
        banner: None,
        back_leaves: false,
    };
    let producer = async move {
        // Ten reconciling passes, each from 0 to all tasks, a second apart.
        for pass in 2..12_u64 {
            for done in [0, 20, 45, 68] {
                let _ = status_tx.send(Arc::new(reconciling(done, pass)));
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        "test"
    };
    let stats = tokio::time::timeout(
        Duration::from_secs(60),
        event_loop(
            &mut t,
            futures::stream::pending(),
            opts,
            Palette::color(),
            producer,
        ),
    )
    .await
    .expect("ends in time")
    .expect("no error");
    assert!(stats.snapshots >= 20, "the snapshots were applied: {stats:?}");
    assert_eq!(stats.frames, 1, "only the first frame is drawn: {stats:?}");
    assert!(stats.unchanged >= 20, "{stats:?}");
}

#[test]
fn the_header_names_the_simulated_clock_and_its_speed() {
    let mut app = app_for(demo(), 100, 30);
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(
        !text.contains("simulated clock"),
        "a snapshot has no simulated clock: {text}"
    );
    // A live feed on the demo's clock.
    let mut live = demo();
    live.feed = crate::cluster::FeedStatus::Live {
        error: None,
        synced: true,
    };
    app.update(Action::State(Arc::new(live)));
    app.set_clock(Clock::simulated(10.0));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(
        text.lines()
            .next()
            .unwrap_or_default()
            .contains("simulated clock ×10"),
        "{text}"
    );
    // The demo says where its releases come from, after the clock.
    app.release_source = Some("registry 127.0.0.1:5000".into());
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(
        text.lines()
            .next()
            .unwrap_or_default()
            .trim_end()
            .ends_with("simulated clock ×10 │ registry 127.0.0.1:5000"),
        "{text}"
    );
}

#[test]
fn a_live_state_is_measured_at_its_arrival_on_the_apps_clock() {
    let mut app = app_for(demo(), 100, 30);
    let start = app.now + chrono::Duration::days(30);
    app.set_clock(Clock::simulated_from(start, 20.0));
    let mut live = demo();
    live.feed = crate::cluster::FeedStatus::Live {
        error: None,
        synced: true,
    };
    app.update(Action::State(Arc::new(live.clone())));
    let first = app.now;
    assert!(
        first >= start && first - start < chrono::Duration::seconds(60),
        "{first}"
    );
    std::thread::sleep(Duration::from_millis(100));
    // The next state (nothing else happened in between) reads the clock again: ~2 s later at
    // speed 20, never the time of an earlier tick.
    app.update(Action::State(Arc::new(live)));
    let step = app.now - first;
    assert!(step >= chrono::Duration::seconds(2), "{step}");
}
