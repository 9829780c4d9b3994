//! Dashboard tests: `TestBackend` + insta snapshots (text), cell-style asserts (colour, which
//! text snapshots drop), the UI field notes (26, 28, 29, 33, 34, 35), and `App::update`
//! unit tests (keys in, state out).

use std::{path::PathBuf, sync::Arc};

use chrono::{DateTime, Utc};
use ratatui::{
    Terminal,
    backend::TestBackend,
    buffer::Buffer,
    crossterm::event::{KeyCode, KeyEvent, KeyModifiers},
    style::{Color, Modifier},
};

use super::{
    app::{Action, App, PromptKind},
    model::Dashboard,
    popup::PopupKind,
    tab::Tab,
    theme::Palette,
    view,
};
use crate::{
    cluster::{ClusterState, demo::demo_state},
    openshift::{Condition, ConditionStatus, UpdateState},
};

fn demo() -> ClusterState {
    demo_state().expect("the embedded demo assets load")
}

fn app_with(state: ClusterState, w: u16, h: u16, palette: Palette) -> App {
    App::new(Arc::new(state), None, None, palette, (w, h))
}

fn app_for(state: ClusterState, w: u16, h: u16) -> App {
    app_with(state, w, h, Palette::color())
}

fn draw(app: &App) -> Terminal<TestBackend> {
    let (w, h) = app.size;
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view::render(app, f)).expect("draw");
    t
}

/// The screen as text, one line per row (wide characters counted once).
fn screen_text(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (0..area.height)
        .map(|y| {
            let mut line = String::new();
            let mut skip = 0;
            for x in 0..area.width {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let sym = buf[(x, y)].symbol();
                line.push_str(sym);
                skip = unicode_width::UnicodeWidthStr::width(sym).saturating_sub(1);
            }
            line
        })
        .collect()
}

/// Position of the first cell where `needle` starts.
fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    let area = buf.area;
    for y in 0..area.height {
        for x in 0..area.width {
            let mut s = String::new();
            let mut cx = x;
            while cx < area.width && s.len() < needle.len() {
                s.push_str(buf[(cx, y)].symbol());
                cx += 1;
            }
            if s.starts_with(needle) {
                return Some((x, y));
            }
        }
    }
    None
}

