//! `cvo upgrade`: `oc adm upgrade` for cvo. Without flags, the update status of the cluster
//! (Failing, Progressing, Upgradeable, channel, recommended updates); with `--to`,
//! `--to-image`, `--to-latest` or `--clear`, an update request decided by
//! [`crate::cluster::update_request`] and written as one merge patch (`--to-multi-arch` too);
//! `cvo upgrade channel [C]` (no argument: the channel; `--clear` clears it);
//! `cvo upgrade accept RISK,RISK-` ([`accept`]); and `cvo upgrade recommend` ([`recommend`]).
//! `--read-only` makes any request a dry run ([`dry_run`]); `recommend` on a live cluster reads
//! its alerts from the platform Thanos ([`live_alerts`]). What cvo adds where oc's text does
//! not cover the situation (why no updates, a request no CVO picked up) is in [`explain`].
//!
//! Upstream: `pkg/cli/admin/upgrade/upgrade.go` and `channel/channel.go` in openshift/oc.

pub mod accept;
pub mod dry_run;
pub mod explain;
pub mod live_alerts;
pub mod recommend;

use crate::l10n::{tr, trf};
use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use kube::Api;

use super::{
    UsageError,
    args::{KubeconfigArgs, SourceArgs},
    runtime,
};
use crate::{
    assess::{
        alerts,
        updates::{Retrieval, Target, UpdateOffer},
    },
    cluster::update_request::{self, Flags, Outcome, Request, pullspec::PullSpec},
    openshift::{ClusterVersion, ConditionStatus},
};

/// Flags of `cvo upgrade`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct UpgradeArgs {
    /// `channel` or `recommend`; none: the update status, or the request the flags ask for.
    #[command(subcommand)]
    pub command: Option<UpgradeCommand>,
    /// Update to this version (one of the available updates).
    #[arg(long, value_name = "VERSION")]
    pub to: Option<String>,
    /// Update to this release image (a by-digest pull spec; a tag only with --force).
    #[arg(long, value_name = "PULLSPEC")]
    pub to_image: Option<String>,
    /// Update to the highest available version.
    #[arg(long)]
    pub to_latest: bool,
    /// Update the current version to its multi-architecture release.
    #[arg(long)]
    pub to_multi_arch: bool,
    /// Cancel a requested update that has not started (accepted risks are kept).
    #[arg(long)]
    pub clear: bool,
    /// Allow a conditional update that is not recommended (each waived risk is printed).
    #[arg(long)]
    pub allow_not_recommended: bool,
    /// Allow a --to-image target that is not among the available updates.
    #[arg(long)]
    pub allow_explicit_upgrade: bool,
    /// Update even when the cluster is failing, invalid or already updating.
    #[arg(long)]
    pub allow_upgrade_with_warnings: bool,
    /// Waive the cluster-side preconditions (Upgradeable, rollback, giant hop) and release
    /// verification; written as desiredUpdate.force.
    #[arg(long)]
    pub force: bool,
    /// Also list the conditional updates that are not recommended.
    #[arg(long)]
    pub include_not_recommended: bool,
    /// A dry run: print the verdict of each precondition and the patch, write nothing.
    #[arg(long)]
    pub read_only: bool,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Where a by-tag `--to-image` (with `--force`) is resolved to its digest.
    #[command(flatten)]
    pub registry: super::args::RegistryArgs,
}

/// The subcommands of `cvo upgrade`.
#[derive(Subcommand, Debug)]
pub enum UpgradeCommand {
    /// Show, set or clear the update channel.
    Channel(ChannelArgs),
    /// The updates to choose from, with the issues that apply to this cluster.
    Recommend(RecommendArgs),
    /// Accept risks of conditional updates (RISK adds, RISK- removes).
    Accept(accept::AcceptArgs),
}

