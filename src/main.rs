//! `cvo`: CLI parsing and wiring of the faces; nothing else.

use std::{path::PathBuf, process::ExitCode};

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Cluster Version Operator for OpenShift-compatible clusters: dashboard, operator and CLI.
#[derive(Parser, Debug)]
#[command(name = "cvo", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

/// Where cluster state comes from: a live cluster (kubeconfig, like kubectl) or `--from` files.
#[derive(Args, Debug, Clone, Default)]
pub struct SourceArgs {
    /// Read an offline snapshot (file or directory, repeatable) instead of a cluster.
    #[arg(long = "from", value_name = "PATH")]
    from: Vec<PathBuf>,
    /// Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, value_name = "NAME")]
    context: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show where the cluster update stands (like `oc adm upgrade status`).
    Status(StatusArgs),
    /// Print objects as `oc get` does.
    Get(GetArgs),
    /// Open the dashboard (watch-only).
    #[cfg(feature = "tui")]
    Tui(TuiArgs),
    /// A live update 4.16.3 → 4.16.4 on a simulated cluster, in the dashboard (or headless);
    /// `--snapshot` shows the static stuck-update demo instead.
    Demo(DemoArgs),
    /// The Kubernetes API simulator.
    #[command(subcommand)]
    Sim(SimCommand),
    /// Work with release payloads.
    #[command(subcommand)]
    Payload(PayloadCommand),
    /// Apply a release payload to the cluster (the reconcile engine), or show its drift.
    Reconcile(ReconcileArgs),
}

#[derive(Args, Debug)]
struct ReconcileArgs {
    /// The payload directory (`manifests/` + `release-manifests/`).
    #[arg(long, value_name = "DIR")]
    payload: PathBuf,
    /// Pull spec of the payload's release image (default: `file://<canonical DIR>`, a pseudo
    /// pull spec naming the directory).
    #[arg(long, value_name = "PULLSPEC")]
    release_image: Option<String>,
    /// Watch-only: print the drift like `kubectl diff` and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Stop after one apply pass (the default).
    #[arg(long, conflicts_with = "until_complete")]
    once: bool,
    /// Run until the release is Completed (exit 0); Failing exits 1, the timeout 2.
    #[arg(long)]
    until_complete: bool,
    /// Give up after this many seconds (exit 2).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, value_name = "NAME")]
    context: Option<String>,
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    output: Output,
}

#[derive(Subcommand, Debug)]
enum SimCommand {
    /// Serve a simulated cluster over HTTPS on 127.0.0.1 and write a kubeconfig for it.
    Serve(cvo::sim::serve::ServeArgs),
}

#[derive(Subcommand, Debug)]
enum PayloadCommand {
    /// Show what the CVO would apply from a payload directory: release, included and excluded
    /// manifests with reasons, and the task graph.
    Inspect(InspectArgs),
}

#[derive(Args, Debug)]
struct InspectArgs {
    /// A release image root (`manifests/` + `release-manifests/`), a `release-manifests/`
    /// directory, or a plain manifest directory.
    dir: PathBuf,
    /// Cluster profile.
    #[arg(long, default_value = "self-managed-high-availability")]
    profile: String,
    /// `spec.capabilities.baselineCapabilitySet` (None, v4.11 ... v4.18, vCurrent).
    #[arg(long, value_name = "SET")]
    capabilities_baseline: Option<String>,
    /// `spec.capabilities.additionalEnabledCapabilities`.
    #[arg(long, value_name = "CAP,...", value_delimiter = ',')]
    capabilities_additional: Vec<String>,
    /// Cluster feature set (Default, TechPreviewNoUpgrade, DevPreviewNoUpgrade, CustomNoUpgrade, OKD).
    #[arg(long, value_name = "SET", default_value = "")]
    feature_set: String,
    /// Enabled feature gates.
    #[arg(long, value_name = "GATE,...", value_delimiter = ',')]
    feature_gates: Vec<String>,
    /// `EXCLUDE_MANIFESTS` identifier.
    #[arg(long, value_name = "ID", default_value = "")]
    exclude: String,
    /// Release image pull spec rendered into the CVO's own manifests.
    #[arg(long, value_name = "PULLSPEC", default_value = "")]
    release_image: String,
    /// Which task graph to show.
    #[arg(long, value_enum, default_value_t = Mode::Updating)]
    mode: Mode,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    output: Output,
}

