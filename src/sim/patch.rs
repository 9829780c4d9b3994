//! Patch formats and field management, as kube-apiserver implements them:
//! - [`PatchType`]: JSON patch (RFC 6902) and JSON merge patch (RFC 7386), both through the
//!   `json-patch` crate, strategic merge patch (built-in kinds only; upstream
//!   `k8s.io/apimachinery/pkg/util/strategicpatch`), and server-side apply;
//! - [`FieldSet`] and [`managed_update`] / [`apply`]: `metadata.managedFields` entries
//!   (`FieldsV1`) per field manager and operation, apply conflicts and `force` (upstream
//!   `k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`, `sigs.k8s.io/structured-merge-diff`).
//!
//! List semantics come from one table ([`list_strategy`]) of the built-in kinds' patch merge
//! keys (`containers` by `name`, `ports` by `containerPort`, `conditions` by `type`, ...);
//! lists without an entry are atomic (replaced whole), as are all lists of CRD-defined kinds
//! except `metadata.finalizers` and `metadata.ownerReferences`.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::store::{ApiError, ResourceType};

/// A PATCH body format, from the request's `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json` (built-in kinds only).
    Strategic,
    /// `application/apply-patch+yaml`: server-side apply.
    Apply,
}

impl PatchType {
    /// The patch type of `content_type` for kind `t`.
    ///
    /// # Errors
    /// `415 UnsupportedMediaType` for another media type, or strategic merge on a CRD-defined
    /// kind (kube-apiserver's message lists the accepted types).
    pub fn from_content_type(content_type: &str, t: &ResourceType) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        let p = match media {
            "application/json-patch+json" => Self::Json,
            "application/merge-patch+json" => Self::Merge,
            "application/strategic-merge-patch+json" if t.crd.is_none() => Self::Strategic,
            "application/apply-patch+yaml" => Self::Apply,
            _ => {
                let strategic = if t.crd.is_none() {
                    "application/strategic-merge-patch+json, "
                } else {
                    ""
                };
                return Err(ApiError::new(
                    415,
                    "UnsupportedMediaType",
                    format!(
                        "the body of the request was in an unknown format - accepted media types include: \
                         application/json-patch+json, application/merge-patch+json, {strategic}\
                         application/apply-patch+yaml"
                    ),
                ));
            }
        };
        Ok(p)
    }
}

/// Applies an RFC 6902 JSON patch to `target`.
///
/// # Errors
/// `400 BadRequest` for a body that is not a JSON patch; `422 Invalid` when an operation
/// fails (missing path, failed `test`).
pub fn json_patch(target: &mut Value, body: &[u8]) -> Result<(), ApiError> {
    let p: json_patch::Patch = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    json_patch::patch(target, &p.0).map_err(|e| {
        ApiError::new(
            422,
            "Invalid",
            format!("the server rejected our request due to an error in our request: {e}"),
        )
    })
}

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
/// `$deleteFromPrimitiveList/<field>`; `$setElementOrder/<field>` is accepted and ignored.
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
                smp_list(entry, pa, path)?;
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

fn smp_list(target: &mut Value, patch: &[Value], path: &mut Vec<String>) -> Result<(), ApiError> {
    let field = path.last().map(String::as_str).unwrap_or_default();
    let parent = path.len().checked_sub(2).map(|i| path[i].as_str());
    let strategy = list_strategy(parent, field, false);
    let replace = patch
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"));
    if replace || strategy == ListStrategy::Atomic || !target.is_array() {
        *target = strip_directives(&Value::Array(patch.to_vec()));
        return Ok(());
    }
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
        }
        ListStrategy::Atomic => {}
    }
    Ok(())
}

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
fn remove_at(v: &mut Value, path: &[String]) {
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

/// One `metadata.managedFields` entry.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    subresource: String,
    time: Value,
    fields: FieldSet,
}

