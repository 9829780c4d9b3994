//! Port of pkg/payload/payload.go (`LoadUpdate`, `ValidateDirectory`, `loadReleaseMetadata`,
//! `loadImageReferences`) and pkg/cincinnati `ParseMetadata`: reading a release payload
//! directory.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
    path::{Path, PathBuf},
    sync::Arc,
};

use base64::Engine as _;
use serde_json::Value;

use super::{
    files::{EntryKind, check_entry, read_checked, read_payload_file},
    filter::{ExclusionReason, InclusionConfig, include},
    manifest::{Manifest, ManifestError, parse_manifests},
    template::{RenderConfig, render},
    yaml::yaml_value,
};
use crate::reconcile::payload::capability::CapabilitiesStatus;

/// The CVO's own manifests directory inside a release image.
pub(crate) const CVO_MANIFEST_DIR: &str = "manifests";
/// All operators' manifests inside a release image.
pub(crate) const RELEASE_MANIFEST_DIR: &str = "release-manifests";
/// Cincinnati metadata file in `release-manifests/`.
pub(crate) const RELEASE_METADATA_FILE: &str = "release-metadata";
/// ImageStream of the payload's images in `release-manifests/`.
pub(crate) const IMAGE_REFERENCES_FILE: &str = "image-references";

/// The canonical path of a payload directory, the root [`check_entry`] keeps links inside.
fn canonical_root(dir: &Path) -> Result<PathBuf, LoadError> {
    std::fs::canonicalize(dir).map_err(|e| LoadError::Layout {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })
}

/// A release (openshift/api `config/v1.Release`) as read from `release-metadata`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Release {
    /// Semantic version, e.g. `4.12.0`.
    pub version: String,
    /// Pull spec of the release image (what the loader was told; may be empty).
    pub image: String,
    /// Errata / release-notes URL (`metadata.url`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Channels (`io.openshift.upgrades.graph.release.channels`, empties dropped, byte-sorted).
    pub channels: Vec<String>,
    /// `Multi` when `release.openshift.io/architecture` is `multi`, else `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
}

/// The whole `release-metadata` document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReleaseMetadata {
    /// The release described.
    pub release: Release,
    /// `previous` versions, as listed.
    pub previous: Vec<String>,
    /// `next` versions, as listed.
    pub next: Vec<String>,
    /// Problems in `metadata` that upstream only logs (bad architecture value, non-string url).
    pub warnings: Vec<String>,
}

/// `image-references`: the payload's ImageStream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImageReferences {
    /// `metadata.name`: must equal the release version.
    pub name: String,
    /// Tag name → `from.name` (pull spec) of `spec.tags[]` with `from.kind: DockerImage`.
    pub tags: BTreeMap<String, String>,
}

/// Why a payload directory could not be loaded. `Display` is one line per problem.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The directory is missing or not laid out as a payload.
    #[error("{path}: {message}")]
    Layout {
        /// The path checked.
        path: PathBuf,
        /// What is missing.
        message: String,
    },
    /// `release-metadata` or `image-references` is unreadable or wrong.
    #[error("{path}: {message}")]
    Metadata {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Manifest files could not be read or parsed (upstream UE reason `UpdatePayloadIntegrity`).
    /// Holds every bad document of every file.
    #[error("{}", format_manifest_errors(dir, errors))]
    Manifests {
        /// The payload directory.
        dir: PathBuf,
        /// Every problem, in load order.
        errors: Vec<ManifestError>,
    },
}

fn format_manifest_errors(dir: &Path, errors: &[ManifestError]) -> String {
    let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
    if list.len() == 1 {
        format!("Error loading manifests from {}: {}", dir.display(), list[0])
    } else {
        format!(
            "Error loading manifests from {}: [{}]",
            dir.display(),
            list.join(", ")
        )
    }
}

impl LoadError {
    /// The `UpdateError` reason upstream reports for a failed payload load.
    pub fn reason(&self) -> &'static str {
        "UpdatePayloadIntegrity"
    }

    /// One line per problem (each naming the file, and for manifests the document index).
    pub fn lines(&self) -> Vec<String> {
        match self {
            LoadError::Manifests { dir, errors } => {
                errors.iter().map(|e| format!("{}: {e}", dir.display())).collect()
            }
            other => vec![other.to_string()],
        }
    }
}

