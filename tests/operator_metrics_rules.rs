//! Issue 27 point 1: upstream's alerting rules keep working on cvo's `/metrics`.
//!
//! Every PromQL expression of upstream's PrometheusRules (the fixture copies of
//! `install/0000_90_cluster-version-operator_02_servicemonitor.yaml` and
//! `_02_prometheusrule_servicemonitor.yaml` in openshift/cluster-version-operator) is parsed with
//! `promql-parser`; every vector selector (metric name and label matchers) and every label a
//! rule groups by (`by`) or matches on (`on`, `ignoring`) is checked against the text the real
//! metrics code serves for a realistic cluster: the aws must-gather's 31 ClusterOperators and
//! a ClusterVersion whose conditions make each rule's series exist. Labels Prometheus adds from
//! the target (`job`, `endpoint`, `namespace`, `service`, `pod`, `instance`, `container`) come
//! from `install/04-service.yaml` and the ServiceMonitor of `install/monitoring/`, not from the
//! samples.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
    sync::Arc,
};

use cvo::{
    openshift::config_v1::{ClusterOperator, ClusterVersion},
    reconcile::{
        api::{FetchedUpdates, StatusSnapshot},
        metrics::Metrics,
    },
};
use promql_parser::{
    label::MatchOp,
    parser::{self, Expr, LabelModifier, VectorSelector},
};
use serde_json::Value;

const UPSTREAM: &str = "tests/fixtures/upstream/cvo-repo/install";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_norway::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .filter(|v: &Value| !v.is_null())
        .collect()
}

/// `(alert, expr)` of every rule of the PrometheusRules in `files`.
fn rules(files: &[&Path]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for f in files {
        for d in yaml_docs(f).into_iter().filter(|d| d["kind"] == "PrometheusRule") {
            for g in d["spec"]["groups"].as_array().expect("groups") {
                for r in g["rules"].as_array().expect("rules") {
                    out.push((
                        r["alert"].as_str().expect("alert").to_string(),
                        r["expr"].as_str().expect("expr").to_string(),
                    ));
                }
            }
        }
    }
    out
}

fn upstream_rules() -> Vec<(String, String)> {
    let dir = root().join(UPSTREAM);
    rules(&[
        &dir.join("0000_90_cluster-version-operator_02_servicemonitor.yaml"),
        &dir.join("0000_90_cluster-version-operator_02_prometheusrule_servicemonitor.yaml"),
    ])
}

/// The labels Prometheus puts on every sample of the target, with the values it gives those
/// the Service and ServiceMonitor decide (`None`: any value, e.g. the pod's name).
fn target_labels() -> BTreeMap<&'static str, Option<String>> {
    let svc = yaml_docs(&root().join("install/04-service.yaml"))
        .into_iter()
        .find(|d| d["kind"] == "Service")
        .expect("install/04-service.yaml: a Service");
    let sm = yaml_docs(&root().join("install/monitoring/servicemonitor.yaml"))
        .into_iter()
        .find(|d| d["kind"] == "ServiceMonitor")
        .expect("install/monitoring/servicemonitor.yaml: a ServiceMonitor");
    let name = svc["metadata"]["name"].as_str().expect("name").to_string();
    let ns = svc["metadata"]["namespace"]
        .as_str()
        .expect("namespace")
        .to_string();
    // The Prometheus Operator's job label is the Service name unless spec.jobLabel says otherwise.
    assert!(
        sm["spec"]["jobLabel"].is_null(),
        "the ServiceMonitor keeps job = Service name"
    );
    let port = sm["spec"]["endpoints"][0]["port"]
        .as_str()
        .expect("endpoint port")
        .to_string();
    assert!(
        svc["spec"]["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .any(|p| p["name"] == port.as_str()),
        "the ServiceMonitor's port {port} is a port of the Service"
    );
    BTreeMap::from([
        ("job", Some(name.clone())),
        ("service", Some(name)),
        ("namespace", Some(ns)),
        ("endpoint", Some(port)),
        ("pod", None),
        ("instance", None),
        ("container", None),
    ])
}

