//! Edge cases of the assessment: empty state, history without a Completed entry, multi-line
//! messages, many nodes, a completed control plane with outdated workers.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::*;
use crate::cli::status::{Details, render_text};

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

fn from<T: serde::de::DeserializeOwned + Default>(v: Value) -> T {
    serde_json::from_value(v).unwrap_or_default()
}

fn co(name: &str, version: &str, progressing: (&str, &str, &str)) -> Value {
    json!({
        "metadata": {"name": name, "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"}},
        "status": {
            "versions": [{"name": "operator", "version": version}],
            "conditions": [
                {"type": "Available", "status": "True", "lastTransitionTime": "2024-01-01T10:00:00Z"},
                {"type": "Degraded", "status": "False", "lastTransitionTime": "2024-01-01T10:00:00Z"},
                {"type": "Progressing", "status": progressing.0, "lastTransitionTime": "2024-01-01T10:05:00Z",
                 "reason": progressing.1, "message": progressing.2},
            ]
        }
    })
}

fn cv(history: Value) -> Value {
    json!({
        "metadata": {"name": "version"},
        "status": {
            "desired": {"version": "4.15.0", "image": "img-4.15.0"},
            "history": history,
            "conditions": [
                {"type": "Failing", "status": "False", "lastTransitionTime": "2024-01-01T10:00:00Z"},
                {"type": "Progressing", "status": "True", "lastTransitionTime": "2024-01-01T10:00:00Z",
                 "message": "Working towards 4.15.0"},
            ]
        }
    })
}

fn pool(name: &str, config: &str) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {
            "configuration": {"name": config},
            "nodeSelector": {"matchLabels": {format!("node-role.kubernetes.io/{name}"): ""}}
        }
    })
}

fn mc(name: &str, version: &str) -> Value {
    json!({"metadata": {"name": name, "annotations": {"machineconfiguration.openshift.io/release-image-version": version}}})
}

fn node(name: &str, role: &str, current: &str, desired: &str, state: &str, reason: &str) -> Value {
    json!({
        "metadata": {
            "name": name,
            "labels": {format!("node-role.kubernetes.io/{role}"): ""},
            "annotations": {
                "machineconfiguration.openshift.io/currentConfig": current,
                "machineconfiguration.openshift.io/desiredConfig": desired,
                "machineconfiguration.openshift.io/state": state,
                "machineconfiguration.openshift.io/reason": reason,
            }
        },
        "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T09:00:00Z"}]}
    })
}

fn base_state(history: Value) -> ClusterState {
    ClusterState {
        cluster_version: Some(from(cv(history))),
        cluster_operators: vec![
            from(co("etcd", "4.15.0", ("False", "AsExpected", ""))),
            from(co(
                "kube-apiserver",
                "4.14.1",
                ("True", "NodeInstaller", "line one\nline two\nline three"),
            )),
        ],
        machine_config_pools: vec![
            from(pool("master", "rendered-master-new")),
            from(pool("worker", "rendered-worker-new")),
        ],
        machine_configs: vec![
            from(mc("rendered-master-old", "4.14.1")),
            from(mc("rendered-master-new", "4.15.0")),
            from(mc("rendered-worker-old", "4.14.1")),
            from(mc("rendered-worker-new", "4.15.0")),
        ],
        nodes: vec![
            from(node(
                "master-0",
                "master",
                "rendered-master-old",
                "rendered-master-old",
                "Done",
                "",
            )),
            from(node(
                "worker-0",
                "worker",
                "rendered-worker-old",
                "rendered-worker-old",
                "Done",
                "",
            )),
        ],
        ..Default::default()
    }
}

fn partial_history() -> Value {
    json!([
        {"state": "Partial", "version": "4.15.0", "image": "img-4.15.0", "startedTime": "2024-01-01T10:00:00Z"},
        {"state": "Partial", "version": "4.14.1", "image": "img-4.14.1", "startedTime": "2024-01-01T09:00:00Z"},
    ])
}

#[test]
fn empty_state_is_an_error_not_a_panic() {
    let a = assess(&ClusterState::default(), None, t("2024-01-01T10:00:00Z"));
    assert_eq!(a.error.as_deref(), Some(NO_CLUSTER_VERSION));
    assert!(render_text(&a, None).starts_with("error: no cluster version information available"));
    assert!(render_json_ok(&a));
}

