//! The dashboard's words (issue 29): keys shown as keys, the mode at 80 columns, one labelled
//! figure per gauge, "retry N", the update's own changes named as such, confirm popups that
//! name the cluster, print each risk once, list no removal of a field never set, and offer no
//! `y` when they cannot be confirmed.

use tokio::sync::mpsc;

use super::{
    engine::{engine_app, mid_update},
    *,
};
use crate::reconcile::api::{Command, EngineMode, EngineState, LeaseInfo, PassOutcome, PassSummary};

fn text_of(app: &App) -> String {
    screen_text(draw(app).backend().buffer()).join("\n")
}

/// The live demo's cluster at 4.16.3 (`assets/demo-cluster`, whose `spec.desiredUpdate` has
/// `architecture: ""`): 4.16.4 recommended, 4.16.5 conditional with one risk.
fn demo_cluster() -> ClusterState {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo-cluster");
    let paths: Vec<PathBuf> = ["cv", "co", "mc", "mcp", "node"]
        .iter()
        .map(|k| dir.join(format!("{k}.yaml")))
        .collect();
    let mut s = crate::cluster::snapshot::load(&paths).expect("the demo cluster loads");
    s.source = "context admin@prod".into();
    s
}

/// The demo cluster on the Updates view of an app that can write (a command channel).
fn updates_app(w: u16, h: u16) -> (App, mpsc::Receiver<Command>) {
    let mut app = app_for(demo_cluster(), w, h);
    let (tx, rx) = mpsc::channel(4);
    app.commands = Some(tx);
    key(&mut app, KeyCode::Char('6'));
    assert_eq!(app.tab, Tab::Updates);
    (app, rx)
}

/// The open popup's text, borders and padding stripped, lines joined by single spaces (the
/// popup wraps long text).
fn popup_flat(app: &App) -> String {
    let p = app.popup.as_ref().expect("a popup is open");
    let inputs = app.popup_inputs();
    crate::ui::popup::lines(p, &inputs, 90)
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn tabs_show_their_keys_as_keys_at_every_width() {
    // Eight tabs: spaced with counts when wide, tight at 80 columns, always `[N]`.
    for (w, want) in [
        (160, "[6] Updates (1)"),
        (100, "[6] Updates"),
        (80, "[6]Updates[7]Tasks[8]Drift"),
    ] {
        let (app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), w, 24);
        let t = draw(&app);
        let buf = t.backend().buffer();
        let tabs = &screen_text(buf)[5];
        assert!(tabs.contains(want), "{w} columns: {tabs}");
        assert!(!tabs.contains("6 Updates"), "{w} columns: {tabs}");
        assert!(tabs.trim_end().chars().count() <= usize::from(w), "{tabs}");
        // The key is in the key colour, the title in the text colour.
        let (x, y) = find(buf, "[6]").expect("key on screen");
        assert_eq!(buf[(x + 1, y)].fg, Color::Cyan, "{w}: the key is styled as a key");
        let title_x = if w == 80 { x + 3 } else { x + 4 };
        assert_ne!(buf[(title_x, y)].fg, Color::Cyan, "{w}: the title is not");
    }
    // Six tabs (no engine) fit spaced at 80 columns, the count of the view in front shown.
    let mut app = app_for(demo(), 80, 24);
    app.update(Action::GotoTab(Tab::Operators));
    let text = text_of(&app);
    assert!(
        text.contains("[1] Overview [2] Operators (33) [3] Nodes [4] History [5] Health [6] Updates"),
        "{text}"
    );
    // The panel hints name keys the same way.
    let app = app_for(demo(), 80, 24);
    let text = text_of(&app);
    assert!(text.contains("update health[4] ([5] details)"), "{text}");
    assert!(text.contains("enlarge or press [3]/[5]"), "{text}");
}

#[test]
fn the_mode_is_visible_at_80_columns() {
    for mode in [EngineMode::ActiveApply, EngineMode::WatchOnly] {
        let (mut app, _rx) = engine_app(mid_update(mode), 80, 24);
        app.release_source = Some("registry 127.0.0.1:5000".into());
        app.dash.source = "context a-very-long-context-name-of-a-production-cluster".into();
        let t = draw(&app);
        let buf = t.backend().buffer();
        let first = &screen_text(buf)[0];
        let word = crate::ui::engine::mode_word(mode);
        assert!(first.starts_with(&format!("cvo │ {word} │ context")), "{first}");
        let (x, y) = find(buf, word).expect("mode on screen");
        assert_eq!(y, 0);
        assert_eq!(
            buf[(x, y)].fg,
            app.palette.mode(mode).fg.expect("mode colour"),
            "{word}"
        );
    }
}

