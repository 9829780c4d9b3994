//! The flags of each command, as clap parses them. `src/main.rs` holds the command tree and
//! dispatches to [`super::run`]; every command that reaches a cluster takes the same
//! [`KubeconfigArgs`] group (through [`SourceArgs`] where `--from` files may stand in for it).

/// The flags of `cvo sim serve` (defined beside the server they configure).
#[cfg(feature = "sim")]
pub use crate::sim::serve::ServeArgs;

use std::path::PathBuf;

use clap::{Args, ValueEnum};

pub use super::source::{KubeconfigArgs, SourceArgs};
/// The flags of `cvo upgrade` and its subcommands (defined beside the command).
pub use super::upgrade::{ChannelArgs, RecommendArgs, UpgradeArgs, UpgradeCommand};

/// Output format of one-shot commands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    // (No doc comments on the variants: clap would print them in `--help`.)
    Text,
    Json,
}

/// Flags of `cvo reconcile`.
#[derive(Args, Debug)]
#[command(after_help = RECONCILE_EXIT_CODES)]
pub struct ReconcileArgs {
    /// The payload directory (`manifests/` + `release-manifests/`), or a release image pull
    /// spec to pull from its registry.
    #[arg(long, value_name = "DIR|PULLSPEC")]
    pub payload: PathBuf,
    /// Pull spec of the payload's release image (default: `file://<canonical DIR>`, a pseudo
    /// pull spec naming the directory).
    #[arg(long, value_name = "PULLSPEC")]
    pub release_image: Option<String>,
    /// Watch-only: print the drift like `kubectl diff` and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Stop after exactly one whole apply pass (the default).
    #[arg(long, conflicts_with = "until_complete")]
    pub once: bool,
    /// Run until the release is Completed (exit 0); Failing exits 1.
    #[arg(long)]
    pub until_complete: bool,
    /// Give up after this many seconds (exit 3; default 120, with --until-complete 7200).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub cluster: KubeconfigArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub updates: UpdateServiceArgs,
    // (`-o` has no help line here, as it never had.)
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// Update-service flags of `cvo reconcile`: without `--update-service` or `--fetch-updates`
/// the engine leaves `availableUpdates`, `conditionalUpdates` and `RetrievedUpdates` alone.
#[derive(Args, Debug, Default, Clone)]
pub struct UpdateServiceArgs {
    /// Ask this update service for available updates (replaces `spec.upstream`, like upstream's
    /// `--update-service`).
    #[arg(long, value_name = "URL")]
    pub update_service: Option<String>,
    /// Ask `spec.upstream` (default https://api.openshift.com/api/upgrades_info/v1/graph) for
    /// available updates.
    #[arg(long)]
    pub fetch_updates: bool,
    /// Prometheus-compatible query API for PromQL update risks (e.g. the thanos-querier route).
    #[arg(long, value_name = "URL")]
    pub prometheus_url: Option<String>,
    /// File holding the bearer token for --prometheus-url.
    #[arg(long, value_name = "FILE", requires = "prometheus_url")]
    pub prometheus_token_file: Option<PathBuf>,
    /// PEM CA bundle trusted for --prometheus-url (added to the system roots).
    #[arg(long, value_name = "FILE", requires = "prometheus_url")]
    pub prometheus_ca_file: Option<PathBuf>,
    /// Connect to the ClusterIP of this Service (NAMESPACE/NAME, read before each connection)
    /// instead of resolving --prometheus-url's host, which still names the server for TLS: a
    /// host-network pod cannot resolve cluster service names (upstream's default,
    /// openshift-monitoring/thanos-querier).
    #[arg(long, value_name = "NAMESPACE/NAME", requires = "prometheus_url")]
    pub prometheus_service: Option<String>,
}

impl UpdateServiceArgs {
    /// The engine's update-service options, `None` when neither `--update-service` nor
    /// `--fetch-updates` is given; `interval` is the reconcile interval (the polling
    /// interval); `kube` the cluster, for `--prometheus-service`.
    ///
    /// # Errors
    /// An unreadable token or CA file, a bad Prometheus URL or `--prometheus-service` (one
    /// line naming it).
    pub fn config(
        &self,
        interval: std::time::Duration,
        kube: Option<&kube::Client>,
    ) -> anyhow::Result<Option<crate::reconcile::UpdatesConfig>> {
        use crate::reconcile::updates::{client, risks};
        if self.update_service.is_none() && !self.fetch_updates {
            return Ok(None);
        }
        let read = |p: &PathBuf, flag: &str| {
            std::fs::read(p).map_err(|e| anyhow::anyhow!("{flag} {}: {e}", p.display()))
        };
        let promql: std::sync::Arc<dyn risks::PromQlEvaluator> = match &self.prometheus_url {
            Some(url) => {
                // Read now to fail early, and again before every query (a rotated token).
                let token = match &self.prometheus_token_file {
                    Some(p) => {
                        read(p, "--prometheus-token-file")?;
                        client::BearerToken::File(p.clone())
                    }
                    None => client::BearerToken::None,
                };
                let egress = client::Egress {
                    proxy: None,
                    ca_bundle: match &self.prometheus_ca_file {
                        Some(p) => Some(read(p, "--prometheus-ca-file")?),
                        None => None,
                    },
                };
                let service = match &self.prometheus_service {
                    Some(s) => {
                        let (namespace, name) = s
                            .split_once('/')
                            .filter(|(ns, n)| !ns.is_empty() && !n.is_empty() && !n.contains('/'))
                            .ok_or_else(|| {
                                super::UsageError(format!(
                                    "--prometheus-service {s:?}: expected NAMESPACE/NAME"
                                ))
                            })?;
                        let kube = kube.ok_or_else(|| {
                            anyhow::anyhow!("--prometheus-service: this command has no cluster client")
                        })?;
                        Some(client::ServiceAddress {
                            kube: kube.clone(),
                            namespace: namespace.to_owned(),
                            name: name.to_owned(),
                        })
                    }
                    None => None,
                };
                let timeout = risks::PromQlTimings::upstream().timeout;
                std::sync::Arc::new(
                    client::PrometheusApi::with(url, token, &egress, timeout, service)
                        .map_err(|e| anyhow::anyhow!(e))?,
                )
            }
            None => std::sync::Arc::new(risks::NoPrometheus),
        };
        let mut cfg = crate::reconcile::UpdatesConfig::new(promql, interval);
        cfg.upstream_override = self.update_service.clone();
        Ok(Some(cfg))
    }
}

/// The exit-code table of `cvo reconcile --help` (the values of
/// [`crate::cli::reconcile::exit`]).
const RECONCILE_EXIT_CODES: &str = "\
Exit codes:
  0    done: the pass finished without failure, or the release is Completed
  1    failing: the pass failed or the ClusterVersion is Failing; or an error before the run
  2    usage: bad flags or flag values
  3    timeout: --timeout passed first (stderr says what it was waiting for)
  4    the API server cannot be reached (at start, or for 30 s during the run)
  5    the payload cannot be retrieved, loaded, verified or accepted
  6    another cvo holds the CVO Lease (stderr says who, and until when)
  130  stopped by SIGINT, 143 by SIGTERM: the Lease is released and the summary printed

While it waits, `cvo: waiting for ...` lines on stderr say for what.";

/// Flags of `cvo payload inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// A release image root (`manifests/` + `release-manifests/`), a `release-manifests/`
    /// directory, a plain manifest directory, or a release image pull spec.
    #[arg(value_name = "DIR|PULLSPEC")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Cluster profile.
    #[arg(long, default_value = "self-managed-high-availability")]
    pub profile: String,
    /// `spec.capabilities.baselineCapabilitySet` (None, v4.11 ... v4.18, vCurrent).
    #[arg(long, value_name = "SET")]
    pub capabilities_baseline: Option<String>,
    /// `spec.capabilities.additionalEnabledCapabilities`.
    #[arg(long, value_name = "CAP,...", value_delimiter = ',')]
    pub capabilities_additional: Vec<String>,
    /// Cluster feature set (Default, TechPreviewNoUpgrade, DevPreviewNoUpgrade, CustomNoUpgrade, OKD).
    #[arg(long, value_name = "SET", default_value = "")]
    pub feature_set: String,
    /// Enabled feature gates.
    #[arg(long, value_name = "GATE,...", value_delimiter = ',')]
    pub feature_gates: Vec<String>,
    /// `EXCLUDE_MANIFESTS` identifier.
    #[arg(long, value_name = "ID", default_value = "")]
    pub exclude: String,
    /// Release image pull spec rendered into the CVO's own manifests.
    #[arg(long, value_name = "PULLSPEC", default_value = "")]
    pub release_image: String,
    /// Which task graph to show.
    #[arg(long, value_enum, default_value_t = Mode::Updating)]
    pub mode: Mode,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// Flags of `cvo payload verify`.
#[derive(Args, Debug)]
#[command(
    after_help = "Exit codes: 0 verified, 1 not verified (the reasons name every store \
and key tried) or another failure, 2 usage error."
)]
pub struct VerifyArgs {
    /// The release digest (`sha256:<hex>`) or a pull spec by digest (`<repo>@sha256:<hex>`).
    #[arg(value_name = "DIGEST|PULLSPEC@DIGEST")]
    pub release: String,
    /// A public keyring file (armored or binary); every keyring must have signed. Repeatable;
    /// with --from-cluster, replaces the cluster's keys.
    #[arg(long = "keys", value_name = "FILE")]
    pub keys: Vec<PathBuf>,
    /// A signature store (`https://`, `http://` or `file://`), read as
    /// `<URL>/sha256=<hex>/signature-<N>`. Repeatable; with --from-cluster, replaces the
    /// cluster's stores.
    #[arg(long = "store", value_name = "URL")]
    pub stores: Vec<String>,
    /// Use the cluster's configuration: the openshift-config-managed/release-verification
    /// ConfigMap, spec.signatureStores of the ClusterVersion and the signature ConfigMaps.
    #[arg(long)]
    pub from_cluster: bool,
    /// Give up after this many seconds (default 120, half of upstream's payload retrieval time).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub cluster: KubeconfigArgs,
}

