//! Label and field selectors of lists and watches.

use std::collections::BTreeMap;

use crate::sim::store::{ApiError, Stored};

/// One label requirement.
#[derive(Clone, Debug)]
enum LabelReq {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// The label and field selectors of a list or watch.
#[derive(Clone, Debug, Default)]
pub(super) struct Selectors {
    labels: Vec<LabelReq>,
    /// `(field, value, equal)`.
    fields: Vec<(String, String, bool)>,
}

/// Splits at commas outside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().map(str::trim).filter(|p| !p.is_empty()).collect()
}

fn set_values(s: &str) -> Option<Vec<String>> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_owned()).collect())
}

impl Selectors {
    pub(super) fn parse(query: &BTreeMap<String, String>) -> Result<Self, ApiError> {
        let mut sel = Self::default();
        for req in split_top(query.get("labelSelector").map(String::as_str).unwrap_or("")) {
            let bad = || ApiError::bad_request(format!("unable to parse requirement: {req:?}"));
            let r = if let Some((k, v)) = req.split_once("!=") {
                LabelReq::NotEq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = req.split_once("==") {
                LabelReq::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = req.split_once('=') {
                LabelReq::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = req.split_once(" notin ") {
                LabelReq::NotIn(k.trim().into(), set_values(v).ok_or_else(bad)?)
            } else if let Some((k, v)) = req.split_once(" in ") {
                LabelReq::In(k.trim().into(), set_values(v).ok_or_else(bad)?)
            } else if let Some(k) = req.strip_prefix('!') {
                LabelReq::NotExists(k.trim().into())
            } else if req.contains(char::is_whitespace) || req.contains(['(', ')']) {
                return Err(bad());
            } else {
                LabelReq::Exists(req.into())
            };
            sel.labels.push(r);
        }
        for req in split_top(query.get("fieldSelector").map(String::as_str).unwrap_or("")) {
            let (k, v, eq) = if let Some((k, v)) = req.split_once("!=") {
                (k, v, false)
            } else if let Some((k, v)) = req.split_once("==") {
                (k, v, true)
            } else if let Some((k, v)) = req.split_once('=') {
                (k, v, true)
            } else {
                return Err(ApiError::bad_request(format!("invalid field selector: {req:?}")));
            };
            let k = k.trim();
            if !matches!(k, "metadata.name" | "metadata.namespace") {
                return Err(ApiError::bad_request(format!("field label not supported: {k}")));
            }
            sel.fields.push((k.to_owned(), v.trim().to_owned(), eq));
        }
        Ok(sel)
    }

    /// Whether a stored object is selected (its labels, name and namespace).
    pub(super) fn matches(&self, o: &Stored) -> bool {
        let label = |k: &str| o.label(k);
        let labels_ok = self.labels.iter().all(|r| match r {
            LabelReq::Eq(k, v) => label(k) == Some(v.as_str()),
            LabelReq::NotEq(k, v) => label(k) != Some(v.as_str()),
            LabelReq::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            LabelReq::NotIn(k, vs) => label(k).is_none_or(|l| vs.iter().all(|v| v != l)),
            LabelReq::Exists(k) => label(k).is_some(),
            LabelReq::NotExists(k) => label(k).is_none(),
        });
        labels_ok
            && self.fields.iter().all(|(k, v, eq)| {
                let actual = match k.as_str() {
                    "metadata.name" => o.name(),
                    _ => o.namespace(),
                };
                (actual == v) == *eq
            })
    }
}
