//! The engine event log pane.

use crate::l10n::{tr, trf};
use ratatui::{
    Frame,
    layout::Rect,
    text::Line,
    widgets::{Block, Paragraph},
};

use super::widgets::fit_spans;
use crate::ui::{app::App, engine, text};

/// The engine event log: newest at the bottom, levels coloured.
pub(super) fn render(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let Some(e) = &app.engine else { return };
    let events = &e.snap.events;
    let block = Block::bordered().border_style(p.border).title(Line::styled(
        text::fit(
            &trf!("log-title", " engine events[{n}] (e hides) ", n = events.len()),
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
            Paragraph::new(Line::styled(tr!("log-none", "no engine events yet"), p.muted)),
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
