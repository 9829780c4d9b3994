//! Leader election on a `coordination.k8s.io/v1` Lease, so that only one active cvo writes to a
//! cluster at a time (upstream
//! `pkg/start/start.go`, which runs client-go `tools/leaderelection` with a Lease lock).
//!
//! Upstream's CVO campaigns for the Lease `openshift-cluster-version/version`
//! ([`CVO_LEASE_NAMESPACE`], [`CVO_LEASE_NAME`]) with the identity `{hostname}_{uuid}`
//! ([`default_identity`]) and the timings [`LeaseTimings::HA`] (137 s / 107 s / 26 s) or, on a
//! single-replica control plane, [`LeaseTimings::SNO`] (270 s / 240 s / 60 s).
//!
//! The semantics follow client-go's `leaderelection` package:
//!
//! - **acquire**: every retry period (jittered by up to 1.2× like client-go's `JitterUntil`) the
//!   candidate reads the Lease; it takes it when the Lease is absent (create), has no holder
//!   (released) or has expired (`renewTime + leaseDurationSeconds < now`, the holder's advertised
//!   duration). Taking it sets `holderIdentity`, `acquireTime`, `renewTime` (MicroTime) and
//!   `leaseDurationSeconds`, and increments `leaseTransitions` when the holder changes. The write
//!   is an update carrying the `resourceVersion` that was read, so of two candidates racing for an
//!   expired Lease exactly one wins; the other gets `409 Conflict` and keeps waiting.
//! - **renew**: the leader rewrites `renewTime` every retry period. Each renewal updates the
//!   object returned by the previous write, so *any* other write to the Lease in between (another
//!   candidate taking it, someone editing it) makes the renewal fail with `409 Conflict`, and the
//!   leader reports [`LeaderState::Lost`] at once; so does a deleted Lease (`404`). Other errors
//!   are retried every retry period until the renew deadline, counted from the start of the last
//!   successful renewal, has passed; then the lease is lost too. Because the renew deadline is
//!   shorter than the lease duration, a leader stops before anyone else may take over.
//! - **release**: stopping the elector through [`LeaderHandle::release`] (or dropping the handle)
//!   clears `holderIdentity` and sets `leaseDurationSeconds` to 1, as client-go's
//!   `ReleaseOnCancel` does, so a waiting candidate takes over on its next retry instead of after
//!   the lease expires.
//!
//! A lost lease ends the elector (upstream's CVO then shuts down); start a new
//! [`LeaderElector`] to campaign again.
//!
//! The engine reads the [`LeaderState`] channel and writes only while it is
//! [`LeaderState::Leading`]; every change away from `Leading` is published before anything else
//! happens, so the engine stops writing as soon as it sees the flip.
//!
//! Why our own elector rather than a crate: `kube-leader-election` 0.44 requires kube 4;
//! `kube-lease-manager` 0.13 fits kube 5 but takes its lock through server-side apply field
//! ownership rather than `resourceVersion` preconditions, counts its duration and grace period in
//! whole seconds (so neither client-go's three timings nor sub-second test timings can be
//! expressed), and reports only "locked or not", not who holds the lease.
//!
//! Clock skew: expiry is judged from the holder's `renewTime` against the local clock, so
//! candidates must agree on the time to within `lease_duration - renew_deadline` (30 s with the
//! HA timings).

use std::{
    hash::{BuildHasher, Hasher},
    time::Duration,
};

use chrono::{DateTime, Utc};
use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::Timestamp,
};
use kube::{Api, Client, api::PostParams};

use crate::reconcile::api::LeaseInfo;
use tokio::{
    sync::{oneshot, watch},
    task::JoinHandle,
    time::Instant,
};

/// Namespace of the CVO's Lease (upstream `pkg/start/start.go`: the CVO namespace).
pub(crate) const CVO_LEASE_NAMESPACE: &str = "openshift-cluster-version";
/// Name of the CVO's Lease (upstream: the ClusterVersion name, `version`).
pub(crate) const CVO_LEASE_NAME: &str = "version";

/// client-go's jitter factor: the acquire loop waits `retry_period · (1 + 1.2·rand)`, and the
/// renew deadline must exceed `1.2 · retry_period`.
const JITTER_FACTOR: f64 = 1.2;

