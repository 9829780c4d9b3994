//! The Updates view and the requests made from it: snapshots of the view, the overview line,
//! the confirm popups (recommended, conditional with its risk, read-only refusal), the "no
//! updates" explanations; the risk colour; and `App::update` sending exactly one request on
//! confirm and none on cancel.

use tokio::sync::mpsc;

use super::*;
use crate::{
    openshift::{AcceptRisk, ClusterVersion, Update},
    reconcile::api::Command,
    ui::model::updates::UpdateKind,
};

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map(|t| t.to_utc()).expect("time")
}

/// The live demo's cluster at 4.16.3 (`assets/demo-cluster`): 4.16.4 recommended, 4.16.5
/// conditional with one risk.
fn demo_cluster() -> ClusterState {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo-cluster");
    let paths: Vec<PathBuf> = ["cv", "co", "mc", "mcp", "node"]
        .iter()
        .map(|k| dir.join(format!("{k}.yaml")))
        .collect();
    crate::cluster::snapshot::load(&paths).expect("the demo cluster loads")
}

fn updates_app(state: ClusterState, w: u16, h: u16) -> App {
    App::new(
        Arc::new(state),
        None,
        Some(at("2024-07-22T10:00:00Z")),
        Palette::color(),
        (w, h),
    )
}

/// An app with a command channel (as with an embedded engine's), on the Updates view.
fn with_writer(state: ClusterState, w: u16, h: u16) -> (App, mpsc::Receiver<Command>) {
    let mut app = updates_app(state, w, h);
    let (tx, rx) = mpsc::channel(4);
    app.commands = Some(tx);
    key(&mut app, KeyCode::Char('6'));
    assert_eq!(app.tab, Tab::Updates);
    (app, rx)
}

fn sent(rx: &mut mpsc::Receiver<Command>) -> Vec<Command> {
    let mut out = Vec::new();
    while let Ok(c) = rx.try_recv() {
        out.push(c);
    }
    out
}

fn text_of(app: &App) -> String {
    screen_text(draw(app).backend().buffer()).join("\n")
}

#[test]
fn model_lists_recommended_then_conditional_with_risks() {
    let app = updates_app(demo_cluster(), 120, 40);
    let u = &app.dash.updates;
    let rows: Vec<(&str, UpdateKind)> = u
        .rows
        .iter()
        .map(|r| (r.release.version.as_str(), r.kind))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("4.16.4", UpdateKind::Recommended),
            ("4.16.5", UpdateKind::Conditional)
        ]
    );
    let risk = &u.rows[1].risks[0];
    assert_eq!(risk.name, "OVNKubernetesEgressIPRegression");
    assert_eq!(risk.url, "https://issues.redhat.com/browse/OCPBUGS-37029");
    assert!(
        risk.message
            .starts_with("Clusters updating directly from 4.16.3 to 4.16.5")
    );
    assert_eq!(
        u.rows[1].recommended_word(),
        "no (OVNKubernetesEgressIPRegression)"
    );
    assert_eq!(u.channels, vec!["candidate-4.16", "fast-4.16", "stable-4.16"]);
    assert!(u.notes.is_empty(), "{:?}", u.notes);
}

#[test]
fn snapshot_updates_view_120x40() {
    let mut app = updates_app(demo_cluster(), 120, 40);
    key(&mut app, KeyCode::Char('6'));
    key(&mut app, KeyCode::Char('j'));
    let text = text_of(&app);
    // The risk in plain view: name, message and URL.
    assert!(text.contains("Risk OVNKubernetesEgressIPRegression"), "{text}");
    assert!(
        text.contains("https://issues.redhat.com/browse/OCPBUGS-37029"),
        "{text}"
    );
    insta::assert_snapshot!("updates_view_120x40", draw(&app).backend());
}

