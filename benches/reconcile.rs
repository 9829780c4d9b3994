//! Cost of the reconcile engine on the in-process simulator: `cargo bench --bench reconcile`.
//!
//! For each payload size N (1,000 and 5,000; 10,000 too with `CVO_BENCH_10K=1`, about a minute
//! more on two cores) a child process of this binary generates a synthetic payload with
//! `scripts/gen-payload.sh` (the full mix of a real payload: 52 CRDs and their custom resources
//! per 1,000 manifests, RBAC, Services, Secrets and ConfigMaps over 60 components and 40 run
//! levels), runs the engine with upstream timings (the resync interval fixed at 10 min) on an
//! empty simulated cluster until the ClusterVersion says Completed (the first apply, as
//! `cvo reconcile --until-complete`), then starts a second engine for one converged pass (as
//! `cvo reconcile --once`). It prints one table: wall time, CPU time (the whole process, the
//! simulator included), requests and writes from the simulator's audit log per phase, and the
//! process's peak RSS (VmHWM). `CVO_BENCH_N=1000,2000` picks the sizes.

use std::{
    path::Path,
    process::Command,
    sync::Arc,
    time::{Duration, Instant},
};

use cvo::reconcile::{
    Engine, EngineConfig,
    api::{EngineHandle, StatusSnapshot},
};
use cvo::sim::Simulator;
use kube::Client;

const CHILD_ENV: &str = "CVO_BENCH_CHILD_N";
/// Longest a phase may take before the bench gives up on it.
const PHASE_TIMEOUT: Duration = Duration::from_secs(600);

/// `(VmHWM KiB, CPU seconds of this process)` from /proc/self (zeros where unavailable).
fn usage() -> (u64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // utime and stime are fields 14 and 15 of /proc/self/stat, in clock ticks (100 per second
    // on Linux); the fields after the parenthesised command name start at field 3.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest.split_whitespace().map(|x| x.parse().unwrap_or(0)).collect();
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    (hwm, ticks as f64 / 100.0)
}

/// Writes a payload of `n` manifests to `dir` with `scripts/gen-payload.sh` (its full mix, as
/// a real payload: about 5 % CRDs with custom resources of them, RBAC, Services, Secrets,
/// ConfigMaps over 60 components).
///
/// Errors when the script cannot run or fails (its stderr in the message).
fn gen_payload(dir: &Path, n: usize) -> anyhow::Result<()> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen-payload.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(dir)
        .arg(n.to_string())
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "{}: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(())
}

/// One phase's figures.
#[derive(Default)]
struct Phase {
    wall: f64,
    cpu: f64,
    requests: usize,
    writes: usize,
    status_writes: u64,
}

/// Waits until `done` holds for a snapshot of `h`.
async fn wait_for(
    h: &mut EngineHandle,
    done: impl Fn(&StatusSnapshot) -> bool,
) -> anyhow::Result<Arc<StatusSnapshot>> {
    let deadline = tokio::time::Instant::now() + PHASE_TIMEOUT;
    loop {
        let s = h.status.borrow_and_update().clone();
        if done(&s) {
            return Ok(s);
        }
        tokio::time::timeout_at(deadline, h.status.changed())
            .await
            .map_err(|_| anyhow::anyhow!("timed out; last failure: {:?}", s.failure))??;
    }
}

/// Runs one engine on `sim` until `done`, measuring the phase.
async fn phase(sim: &Simulator, dir: &Path, done: impl Fn(&StatusSnapshot) -> bool) -> anyhow::Result<Phase> {
    sim.clear_audit();
    let (_, cpu0) = usage();
    let start = Instant::now();
    let mut cfg = EngineConfig::local(dir.to_path_buf(), None)?;
    // Upstream timings but `I` at 10 min: the initializing pass's apply timeout (`I`) must
    // not cut a slow pass short on a loaded machine.
    cfg.timings.resync_interval = Duration::from_secs(600);
    let mut h = Engine::spawn(Client::new(sim.clone(), "default"), cfg);
    let snap = wait_for(&mut h, done).await?;
    h.shutdown().await;
    let wall = start.elapsed().as_secs_f64();
    let (_, cpu1) = usage();
    let audit = sim.audit();
    Ok(Phase {
        wall,
        cpu: cpu1 - cpu0,
        requests: audit.entries.len(),
        writes: audit.writes(),
        status_writes: snap.counters.status_writes,
    })
}

