//! [`Verifier`]: every keyring must find one signature of the release digest, looked up in
//! signature ConfigMaps first, then `spec.signatureStores` when set (which then replace the
//! default stores), else the default stores of the verification ConfigMap; the stores of one
//! group are read concurrently and the search stops as soon as every keyring is satisfied.
//!
//! Upstream: `releaseVerifier.Verify` in `pkg/verify/verify.go` of openshift/library-go, the
//! store chain of `pkg/cvo/cvo.go` and `pkg/customsignaturestore/customsignaturestore.go` in
//! openshift/cluster-version-operator. Deliberate difference: the error names every store and
//! key tried and why each signature failed (upstream's names only the keyrings).

use std::{
    collections::{BTreeMap, VecDeque},
    fmt,
    sync::{Arc, Mutex, RwLock},
    time::{Duration, SystemTime},
};

use k8s_openapi::api::core::v1::ConfigMap;
use tokio::time::Instant;

use super::{
    atomic,
    config::{ConfigError, Store, VerifierConfig, custom_stores},
    configmap::{self, SIGNATURES_LABEL},
    openpgp::{self, Keyring, SignatureFailure},
    store::{self, DEFAULT_VERIFY_TIMEOUT, Fetched, MAX_SIGNATURES, Reader},
};
use crate::openshift::config_v1::SignatureStore;
use crate::reconcile::payload::retrieve::egress::ClusterEgress;

/// How many verified digests are remembered (upstream's cache size).
pub const MAX_CACHED_DIGESTS: usize = 64;

/// A digest that verified: which keyring accepted which signature, from where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The release digest, `algo:hex`.
    pub digest: String,
    /// One entry per keyring, in keyring order.
    pub by: Vec<VerifiedBy>,
    /// The signatures that verified (each once), for saving into `signatures-managed`.
    pub signatures: Vec<Vec<u8>>,
    /// Whether this came from the cache of verified digests (no store was read).
    pub cached: bool,
}

/// One keyring's accepted signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedBy {
    /// Keyring name (e.g. `verifier-public-key-redhat`).
    pub keyring: String,
    /// Upper-case hex fingerprint of the signing key.
    pub key: String,
    /// Where the signature was (URL, file path, or `config map NS/NAME key KEY`).
    pub source: String,
    /// `critical.identity.docker-reference` of the signature.
    pub identity: String,
}

/// What happened at one place a signature was looked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The store has no signature for the digest (404 or no file at `signature-1`, or no
    /// matching ConfigMap key).
    NoSignatures,
    /// The read failed (HTTP status, connection or I/O error, size cap).
    Failed(String),
    /// The verification deadline passed during the read.
    TimedOut(Duration),
    /// An empty body (skipped, as upstream).
    Empty,
    /// The signature was read but does not count, per keyring that still needed one.
    Rejected(Vec<(String, SignatureFailure)>),
    /// A configuration problem that ended the search (e.g. `spec.signatureStores` exhausted).
    Stopped(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::NoSignatures => f.write_str("no signatures"),
            Outcome::Failed(e) => f.write_str(e),
            Outcome::TimedOut(d) => write!(f, "timed out (verification deadline {d:?})"),
            Outcome::Empty => f.write_str("empty, skipped"),
            Outcome::Rejected(fails) => {
                let parts: Vec<String> = fails.iter().map(|(k, e)| format!("{k}: {e}")).collect();
                f.write_str(&parts.join(" / "))
            }
            Outcome::Stopped(e) => f.write_str(e),
        }
    }
}

/// One place looked at: a store (or the signature ConfigMaps), an item in it (`signature-2`,
/// a ConfigMap key; empty for the store as a whole) and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The store's URL, or `config maps in openshift-config-managed with label ...`.
    pub store: String,
    /// `signature-N`, `config map NS/NAME key KEY`, or empty.
    pub item: String,
    /// What happened.
    pub outcome: Outcome,
}

/// Why a digest did not verify: the keyrings without a valid signature, every key configured
/// and every store and signature tried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unverified {
    /// The release digest.
    pub digest: String,
    /// Names of the keyrings no signature satisfied.
    pub keyrings: Vec<String>,
    /// Every keyring with its keys (`name (FINGERPRINT user-id)`).
    pub keys: Vec<String>,
    /// Every store in lookup order, with what was found there.
    pub attempts: Vec<Attempt>,
}

