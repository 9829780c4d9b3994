//! The update-health insights' summaries in the dashboard's language. `assess` writes them in
//! oc's English (`cvo status` prints them so, and `tests/status_conformance.rs` holds them to
//! oc's bytes); the dashboard shows them in Russian when it speaks Russian. The translation is
//! made here, at drawing time, from the English summary's shape: each of assess's sentences is
//! matched as a template (the `{}` parts are the data: names, reasons, versions, durations,
//! which stay as they are), so `assess` knows nothing of languages.
//!
//! A summary no template matches (an alert's own summary, a reason oc passes through) is shown
//! as it is. The sentences come from `src/assess/health.rs`, `nodes.rs`, `controlplane.rs`,
//! `overview.rs` (its fallback insights) and `blocked.rs`; the tests below take them from those
//! functions' outputs, so a changed English sentence fails there.

use std::borrow::Cow;

use crate::l10n::{self, Lang, tr, trf};

/// The parts of `s` where `tpl` has `{}`, when `s` has `tpl`'s shape: the literal text between
/// them must match; a part ends at the first match of the literal after it, the last one at
/// the end of `s`; no part is empty or holds ` | `.
fn fields<'a, const N: usize>(s: &'a str, tpl: &str) -> Option<[&'a str; N]> {
    let parts: Vec<&str> = tpl.split("{}").collect();
    if parts.len() != N + 1 {
        return None;
    }
    let mut rest = s.strip_prefix(parts[0])?;
    let mut out = [""; N];
    for (i, lit) in parts[1..].iter().enumerate() {
        if i + 1 == N {
            out[i] = rest.strip_suffix(lit)?;
        } else {
            let at = rest.find(lit)?;
            out[i] = &rest[..at];
            rest = &rest[at + lit.len()..];
        }
    }
    // ` | ` joins several sentences (a node's problems): never one part.
    out.iter()
        .all(|p| !p.is_empty() && !p.contains(" | "))
        .then_some(out)
}

/// An insight's summary in the current language: `summary` itself in English (and for a
/// summary of no known shape); several node problems joined by ` | ` are translated one by one.
pub fn summary(summary: &str) -> Cow<'_, str> {
    if l10n::current() == Lang::En {
        return Cow::Borrowed(summary);
    }
    if let Some(t) = russian(summary) {
        return Cow::Owned(t);
    }
    if summary.contains(" | ") {
        let parts: Vec<String> = summary
            .split(" | ")
            .map(|p| russian(p).unwrap_or_else(|| p.to_owned()))
            .collect();
        return Cow::Owned(parts.join(" | "));
    }
    Cow::Borrowed(summary)
}

/// The Russian of one summary of a known shape.
fn russian(s: &str) -> Option<String> {
    if s == "Update is proceeding well" {
        return Some(tr!("insight-proceeding-well", "Update is proceeding well").to_owned());
    }
    if let Some([name]) = fields(s, "Cluster Version {} has no Failing condition") {
        return Some(trf!(
            "insight-cv-no-failing",
            "Cluster Version {name} has no Failing condition",
            name = name
        ));
    }
    if let Some([name, reason]) = fields(s, "Cluster Version {} is failing to proceed with the update ({})") {
        return Some(trf!(
            "insight-cv-failing",
            "Cluster Version {name} is failing to proceed with the update ({reason})",
            name = name,
            reason = reason
        ));
    }
    if let Some([name, reason]) = fields(
        s,
        "Cluster Version {} may be failing to proceed with the update ({})",
    ) {
        return Some(trf!(
            "insight-cv-may-be-failing",
            "Cluster Version {name} may be failing to proceed with the update ({reason})",
            name = name,
            reason = reason
        ));
    }
    if let Some([alert]) = fields(s, "Alert is firing: {}") {
        return Some(trf!(
            "insight-alert-firing",
            "Alert is firing: {alert}",
            alert = alert
        ));
    }
    if let Some([name, reason]) = fields(s, "Cluster Operator {} is unavailable ({})") {
        return Some(trf!(
            "insight-co-unavailable",
            "Cluster Operator {name} is unavailable ({reason})",
            name = name,
            reason = reason
        ));
    }
    if let Some([name, reason]) = fields(s, "Cluster Operator {} is degraded ({})") {
        return Some(trf!(
            "insight-co-degraded",
            "Cluster Operator {name} is degraded ({reason})",
            name = name,
            reason = reason
        ));
    }
    if let Some([pool]) = fields(s, "Outdated nodes in a paused pool '{}' will not be updated") {
        return Some(trf!(
            "insight-paused-pool",
            "Outdated nodes in a paused pool '{pool}' will not be updated",
            pool = pool
        ));
    }
    if let Some(t) = node(s) {
        return Some(t);
    }
    if let Some([previous, last]) = fields(
        s,
        "Previous update to {} never completed, last complete update was {}",
    ) {
        return Some(trf!(
            "insight-previous-never-completed",
            "Previous update to {previous} never completed, last complete update was {last}",
            previous = previous,
            last = last
        ));
    }
    blocked(s)
}

