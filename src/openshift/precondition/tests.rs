//! The precondition checks against upstream's own test tables
//! (openshift/cluster-version-operator `pkg/payload/precondition/clusterversion/`
//! `gianthop_test.go` `TestGiantHopRun`, `rollback_test.go` `TestRollbackRun`,
//! `upgradeable_test.go` `TestUpgradeableRun`), plus the cases upstream's code decides that
//! its tables leave out (another major jump, unparsable versions).

use super::*;
use crate::openshift::{ComponentOverride, Condition, ConditionStatus, Release, UpdateHistory, UpdateState};

fn entry(state: UpdateState, version: &str, image: &str) -> UpdateHistory {
    UpdateHistory {
        state,
        version: version.into(),
        image: image.into(),
        ..UpdateHistory::default()
    }
}

fn cv_at(version: &str, image: &str, history: Vec<UpdateHistory>) -> ClusterVersion {
    let mut cv = ClusterVersion::default();
    cv.metadata.name = Some("version".into());
    cv.status.desired = Release {
        version: version.into(),
        image: image.into(),
        ..Release::default()
    };
    cv.status.history = history;
    cv
}

fn message(e: Option<PreconditionError>) -> String {
    e.map(|e| e.message).unwrap_or_default()
}

#[test]
fn giant_hop_matches_upstream_table() {
    // (name, current, target, expected message; "" passes)
    let table = [
        ("update", "1.0.0", "1.0.1", ""),
        ("no change", "1.0.0", "1.0.0", ""),
        (
            "major version",
            "1.0.0",
            "2.0.0",
            "2.0.0 has a larger major version than the current target 1.0.0 (2 > 1), and only updates within the current major version are supported.",
        ),
        ("major version is 5.0", "4.0.0", "5.0.0", ""),
        (
            "major version is 5.1",
            "4.0.0",
            "5.1.0",
            "5.1.0 has a larger major version than the current target 4.0.0 (5 > 4), and only updates within the current major version or to 5.0 are supported.",
        ),
        (
            "two minor versions",
            "1.0.0",
            "1.2.0",
            "1.2.0 is more than one minor version beyond the current target 1.0.0 (1.2 > 1.(0+1)), and only updates within the current minor version or to the next minor version are supported.",
        ),
        // Cases upstream's code decides beyond its table: 5.0 is reachable only from 4, and
        // 6.0 from nowhere.
        ("4.y to 5.0 patch", "4.22.7", "5.0.3", ""),
        (
            "3.y to 4.0",
            "3.11.0",
            "4.0.0",
            "4.0.0 has a larger major version than the current target 3.11.0 (4 > 3), and only updates within the current major version are supported.",
        ),
        (
            "4.y to 6.0",
            "4.22.0",
            "6.0.0",
            "6.0.0 has a larger major version than the current target 4.22.0 (6 > 4), and only updates within the current major version are supported.",
        ),
        (
            "5.y to 6.0",
            "5.3.0",
            "6.0.0",
            "6.0.0 has a larger major version than the current target 5.3.0 (6 > 5), and only updates within the current major version are supported.",
        ),
        // The minor rule compares minors whatever the majors.
        (
            "major down, higher minor",
            "5.3.0",
            "4.22.0",
            "4.22.0 is more than one minor version beyond the current target 5.3.0 (4.22 > 5.(3+1)), and only updates within the current minor version or to the next minor version are supported.",
        ),
    ];
    for (name, current, target, expected) in table {
        let got = giant_hop(&cv_at(current, "", Vec::new()), target);
        assert_eq!(message(got.clone()), expected, "{name}");
        if let Some(e) = got {
            assert_eq!(e.name, "ClusterVersionGiantHop", "{name}");
            assert!(!e.non_blocking, "{name}");
            let reason = if expected.contains("major version") {
                "MajorVersionUpdate"
            } else {
                "MultipleMinorVersionsUpdate"
            };
            assert_eq!(e.reason, reason, "{name}");
        }
    }
}

