//! `cvo demo` removes its payload directory (`$TMPDIR/cvo-demo-*`) on every exit path: a
//! signal in the first moments (before or while the payloads are written), SIGHUP, SIGINT and
//! SIGTERM headless, and, in a real terminal (tmux), the terminal closing (SIGHUP with a dead
//! terminal) and Ctrl-C before and after the dashboard took the keyboard.

mod common;

use std::{
    path::Path,
    process::{Child, Command, Stdio},
    thread::sleep,
    time::{Duration, Instant},
};

const BIN: &str = env!("CARGO_BIN_EXE_cvo");

/// The `cvo-demo-*` entries left in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("cvo-demo-"))
                .collect()
        })
        .unwrap_or_default()
}

fn kill(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status();
}

/// Waits up to `limit` for `child` to exit: its status, or `None` while it still runs.
fn wait_exit_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() <= deadline {
        if let Ok(Some(st)) = child.try_wait() {
            return Some(st);
        }
        sleep(Duration::from_millis(20));
    }
    None
}

/// Waits up to `limit` for `child` to exit; kills it (and fails) when it does not.
fn wait_exit(child: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            return st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: cvo did not exit within {limit:?}");
        }
        sleep(Duration::from_millis(20));
    }
}

#[test]
fn headless_demo_removes_its_payloads_on_every_signal() {
    // Delays cover: before the handlers (the process may die by the default action, before
    // any directory exists), while the payloads are written and the simulator is seeded
    // (the first ~0.3 s), and during the update.
    let cases = [
        ("HUP", 0),
        ("HUP", 30),
        ("HUP", 120),
        ("HUP", 300),
        ("INT", 80),
        ("TERM", 200),
        ("HUP", 2500),
        ("INT", 2500),
    ];
    for (sig, ms) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut child = common::cvo()
            .args(["demo", "--headless", "--speed", "20"])
            .env("TMPDIR", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn cvo");
        sleep(Duration::from_millis(ms));
        kill(child.id(), sig);
        let what = format!("SIG{sig} after {ms} ms");
        // A signal that lands while its handler is being installed can be lost (tokio enables
        // delivery, then subscribes: `tokio/src/signal/unix.rs` `signal_with_handle`; see
        // `cvo::signals::StopSignals`). A user's second signal ends it then: so does the
        // test's, once, and the demo must still leave nothing behind.
        let st = match wait_exit_within(&mut child, Duration::from_secs(10)) {
            Some(st) => st,
            None => {
                eprintln!("{what}: still running after 10 s (signal lost at start-up); sending it again");
                kill(child.id(), sig);
                wait_exit(&mut child, Duration::from_secs(30), &what)
            }
        };
        assert!(
            leftovers(tmp.path()).is_empty(),
            "{what} (exit {st:?}) left {:?}",
            leftovers(tmp.path())
        );
        if ms >= 2500 {
            // Well after start the handlers are in place: the exit code names the signal.
            let want = match sig {
                "HUP" => 129,
                "INT" => 130,
                _ => 143,
            };
            assert_eq!(st.code(), Some(want), "{what}");
        }
    }
}

fn tmux(sock: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .arg("-L")
        .arg(sock)
        .args(args)
        .output()
        .expect("run tmux")
}

