//! The one log line per finished pass and its [`PassSummary`]: what an on-call engineer reads
//! to know the engine is alive and how it fares (done / total, duration, mode and state, the
//! failed task count with the first failure's reason, the drift count with the first few
//! resources named). Every field is a `tracing` field, so `--log-format json` carries them as
//! JSON keys; no line holds more than one line of an error message, and drift is named by
//! kind, namespace and name only (never a value).

use crate::cow_vec::CowVec;
use crate::reconcile::api::{Drift, DriftRecord, PassOutcome, PassSummary, RECENT_PASSES, TaskState};

use super::WorkerView;

/// Resources named in the pass line when a pass found drift (all of them at debug level).
pub(super) const DRIFT_NAMED: usize = 5;

/// Longest first-failure text in the pass line, in characters.
const FAILURE_CHARS: usize = 300;

/// What the worker knows of a finished pass besides its view.
pub(super) struct Finished {
    pub number: u64,
    pub seconds: f64,
    pub watch_only: bool,
    pub state: String,
    pub outcome: PassOutcome,
    /// Said when a timed-out pass has no failure of its own.
    pub timeout_secs: u64,
}

/// The summary of the pass `f` whose end `v` publishes.
pub(super) fn summarize(v: &WorkerView, f: Finished) -> PassSummary {
    let mut failed = 0;
    let mut first_task_failure = None;
    let mut running = Vec::new();
    for t in v.tasks.iter() {
        match &t.state {
            TaskState::Failed(e) => {
                failed += 1;
                if first_task_failure.is_none() {
                    first_task_failure = Some(e.clone());
                }
            }
            TaskState::Running => running.push(t.name.as_str()),
            _ => {}
        }
    }
    let first_failure = match (&v.status.failure, f.outcome) {
        (Some(e), _) => {
            let msg = e.to_string();
            let line = headline(&msg);
            Some(match e.reason() {
                "" => line.to_string(),
                r => format!("{r}: {line}"),
            })
        }
        (None, PassOutcome::TimedOut) => {
            let base = format!("the pass timed out after {}s", f.timeout_secs);
            Some(match (&first_task_failure, running.len()) {
                (Some(e), _) => format!("{base}: {}", first_line(e)),
                (None, 0) => base,
                (None, n) => format!(
                    "{base}; still running: {}{}",
                    running[..n.min(3)].join(", "),
                    if n > 3 {
                        format!(" (+{} more)", n - 3)
                    } else {
                        String::new()
                    }
                ),
            })
        }
        (None, _) => first_task_failure.map(|e| first_line(&e).to_string()),
    }
    .map(|s| clip(&s, FAILURE_CHARS));
    PassSummary {
        number: f.number,
        seconds: f.seconds,
        watch_only: f.watch_only,
        state: f.state,
        outcome: f.outcome,
        done: v.status.done,
        total: v.status.total,
        writes: v.last_pass_writes,
        failed,
        first_failure,
        drift: v.drift.len(),
    }
}

/// Appends `s` to `recent`, keeping the last [`RECENT_PASSES`].
pub(super) fn remember(recent: &mut std::sync::Arc<Vec<PassSummary>>, s: PassSummary) {
    let r = std::sync::Arc::make_mut(recent);
    r.push(s);
    if r.len() > RECENT_PASSES {
        let extra = r.len() - RECENT_PASSES;
        r.drain(..extra);
    }
}

/// `Kind ns/name` of a drift record (`Kind name` when cluster-scoped).
fn drift_name(d: &DriftRecord) -> String {
    let kind = d.kind.rsplit('/').next().unwrap_or(&d.kind);
    if d.namespace.is_empty() {
        format!("{kind} {}", d.name)
    } else {
        format!("{kind} {}/{}", d.namespace, d.name)
    }
}

/// The first [`DRIFT_NAMED`] drifted resources, comma-separated, with `(+N more)` after.
pub(super) fn drift_names(drift: &CowVec<DriftRecord>) -> String {
    let mut out: Vec<String> = drift.iter().take(DRIFT_NAMED).map(drift_name).collect();
    if drift.len() > DRIFT_NAMED {
        out.push(format!("(+{} more)", drift.len() - DRIFT_NAMED));
    }
    out.join(", ")
}

