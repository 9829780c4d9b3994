//! What the views say in particular situations: an unreachable API, durations as `cvo status`
//! prints them, status-word filters, YAML of the selection, wide and narrow screens.

use super::*;

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
        text.contains("more below: pools, health — enlarge or press [3]/[5]"),
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

/// A requested release the cluster refused (ReleaseAccepted=False) is named by the headline and
/// the health panel, although oc's rules call the cluster "not updating"; an operand the CVO
/// still waits on is named the same way mid-update.
#[test]
fn a_blocked_update_is_named_in_the_headline_and_health_panel() {
    let load = |name: &str| {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/snapshots")
            .join(name);
        crate::cluster::snapshot::load(&[p]).expect("fixture loads")
    };
    let state = load("release-not-accepted.yaml");
    let app = app_for(state, 160, 40);
    assert_eq!(app.dash.headline.word, "Blocked");
    assert!(
        app.dash.headline.detail.starts_with(
            "requested update to 4.16.4 not accepted: RetrievePayload: Retrieving payload failed"
        ),
        "{:?}",
        app.dash.headline
    );
    let text = screen_text(draw(&app).backend().buffer()).join("\n");
    assert!(text.contains("Blocked"), "{text}");
    assert!(text.contains("requested update to 4.16.4 not accepted"), "{text}");

    let state = load("operand-not-reported.yaml");
    let app = app_for(state, 160, 40);
    assert_eq!(app.dash.headline.word, "Blocked");
    assert!(
        app.dash
            .headline
            .detail
            .starts_with("waiting on kube-apiserver to report raw-internal 4.16.4 for "),
        "{:?}",
        app.dash.headline
    );
    assert!(
        app.dash.insights.iter().any(|i| i
            .message
            .starts_with("waiting on kube-apiserver to report raw-internal 4.16.4")),
        "{:?}",
        app.dash.insights
    );
}
