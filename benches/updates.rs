//! Cost of the update-service client on a big graph: `cargo bench --bench updates`.
//!
//! Generates a graph of 10,000 nodes (4.x.y versions, channel and errata metadata) and 100,000
//! edges, plus 200 conditional edges (a PromQL risk each) of which 20 leave the current
//! version, serves it from a loopback HTTP server (a std `TcpListener` thread), and times the
//! whole client path: request, body read (capped), parse with index and duplicate checks, next
//! hops with upstream's rules, and risk evaluation (PromQL answered in-process). Prints the
//! body size, the best and median wall time of several runs, and the process's peak RSS
//! (`VmHWM` of /proc/self/status) before and after. `CVO_BENCH_RUNS` sets the number of runs
//! (default 10).

use std::{
    io::{BufRead, BufReader, Write},
    net::TcpListener,
    sync::Arc,
    time::{Duration, Instant},
};

use cvo::reconcile::updates::{
    self, UpdateInputs, UpdatesConfig,
    client::Egress,
    risks::{PromQlEvaluator, PromQlTimings, RiskEvaluator},
};

const NODES: usize = 10_000;
const EDGES: usize = 100_000;
const CONDITIONAL: usize = 200;

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn version(i: usize) -> String {
    format!("4.{}.{}", i / 1000, i % 1000)
}

/// The graph JSON; node 0 (4.0.0) is the current version with 10 plain and 20 conditional
/// edges out, the rest of the edges pseudo-random.
fn gen_graph() -> Vec<u8> {
    let mut s = String::with_capacity(8 << 20);
    s.push_str("{\"nodes\":[");
    for i in 0..NODES {
        if i > 0 {
            s.push(',');
        }
        let v = version(i);
        s.push_str(&format!(
            "{{\"version\":\"{v}\",\"payload\":\"quay.io/openshift-release-dev/ocp-release@sha256:{i:064x}\",\"metadata\":{{\"io.openshift.upgrades.graph.release.channels\":\"candidate-4.{m},fast-4.{m},stable-4.{m}\",\"url\":\"https://access.redhat.com/errata/RHSA-2024:{i}\"}}}}",
            m = i / 1000
        ));
    }
    s.push_str("],\"edges\":[");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for e in 0..EDGES {
        if e > 0 {
            s.push(',');
        }
        let (a, b) = if e < 10 {
            (0, e + 1)
        } else {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = 1 + (x % (NODES as u64 - 1)) as usize;
            let b = (a + 1 + ((x >> 20) % 50) as usize).min(NODES - 1);
            (a, b)
        };
        s.push_str(&format!("[{a},{b}]"));
    }
    s.push_str("],\"conditionalEdges\":[");
    for c in 0..CONDITIONAL {
        if c > 0 {
            s.push(',');
        }
        let from = if c < 20 { version(0) } else { version(c * 7) };
        let to = version(100 + c);
        s.push_str(&format!(
            "{{\"edges\":[{{\"from\":\"{from}\",\"to\":\"{to}\"}}],\"risks\":[{{\"name\":\"Risk{c}\",\"url\":\"https://issues.redhat.com/browse/OCPBUGS-{c}\",\"message\":\"Risk number {c}.\",\"matchingRules\":[{{\"type\":\"PromQL\",\"promql\":{{\"promql\":\"max(risk_{c}{{_id=\\\"\\\"}})\"}}}}]}}]}}"
        ));
    }
    s.push_str("]}");
    s.into_bytes()
}

/// Serves `body` to every request on a loopback port.
fn serve(body: Arc<Vec<u8>>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = l.local_addr().unwrap_or_else(|e| panic!("{e}"));
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { break };
            let mut r = BufReader::new(&s);
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
            }
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(&body);
        }
    });
    format!("http://{addr}/graph")
}

/// Every risk query answers "not exposed" except every third one.
struct Answers;

impl PromQlEvaluator for Answers {
    fn evaluate<'a>(&'a self, promql: &'a str) -> futures::future::BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move { Ok(promql.len().is_multiple_of(3)) })
    }
}

fn main() {
    let runs: usize = std::env::var("CVO_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let body = Arc::new(gen_graph());
    let rss_served = vm_hwm_kib();
    let url = serve(body.clone());
    let mut cfg = UpdatesConfig::new(Arc::new(Answers), Duration::from_secs(180));
    cfg.upstream_override = Some(url);
    cfg.arch = "amd64".into();
    cfg.egress = Some(Egress::default());
    // No throttle between queries: this measures the client, not upstream's 1 s pacing.
    let timings = PromQlTimings {
        min_between: Duration::ZERO,
        ..PromQlTimings::upstream()
    };
    let inp = UpdateInputs {
        channel: "stable-4.0".into(),
        cluster_id: "01234567-0123-0123-0123-0123456789ab".into(),
        version: "4.0.0".into(),
        ..Default::default()
    };
    let mut times = Vec::new();
    let mut last = (0, 0);
    for _ in 0..runs {
        let cfg = cfg.clone();
        let inp = inp.clone();
        let eval = RiskEvaluator::new(cfg.promql.clone(), timings.clone());
        let started = Instant::now();
        let (avail, cond) = rt.block_on(async move {
            let http = updates::client::http_client(&Egress::default(), cfg.timings.request_timeout)
                .unwrap_or_else(|e| panic!("{e}"));
            let (q, v) = inp.query(&cfg).unwrap_or_else(|e| panic!("{e}"));
            let hops = updates::fetch_next_hops(&http, &cfg, &inp, &q, &v)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let (a, c, _) = updates::evaluate(&eval, &hops, &[]).await;
            (a.map_or(0, |a| a.len()), c.len())
        });
        times.push(started.elapsed());
        last = (avail, cond);
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "graph: {NODES} nodes, {EDGES} edges, {CONDITIONAL} conditional edges, {:.1} MB body",
        body.len() as f64 / 1e6
    );
    println!(
        "from 4.0.0: {} available, {} conditional (risks evaluated in-process)",
        last.0, last.1
    );
    println!(
        "fetch+parse+merge+evaluate over loopback, {runs} runs: best {:.1} ms, median {:.1} ms",
        ms(times[0]),
        ms(times[times.len() / 2])
    );
    println!(
        "peak RSS (VmHWM): {:.1} MB (with the generated body held by the server: {:.1} MB before the first fetch)",
        vm_hwm_kib() as f64 / 1024.0,
        rss_served as f64 / 1024.0
    );
}
