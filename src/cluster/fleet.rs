//! Many clusters at once (`cvo fleet`): the contexts of a kubeconfig, and per context one
//! client and three watches, the ClusterVersion `version`, the ClusterOperators and the CVO
//! Lease `openshift-cluster-version/version`, published together as a [`FleetState`].
//!
//! Each context gets its own [`Informers`] registry over its own client (one connection pool;
//! over HTTP/1.1 each open watch holds one TCP connection, so three per cluster). Connecting
//! and watching run per context in tasks of their own: a cluster that does not answer, or a
//! context that cannot even be configured (a missing credential plugin, an unreadable
//! certificate file), is a [`Member`] with its error and never delays the others. Nothing else
//! is read until a cluster is opened; the dashboard then uses the member's client
//! ([`Fleet::connection`]) with watches of its own, which stop when it closes.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use chrono::{DateTime, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use kube::{Client, config::Kubeconfig};
use tokio::sync::watch;

use super::{ClusterState, FeedError, FeedStatus, live, overrides::Overrides};
use crate::informers::{Health, Informer, Informers};
use crate::openshift::{ClusterOperator, ClusterVersion};

/// Namespace of the CVO Lease (upstream `pkg/start/start.go`: the CVO's namespace).
pub const LEASE_NAMESPACE: &str = "openshift-cluster-version";
/// Name of the CVO Lease (upstream's `version`).
pub const LEASE_NAME: &str = "version";

/// After a member's state is published, its further changes within this window are gathered
/// into the next one (a relist of 30 ClusterOperators costs one state, a lone change is
/// published at once).
pub const MEMBER_COALESCE: Duration = Duration::from_millis(20);

/// Which contexts of the kubeconfig make the fleet.
#[derive(Clone, Debug, Default)]
pub enum ContextPick {
    /// Every context, in kubeconfig order.
    #[default]
    All,
    /// These contexts, in this order (`--contexts a,b`); each must exist.
    Names(Vec<String>),
    /// The contexts whose name the expression matches anywhere (`--contexts-regex RE`).
    Regex(regex::Regex),
}

/// Reads the kubeconfig as kubectl finds it: `path` when given, else `$KUBECONFIG` (several
/// files merged), else `~/.kube/config`. Returns it and where it came from (for messages).
///
/// # Errors
/// One line naming the file when it is missing or cannot be parsed; there is no in-cluster
/// fallback (a fleet is a kubeconfig's contexts).
pub fn read_kubeconfig(path: Option<&Path>) -> anyhow::Result<(Kubeconfig, String)> {
    if let Some(p) = path {
        let kc = Kubeconfig::read_from(p)
            .map_err(|e| anyhow::anyhow!("kubeconfig {}: {}", p.display(), live::kubeconfig_error(&e)))?;
        return Ok((kc, p.display().to_string()));
    }
    if let Some(paths) = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        let origin = format!("{} (from KUBECONFIG)", paths.to_string_lossy());
        let kc = Kubeconfig::read()
            .map_err(|e| anyhow::anyhow!("kubeconfig {origin}: {}", live::kubeconfig_error(&e)))?;
        return Ok((kc, origin));
    }
    match live::home_kubeconfig() {
        Some(p) if p.exists() => {
            let kc = Kubeconfig::read_from(&p)
                .map_err(|e| anyhow::anyhow!("kubeconfig {}: {}", p.display(), live::kubeconfig_error(&e)))?;
            Ok((kc, p.display().to_string()))
        }
        other => anyhow::bail!(
            "no kubeconfig at {}: a fleet is the contexts of a kubeconfig (use --kubeconfig or KUBECONFIG)",
            other.map_or_else(|| "~/.kube/config".to_owned(), |p| p.display().to_string())
        ),
    }
}

