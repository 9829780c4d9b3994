//! The overview's decisions on oc's `oc adm upgrade status` fixture clusters (whose expected
//! numbers are oc's own `.output` files) and on small made-up operators and ClusterVersions
//! for each branch of the status and headline rules.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::*;
use crate::{assess::assess, cluster::snapshot};

/// oc's fixture scenario `name` and its assessment at the snapshot's time.
fn scenario(name: &str) -> (ClusterState, Assessment) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream/oc-upgrade-status");
    let paths: Vec<PathBuf> = ["cv", "co", "mc", "mcp", "node"]
        .iter()
        .map(|k| dir.join(format!("{name}-{k}.yaml")))
        .collect();
    let state = snapshot::load(&paths).unwrap_or_else(|e| panic!("{name}: {e}"));
    let now = state
        .snapshot_time()
        .unwrap_or_else(|| panic!("{name}: no times"));
    let a = assess(&state, None, now);
    (state, a)
}

fn co(name: &str, version: &str, conds: &[(&str, &str, &str)]) -> ClusterOperator {
    let conditions: Vec<Value> = conds
        .iter()
        .map(|(t, s, m)| json!({"type": t, "status": s, "message": m, "reason": format!("{t}Reason")}))
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "status": {"versions": [{"name": "operator", "version": version}], "conditions": conditions}
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

const OK: [(&str, &str, &str); 3] = [
    ("Available", "True", "fine"),
    ("Degraded", "False", ""),
    ("Progressing", "False", ""),
];

#[test]
fn degraded_fixture_is_failing_with_the_assessed_progress() {
    let (state, a) = scenario("4.14.1-degraded");
    let o = overview(&state, &a);
    // oc: `Completion: 97% (32 operators updated, 1 updating, 0 waiting)`.
    let c = o.completion.as_ref().unwrap_or_else(|| panic!("no completion"));
    assert_eq!((c.updated, c.total, c.updating, c.waiting), (32, 33, 1, 0));
    assert!(c.assessed);
    assert!((c.ratio - 32.0 / 33.0).abs() < 1e-9, "{}", c.ratio);
    // oc: `Operator Health: 28 Healthy, 1 Unavailable, 4 Available but degraded`.
    assert_eq!(
        (o.health.healthy, o.health.unavailable, o.health.degraded),
        (28, 1, 4)
    );
    let Headline::Failing { condition, progress } = &o.headline else {
        panic!("{:?}", o.headline)
    };
    assert_eq!(condition.reason(), "ClusterOperatorsDegraded");
    assert_eq!(
        *progress,
        Some(Progress::Assessed(ControlPlaneAssessment::Stalled, c.ratio))
    );
    assert!(o.updating);
    assert_eq!(o.desired.as_deref(), Some("4.14.1"));
    // Every ClusterOperator has a status: the one control-plane-machine-set is unavailable.
    let unav: Vec<&str> = o
        .operators
        .iter()
        .filter(|s| s.status == OperatorStatus::Unavailable)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(unav, ["control-plane-machine-set"]);
    let degr: Vec<&str> = o
        .operators
        .iter()
        .filter(|s| s.status == OperatorStatus::Degraded)
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        degr,
        [
            "etcd",
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler"
        ]
    );
}

#[test]
fn paused_pool_fixture_is_the_control_plane_assessment() {
    let (state, a) = scenario("4.14.1-paused-worker-pool");
    let o = overview(&state, &a);
    // oc: `Completion: 12% (4 operators updated, 0 updating, 29 waiting)`, `33 Healthy`.
    let c = o.completion.as_ref().unwrap_or_else(|| panic!("no completion"));
    assert_eq!((c.updated, c.total, c.updating, c.waiting), (4, 33, 0, 29));
    assert_eq!(
        (o.health.healthy, o.health.unavailable, o.health.degraded),
        (33, 0, 0)
    );
    let Headline::ControlPlane {
        assessment,
        progressing,
        target,
    } = &o.headline
    else {
        panic!("{:?}", o.headline)
    };
    assert_eq!(*assessment, ControlPlaneAssessment::Progressing);
    assert_eq!(target, "4.14.1");
    assert_eq!(
        progressing.as_ref().map(|c| c.status),
        Some(ConditionStatus::True)
    );
    // The 29 waiting operators are Pending with their own Progressing message, or waiting
    // for 4.14.1 when it says nothing.
    let pending = o
        .operators
        .iter()
        .filter(|s| s.status == OperatorStatus::Pending)
        .count();
    assert_eq!(pending, 29);
    for s in o.operators.iter().filter(|s| s.waiting_for.is_some()) {
        assert_eq!(s.waiting_for.as_deref(), Some("4.14.1"), "{}", s.name);
        assert!(
            s.decided_by
                .as_ref()
                .is_none_or(|c| c.message().trim().is_empty())
        );
    }
}

