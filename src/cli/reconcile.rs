//! `cvo reconcile`: run the reconcile engine against a cluster for one pass, until the release
//! is Completed, or (`--dry-run`) as watch-only to print the drift like `kubectl diff`; then a
//! summary (tasks done/total, API requests by verb, writes, time).

use std::{
    collections::BTreeMap, fmt::Write as _, future::Future, io::Write as _, path::PathBuf, sync::Arc,
    time::Duration,
};

use serde::Serialize;

use crate::l10n::{tr, trf};

use crate::reconcile::{
    Engine, EngineConfig, EngineTimings,
    api::{Drift, DriftRecord, EngineMode, EngineState, StatusSnapshot},
};

/// When `cvo reconcile` stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Until {
    /// After exactly one whole apply pass (the default; `--dry-run` always stops here).
    Once,
    /// When the ClusterVersion says the release is Completed (exit 0) or Failing (exit 1).
    Complete,
}

/// Exit codes of `cvo reconcile`, one per way a run ends (docs/commands.md and `--help` list them).
pub mod exit {
    /// The pass finished without failure (`--once`, `--dry-run`) or the release is Completed
    /// (`--until-complete`).
    pub const DONE: u8 = 0;
    /// The pass failed, or the ClusterVersion says Failing; also any error before the run
    /// (kubeconfig, payload directory).
    pub const FAILING: u8 = 1;
    /// Bad flags or flag values.
    pub const USAGE: u8 = 2;
    /// The timeout passed first; stderr says what the run was still waiting for.
    pub const TIMEOUT: u8 = 3;
    /// The API server cannot be reached (at start, or for [`super::UNREACHABLE_GRACE`] during
    /// the run).
    pub const UNREACHABLE: u8 = 4;
    /// The payload cannot be retrieved, loaded, verified or accepted.
    pub const PAYLOAD: u8 = 5;
    /// Another cvo holds the CVO Lease; stderr names it and until when.
    pub const LEASE_HELD: u8 = 6;
    /// Stopped by SIGINT (128 + 2), after releasing the Lease and printing the summary.
    pub const SIGINT: u8 = crate::signals::StopSignal::Interrupt.exit_code();
    /// Stopped by SIGTERM (128 + 15), after releasing the Lease and printing the summary.
    pub const SIGTERM: u8 = crate::signals::StopSignal::Terminate.exit_code();
}

/// Default `--timeout` of `--once` and `--dry-run`: 2 minutes.
pub const DEFAULT_ONCE_TIMEOUT: Duration = Duration::from_secs(120);
/// Default `--timeout` of `--until-complete`: 2 hours, longer than the 90 minutes upstream
/// allows machine-config before it calls an update slow.
pub const DEFAULT_UNTIL_COMPLETE_TIMEOUT: Duration = Duration::from_secs(2 * 60 * 60);
/// How long the API server may stay unreachable during a run before it ends with
/// [`exit::UNREACHABLE`].
pub const UNREACHABLE_GRACE: Duration = Duration::from_secs(30);
/// How long one reachability probe (`GET /version`) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Options of `cvo reconcile`.
#[derive(Clone, Debug)]
pub struct ReconcileOptions {
    /// The payload directory (`manifests/` + `release-manifests/`).
    pub payload: PathBuf,
    /// Pull spec of the payload's release image; default the `file://` pseudo pull spec of
    /// the directory ([`crate::reconcile::api::LocalPayloads::pseudo_pull_spec`]).
    pub release_image: Option<String>,
    /// Watch-only: print the drift, write nothing.
    pub dry_run: bool,
    /// When to stop.
    pub until: Until,
    /// Give up after this long ([`exit::TIMEOUT`]); `None`: [`DEFAULT_ONCE_TIMEOUT`] or
    /// [`DEFAULT_UNTIL_COMPLETE_TIMEOUT`].
    pub timeout: Option<Duration>,
    /// Engine intervals.
    pub timings: EngineTimings,
    /// Take the CVO Lease `openshift-cluster-version/version` (upstream HA timings) before
    /// writing; `cvo reconcile` does.
    pub lease: bool,
}

