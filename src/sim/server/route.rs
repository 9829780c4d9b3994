//! Request paths and queries: the route of a path (discovery or a resource), the verb of a
//! request, the query string and `continue` tokens.

use std::collections::BTreeMap;

use http::Method;
use serde_json::{Value, json};

use crate::sim::store::{ApiError, Store, TypeRef};

/// The Kubernetes verb of a request, as [`Simulator::respond`] will name it (`unknown` for
/// a path that is not served).
pub(super) fn request_verb(parts: &http::request::Parts, store: &Store) -> &'static str {
    if parts.uri.path().trim_end_matches('/') == "/version" || parts.uri.path().starts_with("/openapi/v") {
        return "discovery";
    }
    let (name, status) = match route(parts.uri.path(), store) {
        Ok(Route::Discovery(_)) => return "discovery",
        Ok(Route::Resource { name, sub, .. }) => (name, sub.is_some()),
        Err(_) => return "unknown",
    };
    let watch = parse_query(parts.uri.query().unwrap_or_default())
        .get("watch")
        .is_some_and(|w| w == "true" || w == "1");
    match (&parts.method, name.is_some()) {
        (&Method::GET, true) => "get",
        (&Method::GET, false) if watch => "watch",
        (&Method::GET, false) => "list",
        (&Method::POST, false) if !status => "create",
        (&Method::PUT, true) => "update",
        (&Method::PATCH, true) => "patch",
        (&Method::DELETE, true) if !status => "delete",
        (&Method::DELETE, false) => "deletecollection",
        _ => "unknown",
    }
}

pub(super) enum Route {
    Discovery(Value),
    Resource {
        t: TypeRef,
        ns: Option<String>,
        name: Option<String>,
        sub: Option<String>,
    },
}

pub(super) fn not_found_path() -> ApiError {
    ApiError::new(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

/// `(group, versions)` of the served API groups, in registration order.
fn group_versions(store: &Store) -> Vec<(String, Vec<String>)> {
    let mut v: Vec<(String, Vec<String>)> = Vec::new();
    for t in store.types() {
        if t.group.is_empty() {
            continue;
        }
        match v.iter_mut().find(|(g, _)| *g == t.group) {
            Some((_, vs)) if !vs.contains(&t.version) => vs.push(t.version.clone()),
            Some(_) => {}
            None => v.push((t.group.clone(), vec![t.version.clone()])),
        }
    }
    v
}

fn resource_list(store: &Store, group: &str, version: &str) -> Value {
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let mut resources = Vec::new();
    for t in store
        .types()
        .iter()
        .filter(|t| t.group == group && t.version == version)
    {
        let mut r = json!({
            "name": t.plural, "singularName": t.singular, "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        });
        if !t.short_names.is_empty() {
            r["shortNames"] = json!(t.short_names);
        }
        resources.push(r);
        if t.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced,
                "kind": t.kind, "verbs": ["get", "patch", "update"],
            }));
        }
    }
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
}

pub(super) fn route(path: &str, store: &Store) -> Result<Route, ApiError> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api"] => {
            return Ok(Route::Discovery(json!({
                "kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "sim"}],
            })));
        }
        ["api", "v1"] => return Ok(Route::Discovery(resource_list(store, "", "v1"))),
        ["apis"] => {
            let groups: Vec<Value> = group_versions(store)
                .into_iter()
                .map(|(g, vs)| {
                    let gvs: Vec<Value> = vs
                        .iter()
                        .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                        .collect();
                    json!({"name": g, "preferredVersion": gvs[0].clone(), "versions": gvs})
                })
                .collect();
            return Ok(Route::Discovery(
                json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
            ));
        }
        ["apis", g, v] => {
            if store.types().iter().any(|t| t.group == *g && t.version == *v) {
                return Ok(Route::Discovery(resource_list(store, g, v)));
            }
            return Err(not_found_path());
        }
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(not_found_path()),
    };
    let namespace_sub = rest.len() == 3 && matches!(rest[2], "status" | "finalize");
    let (ns, rest) = if rest.len() >= 3 && rest[0] == "namespaces" && !namespace_sub {
        (Some(rest[1].to_owned()), &rest[2..])
    } else {
        (None, rest)
    };
    let (plural, name, sub) = match rest {
        [p] => (*p, None, None),
        [p, n] => (*p, Some((*n).to_owned()), None),
        [p, n, s] => (*p, Some((*n).to_owned()), Some((*s).to_owned())),
        _ => return Err(not_found_path()),
    };
    let t = store
        .find_type(group, version, plural)
        .ok_or_else(not_found_path)?;
    if (ns.is_some() && !t.namespaced) || name.as_deref() == Some("") {
        return Err(not_found_path());
    }
    if let Some(s) = &sub
        && !(s == "status" && t.status_subresource)
        && !(s == "scale" && super::scale::scale_paths(&t, store).is_some())
    {
        return Err(not_found_path());
    }
    Ok(Route::Resource { t, ns, name, sub })
}

/// The query string as a map (`application/x-www-form-urlencoded`: `+` is a space, `%XX` a
/// byte, a malformed escape is kept as it is); a repeated key keeps its last value.
pub(super) fn parse_query(q: &str) -> BTreeMap<String, String> {
    form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

pub(super) fn encode_continue(k: &(String, String)) -> String {
    format!("{}\u{0}{}", k.0, k.1)
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(super) fn decode_continue(token: &str) -> Result<(String, String), ApiError> {
    let bad = || ApiError::bad_request(format!("invalid continue token {token:?}"));
    if !token.len().is_multiple_of(2) || !token.is_ascii() {
        return Err(bad());
    }
    let bytes = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&token[i..i + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| bad())?;
    let s = String::from_utf8(bytes).map_err(|_| bad())?;
    let (ns, name) = s.split_once('\u{0}').ok_or_else(bad)?;
    Ok((ns.to_owned(), name.to_owned()))
}
