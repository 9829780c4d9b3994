//! `cvo status` on snapshots that are not `oc adm upgrade status` fixtures.

use std::path::PathBuf;

mod common;

fn local(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/snapshots")
        .join(name)
}

#[test]
fn settled_nodes_without_machineconfigs_are_not_an_update() {
    let state = cvo::cluster::snapshot::load(&[local("settled-no-machineconfigs.yaml")]).expect("loads");
    let now = state.snapshot_time().expect("times");
    let a = cvo::assess::assess(&state, None, now);
    assert!(a.error.is_none(), "{:?}", a.error);
    assert!(!a.updating, "a settled cluster is not updating");
    let worker = a.pools.iter().find(|p| p.name == "worker").expect("worker pool");
    assert_eq!(worker.nodes.len(), 1);
    assert_eq!(worker.nodes[0].version.as_deref(), Some("4.16.3"));
    assert!(worker.nodes[0].is_updated);
    assert_eq!(
        cvo::cli::status::render_text(&a, None),
        "The cluster is not updating.\n"
    );
}

#[test]
fn must_gather_snapshots_are_not_updating() {
    for platform in ["aws", "azure", "metal", "vsphere"] {
        let rel = format!("must-gather-clean-snapshots/{platform}");
        let Some(dir) = common::upstream_fixture(&rel, "must_gather_snapshots_are_not_updating") else {
            return;
        };
        let state = cvo::cluster::snapshot::load(&[dir]).expect("loads");
        let now = state.snapshot_time().expect("times");
        let a = cvo::assess::assess(&state, None, now);
        assert!(!a.updating, "{platform}: steady must-gather reported as updating");
        let nodes: usize = a.pools.iter().map(|p| p.nodes.len()).sum();
        let updated: usize = a
            .pools
            .iter()
            .flat_map(|p| &p.nodes)
            .filter(|n| n.is_updated)
            .count();
        assert_eq!(
            (nodes, updated),
            (6, 6),
            "{platform}: every node is at the completed version"
        );
    }
}
