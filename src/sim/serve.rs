//! `cvo sim serve`: the [`Simulator`] over HTTPS on 127.0.0.1, so any Kubernetes client
//! (cvo itself, curl, kubectl) can talk to a simulated cluster.
//!
//! At start it generates a self-signed certificate (for `127.0.0.1` and `localhost`) and a
//! random bearer token, and writes a kubeconfig (cluster `cvo-sim` with the certificate as
//! `certificate-authority-data`, user `cvo-sim` with the token, context `cvo-sim` made
//! current) atomically (temp file + rename, mode 0600). Requests without the token get
//! `401` with a `Status` body, reason `Unauthorized`, as kube-apiserver answers. When ready
//! it prints one line to stdout and flushes it:
//! `cvo sim serving https://127.0.0.1:PORT (N objects); kubeconfig: FILE`.
//! SIGINT or SIGTERM stops it (exit 0).
//!
//! `--clusters N` serves N independent simulated clusters (each its own [`Simulator`], port
//! and token, loaded from the same source) for `cvo fleet`: the kubeconfig has the contexts
//! `cvo-sim-0` ... `cvo-sim-<N-1>` ([`fleet_kubeconfig`]) and the ready line reads
//! `cvo sim serving https://127.0.0.1:PORT and N-1 more clusters (...); kubeconfig: FILE`.
//!
//! # Scenario file
//!
//! `--scenario FILE` (YAML) gives the objects, faults and a timeline of changes:
//!
//! ```yaml
//! from: [../snapshots/cluster]   # snapshot files/directories, relative to this file
//! faults:                         # see cvo::sim::faults for every field
//!   latency_ms: 20
//!   watch: {drop_after_events: 10}
//! changes:                        # applied in order, `after` seconds after the server is ready
//!   - after: 3
//!     patch:                      # JSON merge patch of one object (status included)
//!       apiVersion: config.openshift.io/v1
//!       kind: ClusterOperator
//!       name: dns                 # (or metadata.name; namespace / metadata.namespace)
//!       status: {conditions: [...]}
//!   - after: 5
//!     create: {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {...}}
//!   - after: 8
//!     delete: {apiVersion: v1, kind: Node, name: n1}
//! ```
//!
//! `--from` on the command line replaces the scenario's `from:`; fault flags override the
//! scenario's `faults:` field by field. Changes are applied to the store directly (no faults,
//! not in the audit log) and each one is reported on stderr.

