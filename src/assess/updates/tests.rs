//! The update offer from real ClusterVersions: our `cv-4.16.3` fixture and oc's
//! `4.12.16-longest-not-recommended` recommend fixture, plus the edge cases (risk names,
//! requests, channel problems, retrieval states).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::*;

fn fixture(rel: &str) -> ClusterVersion {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cv(v: Value) -> ClusterVersion {
    serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
}

fn versions<'a>(ts: impl IntoIterator<Item = &'a Target>) -> Vec<&'a str> {
    ts.into_iter().map(|t| t.release.version.as_str()).collect()
}

#[test]
fn our_4_16_3_fixture() {
    let o = UpdateOffer::from_cluster_version(&fixture("upgrade/cv-4.16.3.yaml"));
    assert_eq!(o.current, "4.16.3");
    assert_eq!(o.updating_from, None);
    assert_eq!(o.channel, "stable-4.16");
    assert_eq!(o.channels, ["fast-4.16", "stable-4.16"]);
    assert_eq!(o.upstream, "");
    assert_eq!(o.requested, None);
    assert_eq!(o.channel_problem(), None);
    assert!(matches!(o.retrieval, Retrieval::Ok { .. }));
    assert_eq!(o.retrieval.status(), Some(ConditionStatus::True));
    // Newest first, not in status order (4.16.4 then 4.17.1 there).
    assert_eq!(versions(&o.recommended), ["4.17.1", "4.16.4"]);
    assert_eq!(
        o.recommended.iter().map(|t| t.status_index).collect::<Vec<_>>(),
        [1, 0]
    );
    assert_eq!(versions(&o.conditional), ["4.16.5"]);
    let c = &o.conditional[0];
    assert_eq!(c.kind, TargetKind::Conditional);
    assert_eq!(c.recommended_status(), Some(ConditionStatus::False));
    assert_eq!(c.recommended.as_ref().map(Condition::reason), Some("BadThing"));
    assert_eq!(c.risks.len(), 1);
    assert_eq!(c.risks[0].risk.name, "BadThing");
    assert_eq!(c.risks[0].risk.url, "https://example.com/bad-thing");
    assert!(c.risks[0].described);
    assert!(!c.risks[0].accepted);
    assert_eq!(versions(o.targets()), ["4.17.1", "4.16.4", "4.16.5"]);
    assert!(!o.is_empty());
}

#[test]
fn oc_longest_not_recommended_fixture() {
    let o = UpdateOffer::from_cluster_version(&fixture(
        "oc-upgrade-recommend/4.12.16-longest-not-recommended-cv.yaml",
    ));
    assert_eq!(o.current, "4.12.16");
    assert_eq!(o.channel, "stable-4.13");
    assert_eq!(
        o.upstream,
        "https://api.integration.openshift.com/api/upgrades_info/graph"
    );
    assert_eq!(o.recommended[0].release.version, "4.12.64");
    assert!(o.conditional.iter().any(|t| t.release.version == "4.13.50"));
    let c = o
        .conditional
        .iter()
        .find(|t| t.release.version == "4.13.50")
        .unwrap_or_else(|| panic!("4.13.50 missing"));
    assert_eq!(c.recommended_status(), Some(ConditionStatus::Unknown));
    assert_eq!(
        c.recommended.as_ref().map(Condition::reason),
        Some("EvaluationFailed")
    );
    assert_eq!(c.risks[0].risk.name, "ARODNSWrongBootSequence");
    // Every list is newest first.
    for list in [&o.recommended, &o.conditional] {
        for w in list.windows(2) {
            assert_ne!(
                compare_versions_desc(&w[0].release.version, &w[1].release.version),
                Ordering::Greater,
                "{} before {}",
                w[0].release.version,
                w[1].release.version
            );
        }
    }
}

fn base(extra_spec: Value, extra_status: Value) -> ClusterVersion {
    let mut v = json!({
        "metadata": {"name": "version"},
        "spec": {"channel": "stable-4.16"},
        "status": {
            "desired": {"version": "4.16.3", "image": "img-3", "channels": ["stable-4.16"]},
            "history": [{"state": "Completed", "version": "4.16.2", "image": "img-2", "verified": true}],
        }
    });
    for (k, val) in extra_spec.as_object().into_iter().flatten() {
        v["spec"][k] = val.clone();
    }
    for (k, val) in extra_status.as_object().into_iter().flatten() {
        v["status"][k] = val.clone();
    }
    cv(v)
}

