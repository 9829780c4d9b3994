use serde_json::json;

use super::*;
use crate::openshift::{Condition, ConditionStatus, Update, UpdateHistory, UpdateState};

mod listed;

const IMG_A: &str = "quay.io/openshift-release-dev/ocp-release@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const IMG_B: &str = "quay.io/openshift-release-dev/ocp-release@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const IMG_C: &str = "quay.io/openshift-release-dev/ocp-release@sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
const IMG_CUR: &str = "quay.io/openshift-release-dev/ocp-release@sha256:0000000000000000000000000000000000000000000000000000000000000000";
const IMG_PREV: &str = "quay.io/openshift-release-dev/ocp-release@sha256:1111111111111111111111111111111111111111111111111111111111111111";

fn rel(version: &str, image: &str) -> Release {
    Release {
        version: version.into(),
        image: image.into(),
        ..Release::default()
    }
}

fn cond(type_: &str, status: ConditionStatus, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status,
        reason: Some(reason.into()),
        message: Some(message.into()),
        ..Condition::default()
    }
}

/// A healthy 4.16.3 cluster in stable-4.16 with 4.16.4 recommended, 4.16.5 conditional (not
/// recommended, risk `BadThing`) and 4.17.1 recommended.
fn cluster() -> ClusterVersion {
    let mut cv = ClusterVersion::default();
    cv.metadata.name = Some("version".into());
    cv.spec.channel = Some("stable-4.16".into());
    cv.status.desired = Release {
        channels: vec!["fast-4.16".into(), "stable-4.16".into()],
        ..rel("4.16.3", IMG_CUR)
    };
    cv.status.history = vec![
        UpdateHistory {
            state: UpdateState::Completed,
            version: "4.16.3".into(),
            image: IMG_CUR.into(),
            ..Default::default()
        },
        UpdateHistory {
            state: UpdateState::Completed,
            version: "4.16.2".into(),
            image: IMG_PREV.into(),
            ..Default::default()
        },
    ];
    cv.status.conditions = vec![
        cond("Failing", ConditionStatus::False, "", ""),
        cond(
            "Progressing",
            ConditionStatus::False,
            "",
            "Cluster version is 4.16.3",
        ),
        cond("RetrievedUpdates", ConditionStatus::True, "", ""),
    ];
    cv.status.available_updates = Some(vec![rel("4.16.4", IMG_A), rel("4.17.1", IMG_C)]);
    cv.status.conditional_updates = vec![ConditionalUpdate {
        release: rel("4.16.5", IMG_B),
        risks: vec![ConditionalUpdateRisk {
            name: "BadThing".into(),
            message: "Bad things happen.".into(),
            url: "https://example.com/bad".into(),
            ..Default::default()
        }],
        conditions: vec![cond(
            "Recommended",
            ConditionStatus::False,
            "BadThing",
            "Bad things happen. https://example.com/bad",
        )],
        ..Default::default()
    }];
    cv
}

fn to(v: &str) -> Request {
    Request::ToVersion {
        version: v.into(),
        image: None,
    }
}

fn planned(cv: &ClusterVersion, req: &Request, flags: &Flags) -> Plan {
    match plan(cv, req, flags) {
        Ok(Outcome::Plan(p)) => p,
        other => panic!("expected a plan, got {other:?}"),
    }
}

fn refused(cv: &ClusterVersion, req: &Request, flags: &Flags) -> Refusal {
    match plan(cv, req, flags) {
        Err(r) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn verdict<'a>(verdicts: &'a [Verdict], name: &str) -> &'a Verdict {
    verdicts
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no verdict {name} in {verdicts:?}"))
}

/// The cluster-side preconditions (shared with the engine) as the request sees them.
mod cluster_preconditions;

#[test]
fn to_a_recommended_version_patches_version_and_image_only() {
    let p = planned(&cluster(), &to("4.16.4"), &Flags::default());
    assert_eq!(
        p.patch,
        json!({"spec": {"desiredUpdate": {"version": "4.16.4", "image": IMG_A}}})
    );
    assert_eq!(p.done, "Requested update to 4.16.4");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    for v in &p.verdicts {
        assert_eq!(v.state, VerdictState::Passed, "{v:?}");
    }
    assert_eq!(
        verdict(&p.verdicts, "Recommended").message,
        "4.16.4 is a recommended update"
    );
}