use std::{
    convert::Infallible,
    io::Write,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::Context as _;
use bytes::Bytes;
use http::{Request, Response, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use kube::config::Kubeconfig;
use serde::Deserialize;
use serde_json::{Value, json};
use tower::Service;

use super::{
    AuditEntry, Simulator,
    audit::audit_json,
    faults::{ErrorRule, Faults},
    response::ResponseBody,
};

/// Flags of `cvo sim serve`.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(after_help = "\
Fault flags override the scenario file's `faults:` field by field. Examples:
  --latency-ms 50 --jitter-ms 20        every request waits 50-70 ms
  --error list=429:0.1                  10% of lists get 429 (Retry-After: 1)
  --error '*=500:0.05'                  5% of all requests get 500
  --error get=504:0.02                  2% of gets hang --timeout-ms, then 504
  --watch-drop-after-events 5           every watch is closed after 5 events
  --watch-drop-after-secs 10            ... or after 10 s
  --gone-next 2 --gone-rate 0.1         410 Expired for the next 2 watches, then 10%
  --conflict-next 3                     409 Conflict for the next 3 updates/patches")]
pub struct ServeArgs {
    /// Snapshot to serve (file or directory, repeatable), as `cvo status --from` reads.
    #[arg(long = "from", value_name = "PATH", conflicts_with = "demo")]
    pub from: Vec<PathBuf>,
    /// Serve this Prometheus `/api/v1/alerts` response as the cluster's Thanos querier: an
    /// HTTPS port of its own behind the Route openshift-monitoring/thanos-querier, where
    /// `cvo upgrade recommend` reads the cluster's alerts.
    #[arg(long, value_name = "FILE")]
    pub alerts: Option<PathBuf>,
    /// Serve the live demo's cluster instead: 4.16.3 converged, every object of
    /// assets/demo-cluster/ including the payload's workloads (297 objects with the system
    /// namespaces). `--from assets/demo-cluster` loads only what `cvo status` reads (56 objects).
    #[arg(long, conflicts_with = "scenario")]
    pub demo: bool,
    /// Scenario file (YAML): `from:`, `faults:` and a timeline of `changes:` (see docs/commands.md, `cvo sim serve`).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub port: u16,
    /// Where to write the kubeconfig for the server (atomically, mode 0600).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: PathBuf,
    /// Append one JSON line per request: time, method, path, verb, status, duration_ms, fault.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Latency added to every request (milliseconds).
    #[arg(long, value_name = "MS")]
    pub latency_ms: Option<u64>,
    /// Extra random latency, uniform in 0..=MS.
    #[arg(long, value_name = "MS")]
    pub jitter_ms: Option<u64>,
    /// Error answers: VERB=CODE:RATE (verb get|list|watch|create|update|patch|delete|*, code
    /// 429|500|503|504, rate 0..1); repeatable, the first rule that fires wins.
    #[arg(long = "error", value_name = "VERB=CODE:RATE")]
    pub errors: Vec<ErrorRule>,
    /// How long an injected timeout (504) hangs first (milliseconds; default 3000).
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Close every watch after N events.
    #[arg(long, value_name = "N")]
    pub watch_drop_after_events: Option<u64>,
    /// Close every watch after S seconds.
    #[arg(long, value_name = "S")]
    pub watch_drop_after_secs: Option<f64>,
    /// The next N watches get a 410 Expired ERROR event.
    #[arg(long, value_name = "N")]
    pub gone_next: Option<u32>,
    /// Then each watch gets one with this probability (0..1).
    #[arg(long, value_name = "RATE")]
    pub gone_rate: Option<f64>,
    /// The next N updates/patches get 409 Conflict.
    #[arg(long, value_name = "N")]
    pub conflict_next: Option<u32>,
    /// Seed of the fault RNG (default 0).
    #[arg(long, value_name = "N")]
    pub fault_seed: Option<u64>,
    /// Watch events kept for watches to resume from; a watch from an older version gets
    /// 410 Expired and relists (as after an etcd compaction).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_EVENT_WINDOW)]
    pub event_window: usize,
    /// Serve this many independent simulated clusters (1..=1000) from the one process, each
    /// with its own store, port and token, loaded from the same source; the kubeconfig then
    /// has one context per cluster, `cvo-sim-0` ... `cvo-sim-<N-1>` (the first current). With
    /// `--port P`, cluster i listens on P+i. For `cvo fleet` and its benchmark.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub clusters: u16,
}

/// Most clusters `--clusters` serves.
pub const MAX_CLUSTERS: u16 = 1000;

/// Default of `--event-window`.
pub const DEFAULT_EVENT_WINDOW: usize = 1000;

impl ServeArgs {
    /// Checks `--clusters` (1 to [`MAX_CLUSTERS`], and not with `--alerts`).
    ///
    /// # Errors
    /// One line naming the flag.
    pub fn check_clusters(&self) -> Result<(), String> {
        if self.clusters == 0 || self.clusters > MAX_CLUSTERS {
            return Err(format!("--clusters {}: give 1 to {MAX_CLUSTERS}", self.clusters));
        }
        if self.clusters > 1 && self.alerts.is_some() {
            return Err("--alerts serves one cluster's alerts; it cannot be used with --clusters".into());
        }
        Ok(())
    }

    /// `f` with the fault flags given on the command line applied over it.
    pub fn apply_faults(&self, mut f: Faults) -> Faults {
        macro_rules! set {
            ($flag:ident => $($field:ident).+) => {
                if let Some(v) = self.$flag.clone() {
                    f.$($field).+ = v;
                }
            };
        }
        set!(latency_ms => latency_ms);
        set!(jitter_ms => jitter_ms);
        set!(timeout_ms => timeout_ms);
        set!(gone_next => watch.gone_next);
        set!(gone_rate => watch.gone_rate);
        set!(conflict_next => conflict_next);
        set!(fault_seed => seed);
        if self.watch_drop_after_events.is_some() {
            f.watch.drop_after_events = self.watch_drop_after_events;
        }
        if self.watch_drop_after_secs.is_some() {
            f.watch.drop_after_secs = self.watch_drop_after_secs;
        }
        if !self.errors.is_empty() {
            f.errors.clone_from(&self.errors);
        }
        f
    }
}

/// A scenario file: objects to serve, faults, and a timeline of changes.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Snapshot files or directories (relative paths are taken from the scenario's directory).
    #[serde(default)]
    pub from: Vec<PathBuf>,
    /// Faults in force from the start.
    #[serde(default)]
    pub faults: Faults,
    /// Changes, each `after` seconds after the server is ready.
    #[serde(default)]
    pub changes: Vec<Change>,
}

/// One scripted change: exactly one of `patch`, `create`, `delete`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    /// Seconds after the server is ready.
    pub after: f64,
    /// JSON merge patch of the object named by `apiVersion`, `kind`, `name` (or
    /// `metadata.name`) and `namespace`; `status` is patched too.
    #[serde(default)]
    pub patch: Option<Value>,
    /// An object to create (or replace), status included.
    #[serde(default)]
    pub create: Option<Value>,
    /// The object to delete: `apiVersion`, `kind`, `name`, `namespace`.
    #[serde(default)]
    pub delete: Option<Value>,
}

