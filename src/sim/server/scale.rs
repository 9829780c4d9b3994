//! The `/scale` subresource (`autoscaling/v1` `Scale`) of Deployments, ReplicaSets,
//! StatefulSets and of custom resources whose CRD declares `subresources.scale`, as
//! `kubectl scale` and autoscalers use it: GET gives the Scale, PUT and PATCH (merge, JSON
//! patch) set `spec.replicas` of the object. Upstream: `pkg/registry/apps/deployment/storage/storage.go`
//! (`ScaleREST`) and apiextensions-apiserver `pkg/registry/customresource/etcd.go`
//! (`ScaleREST`) in kubernetes/kubernetes.

use http::Method;
use serde_json::{Value, json};

use super::Simulator;
use super::reply::Reply;
use super::route::not_found_path;
use crate::sim::patch::{self, Part, PatchType};
use crate::sim::store::{ApiError, ResourceType, Store, TypeRef, WriteMode};

/// Where a kind keeps what its Scale shows: JSON pointers of the desired and current replica
/// counts and of the label selector (a `LabelSelector` object for the built-in kinds, a
/// string for custom resources).
pub(super) struct ScalePaths {
    spec_replicas: String,
    status_replicas: String,
    selector: Option<String>,
    selector_is_object: bool,
}

/// A CRD's `.spec.replicas`-style path as a JSON pointer.
fn pointer(path: &str) -> String {
    path.split('.')
        .filter(|s| !s.is_empty())
        .fold(String::new(), |acc, s| format!("{acc}/{s}"))
}

/// The Scale paths of kind `t`, or `None` when it has no `/scale`.
pub(super) fn scale_paths(t: &ResourceType, store: &Store) -> Option<ScalePaths> {
    if t.group == "apps" && matches!(t.plural.as_str(), "deployments" | "replicasets" | "statefulsets") {
        return Some(ScalePaths {
            spec_replicas: "/spec/replicas".into(),
            status_replicas: "/status/replicas".into(),
            selector: Some("/spec/selector".into()),
            selector_is_object: true,
        });
    }
    let crd_name = t.crd.as_deref()?;
    let crds = store.find_plural("apiextensions.k8s.io", "customresourcedefinitions")?;
    let crd = store.get(&crds, "", crd_name)?;
    let version = crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == t.version.as_str())?;
    let s = version["subresources"]["scale"].as_object()?;
    Some(ScalePaths {
        spec_replicas: pointer(s.get("specReplicasPath")?.as_str()?),
        status_replicas: pointer(s.get("statusReplicasPath")?.as_str()?),
        selector: s.get("labelSelectorPath").and_then(Value::as_str).map(pointer),
        selector_is_object: false,
    })
}

/// A `LabelSelector` as its string form (`app=d1,tier in (a,b)`, requirements sorted by key).
fn selector_string(sel: &Value) -> String {
    let mut reqs: Vec<(String, String)> = Vec::new();
    for (k, v) in sel["matchLabels"].as_object().into_iter().flatten() {
        reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
    }
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or_default();
        let mut values: Vec<&str> = e["values"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        values.sort_unstable();
        let text = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            _ => format!("!{key}"),
        };
        reqs.push((key.to_owned(), text));
    }
    reqs.sort();
    reqs.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",")
}

