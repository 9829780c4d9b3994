//! The view model of the embedded reconcile engine (`cvo demo`): what the task graph, the drift
//! view, the sync gauge, the engine header line and the event log show, derived once per
//! engine snapshot (never per frame) from [`StatusSnapshot`].
//!
//! Every number comes from the snapshot: the gauge uses `fraction`, `done` and `total`; the
//! current run level is the lowest entry of `run_levels` with unfinished tasks; the task graph
//! groups `tasks` by (run level, component) and counts their states. Nothing is recomputed
//! from the cluster state. Upstream, the task graph is the sync worker's
//! `pkg/payload/task_graph.go` (run levels run in order, components of one level in parallel).

use crate::l10n::{tr, trf};
use std::{collections::BTreeMap, sync::Arc};

use super::theme::Level;
use crate::clock::Clock;
use crate::cow_vec::CowVec;
use crate::reconcile::api::{
    Drift, DriftRecord, EngineEvent, EngineMode, EngineState, EventLevel, LeaseInfo, RunLevelProgress,
    StatusSnapshot, TaskProgress, TaskState,
};

/// Aggregate state of one component of one run level, decided in this order: any task failed,
/// any running or the cell partly applied, every task done or skipped (at least one done),
/// every task skipped, else pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CellState {
    /// Every task applied (skipped ones aside).
    Done,
    /// Some task is being applied, or some are applied and others not yet.
    Running,
    /// Nothing started yet (or some tasks still waiting).
    Pending,
    /// Every task was left out (capability, override, profile).
    Skipped,
    /// Tasks failed only because their ClusterOperators are still updating (the pass summary
    /// is `ClusterOperatorUpdating`, whose upstream update effect is None, and the
    /// ClusterVersion is not Failing): an update waiting, not failing.
    Waiting,
    /// At least one task failed.
    Failed,
}

impl CellState {
    /// The marker shown in front of the cell (colour is never the only signal).
    pub fn marker(self) -> &'static str {
        match self {
            CellState::Done => "✓",
            CellState::Running => "»",
            CellState::Pending => "·",
            CellState::Skipped => "-",
            CellState::Waiting => "~",
            CellState::Failed => "✗",
        }
    }

    /// The word for details and filtering.
    pub fn word(self) -> &'static str {
        match self {
            CellState::Done => tr!("cell-done", "done"),
            CellState::Running => tr!("cell-running", "running"),
            CellState::Pending => tr!("cell-pending", "pending"),
            CellState::Skipped => tr!("cell-skipped", "skipped"),
            CellState::Waiting => tr!("cell-waiting", "waiting"),
            CellState::Failed => tr!("cell-failed", "failed"),
        }
    }
}

/// One cell of the task graph: the tasks of one component in one run level.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskCell {
    /// Run level (`None`: tasks whose file name has no `0000_NN_` prefix).
    pub level: Option<u32>,
    /// Component (`-` when the file name names none).
    pub component: String,
    /// Tasks in the cell.
    pub total: usize,
    /// Applied.
    pub done: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped.
    pub skipped: usize,
    /// Being applied.
    pub running: usize,
    /// Aggregate state.
    pub state: CellState,
    /// Indexes into [`StatusSnapshot::tasks`] of the cell's tasks, in payload order.
    pub tasks: Vec<usize>,
}

impl TaskCell {
    /// The cell's text: `kube-apiserver 7/7` (done/total).
    pub fn label(&self) -> String {
        format!("{} {}/{}", self.component, self.done, self.total)
    }

    /// Severity for the palette.
    pub fn level_style(&self) -> Level {
        match self.state {
            CellState::Done => Level::Ok,
            CellState::Running => Level::Warn,
            CellState::Pending => Level::Info,
            CellState::Skipped => Level::Unknown,
            CellState::Waiting => Level::Warn,
            CellState::Failed => Level::Error,
        }
    }
}

