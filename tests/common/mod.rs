//! Helpers shared by the integration tests.

use std::{io::Write, path::PathBuf};

/// The shared real-cluster fixtures (`../shared/fixtures/<rel>` beside the crate), or `None`
/// after telling the person running the tests that `test` is skipped. The notice is written
/// straight to stderr, past libtest's output capture, so a fresh clone's `cargo test` shows
/// which tests did not run.
pub fn shared_fixture(rel: &str, test: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel);
    if p.exists() {
        return Some(p);
    }
    let _ = writeln!(
        std::io::stderr(),
        "skipping {test}: ../shared/fixtures/{rel} not found"
    );
    None
}
