//! Watches: the event stream from a resourceVersion, with selectors, bookmarks, timeouts and
//! `410 Expired` for versions the store no longer keeps.
//!
//! As kube-apiserver v1.36 does: a watch without a resourceVersion (or from `0`) starts with
//! `ADDED` events for the current objects and, when bookmarks are allowed, a `BOOKMARK`
//! annotated `k8s.io/initial-events-end: "true"` right after them; a watch from a given
//! version starts with the changes after it. The stream ends at `timeoutSeconds` without a
//! final bookmark. Idle watches get periodic bookmarks (upstream: the watch cache's bookmark
//! timer in `staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go`).

use std::collections::{BTreeMap, VecDeque};
use std::{convert::Infallible, time::Duration};

use bytes::Bytes;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::reply::{Reply, partial};
use super::selectors::Selectors;
use super::table::TableForm;
use super::{Simulator, lock};
use crate::sim::store::{ApiError, EventType, Stored, TypeRef};

impl Simulator {
    pub(super) fn watch(
        &self,
        t: &TypeRef,
        ns: Option<String>,
        query: &BTreeMap<String, String>,
        meta_only: bool,
        mut table: Option<TableForm>,
    ) -> Result<Reply, ApiError> {
        let sel = Selectors::parse(query)?;
        let timeout = match query.get("timeoutSeconds").filter(|s| !s.is_empty()) {
            Some(s) => Some(
                s.parse::<u64>()
                    .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds {s:?}")))?,
            ),
            None => None,
        };
        let from = query.get("resourceVersion").map(String::as_str).unwrap_or("");
        let bookmarks = query.get("allowWatchBookmarks").is_some_and(|b| b == "true");
        let mut rx = self.shared.changes.subscribe();
        rx.borrow_and_update();
        let store = self.lock();
        let mut pending = VecDeque::new();
        let last = if from.is_empty() || from == "0" {
            // No version: synthetic ADDED events for the current objects, then changes.
            for o in store.list_stored(t, ns.as_deref()) {
                if sel.matches(o) {
                    pending.push_back(event_line("ADDED", o, meta_only, t, table.as_mut()));
                }
            }
            if bookmarks {
                // As kube-apiserver does: the end of the initial events is marked at once.
                pending.push_back(bookmark_line(t, store.resource_version(), true));
            }
            store.resource_version()
        } else {
            from.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {from:?}")))?
        };
        drop(store);
        let bookmark_every = *lock(&self.shared.bookmark_interval);
        let state = WatchState {
            sim: self.clone(),
            t: t.clone(),
            ns,
            sel,
            last,
            pending,
            rx,
            deadline: timeout.map(|s| tokio::time::Instant::now() + Duration::from_secs(s)),
            done: false,
            meta_only,
            table,
            bookmarks,
            bookmark_every,
            next_bookmark: tokio::time::Instant::now() + bookmark_every,
        };
        let stream = futures::stream::unfold(state, |mut st| async move {
            loop {
                if let Some(b) = st.pending.pop_front() {
                    return Some((Ok::<_, Infallible>(Frame::data(b)), st));
                }
                if st.done {
                    return None;
                }
                st.rx.borrow_and_update();
                st.poll_store();
                if !st.pending.is_empty() || st.done {
                    continue;
                }
                let next_bookmark = st.bookmarks.then_some(st.next_bookmark);
                let wake = match (st.deadline, next_bookmark) {
                    (Some(d), Some(b)) => Some(d.min(b)),
                    (d, b) => d.or(b),
                };
                let changed = match wake {
                    Some(w) => match tokio::time::timeout_at(w, st.rx.changed()).await {
                        Ok(r) => r,
                        Err(_) if st.deadline.is_none_or(|d| tokio::time::Instant::now() < d) => {
                            // A periodic BOOKMARK with the version this watch has seen.
                            st.next_bookmark = tokio::time::Instant::now() + st.bookmark_every;
                            st.pending.push_back(bookmark_line(&st.t, st.last, false));
                            continue;
                        }
                        // Timed out: the stream ends, without a last BOOKMARK (kube-apiserver
                        // sends none at the deadline).
                        Err(_) => return None,
                    },
                    None => st.rx.changed().await,
                };
                if changed.is_err() {
                    return None;
                }
            }
        });
        Ok(Reply::Stream(StreamBody::new(stream).boxed_unsync()))
    }
}

