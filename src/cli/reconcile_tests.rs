//! Unit tests of `cvo reconcile`: timeouts, the text report, the writes summary.

use super::*;

fn opts(until: Until, dry_run: bool, timeout: Option<Duration>) -> ReconcileOptions {
    ReconcileOptions {
        payload: PathBuf::from("/p"),
        release_image: None,
        dry_run,
        until,
        timeout,
        timings: EngineTimings::scaled(0.01),
        lease: !dry_run,
    }
}

#[test]
fn default_timeouts_per_mode() {
    assert_eq!(
        opts(Until::Once, false, None).effective_timeout(),
        Duration::from_secs(120)
    );
    assert_eq!(
        opts(Until::Once, true, None).effective_timeout(),
        Duration::from_secs(120)
    );
    assert_eq!(
        opts(Until::Complete, false, None).effective_timeout(),
        Duration::from_secs(7200)
    );
    // --dry-run always stops after one pass, so it keeps the short default.
    assert_eq!(
        opts(Until::Complete, true, None).effective_timeout(),
        Duration::from_secs(120)
    );
    let t = Duration::from_millis(1500);
    assert_eq!(opts(Until::Complete, false, Some(t)).effective_timeout(), t);
}

#[test]
fn durations_and_clipped_text() {
    assert_eq!(secs(Duration::from_secs(120)), "120s");
    assert_eq!(secs(Duration::from_millis(1500)), "1.5s");
    assert_eq!(secs(Duration::from_millis(2460)), "2.5s");
    assert_eq!(clip("abcdef", 3), "abc...");
    assert_eq!(clip("abc", 3), "abc");
    // Cut on a character boundary, never inside one.
    assert_eq!(clip("ééé", 2), "éé...");
}

fn summary(outcome: &str, dry_run: bool) -> ReconcileSummary {
    ReconcileSummary {
        outcome: outcome.into(),
        exit_code: 0,
        version: NOT_LOADED.into(),
        image: "file:///p".into(),
        dry_run,
        done: 0,
        total: 0,
        passes: 0,
        requests: BTreeMap::new(),
        writes: 0,
        status_writes: 0,
        lease_writes: 0,
        object_writes: 0,
        other_writes: 0,
        seconds: 0.5,
        failure: None,
        progressing: None,
        drift: Vec::new(),
        error: None,
        reason: Some("timed out after 2s waiting for the first pass to start".into()),
    }
}

#[test]
fn a_dry_run_without_a_whole_pass_claims_no_drift() {
    let text = render_text(&summary("timeout", true));
    assert!(!text.contains("would change"), "{text}");
    assert!(
        text.starts_with("drift unknown: no whole pass ran (timeout; watch-only: nothing was written)\n"),
        "{text}"
    );
    assert!(text.contains("release: <not loaded> (file:///p)\n"), "{text}");
    assert!(
        text.contains("reason: timed out after 2s waiting for the first pass to start\n"),
        "{text}"
    );
    let text = render_text(&summary("pass-done", true));
    assert!(
        text.starts_with("0 objects would change (watch-only: nothing was written)\n"),
        "{text}"
    );
}

/// Issue 18 item 10: a converged run's one Lease write is not an object write; the summary
/// splits the writes by what they wrote, and the text says each.
#[test]
fn writes_are_reported_by_what_they_wrote() {
    let mut snap = StatusSnapshot::default();
    snap.counters.requests = BTreeMap::from([
        ("get".to_string(), 12),
        ("list".to_string(), 2),
        ("update".to_string(), 3),
        ("patch".to_string(), 4),
        ("create".to_string(), 1),
        ("watch".to_string(), 5),
    ]);
    snap.counters.status_writes = 2;
    snap.counters.lease_writes = 1;
    snap.counters.apply_writes = 4;
    let s = summarize(
        &snap,
        &opts(Until::Once, false, None),
        "pass-done",
        0,
        None,
        "file:///p",
        std::time::Instant::now(),
    );
    assert_eq!(
        (
            s.writes,
            s.object_writes,
            s.status_writes,
            s.lease_writes,
            s.other_writes
        ),
        (8, 4, 2, 1, 1)
    );
    let text = render_text(&s);
    assert!(
        text.contains("\nwrites: 8 (payload objects: 4, ClusterVersion status: 2, Lease: 1, other: 1)\n"),
        "{text}"
    );
    // Converged: the Lease take is the only write, and no payload object was written.
    let mut snap = StatusSnapshot::default();
    snap.counters.requests = BTreeMap::from([("get".to_string(), 9), ("update".to_string(), 1)]);
    snap.counters.lease_writes = 1;
    let s = summarize(
        &snap,
        &opts(Until::Once, false, None),
        "pass-done",
        0,
        None,
        "file:///p",
        std::time::Instant::now(),
    );
    let text = render_text(&s);
    assert!(
        text.contains("\nwrites: 1 (payload objects: 0, ClusterVersion status: 0, Lease: 1, other: 0)\n"),
        "{text}"
    );
    // More counted than sent (a counter raced the request count) never underflows.
    snap.counters.apply_writes = 5;
    let s = summarize(
        &snap,
        &opts(Until::Once, false, None),
        "pass-done",
        0,
        None,
        "file:///p",
        std::time::Instant::now(),
    );
    assert_eq!((s.writes, s.other_writes), (1, 0));
}