/// The architecture name Go's `runtime.GOARCH` gives for the running machine.
pub fn runtime_architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => {
            if cfg!(target_endian = "little") {
                "ppc64le"
            } else {
                "ppc64"
            }
        }
        "s390x" => "s390x",
        "riscv64" => "riscv64",
        other => other,
    }
}

/// Reads `release-metadata` (payload.go `loadReleaseMetadata` + cincinnati `ParseMetadata`).
///
/// # Errors
/// Unreadable or unsafe file (see [`read_checked`]), bad JSON, `kind` other than
/// `cincinnati-metadata-v0`, empty or non-semver `version`.
pub(crate) fn read_release_metadata(root: &Path, path: &Path) -> Result<ReleaseMetadata, LoadError> {
    let bad = |message: String| LoadError::Metadata {
        path: path.to_path_buf(),
        message,
    };
    let data = read_checked(root, path).map_err(bad)?;
    let v: Value =
        serde_json::from_slice(&data).map_err(|e| bad(format!("unmarshal Cincinnati metadata: {e}")))?;
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or_default();
    if kind != "cincinnati-metadata-v0" {
        return Err(bad(format!("unrecognized Cincinnati metadata kind {kind:?}")));
    }
    let version = v.get("version").and_then(Value::as_str).unwrap_or_default();
    if version.is_empty() {
        return Err(bad("missing required Cincinnati metadata version".into()));
    }
    if let Err(e) = semver::Version::parse(version) {
        return Err(bad(format!(
            "invalid Cincinnati metadata version {version:?}: {e}"
        )));
    }
    let strings = |key: &str| -> Vec<String> {
        v.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let mut md = ReleaseMetadata {
        release: Release {
            version: version.to_string(),
            ..Release::default()
        },
        previous: strings("previous"),
        next: strings("next"),
        warnings: Vec::new(),
    };
    if let Some(meta) = v.get("metadata").and_then(Value::as_object) {
        match meta.get("url") {
            Some(Value::String(u)) => md.release.url = Some(u.clone()),
            Some(other) => md.warnings.push(format!("metadata.url is not a string: {other}")),
            None => {}
        }
        match meta.get("release.openshift.io/architecture") {
            Some(Value::String(a)) if a == "multi" => md.release.architecture = Some("Multi".into()),
            Some(other) => md.warnings.push(format!(
                "unrecognized release.openshift.io/architecture value {other}"
            )),
            None => {}
        }
        match meta.get("io.openshift.upgrades.graph.release.channels") {
            Some(Value::String(c)) => {
                let mut ch: Vec<String> = c
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                ch.sort();
                md.release.channels = ch;
            }
            Some(other) => md
                .warnings
                .push(format!("channels metadata is not a string: {other}")),
            None => {}
        }
    }
    Ok(md)
}

/// Reads `image-references` (YAML or JSON ImageStream `image.openshift.io/v1`).
///
/// # Errors
/// Unreadable, unsafe (see [`read_checked`]) or unparseable file, or another kind of object.
pub(crate) fn read_image_references(root: &Path, path: &Path) -> Result<ImageReferences, LoadError> {
    let bad = |message: String| LoadError::Metadata {
        path: path.to_path_buf(),
        message,
    };
    let data = read_checked(root, path).map_err(bad)?;
    let text = String::from_utf8(data).map_err(|e| bad(format!("not UTF-8 text: {e}")))?;
    let v: Value = yaml_value(&text).map_err(|e| bad(format!("unmarshal image-references: {e}")))?;
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or_default();
    let api = v.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    if kind != "ImageStream" || api != "image.openshift.io/v1" {
        return Err(bad(format!(
            "image-references is a {api}/{kind}, not an image.openshift.io/v1 ImageStream"
        )));
    }
    let name = v
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut tags = BTreeMap::new();
    for t in v
        .pointer("/spec/tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let (Some(n), Some(from)) = (
            t.get("name").and_then(Value::as_str),
            t.pointer("/from/name").and_then(Value::as_str),
        ) {
            tags.insert(n.to_string(), from.to_string());
        }
    }
    Ok(ImageReferences {
        name: name.to_string(),
        tags,
    })
}

