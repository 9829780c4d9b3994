//! Port of openshift/library-go `pkg/manifest/manifest.go` (`ParseManifests`, `Manifest`).
//!
//! A manifest is one Kubernetes object of a payload file: its raw object as
//! [`serde_json::Value`], its identity (group, kind, namespace, name), the file it came from and
//! its document index there, its annotations, and its `raw` bytes: the JSON form upstream keeps
//! in `Manifest.Raw` and hashes into the payload's `versionHash`.

use std::{collections::BTreeMap, fmt, path::Path};

use serde::{Deserialize, de::DeserializeSeed};
use serde_json::Value;

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
    /// The whole object.
    pub object: Value,
    /// The bytes upstream hashes: for a JSON document its text (trimmed), for a YAML document
    /// the compact JSON Go's `sigs.k8s.io/yaml` produces (sorted keys, `<>&` escaped).
    pub raw: Vec<u8>,
    /// [`Manifest::digest`], computed on first use.
    digest: Digest,
}

/// A lazily computed [`Manifest::digest`]; two manifests compare equal whether or not theirs
/// was computed (it follows from `object`).
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
        let raw = go_json(&object).into_bytes();
        Self::from_object_raw(object, raw, file, index)
    }

    /// Like [`Manifest::from_object`] with the raw bytes given (a JSON document's own text).
    ///
    /// # Errors
    /// As [`Manifest::from_object`].
    pub(crate) fn from_object_raw(
        object: Value,
        raw: Vec<u8>,
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
        let id = ResourceId {
            group: group.clone(),
            kind: kind.to_string(),
            namespace,
            name,
        };
        if id.kind.is_empty() || id.name.is_empty() {
            return Err(InvalidManifest::MissingKindOrName(id.to_string()));
        }
        Ok(Manifest {
            file: file.to_string(),
            path: file.to_string(),
            index,
            item: None,
            group,
            version,
            id,
            annotations,
            object,
            raw,
            digest: Digest::default(),
        })
    }

    /// The digest of `object` the apply layer's verification record is keyed by
    /// ([`crate::reconcile::apply::watch_cache::object_digest`]), computed once per manifest:
    /// a converged pass re-applies every manifest, and the payload does not change under it.
    /// `object` is not to be changed after the first call (the loader never does).
    pub fn digest(&self) -> u64 {
        *self
            .digest
            .0
            .get_or_init(|| crate::reconcile::apply::watch_cache::object_digest(&self.object))
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
        let parsed = match raw {
            Some(r) => Manifest::from_object_raw(value, r, &file, index),
            None => Manifest::from_object(value, &file, index),
        };
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

/// How deep YAML collections may nest: the YAML deserializer's own recursion limit, which it
/// enforces only after libyaml has scanned the whole document. libyaml's scanner spends time
/// proportional to the flow depth (`[`, `{`) on every token, so a document of 100k `[` takes
/// quadratic time before that limit is reached; [`too_deep_flow`] refuses it first, in one pass.
pub(crate) const MAX_YAML_DEPTH: usize = 128;

/// How many values (scalars, collections and mapping keys) a file may expand to beyond one per
/// byte of its text. A YAML file without aliases has fewer values than bytes; aliases repeat
/// the anchored value each time, so a small file can expand quadratically or exponentially (an
/// alias bomb). The allowance (as go-yaml's, whose limit starts at 400,000 decoded values) lets
/// ordinary use of anchors through while keeping the work linear in the file's size.
pub(crate) const YAML_ALIAS_ALLOWANCE: usize = 400_000;

/// Parses a one-document YAML text (JSON is YAML) into a value, with the depth and
/// [`YAML_ALIAS_ALLOWANCE`] limits of [`parse_manifests`].
///
/// # Errors
/// Syntax errors, several documents, nesting deeper than [`MAX_YAML_DEPTH`], or more values
/// than the text's bytes plus the allowance.
pub(crate) fn yaml_value(text: &str) -> Result<Value, String> {
    if let Some((_, line)) = too_deep_flow(text) {
        return Err(format!(
            "flow collections ([ and {{) nested more than {MAX_YAML_DEPTH} deep at line {line}"
        ));
    }
    NodeBudget::for_text(text)
        .node()
        .deserialize(serde_norway::Deserializer::from_str(text))
        .map_err(|e| e.to_string())
}

/// A count of the values a file's documents may still produce (shared by all its documents,
/// so many small documents cannot each spend a full budget).
struct NodeBudget {
    left: std::cell::Cell<usize>,
    total: usize,
}

impl NodeBudget {
    fn for_text(text: &str) -> Self {
        let total = text.len().saturating_add(YAML_ALIAS_ALLOWANCE);
        NodeBudget {
            left: std::cell::Cell::new(total),
            total,
        }
    }

    fn node(&self) -> BudgetedValue<'_> {
        BudgetedValue(self)
    }

    fn spend<E: serde::de::Error>(&self) -> Result<(), E> {
        match self.left.get().checked_sub(1) {
            Some(n) => {
                self.left.set(n);
                Ok(())
            }
            None => Err(E::custom(format_args!(
                "more than {} values after expanding aliases (the file's size in bytes plus \
                 {YAML_ALIAS_ALLOWANCE}); is it an alias bomb?",
                self.total
            ))),
        }
    }
}

