//! `cvo`: parses the command line and dispatches to `cvo::cli::run`; nothing else. The flags
//! live in `cvo::cli::args`, what each command does in `cvo::cli::run`, and the exit-code
//! convention (0 ok, 1 failure, 2 usage error) in `cvo::cli`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use cvo::cli::{args, logging::LogSink, run, upgrade};

/// Cluster Version Operator for OpenShift-compatible clusters: dashboard, operator and CLI.
#[derive(Parser, Debug)]
#[command(
    name = "cvo",
    version,
    about,
    propagate_version = true,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[cfg(feature = "tui")]
    #[command(flatten)]
    tui: args::TuiArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show where the cluster update stands (like `oc adm upgrade status`).
    Status(args::StatusArgs),
    /// Print objects as `oc get` does.
    Get(args::GetArgs),
    /// Open the dashboard, with the embedded engine watch-only on a live cluster (`cvo` alone
    /// does the same on the current kubeconfig context).
    #[cfg(feature = "tui")]
    Tui(args::TuiArgs),
    /// A live update 4.16.3 → 4.16.4 on a simulated cluster, in the dashboard (or headless);
    /// `--snapshot` shows the static stuck-update demo instead.
    #[cfg(feature = "sim")]
    Demo(args::DemoArgs),
    /// The Kubernetes API simulator.
    #[cfg(feature = "sim")]
    #[command(subcommand)]
    Sim(SimCommand),
    /// Work with release payloads.
    #[command(subcommand)]
    Payload(PayloadCommand),
    /// Apply a release payload to the cluster (the reconcile engine), or show its drift.
    Reconcile(args::ReconcileArgs),
    /// Request an update or change the channel, like `oc adm upgrade`; without flags, the
    /// update status and the recommended updates.
    Upgrade(args::UpgradeArgs),
    /// The headless operator: `cvo operator start` runs in the cluster in place of the upstream
    /// CVO (or beside it with --watch-only), with metrics and health endpoints.
    #[cfg(feature = "operator")]
    #[command(subcommand)]
    Operator(cvo::cli::operator::OperatorCommand),
}

#[cfg(feature = "sim")]
#[derive(Subcommand, Debug)]
enum SimCommand {
    /// Serve a simulated cluster over HTTPS on 127.0.0.1 and write a kubeconfig for it.
    Serve(args::ServeArgs),
}

#[derive(Subcommand, Debug)]
enum PayloadCommand {
    /// Show what the CVO would apply from a payload directory: release, included and excluded
    /// manifests with reasons, and the task graph.
    Inspect(args::InspectArgs),
    /// Check that a release digest is signed by every configured key (release signature
    /// verification, as the CVO does before an update).
    Verify(args::VerifyArgs),
    /// Pull a release image and extract its payload into a directory, for offline use.
    Pull(args::PullArgs),
}

impl Command {
    /// Where the command's logs go: the log file for those that draw the dashboard, stderr for
    /// the rest.
    fn log_sink(&self) -> LogSink {
        match self {
            #[cfg(feature = "tui")]
            Command::Tui(_) => LogSink::File,
            #[cfg(all(feature = "tui", feature = "sim"))]
            Command::Demo(a) if !a.is_headless() => LogSink::File,
            #[cfg(feature = "operator")]
            Command::Operator(_) => LogSink::Own,
            _ => LogSink::Stderr,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    #[cfg(feature = "tui")]
    let cmd = cli.command.unwrap_or(Command::Tui(cli.tui));
    #[cfg(not(feature = "tui"))]
    let Some(cmd) = cli.command else {
        eprintln!("cvo: no command given; try `cvo status` or `cvo --help`");
        return ExitCode::from(cvo::cli::EXIT_USAGE);
    };
    let result = cvo::cli::logging::init(cmd.log_sink()).and_then(|_log| dispatch(cmd));
    match result {
        Ok(code) => code,
        Err(e) => {
            // Not `eprintln!`: it panics when stderr is gone (the terminal closed), and the
            // dashboard's panic hook then aborts (exit 134) instead of exiting with the code.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "cvo: {e:#}");
            ExitCode::from(cvo::cli::exit_code(&e))
        }
    }
}

fn dispatch(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Status(a) => run::status(a),
        Command::Get(a) => run::get(a),
        #[cfg(feature = "tui")]
        Command::Tui(a) => run::tui(a),
        #[cfg(feature = "sim")]
        Command::Demo(a) => run::demo(a),
        #[cfg(feature = "sim")]
        Command::Sim(SimCommand::Serve(a)) => run::sim_serve(a),
        Command::Payload(PayloadCommand::Inspect(a)) => run::payload_inspect(a),
        Command::Payload(PayloadCommand::Verify(a)) => cvo::cli::payload_verify::run(a),
        Command::Payload(PayloadCommand::Pull(a)) => run::payload_pull(a),
        Command::Reconcile(a) => run::reconcile(a),
        Command::Upgrade(a) => upgrade::run(a),
        #[cfg(feature = "operator")]
        Command::Operator(c) => cvo::cli::operator::run(c),
    }
}
