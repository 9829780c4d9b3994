//! The ratatui dashboard (feature `tui`): it never writes to the cluster itself. With an
//! embedded engine ([`UiOptions::engine`]) it shows the engine's snapshot and sends the engine
//! [`Command`](crate::reconcile::api::Command)s (mode switch, reconcile now) without waiting.
//!
//! State (never calls render code):
//! - `app`: state and the only mutator, `App::update(Action)` (The Elm Architecture);
//! - `tab`: the views in tab order;
//! - `keys`: the one key registry behind dispatch, help and hints;
//! - `model` / `adapter`: the rows and values shown, derived per state change (pools, nodes
//!   and the update facts come only from [`crate::assess`]); `model::rows` (table texts and
//!   filtering), `model::detail` (detail and YAML popup content), `model::feed`;
//! - `engine`: what the embedded engine's views show (task graph, drift, gauge, log), derived
//!   per engine snapshot;
//! - `popup`: the open popup, its content lines and size;
//! - `layout`: screen geometry (pure rectangle arithmetic);
//!
//! Render (depends on the state, never the reverse):
//! - `view`: pure rendering of `&App`, one module per view or widget;
//!
//! Shared: `theme`, `text` (named styles, width-safe one-line cells) and [`logging`] (file
//! logging, never to the screen).
//!
//! The loop redraws only when input, data or the terminal size change, applies
//! bursts of feed and engine updates together at most four times a second, exits cleanly on `q`, Ctrl-c, SIGHUP,
//! SIGTERM, SIGINT or end of input, and restores the terminal on every exit
//! path, panics included.

mod adapter;
mod app;
mod engine;
pub mod fleet;
mod keys;
mod layout;
pub mod logging;
mod model;
mod popup;
mod request;
mod tab;
mod text;
mod theme;
mod view;

use std::{sync::Arc, time::Duration};

use chrono::{DateTime, Utc};
use futures::{Stream, StreamExt};
use ratatui::{
    Terminal,
    backend::Backend,
    crossterm::event::{Event, EventStream, KeyCode},
};
use tokio::{sync::watch, time::Instant};

use crate::{assess::alerts::Alerts, cluster::ClusterState, reconcile::api::EngineHandle};

/// What the dashboard shows.
pub struct UiOptions {
    /// The cluster state feed (static for snapshots, live for clusters).
    pub feed: watch::Receiver<Arc<ClusterState>>,
    /// Firing alerts, if given.
    pub alerts: Option<Alerts>,
    /// Fixed "now"; `None` means the wall clock (live) or the snapshot time (static).
    pub now: Option<DateTime<Utc>>,
    /// The embedded reconcile engine, when the dashboard drives one (`cvo demo`); `None` for a
    /// dashboard that only watches a cluster or a snapshot.
    pub engine: Option<EngineHandle>,
    /// Without an engine (`cvo tui` on a live cluster): where confirmed requests go and their
    /// outcomes come back (the CLI's writer); `None` for snapshots and `--read-only`.
    pub requests: Option<(
        tokio::sync::mpsc::Sender<crate::reconcile::api::Command>,
        tokio::sync::mpsc::Receiver<crate::reconcile::api::CommandOutcome>,
    )>,
    /// `--read-only`: every administrator request (update, channel, clear, accept risks, the
    /// switch to active-apply) is refused with the reason on screen.
    pub read_only: bool,
    /// The clock ages are measured against on a live feed (without `now`): the wall clock, or
    /// the demo's simulated one (the header then says so, with its speed).
    pub clock: crate::clock::Clock,
    /// Where the demo's releases come from (`registry 127.0.0.1:5000`, `embedded releases`),
    /// shown in the header after the clock; `None` outside the demo.
    pub release_source: Option<String>,
    /// A notice the header's first line gives right after the engine's mode, before the
    /// source, so that a narrow terminal never cuts it (`cvo rehearse --tui`: "rehearsal:
    /// nothing is written to your cluster"); `None` elsewhere.
    pub banner: Option<String>,
    /// Opened from `cvo fleet`: Esc with nothing to close (no popup, prompt or filter) leaves
    /// the dashboard as `q` does, back to the fleet.
    pub back_leaves: bool,
}

/// Environment variable naming a key that makes the dashboard panic (end-to-end tests check
/// that a panic restores the terminal).
pub const PANIC_KEY_ENV: &str = "CVO_UI_TEST_PANIC_KEY";

/// Shortest gap between two applications of feed or engine updates (bursts of both are
/// coalesced into one redraw).
const FEED_INTERVAL: Duration = Duration::from_millis(250);
/// How often ages are refreshed when they follow the wall clock.
const CLOCK_INTERVAL: Duration = Duration::from_secs(5);

