//! The request handlers: dispatch by route and verb, get, list, create, update, patch,
//! delete and deletecollection, with their admission checks.

use std::collections::BTreeMap;
use std::sync::Arc;

use http::{Method, Response, header};
use serde_json::{Value, json};

use super::Simulator;
use super::body::{check_type, require_resource_version};
use super::reply::{Reply, partial};
use super::route::{Route, decode_continue, encode_continue, not_found_path, parse_query, route};
use super::selectors::Selectors;
use super::{media, openapi, table};
use crate::sim::patch::{self, Part, PatchType};
use crate::sim::response::{ResponseBody, json_response, raw_json_response};
use crate::sim::store::{ApiError, EventType, NamespaceState, Store, Stored, TypeRef, WriteMode};

/// Kubernetes version the simulator answers `/version` with: the kube-apiserver release its
/// behaviour is checked against (`tests/api_conformance.rs`).
pub const KUBE_VERSION: (u32, u32, u32) = (1, 36, 2);

/// The `/version` answer (`k8s.io/apimachinery/pkg/version.Info`).
fn version_info() -> Value {
    let (major, minor, patch) = KUBE_VERSION;
    json!({
        "major": major.to_string(), "minor": minor.to_string(),
        "emulationMajor": major.to_string(), "emulationMinor": minor.to_string(),
        "minCompatibilityMajor": major.to_string(), "minCompatibilityMinor": (minor - 1).to_string(),
        "gitVersion": format!("v{major}.{minor}.{patch}+cvo-sim"),
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z", "goVersion": "none", "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, if std::env::consts::ARCH == "x86_64" { "amd64" } else { std::env::consts::ARCH }),
    })
}

