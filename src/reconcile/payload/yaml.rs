//! Limits on YAML parsing that keep a hostile payload file linear in its size: flow nesting
//! refused before libyaml's scanner goes quadratic on it, and alias expansion capped. The YAML
//! parser is `serde_norway` (a `serde_yaml` fork over libyaml); upstream parses manifests with
//! `sigs.k8s.io/yaml` over go-yaml, which caps alias expansion in the same spirit.

use std::fmt;

use serde::{Deserialize, de::DeserializeSeed};
use serde_json::Value;

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
/// [`YAML_ALIAS_ALLOWANCE`] limits of [`parse_manifests`](super::manifest::parse_manifests).
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
pub(crate) struct NodeBudget {
    left: std::cell::Cell<usize>,
    total: usize,
}

impl NodeBudget {
    /// The budget of a file whose text is `text`: its size in bytes plus [`YAML_ALIAS_ALLOWANCE`].
    pub(crate) fn for_text(text: &str) -> Self {
        let total = text.len().saturating_add(YAML_ALIAS_ALLOWANCE);
        NodeBudget {
            left: std::cell::Cell::new(total),
            total,
        }
    }

    /// A seed deserializing one value (a document) against this budget.
    pub(crate) fn node(&self) -> BudgetedValue<'_> {
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
pub(crate) struct BudgetedValue<'b>(&'b NodeBudget);

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
pub(crate) fn too_deep_flow(text: &str) -> Option<(usize, usize)> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::reconcile::payload::manifest::{Manifest, parse_manifests};

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
        assert_eq!(ms[0].object()["y"], serde_json::json!({"k": "v"}));
    }
}
