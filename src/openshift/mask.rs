//! Secret values never shown: the one masking rule every place that shows a manifest, an
//! object or a drift calls (the CLI's `reconcile --dry-run` text and JSON, the dashboard's drift
//! view and YAML popup, the engine's drift records).
//!
//! The rule is `kubectl diff`'s (`Masker` in `k8s.io/kubectl/pkg/cmd/diff/diff.go`), applied to
//! both `data` and `stringData` of a core `v1` Secret: every value becomes `***`; where a key is
//! on both sides with different values, the sides read `*** (before)` and `*** (after)`, so a
//! change stays visible without its content. Keys themselves stay (they name what changed). The
//! functions are pure and idempotent: masking a masked value gives it back unchanged.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// What every secret value is replaced with.
pub const MASK: &str = "***";
/// The old side of a changed value.
pub const MASK_BEFORE: &str = "*** (before)";
/// The new side of a changed value.
pub const MASK_AFTER: &str = "*** (after)";

/// The object fields whose values are secret.
const SECRET_FIELDS: [&str; 2] = ["data", "stringData"];

/// Whether `kind` (as the engine writes it: `Kind` for core kinds, `group/Kind` otherwise, or
/// the `apiVersion`-qualified `v1/Secret`) names the core Secret kind.
pub fn is_secret_kind(kind: &str) -> bool {
    kind == "Secret" || kind == "v1/Secret"
}

/// Whether `obj` is a core `v1` Secret (by its `kind` and `apiVersion`; a missing `apiVersion`
/// counts as `v1`, as a payload manifest without one is not applied anyway).
pub fn is_secret(obj: &Value) -> bool {
    obj.get("kind").and_then(Value::as_str) == Some("Secret")
        && obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_none_or(|v| v == "v1")
}

/// One secret value pair, masked: `(***, ***)` when equal (or one side absent), `(*** (before),
/// *** (after))` when both are present and differ. An absent side stays absent.
fn mask_leaf(from: Option<&Value>, to: Option<&Value>) -> (Option<Value>, Option<Value>) {
    let m = |s: &str| Some(Value::String(s.to_owned()));
    match (from, to) {
        (Some(a), Some(b)) if a != b => (m(MASK_BEFORE), m(MASK_AFTER)),
        (a, b) => (a.and(m(MASK)), b.and(m(MASK))),
    }
}

/// Two `data` maps masked key by key ([`mask_leaf`]); a side that is not a map (e.g. `null`)
/// is masked as one value.
fn mask_maps(from: Option<&Value>, to: Option<&Value>) -> (Option<Value>, Option<Value>) {
    let as_map = |v: Option<&Value>| v.and_then(Value::as_object).cloned();
    match (as_map(from), as_map(to)) {
        (Some(_), _) | (_, Some(_)) => {
            let (mut a, mut b) = (as_map(from), as_map(to));
            let empty = Map::new();
            let keys: Vec<String> = a
                .as_ref()
                .unwrap_or(&empty)
                .keys()
                .chain(b.as_ref().unwrap_or(&empty).keys())
                .cloned()
                .collect();
            for k in keys {
                let (x, y) = mask_leaf(
                    a.as_ref().and_then(|m| m.get(&k)),
                    b.as_ref().and_then(|m| m.get(&k)),
                );
                if let (Some(m), Some(x)) = (a.as_mut(), x) {
                    m.insert(k.clone(), x);
                }
                if let (Some(m), Some(y)) = (b.as_mut(), y) {
                    m.insert(k, y);
                }
            }
            (
                a.map(Value::Object)
                    .or_else(|| from.and(Some(Value::String(MASK.into())))),
                b.map(Value::Object)
                    .or_else(|| to.and(Some(Value::String(MASK.into())))),
            )
        }
        _ => mask_leaf(from, to),
    }
}

/// Masks the Secret values of two versions of one object (either may be absent: a create or a
/// delete), as `kubectl diff` shows them. Objects that are not Secrets come back unchanged.
pub fn mask_secret_pair(before: Option<&Value>, after: Option<&Value>) -> (Option<Value>, Option<Value>) {
    if !before.is_some_and(is_secret) && !after.is_some_and(is_secret) {
        return (before.cloned(), after.cloned());
    }
    let (mut a, mut b) = (before.cloned(), after.cloned());
    for field in SECRET_FIELDS {
        let (x, y) = mask_maps(
            before.and_then(|v| v.get(field)),
            after.and_then(|v| v.get(field)),
        );
        if let (Some(Value::Object(o)), Some(x)) = (a.as_mut(), x) {
            o.insert(field.to_owned(), x);
        }
        if let (Some(Value::Object(o)), Some(y)) = (b.as_mut(), y) {
            o.insert(field.to_owned(), y);
        }
    }
    (a, b)
}

