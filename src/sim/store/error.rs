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
}

impl ApiError {
    /// A new error.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
        }
    }

    /// `404 NotFound` for `name` of `t`.
    pub fn not_found(t: &ResourceType, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} {name:?} not found", t.qualified()))
    }

    /// `400 BadRequest`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// `422 Invalid` for `name` of `t`.
    pub fn invalid(t: &ResourceType, name: &str, detail: &str) -> Self {
        Self::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {detail}", t.qualified_kind()),
        )
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
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        })
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}
