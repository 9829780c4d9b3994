//! Issue 18 item 4, what wakes an idle demo: once the demo's update has completed, over a few
//! seconds of real time the engine sends (almost) no snapshots, the simulated cluster is not
//! written, and the dashboard's feed does not change, so the dashboard has nothing to redraw
//! but the ages that follow the simulated clock; and the engine loop, at level with nothing
//! failing, turns on its timer once per 10 s instead of once a second.

use std::time::Duration;

use crate::cli::demo::{DemoOptions, LiveDemo, TARGET_VERSION};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_demo_sends_and_writes_next_to_nothing() {
    let live = LiveDemo::start(&DemoOptions {
        speed: Some(20.0),
        auto: true,
        ..Default::default()
    })
    .await
    .expect("demo starts");
    let client = kube::Client::new(live.sim.clone(), "default");
    let mut feed = crate::cluster::live::watch_state(client, "demo".into());
    let mut status = live.engine.status.clone();
    tokio::time::timeout(Duration::from_secs(90), async {
        loop {
            {
                let s = status.borrow_and_update();
                if s.is_completed()
                    && s.desired.as_ref().is_some_and(|d| d.version == TARGET_VERSION)
                    && !s.running
                {
                    break;
                }
            }
            status.changed().await.expect("engine runs");
        }
    })
    .await
    .expect("the update completes");
    // Let the last writes and the first reconcile pass settle.
    tokio::time::sleep(Duration::from_secs(3)).await;
    status.borrow_and_update();
    feed.borrow_and_update();
    let rv = live.sim.resource_version();
    let polls = live.engine.polls();
    let (mut snaps, mut feeds) = (0, 0);
    let mut what: Vec<Vec<String>> = Vec::new();
    let mut prev = serde_json::to_value(&**status.borrow()).expect("json");
    let window = tokio::time::sleep(Duration::from_secs(6));
    tokio::pin!(window);
    loop {
        tokio::select! {
            () = &mut window => break,
            r = status.changed() => {
                r.expect("engine runs");
                snaps += 1;
                let s = status.borrow_and_update().clone();
                let mut now = serde_json::to_value(&*s).expect("json");
                // What changed besides the times (the snapshot's, the Lease's read time).
                let mut diff: Vec<String> = Vec::new();
                if let (serde_json::Value::Object(a), serde_json::Value::Object(b)) = (&prev, &mut now) {
                    for (k, v) in b.iter() {
                        let mut old = a.get(k).cloned().unwrap_or_default();
                        let mut new = v.clone();
                        if k == "lease" {
                            old["readAt"] = serde_json::Value::Null;
                            new["readAt"] = serde_json::Value::Null;
                        }
                        if k != "at" && old != new {
                            diff.push(k.clone());
                        }
                    }
                }
                what.push(diff);
                prev = now;
            }
            r = feed.changed() => {
                r.expect("feed runs");
                feeds += 1;

            }
        }
    }
    let writes = live.sim.resource_version() - rv;
    let polls = live.engine.polls() - polls;
    live.stop().await;
    let idle: Vec<usize> = (0..what.len()).filter(|&i| what[i].is_empty()).collect();
    assert!(
        idle.is_empty(),
        "{snaps} snapshots in 6 s of an idle demo, {} of them new only in their times: {what:?}",
        idle.len()
    );
    assert_eq!(feeds, 0, "the dashboard's feed changed on an idle cluster");
    // A Lease renewal may fall in the window; nothing else is written.
    assert!(writes <= 1, "{writes} writes to an idle simulated cluster");
    // At level with nothing failing, the engine loop turns on its timer once per 10 s (it
    // turned once a second: 6 here), and on events otherwise.
    assert!(polls <= 1, "the idle engine polled {polls} times in 6 s");
}