/// Errors of leader election.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// The timings break client-go's invariants (message says which). Not retryable: fix the
    /// configuration.
    #[error("invalid leader election timings: {0}")]
    InvalidTimings(String),
    /// Empty Lease namespace, name or identity. Not retryable.
    #[error("invalid leader election config: {0} must not be empty")]
    InvalidConfig(&'static str),
    /// Leadership was lost (renew conflict, deleted Lease, renew deadline passed). The elector
    /// has ended; campaigning again needs a new [`LeaderElector`].
    #[error("lost the lease {lease}: {reason}")]
    Lost {
        /// `namespace/name` of the Lease.
        lease: String,
        /// Why, in one line.
        reason: String,
    },
    /// Clearing the holder on release failed; the Lease expires on its own after
    /// `leaseDurationSeconds`.
    #[error("releasing the lease {lease}: {source}")]
    Release {
        /// `namespace/name` of the Lease.
        lease: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The elector task was aborted or panicked.
    #[error("leader election task ended abnormally: {0}")]
    Task(String),
}

/// The three leader election durations of client-go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseTimings {
    /// How long a Lease stays valid after its last renewal (`leaseDurationSeconds`); a whole
    /// number of seconds, at least 1 s, because the Lease field is an integer.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a failing renewal before it gives the lease up;
    /// shorter than `lease_duration`.
    pub renew_deadline: Duration,
    /// Interval between acquire attempts and between renewals.
    pub retry_period: Duration,
}

impl LeaseTimings {
    /// Upstream's timings for a highly available control plane: 137 s / 107 s / 26 s
    /// (upstream `pkg/start/start.go`).
    pub const HA: Self = Self {
        lease_duration: Duration::from_secs(137),
        renew_deadline: Duration::from_secs(107),
        retry_period: Duration::from_secs(26),
    };

    /// Upstream's timings for a single-replica control plane (infrastructure
    /// `controlPlaneTopology: SingleReplica`): 270 s / 240 s / 60 s.
    pub const SNO: Self = Self {
        lease_duration: Duration::from_secs(270),
        renew_deadline: Duration::from_secs(240),
        retry_period: Duration::from_secs(60),
    };

    /// Validated timings.
    ///
    /// # Errors
    /// [`LeaderError::InvalidTimings`] when [`validate`](Self::validate) fails.
    pub fn new(
        lease_duration: Duration,
        renew_deadline: Duration,
        retry_period: Duration,
    ) -> Result<Self, LeaderError> {
        let t = Self {
            lease_duration,
            renew_deadline,
            retry_period,
        };
        t.validate()?;
        Ok(t)
    }

    /// The upstream timings for the control plane topology: [`SNO`](Self::SNO) when
    /// `single_replica`, else [`HA`](Self::HA).
    pub fn for_topology(single_replica: bool) -> Self {
        if single_replica { Self::SNO } else { Self::HA }
    }

    /// Checks client-go's invariants (`NewLeaderElector`): all durations positive,
    /// `lease_duration > renew_deadline > 1.2 · retry_period`, plus ours: `lease_duration` is a
    /// whole number of seconds that fits `leaseDurationSeconds` (i32).
    ///
    /// # Errors
    /// [`LeaderError::InvalidTimings`] naming the broken rule and the values.
    pub(crate) fn validate(&self) -> Result<(), LeaderError> {
        let bad = |m: String| Err(LeaderError::InvalidTimings(m));
        let Self {
            lease_duration: lease,
            renew_deadline: renew,
            retry_period: retry,
        } = *self;
        if retry.is_zero() || renew.is_zero() {
            return bad(format!(
                "renew deadline ({renew:?}) and retry period ({retry:?}) must be > 0"
            ));
        }
        if lease.subsec_nanos() != 0 || lease.as_secs() == 0 || i32::try_from(lease.as_secs()).is_err() {
            return bad(format!(
                "lease duration ({lease:?}) must be a whole number of seconds >= 1s \
                 (Lease spec.leaseDurationSeconds is an integer)"
            ));
        }
        if lease <= renew {
            return bad(format!(
                "lease duration ({lease:?}) must be greater than renew deadline ({renew:?})"
            ));
        }
        if renew.as_secs_f64() <= JITTER_FACTOR * retry.as_secs_f64() {
            return bad(format!(
                "renew deadline ({renew:?}) must be greater than {JITTER_FACTOR} x retry period ({retry:?})"
            ));
        }
        Ok(())
    }

