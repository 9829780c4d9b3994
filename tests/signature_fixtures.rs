//! Release signature verification on real data: the Red Hat and OpenShift CI signatures, keys
//! and verification ConfigMaps of openshift/library-go and openshift/cluster-update-keys
//! (copied into `tests/fixtures/signatures/`, see its `SOURCES.md`).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use cvo::reconcile::signature::{
    Store, Verifier, VerifierConfig, VerifyError,
    config::{self, find_in_payload},
    configmap::{digest_signatures_config_map, managed_signatures_config_map},
};
use k8s_openapi::api::core::v1::ConfigMap;

const RH_DIGEST: &str = "sha256:e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7";
const CI_DIGEST: &str = "sha256:edd9824f0404f1a139688017e7001370e2f3fbc088b94da84506653b473fe140";
const RH_FPR: &str = "567E347AD0044ADE55BA8A5F199E2F91FD431D51";
const CI_FPR: &str = "D04761B116203B0C0859B61628B76E05B923888E";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/signatures")
}

fn verify_data() -> PathBuf {
    fixtures().join("library-go-verify-testdata")
}

fn signature_store() -> String {
    format!("file://{}", verify_data().join("signatures").display())
}

fn signature_bytes(digest: &str) -> Vec<u8> {
    let dir = digest.replace(':', "=");
    std::fs::read(verify_data().join("signatures").join(dir).join("signature-1")).expect("fixture signature")
}

fn verifier(keys: &[PathBuf], stores: &[String]) -> Verifier {
    Verifier::new(VerifierConfig::from_files(keys, stores).expect("config")).expect("verifier")
}

fn keyring(name: &str) -> PathBuf {
    verify_data().join("keyrings").join(name)
}

fn cm_from_yaml(path: &Path) -> ConfigMap {
    let text = std::fs::read_to_string(path).expect("manifest");
    serde_norway::from_str(&text).expect("ConfigMap")
}

/// A `file://` store in a temporary directory holding `sigs` as `signature-1..` of `digest`.
fn temp_store(digest: &str, sigs: &[&[u8]]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let sub = dir.path().join(digest.replace(':', "="));
    std::fs::create_dir_all(&sub).expect("mkdir");
    for (i, s) in sigs.iter().enumerate() {
        std::fs::write(sub.join(format!("signature-{}", i + 1)), s).expect("write");
    }
    let url = format!("file://{}", dir.path().display());
    (dir, url)
}

#[tokio::test]
async fn the_real_red_hat_signature_verifies_with_the_release_key() {
    // A v3 RSA-4096 signature inside a ZIP-compressed packet.
    let key = fixtures().join("cluster-update-keys/keys/verifier-public-key-redhat-release");
    let v = verifier(&[key], &[signature_store()]);
    let ok = v.verify(RH_DIGEST).await.expect("verifies");
    assert_eq!(ok.digest, RH_DIGEST);
    assert_eq!(ok.by.len(), 1);
    assert_eq!(ok.by[0].keyring, "verifier-public-key-redhat-release");
    assert_eq!(ok.by[0].key, RH_FPR);
    assert_eq!(ok.by[0].identity, "registry.access.redhat.com/rhel7:7.6");
    assert!(
        ok.by[0]
            .source
            .ends_with(&format!("{}/signature-1", RH_DIGEST.replace(':', "="))),
        "{}",
        ok.by[0].source
    );
    assert_eq!(ok.signatures, vec![signature_bytes(RH_DIGEST)]);
    assert!(!ok.cached);
    // A pull spec by digest verifies the same digest (from the cache now).
    let again = v
        .verify(&format!("registry.access.redhat.com/rhel7@{RH_DIGEST}"))
        .await
        .expect("verifies");
    assert!(again.cached);
    assert_eq!(v.signatures().get(RH_DIGEST).map(Vec::len), Some(1));
}

