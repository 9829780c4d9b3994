//! Handing freed heap memory back to the system, for the long-running faces (the dashboard,
//! the demo, the operator, `cvo sim serve`).
//!
//! glibc's allocator keeps pages it got for a burst (a payload parsed, a pass's diffs, a full
//! list) on its free lists, one arena per busy thread, and returns only the top of each arena
//! by itself. An idle demo after its update held about 3 MB of such free pages (13.8 MB of
//! anonymous memory before `malloc_trim(0)`, 10.9 MB after). [`spawn_periodic_release`] asks
//! glibc to give free pages back every [`RELEASE_PERIOD`]; the walk over the arenas takes well
//! under a millisecond at cvo's heap sizes, and [`limit_arenas`] keeps the number of arenas
//! to the runtime's threads. Elsewhere (musl, macOS) both do nothing.

use std::time::Duration;

/// How many malloc arenas glibc may create: [`limit_arenas`] sets it before the runtime's
/// threads start. One: every thread allocates from the main arena (each keeps its own small
/// cache, tcache, off the arena's lock). The idle demo's anonymous memory went from 10,448 KiB
/// (two arenas) to 9,844 KiB with this and the shared informers of `cvo demo`
/// (`scripts/measure-demo-idle.sh` in `.ci/run`).
pub const ARENAS: i32 = 1;

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

/// Caps glibc's malloc arenas at `n` (`mallopt(M_ARENA_MAX, n)`; glibc's default is eight per
/// core). Each arena keeps its own free lists and fragments on its own, so every thread that
/// allocates adds up to a few hundred KiB of idle heap: capped at two the idle demo held about
/// 1 MB less anonymous memory (RssAnon 11.4 MB, 10.5 MB capped), at one 0.4 MB less again,
/// and per-thread caches (tcache) keep small allocations off the arena lock.
/// Call it before threads start; returns whether glibc took it. Elsewhere it does nothing.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(unsafe_code, reason = "glibc's mallopt has no Rust binding without FFI")]
pub fn limit_arenas(n: i32) -> bool {
    // SAFETY: mallopt(3) only sets an allocator parameter, under the allocator's own lock;
    // M_ARENA_MAX takes any positive count.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, n) == 1 }
}

/// Caps the allocator's arenas; not available here, so `false`.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn limit_arenas(_n: i32) -> bool {
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
