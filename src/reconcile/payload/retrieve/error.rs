//! Why a release cannot be retrieved ([`RetrieveError`]).

use std::path::PathBuf;

use super::ExtractError;

/// Why a release cannot be retrieved: each is one line naming the image, registry, layer or
/// file (the ReleaseAccepted message wraps it as `Unable to download and prepare the update:
/// {err}`).
#[derive(Debug, thiserror::Error)]
pub enum RetrieveError {
    /// Not a pull spec.
    #[error("{image:?} is not a valid image pull spec: {err}")]
    PullSpec {
        /// The text.
        image: String,
        /// Why.
        err: String,
    },
    /// The registry refused or failed a request.
    #[error("pulling {image} from {registry}: {err}")]
    Registry {
        /// The pull spec.
        image: String,
        /// The registry.
        registry: String,
        /// What it said.
        err: String,
    },
    /// An image index without an entry for the architecture.
    #[error("{image}: the image index has no linux/{arch} image")]
    NoArchitecture {
        /// The pull spec.
        image: String,
        /// The architecture looked for.
        arch: String,
    },
    /// A layer whose bytes do not hash to its digest.
    #[error("{image}: layer {expected} does not match its digest (received {actual})")]
    DigestMismatch {
        /// The pull spec.
        image: String,
        /// The manifest's digest for the layer.
        expected: String,
        /// What the bytes hash to.
        actual: String,
    },
    /// A refused layer entry.
    #[error("{image}: layer {layer}: {err}")]
    Layer {
        /// The pull spec.
        image: String,
        /// The layer digest.
        layer: String,
        /// Why.
        err: ExtractError,
    },
    /// The extracted image is not a release payload.
    #[error("{image} is not a release image: {what}")]
    NotARelease {
        /// The pull spec.
        image: String,
        /// What is missing or wrong.
        what: String,
    },
    /// The release's version is not the one asked for.
    #[error("release image version {actual} does not match the expected upstream version {expected}")]
    Version {
        /// Requested.
        expected: String,
        /// In `release-metadata`.
        actual: String,
    },
    /// The cache directory cannot be used.
    #[error("cache {}: {err}", .path.display())]
    Cache {
        /// The path.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// A digest that is not `sha256:` and 64 lowercase hex digits (it would name the cache
    /// directory).
    #[error("{image}: unsupported digest {digest:?} (sha256:<64 hex digits> only)")]
    BadDigest {
        /// The pull spec.
        image: String,
        /// The digest.
        digest: String,
    },
    /// No mirror (and not the source, when it may be contacted) served an image by digest.
    #[error("{image}: {}", mirror_failure(.tried, .source_blocked.as_deref()))]
    Mirrors {
        /// The pull spec.
        image: String,
        /// Each place tried, in order, with its error.
        tried: Vec<(String, String)>,
        /// The objects that forbid contacting the source (`mirrorSourcePolicy:
        /// NeverContactSource`), when they do.
        source_blocked: Option<String>,
    },
    /// The retrieval took longer than its limit (upstream's wording).
    #[error("download was canceled")]
    Canceled,
}

fn mirror_failure(tried: &[(String, String)], source_blocked: Option<&str>) -> String {
    let list: Vec<String> = tried
        .iter()
        .map(|(spec, err)| format!("{spec} ({err})"))
        .collect();
    let mut text = format!("no mirror served it: tried {}", list.join("; "));
    if let Some(from) = source_blocked {
        text.push_str(&format!(
            "; the source is not contacted (mirrorSourcePolicy NeverContactSource in {from})"
        ));
    }
    text
}