#[test]
fn already_at_the_version_is_no_change() {
    let out = plan(&cluster(), &to("4.16.3"), &Flags::default()).expect("plan");
    assert_eq!(
        out,
        Outcome::NoChange(NoChange {
            message: "info: Cluster is already at version 4.16.3".into()
        })
    );
    let out = plan(
        &cluster(),
        &Request::ToImage {
            pullspec: IMG_CUR.into(),
        },
        &Flags::default(),
    )
    .expect("plan");
    assert_eq!(
        out,
        Outcome::NoChange(NoChange {
            message: format!("info: Cluster is already at {IMG_CUR}")
        })
    );
}

#[test]
fn not_recommended_target_needs_allow_not_recommended_and_lists_the_waived_risk() {
    let r = refused(&cluster(), &to("4.16.5"), &Flags::default());
    assert_eq!(r.precondition, "Recommended");
    assert_eq!(r.waiver, Some(Waiver::AllowNotRecommended));
    assert!(r.message.starts_with("the update 4.16.5 is not one of the recommended updates, but is available as a conditional update. To accept the Recommended=False risk and to proceed with update use --allow-not-recommended.\n  Reason: BadThing\n  Message: Bad things happen."), "{}", r.message);

    let flags = Flags {
        allow_not_recommended: true,
        ..Flags::default()
    };
    let p = planned(&cluster(), &to("4.16.5"), &flags);
    assert_eq!(
        verdict(&p.verdicts, "Recommended").state,
        VerdictState::Waived(Waiver::AllowNotRecommended)
    );
    assert_eq!(p.waived_risks.len(), 1);
    assert_eq!(p.waived_risks[0].name, "BadThing");
    assert_eq!(
        p.warnings[0],
        "with --allow-not-recommended you have accepted the risks with 4.16.5 and bypassed Recommended=False BadThing: Bad things happen. https://example.com/bad"
    );
    assert_eq!(
        p.patch,
        json!({"spec": {"desiredUpdate": {"version": "4.16.5", "image": IMG_B}}})
    );
}

#[test]
fn waived_risks_skip_risks_that_do_not_apply_and_resolve_risk_names() {
    let mut cv = cluster();
    let cu = &mut cv.status.conditional_updates[0];
    cu.risks[0].conditions = vec![cond("Applies", ConditionStatus::False, "NotMatch", "")];
    cu.risk_names = vec!["Named".into()];
    cv.status.conditional_update_risks = vec![ConditionalUpdateRisk {
        name: "Named".into(),
        message: "m".into(),
        ..Default::default()
    }];
    let flags = Flags {
        allow_not_recommended: true,
        ..Flags::default()
    };
    let p = planned(&cv, &to("4.16.5"), &flags);
    let names: Vec<&str> = p.waived_risks.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["Named"]);
}

#[test]
fn unknown_version_is_refused_listing_the_possible_targets() {
    let r = refused(&cluster(), &to("4.16.9"), &Flags::default());
    assert_eq!(r.precondition, "TargetFound");
    assert_eq!(r.waiver, None);
    assert_eq!(
        r.message,
        "the update is not one of the possible targets: 4.17.1, 4.16.4. specify --to-image to continue with the update."
    );
    let mut cv = cluster();
    cv.status.available_updates = None;
    let r = refused(&cv, &to("4.16.9"), &Flags::default());
    assert_eq!(
        r.message,
        "no recommended updates, specify --to-image to continue with the update or wait for new updates to be available."
    );
    cv.status.conditions[2] = cond(
        "RetrievedUpdates",
        ConditionStatus::False,
        "VersionNotFound",
        "not in channel",
    );
    let r = refused(&cv, &to("4.16.9"), &Flags::default());
    assert_eq!(
        r.message,
        "cannot refresh available updates:\n  Reason: VersionNotFound\n  Message: not in channel\n\nspecify --to-image to continue with the update."
    );
}

#[test]
fn explicit_image_needs_allow_explicit_upgrade_and_leaves_the_version_unchecked() {
    let image =
        "example.com/mirror/release@sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd";
    let req = Request::ToImage {
        pullspec: image.into(),
    };
    let r = refused(&cluster(), &req, &Flags::default());
    assert_eq!(r.waiver, Some(Waiver::AllowExplicitUpgrade));
    assert_eq!(
        r.message,
        "the update is not one of the possible targets: 4.17.1, 4.16.4. specify --allow-explicit-upgrade to continue with the update."
    );
    let flags = Flags {
        allow_explicit_upgrade: true,
        ..Flags::default()
    };
    let p = planned(&cluster(), &req, &flags);
    assert_eq!(p.patch, json!({"spec": {"desiredUpdate": {"image": image}}}));
    assert_eq!(p.done, format!("Requested update to release image {image}"));
    assert_eq!(
        verdict(&p.verdicts, "ListedTarget").state,
        VerdictState::Waived(Waiver::AllowExplicitUpgrade)
    );
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionGiantHop").state,
        VerdictState::Unchecked
    );
}

