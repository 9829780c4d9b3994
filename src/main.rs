//! `cvo`: parses the command line and dispatches to `cvo::cli::run`; nothing else. The flags
//! live in `cvo::cli::args`, what each command does in `cvo::cli::run`, and the exit-code
//! convention (0 ok, 1 failure, 2 usage error) in `cvo::cli`.

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use cvo::cli::{args, logging::LogSink, run, upgrade};

/// Cluster Version Operator for OpenShift-compatible clusters: dashboard, operator and CLI.
#[derive(Parser, Debug)]
#[command(name = "cvo", version = cvo::cli::VERSION, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Log verbosity, as kubectl's: 0 warnings (default), 1-2 progress, 3-5 debug, 6-7 each
    /// API request, 8+ everything (overrides RUST_LOG; not the dashboard's log file).
    #[arg(
        short = 'v',
        long = "v",
        value_name = "LEVEL",
        global = true,
        help_heading = "Logging (global)"
    )]
    verbosity: Option<u8>,
    #[command(flatten)]
    lang: cvo::cli::lang::LangArgs,
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
    /// Every cluster of the kubeconfig at once: version, channel, update progress, failing,
    /// available updates, degraded operators, the CVO Lease holder (live view, or -o table|json).
    Fleet(args::FleetArgs),
    /// Open the dashboard, with the embedded engine watch-only on a live cluster (`cvo` alone
    /// does the same on the current kubeconfig context).
    #[cfg(feature = "tui")]
    Tui(args::TuiArgs),
    /// A live update 4.16.3 → 4.16.4 on a simulated cluster, in the dashboard (or headless);
    /// `--snapshot` shows the static stuck-update demo instead.
    #[cfg(feature = "sim")]
    Demo(args::DemoArgs),
    /// Rehearse an update on a simulated copy of a cluster (from a snapshot or must-gather)
    /// and report what it would change; nothing is written to the cluster.
    #[cfg(feature = "sim")]
    Rehearse(args::RehearseArgs),
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
    Upgrade(Box<args::UpgradeArgs>),
    /// The headless operator: `cvo operator start` runs in the cluster in place of the upstream
    /// CVO (or beside it with --watch-only), with metrics and health endpoints.
    #[cfg(feature = "operator")]
    #[command(subcommand)]
    Operator(cvo::cli::operator::OperatorCommand),
    /// Print the shell completion script for SHELL (e.g. `source <(cvo completion bash)`).
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: cvo::cli::completion::Shell,
    },
    /// Print the man page (section 1), or write one page per command into a directory.
    Man {
        /// Write `cvo.1`, `cvo-get.1`, `cvo-upgrade-channel.1`, ... into this directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
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
    /// The command's name, as the User-Agent names it (`cvo/VERSION (upgrade)`).
    fn name(&self) -> &'static str {
        match self {
            Command::Status(_) => "status",
            Command::Get(_) => "get",
            Command::Fleet(_) => "fleet",
            #[cfg(feature = "tui")]
            Command::Tui(_) => "tui",
            #[cfg(feature = "sim")]
            Command::Demo(_) => "demo",
            #[cfg(feature = "sim")]
            Command::Rehearse(_) => "rehearse",
            #[cfg(feature = "sim")]
            Command::Sim(_) => "sim",
            Command::Payload(_) => "payload",
            Command::Reconcile(_) => "reconcile",
            Command::Upgrade(_) => "upgrade",
            #[cfg(feature = "operator")]
            Command::Operator(_) => "operator",
            Command::Completion { .. } => "completion",
            Command::Man { .. } => "man",
        }
    }

    /// Where the command's logs go: the log file for those that draw the dashboard, stderr for
    /// the rest.
    fn log_sink(&self) -> LogSink {
        match self {
            // `cvo fleet`: every row carries its cluster's error, the watches' warnings go to
            // the log file.
            #[cfg(feature = "tui")]
            Command::Tui(_) | Command::Fleet(_) => LogSink::File,
            #[cfg(all(feature = "tui", feature = "sim"))]
            Command::Demo(a) if !a.is_headless() => LogSink::File,
            #[cfg(all(feature = "tui", feature = "sim"))]
            Command::Rehearse(a) if a.tui => LogSink::File,
            #[cfg(feature = "operator")]
            Command::Operator(_) => LogSink::Own,
            _ => LogSink::Stderr,
        }
    }
}

