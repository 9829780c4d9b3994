//! Unit tests of the update-service client: the conformance cases of upstream
//! `pkg/cincinnati/cincinnati_test.go`, `pkg/cvo/availableupdates_test.go` and
//! `pkg/clusterconditions/clusterconditions_test.go`, and the graph rules.

use std::{collections::HashMap, sync::Arc};

use futures::future::BoxFuture;

use super::{
    graph::Graph,
    risks::{self, Applies, PromQlEvaluator, PromQlTimings, RiskEvaluator, combine_reason, recommended},
    *,
};
use crate::openshift::config_v1::{ClusterCondition, ConditionalUpdateRisk, PromQLClusterCondition};

const CHANNELS: &str = "io.openshift.upgrades.graph.release.channels";

/// The graph of upstream `TestGetUpdates`: 4.1.0 … 4.1.3, edges `[[0,1],[0,2],[1,2],[2,3]]`,
/// and (when `conditional`) 4.1.0 → 4.1.3 with BugA (PromQL) and BugB (Always).
fn upstream_graph(conditional: bool) -> String {
    let ce = if conditional {
        r#","conditionalEdges":[{"edges":[{"from":"4.1.0","to":"4.1.3"}],"risks":[
            {"url":"https://example.com/bug/123","name":"BugA","message":"On clusters with a Proxy configured, everything breaks.",
             "matchingRules":[{"type":"PromQL","promql":{"promql":"max(cluster_proxy_enabled{type=~\"https?\"})"}}]},
            {"url":"https://example.com/bug/456","name":"BugB","message":"All 4.1.0 clusters are incompatible with 4.1.3.",
             "matchingRules":[{"type":"Always"}]}]}]"#
    } else {
        ""
    };
    format!(
        r#"{{"nodes":[
        {{"version":"4.1.0","payload":"quay.io/openshift-release-dev/ocp-release:4.1.0","metadata":{{"url":"https://example.com/errata/4.1.0","{CHANNELS}":"test-channel,channel-a"}}}},
        {{"version":"4.1.1","payload":"quay.io/openshift-release-dev/ocp-release:4.1.1","metadata":{{}}}},
        {{"version":"4.1.2","payload":"quay.io/openshift-release-dev/ocp-release:4.1.2","metadata":{{}}}},
        {{"version":"4.1.3","payload":"quay.io/openshift-release-dev/ocp-release:4.1.3","metadata":{{}}}}],
        "edges":[[0,1],[0,2],[1,2],[2,3]]{ce}}}"#
    )
}

fn v(s: &str) -> semver::Version {
    semver::Version::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn versions(r: &[Release]) -> Vec<&str> {
    r.iter().map(|r| r.version.as_str()).collect()
}

#[test]
fn c50_two_updates_available() -> Result<(), UpdateError> {
    // cincinnati_test.go TestGetUpdates "two updates available".
    let g = Graph::parse(upstream_graph(false).as_bytes())?;
    let h = g.next_hops(&v("4.1.0"), "", "", "test-channel")?;
    assert_eq!(versions(&h.updates), ["4.1.1", "4.1.2"]);
    assert_eq!(h.current.channels, ["channel-a", "test-channel"]);
    assert_eq!(h.current.url.as_deref(), Some("https://example.com/errata/4.1.0"));
    assert!(h.conditional.is_empty());
    let q = GraphQuery {
        upstream: "http://localhost/graph".into(),
        arch: "test-arch".into(),
        channel: "test-channel".into(),
        id: "01234567-0123-0123-0123-0123456789ab".into(),
        version: "4.1.0".into(),
    };
    assert_eq!(
        q.url()?.query(),
        Some("arch=test-arch&channel=test-channel&id=01234567-0123-0123-0123-0123456789ab&version=4.1.0")
    );
    // An existing query is kept.
    let q = GraphQuery {
        upstream: "http://localhost/graph?zz=1&a=b".into(),
        ..q
    };
    assert_eq!(
        q.url()?.query(),
        Some(
            "a=b&arch=test-arch&channel=test-channel&id=01234567-0123-0123-0123-0123456789ab&version=4.1.0&zz=1"
        )
    );
    Ok(())
}

#[test]
fn c51_conditional_updates_available() -> Result<(), UpdateError> {
    // cincinnati_test.go TestGetUpdates "conditional updates available".
    let g = Graph::parse(upstream_graph(true).as_bytes())?;
    let h = g.next_hops(&v("4.1.0"), "", "", "test-channel")?;
    assert_eq!(versions(&h.updates), ["4.1.1", "4.1.2"]);
    assert_eq!(h.conditional.len(), 1);
    let cu = &h.conditional[0];
    assert_eq!(cu.release.version, "4.1.3");
    let names: Vec<&str> = cu.risks.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["BugA", "BugB"]);
    assert_eq!(cu.risks[0].matching_rules[0].type_, "PromQL");
    // From 4.1.1 there is no conditional edge.
    let h = g.next_hops(&v("4.1.1"), "", "", "test-channel")?;
    assert_eq!(versions(&h.updates), ["4.1.2"]);
    assert!(h.conditional.is_empty());
    Ok(())
}

