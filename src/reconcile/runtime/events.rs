//! The engine's event log ([`StatusSnapshot::events`]): one line per thing an administrator
//! would want to see scroll by, found by comparing each published snapshot with the previous
//! one. The texts use the field's words (state, desired update, pass, run level, ClusterVersion
//! conditions, history, lease, mode, commands). Upstream the CVO records such things as
//! Kubernetes Events and log lines (pkg/cvo/cvo.go, sync_worker.go); this is our equivalent for
//! the dashboard's log pane and `cvo demo --headless`.
//!
//! The lines are the dashboard's words, so they are written in the process's language
//! (`l10n`, the catalogue's `event-*` keys in `src/l10n/ru/events.ftl`) when the event happens;
//! what is API data inside them stays as the API says it: condition types and statuses,
//! reasons and messages, versions, images, history states (Completed, Partial), the modes'
//! names (watch-only, active-apply), command names and the engine's own messages.

use std::{collections::VecDeque, sync::Arc, time::Instant};

use chrono::{DateTime, Utc};

use crate::l10n::{tr, trf};
use crate::openshift::{UpdateState, condition::find};
use crate::reconcile::{
    api::{EVENT_LOG_LEN, EngineEvent, EngineState, EventLevel, StatusSnapshot},
    status::{AVAILABLE, FAILING, PROGRESSING, RETRIEVED_UPDATES},
};

