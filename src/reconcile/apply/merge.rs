//! Merge primitives and ObjectMeta merge ("ensure" semantics of upstream
//! `lib/resourcemerge/generic.go` and `objectmeta.go`).
//!
//! Every function takes the live object ("existing") mutably and the manifest ("required"), and
//! sets `*modified = true` when it changed `existing`. Fields the manifest leaves unset keep the
//! live value unless a rule says otherwise; defaulted fields compare a missing value as the
//! server default, so an object the server filled with defaults stays unmodified.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use serde_json::Value;

/// Whether `v` is the zero value kube-apiserver omits from a built-in object (Go `omitempty` on a
/// value field): `null`, `false`, `0`, `""`, `[]` or `{}`.
pub(crate) fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// JSON equality where a key absent on one side equals a zero value ([`is_zero`]) on the other,
/// at every depth: how upstream's merges see the Go types, whose zero `omitempty` fields the
/// server leaves out (a PriorityClass's `globalDefault: false` comes back absent). List
/// elements compare position by position.
pub(crate) fn equal_absent_as_zero(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.iter().all(|(k, v)| {
                y.get(k)
                    .map_or_else(|| is_zero(v), |w| equal_absent_as_zero(v, w))
            }) && y.iter().all(|(k, w)| x.contains_key(k) || is_zero(w))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| equal_absent_as_zero(v, w))
        }
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b || (is_zero(a) && is_zero(b)),
    }
}

/// Replaces `existing` with `required` when they differ.
pub fn set<T: PartialEq + Clone>(modified: &mut bool, existing: &mut T, required: &T) {
    if existing != required {
        *existing = required.clone();
        *modified = true;
    }
}

/// Replaces `existing` with `required` only when `required` is set and differs
/// (upstream `setStringIfSet`, `setInt32PtrIfSet`...). An empty string counts as unset.
pub(crate) fn set_if_set<T: PartialEq + Clone + IsEmpty>(
    modified: &mut bool,
    existing: &mut Option<T>,
    required: &Option<T>,
) {
    if let Some(r) = required
        && !r.is_empty()
        && existing.as_ref() != Some(r)
    {
        *existing = Some(r.clone());
        *modified = true;
    }
}

/// Sets `existing` to `required` or, when the manifest leaves it unset, to `default`; a missing
/// live value counts as `default` (the server fills it in), so neither side's omission is a change.
pub(crate) fn set_defaulted<T: PartialEq + Clone>(
    modified: &mut bool,
    existing: &mut Option<T>,
    required: &Option<T>,
    default: T,
) {
    let want = required.clone().unwrap_or_else(|| default.clone());
    let have = existing.clone().unwrap_or(default);
    if have != want {
        *existing = Some(want);
        *modified = true;
    }
}

/// Whether a value counts as unset for `set_if_set`.
pub(crate) trait IsEmpty {
    /// True for the empty value.
    fn is_empty(&self) -> bool;
}
impl IsEmpty for String {
    fn is_empty(&self) -> bool {
        String::is_empty(self)
    }
}
impl IsEmpty for i32 {
    fn is_empty(&self) -> bool {
        false
    }
}
impl IsEmpty for i64 {
    fn is_empty(&self) -> bool {
        false
    }
}
impl IsEmpty for bool {
    fn is_empty(&self) -> bool {
        false
    }
}

/// Replaces an optional list when the two differ, an absent list counting as empty.
pub(crate) fn set_list<T: PartialEq + Clone>(
    modified: &mut bool,
    existing: &mut Option<Vec<T>>,
    required: &Option<Vec<T>>,
) {
    let r = required.as_deref().unwrap_or_default();
    let e = existing.as_deref().unwrap_or_default();
    if r != e {
        *existing = if r.is_empty() { None } else { Some(r.to_vec()) };
        *modified = true;
    }
}

/// Key-merges `required` into `existing` (upstream `mergeMap`): each required key is set; live
/// keys the manifest does not name are kept; a required key ending in `-` removes that key
/// without the dash.
pub(crate) fn merge_map<V: PartialEq + Clone>(
    modified: &mut bool,
    existing: &mut Option<BTreeMap<String, V>>,
    required: &Option<BTreeMap<String, V>>,
) {
    let Some(req) = required else { return };
    for (k, v) in req {
        if let Some(stripped) = k.strip_suffix('-') {
            if let Some(e) = existing.as_mut()
                && e.remove(stripped).is_some()
            {
                *modified = true;
            }
            continue;
        }
        let e = existing.get_or_insert_with(BTreeMap::new);
        if e.get(k) != Some(v) {
            e.insert(k.clone(), v.clone());
            *modified = true;
        }
    }
}

/// Merges owner references by UID (upstream `lib/resourcemerge/meta.go` `mergeOwnerRefs`, test
/// `TestMergeOwnerRefs`): a required ref whose UID the live object lists but with other content
/// replaces it; a missing one is appended; other live refs are kept.
pub fn merge_owner_refs(
    modified: &mut bool,
    existing: &mut Option<Vec<OwnerReference>>,
    required: &Option<Vec<OwnerReference>>,
) {
    let Some(req) = required else { return };
    for r in req {
        let e = existing.get_or_insert_with(Vec::new);
        match e.iter_mut().find(|o| o.uid == r.uid) {
            Some(o) if o != r => {
                *o = r.clone();
                *modified = true;
            }
            Some(_) => {}
            None => {
                e.push(r.clone());
                *modified = true;
            }
        }
    }
}

