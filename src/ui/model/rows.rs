//! What the tables hold as text and severity, and which rows a filter keeps: state, read by
//! the app (selection, paging) and by the render code alike.

use crate::l10n::tr;
use chrono::{DateTime, Utc};

use super::{Dashboard, HistoryRow};
use crate::ui::{
    engine::{self, EngineModel},
    tab::Tab,
    text,
    theme::Level,
};

pub(crate) fn row_texts(dash: &Dashboard, engine: Option<&EngineModel>, tab: Tab) -> Vec<String> {
    match tab {
        Tab::Overview => dash
            .conditions
            .iter()
            .map(|c| format!("{} {} {} {}", c.type_, c.status, c.reason, c.message))
            .collect(),
        Tab::Operators => dash
            .operators
            .iter()
            .map(|o| format!("{} {} {} {} {}", o.status, o.name, o.version, o.reason, o.message))
            .collect(),
        Tab::Nodes => dash
            .nodes
            .iter()
            .map(|n| {
                format!(
                    "{} {} {} {} {} {}",
                    n.name, n.pool, n.assessment, n.phase, n.version, n.message
                )
            })
            .collect(),
        Tab::History => dash
            .history
            .iter()
            .map(|h| format!("{} {} {}", h.version, h.state, h.image))
            .collect(),
        Tab::Health => dash
            .insights
            .iter()
            .map(|i| format!("{} {} {} {}", i.level_word, i.impact, i.message, i.description))
            .collect(),
        Tab::Updates => dash
            .updates
            .rows
            .iter()
            .map(|r| {
                let risks: Vec<&str> = r.risks.iter().map(|k| k.name.as_str()).collect();
                format!(
                    "{} {} {} {} {}",
                    r.release.version,
                    r.kind.word(),
                    r.recommended_word(),
                    risks.join(" "),
                    r.release.image
                )
            })
            .collect(),
        Tab::Tasks => engine.map_or_else(Vec::new, |e| {
            e.cells
                .iter()
                .map(|c| {
                    let errors: Vec<&str> = c
                        .tasks
                        .iter()
                        .filter_map(|&t| match e.snap.tasks.get(t).map(|t| &t.state) {
                            Some(crate::reconcile::api::TaskState::Failed(err)) => Some(err.as_str()),
                            _ => None,
                        })
                        .collect();
                    format!(
                        "{} {} {} {}",
                        engine::level_label(c.level),
                        c.label(),
                        c.state.word(),
                        errors.join(" ")
                    )
                })
                .collect()
        }),
        Tab::Drift => engine.map_or_else(Vec::new, |e| {
            e.drift
                .iter()
                .map(|d| format!("{} {} {} {}", d.action, d.kind, d.object, d.summary(e.snap.mode)))
                .collect()
        }),
    }
}

/// The severity of each row of `tab`'s table, for sorting.
pub(crate) fn row_levels(dash: &Dashboard, engine: Option<&EngineModel>, tab: Tab) -> Vec<Level> {
    match tab {
        Tab::Overview => dash.conditions.iter().map(|r| r.level).collect(),
        Tab::Operators => dash.operators.iter().map(|r| r.level).collect(),
        Tab::Nodes => dash.nodes.iter().map(|r| r.level).collect(),
        Tab::History => dash.history.iter().map(|r| r.level).collect(),
        Tab::Health => dash.insights.iter().map(|r| r.level).collect(),
        Tab::Updates => dash.updates.rows.iter().map(|r| r.level).collect(),
        Tab::Tasks => engine.map_or_else(Vec::new, |e| {
            e.cells.iter().map(engine::TaskCell::level_style).collect()
        }),
        Tab::Drift => engine.map_or_else(Vec::new, |e| e.drift.iter().map(|d| d.level).collect()),
    }
}

/// Indexes of the rows of `tab` that pass `filter` (`!` prefix inverts), problems first when
/// `by_severity`.
pub(crate) fn visible_rows(
    dash: &Dashboard,
    engine: Option<&EngineModel>,
    tab: Tab,
    filter: &str,
    by_severity: bool,
) -> Vec<usize> {
    let texts = row_texts(dash, engine, tab);
    let (invert, needle) = match filter.strip_prefix('!') {
        Some(rest) => (true, rest.to_lowercase()),
        None => (false, filter.to_lowercase()),
    };
    // A status word typed as the whole filter matches the STATUS column exactly: `/!OK`
    // must not hide a degraded operator whose message happens to contain "ok".
    let status_word = (tab == Tab::Operators)
        .then(|| {
            super::STATUS_WORDS
                .iter()
                .find(|(w, _)| w.eq_ignore_ascii_case(needle.trim()))
                .map(|(w, _)| *w)
        })
        .flatten();
    let mut rows: Vec<usize> = texts
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            if needle.is_empty() {
                return true;
            }
            let hit = match status_word {
                Some(w) => dash.operators.get(*i).is_some_and(|o| o.status == w),
                None => t.to_lowercase().contains(&needle),
            };
            hit != invert
        })
        .map(|(i, _)| i)
        .collect();
    if by_severity {
        let levels = row_levels(dash, engine, tab);
        rows.sort_by_key(|&i| std::cmp::Reverse(levels.get(i).copied().unwrap_or_default()));
    }
    rows
}

/// How long history entry `i` took; for the update in progress, the assessment's duration
/// (the value the Overview and `cvo status` show).
pub(crate) fn history_duration(dash: &Dashboard, now: DateTime<Utc>, i: usize, h: &HistoryRow) -> String {
    if i == 0
        && h.completed.is_none()
        && let Some(d) = dash.completion.as_ref().and_then(|c| c.duration.clone())
    {
        return d;
    }
    let end = h.completed.or((i == 0).then_some(now));
    match (h.started, end) {
        (Some(s), Some(e)) => text::duration(e - s),
        _ => "-".into(),
    }
}

/// The VERIFIED cell of a history entry and what it means (the detail popup's words):
///
/// - `yes`: a release signature was verified when the release was accepted;
/// - `no (local)`: the attached engine accepted the release unsigned because it was
///   registered with it (its own release, a local payload directory, the demo's embedded
///   releases: [`crate::reconcile::api::StatusSnapshot::registered_unverified`]): there was
///   no signature to check;
/// - `no`: no signature was verified when it was accepted (upstream's `verified: false`).
pub fn verified_words(h: &HistoryRow, engine: Option<&EngineModel>) -> (&'static str, String) {
    if h.verified {
        return (
            tr!("verified-yes", "yes"),
            tr!(
                "verified-yes-detail",
                "yes: its release signature was verified when it was accepted"
            )
            .into(),
        );
    }
    let registered = engine.is_some_and(|e| e.snap.registered_unverified.contains(&h.image));
    if registered {
        return (
            tr!("verified-local", "no (local)"),
            tr!(
                "verified-local-detail",
                "no: a release registered with this cvo (its own release, a local payload directory or \
             the demo's embedded releases), which carries no signature to verify; accepted as \
             registered, no check was waived"
            )
            .into(),
        );
    }
    (
        tr!("verified-no", "no"),
        tr!(
            "verified-no-detail",
            "no: no release signature was verified when it was accepted (usual for the release the \
         cluster was installed with; otherwise the update was forced past a failed check, its \
         accepted risks say so, or the CVO verifies no signatures)"
        )
        .into(),
    )
}
