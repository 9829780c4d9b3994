//! The error vocabulary of the sync worker (upstream `pkg/payload/task.go` `UpdateError`,
//! `pkg/cvo/sync_worker.go` `summarizeTaskGraphErrors`).
//!
//! Upstream: `pkg/payload/task.go` (`UpdateError`, `SummaryForReason`, the API-error → reason
//! table), `pkg/cvo/sync_worker.go` (`condenseClusterOperators`, `newMultipleError`,
//! `summarizeTaskGraphErrors`). Everything here is pure: no I/O, no clock.

use std::fmt;

/// How a failed task affects the update (`payload.UpdateEffectType`).
///
/// `Unset` is Go's empty effect: the status writer treats it like `Fail`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum UpdateEffect {
    /// No effect recorded (e.g. `MultipleErrors`, plain wrapped API errors).
    #[default]
    Unset,
    /// Progressing, not a failure unless it lasts too long (30 min, machine-config 90 min).
    None,
    /// Recorded, but the apply still counts as complete (ClusterOperator degraded during install).
    Report,
    /// A failure now.
    Fail,
    /// A failure only after 40 minutes.
    FailAfterInterval,
}

impl UpdateEffect {
    /// Strength for condensing (`Fail > FailAfterInterval > None > Report`; `Unset` is weakest).
    fn strength(self) -> u8 {
        match self {
            Self::Unset => 0,
            Self::Report => 1,
            Self::None => 2,
            Self::FailAfterInterval => 3,
            Self::Fail => 4,
        }
    }
}

/// The task a failed manifest belongs to (upstream `payload.Task`, reduced to what error
/// messages and condensing need).
///
/// Displays as `{lowercase kind} "{ns/}{name}" ({index} of {total})`, e.g.
/// `clusteroperator "test-co-A" (5 of 10)` (upstream `pkg/payload/task.go String`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskRef {
    /// 1-based position in the payload.
    pub index: usize,
    /// Number of manifests in the payload.
    pub total: usize,
    /// API group of the manifest (`config.openshift.io` for ClusterOperator).
    pub group: String,
    /// Kind of the manifest, e.g. `ClusterOperator`.
    pub kind: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Object name (the file name when the manifest has none).
    pub name: String,
}

impl TaskRef {
    /// Whether the task applies a `config.openshift.io` ClusterOperator (condensing groups only
    /// those).
    pub(crate) fn is_cluster_operator(&self) -> bool {
        self.kind == "ClusterOperator" && self.group == "config.openshift.io"
    }
}

impl fmt::Display for TaskRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.kind.to_lowercase();
        if self.namespace.is_empty() {
            write!(f, "{kind} \"{}\" ({} of {})", self.name, self.index, self.total)
        } else {
            write!(
                f,
                "{kind} \"{}/{}\" ({} of {})",
                self.namespace, self.name, self.index, self.total
            )
        }
    }
}

/// A typed update error (`payload.UpdateError`). Its text (`Display`) is `message`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpdateError {
    /// CamelCase reason, e.g. `ClusterOperatorNotAvailable`, `UpdatePayloadFailed`.
    pub reason: String,
    /// Reason used when several errors of this reason are condensed, e.g.
    /// `ClusterOperatorsNotAvailable`.
    pub plural_reason: String,
    /// Human-readable message.
    pub message: String,
    /// Format of the condensed message; `%s` is replaced by the `, `-joined names, e.g.
    /// `Cluster operators %s are not available`.
    pub plural_message_format: String,
    /// Name of the failing object (ClusterOperator name), or the joined names when condensed.
    pub name: String,
    /// Names of all failing objects when condensed (sorted).
    pub names: Vec<String>,
    /// Effect on the update.
    pub effect: UpdateEffect,
    /// The wrapped errors (for condensed / multiple errors, in input order).
    pub nested: Vec<SyncError>,
    /// The task that failed, if any.
    pub task: Option<TaskRef>,
}

impl fmt::Display for UpdateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UpdateError {}

