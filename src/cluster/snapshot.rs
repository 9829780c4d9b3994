//! Loading an offline snapshot of a cluster (`--from PATH`).
//!
//! Accepted forms: YAML or JSON files; single objects, `List`/`*List` objects, multi-document
//! YAML (`oc get -o yaml`); directories read recursively (the must-gather
//! `cluster-scoped-resources/` layout included); and insights-archive JSON whose objects lack
//! `kind`/`apiVersion`, whose kind is inferred from the path (`clusteroperator/`, `version.json`,
//! `machineconfigpools/`, `nodes/`) or from the shape of `status`. Kinds cvo does not read are
//! skipped. Any unreadable or undecodable file is an error naming the file (and document).

use std::path::{Path, PathBuf};

use k8s_openapi::api::{apps::v1::Deployment, core::v1::Node};
use serde_json::Value;

use super::ClusterState;

/// A snapshot that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The path could not be read.
    #[error("{path}: {error}")]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The file is not valid YAML/JSON, or an object does not decode as its kind.
    #[error("{path}{}: {message}", doc.map(|d| format!(" (document {d})")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based document index in a multi-document file, when there are several.
        doc: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// A path given on the command line holds no object of a kind cvo reads.
    #[error(
        "{path}: no ClusterVersion, ClusterOperator, MachineConfigPool, MachineConfig or Node objects found"
    )]
    Empty {
        /// The file or directory.
        path: PathBuf,
    },
    /// Two objects of one kind and name with different `uid`s: files from two clusters.
    #[error(
        "{path}: {kind} {name:?} differs in uid from one read before: files of two clusters; a snapshot holds one cluster"
    )]
    MixedClusters {
        /// The file with the second object.
        path: PathBuf,
        /// Its kind.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// Two ClusterVersions were given.
    #[error("{path}: a second ClusterVersion ({name}); a snapshot holds one cluster")]
    DuplicateClusterVersion {
        /// The file with the second one.
        path: PathBuf,
        /// Its name.
        name: String,
    },
}

/// Loads every path (files or directories, recursively) into one [`ClusterState`].
///
/// # Errors
/// [`SnapshotError`] naming the first file that cannot be read or decoded.
pub fn load(paths: &[PathBuf]) -> Result<ClusterState, SnapshotError> {
    let mut state = ClusterState::default();
    for p in paths {
        let mut files = Vec::new();
        collect_files(p, &mut files)?;
        let mut read = 0;
        for f in &files {
            let n = load_file(f, &mut state)?;
            tracing::debug!(file = %f.display(), objects = n, "snapshot file read");
            read += n;
        }
        if read == 0 {
            return Err(SnapshotError::Empty { path: p.clone() });
        }
    }
    state.sort();
    state.source = describe(paths);
    Ok(state)
}

/// Names a snapshot for titles: the one path, or the shared file-name prefix of several
/// (`snapshot 4.14.1-degraded-* (5 files)`), or a count.
fn describe(paths: &[PathBuf]) -> String {
    match paths {
        [] => "snapshot (no files)".into(),
        [one] => format!("snapshot {}", one.display()),
        [first, rest @ ..] => {
            let mut prefix = first.to_string_lossy().into_owned();
            for p in rest {
                let p = p.to_string_lossy();
                let common = prefix.chars().zip(p.chars()).take_while(|(a, b)| a == b).count();
                prefix = prefix.chars().take(common).collect();
            }
            let base = prefix.rsplit('/').next().unwrap_or("");
            if base.len() >= 3 {
                format!("snapshot {base}* ({} files)", paths.len())
            } else {
                format!("snapshot ({} paths)", paths.len())
            }
        }
    }
}

fn collect_files(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), SnapshotError> {
    let meta = std::fs::metadata(path).map_err(|error| SnapshotError::Read {
        path: path.into(),
        error,
    })?;
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|error| SnapshotError::Read {
                path: path.into(),
                error,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            let name = e.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') {
                continue;
            }
            if e.is_dir() {
                collect_files(&e, out)?;
            } else if is_data_file(&e) {
                out.push(e);
            }
        }
    } else {
        out.push(path.into());
    }
    Ok(())
}