impl fmt::Display for Unverified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unable to verify {} against keyrings: {} (keys: {}); stores tried: ",
            self.digest,
            self.keyrings.join(", "),
            self.keys.join(", ")
        )?;
        if self.attempts.is_empty() {
            return f.write_str("none");
        }
        let mut first = true;
        let mut last_store: Option<&str> = None;
        for a in &self.attempts {
            if last_store != Some(a.store.as_str()) {
                if !first {
                    f.write_str("; ")?;
                }
                write!(f, "{}: ", a.store)?;
                last_store = Some(&a.store);
            } else {
                f.write_str(", ")?;
            }
            first = false;
            if a.item.is_empty() {
                write!(f, "{}", a.outcome)?;
            } else {
                write!(f, "{}: {}", a.item, a.outcome)?;
            }
        }
        Ok(())
    }
}

/// Why [`Verifier::verify`] failed. Texts are upstream's (`pkg/verify/verify.go` in
/// openshift/library-go) but for [`VerifyError::Unverified`], which says more.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The payload has no verification ConfigMap: every update is rejected.
    #[error("verification is not possible")]
    NotPossible,
    /// No keyring, or no store at all.
    #[error("the release verifier is incorrectly configured, unable to verify digests")]
    NotConfigured,
    /// A pull spec by tag (no `@digest`).
    #[error("release images that are not accessed via digest cannot be verified")]
    NoDigest,
    /// A digest that is not `algo:hash`.
    #[error("the provided release image digest has an invalid format: {0:?}")]
    InvalidDigest(String),
    /// No valid signature for some keyring.
    #[error("{0}")]
    Unverified(Box<Unverified>),
}

/// The digest part of a pull spec (text after the last `@`), or `None` for a tag.
pub fn digest_of(pullspec: &str) -> Option<&str> {
    pullspec.rsplit_once('@').map(|(_, d)| d)
}

/// Upstream's digest rule: `algo(+-._ separated):[A-Za-z0-9=_-]+`.
fn valid_digest(d: &str) -> bool {
    let Some((algo, hash)) = d.split_once(':') else {
        return false;
    };
    let algo_ok = !algo.is_empty()
        && algo
            .split(['.', '+', '_', '-'])
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    let hash_ok = !hash.is_empty()
        && hash
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'=' || b == b'_' || b == b'-');
    algo_ok && hash_ok
}

/// Verifies release digests; cheap to share (`Arc`), safe to call concurrently.
#[derive(Debug)]
pub struct Verifier {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Reject,
    Configured(Box<Configured>),
}

#[derive(Debug)]
struct Configured {
    keyrings: Vec<Keyring>,
    default_stores: Vec<Reader>,
    custom_stores: Option<Vec<Reader>>,
    /// `None`: signature ConfigMaps are not consulted (the CLI without a cluster).
    config_maps: Option<RwLock<Vec<ConfigMap>>>,
    timeout: Duration,
    cache: Mutex<VecDeque<Verified>>,
    /// The proxy and trusted CA the HTTP stores are reached with.
    egress: ClusterEgress,
}

fn readers(stores: Vec<Store>, egress: &ClusterEgress) -> Result<Vec<Reader>, ConfigError> {
    let mut default_client: Option<Arc<reqwest::Client>> = None;
    let mut out = Vec::with_capacity(stores.len());
    for store in stores {
        let client = match (&store.location, &store.ca_pem) {
            (super::StoreLocation::File(_), _) => None,
            (_, Some(pem)) => Some(Arc::new(
                store::http_client(Some(pem), egress).map_err(|e| ConfigError(format!("{store}: {e}")))?,
            )),
            (_, None) => {
                if default_client.is_none() {
                    default_client = Some(Arc::new(
                        store::http_client(None, egress).map_err(|e| ConfigError(format!("{store}: {e}")))?,
                    ));
                }
                default_client.clone()
            }
        };
        out.push(Reader { store, client });
    }
    Ok(out)
}

impl Verifier {
    /// The verifier of a payload without a verification ConfigMap: every digest fails with
    /// "verification is not possible".
    pub fn reject() -> Verifier {
        Verifier { kind: Kind::Reject }
    }

    /// A verifier for `config` (keyrings and default stores), with no custom stores, no
    /// signature ConfigMaps and the default time limit.
    ///
    /// # Errors
    /// An HTTP client that cannot be built.
    pub fn new(config: VerifierConfig) -> Result<Verifier, ConfigError> {
        Verifier::with_egress(config, ClusterEgress::default())
    }

