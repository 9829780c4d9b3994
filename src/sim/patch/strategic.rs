//! Strategic merge patch (upstream `k8s.io/apimachinery/pkg/util/strategicpatch`) and the
//! merge-key table of the built-in kinds' list fields.

use serde_json::{Map, Value, json};

use crate::sim::store::ApiError;

/// How a list field merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListStrategy {
    /// Replaced whole.
    Atomic,
    /// A set of scalars, merged by value (`metadata.finalizers`).
    Set,
    /// A map keyed by this field of its items.
    Keyed(&'static str),
}

/// The merge strategy of list field `field` whose enclosing list field (or map field) is
/// `parent`, for built-in kinds (`crd` false) or CRD-defined kinds. From the
/// `patchStrategy`/`patchMergeKey` tags of k8s.io/api.
pub fn list_strategy(parent: Option<&str>, field: &str, crd: bool) -> ListStrategy {
    use ListStrategy::{Atomic, Keyed, Set};
    match (parent, field) {
        (Some("metadata"), "finalizers") => return Set,
        (Some("metadata"), "ownerReferences") => return Keyed("uid"),
        _ if crd => return Atomic,
        _ => {}
    }
    match (parent, field) {
        (_, "containers" | "initContainers" | "ephemeralContainers") => Keyed("name"),
        (Some("containers" | "initContainers" | "ephemeralContainers"), "ports") => Keyed("containerPort"),
        (_, "ports") => Keyed("port"),
        (_, "env" | "volumes" | "imagePullSecrets" | "webhooks" | "resourceClaims") => Keyed("name"),
        (_, "volumeMounts") => Keyed("mountPath"),
        (_, "volumeDevices") => Keyed("devicePath"),
        (_, "hostAliases") => Keyed("ip"),
        (_, "conditions" | "addresses") => Keyed("type"),
        (_, "topologySpreadConstraints") => Keyed("topologyKey"),
        _ => Atomic,
    }
}

fn is_directive(k: &str) -> bool {
    k.starts_with('$')
}

/// A copy of `v` without strategic merge directives (`$patch`, `$retainKeys`, ...).
fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !is_directive(k))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .filter(|i| i.get("$patch").is_none())
                .map(strip_directives)
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Applies a strategic merge patch to `target` (a built-in kind's object): maps merge,
/// `null` deletes, keyed lists merge item by item, sets union, other lists are replaced.
/// Directives: `$patch: replace|delete` in maps and list items, `$retainKeys`,
/// `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`. Merged lists are ordered as
/// kube-apiserver orders them (see `normalize_order`).
///
/// # Errors
/// `400 BadRequest` for an unknown `$patch` value or a non-object patch.
pub fn strategic_merge(target: &mut Value, patch: &Value) -> Result<(), ApiError> {
    let p = patch
        .as_object()
        .ok_or_else(|| ApiError::bad_request("strategic merge patch is not a JSON object"))?;
    smp_map(target, p, &mut Vec::new())
}

fn smp_map(target: &mut Value, patch: &Map<String, Value>, path: &mut Vec<String>) -> Result<(), ApiError> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            *target = strip_directives(&Value::Object(patch.clone()));
            return Ok(());
        }
        Some("delete") => {
            *target = Value::Null;
            return Ok(());
        }
        Some("merge") | None => {}
        Some(other) => return Err(ApiError::bad_request(format!("Unknown patch type: {other}"))),
    }
    if !target.is_object() {
        *target = json!({});
    }
    let Some(t) = target.as_object_mut() else {
        return Ok(());
    };
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            let drop = v.as_array().cloned().unwrap_or_default();
            if let Some(list) = t.get_mut(field).and_then(Value::as_array_mut) {
                list.retain(|x| !drop.contains(x));
            }
            continue;
        }
        if let Some(field) = k.strip_prefix("$setElementOrder/")
            && !patch.contains_key(field)
            && let (Some(order), Some(list)) = (v.as_array(), t.get_mut(field))
            && list.is_array()
        {
            // Only the order changes.
            path.push(field.to_owned());
            smp_list(list, &[], path, Some(order))?;
            path.pop();
            continue;
        }
        if is_directive(k) {
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        path.push(k.clone());
        match v {
            Value::Object(pm) => {
                let entry = t.entry(k.clone()).or_insert(Value::Null);
                smp_map(entry, pm, path)?;
                if entry.is_null() {
                    t.remove(k);
                }
            }
            Value::Array(pa) => {
                let entry = t.entry(k.clone()).or_insert(Value::Null);
                let order = patch
                    .get(&format!("$setElementOrder/{k}"))
                    .and_then(Value::as_array);
                smp_list(entry, pa, path, order.map(Vec::as_slice))?;
            }
            other => {
                t.insert(k.clone(), other.clone());
            }
        }
        path.pop();
    }
    if let Some(keep) = patch.get("$retainKeys").and_then(Value::as_array) {
        t.retain(|k, _| keep.iter().any(|x| x == k.as_str()));
    }
    Ok(())
}