impl ReconcileOptions {
    /// The timeout in force: `--timeout`, else the mode's default.
    pub fn effective_timeout(&self) -> Duration {
        self.timeout
            .unwrap_or(if self.until == Until::Complete && !self.dry_run {
                DEFAULT_UNTIL_COMPLETE_TIMEOUT
            } else {
                DEFAULT_ONCE_TIMEOUT
            })
    }
}

/// A signal that stops the run: its name and exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// `SIGINT` or `SIGTERM`.
    pub signal: &'static str,
    /// [`exit::SIGINT`] or [`exit::SIGTERM`].
    pub exit_code: u8,
}

/// What else drives a run besides its options: a stop signal and where progress goes.
pub struct RunControl {
    /// Resolves when the run must stop (SIGINT / SIGTERM): the engine releases the Lease and
    /// the summary is printed.
    pub stop: std::pin::Pin<Box<dyn Future<Output = Stop> + Send>>,
    /// Progress lines while the run waits (`cvo: waiting for ...`), e.g. stderr.
    pub progress: Box<dyn std::io::Write + Send>,
    /// Interval between progress lines (the first comes after half of it); also how often a
    /// failing engine has the API server probed.
    pub progress_every: Duration,
    /// How long the API server may stay unreachable during the run before it ends with
    /// [`exit::UNREACHABLE`] ([`UNREACHABLE_GRACE`] by default).
    pub unreachable_grace: Duration,
}

impl std::fmt::Debug for RunControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunControl")
            .field("progress_every", &self.progress_every)
            .field("unreachable_grace", &self.unreachable_grace)
            .finish_non_exhaustive()
    }
}

impl Default for RunControl {
    /// Never stopped by a signal, progress every 5 s on stderr, [`UNREACHABLE_GRACE`].
    fn default() -> Self {
        Self {
            stop: Box::pin(std::future::pending()),
            progress: Box::new(std::io::stderr()),
            progress_every: Duration::from_secs(5),
            unreachable_grace: UNREACHABLE_GRACE,
        }
    }
}

/// What `cvo reconcile` reports.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReconcileSummary {
    /// `complete`, `failing`, `pass-done`, `timeout`, `unreachable`, `payload-error`,
    /// `lease-held`, `interrupted` or `error`.
    pub outcome: String,
    /// Process exit code (see [`exit`]).
    pub exit_code: u8,
    /// Release version applied (`<not loaded>` when no payload was loaded).
    pub version: String,
    /// Release image (pull spec or `file://` pseudo pull spec).
    pub image: String,
    /// Watch-only.
    pub dry_run: bool,
    /// Tasks applied in the last pass.
    pub done: usize,
    /// Tasks in the payload.
    pub total: usize,
    /// Whole apply passes run.
    pub passes: u64,
    /// API requests by verb.
    pub requests: BTreeMap<String, u64>,
    /// Write requests sent (create, update, patch, delete).
    pub writes: u64,
    /// ClusterVersion status writes among them.
    pub status_writes: u64,
    /// CVO Lease writes among them (the take and renewals; the release at exit comes after
    /// the summary).
    pub lease_writes: u64,
    /// Writes of the payload's objects among them (creates, updates, deletes the apply layer
    /// sent): 0 on a converged cluster.
    pub object_writes: u64,
    /// The rest: the ClusterVersion when created, the watch cache's verification record
    /// (ConfigMap `openshift-cluster-version/cvo-verified-manifests`).
    pub other_writes: u64,
    /// Seconds from start to stop.
    pub seconds: f64,
    /// Failing condition / worker failure, if any.
    pub failure: Option<String>,
    /// Progressing message of the ClusterVersion, if any.
    pub progressing: Option<String>,
    /// Drift records (dry-run: what would change; active: what changed in the last pass).
    pub drift: Vec<DriftRecord>,
    /// The engine loop's last error, if any.
    pub error: Option<String>,
    /// Why the run ended before it could finish (timeout, unreachable API server, payload,
    /// Lease held, signal), in one line; also printed on stderr.
    pub reason: Option<String>,
}

