//! The fleet view (`cvo fleet` in a terminal): one row per cluster of the kubeconfig, live,
//! sorted and filtered; Enter asks for that cluster's dashboard.
//!
//! State ([`FleetApp`]) is changed only by [`FleetApp::update`]; rows are recomputed only for
//! the members whose state changed (the fleet replaces a member's `Arc` when it changes), and
//! the Lease's liveness against the clock on a tick. [`view`] renders it (pure); every word is
//! in [`words`]. [`run`] is the loop: it applies the fleet's changes at most every
//! [`APPLY_INTERVAL`], so a change on any cluster is on screen within about that.

pub mod view;
pub mod words;

use std::{sync::Arc, time::Duration};

use chrono::{DateTime, Utc};
use futures::StreamExt;
use ratatui::crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tokio::sync::watch;

use super::theme::Palette;
use crate::{
    assess::fleet::{FleetRow, SortKey, compare, row},
    cluster::fleet::{FleetState, Member},
};

/// Shortest gap between two applications of fleet changes (a burst costs one redraw).
pub const APPLY_INTERVAL: Duration = Duration::from_millis(40);
/// How often the Lease holders are judged against the clock again.
const TICK: Duration = Duration::from_secs(5);

/// What changes the fleet view.
#[derive(Debug)]
pub enum Action {
    /// A new fleet state, at this instant.
    Fleet(Arc<FleetState>, DateTime<Utc>),
    /// The clock moved (Lease liveness).
    Tick(DateTime<Utc>),
    /// A key.
    Key(KeyEvent),
    /// The terminal's new size.
    Resize(u16, u16),
}

/// The fleet view's state.
pub struct FleetApp {
    members: Vec<Arc<Member>>,
    rows: Vec<FleetRow>,
    /// The sort key.
    pub sort: SortKey,
    /// The filter text (case-insensitive, any cell).
    pub filter: String,
    /// Whether the filter is being typed.
    pub editing: bool,
    /// The selected member (index into the fleet's members).
    selected: Option<usize>,
    /// Set by `q` / Ctrl-c: leave.
    pub quit: bool,
    /// Set by Enter: the member whose dashboard to open (the caller clears it).
    pub open: Option<usize>,
    /// A one-line notice in the footer (e.g. why a cluster cannot be opened).
    pub notice: Option<String>,
    /// Colours.
    pub(crate) palette: Palette,
    /// Terminal size (width, height).
    pub size: (u16, u16),
}

impl FleetApp {
    /// An empty view of `size`.
    pub(crate) fn new(palette: Palette, size: (u16, u16)) -> Self {
        Self {
            members: Vec::new(),
            rows: Vec::new(),
            sort: SortKey::Name,
            filter: String::new(),
            editing: false,
            selected: None,
            quit: false,
            open: None,
            notice: None,
            palette,
            size,
        }
    }

    /// An empty view in the palette `NO_COLOR` chooses (its size is the terminal's once
    /// [`run`] starts).
    pub fn from_env() -> Self {
        Self::new(Palette::from_env(), (80, 24))
    }

    /// Every row, in the fleet's (kubeconfig) order.
    pub fn rows(&self) -> &[FleetRow] {
        &self.rows
    }

    /// The rows shown: filtered, then sorted; indexes into [`FleetApp::rows`].
    pub fn visible(&self) -> Vec<usize> {
        let needle = self.filter.to_lowercase();
        let mut v: Vec<usize> = (0..self.rows.len())
            .filter(|&i| needle.is_empty() || matches(&self.rows[i], &needle))
            .collect();
        v.sort_by(|&a, &b| compare(&self.rows[a], &self.rows[b], self.sort));
        v
    }

    /// The position of the selection among [`FleetApp::visible`] (the first row when the
    /// selected cluster is filtered out or none is selected).
    pub fn cursor(&self, visible: &[usize]) -> usize {
        self.selected
            .and_then(|s| visible.iter().position(|&i| i == s))
            .unwrap_or(0)
    }

    /// The selected row, if any row is shown.
    pub fn selected_row(&self) -> Option<&FleetRow> {
        let v = self.visible();
        v.get(self.cursor(&v)).map(|&i| &self.rows[i])
    }

    /// Applies `action`; returns whether the screen may have changed.
    pub fn update(&mut self, action: Action) -> bool {
        match action {
            Action::Fleet(f, now) => self.apply(&f, now),
            Action::Tick(now) => {
                let mut changed = false;
                for (r, m) in self.rows.iter_mut().zip(&self.members) {
                    let alive = m.lease.as_ref().is_some_and(|l| l.alive(now));
                    if r.lease_holder.is_some() && r.lease_alive != alive {
                        r.lease_alive = alive;
                        changed = true;
                    }
                }
                changed
            }
            Action::Resize(w, h) => {
                self.size = (w, h);
                true
            }
            Action::Key(k) => self.key(k),
        }
    }

    fn apply(&mut self, f: &FleetState, now: DateTime<Utc>) -> bool {
        if f.members.len() != self.members.len() {
            self.members.clear();
            self.rows.clear();
        }
        let mut changed = false;
        for (i, m) in f.members.iter().enumerate() {
            match self.members.get(i) {
                Some(old) if Arc::ptr_eq(old, m) => {}
                Some(_) => {
                    let r = row(m, now);
                    if self.rows[i] != r {
                        self.rows[i] = r;
                        changed = true;
                    }
                    self.members[i] = m.clone();
                }
                None => {
                    self.rows.push(row(m, now));
                    self.members.push(m.clone());
                    changed = true;
                }
            }
        }
        changed
    }

