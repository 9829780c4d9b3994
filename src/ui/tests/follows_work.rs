//! Issue 18 item 3, "the status follows the work": through a whole demo update (the simulated
//! cluster, its operators and the engine in this process), at every ClusterVersion status write
//! the dashboard is rendered with that ClusterVersion and the engine's snapshot of the moment;
//! the header's Progressing line and the sync gauge must say the same thing, or the gauge be at
//! most one status write ahead of the header (the write it is working towards).

use std::{sync::Arc, time::Duration};

use futures::StreamExt;
use kube::runtime::{WatchStreamExt, watcher};

use super::*;
use crate::{
    cli::demo::{DemoOptions, LiveDemo},
    openshift::config_v1::ClusterVersion,
};

/// What one rendered screen says about progress.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    /// The ClusterVersion's resourceVersion (the write).
    rv: String,
    /// The header's Progressing line: `(done, total, percent)` of "N of M done (P% complete)";
    /// `None` when it says no numbers.
    header: Option<(usize, usize, u32)>,
    /// Whether the header says the cluster is up to date (Progressing=False).
    header_done: bool,
    /// The gauge: `(done, total, percent)` of "N of M manifests applied (P%)", or of the
    /// settled "all M manifests applied" (done = total).
    gauge: Option<(usize, usize, u32)>,
    /// The two lines as shown (for the failure message).
    lines: String,
}

/// One line per write: resourceVersion, the header's numbers, the gauge's numbers.
fn table(seen: &[Seen]) -> String {
    seen.iter()
        .map(|s| {
            format!(
                "rv {:>5}  header {:<18} done {:<5}  gauge {:?}",
                s.rv,
                format!("{:?}", s.header),
                s.header_done,
                s.gauge
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn parse_header(text: &str) -> (Option<(usize, usize, u32)>, bool) {
    let re = regex::Regex::new(r"(\d+) of (\d+) done \((\d+)% complete\)").expect("regex");
    let line = text
        .lines()
        .find(|l| l.contains("Progressing") || l.contains("Up to date") || l.contains("FAILING"))
        .unwrap_or_default();
    let nums = re.captures(line).map(|c| {
        (
            c[1].parse().unwrap_or(0),
            c[2].parse().unwrap_or(0),
            c[3].parse().unwrap_or(0),
        )
    });
    (nums, line.contains("Up to date"))
}

fn parse_gauge(text: &str) -> Option<(usize, usize, u32)> {
    let live = regex::Regex::new(r"(\d+) of (\d+) manifests applied \((\d+)%\)").expect("regex");
    let settled = regex::Regex::new(r"all (\d+) manifests applied").expect("regex");
    if let Some(c) = live.captures(text) {
        return Some((
            c[1].parse().unwrap_or(0),
            c[2].parse().unwrap_or(0),
            c[3].parse().unwrap_or(0),
        ));
    }
    settled.captures(text).map(|c| {
        let n = c[1].parse().unwrap_or(0);
        (n, n, 100)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_header_and_the_gauge_never_disagree_by_more_than_one_status_write() {
    let live = LiveDemo::start(&DemoOptions {
        speed: Some(40.0),
        auto: true,
        ..Default::default()
    })
    .await
    .expect("demo starts");
    let client = kube::Client::new(live.sim.clone(), "default");
    let feed = crate::cluster::live::watch_state(client.clone(), "demo".into());
    let api = kube::Api::<ClusterVersion>::all(client);
    let mut writes =
        Box::pin(watcher(api, watcher::Config::default().fields("metadata.name=version")).applied_objects());
    let mut app = app_for(demo(), 160, 40);
    let (tx, _rx) = tokio::sync::mpsc::channel(4);
    app.attach_engine(live.engine.status.borrow().clone(), tx);
    app.set_clock(live.clock.clone());
    let mut seen: Vec<Seen> = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let cv = tokio::select! {
            cv = writes.next() => match cv {
                Some(Ok(cv)) => cv,
                other => panic!("the ClusterVersion watch ended: {other:?}"),
            },
            () = tokio::time::sleep_until(deadline) => panic!("no completed update in 120 s:\n{}", table(&seen)),
        };
        // The engine's snapshot of this moment, and the feed's state with this write's
        // ClusterVersion (the feed may coalesce writes; the watch sees each).
        let snap = live.engine.status.borrow().clone();
        let mut state = (*feed.borrow().clone()).clone();
        state.cluster_version = Some(cv.clone());
        app.update(Action::State(Arc::new(state)));
        app.update(Action::Engine(snap.clone()));
        let text = screen_text(draw(&app).backend().buffer()).join("\n");
        let (header, header_done) = parse_header(&text);
        let lines = text
            .lines()
            .filter(|l| {
                l.contains("Progressing") || l.contains("Up to date") || l.contains(" manifests applied")
            })
            .collect::<Vec<_>>()
            .join("\n");
        seen.push(Seen {
            rv: cv.metadata.resource_version.clone().unwrap_or_default(),
            header,
            header_done,
            gauge: parse_gauge(&text),
            lines,
        });
        let updating = seen.iter().any(|s| s.header.is_some());
        if updating && header_done {
            break;
        }
    }
    live.stop().await;
    let numbered: Vec<usize> = (0..seen.len()).filter(|&i| seen[i].header.is_some()).collect();
    assert!(
        numbered.len() >= 3,
        "too few progress writes to judge:\n{}",
        table(&seen)
    );
    let first = numbered[0];
    for i in first..seen.len() {
        let s = &seen[i];
        let g = s
            .gauge
            .unwrap_or_else(|| panic!("no gauge at write {i}:\n{}", s.lines));
        // The writes before and after this one (tasks done): the gauge may show anything
        // between the previous write and this one (at most one write behind: the engine
        // publishes its snapshot right after the write the watch already delivered) or between
        // this one and the first write the engine computed after the snapshot the gauge shows
        // (a new pass starts from 0). That is the next write, or the one after it: the next
        // may have been computed before the snapshot and still be on its way (the engine
        // sends one status write at a time), as seen once under load: header 5, gauge 13, the
        // next write 12, the one after it 13.
        let prev = seen[..i].iter().rev().find_map(|p| p.header).map_or(0, |p| p.0);
        let (h_done, total) = match s.header {
            Some(h) => (h.0, h.1),
            None => (g.1, g.1),
        };
        let mut later: Vec<usize> = seen[i + 1..]
            .iter()
            .filter_map(|n| match n.header {
                Some(h) if h.0 != h_done => Some(h.0),
                None if n.header_done => Some(total),
                _ => None,
            })
            .collect();
        later.dedup();
        let next = later.iter().take(2).max().copied().unwrap_or(total);
        let why = format!(
            "write {i} (rv {}): gauge {g:?}, header {:?}, previous write {prev} done, next {next}:\n{}\n{}",
            s.rv,
            s.header,
            s.lines,
            table(&seen)
        );
        assert_eq!(g.1, total, "{why}");
        let between = |a: usize, b: usize| a.min(b) <= g.0 && g.0 <= a.max(b);
        assert!(between(prev, h_done) || between(h_done, next), "{why}");
        if let Some(h) = s.header
            && g.0 == h.0
        {
            // The same write: the same percentage (truncated, as the ClusterVersion says it).
            assert_eq!(g.2, h.2, "{why}");
        }
    }
    eprintln!("{}", table(&seen));
    assert!(seen.last().is_some_and(|s| s.header_done), "{}", table(&seen));
}