/// Runs the engine on `client` per `opts` and returns the summary; progress goes to stderr
/// and no signal stops it (see [`run_with`]).
///
/// # Errors
/// The payload directory cannot be resolved.
pub async fn run(client: kube::Client, opts: &ReconcileOptions) -> anyhow::Result<ReconcileSummary> {
    run_with(client, opts, RunControl::default()).await
}

/// Whether the API server answers: `GET /version` within `within` (any HTTP answer counts,
/// an error status included); `Err` is the transport error in one line.
async fn probe(client: &kube::Client, within: Duration) -> Result<(), String> {
    match tokio::time::timeout(within, client.apiserver_version()).await {
        Err(_) => Err(format!("no answer within {}", secs(within))),
        Ok(Ok(_) | Err(kube::Error::Api(_) | kube::Error::SerdeError(_))) => Ok(()),
        Ok(Err(e)) => Err(crate::informers::error_chain(&e)),
    }
}

/// What the run is waiting for, in words, from the latest snapshot.
fn waiting_for(s: &StatusSnapshot, until: Until) -> String {
    if let Some(e) = &s.last_error {
        // The engine loop's own error: reading, creating or writing the ClusterVersion.
        return trf!(
            "reconcile-wait-cv",
            "the ClusterVersion ({error})",
            error = clip(first_line(e), 200)
        );
    }
    if let Some(pull) = &s.payload_pull {
        return trf!(
            "reconcile-wait-pull",
            "the release image {image} (pulling {progress})",
            image = pull.image,
            progress = pull.describe()
        );
    }
    match &s.state {
        EngineState::Blocked(why) => return why.clone(),
        EngineState::WaitingForLease => {
            return match &s.lease_holder {
                Some(h) => trf!(
                    "reconcile-wait-lease-held",
                    "the Lease {lease}, held by {holder}",
                    lease = LEASE,
                    holder = h.to_string()
                ),
                None => trf!("reconcile-wait-lease", "the Lease {lease}", lease = LEASE),
            };
        }
        EngineState::Starting => {
            return tr!("reconcile-wait-start", "the ClusterVersion and the payload").into();
        }
        _ => {}
    }
    if s.running {
        return trf!(
            "reconcile-wait-pass",
            "pass {pass} to finish: {done}/{total} tasks done",
            pass = s.counters.passes + 1,
            done = s.done,
            total = s.total
        );
    }
    match until {
        Until::Complete if s.counters.passes >= 1 => {
            let progressing = s
                .cluster_version
                .as_ref()
                .and_then(|c| crate::openshift::condition::find(&c.conditions, "Progressing"))
                .map(|c| c.message().to_string())
                .filter(|m| !m.is_empty());
            match (progressing, &s.failure) {
                (_, Some(f)) => trf!(
                    "reconcile-wait-complete-why",
                    "the release to complete ({why})",
                    why = first_line(&f.message)
                ),
                (Some(p), None) => trf!(
                    "reconcile-wait-complete-why",
                    "the release to complete ({why})",
                    why = first_line(&p)
                ),
                (None, None) => tr!("reconcile-wait-complete", "the release to complete").into(),
            }
        }
        _ => tr!("reconcile-wait-first-pass", "the first pass to start").into(),
    }
}