/// Manifests and problems of one directory read.
#[derive(Debug, Default)]
pub struct DirRead {
    /// Parsed manifests in file-name order, then document order.
    pub manifests: Vec<Manifest>,
    /// Every bad document.
    pub errors: Vec<ManifestError>,
    /// Files skipped because their template could not be rendered.
    pub warnings: Vec<String>,
}

/// Whether upstream treats `name` as a manifest file (`.yaml`, `.yml`, `.json`).
pub(crate) fn has_manifest_extension(name: &str) -> bool {
    name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json")
}

/// Reads the manifest files directly in `dir` (non-recursive, lexical order, only
/// [`has_manifest_extension`] files, `skip` file names left out). With `render`, each file is
/// first rendered as a template; a file that fails to render is skipped with a warning.
/// `prefix` is prepended to file names in [`Manifest::path`] and errors. Every file is checked
/// before it is opened ([`check_entry`]: symbolic links must stay inside `dir`; FIFOs, sockets
/// and devices are refused whatever their name) and read with [`read_payload_file`].
///
/// # Errors
/// The directory cannot be listed.
pub fn read_manifest_dir(
    dir: &Path,
    prefix: &str,
    skip: &[&str],
    render_cfg: Option<&RenderConfig>,
) -> Result<DirRead, LoadError> {
    read_manifest_dir_in(&canonical_root(dir)?, dir, prefix, skip, render_cfg)
}

/// [`read_manifest_dir`] of a directory inside the payload whose canonical path is `root`.
fn read_manifest_dir_in(
    root: &Path,
    dir: &Path,
    prefix: &str,
    skip: &[&str],
    render_cfg: Option<&RenderConfig>,
) -> Result<DirRead, LoadError> {
    let mut out = DirRead::default();
    for f in list_files(root, dir)? {
        if !(f.open.is_err() || has_manifest_extension(&f.name)) || skip.contains(&f.name.as_str()) {
            continue;
        }
        read_one(f.open, &format!("{prefix}{}", f.name), render_cfg, &mut out);
    }
    Ok(out)
}

/// A file entry of a payload directory: its name and the path to open, or why it is refused.
struct FileEntry {
    name: String,
    open: Result<PathBuf, String>,
}

/// The entries of `dir` that are not directories, sorted by name, each checked with
/// [`check_entry`] (an entry refused there is listed with the reason).
fn list_files(root: &Path, dir: &Path) -> Result<Vec<FileEntry>, LoadError> {
    let rd = std::fs::read_dir(dir).map_err(|e| LoadError::Layout {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut files = Vec::new();
    for entry in rd.flatten() {
        let open = match check_entry(root, &entry.path()) {
            Ok((EntryKind::Dir, _)) => continue,
            Ok((EntryKind::File, target)) => Ok(target),
            Err(e) => Err(e),
        };
        files.push(FileEntry {
            name: entry.file_name().to_string_lossy().into_owned(),
            open,
        });
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

fn read_one(
    open: Result<PathBuf, String>,
    label: &str,
    render_cfg: Option<&RenderConfig>,
    out: &mut DirRead,
) {
    let data = match open.and_then(|p| read_payload_file(&p)) {
        Ok(d) => d,
        Err(message) => {
            out.errors.push(ManifestError {
                path: label.to_string(),
                index: 0,
                message,
            });
            return;
        }
    };
    let data = match render_cfg {
        None => data,
        Some(cfg) => {
            let text = String::from_utf8_lossy(&data);
            match render(&text, cfg) {
                Ok(t) => t.into_bytes(),
                Err(e) => {
                    out.warnings.push(format!("{label}: skipped: {e}"));
                    return;
                }
            }
        }
    };
    match parse_manifests(&data, label) {
        Ok(ms) => out.manifests.extend(ms),
        Err(es) => out.errors.extend(es),
    }
}

/// How a directory given to [`load_dir`] is laid out.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PayloadLayout {
    /// A release image root: `manifests/` and `release-manifests/`.
    ReleaseImage,
    /// A `release-manifests/` directory alone (has `release-metadata`).
    ReleaseManifests,
    /// A plain manifest directory without release metadata. Files directly in it and in its
    /// subdirectories (one level) are merged and ordered by file name, as
    /// `oc adm release new` flattens operators' manifests into one directory.
    Tree,
}

/// Options of a payload load (the arguments of upstream `LoadUpdate`).
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Pull spec of the release image (`.ReleaseImage`, `Release.image`).
    pub release_image: String,
    /// `EXCLUDE_MANIFESTS`.
    pub exclude_identifier: String,
    /// Cluster feature set (`""` = Default).
    pub required_feature_set: String,
    /// Cluster profile.
    pub profile: String,
    /// `Some(known)` ⇒ manifests naming capabilities outside it are dropped (initial local
    /// load); `None` ⇒ no capability filter at load.
    pub known_capabilities: Option<BTreeSet<String>>,
    /// Enabled feature gates.
    pub enabled_feature_gates: BTreeSet<String>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            release_image: String::new(),
            exclude_identifier: String::new(),
            required_feature_set: String::new(),
            profile: super::filter::DEFAULT_CLUSTER_PROFILE.to_string(),
            known_capabilities: None,
            enabled_feature_gates: BTreeSet::new(),
        }
    }
}

