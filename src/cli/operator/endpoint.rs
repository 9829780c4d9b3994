//! The operator's HTTP(S) endpoint (`--listen`, upstream's `0.0.0.0:9099`): `/metrics` in the
//! OpenMetrics text format, `/readyz` and `/healthz` (200 `ok`, or 503 with one reason per
//! line). HTTPS when `--serving-cert-file` and `--serving-key-file` are given (rustls, ring),
//! plain HTTP otherwise. Upstream also puts `/metrics` behind Kubernetes authentication and
//! authorization (`pkg/cvo/metrics.go` in openshift/cluster-version-operator); here the
//! Service and NetworkPolicy of `install/` limit who reaches it.

use std::{convert::Infallible, net::SocketAddr, path::Path, sync::Arc};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper_util::rt::TokioIo;

use super::health::Health;
use crate::reconcile::metrics::{CONTENT_TYPE, Metrics};

/// What the server answers from.
#[derive(Clone)]
pub struct State {
    /// The metrics registry.
    pub metrics: Metrics,
    /// Readiness and liveness inputs.
    pub health: Arc<Health>,
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

/// The TLS configuration from a PEM certificate chain and key.
///
/// # Errors
/// One line naming the file that cannot be read or holds no usable certificate or key.
pub fn tls_config(cert: &Path, key: &Path) -> anyhow::Result<rustls::ServerConfig> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject as _};
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| anyhow::anyhow!("--serving-cert-file {}: {e}", cert.display()))?;
    if certs.is_empty() {
        anyhow::bail!("--serving-cert-file {}: no certificate in it", cert.display());
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| anyhow::anyhow!("--serving-key-file {}: {e}", key.display()))?;
    rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow::anyhow!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| anyhow::anyhow!("--serving-cert-file {}: {e}", cert.display()))
}

/// A bound listener: its address (the port chosen when `--listen` asked for port 0).
pub struct Server {
    listener: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

impl Server {
    /// Binds `addr`, with TLS when `tls` is given.
    ///
    /// # Errors
    /// `--listen ADDR: ...` when the address cannot be bound.
    pub async fn bind(addr: SocketAddr, tls: Option<rustls::ServerConfig>) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("--listen {addr}: {e}"))?;
        Ok(Self {
            listener,
            tls: tls.map(|c| tokio_rustls::TlsAcceptor::from(Arc::new(c))),
        })
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
            let tls = self.tls.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let r = answer(&state, req.method(), req.uri().path());
                    async move { Ok::<_, Infallible>(r) }
                });
                let http = hyper::server::conn::http1::Builder::new();
                let res = match tls {
                    Some(acc) => match acc.accept(tcp).await {
                        Ok(s) => http.serve_connection(TokioIo::new(s), svc).await,
                        Err(e) => {
                            tracing::debug!("metrics endpoint: TLS handshake: {e}");
                            return;
                        }
                    },
                    None => http.serve_connection(TokioIo::new(tcp), svc).await,
                };
                if let Err(e) = res {
                    tracing::debug!("metrics endpoint: connection: {e}");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_answer_with_codes_and_reasons() {
        let state = State {
            metrics: Metrics::new(),
            health: Arc::new(Health::default()),
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
        let tls = tls_config(&cert, &key).expect("TLS config");
        let server = Server::bind("127.0.0.1:0".parse().expect("addr"), Some(tls))
            .await
            .expect("bind");
        assert_eq!(server.scheme(), "https");
        let addr = server.local_addr().expect("addr");
        let state = State {
            metrics: Metrics::new(),
            health: Arc::new(Health::default()),
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
        let e = tls_config(&cert, &dir.path().join("tls.key"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.starts_with(&format!("--serving-cert-file {}: no certificate", cert.display())),
            "{e}"
        );
    }
}
