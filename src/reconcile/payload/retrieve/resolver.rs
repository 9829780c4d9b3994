//! [`RegistryPayloads`]: the engine's [`PayloadResolver`] for release images in registries.
//! Local payloads (the operator's own directory, or the directory of its own `file://` pseudo
//! pull spec, and the other directories registered in its [`LocalPayloads`]) answer at once,
//! as registered payloads; any other `file://` pseudo pull
//! spec is refused (an update service or a ClusterVersion spec naming a path must not get an
//! unverified directory applied); any other pull spec is retrieved in the background (resolve
//! the digest, verify, pull and extract, within upstream's time limit) while
//! [`PayloadResolver::poll`] answers `Pending` with the progress, and the engine is woken
//! through [`PayloadResolver::wakeup`] at each step.

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use tokio::sync::Notify;

use super::{DockerAuth, ReleaseVerifier, Retriever, SharedVerifier};
use crate::reconcile::api::{
    LocalPayloads, PayloadResolver, PullProgress, Resolution, ResolveFailure, ResolveRequest,
};

/// How long a failed retrieval is reported before the next poll tries again.
const RETRY_AFTER: Duration = Duration::from_secs(15);

enum PullState {
    /// The pull's progress, and its task (aborted by [`PayloadResolver::cancel_others`]).
    Running(Arc<Mutex<PullProgress>>, Option<tokio::task::AbortHandle>),
    Done {
        dir: PathBuf,
        accepted_risk: Option<String>,
        verified: bool,
    },
    Failed {
        failure: ResolveFailure,
        at: Instant,
    },
}

/// Release payloads from local directories and registries (see the module documentation).
pub struct RegistryPayloads {
    local: LocalPayloads,
    retriever: Arc<Retriever>,
    verifier: Option<SharedVerifier>,
    /// The cluster the proxy, trusted CA and (see `pull_secret`) pull secret are read from.
    cluster: Option<kube::Client>,
    /// Whether registry credentials come from the cluster's pull secret (no credentials file).
    pull_secret: bool,
    pulls: Arc<Mutex<HashMap<(String, bool), PullState>>>,
    notify: Arc<Notify>,
    /// When the verified signatures were last handed to the verifier to save.
    persisted_at: Mutex<Option<Instant>>,
    /// Set once a release verified: there is something to save.
    verified_any: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for RegistryPayloads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryPayloads")
            .field("local", &self.local)
            .field("retriever", &self.retriever)
            .field("verifier", &self.verifier.is_some())
            .finish_non_exhaustive()
    }
}

impl RegistryPayloads {
    /// Local payloads first, then `retriever`. An empty `local.own_dir` means the own image is
    /// pulled too.
    pub fn new(local: LocalPayloads, retriever: Retriever) -> Self {
        Self {
            local,
            retriever: Arc::new(retriever),
            verifier: None,
            cluster: None,
            pull_secret: false,
            pulls: Arc::new(Mutex::new(HashMap::new())),
            notify: Arc::new(Notify::new()),
            persisted_at: Mutex::new(None),
            verified_any: Arc::default(),
        }
    }

    /// Checks each release's signature with `verifier` before its payload is accepted (without
    /// one, pulled releases are reported unverified, and the engine accepts them only when the
    /// update is forced, as upstream's "reject" verifier). The own
    /// release is never verified (upstream: a local payload); the verifier is told where its
    /// payload is ([`ReleaseVerifier::own_payload`]) now when it is a directory, else once it
    /// is pulled.
    pub fn with_verifier(mut self, verifier: Arc<dyn ReleaseVerifier>) -> Self {
        if !self.local.own_dir.as_os_str().is_empty() {
            verifier.own_payload(&self.local.own_dir);
        }
        self.verifier = Some(verifier);
        self
    }

    /// Reads registry credentials from the cluster's `openshift-config/pull-secret` when the
    /// retriever has none, and the cluster's proxy and trusted CA (as
    /// [`Self::with_cluster_egress`]).
    pub fn with_cluster_pull_secret(mut self, client: kube::Client) -> Self {
        self.cluster = Some(client);
        self.pull_secret = true;
        self
    }

