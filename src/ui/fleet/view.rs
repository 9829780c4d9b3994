//! Rendering of the fleet view (pure: no I/O, no state change): the header line, the table
//! of clusters, the selected cluster's detail and the footer (hints, the filter prompt or a
//! notice). Columns that do not fit are left out, least needed first (the Lease, narrowed first, the channel,
//! the conditional and available updates, the operators, the desired update); CONTEXT narrows
//! last.

use ratatui::{
    Frame,
    layout::{Constraint, Rect},
    style::Style,
    text::{Line, Span},
    widgets::{Cell, Paragraph, Row, Table, TableState},
};

use super::{FleetApp, words};
use crate::{
    assess::fleet::{FleetRow, RowState},
    ui::{text, theme::Palette},
};

/// Lines that are not table rows: the header line, the table's header, two detail lines and
/// the footer.
pub const CHROME_LINES: u16 = 5;

/// Widest each column grows (CONTEXT narrows further when the screen is small).
const MAX_WIDTH: [usize; 10] = [28, 18, 14, 16, 14, 16, 7, 14, 16, 30];
/// Columns left out first when the screen is narrow, in that order.
const DROP_ORDER: [usize; 7] = [9, 3, 7, 6, 8, 4, 5];
/// The LEASE column's index, and the narrowest it is shown.
const LEASE: usize = 9;
const MIN_LEASE: usize = 12;
/// The narrowest CONTEXT column.
const MIN_CONTEXT: usize = 8;

/// The cells of a row, in [`words::HEADERS`] order.
fn cells(r: &FleetRow) -> [String; 10] {
    let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| words::NONE.to_owned());
    [
        r.context.clone(),
        words::state(r.state).to_owned(),
        or_none(&r.version),
        or_none(&r.channel),
        or_none(&r.desired),
        words::progress(r),
        r.updates_recommended.to_string(),
        words::conditional(r),
        words::operators(r),
        words::lease(r),
    ]
}

/// The style of a row's text, and of its STATE cell.
fn styles(p: &Palette, s: RowState) -> (Style, Style) {
    match s {
        RowState::Unreachable | RowState::Denied | RowState::Failing => (p.err, p.err),
        RowState::Degraded => (p.warn, p.warn),
        RowState::Updating => (p.text, p.gauge),
        RowState::Connecting | RowState::NoClusterVersion => (p.muted, p.muted),
        RowState::UpToDate => (p.text, p.ok),
    }
}

/// Column widths for `area_width`: `None` for a column left out.
fn widths(rows: &[[String; 10]], area_width: usize) -> [Option<usize>; 10] {
    let mut w: [Option<usize>; 10] = [None; 10];
    for (c, slot) in w.iter_mut().enumerate() {
        let natural = rows
            .iter()
            .map(|r| text::width(&r[c]))
            .chain(std::iter::once(text::width(words::HEADERS[c].get())))
            .max()
            .unwrap_or(0);
        *slot = Some(natural.min(MAX_WIDTH[c]));
    }
    let total = |w: &[Option<usize>; 10]| {
        let kept: Vec<usize> = w.iter().flatten().copied().collect();
        kept.iter().sum::<usize>() + kept.len().saturating_sub(1)
    };
    for c in DROP_ORDER {
        if total(&w) <= area_width {
            break;
        }
        // The Lease holder (the last column) narrows before it goes.
        if c == LEASE {
            w[c] = None;
            let room = area_width.saturating_sub(total(&w) + 1);
            if room >= MIN_LEASE {
                w[c] = Some(room);
                break;
            }
            continue;
        }
        w[c] = None;
    }
    let over = total(&w).saturating_sub(area_width);
    if over > 0
        && let Some(ctx) = w[0].as_mut()
    {
        *ctx = ctx.saturating_sub(over).max(MIN_CONTEXT);
    }
    w
}

