//! The error the apply layer returns, shaped as upstream's `payload.UpdateError`
//! (`pkg/payload/task.go`, `lib/resourcebuilder`, `pkg/cvo/internal/operatorstatus.go`).
//! The status helper's `src/reconcile/errors.rs` holds the same vocabulary for the sync worker; the
//! two are meant to be unified.

use std::fmt;

/// How an [`UpdateError`] affects the sync (upstream `UpdateEffectType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum UpdateEffect {
    /// Progressing: not a failure unless it stays too long (30 min; machine-config 90 min).
    None,
    /// Recorded, but the apply still counts as complete (a degraded operator while installing).
    Report,
    /// A failure now.
    Fail,
    /// A failure only after the degraded grace interval (40 min).
    FailAfterInterval,
}

impl UpdateEffect {
    /// Strength used when condensing several errors: Fail > FailAfterInterval > None > Report.
    pub fn strength(self) -> u8 {
        match self {
            Self::Fail => 3,
            Self::FailAfterInterval => 2,
            Self::None => 1,
            Self::Report => 0,
        }
    }

    /// Upstream's spelling (`None`, `Report`, `Fail`, `FailAfterInterval`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Report => "Report",
            Self::Fail => "Fail",
            Self::FailAfterInterval => "FailAfterInterval",
        }
    }
}

/// A reasoned failure of one task (upstream `payload.UpdateError`, `pkg/payload/task.go`).
///
/// `reason` is a CamelCase reason such as `UpdatePayloadResourceInvalid` or
/// `ClusterOperatorDegraded`; `message` the one-line human text; `nested` the underlying error's
/// text (upstream `Nested`); `name` the object the error is about (a ClusterOperator's name for the
/// health check, used when condensing); `task` the task description (`deployment "ns/name" (12 of
/// 345)`) once the sync worker wraps it. `effect` is `None` only for errors with no update effect
/// (such as `MultipleErrors`), which the sync worker treats as failures.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UpdateError {
    /// Machine-readable reason.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// How it affects the sync.
    pub effect: Option<UpdateEffect>,
    /// Text of the underlying error, if any.
    pub nested: Option<String>,
    /// Name of the object it is about (ClusterOperator name for the health check), may be empty.
    pub name: String,
    /// The task description, filled by the sync worker, may be empty.
    pub task: String,
}

impl UpdateError {
    /// An error with `reason`, `message` and effect `Fail`.
    pub fn new(reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            message: message.into(),
            effect: Some(UpdateEffect::Fail),
            nested: None,
            name: String::new(),
            task: String::new(),
        }
    }

    /// The same error with `effect`.
    pub fn with_effect(mut self, effect: UpdateEffect) -> Self {
        self.effect = Some(effect);
        self
    }

    /// The same error with `nested` text.
    pub fn with_nested(mut self, nested: impl Into<String>) -> Self {
        self.nested = Some(nested.into());
        self
    }

    /// The same error about object `name`.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// An `UpdatePayloadFailed` error (the "anything else" class) with `message`.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(reasons::UPDATE_PAYLOAD_FAILED, message)
    }

    /// Wraps an API error of task `task` as upstream `Task.Run` (`pkg/payload/task.go`) does: the
    /// reason of its class and the message `Could not update {task}: {cause}` (no `: {cause}` for
    /// `UpdatePayloadFailed`); `nested` keeps the server's text.
    pub fn from_api(task: &str, err: &kube::Error) -> Self {
        let class = ApiErrorClass::of(err);
        let (reason, cause) = class.reason_and_cause();
        let message = match cause {
            Some(c) => format!("Could not update {task}: {c}"),
            None => format!("Could not update {task}"),
        };
        let mut e = Self::new(reason, message).with_nested(err.to_string());
        e.task = task.to_owned();
        e
    }
}

impl fmt::Display for UpdateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UpdateError {}

/// Reason strings used by the apply layer (upstream `pkg/payload/task.go`,
/// `lib/resourcebuilder/apps.go`, `pkg/cvo/internal/operatorstatus.go`).
pub mod reasons {
    /// API NotFound / AlreadyExists.
    pub const RESOURCE_NOT_FOUND: &str = "UpdatePayloadResourceNotFound";
    /// API Conflict.
    pub const RESOURCE_CONFLICT: &str = "UpdatePayloadResourceConflict";
    /// Timeout, ServiceUnavailable, UnexpectedServerError.
    pub const CLUSTER_DOWN: &str = "UpdatePayloadClusterDown";
    /// InternalError.
    pub const CLUSTER_ERROR: &str = "UpdatePayloadClusterError";
    /// Invalid.
    pub const RESOURCE_INVALID: &str = "UpdatePayloadResourceInvalid";
    /// Unauthorized.
    pub const CLUSTER_UNAUTHORIZED: &str = "UpdatePayloadClusterUnauthorized";
    /// Forbidden.
    pub const RESOURCE_FORBIDDEN: &str = "UpdatePayloadResourceForbidden";
    /// ServerTimeout, TooManyRequests.
    pub const CLUSTER_OVERLOADED: &str = "UpdatePayloadClusterOverloaded";
    /// REST mapping found no such kind.
    pub const RESOURCE_TYPE_MISSING: &str = "UpdatePayloadResourceTypeMissing";
    /// Anything else.
    pub const UPDATE_PAYLOAD_FAILED: &str = "UpdatePayloadFailed";
    /// Deployment / DaemonSet not available.
    pub const WORKLOAD_NOT_AVAILABLE: &str = "WorkloadNotAvailable";
    /// Deployment cannot roll out.
    pub const WORKLOAD_NOT_PROGRESSING: &str = "WorkloadNotProgressing";
    /// ClusterOperator manifest without `status.versions`.
    pub const CO_NO_VERSIONS: &str = "ClusterOperatorNoVersions";
    /// ClusterOperator not Available.
    pub const CO_NOT_AVAILABLE: &str = "ClusterOperatorNotAvailable";
    /// ClusterOperator Degraded.
    pub const CO_DEGRADED: &str = "ClusterOperatorDegraded";
    /// ClusterOperator has not reached the expected versions.
    pub const CO_UPDATING: &str = "ClusterOperatorUpdating";
}

