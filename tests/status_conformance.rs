//! Conformance cases of the ClusterVersion status writer's pure core, ported from upstream
//! `pkg/cvo/sync_worker_test.go`, `status_test.go`, `status_history_test.go`, `cvo_test.go`,
//! `pkg/payload/precondition/**_test.go`, `lib/validation/validation_test.go`,
//! `pkg/risk/adminack/adminack_test.go` and the status parts of `pkg/cvo/cvo_scenarios_test.go`,
//! with upstream's exact strings.

use std::{
    collections::HashMap,
    time::{Duration as StdDuration, Instant},
};

use chrono::{DateTime, Duration, TimeZone, Utc};
use cvo::{
    openshift::{
        AcceptRisk, ClusterVersion, ClusterVersionStatus, Condition, ConditionStatus, ConditionalUpdate,
        Release, Update, UpdateHistory, UpdateState,
    },
    reconcile::{
        errors::{
            ApiErrorKind, SyncError, TaskRef, UpdateEffect, UpdateError, condense_cluster_operators,
            multiple_errors, summarize_task_graph_errors, summary_for_reason, wrap_task_error,
        },
        status::{
            HistoryMerge, StatusInputs, compute_status, failing_status, merge_equal_versions,
            merge_operator_history, no_desired_image_failure, prune_history,
            upgradeable::{
                PreconditionError, PreconditionFailure, Risk, Target, check_recommended_update, summarize,
            },
            validation::validate_cluster_version,
            worker_status::{LoadPayloadStatus, StatusThrottle, SyncWorkerStatus, equal_digest, report},
        },
    },
};

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 7, 1, 12, 0, 0)
        .single()
        .expect("valid time")
}

fn rel(version: &str, image: &str) -> Release {
    Release {
        version: version.into(),
        image: image.into(),
        ..Release::default()
    }
}

fn hist(state: UpdateState, version: &str, image: &str) -> UpdateHistory {
    UpdateHistory {
        state,
        version: version.into(),
        image: image.into(),
        ..UpdateHistory::default()
    }
}

fn co_task(name: &str) -> TaskRef {
    TaskRef {
        index: 1,
        total: 3,
        group: "config.openshift.io".into(),
        kind: "ClusterOperator".into(),
        namespace: String::new(),
        name: name.into(),
    }
}

fn co_updating(name: &str) -> SyncError {
    UpdateError::new(
        "ClusterOperatorUpdating",
        format!("Cluster operator {name} is updating versions"),
    )
    .with_plural(
        "ClusterOperatorsUpdating",
        "Cluster operators %s are updating versions",
    )
    .with_effect(UpdateEffect::None)
    .with_name(name)
    .with_task(co_task(name))
    .into()
}

fn co_not_available(name: &str) -> SyncError {
    UpdateError::new(
        "ClusterOperatorNotAvailable",
        format!("Cluster operator {name} is not available"),
    )
    .with_plural(
        "ClusterOperatorsNotAvailable",
        "Cluster operators %s are not available",
    )
    .with_effect(UpdateEffect::Fail)
    .with_name(name)
    .with_task(co_task(name))
    .into()
}

fn co_degraded(name: &str, effect: UpdateEffect) -> SyncError {
    UpdateError::new(
        "ClusterOperatorDegraded",
        format!("Cluster operator {name} is degraded"),
    )
    .with_plural("ClusterOperatorsDegraded", "Cluster operators %s are degraded")
    .with_effect(effect)
    .with_name(name)
    .with_task(co_task(name))
    .into()
}

fn ue(e: &SyncError) -> &UpdateError {
    e.as_update().expect("an UpdateError")
}

fn cond<'a>(st: &'a ClusterVersionStatus, t: &str) -> &'a Condition {
    st.conditions
        .iter()
        .find(|c| c.type_ == t)
        .unwrap_or_else(|| panic!("condition {t} missing in {:?}", st.conditions))
}

/// (status, reason, message) of a condition.
/// Asserts condition `t` of `st` has this status, reason and message (`""` for none), failing
/// at the caller's line.
#[track_caller]
fn expect_condition(
    st: &ClusterVersionStatus,
    t: &str,
    status: ConditionStatus,
    reason: &str,
    message: &str,
) {
    assert_eq!(
        crm(st, t),
        (status, reason.to_owned(), message.to_owned()),
        "condition {t}"
    );
}

fn crm(st: &ClusterVersionStatus, t: &str) -> (ConditionStatus, String, String) {
    let c = cond(st, t);
    (c.status, c.reason().to_string(), c.message().to_string())
}

fn types(st: &ClusterVersionStatus) -> Vec<&str> {
    st.conditions.iter().map(|c| c.type_.as_str()).collect()
}

struct Fixture {
    operator_release: Release,
    validation: Vec<cvo::reconcile::status::validation::FieldError>,
    starts: HashMap<String, DateTime<Utc>>,
    risks: Option<Vec<Risk>>,
}

impl Fixture {
    fn new() -> Self {
        Self {
            operator_release: rel("4.0.1", "image/image:v4.0.1"),
            validation: vec![],
            starts: HashMap::new(),
            risks: None,
        }
    }
    fn run(&self, existing: &ClusterVersionStatus, w: &SyncWorkerStatus) -> ClusterVersionStatus {
        let inputs = StatusInputs {
            now: now(),
            operator_release: &self.operator_release,
            release_metadata: &[],
            status_release_architecture: false,
            validation_errors: &self.validation,
            upgradeable_risks: self.risks.as_deref(),
            upgradeable_error: None,
            co_update_start_times: &self.starts,
        };
        compute_status(existing, w, &inputs)
    }
}

// ---------------------------------------------------------------- condensing
// Upstream pkg/cvo/sync_worker_test.go Test_condenseClusterOperators.

#[test]
fn c18_condense_two_cluster_operators_same_reason() {
    let out = condense_cluster_operators(vec![co_updating("test-co-B"), co_updating("test-co-A")]);
    assert_eq!(out.len(), 1);
    let u = ue(&out[0]);
    assert_eq!(u.reason, "ClusterOperatorsUpdating");
    assert_eq!(
        u.message,
        "Cluster operators test-co-A, test-co-B are updating versions"
    );
    assert_eq!(u.name, "test-co-A, test-co-B");
    assert_eq!(u.names, vec!["test-co-A", "test-co-B"]);
    assert_eq!(u.effect, UpdateEffect::None);
    let nested: Vec<&str> = u.nested.iter().map(|e| ue(e).name.as_str()).collect();
    assert_eq!(nested, vec!["test-co-B", "test-co-A"]);
}

#[test]
fn c19_condense_different_reasons_and_an_api_error() {
    let not_found = SyncError::plain("clusteroperator.config.openshift.io \"test-co-C\" not found");
    let out = condense_cluster_operators(vec![
        co_updating("test-co-B"),
        co_not_available("test-co-A"),
        not_found.clone(),
    ]);
    assert_eq!(out.len(), 3);
    assert_eq!(out[0], not_found);
    assert_eq!(ue(&out[1]).message, "Cluster operator test-co-A is not available");
    assert_eq!(
        ue(&out[2]).message,
        "Cluster operator test-co-B is updating versions"
    );

    let out = condense_cluster_operators(vec![
        co_updating("test-co-B"),
        co_updating("test-co-A"),
        co_degraded("test-co-C", UpdateEffect::FailAfterInterval),
    ]);
    assert_eq!(out.len(), 2);
    assert_eq!(ue(&out[0]).reason, "ClusterOperatorDegraded");
    assert_eq!(ue(&out[0]).effect, UpdateEffect::FailAfterInterval);
    assert_eq!(ue(&out[1]).reason, "ClusterOperatorsUpdating");
    assert_eq!(
        ue(&out[1]).message,
        "Cluster operators test-co-A, test-co-B are updating versions"
    );
}

#[test]
fn c20_condense_takes_the_strongest_effect() {
    let out = condense_cluster_operators(vec![
        co_degraded("test-co-A", UpdateEffect::Fail),
        co_degraded("test-co-B", UpdateEffect::None),
        co_degraded("test-co-C", UpdateEffect::FailAfterInterval),
    ]);
    assert_eq!(out.len(), 1);
    assert_eq!(ue(&out[0]).effect, UpdateEffect::Fail);
    assert_eq!(ue(&out[0]).reason, "ClusterOperatorsDegraded");
    assert_eq!(
        ue(&out[0]).message,
        "Cluster operators test-co-A, test-co-B, test-co-C are degraded"
    );

    let out = condense_cluster_operators(vec![
        co_degraded("test-co-B", UpdateEffect::None),
        co_degraded("test-co-C", UpdateEffect::FailAfterInterval),
    ]);
    assert_eq!(ue(&out[0]).effect, UpdateEffect::FailAfterInterval);
}