#[test]
fn not_upgrading_fixture_is_up_to_date() {
    let (state, a) = scenario("not-upgrading");
    let o = overview(&state, &a);
    assert!(!o.updating);
    assert_eq!(o.completion, None);
    let Headline::UpToDate {
        not_upgradeable,
        available,
    } = &o.headline
    else {
        panic!("{:?}", o.headline)
    };
    assert_eq!(*not_upgradeable, None);
    assert_eq!(
        available.as_ref().map(Condition::message),
        Some("Done applying 4.14.1")
    );
    // Counted over every ClusterOperator, all at 4.14.1.
    assert_eq!(o.health.total, state.cluster_operators.len());
    assert!(o.operators.iter().all(|s| s.at_target && s.waiting_for.is_none()));
}

#[test]
fn operator_status_order_of_decision() {
    let at = |conds: &[(&str, &str, &str)], at_target| {
        let c = co("x", "1", conds);
        let (s, d) = operator_status(&c, at_target);
        (s, d.map(|d| d.type_.clone()))
    };
    let d = |t: &str| Some(t.to_string());
    assert_eq!(at(&[], true), (OperatorStatus::Unknown, None));
    assert_eq!(
        at(&[("Upgradeable", "False", "")], true),
        (OperatorStatus::Unknown, None)
    );
    assert_eq!(
        at(&[("Degraded", "True", "")], true),
        (OperatorStatus::Unavailable, None)
    );
    assert_eq!(
        at(&[("Available", "False", ""), ("Degraded", "True", "")], true),
        (OperatorStatus::Unavailable, d("Available"))
    );
    assert_eq!(
        at(
            &[
                ("Available", "True", ""),
                ("Degraded", "True", ""),
                ("Progressing", "True", "")
            ],
            true
        ),
        (OperatorStatus::Degraded, d("Degraded"))
    );
    assert_eq!(
        at(&[("Available", "True", ""), ("Progressing", "True", "")], false),
        (OperatorStatus::Progressing, d("Progressing"))
    );
    assert_eq!(at(&OK, false), (OperatorStatus::Pending, d("Progressing")));
    assert_eq!(
        at(&[("Available", "True", "")], false),
        (OperatorStatus::Pending, d("Available"))
    );
    let mut noup = OK.to_vec();
    noup.push(("Upgradeable", "False", ""));
    assert_eq!(
        at(&noup, true),
        (OperatorStatus::NotUpgradeable, d("Upgradeable"))
    );
    assert_eq!(
        at(&[("Available", "True", ""), ("Degraded", "Unknown", "")], true),
        (OperatorStatus::Unknown, d("Available"))
    );
    assert_eq!(at(&OK, true), (OperatorStatus::Ok, d("Available")));
}

#[test]
fn a_pending_operator_without_a_message_waits_for_the_target() {
    let silent = co(
        "dns",
        "4.16.3",
        &[("Available", "True", "ok"), ("Progressing", "False", " ")],
    );
    let s = operator_state(&silent, Some("4.16.4"));
    assert_eq!(s.status, OperatorStatus::Pending);
    assert!(!s.at_target);
    assert_eq!(s.waiting_for.as_deref(), Some("4.16.4"));
    assert_eq!(s.progressing, Some(ConditionStatus::False));
    assert_eq!(s.upgradeable, None);
    let says = co(
        "dns",
        "4.16.3",
        &[("Available", "True", "ok"), ("Progressing", "False", "idle")],
    );
    assert_eq!(operator_state(&says, Some("4.16.4")).waiting_for, None);
    // No desired version: every operator is at the target.
    let s = operator_state(&silent, None);
    assert!(s.at_target);
    assert_eq!(s.status, OperatorStatus::Ok);
}