/// Reads and checks a scenario file; relative `from:` paths are resolved against its
/// directory.
///
/// # Errors
/// A one-line error naming the file and the field (`changes[1].patch: ...`).
pub fn load_scenario(path: &Path) -> anyhow::Result<Scenario> {
    let text = std::fs::read_to_string(path).with_context(|| format!("scenario {}", path.display()))?;
    let de = serde_norway::Deserializer::from_str(&text);
    let mut s: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let at = e.path().to_string();
        let msg = e.into_inner().to_string();
        let msg = msg.split_whitespace().collect::<Vec<_>>().join(" ");
        if at == "." {
            anyhow::anyhow!("scenario {}: {msg}", path.display())
        } else {
            anyhow::anyhow!("scenario {}: {at}: {msg}", path.display())
        }
    })?;
    let fail = |what: String| anyhow::anyhow!("scenario {}: {what}", path.display());
    s.faults.validate().map_err(|e| fail(format!("faults.{e}")))?;
    for (i, c) in s.changes.iter().enumerate() {
        check_change(c).map_err(|e| fail(format!("changes[{i}].{e}")))?;
    }
    let base = path.parent().unwrap_or(Path::new("."));
    for p in &mut s.from {
        if p.is_relative() {
            *p = base.join(&*p);
        }
    }
    Ok(s)
}

/// The object a change names: `(apiVersion, kind, namespace, name)`.
fn target(v: &Value) -> Result<(String, String, String, String), String> {
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
    let meta = |k: &str| v["metadata"][k].as_str().unwrap_or_default().to_owned();
    let (api_version, kind) = (s("apiVersion"), s("kind"));
    if api_version.is_empty() || kind.is_empty() {
        return Err("apiVersion and kind are required".into());
    }
    if super::store::builtin_types()
        .iter()
        .all(|t| t.api_version() != api_version || t.kind != kind)
    {
        return Err(format!(
            "kind {kind} ({api_version}) is not served by the simulator"
        ));
    }
    let name = Some(s("name"))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| meta("name"));
    if name.is_empty() {
        return Err("name (or metadata.name) is required".into());
    }
    let ns = Some(s("namespace"))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| meta("namespace"));
    Ok((api_version, kind, ns, name))
}

fn check_change(c: &Change) -> Result<(), String> {
    if !(c.after.is_finite() && c.after >= 0.0) {
        return Err(format!("after {}: must be a number of seconds >= 0", c.after));
    }
    match (&c.patch, &c.create, &c.delete) {
        (Some(v), None, None) => target(v).map(|_| ()).map_err(|e| format!("patch: {e}")),
        (None, Some(v), None) => target(v).map(|_| ()).map_err(|e| format!("create: {e}")),
        (None, None, Some(v)) => target(v).map(|_| ()).map_err(|e| format!("delete: {e}")),
        _ => Err("give exactly one of patch, create, delete".into()),
    }
}