/// One drift record as the drift view shows it (records without a change are left out).
#[derive(Clone, Debug, PartialEq)]
pub struct DriftRow {
    /// `create`, `update`, `delete`.
    pub action: &'static str,
    /// Severity of the action (create ok-green, update warn, delete error).
    pub level: Level,
    /// `group/kind`.
    pub kind: String,
    /// `kind` alone (the table's KIND column).
    pub short_kind: String,
    /// `namespace/name` or `name`.
    pub object: String,
    /// The manifest task.
    pub task: String,
    /// Field changes: (path, old, new), values as compact JSON (`-` when absent).
    pub changes: Vec<(String, String, String)>,
    /// Index into [`StatusSnapshot::drift`].
    pub record: usize,
}

impl DriftRow {
    /// The changes in one line: `spec.replicas: 2 → 3; data.x: - → "y"`; creates and deletes
    /// say `would be …` in watch-only mode and what was done in active-apply.
    pub fn summary(&self, mode: EngineMode) -> String {
        let applied = mode == EngineMode::ActiveApply;
        match self.action {
            "create" if applied => tr!("drift-created", "created (was absent)").into(),
            "create" => tr!("drift-would-create", "absent: would be created").into(),
            "delete" if applied => tr!("drift-deleted", "deleted").into(),
            "delete" => tr!("drift-would-delete", "would be deleted").into(),
            _ => self
                .changes
                .iter()
                .map(|(p, a, b)| format!("{p}: {a} → {b}"))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }
}

/// Whose changes the drift view lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriftOrigin {
    /// Watch-only: what the engine would change.
    WouldChange,
    /// Active-apply, a reconciling pass: what it changed back to the payload (drift).
    Changed,
    /// Active-apply, a pass applying a new release (the version, else the image): the
    /// update's own changes, not drift.
    Update(String),
}

impl DriftOrigin {
    /// The drift view's table name, e.g. `drift (watch-only: would change)` or `changes the
    /// update to 4.16.5 made (its own, not drift)`.
    pub fn title(&self) -> String {
        match self {
            Self::WouldChange => tr!("drift-title-would", "drift (watch-only: would change)").into(),
            Self::Changed => tr!("drift-title-changed", "drift (active-apply: changed back)").into(),
            Self::Update(v) => trf!(
                "drift-title-update",
                "changes the update to {v} made (its own, not drift)",
                v = v
            ),
        }
    }

    /// What an empty drift view says.
    pub fn empty(&self) -> &'static str {
        match self {
            Self::Update(_) => tr!(
                "drift-empty-update",
                "no change: the update's last pass found every object as the release says"
            ),
            _ => tr!(
                "drift-empty",
                "no drift: the last pass found the cluster as the payload says"
            ),
        }
    }
}

/// Everything the engine views show, derived from one snapshot.
#[derive(Clone, Debug, Default)]
pub struct EngineModel {
    /// The snapshot itself (header, gauge, events and details read it directly).
    pub snap: Arc<StatusSnapshot>,
    /// The task graph's cells, by run level (no level last) then component name.
    pub cells: Vec<TaskCell>,
    /// Drift records with a change.
    pub drift: Vec<DriftRow>,
    /// Watch-only: manifests found in sync in the last comparison and manifests compared
    /// ([`StatusSnapshot::in_sync`]); `None` in active-apply.
    pub in_sync: Option<(usize, usize)>,
}

impl EngineModel {
    /// Builds the model of `snap`.
    pub fn build(snap: Arc<StatusSnapshot>) -> Self {
        let mut cells = task_cells(&snap.tasks);
        if snap.only_waiting() {
            for c in cells.iter_mut().filter(|c| c.state == CellState::Failed) {
                c.state = CellState::Waiting;
            }
        }
        let drift: Vec<DriftRow> = snap
            .drift
            .iter()
            .enumerate()
            .filter_map(|(i, r)| drift_row(i, r))
            .collect();
        let in_sync = snap.in_sync();
        Self {
            snap,
            cells,
            drift,
            in_sync,
        }
    }