/// How the payload is applied (`--mode` of `cvo payload inspect`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    // Upstream's payload states (`pkg/payload/payload.go` in openshift/cluster-version-operator);
    // no doc comments on the variants: clap would print them in `--help`.
    Updating,
    Reconciling,
    Initializing,
}

/// What an assessment is made from: the cluster state, optional alerts, and "now".
#[derive(Args, Debug)]
pub struct AssessArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Firing alerts: a Prometheus `/api/v1/alerts` JSON response.
    #[arg(long, value_name = "FILE")]
    pub alerts: Option<PathBuf>,
    /// Evaluate durations at this instant (RFC 3339). Default: the wall clock for a live
    /// cluster, the snapshot's own time for `--from`.
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
}

/// Flags of `cvo status`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    #[command(flatten)]
    pub view: AssessArgs,
    /// Show more detail for a section.
    #[arg(long, value_enum)]
    pub details: Option<super::status::Details>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = StatusOutput::Text)]
    pub output: StatusOutput,
}

/// Output format of `cvo status`: [`Output`] and YAML (the JSON document as YAML).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatusOutput {
    // (No doc comments on the variants: clap would print them in `--help`.)
    Text,
    Json,
    Yaml,
}

/// Flags of `cvo get`.
#[derive(Args, Debug)]
pub struct GetArgs {
    /// The kind: clusterversion (cv), clusteroperators (co), machineconfigpools (mcp) or nodes
    /// (no).
    pub kind: String,
    /// Only the object of this name.
    pub name: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format (default: the table `oc get` prints): wide, json, yaml, name,
    /// jsonpath=TEMPLATE, jsonpath-file=FILE, custom-columns=HEADER:EXPR[,...],
    /// custom-columns-file=FILE.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FORMAT",
        value_parser = super::get_output::parse_output
    )]
    pub output: Option<super::get::GetOutput>,
    /// Only the objects whose labels match this selector (`k=v`, `k!=v`, `k in (a,b)`,
    /// `k notin (a)`, `k`, `!k`, comma-separated).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR", value_parser = parse_selector_flag)]
    pub selector: Option<kube::core::Selector>,
    /// After the objects, print each change as it happens (a live cluster only); ends with
    /// Ctrl-C, a closed output, or after --request-timeout.
    #[arg(short = 'w', long = "watch")]
    pub watch: bool,
}

