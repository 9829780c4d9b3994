//! Rendering: pure functions of `&App` into a frame (no I/O, no await, no locks).
//!
//! The screen is a four-line header (source and feed, versions and channel, assessment
//! headline, progress and health), a tab line, the body of the view in front and a footer
//! (prompt, flash message or key hints from the key registry). Popups draw last. Every cell is
//! one line, fitted to its column with an ellipsis.
//!
//! One module per view or widget: [`header`] (header and tab line), [`footer`], [`table`] (the
//! shared table widget), [`overview`], [`operators`], [`nodes`], [`history`], [`health`], [`updates`], the
//! engine views [`sync`], [`tasks`], [`drift`] and [`log`], and [`popup`]. Render depends on the
//! state ([`App`]), never the reverse.

mod drift;
mod footer;
mod header;
mod health;
mod history;
mod log;
mod nodes;
mod operators;
mod overview;
mod popup;
mod sync;
mod table;
mod tasks;
mod updates;
mod widgets;

use ratatui::{Frame, text::Line, widgets::Paragraph};

use super::{app::App, layout, tab::Tab, text};

/// Smallest terminal the dashboard lays out; below it one line says so.
pub const MIN_WIDTH: u16 = 60;
/// Smallest terminal height.
pub const MIN_HEIGHT: u16 = 15;
/// Draws the whole screen.
pub(crate) fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let line = Line::styled(too_small_message(area.width, area.height), app.palette.warn);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    let s = layout::screen(area, app.header_rows());
    header::render_header(app, frame, s.header);
    header::render_tabs(app, frame, s.tabs);
    let (body, log) = app.body_and_log(s.body);
    match app.tab {
        Tab::Overview => overview::render(app, frame, body),
        Tab::Operators => operators::render(app, frame, body),
        Tab::Nodes => nodes::render(app, frame, body),
        Tab::History => history::render(app, frame, body),
        Tab::Health => health::render(app, frame, body, true),
        Tab::Updates => updates::render(app, frame, body),
        Tab::Tasks => tasks::render(app, frame, body),
        Tab::Drift => drift::render(app, frame, body),
    }
    if log.height > 0 {
        log::render(app, frame, log);
    }
    footer::render(app, frame, s.footer);
    if app.popup.is_some() {
        popup::render(app, frame, area);
    }
}

/// The "terminal too small" line, in the longest form that fits `w` columns.
pub(crate) fn too_small_message(w: u16, h: u16) -> String {
    let forms = [
        crate::l10n::trf!(
            "view-too-small",
            "terminal too small: {w}x{h} (need {min_w}x{min_h})",
            w = w,
            h = h,
            min_w = MIN_WIDTH,
            min_h = MIN_HEIGHT
        ),
        crate::l10n::trf!(
            "view-too-small-short",
            "too small: {w}x{h}<{min_w}x{min_h}",
            w = w,
            h = h,
            min_w = MIN_WIDTH,
            min_h = MIN_HEIGHT
        ),
        format!("{w}x{h}<{MIN_WIDTH}x{MIN_HEIGHT}"),
    ];
    let w = usize::from(w);
    forms
        .iter()
        .find(|f| text::width(f) <= w)
        .cloned()
        .unwrap_or_else(|| text::fit(&forms[2], w))
}
