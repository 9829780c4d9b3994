//! The header (source and feed, versions and channel, headline, progress and health, the
//! engine line, the API error) and the tab line.

use ratatui::{
    Frame,
    layout::Rect,
    style::{Modifier, Style},
    text::Line,
    widgets::Paragraph,
};

use super::widgets::fit_spans;
use crate::ui::{app::App, engine, model::feed, tab::Tab, text, theme::Level};

pub(super) fn render_header(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let d = &app.dash;
    let w = usize::from(area.width);
    let feed = match &app.state.feed {
        crate::cluster::FeedStatus::Static => {
            format!("{} as of {}", d.feed.0, app.now.format("%Y-%m-%d %H:%M:%S UTC"))
        }
        _ => d.feed.0.clone(),
    };
    let l1 = fit_spans(
        vec![
            ("cvo".into(), p.title),
            (" │ ".into(), p.muted),
            (d.source.clone(), p.text),
            (" │ ".into(), p.muted),
            (feed, p.level(d.feed.1)),
            (sim_clock(app), p.warn),
            match &app.engine {
                Some(_) => (" │ ".into(), p.muted),
                None => (" │ watch-only".into(), p.muted),
            },
        ]
        .into_iter()
        .chain(
            app.engine
                .as_ref()
                .map(|e| (engine::mode_word(e.snap.mode).to_string(), p.mode(e.snap.mode))),
        )
        .collect(),
        w,
    );
    let mut v = vec![("Version ".to_string(), p.muted)];
    match &d.current_version {
        Some(c) => v.push((c.clone(), p.text.add_modifier(Modifier::BOLD))),
        None if d.no_data => v.push(("unknown (no data yet)".into(), p.warn)),
        None => v.push(("no completed update".into(), p.warn)),
    }
    v.push(("  Target ".into(), p.muted));
    v.push((
        d.target_version.clone().unwrap_or_else(|| "-".into()),
        p.text.add_modifier(Modifier::BOLD),
    ));
    v.push(("  Channel ".into(), p.muted));
    v.push((d.channel.clone().unwrap_or_else(|| "-".into()), p.text));
    let l2 = fit_spans(v, w);
    let h = &d.headline;
    let mut l3 = Vec::new();
    if !h.label.is_empty() {
        l3.push((format!("{} ", h.label), p.muted));
    }
    l3.extend([
        (h.word.clone(), p.level(h.level).add_modifier(Modifier::BOLD)),
        ("  ".into(), p.text),
        (h.detail.clone(), p.text),
    ]);
    let l3 = fit_spans(l3, w);
    let mut l4 = Vec::new();
    if d.no_data {
        l4.push((
            "Operators, nodes and insights: unknown until the API server answers".into(),
            p.warn,
        ));
    }
    if !d.no_data
        && let Some(s) = &h.secondary
    {
        l4.push((format!("{s} · "), p.warn));
    }
    if !d.no_data {
        l4.push(("Operators ".into(), p.muted));
        l4.push((d.operator_health.clone(), p.text));
        let errors = d.insights.iter().filter(|i| i.level == Level::Error).count();
        l4.push((" · Insights ".into(), p.muted));
        let ins_style = if errors > 0 { p.err } else { p.text };
        let plural = if errors == 1 { "" } else { "s" };
        l4.push((
            format!("{} ({errors} error{plural})", d.insights.len()),
            ins_style,
        ));
    }
    let l4 = fit_spans(l4, w);
    let mut lines = vec![l1, l2, l3, l4];
    if let Some(e) = &app.engine {
        lines.push(engine_line(app, e, w));
    }
    if let Some(e) = feed::feed_error(&app.state.feed) {
        lines.push(fit_spans(
            vec![(
                feed::feed_error_line(e, app.now),
                p.err.add_modifier(Modifier::BOLD),
            )],
            w,
        ));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// ` │ simulated clock ×10` when ages follow the demo's simulated clock, else empty; then
/// ` │ registry 127.0.0.1:5000` (or ` │ embedded releases`) in the demo.
fn sim_clock(app: &App) -> String {
    let clock = match app.clock.speed() {
        Some(s) if app.follows_clock() => format!(" │ simulated clock ×{s}"),
        _ => String::new(),
    };
    match &app.release_source {
        Some(r) => format!("{clock} │ {r}"),
        None => clock,
    }
}

/// The engine line of the header: state, lease, last command (or engine error).
fn engine_line(app: &App, e: &engine::EngineModel, w: usize) -> Line<'static> {
    let p = &app.palette;
    let s = &e.snap;
    let (state, level) = engine::shown_state(s);
    let mut v = vec![
        ("Engine ".to_string(), p.muted),
        (state, p.level(level).add_modifier(Modifier::BOLD)),
        ("  Lease ".into(), p.muted),
    ];
    match (&s.lease_holder, s.leader) {
        _ if let Some(l) = &s.lease => {
            let (words, level) = engine::lease_words(l, app.now, &app.clock);
            // Our own identity (host name and a UUID) would push the last command off the
            // line; `m` shows it.
            let words = if l.ours && l.error.is_none() {
                "we hold it".to_string()
            } else {
                words
            };
            v.push((words, p.level(level)));
        }
        (_, true) => v.push((
            format!("{} (we lead)", s.lease_holder.as_deref().unwrap_or("us")),
            p.ok,
        )),
        (Some(h), false) => v.push((format!("{h} (not us)"), p.warn)),
        (None, false) => v.push(("none".into(), p.muted)),
    }
    if let Some(pull) = &s.payload_pull {
        v.extend([("  Pulling ".into(), p.muted), (pull.describe(), p.warn)]);
    }
    if let Some(err) = &s.last_error {
        v.push(("  Error ".into(), p.muted));
        v.push((text::one_line(err), p.err));
    } else if let Some(c) = &s.last_command {
        v.push(("  Last command ".into(), p.muted));
        match &c.result {
            Ok(m) if m.is_empty() => v.push((format!("{}: ok", c.command), p.ok)),
            Ok(m) => v.push((format!("{}: {}", c.command, text::one_line(m)), p.ok)),
            Err(why) => v.push((format!("{} refused: {}", c.command, text::one_line(why)), p.err)),
        }
    }
    fit_spans(v, w)
}

pub(super) fn render_tabs(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let d = &app.dash;
    let w = usize::from(area.width);
    // Full labels (` 1 Overview   2 Operators[33] ...`) when they fit; otherwise (seven tabs on
    // a narrow terminal) single spaces and the count of the tab in front only.
    let form = |compact: bool| -> Vec<(String, Style)> {
        let mut spans = Vec::new();
        for (i, t) in app.tabs().iter().enumerate() {
            let count = match t {
                _ if compact && *t != app.tab => String::new(),
                Tab::Overview => String::new(),
                Tab::Tasks => format!("[{}]", app.engine.as_ref().map_or(0, |e| e.cells.len())),
                Tab::Drift => format!("[{}]", app.engine.as_ref().map_or(0, |e| e.drift.len())),
                _ if d.no_data => "[?]".into(),
                Tab::Operators => format!("[{}]", d.operators.len()),
                Tab::Nodes => format!("[{}]", d.nodes.len()),
                Tab::History => format!("[{}]", d.history.len()),
                Tab::Health => format!("[{}]", d.insights.len()),
                Tab::Updates => format!("[{}]", d.updates.rows.len()),
            };
            let label = if compact {
                format!("{} {}{count}", i + 1, t.title())
            } else {
                format!(" {} {}{count} ", i + 1, t.title())
            };
            let style = if *t == app.tab {
                p.title.add_modifier(Modifier::REVERSED)
            } else {
                p.text
            };
            spans.push((label, style));
            spans.push((" ".into(), p.text));
        }
        spans
    };
    let full = form(false);
    let width: usize = full.iter().map(|(t, _)| text::width(t)).sum();
    let spans = if width <= w + 1 { full } else { form(true) };
    frame.render_widget(Paragraph::new(fit_spans(spans, w)), area);
}