/// `watch-only` or `active-apply`.
pub(super) fn mode_word(watch_only: bool) -> &'static str {
    if watch_only { "watch-only" } else { "active-apply" }
}

/// Logs the pass line at info level, and each drifted resource at debug level.
pub(super) fn log_pass(s: &PassSummary, drift: &CowVec<DriftRecord>) {
    let msg = format!("pass {}", s.outcome.word());
    let mode = mode_word(s.watch_only);
    // A number in JSON; milliseconds are precision enough.
    let seconds = (s.seconds * 1000.0).round() / 1000.0;
    let reason = s.first_failure.as_deref().unwrap_or_default();
    let drifted = if s.drift > 0 {
        drift_names(drift)
    } else {
        String::new()
    };
    // As `&str` values the texts are quoted in the text format (a reason has spaces).
    let drifted = drifted.as_str();
    // Fields that would be empty are left out, so a healthy pass's line stays short.
    match (s.failed > 0 || s.first_failure.is_some(), s.drift > 0) {
        (false, false) => tracing::info!(
            pass = s.number, mode, state = %s.state, done = s.done, total = s.total,
            seconds, writes = s.writes, drift = 0, "{msg}"
        ),
        (false, true) => tracing::info!(
            pass = s.number, mode, state = %s.state, done = s.done, total = s.total,
            seconds, writes = s.writes, drift = s.drift, drifted, "{msg}"
        ),
        (true, false) => tracing::info!(
            pass = s.number, mode, state = %s.state, done = s.done, total = s.total,
            seconds, writes = s.writes, drift = 0, failed = s.failed, reason,
            "{msg}"
        ),
        (true, true) => tracing::info!(
            pass = s.number, mode, state = %s.state, done = s.done, total = s.total,
            seconds, writes = s.writes, drift = s.drift, drifted,
            failed = s.failed, reason, "{msg}"
        ),
    }
    for d in drift.iter() {
        // Field paths only: values (a Secret's, or any other) are never logged.
        let (change, fields) = match &d.drift {
            Drift::None => continue,
            Drift::Create { .. } => ("create", String::new()),
            Drift::Delete => ("delete", String::new()),
            Drift::Update { diff } => (
                "update",
                diff.iter()
                    .map(|c| c.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        };
        let resource = drift_name(d);
        if fields.is_empty() {
            tracing::debug!(pass = s.number, change, resource = resource.as_str(), "drift");
        } else {
            tracing::debug!(
                pass = s.number,
                change,
                resource = resource.as_str(),
                fields = fields.as_str(),
                "drift"
            );
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default().trim_end()
}

/// The first line of a failure, and when that line only announces a list (upstream's
/// `MultipleErrors`: "Multiple errors are preventing progress:" then `* ` items, one per
/// failed task, `pkg/cvo/sync_worker.go` `summarizeTaskGraphErrors`), the first item and how
/// many follow: `Multiple errors are preventing progress: Could not update … (+2 more)`.
fn headline(s: &str) -> String {
    let head = first_line(s);
    if !head.ends_with(':') {
        return head.to_string();
    }
    let items: Vec<&str> = s
        .lines()
        .skip(1)
        .filter_map(|l| l.trim().strip_prefix("* "))
        .filter(|l| !l.is_empty())
        .collect();
    match items.split_first() {
        None => head.to_string(),
        Some((first, [])) => format!("{head} {first}"),
        Some((first, rest)) => format!("{head} {first} (+{} more)", rest.len()),
    }
}

/// `s` cut to `max` characters, with `…` when cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::{api::TaskProgress, errors::SyncError};

    fn task(i: usize, state: TaskState) -> TaskProgress {
        TaskProgress {
            index: i,
            name: format!("configmap \"ns/cm{i}\" ({i} of 3)"),
            run_level: None,
            component: None,
            state,
        }
    }

    fn finished(outcome: PassOutcome) -> Finished {
        Finished {
            number: 4,
            seconds: 1.5,
            watch_only: true,
            state: "Reconciling".into(),
            outcome,
            timeout_secs: 240,
        }
    }

    #[test]
    fn a_failed_pass_counts_its_failed_tasks_and_says_the_first_reason_on_one_line() {
        let mut v = WorkerView::default();
        let mut tasks = CowVec::new();
        tasks.push(task(1, TaskState::Done));
        tasks.push(task(2, TaskState::Failed("boom 2\nsecond line".into())));
        tasks.push(task(3, TaskState::Failed("boom 3".into())));
        v.tasks = tasks;
        v.status.done = 1;
        v.status.total = 3;
        v.last_pass_writes = 2;
        let s = summarize(&v, finished(PassOutcome::Failed));
        assert_eq!((s.done, s.total, s.failed, s.writes), (1, 3, 2, 2));
        assert_eq!(s.first_failure.as_deref(), Some("boom 2"));
        // The summarised failure of the pass wins over the first task's text.
        v.status.failure = Some(SyncError::plain(
            "Multiple errors are preventing progress:\n* a\n* b",
        ));
        let s = summarize(&v, finished(PassOutcome::Failed));
        // A list's header alone says nothing: its first item and the count of the rest.
        assert_eq!(
            s.first_failure.as_deref(),
            Some("Multiple errors are preventing progress: a (+1 more)")
        );
        v.status.failure = Some(SyncError::plain(
            "Multiple errors are preventing progress:\n* Could not update configmap \"x/y\" (3 of 9): gone",
        ));
        let s = summarize(&v, finished(PassOutcome::Failed));
        assert_eq!(
            s.first_failure.as_deref(),
            Some(
                "Multiple errors are preventing progress: Could not update configmap \"x/y\" (3 of 9): gone"
            )
        );
        v.status.failure = Some(SyncError::plain("x".repeat(400)));
        let s = summarize(&v, finished(PassOutcome::Failed));
        assert_eq!(
            s.first_failure.map(|f| f.chars().count()),
            Some(FAILURE_CHARS + 1)
        );
    }

    #[test]
    fn a_timed_out_pass_without_a_failure_says_it_timed_out() {
        let mut v = WorkerView::default();
        let s = summarize(&v, finished(PassOutcome::TimedOut));
        assert_eq!(s.first_failure.as_deref(), Some("the pass timed out after 240s"));
        // The tasks it was still waiting on are named.
        let mut tasks = CowVec::new();
        tasks.push(task(1, TaskState::Done));
        tasks.push(task(2, TaskState::Running));
        v.tasks = tasks;
        let s = summarize(&v, finished(PassOutcome::TimedOut));
        assert_eq!(
            s.first_failure.as_deref(),
            Some("the pass timed out after 240s; still running: configmap \"ns/cm2\" (2 of 3)")
        );
        // ... or the failure of the one it was retrying when cancelled.
        let mut tasks = CowVec::new();
        tasks.push(task(
            1,
            TaskState::Failed("no matches for kind \"Widget\"\nmore".into()),
        ));
        v.tasks = tasks;
        let s = summarize(&v, finished(PassOutcome::TimedOut));
        assert_eq!(
            s.first_failure.as_deref(),
            Some("the pass timed out after 240s: no matches for kind \"Widget\"")
        );
        let v = WorkerView::default();
        let s = summarize(&v, finished(PassOutcome::Done));
        assert_eq!((s.failed, s.first_failure), (0, None));
    }

    #[test]
    fn drift_names_the_first_few_and_counts_the_rest() {
        let mut d = CowVec::new();
        for i in 0..7 {
            d.push(DriftRecord {
                task: String::new(),
                kind: if i == 0 {
                    "rbac.authorization.k8s.io/ClusterRole".into()
                } else {
                    "ConfigMap".into()
                },
                namespace: if i == 0 { String::new() } else { "ns".into() },
                name: format!("n{i}"),
                drift: Drift::Delete,
            });
        }
        assert_eq!(
            drift_names(&d),
            "ClusterRole n0, ConfigMap ns/n1, ConfigMap ns/n2, ConfigMap ns/n3, ConfigMap ns/n4, (+2 more)"
        );
    }

    #[test]
    fn recent_passes_keep_the_last_sixteen() {
        let mut r = std::sync::Arc::new(Vec::new());
        for n in 1..=20 {
            let mut s = summarize(&WorkerView::default(), finished(PassOutcome::Done));
            s.number = n;
            remember(&mut r, s);
        }
        let numbers: Vec<u64> = r.iter().map(|s| s.number).collect();
        assert_eq!(numbers, (5..=20).collect::<Vec<_>>());
    }
}
