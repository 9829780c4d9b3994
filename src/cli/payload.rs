//! `cvo payload inspect DIR`: what the engine would apply from a payload directory, in which
//! order and with what parallelism (text and JSON rendering; loading and filtering live in
//! `reconcile::payload`).

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write as _,
    path::Path,
    sync::Arc,
};

use serde_json::{Value, json};

use crate::l10n::{tr, trf};
use crate::reconcile::payload::{
    self, ExclusionReason, InclusionConfig, LoadOptions, LoadedPayload, Manifest, PayloadState, Task,
    TaskGraph,
    capability::{self, CapabilitiesSpec},
    filter::DEFAULT_CLUSTER_PROFILE,
};

/// The cluster an inspection assumes.
#[derive(Clone, Debug)]
pub struct InspectOptions {
    /// Cluster profile (`include.release.openshift.io/<profile>`).
    pub profile: String,
    /// `baselineCapabilitySet` (`None` ⇒ vCurrent).
    pub capabilities_baseline: Option<String>,
    /// `additionalEnabledCapabilities`.
    pub capabilities_additional: Vec<String>,
    /// Cluster feature set (`""` = Default).
    pub feature_set: String,
    /// Enabled feature gates.
    pub feature_gates: Vec<String>,
    /// `EXCLUDE_MANIFESTS` id.
    pub exclude: String,
    /// Which graph to show.
    pub mode: PayloadState,
    /// Release image pull spec used for `{{.ReleaseImage}}`.
    pub release_image: String,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions {
            profile: DEFAULT_CLUSTER_PROFILE.to_string(),
            capabilities_baseline: None,
            capabilities_additional: Vec::new(),
            feature_set: String::new(),
            feature_gates: Vec::new(),
            exclude: String::new(),
            mode: PayloadState::Updating,
            release_image: String::new(),
        }
    }
}

/// The result of an inspection.
#[derive(Clone, Debug)]
pub struct Inspection {
    /// The loaded directory.
    pub loaded: LoadedPayload,
    /// Each manifest with its inclusion verdict, in load order.
    pub verdicts: Vec<(Arc<Manifest>, Result<(), ExclusionReason>)>,
    /// `versionHash` of the included manifests.
    pub hash: String,
    /// The graph of the included manifests for `mode`.
    pub graph: TaskGraph,
    /// Workers for `mode`.
    pub workers: usize,
    /// The options used.
    pub options: InspectOptions,
    /// Enabled capabilities assumed.
    pub enabled_capabilities: BTreeSet<String>,
}

/// Loads `dir` and applies every filter (load-time and apply-time) of a cluster described by
/// `opts`, then builds the task graph of the included manifests.
///
/// # Errors
/// Unknown capability baseline, or the load errors (one line each).
pub fn inspect(dir: &Path, opts: &InspectOptions) -> Result<Inspection, Vec<String>> {
    if let Some(b) = &opts.capabilities_baseline
        && capability::baseline_set(b).is_none()
    {
        return Err(vec![format!(
            "--capabilities-baseline {b:?}: unknown; use one of {}",
            capability::BASELINE_SETS.join(", ")
        )]);
    }
    let gates: BTreeSet<String> = opts.feature_gates.iter().cloned().collect();
    let load_opts = LoadOptions {
        release_image: opts.release_image.clone(),
        exclude_identifier: opts.exclude.clone(),
        required_feature_set: opts.feature_set.clone(),
        profile: opts.profile.clone(),
        known_capabilities: None,
        enabled_feature_gates: gates.clone(),
    };
    let loaded = payload::load_dir(dir, &load_opts).map_err(|e| e.lines())?;
    let spec = CapabilitiesSpec {
        baseline_capability_set: opts.capabilities_baseline.clone(),
        additional_enabled_capabilities: opts.capabilities_additional.clone(),
    };
    let caps = capability::set_capabilities(Some(&spec), &[], &gates);
    let cfg = InclusionConfig {
        capabilities: Some(caps.status()),
        ..load_opts.inclusion(loaded.major_version())
    };
    let verdicts = loaded.filter(&cfg);
    let included: Vec<Arc<Manifest>> = verdicts
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(m, _)| m.clone())
        .collect();
    let hash = payload::manifest_hash(included.iter().map(|m| m.as_ref()));
    let (graph, workers) = payload::graph_for_state(Task::from_manifests(&included), opts.mode, 0);
    Ok(Inspection {
        loaded,
        verdicts,
        hash,
        graph,
        workers,
        options: opts.clone(),
        enabled_capabilities: caps.enabled,
    })
}

