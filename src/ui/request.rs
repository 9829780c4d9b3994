//! What the confirm popup of an administrator's request shows and sends: the request (an
//! update target, a channel, clearing the requested update, accepting risks), decided against
//! the ClusterVersion as read, into the merge patch `oc adm upgrade` would write, readable
//! lines of it, every precondition's verdict, every risk being accepted, and — when nothing
//! may be written — why.
//!
//! The decision itself (preconditions, patch) is the shared update-request module's; this file
//! only turns it into lines. Upstream: `pkg/cli/admin/upgrade/upgrade.go` in openshift/oc.

use crate::l10n::{tr, trf};
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
                version, conditional, ..
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
            } => trf!(
                "request-title-conditional",
                "request the conditional update to {version}?",
                version = version
            ),
            Self::To { version, .. } => trf!(
                "request-title-update",
                "request the update to {version}?",
                version = version
            ),
            Self::Clear => tr!("request-title-clear", "clear the requested update?").into(),
            Self::Channel(c) => trf!("request-title-channel", "change the channel to {c}?", c = c),
            Self::AcceptRisks(_) => tr!("request-title-accept", "accept these risks?").into(),
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
    /// write, and refuses. `accept_risks_gate`: whether the cluster enables
    /// `ClusterUpdateAcceptRisks` (accepting risks is refused otherwise).
    pub fn build(
        cv: Option<&ClusterVersion>,
        request: UiRequest,
        risks: Vec<RiskRow>,
        writer: Result<(), String>,
        accept_risks_gate: bool,
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
            v.refusal = Some(tr!("request-no-cv", "no ClusterVersion to write to").into());
            return v;
        };
        decide(cv, &mut v, accept_risks_gate);
        if let Some(p) = &v.patch {
            let current = serde_json::to_value(cv).unwrap_or(Value::Null);
            flatten("", p, Some(&current), &mut v.writes);
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

/// Fills the patch, verdicts, warnings, accepted risks and refusal from the shared
/// update-request module ([`crate::cluster::update_request::plan`]). A conditional update is
/// planned as `--allow-not-recommended` (the popup lists each risk so waived); no other
/// waiver is given from the dashboard.
fn decide(cv: &ClusterVersion, v: &mut RequestView, accept_risks_gate: bool) {
    use crate::cluster::update_request::{self as ur, Flags, Outcome, Request, VerdictState};
    let (request, flags) = match &v.request {
        UiRequest::To {
            version,
            image,
            conditional,
        } => (
            Request::ToVersion {
                version: version.clone(),
                image: (!image.is_empty()).then(|| image.clone()),
            },
            Flags {
                allow_not_recommended: *conditional,
                ..Flags::default()
            },
        ),
        UiRequest::Clear => (Request::Clear, Flags::default()),
        UiRequest::Channel(c) => (Request::Channel(c.clone()), Flags::default()),
        UiRequest::AcceptRisks(names) => (
            Request::AcceptRisks(names.clone()),
            Flags {
                accept_risks_gate,
                ..Flags::default()
            },
        ),
    };
    let verdict_line = |vd: &ur::Verdict| -> (Level, String) {
        let msg = vd.message.replace('\n', " ");
        match vd.state {
            VerdictState::Passed => (Level::Ok, format!("{}: {msg}", vd.name)),
            VerdictState::Waived(w) => (Level::Warn, format!("{}: {msg} (waived: {w})", vd.name)),
            VerdictState::Blocking(Some(w)) => (
                Level::Error,
                format!("{}: {msg} (blocks; {w} would waive it)", vd.name),
            ),
            VerdictState::Blocking(None) => (Level::Error, format!("{}: {msg} (blocks)", vd.name)),
            VerdictState::Warning => (Level::Warn, format!("{}: {msg} (warning below)", vd.name)),
            VerdictState::Unchecked => (Level::Warn, format!("{}: {msg} (not checked here)", vd.name)),
        }
    };
    match ur::plan(cv, &request, &flags) {
        Ok(Outcome::Plan(p)) => {
            // Each waived risk is printed once, under "Risks you accept by confirming": the
            // Recommended verdict then only says the update is not recommended, and oc's
            // `warning: ... bypassed Recommended=False <reason>: <message>` is left out (both
            // repeat the risks' messages).
            let risks_listed = !p.waived_risks.is_empty();
            let target = p.target.as_ref().map(|t| t.version.clone()).unwrap_or_default();
            v.verdicts = p
                .verdicts
                .iter()
                .map(|vd| match vd.state {
                    VerdictState::Waived(ur::Waiver::AllowNotRecommended)
                        if risks_listed && vd.name == "Recommended" =>
                    {
                        let short = ur::Verdict {
                            message: trf!(
                                "request-not-recommended",
                                "the update service does not recommend {target}; its risks are listed below",
                                target = target
                            ),
                            ..vd.clone()
                        };
                        verdict_line(&short)
                    }
                    _ => verdict_line(vd),
                })
                .collect();
            v.warnings = p
                .warnings
                .into_iter()
                .filter(|w| !(risks_listed && w.starts_with(ur::bypass_warning_start())))
                .collect();
            if !p.waived_risks.is_empty() {
                let accepted: Vec<&str> = cv
                    .spec
                    .desired_update
                    .iter()
                    .flat_map(|d| d.accept_risks.iter().map(|r| r.name.as_str()))
                    .collect();
                v.risks = p
                    .waived_risks
                    .iter()
                    .map(|r| RiskRow {
                        name: r.name.clone(),
                        message: r.message.clone(),
                        url: r.url.clone(),
                        accepted: accepted.contains(&r.name.as_str()),
                    })
                    .collect();
            }
            v.patch = Some(p.patch);
        }
        Ok(Outcome::NoChange(n)) => {
            v.refusal = Some(trf!(
                "request-nothing-to-write",
                "nothing to write ({why})",
                why = n.message
            ))
        }
        Err(r) => {
            v.verdicts = r.verdicts.iter().map(verdict_line).collect();
            v.refusal = Some(r.message);
        }
    }
}

/// A merge patch as `path: value` lines, in key order. `current` is the object as read at the
/// same path: a null removing a field that is not set (absent, null, empty or `false`)
/// changes nothing and is not listed; one removing a set field says what it was, e.g.
/// `spec.desiredUpdate.architecture: (removed; was Multi)`.
fn flatten(prefix: &str, v: &Value, current: Option<&Value>, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&p, x, current.and_then(|c| c.get(k)), out);
            }
        }
        Value::Null => match current {
            None | Some(Value::Null | Value::Bool(false)) => {}
            Some(Value::String(s)) if s.is_empty() => {}
            Some(Value::Array(a)) if a.is_empty() => {}
            Some(Value::String(s)) => out.push(format!("{prefix}: (removed; was {s})")),
            Some(other) => out.push(format!("{prefix}: (removed; was {other})")),
        },
        Value::String(s) => out.push(format!("{prefix}: {s}")),
        Value::Array(a)
            if a.iter().all(|x| {
                x.get("name").is_some_and(Value::is_string) && x.as_object().is_some_and(|o| o.len() == 1)
            }) =>
        {
            let names: Vec<&str> = a
                .iter()
                .filter_map(|x| x.get("name").and_then(Value::as_str))
                .collect();
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
            Some(&serde_json::json!({"spec": {"channel": "stable-4.16"}})),
            &mut out,
        );
        assert_eq!(
            out,
            vec![
                "spec.channel: (removed; was stable-4.16)",
                "spec.desiredUpdate.acceptRisks: [A, B]",
                "spec.desiredUpdate.force: false",
                "spec.desiredUpdate.version: 4.16.5",
            ]
        );
    }

    #[test]
    fn a_null_for_a_field_never_set_is_not_listed() {
        let patch = serde_json::json!({"spec": {"desiredUpdate": {"architecture": null,
            "force": null, "version": "4.16.5"}}});
        for current in [
            serde_json::json!({"spec": {"desiredUpdate": {"architecture": "", "force": false}}}),
            serde_json::json!({"spec": {"desiredUpdate": {"architecture": null}}}),
            serde_json::json!({"spec": {}}),
        ] {
            let mut out = Vec::new();
            flatten("", &patch, Some(&current), &mut out);
            assert_eq!(out, vec!["spec.desiredUpdate.version: 4.16.5"], "{current}");
        }
        let mut out = Vec::new();
        flatten(
            "",
            &patch,
            Some(&serde_json::json!({"spec": {"desiredUpdate": {"architecture": "Multi", "force": true}}})),
            &mut out,
        );
        assert_eq!(
            out,
            vec![
                "spec.desiredUpdate.architecture: (removed; was Multi)",
                "spec.desiredUpdate.force: (removed; was true)",
                "spec.desiredUpdate.version: 4.16.5",
            ]
        );
    }
}
