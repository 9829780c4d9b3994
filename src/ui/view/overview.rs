//! The Overview: the engine sync panel (with an engine), control-plane completion, the
//! ClusterVersion conditions, and, when there is room, insights and pools.

use crate::l10n::{tr, trf, txt};
use ratatui::{
    Frame,
    layout::Rect,
    style::Modifier,
    text::{Line, Span},
    widgets::{Gauge, Paragraph},
};

use super::{
    health, nodes, sync,
    table::{C, Col, TableSpec, c, col, cursor, fill, filter_title, render_table},
    widgets::fit_spans,
};
use crate::ui::{
    app::App,
    layout,
    model::{self, feed},
    tab::Tab,
    text,
    theme::Level,
};

pub(super) fn render(app: &App, frame: &mut Frame, body: Rect) {
    let plan = layout::overview(app.engine.is_some(), body, app.size.1, &app.dash);
    if plan.sync.height > 0 {
        sync::render(app, frame, plan.sync);
    }
    if plan.hint.height > 0 {
        // One line says what is below the fold and how to see it.
        let keys: Vec<&str> = plan
            .hidden
            .iter()
            .map(|h| if *h == "pools" { "[3]" } else { "[5]" })
            .collect();
        let hidden: Vec<&str> = plan
            .hidden
            .iter()
            .map(|h| match *h {
                "pools" => tr!("overview-hidden-pools", "pools"),
                "health" => tr!("overview-hidden-health", "health"),
                other => other,
            })
            .collect();
        let msg = trf!(
            "overview-more-below",
            "more below: {hidden} — enlarge or press {keys}",
            hidden = hidden.join(", "),
            keys = keys.join("/")
        );
        frame.render_widget(
            Paragraph::new(fit_spans(vec![(msg, app.palette.warn)], usize::from(body.width))),
            plan.hint,
        );
    }
    let (completion, conditions, insights, pools) =
        (plan.completion, plan.conditions, plan.insights, plan.pools);
    render_completion(app, frame, completion);
    const COLS: [Col; 5] = [
        col(txt!("col-type", "TYPE"), 8, 22).key(),
        col(txt!("col-status", "STATUS"), 7, 7),
        col(txt!("col-reason", "REASON"), 6, 28).hide(2),
        col(txt!("col-since", "SINCE"), 5, 7).hide(1).whole(),
        fill(txt!("col-message", "MESSAGE"), 10),
    ];
    let d = &app.dash;
    let rows = d
        .conditions
        .iter()
        .map(|r| {
            let status_level = if r.level == Level::Ok {
                Some(Level::Ok)
            } else {
                None
            };
            (
                vec![
                    c(&r.type_),
                    C(r.status.as_str().into(), status_level),
                    c(if r.reason.is_empty() { "-" } else { &r.reason }),
                    c(text::age(r.since, app.now)),
                    c(text::one_line(&r.message)),
                ],
                r.level,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::Overview);
    let title = filter_title(
        app,
        Tab::Overview,
        tr!("overview-conditions-title", "clusterversion conditions"),
        d.conditions.len(),
        visible.len(),
    );
    render_table(
        app,
        frame,
        conditions,
        TableSpec {
            title,
            cols: &COLS,
            rows,
            visible,
            cursor: cursor(app, Tab::Overview),
            empty: tr!("overview-no-conditions", "no ClusterVersion conditions"),
            preview: app
                .selected_row()
                .and_then(|i| d.conditions.get(i))
                .map(|r| r.message.clone()),
        },
    );
    if insights.height > 0 {
        health::render(app, frame, insights, false);
    }
    if pools.height > 0 {
        nodes::render_pools(app, frame, pools, tr!("overview-pools-note", " ([3] nodes)"));
    }
}

fn render_completion(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let d = &app.dash;
    let block = super::widgets::panel(layout::compact(app.size.1))
        .border_style(p.border)
        .title(Line::styled(
            tr!("overview-control-plane", " control plane "),
            p.title,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let (gauge_area, info_area) = layout::split_v(inner, 1);
    let (info_area, updates_area) = if d.completion.is_some() {
        layout::split_v(info_area, 1)
    } else {
        (Rect::default(), info_area)
    };
    let w = usize::from(inner.width);
    if let Some(msg) = feed::waiting_long(&app.dash, &app.state.feed, app.now) {
        let style = if feed::feed_error(&app.state.feed).is_some() {
            p.err
        } else {
            p.warn
        };
        let lines: Vec<Line> = text::wrap(&msg, w)
            .into_iter()
            .take(usize::from(inner.height))
            .map(|l| Line::styled(l, style))
            .collect();
        frame.render_widget(Paragraph::new(lines), inner);
        return;
    }
    if !d.no_data {
        let (line, level) = d.updates.summary();
        let style = match level {
            Level::Info => p.text,
            other => p.level(other),
        };
        frame.render_widget(Paragraph::new(fit_spans(vec![(line, style)], w)), updates_area);
    }
    match &d.completion {
        Some(comp) => {
            // One figure, labelled; the operators on their way are named by count only when
            // there are some.
            let mut label = trf!(
                "overview-operators-updated",
                "{updated} of {total} operators updated ({percent})",
                updated = comp.updated,
                total = comp.total,
                percent = model::percent_label(comp.ratio),
            );
            if comp.updating > 0 {
                let n = comp.updating;
                label.push_str(&trf!("overview-updating", " · {n} updating", n = n));
            }
            if comp.waiting > 0 {
                let n = comp.waiting;
                label.push_str(&trf!("overview-waiting", " · {n} waiting", n = n));
            }
            let gauge = Gauge::default()
                .ratio(model::clamp_ratio(comp.ratio))
                .label(Span::styled(
                    text::fit(&label, w),
                    p.text.add_modifier(Modifier::BOLD),
                ))
                .gauge_style(p.gauge)
                .use_unicode(true);
            frame.render_widget(gauge, gauge_area);
            let mut spans = Vec::new();
            if let Some(dur) = &comp.duration {
                spans.push((tr!("overview-duration", "Duration ").into(), p.muted));
                spans.push((format!("{dur}  "), p.text));
            }
            spans.push((tr!("overview-estimate", "Est. time remaining ").into(), p.muted));
            spans.push((comp.estimate.clone(), p.text));
            frame.render_widget(Paragraph::new(fit_spans(spans, w)), info_area);
        }
        None => {
            let msg = match &d.current_version {
                Some(v) => trf!(
                    "overview-no-update",
                    "No update in progress: the cluster runs {v}.",
                    v = v
                ),
                None => tr!(
                    "overview-no-update-no-history",
                    "No update in progress and no completed update in history."
                )
                .into(),
            };
            frame.render_widget(Paragraph::new(fit_spans(vec![(msg, p.ok)], w)), gauge_area);
        }
    }
}
