//! What each command does with its parsed flags: checks the values (a bad one is a
//! [`UsageError`], exit 2), reads the cluster or files, runs the work and prints the result.
//! Each returns the exit code of a run that did not fail (see [`super`] for the convention).

use crate::l10n::tr;
use std::{process::ExitCode, time::Duration};

use super::{
    UsageError,
    args::{AssessArgs, GetArgs, InspectArgs, Mode, Output, ReconcileArgs, StatusArgs, StatusOutput},
    runtime,
    source::{parse_now, resolve_now},
};
use crate::assess::alerts::Alerts;

impl AssessArgs {
    /// `--now` parsed, and `--alerts` read.
    ///
    /// # Errors
    /// [`UsageError`] for a `--now` that is not RFC 3339; a one-line error naming the alerts
    /// file when it cannot be read.
    pub fn now_and_alerts(&self) -> anyhow::Result<(Option<chrono::DateTime<chrono::Utc>>, Option<Alerts>)> {
        let now = parse_now(self.now.as_deref())?;
        let alerts = self
            .alerts
            .as_deref()
            .map(crate::assess::alerts::load)
            .transpose()?;
        Ok((now, alerts))
    }
}

/// A positive, finite number of seconds as a duration.
///
/// # Errors
/// [`UsageError`] `--timeout T: must be a positive number of seconds` otherwise.
pub fn timeout_flag(t: Option<f64>) -> Result<Option<Duration>, UsageError> {
    match t {
        Some(t) if !(t.is_finite() && t > 0.0) => Err(UsageError(format!(
            "--timeout {t}: must be a positive number of seconds"
        ))),
        Some(t) => Ok(Some(Duration::from_secs_f64(t))),
        None => Ok(None),
    }
}

