//! What the command line overrides in the client configuration a kubeconfig (or the
//! in-cluster service account) gives: kubectl's global flags `--server`, `--token`, `--as`,
//! `--as-group`, `-n/--namespace`, `--certificate-authority`, `--insecure-skip-tls-verify`
//! and `--request-timeout`, applied by [`super::live::connect`].
//!
//! Upstream: kubectl's `ConfigOverrides` (`k8s.io/client-go/tools/clientcmd/overrides.go`):
//! each flag replaces the one field it names. One choice differs: `--token` replaces every
//! credential of the kubeconfig's user (token file, client certificate, exec plugin, auth
//! provider, basic auth), so the requests are made as the token's subject alone.

use std::{
    future::Future,
    path::PathBuf,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

/// A secret given on the command line (`--token`): its `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText(String);

impl SecretText {
    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretText(<redacted>)")
    }
}

impl std::str::FromStr for SecretText {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self(s.to_owned()))
    }
}

/// The overrides of one command (all empty: the kubeconfig as it is).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--server`: the API server URL, replacing the kubeconfig cluster's `server`; with no
    /// kubeconfig and no in-cluster account, the only cluster setting.
    pub server: Option<http::Uri>,
    /// `--token`: the bearer token, replacing the user's credentials.
    pub token: Option<SecretText>,
    /// `--as`: the user to impersonate (`Impersonate-User`).
    pub impersonate: Option<String>,
    /// `--as-group`: the groups to impersonate (`Impersonate-Group`, repeatable).
    pub impersonate_groups: Vec<String>,
    /// `-n/--namespace`: the client's default namespace.
    pub namespace: Option<String>,
    /// `--certificate-authority`: a PEM bundle trusted for the API server instead of the
    /// kubeconfig's.
    pub certificate_authority: Option<PathBuf>,
    /// `--insecure-skip-tls-verify`: the server's certificate is not checked.
    pub insecure_skip_tls_verify: bool,
    /// `--request-timeout`: how long one request may wait for its response; watches are not
    /// limited. `None`: no limit.
    pub request_timeout: Option<Duration>,
}

impl Overrides {
    /// Applies the overrides to a client configuration.
    pub fn apply(&self, config: &mut kube::Config) {
        if let Some(server) = &self.server {
            config.cluster_url = server.clone();
        }
        if let Some(token) = &self.token {
            let auth = &mut config.auth_info;
            auth.token = Some(token.expose().to_owned().into());
            auth.token_file = None;
            auth.client_certificate = None;
            auth.client_certificate_data = None;
            auth.client_key = None;
            auth.client_key_data = None;
            auth.exec = None;
            auth.auth_provider = None;
            auth.username = None;
            auth.password = None;
        }
        if let Some(user) = &self.impersonate {
            config.auth_info.impersonate = Some(user.clone());
        }
        if !self.impersonate_groups.is_empty() {
            config.auth_info.impersonate_groups = Some(self.impersonate_groups.clone());
        }
        if let Some(ns) = &self.namespace {
            config.default_namespace = ns.clone();
        }
        if let Some(ca) = &self.certificate_authority {
            config.root_cert_file = Some(ca.clone());
            config.root_cert = None;
        }
        if self.insecure_skip_tls_verify {
            config.accept_invalid_certs = true;
        }
    }
}

/// A bearer credential of the connection, for requests cvo sends beside the API server's to
/// services that take the same token (the cluster's Thanos querier); never printed.
#[derive(Clone)]
pub enum Bearer {
    /// The token itself.
    Token(SecretText),
    /// A file holding it (a ServiceAccount's, re-read when used).
    File(PathBuf),
}

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Token(_) => f.write_str("Bearer::Token(<redacted>)"),
            Self::File(p) => write!(f, "Bearer::File({})", p.display()),
        }
    }
}

impl Bearer {
    /// The token now (a file is read and trimmed).
    ///
    /// # Errors
    /// An unreadable token file, naming it.
    pub fn current(&self) -> Result<String, String> {
        match self {
            Self::Token(t) => Ok(t.expose().to_owned()),
            Self::File(p) => std::fs::read_to_string(p)
                .map(|t| t.trim().to_owned())
                .map_err(|e| format!("token file {}: {e}", p.display())),
        }
    }
}

/// What a connection trusts and presents, for HTTPS requests to the cluster's other
/// endpoints (its routes): the bearer credential, the certificate authorities of the
/// kubeconfig (DER) or their file, and the proxy of the API traffic.
#[derive(Clone, Debug, Default)]
pub struct HttpAccess {
    /// The user's bearer token, when the user has one (not with client certificates or an
    /// exec plugin).
    pub bearer: Option<Bearer>,
    /// The kubeconfig's certificate authorities, DER.
    pub ca_der: Vec<Vec<u8>>,
    /// The certificate authority file (in-cluster, or `--certificate-authority`).
    pub ca_file: Option<PathBuf>,
    /// The proxy of the API traffic.
    pub proxy: Option<http::Uri>,
}

