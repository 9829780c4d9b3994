//! Reaching a cluster: the [`ClusterState`] every view and command reads, loaded from an
//! offline snapshot ([`snapshot`]) or kept current from a live cluster ([`live`]).

pub mod api_error;
#[cfg(any(feature = "sim", test))]
pub mod demo_snapshot;
pub mod fleet;
pub mod live;
pub mod overrides;
pub mod proxy;
pub mod snapshot;
pub mod update_request;

use std::sync::Arc;

use tokio::sync::watch;

use k8s_openapi::api::{apps::v1::Deployment, core::v1::Node};
use serde::Serialize;

use crate::openshift::{ClusterOperator, ClusterVersion, MachineConfig, MachineConfigPool};

/// Everything cvo knows about a cluster at one moment: the objects `oc adm upgrade status`
/// reads. ClusterOperators and MachineConfigs are sorted by name so output is stable;
/// MachineConfigPools and Nodes keep their list order, which `oc adm upgrade status` uses for
/// the pool table and the insight order.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClusterState {
    /// Where the state came from, e.g. `context admin@prod` or `snapshot (5 files)`.
    pub source: String,
    /// The `version` ClusterVersion; `None` when the cluster has none (not OpenShift).
    pub cluster_version: Option<ClusterVersion>,
    /// All ClusterOperators.
    pub cluster_operators: Vec<ClusterOperator>,
    /// All MachineConfigPools.
    pub machine_config_pools: Vec<MachineConfigPool>,
    /// MachineConfigs (metadata only; rendered configs carry the release version annotation).
    pub machine_configs: Vec<MachineConfig>,
    /// All Nodes.
    pub nodes: Vec<Node>,
    /// The `openshift-machine-config-operator/machine-config-operator` Deployment, if known
    /// (its image tells whether a multi-arch migration has reached the MCO).
    pub mco_deployment: Option<Deployment>,
    /// Static snapshot, or live with its watch health.
    pub feed: FeedStatus,
}

impl ClusterState {
    /// Sorts the ClusterOperator and MachineConfig lists by object name (the order `oc get`
    /// prints). MachineConfigPools and Nodes keep their list order: `oc adm upgrade status`
    /// (`openshift/oc pkg/cli/admin/upgrade/status/status.go`) prints pools in list order, and a
    /// snapshot's order (e.g. `master, worker, infra`) is part of its expected output.
    pub fn sort(&mut self) {
        fn key(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
            m.name.clone().unwrap_or_default()
        }
        self.cluster_operators.sort_by_key(|o| key(&o.metadata));
        self.machine_configs.sort_by_key(|o| key(&o.metadata));
    }

    /// Sorts every list by name: the order the API server lists objects in. Used for states
    /// built from watch caches, whose order is arbitrary.
    pub fn sort_all_by_name(&mut self) {
        fn key(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
            m.name.clone().unwrap_or_default()
        }
        self.sort();
        self.machine_config_pools.sort_by_key(|o| key(&o.metadata));
        self.nodes.sort_by_key(|o| key(&o.metadata));
    }
}

/// How fresh a [`ClusterState`] is.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub enum FeedStatus {
    /// Loaded once from files; never changes.
    #[default]
    Static,
    /// Kept current by watches on a live cluster.
    Live {
        /// Whether every watched kind has completed its initial list.
        synced: bool,
        /// The last watch/list error and since when the API has been failing, cleared on
        /// the next successful event.
        error: Option<FeedError>,
    },
}

/// A failing watch: what failed and since when.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FeedError {
    /// One-line error text.
    pub message: String,
    /// When the failures began.
    pub since: chrono::DateTime<chrono::Utc>,
}

impl ClusterState {
    /// The moment a snapshot describes, by the rule `oc adm upgrade status` uses for its mock
    /// inputs (`openshift/oc pkg/cli/admin/upgrade/status/status.go`): the latest
    /// `lastTransitionTime` among ClusterVersion and ClusterOperator conditions, plus
    /// 368975 ns. `None` when no condition carries a time.
    pub fn snapshot_time(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        let cv = self
            .cluster_version
            .iter()
            .flat_map(|cv| cv.status.conditions.iter());
        let co = self
            .cluster_operators
            .iter()
            .flat_map(|co| co.status.conditions.iter());
        cv.chain(co)
            .filter_map(|c| c.last_transition_time)
            .max()
            .map(|t| t + chrono::Duration::nanoseconds(368_975))
    }
}

/// A feed that holds one state forever (an offline snapshot). The sender is leaked into a
/// parked task so the receiver never reports the channel closed.
pub fn static_feed(state: ClusterState) -> watch::Receiver<Arc<ClusterState>> {
    let (tx, rx) = watch::channel(Arc::new(state));
    std::mem::forget(tx);
    rx
}
