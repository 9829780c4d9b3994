//! Rendering: pure functions of `&App` into a frame (no I/O, no await, no locks).
//!
//! The screen is a four-line header (source and feed, versions and channel, assessment
//! headline, progress and health), a tab line, the body of the view in front and a footer
//! (prompt, flash message or key hints from the key registry). Popups draw last. Every cell is
//! one line, fitted to its column with an ellipsis (field notes 28, 34).

use ratatui::{
    Frame,
    layout::{Constraint, Rect},
    style::{Modifier, Style},
    text::{Line, Span},
    widgets::{Block, Cell, Clear, Gauge, Paragraph, Row, Table, TableState},
};

use super::{
    app::{App, PopupKind, PromptKind, Tab},
    engine,
    keys::{BINDINGS, COMMANDS},
    model::{self, Dashboard},
    text,
    theme::{Level, Palette},
};
use crate::openshift::ConditionStatus;

/// Smallest terminal the dashboard lays out; below it one line says so (field note 35).
pub const MIN_WIDTH: u16 = 60;
/// Smallest terminal height.
pub const MIN_HEIGHT: u16 = 15;
const HEADER_ROWS: u16 = 4;

/// Header height: one more line while the API is unreachable, so the error has its own line,
/// and one more for the engine line when an engine is attached.
fn header_rows(app: &App) -> u16 {
    HEADER_ROWS + u16::from(feed_error(app).is_some()) + u16::from(app.engine.is_some())
}

/// Height of the engine event log pane in a body of `body_h` rows (0 when hidden).
fn log_rows(app: &App, body_h: u16) -> u16 {
    if app.engine.is_none() || !app.show_log || body_h < 12 {
        return 0;
    }
    (body_h / 3).clamp(4, 10)
}

/// The body split into the view and the event log pane.
fn body_and_log(app: &App, body: Rect) -> (Rect, Rect) {
    let log = log_rows(app, body.height);
    split_v(body, body.height - log)
}

/// Rows of the engine sync panel on the Overview.
const SYNC_ROWS: u16 = 4;

/// The Overview body below the engine sync panel (the whole body without an engine).
fn overview_body(app: &App, body: Rect) -> (Rect, Rect) {
    if app.engine.is_some() && body.height > SYNC_ROWS + 6 {
        split_v(body, SYNC_ROWS)
    } else {
        (Rect { height: 0, ..body }, body)
    }
}

fn feed_error(app: &App) -> Option<&crate::cluster::FeedError> {
    match &app.state.feed {
        crate::cluster::FeedStatus::Live { error: Some(e), .. } => Some(e),
        _ => None,
    }
}

/// The API error as one line: since when, for how long, and what failed.
fn feed_error_line(app: &App, e: &crate::cluster::FeedError) -> String {
    format!(
        "API unreachable since {} ({} ago): {}",
        e.since.format("%Y-%m-%d %H:%M:%S UTC"),
        text::age(Some(e.since), app.now),
        text::one_line(&e.message)
    )
}

/// While a live feed has no data: the long explanation (with the error and since when).
fn waiting_long(app: &App) -> Option<String> {
    if !app.dash.no_data {
        return None;
    }
    Some(match feed_error(app) {
        Some(e) => format!(
            "Cannot reach the API server since {} ({} ago): nothing is known about this cluster \
             yet (no data received). Error: {}",
            e.since.format("%Y-%m-%d %H:%M:%S UTC"),
            text::age(Some(e.since), app.now),
            text::one_line(&e.message)
        ),
        None => "No data yet: waiting for the first list of ClusterVersion, ClusterOperators, \
                 pools and nodes from the API server."
            .into(),
    })
}

/// While a live feed has no data: the short form for empty tables.
fn waiting_short(app: &App) -> Option<String> {
    if !app.dash.no_data {
        return None;
    }
    Some(match feed_error(app) {
        Some(e) => format!(
            "no data: cannot reach the API server (unreachable since {}, {} ago)",
            e.since.format("%H:%M:%S UTC"),
            text::age(Some(e.since), app.now)
        ),
        None => "no data yet: waiting for the API server (syncing…)".into(),
    })
}

/// Draws the whole screen.
pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let line = Line::styled(too_small_message(area.width, area.height), app.palette.warn);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let s = screen(area, header_rows(app));
    render_header(app, frame, s.header);
    render_tabs(app, frame, s.tabs);
    let (body, log) = body_and_log(app, s.body);
    match app.tab {
        Tab::Overview => render_overview(app, frame, body),
        Tab::Operators => render_operators(app, frame, body),
        Tab::Nodes => render_nodes(app, frame, body),
        Tab::History => render_history(app, frame, body),
        Tab::Health => render_insights(app, frame, body, true),
        Tab::Tasks => render_tasks(app, frame, body),
        Tab::Drift => render_drift(app, frame, body),
    }
    if log.height > 0 {
        render_log(app, frame, log);
    }
    render_footer(app, frame, s.footer);
    if app.popup.is_some() {
        render_popup(app, frame, area);
    }
}

/// The "terminal too small" line, in the longest form that fits `w` columns.
pub fn too_small_message(w: u16, h: u16) -> String {
    let forms = [
        format!("terminal too small: {w}x{h} (need {MIN_WIDTH}x{MIN_HEIGHT})"),
        format!("too small: {w}x{h}<{MIN_WIDTH}x{MIN_HEIGHT}"),
        format!("{w}x{h}<{MIN_WIDTH}x{MIN_HEIGHT}"),
    ];
    let w = usize::from(w);
    forms
        .iter()
        .find(|f| text::width(f) <= w)
        .cloned()
        .unwrap_or_else(|| text::fit(&forms[2], w))
}

struct Screen {
    header: Rect,
    tabs: Rect,
    body: Rect,
    footer: Rect,
}