#[test]
fn each_gauge_shows_one_labelled_figure_and_retries_are_counted_as_retries() {
    let mut s = mid_update(EngineMode::ActiveApply);
    s.attempt = 4;
    s.counters.passes = 7;
    let (app, _rx) = engine_app(s, 120, 40);
    let text = text_of(&app);
    let gauge = text
        .lines()
        .find(|l| l.contains("manifests applied"))
        .expect("the sync gauge");
    // 29 of 68 (42 %, truncated as the Progressing message truncates it), one figure: no
    // bare percentage and no second `N/M`.
    assert!(
        gauge.contains("29 of 68 manifests applied (42%) · at run level 20 · 1 failed"),
        "{gauge}"
    );
    assert_eq!(gauge.matches('%').count(), 1, "{gauge}");
    assert!(!gauge.contains('/'), "{gauge}");
    let control = text
        .lines()
        .find(|l| l.contains("operators updated"))
        .expect("the control plane gauge");
    assert!(
        control.contains("31 of 33 operators updated (94%) · 1 updating · 1 waiting"),
        "{control}"
    );
    assert_eq!(control.matches('%').count(), 1, "{control}");
    assert!(text.contains("Pass 7 (running) · retry 4"), "{text}");
    assert!(!text.contains("Attempt"), "{text}");
    // No failed pass: no retry said.
    let (app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 120, 40);
    assert!(!text_of(&app).contains("retry"));
}

/// A finished pass of `state` as the engine keeps it in `recent_passes`.
fn pass(state: &str, drift: usize) -> PassSummary {
    PassSummary {
        number: 9,
        seconds: 1.0,
        watch_only: false,
        state: state.into(),
        outcome: PassOutcome::Done,
        done: 68,
        total: 68,
        writes: 3,
        failed: 0,
        first_failure: None,
        drift,
    }
}

#[test]
fn changes_of_an_update_are_named_as_the_updates_own_not_drift() {
    // The last pass applied 4.16.4 (an update pass, finished): its changes are the update's.
    let mut s = mid_update(EngineMode::ActiveApply);
    s.running = false;
    s.state = EngineState::Reconciling;
    s.recent_passes = Arc::new(vec![pass("Reconciling", 0), pass("Updating", 3)]);
    let (mut app, _rx) = engine_app(s.clone(), 100, 30);
    key(&mut app, KeyCode::Char('8'));
    let text = text_of(&app);
    assert!(
        text.contains("changes the update to 4.16.4 made (its own, not drift)[3]"),
        "{text}"
    );
    assert!(!text.contains("drift (active-apply"), "{text}");
    key(&mut app, KeyCode::Enter);
    let detail = popup_flat(&app);
    assert!(
        detail.contains("Made by the update to 4.16.4: the release's own change, not drift"),
        "{detail}"
    );
    assert_eq!(
        app.popup.as_ref().map(|p| p.title.as_str()),
        Some("update to 4.16.4: update ConfigMap openshift-etcd/etcd-config")
    );
    // A reconciling pass that changed objects back: that is drift.
    s.recent_passes = Arc::new(vec![pass("Updating", 3), pass("Reconciling", 3)]);
    let (mut app, _rx) = engine_app(s.clone(), 100, 30);
    key(&mut app, KeyCode::Char('8'));
    let text = text_of(&app);
    assert!(text.contains("drift (active-apply: changed back)[3]"), "{text}");
    assert!(!text.contains("made (its own"), "{text}");
    // Watch-only: what would change, whatever the pass.
    s.mode = EngineMode::WatchOnly;
    s.recent_passes = Arc::new(vec![pass("Updating", 3)]);
    let (mut app, _rx) = engine_app(s, 100, 30);
    key(&mut app, KeyCode::Char('8'));
    assert!(text_of(&app).contains("drift (watch-only: would change)[3]"));
}