/// Files inside directories are read only when they look like data (`.yaml`, `.yml`, `.json`).
fn is_data_file(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

fn parse_error(path: &Path, doc: Option<usize>, message: impl std::fmt::Display) -> SnapshotError {
    SnapshotError::Parse {
        path: path.into(),
        doc,
        message: message.to_string(),
    }
}

/// Parses a file's text into documents (JSON or, failing that, multi-document YAML).
fn documents(path: &Path, text: &str) -> Result<Vec<Value>, SnapshotError> {
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(v) = serde_json::from_str::<Value>(text)
    {
        return Ok(vec![v]);
    }
    let mut docs = Vec::new();
    for (i, de) in serde_norway::Deserializer::from_str(text).enumerate() {
        let v: Value = serde::Deserialize::deserialize(de).map_err(|e| parse_error(path, Some(i + 1), e))?;
        if !v.is_null() {
            docs.push(v);
        }
    }
    Ok(docs)
}

fn load_file(path: &Path, state: &mut ClusterState) -> Result<usize, SnapshotError> {
    let text = std::fs::read_to_string(path).map_err(|error| SnapshotError::Read {
        path: path.into(),
        error,
    })?;
    load_text(path, &text, state)
}

/// Loads the objects of one file's text (YAML or JSON, as [`load`] accepts) into `state`;
/// `name` stands for the file in error messages. Used for embedded assets (the demo cluster).
/// Call [`ClusterState::sort`] after the last file.
///
/// # Errors
/// [`SnapshotError::Parse`] naming `name` (and the document) when the text does not decode.
pub fn load_str(name: &str, text: &str, state: &mut ClusterState) -> Result<(), SnapshotError> {
    load_text(Path::new(name), text, state).map(|_| ())
}

/// Returns how many objects of the kinds cvo reads were loaded.
fn load_text(path: &Path, text: &str, state: &mut ClusterState) -> Result<usize, SnapshotError> {
    let docs = documents(path, text)?;
    let multi = docs.len() > 1;
    let mut n = 0;
    for (i, doc) in docs.into_iter().enumerate() {
        let doc_no = multi.then_some(i + 1);
        n += add_value(path, doc_no, doc, state)?;
    }
    Ok(n)
}

fn add_value(
    path: &Path,
    doc: Option<usize>,
    v: Value,
    state: &mut ClusterState,
) -> Result<usize, SnapshotError> {
    if let Value::Array(items) = v {
        let mut n = 0;
        for item in items {
            n += add_value(path, doc, item, state)?;
        }
        return Ok(n);
    }
    let Value::Object(ref map) = v else {
        return Err(parse_error(
            path,
            doc,
            "expected a Kubernetes object (a mapping), found a scalar",
        ));
    };
    let kind = map.get("kind").and_then(Value::as_str).map(str::to_owned);
    let kind = match kind {
        Some(k) => k,
        None if map.get("items").is_some_and(Value::is_array) => "List".to_owned(),
        None => match infer_kind(path, &v) {
            Some(k) => k.to_owned(),
            None => return Ok(0),
        },
    };
    if kind == "List" || (kind.ends_with("List") && map.get("items").is_some()) {
        let items = map.get("items").cloned().unwrap_or(Value::Null);
        let item_kind = kind
            .strip_suffix("List")
            .filter(|k| !k.is_empty())
            .map(str::to_owned);
        let mut n = 0;
        if let Value::Array(items) = items {
            for mut item in items {
                if let (Some(k), Value::Object(m)) = (&item_kind, &mut item) {
                    m.entry("kind").or_insert_with(|| Value::String(k.clone()));
                }
                n += add_value(path, doc, item, state)?;
            }
        }
        return Ok(n);
    }
    match kind.as_str() {
        "ClusterVersion" => {
            let cv: crate::openshift::ClusterVersion = decode_object(path, doc, &kind, v)?;
            if let Some(old) = &state.cluster_version
                && (old.metadata.name != cv.metadata.name || old.metadata.uid != cv.metadata.uid)
            {
                return Err(SnapshotError::DuplicateClusterVersion {
                    path: path.into(),
                    name: cv.metadata.name.clone().unwrap_or_default(),
                });
            }
            state.cluster_version = Some(cv);
        }
        "ClusterOperator" => {
            let co: crate::openshift::ClusterOperator = decode_object(path, doc, &kind, v)?;
            upsert(path, "ClusterOperator", &mut state.cluster_operators, co)?;
        }
        "MachineConfigPool" => {
            let p: crate::openshift::MachineConfigPool = decode_object(path, doc, &kind, v)?;
            upsert(path, "MachineConfigPool", &mut state.machine_config_pools, p)?;
        }
        "MachineConfig" => {
            let mut v = v;
            if let Value::Object(m) = &mut v {
                m.remove("spec");
            }
            let mc: crate::openshift::MachineConfig = decode_object(path, doc, &kind, v)?;
            upsert(path, "MachineConfig", &mut state.machine_configs, mc)?;
        }
        "Node" => {
            let mut v = v;
            strip_managed_fields(&mut v);
            let n: Node = decode_object(path, doc, &kind, v)?;
            upsert(path, "Node", &mut state.nodes, n)?;
        }
        "Deployment" => {
            let d: Deployment = decode_object(path, doc, &kind, v)?;
            if d.metadata.name.as_deref() != Some("machine-config-operator") {
                return Ok(0);
            }
            state.mco_deployment = Some(d);
        }
        _ => return Ok(0),
    }
    Ok(1)
}

/// Decodes one object; an error names the object and the field path within it, e.g.
/// `ClusterOperator "dns": status.conditions[0].status: invalid type: sequence, ...`.
fn decode_object<T: serde::de::DeserializeOwned>(
    path: &Path,
    doc: Option<usize>,
    kind: &str,
    v: Value,
) -> Result<T, SnapshotError> {
    let name = v
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    serde_path_to_error::deserialize(v).map_err(|e| {
        let what = name.map_or_else(|| kind.to_owned(), |n| format!("{kind} {n:?}"));
        let field = e.path().to_string();
        let inner = e.into_inner();
        if field == "." || field.is_empty() {
            parse_error(path, doc, format!("{what}: {inner}"))
        } else {
            parse_error(path, doc, format!("{what}: {field}: {inner}"))
        }
    })
}

fn strip_managed_fields(v: &mut Value) {
    if let Some(Value::Object(meta)) = v.get_mut("metadata") {
        meta.remove("managedFields");
    }
}

/// Replaces an object of the same name, or appends it (later files win).
/// Objects of the same kind and name from two different clusters (their `uid`s differ) are
/// refused: mixing them would show a cluster that does not exist.
fn upsert<T: kube::Resource>(
    path: &Path,
    kind: &'static str,
    list: &mut Vec<T>,
    obj: T,
) -> Result<(), SnapshotError> {
    let meta = obj.meta();
    if let Some(slot) = list.iter_mut().find(|o| o.meta().name == meta.name) {
        let (old_uid, new_uid) = (slot.meta().uid.as_deref(), meta.uid.as_deref());
        if let (Some(a), Some(b)) = (old_uid, new_uid)
            && a != b
        {
            return Err(SnapshotError::MixedClusters {
                path: path.into(),
                kind,
                name: meta.name.clone().unwrap_or_default(),
            });
        }
        *slot = obj;
    } else {
        list.push(obj);
    }
    Ok(())
}

/// Infers the kind of an object that lacks `kind` (insights archives), from its path first and
/// then from the shape of its `status`.
fn infer_kind(path: &Path, v: &Value) -> Option<&'static str> {
    let p = path.to_string_lossy().to_ascii_lowercase();
    let file = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if p.contains("clusteroperator") {
        return Some("ClusterOperator");
    }
    if p.contains("machineconfigpool") {
        return Some("MachineConfigPool");
    }
    if p.contains("/nodes/") || p.contains("/node/") {
        return Some("Node");
    }
    if file == "version" || p.contains("clusterversion") {
        return Some("ClusterVersion");
    }
    let status = v.get("status")?;
    if status.get("desired").is_some() || status.get("history").is_some() {
        Some("ClusterVersion")
    } else if status.get("versions").is_some() || status.get("relatedObjects").is_some() {
        Some("ClusterOperator")
    } else if status.get("machineCount").is_some() {
        Some("MachineConfigPool")
    } else if status.get("nodeInfo").is_some() {
        Some("Node")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, text).expect("write");
        p
    }

    #[test]
    fn reads_lists_multi_documents_and_typed_lists() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            "a.yaml",
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: config.openshift.io/v1\n  kind: ClusterOperator\n  metadata: {name: dns}\n---\nkind: ClusterOperatorList\nitems:\n- metadata: {name: etcd}\n---\n",
        );
        write(
            dir.path(),
            "sub/b.json",
            r#"{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","managedFields":[{"manager":"x"}]}}"#,
        );
        write(dir.path(), "sub/notes.txt", "not read: no data extension");
        let s = load(&[dir.path().to_path_buf()]).expect("load");
        let names: Vec<&str> = s.cluster_operators.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["dns", "etcd"]);
        assert_eq!(s.nodes.len(), 1);
        assert!(
            s.nodes[0].metadata.managed_fields.is_none(),
            "managedFields dropped"
        );
        assert!(s.cluster_version.is_none());
    }

    #[test]
    fn infers_kind_from_path_and_shape() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            "config/version.json",
            r#"{"metadata":{"name":"version"},"status":{"desired":{"version":"4.7.16"}}}"#,
        );
        write(
            dir.path(),
            "config/clusteroperator/dns.json",
            r#"{"metadata":{"name":"dns"},"status":{}}"#,
        );
        write(
            dir.path(),
            "x/pool.json",
            r#"{"metadata":{"name":"worker"},"status":{"machineCount":3}}"#,
        );
        let s = load(&[dir.path().to_path_buf()]).expect("load");
        assert_eq!(
            s.cluster_version
                .as_ref()
                .map(|c| c.status.desired.version.as_str()),
            Some("4.7.16")
        );
        assert_eq!(s.cluster_operators.len(), 1);
        assert_eq!(s.machine_config_pools.len(), 1);
        assert_eq!(s.machine_config_pools[0].status.machine_count, 3);
    }

    #[test]
    fn errors_name_the_file_and_document() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = write(
            dir.path(),
            "two.yaml",
            "kind: Node\nmetadata: {name: a}\n---\nkind: Node\nmetadata: [\n",
        );
        let e = load(&[f]).expect_err("must fail").to_string();
        assert!(e.contains("two.yaml (document 2)"), "{e}");
        let f = write(dir.path(), "scalar.yaml", "42\n");
        let e = load(&[f]).expect_err("must fail").to_string();
        assert!(e.contains("scalar.yaml") && e.contains("scalar"), "{e}");
        let f = write(
            dir.path(),
            "cv.yaml",
            "kind: ClusterVersion\nmetadata: {name: version}\nspec: {channel: 5}\n",
        );
        let e = load(&[f]).expect_err("must fail").to_string();
        assert!(
            e.contains("cv.yaml: ClusterVersion \"version\": spec.channel: invalid type: integer"),
            "{e}"
        );
    }

    #[test]
    fn two_different_cluster_versions_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            "a.yaml",
            "kind: ClusterVersion\nmetadata: {name: version, uid: a}\n",
        );
        write(
            dir.path(),
            "b.yaml",
            "kind: ClusterVersion\nmetadata: {name: version, uid: b}\n",
        );
        let e = load(&[dir.path().to_path_buf()]).expect_err("must fail");
        assert!(matches!(e, SnapshotError::DuplicateClusterVersion { .. }), "{e}");
    }

    #[test]
    fn snapshot_time_is_latest_condition_plus_offset() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = write(
            dir.path(),
            "cv.yaml",
            "kind: ClusterVersion\nmetadata: {name: version}\nstatus:\n  conditions:\n  - {type: Available, status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z'}\n  - {type: Progressing, status: 'True', lastTransitionTime: '2024-01-02T00:00:00Z'}\n",
        );
        let s = load(&[f]).expect("load");
        let t = s.snapshot_time().expect("time");
        assert_eq!(
            t.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true),
            "2024-01-02T00:00:00.000368975Z"
        );
    }
}

