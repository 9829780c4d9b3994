//! The dashboard's state and its only mutator, [`App::update`] (The Elm Architecture): keys,
//! new cluster states, clock ticks and resizes come in as [`Action`]s; the view reads `&App`.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{
    keys::{self, KeyAction, Mode},
    model::Dashboard,
    text,
    theme::{Level, Palette},
    view,
};
use tokio::sync::mpsc;

use super::engine::EngineModel;
use crate::{
    assess::alerts::Alerts,
    cluster::ClusterState,
    reconcile::api::{Command, EngineMode, StatusSnapshot},
};

/// Terminal height from which the engine event log starts shown.
pub const LOG_AUTO_HEIGHT: u16 = 32;

/// The views, in tab order (`1`–`5`; `6`–`7` only with an embedded engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tab {
    /// Completion, ClusterVersion conditions, insights summary.
    #[default]
    Overview,
    /// The ClusterOperators table.
    Operators,
    /// Pools and nodes.
    Nodes,
    /// Update history.
    History,
    /// Update-health insights.
    Health,
    /// The engine's task graph: run levels as rows, components as cells.
    Tasks,
    /// The engine's drift records (what would change, or what changed).
    Drift,
}

impl Tab {
    /// All tabs in order.
    pub const ALL: [Tab; 7] = [
        Tab::Overview,
        Tab::Operators,
        Tab::Nodes,
        Tab::History,
        Tab::Health,
        Tab::Tasks,
        Tab::Drift,
    ];

    /// The tabs without an engine.
    pub const CLUSTER: [Tab; 5] = [
        Tab::Overview,
        Tab::Operators,
        Tab::Nodes,
        Tab::History,
        Tab::Health,
    ];

    /// Position in [`Tab::ALL`].
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    /// The tab's label.
    pub fn title(self) -> &'static str {
        match self {
            Tab::Overview => "Overview",
            Tab::Operators => "Operators",
            Tab::Nodes => "Nodes",
            Tab::History => "History",
            Tab::Health => "Health",
            Tab::Tasks => "Tasks",
            Tab::Drift => "Drift",
        }
    }
}

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

/// What a popup shows.
#[derive(Clone, Debug, PartialEq)]
pub enum PopupKind {
    /// The key help, generated from the key registry.
    Help,
    /// Details of a row: labelled values.
    Detail(Vec<DetailLine>),
    /// An object's YAML.
    Yaml(String),
    /// Confirm switching the engine to this mode.
    Confirm(EngineMode),
}

/// One labelled value of a detail popup (the value wraps; multi-line values keep their lines).
#[derive(Clone, Debug, PartialEq)]
pub struct DetailLine {
    /// Label (empty for a continuation or a section heading's body).
    pub label: String,
    /// Value.
    pub value: String,
    /// Severity for the value's style.
    pub level: Level,
}

impl DetailLine {
    fn new(label: impl Into<String>, value: impl Into<String>, level: Level) -> Self {
        Self {
            label: label.into(),
            value: value.into(),
            level,
        }
    }
    fn heading(title: impl Into<String>) -> Self {
        Self {
            label: String::new(),
            value: title.into(),
            level: Level::Unknown,
        }
    }
}

