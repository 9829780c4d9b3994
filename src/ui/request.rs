//! What the confirm popup of an administrator's request shows and sends: the request (an
//! update target, a channel, clearing the requested update, accepting risks), decided against
//! the ClusterVersion as read, into the merge patch `oc adm upgrade` would write, readable
//! lines of it, every precondition's verdict, every risk being accepted, and — when nothing
//! may be written — why.
//!
//! The decision itself (preconditions, patch) is the shared update-request module's; this file
//! only turns it into lines. Upstream: `pkg/cli/admin/upgrade/upgrade.go` in openshift/oc.

use serde_json::Value;

use super::{model::updates::RiskRow, theme::Level};
use crate::openshift::ClusterVersion;

/// A request the dashboard can make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UiRequest {
    /// Update to this release (a row of the Updates view).
    To {
        /// Target version.
        version: String,
        /// Target image.
        image: String,
        /// Whether it is a conditional update (its risks are accepted by confirming).
        conditional: bool,
    },
    /// Clear `spec.desiredUpdate` (cancel a requested update).
    Clear,
    /// Set `spec.channel`.
    Channel(String),
    /// Set `spec.desiredUpdate.acceptRisks` to these names.
    AcceptRisks(Vec<String>),
}

impl UiRequest {
    /// The request as `cvo upgrade` would be typed, e.g. `upgrade --to 4.16.5
    /// --allow-not-recommended`.
    pub fn command_line(&self) -> String {
        match self {
            Self::To {
                version,
                conditional,
                ..
            } => {
                let mut s = format!("upgrade --to {version}");
                if *conditional {
                    s.push_str(" --allow-not-recommended");
                }
                s
            }
            Self::Clear => "upgrade --clear".into(),
            Self::Channel(c) => format!("upgrade channel {c}"),
            Self::AcceptRisks(r) => format!("accept risks {}", r.join(",")),
        }
    }

    /// The popup's title.
    pub fn title(&self) -> String {
        match self {
            Self::To {
                version,
                conditional: true,
                ..
            } => format!("request the conditional update to {version}?"),
            Self::To { version, .. } => format!("request the update to {version}?"),
            Self::Clear => "clear the requested update?".into(),
            Self::Channel(c) => format!("change the channel to {c}?"),
            Self::AcceptRisks(_) => "accept these risks?".into(),
        }
    }
}

/// The confirm popup's content, decided once when it opens.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestView {
    /// The request.
    pub request: UiRequest,
    /// The merge patch to send; `None` when nothing will be written.
    pub patch: Option<Value>,
    /// The patch as `path: value` lines (`path: (removed)` for a null).
    pub writes: Vec<String>,
    /// Every precondition's verdict: severity and one line.
    pub verdicts: Vec<(Level, String)>,
    /// Every risk accepted by confirming.
    pub risks: Vec<RiskRow>,
    /// Warnings to read before confirming.
    pub warnings: Vec<String>,
    /// Why nothing will be written (read-only, a blocking precondition, no change, no
    /// writer); `None` when confirming writes the patch.
    pub refusal: Option<String>,
}

impl RequestView {
    /// Decides `request` against `cv`. `writer` is `Err(reason)` when this dashboard may not
    /// write at all (`--read-only`, a snapshot): the popup still shows what the request would
    /// write, and refuses.
    pub fn build(
        cv: Option<&ClusterVersion>,
        request: UiRequest,
        risks: Vec<RiskRow>,
        writer: Result<(), String>,
    ) -> Self {
        let mut v = Self {
            request,
            patch: None,
            writes: Vec::new(),
            verdicts: Vec::new(),
            risks,
            warnings: Vec::new(),
            refusal: None,
        };
        let Some(cv) = cv else {
            v.refusal = Some("no ClusterVersion to write to".into());
            return v;
        };
        decide(cv, &mut v);
        if let Some(p) = &v.patch {
            flatten("", p, &mut v.writes);
        }
        if let Err(why) = writer {
            v.refusal = Some(why);
        }
        if v.refusal.is_some() {
            v.patch = None;
        }
        v
    }
}

/// Fills the patch, verdicts and refusal (a stand-in that writes what `oc adm upgrade` writes
/// without checking preconditions, until the shared update-request module is wired in).
fn decide(_cv: &ClusterVersion, v: &mut RequestView) {
    v.patch = Some(match &v.request {
        UiRequest::To { version, image, .. } => serde_json::json!({"spec": {"desiredUpdate": {
            "version": version, "image": image, "force": false}}}),
        UiRequest::Clear => serde_json::json!({"spec": {"desiredUpdate": null}}),
        UiRequest::Channel(c) => serde_json::json!({"spec": {"channel": c}}),
        UiRequest::AcceptRisks(names) => {
            let r: Vec<Value> = names.iter().map(|n| serde_json::json!({"name": n})).collect();
            serde_json::json!({"spec": {"desiredUpdate": {"acceptRisks": r}}})
        }
    });
}

/// A merge patch as `path: value` lines, in key order.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, x, out);
            }
        }
        Value::Null => out.push(format!("{prefix}: (removed)")),
        Value::String(s) => out.push(format!("{prefix}: {s}")),
        Value::Array(a) if a.iter().all(|x| x.get("name").is_some_and(Value::is_string) && x.as_object().is_some_and(|o| o.len() == 1)) => {
            let names: Vec<&str> = a.iter().filter_map(|x| x.get("name").and_then(Value::as_str)).collect();
            out.push(format!("{prefix}: [{}]", names.join(", ")));
        }
        other => out.push(format!("{prefix}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_read_as_paths() {
        let mut out = Vec::new();
        flatten(
            "",
            &serde_json::json!({"spec": {"desiredUpdate": {"version": "4.16.5", "force": false,
                "acceptRisks": [{"name": "A"}, {"name": "B"}]}, "channel": null}}),
            &mut out,
        );
        assert_eq!(
            out,
            vec![
                "spec.channel: (removed)",
                "spec.desiredUpdate.acceptRisks: [A, B]",
                "spec.desiredUpdate.force: false",
                "spec.desiredUpdate.version: 4.16.5",
            ]
        );
    }
}