fn main() -> ExitCode {
    let matches = cvo::cli::help_l10n::localized(Cli::command()).get_matches();
    dashboard_flags_before_a_command(&matches).unwrap_or_else(|e| e.exit());
    #[cfg(feature = "sim")]
    no_cluster_for_a_rehearsal(&matches).unwrap_or_else(|e| e.exit());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Some(level) = cli.verbosity {
        cvo::cli::logging::set_verbosity(level);
    }
    #[cfg(feature = "tui")]
    let cmd = cli.command.unwrap_or(Command::Tui(cli.tui));
    #[cfg(not(feature = "tui"))]
    let Some(cmd) = cli.command else {
        eprintln!("cvo: no command given; try `cvo status` or `cvo --help`");
        return ExitCode::from(cvo::cli::EXIT_USAGE);
    };
    cvo::cli::begin(cmd.name(), cli.lang.lang());
    let result = cvo::cli::logging::init(cmd.log_sink()).and_then(|_log| dispatch(cmd));
    match result {
        Ok(code) => code,
        // `cvo get co | head -1`: the reader has what it wanted.
        Err(e) if cvo::cli::out::is_stdout_closed(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // Not `eprintln!`: it panics when stderr is gone (the terminal closed), and the
            // dashboard's panic hook then aborts (exit 134) instead of exiting with the code.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "{}", cvo::cli::error_line(&e));
            ExitCode::from(cvo::cli::exit_code(&e))
        }
    }
}

/// The dashboard's own flags (`cvo --read-only`, `cvo --from F`) belong to `cvo` alone: given
/// before a command they would be ignored, so they are a usage error. The global flags
/// (`--kubeconfig`, `--as`, `-n`, `-v`, ...) may stand anywhere.
fn dashboard_flags_before_a_command(matches: &clap::ArgMatches) -> Result<(), clap::Error> {
    let Some((name, _)) = matches.subcommand() else {
        return Ok(());
    };
    let cmd = Cli::command();
    for arg in cmd.get_arguments().filter(|a| !a.is_global_set()) {
        let id = arg.get_id().as_str();
        if matches!(id, "help" | "version") {
            continue;
        }
        if matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
            let flag = arg
                .get_long()
                .map(|l| format!("--{l}"))
                .unwrap_or_else(|| id.to_string());
            return Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "{flag} is a flag of the dashboard (`cvo` alone); it cannot be used with `cvo {name}`"
                ),
            ));
        }
    }
    Ok(())
}

/// `cvo rehearse` never talks to a cluster: the connection flags (global elsewhere, ignored by
/// commands that reach no cluster) are a usage error there, so that no one believes the
/// rehearsal read or wrote the cluster they name.
#[cfg(feature = "sim")]
fn no_cluster_for_a_rehearsal(matches: &clap::ArgMatches) -> Result<(), clap::Error> {
    let Some(sub) = matches.subcommand_matches("rehearse") else {
        return Ok(());
    };
    for id in ["kubeconfig", "context", "server", "token"] {
        let given = [matches, sub].iter().any(|m| {
            m.try_contains_id(id).unwrap_or(false)
                && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        });
        if given {
            return Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "--{id}: `cvo rehearse` never talks to a cluster; it rehearses on a simulated copy of the snapshot given with --from"
                ),
            ));
        }
    }
    Ok(())
}

fn dispatch(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Status(a) => run::status(a),
        Command::Get(a) => run::get(a),
        Command::Fleet(a) => cvo::cli::fleet::run(a),
        #[cfg(feature = "tui")]
        Command::Tui(a) => run::tui(a),
        #[cfg(feature = "sim")]
        Command::Demo(a) => run::demo(a),
        #[cfg(feature = "sim")]
        Command::Rehearse(a) => run::rehearse(a),
        #[cfg(feature = "sim")]
        Command::Sim(SimCommand::Serve(a)) => run::sim_serve(a),
        Command::Payload(PayloadCommand::Inspect(a)) => run::payload_inspect(a),
        Command::Payload(PayloadCommand::Verify(a)) => cvo::cli::payload_verify::run(a),
        Command::Payload(PayloadCommand::Pull(a)) => run::payload_pull(a),
        Command::Reconcile(a) => run::reconcile(a),
        Command::Upgrade(a) => upgrade::run(*a),
        #[cfg(feature = "operator")]
        Command::Operator(c) => cvo::cli::operator::run(c),
        Command::Completion { shell } => cvo::cli::completion::completion(Cli::command(), shell),
        Command::Man { dir } => cvo::cli::completion::man(Cli::command(), dir.as_deref()),
    }
}

#[cfg(test)]
mod tests {
    /// Every about, argument help and heading of the whole command tree has its Russian text
    /// in `src/l10n/ru/help.ftl`, and that file has no generated key no help uses
    /// (`cvo::cli::help_l10n::problems`). With every feature only: the tree is whole then.
    #[cfg(all(feature = "tui", feature = "sim", feature = "operator"))]
    #[test]
    fn the_help_has_a_russian_text_for_every_about_argument_and_heading() {
        use clap::CommandFactory as _;
        let problems = cvo::cli::help_l10n::problems(&super::Cli::command());
        assert!(
            problems.is_empty(),
            "{} problems:\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
}
