//! HTTP clients: the update-service graph request (upstream `pkg/cincinnati/cincinnati.go`
//! `GetUpdates`, transport from `pkg/cvo/egress.go` in openshift/cluster-version-operator) and
//! a Prometheus-compatible query API for PromQL risks (`pkg/clusterconditions/promql/promql.go`).
//!
//! Both use reqwest over rustls with the ring provider and the platform's roots plus an
//! optional extra CA bundle (PEM). A response body is read chunk by chunk and abandoned at
//! the size cap, whatever its `Content-Length` says.

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use reqwest::header::{ACCEPT, AUTHORIZATION, USER_AGENT};
use serde::Deserialize;

use super::{UpdateError, risks::PromQlEvaluator};
use crate::informers::error_chain;

/// The update service used when neither an override nor `spec.upstream` names one.
pub const DEFAULT_UPSTREAM: &str = "https://api.openshift.com/api/upgrades_info/v1/graph";
/// Upstream's timeout of one graph request (60 min).
pub const GRAPH_TIMEOUT: Duration = Duration::from_secs(3600);
/// Default cap on a graph response body (8 MiB; real channel graphs are well under 2 MiB).
pub const DEFAULT_MAX_BODY: usize = 8 << 20;

/// The cluster's egress proxy (config.openshift.io/v1 Proxy `cluster`, its status).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxySettings {
    /// Proxy for `http://` URLs.
    pub http_proxy: Option<String>,
    /// Proxy for `https://` URLs.
    pub https_proxy: Option<String>,
    /// Comma-separated hosts, domains and CIDRs that bypass the proxy.
    pub no_proxy: Option<String>,
}

/// How HTTP requests leave the process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Egress {
    /// The proxy; `None` ⇒ direct connections (the environment's proxy variables are ignored,
    /// as upstream only follows the cluster's Proxy).
    pub proxy: Option<ProxySettings>,
    /// Extra trusted CA certificates (PEM bundle), added to the platform's roots.
    pub ca_bundle: Option<Vec<u8>>,
}

/// A reqwest client for `egress` with `timeout`.
///
/// # Errors
/// A bad CA bundle or proxy URL, as one line.
pub fn http_client(egress: &Egress, timeout: Duration) -> Result<reqwest::Client, String> {
    http_client_builder(egress, timeout)?
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}

/// The builder behind [`http_client`], for a client that needs more (a DNS resolver).
///
/// # Errors
/// As [`http_client`].
fn http_client_builder(egress: &Egress, timeout: Duration) -> Result<reqwest::ClientBuilder, String> {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let extra: Vec<CertificateDer<'static>> = match &egress.ca_bundle {
        Some(pem) => CertificateDer::pem_slice_iter(pem)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("trusted CA bundle: {e}"))?,
        None => Vec::new(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = LazyVerifier {
        extra,
        provider: provider.clone(),
        inner: std::sync::OnceLock::new(),
    };
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    let mut b = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .timeout(timeout)
        .no_proxy();
    if let Some(p) = &egress.proxy {
        let np = p.no_proxy.as_deref().and_then(reqwest::NoProxy::from_string);
        if let Some(u) = p.http_proxy.as_deref().filter(|s| !s.is_empty()) {
            b = b.proxy(
                reqwest::Proxy::http(u)
                    .map_err(|e| format!("httpProxy {u:?}: {e}"))?
                    .no_proxy(np.clone()),
            );
        }
        if let Some(u) = p.https_proxy.as_deref().filter(|s| !s.is_empty()) {
            b = b.proxy(
                reqwest::Proxy::https(u)
                    .map_err(|e| format!("httpsProxy {u:?}: {e}"))?
                    .no_proxy(np),
            );
        }
    }
    Ok(b)
}

/// The platform's certificate verifier (the system's roots plus the trusted CA bundle), built
/// at the first TLS handshake instead of with the client: the system's roots take about
/// 170 KiB of heap, which a client that only ever speaks plain HTTP (an update service on
/// loopback, as in `cvo demo`) never needs. Signatures are checked with the provider's
/// algorithms, as the platform verifier checks them. A failure to load the roots fails each
/// handshake with `TLS roots: ...`.
#[derive(Debug)]
struct LazyVerifier {
    extra: Vec<rustls::pki_types::CertificateDer<'static>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
    inner: std::sync::OnceLock<Result<rustls_platform_verifier::Verifier, String>>,
}

