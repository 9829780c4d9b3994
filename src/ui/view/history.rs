//! The update History view.

use crate::l10n::{tr, txt};
use ratatui::{Frame, layout::Rect};

use super::table::{C, Col, TableSpec, c, col, cursor, fill, filter_title, render_table};
use crate::ui::{app::App, model::rows, tab::Tab, text, theme::Level};

pub(super) fn render(app: &App, frame: &mut Frame, body: Rect) {
    const COLS: [Col; 7] = [
        col(txt!("col-version", "VERSION"), 7, 24).whole(),
        col(txt!("col-state", "STATE"), 9, 9),
        col(txt!("col-started", "STARTED"), 16, 16),
        col(txt!("col-completed", "COMPLETED"), 16, 16).hide(2),
        col(txt!("col-duration", "DURATION"), 8, 8).hide(1).whole(),
        col(txt!("col-verified", "VERIFIED"), 10, 10).hide(3),
        fill(txt!("col-image", "IMAGE"), 10).hide(4),
    ];
    let d = &app.dash;
    let rows = d
        .history
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let completed = match (h.completed, i) {
                (None, 0) => tr!("history-in-progress", "in progress").into(),
                (t, _) => text::timestamp(t),
            };
            let dur = rows::history_duration(&app.dash, app.now, i, h);
            (
                vec![
                    c(if h.version.is_empty() { "-" } else { &h.version }),
                    C(h.state.into(), Some(h.level)),
                    c(text::timestamp(h.started)),
                    c(completed),
                    c(dur),
                    C(
                        rows::verified_words(h, app.engine.as_ref()).0.into(),
                        (!h.verified).then_some(Level::Warn),
                    ),
                    c(&h.image),
                ],
                Level::Info,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::History);
    let title = filter_title(
        app,
        Tab::History,
        tr!("history-title", "history"),
        d.history.len(),
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
            cursor: cursor(app, Tab::History),
            empty: tr!(
                "history-none",
                "no update history (the ClusterVersion reports none)"
            ),
            preview: app
                .selected_row()
                .and_then(|i| d.history.get(i))
                .map(|r| r.image.clone()),
        },
    );
}
