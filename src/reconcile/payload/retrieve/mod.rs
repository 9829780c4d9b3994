//! Release image retrieval: pull a release image from an OCI registry and keep its payload
//! (`manifests/` + `release-manifests/`) in a per-digest cache directory (upstream
//! `pkg/cvo/updatepayload.go`, which verifies the image and then copies the same two
//! directories out of it with a Pod).
//!
//! [`Retriever::resolve`] turns a pull spec into its manifest digest (a tag is resolved once;
//! the digest is what names the cache entry and what a [`ReleaseVerifier`] checks);
//! [`Retriever::fetch`] pulls the manifest (OCI or Docker v2 schema 2; an index or manifest
//! list picks the configured architecture), streams each layer to a file while hashing it,
//! refuses a digest mismatch, extracts the two directories under the guards of [`extract`]
//! into a temporary directory and renames it to `sha256-<hex>/` when the payload is complete.
//! A cached digest is served with no network. [`RegistryPayloads`] runs this in the background
//! for the engine.

pub mod auth;
pub mod egress;
mod error;
pub mod extract;
pub mod mirrors;
pub mod push;
mod resolver;
pub mod zstd;

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use futures::StreamExt as _;
use oci_client::{
    Client, Reference,
    client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol},
    manifest::ImageIndexEntry,
};
use sha2::Digest as _;
use tokio::io::AsyncWriteExt as _;

pub use auth::DockerAuth;
pub use error::RetrieveError;
pub use extract::{ExtractError, ExtractLimits};
pub use resolver::RegistryPayloads;

use crate::reconcile::api::PullProgress;

/// Checks a release image's signature (upstream `pkg/verify` in openshift/library-go, called
/// by `pkg/cvo/updatepayload.go` before the payload is retrieved). Called once the manifest
/// digest is known and before the payload is accepted.
pub trait ReleaseVerifier: Send + Sync {
    /// `Ok` when `digest` (`sha256:<hex>`) of `pullspec` carries a valid signature; `Err` says
    /// why not (which stores and keys were tried), as the ReleaseAccepted message shows it.
    fn verify<'a>(
        &'a self,
        pullspec: &'a str,
        digest: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), String>>;

    /// Told where the operator's own release payload is (its directory) as soon as it is
    /// known: a verifier configured from the own payload (upstream reads the verification
    /// ConfigMap out of it) reads it then. Default: ignored.
    fn own_payload(&self, _dir: &Path) {}

    /// Saves what verified so far into the cluster through `client` (upstream's signature
    /// persister, `signatures-managed` in `openshift-config-managed`); the engine calls it in
    /// active-apply only, every few reconcile intervals. Default: nothing to save.
    fn persist<'a>(
        &'a self,
        _client: &'a kube::Client,
    ) -> futures::future::BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

/// Upstream's time limit for one retrieval when the caller has none (4 min; verification gets
/// half of what is left).
pub const RETRIEVE_TIMEOUT: Duration = Duration::from_secs(4 * 60);

/// How releases are pulled.
#[derive(Clone, Debug)]
pub struct RetrieveOptions {
    /// The cache root: entries are `sha256-<hex>/` under it.
    pub cache_dir: PathBuf,
    /// Registry credentials.
    pub auth: DockerAuth,
    /// Registries (`host` or `host:port`) reached over plain HTTP although not on loopback
    /// (`--insecure-registry`). Loopback registries (`127.0.0.1`, `localhost`, `[::1]`) always
    /// may.
    pub insecure_registries: Vec<String>,
    /// The architecture an image index picks (Go names: `amd64`, `arm64`, ...).
    pub architecture: String,
    /// Extraction caps.
    pub limits: ExtractLimits,
    /// Extra trusted CA certificates (PEM), e.g. the cluster proxy's `trustedCA`.
    pub trusted_ca_pem: Vec<Vec<u8>>,
    /// `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY` (the cluster proxy's values).
    pub http_proxy: Option<String>,
    /// See `http_proxy`.
    pub https_proxy: Option<String>,
    /// See `http_proxy`.
    pub no_proxy: Option<String>,
    /// The whole retrieval's limit ([`RETRIEVE_TIMEOUT`]).
    pub timeout: Duration,
    /// Mirrors for pulls by digest (the cluster's ImageDigestMirrorSets and
    /// ImageContentSourcePolicies, [`mirrors`]); empty: every image from its own registry.
    pub mirrors: Vec<mirrors::MirrorRule>,
}