impl rustls::client::danger::ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        let inner = self.inner.get_or_init(|| {
            rustls_platform_verifier::Verifier::new_with_extra_roots(
                self.extra.clone(),
                self.provider.clone(),
            )
            .map_err(|e| e.to_string())
        });
        match inner {
            Ok(v) => v.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now),
            Err(e) => Err(rustls::Error::General(format!("TLS roots: {e}"))),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// One graph request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphQuery {
    /// The update service URL (an existing query string is kept).
    pub upstream: String,
    /// `arch`: the cluster's architecture, `multi` for a Multi release or migration.
    pub arch: String,
    /// `channel`.
    pub channel: String,
    /// `id`: the cluster ID.
    pub id: String,
    /// `version`: the current version.
    pub version: String,
}

impl GraphQuery {
    /// The request URL: `upstream` with `arch`, `channel`, `id`, `version` appended to its
    /// query (sorted by key, as Go's `url.Values.Encode` writes them).
    ///
    /// # Errors
    /// `InvalidURI` when `upstream` does not parse.
    pub fn url(&self) -> Result<reqwest::Url, UpdateError> {
        let mut u = reqwest::Url::parse(&self.upstream).map_err(|e| {
            UpdateError::new("InvalidURI", format!("failed to parse update service URL: {e}"))
        })?;
        let mut pairs: Vec<(String, String)> = u.query_pairs().into_owned().collect();
        pairs.push(("arch".into(), self.arch.clone()));
        pairs.push(("channel".into(), self.channel.clone()));
        pairs.push(("id".into(), self.id.clone()));
        pairs.push(("version".into(), self.version.clone()));
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        u.query_pairs_mut().clear().extend_pairs(pairs);
        Ok(u)
    }
}

/// Fetches a graph body: `GET` with `Accept: application/json` and `user_agent`; transport
/// failures are `RemoteFailed`, a status other than 200 or a body read failure
/// `ResponseFailed`, a body over `max_body` bytes `ResponseInvalid`.
///
/// # Errors
/// [`UpdateError`] as above; the message names the URL without its query.
pub async fn fetch_graph(
    client: &reqwest::Client,
    query: &GraphQuery,
    user_agent: &str,
    max_body: usize,
) -> Result<Vec<u8>, UpdateError> {
    let url = query.url()?;
    let mut shown = url.clone();
    shown.set_query(None);
    let resp = client
        .get(url)
        .header(ACCEPT, "application/json")
        .header(USER_AGENT, user_agent)
        .send()
        .await
        .map_err(|e| UpdateError::new("RemoteFailed", format!("GET {shown}: {}", error_chain(&e))))?;
    let status = resp.status();
    if status != reqwest::StatusCode::OK {
        return Err(UpdateError::new(
            "ResponseFailed",
            format!(
                "unexpected HTTP status: {} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or("")
            ),
        ));
    }
    read_capped(resp, max_body).await.map_err(|e| match e {
        ReadError::TooBig => UpdateError::new(
            "ResponseInvalid",
            format!("the response from {shown} is larger than {max_body} bytes; abandoned"),
        ),
        ReadError::Io(e) => UpdateError::new(
            "ResponseFailed",
            format!("reading the response from {shown}: {e}"),
        ),
    })
}

enum ReadError {
    TooBig,
    Io(String),
}

