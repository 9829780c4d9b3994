//! The operator's Prometheus metrics: upstream's cluster families ([`cluster`], the names,
//! labels and meaning of `pkg/cvo/metrics.go` in openshift/cluster-version-operator, so alerts
//! and dashboards written for the upstream operator keep working) and the engine's own under a
//! `cvo_` prefix, in one [`Metrics`] registry encoded in the Prometheus / OpenMetrics text
//! format by the `prometheus-client` crate.
//!
//! The engine's families:
//!
//! | name | type | labels | meaning |
//! |---|---|---|---|
//! | `cvo_passes_total` | counter | | whole apply passes finished |
//! | `cvo_pass_duration_seconds` | histogram | | wall time of each finished pass (every mode and outcome: active or watch-only, done, failed or timed out) |
//! | `cvo_pass_tasks` | histogram | | tasks applied per finished pass |
//! | `cvo_pass_writes` | histogram | | apply writes (create, update, patch, delete) per finished pass |
//! | `cvo_drift_resources` | gauge | | resources that differ from the payload in the last finished pass: watch-only, what it would change; active-apply, what it changed |
//! | `cvo_status_writes_total` | counter | | ClusterVersion status writes |
//! | `cvo_api_requests_total` | counter | verb, code | API requests by Kubernetes verb and HTTP status (`code` `0`: no answer) |
//! | `cvo_watch_restarts_total` | counter | | watches that failed and were started again |
//! | `cvo_lease_transitions_total` | counter | | changes of the CVO Lease holder seen |
//! | `cvo_leader` | gauge | | 1 while this process holds the CVO Lease |
//! | `cvo_ready` | gauge | | 1 while the readiness endpoint answers 200 |

pub mod cluster;

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicU64, Ordering},
};

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{MetricType, counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

use crate::{
    openshift::config_v1::{ClusterOperator, ClusterVersion},
    reconcile::api::StatusSnapshot,
};

pub use cluster::{ClusterInputs, CurrentRelease, Installer, PayloadProgress, Sample, Transitions};

/// Content type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What the cluster collector reads at scrape time.
#[derive(Debug, Default)]
struct ClusterSide {
    inputs: ClusterInputs,
    transitions: Transitions,
}

/// The upstream families, computed at each scrape from the latest inputs.
#[derive(Debug)]
struct ClusterCollector(Arc<Mutex<ClusterSide>>);

impl Collector for ClusterCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let samples = {
            let side = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut s = cluster::samples(&side.inputs);
            s.extend(side.transitions.samples());
            s
        };
        // One family per name, in the order the names first appear.
        let mut names: Vec<&'static str> = Vec::new();
        for s in &samples {
            if !names.contains(&s.name) {
                names.push(s.name);
            }
        }
        for name in names {
            let fam = Family::<Vec<(&'static str, String)>, Gauge<f64, AtomicU64>>::default();
            for s in samples.iter().filter(|s| s.name == name) {
                fam.get_or_create(&s.labels).set(s.value);
            }
            let m = encoder.encode_descriptor(name, cluster::help(name), None, MetricType::Gauge)?;
            fam.encode(m)?;
        }
        Ok(())
    }
}

/// What the engine observer remembers between snapshots.
#[derive(Debug, Default)]
struct EngineSide {
    passes: u64,
    status_writes: u64,
    holder: Option<String>,
}