fn screen(area: Rect, header_rows: u16) -> Screen {
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

fn split_v(area: Rect, first: u16) -> (Rect, Rect) {
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
fn overview_areas(body: Rect, dash: &Dashboard) -> (Rect, Rect, Rect, Rect) {
    let (completion, rest) = split_v(body, if dash.no_data { 5 } else { 4 });
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
fn nodes_areas(body: Rect, dash: &Dashboard) -> (Rect, Rect) {
    let want = u16::try_from(dash.pools.len())
        .unwrap_or(u16::MAX)
        .saturating_add(3);
    let pools_h = want.min(body.height / 2).max(4.min(body.height));
    split_v(body, pools_h)
}

/// The area of the table whose selection the keys move, for a terminal of `area`.
fn focused_table_area(app: &App, area: Rect) -> Rect {
    let body = body_and_log(app, screen(area, header_rows(app)).body).0;
    match app.tab {
        Tab::Overview => {
            let body = overview_body(app, body).1;
            let body = if overview_hidden(body, &app.dash).is_empty() || body.height <= 1 {
                body
            } else {
                split_v(body, body.height - 1).0
            };
            overview_areas(body, &app.dash).1
        }
        Tab::Nodes => nodes_areas(body, &app.dash).1,
        Tab::Operators | Tab::History | Tab::Health | Tab::Tasks | Tab::Drift => body,
    }
}

/// Inner (width, height) of the task graph panel on the current terminal.
pub fn task_panel_inner(app: &App) -> (usize, usize) {
    let area = focused_table_area(app, Rect::new(0, 0, app.size.0, app.size.1));
    (
        usize::from(area.width.saturating_sub(2)),
        usize::from(area.height.saturating_sub(2)),
    )
}

/// Rows of data the focused table shows at once (borders and header excluded).
pub fn focused_table_rows(app: &App, area: Rect) -> u16 {
    focused_table_area(app, area).height.saturating_sub(3)
}

/// The text of each row of `tab`'s table, for filtering.
pub fn row_texts(app: &App, tab: Tab) -> Vec<String> {
    let dash = &app.dash;
    match tab {
        Tab::Overview => dash
            .conditions
            .iter()
            .map(|c| format!("{} {} {} {}", c.type_, c.status, c.reason, c.message))
            .collect(),
        Tab::Operators => dash
            .operators
            .iter()
            .map(|o| format!("{} {} {} {} {}", o.status, o.name, o.version, o.reason, o.message))
            .collect(),
        Tab::Nodes => dash
            .nodes
            .iter()
            .map(|n| {
                format!(
                    "{} {} {} {} {} {}",
                    n.name, n.pool, n.assessment, n.phase, n.version, n.message
                )
            })
            .collect(),
        Tab::History => dash
            .history
            .iter()
            .map(|h| format!("{} {} {}", h.version, h.state, h.image))
            .collect(),
        Tab::Health => dash
            .insights
            .iter()
            .map(|i| format!("{} {} {} {}", i.level_word, i.impact, i.message, i.description))
            .collect(),
        Tab::Tasks => app.engine.as_ref().map_or_else(Vec::new, |e| {
            e.cells
                .iter()
                .map(|c| {
                    let errors: Vec<&str> = c
                        .tasks
                        .iter()
                        .filter_map(|&t| match e.snap.tasks.get(t).map(|t| &t.state) {
                            Some(crate::reconcile::api::TaskState::Failed(err)) => Some(err.as_str()),
                            _ => None,
                        })
                        .collect();
                    format!(
                        "{} {} {} {}",
                        engine::level_label(c.level),
                        c.label(),
                        c.state.word(),
                        errors.join(" ")
                    )
                })
                .collect()
        }),
        Tab::Drift => app.engine.as_ref().map_or_else(Vec::new, |e| {
            e.drift
                .iter()
                .map(|d| format!("{} {} {} {}", d.action, d.kind, d.object, d.summary(e.snap.mode)))
                .collect()
        }),
    }
}

/// The severity of each row of `tab`'s table, for sorting.
pub fn row_levels(app: &App, tab: Tab) -> Vec<Level> {
    let dash = &app.dash;
    match tab {
        Tab::Overview => dash.conditions.iter().map(|r| r.level).collect(),
        Tab::Operators => dash.operators.iter().map(|r| r.level).collect(),
        Tab::Nodes => dash.nodes.iter().map(|r| r.level).collect(),
        Tab::History => dash.history.iter().map(|r| r.level).collect(),
        Tab::Health => dash.insights.iter().map(|r| r.level).collect(),
        Tab::Tasks => app.engine.as_ref().map_or_else(Vec::new, |e| {
            e.cells.iter().map(engine::TaskCell::level_style).collect()
        }),
        Tab::Drift => app
            .engine
            .as_ref()
            .map_or_else(Vec::new, |e| e.drift.iter().map(|d| d.level).collect()),
    }
}

/// Spans fitted into `width` columns, the last one cut with an ellipsis.
fn fit_spans(spans: Vec<(String, Style)>, width: usize) -> Line<'static> {
    let mut out = Vec::new();
    let mut used = 0;
    for (t, style) in spans {
        let t = text::sanitize(&t);
        let w = text::width(&t);
        if used + w <= width {
            used += w;
            out.push(Span::styled(t, style));
        } else {
            let room = width.saturating_sub(used);
            if room > 0 {
                out.push(Span::styled(text::fit(&t, room), style));
            }
            break;
        }
    }
    Line::from(out)
}

fn render_header(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let d = &app.dash;
    let w = usize::from(area.width);
    let feed = match &app.state.feed {
        crate::cluster::FeedStatus::Static => {
            format!("{} as of {}", d.feed.0, app.now.format("%Y-%m-%d %H:%M:%S UTC"))
        }
        _ => d.feed.0.clone(),
    };
    let l1 = fit_spans(
        vec![
            ("cvo".into(), p.title),
            (" │ ".into(), p.muted),
            (d.source.clone(), p.text),
            (" │ ".into(), p.muted),
            (feed, p.level(d.feed.1)),
            match &app.engine {
                Some(_) => (" │ ".into(), p.muted),
                None => (" │ watch-only".into(), p.muted),
            },
        ]
        .into_iter()
        .chain(
            app.engine
                .as_ref()
                .map(|e| (engine::mode_word(e.snap.mode).to_string(), p.mode(e.snap.mode))),
        )
        .collect(),
        w,
    );
    let mut v = vec![("Version ".to_string(), p.muted)];
    match &d.current_version {
        Some(c) => v.push((c.clone(), p.text.add_modifier(Modifier::BOLD))),
        None if d.no_data => v.push(("unknown (no data yet)".into(), p.warn)),
        None => v.push(("no completed update".into(), p.warn)),
    }
    v.push(("  Target ".into(), p.muted));
    v.push((
        d.target_version.clone().unwrap_or_else(|| "-".into()),
        p.text.add_modifier(Modifier::BOLD),
    ));
    v.push(("  Channel ".into(), p.muted));
    v.push((d.channel.clone().unwrap_or_else(|| "-".into()), p.text));
    let l2 = fit_spans(v, w);
    let h = &d.headline;
    let mut l3 = Vec::new();
    if !h.label.is_empty() {
        l3.push((format!("{} ", h.label), p.muted));
    }
    l3.extend([
        (h.word.clone(), p.level(h.level).add_modifier(Modifier::BOLD)),
        ("  ".into(), p.text),
        (h.detail.clone(), p.text),
    ]);
    let l3 = fit_spans(l3, w);
    let mut l4 = Vec::new();
    if d.no_data {
        l4.push((
            "Operators, nodes and insights: unknown until the API server answers".into(),
            p.warn,
        ));
    }
    if !d.no_data
        && let Some(s) = &h.secondary
    {
        l4.push((format!("{s} · "), p.warn));
    }
    if !d.no_data {
        l4.push(("Operators ".into(), p.muted));
        l4.push((d.operator_health.clone(), p.text));
        let errors = d.insights.iter().filter(|i| i.level == Level::Error).count();
        l4.push((" · Insights ".into(), p.muted));
        let ins_style = if errors > 0 { p.err } else { p.text };
        let plural = if errors == 1 { "" } else { "s" };
        l4.push((
            format!("{} ({errors} error{plural})", d.insights.len()),
            ins_style,
        ));
    }
    let l4 = fit_spans(l4, w);
    let mut lines = vec![l1, l2, l3, l4];
    if let Some(e) = &app.engine {
        lines.push(engine_line(app, e, w));
    }
    if let Some(e) = feed_error(app) {
        lines.push(fit_spans(
            vec![(feed_error_line(app, e), p.err.add_modifier(Modifier::BOLD))],
            w,
        ));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// The engine line of the header: state, lease, last command (or engine error).
fn engine_line(app: &App, e: &engine::EngineModel, w: usize) -> Line<'static> {
    let p = &app.palette;
    let s = &e.snap;
    let mut v = vec![
        ("Engine ".to_string(), p.muted),
        (
            engine::state_word(&s.state),
            p.level(engine::state_level(&s.state))
                .add_modifier(Modifier::BOLD),
        ),
        ("  Lease ".into(), p.muted),
    ];
    match (&s.lease_holder, s.leader) {
        (_, true) => v.push((
            format!("{} (we lead)", s.lease_holder.as_deref().unwrap_or("us")),
            p.ok,
        )),
        (Some(h), false) => v.push((format!("{h} (not us)"), p.warn)),
        (None, false) => v.push(("none".into(), p.muted)),
    }
    if let Some(err) = &s.last_error {
        v.push(("  Error ".into(), p.muted));
        v.push((text::one_line(err), p.err));
    } else if let Some(c) = &s.last_command {
        v.push(("  Last command ".into(), p.muted));
        match &c.result {
            Ok(m) if m.is_empty() => v.push((format!("{}: ok", c.command), p.ok)),
            Ok(m) => v.push((format!("{}: {}", c.command, text::one_line(m)), p.ok)),
            Err(why) => v.push((format!("{} refused: {}", c.command, text::one_line(why)), p.err)),
        }
    }
    fit_spans(v, w)
}

fn render_tabs(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let d = &app.dash;
    let w = usize::from(area.width);
    // Full labels (` 1 Overview   2 Operators[33] ...`) when they fit; otherwise (seven tabs on
    // a narrow terminal) single spaces and the count of the tab in front only.
    let form = |compact: bool| -> Vec<(String, Style)> {
        let mut spans = Vec::new();
        for (i, t) in app.tabs().iter().enumerate() {
            let count = match t {
                _ if compact && *t != app.tab => String::new(),
                Tab::Overview => String::new(),
                Tab::Tasks => format!("[{}]", app.engine.as_ref().map_or(0, |e| e.cells.len())),
                Tab::Drift => format!("[{}]", app.engine.as_ref().map_or(0, |e| e.drift.len())),
                _ if d.no_data => "[?]".into(),
                Tab::Operators => format!("[{}]", d.operators.len()),
                Tab::Nodes => format!("[{}]", d.nodes.len()),
                Tab::History => format!("[{}]", d.history.len()),
                Tab::Health => format!("[{}]", d.insights.len()),
            };
            let label = if compact {
                format!("{} {}{count}", i + 1, t.title())
            } else {
                format!(" {} {}{count} ", i + 1, t.title())
            };
            let style = if *t == app.tab {
                p.title.add_modifier(Modifier::REVERSED)
            } else {
                p.text
            };
            spans.push((label, style));
            spans.push((" ".into(), p.text));
        }
        spans
    };
    let full = form(false);
    let width: usize = full.iter().map(|(t, _)| text::width(t)).sum();
    let spans = if width <= w + 1 { full } else { form(true) };
    frame.render_widget(Paragraph::new(fit_spans(spans, w)), area);
}

fn render_footer(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let w = usize::from(area.width);
    if let Some(prompt) = &app.prompt {
        let lead = match prompt.kind {
            PromptKind::Filter => "/",
            PromptKind::Command => ":",
        };
        let shown = text::sanitize(&prompt.text);
        // Keep the end of long input visible.
        let room = w.saturating_sub(2);
        let tail: String = {
            let mut acc = Vec::new();
            let mut used = 0;
            for c in shown.chars().rev() {
                used += text::char_width(c);
                if used > room {
                    break;
                }
                acc.push(c);
            }
            acc.into_iter().rev().collect()
        };
        let x = area.x + 1 + u16::try_from(text::width(&tail)).unwrap_or(0);
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled(lead, p.key),
                Span::styled(tail, p.text),
            ])),
            area,
        );
        frame.set_cursor_position((x.min(area.right().saturating_sub(1)), area.y));
        return;
    }
    if let Some((msg, level)) = &app.flash {
        frame.render_widget(
            Paragraph::new(fit_spans(vec![(msg.clone(), p.level(*level))], w)),
            area,
        );
        return;
    }
    let mode = app.mode();
    let mut spans = Vec::new();
    // `y` in a popup only works when the popup is about an object.
    let yaml_ok = app.popup.as_ref().is_none_or(|p| p.yaml.is_some());
    let engine = app.engine.is_some();
    let shown = BINDINGS.iter().filter(|b| {
        b.hint
            && b.applies(mode)
            && (engine || !b.engine_only)
            && (yaml_ok || b.action != super::keys::KeyAction::Yaml)
    });
    for b in shown {
        spans.push((b.label.to_string(), p.key));
        spans.push((format!(" {}  ", b.short), p.muted));
    }
    frame.render_widget(Paragraph::new(fit_spans(spans, w)), area);
}