    /// As [`Verifier::new`], with HTTP stores reached through the cluster's proxy and trusted
    /// CA bundle (`egress`); the custom stores set later use it too.
    ///
    /// # Errors
    /// An HTTP client that cannot be built (bad proxy URL or CA bundle).
    pub fn with_egress(config: VerifierConfig, egress: ClusterEgress) -> Result<Verifier, ConfigError> {
        let mut keyrings = config.keyrings;
        keyrings.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(Verifier {
            kind: Kind::Configured(Box::new(Configured {
                keyrings,
                default_stores: readers(config.stores, &egress)?,
                custom_stores: None,
                config_maps: None,
                timeout: DEFAULT_VERIFY_TIMEOUT,
                cache: Mutex::new(VecDeque::new()),
                egress,
            })),
        })
    }

    /// The verifier the CVO builds in a cluster: the verification ConfigMap (`None` ⇒
    /// [`Verifier::reject`]), the ClusterVersion's `spec.signatureStores` (`None` = unset),
    /// `ca_bundle(name)` for their CAs (`ca.crt` of `openshift-config/<name>`), and the
    /// signature ConfigMaps listed so far.
    ///
    /// # Errors
    /// An unusable ConfigMap or store, worded as upstream.
    pub fn from_cluster(
        verification: Option<&ConfigMap>,
        signature_stores: Option<&[SignatureStore]>,
        ca_bundle: impl Fn(&str) -> Option<String>,
        signature_config_maps: Vec<ConfigMap>,
    ) -> Result<Verifier, ConfigError> {
        let Some(cm) = verification else {
            return Ok(Verifier::reject());
        };
        let custom = custom_stores(signature_stores, ca_bundle)?;
        Verifier::new(VerifierConfig::from_config_map(cm)?)?
            .with_custom_stores(custom)
            .map(|v| v.with_signature_config_maps(signature_config_maps))
    }

    /// Sets `spec.signatureStores` (`None` = unset: the default stores apply; `Some` replaces
    /// them, and an empty list fails every verification as upstream).
    ///
    /// # Errors
    /// An HTTP client that cannot be built (bad CA bundle).
    pub fn with_custom_stores(mut self, stores: Option<Vec<Store>>) -> Result<Self, ConfigError> {
        if let Kind::Configured(c) = &mut self.kind {
            c.custom_stores = stores.map(|s| readers(s, &c.egress)).transpose()?;
        }
        Ok(self)
    }

    /// Consults signature ConfigMaps first, starting with `config_maps`.
    pub fn with_signature_config_maps(mut self, config_maps: Vec<ConfigMap>) -> Self {
        if let Kind::Configured(c) = &mut self.kind {
            c.config_maps = Some(RwLock::new(config_maps));
        }
        self
    }

    /// Replaces the signature ConfigMaps (the engine lists them at most every
    /// [`configmap::RELIST_INTERVAL`]); ignored unless ConfigMaps are consulted.
    pub fn set_signature_config_maps(&self, config_maps: Vec<ConfigMap>) {
        if let Kind::Configured(c) = &self.kind
            && let Some(lock) = &c.config_maps
            && let Ok(mut guard) = lock.write()
        {
            *guard = config_maps;
        }
    }