/// Position of the operators-table row whose NAME column (x = 8) starts with `name`.
fn find_row(buf: &Buffer, name: &str) -> (u16, u16) {
    (0..buf.area.height)
        .find(|&y| {
            let s: String = (8..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
            s.starts_with(name)
        })
        .map(|y| (8, y))
        .unwrap_or_else(|| panic!("{name} is a row on screen"))
}

fn key(app: &mut App, code: KeyCode) -> bool {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn chars(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn fixtures_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/oc-upgrade-status");
    if dir.is_dir() {
        Some(dir)
    } else {
        skip_notice(&format!(
            "{} is missing (shared fixtures not checked out)",
            dir.display()
        ));
        None
    }
}

/// Says on stderr, past libtest's capture (which hides `println!` of passing tests), that the
/// running test skipped something, naming the test (libtest names each test's thread after it).
fn skip_notice(reason: &str) {
    use std::io::Write;
    let current = std::thread::current();
    let test = current.name().unwrap_or("<unnamed test>");
    let _ = writeln!(std::io::stderr(), "skipping {test}: {reason}");
}

/// The `oc adm upgrade status` fixture scenario `name` (its five input files).
fn fixture(name: &str) -> Option<ClusterState> {
    let dir = fixtures_dir()?;
    let paths: Vec<PathBuf> = ["cv", "co", "mc", "mcp", "node"]
        .iter()
        .map(|k| dir.join(format!("{name}-{k}.yaml")))
        .collect();
    Some(crate::cluster::snapshot::load(&paths).expect("fixture loads"))
}

fn with_cv(state: &mut ClusterState, f: impl FnOnce(&mut crate::openshift::ClusterVersion)) {
    f(state
        .cluster_version
        .as_mut()
        .expect("state has a ClusterVersion"));
}

fn set_condition(conds: &mut Vec<Condition>, type_: &str, status: ConditionStatus, reason: &str, msg: &str) {
    conds.retain(|c| c.type_ != type_);
    conds.push(Condition {
        type_: type_.into(),
        status,
        reason: Some(reason.into()),
        message: Some(msg.into()),
        last_transition_time: DateTime::parse_from_rfc3339("2024-07-20T10:00:00Z")
            .ok()
            .map(|t| t.to_utc()),
        ..Default::default()
    });
}

// ---------------------------------------------------------------- snapshots

#[test]
fn snapshot_demo_main_80x24() {
    let app = app_for(demo(), 80, 24);
    insta::assert_snapshot!("demo_main_80x24", draw(&app).backend());
}

#[test]
fn snapshot_demo_main_160x48() {
    let app = app_for(demo(), 160, 48);
    insta::assert_snapshot!("demo_main_160x48", draw(&app).backend());
}

#[test]
fn snapshot_demo_operators_and_nodes_160x48() {
    let mut app = app_for(demo(), 160, 48);
    app.update(Action::GotoTab(Tab::Operators));
    insta::assert_snapshot!("demo_operators_160x48", draw(&app).backend());
    app.update(Action::GotoTab(Tab::Nodes));
    insta::assert_snapshot!("demo_nodes_160x48", draw(&app).backend());
    app.update(Action::GotoTab(Tab::History));
    insta::assert_snapshot!("demo_history_160x48", draw(&app).backend());
}

#[test]
fn snapshot_fixture_degraded() {
    let Some(state) = fixture("4.14.1-degraded") else {
        return;
    };
    let app = app_for(state.clone(), 80, 24);
    insta::assert_snapshot!("fixture_degraded_80x24", draw(&app).backend());
    let mut app = app_for(state, 160, 48);
    insta::assert_snapshot!("fixture_degraded_160x48", draw(&app).backend());
    app.update(Action::GotoTab(Tab::Operators));
    insta::assert_snapshot!("fixture_degraded_operators_160x48", draw(&app).backend());
}

/// Every `oc adm upgrade status` fixture renders in every view at a few sizes without panics,
/// with the header on screen.
#[test]
fn every_fixture_renders_in_every_view() {
    let Some(dir) = fixtures_dir() else { return };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixture dir")
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .into_string()
                .ok()?
                .strip_suffix("-cv.yaml")
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    for name in names {
        let Some(state) = fixture(&name) else { return };
        for (w, h) in [(80u16, 24u16), (160, 48), (60, 15)] {
            let mut app = app_for(state.clone(), w, h);
            for tab in Tab::ALL {
                app.update(Action::GotoTab(tab));
                let lines = screen_text(draw(&app).backend().buffer());
                assert!(
                    ["Assessment ", "FAILING ", "Update ", "Cluster "]
                        .iter()
                        .any(|p| lines[2].starts_with(p)),
                    "{name} {w}x{h} {tab:?}: {}",
                    lines[2]
                );
                key(&mut app, KeyCode::Enter);
                let _ = draw(&app);
                key(&mut app, KeyCode::Char('y'));
                let _ = draw(&app);
                key(&mut app, KeyCode::Esc);
            }
        }
    }
}

#[test]
fn snapshot_help_overlay() {
    let mut app = app_for(demo(), 80, 24);
    key(&mut app, KeyCode::Char('?'));
    assert!(matches!(
        app.popup.as_ref().map(|p| &p.kind),
        Some(PopupKind::Help)
    ));
    insta::assert_snapshot!("help_80x24", draw(&app).backend());
}

#[test]
fn snapshot_filter() {
    let mut app = app_for(demo(), 80, 24);
    key(&mut app, KeyCode::Char('2'));
    key(&mut app, KeyCode::Char('/'));
    chars(&mut app, "machine");
    insta::assert_snapshot!("filter_typing_80x24", draw(&app).backend());
    key(&mut app, KeyCode::Enter);
    insta::assert_snapshot!("filter_applied_80x24", draw(&app).backend());
}

#[test]
fn snapshot_operator_detail_and_yaml() {
    let mut app = app_for(demo(), 100, 30);
    key(&mut app, KeyCode::Char('2'));
    key(&mut app, KeyCode::Char('/'));
    chars(&mut app, "machine-config");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    let Some(popup) = &app.popup else {
        panic!("Enter opens the operator details")
    };
    assert_eq!(popup.title, "clusteroperator/machine-config");
    insta::assert_snapshot!("operator_detail_100x30", draw(&app).backend());
    key(&mut app, KeyCode::Char('y'));
    assert!(matches!(
        app.popup.as_ref().map(|p| &p.kind),
        Some(PopupKind::Yaml(_))
    ));
    insta::assert_snapshot!("operator_yaml_100x30", draw(&app).backend());
}

#[test]
fn snapshot_node_detail_shows_full_message() {
    let mut app = app_for(demo(), 100, 30);
    key(&mut app, KeyCode::Char('3'));
    key(&mut app, KeyCode::Char('/'));
    chars(&mut app, "Degraded");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    let t = draw(&app);
    let text = screen_text(t.backend().buffer()).join("\n");
    // Field note 28: the detail pane has the full multi-line message.
    assert!(text.contains("allows 0 disruptions"), "{text}");
    insta::assert_snapshot!("node_detail_100x30", t.backend());
}

// ---------------------------------------------------------------- colours

#[test]
fn operator_rows_are_coloured_by_health_with_a_status_word() {
    let mut app = app_for(demo(), 160, 48);
    app.update(Action::GotoTab(Tab::Operators));
    let t = draw(&app);
    let buf = t.backend().buffer();
    let cell_at = |name: &str| {
        let (x, y) = find_row(buf, name);
        (
            buf[(x, y)].fg,
            buf[(x.saturating_sub(7), y)].symbol().to_owned(),
            y,
        )
    };
    let (fg, _, y) = cell_at("machine-config ");
    assert_eq!(fg, Color::Red, "Degraded row is red");
    let status: String = (1..6).map(|x| buf[(x, y)].symbol()).collect();
    assert_eq!(status.trim(), "DEGR", "never colour alone: the status word");
    let (fg, _, _) = cell_at("dns ");
    assert_eq!(fg, Color::Yellow, "Progressing row is amber");
    let (fg, _, _) = cell_at("cloud-credential");
    assert_eq!(fg, Color::Magenta, "Upgradeable=False row is magenta");
    let (fg, _, y) = cell_at("authentication");
    assert_eq!(fg, Color::Reset, "healthy rows keep the terminal's colour");
    assert_eq!(buf[(1, y)].fg, Color::Green, "the OK word is green");
}

#[test]
fn headline_failing_is_red_and_bold() {
    let app = app_for(demo(), 120, 40);
    let t = draw(&app);
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "FAILING").expect("headline on screen");
    assert_eq!(y, 2);
    assert_eq!(buf[(x, y)].fg, Color::Red);
    assert!(buf[(x, y)].modifier.contains(Modifier::BOLD));
}

#[test]
fn no_color_palette_has_no_colours_anywhere() {
    let mut app = app_with(
        demo(),
        120,
        40,
        Palette::for_no_color(Some(std::ffi::OsStr::new("1"))),
    );
    for tab in Tab::ALL {
        app.update(Action::GotoTab(tab));
        let t = draw(&app);
        for cell in t.backend().buffer().content() {
            assert!(matches!(cell.fg, Color::Reset), "fg {:?} in {tab:?}", cell.fg);
            assert!(matches!(cell.bg, Color::Reset), "bg {:?} in {tab:?}", cell.bg);
        }
    }
    // State still shows: the status word, and bold for errors.
    app.update(Action::GotoTab(Tab::Operators));
    let t = draw(&app);
    let buf = t.backend().buffer();
    let (_, y) = find_row(buf, "machine-config ");
    let status: String = (1..6).map(|x| buf[(x, y)].symbol()).collect();
    assert_eq!(status.trim(), "DEGR");
    assert!(buf[(1, y)].modifier.contains(Modifier::BOLD));
}

// ---------------------------------------------------------------- field notes

/// Field note 26: no Completed history entry → say so, never show the desired version as
/// current, never go blank or panic; also with no history at all.
#[test]
fn field_note_26_no_completed_history() {
    let mut state = demo();
    with_cv(&mut state, |cv| {
        for h in &mut cv.status.history {
            h.state = UpdateState::Partial;
        }
    });
    let app = app_for(state.clone(), 120, 40);
    assert_eq!(app.dash.current_version, None);
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("Version no completed update"), "{text}");
    assert!(text.contains("Target 4.16.4"), "{text}");

    with_cv(&mut state, |cv| cv.status.history.clear());
    let mut app = app_for(state, 120, 40);
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("no completed update"), "{text}");
    app.update(Action::GotoTab(Tab::History));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("no update history"), "{text}");
    key(&mut app, KeyCode::Enter); // nothing selected: no popup, no panic
    assert!(app.popup.is_none());
}

