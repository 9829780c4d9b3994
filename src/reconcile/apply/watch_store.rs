//! The stores behind [`super::watch_cache`]: one watch per kind of the payload, feeding a
//! kube-runtime reflector store of either metadata only (`PartialObjectMeta`, active-apply) or
//! full objects (watch-only, so the drift is computed without a GET). cvo only: upstream
//! `pkg/cvo/sync_worker.go` GETs every manifest on every pass.
//!
//! A full-object store keeps only the objects the payload names (its `keys`), with
//! `metadata.managedFields` dropped and `apiVersion`/`kind` set from the watched resource (list
//! items may lack them; the Secret masking of [`crate::openshift::mask`] reads `kind`): its
//! memory grows with the payload, not with the cluster.

use std::{collections::HashSet, sync::Arc, time::Duration};

use futures::StreamExt;
use kube::{
    Api, Client, Resource,
    api::{ApiResource, DynamicObject, PartialObjectMeta, TypeMeta},
    runtime::{
        reflector::{ObjectRef, Store, store::Writer},
        watcher,
    },
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::watch;

use crate::informers::{Health, Informer};
use crate::openshift::ClusterOperator;

/// Where a kind's watch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncState {
    /// Listing (first or after an error): the store may be incomplete.
    Listing,
    /// The list completed and the watch follows: the store is complete.
    Synced,
    /// The last list or watch failed (a streaming list the server refuses falls back to LIST
    /// and WATCH first, still `Listing`); retried after a backoff.
    Failed,
}

/// `(namespace, name)` of an object (namespace empty for cluster-scoped objects).
pub(crate) type ObjectName = (String, String);

/// One kind's store.
pub(crate) enum KindStore {
    /// Metadata of every object of the kind (name, namespace, `resourceVersion`, `uid`,
    /// `generation`: labels, annotations and `managedFields` are dropped).
    Meta(Store<PartialObjectMeta<DynamicObject>>),
    /// Every CustomResourceDefinition, trimmed to what readiness and kind resolution read
    /// (metadata without annotations or `managedFields`, `spec` without the schemas, `status`
    /// with its conditions only): the CRD kind's store in active passes, so a CRD's
    /// `Established` condition and the kinds it serves come from the watch instead of polling
    /// and discovery.
    Crds(Store<DynamicObject>),
    /// Every ClusterOperator, from the process's shared informer ([`crate::informers`]): the
    /// dashboard and the engine's nudges watch the kind already, so the payload's cache reads
    /// that store (full objects, `managedFields` dropped) instead of opening a second watch.
    ClusterOperators(Informer<ClusterOperator>),
    /// Full objects of the kind named in `keys` (the payload's), trimmed.
    Full {
        /// The objects.
        store: Store<DynamicObject>,
        /// The payload's objects of the kind: any other is dropped from the watch's events, and
        /// one not named here is unknown to the store (not absent).
        keys: Arc<HashSet<ObjectName>>,
    },
}

/// What a store says of one object.
pub(crate) enum Lookup {
    /// The store cannot tell (a full store not keeping it).
    Unknown,
    /// Not in the store.
    Absent,
    /// In the store at this `resourceVersion`, with the full object (as a GET would return it,
    /// without `managedFields`) when the store keeps full objects.
    Present(String, Option<Value>),
}

impl KindStore {
    /// Whether the store keeps full objects.
    pub(crate) fn is_full(&self) -> bool {
        matches!(self, Self::Full { .. } | Self::ClusterOperators(_))
    }

    /// Whether a full store keeps every object of `names`.
    pub(crate) fn covers(&self, names: &HashSet<ObjectName>) -> bool {
        match self {
            Self::Meta(_) | Self::Crds(_) | Self::ClusterOperators(_) => true,
            Self::Full { keys, .. } => names.is_subset(keys),
        }
    }