    /// Pulls through the cluster-wide proxy (the Proxy `cluster` status, which replaces the
    /// environment's when set) trusting the cluster's CA bundle too (`spec.trustedCA` of the
    /// Proxy, else `openshift-config/user-ca-bundle`) and following its registry mirrors
    /// (ImageDigestMirrorSets and ImageContentSourcePolicies, [`super::mirrors`]); read at the
    /// start of each pull.
    pub fn with_cluster_egress(mut self, client: kube::Client) -> Self {
        self.cluster = Some(client);
        self
    }

    fn local_dir(&self, image: &str) -> Option<Result<PathBuf, String>> {
        if image == self.local.own_image {
            if !self.local.own_dir.as_os_str().is_empty() {
                return Some(Ok(self.local.own_dir.clone()));
            }
            // The own release named by its `file://` pseudo pull spec (the dashboard takes the
            // cluster's running release as its own): its directory, as the own release.
            if let Some(path) = image.strip_prefix("file://") {
                let p = PathBuf::from(path);
                return Some(if p.is_dir() {
                    Ok(p)
                } else {
                    Err(format!("{path}: not a payload directory"))
                });
            }
        }
        if let Some(d) = self.local.others.get(image) {
            return Some(Ok(d.clone()));
        }
        if image.starts_with("file://") {
            return Some(Err(unregistered_local(image)));
        }
        None
    }

    fn start(&self, request: &ResolveRequest, progress: Arc<Mutex<PullProgress>>) {
        let key = (request.image.clone(), request.force);
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            if let Ok(mut m) = self.pulls.lock() {
                m.insert(
                    key,
                    PullState::Failed {
                        failure: ResolveFailure::Retrieve(
                            "no async runtime to pull the release image on".into(),
                        ),
                        at: Instant::now(),
                    },
                );
            }
            return;
        };
        let image = request.image.clone();
        let version = request.version.clone();
        let force = request.force;
        let retriever = self.retriever.clone();
        let own = image == self.local.own_image || request.current;
        // The own release is not verified (upstream: a local payload).
        let verifier = self.verifier.clone().filter(|_| !own);
        let own_verifier = self.verifier.clone().filter(|_| own);
        let notify = self.notify.clone();
        let cluster = self.cluster.clone();
        let pull_secret = self.pull_secret;
        let pulls = self.pulls.clone();
        let verified_any = self.verified_any.clone();
        let task = handle.spawn(async move {
            let outcome = run_pull(
                &retriever,
                verifier.as_deref(),
                cluster.map(|c| (c, pull_secret)),
                &image,
                &version,
                force,
                &progress,
                &notify,
            )
            .await;
            if let PullState::Failed { failure, .. } = &outcome {
                tracing::warn!("retrieving release image {image}: {failure:?}");
            }
            if let (PullState::Done { dir, .. }, Some(v)) = (&outcome, &own_verifier) {
                v.own_payload(dir);
            }
            if let PullState::Done { verified: true, .. } = &outcome {
                verified_any.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            if let Ok(mut m) = pulls.lock()
                && matches!(m.get(&key), Some(PullState::Running(..)))
            {
                m.insert(key, outcome);
            }
            notify.notify_one();
        });
        if let Ok(mut m) = self.pulls.lock()
            && let Some(PullState::Running(_, h)) = m.get_mut(&(request.image.clone(), request.force))
        {
            *h = Some(task.abort_handle());
        }
    }
}

/// Why a `file://` pull spec that is neither the own release nor a registered payload is
/// not served.
fn unregistered_local(image: &str) -> String {
    format!(
        "{image} is not a payload registered with this operator: a file:// release is read only when it is the operator's own release or a payload given to it on its command line, never because a ClusterVersion or an update service names the path"
    )
}

