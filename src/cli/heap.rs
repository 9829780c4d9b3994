//! Handing freed heap memory back to the system, for the long-running faces (the dashboard,
//! the demo, the operator, `cvo sim serve`).
//!
//! glibc's allocator keeps pages it got for a burst (a payload parsed, a pass's diffs, a full
//! list) on its free lists, one arena per busy thread, and returns only the top of each arena
//! by itself. An idle demo after its update held about 3 MB of such free pages (13.8 MB of
//! anonymous memory before `malloc_trim(0)`, 10.9 MB after). [`spawn_periodic_release`] asks
//! glibc to give free pages back every [`RELEASE_PERIOD`]; the walk over the arenas takes well
//! under a millisecond at cvo's heap sizes. Elsewhere (musl, macOS) it does nothing.

use std::time::Duration;

/// How often [`spawn_periodic_release`] releases free heap: once a minute.
pub const RELEASE_PERIOD: Duration = Duration::from_secs(60);

/// Returns the allocator's free pages to the system (glibc `malloc_trim(0)`: every arena, not
/// only the top). Live allocations are untouched. Returns whether any memory was released;
/// always `false` where the allocator has no such call.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(unsafe_code, reason = "glibc's malloc_trim has no Rust binding without FFI")]
pub fn release_free_heap() -> bool {
    // SAFETY: malloc_trim(3) takes a byte count, touches only the allocator's own free lists
    // under its own locks, and is safe to call from any thread at any time.
    unsafe { libc::malloc_trim(0) != 0 }
}

/// Returns the allocator's free pages to the system; not available here, so `false`.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_free_heap() -> bool {
    false
}

/// Spawns a task on `rt` that calls [`release_free_heap`] every `period` (first after one
/// period). It ends with the runtime.
pub fn spawn_periodic_release(rt: &tokio::runtime::Runtime, period: Duration) {
    rt.spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let released = release_free_heap();
            tracing::trace!(released, "released free heap");
        }
    });
}