/// Whether process `pid` still exists.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn dashboard_demo_removes_its_payloads_when_the_terminal_closes_or_on_ctrl_c() {
    if Command::new("tmux").arg("-V").output().is_err() {
        common::skip(
            "dashboard_demo_removes_its_payloads_when_the_terminal_closes_or_on_ctrl_c",
            "tmux is not installed",
        );
        return;
    }
    let sock = format!("cvo-test-cleanup-{}", std::process::id());
    // (how it ends, after how many ms): the terminal closing (tmux kill-session: SIGHUP, and
    // the terminal is gone for the restore) or Ctrl-C (SIGINT before raw mode, a key after).
    // "close-exec": cvo is the terminal's only process (session leader), as in `tmux new
    // 'cvo demo'`; tmux signals it with SIGHUP as it closes, while its dashboard is drawing
    // (the help popup open), so the dashboard's end and the demo's own SIGHUP handler race.
    // Either order must end the demo in order: no panic (a panic on the dead terminal was
    // aborted in ratatui's panic hook, skipping every clean-up), the lease released.
    let cases = [
        ("close", 100),
        ("close", 300),
        ("close", 3000),
        ("close-exec", 3000),
        ("close-exec", 3000),
        ("close-exec", 3000),
        ("close-exec", 3000),
        ("ctrl-c", 100),
        ("ctrl-c", 300),
        ("ctrl-c", 3000),
    ];
    for (how, ms) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        let state = tempfile::tempdir().expect("tempdir");
        // stderr stays on the terminal, as for a user: a write to a closed terminal must not
        // abort the clean-up.
        // Closing the terminal: a shell that outlives the terminal (SIGHUP ignored) records
        // how cvo ended; an abort (134: a panic writing to the dead terminal, then the
        // dashboard's panic hook) could skip the clean-up, so the code must be an exit, not a
        // crash. Ctrl-C keeps `exec` (an ignored SIGINT would be inherited).
        let rc = state.path().join("rc");
        let run = format!(
            "env TMPDIR='{}' XDG_STATE_HOME='{}' TERM=xterm-256color '{BIN}' demo --speed 20",
            tmp.path().display(),
            state.path().display()
        );
        let cmd = match how {
            "close" => format!("trap '' HUP; {run}; echo $? > '{}'", rc.display()),
            _ => format!("exec {run}"),
        };
        let o = tmux(
            &sock,
            &[
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "c",
                "-x",
                "80",
                "-y",
                "24",
                &cmd,
            ],
        );
        assert!(o.status.success(), "tmux: {}", String::from_utf8_lossy(&o.stderr));
        let pane = tmux(&sock, &["list-panes", "-t", "c", "-F", "#{pane_pid}"]);
        let pid: u32 = String::from_utf8_lossy(&pane.stdout)
            .trim()
            .parse()
            .expect("pane pid");
        sleep(Duration::from_millis(ms));
        match how {
            "close" => {
                tmux(&sock, &["kill-server"]);
            }
            "close-exec" => {
                tmux(&sock, &["send-keys", "-t", "c", "?"]);
                sleep(Duration::from_millis(500));
                tmux(&sock, &["kill-server"]);
            }
            _ => {
                tmux(&sock, &["send-keys", "-t", "c", "C-c"]);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while alive(pid) && Instant::now() < deadline {
            sleep(Duration::from_millis(20));
        }
        tmux(&sock, &["kill-server"]);
        assert!(!alive(pid), "{how} after {ms} ms: cvo (pid {pid}) still runs");
        assert!(
            leftovers(tmp.path()).is_empty(),
            "{how} after {ms} ms left {:?}",
            leftovers(tmp.path())
        );
        if how == "close-exec" {
            let log = std::fs::read_to_string(state.path().join("cvo/cvo.log")).unwrap_or_default();
            let ended: Vec<&str> = log
                .lines()
                .filter(|l| l.contains("panic") || l.contains("released the lease"))
                .collect();
            assert!(
                ended.len() == 1 && ended[0].contains("released the lease"),
                "{how} after {ms} ms: the demo did not end in order; its log's last lines:\n{}",
                log.lines().rev().take(8).collect::<Vec<_>>().join("\n")
            );
        }
        if how == "close" {
            let mut code = String::new();
            let deadline = Instant::now() + Duration::from_secs(30);
            while code.is_empty() && Instant::now() < deadline {
                code = std::fs::read_to_string(&rc)
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                sleep(Duration::from_millis(20));
            }
            // 0 or 1 (the dashboard ended on the dead terminal), 129 (SIGHUP handled).
            assert!(
                ["0", "1", "129"].contains(&code.as_str()),
                "{how} after {ms} ms: cvo ended with {code:?}"
            );
        }
    }
}
