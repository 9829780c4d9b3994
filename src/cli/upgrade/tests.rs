use super::*;

fn cv(yaml: &str) -> ClusterVersion {
    serde_norway::from_str(yaml).expect("cv yaml")
}

const BASE: &str = r#"
metadata: {name: version}
spec: {channel: stable-4.16}
status:
  desired: {version: 4.16.3, image: "quay.io/r@sha256:00", channels: [fast-4.16, stable-4.16]}
  conditions:
  - {type: Failing, status: "False"}
  - {type: Progressing, status: "False", message: "Cluster version is 4.16.3"}
  - {type: RetrievedUpdates, status: "True"}
  availableUpdates:
  - {version: 4.16.4, image: "quay.io/r@sha256:44"}
  - {version: 4.16.10, image: "quay.io/r@sha256:10"}
  conditionalUpdates:
  - release: {version: 4.16.5, image: "quay.io/r@sha256:55"}
    risks: [{name: BadThing, url: "https://example.com/bad", message: "Bad things.", matchingRules: [{type: Always}]}]
    conditions:
    - {type: Recommended, status: "False", reason: BadThing, message: "Bad things. https://example.com/bad"}
"#;

#[test]
fn status_view_lists_recommended_updates_and_hints_at_the_others() {
    let (out, err) = status_view(&cv(BASE), false);
    assert_eq!(err, "");
    assert_eq!(
        out,
        "Cluster version is 4.16.3\n\nUpstream is unset, so the cluster will use an appropriate default.\nChannel: stable-4.16 (available channels: fast-4.16, stable-4.16)\n\nRecommended updates:\n\n  VERSION     IMAGE\n  4.16.10     quay.io/r@sha256:10\n  4.16.4      quay.io/r@sha256:44\n\nAdditional updates which are not recommended for your cluster configuration are available, to view those re-run the command with --include-not-recommended.\n"
    );
    let (out, _) = status_view(&cv(BASE), true);
    assert!(
        out.ends_with("\nUpdates with known issues:\n\n  Version: 4.16.5\n  Image: quay.io/r@sha256:55\n  Reason: BadThing\n  Message: Bad things. https://example.com/bad\n"),
        "{out}"
    );
}

#[test]
fn status_view_explains_failing_upgradeable_and_no_updates() {
    let mut c = cv(BASE);
    c.status.available_updates = None;
    c.status.conditional_updates.clear();
    c.status.conditions[0] = cv(
        "status: {conditions: [{type: Failing, status: \"True\", reason: ClusterOperatorDegraded, message: \"etcd is degraded\\nsecond line\"}]}",
    )
    .status
    .conditions[0]
        .clone();
    c.status.conditions.push(
        cv("status: {conditions: [{type: Upgradeable, status: \"False\", reason: AdminAckRequired, message: \"ack needed\"}]}")
            .status
            .conditions[0]
            .clone(),
    );
    c.spec.upstream = Some("https://updates.example.com/graph".into());
    let (out, err) = status_view(&c, false);
    assert_eq!(err, "");
    assert_eq!(
        out,
        "Failing=True:\n\n  Reason: ClusterOperatorDegraded\n  Message: etcd is degraded\n  second line\n\nCluster version is 4.16.3\n\nUpgradeable=False\n\n  Reason: AdminAckRequired\n  Message: ack needed\n\nUpstream: https://updates.example.com/graph\nChannel: stable-4.16 (available channels: fast-4.16, stable-4.16)\nNo updates available. You may still upgrade to a specific release image with --to-image or wait for new updates to be available.\n"
    );
    c.status.conditions[2].status = ConditionStatus::False;
    c.status.conditions[2].reason = Some("VersionNotFound".into());
    c.status.conditions[2].message = Some("not in channel".into());
    let (out, err) = status_view(&c, false);
    assert!(!out.contains("No updates available"), "{out}");
    assert_eq!(
        err,
        "warning: Cannot display available updates:\n  Reason: VersionNotFound\n  Message: not in channel\n\n"
    );
}

/// `--lang ru`: the same views worded in Russian, line for line: labels and cvo's sentences
/// translated, condition types, reasons, messages, versions and images as they are.
#[test]
fn status_view_in_russian_keeps_the_lines_and_translates_the_words() {
    use crate::l10n::{Lang, scoped};
    let (out, err) = scoped(Lang::Ru, || status_view(&cv(BASE), true));
    assert_eq!(err, "");
    assert_eq!(
        out,
        "Cluster version is 4.16.3\n\nСлужба обновлений (upstream) не задана, поэтому кластер использует подходящую по умолчанию.\nКанал обновлений: stable-4.16 (доступные каналы: fast-4.16, stable-4.16)\n\nРекомендуемые обновления:\n\n  ВЕРСИЯ      ОБРАЗ\n  4.16.10     quay.io/r@sha256:10\n  4.16.4      quay.io/r@sha256:44\n\nОбновления с известными проблемами:\n\n  Версия: 4.16.5\n  Образ: quay.io/r@sha256:55\n  Причина: BadThing\n  Сообщение: Bad things. https://example.com/bad\n"
    );
    let mut c = cv(BASE);
    c.status.available_updates = None;
    c.status.conditional_updates.clear();
    c.status.conditions[0] = cv(
        "status: {conditions: [{type: Failing, status: \"True\", reason: ClusterOperatorDegraded, message: \"etcd is degraded\\nsecond line\"}]}",
    )
    .status
    .conditions[0]
        .clone();
    c.status.conditions[2].status = ConditionStatus::False;
    c.status.conditions[2].reason = Some("VersionNotFound".into());
    c.status.conditions[2].message = Some("not in channel".into());
    let (out, err) = scoped(Lang::Ru, || status_view(&c, false));
    assert!(
        out.starts_with(
            "Failing=True:\n\n  Причина: ClusterOperatorDegraded\n  Сообщение: etcd is degraded\n  second line\n\nCluster version is 4.16.3\n\n"
        ),
        "{out}"
    );
    assert_eq!(
        err,
        "warning: не удаётся показать доступные обновления:\n  Причина: VersionNotFound\n  Сообщение: not in channel\n\n"
    );
    // English is untouched by a Russian run before it.
    let (out, _) = scoped(Lang::En, || status_view(&cv(BASE), false));
    assert!(out.contains("\n  VERSION     IMAGE\n"), "{out}");
}