/// The operator's metrics: upstream's cluster families and the engine's `cvo_` families.
/// Cheap to share (`Arc` inside); every method takes `&self`.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    cluster: Arc<Mutex<ClusterSide>>,
    engine: Arc<Mutex<EngineSide>>,
    passes: Counter,
    pass_duration: Histogram,
    pass_tasks: Histogram,
    pass_writes: Histogram,
    drift: Gauge,
    status_writes: Counter,
    requests: Family<[(&'static str, String); 2], Counter>,
    watch_restarts: Counter,
    lease_transitions: Counter,
    leader: Gauge,
    ready: Gauge,
    /// Last time the engine observer ran (ms since the Unix epoch), for the liveness check.
    observed_at: Arc<AtomicU64>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with every family registered; the cluster families are empty but for
    /// upstream's "no ClusterVersion" samples until [`Metrics::set_cluster`].
    pub fn new() -> Self {
        use prometheus_client::metrics::histogram::exponential_buckets;
        let cluster = Arc::new(Mutex::new(ClusterSide::default()));
        let m = Self {
            registry: Arc::new(Registry::default()),
            cluster: cluster.clone(),
            engine: Arc::default(),
            passes: Counter::default(),
            pass_duration: Histogram::new(exponential_buckets(0.1, 2.0, 14)),
            pass_tasks: Histogram::new(exponential_buckets(1.0, 2.0, 12)),
            pass_writes: Histogram::new([0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]),
            drift: Gauge::default(),
            status_writes: Counter::default(),
            requests: Family::default(),
            watch_restarts: Counter::default(),
            lease_transitions: Counter::default(),
            leader: Gauge::default(),
            ready: Gauge::default(),
            observed_at: Arc::default(),
        };
        let mut r = Registry::default();
        r.register_collector(Box::new(ClusterCollector(cluster)));
        r.register("cvo_passes", "Whole apply passes finished", m.passes.clone());
        r.register(
            "cvo_pass_duration_seconds",
            "Wall time of each finished apply pass, in seconds",
            m.pass_duration.clone(),
        );
        r.register(
            "cvo_pass_tasks",
            "Tasks applied per finished apply pass",
            m.pass_tasks.clone(),
        );
        r.register(
            "cvo_pass_writes",
            "Apply writes (create, update, patch, delete) per finished apply pass",
            m.pass_writes.clone(),
        );
        r.register(
            "cvo_drift_resources",
            "Resources that differ from the payload in the last finished pass (watch-only: would be changed; active-apply: were changed)",
            m.drift.clone(),
        );
        r.register(
            "cvo_status_writes",
            "ClusterVersion status writes",
            m.status_writes.clone(),
        );
        r.register(
            "cvo_api_requests",
            "API requests by Kubernetes verb and HTTP status code (0: no answer)",
            m.requests.clone(),
        );
        r.register(
            "cvo_watch_restarts",
            "Watches that failed and were started again",
            m.watch_restarts.clone(),
        );
        r.register(
            "cvo_lease_transitions",
            "Changes of the CVO Lease holder seen by this process",
            m.lease_transitions.clone(),
        );
        r.register(
            "cvo_leader",
            "1 while this process holds the CVO Lease",
            m.leader.clone(),
        );
        r.register(
            "cvo_ready",
            "1 while the readiness endpoint answers 200",
            m.ready.clone(),
        );
        Self {
            registry: Arc::new(r),
            ..m
        }
    }

    /// Replaces the cluster objects the upstream families are computed from and counts the
    /// ClusterOperator condition transitions since the previous call.
    pub fn set_cluster(&self, cluster_version: Option<ClusterVersion>, operators: Vec<ClusterOperator>) {
        let mut side = self
            .cluster
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        side.transitions.observe(&operators);
        side.inputs.cluster_version = cluster_version;
        side.inputs.cluster_operators = operators;
    }

    /// Sets the installer information (`cluster_installer`).
    pub fn set_installer(&self, installer: Installer) {
        self.cluster
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .inputs
            .installer = installer;
    }

    /// Sets `--update-service` (the `upstream` label of `cluster_version_available_updates`).
    pub fn set_update_service(&self, url: Option<String>) {
        self.cluster
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .inputs
            .update_service = url;
    }

    /// Takes what the metrics need from an engine snapshot: the current release, payload
    /// progress and errors, the update retrieval time; and for the `cvo_` families each
    /// finished pass ([`StatusSnapshot::recent_passes`]: duration, tasks, writes, drift),
    /// status writes, the Lease holder and leadership. `own_image` is the
    /// current release's image while the engine has no target yet.
    pub fn observe(&self, snap: &StatusSnapshot, own_image: &str) {
        {
            let mut side = self
                .cluster
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let inputs = &mut side.inputs;
            let (version, image) = match &snap.desired {
                Some(d) if !d.image.is_empty() => (d.version.clone(), d.image.clone()),
                _ => (String::new(), own_image.to_string()),
            };
            inputs.current.version = version.clone();
            inputs.current.image = image;
            inputs.payload = PayloadProgress {
                version,
                done: snap.done,
                total: snap.total,
                errors: snap.failures.len(),
            };
            inputs.update_retrieval = snap.updates.as_ref().and_then(|u| u.last_success);
        }
        let mut e = self
            .engine
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if snap.counters.passes > e.passes {
            self.passes.inc_by(snap.counters.passes - e.passes);
            // Each finished pass, from the engine's own record: a pass too short to be seen
            // running in any snapshot (watch-only, converged, failed at once) counts too. Only
            // more than RECENT_PASSES passes between two snapshots would lose some.
            for p in snap.recent_passes.iter().filter(|p| p.number > e.passes) {
                self.pass_duration.observe(p.seconds);
                self.pass_tasks.observe(p.done as f64);
                self.pass_writes.observe(p.writes as f64);
            }
            e.passes = snap.counters.passes;
        }
        if let Some(p) = snap.recent_passes.last() {
            self.drift.set(i64::try_from(p.drift).unwrap_or(i64::MAX));
        }
        if snap.counters.status_writes > e.status_writes {
            self.status_writes
                .inc_by(snap.counters.status_writes - e.status_writes);
            e.status_writes = snap.counters.status_writes;
        }
        if snap.lease_holder.is_some() && snap.lease_holder != e.holder {
            if e.holder.is_some() {
                self.lease_transitions.inc();
            }
            e.holder = snap.lease_holder.clone();
        }
        self.leader.set(i64::from(snap.leader));
        self.observed_at.store(now_ms(), Ordering::Relaxed);
    }

    /// Counts one API request: its Kubernetes verb and HTTP status (`0`: no answer).
    pub fn api_request(&self, verb: &'static str, code: u16) {
        self.requests
            .get_or_create(&[("verb", verb.to_string()), ("code", code.to_string())])
            .inc();
    }

    /// Counts a watch that failed and was started again.
    pub fn watch_restart(&self) {
        self.watch_restarts.inc();
    }

    /// Records whether the operator is ready (`cvo_ready`).
    pub fn set_ready(&self, ready: bool) {
        self.ready.set(i64::from(ready));
    }

    /// Milliseconds since the last [`Metrics::observe`] (`None` before the first).
    pub fn since_observed_ms(&self) -> Option<u64> {
        match self.observed_at.load(Ordering::Relaxed) {
            0 => None,
            t => Some(now_ms().saturating_sub(t)),
        }
    }

    /// Every family in the OpenMetrics text format ([`CONTENT_TYPE`]).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail; an encoder error would leave a partial text.
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            tracing::warn!("metrics: encoding failed");
        }
        out
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(
        number: u64,
        seconds: f64,
        done: usize,
        writes: u64,
        drift: usize,
    ) -> crate::reconcile::api::PassSummary {
        crate::reconcile::api::PassSummary {
            number,
            seconds,
            watch_only: true,
            state: "Reconciling".into(),
            outcome: crate::reconcile::api::PassOutcome::Done,
            done,
            total: done,
            writes,
            failed: 0,
            first_failure: None,
            drift,
        }
    }

    /// Every finished pass is timed, also those never seen running (a short watch-only pass, a
    /// failed one, two passes between two snapshots); the drift gauge follows the last pass.
    #[test]
    fn the_pass_histogram_times_every_finished_pass() {
        let m = Metrics::new();
        let mut snap = StatusSnapshot::default();
        m.observe(&snap, "own");
        snap.counters.passes = 2;
        snap.recent_passes = Arc::new(vec![pass(1, 0.05, 8, 0, 3), pass(2, 0.4, 8, 0, 2)]);
        m.observe(&snap, "own");
        // The same snapshot again counts nothing twice.
        m.observe(&snap, "own");
        let text = m.encode();
        for line in [
            "cvo_passes_total 2",
            "cvo_pass_duration_seconds_count 2",
            "cvo_pass_duration_seconds_sum 0.45",
            "cvo_pass_tasks_count 2",
            "cvo_drift_resources 2",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        let mut list = (*snap.recent_passes).clone();
        list.push(pass(3, 1.0, 8, 0, 0));
        snap.recent_passes = Arc::new(list);
        snap.counters.passes = 3;
        m.observe(&snap, "own");
        let text = m.encode();
        for line in ["cvo_pass_duration_seconds_count 3", "cvo_drift_resources 0"] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
    }

    #[test]
    fn encodes_upstream_and_engine_families() {
        let m = Metrics::new();
        let mut snap = StatusSnapshot {
            running: true,
            total: 4,
            desired: Some(crate::openshift::config_v1::Release {
                version: "4.16.4".into(),
                image: "quay.io/x@sha256:1".into(),
                ..Default::default()
            }),
            ..StatusSnapshot::default()
        };
        m.observe(&snap, "own");
        snap.running = false;
        snap.done = 4;
        snap.counters.passes = 1;
        snap.counters.apply_writes = 3;
        snap.recent_passes = Arc::new(vec![pass(1, 0.3, 4, 3, 0)]);
        snap.counters.status_writes = 2;
        snap.leader = true;
        snap.lease_holder = Some("a".into());
        m.observe(&snap, "own");
        snap.lease_holder = Some("b".into());
        m.observe(&snap, "own");
        m.api_request("get", 200);
        m.api_request("get", 200);
        m.api_request("patch", 409);
        let text = m.encode();
        for line in [
            "cvo_passes_total 1",
            "cvo_pass_duration_seconds_count 1",
            "cvo_pass_tasks_sum 4.0",
            "cvo_pass_writes_sum 3.0",
            "cvo_status_writes_total 2",
            "cvo_api_requests_total{verb=\"get\",code=\"200\"} 2",
            "cvo_api_requests_total{verb=\"patch\",code=\"409\"} 1",
            "cvo_lease_transitions_total 1",
            "cvo_leader 1",
            "cluster_operator_up{name=\"version\",version=\"\",reason=\"ClusterVersionNotFound\"} 0.0",
            "cluster_version{type=\"current\",version=\"4.16.4\",image=\"quay.io/x@sha256:1\",from_version=\"\"} 0.0",
            "cluster_version_payload{version=\"4.16.4\",type=\"applied\"} 4.0",
            "# TYPE cluster_version gauge",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
    }

    /// `cluster_version_risk_conditions{condition, risk, reason}` (upstream `pkg/cvo/metrics.go`):
    /// each risk of `status.conditionalUpdateRisks` with its `Applies` condition, 1 True, 0 False,
    /// -1 Unknown; none without the risks (gate ClusterUpdateAcceptRisks off). Parsed from the
    /// text `/metrics` serves with a Prometheus text-format parser.
    #[test]
    fn risk_conditions_follow_the_applies_condition_of_each_risk() {
        use crate::openshift::{
            condition::{Condition, ConditionStatus},
            config_v1::ConditionalUpdateRisk,
        };
        let risk = |name: &str, status, reason: &str| ConditionalUpdateRisk {
            name: name.into(),
            url: "https://example.com/risk".into(),
            message: "m".into(),
            conditions: vec![Condition {
                type_: "Applies".into(),
                status,
                reason: Some(reason.into()),
                ..Condition::default()
            }],
            ..ConditionalUpdateRisk::default()
        };
        let mut cv = ClusterVersion::default();
        cv.metadata.name = Some("version".into());
        let parse = |m: &Metrics| {
            let text = m.encode();
            prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
                .expect("Prometheus text format")
                .samples
                .into_iter()
                .filter(|s| s.metric == "cluster_version_risk_conditions")
                .map(|s| {
                    let v = match s.value {
                        prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => v,
                        other => panic!("not a gauge: {other:?}"),
                    };
                    let l = |k: &str| s.labels.get(k).unwrap_or_default().to_string();
                    (l("condition"), l("risk"), l("reason"), v)
                })
                .collect::<Vec<_>>()
        };
        let m = Metrics::new();
        m.set_cluster(Some(cv.clone()), vec![]);
        assert!(parse(&m).is_empty(), "no risks, no samples");
        cv.status.conditional_update_risks = vec![
            risk("EgressIPRegression", ConditionStatus::True, "Match"),
            risk("NotOnThisPlatform", ConditionStatus::False, "NotMatch"),
            risk("PromQLDown", ConditionStatus::Unknown, "EvaluationFailed"),
        ];
        m.set_cluster(Some(cv), vec![]);
        let mut got = parse(&m);
        got.sort_by(|a, b| a.1.cmp(&b.1));
        let want = |c: &str, r: &str, why: &str, v: f64| (c.to_string(), r.to_string(), why.to_string(), v);
        assert_eq!(
            got,
            [
                want("Applies", "EgressIPRegression", "Match", 1.0),
                want("Applies", "NotOnThisPlatform", "NotMatch", 0.0),
                want("Applies", "PromQLDown", "EvaluationFailed", -1.0),
            ]
        );
        assert!(
            m.encode()
                .lines()
                .any(|l| l == "# TYPE cluster_version_risk_conditions gauge")
        );
    }
}