fn parse_selector_flag(s: &str) -> Result<kube::core::Selector, String> {
    super::get_output::parse_selector(s)
}

/// Output of `cvo fleet -o`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum FleetOutput {
    // (No doc comments on the variants: clap would print them in `--help`.)
    Table,
    Json,
}

/// Sort key of `cvo fleet --sort`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum FleetSort {
    // (No doc comments on the variants: clap would print them in `--help`.)
    Name,
    Version,
    State,
}

/// Flags of `cvo fleet`.
#[derive(Args, Debug)]
#[command(after_help = "\
Without -o in a terminal: the live fleet view (Enter opens a cluster's dashboard, Esc or q
comes back). With -o, or when stdout is not a terminal: the table once every cluster has
answered or --timeout has passed. Exit 0 whatever the clusters answer; 1 when the kubeconfig
cannot be read; 2 for bad flags (an unknown --contexts name, a bad --contexts-regex).")]
pub struct FleetArgs {
    /// Only these contexts, in this order (comma-separated; default: every context of the
    /// kubeconfig).
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        conflicts_with = "contexts_regex"
    )]
    pub contexts: Vec<String>,
    /// Only the contexts whose name this regular expression matches (anywhere in the name).
    #[arg(long, value_name = "RE")]
    pub contexts_regex: Option<String>,
    /// Print the table (or its JSON) instead of the live view.
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<FleetOutput>,
    /// After the first table, print it again at every change (JSON: one document per line);
    /// ends with Ctrl-C or a closed output.
    #[arg(short = 'w', long = "watch", requires = "output")]
    pub watch: bool,
    /// How long the table waits for every cluster's first answer, in seconds (default 10); a
    /// cluster still silent then is a row marked unreachable.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Row order of the table (the view starts with it too).
    #[arg(long, value_enum, default_value_t = FleetSort::Name)]
    pub sort: FleetSort,
    /// A dashboard opened from the view refuses every write (as `cvo --read-only`).
    #[arg(long)]
    pub read_only: bool,
    #[command(flatten)]
    pub cluster: KubeconfigArgs,
}

