//! The endpoint's TLS configuration, kept current as upstream's is (`pkg/cvo/metrics.go` in
//! openshift/cluster-version-operator reloads its serving certificate files and its client CA):
//!
//! - the serving certificate and key (`--serving-cert-file`, `--serving-key-file`, on
//!   OpenShift the service CA's Secret, which it rotates) are read again every
//!   [`RELOAD_EVERY`]; a changed pair that is valid is served from the next handshake on. A
//!   changed pair that is not (unreadable, no certificate, a key that does not match) keeps the
//!   previous one and logs one warning naming the file, until the files change again;
//! - with `--metrics-auth kube`, the cluster's client CA (the ConfigMap
//!   `kube-system/extension-apiserver-authentication`, key `client-ca-file`, upstream's source)
//!   is read at start and every [`CLIENT_CA_EVERY`]: clients may then present a certificate it
//!   signed (OpenShift's Prometheus does, with the scrape class `tls-client-certificate-auth`);
//!   a certificate it did not sign fails the handshake. Without that ConfigMap, only bearer
//!   tokens authenticate.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, RwLock},
    time::Duration,
};

use rustls::{
    RootCertStore, ServerConfig,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject as _},
};

/// How often the serving certificate files are read again.
pub const RELOAD_EVERY: Duration = Duration::from_secs(10);
/// How often the client CA ConfigMap is read again.
pub const CLIENT_CA_EVERY: Duration = Duration::from_secs(60);
/// Namespace, name and key of the client CA ConfigMap.
pub const CLIENT_CA_CONFIGMAP: (&str, &str, &str) = (
    "kube-system",
    "extension-apiserver-authentication",
    "client-ca-file",
);

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration from PEM texts of the certificate chain and key, requesting (not
/// requiring) a client certificate signed by `client_ca` when given.
///
/// # Errors
/// One line naming the file (`--serving-cert-file PATH: ...` / `--serving-key-file PATH:
/// ...`) that holds no usable certificate or key, or a key that does not match the
/// certificate.
pub fn server_config(
    (cert_path, cert_pem): (&Path, &[u8]),
    (key_path, key_pem): (&Path, &[u8]),
    client_ca: Option<&Arc<RootCertStore>>,
) -> anyhow::Result<ServerConfig> {
    let cert_err =
        |e: &dyn std::fmt::Display| anyhow::anyhow!("--serving-cert-file {}: {e}", cert_path.display());
    let certs = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_err(&e))?;
    if certs.is_empty() {
        return Err(cert_err(&"no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| anyhow::anyhow!("--serving-key-file {}: {e}", key_path.display()))?;
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow::anyhow!("TLS: {e}"))?;
    let builder = match client_ca {
        Some(roots) => {
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.clone(), provider())
                    .allow_unauthenticated()
                    .build()
                    .map_err(|e| anyhow::anyhow!("client CA: {e}"))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut cfg = builder.with_single_cert(certs, key).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => anyhow::anyhow!(
            "--serving-key-file {}: does not match the certificate of --serving-cert-file {}",
            key_path.display(),
            cert_path.display()
        ),
        e => cert_err(&e),
    })?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(cfg)
}

/// The TLS configuration from a PEM certificate chain file and key file (no client
/// certificates).
///
/// # Errors
/// As [`server_config`], and a file that cannot be read.
pub fn tls_config(cert: &Path, key: &Path) -> anyhow::Result<ServerConfig> {
    let (c, k) = read_pair(cert, key)?;
    server_config((cert, &c), (key, &k), None)
}

fn read_pair(cert: &Path, key: &Path) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    let c =
        std::fs::read(cert).map_err(|e| anyhow::anyhow!("--serving-cert-file {}: {e}", cert.display()))?;
    let k = std::fs::read(key).map_err(|e| anyhow::anyhow!("--serving-key-file {}: {e}", key.display()))?;
    Ok((c, k))
}

