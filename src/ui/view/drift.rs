//! The engine's drift records: what a pass would change (watch-only) or changed (active-apply).

use crate::l10n::txt;
use ratatui::{Frame, layout::Rect};

use super::table::{C, Col, TableSpec, c, col, cursor, fill, filter_title, render_table};
use crate::ui::{app::App, tab::Tab, theme::Level};

pub(super) fn render(app: &App, frame: &mut Frame, body: Rect) {
    const COLS: [Col; 4] = [
        col(txt!("col-action", "ACTION"), 6, 6),
        col(txt!("col-kind", "KIND"), 8, 24).whole(),
        col(txt!("col-object", "OBJECT"), 16, 60).key(),
        fill(txt!("col-changes-path", "CHANGES (path: old → new)"), 16).hide(1),
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
    let origin = e.drift_origin();
    let title = filter_title(app, Tab::Drift, &origin.title(), e.drift.len(), visible.len());
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
            empty: origin.empty(),
            preview: app
                .selected_row()
                .and_then(|i| e.drift.get(i))
                .map(|d| format!("{} · {}", d.task, d.summary(e.snap.mode))),
        },
    );
}
