//! Server-side `Table` answers (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, what
//! `kubectl get` asks for), as kube-apiserver builds them: a `Name` column, then the kind's
//! printer columns — a CRD's `additionalPrinterColumns` (apiextensions-apiserver
//! `pkg/registry/customresource/tableconvertor/tableconvertor.go`; `Age` when it declares
//! none), the columns of the OpenShift CRDs for the OpenShift kinds served built in, the Node
//! printer of `pkg/printers/internalversion/printers.go`, else `Created At` (the default of
//! `k8s.io/apiserver/pkg/registry/rest/table.go`). Dates are shown as ages (`5d3h`). Each row
//! carries the object as `PartialObjectMetadata` (`includeObject=Metadata`, the default), the
//! whole object (`Object`) or nothing (`None`).

use serde_json::{Value, json};

use super::reply::partial;
use crate::sim::store::ResourceType;

/// Whether the request asks for a `Table`.
pub(super) fn wants_table(parts: &http::request::Parts) -> bool {
    parts
        .headers
        .get(http::header::ACCEPT)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|a| a.contains("as=Table"))
}

/// One printer column: header, type, JSONPath (or a computed cell), priority.
struct Column {
    name: String,
    kind: String,
    path: Path,
    priority: u64,
    description: String,
}

/// How a cell is found.
enum Path {
    /// A JSONPath of the subset CRDs use: `.a.b`, `[n]`, `[*]`, `[?(@.k=="v")]`.
    Json(Vec<Step>),
    /// A computed Node cell.
    Node(fn(&Value) -> Value),
}

#[derive(Debug, PartialEq)]
enum Step {
    Field(String),
    Index(usize),
    All,
    Filter(String, String),
}

/// Parses the JSONPath subset; `None` for anything else.
fn parse_path(p: &str) -> Option<Vec<Step>> {
    let p = p.trim().trim_start_matches('{').trim_end_matches('}');
    let p = p.strip_prefix('$').unwrap_or(p);
    let mut steps = Vec::new();
    let mut rest = p;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            // A field name ends at an unescaped `.` or at `[`; `\.` is a dot in the name.
            let mut end = r.len();
            let mut prev = ' ';
            for (i, c) in r.char_indices() {
                if (c == '.' && prev != '\\') || c == '[' {
                    end = i;
                    break;
                }
                prev = c;
            }
            if end == 0 {
                return None;
            }
            steps.push(Step::Field(r[..end].replace("\\.", ".")));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = &r[..end];
            rest = &r[end + 1..];
            if inner == "*" {
                steps.push(Step::All);
            } else if let Ok(n) = inner.parse() {
                steps.push(Step::Index(n));
            } else {
                let f = inner.strip_prefix("?(@.")?.strip_suffix(')')?;
                let (k, v) = f.split_once("==")?;
                let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
                steps.push(Step::Filter(k.trim().to_owned(), v.to_owned()));
            }
        } else {
            return None;
        }
    }
    Some(steps)
}