/// The contexts `pick` chooses from `kc`, in kubeconfig order (`Names`: in the order given,
/// duplicates dropped).
///
/// # Errors
/// A name that is not a context, or a pick that leaves no context (the message lists the
/// contexts there are).
pub fn pick_contexts(kc: &Kubeconfig, pick: &ContextPick) -> Result<Vec<String>, String> {
    let names: Vec<&str> = kc.contexts.iter().map(|c| c.name.as_str()).collect();
    let list = || {
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    let out: Vec<String> = match pick {
        ContextPick::All => names.iter().map(|n| (*n).to_owned()).collect(),
        ContextPick::Names(want) => {
            let mut out: Vec<String> = Vec::new();
            for w in want {
                if !names.contains(&w.as_str()) {
                    return Err(format!(
                        "--contexts: no context named {w:?} (contexts: {})",
                        list()
                    ));
                }
                if !out.contains(w) {
                    out.push(w.clone());
                }
            }
            out
        }
        ContextPick::Regex(re) => names
            .iter()
            .filter(|n| re.is_match(n))
            .map(|n| (*n).to_owned())
            .collect(),
    };
    if out.is_empty() {
        return Err(match pick {
            ContextPick::Regex(re) => format!(
                "--contexts-regex {:?}: matches no context (contexts: {})",
                re.as_str(),
                list()
            ),
            _ => "the kubeconfig has no contexts".to_owned(),
        });
    }
    Ok(out)
}

/// Whether a cluster's API server answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Reach {
    /// Not answered yet (connecting, or the first lists are under way).
    Connecting,
    /// The ClusterVersion and ClusterOperator watches have listed and do not fail.
    Reachable,
    /// The context cannot be used, or its ClusterVersion or ClusterOperator watch gets no
    /// answer (connection, TLS, timeout) or a server error; what was seen before stays in the
    /// state.
    Unreachable(FeedError),
    /// The API server answers but refuses the credentials (401) or the permission to list
    /// (403) the ClusterVersion or ClusterOperators.
    Denied(FeedError),
}

/// The CVO Lease as the fleet shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseHolder {
    /// `spec.holderIdentity` (empty: released).
    pub holder: String,
    /// `spec.renewTime`.
    pub renewed: Option<DateTime<Utc>>,
    /// `spec.leaseDurationSeconds`.
    pub duration_secs: Option<i32>,
}

impl LeaseHolder {
    /// Whether the holder still holds it at `now`: a holder whose `renewTime +
    /// leaseDurationSeconds` has not passed (client-go's leader election rule).
    pub fn alive(&self, now: DateTime<Utc>) -> bool {
        match (self.holder.is_empty(), self.renewed, self.duration_secs) {
            (false, Some(r), Some(d)) => r + chrono::Duration::seconds(i64::from(d)) > now,
            _ => false,
        }
    }

    fn of(l: &Lease) -> Self {
        let spec = l.spec.as_ref();
        Self {
            holder: spec.and_then(|s| s.holder_identity.clone()).unwrap_or_default(),
            renewed: spec.and_then(|s| s.renew_time.as_ref()).and_then(|t| {
                let nanos = u32::try_from(t.0.subsec_nanosecond()).unwrap_or(0);
                DateTime::from_timestamp(t.0.as_second(), nanos)
            }),
            duration_secs: spec.and_then(|s| s.lease_duration_seconds),
        }
    }
}

/// One cluster of the fleet.
#[derive(Clone, Debug)]
pub struct Member {
    /// The kubeconfig context.
    pub context: String,
    /// The API server URL (empty when the context could not be configured).
    pub server: String,
    /// Whether it answers.
    pub reach: Reach,
    /// Whether the cluster has answered or failed for every watch (or could not be
    /// configured): the one-shot table waits for this.
    pub answered: bool,
    /// The ClusterVersion and ClusterOperators (the other kinds stay empty), with the watch
    /// health in [`ClusterState::feed`].
    pub state: ClusterState,
    /// The CVO Lease; `None` when there is none (or it cannot be read).
    pub lease: Option<LeaseHolder>,
    /// Why the Lease cannot be read (e.g. forbidden), when its watch fails.
    pub lease_error: Option<String>,
}

impl Member {
    fn connecting(context: &str) -> Self {
        Self {
            context: context.to_owned(),
            server: String::new(),
            reach: Reach::Connecting,
            answered: false,
            state: ClusterState {
                source: format!("context {context}"),
                feed: FeedStatus::Live {
                    synced: false,
                    error: None,
                },
                ..ClusterState::default()
            },
            lease: None,
            lease_error: None,
        }
    }
}