#[test]
fn snapshot_overview_updates_line_100x30() {
    let app = updates_app(demo_cluster(), 100, 30);
    let text = text_of(&app);
    assert!(
        text.contains(
            "Updates (6): 4.16.4 recommended · 4.16.5 conditional (risk: OVNKubernetesEgressIPRegression)"
        ),
        "{text}"
    );
    insta::assert_snapshot!("overview_updates_line_100x30", draw(&app).backend());
}

#[test]
fn risk_names_are_yellow_and_recommended_green() {
    let mut app = updates_app(demo_cluster(), 120, 40);
    key(&mut app, KeyCode::Char('6'));
    key(&mut app, KeyCode::Char('j'));
    let t = draw(&app);
    let buf = t.backend().buffer();
    let (x, y) = find(buf, "Risk OVNKubernetesEgressIPRegression").expect("risk on screen");
    assert_eq!(buf[(x + 5, y)].fg, Color::Yellow, "the risk name is a warning");
    assert_eq!(buf[(x, y)].modifier, Modifier::DIM, "the label is muted");
    let (x, y) = find(buf, "recommended yes").expect("recommended row");
    assert_eq!(buf[(x, y)].fg, Color::Green);
    let (x, y) = find(buf, "conditional no").expect("conditional row");
    assert_eq!(buf[(x, y)].fg, Color::Yellow);
}

#[test]
fn snapshot_confirm_recommended_and_confirm_sends_one_request() {
    let (mut app, mut rx) = with_writer(demo_cluster(), 120, 40);
    assert!(key(&mut app, KeyCode::Enter));
    insta::assert_snapshot!("confirm_recommended_120x40", draw(&app).backend());
    assert!(sent(&mut rx).is_empty(), "opening the popup sends nothing");
    assert!(key(&mut app, KeyCode::Char('y')));
    assert!(app.popup.is_none());
    let cmds = sent(&mut rx);
    assert_eq!(cmds.len(), 1, "{cmds:?}");
    let Command::Request(r) = &cmds[0] else {
        panic!("a request: {cmds:?}");
    };
    let (patch, summary) = (r.patch.as_value(), &r.summary);
    assert_eq!(summary, "upgrade --to 4.16.4");
    assert_eq!(
        patch["spec"]["desiredUpdate"]["image"],
        "quay.io/openshift-release-dev/ocp-release@sha256:8878f38c39bf31828fcd6909657523a97dabf8dd21425d6f2d760433d191071e"
    );
    assert_eq!(patch["spec"]["desiredUpdate"]["version"], "4.16.4");
    assert_eq!(
        patch["spec"].as_object().map(|o| o.len()),
        Some(1),
        "only desiredUpdate: {patch}"
    );
}

/// Upstream `pkg/payload/precondition/clusterversion/upgradeable.go`: with Upgradeable=False
/// and an unmanaged override, a patch update is not blocked; the popup shows the cluster's
/// non-blocking `ClusterVersionOverridesSet` as a warning verdict and a `warning:` line, and
/// confirming still sends the request.
#[test]
fn snapshot_confirm_shows_a_non_blocking_precondition_as_a_warning() {
    let mut state = demo_cluster();
    let cv = state
        .cluster_version
        .as_mut()
        .expect("the demo cluster has a ClusterVersion");
    cv.spec.overrides = vec![crate::openshift::ComponentOverride {
        kind: "Deployment".into(),
        group: "apps".into(),
        namespace: "openshift-monitoring".into(),
        name: "prometheus".into(),
        unmanaged: true,
    }];
    let up = cv
        .status
        .conditions
        .iter_mut()
        .find(|c| c.type_ == "Upgradeable")
        .expect("Upgradeable");
    up.status = crate::openshift::ConditionStatus::False;
    up.reason = Some("ClusterVersionOverrides".into());
    up.message = Some("Disabling ownership via cluster version overrides prevents updates between minor or major versions. Please remove overrides before requesting a minor or major version update.".into());
    let (mut app, mut rx) = with_writer(state, 120, 50);
    assert!(key(&mut app, KeyCode::Enter));
    let text = text_of(&app);
    let flat: String = text
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains("! ClusterVersionUpgradeable: ClusterVersionOverridesSet does not block; the cluster records it in the update's accepted risks (warning below)"),
        "{text}"
    );
    assert!(
        flat.contains("warning: Precondition \"ClusterVersionUpgradeable\" failed because of \"ClusterVersionOverridesSet\": Retarget from 4.16.3 to 4.16.4 is not blocked by ClusterVersionOverridesSet. But the cluster-version operator is not managing these resources; they are currently the responsibility of the agent that set the overrides: Disabling ownership via cluster version overrides prevents upgrades between minor or major versions. Please remove overrides before requesting a minor or major version update."),
        "{text}"
    );
    assert!(!flat.contains("Refused"), "{text}");
    insta::assert_snapshot!("confirm_precondition_warning_120x50", draw(&app).backend());
    assert!(key(&mut app, KeyCode::Char('y')));
    let cmds = sent(&mut rx);
    assert_eq!(cmds.len(), 1, "a warning does not block: {cmds:?}");
}

