//! Helpers shared by the integration tests (each test crate uses a part of them).

#![allow(dead_code)]

use std::{
    io::Write,
    path::{Path, PathBuf},
};

mod payload;
mod proxy;
mod registry;
mod sim_serve;
mod wait;
#[allow(unused_imports)]
pub use payload::*;
#[allow(unused_imports)]
pub use proxy::*;
#[allow(unused_imports)]
pub use registry::*;
#[allow(unused_imports)]
pub use sim_serve::*;
#[allow(unused_imports)]
pub use wait::*;

/// Whether the tests run under CI: the `CI` environment variable is set to anything but
/// empty, `0` or `false` (GitHub Actions and GitLab set `CI=true`).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}

/// Says on stderr that `test` is skipped and why (written straight to stderr, past libtest's
/// output capture, so whoever runs the tests sees which did not run). Under CI
/// ([`under_ci`]) a skip is a failure: panics instead.
pub fn skip(test: &str, reason: &str) {
    assert!(
        !under_ci(),
        "{test} cannot run: {reason} (a skip is a failure when CI is set)"
    );
    let _ = writeln!(std::io::stderr(), "skipping {test}: {reason}");
}

/// Collects `child`'s stderr (taken from it; it must have been spawned with
/// `Stdio::piped()`) line by line into the returned text, on a thread of its own, so a test can
/// read what a running process has logged so far.
pub fn collect_stderr(child: &mut std::process::Child) -> std::sync::Arc<std::sync::Mutex<String>> {
    use std::io::BufRead as _;
    let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (err, sink) = (child.stderr.take().expect("piped stderr"), text.clone());
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            let mut s = sink.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            s.push_str(&line);
            s.push('\n');
        }
    });
    text
}

/// `tests/fixtures/upstream`: the public upstream fixtures copied into the repo (origin
/// repository, commit and licence of each in `SOURCES.md` there).
pub fn upstream_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream")
}

/// The upstream fixture file or directory `tests/fixtures/upstream/<rel>`, or `None` after
/// [`skip`]ping `test` (a failure under CI) when it is missing: it ships with the repo, so
/// that only happens when someone removed it.
pub fn upstream_fixture(rel: &str, test: &str) -> Option<PathBuf> {
    let p = upstream_dir().join(rel);
    if p.exists() {
        return Some(p);
    }
    skip(test, &format!("tests/fixtures/upstream/{rel} not found"));
    None
}

/// The input files of `oc-upgrade-status` fixture scenario `s` in `dir`: the five required
/// ones plus the optional machine-config-operator Deployment.
pub fn scenario_inputs(dir: &Path, s: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["cv", "co", "mcp", "mc", "node"]
        .iter()
        .map(|k| dir.join(format!("{s}-{k}.yaml")))
        .collect();
    let mco = dir.join(format!("{s}-mco-deployment.yaml"));
    if mco.is_file() {
        v.push(mco);
    }
    v
}

/// The environment variables that choose cvo's language (`cvo::cli::lang`): the tests' runner
/// removes them, so that the English texts the tests expect hold on a machine whose locale is
/// Russian. A test of the language sets the one it tests on the returned command.
pub const LANGUAGE_VARS: [&str; 4] = ["CVO_LANG", "LC_ALL", "LC_MESSAGES", "LANG"];

/// The `cvo` binary as every test runs it: no `KUBECONFIG` from the environment (a cluster is
/// reached only through a `--kubeconfig` or `KUBECONFIG` the test gives) and English whatever
/// the locale ([`LANGUAGE_VARS`] removed). Add arguments and environment to it.
pub fn cvo() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cvo"));
    c.env_remove("KUBECONFIG");
    for v in LANGUAGE_VARS {
        c.env_remove(v);
    }
    c
}

/// Runs the `cvo` binary ([`cvo`]) with `args` and logging off (so stderr holds only what cvo
/// prints as its error); returns (exit code, stdout, stderr).
pub fn cvo_offline(args: &[&str]) -> (i32, String, String) {
    let out = cvo()
        .args(args)
        .env("RUST_LOG", "off")
        .output()
        .expect("cvo runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
