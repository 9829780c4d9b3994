//! The dashboard in Russian (issue 32): every view at 80x24 and 120x40, the help, the
//! mode-switch and request confirmations and a detail popup, as snapshots; the tab line, header
//! and footer hold at 80 columns with the longer Russian words; no English word of cvo's own is
//! left on a Russian screen, and the same app draws English again when the language is English.

use tokio::sync::mpsc;

use super::{
    engine::{engine_app, mid_update},
    *,
};
use crate::l10n::{Lang, scoped};
use crate::reconcile::api::{Command, EngineMode};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// Words of cvo's own English that a Russian screen must not show (API names, condition
/// types, kinds and status words stay in Latin and are not listed).
const ENGLISH: [&str; 17] = [
    "Overview",
    "Operators ",
    "History",
    "Health",
    " scroll",
    " cancel",
    "Target ",
    "Channel ",
    " quit",
    " help",
    "control plane",
    "Engine ",
    "Est. time",
    "more below",
    "manifests",
    " view ",
    "Desired ",
];

fn text_of(app: &App) -> String {
    screen_text(draw(app).backend().buffer()).join("\n")
}

fn english_left(text: &str) -> Vec<&'static str> {
    ENGLISH.iter().copied().filter(|w| text.contains(w)).collect()
}

/// The demo cluster at 4.16.3 (`assets/demo-cluster`): 4.16.4 recommended, 4.16.5
/// conditional with one risk, on the Updates view of an app that can write.
fn updates_app(w: u16, h: u16) -> (App, mpsc::Receiver<Command>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo-cluster");
    let paths: Vec<PathBuf> = ["cv", "co", "mc", "mcp", "node"]
        .iter()
        .map(|k| dir.join(format!("{k}.yaml")))
        .collect();
    let mut s = crate::cluster::snapshot::load(&paths).expect("the demo cluster loads");
    s.source = "context admin@prod".into();
    let mut app = App::new(
        Arc::new(s),
        None,
        Some(
            DateTime::parse_from_rfc3339("2024-07-22T10:00:00Z")
                .map(|t| t.to_utc())
                .expect("time"),
        ),
        Palette::color(),
        (w, h),
    );
    let (tx, rx) = mpsc::channel(4);
    app.commands = Some(tx);
    key(&mut app, KeyCode::Char('6'));
    assert_eq!(app.tab, Tab::Updates);
    (app, rx)
}

#[test]
fn every_view_in_russian_at_80x24_and_120x40() {
    scoped(Lang::Ru, || {
        for (w, h) in SIZES {
            let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), w, h);
            for tab in app.tabs().to_vec() {
                app.update(Action::GotoTab(tab));
                let t = draw(&app);
                let en_name = scoped(Lang::En, || tab.title().to_lowercase());
                let name = format!("ru_{en_name}_{w}x{h}");
                insta::assert_snapshot!(name.clone(), t.backend());
                let lines = screen_text(t.backend().buffer());
                let text = lines.join("\n");
                let left = english_left(&text);
                assert!(left.is_empty(), "{name}: English left {left:?}:\n{text}");
                // The tab line names every view, the front one included, at 80 columns too.
                let tabs = lines.iter().find(|l| l.contains("[1]")).expect("the tab line");
                for t in app.tabs() {
                    assert!(tabs.contains(t.title()), "{name}: tab {} cut: {tabs}", t.title());
                }
                // The footer's hints are whole words: the first ones always fit.
                let footer = lines.last().expect("a footer");
                assert!(
                    footer.contains("q выход") && footer.contains("? справка"),
                    "{name}: {footer}"
                );
            }
        }
    });
}

#[test]
fn help_and_confirmations_in_russian_at_80x24() {
    scoped(Lang::Ru, || {
        let (mut app, _rx) = engine_app(mid_update(EngineMode::WatchOnly), 80, 24);
        key(&mut app, KeyCode::Char('?'));
        insta::assert_snapshot!("ru_help_80x24", draw(&app).backend());
        let text = text_of(&app);
        assert!(text.contains("Общие"), "{text}");
        assert!(text.contains("выход, откуда угодно"), "{text}");
        key(&mut app, KeyCode::Esc);
        key(&mut app, KeyCode::Char('m'));
        insta::assert_snapshot!("ru_confirm_switch_80x24", draw(&app).backend());
        let text = text_of(&app);
        assert!(text.contains("Переключить движок из режима"), "{text}");
        assert!(text.contains("отмена (ничего не отправляется)"), "{text}");
        key(&mut app, KeyCode::Esc);
        key(&mut app, KeyCode::Char('2'));
        key(&mut app, KeyCode::Enter);
        insta::assert_snapshot!("ru_operator_detail_80x24", draw(&app).backend());
        assert!(text_of(&app).contains("Имя"));
    });
}

#[test]
fn request_confirmations_in_russian() {
    scoped(Lang::Ru, || {
        for (w, h) in [(80, 24), (120, 40)] {
            let (mut app, mut rx) = updates_app(w, h);
            insta::assert_snapshot!(format!("ru_updates_demo_{w}x{h}"), draw(&app).backend());
            assert!(key(&mut app, KeyCode::Enter));
            insta::assert_snapshot!(format!("ru_confirm_request_{w}x{h}"), draw(&app).backend());
            let text = text_of(&app);
            assert!(text.contains("Запрос"), "{text}");
            assert!(text.contains("y подтвердить"), "{text}");
            assert!(rx.try_recv().is_err(), "opening the popup sends nothing");
        }
    });
}