#[test]
fn waiting_for_names_what_is_missing() {
    let mut s = StatusSnapshot::default();
    assert_eq!(waiting_for(&s, Until::Once), "the ClusterVersion and the payload");
    s.state = EngineState::WaitingForLease;
    assert_eq!(
        waiting_for(&s, Until::Once),
        "the Lease openshift-cluster-version/version"
    );
    s.state = EngineState::Initializing;
    s.running = true;
    s.done = 3;
    s.total = 10;
    assert_eq!(waiting_for(&s, Until::Once), "pass 1 to finish: 3/10 tasks done");
    s.last_error = Some("reading ClusterVersion version: refused\nmore".into());
    assert_eq!(
        waiting_for(&s, Until::Once),
        "the ClusterVersion (reading ClusterVersion version: refused)"
    );
    s.last_error = None;
    s.payload_pull = Some(crate::reconcile::api::PullProgress {
        image: "r.example/ocp@sha256:ab".into(),
        ..Default::default()
    });
    assert_eq!(
        waiting_for(&s, Until::Once),
        "the release image r.example/ocp@sha256:ab (pulling r.example/ocp@sha256:ab resolving)"
    );
    s.payload_pull = Some(crate::reconcile::api::PullProgress {
        image: "r.example/ocp:4.1".into(),
        digest: Some(format!("sha256:{}", "e".repeat(64))),
        bytes_done: 2_000_000,
        bytes_total: 10_000_000,
        layers_done: 1,
        layers_total: 2,
    });
    assert_eq!(
        waiting_for(&s, Until::Once),
        "the release image r.example/ocp:4.1 (pulling sha256:eeeeeeeeeeee layers 1/2, 2.0/10.0 MB)"
    );
}

/// In Russian the summary's labels and sentences are Russian; the values (outcome, reason,
/// versions) are what `-o json` gives.
#[test]
fn the_summary_in_russian() {
    use crate::l10n::{Lang, scoped};
    let text = scoped(Lang::Ru, || render_text(&summary("timeout", true)));
    assert_eq!(
        text,
        "дрейф неизвестен: ни один проход не завершился целиком (timeout; watch-only: ничего не записано)\nрелиз: <not loaded> (file:///p)\nитог: timeout\nзадачи: выполнено 0 из 0, проходов: 0\nзапросы к API: 0 ()\nзаписи: 0 (объекты полезной нагрузки: 0, статус ClusterVersion: 0, Lease: 0, прочее: 0)\nпричина: timed out after 2s waiting for the first pass to start\nвремя: 0.500s\n"
    );
    let count = |n: usize| {
        let mut s = summary("pass-done", true);
        s.drift = (0..n).map(|_| drift_record()).collect();
        let text = scoped(Lang::Ru, || render_text(&s));
        text.lines()
            .find(|l| l.contains("(watch-only"))
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(
        count(0),
        "Изменились бы 0 объектов (watch-only: ничего не записано)"
    );
    assert_eq!(count(1), "Изменился бы 1 объект (watch-only: ничего не записано)");
    assert_eq!(
        count(3),
        "Изменились бы 3 объекта (watch-only: ничего не записано)"
    );
}

fn drift_record() -> crate::reconcile::api::DriftRecord {
    crate::reconcile::api::DriftRecord {
        task: "configmap \"ns/a\" (1 of 1)".into(),
        kind: "ConfigMap".into(),
        namespace: "ns".into(),
        name: "a".into(),
        drift: crate::reconcile::api::Drift::Delete,
    }
}
