//! Where a command's cluster state comes from: the kubeconfig flags every command that reaches
//! a cluster shares ([`KubeconfigArgs`]), `--from` snapshot files ([`SourceArgs`]), and the
//! rule for "now" when a snapshot is assessed ([`resolve_now`]).

use std::{path::PathBuf, time::Duration};

use chrono::{DateTime, Utc};

use super::UsageError;
use crate::cluster::{
    ClusterState, live,
    overrides::{Overrides, SecretText},
};

/// The help heading of [`KubeconfigArgs`].
const CONNECTION: &str = "Cluster connection (global: before or after the command)";

/// The kubeconfig and context to reach a cluster with, and kubectl's global flags that
/// override what they give. Every flag is global: it may stand before or after the command
/// (`cvo --as alice get co`, `cvo get co --as alice`), and commands that reach no cluster
/// ignore it.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct KubeconfigArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long, value_name = "FILE", global = true, help_heading = CONNECTION)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, value_name = "NAME", global = true, help_heading = CONNECTION)]
    pub context: Option<String>,
    /// The API server URL, in place of the kubeconfig cluster's.
    #[arg(long, value_name = "URL", global = true, help_heading = CONNECTION, value_parser = parse_server)]
    pub server: Option<http::Uri>,
    /// Bearer token for the API server, in place of every credential of the kubeconfig user.
    #[arg(long, value_name = "TOKEN", global = true, help_heading = CONNECTION)]
    pub token: Option<SecretText>,
    /// Username to impersonate for the operation (a user or a service account,
    /// system:serviceaccount:NAMESPACE:NAME).
    #[arg(long = "as", value_name = "USER", global = true, help_heading = CONNECTION)]
    pub impersonate: Option<String>,
    /// Group to impersonate for the operation (repeatable; needs --as).
    #[arg(long = "as-group", value_name = "GROUP", global = true, help_heading = CONNECTION)]
    pub impersonate_groups: Vec<String>,
    /// The namespace for this command: the client's default namespace; for `cvo operator
    /// start`, the namespace of the CVO Lease and events (default: $CVO_NAMESPACE, else
    /// openshift-cluster-version).
    #[arg(short = 'n', long, value_name = "NAMESPACE", global = true, help_heading = CONNECTION)]
    pub namespace: Option<String>,
    /// PEM bundle of the certificate authorities trusted for the API server, in place of the
    /// kubeconfig's.
    #[arg(long, value_name = "FILE", global = true, help_heading = CONNECTION)]
    pub certificate_authority: Option<PathBuf>,
    /// Do not check the API server's certificate (insecure).
    #[arg(long, global = true, help_heading = CONNECTION)]
    pub insecure_skip_tls_verify: bool,
    /// How long one request may wait for its answer: a duration (`30s`, `1m`, `500ms`) or
    /// seconds; 0 means no limit. Watches are not limited (`cvo get -w` ends after it).
    #[arg(long, value_name = "DURATION", global = true, help_heading = CONNECTION, value_parser = parse_request_timeout)]
    pub request_timeout: Option<Duration>,
}

impl KubeconfigArgs {
    /// The overrides these flags ask for.
    ///
    /// # Errors
    /// [`UsageError`] for `--as-group` without `--as`.
    pub fn overrides(&self) -> Result<Overrides, UsageError> {
        if !self.impersonate_groups.is_empty() && self.impersonate.is_none() {
            return Err(UsageError(
                "--as-group: requires --as (a group is impersonated with a user)".into(),
            ));
        }
        Ok(Overrides {
            server: self.server.clone(),
            token: self.token.clone(),
            impersonate: self.impersonate.clone(),
            impersonate_groups: self.impersonate_groups.clone(),
            namespace: self.namespace.clone(),
            certificate_authority: self.certificate_authority.clone(),
            insecure_skip_tls_verify: self.insecure_skip_tls_verify,
            request_timeout: self.request_timeout.filter(|d| !d.is_zero()),
        })
    }

    /// Connects to the cluster of the kubeconfig, with the overrides of the flags (see
    /// [`live::connect_with`]).
    ///
    /// # Errors
    /// A usage error of the flags; a one-line error naming the kubeconfig or the context when
    /// it cannot be used.
    pub async fn connect(&self) -> anyhow::Result<live::Connection> {
        let overrides = self.overrides()?;
        live::connect_with(self.kubeconfig.as_deref(), self.context.as_deref(), &overrides).await
    }
}

/// Parses `--server`: an `http(s)://` URL.
fn parse_server(s: &str) -> Result<http::Uri, String> {
    let uri: http::Uri = s.parse().map_err(|e| format!("not a URL ({e})"))?;
    match uri.scheme_str() {
        Some("https" | "http") if uri.host().is_some() => Ok(uri),
        _ => Err("not an http:// or https:// URL with a host".into()),
    }
}

/// Parses `--request-timeout` as kubectl does: a whole number of seconds, or a Go duration
/// (`1h2m3.5s`, units `h`, `m`, `s`, `ms`, `us`/`µs`, `ns`); `0` means no limit.
///
/// # Errors
/// The text clap prints after the flag's name.
pub fn parse_request_timeout(s: &str) -> Result<Duration, String> {
    let bad = || "expected a duration such as 30s, 1m or 500ms, or a number of seconds".to_string();
    let s = s.trim();
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    if s.is_empty() || s.starts_with('-') {
        return Err(bad());
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let (num, tail) = rest.split_at(num_len);
        let value: f64 = num.parse().map_err(|_| bad())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let scale = match unit {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(bad()),
        };
        total += value * scale;
        rest = next;
    }
    if !total.is_finite() || total > 1e9 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(total))
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
            .map_err(|e| e.context(conn.describe()))
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
            .map_err(|e| {
                UsageError(crate::l10n::trf!(
                    "usage-now",
                    "--now {s}: not an RFC 3339 time ({e})",
                    s = format!("{s:?}"),
                    e = e.to_string()
                ))
                .into()
            })
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
    fn request_timeout_reads_seconds_and_go_durations() {
        let ok = |s: &str| parse_request_timeout(s).expect(s);
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("5"), Duration::from_secs(5));
        assert_eq!(ok("30s"), Duration::from_secs(30));
        assert_eq!(ok("1m30s"), Duration::from_secs(90));
        assert_eq!(ok("500ms"), Duration::from_millis(500));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        for bad in ["", "-1s", "5x", "s", "1m-2s", "abc"] {
            assert!(parse_request_timeout(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn as_group_needs_as() {
        let a = KubeconfigArgs {
            impersonate_groups: vec!["g".into()],
            ..KubeconfigArgs::default()
        };
        assert_eq!(
            a.overrides().expect_err("usage").0,
            "--as-group: requires --as (a group is impersonated with a user)"
        );
        let a = KubeconfigArgs {
            request_timeout: Some(Duration::ZERO),
            ..KubeconfigArgs::default()
        };
        assert_eq!(a.overrides().expect("fine").request_timeout, None);
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