    fn key(&mut self, k: KeyEvent) -> bool {
        if k.kind == KeyEventKind::Release {
            return false;
        }
        if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
            self.quit = true;
            return true;
        }
        self.notice = None;
        if self.editing {
            match k.code {
                KeyCode::Char(c) => self.filter.push(c),
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Enter => self.editing = false,
                KeyCode::Esc => {
                    self.filter.clear();
                    self.editing = false;
                }
                _ => return false,
            }
            return true;
        }
        let v = self.visible();
        let at = self.cursor(&v);
        let last = v.len().saturating_sub(1);
        let page = usize::from(self.size.1.saturating_sub(view::CHROME_LINES)).max(1);
        let to = match k.code {
            KeyCode::Char('q') => {
                self.quit = true;
                return true;
            }
            KeyCode::Esc if !self.filter.is_empty() => {
                self.filter.clear();
                return true;
            }
            KeyCode::Char('/') => {
                self.editing = true;
                return true;
            }
            KeyCode::Char('s') => {
                self.sort = self.sort.next();
                return true;
            }
            KeyCode::Char(c @ '1'..='3') => {
                self.sort = match c {
                    '1' => SortKey::Name,
                    '2' => SortKey::Version,
                    _ => SortKey::State,
                };
                return true;
            }
            KeyCode::Enter => {
                self.open = v.get(at).copied();
                return self.open.is_some();
            }
            KeyCode::Down | KeyCode::Char('j') => (at + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => at.saturating_sub(1),
            KeyCode::PageDown => (at + page).min(last),
            KeyCode::PageUp => at.saturating_sub(page),
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            _ => return false,
        };
        let before = self.selected;
        self.selected = v.get(to).copied();
        before != self.selected
    }
}

/// Whether any cell of `r` contains `needle` (lower case).
fn matches(r: &FleetRow, needle: &str) -> bool {
    let cells = [
        Some(r.context.as_str()),
        Some(r.server.as_str()),
        Some(words::state(r.state)),
        r.version.as_deref(),
        r.channel.as_deref(),
        r.desired.as_deref(),
        r.lease_holder.as_deref(),
        r.error.as_deref(),
    ];
    cells
        .into_iter()
        .flatten()
        .any(|c| c.to_lowercase().contains(needle))
}

/// How [`run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `q`, Ctrl-c, a signal or the end of input.
    Quit,
    /// Enter on this member: open its dashboard, then come back.
    Open(usize),
}

/// Runs the fleet view until the user quits or opens a cluster; `app` keeps the sort,
/// filter and selection for the next run. The terminal is restored on return.
///
/// # Errors
/// No terminal on stdin/stdout, terminal I/O errors, signal-handler registration failures.
pub async fn run(app: &mut FleetApp, mut fleet: watch::Receiver<Arc<FleetState>>) -> anyhow::Result<Exit> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "the fleet view needs a terminal (stdin/stdout is not a TTY); use `cvo fleet -o table|json`"
        );
    }
    let mut signals = crate::signals::StopSignals::install(true)?;
    let mut guard = super::RestoreOnDrop(Some(super::init_terminal()?));
    let Some(terminal) = guard.0.as_mut() else {
        anyhow::bail!("the terminal was restored before the fleet view started");
    };
    let size = terminal.size()?;
    app.size = (size.width, size.height);
    app.open = None;
    app.quit = false;
    let first = fleet.borrow_and_update().clone();
    app.update(Action::Fleet(first, Utc::now()));
    let mut events = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut dirty = true;
    let mut pending = false;
    let mut fleet_open = true;
    let mut last_apply = tokio::time::Instant::now();
    let exit = loop {
        if dirty {
            dirty = false;
            terminal.draw(|f| view::render(app, f))?;
        }
        if app.quit {
            break Exit::Quit;
        }
        if let Some(i) = app.open.take() {
            break Exit::Open(i);
        }
        tokio::select! {
            _ = signals.recv() => break Exit::Quit,
            ev = events.next() => match ev {
                Some(Ok(Event::Key(k))) => dirty |= app.update(Action::Key(k)),
                Some(Ok(Event::Resize(w, h))) => {
                    terminal.autoresize()?;
                    terminal.clear()?;
                    dirty |= app.update(Action::Resize(w, h));
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break Exit::Quit,
            },
            changed = fleet.changed(), if fleet_open && !pending => match changed {
                Ok(()) => pending = true,
                Err(_) => fleet_open = false,
            },
            () = tokio::time::sleep_until(last_apply + APPLY_INTERVAL), if pending => {
                let f = fleet.borrow_and_update().clone();
                dirty |= app.update(Action::Fleet(f, Utc::now()));
                pending = false;
                last_apply = tokio::time::Instant::now();
            }
            _ = tick.tick() => dirty |= app.update(Action::Tick(Utc::now())),
        }
    };
    drop(guard);
    Ok(exit)
}

#[cfg(test)]
mod tests;
