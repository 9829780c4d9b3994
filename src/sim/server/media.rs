//! Content negotiation as kube-apiserver does it for custom resources, which have no
//! protobuf form: the simulator speaks JSON only (and YAML request bodies).
//!
//! - A request body in another media type (kubectl sends `application/vnd.kubernetes.protobuf`
//!   for built-in kinds, e.g. `kubectl create namespace`) is `415 UnsupportedMediaType`
//!   (upstream: `NewUnsupportedMediaTypeError` in
//!   `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/errors.go`). kubectl
//!   v1.32 does not fall back to JSON on it: `kubectl create namespace|configmap|deployment`
//!   and `kubectl auth can-i` fail on the simulator (`kubectl create -f`/`apply -f` send
//!   JSON and work). Decoding protobuf bodies is not done yet.
//! - An `Accept` header that names no JSON-compatible type (`application/json`, with any
//!   parameters such as `as=Table`; `application/yaml`, which JSON is; `application/*`;
//!   `*/*`) is `406 NotAcceptable` (`errNotAcceptable`, same file). A header that lists
//!   protobuf first and JSON after it is answered in JSON, as a CRD endpoint does.

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

/// The request body as JSON: as it is for JSON (or no `Content-Type`), converted for
/// `application/yaml`; patches keep their own types (checked by the patch handler).
///
/// # Errors
/// `415 UnsupportedMediaType` for any other media type (protobuf, CBOR, ...); `400` for YAML
/// that does not parse.
pub(super) fn json_body(parts: &http::request::Parts, body: &[u8]) -> Result<Option<Vec<u8>>, ApiError> {
    if !matches!(parts.method, http::Method::POST | http::Method::PUT) || body.is_empty() {
        return Ok(None);
    }
    match media_type(header(parts, http::header::CONTENT_TYPE)).as_str() {
        "" | "application/json" => Ok(None),
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
