//! The detail and YAML popups' content, built from the view model, the cluster state and the
//! engine model: data (labelled values, YAML text), which the popup code lays out.

use crate::l10n::{tr, trf};
use chrono::{DateTime, Utc};

use super::Dashboard;
use crate::{
    cluster::ClusterState,
    ui::{
        engine::{self, EngineModel},
        tab::Tab,
        text,
        theme::Level,
    },
};

/// What the popups read: the view model, the cluster state it was built from, the engine
/// model (when an engine is attached) and the instant ages are measured against.
pub(crate) struct Sources<'a> {
    /// The view model.
    pub dash: &'a Dashboard,
    /// The cluster state behind it.
    pub state: &'a ClusterState,
    /// The embedded engine's model.
    pub engine: Option<&'a EngineModel>,
    /// "Now".
    pub now: DateTime<Utc>,
}

/// One labelled value of a detail popup (the value wraps; multi-line values keep their lines).
#[derive(Clone, Debug, PartialEq)]
pub struct DetailLine {
    /// Label (empty for a continuation or a section heading's body).
    pub label: String,
    /// Value.
    pub value: String,
    /// Severity for the value's style.
    pub level: Level,
}

impl DetailLine {
    pub(crate) fn new(label: impl Into<String>, value: impl Into<String>, level: Level) -> Self {
        Self {
            label: label.into(),
            value: value.into(),
            level,
        }
    }
    pub(crate) fn heading(title: impl Into<String>) -> Self {
        Self {
            label: String::new(),
            value: title.into(),
            level: Level::Unknown,
        }
    }
}

/// An object's YAML, starting with `apiVersion:` and `kind:` as `oc get -o yaml` prints it
/// (the typed objects do not always carry them).
fn to_yaml<T: serde::Serialize + k8s_openapi::Resource>(obj: &T) -> String {
    use serde_norway::{Mapping, Value};
    let value = match serde_norway::to_value(obj) {
        Ok(v) => v,
        Err(e) => return format!("# cannot render YAML: {e}"),
    };
    let value = match value {
        Value::Mapping(m) => {
            let mut out = Mapping::new();
            out.insert("apiVersion".into(), T::API_VERSION.into());
            out.insert("kind".into(), T::KIND.into());
            for (k, v) in m {
                if k.as_str() != Some("apiVersion") && k.as_str() != Some("kind") {
                    out.insert(k, v);
                }
            }
            Value::Mapping(out)
        }
        other => other,
    };
    serde_norway::to_string(&value).unwrap_or_else(|e| format!("# cannot render YAML: {e}"))
}

/// `(title, yaml)` of the object an insight is about: its first resource that is a node,
/// ClusterOperator, MachineConfigPool or the ClusterVersion.
fn insight_yaml(src: &Sources<'_>, i: usize) -> Option<(String, String)> {
    let s = &src.state;
    src.dash.insights.get(i)?.resources.iter().find_map(|r| {
        let (kind, name) = r.split_once(": ")?;
        let group = kind.split('.').next().unwrap_or(kind);
        match group {
            "nodes" => {
                let n = s
                    .nodes
                    .iter()
                    .find(|n| n.metadata.name.as_deref() == Some(name))?;
                Some((format!("node/{name} (yaml)"), to_yaml(n)))
            }
            "clusteroperators" => {
                let co = s.cluster_operators.iter().find(|c| c.name() == name)?;
                Some((format!("clusteroperator/{name} (yaml)"), to_yaml(co)))
            }
            "machineconfigpools" => {
                let p = s.machine_config_pools.iter().find(|p| p.name() == name)?;
                Some((format!("machineconfigpool/{name} (yaml)"), to_yaml(p)))
            }
            "clusterversions" => {
                let cv = s.cluster_version.as_ref()?;
                Some((format!("clusterversion/{name} (yaml)"), to_yaml(cv)))
            }
            _ => None,
        }
    })
}