#[test]
fn snapshot_confirm_conditional_lists_the_risk_and_esc_sends_nothing() {
    let (mut app, mut rx) = with_writer(demo_cluster(), 120, 40);
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Enter);
    let text = text_of(&app);
    assert!(text.contains("Risks you accept by confirming"), "{text}");
    assert!(
        text.contains("upgrade --to 4.16.5 --allow-not-recommended"),
        "{text}"
    );
    insta::assert_snapshot!("confirm_conditional_120x40", draw(&app).backend());
    assert!(key(&mut app, KeyCode::Esc));
    assert!(app.popup.is_none());
    assert!(sent(&mut rx).is_empty(), "cancel writes nothing");
    // n cancels too.
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('n'));
    assert!(app.popup.is_none());
    assert!(sent(&mut rx).is_empty());
}

#[test]
fn snapshot_read_only_refuses_with_the_reason() {
    let (mut app, mut rx) = with_writer(demo_cluster(), 120, 40);
    app.read_only = true;
    key(&mut app, KeyCode::Enter);
    let text = text_of(&app);
    assert!(text.contains("Refused: --read-only"), "{text}");
    insta::assert_snapshot!("confirm_read_only_120x40", draw(&app).backend());
    key(&mut app, KeyCode::Char('y'));
    assert!(sent(&mut rx).is_empty(), "read-only never sends");
    let flash = app.flash.clone().map(|f| f.0).unwrap_or_default();
    assert!(
        flash.starts_with("refused, nothing written: --read-only"),
        "{flash}"
    );
    // Channel, clear and accept-risks are refused the same way.
    for k in ['x', 'a'] {
        key(&mut app, KeyCode::Char('j'));
        key(&mut app, KeyCode::Char(k));
        key(&mut app, KeyCode::Enter);
    }
    key(&mut app, KeyCode::Char('c'));
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty());
}

#[test]
fn snapshot_without_a_writer_the_popup_says_so() {
    let mut app = updates_app(demo_cluster(), 120, 40);
    key(&mut app, KeyCode::Char('6'));
    key(&mut app, KeyCode::Enter);
    let text = text_of(&app);
    assert!(
        text.contains("Refused: a snapshot (--from) cannot be written to"),
        "{text}"
    );
}

#[test]
fn channel_change_from_the_release_list() {
    let (mut app, mut rx) = with_writer(demo_cluster(), 120, 40);
    key(&mut app, KeyCode::Char('c'));
    assert!(matches!(
        app.popup.as_ref().map(|p| &p.kind),
        Some(PopupKind::Channels(c)) if c.len() == 3
    ));
    assert_eq!(
        app.popup.as_ref().map(|p| p.scroll),
        Some(2),
        "starts on the current channel"
    );
    key(&mut app, KeyCode::Char('k'));
    key(&mut app, KeyCode::Enter);
    let text = text_of(&app);
    assert!(text.contains("spec.channel: fast-4.16"), "{text}");
    key(&mut app, KeyCode::Enter);
    let cmds = sent(&mut rx);
    assert_eq!(cmds.len(), 1);
    let Command::Request(r) = &cmds[0] else {
        panic!("{cmds:?}")
    };
    let (patch, summary) = (r.patch.as_value(), &r.summary);
    assert_eq!(summary, "upgrade channel fast-4.16");
    assert_eq!(*patch, serde_json::json!({"spec": {"channel": "fast-4.16"}}));
}