struct WatchState {
    sim: Simulator,
    t: TypeRef,
    ns: Option<String>,
    sel: Selectors,
    last: u64,
    pending: VecDeque<Bytes>,
    rx: watch::Receiver<u64>,
    deadline: Option<tokio::time::Instant>,
    done: bool,
    meta_only: bool,
    /// `Some` when the watch asked for `Table` events (`kubectl get -w`).
    table: Option<TableForm>,
    bookmarks: bool,
    bookmark_every: Duration,
    next_bookmark: tokio::time::Instant,
}

impl WatchState {
    /// Queues the events after `last` that this watch selects, or a `410 Expired` error when
    /// the log no longer reaches back to `last`.
    fn poll_store(&mut self) {
        let store = self.sim.lock();
        if self.last < store.oldest_watchable() {
            let e = ApiError::new(
                410,
                "Expired",
                format!(
                    "too old resource version: {} ({})",
                    self.last,
                    store.oldest_watchable()
                ),
            );
            let line = json!({"type": "ERROR", "object": e.to_status()});
            self.pending.push_back(line_bytes(&line));
            self.done = true;
            return;
        }
        for e in store.events_since(self.last) {
            if !e.concerns(&self.t) {
                continue;
            }
            if self
                .ns
                .as_deref()
                .is_some_and(|want| want != e.object.namespace())
            {
                continue;
            }
            // As kube-apiserver does, an object entering the selection is ADDED and one
            // leaving it is DELETED.
            let now = self.sel.matches(&e.object);
            let before = e.previous.as_ref().is_some_and(|p| self.sel.matches(p));
            let kind = match e.event_type {
                EventType::Added if now => "ADDED",
                EventType::Modified if now && before => "MODIFIED",
                EventType::Modified if now => "ADDED",
                EventType::Modified if before => "DELETED",
                EventType::Deleted if now || before => "DELETED",
                _ => continue,
            };
            let line = event_line(kind, &e.object, self.meta_only, &self.t, self.table.as_mut());
            self.pending.push_back(line);
        }
        self.last = store.resource_version();
    }
}

/// A `BOOKMARK` event at `rv`; `initial_end` adds the `k8s.io/initial-events-end` annotation
/// kube-apiserver puts on the bookmark that follows a watch's initial `ADDED` events.
fn bookmark_line(t: &TypeRef, rv: u64, initial_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    line_bytes(&json!({"type": "BOOKMARK", "object": {
        "kind": t.kind, "apiVersion": t.api_version(), "metadata": meta,
    }}))
}

fn line_bytes(v: &Value) -> Bytes {
    let mut b = serde_json::to_vec(v).unwrap_or_default();
    b.push(b'\n');
    Bytes::from(b)
}

/// One watch event line: `{"object":...,"type":...}` (the key order of a `Value`), the
/// stored text embedded as it is; with `table`, the object's `Table` (column definitions in
/// the first event only).
fn event_line(kind: &str, o: &Stored, meta_only: bool, t: &TypeRef, table: Option<&mut TableForm>) -> Bytes {
    if let Some(form) = table {
        let line = line_bytes(&json!({"type": kind, "object": form.table(t, &o.value())}));
        form.headers = false;
        return line;
    }
    if meta_only {
        return line_bytes(&json!({"type": kind, "object": partial(&o.value())}));
    }
    let mut b = Vec::with_capacity(o.json().len() + 32);
    b.extend_from_slice(b"{\"object\":");
    b.extend_from_slice(o.json().as_bytes());
    b.extend_from_slice(b",\"type\":\"");
    b.extend_from_slice(kind.as_bytes());
    b.extend_from_slice(b"\"}\n");
    Bytes::from(b)
}
