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
use crate::l10n::{tr, trf};
use crate::ui::{app::App, engine, model::feed, tab::Tab, text, theme::Level};

pub(super) fn render_header(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let d = &app.dash;
    let w = usize::from(area.width);
    let feed = match &app.state.feed {
        crate::cluster::FeedStatus::Static => {
            trf!(
                "header-feed-as-of",
                "{feed} as of {at}",
                feed = d.feed.0,
                at = app.now.format("%Y-%m-%d %H:%M:%S UTC").to_string()
            )
        }
        _ => d.feed.0.clone(),
    };
    // The mode comes second, so a narrow terminal cuts the source and the clock, never it.
    let mode = match &app.engine {
        Some(e) => (engine::mode_word(e.snap.mode).to_string(), p.mode(e.snap.mode)),
        None => (tr!("mode-watch-only", "watch-only").into(), p.muted),
    };
    let mut l1 = vec![("cvo".into(), p.title), (" │ ".into(), p.muted), mode];
    if let Some(b) = &app.banner {
        l1.push((" │ ".into(), p.muted));
        l1.push((b.clone(), p.warn.add_modifier(Modifier::BOLD)));
    }
    l1.extend([
        (" │ ".into(), p.muted),
        (d.source.clone(), p.text),
        (" │ ".into(), p.muted),
        (feed, p.level(d.feed.1)),
        (sim_clock(app), p.warn),
    ]);
    let l1 = fit_spans(l1, w);
    let mut v = vec![(tr!("header-version", "Version ").to_string(), p.muted)];
    match &d.current_version {
        Some(c) => v.push((c.clone(), p.text.add_modifier(Modifier::BOLD))),
        None if d.no_data => v.push((
            tr!("header-version-unknown", "unknown (no data yet)").into(),
            p.warn,
        )),
        None => v.push((tr!("header-no-completed", "no completed update").into(), p.warn)),
    }
    v.push((tr!("header-target", "  Target ").into(), p.muted));
    v.push((
        d.target_version.clone().unwrap_or_else(|| "-".into()),
        p.text.add_modifier(Modifier::BOLD),
    ));
    v.push((tr!("header-channel", "  Channel ").into(), p.muted));
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
            tr!(
                "header-no-data",
                "Operators, nodes and insights: unknown until the API server answers"
            )
            .into(),
            p.warn,
        ));
    }
    if !d.no_data
        && let Some(s) = &h.secondary
    {
        l4.push((format!("{s} · "), p.warn));
    }
    if !d.no_data {
        l4.push((tr!("header-operators", "Operators ").into(), p.muted));
        l4.push((d.operator_health.clone(), p.text));
        let errors = d.insights.iter().filter(|i| i.level == Level::Error).count();
        l4.push((tr!("header-insights", " · Insights ").into(), p.muted));
        let ins_style = if errors > 0 { p.err } else { p.text };
        let line = match crate::l10n::current() {
            crate::l10n::Lang::En => {
                let plural = if errors == 1 { "" } else { "s" };
                format!("{} ({errors} error{plural})", d.insights.len())
            }
            crate::l10n::Lang::Ru => trf!(
                "header-insight-errors",
                "{count} ({errors} errors)",
                count = d.insights.len(),
                errors = errors
            ),
        };
        l4.push((line, ins_style));
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
        Some(s) if app.follows_clock() => {
            trf!("header-sim-clock", " │ simulated clock ×{s}", s = s.to_string())
        }
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
        (tr!("header-engine", "Engine ").to_string(), p.muted),
        (state, p.level(level).add_modifier(Modifier::BOLD)),
        (tr!("header-lease", "  Lease ").into(), p.muted),
    ];
    match (&s.lease_holder, s.leader) {
        _ if let Some(l) = &s.lease => {
            let (words, level) = engine::lease_words(l, app.now, &app.clock);
            // Our own identity (host name and a UUID) would push the last command off the
            // line; `m` shows it.
            let words = if l.ours && l.error.is_none() {
                tr!("header-lease-ours", "we hold it").to_string()
            } else {
                words
            };
            v.push((words, p.level(level)));
        }
        (_, true) => v.push((
            trf!(
                "header-we-lead",
                "{holder} (we lead)",
                holder = s.lease_holder.as_deref().unwrap_or(tr!("header-us", "us"))
            ),
            p.ok,
        )),
        (Some(h), false) => v.push((trf!("header-not-us", "{h} (not us)", h = h), p.warn)),
        (None, false) => v.push((tr!("header-lease-none", "none").into(), p.muted)),
    }
    if let Some(pull) = &s.payload_pull {
        v.extend([
            (tr!("header-pulling", "  Pulling ").into(), p.muted),
            (pull.describe(), p.warn),
        ]);
    }
    if let Some(err) = &s.last_error {
        v.push((tr!("header-error", "  Error ").into(), p.muted));
        v.push((text::one_line(err), p.err));
    } else if let Some(c) = &s.last_command {
        v.push((tr!("header-last-command", "  Last command ").into(), p.muted));
        match &c.result {
            Ok(m) if m.is_empty() => v.push((
                trf!("header-command-ok", "{command}: ok", command = c.command),
                p.ok,
            )),
            Ok(m) => v.push((format!("{}: {}", c.command, text::one_line(m)), p.ok)),
            Err(why) => v.push((
                trf!(
                    "header-command-refused",
                    "{command} refused: {why}",
                    command = c.command,
                    why = text::one_line(why)
                ),
                p.err,
            )),
        }
    }
    fit_spans(v, w)
}