impl HttpAccess {
    /// What `config` gives.
    pub fn of(config: &kube::Config) -> Self {
        use secrecy::ExposeSecret as _;
        let auth = &config.auth_info;
        let bearer = match (&auth.token, &auth.token_file) {
            (Some(t), _) => Some(Bearer::Token(SecretText(t.expose_secret().to_owned()))),
            (None, Some(f)) => Some(Bearer::File(PathBuf::from(f))),
            _ => None,
        };
        Self {
            bearer,
            ca_der: config.root_cert.clone().unwrap_or_default(),
            ca_file: config.root_cert_file.clone(),
            proxy: config.proxy_url.clone(),
        }
    }
}

/// Whether a request is a watch (`?watch=true` or `?watch=1`), which `--request-timeout` does
/// not cut short.
fn is_watch(uri: &http::Uri) -> bool {
    uri.query().is_some_and(|q| {
        q.split('&')
            .any(|kv| matches!(kv, "watch=true" | "watch=1" | "watch=True"))
    })
}

/// The `--request-timeout` layer: a request that has no response after the limit fails with
/// `request timed out after 5s (--request-timeout)`; watches are passed through.
#[derive(Clone, Copy, Debug)]
pub struct RequestTimeoutLayer(pub Duration);

impl<S> tower::Layer<S> for RequestTimeoutLayer {
    type Service = RequestTimeout<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestTimeout { inner, limit: self.0 }
    }
}

/// The service of [`RequestTimeoutLayer`].
#[derive(Clone, Debug)]
pub struct RequestTimeout<S> {
    inner: S,
    limit: Duration,
}

/// The error of a request cut short by `--request-timeout`.
#[derive(Debug, thiserror::Error)]
#[error("request timed out after {} (--request-timeout)", humantime(*.0))]
pub struct TimedOut(pub Duration);

fn humantime(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B> tower::Service<http::Request<B>> for RequestTimeout<S>
where
    S: tower::Service<http::Request<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let watch = is_watch(req.uri());
        let limit = self.limit;
        let fut = self.inner.call(req);
        Box::pin(async move {
            if watch {
                return fut.await.map_err(Into::into);
            }
            match tokio::time::timeout(limit, fut).await {
                Ok(r) => r.map_err(Into::into),
                Err(_) => Err(Box::new(TimedOut(limit)) as BoxError),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_replaces_every_credential_and_is_never_in_debug() {
        let mut config = kube::Config::new(http::Uri::from_static("https://a.example:6443"));
        config.auth_info.client_certificate_data = Some("cert".into());
        config.auth_info.client_key_data = Some("key".to_owned().into());
        config.auth_info.token_file = Some("/var/run/token".into());
        let o = Overrides {
            server: Some(http::Uri::from_static("https://b.example:6443")),
            token: Some("s3cret-value".parse().expect("infallible")),
            impersonate: Some("alice".into()),
            impersonate_groups: vec!["devs".into()],
            namespace: Some("ns1".into()),
            ..Overrides::default()
        };
        o.apply(&mut config);
        assert_eq!(config.cluster_url.to_string(), "https://b.example:6443/");
        assert!(config.auth_info.client_certificate_data.is_none());
        assert!(config.auth_info.client_key_data.is_none());
        assert!(config.auth_info.token_file.is_none());
        assert!(config.auth_info.token.is_some());
        assert_eq!(config.auth_info.impersonate.as_deref(), Some("alice"));
        assert_eq!(
            config.auth_info.impersonate_groups,
            Some(vec!["devs".to_string()])
        );
        assert_eq!(config.default_namespace, "ns1");
        assert!(!format!("{o:?}").contains("s3cret"), "{o:?}");
    }

    #[test]
    fn watches_are_not_cut_short() {
        assert!(is_watch(&http::Uri::from_static(
            "/api/v1/nodes?watch=true&resourceVersion=1"
        )));
        assert!(!is_watch(&http::Uri::from_static("/api/v1/nodes?limit=500")));
        assert!(!is_watch(&http::Uri::from_static("/api/v1/nodes")));
        assert_eq!(
            TimedOut(Duration::from_secs(5)).to_string(),
            "request timed out after 5s (--request-timeout)"
        );
        assert_eq!(
            TimedOut(Duration::from_millis(1500)).to_string(),
            "request timed out after 1500ms (--request-timeout)"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_request_fails_after_the_limit() {
        use tower::{Layer as _, ServiceExt as _};
        let slow = tower::service_fn(|_req: http::Request<()>| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<_, std::convert::Infallible>("late")
        });
        let svc = RequestTimeoutLayer(Duration::from_secs(2)).layer(slow);
        let req = http::Request::get("/api/v1/nodes").body(()).expect("request");
        let err = svc.clone().oneshot(req).await.expect_err("times out");
        assert_eq!(err.to_string(), "request timed out after 2s (--request-timeout)");
        let watch = http::Request::get("/api/v1/nodes?watch=true")
            .body(())
            .expect("request");
        assert_eq!(svc.oneshot(watch).await.expect("a watch waits"), "late");
    }
}
