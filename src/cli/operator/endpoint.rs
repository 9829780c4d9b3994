//! The operator's HTTP(S) endpoint (`--listen`, upstream's `0.0.0.0:9099`): `/metrics` in the
//! OpenMetrics text format, `/readyz` and `/healthz` (200 `ok`, or 503 with one reason per
//! line). HTTPS with `--serving-cert-file` and `--serving-key-file` (rustls, ring; reloaded on
//! change, [`super::tls_files`]); plain HTTP only with `--insecure-http`. As upstream's
//! (`pkg/cvo/metrics.go` in openshift/cluster-version-operator), `/metrics` answers only
//! authenticated and authorized scrapers ([`super::scrape_auth`]) unless `--metrics-auth none`;
//! `/readyz` and `/healthz` stay open for the kubelet's probes.

use std::{convert::Infallible, net::SocketAddr, sync::Arc};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper_util::rt::TokioIo;

use super::{
    health::Health,
    scrape_auth::{CertIdentity, ScrapeAuth, Verdict},
    tls_files::LiveTls,
};
use crate::reconcile::metrics::{CONTENT_TYPE, Metrics};

/// What the server answers from.
#[derive(Clone)]
pub struct State {
    /// The metrics registry.
    pub metrics: Metrics,
    /// Readiness and liveness inputs.
    pub health: Arc<Health>,
    /// Who may read `/metrics`; `None` (`--metrics-auth none`): anyone.
    pub auth: Option<Arc<ScrapeAuth>>,
}

fn text(code: StatusCode, ctype: &'static str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = code;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(ctype));
    r
}

fn verdict(reasons: Vec<String>) -> Response<Full<Bytes>> {
    if reasons.is_empty() {
        text(StatusCode::OK, "text/plain; charset=utf-8", "ok\n".into())
    } else {
        text(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain; charset=utf-8",
            reasons.join("\n") + "\n",
        )
    }
}

/// Answers one request.
pub fn answer(state: &State, method: &Method, path: &str) -> Response<Full<Bytes>> {
    if method != Method::GET && method != Method::HEAD {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            "only GET\n".into(),
        );
    }
    match path {
        "/metrics" => {
            // `cvo_ready` says what `/readyz` would answer now, whether or not anything asks it.
            state.metrics.set_ready(state.health.get().not_ready().is_empty());
            text(StatusCode::OK, CONTENT_TYPE, state.metrics.encode())
        }
        "/readyz" | "/readyz/" => {
            let why = state.health.get().not_ready();
            state.metrics.set_ready(why.is_empty());
            verdict(why)
        }
        "/healthz" | "/healthz/" | "/livez" => verdict(state.health.get().not_live()),
        _ => text(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "not found; try /metrics, /readyz or /healthz\n".into(),
        ),
    }
}

/// Answers one request, checking the caller first for `/metrics` when [`State::auth`] is set.
/// `cert` is the subject of the client certificate the TLS handshake verified.
pub async fn respond(
    state: &State,
    method: &Method,
    path: &str,
    authorization: Option<&header::HeaderValue>,
    cert: Option<&CertIdentity>,
) -> Response<Full<Bytes>> {
    if path == "/metrics"
        && (method == Method::GET || method == Method::HEAD)
        && let Some(auth) = &state.auth
    {
        let plain = "text/plain; charset=utf-8";
        match auth.check(cert, super::scrape_auth::bearer(authorization)).await {
            Verdict::Allowed => {}
            Verdict::Unauthenticated(why) => {
                let mut r = text(StatusCode::UNAUTHORIZED, plain, format!("Unauthorized: {why}\n"));
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer"),
                );
                return r;
            }
            Verdict::Forbidden(user) => {
                return text(
                    StatusCode::FORBIDDEN,
                    plain,
                    format!("Forbidden: {user:?} may not get the non-resource URL /metrics\n"),
                );
            }
            Verdict::Unavailable(why) => {
                return text(StatusCode::SERVICE_UNAVAILABLE, plain, why);
            }
        }
    }
    answer(state, method, path)
}

/// How long a client may take to finish the TLS handshake, and to send its request headers.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A bound listener: its address (the port chosen when `--listen` asked for port 0).
pub struct Server {
    listener: tokio::net::TcpListener,
    tls: Option<LiveTls>,
}

impl Server {
    /// Binds `addr`, with TLS when `tls` is given (each connection uses its current
    /// configuration).
    ///
    /// # Errors
    /// `--listen ADDR: ...` when the address cannot be bound.
    pub async fn bind(addr: SocketAddr, tls: Option<LiveTls>) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("--listen {addr}: {e}"))?;
        Ok(Self { listener, tls })
    }

    /// The bound address.
    ///
    /// # Errors
    /// The socket has no local address.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// `https` or `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Serves until the task is dropped.
    pub async fn serve(self, state: State) {
        loop {
            let (tcp, _) = match self.listener.accept().await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!("metrics endpoint: accept: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let state = state.clone();
            let tls = self.tls.as_ref().map(LiveTls::acceptor);
            tokio::spawn(async move {
                let mut http = hyper::server::conn::http1::Builder::new();
                // A client that never finishes its request headers does not hold a task forever.
                http.timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(HANDSHAKE_TIMEOUT);
                let res = match tls {
                    Some(acc) => match tokio::time::timeout(HANDSHAKE_TIMEOUT, acc.accept(tcp))
                        .await
                        .unwrap_or_else(|_| Err(std::io::Error::other("no handshake within 10s")))
                    {
                        Ok(s) => {
                            let cert = s
                                .get_ref()
                                .1
                                .peer_certificates()
                                .and_then(|c| c.first())
                                .and_then(|c| CertIdentity::from_der(c));
                            http.serve_connection(TokioIo::new(s), service(state, cert)).await
                        }
                        Err(e) => {
                            tracing::debug!("metrics endpoint: TLS handshake: {e}");
                            return;
                        }
                    },
                    None => {
                        http.serve_connection(TokioIo::new(tcp), service(state, None))
                            .await
                    }
                };
                if let Err(e) = res {
                    tracing::debug!("metrics endpoint: connection: {e}");
                }
            });
        }
    }
}