pub(super) fn render_tabs(app: &App, frame: &mut Frame, area: Rect) {
    let w = usize::from(area.width);
    let forms = [TabForm::Full, TabForm::Compact, TabForm::Tight, TabForm::Tightest];
    let spans = forms
        .iter()
        .map(|f| tab_spans(app, *f))
        .find(|s| s.iter().map(|(t, _)| text::width(t)).sum::<usize>() <= w)
        .unwrap_or_else(|| tab_spans(app, TabForm::Tightest));
    frame.render_widget(Paragraph::new(fit_spans(spans, w)), area);
}

/// How much room the tab line takes: the first form that fits the terminal is used.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TabForm {
    /// ` [1] Overview   [2] Operators (33)   ...`: every count, padded.
    Full,
    /// `[1] Overview [2] Operators (33) [3] Nodes ...`: the count of the tab in front only.
    Compact,
    /// `[1]Overview [2]Operators ...`: no count.
    Tight,
    /// `[1]Overview[2]Operators...`: no gap (eight tabs on 80 columns).
    Tightest,
}

/// The tab line: each view's key as a key (`[6]`, in the key style) and its title, with its
/// count in parentheses (`Updates (2)`) where the form has room for it.
fn tab_spans(app: &App, form: TabForm) -> Vec<(String, Style)> {
    let p = &app.palette;
    let d = &app.dash;
    let mut spans = Vec::new();
    for (i, t) in app.tabs().iter().enumerate() {
        let count = match t {
            _ if matches!(form, TabForm::Tight | TabForm::Tightest) => None,
            _ if form == TabForm::Compact && *t != app.tab => None,
            Tab::Overview => None,
            Tab::Tasks => Some(app.engine.as_ref().map_or(0, |e| e.cells.len()).to_string()),
            Tab::Drift => Some(app.engine.as_ref().map_or(0, |e| e.drift.len()).to_string()),
            _ if d.no_data => Some("?".into()),
            Tab::Operators => Some(d.operators.len().to_string()),
            Tab::Nodes => Some(d.nodes.len().to_string()),
            Tab::History => Some(d.history.len().to_string()),
            Tab::Health => Some(d.insights.len().to_string()),
            Tab::Updates => Some(d.updates.rows.len().to_string()),
        };
        let front = *t == app.tab;
        let reverse = |s: Style| {
            if front {
                s.add_modifier(Modifier::REVERSED)
            } else {
                s
            }
        };
        let title_style = reverse(if front { p.title } else { p.text });
        let pad = if form == TabForm::Full { " " } else { "" };
        let gap = if matches!(form, TabForm::Tight | TabForm::Tightest) {
            ""
        } else {
            " "
        };
        spans.push((format!("{pad}[{}]", i + 1), reverse(p.key)));
        let title = match count {
            Some(n) => format!("{gap}{} ({n}){pad}", t.title()),
            None => format!("{gap}{}{pad}", t.title()),
        };
        spans.push((title, title_style));
        if form != TabForm::Tightest {
            spans.push((" ".into(), p.text));
        }
    }
    // No separator after the last tab.
    if spans.last().is_some_and(|(t, _)| t == " ") {
        spans.pop();
    }
    spans
}