/// A node's label from its tasks' file names: `NN-component`, `first … last` for a serial node
/// spanning several, `unnumbered` for names without a run level.
fn node_label(tasks: &[Task]) -> String {
    let label = |t: &Task| match payload::run_level_and_component(&t.manifest.file) {
        Some((l, c)) => format!("{l:02}-{c}"),
        None => "unnumbered".to_string(),
    };
    match (tasks.first(), tasks.last()) {
        (Some(f), Some(l)) => {
            let (a, b) = (label(f), label(l));
            if a == b { a } else { format!("{a} … {b}") }
        }
        _ => String::new(),
    }
}

/// Steps of the graph: nodes with tasks grouped by depth (nodes of one step may run in
/// parallel once the previous steps are done; empty anchor/spacer nodes are not counted).
pub fn steps(graph: &TaskGraph) -> Vec<Vec<usize>> {
    let n = graph.nodes.len();
    let mut depth: Vec<Option<usize>> = vec![None; n];
    // Nodes are appended after their anchors, but edges can point backwards (Split), so
    // iterate to a fixpoint (the graph is acyclic).
    for _ in 0..=n {
        let mut changed = false;
        for (i, node) in graph.nodes.iter().enumerate() {
            let mut d = 0;
            let mut ready = true;
            for p in &node.in_ {
                match depth.get(*p).copied().flatten() {
                    Some(x) => d = d.max(x),
                    None => ready = false,
                }
            }
            if !ready {
                continue;
            }
            let own = d + usize::from(!node.tasks.is_empty());
            if depth[i] != Some(own) {
                depth[i] = Some(own);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut by: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, d) in depth.iter().enumerate() {
        if let Some(d) = d
            && !graph.nodes[i].tasks.is_empty()
        {
            by.entry(*d).or_default().push(i);
        }
    }
    by.into_values().collect()
}

fn describe(m: &Manifest) -> String {
    let ns = if m.id.namespace.is_empty() {
        String::new()
    } else {
        format!("{}/", m.id.namespace)
    };
    format!("{} {ns}{}", m.id.kind, m.id.name)
}

/// The text form.
pub fn render_text(i: &Inspection) -> String {
    let mut s = String::new();
    // The header's labels, padded to one column: 15 cells in English ("Architecture:  "), the
    // longest label and a space in Russian (Cyrillic letters are one cell each).
    let labels = [
        tr!("inspect-release", "Release:"),
        tr!("inspect-architecture", "Architecture:"),
        tr!("inspect-channels", "Channels:"),
        tr!("inspect-url", "URL:"),
        tr!("inspect-hash", "Hash:"),
        tr!("inspect-directory", "Directory:"),
        tr!("inspect-cluster", "Cluster:"),
        tr!("inspect-warning", "Warning:"),
    ];
    let w = labels
        .iter()
        .map(|l| l.chars().count() + 1)
        .max()
        .unwrap_or(0)
        .max(15);
    let [
        release,
        architecture,
        channels,
        url,
        hash,
        directory,
        cluster,
        warning,
    ] = labels.map(|l| format!("{l:<w$}"));
    let none = tr!("inspect-none", "<none>");
    let md = i.loaded.metadata.as_ref();
    match md {
        Some(md) => {
            let _ = writeln!(s, "{release}{}", md.release.version);
            let arch = md
                .release
                .architecture
                .clone()
                .unwrap_or_else(|| payload::load::runtime_architecture().to_string());
            let _ = writeln!(s, "{architecture}{arch}");
            let ch = if md.release.channels.is_empty() {
                none.to_string()
            } else {
                md.release.channels.join(", ")
            };
            let _ = writeln!(s, "{channels}{ch}");
            if let Some(u) = &md.release.url {
                let _ = writeln!(s, "{url}{u}");
            }
        }
        None => {
            let _ = writeln!(
                s,
                "{release}{}",
                tr!("inspect-release-unknown", "unknown (no release-metadata)")
            );
        }
    }
    let included = i.verdicts.iter().filter(|(_, r)| r.is_ok()).count();
    let _ = writeln!(
        s,
        "{hash}{}",
        trf!(
            "inspect-hash-of",
            "{hash} (of {included} included manifests)",
            hash = i.hash,
            included = included
        )
    );
    let _ = writeln!(s, "{directory}{} ({})", i.loaded.dir.display(), i.loaded.layout);
    let o = &i.options;
    let fs = if o.feature_set.is_empty() {
        "Default"
    } else {
        o.feature_set.as_str()
    };
    let gates = if o.feature_gates.is_empty() {
        none.to_string()
    } else {
        o.feature_gates.join(",")
    };
    let _ = writeln!(
        s,
        "{cluster}profile={} feature-set={fs} feature-gates={gates} capabilities={}{}",
        o.profile,
        o.capabilities_baseline
            .as_deref()
            .unwrap_or(capability::DEFAULT_BASELINE),
        if o.capabilities_additional.is_empty() {
            String::new()
        } else {
            format!("+{}", o.capabilities_additional.join(","))
        }
    );
    for w in &i.loaded.warnings {
        let _ = writeln!(s, "{warning}{w}");
    }
    let excluded: Vec<_> = i
        .verdicts
        .iter()
        .filter_map(|(m, r)| r.as_ref().err().map(|e| (m, e)))
        .collect();
    s.push('\n');
    s += &trf!(
        "inspect-manifests",
        "Manifests: {loaded} loaded, {included} included, {excluded} excluded",
        loaded = i.verdicts.len(),
        included = included,
        excluded = excluded.len()
    );
    s.push('\n');
    let mut by_cat: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, e) in &excluded {
        *by_cat.entry(e.category()).or_default() += 1;
    }
    for (c, n) in &by_cat {
        s += &trf!("inspect-excluded-by", "  excluded by {c}: {n}", c = *c, n = *n);
        s.push('\n');
    }
    let (steps, nodes_with_tasks) = (
        steps(&i.graph),
        i.graph.nodes.iter().filter(|n| !n.tasks.is_empty()).count(),
    );
    s.push('\n');
    s += &trf!(
        "inspect-task-graph",
        "Task graph ({mode}, {workers} workers): {nodes} nodes ({with_tasks} with tasks), {steps} steps",
        mode = o.mode.to_string().to_lowercase(),
        workers = i.workers,
        nodes = i.graph.nodes.len(),
        with_tasks = nodes_with_tasks,
        steps = steps.len()
    );
    s.push('\n');
    for (k, step) in steps.iter().enumerate() {
        let parts: Vec<String> = step
            .iter()
            .map(|id| {
                let n = &i.graph.nodes[*id];
                format!("[{id}] {} ({})", node_label(&n.tasks), n.tasks.len())
            })
            .collect();
        s += &trf!(
            "inspect-step",
            "  step {k}: {parts}",
            k = format!("{:>2}", k + 1),
            parts = parts.join(" | ")
        );
        s.push('\n');
    }
    if !excluded.is_empty() {
        s.push('\n');
        s += tr!("inspect-excluded-manifests", "Excluded manifests:");
        s.push('\n');
        for (m, e) in &excluded {
            let _ = writeln!(s, "  {}  {}: {e}", m.label(), describe(m));
        }
    }
    s
}

/// The JSON form (documented in docs/commands.md, section "cvo payload inspect").
pub fn render_json(i: &Inspection) -> Value {
    let md = i.loaded.metadata.as_ref();
    let release = json!({
        "version": md.map(|m| m.release.version.clone()),
        "image": md.map(|m| m.release.image.clone()).filter(|s| !s.is_empty()),
        "url": md.and_then(|m| m.release.url.clone()),
        "channels": md.map(|m| m.release.channels.clone()).unwrap_or_default(),
        "previous": md.map(|m| m.previous.clone()).unwrap_or_default(),
        "architecture": md.map(|m| m.release.architecture.clone()
            .unwrap_or_else(|| payload::load::runtime_architecture().to_string())),
        "hash": i.hash,
        "layout": i.loaded.layout,
    });
    let manifests: Vec<Value> = i
        .verdicts
        .iter()
        .map(|(m, r)| {
            json!({
                "file": m.path,
                "index": m.index,
                "item": m.item,
                "group": m.group,
                "kind": m.id.kind,
                "namespace": if m.id.namespace.is_empty() { Value::Null } else { json!(m.id.namespace) },
                "name": m.id.name,
                "included": r.is_ok(),
                "excluded_reason": r.as_ref().err().map(ToString::to_string),
                "excluded_by": r.as_ref().err().map(ExclusionReason::category),
                "delete": m.delete_requested().unwrap_or(false),
                "create_only": m.create_only(),
            })
        })
        .collect();
    let nodes: Vec<Value> = i
        .graph
        .nodes
        .iter()
        .enumerate()
        .map(|(id, n)| {
            json!({
                "id": id,
                "tasks": n.tasks.iter().map(|t| t.manifest.label()).collect::<Vec<_>>(),
                "in": n.in_,
                "out": n.out,
            })
        })
        .collect();
    let o = &i.options;
    json!({
        "release": release,
        "cluster": {
            "profile": o.profile,
            "feature_set": if o.feature_set.is_empty() { "Default" } else { o.feature_set.as_str() },
            "feature_gates": o.feature_gates,
            "capabilities_baseline": o.capabilities_baseline.as_deref().unwrap_or(capability::DEFAULT_BASELINE),
            "enabled_capabilities": i.enabled_capabilities,
        },
        "manifests": manifests,
        "graph": {
            "mode": o.mode,
            "workers": i.workers,
            "steps": steps(&i.graph),
            "nodes": nodes,
        },
        "warnings": i.loaded.warnings,
    })
}

/// Whether a `DIR|PULLSPEC` argument names a release image rather than a directory: it is not
/// on disk and parses as a pull spec with a registry (`host/repo:tag`, `host/repo@sha256:...`).
pub fn is_pull_spec(arg: &Path) -> bool {
    let Some(s) = arg.to_str() else {
        return false;
    };
    !arg.exists()
        && s.contains('/')
        && !s.starts_with('.')
        && !s.starts_with('/')
        && s.parse::<oci_client::Reference>().is_ok()
}

/// Checks a `--payload DIR` of `cvo tui` and `cvo operator start` before anything else is
/// done (the terminal taken, the cluster reached): it must be a release image root.
///
/// # Errors
/// `--payload DIR: not a directory`, or `--payload DIR: ` and what is missing and expected
/// ([`crate::reconcile::payload::load::release_root_problem`]).
pub fn check_payload_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.is_dir() {
        anyhow::bail!("--payload {}: not a directory", dir.display());
    }
    if let Some(problem) = crate::reconcile::payload::load::release_root_problem(dir) {
        anyhow::bail!("--payload {}: {problem}", dir.display());
    }
    Ok(())
}