/// The per-connection service: `cert` is the verified client certificate's subject.
fn service(
    state: State,
    cert: Option<CertIdentity>,
) -> impl hyper::service::Service<
    Request<hyper::body::Incoming>,
    Response = Response<Full<Bytes>>,
    Error = Infallible,
    Future = impl Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send,
> + Clone {
    let cert = cert.map(Arc::new);
    hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let state = state.clone();
        let cert = cert.clone();
        async move {
            let r = respond(
                &state,
                req.method(),
                req.uri().path(),
                req.headers().get(header::AUTHORIZATION),
                cert.as_deref(),
            )
            .await;
            Ok::<_, Infallible>(r)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_answer_with_codes_and_reasons() {
        let state = State {
            metrics: Metrics::new(),
            health: Arc::new(Health::default()),
            auth: None,
        };
        let r = answer(&state, &Method::GET, "/readyz");
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(answer(&state, &Method::GET, "/healthz").status(), StatusCode::OK);
        let m = answer(&state, &Method::GET, "/metrics");
        assert_eq!(m.status(), StatusCode::OK);
        assert_eq!(m.headers()[header::CONTENT_TYPE], CONTENT_TYPE);
        assert_eq!(answer(&state, &Method::GET, "/x").status(), StatusCode::NOT_FOUND);
        assert_eq!(
            answer(&state, &Method::POST, "/metrics").status(),
            StatusCode::METHOD_NOT_ALLOWED
        );
    }

    /// `cvo_ready` follows readiness at every scrape, without any `/readyz` request.
    #[test]
    fn cvo_ready_follows_readiness_without_readyz_requests() {
        let state = State {
            metrics: Metrics::new(),
            health: Arc::new(Health::default()),
            auth: None,
        };
        let ready = |state: &State| {
            let body = answer(state, &Method::GET, "/metrics").into_body();
            let bytes = futures::executor::block_on(http_body_util::BodyExt::collect(body))
                .map(http_body_util::Collected::to_bytes)
                .unwrap_or_default();
            String::from_utf8_lossy(&bytes)
                .lines()
                .find_map(|l| l.strip_prefix("cvo_ready ").map(str::to_string))
        };
        assert_eq!(ready(&state).as_deref(), Some("0"));
        state.health.update(|h| {
            h.api = Some(Ok(()));
            h.feed = crate::cluster::FeedStatus::Live {
                synced: true,
                error: None,
            };
            h.mode = crate::reconcile::api::EngineMode::ActiveApply;
            h.leader = true;
        });
        assert_eq!(ready(&state).as_deref(), Some("1"));
        state.health.update(|h| h.api = Some(Err("refused".into())));
        assert_eq!(ready(&state).as_deref(), Some("0"));
    }

    /// HTTPS with a certificate from files: a client that trusts it gets `/healthz`.
    #[cfg(feature = "sim")]
    #[tokio::test]
    async fn serves_https_with_the_given_certificate() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("cert");
        let dir = tempfile::tempdir().expect("tempdir");
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        std::fs::write(&cert, ck.cert.pem()).expect("write");
        std::fs::write(&key, ck.signing_key.serialize_pem()).expect("write");
        let reloader = super::super::tls_files::Reloader::load(&cert, &key).expect("TLS config");
        let server = Server::bind("127.0.0.1:0".parse().expect("addr"), Some(reloader.live()))
            .await
            .expect("bind");
        assert_eq!(server.scheme(), "https");
        let addr = server.local_addr().expect("addr");
        let state = State {
            metrics: Metrics::new(),
            health: Arc::new(Health::default()),
            auth: None,
        };
        let task = tokio::spawn(server.serve(state));
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ck.cert.der().clone()).expect("root");
        let client =
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
        let conn = tokio_rustls::TlsConnector::from(Arc::new(client));
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
        let mut s = conn.connect(name, tcp).await.expect("TLS handshake");
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .expect("write");
        let mut resp = String::new();
        s.read_to_string(&mut resp).await.expect("read");
        assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
        assert!(resp.ends_with("\r\n\r\nok\n"), "{resp}");
        // Plain HTTP to the TLS port gets no answer.
        let mut plain = tokio::net::TcpStream::connect(addr).await.expect("connect");
        plain
            .write_all(b"GET /healthz HTTP/1.1\r\n\r\n")
            .await
            .expect("write");
        let mut buf = Vec::new();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), plain.read_to_end(&mut buf)).await;
        assert!(!String::from_utf8_lossy(&buf).contains("200 OK"));
        task.abort();
    }

    #[test]
    fn bad_cert_files_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cert = dir.path().join("tls.crt");
        std::fs::write(&cert, "not pem").expect("write");
        std::fs::write(dir.path().join("tls.key"), "not pem").expect("write");
        let e = super::super::tls_files::tls_config(&cert, &dir.path().join("tls.key"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.starts_with(&format!("--serving-cert-file {}: no certificate", cert.display())),
            "{e}"
        );
    }
}