/// An open popup.
#[derive(Clone, Debug, PartialEq)]
pub struct Popup {
    /// Title.
    pub title: String,
    /// Content.
    pub kind: PopupKind,
    /// First visible line.
    pub scroll: usize,
    /// The object the popup is about, to offer its YAML with `y`.
    pub yaml: Option<(String, String)>,
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
    pub views: [TableView; 7],
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
        };
        app.update(Action::State(state));
        app
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
            self.flash = Some(("no engine to send commands to".into(), Level::Warn));
            return;
        };
        self.flash = Some(match tx.try_send(cmd) {
            Ok(()) => (
                format!("sent {text}; the outcome shows in the header"),
                Level::Info,
            ),
            Err(mpsc::error::TrySendError::Full(_)) => {
                (format!("engine busy: {text} not sent, try again"), Level::Warn)
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                (format!("engine stopped: {text} not sent"), Level::Error)
            }
        });
    }

    /// Which bindings apply now.
    pub fn mode(&self) -> Mode {
        if self.prompt.is_some() {
            Mode::Prompt
        } else if matches!(
            self.popup,
            Some(Popup {
                kind: PopupKind::Confirm(_),
                ..
            })
        ) {
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
            KeyAction::Open => Action::OpenDetail,
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
                        title: "help".into(),
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
                } else if self.fixed_now.is_none() && self.now == DateTime::<Utc>::default() {
                    self.now = Utc::now();
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
                self.clamp_all();
                self.refresh_task_detail();
            }
            Action::SwitchMode => {
                let Some(e) = &self.engine else { return false };
                let to = super::engine::other_mode(e.snap.mode);
                self.popup = Some(Popup {
                    title: format!("switch to {}?", super::engine::mode_word(to)),
                    kind: PopupKind::Confirm(to),
                    scroll: 0,
                    yaml: None,
                });
            }
            Action::Confirm => {
                let Some(Popup {
                    kind: PopupKind::Confirm(to),
                    ..
                }) = self.popup
                else {
                    return false;
                };
                self.popup = None;
                self.send(Command::SetMode(to));
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
        self.clamp_all();
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
            Some("help") => {
                self.popup = Some(Popup {
                    title: "help".into(),
                    kind: PopupKind::Help,
                    scroll: 0,
                    yaml: None,
                });
            }
            _ => {
                self.flash = Some((
                    format!("unknown command ':{}'; try :help", text::fit(cmd, 30)),
                    Level::Error,
                ));
            }
        }
    }

    /// Indexes of the rows of `tab` that pass its filter.
    pub fn visible_rows(&self, tab: Tab) -> Vec<usize> {
        let filter = &self.views[tab.index()].filter;
        let texts = view::row_texts(self, tab);
        let (invert, needle) = match filter.strip_prefix('!') {
            Some(rest) => (true, rest.to_lowercase()),
            None => (false, filter.to_lowercase()),
        };
        // A status word typed as the whole filter matches the STATUS column exactly: `/!OK`
        // must not hide a degraded operator whose message happens to contain "ok".
        let status_word = (tab == Tab::Operators)
            .then(|| {
                super::model::STATUS_WORDS
                    .iter()
                    .find(|(w, _)| w.eq_ignore_ascii_case(needle.trim()))
                    .map(|(w, _)| *w)
            })
            .flatten();
        let mut rows: Vec<usize> = texts
            .iter()
            .enumerate()
            .filter(|(i, t)| {
                if needle.is_empty() {
                    return true;
                }
                let hit = match status_word {
                    Some(w) => self.dash.operators.get(*i).is_some_and(|o| o.status == w),
                    None => t.to_lowercase().contains(&needle),
                };
                hit != invert
            })
            .map(|(i, _)| i)
            .collect();
        if self.views[tab.index()].by_severity {
            let levels = view::row_levels(self, tab);
            rows.sort_by_key(|&i| std::cmp::Reverse(levels.get(i).copied().unwrap_or_default()));
        }
        rows
    }

    /// Rows the focused table of the current view can show at once.
    pub fn page_rows(&self) -> usize {
        let (w, h) = self.size;
        usize::from(view::focused_table_rows(
            self,
            ratatui::layout::Rect::new(0, 0, w, h),
        ))
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
            let max = view::popup_max_scroll(self);
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
            let max = view::popup_max_scroll(self);
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
        let (w, h) = view::task_panel_inner(self);
        let lines = view::task_lines(self, w);
        let v = &mut self.views[Tab::Tasks.index()];
        v.selected = v.selected.min(n.saturating_sub(1));
        let sel = v.selected;
        let line = view::task_line_of(&lines, self, sel);
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
        let Some((title, lines, _)) = idx.and_then(|i| detail(self, Tab::Tasks, i)) else {
            return;
        };
        if let Some(p) = &mut self.popup {
            p.title = title;
            p.kind = PopupKind::Detail(lines);
        }
        let max = view::popup_max_scroll(self);
        if let Some(p) = &mut self.popup {
            p.scroll = p.scroll.min(max);
        }
    }

    fn open_detail(&mut self) -> bool {
        let Some(i) = self.selected_row() else {
            return false;
        };
        self.task_detail = match (self.tab, &self.engine) {
            (Tab::Tasks, Some(e)) => e.cells.get(i).map(|c| (c.level, c.component.clone())),
            _ => None,
        };
        let Some((title, lines, yaml)) = detail(self, self.tab, i) else {
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
            None if self.popup.is_none() => self.selected_row().and_then(|i| object_yaml(self, self.tab, i)),
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
                self.flash = Some(("no object to show as YAML here".into(), Level::Warn));
                true
            }
        }
    }
}

