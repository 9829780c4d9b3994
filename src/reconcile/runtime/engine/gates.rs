//! The cluster feature gates the engine follows: `ClusterUpdateAcceptRisks`, read from the
//! FeatureGate `cluster` for the current version (upstream `pkg/featuregates/featuregates.go`
//! `CvoGatesFromFeatureGate`, polled every 30 s by `featurechangestopper.go`, in
//! openshift/cluster-version-operator). It decides whether `spec.desiredUpdate.acceptRisks` is
//! valid (`lib/validation/validation.go`) and whether accepted risks count when conditional
//! updates are evaluated.
//!
//! Upstream reads the gates at start and restarts when they change; the engine re-reads them
//! instead, at most every [`GATE_POLL`], and at once when the current version changes. It
//! reads only when they matter: an update service is configured (the dashboard offers to
//! accept risks) or the ClusterVersion names accepted risks; otherwise no request is made.

use std::time::Duration;

use kube::Api;
use tokio::time::Instant;

use super::EngineLoop;
use crate::openshift::{FeatureGate, feature_gate::FEATURE_GATE_NAME};

/// How often the FeatureGate is re-read (upstream's feature-change poll).
pub(super) const GATE_POLL: Duration = Duration::from_secs(30);

/// The gates as read last.
#[derive(Debug, Default)]
pub(super) struct Gates {
    /// `ClusterUpdateAcceptRisks` for [`Gates::version`]; `None` until a read succeeded.
    pub(super) accept_risks: Option<bool>,
    /// The version the gates were read for.
    version: String,
    /// When the last read was attempted.
    read_at: Option<Instant>,
}

impl EngineLoop {
    /// Whether `spec.desiredUpdate.acceptRisks` is allowed (the gate as read last; off when it
    /// was never read, as upstream's defaults for an unknown version).
    pub(super) fn accept_risks_gate(&self) -> bool {
        self.gates.accept_risks == Some(true)
    }

    /// Re-reads the FeatureGate when due (see the module doc). A failed read keeps the last
    /// value, so a passing API error does not flip the ClusterVersion to Invalid.
    pub(super) async fn refresh_gates(&mut self) {
        let Some(cv) = &self.cv else { return };
        let names_risks = cv
            .spec
            .desired_update
            .as_ref()
            .is_some_and(|d| !d.accept_risks.is_empty());
        if self.updates_in.is_none() && !names_risks {
            return;
        }
        let version = cv.status.desired.version.clone();
        let due =
            self.gates.version != version || self.gates.read_at.is_none_or(|t| t.elapsed() >= GATE_POLL);
        if !due {
            return;
        }
        self.gates.read_at = Some(Instant::now());
        let api: Api<FeatureGate> = Api::all(self.api.clone().into_client());
        match api.get_opt(FEATURE_GATE_NAME).await {
            Ok(fg) => {
                let on = fg.is_some_and(|fg| fg.accept_risks(&version));
                if self.gates.accept_risks != Some(on) {
                    tracing::info!(
                        "feature gate ClusterUpdateAcceptRisks is {} for {version}",
                        if on { "enabled" } else { "not enabled" }
                    );
                }
                self.gates.accept_risks = Some(on);
                self.gates.version = version;
            }
            Err(e) => tracing::debug!("reading FeatureGate {FEATURE_GATE_NAME}: {e}"),
        }
    }
}
