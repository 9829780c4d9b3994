//! `cvo get` run as a user runs it: the real binary on snapshot files.

use std::process::Command;

fn cvo(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cvo"))
        .args(args)
        .output()
        .expect("run cvo");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn local(name: &str) -> String {
    format!("{}/tests/fixtures/snapshots/{name}", env!("CARGO_MANIFEST_DIR"))
}

mod common;

fn shared(rel: &str) -> Option<String> {
    common::upstream_fixture(rel, rel).map(|p| p.to_string_lossy().into_owned())
}

#[test]
fn clusterversion_without_completed_history_has_empty_version() {
    let (code, out, err) = cvo(&["get", "clusterversion", "--from", &local("partial-history.yaml")]);
    assert_eq!(code, 0, "{err}");
    // Snapshot time is the newest condition (11:00 from etcd) + 368975ns: Progressing is 1h old.
    assert_eq!(
        out,
        "NAME      VERSION   AVAILABLE   PROGRESSING   SINCE   STATUS\n\
         version             False       True          60m     Working towards 4.16.4: 512 of 905 done (56% complete) waiting on etcd\n"
    );
}

#[test]
fn clusteroperators_multiline_message_stays_on_one_row() {
    let (code, out, err) = cvo(&["get", "co", "--from", &local("partial-history.yaml")]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(
        lines[1],
        "etcd   4.16.4    True        True          False      30m     NodeInstallerProgressing: 1 node is at revision 7 and 2 at revision 8"
    );
}

#[test]
fn get_reads_a_must_gather_directory() {
    let Some(dir) = shared("must-gather-clean-snapshots/azure") else {
        return;
    };
    let (code, out, err) = cvo(&["get", "cv", "--from", &dir]);
    assert_eq!(code, 0, "{err}");
    let row = out.lines().nth(1).expect("a row");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[..4], ["version", "4.8.11", "True", "False"], "{out}");
}

#[test]
fn get_reads_insights_archive_json_without_kind() {
    let Some(file) = shared("insights-operator/archive-sample-version.json") else {
        return;
    };
    let (code, out, err) = cvo(&["get", "cv", "--from", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|r| r.starts_with("version   4.7.16 ")),
        "{out}"
    );
}

#[test]
fn bad_input_is_a_one_line_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("broken.yaml");
    std::fs::write(&bad, "kind: ClusterVersion\nstatus: [\n").expect("write");
    let (code, out, err) = cvo(&["get", "cv", "--from", &bad.to_string_lossy()]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("broken.yaml"), "{err}");

    let (code, _, err) = cvo(&["get", "cv", "--from", "/no/such/snapshot"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("cvo: /no/such/snapshot: "), "{err}");

    let (code, _, err) = cvo(&["get", "widgets", "--from", &local("partial-history.yaml")]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown kind"), "{err}");
}

#[test]
fn broken_kubeconfig_is_a_one_line_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, "apiVersion: v1\nclusters: [\n").expect("write");
    let (code, _, err) = cvo(&["get", "cv", "--kubeconfig", &kc.to_string_lossy()]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("cvo: kubeconfig {}: ", kc.display())),
        "{err}"
    );
}

#[test]
fn snapshot_without_clusterversion_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("nodes.yaml");
    std::fs::write(&f, "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n").expect("write");
    let (code, _, err) = cvo(&["get", "cv", "--from", &f.to_string_lossy()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("clusterversions.config.openshift.io \"version\" not found"),
        "{err}"
    );
}

#[test]
fn kubeconfig_context_errors_name_the_context() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: u, user: {token: t}}]\ncontexts: [{name: ctx, context: {cluster: c, user: u}}]\n\
         current-context: ''\n",
    )
    .expect("write");
    let kcs = kc.to_string_lossy();
    let (code, _, err) = cvo(&["get", "cv", "--kubeconfig", &kcs]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no current-context set; pass --context NAME (contexts: ctx)"),
        "{err}"
    );
    let (code, _, err) = cvo(&["get", "cv", "--kubeconfig", &kcs, "--context", "prod"]);
    assert_eq!(code, 1);
    assert!(err.contains("no context named \"prod\" (contexts: ctx)"), "{err}");
    // A closed port on loopback: the error names the server and context, on one line.
    let (code, _, err) = cvo(&["get", "cv", "--kubeconfig", &kcs, "--context", "ctx"]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cvo: https://127.0.0.1:1/ (context \"ctx\"): "),
        "{err}"
    );
}
