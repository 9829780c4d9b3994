//! Build script: names the commit the binary is built from (`CVO_GIT_COMMIT`, which
//! `cvo --version` prints: `CVO_GIT_COMMIT` from the environment when set, else
//! `git rev-parse --short=12 HEAD`, else `unknown`), and packs the demo's release payloads (`assets/payloads/<version>/...`) into one
//! gzip-compressed tar in `OUT_DIR` (`demo-payloads.tar.gz`), which `cvo demo` embeds
//! (`src/cli/demo.rs`) and unpacks into its temporary directory at start.
//!
//! Why compressed: the 3.4 MB of YAML, embedded as is, stayed resident in every demo process
//! after it was written out once (file-backed pages of the binary); packed they take about a
//! tenth of that. The archive is deterministic (sorted entries, mtime 0, fixed modes), so the
//! same assets build the same binary. Only built with the `sim` feature (the demo's).

use std::{
    fs,
    io::Write as _,
    path::{Path, PathBuf},
};

fn main() {
    println!("cargo::rerun-if-changed=assets/payloads");
    println!("cargo::rerun-if-changed=build.rs");
    commit();
    if std::env::var_os("CARGO_FEATURE_SIM").is_none() {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let root = Path::new("assets/payloads");
    let mut files = Vec::new();
    collect(root, &mut files);
    files.sort();
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    for path in &files {
        let data = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.strip_prefix(root).expect("collected under the root");
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, name, data.as_slice())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let gz = tar.into_inner().expect("tar finishes in memory");
    let bytes = gz.finish().expect("gzip finishes in memory");
    let mut f = fs::File::create(out.join("demo-payloads.tar.gz")).expect("OUT_DIR is writable");
    f.write_all(&bytes).expect("OUT_DIR is writable");
}

/// Every regular file under `dir`, recursively.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("readable directory entry").path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// Sets `CVO_GIT_COMMIT` for the crate, and asks cargo to run again when HEAD moves (the HEAD
/// file of this work tree, the branch it names, packed refs).
fn commit() {
    println!("cargo::rerun-if-env-changed=CVO_GIT_COMMIT");
    let from_env = std::env::var("CVO_GIT_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty());
    let commit = from_env
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo::rustc-env=CVO_GIT_COMMIT={commit}");
    let mut watched = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watched.push(Path::new(&dir).join("HEAD"));
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]) {
        let common = PathBuf::from(common);
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(common.join(branch));
        }
        watched.push(common.join("packed-refs"));
    }
    // A path that does not exist would make cargo run this script on every build.
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo::rerun-if-changed={}", path.display());
    }
}

/// The trimmed output of `git ARGS`, if git ran and succeeded with some output.
fn git(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}