/// The retrieval options of the registry flags (`--registry-auth` read now: a bad file is an
/// error naming it).
///
/// # Errors
/// The credentials file cannot be read or parsed.
pub fn retrieve_options(
    a: &super::args::RegistryArgs,
) -> anyhow::Result<crate::reconcile::payload::retrieve::RetrieveOptions> {
    use crate::reconcile::payload::retrieve::{DockerAuth, RetrieveOptions};
    let mut o = RetrieveOptions::new(a.cache_dir.clone());
    if let Some(f) = &a.registry_auth {
        o.auth = DockerAuth::from_file(f).map_err(|e| anyhow::anyhow!("--registry-auth {e}"))?;
    }
    o.insecure_registries = a.insecure_registry.clone();
    Ok(o)
}

/// The engine's payload resolver for a cluster (`cvo reconcile`): the own release from
/// `payload` (a directory, or a pull spec pulled first), every other release image from its
/// registry with `opts`, verified against the own payload's keys and the ClusterVersion's
/// signature stores ([`crate::reconcile::signature::ClusterVerifier`], ClusterVersion
/// `cluster_version`), through the cluster's proxy and trusted CA, with the cluster's pull
/// secret unless `auth_given`. Only the own release is read from a `file://` pull spec; any
/// other `file://` pull spec is refused (no directory but the administrator's is trusted).
///
/// # Errors
/// `payload` is a directory that cannot be canonicalised.
pub fn cluster_resolver(
    client: kube::Client,
    payload: &Path,
    release_image: Option<String>,
    opts: crate::reconcile::payload::retrieve::RetrieveOptions,
    auth_given: bool,
    cluster_version: &str,
) -> anyhow::Result<std::sync::Arc<dyn crate::reconcile::api::PayloadResolver>> {
    use crate::reconcile::api::LocalPayloads;
    let local = if is_pull_spec(payload) {
        LocalPayloads {
            own_image: release_image.unwrap_or_else(|| payload.to_string_lossy().into_owned()),
            ..LocalPayloads::default()
        }
    } else {
        let own_image = match release_image {
            Some(i) => i,
            None => LocalPayloads::pseudo_pull_spec(payload)
                .map_err(|e| anyhow::anyhow!("--payload {}: {e}", payload.display()))?,
        };
        LocalPayloads {
            own_image,
            own_dir: payload.to_path_buf(),
            ..LocalPayloads::default()
        }
    };
    Ok(cluster_payloads(client, local, opts, auth_given, cluster_version))
}

