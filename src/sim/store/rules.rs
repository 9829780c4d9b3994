//! CRD validation rules (`x-kubernetes-validations`, CEL) as apiextensions-apiserver runs
//! them after the schema check, evaluated with the `cel` crate.
//!
//! Each rule runs at its schema node with `self` the value there (and `oldSelf` the old
//! object's value at the same path on an update; a rule that names `oldSelf` is a transition
//! rule and is skipped where there is no old value). A rule that gives `false` is a cause
//! `<path>: Invalid value: <message>` (`message`, else `messageExpression`'s string, else
//! `failed rule: <rule>`), at `<path>` plus the rule's `fieldPath`, under the rule's
//! `reason`; a missing field read by the rule is kube's runtime error
//! `<path>: Invalid value: "<type>": no such key: <field> evaluating rule: <message>`. The
//! root's path is kube's `<nil>`.
//!
//! A rule the `cel` crate cannot parse or evaluate (a function or macro it lacks, a result
//! that is not a boolean) is not accepted silently: it is an `InternalError` cause naming
//! the rule and why, so the write is refused and the gap is visible.
//!
//! Not done: the cost budget, list-type correlation of `oldSelf` inside arrays (items get
//! no `oldSelf`), and validation ratcheting of unchanged fields. A `/status` write runs the
//! rules over the whole object, as kube-apiserver does. Upstream: `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go`
//! and `pkg/registry/customresource/strategy.go` (the blocking-error check) in
//! kubernetes/kubernetes.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value;

use super::Cause;

/// Cause reasons after which kube-apiserver does not run the rules (`hasBlockingErr`).
const BLOCKING: [&str; 5] = [
    "FieldValueNotSupported",
    "FieldValueRequired",
    "FieldValueTooLong",
    "FieldValueTooMany",
    "FieldValueTypeInvalid",
];

/// The cause kube-apiserver adds instead of running the rules when the schema check found a
/// blocking error.
fn not_checked() -> Cause {
    Cause {
        reason: "FieldValueInvalid",
        field: "<nil>".into(),
        message: "Invalid value: null: some validation rules were not checked because the object \
                  was invalid; correct the existing errors to complete validation"
            .into(),
    }
}

/// Whether `schema` has a validation rule anywhere.
pub(super) fn has_rules(schema: &Value) -> bool {
    match schema {
        Value::Object(m) => {
            m.get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .is_some_and(|r| !r.is_empty())
                || m.values().any(has_rules)
        }
        Value::Array(a) => a.iter().any(has_rules),
        _ => false,
    }
}

