//! What is missing for the engine to have a ClusterVersion, said once per change as one log
//! line naming what to install or create: the ClusterVersion CRD (`config.openshift.io/v1
//! clusterversions`, absent on a Kubernetes cluster that is not OpenShift until the CRDs are
//! installed) or the ClusterVersion object itself when nothing of ours will create it
//! (watch-only, or a configuration that does not create it). A `GET` of an object of an
//! unserved resource answers 404 just as an absent object does, so discovery
//! (`GET /apis/config.openshift.io/v1`) tells the two apart.

use kube::Client;

use crate::reconcile::api::EngineMode;

/// The group-version whose discovery says whether ClusterVersions are served.
pub(super) const GROUP_VERSION: &str = "config.openshift.io/v1";

/// The resource name of ClusterVersions in discovery.
pub(super) const RESOURCE: &str = "clusterversions";

/// Where the docs say how to install the CRDs.
pub(crate) const INSTALL_HINT: &str =
    "install the CRDs first (docs/operator.md: kubectl apply -f tests/fixtures/crds/)";

/// What is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Missing {
    /// The ClusterVersion CRD is not served.
    Crd,
    /// The ClusterVersion object does not exist; `created` ⇒ this engine (or the Lease
    /// holder) creates it, nothing to say.
    Object {
        /// It will be created by an active-apply engine.
        created: bool,
    },
}

/// The line for a change: error or not, and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Line {
    /// An error (else info).
    pub error: bool,
    /// The text.
    pub text: String,
}

/// The text of a ClusterVersion CRD that is not served (also the engine's error, which
/// readiness reports).
pub(crate) fn crd_text() -> String {
    format!("ClusterVersion CRD ({GROUP_VERSION} {RESOURCE}) is not served: {INSTALL_HINT}")
}

/// Remembers the last state said; [`Absence::change`] gives the line a new state calls for.
#[derive(Debug, Default)]
pub(super) struct Absence {
    said: Option<Missing>,
}

impl Absence {
    /// The line `now` calls for when it differs from the state said last (`None`: the
    /// ClusterVersion is there), for ClusterVersion `name` in `mode`.
    pub(super) fn change(&mut self, now: Option<Missing>, name: &str, mode: EngineMode) -> Option<Line> {
        // A ClusterVersion an engine of ours is about to create is not worth a line.
        let now = now.filter(|m| *m != Missing::Object { created: true });
        if now == self.said {
            return None;
        }
        let before = std::mem::replace(&mut self.said, now);
        let line = match now {
            Some(Missing::Crd) => Line {
                error: true,
                text: crd_text(),
            },
            Some(Missing::Object { .. }) => Line {
                error: true,
                text: format!(
                    "ClusterVersion {name} does not exist: create it ({GROUP_VERSION} ClusterVersion {name} with \
                     spec.clusterID; the installer does){}",
                    if mode == EngineMode::WatchOnly {
                        ", or run an active-apply cvo, which creates it"
                    } else {
                        ""
                    }
                ),
            },
            None => Line {
                error: false,
                text: match before {
                    Some(Missing::Crd) => "ClusterVersion CRD is served now".to_string(),
                    _ => format!("ClusterVersion {name} exists now"),
                },
            },
        };
        Some(line)
    }
}

/// Whether the API server serves ClusterVersions (`Ok(false)`: discovery of
/// [`GROUP_VERSION`] is 404 or lists no [`RESOURCE`]).
///
/// # Errors
/// Discovery failed otherwise (no answer, 5xx, 403).
pub(super) async fn served(client: &Client) -> Result<bool, kube::Error> {
    match client.list_api_group_resources(GROUP_VERSION).await {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == RESOURCE)),
        // By code: a plain-text 404 (an unserved group) has no NotFound reason.
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_change_is_said_once_naming_what_to_install_or_create() {
        let mut a = Absence::default();
        let crd = a.change(Some(Missing::Crd), "version", EngineMode::ActiveApply);
        assert_eq!(
            crd,
            Some(Line {
                error: true,
                text:
                    "ClusterVersion CRD (config.openshift.io/v1 clusterversions) is not served: install the \
                       CRDs first (docs/operator.md: kubectl apply -f tests/fixtures/crds/)"
                        .into()
            })
        );
        assert_eq!(
            a.change(Some(Missing::Crd), "version", EngineMode::ActiveApply),
            None,
            "once"
        );
        // Installed: the object is absent now, and an active-apply engine creates it.
        assert_eq!(
            a.change(
                Some(Missing::Object { created: true }),
                "version",
                EngineMode::ActiveApply
            ),
            Some(Line {
                error: false,
                text: "ClusterVersion CRD is served now".into()
            })
        );
        assert_eq!(a.change(None, "version", EngineMode::ActiveApply), None);
        let gone = a
            .change(
                Some(Missing::Object { created: false }),
                "version",
                EngineMode::WatchOnly,
            )
            .expect("a line");
        assert!(gone.error);
        assert_eq!(
            gone.text,
            "ClusterVersion version does not exist: create it (config.openshift.io/v1 ClusterVersion version \
             with spec.clusterID; the installer does), or run an active-apply cvo, which creates it"
        );
        assert_eq!(
            a.change(
                Some(Missing::Object { created: false }),
                "version",
                EngineMode::WatchOnly
            ),
            None
        );
        assert_eq!(
            a.change(None, "version", EngineMode::WatchOnly),
            Some(Line {
                error: false,
                text: "ClusterVersion version exists now".into()
            })
        );
    }
}
