//! OpenAPI v3 discovery as kube-apiserver serves it (`k8s.io/kube-openapi/pkg/handler3`):
//! `/openapi/v3` lists one document per group-version, `/openapi/v3/api/v1` and
//! `/openapi/v3/apis/{group}/{version}` hold its paths. Each resource path carries its
//! operations with `x-kubernetes-group-version-kind` and the `fieldValidation`, `dryRun` and
//! `fieldManager` query parameters of its writes: what `kubectl apply`/`create` look up to use
//! server-side field validation (`k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go`),
//! so they work without `--validate=false`. Schemas are objects with
//! `x-kubernetes-preserve-unknown-fields` (no per-field schema is served).

use serde_json::{Value, json};

use crate::sim::store::{ResourceType, Store};

/// The answer for an `/openapi/v3...` path, `None` when there is no such document.
pub(super) fn answer(path: &str, store: &Store) -> Option<Value> {
    let rest = path.trim_end_matches('/').strip_prefix("/openapi/v3")?;
    if rest.is_empty() {
        return Some(root(store));
    }
    let gv = rest.strip_prefix('/')?;
    let (group, version) = match gv.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => (String::new(), (*v).to_owned()),
        ["apis", g, v] => ((*g).to_owned(), (*v).to_owned()),
        _ => return None,
    };
    let types: Vec<&ResourceType> = store
        .types()
        .iter()
        .filter(|t| t.group == group && t.version == version)
        .map(AsRef::as_ref)
        .collect();
    (!types.is_empty()).then(|| document(&types))
}

/// `api/v1` or `apis/{group}/{version}`.
fn gv_path(t: &ResourceType) -> String {
    if t.group.is_empty() {
        format!("api/{}", t.version)
    } else {
        format!("apis/{}/{}", t.group, t.version)
    }
}

fn root(store: &Store) -> Value {
    let mut paths = serde_json::Map::new();
    for t in store.types() {
        let p = gv_path(t);
        // The hash changes with the set of served kinds (a CRD created or removed).
        let kinds: Vec<&str> = store
            .types()
            .iter()
            .filter(|o| gv_path(o) == p)
            .map(|o| o.plural.as_str())
            .collect();
        let hash = fnv(&kinds.join(","));
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={hash:016X}")}),
        );
    }
    json!({"paths": paths})
}

/// FNV-1a, for a stable content hash.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn query_param(name: &str) -> Value {
    json!({"name": name, "in": "query", "uniqueItems": true, "schema": {"type": "string"}})
}

fn document(types: &[&ResourceType]) -> Value {
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    for t in types {
        let gvk = json!({"group": t.group, "version": t.version, "kind": t.kind});
        let schema_name = format!(
            "{}.{}.{}",
            if t.group.is_empty() { "core" } else { &t.group },
            t.version,
            t.kind
        );
        let reference = json!({"$ref": format!("#/components/schemas/{schema_name}")});
        schemas.insert(
            schema_name.clone(),
            json!({
                "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-group-version-kind": [gvk],
            }),
        );
        let body = json!({"required": true, "content": {"application/json": {"schema": reference}}});
        let ok =
            json!({"200": {"description": "OK", "content": {"application/json": {"schema": reference}}}});
        let writes = [
            query_param("dryRun"),
            query_param("fieldManager"),
            query_param("fieldValidation"),
        ];
        let op = |action: &str, with_body: bool, params: &[Value]| {
            let mut o = json!({
                "operationId": format!("{action}{}", t.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": params,
                "responses": ok,
            });
            if with_body {
                o["requestBody"] = body.clone();
            }
            o
        };
        let base = if t.namespaced {
            format!("/{}/namespaces/{{namespace}}/{}", gv_path(t), t.plural)
        } else {
            format!("/{}/{}", gv_path(t), t.plural)
        };
        paths.insert(
            base.clone(),
            json!({"get": op("list", false, &[]), "post": op("post", true, &writes)}),
        );
        paths.insert(
            format!("{base}/{{name}}"),
            json!({
                "get": op("get", false, &[]),
                "put": op("put", true, &writes),
                "patch": op("patch", true, &[query_param("dryRun"), query_param("fieldManager"),
                    query_param("fieldValidation"), query_param("force")]),
                "delete": op("delete", false, &[query_param("dryRun")]),
            }),
        );
        if t.status_subresource {
            paths.insert(
                format!("{base}/{{name}}/status"),
                json!({"get": op("get", false, &[]), "put": op("put", true, &writes),
                       "patch": op("patch", true, &writes)}),
            );
        }
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}
