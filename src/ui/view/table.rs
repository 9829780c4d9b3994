//! The table widget every list view uses: columns that fit and hide by priority, severity
//! styles, the filter title, the selected row's preview in the bottom border, and the
//! "no rows" messages.

use ratatui::{
    Frame,
    layout::{Constraint, Rect},
    style::{Modifier, Style},
    text::{Line, Span},
    widgets::{Cell, Paragraph, Row, Table, TableState},
};

use crate::l10n::{Text, tr, trf};
use crate::ui::{
    app::App,
    layout,
    model::feed,
    tab::Tab,
    text,
    theme::{Level, Palette},
};

/// A table column: header, width bounds, whether it takes the leftover space, whether it is
/// a key column that gets its full width first, and how early it is hidden on narrow
/// terminals (0 = never).
#[derive(Clone, Copy)]
pub(super) struct Col {
    header: Text,
    min: u16,
    max: u16,
    fill: bool,
    key: bool,
    hide: u8,
    whole: bool,
}

pub(super) const fn col(header: Text, min: u16, max: u16) -> Col {
    Col {
        header,
        min,
        max,
        fill: false,
        key: false,
        hide: 0,
        whole: false,
    }
}
pub(super) const fn fill(header: Text, min: u16) -> Col {
    Col {
        header,
        min,
        max: u16::MAX,
        fill: true,
        key: false,
        hide: 0,
        whole: false,
    }
}
impl Col {
    pub(super) const fn hide(mut self, order: u8) -> Self {
        self.hide = order;
        self
    }
    pub(super) const fn key(mut self) -> Self {
        self.key = true;
        self
    }
    /// A column of numbers (ages, durations, versions): shown in full (its widest value, up
    /// to its cap) or hidden, never cut.
    pub(super) const fn whole(mut self) -> Self {
        self.whole = true;
        self
    }
    /// The narrowest the column may be: its minimum, or its full width for a
    /// [`Col::whole`] column.
    fn least(&self, content: usize) -> u16 {
        if self.whole { self.want(content) } else { self.min }
    }
    /// The width the column would like: its widest content or header, within its bounds.
    fn want(&self, content: usize) -> u16 {
        let w = content
            .max(text::width(self.header.get()))
            .min(usize::from(self.max))
            .max(usize::from(self.min));
        u16::try_from(w).unwrap_or(u16::MAX)
    }
}

/// One table cell: text and an optional severity overriding the row's.
pub(super) struct C(pub(super) String, pub(super) Option<Level>);

pub(super) fn c(t: impl Into<String>) -> C {
    C(t.into(), None)
}

/// Column widths for `avail` columns of space; `None` hides a column.
///
/// Optional columns are hidden (highest `hide` first) until the minimum widths plus the full
/// width of key columns fit. Space then goes to key columns (up to their cap), then up to a
/// third of the row to the fill column, then to the other columns, then to key columns up to
/// their longest value (past the cap), and what is left to the fill column.
pub(super) fn column_widths(cols: &[Col], content: &[usize], avail: u16) -> Vec<Option<u16>> {
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
                    c.least(content[i])
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
    let mut widths: Vec<Option<u16>> = cols
        .iter()
        .zip(&shown)
        .zip(content)
        .map(|((c, s), n)| s.then_some(c.least(*n)))
        .collect();
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
        let full = content[i].max(text::width(col.header.get()));
        grow(&mut widths, i, u16::try_from(full).unwrap_or(u16::MAX));
    }
    if let Some(i) = fill_i {
        grow(&mut widths, i, u16::MAX);
    }
    widths
}

pub(super) struct TableSpec<'a> {
    pub title: String,
    pub cols: &'a [Col],
    pub rows: Vec<(Vec<C>, Level)>,
    /// Indexes of the rows to show (filtered), in order.
    pub visible: Vec<usize>,
    /// Selection and offset, when the table is focused.
    pub cursor: Option<(usize, usize)>,
    pub empty: &'a str,
    /// Full text of the selected row, shown in the bottom border of a focused table.
    pub preview: Option<String>,
}

pub(super) fn row_style(p: &Palette, level: Level) -> Style {
    match level {
        Level::Ok | Level::Info => p.text,
        other => p.level(other),
    }
}

pub(super) fn render_table(app: &App, frame: &mut Frame, area: Rect, spec: TableSpec<'_>) {
    let p = &app.palette;
    let focused = spec.cursor.is_some();
    let compact = app.tab == Tab::Overview && layout::compact(app.size.1);
    let block = super::widgets::panel(compact)
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
    let block = match preview.filter(|_| !compact) {
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
            .filter_map(|(c, w)| w.map(|w| Cell::from(text::fit(c.header.get(), usize::from(w))))),
    )
    .style(p.header);
    if spec.visible.is_empty() {
        let msg = if let Some(w) = feed::waiting_short(&app.dash, &app.state.feed, app.now) {
            w
        } else if app.view().filter.is_empty() || !focused {
            spec.empty.to_owned()
        } else {
            trf!(
                "table-no-match",
                "no rows match the filter '{filter}' (Esc clears it)",
                filter = app.view().filter
            )
        };
        let (hdr, rest) = layout::split_v(inner, 1);
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

pub(super) fn cursor(app: &App, tab: Tab) -> Option<(usize, usize)> {
    (app.tab == tab).then(|| {
        let v = &app.views[tab.index()];
        (v.selected, v.offset)
    })
}

pub(super) fn filter_title(app: &App, tab: Tab, name: &str, total: usize, shown: usize) -> String {
    let v = &app.views[tab.index()];
    let sort = if v.by_severity {
        tr!("table-by-severity", " ↓severity")
    } else {
        ""
    };
    if app.dash.no_data {
        format!(" {name}[?] ")
    } else if v.filter.is_empty() {
        format!(" {name}[{total}]{sort} ")
    } else {
        format!(" {name}[{shown}/{total}] </{}>{sort} ", v.filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_and_hide_in_order() {
        let cols = [
            col(Text::new("", "A"), 4, 10).key(),
            col(Text::new("", "B"), 5, 5).hide(1),
            fill(Text::new("", "MSG"), 10),
        ];
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

    #[test]
    fn number_columns_are_shown_whole_or_hidden() {
        // SINCE holds `11d17h` (6 columns), its minimum is 5: never `11d1…`.
        let cols = [
            col(Text::new("", "TYPE"), 8, 22).key(),
            col(Text::new("", "STATUS"), 7, 7),
            col(Text::new("", "REASON"), 6, 28).hide(2),
            col(Text::new("", "SINCE"), 5, 7).hide(1).whole(),
            fill(Text::new("", "MESSAGE"), 10),
        ];
        let content = [24, 5, 13, 6, 60];
        for avail in 40..120 {
            let w = column_widths(&cols, &content, avail);
            assert!(w[3].is_none_or(|s| s >= 6), "{avail}: {w:?}");
        }
        // At 98 columns (a 100-column terminal's table) SINCE is whole and REASON too.
        let w = column_widths(&cols, &content, 98);
        assert_eq!((w[2], w[3]), (Some(13), Some(6)), "{w:?}");
        // Without the rule the same widths cut it (the bug seen at 100 columns).
        let mut cut = cols;
        cut[3] = col(Text::new("", "SINCE"), 5, 7).hide(1);
        let w = column_widths(&cut, &[24, 5, 28, 6, 60], 76);
        assert_eq!(w[3], Some(5), "{w:?}");
        let w = column_widths(&cols, &[24, 5, 28, 6, 60], 76);
        assert_eq!(w[3], Some(6), "{w:?}");
    }
}
