//! Screen geometry: pure rectangle arithmetic shared by the state (page sizes, scroll limits)
//! and the render code (where each panel goes). Nothing here reads the app state: callers pass
//! what the layout depends on.

use ratatui::layout::Rect;

use super::model::Dashboard;

/// Header lines without the optional API-error and engine lines.
pub(crate) const HEADER_ROWS: u16 = 4;

/// Height of the engine event log pane in a body of `body_h` rows (0 when hidden).
pub(crate) fn log_rows(engine: bool, show_log: bool, body_h: u16) -> u16 {
    if !engine || !show_log || body_h < 12 {
        return 0;
    }
    (body_h / 3).clamp(4, 10)
}

/// Terminals shorter than this draw the Overview's panels with a top border only (title
/// line, no bottom border): one row per panel goes to content instead.
pub(crate) const COMPACT_BELOW_ROWS: u16 = 30;

/// Whether the Overview's panels are compact on a terminal `rows` high.
pub(crate) fn compact(rows: u16) -> bool {
    rows < COMPACT_BELOW_ROWS
}

/// Rows a panel spends on borders.
pub(crate) fn chrome(compact: bool) -> u16 {
    if compact { 1 } else { 2 }
}

/// Where each Overview panel goes, decided by priority so that a small terminal shows what an
/// administrator must see first: the engine's sync gauge, the control plane's completion,
/// the ClusterVersion conditions Failing, Progressing and Available (the model orders them
/// first), the worst update-health insight; then the other conditions, the other insights,
/// and the pools when all of them fit. A panel too small to show one row gets no space.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OverviewPlan {
    /// The engine sync panel (height 0 without an engine).
    pub sync: Rect,
    /// Control-plane completion, duration and estimate, and the updates line.
    pub completion: Rect,
    /// The ClusterVersion conditions table.
    pub conditions: Rect,
    /// The update-health summary (worst first).
    pub insights: Rect,
    /// The pools table.
    pub pools: Rect,
    /// The "more below" line (height 0 when nothing is hidden).
    pub hint: Rect,
    /// What does not fit: `pools`, `health` (some or all insights).
    pub hidden: Vec<&'static str>,
    /// Panels with a top border only ([`compact`]).
    pub compact: bool,
}

/// The Overview plan for a body `body` (below the tabs, above the footer) on a terminal `rows`
/// high.
pub(crate) fn overview(engine: bool, body: Rect, rows: u16, dash: &Dashboard) -> OverviewPlan {
    let compact = compact(rows);
    let first = plan(engine, body, dash, compact, false);
    if first.hidden.is_empty() || body.height < 2 {
        return first;
    }
    plan(engine, body, dash, compact, true)
}

fn plan(engine: bool, body: Rect, dash: &Dashboard, compact: bool, hint: bool) -> OverviewPlan {
    let ch = chrome(compact);
    let n = |len: usize| u16::try_from(len).unwrap_or(u16::MAX);
    let sync_want = if engine { 2 + ch } else { 0 };
    let comp_want = if dash.no_data || dash.completion.is_some() {
        3
    } else {
        2
    } + ch;
    let conds = n(dash.conditions.len().max(1));
    // Table panels: borders, the header row, the rows.
    let cond_want = conds.saturating_add(1 + ch);
    let cond_min = conds.min(3) + 1 + ch;
    let ins = n(dash.insights.len().max(1));
    let ins_want = ins.saturating_add(1 + ch);
    let ins_min = 2 + ch;
    let pools_want = if dash.pools.is_empty() {
        0
    } else {
        n(dash.pools.len()).saturating_add(1 + ch)
    };
    let mut left = body.height.saturating_sub(u16::from(hint));
    let sync_h = take(&mut left, sync_want, sync_want);
    let comp_h = take(&mut left, comp_want, 1 + ch);
    let mut cond_h = take(&mut left, cond_min, 2 + ch);
    let mut ins_h = take(&mut left, ins_min, ins_min);
    if cond_h > 0 {
        cond_h += take(&mut left, cond_want.saturating_sub(cond_h), 0);
    }
    if ins_h > 0 {
        ins_h += take(&mut left, ins_want.saturating_sub(ins_h), 0);
    }
    let pools_h = take(&mut left, pools_want, pools_want.max(1));
    // What is left goes to the insights (more rows of a long list), or else the conditions.
    let rest = left;
    if ins_h > 0 {
        ins_h += take(&mut left, rest, 0);
    } else if cond_h > 0 {
        cond_h += take(&mut left, rest, 0);
    }
    let mut hidden = Vec::new();
    if pools_h == 0 && (!dash.pools.is_empty() || dash.no_data) {
        hidden.push("pools");
    }
    if ins_h < ins_want {
        hidden.push("health");
    }
    let (sync, rest) = split_v(body, sync_h);
    let (completion, rest) = split_v(rest, comp_h);
    let (conditions, rest) = split_v(rest, cond_h);
    let (insights, rest) = split_v(rest, ins_h);
    let (pools, rest) = split_v(rest, pools_h);
    let hint_area = if hint && !hidden.is_empty() {
        Rect {
            y: body.bottom().saturating_sub(1),
            height: 1.min(body.height),
            ..body
        }
    } else {
        Rect { height: 0, ..rest }
    };
    OverviewPlan {
        sync,
        completion,
        conditions,
        insights,
        pools,
        hint: hint_area,
        hidden,
        compact,
    }
}