impl Simulator {
    /// Serves one request (the body already read); returns the verb and the response.
    pub(super) fn respond(
        &self,
        parts: &http::request::Parts,
        body: &[u8],
    ) -> (&'static str, Response<ResponseBody>) {
        let (verb, result) = self.dispatch(parts, body);
        let response = match result {
            Ok(Reply::Json(code, v)) => json_response(code, &v),
            Ok(Reply::Raw(code, text)) => raw_json_response(code, text.into()),
            Ok(Reply::Stream(b)) => {
                let mut r = Response::new(b);
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/json"),
                );
                r
            }
            Ok(Reply::Text(code, text)) => {
                let mut r = raw_json_response(code, text.into());
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    http::HeaderValue::from_static("text/plain; charset=utf-8"),
                );
                r
            }
            Err(e) => json_response(e.code, &e.to_status()),
        };
        (verb, response)
    }

    fn dispatch(&self, parts: &http::request::Parts, body: &[u8]) -> (&'static str, Result<Reply, ApiError>) {
        let converted = match media::check_accept(parts).and_then(|()| media::json_body(parts, body)) {
            Ok(c) => c,
            Err(e) => return (super::route::request_verb(parts, &self.lock()), Err(e)),
        };
        let body = converted.as_deref().unwrap_or(body);
        let path = parts.uri.path();
        let query = parse_query(parts.uri.query().unwrap_or_default());
        if path.trim_end_matches('/') == "/version" {
            return (
                "discovery",
                if parts.method == Method::GET {
                    Ok(Reply::Json(200, version_info()))
                } else {
                    Err(method_not_allowed(&parts.method))
                },
            );
        }
        if let Some(answer) = health(path, &query) {
            return (
                "health",
                if parts.method == Method::GET {
                    answer
                } else {
                    Err(method_not_allowed(&parts.method))
                },
            );
        }
        if path.starts_with("/openapi/v") && parts.method == Method::GET {
            return (
                "discovery",
                openapi::answer(path, &self.lock())
                    .map(|v| Reply::Json(200, v))
                    .ok_or_else(not_found_path),
            );
        }
        if path.trim_end_matches('/') == ACCESS_REVIEWS {
            return (
                "create",
                if parts.method == Method::POST {
                    access_review(parts, body)
                } else {
                    Err(method_not_allowed(&parts.method))
                },
            );
        }
        let route = match route(path, &self.lock()) {
            Ok(r) => r,
            Err(e) => return ("unknown", Err(e)),
        };
        let (t, ns, name, sub) = match route {
            Route::Discovery(v) => {
                return (
                    "discovery",
                    if parts.method == Method::GET {
                        Ok(Reply::Json(200, v))
                    } else {
                        Err(method_not_allowed(&parts.method))
                    },
                );
            }
            Route::Resource { t, ns, name, sub } => (t, ns, name, sub),
        };
        let decoded;
        let body = if media::is_protobuf(parts, body) {
            let api_version = t.api_version();
            if super::body::is_custom(&t) || !super::protobuf::has_descriptor(&api_version, &t.kind) {
                return (
                    super::route::request_verb(parts, &self.lock()),
                    Err(super::protobuf::unsupported()),
                );
            }
            match super::protobuf::decode(body, &api_version, &t.kind) {
                Ok(v) => {
                    decoded = serde_json::to_vec(&v).unwrap_or_default();
                    decoded.as_slice()
                }
                Err(e) => return (super::route::request_verb(parts, &self.lock()), Err(e)),
            }
        } else {
            body
        };
        let meta_only = parts
            .headers
            .get(header::ACCEPT)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|a| a.contains("as=PartialObjectMetadata"));
        let ns_str = ns.clone().unwrap_or_default();
        let status = sub.is_some();
        let mode = if status {
            WriteMode::Status
        } else {
            WriteMode::Main
        };
        let m = &parts.method;
        let dry_run = query.get("dryRun").is_some_and(|d| d == "All");
        let manager = field_manager(parts, &query);
        if let (true, Some(name)) = (super::scale::is_scale(sub.as_ref()), &name) {
            let ct = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|h| h.to_str().ok())
                .unwrap_or_default();
            let verb = match *m {
                Method::GET => "get",
                Method::PUT => "update",
                Method::PATCH => "patch",
                _ => "unknown",
            };
            return (
                verb,
                self.scale(m, &t, &ns_str, name, ct, body, dry_run, &manager),
            );
        }
        match (m, name) {
            (&Method::GET, Some(name)) if table::wants_table(parts) => (
                "get",
                self.get_one(&t, &ns_str, &name, false)
                    .map(|r| self.tabled(&t, r, query.get("includeObject"))),
            ),
            (&Method::GET, Some(name)) => ("get", self.get_one(&t, &ns_str, &name, meta_only)),
            (&Method::GET, None) if query.get("watch").is_some_and(|w| w == "true" || w == "1") => {
                let table = table::wants_table(parts).then(|| self.table_of(&t, query.get("includeObject")));
                ("watch", self.watch(&t, ns, &query, meta_only, table))
            }
            (&Method::GET, None) if table::wants_table(parts) => (
                "list",
                self.list(&t, ns.as_deref(), &query, false)
                    .map(|r| self.tabled(&t, r, query.get("includeObject"))),
            ),
            (&Method::GET, None) => ("list", self.list(&t, ns.as_deref(), &query, meta_only)),
            (&Method::POST, None) if !status => {
                ("create", self.create(&t, ns.as_deref(), body, dry_run, &manager))
            }
            (&Method::PUT, Some(name)) => (
                "update",
                self.update(&t, &ns_str, &name, body, mode, dry_run, &manager),
            ),
            (&Method::PATCH, Some(name)) => {
                let ct = parts
                    .headers
                    .get(header::CONTENT_TYPE)
                    .and_then(|h| h.to_str().ok())
                    .unwrap_or_default();
                (
                    "patch",
                    self.patch(&t, &ns_str, &name, ct, &query, body, mode, dry_run, &manager),
                )
            }
            (&Method::DELETE, Some(name)) if !status => (
                "delete",
                DeleteOptions::parse(body, dry_run).and_then(|o| self.delete(&t, &ns_str, &name, &o)),
            ),
            (&Method::DELETE, None) => (
                "deletecollection",
                DeleteOptions::parse(body, dry_run)
                    .and_then(|o| self.delete_collection(&t, ns.as_deref(), &query, o.dry_run)),
            ),
            _ => ("unknown", Err(method_not_allowed(m))),
        }
    }

    /// Runs a write on the store, or with `dry_run` (`?dryRun=All`) on a copy of it, so the
    /// answer is what the write would return and nothing changes.
    pub(super) fn mutate(
        &self,
        dry_run: bool,
        f: impl FnOnce(&mut Store) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        if dry_run {
            let mut copy = self.lock().clone();
            return f(&mut copy);
        }
        let mut store = self.lock();
        let out = f(&mut store);
        let rv = store.resource_version();
        drop(store);
        self.notify(rv);
        out
    }

    /// A `get`/`list` answer as a `Table` (see [`table`]).
    fn tabled(&self, t: &TypeRef, reply: Reply, include: Option<&String>) -> Reply {
        let Some((code, v)) = reply.into_json() else {
            return Reply::Json(
                500,
                ApiError::new(500, "InternalError", "no table of a stream").to_status(),
            );
        };
        let form = self.table_of(t, include);
        Reply::Json(code, form.table(t, &v))
    }

    /// What the `Table` form of `t`'s objects needs: its CRD (for a CRD-defined kind) and the
    /// `includeObject` parameter.
    pub(super) fn table_of(&self, t: &TypeRef, include: Option<&String>) -> table::TableForm {
        let store = self.lock();
        let crd = t.crd.as_deref().and_then(|name| {
            let crds = store.find_plural("apiextensions.k8s.io", "customresourcedefinitions")?;
            store.get(&crds, "", name)
        });
        let crd = crd
            .or_else(|| crate::sim::store::builtin_crd(&t.group, &t.plural, &store.feature_set()).cloned());
        table::TableForm {
            crd,
            include: include.cloned(),
            headers: true,
        }
    }

    fn get_one(&self, t: &TypeRef, ns: &str, name: &str, meta_only: bool) -> Result<Reply, ApiError> {
        let store = self.lock();
        let o = store
            .get_stored(t, ns, name)
            .ok_or_else(|| ApiError::not_found(t, name))?;
        Ok(if meta_only {
            Reply::Json(200, partial(&o.value()))
        } else {
            Reply::Raw(200, o.json().to_owned())
        })
    }

    fn list(
        &self,
        t: &TypeRef,
        ns: Option<&str>,
        query: &BTreeMap<String, String>,
        meta_only: bool,
    ) -> Result<Reply, ApiError> {
        let sel = Selectors::parse(query)?;
        let limit = match query.get("limit").filter(|l| !l.is_empty()) {
            Some(l) => l
                .parse::<usize>()
                .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
            None => 0,
        };
        let after = match query.get("continue").filter(|c| !c.is_empty()) {
            Some(c) => Some(decode_continue(c)?),
            None => None,
        };
        let store = self.lock();
        let at = list_version(query, store.resource_version())?;
        let past = match at {
            Some(rv) => Some(objects_at(&store, t, ns, rv)?),
            None => None,
        };
        let rv = at.unwrap_or_else(|| store.resource_version());
        let source: Vec<&Arc<Stored>> = match &past {
            Some(objects) => objects.iter().collect(),
            None => store.list_stored(t, ns),
        };
        let key = |o: &Stored| (o.namespace().to_owned(), o.name().to_owned());
        let mut items: Vec<&Arc<Stored>> = source
            .into_iter()
            .filter(|o| sel.matches(o))
            .filter(|o| after.as_ref().is_none_or(|a| &key(o) > a))
            .collect();
        let mut list_meta = json!({"resourceVersion": rv.to_string()});
        if limit > 0 && items.len() > limit {
            let remaining = items.len() - limit;
            items.truncate(limit);
            if let Some(last) = items.last() {
                list_meta["continue"] = json!(encode_continue(&key(last)));
                list_meta["remainingItemCount"] = json!(remaining);
            }
        }
        if meta_only {
            let items: Vec<Value> = items.into_iter().map(|o| partial(&o.value())).collect();
            return Ok(Reply::Json(
                200,
                json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                       "metadata": list_meta, "items": items}),
            ));
        }
        // The stored texts go into the answer as they are, in the key order a `Value` of the
        // list would have (apiVersion, items, kind, metadata).
        let mut body = String::with_capacity(64 + items.iter().map(|o| o.json().len() + 1).sum::<usize>());
        body.push_str("{\"apiVersion\":");
        body.push_str(&Value::from(t.api_version()).to_string());
        body.push_str(",\"items\":[");
        for (i, o) in items.iter().enumerate() {
            if i > 0 {
                body.push(',');
            }
            body.push_str(o.json());
        }
        body.push_str("],\"kind\":");
        body.push_str(&Value::from(format!("{}List", t.kind)).to_string());
        body.push_str(",\"metadata\":");
        body.push_str(&list_meta.to_string());
        body.push('}');
        Ok(Reply::Raw(200, body))
    }

    fn create(
        &self,
        t: &TypeRef,
        ns: Option<&str>,
        body: &[u8],
        dry_run: bool,
        manager: &str,
    ) -> Result<Reply, ApiError> {
        let obj = parse_body(body)?;
        check_type(t, body, &obj)?;
        let ns = match (t.namespaced, ns) {
            (true, Some(ns)) => ns.to_owned(),
            (true, None) => {
                return Err(ApiError::bad_request(format!(
                    "a namespace is required to create {}",
                    t.qualified()
                )));
            }
            (false, _) => String::new(),
        };
        if let Some(body_ns) = obj["metadata"]["namespace"].as_str()
            && t.namespaced
            && !body_ns.is_empty()
            && body_ns != ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let name = obj["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        let mut obj = obj;
        if let Some(m) = obj["metadata"].as_object_mut() {
            m.remove("managedFields");
        }
        let now = self.lock().now();
        patch::managed_update(t, None, &mut obj, manager, Part::Main, &now);
        self.mutate(dry_run, |s| {
            check_namespace(s, t, &ns, &name)?;
            s.create(t, &ns, obj, WriteMode::Main)
        })
        .map(|o| Reply::Json(201, o))
    }

    #[allow(clippy::too_many_arguments)]
    fn update(
        &self,
        t: &TypeRef,
        ns: &str,
        name: &str,
        body: &[u8],
        mode: WriteMode,
        dry_run: bool,
        manager: &str,
    ) -> Result<Reply, ApiError> {
        let obj = parse_body(body)?;
        if mode == WriteMode::Status && !t.status_subresource {
            return Err(ApiError::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            ));
        }
        check_type(t, body, &obj)?;
        require_resource_version(t, name, &obj)?;
        let part = if mode == WriteMode::Status {
            Part::Status
        } else {
            Part::Main
        };
        let mut obj = obj;
        self.mutate(dry_run, |s| {
            if let Some(current) = s.get(t, ns, name) {
                // A client's managedFields count when it sends some (kube-apiserver takes
                // them as given); none, or a /status write, keeps the stored ones.
                let sent = obj["metadata"]["managedFields"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty());
                if !sent || part == Part::Status {
                    obj["metadata"]["managedFields"] = current["metadata"]["managedFields"].clone();
                }
                patch::managed_update(t, Some(&current), &mut obj, manager, part, &s.now());
            }
            s.update(t, ns, name, obj, mode)
        })
        .map(|o| Reply::Json(200, o))
    }

    #[allow(clippy::too_many_arguments)]
    fn patch(
        &self,
        t: &TypeRef,
        ns: &str,
        name: &str,
        content_type: &str,
        query: &BTreeMap<String, String>,
        body: &[u8],
        mode: WriteMode,
        dry_run: bool,
        manager: &str,
    ) -> Result<Reply, ApiError> {
        let kind = PatchType::from_content_type(content_type, t)?;
        if kind == PatchType::Apply && query.get("fieldManager").is_none_or(|m| m.is_empty()) {
            return Err(ApiError::new(
                422,
                "Invalid",
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            ));
        }
        if mode == WriteMode::Status && !t.status_subresource {
            return Err(not_found_path());
        }
        let part = if mode == WriteMode::Status {
            Part::Status
        } else {
            Part::Main
        };
        let force = query.get("force").is_some_and(|f| f == "true");
        let patch = match kind {
            PatchType::Json => Value::Null,
            PatchType::Apply => {
                let v: Value = serde_norway::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
                if !v.is_object() {
                    return Err(ApiError::bad_request("the apply body is not an object"));
                }
                if let Some(n) = v["metadata"]["name"].as_str()
                    && n != name
                {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({n}) does not match the name on the URL ({name})"
                    )));
                }
                v
            }
            PatchType::Merge | PatchType::Strategic => parse_body(body)?,
        };
        let mut created = false;
        let out = self.mutate(dry_run, |s| {
            let Some(current) = s.get(t, ns, name) else {
                // Server-side apply creates a missing object (not through /status).
                if kind == PatchType::Apply && mode == WriteMode::Main {
                    check_namespace(s, t, ns, name)?;
                    let mut obj = patch::apply(t, None, &patch, manager, part, force, &s.now())?;
                    obj["metadata"]["name"] = json!(name);
                    created = true;
                    return s.create(t, ns, obj, WriteMode::Main);
                }
                return Err(ApiError::not_found(t, name));
            };
            let obj = match kind {
                PatchType::Apply => patch::apply(t, Some(&current), &patch, manager, part, force, &s.now())?,
                other => {
                    let mut obj = current.clone();
                    match other {
                        PatchType::Json => patch::json_patch(&mut obj, body)?,
                        PatchType::Strategic => patch::strategic_merge(&mut obj, &patch)?,
                        _ => json_patch::merge(&mut obj, &patch),
                    }
                    patch::managed_update(t, Some(&current), &mut obj, manager, part, &s.now());
                    obj
                }
            };
            s.update(t, ns, name, obj, mode)
        })?;
        Ok(Reply::Json(if created { 201 } else { 200 }, out))
    }

    fn delete(&self, t: &TypeRef, ns: &str, name: &str, opts: &DeleteOptions) -> Result<Reply, ApiError> {
        self.mutate(opts.dry_run, |s| {
            if let Some(current) = s.get_stored(t, ns, name) {
                opts.check_preconditions(t, name, &current.value())?;
            }
            s.delete(t, ns, name)
        })
        .map(|o| {
            // An object removed at once is answered with a `Success` Status; one that waits
            // on finalizers with itself (kube-apiserver's `ReturnDeletedObject` is off for
            // the kinds served here).
            if o["metadata"]["deletionTimestamp"].is_string() {
                return Reply::Json(200, o);
            }
            let mut details = json!({"name": name, "kind": t.plural, "uid": o["metadata"]["uid"]});
            if !t.group.is_empty() {
                details["group"] = json!(t.group);
            }
            Reply::Json(
                200,
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}),
            )
        })
    }

    /// Deletes every object of `t` in `ns` (all namespaces when `None`) that the selectors
    /// match; answers with the list of deleted (or finalizer-held) objects.
    fn delete_collection(
        &self,
        t: &TypeRef,
        ns: Option<&str>,
        query: &BTreeMap<String, String>,
        dry_run: bool,
    ) -> Result<Reply, ApiError> {
        let sel = Selectors::parse(query)?;
        let mut deleted = Vec::new();
        self.mutate(dry_run, |s| {
            let targets: Vec<(String, String)> = s
                .list_stored(t, ns)
                .into_iter()
                .filter(|o| sel.matches(o))
                .map(|o| (o.namespace().to_owned(), o.name().to_owned()))
                .collect();
            for (ns, name) in targets {
                deleted.push(s.delete(t, &ns, &name)?);
            }
            Ok(Value::Null)
        })?;
        Ok(Reply::Json(
            200,
            json!({"kind": format!("{}List", t.kind), "apiVersion": t.api_version(), "metadata": {}, "items": deleted}),
        ))
    }
}

