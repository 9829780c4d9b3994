//! `--payload DIR` of `cvo tui` and `cvo operator start` is checked before anything else (the
//! terminal, the kubeconfig, the cluster): a directory that is not a release image root is one
//! line naming it and what was expected, exit 1. Before, the dashboard came up without its
//! engine and said why only in its log file.

mod common;

use common::cvo_offline as cvo;

const EXPECTED: &str = "expected a release image root: manifests/ and release-manifests/ (with \
                        release-metadata and image-references) holding *.yaml, *.yml or *.json manifests";

#[test]
fn tui_and_operator_refuse_a_payload_directory_that_is_not_a_release_root() {
    let empty = tempfile::tempdir().expect("tempdir");
    let e = empty.path().to_str().expect("utf-8");
    // A kubeconfig that does not exist: the payload is refused before it is read.
    let kc = empty.path().join("no-kubeconfig");
    let kc = kc.to_str().expect("utf-8");
    for cmd in [
        &["tui", "--kubeconfig", kc, "--payload", e][..],
        &[
            "operator",
            "start",
            "--kubeconfig",
            kc,
            "--listen",
            "127.0.0.1:0",
            "--payload",
            e,
        ][..],
    ] {
        let (code, out, err) = cvo(cmd);
        assert_eq!(code, 1, "{cmd:?}: {out}{err}");
        assert_eq!(
            err.lines().last().unwrap_or(""),
            format!("cvo: --payload {e}: no manifests/, no release-manifests/; {EXPECTED}"),
            "{cmd:?}"
        );
    }
    let missing = empty.path().join("absent");
    let m = missing.to_str().expect("utf-8");
    let (code, _, err) = cvo(&["tui", "--kubeconfig", kc, "--payload", m]);
    assert_eq!(code, 1);
    assert_eq!(err, format!("cvo: --payload {m}: not a directory\n"));
}