/// Every value `steps` reaches in `v`, in order.
fn eval<'a>(v: &'a Value, steps: &[Step]) -> Vec<&'a Value> {
    let Some((first, rest)) = steps.split_first() else {
        return vec![v];
    };
    let next: Vec<&Value> = match first {
        Step::Field(f) => v.get(f).into_iter().collect(),
        Step::Index(i) => v.get(*i).into_iter().collect(),
        Step::All => v.as_array().map(|a| a.iter().collect()).unwrap_or_default(),
        Step::Filter(k, want) => v
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|e| match e.get(k) {
                        Some(Value::String(s)) => s == want,
                        Some(other) => *other.to_string() == **want,
                        None => false,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    next.into_iter().flat_map(|n| eval(n, rest)).collect()
}

/// kubectl's age format (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`).
fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{}d", hours / 24),
            h => format!("{}d{h}h", hours / 24),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        return match (hours / 24) % 365 {
            0 => format!("{}y", hours / 24 / 365),
            d => format!("{}y{d}d", hours / 24 / 365),
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// A timestamp as an age (`null` when it does not parse).
fn age(v: Option<&Value>) -> Value {
    v.and_then(Value::as_str)
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map_or(Value::Null, |t| {
            json!(human_duration(
                (chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds()
            ))
        })
}

fn col(name: &str, kind: &str, path: &str, priority: u64, description: &str) -> Column {
    Column {
        name: name.to_owned(),
        kind: kind.to_owned(),
        path: Path::Json(parse_path(path).unwrap_or_default()),
        priority,
        description: description.to_owned(),
    }
}

/// The columns of the OpenShift CRDs (`additionalPrinterColumns` of
/// `machineconfiguration.openshift.io` MachineConfigPool / MachineConfig, as openshift/api
/// ships them) for the kinds the simulator serves without a CRD. (ClusterVersion and
/// ClusterOperator take theirs from the embedded CRDs, `store::builtin_crd`.)
fn openshift_columns(t: &ResourceType) -> Option<Vec<Column>> {
    let cond = |ty: &str, field: &str| format!(".status.conditions[?(@.type==\"{ty}\")].{field}");
    Some(match (t.group.as_str(), t.kind.as_str()) {
        ("machineconfiguration.openshift.io", "MachineConfigPool") => vec![
            col("Config", "string", ".status.configuration.name", 0, ""),
            col("Updated", "string", &cond("Updated", "status"), 0, ""),
            col("Updating", "string", &cond("Updating", "status"), 0, ""),
            col("Degraded", "string", &cond("Degraded", "status"), 0, ""),
            col(
                "MachineCount",
                "number",
                ".status.machineCount",
                0,
                "Total number of machines in the machine config pool",
            ),
            col(
                "ReadyMachineCount",
                "number",
                ".status.readyMachineCount",
                0,
                "Total number of ready machines targeted by the pool",
            ),
            col(
                "UpdatedMachineCount",
                "number",
                ".status.updatedMachineCount",
                0,
                "Total number of machines targeted by the pool that have the CurrentMachineConfig as their config",
            ),
            col(
                "DegradedMachineCount",
                "number",
                ".status.degradedMachineCount",
                0,
                "Total number of machines marked degraded (or unreconcilable)",
            ),
            col("Age", "date", ".metadata.creationTimestamp", 0, ""),
        ],
        ("machineconfiguration.openshift.io", "MachineConfig") => vec![
            col(
                "GeneratedByController",
                "string",
                ".metadata.annotations.machineconfiguration\\.openshift\\.io/generated-by-controller-version",
                0,
                "Version of the controller that generated the machineconfig. This will be empty if the machineconfig is not managed by a controller.",
            ),
            col(
                "IgnitionVersion",
                "string",
                ".spec.config.ignition.version",
                0,
                "Version of the Ignition Config defined in the machineconfig.",
            ),
            col("Age", "date", ".metadata.creationTimestamp", 0, ""),
        ],
        _ => return None,
    })
}

/// A CRD's `additionalPrinterColumns` for `version` (`Age` when it declares none).
fn crd_columns(crd: &Value, version: &str) -> Vec<Column> {
    let declared = crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == version))
        .and_then(|v| v["additionalPrinterColumns"].as_array());
    match declared {
        Some(cols) if !cols.is_empty() => cols
            .iter()
            .map(|c| {
                col(
                    c["name"].as_str().unwrap_or_default(),
                    c["type"].as_str().unwrap_or("string"),
                    c["jsonPath"].as_str().unwrap_or_default(),
                    c["priority"].as_u64().unwrap_or(0),
                    c["description"].as_str().unwrap_or_default(),
                )
            })
            .collect(),
        _ => vec![col("Age", "date", ".metadata.creationTimestamp", 0, "")],
    }
}

fn node_status(n: &Value) -> Value {
    let ready = n["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .map(|c| c["status"].as_str().unwrap_or_default());
    let mut s = match ready {
        Some("True") => "Ready".to_owned(),
        Some("False") => "NotReady".to_owned(),
        _ => "Unknown".to_owned(),
    };
    if n["spec"]["unschedulable"] == true {
        s.push_str(",SchedulingDisabled");
    }
    json!(s)
}

fn node_roles(n: &Value) -> Value {
    let mut roles: Vec<&str> = n["metadata"]["labels"]
        .as_object()
        .map(|l| {
            l.iter()
                .filter_map(|(k, v)| {
                    k.strip_prefix("node-role.kubernetes.io/")
                        .filter(|r| !r.is_empty())
                        .or_else(|| (k == "kubernetes.io/role").then(|| v.as_str().unwrap_or_default()))
                })
                .collect()
        })
        .unwrap_or_default();
    roles.sort_unstable();
    roles.dedup();
    json!(if roles.is_empty() {
        "<none>".to_owned()
    } else {
        roles.join(",")
    })
}

fn node_address(n: &Value, kind: &str) -> Value {
    n["status"]["addresses"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["type"] == kind))
        .map_or(json!("<none>"), |x| x["address"].clone())
}

fn node_columns() -> Vec<Column> {
    let computed = |name: &str, f: fn(&Value) -> Value, priority: u64| Column {
        name: name.to_owned(),
        kind: "string".to_owned(),
        path: Path::Node(f),
        priority,
        description: String::new(),
    };
    vec![
        computed("Status", node_status, 0),
        computed("Roles", node_roles, 0),
        col("Age", "date", ".metadata.creationTimestamp", 0, ""),
        col("Version", "string", ".status.nodeInfo.kubeletVersion", 0, ""),
        computed("Internal-IP", |n| node_address(n, "InternalIP"), 1),
        computed("External-IP", |n| node_address(n, "ExternalIP"), 1),
        col("OS-Image", "string", ".status.nodeInfo.osImage", 1, ""),
        col(
            "Kernel-Version",
            "string",
            ".status.nodeInfo.kernelVersion",
            1,
            "",
        ),
        col(
            "Container-Runtime",
            "string",
            ".status.nodeInfo.containerRuntimeVersion",
            1,
            "",
        ),
    ]
}

/// What kube-apiserver's `Age` cell of a built-in kind says (a string column).
fn age_cell(o: &Value) -> Value {
    age(o["metadata"].get("creationTimestamp"))
}

const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

fn computed(name: &str, f: fn(&Value) -> Value, priority: u64, description: &str) -> Column {
    Column {
        name: name.to_owned(),
        kind: "string".to_owned(),
        path: Path::Node(f),
        priority,
        description: description.to_owned(),
    }
}

/// A label selector as kube's `metav1.FormatLabelSelector` prints it (`app=d1,tier in (a,b)`;
/// `<none>` when empty).
fn format_selector(sel: &Value) -> Value {
    let mut reqs: Vec<(String, String)> = Vec::new();
    for (k, v) in sel["matchLabels"].as_object().into_iter().flatten() {
        reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
    }
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or_default();
        let values: Vec<&str> = e["values"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let text = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other} ({})", values.join(",")),
        };
        reqs.push((key.to_owned(), text));
    }
    reqs.sort();
    if reqs.is_empty() {
        json!("<none>")
    } else {
        json!(reqs.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(","))
    }
}