    /// Whose changes the drift records are ([`DriftOrigin`]): in active-apply, a pass that
    /// applied a new release (Updating or Initializing: the running pass by the engine's
    /// state, a finished one by the last pass summary) made the release's own changes.
    pub fn drift_origin(&self) -> DriftOrigin {
        let s = &self.snap;
        if s.mode == EngineMode::WatchOnly {
            return DriftOrigin::WouldChange;
        }
        let update_pass = if s.running {
            matches!(s.state, EngineState::Updating | EngineState::Initializing)
        } else {
            s.recent_passes
                .last()
                .is_some_and(|p| !p.watch_only && matches!(p.state.as_str(), "Updating" | "Initializing"))
        };
        match s.desired.as_ref() {
            Some(d) if update_pass => DriftOrigin::Update(if d.version.is_empty() {
                d.image.clone()
            } else {
                d.version.clone()
            }),
            _ => DriftOrigin::Changed,
        }
    }

    /// The run level being worked on: the lowest level with tasks neither done nor skipped
    /// (a level with a failed task stays current), from the snapshot's `run_levels`.
    pub fn current_level(&self) -> Option<&RunLevelProgress> {
        self.snap
            .run_levels
            .iter()
            .filter(|r| r.done + r.skipped < r.total)
            .min_by_key(|r| (r.level.is_none(), r.level))
    }
}

/// Reasons of a pass summary whose upstream update effect is None: the pass only waits for
/// ClusterOperators to reach their new versions (`pkg/cvo/internal/operatorstatus.go`,
/// `pkg/payload/task.go` `SummaryForReason`).
/// `NN` of a run level, `--` when there is none.
pub fn level_label(level: Option<u32>) -> String {
    match level {
        Some(l) => format!("{l:02}"),
        None => "--".into(),
    }
}

fn task_cells(tasks: &CowVec<TaskProgress>) -> Vec<TaskCell> {
    // Key: (no level sorts last, level, component).
    let mut groups: BTreeMap<(bool, u32, String), Vec<usize>> = BTreeMap::new();
    for (i, t) in tasks.iter().enumerate() {
        let comp = t.component.clone().unwrap_or_else(|| "-".into());
        groups
            .entry((t.run_level.is_none(), t.run_level.unwrap_or(0), comp))
            .or_default()
            .push(i);
    }
    groups
        .into_iter()
        .map(|((none, level, component), idx)| {
            let mut cell = TaskCell {
                level: (!none).then_some(level),
                component,
                total: idx.len(),
                done: 0,
                failed: 0,
                skipped: 0,
                running: 0,
                state: CellState::Pending,
                tasks: idx,
            };
            for &i in &cell.tasks {
                match tasks.get(i).map(|t| &t.state) {
                    Some(TaskState::Done) => cell.done += 1,
                    Some(TaskState::Failed(_)) => cell.failed += 1,
                    Some(TaskState::Skipped(_)) => cell.skipped += 1,
                    Some(TaskState::Running) => cell.running += 1,
                    Some(TaskState::Pending) | None => {}
                }
            }
            cell.state = if cell.failed > 0 {
                CellState::Failed
            } else if cell.running > 0 || (cell.done > 0 && cell.done + cell.skipped < cell.total) {
                // Partly applied counts as in progress (reconciling passes apply out of order).
                CellState::Running
            } else if cell.done > 0 && cell.done + cell.skipped == cell.total {
                CellState::Done
            } else if cell.skipped == cell.total {
                CellState::Skipped
            } else {
                CellState::Pending
            };
            cell
        })
        .collect()
}

fn json_short(v: Option<&serde_json::Value>) -> String {
    match v {
        None => "-".into(),
        Some(v) => serde_json::to_string(v).unwrap_or_else(|_| "?".into()),
    }
}

fn drift_row(record: usize, r: &DriftRecord) -> Option<DriftRow> {
    let (action, level, changes) = match &r.drift.masked(&r.kind) {
        Drift::None => return None,
        Drift::Create { .. } => ("create", Level::Ok, Vec::new()),
        Drift::Delete => ("delete", Level::Error, Vec::new()),
        Drift::Update { diff } => (
            "update",
            Level::Warn,
            diff.iter()
                .map(|c| {
                    (
                        c.path.clone(),
                        json_short(c.from.as_ref()),
                        json_short(c.to.as_ref()),
                    )
                })
                .collect(),
        ),
    };
    Some(DriftRow {
        action,
        level,
        kind: r.kind.clone(),
        short_kind: r.kind.rsplit('/').next().unwrap_or(&r.kind).to_string(),
        object: if r.namespace.is_empty() {
            r.name.clone()
        } else {
            format!("{}/{}", r.namespace, r.name)
        },
        task: r.task.clone(),
        changes,
        record,
    })
}