/// Field note 28: a multi-line message stays on one line per cell; alignment holds.
#[test]
fn field_note_28_multiline_message_one_line_per_cell() {
    let mut app = app_for(demo(), 160, 48);
    app.update(Action::GotoTab(Tab::Operators));
    let t = draw(&app);
    let lines = screen_text(t.backend().buffer());
    let mc = lines
        .iter()
        .position(|l| l.contains("│DEGR   machine-config"))
        .expect("machine-config row");
    assert!(
        lines[mc + 1].contains("│OK     marketplace"),
        "next row follows directly: {}",
        lines[mc + 1]
    );
    // The second line of the message is not on screen as a row of its own.
    assert!(
        !lines
            .iter()
            .any(|l| l.trim_start_matches('│').starts_with("Pool worker"))
    );
    assert!(
        lines[mc].contains('…'),
        "the truncated message ends with an ellipsis"
    );
    for l in &lines[6..47] {
        assert!(
            l.ends_with('│') || l.ends_with('┐') || l.ends_with('┘'),
            "border intact: {l}"
        );
    }
    // Node table too.
    app.update(Action::GotoTab(Tab::Nodes));
    let lines = screen_text(draw(&app).backend().buffer());
    let n = lines
        .iter()
        .position(|l| l.contains("ip-10-0-87-31"))
        .expect("degraded node row");
    assert!(
        lines[n + 1].contains("ip-10-0-"),
        "next node row follows: {}",
        lines[n + 1]
    );
    assert!(!lines.iter().any(|l| l.contains("│error when evicting")));
}

/// Field note 29: Failing wins the headline over Progressing; progress stays visible.
#[test]
fn field_note_29_failing_wins_over_progressing() {
    let app = app_for(demo(), 120, 40);
    assert_eq!(app.dash.headline.word, "FAILING");
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("FAILING  ClusterOperatorDegraded: "), "{text}");
    assert!(
        text.contains("Assessment Progressing · control plane 94% · Operators"),
        "{text}"
    );

    // Without Failing, the control-plane assessment is the headline.
    let mut state = demo();
    with_cv(&mut state, |cv| {
        set_condition(
            &mut cv.status.conditions,
            "Failing",
            ConditionStatus::False,
            "",
            "",
        );
    });
    let app = app_for(state, 120, 40);
    assert_ne!(app.dash.headline.word, "FAILING");
    assert!(app.dash.headline.word.starts_with("Progressing") || app.dash.headline.word == "Stalled");

    // Without an assessment (no ClusterOperators) the fallback follows the same rule.
    let mut state = demo();
    state.cluster_operators.clear();
    let app = app_for(state, 120, 40);
    assert_eq!(app.dash.headline.word, "FAILING");
}

/// "Assessment" on screen always carries the value `cvo status` prints as `Assessment:`;
/// the Failing condition is labelled as such.
#[test]
fn assessment_word_is_the_one_cvo_status_prints() {
    let mut states = vec![("demo", demo())];
    if let Some(s) = fixture("4.14.1-degraded") {
        states.push(("4.14.1-degraded", s));
    }
    for (name, state) in states {
        let app = app_for(state.clone(), 120, 40);
        let a = crate::assess::assess(&state, None, app.now);
        let want = format!("Assessment {}", a.control_plane.assessment.as_str());
        let text = screen_text(draw(&app).backend().buffer()).join("\n");
        assert!(text.contains(&want), "{name}: want {want:?}\n{text}");
        for (i, _) in text.match_indices("Assessment ") {
            assert!(text[i..].starts_with(&want), "{name}: {:?}", &text[i..i + 30]);
        }
        assert!(text.contains("FAILING  ClusterOperator"), "{name}\n{text}");
        assert!(!text.contains("still running"), "{name}\n{text}");
    }
}

/// Field note 27: once the control plane is done, worker progress stays in the headline until
/// every pool (paused ones included) is at the target.
#[test]
fn field_note_27_workers_keep_the_update_visible() {
    let mut state = demo();
    with_cv(&mut state, |cv| {
        set_condition(
            &mut cv.status.conditions,
            "Failing",
            ConditionStatus::False,
            "",
            "",
        );
        set_condition(
            &mut cv.status.conditions,
            "Progressing",
            ConditionStatus::False,
            "",
            "Cluster version is 4.16.4",
        );
        cv.status.history[0].state = UpdateState::Completed;
        cv.status.history[0].completion_time = cv.status.history[0]
            .started_time
            .map(|t| t + chrono::Duration::hours(1));
    });
    for co in &mut state.cluster_operators {
        for v in &mut co.status.versions {
            if v.name == "operator" {
                v.version = "4.16.4".into();
            }
        }
        set_condition(
            &mut co.status.conditions,
            "Progressing",
            ConditionStatus::False,
            "AsExpected",
            "",
        );
        set_condition(
            &mut co.status.conditions,
            "Degraded",
            ConditionStatus::False,
            "AsExpected",
            "",
        );
    }
    let app = app_for(state, 120, 40);
    assert_eq!(app.dash.current_version.as_deref(), Some("4.16.4"));
    assert_eq!(app.dash.headline.word, "Progressing", "{:?}", app.dash.headline);
    let detail = &app.dash.headline.detail;
    assert!(
        detail.contains("control plane Completed (updated to 4.16.4)"),
        "{detail}"
    );
    assert!(
        detail.contains("worker 1/3") && detail.contains("infra 0/1 paused"),
        "{detail}"
    );
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("infra 0/1 paused"), "{text}");
}

/// Field note 33: ratios above 1 (or not finite) never panic and read "over 100 %".
#[test]
fn field_note_33_ratio_over_one() {
    for ratio in [1.5, f64::INFINITY, f64::NAN, -0.5, 1.0, 0.0] {
        let mut app = app_for(demo(), 80, 24);
        if let Some(c) = &mut app.dash.completion {
            c.ratio = ratio;
        }
        let text = screen_text(draw(&app).backend().buffer()).join("\n");
        if ratio > 1.0 && ratio.is_finite() {
            assert!(text.contains("over 100%"), "{text}");
        }
    }
    assert_eq!(super::model::percent_label(1.5), "over 100%");
    assert_eq!(super::model::percent_label(f64::NAN), "n/a");
    assert!((super::model::clamp_ratio(7.0) - 1.0).abs() < f64::EPSILON);
    assert!(super::model::clamp_ratio(f64::NAN).abs() < f64::EPSILON);
}