/// Flags of `cvo tui`.
#[cfg(feature = "tui")]
#[derive(Args, Debug)]
pub struct TuiArgs {
    #[command(flatten)]
    pub view: AssessArgs,
    /// Refuse every write (update requests, channel changes, the switch to active-apply), with
    /// the reason on screen.
    #[arg(long)]
    pub read_only: bool,
    /// The payload of the cluster's release for the embedded engine (a directory with
    /// `manifests/` + `release-manifests/`); default: pull the release image the
    /// ClusterVersion names from its registry.
    #[arg(long, value_name = "DIR")]
    pub payload: Option<PathBuf>,
    /// No embedded engine on a live cluster: cluster state only (no task graph, drift or
    /// active-apply).
    #[arg(long)]
    pub no_engine: bool,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Flags of `cvo demo`.
#[cfg(feature = "sim")]
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// No dashboard: print one line per engine event and the sync progress (with --snapshot:
    /// print the static cluster's status and exit).
    #[arg(long)]
    pub headless: bool,
    /// The static demo instead: a snapshot of a cluster stuck mid-update (assets/demo).
    #[arg(long, conflicts_with_all = ["scenario", "speed", "until_complete", "timeout"])]
    pub snapshot: bool,
    /// Scenario file for the simulated operators (degrade, stall, crash-loop, speed, seed).
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Time speed: every delay is divided by it (default: the scenario's, else 10).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub speed: Option<f64>,
    /// Headless: exit 0 when the update is Completed (printing the history), 1 when it is
    /// failing, 2 at the timeout.
    #[arg(long)]
    pub until_complete: bool,
    /// Stop after this many seconds (default with --until-complete: 60 + 900/speed).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub timeout: Option<f64>,
    /// Request the update to 4.16.4 by itself shortly after start (as before; headless runs
    /// need it to have an update to watch). Without it the update starts when you pick one.
    #[arg(long, conflicts_with = "snapshot")]
    pub auto: bool,
    /// Refuse every write from the dashboard (update requests, channel changes, the switch
    /// to active-apply), with the reason on screen.
    #[arg(long)]
    pub read_only: bool,
    /// Local registry for the demo's releases: when it answers /v2/ (within 0.5 s) they are
    /// pushed there, signed with a demo key, and the engine pulls and verifies them; otherwise
    /// the embedded payloads are used. `none`: embedded, no probe.
    #[arg(
        long,
        value_name = "HOST:PORT",
        env = "CVO_DEMO_REGISTRY",
        default_value = "127.0.0.1:5000",
        conflicts_with = "snapshot"
    )]
    pub registry: String,
}

