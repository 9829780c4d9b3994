//! The CRD kind's watch as the apply layer reads it (cvo only; upstream polls a written CRD
//! and asks discovery through a REST mapper): a CRD's `Established` condition and the kinds it
//! serves come from the watch, and the kinds of CRDs this process created are known empty
//! until their own watches have listed.

use std::{collections::HashSet, sync::Arc, time::Duration};

use kube::api::{ApiResource, DynamicObject};
use serde_json::Value;
use tokio::sync::watch;

use super::{SyncState, WatchCaches, crd_key, lock};

impl WatchCaches {
    /// The synced watch of the CRD kind: its event counter and its CRDs (trimmed in active
    /// passes, full payload CRDs in watch-only ones). `None` when the kind is not watched or
    /// its store is not complete.
    fn crd_watch(&self) -> Option<(watch::Receiver<u64>, Vec<Arc<DynamicObject>>)> {
        let watches = lock(&self.watches);
        let w = watches.get(&crd_key())?;
        (*w.synced.borrow() == SyncState::Synced).then(|| (w.events.clone(), w.store.crds()))
    }

    /// The event counter of the synced CRD watch (see [`Self::crd_watch`]).
    pub(crate) fn crd_events(&self) -> Option<watch::Receiver<u64>> {
        self.crd_watch().map(|(rx, _)| rx)
    }

    /// The CRD `name` (with `metadata.uid` `uid`) as the synced CRD watch has it: `None` when
    /// the watch cannot tell or has not seen it yet.
    pub(crate) fn crd(&self, name: &str, uid: &str) -> Option<Arc<DynamicObject>> {
        let (_, crds) = self.crd_watch()?;
        crds.into_iter().find(|c| {
            c.metadata.name.as_deref() == Some(name) && c.metadata.uid.as_deref().unwrap_or_default() == uid
        })
    }

    /// The CRD of the synced CRD watch whose `spec.group` and `spec.names.kind` are `group` and
    /// `kind` and that lists `version` (served or not).
    fn crd_of(&self, group: &str, version: &str, kind: &str) -> Option<Arc<DynamicObject>> {
        let (_, crds) = self.crd_watch()?;
        crds.into_iter().find(|c| {
            let spec = &c.data["spec"];
            spec["group"] == group
                && spec["names"]["kind"] == kind
                && spec["versions"]
                    .as_array()
                    .is_some_and(|vs| vs.iter().any(|v| v["name"] == version))
        })
    }

    /// The resource of `group`/`version`/`kind` as an `Established` CRD in the synced CRD
    /// watch defines it (the version served), and whether it is namespaced: kind resolution
    /// without a discovery request. `None` when no such CRD is known (ask discovery).
    pub(crate) fn served_kind(&self, group: &str, version: &str, kind: &str) -> Option<(ApiResource, bool)> {
        let c = self.crd_of(group, version, kind)?;
        let spec = &c.data["spec"];
        let served = spec["versions"]
            .as_array()
            .is_some_and(|vs| vs.iter().any(|v| v["name"] == version && v["served"] == true));
        let plural = spec["names"]["plural"].as_str()?;
        (served && crate::reconcile::apply::crd_established(&c.data)).then(|| {
            let gvk = kube::api::GroupVersionKind::gvk(group, version, kind);
            (
                ApiResource::from_gvk_with_plural(&gvk, plural),
                spec["scope"] == "Namespaced",
            )
        })
    }

    /// When the CRD serving `group`/`version`/`kind` (per the synced CRD watch) became
    /// `Established`: its condition's `lastTransitionTime` (whole seconds, as the server
    /// stores it). `None` when the watch cannot tell.
    pub(crate) fn established_at(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<chrono::DateTime<chrono::Utc>> {
        let c = self.crd_of(group, version, kind)?;
        c.data["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|cond| cond["type"] == "Established" && cond["status"] == "True")?["lastTransitionTime"]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&chrono::Utc))
    }

    /// Waits until an `Established` CRD of the synced CRD watch serves `group`/`version`/
    /// `kind` ([`Self::served_kind`]), at most `limit`, when a CRD of the current payload
    /// defines that kind (a first pass applies a payload's components in parallel, so a custom
    /// resource may come before its CRD is created or established). `None` at once when no
    /// payload CRD defines the kind or the CRD watch is not synced, and when `limit` passed or
    /// the watch stopped (the caller asks discovery).
    pub(crate) async fn wait_served(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        limit: Duration,
    ) -> Option<(ApiResource, bool)> {
        let key = (group.to_owned(), version.to_owned(), kind.to_owned());
        if !lock(&self.payload_crd_kinds).contains(&key) {
            return None;
        }
        let deadline = tokio::time::Instant::now() + limit;
        let mut events = self.crd_events()?;
        loop {
            events.borrow_and_update();
            if let Some(found) = self.served_kind(group, version, kind) {
                return Some(found);
            }
            // The watch relisting: discovery answers instead.
            self.crd_events()?;
            match tokio::time::timeout_at(deadline, events.changed()).await {
                Ok(Ok(())) => {}
                _ => return None,
            }
        }
    }

    /// Notes that this process created the CRD `crd` (the server's answer): no object of the
    /// kinds it defines existed then, so until their watches are synced an object of them that
    /// this process has not created is known absent (created without a GET, a `409` falls back
    /// to the GET), and their watches are not opened at once (the server answers `429` while
    /// it builds the new resource's watch cache; they open when the pass ends).
    pub(crate) fn crd_created(&self, crd: &Value) {
        let spec = &crd["spec"];
        let (Some(group), Some(kind)) = (spec["group"].as_str(), spec["names"]["kind"].as_str()) else {
            return;
        };
        let mut fresh = lock(&self.fresh);
        for v in spec["versions"].as_array().into_iter().flatten() {
            if let Some(version) = v["name"].as_str() {
                fresh.insert((format!("{group}/{version}"), kind.to_owned()), HashSet::new());
            }
        }
    }
}