/// Field note 34: CJK and emoji (with joiners and variation selectors) never break borders.
#[test]
fn field_note_34_wide_text_keeps_borders() {
    let mut state = demo();
    let co = &mut state.cluster_operators[0];
    co.metadata.name = Some("认证-オペレーター-👩‍💻".into());
    for c in &mut co.status.conditions {
        if c.type_ == "Available" {
            c.message = Some("正常です ✅ all good 👨‍👩‍👧‍👦 ⚠️ résumé 🇩🇪 done\tand\r\nmore".into());
        }
    }
    state.nodes[0].metadata.name = Some("节点-一号-🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀".into());
    for (w, h) in [(80u16, 24u16), (160, 48), (61, 15)] {
        let mut app = app_for(state.clone(), w, h);
        for tab in [Tab::Operators, Tab::Nodes] {
            app.update(Action::GotoTab(tab));
            let t = draw(&app);
            let buf = t.backend().buffer();
            for y in 6..h - 1 {
                let right = buf[(w - 1, y)].symbol();
                assert!(
                    matches!(right, "│" | "┐" | "┘"),
                    "{w}x{h} {tab:?} row {y} ends with {right:?}"
                );
                let left = buf[(0, y)].symbol();
                assert!(
                    matches!(left, "│" | "┌" | "└"),
                    "{w}x{h} {tab:?} row {y} starts with {left:?}"
                );
            }
        }
    }
    let mut app = app_for(state, 80, 24);
    app.update(Action::GotoTab(Tab::Operators));
    insta::assert_snapshot!("wide_text_operators_80x24", draw(&app).backend());
}

/// Field note 35: below the minimum size one line says so; growing again redraws fully.
#[test]
fn field_note_35_too_small_terminal() {
    let mut app = app_for(demo(), 50, 10);
    let t = draw(&app);
    let lines = screen_text(t.backend().buffer());
    assert!(lines[0].starts_with("terminal too small: 50x10"), "{}", lines[0]);
    assert!(lines[1..].iter().all(|l| l.trim().is_empty()));
    for (w, h) in [(0u16, 0u16), (1, 1), (59, 40), (200, 14), (60, 15)] {
        app.update(Action::Resize(w, h));
        if w > 0 && h > 0 {
            let _ = draw(&app);
        }
    }
    app.update(Action::Resize(60, 15));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("FAILING  ClusterOperatorDegraded"), "{text}");
}

// ---------------------------------------------------------------- App::update

#[test]
fn help_opens_with_question_mark_and_closes_with_esc_or_q() {
    let mut app = app_for(demo(), 80, 24);
    assert!(key(&mut app, KeyCode::Char('?')));
    assert!(app.popup.is_some());
    assert!(key(&mut app, KeyCode::Esc));
    assert!(app.popup.is_none());
    key(&mut app, KeyCode::Char('?'));
    key(&mut app, KeyCode::Char('q'));
    assert!(app.popup.is_none());
    assert!(!app.quit, "q closes the popup first");
    key(&mut app, KeyCode::Char('q'));
    assert!(app.quit, "q at the root quits");
}

#[test]
fn help_is_generated_from_the_key_registry() {
    let mut app = app_for(demo(), 120, 60);
    key(&mut app, KeyCode::Char('?'));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    for b in super::keys::BINDINGS {
        if b.engine_only {
            assert!(!text.contains(b.desc), "no engine, no engine key: {}", b.desc);
            continue;
        }
        assert!(text.contains(b.label), "help lists {}", b.label);
        assert!(text.contains(b.desc), "help describes {}", b.desc);
    }
}

#[test]
fn filter_narrows_rows_and_esc_clears() {
    let mut app = app_for(demo(), 120, 40);
    key(&mut app, KeyCode::Char('2'));
    assert_eq!(app.tab, Tab::Operators);
    let all = app.visible_rows(Tab::Operators).len();
    key(&mut app, KeyCode::Char('/'));
    assert_eq!(app.prompt.as_ref().map(|p| p.kind), Some(PromptKind::Filter));
    chars(&mut app, "kube");
    let rows = app.visible_rows(Tab::Operators);
    // kube-apiserver, -controller-manager, -scheduler, -storage-version-migrator, and network
    // (its message names ovn-kubernetes): the filter matches every column.
    assert_eq!(rows.len(), 5);
    key(&mut app, KeyCode::Backspace);
    assert_eq!(app.view().filter, "kub");
    key(&mut app, KeyCode::Enter);
    assert!(app.prompt.is_none());
    assert_eq!(app.view().filter, "kub", "Enter keeps the filter");
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("clusteroperators[5/33] </kub>"), "{text}");
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.view().filter, "");
    assert_eq!(app.visible_rows(Tab::Operators).len(), all);
    // Inverted filter, and Esc while typing clears too.
    key(&mut app, KeyCode::Char('/'));
    chars(&mut app, "!OK");
    assert_eq!(
        app.visible_rows(Tab::Operators).len(),
        5,
        "DEGR, PROG x2, PEND, NOUP"
    );
    key(&mut app, KeyCode::Esc);
    assert!(app.prompt.is_none());
    assert_eq!(app.view().filter, "");
    // Letters typed in the prompt are text, not commands.
    key(&mut app, KeyCode::Char('/'));
    chars(&mut app, "q?jk");
    assert!(!app.quit);
    assert!(app.popup.is_none());
    assert_eq!(app.view().filter, "q?jk");
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("no rows match the filter 'q?jk'"), "{text}");
}

#[test]
fn shift_s_sorts_by_severity_and_back() {
    let mut app = app_for(demo(), 120, 40);
    key(&mut app, KeyCode::Char('2'));
    let names = |app: &App| -> Vec<String> {
        app.visible_rows(Tab::Operators)
            .iter()
            .map(|&i| app.dash.operators[i].name.clone())
            .collect()
    };
    assert_eq!(names(&app)[0], "authentication");
    app.handle_key(KeyEvent::new(KeyCode::Char('S'), KeyModifiers::SHIFT));
    assert!(app.view().by_severity);
    assert_eq!(
        names(&app)[0],
        "machine-config",
        "the degraded operator comes first"
    );
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("clusteroperators[33] ↓severity"), "{text}");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        app.popup.as_ref().map(|p| p.title.as_str()),
        Some("clusteroperator/machine-config")
    );
    key(&mut app, KeyCode::Esc);
    app.handle_key(KeyEvent::new(KeyCode::Char('S'), KeyModifiers::SHIFT));
    assert_eq!(names(&app)[0], "authentication");
}

