//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`) of built-in kinds, decoded
//! into the JSON object the store takes, as kube-apiserver decodes them (upstream: the
//! protobuf serializer in `staging/src/k8s.io/apimachinery/pkg/runtime/serializer/protobuf/`
//! `protobuf.go`, the generated `Unmarshal` methods of `k8s.io/api`, and the JSON forms of the
//! special types in `k8s.io/apimachinery`).
//!
//! kubectl's typed clients send them: `kubectl create namespace|configmap|secret|deployment|
//! service|job|serviceaccount ...`, `kubectl auth can-i` (a SelfSubjectAccessReview).
//!
//! A body is the 4-byte magic `k8s\0` and a `runtime.Unknown` message: `typeMeta`
//! (`apiVersion`, `kind`), `raw` (the object's own message), `contentEncoding`, `contentType`.
//! The messages are described by a `FileDescriptorSet` compiled from Kubernetes'
//! `generated.proto` files of `k8s.io/api` (core, apps, batch, rbac, policy, networking,
//! scheduling, coordination, authorization and authentication, all `v1`) and
//! `k8s.io/apimachinery`, stored in `assets/protobuf/builtin-kinds.binpb.gz` (19 KB) and parsed
//! on the first protobuf body, never at start-up. The unit test `descriptor_asset_is_current`
//! compiles the `.proto` files again (protox) and fails when the asset is stale;
//! `CVO_REFRESH_ASSETS=1 cargo test --lib protobuf` rewrites it.
//!
//! The JSON forms: `metav1.Time` an RFC 3339 string in seconds, `MicroTime` in microseconds,
//! `resource.Quantity` its string, `intstr.IntOrString` a number or a string,
//! `runtime.RawExtension` and `metav1.FieldsV1` the JSON they carry, `metav1.Duration` Go's
//! duration text (`1h0m0s`), `Verbs` and `ExtraValue` lists, 64-bit integers numbers, bytes
//! base64; the Go structs embedded inline (`VolumeSource` of a Volume, `ProbeHandler` of a
//! Probe, `LocalObjectReference` of the key selectors, ...: [`INLINE`]) give their fields to
//! the parent. Go writes every non-pointer field, zero or not; a zero scalar (`""`, `0`, `false`)
//! or an empty list or map in a message is dropped as `omitempty` drops it from JSON, and an
//! empty message stays `{}` (a struct is never omitted) but for an empty `Time`, which is
//! Go's zero time (`null`). So a pointer field set to its zero (`replicas: 0` of
//! `kubectl create deployment --replicas=0`) is lost; values in lists and maps are kept as
//! they are (`data: {a: ""}`).
//!
//! Errors are kube-apiserver's `400 BadRequest` texts: a body without the magic or whose
//! envelope does not parse is "the object provided is unrecognized (must be of type
//! Namespace): ... (hex of its first 30 bytes)", an object message that does not parse is
//! "Namespace in version \"v1\" cannot be handled as a Namespace: unexpected EOF".

use std::{io::Read, sync::OnceLock};

use base64::Engine;
use prost_reflect::{DescriptorPool, DynamicMessage, MapKey, MessageDescriptor, ReflectMessage};
use serde_json::{Map, Number, Value};

use crate::sim::store::ApiError;

/// The media type of a protobuf body.
pub(super) const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The prefix of every protobuf body (`protobuf.go`'s `protoEncodingPrefix`).
const MAGIC: [u8; 4] = *b"k8s\0";

/// The compiled descriptors (gzip of an encoded `google.protobuf.FileDescriptorSet`).
static ASSET: &[u8] = include_bytes!("../../../assets/protobuf/builtin-kinds.binpb.gz");

/// The `.proto` files compiled into [`ASSET`], under `assets/protobuf/`.
#[cfg(test)]
const PROTO_FILES: [&str; 10] = [
    "k8s.io/api/core/v1/generated.proto",
    "k8s.io/api/apps/v1/generated.proto",
    "k8s.io/api/batch/v1/generated.proto",
    "k8s.io/api/rbac/v1/generated.proto",
    "k8s.io/api/policy/v1/generated.proto",
    "k8s.io/api/networking/v1/generated.proto",
    "k8s.io/api/scheduling/v1/generated.proto",
    "k8s.io/api/coordination/v1/generated.proto",
    "k8s.io/api/authorization/v1/generated.proto",
    "k8s.io/api/authentication/v1/generated.proto",
];

/// The protobuf package of each API group's `v1` kinds.
const PACKAGES: [(&str, &str); 10] = [
    ("", "k8s.io.api.core.v1"),
    ("apps", "k8s.io.api.apps.v1"),
    ("batch", "k8s.io.api.batch.v1"),
    ("rbac.authorization.k8s.io", "k8s.io.api.rbac.v1"),
    ("policy", "k8s.io.api.policy.v1"),
    ("networking.k8s.io", "k8s.io.api.networking.v1"),
    ("scheduling.k8s.io", "k8s.io.api.scheduling.v1"),
    ("coordination.k8s.io", "k8s.io.api.coordination.v1"),
    ("authorization.k8s.io", "k8s.io.api.authorization.v1"),
    ("authentication.k8s.io", "k8s.io.api.authentication.v1"),
];

const META: &str = "k8s.io.apimachinery.pkg.apis.meta.v1";

/// The descriptor pool, parsed from [`ASSET`] on first use.
fn pool() -> Result<&'static DescriptorPool, ApiError> {
    static POOL: OnceLock<Result<DescriptorPool, String>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(ASSET)
            .read_to_end(&mut raw)
            .map_err(|e| format!("assets/protobuf/builtin-kinds.binpb.gz: {e}"))?;
        DescriptorPool::decode(raw.as_slice())
            .map_err(|e| format!("assets/protobuf/builtin-kinds.binpb.gz: {e}"))
    })
    .as_ref()
    .map_err(|e| ApiError::new(500, "InternalError", e.clone()))
}

