//! The demo's release payloads: embedded in the binary as one compressed archive (packed by
//! `build.rs` from `assets/payloads/<version>/`), unpacked into a temporary directory at start
//! and removed when [`DemoPayloads`] drops.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use crate::reconcile::updates::graph::Graph;

/// `assets/payloads/<version>/...` as one gzip-compressed tar, packed by `build.rs`: the
/// plain YAML (3.4 MB) stayed resident in every demo process once written out.
static PAYLOADS_TAR_GZ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/demo-payloads.tar.gz"));

/// The embedded demo payloads, written to a temporary directory (removed on drop).
#[derive(Debug)]
pub struct DemoPayloads {
    dir: tempfile::TempDir,
    /// Payload directory by release image (pull spec from the update graph).
    pub by_image: BTreeMap<String, PathBuf>,
    /// Release version by image, for messages.
    pub versions: BTreeMap<String, String>,
}

impl DemoPayloads {
    /// Writes every embedded payload (`assets/payloads/<version>/`) to a new temporary
    /// directory and maps each one to its release image in `graph`.
    ///
    /// # Errors
    /// The temporary directory cannot be written, or a payload version is not in the graph.
    pub fn extract(graph: &Graph) -> anyhow::Result<Self> {
        let dir = tempfile::Builder::new().prefix("cvo-demo-").tempdir()?;
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(PAYLOADS_TAR_GZ));
        archive.set_preserve_mtime(false);
        archive
            .unpack(dir.path())
            .map_err(|e| anyhow::anyhow!("writing the demo payloads to {}: {e}", dir.path().display()))?;
        let mut by_image = BTreeMap::new();
        let mut versions = BTreeMap::new();
        for entry in std::fs::read_dir(dir.path())? {
            let entry = entry?;
            if !entry.file_type()?.is_dir() {
                continue;
            }
            let version = entry.file_name().to_string_lossy().into_owned();
            let image = graph.image_of(&version).ok_or_else(|| {
                anyhow::anyhow!("assets/update-graph.json: no node for the embedded payload {version}")
            })?;
            by_image.insert(image.to_string(), entry.path());
            versions.insert(image.to_string(), version);
        }
        Ok(Self {
            dir,
            by_image,
            versions,
        })
    }

    /// The temporary directory holding the payloads.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The payload directories, by version order.
    pub fn dirs(&self) -> Vec<PathBuf> {
        let mut v: Vec<(&String, &PathBuf)> = self
            .versions
            .iter()
            .filter_map(|(img, ver)| self.by_image.get(img).map(|d| (ver, d)))
            .collect();
        v.sort();
        v.into_iter().map(|(_, d)| d.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::demo::update_graph;

    /// Every file of `assets/payloads` comes out of the embedded archive with the same bytes,
    /// and nothing else does; the archive is a small fraction of the YAML it packs.
    #[test]
    fn embedded_payloads_unpack_to_the_assets_byte_for_byte() -> anyhow::Result<()> {
        fn files(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) -> std::io::Result<()> {
            for e in std::fs::read_dir(dir)? {
                let p = e?.path();
                if p.is_dir() {
                    files(root, &p, out)?;
                } else {
                    let rel = p.strip_prefix(root).map(Path::to_path_buf).unwrap_or_default();
                    out.insert(rel, std::fs::read(&p)?);
                }
            }
            Ok(())
        }
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/payloads");
        let (mut want, mut got) = (BTreeMap::new(), BTreeMap::new());
        files(&assets, &assets, &mut want)?;
        let p = DemoPayloads::extract(&update_graph()?)?;
        files(p.root(), p.root(), &mut got)?;
        assert_eq!(got.len(), want.len(), "files unpacked");
        assert!(want.len() > 800, "{} payload files", want.len());
        for (path, bytes) in &want {
            assert_eq!(got.get(path), Some(bytes), "{}", path.display());
        }
        let yaml: usize = want.values().map(Vec::len).sum();
        assert!(
            PAYLOADS_TAR_GZ.len() * 5 < yaml,
            "archive {} bytes for {yaml} bytes of payloads",
            PAYLOADS_TAR_GZ.len()
        );
        Ok(())
    }
}