#[test]
fn image_matching_a_listed_digest_keeps_the_requested_pull_spec() {
    let mirror = IMG_A.replace("quay.io/openshift-release-dev", "mirror.local/ocp");
    let p = planned(
        &cluster(),
        &Request::ToImage {
            pullspec: mirror.clone(),
        },
        &Flags::default(),
    );
    assert_eq!(
        p.patch,
        json!({"spec": {"desiredUpdate": {"version": "4.16.4", "image": mirror}}})
    );
}

#[test]
fn pull_specs_by_tag_need_force_and_bad_ones_are_refused() {
    let req = Request::ToImage {
        pullspec: "quay.io/openshift-release-dev/ocp-release:4.16.4-x86_64".into(),
    };
    let r = refused(&cluster(), &req, &Flags::default());
    assert_eq!(r.precondition, "PullSpec");
    assert_eq!(r.waiver, Some(Waiver::Force));
    assert!(
        r.message
            .starts_with("--to-image must be a by-digest pull spec, unless --force is also set"),
        "{}",
        r.message
    );
    let flags = Flags {
        force: true,
        allow_explicit_upgrade: true,
        ..Flags::default()
    };
    let p = planned(&cluster(), &req, &flags);
    assert_eq!(
        verdict(&p.verdicts, "PullSpec").state,
        VerdictState::Waived(Waiver::Force)
    );
    assert_eq!(p.patch["spec"]["desiredUpdate"]["force"], json!(true));
    for (text, want) in [
        (
            "4.0.1",
            "--to-image must be a valid image pull spec: no registry or repository specified",
        ),
        (
            "quay.io/ocp/release",
            "--to-image must be a valid image pull spec: no tag or digest specified",
        ),
    ] {
        let r = refused(
            &cluster(),
            &Request::ToImage {
                pullspec: text.into(),
            },
            &Flags::default(),
        );
        assert_eq!(r.message, want);
        assert_eq!(r.waiver, None);
    }
}

#[test]
fn to_latest_picks_the_highest_recommended_or_says_already_latest() {
    let p = planned(&cluster(), &Request::ToLatest, &Flags::default());
    assert_eq!(p.target.as_ref().map(|t| t.version.as_str()), Some("4.17.1"));
    let mut cv = cluster();
    cv.status.available_updates = Some(vec![rel("4.16.4", IMG_A)]);
    cv.status.conditional_updates[0].release = rel("4.16.9", IMG_B);
    let p = planned(&cv, &Request::ToLatest, &Flags::default());
    assert_eq!(p.target.as_ref().map(|t| t.version.as_str()), Some("4.16.4"));
    let flags = Flags {
        allow_not_recommended: true,
        ..Flags::default()
    };
    let p = planned(&cv, &Request::ToLatest, &flags);
    assert_eq!(p.target.as_ref().map(|t| t.version.as_str()), Some("4.16.9"));
    assert_eq!(p.waived_risks.len(), 1);
    cv.status.available_updates = None;
    cv.status.conditional_updates.clear();
    let out = plan(&cv, &Request::ToLatest, &Flags::default()).expect("plan");
    assert_eq!(
        out,
        Outcome::NoChange(NoChange {
            message: "info: Cluster is already at the latest available version 4.16.3".into()
        })
    );
}

#[test]
fn client_guards_block_together_until_allow_upgrade_with_warnings() {
    let mut cv = cluster();
    cv.status.conditions[0] = cond(
        "Failing",
        ConditionStatus::True,
        "ClusterOperatorDegraded",
        "Cluster operator etcd is degraded",
    );
    cv.status.conditions[1] = cond(
        "Progressing",
        ConditionStatus::True,
        "",
        "Working towards 4.16.3: 5 of 800 done",
    );
    let r = refused(&cv, &to("4.16.4"), &Flags::default());
    assert_eq!(r.precondition, "Failing");
    assert_eq!(r.waiver, Some(Waiver::AllowUpgradeWithWarnings));
    assert_eq!(
        r.message,
        "the cluster is experiencing an error reconciling \"4.16.3\":\n\n  Reason: ClusterOperatorDegraded\n  Message: Cluster operator etcd is degraded\n\nthe cluster is already upgrading:\n\n  Reason: \n  Message: Working towards 4.16.3: 5 of 800 done\n\nIf you want to upgrade anyway, use --allow-upgrade-with-warnings."
    );
    assert!(verdict(&r.verdicts, "UpdateInProgress").is_blocking());
    let flags = Flags {
        allow_upgrade_with_warnings: true,
        ..Flags::default()
    };
    let p = planned(&cv, &to("4.16.4"), &flags);
    assert_eq!(
        verdict(&p.verdicts, "Failing").state,
        VerdictState::Waived(Waiver::AllowUpgradeWithWarnings)
    );
    assert_eq!(
        verdict(&p.verdicts, "UpdateInProgress").state,
        VerdictState::Waived(Waiver::AllowUpgradeWithWarnings)
    );
    assert!(
        p.warnings[0].starts_with("--allow-upgrade-with-warnings is bypassing: the cluster is experiencing"),
        "{:?}",
        p.warnings
    );
}