impl UpdateError {
    /// An error with just a reason and a message (effect `Unset`).
    pub fn new(reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            message: message.into(),
            ..Self::default()
        }
    }

    /// An error with a reason, a message and effect `Fail` (the apply layer's failures,
    /// upstream `lib/resourcebuilder` and `pkg/cvo/internal/operatorstatus.go`).
    pub fn fail(reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(reason, message).with_effect(UpdateEffect::Fail)
    }

    /// An `UpdatePayloadFailed` error (the "anything else" class) with `message` and effect
    /// `Fail`.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::fail(reasons::UPDATE_PAYLOAD_FAILED, message)
    }

    /// Wraps an API error of the task described by `task` (e.g. `deployment "ns/a"`) with the
    /// reason of its class ([`ApiErrorKind::of`]) and the message `Could not update {task}:
    /// {cause}` (no `: {cause}` for `UpdatePayloadFailed`), effect `Fail`; the server's text is
    /// nested (upstream `pkg/payload/task.go` `Task.Run`, `reasonForPayloadSyncError`).
    pub(crate) fn from_api(task: &str, err: &kube::Error) -> Self {
        Self::from_api_kind(task, ApiErrorKind::of(err), err)
    }

    /// [`Self::from_api`] with the class already decided (e.g. a discovery failure that means
    /// the kind is not served).
    pub(crate) fn from_api_kind(task: &str, kind: ApiErrorKind, err: &kube::Error) -> Self {
        let (reason, cause) = kind.reason_and_cause();
        let message = if cause.is_empty() {
            format!("Could not update {task}")
        } else {
            format!("Could not update {task}: {cause}")
        };
        Self::fail(reason, message).with_nested(api_error_text(err))
    }

    /// Builder: nests a plain error with this text (upstream `Nested`).
    #[must_use]
    pub(crate) fn with_nested(mut self, nested: impl Into<String>) -> Self {
        self.nested = vec![SyncError::plain(nested)];
        self
    }

    /// The text of the nested errors (joined by `; ` when there are several), `None` when
    /// nothing is nested.
    pub fn nested_text(&self) -> Option<String> {
        if self.nested.is_empty() {
            return None;
        }
        Some(
            self.nested
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        )
    }

    /// Builder: sets the effect.
    #[must_use]
    pub fn with_effect(mut self, effect: UpdateEffect) -> Self {
        self.effect = effect;
        self
    }

    /// Builder: sets the name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Builder: sets the plural reason and plural message format.
    #[must_use]
    pub fn with_plural(mut self, reason: impl Into<String>, format: impl Into<String>) -> Self {
        self.plural_reason = reason.into();
        self.plural_message_format = format.into();
        self
    }

    /// Builder: sets the task.
    #[must_use]
    pub fn with_task(mut self, task: TaskRef) -> Self {
        self.task = Some(task);
        self
    }
}

/// Any error the sync worker reports: a typed [`UpdateError`], a plain error (its text only),
/// or an interruption (context cancelled / deadline), which summarising drops.
#[derive(Clone, Debug, PartialEq)]
pub enum SyncError {
    /// A typed update error.
    Update(Box<UpdateError>),
    /// Any other error, by its text (Go's non-`UpdateError` errors).
    Plain(String),
    /// Apply interrupted (cancelled or timed out); the text is the cause.
    Interrupted(String),
}