/// `cvo status`: where the cluster update stands, like `oc adm upgrade status`. Exit 1 when the
/// assessment reports an error (text: the error alone; JSON: the document, error included).
///
/// # Errors
/// Usage errors of `--now`; a file or cluster that cannot be read; a snapshot without a
/// ClusterVersion; the assessment's error in text output.
pub fn status(a: StatusArgs) -> anyhow::Result<ExitCode> {
    if a.output != StatusOutput::Text {
        super::lang::data_output();
    }
    let (now, alerts) = a.view.now_and_alerts()?;
    let snapshot = a.view.source.is_snapshot();
    let state = a.view.source.load_once()?;
    if snapshot && state.cluster_version.is_none() {
        let source = state.source.to_string();
        anyhow::bail!(crate::l10n::trf!(
            "upgrade-no-cv-in",
            "no ClusterVersion in {source}: add the file with clusterversion/version",
            source = source
        ));
    }
    let now = resolve_now(now, &state, snapshot)?;
    let assessment = crate::assess::assess_with_wall_clock(&state, alerts.as_ref(), now.now, now.wall_clock);
    if let (StatusOutput::Text, Some(e)) = (a.output, &assessment.error) {
        anyhow::bail!("{e}");
    }
    let out = match a.output {
        StatusOutput::Text => super::status::render_text(&assessment, a.details),
        StatusOutput::Json => super::status::render_json(&assessment)?,
        StatusOutput::Yaml => super::status::render_yaml(&assessment)?,
    };
    super::out::print(&out)?;
    Ok(if assessment.error.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `cvo get KIND [NAME]`: the table `oc get` prints (or `-o wide|json|yaml|name`) for
/// ClusterVersions, ClusterOperators, MachineConfigPools and Nodes; ages are measured to the
/// snapshot's own time for `--from`, else the wall clock.
///
/// # Errors
/// An unknown kind (naming the known ones; checked before anything is read); a file or
/// cluster that cannot be read; a NAME that is not there.
pub fn get(a: GetArgs) -> anyhow::Result<ExitCode> {
    let kind = super::get::Kind::parse(&a.kind)?;
    if a.watch {
        if a.source.is_snapshot() {
            return Err(UsageError(
                tr!(
                    "usage-watch-from",
                    "-w: --from files do not change; watching needs a cluster"
                )
                .into(),
            )
            .into());
        }
        return super::get_watch::watch(&a, kind);
    }
    // Live, only the kind asked for is read: `cvo get nodes` needs no access to the others.
    let mut state = a.source.load_once_reading(kind.reads())?;
    if let Some(sel) = &a.selector {
        super::get::retain_selected(&mut state, kind, sel);
    }
    let now = if a.source.is_snapshot() {
        state.snapshot_time()
    } else {
        None
    }
    .unwrap_or_else(chrono::Utc::now);
    let out = super::get::render(&state, kind, a.name.as_deref(), a.output.as_ref(), now)?;
    super::out::print(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `cvo tui` and `cvo` alone: see [`super::tui::run`].
///
/// # Errors
/// As [`super::tui::run`].
#[cfg(feature = "tui")]
pub fn tui(a: super::args::TuiArgs) -> anyhow::Result<ExitCode> {
    super::tui::run(a)
}

/// `cvo demo`: the live update on a simulated cluster, in the dashboard or headless; with
/// `--snapshot`, the static stuck-update demo. Headless `--until-complete` exits 0 at
/// Completed, 1 when failing, 2 at the timeout.
///
/// # Errors
/// Usage errors of `--speed`, `--timeout`, `--until-complete` without `--headless`; a
/// scenario that cannot be read; a failure of the simulator or the terminal.
#[cfg(feature = "sim")]
pub fn demo(a: super::args::DemoArgs) -> anyhow::Result<ExitCode> {
    if a.snapshot {
        return demo_snapshot(a.is_headless());
    }
    if let Some(s) = a.speed
        && !(s.is_finite() && s > 0.0)
    {
        return Err(UsageError(crate::l10n::trf!(
            "usage-speed",
            "--speed {s}: must be a positive number",
            s = s.to_string()
        ))
        .into());
    }
    let timeout = timeout_flag(a.timeout)?;
    let headless = a.is_headless();
    if a.until_complete && !headless {
        return Err(
            UsageError(tr!("usage-until-complete", "--until-complete needs --headless").into()).into(),
        );
    }
    let registry = match a.registry.trim() {
        "" | "none" => None,
        r if r.contains('/') || r.contains(char::is_whitespace) => {
            return Err(UsageError(format!(
                "--registry {r:?}: give HOST:PORT (e.g. 127.0.0.1:5000), without a scheme or path, or `none`"
            ))
            .into());
        }
        r => Some(r.to_string()),
    };
    let opts = super::demo::DemoOptions {
        scenario: a.scenario,
        speed: a.speed,
        until_complete: a.until_complete,
        timeout,
        // Headless runs have no one to pick the update: they request it themselves.
        auto: a.auto || headless,
        registry,
    };
    let code = runtime()?.block_on(super::demo::run_live(&opts, headless, a.read_only))?;
    Ok(ExitCode::from(code))
}

/// `cvo demo --snapshot`: the static demo cluster stuck mid-update (assets/demo), in the
/// dashboard, or its status text when `headless`.
#[cfg(feature = "sim")]
fn demo_snapshot(headless: bool) -> anyhow::Result<ExitCode> {
    let state = crate::cluster::demo_snapshot::demo_state()?;
    if headless {
        let now = state.snapshot_time().unwrap_or_else(chrono::Utc::now);
        let assessment = crate::assess::assess(&state, None, now);
        super::out::print(&super::status::render_text(&assessment, None))?;
        return Ok(ExitCode::SUCCESS);
    }
    #[cfg(feature = "tui")]
    {
        runtime()?.block_on(crate::ui::run(crate::ui::UiOptions {
            feed: crate::cluster::static_feed(state),
            alerts: None,
            now: None,
            engine: None,
            requests: None,
            read_only: false,
            clock: crate::clock::Clock::wall(),
            release_source: None,
            banner: None,
            back_leaves: false,
        }))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `cvo sim serve`: the simulator over HTTPS until SIGINT/SIGTERM.
///
/// # Errors
/// See [`crate::sim::serve::serve`].
#[cfg(feature = "sim")]
pub fn sim_serve(a: crate::sim::serve::ServeArgs) -> anyhow::Result<ExitCode> {
    a.check_clusters().map_err(UsageError)?;
    runtime()?.block_on(crate::sim::serve::serve(a))?;
    Ok(ExitCode::SUCCESS)
}

/// `cvo payload inspect`: what the CVO would apply from a payload directory. Exit 1, with one
/// `cvo: ` line per problem on stderr, when the payload does not load.
///
/// # Errors
/// Only when JSON output cannot be encoded.
pub fn payload_inspect(a: InspectArgs) -> anyhow::Result<ExitCode> {
    if a.output == Output::Json {
        super::lang::data_output();
    }
    use crate::reconcile::payload::PayloadState;
    let opts = super::payload::InspectOptions {
        profile: a.profile,
        capabilities_baseline: a.capabilities_baseline,
        capabilities_additional: a.capabilities_additional,
        feature_set: a.feature_set,
        feature_gates: a.feature_gates,
        exclude: a.exclude,
        mode: match a.mode {
            Mode::Updating => PayloadState::Updating,
            Mode::Reconciling => PayloadState::Reconciling,
            Mode::Initializing => PayloadState::Initializing,
        },
        release_image: a.release_image,
    };
    let mut opts = opts;
    let dir = if super::payload::is_pull_spec(&a.dir) {
        let pullspec = a.dir.to_string_lossy().into_owned();
        let ro = super::payload::retrieve_options(&a.registry)?;
        let got = runtime()?.block_on(super::payload::pull_release(&pullspec, "", ro, true))?;
        if opts.release_image.is_empty() {
            opts.release_image = pullspec;
        }
        got.dir
    } else {
        a.dir.clone()
    };
    match super::payload::inspect(&dir, &opts) {
        Ok(i) => {
            match a.output {
                Output::Text => super::out::print(&super::payload::render_text(&i))?,
                Output::Json => {
                    super::out::println(&serde_json::to_string_pretty(&super::payload::render_json(&i))?)?
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(lines) => {
            for l in lines {
                eprintln!("cvo: {l}");
            }
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `cvo payload pull`: see [`super::payload::pull_command`].
///
/// # Errors
/// As [`super::payload::pull_command`].
pub fn payload_pull(a: super::args::PullArgs) -> anyhow::Result<ExitCode> {
    super::payload::pull_command(a)
}

/// `cvo reconcile`: applies a payload to the cluster of the kubeconfig (or, `--dry-run`, prints
/// its drift). Exit code from the run ([`super::reconcile::exit`]): 0 done, 1 failing, 2 usage,
/// 3 timeout, 4 API server unreachable, 5 payload unusable, 6 Lease held, 130 / 143 stopped by
/// SIGINT / SIGTERM (Lease released, summary printed). Why a run ended short is one `cvo: `
/// line on stderr.
///
/// # Errors
/// Usage error of `--timeout`; a payload that is not a directory; a kubeconfig that cannot be
/// used; signal handlers that cannot be installed. A directory that is not a release image
/// root is one `cvo: --payload DIR: ...` line and exit 5, before the cluster is reached.
pub fn reconcile(a: ReconcileArgs) -> anyhow::Result<ExitCode> {
    if a.output == Output::Json {
        super::lang::data_output();
    }
    use super::reconcile::{ReconcileOptions, RunControl, Until};
    let timeout = timeout_flag(a.timeout)?;
    let pull = super::payload::is_pull_spec(&a.payload);
    if !pull && !a.payload.is_dir() {
        anyhow::bail!("--payload {}: not a directory", a.payload.display());
    }
    // Checked before the cluster is reached: a directory that cannot be a release would
    // otherwise take the Lease and write ReleaseAccepted=False over a working cluster.
    if let Some(problem) = (!pull)
        .then(|| crate::reconcile::payload::load::release_root_problem(&a.payload))
        .flatten()
    {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "cvo: --payload {}: {problem}",
            a.payload.display()
        );
        return Ok(ExitCode::from(super::reconcile::exit::PAYLOAD));
    }
    let retrieve = super::payload::retrieve_options(&a.registry)?;
    let auth_given = a.registry.registry_auth.is_some();
    let mut timings = crate::reconcile::EngineTimings::upstream();
    timings.cv_poll = Duration::from_secs(1);
    let opts = ReconcileOptions {
        payload: a.payload,
        release_image: a.release_image,
        dry_run: a.dry_run,
        until: if a.until_complete && !a.once {
            Until::Complete
        } else {
            Until::Once
        },
        timeout,
        timings,
        // Watch-only never writes, so it has no lease to take (the guarded client would refuse it).
        lease: !a.dry_run,
    };
    let rt = runtime()?;
    let summary = rt.block_on(async {
        let conn = a.cluster.connect().await?;
        let updates = a
            .updates
            .config(opts.timings.resync_interval, Some(&conn.client))?;
        let ctl = RunControl {
            stop: Box::pin(stop_signal()?),
            ..RunControl::default()
        };
        // Desired updates by image are pulled from their registry also when --payload is a
        // directory.
        let payloads = super::payload::cluster_resolver(
            conn.client.clone(),
            &opts.payload,
            opts.release_image.clone(),
            retrieve,
            auth_given,
            "version",
        )?;
        super::reconcile::run_engine(conn.client, &opts, ctl, Some(payloads), updates).await
    });
    // Whatever the engine's tasks still do (a stuck request, a payload being read) does not
    // hold the exit.
    rt.shutdown_timeout(Duration::from_secs(2));
    let summary = summary?;
    match a.output {
        Output::Text => super::out::print(&super::reconcile::render_text(&summary))?,
        Output::Json => super::out::println(&serde_json::to_string_pretty(&summary)?)?,
    }
    if let Some(r) = &summary.reason {
        eprintln!("cvo: {r}");
    }
    Ok(ExitCode::from(summary.exit_code))
}

/// SIGINT or SIGTERM, whichever comes first (handlers installed now, so a signal that arrives
/// before the future is polled is not lost), as the run's [`super::reconcile::Stop`].
///
/// # Errors
/// A handler cannot be installed.
fn stop_signal() -> anyhow::Result<impl std::future::Future<Output = super::reconcile::Stop> + Send> {
    let next = crate::signals::StopSignals::install(false)?.next();
    Ok(async move {
        let s = next.await;
        super::reconcile::Stop {
            signal: s.name(),
            exit_code: s.exit_code(),
        }
    })
}

/// `cvo rehearse`: an update rehearsed on a simulated copy of the cluster
/// ([`super::rehearse`]); prints the report (text or JSON). Exit 0 when the rehearsal
/// completed, 1 when it did not (the report says where it stuck).
///
/// # Errors
/// Bad flags (usage error), an unreadable snapshot or payload, a failed pull.
#[cfg(feature = "sim")]
pub fn rehearse(a: super::args::RehearseArgs) -> anyhow::Result<ExitCode> {
    if a.output == super::args::Output::Json {
        super::lang::data_output();
    }
    let speed = a.speed.unwrap_or(super::rehearse::DEFAULT_SPEED);
    if !(speed.is_finite() && speed > 0.0) {
        return Err(UsageError(crate::l10n::trf!(
            "usage-speed",
            "--speed {s}: must be a positive number",
            s = speed.to_string()
        ))
        .into());
    }
    let timeout = timeout_flag(a.timeout)?.unwrap_or_else(|| super::rehearse::default_timeout(speed));
    if a.tui && !cfg!(feature = "tui") {
        return Err(
            UsageError("--tui: this cvo is built without the dashboard (feature `tui`)".into()).into(),
        );
    }
    let rt = runtime()?;
    let (payload, image) = match (&a.payload, &a.to_image) {
        (Some(dir), None) => {
            super::payload::check_payload_dir(dir)
                .map_err(|e| UsageError(format!("--payload {}: {e:#}", dir.display())))?;
            let image = crate::reconcile::api::LocalPayloads::pseudo_pull_spec(dir)
                .map_err(|e| UsageError(format!("--payload {}: {e}", dir.display())))?;
            (dir.clone(), image)
        }
        (None, Some(pullspec)) => {
            let ro = super::payload::retrieve_options(&a.registry)?;
            let got = rt.block_on(super::payload::pull_release(pullspec, "", ro, true))?;
            (got.dir, pullspec.clone())
        }
        _ => {
            return Err(UsageError(
                tr!(
                    "usage-image-or-payload",
                    "give one of --to-image PULLSPEC and --payload DIR"
                )
                .into(),
            )
            .into());
        }
    };
    let opts = super::rehearse::RehearseOptions {
        from: a.from.clone(),
        payload,
        image,
        speed,
        timeout,
        assume_recovery: a.assume_recovery,
    };
    let report = rt.block_on(super::rehearse::run(&opts, a.tui))?;
    match a.output {
        super::args::Output::Text => {
            super::out::print(&super::rehearse::report::render_text(&report, a.details))?
        }
        super::args::Output::Json => {
            super::out::print(&format!("{}\n", serde_json::to_string_pretty(&report)?))?
        }
    }
    Ok(if report.outcome.completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