    /// The object `namespace`/`name` of the resource `ar` (`namespaced` or not).
    pub(crate) fn lookup(&self, ar: &ApiResource, namespace: &str, name: &str, namespaced: bool) -> Lookup {
        fn object_ref<K: Resource<DynamicType = ApiResource>>(
            ar: &ApiResource,
            namespace: &str,
            name: &str,
            namespaced: bool,
        ) -> ObjectRef<K> {
            let r = ObjectRef::new_with(name, ar.clone());
            if namespaced { r.within(namespace) } else { r }
        }
        match self {
            Self::Meta(store) => match store.get(&object_ref(ar, namespace, name, namespaced)) {
                None => Lookup::Absent,
                Some(o) => Lookup::Present(o.metadata.resource_version.clone().unwrap_or_default(), None),
            },
            Self::Crds(store) => match store.get(&object_ref(ar, namespace, name, namespaced)) {
                None => Lookup::Absent,
                Some(o) => Lookup::Present(o.metadata.resource_version.clone().unwrap_or_default(), None),
            },
            Self::ClusterOperators(informer) => match informer.get(None, name) {
                None => Lookup::Absent,
                Some(o) => Lookup::Present(
                    o.metadata.resource_version.clone().unwrap_or_default(),
                    serde_json::to_value(&*o).ok(),
                ),
            },
            Self::Full { store, keys } => {
                let ns = if namespaced { namespace } else { "" };
                if !keys.contains(&(ns.to_owned(), name.to_owned())) {
                    return Lookup::Unknown;
                }
                match store.get(&object_ref(ar, namespace, name, namespaced)) {
                    None => Lookup::Absent,
                    Some(o) => Lookup::Present(
                        o.metadata.resource_version.clone().unwrap_or_default(),
                        serde_json::to_value(&*o).ok(),
                    ),
                }
            }
        }
    }

    /// The CustomResourceDefinitions of the store (full or trimmed), when it is the CRD kind's.
    pub(crate) fn crds(&self) -> Vec<Arc<DynamicObject>> {
        match self {
            Self::Crds(store) | Self::Full { store, .. } => store.state(),
            Self::Meta(_) | Self::ClusterOperators(_) => Vec::new(),
        }
    }

    /// A store reading the shared ClusterOperator `informer`, with what [`Self::start`]
    /// returns: its sync flag follows the informer's health (synced once listed, failed while
    /// its watch fails), its event counter and `payload_changes` move at each change of the
    /// informer after its first list.
    pub(crate) fn share(
        informer: Informer<ClusterOperator>,
        payload_changes: &Arc<watch::Sender<u64>>,
    ) -> (
        Self,
        watch::Receiver<SyncState>,
        watch::Receiver<u64>,
        tokio::task::JoinHandle<()>,
    ) {
        let (tx, rx) = watch::channel(SyncState::Listing);
        let (etx, erx) = watch::channel(0u64);
        let payload_changes = payload_changes.clone();
        let source = informer.clone();
        let task = tokio::spawn(async move {
            let mut changes = source.changes();
            let mut ever_synced = false;
            loop {
                let state = match source.health() {
                    Health::Listing => SyncState::Listing,
                    Health::Synced | Health::NotServed => SyncState::Synced,
                    Health::Failed { .. } => SyncState::Failed,
                };
                tx.send_replace(state);
                etx.send_modify(|n| *n = n.wrapping_add(1));
                if ever_synced {
                    payload_changes.send_modify(|n| *n = n.wrapping_add(1));
                }
                ever_synced |= state == SyncState::Synced;
                if changes.changed().await.is_err() {
                    break;
                }
            }
        });
        (Self::ClusterOperators(informer), rx, erx, task)
    }

    /// Starts the watch of `ar` feeding a new store: full objects of `keys` when set, else
    /// metadata of every object (trimmed CRDs for the CRD kind). Returns the store, its sync
    /// flag, a counter bumped at every event it applies, and the feeding task. A full store
    /// (its objects are the payload's) also bumps `payload_changes` at each change of one of
    /// them after its first list, and at each later relist (which may hide changes).
    pub(crate) fn start(
        client: &Client,
        ar: &ApiResource,
        keys: Option<Arc<HashSet<ObjectName>>>,
        streaming: bool,
        payload_changes: &Arc<watch::Sender<u64>>,
    ) -> (
        Self,
        watch::Receiver<SyncState>,
        watch::Receiver<u64>,
        tokio::task::JoinHandle<()>,
    ) {
        let (tx, rx) = watch::channel(SyncState::Listing);
        let (etx, erx) = watch::channel(0u64);
        match keys {
            None if is_crd_resource(ar) => {
                let api: Api<DynamicObject> = Api::all_with(client.clone(), ar);
                let writer = Writer::new(ar.clone());
                let store = writer.as_reader();
                let task = tokio::spawn(feed(api, writer, Senders::new(tx, etx), streaming, trim_crd));
                (Self::Crds(store), rx, erx, task)
            }
            None => {
                let api: Api<PartialObjectMeta<DynamicObject>> = Api::all_with(client.clone(), ar);
                let writer = Writer::new(ar.clone());
                let store = writer.as_reader();
                let task = tokio::spawn(feed(api, writer, Senders::new(tx, etx), streaming, trim_meta));
                (Self::Meta(store), rx, erx, task)
            }
            Some(keys) => {
                let api: Api<DynamicObject> = Api::all_with(client.clone(), ar);
                let writer = Writer::new(ar.clone());
                let store = writer.as_reader();
                let types = TypeMeta {
                    api_version: ar.api_version.clone(),
                    kind: ar.kind.clone(),
                };
                let kept = keys.clone();
                let keep = move |o: &mut DynamicObject| keep_full(&kept, &types, o);
                let senders = Senders {
                    payload_changes: Some(payload_changes.clone()),
                    ..Senders::new(tx, etx)
                };
                let task = tokio::spawn(feed(api, writer, senders, streaming, keep));
                (Self::Full { store, keys }, rx, erx, task)
            }
        }
    }
}