    fn lease_duration_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }
}

/// Which Lease to campaign for, as whom, and how fast.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseConfig {
    /// Namespace of the Lease (upstream: [`CVO_LEASE_NAMESPACE`]).
    pub namespace: String,
    /// Name of the Lease (upstream: [`CVO_LEASE_NAME`]).
    pub name: String,
    /// This candidate's `holderIdentity`; unique per process (see [`default_identity`]).
    pub identity: String,
    /// Durations.
    pub timings: LeaseTimings,
}

impl LeaseConfig {
    /// The upstream CVO's Lease `openshift-cluster-version/version` with these identity and
    /// timings.
    pub fn cvo(identity: impl Into<String>, timings: LeaseTimings) -> Self {
        Self {
            namespace: CVO_LEASE_NAMESPACE.to_owned(),
            name: CVO_LEASE_NAME.to_owned(),
            identity: identity.into(),
            timings,
        }
    }

    /// `namespace/name`.
    pub(crate) fn lease_ref(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// Upstream's identity: `{hostname}_{random v4 uuid}` (`pkg/start/start.go`); `cvo` stands in
/// for an unreadable hostname.
pub fn default_identity() -> String {
    let host = hostname::get()
        .ok()
        .map(|h| h.to_string_lossy().into_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "cvo".to_owned());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// Where this candidate stands; published on the elector's `watch` channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaderState {
    /// Not leading; trying every retry period.
    Acquiring {
        /// Identity holding a valid lease at the last read (`None`: free, or not read yet).
        holder: Option<String>,
        /// When this elector started campaigning.
        since: DateTime<Utc>,
        /// The last failed attempt's error (read or write), cleared by the next good read.
        error: Option<String>,
    },
    /// Holding the lease: the only state in which the engine may write.
    Leading {
        /// When this elector acquired the lease (the Lease's `acquireTime`).
        since: DateTime<Utc>,
    },
    /// Leadership was lost (terminal; the reason is one line).
    Lost {
        /// Why: renew conflict, deleted Lease or renew deadline passed.
        reason: String,
    },
    /// Stopped through its handle (terminal); if it was leading, the holder was cleared.
    Released,
}

impl LeaderState {
    /// Whether the engine may write.
    pub fn is_leading(&self) -> bool {
        matches!(self, Self::Leading { .. })
    }
}

impl std::fmt::Display for LeaderState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Acquiring { holder: Some(h), .. } => write!(f, "waiting for the lease held by {h}"),
            Self::Acquiring { error: Some(e), .. } => write!(f, "waiting for the lease: {e}"),
            Self::Acquiring { .. } => f.write_str("acquiring the lease"),
            Self::Leading { since } => write!(f, "leading since {}", since.to_rfc3339()),
            Self::Lost { reason } => write!(f, "lost the lease: {reason}"),
            Self::Released => f.write_str("released the lease"),
        }
    }
}

/// A candidate for one Lease. Build with [`new`](Self::new), run with [`spawn`](Self::spawn).
pub struct LeaderElector {
    api: Api<Lease>,
    config: LeaseConfig,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("config", &self.config)
            .finish()
    }
}

impl LeaderElector {
    /// A candidate for `config.namespace/config.name` talking through `client`.
    ///
    /// # Errors
    /// [`LeaderError::InvalidConfig`] for an empty namespace, name or identity;
    /// [`LeaderError::InvalidTimings`] (see [`LeaseTimings::validate`]).
    pub fn new(client: Client, config: LeaseConfig) -> Result<Self, LeaderError> {
        for (field, v) in [
            ("lease namespace", &config.namespace),
            ("lease name", &config.name),
            ("identity", &config.identity),
        ] {
            if v.is_empty() {
                return Err(LeaderError::InvalidConfig(field));
            }
        }
        config.timings.validate()?;
        Ok(Self {
            api: Api::namespaced(client, &config.namespace),
            config,
        })
    }

    /// This candidate's identity.
    pub fn identity(&self) -> &str {
        &self.config.identity
    }

