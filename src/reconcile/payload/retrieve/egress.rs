//! The cluster's egress settings for registry and signature-store requests: the cluster-wide
//! proxy (`proxies.config.openshift.io/cluster` status `httpProxy`, `httpsProxy`, `noProxy`)
//! and the trusted CA bundle the Proxy's `spec.trustedCA` names (a ConfigMap in
//! `openshift-config`, key `ca-bundle.crt`; `user-ca-bundle` when the Proxy names none).
//!
//! Upstream: on a cluster the release image is pulled by the node's container runtime, which the
//! machine-config operator configures with the same proxy and the same user CA bundle; the CVO's
//! own HTTP clients take the proxy of the Proxy status (`pkg/cvo/egress.go` in
//! openshift/cluster-version-operator).

use kube::{
    Api,
    api::{ApiResource, DynamicObject, GroupVersionKind},
};

use super::RetrieveOptions;

/// Namespace of the ConfigMap `spec.trustedCA` names.
pub const TRUSTED_CA_NAMESPACE: &str = "openshift-config";
/// The ConfigMap read when the Proxy names none (what the installer creates for
/// `additionalTrustBundle`).
pub const USER_CA_BUNDLE: &str = "user-ca-bundle";
/// Data key of the PEM bundle in the trusted CA ConfigMap.
pub const CA_BUNDLE_KEY: &str = "ca-bundle.crt";

/// The cluster's proxy and extra trusted CAs; every field may be absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterEgress {
    /// `status.httpProxy` of the Proxy `cluster`.
    pub http_proxy: Option<String>,
    /// `status.httpsProxy`.
    pub https_proxy: Option<String>,
    /// `status.noProxy`.
    pub no_proxy: Option<String>,
    /// PEM certificates of the trusted CA bundle, trusted on top of the system roots; where
    /// they came from is in `ca_source` (`openshift-config/<name>`).
    pub ca_pem: Option<String>,
    /// The ConfigMap the CA bundle was read from.
    pub ca_source: Option<String>,
}

impl ClusterEgress {
    /// Whether the cluster sets a proxy.
    pub fn has_proxy(&self) -> bool {
        self.http_proxy.is_some() || self.https_proxy.is_some()
    }

    /// `opts` with this egress: the cluster proxy replaces the environment's when the cluster
    /// sets one, and the CA bundle is added to the trusted certificates.
    pub fn apply(&self, opts: &mut RetrieveOptions) {
        if self.has_proxy() {
            opts.http_proxy = self.http_proxy.clone();
            opts.https_proxy = self.https_proxy.clone();
            opts.no_proxy = self.no_proxy.clone();
        }
        if let Some(pem) = &self.ca_pem {
            opts.trusted_ca_pem.push(pem.clone().into_bytes());
        }
    }

