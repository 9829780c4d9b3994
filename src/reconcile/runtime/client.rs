//! Client wrappers of the engine: a request counter by Kubernetes verb, and the watch-only
//! guard that refuses every non-read HTTP method before it leaves the process
//! (docs/architecture.md, "Layers and the allowed arrows").
//!
//! Both wrap an existing [`kube::Client`] as a tower service (`Client::send`) and build a new
//! client over it, so they work for kubeconfig clients and the simulator alike.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

use http::{Method, Request, Response};
use kube::{Client, client::Body};

/// Requests counted by verb, shared by clones.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestCounters {
    by_verb: Arc<Mutex<BTreeMap<String, u64>>>,
    refused: Arc<AtomicU64>,
    lease_writes: Arc<AtomicU64>,
}

impl RequestCounters {
    /// Requests per verb so far.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        self.by_verb
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Write requests sent to `coordination.k8s.io` Leases (the CVO Lease's take, renewals and
    /// release).
    pub fn lease_writes(&self) -> u64 {
        self.lease_writes.load(Ordering::Relaxed)
    }

    /// Non-read requests the watch-only guard refused.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    fn add(&self, verb: &str) {
        *self
            .by_verb
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(verb.to_string())
            .or_default() += 1;
    }
}

/// Whether a verb writes.
pub fn is_write_verb(v: &str) -> bool {
    matches!(v, "create" | "update" | "patch" | "delete" | "deletecollection")
}

/// The Kubernetes verb of a request: `discovery` (`/api`, `/apis`, group and group-version
/// documents), `watch` (`?watch=`), `list` / `get` by whether the path names an object,
/// `create`, `update`, `patch`, `delete` (`deletecollection` for a collection).
pub(crate) fn verb_of(method: &Method, path: &str, query: &str) -> &'static str {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let rest: &[&str] = match segs.as_slice() {
        ["api", _v, rest @ ..] => rest,
        ["apis", _g, _v, rest @ ..] => rest,
        _ => &[],
    };
    if rest.is_empty() {
        return if *method == Method::GET {
            "discovery"
        } else {
            "unknown"
        };
    }
    let named = match rest {
        ["namespaces", ..] => rest.len() == 2 || rest.len() >= 4,
        _ => rest.len() >= 2,
    };
    let watch = query.split('&').any(|kv| kv == "watch=true" || kv == "watch=1");
    match *method {
        Method::GET if watch => "watch",
        Method::GET if named => "get",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => "unknown",
    }
}

fn is_read(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// A switch that makes a [`guarded_client`] refuse writes; shared by clones.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReadOnlySwitch(Arc<AtomicBool>);

impl ReadOnlySwitch {
    /// A switch in the given position.
    pub fn new(read_only: bool) -> Self {
        Self(Arc::new(AtomicBool::new(read_only)))
    }
    /// Turns refusing on or off.
    pub fn set(&self, read_only: bool) {
        self.0.store(read_only, Ordering::SeqCst);
    }
    /// Whether writes are refused.
    pub(crate) fn is_read_only(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

fn refusal(method: &Method, path: &str) -> Response<Body> {
    let status = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("cvo is watch-only: refusing {method} {path}"),
        "reason": "MethodNotAllowed",
        "code": 405,
    });
    let mut r = Response::new(Body::from(status.to_string().into_bytes()));
    *r.status_mut() = http::StatusCode::METHOD_NOT_ALLOWED;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

/// `client` wrapped so that every request is counted in `counters`, carries cvo's
/// `User-Agent` ([`crate::user_agent`], unless the request has one) and, while `read_only` is
/// on, every non-read method (POST, PUT, PATCH, DELETE) is answered locally with a 405
/// `MethodNotAllowed` Status and never sent.
pub(crate) fn guarded_client(client: Client, counters: RequestCounters, read_only: ReadOnlySwitch) -> Client {
    let ns = client.default_namespace().to_string();
    let agent = http::HeaderValue::from_str(&crate::user_agent()).ok();
    let svc = tower::service_fn(move |mut req: Request<Body>| {
        if let Some(a) = &agent
            && !req.headers().contains_key(http::header::USER_AGENT)
        {
            req.headers_mut().insert(http::header::USER_AGENT, a.clone());
        }
        let client = client.clone();
        let counters = counters.clone();
        let read_only = read_only.clone();
        async move {
            let method = req.method().clone();
            let path = req.uri().path().to_string();
            let query = req.uri().query().unwrap_or_default().to_string();
            if read_only.is_read_only() && !is_read(&method) {
                counters.refused.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("watch-only: refused {method} {path}");
                return Ok::<_, kube::Error>(refusal(&method, &path));
            }
            let verb = verb_of(&method, &path, &query);
            if is_write_verb(verb) && path.starts_with("/apis/coordination.k8s.io/") {
                counters.lease_writes.fetch_add(1, Ordering::Relaxed);
            }
            counters.add(verb);
            client.send(req).await
        }
    });
    Client::new(svc, ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_carry_the_user_agent() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let inner = Client::new(
            tower::service_fn(move |req: Request<Body>| {
                let ua = req.headers().get(http::header::USER_AGENT).cloned();
                s2.lock()
                    .expect("lock")
                    .push(ua.map(|v| v.to_str().unwrap_or_default().to_owned()));
                async move {
                    let mut r = Response::new(Body::from(br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}"#.to_vec()));
                    *r.status_mut() = http::StatusCode::NOT_FOUND;
                    Ok::<_, std::convert::Infallible>(r)
                }
            }),
            "default",
        );
        let c = guarded_client(inner, RequestCounters::default(), ReadOnlySwitch::new(false));
        let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::namespaced(c, "a");
        assert!(api.get_opt("b").await.expect("404 is None").is_none());
        let want = crate::user_agent();
        assert!(
            want.starts_with(&format!("cvo/{} (", env!("CARGO_PKG_VERSION"))) && want.ends_with(')'),
            "{want}"
        );
        assert_eq!(*seen.lock().expect("lock"), vec![Some(want)]);
    }

    #[test]
    fn verbs_from_paths() {
        let g = Method::GET;
        assert_eq!(verb_of(&g, "/api", ""), "discovery");
        assert_eq!(verb_of(&g, "/apis/apps/v1", ""), "discovery");
        assert_eq!(verb_of(&g, "/api/v1/namespaces", ""), "list");
        assert_eq!(verb_of(&g, "/api/v1/namespaces/a", ""), "get");
        assert_eq!(verb_of(&g, "/api/v1/namespaces/a/configmaps", ""), "list");
        assert_eq!(verb_of(&g, "/api/v1/namespaces/a/configmaps/b", ""), "get");
        assert_eq!(
            verb_of(&g, "/api/v1/namespaces/a/configmaps", "watch=true&x=1"),
            "watch"
        );
        assert_eq!(
            verb_of(&g, "/apis/config.openshift.io/v1/clusterversions/version", ""),
            "get"
        );
        assert_eq!(
            verb_of(
                &Method::PUT,
                "/apis/config.openshift.io/v1/clusterversions/version/status",
                ""
            ),
            "update"
        );
        assert_eq!(verb_of(&Method::POST, "/api/v1/namespaces", ""), "create");
        assert_eq!(verb_of(&Method::PATCH, "/api/v1/namespaces/a", ""), "patch");
        assert_eq!(
            verb_of(&Method::DELETE, "/api/v1/namespaces/a/pods", ""),
            "deletecollection"
        );
        assert_eq!(
            verb_of(&Method::DELETE, "/api/v1/namespaces/a/pods/p", ""),
            "delete"
        );
    }
}