fn read_entries(obj: &Value) -> Vec<Entry> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| Entry {
                    manager: e["manager"].as_str().unwrap_or_default().to_owned(),
                    operation: e["operation"].as_str().unwrap_or_default().to_owned(),
                    api_version: e["apiVersion"].as_str().unwrap_or_default().to_owned(),
                    subresource: e["subresource"].as_str().unwrap_or_default().to_owned(),
                    time: e["time"].clone(),
                    fields: from_fields_v1(&e["fieldsV1"]),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn write_entries(obj: &mut Value, entries: &[Entry]) {
    let list: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut v = json!({
                "manager": e.manager, "operation": e.operation, "apiVersion": e.api_version,
                "time": e.time, "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(&e.fields),
            });
            if !e.subresource.is_empty() {
                v["subresource"] = json!(e.subresource);
            }
            v
        })
        .collect();
    if list.is_empty() {
        if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("managedFields");
        }
    } else if obj.is_object() {
        obj["metadata"]["managedFields"] = Value::Array(list);
    }
}

fn now() -> Value {
    json!(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

fn subresource(part: Part) -> &'static str {
    match part {
        Part::Main => "",
        Part::Status => "status",
    }
}

/// Records an `Update` by `manager` that turned `old` (`None` on create) into `new`: the
/// manager takes the fields whose value changed, other managers lose them, and fields gone
/// from the object leave every set. Writes `new.metadata.managedFields`.
pub fn managed_update(t: &ResourceType, old: Option<&Value>, new: &mut Value, manager: &str, part: Part) {
    let mut entries = old.map(read_entries).unwrap_or_default();
    let present = fields_of(t, new, part);
    let changed: FieldSet = present
        .iter()
        .filter(|p| old.is_none_or(|o| value_at(o, p) != value_at(new, p)))
        .cloned()
        .collect();
    let sub = subresource(part);
    for e in &mut entries {
        if e.subresource == sub {
            e.fields.retain(|p| present.contains(p));
            if !(e.manager == manager && e.operation == "Update") {
                e.fields.retain(|p| !changed.contains(p));
            }
        }
    }
    if !changed.is_empty() {
        let pos = entries
            .iter()
            .position(|e| e.manager == manager && e.operation == "Update" && e.subresource == sub);
        let e = match pos {
            Some(i) => &mut entries[i],
            None => {
                entries.push(Entry {
                    manager: manager.to_owned(),
                    operation: "Update".into(),
                    api_version: t.api_version(),
                    subresource: sub.into(),
                    time: now(),
                    fields: FieldSet::new(),
                });
                let last = entries.len() - 1;
                &mut entries[last]
            }
        };
        e.fields.extend(changed);
        e.time = now();
        e.api_version = t.api_version();
    }
    write_entries(new, &entries);
}

/// Merges an applied configuration into `current` the way server-side apply does: maps
/// merge, keyed lists and sets merge by item, other lists are replaced.
fn apply_merge(current: &mut Value, applied: &Value, crd: bool, names: &mut Vec<String>) {
    match (current.as_object_mut(), applied.as_object()) {
        (Some(c), Some(a)) => {
            for (k, av) in a {
                if av.is_null() {
                    c.remove(k);
                    continue;
                }
                let entry = c.entry(k.clone()).or_insert(Value::Null);
                if let (Value::Array(cur), Value::Array(items)) = (&mut *entry, av) {
                    match list_strategy(names.last().map(String::as_str), k, crd) {
                        ListStrategy::Set => {
                            for i in items {
                                if !cur.contains(i) {
                                    cur.push(i.clone());
                                }
                            }
                        }
                        ListStrategy::Keyed(key) => {
                            names.push(k.clone());
                            for i in items {
                                match cur.iter_mut().find(|x| x.get(key) == i.get(key)) {
                                    Some(x) => apply_merge(x, i, crd, names),
                                    None => cur.push(i.clone()),
                                }
                            }
                            names.pop();
                        }
                        ListStrategy::Atomic => *entry = av.clone(),
                    }
                    continue;
                }
                if entry.is_object() && av.is_object() {
                    names.push(k.clone());
                    apply_merge(entry, av, crd, names);
                    names.pop();
                } else {
                    *entry = av.clone();
                }
            }
        }
        _ => *current = applied.clone(),
    }
}

/// Server-side apply of `applied` by `manager` onto `current` (`None` when the object does
/// not exist yet). Returns the new object with its managedFields: the applier owns exactly
/// the applied fields; fields it applied before and no longer does are removed unless
/// another manager owns them.
///
/// # Errors
/// `409 Conflict` when, without `force`, another manager owns an applied field whose value
/// differs; the message names each manager and field as kube-apiserver does
/// (`Apply failed with 1 conflict: conflict with "m" using v1: .data.a`).
pub fn apply(
    t: &ResourceType,
    current: Option<&Value>,
    applied: &Value,
    manager: &str,
    part: Part,
    force: bool,
) -> Result<Value, ApiError> {
    let sub = subresource(part);
    let mine = fields_of(t, applied, part);
    let mut entries = current.map(read_entries).unwrap_or_default();
    let is_me = |e: &Entry| e.manager == manager && e.operation == "Apply" && e.subresource == sub;
    let mut conflicts: Vec<(String, FieldPath)> = Vec::new();
    if let Some(cur) = current {
        for e in entries.iter().filter(|e| !is_me(e) && e.subresource == sub) {
            for p in e.fields.intersection(&mine) {
                let leaf = p.last().is_some_and(|l| l.starts_with("f:"));
                if leaf && value_at(cur, p) != value_at(applied, p) {
                    let who = if e.operation == "Apply" {
                        format!("conflict with {:?}", e.manager)
                    } else {
                        format!("conflict with {:?} using {}", e.manager, e.api_version)
                    };
                    conflicts.push((who, p.clone()));
                }
            }
        }
    }
    if !conflicts.is_empty() && !force {
        let n = conflicts.len();
        let msg = if n == 1 {
            format!(
                "Apply failed with 1 conflict: {}: {}",
                conflicts[0].0,
                path_string(&conflicts[0].1)
            )
        } else {
            let mut m = format!("Apply failed with {n} conflicts: ");
            let lines: Vec<String> = conflicts
                .iter()
                .map(|(who, p)| format!("{who}: {}", path_string(p)))
                .collect();
            m.push_str(&lines.join("\n"));
            m
        };
        return Err(ApiError::new(409, "Conflict", msg));
    }
    let mut new = current.cloned().unwrap_or_else(|| json!({}));
    // Fields this manager applied before and drops now go, unless someone else owns them.
    if let Some(prev) = entries.iter().find(|e| is_me(e)) {
        let others: FieldSet = entries
            .iter()
            .filter(|e| !is_me(e))
            .flat_map(|e| e.fields.iter().cloned())
            .collect();
        let dropped: Vec<FieldPath> = prev
            .fields
            .iter()
            .filter(|p| !mine.contains(*p) && !others.contains(*p))
            .cloned()
            .collect();
        for p in dropped.iter().rev() {
            remove_at(&mut new, p);
        }
    }
    let mut body = applied.clone();
    if let Some(o) = body.as_object_mut() {
        match part {
            Part::Main if t.status_subresource => {
                o.remove("status");
            }
            Part::Main => {}
            Part::Status => o.retain(|k, _| k == "status" || k == "metadata"),
        }
    }
    apply_merge(&mut new, &body, t.crd.is_some(), &mut Vec::new());
    if force {
        let taken: FieldSet = conflicts.into_iter().map(|(_, p)| p).collect();
        for e in &mut entries {
            if !is_me(e) {
                e.fields.retain(|p| !taken.contains(p));
            }
        }
    }
    match entries.iter_mut().find(|e| is_me(e)) {
        Some(e) => {
            e.fields = mine;
            e.time = now();
            e.api_version = t.api_version();
        }
        None => entries.push(Entry {
            manager: manager.to_owned(),
            operation: "Apply".into(),
            api_version: t.api_version(),
            subresource: sub.into(),
            time: now(),
            fields: mine,
        }),
    }
    write_entries(&mut new, &entries);
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod_type() -> ResourceType {
        ResourceType {
            group: String::new(),
            version: "v1".into(),
            plural: "pods".into(),
            singular: "pod".into(),
            kind: "Pod".into(),
            short_names: vec![],
            namespaced: true,
            status_subresource: true,
            generation: true,
            crd: None,
        }
    }

    #[test]
    fn strategic_merge_uses_merge_keys_and_directives() -> Result<(), ApiError> {
        let mut pod = json!({"metadata": {"finalizers": ["a"]}, "spec": {"containers": [
            {"name": "app", "image": "x:1", "env": [{"name": "A", "value": "1"}], "ports": [{"containerPort": 80}]},
            {"name": "side", "image": "s:1"},
        ], "tolerations": [{"key": "k1"}]}});
        strategic_merge(
            &mut pod,
            &json!({"metadata": {"finalizers": ["b"]}, "spec": {"containers": [
                {"name": "app", "image": "x:2", "env": [{"name": "B", "value": "2"}], "ports": [{"containerPort": 443}]},
                {"name": "side", "$patch": "delete"},
            ], "tolerations": [{"key": "k2"}]}}),
        )?;
        assert_eq!(pod["metadata"]["finalizers"], json!(["a", "b"]));
        let c = &pod["spec"]["containers"];
        assert_eq!(c.as_array().map(Vec::len), Some(1));
        assert_eq!(c[0]["image"], "x:2");
        assert_eq!(
            c[0]["env"],
            json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
        );
        assert_eq!(
            c[0]["ports"],
            json!([{"containerPort": 80}, {"containerPort": 443}])
        );
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([{"key": "k2"}]),
            "tolerations are atomic"
        );
        strategic_merge(
            &mut pod,
            &json!({"spec": {"containers": [{"$patch": "replace"}, {"name": "only"}], "x": {"$patch": "replace", "y": 1}},
                    "$deleteFromPrimitiveList/metadata": [], "metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        )?;
        assert_eq!(pod["spec"]["containers"], json!([{"name": "only"}]));
        assert_eq!(pod["spec"]["x"], json!({"y": 1}));
        assert_eq!(pod["metadata"]["finalizers"], json!(["b"]));
        Ok(())
    }

    #[test]
    fn fields_v1_round_trips() {
        let t = pod_type();
        let pod = json!({"metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
        let set = fields_of(&t, &pod, Part::Main);
        let v1 = to_fields_v1(&set);
        assert_eq!(
            v1,
            json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:containers": {
                "k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}}}})
        );
        assert_eq!(from_fields_v1(&v1), set);
    }

    #[test]
    fn apply_conflicts_and_force() -> Result<(), ApiError> {
        let t = pod_type();
        let a = apply(
            &t,
            None,
            &json!({"spec": {"x": 1, "y": 1}}),
            "one",
            Part::Main,
            false,
        )?;
        let mut b = a.clone();
        b["spec"]["x"] = json!(2);
        managed_update(&t, Some(&a), &mut b, "editor", Part::Main);
        let again = apply(
            &t,
            Some(&b),
            &json!({"spec": {"x": 1, "y": 1}}),
            "one",
            Part::Main,
            false,
        );
        let e = again.expect_err("conflict");
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                409,
                "Apply failed with 1 conflict: conflict with \"editor\" using v1: .spec.x"
            )
        );
        let forced = apply(&t, Some(&b), &json!({"spec": {"x": 1}}), "one", Part::Main, true)?;
        assert_eq!(forced["spec"], json!({"x": 1}), "y was dropped by its only owner");
        let managers: Vec<&str> = forced["metadata"]["managedFields"]
            .as_array()
            .map(|a| a.iter().filter_map(|e| e["manager"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(managers, ["one"], "editor lost its only field");
        Ok(())
    }
}
