//! Discovery of kinds the typed table does not know (custom resources, aggregated APIs): one
//! request per group-version document, shared by every kind in it and by every concurrent
//! lookup (upstream asks through a REST mapper it resets every minute, `pkg/cvo/cvo.go`
//! `NewClusterVersionOperator` with `restmapper.NewDeferredDiscoveryRESTMapper`).
//!
//! A payload with four custom resource kinds in one group, applied right after their CRDs,
//! used to send one discovery request per kind per lookup (23 on a real kube-apiserver for
//! 1,000 manifests); lookups now wait for a fetch already in flight for the same
//! group-version and use its answer.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use kube::{
    Client,
    api::ApiResource,
    core::gvk::GroupVersion,
    discovery::{ApiGroup, Scope},
};

/// How long a discovery answer is trusted (upstream resets its REST mapper every minute).
pub(crate) const DISCOVERY_TTL: Duration = Duration::from_secs(60);

/// (group, version) of a group-version document.
type GvKey = (String, String);

/// One fetched group-version document: each kind's resource and whether it is namespaced.
struct GvDoc {
    kinds: HashMap<String, (ApiResource, bool)>,
    /// When the request for it was sent.
    fetched: Instant,
}

/// What a lookup found.
pub(crate) enum Lookup {
    /// The kind's resource and whether it is namespaced.
    Found(ApiResource, bool),
    /// The server does not list the kind (its group-version is absent or lacks it).
    Missing,
}

/// The discovery cache of one applier: group-version documents for [`DISCOVERY_TTL`], fetched
/// at most once at a time per group-version. A kind missing from a document is never answered
/// from the cache alone: the next lookup asks again, unless a fetch started after that lookup
/// began has already answered (so a burst of lookups for a kind that is not there yet costs one
/// request, not one each).
#[derive(Default)]
pub(crate) struct Discovery {
    docs: Mutex<HashMap<GvKey, GvDoc>>,
    inflight: Mutex<HashMap<GvKey, Arc<tokio::sync::Mutex<()>>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Discovery {
    /// The cached answer for `kind` in `group`/`version` when fresh and listing it.
    fn cached(&self, key: &GvKey, kind: &str) -> Option<(ApiResource, bool)> {
        let docs = lock(&self.docs);
        let doc = docs.get(key)?;
        if doc.fetched.elapsed() >= DISCOVERY_TTL {
            return None;
        }
        doc.kinds.get(kind).cloned()
    }

    /// Looks `kind` up in `group`/`version`: the cache when fresh, else one request for the
    /// group-version document (`GET /apis/{group}/{version}`, `/api/v1` for the core group),
    /// shared with concurrent lookups.
    ///
    /// # Errors
    /// The request's error other than 404 (a 404 means the group-version is not served yet:
    /// [`Lookup::Missing`]).
    pub(crate) async fn lookup(
        &self,
        client: &Client,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Lookup, kube::Error> {
        let key = (group.to_owned(), version.to_owned());
        if let Some((ar, ns)) = self.cached(&key, kind) {
            return Ok(Lookup::Found(ar, ns));
        }
        let began = Instant::now();
        let gate = lock(&self.inflight).entry(key.clone()).or_default().clone();
        let _turn = gate.lock().await;
        // The fetch this lookup waited for may have found the kind; one that was sent after
        // this lookup began answers it even when it did not.
        if let Some((ar, ns)) = self.cached(&key, kind) {
            return Ok(Lookup::Found(ar, ns));
        }
        if lock(&self.docs).get(&key).is_some_and(|doc| doc.fetched >= began) {
            return Ok(Lookup::Missing);
        }
        let gv = GroupVersion::gv(group, version);
        let asked = Instant::now();
        match kube::discovery::pinned_group(client, &gv).await {
            Ok(g) => {
                let kinds = kinds_of(&g, version);
                let found = kinds.get(kind).cloned();
                lock(&self.docs).insert(
                    key,
                    GvDoc {
                        kinds,
                        fetched: asked,
                    },
                );
                Ok(found.map_or(Lookup::Missing, |(ar, ns)| Lookup::Found(ar, ns)))
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {
                // Recorded as an empty document, so lookups that waited on this fetch take its
                // answer instead of asking again.
                lock(&self.docs).insert(
                    key,
                    GvDoc {
                        kinds: HashMap::new(),
                        fetched: asked,
                    },
                );
                Ok(Lookup::Missing)
            }
            Err(e) => {
                lock(&self.docs).remove(&key);
                Err(e)
            }
        }
    }

    /// Forgets every cached document of `group` (after a CRD of it was written, or a request
    /// to one of its resources answered 404).
    pub(crate) fn forget_group(&self, group: &str) {
        lock(&self.docs).retain(|(g, _), _| g != group);
    }
}

/// Each kind of `version` in a group-version document (subresources are not kinds of their
/// own), with whether it is namespaced.
fn kinds_of(g: &ApiGroup, version: &str) -> HashMap<String, (ApiResource, bool)> {
    g.versioned_resources(version)
        .into_iter()
        .filter(|(ar, _)| !ar.plural.contains('/'))
        .map(|(ar, caps)| (ar.kind.clone(), (ar, caps.scope == Scope::Namespaced)))
        .collect()
}
