//! `cvo demo`: a live update from 4.16.3 to 4.16.4 on the in-process simulated cluster.
//!
//! What runs, all in this process:
//! - the simulator seeded with `assets/demo-cluster` ([`crate::sim::demo_cluster::demo_cluster`]);
//! - the simulated operators and kubelet ([`crate::sim::operators::spawn`]) at `speed`, with
//!   an optional scenario file (degraded, stalled, crash-looping operators);
//! - the reconcile engine in active-apply on 4.16.3, as the in-cluster CVO would run: its own
//!   release image is the 4.16.3 pull spec of `assets/update-graph.json`, it holds the Lease
//!   `openshift-cluster-version/version` (upstream HA lease timings), its other intervals are
//!   upstream's divided by `speed` ([`engine_timings`]); its update service is the simulated
//!   cluster's ([`crate::sim::update_service`]: `assets/update-graph.json` on a loopback port),
//!   which also answers the PromQL of the 4.16.5 risk as the cluster's Prometheus would
//!   (exposed: 1);
//! - with `auto` ([`DemoOptions::auto`]: `--auto`, and always headless), after
//!   [`request_delay`], like an administrator running `oc adm upgrade --to 4.16.4`, a
//!   [`Command::Request`] of the 4.16.4 version and image. Without it the
//!   dashboard's user picks the update on the Updates view and confirms it.
//!
//! The payloads are embedded in the binary and written to a temporary directory that is
//! removed at exit, so a release binary runs the demo from anywhere. With a local registry
//! answering ([`DemoOptions::registry`], [`super::demo_registry`]) they are pushed there as
//! signed release images first, the served graph and the seeded cluster name the pushed
//! digests, and the engine pulls, verifies and caches its updates as on a real cluster
//! ([`super::payload::cluster_payloads`]); otherwise it reads the embedded payloads. The second
//! headless line (and the dashboard header) says which.
//!
//! Headless, [`run_headless`] prints one line per engine event (and per simulated operator
//! event), plus the sync progress at most once a second; with `until_complete` it ends with
//! the ClusterVersion history table (exit 0), or the failure (exit 1), or at the timeout
//! (exit 2).