    /// Starts campaigning on a tokio task. Returns the state channel (first value
    /// [`LeaderState::Acquiring`]) and the handle that stops it; dropping the handle stops
    /// the elector and releases the lease like [`LeaderHandle::release`].
    #[must_use = "dropping the handle stops the elector"]
    pub fn spawn(self) -> (watch::Receiver<LeaderState>, LeaderHandle) {
        let (tx, rx) = watch::channel(LeaderState::Acquiring {
            holder: None,
            since: Utc::now(),
            error: None,
        });
        let (stop_tx, stop_rx) = oneshot::channel();
        let runner = Runner {
            api: self.api,
            config: self.config,
            tx,
            stop: stop_rx,
        };
        let task = tokio::spawn(runner.run());
        (
            rx,
            LeaderHandle {
                stop: Some(stop_tx),
                task,
            },
        )
    }
}

/// Stops a spawned [`LeaderElector`].
#[derive(Debug)]
pub struct LeaderHandle {
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), LeaderError>>,
}

impl LeaderHandle {
    /// Stops the elector: if it leads, it publishes [`LeaderState::Released`] and then clears
    /// the Lease's holder so another candidate takes over at once. Stop writing before calling
    /// this. Returns when the elector has ended.
    ///
    /// # Errors
    /// [`LeaderError::Release`] when the clearing write failed; [`LeaderError::Lost`] when the
    /// lease had already been lost; [`LeaderError::Task`] when the task was aborted.
    pub async fn release(mut self) -> Result<(), LeaderError> {
        if let Some(stop) = self.stop.take() {
            // An error means the task has already ended; its result says how.
            let _ = stop.send(());
        }
        (&mut self.task)
            .await
            .map_err(|e| LeaderError::Task(e.to_string()))?
    }

    /// Waits for the elector to end on its own (it only does so when the lease is lost).
    ///
    /// # Errors
    /// As [`release`](Self::release).
    pub async fn join(mut self) -> Result<(), LeaderError> {
        (&mut self.task)
            .await
            .map_err(|e| LeaderError::Task(e.to_string()))?
    }

    /// Kills the elector without releasing, as a crash would: the Lease stays held until it
    /// expires. The state channel keeps its last value.
    pub fn abort(&self) {
        self.task.abort();
    }

    /// Whether the elector has ended.
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

/// The outcome of one acquire attempt.
enum Attempt {
    /// We hold it now (the object as written).
    Acquired(Box<Lease>),
    /// Someone else holds a valid lease (`None`: we lost a race and do not know to whom yet).
    Held(Option<String>),
}

struct Runner {
    api: Api<Lease>,
    config: LeaseConfig,
    tx: watch::Sender<LeaderState>,
    stop: oneshot::Receiver<()>,
}

impl Runner {
    fn publish(&self, state: LeaderState) {
        self.tx.send_if_modified(|s| {
            if *s == state {
                false
            } else {
                tracing::info!(lease = %self.config.lease_ref(), identity = %self.config.identity, "{state}");
                *s = state;
                true
            }
        });
    }

    /// Sleeps until `at`; true when a stop was requested (or the handle dropped) meanwhile.
    async fn stopped_before(&mut self, at: Instant) -> bool {
        tokio::select! {
            _ = &mut self.stop => true,
            () = tokio::time::sleep_until(at) => false,
        }
    }