/// Builds a [`Value`] as serde_json's own deserialization does, spending one unit of its
/// [`NodeBudget`] per value and per mapping key, so that the work stops, in time linear in the
/// file's size, once aliases have expanded it past the budget.
#[derive(Clone, Copy)]
struct BudgetedValue<'b>(&'b NodeBudget);

impl<'de> serde::de::DeserializeSeed<'de> for BudgetedValue<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for BudgetedValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.0.spend()?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.0.spend()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.0.spend()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Value, E> {
        self.0.spend()?;
        serde_json::Number::deserialize(serde::de::value::I128Deserializer::<E>::new(v)).map(Value::Number)
    }

    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Value, E> {
        self.0.spend()?;
        serde_json::Number::deserialize(serde::de::value::U128Deserializer::<E>::new(v)).map(Value::Number)
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.0.spend()?;
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.0.spend()?;
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.0.spend()?;
        Ok(Value::String(v))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.0.spend()?;
        Ok(Value::Null)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.0.spend()?;
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::de::DeserializeSeed::deserialize(self, d)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.0.spend()?;
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.spend()?;
        let mut out = serde_json::Map::new();
        while let Some(k) = map.next_key::<String>()? {
            self.0.spend()?;
            let v = map.next_value_seed(self)?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// Finds, in one pass over a YAML text, the first place where flow collections (`[`, `{`) nest
/// deeper than [`MAX_YAML_DEPTH`]: `Some((document index, line))`. The scan follows libyaml's
/// scanner far enough to see the flow collections it would see: quoted scalars, comments, block
/// scalars (their lines, by libyaml's indentation rule, with the parent's column taken from the
/// key or `-` on the header's line) and plain scalars continued on more indented lines are text;
/// where the column of the enclosing block collection is unknown it assumes a continuation,
/// the reading under which libyaml stops with an error within one line (a simple key's limit)
/// instead of nesting further. Linear in the text's length.
fn too_deep_flow(text: &str) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(b'\n');
    let blank = |c: u8| c == b' ' || c == b'\t' || c == b'\r' || c == b'\n';
    let indent_at = |i: usize| {
        b.get(i..)
            .unwrap_or_default()
            .iter()
            .take_while(|&&c| c == b' ')
            .count()
    };
    // Index of the line break ending the line that holds `i` (or the text's end).
    let line_end = |i: usize| {
        b.get(i..)
            .unwrap_or_default()
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| i + p)
    };
    // Whether the line starting at `i` holds only spaces (or the text has ended).
    let empty_line = |i: usize| {
        let j = i + indent_at(i);
        j >= b.len() || b[j] == b'\n' || b[j] == b'\r'
    };
    let document_marker =
        |i: usize| (b[i..].starts_with(b"---") || b[i..].starts_with(b"...")) && blank(at(i + 3));
    let (mut depth, mut doc, mut line) = (0usize, 0usize, 1usize);
    // Block context: whether a node may start here (so `[` opens a flow collection).
    let mut node_start = true;
    // Block context: the column of the block collection the current node is in (libyaml's
    // indent) as this line tells it (a key's or a `-`'s column), -1 when unknown.
    let mut parent: isize = -1;
    // Block context: the column of the node being scanned (a key, once `: ` follows it).
    let mut node_col: isize = 0;
    // Block context: an open plain scalar continues on lines indented more than this.
    let mut plain: Option<isize> = None;
    // Flow context: the last non-blank byte, to tell a quote opening a scalar from one inside it.
    let mut prev = b'[';
    let mut line_start = 0usize;
    let mut i = if !b.is_empty() && document_marker(0) { 3 } else { 0 };
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
            line_start = i;
            if depth == 0 {
                let continued = plain.is_some_and(|p| empty_line(i) || indent_at(i) as isize > p);
                if i < b.len() && document_marker(i) {
                    doc += usize::from(b[i] == b'-');
                    plain = None;
                    node_start = true;
                    parent = -1;
                    i += 3;
                } else if continued {
                    node_start = false;
                } else {
                    plain = None;
                    node_start = true;
                    parent = -1;
                }
            }
            continue;
        }
        if c == b'#' && (i == 0 || blank(b[i - 1])) {
            plain = None;
            i = line_end(i);
            continue;
        }
        let quote = c == b'\'' || c == b'"';
        if depth > 0 {
            match c {
                b'[' | b'{' => depth += 1,
                b']' | b'}' => depth -= 1,
                _ if quote && (blank(at(i.wrapping_sub(1))) || b"[]{},:?".contains(&prev)) => {
                    i = skip_quoted(b, i, &mut line);
                    prev = c;
                    continue;
                }
                _ => {}
            }
            if depth > MAX_YAML_DEPTH {
                return Some((doc, line));
            }
            if !blank(c) {
                prev = c;
            }
            if depth == 0 {
                node_start = false;
            }
            i += 1;
            continue;
        }
        if blank(c) {
            i += 1;
            continue;
        }
        let col = (i - line_start) as isize;
        if !node_start {
            // Inside a plain scalar or after a complete node: only `: ` starts a value.
            if c == b':' && blank(at(i + 1)) {
                node_start = true;
                plain = None;
                parent = node_col;
            }
            i += 1;
            continue;
        }
        match c {
            b'[' | b'{' => {
                depth = 1;
                prev = c;
                plain = None;
                i += 1;
            }
            _ if quote => {
                node_col = col;
                i = skip_quoted(b, i, &mut line);
                node_start = false;
            }
            b'-' | b'?' if blank(at(i + 1)) => {
                parent = col;
                i += 1;
            }
            b':' if blank(at(i + 1)) => i += 1,
            b'&' | b'!' => {
                // An anchor or tag: the node follows it.
                node_col = col;
                while i < b.len() && !blank(b[i]) {
                    i += 1;
                }
            }
            b'|' | b'>' => {
                // A block scalar: its content is the lines indented at least as much as its
                // first non-empty line (or as the explicit indentation indicator says), which
                // must be more than the parent's column.
                let mut explicit = None;
                i += 1;
                while i < b.len() && !blank(b[i]) {
                    if b[i].is_ascii_digit() {
                        explicit = Some(isize::from(b[i] - b'0'));
                    }
                    i += 1;
                }
                i = line_end(i);
                let content = match explicit {
                    Some(m) => Some(parent.max(0) + m),
                    None => {
                        let mut j = i;
                        while j < b.len() && empty_line(j + 1) && j + 1 < b.len() {
                            j = line_end(j + 1);
                        }
                        let d = indent_at(j + 1) as isize;
                        (j < b.len() && d > parent && d >= 1).then_some(d)
                    }
                };
                if let Some(content) = content {
                    while i < b.len() && (empty_line(i + 1) || indent_at(i + 1) as isize >= content) {
                        i = line_end(i + 1);
                        line += 1;
                    }
                }
                node_start = false;
            }
            _ => {
                node_col = col;
                node_start = false;
                plain = Some(parent);
                i += 1;
            }
        }
    }
    None
}