#[test]
fn command_line_switches_views_and_quits() {
    let mut app = app_for(demo(), 120, 40);
    for (cmd, tab) in [
        ("co", Tab::Operators),
        ("nodes", Tab::Nodes),
        ("history", Tab::History),
        ("cv", Tab::Overview),
    ] {
        key(&mut app, KeyCode::Char(':'));
        chars(&mut app, cmd);
        key(&mut app, KeyCode::Enter);
        assert_eq!(app.tab, tab, ":{cmd}");
    }
    key(&mut app, KeyCode::Char(':'));
    chars(&mut app, "bogus");
    key(&mut app, KeyCode::Enter);
    assert!(
        app.flash
            .as_ref()
            .is_some_and(|(m, _)| m.contains("unknown command ':bogus'"))
    );
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("unknown command"), "{text}");
    key(&mut app, KeyCode::Char('j'));
    assert!(app.flash.is_none(), "any key clears the flash");
    key(&mut app, KeyCode::Char(':'));
    key(&mut app, KeyCode::Esc);
    assert!(app.prompt.is_none() && !app.quit);
    key(&mut app, KeyCode::Char(':'));
    key(&mut app, KeyCode::Backspace);
    assert!(app.prompt.is_none(), "Backspace on an empty prompt closes it");
    key(&mut app, KeyCode::Char(':'));
    chars(&mut app, "q");
    key(&mut app, KeyCode::Enter);
    assert!(app.quit);
}

#[test]
fn ctrl_c_quits_from_every_mode() {
    for setup in ["", "?", "/", ":"] {
        let mut app = app_for(demo(), 80, 24);
        chars(&mut app, setup);
        app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
        assert!(app.quit, "after {setup:?}");
    }
}

#[test]
fn navigation_moves_and_scrolls_the_selection() {
    let mut app = app_for(demo(), 80, 24);
    key(&mut app, KeyCode::Char('2'));
    let n = app.visible_rows(Tab::Operators).len();
    let page = app.page_rows();
    assert!(page < n, "the demo has more operators than fit at 80x24");
    assert!(
        !key(&mut app, KeyCode::Char('k')),
        "already at the top: nothing changes"
    );
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Down);
    assert_eq!(app.view().selected, 2);
    key(&mut app, KeyCode::Char('G'));
    assert_eq!(app.view().selected, n - 1);
    assert_eq!(app.view().offset, n - page, "the last row is visible");
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("storage"), "{text}");
    key(&mut app, KeyCode::Char('g'));
    assert_eq!((app.view().selected, app.view().offset), (0, 0));
    key(&mut app, KeyCode::PageDown);
    assert_eq!(app.view().selected, page);
    key(&mut app, KeyCode::PageUp);
    assert_eq!(app.view().selected, 0);
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Home);
    assert_eq!(app.view().selected, 0);
    // Selections are per view.
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.tab, Tab::Nodes);
    assert_eq!(app.view().selected, 0);
    key(&mut app, KeyCode::BackTab);
    assert_eq!(app.view().selected, 1);
    // Shrinking the terminal keeps the selection visible.
    key(&mut app, KeyCode::Char('G'));
    app.update(Action::Resize(80, 16));
    let v = app.view();
    assert!(v.selected >= v.offset && v.selected < v.offset + app.page_rows());
}

#[test]
fn enter_opens_details_esc_goes_back_and_popup_scrolls() {
    let mut app = app_for(demo(), 80, 24);
    key(&mut app, KeyCode::Char('2'));
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        app.popup.as_ref().map(|p| p.title.as_str()),
        Some("clusteroperator/authentication")
    );
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(app.popup.as_ref().map(|p| p.scroll), Some(1));
    key(&mut app, KeyCode::Char('G'));
    let max = app.popup_max_scroll();
    assert_eq!(app.popup.as_ref().map(|p| p.scroll), Some(max));
    assert!(!key(&mut app, KeyCode::Char('j')), "cannot scroll past the end");
    key(&mut app, KeyCode::Esc);
    assert!(app.popup.is_none());
    assert_eq!(app.tab, Tab::Operators, "Esc closes the popup and keeps the view");
    // y straight from the table shows the YAML.
    key(&mut app, KeyCode::Char('y'));
    let Some(PopupKind::Yaml(y)) = app.popup.as_ref().map(|p| &p.kind) else {
        panic!("yaml popup")
    };
    assert!(y.contains("name: authentication"));
}

#[test]
fn every_view_has_something_to_show_in_the_demo() {
    let app = app_for(demo(), 120, 40);
    let d: &Dashboard = &app.dash;
    assert!(!d.conditions.is_empty());
    assert!(d.operators.len() >= 30);
    assert!(!d.history.is_empty());
    assert!(d.pools.len() >= 2);
    assert!(!d.nodes.is_empty());
    assert!(!d.insights.is_empty());
    assert!(d.completion.is_some());
    assert!(d.channel.is_some());
    for tab in Tab::ALL {
        let mut app = app_for(demo(), 120, 40);
        app.update(Action::GotoTab(tab));
        key(&mut app, KeyCode::Enter);
        assert!(app.popup.is_some(), "Enter shows details in {tab:?}");
    }
}

#[test]
fn static_feeds_ignore_the_clock_so_idle_means_no_redraw() {
    let mut app = app_for(demo(), 80, 24);
    assert!(!app.follows_clock());
    assert!(!app.update(Action::Tick(Utc::now())));
    assert!(
        !app.update(Action::Resize(80, 24)),
        "same size: nothing to redraw"
    );
    assert!(!key(&mut app, KeyCode::F(5)), "unbound keys change nothing");
    let now = app.now;
    assert_eq!(
        now.format("%H:%M:%S").to_string(),
        "10:12:03",
        "static snapshot time"
    );
}

#[test]
fn live_feed_follows_the_clock_and_reports_api_errors() {
    let mut state = demo();
    let since = DateTime::parse_from_rfc3339("2024-07-20T10:20:00Z")
        .map(|t| t.to_utc())
        .expect("time");
    state.feed = crate::cluster::FeedStatus::Live {
        synced: true,
        error: Some(crate::cluster::FeedError {
            message: "connection refused".into(),
            since,
        }),
    };
    let mut app = app_for(state, 120, 40);
    assert!(app.follows_clock());
    assert!(app.update(Action::Tick(since + chrono::Duration::minutes(5))));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(
        text.contains("API unreachable since 2024-07-20 10:20:00 UTC (5m0s ago): connection refused"),
        "{text}"
    );
}

#[test]
fn live_feed_before_the_first_list_says_syncing() {
    let state = ClusterState {
        source: "context admin@prod".into(),
        feed: crate::cluster::FeedStatus::Live {
            synced: false,
            error: None,
        },
        ..Default::default()
    };
    let app = app_for(state, 100, 30);
    assert_eq!(app.dash.headline.word, "Syncing");
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("context admin@prod │ live, syncing…"), "{text}");
}