/// Every member, in the order of the contexts.
#[derive(Clone, Debug, Default)]
pub struct FleetState {
    /// The members; each is replaced (a new `Arc`) when it changes, so a reader can tell
    /// which changed by pointer.
    pub members: Vec<Arc<Member>>,
}

impl FleetState {
    /// Whether every member has answered or failed.
    pub fn all_answered(&self) -> bool {
        self.members.iter().all(|m| m.answered)
    }
}

/// A member's client and context, for a dashboard opened on it.
type Conn = Option<(Client, String)>;

/// The running fleet: its state feed and each member's connection.
pub struct Fleet {
    /// The latest [`FleetState`]; changes as members change.
    pub rx: watch::Receiver<Arc<FleetState>>,
    conns: Arc<Mutex<Vec<Conn>>>,
}

impl Fleet {
    /// Member `i`'s client and context, once it is connected: a dashboard opened on it uses
    /// the same client (and connection pool).
    pub fn connection(&self, i: usize) -> Option<(Client, String)> {
        self.conns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(i)
            .cloned()
            .flatten()
    }
}

/// Starts watching every context of `contexts` (from `kubeconfig`, as [`read_kubeconfig`]
/// finds it, with the command line's `overrides`). Must be called inside a tokio runtime; the
/// watches stop when every receiver of [`Fleet::rx`] is dropped.
pub fn watch_fleet(kubeconfig: Option<PathBuf>, contexts: &[String], overrides: &Overrides) -> Fleet {
    let initial = FleetState {
        members: contexts.iter().map(|c| Arc::new(Member::connecting(c))).collect(),
    };
    let (tx, rx) = watch::channel(Arc::new(initial));
    let tx = Arc::new(tx);
    let conns: Arc<Mutex<Vec<Conn>>> = Arc::new(Mutex::new(vec![None; contexts.len()]));
    for (i, context) in contexts.iter().enumerate() {
        let (tx, conns, context, kubeconfig, overrides) = (
            tx.clone(),
            conns.clone(),
            context.clone(),
            kubeconfig.clone(),
            overrides.clone(),
        );
        tokio::spawn(async move {
            match live::connect_with(kubeconfig.as_deref(), Some(&context), &overrides).await {
                Ok(conn) => {
                    let informers = Informers::new(conn.client.clone());
                    if let Some(slot) = conns
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .get_mut(i)
                    {
                        *slot = Some((conn.client.clone(), context.clone()));
                    }
                    follow(i, context, conn.server, &informers, &tx).await;
                }
                Err(e) => {
                    let mut m = Member::connecting(&context);
                    let error = FeedError {
                        message: format!("{e:#}"),
                        since: Utc::now(),
                    };
                    m.state.feed = FeedStatus::Live {
                        synced: false,
                        error: Some(error.clone()),
                    };
                    m.reach = Reach::Unreachable(error);
                    m.answered = true;
                    publish(&tx, i, m);
                }
            }
        });
    }
    Fleet { rx, conns }
}

fn publish(tx: &watch::Sender<Arc<FleetState>>, i: usize, m: Member) {
    tx.send_modify(|f| {
        if let Some(slot) = Arc::make_mut(f).members.get_mut(i) {
            *slot = Arc::new(m);
        }
    });
}

/// The three watches of one member.
struct Watches {
    cv: Informer<ClusterVersion>,
    co: Informer<ClusterOperator>,
    lease: Informer<Lease>,
}

impl Watches {
    fn member(&self, context: &str, server: &str) -> Member {
        let (cv_h, co_h, lease_h) = (self.cv.health(), self.co.health(), self.lease.health());
        let failure = [&cv_h, &co_h].into_iter().find_map(|h| match h {
            Health::Failed {
                message, since, code, ..
            } => Some((message.clone(), *since, *code)),
            _ => None,
        });
        let listed = cv_h.listed() && co_h.listed();
        let error = failure.as_ref().map(|(message, since, _)| FeedError {
            message: message.clone(),
            since: *since,
        });
        let reach = match (&failure, &error, listed) {
            (Some((_, _, Some(401 | 403))), Some(e), _) => Reach::Denied(e.clone()),
            (_, Some(e), _) => Reach::Unreachable(e.clone()),
            (_, None, true) => Reach::Reachable,
            (_, None, false) => Reach::Connecting,
        };
        let lease_answered = lease_h != Health::Listing;
        let answered = (error.is_some() || listed) && (lease_answered || error.is_some());
        let mut state = ClusterState {
            source: format!("context {context}"),
            cluster_version: self.cv.objects().first().map(|o| (**o).clone()),
            cluster_operators: self.co.objects().iter().map(|o| (**o).clone()).collect(),
            feed: FeedStatus::Live {
                synced: listed,
                error,
            },
            ..ClusterState::default()
        };
        state.sort_all_by_name();
        Member {
            context: context.to_owned(),
            server: server.to_owned(),
            reach,
            answered,
            state,
            lease: self.lease.objects().first().map(|l| LeaseHolder::of(l)),
            lease_error: lease_h.failure().map(|(m, _)| m.to_owned()),
        }
    }
}

