//! Which release payloads the engine accepts, whatever chose the target.
//!
//! - A target the update service chose (`spec.desiredUpdate` names only a version, and the image
//!   comes from `status.availableUpdates`) must be a registry pull spec by digest, the only form
//!   a release signature binds: a `file://` or other scheme, a local path, a tag or text that is
//!   no pull spec is refused (ReleaseAccepted=False), forced or not, and nothing of it is
//!   loaded. An administrator who wants such a release names it in `spec.desiredUpdate.image`,
//!   where the checks below still apply.
//! - A payload is accepted when its signature was verified, or when the administrator
//!   registered it with this process ([`crate::reconcile::api::Resolution::Ready`]'s
//!   `registered`: the own release, the directories of a
//!   [`crate::reconcile::api::LocalPayloads`], the demo's embedded releases). Any other payload
//!   is accepted only when `spec.desiredUpdate.force` is set, and the waived verification is
//!   recorded in the load status' accepted risks, which the status writes into
//!   `status.history[0].acceptedRisks`.
//!
//! Upstream: `pkg/cvo/updatepayload.go` `RetrievePayload` (a failed verification is refused
//! unless forced, then carried as the payload's verification error), `pkg/cvo/cvo.go` (no
//! verification configured: every release is unverified) and `pkg/cvo/sync_worker.go`
//! `loadUpdatedPayload` (the error becomes the load status' accepted risks).

use std::sync::Arc;

use super::{EngineLoop, PayloadLoadError, target::Loading};
use crate::reconcile::{api::ResolveRequest, payload::Payload};

/// Why the target `image` the update service lists for `version` is refused: it is not a
/// registry pull spec by digest. `None` when it is one.
pub(super) fn listed_image_refusal(version: &str, image: &str) -> Option<PayloadLoadError> {
    let why = if let Some((scheme, _)) = image.split_once("://") {
        format!("a {scheme}:// location, not a registry pull spec")
    } else if image.starts_with(['/', '.', '~']) {
        "a local path, not a registry pull spec".to_string()
    } else {
        match image.parse::<oci_client::Reference>() {
            Err(e) => format!("not a valid pull spec ({e})"),
            Ok(r) if r.digest().is_none() => "not a pull spec by digest".to_string(),
            Ok(_) => return None,
        }
    };
    Some(PayloadLoadError::Verify(format!(
        "the update service lists release image {image:?} for version {version}, which is {why}; only a release image by digest can be verified (name one in spec.desiredUpdate.image)"
    )))
}

/// The accepted risk of a payload the resolver has ready: its own (a failed verification it
/// waived because the update is forced) when the payload verified, is registered or is the
/// release the cluster already runs (`request.current`); for any other payload, the waived
/// verification when `request.force` is set.
///
/// # Errors
/// [`PayloadLoadError::Verify`] for a payload that is neither verified nor registered when
/// the update is not forced.
pub(super) fn unverified_waiver(
    request: &ResolveRequest,
    verified: bool,
    registered: bool,
    accepted_risk: Option<String>,
) -> Result<Option<String>, PayloadLoadError> {
    // The release the cluster already runs was verified (or forced) when it was accepted; it
    // is not verified again, as upstream never verifies its own release.
    if verified || registered || request.current {
        return Ok(accepted_risk);
    }
    let why = format!(
        "no signature of release image {:?} was verified and it is not a payload registered with this operator",
        request.image
    );
    if !request.force {
        return Err(PayloadLoadError::Verify(why));
    }
    Ok(Some(accepted_risk.unwrap_or_else(|| {
        format!(
            "Target release version=\"{}\" image=\"{}\" cannot be verified, but continuing anyway because the update was forced: {why}",
            request.version, request.image
        )
    })))
}

impl EngineLoop {
    /// [`Self::load`] for the target `update_worker` chose; `listed` when the image came from
    /// the update service's list, which is refused first unless it is a registry pull spec by
    /// digest ([`listed_image_refusal`]).
    pub(super) fn load_target(
        &mut self,
        request: &ResolveRequest,
        listed: bool,
    ) -> Result<(Arc<Payload>, Option<String>, bool), Loading> {
        if listed && let Some(e) = listed_image_refusal(&request.version, &request.image) {
            return Err(Loading::Failed(e));
        }
        self.load(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "quay.io/openshift-release-dev/ocp-release@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    #[test]
    fn a_listed_image_must_be_a_registry_pull_spec_by_digest() {
        assert!(listed_image_refusal("4.16.4", DIGEST).is_none());
        for (image, why) in [
            ("file:///tmp/p", "a file:// location, not a registry pull spec"),
            (
                "https://example.com/r.tar",
                "a https:// location, not a registry pull spec",
            ),
            ("/var/lib/p", "a local path, not a registry pull spec"),
            ("quay.io/ocp/release:4.16.4", "not a pull spec by digest"),
        ] {
            let e = listed_image_refusal("4.16.4", image).expect("refused");
            assert_eq!(
                e.to_string(),
                format!(
                    "The update cannot be verified: the update service lists release image {image:?} for version 4.16.4, which is {why}; only a release image by digest can be verified (name one in spec.desiredUpdate.image)"
                )
            );
            assert_eq!(e.reason(), Some("ImageVerificationFailed"));
        }
        let e = listed_image_refusal("4.16.4", "quay.io/ocp/release@sha256:12").expect("refused");
        assert!(e.to_string().contains("which is not a valid pull spec ("), "{e}");
    }

    #[test]
    fn an_unverified_unregistered_payload_needs_force_and_is_then_a_risk() {
        let mut request = ResolveRequest {
            image: DIGEST.into(),
            version: "4.16.4".into(),
            force: false,
            current: false,
        };
        let resolver_risk = Some("forced past a bad signature".to_string());
        assert_eq!(unverified_waiver(&request, true, false, None).ok(), Some(None));
        assert_eq!(unverified_waiver(&request, false, true, None).ok(), Some(None));
        // The release the cluster runs is not verified again.
        let running = ResolveRequest {
            current: true,
            ..request.clone()
        };
        assert_eq!(unverified_waiver(&running, false, false, None).ok(), Some(None));
        let e = unverified_waiver(&request, false, false, None).expect_err("refused");
        assert_eq!(
            e.to_string(),
            format!(
                "The update cannot be verified: no signature of release image \"{DIGEST}\" was verified and it is not a payload registered with this operator"
            )
        );
        // A resolver's waiver without force is not enough.
        assert!(unverified_waiver(&request, false, false, resolver_risk.clone()).is_err());
        request.force = true;
        assert_eq!(
            unverified_waiver(&request, false, false, None).ok(),
            Some(Some(format!(
                "Target release version=\"4.16.4\" image=\"{DIGEST}\" cannot be verified, but continuing anyway because the update was forced: no signature of release image \"{DIGEST}\" was verified and it is not a payload registered with this operator"
            )))
        );
        assert_eq!(
            unverified_waiver(&request, false, false, resolver_risk.clone()).ok(),
            Some(resolver_risk)
        );
    }
}