/// What `/metrics` serves for a realistic cluster with every alert's condition present.
fn served() -> Vec<prometheus_parse::Sample> {
    let cos = yaml_docs(
        &root().join("tests/fixtures/upstream/must-gather-clean-snapshots/aws/clusteroperators.yaml"),
    );
    let mut operators: Vec<ClusterOperator> = cos[0]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|o| serde_json::from_value(o.clone()).expect("ClusterOperator"))
        .collect();
    assert_eq!(operators.len(), 31);
    // One operator down and degraded, as ClusterOperatorDown/Degraded fire on.
    let co: Value = serde_norway::from_str(
        r#"
metadata: {name: ingress}
status:
  versions: [{name: operator, version: 4.16.3}]
  conditions:
  - {type: Available, status: "False", reason: IngressUnavailable, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Degraded, status: "True", reason: IngressDegraded, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Progressing, status: "False", reason: AsExpected, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Upgradeable, status: "False", reason: IngressBlocks, lastTransitionTime: "2026-01-01T00:00:00Z"}
"#,
    )
    .expect("YAML");
    operators.retain(|o| o.metadata.name.as_deref() != Some("ingress"));
    operators.push(serde_json::from_value(co).expect("ClusterOperator"));
    let cv: Value = serde_norway::from_str(
        r#"
metadata: {name: version, creationTimestamp: "2025-06-01T00:00:00Z"}
spec:
  clusterID: 96eb6c40-16e8-4718-ade6-5d7c6f05e120
  channel: stable-4.16
  desiredUpdate: {version: 4.16.5, image: "quay.io/openshift-release-dev/ocp-release@sha256:5555555555555555555555555555555555555555555555555555555555555555"}
status:
  desired: {version: 4.16.3, image: "quay.io/openshift-release-dev/ocp-release@sha256:3333333333333333333333333333333333333333333333333333333333333333"}
  history:
  - {state: Completed, version: 4.16.3, image: "quay.io/openshift-release-dev/ocp-release@sha256:3333333333333333333333333333333333333333333333333333333333333333", startedTime: "2025-06-01T00:00:00Z", completionTime: "2025-06-01T01:00:00Z", verified: false}
  availableUpdates:
  - {version: 4.16.4, image: "quay.io/openshift-release-dev/ocp-release@sha256:4444444444444444444444444444444444444444444444444444444444444444"}
  conditionalUpdates:
  - release: {version: 4.16.5, image: "quay.io/openshift-release-dev/ocp-release@sha256:5555555555555555555555555555555555555555555555555555555555555555"}
    risks:
    - {name: SomeRisk, url: "https://example.com/risk", message: "may break", matchingRules: [{type: Always}]}
    conditions:
    - {type: Recommended, status: Unknown, reason: EvaluationFailed, message: "no Thanos", lastTransitionTime: "2026-01-01T00:00:00Z"}
  conditionalUpdateRisks:
  - name: SomeRisk
    url: "https://example.com/risk"
    message: may break
    matchingRules: [{type: Always}]
    conditions:
    - {type: Applies, status: "True", reason: Always, message: "applies", lastTransitionTime: "2026-01-01T00:00:00Z"}
  capabilities: {knownCapabilities: [baremetal, Console], enabledCapabilities: [Console]}
  conditions:
  - {type: Available, status: "True", reason: Done, lastTransitionTime: "2025-06-01T01:00:00Z"}
  - {type: Failing, status: "True", reason: ClusterOperatorDegraded, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Progressing, status: "False", reason: Done, lastTransitionTime: "2025-06-01T01:00:00Z"}
  - {type: RetrievedUpdates, status: "False", reason: RemoteFailed, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: ReleaseAccepted, status: "False", reason: RetrievePayload, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Upgradeable, status: "False", reason: ClusterOperatorsNotUpgradeable, lastTransitionTime: "2026-01-01T00:00:00Z"}
"#,
    )
    .expect("YAML");
    let cv: ClusterVersion = serde_json::from_value(cv).expect("ClusterVersion");
    let m = Metrics::new();
    m.set_cluster(Some(cv), operators);
    let snap = StatusSnapshot {
        updates: Some(Arc::new(FetchedUpdates {
            last_success: chrono::DateTime::from_timestamp(1_767_000_000, 0),
            ..FetchedUpdates::default()
        })),
        ..StatusSnapshot::default()
    };
    m.observe(&snap, "quay.io/openshift-release-dev/ocp-release@sha256:3333333333333333333333333333333333333333333333333333333333333333");
    let text = m.encode();
    let lines = text.lines().map(|l| Ok(l.to_string()));
    prometheus_parse::Scrape::parse(lines)
        .expect("the served text parses")
        .samples
}

/// A vector selector of a rule, with where it is.
struct Selector {
    alert: String,
    vs: VectorSelector,
}

/// What the walk found: selectors, and label lists checked against the labels their operand
/// carries.
#[derive(Default)]
struct Found {
    selectors: Vec<Selector>,
    problems: Vec<String>,
}