#[test]
fn c75_multiple_errors_message_sorted_and_deduplicated() {
    let a = SyncError::plain("Failed to reconcile 20-b-file resource");
    let b: SyncError = UpdateError::new("", "Failed to reconcile 10-a-file resource")
        .with_effect(UpdateEffect::None)
        .into();
    let m = summarize_task_graph_errors(vec![
        a.clone(),
        b,
        a,
        SyncError::Interrupted("context canceled".into()),
    ])
    .expect("a failure");
    let u = ue(&m);
    assert_eq!(u.reason, "MultipleErrors");
    assert_eq!(
        u.message,
        "Multiple errors are preventing progress:\n* Failed to reconcile 10-a-file resource\n* Failed to reconcile 20-b-file resource"
    );
    assert_eq!(u.effect, UpdateEffect::Unset);
    assert_eq!(u.nested.len(), 3);
    assert_eq!(
        summarize_task_graph_errors(vec![SyncError::Interrupted("x".into())]),
        None
    );
    assert_eq!(multiple_errors(vec![]), None);
}

#[test]
fn c74_task_wrapping_and_api_error_reasons() {
    let task = TaskRef {
        index: 3,
        total: 3,
        group: String::new(),
        kind: "Test".into(),
        namespace: String::new(),
        name: "file-yml".into(),
    };
    let u = wrap_task_error(&task, SyncError::plain("unable to proceed"), ApiErrorKind::Other);
    assert_eq!(u.reason, "UpdatePayloadFailed");
    assert_eq!(u.message, "Could not update test \"file-yml\" (3 of 3)");
    let u = wrap_task_error(
        &task,
        SyncError::plain("x"),
        ApiErrorKind::from_status(409, "Conflict"),
    );
    assert_eq!(u.reason, "UpdatePayloadResourceConflict");
    assert_eq!(
        u.message,
        "Could not update test \"file-yml\" (3 of 3): someone else is updating this resource"
    );
    assert_eq!(
        ApiErrorKind::from_status(500, "ServerTimeout"),
        ApiErrorKind::ServerTimeout
    );
    assert_eq!(ApiErrorKind::from_status(500, ""), ApiErrorKind::InternalError);
    assert_eq!(
        ApiErrorKind::from_status(409, "AlreadyExists"),
        ApiErrorKind::AlreadyExists
    );
    assert_eq!(
        summary_for_reason("UpdatePayloadFailed", ""),
        "the update could not be applied"
    );
    assert_eq!(
        summary_for_reason("ClusterOperatorDegraded", "etcd"),
        "the cluster operator etcd is degraded"
    );
    assert_eq!(
        summary_for_reason("MultipleErrors", ""),
        "an unknown error has occurred: MultipleErrors"
    );
    assert_eq!(
        summary_for_reason("ClusterOperatorUpdating", "etcd"),
        "etcd has an unknown error: ClusterOperatorUpdating"
    );
}

// ---------------------------------------------------------------- worker status
// Upstream pkg/cvo/sync_worker_test.go (statusWrapper, throttled notifier, equalDigest).

fn ws(image: &str, done: usize, total: usize, failure: Option<&str>) -> SyncWorkerStatus {
    SyncWorkerStatus {
        actual: rel("", image),
        done,
        total,
        failure: failure.map(SyncError::plain),
        ..SyncWorkerStatus::default()
    }
}

#[test]
fn c21_status_wrapper_report_progress() {
    let prev = ws("testing", 10, 100, Some("error"));
    assert_eq!(report(&prev, ws("testing", 0, 0, None), now()), None);

    let Some(out) = report(&prev, ws("testing2", 0, 0, None), now()) else {
        panic!("report with a new image must be published");
    };
    assert_eq!(out.last_progress, Some(now()));

    let prev = SyncWorkerStatus {
        completed: 1,
        ..SyncWorkerStatus::default()
    };
    let next = SyncWorkerStatus {
        completed: 2,
        ..SyncWorkerStatus::default()
    };
    let Some(out) = report(&prev, next, now()) else {
        panic!("completed report dropped");
    };
    assert_eq!(out.last_progress, Some(now()));

    let prev = ws("testing", 10, 100, None);
    let Some(out) = report(&prev, ws("testing", 20, 100, Some("new")), now()) else {
        panic!("dropped");
    };
    assert_eq!(out.last_progress, Some(now()));
    let Some(out) = report(&prev, ws("testing", 10, 100, Some("new")), now()) else {
        panic!("dropped");
    };
    assert_eq!(out.last_progress, None);
}

#[test]
fn c22_status_wrapper_report_generation() {
    let prev = SyncWorkerStatus {
        generation: 1,
        ..SyncWorkerStatus::default()
    };
    let Some(out) = report(&prev, SyncWorkerStatus::default(), now()) else {
        panic!("dropped");
    };
    assert_eq!(out.generation, 1);
    let prev = SyncWorkerStatus {
        generation: 5,
        ..SyncWorkerStatus::default()
    };
    let next = SyncWorkerStatus {
        generation: 2,
        ..SyncWorkerStatus::default()
    };
    let Some(out) = report(&prev, next, now()) else {
        panic!("dropped");
    };
    assert_eq!(out.generation, 2);
}

#[test]
fn c23_throttled_status_notifier() {
    let mut t = StatusThrottle::new(StdDuration::from_secs(30), 1);
    let t0 = Instant::now();
    let mut s = SyncWorkerStatus {
        actual: rel("", "test"),
        ..SyncWorkerStatus::default()
    };
    assert_eq!(t.offer(&s, t0), StdDuration::ZERO, "image set");
    s.reconciling = true;
    assert_eq!(t.offer(&s, t0), StdDuration::ZERO, "reconciling flips");
    s.failure = Some(SyncError::plain("error"));
    assert_eq!(t.offer(&s, t0), StdDuration::ZERO, "failure appears");
    assert_eq!(
        t.offer(&s, t0),
        StdDuration::ZERO,
        "identical repeat takes the token"
    );
    let wait = t.offer(&s, t0);
    assert!(
        wait > StdDuration::from_secs(29),
        "second identical repeat throttled, waited {wait:?}"
    );
    // After a full interval with no report the bucket refills.
    let mut t = StatusThrottle::new(StdDuration::from_secs(30), 1);
    t.offer(&s, t0);
    assert_eq!(t.offer(&s, t0), StdDuration::ZERO);
    assert_eq!(t.offer(&s, t0 + StdDuration::from_secs(60)), StdDuration::ZERO);
}

#[test]
fn c24_equal_digest() {
    assert!(equal_digest("", ""));
    assert!(equal_digest("a.example.com@sha256:X", "b.example.com@sha256:X"));
    assert!(equal_digest("@sha256:X", "example.com@sha256:X"));
    assert!(equal_digest("example.com:tag", "example.com:tag"));
    assert!(!equal_digest("example.com:tag", "example.com@sha256:X"));
    assert!(!equal_digest("example.com@sha256:X", "example.com@sha256:Y"));
    assert!(!equal_digest("", "example.com@sha256:X"));
}

// ---------------------------------------------------------------- status
// Upstream pkg/cvo/status_test.go, pkg/cvo/cvo_test.go TestOperator_sync.

#[test]
fn c26_merge_equal_versions() {
    let cases = [
        (("test:1", "0.0.1"), ("test:1", "0.0.1"), true),
        (("test:1", ""), ("test:1", "0.0.1"), true),
        (("test:1", "0.0.1"), ("test:1", ""), true),
        (("test:1", "0.0.1"), ("", "0.0.1"), false),
        (("test:1", "0.0.1"), ("test:2", "0.0.1"), false),
        (("test:1", "0.0.1"), ("test:1", "0.0.2"), false),
    ];
    for ((ci, cv), (di, dv), want) in cases {
        let mut last = hist(UpdateState::Partial, cv, ci);
        assert_eq!(
            merge_equal_versions(&mut last, &rel(dv, di)),
            want,
            "{ci} {cv} vs {di} {dv}"
        );
    }
    let mut last = hist(UpdateState::Partial, "", "test:1");
    assert!(merge_equal_versions(&mut last, &rel("0.0.1", "test:1")));
    assert_eq!(last.version, "0.0.1", "the missing version is filled in");
}