/// Why `--payload` (release image `own`) is not what the engine would reconcile on this
/// cluster: no desired update is requested and the cluster runs another release. `None` when
/// the run may go on (a desired update is requested, the cluster runs `own`, or the
/// ClusterVersion `name` is absent, new or unreadable: a first install, or the engine reports
/// the read error itself).
///
/// The engine never changes a cluster's release unless `spec.desiredUpdate` asks for it (the
/// current release is [`crate::reconcile::status::upgradeable::current_release`], the one the
/// engine takes; `--payload` is only a first install's release). A run whose
/// payload the engine would not use is refused before it starts, saying what the cluster runs
/// and how to request the payload, rather than reconciling another release than the one named
/// on the command line.
async fn other_release(client: &kube::Client, name: &str, own: &str) -> Option<String> {
    let api: kube::Api<crate::openshift::ClusterVersion> = kube::Api::all(client.clone());
    let cv = api.get_opt(name).await.ok()??;
    // A desired update (by image or version) is followed whatever `--payload` is: the engine
    // retrieves that release (`cvo reconcile --payload DIR` follows a desired update by image).
    let requested = cv.spec.desired_update.as_ref().is_some_and(|d| {
        d.image.as_deref().is_some_and(|i| !i.is_empty())
            || d.version.as_deref().is_some_and(|v| !v.is_empty())
    });
    let current = crate::reconcile::status::upgradeable::current_release(&cv)?;
    if requested || current.image == own {
        return None;
    }
    let runs = if current.version.is_empty() {
        current.image.clone()
    } else {
        format!("{} ({})", current.version, current.image)
    };
    Some(format!(
        "--payload is release {own}, but the cluster runs {runs} and spec.desiredUpdate of ClusterVersion {name} does not request {own}: cvo changes a cluster's release only when spec.desiredUpdate asks for it (set spec.desiredUpdate.image to {own} to update to this payload)"
    ))
}

/// A duration in seconds with at most one decimal: `120s`, `1.5s`.
fn secs(d: Duration) -> String {
    let t = format!("{:.1}", d.as_secs_f64());
    format!("{}s", t.strip_suffix(".0").unwrap_or(&t))
}

/// `s` cut to at most `n` characters, with `...` when cut.
fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

/// `namespace/name` of the CVO Lease.
const LEASE: &str = "openshift-cluster-version/version";

/// Who holds the CVO Lease and until when, read from the Lease itself: `held by X until T (in
/// Ns)`.
async fn lease_held_reason(client: &kube::Client, holder: &str) -> String {
    use crate::reconcile::runtime::leader::{CVO_LEASE_NAME, CVO_LEASE_NAMESPACE};
    let api: kube::Api<k8s_openapi::api::coordination::v1::Lease> =
        kube::Api::namespaced(client.clone(), CVO_LEASE_NAMESPACE);
    let until = match tokio::time::timeout(PROBE_TIMEOUT, api.get_opt(CVO_LEASE_NAME)).await {
        Ok(Ok(Some(l))) => l.spec.and_then(|s| {
            let renew = s.renew_time?.0;
            let secs = i64::from(s.lease_duration_seconds?);
            let at = chrono::DateTime::<chrono::Utc>::from_timestamp(renew.as_second(), 0)?
                + chrono::Duration::seconds(secs);
            Some(at)
        }),
        _ => None,
    };
    match until {
        Some(at) => {
            let left = (at - chrono::Utc::now()).num_seconds().max(0);
            format!(
                "the CVO Lease {LEASE} is held by {holder} until {} (in {left}s); nothing was applied",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )
        }
        None => format!("the CVO Lease {LEASE} is held by {holder}; nothing was applied"),
    }
}

/// Runs the engine on `client` per `opts` until the mode's end, the timeout, an unreachable API
/// server, a payload that cannot be loaded, a Lease held by another cvo, or `ctl.stop`; prints
/// what it waits for on `ctl.progress` meanwhile. The engine is always shut down (releasing
/// the Lease) before this returns.
///
/// # Errors
/// The payload directory cannot be resolved.
pub async fn run_with(
    client: kube::Client,
    opts: &ReconcileOptions,
    ctl: RunControl,
) -> anyhow::Result<ReconcileSummary> {
    run_engine(client, opts, ctl, None, None).await
}