/// Labels an expression's series carry, from the served samples of its selectors (and the
/// target's labels); checks `by`, `on` and `ignoring` on the way.
fn walk(e: &Expr, alert: &str, served: &Served, f: &mut Found) -> BTreeSet<String> {
    match e {
        Expr::VectorSelector(vs) => {
            f.selectors.push(Selector {
                alert: alert.into(),
                vs: vs.clone(),
            });
            served.labels_of(vs.name.as_deref().unwrap_or_default())
        }
        Expr::MatrixSelector(ms) => walk(&Expr::VectorSelector(ms.vs.clone()), alert, served, f),
        Expr::Aggregate(a) => {
            let inner = walk(&a.expr, alert, served, f);
            if let Some(p) = &a.param {
                walk(p, alert, served, f);
            }
            match &a.modifier {
                Some(LabelModifier::Include(by)) => {
                    for l in &by.labels {
                        if !inner.contains(l) {
                            f.problems.push(format!(
                                "{alert}: {} by ({l}): its operand has no label {l} ({inner:?})",
                                a.op
                            ));
                        }
                    }
                    by.labels.iter().cloned().collect()
                }
                Some(LabelModifier::Exclude(without)) => inner
                    .into_iter()
                    .filter(|l| !without.labels.contains(l))
                    .collect(),
                None => BTreeSet::new(),
            }
        }
        Expr::Binary(b) => {
            let (lhs, rhs) = (walk(&b.lhs, alert, served, f), walk(&b.rhs, alert, served, f));
            let both_vectors = !lhs.is_empty() && !rhs.is_empty();
            match b.modifier.as_ref().and_then(|m| m.matching.as_ref()) {
                Some(LabelModifier::Include(on)) if both_vectors => {
                    for l in &on.labels {
                        for (side, set) in [("left", &lhs), ("right", &rhs)] {
                            if !set.contains(l) {
                                f.problems
                                    .push(format!("{alert}: on ({l}): the {side} side has no label {l}"));
                            }
                        }
                    }
                }
                Some(LabelModifier::Exclude(ign)) if both_vectors => {
                    // One-to-one matching: what is left after `ignoring` must be the same.
                    let rest = |s: &BTreeSet<String>| -> BTreeSet<String> {
                        s.iter().filter(|l| !ign.labels.contains(l)).cloned().collect()
                    };
                    if rest(&lhs) != rest(&rhs) {
                        f.problems.push(format!(
                            "{alert}: ignoring ({:?}): the sides still differ: {:?} vs {:?}",
                            ign.labels,
                            rest(&lhs),
                            rest(&rhs)
                        ));
                    }
                }
                _ => {}
            }
            if b.op.to_string() == "and" || b.op.to_string() == "unless" {
                lhs
            } else {
                lhs.union(&rhs).cloned().collect()
            }
        }
        Expr::Paren(p) => walk(&p.expr, alert, served, f),
        Expr::Unary(u) => walk(&u.expr, alert, served, f),
        Expr::Subquery(s) => walk(&s.expr, alert, served, f),
        Expr::Call(c) => {
            let mut out = BTreeSet::new();
            for a in &c.args.args {
                out.extend(walk(a, alert, served, f));
            }
            out
        }
        Expr::NumberLiteral(_) | Expr::StringLiteral(_) | Expr::Extension(_) => BTreeSet::new(),
    }
}

/// The served samples and the target's labels.
struct Served {
    samples: Vec<prometheus_parse::Sample>,
    target: BTreeMap<&'static str, Option<String>>,
}

impl Served {
    /// Every label name of `metric`'s samples, plus the target's labels; for `up` (which
    /// Prometheus writes for the target itself) only the target's.
    fn labels_of(&self, metric: &str) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = self.target.keys().map(|k| (*k).to_string()).collect();
        for s in self.samples.iter().filter(|s| s.metric == metric) {
            out.extend(s.labels.keys().cloned());
        }
        out
    }

    /// Whether the target's value of `label` satisfies `m` (`Some(false)`: it does not;
    /// `None`: not a target label or one with any value).
    fn target_matches(&self, m: &promql_parser::label::Matcher) -> Option<bool> {
        let v = self.target.get(m.name.as_str())?.as_deref()?;
        Some(m.is_match(v))
    }
}