#[test]
fn new_state_keeps_selection_in_range() {
    let mut app = app_for(demo(), 80, 24);
    key(&mut app, KeyCode::Char('2'));
    key(&mut app, KeyCode::Char('G'));
    let mut smaller = demo();
    smaller.cluster_operators.truncate(3);
    app.update(Action::State(Arc::new(smaller)));
    assert_eq!(app.view().selected, 2);
    app.update(Action::State(Arc::new(ClusterState::default())));
    assert_eq!(app.view().selected, 0);
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("No ClusterVersion"), "{text}");
}

/// No key sequence panics, at any size, in any view (a cheap deterministic fuzz).
#[test]
fn random_keys_never_panic() {
    let keys = [
        KeyCode::Char('j'),
        KeyCode::Char('k'),
        KeyCode::Char('G'),
        KeyCode::Char('g'),
        KeyCode::Char('/'),
        KeyCode::Char(':'),
        KeyCode::Char('?'),
        KeyCode::Char('y'),
        KeyCode::Char('x'),
        KeyCode::Char('3'),
        KeyCode::Char('5'),
        KeyCode::Enter,
        KeyCode::Esc,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::PageDown,
        KeyCode::PageUp,
        KeyCode::Backspace,
        KeyCode::Up,
        KeyCode::Down,
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for (w, h) in [(60u16, 15u16), (80, 24), (33, 7), (200, 60)] {
        let mut app = app_for(demo(), w, h);
        for _ in 0..400 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let k = keys[usize::try_from(seed % keys.len() as u64).unwrap_or(0)];
            key(&mut app, k);
            app.quit = false;
            let _ = draw(&app);
        }
    }
}

// ---------------------------------------------------------------- the event loop

mod event_loop {
    use std::{io, time::Duration};

    use futures::{StreamExt, channel::mpsc, stream};
    use ratatui::crossterm::event::Event;
    use tokio::sync::watch;

    use super::*;
    use crate::ui::{LoopStats, UiOptions, event_loop};

    fn static_opts() -> UiOptions {
        UiOptions {
            feed: crate::cluster::static_feed(demo()),
            alerts: None,
            now: None,
            engine: None,
        }
    }

    fn press(c: char) -> io::Result<Event> {
        Ok(Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)))
    }

    async fn run_loop(
        t: &mut Terminal<TestBackend>,
        events: impl futures::Stream<Item = io::Result<Event>> + Unpin,
        opts: UiOptions,
        signals: impl std::future::Future<Output = &'static str>,
    ) -> LoopStats {
        tokio::time::timeout(
            Duration::from_secs(10),
            event_loop(t, events, opts, Palette::color(), signals),
        )
        .await
        .expect("the loop ends within 10 s")
        .expect("the loop ends without error")
    }

    #[tokio::test]
    async fn exits_when_input_ends() {
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let stats = run_loop(&mut t, stream::empty(), static_opts(), std::future::pending()).await;
        assert_eq!(
            stats.frames, 1,
            "one first frame, then the end of input (tty EOF) ends the loop"
        );
    }

    #[tokio::test]
    async fn quits_on_q_and_draws_only_on_change() {
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        // '2' changes the view, 'k' at the top changes nothing, 'q' quits.
        let events = stream::iter(vec![press('2'), press('k'), press('q')]).chain(stream::pending());
        let stats = run_loop(&mut t, events, static_opts(), std::future::pending()).await;
        assert_eq!(
            stats.frames, 3,
            "first frame, after '2', after 'q'; none for the no-op 'k'"
        );
        let text = screen_text(t.backend().buffer()).join("\n");
        assert!(text.contains("clusteroperators[33]"), "{text}");
    }

    #[tokio::test]
    async fn exits_on_signal() {
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let sighup = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            "SIGHUP"
        };
        let stats = run_loop(&mut t, stream::pending(), static_opts(), sighup).await;
        assert_eq!(stats.frames, 1);
    }

    #[tokio::test]
    async fn idle_means_no_redraw() {
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let stop = async {
            tokio::time::sleep(Duration::from_millis(1200)).await;
            "test"
        };
        let stats = run_loop(&mut t, stream::pending(), static_opts(), stop).await;
        assert_eq!(stats.frames, 1, "a static snapshot with no input is drawn once");
    }

    #[tokio::test]
    async fn resize_redraws_at_the_new_size() {
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let (tx, rx) = mpsc::unbounded::<io::Result<Event>>();
        let opts = static_opts();
        let driver = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            "test"
        };
        // Resize the backend first (what the terminal does), then deliver the event.
        t.backend_mut().resize(50, 10);
        tx.unbounded_send(Ok(Event::Resize(50, 10))).expect("send");
        let stats = run_loop(&mut t, rx, opts, driver).await;
        assert_eq!(stats.frames, 2);
        let lines = screen_text(t.backend().buffer());
        assert!(lines[0].starts_with("terminal too small: 50x10"), "{}", lines[0]);
    }

    #[tokio::test]
    async fn bursts_of_feed_updates_are_coalesced() {
        let mut t = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
        let (tx, rx) = watch::channel(Arc::new(demo()));
        let (keys, events) = mpsc::unbounded::<io::Result<Event>>();
        let opts = UiOptions {
            feed: rx,
            alerts: None,
            now: None,
            engine: None,
        };
        let base = demo();
        let producer = async move {
            for i in 0..200_u32 {
                let mut s = base.clone();
                s.cluster_operators
                    .truncate(usize::try_from(i % 30).unwrap_or(0) + 1);
                let _ = tx.send(Arc::new(s));
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            tokio::time::sleep(Duration::from_millis(400)).await;
            keys.unbounded_send(press('q')).expect("send q");
            // Keep the sender alive until the loop is done.
            tokio::time::sleep(Duration::from_secs(5)).await;
        };
        let (stats, ()) = tokio::select! {
            s = run_loop(&mut t, events, opts, std::future::pending()) => (s, ()),
            () = producer => panic!("the loop did not quit"),
        };
        // 200 updates over about half a second: at most a few applied (250 ms apart).
        assert!(stats.states <= 6, "{stats:?}");
        assert!(stats.frames <= 7, "{stats:?}");
        assert!(stats.states >= 2, "the last state is applied: {stats:?}");
    }
}

