//! The fleet view: insta snapshots at 120x40 and 80x24 (TestBackend), cell-style asserts for
//! the colour of failing and unreachable rows, and the keys (sort, filter, open, quit).

use std::{path::PathBuf, sync::Arc};

use chrono::{DateTime, Utc};
use ratatui::{
    Terminal,
    backend::TestBackend,
    crossterm::event::{KeyCode, KeyEvent, KeyModifiers},
    style::{Color, Modifier},
};

use super::*;
use crate::{
    assess::fleet::RowState,
    cluster::{ClusterState, FeedError, fleet::Reach, snapshot},
};

fn fixture(name: &str) -> ClusterState {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream/oc-upgrade-status");
    let paths: Vec<PathBuf> = ["cv", "co", "mc", "mcp", "node"]
        .iter()
        .map(|k| dir.join(format!("{name}-{k}.yaml")))
        .collect();
    snapshot::load(&paths).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn now() -> DateTime<Utc> {
    fixture("4.14.1-degraded")
        .snapshot_time()
        .unwrap_or_else(|| panic!("no time"))
}

fn member(context: &str, state: ClusterState, reach: Reach) -> Arc<Member> {
    Arc::new(Member {
        context: context.into(),
        server: format!("https://api.{context}.example:6443"),
        reach,
        answered: true,
        state,
        lease: Some(crate::cluster::fleet::LeaseHolder {
            holder: format!("{context}-cvo_1"),
            renewed: Some(now()),
            duration_secs: Some(137),
        }),
        lease_error: None,
    })
}

/// Five clusters: failing mid-update, at their version, unreachable, still connecting.
fn fleet() -> Arc<FleetState> {
    let down = FeedError {
        message: "list clusterversions: tcp connect error: Connection refused (os error 111)".into(),
        since: now(),
    };
    Arc::new(FleetState {
        members: vec![
            member("prod-eu", fixture("4.14.1-degraded"), Reach::Reachable),
            member("prod-us", fixture("not-upgrading"), Reach::Reachable),
            member("dr-site", ClusterState::default(), Reach::Unreachable(down)),
            member("stage", fixture("not-upgrading"), Reach::Reachable),
            member("edge-01", ClusterState::default(), Reach::Connecting),
        ],
    })
}

fn app(w: u16, h: u16) -> FleetApp {
    let mut a = FleetApp::new(Palette::color(), (w, h));
    a.update(Action::Fleet(fleet(), now()));
    a
}

fn draw(app: &FleetApp) -> Terminal<TestBackend> {
    let (w, h) = app.size;
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view::render(app, f)).expect("draw");
    t
}

