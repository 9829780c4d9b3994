//! The one key registry: dispatch, the help overlay and the footer hints all read
//! [`BINDINGS`], so help never drifts from behaviour.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::l10n::{Text, txt};

/// What the user is doing, which decides which bindings apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Browsing a view (no popup, no prompt).
    Normal,
    /// A popup (help, details, YAML) is open.
    Popup,
    /// Typing into the `/` filter or `:` command line.
    Prompt,
    /// The mode-switch confirm popup is open (only `y`/Enter, `n`/Esc and Ctrl-c apply).
    Confirm,
}

impl Mode {
    const fn bit(self) -> u8 {
        match self {
            Self::Normal => 1,
            Self::Popup => 2,
            Self::Prompt => 4,
            Self::Confirm => 8,
        }
    }
}

const N: u8 = 1;
const P: u8 = 2;
const I: u8 = 4;
const C: u8 = 8;

/// What a key does; the app turns it into an [`Action`](super::app::Action).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyAction {
    /// Quit from any mode.
    ForceQuit,
    /// Quit at the root; close a popup otherwise.
    Quit,
    /// Toggle the help overlay.
    Help,
    /// Open the `/` filter prompt.
    Filter,
    /// Open the `:` command line.
    Command,
    /// Back out: prompt, popup, filter.
    Back,
    /// Next row / scroll down.
    Down,
    /// Previous row / scroll up.
    Up,
    /// First row / top.
    Top,
    /// Last row / bottom.
    Bottom,
    /// One page down.
    PageDown,
    /// One page up.
    PageUp,
    /// Details of the selected row.
    Open,
    /// YAML of the selected object.
    Yaml,
    /// Sort by severity / back to API order.
    ToggleSort,
    /// Next view.
    NextTab,
    /// Previous view.
    PrevTab,
    /// Jump to view N (from the digit pressed).
    GotoTab,
    /// Run the command / keep the filter.
    Submit,
    /// Delete the character before the cursor.
    DeleteChar,
    /// Engine: open the confirm popup to switch watch-only ↔ active-apply.
    SwitchMode,
    /// Engine: ask for an apply pass now.
    ReconcileNow,
    /// Engine: show or hide the event log pane.
    ToggleLog,
    /// Confirm popup: do it.
    Confirm,
    /// Updates: choose a channel from those the current release lists.
    Channel,
    /// Updates: clear the requested update.
    ClearRequest,
    /// Updates: accept the selected conditional update's risks.
    AcceptRisks,
}

/// A key: code plus the modifiers that must be held (Shift is ignored for characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The key code.
    pub code: KeyCode,
    /// Required modifiers.
    pub mods: KeyModifiers,
}

const fn k(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}
const fn c(ch: char) -> Key {
    k(KeyCode::Char(ch))
}
const fn ctrl(ch: char) -> Key {
    Key {
        code: KeyCode::Char(ch),
        mods: KeyModifiers::CONTROL,
    }
}

impl Key {
    /// Whether a key event is this key.
    pub fn matches(&self, ev: &KeyEvent) -> bool {
        if self.code != ev.code {
            return false;
        }
        let relevant = ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
        relevant == self.mods & (KeyModifiers::CONTROL | KeyModifiers::ALT)
    }
}

/// One entry of the registry.
#[derive(Clone, Copy, Debug)]
pub struct KeyBinding {
    /// Keys that trigger it.
    pub keys: &'static [Key],
    /// How help and hints spell the keys.
    pub label: &'static str,
    /// What it does.
    pub desc: Text,
    /// Help section.
    pub section: Text,
    /// Modes it applies in (bit set of [`Mode`]).
    modes: u8,
    /// Shown in the footer hint bar.
    pub hint: bool,
    /// The word the hint bar shows.
    pub short: Text,
    /// The action.
    pub action: KeyAction,
    /// Only with an embedded engine (`cvo demo`): left out of dispatch, help and hints
    /// otherwise.
    pub engine_only: bool,
}

impl KeyBinding {
    /// Whether the binding applies in `mode`.
    pub const fn applies(&self, mode: Mode) -> bool {
        self.modes & mode.bit() != 0
    }
}