/// The field manager of a write: `?fieldManager=`, else what kube-apiserver derives from the
/// `User-Agent` (its part before the first `/`, at most 128 characters), else `unknown`.
/// Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go`
/// (`managerOrUserAgent`).
fn field_manager(parts: &http::request::Parts, query: &BTreeMap<String, String>) -> String {
    if let Some(m) = query.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.clone();
    }
    let ua = parts
        .headers
        .get(header::USER_AGENT)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let prefix: String = ua
        .split('/')
        .next()
        .unwrap_or_default()
        .chars()
        .take(128)
        .collect();
    if prefix.is_empty() {
        "unknown".into()
    } else {
        prefix
    }
}

/// kube-apiserver's NamespaceLifecycle admission: new objects need an existing namespace
/// that is not being deleted (`404 NotFound` / `403 Forbidden`). Upstream:
/// `plugin/pkg/admission/namespace/lifecycle/admission.go`.
fn check_namespace(s: &Store, t: &TypeRef, ns: &str, name: &str) -> Result<(), ApiError> {
    if !t.namespaced {
        return Ok(());
    }
    match s.namespace_state(ns) {
        NamespaceState::Active => Ok(()),
        NamespaceState::Missing => Err(ApiError::new(
            404,
            "NotFound",
            format!("namespaces {ns:?} not found"),
        )),
        NamespaceState::Terminating => Err(ApiError::forbidden(
            t,
            name,
            &format!("unable to create new content in namespace {ns} because it is being terminated"),
        )),
    }
}