    async fn run(mut self) -> Result<(), LeaderError> {
        let t = self.config.timings;
        let since = match &*self.tx.borrow() {
            LeaderState::Acquiring { since, .. } => *since,
            _ => Utc::now(),
        };
        let mut holder = None;
        let (mut lease, mut last_ok) = loop {
            let started = Instant::now();
            let error = match tokio::time::timeout(t.lease_duration, self.try_acquire()).await {
                Ok(Ok(Attempt::Acquired(lease))) => break (*lease, started),
                Ok(Ok(Attempt::Held(h))) => {
                    holder = h;
                    None
                }
                Ok(Err(e)) => Some(describe(&e)),
                Err(_) => Some(format!("no answer within {:?}", t.lease_duration)),
            };
            self.publish(LeaderState::Acquiring {
                holder: holder.clone(),
                since,
                error,
            });
            let wait = t.retry_period.mul_f64(1.0 + JITTER_FACTOR * jitter());
            if self.stopped_before(Instant::now() + wait).await {
                self.publish(LeaderState::Released);
                return Ok(());
            }
        };
        let acquired = lease
            .spec
            .as_ref()
            .and_then(|s| s.acquire_time.as_ref())
            .map_or_else(Utc::now, micro_to_chrono);
        self.publish(LeaderState::Leading { since: acquired });

        let mut next = last_ok + t.retry_period;
        let mut last_error = String::new();
        loop {
            let deadline = last_ok + t.renew_deadline;
            if self.stopped_before(next.min(deadline)).await {
                return self.release(lease).await;
            }
            let started = Instant::now();
            if started >= deadline {
                return self.lost(format!(
                    "not renewed within the renew deadline {:?}: {last_error}",
                    t.renew_deadline
                ));
            }
            match tokio::time::timeout_at(deadline, self.renew(&lease)).await {
                Ok(Ok(renewed)) => {
                    lease = renewed;
                    last_ok = started;
                    next = started + t.retry_period;
                }
                Ok(Err(kube::Error::Api(s))) if s.is_conflict() => {
                    return self.lost(format!("changed by another writer (409 Conflict: {})", s.message));
                }
                Ok(Err(kube::Error::Api(s))) if s.is_not_found() => {
                    return self.lost(format!("deleted (404 NotFound: {})", s.message));
                }
                Ok(Err(e)) => {
                    tracing::warn!(lease = %self.config.lease_ref(), "renewing the lease failed: {e}");
                    last_error = describe(&e);
                    next = Instant::now() + t.retry_period;
                }
                Err(_) => {
                    return self.lost(format!(
                        "not renewed within the renew deadline {:?} (request timed out)",
                        t.renew_deadline
                    ));
                }
            }
        }
    }

    fn lost(&self, reason: String) -> Result<(), LeaderError> {
        self.publish(LeaderState::Lost {
            reason: reason.clone(),
        });
        Err(LeaderError::Lost {
            lease: self.config.lease_ref(),
            reason,
        })
    }

