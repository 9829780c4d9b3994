//! Building and pushing a release image from a payload directory: one gzip tar layer holding
//! the directory's `manifests/` and `release-manifests/` (the two trees
//! [`super::Retriever`] extracts), an OCI image config for `linux/amd64`, and an OCI manifest,
//! pushed with `oci-client`. The demo puts its embedded releases into a local registry with it
//! (`cvo demo --registry`), and the registry tests build their images with it.
//!
//! Upstream builds release images with `oc adm release new`
//! (`pkg/cli/admin/release/new.go` in openshift/oc); this is the smallest image the CVO's
//! retrieval accepts, not a full release image (no operator images, no `image-references`
//! rewrite).

use std::path::{Path, PathBuf};

use oci_client::{
    Client, Reference,
    client::{ClientConfig, ClientProtocol, Config, ImageLayer},
    secrets::RegistryAuth,
};

/// Why a release image could not be built or pushed.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The payload directory could not be read into a layer.
    #[error("{}: building the release image layer: {source}", dir.display())]
    Layer {
        /// The payload directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `registry/repo:tag` is not a valid image reference.
    #[error("{reference}: not a valid image reference: {message}")]
    Reference {
        /// The reference as written.
        reference: String,
        /// The parser's message.
        message: String,
    },
    /// The registry refused the push or could not be reached.
    #[error("pushing {reference}: {message}")]
    Registry {
        /// The reference pushed to.
        reference: String,
        /// The client's message.
        message: String,
    },
}

/// A gzip tar layer of the payload directory `dir`: its `manifests/` (when present) and
/// `release-manifests/` trees, with their relative paths. Files only and directories; the
/// layer is built in memory (a demo payload is a few hundred kB).
///
/// # Errors
/// [`PushError::Layer`] when `dir/release-manifests` is missing or a file cannot be read.
pub fn payload_layer(dir: &Path) -> Result<Vec<u8>, PushError> {
    let err = |source| PushError::Layer {
        dir: dir.to_path_buf(),
        source,
    };
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    b.follow_symlinks(false);
    if dir.join("manifests").is_dir() {
        b.append_dir_all("manifests", dir.join("manifests"))
            .map_err(err)?;
    }
    b.append_dir_all("release-manifests", dir.join("release-manifests"))
        .map_err(err)?;
    b.into_inner().and_then(|gz| gz.finish()).map_err(err)
}

/// The OCI media type of a zstd-compressed tar layer.
pub const ZSTD_LAYER_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar+zstd";

/// Pushes an image of the gzip (or zstd, told by their first bytes) tar `layers` (OCI media types, a `linux/amd64` config) as
/// `registry/repo:tag` without credentials, over plain HTTP when `plain_http` (a loopback
/// registry) and TLS otherwise. Returns the pushed image by digest:
/// `registry/repo@sha256:<hex>`, the manifest digest the registry reports.
///
/// # Errors
/// [`PushError::Reference`] for a bad `registry`/`repo`/`tag`, [`PushError::Registry`] when the
/// push or the digest lookup fails.
pub async fn push_image(
    registry: &str,
    repo: &str,
    tag: &str,
    layers: Vec<Vec<u8>>,
    plain_http: bool,
) -> Result<String, PushError> {
    super::install_crypto_provider();
    let client = Client::new(ClientConfig {
        protocol: if plain_http {
            ClientProtocol::HttpsExcept(vec![registry.to_string()])
        } else {
            ClientProtocol::Https
        },
        connect_timeout: Some(std::time::Duration::from_secs(10)),
        ..ClientConfig::default()
    });
    let name = format!("{registry}/{repo}:{tag}");
    let reference: Reference = name
        .parse()
        .map_err(|e: oci_client::ParseError| PushError::Reference {
            reference: name.clone(),
            message: e.to_string(),
        })?;
    let registry_err = |e: oci_client::errors::OciDistributionError| PushError::Registry {
        reference: name.clone(),
        message: e.to_string(),
    };
    let config = serde_json::json!({
        "architecture": "amd64",
        "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": []},
        "config": {}
    });
    let layers: Vec<ImageLayer> = layers
        .into_iter()
        .map(|l| {
            if super::zstd::is_zstd(&l) {
                ImageLayer::new(l, ZSTD_LAYER_MEDIA_TYPE.to_string(), None)
            } else {
                ImageLayer::oci_v1_gzip(l, None)
            }
        })
        .collect();
    client
        .push(
            &reference,
            &layers,
            Config::oci_v1(config.to_string().into_bytes(), None),
            &RegistryAuth::Anonymous,
            None,
        )
        .await
        .map_err(registry_err)?;
    let digest = client
        .fetch_manifest_digest(&reference, &RegistryAuth::Anonymous)
        .await
        .map_err(registry_err)?;
    Ok(format!("{registry}/{repo}@{digest}"))
}