/// Ensures ObjectMeta (upstream `EnsureObjectMeta`): namespace and name if set, labels and
/// annotations key-merged, owner references merged by UID.
pub(crate) fn ensure_object_meta(modified: &mut bool, existing: &mut ObjectMeta, required: &ObjectMeta) {
    set_if_set(modified, &mut existing.namespace, &required.namespace);
    set_if_set(modified, &mut existing.name, &required.name);
    merge_map(modified, &mut existing.labels, &required.labels);
    merge_map(modified, &mut existing.annotations, &required.annotations);
    merge_owner_refs(
        modified,
        &mut existing.owner_references,
        &required.owner_references,
    );
}

/// Like [`ensure_object_meta`] for optional metadata (pod templates, job templates).
pub(crate) fn ensure_object_meta_opt(
    modified: &mut bool,
    existing: &mut Option<ObjectMeta>,
    required: &Option<ObjectMeta>,
) {
    if let Some(r) = required {
        ensure_object_meta(modified, existing.get_or_insert_with(Default::default), r);
    }
}

/// A label selector with empty maps/lists normalised away, for comparison.
pub(crate) fn normalize_selector(s: &LabelSelector) -> LabelSelector {
    LabelSelector {
        match_labels: s.match_labels.clone().filter(|m| !m.is_empty()),
        match_expressions: s.match_expressions.clone().filter(|m| !m.is_empty()),
    }
}

/// Replaces the live selector when it differs from the manifest's (empty maps equal absent).
pub(crate) fn ensure_selector(modified: &mut bool, existing: &mut LabelSelector, required: &LabelSelector) {
    let r = normalize_selector(required);
    if normalize_selector(existing) != r {
        *existing = r;
        *modified = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oref(uid: &str, controller: Option<bool>) -> OwnerReference {
        OwnerReference {
            api_version: "v1".into(),
            kind: "Thing".into(),
            name: format!("n-{uid}"),
            uid: uid.into(),
            controller,
            block_owner_deletion: None,
        }
    }

    #[test]
    fn merge_map_keeps_extra_keys_and_removes_dash_suffixed() {
        let mut m = false;
        let mut e = Some(BTreeMap::from([
            ("a".to_owned(), "1".to_owned()),
            ("b".into(), "2".into()),
        ]));
        merge_map(
            &mut m,
            &mut e,
            &Some(BTreeMap::from([("a".to_owned(), "1".to_owned())])),
        );
        assert!(!m);
        merge_map(
            &mut m,
            &mut e,
            &Some(BTreeMap::from([
                ("b-".to_owned(), String::new()),
                ("c".into(), "3".into()),
            ])),
        );
        assert!(m);
        assert_eq!(
            e,
            Some(BTreeMap::from([
                ("a".to_owned(), "1".to_owned()),
                ("c".into(), "3".into())
            ]))
        );
    }

    #[test]
    fn owner_refs_merge_by_uid() {
        let mut m = false;
        let mut e = Some(vec![oref("uid-2", None), oref("uid-3", None)]);
        merge_owner_refs(&mut m, &mut e, &Some(vec![oref("uid-1", None)]));
        assert!(m);
        let uids: Vec<_> = e.iter().flatten().map(|o| o.uid.as_str()).collect();
        assert_eq!(uids, ["uid-2", "uid-3", "uid-1"]);
    }

    #[test]
    fn absent_equals_zero_at_every_depth() {
        use serde_json::json;
        assert!(equal_absent_as_zero(
            &json!({"value": 5}),
            &json!({"value": 5, "globalDefault": false})
        ));
        assert!(equal_absent_as_zero(
            &json!({"spec": {"a": {}}}),
            &json!({"spec": {"a": {"b": "", "c": 0, "d": [], "e": null}}})
        ));
        assert!(equal_absent_as_zero(
            &json!([{"x": 1}]),
            &json!([{"x": 1, "y": false}])
        ));
        assert!(!equal_absent_as_zero(
            &json!({"value": 5}),
            &json!({"value": 5, "globalDefault": true})
        ));
        assert!(!equal_absent_as_zero(&json!({"a": {"b": 1}}), &json!({"a": {}})));
        assert!(!equal_absent_as_zero(&json!([1]), &json!([1, 0])));
        assert!(!equal_absent_as_zero(&json!("x"), &json!("y")));
        assert!(equal_absent_as_zero(&json!(1), &json!(1.0)));
    }

    #[test]
    fn defaulted_fields_treat_missing_as_default() {
        let mut m = false;
        let mut e: Option<i32> = None;
        set_defaulted(&mut m, &mut e, &Some(1), 1);
        assert!(!m);
        assert_eq!(e, None);
        set_defaulted(&mut m, &mut e, &Some(2), 1);
        assert!(m);
        assert_eq!(e, Some(2));
    }
}
