//! The payload side of the contract: how the engine gets a release's payload directory
//! ([`PayloadResolver`], [`ResolveRequest`], [`Resolution`]), the progress of a pull
//! ([`PullProgress`]) and payloads from the local disk ([`LocalPayloads`]).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use serde::Serialize;

/// Finds the payload directory of a release image (upstream: the payload retriever,
/// `pkg/cvo/updatepayload.go`, which downloads the image). The engine calls it when the target
/// release changes; callers implement it (e.g. the demo's embedded payloads) or use
/// [`LocalPayloads`].
pub trait PayloadResolver: Send + Sync {
    /// The operator's own release image (`--release-image`): its payload is local, unverified
    /// and exempt from preconditions.
    fn own_image(&self) -> String;
    /// The payload directory of `image`.
    ///
    /// # Errors
    /// Why the payload cannot be had, as text (the engine reports it as `Unable to download
    /// and prepare the update: {err}`).
    fn resolve(&self, image: &str) -> Result<PathBuf, String>;

    /// Where the payload of `request.image` stands, without blocking: a resolver that pulls
    /// release images from a registry starts the pull in the background on the first call and
    /// answers [`Resolution::Pending`] with its progress until it is done; the engine calls
    /// again when [`Self::wakeup`] fires. The default: [`Self::resolve`]'s, `registered`.
    fn poll(&self, request: &ResolveRequest) -> Resolution {
        match self.resolve(&request.image) {
            Ok(dir) => Resolution::Ready {
                dir,
                accepted_risk: None,
                verified: false,
                registered: true,
            },
            Err(e) => Resolution::Failed(ResolveFailure::Retrieve(e)),
        }
    }

    /// Stops every retrieval (download, verification) of a release other than `keep`'s, at
    /// once: the engine calls it whenever it polls for a target, so a cleared or replaced
    /// request stops using the network and the disk within the engine's next turn. Finished
    /// payloads stay cached. Default: nothing (resolvers that answer at once).
    fn cancel_others(&self, _keep: &ResolveRequest) {}

    /// Notified when a background retrieval made progress or finished (the engine then polls
    /// again); `None` for resolvers that answer at once.
    fn wakeup(&self) -> Option<Arc<tokio::sync::Notify>> {
        None
    }

    /// Saves the release signatures its verifier checked into the cluster through `client`
    /// (upstream's signature persister): the engine calls it on every turn in active-apply
    /// only; the resolver saves at most once per `every` and never blocks. Default: nothing.
    fn persist_signatures(&self, _client: &kube::Client, _every: std::time::Duration) {}
}

/// What the engine asks a [`PayloadResolver`] for: the target release.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolveRequest {
    /// The release image pull spec (`spec.desiredUpdate.image` or `status.desired.image`).
    pub image: String,
    /// The requested version (may be empty).
    pub version: String,
    /// `spec.desiredUpdate.force`: a failed signature verification is accepted as a risk.
    pub force: bool,
    /// The release the cluster already runs (`status.desired`, accepted earlier) or the
    /// operator's own: not verified again (upstream never verifies its own, local release).
    pub current: bool,
}

/// The answer of [`PayloadResolver::poll`].
#[derive(Clone, Debug, PartialEq)]
pub enum Resolution {
    /// The payload is on disk.
    Ready {
        /// Its root (`manifests/` + `release-manifests/`).
        dir: PathBuf,
        /// A verification failure bypassed by `force`, as upstream records it in the load
        /// status' accepted risks (`Target release version=... cannot be verified, but
        /// continuing anyway because the update was forced: {err}`).
        accepted_risk: Option<String>,
        /// The release's signature was verified.
        verified: bool,
        /// Handed to this process by its administrator (own release, [`LocalPayloads`], demo):
        /// accepted unsigned. Neither this nor `verified`: accepted only when forced.
        registered: bool,
    },
    /// Being retrieved; how far.
    Pending(PullProgress),
    /// Cannot be had.
    Failed(ResolveFailure),
}

/// Why a release payload cannot be had (upstream `pkg/cvo/updatepayload.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolveFailure {
    /// Pulling or preparing it failed; the engine reports `Unable to download and prepare the
    /// update: {text}` (reason `UpdatePayloadRetrievalFailed`).
    Retrieve(String),
    /// Its signature does not verify and the update is not forced; the engine reports `The
    /// update cannot be verified: {text}` (reason `ImageVerificationFailed`).
    Verify(String),
}

/// Progress of a release image pull (what the dashboard shows while ReleaseAccepted is
/// Unknown).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PullProgress {
    /// The pull spec being retrieved.
    pub image: String,
    /// The manifest digest (`sha256:<hex>`) once the tag or digest is resolved.
    pub digest: Option<String>,
    /// Layer bytes received (compressed, as the registry sends them).
    pub bytes_done: u64,
    /// Layer bytes in the image (the manifest's layer sizes; 0 before the manifest is read).
    pub bytes_total: u64,
    /// Layers received, verified and extracted.
    pub layers_done: usize,
    /// Layers in the image.
    pub layers_total: usize,
}

impl PullProgress {
    /// One line for people: `sha256:<12 hex> layers 1/3, 12.5/104.9 MB` (the pull spec until
    /// the digest is known; `resolving` before the manifest is read).
    pub fn describe(&self) -> String {
        let what = match &self.digest {
            Some(d) => d.get(..19).unwrap_or(d).to_string(),
            None => self.image.clone(),
        };
        if self.layers_total == 0 {
            return format!("{what} resolving");
        }
        format!(
            "{what} layers {}/{}, {:.1}/{:.1} MB",
            self.layers_done,
            self.layers_total,
            self.bytes_done as f64 / 1e6,
            self.bytes_total as f64 / 1e6
        )
    }
}

/// Payload directories on the local disk, keyed by image, registered by the administrator.
#[derive(Clone, Debug, Default)]
pub struct LocalPayloads {
    /// The operator's own release image.
    pub own_image: String,
    /// Its payload directory.
    pub own_dir: PathBuf,
    /// Other releases the engine may update to, by image.
    pub others: BTreeMap<String, PathBuf>,
}

impl LocalPayloads {
    /// The stable pseudo pull spec of a payload directory that has no release image:
    /// `file://{absolute, canonical path}`. It is not an image a registry serves; it names the
    /// directory the payload was read from, so the same directory is the same release in
    /// ClusterVersion history across restarts.
    ///
    /// # Errors
    /// The directory cannot be canonicalised (e.g. it does not exist).
    pub fn pseudo_pull_spec(dir: &Path) -> std::io::Result<String> {
        Ok(format!("file://{}", std::fs::canonicalize(dir)?.display()))
    }
}

impl PayloadResolver for LocalPayloads {
    fn own_image(&self) -> String {
        self.own_image.clone()
    }
    fn resolve(&self, image: &str) -> Result<PathBuf, String> {
        if image == self.own_image {
            return Ok(self.own_dir.clone());
        }
        self.others
            .get(image)
            .cloned()
            .ok_or_else(|| format!("no payload is known for image {image}"))
    }
}