#[test]
fn version_not_found_and_multi_migration() -> Result<(), UpdateError> {
    let g = Graph::parse(upstream_graph(false).as_bytes())?;
    let e = g.next_hops(&v("4.0.1"), "", "", "fast").err();
    assert_eq!(
        e,
        Some(UpdateError::new(
            "VersionNotFound",
            "currently reconciling cluster version 4.0.1 not found in the \"fast\" channel"
        ))
    );
    // Migrating to Multi: only the current release, as the multi build.
    let h = g.next_hops(&v("4.1.0"), "Multi", "", "c")?;
    assert_eq!(versions(&h.updates), ["4.1.0"]);
    // Already Multi: normal hops.
    let h = g.next_hops(&v("4.1.0"), "Multi", "Multi", "c")?;
    assert_eq!(versions(&h.updates), ["4.1.1", "4.1.2"]);
    Ok(())
}

fn graph_with(conditional: &str, edges: &str) -> String {
    format!(
        r#"{{"nodes":[{{"version":"1.0.0","payload":"img-a"}},{{"version":"1.0.1","payload":"img-b"}},{{"version":"1.0.2","payload":"img-c"}}],
        "edges":{edges},"conditionalEdges":{conditional}}}"#
    )
}

#[test]
fn a_target_both_plain_and_conditional_is_conditional_only() -> Result<(), UpdateError> {
    let json = graph_with(
        r#"[{"edges":[{"from":"1.0.0","to":"1.0.1"}],"risks":[{"name":"R","url":"u","message":"m","matchingRules":[{"type":"Always"}]}]}]"#,
        "[[0,1],[0,2]]",
    );
    let h = Graph::parse(json.as_bytes())?.next_hops(&v("1.0.0"), "", "", "c")?;
    assert_eq!(versions(&h.updates), ["1.0.2"]);
    assert_eq!(h.conditional.len(), 1);
    assert_eq!(h.conditional[0].release.version, "1.0.1");
    Ok(())
}

#[test]
fn a_target_in_several_conditional_edges_is_dropped() -> Result<(), UpdateError> {
    // Upstream: "Upstream declares N conditional updates to V; dropping them all."
    let r = |n: &str| {
        format!(r#"{{"name":"{n}","url":"u","message":"m","matchingRules":[{{"type":"Always"}}]}}"#)
    };
    let json = graph_with(
        &format!(
            r#"[{{"edges":[{{"from":"1.0.0","to":"1.0.1"}}],"risks":[{}]}},
               {{"edges":[{{"from":"1.0.0","to":"1.0.1"}},{{"from":"1.0.0","to":"1.0.2"}}],"risks":[{}]}}]"#,
            r("A"),
            r("B")
        ),
        "[[0,1]]",
    );
    let h = Graph::parse(json.as_bytes())?.next_hops(&v("1.0.0"), "", "", "c")?;
    // 1.0.1 is conditional twice: dropped, and also gone from the plain list.
    assert!(h.updates.is_empty());
    assert_eq!(h.conditional.len(), 1);
    assert_eq!(h.conditional[0].release.version, "1.0.2");
    assert_eq!(h.conditional[0].risks[0].name, "B");
    Ok(())
}