fn containers_field(o: &Value, field: &str) -> Value {
    let names: Vec<&str> = o["spec"]["template"]["spec"]["containers"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c[field].as_str()).collect())
        .unwrap_or_default();
    json!(names.join(","))
}

/// kube-apiserver's Deployment columns (`pkg/printers/internalversion/printers.go`,
/// `deploymentColumnDefinitions`, `printDeployment`).
fn deployment_columns() -> Vec<Column> {
    vec![
        computed(
            "Ready",
            |o| {
                json!(format!(
                    "{}/{}",
                    o["status"]["readyReplicas"].as_i64().unwrap_or(0),
                    o["spec"]["replicas"].as_i64().unwrap_or(0)
                ))
            },
            0,
            "Number of the pod with ready state",
        ),
        computed(
            "Up-to-date",
            |o| json!(o["status"]["updatedReplicas"].as_i64().unwrap_or(0)),
            0,
            "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
        ),
        computed(
            "Available",
            |o| json!(o["status"]["availableReplicas"].as_i64().unwrap_or(0)),
            0,
            "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.",
        ),
        computed("Age", age_cell, 0, AGE_DESCRIPTION),
        computed(
            "Containers",
            |o| containers_field(o, "name"),
            1,
            "Names of each container in the template.",
        ),
        computed(
            "Images",
            |o| containers_field(o, "image"),
            1,
            "Images referenced by each container in the template.",
        ),
        computed(
            "Selector",
            |o| format_selector(&o["spec"]["selector"]),
            1,
            "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
        ),
    ]
}

/// kube-apiserver's Namespace columns (`namespaceColumnDefinitions`, `printNamespace`).
fn namespace_columns() -> Vec<Column> {
    vec![
        computed(
            "Status",
            |o| o["status"]["phase"].clone(),
            0,
            "The status of the namespace",
        ),
        computed("Age", age_cell, 0, AGE_DESCRIPTION),
    ]
}

/// The `Message` column OpenShift's kube-apiserver adds to ClusterOperator tables (a carry
/// patch of openshift/kubernetes): the message of `Available=False`, else of
/// `Degraded=True`, else of `Progressing=True`, else empty (`null` cell).
fn cluster_operator_message(o: &Value) -> Value {
    let conds = o["status"]["conditions"].as_array();
    let find = |ty: &str, status: &str| {
        conds.and_then(|cs| cs.iter().find(|c| c["type"] == ty && c["status"] == status))
    };
    find("Available", "False")
        .or_else(|| find("Degraded", "True"))
        .or_else(|| find("Progressing", "True"))
        .map_or(Value::Null, |c| c["message"].clone())
}

fn columns(t: &ResourceType, crd: Option<&Value>) -> Vec<Column> {
    if let Some(crd) = crd {
        let mut cols = crd_columns(crd, &t.version);
        if t.group == "config.openshift.io" && t.kind == "ClusterOperator" {
            cols.push(computed(
                "Message",
                cluster_operator_message,
                0,
                "A message describing the status of the operator",
            ));
        }
        return cols;
    }
    if t.group == "apps" && t.kind == "Deployment" {
        return deployment_columns();
    }
    if t.is_namespace() {
        return namespace_columns();
    }
    if let Some(c) = openshift_columns(t) {
        return c;
    }
    if t.group.is_empty() && t.kind == "Node" {
        return node_columns();
    }
    vec![col("Created At", "date", ".metadata.creationTimestamp", 0, "")]
}

