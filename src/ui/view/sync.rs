//! The Overview's engine panel (with an embedded engine).

use crate::l10n::{tr, trf};
use ratatui::{
    Frame,
    layout::Rect,
    style::Modifier,
    text::{Line, Span},
    widgets::{Gauge, Paragraph},
};

use super::widgets::fit_spans;
use crate::ui::{app::App, engine, layout, model, text};

/// The Overview's engine panel: the sync gauge (the snapshot's `fraction`, `done`, `total`),
/// the current run level, the desired release and the current failure.
pub(super) fn render(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let Some(e) = &app.engine else { return };
    let s = &e.snap;
    let block = super::widgets::panel(layout::compact(app.size.1))
        .border_style(p.border)
        .title(Line::styled(tr!("sync-title", " sync (engine) "), p.title));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let (gauge_area, info_area) = layout::split_v(inner, 1);
    let w = usize::from(inner.width);
    if e.in_sync.is_none() && settled(s) {
        // The release is applied and the passes that re-check it find nothing to do: each
        // one running from 0 to 100 % again is not news (and would redraw the idle
        // dashboard), and the ClusterVersion says Progressing=False meanwhile. Watch-only
        // shows how much of the cluster matches instead.
        render_settled(app, frame, gauge_area, info_area);
        return;
    }
    let ratio = match e.in_sync {
        // Watch-only: how much of the cluster matches the payload, never an apply progress.
        Some((n, m)) if m > 0 => n as f64 / m as f64,
        Some(_) => 0.0,
        None => model::clamp_ratio(f64::from(s.fraction)),
    };
    // Tasks that failed only because their operator is still updating are "waiting", as the
    // task graph shows them.
    let waiting = s.only_waiting();
    let following = cluster_cvo_progress(app);
    // The run level being worked on names where the apply is, not a second progress figure:
    // its own counts are in the task graph ([7]).
    let level = match e.current_level() {
        Some(r) => trf!(
            "sync-at-level",
            " · at run level {level}{failed}",
            level = engine::level_label(r.level),
            failed = match r.failed {
                0 => String::new(),
                n if waiting => trf!("sync-level-waiting", " · {n} waiting", n = n),
                n => trf!("sync-level-failed", " · {n} failed", n = n),
            }
        ),
        None if s.total > 0 => tr!("sync-all-levels-done", " · all run levels done").into(),
        None => String::new(),
    };
    let label = match (e.in_sync, &s.payload_error) {
        (_, Some(why)) => trf!(
            "sync-payload-unavailable",
            "payload unavailable: {why}",
            why = text::one_line(why)
        ),
        (Some(_), None) if s.counters.passes == 0 && s.total == 0 => {
            tr!("sync-reading-payload", "watch-only · reading the payload").to_string()
        }
        (Some((n, m)), None) => trf!(
            "sync-watch-in-sync",
            "watch-only · {n} of {m} manifests in sync{drift}",
            n = n,
            m = m,
            drift = match e.drift.len() {
                0 if s.counters.passes == 0 => {
                    tr!("sync-first-comparison", " (first comparison running)").to_string()
                }
                0 => String::new(),
                // While the cluster's own CVO applies the release, what differs is what it has
                // not applied yet, not drift.
                d if following.is_some() => trf!("sync-not-applied-yet", " · {d} not applied yet", d = d),
                d => trf!("sync-would-change", " · {d} would change", d = d),
            }
        ),
        (None, None) => trf!(
            "sync-applied",
            "{done} of {total} manifests applied ({percent}){level}",
            done = s.done,
            total = s.total,
            percent = model::sync_percent_label(f64::from(s.fraction)),
            level = level,
        ),
    };
    let style = if s.payload_error.is_some() || (s.failure.is_some() && !waiting) {
        p.err
    } else {
        p.gauge
    };
    let gauge = Gauge::default()
        .ratio(ratio)
        .label(Span::styled(
            text::fit(&label, w),
            p.text.add_modifier(Modifier::BOLD),
        ))
        .gauge_style(style)
        .use_unicode(true);
    frame.render_widget(gauge, gauge_area);
    let mut spans = vec![(tr!("sync-desired", "Desired ").to_string(), p.muted)];
    spans.push((
        s.desired
            .as_ref()
            .map(|d| {
                if d.version.is_empty() {
                    d.image.clone()
                } else {
                    d.version.clone()
                }
            })
            .unwrap_or_else(|| "-".into()),
        p.text.add_modifier(Modifier::BOLD),
    ));
    spans.push((tr!("sync-pass", "  Pass ").into(), p.muted));
    spans.push((
        format!(
            "{}{}",
            s.counters.passes,
            if s.running {
                tr!("sync-running", " (running)")
            } else {
                ""
            }
        ),
        p.text,
    ));
    if s.attempt > 0 {
        // `attempt` failed passes in a row: the pass running (or next) is retry number
        // `attempt` of the same work.
        spans.push((" · ".into(), p.muted));
        spans.push((trf!("sync-retry", "retry {n}", n = s.attempt), p.warn));
    }
    if let Some((word, progress, nobody)) = following {
        spans.push((format!("  {word} "), p.muted));
        spans.push((progress, if nobody { p.err } else { p.warn }));
    }
    if let Some(f) = &s.failure {
        let (word, style) = if waiting {
            (tr!("sync-waiting", "  Waiting "), p.warn)
        } else {
            (tr!("sync-failing", "  Failing "), p.err)
        };
        spans.push((word.into(), p.muted));
        let msg = if f.reason.is_empty() || waiting {
            text::one_line(&f.message)
        } else {
            format!("{}: {}", f.reason, text::one_line(&f.message))
        };
        spans.push((msg, style));
    }
    frame.render_widget(Paragraph::new(fit_spans(spans, w)), info_area);
}

