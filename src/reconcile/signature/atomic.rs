//! The "atomic container signature" document a release signature signs (the containers/image
//! signature format), and the rules a document must meet to verify a release digest.
//!
//! Upstream: `verifyAtomicContainerSignature` in `pkg/verify/verify.go` of openshift/library-go:
//! unknown fields are rejected, the type must be `atomic container signature`, the identity
//! must be non-empty and the digest must equal the release digest. The identity is not compared
//! with the pull spec (releases are mirrored under other names).

use serde::{Deserialize, Serialize};

use super::openpgp::SignatureFailure;

/// `critical.type` of a valid document.
pub const ATOMIC_SIGNATURE_TYPE: &str = "atomic container signature";

/// The signed JSON document:
/// `{"critical": {"type", "image": {"docker-manifest-digest"}, "identity":
/// {"docker-reference"}}, "optional": {"creator", "timestamp"}}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomicSignature {
    /// What the signature vouches for.
    pub critical: Critical,
    /// Informational fields.
    #[serde(default)]
    pub optional: Optional,
}

/// `critical`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Critical {
    /// Must be [`ATOMIC_SIGNATURE_TYPE`].
    #[serde(default, rename = "type")]
    pub kind: String,
    /// The signed image.
    #[serde(default)]
    pub image: Image,
    /// The name the image was signed under.
    #[serde(default)]
    pub identity: Identity,
}

/// `critical.image`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Image {
    /// `algo:hex` manifest digest, e.g. `sha256:e3f1…`.
    #[serde(default, rename = "docker-manifest-digest")]
    pub docker_manifest_digest: String,
}

/// `critical.identity`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// The pull spec the image was signed under, e.g. `quay.io/openshift-release-dev/ocp-release:4.16.4-x86_64`.
    #[serde(default, rename = "docker-reference")]
    pub docker_reference: String,
}

/// `optional`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Optional {
    /// The signing software.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub creator: String,
    /// Signing time, seconds since the epoch.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timestamp: i64,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

impl AtomicSignature {
    /// A valid document for `digest` signed under `reference` (what a signer writes).
    pub fn new(digest: &str, reference: &str) -> AtomicSignature {
        AtomicSignature {
            critical: Critical {
                kind: ATOMIC_SIGNATURE_TYPE.to_string(),
                image: Image {
                    docker_manifest_digest: digest.to_string(),
                },
                identity: Identity {
                    docker_reference: reference.to_string(),
                },
            },
            optional: Optional::default(),
        }
    }
}

/// Parses `content` and checks that it vouches for `digest`.
///
/// # Errors
/// [`SignatureFailure::InvalidJson`], [`SignatureFailure::WrongType`],
/// [`SignatureFailure::NoIdentity`] or [`SignatureFailure::DigestMismatch`], in that order.
pub fn check_document(content: &[u8], digest: &str) -> Result<AtomicSignature, SignatureFailure> {
    let doc: AtomicSignature =
        serde_json::from_slice(content).map_err(|e| SignatureFailure::InvalidJson(e.to_string()))?;
    if doc.critical.kind != ATOMIC_SIGNATURE_TYPE {
        return Err(SignatureFailure::WrongType(doc.critical.kind));
    }
    if doc.critical.identity.docker_reference.is_empty() {
        return Err(SignatureFailure::NoIdentity);
    }
    if doc.critical.image.docker_manifest_digest != digest {
        return Err(SignatureFailure::DigestMismatch(
            doc.critical.image.docker_manifest_digest,
        ));
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:edd9824f0404f1a139688017e7001370e2f3fbc088b94da84506653b473fe140";

    #[test]
    fn a_valid_document_passes_and_each_rule_has_its_reason() {
        let ok = format!(
            r#"{{"critical":{{"type":"atomic container signature","image":{{"docker-manifest-digest":"{D}"}},"identity":{{"docker-reference":"quay.io/x:1"}}}},"optional":{{"creator":"me","timestamp":1}}}}"#
        );
        let doc = check_document(ok.as_bytes(), D).expect("valid");
        assert_eq!(doc.critical.identity.docker_reference, "quay.io/x:1");
        assert_eq!(
            check_document(ok.as_bytes(), "sha256:00"),
            Err(SignatureFailure::DigestMismatch(D.to_string()))
        );
        let wrong = ok.replace("atomic container signature", "cosign container image signature");
        assert_eq!(
            check_document(wrong.as_bytes(), D),
            Err(SignatureFailure::WrongType(
                "cosign container image signature".to_string()
            ))
        );
        let anon = ok.replace("quay.io/x:1", "");
        assert_eq!(
            check_document(anon.as_bytes(), D),
            Err(SignatureFailure::NoIdentity)
        );
        let extra = ok.replace(r#""creator":"me""#, r#""creator":"me","extra":true"#);
        let err = check_document(extra.as_bytes(), D).expect_err("unknown field");
        assert!(
            err.to_string()
                .starts_with("the signature is not valid JSON: unknown field `extra`"),
            "{err}"
        );
        assert!(matches!(
            check_document(b"not json", D),
            Err(SignatureFailure::InvalidJson(_))
        ));
    }

    #[test]
    fn new_writes_a_document_that_checks() {
        let bytes = serde_json::to_vec(&AtomicSignature::new(D, "r:1")).expect("json");
        assert!(check_document(&bytes, D).is_ok());
    }
}
