//! Guarded extraction of a release image layer: only `manifests/` and `release-manifests/`
//! are written, under one root, and nothing in a layer can make a write land outside it
//! (upstream copies the same two directories out of the image, `pkg/cvo/updatepayload.go`).
//!
//! Refused anywhere in a layer: `..` components and absolute paths. Refused inside the two
//! directories: symbolic and hard links that leave them (links that stay inside are not
//! created: a hard link becomes a copy, a symbolic link is skipped), device files and FIFOs,
//! sparse files, and files larger than the per-file cap or past the total cap (checked on the
//! header's size claim, before a byte is written). Entries elsewhere in the layer are read past
//! and never written. OCI whiteouts (`.wh.NAME`, `.wh..wh..opq`) inside the two directories
//! remove what earlier layers put there. Layers are plain, gzip or zstd ([`super::zstd`]) tar.

use std::{
    fs,
    io::{self, BufReader, Read},
    path::{Path, PathBuf},
};

/// Size and count caps of one extraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtractLimits {
    /// Largest single file, bytes (default 64 MiB; release manifests are kilobytes to a few
    /// megabytes).
    pub max_file_bytes: u64,
    /// All extracted files of the image together, bytes (default 1 GiB).
    pub max_total_bytes: u64,
    /// Entries extracted from the image (default 100,000).
    pub max_entries: usize,
}

impl Default for ExtractLimits {
    fn default() -> Self {
        Self {
            max_file_bytes: 64 << 20,
            max_total_bytes: 1 << 30,
            max_entries: 100_000,
        }
    }
}

/// Running totals across the layers of one image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtractTotals {
    /// Bytes written.
    pub bytes: u64,
    /// Files and directories written.
    pub entries: usize,
}

/// Why a layer was refused.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// An entry name with a `..` component.
    #[error("layer entry {0:?} escapes the image root (\"..\")")]
    Traversal(String),
    /// An absolute entry name.
    #[error("layer entry {0:?} is an absolute path")]
    Absolute(String),
    /// A link inside the extracted directories that points outside them.
    #[error("layer entry {name:?} links to {target:?}, outside manifests/ and release-manifests/")]
    LinkEscape {
        /// The link.
        name: String,
        /// Where it points.
        target: String,
    },
    /// A device file, FIFO or sparse file inside the extracted directories.
    #[error("layer entry {name:?} is a {kind}, which a release payload never contains")]
    Special {
        /// The entry.
        name: String,
        /// What it is.
        kind: &'static str,
    },
    /// A file over the per-file cap.
    #[error("layer entry {name:?} claims {size} bytes, over the {cap}-byte cap for one file")]
    FileTooLarge {
        /// The entry.
        name: String,
        /// Its claimed size.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// The extracted files together over the total cap.
    #[error("layer entry {name:?} would take the extracted payload past the {cap}-byte cap")]
    TotalTooLarge {
        /// The entry.
        name: String,
        /// The cap.
        cap: u64,
    },
    /// Too many entries.
    #[error("the image has more than {0} entries in manifests/ and release-manifests/")]
    TooManyEntries(usize),
    /// A non-UTF-8 entry name inside the extracted directories.
    #[error("layer entry name {0:?} is not UTF-8")]
    NotUtf8(String),
    /// Reading the layer or writing a file failed.
    #[error("{what}: {err}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        err: io::Error,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> ExtractError {
    let what = what.into();
    move |err| ExtractError::Io { what, err }
}

/// The two directories a release payload is made of.
const KEPT: [&str; 2] = ["manifests", "release-manifests"];

