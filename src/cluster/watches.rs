//! The watch layer of [`super::live::watch_state`]: one list-then-watch loop per kind, with
//! the semantics of client-go's reflector (`k8s.io/client-go/tools/cache/reflector.go`), which
//! the upstream CVO's informers use:
//!
//! - LIST (paginated), replace the kind's cache, then WATCH from the list's resourceVersion,
//!   following bookmarks; a watch that ends (server timeout, dropped connection) is re-opened
//!   from the last resourceVersion at once;
//! - an expired resourceVersion (`410 Gone`), whether it arrives as the HTTP answer to the
//!   watch request, as an `ERROR` event in the stream or as a bare `Status` line, leads to a
//!   fresh LIST;
//! - any other failure is recorded for the kind (shown as "API unreachable since") and retried
//!   after that kind's own backoff (exponential, 0.8 s to 30 s, with jitter, so kinds do not
//!   retry in lockstep); the backoff starts over after a successful list or watch;
//! - a kind's failure clears as soon as a list succeeds or a watch is re-established, not
//!   only when an event arrives.
//!
//! Every change of a cache (a relist, an event) or of the health wakes the publisher through
//! a [`Notify`].

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Debug,
    sync::{Arc, Mutex, RwLock},
    time::Duration,
};

use futures::{StreamExt, future::BoxFuture, stream::BoxStream};
use kube::{
    Api, Resource, ResourceExt,
    api::{ListParams, ObjectList, WatchEvent, WatchParams},
    core::PartialObjectMeta,
    runtime::{utils::Backoff as _, watcher::DefaultBackoff},
};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;

use super::{FeedError, api_error::ApiFailure};

/// Objects per LIST page.
const PAGE: u32 = 500;

/// A watch's event stream.
pub(super) type Events<K> = BoxStream<'static, kube::Result<WatchEvent<K>>>;

/// How a kind is read: full objects or metadata only.
pub(super) trait Source: Send + Sync + 'static {
    /// The cached object type.
    type Obj: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static;
    /// One LIST page.
    fn list<'a>(&'a self, lp: &'a ListParams) -> BoxFuture<'a, kube::Result<ObjectList<Self::Obj>>>;
    /// A WATCH from `rv`.
    fn watch<'a>(
        &'a self,
        wp: &'a WatchParams,
        rv: &'a str,
    ) -> BoxFuture<'a, kube::Result<Events<Self::Obj>>>;
}

/// Full objects of `K`.
pub(super) struct Full<K>(pub Api<K>);

impl<K> Source for Full<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    type Obj = K;
    fn list<'a>(&'a self, lp: &'a ListParams) -> BoxFuture<'a, kube::Result<ObjectList<K>>> {
        Box::pin(self.0.list(lp))
    }
    fn watch<'a>(&'a self, wp: &'a WatchParams, rv: &'a str) -> BoxFuture<'a, kube::Result<Events<K>>> {
        Box::pin(async move { Ok(self.0.watch(wp, rv).await?.boxed()) })
    }
}

/// Metadata of `K` (`PartialObjectMeta`).
pub(super) struct Meta<K>(pub Api<K>);

impl<K> Source for Meta<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    PartialObjectMeta<K>: Resource + Clone + DeserializeOwned + Debug + Send + Sync,
{
    type Obj = PartialObjectMeta<K>;
    fn list<'a>(&'a self, lp: &'a ListParams) -> BoxFuture<'a, kube::Result<ObjectList<Self::Obj>>> {
        Box::pin(self.0.list_metadata(lp))
    }
    fn watch<'a>(
        &'a self,
        wp: &'a WatchParams,
        rv: &'a str,
    ) -> BoxFuture<'a, kube::Result<Events<Self::Obj>>> {
        Box::pin(async move { Ok(self.0.watch_metadata(wp, rv).await?.boxed()) })
    }
}

/// A kind's cache: objects by `namespace/name`.
pub(super) struct Cache<K>(RwLock<BTreeMap<String, Arc<K>>>);

impl<K> Default for Cache<K> {
    fn default() -> Self {
        Self(RwLock::new(BTreeMap::new()))
    }
}