/// Draws `app` on the whole frame.
pub fn render(app: &FleetApp, f: &mut Frame) {
    let area = f.area();
    if area.height < CHROME_LINES + 1 || area.width < 20 {
        f.render_widget(
            Paragraph::new(text::fit(words::TITLE, usize::from(area.width))),
            area,
        );
        return;
    }
    let p = &app.palette;
    let visible = app.visible();
    let rows: Vec<&FleetRow> = visible.iter().map(|&i| &app.rows()[i]).collect();
    let cursor = app.cursor(&visible);
    let width = usize::from(area.width);

    // Header line.
    let summary = words::summary(app.rows(), rows.len(), app.sort, &app.filter);
    let head = Line::from(vec![
        Span::styled(words::TITLE, p.title),
        Span::styled(" · ", p.muted),
        Span::styled(
            text::fit(&summary, width.saturating_sub(text::width(words::TITLE) + 3)),
            p.text,
        ),
    ]);
    f.render_widget(Paragraph::new(head), Rect { height: 1, ..area });

    // Table.
    let table_area = Rect {
        y: area.y + 1,
        height: area.height - (CHROME_LINES - 1),
        ..area
    };
    if rows.is_empty() && !app.rows().is_empty() {
        f.render_widget(
            Paragraph::new(Span::styled(words::NO_MATCH.get(), p.muted)),
            table_area,
        );
    } else {
        let texts: Vec<[String; 10]> = rows.iter().map(|r| cells(r)).collect();
        let w = widths(&texts, width);
        let header = Row::new(
            words::HEADERS
                .iter()
                .zip(w)
                .filter_map(|(h, w)| w.map(|w| Cell::from(text::fit(h.get(), w)))),
        )
        .style(p.header);
        let body: Vec<Row> = rows
            .iter()
            .zip(&texts)
            .map(|(r, t)| {
                let (row_style, state_style) = styles(p, r.state);
                let cells = t.iter().zip(w).enumerate().filter_map(|(c, (s, w))| {
                    let w = w?;
                    let style = if c == 1 { state_style } else { row_style };
                    Some(Cell::from(Span::styled(text::fit(s, w), style)))
                });
                Row::new(cells)
            })
            .collect();
        let constraints: Vec<Constraint> = w
            .iter()
            .flatten()
            .map(|&w| Constraint::Length(u16::try_from(w).unwrap_or(u16::MAX)))
            .collect();
        let table = Table::new(body, constraints)
            .header(header)
            .column_spacing(1)
            .row_highlight_style(p.selected);
        let mut state = TableState::default();
        if !rows.is_empty() {
            state.select(Some(cursor));
        }
        f.render_stateful_widget(table, table_area, &mut state);
    }

    // The selected cluster's detail.
    let detail_area = Rect {
        y: area.y + area.height - 3,
        height: 2,
        ..area
    };
    if let Some(r) = rows.get(cursor) {
        let (row_style, _) = styles(p, r.state);
        let lines: Vec<Line> = words::detail(r)
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let style = if i == 0 { p.muted } else { row_style };
                Line::from(Span::styled(text::fit(&text::one_line(&l), width), style))
            })
            .collect();
        f.render_widget(Paragraph::new(lines), detail_area);
    }

    // Footer.
    let footer_area = Rect {
        y: area.y + area.height - 1,
        height: 1,
        ..area
    };
    let footer = if app.editing {
        Line::from(vec![
            Span::styled(words::FILTER_PROMPT.get(), p.key),
            Span::raw(text::fit(
                &app.filter,
                width.saturating_sub(text::width(words::FILTER_PROMPT.get()) + 1),
            )),
        ])
    } else if let Some(n) = &app.notice {
        Line::from(Span::styled(text::fit(n, width), p.warn))
    } else {
        let mut spans = Vec::new();
        let mut used = 0;
        for (k, what) in words::HINTS {
            let what = what.get();
            let need = text::width(k) + text::width(what) + 3;
            if used + need > width {
                break;
            }
            spans.push(Span::styled(k, p.key));
            spans.push(Span::styled(format!(" {what}  "), p.muted));
            used += need;
        }
        Line::from(spans)
    };
    f.render_widget(Paragraph::new(footer), footer_area);
    if app.editing {
        let x = area.x
            + u16::try_from(text::width(words::FILTER_PROMPT.get()) + text::width(&app.filter)).unwrap_or(0);
        f.set_cursor_position((x.min(area.x + area.width - 1), footer_area.y));
    }
}
