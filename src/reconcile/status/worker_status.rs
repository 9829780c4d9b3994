//! What the sync worker reports to the status writer (`pkg/cvo/sync_worker.go`
//! `SyncWorkerStatus`, `LoadPayloadStatus`, `statusWrapper`, `runThrottledStatusNotifier`,
//! `equalDigest`), as plain data and pure rules.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::openshift::{ClusterVersionCapabilitiesStatus, Release};
use crate::reconcile::errors::SyncError;

/// The outcome of loading the desired payload; drives the `ReleaseAccepted` condition
/// (upstream `pkg/cvo/sync_worker.go` `LoadPayloadStatus`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadPayloadStatus {
    /// The payload is loaded and accepted.
    pub success: bool,
    /// Why loading failed, if it did.
    pub failure: Option<SyncError>,
    /// `RetrievePayload`, `LoadPayload`, `VerifyPayloadVersion`, `PreconditionChecks` or
    /// `PayloadLoaded`; empty before any load was attempted.
    pub step: String,
    /// The ReleaseAccepted message, e.g. `Payload loaded version="1.0.0-abc" image="image:1"
    /// architecture="amd64"`.
    pub message: String,
    /// Bypassed problems (forced verification failure, non-blocking preconditions), `\n`-joined.
    pub accepted_risks: String,
    /// The payload is the operator's own local one (no verification, no preconditions).
    pub local: bool,
    /// The release the load was for.
    pub release: Release,
    /// The signature was verified.
    pub verified: bool,
    /// When this status was produced.
    pub last_transition_time: Option<DateTime<Utc>>,
}

impl LoadPayloadStatus {
    /// Step `RetrievePayload` in progress (ReleaseAccepted Unknown): `Retrieving and verifying
    /// payload version="{V}" image="{I}"`.
    pub fn retrieving(release: &Release, now: DateTime<Utc>) -> Self {
        Self {
            step: "RetrievePayload".into(),
            message: format!(
                "Retrieving and verifying payload version=\"{}\" image=\"{}\"",
                release.version, release.image
            ),
            release: release.clone(),
            last_transition_time: Some(now),
            ..Self::default()
        }
    }

    /// A failed step (ReleaseAccepted False) with upstream's message (`syncPayload`, test
    /// `TestCVO_UpgradeUnverifiedPayload`): `RetrievePayload` ⇒ `Retrieving payload failed
    /// version="{V}" image="{I}" failure={err}`, `LoadPayload` ⇒ `Loading payload failed …`,
    /// `VerifyPayloadVersion` ⇒ `Verifying payload failed …`, `PreconditionChecks` ⇒ `Preconditions
    /// failed for payload loaded version="{V}" image="{I}": {err}` (test
    /// `TestCVO_UpgradePreconditionFailing`). Any other step uses the `Loading` wording.
    pub fn failed(step: &str, release: &Release, failure: SyncError, now: DateTime<Utc>) -> Self {
        let (v, i) = (&release.version, &release.image);
        let message = match step {
            "RetrievePayload" => {
                format!("Retrieving payload failed version=\"{v}\" image=\"{i}\" failure={failure}")
            }
            "VerifyPayloadVersion" => {
                format!("Verifying payload failed version=\"{v}\" image=\"{i}\" failure={failure}")
            }
            "PreconditionChecks" => {
                format!("Preconditions failed for payload loaded version=\"{v}\" image=\"{i}\": {failure}")
            }
            _ => format!("Loading payload failed version=\"{v}\" image=\"{i}\" failure={failure}"),
        };
        Self {
            step: step.into(),
            message,
            failure: Some(failure),
            release: release.clone(),
            last_transition_time: Some(now),
            ..Self::default()
        }
    }

    /// Step `PayloadLoaded` (ReleaseAccepted True): `Payload loaded version="{V}" image="{I}"
    /// architecture="{arch}"`, or without the architecture part when `architecture` is empty
    /// (the reset of a stale status for the same image).
    pub fn loaded(
        release: &Release,
        architecture: &str,
        accepted_risks: &str,
        local: bool,
        verified: bool,
        now: DateTime<Utc>,
    ) -> Self {
        let mut message = format!(
            "Payload loaded version=\"{}\" image=\"{}\"",
            release.version, release.image
        );
        if !architecture.is_empty() {
            message.push_str(&format!(" architecture=\"{architecture}\""));
        }
        Self {
            success: true,
            step: "PayloadLoaded".into(),
            message,
            accepted_risks: accepted_risks.into(),
            local,
            verified,
            release: release.clone(),
            last_transition_time: Some(now),
            failure: None,
        }
    }
}

/// Capability status the worker computed (`CapabilityStatus`): the `status.capabilities` value
/// and the capabilities enabled only because they could not be disabled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CapabilitiesStatus {
    /// Enabled and known capabilities, each byte-order sorted.
    pub status: ClusterVersionCapabilitiesStatus,
    /// Capabilities implicitly enabled (any order; the condition sorts them).
    pub implicitly_enabled: Vec<String>,
}

