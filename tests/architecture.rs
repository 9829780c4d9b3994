//! The allowed dependencies of `docs/architecture.md` ("Layers and the allowed arrows"),
//! checked on the source text: a `use` or path that crosses a forbidden arrow fails here, with
//! the file and line. Test modules (`#[cfg(test)]` blocks at the end of a file, and files under
//! a `tests` directory) may use anything.

use std::{
    fs,
    path::{Path, PathBuf},
};

/// Every `.rs` file under `dir`, sorted, skipping unit-test files (`tests.rs`, `tests/`).
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                if name != "tests" && name != "snapshots" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The lines of `file` before its first `#[cfg(test)]` (the non-test code), numbered from 1,
/// without comments.
fn code_lines(file: &Path) -> Vec<(usize, String)> {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

fn src(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(rel)
}

/// Fails with every line of the files under `dir` (or the file `dir`) that contains one of
/// `forbidden`.
fn assert_no_use(dir: &str, forbidden: &[&str], why: &str) {
    let root = src(dir);
    let files = if root.is_dir() {
        sources(&root)
    } else {
        vec![root.clone()]
    };
    assert!(!files.is_empty(), "no source files under {}", root.display());
    let mut hits = Vec::new();
    for f in &files {
        for (n, line) in code_lines(f) {
            if let Some(pat) = forbidden.iter().find(|p| line.contains(*p)) {
                hits.push(format!("{}:{n}: `{pat}` in `{}`", f.display(), line.trim()));
            }
        }
    }
    assert!(hits.is_empty(), "{why}:\n{}", hits.join("\n"));
}

#[test]
fn the_contract_depends_on_nothing_of_the_engine() {
    assert_no_use(
        "reconcile/api.rs",
        &[
            "use super::",
            "super::",
            "crate::reconcile",
            "crate::ui",
            "crate::cli",
            "crate::sim",
        ],
        "reconcile::api must not import the engine's implementation",
    );
}

#[test]
fn the_engine_imports_no_ui_cli_assessment_or_simulator() {
    assert_no_use(
        "reconcile",
        &[
            "crate::ui",
            "crate::cli",
            "crate::assess",
            "crate::sim",
            "crate::cluster",
            "ratatui",
            "crossterm",
        ],
        "reconcile must not depend on the faces or the simulator",
    );
}

#[test]
fn the_ui_reaches_the_engine_only_through_the_contract() {
    assert_no_use(
        "ui",
        &[
            "crate::reconcile::runtime",
            "crate::reconcile::apply",
            "crate::reconcile::payload",
            "crate::reconcile::status",
            "crate::reconcile::errors",
            "crate::reconcile::updates",
            "crate::sim",
            "crate::cli",
            "kube::Client",
        ],
        "ui may use only reconcile::api of the engine, and no kube client",
    );
}

#[test]
fn ui_state_never_calls_render() {
    for state in [
        "ui/app.rs",
        "ui/keys.rs",
        "ui/tab.rs",
        "ui/popup.rs",
        "ui/layout.rs",
        "ui/engine.rs",
        "ui/model",
    ] {
        assert_no_use(
            state,
            &["view::", "super::view", "crate::ui::view"],
            "the dashboard's state must not depend on its rendering",
        );
    }
}

#[test]
fn assessment_and_cluster_are_below_the_faces() {
    assert_no_use(
        "assess",
        &["crate::reconcile", "crate::ui", "crate::cli", "crate::sim"],
        "assess is pure over cluster state",
    );
    assert_no_use(
        "cluster",
        &[
            "crate::reconcile",
            "crate::ui",
            "crate::cli",
            "crate::sim",
            "crate::assess",
        ],
        "cluster only reads clusters and snapshots",
    );
    assert_no_use("openshift", &["crate::"], "openshift holds API types only");
    assert_no_use(
        "informers",
        &[
            "crate::cluster",
            "crate::reconcile",
            "crate::ui",
            "crate::cli",
            "crate::sim",
            "crate::assess",
        ],
        "informers are the ground floor: every reader uses them, they use no reader",
    );
    assert_no_use(
        "clock.rs",
        &["crate::"],
        "the clock uses nothing of ours (everything may use it)",
    );
}

#[test]
fn the_simulator_does_not_know_the_engine_or_the_faces() {
    assert_no_use(
        "sim",
        &["crate::reconcile", "crate::ui", "crate::cli", "crate::assess"],
        "sim is a stand-in for kube-apiserver",
    );
}

#[test]
fn main_only_parses_and_dispatches() {
    let lines = code_lines(&src("main.rs"));
    assert!(
        lines.len() < 200,
        "src/main.rs has {} code lines: move logic into src/cli",
        lines.len()
    );
    assert_no_use(
        "main.rs",
        &[
            "cvo::reconcile",
            "cvo::ui",
            "cvo::sim",
            "cvo::assess",
            "cvo::cluster",
            "kube::",
            "tokio::",
        ],
        "main.rs reaches everything through cvo::cli",
    );
}

#[test]
fn no_source_file_is_over_900_lines() {
    let mut long = Vec::new();
    let mut stack = vec![src("")];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("src directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let n = fs::read_to_string(&path).expect("source file").lines().count();
                if n > 900 {
                    long.push(format!("{}: {n} lines", path.display()));
                }
            }
        }
    }
    long.sort();
    assert!(long.is_empty(), "split these by concern:\n{}", long.join("\n"));
}
