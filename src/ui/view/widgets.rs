//! Small helpers every view uses.

use ratatui::{
    style::Style,
    text::{Line, Span},
    widgets::{Block, Borders},
};

use crate::ui::text;

/// Spans fitted into `width` columns, the last one cut with an ellipsis.
pub(super) fn fit_spans(spans: Vec<(String, Style)>, width: usize) -> Line<'static> {
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

/// A panel's block: bordered, or with its top border (and title) only when `compact` (short
/// terminals, [`crate::ui::layout::compact`]).
pub(super) fn panel(compact: bool) -> Block<'static> {
    if compact {
        Block::new().borders(Borders::TOP)
    } else {
        Block::bordered()
    }
}
