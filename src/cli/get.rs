//! `cvo get`: the short tables `oc get clusterversion` and `oc get clusteroperators` print.
//!
//! Columns are the CRDs' `additionalPrinterColumns` (`openshift/api
//! config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions*.crd.yaml`
//! and `..._clusteroperators.crd.yaml`); a jsonpath filter yields its first match, a missing
//! value is an empty cell, `date` columns are ages as `kubectl` prints them, and columns are
//! aligned as kubectl's tab writer aligns them (minimum width 6, padding 3). Where kubectl would
//! let a multi-line message break the table, cvo joins its lines with a space.

use chrono::{DateTime, Utc};

use crate::{cluster::ClusterState, openshift::Condition};

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
        return "No resources found\n".into();
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