/// An unreachable live API with no data yet: every panel says so, none draws conclusions from
/// the empty lists, and the error has its own line (not only the cut-off title).
#[test]
fn unreachable_api_without_data_makes_no_claims() {
    let since = DateTime::parse_from_rfc3339("2024-07-20T10:20:00Z")
        .map(|t| t.to_utc())
        .expect("time");
    let state = ClusterState {
        source: "context ctx".into(),
        feed: crate::cluster::FeedStatus::Live {
            synced: false,
            error: Some(crate::cluster::FeedError {
                message: "watch clusteroperators: tcp connect error: Connection refused".into(),
                since,
            }),
        },
        ..Default::default()
    };
    let mut app = App::new(
        Arc::new(state),
        None,
        Some(since + chrono::Duration::minutes(3)),
        Palette::color(),
        (120, 40),
    );
    for tab in ['1', '2', '3', '4', '5'] {
        key(&mut app, KeyCode::Char(tab));
        let lines = screen_text(draw(&app).backend().buffer());
        let text = lines.join("\n");
        for false_claim in [
            "No ClusterVersion",
            "not OpenShift",
            "0 healthy",
            "No update in progress",
            "nothing needs attention",
            "no completed update",
            "no ClusterOperators",
            "no nodes",
            "no update history",
            "[0]",
        ] {
            assert!(
                !text.contains(false_claim),
                "tab {tab} claims {false_claim:?}:\n{text}"
            );
        }
        // The error, with since when, on a line of its own that fits at 120 columns.
        assert!(
            lines.iter().any(|l| l.starts_with(
                "API unreachable since 2024-07-20 10:20:00 UTC (3m0s ago): watch clusteroperators"
            )),
            "{text}"
        );
        assert!(
            text.contains("no data: cannot reach the API server"),
            "tab {tab}:\n{text}"
        );
    }
    key(&mut app, KeyCode::Char('1'));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(
        text.contains("Cannot reach the API server since 2024-07-20 10:20:00 UTC"),
        "{text}"
    );
    assert!(
        text.contains("Assessment Unreachable") || text.contains("Unreachable"),
        "{text}"
    );
}

/// The values `cvo status` prints appear unchanged: the update's duration (Overview and
/// History), insight SINCE, and percentages without a space.
#[test]
fn durations_and_since_match_cvo_status() {
    let state = demo();
    let mut app = app_for(state.clone(), 200, 50);
    let a = crate::assess::assess(&state, None, app.now);
    let dur = a.control_plane.duration.text.clone();
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains(&format!("Duration {dur} ")), "{dur}\n{text}");
    app.update(Action::GotoTab(Tab::History));
    let lines = screen_text(draw(&app).backend().buffer());
    let row = lines
        .iter()
        .find(|l| l.contains("in progress"))
        .expect("current update row");
    assert!(row.contains(&format!(" {dur} ")), "{dur}: {row}");
    key(&mut app, KeyCode::Enter);
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(
        text.contains(&format!("Duration   {dur}")) || text.contains(&dur),
        "{text}"
    );
    key(&mut app, KeyCode::Esc);
    app.update(Action::GotoTab(Tab::Health));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(!a.health.insights.is_empty());
    for ins in &a.health.insights {
        let summary = &ins.summary[..ins.summary.len().min(30)];
        let line = text
            .lines()
            .find(|l| l.contains(summary))
            .unwrap_or_else(|| panic!("{summary}\n{text}"));
        assert!(
            line.contains(&format!(" {} ", ins.since)),
            "{:?}: {line}",
            ins.since
        );
    }
    assert!(
        a.health
            .insights
            .iter()
            .any(|i| i.since.len() > 3 && i.since.ends_with('s'))
    );
}

/// A status word as the whole filter matches the STATUS column exactly, so `/!OK` keeps a
/// degraded operator whose message contains "ok"; other text still matches names and messages.
#[test]
fn status_word_filter_matches_the_status_column() {
    let mut state = demo();
    let co = state
        .cluster_operators
        .iter_mut()
        .find(|c| c.name() == "machine-config")
        .expect("machine-config in the demo");
    set_condition(
        &mut co.status.conditions,
        "Degraded",
        ConditionStatus::True,
        "RequiredPoolsFailed",
        "Failed to resync: the token is ok but the pool is broken",
    );
    let mut app = app_for(state, 120, 40);
    key(&mut app, KeyCode::Char('2'));
    let degraded = app
        .dash
        .operators
        .iter()
        .position(|o| o.name == "machine-config")
        .expect("row");
    assert_eq!(app.dash.operators[degraded].status, "DEGR");
    let not_ok: Vec<usize> = (0..app.dash.operators.len())
        .filter(|&i| app.dash.operators[i].status != "OK")
        .collect();
    for f in ["!OK", "!ok", "!Ok "] {
        key(&mut app, KeyCode::Char('/'));
        chars(&mut app, f);
        key(&mut app, KeyCode::Enter);
        assert_eq!(app.visible_rows(Tab::Operators), not_ok, "filter {f:?}");
        key(&mut app, KeyCode::Esc);
    }
    key(&mut app, KeyCode::Char('/'));
    chars(&mut app, "degr");
    key(&mut app, KeyCode::Enter);
    assert!(app.visible_rows(Tab::Operators).contains(&degraded));
    key(&mut app, KeyCode::Esc);
    // Other text still searches the hidden full message.
    key(&mut app, KeyCode::Char('/'));
    chars(&mut app, "token is ok");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.visible_rows(Tab::Operators), vec![degraded]);
    // The help says so.
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char('?'));
    let (w, h) = (120, 200);
    app.update(Action::Resize(w, h));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("Filtering (/)"), "{text}");
    assert!(text.contains("STATUS column exactly"), "{text}");
}