fn failing_worker(reconciling: bool, completed: u32, failure: SyncError) -> SyncWorkerStatus {
    SyncWorkerStatus {
        reconciling,
        completed,
        actual: rel("0.0.1-abc", "image/image:v4.0.1"),
        failure: Some(failure),
        ..SyncWorkerStatus::default()
    }
}

#[test]
fn c27_progressing_and_previously_failed_not_reconciling() {
    let existing = ClusterVersionStatus {
        history: vec![hist(UpdateState::Partial, "4.0.1", "image/image:v4.0.1")],
        ..ClusterVersionStatus::default()
    };
    let w = failing_worker(
        false,
        0,
        UpdateError::new("UpdatePayloadIntegrity", "unable to apply object").into(),
    );
    let st = Fixture::new().run(&existing, &w);
    assert_eq!(st.history.len(), 2);
    assert_eq!(
        (st.history[0].state, st.history[0].version.as_str()),
        (UpdateState::Partial, "0.0.1-abc")
    );
    assert_eq!(st.history[0].started_time, Some(now()));
    assert_eq!(st.history[0].completion_time, None);
    assert_eq!(
        (st.history[1].state, st.history[1].version.as_str()),
        (UpdateState::Partial, "4.0.1")
    );
    assert_eq!(st.history[1].completion_time, Some(now()));
    assert_eq!(st.desired, rel("0.0.1-abc", "image/image:v4.0.1"));
    expect_condition(
        &st,
        "Failing",
        ConditionStatus::True,
        "UpdatePayloadIntegrity",
        "unable to apply object",
    );
    expect_condition(
        &st,
        "Progressing",
        ConditionStatus::True,
        "UpdatePayloadIntegrity",
        "Unable to apply 0.0.1-abc: the contents of the update are invalid",
    );
    expect_condition(&st, "Available", ConditionStatus::False, "", "");
}

#[test]
fn c28_reconciling_and_multiple_completions() {
    let existing = ClusterVersionStatus {
        history: vec![hist(UpdateState::Partial, "0.0.1-abc", "image/image:v4.0.1")],
        ..ClusterVersionStatus::default()
    };
    let w = failing_worker(
        true,
        2,
        UpdateError::new("UpdatePayloadIntegrity", "unable to apply object").into(),
    );
    let st = Fixture::new().run(&existing, &w);
    assert_eq!(st.history.len(), 1);
    assert_eq!(st.history[0].state, UpdateState::Completed);
    assert_eq!(st.history[0].completion_time, Some(now()));
    expect_condition(
        &st,
        "Available",
        ConditionStatus::True,
        "",
        "Done applying 0.0.1-abc",
    );
    expect_condition(
        &st,
        "Failing",
        ConditionStatus::True,
        "UpdatePayloadIntegrity",
        "unable to apply object",
    );
    expect_condition(
        &st,
        "Progressing",
        ConditionStatus::False,
        "UpdatePayloadIntegrity",
        "Error while reconciling 0.0.1-abc: the contents of the update are invalid",
    );
}

#[test]
fn c29_plain_error_during_image_sync() {
    let existing = ClusterVersionStatus {
        history: vec![hist(UpdateState::Partial, "0.0.1-abc", "image/image:v4.0.1")],
        version_hash: "foo".into(),
        ..ClusterVersionStatus::default()
    };
    let w = failing_worker(false, 0, SyncError::plain("injected error"));
    let st = Fixture::new().run(&existing, &w);
    assert_eq!(st.version_hash, "foo");
    expect_condition(&st, "Failing", ConditionStatus::True, "", "injected error");
    expect_condition(
        &st,
        "Progressing",
        ConditionStatus::True,
        "",
        "Unable to apply 0.0.1-abc: an error occurred",
    );
    let w = SyncWorkerStatus {
        version_hash: "DL-FFQ2Uem8=".into(),
        ..w
    };
    assert_eq!(Fixture::new().run(&existing, &w).version_hash, "DL-FFQ2Uem8=");
}

#[test]
fn c30_set_initial_status_conditions() {
    let w = SyncWorkerStatus {
        generation: 1,
        actual: rel("", "image/image:v4.0.1"),
        ..SyncWorkerStatus::default()
    };
    let mut f = Fixture::new();
    f.operator_release = rel("", "image/image:v4.0.0");
    let st = f.run(&ClusterVersionStatus::default(), &w);
    assert_eq!(st.history.len(), 1);
    assert_eq!(st.history[0].state, UpdateState::Partial);
    assert_eq!(st.history[0].image, "image/image:v4.0.1");
    assert_eq!(st.history[0].version, "");
    assert_eq!(st.desired, rel("", "image/image:v4.0.1"));
    assert_eq!(st.observed_generation, 1);
    assert_eq!(
        types(&st),
        vec![
            "ImplicitlyEnabledCapabilities",
            "Available",
            "Failing",
            "Progressing",
            "RetrievedUpdates"
        ]
    );
    expect_condition(
        &st,
        "ImplicitlyEnabledCapabilities",
        ConditionStatus::False,
        "AsExpected",
        "Capabilities match configured spec",
    );
    assert_eq!(crm(&st, "Available").0, ConditionStatus::False);
    expect_condition(&st, "Failing", ConditionStatus::False, "", "");
    expect_condition(
        &st,
        "Progressing",
        ConditionStatus::True,
        "",
        "Working towards image/image:v4.0.1",
    );
    expect_condition(&st, "RetrievedUpdates", ConditionStatus::False, "", "");
    assert!(cond(&st, "Progressing").last_transition_time == Some(now()));
}

fn cv_with_desired_version(version: &str) -> ClusterVersion {
    let mut cv = ClusterVersion::default();
    cv.spec.desired_update = Some(Update {
        version: Some(version.into()),
        ..Update::default()
    });
    cv.spec.upstream = Some("http://localhost:8080/graph".into());
    cv.spec.channel = Some("fast".into());
    cv.status.history = vec![hist(UpdateState::Completed, "4.0.1", "image/image:v4.0.1")];
    cv.status.desired = rel("4.0.1", "image/image:v4.0.1");
    cv.status.available_updates = Some(vec![rel("4.0.2", "test/image:1"), rel("4.0.3", "test/image:2")]);
    cv
}

#[test]
fn c31_version_not_in_updates_or_history() {
    let cv = cv_with_desired_version("4.0.4");
    let errs = validate_cluster_version(&cv, false);
    let mut f = Fixture::new();
    f.validation = errs;
    let w = SyncWorkerStatus {
        generation: 2,
        reconciling: true,
        completed: 1,
        actual: rel("4.0.1", "image/image:v4.0.1"),
        ..SyncWorkerStatus::default()
    };
    let st = f.run(&cv.status, &w);
    expect_condition(
        &st,
        "Invalid",
        ConditionStatus::True,
        "InvalidClusterVersion",
        "The cluster version is invalid: spec.desiredUpdate.version: Invalid value: \"4.0.4\": when image is empty the update must be an available update",
    );
    expect_condition(
        &st,
        "Progressing",
        ConditionStatus::False,
        "InvalidClusterVersion",
        "Stopped at 4.0.1: the cluster version is invalid",
    );
    expect_condition(&st, "Failing", ConditionStatus::False, "", "");
    expect_condition(&st, "Available", ConditionStatus::True, "", "Done applying 4.0.1");
    assert_eq!(
        types(&st),
        vec![
            "Invalid",
            "ImplicitlyEnabledCapabilities",
            "Available",
            "Failing",
            "Progressing",
            "RetrievedUpdates"
        ]
    );
    assert_eq!(st.history.len(), 1);

    // A version found in history validates; duplicates in available updates do not.
    assert!(validate_cluster_version(&cv_with_desired_version("4.0.1"), false).is_empty());
    assert!(validate_cluster_version(&cv_with_desired_version("4.0.2"), false).is_empty());
    let mut dup = cv_with_desired_version("4.0.2");
    dup.status.available_updates = Some(vec![rel("4.0.2", "test/image:1"), rel("4.0.2", "test/image:3")]);
    assert_eq!(
        validate_cluster_version(&dup, false)[0].to_string(),
        "spec.desiredUpdate.version: Invalid value: \"4.0.2\": there are multiple possible payloads for this version, specify the exact image"
    );
    // Not reconciling: `Reconciling {V}: the cluster version is invalid`.
    let w = SyncWorkerStatus {
        reconciling: false,
        ..w
    };
    expect_condition(
        &f.run(&cv.status, &w),
        "Progressing",
        ConditionStatus::True,
        "InvalidClusterVersion",
        "Reconciling 4.0.1: the cluster version is invalid",
    );
}

