//! One informer's task: kube-runtime's watcher into kube-runtime's reflector store, with the
//! restarts, backoff and health of the module doc ([`super`]).

use std::{fmt::Debug, sync::Arc};

use futures::{StreamExt, stream::BoxStream};
use kube::{
    Resource, ResourceExt,
    runtime::{reflector::store::Writer, utils::Backoff as _, watcher},
};

use super::{ApiFailure, NOT_SERVED_RELOOK, Shared};

/// A watcher's event stream.
pub(super) type Events<K> = BoxStream<'static, watcher::Result<watcher::Event<K>>>;

/// What to do after a watcher error.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// The resourceVersion expired (or the kind went away while watched): a new watcher, which
    /// lists afresh.
    Relist,
    /// The list answered 404: the kind is not served.
    NotServed,
    /// Record the failure (its line, and the HTTP status of the answer, `None` without one),
    /// back off, and let the watcher retry.
    Failed(String, Option<u16>),
}

fn code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// Sorts a watcher error (kube-runtime 5 `watcher::Error`) into what to do next.
fn classify(e: &watcher::Error, label: &str) -> Next {
    match e {
        watcher::Error::InitialListFailed(e) if code(e) == Some(404) => Next::NotServed,
        watcher::Error::InitialListFailed(e) => {
            let f = ApiFailure::new(format!("list {label}"), e);
            Next::Failed(f.to_string(), f.code)
        }
        // kube-runtime re-watches from the same resourceVersion after any failed WATCH request,
        // so an HTTP 410 answer would be asked again forever; a 404 means the kind is gone.
        watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e)
            if matches!(code(e), Some(410 | 404)) =>
        {
            Next::Relist
        }
        watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e) => {
            let f = ApiFailure::new(format!("watch {label}"), e);
            Next::Failed(f.to_string(), f.code)
        }
        watcher::Error::WatchError(s) if s.code == 410 => Next::Relist,
        watcher::Error::WatchError(s) => Next::Failed(
            ApiFailure::from_status(format!("watch {label}"), s).to_string(),
            Some(s.code),
        ),
        watcher::Error::NoResourceVersion => Next::Failed(
            format!("list {label}: the server sent no resourceVersion (does the kind support watch?)"),
            None,
        ),
    }
}

/// Runs one informer forever: `start` makes a watcher (a fresh one lists first); its events
/// go through `writer` into the store; errors restart it, mark the kind not served, or are
/// recorded and backed off.
pub(super) async fn run<K>(start: impl Fn() -> Events<K>, mut writer: Writer<K>, shared: Arc<Shared>)
where
    K: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
{
    let mut backoff = watcher::DefaultBackoff::default();
    loop {
        let mut events = start();
        let pause = loop {
            let Some(item) = events.next().await else {
                // The watcher does not end; if it did, start another.
                break None;
            };
            match item {
                Ok(ev) => {
                    let ev = ev.modify(|o| o.managed_fields_mut().clear());
                    writer.apply_watcher_event(&ev);
                    match ev {
                        watcher::Event::InitDone => {
                            backoff.reset();
                            shared.listed();
                        }
                        watcher::Event::Apply(_) | watcher::Event::Delete(_) => {
                            backoff.reset();
                            shared.reached();
                            shared.bump();
                        }
                        watcher::Event::Init | watcher::Event::InitApply(_) => {}
                    }
                }
                Err(e) => match classify(&e, &shared.label) {
                    Next::Relist => {
                        // Routine (etcd compaction): not worth an info line.
                        tracing::debug!(kind = %shared.label, "{e}: relisting");
                        break None;
                    }
                    Next::NotServed => {
                        writer.apply_watcher_event(&watcher::Event::Init);
                        writer.apply_watcher_event(&watcher::Event::InitDone);
                        shared.not_served();
                        break Some(NOT_SERVED_RELOOK);
                    }
                    Next::Failed(message, code) => {
                        shared.failed(message, code);
                        let d = backoff.next().unwrap_or(std::time::Duration::from_secs(30));
                        tokio::time::sleep(d).await;
                    }
                },
            }
        };
        drop(events);
        if let Some(d) = pause {
            tokio::time::sleep(d).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("boom", "Reason")
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn errors_sort_into_relists_absence_and_failures() {
        use watcher::Error as E;
        assert_eq!(classify(&E::InitialListFailed(api(404)), "x"), Next::NotServed);
        assert_eq!(
            classify(&E::InitialListFailed(api(500)), "nodes"),
            Next::Failed("list nodes: boom (reason Reason, code 500)".into(), Some(500))
        );
        assert_eq!(classify(&E::WatchStartFailed(api(410)), "x"), Next::Relist);
        assert_eq!(classify(&E::WatchFailed(api(410)), "x"), Next::Relist);
        assert_eq!(classify(&E::WatchStartFailed(api(404)), "x"), Next::Relist);
        assert_eq!(
            classify(&E::WatchStartFailed(api(503)), "nodes"),
            Next::Failed("watch nodes: boom (reason Reason, code 503)".into(), Some(503))
        );
        let gone = kube::core::Status::failure("too old", "Expired").with_code(410);
        assert_eq!(classify(&E::WatchError(Box::new(gone)), "x"), Next::Relist);
        let forbidden = kube::core::Status::failure("no", "Forbidden").with_code(403);
        assert_eq!(
            classify(&E::WatchError(Box::new(forbidden)), "nodes"),
            Next::Failed("watch nodes: no (reason Forbidden, code 403)".into(), Some(403))
        );
    }
}