#[tokio::test]
async fn the_real_ci_signature_verifies_with_the_expired_ci_key() {
    // The CI key expired in 2021: key expiry is not checked, as upstream.
    let v = verifier(&[keyring("simple.txt")], &[signature_store()]);
    let ok = v.verify(CI_DIGEST).await.expect("verifies");
    assert_eq!(ok.by[0].key, CI_FPR);
    assert_eq!(
        ok.by[0].identity,
        "registry.svc.ci.openshift.org/ocp/release:4.0.0-0.ci-2019-04-19-181452"
    );
    // One keyring holding both keys verifies both releases.
    let both = verifier(&[keyring("combined.txt")], &[signature_store()]);
    assert_eq!(both.verify(RH_DIGEST).await.expect("rh").by[0].key, RH_FPR);
    assert_eq!(both.verify(CI_DIGEST).await.expect("ci").by[0].key, CI_FPR);
}

fn unverified(e: VerifyError) -> String {
    assert!(matches!(e, VerifyError::Unverified(_)), "{e:?}");
    e.to_string()
}

#[tokio::test]
async fn an_unknown_key_is_rejected_naming_store_key_and_signer() {
    let v = verifier(&[keyring("simple.txt")], &[signature_store()]);
    let msg = unverified(v.verify(RH_DIGEST).await.expect_err("wrong key"));
    assert_eq!(
        msg,
        format!(
            "unable to verify {RH_DIGEST} against keyrings: simple.txt (keys: simple.txt ({CI_FPR} openshift-ci)); stores tried: {}: signature-1: simple.txt: signed by unknown key 199E2F91FD431D51",
            signature_store()
        )
    );
}

#[tokio::test]
async fn every_keyring_must_sign() {
    let v = verifier(
        &[keyring("redhat.txt"), keyring("simple.txt")],
        &[signature_store()],
    );
    let msg = unverified(v.verify(RH_DIGEST).await.expect_err("one keyring missing"));
    assert!(
        msg.starts_with(&format!(
            "unable to verify {RH_DIGEST} against keyrings: simple.txt (keys: redhat.txt ({RH_FPR} Red Hat, Inc. (release key 2) <security@redhat.com>), simple.txt ({CI_FPR} openshift-ci)); "
        )),
        "{msg}"
    );
}

#[tokio::test]
async fn a_changed_digest_is_rejected_with_the_digest_the_signature_names() {
    let other = "sha256:0000000000000000000000000000000000000000000000000000000000000001";
    let (_dir, store) = temp_store(other, &[&signature_bytes(RH_DIGEST)]);
    let v = verifier(&[keyring("redhat.txt")], std::slice::from_ref(&store));
    let msg = unverified(v.verify(other).await.expect_err("digest differs"));
    assert!(
        msg.ends_with(&format!(
            "stores tried: {store}: signature-1: redhat.txt: signature digest does not match (it signs {RH_DIGEST})"
        )),
        "{msg}"
    );
    assert!(msg.contains(RH_FPR), "{msg}");
}

#[tokio::test]
async fn truncated_and_garbage_signatures_are_unreadable_and_the_next_one_is_tried() {
    let good = signature_bytes(CI_DIGEST);
    let truncated = &good[..good.len() / 2];
    let (_dir, store) = temp_store(
        CI_DIGEST,
        &[truncated, b"garbage bytes, not OpenPGP", &good[..40], &good],
    );
    let v = verifier(&[keyring("simple.txt")], std::slice::from_ref(&store));
    let ok = v.verify(CI_DIGEST).await.expect("signature-4 is good");
    assert!(ok.by[0].source.ends_with("signature-4"), "{}", ok.by[0].source);

    let (_dir2, store2) = temp_store(CI_DIGEST, &[truncated, b"garbage bytes, not OpenPGP"]);
    let v = verifier(&[keyring("simple.txt")], std::slice::from_ref(&store2));
    let msg = unverified(v.verify(CI_DIGEST).await.expect_err("no good signature"));
    let tail = msg
        .split_once("stores tried: ")
        .map(|(_, t)| t.to_string())
        .unwrap_or_default();
    assert!(
        tail.starts_with(&format!(
            "{store2}: signature-1: simple.txt: could not read the message: "
        )),
        "{msg}"
    );
    assert!(
        tail.contains(", signature-2: simple.txt: could not read the message: "),
        "{msg}"
    );
}

#[tokio::test]
async fn a_store_without_the_digest_says_no_signatures() {
    let v = verifier(&[keyring("redhat.txt")], &[signature_store()]);
    let digest = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    let msg = unverified(v.verify(digest).await.expect_err("unsigned"));
    assert!(
        msg.ends_with(&format!("stores tried: {}: no signatures", signature_store())),
        "{msg}"
    );
}

