//! [`ApiError`]: an error as kube-apiserver reports it (a `Status` body).

use serde_json::{Value, json};

use super::ResourceType;

/// An API error, rendered as a Kubernetes `Status` body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// kube-apiserver reason (`NotFound`, `AlreadyExists`, `Conflict`, ...).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
    /// The `details` of the Status (`name`, `group`, `kind`, `causes`), when kube-apiserver
    /// sends some.
    pub details: Option<Value>,
}

/// One `details.causes[]` entry of an `Invalid` error: what kube-apiserver reports per field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueRequired`, `FieldValueInvalid`, `FieldValueTypeInvalid`,
    /// `FieldValueNotSupported`, ...
    pub reason: &'static str,
    /// The field path (`spec.size`, `status.history[0].completionTime`).
    pub field: String,
    /// The message without the field (`Required value`, `Invalid value: ...`).
    pub message: String,
}

impl Cause {
    /// A cause from a `field: message` detail, its reason read from the message the way
    /// kube-apiserver words them (`k8s.io/apimachinery/pkg/util/validation/field/errors.go`).
    pub fn parse(detail: &str) -> Self {
        let (field, message) = detail.split_once(": ").unwrap_or(("", detail));
        let reason = if message.starts_with("Required value") {
            "FieldValueRequired"
        } else if message.starts_with("Unsupported value") {
            "FieldValueNotSupported"
        } else if message.starts_with("Duplicate value") {
            "FieldValueDuplicate"
        } else if message.starts_with("Too many") {
            "FieldValueTooMany"
        } else if message.starts_with("Too long") {
            "FieldValueTooLong"
        } else if message.starts_with("Forbidden") {
            "FieldValueForbidden"
        } else if message.contains(" in body must be of type ") {
            "FieldValueTypeInvalid"
        } else {
            "FieldValueInvalid"
        };
        Self {
            reason,
            field: field.to_owned(),
            message: message.to_owned(),
        }
    }

    /// `field: message`, as the error message lists it.
    pub fn detail(&self) -> String {
        if self.field.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.field, self.message)
        }
    }
}

impl ApiError {
    /// A new error.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// This error with `details`.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// `404 NotFound` for `name` of `t`.
    pub fn not_found(t: &ResourceType, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} {name:?} not found", t.qualified()))
            .with_details(object_details(t, name))
    }

    /// `409` with `reason` (`AlreadyExists`, `Conflict`) for `name` of `t`.
    pub fn conflict(t: &ResourceType, reason: &'static str, name: &str, message: String) -> Self {
        Self::new(409, reason, message).with_details(object_details(t, name))
    }

    /// `400 BadRequest`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// `422 Invalid` for `name` of `t`, with one cause (`detail` is `field: message`).
    pub fn invalid(t: &ResourceType, name: &str, detail: &str) -> Self {
        Self::invalid_causes(t, &t.kind, name, vec![Cause::parse(detail)])
    }

    /// `422 Invalid` for `name` of `t` (`kind` as the body named it), listing `causes` as
    /// kube-apiserver does: `Kind.group "name" is invalid: field: message` for one cause,
    /// `[field: message, ...]` for more; `details` carries name, group, kind and the causes.
    pub fn invalid_causes(t: &ResourceType, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        let qualified = if t.group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{}", t.group)
        };
        let list = match causes.as_slice() {
            [one] => one.detail(),
            many => format!(
                "[{}]",
                many.iter().map(Cause::detail).collect::<Vec<_>>().join(", ")
            ),
        };
        let mut details = json!({"name": name, "kind": kind, "causes": causes.iter().map(|c| json!({
            "reason": c.reason, "message": c.message, "field": c.field,
        })).collect::<Vec<_>>()});
        if !t.group.is_empty() {
            details["group"] = json!(t.group);
        }
        Self::new(
            422,
            "Invalid",
            format!("{qualified} \"{name}\" is invalid: {list}"),
        )
        .with_details(details)
    }

    /// `403 Forbidden` for `name` of `t`.
    pub fn forbidden(t: &ResourceType, name: &str, detail: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!("{} {name:?} is forbidden: {detail}", t.qualified()),
        )
    }

    /// The `Status` object kube-apiserver returns.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

/// The `details` kube-apiserver gives errors about one object: its name, the group (when not
/// core) and the resource as `kind` (`configmaps`).
fn object_details(t: &ResourceType, name: &str) -> Value {
    let mut d = json!({"name": name, "kind": t.plural});
    if !t.group.is_empty() {
        d["group"] = json!(t.group);
    }
    d
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}