#[test]
fn invalid_cluster_version_is_a_client_guard() {
    let mut cv = cluster();
    cv.status
        .conditions
        .push(cond("Invalid", ConditionStatus::True, "InvalidSpec", "bad spec"));
    let r = refused(&cv, &to("4.16.4"), &Flags::default());
    assert_eq!(r.precondition, "Invalid");
    assert!(r.message.starts_with("the cluster version object is invalid, you must correct the invalid state first:\n\n  Reason: InvalidSpec\n  Message: bad spec"));
}

#[test]
fn upgradeable_false_blocks_a_minor_update_but_not_a_patch_update() {
    let mut cv = cluster();
    cv.status.conditions.push(cond(
        "Upgradeable",
        ConditionStatus::False,
        "AdminAckRequired",
        "Kubernetes 1.30 removes APIs",
    ));
    let r = refused(&cv, &to("4.17.1"), &Flags::default());
    assert_eq!(r.precondition, "ClusterVersionUpgradeable");
    assert_eq!(r.waiver, Some(Waiver::Force));
    assert!(r.message.starts_with("Precondition \"ClusterVersionUpgradeable\" failed because of \"AdminAckRequired\": Kubernetes 1.30 removes APIs\n\nIf you want to update anyway, use --force"), "{}", r.message);
    let p = planned(&cv, &to("4.16.4"), &Flags::default());
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionUpgradeable").state,
        VerdictState::Passed
    );
    let flags = Flags {
        force: true,
        ..Flags::default()
    };
    let p = planned(&cv, &to("4.17.1"), &flags);
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionUpgradeable").state,
        VerdictState::Waived(Waiver::Force)
    );
    assert_eq!(
        p.patch,
        json!({"spec": {"desiredUpdate": {"version": "4.17.1", "image": IMG_C, "force": true}}})
    );
    assert!(
        p.warnings
            .iter()
            .any(|w| w.starts_with("--force overrides cluster verification"))
    );
    assert!(
        p.warnings.contains(&"--force is waiving: Precondition \"ClusterVersionUpgradeable\" failed because of \"AdminAckRequired\": Kubernetes 1.30 removes APIs".to_string()),
        "{:?}",
        p.warnings
    );
}

#[test]
fn rollback_only_to_the_previous_patch_version() {
    let mut cv = cluster();
    cv.status.available_updates = Some(vec![
        rel("4.16.2", IMG_PREV),
        rel("4.16.1", IMG_A),
        rel("4.15.9", IMG_B),
    ]);
    let p = planned(&cv, &to("4.16.2"), &Flags::default());
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionRollback").state,
        VerdictState::Passed
    );
    let r = refused(&cv, &to("4.16.1"), &Flags::default());
    assert_eq!(r.precondition, "ClusterVersionRollback");
    assert!(r.message.starts_with(&format!("Precondition \"ClusterVersionRollback\" failed because of \"LowDesiredVersion\": 4.16.1 is less than the current target 4.16.3, and the only supported rollback is to the cluster's previous version 4.16.2 ({IMG_PREV})")), "{}", r.message);
    cv.status.history[1].version = "4.15.9".into();
    let r = refused(&cv, &to("4.15.9"), &Flags::default());
    assert!(r.message.contains("matches the cluster's previous version, but rollbacks that change major or minor versions are not recommended"), "{}", r.message);
    cv.status.history.truncate(1);
    let r = refused(&cv, &to("4.16.2"), &Flags::default());
    assert!(
        r.message.contains(
            "4.16.2 is less than the current target 4.16.3, and the cluster has no previous Semantic Version"
        ),
        "{}",
        r.message
    );
    let p = planned(
        &cv,
        &to("4.16.2"),
        &Flags {
            force: true,
            ..Flags::default()
        },
    );
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionRollback").state,
        VerdictState::Waived(Waiver::Force)
    );
}

