//! Port of openshift/library-go `pkg/manifest/manifest.go` (`ParseManifests`, `Manifest`).
//!
//! A manifest is one Kubernetes object of a payload file: its object (kept as compact JSON text
//! and parsed into a [`serde_json::Value`] when asked), its identity (group, kind, namespace,
//! name), the file it came from and its document index there, its annotations, and its `raw`
//! bytes: the JSON form upstream keeps in `Manifest.Raw` and hashes into the payload's
//! `versionHash`.

use std::{collections::BTreeMap, fmt, path::Path};

use serde::de::DeserializeSeed;
use serde_json::Value;

use super::yaml::{MAX_YAML_DEPTH, NodeBudget, too_deep_flow};

/// The identity of a manifest's object, unique within one file
/// (library-go `resourceId`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceId {
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind, e.g. `Deployment`.
    pub kind: String,
    /// Namespace, `""` for cluster-scoped objects.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

impl fmt::Display for ResourceId {
    /// `Group: "g" Kind: "k" [Namespace: "ns" ]Name: "n"`, as library-go prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(
                f,
                "Group: {:?} Kind: {:?} Name: {:?}",
                self.group, self.kind, self.name
            )
        } else {
            write!(
                f,
                "Group: {:?} Kind: {:?} Namespace: {:?} Name: {:?}",
                self.group, self.kind, self.namespace, self.name
            )
        }
    }
}

/// One object of a payload file.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// Base name of the file the object came from (upstream `OriginalFilename`); run level and
    /// component are parsed from it.
    pub file: String,
    /// Path of the file relative to the directory given to the loader (differs from `file` only
    /// when subdirectories were merged, see [`super::load::PayloadLayout::Tree`]).
    pub path: String,
    /// 0-based index of the document in its file (empty documents count too).
    pub index: usize,
    /// For an item of a `kind: List` document: its 0-based position in `items`.
    pub item: Option<usize>,
    /// `apiVersion` split: group (`""` for core) ...
    pub group: String,
    /// ... and version.
    pub version: String,
    /// Kind, namespace and name (and group again) as the identity upstream compares.
    pub id: ResourceId,
    /// `metadata.annotations` (all values are strings).
    pub annotations: BTreeMap<String, String>,
    /// Whether the object has a `metadata.annotations` field at all (library-go's filter tells
    /// an empty map from an absent one).
    annotations_field: bool,
    /// The whole object as compact JSON (keys sorted, as serializing its `Value` gives):
    /// [`Manifest::object`] parses it. A payload is held for the whole life of the process and
    /// a parsed tree costs about eight times its text; the apply layer needs the tree only for
    /// the manifests it builds a request from, not for those a converged pass finds verified.
    text: Box<str>,
    /// A JSON document's own text (trimmed), which upstream hashes as it is; `None` for a YAML
    /// document, whose bytes [`Manifest::raw`] makes again from the object when the payload
    /// hash needs them (keeping them would cost about 1 KiB per manifest for one hash per load).
    json_text: Option<Box<[u8]>>,
    /// [`Manifest::digest`], computed on first use.
    digest: Digest,
}

/// A lazily computed [`Manifest::digest`]; two manifests compare equal whether or not theirs
/// was computed (it follows from the object).
#[derive(Clone, Debug, Default)]
struct Digest(std::sync::OnceLock<u64>);

impl PartialEq for Digest {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What is wrong with one document of a file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}#{index}: {message}")]
pub struct ManifestError {
    /// The file (as given to the loader, relative to its directory).
    pub path: String,
    /// 0-based document index (for errors about the whole file: the document where reading
    /// stopped).
    pub index: usize,
    /// What is wrong, e.g. `missing metadata.name`.
    pub message: String,
}

/// The annotation that marks a manifest for deletion (lib/resourcedelete).
pub(crate) const DELETE_ANNOTATION: &str = "release.openshift.io/delete";
/// The annotation that makes a manifest create-only (lib/resourceapply).
pub(crate) const CREATE_ONLY_ANNOTATION: &str = "release.openshift.io/create-only";
/// The annotation naming a manifest's capabilities (`a+b`).
pub(crate) const CAPABILITY_ANNOTATION: &str = "capability.openshift.io/name";

