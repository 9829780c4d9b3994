//! The simulated cluster's update service and Prometheus, on one loopback HTTP port: `GET
//! /graph` answers a fixed Cincinnati graph (whatever the query), `GET /api/v1/query?query=Q`
//! answers like a Prometheus query API from a table of query → value (an unknown query is a
//! `400` `bad_data` error). The live demo points the engine's update-service client and its
//! PromQL evaluation here.

use std::{collections::BTreeMap, convert::Infallible, net::SocketAddr, sync::Arc};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, body::Incoming};
use hyper_util::rt::TokioIo;

/// What the stub serves.
#[derive(Clone, Debug, Default)]
pub struct StubContent {
    /// The `/graph` body (JSON).
    pub graph: Bytes,
    /// PromQL query → the single sample's value.
    pub promql: BTreeMap<String, f64>,
}

/// A running stub; dropping it stops the server.
#[derive(Debug)]
pub struct UpdateServiceStub {
    /// Where it listens.
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for UpdateServiceStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl UpdateServiceStub {
    /// Binds `127.0.0.1:0` and serves `content`. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// The port cannot be bound.
    pub fn start(content: StubContent) -> std::io::Result<Self> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        std_listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(std_listener)?;
        let addr = listener.local_addr()?;
        let content = Arc::new(content);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let c = content.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let c = c.clone();
                        async move { Ok::<_, Infallible>(answer(&c, &req)) }
                    });
                    if let Err(e) = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await
                    {
                        tracing::debug!("update-service stub connection: {e}");
                    }
                });
            }
        });
        Ok(Self { addr, task })
    }

    /// The update service URL (`http://127.0.0.1:PORT/graph`).
    pub fn graph_url(&self) -> String {
        format!("http://{}/graph", self.addr)
    }

    /// The Prometheus base URL (`http://127.0.0.1:PORT`).
    pub fn prometheus_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

fn answer(c: &StubContent, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let json = |status: u16, body: Bytes| {
        let mut r = Response::new(Full::new(body));
        *r.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::OK);
        r.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
        r
    };
    match req.uri().path() {
        "/graph" => json(200, c.graph.clone()),
        "/api/v1/query" => {
            let q = req
                .uri()
                .query()
                .and_then(|q| form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "query"))
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default();
            match c.promql.get(&q) {
                Some(v) => {
                    let body = serde_json::json!({
                        "status": "success",
                        "data": {"resultType": "vector", "result": [{"metric": {}, "value": [0, v.to_string()]}]}
                    });
                    json(200, Bytes::from(body.to_string()))
                }
                None => {
                    let body = serde_json::json!({
                        "status": "error", "errorType": "bad_data",
                        "error": format!("the simulated Prometheus has no answer for {q:?}")
                    });
                    json(400, Bytes::from(body.to_string()))
                }
            }
        }
        _ => json(404, Bytes::from_static(b"{\"error\":\"not found\"}")),
    }
}