/// Whether `ar` is the CustomResourceDefinition resource.
pub(crate) fn is_crd_resource(ar: &ApiResource) -> bool {
    ar.group == "apiextensions.k8s.io" && ar.kind == "CustomResourceDefinition"
}

/// Keeps every object of a metadata store, with only what a lookup reads (name, namespace,
/// `resourceVersion`, `uid`, `generation`): the memory of a metadata watch is a few hundred
/// bytes per object, whatever its labels, annotations or field managers.
fn trim_meta(o: &mut PartialObjectMeta<DynamicObject>) -> bool {
    let m = &mut o.metadata;
    m.managed_fields = None;
    m.annotations = None;
    m.labels = None;
    m.owner_references = None;
    m.finalizers = None;
    true
}

/// Keeps every CRD, trimmed to what [`crate::reconcile::apply::check_readiness`] and kind
/// resolution read: `metadata` (name, `resourceVersion`, `uid`, `generation`), `spec.group`,
/// `spec.scope`, `spec.names`, each version's `name`, `served` and `storage`, and
/// `status.conditions`. A CRD's schemas (tens of KiB in real payloads) are not kept.
fn trim_crd(o: &mut DynamicObject) -> bool {
    let m = &mut o.metadata;
    m.managed_fields = None;
    m.annotations = None;
    m.labels = None;
    m.owner_references = None;
    let spec = &o.data["spec"];
    let versions: Vec<Value> = spec["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .map(|v| serde_json::json!({"name": v["name"], "served": v["served"], "storage": v["storage"]}))
                .collect()
        })
        .unwrap_or_default();
    let trimmed = serde_json::json!({
        "spec": {"group": spec["group"], "scope": spec["scope"], "names": spec["names"], "versions": versions},
        "status": {"conditions": o.data["status"]["conditions"]},
    });
    o.data = trimmed;
    if o.types.is_none() {
        o.types = Some(TypeMeta {
            api_version: "apiextensions.k8s.io/v1".into(),
            kind: "CustomResourceDefinition".into(),
        });
    }
    true
}

/// Whether a full store keeps `o` (one of `keys`); trims a kept object (no
/// `metadata.managedFields`) and sets its `apiVersion`/`kind` to `types` when missing.
fn keep_full(keys: &HashSet<ObjectName>, types: &TypeMeta, o: &mut DynamicObject) -> bool {
    let key = (
        o.metadata.namespace.clone().unwrap_or_default(),
        o.metadata.name.clone().unwrap_or_default(),
    );
    if !keys.contains(&key) {
        return false;
    }
    o.metadata.managed_fields = None;
    if o.types.is_none() {
        o.types = Some(types.clone());
    }
    true
}

/// `ev` with its object passed through `keep` (which may trim it), or `None` when `keep` drops
/// it. `Init` and `InitDone` always pass.
fn filter_event<K>(
    ev: watcher::Event<K>,
    keep: &mut impl FnMut(&mut K) -> bool,
) -> Option<watcher::Event<K>> {
    use watcher::Event;
    match ev {
        Event::Apply(mut o) => keep(&mut o).then_some(Event::Apply(o)),
        Event::InitApply(mut o) => keep(&mut o).then_some(Event::InitApply(o)),
        Event::Delete(mut o) => keep(&mut o).then_some(Event::Delete(o)),
        Event::Init => Some(Event::Init),
        Event::InitDone => Some(Event::InitDone),
    }
}