#[test]
fn c32_detect_invalid_cluster_version() {
    let mut cv = ClusterVersion::default();
    cv.spec.cluster_id = Some("not-valid-cluster-id".into());
    cv.spec.upstream = Some("#%GG".into());
    let mut f = Fixture::new();
    f.validation = validate_cluster_version(&cv, false);
    let st = f.run(&cv.status, &SyncWorkerStatus::default());
    assert_eq!(
        cond(&st, "Invalid").message(),
        "The cluster version is invalid:\n* spec.upstream: Invalid value: \"#%GG\": must be a valid URL or empty\n* spec.clusterID: Invalid value: \"not-valid-cluster-id\": must be an RFC4122-variant UUID\n"
    );
    cv.spec.cluster_id = Some("01234567-0123-1123-8123-0123456789ab".into());
    cv.spec.upstream = Some("https://api.openshift.com/api/upgrades_info/v1/graph".into());
    assert_eq!(
        validate_cluster_version(&cv, false)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec![
            "spec.clusterID: Invalid value: \"01234567-0123-1123-8123-0123456789ab\": must be a version-4 UUID"
        ]
    );
    cv.spec.cluster_id = Some("01234567-0123-4123-8123-0123456789ab".into());
    assert!(validate_cluster_version(&cv, false).is_empty());
}

#[test]
fn c33_new_upgradeable_conditions() {
    let mut f = Fixture::new();
    f.risks = Some(vec![
        Risk::new("RiskA", "MessageA"),
        Risk::new("RiskB", "MessageB"),
    ]);
    let w = SyncWorkerStatus {
        reconciling: true,
        completed: 1,
        actual: rel("4.0.1", "image/image:v4.0.1"),
        ..SyncWorkerStatus::default()
    };
    let st = f.run(&ClusterVersionStatus::default(), &w);
    expect_condition(
        &st,
        "Upgradeable",
        ConditionStatus::False,
        "MultipleReasons",
        "Cluster should not be upgraded between minor or major versions for multiple reasons:\n* MessageA\n* MessageB",
    );
    assert_eq!(types(&st)[0], "Upgradeable", "Upgradeable is created first");
    f.risks = Some(vec![Risk::new("AdminAck-ack-4.20-foo", "ack it")]);
    expect_condition(
        &f.run(&st, &w),
        "Upgradeable",
        ConditionStatus::False,
        "RiskNameNotCompatibleWithReasonProperty",
        "ack it",
    );
    f.risks = Some(vec![]);
    let cleared = f.run(&st, &w);
    assert!(
        cleared.conditions.iter().all(|c| c.type_ != "Upgradeable"),
        "no risks: removed"
    );
}

#[test]
fn c34_sync_failing_status() {
    let existing = ClusterVersionStatus {
        history: vec![UpdateHistory {
            started_time: Some(now() - Duration::hours(1)),
            ..hist(UpdateState::Partial, "4.0.1", "image/image:v4.0.1")
        }],
        desired: rel("4.0.1", "image/image:v4.0.1"),
        conditions: vec![
            Condition {
                type_: "Available".into(),
                status: ConditionStatus::False,
                ..Condition::default()
            },
            Condition {
                type_: "Failing".into(),
                status: ConditionStatus::True,
                reason: Some("UpdatePayloadIntegrity".into()),
                message: Some("unable to apply object".into()),
                ..Condition::default()
            },
            Condition {
                type_: "Progressing".into(),
                status: ConditionStatus::True,
                message: Some("Working towards 4.0.1".into()),
                ..Condition::default()
            },
        ],
        ..ClusterVersionStatus::default()
    };
    let st = failing_status(&existing, &rel("4.0.1", "image/image:v4.0.1"), "bad", now());
    assert_eq!(crm(&st, "Available").0, ConditionStatus::False);
    expect_condition(&st, "Failing", ConditionStatus::True, "", "bad");
    expect_condition(
        &st,
        "Progressing",
        ConditionStatus::True,
        "",
        "Error ensuring the cluster version is up to date: bad",
    );
    assert_eq!(st.history.len(), 1);
    assert_eq!(st.history[0].state, UpdateState::Partial);
    assert_eq!(st.history[0].started_time, Some(now() - Duration::hours(1)));
}

// ---------------------------------------------------------------- failing filtering
// Upstream pkg/cvo/status_test.go
// TestUpdateClusterVersionStatus_FilteringMultipleErrorsForFailingCondition.

struct FilterCase {
    failure: SyncError,
    not_modified: (ConditionStatus, &'static str, &'static str),
    modified: Option<(ConditionStatus, &'static str, &'static str)>,
    progressing: Option<(&'static str, &'static str)>,
    machine_config_timeout: bool,
}

fn run_filter_case(c: &FilterCase) {
    let mut f = Fixture::new();
    for n in ["co-not-timeout", "co-bar-not-timeout", "co-foo-not-timeout"] {
        f.starts.insert(n.into(), now());
    }
    for n in ["co-timeout", "co-bar-timeout"] {
        f.starts.insert(n.into(), now() - Duration::minutes(60));
    }
    let mc = if c.machine_config_timeout { 120 } else { 60 };
    f.starts
        .insert("machine-config".into(), now() - Duration::minutes(mc));
    for reconciling in [false, true] {
        for history_empty in [false, true] {
            let existing = ClusterVersionStatus {
                conditions: vec![Condition {
                    type_: "ImplicitlyEnabled".into(),
                    message: Some("to be removed".into()),
                    ..Condition::default()
                }],
                history: if history_empty {
                    vec![]
                } else {
                    vec![hist(UpdateState::Partial, "", "")]
                },
                ..ClusterVersionStatus::default()
            };
            let w = SyncWorkerStatus {
                reconciling,
                actual: rel("1.2.3", ""),
                failure: Some(c.failure.clone()),
                ..SyncWorkerStatus::default()
            };
            let st = f.run(&existing, &w);
            let modified = !reconciling && !history_empty;
            let want = match (modified, c.modified) {
                (true, Some(m)) => m,
                _ => c.not_modified,
            };
            let got = crm(&st, "Failing");
            assert_eq!(
                (got.0, got.1.as_str(), got.2.as_str()),
                want,
                "reconciling={reconciling} history_empty={history_empty}"
            );
            if modified && let Some((reason, msg)) = c.progressing {
                expect_condition(&st, "Progressing", ConditionStatus::True, reason, msg);
            }
            assert!(st.conditions.iter().all(|c| c.type_ != "ImplicitlyEnabled"));
        }
    }
}

fn none_effect(reason: &str, msg: &str, name: &str) -> SyncError {
    UpdateError::new(reason, msg)
        .with_effect(UpdateEffect::None)
        .with_name(name)
        .into()
}

fn names_effect(names: &[&str]) -> SyncError {
    UpdateError {
        names: names.iter().map(|s| s.to_string()).collect(),
        ..UpdateError::new("ClusterOperatorsUpdating", "some-message").with_effect(UpdateEffect::None)
    }
    .into()
}

fn multi(nested: Vec<SyncError>, message: &str) -> SyncError {
    UpdateError {
        nested,
        ..UpdateError::new("MultipleErrors", message).with_effect(UpdateEffect::Fail)
    }
    .into()
}

fn plain_ue(reason: &str, msg: &str, effect: UpdateEffect) -> SyncError {
    UpdateError::new(reason, msg).with_effect(effect).into()
}

const T: ConditionStatus = ConditionStatus::True;
const F: ConditionStatus = ConditionStatus::False;
const U: ConditionStatus = ConditionStatus::Unknown;

