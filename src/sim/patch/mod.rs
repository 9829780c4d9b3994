//! Patch formats and field management, as kube-apiserver implements them:
//! - [`PatchType`]: JSON patch (RFC 6902) and JSON merge patch (RFC 7386), both through the
//!   `json-patch` crate, strategic merge patch (built-in kinds only; upstream
//!   `k8s.io/apimachinery/pkg/util/strategicpatch`), and server-side apply;
//! - [`FieldSet`] and [`managed_update`] / [`apply`]: `metadata.managedFields` entries
//!   (`FieldsV1`) per field manager and operation, apply conflicts and `force` (upstream
//!   `k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`, `sigs.k8s.io/structured-merge-diff`).
//!
//! List semantics come from one table ([`list_strategy`]) of the built-in kinds' patch merge
//! keys (`containers` by `name`, `ports` by `containerPort`, `conditions` by `type`, ...);
//! lists without an entry are atomic (replaced whole), as are all lists of CRD-defined kinds
//! except `metadata.finalizers` and `metadata.ownerReferences`.

mod fields;
mod managed;
mod strategic;
#[cfg(test)]
mod tests;

use serde_json::Value;

use super::store::{ApiError, ResourceType};

pub use fields::{FieldPath, FieldSet, Part, fields_of, from_fields_v1, path_string, to_fields_v1, value_at};
pub use managed::{apply, managed_update};
pub use strategic::{ListStrategy, list_strategy, strategic_merge};

/// A PATCH body format, from the request's `Content-Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json` (built-in kinds only).
    Strategic,
    /// `application/apply-patch+yaml`: server-side apply.
    Apply,
}

impl PatchType {
    /// The patch type of `content_type` for kind `t`.
    ///
    /// # Errors
    /// `415 UnsupportedMediaType` for another media type, or strategic merge on a CRD-defined
    /// kind (kube-apiserver's message lists the accepted types).
    pub fn from_content_type(content_type: &str, t: &ResourceType) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        let p = match media {
            "application/json-patch+json" => Self::Json,
            "application/merge-patch+json" => Self::Merge,
            "application/strategic-merge-patch+json" if t.crd.is_none() => Self::Strategic,
            "application/apply-patch+yaml" => Self::Apply,
            _ => {
                let strategic = if t.crd.is_none() {
                    "application/strategic-merge-patch+json, "
                } else {
                    ""
                };
                return Err(ApiError::new(
                    415,
                    "UnsupportedMediaType",
                    format!(
                        "the body of the request was in an unknown format - accepted media types include: \
                         application/json-patch+json, application/merge-patch+json, {strategic}\
                         application/apply-patch+yaml"
                    ),
                ));
            }
        };
        Ok(p)
    }
}

/// Applies an RFC 6902 JSON patch to `target`.
///
/// # Errors
/// `400 BadRequest` for a body that is not a JSON patch; `422 Invalid` when an operation
/// fails (missing path, failed `test`).
pub fn json_patch(target: &mut Value, body: &[u8]) -> Result<(), ApiError> {
    let p: json_patch::Patch = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    json_patch::patch(target, &p.0).map_err(|e| {
        ApiError::new(
            422,
            "Invalid",
            format!("the server rejected our request due to an error in our request: {e}"),
        )
    })
}
