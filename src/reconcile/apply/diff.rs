//! The field-level diff of watch-only mode (the [`Drift`] vocabulary is the contract's,
//! [`crate::reconcile::api`]).

use serde_json::Value;

pub use crate::reconcile::api::{Drift, FieldChange};

/// Field-level differences from `from` to `to`: objects compared key by key, arrays of equal
/// length element by element, anything else as a whole.
pub fn diff_values(from: &Value, to: &Value) -> Vec<FieldChange> {
    let mut out = Vec::new();
    walk("", Some(from), Some(to), &mut out);
    out
}

fn walk(path: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<FieldChange>) {
    if a == b {
        return;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            for (k, v) in x {
                walk(&format!("{path}.{k}"), Some(v), y.get(k), out);
            }
            for (k, v) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                walk(&format!("{path}.{k}"), None, Some(v), out);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                walk(&format!("{path}[{i}]"), Some(p), Some(q), out);
            }
        }
        _ => out.push(FieldChange {
            path: if path.is_empty() {
                ".".to_owned()
            } else {
                path.to_owned()
            },
            from: a.cloned(),
            to: b.cloned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diff_lists_leaf_changes() {
        let d = diff_values(
            &json!({"spec": {"replicas": 2, "x": [1, 2], "gone": true}}),
            &json!({"spec": {"replicas": 1, "x": [1, 3], "new": "y"}}),
        );
        let paths: Vec<_> = d.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, [".spec.gone", ".spec.replicas", ".spec.x[1]", ".spec.new"]);
        assert_eq!(d[1].from, Some(json!(2)));
        assert_eq!(d[0].to, None);
        let text = Drift::Update { diff: d }.render("deployment \"ns/op\"");
        assert_eq!(
            text.as_deref(),
            Some(
                "~ update deployment \"ns/op\"\n    .spec.gone: true -> <absent>\n    .spec.replicas: 2 -> 1\n    .spec.x[1]: 2 -> 3\n    .spec.new: <absent> -> \"y\""
            )
        );
        assert_eq!(Drift::Delete.render("x").as_deref(), Some("- delete x"));
        assert_eq!(Drift::None.render("x"), None);
    }
}