#[test]
fn unrecognized_and_invalid_matching_rules_are_pruned_or_drop_the_target() -> Result<(), UpdateError> {
    let json = graph_with(
        r#"[{"edges":[{"from":"1.0.0","to":"1.0.1"}],"risks":[
              {"name":"Mixed","url":"u","message":"m","matchingRules":[{"type":"Unknown"},{"type":"Always"},{"type":"PromQL"}]}]},
            {"edges":[{"from":"1.0.0","to":"1.0.2"}],"risks":[
              {"name":"Valid","url":"u","message":"m","matchingRules":[{"type":"Always"}]},
              {"name":"OnlyUnknown","url":"u","message":"m","matchingRules":[{"type":"Blah"},{"type":"Always","promql":{"promql":"x"}}]}]}]"#,
        "[]",
    );
    let h = Graph::parse(json.as_bytes())?.next_hops(&v("1.0.0"), "", "", "c")?;
    // 1.0.1 keeps only the Always rule; 1.0.2 has a risk with no usable rule, so the whole
    // target is dropped although its other risk is valid.
    assert_eq!(h.conditional.len(), 1);
    assert_eq!(h.conditional[0].release.version, "1.0.1");
    let rules: Vec<&str> = h.conditional[0].risks[0]
        .matching_rules
        .iter()
        .map(|r| r.type_.as_str())
        .collect();
    assert_eq!(rules, ["Always"]);
    Ok(())
}