/// How the payload is applied.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    Updating,
    Reconciling,
    Initializing,
}

/// What an assessment is made from: the cluster state, optional alerts, and "now".
#[derive(Args, Debug)]
struct AssessArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Firing alerts: a Prometheus `/api/v1/alerts` JSON response.
    #[arg(long, value_name = "FILE")]
    alerts: Option<PathBuf>,
    /// Evaluate durations at this instant (RFC 3339). Default: the wall clock for a live
    /// cluster, the snapshot's own time for `--from`.
    #[arg(long, value_name = "RFC3339")]
    now: Option<String>,
}

impl AssessArgs {
    /// `--now` parsed, and `--alerts` read.
    fn now_and_alerts(
        &self,
    ) -> anyhow::Result<(
        Option<chrono::DateTime<chrono::Utc>>,
        Option<cvo::assess::alerts::Alerts>,
    )> {
        let now = parse_now(self.now.as_deref())?;
        let alerts = self
            .alerts
            .as_deref()
            .map(cvo::assess::alerts::load)
            .transpose()?;
        Ok((now, alerts))
    }
}

#[derive(Args, Debug)]
struct StatusArgs {
    #[command(flatten)]
    view: AssessArgs,
    /// Show more detail for a section.
    #[arg(long, value_enum)]
    details: Option<cvo::cli::status::Details>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    output: Output,
}

#[derive(Args, Debug)]
struct GetArgs {
    /// The kind: `clusterversion` (`cv`) or `clusteroperators` (`co`).
    kind: String,
    #[command(flatten)]
    source: SourceArgs,
}

#[cfg(feature = "tui")]
#[derive(Args, Debug)]
struct TuiArgs {
    #[command(flatten)]
    view: AssessArgs,
}

#[derive(Args, Debug)]
struct DemoArgs {
    /// No dashboard: print one line per engine event and the sync progress (with --snapshot:
    /// print the static cluster's status and exit).
    #[arg(long)]
    headless: bool,
    /// The static demo instead: a snapshot of a cluster stuck mid-update (assets/demo).
    #[arg(long, conflicts_with_all = ["scenario", "speed", "until_complete", "timeout"])]
    snapshot: bool,
    /// Scenario file for the simulated operators (degrade, stall, crash-loop, speed, seed).
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Time speed: every delay is divided by it (default: the scenario's, else 10).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    speed: Option<f64>,
    /// Headless: exit 0 when the update is Completed (printing the history), 1 when it is
    /// failing, 2 at the timeout.
    #[arg(long)]
    until_complete: bool,
    /// Stop after this many seconds (default with --until-complete: 60 + 900/speed).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    timeout: Option<f64>,
}

/// Output format of one-shot commands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Output {
    Text,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => {
            eprintln!("cvo: no command given; try `cvo demo`, `cvo status` or `cvo --help`");
            return ExitCode::from(2);
        }
        Some(cmd) => run(cmd),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cvo: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Status(a) => status(a),
        Command::Get(a) => get(a),
        #[cfg(feature = "tui")]
        Command::Tui(a) => tui(a),
        Command::Demo(a) => demo(a),
        Command::Sim(SimCommand::Serve(a)) => {
            runtime()?.block_on(cvo::sim::serve::serve(a))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Payload(PayloadCommand::Inspect(a)) => payload_inspect(a),
        Command::Reconcile(a) => reconcile(a),
    }
}

