//! Kubernetes Events on the ClusterVersion where the upstream operator records them
//! (`pkg/cvo/sync_worker.go` in openshift/cluster-version-operator): `PayloadLoaded` when a
//! release payload is loaded, and a warning when it cannot be (`RetrievePayloadFailed`,
//! `VerifyPayloadVersionFailed`, `PreconditionBlock`, else `LoadPayloadFailed`). Like upstream,
//! the Events live in the operator's namespace and name the ClusterVersion as their object.
//! Only the Lease holder records them, so two operators never repeat each other.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

use crate::reconcile::api::StatusSnapshot;

/// One Event to record: type, reason, note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// Warning or not.
    pub warning: bool,
    /// Upstream's reason, e.g. `PayloadLoaded`.
    pub reason: &'static str,
    /// The message.
    pub note: String,
}

/// Decides which Events a sequence of snapshots calls for (each only once per change).
#[derive(Debug, Default)]
pub struct Decider {
    loaded: Option<(String, String)>,
    error: Option<String>,
}

/// The upstream reason of a payload failure, from its message.
fn failure_reason(msg: &str) -> &'static str {
    let m = msg.to_ascii_lowercase();
    if m.contains("precondition") {
        "PreconditionBlock"
    } else if m.contains("signature") || m.contains("verif") {
        "VerifyPayloadVersionFailed"
    } else if m.contains("retriev") || m.contains("pull") || m.contains("registry") {
        "RetrievePayloadFailed"
    } else {
        "LoadPayloadFailed"
    }
}

impl Decider {
    /// The Events `s` calls for that were not recorded yet; nothing unless `s.leader`.
    pub fn next(&mut self, s: &StatusSnapshot) -> Vec<Note> {
        let mut out = Vec::new();
        if !s.leader {
            return out;
        }
        match &s.payload_error {
            Some(e) if self.error.as_ref() != Some(e) => {
                out.push(Note {
                    warning: true,
                    reason: failure_reason(e),
                    note: e.lines().next().unwrap_or_default().to_string(),
                });
                self.error = Some(e.clone());
            }
            Some(_) => {}
            None => self.error = None,
        }
        if let Some(d) = &s.desired
            && s.payload_error.is_none()
            && s.total > 0
        {
            let key = (d.version.clone(), d.image.clone());
            if self.loaded.as_ref() != Some(&key) {
                out.push(Note {
                    warning: false,
                    reason: "PayloadLoaded",
                    note: format!("Payload loaded version={:?} image={:?}", d.version, d.image),
                });
                self.loaded = Some(key);
            }
        }
        out
    }
}

/// Records [`Note`]s as Events in `namespace` about ClusterVersion `name`; errors are logged
/// at debug level (an Event is never worth failing for).
pub async fn record(
    client: kube::Client,
    namespace: String,
    name: String,
    mut rx: tokio::sync::mpsc::Receiver<Note>,
) {
    let reporter = Reporter {
        controller: "cvo".into(),
        instance: std::env::var("POD_NAME")
            .ok()
            .or_else(|| hostname::get().ok().map(|h| h.to_string_lossy().into_owned())),
    };
    let recorder = Recorder::new(client, reporter);
    let reference = ObjectReference {
        api_version: Some("config.openshift.io/v1".into()),
        kind: Some("ClusterVersion".into()),
        name: Some(name),
        namespace: Some(namespace),
        ..ObjectReference::default()
    };
    while let Some(n) = rx.recv().await {
        let ev = Event {
            type_: if n.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: n.reason.into(),
            note: Some(n.note.chars().take(1000).collect()),
            action: n.reason.into(),
            secondary: None,
        };
        if let Err(e) = recorder.publish(&ev, &reference).await {
            tracing::debug!("recording Event {}: {e}", n.reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_change_is_recorded_once_and_only_by_the_leader() {
        let mut d = Decider::default();
        let mut s = StatusSnapshot {
            total: 5,
            desired: Some(crate::openshift::config_v1::Release {
                version: "4.16.4".into(),
                image: "q/r@sha256:1".into(),
                ..Default::default()
            }),
            ..StatusSnapshot::default()
        };
        assert!(d.next(&s).is_empty(), "a follower records nothing");
        s.leader = true;
        assert_eq!(
            d.next(&s),
            [Note {
                warning: false,
                reason: "PayloadLoaded",
                note: "Payload loaded version=\"4.16.4\" image=\"q/r@sha256:1\"".into()
            }]
        );
        assert!(d.next(&s).is_empty(), "once");
        s.payload_error = Some("The update cannot be verified: no signature\nmore".into());
        let n = d.next(&s);
        assert_eq!(n.len(), 1);
        assert_eq!((n[0].warning, n[0].reason), (true, "VerifyPayloadVersionFailed"));
        assert_eq!(n[0].note, "The update cannot be verified: no signature");
        assert!(d.next(&s).is_empty());
        assert_eq!(
            failure_reason("Retrieving payload failed: 500"),
            "RetrievePayloadFailed"
        );
        assert_eq!(
            failure_reason("Precondition \"EtcdRecentBackup\" failed"),
            "PreconditionBlock"
        );
        assert_eq!(failure_reason("loading: bad manifest"), "LoadPayloadFailed");
    }
}
