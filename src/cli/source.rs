//! Where a command's cluster state comes from: the kubeconfig flags every command that reaches
//! a cluster shares ([`KubeconfigArgs`]), `--from` snapshot files ([`SourceArgs`]), and the
//! rule for "now" when a snapshot is assessed ([`resolve_now`]).

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::UsageError;
use crate::cluster::{ClusterState, live};

/// The kubeconfig and context to reach a cluster with, as kubectl takes them.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct KubeconfigArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl KubeconfigArgs {
    /// Connects to the cluster of the kubeconfig (see [`live::connect`]).
    ///
    /// # Errors
    /// A one-line error naming the kubeconfig or the context when it cannot be used.
    pub async fn connect(&self) -> anyhow::Result<live::Connection> {
        live::connect(self.kubeconfig.as_deref(), self.context.as_deref()).await
    }
}

/// Where cluster state comes from: a live cluster (kubeconfig, like kubectl) or `--from` files.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SourceArgs {
    /// Read an offline snapshot (file or directory, repeatable) instead of a cluster.
    #[arg(long = "from", value_name = "PATH")]
    pub from: Vec<PathBuf>,
    /// The cluster to read when no `--from` is given.
    #[command(flatten)]
    pub cluster: KubeconfigArgs,
}

impl SourceArgs {
    /// Whether the state comes from `--from` files (a snapshot) rather than a live cluster.
    pub fn is_snapshot(&self) -> bool {
        !self.from.is_empty()
    }

    /// Loads the state once: from the `--from` files or from the cluster of the kubeconfig.
    ///
    /// # Errors
    /// A one-line error naming the file (and document) that cannot be read or decoded, or the
    /// server and context when the cluster cannot be read.
    pub fn load_once(&self) -> anyhow::Result<ClusterState> {
        self.load_once_reading(live::Reads::All)
    }

    /// As [`Self::load_once`], but a live cluster is asked only for the kinds `reads` names
    /// (a snapshot is read whole).
    ///
    /// # Errors
    /// As [`Self::load_once`].
    pub fn load_once_reading(&self, reads: live::Reads) -> anyhow::Result<ClusterState> {
        if self.is_snapshot() {
            return Ok(crate::cluster::snapshot::load(&self.from)?);
        }
        super::runtime()?.block_on(async {
            let conn = self.cluster.connect().await?;
            // A 5xx or 429 is retried (bounded); the last failure is one line.
            crate::cluster::api_error::retry_transient(|| {
                live::fetch_some(&conn.client, &conn.context, reads)
            })
            .await
            .map_err(|e| anyhow::anyhow!("{}: {e:#}", conn.describe()))
        })
    }
}

/// Parses `--now` (RFC 3339).
///
/// # Errors
/// [`UsageError`] when the text is not an RFC 3339 time.
pub fn parse_now(now: Option<&str>) -> anyhow::Result<Option<DateTime<Utc>>> {
    now.map(|s| {
        DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| UsageError(format!("--now {s:?}: not an RFC 3339 time ({e})")).into())
    })
    .transpose()
}

/// The instants an assessment of `state` is made at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now {
    /// What durations are measured to: `--now`, else the snapshot's own time
    /// ([`ClusterState::snapshot_time`], the latest condition change plus 368975 ns, the rule of
    /// `openshift/oc pkg/cli/admin/upgrade/status/status.go` for its mock inputs), else the wall
    /// clock.
    pub now: DateTime<Utc>,
    /// What node "serious unavailability" is aged against: `--now` when given (so the whole
    /// assessment is reproducible), else the wall clock, as `oc` does even for snapshots.
    pub wall_clock: DateTime<Utc>,
}

/// "Now" for an assessment of `state` (see [`Now`]); `snapshot` tells whether the state was
/// read from files.
///
/// # Errors
/// [`UsageError`] when `--now` is more than a second earlier than a snapshot's own time
/// (durations would be negative).
pub fn resolve_now(
    explicit: Option<DateTime<Utc>>,
    state: &ClusterState,
    snapshot: bool,
) -> anyhow::Result<Now> {
    let snapshot_time = if snapshot { state.snapshot_time() } else { None };
    if let (Some(n), Some(t)) = (explicit, snapshot_time)
        && n + chrono::Duration::seconds(1) < t
    {
        return Err(UsageError(format!(
            "--now {}: earlier than the snapshot's latest condition change ({}); durations would be negative",
            n.to_rfc3339(),
            t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ))
        .into());
    }
    let now = explicit.or(snapshot_time).unwrap_or_else(Utc::now);
    let wall_clock = if explicit.is_some() { now } else { Utc::now() };
    Ok(Now { now, wall_clock })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_now_is_a_usage_error() {
        let e = parse_now(Some("yesterday")).expect_err("an error");
        assert!(e.is::<UsageError>());
        assert!(
            e.to_string()
                .starts_with("--now \"yesterday\": not an RFC 3339 time")
        );
        assert_eq!(parse_now(None).ok().flatten(), None);
    }

    #[test]
    fn live_state_without_now_uses_the_wall_clock() -> anyhow::Result<()> {
        let before = Utc::now();
        let n = resolve_now(None, &ClusterState::default(), false)?;
        assert!(n.now >= before && n.wall_clock >= before);
        let t = DateTime::parse_from_rfc3339("2024-01-01T00:00:00Z")?.with_timezone(&Utc);
        let n = resolve_now(Some(t), &ClusterState::default(), true)?;
        assert_eq!((n.now, n.wall_clock), (t, t));
        Ok(())
    }
}
