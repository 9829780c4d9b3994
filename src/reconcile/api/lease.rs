//! The CVO Lease as the engine reads it, and why a switch to active-apply is refused.

use chrono::{DateTime, Utc};
use serde::Serialize;

/// How to stop an in-cluster CVO so that cvo may take its Lease (the Deployment of upstream's
/// `install/0000_00_cluster-version-operator_30_deployment.yaml`).
pub const SCALE_DOWN_HINT: &str = "scale the in-cluster CVO down first: oc scale deployment/cluster-version-operator \
     -n openshift-cluster-version --replicas=0 (and scale it back up to hand the cluster back)";

/// The CVO Lease (`coordination.k8s.io/v1` Lease `openshift-cluster-version/version`) as the
/// engine last read it or holds it: who holds it and whether that holder still looks alive,
/// judged as client-go's leader election judges expiry (`renewTime` + `leaseDurationSeconds`
/// against the reader's clock; upstream `pkg/start/start.go` runs that election).
///
/// Every time here is the wall clock's, in the demo too: the Lease is a real coordination
/// object whose durations are upstream's real seconds (137 s), judged by any other CVO or
/// client-go against its real clock, so its `renewTime` is never simulated. A view that
/// renders with the demo's simulated clock judges and labels these times through
/// [`crate::clock::Clock::wall_time_of`] (`cvo::ui::engine::lease_words`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseInfo {
    /// `namespace/name` of the Lease.
    pub lease: String,
    /// `spec.holderIdentity`; `None` when the Lease is absent or released (no holder).
    pub holder: Option<String>,
    /// `spec.renewTime` (else `spec.acquireTime`).
    pub renew_time: Option<DateTime<Utc>>,
    /// `spec.leaseDurationSeconds`.
    pub duration_seconds: Option<i32>,
    /// The holder's lease had not expired when it was read (`renew_time` + duration ≥ `read_at`).
    pub alive: bool,
    /// The holder is this engine.
    pub ours: bool,
    /// When it was read (or, while this engine leads, last known held).
    pub read_at: Option<DateTime<Utc>>,
    /// Why the Lease could not be read (the other fields are then empty).
    pub error: Option<String>,
}

impl LeaseInfo {
    /// When the holder's lease expires (`renew_time` + duration), if both are known.
    pub fn expires(&self) -> Option<DateTime<Utc>> {
        Some(self.renew_time? + chrono::Duration::seconds(i64::from(self.duration_seconds?)))
    }

    /// Why a switch to active-apply must be refused, in one line: another holder's lease is
    /// alive (the text names it, its renew time and [`SCALE_DOWN_HINT`]), or the Lease could
    /// not be read (taking it blind could fight another CVO). `None`: free, expired or ours.
    pub fn blocks_switch(&self) -> Option<String> {
        if let Some(e) = &self.error {
            return Some(format!(
                "the CVO Lease {} cannot be read ({e}); not switching",
                self.lease
            ));
        }
        let holder = self.holder.as_deref().filter(|_| self.alive && !self.ours)?;
        let renewed = self
            .renew_time
            .map(|t| format!(", renewed {}", t.format("%H:%M:%S UTC")))
            .unwrap_or_default();
        Some(format!(
            "the CVO Lease {} is held by {holder}{renewed} and alive: another CVO is running; {SCALE_DOWN_HINT}",
            self.lease
        ))
    }
}
