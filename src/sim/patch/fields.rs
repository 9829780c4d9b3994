//! Field sets (what a field manager owns) and their `FieldsV1` form in
//! `metadata.managedFields` (upstream `sigs.k8s.io/structured-merge-diff` `fieldpath`).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::strategic::{ListStrategy, list_strategy};
use crate::sim::store::ResourceType;

/// Field paths as `FieldsV1` spells their elements: `f:<field>`, `k:<json key object>`,
/// `v:<json value>`.
pub type FieldPath = Vec<String>;

/// A set of field paths: what one manager owns.
pub type FieldSet = BTreeSet<FieldPath>;

/// The fields of `v`: every leaf (scalar, atomic list, empty map) and every item of keyed
/// lists and sets, under `prefix`. `names` are the field names leading to `v`.
fn collect(v: &Value, crd: bool, names: &mut Vec<String>, prefix: &mut FieldPath, out: &mut FieldSet) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                prefix.push(format!("f:{k}"));
                let container = match child {
                    Value::Object(c) => !c.is_empty(),
                    Value::Array(_) => {
                        list_strategy(names.last().map(String::as_str), k, crd) != ListStrategy::Atomic
                    }
                    _ => false,
                };
                if container {
                    names.push(k.clone());
                    collect(child, crd, names, prefix, out);
                    names.pop();
                } else {
                    out.insert(prefix.clone());
                }
                prefix.pop();
            }
        }
        Value::Array(items) => {
            let field = names.last().map(String::as_str).unwrap_or_default();
            let parent = names.len().checked_sub(2).map(|i| names[i].as_str());
            match list_strategy(parent, field, crd) {
                ListStrategy::Set => {
                    for i in items {
                        prefix.push(format!("v:{i}"));
                        out.insert(prefix.clone());
                        prefix.pop();
                    }
                }
                ListStrategy::Keyed(key) => {
                    for i in items {
                        let k = json!({ key: i.get(key).cloned().unwrap_or(Value::Null) });
                        prefix.push(format!("k:{k}"));
                        out.insert(prefix.clone());
                        collect(i, crd, names, prefix, out);
                        prefix.pop();
                    }
                }
                ListStrategy::Atomic => {
                    out.insert(prefix.clone());
                }
            }
        }
        _ => {
            out.insert(prefix.clone());
        }
    }
}

/// Which part of an object a field manager entry covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The main resource (without `status` when the kind has a status subresource).
    Main,
    /// The `/status` subresource.
    Status,
}

/// The managed fields of `obj` for `part` of kind `t`: system metadata (`name`, `uid`,
/// `resourceVersion`, `managedFields`, ...) is never managed.
pub fn fields_of(t: &ResourceType, obj: &Value, part: Part) -> FieldSet {
    let mut v = obj.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("apiVersion");
        o.remove("kind");
        match part {
            Part::Main if t.status_subresource => {
                o.remove("status");
            }
            Part::Main => {}
            Part::Status => o.retain(|k, _| k == "status"),
        }
        if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            for f in [
                "name",
                "namespace",
                "uid",
                "resourceVersion",
                "generation",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "managedFields",
                "selfLink",
                "generateName",
            ] {
                m.remove(f);
            }
            if m.is_empty() {
                o.remove("metadata");
            }
        }
    }
    let mut out = FieldSet::new();
    collect(&v, t.crd.is_some(), &mut Vec::new(), &mut Vec::new(), &mut out);
    out.remove(&Vec::new());
    out
}

/// The value at `path` in `v`.
pub fn value_at<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut cur = v;
    for e in path {
        cur = if let Some(f) = e.strip_prefix("f:") {
            cur.get(f)?
        } else if let Some(k) = e.strip_prefix("k:") {
            let key: Map<String, Value> = serde_json::from_str(k).ok()?;
            cur.as_array()?
                .iter()
                .find(|i| key.iter().all(|(kk, kv)| i.get(kk) == Some(kv)))?
        } else if let Some(x) = e.strip_prefix("v:") {
            let want: Value = serde_json::from_str(x).ok()?;
            cur.as_array()?.iter().find(|i| **i == want)?
        } else {
            return None;
        };
    }
    Some(cur)
}

