//! `cvo reconcile --dry-run` never prints a Secret's values (text and `-o json`): they are
//! masked as `kubectl diff` masks them; and a payload directory without manifests is an error
//! naming the directory and what was expected. The cluster is a `cvo sim serve` child process.

mod common;

use std::{
    path::{Path, PathBuf},
    process::{Child, Stdio},
    time::Duration,
};

use serde_json::json;

struct Server {
    child: Child,
    kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let (child, _) = common::spawn_sim_serve(&kubeconfig, &[], Stdio::null(), Duration::from_secs(10));
    Server {
        child,
        kubeconfig,
        _dir: dir,
    }
}

/// A release image directory holding `files` (name, YAML) in `release-manifests/`.
fn payload(dir: &Path, files: &[(&str, String)]) {
    common::PayloadDir::new(dir, "1.0.0").files(files);
}

use common::ANN;

use common::cvo_offline as cvo;

#[test]
fn dry_run_masks_secret_values_in_text_and_json() {
    let server = start();
    // The live Secret: the payload changes one value and keeps the other.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let conn = cvo::cluster::live::connect(Some(&server.kubeconfig), None)
            .await
            .expect("connect");
        let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(conn.client.clone());
        ns.create(
            &kube::api::PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "openshift-secrets"}})).expect("ns"),
        )
        .await
        .expect("create namespace");
        let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
            kube::Api::namespaced(conn.client, "openshift-secrets");
        api.create(
            &kube::api::PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": {"name": "creds", "namespace": "openshift-secrets"},
                "data": {"password": "b2xkLXBhc3N3b3Jk", "user": "YWRtaW4="}}),
            )
            .expect("secret"),
        )
        .await
        .expect("create secret");
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    payload(
        tmp.path(),
        &[
            (
                "0000_00_ns.yaml",
                format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-secrets\n{ANN}"),
            ),
            (
                "0000_10_creds.yaml",
                format!(
                    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: openshift-secrets\n{ANN}\
                     data:\n  password: bmV3LXBhc3N3b3Jk\n  user: YWRtaW4=\n"
                ),
            ),
            (
                "0000_20_token.yaml",
                format!(
                    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n  namespace: openshift-secrets\n{ANN}\
                     stringData:\n  token: plain-text-token\n"
                ),
            ),
        ],
    );
    let p = tmp.path().to_str().expect("utf-8");
    let kc = server.kubeconfig.to_str().expect("utf-8");
    let secrets = [
        "b2xkLXBhc3N3b3Jk",
        "bmV3LXBhc3N3b3Jk",
        "YWRtaW4=",
        "plain-text-token",
    ];

    let (code, out, err) = cvo(&["reconcile", "--dry-run", "--payload", p, "--kubeconfig", kc]);
    assert_eq!(code, 0, "{out}{err}");
    for s in secrets {
        assert!(!out.contains(s) && !err.contains(s), "{s} printed:\n{out}{err}");
    }
    assert!(
        out.contains("-.data.password: \"*** (before)\"\n+.data.password: \"*** (after)\"\n"),
        "{out}"
    );
    assert!(out.contains("+  token: '***'\n"), "{out}");

    let (code, out, err) = cvo(&[
        "reconcile",
        "--dry-run",
        "-o",
        "json",
        "--payload",
        p,
        "--kubeconfig",
        kc,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    for s in secrets {
        assert!(!out.contains(s) && !err.contains(s), "{s} printed:\n{out}{err}");
    }
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let drift = v["drift"].as_array().expect("drift");
    let creds = drift.iter().find(|d| d["name"] == "creds").expect("creds drift");
    assert_eq!(
        creds["drift"]["diff"][0],
        json!({"path": ".data.password", "from": "*** (before)", "to": "*** (after)"}),
        "{out}"
    );
}

#[test]
fn a_payload_without_manifests_is_an_error_naming_the_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    payload(tmp.path(), &[]);
    let p = tmp.path().to_str().expect("utf-8");
    let (code, out, err) = cvo(&["payload", "inspect", p]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        err,
        format!(
            "cvo: {p}: no manifests in manifests/ or release-manifests/; expected *.yaml, *.yml or \
             *.json manifest files beside release-metadata and image-references\n"
        )
    );
    let empty = tempfile::tempdir().expect("tempdir");
    let e = empty.path().to_str().expect("utf-8");
    let (code, _, err) = cvo(&["payload", "inspect", e]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with(&format!("cvo: {e}: no manifests; expected a release image root")),
        "{err}"
    );

    let server = start();
    let kc = server.kubeconfig.to_str().expect("utf-8");
    let (code, out, err) = cvo(&["reconcile", "--once", "--payload", p, "--kubeconfig", kc]);
    assert_eq!(code, 5, "{out}{err}");
    assert!(out.contains("outcome: payload-error\n"), "{out}");
    assert!(
        err.contains(&format!("{p}: no manifests in manifests/ or release-manifests/")),
        "{err}"
    );
}

/// `cvo reconcile --payload DIR` on a directory that is not a release image root (empty, a
/// plain manifest tree, a `release-manifests/` directory on its own) is one line naming the
/// directory and what was expected, exit 5, before the cluster is reached: no summary, no
/// Lease taken and no ReleaseAccepted=False written over the cluster.
#[test]
fn reconcile_on_a_directory_that_is_not_a_release_root_says_what_was_expected() {
    let server = start();
    let kc = server.kubeconfig.to_str().expect("utf-8");
    let expected = "expected a release image root: manifests/ and release-manifests/ (with \
                    release-metadata and image-references) holding *.yaml, *.yml or *.json manifests";

    let empty = tempfile::tempdir().expect("tempdir");
    let e = empty.path().to_str().expect("utf-8");
    for mode in ["--once", "--dry-run"] {
        let (code, out, err) = cvo(&["reconcile", mode, "--payload", e, "--kubeconfig", kc]);
        assert_eq!(code, 5, "{out}{err}");
        assert_eq!(out, "", "nothing ran");
        assert_eq!(
            err,
            format!("cvo: --payload {e}: no manifests/, no release-manifests/; {expected}\n")
        );
    }

    let tree = tempfile::tempdir().expect("tempdir");
    payload(tree.path(), &[]);
    let rm = tree.path().join("release-manifests");
    let r = rm.to_str().expect("utf-8");
    let (code, out, err) = cvo(&["reconcile", "--payload", r, "--kubeconfig", kc]);
    assert_eq!(code, 5, "{out}{err}");
    assert_eq!(out, "");
    assert_eq!(
        err,
        format!(
            "cvo: --payload {r}: a release-manifests/ directory, not a release image root; {expected} \
             (its parent, if that holds manifests/ too)\n"
        )
    );
    std::fs::remove_file(rm.join("image-references")).expect("rm");
    let t = tree.path().to_str().expect("utf-8");
    let (code, _, err) = cvo(&["reconcile", "--payload", t, "--kubeconfig", kc]);
    assert_eq!(code, 5);
    assert_eq!(
        err,
        format!("cvo: --payload {t}: no release-manifests/image-references; {expected}\n")
    );

    // Nothing was written: the cluster still has no ClusterVersion.
    let (code, out, err) = cvo(&["get", "clusterversion", "--kubeconfig", kc]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(err.contains("not found"), "{err}");
}
