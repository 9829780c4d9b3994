//! What kube-apiserver requires of the `apiVersion` and `kind` of a create or replace body
//! (upstream: `transformDecodeError` in
//! `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go`, the unstructured decoding of
//! custom resources in `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/`
//! `customresource_handler.go`, and `NewMissingKindErr` in apimachinery).
//!
//! Built-in kinds take a body without them (the endpoint's kind is assumed) but refuse another
//! kind or version with `400 BadRequest`. Custom resources (CRD-defined kinds, and the
//! OpenShift kinds the simulator serves built in, which are CRDs on a real cluster) need both:
//! no `kind` is `400` "Object 'Kind' is missing", another `apiVersion` is `400` "the API
//! version in the data ... does not match", another `kind` is `422 Invalid`.

use serde_json::Value;

use crate::sim::store::{ApiError, Cause, ResourceType};

/// Whether objects of `t` are custom resources on a real cluster.
pub(super) fn is_custom(t: &ResourceType) -> bool {
    t.crd.is_some() || t.group.ends_with(".openshift.io")
}

/// kube-apiserver's short summary of a request body in decoding errors: up to 30 bytes, then
/// ` ...`.
fn summarize(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if text.is_empty() {
        return "<empty>".into();
    }
    if text.len() <= 30 {
        return text.into_owned();
    }
    let mut end = 30;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} ...", &text[..end])
}

/// Checks the `apiVersion` and `kind` of `obj` (the decoded `body`) for a write to `t`.
///
/// # Errors
/// `400 BadRequest` or `422 Invalid` with kube-apiserver's messages (see the module docs).
pub(super) fn check_type(t: &ResourceType, body: &[u8], obj: &Value) -> Result<(), ApiError> {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let want = t.api_version();
    if is_custom(t) {
        if kind.is_empty() {
            let raw = String::from_utf8_lossy(body);
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): Object 'Kind' is \
                 missing in '{raw}' ({})",
                t.kind,
                summarize(body)
            )));
        }
        if api_version != want {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API \
                 version ({want})"
            )));
        }
        if kind != t.kind {
            let name = obj["metadata"]["name"].as_str().unwrap_or_default();
            let cause = Cause::parse(&format!("kind: Invalid value: \"{kind}\": must be {}", t.kind));
            return Err(ApiError::invalid_causes(t, kind, name, vec![cause]));
        }
        return Ok(());
    }
    let kind_ok = kind.is_empty() || kind == t.kind;
    let version_ok = api_version.is_empty() || api_version == want;
    if kind_ok && version_ok {
        return Ok(());
    }
    let sent_kind = if kind.is_empty() { t.kind.as_str() } else { kind };
    let version = api_version.rsplit('/').next().unwrap_or_default();
    let registered_for = if api_version.is_empty() {
        want.as_str()
    } else {
        api_version
    };
    Err(ApiError::bad_request(format!(
        "{sent_kind} in version \"{version}\" cannot be handled as a {}: no kind \"{sent_kind}\" \
         is registered for version \"{registered_for}\" in scheme \
         \"pkg/api/legacyscheme/scheme.go:30\"",
        t.kind
    )))
}

/// The `422 Invalid` kube-apiserver gives a replace of a custom resource without
/// `metadata.resourceVersion` (custom resources allow no unconditional update).
pub(super) fn require_resource_version(t: &ResourceType, name: &str, obj: &Value) -> Result<(), ApiError> {
    let rv = obj["metadata"]["resourceVersion"].as_str().unwrap_or_default();
    if !is_custom(t) || !rv.is_empty() {
        return Ok(());
    }
    let cause = Cause::parse("metadata.resourceVersion: Invalid value: 0: must be specified for an update");
    Err(ApiError::invalid_causes(t, &t.plural, name, vec![cause]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_cut_at_30_bytes() {
        assert_eq!(summarize(br#"{"spec":{}}"#), r#"{"spec":{}}"#);
        assert_eq!(
            summarize(br#"{"metadata":{"name":"g0"},"spec":{"size":1}}"#),
            r#"{"metadata":{"name":"g0"},"spe ..."#
        );
        assert_eq!(summarize(b""), "<empty>");
        // Never splits a character.
        let s = format!("{{\"a\":\"{}\"}}", "é".repeat(20));
        assert!(summarize(s.as_bytes()).ends_with(" ..."));
    }
}