#[test]
fn rollback_matches_upstream_table() {
    use UpdateState::{Completed, Partial};
    let table: Vec<(&str, ClusterVersion, &str, &str)> = vec![
        ("update", cv_at("1.0.0", "", vec![]), "1.0.1", ""),
        ("no change", cv_at("1.0.0", "", vec![]), "1.0.0", ""),
        (
            "rollback no history",
            cv_at("1.0.1", "", vec![]),
            "1.0.0",
            "1.0.0 is less than the current target 1.0.1, and the cluster has no previous Semantic Version",
        ),
        (
            "rollback to previous in the same minor version",
            cv_at(
                "1.0.1",
                "",
                vec![entry(Completed, "1.0.1", ""), entry(Completed, "1.0.0", "")],
            ),
            "1.0.0",
            "",
        ),
        (
            "rollback to previous completed with intermediate partial",
            cv_at(
                "1.0.2",
                "example.com/image:1.0.2",
                vec![
                    entry(Partial, "1.0.2", "example.com/image:1.0.2"),
                    entry(Partial, "1.0.1", "example.com/image:1.0.1"),
                    entry(Completed, "1.0.0", "example.com/image:1.0.0"),
                ],
            ),
            "1.0.0",
            "1.0.0 is less than the current target 1.0.2, and the only supported rollback is to the cluster's previous version 1.0.1 (example.com/image:1.0.1)",
        ),
        (
            "rollback to previous completed with intermediate image change",
            cv_at(
                "1.0.1",
                "example.com/image:multi-arch",
                vec![
                    entry(Completed, "1.0.1", "example.com/image:multi-arch"),
                    entry(Completed, "1.0.1", "example.com/image:single-arch"),
                    entry(Completed, "1.0.0", ""),
                ],
            ),
            "1.0.0",
            "1.0.0 is less than the current target 1.0.1, and the only supported rollback is to the cluster's previous version 1.0.1 (example.com/image:single-arch)",
        ),
        (
            "rollback to previous in an earlier minor release",
            cv_at(
                "2.0.0",
                "",
                vec![entry(Completed, "2.0.0", ""), entry(Completed, "1.0.0", "")],
            ),
            "1.0.0",
            "1.0.0 is less than the current target 2.0.0 and matches the cluster's previous version, but rollbacks that change major or minor versions are not recommended",
        ),
        // Upstream stops at the first other entry; when it does not parse there is no
        // previous Semantic Version, even if an older entry would match.
        (
            "previous entry unparsable",
            cv_at(
                "1.0.2",
                "",
                vec![
                    entry(Completed, "1.0.2", ""),
                    entry(Completed, "1.0", ""),
                    entry(Completed, "1.0.1", ""),
                ],
            ),
            "1.0.1",
            "1.0.1 is less than the current target 1.0.2, and the cluster has no previous Semantic Version",
        ),
        // Build metadata does not order versions (semver precedence, as blang/semver).
        (
            "same version, other build",
            cv_at("1.0.1+b", "", vec![]),
            "1.0.1+a",
            "",
        ),
    ];
    for (name, cv, target, expected) in table {
        let got = rollback(&cv, target);
        assert_eq!(message(got.clone()), expected, "{name}");
        if let Some(e) = got {
            assert_eq!(
                (e.name.as_str(), e.reason.as_str(), e.non_blocking),
                ("ClusterVersionRollback", "LowDesiredVersion", false),
                "{name}"
            );
        }
    }
}

fn condition(type_: &str, status: ConditionStatus, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status,
        reason: Some(reason.into()),
        message: Some(message.into()),
        ..Condition::default()
    }
}

fn prometheus_override() -> ComponentOverride {
    ComponentOverride {
        kind: "Deployment".into(),
        group: "apps".into(),
        namespace: "openshift-monitoring".into(),
        name: "prometheus".into(),
        unmanaged: true,
    }
}

/// One row of upstream's `TestUpgradeableRun`.
struct UpCase {
    name: &'static str,
    upgradeable: Option<ConditionStatus>,
    overrides: bool,
    completed: &'static str,
    current: &'static str,
    target: &'static str,
    /// (reason, message, non-blocking)
    expected: Option<(&'static str, &'static str, bool)>,
}

