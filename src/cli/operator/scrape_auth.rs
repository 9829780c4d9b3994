//! Who may read `/metrics` (`--metrics-auth kube`, the default): the Kubernetes delegated
//! authentication and authorization of kube-rbac-proxy and of upstream's metrics server
//! (`pkg/cvo/metrics.go` in openshift/cluster-version-operator).
//!
//! - A caller is authenticated by its TLS client certificate, verified during the handshake
//!   against the cluster's client CA (upstream's source: the ConfigMap
//!   `kube-system/extension-apiserver-authentication`, key `client-ca-file`; see
//!   [`super::tls_files`]), whose subject gives the user (CN) and groups (O), as the
//!   kube-apiserver's x509 authenticator does; or else by an `Authorization: Bearer` token,
//!   checked with a TokenReview.
//! - It is then authorized with a SubjectAccessReview for `get` on the non-resource URL
//!   `/metrics` (upstream instead allows exactly the client certificate CN
//!   `system:serviceaccount:openshift-monitoring:prometheus-k8s`; RBAC grants that subject the
//!   same here, `install/05-metrics-reader.yaml`).
//! - No credentials: 401; a token the API server does not accept: 401; an authenticated caller
//!   RBAC does not allow: 403; the API server unreachable: 503 (never cached).
//!
//! Decisions are cached for [`CACHE_TTL`] (10 s, the kube-apiserver's own defaults for
//! delegated authentication and authorization caches): Prometheus scrapes every 30 s, so each
//! scrape costs at most one TokenReview and one SubjectAccessReview, and a revoked binding or
//! token stops working within 10 s. The cache key is a SHA-256 digest of the credential; no
//! token is kept, and none is ever logged.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use k8s_openapi::api::{
    authentication::v1::{TokenReview, TokenReviewSpec},
    authorization::v1::{NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec},
};
use sha2::{Digest as _, Sha256};

/// How long an authentication and authorization decision is reused.
pub const CACHE_TTL: Duration = Duration::from_secs(10);
/// At most this many decisions are cached (expired ones are dropped first, then all).
const CACHE_MAX: usize = 1024;
/// How long one TokenReview or SubjectAccessReview may take.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(5);

/// The subject of a verified client certificate: its CN is the user name, its Os the groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertIdentity {
    /// The subject's common name.
    pub user: String,
    /// The subject's organizations.
    pub groups: Vec<String>,
}

impl CertIdentity {
    /// The subject of a DER certificate; `None` when it does not parse or has no CN.
    pub fn from_der(der: &[u8]) -> Option<Self> {
        let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
        let subject = cert.subject();
        let user = subject
            .iter_common_name()
            .next()
            .and_then(|a| a.as_str().ok())?
            .to_string();
        let groups = subject
            .iter_organization()
            .filter_map(|a| a.as_str().ok().map(str::to_string))
            .collect();
        Some(Self { user, groups })
    }
}

/// The outcome of a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Authenticated and allowed.
    Allowed,
    /// No credentials, or credentials the API server does not accept (401); the reason.
    Unauthenticated(&'static str),
    /// Authenticated but not allowed to get /metrics (403); the user name.
    Forbidden(String),
    /// The API server could not be asked, or refused the operator the review (503); not
    /// cached. The text for the scraper: why the caller cannot be checked now.
    Unavailable(String),
}

/// What a scraper is told when its review could not be made: the operator's own RBAC when the
/// API server refused it the review (403: its ServiceAccount needs what the ClusterRole
/// `system:auth-delegator` grants), else that the API server cannot be asked now.
fn unavailable(resource: &str, e: &anyhow::Error) -> String {
    let denied = e
        .downcast_ref::<kube::Error>()
        .is_some_and(|k| matches!(k, kube::Error::Api(s) if s.code == 403));
    if denied {
        format!(
            "cvo may not create {resource}, so it cannot check the caller: bind its ServiceAccount \
             to the ClusterRole system:auth-delegator\n"
        )
    } else {
        "cannot check the caller with the API server now\n".to_string()
    }
}

/// A user as the API server's authenticator described it.
struct User {
    name: String,
    uid: Option<String>,
    groups: Vec<String>,
    extra: Option<std::collections::BTreeMap<String, Vec<String>>>,
}

/// Checks scrapers against the API server, with a short cache.
pub struct ScrapeAuth {
    client: kube::Client,
    cache: Mutex<HashMap<[u8; 32], (Instant, Verdict)>>,
}

impl ScrapeAuth {
    /// Checks with `client`'s API server (the operator's own credentials: it needs `create` on
    /// `tokenreviews` and `subjectaccessreviews`).
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Decides on one request: the verified client certificate's subject wins over a bearer
    /// token (the value of the `Authorization` header after `Bearer `).
    pub async fn check(&self, cert: Option<&CertIdentity>, bearer: Option<&str>) -> Verdict {
        let key = match (cert, bearer) {
            (Some(c), _) => digest(&["cert", &c.user, &c.groups.join("\n")]),
            (None, Some(t)) if !t.is_empty() => digest(&["token", t]),
            _ => return Verdict::Unauthenticated("no client certificate and no bearer token"),
        };
        if let Some(v) = self.cached(&key) {
            return v;
        }
        let user = match (cert, bearer) {
            (Some(c), _) => User {
                name: c.user.clone(),
                uid: None,
                groups: c.groups.clone(),
                extra: None,
            },
            (None, Some(t)) => match self.token_review(t).await {
                Ok(Some(u)) => u,
                Ok(None) => {
                    return self.remember(key, Verdict::Unauthenticated("the token was not accepted"));
                }
                Err(e) => {
                    tracing::warn!("metrics endpoint: TokenReview failed: {e}");
                    return Verdict::Unavailable(unavailable("tokenreviews.authentication.k8s.io", &e));
                }
            },
            (None, None) => return Verdict::Unauthenticated("no client certificate and no bearer token"),
        };
        let verdict = match self.access_review(&user).await {
            Ok(true) => Verdict::Allowed,
            Ok(false) => Verdict::Forbidden(user.name),
            Err(e) => {
                tracing::warn!("metrics endpoint: SubjectAccessReview failed: {e}");
                return Verdict::Unavailable(unavailable("subjectaccessreviews.authorization.k8s.io", &e));
            }
        };
        self.remember(key, verdict)
    }

