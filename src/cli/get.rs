//! `cvo get KIND [NAME]`: the tables `oc get` prints for ClusterVersions, ClusterOperators,
//! MachineConfigPools and Nodes, and `-o wide|json|yaml|name` as kubectl prints them.
//!
//! Columns are the CRDs' `additionalPrinterColumns` (`openshift/api
//! config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions*.crd.yaml`
//! and `..._clusteroperators.crd.yaml`); a jsonpath filter yields its first match, a missing
//! value is an empty cell, `date` columns are ages as `kubectl` prints them, and columns are
//! aligned as kubectl's tab writer aligns them (minimum width 6, padding 3). Where kubectl would
//! let a multi-line message break the table, cvo joins its lines with a space.

use chrono::{DateTime, Utc};

use crate::l10n::{tr, trf};
use crate::{cluster::ClusterState, openshift::Condition};

pub use super::get_output::GetOutput;

/// A kind `cvo get` knows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `clusterversions.config.openshift.io`.
    ClusterVersion,
    /// `clusteroperators.config.openshift.io`.
    ClusterOperator,
    /// `machineconfigpools.machineconfiguration.openshift.io`.
    MachineConfigPool,
    /// Core `nodes`.
    Node,
}

/// The known kinds and their names, as the error for an unknown kind lists them.
pub const KNOWN_KINDS: &str =
    "clusterversion (cv), clusteroperators (co), machineconfigpools (mcp), nodes (no)";

impl Kind {
    /// The kind a `cvo get` argument names: singular, plural, short name or
    /// `plural.group`, any case (as kubectl resolves them).
    ///
    /// # Errors
    /// An unknown kind: `unknown kind "x"; known kinds: ...`.
    pub fn parse(s: &str) -> anyhow::Result<Kind> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "clusterversion"
            | "clusterversions"
            | "cv"
            | "clusterversion.config.openshift.io"
            | "clusterversions.config.openshift.io" => Kind::ClusterVersion,
            "clusteroperator"
            | "clusteroperators"
            | "co"
            | "clusteroperator.config.openshift.io"
            | "clusteroperators.config.openshift.io" => Kind::ClusterOperator,
            "machineconfigpool"
            | "machineconfigpools"
            | "mcp"
            | "machineconfigpool.machineconfiguration.openshift.io"
            | "machineconfigpools.machineconfiguration.openshift.io" => Kind::MachineConfigPool,
            "node" | "nodes" | "no" => Kind::Node,
            _ => anyhow::bail!(trf!(
                "get-unknown-kind",
                "unknown kind {kind:?}; known kinds: {known}",
                kind = s,
                known = KNOWN_KINDS
            )),
        })
    }

    /// `plural.group` (`nodes` for the core kind), as not-found errors name it.
    pub fn resource(self) -> &'static str {
        match self {
            Kind::ClusterVersion => "clusterversions.config.openshift.io",
            Kind::ClusterOperator => "clusteroperators.config.openshift.io",
            Kind::MachineConfigPool => "machineconfigpools.machineconfiguration.openshift.io",
            Kind::Node => "nodes",
        }
    }

    /// `kind.group` (`node` for the core kind), the prefix of `-o name`.
    /// What a live cluster is asked for to print this kind.
    pub fn reads(self) -> crate::cluster::live::Reads {
        use crate::cluster::live::Reads;
        match self {
            Kind::ClusterVersion => Reads::ClusterVersion,
            Kind::ClusterOperator => Reads::ClusterOperators,
            Kind::MachineConfigPool => Reads::MachineConfigPools,
            Kind::Node => Reads::Nodes,
        }
    }

    pub fn name_prefix(self) -> &'static str {
        match self {
            Kind::ClusterVersion => "clusterversion.config.openshift.io",
            Kind::ClusterOperator => "clusteroperator.config.openshift.io",
            Kind::MachineConfigPool => "machineconfigpool.machineconfiguration.openshift.io",
            Kind::Node => "node",
        }
    }
}