impl UpCase {
    /// The ClusterVersion upstream's test builds for the row.
    fn cluster_version(&self) -> ClusterVersion {
        let mut cv = cv_at(
            self.current,
            "",
            vec![entry(UpdateState::Completed, self.completed, "")],
        );
        if self.overrides {
            cv.spec.overrides = vec![prometheus_override()];
        }
        if !self.completed.is_empty() && self.completed != self.current {
            cv.status
                .conditions
                .push(condition("Progressing", ConditionStatus::True, "", ""));
        }
        if let Some(status) = self.upgradeable {
            let message = format!("set to {}", status.as_str());
            cv.status
                .conditions
                .push(condition("Upgradeable", status, "bla", &message));
        }
        cv
    }
}

const OVERRIDES_WARNING: &str = "Retarget from 4.1.3 to 4.1.4 is not blocked by ClusterVersionOverridesSet. But the cluster-version operator is not managing these resources; they are currently the responsibility of the agent that set the overrides: Disabling ownership via cluster version overrides prevents upgrades between minor or major versions. Please remove overrides before requesting a minor or major version update.";

#[test]
fn upgradeable_matches_upstream_table() {
    use ConditionStatus::{False, True, Unknown};
    let case = |name, upgradeable, current, target, expected| UpCase {
        name,
        upgradeable,
        overrides: false,
        completed: "",
        current,
        target,
        expected,
    };
    let blocked = Some(("bla", "set to False", false));
    let table = [
        case("first", None, "", "4.2", None),
        case("move-y, no condition", None, "4.1", "4.2", None),
        case("move-y, with true condition", Some(True), "4.1", "4.2", None),
        case(
            "move-y, with unknown condition",
            Some(Unknown),
            "4.1",
            "4.2",
            None,
        ),
        case(
            "invalid current version",
            Some(False),
            "4.1",
            "4.2",
            Some((
                "InvalidCurrentVersion",
                "No Major.Minor.Patch elements found",
                true,
            )),
        ),
        case(
            "invalid target version",
            Some(False),
            "4.1.1",
            "4.2",
            Some((
                "InvalidDesiredVersion",
                "No Major.Minor.Patch elements found",
                false,
            )),
        ),
        case(
            "move-y, with false condition",
            Some(False),
            "4.1.1",
            "4.2.1",
            blocked,
        ),
        case(
            "move-z, with false condition",
            Some(False),
            "4.1.3",
            "4.1.4",
            None,
        ),
        UpCase {
            overrides: true,
            ..case(
                "move-z, with false condition and overrides, is non-blocking warning",
                Some(False),
                "4.1.3",
                "4.1.4",
                Some(("ClusterVersionOverridesSet", OVERRIDES_WARNING, true)),
            )
        },
        UpCase {
            overrides: true,
            ..case(
                "move-y, with false condition and overrides, is still blocking",
                Some(False),
                "4.1.1",
                "4.2.1",
                blocked,
            )
        },
        case("empty target", None, "", "", None),
        case("downgrade z", None, "4.16.3", "4.16.1", None),
        case(
            "downgrade z with Upgradeable=False",
            Some(False),
            "4.16.3",
            "4.16.1",
            None,
        ),
        case("downgrade y", None, "4.16.1", "4.15.3", None),
        case(
            "downgrade y with Upgradeable=False",
            Some(False),
            "4.16.1",
            "4.15.3",
            None,
        ),
        case("move to y+2 directly", None, "4.16.1", "4.18.3", None),
        case(
            "move to y+2 directly with Upgradeable=False",
            Some(False),
            "4.16.1",
            "4.18.3",
            blocked,
        ),
        case(
            "cluster-bot build to release candidate",
            None,
            "4.17.0-0.test-2024-10-07-173400-ci-ln-pwn9ngk-latest",
            "4.17.0-rc.6",
            None,
        ),
        case(
            "cluster-bot build to release candidate with Upgradeable=False",
            Some(False),
            "4.17.0-0.test-2024-10-07-173400-ci-ln-pwn9ngk-latest",
            "4.17.0-rc.6",
            None,
        ),
        UpCase {
            completed: "4.1.1",
            ..case(
                "move-y-then-z, with false condition",
                Some(False),
                "4.2.1",
                "4.2.3",
                Some((
                    "MinorVersionClusterUpdateInProgress",
                    "Retarget to 4.2.3 while a minor version update from 4.1.1 to 4.2.1 is in progress",
                    true,
                )),
            )
        },
        UpCase {
            completed: "4.1.1",
            ..case(
                "move-x-then-z, with false condition",
                Some(False),
                "5.0.1",
                "5.0.3",
                Some((
                    "MajorVersionClusterUpdateInProgress",
                    "Retarget to 5.0.3 while a major version update from 4.1.1 to 5.0.1 is in progress",
                    true,
                )),
            )
        },
        UpCase {
            completed: "4.2.1",
            ..case(
                "move-z-then-z, with false condition",
                Some(False),
                "4.2.2",
                "4.2.3",
                None,
            )
        },
    ];
    for row in table {
        let got = upgradeable(&row.cluster_version(), row.target);
        let got = got.map(|e| {
            assert_eq!(e.name, "ClusterVersionUpgradeable", "{}", row.name);
            (e.reason, e.message, e.non_blocking)
        });
        let expected = row.expected.map(|(r, m, w)| (r.to_string(), m.to_string(), w));
        assert_eq!(got, expected, "{}", row.name);
    }
}

