//! The update-health insights' summaries and descriptions in the process's language. `assess`
//! writes them in oc's English (`cvo status` prints them so by default, and
//! `tests/status_conformance.rs` holds them to oc's bytes); the dashboard, and `cvo --lang ru
//! status`, show them in Russian. The translation is made when they are shown, from the English
//! sentence's shape: each of assess's sentences is matched as a template (the `{}` parts are the
//! data: names, reasons, versions, durations, which stay as they are), so the rest of `assess`
//! knows nothing of languages.
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

/// An insight's description in the current language: `description` itself in English, and
/// for one of no known shape (a condition's or an alert's own message, which stay as the API
/// says them); several node problems joined by ` | ` are translated one by one.
pub fn description(description: &str) -> Cow<'_, str> {
    if l10n::current() == Lang::En {
        return Cow::Borrowed(description);
    }
    if let Some(t) = russian_description(description) {
        return Cow::Owned(t);
    }
    if description.starts_with("Node has a ") && description.contains(" | ") {
        let parts: Vec<String> = description
            .split(" | ")
            .map(|p| russian_description(p).unwrap_or_else(|| p.to_owned()))
            .collect();
        return Cow::Owned(parts.join(" | "));
    }
    Cow::Borrowed(description)
}

/// The Russian of one description of a known shape.
fn russian_description(s: &str) -> Option<String> {
    const PAUSED: &str = "Pool is paused, which stops all changes to the nodes in the pool, \
                          including updates. The nodes will not be updated until the pool is \
                          unpaused by the administrator.";
    const UNCLEAR: &str = "Current status of Cluster Version reconciliation is unclear.  See 'oc \
                           -n openshift-cluster-version logs -l k8s-app=cluster-version-operator \
                           --tail -1' to debug.";
    if s == PAUSED {
        return Some(
            tr!(
                "insight-desc-paused-pool",
                "Pool is paused, which stops all changes to the nodes in the pool, including updates. \
             The nodes will not be updated until the pool is unpaused by the administrator."
            )
            .to_owned(),
        );
    }
    if s == UNCLEAR {
        return Some(
            tr!(
                "insight-desc-cv-unclear",
                "Current status of Cluster Version reconciliation is unclear.  See 'oc -n \
             openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1' to debug."
            )
            .to_owned(),
        );
    }
    if let Some([target, previous]) = fields(
        s,
        "Current update to {} was initiated while the previous update to version {} was still in progress",
    ) {
        return Some(trf!(
            "insight-desc-previous-in-progress",
            "Current update to {target} was initiated while the previous update to version {previous} was still in progress",
            target = target,
            previous = previous
        ));
    }
    for (condition, reason) in [
        ("Ready!=True", "Not ready"),
        ("DiskPressure!=False", "Disk pressure"),
        ("NetworkUnavailable!=False", "Network unavailable"),
    ] {
        let tpl = format!("Node has a {condition} condition with Reason \"{reason}\" and message {{}}");
        if let Some([message]) = fields(s, &tpl) {
            return Some(trf!(
                "insight-desc-node-condition",
                "Node has a {condition} condition with Reason \"{reason}\" and message {message}",
                condition = condition,
                reason = reason,
                message = message
            ));
        }
    }
    alert_description(s).or_else(|| blocked_description(s))
}

/// An alert insight's description (`src/assess/health.rs`): our sentence, then the alert's
/// own words, which stay.
fn alert_description(s: &str) -> Option<String> {
    let (ours, rest) = [
        "Alert known to affect updates started firing during the update.",
        "Alert known to affect updates has been firing since before the update started.",
        "Alert started firing during the update.",
    ]
    .into_iter()
    .find_map(|p| s.strip_prefix(p).map(|rest| (p, rest)))?;
    let ours = match ours {
        "Alert started firing during the update." => tr!(
            "insight-desc-alert-during",
            "Alert started firing during the update."
        ),
        "Alert known to affect updates started firing during the update." => tr!(
            "insight-desc-alert-known-during",
            "Alert known to affect updates started firing during the update."
        ),
        _ => tr!(
            "insight-desc-alert-known-before",
            "Alert known to affect updates has been firing since before the update started."
        ),
    };
    let theirs = if rest == " The alert has no description." {
        tr!("insight-desc-alert-none", " The alert has no description.").to_owned()
    } else {
        let [text] = fields(rest, " The alert description is: {}")
            .or_else(|| rest.strip_prefix(" The alert description is: ").map(|t| [t]))?;
        trf!(
            "insight-desc-alert-text",
            " The alert description is: {text}",
            text = text
        )
    };
    Some(format!("{ours}{theirs}"))
}