/// A table column: header, width bounds, whether it takes the leftover space, whether it is
/// a key column that gets its full width first, and how early it is hidden on narrow
/// terminals (0 = never).
#[derive(Clone, Copy)]
struct Col {
    header: &'static str,
    min: u16,
    max: u16,
    fill: bool,
    key: bool,
    hide: u8,
}

const fn col(header: &'static str, min: u16, max: u16) -> Col {
    Col {
        header,
        min,
        max,
        fill: false,
        key: false,
        hide: 0,
    }
}
const fn fill(header: &'static str, min: u16) -> Col {
    Col {
        header,
        min,
        max: u16::MAX,
        fill: true,
        key: false,
        hide: 0,
    }
}
impl Col {
    const fn hide(mut self, order: u8) -> Self {
        self.hide = order;
        self
    }
    const fn key(mut self) -> Self {
        self.key = true;
        self
    }
    /// The width the column would like: its widest content or header, within its bounds.
    fn want(&self, content: usize) -> u16 {
        let w = content
            .max(text::width(self.header))
            .min(usize::from(self.max))
            .max(usize::from(self.min));
        u16::try_from(w).unwrap_or(u16::MAX)
    }
}

/// One table cell: text and an optional severity overriding the row's.
struct C(String, Option<Level>);

fn c(t: impl Into<String>) -> C {
    C(t.into(), None)
}

/// Column widths for `avail` columns of space; `None` hides a column.
///
/// Optional columns are hidden (highest `hide` first) until the minimum widths plus the full
/// width of key columns fit. Space then goes to key columns (up to their cap), then up to a
/// third of the row to the fill column, then to the other columns, then to key columns up to
/// their longest value (past the cap), and what is left to the fill column.
fn column_widths(cols: &[Col], content: &[usize], avail: u16) -> Vec<Option<u16>> {
    let avail = u32::from(avail);
    let mut shown: Vec<bool> = vec![true; cols.len()];
    let need = |shown: &[bool], with_keys: bool| -> u32 {
        let n = u32::try_from(shown.iter().filter(|s| **s).count()).unwrap_or(u32::MAX);
        let widths: u32 = cols
            .iter()
            .enumerate()
            .filter(|(i, _)| shown[*i])
            .map(|(i, c)| {
                u32::from(if with_keys && c.key {
                    c.want(content[i])
                } else {
                    c.min
                })
            })
            .sum();
        widths + n.saturating_sub(1)
    };
    while need(&shown, true) > avail {
        let victim = cols
            .iter()
            .enumerate()
            .filter(|(i, c)| shown[*i] && c.hide > 0)
            .min_by_key(|(_, c)| c.hide)
            .map(|(i, _)| i);
        match victim {
            Some(i) => shown[i] = false,
            None => break,
        }
    }
    let mut widths: Vec<Option<u16>> = cols.iter().zip(&shown).map(|(c, s)| s.then_some(c.min)).collect();
    let mut extra = avail.saturating_sub(need(&shown, false));
    let mut grow = |widths: &mut Vec<Option<u16>>, i: usize, target: u16| {
        if let Some(w) = widths[i] {
            let add = u32::from(target.saturating_sub(w)).min(extra);
            extra -= add;
            widths[i] = Some(w.saturating_add(u16::try_from(add).unwrap_or(0)));
        }
    };
    for (i, col) in cols.iter().enumerate().filter(|(_, c)| c.key && !c.fill) {
        grow(&mut widths, i, col.want(content[i]));
    }
    let fill_i = cols
        .iter()
        .enumerate()
        .position(|(i, c)| c.fill && widths[i].is_some());
    if let Some(i) = fill_i {
        let third = u16::try_from(avail / 3).unwrap_or(u16::MAX);
        grow(&mut widths, i, cols[i].want(content[i]).min(third));
    }
    for (i, col) in cols.iter().enumerate().filter(|(_, c)| !c.key && !c.fill) {
        grow(&mut widths, i, col.want(content[i]));
    }
    // With room to spare (the fill column has its third), key columns show their longest
    // value in full, past their usual cap: wide screens never cut names.
    for (i, col) in cols.iter().enumerate().filter(|(_, c)| c.key && !c.fill) {
        let full = content[i].max(text::width(col.header));
        grow(&mut widths, i, u16::try_from(full).unwrap_or(u16::MAX));
    }
    if let Some(i) = fill_i {
        grow(&mut widths, i, u16::MAX);
    }
    widths
}

