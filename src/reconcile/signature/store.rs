//! Reading signatures out of stores: HTTP(S) and `file://` stores in the containers/image
//! layout `<store>/<algo>=<hex>/signature-<N>` (N = 1, 2, ... until the first "not found"), and
//! signature ConfigMaps.
//!
//! Upstream: `pkg/verify/store/sigstore/sigstore.go` (HTTP), `fileStore` in
//! `pkg/verify/verify.go`, `pkg/verify/store/configmap/configmap.go` in openshift/library-go.
//! An empty signature body is skipped, as upstream does.

use std::{path::Path, sync::Arc, time::Duration};

use tokio::time::Instant;

use super::config::{Store, StoreLocation};
use crate::informers::error_chain;

/// Highest `N` of `signature-N` read from one store (upstream's search stops before 10).
pub const MAX_SIGNATURES: usize = 9;
/// Largest signature body read (50 KiB, as upstream); a bigger one is an error for that
/// signature, and nothing past the cap is read.
pub const MAX_SIGNATURE_BYTES: usize = 50 * 1024;
/// Time for the whole verification: upstream gives verification half of the 4 minutes a
/// payload retrieval may take (`pkg/cvo/updatepayload.go` in
/// openshift/cluster-version-operator).
pub const DEFAULT_VERIFY_TIMEOUT: Duration = Duration::from_secs(120);

/// The result of reading `signature-N`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetched {
    /// The signature's bytes.
    Body(Vec<u8>),
    /// Not there (HTTP 404, or no such file): the store has no more signatures.
    End,
    /// The read failed: status code, I/O error, size cap; the text says which.
    Failed(String),
    /// The verification deadline passed while reading; nothing more is read from this store.
    TimedOut,
}

/// `<algo>=<hex>`, the path segment of a digest in a store.
pub fn digest_path_segment(algo: &str, hex: &str) -> String {
    format!("{algo}={hex}")
}

/// The URL (or path) of `signature-<n>` of the digest `algo:hex` in `store`.
pub fn signature_location(store: &Store, algo: &str, hex: &str, n: usize) -> String {
    format!("{store}/{}/signature-{n}", digest_path_segment(algo, hex))
}

/// A store with the HTTP client that reaches it.
#[derive(Clone, Debug)]
pub(crate) struct Reader {
    pub store: Store,
    pub client: Option<Arc<reqwest::Client>>,
}

/// Builds the HTTP client of a store: rustls with the ring provider, the system roots plus the
/// cluster's trusted CA bundle or the store's own CA bundle alone, the cluster proxy of
/// `egress` when it sets one (else the environment's).
///
/// # Errors
/// A CA bundle that holds no certificate, a bad proxy, or a client that cannot be built.
pub(crate) fn http_client(
    ca_pem: Option<&str>,
    egress: &crate::reconcile::payload::retrieve::egress::ClusterEgress,
) -> Result<reqwest::Client, String> {
    // Several parts of the process may install the provider; the first one wins.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .user_agent(concat!("cvo/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(30));
    if let Some(pem) = ca_pem {
        let certs =
            reqwest::Certificate::from_pem_bundle(pem.as_bytes()).map_err(|e| format!("CA bundle: {e}"))?;
        if certs.is_empty() {
            return Err("CA bundle: no certificate in ca.crt".to_string());
        }
        builder = builder.tls_certs_only(certs);
        let proxy_only = crate::reconcile::payload::retrieve::egress::ClusterEgress {
            ca_pem: None,
            ..egress.clone()
        };
        builder = proxy_only.configure(builder)?;
    } else {
        builder = egress.configure(builder)?;
    }
    builder.build().map_err(|e| error_chain(&e))
}

impl Reader {
    /// Reads `signature-<n>` of `algo:hex`, giving up at `deadline`.
    pub async fn fetch(&self, algo: &str, hex: &str, n: usize, deadline: Instant) -> Fetched {
        let location = signature_location(&self.store, algo, hex, n);
        let work = async {
            match (&self.store.location, &self.client) {
                (StoreLocation::Http(_), Some(client)) => fetch_http(client, &location).await,
                (StoreLocation::Http(_), None) => Fetched::Failed("no HTTP client".to_string()),
                (StoreLocation::File(dir), _) => {
                    let path = dir
                        .join(digest_path_segment(algo, hex))
                        .join(format!("signature-{n}"));
                    fetch_file(&path).await
                }
            }
        };
        tokio::time::timeout_at(deadline, work)
            .await
            .unwrap_or(Fetched::TimedOut)
    }
}

async fn fetch_http(client: &reqwest::Client, url: &str) -> Fetched {
    let mut resp = match client.get(url).send().await {
        Ok(r) => r,
        Err(e) => return Fetched::Failed(error_chain(&e)),
    };
    let status = resp.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Fetched::End;
    }
    if !status.is_success() {
        return Fetched::Failed(format!("HTTP {status}"));
    }
    if let Some(len) = resp.content_length()
        && len > MAX_SIGNATURE_BYTES as u64
    {
        return Fetched::Failed(format!(
            "body of {len} bytes is over the {MAX_SIGNATURE_BYTES}-byte limit"
        ));
    }
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_SIGNATURE_BYTES {
                    return Fetched::Failed(format!("body is over the {MAX_SIGNATURE_BYTES}-byte limit"));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Fetched::Body(body),
            Err(e) => return Fetched::Failed(error_chain(&e)),
        }
    }
}

async fn fetch_file(path: &Path) -> Fetched {
    // File stores are for testing and offline use; the files are small and local.
    use std::io::Read as _;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Fetched::End,
        Err(e) => return Fetched::Failed(e.to_string()),
    };
    let mut body = Vec::new();
    match file.take(MAX_SIGNATURE_BYTES as u64 + 1).read_to_end(&mut body) {
        Ok(_) if body.len() > MAX_SIGNATURE_BYTES => {
            Fetched::Failed(format!("file is over the {MAX_SIGNATURE_BYTES}-byte limit"))
        }
        Ok(_) => Fetched::Body(body),
        Err(e) => Fetched::Failed(e.to_string()),
    }
}
