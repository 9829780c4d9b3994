//! Firing alerts: the Prometheus `/api/v1/alerts` response
//! (`{"status":"success","data":{"alerts":[{labels, annotations, state, activeAt, value}]}}`),
//! as `openshift/oc pkg/cli/admin/upgrade/status/alerts.go` reads it.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The alerts of a Prometheus `/api/v1/alerts` response
/// (`openshift/oc pkg/cli/admin/inspectalerts` `AlertResponse`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Alerts {
    /// `success` or `error`.
    #[serde(default)]
    pub status: String,
    /// The payload.
    #[serde(default)]
    pub data: AlertData,
}

/// `data` of the response.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AlertData {
    /// Every alert, pending and firing, in response order.
    #[serde(default)]
    pub alerts: Vec<Alert>,
}

/// One alert (`openshift/oc pkg/cli/admin/upgrade/status/alerts.go` `Alert`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Alert {
    /// Labels (`alertname`, `namespace`, `severity`, ...).
    #[serde(default)]
    pub labels: AlertLabels,
    /// Annotations (`summary`, `description`, `message`, `runbook_url`).
    #[serde(default)]
    pub annotations: AlertAnnotations,
    /// `firing` or `pending`.
    #[serde(default)]
    pub state: String,
    /// When the alert became active.
    #[serde(default, deserialize_with = "lenient_time")]
    pub active_at: Option<DateTime<Utc>>,
    /// The sample value, as a string (numbers are accepted and kept as text).
    #[serde(default, deserialize_with = "lenient_string")]
    pub value: String,
}

/// The alert labels `oc` reads.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlertLabels {
    /// Alert name.
    #[serde(default)]
    pub alertname: String,
    /// Namespace, may be empty.
    #[serde(default)]
    pub namespace: String,
    /// `critical`, `warning`, `info`, ...
    #[serde(default)]
    pub severity: String,
    /// PodDisruptionBudget name (PDB alerts).
    #[serde(default)]
    pub poddisruptionbudget: String,
    /// `true` for alerts meant as update prechecks.
    #[serde(default, rename = "openShiftUpdatePrecheck")]
    pub open_shift_update_precheck: String,
}

/// The alert annotations `oc` reads.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AlertAnnotations {
    /// One-line summary.
    #[serde(default)]
    pub summary: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Message (older alerts).
    #[serde(default)]
    pub message: String,
    /// Runbook link.
    #[serde(default)]
    pub runbook_url: String,
}

/// Decodes a string, a number (as its text) or null (as `""`).
fn lenient_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => s,
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// Decodes an RFC 3339 time; anything else (or null) is the zero time.
fn lenient_time<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    Ok(s.and_then(|s| DateTime::parse_from_rfc3339(&s).ok())
        .map(|t| t.with_timezone(&Utc)))
}

/// Decodes a Prometheus `/api/v1/alerts` JSON response.
///
/// # Errors
/// When the text is not such a JSON document.
pub fn parse(text: &str) -> serde_json::Result<Alerts> {
    serde_json::from_str(text)
}

/// Reads a Prometheus `/api/v1/alerts` JSON file.
///
/// # Errors
/// A one-line error naming the file when it cannot be read or decoded.
pub fn load(path: &Path) -> anyhow::Result<Alerts> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_prometheus_response() {
        let text = r#"{"status":"success","data":{"alerts":[{"labels":{"alertname":"PodDisruptionBudgetAtLimit",
            "namespace":"openshift-monitoring","severity":"warning","poddisruptionbudget":"prometheus-k8s"},
            "annotations":{"summary":"The pod disruption budget is preventing further disruption to pods.",
            "runbook_url":"https://x"},"state":"firing","activeAt":"2024-01-01T10:00:00.123456789Z","value":"1e+00"}]}}"#;
        let a = parse(text).expect("decodes");
        assert_eq!(a.data.alerts.len(), 1);
        let al = &a.data.alerts[0];
        assert_eq!(al.labels.alertname, "PodDisruptionBudgetAtLimit");
        assert_eq!(al.labels.poddisruptionbudget, "prometheus-k8s");
        assert_eq!(al.state, "firing");
        assert_eq!(
            al.active_at.map(|t| t.timestamp_subsec_nanos()),
            Some(123_456_789)
        );
    }
}
