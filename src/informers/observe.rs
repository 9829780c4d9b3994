//! An informer's own client: the process's client wrapped as a tower service that sees each
//! WATCH request of the informer and its answer (kube-runtime's watcher reports neither a
//! re-opened watch nor one the server closed at once):
//!
//! - a WATCH answered 2xx clears the kind's failure ([`Shared::reached`]), so a failure
//!   clears when the watch is back, without waiting for an event;
//! - a watch whose body ended sooner than [`MIN_WATCH`] after it opened, before any byte,
//!   delays the next WATCH request by a backoff step (kube-runtime's default); a watch that
//!   delivered anything resets that backoff.

use std::{
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http::Request;
use http_body::{Body as HttpBody, Frame, SizeHint};
use kube::{
    Client,
    client::Body,
    runtime::{utils::Backoff as _, watcher::DefaultBackoff},
};
use tokio::time::Instant;

use super::Shared;

/// A watch closed sooner than this after it opened, before any event, is re-opened after a
/// backoff step (client-go's reflector treats such a watch as an error: "very short watch").
pub(super) const MIN_WATCH: Duration = Duration::from_millis(200);

/// The pacing of one informer's WATCH requests.
#[derive(Default)]
struct Pacing {
    /// The last watch ended short and empty: wait this long before the next.
    wait: Option<Duration>,
    backoff: Option<DefaultBackoff>,
}

impl Pacing {
    fn short_watch(&mut self) {
        let d = self
            .backoff
            .get_or_insert_with(DefaultBackoff::default)
            .next()
            .unwrap_or(Duration::from_secs(30));
        self.wait = Some(d);
    }

    fn delivered(&mut self) {
        if let Some(b) = &mut self.backoff {
            b.reset();
        }
    }
}

fn is_watch(req: &Request<Body>) -> bool {
    req.uri()
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"))
}

/// `client` with the informer's observation of its WATCH requests (see the module doc).
pub(super) fn observed(client: Client, shared: Arc<Shared>) -> Client {
    let ns = client.default_namespace().to_string();
    let pacing = Arc::new(Mutex::new(Pacing::default()));
    let svc = tower::service_fn(move |req: Request<Body>| {
        let client = client.clone();
        let shared = shared.clone();
        let pacing = pacing.clone();
        async move {
            if !is_watch(&req) {
                return client.send(req).await.map(|r| r.map(Observed::plain));
            }
            let wait = lock(&pacing).wait.take();
            if let Some(d) = wait {
                tracing::debug!(kind = %shared.label, "watch closed at once: re-opening in {d:?}");
                tokio::time::sleep(d).await;
            }
            let res = client.send(req).await?;
            if res.status().is_success() {
                shared.reached();
                Ok(res.map(|b| Observed::watch(b, pacing)))
            } else {
                Ok(res.map(Observed::plain))
            }
        }
    });
    Client::new(svc, ns)
}

fn lock(p: &Mutex<Pacing>) -> std::sync::MutexGuard<'_, Pacing> {
    p.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A response body; a watch's reports how it ended to its [`Pacing`].
struct Observed {
    inner: Body,
    watch: Option<WatchBody>,
}

struct WatchBody {
    pacing: Arc<Mutex<Pacing>>,
    opened: Instant,
    delivered: bool,
    ended: bool,
}

impl Observed {
    fn plain(inner: Body) -> Self {
        Self { inner, watch: None }
    }

    fn watch(inner: Body, pacing: Arc<Mutex<Pacing>>) -> Self {
        Self {
            inner,
            watch: Some(WatchBody {
                pacing,
                opened: Instant::now(),
                delivered: false,
                ended: false,
            }),
        }
    }
}

impl WatchBody {
    fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        if !self.delivered && self.opened.elapsed() < MIN_WATCH {
            lock(&self.pacing).short_watch();
        }
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        if let Some(w) = &mut self.watch {
            w.end();
        }
    }
}

impl HttpBody for Observed {
    type Data = Bytes;
    type Error = kube::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Some(w) = &mut this.watch {
            match &polled {
                Poll::Ready(Some(Ok(f))) if !w.delivered && f.data_ref().is_some_and(|d| !d.is_empty()) => {
                    w.delivered = true;
                    lock(&w.pacing).delivered();
                }
                Poll::Ready(None | Some(Err(_))) => w.end(),
                _ => {}
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
