use super::*;
use crate::cli::upgrade::{Extras, status_view_with};

fn cv(yaml: &str) -> ClusterVersion {
    serde_norway::from_str(yaml).unwrap_or_else(|e| panic!("cv yaml: {e}"))
}

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|e| panic!("{s}: {e}"))
}

const AT_4163: &str = r#"
metadata: {name: version, generation: 7}
spec: {channel: stable-4.16, clusterID: 0f2a8fd5-5b5b-4b3c-9b6e-8f2b1c7d9e01}
status:
  observedGeneration: 6
  desired: {version: 4.16.3, image: "quay.io/r@sha256:33", channels: [stable-4.16]}
  conditions:
  - {type: Failing, status: "False"}
  - {type: Progressing, status: "False", message: "Cluster version is 4.16.3"}
  - {type: RetrievedUpdates, status: "True"}
  availableUpdates:
  - {version: 4.16.4, image: "quay.io/r@sha256:44"}
  conditionalUpdates:
  - release: {version: 4.16.5, image: "quay.io/r@sha256:55"}
    risks: [{name: EgressIP, url: "https://bug/1", message: "Egress IPs lost.", matchingRules: [{type: Always}]}]
    conditions:
    - {type: Recommended, status: "False", reason: EgressIP, message: "Egress IPs lost. https://bug/1"}
"#;

/// The channel of [`AT_4163`]: 4.16.3 → 4.16.4 → 4.16.5 → 4.16.6, 4.16.3 →? 4.16.5, and 4.17.0
/// with no edge at all.
const GRAPH: &str = r#"{
  "nodes": [
    {"version": "4.16.3", "payload": "quay.io/r@sha256:33"},
    {"version": "4.16.4", "payload": "quay.io/r@sha256:44"},
    {"version": "4.16.5", "payload": "quay.io/r@sha256:55"},
    {"version": "4.16.6", "payload": "quay.io/r@sha256:66"},
    {"version": "4.17.0", "payload": "quay.io/r@sha256:70"}
  ],
  "edges": [[0, 1], [1, 2], [2, 3]],
  "conditionalEdges": [{"edges": [{"from": "4.16.3", "to": "4.16.5"}],
    "risks": [{"url": "https://bug/1", "name": "EgressIP", "message": "Egress IPs lost.",
               "matchingRules": [{"type": "Always"}]}]}]
}"#;

