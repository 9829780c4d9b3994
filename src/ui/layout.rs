//! Screen geometry: pure rectangle arithmetic shared by the state (page sizes, scroll limits)
//! and the render code (where each panel goes). Nothing here reads the app state: callers pass
//! what the layout depends on.

use ratatui::layout::Rect;

use super::model::Dashboard;

/// Header lines without the optional API-error and engine lines.
pub(crate) const HEADER_ROWS: u16 = 4;

/// Rows of the engine sync panel on the Overview.
pub(crate) const SYNC_ROWS: u16 = 4;

/// Height of the engine event log pane in a body of `body_h` rows (0 when hidden).
pub(crate) fn log_rows(engine: bool, show_log: bool, body_h: u16) -> u16 {
    if !engine || !show_log || body_h < 12 {
        return 0;
    }
    (body_h / 3).clamp(4, 10)
}

/// The Overview body split into the engine sync panel and the rest (the whole body, and an
/// empty panel, without an engine).
pub(crate) fn overview_body(engine: bool, body: Rect) -> (Rect, Rect) {
    if engine && body.height > SYNC_ROWS + 6 {
        split_v(body, SYNC_ROWS)
    } else {
        (Rect { height: 0, ..body }, body)
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

/// Overview: (completion, conditions, insights, pools); pools get space only when everything
/// else fits.
pub(crate) fn overview_areas(body: Rect, dash: &Dashboard) -> (Rect, Rect, Rect, Rect) {
    // Completion (gauge, duration and estimate) or "no update in progress", and the updates
    // line.
    let rows = if dash.no_data || dash.completion.is_some() {
        5
    } else {
        4
    };
    let (completion, rest) = split_v(body, rows);
    let want = u16::try_from(dash.conditions.len().max(1))
        .unwrap_or(u16::MAX)
        .saturating_add(3);
    let cond_h = if rest.height >= want + 4 {
        want
    } else if rest.height < 8 {
        rest.height
    } else {
        (rest.height * 2 / 3).min(want)
    };
    let (conditions, rest) = split_v(rest, cond_h);
    let ins_want = u16::try_from(dash.insights.len().max(1))
        .unwrap_or(u16::MAX)
        .saturating_add(3);
    let pools_want = u16::try_from(dash.pools.len())
        .unwrap_or(u16::MAX)
        .saturating_add(3);
    let pools_h = if dash.pools.is_empty() || rest.height < ins_want + pools_want {
        0
    } else {
        pools_want
    };
    let (insights, pools) = split_v(rest, rest.height - pools_h);
    (completion, conditions, insights, pools)
}

/// Nodes: (pools, nodes).
pub(crate) fn nodes_areas(body: Rect, dash: &Dashboard) -> (Rect, Rect) {
    let want = u16::try_from(dash.pools.len())
        .unwrap_or(u16::MAX)
        .saturating_add(3);
    let pools_h = want.min(body.height / 2).max(4.min(body.height));
    split_v(body, pools_h)
}

pub(crate) fn overview_hidden(body: Rect, dash: &Dashboard) -> Vec<&'static str> {
    let (_, _, insights, pools) = overview_areas(body, dash);
    let mut hidden = Vec::new();
    if pools.height < 3 && (!dash.pools.is_empty() || dash.no_data) {
        hidden.push("pools");
    }
    if insights.height < 3 {
        hidden.push("health");
    }
    hidden
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