#[cfg(test)]
mod mixed_cluster_tests {
    use super::*;

    #[test]
    fn operators_of_two_clusters_are_refused_but_rereads_of_one_are_merged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.yaml");
        let b = dir.path().join("b.yaml");
        let c = dir.path().join("c.yaml");
        std::fs::write(&a, "kind: ClusterOperator\nmetadata: {name: dns, uid: one}\n").expect("write");
        std::fs::write(&b, "kind: ClusterOperator\nmetadata: {name: dns, uid: one}\nstatus: {versions: [{name: operator, version: '2'}]}\n").expect("write");
        std::fs::write(&c, "kind: ClusterOperator\nmetadata: {name: dns, uid: two}\n").expect("write");
        let s = load(&[a.clone(), b]).expect("same cluster merges");
        assert_eq!(s.cluster_operators.len(), 1);
        assert_eq!(
            s.cluster_operators[0].operator_version(),
            Some("2"),
            "later file wins"
        );
        let e = load(&[a, c]).expect_err("two clusters");
        assert!(
            matches!(
                e,
                SnapshotError::MixedClusters {
                    kind: "ClusterOperator",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("c.yaml: ClusterOperator \"dns\""), "{e}");
    }
}

#[cfg(test)]
mod empty_tests {
    use super::*;

    #[test]
    fn a_path_with_nothing_cvo_reads_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = dir.path().join("empty.yaml");
        std::fs::write(&empty, "").expect("write");
        let other = dir.path().join("cm.yaml");
        std::fs::write(&other, "kind: ConfigMap\nmetadata: {name: x}\n").expect("write");
        for p in [&empty, &other] {
            let e = load(std::slice::from_ref(p)).expect_err("nothing to read");
            assert!(matches!(e, SnapshotError::Empty { .. }), "{e}");
            assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
        }
        let node = dir.path().join("node.yaml");
        std::fs::write(&node, "kind: Node\nmetadata: {name: n}\n").expect("write");
        // A directory counts as a whole: one readable file is enough.
        assert!(load(&[dir.path().to_path_buf()]).is_ok());
    }
}