impl LoadOptions {
    /// The filter upstream applies at load time.
    pub fn inclusion(&self, major_version: Option<u64>) -> InclusionConfig {
        InclusionConfig {
            exclude_identifier: Some(self.exclude_identifier.clone()),
            required_feature_set: Some(self.required_feature_set.clone()),
            profile: Some(self.profile.clone()),
            capabilities: self.known_capabilities.as_ref().map(|k| CapabilitiesStatus {
                known: k.clone(),
                enabled: k.clone(),
            }),
            allow_unknown_capabilities: false,
            overrides: Vec::new(),
            enabled_feature_gates: Some(self.enabled_feature_gates.clone()),
            major_version,
        }
    }
}

/// A loaded payload directory with every parsed manifest, before filtering.
#[derive(Clone, Debug)]
pub struct LoadedPayload {
    /// The directory given.
    pub dir: PathBuf,
    /// How it is laid out.
    pub layout: PayloadLayout,
    /// Release metadata (absent for [`PayloadLayout::Tree`]).
    pub metadata: Option<ReleaseMetadata>,
    /// image-references (absent for [`PayloadLayout::Tree`] without the file).
    pub image_references: Option<ImageReferences>,
    /// Every manifest: the CVO's own (rendered) first, then the release manifests.
    pub manifests: Vec<Arc<Manifest>>,
    /// Skipped template files and metadata warnings.
    pub warnings: Vec<String>,
}

impl LoadedPayload {
    /// Major version of the release, when known.
    pub fn major_version(&self) -> Option<u64> {
        self.metadata
            .as_ref()
            .and_then(|m| semver::Version::parse(&m.release.version).ok())
            .map(|v| v.major)
    }

    /// Each manifest with `Ok` or the reason `cfg` excludes it, in load order.
    pub fn filter(&self, cfg: &InclusionConfig) -> Vec<(Arc<Manifest>, Result<(), ExclusionReason>)> {
        self.manifests
            .iter()
            .map(|m| (m.clone(), include(m, cfg)))
            .collect()
    }
}