/// [`run_with`] with payloads from `payloads` (e.g. a registry) instead of the directory of
/// `opts.payload` when given.
///
/// # Errors
/// As [`run_with`].
pub async fn run_with_payloads(
    client: kube::Client,
    opts: &ReconcileOptions,
    ctl: RunControl,
    payloads: Option<std::sync::Arc<dyn crate::reconcile::api::PayloadResolver>>,
) -> anyhow::Result<ReconcileSummary> {
    run_engine(client, opts, ctl, payloads, None).await
}

/// [`run_with`] with the engine's update-service client configured (`cvo reconcile
/// --update-service`/`--fetch-updates`); `None` leaves the update fields of the status alone.
///
/// # Errors
/// As [`run_with`].
pub async fn run_with_updates(
    client: kube::Client,
    opts: &ReconcileOptions,
    updates: Option<crate::reconcile::UpdatesConfig>,
    ctl: RunControl,
) -> anyhow::Result<ReconcileSummary> {
    run_engine(client, opts, ctl, None, updates).await
}

/// [`run_with`] with both: payloads from `payloads` when given, and the update-service client
/// when `updates` is.
///
/// # Errors
/// As [`run_with`].
pub async fn run_engine(
    client: kube::Client,
    opts: &ReconcileOptions,
    mut ctl: RunControl,
    payloads: Option<std::sync::Arc<dyn crate::reconcile::api::PayloadResolver>>,
    updates: Option<crate::reconcile::UpdatesConfig>,
) -> anyhow::Result<ReconcileSummary> {
    let mut cfg = match payloads {
        Some(p) => {
            let mut cfg = EngineConfig::local(std::env::temp_dir(), Some(p.own_image()))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            cfg.payloads = p;
            cfg
        }
        None => EngineConfig::local(opts.payload.clone(), opts.release_image.clone())
            .map_err(|e| anyhow::anyhow!("--payload {}: {e}", opts.payload.display()))?,
    };
    cfg.update_graph = updates;
    let own_image = cfg.payloads.own_image();
    cfg.timings = opts.timings.clone();
    cfg.mode = if opts.dry_run {
        EngineMode::WatchOnly
    } else {
        EngineMode::ActiveApply
    };
    let lease = opts.lease && !opts.dry_run;
    if lease {
        cfg.lease = Some(crate::reconcile::LeaseConfig::cvo(
            crate::reconcile::default_identity(),
            crate::reconcile::LeaseTimings::HA,
        ));
    }
    let started = std::time::Instant::now();
    let timeout = opts.effective_timeout();
    let deadline = tokio::time::Instant::now() + timeout;
    let until = if opts.dry_run { Until::Once } else { opts.until };
    let not_run = |outcome: &str, code: u8, reason: String| ReconcileSummary {
        outcome: outcome.into(),
        exit_code: code,
        version: NOT_LOADED.into(),
        image: own_image.clone(),
        dry_run: opts.dry_run,
        done: 0,
        total: 0,
        passes: 0,
        requests: BTreeMap::new(),
        writes: 0,
        status_writes: 0,
        lease_writes: 0,
        object_writes: 0,
        other_writes: 0,
        seconds: started.elapsed().as_secs_f64(),
        failure: None,
        progressing: None,
        drift: Vec::new(),
        error: None,
        reason: Some(reason),
    };
    // Fail fast when the API server is down, as `cvo status` does.
    if let Err(e) = probe(&client, PROBE_TIMEOUT.min(timeout)).await {
        return Ok(not_run(
            "unreachable",
            exit::UNREACHABLE,
            format!("the API server cannot be reached: {e}"),
        ));
    }
    if let Some(why) = other_release(&client, &cfg.cluster_version_name, &own_image).await {
        return Ok(not_run("payload-error", exit::PAYLOAD, why));
    }
    let mut h = Engine::spawn(client.clone(), cfg);
    let every = ctl.progress_every.max(Duration::from_millis(100));
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every / 2, every);
    let mut unreachable_since: Option<std::time::Instant> = None;
    let (snap, outcome, code, reason) = loop {
        let s: Arc<StatusSnapshot> = h.status.borrow_and_update().clone();
        if let Some(e) = &s.payload_error {
            break (
                s.clone(),
                "payload-error",
                exit::PAYLOAD,
                Some(first_line(e).to_string()),
            );
        }
        if lease
            && s.state == EngineState::WaitingForLease
            && let Some(holder) = &s.lease_holder
        {
            let why = lease_held_reason(&client, holder).await;
            break (s.clone(), "lease-held", exit::LEASE_HELD, Some(why));
        }
        let led = !lease || s.leader;
        match until {
            Until::Once if s.counters.passes >= 1 && !s.running && led => {
                let failed = s.failure.is_some() || s.failing().is_some();
                break (s, "pass-done", u8::from(failed), None);
            }
            // Complete for the release the engine loaded (not the status a previous run left
            // while the desired update is still being pulled).
            Until::Complete if s.desired.is_some() && s.payload_pull.is_none() && s.is_completed() => {
                break (s, "complete", exit::DONE, None);
            }
            // Failing as written and as the engine sees it now (a status write may trail the
            // pass that cleared the failure).
            Until::Complete
                if s.counters.passes >= 1 && !s.running && s.failing().is_some() && s.failure.is_some() =>
            {
                break (s, "failing", exit::FAILING, None);
            }
            _ => {}
        }
        tokio::select! {
            r = h.status.changed() => {
                if r.is_err() {
                    let s = h.status.borrow().clone();
                    break (s, "error", exit::FAILING, Some("the engine stopped".into()));
                }
            }
            () = tokio::time::sleep_until(deadline) => {
                let s = h.status.borrow().clone();
                // The reason is data (`-o json` too): English in every language.
                let what = crate::l10n::scoped(crate::l10n::Lang::En, || waiting_for(&s, until));
                let (outcome, code, why) = match probe(&client, PROBE_TIMEOUT).await {
                    Err(e) => ("unreachable", exit::UNREACHABLE, format!("the API server cannot be reached: {e}")),
                    Ok(()) => ("timeout", exit::TIMEOUT, format!(
                        "timed out after {} waiting for {what}",
                        secs(timeout)
                    )),
                };
                break (s, outcome, code, Some(why));
            }
            stop = &mut ctl.stop => {
                let s = h.status.borrow().clone();
                // The reason is data (`-o json` too): English in every language.
                let what = crate::l10n::scoped(crate::l10n::Lang::En, || waiting_for(&s, until));
                let why = format!("stopped by {} while waiting for {what}", stop.signal);
                break (s, "interrupted", stop.exit_code, Some(why));
            }
            _ = tick.tick() => {
                let s = h.status.borrow().clone();
                if s.last_error.is_some() {
                    match probe(&client, PROBE_TIMEOUT).await {
                        Err(e) => {
                            let since = *unreachable_since.get_or_insert_with(std::time::Instant::now);
                            if since.elapsed() >= ctl.unreachable_grace {
                                let why = format!(
                                    "the API server has been unreachable for {}: {e}",
                                    secs(since.elapsed())
                                );
                                break (s, "unreachable", exit::UNREACHABLE, Some(why));
                            }
                        }
                        Ok(()) => unreachable_since = None,
                    }
                } else {
                    unreachable_since = None;
                }
                let _ = writeln!(
                    ctl.progress,
                    "{}",
                    trf!(
                        "reconcile-waiting",
                        "cvo: waiting for {what} ({elapsed} of {timeout})",
                        what = waiting_for(&s, until),
                        elapsed = secs(started.elapsed()),
                        timeout = secs(timeout)
                    )
                );
            }
        }
    };
    // The summary is taken above, before the Lease is released. A shutdown that cannot reach
    // the API server (to release the Lease) is cut short: the Lease then expires on its own.
    if tokio::time::timeout(Duration::from_secs(10), h.clone().shutdown())
        .await
        .is_err()
    {
        let _ = writeln!(
            ctl.progress,
            "{}",
            tr!(
                "reconcile-abort",
                "cvo: the engine did not stop within 10s; aborted it"
            )
        );
        h.abort().await;
    }
    Ok(summarize(&snap, opts, outcome, code, reason, &own_image, started))
}

