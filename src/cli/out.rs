//! Standard output of the one-shot commands. A closed stdout (`cvo get co | head -1`, a
//! reader that went away) is not a failure of the command: [`print`] returns
//! [`StdoutClosed`], and `main` exits 0 without a word, as ripgrep does; never a panic
//! (which `print!` would raise).

use std::io::Write as _;

/// Standard output was closed by its reader (`EPIPE`); the command stops quietly.
#[derive(Debug, thiserror::Error)]
#[error("standard output closed")]
pub struct StdoutClosed;

/// Whether `e` is (or wraps) [`StdoutClosed`].
pub fn is_stdout_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<StdoutClosed>())
}

/// Writes `text` to standard output and flushes it (so a watch's lines appear as they come).
///
/// # Errors
/// [`StdoutClosed`] when the reader closed the pipe; `writing to standard output: E` for any
/// other failure.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => Err(anyhow::anyhow!("writing to standard output: {e}")),
    }
}

/// [`print`] with a newline after `text`.
///
/// # Errors
/// As [`print`].
pub fn println(text: &str) -> anyhow::Result<()> {
    print(&format!("{text}\n"))
}

/// Resolves when the reader of standard output has gone (the read end of its pipe closed:
/// `cvo get co -w | head -3` after `head` exits), so a command that waits for something to
/// print can stop at once instead of at its next write. Never resolves when standard output is
/// not something the system can watch (a regular file) or while a reader is there.
pub async fn closed() {
    #[cfg(unix)]
    {
        use tokio::io::{Interest, unix::AsyncFd};
        // Deprecated for owners that may close their descriptor while registered; `Stdout`
        // never closes descriptor 1 (the safe constructor's replacement is `unsafe`).
        #[allow(deprecated)]
        if let Ok(fd) = AsyncFd::with_interest(std::io::stdout(), Interest::ERROR)
            && fd.ready(Interest::ERROR).await.is_ok()
        {
            return;
        }
    }
    std::future::pending::<()>().await;
}
