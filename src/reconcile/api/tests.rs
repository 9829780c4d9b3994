//! The snapshot's own verdicts: the watch-only in-sync count and a pass that only waits on
//! operators still updating.

use serde_json::json;

use super::*;
use crate::openshift::{ClusterVersionStatus, Condition, ConditionStatus};

fn task(index: usize, state: TaskState) -> TaskProgress {
    TaskProgress {
        index,
        name: format!("configmap \"ns/c{index}\" ({index} of 6)"),
        run_level: Some(10),
        component: None,
        state,
    }
}

fn record(task_index: usize, drift: Drift) -> DriftRecord {
    DriftRecord {
        task: format!("configmap \"ns/c{task_index}\" ({task_index} of 6)"),
        kind: "ConfigMap".into(),
        namespace: "ns".into(),
        name: format!("c{task_index}"),
        drift,
    }
}

fn snapshot(mode: EngineMode) -> StatusSnapshot {
    StatusSnapshot {
        mode,
        tasks: vec![
            task(1, TaskState::Done),
            task(2, TaskState::Done),
            task(3, TaskState::Done),
            task(4, TaskState::Skipped("capability Foo disabled".into())),
            task(5, TaskState::Pending),
            task(6, TaskState::Done),
        ]
        .into(),
        drift: vec![
            record(2, Drift::Delete),
            // Two records of one task count once.
            record(3, Drift::Create { object: None }),
            record(
                3,
                Drift::Create {
                    object: Some(Arc::new(json!({"kind": "ConfigMap"}))),
                },
            ),
            // A record without a change is no difference.
            record(6, Drift::None),
        ]
        .into(),
        ..StatusSnapshot::default()
    }
}

#[test]
fn in_sync_counts_done_tasks_without_a_change_of_the_compared_ones() {
    // Done 4 (tasks 1, 2, 3, 6), 2 of them differ (2, 3): 2 in sync; 5 compared (4 skipped).
    assert_eq!(snapshot(EngineMode::WatchOnly).in_sync(), Some((2, 5)));
    assert_eq!(snapshot(EngineMode::ActiveApply).in_sync(), None);
    assert_eq!(StatusSnapshot::default().in_sync(), Some((0, 0)));
}

fn failing(status: ConditionStatus) -> ClusterVersionStatus {
    ClusterVersionStatus {
        conditions: vec![Condition {
            type_: "Failing".into(),
            status,
            ..Condition::default()
        }],
        ..ClusterVersionStatus::default()
    }
}

#[test]
fn only_waiting_is_an_active_pass_failing_on_updating_operators_alone() {
    let with = |mode, reason: &str, cv: Option<ClusterVersionStatus>| StatusSnapshot {
        mode,
        failure: Some(Failure {
            reason: reason.into(),
            message: "Cluster operator dns is updating versions".into(),
        }),
        cluster_version: cv.map(Into::into),
        ..StatusSnapshot::default()
    };
    let active = EngineMode::ActiveApply;
    assert!(with(active, "ClusterOperatorUpdating", None).only_waiting());
    assert!(
        with(
            active,
            "ClusterOperatorsUpdating",
            Some(failing(ConditionStatus::False))
        )
        .only_waiting()
    );
    assert!(
        !with(
            active,
            "ClusterOperatorUpdating",
            Some(failing(ConditionStatus::True))
        )
        .only_waiting()
    );
    assert!(!with(active, "ClusterOperatorDegraded", None).only_waiting());
    assert!(!with(EngineMode::WatchOnly, "ClusterOperatorUpdating", None).only_waiting());
    assert!(
        !StatusSnapshot {
            mode: active,
            ..StatusSnapshot::default()
        }
        .only_waiting()
    );
}