const fn b(
    keys: &'static [Key],
    label: &'static str,
    desc: Text,
    section: Text,
    modes: u8,
    hint: bool,
    action: KeyAction,
) -> KeyBinding {
    let short = match action {
        KeyAction::Quit => txt!("hint-quit", "quit"),
        KeyAction::Help => txt!("hint-help", "help"),
        KeyAction::Filter => txt!("hint-filter", "filter"),
        KeyAction::Command => txt!("hint-command", "command"),
        KeyAction::NextTab => txt!("hint-view", "view"),
        KeyAction::Open => txt!("hint-details", "details"),
        KeyAction::Yaml => txt!("hint-yaml", "yaml"),
        KeyAction::ToggleSort => txt!("hint-sort", "sort"),
        KeyAction::Submit => txt!("hint-apply", "apply"),
        KeyAction::Back => txt!("hint-cancel", "cancel"),
        KeyAction::SwitchMode => txt!("hint-mode", "mode"),
        KeyAction::ToggleLog => txt!("hint-log", "log"),
        KeyAction::Confirm => txt!("hint-confirm", "confirm"),
        KeyAction::Channel => txt!("hint-channel", "channel"),
        _ => Text::NONE,
    };
    KeyBinding {
        keys,
        label,
        desc,
        section,
        modes,
        hint,
        short,
        action,
        engine_only: false,
    }
}

/// [`b`] for a binding that exists only with an embedded engine.
const fn eb(
    keys: &'static [Key],
    label: &'static str,
    desc: Text,
    modes: u8,
    hint: bool,
    action: KeyAction,
) -> KeyBinding {
    let mut kb = b(
        keys,
        label,
        desc,
        txt!("keys-section-engine", "Engine (embedded: cvo demo, cvo tui)"),
        modes,
        hint,
        action,
    );
    kb.engine_only = true;
    kb
}

const DIGITS: [Key; 6] = [c('1'), c('2'), c('3'), c('4'), c('5'), c('6')];