/// Why a document is not a manifest (library-go `lib/manifest/manifest.go` checks), or why a
/// manifest's delete annotation is invalid. Each displays as one line; the caller adds the file
/// and index.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvalidManifest {
    /// The document is not a JSON object; the field is what it is (`an array`, ...).
    #[error("not an object but {0}")]
    NotAnObject(&'static str),
    /// A field that must be a string is something else: (field path, what it is).
    #[error("{0} is {1}, not a string")]
    NotAString(String, &'static str),
    /// A field that must be an object is something else: (field path, what it is).
    #[error("{0} is {1}, not an object")]
    NotAnObjectField(&'static str, &'static str),
    /// `kind` or `metadata.name` is empty; the field is the resource id as displayed.
    #[error("resource with fields {0} must contain kubernetes required fields kind and name")]
    MissingKindOrName(String),
    /// `release.openshift.io/delete` has a value other than `true` (the value).
    #[error("invalid delete annotation {DELETE_ANNOTATION:?} value: {value:?}")]
    InvalidDeleteAnnotation {
        /// The annotation's value.
        value: String,
    },
}

impl Manifest {
    /// Builds a manifest from an object, checking the identity as library-go does: `kind` and
    /// `metadata.name` are required (except for `List`s, whose items are separate manifests),
    /// annotations must be strings. `raw` is computed with [`go_json`].
    ///
    /// # Errors
    /// A one-line description of the first problem (the caller adds file and index).
    pub fn from_object(object: Value, file: &str, index: usize) -> Result<Manifest, InvalidManifest> {
        Self::from_object_raw(object, None, file, index)
    }

    /// Like [`Manifest::from_object`] with a JSON document's own text (`raw`, kept for
    /// [`Manifest::raw`]); `None` makes the bytes with [`go_json`] when asked.
    ///
    /// # Errors
    /// As [`Manifest::from_object`].
    pub(crate) fn from_object_raw(
        object: Value,
        raw: Option<Vec<u8>>,
        file: &str,
        index: usize,
    ) -> Result<Manifest, InvalidManifest> {
        let Value::Object(map) = &object else {
            return Err(InvalidManifest::NotAnObject(kind_of(&object)));
        };
        let api_version = match map.get("apiVersion") {
            None | Some(Value::Null) => "",
            Some(Value::String(s)) => s.as_str(),
            Some(v) => return Err(InvalidManifest::NotAString("apiVersion".into(), kind_of(v))),
        };
        let kind = match map.get("kind") {
            None | Some(Value::Null) => "",
            Some(Value::String(s)) => s.as_str(),
            Some(v) => return Err(InvalidManifest::NotAString("kind".into(), kind_of(v))),
        };
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.to_string()),
        };
        let meta = match map.get("metadata") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(v) => return Err(InvalidManifest::NotAnObjectField("metadata", kind_of(v))),
        };
        let meta_str = |key: &str| -> Result<String, InvalidManifest> {
            match meta.and_then(|m| m.get(key)) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(v) => Err(InvalidManifest::NotAString(format!("metadata.{key}"), kind_of(v))),
            }
        };
        let name = meta_str("name")?;
        let namespace = meta_str("namespace")?;
        let mut annotations = BTreeMap::new();
        match meta.and_then(|m| m.get("annotations")) {
            None | Some(Value::Null) => {}
            Some(Value::Object(a)) => {
                for (k, v) in a {
                    match v {
                        Value::String(s) => {
                            annotations.insert(k.clone(), s.clone());
                        }
                        other => {
                            return Err(InvalidManifest::NotAString(
                                format!("metadata.annotations[{k:?}]"),
                                kind_of(other),
                            ));
                        }
                    }
                }
            }
            Some(v) => {
                return Err(InvalidManifest::NotAnObjectField(
                    "metadata.annotations",
                    kind_of(v),
                ));
            }
        }
        let annotations_field = meta.is_some_and(|m| m.contains_key("annotations"));
        let id = ResourceId {
            group: group.clone(),
            kind: kind.to_string(),
            namespace,
            name,
        };
        if id.kind.is_empty() || id.name.is_empty() {
            return Err(InvalidManifest::MissingKindOrName(id.to_string()));
        }
        // Serializing a `Value` cannot fail (its keys are strings).
        let text = serde_json::to_string(&object)
            .unwrap_or_default()
            .into_boxed_str();
        Ok(Manifest {
            file: file.to_string(),
            path: file.to_string(),
            index,
            item: None,
            group,
            version,
            id,
            annotations,
            annotations_field,
            text,
            json_text: raw.map(Vec::into_boxed_slice),
            digest: Digest::default(),
        })
    }

    /// The bytes upstream hashes into the payload's `versionHash`: for a JSON document its text
    /// (trimmed), for a YAML document the compact JSON Go's `sigs.k8s.io/yaml` produces (sorted
    /// keys, `<>&` escaped, [`go_json`]), made on each call.
    pub fn raw(&self) -> std::borrow::Cow<'_, [u8]> {
        match &self.json_text {
            Some(t) => std::borrow::Cow::Borrowed(t),
            None => std::borrow::Cow::Owned(go_json(&self.object()).into_bytes()),
        }
    }

    /// The whole object, parsed from the compact text the manifest keeps (one parse per call:
    /// hold on to the result rather than asking twice).
    pub fn object(&self) -> Value {
        // The text is what serializing a `Value` wrote, so it parses; `Null` would be a bug.
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// The object's compact JSON text (keys sorted), as [`Manifest::object`] parses it.
    pub fn object_text(&self) -> &str {
        &self.text
    }

    /// Whether the object has a `metadata.annotations` field, even an empty one.
    pub(crate) fn has_annotations_field(&self) -> bool {
        self.annotations_field
    }

    /// The digest of the object the apply layer's verification record is keyed by
    /// ([`super::digest::object_digest`]), computed once per manifest:
    /// a converged pass re-applies every manifest, and the payload does not change under it.
    pub fn digest(&self) -> u64 {
        *self
            .digest
            .0
            .get_or_init(|| super::digest::text_digest(&self.text))
    }

    /// `file#index` (or `file#index.item` for a List item): how tasks are named in
    /// `cvo payload inspect`.
    pub fn label(&self) -> String {
        match self.item {
            Some(i) => format!("{}#{}.{}", self.path, self.index, i),
            None => format!("{}#{}", self.path, self.index),
        }
    }

    /// True for a `batch/v1` Job (upstream `SplitOnJobs`).
    pub fn is_job(&self) -> bool {
        self.group == "batch" && self.version == "v1" && self.id.kind == "Job"
    }

    /// The capabilities named by `capability.openshift.io/name` (split on `+`; empty value ⇒
    /// none).
    pub fn capabilities(&self) -> Vec<String> {
        match self.annotations.get(CAPABILITY_ANNOTATION) {
            None => Vec::new(),
            Some(v) if v.is_empty() => Vec::new(),
            Some(v) => v.split('+').map(str::to_string).collect(),
        }
    }

    /// Whether the manifest asks for deletion (`release.openshift.io/delete: "true"`).
    ///
    /// # Errors
    /// Any other value of the annotation (lib/resourcedelete `ValidDeleteAnnotation`).
    pub fn delete_requested(&self) -> Result<bool, InvalidManifest> {
        match self.annotations.get(DELETE_ANNOTATION) {
            None => Ok(false),
            Some(v) if v == "true" => Ok(true),
            Some(v) => Err(InvalidManifest::InvalidDeleteAnnotation { value: v.clone() }),
        }
    }

    /// Whether the manifest is create-only (`release.openshift.io/create-only`, `true` in any
    /// case).
    pub fn create_only(&self) -> bool {
        self.annotations
            .get(CREATE_ONLY_ANNOTATION)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Parses the documents of one file (library-go `ParseManifests`): a JSON stream when the first
/// non-blank byte is `{`, multi-document YAML otherwise. Empty and `null` documents are skipped;
/// a `kind: List` document yields one manifest per item. Identity is unique within a file.
///
/// `path` names the file in errors and in [`Manifest::path`]; the run-level name is its base
/// name.
///
/// # Errors
/// Every bad document of the file (reading stops at a YAML/JSON syntax error, since the
/// document boundaries after it are unknown).
pub fn parse_manifests(data: &[u8], path: &str) -> Result<Vec<Manifest>, Vec<ManifestError>> {
    let file = Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |f| f.to_string_lossy().into_owned());
    let mut docs: Vec<(usize, Value, Option<Vec<u8>>)> = Vec::new();
    let mut errors = Vec::new();
    let err = |index: usize, message: String| ManifestError {
        path: path.to_string(),
        index,
        message,
    };
    let first = data.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'{') {
        let mut stream = serde_json::Deserializer::from_slice(data).into_iter::<Value>();
        let mut index = 0;
        loop {
            let start = stream.byte_offset();
            match stream.next() {
                None => break,
                Some(Ok(v)) => {
                    let end = stream.byte_offset();
                    let raw = data.get(start..end).unwrap_or_default().trim_ascii().to_vec();
                    docs.push((index, v, Some(raw)));
                }
                Some(Err(e)) => {
                    errors.push(err(index, format!("invalid JSON: {e}")));
                    break;
                }
            }
            index += 1;
        }
    } else {
        let text = match std::str::from_utf8(data) {
            Ok(t) => t,
            Err(e) => return Err(vec![err(0, format!("not UTF-8 text: {e}"))]),
        };
        if let Some((index, line)) = too_deep_flow(text) {
            return Err(vec![err(
                index,
                format!(
                    "invalid YAML: flow collections ([ and {{) nested more than {MAX_YAML_DEPTH} deep at line {line}"
                ),
            )]);
        }
        let budget = NodeBudget::for_text(text);
        for (index, de) in serde_norway::Deserializer::from_str(text).enumerate() {
            match budget.node().deserialize(de) {
                Ok(v) => docs.push((index, v, None)),
                Err(e) => {
                    errors.push(err(index, format!("invalid YAML: {e}")));
                    break;
                }
            }
        }
    }

    let mut out: Vec<Manifest> = Vec::new();
    let mut seen: BTreeMap<ResourceId, usize> = BTreeMap::new();
    let mut push = |m: Manifest, errors: &mut Vec<ManifestError>| {
        if let Some(prev) = seen.get(&m.id) {
            errors.push(err(
                m.index,
                format!("duplicate resource: ({}), first in document {prev}", m.id),
            ));
        } else {
            seen.insert(m.id.clone(), m.index);
            out.push(m);
        }
    };
    for (index, value, raw) in docs {
        if value.is_null() {
            continue;
        }
        let is_list = value.get("kind").and_then(Value::as_str) == Some("List")
            && value.get("items").is_some_and(Value::is_array);
        if is_list {
            let items = value
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (i, item) in items.into_iter().enumerate() {
                match Manifest::from_object(item, &file, index) {
                    Ok(mut m) => {
                        m.item = Some(i);
                        m.path = path.to_string();
                        push(m, &mut errors);
                    }
                    Err(e) => errors.push(err(index, format!("items[{i}]: {e}"))),
                }
            }
            continue;
        }
        let parsed = Manifest::from_object_raw(value, raw, &file, index);
        match parsed {
            Ok(mut m) => {
                m.path = path.to_string();
                push(m, &mut errors);
            }
            Err(e) => errors.push(err(index, e.to_string())),
        }
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// Serialises a value as Go's `encoding/json` `Marshal` of the same data does after
/// `sigs.k8s.io/yaml.YAMLToJSON`: compact, object keys sorted by bytes, `<`, `>`, `&`, U+2028 and
/// U+2029 escaped as `\u00XX`/`\u20XX`, floats in Go's shortest form (`1e+21`, `1e-07`).
pub(crate) fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_go_json(v, &mut out);
    out
}

fn write_go_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else if let Some(f) = n.as_f64() {
                out.push_str(&go_float(f));
            }
        }
        Value::String(s) => write_go_string(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(k, out);
                out.push(':');
                if let Some(x) = m.get(k) {
                    write_go_json(x, out);
                }
            }
            out.push('}');
        }
    }
}

