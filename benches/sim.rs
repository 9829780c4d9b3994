//! Throughput and memory of the simulated API server through a real `kube::Client`, in
//! process: `cargo bench --bench sim`. Prints one table; takes well under a minute.

use std::time::{Duration, Instant};

use cvo::sim::Simulator;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::{
    Api, Client,
    api::{ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams},
};
use serde_json::json;

const OBJECTS: usize = 10_000;
const LIST_SIZE: usize = 1_000;
const WATCH_EVENTS: usize = 5_000;
const RUN_FOR: Duration = Duration::from_secs(3);

/// `(VmRSS, VmHWM)` in KiB from /proc/self/status (zeros where it is unavailable).
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn config_map(name: &str, i: usize) -> ConfigMap {
    let payload: String = std::iter::repeat_n('x', 1000).collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": "bench", "shard": (i % 10).to_string(), "tier": "data"}},
        "data": {"payload": payload, "index": i.to_string()},
    }))
    .unwrap_or_default()
}

async fn namespace(client: &Client, name: &str) -> anyhow::Result<()> {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let sim = Simulator::new();
    let client = Client::new(sim.clone(), "default");
    namespace(&client, "bench").await?;
    namespace(&client, "small").await?;
    let big: Api<ConfigMap> = Api::namespaced(client.clone(), "bench");
    let small: Api<ConfigMap> = Api::namespaced(client.clone(), "small");
    let p = PostParams::default();
    let mut rows: Vec<(String, String)> = Vec::new();

    let (rss0, _) = memory();
    let start = Instant::now();
    for i in 0..OBJECTS {
        big.create(&p, &config_map(&format!("cm-{i:05}"), i)).await?;
    }
    let load = start.elapsed();
    let (rss1, hwm1) = memory();
    rows.push((
        format!("create {OBJECTS} ConfigMaps (~1 KiB each)"),
        format!(
            "{:.0} creates/s ({:.2} s)",
            OBJECTS as f64 / load.as_secs_f64(),
            load.as_secs_f64()
        ),
    ));
    rows.push((
        "VmRSS before / after load".into(),
        format!("{} MiB / {} MiB", rss0 / 1024, rss1 / 1024),
    ));
    rows.push((
        "memory per object (RSS delta, incl. watch log)".into(),
        format!("{:.1} KiB", (rss1.saturating_sub(rss0)) as f64 / OBJECTS as f64),
    ));
    rows.push(("VmHWM after load".into(), format!("{} MiB", hwm1 / 1024)));

    let start = Instant::now();
    let mut gets = 0usize;
    while start.elapsed() < RUN_FOR {
        big.get(&format!("cm-{:05}", (gets * 7919) % OBJECTS)).await?;
        gets += 1;
    }
    rows.push((
        "get".into(),
        format!("{:.0} gets/s", gets as f64 / start.elapsed().as_secs_f64()),
    ));

    for i in 0..LIST_SIZE {
        small.create(&p, &config_map(&format!("cm-{i:05}"), i)).await?;
    }
    let start = Instant::now();
    let mut lists = 0usize;
    while start.elapsed() < RUN_FOR {
        let l = small.list(&ListParams::default()).await?;
        anyhow::ensure!(l.items.len() == LIST_SIZE, "list returned {}", l.items.len());
        lists += 1;
    }
    rows.push((
        format!("list of {LIST_SIZE} ConfigMaps"),
        format!("{:.1} lists/s", lists as f64 / start.elapsed().as_secs_f64()),
    ));
    let start = Instant::now();
    let mut sel = 0usize;
    while start.elapsed() < RUN_FOR {
        let l = big.list(&ListParams::default().labels("shard=3")).await?;
        anyhow::ensure!(
            l.items.len() == OBJECTS / 10,
            "selector list returned {}",
            l.items.len()
        );
        sel += 1;
    }
    rows.push((
        format!("list with labelSelector over {OBJECTS} ({} match)", OBJECTS / 10),
        format!("{:.1} lists/s", sel as f64 / start.elapsed().as_secs_f64()),
    ));

    let rv = small
        .list(&ListParams::default().limit(1))
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut stream = small
        .watch(&WatchParams::default().timeout(120), &rv)
        .await?
        .boxed();
    let writer = {
        let small = small.clone();
        tokio::spawn(async move {
            let pp = PatchParams::default();
            for i in 0..WATCH_EVENTS {
                let name = format!("cm-{:05}", i % LIST_SIZE);
                let patch = Patch::Merge(json!({"data": {"index": format!("w{i}")}}));
                small.patch(&name, &pp, &patch).await?;
            }
            anyhow::Ok(())
        })
    };
    let start = Instant::now();
    let mut seen = 0usize;
    while seen < WATCH_EVENTS {
        match stream.try_next().await? {
            Some(WatchEvent::Modified(_)) => seen += 1,
            Some(_) => {}
            None => anyhow::bail!("watch ended after {seen} events"),
        }
    }
    let took = start.elapsed();
    writer.await??;
    rows.push((
        format!("watch: {WATCH_EVENTS} MODIFIED delivered (writer via merge patch)"),
        format!("{:.0} events/s", seen as f64 / took.as_secs_f64()),
    ));
    let (rss2, hwm2) = memory();
    rows.push((
        "VmRSS / VmHWM at end".into(),
        format!("{} MiB / {} MiB", rss2 / 1024, hwm2 / 1024),
    ));

    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    println!("\ncvo simulator through kube::Client (in process)\n");
    println!("{:w$}  result", "measure");
    println!("{}  {}", "-".repeat(w), "-".repeat(30));
    for (k, v) in rows {
        println!("{k:w$}  {v}");
    }
    Ok(())
}