fn key(c: KeyCode) -> Action {
    Action::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

/// The row (screen line) on which `text` starts, and its column.
fn find(t: &Terminal<TestBackend>, text: &str) -> (u16, u16) {
    let buf = t.backend().buffer();
    for y in 0..buf.area.height {
        let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        if let Some(x) = line.find(text) {
            return (u16::try_from(line[..x].chars().count()).unwrap_or(0), y);
        }
    }
    panic!("{text:?} not on screen")
}

#[test]
fn fleet_view_snapshots() {
    insta::assert_snapshot!("fleet_120x40", draw(&app(120, 40)).backend());
    insta::assert_snapshot!("fleet_80x24", draw(&app(80, 24)).backend());
}

#[test]
fn failing_and_unreachable_rows_are_red_and_an_up_to_date_state_green() {
    let mut a = app(120, 40);
    // Select a row that is neither, so no row is reversed by the selection.
    a.update(key(KeyCode::Char('G')));
    let t = draw(&a);
    let buf = t.backend().buffer();
    for ctx in ["prod-eu", "dr-site"] {
        let (x, y) = find(&t, ctx);
        let cell = &buf[(x, y)];
        assert_eq!(cell.fg, Color::Red, "{ctx}");
        assert!(cell.modifier.contains(Modifier::BOLD), "{ctx}");
    }
    let (x, y) = find(&t, "prod-us");
    assert_eq!(
        buf[(x, y)].fg,
        Color::Reset,
        "an up-to-date context is plain text"
    );
    let (sx, _) = find(&t, "STATE");
    assert_eq!(buf[(sx, y)].fg, Color::Green, "its state word is green");
    let (x, y) = find(&t, "edge-01");
    assert!(
        buf[(x, y)].modifier.contains(Modifier::DIM),
        "connecting is muted"
    );
    // The selection (last row by name: stage) is reversed.
    let (x, y) = find(&t, "stage ");
    assert!(buf[(x, y)].modifier.contains(Modifier::REVERSED));
    // The unreachable cluster's error is in the detail lines when selected.
    a.update(key(KeyCode::Home));
    let t = draw(&a);
    let (_, y) = find(&t, "unreachable: list clusterversions: tcp connect error");
    assert_eq!(t.backend().buffer()[(0, y)].fg, Color::Red);
}

#[test]
fn sort_keys_filter_open_and_quit() {
    let mut a = app(120, 40);
    let names =
        |a: &FleetApp| -> Vec<String> { a.visible().iter().map(|&i| a.rows()[i].context.clone()).collect() };
    assert_eq!(names(&a), ["dr-site", "edge-01", "prod-eu", "prod-us", "stage"]);
    a.update(key(KeyCode::Char('3')));
    assert_eq!(a.sort, SortKey::State);
    assert_eq!(names(&a), ["dr-site", "prod-eu", "edge-01", "prod-us", "stage"]);
    a.update(key(KeyCode::Char('s')));
    assert_eq!(a.sort, SortKey::Name);
    a.update(key(KeyCode::Char('2')));
    // Newest version first, clusters without one last.
    assert_eq!(names(&a), ["prod-us", "stage", "prod-eu", "dr-site", "edge-01"]);
    a.update(key(KeyCode::Char('/')));
    for c in "PROD".chars() {
        a.update(key(KeyCode::Char(c)));
    }
    assert!(a.editing);
    a.update(key(KeyCode::Enter));
    assert!(!a.editing);
    assert_eq!(names(&a), ["prod-us", "prod-eu"]);
    a.update(key(KeyCode::Down));
    a.update(key(KeyCode::Enter));
    // Member index of prod-eu in the fleet's order.
    assert_eq!(a.open, Some(0));
    a.update(key(KeyCode::Esc));
    assert_eq!(a.filter, "");
    assert_eq!(names(&a).len(), 5);
    assert!(!a.quit);
    a.update(key(KeyCode::Char('q')));
    assert!(a.quit);
}

#[test]
fn only_a_changed_member_is_recomputed_and_the_screen_follows() {
    let mut a = app(120, 40);
    let f = fleet();
    assert!(
        !a.update(Action::Fleet(f.clone(), now())),
        "the same members change nothing"
    );
    let mut next = (*f).clone();
    next.members[3] = member("stage", fixture("4.14.1-degraded"), Reach::Reachable);
    assert!(a.update(Action::Fleet(Arc::new(next), now())));
    let stage = a.rows().iter().find(|r| r.context == "stage").expect("stage");
    assert_eq!(stage.state, RowState::Failing);
    // The Lease expires with the clock.
    assert!(a.update(Action::Tick(now() + chrono::Duration::seconds(600))));
    assert!(a.rows().iter().all(|r| !r.lease_alive));
    let t = draw(&a);
    find(&t, "prod-us-cvo_1 (expired)");
}

#[test]
fn the_fleet_view_in_russian() {
    use crate::l10n::{Lang, scoped};
    scoped(Lang::Ru, || {
        insta::assert_snapshot!("fleet_ru_120x40", draw(&app(120, 40)).backend());
        insta::assert_snapshot!("fleet_ru_80x24", draw(&app(80, 24)).backend());
        let mut a = app(120, 40);
        a.update(key(KeyCode::Char('G')));
        let t = draw(&a);
        // The headers, the summary and the hints in Russian; kinds stay in Latin.
        for text in [
            "КОНТЕКСТ",
            "СОСТОЯНИЕ",
            "5 кластеров",
            "сортировка: имя",
            "открыть панель",
        ] {
            find(&t, text);
        }
        // The state words keep their colours: failing red, up to date green.
        let (sx, _) = find(&t, "СОСТОЯНИЕ");
        let (_, y) = find(&t, "prod-eu");
        assert_eq!(t.backend().buffer()[(sx, y)].fg, Color::Red);
        assert_eq!(t.backend().buffer()[(sx, y)].symbol(), "с", "сбой");
        let (_, y) = find(&t, "prod-us");
        assert_eq!(t.backend().buffer()[(sx, y)].fg, Color::Green);
        // The filter matches the words on screen.
        a.update(key(KeyCode::Char('/')));
        for c in "недоступен".chars() {
            a.update(key(KeyCode::Char(c)));
        }
        let names: Vec<String> = a.visible().iter().map(|&i| a.rows()[i].context.clone()).collect();
        assert_eq!(names, ["dr-site"]);
    });
}