impl fmt::Display for SyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Update(u) => u.fmt(f),
            Self::Plain(s) | Self::Interrupted(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for SyncError {}

impl From<UpdateError> for SyncError {
    fn from(u: UpdateError) -> Self {
        Self::Update(Box::new(u))
    }
}

impl SyncError {
    /// A plain error with this text.
    pub fn plain(msg: impl Into<String>) -> Self {
        Self::Plain(msg.into())
    }

    /// The update error, if this is one.
    pub fn as_update(&self) -> Option<&UpdateError> {
        match self {
            Self::Update(u) => Some(u),
            _ => None,
        }
    }

    /// The reason of an update error, `""` otherwise (Go `getReasonMessageFromError`).
    pub fn reason(&self) -> &str {
        self.as_update().map_or("", |u| u.reason.as_str())
    }

    /// The effect of an update error, `Unset` otherwise.
    pub fn effect(&self) -> UpdateEffect {
        self.as_update().map_or(UpdateEffect::Unset, |u| u.effect)
    }
}

/// Reason strings of update errors built by the engine (upstream `pkg/payload/task.go`,
/// `lib/resourcebuilder`, `pkg/cvo/internal/operatorstatus.go`).
pub mod reasons {
    /// API NotFound / AlreadyExists.
    pub(crate) const RESOURCE_NOT_FOUND: &str = "UpdatePayloadResourceNotFound";
    /// Anything else.
    pub(crate) const UPDATE_PAYLOAD_FAILED: &str = "UpdatePayloadFailed";
    /// Deployment / DaemonSet not available.
    pub(crate) const WORKLOAD_NOT_AVAILABLE: &str = "WorkloadNotAvailable";
    /// Deployment cannot roll out.
    pub(crate) const WORKLOAD_NOT_PROGRESSING: &str = "WorkloadNotProgressing";
    /// ClusterOperator manifest without `status.versions`.
    pub(crate) const CO_NO_VERSIONS: &str = "ClusterOperatorNoVersions";
    /// ClusterOperator not Available.
    pub(crate) const CO_NOT_AVAILABLE: &str = "ClusterOperatorNotAvailable";
    /// ClusterOperator Degraded.
    pub(crate) const CO_DEGRADED: &str = "ClusterOperatorDegraded";
    /// ClusterOperator has not reached the expected versions.
    pub(crate) const CO_UPDATING: &str = crate::reconcile::api::OPERATORS_UPDATING_REASONS[0];
}

/// Class of a Kubernetes API error, as `k8s.io/apimachinery/pkg/api/errors` `Is*` tests it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApiErrorKind {
    /// 404 / `NotFound`.
    NotFound,
    /// `AlreadyExists` (409).
    AlreadyExists,
    /// `Conflict` (409).
    Conflict,
    /// `Timeout` (504).
    Timeout,
    /// `ServiceUnavailable` (503).
    ServiceUnavailable,
    /// An unexpected server response (`UnexpectedServerResponse` cause).
    UnexpectedServerError,
    /// `InternalError` (500).
    InternalError,
    /// `Invalid` (422).
    Invalid,
    /// `Unauthorized` (401).
    Unauthorized,
    /// `Forbidden` (403).
    Forbidden,
    /// `ServerTimeout`.
    ServerTimeout,
    /// `TooManyRequests` (429).
    TooManyRequests,
    /// The REST mapper has no kind for the manifest (`meta.NoKindMatchError`).
    NoKindMatch,
    /// No HTTP response at all (connection refused, TLS, timeout in the transport). Upstream's
    /// client-go returns no API status here; this port reports it like `ServiceUnavailable`.
    Unreachable,
    /// Anything else.
    Other,
}

const KNOWN_STATUS_REASONS: &[&str] = &[
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Invalid",
    "ServerTimeout",
    "StoreReadError",
    "Timeout",
    "TooManyRequests",
    "BadRequest",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "InternalError",
    "Expired",
    "ServiceUnavailable",
];

impl ApiErrorKind {
    /// Classifies a kube client error: an API `Status` by [`Self::from_status`] (or
    /// `UnexpectedServerError` when a cause says `UnexpectedServerResponse`, apimachinery
    /// `IsUnexpectedServerError`), a discovery failure as `NoKindMatch`, a transport failure as
    /// `Unreachable`, anything else as `Other`.
    pub fn of(err: &kube::Error) -> Self {
        match err {
            kube::Error::Api(s) => {
                let unexpected = s
                    .details
                    .as_ref()
                    .is_some_and(|d| d.causes.iter().any(|c| c.reason == "UnexpectedServerResponse"));
                if unexpected {
                    Self::UnexpectedServerError
                } else {
                    Self::from_status(s.code, &s.reason)
                }
            }
            kube::Error::Discovery(_) => Self::NoKindMatch,
            kube::Error::HyperError(_) | kube::Error::Service(_) => Self::Unreachable,
            _ => Self::Other,
        }
    }