/// Runs the dashboard until the user quits or the terminal goes away.
///
/// # Errors
/// No terminal on stdin/stdout, terminal I/O errors and signal-handler registration failures.
pub async fn run(opts: UiOptions) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!(crate::l10n::tr!(
            "ui-needs-terminal",
            "the dashboard needs a terminal (stdin/stdout is not a TTY); \
             use `cvo status` or `cvo demo --headless` for text output"
        ));
    }
    let signals = crate::signals::StopSignals::install(true)?;
    let mut guard = RestoreOnDrop(Some(init_terminal()?));
    let Some(terminal) = guard.0.as_mut() else {
        anyhow::bail!("the terminal was restored before the dashboard started");
    };
    let signals = async move { signals.next().await.name() };
    // Test hook for the end-to-end script: panic on this key to prove the terminal is restored.
    let panic_key = std::env::var(PANIC_KEY_ENV).ok().and_then(|s| s.chars().next());
    let events = EventStream::new().inspect(move |ev| {
        if let (Some(k), Ok(Event::Key(key))) = (panic_key, ev)
            && key.code == KeyCode::Char(k)
        {
            panic!("forced panic on key {k:?} ({PANIC_KEY_ENV})");
        }
    });
    let result = event_loop(terminal, events, opts, theme::Palette::from_env(), signals).await;
    drop(guard);
    result.map(|stats| {
        tracing::info!(
            frames = stats.frames,
            unchanged = stats.unchanged,
            states = stats.states,
            snapshots = stats.snapshots,
            "dashboard closed"
        );
    })
}

/// Enters raw mode and the alternate screen (`ratatui::try_init`) with a panic hook that
/// restores the terminal, logs the panic to the log file and then prints it as before.
///
/// ratatui's own hook cannot be kept: when the terminal is gone (closed, SIGHUP) its restore
/// fails and it reports that with `eprintln!` on the same dead terminal, which panics inside
/// the hook, and Rust aborts the process; nothing is unwound, so the demo's payload directory
/// and the lease are left behind. This hook ignores restore errors, and the standard hook it
/// calls ignores stderr write errors, so a panic unwinds as any other.
///
/// # Errors
/// Raw mode or the alternate screen cannot be entered.
fn init_terminal() -> std::io::Result<ratatui::DefaultTerminal> {
    let previous = std::panic::take_hook();
    let terminal = ratatui::try_init();
    // Replaces the hook ratatui just installed (dropping it).
    std::panic::set_hook(Box::new(move |info| {
        let _ = ratatui::try_restore();
        tracing::error!(panic = %info, "panic");
        previous(info);
    }));
    terminal
}

/// The dashboard's terminal, restored when this is dropped: when the loop ends, and also when
/// the dashboard's future is dropped unfinished (the live demo drops it on a signal).
///
/// The terminal may be gone (closed, SIGHUP), so restore errors are ignored. A terminal that
/// is gone cannot show its cursor either: ratatui's `Terminal` drop would report that with
/// `eprintln!` on the same dead terminal, and that write panics, so such a terminal is
/// forgotten instead (nothing is left to restore).
struct RestoreOnDrop(Option<ratatui::DefaultTerminal>);

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        let _ = ratatui::try_restore();
        if let Some(mut terminal) = self.0.take()
            && terminal.show_cursor().is_err()
        {
            std::mem::forget(terminal);
        }
    }
}

/// What a run of the loop did (for tests and the log).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopStats {
    /// Frames drawn.
    pub frames: u64,
    /// Cluster states applied (after coalescing).
    pub states: u64,
    /// Engine snapshots applied (after coalescing).
    pub snapshots: u64,
    /// Redraws skipped because the frame would have been the same as the last one.
    pub unchanged: u64,
}

/// Renders `app` once into the terminal's buffer and sends the cells that differ from the
/// screen, or nothing at all when the frame is the same as the last one sent (`last`, `None`
/// after a clear): no bytes, no cursor sequence, no flush. Returns whether a frame was sent.
///
/// While a prompt is open the frame places the cursor, which only [`Terminal::draw`] reads
/// back from the frame: such frames are always drawn.
///
/// # Errors
/// The backend's write errors.
fn draw_if_changed<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &app::App,
    last: &mut Option<ratatui::buffer::Buffer>,
) -> Result<bool, B::Error> {
    if app.prompt.is_some() {
        terminal.draw(|f| view::render(app, f))?;
        *last = None;
        return Ok(true);
    }
    terminal.autoresize()?;
    view::render(app, &mut terminal.get_frame());
    let rendered = terminal.current_buffer_mut();
    if last.as_ref() == Some(&*rendered) {
        // The screen already shows this: the rendered buffer becomes the previous one as is.
        terminal.swap_buffers();
        return Ok(false);
    }
    *last = Some(rendered.clone());
    terminal.apply_buffer_with_cursor(None)?;
    Ok(true)
}