/// `(title, yaml)` of the object behind row `i` of `tab`.
pub(crate) fn object_yaml(src: &Sources<'_>, tab: Tab, i: usize) -> Option<(String, String)> {
    let s = &src.state;
    match tab {
        Tab::Operators => {
            let name = &src.dash.operators.get(i)?.name;
            let co = s.cluster_operators.iter().find(|c| c.name() == name)?;
            Some((format!("clusteroperator/{name} (yaml)"), to_yaml(co)))
        }
        Tab::Nodes => {
            let name = &src.dash.nodes.get(i)?.name;
            let n = s
                .nodes
                .iter()
                .find(|n| n.metadata.name.as_deref() == Some(name))?;
            Some((format!("node/{name} (yaml)"), to_yaml(n)))
        }
        Tab::Health => insight_yaml(src, i),
        Tab::Overview | Tab::History | Tab::Updates => {
            let cv = s.cluster_version.as_ref()?;
            Some(("clusterversion/version (yaml)".into(), to_yaml(cv)))
        }
        Tab::Tasks => None,
        Tab::Drift => {
            // A create shows the object as it would be sent (watch-only; an active pass's
            // create keeps no copy: the object is in the cluster).
            let e = src.engine?;
            let row = e.drift.get(i)?;
            match &e.snap.drift.get(row.record)?.drift {
                crate::reconcile::api::Drift::Create { object: Some(object) } => Some((
                    trf!(
                        "detail-to-create-yaml",
                        "{kind} {object} to create (yaml)",
                        kind = row.kind,
                        object = row.object
                    ),
                    serde_norway::to_string(&crate::openshift::mask::mask_secret(object))
                        .unwrap_or_else(|e| format!("# cannot render YAML: {e}")),
                )),
                _ => None,
            }
        }
    }
}

/// A detail popup's title, lines and the `(title, yaml)` of its object.
pub(crate) type Detail = (String, Vec<DetailLine>, Option<(String, String)>);

