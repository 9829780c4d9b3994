//! The dashboard's state and its only mutator, [`App::update`] (The Elm Architecture): keys,
//! new cluster states, clock ticks and resizes come in as [`Action`]s; the view reads `&App`.
//! The state never calls render code: row texts, filtering and popup content come from the
//! model ([`super::model`], [`super::popup`]), sizes from [`super::layout`].

use crate::l10n::{tr, trf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use ratatui::layout::Rect;
use tokio::sync::mpsc;

use super::{
    engine::{self, EngineModel},
    keys::{self, KeyAction, Mode},
    layout,
    model::{
        Dashboard,
        detail::{self, Sources},
        rows,
    },
    popup::{self, Popup, PopupKind},
    request::UiRequest,
    tab::Tab,
    text,
    theme::{Level, Palette},
};
use crate::{
    assess::alerts::Alerts,
    cluster::ClusterState,
    reconcile::api::{Command, StatusSnapshot},
};

mod engine_keys;
mod requests;

/// Terminal height from which the engine event log starts shown.
pub const LOG_AUTO_HEIGHT: u16 = 32;

/// Which prompt is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// `/` filter of the current table.
    Filter,
    /// `:` command line.
    Command,
}

/// A one-line prompt at the bottom of the screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    /// Filter or command.
    pub kind: PromptKind,
    /// What has been typed.
    pub text: String,
}

/// Selection, scroll offset and filter of one view's table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableView {
    /// Selected row (index into the filtered rows).
    pub selected: usize,
    /// First visible row.
    pub offset: usize,
    /// Filter text (`!` prefix inverts); empty for none.
    pub filter: String,
    /// Rows sorted by severity (problems first) instead of the API order.
    pub by_severity: bool,
}

/// A cursor move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// One up.
    Up,
    /// One down.
    Down,
    /// First.
    Top,
    /// Last.
    Bottom,
    /// One page up.
    PageUp,
    /// One page down.
    PageDown,
}

/// Everything that changes the app.
#[derive(Clone, Debug)]
pub enum Action {
    /// Quit now (Ctrl-c, `:q`, SIGHUP).
    ForceQuit,
    /// `q`: quit at the root, close a popup otherwise.
    Quit,
    /// Toggle the help overlay.
    ToggleHelp,
    /// Open a prompt.
    OpenPrompt(PromptKind),
    /// A character typed into the prompt.
    PromptInput(char),
    /// Backspace in the prompt.
    PromptDelete,
    /// Enter in the prompt.
    PromptSubmit,
    /// Esc.
    Back,
    /// Move the selection or scroll the popup.
    Move(Move),
    /// Show view N.
    GotoTab(Tab),
    /// Next view.
    NextTab,
    /// Previous view.
    PrevTab,
    /// Details of the selected row.
    OpenDetail,
    /// YAML of the selected object.
    OpenYaml,
    /// Sort the current table by severity, or back to the API order.
    ToggleSort,
    /// A new cluster state from the feed.
    State(Arc<ClusterState>),
    /// The wall clock moved (live feeds only).
    Tick(DateTime<Utc>),
    /// The terminal has a new size.
    Resize(u16, u16),
    /// A new engine snapshot.
    Engine(Arc<StatusSnapshot>),
    /// Open the confirm popup for switching the engine's mode.
    SwitchMode,
    /// Confirm popup accepted: send the command.
    Confirm,
    /// Ask the engine for an apply pass now.
    ReconcileNow,
    /// Show or hide the engine event log.
    ToggleLog,
    /// Updates: open the confirm popup for the selected target.
    RequestSelected,
    /// Open the channel list.
    OpenChannels,
    /// Channel list: review the change to the selected channel.
    ChooseChannel,
    /// Open the confirm popup for clearing the requested update.
    ClearRequest,
    /// Updates: open the confirm popup for accepting the selected target's risks.
    AcceptRisks,
    /// Without an engine: what the request writer did with a request.
    RequestOutcome(crate::reconcile::api::CommandOutcome),
}