/// An app with an engine whose snapshot says how the cluster's FeatureGate sets
/// ClusterUpdateAcceptRisks, on the Updates view.
fn with_engine_gate(gate: Option<bool>) -> (App, mpsc::Receiver<Command>) {
    let mut app = updates_app(demo_cluster(), 120, 40);
    let (tx, rx) = mpsc::channel(4);
    let snap = crate::reconcile::api::StatusSnapshot {
        accept_risks_gate: gate,
        ..Default::default()
    };
    app.attach_engine(Arc::new(snap), tx);
    key(&mut app, KeyCode::Char('6'));
    assert_eq!(app.tab, Tab::Updates);
    (app, rx)
}

#[test]
fn accept_risks_is_offered_only_with_the_feature_gate() {
    for gate in [None, Some(false)] {
        let (mut app, mut rx) = with_engine_gate(gate);
        key(&mut app, KeyCode::Char('j'));
        let screen = text_of(&app);
        assert!(
            screen.contains("a: needs feature gate ClusterUpdateAcceptRisks"),
            "{gate:?}: {screen}"
        );
        assert!(!screen.contains("a accept risks"), "{gate:?}");
        key(&mut app, KeyCode::Char('a'));
        assert!(app.popup.is_none(), "{gate:?}: no popup without the gate");
        let (msg, level) = app.flash.clone().expect("the reason is on screen");
        assert_eq!(level, crate::ui::theme::Level::Warn);
        assert!(
            msg.starts_with("accepting risks needs the feature gate ClusterUpdateAcceptRisks"),
            "{msg}"
        );
        let why = if gate.is_none() {
            "no engine has read the FeatureGate \"cluster\""
        } else {
            "the FeatureGate \"cluster\" does not enable for 4.16.3"
        };
        assert!(msg.contains(why), "{msg}");
        key(&mut app, KeyCode::Char('y'));
        assert!(sent(&mut rx).is_empty(), "{gate:?}: nothing written");
    }
    let (mut app, _rx) = with_engine_gate(Some(true));
    key(&mut app, KeyCode::Char('j'));
    assert!(text_of(&app).contains("4.16.5 — Enter request · a accept risks · c channel"));
}