/// `422 Invalid` for the list options, as kube-apiserver's `ValidateListOptions` answers.
fn invalid_list_options(field: &str, reason: &str, message: &str) -> ApiError {
    ApiError::new(
        422,
        "Invalid",
        format!("ListOptions.meta.k8s.io \"\" is invalid: {field}: {message}"),
    )
    .with_details(json!({"group": "meta.k8s.io", "kind": "ListOptions", "causes": [
        {"reason": reason, "message": message, "field": field}]}))
}

/// The version a list must be served at: `Some(rv)` for `resourceVersionMatch=Exact`, `None`
/// for the latest (no match, `NotOlderThan`, or a plain `resourceVersion`).
///
/// # Errors
/// `422 Invalid` for a match without a resourceVersion or an unknown match; `504 Timeout`
/// for a resourceVersion the store has not reached (kube-apiserver waits ~3 s first).
fn list_version(query: &BTreeMap<String, String>, current: u64) -> Result<Option<u64>, ApiError> {
    let rv = query.get("resourceVersion").map(String::as_str).unwrap_or("");
    let m = query
        .get("resourceVersionMatch")
        .map(String::as_str)
        .unwrap_or("");
    if !matches!(m, "" | "Exact" | "NotOlderThan") {
        return Err(invalid_list_options(
            "resourceVersionMatch",
            "FieldValueNotSupported",
            &format!("Unsupported value: {m:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""),
        ));
    }
    if !m.is_empty() && rv.is_empty() {
        return Err(invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ));
    }
    if rv.is_empty() || rv == "0" {
        return Ok(None);
    }
    let n = rv
        .parse::<u64>()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv:?}")))?;
    if n > current {
        return Err(ApiError::new(
            504,
            "Timeout",
            format!("Timeout: Too large resource version: {n}, current: {current}"),
        )
        .with_details(json!({"causes": [{"reason": "ResourceVersionTooLarge",
            "message": "Too large resource version"}], "retryAfterSeconds": 1})));
    }
    Ok((m == "Exact").then_some(n))
}