#[test]
fn giant_hops_are_blocked() {
    let mut cv = cluster();
    cv.status.available_updates = Some(vec![
        rel("4.18.0", IMG_A),
        rel("5.0.1", IMG_B),
        rel("5.1.0", IMG_C),
    ]);
    let r = refused(&cv, &to("4.18.0"), &Flags::default());
    assert_eq!(r.precondition, "ClusterVersionGiantHop");
    assert!(r.message.contains("\"MultipleMinorVersionsUpdate\": 4.18.0 is more than one minor version beyond the current target 4.16.3 (4.18 > 4.(16+1))"), "{}", r.message);
    let p = planned(&cv, &to("5.0.1"), &Flags::default());
    assert_eq!(
        verdict(&p.verdicts, "ClusterVersionGiantHop").state,
        VerdictState::Passed
    );
    let r = refused(&cv, &to("5.1.0"), &Flags::default());
    assert!(r.message.contains("\"MajorVersionUpdate\": 5.1.0 has a larger major version than the current target 4.16.3 (5 > 4), and only updates within the current major version or to 5.0 are supported."), "{}", r.message);
}

#[test]
fn accept_risks_are_preserved_by_updates_and_clear() {
    let mut cv = cluster();
    cv.spec.desired_update = Some(Update {
        version: Some("4.16.3".into()),
        image: Some(IMG_CUR.into()),
        architecture: Some("Multi".into()),
        force: true,
        accept_risks: vec![crate::openshift::AcceptRisk {
            name: "BadThing".into(),
        }],
    });
    let p = planned(&cv, &to("4.16.4"), &Flags::default());
    assert_eq!(
        p.patch,
        json!({"spec": {"desiredUpdate": {"architecture": null, "version": "4.16.4", "image": IMG_A, "force": null}}})
    );
    let p = planned(&cv, &Request::Clear, &Flags::default());
    assert_eq!(
        p.patch,
        json!({"spec": {"desiredUpdate": {"architecture": null, "version": null, "image": null, "force": null}}})
    );
    assert_eq!(p.done, "Cleared the update field, still at 4.16.3");
}

#[test]
fn clear_cancels_or_says_nothing_to_clear() {
    let mut cv = cluster();
    assert_eq!(
        plan(&cv, &Request::Clear, &Flags::default()).expect("plan"),
        Outcome::NoChange(NoChange {
            message: "info: No update in progress".into()
        })
    );
    cv.spec.desired_update = Some(Update {
        version: Some("4.16.4".into()),
        image: Some(IMG_A.into()),
        ..Update::default()
    });
    let p = planned(&cv, &Request::Clear, &Flags::default());
    assert_eq!(p.patch, json!({"spec": {"desiredUpdate": null}}));
    assert_eq!(p.done, "Cancelled requested upgrade to 4.16.4");
}

#[test]
fn a_channel_outside_the_releases_channels_needs_allow_explicit_channel() {
    let cv = cluster();
    let p = planned(&cv, &Request::Channel("fast-4.16".into()), &Flags::default());
    assert_eq!(p.patch, json!({"spec": {"channel": "fast-4.16"}}));
    assert!(p.warnings.is_empty());
    assert_eq!(verdict(&p.verdicts, "ChannelKnown").state, VerdictState::Passed);
    let refusal = plan(&cv, &Request::Channel("stable-4.17".into()), &Flags::default()).expect_err("refused");
    assert_eq!(
        refusal.message,
        "the requested channel \"stable-4.17\" is not one of the available channels (fast-4.16, stable-4.16), you must pass --allow-explicit-channel to continue"
    );
    assert_eq!(refusal.waiver, Some(Waiver::AllowExplicitChannel));
    let explicit = Flags {
        allow_explicit_channel: true,
        ..Flags::default()
    };
    let p = planned(&cv, &Request::Channel("stable-4.17".into()), &explicit);
    assert_eq!(p.patch, json!({"spec": {"channel": "stable-4.17"}}));
    assert_eq!(
        verdict(&p.verdicts, "ChannelKnown").state,
        VerdictState::Waived(Waiver::AllowExplicitChannel)
    );
    assert_eq!(
        p.warnings,
        [
            "The requested channel \"stable-4.17\" is not one of the available channels (fast-4.16, stable-4.16). You have used --allow-explicit-channel to proceed anyway. Setting the update channel to \"stable-4.17\"."
        ]
    );
    assert_eq!(
        plan(&cv, &Request::Channel("stable-4.16".into()), &Flags::default()).expect("plan"),
        Outcome::NoChange(NoChange {
            message: "info: Cluster is already in stable-4.16 (no change)".into()
        })
    );
    // Clearing a channel the release lists needs the flag too.
    let refusal = plan(&cv, &Request::Channel(String::new()), &Flags::default()).expect_err("refused");
    assert_eq!(
        refusal.message,
        "You are requesting to clear the update channel. The current channel \"stable-4.16\" is one of the available channels, you must pass --allow-explicit-channel to continue"
    );
    let p = planned(&cv, &Request::Channel(String::new()), &explicit);
    assert_eq!(p.patch, json!({"spec": {"channel": null}}));
    assert_eq!(
        p.warnings,
        [
            "Clearing channel \"stable-4.16\"; cluster will no longer request available update recommendations."
        ]
    );
    // With no channels listed, any channel is set with a warning.
    let mut bare = cluster();
    bare.status.desired.channels.clear();
    let p = planned(&bare, &Request::Channel("custom".into()), &Flags::default());
    assert_eq!(p.patch, json!({"spec": {"channel": "custom"}}));
    assert_eq!(
        p.warnings,
        [
            "No channels known to be compatible with the current version \"4.16.3\"; unable to validate \"custom\". Setting the update channel to \"custom\" anyway."
        ]
    );
}

