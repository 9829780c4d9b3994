//! The engine views on a live cluster (`cvo tui`, `cvo`): watch-only words and gauge, the CVO
//! Lease in the header and the switch popup, a refused switch, a missing payload, and engine
//! keys without an engine.

use super::*;
use crate::reconcile::api::LeaseInfo;

/// Mid-update as a watch-only engine sees it between passes.
fn watching() -> StatusSnapshot {
    let mut s = mid_update(EngineMode::WatchOnly);
    s.running = false;
    s.leader = false;
    s.lease_holder = None;
    s
}

fn lease(holder: Option<&str>, alive: bool) -> LeaseInfo {
    LeaseInfo {
        lease: "openshift-cluster-version/version".into(),
        holder: holder.map(String::from),
        renew_time: Some(if alive {
            at("2024-07-20T10:40:00Z")
        } else {
            at("2024-07-20T09:00:00Z")
        }),
        duration_seconds: Some(137),
        alive,
        ours: false,
        read_at: Some(at("2024-07-20T10:40:05Z")),
        error: None,
    }
}

#[test]
fn watch_only_counts_manifests_in_sync_and_never_says_updating() {
    let (app, _rx) = engine_app(watching(), 120, 40);
    let text = text_of(&app);
    // 29 done, 3 of them drifted (the Drift::None record is in sync); 68 tasks, 2 skipped.
    assert!(
        text.contains("watch-only · 26 of 66 manifests in sync · 3 not applied yet"),
        "the cluster is updating: what differs is not applied yet\n{text}"
    );
    assert!(text.contains("Engine Watching"), "{text}");
    // The engine's own lines (the cluster's may say Updating: the feed shows a cluster mid-update).
    let engine_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("Engine ") || l.contains("manifests in sync") || l.contains("Desired "))
        .collect();
    assert_eq!(engine_lines.len(), 3, "{text}");
    for word in ["Updating", "Waiting", "waiting", "tasks ·", "%"] {
        assert!(
            !engine_lines.iter().any(|l| l.contains(word)),
            "{word:?} in watch-only:\n{engine_lines:#?}"
        );
    }
    let mut s = watching();
    s.running = true;
    let (app, _rx) = engine_app(s, 120, 40);
    assert!(text_of(&app).contains("Engine Comparing"));
}

#[test]
fn a_payload_that_cannot_be_had_is_said_and_red() {
    let mut s = watching();
    s.payload_error = Some("Unable to download and prepare the update: no pull access to quay.io".into());
    let (app, _rx) = engine_app(s, 120, 40);
    let t = draw(&app);
    let text = screen_text(t.backend().buffer()).join("\n");
    assert!(
        text.contains(
            "payload unavailable: Unable to download and prepare the update: no pull access to quay.io"
        ),
        "{text}"
    );
    // The rest of the dashboard still works.
    assert!(text.contains("Operators"), "{text}");
}

#[test]
fn m_reads_the_lease_and_a_live_foreign_holder_refuses_the_switch() {
    let mut s = watching();
    s.lease = Some(lease(Some("in-cluster-cvo_1"), true));
    let (mut app, mut rx) = engine_app(s, 120, 40);
    let text = text_of(&app);
    assert!(
        text.contains("Lease held by in-cluster-cvo_1 (alive, renewed 10:40:00)"),
        "{text}"
    );
    key(&mut app, KeyCode::Char('m'));
    assert_eq!(
        rx.try_recv().ok(),
        Some(Command::CheckLease),
        "m reads the Lease first"
    );
    let t = draw(&app);
    let buf = t.backend().buffer();
    let text = screen_text(buf).join("\n");
    assert!(text.contains("The switch is refused: the CVO Lease"), "{text}");
    assert!(text.contains("--replicas=0"), "{text}");
    let (x, y) = find(buf, "The switch is refused").expect("refusal on screen");
    assert_eq!(buf[(x, y)].fg, app.palette.err.fg.expect("err colour"));
    key(&mut app, KeyCode::Char('y'));
    assert!(rx.try_recv().is_err(), "a refused switch sends nothing");
    let (flash, level) = app.flash.clone().expect("flash");
    assert!(flash.starts_with("not switched: the CVO Lease"), "{flash}");
    assert_eq!(level, crate::ui::theme::Level::Error);
}