    /// One client-go `tryAcquireOrRenew` for a candidate that does not lead yet.
    #[tracing::instrument(level = "debug", skip_all, fields(identity = %self.config.identity))]
    async fn try_acquire(&self) -> Result<Attempt, kube::Error> {
        let now = now_micro();
        let me = &self.config.identity;
        let Some(mut lease) = self.api.get_opt(&self.config.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.name.clone()),
                    namespace: Some(self.config.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(me.clone()),
                    lease_duration_seconds: Some(self.config.timings.lease_duration_seconds()),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(l) => Ok(Attempt::Acquired(Box::new(l))),
                Err(kube::Error::Api(s)) if s.is_already_exists() || s.is_conflict() => {
                    Ok(Attempt::Held(None))
                }
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        let mine = spec.holder_identity.as_deref() == Some(me.as_str());
        if !mine && let Some(h) = valid_holder(spec, now.0) {
            return Ok(Attempt::Held(Some(h.to_owned())));
        }
        if !mine {
            spec.acquire_time = Some(now.clone());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
        spec.holder_identity = Some(me.clone());
        spec.lease_duration_seconds = Some(self.config.timings.lease_duration_seconds());
        spec.renew_time = Some(now);
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(l) => Ok(Attempt::Acquired(Box::new(l))),
            Err(kube::Error::Api(s)) if s.is_conflict() => Ok(Attempt::Held(None)),
            Err(e) => Err(e),
        }
    }

    /// Rewrites `renewTime` on the Lease as we last wrote it (its resourceVersion included).
    #[tracing::instrument(level = "debug", skip_all, fields(identity = %self.config.identity))]
    async fn renew(&self, lease: &Lease) -> Result<Lease, kube::Error> {
        let mut l = lease.clone();
        let spec = l.spec.get_or_insert_with(LeaseSpec::default);
        spec.renew_time = Some(now_micro());
        spec.lease_duration_seconds = Some(self.config.timings.lease_duration_seconds());
        self.api
            .replace(&self.config.name, &PostParams::default(), &l)
            .await
    }

    /// client-go's `release`: holder cleared, `leaseDurationSeconds` 1, both times now,
    /// `leaseTransitions` kept. On a conflict, re-reads and retries while the Lease still names
    /// us (someone else's write that kept our holder).
    async fn release(&self, mut lease: Lease) -> Result<(), LeaderError> {
        self.publish(LeaderState::Released);
        let t = self.config.timings;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let now = now_micro();
            let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
            spec.holder_identity = None;
            spec.lease_duration_seconds = Some(1);
            spec.acquire_time = Some(now.clone());
            spec.renew_time = Some(now);
            let pp = PostParams::default();
            let put = self.api.replace(&self.config.name, &pp, &lease);
            let err = match tokio::time::timeout(t.renew_deadline, put).await {
                Ok(Ok(_)) => return Ok(()),
                Ok(Err(kube::Error::Api(s))) if s.is_not_found() => return Ok(()),
                Ok(Err(kube::Error::Api(s))) if s.is_conflict() && attempts < 3 => {
                    match self.api.get_opt(&self.config.name).await {
                        Ok(Some(fresh))
                            if fresh.spec.as_ref().and_then(|s| s.holder_identity.as_deref())
                                == Some(self.config.identity.as_str()) =>
                        {
                            lease = fresh;
                            continue;
                        }
                        // Gone or held by someone else: nothing left to release.
                        Ok(_) => return Ok(()),
                        Err(e) => e,
                    }
                }
                Ok(Err(e)) => e,
                Err(_) => kube::Error::Service(
                    format!("no answer within the renew deadline {:?}", t.renew_deadline).into(),
                ),
            };
            return Err(LeaderError::Release {
                lease: self.config.lease_ref(),
                source: err,
            });
        }
    }
}

/// Reads the Lease of `config` once (one GET, no write) and says who holds it and whether that
/// holder looks alive now, as [`LeaseInfo`]: an absent Lease is free; a read error is kept in
/// [`LeaseInfo::error`] (one line).
pub async fn read_lease(client: &Client, config: &LeaseConfig) -> LeaseInfo {
    let api: Api<Lease> = Api::namespaced(client.clone(), &config.namespace);
    match api.get_opt(&config.name).await {
        Ok(l) => lease_info_of(config, l.as_ref(), Utc::now()),
        Err(e) => LeaseInfo {
            lease: config.lease_ref(),
            read_at: Some(Utc::now()),
            error: Some(describe(&e)),
            ..LeaseInfo::default()
        },
    }
}

/// The Lease of `config` as read (`None`: absent, so free) at `read_at`, as [`LeaseInfo`]: its
/// holder, whether that is this candidate, its renew time and duration, and whether the holder
/// looks alive now (client-go's expiry rule, [`valid_holder`]).
pub(crate) fn lease_info_of(
    config: &LeaseConfig,
    lease: Option<&Lease>,
    read_at: DateTime<Utc>,
) -> LeaseInfo {
    let mut info = LeaseInfo {
        lease: config.lease_ref(),
        read_at: Some(read_at),
        ..LeaseInfo::default()
    };
    let Some(spec) = lease.and_then(|l| l.spec.as_ref()) else {
        return info;
    };
    info.alive = valid_holder(spec, Timestamp::now()).is_some();
    info.holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
    info.ours = info.holder.as_deref() == Some(config.identity.as_str());
    info.renew_time = spec
        .renew_time
        .as_ref()
        .or(spec.acquire_time.as_ref())
        .map(micro_to_chrono);
    info.duration_seconds = spec.lease_duration_seconds;
    info
}

/// The holder of a still valid lease at `now`: a non-empty `holderIdentity` whose
/// `renewTime` (else `acquireTime`) plus `leaseDurationSeconds` is not before `now`. A holder
/// without either time, or without a duration, is treated as expired.
fn valid_holder(spec: &LeaseSpec, now: Timestamp) -> Option<&str> {
    let holder = spec.holder_identity.as_deref().filter(|h| !h.is_empty())?;
    let last = spec.renew_time.as_ref().or(spec.acquire_time.as_ref())?;
    let secs = i64::from(spec.lease_duration_seconds?);
    let expires_ms = last.0.as_millisecond().saturating_add(secs.saturating_mul(1000));
    (now.as_millisecond() <= expires_ms).then_some(holder)
}

/// One line for an API error: `{code} {reason}: {message}` for a Status, else kube's text.
fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} {}: {}", s.code, s.reason, s.message),
        e => e.to_string(),
    }
}

/// Now, at the microsecond precision a MicroTime keeps on the wire.
fn now_micro() -> MicroTime {
    let now = Timestamp::now();
    MicroTime(Timestamp::from_microsecond(now.as_microsecond()).unwrap_or(now))
}

fn micro_to_chrono(t: &MicroTime) -> DateTime<Utc> {
    let nanos = u32::try_from(t.0.subsec_nanosecond()).unwrap_or(0);
    DateTime::from_timestamp(t.0.as_second(), nanos).unwrap_or_default()
}