/// What `cvo get KIND [NAME] [-o ...]` prints for `state`, ages measured at `now`.
///
/// # Errors
/// `NAME` not in the state: `<resource> "<name>" not found in <source>`; with no NAME, a
/// ClusterVersion table of a state without one (see [`cluster_version_table`]); JSON or YAML
/// that cannot be encoded; a jsonpath or custom-columns expression that fails.
pub fn render(
    state: &ClusterState,
    kind: Kind,
    name: Option<&str>,
    output: Option<&GetOutput>,
    now: DateTime<Utc>,
) -> anyhow::Result<String> {
    let mut objects = objects_of(state, kind)?;
    if let Some(n) = name {
        objects.retain(|(obj_name, _)| obj_name == n);
        if objects.is_empty() {
            anyhow::bail!("{} {n:?} not found in {}", kind.resource(), state.source);
        }
    }
    let values = || objects.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>();
    let document = || match name {
        Some(_) => values().into_iter().next().unwrap_or_default(),
        None => serde_json::json!({
            "apiVersion": "v1",
            "items": values(),
            "kind": "List",
            "metadata": {"resourceVersion": ""},
        }),
    };
    match output {
        Some(GetOutput::JsonPath(t)) => t
            .render(&document())
            .map_err(|e| anyhow::anyhow!("-o jsonpath: {e}")),
        Some(GetOutput::CustomColumns(cols)) => super::get_output::custom_columns(cols, &values(), true)
            .map_err(|e| anyhow::anyhow!("-o custom-columns: {e}")),
        Some(GetOutput::Json) => Ok(serde_json::to_string_pretty(&document())? + "\n"),
        Some(GetOutput::Yaml) => Ok(serde_norway::to_string(&document())?),
        Some(GetOutput::Name) => Ok(objects
            .iter()
            .map(|(n, _)| format!("{}/{n}\n", kind.name_prefix()))
            .collect()),
        None | Some(GetOutput::Wide) => {
            let wide = output == Some(&GetOutput::Wide);
            let keep = |n: &str| name.is_none_or(|x| x == n);
            Ok(match kind {
                Kind::ClusterVersion => cluster_version_table(state, now)?,
                Kind::ClusterOperator => {
                    let mut s = state.clone();
                    s.cluster_operators.retain(|c| keep(c.name()));
                    cluster_operators_table(&s, now)
                }
                Kind::MachineConfigPool => pools_table(state, now, &keep),
                Kind::Node => nodes_table(state, now, wide, &keep),
            })
        }
    }
}

/// Keeps the objects of `kind` in `state` whose labels `selector` matches (`-l`).
pub fn retain_selected(state: &mut ClusterState, kind: Kind, selector: &kube::core::Selector) {
    use super::get_output::selects;
    match kind {
        Kind::ClusterVersion => {
            if let Some(cv) = &state.cluster_version
                && !selects(selector, cv.metadata.labels.as_ref())
            {
                state.cluster_version = None;
            }
        }
        Kind::ClusterOperator => state
            .cluster_operators
            .retain(|o| selects(selector, o.metadata.labels.as_ref())),
        Kind::MachineConfigPool => state
            .machine_config_pools
            .retain(|o| selects(selector, o.metadata.labels.as_ref())),
        Kind::Node => state
            .nodes
            .retain(|o| selects(selector, o.metadata.labels.as_ref())),
    }
}

/// The objects of `kind` as `(name, object)`, each with `apiVersion` and `kind` first and
/// without `metadata.managedFields` (kubectl hides them by default).
fn objects_of(state: &ClusterState, kind: Kind) -> anyhow::Result<Vec<(String, serde_json::Value)>> {
    fn one<T: serde::Serialize + k8s_openapi::Resource>(
        name: Option<&String>,
        obj: &T,
    ) -> anyhow::Result<(String, serde_json::Value)> {
        let mut v = serde_json::to_value(obj)?;
        if let Some(m) = v.as_object_mut() {
            let mut out = serde_json::Map::new();
            out.insert("apiVersion".into(), T::API_VERSION.into());
            out.insert("kind".into(), T::KIND.into());
            for (k, x) in std::mem::take(m) {
                if k != "apiVersion" && k != "kind" {
                    out.insert(k, x);
                }
            }
            if let Some(md) = out.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                md.remove("managedFields");
            }
            *m = out;
        }
        Ok((name.cloned().unwrap_or_default(), v))
    }
    match kind {
        Kind::ClusterVersion => state
            .cluster_version
            .iter()
            .map(|o| one(o.metadata.name.as_ref(), o))
            .collect(),
        Kind::ClusterOperator => state
            .cluster_operators
            .iter()
            .map(|o| one(o.metadata.name.as_ref(), o))
            .collect(),
        Kind::MachineConfigPool => state
            .machine_config_pools
            .iter()
            .map(|o| one(o.metadata.name.as_ref(), o))
            .collect(),
        Kind::Node => state
            .nodes
            .iter()
            .map(|o| one(o.metadata.name.as_ref(), o))
            .collect(),
    }
}