fn render_json_ok(a: &Assessment) -> bool {
    crate::cli::status::render_json(a).is_ok()
}

#[test]
fn no_operators_and_no_progressing_are_errors() {
    let mut s = base_state(partial_history());
    s.cluster_operators.clear();
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    assert_eq!(a.error.as_deref(), Some(NO_OPERATORS));

    let mut s = base_state(partial_history());
    if let Some(cv) = s.cluster_version.as_mut() {
        cv.status.conditions.retain(|c| c.type_ != "Progressing");
    }
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    assert_eq!(a.error.as_deref(), Some(NO_PROGRESSING));
}

#[test]
fn history_without_completed_entry() {
    let s = base_state(partial_history());
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    assert!(a.error.is_none());
    assert_eq!(
        a.current_version, None,
        "never shows the desired version as current"
    );
    assert_eq!(a.desired_version.as_deref(), Some("4.15.0"));
    assert_eq!(a.control_plane.versions_text, "4.15.0 (from incomplete 4.14.1)");
    assert_eq!(a.control_plane.last_complete_version.as_deref(), Some("unknown"));
    let text = render_text(&a, None);
    assert!(
        text.contains("Previous update to 4.14.1 never completed, last complete update was unknown"),
        "{text}"
    );
}

#[test]
fn empty_history_does_not_panic() {
    let s = base_state(json!([]));
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    assert!(a.error.is_none());
    assert_eq!(a.control_plane.versions_text, "unknown (from unknown)");
    assert_eq!(a.control_plane.duration.text, "now");
    let text = render_text(&a, Some(Details::All));
    assert!(text.contains("Target Version:  unknown (from unknown)"), "{text}");
}

#[test]
fn multi_line_operator_message_continues_under_message_column() {
    let s = base_state(partial_history());
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    let text = render_text(&a, Some(Details::Operators));
    let expected = "NAME             SINCE   REASON          MESSAGE\n\
                    kube-apiserver   5m      NodeInstaller   line one\n\
                    \x20                                        line two\n\
                    \x20                                        line three\n";
    assert!(text.contains(expected), "{text}");
}

#[test]
fn multi_line_node_message_breaks_the_table_like_oc() {
    let mut s = base_state(partial_history());
    s.nodes.push(from(node(
        "worker-1",
        "worker",
        "rendered-worker-old",
        "rendered-worker-new",
        "Degraded",
        "failed to pull image:\nmanifest unknown",
    )));
    s.nodes.push(from(node(
        "worker-2",
        "worker",
        "rendered-worker-old",
        "rendered-worker-old",
        "Done",
        "",
    )));
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    let w = a
        .worker_pools()
        .next()
        .map(|p| p.nodes.clone())
        .unwrap_or_default();
    assert_eq!(w[0].assessment, NodeAssessmentState::Degraded);
    assert_eq!(w[0].message, "failed to pull image:\nmanifest unknown");
    let text = render_text(&a, None);
    // The embedded newline ends the row; the rows after it are aligned on their own.
    let expected = "NAME       ASSESSMENT   PHASE      VERSION   EST   MESSAGE\n\
                    worker-1   Degraded     Updating   4.14.1    ?     failed to pull image:\n\
                    manifest unknown\n\
                    worker-0   Outdated   Pending   4.14.1   ?   \n\
                    worker-2   Outdated   Pending   4.14.1   ?   \n";
    assert!(text.contains(expected), "{text}");
    assert!(text.contains(
        "worker        Degraded     0% (0/3)     3 Available, 0 Progressing, 0 Draining, 1 Degraded\n"
    ));
    // The degraded node is an insight; its description keeps the newline for the detailed form.
    let detailed = render_text(&a, Some(Details::Health));
    assert!(
        detailed.contains("Description: failed to pull image:\n               , manifest unknown"),
        "{detailed}"
    );
}

#[test]
fn many_nodes_are_truncated_without_details() {
    let mut s = base_state(partial_history());
    for i in 1..14 {
        s.nodes.push(from(node(
            &format!("worker-{i:02}"),
            "worker",
            "rendered-worker-old",
            "rendered-worker-old",
            "Done",
            "",
        )));
    }
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    let text = render_text(&a, None);
    assert!(
        text.contains(
            "...\nOmitted additional 4 Total, 0 Completed, 4 Available, 0 Progressing, 4 Outdated, 0 Draining, \
             0 Excluded, and 0 Degraded nodes.\nPass along --details=nodes to see all information.\n"
        ),
        "{text}"
    );
    let all = render_text(&a, Some(Details::Nodes));
    assert!(!all.contains("Omitted"));
    assert!(all.contains("worker-13"));
}