/// Removes the field at `path` from `v` (a map entry or a list item).
pub(super) fn remove_at(v: &mut Value, path: &[String]) {
    let Some((last, parent)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for e in parent {
        let next = if let Some(f) = e.strip_prefix("f:") {
            cur.get_mut(f)
        } else if let Some(k) = e.strip_prefix("k:") {
            let Ok(key) = serde_json::from_str::<Map<String, Value>>(k) else {
                return;
            };
            cur.as_array_mut().and_then(|a| {
                a.iter_mut()
                    .find(|i| key.iter().all(|(kk, kv)| i.get(kk) == Some(kv)))
            })
        } else {
            None
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    if let Some(f) = last.strip_prefix("f:") {
        if let Some(m) = cur.as_object_mut() {
            m.remove(f);
        }
    } else if let Some(k) = last.strip_prefix("k:") {
        if let (Ok(key), Some(a)) = (serde_json::from_str::<Map<String, Value>>(k), cur.as_array_mut()) {
            a.retain(|i| !key.iter().all(|(kk, kv)| i.get(kk) == Some(kv)));
        }
    } else if let Some(x) = last.strip_prefix("v:")
        && let (Ok(want), Some(a)) = (serde_json::from_str::<Value>(x), cur.as_array_mut())
    {
        a.retain(|i| *i != want);
    }
}

/// `FieldsV1` JSON of a field set: nested objects keyed by path element, `".": {}` marking
/// an element that is itself owned and has owned children.
pub fn to_fields_v1(set: &FieldSet) -> Value {
    let mut root = json!({});
    for path in set {
        let mut cur = &mut root;
        for e in path {
            let Some(m) = cur.as_object_mut() else {
                break;
            };
            cur = m.entry(e.clone()).or_insert_with(|| json!({}));
        }
    }
    for path in set {
        if let Some(node) = value_at_fields(&mut root, path)
            && node
                .as_object()
                .is_some_and(|m| !m.is_empty() && !m.contains_key("."))
            && let Some(m) = node.as_object_mut()
        {
            m.insert(".".into(), json!({}));
        }
    }
    root
}

fn value_at_fields<'a>(root: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut cur = root;
    for e in path {
        cur = cur.get_mut(e)?;
    }
    Some(cur)
}

/// The field set a `FieldsV1` object describes.
pub fn from_fields_v1(v: &Value) -> FieldSet {
    fn walk(v: &Value, prefix: &mut FieldPath, out: &mut FieldSet) {
        let Some(m) = v.as_object() else {
            return;
        };
        for (k, child) in m {
            if k == "." {
                continue;
            }
            prefix.push(k.clone());
            let children = child
                .as_object()
                .map_or(0, |c| c.keys().filter(|k| *k != ".").count());
            if children == 0 || child.get(".").is_some() {
                out.insert(prefix.clone());
            }
            walk(child, prefix, out);
            prefix.pop();
        }
    }
    let mut out = FieldSet::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

/// `.data.a`, `.spec.containers[name="c"].image`: a path as apply conflicts print it.
pub fn path_string(path: &[String]) -> String {
    let mut s = String::new();
    for e in path {
        if let Some(f) = e.strip_prefix("f:") {
            s.push('.');
            s.push_str(f);
        } else if let Some(k) = e.strip_prefix("k:") {
            let key: Map<String, Value> = serde_json::from_str(k).unwrap_or_default();
            let parts: Vec<String> = key.iter().map(|(kk, kv)| format!("{kk}={kv}")).collect();
            s.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(x) = e.strip_prefix("v:") {
            s.push_str(&format!("[={x}]"));
        }
    }
    s
}
