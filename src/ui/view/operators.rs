//! The ClusterOperators view.

use crate::l10n::{tr, txt};
use ratatui::{Frame, layout::Rect};

use super::table::{C, Col, TableSpec, c, col, cursor, fill, filter_title, render_table};
use crate::{
    openshift::ConditionStatus,
    ui::{app::App, tab::Tab, text, theme::Level},
};

pub(super) fn render(app: &App, frame: &mut Frame, body: Rect) {
    const COLS: [Col; 9] = [
        col(txt!("col-status", "STATUS"), 6, 6),
        col(txt!("col-name", "NAME"), 12, 30).key(),
        col(txt!("col-version", "VERSION"), 7, 24).whole(),
        col(txt!("col-avail", "AVAIL"), 5, 5),
        col(txt!("col-prog", "PROG"), 5, 5),
        col(txt!("col-degr", "DEGR"), 5, 5),
        col(txt!("col-upgr", "UPGR"), 5, 5).hide(2),
        col(txt!("col-since", "SINCE"), 5, 7).hide(1).whole(),
        fill(txt!("col-message", "MESSAGE"), 12).hide(3),
    ];
    let d = &app.dash;
    let cond_cell = |s: Option<ConditionStatus>, bad: ConditionStatus, lvl: Level| {
        C(cond_word(s).into(), (s == Some(bad)).then_some(lvl))
    };
    let rows = d
        .operators
        .iter()
        .map(|o| {
            let msg = if o.reason.is_empty() || o.message.is_empty() {
                text::one_line(&o.message)
            } else {
                format!("{}: {}", o.reason, text::one_line(&o.message))
            };
            (
                vec![
                    C(o.status.into(), Some(o.level)),
                    c(&o.name),
                    C(
                        if o.version.is_empty() {
                            "-".into()
                        } else {
                            o.version.clone()
                        },
                        (!o.at_target).then_some(Level::Warn),
                    ),
                    cond_cell(o.available, ConditionStatus::False, Level::Error),
                    cond_cell(o.progressing, ConditionStatus::True, Level::Warn),
                    cond_cell(o.degraded, ConditionStatus::True, Level::Error),
                    cond_cell(o.upgradeable, ConditionStatus::False, Level::Blocked),
                    c(text::age(o.since, app.now)),
                    c(msg),
                ],
                o.level,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::Operators);
    let title = filter_title(
        app,
        Tab::Operators,
        tr!("operators-title", "clusteroperators"),
        d.operators.len(),
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
            cursor: cursor(app, Tab::Operators),
            empty: tr!("operators-none", "no ClusterOperators"),
            preview: app
                .selected_row()
                .and_then(|i| d.operators.get(i))
                .map(|r| r.message.clone()),
        },
    );
}

fn cond_word(s: Option<ConditionStatus>) -> &'static str {
    match s {
        Some(ConditionStatus::True) => "True",
        Some(ConditionStatus::False) => "False",
        Some(ConditionStatus::Unknown) => "Unkn",
        None => "-",
    }
}
