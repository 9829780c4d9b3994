//! What a request handler answers, and the metadata-only form of an object.

use serde_json::{Value, json};

use crate::sim::response::ResponseBody;

/// A handler's answer: a JSON body with its HTTP status, or a watch's event stream.
pub(super) enum Reply {
    /// Status code and body.
    Json(u16, Value),
    /// A watch: one JSON event per line.
    Stream(ResponseBody),
}

/// The `PartialObjectMetadata` form of an object.
pub(super) fn partial(o: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": o.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}
