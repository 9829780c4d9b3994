//! Fleet rows from oc's `oc adm upgrade status` fixture clusters (a failing update, a cluster
//! at its version) and from made-up members for reachability and the Lease.

use std::path::PathBuf;

use super::*;
use crate::cluster::{
    ClusterState, FeedError, FeedStatus,
    fleet::{LeaseHolder, Member},
    snapshot,
};

fn fixture(name: &str) -> (ClusterState, DateTime<Utc>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream/oc-upgrade-status");
    let paths: Vec<PathBuf> = ["cv", "co", "mc", "mcp", "node"]
        .iter()
        .map(|k| dir.join(format!("{name}-{k}.yaml")))
        .collect();
    let state = snapshot::load(&paths).unwrap_or_else(|e| panic!("{name}: {e}"));
    let now = state
        .snapshot_time()
        .unwrap_or_else(|| panic!("{name}: no times"));
    (state, now)
}

fn member(context: &str, state: ClusterState, reach: Reach) -> Member {
    Member {
        context: context.into(),
        server: "https://api.example:6443".into(),
        reach,
        answered: true,
        state,
        lease: None,
        lease_error: None,
    }
}

#[test]
fn a_failing_update_is_a_failing_row_with_progress_and_operator_counts() {
    let (state, now) = fixture("4.14.1-degraded");
    let r = row(&member("prod", state, Reach::Reachable), now);
    assert_eq!(r.state, RowState::Failing);
    assert!(r.reachable);
    // oc: `Completion: 97% (32 operators updated, 1 updating, 0 waiting)`.
    assert_eq!(r.progress_percent, Some(97.0));
    // oc: `Assessment:      Stalled`.
    assert_eq!(r.assessment.as_deref(), Some("Stalled"));
    assert_eq!(r.version.as_deref(), Some("4.14.0-rc.3"));
    assert_eq!(r.desired.as_deref(), Some("4.14.1"));
    // oc: `Operator Health: 28 Healthy, 1 Unavailable, 4 Available but degraded`.
    assert_eq!(
        (r.operators, r.operators_unavailable, r.operators_degraded),
        (33, 1, 4)
    );
    let f = r.failing.expect("Failing=True");
    assert_eq!(f.reason, "ClusterOperatorsDegraded");
    assert!(r.progressing);
}

#[test]
fn a_cluster_at_its_version_is_up_to_date_without_desired_or_progress() {
    let (state, now) = fixture("not-upgrading");
    let r = row(&member("stage", state, Reach::Reachable), now);
    assert_eq!(r.state, RowState::UpToDate);
    assert_eq!(r.version.as_deref(), Some("4.14.1"));
    assert_eq!((r.desired, r.progress_percent, r.failing), (None, None, None));
    assert_eq!((r.operators_degraded, r.operators_unavailable), (0, 0));
    assert!(!r.progressing);
}

#[test]
fn unreachable_keeps_what_was_seen_and_says_why() {
    let (state, now) = fixture("not-upgrading");
    let e = FeedError {
        message: "list clusterversions: connection refused".into(),
        since: now,
    };
    let r = row(&member("dr", state, Reach::Unreachable(e.clone())), now);
    assert_eq!(r.state, RowState::Unreachable);
    assert!(!r.reachable);
    assert_eq!(
        r.error.as_deref(),
        Some("list clusterversions: connection refused")
    );
    assert_eq!(r.version.as_deref(), Some("4.14.1"));
    let never = ClusterState {
        feed: FeedStatus::Live {
            synced: false,
            error: Some(e.clone()),
        },
        ..ClusterState::default()
    };
    let r = row(&member("gone", never, Reach::Unreachable(e)), now);
    assert_eq!((r.state, r.version), (RowState::Unreachable, None));
    let refused = FeedError {
        message: "list clusterversions: Unauthorized (reason Unauthorized, code 401)".into(),
        since: now,
    };
    let r = row(
        &member("old-token", ClusterState::default(), Reach::Denied(refused)),
        now,
    );
    assert_eq!((r.state, r.reachable), (RowState::Denied, true));
    assert!(r.error.is_some_and(|e| e.ends_with("code 401)")));
    let r = row(&member("new", ClusterState::default(), Reach::Connecting), now);
    assert_eq!(r.state, RowState::Connecting);
    let r = row(&member("k8s", ClusterState::default(), Reach::Reachable), now);
    assert_eq!(r.state, RowState::NoClusterVersion);
}

#[test]
fn the_lease_holder_and_whether_it_is_alive() {
    let (state, now) = fixture("not-upgrading");
    let mut m = member("prod", state, Reach::Reachable);
    m.lease = Some(LeaseHolder {
        holder: "cvo-7f_abc".into(),
        renewed: Some(now - chrono::Duration::seconds(10)),
        duration_secs: Some(137),
    });
    let r = row(&m, now);
    assert_eq!(
        (r.lease_holder.as_deref(), r.lease_alive),
        (Some("cvo-7f_abc"), true)
    );
    let r = row(&m, now + chrono::Duration::seconds(200));
    assert_eq!(
        (r.lease_holder.as_deref(), r.lease_alive),
        (Some("cvo-7f_abc"), false)
    );
}

#[test]
fn rows_sort_by_name_newest_version_or_most_urgent_state() {
    let mk = |c: &str, v: Option<&str>, s: RowState| FleetRow {
        context: c.into(),
        version: v.map(str::to_owned),
        state: s,
        ..FleetRow::default()
    };
    let mut rows = vec![
        mk("b", Some("4.9.1"), RowState::UpToDate),
        mk("a", Some("4.16.3"), RowState::Updating),
        mk("d", None, RowState::Unreachable),
        mk("c", Some("4.16.10"), RowState::Failing),
    ];
    let order = |rows: &[FleetRow]| rows.iter().map(|r| r.context.clone()).collect::<Vec<_>>();
    rows.sort_by(|x, y| compare(x, y, SortKey::Name));
    assert_eq!(order(&rows), ["a", "b", "c", "d"]);
    rows.sort_by(|x, y| compare(x, y, SortKey::Version));
    assert_eq!(order(&rows), ["c", "a", "b", "d"]);
    rows.sort_by(|x, y| compare(x, y, SortKey::State));
    assert_eq!(order(&rows), ["d", "c", "a", "b"]);
    assert_eq!(SortKey::Name.next().next().next(), SortKey::Name);
}