/// The message of `kind` in `api_version` (`v1` or `group/v1`), when it has a descriptor.
fn message(api_version: &str, kind: &str) -> Option<MessageDescriptor> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    if version != "v1" || kind.is_empty() {
        return None;
    }
    let package = PACKAGES.iter().find(|(g, _)| *g == group)?.1;
    pool().ok()?.get_message_by_name(&format!("{package}.{kind}"))
}

/// Whether a protobuf body of `kind` in `api_version` can be decoded (parses the descriptors on
/// the first call).
pub(super) fn has_descriptor(api_version: &str, kind: &str) -> bool {
    message(api_version, kind).is_some()
}

/// apimachinery's `summarizeData(body, 30)`: hex of the first 30 bytes (text when the body
/// starts with `{`), ` ...` when cut.
fn summarize(body: &[u8]) -> String {
    let cut = &body[..body.len().min(30)];
    let more = if body.len() > 30 { " ..." } else { "" };
    if body.is_empty() {
        "<empty>".into()
    } else if body[0] == b'{' {
        format!("{}{more}", String::from_utf8_lossy(cut))
    } else {
        let hex: String = cut.iter().map(|b| format!("{b:02x}")).collect();
        format!("{hex}{more}")
    }
}

/// A decoding error as Go's generated `Unmarshal` words the common one (a message cut short,
/// in a length or a varint, is `unexpected EOF`; prost says `invalid varint` for a varint cut
/// short and for one of more than ten bytes, Go's `integer overflow`); prost's own text
/// otherwise, without its prefix.
fn go_error(e: &impl std::fmt::Display) -> String {
    let text = e.to_string();
    if ["buffer underflow", "unexpected end", "invalid varint"]
        .iter()
        .any(|t| text.contains(t))
    {
        return "unexpected EOF".into();
    }
    text.trim_start_matches("failed to decode Protobuf message: ")
        .to_owned()
}