impl<K: Resource> Cache<K> {
    /// The cached objects, in `namespace/name` order.
    pub(super) fn objects(&self) -> Vec<Arc<K>> {
        self.0
            .read()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    fn replace(&self, objects: Vec<K>) {
        let map = objects.into_iter().map(|o| (key(&o), Arc::new(o))).collect();
        if let Ok(mut m) = self.0.write() {
            *m = map;
        }
    }

    fn apply(&self, obj: K) {
        if let Ok(mut m) = self.0.write() {
            m.insert(key(&obj), Arc::new(obj));
        }
    }

    fn delete(&self, obj: &K) {
        if let Ok(mut m) = self.0.write() {
            m.remove(&key(obj));
        }
    }
}

fn key<K: Resource>(o: &K) -> String {
    format!("{}/{}", o.namespace().unwrap_or_default(), o.name_any())
}

/// Shared health of the watches: per-kind readiness and the current error.
#[derive(Default)]
pub(super) struct Health {
    /// Kinds whose initial list has completed.
    synced: BTreeSet<&'static str>,
    /// Per kind, the current failure.
    errors: BTreeMap<&'static str, FeedError>,
}

impl Health {
    /// Whether `kinds` kinds have completed their initial list.
    pub(super) fn synced(&self, kinds: usize) -> bool {
        self.synced.len() >= kinds
    }

    /// The error to show: the first failing kind's message, since the earliest failure.
    pub(super) fn error(&self) -> Option<FeedError> {
        let first = self.errors.values().next()?;
        let since = self.errors.values().map(|e| e.since).min().unwrap_or(first.since);
        let more = self.errors.len() - 1;
        let message = if more == 0 {
            first.message.clone()
        } else {
            format!("{} (and {more} more watches failing)", first.message)
        };
        Some(FeedError { message, since })
    }
}

/// What one kind's loop shares with the publisher.
#[derive(Clone)]
pub(super) struct Shared {
    /// Woken on every change.
    pub notify: Arc<Notify>,
    /// Per-kind health.
    pub health: Arc<Mutex<Health>>,
}

impl Shared {
    fn failed(&self, label: &'static str, message: String) {
        tracing::warn!("{message}");
        if let Ok(mut h) = self.health.lock() {
            let since = h.errors.get(label).map_or_else(chrono::Utc::now, |old| old.since);
            h.errors.insert(label, FeedError { message, since });
        }
        self.notify.notify_one();
    }

    /// The kind reached the API: clears its failure (waking the publisher if there was one).
    fn reached(&self, label: &'static str) {
        let cleared = self
            .health
            .lock()
            .map(|mut h| h.errors.remove(label).is_some())
            .unwrap_or(false);
        if cleared {
            tracing::info!(kind = label, "watch re-established");
            self.notify.notify_one();
        }
    }

    fn listed(&self, label: &'static str) {
        if let Ok(mut h) = self.health.lock() {
            h.synced.insert(label);
            h.errors.remove(label);
        }
        self.notify.notify_one();
    }
}

/// Whether `e` says the resourceVersion is too old (`410 Gone` / `Expired`).
fn is_gone(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 410)
}

fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