/// The acceptor every new connection uses; replaced when the files or the client CA change.
#[derive(Clone)]
pub struct LiveTls(Arc<RwLock<tokio_rustls::TlsAcceptor>>);

impl LiveTls {
    /// The current acceptor.
    pub fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set(&self, cfg: ServerConfig) {
        *self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner) =
            tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    }
}

/// The serving certificate files and what was last loaded from them.
pub struct Reloader {
    cert: PathBuf,
    key: PathBuf,
    /// The pair in use.
    good: (Vec<u8>, Vec<u8>),
    /// The last pair that failed (warned about once).
    bad: Option<(Vec<u8>, Vec<u8>)>,
    client_ca: Option<(String, Arc<RootCertStore>)>,
    live: LiveTls,
}

impl Reloader {
    /// Loads the files once.
    ///
    /// # Errors
    /// As [`tls_config`]: at start a bad file is an error, later only a warning.
    pub fn load(cert: &Path, key: &Path) -> anyhow::Result<Self> {
        let (c, k) = read_pair(cert, key)?;
        let cfg = server_config((cert, &c), (key, &k), None)?;
        Ok(Self {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            good: (c, k),
            bad: None,
            client_ca: None,
            live: LiveTls(Arc::new(RwLock::new(tokio_rustls::TlsAcceptor::from(Arc::new(
                cfg,
            ))))),
        })
    }

    /// The shared acceptor.
    pub fn live(&self) -> LiveTls {
        self.live.clone()
    }

    /// Reads the files again; rebuilds the configuration when they changed. Returns whether
    /// a new certificate is now served.
    pub fn poll_files(&mut self) -> bool {
        let pair = match read_pair(&self.cert, &self.key) {
            Ok(p) => p,
            Err(e) => {
                // A missing file during a Secret update is transient; say it once.
                let marker = (Vec::new(), e.to_string().into_bytes());
                if self.bad.as_ref() != Some(&marker) {
                    tracing::warn!("serving certificate not reloaded, the previous one stays: {e}");
                    self.bad = Some(marker);
                }
                return false;
            }
        };
        if pair == self.good || self.bad.as_ref() == Some(&pair) {
            return false;
        }
        match self.build(&pair) {
            Ok(cfg) => {
                self.live.set(cfg);
                self.good = pair;
                self.bad = None;
                tracing::info!(cert = %self.cert.display(), "serving certificate reloaded");
                true
            }
            Err(e) => {
                tracing::warn!("serving certificate not reloaded, the previous one stays: {e}");
                self.bad = Some(pair);
                false
            }
        }
    }

    fn build(&self, (c, k): &(Vec<u8>, Vec<u8>)) -> anyhow::Result<ServerConfig> {
        server_config(
            (&self.cert, c),
            (&self.key, k),
            self.client_ca.as_ref().map(|(_, r)| r),
        )
    }

    /// Uses the client CA bundle `pem` (`None`: no client certificates). Returns whether the
    /// configuration changed.
    pub fn set_client_ca(&mut self, pem: Option<&str>) -> bool {
        if self.client_ca.as_ref().map(|(p, _)| p.as_str()) == pem {
            return false;
        }
        let next = match pem {
            None => None,
            Some(p) => {
                let mut roots = RootCertStore::empty();
                for c in CertificateDer::pem_slice_iter(p.as_bytes()).flatten() {
                    let _ = roots.add(c);
                }
                if roots.is_empty() {
                    tracing::warn!(
                        "client CA {}/{} key {}: no usable certificate; client certificates are not accepted",
                        CLIENT_CA_CONFIGMAP.0,
                        CLIENT_CA_CONFIGMAP.1,
                        CLIENT_CA_CONFIGMAP.2
                    );
                    None
                } else {
                    Some((p.to_string(), Arc::new(roots)))
                }
            }
        };
        let old = std::mem::replace(&mut self.client_ca, next);
        match self.build(&self.good) {
            Ok(cfg) => {
                self.live.set(cfg);
                tracing::info!(
                    client_ca = self.client_ca.is_some(),
                    "client certificates {}",
                    if self.client_ca.is_some() {
                        "accepted (signed by the cluster's client CA)"
                    } else {
                        "not accepted"
                    }
                );
                true
            }
            Err(e) => {
                tracing::warn!("client CA not used: {e}");
                self.client_ca = old;
                false
            }
        }
    }