struct TableSpec<'a> {
    title: String,
    cols: &'a [Col],
    rows: Vec<(Vec<C>, Level)>,
    /// Indexes of the rows to show (filtered), in order.
    visible: Vec<usize>,
    /// Selection and offset, when the table is focused.
    cursor: Option<(usize, usize)>,
    empty: &'a str,
    /// Full text of the selected row, shown in the bottom border of a focused table.
    preview: Option<String>,
}

fn row_style(p: &Palette, level: Level) -> Style {
    match level {
        Level::Ok | Level::Info => p.text,
        other => p.level(other),
    }
}

fn render_table(app: &App, frame: &mut Frame, area: Rect, spec: TableSpec<'_>) {
    let p = &app.palette;
    let focused = spec.cursor.is_some();
    let block = Block::bordered()
        .border_style(if focused {
            p.title.remove_modifier(Modifier::BOLD)
        } else {
            p.border
        })
        .title(Line::styled(
            text::fit(&spec.title, usize::from(area.width.saturating_sub(4))),
            p.title,
        ));
    let preview = spec
        .preview
        .as_deref()
        .filter(|t| focused && !t.trim().is_empty());
    let block = match preview {
        Some(t) => {
            let joined: Vec<&str> = t.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            let text = format!(" ↳ {} ", joined.join(" ⏎ "));
            block.title_bottom(Line::styled(
                text::fit(&text, usize::from(area.width.saturating_sub(4))),
                p.muted,
            ))
        }
        None => block,
    };
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let mut content = vec![0usize; spec.cols.len()];
    for &i in &spec.visible {
        for (j, cell) in spec.rows[i].0.iter().enumerate().take(content.len()) {
            content[j] = content[j].max(text::width(&text::sanitize(&cell.0)));
        }
    }
    let widths = column_widths(spec.cols, &content, inner.width);
    let header = Row::new(
        spec.cols
            .iter()
            .zip(&widths)
            .filter_map(|(c, w)| w.map(|w| Cell::from(text::fit(c.header, usize::from(w))))),
    )
    .style(p.header);
    if spec.visible.is_empty() {
        let msg = if let Some(w) = waiting_short(app) {
            w
        } else if app.view().filter.is_empty() || !focused {
            spec.empty.to_owned()
        } else {
            format!("no rows match the filter '{}' (Esc clears it)", app.view().filter)
        };
        let (hdr, rest) = split_v(inner, 1);
        let widths_c: Vec<Constraint> = widths.iter().flatten().map(|w| Constraint::Length(*w)).collect();
        frame.render_widget(
            Table::new(Vec::<Row>::new(), widths_c)
                .header(header)
                .column_spacing(1),
            hdr,
        );
        frame.render_widget(
            Paragraph::new(Line::styled(text::fit(&msg, usize::from(inner.width)), p.muted)),
            rest,
        );
        return;
    }
    let rows: Vec<Row> = spec
        .visible
        .iter()
        .map(|&i| {
            let (cells, level) = &spec.rows[i];
            let style = row_style(p, *level);
            let cells = cells.iter().zip(&widths).filter_map(|(cell, w)| {
                let w = (*w)?;
                let t = text::fit(&cell.0, usize::from(w));
                Some(match cell.1 {
                    Some(l) => Cell::from(Span::styled(t, p.level(l))),
                    None => Cell::from(t),
                })
            });
            Row::new(cells).style(style).height(1)
        })
        .collect();
    let constraints: Vec<Constraint> = widths.iter().flatten().map(|w| Constraint::Length(*w)).collect();
    let table = Table::new(rows, constraints)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(p.selected);
    let mut state = TableState::default();
    if let Some((sel, off)) = spec.cursor {
        state = state.with_offset(off).with_selected(Some(sel));
    }
    frame.render_stateful_widget(table, inner, &mut state);
}

fn cond_word(s: Option<ConditionStatus>) -> &'static str {
    match s {
        Some(ConditionStatus::True) => "True",
        Some(ConditionStatus::False) => "False",
        Some(ConditionStatus::Unknown) => "Unkn",
        None => "-",
    }
}

fn cursor(app: &App, tab: Tab) -> Option<(usize, usize)> {
    (app.tab == tab).then(|| {
        let v = &app.views[tab.index()];
        (v.selected, v.offset)
    })
}

fn filter_title(app: &App, tab: Tab, name: &str, total: usize, shown: usize) -> String {
    let v = &app.views[tab.index()];
    let sort = if v.by_severity { " ↓severity" } else { "" };
    if app.dash.no_data {
        format!(" {name}[?] ")
    } else if v.filter.is_empty() {
        format!(" {name}[{total}]{sort} ")
    } else {
        format!(" {name}[{shown}/{total}] </{}>{sort} ", v.filter)
    }
}

/// What the Overview cannot show at this height (`pools`, `health`), to say so.
fn overview_hidden(body: Rect, dash: &Dashboard) -> Vec<&'static str> {
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