/// A number in [0, 1) for jitter; not for anything that needs real randomness.
fn jitter() -> f64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn upstream_timings_are_valid() {
        assert!(LeaseTimings::HA.validate().is_ok());
        assert!(LeaseTimings::SNO.validate().is_ok());
        assert_eq!(
            LeaseTimings::for_topology(true).lease_duration,
            Duration::from_secs(270)
        );
        assert_eq!(
            LeaseTimings::for_topology(false).retry_period,
            Duration::from_secs(26)
        );
        assert_eq!(LeaseTimings::HA.lease_duration_seconds(), 137);
    }

    #[test]
    fn timings_break_client_go_rules() {
        let err = |l, r, p| {
            LeaseTimings::new(l, r, p)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(LeaseTimings::new(ms(1000), ms(800), ms(200)).is_ok());
        assert!(err(ms(1000), ms(1000), ms(200)).contains("greater than renew deadline"));
        assert!(err(ms(1000), ms(200), ms(200)).contains("1.2 x retry period"));
        assert!(err(ms(1500), ms(800), ms(200)).contains("whole number of seconds"));
        assert!(err(ms(0), ms(0), ms(0)).contains("must be > 0"));
        assert!(err(ms(1000), ms(800), ms(0)).contains("must be > 0"));
    }

    #[cfg(feature = "sim")]
    #[tokio::test]
    async fn config_rejects_empty_fields() {
        let client = || Client::new(crate::sim::Simulator::new(), "default");
        let mut cfg = LeaseConfig::cvo("me", LeaseTimings::HA);
        assert_eq!(cfg.lease_ref(), "openshift-cluster-version/version");
        assert!(LeaderElector::new(client(), cfg.clone()).is_ok());
        cfg.identity.clear();
        let e = LeaderElector::new(client(), cfg).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("invalid leader election config: identity must not be empty")
        );
    }

    fn at(s: &str) -> MicroTime {
        MicroTime(s.parse().expect("timestamp"))
    }

    #[test]
    fn validity_uses_renew_time_and_advertised_duration() {
        let spec = LeaseSpec {
            holder_identity: Some("a".into()),
            lease_duration_seconds: Some(137),
            acquire_time: Some(at("2026-01-01T00:00:00Z")),
            renew_time: Some(at("2026-01-01T00:01:00Z")),
            ..LeaseSpec::default()
        };
        let t = |s: &str| at(s).0;
        assert_eq!(valid_holder(&spec, t("2026-01-01T00:03:17Z")), Some("a"));
        assert_eq!(valid_holder(&spec, t("2026-01-01T00:03:17.001Z")), None);
        let released = LeaseSpec {
            holder_identity: None,
            ..spec.clone()
        };
        assert_eq!(valid_holder(&released, t("2026-01-01T00:01:00Z")), None);
        let empty = LeaseSpec {
            holder_identity: Some(String::new()),
            ..spec.clone()
        };
        assert_eq!(valid_holder(&empty, t("2026-01-01T00:01:00Z")), None);
        let no_renew = LeaseSpec {
            renew_time: None,
            ..spec.clone()
        };
        assert_eq!(valid_holder(&no_renew, t("2026-01-01T00:02:17Z")), Some("a"));
        assert_eq!(valid_holder(&no_renew, t("2026-01-01T00:02:18Z")), None);
        let no_times = LeaseSpec {
            renew_time: None,
            acquire_time: None,
            ..spec
        };
        assert_eq!(valid_holder(&no_times, t("2026-01-01T00:00:00Z")), None);
    }

    #[test]
    fn identity_is_hostname_underscore_uuid() {
        let id = default_identity();
        let (host, uuid) = id.rsplit_once('_').expect("underscore");
        assert!(!host.is_empty());
        assert_eq!(uuid.len(), 36, "{id}");
        assert_ne!(default_identity(), id);
    }

    #[test]
    fn jitter_is_a_fraction() {
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }

    #[test]
    fn micro_time_round_trips_to_chrono() {
        let t = at("2026-11-30T09:43:49.123456Z");
        assert_eq!(
            micro_to_chrono(&t).to_rfc3339(),
            "2026-11-30T09:43:49.123456+00:00"
        );
        assert_eq!(now_micro().0.subsec_nanosecond() % 1000, 0);
    }
}
