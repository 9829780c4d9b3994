//! API errors as one sentence, and the bounded retry of the one-shot commands.
//!
//! kube's `Error::Api` prints the server's `Status` twice, once as a Rust debug struct; an
//! administrator needs the Status's message, reason and code on one line, as `kubectl` shows
//! them (`Error from server (InternalError): ...`). [`ApiFailure`] (defined in
//! [`crate::informers`], re-exported here) carries what was being done and those three fields. The one-shot commands (`cvo status`, `cvo get`) retry a failure the
//! server may recover from (any 5xx, and 429) a bounded number of times ([`RETRY_DELAYS`]);
//! kube's own client retries only 429, 503 and 504 (its `RetryPolicy`), and watches keep their
//! own backoff.

use std::time::Duration;

pub use crate::informers::ApiFailure;

/// Whether the live client already retried `f`'s answer itself
/// ([`crate::cluster::live::CLIENT_RETRIED_CODES`], [`crate::cluster::live::CLIENT_RETRIES`]
/// times) before it became this failure.
pub fn retried_by_client(f: &ApiFailure) -> bool {
    f.code
        .is_some_and(|c| crate::cluster::live::CLIENT_RETRIED_CODES.contains(&c))
}

/// Jitter of [`RETRY_DELAYS`]: each pause is ±20 % of its value.
pub const RETRY_JITTER: f64 = 0.2;

/// Pauses before each retry of a transient failure in a one-shot command: three retries,
/// 3.5 s in all (±[`RETRY_JITTER`]), then the failure is reported.
pub const RETRY_DELAYS: [Duration; 3] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
];

/// Runs `attempt` until it succeeds, fails with an error that is not a transient
/// [`ApiFailure`], or [`RETRY_DELAYS`] are used up (the last error is returned). Each retry is
/// logged at `warn` with the failure's line.
///
/// A 429, 503 or 504 is not retried here: the live client ([`crate::cluster::live::connect`])
/// has retried it already ([`retried_by_client`]), and retrying its retries made a
/// 504 cost 12 requests and 43 s at 3 s a request. Those end after 1 +
/// [`crate::cluster::live::CLIENT_RETRIES`] requests, other 5xx after 1 + 3.
///
/// # Errors
/// The last attempt's error.
pub async fn retry_transient<T, F, Fut>(mut attempt: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let mut delays = RETRY_DELAYS.iter();
    loop {
        match attempt().await {
            Ok(v) => return Ok(v),
            Err(e) => {
                let transient = e
                    .chain()
                    .find_map(|c| c.downcast_ref::<ApiFailure>())
                    .is_some_and(|f| f.is_transient() && !retried_by_client(f));
                match delays.next() {
                    Some(d) if transient => {
                        let d = crate::clock::jittered(*d, RETRY_JITTER);
                        tracing::warn!("{e:#}; retrying in {:.1}s", d.as_secs_f64());
                        tokio::time::sleep(d).await;
                    }
                    _ => return Err(e),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, reason: &str, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, reason)
                .with_code(code)
                .boxed(),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn transient_failures_are_retried_three_times_then_reported() {
        let calls = std::sync::atomic::AtomicU32::new(0);
        let r: anyhow::Result<()> = retry_transient(|| async {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Err(ApiFailure::new("get x", &status(500, "InternalError", "boom")).into())
        })
        .await;
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 4);
        assert_eq!(
            r.expect_err("fails").to_string(),
            "get x: boom (reason InternalError, code 500)"
        );
        // What the client retried itself is not retried again.
        for code in [429, 503, 504] {
            let calls = std::sync::atomic::AtomicU32::new(0);
            let _ = retry_transient(|| async {
                calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Err::<(), _>(anyhow::Error::from(ApiFailure::new(
                    "get x",
                    &status(code, "Busy", "later"),
                )))
            })
            .await;
            assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1, "{code}");
        }
        // A permanent failure is not retried; a recovery ends the retries.
        let calls = std::sync::atomic::AtomicU32::new(0);
        let r: anyhow::Result<u32> = retry_transient(|| async {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n == 0 {
                Err(ApiFailure::new("get x", &status(502, "BadGateway", "later")).into())
            } else {
                Ok(n)
            }
        })
        .await;
        assert_eq!(r.expect("recovers"), 1);
        let calls = std::sync::atomic::AtomicU32::new(0);
        let _ = retry_transient(|| async {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Err::<(), _>(anyhow::Error::from(ApiFailure::new(
                "get x",
                &status(404, "NotFound", "gone"),
            )))
        })
        .await;
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