fn explained(c: &ClusterVersion) -> Explained {
    let g = Graph::parse(GRAPH.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let v = semver::Version::new(4, 16, 3);
    explain(
        &g,
        &v,
        c,
        "https://updates.example/graph".into(),
        "stable-4.16".into(),
    )
}

#[test]
fn a_request_no_cvo_picked_up_is_one_line() {
    let mut c = cv(AT_4163);
    assert_eq!(not_picked_up(&c), None, "no request");
    c.spec.desired_update = Some(crate::openshift::config_v1::Update {
        version: Some("4.16.4".into()),
        ..Default::default()
    });
    assert_eq!(
        not_picked_up(&c).as_deref(),
        Some(
            "info: The update to 4.16.4 requested in spec.desiredUpdate has not been picked up by a cluster-version operator yet (the ClusterVersion is at generation 7, its status at 6)."
        )
    );
    c.status.observed_generation = 7;
    assert_eq!(not_picked_up(&c), None, "observed");
    c.status.observed_generation = 0;
    assert_eq!(
        not_picked_up(&c),
        None,
        "no CVO ever wrote observedGeneration: unknown, not said"
    );
}

#[test]
fn no_upstream_is_one_line_saying_how_to_enable() {
    let mut c = cv(AT_4163);
    c.status.available_updates = None;
    c.status.conditional_updates.clear();
    c.status.conditions[2] = crate::openshift::Condition {
        type_: "RetrievedUpdates".into(),
        status: ConditionStatus::False,
        reason: Some("NoUpstream".into()),
        message: Some("This cvo operator was started without --fetch-updates or --update-service, so it does not retrieve available updates.".into()),
        ..Default::default()
    };
    let (out, err) = status_view_with(
        &c,
        false,
        &Extras {
            now: t("2026-01-01T00:00:00Z"),
            asked: None,
        },
    );
    assert_eq!(
        err,
        "info: Available updates are not retrieved (RetrievedUpdates=False, NoUpstream): This cvo operator was started without --fetch-updates or --update-service, so it does not retrieve available updates.\n"
    );
    assert!(!out.contains("No updates available"), "{out}");
    // Upstream's own message gets the way to set a service.
    c.status.conditions[2].message = Some("No updateService server has been set to retrieve updates.".into());
    assert_eq!(
        not_fetched(&c).as_deref(),
        Some(
            "info: Available updates are not retrieved (RetrievedUpdates=False, NoUpstream): No updateService server has been set to retrieve updates. Set spec.upstream to an update service URL to retrieve them."
        )
    );
}

#[test]
fn after_a_failure_the_last_good_answer_has_an_age() {
    let mut c = cv(AT_4163);
    c.status.conditions[2] = crate::openshift::Condition {
        type_: "RetrievedUpdates".into(),
        status: ConditionStatus::False,
        reason: Some("RemoteFailed".into()),
        message: Some(format!(
            "Unable to retrieve available updates: GET https://u/graph: refused {}",
            crate::reconcile::api::updates::last_good_note("https://u/graph", t("2026-01-01T07:00:00Z"))
        )),
        last_transition_time: Some(t("2026-01-01T09:00:00Z")),
        ..Default::default()
    };
    let now = t("2026-01-01T10:30:00Z");
    assert_eq!(
        last_good_line(&c, now).as_deref(),
        Some("  Last good answer: 3h30m ago, at 2026-01-01T07:00:00Z from https://u/graph")
    );
    let (_, err) = status_view_with(&c, false, &Extras { now, asked: None });
    assert!(
        err.starts_with("warning: Cannot refresh available updates:\n  Reason: RemoteFailed\n  Message: Unable to retrieve"),
        "{err}"
    );
    assert!(
        err.ends_with("\n  Last good answer: 3h30m ago, at 2026-01-01T07:00:00Z from https://u/graph\n\n"),
        "{err}"
    );
    // Written by another CVO (no recorded time): at least the failure's age.
    c.status.conditions[2].message = Some("Unable to retrieve available updates: refused".into());
    assert_eq!(
        last_good_line(&c, now).as_deref(),
        Some(
            "  Last good answer: more than 1h30m ago (before RetrievedUpdates turned False at 2026-01-01T09:00:00Z)"
        )
    );
    // Not a failure that keeps the updates: nothing.
    c.status.conditions[2].reason = Some("VersionNotFound".into());
    assert_eq!(last_good_line(&c, now), None);
}

#[test]
fn the_section_lists_what_is_not_offered_and_why_without_force() {
    let c = cv(AT_4163);
    let x = explained(&c);
    assert_eq!((x.in_graph, x.newer, x.not_offered.len()), (true, 4, 3));
    let s = section(&x, "with --include-not-recommended");
    assert_eq!(
        s,
        "\nReleases in channel stable-4.16 newer than 4.16.3 that are not offered (update service https://updates.example/graph):\n  VERSION     WHY\n  4.17.0      no update path from 4.16.3 in this channel\n  4.16.6      no update from 4.16.3 yet; reachable by updating to 4.16.4 first\n  4.16.5      not recommended: risk EgressIP applies to this cluster\nA not recommended update's risks are shown in full with --include-not-recommended.\n"
    );
    assert!(!s.contains("--force"));
    let (out, _) = status_view_with(
        &c,
        false,
        &Extras {
            now: t("2026-01-01T00:00:00Z"),
            asked: Some(Ok(x)),
        },
    );
    assert!(
        out.contains("re-run the command with --include-not-recommended.\n\nReleases in channel stable-4.16 newer than 4.16.3"),
        "{out}"
    );
}

#[test]
fn the_section_says_when_nothing_is_newer_or_the_version_is_not_listed() {
    let mut c = cv(AT_4163);
    c.status.desired.version = "4.17.0".into();
    let g = Graph::parse(GRAPH.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let x = explain(
        &g,
        &semver::Version::new(4, 17, 0),
        &c,
        "https://u/g".into(),
        "stable-4.16".into(),
    );
    assert_eq!(
        section(&x, ""),
        "\nThe update service https://u/g lists no release newer than 4.17.0 in channel stable-4.16.\n"
    );
    let x = explain(
        &g,
        &semver::Version::new(4, 15, 0),
        &c,
        "https://u/g".into(),
        "stable-4.16".into(),
    );
    assert_eq!(
        section(&x, ""),
        "\nThe update service https://u/g does not list 4.15.0 in channel stable-4.16, so it offers no update from it.\n"
    );
    let x = explain(
        &g,
        &semver::Version::new(4, 16, 5),
        &c,
        "https://u/g".into(),
        "stable-4.16".into(),
    );
    assert_eq!(
        section(&x, ""),
        "\nReleases in channel stable-4.16 newer than 4.16.5 that are not offered (update service https://u/g):\n  VERSION     WHY\n  4.17.0      no update path from 4.16.5 in this channel\n"
    );
    assert_eq!(
        failed_line("https://u/g", "RemoteFailed: GET https://u/g: refused"),
        "cvo could not ask the update service https://u/g which releases it does not offer: RemoteFailed: GET https://u/g: refused"
    );
}

/// `--lang ru`: the section's sentences, column names and reasons in Russian, versions,
/// channels and risk names as they are.
#[test]
fn the_section_in_russian() {
    use crate::l10n::{Lang, scoped};
    let c = cv(AT_4163);
    let x = explained(&c);
    let s = scoped(Lang::Ru, || {
        section(&x, tr!("explain-with-include", "with --include-not-recommended"))
    });
    assert_eq!(
        s,
        "\nРелизы в канале stable-4.16 новее 4.16.3, которые не предлагаются (служба обновлений https://updates.example/graph):\n  ВЕРСИЯ      ПОЧЕМУ\n  4.17.0      в этом канале нет пути обновления с 4.16.3\n  4.16.6      обновления с 4.16.3 пока нет; достижим через обновление сначала до 4.16.4\n  4.16.5      не рекомендуется: риск EgressIP относится к этому кластеру\nРиски нерекомендуемого обновления полностью показываются с --include-not-recommended.\n"
    );
}