/// One object with its Secret values masked (borrowed unchanged when it is not a Secret).
pub fn mask_secret(obj: &Value) -> Cow<'_, Value> {
    if !is_secret(obj) {
        return Cow::Borrowed(obj);
    }
    Cow::Owned(mask_secret_pair(None, Some(obj)).1.unwrap_or(Value::Null))
}

/// One changed field of an object of `kind` (see [`is_secret_kind`]), masked: `path` is the
/// field's path from the object root as the drift writes it (`.data.password`, `.stringData`,
/// or `.` for the whole object). Fields of other kinds, and Secret fields outside `data` and
/// `stringData`, come back unchanged.
pub fn mask_secret_field(
    kind: &str,
    path: &str,
    from: Option<&Value>,
    to: Option<&Value>,
) -> (Option<Value>, Option<Value>) {
    if !is_secret_kind(kind) {
        return (from.cloned(), to.cloned());
    }
    if path == "." || path.is_empty() {
        return mask_secret_pair(from, to);
    }
    for field in SECRET_FIELDS {
        let Some(rest) = path.strip_prefix('.').and_then(|p| p.strip_prefix(field)) else {
            continue;
        };
        if rest.is_empty() {
            return mask_maps(from, to);
        }
        if rest.starts_with('.') || rest.starts_with('[') {
            return mask_leaf(from, to);
        }
    }
    (from.cloned(), to.cloned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secret(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"},
               "type": "Opaque", "data": data, "stringData": {"token": "t0p"}})
    }

    #[test]
    fn one_object_shows_keys_not_values() {
        let s = secret(json!({"password": "aHVudGVyMg==", "user": "YWRtaW4="}));
        let m = mask_secret(&s);
        assert_eq!(m["data"], json!({"password": "***", "user": "***"}));
        assert_eq!(m["stringData"], json!({"token": "***"}));
        assert_eq!(m["type"], "Opaque");
        assert_eq!(m["metadata"]["name"], "s");
        assert!(!m.to_string().contains("aHVudGVyMg"));
        // Idempotent, and other kinds untouched (borrowed).
        assert_eq!(mask_secret(&m), m);
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}});
        assert!(matches!(mask_secret(&cm), Cow::Borrowed(_)));
    }

    #[test]
    fn a_pair_marks_changed_values_as_kubectl_diff_does() {
        let a = secret(json!({"same": "MQ==", "changed": "Mg==", "gone": "Mw=="}));
        let b = secret(json!({"same": "MQ==", "changed": "NA==", "new": "NQ=="}));
        let (x, y) = mask_secret_pair(Some(&a), Some(&b));
        let (x, y) = (x.expect("before"), y.expect("after"));
        assert_eq!(
            x["data"],
            json!({"same": "***", "changed": "*** (before)", "gone": "***"})
        );
        assert_eq!(
            y["data"],
            json!({"same": "***", "changed": "*** (after)", "new": "***"})
        );
        // A create: one side.
        let (x, y) = mask_secret_pair(None, Some(&b));
        assert_eq!(
            (x, y.map(|v| v["data"]["new"].clone())),
            (None, Some(json!("***")))
        );
    }

    #[test]
    fn drift_fields_are_masked_by_path() {
        let (f, t) = mask_secret_field(
            "Secret",
            ".data.password",
            Some(&json!("YQ==")),
            Some(&json!("Yg==")),
        );
        assert_eq!((f, t), (Some(json!(MASK_BEFORE)), Some(json!(MASK_AFTER))));
        let (f, t) = mask_secret_field("Secret", ".stringData.token", None, Some(&json!("x")));
        assert_eq!((f, t), (None, Some(json!(MASK))));
        let (f, t) = mask_secret_field("Secret", ".data", None, Some(&json!({"a": "YQ=="})));
        assert_eq!((f, t), (None, Some(json!({"a": MASK}))));
        // Not secret: a label of a Secret, a ConfigMap's data, a field named like data.
        let v = Some(json!("x"));
        assert_eq!(
            mask_secret_field("Secret", ".metadata.labels.a", None, v.as_ref()).1,
            v
        );
        assert_eq!(mask_secret_field("ConfigMap", ".data.a", None, v.as_ref()).1, v);
        assert_eq!(mask_secret_field("Secret", ".database", None, v.as_ref()).1, v);
        // Idempotent on a masked change.
        let (f, t) = mask_secret_field(
            "Secret",
            ".data.p",
            Some(&json!(MASK_BEFORE)),
            Some(&json!(MASK_AFTER)),
        );
        assert_eq!((f, t), (Some(json!(MASK_BEFORE)), Some(json!(MASK_AFTER))));
    }
}
