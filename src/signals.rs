//! The signals that end a cvo process: SIGINT (Ctrl-C), SIGTERM (`kill`, a pod's stop) and,
//! for what runs in a terminal, SIGHUP (the terminal closed). Every command that stops on a
//! signal installs them here, so each reports the same names and exit codes (128 + the
//! signal's number, as a shell reports a process a signal ended).
//!
//! Once installed, tokio keeps a handler for the life of the process: a second signal during a
//! clean-up is only recorded, never the default action that would end the process at once.
//! One signal can still be lost: one that arrives in the microseconds between tokio enabling
//! its delivery and subscribing to it (`tokio/src/signal/unix.rs` `signal_with_handle`) is
//! broadcast to no one; the next one is received.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// A signal that asks the process to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT (2): Ctrl-C.
    Interrupt,
    /// SIGTERM (15): `kill`, the kubelet stopping the pod.
    Terminate,
    /// SIGHUP (1): the terminal closed.
    Hangup,
}

impl StopSignal {
    /// `SIGINT`, `SIGTERM` or `SIGHUP`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
            Self::Hangup => "SIGHUP",
        }
    }

    /// The exit code of a process this signal stopped: 128 + its number (130, 143, 129).
    pub const fn exit_code(self) -> u8 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
            Self::Hangup => 129,
        }
    }
}

/// Installed handlers of SIGINT and SIGTERM, and of SIGHUP when asked for.
pub struct StopSignals {
    int: Signal,
    term: Signal,
    hup: Option<Signal>,
}

impl StopSignals {
    /// Installs the handlers; `hangup` adds SIGHUP (for what runs in a terminal). Must run inside
    /// a tokio runtime.
    ///
    /// # Errors
    /// A handler cannot be registered.
    pub fn install(hangup: bool) -> std::io::Result<Self> {
        Ok(Self {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: if hangup {
                Some(signal(SignalKind::hangup())?)
            } else {
                None
            },
        })
    }

    /// The next of the installed signals.
    pub async fn recv(&mut self) -> StopSignal {
        let hup = async {
            match self.hup.as_mut() {
                Some(h) => {
                    h.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = self.int.recv() => StopSignal::Interrupt,
            _ = self.term.recv() => StopSignal::Terminate,
            () = hup => StopSignal::Hangup,
        }
    }

    /// A future that ends at the next installed signal (owning the handlers).
    pub async fn next(mut self) -> StopSignal {
        self.recv().await
    }
}

/// Ends at the first SIGINT or SIGTERM. Where the handlers cannot be installed it waits for
/// Ctrl-C alone (tokio's `ctrl_c`), and where that fails too it never ends: the default action
/// of the signal then still ends the process.
pub async fn stop_requested() -> StopSignal {
    match StopSignals::install(false) {
        Ok(s) => s.next().await,
        Err(_) => match tokio::signal::ctrl_c().await {
            Ok(()) => StopSignal::Interrupt,
            Err(_) => std::future::pending().await,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal_number() {
        for (s, name, number) in [
            (StopSignal::Interrupt, "SIGINT", 2),
            (StopSignal::Terminate, "SIGTERM", 15),
            (StopSignal::Hangup, "SIGHUP", 1),
        ] {
            assert_eq!(s.name(), name);
            assert_eq!(u32::from(s.exit_code()), 128 + number, "{name}");
        }
    }

    #[tokio::test]
    async fn a_raised_sigterm_is_received_not_fatal() {
        let mut s = StopSignals::install(false).expect("install");
        // std cannot raise a signal; the `kill` command sends one to this test process, whose
        // handler is installed above, so it is recorded instead of ending the process.
        let pid = std::process::id().to_string();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), s.recv())
            .await
            .expect("the signal arrives within 5 s");
        assert_eq!(got, StopSignal::Terminate);
    }
}