/// The same app in English draws the English words again: the language is read at drawing
/// time, the Russian bundle changes nothing for an English reader.
#[test]
fn an_english_screen_stays_english_after_a_russian_one() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 80, 24);
    let ru = scoped(Lang::Ru, || text_of(&app));
    assert!(ru.contains("Обзор"), "{ru}");
    let en = scoped(Lang::En, || text_of(&app));
    assert!(en.contains("[1] Overview") || en.contains("[1]Overview"), "{en}");
    assert!(!en.contains("Обзор"), "{en}");
    app.update(Action::GotoTab(Tab::Operators));
    let en = scoped(Lang::En, || text_of(&app));
    assert!(en.contains("NAME"), "{en}");
}

/// The engine's event log pane in Russian at 80x24: lines the engine's own [`EventLog`]
/// wrote in Russian (state, desired update, Lease, passes, run level, conditions, history,
/// a refused command), with the API's data in Latin.
///
/// [`EventLog`]: crate::reconcile::runtime::events::EventLog
#[test]
fn the_engine_log_pane_in_russian_at_80x24() {
    use crate::reconcile::api::{CommandOutcome, EngineState, Failure, RunLevelProgress};
    use crate::reconcile::runtime::events::EventLog;
    let mut snap = mid_update(EngineMode::ActiveApply);
    let events = scoped(Lang::Ru, || {
        let mut log = EventLog::new();
        let mut s = crate::reconcile::api::StatusSnapshot {
            mode: EngineMode::ActiveApply,
            ..Default::default()
        };
        log.observe(&s);
        s.leader = true;
        s.lease_holder = Some("cvo-demo-7f9c".into());
        s.state = EngineState::Updating;
        s.desired = snap.desired.clone();
        s.cluster_version = snap.cluster_version.clone();
        s.running = true;
        log.observe(&s);
        s.running = false;
        s.counters.passes = 1;
        s.done = 31;
        s.total = 40;
        s.failure = Some(Failure {
            reason: "ClusterOperatorDegraded".into(),
            message: "Cluster operator kube-apiserver is degraded".into(),
        });
        s.last_command = Some(CommandOutcome {
            command: "SetChannel".into(),
            result: Err("channel fast-4.17 is not listed by the release".into()),
            at: chrono::Utc::now(),
        });
        log.observe(&s);
        s.running = true;
        s.run_levels = vec![RunLevelProgress {
            level: Some(10),
            total: 4,
            done: 4,
            ..RunLevelProgress::default()
        }];
        log.observe(&s);
        log.events()
    });
    // Fixed times and no wall-clock pass durations, so the snapshot is stable.
    let base = DateTime::parse_from_rfc3339("2024-07-20T10:40:00Z")
        .map(|t| t.to_utc())
        .expect("time");
    let events: Vec<_> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut e = e.clone();
            e.at = base + chrono::Duration::seconds(i as i64 * 3);
            if let (Some(a), Some(b)) = (e.text.find(" за "), e.text.find(" с)")) {
                e.text.replace_range(a..b + " с".len(), "");
            }
            e
        })
        .collect();
    snap.events = Arc::new(events);
    scoped(Lang::Ru, || {
        // 24 rows show the newest three lines, 48 rows the newest eight (of nine).
        for (h, shown) in [(24u16, 3usize), (48, 8)] {
            let (mut app, _rx) = engine_app(snap.clone(), 80, h);
            if !app.show_log {
                key(&mut app, KeyCode::Char('e'));
            }
            assert!(app.show_log);
            insta::assert_snapshot!(format!("ru_engine_log_80x{h}"), draw(&app).backend());
            let text = text_of(&app);
            let want = [
                "состояние Запуск",
                "состояние Запуск → Обновление",
                "желаемое обновление принято: 4.16.4",
                "Lease получен (cvo-demo-7f9c)",
                "проход 1 начат",
                "проход 1 не удался (выполнено 31/40): ClusterOperatorDegraded",
                "команда SetChannel отклонена: channel fast-4.17",
                "проход 2 начат",
                "уровень запуска 10 пройден (4/4)",
            ];
            for w in &want[want.len() - shown..] {
                assert!(text.contains(w), "80x{h}: {w:?} not on the screen:\n{text}");
            }
            assert!(text.contains("события движка[9]"), "{text}");
            assert!(!text.contains("pass ") && !text.contains("state "), "{text}");
        }
    });
}

/// An update-health insight in Russian: the Health view's rows and the detail popup's
/// message and description, with the data (names, reasons, level and impact words) as oc
/// prints it.
#[test]
fn an_insights_detail_in_russian_at_80x24() {
    scoped(Lang::Ru, || {
        let (mut app, _rx) = engine_app(mid_update(EngineMode::WatchOnly), 80, 24);
        app.update(Action::GotoTab(Tab::Health));
        let text = text_of(&app);
        assert!(
            text.contains("Кластерный оператор machine-config деградиров"),
            "{text}"
        );
        // (The header's FAILING line is the condition's own message, which stays.)
        assert!(
            !text.contains("Cluster Operator machine-config is degraded"),
            "{text}"
        );
        // The paused pool's insight: the last row.
        for _ in 0..3 {
            key(&mut app, KeyCode::Char('j'));
        }
        key(&mut app, KeyCode::Enter);
        insta::assert_snapshot!("ru_insight_detail_80x24", draw(&app).backend());
        let text = text_of(&app);
        assert!(
            text.contains("Устаревшие узлы приостановленного пула машин 'infra'"),
            "{text}"
        );
        assert!(text.contains("Пул машин на паузе: это останавливает"), "{text}");
        assert!(!text.contains("Pool is paused"), "{text}");
    });
}