/// Applies one change to the simulator; a description for the log.
///
/// # Errors
/// When the object to patch or delete does not exist, or the store refuses the write.
pub fn apply_change(sim: &Simulator, c: &Change) -> anyhow::Result<String> {
    if let Some(p) = &c.patch {
        let (api_version, kind, ns, name) = target(p).map_err(anyhow::Error::msg)?;
        let t = sim
            .find_kind(&api_version, &kind)
            .ok_or_else(|| anyhow::anyhow!("kind {kind} not served"))?;
        let mut obj = sim
            .get(&t.group, &t.plural, &ns, &name)
            .ok_or_else(|| anyhow::anyhow!("patch {kind} {name}: not found"))?;
        let mut patch = p.clone();
        if let Some(o) = patch.as_object_mut() {
            for k in ["apiVersion", "kind", "name", "namespace"] {
                o.remove(k);
            }
        }
        json_patch::merge(&mut obj, &patch);
        sim.insert(obj)
            .map_err(|e| anyhow::anyhow!("patch {kind} {name}: {}", e.message))?;
        return Ok(format!("patched {kind} {name}"));
    }
    if let Some(o) = &c.create {
        let (_, kind, _, name) = target(o).map_err(anyhow::Error::msg)?;
        let mut o = o.clone();
        o["metadata"]["name"] = json!(name);
        sim.insert(o)
            .map_err(|e| anyhow::anyhow!("create {kind} {name}: {}", e.message))?;
        return Ok(format!("created {kind} {name}"));
    }
    if let Some(d) = &c.delete {
        let (api_version, kind, ns, name) = target(d).map_err(anyhow::Error::msg)?;
        let r = json!({"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": if ns.is_empty() { Value::Null } else { json!(ns) }}});
        sim.remove(&r)
            .map_err(|e| anyhow::anyhow!("delete {kind} {name}: {}", e.message))?;
        return Ok(format!("deleted {kind} {name}"));
    }
    anyhow::bail!("empty change")
}

/// The kubeconfig for a server at `url` with CA certificate `ca_pem` and bearer `token`:
/// cluster, user and context all named `cvo-sim`, the context current.
pub fn kubeconfig(url: &str, ca_pem: &str, token: &str) -> Kubeconfig {
    use base64::Engine as _;
    use kube::config::{AuthInfo, Cluster, Context, NamedAuthInfo, NamedCluster, NamedContext};
    let name = "cvo-sim".to_owned();
    Kubeconfig {
        api_version: Some("v1".into()),
        kind: Some("Config".into()),
        clusters: vec![NamedCluster {
            name: name.clone(),
            cluster: Some(Cluster {
                server: Some(url.into()),
                certificate_authority_data: Some(base64::engine::general_purpose::STANDARD.encode(ca_pem)),
                ..Cluster::default()
            }),
            ..NamedCluster::default()
        }],
        auth_infos: vec![NamedAuthInfo {
            name: name.clone(),
            auth_info: Some(AuthInfo {
                token: Some(token.to_owned().into()),
                ..AuthInfo::default()
            }),
            ..NamedAuthInfo::default()
        }],
        contexts: vec![NamedContext {
            name: name.clone(),
            context: Some(Context {
                cluster: name.clone(),
                user: Some(name.clone()),
                ..Context::default()
            }),
            ..NamedContext::default()
        }],
        current_context: Some(name),
        ..Kubeconfig::default()
    }
}

/// The kubeconfig for several servers (`--clusters N`): `servers[i]` is `(URL, token)` of
/// cluster i, named `cvo-sim-<i>` (cluster, user and context); all share the CA `ca_pem`; the
/// first context is current.
pub fn fleet_kubeconfig(servers: &[(String, String)], ca_pem: &str) -> Kubeconfig {
    let mut out = Kubeconfig {
        api_version: Some("v1".into()),
        kind: Some("Config".into()),
        ..Kubeconfig::default()
    };
    for (i, (url, token)) in servers.iter().enumerate() {
        let mut one = kubeconfig(url, ca_pem, token);
        let name = format!("cvo-sim-{i}");
        for c in &mut one.clusters {
            c.name.clone_from(&name);
        }
        for a in &mut one.auth_infos {
            a.name.clone_from(&name);
        }
        for c in &mut one.contexts {
            c.name.clone_from(&name);
            if let Some(ctx) = c.context.as_mut() {
                ctx.cluster.clone_from(&name);
                ctx.user = Some(name.clone());
            }
        }
        out.clusters.append(&mut one.clusters);
        out.auth_infos.append(&mut one.auth_infos);
        out.contexts.append(&mut one.contexts);
        if i == 0 {
            out.current_context = Some(name);
        }
    }
    out
}

/// Writes `text` to `path` atomically: a temp file beside it (mode 0600, as `tempfile` creates
/// it), synced, then renamed over `path`.
fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let write = || -> std::io::Result<()> {
        let mut f = tempfile::NamedTempFile::new_in(dir)?;
        f.write_all(text.as_bytes())?;
        f.as_file().sync_all()?;
        f.persist(path).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|e| anyhow::anyhow!("--kubeconfig-out {}: {e}", path.display()))
}

fn unauthorized() -> Response<ResponseBody> {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401,
    });
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed_unsync());
    *r.status_mut() = http::StatusCode::UNAUTHORIZED;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

/// The audit log file writer, shared by the simulator's sink and the 401 path.
type AuditFile = Arc<Mutex<std::fs::File>>;