/// The objects of `t` (in `ns`) as they were at resourceVersion `rv`: the current ones with
/// the later changes undone from the event log.
///
/// # Errors
/// `410 Expired` when the log no longer reaches back to `rv` (etcd compacted it).
fn objects_at(store: &Store, t: &TypeRef, ns: Option<&str>, rv: u64) -> Result<Vec<Arc<Stored>>, ApiError> {
    if rv < store.oldest_watchable() {
        return Err(ApiError::new(
            410,
            "Expired",
            "The resourceVersion for the provided list is too old.",
        ));
    }
    let key = |o: &Stored| (o.namespace().to_owned(), o.name().to_owned());
    let mut objects: BTreeMap<(String, String), Arc<Stored>> = store
        .list_stored(t, ns)
        .into_iter()
        .map(|o| (key(o), o.clone()))
        .collect();
    let later: Vec<_> = store.events_since(rv).filter(|e| e.concerns(t)).collect();
    for e in later.into_iter().rev() {
        let key = key(&e.object);
        if ns.is_some_and(|n| n != key.0) {
            continue;
        }
        match (e.event_type, &e.previous) {
            (EventType::Added, _) => {
                objects.remove(&key);
            }
            (_, Some(before)) => {
                objects.insert(key, before.clone());
            }
            (_, None) => {
                objects.insert(key, e.object.clone());
            }
        }
    }
    Ok(objects.into_values().collect())
}