    fn cached(&self, key: &[u8; 32]) -> Option<Verdict> {
        let cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache
            .get(key)
            .filter(|(at, _)| at.elapsed() < CACHE_TTL)
            .map(|(_, v)| v.clone())
    }

    fn remember(&self, key: [u8; 32], v: Verdict) -> Verdict {
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() >= CACHE_MAX {
            cache.retain(|_, (at, _)| at.elapsed() < CACHE_TTL);
            if cache.len() >= CACHE_MAX {
                cache.clear();
            }
        }
        cache.insert(key, (Instant::now(), v.clone()));
        v
    }

    /// The token's user, `None` when the API server does not authenticate it.
    async fn token_review(&self, token: &str) -> anyhow::Result<Option<User>> {
        let api: kube::Api<TokenReview> = kube::Api::all(self.client.clone());
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string(),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let r = tokio::time::timeout(
            REVIEW_TIMEOUT,
            api.create(&kube::api::PostParams::default(), &review),
        )
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {}s", REVIEW_TIMEOUT.as_secs()))??;
        let Some(st) = r.status.filter(|s| s.authenticated == Some(true)) else {
            return Ok(None);
        };
        let Some(u) = st
            .user
            .filter(|u| u.username.as_deref().is_some_and(|n| !n.is_empty()))
        else {
            return Ok(None);
        };
        Ok(Some(User {
            name: u.username.unwrap_or_default(),
            uid: u.uid,
            groups: u.groups.unwrap_or_default(),
            extra: u.extra,
        }))
    }

    /// Whether `user` may `get` the non-resource URL `/metrics`.
    async fn access_review(&self, user: &User) -> anyhow::Result<bool> {
        let api: kube::Api<SubjectAccessReview> = kube::Api::all(self.client.clone());
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.name.clone()),
                uid: user.uid.clone(),
                groups: Some(user.groups.clone()),
                extra: user.extra.clone(),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some("/metrics".into()),
                    verb: Some("get".into()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let r = tokio::time::timeout(
            REVIEW_TIMEOUT,
            api.create(&kube::api::PostParams::default(), &review),
        )
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {}s", REVIEW_TIMEOUT.as_secs()))??;
        Ok(r.status.is_some_and(|s| s.allowed && s.denied != Some(true)))
    }
}

fn digest(parts: &[&str]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    h.finalize().into()
}

/// The token of an `Authorization: Bearer TOKEN` header value.
pub fn bearer(header: Option<&http::HeaderValue>) -> Option<&str> {
    let v = header?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_the_operator_may_not_make_names_the_missing_binding() {
        let api = |code: u16| -> anyhow::Error {
            kube::Error::Api(
                kube::core::Status::failure("no", "Forbidden")
                    .with_code(code)
                    .boxed(),
            )
            .into()
        };
        assert_eq!(
            unavailable("tokenreviews.authentication.k8s.io", &api(403)),
            "cvo may not create tokenreviews.authentication.k8s.io, so it cannot check the caller: \
             bind its ServiceAccount to the ClusterRole system:auth-delegator\n"
        );
        assert_eq!(
            unavailable("tokenreviews.authentication.k8s.io", &api(500)),
            "cannot check the caller with the API server now\n"
        );
        assert_eq!(
            unavailable("x", &anyhow::anyhow!("no answer within 5s")),
            "cannot check the caller with the API server now\n"
        );
    }

    #[test]
    fn bearer_tokens_are_read_from_the_header() {
        let h = |s: &str| http::HeaderValue::from_str(s).expect("header");
        assert_eq!(bearer(Some(&h("Bearer abc.def"))), Some("abc.def"));
        assert_eq!(bearer(Some(&h("bearer  abc "))), Some("abc"));
        assert_eq!(bearer(Some(&h("Basic abc"))), None);
        assert_eq!(bearer(Some(&h("Bearer "))), None);
        assert_eq!(bearer(None), None);
    }

    #[cfg(feature = "sim")]
    #[test]
    fn certificate_subjects_give_user_and_groups() {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name.push(
            rcgen::DnType::CommonName,
            "system:serviceaccount:openshift-monitoring:prometheus-k8s",
        );
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "system:serviceaccounts");
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = params.self_signed(&key).expect("cert");
        assert_eq!(
            CertIdentity::from_der(cert.der()),
            Some(CertIdentity {
                user: "system:serviceaccount:openshift-monitoring:prometheus-k8s".into(),
                groups: vec!["system:serviceaccounts".into()],
            })
        );
        assert_eq!(CertIdentity::from_der(b"not DER"), None);
    }
}
