//! Stable digests of manifests (FNV-1a 64): computed once per loaded manifest
//! ([`super::Manifest::digest`]) and compared by the apply layer's watch caches, so a manifest
//! verified in the cluster is skipped without building its object again. Stable across
//! processes and builds (no random seed), unlike `std`'s hasher.

use serde_json::Value;

/// FNV-1a 64, fed as a writer (stable across processes and builds).
pub struct Fnv(pub u64);

impl Fnv {
    /// The FNV-1a 64 offset basis.
    pub fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    /// Feeds `b`.
    pub fn bytes(&mut self, b: &[u8]) {
        for x in b {
            self.0 ^= u64::from(*x);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// `s` followed by a 0 byte (so `["ab", "c"]` and `["a", "bc"]` differ).
    pub fn part(&mut self, s: &str) {
        self.bytes(s.as_bytes());
        self.bytes(&[0]);
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Self::new()
    }
}

impl std::io::Write for Fnv {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

/// FNV-1a 64 of `object` as it serializes (compact JSON, keys sorted), without an
/// intermediate string: the manifest's part of the apply layer's verification hash
/// (`reconcile::apply::watch_cache::manifest_hash`); [`super::Manifest::digest`] keeps it per
/// loaded manifest.
pub fn object_digest(object: &Value) -> u64 {
    let mut h = Fnv::new();
    // Writing into the hasher cannot fail, and neither can serializing a `Value`.
    let _ = serde_json::to_writer(&mut h, object);
    h.0
}

/// [`object_digest`] of an object already serialized as compact JSON with sorted keys (what
/// `serde_json::to_string` of its `Value` gives): the same FNV-1a 64 over the same bytes,
/// with no parse.
pub fn text_digest(text: &str) -> u64 {
    let mut h = Fnv::new();
    h.bytes(text.as_bytes());
    h.0
}
