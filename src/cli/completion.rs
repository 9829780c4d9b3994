//! `cvo completion SHELL` and `cvo man`: shell completions (clap_complete) and the man page
//! (clap_mangen, roff), generated at run time from the command tree `main` parses with, so
//! they never drift from the flags. `cvo man` writes the page of `cvo` to standard output;
//! `cvo man --dir DIR` writes one page per command (`cvo.1`, `cvo-get.1`,
//! `cvo-upgrade-channel.1`, ...).

use std::{path::Path, process::ExitCode};

/// The shells `cvo completion` writes for (clap_complete's).
pub use clap_complete::Shell;

/// Writes the completion script of `cmd` for `shell` to standard output.
///
/// # Errors
/// A closed standard output ([`super::out::StdoutClosed`]).
pub fn completion(mut cmd: clap::Command, shell: Shell) -> anyhow::Result<ExitCode> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "cvo", &mut buf);
    super::out::print(&String::from_utf8_lossy(&buf))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the man page of `cmd` (section 1) to standard output, or with `dir` one page per
/// command and subcommand into that directory (created if absent), naming each written file
/// on stderr.
///
/// # Errors
/// `--dir DIR: E` when the directory or a page cannot be written; a closed standard output.
pub fn man(cmd: clap::Command, dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let Some(dir) = dir else {
        let mut buf = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut buf)?;
        super::out::print(&String::from_utf8_lossy(&buf))?;
        return Ok(ExitCode::SUCCESS);
    };
    let fail = |e: std::io::Error| anyhow::anyhow!("--dir {}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(fail)?;
    clap_mangen::generate_to(cmd, dir).map_err(fail)?;
    let mut pages: Vec<String> = std::fs::read_dir(dir)
        .map_err(fail)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("cvo") && n.ends_with(".1"))
        .collect();
    pages.sort();
    eprintln!(
        "wrote {} pages in {}: {}",
        pages.len(),
        dir.display(),
        pages.join(" ")
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> clap::Command {
        clap::Command::new("cvo")
            .about("test")
            .subcommand(clap::Command::new("upgrade").subcommand(clap::Command::new("channel")))
            .subcommand(clap::Command::new("get"))
    }

    #[test]
    fn pages_are_written_into_the_directory() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        man(tree(), Some(dir.path()))?;
        let page = std::fs::read_to_string(dir.path().join("cvo-upgrade-channel.1"))?;
        assert!(page.starts_with(".ie \\n(.g .ds Aq \\(aq"), "{page}");
        assert!(page.contains(".TH cvo-upgrade-channel 1"), "{page}");
        Ok(())
    }
}