#[test]
fn accept_risks_and_clear_write_desired_update_only() {
    let (mut app, mut rx) = with_engine_gate(Some(true));
    key(&mut app, KeyCode::Char('a'));
    assert!(app.popup.is_none(), "4.16.4 has no risk");
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Char('a'));
    key(&mut app, KeyCode::Char('y'));
    key(&mut app, KeyCode::Char('x'));
    key(&mut app, KeyCode::Char('y'));
    let cmds = sent(&mut rx);
    let patches: Vec<serde_json::Value> = cmds
        .iter()
        .filter_map(|c| match c {
            Command::Request(r) => Some(r.patch.as_value().clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        patches,
        vec![
            serde_json::json!({"spec": {"desiredUpdate": {"acceptRisks": [{"name": "OVNKubernetesEgressIPRegression"}]}}}),
            serde_json::json!({"spec": {"desiredUpdate": null}}),
        ]
    );
}

fn no_updates(f: impl FnOnce(&mut ClusterVersion)) -> ClusterState {
    let mut s = demo_cluster();
    with_cv(&mut s, |cv| {
        cv.status.available_updates = None;
        cv.status.conditional_updates.clear();
        f(cv);
    });
    s
}

#[test]
fn snapshot_no_updates_variants() {
    // Service unreachable: RetrievedUpdates=False with the status code and URL.
    let s = no_updates(|cv| {
        set_condition(
            &mut cv.status.conditions,
            "RetrievedUpdates",
            ConditionStatus::False,
            "ResponseFailed",
            "Unable to retrieve available updates: unexpected HTTP status: 503 Service Unavailable from \
             https://api.openshift.com/api/upgrades_info/v1/graph?arch=amd64&channel=stable-4.16",
        );
    });
    let mut app = updates_app(s, 100, 30);
    key(&mut app, KeyCode::Char('6'));
    let text = text_of(&app);
    assert!(
        text.contains("RetrievedUpdates=False (ResponseFailed) for 2d"),
        "{text}"
    );
    assert!(text.contains("503 Service Unavailable"), "{text}");
    insta::assert_snapshot!("no_updates_unreachable_100x30", draw(&app).backend());
    key(&mut app, KeyCode::Char('1'));
    let text = text_of(&app);
    assert!(
        text.contains("Updates (6): none. RetrievedUpdates=False (ResponseFailed)"),
        "{text}"
    );

    // No channel.
    let s = no_updates(|cv| {
        cv.spec.channel = None;
        set_condition(
            &mut cv.status.conditions,
            "RetrievedUpdates",
            ConditionStatus::False,
            "NoChannel",
            "The update channel has not been configured.",
        );
    });
    let mut app = updates_app(s, 100, 30);
    key(&mut app, KeyCode::Char('6'));
    insta::assert_snapshot!("no_updates_no_channel_100x30", draw(&app).backend());
    assert!(text_of(&app).contains("No channel is set (spec.channel)"));

    // Current release not in the channel.
    let s = no_updates(|cv| {
        cv.spec.channel = Some("stable-4.17".into());
        set_condition(
            &mut cv.status.conditions,
            "RetrievedUpdates",
            ConditionStatus::False,
            "VersionNotFound",
            "Unable to retrieve available updates: currently reconciling cluster version 4.16.3 not found in the \"stable-4.17\" channel",
        );
    });
    let mut app = updates_app(s, 100, 30);
    key(&mut app, KeyCode::Char('6'));
    let text = text_of(&app);
    assert!(
        text.contains(
            "4.16.3 is not in channel stable-4.17: it lists candidate-4.16, fast-4.16, stable-4.16"
        ),
        "{text}"
    );
    insta::assert_snapshot!("no_updates_not_in_channel_100x30", draw(&app).backend());

    // Retrieved fine, no edge from here.
    let s = no_updates(|_| {});
    let mut app = updates_app(s, 100, 30);
    key(&mut app, KeyCode::Char('6'));
    let text = text_of(&app);
    assert!(
        text.contains(
            "No updates: https://api.openshift.com/api/upgrades_info/v1/graph lists no edge from 4.16.3"
        ),
        "{text}"
    );
}

#[test]
fn stale_list_after_a_failed_retrieval_is_flagged() {
    let mut s = demo_cluster();
    with_cv(&mut s, |cv| {
        set_condition(
            &mut cv.status.conditions,
            "RetrievedUpdates",
            ConditionStatus::False,
            "RemoteFailed",
            "Unable to retrieve available updates: Get \"https://updates.example.com/graph\": dial tcp: connection refused",
        );
    });
    let app = updates_app(s, 120, 40);
    let notes: Vec<&str> = app.dash.updates.notes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[1].starts_with("The targets below are from the last good retrieval, more than 2d"),
        "{notes:?}"
    );
    let (line, level) = app.dash.updates.summary();
    assert_eq!(level, crate::ui::theme::Level::Warn, "{line}");
}