/// An object's YAML, starting with `apiVersion:` and `kind:` as `oc get -o yaml` prints it
/// (the typed objects do not always carry them).
fn to_yaml<T: serde::Serialize + k8s_openapi::Resource>(obj: &T) -> String {
    use serde_norway::{Mapping, Value};
    let value = match serde_norway::to_value(obj) {
        Ok(v) => v,
        Err(e) => return format!("# cannot render YAML: {e}"),
    };
    let value = match value {
        Value::Mapping(m) => {
            let mut out = Mapping::new();
            out.insert("apiVersion".into(), T::API_VERSION.into());
            out.insert("kind".into(), T::KIND.into());
            for (k, v) in m {
                if k.as_str() != Some("apiVersion") && k.as_str() != Some("kind") {
                    out.insert(k, v);
                }
            }
            Value::Mapping(out)
        }
        other => other,
    };
    serde_norway::to_string(&value).unwrap_or_else(|e| format!("# cannot render YAML: {e}"))
}

/// `(title, yaml)` of the object an insight is about: its first resource that is a node,
/// ClusterOperator, MachineConfigPool or the ClusterVersion.
fn insight_yaml(app: &App, i: usize) -> Option<(String, String)> {
    let s = &app.state;
    app.dash.insights.get(i)?.resources.iter().find_map(|r| {
        let (kind, name) = r.split_once(": ")?;
        let group = kind.split('.').next().unwrap_or(kind);
        match group {
            "nodes" => {
                let n = s
                    .nodes
                    .iter()
                    .find(|n| n.metadata.name.as_deref() == Some(name))?;
                Some((format!("node/{name} (yaml)"), to_yaml(n)))
            }
            "clusteroperators" => {
                let co = s.cluster_operators.iter().find(|c| c.name() == name)?;
                Some((format!("clusteroperator/{name} (yaml)"), to_yaml(co)))
            }
            "machineconfigpools" => {
                let p = s.machine_config_pools.iter().find(|p| p.name() == name)?;
                Some((format!("machineconfigpool/{name} (yaml)"), to_yaml(p)))
            }
            "clusterversions" => {
                let cv = s.cluster_version.as_ref()?;
                Some((format!("clusterversion/{name} (yaml)"), to_yaml(cv)))
            }
            _ => None,
        }
    })
}

/// `(title, yaml)` of the object behind row `i` of `tab`.
fn object_yaml(app: &App, tab: Tab, i: usize) -> Option<(String, String)> {
    let s = &app.state;
    match tab {
        Tab::Operators => {
            let name = &app.dash.operators.get(i)?.name;
            let co = s.cluster_operators.iter().find(|c| c.name() == name)?;
            Some((format!("clusteroperator/{name} (yaml)"), to_yaml(co)))
        }
        Tab::Nodes => {
            let name = &app.dash.nodes.get(i)?.name;
            let n = s
                .nodes
                .iter()
                .find(|n| n.metadata.name.as_deref() == Some(name))?;
            Some((format!("node/{name} (yaml)"), to_yaml(n)))
        }
        Tab::Health => insight_yaml(app, i),
        Tab::Overview | Tab::History => {
            let cv = s.cluster_version.as_ref()?;
            Some(("clusterversion/version (yaml)".into(), to_yaml(cv)))
        }
        Tab::Tasks => None,
        Tab::Drift => {
            // A create shows the object as it would be sent.
            let e = app.engine.as_ref()?;
            let row = e.drift.get(i)?;
            match &e.snap.drift.get(row.record)?.drift {
                crate::reconcile::api::Drift::Create { object } => Some((
                    format!("{} {} to create (yaml)", row.kind, row.object),
                    serde_norway::to_string(object).unwrap_or_else(|e| format!("# cannot render YAML: {e}")),
                )),
                _ => None,
            }
        }
    }
}

/// A detail popup's title, lines and the `(title, yaml)` of its object.
type Detail = (String, Vec<DetailLine>, Option<(String, String)>);