fn smp_list(
    target: &mut Value,
    patch: &[Value],
    path: &mut Vec<String>,
    set_order: Option<&[Value]>,
) -> Result<(), ApiError> {
    let field = path.last().map(String::as_str).unwrap_or_default();
    let parent = path.len().checked_sub(2).map(|i| path[i].as_str());
    let strategy = list_strategy(parent, field, false);
    let replace = patch
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"));
    if strategy == ListStrategy::Atomic && patch.is_empty() && set_order.is_some() {
        return Ok(());
    }
    if replace || strategy == ListStrategy::Atomic || !target.is_array() {
        *target = strip_directives(&Value::Array(patch.to_vec()));
        return Ok(());
    }
    let original: Vec<Value> = target.as_array().cloned().unwrap_or_default();
    let order = set_order.map(<[Value]>::to_vec);
    let Some(items) = target.as_array_mut() else {
        return Ok(());
    };
    match strategy {
        ListStrategy::Set => {
            for v in patch {
                if !items.contains(v) {
                    items.push(v.clone());
                }
            }
            let order = order.unwrap_or_else(|| patch.to_vec());
            *items = normalize_order(std::mem::take(items), &order, &original, |v| Some(v.clone()));
        }
        ListStrategy::Keyed(key) => {
            for p in patch {
                let Some(pm) = p.as_object() else {
                    continue;
                };
                let Some(kv) = pm.get(key) else {
                    return Err(ApiError::bad_request(format!(
                        "map: {p} does not contain declared merge key: {key}"
                    )));
                };
                let pos = items.iter().position(|i| i.get(key) == Some(kv));
                if pm.get("$patch").and_then(Value::as_str) == Some("delete") {
                    if let Some(i) = pos {
                        items.remove(i);
                    }
                    continue;
                }
                match pos {
                    Some(i) => smp_map(&mut items[i], pm, path)?,
                    None => {
                        let mut new = json!({});
                        smp_map(&mut new, pm, path)?;
                        items.push(new);
                    }
                }
            }
            let order = order.unwrap_or_else(|| {
                patch
                    .iter()
                    .filter(|p| p.get("$patch").and_then(Value::as_str) != Some("delete"))
                    .cloned()
                    .collect()
            });
            let k = |v: &Value| v.get(key).cloned();
            *items = normalize_order(std::mem::take(items), &order, &original, k);
        }
        ListStrategy::Atomic => {}
    }
    Ok(())
}

/// The order kube-apiserver gives a merged list (`normalizeElementOrder` and
/// `mergeSortedSlice` in `k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`): the items
/// named in the patch (or its `$setElementOrder`) in the patch's order, the others in their
/// original order, interleaved so that two items both in the original keep its order; an item
/// new to the list goes before the original items it is compared with.
fn normalize_order(
    merged: Vec<Value>,
    patch_order: &[Value],
    original: &[Value],
    key: impl Fn(&Value) -> Option<Value>,
) -> Vec<Value> {
    let index = |list: &[Value], v: &Value| -> Option<usize> {
        let k = key(v)?;
        list.iter().position(|x| key(x).as_ref() == Some(&k))
    };
    let (mut from_patch, server_only): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|v| index(patch_order, v).is_some());
    from_patch.sort_by_key(|v| index(patch_order, v));
    let mut out = Vec::with_capacity(from_patch.len() + server_only.len());
    let (mut left, mut right) = (
        server_only.into_iter().peekable(),
        from_patch.into_iter().peekable(),
    );
    loop {
        match (left.peek(), right.peek()) {
            (Some(l), Some(r)) => {
                let take_left = matches!(
                    (index(original, l), index(original, r)),
                    (Some(li), Some(ri)) if li < ri
                );
                let next = if take_left { left.next() } else { right.next() };
                out.extend(next);
            }
            (Some(_), None) => out.extend(left.next()),
            (None, Some(_)) => out.extend(right.next()),
            (None, None) => break,
        }
    }
    out
}