/// The node sentences (`src/assess/nodes.rs`, `overview.rs`).
fn node(s: &str) -> Option<String> {
    if let Some([name]) = fields(s, "Node {} is not ready") {
        return Some(trf!(
            "insight-node-not-ready",
            "Node {name} is not ready",
            name = name
        ));
    }
    if let Some([name]) = fields(s, "Node {} has disk pressure") {
        return Some(trf!(
            "insight-node-disk-pressure",
            "Node {name} has disk pressure",
            name = name
        ));
    }
    if let Some([name]) = fields(s, "Node {} has unavailable network") {
        return Some(trf!(
            "insight-node-network",
            "Node {name} has unavailable network",
            name = name
        ));
    }
    if let Some([name]) = fields(s, "Node {} is degraded") {
        return Some(trf!(
            "insight-node-degraded",
            "Node {name} is degraded",
            name = name
        ));
    }
    if let Some([name]) = fields(s, "Node {} is unavailable") {
        return Some(trf!(
            "insight-node-unavailable",
            "Node {name} is unavailable",
            name = name
        ));
    }
    None
}

/// The sentences of what blocks an update (`src/assess/blocked.rs`), which the headline shows.
fn blocked(s: &str) -> Option<String> {
    if let Some([target, why]) = fields(s, "requested update to {} not accepted: {}") {
        let why = if why == "no reason given" {
            tr!("insight-no-reason", "no reason given")
        } else {
            why
        };
        return Some(trf!(
            "insight-not-accepted",
            "requested update to {target} not accepted: {why}",
            target = target,
            why = why
        ));
    }
    if let Some([target]) = fields(
        s,
        "requested update to {} not picked up by a cluster-version operator",
    ) {
        return Some(trf!(
            "insight-not-picked-up",
            "requested update to {target} not picked up by a cluster-version operator",
            target = target
        ));
    }
    if let Some([image]) = fields(
        s,
        "waiting for release {} to be loaded: its version is not known yet",
    ) {
        return Some(trf!(
            "insight-waiting-release",
            "waiting for release {image} to be loaded: its version is not known yet",
            image = image
        ));
    }
    if let Some([name, what, waited]) = fields(s, "waiting on {} to report {} for {}") {
        let waited = if waited == "an unknown time" {
            tr!("insight-unknown-time", "an unknown time")
        } else {
            waited
        };
        return Some(trf!(
            "insight-waiting-on",
            "waiting on {name} to report {what} for {waited}",
            name = name,
            what = what,
            waited = waited
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::l10n::scoped;

    #[test]
    fn fields_take_the_parts_between_the_literals() {
        assert_eq!(
            fields(
                "Cluster Operator dns is degraded (DNSDegraded)",
                "Cluster Operator {} is degraded ({})"
            ),
            Some(["dns", "DNSDegraded"])
        );
        assert_eq!(fields::<1>("Node a is degraded", "Node {} is unavailable"), None);
        assert_eq!(fields::<1>("Node  is degraded", "Node {} is degraded"), None);
        assert_eq!(fields::<2>("x", "{} and {}"), None);
    }

    /// Every sentence assess writes, as assess writes it (the English comes from the
    /// fixtures' assessments below and from these literal samples of the same format!s), is
    /// Russian on a Russian screen with its data kept, and English stays the same bytes.
    #[test]
    fn each_sentence_of_assess_has_its_russian() {
        let cases = [
            ("Update is proceeding well", "Обновление идёт нормально"),
            (
                "Cluster Version version has no Failing condition",
                "у Cluster Version version нет условия Failing",
            ),
            (
                "Cluster Version version is failing to proceed with the update (ClusterOperatorDegraded)",
                "Cluster Version version не может продолжить обновление (ClusterOperatorDegraded)",
            ),
            (
                "Cluster Version version may be failing to proceed with the update (Unknown)",
                "Cluster Version version, возможно, не может продолжить обновление (Unknown)",
            ),
            (
                "Alert is firing: etcd cluster has high latency",
                "Сработало оповещение: etcd cluster has high latency",
            ),
            (
                "Cluster Operator machine-config is degraded (RequiredPoolsFailed)",
                "Cluster Operator machine-config деградирован (RequiredPoolsFailed)",
            ),
            (
                "Cluster Operator dns is unavailable (NoDNS)",
                "Cluster Operator dns недоступен (NoDNS)",
            ),
            (
                "Outdated nodes in a paused pool 'infra' will not be updated",
                "Устаревшие узлы пула машин на паузе 'infra' не будут обновлены",
            ),
            (
                "Node ip-10-0-1-2 is not ready | Node ip-10-0-1-2 has disk pressure",
                "Узел ip-10-0-1-2 не готов | На узле ip-10-0-1-2 нехватка диска",
            ),
            ("Node w-1 has unavailable network", "На узле w-1 недоступна сеть"),
            ("Node w-1 is degraded", "Узел w-1 деградирован"),
            ("Node w-1 is unavailable", "Узел w-1 недоступен"),
            (
                "Previous update to 4.16.3 never completed, last complete update was 4.16.2",
                "Предыдущее обновление до 4.16.3 не завершилось, последнее завершённое обновление — 4.16.2",
            ),
            (
                "requested update to 4.16.4 not accepted: no reason given",
                "запрошенное обновление до 4.16.4 не принято: причина не указана",
            ),
            (
                "requested update to 4.16.4 not accepted: VerifyPayloadFailed: bad signature",
                "запрошенное обновление до 4.16.4 не принято: VerifyPayloadFailed: bad signature",
            ),
            (
                "requested update to 4.16.4 not picked up by a cluster-version operator",
                "запрошенное обновление до 4.16.4 не подхвачено ни одним оператором версии кластера",
            ),
            (
                "waiting for release quay.io/x@sha256:ab to be loaded: its version is not known yet",
                "ожидание загрузки релиза quay.io/x@sha256:ab: его версия пока неизвестна",
            ),
            (
                "waiting on network to report operator 4.16.4 for 12m",
                "ожидание, пока network сообщит operator 4.16.4: уже 12m",
            ),
            (
                "waiting on network to report operator 4.16.4 for an unknown time",
                "ожидание, пока network сообщит operator 4.16.4: уже неизвестное время",
            ),
        ];
        for (en, ru) in cases {
            assert_eq!(scoped(Lang::Ru, || summary(en).into_owned()), ru, "{en}");
            assert!(matches!(scoped(Lang::En, || summary(en)), Cow::Borrowed(s) if s == en));
        }
        // A sentence of no known shape is shown as it is.
        assert_eq!(scoped(Lang::Ru, || summary("Something else")), "Something else");
    }

    /// The sentences of a real assessment (the stuck demo cluster, `assets/demo`) are all
    /// known shapes: none stays English on a Russian screen.
    #[test]
    fn the_demo_clusters_insights_are_all_russian() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
        let paths: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
            .expect("assets/demo")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        let state = crate::cluster::snapshot::load(&paths).expect("the demo snapshot loads");
        let now = chrono::DateTime::parse_from_rfc3339("2024-07-20T12:00:00Z")
            .map(|t| t.to_utc())
            .expect("time");
        let a = crate::assess::assess(&state, None, now);
        assert!(a.health.insights.len() >= 3, "{:#?}", a.health.insights);
        for i in &a.health.insights {
            assert!(russian(&i.summary).is_some(), "no Russian for {:?}", i.summary);
        }
    }
}