/// Loads any payload directory (see [`PayloadLayout`]) with every manifest, unfiltered. Used by
/// `cvo payload inspect`; the engine uses [`load_update`].
///
/// # Errors
/// A missing directory, bad metadata, and every bad manifest document at once.
pub fn load_dir(dir: &Path, opts: &LoadOptions) -> Result<LoadedPayload, LoadError> {
    if !dir.is_dir() {
        return Err(LoadError::Layout {
            path: dir.to_path_buf(),
            message: "not a directory".into(),
        });
    }
    let root = canonical_root(dir)?;
    // Present, whatever it is: a FIFO or an escaping link is refused when read, not ignored.
    let present = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let layout = if dir.join(RELEASE_MANIFEST_DIR).is_dir() {
        PayloadLayout::ReleaseImage
    } else if present(&dir.join(RELEASE_METADATA_FILE)) {
        PayloadLayout::ReleaseManifests
    } else {
        PayloadLayout::Tree
    };
    let release_dir = match layout {
        PayloadLayout::ReleaseImage => dir.join(RELEASE_MANIFEST_DIR),
        _ => dir.to_path_buf(),
    };
    let check_dir = |d: &Path| -> Result<(), LoadError> {
        match check_entry(&root, d) {
            Ok((EntryKind::Dir, _)) => Ok(()),
            Ok((EntryKind::File, _)) => Err(LoadError::Layout {
                path: d.to_path_buf(),
                message: "not a directory".into(),
            }),
            Err(message) => Err(LoadError::Layout {
                path: d.to_path_buf(),
                message,
            }),
        }
    };
    check_dir(&release_dir)?;
    let mut warnings = Vec::new();
    let metadata = match layout {
        PayloadLayout::Tree => None,
        _ => {
            let mut md = read_release_metadata(&root, &release_dir.join(RELEASE_METADATA_FILE))?;
            md.release.image = opts.release_image.clone();
            warnings.extend(md.warnings.iter().cloned());
            Some(md)
        }
    };
    let irf = release_dir.join(IMAGE_REFERENCES_FILE);
    let image_references = if present(&irf) {
        Some(read_image_references(&root, &irf)?)
    } else if layout == PayloadLayout::Tree {
        None
    } else {
        return Err(LoadError::Metadata {
            path: irf,
            message: "missing".into(),
        });
    };
    if let (Some(md), Some(ir)) = (&metadata, &image_references)
        && ir.name != md.release.version
    {
        return Err(LoadError::Metadata {
            path: irf,
            message: format!(
                "version from {IMAGE_REFERENCES_FILE} ({}) differs from {RELEASE_METADATA_FILE} ({})",
                ir.name, md.release.version
            ),
        });
    }
    let mut all = DirRead::default();
    let skip = [RELEASE_METADATA_FILE, IMAGE_REFERENCES_FILE];
    match layout {
        PayloadLayout::ReleaseImage => {
            let cvo_dir = dir.join(CVO_MANIFEST_DIR);
            if present(&cvo_dir) {
                check_dir(&cvo_dir)?;
                let cfg = RenderConfig {
                    release_image: opts.release_image.clone(),
                    cluster_profile: opts.profile.clone(),
                    images: image_references
                        .as_ref()
                        .map(|i| i.tags.clone())
                        .unwrap_or_default(),
                };
                merge(
                    &mut all,
                    read_manifest_dir_in(&root, &cvo_dir, "manifests/", &[], Some(&cfg))?,
                );
            }
            merge(
                &mut all,
                read_manifest_dir_in(&root, &release_dir, "release-manifests/", &skip, None)?,
            );
        }
        PayloadLayout::ReleaseManifests => {
            merge(
                &mut all,
                read_manifest_dir_in(&root, &release_dir, "", &skip, None)?,
            );
        }
        PayloadLayout::Tree => {
            // (file name, path shown, path to open or why it is refused)
            let mut files: Vec<(String, String, Result<PathBuf, String>)> = Vec::new();
            for f in list_files(&root, dir)? {
                files.push((f.name.clone(), f.name, f.open));
            }
            let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
                .map_err(|e| LoadError::Layout {
                    path: dir.to_path_buf(),
                    message: e.to_string(),
                })?
                .flatten()
                .map(|e| e.path())
                .filter(|p| matches!(check_entry(&root, p), Ok((EntryKind::Dir, _))))
                .collect();
            subdirs.sort();
            for sub in subdirs {
                let sub_name = sub
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                for f in list_files(&root, &sub)? {
                    files.push((f.name.clone(), format!("{sub_name}/{}", f.name), f.open));
                }
            }
            files.retain(|(n, _, open)| {
                open.is_err() || (has_manifest_extension(n) && !skip.contains(&n.as_str()))
            });
            files.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
            for (_, rel, open) in files {
                read_one(open, &rel, None, &mut all);
            }
        }
    }
    if !all.errors.is_empty() {
        return Err(LoadError::Manifests {
            dir: dir.to_path_buf(),
            errors: all.errors,
        });
    }
    if all.manifests.is_empty() {
        return Err(no_manifests(dir, &layout));
    }
    warnings.extend(all.warnings);
    Ok(LoadedPayload {
        dir: dir.to_path_buf(),
        layout,
        metadata,
        image_references,
        manifests: all.manifests.into_iter().map(Arc::new).collect(),
        warnings,
    })
}