    /// Sets the time limit of one verification (default [`DEFAULT_VERIFY_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        if let Kind::Configured(c) = &mut self.kind {
            c.timeout = timeout;
        }
        self
    }

    /// The keyrings, sorted by name (empty for the reject verifier).
    pub fn keyrings(&self) -> &[Keyring] {
        match &self.kind {
            Kind::Reject => &[],
            Kind::Configured(c) => &c.keyrings,
        }
    }

    /// One line for humans: which keys must sign and where signatures are looked up.
    pub fn describe(&self) -> String {
        let Kind::Configured(c) = &self.kind else {
            return "no verification config map in the payload: every update is rejected".to_string();
        };
        let keys: Vec<String> = c.keyrings.iter().map(Keyring::describe).collect();
        let mut stores: Vec<String> = Vec::new();
        if c.config_maps.is_some() {
            stores.push(config_maps_label());
        }
        match &c.custom_stores {
            Some(custom) => stores.extend(custom.iter().map(|r| r.store.to_string())),
            None => stores.extend(c.default_stores.iter().map(|r| r.store.to_string())),
        }
        format!(
            "All release image digests must have GPG signatures from {} - will check for signatures in containers/image format at {}",
            keys.join(", "),
            stores.join(", ")
        )
    }

    /// The verified signatures remembered, by digest (what the engine saves into
    /// `signatures-managed` with [`configmap::managed_signatures_config_map`]).
    pub fn signatures(&self) -> BTreeMap<String, Vec<Vec<u8>>> {
        let Kind::Configured(c) = &self.kind else {
            return BTreeMap::new();
        };
        let cache = c.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .iter()
            .map(|v| (v.digest.clone(), v.signatures.clone()))
            .collect()
    }

    /// Verifies the release `pullspec`: its `digest` if given, else the digest after its last
    /// `@` (the shape of the engine's release-verifier hook).
    ///
    /// # Errors
    /// As [`Verifier::verify`].
    pub async fn verify_release(&self, pullspec: &str, digest: &str) -> Result<Verified, VerifyError> {
        let digest = if digest.is_empty() {
            digest_of(pullspec).unwrap_or_default()
        } else {
            digest
        };
        self.verify(digest).await
    }

    /// Verifies `digest` (`algo:hex`, or a pull spec `...@algo:hex`): every keyring must have
    /// one valid signature of it within the time limit.
    ///
    /// # Errors
    /// [`VerifyError`]; its text names every store and key tried and why each failed.
    pub async fn verify(&self, digest: &str) -> Result<Verified, VerifyError> {
        let c = match &self.kind {
            Kind::Reject => return Err(VerifyError::NotPossible),
            Kind::Configured(c) => c,
        };
        let no_store = c.default_stores.is_empty() && c.custom_stores.is_none() && c.config_maps.is_none();
        if c.keyrings.is_empty() || no_store {
            return Err(VerifyError::NotConfigured);
        }
        let digest = match digest_of(digest) {
            Some(d) => d,
            // A pull spec by tag (a digest has no `/`).
            None if digest.contains('/') => "",
            None => digest,
        };
        if digest.is_empty() {
            return Err(VerifyError::NoDigest);
        }
        if !valid_digest(digest) {
            return Err(VerifyError::InvalidDigest(digest.to_string()));
        }
        if let Some(hit) = c.cached(digest) {
            return Ok(hit);
        }
        let search = Search::new(digest, &c.keyrings);
        let deadline = Instant::now() + c.timeout;
        let (algo, hex) = digest.split_once(':').unwrap_or_default();
        let mut order = 0usize;

        if let Some(lock) = &c.config_maps {
            let cms = lock.read().map(|g| g.clone()).unwrap_or_default();
            let label = config_maps_label();
            let found = configmap::signatures_in(&cms, digest);
            if found.is_empty() {
                search.note(order, &label, "", Outcome::NoSignatures);
            }
            for (item, bytes) in found {
                if search.done() {
                    break;
                }
                search.offer(order, &label, &item, &item, &bytes);
            }
            order += 1;
        }
        let group = match &c.custom_stores {
            Some(custom) if custom.is_empty() => {
                search.note(
                    order,
                    "ClusterVersion spec.signatureStores",
                    "",
                    Outcome::Stopped("is an empty array; unset signatureStores entirely to enable the default signature stores".to_string()),
                );
                None
            }
            Some(custom) => Some((custom, true)),
            None => Some((&c.default_stores, false)),
        };
        if let Some((readers, custom)) = group
            && !search.done()
        {
            let runs = readers
                .iter()
                .enumerate()
                .map(|(i, r)| search_store(&search, order + i, r, algo, hex, deadline, c.timeout));
            futures::future::join_all(runs).await;
            order += readers.len();
            if custom && !search.done() {
                search.note(
                    order,
                    "ClusterVersion spec.signatureStores",
                    "",
                    Outcome::Stopped(
                        "exhausted without finding a valid signature (the default stores are not consulted while it is set)"
                            .to_string(),
                    ),
                );
            }
        }
        let verified = search.finish(&c.keyrings)?;
        c.remember(&verified);
        Ok(verified)
    }
}

impl Configured {
    fn cached(&self, digest: &str) -> Option<Verified> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.iter().find(|v| v.digest == digest).map(|v| Verified {
            cached: true,
            ..v.clone()
        })
    }

    fn remember(&self, verified: &Verified) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.retain(|v| v.digest != verified.digest);
        while cache.len() >= MAX_CACHED_DIGESTS {
            cache.pop_front();
        }
        cache.push_back(verified.clone());
    }
}

fn config_maps_label() -> String {
    format!(
        "config maps in {} with label {SIGNATURES_LABEL:?}",
        super::config::CONFIG_MANAGED_NAMESPACE
    )
}