/// The version shown when no payload was loaded.
const NOT_LOADED: &str = "<not loaded>";

fn summarize(
    snap: &StatusSnapshot,
    opts: &ReconcileOptions,
    outcome: &str,
    code: u8,
    reason: Option<String>,
    own_image: &str,
    started: std::time::Instant,
) -> ReconcileSummary {
    let req = snap.counters.requests.clone();
    let writes = req
        .iter()
        .filter(|(k, _)| crate::reconcile::runtime::client::is_write_verb(k))
        .map(|(_, v)| v)
        .sum();
    let cond = |t: &str| {
        snap.cluster_version
            .as_ref()
            .and_then(|c| crate::openshift::condition::find(&c.conditions, t))
            .map(|c| c.message().to_string())
    };
    let failure = snap
        .failing()
        .map(|(r, m)| if r.is_empty() { m } else { format!("{r}: {m}") })
        .or_else(|| {
            snap.failure
                .as_ref()
                .map(|f| format!("{}: {}", f.reason, f.message))
        });
    let (version, image) = match &snap.desired {
        Some(d) if !d.image.is_empty() => (
            if d.version.is_empty() {
                NOT_LOADED.to_string()
            } else {
                d.version.clone()
            },
            d.image.clone(),
        ),
        _ => (NOT_LOADED.to_string(), own_image.to_string()),
    };
    ReconcileSummary {
        outcome: outcome.into(),
        exit_code: code,
        version,
        image,
        dry_run: opts.dry_run,
        done: snap.done,
        total: snap.total,
        passes: snap.counters.passes,
        requests: req,
        writes,
        status_writes: snap.counters.status_writes,
        lease_writes: snap.counters.lease_writes,
        object_writes: snap.counters.apply_writes,
        other_writes: writes
            .saturating_sub(snap.counters.status_writes)
            .saturating_sub(snap.counters.lease_writes)
            .saturating_sub(snap.counters.apply_writes),
        seconds: started.elapsed().as_secs_f64(),
        failure,
        progressing: cond(crate::reconcile::status::PROGRESSING),
        // Masked again here (the engine masks at the source): the JSON and text never carry
        // a Secret value.
        drift: snap
            .drift
            .iter()
            .map(|d| DriftRecord {
                drift: d.drift.masked(&d.kind),
                ..d.clone()
            })
            .collect(),
        error: snap.last_error.clone(),
        reason,
    }
}