/// Publishes member `i` at every change of its watches (gathered over [`MEMBER_COALESCE`])
/// until no one reads the fleet.
async fn follow(
    i: usize,
    context: String,
    server: String,
    informers: &Informers,
    tx: &watch::Sender<Arc<FleetState>>,
) {
    let w = Watches {
        cv: informers.all(Some(live::CLUSTER_VERSION_FIELDS)),
        co: informers.all(None),
        lease: informers.namespaced(LEASE_NAMESPACE, Some(&format!("metadata.name={LEASE_NAME}"))),
    };
    // Subscribed before the first read: no change is missed.
    let mut changes = [w.cv.changes(), w.co.changes(), w.lease.changes()];
    loop {
        for c in &mut changes {
            c.borrow_and_update();
        }
        if tx.is_closed() {
            return;
        }
        publish(tx, i, w.member(&context, &server));
        tokio::time::sleep(MEMBER_COALESCE).await;
        let waits = changes.iter_mut().map(|c| Box::pin(c.changed()));
        tokio::select! {
            (r, _, _) = futures::future::select_all(waits) => if r.is_err() {
                return;
            },
            () = tx.closed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kc(names: &[&str]) -> Kubeconfig {
        Kubeconfig {
            contexts: names
                .iter()
                .map(|n| kube::config::NamedContext {
                    name: (*n).to_owned(),
                    ..kube::config::NamedContext::default()
                })
                .collect(),
            ..Kubeconfig::default()
        }
    }

    #[test]
    fn contexts_are_picked_by_name_or_expression_in_kubeconfig_order() {
        let k = kc(&["prod-a", "stage", "prod-b"]);
        assert_eq!(
            pick_contexts(&k, &ContextPick::All).expect("valid"),
            ["prod-a", "stage", "prod-b"]
        );
        let names = ContextPick::Names(vec!["prod-b".into(), "stage".into(), "prod-b".into()]);
        assert_eq!(pick_contexts(&k, &names).expect("valid"), ["prod-b", "stage"]);
        let re = ContextPick::Regex(regex::Regex::new("^prod-").expect("valid"));
        assert_eq!(pick_contexts(&k, &re).expect("valid"), ["prod-a", "prod-b"]);
        assert_eq!(
            pick_contexts(&k, &ContextPick::Names(vec!["dev".into()])).expect_err("refused"),
            "--contexts: no context named \"dev\" (contexts: prod-a, stage, prod-b)"
        );
        let none = ContextPick::Regex(regex::Regex::new("^dev").expect("valid"));
        assert_eq!(
            pick_contexts(&k, &none).expect_err("refused"),
            "--contexts-regex \"^dev\": matches no context (contexts: prod-a, stage, prod-b)"
        );
        assert_eq!(
            pick_contexts(&kc(&[]), &ContextPick::All).expect_err("refused"),
            "the kubeconfig has no contexts"
        );
    }

    #[test]
    fn a_lease_is_alive_until_renew_time_plus_duration() {
        let t = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .expect("valid")
            .with_timezone(&Utc);
        let l = LeaseHolder {
            holder: "cvo-1".into(),
            renewed: Some(t),
            duration_secs: Some(137),
        };
        assert!(l.alive(t + chrono::Duration::seconds(136)));
        assert!(!l.alive(t + chrono::Duration::seconds(137)));
        let released = LeaseHolder {
            holder: String::new(),
            ..l
        };
        assert!(!released.alive(t));
    }
}