/// The index just past the quoted scalar opening at `b[start]` (`'...'` with `''` for a quote,
/// `"..."` with backslash escapes), counting its line breaks into `line`.
fn skip_quoted(b: &[u8], start: usize, line: &mut usize) -> usize {
    let q = b[start];
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\n' => *line += 1,
            b'\\' if q == b'"' => {
                if b.get(i + 1) == Some(&b'\n') {
                    *line += 1;
                }
                i += 1;
            }
            c if c == q => {
                if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                    i += 1;
                } else {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
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
            ms[1].raw,
            br#"{"kind":"B","metadata":{"name":"b","namespace":"n"}}"#
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

    /// Parses `text` as a manifest file, failing if that takes more than `secs` seconds.
    fn parse_within(text: String, secs: u64) -> Result<Vec<Manifest>, Vec<String>> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = parse_manifests(text.as_bytes(), "f.yaml");
            tx.send(r.map_err(|es| es.iter().map(ToString::to_string).collect()))
        });
        rx.recv_timeout(std::time::Duration::from_secs(secs))
            .expect("parsed in time")
    }

    #[test]
    fn deep_flow_nesting_is_refused_in_one_pass() {
        // libyaml alone takes quadratic time here (about 15 s in a debug build) before the
        // deserializer's depth limit; the pre-scan refuses it at the 129th bracket.
        for (text, line) in [
            ("[".repeat(100_000), 1),
            (
                format!("kind: A\nmetadata: {{name: a}}\nx: {}", "{a: ".repeat(100_000)),
                3,
            ),
            (
                format!("kind: A\n---\n# c\nx: &a !!seq\n  {}", "[\n".repeat(100_000)),
                5,
            ),
        ] {
            let start = std::time::Instant::now();
            let Err(errs) = parse_within(text, 10) else {
                panic!("not refused");
            };
            let doc = usize::from(line == 5);
            assert_eq!(
                errs,
                [format!(
                    "f.yaml#{doc}: invalid YAML: flow collections ([ and {{) nested more than 128 deep at line {}",
                    if line == 5 { 5 + 128 } else { line }
                )]
            );
            assert!(
                start.elapsed() < std::time::Duration::from_secs(2),
                "{:?}",
                start.elapsed()
            );
        }
        // Block nesting is linear in libyaml; the deserializer's limit refuses it.
        let Err(errs) = parse_within("- ".repeat(100_000), 10) else {
            panic!("not refused");
        };
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].starts_with("f.yaml#0: invalid YAML: recursion limit exceeded"),
            "{errs:?}"
        );
    }

    #[test]
    fn brackets_in_strings_comments_and_scalars_are_not_nesting() {
        // 200 unbalanced brackets where YAML does not see flow collections, then a manifest.
        let mut text = String::new();
        for _ in 0..200 {
            text.push_str("# [ comment\n");
        }
        text.push_str(&format!(
            "kind: A\nmetadata:\n  name: a\n  annotations:\n    q: '{}'\n    d: \"{}\\\"\"\n    p: x [[{}\n",
            "[".repeat(200),
            "{".repeat(200),
            "[".repeat(200)
        ));
        text.push_str(&format!("f: {}{}\n", "[".repeat(100), "]".repeat(100)));
        let ms = parse_within(text, 10).expect("parses");
        assert_eq!(ms[0].annotations["q"], "[".repeat(200));
        assert_eq!(ms[0].annotations["p"], format!("x [[{}", "[".repeat(200)));
    }

    #[test]
    fn nesting_after_block_and_plain_scalars_is_seen() {
        let deep = "[".repeat(200);
        // A quote inside a block scalar or a continued plain scalar is text: it does not hide
        // the flow collection that follows.
        for (text, line) in [
            (format!("a: |\n  'x\n  \"y\nb: {deep}"), 4),
            (format!("- k: >-\n    'x\n  b: {deep}"), 3),
            (format!("a: |2\n   'x\nb: {deep}"), 3),
            (format!("a: foo\n  'bar\nb: {deep}"), 3),
            (format!("- foo\n  \"bar\n- {deep}"), 3),
            (format!("---\n{deep}"), 2),
        ] {
            assert_eq!(too_deep_flow(&text), Some((0, line)), "{text:.40}");
        }
        // Brackets in block scalars' lines are text.
        let prose = format!("a: |\n{}b: [x]\n", "  [ note {\n".repeat(200));
        assert_eq!(too_deep_flow(&prose), None);
    }

    #[test]
    fn real_manifests_pass_the_nesting_scan() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let mut stack = vec![dir.join("tests/fixtures"), dir.join("assets")];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 500, "{}", files.len());
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            assert_eq!(too_deep_flow(&text), None, "{}", f.display());
        }
    }

    #[test]
    fn alias_expansion_is_bounded_by_the_file_size() {
        // 2,000 aliases of a 2,000-item list: 4 million values from 10 kB, quadratic work.
        let mut text = String::from("kind: A\nmetadata: {name: a}\nx: &a [");
        text.push_str(&"1,".repeat(2_000));
        text.push_str("1]\ny: [");
        text.push_str(&"*a,".repeat(2_000));
        text.push_str("*a]\n");
        let size = text.len();
        let start = std::time::Instant::now();
        let Err(errs) = parse_within(text, 10) else {
            panic!("not refused");
        };
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with("f.yaml#0: invalid YAML: y[")
                && errs[0].contains(&format!(
                    "more than {} values after expanding aliases (the file's size in bytes plus 400000); \
                     is it an alias bomb?",
                    size + 400_000
                )),
            "{errs:?}"
        );
        assert!(
            start.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        // Ordinary anchors pass.
        let ms = parse_within(
            "kind: A\nmetadata: {name: a}\nx: &l {k: v}\ny: *l\n".to_string(),
            10,
        )
        .expect("parses");
        assert_eq!(ms[0].object["y"], serde_json::json!({"k": "v"}));
    }

    #[test]
    fn json_raw_is_the_document_text() {
        let j = b"  {\"kind\": \"A\", \"metadata\": {\"name\": \"a\"}}\n{\"kind\":\"B\",\"metadata\":{\"name\":\"b\"}}";
        let ms = parse_manifests(j, "f.json").unwrap();
        assert_eq!(ms[0].raw, br#"{"kind": "A", "metadata": {"name": "a"}}"#);
        assert_eq!(ms[1].index, 1);
    }
}