/// An entry name split into its normal components (`./` and empty parts dropped).
///
/// # Errors
/// An absolute name or a `..` component.
fn components(name: &str) -> Result<Vec<&str>, ExtractError> {
    if name.starts_with('/') {
        return Err(ExtractError::Absolute(name.to_string()));
    }
    let mut out = Vec::new();
    for c in name.split('/') {
        match c {
            "" | "." => {}
            ".." => return Err(ExtractError::Traversal(name.to_string())),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Extracts the tar layer in `layer` (plain, gzip or zstd, told by its first bytes, whatever
/// the manifest's media type says) into `root`, under the same caps whatever the compression.
///
/// # Errors
/// The first refused entry ([`ExtractError`]); what was written before it stays under `root`,
/// which the caller discards.
pub fn extract_layer(
    layer: &Path,
    root: &Path,
    limits: &ExtractLimits,
    totals: &mut ExtractTotals,
) -> Result<(), ExtractError> {
    let mut f = fs::File::open(layer).map_err(io_err(format!("opening {}", layer.display())))?;
    let mut magic = [0u8; 4];
    let n = read_up_to(&mut f, &mut magic).map_err(io_err("reading the layer"))?;
    drop(f);
    let f = BufReader::with_capacity(
        256 << 10,
        fs::File::open(layer).map_err(io_err(format!("opening {}", layer.display())))?,
    );
    if super::zstd::is_zstd(&magic[..n]) {
        extract_tar(super::zstd::Frames::new(f), root, limits, totals)
    } else if n >= 2 && magic[..2] == [0x1f, 0x8b] {
        extract_tar(flate2::read::GzDecoder::new(f), root, limits, totals)
    } else {
        extract_tar(f, root, limits, totals)
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Extracts a tar stream into `root` under the guards of this module.
///
/// # Errors
/// See [`extract_layer`].
pub fn extract_tar(
    reader: impl Read,
    root: &Path,
    limits: &ExtractLimits,
    totals: &mut ExtractTotals,
) -> Result<(), ExtractError> {
    let mut archive = tar::Archive::new(reader);
    let entries = archive.entries().map_err(io_err("reading the layer"))?;
    for entry in entries {
        let mut entry = entry.map_err(io_err("reading the layer"))?;
        let raw = entry.path_bytes().into_owned();
        let name = String::from_utf8_lossy(&raw).into_owned();
        let parts = components(&name)?;
        let Some(top) = parts.first() else {
            continue;
        };
        if !KEPT.contains(top) {
            continue; // read past, never written
        }
        if std::str::from_utf8(&raw).is_err() {
            return Err(ExtractError::NotUtf8(name));
        }
        let dest: PathBuf = parts.iter().fold(root.to_path_buf(), |p, c| p.join(c));
        let kind = entry.header().entry_type();
        let base = parts.last().copied().unwrap_or_default();
        if let Some(hidden) = base.strip_prefix(".wh.") {
            whiteout(&parts, hidden, root)?;
            continue;
        }
        if kind.is_symlink() || kind.is_hard_link() {
            let target = entry
                .link_name_bytes()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            link(&name, &parts, &target, kind.is_hard_link(), &dest, root)?;
            continue;
        }
        let special = if kind.is_character_special() {
            Some("character device")
        } else if kind.is_block_special() {
            Some("block device")
        } else if kind.is_fifo() {
            Some("FIFO")
        } else if kind.is_gnu_sparse() {
            Some("sparse file")
        } else {
            None
        };
        if let Some(kind) = special {
            return Err(ExtractError::Special { name, kind });
        }
        if kind.is_dir() {
            count(totals, limits)?;
            fs::create_dir_all(&dest).map_err(io_err(format!("creating {}", dest.display())))?;
            continue;
        }
        if !(kind.is_file() || kind.is_contiguous()) {
            continue; // PAX/GNU metadata records are consumed by the tar reader
        }
        let claimed = entry.header().size().unwrap_or(u64::MAX).max(entry.size());
        if claimed > limits.max_file_bytes {
            return Err(ExtractError::FileTooLarge {
                name,
                size: claimed,
                cap: limits.max_file_bytes,
            });
        }
        if totals.bytes.saturating_add(claimed) > limits.max_total_bytes {
            return Err(ExtractError::TotalTooLarge {
                name,
                cap: limits.max_total_bytes,
            });
        }
        count(totals, limits)?;
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent).map_err(io_err(format!("creating {}", parent.display())))?;
        }
        if fs::symlink_metadata(&dest).is_ok_and(|m| m.is_dir()) {
            fs::remove_dir_all(&dest).map_err(io_err(format!("replacing {}", dest.display())))?;
        }
        let mut out = fs::File::create(&dest).map_err(io_err(format!("creating {}", dest.display())))?;
        let written = io::copy(&mut (&mut entry).take(claimed), &mut out)
            .map_err(io_err(format!("writing {}", dest.display())))?;
        if written != claimed {
            return Err(ExtractError::Io {
                what: format!("reading {name}"),
                err: io::Error::new(io::ErrorKind::UnexpectedEof, "the layer ends inside the file"),
            });
        }
        totals.bytes += written;
    }
    Ok(())
}

fn count(totals: &mut ExtractTotals, limits: &ExtractLimits) -> Result<(), ExtractError> {
    totals.entries += 1;
    if totals.entries > limits.max_entries {
        return Err(ExtractError::TooManyEntries(limits.max_entries));
    }
    Ok(())
}

/// An OCI whiteout inside the kept directories: removes `hidden` (or, for the opaque marker,
/// everything) in the entry's directory.
fn whiteout(parts: &[&str], hidden: &str, root: &Path) -> Result<(), ExtractError> {
    let dir: PathBuf = parts[..parts.len() - 1]
        .iter()
        .fold(root.to_path_buf(), |p, c| p.join(c));
    let victims: Vec<PathBuf> = if hidden == ".wh..opq" {
        match fs::read_dir(&dir) {
            Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(_) => Vec::new(),
        }
    } else {
        if hidden.is_empty() || hidden == "." || hidden == ".." {
            return Ok(());
        }
        vec![dir.join(hidden)]
    };
    for v in victims {
        match fs::symlink_metadata(&v) {
            Ok(m) if m.is_dir() => fs::remove_dir_all(&v),
            Ok(_) => fs::remove_file(&v),
            Err(_) => Ok(()),
        }
        .map_err(io_err(format!("removing {}", v.display())))?;
    }
    Ok(())
}

/// A link inside the kept directories: refused when it leaves them; otherwise a hard link is
/// copied from its (already extracted) target and a symbolic link is skipped.
fn link(
    name: &str,
    parts: &[&str],
    target: &str,
    hard: bool,
    dest: &Path,
    root: &Path,
) -> Result<(), ExtractError> {
    let escape = || ExtractError::LinkEscape {
        name: name.to_string(),
        target: target.to_string(),
    };
    // Hard link targets are archive paths; symbolic ones are relative to the link's directory.
    let resolved: Vec<String> = if hard {
        match components(target) {
            Ok(p) => p.into_iter().map(String::from).collect(),
            Err(_) => return Err(escape()),
        }
    } else {
        if target.starts_with('/') {
            return Err(escape());
        }
        let mut stack: Vec<String> = parts[..parts.len() - 1].iter().map(|s| s.to_string()).collect();
        for c in target.split('/') {
            match c {
                "" | "." => {}
                ".." => {
                    if stack.pop().is_none() {
                        return Err(escape());
                    }
                }
                c => stack.push(c.to_string()),
            }
        }
        stack
    };
    if resolved.first().is_none_or(|t| !KEPT.contains(&t.as_str())) {
        return Err(escape());
    }
    if !hard {
        tracing::debug!("skipping symbolic link {name} -> {target} in the release image");
        return Ok(());
    }
    let src: PathBuf = resolved.iter().fold(root.to_path_buf(), |p, c| p.join(c));
    match fs::symlink_metadata(&src) {
        Ok(m) if m.is_file() => {
            if let Some(parent) = dest.parent() {
                fs::create_dir_all(parent).map_err(io_err(format!("creating {}", parent.display())))?;
            }
            fs::copy(&src, dest).map_err(io_err(format!(
                "copying {} to {}",
                src.display(),
                dest.display()
            )))?;
            Ok(())
        }
        _ => Err(escape()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, kind: tar::EntryType, size: u64) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        // Raw name bytes: `set_path` refuses the hostile names these tests need.
        let bytes = name.as_bytes();
        h.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
        h.set_entry_type(kind);
        h.set_size(size);
        h.set_mode(0o644);
        h.set_cksum();
        h
    }

    fn file(b: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8]) {
        let h = header(name, tar::EntryType::Regular, data.len() as u64);
        b.append(&h, data).expect("append");
    }

    fn run(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> (tempfile::TempDir, Result<(), ExtractError>) {
        let mut b = tar::Builder::new(Vec::new());
        build(&mut b);
        let data = b.into_inner().expect("tar");
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        fs::create_dir_all(&root).expect("root");
        let r = extract_tar(
            &data[..],
            &root,
            &ExtractLimits::default(),
            &mut ExtractTotals::default(),
        );
        (dir, r)
    }

    /// Every path under `dir`, relative, sorted.
    fn tree(dir: &Path) -> Vec<String> {
        fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
            for e in fs::read_dir(d).expect("read_dir").flatten() {
                let p = e.path();
                out.push(p.strip_prefix(base).expect("prefix").display().to_string());
                if e.file_type().expect("type").is_dir() {
                    walk(base, &p, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(dir, dir, &mut out);
        out.sort();
        out
    }

    #[test]
    fn keeps_only_the_payload_directories() {
        let (dir, r) = run(|b| {
            file(b, "./release-manifests/release-metadata", b"{}");
            file(b, "manifests/0000_00_cvo.yaml", b"kind: X\n");
            file(b, "usr/bin/filler", &[7u8; 4096]);
            file(b, "release-manifests/.wh.gone", b"");
        });
        r.expect("extracts");
        assert_eq!(
            tree(dir.path()),
            [
                "root",
                "root/manifests",
                "root/manifests/0000_00_cvo.yaml",
                "root/release-manifests",
                "root/release-manifests/release-metadata"
            ]
        );
        assert_eq!(
            fs::read(dir.path().join("root/manifests/0000_00_cvo.yaml")).expect("read"),
            b"kind: X\n"
        );
    }

    #[test]
    fn refuses_traversal_absolute_and_escaping_links() {
        for (name, build) in [
            (
                "dotdot",
                Box::new(|b: &mut tar::Builder<Vec<u8>>| file(b, "release-manifests/../../x", b"x"))
                    as Box<dyn FnOnce(&mut tar::Builder<Vec<u8>>)>,
            ),
            (
                "absolute",
                Box::new(|b: &mut tar::Builder<Vec<u8>>| file(b, "/etc/x", b"x")),
            ),
            (
                "symlink",
                Box::new(|b: &mut tar::Builder<Vec<u8>>| {
                    let mut h = header("release-manifests/evil", tar::EntryType::Symlink, 0);
                    h.set_link_name("../../../../etc").expect("link");
                    h.set_cksum();
                    b.append(&h, &[][..]).expect("append");
                    file(b, "release-manifests/evil/x", b"x");
                }),
            ),
            (
                "hardlink",
                Box::new(|b: &mut tar::Builder<Vec<u8>>| {
                    let mut h = header("manifests/passwd", tar::EntryType::Link, 0);
                    h.set_link_name("etc/passwd").expect("link");
                    h.set_cksum();
                    b.append(&h, &[][..]).expect("append");
                }),
            ),
            (
                "device",
                Box::new(|b: &mut tar::Builder<Vec<u8>>| {
                    let h = header("manifests/null", tar::EntryType::Char, 0);
                    b.append(&h, &[][..]).expect("append");
                }),
            ),
        ] {
            let (dir, r) = run(build);
            let err = r.expect_err(name).to_string();
            assert!(!err.is_empty(), "{name}");
            assert!(
                tree(dir.path())
                    .iter()
                    .all(|p| p == "root" || p.starts_with("root/")),
                "{name}: {:?}",
                tree(dir.path())
            );
            assert!(
                !dir.path().join("x").exists() && !dir.path().join("root/release-manifests/evil").exists()
            );
        }
    }

    #[test]
    fn a_ten_gigabyte_claim_is_refused_before_writing() {
        let mut b = tar::Builder::new(Vec::new());
        let h = header("release-manifests/huge", tar::EntryType::Regular, 10 << 30);
        b.get_mut().extend_from_slice(h.as_bytes());
        b.get_mut().extend_from_slice(&[0u8; 1024]);
        let data = b.into_inner().expect("tar");
        let dir = tempfile::tempdir().expect("tempdir");
        let err = extract_tar(
            &data[..],
            dir.path(),
            &ExtractLimits::default(),
            &mut ExtractTotals::default(),
        )
        .expect_err("refused");
        assert_eq!(
            err.to_string(),
            "layer entry \"release-manifests/huge\" claims 10737418240 bytes, over the 67108864-byte cap for one file"
        );
        assert!(!dir.path().join("release-manifests/huge").exists());
    }

    #[test]
    fn a_hard_link_inside_is_a_copy() {
        let (dir, r) = run(|b| {
            file(b, "release-manifests/a.yaml", b"a: 1\n");
            let mut h = header("release-manifests/b.yaml", tar::EntryType::Link, 0);
            h.set_link_name("release-manifests/a.yaml").expect("link");
            h.set_cksum();
            b.append(&h, &[][..]).expect("append");
        });
        r.expect("extracts");
        let b = dir.path().join("root/release-manifests/b.yaml");
        assert!(fs::symlink_metadata(&b).expect("b").is_file());
        assert_eq!(fs::read(&b).expect("read"), b"a: 1\n");
    }
}