fn go_float(f: f64) -> String {
    let a = f.abs();
    if a != 0.0 && !(1e-6..1e21).contains(&a) {
        let s = format!("{f:e}");
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', exp),
        };
        format!("{mant}e{sign}{digits:0>2}")
    } else {
        format!("{f}")
    }
}

fn write_go_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_object_is_kept_as_compact_text_and_parses_back_to_what_was_loaded() {
        let yaml = b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: ns\n  annotations: {}\nspec:\n  replicas: 3\n  ratio: 0.25\n  big: 18446744073709551615\n  neg: -7\n  s: \"<&>\\u00e9\"\n  list: [b, a, {z: 1, y: null}]\n";
        let ms = parse_manifests(yaml, "0000_50_d.yaml").unwrap();
        let m = &ms[0];
        let expected = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "ns", "annotations": {}},
            "spec": {"replicas": 3, "ratio": 0.25, "big": 18446744073709551615u64, "neg": -7,
                "s": "<&>\u{e9}", "list": ["b", "a", {"z": 1, "y": null}]}});
        assert_eq!(m.object(), expected);
        // Keys sorted, no whitespace: the text is what serializing the tree gives, so its digest
        // is the tree's without a parse.
        assert_eq!(m.object_text(), serde_json::to_string(&expected).unwrap());
        assert!(
            m.object_text()
                .starts_with(r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"#)
        );
        assert_eq!(m.digest(), super::super::digest::object_digest(&expected));
        assert_eq!(m.digest(), super::super::digest::text_digest(m.object_text()));
        // An empty annotations map is told from an absent one (library-go's filter).
        assert!(m.has_annotations_field() && m.annotations.is_empty());
        let bare = Manifest::from_object(
            serde_json::json!({"kind": "A", "metadata": {"name": "a"}}),
            "f.yaml",
            0,
        )
        .unwrap();
        assert!(!bare.has_annotations_field());
        // Two loads of the same object are equal, a different object is not.
        assert_eq!(parse_manifests(yaml, "0000_50_d.yaml").unwrap()[0], *m);
        assert_ne!(bare, *m);
    }

    #[test]
    fn invalid_manifest_messages() {
        let m = Manifest::from_object(
            serde_json::json!({"kind": "ConfigMap", "metadata": {"name": "a",
                "annotations": {DELETE_ANNOTATION: "yes"}}}),
            "f.yaml",
            0,
        )
        .expect("manifest");
        assert_eq!(
            m.delete_requested().expect_err("invalid").to_string(),
            "invalid delete annotation \"release.openshift.io/delete\" value: \"yes\""
        );
        let e = Manifest::from_object(serde_json::json!([1]), "f.yaml", 0).expect_err("list");
        assert_eq!(e.to_string(), "not an object but a list");
        let e = Manifest::from_object(serde_json::json!({"kind": 1}), "f.yaml", 0).expect_err("kind");
        assert_eq!(e.to_string(), "kind is a number, not a string");
        let e = Manifest::from_object(
            serde_json::json!({"kind": "A", "metadata": {"annotations": []}}),
            "f.yaml",
            0,
        )
        .expect_err("annotations");
        assert_eq!(e.to_string(), "metadata.annotations is a list, not an object");
    }

    #[test]
    fn go_json_sorts_keys_and_escapes_like_go() {
        let v: Value = serde_json::from_str(r#"{"b":1,"a":"<x&y>","c":[1.5,1e21,1e-7,2.0]}"#).unwrap();
        assert_eq!(
            go_json(&v),
            r#"{"a":"\u003cx\u0026y\u003e","b":1,"c":[1.5,1e+21,1e-07,2]}"#
        );
    }

    #[test]
    fn yaml_multi_doc_skips_empty_and_counts_indexes() {
        let y = "kind: A\nmetadata: {name: a}\n---\n---\nkind: B\nmetadata: {name: b, namespace: n}\n";
        let ms = parse_manifests(y.as_bytes(), "dir/0000_10_x_y.yaml").unwrap();
        assert_eq!(ms.len(), 2);
        assert_eq!(ms[1].index, 2);
        assert_eq!(ms[1].file, "0000_10_x_y.yaml");
        assert_eq!(ms[1].label(), "dir/0000_10_x_y.yaml#2");
        assert_eq!(
            ms[1].raw().as_ref(),
            &br#"{"kind":"B","metadata":{"name":"b","namespace":"n"}}"#[..]
        );
    }

    #[test]
    fn list_items_become_manifests() {
        let y = "apiVersion: v1\nkind: List\nitems:\n- {kind: A, metadata: {name: a}}\n- {kind: A, metadata: {name: b}}\n";
        let ms = parse_manifests(y.as_bytes(), "l.yaml").unwrap();
        assert_eq!(
            ms.iter().map(|m| m.label()).collect::<Vec<_>>(),
            ["l.yaml#0.0", "l.yaml#0.1"]
        );
    }

    #[test]
    fn bad_documents_all_reported() {
        let y = "kind: A\n---\nkind: A\nmetadata: {name: a}\n---\nkind: A\nmetadata: {name: a}\n---\n[1]\n";
        let errs = parse_manifests(y.as_bytes(), "f.yaml").unwrap_err();
        let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(
            text[0].starts_with("f.yaml#0: resource with fields"),
            "{}",
            text[0]
        );
        assert!(text[1].starts_with("f.yaml#2: duplicate resource"), "{}", text[1]);
        assert_eq!(text[2], "f.yaml#3: not an object but a list");
    }

    #[test]
    fn json_raw_is_the_document_text() {
        let j = b"  {\"kind\": \"A\", \"metadata\": {\"name\": \"a\"}}\n{\"kind\":\"B\",\"metadata\":{\"name\":\"b\"}}";
        let ms = parse_manifests(j, "f.json").unwrap();
        assert_eq!(
            ms[0].raw().as_ref(),
            &br#"{"kind": "A", "metadata": {"name": "a"}}"#[..]
        );
        assert_eq!(ms[1].index, 1);
    }
}