fn write_audit(file: Option<&AuditFile>, e: &AuditEntry) {
    if let Some(f) = file {
        let mut f = f.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = writeln!(f, "{}", audit_json(e));
    }
}

/// Serves one request: token check, then the simulator.
async fn handle(
    req: Request<Incoming>,
    mut sim: Simulator,
    expected: Arc<str>,
    audit: Option<AuditFile>,
) -> Result<Response<ResponseBody>, Infallible> {
    let start = (chrono::Utc::now(), std::time::Instant::now());
    let (parts, body) = req.into_parts();
    let ok = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .is_some_and(|t| t.trim() == &*expected);
    if !ok {
        write_audit(
            audit.as_ref(),
            &AuditEntry {
                method: parts.method.to_string(),
                path: parts.uri.path().to_owned(),
                query: parts.uri.query().unwrap_or_default().to_owned(),
                verb: "unknown",
                dry_run: false,
                code: 401,
                time: start.0,
                duration: start.1.elapsed(),
                fault: None,
            },
        );
        return Ok(unauthorized());
    }
    let bytes = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            tracing::debug!("reading a request body: {e}");
            Bytes::new()
        }
    };
    let req = Request::from_parts(parts, kube::client::Body::from(bytes.to_vec()));
    sim.call(req).await
}

/// A self-signed certificate for 127.0.0.1 and localhost: (certificate PEM, TLS config).
fn tls_config() -> anyhow::Result<(String, rustls::ServerConfig)> {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .context("generating the certificate")?;
    let cert = ck.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .context("TLS versions")?
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .context("TLS certificate")?;
    Ok((ck.cert.pem(), config))
}

/// A random 43-character bearer token.
fn random_token() -> String {
    use rand::{Rng, distributions::Alphanumeric};
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(43)
        .map(char::from)
        .collect()
}