/// The error of a payload directory that holds no manifest document: names the directory and
/// what a payload of its layout is expected to hold.
fn no_manifests(dir: &Path, layout: &PayloadLayout) -> LoadError {
    let expected = match layout {
        PayloadLayout::ReleaseImage => format!(
            "no manifests in {CVO_MANIFEST_DIR}/ or {RELEASE_MANIFEST_DIR}/; expected *.yaml, *.yml or \
             *.json manifest files beside {RELEASE_METADATA_FILE} and {IMAGE_REFERENCES_FILE}"
        ),
        PayloadLayout::ReleaseManifests => format!(
            "no manifests; expected *.yaml, *.yml or *.json manifest files beside {RELEASE_METADATA_FILE}"
        ),
        PayloadLayout::Tree => format!(
            "no manifests; expected a release image root ({CVO_MANIFEST_DIR}/ and \
             {RELEASE_MANIFEST_DIR}/ with {RELEASE_METADATA_FILE} and {IMAGE_REFERENCES_FILE}), a \
             {RELEASE_MANIFEST_DIR}/ directory, or *.yaml, *.yml or *.json manifest files in it or one \
             directory down"
        ),
    };
    LoadError::Layout {
        path: dir.to_path_buf(),
        message: expected,
    }
}

fn merge(into: &mut DirRead, from: DirRead) {
    into.manifests.extend(from.manifests);
    into.errors.extend(from.errors);
    into.warnings.extend(from.warnings);
}

/// A loaded, load-filtered release payload (upstream `payload.Update`).
#[derive(Clone, Debug)]
pub struct Payload {
    /// The release (version, image, url, channels, architecture `Multi`).
    pub release: Release,
    /// `release-metadata` `previous`.
    pub previous: Vec<String>,
    /// `Multi` or the runtime architecture (`amd64`, `arm64`, ...).
    pub architecture: String,
    /// The parsed release version.
    pub parsed_version: semver::Version,
    /// image-references.
    pub image_references: ImageReferences,
    /// `versionHash`: see [`manifest_hash`].
    pub manifest_hash: String,
    /// Manifests that passed the load filters, in load order.
    pub manifests: Vec<Arc<Manifest>>,
    /// Manifests the load filters dropped, with the reason.
    pub excluded: Vec<(Arc<Manifest>, ExclusionReason)>,
    /// Skipped template files and metadata warnings.
    pub warnings: Vec<String>,
}

/// Loads a release image directory as the engine does (payload.go `LoadUpdate`): the directory
/// must hold `manifests/` and `release-manifests/` with `release-metadata` and
/// `image-references`; manifests are filtered by exclude id, feature set, feature gates, major
/// version, profile and (if given) known capabilities.
///
/// # Errors
/// Layout, metadata, and every bad manifest document (reason `UpdatePayloadIntegrity`).
pub fn load_update(dir: &Path, opts: &LoadOptions) -> Result<Payload, LoadError> {
    for sub in [CVO_MANIFEST_DIR, RELEASE_MANIFEST_DIR] {
        if !dir.join(sub).is_dir() {
            return Err(LoadError::Layout {
                path: dir.join(sub),
                message: "no such directory".into(),
            });
        }
    }
    for f in [RELEASE_METADATA_FILE, IMAGE_REFERENCES_FILE] {
        let p = dir.join(RELEASE_MANIFEST_DIR).join(f);
        if std::fs::symlink_metadata(&p).is_err() {
            return Err(LoadError::Layout {
                path: p,
                message: "no such file".into(),
            });
        }
    }
    let loaded = load_dir(dir, opts)?;
    let md = loaded.metadata.clone().unwrap_or_default();
    let parsed_version = semver::Version::parse(&md.release.version).map_err(|e| LoadError::Metadata {
        path: dir.join(RELEASE_MANIFEST_DIR).join(RELEASE_METADATA_FILE),
        message: format!("failed to parse release version {}: {e}", md.release.version),
    })?;
    let cfg = opts.inclusion(Some(parsed_version.major));
    let mut manifests = Vec::new();
    let mut excluded = Vec::new();
    for (m, r) in loaded.filter(&cfg) {
        match r {
            Ok(()) => manifests.push(m),
            Err(reason) => {
                tracing::debug!("excluding {}: {reason}", m.label());
                excluded.push((m, reason));
            }
        }
    }
    let architecture = md
        .release
        .architecture
        .clone()
        .unwrap_or_else(|| runtime_architecture().to_string());
    Ok(Payload {
        manifest_hash: manifest_hash(manifests.iter().map(|m| m.as_ref())),
        release: md.release,
        previous: md.previous,
        architecture,
        parsed_version,
        image_references: loaded.image_references.unwrap_or_default(),
        manifests,
        excluded,
        warnings: loaded.warnings,
    })
}

