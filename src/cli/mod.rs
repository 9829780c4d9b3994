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

/// The line `main` prints on stderr for the error a command returned: `cvo: ` and the error
/// with its causes (`{e:#}`). In English that is all (byte for byte what it always was). In
/// Russian the error's own text (already in Russian where cvo words it: usage errors, the
/// update request's refusals) is preceded by what kind of failure it is when the chain shows
/// it: the cluster unreachable or answering with an error ([`crate::informers::ApiFailure`]),
/// a write refused by `--read-only` ([`crate::spec_request::SendError::ReadOnly`]), a
/// kubeconfig that cannot be used. The technical detail after it (kube's and the system's
/// words, the API verbs and resource names) stays as it is.
pub fn error_line(e: &anyhow::Error) -> String {
    use crate::l10n::{Lang, current, tr, trf};
    let text = format!("{e:#}");
    if current() == Lang::En {
        return format!("cvo: {text}");
    }
    if let Some(crate::spec_request::SendError::ReadOnly) = e
        .chain()
        .find_map(|c| c.downcast_ref::<crate::spec_request::SendError>())
    {
        return format!(
            "cvo: {}",
            tr!(
                "error-read-only",
                "refusing to write: read-only mode (--read-only) forbids every write, including update requests"
            )
        );
    }
    // The server's answer: `Some(code)`; no answer (connection, TLS, timeout): `None`.
    let answer = e.chain().find_map(|c| {
        if let Some(f) = c.downcast_ref::<crate::informers::ApiFailure>() {
            let transport = ["ServiceError", "HyperError"]
                .iter()
                .any(|p| f.message.starts_with(p));
            return (f.code.is_some() || transport).then_some(f.code);
        }
        match c.downcast_ref::<kube::Error>()? {
            kube::Error::Api(s) => Some(Some(s.code)),
            kube::Error::Service(_) | kube::Error::HyperError(_) => Some(None),
            _ => None,
        }
    });
    let kind = match answer {
        Some(None) => Some(tr!("error-unreachable", "the cluster cannot be reached")),
        Some(Some(401)) => Some(tr!(
            "error-unauthorized",
            "the cluster did not accept the credentials (401)"
        )),
        Some(Some(403)) => Some(tr!("error-forbidden", "the cluster forbids this (403)")),
        Some(Some(404)) => Some(tr!("error-not-found", "not found on the cluster (404)")),
        Some(Some(c)) if c >= 500 => Some(tr!("error-server", "the API server failed")),
        Some(Some(_)) => Some(tr!("error-refused", "the API server refused the request")),
        None if text.starts_with("kubeconfig ") => {
            Some(tr!("error-kubeconfig", "the kubeconfig cannot be used"))
        }
        None if text.starts_with("no cluster to reach: ") => {
            return format!(
                "cvo: {}",
                trf!(
                    "error-no-cluster",
                    "no cluster to reach: {detail}",
                    detail = text.trim_start_matches("no cluster to reach: ")
                )
            );
        }
        None => None,
    };
    match kind {
        Some(k) => format!("cvo: {k}: {text}"),
        None => format!("cvo: {text}"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::informers::ApiFailure;
    use crate::l10n::{Lang, scoped};

    fn failure(code: Option<u16>, message: &str) -> anyhow::Error {
        anyhow::Error::from(ApiFailure {
            what: "list clusteroperators".into(),
            code,
            reason: String::new(),
            message: message.into(),
        })
        .context("https://h:6443/ (context \"c\")")
    }

    #[test]
    fn the_error_line_is_the_chain_in_english_and_says_what_failed_in_russian() {
        let dead = failure(None, "ServiceError: client error (Connect): refused");
        let text = "https://h:6443/ (context \"c\"): list clusteroperators: ServiceError: client error (Connect): refused";
        assert_eq!(scoped(Lang::En, || error_line(&dead)), format!("cvo: {text}"));
        assert_eq!(
            scoped(Lang::Ru, || error_line(&dead)),
            format!("cvo: кластер недоступен: {text}")
        );
        let forbidden = failure(Some(403), "no");
        assert!(
            scoped(Lang::Ru, || error_line(&forbidden))
                .starts_with("cvo: кластер запрещает это (403): https://h:6443/"),
        );
        // No answer, but not the transport either (a body that did not decode): no kind.
        let decode = failure(None, "SerdeError: expected value");
        assert!(scoped(Lang::Ru, || error_line(&decode)).starts_with("cvo: https://h:6443/"));
        let read_only = anyhow::Error::from(crate::spec_request::SendError::ReadOnly);
        assert_eq!(
            scoped(Lang::Ru, || error_line(&read_only)),
            "cvo: отказ в записи: режим только для чтения (--read-only) запрещает любую запись, в том числе запросы обновления"
        );
        assert_eq!(
            scoped(Lang::En, || error_line(&read_only)),
            "cvo: refusing to write: read-only mode (--read-only) forbids every write, including update requests"
        );
        let usage = anyhow::Error::from(UsageError("--speed 0: must be a positive number".into()));
        assert_eq!(
            scoped(Lang::Ru, || error_line(&usage)),
            "cvo: --speed 0: must be a positive number"
        );
    }
}