    /// Polls the files every [`RELOAD_EVERY`] and, with `client`, the client CA every
    /// [`CLIENT_CA_EVERY`], forever.
    pub async fn run(mut self, client: Option<kube::Client>) {
        let mut files = tokio::time::interval(RELOAD_EVERY);
        files.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut ca = tokio::time::interval(CLIENT_CA_EVERY);
        ca.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut ca_failing = false;
        loop {
            tokio::select! {
                _ = files.tick() => { self.poll_files(); }
                _ = ca.tick(), if client.is_some() => {
                    if let Some(c) = &client {
                        match read_client_ca(c).await {
                            Ok(pem) => {
                                ca_failing = false;
                                self.set_client_ca(pem.as_deref());
                            }
                            // Once per outage; the CA in use stays.
                            Err(e) if !ca_failing => {
                                ca_failing = true;
                                tracing::warn!("reading the client CA (client certificates {}): {e}",
                                    if self.client_ca.is_some() { "still use the last one read" } else { "are not accepted" });
                            }
                            Err(e) => tracing::debug!("reading the client CA: {e}"),
                        }
                    }
                }
            }
        }
    }
}

/// The client CA bundle of the ConfigMap [`CLIENT_CA_CONFIGMAP`]; `None` when it is absent.
///
/// # Errors
/// The API server cannot be asked (including a denied read).
pub async fn read_client_ca(client: &kube::Client) -> anyhow::Result<Option<String>> {
    use k8s_openapi::api::core::v1::ConfigMap;
    let (ns, name, key) = CLIENT_CA_CONFIGMAP;
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), ns);
    let cm = tokio::time::timeout(Duration::from_secs(5), api.get_opt(name))
        .await
        .map_err(|_| anyhow::anyhow!("ConfigMap {ns}/{name}: no answer within 5s"))?
        .map_err(|e| anyhow::anyhow!("ConfigMap {ns}/{name}: {e}"))?;
    Ok(cm.and_then(|c| c.data).and_then(|mut d| d.remove(key)))
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;

    fn pair(name: &str) -> (String, String) {
        let ck = rcgen::generate_simple_self_signed(vec![name.to_owned()]).expect("cert");
        (ck.cert.pem(), ck.signing_key.serialize_pem())
    }

    #[test]
    fn a_changed_pair_is_reloaded_and_a_bad_one_keeps_the_old() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let (c1, k1) = pair("one");
        std::fs::write(&cert, &c1).expect("write");
        std::fs::write(&key, &k1).expect("write");
        let mut r = Reloader::load(&cert, &key).expect("load");
        assert!(!r.poll_files(), "unchanged files are not reloaded");
        let (c2, k2) = pair("two");
        // The new certificate with the old key: refused, the old pair stays.
        std::fs::write(&cert, &c2).expect("write");
        assert!(!r.poll_files());
        assert_eq!(r.good.0, c1.as_bytes());
        let e = r
            .build(&(c2.clone().into_bytes(), k1.clone().into_bytes()))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some(
                format!(
                    "--serving-key-file {}: does not match the certificate of --serving-cert-file {}",
                    key.display(),
                    cert.display()
                )
                .as_str()
            )
        );
        std::fs::write(&key, &k2).expect("write");
        assert!(r.poll_files(), "the matching pair is served");
        assert_eq!(r.good, (c2.into_bytes(), k2.into_bytes()));
        std::fs::write(&cert, "garbage").expect("write");
        assert!(!r.poll_files());
        assert!(r.bad.is_some());
    }
}
