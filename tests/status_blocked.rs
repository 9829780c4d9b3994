//! `cvo status` names an update that oc's rules call fine: a requested release the cluster
//! refused (ReleaseAccepted=False), an operand the cluster-version operator still waits on (the
//! control plane stays in progress), a target known only by its image, and a request no
//! cluster-version operator has picked up.
//! oc's own lines stay as oc prints them, except that an update is never called complete (or
//! estimated) while its target is not loaded or the CVO still waits; cvo's insight is added to
//! `= Update Health =`.

mod common;

fn status(fixture: &str, extra: &[&str]) -> (i32, String, String) {
    let path = format!(
        "{}/tests/fixtures/snapshots/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = common::cvo()
        .args(["status", "--from", &path])
        .args(extra)
        .output()
        .expect("run cvo");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_refused_release_is_named_under_update_health() {
    let (code, out, err) = status("release-not-accepted.yaml", &["--now", "2024-06-02T09:05:00Z"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        include_str!("fixtures/snapshots/release-not-accepted.status.txt")
    );
}

#[test]
fn an_operand_the_cvo_waits_on_is_named_under_update_health() {
    let (code, out, err) = status("operand-not-reported.yaml", &["--now", "2024-06-02T09:50:00Z"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        include_str!("fixtures/snapshots/operand-not-reported.status.txt")
    );
}

#[test]
fn status_yaml_is_the_json_document_as_yaml() {
    let (code, yaml, err) = status("release-not-accepted.yaml", &["-o", "yaml"]);
    assert_eq!(code, 0, "{err}");
    let (_, json, _) = status("release-not-accepted.yaml", &["-o", "json"]);
    let from_yaml: serde_json::Value = serde_norway::from_str(&yaml).expect("YAML parses");
    let from_json: serde_json::Value = serde_json::from_str(&json).expect("JSON parses");
    assert_eq!(from_yaml, from_json);
    assert_eq!(from_yaml["updating"], false);
    assert!(
        from_yaml["health"]["insights"][0]["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with("requested update to 4.16.4 not accepted: RetrievePayload: ")),
        "{yaml}"
    );
}

/// An update requested by image whose release is not loaded yet: the image is the target
/// (never a blank), the assessment is in progress (not "successfully completed"), no estimate
/// and no "proceeding well"; the insight says the version is not known yet (issue 29).
#[test]
fn an_image_only_target_is_named_by_its_image_without_an_estimate() {
    let (code, out, err) = status("image-only-target.yaml", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        include_str!("fixtures/snapshots/image-only-target.status.txt")
    );
    let image =
        "quay.io/example/release@sha256:4444444444444444444444444444444444444444444444444444444444444444";
    assert!(
        out.contains(&format!("Target Version:  {image} (from 4.16.3)\n")),
        "{out}"
    );
    assert!(
        !out.contains("proceeding well") && !out.contains("successfully completed"),
        "{out}"
    );
    let (_, json, _) = status("image-only-target.yaml", &["-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON parses");
    assert_eq!(v["controlPlane"]["targetVersion"], image);
    assert_eq!(v["controlPlane"]["targetVersionUnknown"], true);
    assert_eq!(v["controlPlane"]["assessment"], "Progressing");
    assert_eq!(v["controlPlane"]["estimate"]["kind"], "None");
    assert_eq!(
        v["health"]["insights"][0]["summary"],
        format!("waiting for release {image} to be loaded: its version is not known yet")
    );
}

/// A desiredUpdate no cluster-version operator has read (generation 3, observedGeneration 2):
/// `cvo status` names it under Update Health and `cvo upgrade` in one info line, oc's text
/// otherwise unchanged (issue 29).
#[test]
fn a_request_no_cvo_picked_up_is_shown_by_status_and_upgrade() {
    let (code, out, err) = status("desired-not-picked-up.yaml", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        include_str!("fixtures/snapshots/desired-not-picked-up.status.txt")
    );
    assert!(
        out.starts_with("The cluster is not updating.\n")
            && out.contains(
                "-       Warning   Update Stalled   requested update to 4.16.4 not picked up by a cluster-version operator\n"
            ),
        "{out}"
    );
    let path = format!(
        "{}/tests/fixtures/snapshots/desired-not-picked-up.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = common::cvo()
        .args(["upgrade", "--from", &path])
        .output()
        .expect("run cvo");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Cluster version is 4.16.3\n\n\
         info: The update to 4.16.4 requested in spec.desiredUpdate has not been picked up by a cluster-version operator yet (the ClusterVersion is at generation 3, its status at 2).\n\n\
         Upstream is unset, so the cluster will use an appropriate default.\n\
         Channel: stable-4.16\n\
         No updates available. You may still upgrade to a specific release image with --to-image or wait for new updates to be available.\n"
    );
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
}