#[allow(clippy::too_many_arguments)]
async fn run_pull(
    retriever: &Retriever,
    verifier: Option<&dyn ReleaseVerifier>,
    cluster: Option<(kube::Client, bool)>,
    image: &str,
    version: &str,
    force: bool,
    progress: &Arc<Mutex<PullProgress>>,
    notify: &Arc<Notify>,
) -> PullState {
    let failed = |failure| PullState::Failed {
        failure,
        at: Instant::now(),
    };
    let started = tokio::time::Instant::now();
    let limit = retriever.options().timeout;
    let with_cluster = match cluster {
        Some((client, pull_secret)) => Some(cluster_retriever(retriever, &client, pull_secret).await),
        None => None,
    };
    let retriever = with_cluster.as_ref().unwrap_or(retriever);
    let resolved = match tokio::time::timeout(limit, retriever.resolve(image)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return failed(ResolveFailure::Retrieve(e.to_string())),
        Err(_) => return failed(ResolveFailure::Retrieve("download was canceled".into())),
    };
    if let Ok(mut p) = progress.lock() {
        p.digest = Some(resolved.digest.clone());
    }
    notify.notify_one();
    tracing::info!("release image {image} is {}", resolved.digest);
    let mut accepted_risk = None;
    let mut verified = false;
    if let Some(v) = verifier {
        // Verification gets half of the time left (upstream updatepayload.go).
        let left = limit.saturating_sub(started.elapsed()) / 2;
        let r = match tokio::time::timeout(left, v.verify(image, &resolved.digest)).await {
            Ok(r) => r,
            Err(_) => Err("verification timed out".to_string()),
        };
        match r {
            Ok(()) => verified = true,
            Err(e) if force => {
                accepted_risk = Some(format!(
                    "Target release version=\"{version}\" image=\"{image}\" cannot be verified, but continuing anyway because the update was forced: {e}"
                ));
            }
            Err(e) => return failed(ResolveFailure::Verify(e)),
        }
    }
    let report = |p: &PullProgress| {
        if let Ok(mut cur) = progress.lock() {
            *cur = p.clone();
        }
        notify.notify_one();
    };
    let left = limit.saturating_sub(started.elapsed());
    // The version is checked by the engine after the load (step VerifyPayloadVersion).
    match tokio::time::timeout(left, retriever.fetch(&resolved, "", &report)).await {
        Ok(Ok(r)) => {
            tracing::info!(
                "release image {image} ({}) {} {}{}",
                resolved.digest,
                if r.from_cache {
                    "from the cache"
                } else {
                    "pulled into"
                },
                r.dir.display(),
                r.mirror
                    .as_deref()
                    .map(|m| format!(" from mirror {m}"))
                    .unwrap_or_default()
            );
            PullState::Done {
                dir: r.dir,
                accepted_risk,
                verified,
            }
        }
        Ok(Err(e)) => failed(ResolveFailure::Retrieve(e.to_string())),
        Err(_) => failed(ResolveFailure::Retrieve("download was canceled".into())),
    }
}

/// A retriever with the cluster's settings: its proxy and trusted CA bundle, its registry
/// mirrors (ImageDigestMirrorSets, ImageContentSourcePolicies) and, when `pull_secret` and the
/// given retriever has no credentials, its pull secret.
async fn cluster_retriever(retriever: &Retriever, client: &kube::Client, pull_secret: bool) -> Retriever {
    let mut opts = retriever.options().clone();
    super::egress::ClusterEgress::read(client).await.apply(&mut opts);
    opts.mirrors.extend(super::mirrors::read(client).await);
    if pull_secret
        && opts.auth.is_empty()
        && let Some(auth) = cluster_auth(client).await
    {
        opts.auth = auth;
    }
    Retriever::new(opts)
}

/// The cluster's pull secret (`openshift-config/pull-secret`), when it can be read and parsed.
async fn cluster_auth(client: &kube::Client) -> Option<DockerAuth> {
    let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(client.clone(), "openshift-config");
    let secret = match api.get_opt("pull-secret").await {
        Ok(Some(s)) => s,
        Ok(None) => return None,
        Err(e) => {
            tracing::debug!("reading openshift-config/pull-secret: {e}");
            return None;
        }
    };
    let data = secret.data?.get(".dockerconfigjson")?.0.clone();
    match DockerAuth::parse(&data, "openshift-config/pull-secret .dockerconfigjson") {
        Ok(auth) => Some(auth),
        Err(e) => {
            tracing::warn!("{e}");
            None
        }
    }
}

