//! Release image pull specs as `oc adm upgrade --to-image` accepts them:
//! `[registry/]namespace/name[:tag][@algorithm:hex]`, with a registry or a repository path
//! (a bare `4.0.1` or `ubuntu:latest` is refused) and a tag or a digest.
//!
//! Upstream: `pkg/image/reference/reference.go` in openshift/library-go (the parser `oc` uses)
//! and the checks of `pkg/cli/admin/upgrade/upgrade.go` in openshift/oc.

use std::fmt;

/// A parsed pull spec. `repository` is the path after the registry (`ocp-release` in
/// `quay.io/openshift-release-dev/ocp-release@sha256:…` has the path
/// `openshift-release-dev/ocp-release`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullSpec {
    /// Host (and port) of the registry, when the first path element names one (it has a `.` or
    /// a `:`, or is `localhost`).
    pub registry: Option<String>,
    /// The repository path, `/`-separated, never empty.
    pub repository: String,
    /// The tag, without the `:`.
    pub tag: Option<String>,
    /// The digest, `algorithm:hex` (e.g. `sha256:` and 64 hex digits).
    pub digest: Option<String>,
}

/// Why a pull spec was refused; the text follows `--to-image must be a valid image pull spec: `.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PullSpecError {
    /// Empty, or with whitespace or control characters.
    #[error("{0:?} is not a pull spec (empty or contains whitespace)")]
    Malformed(String),
    /// A single path element, as `4.0.1` or `ubuntu:latest`.
    #[error("no registry or repository specified")]
    NoRepository,
    /// Neither `:tag` nor `@digest`.
    #[error("no tag or digest specified")]
    NoTagOrDigest,
    /// A digest that is not `algorithm:hex` with at least 32 hex digits.
    #[error("invalid digest {0:?} (expected algorithm:hex, e.g. sha256: and 64 hex digits)")]
    BadDigest(String),
    /// An empty or invalid path element or tag.
    #[error("invalid repository or tag in {0:?}")]
    BadName(String),
}

impl PullSpec {
    /// Parses `text`.
    ///
    /// # Errors
    /// [`PullSpecError`] naming what is missing or malformed.
    pub fn parse(text: &str) -> Result<Self, PullSpecError> {
        if text.is_empty() || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(PullSpecError::Malformed(text.to_string()));
        }
        let (name, digest) = match text.split_once('@') {
            Some((name, digest)) => (name, Some(parse_digest(digest)?)),
            None => (text, None),
        };
        let (path, tag) = match name.rfind(':') {
            // A `:` after the last `/` separates the tag; before it, it is a registry port.
            Some(i) if !name[i..].contains('/') => (&name[..i], Some(&name[i + 1..])),
            _ => (name, None),
        };
        if let Some(tag) = tag {
            let valid = !tag.is_empty()
                && tag.len() <= 128
                && tag
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
                && !tag.starts_with(['.', '-']);
            if !valid {
                return Err(PullSpecError::BadName(text.to_string()));
            }
        }
        let parts: Vec<&str> = path.split('/').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(PullSpecError::BadName(text.to_string()));
        }
        if parts.len() < 2 {
            return Err(PullSpecError::NoRepository);
        }
        let first = parts[0];
        let (registry, repo_parts) = if first.contains(['.', ':']) || first == "localhost" {
            (Some(first.to_string()), &parts[1..])
        } else {
            (None, &parts[..])
        };
        let repo_ok = repo_parts.iter().all(|p| {
            p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
        });
        if !repo_ok {
            return Err(PullSpecError::BadName(text.to_string()));
        }
        if tag.is_none() && digest.is_none() {
            return Err(PullSpecError::NoTagOrDigest);
        }
        Ok(Self {
            registry,
            repository: repo_parts.join("/"),
            tag: tag.map(str::to_string),
            digest,
        })
    }

    /// Whether the spec names its image by digest (what the cluster can verify).
    pub fn is_by_digest(&self) -> bool {
        self.digest.is_some()
    }
}

fn parse_digest(digest: &str) -> Result<String, PullSpecError> {
    let bad = || PullSpecError::BadDigest(digest.to_string());
    let (algorithm, hex) = digest.split_once(':').ok_or_else(bad)?;
    let algorithm_ok = !algorithm.is_empty()
        && algorithm
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+._-".contains(c));
    let hex_ok = hex.len() >= 32 && hex.chars().all(|c| c.is_ascii_hexdigit());
    if algorithm_ok && hex_ok {
        Ok(digest.to_string())
    } else {
        Err(bad())
    }
}

impl fmt::Display for PullSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(r) = &self.registry {
            write!(f, "{r}/")?;
        }
        f.write_str(&self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

/// Whether two pull specs name the same image: the same text, or the same digest
/// (signature verification binds the digest, not the repository).
pub fn same_image(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (PullSpec::parse(a), PullSpec::parse(b)) {
        (Ok(a), Ok(b)) => a.digest.is_some() && a.digest == b.digest,
        _ => false,
    }
}
