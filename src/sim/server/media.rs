//! Content negotiation as kube-apiserver does it.
//!
//! - Request bodies: JSON, YAML (converted to JSON here) and, for built-in kinds, protobuf
//!   (`application/vnd.kubernetes.protobuf`, what kubectl's typed clients send: `kubectl create
//!   namespace|configmap|deployment|secret ...`, `kubectl auth can-i`), decoded by
//!   [`super::protobuf`] once the route names the kind. A protobuf body for a custom resource
//!   (which has no protobuf form) or a kind without a descriptor, and a body in any other media
//!   type (CBOR, ...), is `415 UnsupportedMediaType` (upstream: `NewUnsupportedMediaTypeError`
//!   in `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/errors.go`).
//! - Answers are JSON. An `Accept` header that names no JSON-compatible type
//!   (`application/json`, with any parameters such as `as=Table`; `application/yaml`, which
//!   JSON is; `application/*`; `*/*`) is `406 NotAcceptable` (`errNotAcceptable`, same file).
//!   A header that lists protobuf first and JSON after it (kubectl v1.32 and v1.33 send
//!   `application/vnd.kubernetes.protobuf,application/json`) is answered in JSON, which
//!   kubectl takes.

use serde_json::Value;

use crate::sim::store::ApiError;

/// The request body media types the simulator decodes.
const BODY_TYPES: &str = "application/json, application/yaml";
/// The response media types the simulator writes.
const ANSWER_TYPES: &str = "application/json, application/yaml, application/json;stream=watch";

/// The media type of a header value (before `;`, trimmed, lowercase).
fn media_type(s: &str) -> String {
    s.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn header(parts: &http::request::Parts, name: http::header::HeaderName) -> &str {
    parts
        .headers
        .get(name)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
}

/// `406 NotAcceptable` when the `Accept` header names no type the simulator can answer with.
///
/// # Errors
/// The `406` Status.
pub(super) fn check_accept(parts: &http::request::Parts) -> Result<(), ApiError> {
    let accept = header(parts, http::header::ACCEPT);
    if accept.trim().is_empty() {
        return Ok(());
    }
    let ok = accept.split(',').map(media_type).any(|m| {
        matches!(
            m.as_str(),
            "application/json" | "application/yaml" | "application/*" | "*/*" | ""
        )
    });
    if ok {
        Ok(())
    } else {
        Err(ApiError::new(
            406,
            "NotAcceptable",
            format!("only the following media types are accepted: {ANSWER_TYPES}"),
        ))
    }
}

/// Whether the request is a create or replace with a protobuf body (decoded after routing, by
/// [`super::protobuf::decode`]).
pub(super) fn is_protobuf(parts: &http::request::Parts, body: &[u8]) -> bool {
    matches!(parts.method, http::Method::POST | http::Method::PUT)
        && !body.is_empty()
        && media_type(header(parts, http::header::CONTENT_TYPE)) == super::protobuf::MEDIA_TYPE
}

/// The request body as JSON: as it is for JSON (or no `Content-Type`), converted for
/// `application/yaml`; protobuf is left for [`is_protobuf`]'s caller; patches keep their own
/// types (checked by the patch handler).
///
/// # Errors
/// `415 UnsupportedMediaType` for any other media type (CBOR, ...); `400` for YAML that does
/// not parse.
pub(super) fn json_body(parts: &http::request::Parts, body: &[u8]) -> Result<Option<Vec<u8>>, ApiError> {
    if !matches!(parts.method, http::Method::POST | http::Method::PUT) || body.is_empty() {
        return Ok(None);
    }
    match media_type(header(parts, http::header::CONTENT_TYPE)).as_str() {
        "" | "application/json" | super::protobuf::MEDIA_TYPE => Ok(None),
        "application/yaml" => {
            let v: Value = serde_norway::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
            Ok(Some(serde_json::to_vec(&v).unwrap_or_default()))
        }
        _ => Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types \
                 include: {BODY_TYPES}"
            ),
        )),
    }
}