#[test]
fn accept_risks_replaces_the_list() {
    let cv = cluster();
    let gate = Flags {
        accept_risks_gate: true,
        ..Flags::default()
    };
    let p = planned(
        &cv,
        &Request::AcceptRisks(vec!["BadThing".into(), "Other".into(), "BadThing".into()]),
        &gate,
    );
    assert_eq!(
        p.patch,
        json!({"spec": {"desiredUpdate": {"acceptRisks": [{"name": "BadThing"}, {"name": "Other"}]}}})
    );
    assert_eq!(p.done, "info: Accept risks are [BadThing, Other]");
    assert_eq!(p.verdicts.len(), 1);
    assert_eq!(p.verdicts[0].name, ACCEPT_RISKS_GATE);
    assert_eq!(p.verdicts[0].state, VerdictState::Passed);
    assert!(matches!(
        plan(&cv, &Request::AcceptRisks(vec![]), &gate),
        Ok(Outcome::NoChange(_))
    ));
}

/// Without the ClusterUpdateAcceptRisks gate the cluster marks a ClusterVersion naming
/// accepted risks Invalid (upstream `lib/validation/validation_test.go`
/// `TestValidateClusterVersion`), so the request is refused before any write; clearing the
/// list stays allowed, as it repairs such a ClusterVersion.
#[test]
fn accept_risks_is_refused_without_the_feature_gate() {
    let cv = cluster();
    let err = plan(
        &cv,
        &Request::AcceptRisks(vec!["BadThing".into()]),
        &Flags::default(),
    )
    .expect_err("refused without the gate");
    assert_eq!(err.precondition, ACCEPT_RISKS_GATE);
    assert_eq!(err.waiver, None);
    assert!(
        err.message.starts_with(&format!(
            "the FeatureGate \"cluster\" does not enable ClusterUpdateAcceptRisks for {}:",
            cv.status.desired.version
        )),
        "{}",
        err.message
    );
    assert!(err.message.contains("acceptRisks must not be specified"));
    assert_eq!(err.verdicts.len(), 1);
    assert!(err.verdicts[0].is_blocking());
    // Even the force flags do not waive it.
    let all = Flags {
        allow_not_recommended: true,
        allow_explicit_upgrade: true,
        allow_upgrade_with_warnings: true,
        force: true,
        accept_risks_gate: false,
        allow_explicit_channel: true,
    };
    assert!(plan(&cv, &Request::AcceptRisks(vec!["BadThing".into()]), &all).is_err());
    // Clearing an accepted list written without the gate is how the cluster is repaired.
    let mut invalid = cv.clone();
    invalid
        .spec
        .desired_update
        .get_or_insert_with(Default::default)
        .accept_risks = vec![crate::openshift::config_v1::AcceptRisk {
        name: "BadThing".into(),
    }];
    let p = planned(&invalid, &Request::AcceptRisks(vec![]), &Flags::default());
    assert_eq!(p.patch, json!({"spec": {"desiredUpdate": {"acceptRisks": null}}}));
}