/// The event loop, generic over the terminal backend and the input stream so tests can drive
/// it. Returns when the app quits, input ends, or `signals` resolves.
async fn event_loop<B, S>(
    terminal: &mut Terminal<B>,
    mut events: S,
    opts: UiOptions,
    palette: theme::Palette,
    signals: impl std::future::Future<Output = &'static str>,
) -> anyhow::Result<LoopStats>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = std::io::Result<Event>> + Unpin,
{
    let UiOptions {
        mut feed,
        alerts,
        now,
        engine,
        requests,
        read_only,
        clock,
        release_source,
        banner,
        back_leaves,
    } = opts;
    let size = terminal.size()?;
    let first = feed.borrow_and_update().clone();
    let mut app = app::App::new(first, alerts, now, palette, (size.width, size.height));
    app.set_clock(clock);
    app.read_only = read_only;
    app.release_source = release_source;
    app.banner = banner;
    app.back_leaves = back_leaves;
    let mut stats = LoopStats {
        frames: 0,
        states: 1,
        snapshots: 0,
        unchanged: 0,
    };
    let (mut status, mut engine_open) = match engine {
        Some(EngineHandle {
            mut status, commands, ..
        }) => {
            app.attach_engine(status.borrow_and_update().clone(), commands);
            stats.snapshots = 1;
            (Some(status), true)
        }
        None => (None, false),
    };
    let mut outcomes = None;
    if let (false, Some((tx, rx))) = (engine_open, requests) {
        app.commands = Some(tx);
        outcomes = Some(rx);
    }
    let mut engine_pending = false;
    let mut clock = tokio::time::interval(CLOCK_INTERVAL);
    clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(signals);
    let mut dirty = true;
    let mut feed_open = true;
    let mut feed_pending = false;
    let mut last_feed = Instant::now();
    // The last frame sent: a state change that changes nothing visible (an age that still
    // reads the same, a snapshot field no view shows) sends nothing.
    let mut last: Option<ratatui::buffer::Buffer> = None;
    loop {
        if dirty {
            dirty = false;
            if draw_if_changed(terminal, &app, &mut last)? {
                stats.frames += 1;
            } else {
                stats.unchanged += 1;
            }
        }
        if app.quit {
            break;
        }
        let feed_due = last_feed + FEED_INTERVAL;

        tokio::select! {
            sig = &mut signals => {
                tracing::info!(signal = sig, "exiting on signal");
                break;
            }
            ev = events.next() => match ev {
                Some(Ok(Event::Key(key))) => dirty |= app.handle_key(key),
                Some(Ok(Event::Resize(w, h))) => {
                    // Full clear so no stale cells survive a shrink/grow.
                    terminal.autoresize()?;
                    terminal.clear()?;
                    last = None;
                    app.update(app::Action::Resize(w, h));
                    dirty = true;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "terminal input failed; exiting");
                    break;
                }
                None => {
                    tracing::info!("terminal input closed; exiting");
                    break;
                }
            },
            changed = feed.changed(), if feed_open && !feed_pending => match changed {
                Ok(()) => feed_pending = true,
                Err(_) => {
                    tracing::info!("cluster feed closed; keeping the last state");
                    feed_open = false;
                }
            },
            changed = engine_changed(status.as_mut()), if engine_open && !engine_pending => match changed {
                Ok(()) => engine_pending = true,
                Err(_) => {
                    tracing::info!("engine status closed; keeping the last snapshot");
                    engine_open = false;
                }
            },
            () = tokio::time::sleep_until(feed_due), if feed_pending || engine_pending => {
                // Only the latest values are applied: a burst of updates costs one rebuild.
                if feed_pending {
                    let state = feed.borrow_and_update().clone();
                    dirty |= app.update(app::Action::State(state));
                    stats.states += 1;
                    feed_pending = false;
                }
                if engine_pending && let Some(rx) = status.as_mut() {
                    let snap = rx.borrow_and_update().clone();
                    dirty |= app.update(app::Action::Engine(snap));
                    stats.snapshots += 1;
                    engine_pending = false;
                }
                last_feed = Instant::now();
            }
            Some(out) = next_outcome(outcomes.as_mut()), if outcomes.is_some() => {
                dirty |= app.update(app::Action::RequestOutcome(out));
            }
            _ = clock.tick(), if app.follows_clock() => {
                dirty |= app.update(app::Action::Tick(app.clock.now()));
            }
        }
    }
    Ok(stats)
}

/// The next outcome of the request writer; `None` once it has stopped.
async fn next_outcome(
    rx: Option<&mut tokio::sync::mpsc::Receiver<crate::reconcile::api::CommandOutcome>>,
) -> Option<crate::reconcile::api::CommandOutcome> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Waits for the next engine snapshot; never resolves without an engine.
async fn engine_changed(
    rx: Option<&mut watch::Receiver<Arc<crate::reconcile::api::StatusSnapshot>>>,
) -> Result<(), watch::error::RecvError> {
    match rx {
        Some(rx) => rx.changed().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests;
