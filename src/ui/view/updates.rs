//! The Updates view: a summary panel (release, channel, update service, retrieval, request,
//! and why there is nothing to offer), the targets table, and the selected target's risks in
//! full (name, message, URL).

use crate::l10n::txt;
use crate::l10n::{tr, trf};
use ratatui::{
    Frame,
    layout::Rect,
    text::Line,
    widgets::{Block, Paragraph},
};

use super::{
    table::{C, Col, TableSpec, c, col, cursor, fill, filter_title, render_table},
    widgets::fit_spans,
};
use crate::ui::{
    app::App,
    layout::{self, UPDATES_LABEL_W},
    model::updates::UpdateKind,
    tab::Tab,
    text,
    theme::Level,
};

pub(super) fn render(app: &App, frame: &mut Frame, body: Rect) {
    let (summary, table, risks) = layout::updates_areas(body, &app.dash);
    render_summary(app, frame, summary);
    render_targets(app, frame, table);
    render_risks(app, frame, risks);
}

fn render_summary(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let u = &app.dash.updates;
    let block = Block::bordered().border_style(p.border).title(Line::styled(
        tr!("updates-service-title", " update service "),
        p.title,
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let w = usize::from(inner.width);
    let label = |l: &str| (format!("{l:<UPDATES_LABEL_W$}"), p.muted);
    let mut lines = Vec::new();
    let channel = if u.channel.is_empty() {
        (tr!("updates-channel-none", "none").to_string(), p.warn)
    } else {
        (u.channel.clone(), p.text)
    };
    let offered = if u.channels.is_empty() {
        String::new()
    } else {
        trf!(
            "updates-release-lists",
            "  (the release lists {channels})",
            channels = u.channels.join(", ")
        )
    };
    let current = match &u.updating_from {
        Some(from) => trf!(
            "updates-updating-from",
            "{current} (updating from {from})   ",
            current = none_dash(&u.current),
            from = from
        ),
        None => format!("{}   ", none_dash(&u.current)),
    };
    lines.push(fit_spans(
        vec![
            label(tr!("updates-label-release", "Release")),
            (current, p.text),
            (tr!("updates-channel", "Channel ").into(), p.muted),
            channel,
            (offered, p.muted),
        ],
        w,
    ));
    let (retrieved, style) = match &u.retrieved {
        None => (tr!("updates-not-reported", "not reported").to_string(), p.muted),
        Some((s, r, _, t)) => (
            trf!(
                "updates-retrieved",
                "{status} ({reason}) for {age}",
                status = s.as_str(),
                reason = none_dash(r),
                age = text::age(*t, app.now)
            ),
            match s {
                crate::openshift::ConditionStatus::True => p.ok,
                crate::openshift::ConditionStatus::False => p.err,
                crate::openshift::ConditionStatus::Unknown => p.warn,
            },
        ),
    };
    // The URL the engine's update-service client actually asked (e.g. the demo's loopback
    // service, or `--update-service`), else the ClusterVersion's `spec.upstream`.
    let used = app
        .engine
        .as_ref()
        .and_then(|e| e.snap.updates.as_ref())
        .map(|f| f.upstream.clone())
        .filter(|url| !url.is_empty());
    let upstream = match used {
        Some(url) if !u.upstream.is_empty() && url != u.upstream => {
            trf!(
                "updates-upstream-instead",
                "{url} (instead of spec.upstream {upstream})",
                url = url,
                upstream = u.upstream
            )
        }
        Some(url) => url,
        None if u.upstream.is_empty() => {
            tr!("updates-default-service", "the default update service").to_string()
        }
        None => u.upstream.clone(),
    };
    lines.push(fit_spans(
        vec![
            label(tr!("updates-label-retrieved", "Retrieved")),
            (retrieved, style),
            (tr!("updates-from", "   from ").into(), p.muted),
            (upstream, p.text),
        ],
        w,
    ));
    let requested = match &u.requested {
        Some((v, i)) if !v.is_empty() => (format!("{v} ({i})"), p.warn),
        Some((_, i)) => (i.clone(), p.warn),
        None => (
            tr!("updates-nothing-requested", "nothing beyond the current release").into(),
            p.muted,
        ),
    };
    let mut req = vec![label(tr!("updates-label-requested", "Requested")), requested];
    if !u.accepted.is_empty() {
        req.push((
            tr!("updates-accepted-risks", "   accepted risks ").into(),
            p.muted,
        ));
        req.push((u.accepted.join(", "), p.warn));
    }
    lines.push(fit_spans(req, w));
    for (note, level) in &u.notes {
        let style = match level {
            Level::Info | Level::Ok => p.text,
            other => p.level(*other),
        };
        for l in text::wrap(note, w.max(8)) {
            lines.push(Line::styled(l, style));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn none_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

fn render_targets(app: &App, frame: &mut Frame, area: Rect) {
    const COLS: [Col; 5] = [
        col(txt!("col-version", "VERSION"), 7, 16).key(),
        col(txt!("col-kind", "KIND"), 11, 11),
        col(txt!("col-recommended", "RECOMMENDED"), 11, 30).hide(2),
        col(txt!("col-risks", "RISKS"), 5, 40),
        fill(txt!("col-image", "IMAGE"), 10).hide(1),
    ];
    let u = &app.dash.updates;
    let rows = u
        .rows
        .iter()
        .map(|r| {
            let mut version = r.release.version.clone();
            if r.requested {
                version.push_str(" *");
            }
            let risks: Vec<&str> = r.risks.iter().map(|k| k.name.as_str()).collect();
            (
                vec![
                    c(version),
                    C(r.kind.word().into(), Some(r.level)),
                    C(r.recommended_word(), Some(r.level)),
                    C(
                        if risks.is_empty() {
                            "-".into()
                        } else {
                            risks.join(", ")
                        },
                        (!risks.is_empty()).then_some(Level::Warn),
                    ),
                    c(&r.release.image),
                ],
                Level::Info,
            )
        })
        .collect();
    let visible = app.visible_rows(Tab::Updates);
    let title = filter_title(
        app,
        Tab::Updates,
        tr!("updates-title", "updates"),
        u.rows.len(),
        visible.len(),
    );
    let empty = if u.notes.is_empty() {
        tr!("updates-none", "no updates offered")
    } else {
        tr!("updates-none-why", "no updates offered: see above why")
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
            cursor: cursor(app, Tab::Updates),
            empty,
            preview: None,
        },
    );
}

fn render_risks(app: &App, frame: &mut Frame, area: Rect) {
    if area.height < 3 {
        return;
    }
    let p = &app.palette;
    let row = app.selected_row().and_then(|i| app.dash.updates.rows.get(i));
    let title = match row {
        Some(r) => {
            // `a` is offered only where there are risks and the cluster allows accepting them.
            let accept = match (r.risks.is_empty(), app.accept_risks_gate()) {
                (true, _) => "",
                (false, Some(true)) => tr!("updates-key-accept", " · a accept risks"),
                (false, _) => tr!(
                    "updates-key-accept-gated",
                    " · a: needs feature gate ClusterUpdateAcceptRisks"
                ),
            };
            trf!(
                "updates-keys",
                " {version} — Enter request{accept} · c channel · x clear ",
                version = r.release.version,
                accept = accept
            )
        }
        None => tr!("updates-keys-none", " c channel · x clear the request ").into(),
    };
    let block = Block::bordered().border_style(p.border).title(Line::styled(
        text::fit(&title, usize::from(area.width.saturating_sub(4))),
        p.title,
    ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let w = usize::from(inner.width).max(8);
    let mut lines: Vec<Line> = Vec::new();
    match row {
        None => lines.push(Line::styled(
            tr!("updates-no-target", "No target selected."),
            p.muted,
        )),
        Some(r) if r.kind == UpdateKind::Recommended => {
            lines.push(Line::styled(
                tr!(
                    "updates-recommended-no-risk",
                    "Recommended: the update service lists no risk for this update."
                ),
                p.ok,
            ));
            if let Some(url) = &r.release.url {
                lines.push(fit_spans(
                    vec![
                        (tr!("updates-release-notes", "Release notes ").into(), p.muted),
                        (url.clone(), p.text),
                    ],
                    w,
                ));
            }
        }
        Some(r) => {
            if let Some((_, _, msg)) = &r.recommended {
                let style = if r.level == Level::Ok { p.ok } else { p.warn };
                // The condition's message usually repeats the risks below: then only its word.
                let repeats = !r.risks.is_empty() && r.risks.iter().all(|k| msg.contains(&k.message));
                let head = if repeats || msg.is_empty() {
                    format!("Recommended={}", r.recommended_word())
                } else {
                    format!("Recommended={}: {msg}", r.recommended_word())
                };
                for l in text::wrap(&head, w) {
                    lines.push(Line::styled(l, style));
                }
            }
            for k in &r.risks {
                let mut head = vec![
                    (tr!("updates-risk", "Risk ").to_string(), p.muted),
                    (k.name.clone(), p.warn),
                ];
                if k.accepted {
                    head.push((tr!("updates-risk-accepted", "  (accepted)").into(), p.muted));
                }
                lines.push(fit_spans(head, w));
                for l in text::wrap(&k.message, w.saturating_sub(2).max(8)) {
                    lines.push(Line::styled(format!("  {l}"), p.text));
                }
                if !k.url.is_empty() {
                    lines.push(fit_spans(vec![("  ".into(), p.text), (k.url.clone(), p.key)], w));
                }
            }
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