use crate::l10n::{tr, trf};
use std::{
    collections::BTreeMap,
    fmt::Write as _,
    io::Write,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use chrono::{DateTime, Utc};

mod payloads;
pub use payloads::DemoPayloads;

use super::demo_registry::ReleaseSource;
use crate::{
    clock::Clock,
    reconcile::{
        Engine, EngineConfig, EngineTimings, LeaseConfig, LeaseTimings, UpdatesConfig,
        api::{Command, EngineHandle, EngineState, EventLevel, PayloadResolver, StatusSnapshot},
        default_identity,
        updates::{client::Egress, graph::Graph},
    },
    sim::{
        Simulator,
        operators::{OperatorScenario, OperatorSimConfig, OperatorSimHandle},
    },
};

/// The release the demo cluster runs at start.
pub const FROM_VERSION: &str = "4.16.3";
/// The release the demo updates to.
pub const TARGET_VERSION: &str = "4.16.4";
/// Speed when neither `--speed` nor the scenario sets one: about half a minute for the update.
pub const DEFAULT_SPEED: f64 = 10.0;

const UPDATE_GRAPH: &str = include_str!("../../assets/update-graph.json");

/// Options of `cvo demo` (live mode).
#[derive(Clone, Debug, Default)]
pub struct DemoOptions {
    /// A scenario file for the simulated operators (its `speed` applies unless `speed` is set).
    pub scenario: Option<PathBuf>,
    /// Time speed (> 0, finite); `None` ⇒ the scenario's, else [`DEFAULT_SPEED`].
    pub speed: Option<f64>,
    /// Stop at Completed (exit 0), Failing (exit 1) or the timeout (exit 2).
    pub until_complete: bool,
    /// Give up after this long; `None` with `until_complete` ⇒ [`default_timeout`].
    pub timeout: Option<Duration>,
    /// Request the update to 4.16.4 by itself after [`request_delay`] (`--auto`; headless
    /// runs always do, having no one to pick it).
    pub auto: bool,
    /// The local registry (`HOST:PORT`) to put the releases in when it answers
    /// ([`super::demo_registry`]); `None`: the embedded payloads, no probe.
    pub registry: Option<String>,
}

/// The default `--timeout` of `--until-complete`: 60 s plus 900 s divided by the speed (the
/// simulated update takes 2–4 minutes at speed 1), e.g. 105 s at speed 20.
pub fn default_timeout(speed: f64) -> Duration {
    Duration::from_secs_f64(60.0 + 900.0 / speed)
}

/// The engine's intervals at `speed`: upstream's ([`EngineTimings::scaled`] with `1 / speed`),
/// with the ClusterVersion poll kept at 1 s or more (the engine also re-reads it after each
/// command it handles) so an idle demo costs little CPU.
pub fn engine_timings(speed: f64) -> EngineTimings {
    let mut t = EngineTimings::scaled(1.0 / speed);
    t.cv_poll = t.cv_poll.max(Duration::from_secs(1));
    t
}

/// How long after the engine settles on 4.16.3 the demo asks for the update: 20 s / speed,
/// at least 0.5 s.
pub fn request_delay(speed: f64) -> Duration {
    Duration::from_secs_f64((20.0 / speed).max(0.5))
}

/// The demo update graph (embedded `assets/update-graph.json`).
///
/// # Errors
/// The embedded graph does not parse (one line naming it).
pub fn update_graph() -> anyhow::Result<Graph> {
    Graph::parse(UPDATE_GRAPH.as_bytes()).map_err(|e| anyhow::anyhow!("assets/update-graph.json: {e}"))
}

/// The simulated cluster's update service and Prometheus: the demo graph, and every PromQL
/// query of its risks answered 1 (the demo cluster is exposed to them).
/// `json` is the graph as served (its parse is `graph`).
fn update_service(
    graph: &Graph,
    json: String,
) -> std::io::Result<crate::sim::update_service::UpdateServiceStub> {
    let promql = graph
        .conditional_edges
        .iter()
        .flat_map(|c| &c.risks)
        .flat_map(|r| &r.matching_rules)
        .filter_map(|m| m.promql.as_ref().map(|p| (p.promql.clone(), 1.0)))
        .collect();
    crate::sim::update_service::UpdateServiceStub::start(crate::sim::update_service::StubContent {
        graph: bytes::Bytes::from(json),
        promql,
    })
}

/// The engine's update-service options in the demo: the simulated service and Prometheus at
/// `stub`, no proxy, architecture `amd64`, polling at the engine's scaled resync interval.
fn updates_config(
    stub: &crate::sim::update_service::UpdateServiceStub,
    timings: &EngineTimings,
) -> anyhow::Result<UpdatesConfig> {
    let prom = crate::reconcile::updates::client::PrometheusApi::new(
        &stub.prometheus_url(),
        None,
        &Egress::default(),
        Duration::from_secs(30),
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    let mut u = UpdatesConfig::new(Arc::new(prom), timings.resync_interval);
    u.upstream_override = Some(stub.graph_url());
    u.arch = "amd64".into();
    u.egress = Some(Egress::default());
    u.clock = timings.clock.clone();
    Ok(u)
}

/// The engine's payload resolver in the demo: the embedded payloads by image, with an error
/// naming the version for a release the demo does not ship (e.g. 4.16.5).
#[derive(Debug)]
struct DemoResolver {
    own_image: String,
    by_image: BTreeMap<String, PathBuf>,
    graph: Arc<Graph>,
}

impl PayloadResolver for DemoResolver {
    fn own_image(&self) -> String {
        self.own_image.clone()
    }

    fn resolve(&self, image: &str) -> Result<PathBuf, String> {
        if let Some(d) = self.by_image.get(image) {
            return Ok(d.clone());
        }
        let shipped: Vec<String> = self
            .by_image
            .keys()
            .filter_map(|i| {
                ["4.16.2", FROM_VERSION, TARGET_VERSION, "4.16.5"]
                    .into_iter()
                    .find(|v| self.graph.image_of(v) == Some(i.as_str()))
                    .map(str::to_string)
            })
            .collect();
        Err(format!(
            "the demo ships the payloads of {} only, not of {image}",
            shipped.join(", ")
        ))
    }
}

/// Everything the live demo runs; dropping it stops the simulated operators and removes the
/// payloads.
pub struct LiveDemo {
    /// The simulated cluster.
    pub sim: Simulator,
    /// The engine.
    pub engine: EngineHandle,
    /// The simulated operators.
    pub operators: OperatorSimHandle,
    /// The speed in effect.
    pub speed: f64,
    /// The `SetDesiredUpdate` request, sent after [`request_delay`] when
    /// [`DemoOptions::auto`]; `None` otherwise.
    pub requester: Option<tokio::task::JoinHandle<Option<String>>>,
    /// The extracted payloads (kept until the demo ends).
    pub payloads: DemoPayloads,
    /// The simulated update service and Prometheus (kept until the demo ends).
    pub update_service: crate::sim::update_service::UpdateServiceStub,
    /// The demo's simulated clock (`speed` times as fast as the wall clock), shared by the
    /// engine, the simulated operators and the dashboard.
    pub clock: Clock,
    /// Where the releases come from: the local registry, or the embedded payloads.
    pub release_source: ReleaseSource,
    /// The process's shared watches of the simulated cluster: the engine's ClusterVersion and
    /// ClusterOperators and the dashboard's feed read the same ones (one watch per kind).
    pub informers: crate::informers::Informers,
}

impl LiveDemo {
    /// Starts the simulator, the simulated operators, the engine and the update request. With
    /// [`DemoOptions::registry`] answering, the releases are pushed there first and the engine
    /// pulls and verifies them ([`super::demo_registry`]); otherwise (no answer, or a push
    /// failing) the embedded payloads are used, and [`LiveDemo::release_source`] says why.
    ///
    /// # Errors
    /// A bad scenario file (one line naming it), a bad speed, or the payloads cannot be
    /// written.
    pub async fn start(opts: &DemoOptions) -> anyhow::Result<Self> {
        let scenario = match &opts.scenario {
            Some(p) => Some(OperatorScenario::from_file(p)?),
            None => None,
        };
        if let Some(s) = opts.speed
            && !(s.is_finite() && s > 0.0)
        {
            anyhow::bail!("--speed {s}: must be a positive number");
        }
        let embedded_graph = update_graph()?;
        let payloads = DemoPayloads::extract(&embedded_graph)?;
        let (release_source, published) = publish_releases(opts.registry.as_deref(), &payloads).await;
        let (graph_json, moved) = match &published {
            Some(p) => {
                let moved: BTreeMap<String, String> = p
                    .images
                    .iter()
                    .filter_map(|(v, new)| {
                        embedded_graph
                            .image_of(v)
                            .map(|old| (old.to_string(), new.clone()))
                    })
                    .collect();
                (
                    super::demo_registry::rewrite_graph(UPDATE_GRAPH, &p.images)
                        .map_err(anyhow::Error::msg)?,
                    moved,
                )
            }
            None => (UPDATE_GRAPH.to_string(), BTreeMap::new()),
        };
        let graph = Arc::new(
            Graph::parse(graph_json.as_bytes())
                .map_err(|e| anyhow::anyhow!("assets/update-graph.json: {e}"))?,
        );
        let mut ops = OperatorSimConfig::with_payloads(&payloads.dirs())?.speed(DEFAULT_SPEED);
        if let Some(sc) = scenario {
            ops = ops.with_scenario(sc);
        }
        if let Some(s) = opts.speed {
            ops = ops.speed(s);
        }
        let speed = ops.speed;
        if !(speed.is_finite() && speed > 0.0) {
            anyhow::bail!(
                "{}: speed {speed}: must be a positive number",
                opts.scenario
                    .as_deref()
                    .unwrap_or(Path::new("scenario"))
                    .display()
            );
        }
        let clock = Clock::simulated(speed);
        ops.clock = clock.clone();
        let sim = crate::sim::demo_cluster::demo_cluster_with_images(&moved)?;
        for cm in published.iter().flat_map(|p| &p.signature_config_maps) {
            sim.insert(serde_json::to_value(cm)?)
                .map_err(|e| anyhow::anyhow!("demo cluster: signature ConfigMap: {}", e.message))?;
        }
        // Nothing reads the demo's request log: keeping it would grow with every request of
        // the engine and the dashboard for as long as the demo runs.
        sim.keep_audit(false);
        // What is created from now on (the Lease object, the new release's manifests) is
        // stamped on the simulated clock; the seed keeps its own times.
        sim.set_clock(clock.clone());
        let operators = crate::sim::operators::spawn(sim.clone(), ops);
        let own_image = graph
            .image_of(FROM_VERSION)
            .ok_or_else(|| anyhow::anyhow!("assets/update-graph.json: no node {FROM_VERSION}"))?
            .to_string();
        let target_image = graph
            .image_of(TARGET_VERSION)
            .ok_or_else(|| anyhow::anyhow!("assets/update-graph.json: no node {TARGET_VERSION}"))?
            .to_string();
        let update_service = update_service(&graph, graph_json)?;
        let mut timings = engine_timings(speed);
        timings.clock = clock.clone();
        let client = kube::Client::new(sim.clone(), "default");
        let informers = crate::informers::Informers::new(client.clone());
        let resolver: Arc<dyn PayloadResolver> = if published.is_some() {
            // As on a cluster: the running release from its directory, every other one pulled
            // from the registry, verified by the ClusterVerifier and cached (in the demo's
            // temporary directory). The registry is on loopback: no proxy.
            let mut ro = crate::reconcile::payload::retrieve::RetrieveOptions::new(Some(
                payloads.root().join("cache"),
            ));
            ro.http_proxy = None;
            ro.https_proxy = None;
            let local = crate::reconcile::api::LocalPayloads {
                own_image: own_image.clone(),
                own_dir: payloads.root().join(FROM_VERSION),
                others: BTreeMap::new(),
            };
            super::payload::cluster_payloads(client.clone(), local, ro, true, "version")
        } else {
            Arc::new(DemoResolver {
                own_image,
                by_image: payloads.by_image.clone(),
                graph: graph.clone(),
            })
        };
        let cfg = EngineConfig {
            create_cluster_version: false,
            update_graph: Some(updates_config(&update_service, &timings)?),
            timings,
            lease: Some(LeaseConfig::cvo(default_identity(), LeaseTimings::HA)),
            informers: Some(informers.clone()),
            ..EngineConfig::new(resolver)
        };
        let engine = Engine::spawn(client, cfg);
        let requester = opts.auto.then(|| {
            tokio::spawn(request_update(
                engine.status.clone(),
                engine.commands.clone(),
                target_image,
                request_delay(speed),
            ))
        });
        Ok(Self {
            sim,
            engine,
            operators,
            speed,
            requester,
            payloads,
            update_service,
            clock,
            release_source,
            informers,
        })
    }

    /// Stops the engine (it gives the lease up) and the simulated operators.
    pub async fn stop(self) {
        if let Some(r) = &self.requester {
            r.abort();
        }
        self.engine.shutdown().await;
        self.operators.shutdown();
        drop(self.payloads);
    }
}

/// With `registry`: probes it and, when it answers, publishes the payloads there
/// ([`super::demo_registry::publish`]). Returns where the releases come from, and what was
/// published; a failure falls back to the embedded payloads with the reason.
async fn publish_releases(
    registry: Option<&str>,
    payloads: &DemoPayloads,
) -> (ReleaseSource, Option<super::demo_registry::Published>) {
    let Some(registry) = registry else {
        return (ReleaseSource::Embedded(None), None);
    };
    if let Err(why) = super::demo_registry::probe(registry).await {
        return (ReleaseSource::Embedded(Some(why)), None);
    }
    let dirs: BTreeMap<String, &Path> = payloads
        .versions
        .iter()
        .filter_map(|(img, v)| payloads.by_image.get(img).map(|d| (v.clone(), d.as_path())))
        .collect();
    match super::demo_registry::publish(registry, &dirs, &payloads.root().join("signatures")).await {
        Ok(p) => (p.source.clone(), Some(p)),
        Err(e) => {
            // Back to the embedded payloads exactly as they ship: without the demo's
            // verification ConfigMap.
            for d in dirs.values() {
                let _ = std::fs::remove_file(
                    d.join("release-manifests")
                        .join(super::demo_registry::VERIFICATION_FILE),
                );
            }
            (
                ReleaseSource::Embedded(Some(format!("the registry {registry} answers, but {e}"))),
                None,
            )
        }
    }
}

/// How long a signal waits for the dashboard, which ends on the same signal, to stop the demo
/// in order before what is left is dropped.
const SIGNAL_GRACE: Duration = Duration::from_secs(5);

/// Runs the live demo, in the dashboard or `headless` ([`run_headless`] on stdout), and returns
/// the exit code. Every exit path removes the payload directory: the handlers of SIGINT, SIGTERM
/// and SIGHUP ([`crate::signals::StopSignals`]) are installed first, before anything is created,
/// so that none of them can end the process by its default action and leave the payload
/// directory behind, then everything the demo runs is created inside one
/// future that a signal drops (with the simulator, the engine and the directory) when the
/// dashboard (given [`SIGNAL_GRACE`] to end on the same signal) or the headless loop has not
/// already ended on it; the dashboard's terminal is restored after such a drop.
///
/// # Errors
/// See [`LiveDemo::start`]; the dashboard's terminal errors; the signal handlers cannot be
/// installed.
pub async fn run_live(opts: &DemoOptions, headless: bool, read_only: bool) -> anyhow::Result<u8> {
    let mut signals = crate::signals::StopSignals::install(true)?;
    let mut work = Box::pin(async {
        let mut demo = LiveDemo::start(opts).await?;
        let code = if headless {
            let mut out = std::io::stdout();
            run_headless(&mut demo, opts, &mut out).await
        } else {
            run_dashboard(&demo, read_only).await.map(|()| 0)
        };
        demo.stop().await;
        code
    });
    tokio::select! {
        biased;
        r = &mut work => r,
        signal = signals.recv() => {
            tracing::info!(signal = signal.name(), "demo ended by signal");
            // The dashboard gets the same signal (it handles SIGHUP, SIGTERM and SIGINT) and
            // then stops the demo in order: the engine stopped, its Lease released. Let it,
            // for up to SIGNAL_GRACE; on a loaded machine the signal is seen here first.
            if !headless {
                let _ = tokio::time::timeout(SIGNAL_GRACE, &mut work).await;
            }
            // Dropping the unfinished work stops everything and removes the payloads.
            drop(work);
            #[cfg(feature = "tui")]
            if !headless {
                let _ = ratatui::try_restore();
            }
            Ok(signal.exit_code())
        }
    }
}

/// The dashboard on the live demo: its cluster feed, its engine and its simulated clock.
#[cfg(feature = "tui")]
async fn run_dashboard(demo: &LiveDemo, read_only: bool) -> anyhow::Result<()> {
    crate::ui::run(crate::ui::UiOptions {
        feed: crate::cluster::live::watch_state_from(&demo.informers, "demo".into()),
        alerts: None,
        now: None,
        engine: Some(demo.engine.clone()),
        requests: None,
        read_only,
        clock: demo.clock.clone(),
        release_source: Some(demo.release_source.short()),
        banner: None,
        back_leaves: false,
    })
    .await
}

/// Without the `tui` feature there is no dashboard.
#[cfg(not(feature = "tui"))]
async fn run_dashboard(_demo: &LiveDemo, _read_only: bool) -> anyhow::Result<()> {
    anyhow::bail!("this cvo is built without the dashboard (feature `tui`); use `cvo demo --headless`")
}

/// Waits until the engine leads and reconciles its own release, waits `delay`, then sends
/// `SetDesiredUpdate` for 4.16.4 (version and image, as `oc adm upgrade --to` writes them).
/// Returns the line to log, or `None` when the engine went away first.
async fn request_update(
    mut status: tokio::sync::watch::Receiver<Arc<StatusSnapshot>>,
    commands: tokio::sync::mpsc::Sender<Command>,
    image: String,
    delay: Duration,
) -> Option<String> {
    status
        .wait_for(|s| s.leader && s.state == EngineState::Reconciling)
        .await
        .ok()?;
    tokio::time::sleep(delay).await;
    commands
        .send(Command::Request(crate::spec_request::Request {
            patch: crate::spec_request::SpecPatch::desired_update(Some(TARGET_VERSION), Some(&image), false),
            summary: format!("upgrade --to {TARGET_VERSION}"),
        }))
        .await
        .ok()?;
    Some(trf!(
        "demo-requesting-update",
        "requesting update to {v} (like `oc adm upgrade --to {v}`)",
        v = TARGET_VERSION
    ))
}

fn stamp(at: DateTime<Utc>) -> String {
    at.format("%H:%M:%S%.3f").to_string()
}

fn level_name(l: EventLevel) -> &'static str {
    match l {
        EventLevel::Info => "INFO ",
        EventLevel::Warning => "WARN ",
        EventLevel::Error => "ERROR",
    }
}

/// Failure reasons that say an operator is broken (not merely still updating).
const BROKEN: [&str; 4] = [
    "ClusterOperatorDegraded",
    "ClusterOperatorsDegraded",
    "ClusterOperatorNotAvailable",
    "ClusterOperatorsNotAvailable",
];

/// Why the update is failing, if it is: the ClusterVersion's Failing=True, or a sync failure
/// naming a degraded or unavailable operator, while the engine works on 4.16.4.
pub fn failing_reason(s: &StatusSnapshot) -> Option<String> {
    if s.desired.as_ref().is_none_or(|d| d.version != TARGET_VERSION) {
        return None;
    }
    if let Some((r, m)) = s.failing() {
        return Some(if r.is_empty() { m } else { format!("{r}: {m}") });
    }
    s.failure
        .as_ref()
        .filter(|f| BROKEN.contains(&f.reason.as_str()))
        .map(|f| format!("{}: {}", f.reason, f.message))
}

/// The ClusterVersion history as a table: `STATE  VERSION  STARTED  COMPLETED  VERIFIED`.
pub fn history_table(s: &StatusSnapshot) -> String {
    let mut t = [
        tr!("col-state", "STATE"),
        tr!("col-version", "VERSION"),
        tr!("col-started", "STARTED"),
        tr!("col-completed", "COMPLETED"),
        tr!("col-verified", "VERIFIED"),
    ]
    .join("\t");
    t.push('\n');
    // `true`/`false` in English, as before; the dashboard's words in Russian.
    let verified = |v: bool| match (crate::l10n::current(), v) {
        (crate::l10n::Lang::En, v) => v.to_string(),
        (_, true) => tr!("verified-yes", "yes").to_owned(),
        (_, false) => tr!("verified-no", "no").to_owned(),
    };
    let fmt = |d: Option<DateTime<Utc>>| {
        d.map(|d| d.format("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_else(|| "-".into())
    };
    for h in s.cluster_version.iter().flat_map(|c| c.history.iter()) {
        let _ = writeln!(
            t,
            "{:?}\t{}\t{}\t{}\t{}",
            h.state,
            h.version,
            fmt(h.started_time),
            fmt(h.completion_time),
            verified(h.verified)
        );
    }
    super::tabwriter::format(&t, 0, 3)
}

/// Prints the demo's progress to `out` until it completes, fails, times out or Ctrl-C (see the
/// module doc); returns the exit code.
///
/// # Errors
/// Writing to `out` fails.
pub async fn run_headless(
    demo: &mut LiveDemo,
    opts: &DemoOptions,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let speed = demo.speed;
    let timeout = opts
        .timeout
        .or_else(|| opts.until_complete.then(|| default_timeout(speed)));
    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    let hold = Duration::from_secs_f64((60.0 / speed).clamp(2.0, 30.0));
    writeln!(
        out,
        "{} INFO  {}",
        stamp(demo.clock.now()),
        trf!(
            "demo-start",
            "demo: cluster at {from}, speed {speed} (times are on the simulated clock), payloads in {dir}",
            from = FROM_VERSION,
            speed = speed,
            dir = demo.payloads.root().display().to_string()
        )
    )?;
    writeln!(
        out,
        "{} INFO  {}",
        stamp(demo.clock.now()),
        trf!("demo-line", "demo: {line}", line = demo.release_source.line())
    )?;
    let mut status = demo.engine.status.clone();
    let mut sim_events = demo.operators.events.clone();
    let mut seen_engine = 0u64;
    let mut seen_sim = 0u64;
    let mut last_progress: Option<(tokio::time::Instant, usize, usize)> = None;
    let mut failing_since: Option<(tokio::time::Instant, String)> = None;
    let mut requested = false;
    let mut sim_alive = true;
    let mut progress_for: Option<String> = None;
    // Ctrl-C and SIGTERM end the demo cleanly (the payload directory is removed).
    let ctrl_c = crate::signals::stop_requested();
    tokio::pin!(ctrl_c);
    let tick = Duration::from_millis(250);
    loop {
        if !requested
            && let Some(r) = demo.requester.as_mut()
            && r.is_finished()
        {
            requested = true;
            if let Ok(Some(line)) = r.await {
                writeln!(out, "{} INFO  {line}", stamp(demo.clock.now()))?;
            }
        }
        let s = status.borrow_and_update().clone();
        let from = seen_engine;
        for e in s.events.iter().filter(|e| e.seq > from) {
            writeln!(out, "{} {} {}", stamp(e.at), level_name(e.level), e.text)?;
            seen_engine = e.seq;
        }
        let ev = sim_events.borrow_and_update().clone();
        let from = seen_sim;
        for e in ev.iter().filter(|e| e.seq > from) {
            writeln!(out, "{} SIM   {}", stamp(e.at), e.text)?;
            seen_sim = e.seq;
        }
        let now = tokio::time::Instant::now();
        // Progress of the furthest pass for this release, at most once a second: each pass
        // starts again from 0, which is not news.
        let target = s.desired.as_ref().map(|d| d.image.clone());
        if progress_for != target {
            progress_for = target;
            last_progress = None;
        }
        if s.running
            && s.total > 0
            && last_progress
                .is_none_or(|(t, d, n)| (s.done > d || s.total != n) && now - t >= Duration::from_secs(1))
        {
            let level = s
                .run_levels
                .iter()
                .find(|r| r.done + r.skipped + r.failed < r.total)
                .and_then(|r| r.level)
                .map(|l| trf!("demo-run-level", ", run level {l}", l = format!("{l:02}")))
                .unwrap_or_default();
            writeln!(
                out,
                "{} INFO  {} {}/{} ({:.0}%){level}",
                stamp(demo.clock.now()),
                tr!("demo-progress", "progress"),
                s.done,
                s.total,
                // Truncated, as the ClusterVersion's Progressing message says it.
                (f64::from(s.fraction) * 100.0).trunc()
            )?;
            last_progress = Some((now, s.done, s.total));
        }
        if opts.until_complete {
            if s.is_completed() && s.desired.as_ref().is_some_and(|d| d.version == TARGET_VERSION) {
                writeln!(
                    out,
                    "{} INFO  {}",
                    stamp(demo.clock.now()),
                    trf!(
                        "demo-completed",
                        "update to {target} Completed",
                        target = TARGET_VERSION
                    )
                )?;
                write!(out, "\n{}", history_table(&s))?;
                return Ok(0);
            }
            match (failing_reason(&s), &failing_since) {
                (Some(r), Some((t, _))) if now - *t >= hold => {
                    writeln!(
                        out,
                        "{} ERROR {}",
                        stamp(demo.clock.now()),
                        trf!("demo-failing", "update failing: {r}", r = r)
                    )?;
                    write!(out, "\n{}", history_table(&s))?;
                    return Ok(1);
                }
                (Some(r), None) => failing_since = Some((now, r)),
                (Some(_), Some(_)) => {}
                (None, _) => failing_since = None,
            }
        }
        out.flush()?;
        let wake = match deadline {
            Some(d) => d.min(now + tick),
            None => now + tick,
        };
        tokio::select! {
            r = status.changed() => {
                if r.is_err() {
                    writeln!(
                        out,
                        "{} ERROR {}",
                        stamp(demo.clock.now()),
                        tr!("demo-engine-stopped", "the engine stopped")
                    )?;
                    return Ok(1);
                }
            }
            r = sim_events.changed(), if sim_alive => sim_alive = r.is_ok(),
            () = tokio::time::sleep_until(wake) => {}
            _ = &mut ctrl_c => {
                writeln!(
                    out,
                    "{} INFO  {}",
                    stamp(demo.clock.now()),
                    tr!("demo-interrupted", "interrupted")
                )?;
                return Ok(130);
            }
        }
        if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
            let s = status.borrow().clone();
            if opts.until_complete {
                writeln!(
                    out,
                    "{} ERROR {}",
                    stamp(demo.clock.now()),
                    trf!(
                        "demo-timeout",
                        "timeout after {secs}s: {done}/{total} done, state {state}",
                        secs = format!("{:.0}", timeout.unwrap_or_default().as_secs_f64()),
                        done = s.done,
                        total = s.total,
                        state = format!("{:?}", s.state)
                    )
                )?;
                write!(out, "\n{}", history_table(&s))?;
                return Ok(2);
            }
            return Ok(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_payloads_extract_and_map_to_graph_images() -> anyhow::Result<()> {
        let g = update_graph()?;
        let p = DemoPayloads::extract(&g)?;
        let root = p.root().to_path_buf();
        assert!(root.join("4.16.4/release-manifests/release-metadata").is_file());
        assert!(root.join("4.16.5/release-manifests/release-metadata").is_file());
        let img = g.image_of(TARGET_VERSION).unwrap_or_default();
        assert_eq!(p.by_image.get(img), Some(&root.join("4.16.4")));
        assert_eq!(
            p.dirs(),
            vec![root.join("4.16.3"), root.join("4.16.4"), root.join("4.16.5")]
        );
        let r = DemoResolver {
            own_image: String::new(),
            by_image: p.by_image.clone(),
            graph: Arc::new(g.clone()),
        };
        let e = r
            .resolve(g.image_of("4.16.2").unwrap_or_default())
            .err()
            .unwrap_or_default();
        assert!(
            e.starts_with("the demo ships the payloads of 4.16.3, 4.16.4, 4.16.5 only, not of quay.io/"),
            "{e}"
        );
        drop(p);
        assert!(!root.exists(), "the payload directory is removed");
        Ok(())
    }

    #[tokio::test]
    async fn the_live_demo_keeps_no_request_log() -> anyhow::Result<()> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let demo = LiveDemo::start(&DemoOptions {
            speed: Some(50.0),
            ..DemoOptions::default()
        })
        .await?;
        let seen = Arc::new(AtomicUsize::new(0));
        let count = seen.clone();
        demo.sim.on_audit(move |_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while seen.load(Ordering::Relaxed) < 5 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let kept = demo.sim.audit().entries.len();
        demo.stop().await;
        assert!(seen.load(Ordering::Relaxed) >= 5, "the engine made requests");
        assert_eq!(kept, 0, "requests kept in memory");
        Ok(())
    }

    #[test]
    fn timings_follow_the_speed() {
        let t = engine_timings(20.0);
        assert_eq!(t.resync_interval, Duration::from_secs(9));
        assert_eq!(t.cv_poll, Duration::from_secs(1));
        assert_eq!(request_delay(20.0), Duration::from_secs(1));
        assert_eq!(request_delay(100.0), Duration::from_millis(500));
        assert_eq!(default_timeout(20.0), Duration::from_secs(105));
    }
}