#[test]
fn completion_and_health_over_operators() {
    let ops = [
        operator_state(&co("a", "2", &OK), Some("2")),
        operator_state(
            &co(
                "b",
                "1",
                &[("Available", "True", ""), ("Progressing", "True", "moving")],
            ),
            Some("2"),
        ),
        operator_state(&co("c", "1", &OK), Some("2")),
        operator_state(&co("d", "1", &[("Available", "False", "down")]), Some("2")),
        operator_state(
            &co("e", "2", &[("Available", "True", ""), ("Degraded", "True", "")]),
            Some("2"),
        ),
    ];
    let c = completion(&ops);
    assert_eq!((c.updated, c.total, c.updating, c.waiting), (2, 5, 1, 2));
    assert!((c.ratio - 0.4).abs() < 1e-9);
    assert!(!c.assessed);
    assert_eq!(
        health(&ops),
        OperatorHealth {
            total: 5,
            healthy: 3,
            unavailable: 1,
            degraded: 1
        }
    );
    assert_eq!(completion(&[]).ratio, 0.0);
}

fn cv_state(conds: Value, feed: FeedStatus) -> ClusterState {
    let cv: ClusterVersion = serde_json::from_value(json!({
        "metadata": {"name": "version"},
        "status": {
            "desired": {"version": "4.16.3", "image": "i3"},
            "history": [{"state": "Completed", "version": "4.16.3", "image": "i3"}],
            "conditions": conds
        }
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    ClusterState {
        cluster_version: Some(cv),
        feed,
        ..ClusterState::default()
    }
}

#[test]
fn headline_from_the_cluster_version_alone() {
    // No ClusterOperators: the assessment errs, so the ClusterVersion decides.
    let decide = |conds: Value| {
        let s = cv_state(conds, FeedStatus::Static);
        let a = assess(&s, None, chrono::Utc::now());
        assert!(a.error.is_some());
        overview(&s, &a).headline
    };
    let h = decide(json!([
        {"type": "Failing", "status": "True", "reason": "F"},
        {"type": "Available", "status": "False", "reason": "A"},
        {"type": "Progressing", "status": "True", "reason": "P"}
    ]));
    assert!(
        matches!(&h, Headline::Failing { condition, progress: Some(Progress::OperatorsUpdated(r)) }
            if condition.reason() == "F" && *r == 0.0),
        "{h:?}"
    );
    let h = decide(json!([
        {"type": "Available", "status": "False", "reason": "A"},
        {"type": "Progressing", "status": "False", "reason": "P"}
    ]));
    assert!(
        matches!(&h, Headline::Unavailable { condition, progress: None } if condition.reason() == "A"),
        "{h:?}"
    );
    let h = decide(json!([{"type": "Progressing", "status": "True", "reason": "P"}]));
    assert!(
        matches!(&h, Headline::Progressing { condition } if condition.reason() == "P"),
        "{h:?}"
    );
    let h = decide(json!([
        {"type": "Available", "status": "True", "reason": "A"},
        {"type": "Upgradeable", "status": "False", "reason": "U"}
    ]));
    assert!(
        matches!(&h, Headline::UpToDate { not_upgradeable: Some(u), available: Some(a) }
            if u.reason() == "U" && a.reason() == "A"),
        "{h:?}"
    );
}

#[test]
fn headline_without_a_cluster_version_names_the_feed() {
    let since = chrono::Utc::now();
    let cases = [
        (FeedStatus::Static, NoClusterVersion::Absent),
        (
            FeedStatus::Live {
                synced: false,
                error: None,
            },
            NoClusterVersion::Syncing,
        ),
        (
            FeedStatus::Live {
                synced: true,
                error: Some(crate::cluster::FeedError {
                    message: "refused".into(),
                    since,
                }),
            },
            NoClusterVersion::Unreachable,
        ),
    ];
    for (feed, want) in cases {
        let s = ClusterState {
            feed,
            ..ClusterState::default()
        };
        let a = assess(&s, None, since);
        assert_eq!(overview(&s, &a).headline, Headline::NoClusterVersion(want));
    }
}

/// One of our snapshot files (`tests/fixtures/snapshots/`) and its assessment at `now`.
fn snapshot_at(file: &str, now: &str) -> (ClusterState, Assessment) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/snapshots")
        .join(file);
    let state = snapshot::load(&[path]).unwrap_or_else(|e| panic!("{file}: {e}"));
    let now = chrono::DateTime::parse_from_rfc3339(now)
        .map(|t| t.to_utc())
        .unwrap_or_else(|e| panic!("{e}"));
    let a = assess(&state, None, now);
    (state, a)
}

#[test]
fn a_refused_release_blocks_while_not_updating() {
    // `cvo status` on it: "The cluster is not updating." and the Error insight below.
    let (state, a) = snapshot_at("release-not-accepted.yaml", "2024-06-02T09:05:00Z");
    assert!(!a.updating);
    let o = overview(&state, &a);
    let Headline::Blocked {
        summary,
        error,
        progress,
    } = &o.headline
    else {
        panic!("{:?}", o.headline)
    };
    assert!(
        summary.starts_with("requested update to 4.16.4 not accepted: RetrievePayload: "),
        "{summary}"
    );
    assert!(*error);
    assert_eq!(*progress, None);
}

#[test]
fn an_operand_wait_blocks_with_the_assessed_progress() {
    // `cvo status`: Stalled, `0% (0 operators updated, 1 updating, 0 waiting)`, `1 Healthy`,
    // the Warning "waiting on kube-apiserver to report raw-internal 4.16.4 for 30m".
    let (state, a) = snapshot_at("operand-not-reported.yaml", "2024-06-02T09:50:00Z");
    let o = overview(&state, &a);
    let c = o.completion.as_ref().unwrap_or_else(|| panic!("no completion"));
    assert_eq!((c.updated, c.total, c.updating, c.waiting), (0, 1, 1, 0));
    assert!(c.assessed);
    assert_eq!(
        (o.health.healthy, o.health.unavailable, o.health.degraded),
        (1, 0, 0)
    );
    assert_eq!(
        o.headline,
        Headline::Blocked {
            summary: "waiting on kube-apiserver to report raw-internal 4.16.4 for 30m".into(),
            error: false,
            progress: Some(Progress::Assessed(ControlPlaneAssessment::Stalled, 0.0)),
        }
    );
}

#[test]
fn fallback_insights_say_what_oc_says_of_the_same_objects() {
    // oc's Update Health lines for 4.14.1-degraded: the same summaries, errors first.
    let (state, a) = scenario("4.14.1-degraded");
    let o = overview(&state, &a);
    let got: Vec<(Level, Impact, String, Vec<String>)> = fallback_insights(&state, &o, &a)
        .into_iter()
        .map(|i| {
            assert!(i.since.is_empty(), "{}", i.summary);
            (
                i.level,
                i.impact,
                i.summary,
                i.resources
                    .iter()
                    .map(|r| format!("{}: {}", r.kind, r.name))
                    .collect(),
            )
        })
        .collect();
    let co = |name: &str, what: &str, reason: &str| {
        (
            Level::Error,
            Impact::ApiAvailability,
            format!("Cluster Operator {name} is {what} ({reason})"),
            vec![format!("clusteroperators.config.openshift.io: {name}")],
        )
    };
    assert_eq!(
        got,
        [
            co("control-plane-machine-set", "unavailable", "UnavailableReplicas"),
            co(
                "etcd",
                "degraded",
                "EtcdEndpoints_ErrorUpdatingEtcdEndpoints::EtcdMembers_UnhealthyMembers::NodeController_MasterNodesReady"
            ),
            co("kube-apiserver", "degraded", "NodeController_MasterNodesReady"),
            co(
                "kube-controller-manager",
                "degraded",
                "NodeController_MasterNodesReady"
            ),
            co("kube-scheduler", "degraded", "NodeController_MasterNodesReady"),
            (
                Level::Warning,
                Impact::UpdateStalled,
                "Cluster Version version is failing to proceed with the update (ClusterOperatorsDegraded)"
                    .into(),
                vec!["clusterversions.config.openshift.io: version".into()]
            ),
        ]
    );
}

#[test]
fn fallback_insights_name_a_paused_pool_with_outdated_nodes() {
    let (state, a) = scenario("4.14.1-paused-worker-pool");
    let o = overview(&state, &a);
    let got: Vec<(Level, String)> = fallback_insights(&state, &o, &a)
        .into_iter()
        .map(|i| (i.level, i.summary))
        .collect();
    assert_eq!(
        got,
        [(
            Level::Info,
            "Outdated nodes in a paused pool 'worker' will not be updated".to_string()
        )]
    );
}
