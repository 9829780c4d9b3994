//! ClusterVersion spec validation (upstream `lib/validation/validation.go`,
//! tests in `validation_test.go` and `pkg/cvo/cvo_test.go` `TestOperator_sync`) and the `Invalid`
//! condition message.

use std::fmt;

use crate::openshift::ClusterVersion;

/// Kind of a field error, rendered as Kubernetes `field.Error` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// `Invalid value: "{value}"`.
    Invalid(String),
    /// `Required value`.
    Required,
    /// `Forbidden`.
    Forbidden,
}

/// One validation error: `{path}: Invalid value: "{v}": {detail}` /
/// `{path}: Required value: {detail}` / `{path}: Forbidden: {detail}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Dotted field path, e.g. `spec.desiredUpdate.version`.
    pub field: String,
    /// The kind (and bad value).
    pub kind: FieldErrorKind,
    /// What is wrong.
    pub detail: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            FieldErrorKind::Invalid(v) => write!(f, "{}: Invalid value: {v:?}: {}", self.field, self.detail),
            FieldErrorKind::Required => write!(f, "{}: Required value: {}", self.field, self.detail),
            FieldErrorKind::Forbidden => write!(f, "{}: Forbidden: {}", self.field, self.detail),
        }
    }
}

fn invalid(field: &str, value: &str, detail: &str) -> FieldError {
    FieldError {
        field: field.into(),
        kind: FieldErrorKind::Invalid(value.into()),
        detail: detail.into(),
    }
}

/// Validates the spec of `cv` in upstream order: `spec.upstream`, `spec.clusterID`, then the
/// first applicable `spec.desiredUpdate` problem. `accept_risks_gate` is the feature gate
/// ClusterUpdateAcceptRisks. An empty list means valid.
pub fn validate_cluster_version(cv: &ClusterVersion, accept_risks_gate: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &cv.spec;
    if let Some(u) = spec.upstream.as_deref().filter(|u| !u.is_empty())
        && !is_parseable_url(u)
    {
        errs.push(invalid("spec.upstream", u, "must be a valid URL or empty"));
    }
    if let Some(id) = spec.cluster_id.as_deref().filter(|s| !s.is_empty()) {
        match uuid::Uuid::parse_str(id) {
            Ok(u) if u.get_variant() != uuid::Variant::RFC4122 => {
                errs.push(invalid("spec.clusterID", id, "must be an RFC4122-variant UUID"));
            }
            Ok(u) if u.get_version_num() != 4 => {
                errs.push(invalid("spec.clusterID", id, "must be a version-4 UUID"));
            }
            Ok(_) => {}
            Err(_) => errs.push(invalid("spec.clusterID", id, "must be an RFC4122-variant UUID")),
        }
    }
    if let Some(u) = &spec.desired_update {
        let version = u.version.as_deref().unwrap_or("");
        let image = u.image.as_deref().unwrap_or("");
        let arch = u.architecture.as_deref().unwrap_or("");
        if !u.accept_risks.is_empty() && !accept_risks_gate {
            errs.push(FieldError {
                field: "spec.desiredUpdate.acceptRisks".into(),
                kind: FieldErrorKind::Forbidden,
                detail: "acceptRisks must not be specified".into(),
            });
        } else if arch.is_empty() && version.is_empty() && image.is_empty() && u.accept_risks.is_empty() {
            let detail = if accept_risks_gate {
                "must specify architecture, version, image, or acceptRisks"
            } else {
                "must specify architecture, version, or image"
            };
            errs.push(FieldError {
                field: "spec.desiredUpdate".into(),
                kind: FieldErrorKind::Required,
                detail: detail.into(),
            });
        } else if !version.is_empty() && semver::Version::parse(version).is_err() {
            errs.push(invalid(
                "spec.desiredUpdate.version",
                version,
                "must be a semantic version (1.2.3[-...])",
            ));
        } else if !version.is_empty() && image.is_empty() {
            match count_payloads_for_version(cv, version) {
                0 => errs.push(invalid(
                    "spec.desiredUpdate.version",
                    version,
                    "when image is empty the update must be an available update",
                )),
                1 => {}
                _ => errs.push(invalid(
                    "spec.desiredUpdate.version",
                    version,
                    "there are multiple possible payloads for this version, specify the exact image",
                )),
            }
        }
    }
    errs
}

/// Available updates with that version and an image; if none, 1 when a history entry with an
/// image has it (valid, though the target is not resolved from history, as upstream
/// `pkg/cvo/updatepayload.go` `findUpdateFromConfig` does).
fn count_payloads_for_version(cv: &ClusterVersion, version: &str) -> usize {
    let n = cv
        .status
        .available_updates
        .iter()
        .flatten()
        .filter(|r| r.version == version && !r.image.is_empty())
        .count();
    if n > 0 {
        return n;
    }
    usize::from(
        cv.status
            .history
            .iter()
            .any(|h| h.version == version && !h.image.is_empty()),
    )
}

/// Whether Go's `url.Parse` would accept `s`: no ASCII control characters, well-formed `%XX`
/// escapes, no empty scheme before a leading `:`, and a numeric port if an authority has one.
fn is_parseable_url(s: &str) -> bool {
    if s.chars().any(|c| c.is_ascii_control()) {
        return false;
    }
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let ok = i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit();
            if !ok {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    if s.starts_with(':') {
        return false;
    }
    if let Some((_, rest)) = s.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if !host.starts_with('[')
            && let Some((_, port)) = host.rsplit_once(':')
            && !port.bytes().all(|c| c.is_ascii_digit())
        {
            return false;
        }
    }
    true
}

/// The `Invalid` condition message: one error ⇒ `The cluster version is invalid: {err}`;
/// several ⇒ `The cluster version is invalid:\n* {e1}\n* {e2}\n` (upstream `TestOperator_sync`).
/// `None` when valid.
pub(crate) fn invalid_message(errs: &[FieldError]) -> Option<String> {
    match errs {
        [] => None,
        [one] => Some(format!("The cluster version is invalid: {one}")),
        many => {
            let mut s = String::from("The cluster version is invalid:\n");
            for e in many {
                s.push_str(&format!("* {e}\n"));
            }
            Some(s)
        }
    }
}
