//! The one write path of an administrator's request: a JSON merge patch of a ClusterVersion's
//! `spec.desiredUpdate` and/or `spec.channel`, as `oc adm upgrade` writes it
//! (`pkg/cli/admin/upgrade/upgrade.go`, `pkg/cli/admin/upgrade/channel/channel.go` in
//! openshift/oc), and [`send`], the one function that writes it.
//!
//! Every face writes requests through here: `cvo upgrade` (from a
//! `cluster::update_request::Plan`), the dashboard (its confirm popup, through the engine's
//! `Command::Request` or, without an engine, `cli::request_writer`) and the demo's automatic
//! request. [`SpecPatch::new`] is the only place the scope is checked: a request touches
//! nothing of the ClusterVersion but those two spec fields. Below every layer: it uses only the
//! API types.

use kube::{
    Api, Client,
    api::{Patch, PatchParams},
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::openshift::ClusterVersion;

/// A JSON merge patch of a ClusterVersion that touches only `spec.desiredUpdate` and
/// `spec.channel` (at least one of them), e.g.
/// `{"spec":{"desiredUpdate":{"version":"4.16.4","image":"…"}}}`. Built only by
/// [`SpecPatch::new`] or the constructors, so a value of this type is always in scope.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct SpecPatch(Value);

/// A patch outside a request's scope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused: a request may patch only spec.desiredUpdate and spec.channel, not {0}")]
pub struct ScopeError(pub String);

impl SpecPatch {
    /// Checks `patch`: exactly `{"spec": {...}}` whose keys are `desiredUpdate` and/or
    /// `channel`.
    ///
    /// # Errors
    /// [`ScopeError`] with the patch as JSON for anything else (another top-level key, another
    /// spec field, an empty spec, not an object).
    pub fn new(patch: Value) -> Result<Self, ScopeError> {
        let in_scope = patch
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("spec"))
            .and_then(Value::as_object)
            .is_some_and(|s| !s.is_empty() && s.keys().all(|k| k == "desiredUpdate" || k == "channel"));
        if in_scope {
            Ok(Self(patch))
        } else {
            Err(ScopeError(patch.to_string()))
        }
    }

    /// `spec.desiredUpdate` = `{version, image, force}` (a `None` is written as `null`, which
    /// removes the field).
    pub fn desired_update(version: Option<&str>, image: Option<&str>, force: bool) -> Self {
        Self(json!({"spec": {"desiredUpdate": {"version": version, "image": image, "force": force}}}))
    }

    /// `spec.desiredUpdate` = `null` (oc's `--clear`).
    pub fn clear_desired_update() -> Self {
        Self(json!({"spec": {"desiredUpdate": null}}))
    }

    /// `spec.channel` = `channel`; an empty one is written as `null` (clears it).
    pub fn channel(channel: &str) -> Self {
        let v = if channel.is_empty() {
            Value::Null
        } else {
            Value::String(channel.to_string())
        };
        Self(json!({"spec": {"channel": v}}))
    }

    /// `spec.desiredUpdate.acceptRisks` = the names, each as `{"name": …}`.
    pub fn accept_risks<S: AsRef<str>>(names: &[S]) -> Self {
        let risks: Vec<Value> = names.iter().map(|n| json!({"name": n.as_ref()})).collect();
        Self(json!({"spec": {"desiredUpdate": {"acceptRisks": risks}}}))
    }

    /// The patch body.
    pub fn as_value(&self) -> &Value {
        &self.0
    }
}

/// An administrator's request, ready to write: the patch and the request as typed, e.g.
/// `upgrade --to 4.16.5 --allow-not-recommended` (for logs and the outcome line).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request {
    /// What is written.
    pub patch: SpecPatch,
    /// The request as the administrator typed or picked it.
    pub summary: String,
}

/// Why a request was not written.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// `--read-only`: no request was made.
    #[error("refusing to write: read-only mode (--read-only) forbids every write, including update requests")]
    ReadOnly,
    /// The API server refused or could not be reached (oc: `Unable to upgrade: …`).
    #[error("unable to patch clusterversion/{name}: {source}")]
    Api {
        /// The ClusterVersion's name.
        name: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
}

/// Writes `patch` to the ClusterVersion `name` as one JSON merge patch and returns the object
/// the server answered with: exactly one PATCH request, or none when `read_only`.
///
/// # Errors
/// [`SendError::ReadOnly`] before any request when `read_only`; [`SendError::Api`] when the
/// server refuses the patch or cannot be reached.
pub async fn send(
    client: Client,
    name: &str,
    patch: &SpecPatch,
    read_only: bool,
) -> Result<ClusterVersion, SendError> {
    if read_only {
        return Err(SendError::ReadOnly);
    }
    let api: Api<ClusterVersion> = Api::all(client);
    api.patch(name, &PatchParams::default(), &Patch::Merge(patch.as_value()))
        .await
        .map_err(|source| SendError::Api {
            name: name.to_string(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_is_spec_desired_update_and_channel_only() {
        for ok in [
            json!({"spec": {"desiredUpdate": {"version": "4.16.4"}}}),
            json!({"spec": {"channel": "fast-4.16"}}),
            json!({"spec": {"channel": null, "desiredUpdate": null}}),
        ] {
            assert_eq!(SpecPatch::new(ok.clone()).map(|p| p.as_value().clone()), Ok(ok));
        }
        for bad in [
            json!({"spec": {"upstream": "https://evil.example/graph"}}),
            json!({"spec": {"channel": "x", "clusterID": "y"}}),
            json!({"spec": {}}),
            json!({"status": {"desired": {}}}),
            json!({"spec": {"channel": "x"}, "metadata": {"labels": {"a": "b"}}}),
            json!("spec"),
        ] {
            assert_eq!(
                SpecPatch::new(bad.clone()),
                Err(ScopeError(bad.to_string())),
                "{bad} must be refused"
            );
        }
        assert_eq!(
            ScopeError(r#"{"spec":{}}"#.into()).to_string(),
            r#"refused: a request may patch only spec.desiredUpdate and spec.channel, not {"spec":{}}"#
        );
    }

    #[test]
    fn constructors_build_oc_s_patches() {
        assert_eq!(
            SpecPatch::desired_update(Some("4.16.4"), None, false).as_value(),
            &json!({"spec": {"desiredUpdate": {"version": "4.16.4", "image": null, "force": false}}})
        );
        assert_eq!(
            SpecPatch::clear_desired_update().as_value(),
            &json!({"spec": {"desiredUpdate": null}})
        );
        assert_eq!(
            SpecPatch::channel("").as_value(),
            &json!({"spec": {"channel": null}})
        );
        assert_eq!(
            SpecPatch::channel("stable-4.16").as_value(),
            &json!({"spec": {"channel": "stable-4.16"}})
        );
        assert_eq!(
            SpecPatch::accept_risks(&["A", "B"]).as_value(),
            &json!({"spec": {"desiredUpdate": {"acceptRisks": [{"name": "A"}, {"name": "B"}]}}})
        );
        for p in [
            SpecPatch::desired_update(None, Some("x"), true),
            SpecPatch::clear_desired_update(),
            SpecPatch::channel("c"),
            SpecPatch::accept_risks(&["r"]),
        ] {
            assert!(
                SpecPatch::new(p.as_value().clone()).is_ok(),
                "{p:?} out of its own scope"
            );
        }
    }
}
