//! Waiting until something holds, for tests: on a `tokio::sync::watch` channel (the engine's
//! status, the cluster feed, the leader state) or by polling.
//!
//! The one copy of these helpers: the integration tests reach it through `tests/common`, unit
//! tests inside `src/` include this file with `#[path]`, so it uses nothing but `std` and `tokio`.

#![allow(dead_code)]

use std::{fmt::Debug, future::Future, time::Duration};

use tokio::{sync::watch, time::Instant};

/// How long [`wait_for`] waits.
pub const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// Why [`watch_until`] gave up, with the last value it saw.
#[derive(Debug)]
pub enum Unmet<T> {
    /// Every sender was dropped before the predicate held.
    Closed(T),
    /// The predicate still did not hold when the time limit ran out.
    TimedOut(T),
}

/// Waits at most `limit` until the value in `rx` satisfies `pred` (the current value counts;
/// it is marked seen). Returns the first matching value, or why none came.
pub async fn watch_until<T: Clone>(
    rx: &mut watch::Receiver<T>,
    limit: Duration,
    pred: impl Fn(&T) -> bool,
) -> Result<T, Unmet<T>> {
    let deadline = Instant::now() + limit;
    loop {
        let current = rx.borrow_and_update().clone();
        if pred(&current) {
            return Ok(current);
        }
        match tokio::time::timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(Unmet::Closed(current)),
            Err(_) => return Err(Unmet::TimedOut(current)),
        }
    }
}

/// Waits at most [`WAIT_LIMIT`] until the value in `rx` satisfies `pred`; returns it. Panics
/// naming `what` (and the last value) on timeout or when the channel closes first.
pub async fn wait_for<T: Clone + Debug>(
    rx: &mut watch::Receiver<T>,
    what: &str,
    pred: impl Fn(&T) -> bool,
) -> T {
    match watch_until(rx, WAIT_LIMIT, pred).await {
        Ok(v) => v,
        Err(Unmet::Closed(last)) => {
            panic!("feed closed while waiting for {what}; last state: {last:?}")
        }
        Err(Unmet::TimedOut(last)) => panic!("timed out waiting for {what}; last state: {last:?}"),
    }
}

/// Calls `f` every `every` until it gives `Some`; returns that. Panics naming `what` when
/// `limit` has passed first.
pub async fn poll<T, Fut: Future<Output = Option<T>>>(
    what: &str,
    limit: Duration,
    every: Duration,
    mut f: impl FnMut() -> Fut,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(every).await;
    }
}

/// Checks `f` every 10 ms until it is true; panics naming `what` when `limit` has passed first.
pub async fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    poll(what, limit, Duration::from_millis(10), || {
        std::future::ready(f().then_some(()))
    })
    .await;
}
