//! Every word the fleet view shows, in one place (for translation): titles, column headers,
//! state words, cell texts, the detail lines and the key hints.

use crate::assess::fleet::{FleetRow, RowState, SortKey};

/// The title at the start of the header line.
pub const TITLE: &str = "cvo fleet";

/// Column headers, in column order: context, state, version, channel, desired update,
/// progress, available updates, conditional updates (risks), operators degraded /
/// unavailable, the CVO Lease holder.
pub const HEADERS: [&str; 10] = [
    "CONTEXT",
    "STATE",
    "VERSION",
    "CHANNEL",
    "DESIRED",
    "PROGRESS",
    "UPD",
    "COND",
    "OPERATORS",
    "LEASE",
];

/// A row's state in one or two words.
pub fn state(s: RowState) -> &'static str {
    match s {
        RowState::Unreachable => "unreachable",
        RowState::Denied => "denied",
        RowState::Failing => "failing",
        RowState::Degraded => "degraded",
        RowState::Updating => "updating",
        RowState::NoClusterVersion => "no ClusterVersion",
        RowState::Connecting => "connecting",
        RowState::UpToDate => "up to date",
    }
}

/// The sort key's name in the header.
pub fn sort(k: SortKey) -> &'static str {
    match k {
        SortKey::Name => "name",
        SortKey::Version => "version",
        SortKey::State => "state",
    }
}

/// An empty cell.
pub const NONE: &str = "-";

/// The header line after the title: how many clusters, how many in each state that needs
/// attention, the sort key and the filter.
pub fn summary(rows: &[FleetRow], shown: usize, sort_key: SortKey, filter: &str) -> String {
    let count = |s: RowState| rows.iter().filter(|r| r.state == s).count();
    let mut parts = vec![format!("{} clusters", rows.len())];
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
    parts.push(format!("sort: {}", sort(sort_key)));
    if !filter.is_empty() {
        parts.push(format!("filter: {filter} ({shown} shown)"));
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
        (n, 1) => format!("{n} (1 risk)"),
        (n, k) => format!("{n} ({k} risks)"),
    }
}

/// The OPERATORS cell: degraded and unavailable counts, or `ok` (`-` before any answer).
pub fn operators(r: &FleetRow) -> String {
    match (r.operators, r.operators_degraded, r.operators_unavailable) {
        (0, _, _) => NONE.to_owned(),
        (_, 0, 0) => "ok".to_owned(),
        (_, d, 0) => format!("{d} degraded"),
        (_, 0, u) => format!("{u} unavail."),
        (_, d, u) => format!("{d} deg, {u} unav"),
    }
}

/// The LEASE cell: the holder, marked when it no longer renews.
pub fn lease(r: &FleetRow) -> String {
    match (&r.lease_holder, r.lease_alive) {
        (Some(h), true) => h.clone(),
        (Some(h), false) => format!("{h} (expired)"),
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
        out.push(format!("updating to {d} ({})", progress(r)));
    } else if r.state == RowState::Connecting {
        out.push("waiting for the API server's first answer".to_owned());
    } else if r.state == RowState::NoClusterVersion {
        out.push("no ClusterVersion: not an OpenShift cluster?".to_owned());
    }
    out
}

/// Shown instead of the table when the filter leaves no cluster.
pub const NO_MATCH: &str = "no cluster matches the filter (Esc clears it)";

/// The filter prompt.
pub const FILTER_PROMPT: &str = "filter: ";

/// The key hints of the footer: (keys, what they do).
pub const HINTS: [(&str, &str); 6] = [
    ("↑↓", "select"),
    ("Enter", "open dashboard"),
    ("/", "filter"),
    ("s 1 2 3", "sort name/version/state"),
    ("Esc", "clear filter"),
    ("q", "quit"),
];

/// The notice when a cluster cannot be opened (its context gives no client).
pub fn cannot_open(context: &str, why: &str) -> String {
    format!("cannot open {context}: {why}")
}
