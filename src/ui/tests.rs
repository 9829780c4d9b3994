//! Dashboard tests: `TestBackend` + insta snapshots (text), cell-style asserts (colour, which
//! text snapshots drop), the UI problems administrators reported, and `App::update`
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
    cluster::{ClusterState, demo_snapshot::demo_state},
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
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream/oc-upgrade-status");
    if dir.is_dir() {
        Some(dir)
    } else {
        skip_notice(&format!("{} is missing", dir.display()));
        None
    }
}

/// Says on stderr, past libtest's capture (which hides `println!` of passing tests), that the
/// running test skipped something, naming the test (libtest names each test's thread after it).
/// When the `CI` environment variable is set (not empty, `0` or `false`), a skip is a failure.
fn skip_notice(reason: &str) {
    use std::io::Write;
    let current = std::thread::current();
    let test = current.name().unwrap_or("<unnamed test>");
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"));
    assert!(
        !ci,
        "{test} cannot run: {reason} (a skip is a failure when CI is set)"
    );
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
    // The detail pane has the full multi-line message.
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

// ---------------------------------------------------------------- reported by administrators

/// No Completed history entry → say so, never show the desired version as
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

/// A multi-line message stays on one line per cell; alignment holds.
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

/// Failing wins the headline over Progressing; progress stays visible.
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

/// Once the control plane is done, worker progress stays in the headline until
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

/// Ratios above 1 (or not finite) never panic and read "over 100 %".
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

/// CJK and emoji (with joiners and variation selectors) never break borders.
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

/// Below the minimum size one line says so; growing again redraws fully.
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

// ---------------------------------------------------------------- App, the event loop, views

mod app_update;
mod event_loop;
mod updates;
mod views;

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

mod small;

mod idle;

mod follows_work;

mod forty_minutes;

mod idle_demo;

mod demo_clock;

mod words;

mod russian;