/// What a feed reports besides its store.
struct Senders {
    /// Where the watch is ([`SyncState`]).
    synced: watch::Sender<SyncState>,
    /// Bumped after each event the store applies.
    events: watch::Sender<u64>,
    /// Full stores: bumped after each change of a kept object once listed, and at each relist
    /// after the first (a relist may hide changes).
    payload_changes: Option<Arc<watch::Sender<u64>>>,
}

impl Senders {
    fn new(synced: watch::Sender<SyncState>, events: watch::Sender<u64>) -> Self {
        Self {
            synced,
            events,
            payload_changes: None,
        }
    }
}

/// Feeds `writer` from a watcher of `api` until aborted, keeping the objects `keep` accepts
/// (and bumping `events` after each event it applies, `payload_changes` after each change).
/// `synced` is [`SyncState::Synced`] from the end of a complete list until the next watch error
/// ([`SyncState::Failed`]); an error restarts the watcher (a fresh list replaces the store's content at its `InitDone`), after a
/// backoff of 0.1 s doubling to 10 s. With `streaming` the list is a watch with
/// `sendInitialEvents` (one request instead of a LIST and a WATCH); an error before its first
/// `InitDone` falls back to LIST and WATCH.
async fn feed<K>(
    api: Api<K>,
    mut writer: Writer<K>,
    senders: Senders,
    mut streaming: bool,
    mut keep: impl FnMut(&mut K) -> bool + Send,
) where
    K: Resource<DynamicType = ApiResource>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let Senders {
        synced,
        events,
        payload_changes,
    } = senders;
    let mut backoff = Duration::from_millis(100);
    let mut ever_synced = false;
    loop {
        let cfg = if streaming {
            watcher::Config::default().streaming_lists()
        } else {
            watcher::Config::default()
        };
        let mut stream = std::pin::pin!(watcher(api.clone(), cfg));
        while let Some(ev) = stream.next().await {
            match ev {
                Ok(ev) => {
                    let Some(ev) = filter_event(ev, &mut keep) else {
                        continue;
                    };
                    writer.apply_watcher_event(&ev);
                    events.send_modify(|n| *n = n.wrapping_add(1));
                    let changed = match ev {
                        watcher::Event::Apply(_) | watcher::Event::Delete(_) => true,
                        watcher::Event::InitDone => ever_synced,
                        watcher::Event::Init | watcher::Event::InitApply(_) => false,
                    };
                    if changed && let Some(c) = &payload_changes {
                        c.send_modify(|n| *n = n.wrapping_add(1));
                    }
                    if matches!(ev, watcher::Event::InitDone) {
                        synced.send_replace(SyncState::Synced);
                        ever_synced = true;
                        backoff = Duration::from_millis(100);
                    }
                }
                Err(e) => {
                    tracing::debug!("watch cache {}: {e}; restarting", api.resource_url());
                    if streaming && !ever_synced {
                        streaming = false;
                        synced.send_replace(SyncState::Listing);
                    } else {
                        synced.send_replace(SyncState::Failed);
                    }
                    break;
                }
            }
        }
        synced.send_if_modified(|s| {
            let was = *s;
            if was == SyncState::Synced {
                *s = SyncState::Listing;
            }
            was == SyncState::Synced
        });
        tokio::time::sleep(crate::clock::jittered(backoff, 0.2)).await;
        backoff = (backoff * 2).min(Duration::from_secs(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_filter_keeps_payload_objects_trimmed_and_typed() {
        let keys: HashSet<ObjectName> = [("ns".to_owned(), "a".to_owned())].into();
        let types = TypeMeta {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
        };
        let mut keep = |o: &mut DynamicObject| keep_full(&keys, &types, o);
        let obj = |name: &str| {
            let mut o = DynamicObject::new(
                name,
                &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
            )
            .within("ns");
            o.types = None;
            o.metadata.managed_fields = Some(vec![Default::default()]);
            o
        };
        let Some(watcher::Event::Apply(a)) = filter_event(watcher::Event::Apply(obj("a")), &mut keep) else {
            panic!("a payload object is kept");
        };
        assert_eq!(a.metadata.managed_fields, None);
        assert_eq!(a.types.as_ref().map(|t| t.kind.as_str()), Some("ConfigMap"));
        assert!(filter_event(watcher::Event::InitApply(obj("b")), &mut keep).is_none());
        assert!(matches!(
            filter_event(watcher::Event::<DynamicObject>::InitDone, &mut keep),
            Some(watcher::Event::InitDone)
        ));
    }
}