/// The detail popup of row `i` of `tab`: title, lines and the object to offer as YAML.
pub(crate) fn detail(src: &Sources<'_>, tab: Tab, i: usize) -> Option<Detail> {
    let d = &src.dash;
    let now = src.now;
    let yaml = object_yaml(src, tab, i);
    let mut l = Vec::new();
    let title = match tab {
        Tab::Overview => {
            let c = d.conditions.get(i)?;
            l.push(DetailLine::new(tr!("detail-type", "Type"), &c.type_, Level::Info));
            l.push(DetailLine::new(
                tr!("detail-status", "Status"),
                c.status.as_str(),
                c.level,
            ));
            l.push(DetailLine::new(
                tr!("detail-reason", "Reason"),
                &c.reason,
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-since", "Since"),
                since(c.since, now),
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-message", "Message"),
                &c.message,
                Level::Info,
            ));
            trf!(
                "detail-title-condition",
                "clusterversion condition {condition}",
                condition = c.type_
            )
        }
        Tab::Operators => {
            let row = d.operators.get(i)?;
            let co = src
                .state
                .cluster_operators
                .iter()
                .find(|c| c.name() == row.name)?;
            l.push(DetailLine::new(
                tr!("detail-name", "Name"),
                &row.name,
                Level::Info,
            ));
            let status = format!(
                "{} ({}): {}",
                row.status,
                super::status_name(row.status),
                super::status_meaning(row.status)
            );
            l.push(DetailLine::new(tr!("detail-status", "Status"), status, row.level));
            l.push(DetailLine::heading(tr!("detail-head-conditions", "Conditions")));
            for c in &co.status.conditions {
                let lvl = match (c.type_.as_str(), c.status) {
                    ("Degraded", crate::openshift::ConditionStatus::True)
                    | ("Available", crate::openshift::ConditionStatus::False) => Level::Error,
                    ("Progressing", crate::openshift::ConditionStatus::True) => Level::Warn,
                    ("Upgradeable", crate::openshift::ConditionStatus::False) => Level::Blocked,
                    _ => Level::Info,
                };
                let status = c.status.to_string();
                let since_v = trf!(
                    "detail-since-at",
                    "since {at}",
                    at = since(c.last_transition_time, now)
                );
                let mut v = join_words(&[&status, c.reason(), &since_v]);
                if !c.message().is_empty() {
                    v.push('\n');
                    v.push_str(c.message());
                }
                l.push(DetailLine::new(&c.type_, v, lvl));
            }
            l.push(DetailLine::heading(tr!("detail-head-versions", "Versions")));
            for v in &co.status.versions {
                l.push(DetailLine::new(&v.name, &v.version, Level::Info));
            }
            l.push(DetailLine::heading(tr!(
                "detail-head-related-objects",
                "Related objects"
            )));
            for r in &co.status.related_objects {
                let kind = if r.group.is_empty() {
                    r.resource.clone()
                } else {
                    format!("{}.{}", r.resource, r.group)
                };
                let name = match &r.namespace {
                    Some(ns) if !ns.is_empty() => format!("{ns}/{}", r.name),
                    _ => r.name.clone(),
                };
                l.push(DetailLine::new(kind, name, Level::Info));
            }
            format!("clusteroperator/{}", row.name)
        }
        Tab::Nodes => {
            let n = d.nodes.get(i)?;
            l.push(DetailLine::new(tr!("detail-name", "Name"), &n.name, Level::Info));
            l.push(DetailLine::new(tr!("detail-pool", "Pool"), &n.pool, Level::Info));
            l.push(DetailLine::new(
                tr!("detail-assessment", "Assessment"),
                &n.assessment,
                n.level,
            ));
            l.push(DetailLine::new(
                tr!("detail-phase", "Phase"),
                &n.phase,
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-version", "Version"),
                &n.version,
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-estimate", "Estimate"),
                &n.estimate,
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-message", "Message"),
                &n.message,
                n.level,
            ));
            if let Some(node) = src
                .state
                .nodes
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(&n.name))
            {
                l.push(DetailLine::heading(tr!(
                    "detail-head-machine-config-annotations",
                    "Machine config annotations"
                )));
                for (k, v) in node.metadata.annotations.iter().flatten() {
                    if let Some(short) = k.strip_prefix(super::MCO_PREFIX) {
                        l.push(DetailLine::new(short, v, Level::Info));
                    }
                }
                l.push(DetailLine::heading(tr!("detail-head-conditions", "Conditions")));
                for c in node.status.iter().flat_map(|s| s.conditions.iter().flatten()) {
                    let head = join_words(&[&c.status, c.reason.as_deref().unwrap_or("")]);
                    let msg = c.message.as_deref().unwrap_or("").trim();
                    let v = if msg.is_empty() {
                        head
                    } else {
                        format!("{head}: {msg}")
                    };
                    l.push(DetailLine::new(&c.type_, v, Level::Info));
                }
            }
            format!("node/{}", n.name)
        }
        Tab::History => {
            let h = d.history.get(i)?;
            l.push(DetailLine::new(
                tr!("detail-version", "Version"),
                &h.version,
                Level::Info,
            ));
            l.push(DetailLine::new(tr!("detail-state", "State"), h.state, h.level));
            l.push(DetailLine::new(
                tr!("detail-started", "Started"),
                text::timestamp(h.started),
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-completed", "Completed"),
                text::timestamp(h.completed),
                Level::Info,
            ));
            if h.started.is_some() {
                l.push(DetailLine::new(
                    tr!("detail-duration", "Duration"),
                    super::rows::history_duration(src.dash, src.now, i, h),
                    Level::Info,
                ));
            }
            l.push(DetailLine::new(
                tr!("detail-verified", "Verified"),
                super::rows::verified_words(h, src.engine).1,
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-image", "Image"),
                &h.image,
                Level::Info,
            ));
            if !h.accepted_risks.is_empty() {
                l.push(DetailLine::new(
                    tr!("detail-accepted-risks", "Accepted risks"),
                    &h.accepted_risks,
                    Level::Warn,
                ));
            }
            format!(
                "{} {}",
                tr!("detail-title-history", "history"),
                if h.version.is_empty() {
                    tr!("detail-no-version", "(no version)")
                } else {
                    &h.version
                }
            )
        }
        Tab::Health => {
            let ins = d.insights.get(i)?;
            l.push(DetailLine::new(
                tr!("detail-message", "Message"),
                crate::assess::insight_text::summary(&ins.message).into_owned(),
                ins.level,
            ));
            let since_v = match &ins.since_text {
                Some(t) if ins.since.is_some() => {
                    trf!(
                        "detail-at-ago",
                        "{at} ({age} ago)",
                        at = text::timestamp(ins.since),
                        age = t
                    )
                }
                _ => since(ins.since, now),
            };
            l.push(DetailLine::new(
                tr!("detail-since", "Since"),
                since_v,
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-level", "Level"),
                &ins.level_word,
                ins.level,
            ));
            l.push(DetailLine::new(
                tr!("detail-impact", "Impact"),
                &ins.impact,
                Level::Info,
            ));
            if !ins.reference.is_empty() {
                l.push(DetailLine::new(
                    tr!("detail-reference", "Reference"),
                    &ins.reference,
                    Level::Info,
                ));
            }
            l.push(DetailLine::new(
                tr!("detail-resources", "Resources"),
                ins.resources.join("\n"),
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-description", "Description"),
                crate::assess::insight_text::description(&ins.description).into_owned(),
                Level::Info,
            ));
            tr!("detail-title-insight", "update health insight").into()
        }
        Tab::Updates => return None,
        Tab::Tasks => {
            let e = src.engine?;
            let cell = e.cells.get(i)?;
            let lvl = cell.level_style();
            l.push(DetailLine::new(
                tr!("detail-run-level", "Run level"),
                engine::level_label(cell.level),
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-component", "Component"),
                &cell.component,
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-state", "State"),
                cell.state.word(),
                lvl,
            ));
            l.push(DetailLine::new(
                tr!("detail-tasks", "Tasks"),
                trf!(
                    "detail-task-counts",
                    "{done}/{total} done, {failed} failed, {skipped} skipped, {running} running",
                    done = cell.done,
                    total = cell.total,
                    failed = cell.failed,
                    skipped = cell.skipped,
                    running = cell.running
                ),
                Level::Info,
            ));
            let tasks: Vec<&crate::reconcile::api::TaskProgress> =
                cell.tasks.iter().filter_map(|&t| e.snap.tasks.get(t)).collect();
            let waiting = cell.state == engine::CellState::Waiting;
            if cell.failed > 0 {
                l.push(DetailLine::heading(if waiting {
                    tr!(
                        "detail-head-waiting-on",
                        "Waiting on (ClusterOperators still updating; not failing)"
                    )
                } else {
                    tr!("detail-head-failed-tasks", "Failed tasks")
                }));
                for t in &tasks {
                    if let crate::reconcile::api::TaskState::Failed(err) = &t.state {
                        let (word, lv) = if waiting {
                            (tr!("cell-waiting", "waiting"), Level::Warn)
                        } else {
                            (tr!("cell-failed", "failed"), Level::Error)
                        };
                        l.push(DetailLine::new(word, format!("{}\n{err}", t.name), lv));
                    }
                }
            }
            l.push(DetailLine::heading(tr!("detail-head-all-tasks", "All tasks")));
            for t in &tasks {
                use crate::reconcile::api::TaskState as S;
                let (word, v, lv) = match &t.state {
                    S::Pending => (tr!("cell-pending", "pending"), t.name.clone(), Level::Info),
                    S::Running => (tr!("cell-running", "running"), t.name.clone(), Level::Warn),
                    S::Done => (tr!("cell-done", "done"), t.name.clone(), Level::Ok),
                    S::Failed(_) => (tr!("cell-failed", "failed"), t.name.clone(), Level::Error),
                    S::Skipped(why) => (
                        tr!("cell-skipped", "skipped"),
                        format!("{} ({why})", t.name),
                        Level::Unknown,
                    ),
                };
                l.push(DetailLine::new(word, v, lv));
            }
            trf!(
                "detail-title-cell",
                "run level {level} · {component}",
                level = engine::level_label(cell.level),
                component = cell.component
            )
        }
        Tab::Drift => {
            let e = src.engine?;
            let row = e.drift.get(i)?;
            l.push(DetailLine::new(
                tr!("detail-action", "Action"),
                row.action,
                row.level,
            ));
            l.push(DetailLine::new(
                tr!("detail-kind", "Kind"),
                &row.kind,
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-object", "Object"),
                &row.object,
                Level::Info,
            ));
            l.push(DetailLine::new(
                tr!("detail-task", "Task"),
                &row.task,
                Level::Info,
            ));
            if !row.changes.is_empty() {
                l.push(DetailLine::heading(tr!(
                    "detail-head-field-changes-path-old-new",
                    "Field changes (path: old → new)"
                )));
                for (n, (path, old, new)) in row.changes.iter().enumerate() {
                    l.push(DetailLine::new(
                        (n + 1).to_string(),
                        format!("{path}: {old} → {new}"),
                        Level::Warn,
                    ));
                }
            }
            let what = match e.drift_origin() {
                engine::DriftOrigin::Update(v) => {
                    l.insert(
                        0,
                        DetailLine::new(
                            tr!("detail-made-by", "Made by"),
                            trf!(
                                "detail-made-by-update",
                                "the update to {v}: the release's own change, not drift",
                                v = v
                            ),
                            Level::Info,
                        ),
                    );
                    trf!("headline-update-to", "update to {target}", target = v)
                }
                _ => tr!("detail-drift", "drift").into(),
            };
            format!("{what}: {} {} {}", row.action, row.kind, row.object)
        }
    };
    Some((title, l, yaml))
}

/// Words joined by single spaces, empty (or blank) ones left out: no double spaces when a
/// condition has no reason.
fn join_words(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| w.trim())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn since(t: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    match t {
        Some(t) => trf!(
            "detail-at-ago",
            "{at} ({age} ago)",
            at = text::timestamp(Some(t)),
            age = text::age(Some(t), now)
        ),
        None => "-".into(),
    }
}
