//! `metadata.managedFields` entries per field manager and operation, updated on every write,
//! and server-side apply with its conflicts and `force` (upstream
//! `k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`).

use serde_json::{Value, json};

use super::fields::{
    FieldPath, FieldSet, Part, fields_of, from_fields_v1, path_string, remove_at, to_fields_v1, value_at,
};
use super::strategic::{ListStrategy, list_strategy};
use crate::sim::store::{ApiError, ResourceType};

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

fn subresource(part: Part) -> &'static str {
    match part {
        Part::Main => "",
        Part::Status => "status",
    }
}

/// Records an `Update` by `manager` that turned `old` (`None` on create) into `new`: the
/// manager takes the fields whose value changed, other managers lose them, and fields gone
/// from the object leave every set. Writes `new.metadata.managedFields`.
///
/// The managers start from `old`'s, unless `new` (a write of the main resource) carries a
/// non-empty `managedFields` of its own: then those are the client's explicit managed
/// fields and are taken as given, as kube-apiserver does (what `kubectl apply
/// --server-side` relies on to move a client-side-applied object's fields to its apply
/// manager). Upstream: `staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/fieldmanager.go`
/// (`Update`: "allow directly updating managed fields").
pub fn managed_update(
    t: &ResourceType,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    part: Part,
    now: &str,
) {
    let explicit = part == Part::Main
        && new["metadata"]["managedFields"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
    let mut entries = if explicit {
        read_entries(new)
    } else {
        old.map(read_entries).unwrap_or_default()
    };
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
                    time: json!(now),
                    fields: FieldSet::new(),
                });
                let last = entries.len() - 1;
                &mut entries[last]
            }
        };
        e.fields.extend(changed);
        e.time = json!(now);
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
    now: &str,
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
            e.time = json!(now);
            e.api_version = t.api_version();
        }
        None => entries.push(Entry {
            manager: manager.to_owned(),
            operation: "Apply".into(),
            api_version: t.api_version(),
            subresource: sub.into(),
            time: json!(now),
            fields: mine,
        }),
    }
    write_entries(&mut new, &entries);
    Ok(new)
}