/// The descriptions of what blocks an update (`src/assess/blocked.rs`).
fn blocked_description(s: &str) -> Option<String> {
    const REFUSED: &str = "The cluster stays at its current release: the release requested in \
                           spec.desiredUpdate ({}) was refused by the cluster-version operator \
                           (ReleaseAccepted=False). Fix the cause (signature stores, registry \
                           access), request another release, or clear the request (cvo upgrade \
                           --clear).";
    let refused = fields(s, &format!("{REFUSED} {{}}"))
        .map(|[t, m]| (t, m))
        .or_else(|| fields(s, REFUSED).map(|[t]| (t, "")));
    if let Some((target, message)) = refused {
        let text = trf!(
            "insight-desc-refused",
            "The cluster stays at its current release: the release requested in \
             spec.desiredUpdate ({target}) was refused by the cluster-version operator \
             (ReleaseAccepted=False). Fix the cause (signature stores, registry access), request \
             another release, or clear the request (cvo upgrade --clear). {message}",
            target = target,
            message = message
        );
        return Some(text.trim_end().to_owned());
    }
    if let Some([target, generation, observed]) = fields(
        s,
        "spec.desiredUpdate asks for {}, but no cluster-version operator has read the \
         ClusterVersion since: it is at generation {}, its status at {}. Check that a \
         cluster-version operator runs and holds the Lease openshift-cluster-version/version \
         (its logs say why it does not sync).",
    ) {
        return Some(trf!(
            "insight-desc-not-picked-up",
            "spec.desiredUpdate asks for {target}, but no cluster-version operator has read the \
             ClusterVersion since: it is at generation {generation}, its status at {observed}. \
             Check that a cluster-version operator runs and holds the Lease \
             openshift-cluster-version/version (its logs say why it does not sync).",
            target = target,
            generation = generation,
            observed = observed
        ));
    }
    const LOADING: &str = "The update was requested by image and the cluster-version operator \
                           has not loaded the release yet (retrieving, verifying), so no operator \
                           can report its version and no time estimate can be made.";
    if let Some(accepted) = s.strip_prefix(LOADING) {
        let text = trf!(
            "insight-desc-loading",
            "The update was requested by image and the cluster-version operator has not loaded \
             the release yet (retrieving, verifying), so no operator can report its version and \
             no time estimate can be made.{accepted}",
            accepted = accepted
        );
        return Some(text);
    }
    if let Some([name, target, progressing]) = fields(
        s,
        "Cluster operator {} reports version {} for itself, so oc counts it updated, but the \
         cluster-version operator waits until every version the release's manifest lists is \
         reported ({}). Check the operator's operands and logs.",
    ) {
        return Some(trf!(
            "insight-desc-waiting-on",
            "Cluster operator {name} reports version {target} for itself, so oc counts it \
             updated, but the cluster-version operator waits until every version the \
             release's manifest lists is reported ({progressing}). Check the operator's \
             operands and logs.",
            name = name,
            target = target,
            progressing = progressing
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
                "у ClusterVersion version нет условия Failing",
            ),
            (
                "Cluster Version version is failing to proceed with the update (ClusterOperatorDegraded)",
                "ClusterVersion version не может продолжить обновление (ClusterOperatorDegraded)",
            ),
            (
                "Cluster Version version may be failing to proceed with the update (Unknown)",
                "ClusterVersion version, возможно, не может продолжить обновление (Unknown)",
            ),
            (
                "Alert is firing: etcd cluster has high latency",
                "Сработало оповещение: etcd cluster has high latency",
            ),
            (
                "Cluster Operator machine-config is degraded (RequiredPoolsFailed)",
                "Кластерный оператор machine-config деградировал (RequiredPoolsFailed)",
            ),
            (
                "Cluster Operator dns is unavailable (NoDNS)",
                "Кластерный оператор dns недоступен (NoDNS)",
            ),
            (
                "Outdated nodes in a paused pool 'infra' will not be updated",
                "Устаревшие узлы приостановленного пула машин 'infra' не будут обновлены",
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

    /// The fixed descriptions and those around data, as assess writes them.
    #[test]
    fn the_descriptions_of_assess_have_their_russian() {
        let cases = [
            (
                "Pool is paused, which stops all changes to the nodes in the pool, including updates. The nodes will not be updated until the pool is unpaused by the administrator.",
                "Пул машин на паузе: это останавливает все изменения узлов пула, включая обновления. Узлы не будут обновлены, пока администратор не снимет пул с паузы.",
            ),
            (
                "Current status of Cluster Version reconciliation is unclear.  See 'oc -n openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1' to debug.",
                "Текущее состояние синхронизации ClusterVersion неясно. Для отладки см. 'oc -n openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1'.",
            ),
            (
                "Node has a Ready!=True condition with Reason \"Not ready\" and message \"kubelet stopped\" | Node has a DiskPressure!=False condition with Reason \"Disk pressure\" and message \"\"",
                "У узла условие Ready!=True с причиной \"Not ready\" и сообщением \"kubelet stopped\" | У узла условие DiskPressure!=False с причиной \"Disk pressure\" и сообщением \"\"",
            ),
            (
                "Alert started firing during the update. The alert description is: etcd is slow | see runbook",
                "Оповещение начало срабатывать во время обновления. Описание оповещения: etcd is slow | see runbook",
            ),
            (
                "Alert known to affect updates has been firing since before the update started. The alert has no description.",
                "Оповещение, которое, как известно, влияет на обновления, срабатывает с момента до начала обновления. У оповещения нет описания.",
            ),
            (
                "The cluster stays at its current release: the release requested in spec.desiredUpdate (4.16.4) was refused by the cluster-version operator (ReleaseAccepted=False). Fix the cause (signature stores, registry access), request another release, or clear the request (cvo upgrade --clear). VerifyPayloadFailed: bad signature",
                "Кластер остаётся на текущем релизе: релиз, запрошенный в spec.desiredUpdate (4.16.4), отклонён оператором версии кластера (ReleaseAccepted=False). Устраните причину (хранилища подписей, доступ к реестру), запросите другой релиз или отмените запрос (cvo upgrade --clear). VerifyPayloadFailed: bad signature",
            ),
            (
                "The cluster stays at its current release: the release requested in spec.desiredUpdate (4.16.4) was refused by the cluster-version operator (ReleaseAccepted=False). Fix the cause (signature stores, registry access), request another release, or clear the request (cvo upgrade --clear).",
                "Кластер остаётся на текущем релизе: релиз, запрошенный в spec.desiredUpdate (4.16.4), отклонён оператором версии кластера (ReleaseAccepted=False). Устраните причину (хранилища подписей, доступ к реестру), запросите другой релиз или отмените запрос (cvo upgrade --clear).",
            ),
            (
                "The update was requested by image and the cluster-version operator has not loaded the release yet (retrieving, verifying), so no operator can report its version and no time estimate can be made. ReleaseAccepted=Unknown Retrieving: pulling",
                "Обновление запрошено по образу, а оператор версии кластера ещё не загрузил релиз (получение, проверка), поэтому ни один оператор не может сообщить его версию и оценить время нельзя. ReleaseAccepted=Unknown Retrieving: pulling",
            ),
            (
                "Current update to 4.16.4 was initiated while the previous update to version 4.16.3 was still in progress",
                "Текущее обновление до 4.16.4 начато, когда предыдущее обновление до версии 4.16.3 ещё выполнялось",
            ),
        ];
        for (en, ru) in cases {
            assert_eq!(scoped(Lang::Ru, || description(en).into_owned()), ru, "{en}");
            assert!(matches!(scoped(Lang::En, || description(en)), Cow::Borrowed(s) if s == en));
        }
        // A condition's own message is shown as it is.
        assert_eq!(
            scoped(Lang::Ru, || description("Cluster operator dns is degraded")),
            "Cluster operator dns is degraded"
        );
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
        // The paused pool's description is ours; the others are the conditions' messages.
        let paused = a
            .health
            .insights
            .iter()
            .find(|i| i.summary.contains("paused pool"));
        let paused = paused.expect("the demo has a paused pool");
        assert!(
            russian_description(&paused.description).is_some(),
            "{}",
            paused.description
        );
    }
}