#[test]
fn pull_spec_parser() {
    let p = pullspec::PullSpec::parse("localhost:5000/ocp/release:4.16.4").expect("parse");
    assert_eq!(p.registry.as_deref(), Some("localhost:5000"));
    assert_eq!(p.repository, "ocp/release");
    assert_eq!(p.tag.as_deref(), Some("4.16.4"));
    assert_eq!(p.to_string(), "localhost:5000/ocp/release:4.16.4");
    let p = pullspec::PullSpec::parse(IMG_A).expect("parse");
    assert!(p.is_by_digest());
    assert_eq!(p.registry.as_deref(), Some("quay.io"));
    assert!(pullspec::PullSpec::parse("quay.io/ocp/release@sha256:xyz").is_err());
    assert!(pullspec::PullSpec::parse("quay.io/ocp/Release:1").is_err());
    assert!(pullspec::PullSpec::parse("quay.io//r:1").is_err());
    assert!(pullspec::PullSpec::parse("a b/c:1").is_err());
    assert!(pullspec::same_image(
        IMG_A,
        &IMG_A.replace("quay.io", "mirror.example.com")
    ));
    assert!(!pullspec::same_image(IMG_A, IMG_B));
}

#[test]
fn releases_sort_by_semver_descending_then_unparseable_reverse_lexical() {
    let mut r = vec![
        rel("4.9.1", ""),
        rel("abc", ""),
        rel("4.10.0", ""),
        rel("zzz", ""),
        rel("4.10.0-rc.1", ""),
    ];
    sort_releases_desc(&mut r);
    let v: Vec<&str> = r.iter().map(|r| r.version.as_str()).collect();
    assert_eq!(v, ["4.10.0", "4.10.0-rc.1", "4.9.1", "zzz", "abc"]);
}

#[test]
fn written_lists_each_field_of_the_patch() {
    let mut cv = cluster();
    cv.spec.desired_update = Some(Update {
        force: true,
        ..Update::default()
    });
    let p = planned(&cv, &to("4.16.4"), &Flags::default());
    assert_eq!(
        p.written(),
        [
            "spec.desiredUpdate.force = null".to_string(),
            format!("spec.desiredUpdate.image = \"{IMG_A}\""),
            "spec.desiredUpdate.version = \"4.16.4\"".to_string(),
        ]
    );
    let explicit = Flags {
        allow_explicit_channel: true,
        ..Flags::default()
    };
    let p = planned(&cluster(), &Request::Channel(String::new()), &explicit);
    assert_eq!(p.written(), ["spec.channel = null"]);
}

/// Upstream oc `pkg/cli/admin/upgrade/upgrade_test.go` `TestCheckForUpgrade`: an Invalid
/// ClusterVersion, and a failing one that is also progressing, with upstream's exact texts
/// (followed by the flag that waives them).
#[test]
fn c79_check_for_upgrade() {
    let waiver = "\n\nIf you want to upgrade anyway, use --allow-upgrade-with-warnings.";
    let mut cv = cluster();
    cv.status.conditions.push(cond(
        "Invalid",
        ConditionStatus::True,
        "SomeReason",
        "Some message.",
    ));
    let r = refused(&cv, &to("4.16.4"), &Flags::default());
    assert_eq!(r.precondition, "Invalid");
    assert_eq!(
        r.message.strip_suffix(waiver),
        Some(
            "the cluster version object is invalid, you must correct the invalid state first:\n\n  Reason: SomeReason\n  Message: Some message."
        )
    );

    let mut cv = cluster();
    cv.status.desired.version = "4.1.0".into();
    cv.status.conditions[0] = cond(
        "Failing",
        ConditionStatus::True,
        "BadStuff",
        "The widgets are slow.",
    );
    cv.status.conditions[1] = cond(
        "Progressing",
        ConditionStatus::True,
        "RollingOut",
        "Updating to v2.",
    );
    let r = refused(&cv, &to("4.16.4"), &Flags::default());
    assert_eq!(r.precondition, "Failing");
    assert_eq!(
        r.message.strip_suffix(waiver),
        Some(
            "the cluster is experiencing an error reconciling \"4.1.0\":\n\n  Reason: BadStuff\n  Message: The widgets are slow.\n\nthe cluster is already upgrading:\n\n  Reason: RollingOut\n  Message: Updating to v2."
        )
    );
}

/// Upstream oc `pkg/cli/admin/upgrade/upgrade_test.go` `TestSortReleasesBySemanticVersions`.
#[test]
fn c80_sort_releases_by_semantic_versions() {
    let mut r: Vec<Release> = [
        "2.0.0",
        "not-sem-ver-1",
        "2.0.1",
        "10.0.0",
        "not-sem-ver-2",
        "2.0.5",
        "2.0.10",
    ]
    .iter()
    .map(|v| rel(v, ""))
    .collect();
    sort_releases_desc(&mut r);
    let v: Vec<&str> = r.iter().map(|r| r.version.as_str()).collect();
    assert_eq!(
        v,
        [
            "10.0.0",
            "2.0.10",
            "2.0.5",
            "2.0.1",
            "2.0.0",
            "not-sem-ver-2",
            "not-sem-ver-1"
        ]
    );
}