/// Lists every page; `Ok(None)` when the kind is not served (404: e.g. no
/// MachineConfigPool CRD), which counts as an empty, synced kind.
async fn list_all<S: Source>(src: &S, lp: &ListParams) -> kube::Result<Option<(Vec<S::Obj>, String)>> {
    let mut out = Vec::new();
    let mut lp = lp.clone().limit(PAGE);
    loop {
        let page = match src.list(&lp).await {
            Ok(p) => p,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let rv = page.metadata.resource_version.clone().unwrap_or_default();
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        out.extend(page.items);
        match next {
            Some(token) => lp = lp.continue_token(&token),
            None => return Ok(Some((out, rv))),
        }
    }
}

/// A watch closed sooner than this after it opened, before any event, is re-opened after a
/// backoff step (client-go's reflector treats such a watch as an error: "very short watch",
/// `k8s.io/client-go/tools/cache/reflector.go`).
const MIN_WATCH: Duration = Duration::from_millis(200);

/// Sleeps the backoff's next step (exponential with jitter, capped at 30 s).
async fn pause(backoff: &mut DefaultBackoff) {
    let d = backoff.next().unwrap_or(Duration::from_secs(30));
    tokio::time::sleep(d).await;
}

/// How one kind's watch ended.
enum WatchEnd {
    /// The stream ended (timeout, closed): re-watch from the last resourceVersion.
    Closed,
    /// The resourceVersion expired: relist.
    Gone,
    /// A failure: record it, back off, re-watch.
    Failed(String),
}

/// Runs one kind's list/watch loop forever. `prepare` trims each object before caching
/// (e.g. drops `managedFields`).
pub(super) async fn run<S: Source>(
    src: S,
    label: &'static str,
    fields: Option<String>,
    timeout_secs: u32,
    cache: Arc<Cache<S::Obj>>,
    shared: Shared,
    prepare: fn(&mut S::Obj),
) {
    let mut lp = ListParams::default();
    let mut wp = WatchParams::default().timeout(timeout_secs);
    if let Some(f) = &fields {
        lp = lp.fields(f);
        wp = wp.fields(f);
    }
    let mut backoff = DefaultBackoff::default();
    'relist: loop {
        let (items, mut rv) = match list_all(&src, &lp).await {
            Ok(Some((mut items, rv))) => {
                items.iter_mut().for_each(prepare);
                (items, rv)
            }
            Ok(None) => {
                cache.replace(Vec::new());
                shared.listed(label);
                // Not served: look again now and then (a CRD may be created later).
                tokio::time::sleep(Duration::from_secs(30)).await;
                continue 'relist;
            }
            Err(e) => {
                shared.failed(label, ApiFailure::new(format!("list {label}"), &e).to_string());
                pause(&mut backoff).await;
                continue 'relist;
            }
        };
        cache.replace(items);
        shared.listed(label);
        backoff.reset();
        loop {
            let end = match src.watch(&wp, &rv).await {
                Err(e) if is_gone(&e) => WatchEnd::Gone,
                Err(e) => WatchEnd::Failed(ApiFailure::new(format!("watch {label}"), &e).to_string()),
                Ok(mut stream) => {
                    shared.reached(label);
                    backoff.reset();
                    let opened = tokio::time::Instant::now();
                    let mut events = 0;
                    match follow(&mut stream, label, &mut rv, &cache, &shared, prepare, &mut events).await {
                        // A server that closes every watch at once, before any event, is not
                        // hammered; a short watch that delivered events re-opens at once.
                        WatchEnd::Closed if events == 0 && opened.elapsed() < MIN_WATCH => {
                            pause(&mut backoff).await;
                            WatchEnd::Closed
                        }
                        end => end,
                    }
                }
            };
            match end {
                WatchEnd::Closed => {}
                WatchEnd::Gone => {
                    // Routine (etcd compaction): the relist is not worth an info line.
                    tracing::debug!(kind = label, "resourceVersion {rv} expired: relisting");
                    continue 'relist;
                }
                WatchEnd::Failed(message) => {
                    shared.failed(label, message);
                    pause(&mut backoff).await;
                }
            }
        }
    }
}

/// Applies a watch stream's events to `cache` until it ends; counts the events (bookmarks
/// included) in `events`.
async fn follow<K>(
    stream: &mut Events<K>,
    label: &'static str,
    rv: &mut String,
    cache: &Cache<K>,
    shared: &Shared,
    prepare: fn(&mut K),
    events: &mut u64,
) -> WatchEnd
where
    K: Resource + Clone + Debug,
{
    while let Some(item) = stream.next().await {
        if matches!(
            item,
            Ok(WatchEvent::Added(_)
                | WatchEvent::Modified(_)
                | WatchEvent::Deleted(_)
                | WatchEvent::Bookmark(_))
        ) {
            *events += 1;
        }
        match item {
            Ok(WatchEvent::Added(mut o) | WatchEvent::Modified(mut o)) => {
                if let Some(v) = o.resource_version() {
                    *rv = v;
                }
                prepare(&mut o);
                cache.apply(o);
                shared.notify.notify_one();
            }
            Ok(WatchEvent::Deleted(o)) => {
                if let Some(v) = o.resource_version() {
                    *rv = v;
                }
                cache.delete(&o);
                shared.notify.notify_one();
            }
            Ok(WatchEvent::Bookmark(b)) => *rv = b.metadata.resource_version,
            Ok(WatchEvent::Error(s)) if s.code == 410 => return WatchEnd::Gone,
            Ok(WatchEvent::Error(s)) => {
                let failure = ApiFailure {
                    what: format!("watch {label}"),
                    code: Some(s.code),
                    reason: s.reason.clone(),
                    message: s.message.clone(),
                };
                return WatchEnd::Failed(failure.to_string());
            }
            Err(e) if is_gone(&e) => return WatchEnd::Gone,
            Err(e) => return WatchEnd::Failed(ApiFailure::new(format!("watch {label}"), &e).to_string()),
        }
    }
    WatchEnd::Closed
}
