//! The event loop: input, signals, redraw only on change, coalesced feed bursts.

use std::{io, time::Duration};

use futures::{StreamExt, channel::mpsc, stream};
use ratatui::crossterm::event::Event;
use tokio::sync::watch;

use super::*;
use crate::ui::{LoopStats, UiOptions, event_loop};

fn static_opts() -> UiOptions {
    UiOptions {
        feed: crate::cluster::static_feed(demo()),
        alerts: None,
        now: None,
        engine: None,
        requests: None,
        read_only: false,
        clock: crate::clock::Clock::wall(),
        release_source: None,
        banner: None,
        back_leaves: false,
    }
}

fn press(c: char) -> io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)))
}

async fn run_loop(
    t: &mut Terminal<TestBackend>,
    events: impl futures::Stream<Item = io::Result<Event>> + Unpin,
    opts: UiOptions,
    signals: impl std::future::Future<Output = &'static str>,
) -> LoopStats {
    tokio::time::timeout(
        Duration::from_secs(10),
        event_loop(t, events, opts, Palette::color(), signals),
    )
    .await
    .expect("the loop ends within 10 s")
    .expect("the loop ends without error")
}

#[tokio::test]
async fn exits_when_input_ends() {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let stats = run_loop(&mut t, stream::empty(), static_opts(), std::future::pending()).await;
    assert_eq!(
        stats.frames, 1,
        "one first frame, then the end of input (tty EOF) ends the loop"
    );
}

#[tokio::test]
async fn quits_on_q_and_draws_only_on_change() {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    // '2' changes the view, 'k' at the top changes nothing, 'q' quits.
    let events = stream::iter(vec![press('2'), press('k'), press('q')]).chain(stream::pending());
    let stats = run_loop(&mut t, events, static_opts(), std::future::pending()).await;
    assert_eq!(
        stats.frames, 2,
        "first frame, after '2'; none for the no-op 'k' nor for 'q' (quitting changes nothing on screen)"
    );
    assert_eq!(
        stats.unchanged, 1,
        "the 'q' frame was rendered off screen only: {stats:?}"
    );
    let text = screen_text(t.backend().buffer()).join("\n");
    assert!(text.contains("clusteroperators[33]"), "{text}");
}

#[tokio::test]
async fn exits_on_signal() {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let sighup = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        "SIGHUP"
    };
    let stats = run_loop(&mut t, stream::pending(), static_opts(), sighup).await;
    assert_eq!(stats.frames, 1);
}

#[tokio::test]
async fn idle_means_no_redraw() {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let stop = async {
        tokio::time::sleep(Duration::from_millis(1200)).await;
        "test"
    };
    let stats = run_loop(&mut t, stream::pending(), static_opts(), stop).await;
    assert_eq!(stats.frames, 1, "a static snapshot with no input is drawn once");
}

#[tokio::test]
async fn resize_redraws_at_the_new_size() {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let (tx, rx) = mpsc::unbounded::<io::Result<Event>>();
    let opts = static_opts();
    let driver = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        "test"
    };
    // Resize the backend first (what the terminal does), then deliver the event.
    t.backend_mut().resize(50, 10);
    tx.unbounded_send(Ok(Event::Resize(50, 10))).expect("send");
    let stats = run_loop(&mut t, rx, opts, driver).await;
    assert_eq!(stats.frames, 2);
    let lines = screen_text(t.backend().buffer());
    assert!(lines[0].starts_with("terminal too small: 50x10"), "{}", lines[0]);
}

// On the runtime's paused clock, so the count of applied states depends on the coalescing rule
// and not on how busy the machine is (on a loaded machine the producer's 2 ms sleeps stretch
// over seconds of wall time).
#[tokio::test(start_paused = true)]
async fn bursts_of_feed_updates_are_coalesced() {
    let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let (tx, rx) = watch::channel(Arc::new(demo()));
    let (keys, events) = mpsc::unbounded::<io::Result<Event>>();
    let opts = UiOptions {
        feed: rx,
        alerts: None,
        now: None,
        engine: None,
        requests: None,
        read_only: false,
        clock: crate::clock::Clock::wall(),
        release_source: None,
        banner: None,
        back_leaves: false,
    };
    let base = demo();
    let producer = async move {
        for i in 0..200_u32 {
            let mut s = base.clone();
            s.cluster_operators
                .truncate(usize::try_from(i % 30).unwrap_or(0) + 1);
            let _ = tx.send(Arc::new(s));
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        tokio::time::sleep(Duration::from_millis(400)).await;
        keys.unbounded_send(press('q')).expect("send q");
        // Keep the sender alive until the loop is done.
        tokio::time::sleep(Duration::from_secs(5)).await;
    };
    let (stats, ()) = tokio::select! {
        s = run_loop(&mut t, events, opts, std::future::pending()) => (s, ()),
        () = producer => panic!("the loop did not quit"),
    };
    // 200 updates over about half a second: at most a few applied (250 ms apart).
    assert!(stats.states <= 6, "{stats:?}");
    assert!(stats.frames <= 7, "{stats:?}");
    assert!(stats.states >= 2, "the last state is applied: {stats:?}");
}
