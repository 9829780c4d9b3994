//! The apply layer's creates (cvo's, around upstream `lib/resourceapply`): the wait for a
//! written CRD to be `Established` (from the CRD watch when it is synced), and a custom
//! resource's create timed to kube-apiserver's hold for just-established CRDs.

use std::time::Instant;

use kube::{
    Api,
    api::{DynamicObject, PostParams},
};
use serde_json::Value;

use super::{
    Applier, CR_CREATE_HOLD, CR_CREATE_MARGIN, CRD_ESTABLISHED_TIMEOUT, CRD_POLL, DISCOVERY_BACKOFF,
    DISCOVERY_RETRIES, ManifestId, crd_established, typed_kind,
};

impl Applier {
    /// After a write of a CRD: waits until it is `Established=True` (upstream
    /// `lib/resourcebuilder/apiext.go`, the CRD readiness check), at most
    /// [`CRD_ESTABLISHED_TIMEOUT`], and forgets the discovery of the group it serves. The wait
    /// follows the CRD watch's events when that watch is synced (no request); without it, or
    /// when it stops, the CRD is polled every [`CRD_POLL`]. Returns `written` with the
    /// `status` and `resourceVersion` last seen, for the readiness check and the record.
    pub(super) async fn wait_established(&self, api: &Api<DynamicObject>, written: Value) -> Value {
        let name = written["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let uid = written["metadata"]["uid"].as_str().unwrap_or_default().to_owned();
        let group = written["spec"]["group"].as_str().unwrap_or_default().to_owned();
        let deadline = Instant::now() + CRD_ESTABLISHED_TIMEOUT;
        let mut last = written;
        if !crd_established(&last)
            && let Some(mut events) = self.cache.crd_events()
        {
            loop {
                events.borrow_and_update();
                if let Some(seen) = self.cache.crd(&name, &uid) {
                    if crd_established(&seen.data) {
                        last["status"] = seen.data["status"].clone();
                        if let Some(rv) = &seen.metadata.resource_version {
                            last["metadata"]["resourceVersion"] = Value::from(rv.as_str());
                        }
                        break;
                    }
                } else if self.cache.crd_events().is_none() {
                    break; // the watch is relisting: poll instead
                }
                match tokio::time::timeout_at(deadline.into(), events.changed()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => break, // the watch stopped: poll instead
                    Err(_) => break,     // out of time
                }
            }
        }
        while !crd_established(&last) && Instant::now() < deadline {
            tokio::time::sleep(CRD_POLL).await;
            match api.get(&name).await {
                Ok(o) => last = serde_json::to_value(&o).unwrap_or(last),
                Err(e) => tracing::debug!("waiting for CRD {name} Established: {e}"),
            }
        }
        self.forget_discovery(&group);
        last
    }

    /// Creates `obj` of `id`. A custom resource whose CRD became `Established` less than
    /// [`CR_CREATE_HOLD`] ago (per the CRD watch) is sent once that time has passed: kube-apiserver
    /// holds such a create for [`CR_CREATE_HOLD`] whenever it arrives inside that window (an HA
    /// consistency delay, upstream kubernetes
    /// `staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go`,
    /// kubernetes PR 99199), so waiting out only the rest of the window costs less, and a
    /// component creating custom resources of several new kinds in a row waits once, not two
    /// seconds per kind. A `404` for a custom resource whose kind an `Established` CRD
    /// of the CRD watch serves (the server serves a new kind a moment after the condition) is
    /// asked again [`DISCOVERY_RETRIES`] times with the discovery backoff; a `404` naming a
    /// missing namespace is not.
    ///
    /// Errors: the create's last error.
    pub(super) async fn create(
        &self,
        api: &Api<DynamicObject>,
        id: &ManifestId,
        obj: &DynamicObject,
    ) -> Result<DynamicObject, kube::Error> {
        if typed_kind(id.group(), &id.kind).is_none()
            && let Some(at) = self.cache.established_at(id.group(), id.version(), &id.kind)
        {
            let ready = at + CR_CREATE_HOLD + CR_CREATE_MARGIN;
            if let Ok(rest) = (ready - chrono::Utc::now()).to_std() {
                tokio::time::sleep(rest.min(CR_CREATE_HOLD + CR_CREATE_MARGIN)).await;
            }
        }
        let mut attempt = 0;
        loop {
            match api.create(&PostParams::default(), obj).await {
                Err(kube::Error::Api(s))
                    if s.code == 404
                        && attempt < DISCOVERY_RETRIES
                        && s.details.as_ref().is_none_or(|d| d.kind != "namespaces")
                        && typed_kind(id.group(), &id.kind).is_none()
                        && self
                            .cache
                            .served_kind(id.group(), id.version(), &id.kind)
                            .is_some() =>
                {
                    tokio::time::sleep(crate::clock::jittered(DISCOVERY_BACKOFF * 3u32.pow(attempt), 0.2))
                        .await;
                    attempt += 1;
                }
                r => return r,
            }
        }
    }
}