fn yaml_lines(v: &serde_json::Value) -> Vec<String> {
    serde_norway::to_string(v)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn one_line(v: Option<&serde_json::Value>) -> String {
    match v {
        None => "<absent>".into(),
        Some(v) => serde_json::to_string(v).unwrap_or_default(),
    }
}

/// The drift as `kubectl diff` would show it for a whole release: per object a `---`/`+++`
/// header, `+` lines for a creation (the object as YAML), `-`/`+` pairs for each changed field,
/// `-` for a deletion.
pub fn render_drift(drift: &[DriftRecord]) -> String {
    let mut out = String::new();
    for d in drift {
        let obj = if d.namespace.is_empty() {
            format!("{} {}", d.kind, d.name)
        } else {
            format!("{} {}/{}", d.kind, d.namespace, d.name)
        };
        match &d.drift.masked(&d.kind) {
            Drift::None => {}
            Drift::Create { object } => {
                let _ = writeln!(out, "--- {obj} (absent)\n+++ {obj} (payload)");
                for l in object.as_deref().map(yaml_lines).unwrap_or_default() {
                    let _ = writeln!(out, "+{l}");
                }
            }
            Drift::Update { diff } => {
                let _ = writeln!(out, "--- {obj} (live)\n+++ {obj} (payload)");
                for c in diff {
                    if c.from.is_some() {
                        let _ = writeln!(out, "-{}: {}", c.path, one_line(c.from.as_ref()));
                    }
                    if c.to.is_some() {
                        let _ = writeln!(out, "+{}: {}", c.path, one_line(c.to.as_ref()));
                    }
                }
            }
            Drift::Delete => {
                let _ = writeln!(out, "--- {obj} (live)\n+++ {obj} (deleted by the payload)");
            }
        }
    }
    out
}

/// The text report: the drift (dry-run), then the summary lines.
pub fn render_text(s: &ReconcileSummary) -> String {
    let mut out = String::new();
    if s.dry_run && s.outcome == "pass-done" {
        out.push_str(&render_drift(&s.drift));
        let n = s.drift.len();
        let line = if n == 1 {
            tr!(
                "reconcile-one-would-change",
                "1 object would change (watch-only: nothing was written)"
            )
            .to_string()
        } else {
            trf!(
                "reconcile-would-change",
                "{n} objects would change (watch-only: nothing was written)",
                n = n
            )
        };
        let _ = writeln!(out, "{line}");
    } else if s.dry_run {
        // No whole pass: the drift is unknown, not empty.
        let _ = writeln!(
            out,
            "{}",
            trf!(
                "reconcile-drift-unknown",
                "drift unknown: no whole pass ran ({outcome}; watch-only: nothing was written)",
                outcome = s.outcome
            )
        );
    }
    // The labels are words; the values (outcome, verbs, reasons) stay as `-o json` gives them.
    let _ = writeln!(
        out,
        "{}{} ({})",
        tr!("reconcile-release", "release: "),
        s.version,
        s.image
    );
    let _ = writeln!(out, "{}{}", tr!("reconcile-outcome", "outcome: "), s.outcome);
    let _ = writeln!(
        out,
        "{}",
        trf!(
            "reconcile-tasks",
            "tasks: {done}/{total} done, {passes} pass(es)",
            done = s.done,
            total = s.total,
            passes = s.passes
        )
    );
    let verbs: Vec<String> = s.requests.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(
        out,
        "{}{} ({})",
        tr!("reconcile-requests", "API requests: "),
        s.requests.values().sum::<u64>(),
        verbs.join(" ")
    );
    let _ = writeln!(
        out,
        "{}",
        trf!(
            "reconcile-writes",
            "writes: {writes} (payload objects: {objects}, ClusterVersion status: {status}, Lease: {lease}, other: {other})",
            writes = s.writes,
            objects = s.object_writes,
            status = s.status_writes,
            lease = s.lease_writes,
            other = s.other_writes
        )
    );
    if let Some(p) = &s.progressing {
        let _ = writeln!(out, "{}{p}", tr!("reconcile-progressing", "progressing: "));
    }
    if let Some(f) = &s.failure {
        let _ = writeln!(out, "{}{f}", tr!("reconcile-failure", "failure: "));
    }
    if let Some(e) = &s.error {
        let _ = writeln!(out, "{}{e}", tr!("error-prefix", "error: "));
    }
    if let Some(r) = &s.reason {
        let _ = writeln!(out, "{}{r}", tr!("reconcile-reason", "reason: "));
    }
    let _ = writeln!(out, "{}{:.3}s", tr!("reconcile-time", "time: "), s.seconds);
    out
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
