//! `cvo sim serve` as a child process, for the tests that drive the real binary against it.

use std::{
    ffi::OsStr,
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Stdio},
    sync::mpsc,
    time::Duration,
};

/// Spawns `cvo sim serve --port 0 --kubeconfig-out KUBECONFIG ARGS` (a random loopback port)
/// and waits at most `within` for its ready line `cvo sim serving https://127.0.0.1:PORT ...`;
/// returns the child (the caller kills it) and that line. `stderr` is where the server's log
/// goes.
///
/// Panics when it does not start or print the ready line in time.
pub fn spawn_sim_serve(
    kubeconfig: &Path,
    args: &[&OsStr],
    stderr: Stdio,
    within: Duration,
) -> (Child, String) {
    let mut child = super::cvo()
        .args(["sim", "serve", "--port", "0", "--kubeconfig-out"])
        .arg(kubeconfig)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("cvo sim serve starts");
    let stdout = child.stdout.take().expect("stdout piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = tx.send(line);
        // Keep the pipe open (and drained) for as long as the server lives: a closed stdout
        // would end a server that prints more.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = match rx.recv_timeout(within) {
        Ok(l) => l,
        Err(_) => {
            let _ = child.kill();
            panic!("cvo sim serve printed no ready line within {within:?}");
        }
    };
    assert!(
        line.starts_with("cvo sim serving https://127.0.0.1:"),
        "ready line: {line:?}"
    );
    (child, line)
}