#[test]
fn c35_single_update_effect_none_error() {
    run_filter_case(&FilterCase {
        failure: none_effect(
            "ClusterOperatorUpdating",
            "Cluster operator A is updating",
            "co-not-timeout",
        ),
        not_modified: (T, "ClusterOperatorUpdating", "Cluster operator A is updating"),
        modified: Some((F, "", "")),
        progressing: Some((
            "ClusterOperatorUpdating",
            "Working towards 1.2.3: waiting on co-not-timeout",
        )),
        machine_config_timeout: false,
    });
    // No failure and a plain failure are never filtered.
    let mut f = Fixture::new();
    f.starts.clear();
    let st = f.run(&ClusterVersionStatus::default(), &SyncWorkerStatus::default());
    expect_condition(&st, "Failing", F, "", "");
    run_filter_case(&FilterCase {
        failure: SyncError::plain("error has happened"),
        not_modified: (T, "", "error has happened"),
        modified: None,
        progressing: None,
        machine_config_timeout: false,
    });
}

#[test]
fn c36_single_update_effect_none_error_and_timeout() {
    run_filter_case(&FilterCase {
        failure: none_effect(
            "ClusterOperatorUpdating",
            "Cluster operator A is updating",
            "co-timeout",
        ),
        not_modified: (T, "ClusterOperatorUpdating", "Cluster operator A is updating"),
        modified: Some((
            U,
            "SlowClusterOperator",
            "waiting on co-timeout over 30 minutes which is longer than expected",
        )),
        progressing: Some((
            "ClusterOperatorUpdating",
            "Working towards 1.2.3: waiting on co-timeout over 30 minutes which is longer than expected",
        )),
        machine_config_timeout: false,
    });
}

#[test]
fn c37_machine_config_thresholds() {
    let failure = none_effect(
        "ClusterOperatorUpdating",
        "Cluster operator A is updating",
        "machine-config",
    );
    run_filter_case(&FilterCase {
        failure: failure.clone(),
        not_modified: (T, "ClusterOperatorUpdating", "Cluster operator A is updating"),
        modified: Some((F, "", "")),
        progressing: Some((
            "ClusterOperatorUpdating",
            "Working towards 1.2.3: waiting on machine-config",
        )),
        machine_config_timeout: false,
    });
    run_filter_case(&FilterCase {
        failure,
        not_modified: (T, "ClusterOperatorUpdating", "Cluster operator A is updating"),
        modified: Some((
            U,
            "SlowClusterOperator",
            "waiting on machine-config over 90 minutes which is longer than expected",
        )),
        progressing: Some((
            "ClusterOperatorUpdating",
            "Working towards 1.2.3: waiting on machine-config over 90 minutes which is longer than expected",
        )),
        machine_config_timeout: true,
    });
}

#[test]
fn c38_multiple_errors_filtering() {
    let a = || {
        plain_ue(
            "ClusterOperatorNotAvailable",
            "Cluster operator A is not available",
            UpdateEffect::Fail,
        )
    };
    // Fail + None: not reconciling keeps only A.
    run_filter_case(&FilterCase {
        failure: multi(
            vec![
                a(),
                plain_ue(
                    "ClusterOperatorUpdating",
                    "Cluster operator B is updating versions",
                    UpdateEffect::None,
                ),
            ],
            "Multiple errors are preventing progress:\n* Cluster operator A is not available\n* Cluster operator B is updating versions",
        ),
        not_modified: (
            T,
            "MultipleErrors",
            "Multiple errors are preventing progress:\n* Cluster operator A is not available\n* Cluster operator B is updating versions",
        ),
        modified: Some((
            T,
            "ClusterOperatorNotAvailable",
            "Cluster operator A is not available",
        )),
        progressing: None,
        machine_config_timeout: false,
    });
    // None + None: everything filtered, Failing False.
    run_filter_case(&FilterCase {
        failure: multi(
            vec![
                plain_ue(
                    "ClusterOperatorUpdating",
                    "Cluster operator A is updating versions",
                    UpdateEffect::None,
                ),
                plain_ue(
                    "NewUpdateEffectNoneReason",
                    "Cluster operator B is getting conscious",
                    UpdateEffect::None,
                ),
            ],
            "Multiple errors are preventing progress:\n* Cluster operator A is updating versions\n* Cluster operator B is getting conscious",
        ),
        not_modified: (
            T,
            "MultipleErrors",
            "Multiple errors are preventing progress:\n* Cluster operator A is updating versions\n* Cluster operator B is getting conscious",
        ),
        modified: Some((F, "", "")),
        progressing: None,
        machine_config_timeout: false,
    });
    // Fail + None + FailAfterInterval: rebuilt MultipleErrors without B.
    run_filter_case(&FilterCase {
        failure: multi(
            vec![
                a(),
                plain_ue(
                    "ClusterOperatorUpdating",
                    "Cluster operator B is updating versions",
                    UpdateEffect::None,
                ),
                plain_ue(
                    "ClusterOperatorDegraded",
                    "Cluster operator C is degraded",
                    UpdateEffect::FailAfterInterval,
                ),
            ],
            "Multiple errors are preventing progress:\n* Cluster operator A is not available\n* Cluster operator B is updating versions\n* Cluster operator C is degraded",
        ),
        not_modified: (
            T,
            "MultipleErrors",
            "Multiple errors are preventing progress:\n* Cluster operator A is not available\n* Cluster operator B is updating versions\n* Cluster operator C is degraded",
        ),
        modified: Some((
            T,
            "MultipleErrors",
            "Multiple errors are preventing progress:\n* Cluster operator A is not available\n* Cluster operator C is degraded",
        )),
        progressing: None,
        machine_config_timeout: false,
    });
}

#[test]
fn c39_all_updating_slow_combinations() {
    run_filter_case(&FilterCase {
        failure: names_effect(&["co-not-timeout", "co-bar-not-timeout", "co-foo-not-timeout"]),
        not_modified: (T, "ClusterOperatorsUpdating", "some-message"),
        modified: Some((F, "", "")),
        progressing: Some((
            "ClusterOperatorsUpdating",
            "Working towards 1.2.3: waiting on co-not-timeout, co-bar-not-timeout, co-foo-not-timeout",
        )),
        machine_config_timeout: false,
    });
    run_filter_case(&FilterCase {
        failure: names_effect(&["co-timeout", "co-bar-timeout", "co-foo-not-timeout"]),
        not_modified: (T, "ClusterOperatorsUpdating", "some-message"),
        modified: Some((
            U,
            "SlowClusterOperator",
            "waiting on co-timeout, co-bar-timeout over 30 minutes which is longer than expected",
        )),
        progressing: Some((
            "ClusterOperatorsUpdating",
            "Working towards 1.2.3: waiting on co-timeout, co-bar-timeout over 30 minutes which is longer than expected",
        )),
        machine_config_timeout: false,
    });
    run_filter_case(&FilterCase {
        failure: names_effect(&["co-timeout", "co-bar-timeout", "machine-config"]),
        not_modified: (T, "ClusterOperatorsUpdating", "some-message"),
        modified: Some((
            U,
            "SlowClusterOperator",
            "waiting on co-timeout, co-bar-timeout over 30 minutes and machine-config over 90 minutes which is longer than expected",
        )),
        progressing: Some((
            "ClusterOperatorsUpdating",
            "Working towards 1.2.3: waiting on co-timeout, co-bar-timeout over 30 minutes and machine-config over 90 minutes which is longer than expected",
        )),
        machine_config_timeout: true,
    });
}

#[test]
fn c39_fail_after_interval_and_report_progressing() {
    let mut f = Fixture::new();
    f.starts.insert("etcd".into(), now() - Duration::minutes(10));
    let existing = ClusterVersionStatus {
        history: vec![hist(UpdateState::Partial, "1.2.3", "img")],
        ..ClusterVersionStatus::default()
    };
    let degraded: SyncError =
        UpdateError::new("ClusterOperatorDegraded", "Cluster operator etcd is degraded")
            .with_effect(UpdateEffect::FailAfterInterval)
            .with_name("etcd")
            .into();
    let w = SyncWorkerStatus {
        actual: rel("1.2.3", "img"),
        done: 29,
        total: 100,
        failure: Some(degraded.clone()),
        ..SyncWorkerStatus::default()
    };
    let st = f.run(&existing, &w);
    expect_condition(&st, "Failing", F, "", "");
    expect_condition(
        &st,
        "Progressing",
        T,
        "ClusterOperatorDegraded",
        "Working towards 1.2.3: 29 of 100 done (29% complete), waiting up to 40 minutes on etcd",
    );
    f.starts.insert("etcd".into(), now() - Duration::minutes(41));
    let st = f.run(&existing, &w);
    expect_condition(
        &st,
        "Failing",
        T,
        "ClusterOperatorDegraded",
        "Cluster operator etcd is degraded",
    );
    expect_condition(
        &st,
        "Progressing",
        T,
        "ClusterOperatorDegraded",
        "Unable to apply 1.2.3: wait has exceeded 40 minutes for these operators: etcd",
    );
}

