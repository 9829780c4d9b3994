//! Custom resources against their CustomResourceDefinition's `openAPIV3Schema`, as
//! apiextensions-apiserver handles them on every write: `null` in a field that is not
//! `nullable` is dropped, unknown fields are pruned (unless
//! `x-kubernetes-preserve-unknown-fields`), `default`s are filled in, then the object is
//! validated: `type` (and `x-kubernetes-int-or-string`), `format: date-time`, `enum`,
//! `required`, `minimum`/`maximum`, `minLength`/`maxLength`, `minItems`/`maxItems`, `pattern`,
//! `additionalProperties`; messages and `details.causes` as kube-apiserver v1.36 words them. Upstream: `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/`
//! `schema/pruning/algorithm.go`, `schema/defaulting/algorithm.go` and
//! `pkg/apiserver/validation/validation.go` in kubernetes/kubernetes.
//!
//! Not checked: CEL rules (`x-kubernetes-validations`), `allOf`/`anyOf`/`oneOf`/`not`,
//! list-type uniqueness, formats other than `date-time`.

use serde_json::{Map, Value, json};

use super::Cause;

/// Where validation starts: the whole object (create, update of the main resource) or its
/// `status` (the status subresource, whose messages name fields relative to `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// The whole object; `apiVersion`, `kind` and `metadata` are kept as they are.
    Object,
    /// Only `status`, against the schema's `properties.status`.
    Status,
}

/// Prunes, defaults and validates `obj` against `schema` (a version's `openAPIV3Schema`);
/// returns the causes of a `422 Invalid` (empty when valid).
pub fn admit(schema: &Value, obj: &mut Value, root: Root) -> Vec<Cause> {
    let mut causes = Vec::new();
    match root {
        Root::Object => {
            let Some(m) = obj.as_object_mut() else {
                return causes;
            };
            // apiVersion, kind and metadata are the server's, whatever the schema says.
            let kept: Vec<(String, Value)> = ["apiVersion", "kind", "metadata"]
                .iter()
                .filter_map(|k| m.remove(*k).map(|v| ((*k).to_owned(), v)))
                .collect();
            let mut w = Walk {
                causes: &mut causes,
                rel_from: 0,
            };
            w.object(schema, m, "");
            m.extend(kept);
        }
        Root::Status => {
            let s = &schema["properties"]["status"];
            if s.is_null() {
                return causes;
            }
            if let Some(status) = obj.get_mut("status") {
                let mut w = Walk {
                    causes: &mut causes,
                    rel_from: "status.".len(),
                };
                w.value(s, status, "status");
            }
        }
    }
    causes
}

struct Walk<'a> {
    causes: &'a mut Vec<Cause>,
    /// How much of a field path to drop for the "`<path>` in body" part of messages.
    rel_from: usize,
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

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

/// How Go's `%v` prints a value in "Invalid value: ..." (strings quoted).
fn shown(v: &Value) -> String {
    v.to_string()
}

fn preserves_unknown(s: &Value) -> bool {
    s["x-kubernetes-preserve-unknown-fields"].as_bool() == Some(true)
}