#[test]
fn upstream_rules_reference_only_served_metrics_and_labels() {
    let rules = upstream_rules();
    let alerts: Vec<&str> = rules.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(
        alerts,
        [
            "ClusterVersionOperatorDown",
            "CannotRetrieveUpdates",
            "UpdateAvailable",
            "ClusterReleaseNotAccepted",
            "ClusterNotUpgradeable",
            "ClusterOperatorDown",
            "ClusterOperatorDegraded",
            "ClusterOperatorFlapping",
            "CannotEvaluateConditionalUpdates",
            "OpenShiftUpdateRiskMightApply",
        ]
    );
    let served = Served {
        samples: served(),
        target: target_labels(),
    };
    // A served label named like a target label would be renamed exported_<name> by Prometheus.
    for s in &served.samples {
        for l in s.labels.keys() {
            assert!(
                !served.target.contains_key(l.as_str()),
                "{} carries the target label {l}",
                s.metric
            );
        }
    }
    let mut found = Found::default();
    for (alert, expr) in &rules {
        let e = parser::parse(expr).unwrap_or_else(|err| panic!("{alert}: {err}\n{expr}"));
        walk(&e, alert, &served, &mut found);
    }
    let mut metrics = BTreeSet::new();
    for Selector { alert, vs } in &found.selectors {
        let name = vs.name.clone().unwrap_or_default();
        metrics.insert(name.clone());
        let mut sample_matchers = Vec::new();
        for m in &vs.matchers.matchers {
            match served.target_matches(m) {
                Some(true) => {}
                Some(false) => found.problems.push(format!(
                    "{alert}: {name}{{{m}}}: the target's {} does not match",
                    m.name
                )),
                None if served.target.contains_key(m.name.as_str()) => {}
                None => sample_matchers.push(m),
            }
        }
        if name == "up" {
            assert!(
                sample_matchers.is_empty(),
                "{alert}: up matches only target labels"
            );
            continue;
        }
        let of_metric: Vec<_> = served.samples.iter().filter(|s| s.metric == name).collect();
        if of_metric.is_empty() {
            found.problems.push(format!("{alert}: {name} is not served"));
            continue;
        }
        for m in &sample_matchers {
            if !of_metric.iter().any(|s| s.labels.get(&m.name).is_some()) {
                found
                    .problems
                    .push(format!("{alert}: {name} has no label {}", m.name));
            }
        }
        // The realistic cluster has every alert's condition: some sample matches the whole
        // selector (a label value spelled differently would match none).
        let hits = of_metric
            .iter()
            .filter(|s| {
                sample_matchers.iter().all(|m| {
                    let v = s.labels.get(&m.name).unwrap_or_default();
                    m.is_match(v)
                })
            })
            .count();
        if hits == 0 {
            found.problems.push(format!(
                "{alert}: no served sample matches {}",
                Expr::VectorSelector(vs.clone())
            ));
        }
    }
    assert!(found.problems.is_empty(), "{}", found.problems.join("\n"));
    assert_eq!(
        metrics.into_iter().collect::<Vec<_>>(),
        [
            "cluster_operator_conditions",
            "cluster_operator_up",
            "cluster_version_available_updates",
            "cluster_version_conditional_update_condition_seconds",
            "cluster_version_operator_update_retrieval_timestamp_seconds",
            "cluster_version_risk_conditions",
            "up",
        ]
    );
}

/// The walk finds what it should: a rule using a label cvo does not serve is reported (the
/// check above can fail).
#[test]
fn a_rule_on_a_missing_label_or_metric_is_reported() {
    let served = Served {
        samples: served(),
        target: target_labels(),
    };
    let mut f = Found::default();
    let e = parser::parse(
        r#"max by (namespace, nosuchlabel) (cluster_operator_up{job="cluster-version-operator"})"#,
    )
    .expect("parse");
    walk(&e, "T", &served, &mut f);
    assert_eq!(
        f.problems
            .iter()
            .filter(|p| p.contains("no label nosuchlabel"))
            .count(),
        1,
        "{:?}",
        f.problems
    );
    let e = parser::parse(r#"up{job="cvo"}"#).expect("parse");
    let m = match &e {
        Expr::VectorSelector(vs) => vs.matchers.matchers[0].clone(),
        _ => unreachable!("a selector"),
    };
    assert_eq!(m.op, MatchOp::Equal);
    assert_eq!(
        served.target_matches(&m),
        Some(false),
        "job is the Service name, not cvo"
    );
}

/// The shipped copy of upstream's PrometheusRule has upstream's alerts and expressions.
#[test]
fn the_shipped_prometheusrule_is_upstreams() {
    let shipped = rules(&[&root().join("install/monitoring/prometheusrule.yaml")]);
    let upstream = rules(&[&root()
        .join(UPSTREAM)
        .join("0000_90_cluster-version-operator_02_servicemonitor.yaml")]);
    assert_eq!(shipped, upstream);
    let text = std::fs::read_to_string(root().join("install/monitoring/prometheusrule.yaml")).expect("read");
    let body: String = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(
        !body.contains("{{ \"{{"),
        "upstream's template escapes are resolved"
    );
}

/// The scraper RBAC: Prometheus' ServiceAccount may get /metrics.
#[test]
fn prometheus_may_get_metrics() {
    let docs = yaml_docs(&root().join("install/05-metrics-reader.yaml"));
    let role = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRole")
        .expect("a ClusterRole");
    assert_eq!(role["rules"][0]["nonResourceURLs"][0], "/metrics");
    assert_eq!(role["rules"][0]["verbs"][0], "get");
    let binding = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRoleBinding")
        .expect("a ClusterRoleBinding");
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["kind"], "ServiceAccount");
    assert_eq!(binding["subjects"][0]["namespace"], "openshift-monitoring");
    assert_eq!(binding["subjects"][0]["name"], "prometheus-k8s");
}
