//! `cvo demo --registry HOST:PORT`: the demo's releases in a local registry.
//!
//! When the registry answers `GET /v2/` with 200 within [`PROBE_TIMEOUT`], [`publish`]:
//! - generates a demo signing key (Ed25519, in memory only: nothing of the secret key is
//!   written anywhere; [`crate::reconcile::signature::sign`]);
//! - adds the `release-verification` ConfigMap with its public key to each embedded payload
//!   (in the demo's temporary directory), as every real release carries one;
//! - pushes each payload as a release image `HOST:PORT/`[`REPO`]`:<version>`
//!   ([`crate::reconcile::payload::retrieve::push`]);
//! - signs each pushed digest and returns the signatures as ConfigMaps for
//!   `openshift-config-managed` (one per digest, labelled
//!   `release.openshift.io/verification-signatures`, as `oc adm release mirror` writes them),
//!   which the engine's `ClusterVerifier` reads.
//!
//! The caller then serves the update graph with each node's payload rewritten to the pushed
//! digest ([`rewrite_graph`]) and gives the engine the registry resolver every engine on a
//! cluster uses (pull, verify, cache). When no registry answers, the demo runs on the
//! embedded payloads and says so ([`ReleaseSource::Embedded`]).

use std::{
    collections::BTreeMap,
    path::Path,
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::ConfigMap;

use crate::reconcile::{
    payload::retrieve::{is_loopback, push},
    signature::{configmap::digest_signatures_config_map, sign},
};

/// The registry the demo probes when neither `--registry` nor `CVO_DEMO_REGISTRY` is given:
/// where Debian's `docker-registry` (and `registry:2`) listen by default.
pub const DEFAULT_REGISTRY: &str = "127.0.0.1:5000";
/// How long the probe of `/v2/` may take before the demo falls back to the embedded payloads.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(500);
/// The repository the demo pushes its releases to (a mirror of upstream's).
pub const REPO: &str = "openshift-release-dev/ocp-release";
/// The file the verification ConfigMap is written to in each payload's `release-manifests/`.
pub const VERIFICATION_FILE: &str = "0000_90_cluster-version-operator_02_release-verification.json";
/// The data key of the demo's public key in that ConfigMap.
pub const KEY_NAME: &str = "verifier-public-key-cvo-demo";

/// Where the demo's releases come from.
#[derive(Clone, Debug)]
pub enum ReleaseSource {
    /// Pushed to a registry: the registry, the pushed image by version, how long key generation
    /// took, and how long the whole publication (key, pushes, signatures) took.
    Registry {
        /// `HOST:PORT`.
        registry: String,
        /// `HOST:PORT/REPO@sha256:<hex>` by release version.
        images: BTreeMap<String, String>,
        /// Key generation, wall time.
        keygen: Duration,
        /// Key generation, pushes and signatures, wall time.
        took: Duration,
    },
    /// The payloads embedded in the binary; why not a registry (`None`: none was asked for).
    Embedded(Option<String>),
}

impl ReleaseSource {
    /// One line for the event log, e.g. `releases from the registry 127.0.0.1:5000
    /// (openshift-release-dev/ocp-release 4.16.3, 4.16.4, 4.16.5; pushed and signed with a demo
    /// key in 0.4 s, the key generated in 2 ms)`.
    pub fn line(&self) -> String {
        match self {
            ReleaseSource::Registry {
                registry,
                images,
                keygen,
                took,
            } => crate::l10n::trf!(
                "demo-releases-registry",
                "releases from the registry {registry} ({repo} {tags}; pushed and signed with a demo key in {took} s, the key generated in {keygen} ms)",
                registry = registry,
                repo = REPO,
                tags = images.keys().cloned().collect::<Vec<_>>().join(", "),
                took = format!("{:.1}", took.as_secs_f64()),
                keygen = keygen.as_millis().to_string()
            ),
            ReleaseSource::Embedded(None) => crate::l10n::tr!(
                "demo-releases-embedded",
                "releases embedded in cvo (no registry asked for)"
            )
            .into(),
            ReleaseSource::Embedded(Some(why)) => crate::l10n::trf!(
                "demo-releases-embedded-because",
                "releases embedded in cvo ({why})",
                why = why
            ),
        }
    }

    /// The short form for the dashboard header: `registry HOST:PORT` or `embedded releases`.
    pub fn short(&self) -> String {
        match self {
            ReleaseSource::Registry { registry, .. } => {
                crate::l10n::trf!("demo-source-registry", "registry {registry}", registry = registry)
            }
            ReleaseSource::Embedded(_) => {
                crate::l10n::tr!("demo-source-embedded", "embedded releases").into()
            }
        }
    }
}

/// Whether the registry at `registry` (`HOST:PORT`) answers `GET /v2/` with 200 within
/// [`PROBE_TIMEOUT`]: plain HTTP on loopback, HTTPS elsewhere.
///
/// # Errors
/// Why not, one line naming the URL (connection refused, timeout, another status).
pub async fn probe(registry: &str) -> Result<(), String> {
    crate::reconcile::payload::retrieve::install_crypto_provider();
    let scheme = if is_loopback(registry) { "http" } else { "https" };
    let url = format!("{scheme}://{registry}/v2/");
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .no_proxy()
        .build()
        .map_err(|e| format!("{url}: {e}"))?;
    let resp = client.get(&url).send().await.map_err(|e| {
        let why = if e.is_timeout() {
            crate::l10n::trf!(
                "demo-registry-timeout",
                "no answer within {ms} ms",
                ms = PROBE_TIMEOUT.as_millis().to_string()
            )
        } else if e.is_connect() {
            crate::l10n::tr!("demo-registry-refused", "connection refused").to_string()
        } else {
            e.to_string()
        };
        crate::l10n::trf!(
            "demo-registry-none",
            "no registry answers at {url}: {why}",
            url = url,
            why = why
        )
    })?;
    match resp.status() {
        s if s.is_success() => Ok(()),
        reqwest::StatusCode::UNAUTHORIZED => Err(crate::l10n::trf!(
            "demo-registry-credentials",
            "{url} asks for credentials; the demo pushes without any",
            url = url
        )),
        s => Err(crate::l10n::trf!(
            "demo-registry-not-one",
            "{url} answered {status}, not a registry",
            url = url,
            status = s.to_string()
        )),
    }
}

/// The verification ConfigMap of the demo releases: `armored` as [`KEY_NAME`], and as its one
/// store (a verification ConfigMap must name one) the `file://` directory `store`, which the
/// demo leaves empty: the signatures are in ConfigMaps, looked at first. Annotated as
/// upstream's release-verification ConfigMap is (`manifests.rhel/0000_90_cluster-update-keys_configmap.yaml`
/// in openshift/cluster-update-keys).
pub fn verification_config_map(armored: &str, store: &Path) -> serde_json::Value {
    crate::reconcile::signature::sign::verification_config_map(
        KEY_NAME,
        armored,
        "store-cvo-demo",
        &format!("file://{}", store.display()),
    )
}

/// What [`publish`] made.
#[derive(Debug)]
pub struct Published {
    /// See [`ReleaseSource::Registry`].
    pub source: ReleaseSource,
    /// Pushed image by release version.
    pub images: BTreeMap<String, String>,
    /// The signatures, one ConfigMap per digest, for `openshift-config-managed`.
    pub signature_config_maps: Vec<ConfigMap>,
}

/// Generates the demo key, adds its verification ConfigMap (store: the empty directory
/// `store`, created here) to each payload of `payloads` (version → directory), pushes each to
/// `registry` and signs each pushed digest (see the module documentation).
///
/// # Errors
/// One line naming the step, the payload or the image: writing the ConfigMap, building a layer,
/// the push, key generation or signing.
pub async fn publish(
    registry: &str,
    payloads: &BTreeMap<String, &Path>,
    store: &Path,
) -> Result<Published, String> {
    let started = Instant::now();
    std::fs::create_dir_all(store).map_err(|e| format!("{}: {e}", store.display()))?;
    let key = sign::generate_signing_key("cvo demo <cvo-demo@localhost>")?;
    let keygen = started.elapsed();
    let armored = sign::armored_public_key(&key)?;
    let cm = verification_config_map(&armored, store).to_string();
    let reference = format!("{registry}/{REPO}");
    let mut images = BTreeMap::new();
    let mut signature_config_maps = Vec::new();
    for (version, dir) in payloads {
        let file = dir.join("release-manifests").join(VERIFICATION_FILE);
        std::fs::write(&file, &cm).map_err(|e| format!("{}: {e}", file.display()))?;
        let layer = push::payload_layer(dir).map_err(|e| e.to_string())?;
        let image = push::push_image(registry, REPO, version, vec![layer], is_loopback(registry))
            .await
            .map_err(|e| e.to_string())?;
        let digest = image
            .rsplit_once('@')
            .map(|(_, d)| d.to_string())
            .ok_or_else(|| format!("pushing {reference}:{version}: no digest in {image}"))?;
        let sig = sign::atomic_signature(&key, &reference, &digest, "cvo demo")?;
        signature_config_maps.push(digest_signatures_config_map(&digest, &[sig])?);
        images.insert(version.clone(), image);
    }
    Ok(Published {
        source: ReleaseSource::Registry {
            registry: registry.to_string(),
            images: images.clone(),
            keygen,
            took: started.elapsed(),
        },
        images,
        signature_config_maps,
    })
}

/// The update graph `json` (Cincinnati JSON) with the payload of each node whose version is in
/// `images` replaced by that image, and its `manifestref` metadata by the image's digest.
///
/// # Errors
/// `json` is not a JSON object with a `nodes` array.
pub fn rewrite_graph(json: &str, images: &BTreeMap<String, String>) -> Result<String, String> {
    let mut g: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("assets/update-graph.json: {e}"))?;
    let nodes = g["nodes"]
        .as_array_mut()
        .ok_or("assets/update-graph.json: no nodes array")?;
    for n in nodes {
        let Some(image) = n["version"].as_str().and_then(|v| images.get(v)) else {
            continue;
        };
        n["payload"] = image.clone().into();
        if let Some((_, digest)) = image.rsplit_once('@')
            && n["metadata"].is_object()
        {
            n["metadata"]["io.openshift.upgrades.graph.release.manifestref"] = digest.into();
        }
    }
    Ok(g.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_names_the_pushed_images() {
        let json = include_str!("../../assets/update-graph.json");
        let d = format!("sha256:{}", "1f".repeat(32));
        let img = format!("127.0.0.1:5000/{REPO}@{d}");
        let images = BTreeMap::from([("4.16.4".to_string(), img.clone())]);
        let g = crate::reconcile::updates::graph::Graph::parse(
            rewrite_graph(json, &images).expect("rewrite").as_bytes(),
        )
        .expect("parse");
        assert_eq!(g.image_of("4.16.4"), Some(img.as_str()));
        let n = g
            .nodes
            .iter()
            .find(|n| n.version.to_string() == "4.16.4")
            .expect("node");
        assert_eq!(
            n.metadata.get("io.openshift.upgrades.graph.release.manifestref"),
            Some(&d)
        );
        // Other nodes keep their images.
        assert!(g.image_of("4.16.3").is_some_and(|i| i.starts_with("quay.io/")));
    }

    #[tokio::test]
    async fn a_closed_port_is_no_registry() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("port")
            .port();
        let e = probe(&format!("127.0.0.1:{port}")).await.expect_err("closed");
        assert_eq!(
            e,
            format!("no registry answers at http://127.0.0.1:{port}/v2/: connection refused")
        );
        let line = ReleaseSource::Embedded(Some(e)).line();
        assert!(
            line.starts_with("releases embedded in cvo (no registry answers at http://127.0.0.1:"),
            "{line}"
        );
    }
}