    /// Classifies a `metav1.Status` failure by its `reason` and HTTP `code`: the reason decides
    /// when it is a known one, the code otherwise (apimachinery `reasonAndCodeForError`).
    pub fn from_status(code: u16, reason: &str) -> Self {
        let by_reason = match reason {
            "NotFound" => Some(Self::NotFound),
            "AlreadyExists" => Some(Self::AlreadyExists),
            "Conflict" => Some(Self::Conflict),
            "Timeout" => Some(Self::Timeout),
            "ServiceUnavailable" => Some(Self::ServiceUnavailable),
            "InternalError" => Some(Self::InternalError),
            "Invalid" => Some(Self::Invalid),
            "Unauthorized" => Some(Self::Unauthorized),
            "Forbidden" => Some(Self::Forbidden),
            "ServerTimeout" => Some(Self::ServerTimeout),
            "TooManyRequests" => Some(Self::TooManyRequests),
            _ => None,
        };
        if let Some(k) = by_reason {
            return k;
        }
        if KNOWN_STATUS_REASONS.contains(&reason) {
            return Self::Other;
        }
        match code {
            404 => Self::NotFound,
            409 => Self::Conflict,
            504 => Self::Timeout,
            503 => Self::ServiceUnavailable,
            500 => Self::InternalError,
            422 => Self::Invalid,
            401 => Self::Unauthorized,
            403 => Self::Forbidden,
            429 => Self::TooManyRequests,
            _ => Self::Other,
        }
    }

    /// The update-error reason and cause phrase of this class (upstream
    /// `pkg/payload/task.go reasonForPayloadSyncError`). The cause is `""` for `Other`.
    pub(crate) fn reason_and_cause(self) -> (&'static str, &'static str) {
        match self {
            Self::NotFound | Self::AlreadyExists => {
                ("UpdatePayloadResourceNotFound", "resource may have been deleted")
            }
            Self::Conflict => (
                "UpdatePayloadResourceConflict",
                "someone else is updating this resource",
            ),
            Self::Timeout | Self::ServiceUnavailable | Self::UnexpectedServerError | Self::Unreachable => {
                ("UpdatePayloadClusterDown", "the server is down or not responding")
            }
            Self::InternalError => (
                "UpdatePayloadClusterError",
                "the server is reporting an internal error",
            ),
            Self::Invalid => (
                "UpdatePayloadResourceInvalid",
                "the object is invalid, possibly due to local cluster configuration",
            ),
            Self::Unauthorized => (
                "UpdatePayloadClusterUnauthorized",
                "could not authenticate to the server",
            ),
            Self::Forbidden => (
                "UpdatePayloadResourceForbidden",
                "the server has forbidden updates to this resource",
            ),
            Self::ServerTimeout | Self::TooManyRequests => (
                "UpdatePayloadClusterOverloaded",
                "the server is overloaded and is not accepting updates",
            ),
            Self::NoKindMatch => (
                "UpdatePayloadResourceTypeMissing",
                "the server does not recognize this resource, check extension API servers",
            ),
            Self::Other => ("UpdatePayloadFailed", ""),
        }
    }
}

/// Wraps the final error of a task after its retries (`Task.Run`): an update error keeps its
/// reason and gets the task; anything else becomes `UpdateError{reason, "Could not update
/// {task}[: {cause}]"}` with the error nested. `kind` classifies a plain error (use
/// [`ApiErrorKind::Other`] for non-API errors).
///
/// Example: a plain error on `test "file-yml" (3 of 3)` ⇒ `UpdatePayloadFailed`,
/// `Could not update test "file-yml" (3 of 3)` (upstream
/// `pkg/cvo/cvo_scenarios_test.go` `TestCVO_ErrorDuringReconcile`).
pub fn wrap_task_error(task: &TaskRef, err: SyncError, kind: ApiErrorKind) -> UpdateError {
    if let SyncError::Update(mut u) = err {
        u.task = Some(task.clone());
        return *u;
    }
    let (reason, cause) = kind.reason_and_cause();
    let message = if cause.is_empty() {
        format!("Could not update {task}")
    } else {
        format!("Could not update {task}: {cause}")
    };
    UpdateError {
        reason: reason.to_string(),
        message,
        nested: vec![err],
        task: Some(task.clone()),
        ..UpdateError::default()
    }
}