impl RetrieveOptions {
    /// Defaults: cache under `$XDG_CACHE_HOME/cvo/releases` (else `~/.cache/cvo/releases`),
    /// no credentials, the running machine's architecture, the proxy from the environment,
    /// upstream's time limit.
    pub fn new(cache_dir: Option<PathBuf>) -> Self {
        let env = |k: &str| {
            std::env::var(k)
                .ok()
                .or_else(|| std::env::var(k.to_lowercase()).ok())
                .filter(|v| !v.is_empty())
        };
        Self {
            cache_dir: cache_dir.unwrap_or_else(default_cache_dir),
            auth: DockerAuth::default(),
            insecure_registries: Vec::new(),
            architecture: go_arch().to_string(),
            limits: ExtractLimits::default(),
            trusted_ca_pem: Vec::new(),
            http_proxy: env("HTTP_PROXY"),
            https_proxy: env("HTTPS_PROXY"),
            no_proxy: env("NO_PROXY"),
            timeout: RETRIEVE_TIMEOUT,
            mirrors: Vec::new(),
        }
    }
}

/// `$XDG_CACHE_HOME/cvo/releases`, else `$HOME/.cache/cvo/releases`, else
/// `/tmp/cvo/releases`.
pub fn default_cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("cvo").join("releases")
}

/// The running machine's architecture in Go's names (what image indexes use).
pub fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64le",
        "s390x" => "s390x",
        other => other,
    }
}

/// A pull spec resolved to its digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The pull spec as given.
    pub image: String,
    /// The digest that names the release (`sha256:<hex>`): the image index's when the pull
    /// spec names one, else the image manifest's.
    pub digest: String,
    /// `registry/repository@digest`.
    pub by_digest: String,
}

/// A retrieved release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retrieved {
    /// Its cache directory (`manifests/` + `release-manifests/`).
    pub dir: PathBuf,
    /// See [`Resolved`].
    pub resolved: Resolved,
    /// `release-metadata`'s version.
    pub version: String,
    /// Served from the cache, with no network.
    pub from_cache: bool,
    /// Where it was pulled from when a mirror served it (`mirror/repository@digest`).
    pub mirror: Option<String>,
}

/// Pulls release images (see the module documentation).
pub struct Retriever {
    opts: RetrieveOptions,
    client: Client,
}

impl std::fmt::Debug for Retriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retriever")
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

/// `host` of `host:port` / `[v6]:port`.
fn host_of(registry: &str) -> &str {
    if let Some(rest) = registry.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    registry.rsplit_once(':').map_or(registry, |(h, _)| h)
}