#[test]
fn completed_control_plane_with_outdated_workers() {
    let mut s = base_state(json!([
        {"state": "Completed", "version": "4.15.0", "image": "img-4.15.0",
         "startedTime": "2024-01-01T09:00:00Z", "completionTime": "2024-01-01T10:02:07Z"},
        {"state": "Completed", "version": "4.14.1", "image": "img-4.14.1",
         "startedTime": "2023-12-01T09:00:00Z", "completionTime": "2023-12-01T10:00:00Z"},
    ]));
    s.cluster_operators = vec![from(co("etcd", "4.15.0", ("False", "AsExpected", "")))];
    if let Some(cv) = s.cluster_version.as_mut() {
        for c in &mut cv.status.conditions {
            if c.type_ == "Progressing" {
                c.status = crate::openshift::ConditionStatus::False;
            }
        }
    }
    s.nodes = vec![
        from(node(
            "master-0",
            "master",
            "rendered-master-new",
            "rendered-master-new",
            "Done",
            "",
        )),
        from(node(
            "worker-0",
            "worker",
            "rendered-worker-old",
            "rendered-worker-old",
            "Done",
            "",
        )),
    ];
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    assert!(a.updating, "outdated workers keep the update visible");
    assert_eq!(a.current_version.as_deref(), Some("4.15.0"));
    let text = render_text(&a, None);
    assert!(
        text.starts_with(
            "= Control Plane =\nUpdate to 4.15.0 successfully completed at 2024-01-01T10:02:07Z (duration: 1h2m)\n\n\
             All control plane nodes successfully updated to 4.15.0\n\n= Worker Upgrade =\n"
        ),
        "{text}"
    );
}

#[test]
fn not_updating() {
    let mut s = base_state(partial_history());
    if let Some(cv) = s.cluster_version.as_mut() {
        for c in &mut cv.status.conditions {
            if c.type_ == "Progressing" {
                c.status = crate::openshift::ConditionStatus::False;
            }
        }
    }
    s.nodes.retain(|n| n.metadata.name.as_deref() == Some("master-0"));
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    assert!(!a.updating);
    assert_eq!(
        render_text(&a, Some(Details::All)),
        "The cluster is not updating.\n"
    );
}

#[test]
fn firing_alerts_become_insights() {
    let s = base_state(partial_history());
    let alerts = alerts::parse(
        r#"{"status":"success","data":{"alerts":[
        {"labels":{"alertname":"NewCrit","severity":"critical"},"annotations":{"description":"bad"},
         "state":"firing","activeAt":"2024-01-01T10:09:45.5Z","value":"1"},
        {"labels":{"alertname":"Old","severity":"warning"},"annotations":{},
         "state":"firing","activeAt":"2024-01-01T08:00:00Z","value":"1"},
        {"labels":{"alertname":"PodDisruptionBudgetAtLimit","severity":"warning","namespace":"ns"},
         "annotations":{"summary":"The pod disruption budget is preventing further disruption to pods."},
         "state":"firing","activeAt":"2024-01-01T08:00:00Z","value":"1"},
        {"labels":{"alertname":"Pending","severity":"warning"},"annotations":{},
         "state":"pending","activeAt":"2024-01-01T10:09:00Z","value":"1"},
        {"labels":{"alertname":"Info","severity":"info"},"annotations":{},
         "state":"firing","activeAt":"2024-01-01T10:09:00Z","value":"1"}
    ]}}"#,
    )
    .unwrap_or_default();
    let a = assess(&s, Some(&alerts), t("2024-01-01T10:10:00Z"));
    let summaries: Vec<&str> = a.health.insights.iter().map(|i| i.summary.as_str()).collect();
    assert_eq!(
        summaries,
        vec![
            "Alert is firing: NewCrit",
            "Previous update to 4.14.1 never completed, last complete update was unknown",
            "Alert is firing: The pod disruption budget is preventing further disruption to pods.",
        ]
    );
    assert_eq!(a.health.insights[0].since, "14s");
    assert_eq!(a.health.insights[0].level, Level::Critical);
    assert_eq!(
        a.health.insights[2].resources[0].name,
        "ns/PodDisruptionBudgetAtLimit"
    );
    assert!(
        a.health.insights[2]
            .description
            .starts_with("Alert known to affect updates has been firing since")
    );
}