impl Walk<'_> {
    fn rel<'p>(&self, path: &'p str) -> &'p str {
        path.get(self.rel_from..).unwrap_or(path)
    }

    fn push(&mut self, field: &str, message: String) {
        self.causes.push(Cause::parse(&format!("{field}: {message}")));
    }

    fn type_error(&mut self, path: &str, want: &str, got: &str) {
        let rel = self.rel(path).to_owned();
        self.push(
            path,
            format!("Invalid value: \"{got}\": {rel} in body must be of type {want}: \"{got}\""),
        );
    }

    /// Checks `v` (at `path`) against `s`; prunes and defaults inside it.
    fn value(&mut self, s: &Value, v: &mut Value, path: &str) {
        if s.is_null() || !s.is_object() {
            return;
        }
        if v.is_null() {
            // (A null in a map field that is not nullable was dropped before; here it is a
            // list item.)
            if s["nullable"].as_bool() != Some(true)
                && let Some(want) = s["type"].as_str()
            {
                self.type_error(path, want, "null");
            }
            return;
        }
        if s["x-kubernetes-int-or-string"].as_bool() == Some(true) {
            let t = type_name(v);
            if t != "integer" && t != "string" {
                self.type_error(path, "integer,string", t);
            }
            return;
        }
        let got = type_name(v);
        match s["type"].as_str() {
            Some("object") => match v.as_object_mut() {
                Some(m) => self.object(s, m, path),
                None => return self.type_error(path, "object", got),
            },
            Some("array") => match v.as_array_mut() {
                Some(items) => {
                    let item_schema = &s["items"];
                    for (i, item) in items.iter_mut().enumerate() {
                        self.value(item_schema, item, &format!("{path}[{i}]"));
                    }
                    let n = items.len() as u64;
                    if let Some(max) = s["maxItems"].as_u64()
                        && n > max
                    {
                        let unit = if max == 1 { "item" } else { "items" };
                        self.push(path, format!("Too many: {n}: must have at most {max} {unit}"));
                    }
                    if let Some(min) = s["minItems"].as_u64()
                        && n < min
                    {
                        let rel = self.rel(path).to_owned();
                        self.push(
                            path,
                            format!("Invalid value: {n}: {rel} in body should have at least {min} items"),
                        );
                    }
                }
                None => return self.type_error(path, "array", got),
            },
            Some("string") => {
                let Some(text) = v.as_str() else {
                    return self.type_error(path, "string", got);
                };
                self.string(s, text, path);
            }
            Some("integer") if got != "integer" => return self.type_error(path, "integer", got),
            Some("number") if got != "integer" && got != "number" => {
                return self.type_error(path, "number", got);
            }
            Some("boolean") if got != "boolean" => return self.type_error(path, "boolean", got),
            _ => {}
        }
        if let Some(n) = v.as_f64() {
            self.number(s, n, v, path);
        }
        if let Some(allowed) = s["enum"].as_array()
            && !allowed.contains(v)
        {
            let list: Vec<String> = allowed.iter().map(shown).collect();
            self.push(
                path,
                format!(
                    "Unsupported value: {}: supported values: {}",
                    shown(v),
                    list.join(", ")
                ),
            );
        }
    }

    fn string(&mut self, s: &Value, text: &str, path: &str) {
        let rel = self.rel(path).to_owned();
        let quoted = shown(&json!(text));
        if s["format"] == "date-time" && chrono::DateTime::parse_from_rfc3339(text).is_err() {
            self.push(
                path,
                format!("Invalid value: {quoted}: {rel} in body must be of type date-time: {quoted}"),
            );
        }
        let len = text.chars().count() as u64;
        if let Some(max) = s["maxLength"].as_u64()
            && len > max
        {
            self.push(path, format!("Too long: may not be more than {max} bytes"));
        }
        if let Some(min) = s["minLength"].as_u64()
            && len < min
        {
            self.push(
                path,
                format!("Invalid value: {quoted}: {rel} in body should be at least {min} chars long"),
            );
        }
        if let Some(p) = s["pattern"].as_str()
            && regex::Regex::new(p).is_ok_and(|re| !re.is_match(text))
        {
            self.push(
                path,
                format!("Invalid value: {quoted}: {rel} in body should match '{p}'"),
            );
        }
    }

    fn number(&mut self, s: &Value, n: f64, v: &Value, path: &str) {
        let rel = self.rel(path).to_owned();
        if let Some(min) = s.get("minimum").filter(|m| m.is_number())
            && min.as_f64().is_some_and(|m| n < m)
        {
            self.push(
                path,
                format!(
                    "Invalid value: {}: {rel} in body should be greater than or equal to {min}",
                    shown(v)
                ),
            );
        }
        if let Some(max) = s.get("maximum").filter(|m| m.is_number())
            && max.as_f64().is_some_and(|m| n > m)
        {
            self.push(
                path,
                format!(
                    "Invalid value: {}: {rel} in body should be less than or equal to {max}",
                    shown(v)
                ),
            );
        }
    }

    fn object(&mut self, s: &Value, m: &mut Map<String, Value>, path: &str) {
        let props = s["properties"].as_object();
        let additional = &s["additionalProperties"];
        let embedded = s["x-kubernetes-embedded-resource"].as_bool() == Some(true);
        // Nulls in fields that are not nullable are dropped, as if absent.
        let schema_of = |k: &str| -> Option<&Value> {
            props
                .and_then(|p| p.get(k))
                .or_else(|| additional.is_object().then_some(additional))
        };
        m.retain(|k, v| !v.is_null() || schema_of(k).is_none_or(|fs| fs["nullable"].as_bool() == Some(true)));
        // Unknown fields are pruned.
        if !preserves_unknown(s) && !additional.is_object() && additional.as_bool() != Some(true) {
            m.retain(|k, _| {
                props.is_some_and(|p| p.contains_key(k))
                    || (embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
            });
        }
        // Defaults of absent fields.
        if let Some(p) = props {
            for (k, fs) in p {
                if !m.contains_key(k)
                    && let Some(d) = fs.get("default")
                {
                    m.insert(k.clone(), d.clone());
                }
            }
        }
        let keys: Vec<String> = m.keys().cloned().collect();
        for k in keys {
            if let Some(fs) = schema_of(&k).cloned()
                && let Some(v) = m.get_mut(&k)
            {
                self.value(&fs, v, &join(path, &k));
            }
        }
        for r in s["required"].as_array().into_iter().flatten() {
            if let Some(r) = r.as_str()
                && !m.contains_key(r)
            {
                self.push(&join(path, r), "Required value".to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gadget_schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["size"], "properties": {
                "size": {"type": "integer", "minimum": 0},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "label": {"type": "string", "nullable": true},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "port": {"x-kubernetes-int-or-string": true},
                "nested": {"type": "object", "properties": {"a": {"type": "string"}}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "status": {"type": "object", "required": ["phase", "history"], "properties": {
                "phase": {"type": "string"},
                "history": {"type": "array", "items": {"type": "object",
                    "required": ["state", "completionTime"], "properties": {
                        "state": {"type": "string"},
                        "completionTime": {"type": "string", "format": "date-time", "nullable": true}}}}}}}})
    }

    fn details(causes: &[Cause]) -> Vec<String> {
        let mut v: Vec<String> = causes.iter().map(Cause::detail).collect();
        v.sort();
        v
    }

    // Messages as kube-apiserver v1.36 gave them for the same schema and bodies.
    #[test]
    fn prunes_unknown_fields_and_drops_nulls_that_are_not_nullable() {
        let mut o = json!({"apiVersion": "x/v1", "kind": "Gadget", "metadata": {"name": "g"},
            "spec": {"size": 1, "unknown": 2, "free": {"x": {"y": 1}}, "nested": {"a": "s", "b": 2},
                     "label": null, "mode": null, "port": "http"}, "extra": 1});
        assert!(admit(&gadget_schema(), &mut o, Root::Object).is_empty());
        assert_eq!(
            o,
            json!({"apiVersion": "x/v1", "kind": "Gadget", "metadata": {"name": "g"},
                "spec": {"size": 1, "free": {"x": {"y": 1}}, "nested": {"a": "s"}, "label": null, "port": "http"}})
        );
    }

    #[test]
    fn reports_each_bad_field() {
        let mut o = json!({"spec": {"size": "big", "mode": "c", "port": 1.5, "nested": "s", "m": {"k": 1}}});
        assert_eq!(
            details(&admit(&gadget_schema(), &mut o, Root::Object)),
            [
                "spec.m.k: Invalid value: \"integer\": spec.m.k in body must be of type string: \"integer\"",
                "spec.mode: Unsupported value: \"c\": supported values: \"a\", \"b\"",
                "spec.nested: Invalid value: \"string\": spec.nested in body must be of type object: \"string\"",
                "spec.port: Invalid value: \"number\": spec.port in body must be of type integer,string: \"number\"",
                "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
            ]
        );
        let mut o = json!({"spec": {"size": null}});
        assert_eq!(
            details(&admit(&gadget_schema(), &mut o, Root::Object)),
            ["spec.size: Required value"]
        );
        let mut o = json!({"spec": {"size": -1}});
        assert_eq!(
            details(&admit(&gadget_schema(), &mut o, Root::Object)),
            ["spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0"]
        );
    }

    #[test]
    fn status_is_checked_with_paths_relative_to_it() {
        let s = gadget_schema();
        let mut o = json!({"spec": {"size": "ignored"}, "status": {"phase": "x"}});
        assert_eq!(
            details(&admit(&s, &mut o, Root::Status)),
            ["status.history: Required value"]
        );
        let mut o = json!({"status": {"phase": "x", "history": [{"state": "a"}]}});
        assert_eq!(
            details(&admit(&s, &mut o, Root::Status)),
            ["status.history[0].completionTime: Required value"]
        );
        let mut o =
            json!({"status": {"phase": 5, "history": [{"state": "a", "completionTime": "yesterday"}]}});
        assert_eq!(
            details(&admit(&s, &mut o, Root::Status)),
            [
                "status.history[0].completionTime: Invalid value: \"yesterday\": history[0].completionTime in body must be of type date-time: \"yesterday\"",
                "status.phase: Invalid value: \"integer\": phase in body must be of type string: \"integer\"",
            ]
        );
        let mut o =
            json!({"status": {"phase": "x", "junk": 1, "history": [{"state": "a", "completionTime": null}]}});
        assert!(admit(&s, &mut o, Root::Status).is_empty());
        assert_eq!(
            o["status"],
            json!({"phase": "x", "history": [{"state": "a", "completionTime": null}]})
        );
    }
}
