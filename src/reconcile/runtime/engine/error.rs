//! The engine loop's errors: reading and writing the ClusterVersion, loading a payload,
//! refusing a command. Their texts are what the snapshot shows (`last_error`, the command
//! outcome, the ReleaseAccepted message), worded as upstream `pkg/cvo/cvo.go` and
//! `pkg/cvo/status.go` word them.

use std::path::PathBuf;

use crate::reconcile::payload::LoadError;

/// A kube error as one line: `{message} ({reason})` for API errors, the error text otherwise.
pub(crate) fn api_text(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} ({})", s.message, s.reason),
        other => other.to_string(),
    }
}

/// A request's write error as one line: the API's message and reason, as [`api_text`].
fn send_text(e: &crate::spec_request::SendError) -> String {
    match e {
        crate::spec_request::SendError::Api { source, .. } => api_text(source),
        other => other.to_string(),
    }
}

/// A failed read or write of the ClusterVersion. Every variant is retried by the next turn of
/// the engine loop (the cached ClusterVersion is dropped and re-read).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// GET of the ClusterVersion failed.
    #[error("reading ClusterVersion {name}: {}", api_text(.err))]
    Read {
        /// ClusterVersion name.
        name: String,
        /// The API error.
        err: kube::Error,
    },
    /// Creating the absent ClusterVersion failed.
    #[error("creating ClusterVersion {name}: {}", api_text(.err))]
    Create {
        /// ClusterVersion name.
        name: String,
        /// The API error.
        err: kube::Error,
    },
    /// Re-reading the ClusterVersion after a write conflict failed.
    #[error("re-reading ClusterVersion {name}: {}", api_text(.err))]
    Reread {
        /// ClusterVersion name.
        name: String,
        /// The API error.
        err: kube::Error,
    },
    /// The ClusterVersion CRD is not served (discovery of `config.openshift.io/v1`).
    #[error("{}", super::absence::crd_text())]
    NotServed,
    /// The ClusterVersion's uid changed between the read and the status write.
    #[error("cluster version was deleted and recreated, cannot update status")]
    Recreated,
    /// The `/status` write failed.
    #[error("writing ClusterVersion {name} status: {}", api_text(.err))]
    WriteStatus {
        /// ClusterVersion name.
        name: String,
        /// The API error.
        err: kube::Error,
    },
    /// The `/status` write conflicted twice.
    #[error("writing ClusterVersion {name} status: conflict")]
    Conflict {
        /// ClusterVersion name.
        name: String,
    },
}

/// Why the payload of the target release could not be had; each maps to a ReleaseAccepted
/// step (upstream `pkg/cvo/sync_worker.go` `loadUpdatedPayload`).
#[derive(Debug, thiserror::Error)]
pub enum PayloadLoadError {
    /// The resolver has no payload for the image (step `RetrievePayload`).
    #[error("Unable to download and prepare the update: {0}")]
    Retrieve(String),
    /// The release's signature does not verify and the update is not forced (step
    /// `RetrievePayload`, reason `ImageVerificationFailed`).
    #[error("The update cannot be verified: {0}")]
    Verify(String),
    /// The payload directory does not load (step `LoadPayload`).
    #[error("{}", load_message(.dir, .err))]
    Load {
        /// The payload directory.
        dir: PathBuf,
        /// Why it does not load.
        err: LoadError,
    },
}

impl PayloadLoadError {
    /// The ReleaseAccepted step: `RetrievePayload` or `LoadPayload`.
    pub fn step(&self) -> &'static str {
        match self {
            Self::Retrieve(_) | Self::Verify(_) => "RetrievePayload",
            Self::Load { .. } => "LoadPayload",
        }
    }

    /// The reason of the update error upstream reports: `UpdatePayloadRetrievalFailed` for a
    /// retrieval, `ImageVerificationFailed` for a verification; `None` for a load error (a
    /// plain error upstream).
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            Self::Retrieve(_) => Some("UpdatePayloadRetrievalFailed"),
            Self::Verify(_) => Some("ImageVerificationFailed"),
            Self::Load { .. } => None,
        }
    }
}

/// Why a [`crate::reconcile::api::Command`] was refused (the text of the outcome's `Err`).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The switch to active-apply while another CVO's Lease is alive (or the Lease cannot be
    /// read); the text names the holder and how to stop it.
    #[error("refused: {0}")]
    LeaseHeld(String),
    /// The request was not written: `patching ClusterVersion NAME: MESSAGE (REASON)`.
    #[error("patching ClusterVersion {name}: {}", send_text(.err))]
    Send {
        /// ClusterVersion name.
        name: String,
        /// [`crate::spec_request::send`]'s error.
        err: crate::spec_request::SendError,
    },
}

/// `Error loading manifests from {dir}: {err}`, said once: a manifest error already names the
/// directory that way (upstream `pkg/payload/payload.go` `LoadUpdate`).
fn load_message(dir: &std::path::Path, err: &impl std::fmt::Display) -> String {
    let text = err.to_string();
    let prefix = format!("Error loading manifests from {}: ", dir.display());
    if text.starts_with(&prefix) {
        text
    } else {
        format!("{prefix}{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retrieval_and_verification_failures_carry_upstreams_reasons_and_texts() {
        let r = PayloadLoadError::Retrieve("download was canceled".into());
        assert_eq!(
            (r.step(), r.reason(), r.to_string().as_str()),
            (
                "RetrievePayload",
                Some("UpdatePayloadRetrievalFailed"),
                "Unable to download and prepare the update: download was canceled"
            )
        );
        let v = PayloadLoadError::Verify("verification is not possible".into());
        assert_eq!(
            (v.step(), v.reason(), v.to_string().as_str()),
            (
                "RetrievePayload",
                Some("ImageVerificationFailed"),
                "The update cannot be verified: verification is not possible"
            )
        );
        let l = PayloadLoadError::Load {
            dir: "/p".into(),
            err: LoadError::Layout {
                path: "/p".into(),
                message: "no release-manifests".into(),
            },
        };
        assert_eq!((l.step(), l.reason()), ("LoadPayload", None));
        assert_eq!(
            l.to_string(),
            "Error loading manifests from /p: /p: no release-manifests"
        );
        // A manifest error already names the directory: said once.
        let m = PayloadLoadError::Load {
            dir: "/p".into(),
            err: LoadError::Manifests {
                dir: "/p".into(),
                errors: vec![crate::reconcile::payload::ManifestError {
                    path: "manifests/fifo.yaml".into(),
                    index: 0,
                    message: "is a FIFO".into(),
                }],
            },
        };
        assert_eq!(
            m.to_string(),
            "Error loading manifests from /p: manifests/fifo.yaml#0: is a FIFO"
        );
    }
}