#[test]
fn hostile_graphs_are_response_invalid() {
    let reason = |json: &str| {
        Graph::parse(json.as_bytes())
            .and_then(|g| g.next_hops(&v("1.0.0"), "", "", "c").map(|_| ()))
            .err()
            .map(|e| (e.reason, e.message))
    };
    let (r, m) =
        reason(r#"{"nodes":[{"version":"1.0.0","payload":"a"}],"edges":[[0,7]]}"#).unwrap_or_default();
    assert_eq!(r, "ResponseInvalid");
    assert_eq!(m, "edges[0] = [0, 7] names a node past the 1 nodes");
    let (r, m) = reason(r#"{"nodes":[{"version":"1.0.0","payload":"a"},{"version":"1.0.0","payload":"b"}]}"#)
        .unwrap_or_default();
    assert_eq!(
        (r.as_str(), m.as_str()),
        ("ResponseInvalid", "nodes[0] and nodes[1] both have version 1.0.0")
    );
    let (r, m) = reason(r#"{"nodes":[{"version":"one","payload":"a"}]}"#).unwrap_or_default();
    assert_eq!(r, "ResponseInvalid");
    assert!(m.contains("nodes[0].version"), "{m}");
    let (r, m) =
        reason(r#"{"nodes":[{"version":"1.0.0","payload":"a"}],"edges":[[0,-1]]}"#).unwrap_or_default();
    assert_eq!(r, "ResponseInvalid");
    assert!(m.contains("edges[0]"), "{m}");
    let (r, _) = reason("<html>").unwrap_or_default();
    assert_eq!(r, "ResponseInvalid");
    let (r, m) = reason(
        r#"{"nodes":[{"version":"1.0.0","payload":"a"}],"conditionalEdges":[{"edges":[{"from":"1.0.0","to":"9.9.9"}],"risks":[]}]}"#,
    )
    .unwrap_or_default();
    assert_eq!(
        (r.as_str(), m.as_str()),
        ("ResponseInvalid", "no node for conditional update 9.9.9")
    );
    // A cycle is harmless: only edges from the current node are read.
    assert_eq!(
        reason(
            r#"{"nodes":[{"version":"1.0.0","payload":"a"},{"version":"1.0.1","payload":"b"}],"edges":[[0,1],[1,0],[1,1]]}"#
        ),
        None
    );
}

/// Answers PromQL from a table; counts queries.
#[derive(Default)]
struct TablePromQl {
    answers: HashMap<String, Result<bool, String>>,
    asked: std::sync::Mutex<Vec<String>>,
}

impl PromQlEvaluator for TablePromQl {
    fn evaluate<'a>(&'a self, promql: &'a str) -> BoxFuture<'a, Result<bool, String>> {
        if let Ok(mut a) = self.asked.lock() {
            a.push(promql.to_string());
        }
        let r = self
            .answers
            .get(promql)
            .cloned()
            .unwrap_or_else(|| Err(format!("no answer for {promql}")));
        Box::pin(async move { r })
    }
}

fn rule(t: &str, q: Option<&str>) -> ClusterCondition {
    ClusterCondition {
        type_: t.into(),
        promql: q.map(|q| PromQLClusterCondition { promql: q.into() }),
    }
}

fn evaluator(answers: &[(&str, Result<bool, String>)]) -> (Arc<TablePromQl>, RiskEvaluator) {
    let t = Arc::new(TablePromQl {
        answers: answers.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        ..Default::default()
    });
    let e = RiskEvaluator::new(t.clone(), PromQlTimings::upstream());
    (t, e)
}

#[tokio::test]
async fn c57_match_walks_rules_in_order() {
    // clusterconditions_test.go TestMatch.
    let (_, e) = evaluator(&[
        ("error-1", Err("test error 1".into())),
        ("error-2", Err("test error 2".into())),
    ]);
    assert_eq!(e.matches(&[]).await, Ok(false));
    assert_eq!(
        e.matches(&[rule("Always", None), rule("does-not-exist", None)])
            .await,
        Ok(true)
    );
    assert_eq!(
        e.matches(&[rule("does-not-exist", None), rule("Always", None)])
            .await,
        Ok(true)
    );
    assert_eq!(
        e.matches(&[rule("does-not-exist", None), rule("also-unknown", None)])
            .await,
        Ok(false)
    );
    // Two PromQL rules erroring: the errors aggregated (the second query waits out the 1 s
    // throttle, so time is paused and advanced).
    tokio::time::pause();
    let (_, e) = evaluator(&[
        ("error-1", Err("test error 1".into())),
        ("error-2", Err("test error 2".into())),
    ]);
    let r1 = e
        .matches(&[rule("unknown", None), rule("PromQL", Some("error-1"))])
        .await;
    assert_eq!(r1, Err("test error 1".to_string()));
    tokio::time::advance(std::time::Duration::from_secs(2)).await;
    let r2 = e
        .matches(&[rule("PromQL", Some("error-1")), rule("PromQL", Some("error-2"))])
        .await;
    assert_eq!(r2, Err("[test error 1, test error 2]".to_string()));
}

#[tokio::test(start_paused = true)]
async fn promql_is_throttled_and_cached_like_upstream() {
    let (t, e) = evaluator(&[("a", Ok(true)), ("b", Ok(false))]);
    let asked = || t.asked.lock().map(|a| a.clone()).unwrap_or_default();
    assert_eq!(e.matches(&[rule("PromQL", Some("a"))]).await, Ok(true));
    // Within 1 s of the last query: b is queued, not asked.
    let r = e.matches(&[rule("PromQL", Some("b"))]).await;
    assert!(
        r.as_ref().is_err_and(|m| m.starts_with("client-side throttling")),
        "{r:?}"
    );
    assert_eq!(asked(), ["a"]);
    // a is cached for an hour: no new query.
    tokio::time::advance(std::time::Duration::from_secs(5)).await;
    assert_eq!(e.matches(&[rule("PromQL", Some("a"))]).await, Ok(true));
    assert_eq!(asked(), ["a"]);
    // The next free slot goes to the queued, never-answered b.
    assert_eq!(e.matches(&[rule("PromQL", Some("b"))]).await, Ok(false));
    assert_eq!(asked(), ["a", "b"]);
    // After an hour a is asked again.
    tokio::time::advance(std::time::Duration::from_secs(3601)).await;
    assert_eq!(e.matches(&[rule("PromQL", Some("a"))]).await, Ok(true));
    assert_eq!(asked(), ["a", "b", "a"]);
}

fn risk(name: &str, message: &str, url: &str) -> ConditionalUpdateRisk {
    ConditionalUpdateRisk {
        url: url.into(),
        name: name.into(),
        message: message.into(),
        matching_rules: vec![rule("Always", None)],
        conditions: Vec::new(),
    }
}

fn applies(pairs: &[(&str, ConditionStatus, &str)]) -> HashMap<String, Applies> {
    pairs
        .iter()
        .map(|(n, s, m)| {
            (
                n.to_string(),
                Applies {
                    status: *s,
                    message: m.to_string(),
                },
            )
        })
        .collect()
}

#[test]
fn c55_evaluate_conditional_update() {
    // availableupdates_test.go TestEvaluateConditionalUpdate.
    let c = recommended(&[], &HashMap::new(), &[]);
    assert_eq!(
        (c.status, c.reason(), c.message()),
        (
            ConditionStatus::True,
            "NotExposedToRisks",
            risks::NOT_EXPOSED_MESSAGE
        )
    );
    let r = risk("RiskThatApplies", "This is a risk!", "https://match.es");
    let a = applies(&[("RiskThatApplies", ConditionStatus::True, "")]);
    let c = recommended(std::slice::from_ref(&r), &a, &[]);
    assert_eq!(
        (c.status, c.reason(), c.message()),
        (
            ConditionStatus::False,
            "RiskThatApplies",
            "This is a risk! https://match.es"
        )
    );
    let r2 = risk("RISK-THAT-APPLIES", "This is a risk!", "https://match.es");
    let a2 = applies(&[("RISK-THAT-APPLIES", ConditionStatus::True, "")]);
    let c = recommended(std::slice::from_ref(&r2), &a2, &[]);
    assert_eq!((c.status, c.reason()), (ConditionStatus::False, "ExposedToRisks"));
    let ra = risk("RiskA", "A!", "https://a");
    let rb = risk("RiskB", "B!", "https://b");
    let ab = applies(&[
        ("RiskA", ConditionStatus::True, ""),
        ("RiskB", ConditionStatus::True, ""),
    ]);
    let c = recommended(&[ra.clone(), rb.clone()], &ab, &[]);
    assert_eq!(
        (c.status, c.reason(), c.message()),
        (
            ConditionStatus::False,
            "MultipleReasons",
            "A! https://a\n\nB! https://b"
        )
    );
    let unk = applies(&[(
        "RiskA",
        ConditionStatus::Unknown,
        "Could not evaluate exposure to update risk RiskA (boom)",
    )]);
    let c = recommended(std::slice::from_ref(&ra), &unk, &[]);
    assert_eq!(
        (c.status, c.reason(), c.message()),
        (
            ConditionStatus::Unknown,
            "EvaluationFailed",
            "Could not evaluate exposure to update risk RiskA (boom)"
        )
    );
    let mixed = applies(&[
        ("RiskA", ConditionStatus::True, ""),
        ("RiskB", ConditionStatus::Unknown, "unknown B"),
    ]);
    let c = recommended(&[ra.clone(), rb.clone()], &mixed, &[]);
    assert_eq!(
        (c.status, c.reason()),
        (ConditionStatus::False, "MultipleReasons")
    );
    assert_eq!(c.message(), "A! https://a\n\nunknown B");
    // Accepted (gate ClusterUpdateAcceptRisks).
    let c = recommended(
        std::slice::from_ref(&ra),
        &applies(&[("RiskA", ConditionStatus::True, "")]),
        &["RiskA".into()],
    );
    assert_eq!(
        (c.status, c.reason(), c.message()),
        (
            ConditionStatus::True,
            "AllExposedRisksAccepted",
            risks::ACCEPTED_MESSAGE
        )
    );
    // A risk that does not apply changes nothing.
    let c = recommended(
        std::slice::from_ref(&ra),
        &applies(&[("RiskA", ConditionStatus::False, "")]),
        &[],
    );
    assert_eq!(
        (c.status, c.reason()),
        (ConditionStatus::True, "NotExposedToRisks")
    );
}

#[test]
fn c56_new_recommended_reason() {
    // availableupdates_test.go Test_newRecommendedReason.
    for (now, want, expected) in [
        (
            "NotExposedToRisks",
            "AllExposedRisksAccepted",
            "AllExposedRisksAccepted",
        ),
        (
            "AllExposedRisksAccepted",
            "NotExposedToRisks",
            "AllExposedRisksAccepted",
        ),
        ("EvaluationFailed", "NotExposedToRisks", "EvaluationFailed"),
        ("EvaluationFailed", "AllExposedRisksAccepted", "EvaluationFailed"),
        ("EvaluationFailed", "ExposedToRisks", "ExposedToRisks"),
        ("AllExposedRisksAccepted", "ExposedToRisks", "ExposedToRisks"),
        ("ExposedToRisks", "EvaluationFailed", "ExposedToRisks"),
        ("RiskA", "RiskB", "MultipleReasons"),
        ("RiskA", "RiskA", "RiskA"),
    ] {
        assert_eq!(combine_reason(now, want), expected, "{now} + {want}");
    }
}

#[tokio::test]
async fn evaluation_merges_recommended_updates_into_available() -> Result<(), UpdateError> {
    let g = Graph::parse(upstream_graph(true).as_bytes())?;
    let h = g.next_hops(&v("4.1.0"), "", "", "test-channel")?;
    // BugA's PromQL says not exposed, but BugB is Always: not recommended.
    let q = "max(cluster_proxy_enabled{type=~\"https?\"})";
    let (_, e) = evaluator(&[(q, Ok(false))]);
    let (avail, cond, pending) = evaluate(&e, &h, &[]).await;
    assert_eq!(versions(avail.as_deref().unwrap_or_default()), ["4.1.2", "4.1.1"]);
    assert_eq!(cond[0].conditions[0].reason(), "BugB");
    assert!(!pending);
    // Accepting BugB makes 4.1.3 recommended: it joins availableUpdates, semver descending.
    let (avail, cond, _) = evaluate(&e, &h, &["BugB".into()]).await;
    assert_eq!(
        versions(avail.as_deref().unwrap_or_default()),
        ["4.1.3", "4.1.2", "4.1.1"]
    );
    assert_eq!(cond[0].conditions[0].reason(), "AllExposedRisksAccepted");
    // A query that fails: Unknown, the message upstream writes, and a re-evaluation pending.
    let (_, e) = evaluator(&[(q, Err("executing PromQL query: connection refused".into()))]);
    let (_, cond, pending) = evaluate(&e, &h, &["BugB".into()]).await;
    let c = &cond[0].conditions[0];
    assert_eq!(
        (c.status, c.reason()),
        (ConditionStatus::Unknown, "EvaluationFailed")
    );
    assert_eq!(
        c.message(),
        "Could not evaluate exposure to update risk BugA (executing PromQL query: connection refused)\n  BugA description: On clusters with a Proxy configured, everything breaks.\n  BugA URL: https://example.com/bug/123"
    );
    assert!(pending);
    Ok(())
}

fn inputs() -> UpdateInputs {
    UpdateInputs {
        upstream: None,
        channel: "fast".into(),
        cluster_id: "01234567-0123-0123-0123-0123456789ab".into(),
        version: "4.0.1".into(),
        ..Default::default()
    }
}

#[test]
fn c54_prechecks_in_upstream_order() {
    // cvo_test.go TestOperator_availableUpdatesSync (the pre-checks) and availableupdates.go.
    let cfg = UpdatesConfig::new(Arc::new(risks::NoPrometheus), std::time::Duration::from_secs(180));
    let err = |i: UpdateInputs| {
        i.query(&cfg)
            .err()
            .map(|e| (e.reason, e.message))
            .unwrap_or_default()
    };
    assert_eq!(
        err(UpdateInputs {
            channel: String::new(),
            ..inputs()
        }),
        (
            "NoChannel".into(),
            "The update channel has not been configured.".into()
        )
    );
    assert_eq!(
        err(UpdateInputs {
            version: String::new(),
            channel: String::new(),
            ..inputs()
        })
        .0,
        "NoCurrentVersion"
    );
    assert_eq!(
        err(UpdateInputs {
            version: "4.1".into(),
            ..inputs()
        }),
        (
            "InvalidCurrentVersion".into(),
            "The current cluster version is not a valid semantic version and cannot be used to calculate upgrades."
                .into()
        )
    );
    let (r, m) = err(UpdateInputs {
        cluster_id: "not-a-uuid".into(),
        ..inputs()
    });
    assert_eq!(r, "InvalidID");
    assert!(m.starts_with("invalid cluster ID: "), "{m}");
    let (r, m) = err(UpdateInputs {
        upstream: Some("::not a url".into()),
        ..inputs()
    });
    assert_eq!(r, "InvalidURI");
    assert!(m.starts_with("failed to parse update service URL: "), "{m}");
    let mut empty = cfg.clone();
    empty.upstream_override = Some(String::new());
    assert_eq!(
        inputs().query(&empty).err().map(|e| e.reason).as_deref(),
        Some("NoUpstream")
    );
    let mut noarch = cfg.clone();
    noarch.arch = String::new();
    assert_eq!(
        inputs().query(&noarch).err().map(|e| e.reason).as_deref(),
        Some("NoArchitecture")
    );
    // The default service; arch multi for a Multi release.
    let (q, _) = UpdateInputs {
        current_arch: "Multi".into(),
        ..inputs()
    }
    .query(&cfg)
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(q.upstream, client::DEFAULT_UPSTREAM);
    assert_eq!(q.arch, "multi");
}

#[test]
fn apply_to_status_is_idempotent_and_keeps_transition_times() {
    let t0 = Utc::now();
    let cu = ConditionalUpdate {
        release: Release {
            version: "1.0.1".into(),
            image: "b".into(),
            ..Default::default()
        },
        risks: vec![risk("R", "m", "u")],
        risk_names: Vec::new(),
        conditions: vec![recommended(
            &[risk("R", "m", "u")],
            &applies(&[("R", ConditionStatus::True, "")]),
            &[],
        )],
    };
    let f = FetchedUpdates {
        available: Some(vec![Release {
            version: "1.0.2".into(),
            image: "c".into(),
            ..Default::default()
        }]),
        conditional: vec![cu],
        ..Default::default()
    };
    let mut st = ClusterVersionStatus::default();
    apply_to_status(&mut st, &f, t0);
    let once = st.clone();
    apply_to_status(&mut st, &f, t0 + chrono::Duration::seconds(30));
    assert_eq!(st, once);
    assert_eq!(
        st.conditional_updates[0].conditions[0].last_transition_time,
        Some(t0)
    );
    let c = crate::openshift::condition::find(&st.conditions, RETRIEVED_UPDATES)
        .cloned()
        .unwrap_or_default();
    assert_eq!(c.status, ConditionStatus::True);
    // A failure: False with the reason, and the kept updates stay.
    let failed = FetchedUpdates {
        retrieved_error: Some((
            "RemoteFailed".into(),
            "Unable to retrieve available updates: GET x: refused".into(),
        )),
        ..f
    };
    apply_to_status(&mut st, &failed, t0);
    let c = crate::openshift::condition::find(&st.conditions, RETRIEVED_UPDATES)
        .cloned()
        .unwrap_or_default();
    assert_eq!((c.status, c.reason()), (ConditionStatus::False, "RemoteFailed"));
    assert_eq!(st.available_updates.as_ref().map(Vec::len), Some(1));
}

#[test]
fn risk_names_and_reasons() {
    assert!(risks::risk_name_valid("OVNKubernetesEgressIPRegression"));
    assert!(risks::risk_name_valid("RHSB2023-001.x"));
    assert!(!risks::risk_name_valid(""));
    assert!(!risks::risk_name_valid("lowercase"));
    assert!(risks::reason_safe("BugA"));
    assert!(!risks::reason_safe("RISK-THAT-APPLIES"));
    assert!(!risks::reason_safe("Trailing,"));
}

#[test]
fn prometheus_results_are_read_like_upstream() {
    let one = serde_json::json!([{"metric": {}, "value": [1, "1"]}]);
    let zero = serde_json::json!([{"metric": {}, "value": [1, "0"]}]);
    let half = serde_json::json!([{"metric": {}, "value": [1, "0.5"]}]);
    let two = serde_json::json!([{"value": [1, "1"]}, {"value": [1, "1"]}]);
    assert_eq!(client::interpret("vector", &one), Ok(true));
    assert_eq!(client::interpret("vector", &zero), Ok(false));
    assert_eq!(
        client::interpret("vector", &half),
        Err("invalid PromQL result (must be 0 or 1): 0.5".into())
    );
    assert_eq!(
        client::interpret("vector", &two),
        Err("invalid PromQL result length must be one, but is 2".into())
    );
    assert_eq!(
        client::interpret("scalar", &one),
        Err("invalid PromQL result type is scalar, not vector".into())
    );
}
