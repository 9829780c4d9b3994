//! `cvo status` names an update that oc's rules call fine: a requested release the cluster
//! refused (ReleaseAccepted=False) and an operand the cluster-version operator still waits on.
//! oc's own lines stay as oc prints them; cvo's insight is added to `= Update Health =`.

use std::process::Command;

fn status(fixture: &str, extra: &[&str]) -> (i32, String, String) {
    let path = format!(
        "{}/tests/fixtures/snapshots/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cvo"))
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