#[tokio::test]
async fn digests_are_checked_before_any_store_is_read() {
    let v = verifier(&[keyring("redhat.txt")], &[signature_store()]);
    assert_eq!(
        v.verify("quay.io/openshift/release:4.16").await,
        Err(VerifyError::NoDigest)
    );
    assert_eq!(
        v.verify("sha256").await,
        Err(VerifyError::InvalidDigest("sha256".to_string()))
    );
    assert_eq!(
        v.verify("quay.io/openshift/release@SHA256:abc").await,
        Err(VerifyError::InvalidDigest("SHA256:abc".to_string()))
    );
    assert_eq!(v.verify("").await, Err(VerifyError::NoDigest));
    assert_eq!(
        VerifyError::NoDigest.to_string(),
        "release images that are not accessed via digest cannot be verified"
    );
    assert_eq!(
        Verifier::reject().verify(RH_DIGEST).await,
        Err(VerifyError::NotPossible)
    );
    let keyless = Verifier::new(VerifierConfig {
        keyrings: Vec::new(),
        stores: vec![Store::parse(&signature_store()).expect("store")],
    })
    .expect("verifier");
    assert_eq!(keyless.verify(RH_DIGEST).await, Err(VerifyError::NotConfigured));
}

#[test]
fn the_real_release_verification_config_maps_parse() {
    let okd = cm_from_yaml(
        &fixtures().join("cluster-update-keys/manifests/0000_90_cluster-update-keys_configmap.yaml"),
    );
    let c = VerifierConfig::from_config_map(&okd).expect("valid");
    let names: Vec<&str> = c.keyrings.iter().map(|k| k.name()).collect();
    assert_eq!(names, ["verifier-public-key-ci"]);
    let stores: Vec<String> = c.stores.iter().map(ToString::to_string).collect();
    let ci_store =
        std::fs::read_to_string(fixtures().join("cluster-update-keys/stores/store-openshift-ci-release"))
            .expect("store file");
    assert_eq!(stores, [ci_store.trim()]);

    let ocp = cm_from_yaml(
        &fixtures().join("cluster-update-keys/manifests.rhel/0000_90_cluster-update-keys_configmap.yaml"),
    );
    let c = VerifierConfig::from_config_map(&ocp).expect("valid");
    assert_eq!(c.keyrings.len(), 1);
    assert_eq!(c.keyrings[0].name(), "verifier-public-key-redhat");
    // The OCP keyring holds the release key and the beta key.
    assert_eq!(
        c.keyrings[0].fingerprints(),
        [RH_FPR, "B08B659EE86AF623BC90E8DB938A80CAF21541EB"]
    );
    let stores: Vec<String> = c.stores.iter().map(ToString::to_string).collect();
    assert_eq!(
        stores,
        [
            "https://storage.googleapis.com/openshift-release/official/signatures/openshift/release",
            "https://mirror.openshift.com/pub/openshift-v4/signatures/openshift/release",
        ]
    );
}

#[test]
fn library_go_config_map_variants_give_upstreams_errors() {
    let dir = verify_data().join("manifests");
    let load = |f: &str| VerifierConfig::from_config_map(&cm_from_yaml(&dir.join(f)));
    let src = "the config map openshift-config-managed/release-verification";
    assert_eq!(
        load("requires-stores.yaml").expect_err("no stores").to_string(),
        format!("{src} did not provide any signature stores to read from and cannot be used")
    );
    // Its `data` is nested under `metadata` by mistake, so the stores are missing first, as
    // upstream's check order says.
    assert_eq!(
        load("requires-verifiers.yaml").expect_err("no keys").to_string(),
        format!("{src} did not provide any signature stores to read from and cannot be used")
    );
    let stores_only = BTreeMap::from([("store-x".to_string(), "https://example.com".to_string())]);
    assert_eq!(
        VerifierConfig::from_data(src, &stores_only)
            .expect_err("no keys")
            .to_string(),
        format!("{src} did not provide any GPG public keys to verify signatures from and cannot be used")
    );
    assert_eq!(
        load("requires-data.yaml").expect_err("no data").to_string(),
        format!("{src} did not provide any signature stores to read from and cannot be used")
    );
    let valid = load("loads-valid.yaml").expect("valid");
    assert_eq!(valid.keyrings[0].fingerprints(), [RH_FPR]);
    assert_eq!(
        valid.stores[0].to_string(),
        "file://../verify/testdata/signatures"
    );
    let bad = BTreeMap::from([
        ("verifier-public-key-x".to_string(), "not a key".to_string()),
        ("store-x".to_string(), "https://example.com".to_string()),
    ]);
    let err = VerifierConfig::from_data("cm", &bad).expect_err("bad key");
    assert!(
        err.to_string()
            .starts_with("cm has an invalid key \"verifier-public-key-x\" that must be a GPG public key: "),
        "{err}"
    );
    let bad = BTreeMap::from([("store-x".to_string(), "ftp://example.com".to_string())]);
    assert_eq!(
        VerifierConfig::from_data("cm", &bad)
            .expect_err("bad store")
            .to_string(),
        "cm has an invalid key \"store-x\": must be a valid URL with scheme file://, http://, or https://"
    );
}