#[test]
fn requested_and_accepted_show_in_the_model() {
    let mut s = demo_cluster();
    with_cv(&mut s, |cv| {
        cv.spec.desired_update = Some(Update {
            version: Some("4.16.5".into()),
            image: Some(
                "quay.io/openshift-release-dev/ocp-release@sha256:93df48a60e4564fbce3bd6e23f0e3d1376376fb6b583f801fe13705506f218bb"
                    .into(),
            ),
            accept_risks: vec![AcceptRisk {
                name: "OVNKubernetesEgressIPRegression".into(),
            }],
            ..Default::default()
        });
    });
    let app = updates_app(s, 120, 40);
    let u = &app.dash.updates;
    assert_eq!(u.requested.as_ref().map(|r| r.0.as_str()), Some("4.16.5"));
    assert!(u.rows[1].requested && !u.rows[0].requested);
    assert!(u.rows[1].risks[0].accepted);
    assert!(u.summary().0.contains("requested 4.16.5"));
}

/// After its risks are accepted, a conditional update turns Recommended=True and the CVO adds
/// it to availableUpdates as well: the view lists it once, as the conditional row with its
/// risks.
#[test]
fn an_accepted_conditional_update_is_listed_once() {
    let mut s = demo_cluster();
    with_cv(&mut s, |cv| {
        let cu = &mut cv.status.conditional_updates[0];
        let c = &mut cu.conditions[0];
        c.status = crate::openshift::ConditionStatus::True;
        c.reason = Some("AllExposedRisksAccepted".into());
        let release = cu.release.clone();
        cv.status
            .available_updates
            .get_or_insert_with(Vec::new)
            .push(release);
        cv.spec.desired_update = Some(Update {
            accept_risks: vec![AcceptRisk {
                name: "OVNKubernetesEgressIPRegression".into(),
            }],
            ..Default::default()
        });
    });
    let (mut app, mut rx) = with_writer(s, 120, 40);
    let rows = &app.dash.updates.rows;
    let versions: Vec<(&str, UpdateKind)> = rows
        .iter()
        .map(|r| (r.release.version.as_str(), r.kind))
        .collect();
    assert_eq!(
        versions,
        vec![
            ("4.16.4", UpdateKind::Recommended),
            ("4.16.5", UpdateKind::Conditional)
        ]
    );
    assert_eq!(rows[1].risks.len(), 1);
    assert!(rows[1].risks[0].accepted);
    assert_eq!(rows[1].recommended_word(), "yes (AllExposedRisksAccepted)");
    // Requested like a recommended update: no risk is waived, no --allow-not-recommended.
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Enter);
    let screen = text_of(&app);
    assert!(screen.contains("request the update to 4.16.5?"), "{screen}");
    assert!(!screen.contains("Risks you accept by confirming"), "{screen}");
    key(&mut app, KeyCode::Char('y'));
    let summaries: Vec<String> = sent(&mut rx)
        .into_iter()
        .filter_map(|c| match c {
            Command::Request(r) => Some(r.summary),
            _ => None,
        })
        .collect();
    assert_eq!(summaries, vec!["upgrade --to 4.16.5".to_string()]);
}

/// The Updates view names the update service the engine actually asked (the demo's loopback
/// service), not only `spec.upstream`.
#[test]
fn retrieved_from_names_the_url_the_engine_asked() {
    let (app, _rx) = with_engine_gate(Some(true));
    assert!(
        text_of(&app).contains("from https://api.openshift.com/api/upgrades_info/v1/graph"),
        "nothing fetched yet: spec.upstream"
    );
    let mut app = updates_app(demo_cluster(), 120, 40);
    let (tx, _rx) = mpsc::channel(4);
    let snap = crate::reconcile::api::StatusSnapshot {
        updates: Some(Arc::new(crate::reconcile::api::FetchedUpdates {
            upstream: "http://127.0.0.1:4321/graph".into(),
            ..Default::default()
        })),
        ..Default::default()
    };
    app.attach_engine(Arc::new(snap), tx);
    key(&mut app, KeyCode::Char('6'));
    let screen = text_of(&app);
    assert!(
        screen
            .contains("from http://127.0.0.1:4321/graph (instead of spec.upstream https://api.openshift.com"),
        "{screen}"
    );
}