/// The phrase that follows `Unable to apply {V}: ` / `Error while reconciling {V}: ` in
/// Progressing (upstream `pkg/payload/task.go SummaryForReason`). `name` is the failing
/// object's name or `""`.
pub fn summary_for_reason(reason: &str, name: &str) -> String {
    let named = |with: &str, without: &str| -> String {
        if name.is_empty() {
            without.to_string()
        } else {
            with.replace("{n}", name)
        }
    };
    match reason {
        "UpdatePayloadResourceNotFound" | "UpdatePayloadResourceConflict" => {
            "some resources could not be updated".into()
        }
        "UpdatePayloadClusterDown" => "the control plane is down or not responding".into(),
        "UpdatePayloadClusterError" => "the control plane is reporting an internal error".into(),
        "UpdatePayloadClusterOverloaded" => {
            "the control plane is overloaded and is not accepting updates".into()
        }
        "UpdatePayloadClusterUnauthorized" => "could not authenticate to the server".into(),
        "UpdatePayloadRetrievalFailed" => "could not download the update".into(),
        "UpdatePayloadResourceForbidden" => "the server is rejecting updates".into(),
        "UpdatePayloadResourceTypeMissing" => "a required extension is not available to update".into(),
        "UpdatePayloadResourceInvalid" => "some cluster configuration is invalid".into(),
        "UpdatePayloadIntegrity" => "the contents of the update are invalid".into(),
        "ImageVerificationFailed" => "the image may not be safe to use".into(),
        "UpgradePreconditionCheckFailed" => "it may not be safe to apply this update".into(),
        "ClusterOperatorDegraded" => named(
            "the cluster operator {n} is degraded",
            "a cluster operator is degraded",
        ),
        "ClusterOperatorNotAvailable" => named(
            "the cluster operator {n} is not available",
            "a cluster operator is not available",
        ),
        "ClusterOperatorsNotAvailable" => "some cluster operators are not available".into(),
        "ClusterOperatorNoVersions" => named(
            "the cluster operator {n} does not declare expected versions",
            "a cluster operator does not declare expected versions",
        ),
        "WorkloadNotAvailable" => named(
            "the workload {n} has not yet successfully rolled out",
            "a workload has not yet rolled out",
        ),
        "WorkloadNotProgressing" => named("the workload {n} cannot roll out", "a workload cannot roll out"),
        r if r.starts_with("UpdatePayload") => "the update could not be applied".into(),
        r => {
            if name.is_empty() {
                format!("an unknown error has occurred: {r}")
            } else {
                format!("{name} has an unknown error: {r}")
            }
        }
    }
}

/// Condenses ClusterOperator-task update errors with the same reason into one plural error
/// (`sync_worker.go condenseClusterOperators`, tests in
/// `sync_worker_test.go` `Test_condenseClusterOperators`).
///
/// Non-ClusterOperator errors come first in input order; then one entry per reason, reasons
/// sorted. A reason with one error passes through; with ≥2 the result has `reason =
/// plural_reason`, `message = plural_message_format` with the sorted names joined by `, `,
/// `name` = that join, `names` sorted, `nested` = the errors in input order, and the strongest
/// effect (`Fail > FailAfterInterval > None > Report`).
pub fn condense_cluster_operators(errs: Vec<SyncError>) -> Vec<SyncError> {
    let mut out = Vec::new();
    let mut by_reason: std::collections::BTreeMap<String, Vec<UpdateError>> = Default::default();
    for e in errs {
        match e {
            SyncError::Update(u) if u.task.as_ref().is_some_and(TaskRef::is_cluster_operator) => {
                by_reason.entry(u.reason.clone()).or_default().push(*u);
            }
            other => out.push(other),
        }
    }
    for (reason, group) in by_reason {
        if group.len() == 1 {
            out.extend(group.into_iter().map(SyncError::from));
            continue;
        }
        let mut names: Vec<String> = group.iter().map(|u| u.name.clone()).collect();
        names.sort();
        let joined = names.join(", ");
        let first = &group[0];
        let effect = group
            .iter()
            .map(|u| u.effect)
            .max_by_key(|e| e.strength())
            .unwrap_or_default();
        let plural_reason = if first.plural_reason.is_empty() {
            reason
        } else {
            first.plural_reason.clone()
        };
        let message = first.plural_message_format.replacen("%s", &joined, 1);
        out.push(
            UpdateError {
                reason: plural_reason,
                message,
                name: joined,
                names,
                effect,
                nested: group.into_iter().map(SyncError::from).collect(),
                ..UpdateError::default()
            }
            .into(),
        );
    }
    out
}

