//! Release signature verification: is a release image digest signed, as an "atomic container
//! signature", by every configured key?
//!
//! - [`openpgp`]: keyrings and the OpenPGP check of one signed message (the `pgp` crate).
//! - [`atomic`]: the signed JSON document and its rules (type, identity, digest).
//! - [`config`]: keys and stores from the `release-verification` ConfigMap,
//!   `spec.signatureStores`, or files.
//! - [`store`]: reading `signature-N` from HTTP(S) and `file://` stores, bounded in count,
//!   size and time.
//! - [`configmap`]: signatures in ConfigMaps (read), and the ConfigMaps the CVO saves them in
//!   (built here, written by the engine).
//! - [`sign`]: a signing key and signed releases (the demo's own signatures, tests).
//! - [`verifier`]: [`Verifier`], the lookup order across stores, [`Verified`] and
//!   [`VerifyError`].
//! - [`cluster`]: [`ClusterVerifier`], the engine's verifier on a cluster (keys from the own
//!   payload, stores from the ClusterVersion, signatures saved in active-apply).
//!
//! Upstream: `pkg/verify` of openshift/library-go, `pkg/cvo/cvo.go`,
//! `pkg/cvo/updatepayload.go` and `pkg/customsignaturestore` of
//! openshift/cluster-version-operator.

pub mod atomic;
pub mod cluster;
pub mod config;
pub mod configmap;
pub mod openpgp;
pub mod sign;
pub mod store;
pub mod verifier;

pub use cluster::ClusterVerifier;
pub use config::{ConfigError, Store, StoreLocation, VerifierConfig};
pub use openpgp::{Keyring, SignatureFailure};
pub use verifier::{Attempt, Outcome, Unverified, Verified, VerifiedBy, Verifier, VerifyError};