// ---------------------------------------------------------------- pruning
// Upstream pkg/cvo/status_history_test.go Test_prune.

fn parse_history(spec: &str) -> Vec<UpdateHistory> {
    spec.split(',')
        .map(|e| {
            let e = e.trim();
            let (s, v) = e.split_once(' ').expect("state version");
            let state = if s == "C" {
                UpdateState::Completed
            } else {
                UpdateState::Partial
            };
            hist(state, v, &format!("img:{v}"))
        })
        .collect()
}

fn pruned(spec: &str) -> (String, UpdateState) {
    let mut h = parse_history(spec);
    let before = h.clone();
    prune_history(&mut h, 10);
    assert_eq!(h.len(), 10);
    let removed = before
        .iter()
        .enumerate()
        .find(|(i, e)| h.get(*i) != Some(e))
        .map(|(_, e)| e.clone())
        .expect("one entry removed");
    (removed.version, removed.state)
}

#[test]
fn c40_prune_oldest_not_in_most_important_set() {
    let spec =
        "C 4.11.0, C 4.10.0, C 4.9.0, C 4.8.0, C 4.7.0, C 4.6.0, C 4.5.0, C 4.4.0, C 4.3.0, C 4.2.0, C 4.1.0";
    assert_eq!(pruned(spec), ("4.2.0".into(), UpdateState::Completed));
}

#[test]
fn c41_prune_partial_update_within_minor_transition() {
    let spec =
        "C 4.6.3, C 4.5.3, C 4.4.3, C 4.3.3, C 4.3.2, C 4.3.1, C 4.2.1, P 4.1.4, P 4.1.3, P 4.1.2, C 4.1.1";
    assert_eq!(pruned(spec), ("4.1.2".into(), UpdateState::Partial));
    // The minor-transition bonus decides: without it the old Partial 4.4.5 would go.
    let spec =
        "C 4.10.0, C 4.9.0, C 4.8.0, C 4.7.3, C 4.7.2, C 4.7.1, C 4.7.0, C 4.6.0, C 4.5.0, P 4.4.5, C 4.3.0";
    assert_eq!(pruned(spec), ("4.7.1".into(), UpdateState::Completed));
}

#[test]
fn c42_prune_partial_update_within_z_stream_transition() {
    let spec =
        "C 4.5.3, C 4.4.3, C 4.4.3, C 4.4.2, C 4.1.10, C 4.1.9, C 4.1.4, P 4.1.3, C 4.1.2, P 4.0.1, C 4.0.1";
    assert_eq!(pruned(spec), ("4.1.3".into(), UpdateState::Partial));
}

#[test]
fn c43_prune_only_partial() {
    let spec =
        "C 4.11.0, P 4.10.0, C 4.9.0, C 4.8.0, C 4.7.0, P 4.6.0, C 4.5.0, C 4.4.0, C 4.3.0, C 4.2.0, C 4.1.0";
    assert_eq!(pruned(spec), ("4.6.0".into(), UpdateState::Partial));
}

#[test]
fn c44_prune_z_stream_partial_over_minor_partial() {
    let spec =
        "C 4.10.0, C 4.9.0, C 4.8.0, C 4.7.0, C 4.6.2, C 4.6.1, P 4.6.1, C 4.6.0, C 4.4.0, P 4.3.0, C 4.2.0";
    assert_eq!(pruned(spec), ("4.6.1".into(), UpdateState::Partial));
    let mut h = parse_history(spec);
    prune_history(&mut h, 10);
    assert!(
        h.iter()
            .any(|e| e.version == "4.3.0" && e.state == UpdateState::Partial)
    );
    // The z-stream penalty decides: without it the mid-minor Completed 4.6.1 would go.
    let spec =
        "C 4.10.0, C 4.9.0, C 4.8.0, C 4.7.0, C 4.6.3, P 4.6.2, C 4.6.1, C 4.6.0, C 4.5.0, C 4.4.0, C 4.3.0";
    assert_eq!(pruned(spec), ("4.6.2".into(), UpdateState::Partial));
    let mut short = parse_history("C 4.2.0, C 4.1.0");
    prune_history(&mut short, 10);
    assert_eq!(short.len(), 2, "no pruning below the cap");
}

#[test]
fn history_merge_verified_is_sticky_and_local_keeps_risks() {
    let mut st = ClusterVersionStatus::default();
    let d = rel("1.0.0", "img:1");
    let m = |verified, completed, risks, local| HistoryMerge {
        desired: &d,
        verified,
        completed,
        accepted_risks: risks,
        local,
        now: now(),
    };
    merge_operator_history(&mut st, &m(true, false, "risk A", false));
    assert!(st.history[0].verified);
    assert_eq!(st.history[0].accepted_risks.as_deref(), Some("risk A"));
    merge_operator_history(&mut st, &m(false, true, "", true));
    assert!(st.history[0].verified, "verified never resets");
    assert_eq!(
        st.history[0].accepted_risks.as_deref(),
        Some("risk A"),
        "local payload keeps risks"
    );
    assert_eq!(st.history[0].state, UpdateState::Completed);
    let mut empty = ClusterVersionStatus::default();
    merge_operator_history(
        &mut empty,
        &HistoryMerge {
            desired: &Release::default(),
            ..m(false, false, "", false)
        },
    );
    assert!(empty.history.is_empty());
    assert_eq!(
        empty.desired,
        Release::default(),
        "desired is not written without an image"
    );
}

// ---------------------------------------------------------------- status parts
// Upstream pkg/cvo/cvo_scenarios_test.go (status parts of its scenarios).

#[test]
fn c73_no_desired_image() {
    let w = SyncWorkerStatus {
        failure: Some(no_desired_image_failure()),
        ..SyncWorkerStatus::default()
    };
    let st = Fixture::new().run(&ClusterVersionStatus::default(), &w);
    assert!(st.history.is_empty());
    expect_condition(
        &st,
        "Failing",
        T,
        "NoDesiredImage",
        "No configured operator version, unable to update cluster",
    );
    expect_condition(
        &st,
        "Progressing",
        T,
        "NoDesiredImage",
        "Unable to apply <unknown>: an unknown error has occurred: NoDesiredImage",
    );
}

#[test]
fn c73_completed_startup_and_release_accepted() {
    let own = rel("1.0.0-abc", "image/image:1");
    let w = SyncWorkerStatus {
        generation: 1,
        reconciling: true,
        completed: 1,
        done: 3,
        total: 3,
        actual: own.clone(),
        version_hash: "DL-FFQ2Uem8=".into(),
        load_payload_status: LoadPayloadStatus {
            success: true,
            step: "PayloadLoaded".into(),
            message: "Payload loaded version=\"1.0.0-abc\" image=\"image/image:1\" architecture=\"amd64\""
                .into(),
            release: own.clone(),
            ..LoadPayloadStatus::default()
        },
        ..SyncWorkerStatus::default()
    };
    let mut f = Fixture::new();
    f.operator_release = own;
    let st = f.run(&ClusterVersionStatus::default(), &w);
    assert_eq!(st.history.len(), 1);
    assert_eq!(st.history[0].state, UpdateState::Completed);
    assert_eq!(st.version_hash, "DL-FFQ2Uem8=");
    expect_condition(&st, "Available", T, "", "Done applying 1.0.0-abc");
    expect_condition(&st, "Progressing", F, "", "Cluster version is 1.0.0-abc");
    expect_condition(
        &st,
        "ReleaseAccepted",
        T,
        "PayloadLoaded",
        "Payload loaded version=\"1.0.0-abc\" image=\"image/image:1\" architecture=\"amd64\"",
    );
    let retrieving = SyncWorkerStatus {
        load_payload_status: LoadPayloadStatus {
            step: "RetrievePayload".into(),
            message: "Retrieving and verifying payload version=\"1.0.1-abc\" image=\"image/image:2\"".into(),
            ..LoadPayloadStatus::default()
        },
        ..w.clone()
    };
    assert_eq!(crm(&f.run(&st, &retrieving), "ReleaseAccepted").0, U);
    let failed = SyncWorkerStatus {
        load_payload_status: LoadPayloadStatus {
            failure: Some(SyncError::plain(
                "The update cannot be verified: some random error",
            )),
            step: "RetrievePayload".into(),
            ..LoadPayloadStatus::default()
        },
        ..w
    };
    assert_eq!(crm(&f.run(&st, &failed), "ReleaseAccepted").0, F);
}

