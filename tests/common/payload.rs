//! One payload writer for the tests: a release image directory as `cvo --payload DIR` reads it
//! (`release-manifests/release-metadata`, `release-manifests/image-references`, an empty
//! `manifests/`) and the manifests a test adds.

use std::path::{Path, PathBuf};

use serde_json::json;

/// The annotation that includes a manifest in the self-managed-high-availability profile, as
/// YAML lines under `metadata:` (indented two spaces), to splice into a manifest's text.
pub const ANN: &str =
    "  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n";

/// A release image directory being written.
pub struct PayloadDir {
    /// `DIR/release-manifests`.
    pub manifests: PathBuf,
    /// `DIR/manifests`: the operator's own manifests (upstream's CVO image keeps them there).
    pub own: PathBuf,
}

impl PayloadDir {
    /// Creates `dir/manifests/` and `dir/release-manifests/` with the release metadata of
    /// `version` (`cincinnati-metadata-v0`, no previous releases) and its image references.
    pub fn new(dir: &Path, version: &str) -> Self {
        Self::with_previous(dir, version, &[])
    }

    /// As [`PayloadDir::new`], with `previous` as the release metadata's `previous` versions
    /// (the releases this one updates from).
    pub fn with_previous(dir: &Path, version: &str, previous: &[&str]) -> Self {
        let rm = dir.join("release-manifests");
        let own = dir.join("manifests");
        std::fs::create_dir_all(&own).expect("mkdir manifests");
        std::fs::create_dir_all(&rm).expect("mkdir release-manifests");
        let p = Self { manifests: rm, own };
        p.file(
            "release-metadata",
            &json!({"kind": "cincinnati-metadata-v0", "version": version, "previous": previous, "metadata": {}})
                .to_string(),
        );
        p.file(
            "image-references",
            &format!("kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata:\n  name: {version}\n"),
        );
        p
    }

    /// Writes `release-manifests/NAME` with `text`.
    pub fn file(&self, name: &str, text: &str) -> &Self {
        std::fs::write(self.manifests.join(name), text)
            .unwrap_or_else(|e| panic!("write {}: {e}", self.manifests.join(name).display()));
        self
    }

    /// Writes `manifests/NAME` (beside `release-manifests/`) with `text`.
    pub fn own_file(&self, name: &str, text: &str) -> &Self {
        std::fs::write(self.own.join(name), text)
            .unwrap_or_else(|e| panic!("write {}: {e}", self.own.join(name).display()));
        self
    }

    /// Writes every `(name, text)` of `files`.
    pub fn files<S: AsRef<str>>(&self, files: &[(&str, S)]) -> &Self {
        for (name, text) in files {
            self.file(name, text.as_ref());
        }
        self
    }

    /// Writes a small component named `tag`: `0000_00_{tag}_namespace.yaml` (Namespace `ns`),
    /// `0000_10_{tag}_configmap.yaml` (ConfigMap `ns/settings`, `data.version: VERSION`) and
    /// `0000_30_{tag}_clusteroperator.yaml`: ClusterOperator `co` with `labels` (YAML lines
    /// under `metadata:`, indented two spaces, or empty) and `status` (the lines under
    /// `status:`, indented two spaces), all with [`ANN`].
    pub fn component(
        &self,
        tag: &str,
        ns: &str,
        co: &str,
        version: &str,
        labels: &str,
        status: &str,
    ) -> &Self {
        self.files(&[
            (
                &format!("0000_00_{tag}_namespace.yaml"),
                format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n{ANN}"),
            ),
            (
                &format!("0000_10_{tag}_configmap.yaml"),
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: {ns}\n{ANN}data:\n  version: \"{version}\"\n"
                ),
            ),
            (
                &format!("0000_30_{tag}_clusteroperator.yaml"),
                format!(
                    "apiVersion: config.openshift.io/v1\nkind: ClusterOperator\nmetadata:\n  name: {co}\n{labels}{ANN}status:\n{status}"
                ),
            ),
        ])
    }
}