/// The sync worker's report (upstream `SyncWorkerStatus`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SyncWorkerStatus {
    /// ClusterVersion generation the worker last accepted (0 = unknown, see [`report`]).
    pub generation: i64,
    /// The current failure of the apply, if any.
    pub failure: Option<SyncError>,
    /// Tasks applied in the current pass.
    pub done: usize,
    /// Tasks in the payload.
    pub total: usize,
    /// Consecutive complete passes (0 after any failed pass).
    pub completed: u32,
    /// The worker is reconciling (at level) rather than initializing / updating.
    pub reconciling: bool,
    /// The worker is installing the cluster (Initializing).
    pub initial: bool,
    /// `status.versionHash` of the loaded payload (FNV-1 64, base64url), empty if none.
    pub version_hash: String,
    /// Architecture of the loaded payload.
    pub architecture: String,
    /// When the worker last made progress.
    pub last_progress: Option<DateTime<Utc>>,
    /// The release being applied.
    pub actual: Release,
    /// The payload's signature was verified.
    pub verified: bool,
    /// The outcome of loading the desired payload.
    pub load_payload_status: LoadPayloadStatus,
    /// Capabilities.
    pub capabilities: CapabilitiesStatus,
}

impl SyncWorkerStatus {
    /// `done / total` as upstream computes it (`float32`), 0 when `total` is 0.
    pub fn fraction(&self) -> f32 {
        if self.total == 0 {
            0.0
        } else {
            self.done as f32 / self.total as f32
        }
    }
}

/// The status-wrapper rules (upstream `sync_worker.go` `statusWrapper.Report`) for a new report
/// `next` after the previously published `prev`. Returns the status to publish, or `None` when the
/// report is dropped:
/// - prev had a failure, next has none, same image, lower fraction ⇒ dropped;
/// - fraction up, completed up, or (no failure and image changed) ⇒ `last_progress = now`;
/// - generation 0 ⇒ keeps the previous generation;
/// - the load-payload status is carried over from `prev` (it is reported separately).
pub fn report(
    prev: &SyncWorkerStatus,
    mut next: SyncWorkerStatus,
    now: DateTime<Utc>,
) -> Option<SyncWorkerStatus> {
    next.load_payload_status = prev.load_payload_status.clone();
    let (f, pf) = (next.fraction(), prev.fraction());
    if prev.failure.is_some() && next.failure.is_none() && prev.actual.image == next.actual.image && f < pf {
        return None;
    }
    if f > pf
        || next.completed > prev.completed
        || (next.failure.is_none() && next.actual.image != prev.actual.image)
    {
        next.last_progress = Some(now);
    }
    if next.generation == 0 {
        next.generation = prev.generation;
    }
    Some(next)
}

/// Token-bucket throttle of worker-status notifications (`runThrottledStatusNotifier`,
/// test `Test_runThrottledStatusNotifier`; upstream interval 15 s, burst 2). A report on an "edge"
/// (generation, actual release, reconciling flag or presence of a failure changed) notifies at once
/// without using a token; any other report takes a token, waiting for one if the bucket is empty.
#[derive(Clone, Debug)]
pub struct StatusThrottle {
    interval: Duration,
    burst: u32,
    tokens: f64,
    refilled: Option<Instant>,
    last: Option<EdgeKey>,
}

#[derive(Clone, Debug, PartialEq)]
struct EdgeKey {
    generation: i64,
    actual: Release,
    reconciling: bool,
    failing: bool,
}

impl StatusThrottle {
    /// A full bucket of `burst` tokens refilled one per `interval`.
    pub fn new(interval: Duration, burst: u32) -> Self {
        Self {
            interval,
            burst,
            tokens: f64::from(burst),
            refilled: None,
            last: None,
        }
    }

    /// Upstream's setting: 15 s, burst 2 (upstream `pkg/cvo/cvo.go` `statusInterval`).
    pub fn upstream() -> Self {
        Self::new(Duration::from_secs(15), 2)
    }

    /// Offers a report at `now`; returns how long to wait before notifying (`Duration::ZERO` =
    /// notify now). The token is reserved, so the caller must notify after the wait.
    pub fn offer(&mut self, next: &SyncWorkerStatus, now: Instant) -> Duration {
        let key = EdgeKey {
            generation: next.generation,
            actual: next.actual.clone(),
            reconciling: next.reconciling,
            failing: next.failure.is_some(),
        };
        // Go's zero-value `last` matches an all-empty status, so the very first report
        // is an edge only if it differs from that.
        let last = self.last.clone().unwrap_or(EdgeKey {
            generation: 0,
            actual: Release::default(),
            reconciling: false,
            failing: false,
        });
        self.last = Some(key.clone());
        if key != last {
            return Duration::ZERO;
        }
        self.refill(now);
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            self.interval.mul_f64(-self.tokens)
        }
    }

    fn refill(&mut self, now: Instant) {
        if let Some(then) = self.refilled {
            let gained = now.saturating_duration_since(then).as_secs_f64() / self.interval.as_secs_f64();
            self.tokens = (self.tokens + gained).min(f64::from(self.burst));
        }
        self.refilled = Some(now);
    }
}

/// Whether two pull specs name the same image: equal strings, or both carry the same digest
/// after `@` (upstream `equalDigest`, test `Test_equalDigest`). `a@sha256:X` and `b@sha256:X` are
/// equal; a tag and a digest are not.
pub fn equal_digest(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let digest = |s: &str| -> Option<String> {
        let parts: Vec<&str> = s.splitn(3, '@').collect();
        (parts.len() == 2 && !parts[1].is_empty()).then(|| parts[1].to_string())
    };
    matches!((digest(a), digest(b)), (Some(x), Some(y)) if x == y)
}
