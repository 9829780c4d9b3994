//! `cvo reconcile`: run the reconcile engine against a cluster for one pass, until the release
//! is Completed, or (`--dry-run`) as watch-only to print the drift like `kubectl diff`; then a
//! summary (tasks done/total, API requests by verb, writes, time).

use std::{collections::BTreeMap, fmt::Write as _, path::PathBuf, sync::Arc, time::Duration};

use serde::Serialize;

use crate::reconcile::{
    Engine, EngineConfig, EngineTimings,
    api::{Drift, DriftRecord, EngineMode, StatusSnapshot},
};

/// When `cvo reconcile` stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Until {
    /// After the first apply pass (the default; `--dry-run` always stops here).
    Once,
    /// When the ClusterVersion says the release is Completed (exit 0), Failing (exit 1) or at
    /// the timeout (exit 2).
    Complete,
}

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
    /// Give up after this long (exit 2).
    pub timeout: Option<Duration>,
    /// Engine intervals.
    pub timings: EngineTimings,
    /// Take the CVO Lease `openshift-cluster-version/version` (upstream HA timings) before
    /// writing; `cvo reconcile` does.
    pub lease: bool,
}

/// What `cvo reconcile` reports.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReconcileSummary {
    /// `complete`, `failing`, `timeout`, `pass-done` or `error`.
    pub outcome: String,
    /// Process exit code.
    pub exit_code: u8,
    /// Release version and image applied.
    pub version: String,
    /// Release image (pull spec or `file://` pseudo pull spec).
    pub image: String,
    /// Watch-only.
    pub dry_run: bool,
    /// Tasks applied in the last pass.
    pub done: usize,
    /// Tasks in the payload.
    pub total: usize,
    /// Apply passes run.
    pub passes: u64,
    /// API requests by verb.
    pub requests: BTreeMap<String, u64>,
    /// Write requests sent (create, update, patch, delete).
    pub writes: u64,
    /// ClusterVersion status writes among them.
    pub status_writes: u64,
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
}

/// Runs the engine on `client` per `opts` and returns the summary.
///
/// # Errors
/// The payload directory cannot be resolved.
pub async fn run(client: kube::Client, opts: &ReconcileOptions) -> anyhow::Result<ReconcileSummary> {
    let mut cfg = EngineConfig::local(opts.payload.clone(), opts.release_image.clone())
        .map_err(|e| anyhow::anyhow!("--payload {}: {e}", opts.payload.display()))?;
    cfg.timings = opts.timings.clone();
    cfg.mode = if opts.dry_run {
        EngineMode::WatchOnly
    } else {
        EngineMode::ActiveApply
    };
    if opts.lease {
        cfg.lease = Some(crate::reconcile::LeaseConfig::cvo(
            crate::reconcile::default_identity(),
            crate::reconcile::LeaseTimings::HA,
        ));
    }
    let started = std::time::Instant::now();
    let mut h = Engine::spawn(client, cfg);
    let deadline = opts.timeout.map(|t| tokio::time::Instant::now() + t);
    let until = if opts.dry_run { Until::Once } else { opts.until };
    let (snap, outcome, code) = loop {
        let s: Arc<StatusSnapshot> = h.status.borrow_and_update().clone();
        match until {
            Until::Once if s.counters.passes >= 1 && !s.running => {
                let failed = s.failure.is_some() || s.failing().is_some();
                break (s, "pass-done", u8::from(failed));
            }
            Until::Complete if s.is_completed() => break (s, "complete", 0),
            Until::Complete if s.counters.passes >= 1 && s.failing().is_some() && !s.running => {
                break (s, "failing", 1);
            }
            _ => {}
        }
        let changed = h.status.changed();
        let r = match deadline {
            Some(d) => tokio::time::timeout_at(d, changed).await,
            None => Ok(changed.await),
        };
        match r {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                let s = h.status.borrow().clone();
                break (s, "error", 1);
            }
            Err(_) => {
                let s = h.status.borrow().clone();
                break (s, "timeout", 2);
            }
        }
    };
    h.shutdown().await;
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
    let desired = snap.desired.clone().unwrap_or_default();
    Ok(ReconcileSummary {
        outcome: outcome.into(),
        exit_code: code,
        version: desired.version,
        image: desired.image,
        dry_run: opts.dry_run,
        done: snap.done,
        total: snap.total,
        passes: snap.counters.passes,
        requests: req,
        writes,
        status_writes: snap.counters.status_writes,
        seconds: started.elapsed().as_secs_f64(),
        failure,
        progressing: cond(crate::reconcile::status::PROGRESSING),
        drift: snap.drift.to_vec(),
        error: snap.last_error.clone(),
    })
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
        match &d.drift {
            Drift::None => {}
            Drift::Create { object } => {
                let _ = writeln!(out, "--- {obj} (absent)\n+++ {obj} (payload)");
                for l in yaml_lines(object) {
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
    if s.dry_run {
        out.push_str(&render_drift(&s.drift));
        let n = s.drift.len();
        let _ = writeln!(
            out,
            "{n} object{} would change (watch-only: nothing was written)",
            if n == 1 { "" } else { "s" }
        );
    }
    let _ = writeln!(out, "release: {} ({})", s.version, s.image);
    let _ = writeln!(out, "outcome: {}", s.outcome);
    let _ = writeln!(out, "tasks: {}/{} done, {} pass(es)", s.done, s.total, s.passes);
    let verbs: Vec<String> = s.requests.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(
        out,
        "API requests: {} ({})",
        s.requests.values().sum::<u64>(),
        verbs.join(" ")
    );
    let _ = writeln!(out, "writes: {} (status writes: {})", s.writes, s.status_writes);
    if let Some(p) = &s.progressing {
        let _ = writeln!(out, "progressing: {p}");
    }
    if let Some(f) = &s.failure {
        let _ = writeln!(out, "failure: {f}");
    }
    if let Some(e) = &s.error {
        let _ = writeln!(out, "error: {e}");
    }
    let _ = writeln!(out, "time: {:.3}s", s.seconds);
    out
}
