//! The condition shape shared by ClusterVersion, ClusterOperator and MachineConfigPool
//! (`openshift/api config/v1 ClusterOperatorStatusCondition`), and lookup helpers.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// `True`, `False` or `Unknown`; any other string decodes as `Unknown`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// Unknown, missing or unrecognised.
    #[default]
    #[serde(other)]
    Unknown,
}

impl ConditionStatus {
    /// The word as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        }
    }
}

impl std::fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One status condition: `{type, status, lastTransitionTime, reason, message}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type, e.g. `Available`, `Progressing`, `Failing`, `Degraded`.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// Whether it holds.
    #[serde(default)]
    pub status: ConditionStatus,
    /// When `status` last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<DateTime<Utc>>,
    /// CamelCase machine-readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Human-readable message; may span several lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Generation observed when the condition was set (conditional-update conditions only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl Condition {
    /// Whether `status` is `True`.
    pub fn is_true(&self) -> bool {
        self.status == ConditionStatus::True
    }
    /// Whether `status` is `False`.
    pub fn is_false(&self) -> bool {
        self.status == ConditionStatus::False
    }
    /// The reason, or `""`.
    pub fn reason(&self) -> &str {
        self.reason.as_deref().unwrap_or("")
    }
    /// The message, or `""`.
    pub fn message(&self) -> &str {
        self.message.as_deref().unwrap_or("")
    }
}

/// Finds the condition of `type_` in a list (the first, as `openshift/library-go`
/// `FindStatusCondition` does).
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}