/// Whether `registry` is on the loopback interface.
pub fn is_loopback(registry: &str) -> bool {
    let h = host_of(registry);
    h == "localhost" || h == "::1" || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The oci-client configuration of `opts`: plain HTTP for `plain_http` registries, the image
/// index entry of `opts.architecture`, the extra trusted CAs, and the proxies when `proxied`.
fn client_config(opts: &RetrieveOptions, plain_http: Vec<String>, proxied: bool) -> ClientConfig {
    let arch = opts.architecture.clone();
    let resolver = move |entries: &[ImageIndexEntry]| -> Option<String> {
        entries
            .iter()
            .find(|e| {
                e.platform
                    .as_ref()
                    .is_some_and(|p| p.os.to_string() == "linux" && p.architecture.to_string() == arch)
            })
            .map(|e| e.digest.clone())
    };
    let proxy = |v: &Option<String>| v.clone().filter(|_| proxied);
    ClientConfig {
        protocol: ClientProtocol::HttpsExcept(plain_http),
        platform_resolver: Some(Box::new(resolver)),
        extra_root_certificates: opts
            .trusted_ca_pem
            .iter()
            .map(|pem| Certificate {
                encoding: CertificateEncoding::Pem,
                data: pem.clone(),
            })
            .collect(),
        http_proxy: proxy(&opts.http_proxy),
        https_proxy: proxy(&opts.https_proxy),
        no_proxy: opts.no_proxy.clone(),
        connect_timeout: Some(Duration::from_secs(30)),
        read_timeout: Some(Duration::from_secs(60)),
        user_agent: concat!("cvo/", env!("CARGO_PKG_VERSION")),
        ..ClientConfig::default()
    }
}

/// The ring provider as rustls' process default (reqwest's rustls without a bundled provider
/// uses it, and panics when there is none): call before making an `oci_client::Client`
/// yourself. A provider installed before is kept.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl Retriever {
    /// A retriever with these options. Registries on loopback and those in
    /// `insecure_registries` are reached over plain HTTP; every other one over TLS.
    pub fn new(opts: RetrieveOptions) -> Self {
        install_crypto_provider();
        let client = Client::new(client_config(&opts, Vec::new(), true));
        Self { opts, client }
    }

    /// The options.
    pub fn options(&self) -> &RetrieveOptions {
        &self.opts
    }

    /// A client for `registry`: plain HTTP when loopback or listed insecure; the proxy for
    /// every registry but a loopback one (a proxy elsewhere cannot reach this host's loopback).
    fn client_for(&self, registry: &str) -> Client {
        let loopback = is_loopback(registry);
        let http = loopback
            || self
                .opts
                .insecure_registries
                .iter()
                .any(|r| r == registry || r == host_of(registry));
        if !http {
            return self.client.clone();
        }
        // One client per call is cheap next to a pull; plain HTTP for this registry only.
        Client::new(client_config(&self.opts, vec![registry.to_string()], !loopback))
    }

    /// The cache directory of `digest` (`sha256:<hex>` ⇒ `sha256-<hex>`).
    pub fn cache_path(&self, digest: &str) -> PathBuf {
        self.opts.cache_dir.join(digest.replace(':', "-"))
    }

    /// The cached payload of `digest`, if a complete one is there.
    pub fn cached(&self, digest: &str) -> Option<PathBuf> {
        let d = self.cache_path(digest);
        validate_payload_dir(&d).is_ok().then_some(d)
    }

    /// The cached payload of a pull spec by digest, with no network.
    pub fn resolve_cached(&self, image: &str) -> Option<PathBuf> {
        let r = image.parse::<Reference>().ok()?;
        let d = r.digest()?;
        check_digest(image, d).ok()?;
        self.cached(d)
    }

    /// Resolves `image` to its digest. A pull spec by digest needs no network.
    ///
    /// # Errors
    /// Not a pull spec, a plain-HTTP registry not allowed, or the registry's answer.
    pub async fn resolve(&self, image: &str) -> Result<Resolved, RetrieveError> {
        let r = parse(image)?;
        if let Some(d) = r.digest() {
            check_digest(image, d)?;
            return Ok(Resolved {
                image: image.to_string(),
                digest: d.to_string(),
                by_digest: format!("{}/{}@{d}", r.registry(), r.repository()),
            });
        }
        let registry = r.resolve_registry().to_string();
        let client = self.client_for(&registry);
        let auth = self.opts.auth.for_registry(&registry);
        let digest = client
            .fetch_manifest_digest(&r, &auth)
            .await
            .map_err(|e| registry_err(image, &registry, e))?;
        check_digest(image, &digest)?;
        Ok(Resolved {
            image: image.to_string(),
            by_digest: format!("{}/{}@{digest}", r.registry(), r.repository()),
            digest,
        })
    }

    /// Pulls and extracts the release `resolved` names (or finds it in the cache), reporting
    /// progress. `expected_version` non-empty ⇒ `release-metadata` must carry it.
    ///
    /// # Errors
    /// See [`RetrieveError`]; nothing half-written is ever left under the cache's final names.
    pub async fn fetch(
        &self,
        resolved: &Resolved,
        expected_version: &str,
        progress: &(dyn Fn(&PullProgress) + Send + Sync),
    ) -> Result<Retrieved, RetrieveError> {
        let image = resolved.image.as_str();
        check_digest(image, &resolved.digest)?;
        let final_dir = self.cache_path(&resolved.digest);
        let p = PullProgress {
            image: image.to_string(),
            digest: Some(resolved.digest.clone()),
            ..PullProgress::default()
        };
        if let Ok(version) = validate_payload_dir(&final_dir) {
            check_version(expected_version, &version)?;
            return Ok(Retrieved {
                dir: final_dir,
                resolved: resolved.clone(),
                version,
                from_cache: true,
                mirror: None,
            });
        }
        let (candidates, rule) = mirrors::candidates(&resolved.by_digest, &self.opts.mirrors);
        let Some(rule) = rule else {
            return self
                .fetch_from(&resolved.by_digest, resolved, expected_version, progress, p)
                .await;
        };
        let mut tried = Vec::new();
        for c in &candidates {
            match self
                .fetch_from(&c.pull_spec, resolved, expected_version, progress, p.clone())
                .await
            {
                Ok(mut got) => {
                    if c.mirror {
                        tracing::info!(
                            "release image {image} pulled from mirror {} ({})",
                            c.pull_spec,
                            rule.from.join(", ")
                        );
                        got.mirror = Some(c.pull_spec.clone());
                    }
                    return Ok(got);
                }
                // Another place may serve it: the next mirror, then the source.
                Err(RetrieveError::Registry { err, .. }) => {
                    tracing::info!("release image {image}: {} failed: {err}", c.pull_spec);
                    tried.push((c.pull_spec.clone(), err));
                }
                Err(e @ RetrieveError::DigestMismatch { .. }) => {
                    tracing::warn!("release image {image}: {}: {e}", c.pull_spec);
                    tried.push((c.pull_spec.clone(), e.to_string()));
                }
                Err(e) => return Err(e),
            }
        }
        Err(RetrieveError::Mirrors {
            image: image.to_string(),
            tried,
            source_blocked: rule.never_contact_source.then(|| rule.from.join(", ")),
        })
    }

    /// Pulls the release `resolved` names from `pull_spec` (its own repository or a mirror's,
    /// by digest) into the cache.
    async fn fetch_from(
        &self,
        pull_spec: &str,
        resolved: &Resolved,
        expected_version: &str,
        progress: &(dyn Fn(&PullProgress) + Send + Sync),
        mut p: PullProgress,
    ) -> Result<Retrieved, RetrieveError> {
        let image = resolved.image.as_str();
        let final_dir = self.cache_path(&resolved.digest);
        let r = parse(pull_spec)?;
        if r.digest() != Some(resolved.digest.as_str()) {
            return Err(RetrieveError::PullSpec {
                image: pull_spec.to_string(),
                err: format!("not by the digest {}", resolved.digest),
            });
        }
        let registry = r.resolve_registry().to_string();
        let client = self.client_for(&registry);
        let auth = self.opts.auth.for_registry(&registry);
        let (manifest, _digest) = client.pull_image_manifest(&r, &auth).await.map_err(|e| {
            let text = e.to_string();
            if text.contains("platform") || text.contains("resolver") {
                RetrieveError::NoArchitecture {
                    image: image.to_string(),
                    arch: self.opts.architecture.clone(),
                }
            } else {
                registry_err(image, &registry, e)
            }
        })?;
        p.layers_total = manifest.layers.len();
        p.bytes_total = manifest.layers.iter().map(|l| l.size.max(0) as u64).sum();
        progress(&p);
        let cache_io = |path: &Path| {
            let path = path.to_path_buf();
            move |err| RetrieveError::Cache { path, err }
        };
        std::fs::create_dir_all(&self.opts.cache_dir).map_err(cache_io(&self.opts.cache_dir))?;
        let tmp =
            TempDir::new(&self.opts.cache_dir, &resolved.digest).map_err(cache_io(&self.opts.cache_dir))?;
        let root = tmp.path.join("root");
        std::fs::create_dir_all(&root).map_err(cache_io(&root))?;
        let mut totals = extract::ExtractTotals::default();
        for (i, layer) in manifest.layers.iter().enumerate() {
            let file = tmp.path.join(format!("layer-{i}"));
            self.download_layer(&client, &r, image, layer, &file, &mut p, progress)
                .await?;
            let (root2, file2, limits, digest) =
                (root.clone(), file.clone(), self.opts.limits, layer.digest.clone());
            let img = image.to_string();
            totals = tokio::task::spawn_blocking(move || {
                let mut t = totals;
                extract::extract_layer(&file2, &root2, &limits, &mut t)
                    .map(|()| t)
                    .map_err(|err| RetrieveError::Layer {
                        image: img,
                        layer: digest,
                        err,
                    })
            })
            .await
            .map_err(|e| RetrieveError::Cache {
                path: file.clone(),
                err: std::io::Error::other(e.to_string()),
            })??;
            let _ = std::fs::remove_file(&file);
            p.layers_done += 1;
            progress(&p);
        }
        let version = validate_payload_dir(&root).map_err(|what| RetrieveError::NotARelease {
            image: image.to_string(),
            what,
        })?;
        check_version(expected_version, &version)?;
        match std::fs::rename(&root, &final_dir) {
            Ok(()) => {}
            // Another retrieval of the same digest finished first: use its copy.
            Err(_) if validate_payload_dir(&final_dir).is_ok() => {}
            Err(e) => return Err(cache_io(&final_dir)(e)),
        }
        Ok(Retrieved {
            dir: final_dir,
            resolved: resolved.clone(),
            version,
            from_cache: false,
            mirror: None,
        })
    }

    /// Resolves and fetches in one call, within the configured time limit.
    ///
    /// # Errors
    /// As [`Self::resolve`] and [`Self::fetch`]; [`RetrieveError::Canceled`] past the limit.
    pub async fn retrieve(
        &self,
        image: &str,
        expected_version: &str,
        progress: &(dyn Fn(&PullProgress) + Send + Sync),
    ) -> Result<Retrieved, RetrieveError> {
        tokio::time::timeout(self.opts.timeout, async {
            let resolved = self.resolve(image).await?;
            self.fetch(&resolved, expected_version, progress).await
        })
        .await
        .map_err(|_| RetrieveError::Canceled)?
    }

    /// Streams one layer into `file`, hashing as it goes; a mismatch is refused.
    #[allow(clippy::too_many_arguments)]
    async fn download_layer(
        &self,
        client: &Client,
        r: &Reference,
        image: &str,
        layer: &oci_client::manifest::OciDescriptor,
        file: &Path,
        p: &mut PullProgress,
        progress: &(dyn Fn(&PullProgress) + Send + Sync),
    ) -> Result<(), RetrieveError> {
        let registry = r.resolve_registry().to_string();
        let mut stream = client
            .pull_blob_stream(r, layer)
            .await
            .map_err(|e| registry_err(image, &registry, e))?;
        let mut out = tokio::fs::File::create(file)
            .await
            .map_err(|err| RetrieveError::Cache {
                path: file.to_path_buf(),
                err,
            })?;
        let mut hasher = sha2::Sha256::new();
        let mut last = std::time::Instant::now();
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    let text = e.to_string();
                    if text.to_lowercase().contains("digest") {
                        // oci-client checks the digest too; report it as ours.
                        return Err(RetrieveError::DigestMismatch {
                            image: image.to_string(),
                            expected: layer.digest.clone(),
                            actual: format!("sha256:{:x}", hasher.finalize()),
                        });
                    }
                    return Err(registry_err(image, &registry, e));
                }
            };
            hasher.update(&chunk);
            out.write_all(&chunk).await.map_err(|err| RetrieveError::Cache {
                path: file.to_path_buf(),
                err,
            })?;
            p.bytes_done += chunk.len() as u64;
            if last.elapsed() >= Duration::from_millis(250) {
                last = std::time::Instant::now();
                progress(p);
            }
        }
        out.flush().await.map_err(|err| RetrieveError::Cache {
            path: file.to_path_buf(),
            err,
        })?;
        let actual = format!("sha256:{:x}", hasher.finalize());
        if actual != layer.digest {
            return Err(RetrieveError::DigestMismatch {
                image: image.to_string(),
                expected: layer.digest.clone(),
                actual,
            });
        }
        Ok(())
    }
}