impl PayloadResolver for RegistryPayloads {
    fn own_image(&self) -> String {
        self.local.own_image.clone()
    }

    fn resolve(&self, image: &str) -> Result<PathBuf, String> {
        match self.local_dir(image) {
            Some(r) => r,
            None => match self.retriever.resolve_cached(image) {
                Some(d) => Ok(d),
                None => Err(format!("{image} is not retrieved yet")),
            },
        }
    }

    fn poll(&self, request: &ResolveRequest) -> Resolution {
        if let Some(r) = self.local_dir(&request.image) {
            return match r {
                Ok(dir) => Resolution::Ready {
                    dir,
                    accepted_risk: None,
                    verified: false,
                    registered: true,
                },
                Err(e) => Resolution::Failed(ResolveFailure::Retrieve(e)),
            };
        }
        let key = (request.image.clone(), request.force);
        let Ok(mut pulls) = self.pulls.lock() else {
            return Resolution::Failed(ResolveFailure::Retrieve("the pull table is poisoned".into()));
        };
        match pulls.get(&key) {
            Some(PullState::Running(p, _)) => {
                return Resolution::Pending(p.lock().map(|p| p.clone()).unwrap_or_default());
            }
            Some(PullState::Done {
                dir,
                accepted_risk,
                verified,
            }) => {
                return Resolution::Ready {
                    dir: dir.clone(),
                    accepted_risk: accepted_risk.clone(),
                    verified: *verified,
                    // The own release pulled by pull spec (`--release-image` without a
                    // directory) is the administrator's, as upstream's local payload.
                    registered: request.image == self.local.own_image,
                };
            }
            Some(PullState::Failed { failure, at }) if at.elapsed() < RETRY_AFTER => {
                return Resolution::Failed(failure.clone());
            }
            _ => {}
        }
        let progress = Arc::new(Mutex::new(PullProgress {
            image: request.image.clone(),
            ..PullProgress::default()
        }));
        pulls.insert(key, PullState::Running(progress.clone(), None));
        drop(pulls);
        self.start(request, progress.clone());
        Resolution::Pending(progress.lock().map(|p| p.clone()).unwrap_or_default())
    }

    fn wakeup(&self) -> Option<Arc<Notify>> {
        Some(self.notify.clone())
    }

    fn cancel_others(&self, keep: &ResolveRequest) {
        let Ok(mut pulls) = self.pulls.lock() else {
            return;
        };
        let keep = (keep.image.clone(), keep.force);
        pulls.retain(|key, state| match state {
            PullState::Running(_, task) if *key != keep => {
                if let Some(t) = task {
                    t.abort();
                }
                tracing::info!("stopped retrieving release image {}: no longer the target", key.0);
                false
            }
            _ => true,
        });
    }

