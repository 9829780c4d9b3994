//! The cluster's own preconditions in an update request: upstream's giant-hop rule (only
//! 4.y to 5.0 across majors) and its non-blocking warnings, which the request reports as
//! warnings in the cluster's words (upstream
//! `pkg/payload/precondition/clusterversion/gianthop.go`, `upgradeable.go`, `rollback.go`).

use super::*;

#[test]
fn only_four_to_five_zero_crosses_a_major_version() {
    // Upstream gianthop.go: the one exception is 4.y to 5.0; any other larger major blocks.
    let mut cv = cluster();
    cv.status.available_updates = Some(vec![rel("5.0.0", IMG_A), rel("6.0.0", IMG_B)]);
    let p = planned(&cv, &to("5.0.0"), &Flags::default());
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionGiantHop").state,
        VerdictState::Passed
    );
    let r = refused(&cv, &to("6.0.0"), &Flags::default());
    assert_eq!(
        (r.precondition, r.waiver),
        ("ClusterVersionGiantHop", Some(Waiver::Force))
    );
    assert_eq!(
        r.message,
        "Precondition \"ClusterVersionGiantHop\" failed because of \"MajorVersionUpdate\": 6.0.0 has a larger major version than the current target 4.16.3 (6 > 4), and only updates within the current major version are supported.\n\nIf you want to update anyway, use --force (it also skips the cluster's verification of the release image)."
    );
    // From 3.11, 4.0 is a blocked major update too (not "the next major's first minor").
    cv.status.desired.version = "3.11.0".into();
    cv.status.available_updates = Some(vec![rel("4.0.0", IMG_A)]);
    let r = refused(&cv, &to("4.0.0"), &Flags::default());
    assert_eq!(r.precondition, "ClusterVersionGiantHop");
    assert!(r.message.starts_with("Precondition \"ClusterVersionGiantHop\" failed because of \"MajorVersionUpdate\": 4.0.0 has a larger major version than the current target 3.11.0 (4 > 3), and only updates within the current major version are supported."), "{}", r.message);
}

#[test]
fn non_blocking_preconditions_are_warnings_in_the_clusters_words() {
    // Upgradeable=False and an unmanaged override: a patch update is not blocked, and the
    // cluster will record ClusterVersionOverridesSet as an accepted risk.
    let mut cv = cluster();
    cv.status.conditions.push(cond(
        "Upgradeable",
        ConditionStatus::False,
        "AdminAckRequired",
        "Kubernetes 1.30 removes APIs",
    ));
    cv.spec.overrides = vec![crate::openshift::ComponentOverride {
        kind: "Deployment".into(),
        group: "apps".into(),
        namespace: "openshift-monitoring".into(),
        name: "prometheus".into(),
        unmanaged: true,
    }];
    let overrides = "Precondition \"ClusterVersionUpgradeable\" failed because of \"ClusterVersionOverridesSet\": Retarget from 4.16.3 to 4.16.4 is not blocked by ClusterVersionOverridesSet. But the cluster-version operator is not managing these resources; they are currently the responsibility of the agent that set the overrides: Disabling ownership via cluster version overrides prevents upgrades between minor or major versions. Please remove overrides before requesting a minor or major version update.";
    let p = planned(&cv, &to("4.16.4"), &Flags::default());
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionUpgradeable"),
        &Verdict {
            name: "ClusterVersionUpgradeable",
            state: VerdictState::Warning,
            message: "ClusterVersionOverridesSet does not block; the cluster records it in the update's accepted risks".into(),
        }
    );
    assert_eq!(p.warnings, vec![overrides.to_string()]);
    // A minor update stays blocked by Upgradeable=False, overrides or not.
    let r = refused(&cv, &to("4.17.1"), &Flags::default());
    assert_eq!(r.precondition, "ClusterVersionUpgradeable");

    // A patch retarget while a minor update is in progress.
    let mut cv = cluster();
    cv.status.desired = rel("4.17.1", IMG_C);
    cv.status.history.insert(
        0,
        UpdateHistory {
            state: UpdateState::Partial,
            version: "4.17.1".into(),
            image: IMG_C.into(),
            ..Default::default()
        },
    );
    cv.status.conditions = vec![
        cond("Progressing", ConditionStatus::True, "", "Working towards 4.17.1"),
        cond("Upgradeable", ConditionStatus::False, "AdminAckRequired", "ack"),
        cond("RetrievedUpdates", ConditionStatus::True, "", ""),
    ];
    cv.status.available_updates = Some(vec![rel("4.17.2", IMG_A)]);
    let flags = Flags {
        allow_upgrade_with_warnings: true,
        ..Flags::default()
    };
    let p = planned(&cv, &to("4.17.2"), &flags);
    let retarget = "Precondition \"ClusterVersionUpgradeable\" failed because of \"MinorVersionClusterUpdateInProgress\": Retarget to 4.17.2 while a minor version update from 4.16.3 to 4.17.1 is in progress";
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionUpgradeable").state,
        VerdictState::Warning
    );
    assert!(p.warnings.contains(&retarget.to_string()), "{:?}", p.warnings);

    // A current version that does not parse: each check that parses it warns, none blocks.
    let mut cv = cluster();
    cv.status.desired.version = "4.16".into();
    let p = planned(&cv, &to("4.16.4"), &Flags::default());
    assert_eq!(
        p.warnings,
        vec![
            "Precondition \"ClusterVersionRollback\" failed because of \"InvalidCurrentVersion\": No Major.Minor.Patch elements found".to_string(),
            "Precondition \"ClusterVersionGiantHop\" failed because of \"InvalidCurrentVersion\": No Major.Minor.Patch elements found".to_string(),
        ]
    );
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionUpgradeable").state,
        VerdictState::Passed
    );
}