/// The dashboard's state.
#[derive(Debug)]
pub struct App {
    /// Colours.
    pub palette: Palette,
    /// The latest cluster state.
    pub state: Arc<ClusterState>,
    /// The rows and values derived from it.
    pub dash: Dashboard,
    /// Firing alerts given on the command line.
    pub alerts: Option<Alerts>,
    /// A fixed "now" (`--now`), if given.
    pub fixed_now: Option<DateTime<Utc>>,
    /// The instant ages are measured against.
    pub now: DateTime<Utc>,
    /// The view in front.
    pub tab: Tab,
    /// Per-view table state, indexed by [`Tab::index`].
    pub views: [TableView; 8],
    /// The open prompt.
    pub prompt: Option<Prompt>,
    /// The open popup.
    pub popup: Option<Popup>,
    /// A one-line message shown until the next key.
    pub flash: Option<(String, Level)>,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// Set when the app should exit.
    pub quit: bool,
    /// The embedded engine's latest snapshot and what the views derive from it (`None`: no
    /// engine, the engine views and keys are absent).
    pub engine: Option<EngineModel>,
    /// Where engine commands go (never awaited: `try_send`).
    pub commands: Option<mpsc::Sender<Command>>,
    /// The engine event log pane is shown.
    pub show_log: bool,
    /// The task-graph cell (run level, component) whose detail popup is open: new snapshots
    /// refresh it.
    pub task_detail: Option<(Option<u32>, String)>,
    /// `--read-only`: every request is refused, with the reason on screen.
    pub read_only: bool,
    /// What "now" is on a live feed: the wall clock or the demo's simulated clock
    /// ([`App::set_clock`]).
    pub clock: crate::clock::Clock,
    /// Where the demo's releases come from, for the header ([`super::UiOptions`]).
    pub release_source: Option<String>,
    /// The header's notice after the mode ([`super::UiOptions::banner`]).
    pub banner: Option<String>,
    /// Esc at the root leaves ([`super::UiOptions::back_leaves`]).
    pub back_leaves: bool,
}

impl App {
    /// A new app showing `state`.
    pub fn new(
        state: Arc<ClusterState>,
        alerts: Option<Alerts>,
        fixed_now: Option<DateTime<Utc>>,
        palette: Palette,
        size: (u16, u16),
    ) -> Self {
        let mut app = Self {
            palette,
            dash: Dashboard::default(),
            state: Arc::new(ClusterState::default()),
            alerts,
            fixed_now,
            now: fixed_now.unwrap_or_default(),
            tab: Tab::Overview,
            views: Default::default(),
            prompt: None,
            popup: None,
            flash: None,
            size,
            quit: false,
            engine: None,
            commands: None,
            show_log: false,
            task_detail: None,
            read_only: false,
            clock: crate::clock::Clock::wall(),
            release_source: None,
            banner: None,
            back_leaves: false,
        };
        app.update(Action::State(state));
        app
    }

    /// Measures ages against `clock` on a live feed (the demo's simulated clock); reads it at
    /// once.
    pub fn set_clock(&mut self, clock: crate::clock::Clock) {
        self.clock = clock;
        if self.follows_clock() {
            self.now = self.clock.now();
            self.rebuild();
        }
    }

    /// Connects the app to an engine: its first snapshot and its command channel. The event
    /// log starts shown on terminals at least [`LOG_AUTO_HEIGHT`] rows high.
    pub fn attach_engine(&mut self, snap: Arc<StatusSnapshot>, commands: mpsc::Sender<Command>) {
        self.commands = Some(commands);
        self.show_log = self.size.1 >= LOG_AUTO_HEIGHT;
        self.update(Action::Engine(snap));
    }