fn parse(image: &str) -> Result<Reference, RetrieveError> {
    image.parse::<Reference>().map_err(|e| RetrieveError::PullSpec {
        image: image.to_string(),
        err: e.to_string(),
    })
}

/// The registry's error with its causes (a connection's DNS, proxy or TLS failure is in them).
fn registry_err(image: &str, registry: &str, e: impl std::error::Error) -> RetrieveError {
    let mut err = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !err.contains(&t) {
            err.push_str(": ");
            err.push_str(&t);
        }
        src = inner.source();
    }
    RetrieveError::Registry {
        image: image.to_string(),
        registry: registry.to_string(),
        err: err.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// Refuses a digest that could not safely name a cache directory.
fn check_digest(image: &str, digest: &str) -> Result<(), RetrieveError> {
    let ok = digest
        .strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    if ok {
        Ok(())
    } else {
        Err(RetrieveError::BadDigest {
            image: image.to_string(),
            digest: digest.to_string(),
        })
    }
}

fn check_version(expected: &str, actual: &str) -> Result<(), RetrieveError> {
    if !expected.is_empty() && expected != actual {
        return Err(RetrieveError::Version {
            expected: expected.to_string(),
            actual: actual.to_string(),
        });
    }
    Ok(())
}

/// Upstream's `ValidateDirectory` (`pkg/payload/payload.go`): `manifests/` and
/// `release-manifests/` directories, `release-manifests/release-metadata` and
/// `release-manifests/image-references` files. Returns the metadata's version.
///
/// # Errors
/// What is missing or unreadable, as text.
pub fn validate_payload_dir(dir: &Path) -> Result<String, String> {
    for d in ["manifests", "release-manifests"] {
        if !dir.join(d).is_dir() {
            return Err(format!("no {d}/ directory"));
        }
    }
    if !dir.join("release-manifests/image-references").is_file() {
        return Err("no release-manifests/image-references".into());
    }
    let meta = dir.join("release-manifests/release-metadata");
    let root = std::fs::canonicalize(dir).map_err(|e| e.to_string())?;
    let data =
        super::files::read_checked(&root, &meta).map_err(|e| match std::fs::symlink_metadata(&meta) {
            Err(_) => "no release-manifests/release-metadata".to_string(),
            Ok(_) => format!("release-manifests/release-metadata {e}"),
        })?;
    let v: serde_json::Value = serde_json::from_slice(&data)
        .map_err(|e| format!("release-manifests/release-metadata is not JSON: {e}"))?;
    match v.get("version").and_then(|v| v.as_str()) {
        Some(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err("release-manifests/release-metadata has no version".into()),
    }
}

/// A temporary directory beside the cache entries, removed on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new(parent: &Path, digest: &str) -> std::io::Result<Self> {
        let path = parent.join(format!(
            ".tmp-{}-{}",
            digest.replace(':', "-"),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir(&path)?;
        Ok(Self { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Copies a payload directory's `manifests/` and `release-manifests/` to `dest` (for `cvo
/// payload pull`).
///
/// # Errors
/// A read or write failed (the message names the path).
pub fn copy_payload(src: &Path, dest: &Path) -> Result<(), String> {
    fn copy_dir(s: &Path, d: &Path) -> Result<(), String> {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        for e in std::fs::read_dir(s).map_err(|e| format!("{}: {e}", s.display()))? {
            let e = e.map_err(|e| format!("{}: {e}", s.display()))?;
            let (from, to) = (e.path(), d.join(e.file_name()));
            let t = e.file_type().map_err(|e| format!("{}: {e}", from.display()))?;
            if t.is_dir() {
                copy_dir(&from, &to)?;
            } else if t.is_file() {
                std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", to.display()))?;
            }
        }
        Ok(())
    }
    for d in ["manifests", "release-manifests"] {
        copy_dir(&src.join(d), &dest.join(d))?;
    }
    Ok(())
}

/// Shared with the resolver.
pub(crate) type SharedVerifier = Arc<dyn ReleaseVerifier>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_registries() {
        for r in [
            "127.0.0.1:5000",
            "localhost",
            "localhost:5000",
            "[::1]:5000",
            "127.0.0.2",
        ] {
            assert!(is_loopback(r), "{r}");
        }
        for r in [
            "quay.io",
            "10.0.0.1:5000",
            "localhost.example.com",
            "registry:5000",
        ] {
            assert!(!is_loopback(r), "{r}");
        }
    }

    #[test]
    fn only_sha256_digests_name_cache_entries() {
        let good = format!("sha256:{}", "a1".repeat(32));
        assert!(check_digest("i", &good).is_ok());
        for bad in [
            "sha256:../../etc",
            "sha512:abc",
            "sha256:ABC",
            &format!("sha256:{}", "a".repeat(63)),
        ] {
            assert_eq!(
                check_digest("i", bad).expect_err(bad).to_string(),
                format!("i: unsupported digest {bad:?} (sha256:<64 hex digits> only)")
            );
        }
    }

    #[test]
    fn cache_dir_follows_xdg_and_digest_names() {
        let r = Retriever::new(RetrieveOptions::new(Some(PathBuf::from("/c"))));
        assert_eq!(r.cache_path("sha256:abc"), PathBuf::from("/c/sha256-abc"));
    }
}