/// Watch-only while the cluster's ClusterVersion shows an update that this engine does not
/// apply (the in-cluster CVO does; the Lease is not ours): a label, that CVO's progress from
/// the ClusterVersion, e.g. `Cluster's CVO` `updating to 4.16.4 · 31 of 33 operators · history
/// Partial for 1h12m` (the control plane panel and History tab have the details), and whether
/// nobody applies it (the Lease was read free or expired: `Cluster` `update to 4.16.4
/// requested, no CVO holds the Lease · ...`).
fn cluster_cvo_progress(app: &App) -> Option<(&'static str, String, bool)> {
    let e = app.engine.as_ref()?;
    e.in_sync?;
    let lease = e.snap.lease.as_ref();
    if lease.is_some_and(|l| l.ours) {
        return None;
    }
    let nobody = lease.is_some_and(|l| l.error.is_none() && (l.holder.is_none() || !l.alive));
    let d = &app.dash;
    let target = d.target_version.as_ref()?;
    let (word, mut out) = if nobody {
        (
            tr!("sync-cluster", "Cluster"),
            trf!(
                "sync-no-cvo",
                "update to {target} requested, no CVO holds the Lease",
                target = target
            ),
        )
    } else {
        (
            tr!("sync-cluster-cvo", "Cluster's CVO"),
            trf!("sync-cvo-updating", "updating to {target}", target = target),
        )
    };
    if let Some(c) = &d.completion {
        out.push_str(&trf!(
            "sync-cvo-operators",
            " · {updated} of {total} operators",
            updated = c.updated,
            total = c.total
        ));
    }
    if let Some(h) = d.history.first() {
        out.push_str(&trf!(
            "sync-cvo-history",
            " · history {state} for {age}",
            state = h.state,
            age = text::age(h.started, app.now)
        ));
    }
    Some((word, out, nobody))
}

/// Whether the engine reconciles an applied release with nothing failing: the gauge then
/// shows the release as applied instead of each re-checking pass.
fn settled(s: &crate::reconcile::api::StatusSnapshot) -> bool {
    s.state == crate::reconcile::api::EngineState::Reconciling
        && s.failure.is_none()
        && s.attempt == 0
        && s.total > 0
}

fn render_settled(app: &App, frame: &mut Frame, gauge_area: Rect, info_area: Rect) {
    let p = &app.palette;
    let Some(e) = &app.engine else { return };
    let s = &e.snap;
    let w = usize::from(gauge_area.width);
    let label = trf!(
        "sync-settled",
        "all {total} manifests applied · reconciling",
        total = s.total
    );
    let gauge = Gauge::default()
        .ratio(1.0)
        .label(Span::styled(
            text::fit(&label, w),
            p.text.add_modifier(Modifier::BOLD),
        ))
        .gauge_style(p.gauge)
        .use_unicode(true);
    frame.render_widget(gauge, gauge_area);
    let desired = s
        .desired
        .as_ref()
        .map(|d| {
            if d.version.is_empty() {
                d.image.clone()
            } else {
                d.version.clone()
            }
        })
        .unwrap_or_else(|| "-".into());
    // No pass counter here: it would change the idle screen every pass (the event log, `e`,
    // lists the passes).
    let spans = vec![
        (tr!("sync-desired", "Desired ").to_string(), p.muted),
        (desired, p.text.add_modifier(Modifier::BOLD)),
        (
            tr!(
                "sync-settled-detail",
                "  applied; re-checked every resync interval"
            )
            .into(),
            p.muted,
        ),
    ];
    frame.render_widget(Paragraph::new(fit_spans(spans, w)), info_area);
}