/// The engine state as one word (`Updating`, `Blocked: why`).
pub fn state_word(s: &EngineState) -> String {
    match s {
        EngineState::Starting => tr!("engine-state-starting", "Starting").into(),
        EngineState::WaitingForLease => tr!("engine-state-waitingforlease", "WaitingForLease").into(),
        EngineState::Initializing => tr!("engine-state-initializing", "Initializing").into(),
        EngineState::Updating => tr!("engine-state-updating", "Updating").into(),
        EngineState::Reconciling => tr!("engine-state-reconciling", "Reconciling").into(),
        EngineState::Blocked(why) => trf!("engine-state-blocked", "Blocked: {why}", why = why),
        EngineState::Stopped => tr!("engine-state-stopped", "Stopped").into(),
    }
}

/// The engine state as the header shows it: in watch-only the engine applies nothing, so it
/// is never "Updating" or "Initializing" there: `Watching` (`Comparing` while a pass runs).
pub fn shown_state(s: &StatusSnapshot) -> (String, Level) {
    let applying = matches!(
        s.state,
        EngineState::Updating | EngineState::Initializing | EngineState::Reconciling
    );
    match s.mode {
        EngineMode::WatchOnly if applying && s.running => {
            (tr!("engine-comparing", "Comparing").into(), Level::Info)
        }
        EngineMode::WatchOnly if applying => (tr!("engine-watching", "Watching").into(), Level::Ok),
        _ => (state_word(&s.state), state_level(&s.state)),
    }
}

/// The CVO Lease in a few words, at `now` on `clock` (the clock the dashboard shows): `we hold
/// it (X)`, `free`, `held by X (alive, renewed 12:00:01)`, `held by X (expired 12:02:18)`,
/// `unreadable: why`, `not read yet`.
///
/// The Lease is a real coordination object: its `renewTime` and `leaseDurationSeconds` are
/// the wall clock's even in the demo (another CVO, or client-go, judges them so), and so is
/// every time of [`LeaseInfo`]. Expiry is therefore judged at the wall-clock time at which
/// `clock` read `now` ([`Clock::wall_time_of`]), and on a simulated clock the Lease's times
/// are marked `wall clock`, so that they are not read as simulated times.
pub fn lease_words(l: &LeaseInfo, now: chrono::DateTime<chrono::Utc>, clock: &Clock) -> (String, Level) {
    if let Some(e) = &l.error {
        return (
            trf!(
                "lease-unreadable",
                "unreadable: {why}",
                why = super::text::one_line(e)
            ),
            Level::Error,
        );
    }
    let wall_now = clock.wall_time_of(now);
    let tag = if clock.is_simulated() {
        tr!("lease-wall-clock", " wall clock")
    } else {
        ""
    };
    let renewed = l
        .renew_time
        .map(|t| {
            trf!(
                "lease-renewed",
                "renewed {at}{tag}",
                at = t.format("%H:%M:%S").to_string(),
                tag = tag
            )
        })
        .unwrap_or_else(|| tr!("lease-never-renewed", "never renewed").into());
    match &l.holder {
        _ if l.read_at.is_none() => (tr!("lease-not-read", "not read yet").into(), Level::Unknown),
        Some(h) if l.ours => (trf!("lease-ours", "we hold it ({h})", h = h), Level::Ok),
        Some(h) if l.alive && l.expires().is_none_or(|t| t >= wall_now) => (
            trf!(
                "lease-held-alive",
                "held by {h} (alive, {renewed})",
                h = h,
                renewed = renewed
            ),
            Level::Warn,
        ),
        Some(h) => (
            trf!(
                "lease-held-expired",
                "held by {h} (expired{at})",
                h = h,
                at = l
                    .expires()
                    .map(|t| format!(" {}{tag}", t.format("%H:%M:%S")))
                    .unwrap_or_default()
            ),
            Level::Info,
        ),
        None => (tr!("lease-free", "free").into(), Level::Ok),
    }
}