    fn persist_signatures(&self, client: &kube::Client, every: Duration) {
        let Some(verifier) = self.verifier.clone() else {
            return;
        };
        // The first save follows the first verification; later ones come `every` apart.
        if !self.verified_any.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        {
            let Ok(mut at) = self.persisted_at.lock() else {
                return;
            };
            if at.is_some_and(|t| t.elapsed() < every) {
                return;
            }
            *at = Some(Instant::now());
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let client = client.clone();
        handle.spawn(async move {
            if let Err(e) = verifier.persist(&client).await {
                tracing::warn!("{e}");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::reconcile::payload::retrieve::RetrieveOptions;
    use tokio::io::AsyncReadExt;

    fn request(image: &str) -> ResolveRequest {
        ResolveRequest {
            image: image.into(),
            version: "1.1.0".into(),
            force: true,
            current: false,
        }
    }

    /// A `file://` pull spec is served only for the own release or a registered payload, and
    /// then as registered; any other, even an existing directory and with force, is refused.
    #[test]
    fn file_pull_specs_are_served_only_when_registered() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (own, other, stray) = (
            tmp.path().join("own"),
            tmp.path().join("other"),
            tmp.path().join("stray"),
        );
        for d in [&own, &other, &stray] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let spec = |d: &std::path::Path| format!("file://{}", d.display());
        let rp = RegistryPayloads::new(
            LocalPayloads {
                own_image: spec(&own),
                own_dir: own.clone(),
                others: BTreeMap::from([(spec(&other), other.clone())]),
            },
            Retriever::new(RetrieveOptions::new(Some(tmp.path().join("cache")))),
        );
        for (image, dir) in [(spec(&own), &own), (spec(&other), &other)] {
            assert_eq!(
                rp.poll(&request(&image)),
                Resolution::Ready {
                    dir: dir.clone(),
                    accepted_risk: None,
                    verified: false,
                    registered: true,
                }
            );
            assert_eq!(rp.resolve(&image), Ok(dir.clone()));
        }
        let stray = spec(&stray);
        let want = format!(
            "{stray} is not a payload registered with this operator: a file:// release is read only when it is the operator's own release or a payload given to it on its command line, never because a ClusterVersion or an update service names the path"
        );
        assert_eq!(
            rp.poll(&request(&stray)),
            Resolution::Failed(ResolveFailure::Retrieve(want.clone()))
        );
        assert_eq!(rp.resolve(&stray), Err(want));
        // The own release by its pseudo pull spec alone (the dashboard's engine).
        let rp = RegistryPayloads::new(
            LocalPayloads {
                own_image: spec(&own),
                ..LocalPayloads::default()
            },
            Retriever::new(RetrieveOptions::new(Some(tmp.path().join("cache")))),
        );
        assert_eq!(
            rp.poll(&request(&spec(&own))),
            Resolution::Ready {
                dir: own.clone(),
                accepted_risk: None,
                verified: false,
                registered: true,
            }
        );
        assert!(matches!(rp.poll(&request(&spec(&other))), Resolution::Failed(_)));
    }

    /// A registry that accepts connections and never answers: a pull of it hangs in its first
    /// request until cancelled. `cancel_others` must end it at once (its connection closes),
    /// and keep the retrieval it was told to keep.
    #[tokio::test]
    async fn cancel_others_stops_a_running_retrieval_at_once() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let host = listener.local_addr().expect("addr").to_string();
        let cache = tempfile::tempdir().expect("tempdir");
        let mut opts = super::super::RetrieveOptions::new(Some(cache.path().to_path_buf()));
        opts.insecure_registries = vec![host.clone()];
        let payloads = RegistryPayloads::new(LocalPayloads::default(), Retriever::new(opts));
        let request = |n: u32| ResolveRequest {
            image: format!("{host}/release:{n}"),
            version: String::new(),
            force: false,
            current: false,
        };
        assert!(matches!(payloads.poll(&request(1)), Resolution::Pending(_)));
        let (mut conn, _) = tokio::time::timeout(Duration::from_secs(10), listener.accept())
            .await
            .expect("the pull connects within 10 s")
            .expect("accept");
        // Let the request arrive; the pull now waits for an answer that never comes.
        let mut buf = vec![0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut buf))
            .await
            .expect("the request arrives")
            .expect("read");
        assert!(n > 0);
        // Keeping the same request cancels nothing.
        payloads.cancel_others(&request(1));
        assert!(matches!(payloads.poll(&request(1)), Resolution::Pending(_)));
        assert!(
            !closes_within_2s(&mut conn).await,
            "the pull is still waiting while it is the target"
        );
        payloads.cancel_others(&request(2));
        assert!(
            closes_within_2s(&mut conn).await,
            "the cancelled pull's connection closes within 2 s"
        );
        assert!(
            payloads.pulls.lock().expect("lock").is_empty(),
            "the cancelled pull is forgotten"
        );
    }

    /// Whether the peer closes `conn` within 2 s (data it sends is skipped).
    async fn closes_within_2s(conn: &mut tokio::net::TcpStream) -> bool {
        let mut buf = vec![0u8; 4096];
        let eof = async {
            loop {
                match conn.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(2), eof).await.is_ok()
    }
}