#[test]
fn the_request_popup_names_the_cluster_prints_each_risk_once_and_no_removal_of_an_unset_field() {
    let (mut app, _rx) = updates_app(120, 50);
    // 4.16.5: the conditional update with one risk.
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Enter);
    let flat = popup_flat(&app);
    assert!(
        flat.contains("Cluster context admin@prod · cluster ID "),
        "the popup names where it writes: {flat}"
    );
    let message = "may lose egress IP assignments on OVN-Kubernetes";
    assert_eq!(flat.matches(message).count(), 1, "the risk once: {flat}");
    assert_eq!(
        flat.matches("https://issues.redhat.com/browse/OCPBUGS-37029")
            .count(),
        1,
        "{flat}"
    );
    assert!(
        flat.contains("! Recommended: the update service does not recommend 4.16.5; its risks are listed below (waived: --allow-not-recommended)"),
        "{flat}"
    );
    assert!(!flat.contains("bypassed Recommended"), "{flat}");
    // The demo's `architecture: ""` was never set: its removal is not listed.
    assert!(!flat.contains("architecture"), "{flat}");
    assert!(flat.contains("spec.desiredUpdate.version: 4.16.5"), "{flat}");
}

#[test]
fn a_set_architecture_is_listed_with_what_it_was() {
    let mut state = demo_cluster();
    with_cv(&mut state, |cv| {
        if let Some(du) = cv.spec.desired_update.as_mut() {
            du.architecture = Some("Multi".into());
        }
    });
    let mut app = app_for(state, 120, 50);
    let (tx, _rx) = mpsc::channel(4);
    app.commands = Some(tx);
    key(&mut app, KeyCode::Char('6'));
    key(&mut app, KeyCode::Enter);
    let flat = popup_flat(&app);
    assert!(
        flat.contains("spec.desiredUpdate.architecture: (removed; was Multi)"),
        "{flat}"
    );
}

fn foreign_lease(alive: bool) -> LeaseInfo {
    LeaseInfo {
        lease: "openshift-cluster-version/version".into(),
        holder: Some("in-cluster-cvo_1".into()),
        renew_time: DateTime::parse_from_rfc3339("2024-07-20T10:40:00Z")
            .ok()
            .map(|t| t.to_utc()),
        duration_seconds: Some(137),
        alive,
        ours: false,
        read_at: DateTime::parse_from_rfc3339("2024-07-20T10:40:05Z")
            .ok()
            .map(|t| t.to_utc()),
        error: None,
    }
}

#[test]
fn a_refused_switch_offers_no_y_and_names_the_cluster() {
    let mut s = mid_update(EngineMode::WatchOnly);
    s.leader = false;
    s.lease = Some(foreign_lease(true));
    let (mut app, mut rx) = engine_app(s.clone(), 100, 40);
    app.dash.source = "context admin@prod".into();
    key(&mut app, KeyCode::Char('m'));
    assert_eq!(rx.try_recv().ok(), Some(Command::CheckLease));
    let flat = popup_flat(&app);
    assert!(flat.contains("The switch is refused"), "{flat}");
    assert!(flat.contains("Cluster context admin@prod · cluster ID"), "{flat}");
    assert!(flat.contains("n/Esc close (nothing is sent)"), "{flat}");
    assert!(!flat.contains("y/Enter"), "{flat}");
    // The flash of the Lease check goes with the next key; the key hints are under it.
    app.flash = None;
    let text = text_of(&app);
    assert!(
        !text.contains("y/Enter"),
        "neither popup nor footer offers y:\n{text}"
    );
    assert!(!text.contains("y confirm"), "{text}");
    assert!(text.contains(" n close "), "{text}");
    assert!(
        text.lines().last().is_some_and(|l| l.contains("n/Esc cancel")),
        "{text}"
    );
    // The Lease expires (a live engine snapshot says so): `y` is offered again, in place.
    let mut s2 = s.clone();
    s2.lease = Some(foreign_lease(false));
    app.update(Action::Engine(Arc::new(s2)));
    let flat = popup_flat(&app);
    assert!(flat.contains("y/Enter switch"), "{flat}");
    assert!(!flat.contains("refused"), "{flat}");
    let text = text_of(&app);
    assert!(text.contains(" y confirm · n cancel "), "{text}");
    assert!(
        text.lines().last().is_some_and(|l| l.contains("y/Enter confirm")),
        "{text}"
    );
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(
        rx.try_recv().ok(),
        Some(Command::SetMode(EngineMode::ActiveApply))
    );
}