fn cell(c: &Column, o: &Value) -> Value {
    match &c.path {
        Path::Node(f) => f(o),
        Path::Json(steps) => {
            let first = eval(o, steps).into_iter().next();
            match (c.kind.as_str(), first) {
                (_, None | Some(Value::Null)) => Value::Null,
                ("date", v) => age(v),
                ("string", Some(Value::String(s))) => json!(s),
                ("string", Some(v)) => json!(v.to_string()),
                (_, Some(v)) => v.clone(),
            }
        }
    }
}

/// How a request wants its `Table`s: the kind's CRD (for a CRD-defined kind), the
/// `includeObject` parameter, and whether column definitions are still to be sent (a watch
/// sends them with its first event only, as kube-apiserver's watch encoder sets `NoHeaders`
/// after it: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go`).
pub(super) struct TableForm {
    /// The CustomResourceDefinition of a CRD-defined kind.
    pub crd: Option<Value>,
    /// `includeObject`: `None`, `Object` or `Metadata` (the default).
    pub include: Option<String>,
    /// Whether the next table carries `columnDefinitions` (else they are `null`).
    pub headers: bool,
}

impl TableForm {
    /// The `Table` of `answer` (one object or a list) for kind `t`.
    pub(super) fn table(&self, t: &ResourceType, answer: &Value) -> Value {
        let mut out = to_table(t, self.crd.as_ref(), answer, self.include.as_deref());
        if !self.headers {
            out["columnDefinitions"] = Value::Null;
        }
        out
    }
}

/// The `Table` form of a `get` (one object) or `list` answer for kind `t` (`crd`: its
/// CustomResourceDefinition, for a CRD-defined kind). `include` is the `includeObject` query
/// parameter.
fn to_table(t: &ResourceType, crd: Option<&Value>, answer: &Value, include: Option<&str>) -> Value {
    let cols = columns(t, crd);
    let mut defs = vec![json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.",
    })];
    defs.extend(cols.iter().map(|c| {
        json!({"name": c.name, "type": c.kind, "format": "", "description": c.description, "priority": c.priority})
    }));
    let (objects, mut meta): (Vec<&Value>, Value) = match answer["items"].as_array() {
        Some(items) => (items.iter().collect(), answer["metadata"].clone()),
        None => (
            vec![answer],
            json!({"resourceVersion": answer["metadata"]["resourceVersion"].clone()}),
        ),
    };
    if !meta.is_object() {
        meta = json!({});
    }
    let rows: Vec<Value> = objects
        .into_iter()
        .map(|o| {
            let mut cells = vec![o["metadata"]["name"].clone()];
            cells.extend(cols.iter().map(|c| cell(c, o)));
            let mut row = json!({"cells": cells});
            match include.unwrap_or("Metadata") {
                "None" => {}
                "Object" => row["object"] = o.clone(),
                _ => row["object"] = partial(o),
            }
            row
        })
        .collect();
    json!({
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
        "columnDefinitions": defs, "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths_of_printer_columns() {
        let o = json!({"status": {"conditions": [
            {"type": "Available", "status": "True"}, {"type": "Degraded", "status": "False"}],
            "versions": [{"name": "operator", "version": "4.16.3"}], "n": 3}});
        let p = |s: &str| parse_path(s).expect(s);
        assert_eq!(
            eval(&o, &p(".status.conditions[?(@.type==\"Degraded\")].status")),
            [&json!("False")]
        );
        assert_eq!(eval(&o, &p(".status.versions[0].version")), [&json!("4.16.3")]);
        assert_eq!(eval(&o, &p(".status.conditions[*].type")).len(), 2);
        assert_eq!(eval(&o, &p(".status.n")), [&json!(3)]);
        assert!(eval(&o, &p(".status.missing")).is_empty());
        assert!(parse_path("status[").is_none());
        let mc = json!({"metadata": {"annotations": {"a.io/v": "x"}}});
        assert_eq!(eval(&mc, &p(".metadata.annotations.a\\.io/v")), [&json!("x")]);
    }

    #[test]
    fn ages_as_kubectl_prints_them() {
        assert_eq!(human_duration(59), "59s");
        assert_eq!(human_duration(330), "5m30s");
        assert_eq!(human_duration(6 * 3600 + 15 * 60), "6h15m");
        assert_eq!(human_duration(6 * 86400 + 5 * 3600), "6d5h");
        assert_eq!(human_duration(200 * 86400), "200d");
        assert_eq!(human_duration(-5), "<invalid>");
    }
}