/// The payload resolver every engine on a cluster uses (`cvo reconcile`, `cvo run`, the
/// dashboard's engine, `cvo operator start`): the own release from `local` (a directory, or
/// by pull spec from its registry), every other release image from its registry with
/// `opts`, verified by a [`crate::reconcile::signature::ClusterVerifier`] of the
/// ClusterVersion `cluster_version`, through the cluster's proxy and trusted CA; with the
/// cluster's pull secret unless `auth_given` (`--registry-auth`).
///
/// Upstream: `pkg/cvo/cvo.go` (the release verifier built from the payload's
/// `release-verification` ConfigMap) and `pkg/payload/retriever.go`.
pub fn cluster_payloads(
    client: kube::Client,
    local: crate::reconcile::api::LocalPayloads,
    opts: crate::reconcile::payload::retrieve::RetrieveOptions,
    auth_given: bool,
    cluster_version: &str,
) -> std::sync::Arc<dyn crate::reconcile::api::PayloadResolver> {
    use crate::reconcile::{
        payload::retrieve::{RegistryPayloads, Retriever},
        signature::ClusterVerifier,
    };
    let verifier = ClusterVerifier::new(client.clone(), cluster_version);
    let rp = RegistryPayloads::new(local, Retriever::new(opts)).with_verifier(std::sync::Arc::new(verifier));
    std::sync::Arc::new(if auth_given {
        rp.with_cluster_egress(client)
    } else {
        rp.with_cluster_pull_secret(client)
    })
}