fn render_overview(app: &App, frame: &mut Frame, body: Rect) {
    let (sync, mut body) = overview_body(app, body);
    if sync.height > 0 {
        render_sync(app, frame, sync);
    }
    if !overview_hidden(body, &app.dash).is_empty() && body.height > 1 {
        // One line says what is below the fold and how to see it.
        let (rest, hint_area) = split_v(body, body.height - 1);
        body = rest;
        let hidden = overview_hidden(body, &app.dash);
        let keys: Vec<&str> = hidden
            .iter()
            .map(|h| if *h == "pools" { "3" } else { "5" })
            .collect();
        let msg = format!(
            "more below: {} — enlarge or press {}",
            hidden.join(", "),
            keys.join("/")
        );
        frame.render_widget(
            Paragraph::new(fit_spans(vec![(msg, app.palette.warn)], usize::from(body.width))),
            hint_area,
        );
    }
    let (completion, conditions, insights, pools) = overview_areas(body, &app.dash);
    render_completion(app, frame, completion);
    const COLS: [Col; 5] = [
        col("TYPE", 8, 22).key(),
        col("STATUS", 7, 7),
        col("REASON", 6, 28).hide(2),
        col("SINCE", 5, 7).hide(1),
        fill("MESSAGE", 10),
    ];
    let d = &app.dash;
    let rows = d
        .conditions
        .iter()
        .map(|r| {
            let status_level = if r.level == Level::Ok {
                Some(Level::Ok)
            } else {
                None
            };
            (
                vec![
                    c(&r.type_),
                    C(r.status.as_str().into(), status_level),
                    c(if r.reason.is_empty() { "-" } else { &r.reason }),
                    c(text::age(r.since, app.now)),
                    c(text::one_line(&r.message)),
                ],
                r.level,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::Overview);
    let title = filter_title(
        app,
        Tab::Overview,
        "clusterversion conditions",
        d.conditions.len(),
        visible.len(),
    );
    render_table(
        app,
        frame,
        conditions,
        TableSpec {
            title,
            cols: &COLS,
            rows,
            visible,
            cursor: cursor(app, Tab::Overview),
            empty: "no ClusterVersion conditions",
            preview: app
                .selected_row()
                .and_then(|i| d.conditions.get(i))
                .map(|r| r.message.clone()),
        },
    );
    if insights.height >= 3 {
        render_insights(app, frame, insights, false);
    }
    if pools.height >= 3 {
        render_pools(app, frame, pools, " (3 for nodes)");
    }
}

fn render_completion(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let d = &app.dash;
    let block = Block::bordered()
        .border_style(p.border)
        .title(Line::styled(" control plane ", p.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let (gauge_area, info_area) = split_v(inner, 1);
    let w = usize::from(inner.width);
    if let Some(msg) = waiting_long(app) {
        let style = if feed_error(app).is_some() { p.err } else { p.warn };
        let lines: Vec<Line> = text::wrap(&msg, w)
            .into_iter()
            .take(usize::from(inner.height))
            .map(|l| Line::styled(l, style))
            .collect();
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    match &d.completion {
        Some(comp) => {
            let label = format!(
                "{} ({} of {} operators updated, {} updating, {} waiting)",
                model::percent_label(comp.ratio),
                comp.updated,
                comp.total,
                comp.updating,
                comp.waiting
            );
            let gauge = Gauge::default()
                .ratio(model::clamp_ratio(comp.ratio))
                .label(Span::styled(
                    text::fit(&label, w),
                    p.text.add_modifier(Modifier::BOLD),
                ))
                .gauge_style(p.gauge)
                .use_unicode(true);
            frame.render_widget(gauge, gauge_area);
            let mut spans = Vec::new();
            if let Some(dur) = &comp.duration {
                spans.push(("Duration ".into(), p.muted));
                spans.push((format!("{dur}  "), p.text));
            }
            spans.push(("Est. time remaining ".into(), p.muted));
            spans.push((comp.estimate.clone(), p.text));
            frame.render_widget(Paragraph::new(fit_spans(spans, w)), info_area);
        }
        None => {
            let msg = match &d.current_version {
                Some(v) => format!("No update in progress: the cluster runs {v}."),
                None => "No update in progress and no completed update in history.".into(),
            };
            frame.render_widget(Paragraph::new(fit_spans(vec![(msg, p.ok)], w)), gauge_area);
        }
    }
}

fn render_insights(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
    const COLS: [Col; 4] = [
        col("LEVEL", 7, 8),
        col("SINCE", 5, 9).hide(1),
        col("IMPACT", 8, 18).hide(2),
        fill("MESSAGE", 12),
    ];
    let d = &app.dash;
    let rows = d
        .insights
        .iter()
        .map(|i| {
            (
                vec![
                    C(i.level_word.clone(), Some(i.level)),
                    c(i.since_text
                        .clone()
                        .unwrap_or_else(|| text::age(i.since, app.now))),
                    c(&i.impact),
                    c(text::one_line(&i.message)),
                ],
                if i.level == Level::Error {
                    Level::Error
                } else {
                    Level::Info
                },
            )
        })
        .collect();
    let visible = if focused {
        app.visible_rows(Tab::Health)
    } else {
        (0..d.insights.len()).collect()
    };
    let title = if focused {
        filter_title(app, Tab::Health, "update health", d.insights.len(), visible.len())
    } else {
        let n = if d.no_data {
            "?".into()
        } else {
            d.insights.len().to_string()
        };
        format!(" update health[{n}] (5 for details) ")
    };
    render_table(
        app,
        frame,
        area,
        TableSpec {
            title,
            cols: &COLS,
            rows,
            visible,
            cursor: if focused { cursor(app, Tab::Health) } else { None },
            empty: "no update-health insights: nothing needs attention",
            preview: if focused {
                app.selected_row()
                    .and_then(|i| d.insights.get(i))
                    .map(|r| r.description.clone())
            } else {
                None
            },
        },
    );
}

fn render_operators(app: &App, frame: &mut Frame, body: Rect) {
    const COLS: [Col; 9] = [
        col("STATUS", 6, 6),
        col("NAME", 12, 30).key(),
        col("VERSION", 7, 24),
        col("AVAIL", 5, 5),
        col("PROG", 5, 5),
        col("DEGR", 5, 5),
        col("UPGR", 5, 5).hide(2),
        col("SINCE", 5, 7).hide(1),
        fill("MESSAGE", 12).hide(3),
    ];
    let d = &app.dash;
    let cond_cell = |s: Option<ConditionStatus>, bad: ConditionStatus, lvl: Level| {
        C(cond_word(s).into(), (s == Some(bad)).then_some(lvl))
    };
    let rows = d
        .operators
        .iter()
        .map(|o| {
            let msg = if o.reason.is_empty() || o.message.is_empty() {
                text::one_line(&o.message)
            } else {
                format!("{}: {}", o.reason, text::one_line(&o.message))
            };
            (
                vec![
                    C(o.status.into(), Some(o.level)),
                    c(&o.name),
                    C(
                        if o.version.is_empty() {
                            "-".into()
                        } else {
                            o.version.clone()
                        },
                        (!o.at_target).then_some(Level::Warn),
                    ),
                    cond_cell(o.available, ConditionStatus::False, Level::Error),
                    cond_cell(o.progressing, ConditionStatus::True, Level::Warn),
                    cond_cell(o.degraded, ConditionStatus::True, Level::Error),
                    cond_cell(o.upgradeable, ConditionStatus::False, Level::Blocked),
                    c(text::age(o.since, app.now)),
                    c(msg),
                ],
                o.level,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::Operators);
    let title = filter_title(
        app,
        Tab::Operators,
        "clusteroperators",
        d.operators.len(),
        visible.len(),
    );
    render_table(
        app,
        frame,
        body,
        TableSpec {
            title,
            cols: &COLS,
            rows,
            visible,
            cursor: cursor(app, Tab::Operators),
            empty: "no ClusterOperators",
            preview: app
                .selected_row()
                .and_then(|i| d.operators.get(i))
                .map(|r| r.message.clone()),
        },
    );
}

fn render_nodes(app: &App, frame: &mut Frame, body: Rect) {
    let (pools_area, nodes_area) = nodes_areas(body, &app.dash);
    render_pools(app, frame, pools_area, "");
    let d = &app.dash;
    const COLS: [Col; 7] = [
        col("NAME", 12, 45).key(),
        col("POOL", 6, 12).hide(2),
        col("ASSESSMENT", 11, 11),
        col("PHASE", 9, 9).hide(3),
        col("VERSION", 7, 20),
        col("EST", 4, 5).hide(1),
        fill("MESSAGE", 10).hide(4),
    ];
    let rows = d
        .nodes
        .iter()
        .map(|n| {
            (
                vec![
                    c(&n.name),
                    c(&n.pool),
                    C(n.assessment.clone(), Some(n.level)),
                    c(&n.phase),
                    c(&n.version),
                    c(&n.estimate),
                    c(text::one_line(&n.message)),
                ],
                n.level,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::Nodes);
    let title = filter_title(app, Tab::Nodes, "nodes", d.nodes.len(), visible.len());
    render_table(
        app,
        frame,
        nodes_area,
        TableSpec {
            title,
            cols: &COLS,
            rows,
            visible,
            cursor: cursor(app, Tab::Nodes),
            empty: "no nodes",
            preview: app
                .selected_row()
                .and_then(|i| d.nodes.get(i))
                .map(|r| r.message.clone()),
        },
    );
}

fn render_pools(app: &App, frame: &mut Frame, area: Rect, note: &str) {
    const POOL_COLS: [Col; 4] = [
        col("POOL", 6, 24),
        col("ASSESSMENT", 11, 11),
        col("COMPLETION", 10, 14),
        fill("STATUS", 10),
    ];
    let d = &app.dash;
    let pool_rows: Vec<(Vec<C>, Level)> = d
        .pools
        .iter()
        .map(|pr| {
            #[allow(clippy::cast_precision_loss)]
            let pct = if pr.total == 0 {
                0.0
            } else {
                pr.updated as f64 / pr.total as f64
            };
            let completion = if pr.total == 0 {
                "-".into()
            } else {
                format!(
                    "{:.0}% ({}/{})",
                    model::clamp_ratio(pct) * 100.0,
                    pr.updated,
                    pr.total
                )
            };
            (
                vec![
                    c(&pr.name),
                    C(pr.assessment.clone(), Some(pr.level)),
                    c(completion),
                    c(&pr.status),
                ],
                pr.level,
            )
        })
        .collect();
    render_table(
        app,
        frame,
        area,
        TableSpec {
            title: if d.no_data {
                format!(" machineconfigpools[?]{note} ")
            } else {
                format!(" machineconfigpools[{}]{note} ", d.pools.len())
            },
            cols: &POOL_COLS,
            visible: (0..pool_rows.len()).collect(),
            rows: pool_rows,
            cursor: None,
            empty: "no MachineConfigPools",
            preview: None,
        },
    );
}

/// How long history entry `i` took; for the update in progress, the assessment's duration
/// (the value the Overview and `cvo status` show).
pub fn history_duration(app: &App, i: usize, h: &model::HistoryRow) -> String {
    if i == 0
        && h.completed.is_none()
        && let Some(d) = app.dash.completion.as_ref().and_then(|c| c.duration.clone())
    {
        return d;
    }
    let end = h.completed.or((i == 0).then_some(app.now));
    match (h.started, end) {
        (Some(s), Some(e)) => text::duration(e - s),
        _ => "-".into(),
    }
}

fn render_history(app: &App, frame: &mut Frame, body: Rect) {
    const COLS: [Col; 7] = [
        col("VERSION", 7, 24),
        col("STATE", 9, 9),
        col("STARTED", 16, 16),
        col("COMPLETED", 16, 16).hide(2),
        col("DURATION", 8, 8).hide(1),
        col("VERIFIED", 8, 8).hide(3),
        fill("IMAGE", 10).hide(4),
    ];
    let d = &app.dash;
    let rows = d
        .history
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let completed = match (h.completed, i) {
                (None, 0) => "in progress".into(),
                (t, _) => text::timestamp(t),
            };
            let dur = history_duration(app, i, h);
            (
                vec![
                    c(if h.version.is_empty() { "-" } else { &h.version }),
                    C(h.state.into(), Some(h.level)),
                    c(text::timestamp(h.started)),
                    c(completed),
                    c(dur),
                    C(
                        if h.verified { "yes" } else { "no" }.into(),
                        (!h.verified).then_some(Level::Warn),
                    ),
                    c(&h.image),
                ],
                Level::Info,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::History);
    let title = filter_title(app, Tab::History, "history", d.history.len(), visible.len());
    render_table(
        app,
        frame,
        body,
        TableSpec {
            title,
            cols: &COLS,
            rows,
            visible,
            cursor: cursor(app, Tab::History),
            empty: "no update history (the ClusterVersion reports none)",
            preview: app
                .selected_row()
                .and_then(|i| d.history.get(i))
                .map(|r| r.image.clone()),
        },
    );
}

/// The confirm popup's rectangle: just high enough for its text.
fn confirm_area(app: &App, area: Rect) -> Rect {
    let w = area.width.saturating_sub(4).min(64);
    let inner_w = usize::from(w.saturating_sub(2));
    let lines = u16::try_from(popup_lines(app, inner_w).len()).unwrap_or(u16::MAX);
    let h = lines.saturating_add(2).min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// The popup's rectangle inside the screen.
fn popup_area(area: Rect, max_width: u16) -> Rect {
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

/// Help is narrow text; details and YAML use the width they get.
fn popup_max_width(app: &App) -> u16 {
    match app.popup.as_ref().map(|p| &p.kind) {
        Some(PopupKind::Help) => 84,
        Some(PopupKind::Confirm(_)) => 64,
        _ => u16::MAX,
    }
}

/// The popup's content as lines, wrapped to `width`.
fn popup_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let p = &app.palette;
    let Some(popup) = &app.popup else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match &popup.kind {
        PopupKind::Help => {
            let mut section = "";
            for b in BINDINGS.iter().filter(|b| app.engine.is_some() || !b.engine_only) {
                if b.section != section {
                    if !section.is_empty() {
                        out.push(Line::default());
                    }
                    section = b.section;
                    out.push(Line::styled(section.to_string(), p.title));
                }
                for (i, line) in text::wrap(b.desc, width.saturating_sub(14))
                    .into_iter()
                    .enumerate()
                {
                    let key = if i == 0 {
                        format!("  {:<11} ", b.label)
                    } else {
                        " ".repeat(14)
                    };
                    out.push(Line::from(vec![
                        Span::styled(key, p.key),
                        Span::styled(line, p.text),
                    ]));
                }
            }
            out.push(Line::default());
            out.push(Line::styled("Filtering (/)", p.title));
            for line in text::wrap(super::keys::FILTER_HELP, width.saturating_sub(2)) {
                out.push(Line::from(vec![Span::raw("  "), Span::styled(line, p.text)]));
            }
            out.push(Line::default());
            out.push(Line::styled(
                "Operator status words (colour is never the only signal)",
                p.title,
            ));
            for (word, meaning) in model::STATUS_WORDS {
                for (i, line) in text::wrap(meaning, width.saturating_sub(14))
                    .into_iter()
                    .enumerate()
                {
                    let key = if i == 0 {
                        format!("  {word:<11} ")
                    } else {
                        " ".repeat(14)
                    };
                    out.push(Line::from(vec![
                        Span::styled(key, p.key),
                        Span::styled(line, p.text),
                    ]));
                }
            }
            out.push(Line::default());
            out.push(Line::styled("Commands (after :)", p.title));
            for (aliases, desc) in COMMANDS {
                let names = aliases.join(" ");
                for (i, line) in text::wrap(&format!("{names}: {desc}"), width.saturating_sub(2))
                    .into_iter()
                    .enumerate()
                {
                    let lead = if i == 0 { "  " } else { "    " };
                    out.push(Line::from(vec![Span::raw(lead), Span::styled(line, p.text)]));
                }
            }
        }
        PopupKind::Detail(lines) => {
            let label_w = lines
                .iter()
                .map(|l| text::width(&l.label))
                .max()
                .unwrap_or(0)
                .min(24);
            for l in lines {
                if l.label.is_empty() {
                    out.push(Line::default());
                    out.push(Line::styled(text::fit(&l.value, width), p.title));
                    continue;
                }
                let avail = width.saturating_sub(label_w + 2).max(8);
                let value = if l.value.is_empty() {
                    "-".to_string()
                } else {
                    l.value.clone()
                };
                let style = match l.level {
                    Level::Info | Level::Ok => p.text,
                    other => p.level(other),
                };
                for (i, part) in value.split('\n').flat_map(|v| text::wrap(v, avail)).enumerate() {
                    let label = if i == 0 {
                        format!("{:<label_w$}  ", text::fit(&l.label, label_w))
                    } else {
                        " ".repeat(label_w + 2)
                    };
                    out.push(Line::from(vec![
                        Span::styled(label, p.key),
                        Span::styled(part, style),
                    ]));
                }
            }
        }
        PopupKind::Confirm(to) => {
            let from = app.engine.as_ref().map(|e| e.snap.mode);
            let mut head = vec![Span::styled("Switch the engine from ", p.text)];
            if let Some(f) = from {
                head.push(Span::styled(engine::mode_word(f), p.mode(f)));
                head.push(Span::styled(" to ", p.text));
            }
            head.push(Span::styled(engine::mode_word(*to), p.mode(*to)));
            head.push(Span::styled("?", p.text));
            out.push(Line::from(head));
            out.push(Line::default());
            for l in text::wrap(engine::switch_explanation(*to), width) {
                out.push(Line::styled(l, p.text));
            }
            out.push(Line::default());
            out.push(Line::from(vec![
                Span::styled("y/Enter", p.key),
                Span::styled(" switch   ", p.text),
                Span::styled("n/Esc", p.key),
                Span::styled(" cancel (nothing is sent)", p.text),
            ]));
        }
        PopupKind::Yaml(y) => {
            for line in y.lines() {
                let indent = line.len() - line.trim_start().len();
                for (i, part) in text::wrap(line, width.saturating_sub(2)).into_iter().enumerate() {
                    let part = if i == 0 {
                        part
                    } else {
                        format!("{}  {}", " ".repeat(indent.min(20)), part.trim_start())
                    };
                    out.push(Line::styled(text::fit(&part, width), p.text));
                }
            }
        }
    }
    out
}

/// Inner (width, height) of the popup on the current terminal.
fn popup_inner(app: &App) -> (usize, usize) {
    let area = popup_area(Rect::new(0, 0, app.size.0, app.size.1), popup_max_width(app));
    (
        usize::from(area.width.saturating_sub(2)),
        usize::from(area.height.saturating_sub(2)),
    )
}

/// The largest scroll offset that still fills the popup.
pub fn popup_max_scroll(app: &App) -> usize {
    let (w, h) = popup_inner(app);
    popup_lines(app, w).len().saturating_sub(h)
}

fn render_popup(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let Some(popup) = &app.popup else { return };
    let rect = match popup.kind {
        PopupKind::Confirm(_) => confirm_area(app, area),
        _ => popup_area(area, popup_max_width(app)),
    };
    frame.render_widget(Clear, rect);
    let hint = match popup.kind {
        PopupKind::Detail(_) if popup.yaml.is_some() => " j/k scroll · y yaml · Esc close ",
        PopupKind::Confirm(_) => " y confirm · n cancel ",
        _ => " j/k scroll · Esc close ",
    };
    let block = Block::bordered()
        .border_style(p.title.remove_modifier(Modifier::BOLD))
        .title(Line::styled(
            text::fit(
                &format!(" {} ", popup.title),
                usize::from(rect.width.saturating_sub(4)),
            ),
            p.title,
        ))
        .title_bottom(Line::styled(hint, p.muted));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let lines = popup_lines(app, usize::from(inner.width));
    let max = lines.len().saturating_sub(usize::from(inner.height));
    let scroll = popup.scroll.min(max);
    let shown: Vec<Line> = lines
        .into_iter()
        .skip(scroll)
        .take(usize::from(inner.height))
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}

// ---------------------------------------------------------------- engine views

/// The Overview's engine panel: the sync gauge (the snapshot's `fraction`, `done`, `total`),
/// the current run level, the desired release and the current failure.
fn render_sync(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let Some(e) = &app.engine else { return };
    let s = &e.snap;
    let block = Block::bordered()
        .border_style(p.border)
        .title(Line::styled(" sync (engine) ", p.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let (gauge_area, info_area) = split_v(inner, 1);
    let w = usize::from(inner.width);
    let ratio = model::clamp_ratio(f64::from(s.fraction));
    // Tasks that failed only because their operator is still updating are "waiting", as the
    // task graph shows them.
    let waiting = engine::only_waiting(s);
    let level = match e.current_level() {
        Some(r) => format!(
            " · run level {} ({}/{}{})",
            engine::level_label(r.level),
            r.done,
            r.total,
            match r.failed {
                0 => String::new(),
                n if waiting => format!(", {n} waiting"),
                n => format!(", {n} failed"),
            }
        ),
        None if s.total > 0 => " · all run levels done".into(),
        None => String::new(),
    };
    let label = format!(
        "{} · {}/{} tasks{level}",
        model::percent_label(f64::from(s.fraction)),
        s.done,
        s.total
    );
    let style = if s.failure.is_some() && !waiting {
        p.err
    } else {
        p.gauge
    };
    let gauge = Gauge::default()
        .ratio(ratio)
        .label(Span::styled(
            text::fit(&label, w),
            p.text.add_modifier(Modifier::BOLD),
        ))
        .gauge_style(style)
        .use_unicode(true);
    frame.render_widget(gauge, gauge_area);
    let mut spans = vec![("Desired ".to_string(), p.muted)];
    spans.push((
        s.desired
            .as_ref()
            .map(|d| {
                if d.version.is_empty() {
                    d.image.clone()
                } else {
                    d.version.clone()
                }
            })
            .unwrap_or_else(|| "-".into()),
        p.text.add_modifier(Modifier::BOLD),
    ));
    spans.push(("  Pass ".into(), p.muted));
    spans.push((
        format!(
            "{}{}",
            s.counters.passes,
            if s.running { " (running)" } else { "" }
        ),
        p.text,
    ));
    if s.attempt > 0 {
        spans.push(("  Attempt ".into(), p.muted));
        spans.push((s.attempt.to_string(), p.warn));
    }
    if let Some(f) = &s.failure {
        let (word, style) = if waiting {
            ("  Waiting ", p.warn)
        } else {
            ("  Failing ", p.err)
        };
        spans.push((word.into(), p.muted));
        let msg = if f.reason.is_empty() || waiting {
            text::one_line(&f.message)
        } else {
            format!("{}: {}", f.reason, text::one_line(&f.message))
        };
        spans.push((msg, style));
    }
    frame.render_widget(Paragraph::new(fit_spans(spans, w)), info_area);
}

/// One line of the task graph: the run level it belongs to (`None` for continuation lines
/// of a level that wraps) and the indexes (into the engine model's cells) on it.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskLine {
    /// The level, on the first line of each level.
    pub level: Option<Option<u32>>,
    /// Cells on the line.
    pub cells: Vec<usize>,
}

/// Columns of the run-level prefix: `50  12/20 │ `.
const TASK_PREFIX: usize = 13;

/// The task graph laid out for `width` columns: the visible cells (filter applied), level by
/// level, each level starting a new line and wrapping as needed.
pub fn task_lines(app: &App, width: usize) -> Vec<TaskLine> {
    let Some(e) = &app.engine else {
        return Vec::new();
    };
    let room = width.saturating_sub(TASK_PREFIX).max(1);
    let mut out: Vec<TaskLine> = Vec::new();
    let mut used = 0;
    let mut current: Option<Option<u32>> = None;
    for i in app.visible_rows(Tab::Tasks) {
        let Some(cell) = e.cells.get(i) else { continue };
        let w = text::width(&text::sanitize(&cell.label())) + 2;
        let new_level = current != Some(cell.level);
        let last = out.last_mut();
        match last {
            Some(line) if !new_level && used + w <= room => {
                line.cells.push(i);
                used += w + 1;
            }
            _ => {
                out.push(TaskLine {
                    level: new_level.then_some(cell.level),
                    cells: vec![i],
                });
                used = w + 1;
                current = Some(cell.level);
            }
        }
    }
    out
}

/// The line of the task graph holding visible cell number `sel` (an index into the visible
/// cells).
pub fn task_line_of(lines: &[TaskLine], app: &App, sel: usize) -> usize {
    let visible = app.visible_rows(Tab::Tasks);
    let Some(target) = visible.get(sel) else {
        return 0;
    };
    lines.iter().position(|l| l.cells.contains(target)).unwrap_or(0)
}

fn render_tasks(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let Some(e) = &app.engine else { return };
    let v = app.view();
    let visible = app.visible_rows(Tab::Tasks);
    let sel = app.selected_row();
    let title = filter_title(app, Tab::Tasks, "task graph", e.cells.len(), visible.len());
    let mut block = Block::bordered()
        .border_style(p.title.remove_modifier(Modifier::BOLD))
        .title(Line::styled(
            text::fit(&title, usize::from(area.width.saturating_sub(4))),
            p.title,
        ));
    // The bottom border previews the selected cell: its first failed task and error.
    if let Some(cell) = sel.and_then(|i| e.cells.get(i)) {
        let failed = cell.tasks.iter().find_map(|&t| {
            let t = e.snap.tasks.get(t)?;
            match &t.state {
                crate::reconcile::api::TaskState::Failed(err) => Some(format!("{}: {}", t.name, err)),
                _ => None,
            }
        });
        let preview = match failed {
            Some(f) => format!(
                " ↳ {} {} (Enter: all tasks) ",
                cell.state.marker(),
                text::one_line(&f)
            ),
            None => format!(
                " ↳ {} · {} · {}/{} done (Enter: tasks) ",
                cell.component,
                cell.state.word(),
                cell.done,
                cell.total
            ),
        };
        let style = match cell.state {
            engine::CellState::Failed => p.err,
            engine::CellState::Waiting => p.warn,
            _ => p.muted,
        };
        block = block.title_bottom(Line::styled(
            text::fit(&preview, usize::from(area.width.saturating_sub(4))),
            style,
        ));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let w = usize::from(inner.width);
    if visible.is_empty() {
        let msg = if e.cells.is_empty() {
            "no tasks yet: the engine has not loaded a payload".to_string()
        } else {
            format!("no cells match the filter '{}' (Esc clears it)", v.filter)
        };
        frame.render_widget(Paragraph::new(Line::styled(text::fit(&msg, w), p.muted)), inner);
        return;
    }
    let lines = task_lines(app, w);
    let selected = sel;
    let shown: Vec<Line> = lines
        .iter()
        .skip(v.offset)
        .take(usize::from(inner.height))
        .map(|l| {
            let mut spans = Vec::new();
            match l.level {
                Some(level) => {
                    let rl = e.snap.run_levels.iter().find(|r| r.level == level);
                    let (counts, style) = match rl {
                        Some(r) => {
                            let style = if r.failed > 0 {
                                p.err
                            } else if r.done + r.skipped >= r.total {
                                p.ok
                            } else if e.current_level().is_some_and(|c| c.level == level) {
                                p.warn
                            } else {
                                p.muted
                            };
                            (format!("{}/{}", r.done, r.total), style)
                        }
                        None => ("-".into(), p.muted),
                    };
                    spans.push(Span::styled(
                        format!("{:>2} {:>7} ", engine::level_label(level), counts),
                        style,
                    ));
                    spans.push(Span::styled("│ ", p.border));
                }
                None => {
                    spans.push(Span::styled(" ".repeat(TASK_PREFIX - 2), p.text));
                    spans.push(Span::styled("│ ", p.border));
                }
            }
            for (n, &i) in l.cells.iter().enumerate() {
                let Some(cell) = e.cells.get(i) else { continue };
                if n > 0 {
                    spans.push(Span::raw(" "));
                }
                let mut style = p.level(cell.level_style());
                if selected == Some(i) {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                spans.push(Span::styled(
                    format!("{} {}", cell.state.marker(), text::sanitize(&cell.label())),
                    style,
                ));
            }
            // Long single cells are cut to the width.
            let plain: Vec<(String, Style)> = spans
                .into_iter()
                .map(|s| (s.content.into_owned(), s.style))
                .collect();
            fit_spans(plain, w)
        })
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}

fn render_drift(app: &App, frame: &mut Frame, body: Rect) {
    const COLS: [Col; 4] = [
        col("ACTION", 6, 6),
        col("KIND", 8, 24),
        col("OBJECT", 16, 60).key(),
        fill("CHANGES (path: old → new)", 16).hide(1),
    ];
    let Some(e) = &app.engine else { return };
    let rows = e
        .drift
        .iter()
        .map(|d| {
            (
                vec![
                    C(d.action.into(), Some(d.level)),
                    c(&d.short_kind),
                    c(&d.object),
                    c(d.summary(e.snap.mode)),
                ],
                Level::Info,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::Drift);
    let mode = engine::mode_word(e.snap.mode);
    let name = match e.snap.mode {
        crate::reconcile::api::EngineMode::WatchOnly => format!("drift ({mode}: would change)"),
        crate::reconcile::api::EngineMode::ActiveApply => format!("drift ({mode}: changed)"),
    };
    let title = filter_title(app, Tab::Drift, &name, e.drift.len(), visible.len());
    render_table(
        app,
        frame,
        body,
        TableSpec {
            title,
            cols: &COLS,
            rows,
            visible,
            cursor: cursor(app, Tab::Drift),
            empty: "no drift: the last pass found the cluster as the payload says",
            preview: app
                .selected_row()
                .and_then(|i| e.drift.get(i))
                .map(|d| format!("{} · {}", d.task, d.summary(e.snap.mode))),
        },
    );
}

/// The engine event log: newest at the bottom, levels coloured.
fn render_log(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let Some(e) = &app.engine else { return };
    let events = &e.snap.events;
    let block = Block::bordered().border_style(p.border).title(Line::styled(
        text::fit(
            &format!(" engine events[{}] (e hides) ", events.len()),
            usize::from(area.width.saturating_sub(4)),
        ),
        p.title,
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let h = usize::from(inner.height);
    let w = usize::from(inner.width);
    if events.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled("no engine events yet", p.muted)),
            inner,
        );
        return;
    }
    let lines: Vec<Line> = events
        .iter()
        .skip(events.len().saturating_sub(h))
        .map(|ev| {
            let style = match ev.level {
                crate::reconcile::api::EventLevel::Info => p.text,
                other => p.level(engine::event_level(other)),
            };
            let line = engine::event_line(ev);
            let (time, rest) = line.split_at(line.find(' ').unwrap_or(0));
            fit_spans(vec![(time.to_string(), p.muted), (rest.to_string(), style)], w)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_and_hide_in_order() {
        let cols = [col("A", 4, 10).key(), col("B", 5, 5).hide(1), fill("MSG", 10)];
        // Wide: key column full, B full, the rest to the message.
        let w = column_widths(&cols, &[8, 5, 50], 40);
        assert_eq!(w, vec![Some(8), Some(5), Some(25)]);
        // Narrow: B is hidden so the key column keeps its width.
        let w = column_widths(&cols, &[8, 5, 50], 20);
        assert_eq!(w, vec![Some(8), None, Some(11)]);
        // Nothing left to hide: widths stay at their minimums, no panic.
        let w = column_widths(&cols, &[8, 5, 50], 3);
        assert_eq!(w, vec![Some(4), None, Some(10)]);
    }
}