/// Severity of an engine state.
pub fn state_level(s: &EngineState) -> Level {
    match s {
        EngineState::Reconciling => Level::Ok,
        EngineState::Updating | EngineState::Initializing | EngineState::Starting => Level::Warn,
        EngineState::WaitingForLease => Level::Blocked,
        EngineState::Blocked(_) => Level::Error,
        EngineState::Stopped => Level::Unknown,
    }
}

/// The mode as the header shows it.
pub fn mode_word(m: EngineMode) -> &'static str {
    match m {
        EngineMode::WatchOnly => "watch-only",
        EngineMode::ActiveApply => "active-apply",
    }
}

/// The other mode (what the `m` key switches to).
pub fn other_mode(m: EngineMode) -> EngineMode {
    match m {
        EngineMode::WatchOnly => EngineMode::ActiveApply,
        EngineMode::ActiveApply => EngineMode::WatchOnly,
    }
}

/// What switching to `to` means, for the confirm popup.
pub fn switch_explanation(to: EngineMode) -> &'static str {
    match to {
        EngineMode::ActiveApply => tr!(
            "switch-to-active",
            "cvo will apply the release payload and write ClusterVersion status as the cluster's \
             CVO. It takes the Lease openshift-cluster-version/version only when no other holder \
             is alive, and never writes without it."
        ),
        EngineMode::WatchOnly => tr!(
            "switch-to-watch",
            "cvo stops writing and releases the Lease at once; the views show what the CVO would \
             change (drift) instead."
        ),
    }
}

/// Severity of an event level.
pub fn event_level(l: EventLevel) -> Level {
    match l {
        EventLevel::Info => Level::Info,
        EventLevel::Warning => Level::Warn,
        EventLevel::Error => Level::Error,
    }
}

/// The event as one log line: `HH:MM:SS WARN text`.
pub fn event_line(e: &EngineEvent) -> String {
    let lvl = match e.level {
        EventLevel::Info => "INFO",
        EventLevel::Warning => "WARN",
        EventLevel::Error => "ERROR",
    };
    format!(
        "{} {lvl:<5} {}",
        e.at.format("%H:%M:%S"),
        super::text::one_line(&e.text)
    )
}

/// One line of the task graph: the run level it belongs to (`None` for continuation lines
/// of a level that wraps) and the indexes (into the engine model's cells) on it.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskLine {
    /// The level, on the first line of each level.
    pub level: Option<Option<u32>>,
    /// Cells on the line.
    pub cells: Vec<usize>,
}

/// Columns of the run-level prefix: `50  12/20 │ `.
pub(crate) const TASK_PREFIX: usize = 13;

/// The task graph laid out for `width` columns: the `visible` cells (filter applied, indexes
/// into the cells), level by level, each level starting a new line and wrapping as needed.
pub(crate) fn task_lines(e: &EngineModel, visible: &[usize], width: usize) -> Vec<TaskLine> {
    let room = width.saturating_sub(TASK_PREFIX).max(1);
    let mut out: Vec<TaskLine> = Vec::new();
    let mut used = 0;
    let mut current: Option<Option<u32>> = None;
    for &i in visible {
        let Some(cell) = e.cells.get(i) else { continue };
        let w = super::text::width(&super::text::sanitize(&cell.label())) + 2;
        let new_level = current != Some(cell.level);
        let last = out.last_mut();
        match last {
            Some(line) if !new_level && used + w <= room => {
                line.cells.push(i);
                used += w + 1;
            }
            _ => {
                out.push(TaskLine {
                    level: new_level.then_some(cell.level),
                    cells: vec![i],
                });
                used = w + 1;
                current = Some(cell.level);
            }
        }
    }
    out
}

