//! The footer: the open prompt, a flash message, or the key hints of the current mode (from
//! the key registry).

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::Paragraph,
};

use super::widgets::fit_spans;
use crate::ui::{
    app::App,
    app::PromptKind,
    keys::{self, BINDINGS},
    text,
};

pub(super) fn render(app: &App, frame: &mut Frame, area: Rect) {
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
    // A confirm popup that cannot be confirmed offers no `y`.
    let confirm_ok = app.confirm_refusal().is_none();
    let shown = BINDINGS.iter().filter(|b| {
        b.hint
            && b.applies(mode)
            && (engine || !b.engine_only)
            && (yaml_ok || b.action != keys::KeyAction::Yaml)
            && (confirm_ok || b.action != keys::KeyAction::Confirm)
    });
    for b in shown {
        spans.push((b.label.to_string(), p.key));
        spans.push((format!(" {}  ", b.short.get()), p.muted));
    }
    frame.render_widget(Paragraph::new(fit_spans(spans, w)), area);
}
