//! Update-health insights: the Health view, and the summary table on the Overview.

use crate::l10n::{tr, trf, txt};
use ratatui::{Frame, layout::Rect};

use super::table::{C, Col, TableSpec, c, col, cursor, fill, filter_title, render_table};
use crate::assess::insight_text;
use crate::ui::{app::App, tab::Tab, text, theme::Level};

pub(super) fn render(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
    const COLS: [Col; 4] = [
        col(txt!("col-level", "LEVEL"), 7, 8),
        col(txt!("col-since", "SINCE"), 5, 9).hide(1).whole(),
        col(txt!("col-impact", "IMPACT"), 8, 18).hide(2),
        fill(txt!("col-message", "MESSAGE"), 12),
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
                    c(text::one_line(&insight_text::summary(&i.message))),
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
        // The Overview's summary shows the worst insights first (a small terminal has room
        // for one).
        let mut v: Vec<usize> = (0..d.insights.len()).collect();
        v.sort_by_key(|&i| std::cmp::Reverse(d.insights[i].level));
        v
    };
    let title = if focused {
        filter_title(
            app,
            Tab::Health,
            tr!("health-title", "update health"),
            d.insights.len(),
            visible.len(),
        )
    } else {
        let n = if d.no_data {
            "?".into()
        } else {
            d.insights.len().to_string()
        };
        trf!("health-title-short", " update health[{n}] ([5] details) ", n = n)
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
            empty: tr!(
                "health-none",
                "no update-health insights: nothing needs attention"
            ),
            preview: if focused {
                app.selected_row()
                    .and_then(|i| d.insights.get(i))
                    .map(|r| insight_text::description(&r.description).into_owned())
            } else {
                None
            },
        },
    );
}