/// Passes of a long-running engine on a converged cluster: one engine with the resync interval
/// at [`STEADY_RESYNC`] runs its first pass, then [`STEADY_PASSES`] more; returns the requests
/// (the simulator's audit log) and writes per later pass, and the longest pass's wall time.
async fn steady(sim: &Simulator, dir: &Path) -> anyhow::Result<(f64, f64, f64)> {
    let mut cfg = EngineConfig::local(dir.to_path_buf(), None)?;
    cfg.timings.resync_interval = STEADY_RESYNC;
    let mut h = Engine::spawn(Client::new(sim.clone(), "default"), cfg);
    wait_for(&mut h, |s| s.counters.passes >= 1 && !s.running).await?;
    sim.clear_audit();
    // Wall time of each pass, from the first snapshot that shows it running to the one that
    // counts it (snapshots are published every 100 ms: that is the resolution).
    let mut longest = 0.0f64;
    for k in 1..=STEADY_PASSES {
        wait_for(&mut h, |s| s.running || s.counters.passes > k).await?;
        let t0 = Instant::now();
        wait_for(&mut h, |s| s.counters.passes > k && !s.running).await?;
        longest = longest.max(t0.elapsed().as_secs_f64());
    }
    h.shutdown().await;
    let audit = sim.audit();
    let per = |x: usize| x as f64 / STEADY_PASSES as f64;
    Ok((per(audit.entries.len()), per(audit.writes()), longest))
}

/// Resync interval of the long-running engine in [`steady`].
const STEADY_RESYNC: Duration = Duration::from_secs(3);
/// Resync interval of the engine that does the first apply in [`steady_on_cluster`] with
/// `CVO_BENCH_FIRST_APPLY`: its pass and apply timeouts are based on it.
const FIRST_APPLY_RESYNC: Duration = Duration::from_secs(20);
/// Converged passes [`steady`] counts.
const STEADY_PASSES: u64 = 3;

/// The child: one payload size; prints one tab-separated line of figures.
async fn child(n: usize) -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    gen_payload(tmp.path(), n)?;
    let sim = Simulator::new();
    let first = phase(&sim, tmp.path(), StatusSnapshot::is_completed).await?;
    let converged = phase(&sim, tmp.path(), |s| s.counters.passes >= 1 && !s.running).await?;
    let (steady_requests, steady_writes, steady_wall) = steady(&sim, tmp.path()).await?;
    let (hwm, _) = usage();
    println!(
        "{n}\t{:.2}\t{:.2}\t{}\t{}\t{}\t{:.2}\t{:.2}\t{}\t{}\t{}\t{steady_requests:.1}\t{steady_writes:.1}\t{steady_wall:.2}",
        first.wall,
        first.cpu,
        first.requests,
        first.writes,
        first.status_writes,
        converged.wall,
        converged.cpu,
        converged.requests,
        converged.writes,
        hwm / 1024,
    );
    Ok(())
}

