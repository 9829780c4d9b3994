//! Guarded reading of a local payload directory (`manifests/`, `release-manifests/`,
//! `release-metadata`, `image-references`): every entry is checked before it is opened, so a
//! FIFO or device cannot block or stream forever, a symbolic link cannot lead out of the
//! payload (the rule image extraction applies, `retrieve/extract.rs`), and an oversized file is
//! refused naming the limit. Upstream (`pkg/payload/payload.go`) reads the files with plain
//! `os.ReadFile`; these checks are this implementation's own.

use std::path::{Path, PathBuf};

/// Largest file the loader reads from a payload directory (a manifest file, `release-metadata`,
/// `image-references`): 16 MiB. A Kubernetes object cannot be larger than etcd's 1.5 MiB request
/// limit, the largest manifests of real payloads (CRDs) are well under 1 MiB (the largest CRD in
/// the project's fixtures is 62 KiB), and a file holding several objects stays within a few MiB;
/// a larger file is refused before it is read, naming the file and this limit.
pub const MAX_PAYLOAD_FILE_BYTES: u64 = 16 << 20;

/// What an entry of a payload directory is, once [`check_entry`] has found it safe to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A regular file (or a symbolic link to one inside the payload).
    File,
    /// A directory (or a symbolic link to one inside the payload).
    Dir,
}

/// The name of a file type that is neither a regular file, a directory nor a symbolic link.
fn special_kind(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    let _ = t;
    "not a regular file"
}

/// Checks `path`, an entry of the payload directory whose canonical path is `root`, without
/// opening it: a regular file or a directory is used; a symbolic link is followed only when its
/// target (resolved through every link on the way) is inside `root`, as image extraction
/// (`retrieve/extract.rs`) refuses links that leave the payload; a FIFO, socket or device (or a
/// link to one) is refused, since reading it could block forever or never end. Symbolic links
/// to directories follow the same rule: inside the payload they are read as the directory.
/// Returns the kind and the path to open (the canonical target for a link).
///
/// # Errors
/// One line naming what `path` is and why it is refused (`is a FIFO; a release payload holds
/// only regular files and directories`, `is a symbolic link to T, outside the payload P`, ...).
pub(crate) fn check_entry(root: &Path, path: &Path) -> Result<(EntryKind, PathBuf), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    let (meta, target) = if meta.file_type().is_symlink() {
        let target = std::fs::canonicalize(path)
            .map_err(|e| format!("is a symbolic link that does not resolve: {e}"))?;
        if !target.starts_with(root) {
            return Err(format!(
                "is a symbolic link to {}, outside the payload {}",
                target.display(),
                root.display()
            ));
        }
        (
            std::fs::symlink_metadata(&target).map_err(|e| e.to_string())?,
            target,
        )
    } else {
        (meta, path.to_path_buf())
    };
    let t = meta.file_type();
    if t.is_file() {
        Ok((EntryKind::File, target))
    } else if t.is_dir() {
        Ok((EntryKind::Dir, target))
    } else {
        Err(format!(
            "is {}; a release payload holds only regular files and directories",
            special_kind(t)
        ))
    }
}

/// Reads the file at `path` (checked by [`check_entry`]) without ever blocking on it: it is
/// opened non-blocking and without following a symbolic link, must still be a regular file
/// once open, and may hold at most [`MAX_PAYLOAD_FILE_BYTES`].
///
/// # Errors
/// One line: the open or read error, what the file turned into, or its size and the limit.
pub(crate) fn read_payload_file(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    let file = opts.open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!(
            "is {}; a release payload holds only regular files and directories",
            special_kind(meta.file_type())
        ));
    }
    let too_large = |size: u64| {
        format!("is {size} bytes, over the {MAX_PAYLOAD_FILE_BYTES}-byte (16 MiB) limit for one payload file")
    };
    if meta.len() > MAX_PAYLOAD_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut data = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_PAYLOAD_FILE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| e.to_string())?;
    if data.len() as u64 > MAX_PAYLOAD_FILE_BYTES {
        return Err(too_large(data.len() as u64));
    }
    Ok(data)
}