#[test]
fn c75_parallel_error_status() {
    let nested = vec![
        plain_ue("", "Failed to reconcile 10-a-file resource", UpdateEffect::None),
        plain_ue("", "Failed to reconcile 20-b-file resource", UpdateEffect::Fail),
    ];
    let failure = multiple_errors(nested).expect("multiple");
    let w = SyncWorkerStatus {
        actual: rel("1.0.0-abc", "image/image:1"),
        done: 1,
        total: 3,
        failure: Some(failure),
        ..SyncWorkerStatus::default()
    };
    let existing = ClusterVersionStatus {
        history: vec![hist(UpdateState::Partial, "1.0.0-abc", "image/image:1")],
        ..ClusterVersionStatus::default()
    };
    let st = Fixture::new().run(&existing, &w);
    expect_condition(&st, "Failing", T, "", "Failed to reconcile 20-b-file resource");
    expect_condition(
        &st,
        "Progressing",
        T,
        "MultipleErrors",
        "Unable to apply 1.0.0-abc: an unknown error has occurred: MultipleErrors",
    );
    assert_eq!(st.history[0].state, UpdateState::Partial);
}

#[test]
fn c78_desired_while_payload_still_initializing() {
    let own = rel("1.0.0-abc", "image/image:0");
    let mut existing = ClusterVersionStatus {
        history: vec![hist(UpdateState::Completed, "1.0.0-abc", "image/image:0")],
        desired: own.clone(),
        ..ClusterVersionStatus::default()
    };
    existing.history[0].completion_time = Some(now() - Duration::hours(2));
    let w = SyncWorkerStatus {
        reconciling: true,
        actual: own.clone(),
        load_payload_status: LoadPayloadStatus {
            success: true,
            step: "PayloadLoaded".into(),
            message: "Payload loaded version=\"1.0.0-abc\" image=\"image/image:0\"".into(),
            release: own.clone(),
            ..LoadPayloadStatus::default()
        },
        ..SyncWorkerStatus::default()
    };
    let mut f = Fixture::new();
    f.operator_release = own.clone();
    let st = f.run(&existing, &w);
    assert_eq!(st.desired, own);
    assert_eq!(st.history, existing.history, "history unchanged");
    assert_eq!(crm(&st, "ReleaseAccepted").0, T);
    expect_condition(&st, "Progressing", F, "", "Cluster version is 1.0.0-abc");
}

// ---------------------------------------------------------------- preconditions
// Upstream pkg/payload/precondition/**_test.go.

fn warning(name: &str, reason: &str, msg: &str) -> PreconditionFailure {
    PreconditionFailure::Check(PreconditionError {
        name: name.into(),
        reason: reason.into(),
        message: msg.into(),
        non_blocking: true,
    })
}

#[test]
fn c58_summarize() {
    let plain = PreconditionFailure::Other("random error".into());
    let (u, blocking) = summarize(std::slice::from_ref(&plain), false).expect("failure");
    assert!(blocking);
    assert_eq!(u.message, "random error");
    assert_eq!(u.reason, "UpgradePreconditionCheckFailed");
    assert_eq!(u.name, "PreconditionCheck");
    let (u, blocking) = summarize(std::slice::from_ref(&plain), true).expect("failure");
    assert!(!blocking);
    assert_eq!(u.message, "Forced through blocking failures: random error");
    let w = warning(
        "ClusterVersionRecommendedUpdate",
        "UnknownUpdate",
        "No RetrievedUpdates, so …",
    );
    let (u, blocking) = summarize(&[w], false).expect("failure");
    assert!(!blocking);
    assert_eq!(
        u.message,
        "Precondition \"ClusterVersionRecommendedUpdate\" failed because of \"UnknownUpdate\": No RetrievedUpdates, so …"
    );
    let (u, _) = summarize(
        &[plain, PreconditionFailure::Other("random error 2".into())],
        false,
    )
    .expect("failure");
    assert_eq!(
        u.message,
        "Multiple precondition checks failed:\n* random error\n* random error 2"
    );
    assert_eq!(summarize(&[], false), None);
}

fn cv_at(current: &str) -> ClusterVersion {
    let mut cv = ClusterVersion::default();
    cv.status.desired = rel(current, "quay.io/ocp:4.3.0");
    cv
}

fn recommended(cv: &ClusterVersion) -> Option<(String, String)> {
    let t = Target {
        version: "4.3.2".into(),
        image: "quay.io/ocp:4.3.2".into(),
    };
    check_recommended_update(cv, &t).map(|e| {
        assert!(e.non_blocking, "recommended-update failures are warnings");
        (e.reason, e.message)
    })
}

fn recommended_cond(status: ConditionStatus, reason: &str, msg: &str) -> ConditionalUpdate {
    ConditionalUpdate {
        release: rel("4.3.2", "quay.io/ocp:4.3.2"),
        conditions: vec![Condition {
            type_: "Recommended".into(),
            status,
            reason: Some(reason.into()),
            message: Some(msg.into()),
            ..Condition::default()
        }],
        ..ConditionalUpdate::default()
    }
}

#[test]
fn c62_recommended_update() {
    let mut cv = cv_at("4.3.0");
    cv.spec.channel = Some("stable-4.3".into());
    cv.status.available_updates = Some(vec![rel("4.3.2", "quay.io/ocp:4.3.2")]);
    assert_eq!(recommended(&cv), None);

    let mut cv = cv_at("4.3.0");
    cv.spec.channel = Some("stable-4.3".into());
    cv.status.conditional_updates = vec![recommended_cond(F, "FalseReason", "M")];
    assert_eq!(
        recommended(&cv),
        Some((
            "FalseReason".into(),
            "Update from 4.3.0 to 4.3.2 is not recommended:\n\nM".into()
        ))
    );
    cv.status.conditional_updates = vec![recommended_cond(U, "UnknownReason", "Unknown message.")];
    assert_eq!(
        recommended(&cv).map(|r| r.1),
        Some("Update from 4.3.0 to 4.3.2 is Recommended=Unknown: UnknownReason: Unknown message.".into())
    );
    cv.status.conditional_updates = vec![recommended_cond(T, "NotExposedToRisks", "ok")];
    assert_eq!(recommended(&cv), None);
    cv.status.conditional_updates[0].conditions.clear();
    assert_eq!(
        recommended(&cv),
        Some((
            "UnknownConditionType".into(),
            "Update from 4.3.0 to 4.3.2 has a status.conditionalUpdates entry, but no Recommended condition."
                .into()
        ))
    );

    let mut cv = cv_at("4.3.0");
    cv.spec.channel = Some("stable-4.3".into());
    cv.status.conditions = vec![Condition {
        type_: "RetrievedUpdates".into(),
        status: T,
        reason: Some("TrueReason".into()),
        ..Condition::default()
    }];
    assert_eq!(
        recommended(&cv),
        Some((
            "UnknownUpdate".into(),
            "RetrievedUpdates=True (TrueReason), so the update from 4.3.0 to 4.3.2 is probably neither recommended nor supported.".into()
        ))
    );
    cv.status.conditions.clear();
    assert_eq!(
        recommended(&cv).map(|r| r.1),
        Some(
            "No RetrievedUpdates, so the recommended status of updating from 4.3.0 to 4.3.2 is unknown."
                .into()
        )
    );
    cv.spec.channel = None;
    assert_eq!(
        recommended(&cv),
        Some((
            "NoChannel".into(),
            "Configured channel is unset, so the recommended status of updating from 4.3.0 to 4.3.2 is unknown.".into()
        ))
    );
}

