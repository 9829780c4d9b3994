//! `App::update` and key handling: keys in, state out (help, filter, sort, the command line,
//! navigation, popups, feeds and the clock).

use super::*;

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
    for b in crate::ui::keys::BINDINGS {
        if b.engine_only {
            assert!(
                !text.contains(b.desc.en),
                "no engine, no engine key: {}",
                b.desc.en
            );
            continue;
        }
        assert!(text.contains(b.label), "help lists {}", b.label);
        assert!(text.contains(b.desc.en), "help describes {}", b.desc.en);
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