/// Every key the dashboard understands, in help order.
pub const BINDINGS: &[KeyBinding] = &[
    b(
        &[ctrl('c')],
        "Ctrl-c",
        txt!("keys-quit-from-anywhere", "quit, from anywhere"),
        txt!("keys-section-general", "General"),
        N | P | I | C,
        false,
        KeyAction::ForceQuit,
    ),
    b(
        &[c('q')],
        "q",
        txt!("keys-quit-closes-a-popup-first", "quit (closes a popup first)"),
        txt!("keys-section-general", "General"),
        N | P,
        true,
        KeyAction::Quit,
    ),
    b(
        &[c('?')],
        "?",
        txt!("keys-toggle-this-help", "toggle this help"),
        txt!("keys-section-general", "General"),
        N | P,
        true,
        KeyAction::Help,
    ),
    b(
        &[c('/')],
        "/",
        txt!(
            "keys-filter-the-table-text-inverts",
            "filter the table (!text inverts; see Filtering)"
        ),
        txt!("keys-section-general", "General"),
        N,
        true,
        KeyAction::Filter,
    ),
    b(
        &[c(':')],
        ":",
        txt!(
            "keys-command-co-cv-nodes-history",
            "command: :co :cv :nodes :history :health :updates :q"
        ),
        txt!("keys-section-general", "General"),
        N,
        true,
        KeyAction::Command,
    ),
    b(
        &[k(KeyCode::Esc)],
        "Esc",
        txt!(
            "keys-back-close-popup-clear-filter",
            "back: close popup, clear filter"
        ),
        txt!("keys-section-general", "General"),
        N | P,
        false,
        KeyAction::Back,
    ),
    b(
        &[k(KeyCode::Tab), c('l')],
        "Tab/l",
        txt!("keys-next-view", "next view"),
        txt!("keys-section-views", "Views"),
        N,
        true,
        KeyAction::NextTab,
    ),
    b(
        &[k(KeyCode::BackTab), c('h')],
        "S-Tab/h",
        txt!("keys-previous-view", "previous view"),
        txt!("keys-section-views", "Views"),
        N,
        false,
        KeyAction::PrevTab,
    ),
    b(
        &DIGITS,
        "1-6",
        txt!(
            "keys-overview-operators-nodes-history-health",
            "overview, operators, nodes, history, health, updates"
        ),
        txt!("keys-section-views", "Views"),
        N,
        false,
        KeyAction::GotoTab,
    ),
    b(
        &[k(KeyCode::Enter)],
        "Enter",
        txt!(
            "keys-details-of-the-row-updates",
            "details of the row (Updates: request it, asks first)"
        ),
        txt!("keys-section-views", "Views"),
        N | P,
        true,
        KeyAction::Open,
    ),
    b(
        &[c('y')],
        "y",
        txt!("keys-yaml-of-the-selected-object", "YAML of the selected object"),
        txt!("keys-section-views", "Views"),
        N | P,
        true,
        KeyAction::Yaml,
    ),
    b(
        &[c('S')],
        "S",
        txt!(
            "keys-sort-by-severity-problems-first",
            "sort by severity (problems first) / back to API order"
        ),
        txt!("keys-section-views", "Views"),
        N,
        false,
        KeyAction::ToggleSort,
    ),
    b(
        &[c('j'), k(KeyCode::Down)],
        "j/↓",
        txt!("keys-next-row-scroll-down", "next row / scroll down"),
        txt!("keys-section-navigation", "Navigation"),
        N | P | C,
        false,
        KeyAction::Down,
    ),
    b(
        &[c('k'), k(KeyCode::Up)],
        "k/↑",
        txt!("keys-previous-row-scroll-up", "previous row / scroll up"),
        txt!("keys-section-navigation", "Navigation"),
        N | P | C,
        false,
        KeyAction::Up,
    ),
    b(
        &[c('g'), k(KeyCode::Home)],
        "g/Home",
        txt!("keys-first-row-top", "first row / top"),
        txt!("keys-section-navigation", "Navigation"),
        N | P,
        false,
        KeyAction::Top,
    ),
    b(
        &[c('G'), k(KeyCode::End)],
        "G/End",
        txt!("keys-last-row-bottom", "last row / bottom"),
        txt!("keys-section-navigation", "Navigation"),
        N | P,
        false,
        KeyAction::Bottom,
    ),
    b(
        &[k(KeyCode::PageDown)],
        "PgDn",
        txt!("keys-page-down", "page down"),
        txt!("keys-section-navigation", "Navigation"),
        N | P,
        false,
        KeyAction::PageDown,
    ),
    b(
        &[k(KeyCode::PageUp)],
        "PgUp",
        txt!("keys-page-up", "page up"),
        txt!("keys-section-navigation", "Navigation"),
        N | P,
        false,
        KeyAction::PageUp,
    ),
    b(
        &[k(KeyCode::Enter)],
        "Enter",
        txt!("keys-apply-filter-run-command", "apply filter / run command"),
        txt!("keys-section-prompt", "Prompt"),
        I,
        true,
        KeyAction::Submit,
    ),
    b(
        &[k(KeyCode::Esc)],
        "Esc",
        txt!("keys-cancel-clears-the-filter", "cancel (clears the filter)"),
        txt!("keys-section-prompt", "Prompt"),
        I,
        true,
        KeyAction::Back,
    ),
    b(
        &[k(KeyCode::Backspace)],
        "Backspace",
        txt!("keys-delete-a-character", "delete a character"),
        txt!("keys-section-prompt", "Prompt"),
        I,
        false,
        KeyAction::DeleteChar,
    ),
    b(
        &[c('c')],
        "c",
        txt!(
            "keys-change-the-channel-from-those",
            "change the channel, from those the release lists (asks first)"
        ),
        txt!("keys-section-updates", "Updates"),
        N,
        false,
        KeyAction::Channel,
    ),
    b(
        &[c('x')],
        "x",
        txt!(
            "keys-clear-the-requested-update-asks",
            "clear the requested update (asks first)"
        ),
        txt!("keys-section-updates", "Updates"),
        N,
        false,
        KeyAction::ClearRequest,
    ),
    b(
        &[c('a')],
        "a",
        txt!(
            "keys-accept-the-selected-update-s",
            "accept the selected update's risks (Updates; asks first)"
        ),
        txt!("keys-section-updates", "Updates"),
        N,
        false,
        KeyAction::AcceptRisks,
    ),
    b(
        &[c('y'), k(KeyCode::Enter)],
        "y/Enter",
        txt!(
            "keys-confirm-switch-the-mode-write",
            "confirm: switch the mode, write the request"
        ),
        txt!("keys-section-confirm-popups", "Confirm popups"),
        C,
        true,
        KeyAction::Confirm,
    ),
    b(
        &[c('n'), k(KeyCode::Esc), c('q')],
        "n/Esc",
        txt!(
            "keys-cancel-nothing-is-sent-or",
            "cancel: nothing is sent or written"
        ),
        txt!("keys-section-confirm-popups", "Confirm popups"),
        C,
        true,
        KeyAction::Back,
    ),
    eb(
        &[c('7'), c('8')],
        "7-8",
        txt!(
            "keys-task-graph-run-levels-components",
            "task graph (run levels × components), drift"
        ),
        N,
        false,
        KeyAction::GotoTab,
    ),
    eb(
        &[c('m')],
        "m",
        txt!(
            "keys-switch-watch-only-active-apply",
            "switch watch-only ↔ active-apply (asks first)"
        ),
        N,
        true,
        KeyAction::SwitchMode,
    ),
    eb(
        &[c('r')],
        "r",
        txt!(
            "keys-reconcile-now-ask-the-engine",
            "reconcile now: ask the engine for an apply pass"
        ),
        N,
        false,
        KeyAction::ReconcileNow,
    ),
    eb(
        &[c('e')],
        "e",
        txt!(
            "keys-show-hide-the-engine-event",
            "show / hide the engine event log"
        ),
        N,
        true,
        KeyAction::ToggleLog,
    ),
];

