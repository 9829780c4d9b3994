//! Issue 18 item 1, what was left: in the live demo every time the dashboard shows against the
//! simulated clock is taken on that clock, and the Control Plane estimate fits the demo's own
//! update. At `--speed 50` (the update takes about 5 simulated minutes, 6 s of real time):
//!
//! - the command outcome (the `--auto` request) is stamped on the simulated clock: after the
//!   request delay (`start + delay × 50` in simulated time) and never after it is seen;
//! - the update service's attempt and success times are simulated too: never in the future, and
//!   the fetch for the new version (asked after the request) is stamped after the request;
//! - the condition transition times the simulated operators and kubelet write (the operators',
//!   pools' and nodes' "since") are simulated too (they were already);
//! - in the update's first five simulated minutes, while `oc` estimates from its baseline (the
//!   demo cluster's previous update, `assets/demo-cluster/cv.yaml`, 4 minutes) rather than from
//!   the progress so far, the estimate stays under 10 minutes and shrinks. Later estimates
//!   extrapolate the observed pace, which on a loaded machine is slower in simulated time (the
//!   simulated clock runs at 50 times the wall clock whatever the CPU does), so they are not
//!   held to 10 minutes.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::{
    assess::{EstimateKind, assess},
    cli::demo::{DemoOptions, LiveDemo, TARGET_VERSION, request_delay},
    openshift::UpdateState,
};

const SPEED: f64 = 50.0;

/// One estimate seen while updating: simulated now, completion %, kind, remaining seconds,
/// text, simulated seconds since the update started.
type Seen = (DateTime<Utc>, f64, EstimateKind, i64, Option<String>, i64);

/// `oc` estimates from the baseline while the update has run at most this long (simulated
/// seconds; `estimateTimeToComplete` in `openshift/oc pkg/cli/admin/upgrade/status/controlplane.go`).
const BASELINE_MODE_SECS: i64 = 5 * 60;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_stamps_and_estimates_on_its_simulated_clock() {
    let live = LiveDemo::start(&DemoOptions {
        speed: Some(SPEED),
        auto: true,
        ..Default::default()
    })
    .await
    .expect("demo starts");
    let clock = live.clock.clone();
    // The requester starts after the clock: the request is handled at least its delay later.
    let requested_after = clock.after(request_delay(SPEED));
    let client = kube::Client::new(live.sim.clone(), "default");
    let mut feed = crate::cluster::live::watch_state(client, "demo".into());
    let mut status = live.engine.status.clone();
    let mut command: Option<(DateTime<Utc>, DateTime<Utc>)> = None;
    let mut attempts: Vec<(DateTime<Utc>, DateTime<Utc>)> = Vec::new();
    let mut successes: Vec<(DateTime<Utc>, DateTime<Utc>)> = Vec::new();
    let mut estimates: Vec<Seen> = Vec::new();
    let done = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            tokio::select! {
                r = status.changed() => {
                    r.expect("engine runs");
                    let s = status.borrow_and_update().clone();
                    let now = clock.now();
                    if let Some(c) = &s.last_command
                        && command.is_none_or(|(at, _)| at != c.at)
                    {
                        command = Some((c.at, now));
                    }
                    if let Some(u) = &s.updates {
                        for (t, seen) in [(u.last_attempt, &mut attempts), (u.last_success, &mut successes)] {
                            if let Some(t) = t && seen.last().is_none_or(|(l, _)| *l != t) {
                                seen.push((t, now));
                            }
                        }
                    }
                    if s.is_completed()
                        && s.desired.as_ref().is_some_and(|d| d.version == TARGET_VERSION)
                        && !s.running
                    {
                        break;
                    }
                }
                r = feed.changed() => {
                    r.expect("feed runs");
                    let st = feed.borrow_and_update().clone();
                    let now = clock.now();
                    let started = st.cluster_version.as_ref().and_then(|cv| cv.status.history.first()).and_then(|h| {
                        (h.version == TARGET_VERSION && h.state == UpdateState::Partial).then_some(h.started_time).flatten()
                    });
                    let cp = assess(&st, None, now).control_plane;
                    if let Some(started) = started
                        && cp.completion_percent > 0.0
                        && cp.completion_percent < 100.0
                    {
                        estimates.push((
                            now,
                            cp.completion_percent,
                            cp.estimate.kind,
                            cp.estimate.remaining.seconds(),
                            cp.estimate.text.clone(),
                            (now - started).num_seconds(),
                        ));
                    }
                }
            }
        }
    })
    .await;
    let end = clock.now();
    let last_state = feed.borrow().clone();
    live.stop().await;
    done.expect("the update completes within 60 s at speed 50");

    // The "since" columns of operators, pools and nodes read condition transition times the
    // simulated operators and kubelet write: on the simulated clock (the newest is past the
    // request, which a wall-clock time 6 s after the start would not be), never in its future.
    let mut newest = Vec::new();
    for (kind, objects) in [
        (
            "ClusterOperator",
            serde_json::to_value(&last_state.cluster_operators),
        ),
        (
            "MachineConfigPool",
            serde_json::to_value(&last_state.machine_config_pools),
        ),
        ("Node", serde_json::to_value(&last_state.nodes)),
    ] {
        let mut times = Vec::new();
        transition_times(&objects.expect("json"), &mut times);
        let max = times.iter().max().copied().expect("condition times");
        assert!(
            max <= end,
            "a {kind} condition changed at {max}, after now ({end})"
        );
        newest.push((kind, max));
    }

    let (at, seen) = command.expect("the --auto request's outcome");
    for (kind, max) in &newest {
        assert!(
            *max >= at,
            "the newest {kind} condition transition ({max}) is before the request ({at}): not on the simulated clock"
        );
    }
    assert!(
        requested_after <= at && at <= seen,
        "command outcome stamped {at}, not on the simulated clock: requested after \
         {requested_after}, seen at {seen}"
    );
    for (what, list) in [("attempt", &attempts), ("success", &successes)] {
        assert!(!list.is_empty(), "no update-service {what}");
        for (t, seen) in list {
            assert!(
                t <= seen,
                "update-service {what} at {t}, seen at {seen}: {list:?}"
            );
        }
    }
    assert!(
        attempts.iter().any(|(t, _)| *t >= at),
        "no update-service attempt stamped after the request ({at}) on the simulated clock: {attempts:?}"
    );

    let estimates: Vec<Seen> = estimates
        .into_iter()
        .filter(|e| e.5 <= BASELINE_MODE_SECS)
        .collect();
    assert!(
        estimates.len() >= 3,
        "too few estimates in the update's first {BASELINE_MODE_SECS} simulated seconds: {estimates:#?}"
    );
    for e in &estimates {
        assert!(
            e.3 < 10 * 60 && e.2 != EstimateKind::NotAvailableOverdue,
            "an estimate of 10 minutes or more (or overdue) for a 5-minute update: {e:?}\n{estimates:#?}"
        );
    }
    let (first, last) = (&estimates[0], &estimates[estimates.len() - 1]);
    assert!(last.3 < first.3, "the estimate does not shrink: {estimates:#?}");
}

/// Every `lastTransitionTime` under `v`.
fn transition_times(v: &serde_json::Value, out: &mut Vec<DateTime<Utc>>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match x.as_str().and_then(|t| DateTime::parse_from_rfc3339(t).ok()) {
                    Some(t) if k == "lastTransitionTime" => out.push(t.with_timezone(&Utc)),
                    _ => transition_times(x, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| transition_times(x, out)),
        _ => {}
    }
}
