use super::*;
use crate::openshift::config_v1::ClusterOperatorStatus;

fn t(s: i64) -> Option<DateTime<Utc>> {
    DateTime::<Utc>::from_timestamp(s, 0)
}

fn entry(
    state: UpdateState,
    version: &str,
    image: &str,
    started: i64,
    completed: Option<i64>,
) -> UpdateHistory {
    UpdateHistory {
        state,
        started_time: t(started),
        completion_time: completed.and_then(t),
        version: version.into(),
        image: image.into(),
        ..UpdateHistory::default()
    }
}

fn find_sample<'a>(s: &'a [Sample], name: &str, labels: &[(&str, &str)]) -> Option<&'a Sample> {
    s.iter().find(|x| {
        x.name == name
            && x.labels.len() == labels.len()
            && x.labels
                .iter()
                .zip(labels)
                .all(|((k, v), (wk, wv))| k == wk && v == wv)
    })
}

fn value(s: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    find_sample(s, name, labels)
        .unwrap_or_else(|| panic!("no {name}{labels:?} in {s:#?}"))
        .value
}

fn current() -> CurrentRelease {
    CurrentRelease {
        version: "0.0.2".into(),
        image: "test/image:1".into(),
        created: t(3),
    }
}

/// Upstream `pkg/cvo/metrics_test.go` `Test_operatorMetrics_Collect` "collects completed history".
#[test]
fn collects_completed_history() {
    let mut cv = ClusterVersion::default();
    cv.metadata.name = Some("version".into());
    cv.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::from_second(2).expect("time"),
    ));
    cv.status.history = vec![
        entry(UpdateState::Partial, "0.0.2", "test/image:1", 2, None),
        entry(UpdateState::Completed, "0.0.1", "test/image:0", 1, Some(4)),
    ];
    let s = samples(&ClusterInputs {
        cluster_version: Some(cv),
        current: current(),
        ..ClusterInputs::default()
    });
    let cvs = |ty: &str, v: &str, i: &str, f: &str| {
        value(
            &s,
            "cluster_version",
            &[("type", ty), ("version", v), ("image", i), ("from_version", f)],
        )
    };
    assert_eq!(cvs("completed", "0.0.1", "test/image:0", ""), 4.0);
    assert_eq!(cvs("initial", "0.0.1", "test/image:0", ""), 2.0);
    assert_eq!(cvs("cluster", "0.0.2", "test/image:1", "0.0.1"), 2.0);
    assert_eq!(cvs("updating", "0.0.2", "test/image:1", "0.0.1"), 2.0);
    assert_eq!(cvs("current", "0.0.2", "test/image:1", "0.0.1"), 3.0);
    assert_eq!(
        value(
            &s,
            "cluster_installer",
            &[("type", ""), ("version", ""), ("invoker", "")]
        ),
        1.0
    );
    assert_eq!(
        s.iter().filter(|x| x.name == "cluster_version").count(),
        5,
        "{s:#?}"
    );
    // No condition: the ClusterVersion is not up, for want of an Available condition.
    assert_eq!(
        value(
            &s,
            "cluster_operator_up",
            &[
                ("name", "version"),
                ("version", "0.0.1"),
                ("reason", "NoAvailableCondition")
            ]
        ),
        0.0
    );
}

/// Upstream "collects current version": no ClusterVersion object.
#[test]
fn collects_current_version_without_a_cluster_version() {
    let s = samples(&ClusterInputs {
        current: current(),
        ..ClusterInputs::default()
    });
    assert_eq!(
        value(
            &s,
            "cluster_operator_up",
            &[
                ("name", "version"),
                ("version", ""),
                ("reason", "ClusterVersionNotFound")
            ]
        ),
        0.0
    );
    assert_eq!(
        value(
            &s,
            "cluster_operator_conditions",
            &[
                ("name", "version"),
                ("condition", "Available"),
                ("reason", "ClusterVersionNotFound")
            ]
        ),
        0.0
    );
    let cur = [
        ("type", "current"),
        ("version", "0.0.2"),
        ("image", "test/image:1"),
        ("from_version", ""),
    ];
    assert_eq!(value(&s, "cluster_version", &cur), 3.0);
    let unknown = samples(&ClusterInputs {
        current: CurrentRelease {
            created: None,
            ..current()
        },
        ..ClusterInputs::default()
    });
    assert_eq!(value(&unknown, "cluster_version", &cur), 0.0);
}

fn cond(ty: &str, status: ConditionStatus, reason: &str, at: i64) -> Condition {
    Condition {
        type_: ty.into(),
        status,
        last_transition_time: t(at),
        reason: Some(reason.into()),
        ..Condition::default()
    }
}

fn operator(name: &str, version: &str, conditions: Vec<Condition>) -> ClusterOperator {
    let mut co = ClusterOperator::default();
    co.metadata.name = Some(name.into());
    co.status = ClusterOperatorStatus {
        conditions,
        versions: vec![crate::openshift::config_v1::OperandVersion {
            name: "operator".into(),
            version: version.into(),
        }],
        ..ClusterOperatorStatus::default()
    };
    co
}