/// The Scale of object `o`.
fn scale_of(paths: &ScalePaths, o: &Value) -> Value {
    let meta = &o["metadata"];
    let mut m = serde_json::Map::new();
    for f in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(v) = meta.get(f) {
            m.insert(f.into(), v.clone());
        }
    }
    let mut status =
        json!({"replicas": o.pointer(&paths.status_replicas).and_then(Value::as_i64).unwrap_or(0)});
    if let Some(p) = &paths.selector {
        let sel = match o.pointer(p) {
            Some(s) if paths.selector_is_object => Some(selector_string(s)),
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        if let Some(s) = sel.filter(|s| !s.is_empty()) {
            status["selector"] = json!(s);
        }
    }
    let mut spec = json!({});
    if let Some(r) = o.pointer(&paths.spec_replicas) {
        spec["replicas"] = r.clone();
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": m, "spec": spec, "status": status})
}

fn invalid_scale(name: &str, replicas: i64) -> ApiError {
    let cause = "Invalid value";
    ApiError::new(
        422,
        "Invalid",
        format!("Scale.autoscaling {name:?} is invalid: spec.replicas: {cause}: {replicas}: must be greater than or equal to 0"),
    )
    .with_details(json!({"name": name, "group": "autoscaling", "kind": "Scale", "causes": [
        {"reason": "FieldValueInvalid", "message": format!("{cause}: {replicas}: must be greater than or equal to 0"),
         "field": "spec.replicas"}]}))
}

impl Simulator {
    /// Serves `/scale` of `t` `ns/name`: GET, PUT (a Scale) or PATCH (of the Scale).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn scale(
        &self,
        method: &Method,
        t: &TypeRef,
        ns: &str,
        name: &str,
        content_type: &str,
        body: &[u8],
        dry_run: bool,
        manager: &str,
    ) -> Result<Reply, ApiError> {
        let Some(paths) = scale_paths(t, &self.lock()) else {
            return Err(not_found_path());
        };
        if *method == Method::GET {
            let o = self
                .lock()
                .get(t, ns, name)
                .ok_or_else(|| ApiError::not_found(t, name))?;
            return Ok(Reply::Json(200, scale_of(&paths, &o)));
        }
        let kind = if *method == Method::PUT {
            None
        } else if *method == Method::PATCH {
            Some(PatchType::from_content_type(content_type, t)?)
        } else {
            return Err(ApiError::new(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )
            .with_details(json!({})));
        };
        let body_value: Option<Value> = match kind {
            Some(PatchType::Json) => None,
            _ => Some(
                serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))?,
            ),
        };
        let out = self.mutate(dry_run, |s| {
            let current = s.get(t, ns, name).ok_or_else(|| ApiError::not_found(t, name))?;
            let before = scale_of(&paths, &current);
            let wanted = match (kind, &body_value) {
                (None, Some(v)) => v.clone(),
                (Some(PatchType::Json), _) => {
                    let mut sc = before.clone();
                    patch::json_patch(&mut sc, body)?;
                    sc
                }
                (_, Some(v)) => {
                    let mut sc = before.clone();
                    json_patch::merge(&mut sc, v);
                    sc
                }
                (_, None) => before.clone(),
            };
            let replicas = wanted["spec"]["replicas"].as_i64().unwrap_or(0);
            if replicas < 0 {
                return Err(invalid_scale(name, replicas));
            }
            let mut obj = current.clone();
            if let Some(rv) = wanted["metadata"]["resourceVersion"]
                .as_str()
                .filter(|r| !r.is_empty())
            {
                obj["metadata"]["resourceVersion"] = json!(rv);
            }
            set_pointer(&mut obj, &paths.spec_replicas, json!(replicas));
            patch::managed_update(t, Some(&current), &mut obj, manager, Part::Main, &s.now());
            let written = s.update(t, ns, name, obj, WriteMode::Main)?;
            Ok(scale_of(&paths, &written))
        })?;
        Ok(Reply::Json(200, out))
    }
}

/// Sets the value at JSON pointer `p`, creating objects on the way.
fn set_pointer(o: &mut Value, p: &str, v: Value) {
    let mut cur = o;
    let parts: Vec<&str> = p.split('/').skip(1).collect();
    for (i, k) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        let Some(m) = cur.as_object_mut() else { return };
        if i + 1 == parts.len() {
            m.insert((*k).to_owned(), v);
            return;
        }
        cur = m.entry((*k).to_owned()).or_insert_with(|| json!({}));
    }
}

/// Whether a path's subresource is `/scale`.
pub(super) fn is_scale(sub: Option<&String>) -> bool {
    sub.is_some_and(|s| s == "scale")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_print_as_label_selector_strings() {
        let s = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "t", "operator": "In", "values": ["y", "x"]},
                                 {"key": "e", "operator": "Exists"}]});
        assert_eq!(selector_string(&s), "a=1,b=2,e,t in (x,y)");
    }

    #[test]
    fn pointers_of_crd_paths() {
        assert_eq!(pointer(".spec.replicas"), "/spec/replicas");
        let mut o = json!({});
        set_pointer(&mut o, "/spec/replicas", json!(3));
        assert_eq!(o, json!({"spec": {"replicas": 3}}));
    }
}
