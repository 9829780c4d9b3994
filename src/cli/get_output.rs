//! `cvo get -o FORMAT` and `-l SELECTOR`, as kubectl takes them: the formats
//! (`wide|json|yaml|name|jsonpath=T|jsonpath-file=F|custom-columns=SPEC|custom-columns-file=F`),
//! the custom-columns table, and label selectors (`a=b,c!=d,e in (f,g),h notin (i),j,!k`)
//! matched with kube's [`Selector`].
//!
//! Upstream: kubectl's `get` printers (`k8s.io/cli-runtime/pkg/printers`: `jsonpath.go`,
//! `customcolumn.go`) and label selector syntax (`k8s.io/apimachinery/pkg/labels`).

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

use kube::core::{Expression, Selector, SelectorExt as _};
use serde_json::Value;

use super::jsonpath::{Expr, Template, text_of};

/// `-o` of `cvo get`.
#[derive(Clone, Debug, PartialEq)]
pub enum GetOutput {
    /// `wide`: the table with more columns.
    Wide,
    /// `json`: the object, or a `List` of them.
    Json,
    /// `yaml`: as `json`, in YAML.
    Yaml,
    /// `name`: `kind.group/name` lines.
    Name,
    /// `jsonpath=TEMPLATE` (or `jsonpath-file=FILE`): the template over the object, or over a
    /// `List` of them.
    JsonPath(Template),
    /// `custom-columns=HEADER:EXPR,...` (or `custom-columns-file=FILE`): one row per object.
    CustomColumns(Vec<(String, Expr)>),
}

/// The formats `-o` takes, for its errors.
pub const FORMATS: &str = "wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, custom-columns=SPEC, custom-columns-file=FILE";

/// Parses `-o` (clap's value parser; clap prefixes the error with the flag and value).
///
/// # Errors
/// An unknown format (listing the known ones), a template or column spec that does not parse,
/// an unreadable file.
pub fn parse_output(s: &str) -> Result<GetOutput, String> {
    let read = |f: &str| std::fs::read_to_string(Path::new(f)).map_err(|e| format!("{f}: {e}"));
    Ok(match s.split_once('=') {
        None => match s {
            "wide" => GetOutput::Wide,
            "json" => GetOutput::Json,
            "yaml" => GetOutput::Yaml,
            "name" => GetOutput::Name,
            "jsonpath" | "custom-columns" => return Err(format!("{s} needs a value: {s}=...")),
            _ => return Err(format!("unknown output format; one of {FORMATS}")),
        },
        Some(("jsonpath", t)) => GetOutput::JsonPath(Template::parse(t)?),
        Some(("jsonpath-file", f)) => GetOutput::JsonPath(Template::parse(read(f)?.trim_end_matches('\n'))?),
        Some(("custom-columns", spec)) => GetOutput::CustomColumns(parse_columns(spec)?),
        Some(("custom-columns-file", f)) => GetOutput::CustomColumns(columns_file(&read(f)?)?),
        Some((other, _)) => {
            return Err(format!("unknown output format {other:?}; one of {FORMATS}"));
        }
    })
}

/// Splits at the commas outside brackets, parentheses and quotes.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start, mut quote) = (0i32, 0, None::<char>);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '(') => depth += 1,
            (None, ']' | ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// `HEADER:EXPR,HEADER:EXPR`.
fn parse_columns(spec: &str) -> Result<Vec<(String, Expr)>, String> {
    if spec.trim().is_empty() {
        return Err("custom-columns needs HEADER:EXPRESSION[,...]".into());
    }
    split_top(spec)
        .into_iter()
        .map(|col| {
            let (header, expr) = col
                .split_once(':')
                .filter(|(h, e)| !h.trim().is_empty() && !e.trim().is_empty())
                .ok_or_else(|| format!("custom-columns {col:?}: expected HEADER:EXPRESSION"))?;
            Ok((header.trim().to_string(), Expr::parse(expr)?))
        })
        .collect()
}

/// A custom-columns file: the headers on the first line, the expressions on the second, both
/// separated by white space.
fn columns_file(text: &str) -> Result<Vec<(String, Expr)>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let headers: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let exprs: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    if headers.is_empty() || headers.len() != exprs.len() {
        return Err(format!(
            "custom-columns-file: {} headers for {} expressions (one line of each)",
            headers.len(),
            exprs.len()
        ));
    }
    headers
        .into_iter()
        .zip(exprs)
        .map(|(h, e)| Ok((h.to_string(), Expr::parse(e)?)))
        .collect()
}

/// The custom-columns table of `objects`, kubectl's way: a cell is the values the expression
/// selects joined with `,`, `<none>` when it selects nothing; aligned with padding 3.
///
/// # Errors
/// An expression that fails on an object.
pub fn custom_columns(columns: &[(String, Expr)], objects: &[Value], header: bool) -> Result<String, String> {
    let mut text = String::new();
    if header {
        let names: Vec<&str> = columns.iter().map(|(h, _)| h.as_str()).collect();
        text += &(names.join("\t") + "\n");
    }
    for obj in objects {
        let mut cells = Vec::with_capacity(columns.len());
        for (_, expr) in columns {
            let values = expr.eval(obj, obj)?;
            cells.push(if values.is_empty() {
                "<none>".to_string()
            } else {
                values.into_iter().map(text_of).collect::<Vec<_>>().join(",")
            });
        }
        text += &(cells.join("\t").replace('\n', " ") + "\n");
    }
    Ok(super::tabwriter::format(&text, 0, 3))
}