/// The binding a key event triggers in `mode`, if any; engine-only bindings count only when
/// `engine` is true.
pub fn lookup(mode: Mode, engine: bool, ev: &KeyEvent) -> Option<&'static KeyBinding> {
    BINDINGS
        .iter()
        .find(|b| b.applies(mode) && (engine || !b.engine_only) && b.keys.iter().any(|k| k.matches(ev)))
}

/// How `/` matches rows (shown in the help).
pub const FILTER_HELP: Text = txt!(
    "keys-filter-help",
    "Text matches what a row shows (name, version, status word, reason) \
    and its full message, ignoring case; a leading ! keeps the rows that do not match. On \
    Operators a status word typed alone (OK, PROG, PEND, DEGR, UNAV, NOUP, UNKN) matches the \
    STATUS column exactly: /!OK lists every operator that is not OK, even one whose message \
    contains \"ok\"."
);

/// The `:` commands: (aliases, description). `:q` is handled the same way as `q`.
pub const COMMANDS: &[(&[&str], Text)] = &[
    (&["q", "q!", "quit", "exit"], txt!("cmd-quit", "quit")),
    (
        &["cv", "clusterversion", "overview", "o"],
        txt!("cmd-overview", "overview: ClusterVersion, completion, conditions"),
    ),
    (
        &["co", "clusteroperators", "clusteroperator", "operators"],
        txt!("cmd-operators", "ClusterOperators"),
    ),
    (
        &["nodes", "node", "no", "mcp", "pools", "machineconfigpools"],
        txt!("cmd-nodes", "pools and nodes"),
    ),
    (&["history", "hist"], txt!("cmd-history", "update history")),
    (
        &["health", "insights"],
        txt!("cmd-health", "update-health insights"),
    ),
    (
        &["updates", "upgrade", "up"],
        txt!("cmd-updates", "update targets, channel and requests"),
    ),
    (&["help", "h"], txt!("cmd-help", "this help")),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn ctrl_c_applies_everywhere() {
        for m in [Mode::Normal, Mode::Popup, Mode::Prompt, Mode::Confirm] {
            let b = lookup(m, true, &ev(KeyCode::Char('c'), KeyModifiers::CONTROL));
            assert_eq!(b.map(|b| b.action), Some(KeyAction::ForceQuit), "{m:?}");
        }
    }

    #[test]
    fn plain_c_is_not_ctrl_c_and_shift_g_is_g() {
        let c = lookup(Mode::Normal, false, &ev(KeyCode::Char('c'), KeyModifiers::NONE));
        assert_eq!(c.map(|b| b.action), Some(KeyAction::Channel));
        let g = lookup(Mode::Normal, false, &ev(KeyCode::Char('G'), KeyModifiers::SHIFT));
        assert_eq!(g.map(|b| b.action), Some(KeyAction::Bottom));
    }

    #[test]
    fn prompt_mode_does_not_steal_letters() {
        assert!(lookup(Mode::Prompt, true, &ev(KeyCode::Char('q'), KeyModifiers::NONE)).is_none());
        assert!(lookup(Mode::Prompt, true, &ev(KeyCode::Char('j'), KeyModifiers::NONE)).is_none());
    }

    #[test]
    fn no_key_is_bound_twice_in_one_mode() {
        for m in [Mode::Normal, Mode::Popup, Mode::Prompt, Mode::Confirm] {
            let keys: Vec<Key> = BINDINGS
                .iter()
                .filter(|b| b.applies(m))
                .flat_map(|b| b.keys.iter().copied())
                .collect();
            for (i, a) in keys.iter().enumerate() {
                assert!(!keys[i + 1..].contains(a), "{a:?} bound twice in {m:?}");
            }
        }
    }

    #[test]
    fn engine_keys_need_an_engine() {
        let m = ev(KeyCode::Char('m'), KeyModifiers::NONE);
        assert!(lookup(Mode::Normal, false, &m).is_none());
        assert_eq!(
            lookup(Mode::Normal, true, &m).map(|b| b.action),
            Some(KeyAction::SwitchMode)
        );
        let seven = ev(KeyCode::Char('7'), KeyModifiers::NONE);
        assert!(lookup(Mode::Normal, false, &seven).is_none());
        // In the confirm popup `y` confirms (elsewhere in popups it shows YAML).
        let y = ev(KeyCode::Char('y'), KeyModifiers::NONE);
        assert_eq!(
            lookup(Mode::Confirm, true, &y).map(|b| b.action),
            Some(KeyAction::Confirm)
        );
        assert_eq!(
            lookup(Mode::Popup, true, &y).map(|b| b.action),
            Some(KeyAction::Yaml)
        );
    }
}