/// The line of the task graph holding visible cell number `sel` (an index into the visible
/// cells).
pub(crate) fn task_line_of(lines: &[TaskLine], visible: &[usize], sel: usize) -> usize {
    let Some(target) = visible.get(sel) else {
        return 0;
    };
    lines.iter().position(|l| l.cells.contains(target)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(i: usize, level: Option<u32>, comp: Option<&str>, state: TaskState) -> TaskProgress {
        TaskProgress {
            index: i,
            name: format!("configmap \"ns/t{i}\" ({i} of 9)"),
            run_level: level,
            component: comp.map(String::from),
            state,
        }
    }

    #[test]
    fn cells_group_by_level_and_component_and_aggregate_states() {
        let tasks = vec![
            task(1, Some(10), Some("b"), TaskState::Done),
            task(2, Some(10), Some("b"), TaskState::Pending),
            task(3, Some(10), Some("a"), TaskState::Done),
            task(4, Some(10), Some("a"), TaskState::Skipped("cap".into())),
            task(5, Some(2), Some("z"), TaskState::Failed("boom".into())),
            task(6, Some(2), Some("z"), TaskState::Done),
            task(7, None, None, TaskState::Skipped("cap".into())),
            task(8, Some(10), Some("c"), TaskState::Pending),
        ];
        let cells = task_cells(&tasks.into());
        let got: Vec<(String, String, CellState, Vec<usize>)> = cells
            .iter()
            .map(|c| (level_label(c.level), c.label(), c.state, c.tasks.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("02".into(), "z 1/2".into(), CellState::Failed, vec![4, 5]),
                ("10".into(), "a 1/2".into(), CellState::Done, vec![2, 3]),
                ("10".into(), "b 1/2".into(), CellState::Running, vec![0, 1]),
                ("10".into(), "c 0/1".into(), CellState::Pending, vec![7]),
                ("--".into(), "- 0/1".into(), CellState::Skipped, vec![6]),
            ]
        );
    }

    #[test]
    fn current_level_is_the_lowest_unfinished_one() {
        let lv = |level, total, done, failed, skipped| RunLevelProgress {
            level,
            total,
            done,
            failed,
            skipped,
        };
        let snap = StatusSnapshot {
            run_levels: vec![
                lv(None, 2, 0, 0, 0),
                lv(Some(50), 4, 1, 0, 0),
                lv(Some(10), 3, 2, 0, 1),
                lv(Some(20), 3, 1, 1, 0),
            ],
            ..Default::default()
        };
        let m = EngineModel::build(Arc::new(snap));
        assert_eq!(m.current_level().map(|r| r.level), Some(Some(20)));
        let done = StatusSnapshot {
            run_levels: vec![lv(Some(10), 3, 3, 0, 0)],
            ..Default::default()
        };
        assert!(EngineModel::build(Arc::new(done)).current_level().is_none());
    }

    /// The Lease stays on the wall clock in the demo (its 137 s are real): at `--speed 50`,
    /// 20 real seconds after a renewal it is alive, though 1,000 simulated seconds have
    /// passed; 200 real seconds after, it has expired. Its times are marked as wall-clock ones.
    #[test]
    fn the_lease_is_judged_on_the_wall_clock_under_a_simulated_one() {
        let start = chrono::Utc::now();
        let clock = Clock::simulated_from(start, 50.0);
        let l = LeaseInfo {
            lease: "openshift-cluster-version/version".into(),
            holder: Some("other".into()),
            renew_time: Some(start),
            duration_seconds: Some(137),
            alive: true,
            read_at: Some(start),
            ..Default::default()
        };
        let at = |real_secs: i64| start + chrono::Duration::seconds(real_secs * 50);
        let renewed = start.format("%H:%M:%S");
        assert_eq!(
            lease_words(&l, at(20), &clock),
            (
                format!("held by other (alive, renewed {renewed} wall clock)"),
                Level::Warn
            )
        );
        let expired = (start + chrono::Duration::seconds(137)).format("%H:%M:%S");
        assert_eq!(
            lease_words(&l, at(200), &clock),
            (
                format!("held by other (expired {expired} wall clock)"),
                Level::Info
            )
        );
        // On the wall clock nothing is marked and `now` is the wall time itself.
        assert_eq!(
            lease_words(&l, start + chrono::Duration::seconds(20), &Clock::wall()),
            (format!("held by other (alive, renewed {renewed})"), Level::Warn)
        );
    }
}
