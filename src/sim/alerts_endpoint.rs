//! The simulated cluster's Thanos querier for `cvo sim serve --alerts FILE`: a second HTTPS
//! listener on 127.0.0.1 (the API server's certificate, so the kubeconfig's CA trusts it)
//! answering `GET /api/v1/alerts` with the file (a Prometheus alerts response) to requests
//! that carry the API server's bearer token, and the Route `openshift-monitoring/thanos-querier`
//! (with its CRD) whose `status.ingress[0].host` names the listener, which is where `oc adm
//! upgrade recommend` and `cvo upgrade recommend` look for the cluster's alerts.

use std::{convert::Infallible, sync::Arc};

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use serde_json::json;

use super::Simulator;

/// Namespace and name of the Route of the cluster's Thanos querier.
pub const ROUTE: (&str, &str) = ("openshift-monitoring", "thanos-querier");

/// Starts the listener and creates the Route (and its CRD, and the namespace when absent).
/// Returns the `host:port` it listens on. Must run inside a tokio runtime.
///
/// # Errors
/// The port cannot be bound; the simulator refuses the CRD or the Route.
pub async fn start(
    sim: &Simulator,
    acceptor: tokio_rustls::TlsAcceptor,
    token: Arc<str>,
    alerts: Bytes,
) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let host = format!("127.0.0.1:{}", listener.local_addr()?.port());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, token, alerts) = (acceptor.clone(), token.clone(), alerts.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let svc = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let ok = req
                        .headers()
                        .get(header::AUTHORIZATION)
                        .and_then(|h| h.to_str().ok())
                        .and_then(|h| h.strip_prefix("Bearer "))
                        .is_some_and(|t| t.trim() == &*token);
                    let (status, body) = if !ok {
                        (StatusCode::UNAUTHORIZED, Bytes::from_static(b"Unauthorized\n"))
                    } else if req.method() == http::Method::GET && req.uri().path() == "/api/v1/alerts" {
                        (StatusCode::OK, alerts.clone())
                    } else {
                        (StatusCode::NOT_FOUND, Bytes::from_static(b"404 page not found\n"))
                    };
                    let mut r = Response::new(Full::new(body));
                    *r.status_mut() = status;
                    r.headers_mut().insert(
                        header::CONTENT_TYPE,
                        http::HeaderValue::from_static("application/json"),
                    );
                    async move { Ok::<_, Infallible>(r) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    let (ns, name) = ROUTE;
    let insert = |obj: serde_json::Value, what: &str| {
        sim.insert(obj)
            .map_err(|e| anyhow::anyhow!("--alerts: creating {what}: {}", e.message))
    };
    if sim.find_kind("route.openshift.io/v1", "Route").is_none() {
        insert(route_crd(), "the Route CRD")?;
    }
    if sim.get("", "namespaces", "", ns).is_none() {
        insert(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
            "the namespace",
        )?;
    }
    insert(
        json!({
            "apiVersion": "route.openshift.io/v1",
            "kind": "Route",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"host": host, "port": {"targetPort": "web"}, "tls": {"termination": "reencrypt"},
                     "to": {"kind": "Service", "name": name}},
            "status": {"ingress": [{"host": host, "routerName": "default",
                       "conditions": [{"type": "Admitted", "status": "True"}]}]},
        }),
        "the Route",
    )?;
    Ok(host)
}

/// A CRD serving `routes.route.openshift.io/v1` (with a status subresource), in place of the
/// aggregated API OpenShift serves them from.
fn route_crd() -> serde_json::Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "routes.route.openshift.io"},
        "spec": {
            "group": "route.openshift.io",
            "scope": "Namespaced",
            "names": {"plural": "routes", "singular": "route", "kind": "Route", "listKind": "RouteList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    })
}