/// Pulls `pullspec` into the cache (or finds it there), printing progress on stderr when
/// `progress` is set.
///
/// # Errors
/// The retrieval's error, one line.
pub async fn pull_release(
    pullspec: &str,
    version: &str,
    opts: crate::reconcile::payload::retrieve::RetrieveOptions,
    progress: bool,
) -> anyhow::Result<crate::reconcile::payload::retrieve::Retrieved> {
    use crate::reconcile::{api::PullProgress, payload::retrieve::Retriever};
    let r = Retriever::new(opts);
    let last = std::sync::Mutex::new((0usize, 0u64));
    let report = |p: &PullProgress| {
        if !progress {
            return;
        }
        let Ok(mut l) = last.lock() else {
            return;
        };
        if *l == (p.layers_done, p.bytes_done) {
            return;
        }
        *l = (p.layers_done, p.bytes_done);
        eprintln!(
            "{}",
            trf!(
                "pull-progress",
                "cvo: pulling {image}: layers {done}/{total}, {mb_done}/{mb_total} MB",
                image = p.digest.as_deref().unwrap_or(&p.image),
                done = p.layers_done,
                total = p.layers_total,
                mb_done = format!("{:.1}", p.bytes_done as f64 / 1e6),
                mb_total = format!("{:.1}", p.bytes_total as f64 / 1e6)
            )
        );
    };
    let got = r.retrieve(pullspec, version, &report).await?;
    if progress {
        let line = if got.from_cache {
            trf!(
                "pull-resolved-cached",
                "cvo: {pullspec} is {digest} (release {version}), from the cache",
                pullspec = pullspec,
                digest = got.resolved.digest,
                version = got.version
            )
        } else {
            trf!(
                "pull-resolved",
                "cvo: {pullspec} is {digest} (release {version})",
                pullspec = pullspec,
                digest = got.resolved.digest,
                version = got.version
            )
        };
        eprintln!("{line}");
    }
    Ok(got)
}

/// `cvo payload pull PULLSPEC DIR`: extracts a release image's payload into `DIR` for offline
/// use (`cvo payload inspect DIR`, `cvo reconcile --payload DIR`); progress on stderr, the
/// digest on stdout.
///
/// # Errors
/// `DIR` exists and is not empty; the retrieval or the copy failed.
pub fn pull_command(a: super::args::PullArgs) -> anyhow::Result<std::process::ExitCode> {
    if a.dir.exists()
        && std::fs::read_dir(&a.dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        anyhow::bail!("{}: exists and is not an empty directory", a.dir.display());
    }
    let mut opts = retrieve_options(&a.registry)?;
    if let Some(arch) = &a.arch {
        opts.architecture = arch.clone();
    }
    let rt = super::runtime()?;
    let got = rt.block_on(pull_release(
        &a.pullspec,
        a.expect_version.as_deref().unwrap_or(""),
        opts,
        true,
    ))?;
    crate::reconcile::payload::retrieve::copy_payload(&got.dir, &a.dir).map_err(|e| anyhow::anyhow!(e))?;
    super::out::println(&got.resolved.by_digest)?;
    Ok(std::process::ExitCode::SUCCESS)
}