/// Parses `-l`: comma-separated requirements `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
/// `k notin (a,b)`, `k` (exists), `!k` (does not exist).
///
/// # Errors
/// `-l S: unable to parse requirement "R"` for a requirement of none of these forms.
pub fn parse_selector(s: &str) -> Result<Selector, String> {
    let mut sel = Selector::default();
    for req in split_top(s).into_iter().map(str::trim).filter(|r| !r.is_empty()) {
        let bad = || format!("unable to parse requirement {req:?}");
        let set = |v: &str| -> Result<BTreeSet<String>, String> {
            let inner = v
                .trim()
                .strip_prefix('(')
                .and_then(|x| x.strip_suffix(')'))
                .ok_or_else(bad)?;
            Ok(inner.split(',').map(|x| x.trim().to_owned()).collect())
        };
        let key = |k: &str| -> Result<String, String> {
            let k = k.trim();
            if k.is_empty() || k.contains(char::is_whitespace) || k.contains(['(', ')', '!', '=']) {
                Err(bad())
            } else {
                Ok(k.to_owned())
            }
        };
        let e = if let Some((k, v)) = req.split_once("!=") {
            Expression::NotEqual(key(k)?, v.trim().into())
        } else if let Some((k, v)) = req.split_once("==") {
            Expression::Equal(key(k)?, v.trim().into())
        } else if let Some((k, v)) = req.split_once('=') {
            Expression::Equal(key(k)?, v.trim().into())
        } else if let Some((k, v)) = req.split_once(" notin ") {
            Expression::NotIn(key(k)?, set(v)?)
        } else if let Some((k, v)) = req.split_once(" in ") {
            Expression::In(key(k)?, set(v)?)
        } else if let Some(k) = req.strip_prefix('!') {
            Expression::DoesNotExist(key(k)?)
        } else {
            Expression::Exists(key(req)?)
        };
        sel.extend(std::iter::once(e));
    }
    Ok(sel)
}

/// Whether the labels of `obj` (its `metadata.labels`) match `sel`.
pub fn selects(sel: &Selector, labels: Option<&BTreeMap<String, String>>) -> bool {
    let empty = BTreeMap::new();
    sel.matches(labels.unwrap_or(&empty))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn formats_and_their_errors() {
        assert_eq!(parse_output("wide"), Ok(GetOutput::Wide));
        assert!(matches!(
            parse_output("jsonpath={.kind}"),
            Ok(GetOutput::JsonPath(_))
        ));
        assert!(matches!(
            parse_output("custom-columns=NAME:.metadata.name,AVAILABLE:.status.conditions[?(@.type==\"Available\")].status"),
            Ok(GetOutput::CustomColumns(c)) if c.len() == 2
        ));
        assert_eq!(
            parse_output("go-template={{.kind}}"),
            Err(format!("unknown output format \"go-template\"; one of {FORMATS}"))
        );
        assert_eq!(
            parse_output("table"),
            Err(format!("unknown output format; one of {FORMATS}"))
        );
        assert_eq!(
            parse_output("jsonpath"),
            Err("jsonpath needs a value: jsonpath=...".into())
        );
        assert_eq!(
            parse_output("custom-columns=NAME"),
            Err("custom-columns \"NAME\": expected HEADER:EXPRESSION".into())
        );
        assert!(parse_output("jsonpath-file=/no/such/file").is_err_and(|e| e.starts_with("/no/such/file: ")));
    }

    #[test]
    fn custom_columns_as_kubectl_prints_them() {
        let cols =
            parse_columns("NAME:.metadata.name,VERSIONS:.status.versions[*].version,X:.nope").expect("valid");
        let objs = [
            json!({"metadata": {"name": "etcd"}, "status": {"versions": [{"version": "4.16.3"}, {"version": "1.2"}]}}),
            json!({"metadata": {"name": "authentication"}, "status": {}}),
        ];
        assert_eq!(
            custom_columns(&cols, &objs, true).expect("renders"),
            "NAME             VERSIONS     X\netcd             4.16.3,1.2   <none>\nauthentication   <none>       <none>\n"
        );
        let file = columns_file("NAME  V\n.metadata.name .status.versions[0].version\n").expect("valid");
        assert_eq!(file.len(), 2);
        assert!(columns_file("NAME V\n.a\n").is_err());
    }

    #[test]
    fn label_selectors() {
        let labels = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let node = labels(&[("node-role.kubernetes.io/worker", ""), ("zone", "a")]);
        let yes = |s: &str| selects(&parse_selector(s).expect(s), Some(&node));
        assert!(yes("node-role.kubernetes.io/worker"));
        assert!(yes("zone=a"));
        assert!(yes("zone==a,!gpu"));
        assert!(yes("zone in (a,b)"));
        assert!(!yes("zone notin (a)"));
        assert!(!yes("zone!=a"));
        assert!(!yes("node-role.kubernetes.io/master"));
        assert!(yes(""));
        assert!(!selects(&parse_selector("zone").expect("valid"), None));
        assert_eq!(
            parse_selector("zone in a"),
            Err("unable to parse requirement \"zone in a\"".into())
        );
        assert!(parse_selector("a b").is_err());
    }
}