#[test]
fn unparsable_versions_warn_or_block_in_every_check() {
    // The current version: a warning from each check that parses it.
    let mut cv = cv_at("4.16", "", Vec::new());
    cv.status.conditions.push(condition(
        "Upgradeable",
        ConditionStatus::False,
        "bla",
        "set to False",
    ));
    for (check, name) in [
        (
            rollback as fn(&ClusterVersion, &str) -> Option<PreconditionError>,
            ROLLBACK,
        ),
        (giant_hop, GIANT_HOP),
        (upgradeable, UPGRADEABLE),
    ] {
        assert_eq!(
            check(&cv, "4.17.0"),
            Some(PreconditionError {
                name: name.into(),
                reason: "InvalidCurrentVersion".into(),
                message: "No Major.Minor.Patch elements found".into(),
                non_blocking: true,
            })
        );
        // The target version: blocking, once the current one parsed.
        let mut at = cv.clone();
        at.status.desired.version = "4.16.3".into();
        let e = check(&at, "4.17.x").unwrap_or_else(|| panic!("{name} let 4.17.x through"));
        assert_eq!(
            (e.reason.as_str(), e.message.as_str(), e.non_blocking),
            (
                "InvalidDesiredVersion",
                "Invalid character(s) found in patch number \"x\"",
                false
            ),
            "{name}"
        );
    }
}

#[test]
fn versions_parse_with_blang_semver_texts() {
    let table = [
        ("", "Version string empty"),
        ("4.16", "No Major.Minor.Patch elements found"),
        ("v4.16.3", "Invalid character(s) found in major number \"v4\""),
        ("04.16.3", "Major number must not contain leading zeroes \"04\""),
        ("4.1x.3", "Invalid character(s) found in minor number \"1x\""),
        ("4.016.3", "Minor number must not contain leading zeroes \"016\""),
        ("4..3", "strconv.ParseUint: parsing \"\": invalid syntax"),
        ("4.16.03", "Patch number must not contain leading zeroes \"03\""),
        ("4.16.3.1", "Invalid character(s) found in patch number \"3.1\""),
        ("4.16.3-", "Prerelease is empty"),
        (
            "4.16.3-rc.01",
            "Numeric PreRelease version must not contain leading zeroes \"01\"",
        ),
        ("4.16.3-rc_1", "Invalid character(s) found in prerelease \"rc_1\""),
        ("4.16.3+", "Build meta data is empty"),
        (
            "4.16.3+a/b",
            "Invalid character(s) found in build meta data \"a/b\"",
        ),
        (
            "99999999999999999999.0.0",
            "strconv.ParseUint: parsing \"99999999999999999999\": value out of range",
        ),
    ];
    for (text, error) in table {
        assert_eq!(parse_version(text), Err(error.to_string()), "{text:?}");
    }
    for ok in [
        "4.16.3",
        "4.17.0-0.test-2024-10-07-173400-ci-ln-pwn9ngk-latest",
        "5.0.0-rc.1+x.01",
    ] {
        assert_eq!(parse_version(ok).map(|v| v.to_string()), Ok(ok.to_string()));
    }
}