/// `CVO_BENCH_KUBECONFIG=FILE CVO_BENCH_PAYLOAD=DIR`: the long-running engine's converged
/// passes on that cluster (a real kube-apiserver; `scripts/bench-realapi.sh` runs it after its
/// first apply), requests counted by the engine itself; prints one line. With
/// `CVO_BENCH_FIRST_APPLY=1` (an empty cluster: the engine applies the payload) the line gives
/// instead the passes, writes and requests until a pass completed, and the requests of the next
/// pass: the first reconciling pass of the engine that did the first apply.
async fn steady_on_cluster(kubeconfig: &Path, dir: &Path) -> anyhow::Result<()> {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = Client::try_from(config)?;
    let first_apply = std::env::var_os("CVO_BENCH_FIRST_APPLY").is_some();
    let mut cfg = EngineConfig::local(dir.to_path_buf(), None)?;
    // The resync interval is also the base of the apply timeouts: a first apply of 5,000
    // manifests outlasts a pass timed from 3 s, so it gets FIRST_APPLY_RESYNC.
    cfg.timings.resync_interval = if first_apply {
        FIRST_APPLY_RESYNC
    } else {
        STEADY_RESYNC
    };
    let mut h = Engine::spawn(client, cfg);
    let total = |s: &StatusSnapshot| s.counters.requests.values().sum::<u64>();
    let first = wait_for(&mut h, |s| s.counters.passes >= 1 && !s.running).await?;
    if first_apply {
        // An empty cluster: the engine applies the payload (in one or more passes, until one
        // completes); the pass after that is the first reconciling pass of the engine that did
        // the first apply, reported on its own.
        let failure = first
            .failure
            .as_ref()
            .map(|f| format!("{}: {}", f.reason, f.message));
        let done = wait_for(&mut h, |s| s.completed >= 1 && !s.running).await?;
        let k = done.counters.passes;
        let end = wait_for(&mut h, |s| s.counters.passes > k && !s.running).await?;
        h.shutdown().await;
        println!(
            "first apply: {k} passes until one completed ({} writes, {} requests; first pass: {} writes{}), then the first reconciling pass ({:?}): {} requests ({} writes)",
            done.counters.apply_writes,
            total(&done),
            first.counters.apply_writes,
            failure.map(|m| format!(", failed: {m}")).unwrap_or_default(),
            end.state,
            total(&end) - total(&done),
            end.counters.apply_writes - done.counters.apply_writes,
        );
        return Ok(());
    }
    let mut longest = 0.0f64;
    for k in 1..=STEADY_PASSES {
        wait_for(&mut h, |s| s.running || s.counters.passes > k).await?;
        let t0 = Instant::now();
        wait_for(&mut h, |s| s.counters.passes > k && !s.running).await?;
        longest = longest.max(t0.elapsed().as_secs_f64());
    }
    let last = h.status.borrow().clone();
    h.shutdown().await;
    let delta: std::collections::BTreeMap<&String, u64> = last
        .counters
        .requests
        .iter()
        .map(|(k, v)| (k, v - first.counters.requests.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect();
    println!(
        "converged passes of a long-running engine (resync {} s): {:.1} requests per pass ({delta:?} over {STEADY_PASSES} passes), {:.1} apply writes per pass, longest pass {longest:.2} s",
        STEADY_RESYNC.as_secs(),
        (total(&last) - total(&first)) as f64 / STEADY_PASSES as f64,
        (last.counters.apply_writes - first.counters.apply_writes) as f64 / STEADY_PASSES as f64,
    );
    Ok(())
}

/// `CVO_BENCH_KUBECONFIG=FILE CVO_BENCH_PAYLOAD=DIR CVO_BENCH_UPDATE_TO=DIR2`: an update in
/// one engine on that cluster (converged on `dir`): its first pass (one payload held), then
/// `spec.desiredUpdate` set to `dir2`'s pseudo pull spec (forced: a local directory has no
/// signature) until Completed, both payloads held. Prints one line: the update's wall time,
/// the apply layer's writes, and the process's peak RSS after the first pass and after the
/// update.
async fn update_on_cluster(kubeconfig: &Path, dir: &Path, to: &Path) -> anyhow::Result<()> {
    use cvo::reconcile::api::LocalPayloads;
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = Client::try_from(config)?;
    let mut cfg = EngineConfig::local(dir.to_path_buf(), None)?;
    let target = LocalPayloads::pseudo_pull_spec(to)?;
    cfg.payloads = Arc::new(LocalPayloads {
        own_image: LocalPayloads::pseudo_pull_spec(dir)?,
        own_dir: dir.to_path_buf(),
        others: [(target.clone(), to.to_path_buf())].into(),
    });
    cfg.timings.resync_interval = Duration::from_secs(600);
    let mut h = Engine::spawn(client.clone(), cfg);
    let first = wait_for(&mut h, |s| s.counters.passes >= 1 && !s.running).await?;
    let (one, _) = usage();
    let cvs: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(
        client,
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("config.openshift.io", "v1", "ClusterVersion"),
            "clusterversions",
        ),
    );
    let t0 = Instant::now();
    cvs.patch(
        "version",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(
            serde_json::json!({"spec": {"desiredUpdate": {"image": target, "force": true}}}),
        ),
    )
    .await?;
    let done = wait_for(&mut h, |s| {
        s.is_completed()
            && s.cluster_version
                .as_ref()
                .and_then(|cv| cv.history.first())
                .is_some_and(|e| e.image == target)
    })
    .await?;
    let wall = t0.elapsed().as_secs_f64();
    let (both, _) = usage();
    h.shutdown().await;
    println!(
        "update between the two payloads in one engine: {wall:.2} s, {} apply writes; peak RSS {} MiB after the first pass (one payload), {} MiB after the update (both held): {:.2}x",
        done.counters.apply_writes - first.counters.apply_writes,
        one / 1024,
        both / 1024,
        both as f64 / one.max(1) as f64,
    );
    Ok(())
}

fn main() -> anyhow::Result<()> {
    if let (Some(kc), Some(dir), Some(to)) = (
        std::env::var_os("CVO_BENCH_KUBECONFIG"),
        std::env::var_os("CVO_BENCH_PAYLOAD"),
        std::env::var_os("CVO_BENCH_UPDATE_TO"),
    ) {
        return tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(update_on_cluster(Path::new(&kc), Path::new(&dir), Path::new(&to)));
    }
    if let (Some(kc), Some(dir)) = (
        std::env::var_os("CVO_BENCH_KUBECONFIG"),
        std::env::var_os("CVO_BENCH_PAYLOAD"),
    ) {
        return tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(steady_on_cluster(Path::new(&kc), Path::new(&dir)));
    }
    if let Ok(n) = std::env::var(CHILD_ENV) {
        let n: usize = n.parse()?;
        return tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(child(n));
    }
    let sizes: Vec<usize> = match std::env::var("CVO_BENCH_N") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) if std::env::var_os("CVO_BENCH_10K").is_some() => vec![1_000, 5_000, 10_000],
        Err(_) => vec![1_000, 5_000],
    };
    let exe = std::env::current_exe()?;
    println!("reconcile engine on the in-process simulator (upstream timings, one process per N)");
    println!(
        "{:>6} | {:>8} {:>7} {:>8} {:>7} {:>7} | {:>8} {:>7} {:>8} {:>7} | {:>8} | {:>8} {:>7} {:>7}",
        "N",
        "apply s",
        "CPU s",
        "requests",
        "writes",
        "status",
        "pass s",
        "CPU s",
        "requests",
        "writes",
        "peak RSS",
        "steady/p",
        "writes",
        "pass s"
    );
    for n in sizes {
        let out = Command::new(&exe).env(CHILD_ENV, n.to_string()).output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let Some(line) = text.lines().find(|l| l.starts_with(&format!("{n}\t"))) else {
            eprintln!(
                "N={n}: the child failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            continue;
        };
        let f: Vec<&str> = line.split('\t').collect();
        let g = |i: usize| f.get(i).copied().unwrap_or("?");
        println!(
            "{:>6} | {:>8} {:>7} {:>8} {:>7} {:>7} | {:>8} {:>7} {:>8} {:>7} | {:>5} MiB | {:>8} {:>7} {:>7}",
            g(0),
            g(1),
            g(2),
            g(3),
            g(4),
            g(5),
            g(6),
            g(7),
            g(8),
            g(9),
            g(10),
            g(11),
            g(12),
            g(13)
        );
    }
    println!("apply: first apply to ClusterVersion Completed; pass: a second engine's converged pass;");
    println!("steady/p: requests per converged pass of a long-running engine (resync 3 s, 3 passes),");
    println!("with its writes per pass and the longest of those passes' wall time (snapshots come every");
    println!("100 ms: a pass that starts and ends between two shows as 0.00).");
    println!("CPU: the whole process (engine + simulator); requests/writes: the simulator's audit log.");
    Ok(())
}