/// [`check_entry`] then [`read_payload_file`]: the guarded read of one payload file.
///
/// # Errors
/// As those two; a directory is refused too.
pub(crate) fn read_checked(root: &Path, path: &Path) -> Result<Vec<u8>, String> {
    match check_entry(root, path)? {
        (EntryKind::File, target) => read_payload_file(&target),
        (EntryKind::Dir, _) => Err("is a directory, not a file".into()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::reconcile::payload::load::{
        CVO_MANIFEST_DIR, IMAGE_REFERENCES_FILE, LoadError, LoadOptions, LoadedPayload, RELEASE_MANIFEST_DIR,
        RELEASE_METADATA_FILE, load_dir, release_root_problem,
    };

    /// A release image root with one ConfigMap manifest; returns (temp dir, payload root).
    fn release_root() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("payload");
        let rm = root.join(RELEASE_MANIFEST_DIR);
        std::fs::create_dir_all(root.join(CVO_MANIFEST_DIR)).expect("manifests/");
        std::fs::create_dir_all(&rm).expect("release-manifests/");
        let write = |name: &str, text: &str| std::fs::write(rm.join(name), text).expect("write");
        write(
            RELEASE_METADATA_FILE,
            r#"{"kind":"cincinnati-metadata-v0","version":"4.16.3"}"#,
        );
        write(
            IMAGE_REFERENCES_FILE,
            "kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata: {name: 4.16.3}\n",
        );
        write(
            "0000_10_a_cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: n}\n",
        );
        (tmp, root)
    }

    fn mkfifo(path: &Path) {
        let ok = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("mkfifo runs")
            .success();
        assert!(ok, "mkfifo {}", path.display());
    }

    /// `load_dir` on another thread: a regression that blocks on a FIFO fails here instead of
    /// hanging the test run.
    fn load_within_5s(dir: &Path) -> Result<LoadedPayload, LoadError> {
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(load_dir(&dir, &LoadOptions::default()));
        });
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("load_dir returned within 5 s")
    }

    fn lines(r: Result<LoadedPayload, LoadError>) -> Vec<String> {
        match r {
            Ok(p) => vec![format!("loaded {} manifests", p.manifests.len())],
            Err(e) => e.lines(),
        }
    }

    #[test]
    fn the_test_payload_loads() {
        let (_tmp, root) = release_root();
        assert_eq!(lines(load_within_5s(&root)), ["loaded 1 manifests"]);
    }

    #[test]
    fn fifos_and_sockets_are_refused_whatever_their_name() {
        let (_tmp, root) = release_root();
        let rm = root.join(RELEASE_MANIFEST_DIR);
        mkfifo(&rm.join("0000_20_b_fifo.yaml"));
        mkfifo(&rm.join("OWNERS"));
        let _socket =
            std::os::unix::net::UnixListener::bind(rm.join("0000_30_c_socket.yaml")).expect("socket");
        let d = root.display();
        assert_eq!(
            lines(load_within_5s(&root)),
            [
                format!(
                    "{d}: release-manifests/0000_20_b_fifo.yaml#0: is a FIFO; a release payload holds only \
                     regular files and directories"
                ),
                format!(
                    "{d}: release-manifests/0000_30_c_socket.yaml#0: is a socket; a release payload holds \
                     only regular files and directories"
                ),
                format!(
                    "{d}: release-manifests/OWNERS#0: is a FIFO; a release payload holds only regular files \
                     and directories"
                ),
            ]
        );
    }

    #[test]
    fn a_fifo_as_release_metadata_or_image_references_does_not_block() {
        for name in [RELEASE_METADATA_FILE, IMAGE_REFERENCES_FILE] {
            let (_tmp, root) = release_root();
            let path = root.join(RELEASE_MANIFEST_DIR).join(name);
            std::fs::remove_file(&path).expect("rm");
            mkfifo(&path);
            assert_eq!(
                lines(load_within_5s(&root)),
                [format!(
                    "{}: is a FIFO; a release payload holds only regular files and directories",
                    path.display()
                )]
            );
            assert_eq!(
                release_root_problem(&root).as_deref(),
                Some(
                    format!(
                        "release-manifests/{name} is a FIFO; a release payload holds only regular files and \
                         directories"
                    )
                    .as_str()
                )
            );
        }
    }

    #[test]
    fn symbolic_links_are_followed_only_inside_the_payload() {
        let (tmp, root) = release_root();
        let rm = root.join(RELEASE_MANIFEST_DIR);
        let outside = tmp.path().join("outside.yaml");
        std::fs::write(
            &outside,
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: n}\n",
        )
        .expect("write");
        // Inside: a link to a file of manifests/ is read as that file.
        std::fs::write(
            root.join(CVO_MANIFEST_DIR).join("real.txt"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: in, namespace: n}\n",
        )
        .expect("write");
        std::os::unix::fs::symlink("../manifests/real.txt", rm.join("0000_40_d_inside.yaml"))
            .expect("symlink");
        let loaded = load_within_5s(&root).expect("an inside link loads");
        assert_eq!(
            loaded
                .manifests
                .iter()
                .map(|m| m.id.name.as_str())
                .collect::<Vec<_>>(),
            ["a", "in"]
        );
        // Outside, directly or through a chain of links.
        std::os::unix::fs::symlink(&outside, rm.join("0000_50_e_out.yaml")).expect("symlink");
        std::os::unix::fs::symlink("0000_50_e_out.yaml", rm.join("0000_60_f_chain.yaml")).expect("symlink");
        let (o, r) = (
            outside.canonicalize().expect("canonical"),
            root.canonicalize().expect("canonical"),
        );
        let (d, o, r) = (root.display(), o.display(), r.display());
        assert_eq!(
            lines(load_within_5s(&root)),
            [
                format!(
                    "{d}: release-manifests/0000_50_e_out.yaml#0: is a symbolic link to {o}, outside the \
                     payload {r}"
                ),
                format!(
                    "{d}: release-manifests/0000_60_f_chain.yaml#0: is a symbolic link to {o}, outside the \
                     payload {r}"
                ),
            ]
        );
    }

    #[test]
    fn a_linked_directory_outside_the_payload_is_refused() {
        let (tmp, root) = release_root();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::rename(root.join(RELEASE_MANIFEST_DIR), &elsewhere).expect("mv");
        std::os::unix::fs::symlink(&elsewhere, root.join(RELEASE_MANIFEST_DIR)).expect("symlink");
        let r = root.canonicalize().expect("canonical");
        assert_eq!(
            lines(load_within_5s(&root)),
            [format!(
                "{}: is a symbolic link to {}, outside the payload {}",
                root.join(RELEASE_MANIFEST_DIR).display(),
                elsewhere.canonicalize().expect("canonical").display(),
                r.display()
            )]
        );
    }

    #[test]
    fn an_oversized_manifest_names_the_file_and_the_limit() {
        let (_tmp, root) = release_root();
        let big = root.join(RELEASE_MANIFEST_DIR).join("0000_70_g_big.yaml");
        let mut text = "#".repeat(usize::try_from(MAX_PAYLOAD_FILE_BYTES).expect("usize"));
        text.push('\n');
        std::fs::write(&big, text).expect("write");
        assert_eq!(
            lines(load_within_5s(&root)),
            [format!(
                "{}: release-manifests/0000_70_g_big.yaml#0: is 16777217 bytes, over the 16777216-byte \
                 (16 MiB) limit for one payload file",
                root.display()
            )]
        );
    }
}