/// Why `dir` cannot be the release image root [`load_update`] needs (`manifests/` and
/// `release-manifests/` with `release-metadata` and `image-references`), as one sentence naming
/// what was expected; `None` when the layout is there (whether it holds manifests is for the
/// load to say). A `release-manifests/` directory given on its own is told to pass its parent.
/// One of those four entries that [`check_entry`] refuses (a FIFO, an escaping symbolic link)
/// is named with the reason.
/// For commands that check a `--payload DIR` before reaching a cluster (`cvo reconcile`).
pub fn release_root_problem(dir: &Path) -> Option<String> {
    if let Ok(root) = std::fs::canonicalize(dir) {
        let metadata_file = format!("{RELEASE_MANIFEST_DIR}/{RELEASE_METADATA_FILE}");
        let image_references = format!("{RELEASE_MANIFEST_DIR}/{IMAGE_REFERENCES_FILE}");
        for rel in [
            CVO_MANIFEST_DIR,
            RELEASE_MANIFEST_DIR,
            &metadata_file,
            &image_references,
        ] {
            let p = dir.join(rel);
            if std::fs::symlink_metadata(&p).is_ok()
                && let Err(e) = check_entry(&root, &p)
            {
                return Some(format!("{rel} {e}"));
            }
        }
    }
    let expected = format!(
        "expected a release image root: {CVO_MANIFEST_DIR}/ and {RELEASE_MANIFEST_DIR}/ (with \
         {RELEASE_METADATA_FILE} and {IMAGE_REFERENCES_FILE}) holding *.yaml, *.yml or *.json manifests"
    );
    if dir.join(RELEASE_METADATA_FILE).is_file() && !dir.join(RELEASE_MANIFEST_DIR).is_dir() {
        return Some(format!(
            "a {RELEASE_MANIFEST_DIR}/ directory, not a release image root; {expected} (its parent, \
             if that holds {CVO_MANIFEST_DIR}/ too)"
        ));
    }
    let missing: Vec<String> = [CVO_MANIFEST_DIR, RELEASE_MANIFEST_DIR]
        .into_iter()
        .filter(|d| !dir.join(d).is_dir())
        .map(|d| format!("{d}/"))
        .chain(
            [RELEASE_METADATA_FILE, IMAGE_REFERENCES_FILE]
                .into_iter()
                .filter(|f| {
                    dir.join(RELEASE_MANIFEST_DIR).is_dir()
                        && !dir.join(RELEASE_MANIFEST_DIR).join(f).is_file()
                })
                .map(|f| format!("{RELEASE_MANIFEST_DIR}/{f}")),
        )
        .collect();
    (!missing.is_empty()).then(|| format!("no {}; {expected}", missing.join(", no ")))
}

/// The payload hash upstream writes to `status.versionHash`: FNV-1 (not 1a) 64-bit over the
/// concatenated [`Manifest::raw`] bytes in load order (YAML documents' bytes made again, one
/// manifest at a time), big-endian, base64 URL alphabet with
/// padding (e.g. `DL-FFQ2Uem8=`).
pub fn manifest_hash<'a>(manifests: impl IntoIterator<Item = &'a Manifest>) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for m in manifests {
        for b in m.raw().iter() {
            h = h.wrapping_mul(PRIME);
            h ^= u64::from(*b);
        }
    }
    base64::engine::general_purpose::URL_SAFE.encode(h.to_be_bytes())
}

impl fmt::Display for PayloadLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PayloadLayout::ReleaseImage => "release image (manifests/ + release-manifests/)",
            PayloadLayout::ReleaseManifests => "release-manifests directory",
            PayloadLayout::Tree => "manifest directory (no release metadata)",
        })
    }
}