/// Flags of `cvo upgrade channel`.
#[derive(Args, Debug)]
pub struct ChannelArgs {
    /// The channel to set, e.g. stable-4.16; without it (and without --clear), the current
    /// channel and the release's channels are shown.
    pub channel: Option<String>,
    /// Clear the channel (the cluster then asks for no update recommendations).
    #[arg(long, conflicts_with = "channel")]
    pub clear: bool,
    /// Set a channel that is not one of the release's channels, or clear one that is.
    #[arg(long)]
    pub allow_explicit_channel: bool,
    /// A dry run: print the verdict of each precondition and the patch, write nothing.
    #[arg(long)]
    pub read_only: bool,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Flags of `cvo upgrade recommend` (`--version` is the target release, so cvo's own version
/// flag is off here).
#[derive(Args, Debug)]
#[command(disable_version_flag = true)]
pub struct RecommendArgs {
    /// Show this release only, and fail on the issues not accepted with --accept.
    #[arg(long, value_name = "VERSION")]
    pub version: Option<String>,
    /// List every release of each minor version, not only the two newest.
    #[arg(long)]
    pub show_outdated_releases: bool,
    /// Issue names to accept (e.g. Failing,ConditionalUpdateRisk,AlertNoTestData).
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub accept: Vec<String>,
    /// With --version: print nothing, only fail on issues not accepted.
    #[arg(long)]
    pub quiet: bool,
    /// Firing alerts: a Prometheus `/api/v1/alerts` JSON response (default with --from: the
    /// file named like the ClusterVersion file with `-alerts.json` for `-cv.yaml`).
    #[arg(long, value_name = "FILE")]
    pub alerts: Option<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// oc's error when the cluster has no ClusterVersion `version`, in the current language.
fn no_cluster_version() -> &'static str {
    tr!(
        "upgrade-no-cluster-version",
        "No cluster version information available - you must be connected to an OpenShift version 4 server to fetch the current version"
    )
}

/// `cvo upgrade`: dispatches to the status view, a request, `channel` or `recommend`.
///
/// # Errors
/// Usage errors of the flags (exit 2); a cluster or file that cannot be read; a refused
/// request (its reason and the flag that waives it); a write the server refused.
pub fn run(a: UpgradeArgs) -> anyhow::Result<ExitCode> {
    match a.command {
        Some(UpgradeCommand::Channel(c)) => return channel(c),
        Some(UpgradeCommand::Recommend(r)) => return run_recommend(r),
        Some(UpgradeCommand::Accept(c)) => return accept(c),
        None => {}
    }
    let request = request_of(&a)?;
    let Some(request) = request else {
        let (cv, state) = load_cv_state(&a.source)?;
        let now = if a.source.is_snapshot() {
            state.snapshot_time().unwrap_or_else(chrono::Utc::now)
        } else {
            chrono::Utc::now()
        };
        // Live only: cvo asks the cluster's update service itself what it does not offer.
        let asked = (!a.source.is_snapshot())
            .then(|| explain::ask(&cv, &state))
            .flatten();
        explain::log_failure(asked.as_ref());
        let (stdout, stderr) = status_view_with(&cv, a.include_not_recommended, &Extras { now, asked });
        eprint!("{stderr}");
        super::out::print(&stdout)?;
        return Ok(ExitCode::SUCCESS);
    };
    if a.source.is_snapshot() {
        return Err(UsageError(
            tr!(
                "upgrade-from-read-only",
                "--from is read-only: --to, --to-image, --to-latest, --to-multi-arch and --clear need a cluster (kubeconfig)"
            )
            .into(),
        )
        .into());
    }
    let flags = Flags {
        allow_not_recommended: a.allow_not_recommended,
        allow_explicit_upgrade: a.allow_explicit_upgrade,
        allow_upgrade_with_warnings: a.allow_upgrade_with_warnings,
        force: a.force,
        // `cvo upgrade` never writes acceptRisks.
        accept_risks_gate: false,
        allow_explicit_channel: false,
    };
    execute(&a.source.cluster, |_| request, flags, a.read_only)
}

/// The request the flags ask for (`None`: the status view), checked as oc checks them.
fn request_of(a: &UpgradeArgs) -> anyhow::Result<Option<Request>> {
    let usage = |m: &str| -> anyhow::Error { UsageError(m.to_string()).into() };
    if a.clear && (a.to.is_some() || a.to_image.is_some() || a.to_latest || a.to_multi_arch) {
        return Err(usage(tr!(
            "upgrade-clear-alone",
            "--clear may not be specified with any other flags"
        )));
    }
    if a.to_multi_arch && (a.to.is_some() || a.to_image.is_some() || a.to_latest) {
        return Err(usage(tr!(
            "upgrade-multi-alone",
            "--to-multi-arch may not be used with --to, --to-image, or --to-latest"
        )));
    }
    if a.to.is_some() && a.to_image.is_some() {
        return Err(usage(tr!(
            "upgrade-to-or-image",
            "only one of --to or --to-image may be provided"
        )));
    }
    if a.to_latest && (a.to.is_some() || a.to_image.is_some()) {
        return Err(usage(tr!(
            "upgrade-latest-alone",
            "--to-latest may not be used with --to or --to-image"
        )));
    }
    if let Some(v) = &a.to {
        semver::Version::parse(v).map_err(|e| {
            usage(&trf!(
                "upgrade-to-semver",
                "--to must be a semantic version (e.g. 4.0.1 or 4.1.0-nightly-20181104): {e}",
                e = e.to_string()
            ))
        })?;
        return Ok(Some(Request::ToVersion {
            version: v.clone(),
            image: None,
        }));
    }
    if let Some(image) = &a.to_image {
        let spec = PullSpec::parse(image).map_err(|e| {
            usage(&trf!(
                "req-invalid-pullspec",
                "--to-image must be a valid image pull spec: {e}",
                e = e.to_string()
            ))
        })?;
        if !spec.is_by_digest() {
            if !a.force {
                return Err(usage(tr!(
                    "req-by-digest-needed",
                    "--to-image must be a by-digest pull spec, unless --force is also set, because release images that are not accessed via digest cannot be verified by the cluster.  Even when --force is set, using tags is not recommended, although we continue to allow it for backwards compatibility"
                )));
            }
            eprintln!(
                "warning: {}",
                tr!(
                    "req-by-tag-warning",
                    "Using by-tag pull specs is dangerous, and while we still allow it in combination with --force for backward compatibility, it would be much safer to pass a by-digest pull spec instead"
                )
            );
            let by_digest = resolve_tag(image, &a.registry)?;
            eprintln!(
                "{}",
                trf!(
                    "upgrade-tag-resolved",
                    "info: {image} resolves to {by_digest}; requesting the digest",
                    image = image,
                    by_digest = by_digest
                )
            );
            return Ok(Some(Request::ToImage { pullspec: by_digest }));
        }
        return Ok(Some(Request::ToImage {
            pullspec: image.clone(),
        }));
    }
    if a.to_latest {
        return Ok(Some(Request::ToLatest));
    }
    if a.to_multi_arch {
        return Ok(Some(Request::ToMultiArch));
    }
    if a.clear {
        return Ok(Some(Request::Clear));
    }
    Ok(None)
}

/// Resolves the by-tag pull spec `image` to `registry/repository@sha256:…` once, through the
/// release-image retriever (the registry's manifest digest; no layer is pulled), so the cluster
/// is asked for an image that cannot move under it.
///
/// # Errors
/// The registry flags' credentials file, or the registry's answer (unreachable, unknown tag,
/// plain HTTP not allowed), as one line naming the pull spec.
fn resolve_tag(image: &str, registry: &super::args::RegistryArgs) -> anyhow::Result<String> {
    use crate::reconcile::payload::retrieve::Retriever;
    let opts = super::payload::retrieve_options(registry)?;
    let resolved = runtime()?
        .block_on(async { Retriever::new(opts).resolve(image).await })
        .map_err(|e| {
            let e = e.to_string();
            anyhow::Error::msg(trf!(
                "upgrade-tag-resolve-failed",
                "--to-image {image}: resolving the tag to a digest: {e}",
                image = image,
                e = e
            ))
        })?;
    Ok(resolved.by_digest)
}

/// The ClusterVersion of `--from` files or of the cluster.
fn load_cv(source: &SourceArgs) -> anyhow::Result<ClusterVersion> {
    load_cv_state(source).map(|(cv, _)| cv)
}

/// The ClusterVersion of `--from` files or of the cluster, with the rest of what was read
/// (the nodes tell the cluster's architecture).
fn load_cv_state(source: &SourceArgs) -> anyhow::Result<(ClusterVersion, crate::cluster::ClusterState)> {
    let mut state = source.load_once()?;
    let cv = state.cluster_version.take();
    let cv = cv.ok_or_else(|| {
        if source.is_snapshot() {
            let source = state.source.to_string();
            anyhow::Error::msg(trf!(
                "upgrade-no-cv-in",
                "no ClusterVersion in {source}: add the file with clusterversion/version",
                source = source
            ))
        } else {
            anyhow::anyhow!(no_cluster_version())
        }
    })?;
    Ok((cv, state))
}

/// Reads the ClusterVersion, plans the request `request_for` makes of it and sends its one
/// patch (none when refused or unchanged); `read_only` prints the dry run instead
/// ([`dry_run`]). For a [`Request::AcceptRisks`], the FeatureGate `cluster` is read for
/// [`Flags::accept_risks_gate`].
fn execute(
    cluster: &KubeconfigArgs,
    request_for: impl FnOnce(&ClusterVersion) -> Request,
    mut flags: Flags,
    read_only: bool,
) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let conn = cluster.connect().await?;
        let api: Api<ClusterVersion> = Api::all(conn.client.clone());
        let cv = api
            .get_opt("version")
            .await
            .with_context(|| {
                trf!(
                    "upgrade-reading-cv",
                    "{cluster}: reading clusterversion/version",
                    cluster = conn.describe()
                )
            })?
            .ok_or_else(|| anyhow::anyhow!(no_cluster_version()))?;
        let request = request_for(&cv);
        if matches!(request, Request::AcceptRisks(_)) {
            use crate::openshift::{FeatureGate, feature_gate::FEATURE_GATE_NAME};
            let gates: Api<FeatureGate> = Api::all(conn.client.clone());
            // A cluster that serves no FeatureGates (404 for the kind) has no gate enabled.
            let fg = match gates.get_opt(FEATURE_GATE_NAME).await {
                Ok(fg) => fg,
                Err(kube::Error::Api(s)) if s.code == 404 => None,
                Err(e) => {
                    return Err(anyhow::Error::new(e).context(format!(
                        "{}: reading featuregate/{FEATURE_GATE_NAME}",
                        conn.describe()
                    )));
                }
            };
            flags.accept_risks_gate = fg.is_some_and(|fg| fg.accept_risks(&cv.status.desired.version));
        }
        let plan = match update_request::plan(&cv, &request, &flags) {
            Ok(Outcome::NoChange(n)) => {
                super::out::println(&n.message)?;
                return Ok(ExitCode::SUCCESS);
            }
            Ok(Outcome::Plan(p)) => p,
            Err(refusal) => {
                if read_only {
                    super::out::print(&dry_run::refusal_text(&refusal))?;
                }
                return Err(refusal.into());
            }
        };
        for w in &plan.warnings {
            eprintln!("warning: {w}");
        }
        for r in &plan.waived_risks {
            let url = if r.url.is_empty() {
                String::new()
            } else {
                format!(" {}", r.url)
            };
            eprintln!(
                "{}",
                trf!(
                    "upgrade-accepting-risk",
                    "warning: accepting risk {name}: {message}{url}",
                    name = r.name,
                    message = r.message.trim(),
                    url = url
                )
            );
        }
        if read_only {
            super::out::print(&dry_run::plan_text(&plan))?;
            return Ok(ExitCode::SUCCESS);
        }
        crate::spec_request::send(conn.client, &plan.name, &plan.spec_patch()?, false).await?;
        if !plan.done.is_empty() {
            super::out::println(&plan.done)?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// `cvo upgrade channel [C] [--clear]`: no channel and no `--clear` shows the channel.
fn channel(c: ChannelArgs) -> anyhow::Result<ExitCode> {
    let request = match (&c.channel, c.clear) {
        (None, false) => {
            let cv = load_cv(&c.source)?;
            super::out::print(&channel_text(&cv))?;
            return Ok(ExitCode::SUCCESS);
        }
        (Some(ch), _) if ch.trim().is_empty() => {
            return Err(UsageError(
                tr!(
                    "upgrade-empty-channel",
                    "an empty channel: to clear the channel, use --clear"
                )
                .into(),
            )
            .into());
        }
        (Some(ch), _) => Request::Channel(ch.clone()),
        (None, true) => Request::Channel(String::new()),
    };
    if c.source.is_snapshot() {
        return Err(UsageError(
            tr!(
                "upgrade-channel-from-read-only",
                "--from is read-only: setting or clearing the channel needs a cluster (kubeconfig)"
            )
            .into(),
        )
        .into());
    }
    let flags = Flags {
        allow_explicit_channel: c.allow_explicit_channel,
        ..Flags::default()
    };
    execute(&c.source.cluster, |_| request, flags, c.read_only)
}

/// What `cvo upgrade channel` shows: the channel and the release's channels.
pub fn channel_text(cv: &ClusterVersion) -> String {
    let channels = &cv.status.desired.channels;
    let listed = if channels.is_empty() {
        String::new()
    } else {
        trf!(
            "upgrade-available-channels",
            " (available channels: {channels})",
            channels = channels.join(", ")
        )
    };
    match cv.spec.channel.as_deref().filter(|c| !c.is_empty()) {
        Some(c) => trf!("upgrade-channel", "Channel: {c}", c = c) + &listed + "\n",
        None => tr!("upgrade-channel-unset", "Channel is unset").to_owned() + &listed + "\n",
    }
}

/// `cvo upgrade accept`.
fn accept(a: accept::AcceptArgs) -> anyhow::Result<ExitCode> {
    let edit = a.edit()?;
    let request_for = move |cv: &ClusterVersion| {
        let existing: Vec<String> = cv
            .spec
            .desired_update
            .iter()
            .flat_map(|u| u.accept_risks.iter().map(|r| r.name.clone()))
            .collect();
        Request::AcceptRisks(edit.apply(&existing))
    };
    execute(&a.cluster, request_for, Flags::default(), a.read_only)
}

/// `cvo upgrade recommend`.
fn run_recommend(r: RecommendArgs) -> anyhow::Result<ExitCode> {
    let usage = |m: String| -> anyhow::Error { UsageError(m).into() };
    if r.quiet && r.version.is_none() {
        return Err(usage(
            tr!(
                "recommend-quiet-needs-version",
                "--quiet can only be set when --version is set"
            )
            .into(),
        ));
    }
    if r.version.is_some() && r.show_outdated_releases {
        return Err(usage(
            tr!(
                "recommend-outdated-with-version",
                "when --version is set, --show-outdated-releases is unnecessary"
            )
            .into(),
        ));
    }
    let version = r
        .version
        .as_deref()
        .map(|v| {
            semver::Version::parse(v).map_err(|e| {
                usage(trf!(
                    "recommend-bad-semver",
                    "cannot parse SemVer target {v:?}: {e}",
                    v = v,
                    e = e.to_string()
                ))
            })
        })
        .transpose()?;
    let source = match (&r.alerts, r.source.from.first()) {
        (Some(path), _) => recommend::AlertSource::Alerts(alerts::load(path)?),
        (None, Some(cv_path)) => sibling_alerts(cv_path)?,
        (None, None) => live_alert_source(&r.source.cluster)?,
    };
    let (cv, state) = load_cv_state(&r.source)?;
    let asked = (!r.source.is_snapshot() && !r.quiet)
        .then(|| explain::ask(&cv, &state))
        .flatten();
    let opts = recommend::Options {
        version,
        show_outdated: r.show_outdated_releases,
        accept: r.accept,
        quiet: r.quiet,
    };
    let mut out = recommend::recommend(&cv, &source, &opts);
    match (&asked, &opts.version) {
        (Some(Err(_)), _) => explain::log_failure(asked.as_ref()),
        (Some(Ok(x)), None) => {
            out.stdout += &explain::section(x, tr!("explain-with-version", "with --version VERSION"));
        }
        // `--version V` of a release the service lists but does not offer: say why.
        (Some(Ok(x)), Some(v)) if out.error.is_some() => {
            if let Some(n) = x.not_offered.iter().find(|n| n.release.version == v.to_string()) {
                out.stdout += "\n";
                out.stdout += &trf!(
                    "recommend-in-channel-not-offered",
                    "{v} is in channel {channel} but not offered: {why}.",
                    v = v.to_string(),
                    channel = x.channel,
                    why = explain::why_text(n, &x.from)
                );
                out.stdout += "\n";
            }
        }
        _ => {}
    }
    eprint!("{}", out.stderr);
    super::out::print(&out.stdout)?;
    match out.error {
        Some(e) => Err(anyhow::anyhow!(e)),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The live cluster's alerts ([`live_alerts`]); when they cannot be read, why, which
/// `recommend` reports as a precheck it could not complete.
fn live_alert_source(cluster: &KubeconfigArgs) -> anyhow::Result<recommend::AlertSource> {
    let timeout = cluster
        .request_timeout
        .filter(|d| !d.is_zero())
        .unwrap_or(live_alerts::DEFAULT_TIMEOUT);
    runtime()?.block_on(async {
        let conn = cluster.connect().await?;
        Ok(match live_alerts::fetch(&conn, timeout).await {
            Ok(a) => recommend::AlertSource::Alerts(a),
            Err(e) => recommend::AlertSource::Failed(e),
        })
    })
}

/// Offline alerts beside a `--from` ClusterVersion file: `S-cv.yaml` → `S-alerts.json`; a
/// missing or empty file means no alert data.
fn sibling_alerts(cv_path: &Path) -> anyhow::Result<recommend::AlertSource> {
    let text = cv_path.to_string_lossy();
    if !text.contains("-cv.yaml") {
        return Ok(recommend::AlertSource::NoData(
            tr!(
                "recommend-no-alert-data",
                "This --from run did not have alert data available (no --alerts FILE given)"
            )
            .into(),
        ));
    }
    let alerts_path = PathBuf::from(text.replacen("-cv.yaml", "-alerts.json", 1));
    match std::fs::metadata(&alerts_path) {
        Ok(m) if m.len() > 0 => Ok(recommend::AlertSource::Alerts(alerts::load(&alerts_path)?)),
        Ok(_) => Ok(no_data_at(&alerts_path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(no_data_at(&alerts_path)),
        Err(e) => Err(anyhow::anyhow!("{}: {e}", alerts_path.display())),
    }
}

fn no_data_at(path: &Path) -> recommend::AlertSource {
    recommend::AlertSource::NoData(trf!(
        "recommend-no-alert-data-at",
        "This --from run did not have alert data available at {path}",
        path = path.display().to_string()
    ))
}

fn indent(s: &str) -> String {
    s.replace('\n', "\n  ")
}

/// What `cvo upgrade` knows beyond the ClusterVersion.
#[derive(Clone, Debug)]
pub struct Extras {
    /// What ages are measured to (the snapshot's time with `--from`).
    pub now: chrono::DateTime<chrono::Utc>,
    /// The update service's answer, when cvo asked it ([`explain::ask`]).
    pub asked: Option<explain::Asked>,
}

/// The status view of `oc adm upgrade` (no flags): `(stdout, stderr)`, with cvo's lines from
/// the ClusterVersion alone, ages measured to now.
pub fn status_view(cv: &ClusterVersion, include_not_recommended: bool) -> (String, String) {
    status_view_with(
        cv,
        include_not_recommended,
        &Extras {
            now: chrono::Utc::now(),
            asked: None,
        },
    )
}

/// The status view of `oc adm upgrade` (no flags): `(stdout, stderr)`; cvo's own lines only
/// where oc's text does not cover the situation ([`explain`]): a request no cluster-version
/// operator has picked up, updates not retrieved (`NoUpstream`) in one line, the last good
/// answer's age after a failure, and what the update service does not offer.
pub fn status_view_with(
    cv: &ClusterVersion,
    include_not_recommended: bool,
    extras: &Extras,
) -> (String, String) {
    let (mut out, mut err) = (String::new(), String::new());
    match cv.condition("Failing") {
        Some(c) if c.status != ConditionStatus::False => {
            out += &trf!(
                "upgrade-failing",
                "Failing={status}:\n\n  Reason: {reason}\n  Message: {message}\n\n",
                status = c.status.as_str(),
                reason = c.reason(),
                message = indent(c.message())
            );
        }
        Some(_) => {}
        None => {
            err += tr!(
                "upgrade-no-failing-info",
                "warning: No current Failing info, see `oc describe clusterversion` for more details."
            );
            err.push('\n');
        }
    }
    match cv.condition("Progressing").filter(|c| !c.message().is_empty()) {
        Some(c) if c.is_true() => {
            out += &trf!(
                "upgrade-in-progress",
                "info: An upgrade is in progress. {message}",
                message = c.message()
            );
            out.push('\n');
        }
        Some(c) => out += &format!("{}\n", c.message()),
        None => {
            err += tr!(
                "upgrade-no-progressing-info",
                "warning: No current Progressing info, see `oc describe clusterversion` for more details."
            );
            err.push('\n');
        }
    }
    out.push('\n');
    if let Some(line) = explain::not_picked_up(cv) {
        out += &format!("{line}\n\n");
    }
    if let Some(c) = cv.condition("Upgradeable").filter(|c| c.is_false()) {
        out += &trf!(
            "upgrade-not-upgradeable",
            "Upgradeable=False\n\n  Reason: {reason}\n  Message: {message}\n\n",
            reason = c.reason(),
            message = indent(c.message())
        );
    }
    if let Some(c) = cv.condition("ReleaseAccepted").filter(|c| !c.is_true()) {
        out += &trf!(
            "upgrade-release-accepted",
            "ReleaseAccepted={status}\n\n  Reason: {reason}\n  Message: {message}\n\n",
            status = c.status.as_str(),
            reason = c.reason(),
            message = indent(c.message())
        );
    }
    let offer = UpdateOffer::from_cluster_version(cv);
    if !offer.channel.is_empty() {
        if offer.upstream.is_empty() {
            out += tr!(
                "upgrade-upstream-unset",
                "Upstream is unset, so the cluster will use an appropriate default."
            );
        } else {
            out += &trf!("upgrade-upstream", "Upstream: {url}", url = offer.upstream);
        }
        out.push('\n');
        out += &trf!("upgrade-channel", "Channel: {c}", c = offer.channel);
        if !offer.channels.is_empty() {
            out += &trf!(
                "upgrade-available-channels",
                " (available channels: {channels})",
                channels = offer.channels.join(", ")
            );
        }
        out.push('\n');
    }
    let retrieved = match &offer.retrieval {
        Retrieval::Failed { reason, message, .. } => Some((reason, message)),
        _ => None,
    };
    // Every target of availableUpdates (a conditional one the CVO recommends included),
    // newest first, as oc lists them.
    if !offer.recommended.is_empty() {
        out.push('\n');
        out += tr!("upgrade-recommended", "Recommended updates:");
        out += "\n\n";
        let mut table = format!(
            "  {}\t{}\n",
            tr!("upgrade-col-version", "VERSION"),
            tr!("upgrade-col-image", "IMAGE")
        );
        for t in &offer.recommended {
            table += &format!("  {}\t{}\n", t.release.version, t.release.image);
        }
        out += &super::tabwriter::format(&table, 14, 1);
        if let Some(line) = explain::not_fetched(cv) {
            err += &format!("{line}\n");
        } else if let Some((reason, message)) = retrieved {
            let age = explain::last_good_line(cv, extras.now)
                .map(|l| format!("{l}\n"))
                .unwrap_or_default();
            err += &trf!(
                "upgrade-cannot-refresh",
                "warning: Cannot refresh available updates:\n  Reason: {reason}\n  Message: {message}\n{age}\n",
                reason = reason,
                message = indent(message),
                age = age
            );
        }
    } else if let Some(line) = explain::not_fetched(cv) {
        err += &format!("{line}\n");
    } else if let Some((reason, message)) = retrieved {
        err += &trf!(
            "upgrade-cannot-display",
            "warning: Cannot display available updates:\n  Reason: {reason}\n  Message: {message}\n\n",
            reason = reason,
            message = indent(message)
        );
    } else {
        out += tr!(
            "upgrade-none",
            "No updates available. You may still upgrade to a specific release image with --to-image or wait for new updates to be available."
        );
        out.push('\n');
    }
    fn not_recommended(t: &Target) -> Option<&crate::openshift::Condition> {
        t.recommended.as_ref().filter(|c| !c.is_true())
    }
    let any_not_recommended = offer.conditional.iter().any(|t| not_recommended(t).is_some());
    if include_not_recommended {
        if any_not_recommended {
            out.push('\n');
            out += tr!("upgrade-known-issues", "Updates with known issues:");
            out.push('\n');
            for t in &offer.conditional {
                if let Some(c) = not_recommended(t) {
                    out += &trf!(
                        "upgrade-known-issue",
                        "\n  Version: {version}\n  Image: {image}\n  Reason: {reason}\n  Message: {message}\n",
                        version = t.release.version,
                        image = t.release.image,
                        reason = c.reason(),
                        message = indent(c.message().trim())
                    );
                }
            }
        } else {
            out.push('\n');
            out += tr!(
                "upgrade-no-not-recommended",
                "No updates which are not recommended based on your cluster configuration are available."
            );
            out.push('\n');
        }
    } else if any_not_recommended {
        let qualifier = offer
            .conditional
            .iter()
            .filter_map(not_recommended)
            .find(|c| c.status == ConditionStatus::Unknown)
            .map(|c| {
                trf!(
                    "upgrade-qualifier-status",
                    ", or where the recommended status is {status:?},",
                    status = c.status.as_str()
                )
            })
            .unwrap_or_default();
        out.push('\n');
        out += &trf!(
            "upgrade-more-not-recommended",
            "Additional updates which are not recommended{qualifier} for your cluster configuration are available, to view those re-run the command with --include-not-recommended.",
            qualifier = qualifier
        );
        out.push('\n');
    }
    // A failure to ask is logged by the caller (`-v`): stderr stays as oc's.
    if let Some(Ok(x)) = &extras.asked {
        out += &explain::section(x, tr!("explain-with-include", "with --include-not-recommended"));
    }
    (out, err)
}

#[cfg(test)]
mod tests;
