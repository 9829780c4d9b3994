//! `cli::heap::release_free_heap` hands freed heap back to the system: memory freed in the
//! middle of the heap (pinned by a live block above it, so glibc cannot trim it by itself)
//! leaves the process's resident set only after the call. Its own test binary, so no other
//! test's allocations move the figures.

/// Resident set size of this process in KiB (`/proc/self/statm`, pages × 4 KiB pages).
#[cfg(target_os = "linux")]
fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn freed_heap_in_the_middle_of_an_arena_is_released() {
    // 64 MiB in 1 KiB blocks, touched, then a block above them that stays alive.
    let blocks: Vec<Vec<u8>> = (0..65_536).map(|i| vec![(i % 251) as u8; 1024]).collect();
    let pin = vec![1u8; 1024];
    let full = rss_kib();
    drop(blocks);
    let freed = rss_kib();
    assert!(
        cvo::cli::heap::release_free_heap(),
        "malloc_trim released nothing"
    );
    let released = rss_kib();
    assert!(pin[0] == 1);
    eprintln!("rss: {full} KiB full, {freed} KiB after free, {released} KiB after release");
    // glibc keeps the freed blocks resident (the pin holds the top of the heap) ...
    assert!(
        freed + 16_384 > full,
        "the freed blocks left on their own: {full} -> {freed} KiB"
    );
    // ... until they are released.
    assert!(
        released + 32_768 < freed,
        "released only {} KiB of 64 MiB freed",
        freed.saturating_sub(released)
    );
}

/// `cli::runtime` caps glibc's arenas at one before its threads start (the idle demo's
/// anonymous memory, `scripts/measure-demo-idle.sh`); glibc takes the cap.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn glibc_takes_the_arena_cap() {
    assert_eq!(cvo::cli::heap::ARENAS, 1);
    assert!(cvo::cli::heap::limit_arenas(cvo::cli::heap::ARENAS));
}