/// Runs the rules of `schema` on `v` (at `path`, `""` for the whole object), after the
/// schema check gave `causes`: when one of those blocks, only the "not checked" cause is
/// added (if there are rules at all), as kube-apiserver does.
pub(super) fn check(schema: &Value, v: &Value, old: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    if causes.iter().any(|c| BLOCKING.contains(&c.reason)) {
        if has_rules(schema) {
            causes.push(not_checked());
        }
        return;
    }
    walk(schema, v, old, path, causes);
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

fn walk(s: &Value, v: &Value, old: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    if !s.is_object() || v.is_null() {
        return;
    }
    for r in s["x-kubernetes-validations"].as_array().into_iter().flatten() {
        run(s, r, v, old, path, causes);
    }
    match v {
        Value::Object(m) => {
            let props = s["properties"].as_object();
            let additional = &s["additionalProperties"];
            for (k, child) in m {
                let cs = props
                    .and_then(|p| p.get(k))
                    .or_else(|| additional.is_object().then_some(additional));
                if let Some(cs) = cs {
                    let old_child = old.and_then(|o| o.get(k));
                    walk(cs, child, old_child, &join(path, k), causes);
                }
            }
        }
        Value::Array(items) if s["items"].is_object() => {
            for (i, item) in items.iter().enumerate() {
                walk(&s["items"], item, None, &format!("{path}[{i}]"), causes);
            }
        }
        _ => {}
    }
}

thread_local! {
    /// Parsed rules by their text (each thread parses a rule once).
    static PROGRAMS: RefCell<HashMap<String, Rc<Result<cel::Program, String>>>> = RefCell::new(HashMap::new());
}

fn program(rule: &str) -> Rc<Result<cel::Program, String>> {
    PROGRAMS.with(|p| {
        p.borrow_mut()
            .entry(rule.to_owned())
            .or_insert_with(|| Rc::new(cel::Program::compile(rule).map_err(|e| e.to_string())))
            .clone()
    })
}

/// A JSON value as CEL sees it (objects are maps with string keys).
fn to_cel(v: &Value) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(a) => cel::Value::List(Arc::new(a.iter().map(to_cel).collect())),
        Value::Object(m) => {
            let map: HashMap<String, cel::Value> = m.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            cel::Value::from(map)
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Evaluates one rule `r` of schema node `s` on `v`; pushes its cause when it fails.
fn run(s: &Value, r: &Value, v: &Value, old: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    let _ = s;
    let Some(rule) = r["rule"].as_str() else {
        return;
    };
    let field = |extra: Option<&str>| -> String {
        let f = match extra.map(|e| e.trim_start_matches('.')).filter(|e| !e.is_empty()) {
            Some(e) => join(path, e),
            None => path.to_owned(),
        };
        if f.is_empty() { "<nil>".to_owned() } else { f }
    };
    let internal = |why: String| Cause {
        reason: "InternalError",
        field: field(None),
        message: format!("Internal error: the simulator cannot evaluate the rule {rule:?}: {why}"),
    };
    let compiled = program(rule);
    let prog = match compiled.as_ref() {
        Ok(p) => p,
        Err(e) => return causes.push(internal(format!("parse error: {e}"))),
    };
    let transition = prog.references().has_variable("oldSelf");
    if transition && old.is_none() {
        return;
    }
    let mut ctx = cel::Context::default();
    ctx.add_variable_from_value("self", to_cel(v));
    if let Some(o) = old {
        ctx.add_variable_from_value("oldSelf", to_cel(o));
    }
    let shown_rule = r["message"]
        .as_str()
        .filter(|m| !m.is_empty())
        .map_or_else(|| rule.to_owned(), str::to_owned);
    match prog.execute(&ctx) {
        Ok(cel::Value::Bool(true)) => {}
        Ok(cel::Value::Bool(false)) => {
            let message = message_of(r, rule, &ctx);
            let (reason, text) = match r["reason"].as_str().unwrap_or("FieldValueInvalid") {
                "FieldValueForbidden" => ("FieldValueForbidden", format!("Forbidden: {message}")),
                "FieldValueRequired" => ("FieldValueRequired", format!("Required value: {message}")),
                "FieldValueDuplicate" => ("FieldValueDuplicate", format!("Duplicate value: {message}")),
                _ => ("FieldValueInvalid", format!("Invalid value: {message}")),
            };
            causes.push(Cause {
                reason,
                field: field(r["fieldPath"].as_str()),
                message: text,
            });
        }
        Ok(other) => causes.push(internal(format!("it gave {other:?}, not a boolean"))),
        Err(cel::ExecutionError::NoSuchKey(k)) => causes.push(Cause {
            reason: "FieldValueInvalid",
            field: field(None),
            message: format!(
                "Invalid value: \"{}\": no such key: {k} evaluating rule: {shown_rule}",
                type_name(v)
            ),
        }),
        Err(e) => causes.push(internal(e.to_string())),
    }
}

/// The message of a failed rule: `message`, else the string `messageExpression` gives, else
/// `failed rule: <rule>`.
fn message_of(r: &Value, rule: &str, ctx: &cel::Context) -> String {
    if let Some(m) = r["message"].as_str().filter(|m| !m.is_empty()) {
        return m.to_owned();
    }
    if let Some(expr) = r["messageExpression"].as_str()
        && let Ok(p) = program(expr).as_ref()
        && let Ok(cel::Value::String(s)) = p.execute(ctx)
        && !s.trim().is_empty()
    {
        return s.to_string();
    }
    format!("failed rule: {rule}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn details(schema: &Value, v: &Value, old: Option<&Value>) -> Vec<String> {
        let mut causes = Vec::new();
        check(schema, v, old, "", &mut causes);
        causes.iter().map(Cause::detail).collect()
    }

    fn desired_update_schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "desiredUpdate": {"type": "object", "properties": {
                "architecture": {"type": "string"}, "image": {"type": "string"}, "version": {"type": "string"}},
                "x-kubernetes-validations": [
                    {"message": "cannot set both Architecture and Image",
                     "rule": "has(self.architecture) && has(self.image) ? (self.architecture == \"\" || self.image == \"\") : true"},
                    {"message": "Version must be set if Architecture is set",
                     "rule": "has(self.architecture) && self.architecture != \"\" ? self.version != \"\" : true"}]}}}},
            "x-kubernetes-validations": [{"rule": "self.metadata.name == 'version'"}]})
    }

    // Causes as kube-apiserver v1.36 gave them for the ClusterVersion CRD's rules.
    #[test]
    fn failing_rules_and_missing_keys_are_causes() {
        let s = desired_update_schema();
        let v = json!({"metadata": {"name": "version"}, "spec": {"desiredUpdate": {"architecture": "Multi", "image": "x"}}});
        assert_eq!(
            details(&s, &v, None),
            [
                "spec.desiredUpdate: Invalid value: cannot set both Architecture and Image",
                "spec.desiredUpdate: Invalid value: \"object\": no such key: version evaluating rule: Version must be set if Architecture is set",
            ]
        );
        let v = json!({"metadata": {"name": "other"}, "spec": {"desiredUpdate": {"version": "4.16.4"}}});
        assert_eq!(
            details(&s, &v, None),
            ["<nil>: Invalid value: failed rule: self.metadata.name == 'version'"]
        );
    }

    #[test]
    fn blocking_errors_skip_the_rules() {
        let s = desired_update_schema();
        let mut causes = vec![Cause::parse(
            "spec.channel: Invalid value: \"integer\": spec.channel in body must be of type string: \"integer\"",
        )];
        check(&s, &json!({"metadata": {"name": "x"}}), None, "", &mut causes);
        assert_eq!(causes.len(), 2);
        assert_eq!(causes[1], not_checked());
        // A pattern mismatch does not block: the rules still run.
        let mut causes = vec![Cause::parse(
            "spec.x: Invalid value: \"a\": spec.x in body should match '^b$'",
        )];
        check(&s, &json!({"metadata": {"name": "x"}}), None, "", &mut causes);
        assert_eq!(causes.len(), 2);
        assert_eq!(causes[1].field, "<nil>");
        assert!(
            causes[1].message.starts_with("Invalid value: failed rule"),
            "{causes:?}"
        );
    }

    #[test]
    fn transition_rules_need_an_old_value_and_unknown_functions_are_reported() {
        let s = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "mode": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "mode is immutable", "reason": "FieldValueForbidden"}]},
            "odd": {"type": "string", "x-kubernetes-validations": [{"rule": "self.noSuchFunction()"}]}}}}});
        assert!(details(&s, &json!({"spec": {"mode": "a"}}), None).is_empty());
        let old = json!({"spec": {"mode": "a"}});
        assert!(details(&s, &json!({"spec": {"mode": "a"}}), Some(&old)).is_empty());
        assert_eq!(
            details(&s, &json!({"spec": {"mode": "b"}}), Some(&old)),
            ["spec.mode: Forbidden: mode is immutable"]
        );
        let d = details(&s, &json!({"spec": {"odd": "x"}}), None);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].starts_with(
                "spec.odd: Internal error: the simulator cannot evaluate the rule \"self.noSuchFunction()\""
            ),
            "{d:?}"
        );
    }
}