    /// The tabs on offer: five, or seven with an engine.
    pub fn tabs(&self) -> &'static [Tab] {
        if self.engine.is_some() {
            &Tab::ALL
        } else {
            &Tab::CLUSTER
        }
    }

    fn send(&mut self, cmd: Command) {
        let text = cmd.to_string();
        let Some(tx) = &self.commands else {
            self.flash = Some((
                tr!("app-no-engine", "no engine to send commands to").into(),
                Level::Warn,
            ));
            return;
        };
        self.flash = Some(match tx.try_send(cmd) {
            Ok(()) if self.engine.is_some() => (
                trf!(
                    "app-sent",
                    "sent {text}; the outcome shows in the header",
                    text = text
                ),
                Level::Info,
            ),
            Ok(()) => (
                trf!(
                    "app-sent-waiting",
                    "sent {text}; waiting for the API server",
                    text = text
                ),
                Level::Info,
            ),
            Err(mpsc::error::TrySendError::Full(_)) => (
                trf!(
                    "app-engine-busy",
                    "engine busy: {text} not sent, try again",
                    text = text
                ),
                Level::Warn,
            ),
            Err(mpsc::error::TrySendError::Closed(_)) => (
                trf!(
                    "app-engine-stopped",
                    "engine stopped: {text} not sent",
                    text = text
                ),
                Level::Error,
            ),
        });
    }

    /// Which bindings apply now.
    pub fn mode(&self) -> Mode {
        if self.prompt.is_some() {
            Mode::Prompt
        } else if self.popup.as_ref().is_some_and(|p| p.kind.is_confirm()) {
            Mode::Confirm
        } else if self.popup.is_some() {
            Mode::Popup
        } else {
            Mode::Normal
        }
    }

    /// Whether ages follow the wall clock (live feeds without `--now`).
    pub fn follows_clock(&self) -> bool {
        self.fixed_now.is_none() && self.state.feed != crate::cluster::FeedStatus::Static
    }

    /// Turns a key press into an action through the key registry and applies it. Returns
    /// whether anything visible changed.
    pub fn handle_key(&mut self, ev: KeyEvent) -> bool {
        if ev.kind != KeyEventKind::Press {
            return false;
        }
        let had_flash = self.flash.take().is_some();
        let mode = self.mode();
        let action = match keys::lookup(mode, self.engine.is_some(), &ev) {
            Some(b) => Some(self.key_action(b.action, &ev)),
            None if mode == Mode::Prompt => match ev.code {
                KeyCode::Char(ch) if !ev.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) => {
                    Some(Action::PromptInput(ch))
                }
                _ => None,
            },
            None if self.engine_key_without_engine(&ev) => return true,
            None => None,
        };
        match action {
            Some(a) => self.update(a) || had_flash,
            None => had_flash,
        }
    }

    fn key_action(&self, action: KeyAction, ev: &KeyEvent) -> Action {
        match action {
            KeyAction::ForceQuit => Action::ForceQuit,
            KeyAction::Quit => Action::Quit,
            KeyAction::Help => Action::ToggleHelp,
            KeyAction::Filter => Action::OpenPrompt(PromptKind::Filter),
            KeyAction::Command => Action::OpenPrompt(PromptKind::Command),
            KeyAction::Back => Action::Back,
            KeyAction::Down => Action::Move(Move::Down),
            KeyAction::Up => Action::Move(Move::Up),
            KeyAction::Top => Action::Move(Move::Top),
            KeyAction::Bottom => Action::Move(Move::Bottom),
            KeyAction::PageDown => Action::Move(Move::PageDown),
            KeyAction::PageUp => Action::Move(Move::PageUp),
            KeyAction::Open => match &self.popup {
                Some(Popup {
                    kind: PopupKind::Channels(_),
                    ..
                }) => Action::ChooseChannel,
                None if self.tab == Tab::Updates => Action::RequestSelected,
                _ => Action::OpenDetail,
            },
            KeyAction::Yaml => Action::OpenYaml,
            KeyAction::ToggleSort => Action::ToggleSort,
            KeyAction::NextTab => Action::NextTab,
            KeyAction::PrevTab => Action::PrevTab,
            KeyAction::GotoTab => {
                let n = match ev.code {
                    KeyCode::Char(c) => c.to_digit(10).unwrap_or(1) as usize,
                    _ => 1,
                };
                Action::GotoTab(self.tabs().get(n.saturating_sub(1)).copied().unwrap_or(self.tab))
            }
            KeyAction::Submit => Action::PromptSubmit,
            KeyAction::DeleteChar => Action::PromptDelete,
            KeyAction::SwitchMode => Action::SwitchMode,
            KeyAction::ReconcileNow => Action::ReconcileNow,
            KeyAction::ToggleLog => Action::ToggleLog,
            KeyAction::Confirm => Action::Confirm,
            KeyAction::Channel => Action::OpenChannels,
            KeyAction::ClearRequest => Action::ClearRequest,
            KeyAction::AcceptRisks => Action::AcceptRisks,
        }
    }

    /// Applies one action. Returns whether anything visible changed (the loop redraws only
    /// then).
    pub fn update(&mut self, action: Action) -> bool {
        match action {
            Action::ForceQuit => self.quit = true,
            Action::Quit => {
                if self.popup.is_some() {
                    self.popup = None;
                } else {
                    self.quit = true;
                }
            }
            Action::ToggleHelp => {
                self.popup = match &self.popup {
                    Some(Popup {
                        kind: PopupKind::Help,
                        ..
                    }) => None,
                    _ => Some(Popup {
                        title: tr!("app-help-title", "help").into(),
                        kind: PopupKind::Help,
                        scroll: 0,
                        yaml: None,
                    }),
                };
            }
            Action::OpenPrompt(kind) => {
                let text = match kind {
                    PromptKind::Filter => self.view().filter.clone(),
                    PromptKind::Command => String::new(),
                };
                self.prompt = Some(Prompt { kind, text });
            }
            Action::PromptInput(ch) => {
                let Some(p) = &mut self.prompt else { return false };
                p.text.push(ch);
                self.sync_filter();
            }
            Action::PromptDelete => {
                let Some(p) = &mut self.prompt else { return false };
                if p.text.pop().is_none() {
                    // Backspace on an empty prompt closes it (as in k9s).
                    self.prompt = None;
                } else {
                    self.sync_filter();
                }
            }
            Action::PromptSubmit => {
                if let Some(p) = self.prompt.take()
                    && p.kind == PromptKind::Command
                {
                    self.run_command(&p.text);
                }
            }
            Action::Back => {
                if let Some(p) = self.prompt.take() {
                    if p.kind == PromptKind::Filter {
                        self.set_filter(String::new());
                    }
                } else if self.popup.is_some() {
                    self.popup = None;
                } else if !self.view().filter.is_empty() {
                    self.set_filter(String::new());
                } else if self.back_leaves {
                    self.quit = true;
                } else {
                    return false;
                }
            }
            Action::Move(m) => return self.move_cursor(m),
            Action::GotoTab(t) => {
                if self.tab == t || !self.tabs().contains(&t) {
                    return false;
                }
                self.tab = t;
            }
            Action::NextTab => {
                let tabs = self.tabs();
                self.tab = tabs[(self.tab.index() + 1) % tabs.len()];
            }
            Action::PrevTab => {
                let tabs = self.tabs();
                self.tab = tabs[(self.tab.index() + tabs.len() - 1) % tabs.len()];
            }
            Action::OpenDetail => return self.open_detail(),
            Action::OpenYaml => return self.open_yaml(),
            Action::ToggleSort => {
                let v = self.view_mut();
                v.by_severity = !v.by_severity;
                v.selected = 0;
                v.offset = 0;
            }
            Action::State(state) => {
                self.state = state;
                if self.fixed_now.is_none() && self.state.feed == crate::cluster::FeedStatus::Static {
                    self.now = self.state.snapshot_time().unwrap_or_else(Utc::now);
                } else if self.fixed_now.is_none() {
                    // A new state is measured against the time it arrived, never a time
                    // before its own writes (no negative durations).
                    self.now = self.clock.now();
                }
                self.rebuild();
            }
            Action::Tick(now) => {
                if !self.follows_clock() || now == self.now {
                    return false;
                }
                self.now = now;
                self.rebuild();
            }
            Action::Resize(w, h) => {
                if self.size == (w, h) {
                    return false;
                }
                self.size = (w, h);
                self.clamp_all();
            }
            Action::Engine(snap) => {
                if self.engine.as_ref().is_some_and(|e| Arc::ptr_eq(&e.snap, &snap)) {
                    return false;
                }
                self.engine = Some(EngineModel::build(snap));
                let now = self.now;
                let fetched = self.engine.as_ref().and_then(|e| e.snap.updates.clone());
                self.dash.updates.with_fetched(fetched.as_deref(), now);
                self.clamp_all();
                self.refresh_task_detail();
            }
            Action::SwitchMode => return self.switch_mode(),
            Action::Confirm => {
                if !self.popup.as_ref().is_some_and(|p| p.kind.is_confirm()) {
                    return false;
                }
                match self.popup.take().map(|p| p.kind) {
                    Some(PopupKind::Confirm(to)) => self.confirm_switch(to),
                    Some(PopupKind::Request(v)) => self.send_request(*v),
                    _ => return false,
                }
            }
            Action::RequestSelected => return self.request_selected(),
            Action::OpenChannels => return self.open_channels(),
            Action::ChooseChannel => return self.choose_channel(),
            Action::ClearRequest => self.open_request(UiRequest::Clear, Vec::new()),
            Action::AcceptRisks => return self.accept_risks(),
            Action::RequestOutcome(o) => {
                self.flash = Some(match o.result {
                    Ok(m) => (format!("{}: {m}", o.command), Level::Ok),
                    Err(e) => (format!("{}: {e}", o.command), Level::Error),
                });
            }
            Action::ReconcileNow => {
                if self.engine.is_none() {
                    return false;
                }
                self.send(Command::ReconcileNow);
            }
            Action::ToggleLog => {
                if self.engine.is_none() {
                    return false;
                }
                self.show_log = !self.show_log;
                self.clamp_all();
            }
        }
        true
    }

    /// Rebuilds the view model from the state (and the assessment), keeping selections valid.
    fn rebuild(&mut self) {
        self.dash = super::adapter::dashboard(&self.state, self.alerts.as_ref(), self.now);
        let fetched = self.engine.as_ref().and_then(|e| e.snap.updates.clone());
        self.dash.updates.with_fetched(fetched.as_deref(), self.now);
        self.clamp_all();
    }

    /// Rows a table spends on its borders and header on a terminal `rows` high (the
    /// Overview's panels are compact on short terminals).
    fn table_chrome(&self, rows: u16) -> u16 {
        let compact = self.tab == Tab::Overview && layout::compact(rows);
        layout::chrome(compact) + 1
    }

    /// The current view's table state.
    pub fn view(&self) -> &TableView {
        &self.views[self.tab.index()]
    }

    fn view_mut(&mut self) -> &mut TableView {
        &mut self.views[self.tab.index()]
    }

    fn sync_filter(&mut self) {
        if let Some(Prompt {
            kind: PromptKind::Filter,
            text,
        }) = &self.prompt
        {
            let t = text.clone();
            self.set_filter(t);
        }
    }

    fn set_filter(&mut self, filter: String) {
        let v = self.view_mut();
        v.filter = filter;
        v.selected = 0;
        v.offset = 0;
    }

    fn run_command(&mut self, line: &str) {
        let cmd = line.trim().trim_start_matches(':').trim();
        if cmd.is_empty() {
            return;
        }
        let found = keys::COMMANDS.iter().find(|(aliases, _)| aliases.contains(&cmd));
        match found.map(|(aliases, _)| aliases[0]) {
            Some("q") => self.quit = true,
            Some("cv") => self.tab = Tab::Overview,
            Some("co") => self.tab = Tab::Operators,
            Some("nodes") => self.tab = Tab::Nodes,
            Some("history") => self.tab = Tab::History,
            Some("health") => self.tab = Tab::Health,
            Some("updates") => self.tab = Tab::Updates,
            Some("help") => {
                self.popup = Some(Popup {
                    title: tr!("app-help-title", "help").into(),
                    kind: PopupKind::Help,
                    scroll: 0,
                    yaml: None,
                });
            }
            _ => {
                self.flash = Some((
                    trf!(
                        "app-unknown-command",
                        "unknown command ':{cmd}'; try :help",
                        cmd = text::fit(cmd, 30)
                    ),
                    Level::Error,
                ));
            }
        }
    }

    /// Indexes of the rows of `tab` that pass its filter.
    pub fn visible_rows(&self, tab: Tab) -> Vec<usize> {
        let v = &self.views[tab.index()];
        rows::visible_rows(&self.dash, self.engine.as_ref(), tab, &v.filter, v.by_severity)
    }

    /// Rows the focused table of the current view can show at once.
    pub fn page_rows(&self) -> usize {
        let (w, h) = self.size;
        usize::from(
            self.focused_table_area(Rect::new(0, 0, w, h))
                .height
                .saturating_sub(self.table_chrome(h)),
        )
        .max(1)
    }

    fn move_cursor(&mut self, m: Move) -> bool {
        if let Some(p) = &mut self.popup {
            let before = p.scroll;
            let page = usize::from(self.size.1.saturating_sub(6)).max(1);
            p.scroll = match m {
                Move::Up => p.scroll.saturating_sub(1),
                Move::Down => p.scroll + 1,
                Move::Top => 0,
                Move::Bottom => usize::MAX,
                Move::PageUp => p.scroll.saturating_sub(page),
                Move::PageDown => p.scroll.saturating_add(page),
            };
            let max = self.popup_max_scroll();
            if let Some(p) = &mut self.popup {
                p.scroll = p.scroll.min(max);
                return p.scroll != before;
            }
            return false;
        }
        let n = self.visible_rows(self.tab).len();
        let page = self.page_rows();
        let v = self.view_mut();
        let before = v.clone();
        let last = n.saturating_sub(1);
        v.selected = match m {
            Move::Up => v.selected.saturating_sub(1),
            Move::Down => (v.selected + 1).min(last),
            Move::Top => 0,
            Move::Bottom => last,
            Move::PageUp => v.selected.saturating_sub(page),
            Move::PageDown => (v.selected + page).min(last),
        };
        self.clamp_view(self.tab);
        *self.view() != before
    }

    fn clamp_all(&mut self) {
        let current = self.tab;
        for t in Tab::ALL {
            self.tab = t;
            self.clamp_view(t);
        }
        self.tab = current;
        if self.popup.is_some() {
            let max = self.popup_max_scroll();
            if let Some(p) = &mut self.popup {
                p.scroll = p.scroll.min(max);
            }
        }
    }

    /// Keeps the selection inside the rows and the offset such that the selection is visible.
    fn clamp_view(&mut self, tab: Tab) {
        if tab == Tab::Tasks && tab == self.tab {
            self.clamp_task_view();
            return;
        }
        let n = self.visible_rows(tab).len();
        let page = if tab == self.tab {
            self.page_rows()
        } else {
            usize::MAX
        };
        let v = &mut self.views[tab.index()];
        v.selected = v.selected.min(n.saturating_sub(1));
        if v.selected < v.offset {
            v.offset = v.selected;
        } else if page != usize::MAX && v.selected >= v.offset + page {
            v.offset = v.selected + 1 - page;
        }
        if page != usize::MAX {
            v.offset = v.offset.min(n.saturating_sub(page));
        }
    }

    /// The task graph scrolls by lines (a run level may wrap over several); the selection is
    /// a cell. Keeps the selected cell's line visible.
    fn clamp_task_view(&mut self) {
        let n = self.visible_rows(Tab::Tasks).len();
        let (w, h) = self.task_panel_inner();
        let visible = self.visible_rows(Tab::Tasks);
        let lines = self
            .engine
            .as_ref()
            .map_or_else(Vec::new, |e| engine::task_lines(e, &visible, w));
        let v = &mut self.views[Tab::Tasks.index()];
        v.selected = v.selected.min(n.saturating_sub(1));
        let sel = v.selected;
        let line = engine::task_line_of(&lines, &visible, sel);
        let page = h.max(1);
        let v = &mut self.views[Tab::Tasks.index()];
        if line < v.offset {
            v.offset = line;
        } else if line >= v.offset + page {
            v.offset = line + 1 - page;
        }
        v.offset = v.offset.min(lines.len().saturating_sub(page));
    }

    /// The index (into the view model's rows) of the selected row, if any.
    pub fn selected_row(&self) -> Option<usize> {
        self.visible_rows(self.tab).get(self.view().selected).copied()
    }

    /// Rebuilds an open task-graph detail popup from the latest snapshot (same cell, same
    /// scroll).
    fn refresh_task_detail(&mut self) {
        let Some(key) = &self.task_detail else { return };
        if self.tab != Tab::Tasks
            || !matches!(
                self.popup,
                Some(Popup {
                    kind: PopupKind::Detail(_),
                    ..
                })
            )
        {
            return;
        }
        let idx = self.engine.as_ref().and_then(|e| {
            e.cells
                .iter()
                .position(|c| c.level == key.0 && c.component == key.1)
        });
        let Some((title, lines, _)) = idx.and_then(|i| detail::detail(&self.sources(), Tab::Tasks, i)) else {
            return;
        };
        if let Some(p) = &mut self.popup {
            p.title = title;
            p.kind = PopupKind::Detail(lines);
        }
        let max = self.popup_max_scroll();
        if let Some(p) = &mut self.popup {
            p.scroll = p.scroll.min(max);
        }
    }

    fn open_detail(&mut self) -> bool {
        if self.popup.is_some() {
            return false;
        }
        let Some(i) = self.selected_row() else {
            return false;
        };
        self.task_detail = match (self.tab, &self.engine) {
            (Tab::Tasks, Some(e)) => e.cells.get(i).map(|c| (c.level, c.component.clone())),
            _ => None,
        };
        let Some((title, lines, yaml)) = detail::detail(&self.sources(), self.tab, i) else {
            return false;
        };
        self.popup = Some(Popup {
            title,
            kind: PopupKind::Detail(lines),
            scroll: 0,
            yaml,
        });
        true
    }

    fn open_yaml(&mut self) -> bool {
        let from_popup = self.popup.as_ref().and_then(|p| p.yaml.clone());
        let yaml = match from_popup {
            Some(y) => Some(y),
            None if self.popup.is_none() => self
                .selected_row()
                .and_then(|i| detail::object_yaml(&self.sources(), self.tab, i)),
            None => None,
        };
        match yaml {
            Some((title, text)) => {
                self.popup = Some(Popup {
                    title,
                    kind: PopupKind::Yaml(text),
                    scroll: 0,
                    yaml: None,
                });
                true
            }
            None => {
                self.flash = Some((
                    tr!("app-no-yaml", "no object to show as YAML here").into(),
                    Level::Warn,
                ));
                true
            }
        }
    }
    /// What the detail and YAML popups read.
    fn sources(&self) -> Sources<'_> {
        Sources {
            dash: &self.dash,
            state: &self.state,
            engine: self.engine.as_ref(),
            now: self.now,
        }
    }

    /// Header height: one more line while the API is unreachable, so the error has its own
    /// line, and one more for the engine line when an engine is attached.
    pub(crate) fn header_rows(&self) -> u16 {
        layout::HEADER_ROWS
            + u16::from(super::model::feed::feed_error(&self.state.feed).is_some())
            + u16::from(self.engine.is_some())
    }

    /// The body split into the view and the event log pane.
    pub(crate) fn body_and_log(&self, body: Rect) -> (Rect, Rect) {
        let log = layout::log_rows(self.engine.is_some(), self.show_log, body.height);
        layout::split_v(body, body.height - log)
    }

    /// The area of the table whose selection the keys move, for a terminal of `area`.
    fn focused_table_area(&self, area: Rect) -> Rect {
        let body = self.body_and_log(layout::screen(area, self.header_rows()).body).0;
        match self.tab {
            Tab::Overview => {
                layout::overview(self.engine.is_some(), body, area.height, &self.dash).conditions
            }
            Tab::Nodes => layout::nodes_areas(body, &self.dash).1,
            Tab::Operators | Tab::History | Tab::Health | Tab::Tasks | Tab::Drift => body,
            Tab::Updates => layout::updates_areas(body, &self.dash).1,
        }
    }

    /// Inner (width, height) of the task graph panel on the current terminal.
    fn task_panel_inner(&self) -> (usize, usize) {
        let area = self.focused_table_area(Rect::new(0, 0, self.size.0, self.size.1));
        (
            usize::from(area.width.saturating_sub(2)),
            usize::from(area.height.saturating_sub(2)),
        )
    }

    /// The largest scroll offset that still fills the open popup (0 without one).
    pub(crate) fn popup_max_scroll(&self) -> usize {
        self.popup
            .as_ref()
            .map_or(0, |p| popup::max_scroll(p, &self.popup_inputs(), self.size))
    }
}