#[test]
fn an_expired_or_free_lease_lets_the_switch_through() {
    for l in [lease(Some("in-cluster-cvo_1"), false), lease(None, false)] {
        let mut s = watching();
        s.lease = Some(l.clone());
        let (mut app, mut rx) = engine_app(s, 120, 40);
        let text = text_of(&app);
        let want = if l.holder.is_some() {
            "Lease held by in-cluster-cvo_1 (expired 09:02:17)"
        } else {
            "Lease free"
        };
        assert!(text.contains(want), "{text}");
        key(&mut app, KeyCode::Char('m'));
        assert_eq!(rx.try_recv().ok(), Some(Command::CheckLease));
        assert!(!text_of(&app).contains("The switch is refused"));
        key(&mut app, KeyCode::Char('y'));
        assert_eq!(
            rx.try_recv().ok(),
            Some(Command::SetMode(EngineMode::ActiveApply))
        );
    }
}

#[test]
fn active_apply_shows_the_lease_as_ours() {
    let mut s = mid_update(EngineMode::ActiveApply);
    s.lease = Some(LeaseInfo {
        holder: Some("laptop_1".into()),
        ours: true,
        alive: true,
        ..lease(None, true)
    });
    let (app, _rx) = engine_app(s, 120, 40);
    let t = draw(&app);
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "Lease we hold it  ").expect("lease on screen, without our long identity");
    assert!(!text_of(&app).contains("laptop_1"));
    assert_eq!(buf[(x + 6, y)].fg, app.palette.ok.fg.expect("ok colour"));
}

#[test]
fn engine_keys_without_an_engine_say_why_in_the_footer() {
    let mut app = app_for(demo(), 120, 40);
    for c in ['7', '8', 'm', 'r', 'e'] {
        assert!(key(&mut app, KeyCode::Char(c)), "{c} answers");
        let (flash, _) = app.flash.clone().expect("flash");
        assert!(
            flash.contains("a snapshot (--from) has no engine"),
            "{c}: {flash}"
        );
        assert_eq!(app.tab, Tab::Overview);
        assert!(app.popup.is_none());
    }
    let text = text_of(&app);
    assert!(text.contains("has no engine"), "the footer shows it:\n{text}");
}

#[test]
fn watch_only_follows_the_in_cluster_cvo_beside_its_own_comparison() {
    // The in-cluster CVO holds the Lease and applies 4.16.4 (the demo ClusterVersion is mid
    // update); the engine compares the cluster with 4.16.4's payload.
    let mut s = watching();
    s.lease = Some(lease(Some("cluster-version-operator-6c9f_1a2b"), true));
    let (app, _rx) = engine_app(s.clone(), 120, 40);
    insta::assert_snapshot!("watch_only_following_in_cluster_cvo_120x40", draw(&app).backend());
    let text = text_of(&app);
    assert!(
        text.contains("Cluster's CVO updating to 4.16.4 · 31 of 33 operators · history Partial for 1h11m"),
        "{text}"
    );
    assert!(
        text.contains("26 of 66 manifests in sync · 3 not applied yet"),
        "{text}"
    );

    // Nobody holds the Lease: the update is requested but no CVO applies it.
    s.lease = Some(lease(Some("cluster-version-operator-6c9f_1a2b"), false));
    let (app, _rx) = engine_app(s.clone(), 120, 40);
    assert!(
        text_of(&app).contains("Cluster update to 4.16.4 requested, no CVO holds the Lease"),
        "{}",
        text_of(&app)
    );

    // A cluster not updating: what differs is drift again.
    let (mut app, _rx) = engine_app(s, 120, 40);
    app.dash.target_version = None;
    let text = text_of(&app);
    assert!(
        text.contains("26 of 66 manifests in sync · 3 would change"),
        "{text}"
    );
    assert!(
        !text.contains("Cluster's CVO") && !text.contains("requested, no CVO"),
        "{text}"
    );
}