fn detail(app: &App, tab: Tab, i: usize) -> Option<Detail> {
    let d = &app.dash;
    let now = app.now;
    let yaml = object_yaml(app, tab, i);
    let mut l = Vec::new();
    let title = match tab {
        Tab::Overview => {
            let c = d.conditions.get(i)?;
            l.push(DetailLine::new("Type", &c.type_, Level::Info));
            l.push(DetailLine::new("Status", c.status.as_str(), c.level));
            l.push(DetailLine::new("Reason", &c.reason, Level::Info));
            l.push(DetailLine::new("Since", since(c.since, now), Level::Info));
            l.push(DetailLine::new("Message", &c.message, Level::Info));
            format!("clusterversion condition {}", c.type_)
        }
        Tab::Operators => {
            let row = d.operators.get(i)?;
            let co = app
                .state
                .cluster_operators
                .iter()
                .find(|c| c.name() == row.name)?;
            l.push(DetailLine::new("Name", &row.name, Level::Info));
            let status = format!(
                "{} ({}): {}",
                row.status,
                super::model::status_name(row.status),
                super::model::status_meaning(row.status)
            );
            l.push(DetailLine::new("Status", status, row.level));
            l.push(DetailLine::heading("Conditions"));
            for c in &co.status.conditions {
                let lvl = match (c.type_.as_str(), c.status) {
                    ("Degraded", crate::openshift::ConditionStatus::True)
                    | ("Available", crate::openshift::ConditionStatus::False) => Level::Error,
                    ("Progressing", crate::openshift::ConditionStatus::True) => Level::Warn,
                    ("Upgradeable", crate::openshift::ConditionStatus::False) => Level::Blocked,
                    _ => Level::Info,
                };
                let status = c.status.to_string();
                let since_v = format!("since {}", since(c.last_transition_time, now));
                let mut v = join_words(&[&status, c.reason(), &since_v]);
                if !c.message().is_empty() {
                    v.push('\n');
                    v.push_str(c.message());
                }
                l.push(DetailLine::new(&c.type_, v, lvl));
            }
            l.push(DetailLine::heading("Versions"));
            for v in &co.status.versions {
                l.push(DetailLine::new(&v.name, &v.version, Level::Info));
            }
            l.push(DetailLine::heading("Related objects"));
            for r in &co.status.related_objects {
                let kind = if r.group.is_empty() {
                    r.resource.clone()
                } else {
                    format!("{}.{}", r.resource, r.group)
                };
                let name = match &r.namespace {
                    Some(ns) if !ns.is_empty() => format!("{ns}/{}", r.name),
                    _ => r.name.clone(),
                };
                l.push(DetailLine::new(kind, name, Level::Info));
            }
            format!("clusteroperator/{}", row.name)
        }
        Tab::Nodes => {
            let n = d.nodes.get(i)?;
            l.push(DetailLine::new("Name", &n.name, Level::Info));
            l.push(DetailLine::new("Pool", &n.pool, Level::Info));
            l.push(DetailLine::new("Assessment", &n.assessment, n.level));
            l.push(DetailLine::new("Phase", &n.phase, Level::Info));
            l.push(DetailLine::new("Version", &n.version, Level::Info));
            l.push(DetailLine::new("Estimate", &n.estimate, Level::Info));
            l.push(DetailLine::new("Message", &n.message, n.level));
            if let Some(node) = app
                .state
                .nodes
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(&n.name))
            {
                l.push(DetailLine::heading("Machine config annotations"));
                for (k, v) in node.metadata.annotations.iter().flatten() {
                    if let Some(short) = k.strip_prefix(super::model::MCO_PREFIX) {
                        l.push(DetailLine::new(short, v, Level::Info));
                    }
                }
                l.push(DetailLine::heading("Conditions"));
                for c in node.status.iter().flat_map(|s| s.conditions.iter().flatten()) {
                    let head = join_words(&[&c.status, c.reason.as_deref().unwrap_or("")]);
                    let msg = c.message.as_deref().unwrap_or("").trim();
                    let v = if msg.is_empty() {
                        head
                    } else {
                        format!("{head}: {msg}")
                    };
                    l.push(DetailLine::new(&c.type_, v, Level::Info));
                }
            }
            format!("node/{}", n.name)
        }
        Tab::History => {
            let h = d.history.get(i)?;
            l.push(DetailLine::new("Version", &h.version, Level::Info));
            l.push(DetailLine::new("State", h.state, h.level));
            l.push(DetailLine::new(
                "Started",
                text::timestamp(h.started),
                Level::Info,
            ));
            l.push(DetailLine::new(
                "Completed",
                text::timestamp(h.completed),
                Level::Info,
            ));
            if h.started.is_some() {
                l.push(DetailLine::new(
                    "Duration",
                    view::history_duration(app, i, h),
                    Level::Info,
                ));
            }
            l.push(DetailLine::new(
                "Verified",
                if h.verified { "yes" } else { "no" },
                Level::Info,
            ));
            l.push(DetailLine::new("Image", &h.image, Level::Info));
            if !h.accepted_risks.is_empty() {
                l.push(DetailLine::new("Accepted risks", &h.accepted_risks, Level::Warn));
            }
            format!(
                "history {}",
                if h.version.is_empty() {
                    "(no version)"
                } else {
                    &h.version
                }
            )
        }
        Tab::Health => {
            let ins = d.insights.get(i)?;
            l.push(DetailLine::new("Message", &ins.message, ins.level));
            let since_v = match &ins.since_text {
                Some(t) if ins.since.is_some() => {
                    format!("{} ({t} ago)", text::timestamp(ins.since))
                }
                _ => since(ins.since, now),
            };
            l.push(DetailLine::new("Since", since_v, Level::Info));
            l.push(DetailLine::new("Level", &ins.level_word, ins.level));
            l.push(DetailLine::new("Impact", &ins.impact, Level::Info));
            if !ins.reference.is_empty() {
                l.push(DetailLine::new("Reference", &ins.reference, Level::Info));
            }
            l.push(DetailLine::new(
                "Resources",
                ins.resources.join("\n"),
                Level::Info,
            ));
            l.push(DetailLine::new("Description", &ins.description, Level::Info));
            "update health insight".into()
        }
        Tab::Tasks => {
            let e = app.engine.as_ref()?;
            let cell = e.cells.get(i)?;
            let lvl = cell.level_style();
            l.push(DetailLine::new(
                "Run level",
                super::engine::level_label(cell.level),
                Level::Info,
            ));
            l.push(DetailLine::new("Component", &cell.component, Level::Info));
            l.push(DetailLine::new("State", cell.state.word(), lvl));
            l.push(DetailLine::new(
                "Tasks",
                format!(
                    "{}/{} done, {} failed, {} skipped, {} running",
                    cell.done, cell.total, cell.failed, cell.skipped, cell.running
                ),
                Level::Info,
            ));
            let tasks: Vec<&crate::reconcile::api::TaskProgress> =
                cell.tasks.iter().filter_map(|&t| e.snap.tasks.get(t)).collect();
            let waiting = cell.state == super::engine::CellState::Waiting;
            if cell.failed > 0 {
                l.push(DetailLine::heading(if waiting {
                    "Waiting on (ClusterOperators still updating; not failing)"
                } else {
                    "Failed tasks"
                }));
                for t in &tasks {
                    if let crate::reconcile::api::TaskState::Failed(err) = &t.state {
                        let (word, lv) = if waiting {
                            ("waiting", Level::Warn)
                        } else {
                            ("failed", Level::Error)
                        };
                        l.push(DetailLine::new(word, format!("{}\n{err}", t.name), lv));
                    }
                }
            }
            l.push(DetailLine::heading("All tasks"));
            for t in &tasks {
                use crate::reconcile::api::TaskState as S;
                let (word, v, lv) = match &t.state {
                    S::Pending => ("pending", t.name.clone(), Level::Info),
                    S::Running => ("running", t.name.clone(), Level::Warn),
                    S::Done => ("done", t.name.clone(), Level::Ok),
                    S::Failed(_) => ("failed", t.name.clone(), Level::Error),
                    S::Skipped(why) => ("skipped", format!("{} ({why})", t.name), Level::Unknown),
                };
                l.push(DetailLine::new(word, v, lv));
            }
            format!(
                "run level {} · {}",
                super::engine::level_label(cell.level),
                cell.component
            )
        }
        Tab::Drift => {
            let e = app.engine.as_ref()?;
            let row = e.drift.get(i)?;
            l.push(DetailLine::new("Action", row.action, row.level));
            l.push(DetailLine::new("Kind", &row.kind, Level::Info));
            l.push(DetailLine::new("Object", &row.object, Level::Info));
            l.push(DetailLine::new("Task", &row.task, Level::Info));
            if !row.changes.is_empty() {
                l.push(DetailLine::heading("Field changes (path: old → new)"));
                for (n, (path, old, new)) in row.changes.iter().enumerate() {
                    l.push(DetailLine::new(
                        (n + 1).to_string(),
                        format!("{path}: {old} → {new}"),
                        Level::Warn,
                    ));
                }
            }
            format!("drift: {} {} {}", row.action, row.kind, row.object)
        }
    };
    Some((title, l, yaml))
}

/// Words joined by single spaces, empty (or blank) ones left out: no double spaces when a
/// condition has no reason.
fn join_words(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| w.trim())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn since(t: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    match t {
        Some(t) => format!("{} ({} ago)", text::timestamp(Some(t)), text::age(Some(t), now)),
        None => "-".into(),
    }
}
