//! OpenAPI v3 discovery as kube-apiserver serves it (`k8s.io/kube-openapi/pkg/handler3`):
//! `/openapi/v3` lists one document per group-version, `/openapi/v3/api/v1` and
//! `/openapi/v3/apis/{group}/{version}` hold its paths. Each resource path carries its
//! operations with `x-kubernetes-group-version-kind` and the `fieldValidation`, `dryRun` and
//! `fieldManager` query parameters of its writes: what `kubectl apply`/`create` look up to use
//! server-side field validation (`k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go`),
//! so they work without `--validate=false`. A CRD-defined kind's schema is its CRD's
//! `openAPIV3Schema` (as apiextensions-apiserver publishes it), ClusterVersion's and
//! ClusterOperator's their embedded upstream CRD's, a Kubernetes kind's the full schema
//! kube-apiserver publishes ([`super::builtin_openapi`]); the other OpenShift kinds get an
//! object schema with `x-kubernetes-preserve-unknown-fields` and their top-level fields
//! (`apiVersion`, `kind`, `metadata`, `spec`/`status`), enough for `kubectl explain
//! mcp.spec`, not per-field documentation.
//!
//! `/openapi/v2` is the same paths and schemas as one Swagger 2.0 document in JSON
//! (`k8s.io/kube-openapi/pkg/handler`); kubectl asks it in protobuf, which the simulator does
//! not write (`406`, see [`super::media`]), and goes on without it.

use serde_json::{Value, json};

use crate::sim::store::{ResourceType, Store};

/// The answer for an `/openapi/v3...` path, `None` when there is no such document.
pub(super) fn answer(path: &str, store: &Store) -> Option<Value> {
    if path.trim_end_matches('/') == "/openapi/v2" {
        let types: Vec<&ResourceType> = store.types().iter().map(AsRef::as_ref).collect();
        return Some(swagger(store, &types));
    }
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
    (!types.is_empty()).then(|| document(store, &types))
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

/// The schema name of kind `t` (`core.v1.ConfigMap`, `config.openshift.io.v1.ClusterVersion`).
fn schema_name(t: &ResourceType) -> String {
    format!(
        "{}.{}.{}",
        if t.group.is_empty() { "core" } else { &t.group },
        t.version,
        t.kind
    )
}

/// The schema of kind `t`: its CRD's `openAPIV3Schema`, else an open object with the
/// top-level fields (see the module docs); with `x-kubernetes-group-version-kind`.
fn schema(store: &Store, t: &ResourceType) -> Value {
    let gvk = json!({"group": t.group, "version": t.version, "kind": t.kind});
    let field = |description: &str| json!({"type": "string", "description": description});
    let open = |description: &str| {
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
               "description": description})
    };
    let mut s = store
        .schema_of(t)
        .map(std::borrow::Cow::into_owned)
        .unwrap_or_else(|| {
            let mut props = serde_json::Map::new();
            props.insert(
                "apiVersion".into(),
                field("APIVersion defines the versioned schema of this representation of an object."),
            );
            props.insert(
                "kind".into(),
                field("Kind is a string value representing the REST resource this object represents."),
            );
            props.insert(
                "metadata".into(),
                open("Standard object's metadata (ObjectMeta)."),
            );
            if super::body::is_custom(t) {
                props.insert("spec".into(), open("spec holds the desired state."));
                props.insert("status".into(), open("status holds the observed state."));
            }
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": props})
        });
    s["x-kubernetes-group-version-kind"] = json!([gvk]);
    s
}

/// The `/openapi/v2` document (Swagger 2.0) of `types`.
fn swagger(store: &Store, types: &[&ResourceType]) -> Value {
    let v3 = document(store, types);
    let mut definitions = serde_json::Map::new();
    for t in types {
        definitions.insert(schema_name(t), schema(store, t));
    }
    let text = serde_json::to_string(&v3["paths"])
        .unwrap_or_default()
        .replace("#/components/schemas/", "#/definitions/");
    let mut paths: Value = serde_json::from_str(&text).unwrap_or_default();
    // Swagger 2.0 operations: typed query parameters, a `body` parameter, response schemas.
    for ops in paths.as_object_mut().into_iter().flat_map(|p| p.values_mut()) {
        for op in ops.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
            let body = op
                .as_object_mut()
                .and_then(|o| o.remove("requestBody"))
                .map(|b| b["content"]["application/json"]["schema"].clone());
            if let Some(params) = op["parameters"].as_array_mut() {
                for p in params.iter_mut() {
                    p["type"] = json!("string");
                    if let Some(o) = p.as_object_mut() {
                        o.remove("schema");
                    }
                }
                if let Some(schema) = body {
                    params.push(json!({"name": "body", "in": "body", "required": true, "schema": schema}));
                }
            }
            let ok = op["responses"]["200"]["content"]["application/json"]["schema"].clone();
            op["responses"] = json!({"200": {"description": "OK", "schema": ok}});
        }
    }
    let (major, minor, patch) = super::handlers::KUBE_VERSION;
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": format!("v{major}.{minor}.{patch}")},
        "paths": paths,
        "definitions": definitions,
    })
}

fn document(store: &Store, types: &[&ResourceType]) -> Value {
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    for t in types {
        let gvk = json!({"group": t.group, "version": t.version, "kind": t.kind});
        let schema_name = match super::builtin_openapi::schemas(&t.group, &t.plural) {
            // A Kubernetes kind: its schema and every schema it refers to, by kube's names.
            Some(k) => {
                for (name, s) in k.schemas {
                    schemas.entry(name).or_insert(s);
                }
                if let Some(own) = schemas.get_mut(k.name) {
                    own["x-kubernetes-group-version-kind"] = json!([gvk]);
                }
                k.name.to_owned()
            }
            None => {
                let name = schema_name(t);
                schemas.insert(name.clone(), schema(store, t));
                name
            }
        };
        let reference = json!({"$ref": format!("#/components/schemas/{schema_name}")});
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