/// The health checks a simulator has, as kube-apiserver names them in `?verbose` answers.
const HEALTH_CHECKS: [&str; 2] = ["ping", "log"];

/// kube-apiserver's `/healthz`, `/livez` and `/readyz` (and `/<endpoint>/<check>`): `ok`
/// as `text/plain`, or with `?verbose` one `[+]<check> ok` line per check and
/// `<endpoint> check passed`; an unknown check is `404`. `None` for every other path.
/// Upstream: `staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go`.
fn health(path: &str, query: &BTreeMap<String, String>) -> Option<Result<Reply, ApiError>> {
    let trimmed = path.trim_end_matches('/');
    let mut parts = trimmed.trim_start_matches('/').splitn(2, '/');
    let endpoint = parts.next()?;
    if !matches!(endpoint, "healthz" | "livez" | "readyz") {
        return None;
    }
    Some(match parts.next() {
        None if query.contains_key("verbose") => {
            let mut text: String = HEALTH_CHECKS.iter().map(|c| format!("[+]{c} ok\n")).collect();
            text.push_str(&format!("{endpoint} check passed\n"));
            Ok(Reply::Text(200, text))
        }
        None => Ok(Reply::Text(200, "ok".into())),
        Some(check) if HEALTH_CHECKS.contains(&check) => Ok(Reply::Text(200, "ok".into())),
        Some(_) => Err(not_found_path()),
    })
}

