//! `cvo payload verify`: exit codes and output on the real Red Hat signature (file store).

mod common;
use std::path::PathBuf;

const RH_DIGEST: &str = "sha256:e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/signatures")
}

fn store() -> String {
    format!(
        "file://{}",
        fixtures().join("library-go-verify-testdata/signatures").display()
    )
}

fn key(name: &str) -> String {
    fixtures()
        .join("cluster-update-keys/keys")
        .join(name)
        .display()
        .to_string()
}

/// The one runner of the tests (`common::cvo_offline`): no KUBECONFIG, logging off.
fn cvo(args: &[&str]) -> (i32, String, String) {
    common::cvo_offline(args)
}

#[test]
fn a_signed_release_verifies_and_says_by_which_key_and_signature() {
    let spec = format!("registry.access.redhat.com/rhel7@{RH_DIGEST}");
    let (code, out, err) = cvo(&[
        "payload",
        "verify",
        &spec,
        "--keys",
        &key("verifier-public-key-redhat-release"),
        "--store",
        &store(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out,
        format!(
            "verified {RH_DIGEST}\n  verifier-public-key-redhat-release: key 567E347AD0044ADE55BA8A5F199E2F91FD431D51 signed registry.access.redhat.com/rhel7:7.6 ({}/sha256=e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7/signature-1)\n",
            store()
        )
    );
}

/// `--lang ru` (or a Russian locale): the same lines worded in Russian; the digest, keyring,
/// key, identity and signature source as they are.
#[test]
fn a_verified_release_in_russian() {
    let spec = format!("registry.access.redhat.com/rhel7@{RH_DIGEST}");
    let (code, out, err) = cvo(&[
        "--lang",
        "ru",
        "payload",
        "verify",
        &spec,
        "--keys",
        &key("verifier-public-key-redhat-release"),
        "--store",
        &store(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out,
        format!(
            "подпись проверена: {RH_DIGEST}\n  verifier-public-key-redhat-release: ключ 567E347AD0044ADE55BA8A5F199E2F91FD431D51 подписал registry.access.redhat.com/rhel7:7.6 ({}/sha256=e3f12513a4b22a2d7c0e7c9207f52128113758d9d68c7d06b11a0ac7672966f7/signature-1)\n",
            store()
        )
    );
    let (code, out, _) = cvo(&[
        "--lang",
        "ru",
        "payload",
        "verify",
        RH_DIGEST,
        "--keys",
        &key("verifier-public-key-openshift-ci-4"),
        "--store",
        &store(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("подпись не проверена: "), "{out}");
}

#[test]
fn an_unverified_release_exits_1_naming_store_and_keys() {
    let (code, out, err) = cvo(&[
        "payload",
        "verify",
        RH_DIGEST,
        "--keys",
        &key("verifier-public-key-redhat-release"),
        "--keys",
        &key("verifier-public-key-openshift-ci-4"),
        "--store",
        &store(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with(&format!(
            "not verified: unable to verify {RH_DIGEST} against keyrings: verifier-public-key-openshift-ci-4 (keys: verifier-public-key-openshift-ci-4 (6A9588F07F2D3AE7973AD2A9193E53CCD2E2F7A4 "
        )),
        "{out}"
    );
    assert!(
        out.ends_with(&format!(
            "stores tried: {}: signature-1: verifier-public-key-openshift-ci-4: signed by unknown key 199E2F91FD431D51\n",
            store()
        )),
        "{out}"
    );
}

#[test]
fn bad_invocations_are_usage_errors() {
    let (code, _, err) = cvo(&["payload", "verify", RH_DIGEST]);
    assert_eq!(code, 2);
    assert_eq!(err, "cvo: give --keys FILE and --store URL, or --from-cluster\n");
    let (code, _, err) = cvo(&[
        "payload",
        "verify",
        "quay.io/openshift/release:4.16",
        "--keys",
        &key("verifier-public-key-redhat-release"),
        "--store",
        &store(),
    ]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "cvo: quay.io/openshift/release:4.16: release images that are not accessed via digest cannot be verified\n"
    );
    let (code, _, err) = cvo(&[
        "payload",
        "verify",
        RH_DIGEST,
        "--keys",
        "/nonexistent/key",
        "--store",
        &store(),
    ]);
    assert_eq!(code, 1);
    assert!(err.starts_with("cvo: /nonexistent/key: "), "{err}");
    let (code, _, err) = cvo(&[
        "payload",
        "verify",
        RH_DIGEST,
        "--keys",
        &key("verifier-public-key-redhat-release"),
        "--store",
        "ftp://example.com",
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "cvo: store \"ftp://example.com\": must be a valid URL with scheme file://, http://, or https://\n"
    );
}