/// One error unchanged; several ⇒ `MultipleErrors` with message `Multiple errors are
/// preventing progress:\n* {m1}\n* {m2}` (messages sorted, duplicates dropped), the errors
/// nested in input order and no effect; none ⇒ `None` (`sync_worker.go newMultipleError`).
pub fn multiple_errors(mut errs: Vec<SyncError>) -> Option<SyncError> {
    match errs.len() {
        0 => None,
        1 => errs.pop(),
        _ => {
            let mut msgs: Vec<String> = errs.iter().map(ToString::to_string).collect();
            msgs.sort();
            msgs.dedup();
            let mut message = String::from("Multiple errors are preventing progress:");
            for m in &msgs {
                message.push_str("\n* ");
                message.push_str(m);
            }
            Some(
                UpdateError {
                    reason: "MultipleErrors".into(),
                    message,
                    nested: errs,
                    ..UpdateError::default()
                }
                .into(),
            )
        }
    }
}

/// Turns the errors of one task-graph run into the worker's one failure
/// (`summarizeTaskGraphErrors`): interruptions dropped (none left ⇒ `None`), ClusterOperator
/// errors condensed, then [`multiple_errors`].
pub fn summarize_task_graph_errors(errs: Vec<SyncError>) -> Option<SyncError> {
    let kept: Vec<SyncError> = errs
        .into_iter()
        .filter(|e| !matches!(e, SyncError::Interrupted(_)))
        .collect();
    if kept.is_empty() {
        return None;
    }
    multiple_errors(condense_cluster_operators(kept))
}

/// Drops the nested errors of `effect` from a `MultipleErrors` failure and rebuilds it (one left
/// ⇒ that error, none ⇒ `None`); any other failure is returned unchanged
/// (`status.go filterErrorForFailingCondition`).
pub(crate) fn filter_error_for_failing_condition(
    err: Option<&SyncError>,
    effect: UpdateEffect,
) -> Option<SyncError> {
    let err = err?;
    match err.as_update() {
        Some(u) if u.reason == "MultipleErrors" => {
            let kept: Vec<SyncError> = u
                .nested
                .iter()
                .filter(|e| e.effect() != effect)
                .cloned()
                .collect();
            multiple_errors(kept)
        }
        _ => Some(err.clone()),
    }
}

/// A kube error as one sentence: for an API answer, the Status's message, reason and code
/// (`etcd leader changed (reason InternalError, code 500)`), never kube's debug form of the
/// Status; other errors as they display.
pub fn api_error_text(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(s) => {
            let message = s.message.split_whitespace().collect::<Vec<_>>().join(" ");
            let message = if message.is_empty() {
                "no message"
            } else {
                message.as_str()
            };
            if s.reason.is_empty() {
                format!("{message} (code {})", s.code)
            } else {
                format!("{message} (reason {}, code {})", s.reason, s.code)
            }
        }
        other => other.to_string(),
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
    fn a_500_nests_one_sentence_not_a_debug_struct() {
        let e = UpdateError::from_api("x", &api("InternalError", 500));
        assert_eq!(
            e.nested_text().as_deref(),
            Some("boom (reason InternalError, code 500)")
        );
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

    #[test]
    fn unknown_5xx_is_update_payload_failed_unless_the_server_says_unexpected() {
        // apimachinery's Is* tests fall back to the code only for 500, 503, 504
        // (pkg/payload/task.go reasonForPayloadSyncError).
        assert_eq!(ApiErrorKind::of(&api("", 502)), ApiErrorKind::Other);
        assert_eq!(
            UpdateError::from_api("x", &api("", 502)).reason,
            "UpdatePayloadFailed"
        );
        assert_eq!(ApiErrorKind::of(&api("", 503)), ApiErrorKind::ServiceUnavailable);
        let s: kube::core::Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 502, "reason": "InternalError",
            "details": {"causes": [{"reason": "UnexpectedServerResponse", "message": "bad gateway"}]},
        }))
        .expect("status");
        assert_eq!(
            UpdateError::from_api("x", &kube::Error::Api(s.boxed())).reason,
            "UpdatePayloadClusterDown"
        );
    }
}