#[test]
fn absurd_times_do_not_overflow() {
    // History entry without startedTime (the epoch) and a tiny completion: no arithmetic panic.
    let mut s = base_state(json!([
        {"state": "Partial", "version": "4.15.0", "image": "img-4.15.0"},
        {"state": "Completed", "version": "4.14.1", "image": "img-4.14.1"},
        {"state": "Completed", "version": "4.14.0", "image": "img-4.14.0"},
    ]));
    for i in 0..60 {
        s.cluster_operators
            .push(from(co(&format!("op-{i:02}"), "4.14.1", ("False", "", ""))));
    }
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    assert!(a.error.is_none());
    let _ = render_text(&a, Some(Details::All));
    assert!(durations::round(i64::MAX - 1, durations::MINUTE) > 0);
    assert!(durations::round(i64::MIN + 1, durations::MINUTE) < 0);
}

#[test]
fn not_ready_node_is_serious_after_five_minutes_of_wall_clock() {
    let mut s = base_state(partial_history());
    let mut n: k8s_openapi::api::core::v1::Node = from(node(
        "worker-9",
        "worker",
        "rendered-worker-old",
        "rendered-worker-old",
        "Done",
        "",
    ));
    if let Some(c) = n
        .status
        .as_mut()
        .and_then(|s| s.conditions.as_mut())
        .and_then(|c| c.first_mut())
    {
        c.status = "False".to_owned();
        c.message = Some("kubelet stopped posting \"status\"".to_owned());
        c.last_transition_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2024-01-01T10:08:00Z".parse().unwrap_or_default(),
        ));
    }
    s.nodes.push(n);
    let now = t("2024-01-01T10:10:00Z");
    let fresh = assess(&s, None, now);
    let row = fresh
        .worker_pools()
        .flat_map(|p| &p.nodes)
        .find(|n| n.name == "worker-9")
        .cloned();
    assert_eq!(
        row.map(|r| (r.assessment, r.message)),
        Some((NodeAssessmentState::Unavailable, "Not ready".into()))
    );
    assert!(
        !fresh
            .health
            .insights
            .iter()
            .any(|i| i.summary.contains("worker-9")),
        "2 minutes: not serious yet"
    );

    let later = assess_with_wall_clock(&s, None, now, t("2024-01-01T11:00:00Z"));
    let ins = later
        .health
        .insights
        .iter()
        .find(|i| i.summary == "Node worker-9 is not ready")
        .cloned();
    let ins = ins.unwrap_or_default();
    assert_eq!(ins.since, "2m");
    assert_eq!(ins.impact, Impact::UpdateSpeed);
    assert_eq!(
        ins.description,
        "Node has a Ready!=True condition with Reason \"Not ready\" and message \"kubelet stopped posting \\\"status\\\"\""
    );
}

#[test]
fn pools_and_nodes_are_assessed_even_with_an_error() {
    let ok = assess(&base_state(partial_history()), None, t("2024-01-01T10:10:00Z"));
    assert!(ok.error.is_none());
    assert!(ok.pools_despite_error.is_empty());
    assert_eq!(ok.node_pools().len(), ok.pools.len());

    let mut s = base_state(partial_history());
    s.cluster_operators.clear();
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    assert_eq!(a.error.as_deref(), Some(NO_OPERATORS));
    assert!(
        a.pools.is_empty(),
        "`cvo status -o json` keeps printing only the error's fields"
    );
    assert_eq!(a.node_pools().len(), s.machine_config_pools.len());
    let nodes: usize = a.node_pools().iter().map(|p| p.nodes.len()).sum();
    assert_eq!(nodes, s.nodes.len());
    assert!(
        !crate::cli::status::render_json(&a)
            .expect("json")
            .contains("poolsDespiteError")
    );

    s.cluster_version = None;
    let a = assess(&s, None, t("2024-01-01T10:10:00Z"));
    assert_eq!(a.error.as_deref(), Some(NO_CLUSTER_VERSION));
    assert_eq!(a.node_pools().len(), s.machine_config_pools.len());
}