/// The class of a Kubernetes API error (kube-apiserver `Status.reason`), as upstream
/// `pkg/payload/task.go` `reasonForPayloadSyncError` classifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiErrorClass {
    /// NotFound or AlreadyExists.
    NotFound,
    /// Conflict.
    Conflict,
    /// Timeout, ServiceUnavailable, a connection failure, or an unexpected server error.
    ClusterDown,
    /// InternalError.
    InternalError,
    /// Invalid.
    Invalid,
    /// Unauthorized.
    Unauthorized,
    /// Forbidden.
    Forbidden,
    /// ServerTimeout or TooManyRequests.
    Overloaded,
    /// The kind is not served (discovery found no mapping).
    NoKindMatch,
    /// Anything else.
    Other,
}

impl ApiErrorClass {
    /// Classifies `err` by the `Status.reason` (falling back to the HTTP code).
    pub fn of(err: &kube::Error) -> Self {
        match err {
            kube::Error::Api(s) => Self::of_status(&s.reason, s.code),
            kube::Error::Discovery(_) => Self::NoKindMatch,
            kube::Error::HyperError(_) | kube::Error::Service(_) => Self::ClusterDown,
            _ => Self::Other,
        }
    }

    /// Classifies a `Status` by `reason`, or by `code` when the reason is empty or unknown.
    pub fn of_status(reason: &str, code: u16) -> Self {
        match reason {
            "NotFound" | "AlreadyExists" => Self::NotFound,
            "Conflict" => Self::Conflict,
            "Timeout" | "ServiceUnavailable" => Self::ClusterDown,
            "InternalError" => Self::InternalError,
            "Invalid" => Self::Invalid,
            "Unauthorized" => Self::Unauthorized,
            "Forbidden" => Self::Forbidden,
            "ServerTimeout" | "TooManyRequests" => Self::Overloaded,
            _ => match code {
                404 => Self::NotFound,
                409 => Self::Conflict,
                401 => Self::Unauthorized,
                403 => Self::Forbidden,
                422 => Self::Invalid,
                429 => Self::Overloaded,
                503 | 504 => Self::ClusterDown,
                500 => Self::InternalError,
                c if c >= 500 => Self::ClusterDown,
                _ => Self::Other,
            },
        }
    }

    /// Reason and cause phrase of the class (upstream `reasonForPayloadSyncError`); `None` cause
    /// for `UpdatePayloadFailed`.
    pub fn reason_and_cause(self) -> (&'static str, Option<&'static str>) {
        use reasons::*;
        match self {
            Self::NotFound => (RESOURCE_NOT_FOUND, Some("resource may have been deleted")),
            Self::Conflict => (RESOURCE_CONFLICT, Some("someone else is updating this resource")),
            Self::ClusterDown => (CLUSTER_DOWN, Some("the server is down or not responding")),
            Self::InternalError => (CLUSTER_ERROR, Some("the server is reporting an internal error")),
            Self::Invalid => (
                RESOURCE_INVALID,
                Some("the object is invalid, possibly due to local cluster configuration"),
            ),
            Self::Unauthorized => (CLUSTER_UNAUTHORIZED, Some("could not authenticate to the server")),
            Self::Forbidden => (
                RESOURCE_FORBIDDEN,
                Some("the server has forbidden updates to this resource"),
            ),
            Self::Overloaded => (
                CLUSTER_OVERLOADED,
                Some("the server is overloaded and is not accepting updates"),
            ),
            Self::NoKindMatch => (
                RESOURCE_TYPE_MISSING,
                Some("the server does not recognize this resource, check extension API servers"),
            ),
            Self::Other => (UPDATE_PAYLOAD_FAILED, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(reason: &str, code: u16) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("boom", reason)
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn api_errors_map_to_reasons_and_causes() {
        let e = UpdateError::from_api("deployment \"ns/a\" (1 of 2)", &api("Invalid", 422));
        assert_eq!(e.reason, "UpdatePayloadResourceInvalid");
        assert_eq!(
            e.message,
            "Could not update deployment \"ns/a\" (1 of 2): the object is invalid, possibly due to local cluster configuration"
        );
        let e = UpdateError::from_api("x", &api("BadRequest", 400));
        assert_eq!(
            (e.reason.as_str(), e.message.as_str()),
            ("UpdatePayloadFailed", "Could not update x")
        );
        assert_eq!(
            UpdateError::from_api("x", &api("Conflict", 409)).reason,
            "UpdatePayloadResourceConflict"
        );
        assert_eq!(
            UpdateError::from_api("x", &api("", 429)).reason,
            "UpdatePayloadClusterOverloaded"
        );
        assert_eq!(
            UpdateError::from_api("x", &api("AlreadyExists", 409)).reason,
            "UpdatePayloadResourceNotFound"
        );
    }
}