    /// A reqwest client builder with this egress: the cluster proxy (with `noProxy`) when set,
    /// else the environment's, and the CA bundle added to the system roots.
    ///
    /// # Errors
    /// A proxy URL or CA bundle that cannot be used, named.
    pub fn configure(&self, mut builder: reqwest::ClientBuilder) -> Result<reqwest::ClientBuilder, String> {
        if self.has_proxy() {
            builder = builder.no_proxy();
            let np = self.no_proxy.as_deref().and_then(reqwest::NoProxy::from_string);
            if let Some(u) = &self.http_proxy {
                let p = reqwest::Proxy::http(u).map_err(|e| format!("cluster proxy httpProxy {u:?}: {e}"))?;
                builder = builder.proxy(p.no_proxy(np.clone()));
            }
            if let Some(u) = &self.https_proxy {
                let p =
                    reqwest::Proxy::https(u).map_err(|e| format!("cluster proxy httpsProxy {u:?}: {e}"))?;
                builder = builder.proxy(p.no_proxy(np));
            }
        }
        if let Some(pem) = &self.ca_pem {
            let src = self.ca_source.as_deref().unwrap_or("trusted CA bundle");
            let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|e| format!("{src} {CA_BUNDLE_KEY}: {e}"))?;
            builder = builder.tls_certs_merge(certs);
        }
        Ok(builder)
    }

    /// Reads the Proxy `cluster` and its trusted CA ConfigMap. What is absent or unreadable is
    /// left unset (logged at debug: a cluster without a proxy is the common case).
    pub async fn read(client: &kube::Client) -> ClusterEgress {
        let ar = ApiResource::from_gvk(&GroupVersionKind::gvk("config.openshift.io", "v1", "Proxy"));
        let proxies: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        let mut out = ClusterEgress::default();
        let mut ca_name = USER_CA_BUNDLE.to_string();
        match proxies.get_opt("cluster").await {
            Ok(Some(p)) => {
                let status = p.data.get("status");
                let field = |k: &str| {
                    status
                        .and_then(|s| s.get(k))
                        .and_then(serde_json::Value::as_str)
                        .filter(|v| !v.is_empty())
                        .map(str::to_string)
                };
                out.http_proxy = field("httpProxy");
                out.https_proxy = field("httpsProxy");
                out.no_proxy = field("noProxy");
                if let Some(name) = p
                    .data
                    .pointer("/spec/trustedCA/name")
                    .and_then(serde_json::Value::as_str)
                    .filter(|n| !n.is_empty())
                {
                    ca_name = name.to_string();
                }
            }
            Ok(None) => {}
            Err(e) => tracing::debug!("reading the cluster Proxy: {e}"),
        }
        let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
            Api::namespaced(client.clone(), TRUSTED_CA_NAMESPACE);
        match cms.get_opt(&ca_name).await {
            Ok(Some(cm)) => {
                out.ca_pem = cm
                    .data
                    .and_then(|d| d.get(CA_BUNDLE_KEY).cloned())
                    .filter(|s| !s.trim().is_empty());
                if out.ca_pem.is_some() {
                    out.ca_source = Some(format!("{TRUSTED_CA_NAMESPACE}/{ca_name}"));
                }
            }
            Ok(None) => {}
            Err(e) => tracing::debug!("reading {TRUSTED_CA_NAMESPACE}/{ca_name}: {e}"),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_proxy_replaces_the_environments_and_the_ca_is_added() {
        let mut opts = RetrieveOptions::new(Some("/c".into()));
        opts.http_proxy = Some("http://env:3128".into());
        opts.trusted_ca_pem = vec![b"first".to_vec()];
        let egress = ClusterEgress {
            https_proxy: Some("http://proxy.example:3128".into()),
            no_proxy: Some(".cluster.local".into()),
            ca_pem: Some("PEM".into()),
            ..ClusterEgress::default()
        };
        egress.apply(&mut opts);
        assert_eq!(opts.http_proxy, None);
        assert_eq!(opts.https_proxy.as_deref(), Some("http://proxy.example:3128"));
        assert_eq!(opts.no_proxy.as_deref(), Some(".cluster.local"));
        assert_eq!(opts.trusted_ca_pem, vec![b"first".to_vec(), b"PEM".to_vec()]);

        // No cluster proxy: the environment's stays.
        let mut opts = RetrieveOptions::new(Some("/c".into()));
        opts.http_proxy = Some("http://env:3128".into());
        ClusterEgress::default().apply(&mut opts);
        assert_eq!(opts.http_proxy.as_deref(), Some("http://env:3128"));
        assert!(opts.trusted_ca_pem.is_empty());
    }

    #[test]
    fn a_bad_ca_bundle_is_named() {
        let egress = ClusterEgress {
            ca_pem: Some("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n".into()),
            ca_source: Some("openshift-config/user-ca-bundle".into()),
            ..ClusterEgress::default()
        };
        let err = egress
            .configure(reqwest::Client::builder())
            .err()
            .unwrap_or_default();
        assert!(
            err.starts_with("openshift-config/user-ca-bundle ca-bundle.crt: "),
            "{err}"
        );
    }
}