#[test]
fn the_first_annotated_config_map_of_a_payload_is_the_verification_config() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rm = dir.path().join("release-manifests");
    std::fs::create_dir_all(&rm).expect("mkdir");
    assert!(find_in_payload(dir.path()).expect("listable").is_none());
    for f in [
        "0000_90_cluster-update-keys_configmap.yaml",
        "0000_90_openshift-cluster-image-policy.yaml",
    ] {
        std::fs::copy(
            fixtures().join("cluster-update-keys/manifests.rhel").join(f),
            rm.join(f),
        )
        .expect("copy");
    }
    std::fs::copy(
        verify_data().join("manifests/only-first-used.yaml"),
        rm.join("0000_91_later.yaml"),
    )
    .expect("copy");
    let cm = find_in_payload(dir.path()).expect("parses").expect("found");
    assert_eq!(cm.metadata.name.as_deref(), Some("release-verification"));
    assert!(
        cm.data
            .as_ref()
            .expect("data")
            .contains_key("store-openshift-official-release-mirror")
    );
    assert_eq!(
        config::VERIFICATION_CONFIG_MAP_ANNOTATION,
        "release.openshift.io/verification-config-map"
    );
}

#[tokio::test]
async fn signature_config_maps_are_read_first_and_end_the_search() {
    // The real OCP ConfigMap names internet stores; a signature ConfigMap in the cluster
    // satisfies the key first, so none of them is contacted.
    let ocp = cm_from_yaml(
        &fixtures().join("cluster-update-keys/manifests.rhel/0000_90_cluster-update-keys_configmap.yaml"),
    );
    let sig_cm = digest_signatures_config_map(RH_DIGEST, &[signature_bytes(RH_DIGEST)]).expect("config map");
    let v = Verifier::from_cluster(Some(&ocp), None, |_| None, vec![sig_cm]).expect("verifier");
    let ok = v.verify(RH_DIGEST).await.expect("verifies from the config map");
    assert_eq!(
        ok.by[0].source,
        format!(
            "config map openshift-config-managed/{0} key {0}-1",
            RH_DIGEST.replace(':', "-")
        )
    );
    assert_eq!(ok.by[0].keyring, "verifier-public-key-redhat");
    // What the CVO saves: the verified signatures, by digest.
    let saved = managed_signatures_config_map(&v.signatures()).expect("config map");
    assert_eq!(saved.metadata.name.as_deref(), Some("signatures-managed"));
    let key = format!("{}-0", RH_DIGEST.replace(':', "-"));
    assert_eq!(
        saved.binary_data.as_ref().expect("data")[&key].0,
        signature_bytes(RH_DIGEST)
    );
    // And a verifier reading only that saved ConfigMap verifies too.
    let v2 = Verifier::from_cluster(Some(&ocp), Some(&[]), |_| None, vec![saved]).expect("verifier");
    assert!(v2.verify(RH_DIGEST).await.is_ok());
    // No verification ConfigMap in the payload: every update is rejected.
    let none = Verifier::from_cluster(None, None, |_| None, Vec::new()).expect("reject");
    assert_eq!(
        none.verify(RH_DIGEST).await.expect_err("rejected").to_string(),
        "verification is not possible"
    );
}
