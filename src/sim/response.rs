//! The simulator's HTTP response bodies.

use std::convert::Infallible;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use serde_json::Value;

/// The body of every simulator response.
pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// A JSON response with status `code`.
pub(super) fn json_response(code: u16, v: &Value) -> Response<ResponseBody> {
    raw_json_response(code, Bytes::from(serde_json::to_vec(v).unwrap_or_default()))
}

/// A response with status `code` and `bytes` (JSON text) as its body.
pub(super) fn raw_json_response(code: u16, bytes: Bytes) -> Response<ResponseBody> {
    let mut r = Response::new(Full::new(bytes).boxed_unsync());
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}