async fn read_capped(mut resp: reqwest::Response, max: usize) -> Result<Vec<u8>, ReadError> {
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Err(ReadError::TooBig);
    }
    // Never trust the announced length for the allocation.
    let mut body = Vec::with_capacity(resp.content_length().unwrap_or(0).min(1 << 20) as usize);
    while let Some(chunk) = resp.chunk().await.map_err(|e| ReadError::Io(error_chain(&e)))? {
        if body.len() + chunk.len() > max {
            return Err(ReadError::TooBig);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The bearer token sent to the Prometheus query API.
#[derive(Clone, Default)]
pub enum BearerToken {
    /// No `Authorization` header.
    #[default]
    None,
    /// This token.
    Value(String),
    /// The contents of this file (trimmed), read before every query, so a rotated
    /// ServiceAccount token is picked up (upstream's `BearerTokenFile`, read per request by
    /// prometheus/common's round tripper).
    File(std::path::PathBuf),
}

impl BearerToken {
    /// The token now.
    ///
    /// # Errors
    /// An unreadable file, naming it.
    fn current(&self) -> Result<Option<String>, String> {
        match self {
            Self::None => Ok(None),
            Self::Value(t) => Ok(Some(t.clone())),
            Self::File(p) => std::fs::read(p)
                .map(|b| Some(String::from_utf8_lossy(&b).trim().to_string()))
                .map_err(|e| format!("reading the PromQL bearer token file {}: {e}", p.display())),
        }
    }
}

/// A Kubernetes Service whose ClusterIP the PromQL client connects to instead of resolving
/// the URL's host name (upstream `PromQL.Host` in `pkg/clusterconditions/promql/promql.go`,
/// used unless `--use-dns-for-services`): a host-network pod with the node's resolver cannot
/// resolve cluster service names. The Service is read before every new connection, so a
/// recreated Service with a new IP is followed; TLS still verifies the URL's host name.
#[derive(Clone)]
pub struct ServiceAddress {
    /// A client of the cluster.
    pub kube: kube::Client,
    /// The Service's namespace (upstream's default `openshift-monitoring`).
    pub namespace: String,
    /// The Service's name (upstream's default `thanos-querier`).
    pub name: String,
}

/// The reqwest resolver of a [`ServiceAddress`] for the one host it stands for.
struct ServiceResolver {
    service: ServiceAddress,
    host: String,
}

impl reqwest::dns::Resolve for ServiceResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let asked = name.as_str().to_owned();
        let host = self.host.clone();
        let ServiceAddress {
            kube,
            namespace,
            name: svc,
        } = self.service.clone();
        Box::pin(async move {
            if !asked.eq_ignore_ascii_case(&host) {
                return Err(format!(
                    "{asked}: only {host} is resolved here (through Service {namespace}/{svc})"
                )
                .into());
            }
            let api: kube::Api<k8s_openapi::api::core::v1::Service> = kube::Api::namespaced(kube, &namespace);
            let s = api
                .get(&svc)
                .await
                .map_err(|e| format!("failure determine thanos IP: Service {namespace}/{svc}: {e}"))?;
            let ip = s
                .spec
                .and_then(|s| s.cluster_ip)
                .filter(|ip| !ip.is_empty() && ip != "None")
                .ok_or_else(|| {
                    format!("failure determine thanos IP: Service {namespace}/{svc} has no clusterIP")
                })?;
            let ip: std::net::IpAddr = ip
                .parse()
                .map_err(|e| format!("Service {namespace}/{svc} clusterIP {ip:?}: {e}"))?;
            // Port 0: the URL's port is used.
            let addrs: reqwest::dns::Addrs = Box::new(std::iter::once(std::net::SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// A Prometheus-compatible HTTP query API (`GET {base}/api/v1/query?query=…`) with an optional
/// bearer token; in-cluster, upstream asks the thanos-querier service of
/// openshift-monitoring.
pub struct PrometheusApi {
    base: String,
    token: BearerToken,
    client: reqwest::Client,
}

impl std::fmt::Debug for PrometheusApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token stays out of logs.
        let token = match &self.token {
            BearerToken::None => "none".to_string(),
            BearerToken::Value(_) => "<redacted>".to_string(),
            BearerToken::File(p) => format!("file {}", p.display()),
        };
        f.debug_struct("PrometheusApi")
            .field("base", &self.base)
            .field("token", &token)
            .finish_non_exhaustive()
    }
}

impl PrometheusApi {
    /// A client for `base` (e.g. `https://thanos-querier.openshift-monitoring.svc:9091`).
    ///
    /// # Errors
    /// A bad URL or CA bundle, as one line.
    pub fn new(
        base: &str,
        token: Option<String>,
        egress: &Egress,
        timeout: Duration,
    ) -> Result<Self, String> {
        let token = token.map_or(BearerToken::None, BearerToken::Value);
        Self::with(base, token, egress, timeout, None)
    }

    /// A client for `base` with `token`, connecting to the ClusterIP of `service` when given
    /// (the URL's host name then only names the server for TLS and HTTP).
    ///
    /// # Errors
    /// A bad URL (or one without a host name while `service` is given) or CA bundle, as one
    /// line.
    pub fn with(
        base: &str,
        token: BearerToken,
        egress: &Egress,
        timeout: Duration,
        service: Option<ServiceAddress>,
    ) -> Result<Self, String> {
        let url = reqwest::Url::parse(base).map_err(|e| format!("--prometheus-url {base:?}: {e}"))?;
        let mut b = http_client_builder(egress, timeout)?;
        if let Some(service) = service {
            let Some(host) = url.domain().map(str::to_owned) else {
                return Err(format!(
                    "--prometheus-url {base:?}: a host name is needed to connect through a Service"
                ));
            };
            b = b.dns_resolver(Arc::new(ServiceResolver { service, host }));
        }
        Ok(Self {
            base: base.trim_end_matches('/').to_string(),
            token,
            client: b.build().map_err(|e| format!("HTTP client: {e}"))?,
        })
    }

    async fn query(&self, promql: &str) -> Result<bool, String> {
        let mut url = reqwest::Url::parse(&format!("{}/api/v1/query", self.base))
            .map_err(|e| format!("executing PromQL query: {e}"))?;
        url.query_pairs_mut().append_pair("query", promql);
        let mut req = self.client.get(url).header(ACCEPT, "application/json");
        if let Some(t) = self.token.current()? {
            req = req.header(AUTHORIZATION, format!("Bearer {t}"));
        }
        let resp = req
            .send()
            .await
            .map_err(|e| format!("executing PromQL query: {}", error_chain(&e)))?;
        let status = resp.status();
        let body = read_capped(resp, 1 << 20).await.map_err(|e| match e {
            ReadError::TooBig => "executing PromQL query: response larger than 1 MiB".to_string(),
            ReadError::Io(e) => format!("executing PromQL query: {e}"),
        })?;
        let parsed: PromResponse = serde_json::from_slice(&body).map_err(|e| {
            format!(
                "executing PromQL query: HTTP {}: invalid response: {e}",
                status.as_u16()
            )
        })?;
        if parsed.status != "success" {
            return Err(format!(
                "executing PromQL query: {}: {}",
                parsed.error_type.unwrap_or_default(),
                parsed.error.unwrap_or_default()
            ));
        }
        let data = parsed.data.ok_or("executing PromQL query: no data")?;
        interpret(&data.result_type, &data.result)
    }
}

/// Upstream's reading of a query result: a vector of exactly one sample whose value is 0 (no
/// match) or 1 (match).
///
/// # Errors
/// Anything else, described.
pub fn interpret(result_type: &str, result: &serde_json::Value) -> Result<bool, String> {
    if result_type != "vector" {
        return Err(format!("invalid PromQL result type is {result_type}, not vector"));
    }
    let samples = result.as_array().map(Vec::as_slice).unwrap_or_default();
    if samples.len() != 1 {
        return Err(format!(
            "invalid PromQL result length must be one, but is {}",
            samples.len()
        ));
    }
    let v = samples[0]
        .get("value")
        .and_then(|v| v.get(1))
        .and_then(serde_json::Value::as_str)
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or("invalid PromQL sample: no value")?;
    if v == 0.0 {
        Ok(false)
    } else if v == 1.0 {
        Ok(true)
    } else {
        Err(format!("invalid PromQL result (must be 0 or 1): {v}"))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromResponse {
    status: String,
    #[serde(default)]
    data: Option<PromData>,
    #[serde(default)]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromData {
    result_type: String,
    #[serde(default)]
    result: serde_json::Value,
}

impl PromQlEvaluator for PrometheusApi {
    fn evaluate<'a>(&'a self, promql: &'a str) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(self.query(promql))
    }
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// A one-request HTTPS server on loopback with a fresh self-signed certificate; returns
    /// its URL and the certificate's PEM.
    async fn https_once() -> (String, String) {
        let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("certificate");
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
        let config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("versions")
                .with_no_client_auth()
                .with_single_cert(vec![ck.cert.der().clone()], key)
                .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut buf = [0u8; 1024];
                    let _ = tls.read(&mut buf).await;
                    let _ = tls
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
                        .await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        (format!("https://{addr}/"), ck.cert.pem())
    }

    /// The roots are loaded at the first handshake, not with the client: a server whose CA is in
    /// the trusted bundle is accepted, the same server without it is refused as an unknown
    /// issuer.
    #[tokio::test]
    async fn tls_is_verified_against_the_roots_and_the_trusted_bundle_at_the_first_handshake() {
        let (url, pem) = https_once().await;
        let trusted = Egress {
            proxy: None,
            ca_bundle: Some(pem.into_bytes()),
        };
        let c = http_client(&trusted, Duration::from_secs(10)).expect("client");
        let r = c.get(&url).send().await.expect("trusted CA: answered");
        assert_eq!(r.status(), 200);
        assert_eq!(r.text().await.expect("body"), "ok");
        let plain = Egress {
            proxy: None,
            ca_bundle: None,
        };
        let c = http_client(&plain, Duration::from_secs(10)).expect("client");
        let e = c.get(&url).send().await.expect_err("unknown issuer refused");
        let chain = error_chain(&e);
        assert!(
            chain.contains("UnknownIssuer") || chain.contains("unknown issuer"),
            "{chain}"
        );
    }
}