/// What a DELETE's body (`meta/v1` `DeleteOptions`, as kubectl and client-go send it) or
/// its `?dryRun=All` asks for: a dry run, and the object's expected `uid` and
/// `resourceVersion`. `gracePeriodSeconds` and `propagationPolicy` are accepted and have no
/// effect (the simulator has no kubelet and removes dependants itself).
/// Upstream: `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go` (`Delete`,
/// `checkPreconditions`: `storage.NewInvalidObjError` wrapped in a `409 Conflict`).
#[derive(Debug, Default)]
struct DeleteOptions {
    dry_run: bool,
    uid: Option<String>,
    resource_version: Option<String>,
}

impl DeleteOptions {
    /// Reads a DELETE body (empty, or a JSON `DeleteOptions`); `query_dry_run` is the URL's
    /// `?dryRun=All`.
    ///
    /// # Errors
    /// `400 BadRequest` for a body that is not a JSON object, or `dryRun` values other than
    /// `All`.
    fn parse(body: &[u8], query_dry_run: bool) -> Result<Self, ApiError> {
        let mut o = Self {
            dry_run: query_dry_run,
            ..Self::default()
        };
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(o);
        }
        let v = parse_body(body)?;
        if let Some(d) = v.get("dryRun").and_then(Value::as_array) {
            for x in d {
                match x.as_str() {
                    Some("All") => o.dry_run = true,
                    other => {
                        return Err(ApiError::bad_request(format!(
                            "dryRun: Unsupported value: {}: supported values: \"All\"",
                            Value::from(other.unwrap_or_default())
                        )));
                    }
                }
            }
        }
        let pre = &v["preconditions"];
        o.uid = pre["uid"].as_str().map(str::to_owned);
        o.resource_version = pre["resourceVersion"].as_str().map(str::to_owned);
        Ok(o)
    }

    /// `409 Conflict` when the stored object is not the one the preconditions name, in
    /// kube-apiserver's words.
    fn check_preconditions(&self, t: &TypeRef, name: &str, current: &Value) -> Result<(), ApiError> {
        let record = |f: &str| current["metadata"][f].as_str().unwrap_or_default().to_owned();
        let problem = if let Some(uid) = self.uid.as_deref()
            && uid != record("uid")
        {
            Some(format!(
                "the UID in the precondition ({uid}) does not match the UID in record ({}). \
                 The object might have been deleted and then recreated",
                record("uid")
            ))
        } else if let Some(rv) = self.resource_version.as_deref()
            && rv != record("resourceVersion")
        {
            Some(format!(
                "the ResourceVersion in the precondition ({rv}) does not match the \
                 ResourceVersion in record ({}). The object might have been modified",
                record("resourceVersion")
            ))
        } else {
            None
        };
        match problem {
            None => Ok(()),
            Some(p) => {
                let mut details = json!({"name": name, "kind": t.kind});
                if !t.group.is_empty() {
                    details["group"] = json!(t.group);
                }
                Err(ApiError::new(
                    409,
                    "Conflict",
                    format!(
                        "Operation cannot be fulfilled on {} {name:?}: {p}",
                        t.qualified_kind()
                    ),
                )
                .with_details(details))
            }
        }
    }
}