/// `y` shows the YAML of the object the selected row is about: an insight's resource (node,
/// ClusterOperator, ClusterVersion), the selected node; YAML starts with apiVersion and kind.
#[test]
fn yaml_shows_the_selected_rows_object() {
    let mut app = app_for(demo(), 120, 40);
    app.update(Action::GotoTab(Tab::Health));
    let cases = [
        ("Node ", "apiVersion: v1\nkind: Node\n", "node/"),
        (
            "Cluster Operator ",
            "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\n",
            "clusteroperator/",
        ),
    ];
    for (prefix, head, title) in cases {
        let i = app
            .visible_rows(Tab::Health)
            .iter()
            .position(|&r| app.dash.insights[r].message.starts_with(prefix))
            .unwrap_or_else(|| panic!("an insight starting with {prefix:?}"));
        app.views[Tab::Health.index()].selected = i;
        let row = app.selected_row().expect("selected");
        let name = app.dash.insights[row].resources[0]
            .split_once(": ")
            .map(|(_, n)| n.to_owned())
            .expect("resource");
        key(&mut app, KeyCode::Char('y'));
        let popup = app.popup.as_ref().expect("yaml popup");
        assert_eq!(popup.title, format!("{title}{name} (yaml)"));
        let PopupKind::Yaml(y) = &popup.kind else {
            panic!("not yaml: {popup:?}")
        };
        assert!(y.starts_with(head), "{}", &y[..y.len().min(200)]);
        assert!(y.contains(&format!("name: {name}")), "{name}");
        key(&mut app, KeyCode::Esc);
    }
    // Nodes view: the selected node.
    app.update(Action::GotoTab(Tab::Nodes));
    key(&mut app, KeyCode::Char('j'));
    let row = app.selected_row().expect("a node");
    let name = app.dash.nodes[row].name.clone();
    key(&mut app, KeyCode::Char('y'));
    let popup = app.popup.as_ref().expect("yaml popup");
    assert_eq!(popup.title, format!("node/{name} (yaml)"));
    let PopupKind::Yaml(y) = &popup.kind else {
        panic!("not yaml")
    };
    assert!(y.starts_with("apiVersion: v1\nkind: Node\n"), "{y}");
    key(&mut app, KeyCode::Esc);
    // Overview: the ClusterVersion, with its apiVersion and kind first.
    app.update(Action::GotoTab(Tab::Overview));
    key(&mut app, KeyCode::Char('y'));
    let Some(PopupKind::Yaml(y)) = app.popup.as_ref().map(|p| &p.kind) else {
        panic!("no yaml")
    };
    assert!(
        y.starts_with("apiVersion: config.openshift.io/v1\nkind: ClusterVersion\n"),
        "{y}"
    );
}

/// With room to spare, name and type columns show their longest value; the rest goes to the
/// message.
#[test]
fn wide_screens_show_names_in_full() {
    let mut app = app_for(demo(), 250, 50);
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    let long_type = app
        .dash
        .conditions
        .iter()
        .map(|c| c.type_.clone())
        .max_by_key(String::len)
        .expect("conditions");
    assert!(long_type.len() > 22, "{long_type}");
    assert!(text.contains(&format!("│{long_type} ")), "{long_type}\n{text}");
    app.update(Action::GotoTab(Tab::Operators));
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    let long: Vec<String> = app
        .dash
        .operators
        .iter()
        .filter(|o| o.name.len() > 30)
        .map(|o| o.name.clone())
        .collect();
    assert!(!long.is_empty());
    for name in long {
        assert!(text.contains(&format!(" {name} ")), "{name}\n{text}");
    }
    // The message column still gets most of the row.
    let header = text.lines().find(|l| l.contains("MESSAGE")).expect("header");
    let msg_at = header.find("MESSAGE").expect("MESSAGE");
    assert!(header.len() - msg_at > 100, "{header}");
}

/// Small things: the status line fits at 120 columns, the Overview says what is below the fold,
/// no double spaces for empty reasons, status words with their meaning, and the "too small"
/// line fits narrow terminals.
#[test]
fn status_line_fits_at_120_columns() {
    let Some(state) = fixture("4.14.1-degraded") else {
        return;
    };
    let app = app_for(state, 120, 40);
    let lines = screen_text(draw(&app).backend().buffer());
    assert!(
        lines[3].trim_end().ends_with("Insights 6 (5 errors)"),
        "{}",
        lines[3]
    );
    assert!(!lines[3].contains('…'), "{}", lines[3]);
}

#[test]
fn small_overview_says_what_is_below() {
    let app = app_for(demo(), 60, 15);
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(
        text.contains("more below: pools, health — enlarge or press 3/5"),
        "{text}"
    );
    // Large enough: no hint.
    let app = app_for(demo(), 160, 48);
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(!text.contains("more below"), "{text}");
}

#[test]
fn empty_reasons_leave_no_double_space_and_status_words_are_explained() {
    let mut state = demo();
    let co = state
        .cluster_operators
        .iter_mut()
        .find(|c| c.name() == "machine-config")
        .expect("machine-config");
    set_condition(
        &mut co.status.conditions,
        "Progressing",
        ConditionStatus::True,
        "",
        "",
    );
    if let Some(c) = co.status.conditions.iter_mut().find(|c| c.type_ == "Progressing") {
        c.reason = Some(" ".into());
    }
    let mut app = app_for(state, 120, 60);
    app.update(Action::GotoTab(Tab::Operators));
    let i = app
        .visible_rows(Tab::Operators)
        .iter()
        .position(|&r| app.dash.operators[r].name == "machine-config")
        .expect("row");
    app.views[Tab::Operators.index()].selected = i;
    key(&mut app, KeyCode::Enter);
    let lines = screen_text(draw(&app).backend().buffer());
    let text = lines.join("\n");
    assert!(
        text.contains("Status  DEGR (Degraded)") || text.contains("DEGR (Degraded): "),
        "{text}"
    );
    let prog = lines
        .iter()
        .find(|l| l.contains("Progressing ") && l.contains("since"))
        .expect("Progressing line");
    assert!(prog.contains("True since"), "{prog}");
    assert!(!prog.contains("True  since"), "{prog}");
}

#[test]
fn too_small_line_fits_narrow_terminals() {
    for (w, h) in [(59u16, 14u16), (39, 10), (30, 10), (22, 5), (12, 3), (5, 2)] {
        let app = app_for(demo(), w, h);
        let lines = screen_text(draw(&app).backend().buffer());
        let line = lines[0].trim_end();
        assert!(!line.contains('…') || w < 13, "{w}x{h}: {line:?}");
        assert!(line.contains(&format!("{w}x{h}")) || w < 13, "{w}x{h}: {line:?}");
    }
    assert_eq!(view::too_small_message(30, 10), "too small: 30x10<60x15");
}

/// The skip notice names the test and goes to stderr, not to the captured stdout.
#[test]
fn skip_notice_names_the_test() {
    let src = include_str!("tests.rs");
    let body = &src[src.find("fn skip_notice").expect("skip_notice")..];
    let body = &body[..body.find("\n}\n").expect("end")];
    assert!(body.contains("writeln!(std::io::stderr(), \"skipping {test}: {reason}\")"));
    let fixtures = &src[src.find("fn fixtures_dir").expect("fixtures_dir")..];
    let fixtures = &fixtures[..fixtures.find("\n}\n").expect("end")];
    assert!(!fixtures.contains(&["print", "ln!"].concat()), "{fixtures}");
    assert_eq!(
        std::thread::current().name(),
        Some("ui::tests::skip_notice_names_the_test")
    );
}

mod engine;
