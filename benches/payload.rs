//! `cargo bench --bench payload`: load + filter + task graph of a synthetic release payload of
//! 1,000 manifests in 60 components across 40 run levels (~10 MB of YAML, written to a temp dir
//! by the bench itself). Prints the best and median wall time of several runs and the peak RSS
//! (`VmHWM` of /proc/self/status).

use std::{fmt::Write as _, path::Path, time::Instant};

use cvo::reconcile::payload::{self, LoadOptions, PayloadState, Task};

const MANIFESTS: usize = 1000;
const COMPONENTS: usize = 60;
const LEVELS: usize = 40;
const TARGET_BYTES: usize = 10 * 1024 * 1024;

fn write_payload(root: &Path) -> std::io::Result<usize> {
    let rel = root.join("release-manifests");
    std::fs::create_dir_all(&rel)?;
    std::fs::create_dir_all(root.join("manifests"))?;
    std::fs::write(
        rel.join("release-metadata"),
        r#"{"kind":"cincinnati-metadata-v0","version":"4.18.3","metadata":{"io.openshift.upgrades.graph.release.channels":"stable-4.18,fast-4.18"}}"#,
    )?;
    std::fs::write(
        rel.join("image-references"),
        "kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata:\n  name: 4.18.3\n",
    )?;
    let per_doc_padding = TARGET_BYTES / MANIFESTS;
    let mut total = 0;
    for i in 0..MANIFESTS {
        let component = i % COMPONENTS;
        let level = (component * LEVELS / COMPONENTS) * 2 + 1;
        let mut doc = String::new();
        let _ = write!(
            doc,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: openshift-comp-{component}\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
        );
        if i % 7 == 0 {
            doc.push_str("    release.openshift.io/feature-set: TechPreviewNoUpgrade\n");
        }
        if i % 11 == 0 {
            doc.push_str("    capability.openshift.io/name: Console\n");
        }
        doc.push_str("data:\n");
        let mut k = 0;
        while doc.len() < per_doc_padding {
            let _ = writeln!(
                doc,
                "  key-{k}: \"value {k} of manifest {i} with some text to make it longer\""
            );
            k += 1;
        }
        let name = format!("0000_{level:02}_comp-{component}_{i:04}.yaml");
        total += doc.len();
        std::fs::write(rel.join(name), doc)?;
    }
    Ok(total)
}

fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("bench: temp dir: {e}");
            return;
        }
    };
    let bytes = match write_payload(dir.path()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("bench: writing payload: {e}");
            return;
        }
    };
    let rss_before = vm_hwm_kib().unwrap_or(0);
    let mut times = Vec::new();
    let mut summary = String::new();
    for _ in 0..7 {
        let t = Instant::now();
        let p = match payload::load_update(dir.path(), &LoadOptions::default()) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("bench: load: {e}");
                return;
            }
        };
        let (graph, workers) =
            payload::graph_for_state(Task::from_manifests(&p.manifests), PayloadState::Updating, 0);
        times.push(t.elapsed());
        summary = format!(
            "{} manifests included, {} excluded, {} graph nodes, {workers} workers, hash {}",
            p.manifests.len(),
            p.excluded.len(),
            graph.nodes.len(),
            p.manifest_hash
        );
    }
    times.sort();
    println!(
        "payload bench: {MANIFESTS} manifests, {COMPONENTS} components, {LEVELS} run levels, {:.1} MB YAML",
        bytes as f64 / 1e6
    );
    println!("  {summary}");
    println!(
        "  load+filter+graph: best {:.1} ms, median {:.1} ms (7 runs)",
        times[0].as_secs_f64() * 1e3,
        times[times.len() / 2].as_secs_f64() * 1e3
    );
    println!(
        "  peak RSS (VmHWM): {:.1} MB (before loading: {:.1} MB)",
        vm_hwm_kib().unwrap_or(0) as f64 / 1024.0,
        rss_before as f64 / 1024.0
    );
}
