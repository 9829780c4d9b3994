//! Sending a [`Plan`]: one JSON merge patch of the ClusterVersion (`Patch::Merge`), refused
//! before any request when the caller is read-only.

use kube::{
    Api, Client,
    api::{Patch, PatchParams},
};

use super::Plan;
use crate::openshift::ClusterVersion;

/// Why a plan was not written.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// `--read-only`: no request was made.
    #[error("refusing to write: read-only mode (--read-only) forbids every write, including update requests")]
    ReadOnly,
    /// The API server refused or could not be reached (oc: `Unable to upgrade: …`).
    #[error("unable to patch clusterversion/{name}: {source}")]
    Api {
        /// The ClusterVersion's name.
        name: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
}

/// Writes `plan.patch` to the ClusterVersion `plan.name` as a merge patch and returns the
/// object the server answered with. Exactly one PATCH request, or none when `read_only`.
///
/// # Errors
/// [`SendError::ReadOnly`] before any request when `read_only`; [`SendError::Api`] when the
/// server refuses the patch.
pub async fn send(client: Client, plan: &Plan, read_only: bool) -> Result<ClusterVersion, SendError> {
    if read_only {
        return Err(SendError::ReadOnly);
    }
    let api: Api<ClusterVersion> = Api::all(client);
    api.patch(&plan.name, &PatchParams::default(), &Patch::Merge(&plan.patch))
        .await
        .map_err(|source| SendError::Api {
            name: plan.name.clone(),
            source,
        })
}
