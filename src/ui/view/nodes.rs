//! The Nodes view: MachineConfigPools above, nodes below (pools also show on the Overview).

use crate::l10n::{tr, txt};
use ratatui::{Frame, layout::Rect};

use super::table::{C, Col, TableSpec, c, col, cursor, fill, filter_title, render_table};
use crate::ui::{app::App, layout, model, tab::Tab, text, theme::Level};

pub(super) fn render(app: &App, frame: &mut Frame, body: Rect) {
    let (pools_area, nodes_area) = layout::nodes_areas(body, &app.dash);
    render_pools(app, frame, pools_area, "");
    let d = &app.dash;
    const COLS: [Col; 7] = [
        col(txt!("col-name", "NAME"), 12, 45).key(),
        col(txt!("col-pool", "POOL"), 6, 12).hide(2),
        col(txt!("col-assessment", "ASSESSMENT"), 11, 11),
        col(txt!("col-phase", "PHASE"), 9, 9).hide(3),
        col(txt!("col-version", "VERSION"), 7, 20).whole(),
        col(txt!("col-est", "EST"), 4, 5).hide(1).whole(),
        fill(txt!("col-message", "MESSAGE"), 10).hide(4),
    ];
    let rows = d
        .nodes
        .iter()
        .map(|n| {
            (
                vec![
                    c(&n.name),
                    c(&n.pool),
                    C(n.assessment.clone(), Some(n.level)),
                    c(&n.phase),
                    c(&n.version),
                    c(&n.estimate),
                    c(text::one_line(&n.message)),
                ],
                n.level,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::Nodes);
    let title = filter_title(
        app,
        Tab::Nodes,
        tr!("nodes-title", "nodes"),
        d.nodes.len(),
        visible.len(),
    );
    render_table(
        app,
        frame,
        nodes_area,
        TableSpec {
            title,
            cols: &COLS,
            rows,
            visible,
            cursor: cursor(app, Tab::Nodes),
            empty: tr!("nodes-none", "no nodes"),
            preview: app
                .selected_row()
                .and_then(|i| d.nodes.get(i))
                .map(|r| r.message.clone()),
        },
    );
}

pub(super) fn render_pools(app: &App, frame: &mut Frame, area: Rect, note: &str) {
    const POOL_COLS: [Col; 4] = [
        col(txt!("col-pool", "POOL"), 6, 24),
        col(txt!("col-assessment", "ASSESSMENT"), 11, 11),
        col(txt!("col-completion", "COMPLETION"), 10, 14),
        fill(txt!("col-status", "STATUS"), 10),
    ];
    let d = &app.dash;
    let pool_rows: Vec<(Vec<C>, Level)> = d
        .pools
        .iter()
        .map(|pr| {
            #[allow(clippy::cast_precision_loss)]
            let pct = if pr.total == 0 {
                0.0
            } else {
                pr.updated as f64 / pr.total as f64
            };
            let completion = if pr.total == 0 {
                "-".into()
            } else {
                format!(
                    "{:.0}% ({}/{})",
                    model::clamp_ratio(pct) * 100.0,
                    pr.updated,
                    pr.total
                )
            };
            (
                vec![
                    c(&pr.name),
                    C(pr.assessment.clone(), Some(pr.level)),
                    c(completion),
                    c(&pr.status),
                ],
                pr.level,
            )
        })
        .collect();
    render_table(
        app,
        frame,
        area,
        TableSpec {
            title: if d.no_data {
                format!(" machineconfigpools[?]{note} ")
            } else {
                format!(" machineconfigpools[{}]{note} ", d.pools.len())
            },
            cols: &POOL_COLS,
            visible: (0..pool_rows.len()).collect(),
            rows: pool_rows,
            cursor: None,
            empty: tr!("pools-none", "no MachineConfigPools"),
            preview: None,
        },
    );
}