#[test]
fn to_multi_arch_requests_the_current_version_as_multi() {
    let mut cv = cluster();
    cv.spec.desired_update = Some(Update {
        version: Some("4.16.3".into()),
        image: Some(IMG_CUR.into()),
        accept_risks: vec![crate::openshift::AcceptRisk {
            name: "BadThing".into(),
        }],
        ..Update::default()
    });
    let p = planned(&cv, &Request::ToMultiArch, &Flags::default());
    // The image goes (the cluster picks the multi-arch one), accepted risks stay.
    assert_eq!(
        p.patch,
        json!({"spec": {"desiredUpdate": {"architecture": "Multi", "version": "4.16.3", "image": null}}})
    );
    assert_eq!(p.done, "Requested update to multi cluster architecture");
    assert_eq!(
        verdict(&p.verdicts, "UpdateInProgress").state,
        VerdictState::Passed
    );
    // Progressing=True is a client guard, waived by --allow-upgrade-with-warnings.
    let mut busy = cluster();
    busy.status.conditions[1] = cond("Progressing", ConditionStatus::True, "", "Working towards 4.16.4");
    let r = refused(&busy, &Request::ToMultiArch, &Flags::default());
    assert_eq!(r.waiver, Some(Waiver::AllowUpgradeWithWarnings));
    assert!(
        r.message.starts_with("the cluster is already upgrading:"),
        "{}",
        r.message
    );
    let forced = Flags {
        allow_upgrade_with_warnings: true,
        force: true,
        ..Flags::default()
    };
    let p = planned(&busy, &Request::ToMultiArch, &forced);
    assert_eq!(
        p.patch,
        json!({"spec": {"desiredUpdate": {"architecture": "Multi", "version": "4.16.3", "force": true}}})
    );
    // Asked twice: no change.
    let mut done = cluster();
    done.spec.desired_update = Some(Update {
        architecture: Some("Multi".into()),
        version: Some("4.16.3".into()),
        ..Update::default()
    });
    assert_eq!(
        plan(&done, &Request::ToMultiArch, &Flags::default()).expect("no change"),
        Outcome::NoChange(NoChange {
            message: "info: Update to multi cluster architecture has already been requested".into()
        })
    );
}

/// In Russian (`--lang ru`) the refusals, verdicts and lines a request prints are worded in
/// Russian; the precondition names, flags and versions are as they are.
#[test]
fn refusals_and_verdicts_in_russian() {
    use crate::l10n::{Lang, scoped};
    let r = scoped(Lang::Ru, || refused(&cluster(), &to("4.16.9"), &Flags::default()));
    assert_eq!(r.precondition, "TargetFound");
    assert_eq!(
        r.message,
        "обновление не входит в возможные цели: 4.17.1, 4.16.4. Укажите --to-image, чтобы продолжить это обновление."
    );
    let mut cv = cluster();
    cv.status.available_updates = None;
    cv.status.conditions[2] = cond(
        "RetrievedUpdates",
        ConditionStatus::False,
        "VersionNotFound",
        "not in channel",
    );
    let r = scoped(Lang::Ru, || refused(&cv, &to("4.16.9"), &Flags::default()));
    assert_eq!(
        r.message,
        "не удаётся обновить список доступных обновлений:\n  Причина: VersionNotFound\n  Сообщение: not in channel\n\nукажите --to-image, чтобы продолжить это обновление."
    );
    let p = scoped(Lang::Ru, || planned(&cluster(), &to("4.16.4"), &Flags::default()));
    assert_eq!(p.done, "Запрошено обновление до 4.16.4");
    assert_eq!(
        verdict(&p.verdicts, "Recommended").message,
        "4.16.4 — рекомендуемое обновление"
    );
    assert_eq!(
        verdict(&p.verdicts, "Failing").message,
        "кластер без ошибок (Failing не True)"
    );
    let r = scoped(Lang::Ru, || {
        refused(
            &cluster(),
            &Request::Channel("candidate-4.17".into()),
            &Flags::default(),
        )
    });
    assert_eq!(
        r.message,
        "запрошенный канал «candidate-4.17» не входит в доступные каналы (fast-4.16, stable-4.16); чтобы продолжить, укажите --allow-explicit-channel"
    );
    // The same calls in English stay oc's text.
    let r = scoped(Lang::En, || {
        refused(
            &cluster(),
            &Request::Channel("candidate-4.17".into()),
            &Flags::default(),
        )
    });
    assert_eq!(
        r.message,
        "the requested channel \"candidate-4.17\" is not one of the available channels (fast-4.16, stable-4.16), you must pass --allow-explicit-channel to continue"
    );
}