fn parse_now(now: Option<&str>) -> anyhow::Result<Option<chrono::DateTime<chrono::Utc>>> {
    now.map(|s| {
        chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&chrono::Utc))
            .map_err(|e| anyhow::anyhow!("--now {s:?}: not an RFC 3339 time ({e})"))
    })
    .transpose()
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Loads the state once: from `--from` files or from the cluster of the kubeconfig.
fn load_once(src: &SourceArgs) -> anyhow::Result<cvo::cluster::ClusterState> {
    if src.from.is_empty() {
        let rt = runtime()?;
        rt.block_on(async {
            let client =
                cvo::cluster::live::connect(src.kubeconfig.as_deref(), src.context.as_deref()).await?;
            cvo::cluster::live::fetch_state(&client.client, &client.context)
                .await
                .map_err(|e| anyhow::anyhow!("{} (context {:?}): {e:#}", client.server, client.context))
        })
    } else {
        Ok(cvo::cluster::snapshot::load(&src.from)?)
    }
}

fn status(a: StatusArgs) -> anyhow::Result<ExitCode> {
    let (now, alerts) = a.view.now_and_alerts()?;
    let state = load_once(&a.view.source)?;
    if !a.view.source.from.is_empty() && state.cluster_version.is_none() {
        anyhow::bail!(
            "no ClusterVersion in {}: add the file with clusterversion/version",
            state.source
        );
    }
    if let (Some(n), Some(t)) = (now, state.snapshot_time())
        && !a.view.source.from.is_empty()
        && n + chrono::Duration::seconds(1) < t
    {
        anyhow::bail!(
            "--now {}: earlier than the snapshot's latest condition change ({}); durations would be negative",
            n.to_rfc3339(),
            t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
    }
    let explicit_now = now.is_some();
    let now = now
        .or_else(|| {
            if a.view.source.from.is_empty() {
                None
            } else {
                state.snapshot_time()
            }
        })
        .unwrap_or_else(chrono::Utc::now);
    // Without --now, node "serious unavailability" is aged against the real clock, as oc does
    // even for snapshots; with --now the whole assessment is reproducible.
    let wall_clock = if explicit_now { now } else { chrono::Utc::now() };
    let assessment = cvo::assess::assess_with_wall_clock(&state, alerts.as_ref(), now, wall_clock);
    if let (Output::Text, Some(e)) = (a.output, &assessment.error) {
        anyhow::bail!("{e}");
    }
    let out = match a.output {
        Output::Text => cvo::cli::status::render_text(&assessment, a.details),
        Output::Json => cvo::cli::status::render_json(&assessment)?,
    };
    print!("{out}");
    Ok(if assessment.error.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn get(a: GetArgs) -> anyhow::Result<ExitCode> {
    let state = load_once(&a.source)?;
    let now = if a.source.from.is_empty() {
        None
    } else {
        state.snapshot_time()
    }
    .unwrap_or_else(chrono::Utc::now);
    let out = match a.kind.to_ascii_lowercase().as_str() {
        "clusterversion" | "clusterversions" | "cv" | "clusterversion.config.openshift.io" => {
            cvo::cli::get::cluster_version_table(&state, now)?
        }
        "clusteroperator" | "clusteroperators" | "co" | "clusteroperators.config.openshift.io" => {
            cvo::cli::get::cluster_operators_table(&state, now)
        }
        other => {
            anyhow::bail!("get {other:?}: unknown kind; use clusterversion (cv) or clusteroperators (co)")
        }
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "tui")]
fn tui(a: TuiArgs) -> anyhow::Result<ExitCode> {
    let (now, alerts) = a.view.now_and_alerts()?;
    let rt = runtime()?;
    let _log = cvo::ui::logging::init_file_logging()?;
    rt.block_on(async {
        let feed = if a.view.source.from.is_empty() {
            let client = cvo::cluster::live::connect(
                a.view.source.kubeconfig.as_deref(),
                a.view.source.context.as_deref(),
            )
            .await?;
            cvo::cluster::live::watch_state(client.client, client.context)
        } else {
            cvo::cluster::static_feed(cvo::cluster::snapshot::load(&a.view.source.from)?)
        };
        cvo::ui::run(cvo::ui::UiOptions {
            feed,
            alerts,
            now,
            engine: None,
        })
        .await
    })?;
    Ok(ExitCode::SUCCESS)
}

fn demo(a: DemoArgs) -> anyhow::Result<ExitCode> {
    if a.snapshot {
        return demo_snapshot(a.headless);
    }
    if let Some(s) = a.speed
        && !(s.is_finite() && s > 0.0)
    {
        eprintln!("cvo: --speed {s}: must be a positive number");
        return Ok(ExitCode::from(2));
    }
    let timeout = match a.timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            eprintln!("cvo: --timeout {t}: must be a positive number of seconds");
            return Ok(ExitCode::from(2));
        }
        Some(t) => Some(std::time::Duration::from_secs_f64(t)),
        None => None,
    };
    let headless = a.headless || !cfg!(feature = "tui");
    if a.until_complete && !headless {
        eprintln!("cvo: --until-complete needs --headless");
        return Ok(ExitCode::from(2));
    }
    let opts = cvo::cli::demo::DemoOptions {
        scenario: a.scenario,
        speed: a.speed,
        until_complete: a.until_complete,
        timeout,
    };
    let rt = runtime()?;
    if headless {
        let code = rt.block_on(async {
            let mut demo = cvo::cli::demo::LiveDemo::start(&opts)?;
            let mut out = std::io::stdout();
            let code = cvo::cli::demo::run_headless(&mut demo, &opts, &mut out).await;
            demo.stop().await;
            code
        })?;
        return Ok(ExitCode::from(code));
    }
    #[cfg(feature = "tui")]
    {
        let _log = cvo::ui::logging::init_file_logging()?;
        rt.block_on(async {
            let demo = cvo::cli::demo::LiveDemo::start(&opts)?;
            let client = kube::Client::new(demo.sim.clone(), "default");
            let r = cvo::ui::run(cvo::ui::UiOptions {
                feed: cvo::cluster::live::watch_state(client, "demo".into()),
                alerts: None,
                now: None,
                engine: Some(demo.engine.clone()),
            })
            .await;
            demo.stop().await;
            r
        })?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `cvo demo --snapshot`: the static demo cluster stuck mid-update (assets/demo).
fn demo_snapshot(headless: bool) -> anyhow::Result<ExitCode> {
    let state = cvo::cluster::demo::demo_state()?;
    if headless || !cfg!(feature = "tui") {
        let now = state.snapshot_time().unwrap_or_else(chrono::Utc::now);
        let assessment = cvo::assess::assess(&state, None, now);
        print!("{}", cvo::cli::status::render_text(&assessment, None));
        return Ok(ExitCode::SUCCESS);
    }
    #[cfg(feature = "tui")]
    {
        let rt = runtime()?;
        let _log = cvo::ui::logging::init_file_logging()?;
        rt.block_on(cvo::ui::run(cvo::ui::UiOptions {
            feed: cvo::cluster::static_feed(state),
            alerts: None,
            now: None,
            engine: None,
        }))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn payload_inspect(a: InspectArgs) -> anyhow::Result<ExitCode> {
    use cvo::reconcile::payload::PayloadState;
    let opts = cvo::cli::payload::InspectOptions {
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
    match cvo::cli::payload::inspect(&a.dir, &opts) {
        Ok(i) => {
            match a.output {
                Output::Text => print!("{}", cvo::cli::payload::render_text(&i)),
                Output::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&cvo::cli::payload::render_json(&i))?
                ),
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

fn reconcile(a: ReconcileArgs) -> anyhow::Result<ExitCode> {
    use cvo::cli::reconcile::{ReconcileOptions, Until};
    let timeout = match a.timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            anyhow::bail!("--timeout {t}: must be a positive number of seconds")
        }
        Some(t) => Some(std::time::Duration::from_secs_f64(t)),
        None => None,
    };
    if !a.payload.is_dir() {
        anyhow::bail!("--payload {}: not a directory", a.payload.display());
    }
    let mut timings = cvo::reconcile::EngineTimings::upstream();
    timings.cv_poll = std::time::Duration::from_secs(1);
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
        let conn = cvo::cluster::live::connect(a.kubeconfig.as_deref(), a.context.as_deref()).await?;
        cvo::cli::reconcile::run(conn.client, &opts).await
    })?;
    match a.output {
        Output::Text => print!("{}", cvo::cli::reconcile::render_text(&summary)),
        Output::Json => println!("{}", serde_json::to_string_pretty(&summary)?),
    }
    Ok(ExitCode::from(summary.exit_code))
}
