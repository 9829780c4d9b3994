//! Every word the fleet view shows, in one place: titles, column headers, state words, cell
//! texts, the detail lines and the key hints, each through the catalogue ([`crate::l10n`]:
//! English as written here, Russian from `src/l10n/ru/*.ftl`).

use crate::{
    assess::fleet::{FleetRow, RowState, SortKey},
    l10n::{Text, tr, trf, txt},
};

/// The title at the start of the header line.
pub const TITLE: &str = "cvo fleet";

/// Column headers, in column order: context, state, version, channel, desired update,
/// progress, available updates, conditional updates (risks), operators degraded /
/// unavailable, the CVO Lease holder.
pub const HEADERS: [Text; 10] = [
    txt!("fleet-col-context", "CONTEXT"),
    txt!("fleet-col-state", "STATE"),
    txt!("fleet-col-version", "VERSION"),
    txt!("fleet-col-channel", "CHANNEL"),
    txt!("fleet-col-desired", "DESIRED"),
    txt!("fleet-col-progress", "PROGRESS"),
    txt!("fleet-col-updates", "UPD"),
    txt!("fleet-col-conditional", "COND"),
    txt!("fleet-col-operators", "OPERATORS"),
    txt!("fleet-col-lease", "LEASE"),
];

/// A row's state in one or two words.
pub fn state(s: RowState) -> &'static str {
    match s {
        RowState::Unreachable => tr!("fleet-state-unreachable", "unreachable"),
        RowState::Denied => tr!("fleet-state-denied", "denied"),
        RowState::Failing => tr!("fleet-state-failing", "failing"),
        RowState::Degraded => tr!("fleet-state-degraded", "degraded"),
        RowState::Updating => tr!("fleet-state-updating", "updating"),
        RowState::NoClusterVersion => tr!("fleet-state-no-cv", "no ClusterVersion"),
        RowState::Connecting => tr!("fleet-state-connecting", "connecting"),
        RowState::UpToDate => tr!("fleet-state-up-to-date", "up to date"),
    }
}

/// The sort key's name in the header.
pub fn sort(k: SortKey) -> &'static str {
    match k {
        SortKey::Name => tr!("fleet-sort-name", "name"),
        SortKey::Version => tr!("fleet-sort-version", "version"),
        SortKey::State => tr!("fleet-sort-state", "state"),
    }
}

/// An empty cell.
pub const NONE: &str = "-";

/// The header line after the title: how many clusters, how many in each state that needs
/// attention, the sort key and the filter.
pub fn summary(rows: &[FleetRow], shown: usize, sort_key: SortKey, filter: &str) -> String {
    let count = |s: RowState| rows.iter().filter(|r| r.state == s).count();
    let mut parts = vec![trf!("fleet-summary-clusters", "{n} clusters", n = rows.len())];
    for s in [
        RowState::Unreachable,
        RowState::Denied,
        RowState::Failing,
        RowState::Degraded,
        RowState::Updating,
        RowState::Connecting,
        RowState::UpToDate,
    ] {
        let n = count(s);
        if n > 0 {
            parts.push(format!("{n} {}", state(s)));
        }
    }
    parts.push(trf!("fleet-summary-sort", "sort: {key}", key = sort(sort_key)));
    if !filter.is_empty() {
        parts.push(trf!(
            "fleet-summary-filter",
            "filter: {filter} ({shown} shown)",
            filter = filter,
            shown = shown
        ));
    }
    parts.join(" · ")
}

/// The PROGRESS cell: the percentage, and the control-plane assessment when it is not
/// plain progress (`45% Stalled`).
pub fn progress(r: &FleetRow) -> String {
    match (r.progress_percent, r.assessment.as_deref()) {
        (Some(p), Some(a)) if a != "Progressing" => format!("{p:.0}% {a}"),
        (Some(p), _) => format!("{p:.0}%"),
        (None, _) => NONE.to_owned(),
    }
}

/// The CONDITIONAL cell: conditional updates and their distinct risks (`2 (3 risks)`).
pub fn conditional(r: &FleetRow) -> String {
    match (r.updates_conditional, r.conditional_risks) {
        (0, _) => "0".to_owned(),
        (n, k) => trf!("fleet-cell-conditional", "{n} ({k} risks)", n = n, k = k),
    }
}

/// The OPERATORS cell: degraded and unavailable counts, or `ok` (`-` before any answer).
pub fn operators(r: &FleetRow) -> String {
    match (r.operators, r.operators_degraded, r.operators_unavailable) {
        (0, _, _) => NONE.to_owned(),
        (_, 0, 0) => tr!("fleet-cell-operators-ok", "ok").to_owned(),
        (_, d, 0) => trf!("fleet-cell-degraded", "{d} degraded", d = d),
        (_, 0, u) => trf!("fleet-cell-unavailable", "{u} unavail.", u = u),
        (_, d, u) => trf!(
            "fleet-cell-degraded-unavailable",
            "{d} deg, {u} unav",
            d = d,
            u = u
        ),
    }
}

/// The LEASE cell: the holder, marked when it no longer renews.
pub fn lease(r: &FleetRow) -> String {
    match (&r.lease_holder, r.lease_alive) {
        (Some(h), true) => h.clone(),
        (Some(h), false) => trf!("fleet-cell-lease-expired", "{h} (expired)", h = h),
        (None, _) => NONE.to_owned(),
    }
}

/// The detail lines of the selected cluster: where it is, and what is wrong (or the
/// desired update).
pub fn detail(r: &FleetRow) -> Vec<String> {
    let mut out = vec![format!(
        "{}: {}",
        r.context,
        if r.server.is_empty() {
            NONE
        } else {
            r.server.as_str()
        }
    )];
    if let Some(e) = &r.error {
        out.push(format!("{}: {e}", state(r.state)));
    } else if let Some(f) = &r.failing {
        out.push(format!("Failing: {}: {}", f.reason, f.message));
    } else if let Some(d) = &r.desired {
        out.push(trf!(
            "fleet-detail-updating",
            "updating to {d} ({progress})",
            d = d,
            progress = progress(r)
        ));
    } else if r.state == RowState::Connecting {
        out.push(
            tr!(
                "fleet-detail-connecting",
                "waiting for the API server's first answer"
            )
            .to_owned(),
        );
    } else if r.state == RowState::NoClusterVersion {
        out.push(
            tr!(
                "fleet-detail-no-cv",
                "no ClusterVersion: not an OpenShift cluster?"
            )
            .to_owned(),
        );
    }
    out
}

/// Shown instead of the table when the filter leaves no cluster.
pub const NO_MATCH: Text = txt!("fleet-no-match", "no cluster matches the filter (Esc clears it)");

/// The filter prompt.
pub const FILTER_PROMPT: Text = txt!("fleet-filter-prompt", "filter: ");

/// The key hints of the footer: (keys, what they do).
pub const HINTS: [(&str, Text); 6] = [
    ("↑↓", txt!("fleet-hint-select", "select")),
    ("Enter", txt!("fleet-hint-open", "open dashboard")),
    ("/", txt!("fleet-hint-filter", "filter")),
    ("s 1 2 3", txt!("fleet-hint-sort", "sort name/version/state")),
    ("Esc", txt!("fleet-hint-clear", "clear filter")),
    ("q", txt!("fleet-hint-quit", "quit")),
];

/// The notice when a cluster cannot be opened (its context gives no client).
pub fn cannot_open(context: &str, why: &str) -> String {
    trf!(
        "fleet-cannot-open",
        "cannot open {context}: {why}",
        context = context,
        why = why
    )
}
