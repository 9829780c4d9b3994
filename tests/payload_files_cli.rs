//! Local payload files cannot hang or escape `cvo`: a payload directory holding a FIFO, a
//! symbolic link out of it, a pathologically nested manifest or an oversized one is refused in
//! seconds with one line naming the file (`cvo payload inspect`, and `--payload DIR` of
//! `cvo operator start` before it reaches a cluster). Every run has a deadline, so a regression
//! that blocks fails the test instead of hanging the suite.

mod common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

const NOT_REGULAR: &str = "a release payload holds only regular files and directories";

/// Runs `cvo` offline; kills it and fails if it has not exited within 10 s.
fn cvo_within_10s(args: &[&str]) -> (i32, String, String) {
    let mut child = common::cvo()
        .args(args)
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cvo runs");
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("cvo {args:?} did not exit within 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A release image root with one ConfigMap: (temp dir, payload root).
fn release_root() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("payload");
    let rm = root.join("release-manifests");
    std::fs::create_dir_all(root.join("manifests")).expect("manifests/");
    std::fs::create_dir_all(&rm).expect("release-manifests/");
    for (name, text) in [
        (
            "release-metadata",
            r#"{"kind":"cincinnati-metadata-v0","version":"4.16.3"}"#,
        ),
        (
            "image-references",
            "kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata: {name: 4.16.3}\n",
        ),
        (
            "0000_10_a_cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n}\n",
        ),
    ] {
        std::fs::write(rm.join(name), text).expect("write");
    }
    (tmp, root)
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

/// `cvo payload inspect ROOT` exits 1 with exactly `expected` on stderr.
fn inspect_refuses(root: &Path, expected: &str) {
    let r = root.to_str().expect("utf-8");
    let (code, out, err) = cvo_within_10s(&["payload", "inspect", r]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (1, "", format!("{expected}\n").as_str())
    );
}

#[test]
fn the_test_payload_is_inspected() {
    let (_tmp, root) = release_root();
    let (code, out, err) = cvo_within_10s(&["payload", "inspect", root.to_str().expect("utf-8")]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert!(out.contains("0000_10_a_cm.yaml"), "{out}");
}

#[test]
fn a_fifo_manifest_is_refused_without_blocking() {
    let (_tmp, root) = release_root();
    mkfifo(&root.join("release-manifests/0000_20_b_fifo.yaml"));
    inspect_refuses(
        &root,
        &format!(
            "cvo: {}: release-manifests/0000_20_b_fifo.yaml#0: is a FIFO; {NOT_REGULAR}",
            root.display()
        ),
    );
}

#[test]
fn a_fifo_release_metadata_is_refused_by_inspect_and_by_payload_flags() {
    let (tmp, root) = release_root();
    let md = root.join("release-manifests/release-metadata");
    std::fs::remove_file(&md).expect("rm");
    mkfifo(&md);
    inspect_refuses(&root, &format!("cvo: {}: is a FIFO; {NOT_REGULAR}", md.display()));
    let r = root.to_str().expect("utf-8");
    let kc = tmp.path().join("no-kubeconfig");
    let (code, _, err) = cvo_within_10s(&[
        "operator",
        "start",
        "--kubeconfig",
        kc.to_str().expect("utf-8"),
        "--listen",
        "127.0.0.1:0",
        "--payload",
        r,
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err.lines().last().unwrap_or(""),
        format!("cvo: --payload {r}: release-manifests/release-metadata is a FIFO; {NOT_REGULAR}")
    );
}

#[test]
fn a_symbolic_link_out_of_the_payload_is_refused() {
    let (tmp, root) = release_root();
    let outside = tmp.path().join("outside.yaml");
    std::fs::write(
        &outside,
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\n",
    )
    .expect("write");
    std::os::unix::fs::symlink(&outside, root.join("release-manifests/0000_30_c_link.yaml"))
        .expect("symlink");
    inspect_refuses(
        &root,
        &format!(
            "cvo: {}: release-manifests/0000_30_c_link.yaml#0: is a symbolic link to {}, outside the \
             payload {}",
            root.display(),
            outside.canonicalize().expect("canonical").display(),
            root.canonicalize().expect("canonical").display()
        ),
    );
}

#[test]
fn a_deeply_nested_manifest_is_refused_quickly() {
    let (_tmp, root) = release_root();
    std::fs::write(
        root.join("release-manifests/0000_40_d_deep.yaml"),
        format!(
            "kind: ConfigMap\nmetadata: {{name: d}}\ndata: {}",
            "[".repeat(200_000)
        ),
    )
    .expect("write");
    let start = Instant::now();
    inspect_refuses(
        &root,
        &format!(
            "cvo: {}: release-manifests/0000_40_d_deep.yaml#0: invalid YAML: flow collections ([ and {{) \
             nested more than 128 deep at line 3",
            root.display()
        ),
    );
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
}

#[test]
fn an_oversized_manifest_names_the_file_and_the_limit() {
    let (_tmp, root) = release_root();
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: n}\n");
    text.push_str(&"#".repeat(16 << 20));
    std::fs::write(root.join("release-manifests/0000_50_e_big.yaml"), &text).expect("write");
    inspect_refuses(
        &root,
        &format!(
            "cvo: {}: release-manifests/0000_50_e_big.yaml#0: is {} bytes, over the 16777216-byte (16 MiB) \
             limit for one payload file",
            root.display(),
            text.len()
        ),
    );
}