#[test]
fn operators_updates_capabilities_desired_failure_and_payload() {
    use ConditionStatus::{False, True, Unknown};
    let mut cv = ClusterVersion::default();
    cv.spec.channel = Some("stable-4.16".into());
    cv.spec.desired_update = Some(crate::openshift::config_v1::Update {
        version: Some("0.0.3".into()),
        image: Some("test/image:3".into()),
        ..Default::default()
    });
    cv.status.conditions = vec![
        cond("Available", True, "", 10),
        cond("Failing", True, "ClusterOperatorDegraded", 20),
        cond("RetrievedUpdates", True, "", 5),
        cond("Upgradeable", Unknown, "", 6),
    ];
    cv.status.history = vec![entry(UpdateState::Completed, "0.0.2", "test/image:1", 1, Some(7))];
    cv.status.capabilities.known_capabilities = vec!["Console".into(), "Insights".into()];
    cv.status.capabilities.enabled_capabilities = vec!["Console".into()];
    cv.status.available_updates = Some(vec![Default::default(), Default::default()]);
    let dns = operator(
        "dns",
        "0.0.2",
        vec![
            cond("Available", True, "AsExpected", 1),
            cond("Degraded", False, "AsExpected", 1),
            cond("Upgradeable", Unknown, "X", 1),
        ],
    );
    let etcd = operator("etcd", "0.0.2", vec![cond("Degraded", True, "Boom", 1)]);
    let s = samples(&ClusterInputs {
        cluster_version: Some(cv),
        cluster_operators: vec![dns, etcd],
        installer: Installer::Known {
            kind: "openshift-install",
            version: Some("v4.16.0".into()),
            invoker: None,
        },
        current: current(),
        update_service: None,
        payload: PayloadProgress {
            version: "0.0.2".into(),
            done: 7,
            total: 10,
            errors: 2,
        },
        update_retrieval: t(99),
    });
    assert_eq!(
        value(
            &s,
            "cluster_version_available_updates",
            &[("upstream", "<default>"), ("channel", "stable-4.16")]
        ),
        2.0
    );
    assert_eq!(
        value(&s, "cluster_version_capability", &[("name", "Console")]),
        1.0
    );
    assert_eq!(
        value(&s, "cluster_version_capability", &[("name", "Insights")]),
        0.0
    );
    assert_eq!(
        value(
            &s,
            "cluster_version",
            &[
                ("type", "desired"),
                ("version", "0.0.3"),
                ("image", "test/image:3"),
                ("from_version", "0.0.2")
            ]
        ),
        20.0,
        "the latest time on the ClusterVersion"
    );
    assert_eq!(
        value(
            &s,
            "cluster_version",
            &[
                ("type", "failure"),
                ("version", "0.0.2"),
                ("image", "test/image:1"),
                ("from_version", "0.0.2")
            ]
        ),
        20.0
    );
    assert_eq!(
        value(
            &s,
            "cluster_operator_up",
            &[("name", "dns"), ("version", "0.0.2"), ("reason", "AsExpected")]
        ),
        1.0
    );
    assert_eq!(
        value(
            &s,
            "cluster_operator_up",
            &[
                ("name", "etcd"),
                ("version", "0.0.2"),
                ("reason", "NoAvailableCondition")
            ]
        ),
        0.0
    );
    assert_eq!(
        value(
            &s,
            "cluster_operator_up",
            &[("name", "version"), ("version", "0.0.2"), ("reason", "")]
        ),
        1.0
    );
    assert_eq!(
        value(
            &s,
            "cluster_operator_conditions",
            &[("name", "etcd"), ("condition", "Degraded"), ("reason", "Boom")]
        ),
        1.0
    );
    // Unknown conditions are skipped, for operators and the ClusterVersion alike.
    assert!(!s.iter().any(|x| {
        x.name == "cluster_operator_conditions"
            && x.labels
                .iter()
                .any(|(k, v)| *k == "condition" && v == "Upgradeable")
    }));
    assert_eq!(
        value(
            &s,
            "cluster_installer",
            &[
                ("type", "openshift-install"),
                ("version", "v4.16.0"),
                ("invoker", "<missing>")
            ]
        ),
        1.0
    );
    assert_eq!(
        value(
            &s,
            "cluster_version_payload",
            &[("version", "0.0.2"), ("type", "applied")]
        ),
        7.0
    );
    assert_eq!(
        value(
            &s,
            "cluster_version_payload",
            &[("version", "0.0.2"), ("type", "pending")]
        ),
        3.0
    );
    assert_eq!(
        value(&s, "cluster_operator_payload_errors", &[("version", "0.0.2")]),
        2.0
    );
    assert_eq!(
        value(
            &s,
            "cluster_version_operator_update_retrieval_timestamp_seconds",
            &[("name", "")]
        ),
        99.0
    );
}

#[test]
fn transitions_count_status_changes_only() {
    use ConditionStatus::{False, True};
    let mut tr = Transitions::default();
    tr.observe(&[operator("dns", "1", vec![cond("Degraded", False, "A", 1)])]);
    assert!(tr.samples().is_empty(), "the first sight is no transition");
    tr.observe(&[operator("dns", "1", vec![cond("Degraded", False, "B", 2)])]);
    assert!(tr.samples().is_empty(), "a reason change is no transition");
    tr.observe(&[operator("dns", "1", vec![cond("Degraded", True, "B", 3)])]);
    tr.observe(&[operator("dns", "1", vec![cond("Degraded", False, "B", 4)])]);
    let s = tr.samples();
    assert_eq!(
        value(
            &s,
            "cluster_operator_condition_transitions",
            &[("name", "dns"), ("condition", "Degraded")]
        ),
        2.0
    );
}
