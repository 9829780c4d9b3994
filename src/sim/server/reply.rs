//! What a request handler answers, and the metadata-only form of an object.

use serde_json::{Value, json};

use crate::sim::response::ResponseBody;

/// A handler's answer: a JSON body with its HTTP status, or a watch's event stream.
pub(super) enum Reply {
    /// Status code and body.
    Json(u16, Value),
    /// Status code and a body already serialized (stored objects answered as they are).
    Raw(u16, String),
    /// A watch: one JSON event per line.
    Stream(ResponseBody),
    /// Status code and a `text/plain; charset=utf-8` body (`/healthz`, `/livez`, `/readyz`).
    Text(u16, String),
}

impl Reply {
    /// The body as a `Value` (parsing a [`Reply::Raw`] one); `None` for a stream.
    pub(super) fn into_json(self) -> Option<(u16, Value)> {
        match self {
            Self::Json(code, v) => Some((code, v)),
            Self::Raw(code, text) => Some((code, serde_json::from_str(&text).ok()?)),
            Self::Stream(_) | Self::Text(..) => None,
        }
    }
}

/// The `PartialObjectMetadata` form of an object.
pub(super) fn partial(o: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": o.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}
