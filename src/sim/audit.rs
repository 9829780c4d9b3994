//! The simulator's request audit log: one [`AuditEntry`] per request, and its JSON line form
//! ([`audit_json`], the audit log file of `cvo sim serve`).

use std::{collections::BTreeMap, time::Duration};

use serde::Serialize;

/// One request as the audit log records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    /// HTTP method.
    pub method: String,
    /// URL path.
    pub path: String,
    /// URL query (without `?`), possibly empty.
    pub query: String,
    /// Kubernetes verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`, `discovery`, or `unknown`.
    pub verb: &'static str,
    /// Whether the request was a dry run (`?dryRun=All`): it changed nothing.
    pub dry_run: bool,
    /// HTTP status code of the response (a watch that later reports an error in its stream
    /// still counts as 200).
    pub code: u16,
    /// When the request arrived.
    pub time: chrono::DateTime<chrono::Utc>,
    /// Time to the response head (for a watch: to the start of its stream), injected latency
    /// included.
    pub duration: Duration,
    /// The fault injected into this request, if any (see [`super::faults`]): `error 429`,
    /// `error 500`, `error 503`, `timeout` (hung, then 504), `gone` (410 Expired event),
    /// `conflict`, or for a served watch `watch drop after N events` / `... after S s` (the
    /// drop is armed; the stream may end earlier on its own).
    pub fault: Option<String>,
}

/// The request audit log.
#[derive(Clone, Debug, Default)]
pub struct Audit {
    /// Every request, oldest first.
    pub entries: Vec<AuditEntry>,
}

impl Audit {
    /// Number of requests with this verb.
    pub fn count(&self, verb: &str) -> usize {
        self.entries.iter().filter(|e| e.verb == verb).count()
    }

    /// Number of requests per verb.
    pub fn counts(&self) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for e in &self.entries {
            *m.entry(e.verb).or_default() += 1;
        }
        m
    }

    /// Number of write requests (create, update, patch, delete, deletecollection), whatever
    /// their outcome; dry runs are not counted.
    pub fn writes(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| !e.dry_run)
            .filter(|e| {
                matches!(
                    e.verb,
                    "create" | "update" | "patch" | "delete" | "deletecollection"
                )
            })
            .count()
    }
}

/// An audit entry as one JSON line (no trailing newline): `time` (RFC 3339, UTC,
/// milliseconds), `method`, `path`, `query`, `verb`, `status`, `duration_ms`, and `fault` when
/// one was injected.
pub fn audit_json(e: &AuditEntry) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        time: String,
        method: &'a str,
        path: &'a str,
        #[serde(skip_serializing_if = "str::is_empty")]
        query: &'a str,
        verb: &'a str,
        status: u16,
        duration_ms: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        fault: Option<&'a str>,
    }
    let line = Line {
        time: e.time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        method: &e.method,
        path: &e.path,
        query: &e.query,
        verb: e.verb,
        status: e.code,
        duration_ms: (e.duration.as_secs_f64() * 1e6).round() / 1000.0,
        fault: e.fault.as_deref(),
    };
    serde_json::to_string(&line).unwrap_or_default()
}