/// `NAME CONFIG UPDATED UPDATING DEGRADED MACHINECOUNT READYMACHINECOUNT UPDATEDMACHINECOUNT
/// DEGRADEDMACHINECOUNT AGE`: the MachineConfigPool CRD's printer columns
/// (`openshift/api machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigpools.crd.yaml`).
fn pools_table(state: &ClusterState, now: DateTime<Utc>, keep: &dyn Fn(&str) -> bool) -> String {
    let pools: Vec<_> = state
        .machine_config_pools
        .iter()
        .filter(|p| keep(p.name()))
        .collect();
    if pools.is_empty() {
        return format!("{}\n", tr!("get-no-resources", "No resources found"));
    }
    let mut rows = vec![
        [
            "NAME",
            "CONFIG",
            "UPDATED",
            "UPDATING",
            "DEGRADED",
            "MACHINECOUNT",
            "READYMACHINECOUNT",
            "UPDATEDMACHINECOUNT",
            "DEGRADEDMACHINECOUNT",
            "AGE",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for p in pools {
        let st = &p.status;
        rows.push(vec![
            p.name().to_owned(),
            st.configuration.name.clone().unwrap_or_default(),
            status_of(p.condition("Updated")),
            status_of(p.condition("Updating")),
            status_of(p.condition("Degraded")),
            st.machine_count.to_string(),
            st.ready_machine_count.to_string(),
            st.updated_machine_count.to_string(),
            st.degraded_machine_count.to_string(),
            age(
                p.metadata
                    .creation_timestamp
                    .as_ref()
                    .map(crate::openshift::time_to_chrono),
                now,
            ),
        ]);
    }
    table(&rows)
}

/// An object's age as kubectl's `translateTimestampSince` prints it: `<unknown>` without a
/// creation time.
fn age(t: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    t.map_or_else(|| "<unknown>".into(), |t| human_duration(now - t))
}

/// `NAME STATUS ROLES AGE VERSION` (wide: `INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION
/// CONTAINER-RUNTIME` too), as kubectl's node printer
/// (`k8s.io/kubernetes pkg/printers/internalversion/printers.go` `printNode`) prints them.
fn nodes_table(state: &ClusterState, now: DateTime<Utc>, wide: bool, keep: &dyn Fn(&str) -> bool) -> String {
    let nodes: Vec<_> = state
        .nodes
        .iter()
        .filter(|n| keep(n.metadata.name.as_deref().unwrap_or("")))
        .collect();
    if nodes.is_empty() {
        return format!("{}\n", tr!("get-no-resources", "No resources found"));
    }
    let mut header = vec!["NAME", "STATUS", "ROLES", "AGE", "VERSION"];
    if wide {
        header.extend([
            "INTERNAL-IP",
            "EXTERNAL-IP",
            "OS-IMAGE",
            "KERNEL-VERSION",
            "CONTAINER-RUNTIME",
        ]);
    }
    let mut rows = vec![header.into_iter().map(String::from).collect::<Vec<_>>()];
    for n in nodes {
        let status = n.status.as_ref();
        let info = status.and_then(|s| s.node_info.as_ref());
        let ready = status
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
        let mut words = vec![match ready {
            Some(c) if c.status == "True" => "Ready",
            Some(_) => "NotReady",
            None => "Unknown",
        }];
        if n.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
            words.push("SchedulingDisabled");
        }
        let mut roles: Vec<String> = n
            .metadata
            .labels
            .iter()
            .flatten()
            .filter_map(|(k, v)| {
                if let Some(r) = k.strip_prefix("node-role.kubernetes.io/") {
                    (!r.is_empty()).then(|| r.to_owned())
                } else if k == "kubernetes.io/role" {
                    (!v.is_empty()).then(|| v.clone())
                } else {
                    None
                }
            })
            .collect();
        roles.sort();
        roles.dedup();
        let mut row = vec![
            n.metadata.name.clone().unwrap_or_default(),
            words.join(","),
            if roles.is_empty() {
                "<none>".into()
            } else {
                roles.join(",")
            },
            age(
                n.metadata
                    .creation_timestamp
                    .as_ref()
                    .map(crate::openshift::time_to_chrono),
                now,
            ),
            info.map(|i| i.kubelet_version.clone()).unwrap_or_default(),
        ];
        if wide {
            let address = |t: &str| {
                status
                    .and_then(|s| s.addresses.as_ref())
                    .and_then(|a| a.iter().find(|a| a.type_ == t))
                    .map_or_else(|| "<none>".to_owned(), |a| a.address.clone())
            };
            let or_unknown = |s: Option<&String>| {
                s.filter(|s| !s.is_empty())
                    .cloned()
                    .unwrap_or_else(|| "<unknown>".into())
            };
            row.extend([
                address("InternalIP"),
                address("ExternalIP"),
                or_unknown(info.map(|i| &i.os_image)),
                or_unknown(info.map(|i| &i.kernel_version)),
                or_unknown(info.map(|i| &i.container_runtime_version)),
            ]);
        }
        rows.push(row);
    }
    table(&rows)
}

/// Formats an age as `kubectl` does (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`):
/// `59s`, `2m`, `5m30s`, `3h`, `6h15m`, `47h`, `6d5h`, `200d`, `3y10d`, `9y`. A time in the
/// future by more than a second is `<invalid>`.
pub fn human_duration(d: chrono::Duration) -> String {
    let seconds = d.num_seconds();
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// One table cell: a single line (newlines joined with a space, tabs as spaces).
fn cell(s: &str) -> String {
    s.split(['\n', '\r'])
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .replace('\t', " ")
}

fn status_of(c: Option<&Condition>) -> String {
    c.map(|c| c.status.to_string()).unwrap_or_default()
}

fn age_of(c: Option<&Condition>, now: DateTime<Utc>) -> String {
    c.and_then(|c| c.last_transition_time)
        .map(|t| human_duration(now - t))
        .unwrap_or_default()
}

fn table(rows: &[Vec<String>]) -> String {
    let text: String = rows.iter().map(|r| r.join("\t") + "\n").collect();
    super::tabwriter::format(&text, 6, 3)
}

/// `NAME VERSION AVAILABLE PROGRESSING SINCE STATUS` for the ClusterVersion, ages measured at
/// `now`.
///
/// # Errors
/// When the state holds no ClusterVersion (the cluster is not OpenShift-compatible, or the
/// snapshot lacks one): `clusterversions.config.openshift.io "version" not found`.
pub fn cluster_version_table(state: &ClusterState, now: DateTime<Utc>) -> anyhow::Result<String> {
    let Some(cv) = &state.cluster_version else {
        anyhow::bail!(
            "clusterversions.config.openshift.io \"version\" not found in {}",
            state.source
        );
    };
    let progressing = cv.condition("Progressing");
    let rows = vec![
        ["NAME", "VERSION", "AVAILABLE", "PROGRESSING", "SINCE", "STATUS"]
            .map(String::from)
            .to_vec(),
        vec![
            cv.metadata.name.clone().unwrap_or_default(),
            cv.current_version().unwrap_or("").to_owned(),
            status_of(cv.condition("Available")),
            status_of(progressing),
            age_of(progressing, now),
            cell(progressing.map(Condition::message).unwrap_or("")),
        ],
    ];
    Ok(table(&rows))
}

/// `NAME VERSION AVAILABLE PROGRESSING DEGRADED SINCE MESSAGE` for every ClusterOperator, as
/// `oc get clusteroperators` prints it (MESSAGE is the Degraded, else Progressing, else
/// Available condition's message, as oc's wide printer shows). With no operators: `No
/// resources found`.
pub fn cluster_operators_table(state: &ClusterState, now: DateTime<Utc>) -> String {
    if state.cluster_operators.is_empty() {
        return format!("{}\n", tr!("get-no-resources", "No resources found"));
    }
    let mut rows = vec![
        [
            "NAME",
            "VERSION",
            "AVAILABLE",
            "PROGRESSING",
            "DEGRADED",
            "SINCE",
            "MESSAGE",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for co in &state.cluster_operators {
        let message = ["Degraded", "Progressing", "Available"]
            .iter()
            .filter_map(|t| co.condition(t))
            .find(|c| (c.type_ == "Available" && !c.is_true()) || (c.type_ != "Available" && c.is_true()))
            .map(Condition::message)
            .unwrap_or("");
        rows.push(vec![
            co.name().to_owned(),
            co.operator_version().unwrap_or("").to_owned(),
            status_of(co.condition("Available")),
            status_of(co.condition("Progressing")),
            status_of(co.condition("Degraded")),
            age_of(co.condition("Available"), now),
            cell(message),
        ]);
    }
    table(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_duration_matches_kubectl() {
        let s = chrono::Duration::seconds;
        assert_eq!(human_duration(s(-5)), "<invalid>");
        assert_eq!(human_duration(s(0)), "0s");
        assert_eq!(human_duration(s(119)), "119s");
        assert_eq!(human_duration(s(120)), "2m");
        assert_eq!(human_duration(s(330)), "5m30s");
        assert_eq!(human_duration(s(600)), "10m");
        assert_eq!(human_duration(s(3 * 3600)), "3h");
        assert_eq!(human_duration(s(6 * 3600 + 15 * 60)), "6h15m");
        assert_eq!(human_duration(s(47 * 3600)), "47h");
        assert_eq!(human_duration(s(6 * 86400 + 5 * 3600)), "6d5h");
        assert_eq!(human_duration(s(200 * 86400)), "200d");
        assert_eq!(human_duration(s((3 * 365 + 10) * 86400)), "3y10d");
        assert_eq!(human_duration(s(9 * 365 * 86400)), "9y");
    }

    #[test]
    fn cell_joins_lines() {
        assert_eq!(cell("a\nb\r\nc\td"), "a b c d");
    }
}
