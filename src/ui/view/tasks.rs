//! The engine's task graph: run levels as rows, components as cells.

use crate::l10n::{tr, trf};
use ratatui::{
    Frame,
    layout::Rect,
    style::{Modifier, Style},
    text::{Line, Span},
    widgets::{Block, Paragraph},
};

use super::table::filter_title;
use super::widgets::fit_spans;
use crate::ui::{app::App, engine, tab::Tab, text};

pub(super) fn render(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let Some(e) = &app.engine else { return };
    let v = app.view();
    let visible = app.visible_rows(Tab::Tasks);
    let sel = app.selected_row();
    let title = filter_title(
        app,
        Tab::Tasks,
        tr!("tasks-title", "task graph"),
        e.cells.len(),
        visible.len(),
    );
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
            Some(f) => trf!(
                "tasks-preview-failed",
                " ↳ {marker} {failed} (Enter: all tasks) ",
                marker = cell.state.marker(),
                failed = text::one_line(&f)
            ),
            None => trf!(
                "tasks-preview",
                " ↳ {component} · {state} · {done}/{total} done (Enter: tasks) ",
                component = cell.component,
                state = cell.state.word(),
                done = cell.done,
                total = cell.total
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
            tr!("tasks-none", "no tasks yet: the engine has not loaded a payload").to_string()
        } else {
            trf!(
                "tasks-no-match",
                "no cells match the filter '{filter}' (Esc clears it)",
                filter = v.filter
            )
        };
        frame.render_widget(Paragraph::new(Line::styled(text::fit(&msg, w), p.muted)), inner);
        return;
    }
    let lines = engine::task_lines(e, &visible, w);
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
                    spans.push(Span::styled(" ".repeat(engine::TASK_PREFIX - 2), p.text));
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