#[test]
fn risk_names_resolve_and_acceptance_is_marked() {
    let o = UpdateOffer::from_cluster_version(&base(
        json!({"desiredUpdate": {"version": "4.16.5", "acceptRisks": [{"name": "Named"}]}}),
        json!({
            "conditionalUpdates": [{
                "release": {"version": "4.16.5", "image": "img-5"},
                "risks": [{"name": "Inline", "message": "inline risk", "url": "u1"}],
                "riskNames": ["Inline", "Named", "Unlisted"],
                "conditions": [{"type": "Recommended", "status": "True", "reason": "NotExposed"}]
            }],
            "conditionalUpdateRisks": [{"name": "Named", "message": "named risk", "url": "u2"}],
            "availableUpdates": [{"version": "4.16.5", "image": "img-5"}, {"version": "4.16.4", "image": "img-4"}]
        }),
    ));
    assert_eq!(o.updating_from.as_deref(), Some("4.16.2"));
    assert_eq!(
        o.requested,
        Some(RequestedUpdate {
            version: "4.16.5".into(),
            image: String::new()
        })
    );
    assert_eq!(o.accepted, ["Named"]);
    let c = &o.conditional[0];
    let risks: Vec<(&str, &str, bool, bool)> = c
        .risks
        .iter()
        .map(|r| {
            (
                r.risk.name.as_str(),
                r.risk.message.as_str(),
                r.described,
                r.accepted,
            )
        })
        .collect();
    assert_eq!(
        risks,
        [
            ("Inline", "inline risk", true, false),
            ("Named", "named risk", true, true),
            ("Unlisted", "", false, false)
        ]
    );
    assert!(c.requested);
    // 4.16.5 is in both lists: listed once, as the conditional target.
    assert!(o.recommended[0].also_conditional);
    assert!(o.recommended[0].requested);
    assert!(!o.recommended[1].also_conditional);
    assert_eq!(versions(o.targets()), ["4.16.4", "4.16.5"]);
}

#[test]
fn a_request_for_the_applied_release_is_no_request() {
    let by_image = base(json!({"desiredUpdate": {"image": "img-3"}}), json!({}));
    assert_eq!(UpdateOffer::from_cluster_version(&by_image).requested, None);
    let by_version = base(json!({"desiredUpdate": {"version": "4.16.3"}}), json!({}));
    assert_eq!(UpdateOffer::from_cluster_version(&by_version).requested, None);
    let empty = base(json!({"desiredUpdate": {"force": true}}), json!({}));
    assert_eq!(UpdateOffer::from_cluster_version(&empty).requested, None);
    let other = base(json!({"desiredUpdate": {"image": "img-9"}}), json!({}));
    assert_eq!(
        UpdateOffer::from_cluster_version(&other).requested,
        Some(RequestedUpdate {
            version: String::new(),
            image: "img-9".into()
        })
    );
}

#[test]
fn channel_problems() {
    let none = base(json!({"channel": ""}), json!({}));
    assert_eq!(
        UpdateOffer::from_cluster_version(&none).channel_problem(),
        Some(ChannelProblem::NoChannel)
    );
    let other = base(json!({"channel": "candidate-4.17"}), json!({}));
    assert_eq!(
        UpdateOffer::from_cluster_version(&other).channel_problem(),
        Some(ChannelProblem::NotListed {
            channel: "candidate-4.17".into(),
            listed: vec!["stable-4.16".into()]
        })
    );
    // A release that lists no channels cannot tell: no problem.
    let unlisted = base(
        json!({"channel": "candidate-4.17"}),
        json!({"desired": {"version": "4.16.3", "image": "img-3"}}),
    );
    assert_eq!(
        UpdateOffer::from_cluster_version(&unlisted).channel_problem(),
        None
    );
}

#[test]
fn retrieval_states() {
    let failed = base(
        json!({}),
        json!({"conditions": [{"type": "RetrievedUpdates", "status": "False", "reason": "RemoteFailed",
                               "message": "Unable to retrieve available updates", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}),
    );
    let o = UpdateOffer::from_cluster_version(&failed);
    assert_eq!(o.retrieval.status(), Some(ConditionStatus::False));
    let (reason, message, since) = o.retrieval.parts().unwrap_or_default();
    assert_eq!(
        (reason, message),
        ("RemoteFailed", "Unable to retrieve available updates")
    );
    assert_eq!(
        since.map(|t| t.to_rfc3339()).as_deref(),
        Some("2026-01-01T00:00:00+00:00")
    );
    assert!(o.is_empty());
    let unknown = base(
        json!({}),
        json!({"conditions": [{"type": "RetrievedUpdates", "status": "Unknown", "reason": "Pending"}]}),
    );
    assert!(matches!(
        UpdateOffer::from_cluster_version(&unknown).retrieval,
        Retrieval::Unknown { ref reason, .. } if reason == "Pending"
    ));
    let never = base(json!({}), json!({}));
    assert_eq!(
        UpdateOffer::from_cluster_version(&never).retrieval,
        Retrieval::NotAsked
    );
    assert_eq!(UpdateOffer::from_cluster_version(&never).retrieval.parts(), None);
}

#[test]
fn versions_that_are_not_semver_come_last() {
    let o = UpdateOffer::from_cluster_version(&base(
        json!({}),
        json!({"availableUpdates": [
            {"version": "banana", "image": "b"},
            {"version": "4.16.4", "image": "4"},
            {"version": "4.16.10", "image": "10"},
            {"version": "apple", "image": "a"}
        ]}),
    ));
    assert_eq!(versions(&o.recommended), ["4.16.10", "4.16.4", "banana", "apple"]);
}