#[test]
fn a_refused_request_offers_no_y_either() {
    let (mut app, mut rx) = updates_app(120, 40);
    app.read_only = true;
    key(&mut app, KeyCode::Enter);
    let text = text_of(&app);
    assert!(text.contains("Refused: --read-only"), "{text}");
    assert!(!text.contains("y/Enter"), "{text}");
    assert!(!text.contains("y confirm"), "{text}");
    key(&mut app, KeyCode::Char('y'));
    assert!(rx.try_recv().is_err(), "nothing is sent");
}

/// The demo state with its newest history entry unverified too (the demo's 4.16.0 install
/// entry already is), and an engine whose snapshot is `snap`.
fn history_app(snap: crate::reconcile::api::StatusSnapshot) -> App {
    let mut state = demo();
    with_cv(&mut state, |cv| cv.status.history[0].verified = false);
    let mut app = app_for(state, 120, 40);
    let (tx, _rx) = mpsc::channel(4);
    app.attach_engine(Arc::new(snap), tx);
    key(&mut app, KeyCode::Char('4'));
    app
}

#[test]
fn verified_no_is_explained_for_an_unsigned_local_release() {
    let app = history_app(mid_update(EngineMode::ActiveApply));
    let unverified: Vec<(usize, String)> = app
        .dash
        .history
        .iter()
        .enumerate()
        .filter(|(_, h)| !h.verified)
        .map(|(i, h)| (i, h.image.clone()))
        .collect();
    assert_eq!(unverified.len(), 2, "{unverified:?}");
    let (local_row, local_image) = unverified[0].clone();
    let (other_row, _) = unverified[1].clone();
    // The engine accepted the first one unsigned as a registered (local) release.
    let mut s = mid_update(EngineMode::ActiveApply);
    s.registered_unverified = vec![local_image];
    let mut app = history_app(s);
    let text = text_of(&app);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("Completed") || l.contains("Partial"))
        .collect();
    assert_eq!(
        rows.iter().filter(|l| l.contains(" no (local) ")).count(),
        1,
        "{text}"
    );
    assert_eq!(
        rows.iter()
            .filter(|l| l.contains(" no ") && !l.contains("(local)"))
            .count(),
        1,
        "{text}"
    );
    for _ in 0..local_row {
        key(&mut app, KeyCode::Char('j'));
    }
    key(&mut app, KeyCode::Enter);
    let detail = popup_flat(&app);
    assert!(
        detail.contains("Verified no: a release registered with this cvo (its own release, a local payload directory or the demo's embedded releases), which carries no signature to verify"),
        "{detail}"
    );
    key(&mut app, KeyCode::Esc);
    for _ in local_row..other_row {
        key(&mut app, KeyCode::Char('j'));
    }
    key(&mut app, KeyCode::Enter);
    let detail = popup_flat(&app);
    assert!(
        detail.contains("Verified no: no release signature was verified when it was accepted (usual for the release the cluster was installed with"),
        "{detail}"
    );
    // Without an engine nobody knows it was local: plain "no", explained the general way.
    let mut app = app_for(demo(), 120, 40);
    key(&mut app, KeyCode::Char('4'));
    assert!(!text_of(&app).contains("no (local)"));
}

/// `cvo rehearse --tui`: the header's first line says, right after the mode, that nothing is
/// written to the cluster (the text of `cli::rehearse::REHEARSAL_HEADER`), whole and in the
/// warning colour even at 80 columns, where the source and the clock are cut instead.
#[test]
fn the_rehearsal_banner_follows_the_mode_and_is_never_cut() {
    const BANNER: &str = "rehearsal: nothing is written to your cluster";
    for (w, h) in [(80, 24), (100, 30)] {
        let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), w, h);
        app.banner = Some(BANNER.into());
        app.read_only = true;
        app.dash.source = "context rehearsal".into();
        let t = draw(&app);
        let buf = t.backend().buffer();
        let first = &screen_text(buf)[0];
        assert!(
            first.starts_with(&format!("cvo │ active-apply │ {BANNER} │ context")),
            "{w}x{h}: {first}"
        );
        let (x, y) = find(buf, BANNER).expect("banner on screen");
        assert_eq!(y, 0);
        assert_eq!(buf[(x, y)].fg, app.palette.warn.fg.expect("warn colour"));
        assert!(buf[(x, y)].modifier.contains(ratatui::style::Modifier::BOLD));
        if w == 100 {
            insta::assert_snapshot!("rehearsal_header_100x30", t.backend());
        }
    }
}