fn method_not_allowed(_m: &Method) -> ApiError {
    ApiError::new(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
    .with_details(json!({}))
}

fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(ApiError::bad_request("the request body is not a JSON object"));
    }
    Ok(v)
}

/// The path of SelfSubjectAccessReviews (`kubectl auth can-i`).
const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

/// A SelfSubjectAccessReview answered as the simulator's one user, an administrator, is
/// answered: allowed (kube-apiserver's answer to `system:masters`, whose authorizer gives no
/// reason). Nothing is stored. The body is JSON, YAML (already converted) or protobuf.
///
/// # Errors
/// `400` for a body that does not decode or is of another kind; `422 Invalid` when the spec
/// names neither or both of `resourceAttributes` and `nonResourceAttributes` (upstream:
/// `ValidateSelfSubjectAccessReviewSpec` in `pkg/apis/authorization/validation/validation.go`).
fn access_review(parts: &http::request::Parts, body: &[u8]) -> Result<Reply, ApiError> {
    const API_VERSION: &str = "authorization.k8s.io/v1";
    const KIND: &str = "SelfSubjectAccessReview";
    let review: Value = if media::is_protobuf(parts, body) {
        super::protobuf::decode(body, API_VERSION, KIND)?
    } else {
        serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "SelfSubjectAccessReview in version \"v1\" cannot be handled as a \
                 SelfSubjectAccessReview: {e}"
            ))
        })?
    };
    let kind = review["kind"].as_str().unwrap_or(KIND);
    let api_version = review["apiVersion"].as_str().unwrap_or(API_VERSION);
    if (kind, api_version) != (KIND, API_VERSION) {
        let version = api_version.rsplit('/').next().unwrap_or_default();
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {KIND}: no kind \"{kind}\" is \
             registered for version \"{api_version}\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        )));
    }
    let spec = review.get("spec").cloned().unwrap_or_else(|| json!({}));
    let resource = spec.get("resourceAttributes").is_some_and(|a| !a.is_null());
    let non_resource = spec.get("nonResourceAttributes").is_some_and(|a| !a.is_null());
    if resource == non_resource {
        // kube-apiserver names the kind of this error with an empty kind.
        let text = if resource {
            let nra = &spec["nonResourceAttributes"];
            let (path, verb) = (&nra["path"], &nra["verb"]);
            let s = |v: &Value| Value::String(v.as_str().unwrap_or_default().to_owned());
            format!(
                "spec.nonResourceAttributes: Invalid value: {{\"Path\":{},\"Verb\":{}}}: cannot be \
                 specified in combination with resourceAttributes",
                s(path),
                s(verb)
            )
        } else {
            "spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or \
             resourceAttributes must be specified"
                .to_owned()
        };
        return Err(ApiError::new(
            422,
            "Invalid",
            format!(".authorization.k8s.io \"\" is invalid: {text}"),
        ));
    }
    Ok(Reply::Json(
        201,
        json!({
            "kind": KIND, "apiVersion": API_VERSION, "metadata": {},
            "spec": spec, "status": {"allowed": true},
        }),
    ))
}
