//! Every command logs: one-shot commands to stderr, `RUST_LOG` choosing the level (default
//! `warn`, so a clean run prints nothing there).

mod common;

fn snapshot() -> String {
    format!(
        "{}/tests/fixtures/snapshots/partial-history.yaml",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn cvo(rust_log: Option<&str>, args: &[&str]) -> (i32, String, String) {
    let mut cmd = common::cvo();
    cmd.args(args).env_remove("RUST_LOG");
    if let Some(l) = rust_log {
        cmd.env("RUST_LOG", l);
    }
    let out = cmd.output().expect("run cvo");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn rust_log_debug_sends_log_lines_to_stderr() {
    let file = snapshot();
    let (code, out, err) = cvo(Some("debug"), &["get", "cv", "--from", &file]);
    assert_eq!(code, 0, "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("snapshot file read"))
        .unwrap_or_else(|| panic!("no log line on stderr:\n{err}"));
    assert!(line.contains("DEBUG"), "{line}");
    assert!(line.contains("partial-history.yaml"), "{line}");
    // The output itself is untouched: stdout holds the table only.
    assert!(out.starts_with("NAME"), "{out}");
    assert!(!out.contains("snapshot file read"), "{out}");
}

#[test]
fn default_level_is_warn_and_rust_log_filters_by_target() {
    let file = snapshot();
    let (code, _, err) = cvo(None, &["get", "cv", "--from", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    let (code, _, err) = cvo(Some("kube=debug"), &["get", "cv", "--from", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("snapshot file read"), "{err}");
}

#[test]
fn usage_errors_exit_2_and_failures_exit_1() {
    let file = snapshot();
    let (code, _, err) = cvo(None, &["status", "--now", "yesterday", "--from", &file]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cvo: --now \"yesterday\": not an RFC 3339 time ("),
        "{err}"
    );
    let (code, _, err) = cvo(None, &["status", "--from", "/no/such/snapshot"]);
    assert_eq!(code, 1, "{err}");
    let (code, _, _) = cvo(None, &["status", "--no-such-flag"]);
    assert_eq!(code, 2);
    let (code, _, err) = cvo(None, &["reconcile", "--payload", ".", "--timeout", "0"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err, "cvo: --timeout 0: must be a positive number of seconds\n");
}