// ---------------------------------------------------------------- validation
// Upstream lib/validation/validation_test.go, pkg/cvo/cvo_test.go TestOperator_sync.

#[test]
fn c70_validate_cluster_version() {
    let mut cv = ClusterVersion::default();
    cv.spec.desired_update = Some(Update {
        accept_risks: vec![
            AcceptRisk {
                name: "SomeInfrastructureThing".into(),
            },
            AcceptRisk {
                name: "SomeChannelThing".into(),
            },
        ],
        ..Update::default()
    });
    assert!(
        validate_cluster_version(&cv, true).is_empty(),
        "acceptRisks alone is valid with the gate"
    );
    let errs: Vec<String> = validate_cluster_version(&cv, false)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        vec!["spec.desiredUpdate.acceptRisks: Forbidden: acceptRisks must not be specified"]
    );

    cv.spec.desired_update = Some(Update::default());
    let errs: Vec<String> = validate_cluster_version(&cv, true)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        vec!["spec.desiredUpdate: Required value: must specify architecture, version, image, or acceptRisks"]
    );
    let errs: Vec<String> = validate_cluster_version(&cv, false)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        vec!["spec.desiredUpdate: Required value: must specify architecture, version, or image"]
    );

    cv.spec.desired_update = Some(Update {
        version: Some("4.1".into()),
        ..Update::default()
    });
    let errs: Vec<String> = validate_cluster_version(&cv, false)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        vec!["spec.desiredUpdate.version: Invalid value: \"4.1\": must be a semantic version (1.2.3[-...])"]
    );
}

// ---------------------------------------------------------------- admin gates
// Upstream pkg/risk/adminack/adminack_test.go.

#[test]
fn c86_admin_gate_applicable_to_current_version() {
    use cvo::reconcile::status::upgradeable::admin_gate_applies;
    for bad in [
        "ack-4>8-foo",
        "ack-4..8-foo",
        "ck-4.8-foo",
        "ack-3.8-foo",
        "ack-4.x-foo",
        "ack-4.8.1-foo",
        "ack-4.x--foo",
        "ack-4.x-",
    ] {
        assert!(
            admin_gate_applies(bad, "4.8.1").is_err(),
            "{bad} must be a format error"
        );
    }
    assert_eq!(admin_gate_applies("ack-4.8-foo", "4.8.3"), Ok(true));
    assert_eq!(admin_gate_applies("ack-4.123456-foo", "4.123456.0"), Ok(true));
    assert_eq!(admin_gate_applies("ack-4.8-foo", "4.9.0"), Ok(false));
}

#[test]
fn c87_admin_gate_not_acknowledged() {
    use std::collections::BTreeMap;

    use cvo::reconcile::status::upgradeable::admin_gate_risk;
    let value = "Sigstore is coming, see https://docs.example.com/sigstore\nfor details.";
    let acks = BTreeMap::new();
    let r = admin_gate_risk("ack-4.20-sigstore-in-4.21", value, &acks).expect("a risk");
    assert_eq!(r.name, "AdminAck-ack-4.20-sigstore-in-4.21");
    assert_eq!(r.message, value);
    assert_eq!(r.url, "https://docs.example.com/sigstore");
    let acks = BTreeMap::from([("ack-4.20-sigstore-in-4.21".to_string(), "true".to_string())]);
    assert_eq!(admin_gate_risk("ack-4.20-sigstore-in-4.21", value, &acks), None);
}

// ---------------------------------------------------------------- converged pass

#[test]
fn converged_status_is_a_fixed_point() {
    let own = rel("4.14.1", "quay.io/ocp@sha256:aa");
    let mut f = Fixture::new();
    f.operator_release = own.clone();
    f.risks = Some(vec![Risk::new("ClusterVersionOverrides", "overrides")]);
    let w = SyncWorkerStatus {
        generation: 3,
        reconciling: true,
        completed: 4,
        done: 800,
        total: 800,
        actual: own,
        verified: true,
        version_hash: "DL-FFQ2Uem8=".into(),
        ..SyncWorkerStatus::default()
    };
    let first = f.run(&ClusterVersionStatus::default(), &w);
    let inputs = StatusInputs {
        now: now() + Duration::minutes(5),
        operator_release: &f.operator_release,
        release_metadata: &[],
        status_release_architecture: false,
        validation_errors: &[],
        upgradeable_risks: f.risks.as_deref(),
        upgradeable_error: None,
        co_update_start_times: &f.starts,
    };
    let second = compute_status(&first, &w, &inputs);
    assert!(
        !cvo::reconcile::status::status_changed(&first, &second),
        "a second pass over a converged cluster must not change status: {first:#?} vs {second:#?}"
    );
    assert!(second.history[0].verified);
}

// ---------------------------------------------------------------- ReleaseAccepted texts
// Upstream pkg/cvo/cvo_scenarios_test.go.

#[test]
fn c76_c77_release_accepted_messages() {
    let r = rel("1.0.1-abc", "image/image:1");
    let st = LoadPayloadStatus::failed(
        "RetrievePayload",
        &r,
        UpdateError::new(
            "ImageVerificationFailed",
            "The update cannot be verified: some random error",
        )
        .into(),
        now(),
    );
    assert_eq!(
        st.message,
        "Retrieving payload failed version=\"1.0.1-abc\" image=\"image/image:1\" failure=The update cannot be verified: some random error"
    );
    let st = LoadPayloadStatus::failed(
        "PreconditionChecks",
        &r,
        UpdateError::new(
            "UpgradePreconditionCheckFailed",
            "Precondition \"TestPrecondition SuccessAfter: 3\" failed because of \"CheckFailure\": failing, attempt: 1 will succeeed after 3 attempt",
        )
        .into(),
        now(),
    );
    assert_eq!(
        st.message,
        "Preconditions failed for payload loaded version=\"1.0.1-abc\" image=\"image/image:1\": Precondition \"TestPrecondition SuccessAfter: 3\" failed because of \"CheckFailure\": failing, attempt: 1 will succeeed after 3 attempt"
    );
    let w = SyncWorkerStatus {
        actual: rel("1.0.0-abc", "image/image:0"),
        load_payload_status: st,
        ..SyncWorkerStatus::default()
    };
    let released = Fixture::new().run(&ClusterVersionStatus::default(), &w);
    assert_eq!(crm(&released, "ReleaseAccepted").0, F);
    assert_eq!(crm(&released, "ReleaseAccepted").1, "PreconditionChecks");
    assert_eq!(
        LoadPayloadStatus::retrieving(&r, now()).message,
        "Retrieving and verifying payload version=\"1.0.1-abc\" image=\"image/image:1\""
    );
    let ok = LoadPayloadStatus::loaded(&r, "amd64", "", false, true, now());
    assert_eq!(
        ok.message,
        "Payload loaded version=\"1.0.1-abc\" image=\"image/image:1\" architecture=\"amd64\""
    );
    assert!(ok.success && ok.verified);
    assert_eq!(
        LoadPayloadStatus::loaded(&r, "", "", false, false, now()).message,
        "Payload loaded version=\"1.0.1-abc\" image=\"image/image:1\""
    );
}

#[test]
fn c76_forced_update_records_accepted_risks_in_history() {
    let r = rel("1.0.1-abc", "image/image:1");
    let risk = "Target release version=\"1.0.1-abc\" image=\"image/image:1\" cannot be verified, but continuing anyway because the update was forced: some random error";
    let existing = ClusterVersionStatus {
        history: vec![
            hist(UpdateState::Partial, "1.0.1-abc", "image/image:1"),
            hist(UpdateState::Completed, "1.0.0-abc", "image/image:0"),
        ],
        ..ClusterVersionStatus::default()
    };
    let w = SyncWorkerStatus {
        reconciling: true,
        completed: 1,
        actual: r.clone(),
        load_payload_status: LoadPayloadStatus::loaded(&r, "amd64", risk, false, false, now()),
        ..SyncWorkerStatus::default()
    };
    let st = Fixture::new().run(&existing, &w);
    assert_eq!(st.history[0].state, UpdateState::Completed);
    assert_eq!(st.history[0].accepted_risks.as_deref(), Some(risk));
    expect_condition(&st, "Progressing", F, "", "Cluster version is 1.0.1-abc");
}
