//! Making release signatures: an OpenPGP signing key and the signed "atomic container
//! signature" document for a release image digest, in the form [`super::Verifier`] checks.
//! For the demo (`cvo demo --registry`: a key generated at each start, kept in memory only)
//! and tests; a real cluster's releases are signed by their publisher.
//!
//! The key is Ed25519 (`KeyType::Ed25519Legacy`, what `gpg --quick-gen-key` makes as
//! `ed25519`): generating one takes well under a millisecond even in a debug build, where an
//! RSA key takes seconds.
//!
//! Upstream: the signature format is `docs/containers-signature.5.md` of
//! containers/image ("atomic container signature"); `pkg/verify` of openshift/library-go
//! checks it.

use pgp::{
    composed::{KeyType, MessageBuilder, SecretKeyParamsBuilder, SignedSecretKey},
    crypto::hash::HashAlgorithm,
    types::Password,
};

/// A new Ed25519 signing key with the user id `user_id` (e.g. `cvo demo <demo@localhost>`).
///
/// # Errors
/// The key parameters or the generation fail (the `pgp` crate's message).
pub fn generate_signing_key(user_id: &str) -> Result<SignedSecretKey, String> {
    SecretKeyParamsBuilder::default()
        .key_type(KeyType::Ed25519Legacy)
        .can_certify(true)
        .can_sign(true)
        .primary_user_id(user_id.into())
        .build()
        .map_err(|e| format!("signing key parameters: {e}"))?
        .generate(rand::thread_rng())
        .map_err(|e| format!("generating the signing key: {e}"))
}

/// The ASCII-armored public key of `key`, as a `verifier-public-key-*` entry of the
/// `release-verification` ConfigMap holds it.
///
/// # Errors
/// Armoring fails (the `pgp` crate's message).
pub fn armored_public_key(key: &SignedSecretKey) -> Result<String, String> {
    key.to_public_key()
        .to_armored_string(Default::default())
        .map_err(|e| format!("armoring the public key: {e}"))
}

/// The signed atomic container signature of the image `reference@digest` (`reference`
/// without tag or digest, e.g. `127.0.0.1:5000/openshift-release-dev/ocp-release`; `digest`
/// `sha256:<hex>`), signed by `key` with SHA-256, as the binary OpenPGP message stores and
/// signature ConfigMaps hold. `creator` goes into `optional.creator`.
///
/// # Errors
/// Signing fails (the `pgp` crate's message).
pub fn atomic_signature(
    key: &SignedSecretKey,
    reference: &str,
    digest: &str,
    creator: &str,
) -> Result<Vec<u8>, String> {
    let doc = serde_json::json!({
        "critical": {
            "type": "atomic container signature",
            "image": {"docker-manifest-digest": digest},
            "identity": {"docker-reference": reference}
        },
        "optional": {"creator": creator}
    });
    let mut b = MessageBuilder::from_bytes("", doc.to_string().into_bytes());
    b.sign(&key.primary_key, Password::empty(), HashAlgorithm::Sha256);
    b.to_vec(rand::thread_rng())
        .map_err(|e| format!("signing {reference}@{digest}: {e}"))
}

/// A release-verification ConfigMap (`openshift-config-managed/release-verification`, as a
/// payload's `release-manifests/` carries it) naming one public key and one signature store:
/// `data` is `{key_name: armored, store_name: store_url}`, annotated as upstream's
/// `manifests.rhel/0000_90_cluster-update-keys_configmap.yaml` (openshift/cluster-update-keys) is (the key names
/// start with `verifier-public-key-`, the store names with `store-`; see
/// [`super::config::VerifierConfig`]).
pub fn verification_config_map(
    key_name: &str,
    armored: &str,
    store_name: &str,
    store_url: &str,
) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "release-verification",
            "namespace": "openshift-config-managed",
            "annotations": {
                "release.openshift.io/verification-config-map": "",
                "include.release.openshift.io/self-managed-high-availability": "true"
            }
        },
        "data": {key_name: armored, store_name: store_url}
    })
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;
    use crate::reconcile::signature::openpgp::{Keyring, check_message};

    #[test]
    fn a_generated_key_signs_what_the_verifier_accepts() {
        let key = generate_signing_key("test <test@localhost>").expect("key");
        let armored = armored_public_key(&key).expect("armor");
        assert!(
            armored.starts_with("-----BEGIN PGP PUBLIC KEY BLOCK-----"),
            "{armored}"
        );
        let digest = format!("sha256:{}", "ab".repeat(32));
        let sig = atomic_signature(&key, "127.0.0.1:5000/ocp/release", &digest, "test").expect("sign");
        let keyring = Keyring::parse("test", armored.as_bytes()).expect("keyring");
        let got = check_message(&sig, &keyring, SystemTime::now()).expect("verifies");
        let v: serde_json::Value = serde_json::from_slice(&got.content).expect("json");
        assert_eq!(v["critical"]["image"]["docker-manifest-digest"], digest);
        assert_eq!(v["critical"]["type"], "atomic container signature");
        // Another key does not verify it.
        let other = generate_signing_key("other <o@localhost>").expect("key");
        let other =
            Keyring::parse("other", armored_public_key(&other).expect("armor").as_bytes()).expect("keyring");
        assert!(check_message(&sig, &other, SystemTime::now()).is_err());
    }
}