/// The screen's four bands.
pub(crate) struct Screen {
    /// Header lines.
    pub header: Rect,
    /// The tab line.
    pub tabs: Rect,
    /// The view in front (and the event log pane).
    pub body: Rect,
    /// Prompt, flash message or key hints.
    pub footer: Rect,
}

pub(crate) fn screen(area: Rect, header_rows: u16) -> Screen {
    let header = Rect {
        height: header_rows.min(area.height),
        ..area
    };
    let tabs = Rect {
        y: area.y + header_rows,
        height: 1,
        ..area
    };
    let footer = Rect {
        y: area.bottom().saturating_sub(1),
        height: 1,
        ..area
    };
    let body_y = area.y + header_rows + 1;
    let body = Rect {
        y: body_y,
        height: footer.y.saturating_sub(body_y),
        ..area
    };
    Screen {
        header,
        tabs,
        body,
        footer,
    }
}

/// `area` split after `first` rows (clamped to its height).
pub(crate) fn split_v(area: Rect, first: u16) -> (Rect, Rect) {
    let first = first.min(area.height);
    (
        Rect {
            height: first,
            ..area
        },
        Rect {
            y: area.y + first,
            height: area.height - first,
            ..area
        },
    )
}

/// Takes up to `want` of the `left` rows; none when fewer than `least` are left.
fn take(left: &mut u16, want: u16, least: u16) -> u16 {
    let got = want.min(*left);
    if got < least {
        return 0;
    }
    *left -= got;
    got
}

/// Nodes: (pools, nodes).
pub(crate) fn nodes_areas(body: Rect, dash: &Dashboard) -> (Rect, Rect) {
    let want = u16::try_from(dash.pools.len())
        .unwrap_or(u16::MAX)
        .saturating_add(3);
    let pools_h = want.min(body.height / 2).max(4.min(body.height));
    split_v(body, pools_h)
}

/// The popup's rectangle inside the screen.
pub(crate) fn popup_area(area: Rect, max_width: u16) -> Rect {
    let w = (area.width.saturating_mul(9) / 10)
        .max(area.width.min(40))
        .min(max_width.max(40));
    let h = (area.height.saturating_mul(8) / 10).max(area.height.min(10));
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Width of the labels of the Updates summary panel (`Requested  `).
pub(crate) const UPDATES_LABEL_W: usize = 11;

/// Lines of the Updates summary panel's notes wrapped to an inner width of `inner_w`.
pub(crate) fn updates_note_lines(dash: &Dashboard, inner_w: usize) -> usize {
    dash.updates
        .notes
        .iter()
        .map(|(n, _)| super::text::wrap(n, inner_w.max(8)).len())
        .sum()
}

/// Updates: (summary panel, targets table, risks of the selected target).
pub(crate) fn updates_areas(body: Rect, dash: &Dashboard) -> (Rect, Rect, Rect) {
    let notes = updates_note_lines(dash, usize::from(body.width.saturating_sub(2)));
    let want = u16::try_from(3 + notes).unwrap_or(u16::MAX).saturating_add(2);
    let sum_h = want.min(body.height / 2).max(5.min(body.height));
    let (summary, rest) = split_v(body, sum_h);
    let rows = u16::try_from(dash.updates.rows.len().max(1))
        .unwrap_or(u16::MAX)
        .saturating_add(3);
    let table_h = if rest.height >= rows + 6 {
        rows
    } else {
        (rest.height / 2).max(4.min(rest.height))
    };
    let (table, risks) = split_v(rest, table_h);
    (summary, table, risks)
}