/// Reads `signature-1..` of one store until its end, a failure, the deadline, or until every
/// keyring is satisfied. A bad signature moves on to the next one.
async fn search_store(
    search: &Search<'_>,
    order: usize,
    reader: &Reader,
    algo: &str,
    hex: &str,
    deadline: Instant,
    timeout: Duration,
) {
    let label = reader.store.to_string();
    for n in 1..=MAX_SIGNATURES {
        if search.done() {
            return;
        }
        let item = format!("signature-{n}");
        match reader.fetch(algo, hex, n, deadline).await {
            Fetched::Body(b) if b.is_empty() => search.note(order, &label, &item, Outcome::Empty),
            Fetched::Body(b) => {
                let source = store::signature_location(&reader.store, algo, hex, n);
                search.offer(order, &label, &item, &source, &b);
            }
            Fetched::End => {
                if n == 1 {
                    search.note(order, &label, "", Outcome::NoSignatures);
                }
                return;
            }
            Fetched::Failed(e) => {
                search.note(order, &label, &item, Outcome::Failed(e));
                return;
            }
            Fetched::TimedOut => {
                search.note(order, &label, &item, Outcome::TimedOut(timeout));
                return;
            }
        }
    }
}

/// The state of one verification, shared by the stores read concurrently.
struct Search<'a> {
    digest: &'a str,
    keyrings: &'a [Keyring],
    now: SystemTime,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Per keyring (same order): the accepted signature.
    accepted: Vec<Option<VerifiedBy>>,
    signatures: Vec<Vec<u8>>,
    /// By store order, then in the order found.
    attempts: BTreeMap<usize, Vec<Attempt>>,
}

impl<'a> Search<'a> {
    fn new(digest: &'a str, keyrings: &'a [Keyring]) -> Self {
        Search {
            digest,
            keyrings,
            now: SystemTime::now(),
            state: Mutex::new(State {
                accepted: vec![None; keyrings.len()],
                ..State::default()
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn done(&self) -> bool {
        self.lock().accepted.iter().all(Option::is_some)
    }

    fn note(&self, order: usize, store: &str, item: &str, outcome: Outcome) {
        self.lock().attempts.entry(order).or_default().push(Attempt {
            store: store.to_string(),
            item: item.to_string(),
            outcome,
        });
    }

    /// Checks one signature against every keyring still unsatisfied.
    fn offer(&self, order: usize, store: &str, item: &str, source: &str, bytes: &[u8]) {
        let mut fails = Vec::new();
        let mut used = false;
        let mut state = self.lock();
        for (i, ring) in self.keyrings.iter().enumerate() {
            if state.accepted[i].is_some() {
                continue;
            }
            let checked = openpgp::check_message(bytes, ring, self.now).and_then(|signed| {
                atomic::check_document(&signed.content, self.digest).map(|doc| (signed, doc))
            });
            match checked {
                Ok((signed, doc)) => {
                    state.accepted[i] = Some(VerifiedBy {
                        keyring: ring.name().to_string(),
                        key: signed.signer,
                        source: source.to_string(),
                        identity: doc.critical.identity.docker_reference,
                    });
                    used = true;
                }
                Err(e) => fails.push((ring.name().to_string(), e)),
            }
        }
        if used {
            state.signatures.push(bytes.to_vec());
        }
        if !fails.is_empty() {
            state.attempts.entry(order).or_default().push(Attempt {
                store: store.to_string(),
                item: item.to_string(),
                outcome: Outcome::Rejected(fails),
            });
        }
    }

    fn finish(self, keyrings: &[Keyring]) -> Result<Verified, VerifyError> {
        let state = self.state.into_inner().unwrap_or_else(|p| p.into_inner());
        let missing: Vec<String> = keyrings
            .iter()
            .zip(&state.accepted)
            .filter(|(_, a)| a.is_none())
            .map(|(k, _)| k.name().to_string())
            .collect();
        if missing.is_empty() {
            return Ok(Verified {
                digest: self.digest.to_string(),
                by: state.accepted.into_iter().flatten().collect(),
                signatures: state.signatures,
                cached: false,
            });
        }
        Err(VerifyError::Unverified(Box::new(Unverified {
            digest: self.digest.to_string(),
            keyrings: missing,
            keys: keyrings.iter().map(Keyring::describe).collect(),
            attempts: state.attempts.into_values().flatten().collect(),
        })))
    }
}
