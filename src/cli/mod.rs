//! The commands: their flags ([`args`]), what each one does with them ([`run`]), and the text
//! and JSON output of the one-shot commands.
//!
//! # Exit codes
//!
//! Every command follows one convention: `0` when it did what was asked, `2` for a usage error
//! (flags or values that clap rejects, or that a command rejects before doing anything: a
//! [`UsageError`]), `1` for any other failure. Documented exceptions, kept as docs/commands.md states
//! them: `cvo reconcile` has one code per way a run ends ([`reconcile::exit`]: 3 timeout, 4 API
//! server unreachable, 5 payload unusable, 6 Lease held, 130 / 143 SIGINT / SIGTERM);
//! `cvo demo --headless --until-complete` exits `2` at `--timeout` and `1` when the update is
//! failing; `cvo status` exits `1` when the assessment reports an error (after printing it with
//! `-o json`).

pub mod args;
pub mod completion;
#[cfg(feature = "sim")]
pub mod demo;
#[cfg(feature = "sim")]
pub mod demo_registry;
pub mod fleet;
pub mod get;
pub mod get_output;
pub mod get_watch;
pub mod heap;
pub mod help_l10n;
pub mod jsonpath;
pub mod lang;
pub mod logging;
#[cfg(feature = "operator")]
pub mod operator;
pub mod out;
pub mod payload;
pub mod payload_verify;
pub mod reconcile;
#[cfg(feature = "sim")]
pub mod rehearse;
#[cfg(feature = "tui")]
pub mod request_writer;
pub mod run;
pub mod source;
pub mod status;
pub mod tabwriter;
#[cfg(feature = "tui")]
pub mod tui;
pub mod upgrade;

/// What `cvo --version` prints after `cvo `: the package version and the commit the binary
/// was built from, e.g. `0.1.0 (commit 1a2b3c4d5e6f)`; `build.rs` reads the commit from
/// `CVO_GIT_COMMIT` when set, else from git, else says `unknown`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("CVO_GIT_COMMIT"),
    ")"
);

/// What a run of `command` (its name: `status`, `upgrade`, `tui`, ...) sets before it starts:
/// the name the User-Agent gives ([`crate::set_command_name`]) and the language of cvo's own
/// words ([`lang::choose`]: `lang` from `--lang`, else the locale, English for `status` and
/// `upgrade`).
pub fn begin(command: &'static str, lang: Option<lang::Lang>) {
    crate::set_command_name(command);
    lang::choose(lang, command);
}

/// Exit code of a usage error: bad flags or flag values.
pub const EXIT_USAGE: u8 = 2;
/// Exit code of any other failure.
pub const EXIT_FAILURE: u8 = 1;

/// A usage error: a flag value the command rejects before doing anything (exit
/// [`EXIT_USAGE`]). The text is the whole message, e.g. `--speed 0: must be a positive number`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The exit code for an error a command returned: [`EXIT_USAGE`] for a [`UsageError`],
/// else [`EXIT_FAILURE`].
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if e.is::<UsageError>() {
        EXIT_USAGE
    } else {
        EXIT_FAILURE
    }
}

/// The tokio runtime the commands run on: two worker threads, IO and time enabled, glibc's
/// malloc arenas capped at [`heap::ARENAS`] before the threads start, and a task
/// handing freed heap back to the system every [`heap::RELEASE_PERIOD`] (what keeps a
/// long-running dashboard, demo or operator small; a one-shot command ends first).
///
/// # Errors
/// When the runtime cannot be built (no threads).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    heap::limit_arenas(heap::ARENAS);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    heap::spawn_periodic_release(&rt, heap::RELEASE_PERIOD);
    Ok(rt)
}