/// Decodes a protobuf `body` written to an endpoint of `kind` (`api_version`) into the JSON
/// object the store takes, `apiVersion` and `kind` set from the envelope (or the endpoint's
/// when the envelope leaves them empty). An envelope of another kind or version comes back as
/// just its `apiVersion` and `kind`, for the caller's type check to refuse as it refuses JSON.
///
/// # Errors
/// `400 BadRequest` with kube-apiserver's texts (see the module docs); `500` if the embedded
/// descriptors do not parse (the unit tests rule that out).
pub(super) fn decode(body: &[u8], api_version: &str, kind: &str) -> Result<Value, ApiError> {
    let unrecognized = |why: String| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {why} ({})",
            summarize(body)
        ))
    };
    let Some(envelope) = body.strip_prefix(&MAGIC) else {
        return Err(unrecognized(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]".into(),
        ));
    };
    let unknown_desc = pool()?
        .get_message_by_name("k8s.io.apimachinery.pkg.runtime.Unknown")
        .ok_or_else(|| ApiError::new(500, "InternalError", "no runtime.Unknown descriptor"))?;
    let unknown = DynamicMessage::decode(unknown_desc, envelope).map_err(|e| unrecognized(go_error(&e)))?;
    let text = |m: &DynamicMessage, f: &str| {
        m.get_field_by_name(f)
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    let type_meta = unknown
        .get_field_by_name("typeMeta")
        .and_then(|v| v.as_message().cloned());
    let (mut sent_version, mut sent_kind) = type_meta
        .as_ref()
        .map(|t| (text(t, "apiVersion"), text(t, "kind")))
        .unwrap_or_default();
    if sent_version.is_empty() {
        sent_version = api_version.to_owned();
    }
    if sent_kind.is_empty() {
        sent_kind = kind.to_owned();
    }
    let mut head = Map::new();
    head.insert("apiVersion".into(), Value::String(sent_version.clone()));
    head.insert("kind".into(), Value::String(sent_kind.clone()));
    if (sent_version.as_str(), sent_kind.as_str()) != (api_version, kind) {
        return Ok(Value::Object(head));
    }
    let desc = message(api_version, kind).ok_or_else(unsupported)?;
    let raw = unknown
        .get_field_by_name("raw")
        .and_then(|v| v.as_bytes().cloned())
        .unwrap_or_default();
    let version = api_version.rsplit('/').next().unwrap_or_default();
    let cannot = |why: String| {
        ApiError::bad_request(format!(
            "{sent_kind} in version \"{version}\" cannot be handled as a {kind}: {why}"
        ))
    };
    let object = DynamicMessage::decode(desc, raw.as_ref()).map_err(|e| cannot(go_error(&e)))?;
    if let Some(Value::Object(fields)) = message_json(&object).map_err(cannot)? {
        head.extend(fields);
    }
    Ok(Value::Object(head))
}

/// The `415` kube-apiserver gives a protobuf body for a kind without a protobuf form (custom
/// resources).
pub(super) fn unsupported() -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: \
         application/json, application/yaml",
    )
}

/// The fields that are Go structs embedded with `json:",inline"`: their fields are the
/// parent's in JSON (`name` of a `configMapKeyRef`, `hostPath` of a Volume, `httpGet` of a
/// Probe). `(field, message)`, from the Go types of `k8s.io/api` (the `.proto` files do not
/// mark them).
const INLINE: [(&str, &str); 6] = [
    ("localObjectReference", "LocalObjectReference"),
    ("volumeSource", "VolumeSource"),
    ("persistentVolumeSource", "PersistentVolumeSource"),
    ("handler", "ProbeHandler"),
    ("ephemeralContainerCommon", "EphemeralContainerCommon"),
    ("ingressRuleValue", "IngressRuleValue"),
];

fn is_inline(field: &prost_reflect::FieldDescriptor) -> bool {
    let prost_reflect::Kind::Message(m) = field.kind() else {
        return false;
    };
    INLINE.contains(&(field.name(), m.name()))
}

/// Whether a singular field's value is what Go's `omitempty` drops.
fn is_zero(v: &prost_reflect::Value) -> bool {
    use prost_reflect::Value as P;
    match v {
        P::Bool(b) => !b,
        P::I32(n) | P::EnumNumber(n) => *n == 0,
        P::I64(n) => *n == 0,
        P::U32(n) => *n == 0,
        P::U64(n) => *n == 0,
        P::F32(n) => *n == 0.0,
        P::F64(n) => *n == 0.0,
        P::String(s) => s.is_empty(),
        P::Bytes(b) => b.is_empty(),
        P::List(l) => l.is_empty(),
        P::Map(m) => m.is_empty(),
        P::Message(_) => false,
    }
}