/// Runs `cvo sim serve` until SIGINT/SIGTERM. Must be called inside a tokio runtime.
///
/// # Errors
/// A one-line error when the scenario, the snapshot or the fault flags are invalid, the port
/// cannot be bound, or the kubeconfig or audit log cannot be written.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    if let Err(e) = args.check_clusters() {
        anyhow::bail!(e);
    }
    let scenario = match &args.scenario {
        Some(p) => load_scenario(p)?,
        None => Scenario::default(),
    };
    let from = if args.from.is_empty() {
        scenario.from.clone()
    } else {
        args.from.clone()
    };
    let audit: Option<AuditFile> = match &args.audit_log {
        Some(p) => {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| anyhow::anyhow!("--audit-log {}: {e}", p.display()))?;
            Some(Arc::new(Mutex::new(f)))
        }
        None => None,
    };
    let mut sims = Vec::with_capacity(usize::from(args.clusters));
    for _ in 0..args.clusters {
        sims.push(one_simulator(&args, &from, &scenario, audit.as_ref())?);
    }
    let (ca_pem, tls) = tls_config()?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let mut listeners = Vec::with_capacity(sims.len());
    for i in 0..args.clusters {
        let port = if args.port == 0 {
            0
        } else {
            args.port.checked_add(i).ok_or_else(|| {
                anyhow::anyhow!(
                    "--port {} --clusters {}: ports beyond 65535",
                    args.port,
                    args.clusters
                )
            })?
        };
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| anyhow::anyhow!("--port {port}: {e}"))?;
        listeners.push(listener);
    }
    let mut servers = Vec::with_capacity(sims.len());
    for l in &listeners {
        let port = l.local_addr()?.port();
        servers.push((format!("https://127.0.0.1:{port}"), random_token()));
    }
    let url = servers[0].0.clone();
    let token: Arc<str> = Arc::from(servers[0].1.as_str());
    let sim = sims[0].clone();
    let alerts_host = match &args.alerts {
        Some(p) => {
            let body = std::fs::read(p).map_err(|e| anyhow::anyhow!("--alerts {}: {e}", p.display()))?;
            Some(
                super::alerts_endpoint::start(&sim, acceptor.clone(), token.clone(), Bytes::from(body))
                    .await?,
            )
        }
        None => None,
    };
    let kc = if args.clusters == 1 {
        serde_norway::to_string(&kubeconfig(&url, &ca_pem, &token))?
    } else {
        serde_norway::to_string(&fleet_kubeconfig(&servers, &ca_pem))?
    };
    write_atomic(&args.kubeconfig_out, &kc)?;

    let started = tokio::time::Instant::now();
    let changes = scenario.changes.clone();
    let timeline_sims = sims.clone();
    tokio::spawn(async move {
        for (i, c) in changes.iter().enumerate() {
            tokio::time::sleep_until(started + Duration::from_secs_f64(c.after)).await;
            let at = started.elapsed().as_secs_f64();
            // Every cluster gets the change; the report names the first one's outcome.
            let mut outcome = None;
            for s in &timeline_sims {
                let r = apply_change(s, c);
                outcome.get_or_insert(r);
            }
            match outcome {
                Some(Ok(what)) => eprintln!(
                    "{}",
                    crate::l10n::trf!(
                        "sim-change",
                        "cvo sim: +{at}s change {i}: {what}",
                        at = format!("{at:.2}"),
                        i = i.to_string(),
                        what = what.to_string()
                    )
                ),
                Some(Err(e)) => eprintln!(
                    "{}",
                    crate::l10n::trf!(
                        "sim-change-failed",
                        "cvo sim: +{at}s change {i} failed: {e}",
                        at = format!("{at:.2}"),
                        i = i.to_string(),
                        e = format!("{e:#}")
                    )
                ),
                None => {}
            }
        }
    });

    // The ready lines in one write: a reader that stops after the first line (a test, `| head
    // -1`) finds the rest already in the pipe instead of closing it under a second write. A
    // closed stdout does not stop the server.
    let mut ready = if args.clusters == 1 {
        format!(
            "cvo sim serving {url} ({} objects); kubeconfig: {}\n",
            sim.object_count(),
            args.kubeconfig_out.display()
        )
    } else {
        format!(
            "cvo sim serving {url} and {} more clusters ({} objects each; contexts cvo-sim-0 to cvo-sim-{}); kubeconfig: {}\n",
            args.clusters - 1,
            sim.object_count(),
            args.clusters - 1,
            args.kubeconfig_out.display()
        )
    };
    if let Some(host) = &alerts_host {
        ready += &format!(
            "cvo sim serving alerts at https://{host}/api/v1/alerts (Route openshift-monitoring/thanos-querier)\n"
        );
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(ready.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other?,
    }
    drop(out);

    let mut loops = Vec::with_capacity(sims.len());
    for ((listener, sim), (_, token)) in listeners.into_iter().zip(sims).zip(servers) {
        loops.push(tokio::spawn(accept_loop(
            listener,
            acceptor.clone(),
            sim,
            Arc::from(token.as_str()),
            audit.clone(),
        )));
    }
    crate::signals::stop_requested().await;
    for l in loops {
        l.abort();
    }
    eprintln!("{}", crate::l10n::tr!("sim-stopped", "cvo sim: stopped"));
    Ok(())
}

/// One simulated cluster of `cvo sim serve`: its objects, faults, event window and audit sink.
fn one_simulator(
    args: &ServeArgs,
    from: &[PathBuf],
    scenario: &Scenario,
    audit: Option<&AuditFile>,
) -> anyhow::Result<Simulator> {
    let sim = if args.demo {
        super::demo_cluster::demo_cluster()?
    } else if from.is_empty() {
        Simulator::new()
    } else {
        Simulator::from_snapshot(from)?
    };
    sim.add_system_namespaces()?;
    // Requests go to the --audit-log file only: no in-memory log growing per request.
    sim.keep_audit(false);
    sim.set_event_capacity(args.event_window);
    let faults = args.apply_faults(scenario.faults.clone());
    sim.set_faults(faults)
        .map_err(|e| anyhow::anyhow!("faults: {e}"))?;
    if let Some(a) = audit.cloned() {
        sim.on_audit(move |e| write_audit(Some(&a), e));
    }
    Ok(sim)
}

/// Accepts connections on `listener` for `sim` (TLS, then HTTP/1.1 with the token check)
/// until the task is aborted.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    sim: Simulator,
    token: Arc<str>,
    audit: Option<AuditFile>,
) {
    loop {
        let (tcp, _) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let (acceptor, sim, token, audit) = (acceptor.clone(), sim.clone(), token.clone(), audit.clone());
        tokio::spawn(async move {
            let tls = match acceptor.accept(tcp).await {
                Ok(t) => t,
                Err(e) => {
                    tracing::debug!("TLS handshake: {e}");
                    return;
                }
            };
            let svc =
                hyper::service::service_fn(move |req| handle(req, sim.clone(), token.clone(), audit.clone()));
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), svc)
                .await
            {
                tracing::debug!("connection: {e}");
            }
        });
    }
}
