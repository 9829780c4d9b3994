//! The static demo snapshot of `cvo demo --snapshot`, shipped in `assets/demo/`: a cluster stuck
//! mid-update with a degraded operator (the live demo's seeded cluster is `sim::demo_cluster`).
//!
//! ClusterVersion updating 4.16.3 → 4.16.4 (Partial + Completed history, `Progressing=True`,
//! `Failing=True`, `Upgradeable=False`), 33 ClusterOperators with `machine-config` Degraded by a
//! node drain blocked by a PodDisruptionBudget (multi-line message), `monitoring` still waiting
//! at 4.16.3 and `dns`/`network` progressing during node reboots; master, worker and a paused
//! `infra` pool with seven nodes mid-rollout (updated, rebooting, degraded, pending, excluded);
//! rendered MachineConfigs carrying `machineconfiguration.openshift.io/release-image-version`.
//! The snapshot time ("now") is 2024-07-20 10:12:03 UTC.

use super::{ClusterState, snapshot};

/// The embedded asset files: (name used in errors, text).
const ASSETS: [(&str, &str); 5] = [
    ("assets/demo/cv.yaml", include_str!("../../assets/demo/cv.yaml")),
    ("assets/demo/co.yaml", include_str!("../../assets/demo/co.yaml")),
    ("assets/demo/mc.yaml", include_str!("../../assets/demo/mc.yaml")),
    ("assets/demo/mcp.yaml", include_str!("../../assets/demo/mcp.yaml")),
    (
        "assets/demo/node.yaml",
        include_str!("../../assets/demo/node.yaml"),
    ),
];

/// Loads the demo cluster.
///
/// # Errors
/// Only if the embedded assets are malformed.
pub fn demo_state() -> anyhow::Result<ClusterState> {
    let mut state = ClusterState::default();
    for (name, text) in ASSETS {
        snapshot::load_str(name, text, &mut state)?;
    }
    state.sort();
    state.source = "demo cluster (assets/demo)".into();
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_state_loads_every_kind() -> anyhow::Result<()> {
        let s = demo_state()?;
        let cv = s
            .cluster_version
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("no ClusterVersion"))?;
        assert_eq!(cv.status.desired.version, "4.16.4");
        assert_eq!(cv.current_version(), Some("4.16.3"));
        assert!(cv.condition("Failing").is_some_and(|c| c.is_true()));
        assert!(cv.condition("Progressing").is_some_and(|c| c.is_true()));
        assert!(s.cluster_operators.len() >= 30);
        assert_eq!(s.machine_config_pools.len(), 3);
        assert_eq!(s.nodes.len(), 7);
        assert!(s.machine_configs.iter().any(|mc| {
            mc.metadata.annotations.as_ref().is_some_and(|a| {
                a.get("machineconfiguration.openshift.io/release-image-version")
                    .map(String::as_str)
                    == Some("4.16.4")
            })
        }));
        let now = s
            .snapshot_time()
            .ok_or_else(|| anyhow::anyhow!("no snapshot time"))?;
        assert_eq!(now.format("%Y-%m-%dT%H:%M:%S").to_string(), "2024-07-20T10:12:03");
        Ok(())
    }
}