/// What the log remembers of the previous snapshot.
#[derive(Clone, Debug, Default)]
struct Seen {
    state: EngineState,
    mode: crate::reconcile::api::EngineMode,
    desired: Option<(String, String)>,
    running: bool,
    passes: u64,
    conditions: Vec<(&'static str, String, String)>,
    history_top: Option<(String, UpdateState)>,
    leader: bool,
    holder: Option<String>,
    command_at: Option<DateTime<Utc>>,
    last_error: Option<String>,
    levels_done: Vec<Option<u32>>,
}

/// The event log: the last [`EVENT_LOG_LEN`] events plus what was seen last.
#[derive(Debug, Default)]
pub(crate) struct EventLog {
    seq: u64,
    events: VecDeque<EngineEvent>,
    seen: Option<Seen>,
    pass_started: Option<Instant>,
    shared: Arc<Vec<EngineEvent>>,
    /// Run levels already logged as done for this desired image (each is logged once per
    /// update, not once per pass).
    levels_logged: (Option<String>, std::collections::BTreeSet<u32>),
    /// The clock of the events' times (the engine's, [`crate::reconcile::EngineTimings::clock`]).
    clock: crate::clock::Clock,
}

const CONDITIONS: [&str; 4] = [AVAILABLE, PROGRESSING, FAILING, RETRIEVED_UPDATES];

/// The state's name in the current language: the dashboard's words (`engine-state-*`), the
/// variant's name in English.
fn state_name(s: &EngineState) -> String {
    match s {
        EngineState::Starting => tr!("engine-state-starting", "Starting").into(),
        EngineState::WaitingForLease => tr!("engine-state-waitingforlease", "WaitingForLease").into(),
        EngineState::Initializing => tr!("engine-state-initializing", "Initializing").into(),
        EngineState::Updating => tr!("engine-state-updating", "Updating").into(),
        EngineState::Reconciling => tr!("engine-state-reconciling", "Reconciling").into(),
        EngineState::Blocked(why) => trf!("event-state-blocked", "Blocked ({why})", why = why),
        EngineState::Stopped => tr!("engine-state-stopped", "Stopped").into(),
    }
}

fn mode_word(m: crate::reconcile::api::EngineMode) -> &'static str {
    match m {
        crate::reconcile::api::EngineMode::WatchOnly => "watch-only",
        crate::reconcile::api::EngineMode::ActiveApply => "active-apply",
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

impl EventLog {
    /// An empty log on the wall clock.
    #[cfg(test)]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty log whose events are stamped by `clock`.
    pub fn with_clock(clock: crate::clock::Clock) -> Self {
        Self {
            clock,
            ..Self::default()
        }
    }

    /// Adds one event now.
    pub fn push(&mut self, level: EventLevel, text: impl Into<String>) {
        self.seq += 1;
        self.events.push_back(EngineEvent {
            seq: self.seq,
            at: self.clock.now(),
            level,
            text: text.into(),
        });
        while self.events.len() > EVENT_LOG_LEN {
            self.events.pop_front();
        }
        self.shared = Arc::new(self.events.iter().cloned().collect());
    }

    /// The sequence number of the last event (0 before any).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The events, oldest first (shared, cheap to clone).
    pub fn events(&self) -> Arc<Vec<EngineEvent>> {
        self.shared.clone()
    }

    /// Compares `snap` with the snapshot observed before and logs what changed.
    pub(crate) fn observe(&mut self, snap: &StatusSnapshot) {
        let now = self.snapshot_seen(snap);
        let prev = self.seen.take();
        let p = prev.clone().unwrap_or_default();
        let first = prev.is_none();
        use EventLevel::{Error, Info, Warning};
        if first || p.state != now.state {
            let level = if matches!(now.state, EngineState::Blocked(_)) {
                Warning
            } else {
                Info
            };
            if first {
                let state = state_name(&now.state);
                self.push(level, trf!("event-state", "state {state}", state = state));
            } else {
                let (from, to) = (state_name(&p.state), state_name(&now.state));
                self.push(
                    level,
                    trf!("event-state-change", "state {from} → {to}", from = from, to = to),
                );
            }
        }
        let switched = !first && p.mode != now.mode;
        if switched {
            self.push(
                Info,
                trf!(
                    "event-switched",
                    "switched to {mode} (was {was})",
                    mode = mode_word(now.mode),
                    was = mode_word(p.mode)
                ),
            );
        }
        if p.desired != now.desired
            && let Some((version, image)) = &now.desired
        {
            let v = if version.is_empty() {
                tr!("event-no-version", "<no version>")
            } else {
                version
            };
            self.push(
                Info,
                trf!(
                    "event-desired-accepted",
                    "desired update accepted: {v} ({image})",
                    v = v,
                    image = image
                ),
            );
        }
        if p.leader != now.leader {
            if now.leader {
                match now.holder.as_deref().filter(|w| !w.is_empty()) {
                    Some(who) => self.push(
                        Info,
                        trf!("event-lease-acquired-by", "lease acquired ({who})", who = who),
                    ),
                    None => self.push(Info, tr!("event-lease-acquired", "lease acquired")),
                }
            } else if switched && now.mode == crate::reconcile::api::EngineMode::WatchOnly {
                // Given up on purpose by the switch, not lost.
                self.push(
                    Info,
                    tr!(
                        "event-lease-released",
                        "lease released: watch-only, writes stopped"
                    ),
                );
            } else if !first {
                self.push(Warning, tr!("event-lease-lost", "lease lost: writes stopped"));
            }
        } else if !now.leader && now.holder != p.holder && now.holder.is_some() {
            let who = now.holder.clone().unwrap_or_default();
            self.push(
                Info,
                trf!("event-lease-held", "lease held by {who}: waiting", who = who),
            );
        }
        if now.running && !p.running {
            self.pass_started = Some(Instant::now());
            let n = now.passes + 1;
            self.push(Info, trf!("event-pass-started", "pass {n} started", n = n));
        }
        if now.passes > p.passes && !first {
            let took = self
                .pass_started
                .take()
                .map(|t| {
                    let secs = format!("{:.1}", t.elapsed().as_secs_f64());
                    trf!("event-took", " in {secs}s", secs = secs)
                })
                .unwrap_or_default();
            match &snap.failure {
                Some(f) => {
                    let reason = if f.reason.is_empty() {
                        tr!("event-reason-error", "error")
                    } else {
                        &f.reason
                    };
                    let (n, done, total) = (now.passes, snap.done, snap.total);
                    let message = first_line(&f.message);
                    // Waiting on an operator that is still updating is the normal course of
                    // an update (upstream UpdateEffectNone), not an error.
                    if f.reason.ends_with("Updating") {
                        let text = trf!(
                            "event-pass-incomplete",
                            "pass {n} incomplete ({done}/{total} done{took}): {reason}: {message}",
                            n = n,
                            done = done,
                            total = total,
                            took = took,
                            reason = reason,
                            message = message
                        );
                        self.push(Info, text);
                    } else {
                        let text = trf!(
                            "event-pass-failed",
                            "pass {n} failed ({done}/{total} done{took}): {reason}: {message}",
                            n = n,
                            done = done,
                            total = total,
                            took = took,
                            reason = reason,
                            message = message
                        );
                        self.push(Error, text);
                    }
                }
                None => self.push(
                    Info,
                    trf!(
                        "event-pass-finished",
                        "pass {n} finished: {done}/{total} done{took}",
                        n = now.passes,
                        done = snap.done,
                        total = snap.total,
                        took = took
                    ),
                ),
            }
        }
        let image = now.desired.as_ref().map(|d| d.1.clone());
        if self.levels_logged.0 != image {
            self.levels_logged = (image, Default::default());
        }
        for l in &now.levels_done {
            if !p.levels_done.contains(l)
                && matches!(now.state, EngineState::Updating | EngineState::Initializing)
                && let Some(n) = l
                && self.levels_logged.1.insert(*n)
                && let Some(rl) = snap.run_levels.iter().find(|r| r.level == Some(*n))
            {
                let text = trf!(
                    "event-run-level-done",
                    "run level {n} done ({done}/{total})",
                    n = format!("{n:02}"),
                    done = rl.done,
                    total = rl.total
                );
                self.push(Info, text);
            }
        }
        for (t, status, text) in &now.conditions {
            let before = p.conditions.iter().find(|(pt, _, _)| pt == t);
            if before.is_some_and(|(_, s, _)| s == status) {
                continue;
            }
            let level = match (*t, status.as_str()) {
                (FAILING, "True") => Error,
                (AVAILABLE, "False") => Warning,
                (RETRIEVED_UPDATES, "False") => Warning,
                _ => Info,
            };
            let text = if text.is_empty() {
                String::new()
            } else {
                format!(": {text}")
            };
            self.push(level, format!("ClusterVersion {t}={status}{text}"));
        }
        if now.history_top != p.history_top
            && let Some((version, state)) = &now.history_top
        {
            let text = match state {
                UpdateState::Completed => trf!(
                    "event-history-completed",
                    "history: {version} Completed",
                    version = version
                ),
                UpdateState::Partial => trf!(
                    "event-history-partial",
                    "history: {version} Partial (update started)",
                    version = version
                ),
            };
            self.push(Info, text);
        }
        if now.command_at != p.command_at
            && let Some(c) = &snap.last_command
        {
            match &c.result {
                Ok(m) => self.push(
                    Info,
                    trf!(
                        "event-command-done",
                        "command {command}: {m}",
                        command = c.command,
                        m = m
                    ),
                ),
                Err(why) => self.push(
                    Error,
                    trf!(
                        "event-command-refused",
                        "command {command} refused: {why}",
                        command = c.command,
                        why = why
                    ),
                ),
            }
        }
        if now.last_error != p.last_error
            && let Some(e) = &now.last_error
        {
            let e = first_line(e);
            self.push(Warning, trf!("event-error", "error: {e}", e = e));
        }
        self.seen = Some(now);
    }

    fn snapshot_seen(&self, s: &StatusSnapshot) -> Seen {
        let mut conditions = Vec::new();
        let mut history_top = None;
        if let Some(cv) = &s.cluster_version {
            for t in CONDITIONS {
                if let Some(c) = find(&cv.conditions, t) {
                    let r = c.reason();
                    let m = first_line(c.message());
                    let text = match (r.is_empty(), m.is_empty()) {
                        (true, _) => m.to_string(),
                        (false, true) => r.to_string(),
                        (false, false) => format!("{r}: {m}"),
                    };
                    conditions.push((t, c.status.as_str().to_string(), text));
                }
            }
            history_top = cv.history.first().map(|h| (h.version.clone(), h.state));
        }
        Seen {
            state: s.state.clone(),
            mode: s.mode,
            desired: s.desired.as_ref().map(|d| (d.version.clone(), d.image.clone())),
            running: s.running,
            passes: s.counters.passes,
            conditions,
            history_top,
            leader: s.leader,
            holder: s.lease_holder.clone(),
            command_at: s.last_command.as_ref().map(|c| c.at),
            last_error: s.last_error.clone(),
            levels_done: s
                .run_levels
                .iter()
                .filter(|r| r.total > 0 && r.done + r.skipped == r.total)
                .map(|r| r.level)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        openshift::{
            ClusterVersionStatus, Release, UpdateHistory,
            condition::{Condition, ConditionStatus},
        },
        reconcile::api::{CommandOutcome, EngineMode, Failure, RunLevelProgress},
    };

    fn cond(t: &str, s: ConditionStatus, reason: &str, msg: &str) -> Condition {
        Condition {
            type_: t.into(),
            status: s,
            reason: Some(reason.into()),
            message: Some(msg.into()),
            ..Condition::default()
        }
    }

    fn cv(
        progressing: bool,
        failing: bool,
        top: (&str, UpdateState),
    ) -> Option<crate::reconcile::api::ClusterVersionView> {
        use ConditionStatus::{False, True};
        Some(crate::reconcile::api::ClusterVersionView::from(
            ClusterVersionStatus {
                conditions: vec![
                    cond(AVAILABLE, True, "", "Done applying 4.16.3"),
                    cond(
                        PROGRESSING,
                        if progressing { True } else { False },
                        "",
                        "Working towards 4.16.4",
                    ),
                    cond(
                        FAILING,
                        if failing { True } else { False },
                        if failing { "ClusterOperatorDegraded" } else { "" },
                        if failing {
                            "Cluster operator dns is degraded"
                        } else {
                            ""
                        },
                    ),
                ],
                history: vec![UpdateHistory {
                    version: top.0.into(),
                    state: top.1,
                    ..UpdateHistory::default()
                }],
                ..ClusterVersionStatus::default()
            },
        ))
    }

    fn release(v: &str) -> Option<Release> {
        Some(Release {
            version: v.into(),
            image: format!("quay.io/x@{v}"),
            ..Release::default()
        })
    }

    fn texts(log: &EventLog) -> Vec<String> {
        log.events().iter().map(|e| e.text.clone()).collect()
    }

    fn index_of(all: &[String], needle: &str) -> usize {
        all.iter()
            .position(|t| t.contains(needle))
            .unwrap_or_else(|| panic!("no event containing {needle:?} in {all:#?}"))
    }

    #[test]
    fn update_sequence_logs_the_expected_lines_in_order() {
        let mut log = EventLog::new();
        let mut s = StatusSnapshot {
            mode: EngineMode::ActiveApply,
            ..StatusSnapshot::default()
        };
        log.observe(&s);
        s.leader = true;
        s.lease_holder = Some("me_1".into());
        s.state = EngineState::Reconciling;
        s.desired = release("4.16.3");
        s.cluster_version = cv(false, false, ("4.16.3", UpdateState::Completed));
        log.observe(&s);
        s.last_command = Some(CommandOutcome {
            command: "SetDesiredUpdate".into(),
            result: Ok("ClusterVersion version spec patched".into()),
            at: Utc::now(),
        });
        log.observe(&s);
        s.state = EngineState::Updating;
        s.desired = release("4.16.4");
        s.running = true;
        s.cluster_version = cv(true, false, ("4.16.4", UpdateState::Partial));
        log.observe(&s);
        s.running = false;
        s.counters.passes = 1;
        s.failure = Some(Failure {
            reason: "ClusterOperatorUpdating".into(),
            message: "Cluster operator dns is updating versions".into(),
        });
        log.observe(&s);
        s.running = true;
        log.observe(&s);
        s.run_levels = vec![RunLevelProgress {
            level: Some(5),
            total: 3,
            done: 3,
            ..RunLevelProgress::default()
        }];
        log.observe(&s);
        // Observing the same snapshot again adds nothing.
        let n = log.events().len();
        log.observe(&s);
        assert_eq!(log.events().len(), n);
        s.running = false;
        s.counters.passes = 2;
        s.done = 10;
        s.total = 12;
        s.failure = Some(Failure {
            reason: "ClusterOperatorDegraded".into(),
            message: "Cluster operator dns is degraded".into(),
        });
        s.cluster_version = cv(true, true, ("4.16.4", UpdateState::Partial));
        log.observe(&s);
        s.running = true;
        s.run_levels[0].done = 0;
        log.observe(&s);
        s.run_levels[0].done = 3;
        log.observe(&s);
        s.running = false;
        s.counters.passes = 3;
        s.done = 12;
        s.failure = None;
        s.cluster_version = cv(false, false, ("4.16.4", UpdateState::Completed));
        s.state = EngineState::Reconciling;
        log.observe(&s);

        let all = texts(&log);
        assert_eq!(
            all.iter().filter(|t| t.starts_with("run level 05")).count(),
            1,
            "{all:#?}"
        );
        let order = [
            "state Starting",
            "state Starting → Reconciling",
            "desired update accepted: 4.16.3 (quay.io/x@4.16.3)",
            "lease acquired (me_1)",
            "ClusterVersion Progressing=False: Working towards 4.16.4",
            "history: 4.16.3 Completed",
            "command SetDesiredUpdate: ClusterVersion version spec patched",
            "state Reconciling → Updating",
            "desired update accepted: 4.16.4",
            "pass 1 started",
            "ClusterVersion Progressing=True",
            "history: 4.16.4 Partial (update started)",
            "pass 1 incomplete (0/0 done",
            "pass 2 started",
            "run level 05 done (3/3)",
            "pass 2 failed (10/12 done",
            "ClusterVersion Failing=True: ClusterOperatorDegraded: Cluster operator dns is degraded",
            "pass 3 started",
            "state Updating → Reconciling",
            "pass 3 finished: 12/12 done",
            "ClusterVersion Progressing=False",
            "ClusterVersion Failing=False",
            "history: 4.16.4 Completed",
        ];
        // Each expected line is found after the previous one.
        let mut last = 0;
        for want in order {
            last += index_of(&all[last..], want) + 1;
        }
        let failed = log
            .events()
            .iter()
            .find(|e| e.text.starts_with("pass 2 failed"))
            .map(|e| e.level);
        assert_eq!(failed, Some(EventLevel::Error));
        let waiting = log
            .events()
            .iter()
            .find(|e| e.text.starts_with("pass 1 incomplete"))
            .map(|e| e.level);
        assert_eq!(waiting, Some(EventLevel::Info));
        let seqs: Vec<u64> = log.events().iter().map(|e| e.seq).collect();
        assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    }

    #[test]
    fn refused_command_and_lost_lease_are_logged() {
        let mut log = EventLog::new();
        let mut s = StatusSnapshot {
            leader: true,
            ..StatusSnapshot::default()
        };
        log.observe(&s);
        s.last_command = Some(CommandOutcome {
            command: "SetDesiredUpdate".into(),
            result: Err("refused: the engine is watch-only".into()),
            at: Utc::now(),
        });
        s.leader = false;
        s.mode = EngineMode::ActiveApply;
        log.observe(&s);
        let all = texts(&log);
        assert!(
            all.contains(&"lease lost: writes stopped".to_string()),
            "{all:#?}"
        );
        assert!(
            all.contains(&"switched to active-apply (was watch-only)".to_string()),
            "{all:#?}"
        );
        assert!(
            all.contains(&"command SetDesiredUpdate refused: refused: the engine is watch-only".to_string()),
            "{all:#?}"
        );
    }

    #[test]
    fn a_switch_to_watch_only_releases_the_lease_it_does_not_lose_it() {
        let mut log = EventLog::new();
        let mut s = StatusSnapshot {
            mode: EngineMode::ActiveApply,
            leader: true,
            lease_holder: Some("me_1".into()),
            ..StatusSnapshot::default()
        };
        log.observe(&s);
        s.mode = EngineMode::WatchOnly;
        s.leader = false;
        s.lease_holder = None;
        log.observe(&s);
        let all = texts(&log);
        assert!(!all.iter().any(|t| t.contains("lost")), "{all:#?}");
        let tail: Vec<&str> = all.iter().rev().take(2).rev().map(String::as_str).collect();
        assert_eq!(
            tail,
            [
                "switched to watch-only (was active-apply)",
                "lease released: watch-only, writes stopped"
            ]
        );
        let levels: Vec<EventLevel> = log.events().iter().rev().take(2).map(|e| e.level).collect();
        assert_eq!(levels, [EventLevel::Info, EventLevel::Info]);
    }

    /// The same kinds of lines in Russian (the process language at the time of the event):
    /// the fixed words translated, API data (condition types and reasons, messages, versions,
    /// history states, modes, command names) as the API says it.
    #[test]
    fn a_russian_log_translates_its_own_words_and_keeps_the_api_data() {
        use crate::l10n::{Lang, scoped};
        let all = scoped(Lang::Ru, || {
            let mut log = EventLog::new();
            let mut s = StatusSnapshot {
                mode: EngineMode::ActiveApply,
                ..StatusSnapshot::default()
            };
            log.observe(&s);
            s.leader = true;
            s.lease_holder = Some("me_1".into());
            s.state = EngineState::Updating;
            s.desired = release("4.16.4");
            s.running = true;
            s.cluster_version = cv(true, false, ("4.16.4", UpdateState::Partial));
            log.observe(&s);
            s.running = false;
            s.counters.passes = 1;
            s.done = 10;
            s.total = 12;
            s.failure = Some(Failure {
                reason: "ClusterOperatorDegraded".into(),
                message: "Cluster operator dns is degraded".into(),
            });
            s.last_command = Some(CommandOutcome {
                command: "SetDesiredUpdate".into(),
                result: Err("refused: the engine is watch-only".into()),
                at: Utc::now(),
            });
            s.last_error = Some("connection refused".into());
            log.observe(&s);
            s.running = true;
            s.run_levels = vec![RunLevelProgress {
                level: Some(5),
                total: 3,
                done: 3,
                ..RunLevelProgress::default()
            }];
            log.observe(&s);
            s.running = false;
            s.counters.passes = 2;
            s.done = 12;
            s.failure = None;
            s.state = EngineState::Blocked("no ClusterVersion".into());
            s.cluster_version = cv(false, false, ("4.16.4", UpdateState::Completed));
            s.mode = EngineMode::WatchOnly;
            s.leader = false;
            s.lease_holder = None;
            log.observe(&s);
            texts(&log)
        });
        // The pass durations depend on the wall clock: cut them off.
        let all: Vec<String> = all
            .iter()
            .map(|t| match (t.find(" за "), t.find(" с")) {
                (Some(a), Some(b)) if b > a => format!("{}{}", &t[..a], &t[b + " с".len()..]),
                _ => t.clone(),
            })
            .collect();
        let want = [
            "состояние Запуск",
            "состояние Запуск → Обновление",
            "желаемое обновление принято: 4.16.4 (quay.io/x@4.16.4)",
            "Lease получен (me_1)",
            "проход 1 начат",
            "ClusterVersion Available=True: Done applying 4.16.3",
            "ClusterVersion Progressing=True: Working towards 4.16.4",
            "ClusterVersion Failing=False",
            "история обновлений: 4.16.4 Partial (обновление начато)",
            "проход 1 не удался (выполнено 10/12): ClusterOperatorDegraded: Cluster operator dns is degraded",
            "команда SetDesiredUpdate отклонена: refused: the engine is watch-only",
            "ошибка: connection refused",
            "проход 2 начат",
            "уровень запуска 05 пройден (3/3)",
            "состояние Обновление → Заблокирован (no ClusterVersion)",
            "переключён в режим watch-only (был active-apply)",
            "Lease освобождён: watch-only, запись остановлена",
            "проход 2 завершён: выполнено 12/12",
            "ClusterVersion Progressing=False: Working towards 4.16.4",
            "история обновлений: 4.16.4 Completed",
        ];
        assert_eq!(all, want);
        // English is untouched by a Russian log before it.
        let mut log = EventLog::new();
        log.observe(&StatusSnapshot::default());
        assert_eq!(texts(&log), ["state Starting"]);
    }

    #[test]
    fn log_keeps_the_last_event_log_len_events() {
        let mut log = EventLog::new();
        for i in 0..EVENT_LOG_LEN + 5 {
            log.push(EventLevel::Info, format!("e{i}"));
        }
        let ev = log.events();
        assert_eq!(ev.len(), EVENT_LOG_LEN);
        assert_eq!(ev[0].text, "e5");
        assert_eq!(ev[0].seq, 6);
    }
}