/// A message's JSON form; `None` for a value Go writes as absent (an empty `Time`, an empty
/// `RawExtension`).
fn message_json(m: &DynamicMessage) -> Result<Option<Value>, String> {
    let name = m.descriptor().full_name().to_owned();
    let int = |f: &str| {
        m.get_field_by_name(f)
            .and_then(|v| v.as_i64().or_else(|| v.as_i32().map(i64::from)))
            .unwrap_or_default()
    };
    let bytes = |f: &str| {
        m.get_field_by_name(f)
            .and_then(|v| v.as_bytes().cloned())
            .unwrap_or_default()
    };
    let string = |f: &str| {
        m.get_field_by_name(f)
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    let set = m.fields().next().is_some();
    let special = name.strip_prefix("k8s.io.apimachinery.pkg.").unwrap_or_default();
    Ok(match special {
        "apis.meta.v1.Time" | "apis.meta.v1.MicroTime" => {
            if !set {
                return Ok(None);
            }
            let nanos = u32::try_from(int("nanos")).map_err(|_| format!("{name}: nanos out of range"))?;
            let t = chrono::DateTime::from_timestamp(int("seconds"), nanos)
                .ok_or_else(|| format!("{name}: time out of range"))?;
            let text = if special.ends_with("MicroTime") {
                t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
            } else {
                t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
            };
            Some(Value::String(text))
        }
        "apis.meta.v1.Duration" => Some(Value::String(go_duration(int("duration")))),
        "api.resource.Quantity" | "api.resource.QuantityValue" => {
            let q = string("string");
            (!q.is_empty()).then_some(Value::String(q))
        }
        "util.intstr.IntOrString" => Some(if int("type") == 1 {
            Value::String(string("strVal"))
        } else {
            Value::from(int("intVal"))
        }),
        "runtime.RawExtension" | "apis.meta.v1.FieldsV1" => {
            let raw = bytes(if special.ends_with("FieldsV1") {
                "Raw"
            } else {
                "raw"
            });
            if raw.is_empty() {
                return Ok(None);
            }
            Some(serde_json::from_slice(&raw).map_err(|e| format!("{name}: {e}"))?)
        }
        _ if name == format!("{META}.Verbs") || name.ends_with(".v1.ExtraValue") => {
            match m.get_field_by_name("items").as_deref() {
                Some(v) => Some(value_json(v)?),
                None => Some(Value::Array(Vec::new())),
            }
        }
        _ => {
            let mut out = Map::new();
            for (field, v) in m.fields() {
                if !matches!(v, prost_reflect::Value::Message(_)) && is_zero(v) {
                    continue;
                }
                let json = match v {
                    prost_reflect::Value::Message(inner) => message_json(inner)?,
                    other => Some(value_json(other)?),
                };
                match json {
                    Some(Value::Object(fields)) if is_inline(&field) => out.extend(fields),
                    Some(json) => {
                        out.insert(field.name().to_owned(), json);
                    }
                    None => {}
                }
            }
            Some(Value::Object(out))
        }
    })
}

/// A field value's JSON form (list elements and map values keep their zeros).
fn value_json(v: &prost_reflect::Value) -> Result<Value, String> {
    use prost_reflect::Value as P;
    Ok(match v {
        P::Bool(b) => Value::Bool(*b),
        P::I32(n) | P::EnumNumber(n) => Value::from(*n),
        P::I64(n) => Value::from(*n),
        P::U32(n) => Value::from(*n),
        P::U64(n) => Value::from(*n),
        P::F32(n) => Number::from_f64(f64::from(*n)).map_or(Value::Null, Value::Number),
        P::F64(n) => Number::from_f64(*n).map_or(Value::Null, Value::Number),
        P::String(s) => Value::String(s.clone()),
        P::Bytes(b) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        P::Message(m) => message_json(m)?.unwrap_or(Value::Null),
        P::List(l) => Value::Array(l.iter().map(value_json).collect::<Result<_, _>>()?),
        P::Map(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let key = match k {
                    MapKey::Bool(b) => b.to_string(),
                    MapKey::I32(n) => n.to_string(),
                    MapKey::I64(n) => n.to_string(),
                    MapKey::U32(n) => n.to_string(),
                    MapKey::U64(n) => n.to_string(),
                    MapKey::String(s) => s.clone(),
                };
                out.insert(key, value_json(v)?);
            }
            Value::Object(out)
        }
    })
}

/// Go's `time.Duration.String()` of `ns` nanoseconds: `0s`, `1.5s`, `2m3s`, `1h0m0s`,
/// `250ms`, `1µs`, `-5s`.
fn go_duration(ns: i64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    let sign = if ns < 0 { "-" } else { "" };
    let u = ns.unsigned_abs();
    let frac = |value: u64, digits: u32| {
        let scale = 10u64.pow(digits);
        let (whole, rest) = (value / scale, value % scale);
        if rest == 0 {
            whole.to_string()
        } else {
            let text = format!("{rest:0width$}", width = digits as usize);
            format!("{whole}.{}", text.trim_end_matches('0'))
        }
    };
    if u < 1_000 {
        return format!("{sign}{u}ns");
    }
    if u < 1_000_000 {
        return format!("{sign}{}µs", frac(u, 3));
    }
    if u < 1_000_000_000 {
        return format!("{sign}{}ms", frac(u, 6));
    }
    let secs = u / 1_000_000_000;
    let seconds = frac(u % 60_000_000_000, 9);
    let minutes = secs / 60;
    if minutes == 0 {
        return format!("{sign}{seconds}s");
    }
    let hours = minutes / 60;
    if hours == 0 {
        return format!("{sign}{minutes}m{seconds}s");
    }
    format!("{sign}{hours}h{}m{seconds}s", minutes % 60)
}

#[cfg(test)]
mod tests;