#[cfg(feature = "sim")]
impl DemoArgs {
    /// Whether the demo runs without the dashboard (`--headless`, or a build without `tui`).
    pub fn is_headless(&self) -> bool {
        self.headless || !cfg!(feature = "tui")
    }
}

/// Where release images come from: credentials, plain-HTTP registries, the cache.
#[derive(Args, Debug, Clone, Default)]
pub struct RegistryArgs {
    /// Registry credentials in the docker config format (default: `REGISTRY_AUTH_FILE`, else
    /// the cluster's `openshift-config/pull-secret` where a cluster is used).
    #[arg(long, value_name = "FILE", env = "REGISTRY_AUTH_FILE")]
    pub registry_auth: Option<PathBuf>,
    /// Reach this registry (`host` or `host:port`) over plain HTTP (repeatable; loopback
    /// registries always may).
    #[arg(long, value_name = "HOST")]
    pub insecure_registry: Vec<String>,
    /// Cache of extracted releases (default `$XDG_CACHE_HOME/cvo/releases`).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// Flags of `cvo payload pull`.
#[derive(Args, Debug)]
pub struct PullArgs {
    /// The release image pull spec (`registry/repo:tag` or `registry/repo@sha256:...`).
    pub pullspec: String,
    /// Where to put `manifests/` and `release-manifests/` (created; must be empty if it exists).
    pub dir: PathBuf,
    /// Refuse the image unless its `release-metadata` version is this.
    #[arg(long, value_name = "VERSION")]
    pub expect_version: Option<String>,
    /// The architecture an image index picks (Go names: amd64, arm64, ppc64le, s390x).
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Flags of `cvo rehearse`.
#[cfg(feature = "sim")]
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["to_image", "payload"])))]
pub struct RehearseArgs {
    /// The cluster: snapshot files or directories, or a must-gather (repeatable), as
    /// `cvo status --from` reads them.
    #[arg(long = "from", value_name = "PATH", required = true)]
    pub from: Vec<PathBuf>,
    /// The target release image (pulled into the cache first, as `cvo payload pull`).
    #[arg(long, value_name = "PULLSPEC")]
    pub to_image: Option<String>,
    /// The target release's payload directory (`manifests/` + `release-manifests/`).
    #[arg(long, value_name = "DIR")]
    pub payload: Option<PathBuf>,
    /// Time speed of the simulated cluster: every delay is divided by it (default 50).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub speed: Option<f64>,
    /// Output format of the report.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// List every manifest created, changed or deleted under its run level and component.
    #[arg(long)]
    pub details: bool,
    /// Show the dashboard on the simulated cluster during the rehearsal; the report is printed
    /// when it quits.
    #[arg(long)]
    pub tui: bool,
    /// Give up after this many wall-clock seconds and report what was reached (default
    /// 60 + 1800/speed).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub timeout: Option<f64>,
    /// Let the ClusterOperators the snapshot shows Degraded recover once they run the target;
    /// by default they stay Degraded and the update is rehearsed waiting on them.
    #[arg(long)]
    pub assume_recovery: bool,
    #[command(flatten)]
    pub registry: RegistryArgs,
}
