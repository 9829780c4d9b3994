//! Release pulls in restricted networks, against a real registry (Debian's `docker-registry`,
//! started per test on a random loopback port): ImageDigestMirrorSet and
//! ImageContentSourcePolicy mirrors for pulls by digest (the engine on the simulator pulls a
//! release pushed only to the mirror repository by its source pull spec, verified as the
//! source pull spec; a dead mirror falls back to the source; `NeverContactSource` with a dead
//! mirror is one error naming what was tried), zstd layers, and the cluster Proxy's `noProxy`
//! and `httpProxy` for a plain-HTTP registry.
//!
//! Without `docker-registry` the tests skip with a printed reason; under CI that is a failure.

mod common;

use std::{
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use common::Registry;
use cvo::{
    reconcile::{
        Engine, EngineConfig, EngineTimings,
        api::LocalPayloads,
        payload::retrieve::{RegistryPayloads, ReleaseVerifier, RetrieveOptions, Retriever, mirrors, push},
    },
    sim::Simulator,
};
use serde_json::json;

/// The payload these tests push for `version`.
fn write_payload(dir: &Path, version: &str) {
    common::write_small_release(dir, version, "mirror", "openshift-mirror-test", "mirrored");
}

fn options(cache: &Path) -> RetrieveOptions {
    let mut o = RetrieveOptions::new(Some(cache.to_path_buf()));
    (o.http_proxy, o.https_proxy, o.no_proxy) = (None, None, None);
    o
}

fn rule(source: &str, mirrors: &[&str], never: bool) -> Vec<mirrors::MirrorRule> {
    mirrors::merge([(
        "ImageDigestMirrorSet/test".to_string(),
        source.to_string(),
        mirrors.iter().map(|m| (*m).to_string()).collect(),
        never,
    )])
}

/// A port on 127.0.0.1 nothing listens on.
fn dead_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Records what it was asked to verify and accepts it.
#[derive(Default)]
struct Record(Mutex<Vec<(String, String)>>);

impl ReleaseVerifier for Record {
    fn verify<'a>(
        &'a self,
        pullspec: &'a str,
        digest: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), String>> {
        self.0
            .lock()
            .expect("lock")
            .push((pullspec.to_string(), digest.to_string()));
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_pulls_a_release_from_an_idms_mirror_by_its_source_pull_spec() {
    let Some(reg) = Registry::start("the_engine_pulls_a_release_from_an_idms_mirror_by_its_source_pull_spec")
    else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let (p1, p2) = (work.path().join("p1"), work.path().join("p2"));
    write_payload(&p1, "1.0.0");
    write_payload(&p2, "2.0.0");
    let layer = push::payload_layer(&p2).expect("layer");
    // Pushed only to the mirror repository; the pull spec names the source repository.
    let in_mirror = push::push_image(&reg.addr, "mirror/ocp/release", "2.0.0", vec![layer], true)
        .await
        .expect("push");
    let digest = in_mirror.rsplit_once('@').expect("digest").1.to_string();
    let image = format!("{}/ocp/release@{digest}", reg.addr);

    let sim = Simulator::new();
    let client = kube::Client::new(sim.clone(), "default");
    let ar = |group: &str, version: &str, kind: &str| {
        kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(group, version, kind))
    };
    let idms = ar("config.openshift.io", "v1", "ImageDigestMirrorSet");
    let icsp = ar("operator.openshift.io", "v1alpha1", "ImageContentSourcePolicy");
    let create = |r: &kube::api::ApiResource, obj: serde_json::Value| {
        let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(client.clone(), r);
        async move {
            let o: kube::api::DynamicObject = serde_json::from_value(obj).expect("object");
            api.create(&Default::default(), &o).await.expect("create");
        }
    };
    // A dead mirror first (IDMS "a"), then the live one (ICSP): both tried in order, the source
    // never (it does not have the image, and policy forbids it).
    let dead = format!("127.0.0.1:{}/gone", dead_port());
    create(
        &idms,
        json!({"apiVersion": "config.openshift.io/v1", "kind": "ImageDigestMirrorSet",
               "metadata": {"name": "a"},
               "spec": {"imageDigestMirrors": [{"source": format!("{}/ocp", reg.addr), "mirrors": [dead],
                        "mirrorSourcePolicy": "NeverContactSource"}]}}),
    )
    .await;
    create(
        &icsp,
        json!({"apiVersion": "operator.openshift.io/v1alpha1", "kind": "ImageContentSourcePolicy",
               "metadata": {"name": "b"},
               "spec": {"repositoryDigestMirrors": [{"source": format!("{}/ocp", reg.addr),
                        "mirrors": [format!("{}/mirror/ocp", reg.addr)]}]}}),
    )
    .await;
    let rules = mirrors::read(&client).await;
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(
        rules[0].mirrors,
        [dead.clone(), format!("{}/mirror/ocp", reg.addr)]
    );
    assert!(rules[0].never_contact_source);

    let own = LocalPayloads::pseudo_pull_spec(&p1).expect("pseudo");
    let verifier = Arc::new(Record::default());
    let resolver = RegistryPayloads::new(
        LocalPayloads {
            own_image: own.clone(),
            own_dir: p1.clone(),
            ..LocalPayloads::default()
        },
        Retriever::new(options(&work.path().join("cache"))),
    )
    .with_verifier(verifier.clone())
    .with_cluster_egress(client.clone());
    let mut cfg = EngineConfig::local(p1.clone(), Some(own)).expect("config");
    cfg.payloads = Arc::new(resolver);
    cfg.timings = EngineTimings::scaled(0.05);
    let h = Engine::spawn(client.clone(), cfg);
    let limit = Duration::from_secs(30);
    common::wait_until("1.0.0 completed", limit, || h.status.borrow().is_completed()).await;
    let cvs: kube::Api<cvo::openshift::ClusterVersion> = kube::Api::all(client.clone());
    cvs.patch(
        "version",
        &Default::default(),
        &kube::api::Patch::Merge(
            json!({"spec": {"desiredUpdate": {"version": "2.0.0", "image": image, "force": true}}}),
        ),
    )
    .await
    .expect("patch");
    common::wait_until("2.0.0 completed", limit, || {
        let s = h.status.borrow();
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.image == image)
    })
    .await;
    let cv = h.status.borrow().cluster_version.clone().expect("cv");
    assert_eq!(cv.history[0].version, "2.0.0");
    assert!(
        cv.history[0].verified,
        "the mirror's release verified as the source's"
    );
    // The signature was checked for the source pull spec and its digest.
    assert_eq!(
        verifier.0.lock().expect("lock").as_slice(),
        [(image.clone(), digest.clone())]
    );
    // The payload of the mirror was applied.
    let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(client.clone(), "openshift-mirror-test");
    let cm = cms
        .get("mirrored")
        .await
        .expect("applied from the mirror's payload");
    assert_eq!(
        cm.data.unwrap_or_default().get("version").map(String::as_str),
        Some("2.0.0")
    );
    // The registry was asked for the mirror's repository, never the source's.
    let reqs = reg.requests();
    assert!(
        reqs.iter()
            .any(|r| r.contains("/v2/mirror/ocp/release/manifests/")),
        "{reqs:?}"
    );
    assert!(!reqs.iter().any(|r| r.contains("/v2/ocp/release/")), "{reqs:?}");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrors_fall_back_to_the_source_unless_never_contact_source() {
    let Some(reg) = Registry::start("mirrors_fall_back_to_the_source_unless_never_contact_source") else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let p = work.path().join("p");
    write_payload(&p, "3.0.0");
    let layer = push::payload_layer(&p).expect("layer");
    let at_source = push::push_image(&reg.addr, "ocp/release", "3.0.0", vec![layer], true)
        .await
        .expect("push");
    let digest = at_source.rsplit_once('@').expect("digest").1.to_string();
    let dead = format!("127.0.0.1:{}/mirror", dead_port());
    let source = format!("{}/ocp", reg.addr);

    // A dead mirror, then the source, which has it.
    let mut o = options(&work.path().join("cache-1"));
    o.mirrors = rule(&source, &[&dead], false);
    let got = Retriever::new(o)
        .retrieve(&at_source, "3.0.0", &|_| {})
        .await
        .expect("pulled from the source");
    assert_eq!((got.version.as_str(), got.mirror.as_deref()), ("3.0.0", None));

    // A dead mirror, then a live one (the same image pushed to another repository): the live
    // one serves it, and the result says so.
    let layer = push::payload_layer(&p).expect("layer");
    let copy = push::push_image(&reg.addr, "copy/release", "3.0.0", vec![layer], true)
        .await
        .expect("push");
    assert_eq!(copy.rsplit_once('@').map(|c| c.1), Some(digest.as_str()));
    let mut o = options(&work.path().join("cache-m"));
    o.mirrors = rule(&source, &[&dead, &format!("{}/copy", reg.addr)], true);
    let got = Retriever::new(o)
        .retrieve(&at_source, "3.0.0", &|_| {})
        .await
        .expect("pulled from the live mirror");
    assert_eq!(got.mirror.as_deref(), Some(copy.as_str()));
    assert_eq!(got.resolved.image, at_source);

    // NeverContactSource and a dead mirror: one error naming the mirrors tried and the policy.
    let mut o = options(&work.path().join("cache-2"));
    let also_dead = format!("127.0.0.1:{}/other", dead_port());
    o.mirrors = rule(&source, &[&dead, &also_dead], true);
    let err = Retriever::new(o)
        .retrieve(&at_source, "3.0.0", &|_| {})
        .await
        .expect_err("no mirror has it")
        .to_string();
    assert!(
        err.starts_with(&format!(
            "{at_source}: no mirror served it: tried {dead}/release@{digest} ("
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("; {also_dead}/release@{digest} (")),
        "{err}"
    );
    assert!(
        err.ends_with(
            "; the source is not contacted (mirrorSourcePolicy NeverContactSource in ImageDigestMirrorSet/test)"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        !work
            .path()
            .join("cache-2")
            .join(digest.replace(':', "-"))
            .exists()
    );

    // A tag is not a digest: mirrors do not apply, the source is asked.
    let mut o = options(&work.path().join("cache-3"));
    o.mirrors = rule(&source, &[&dead], true);
    let tag = format!("{}/ocp/release:3.0.0", reg.addr);
    let err = Retriever::new(o)
        .retrieve(&tag, "3.0.0", &|_| {})
        .await
        .expect_err("the digest pull honours the policy")
        .to_string();
    assert!(
        err.starts_with(&format!(
            "{tag}: no mirror served it: tried {dead}/release@{digest} ("
        )),
        "{err}"
    );
}

/// A zstd tar layer of `dir`'s payload (`application/vnd.oci.image.layer.v1.tar+zstd`).
fn zstd_layer(dir: &Path) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    b.append_dir_all("manifests", dir.join("manifests")).expect("tar");
    b.append_dir_all("release-manifests", dir.join("release-manifests"))
        .expect("tar");
    let tarball = b.into_inner().expect("tar");
    ruzstd::encoding::compress_to_vec(&tarball[..], ruzstd::encoding::CompressionLevel::Fastest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zstd_layer_is_pulled_and_extracted() {
    let Some(reg) = Registry::start("a_zstd_layer_is_pulled_and_extracted") else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let p = work.path().join("p");
    write_payload(&p, "4.0.0");
    let layer = zstd_layer(&p);
    assert_eq!(&layer[..4], [0x28, 0xb5, 0x2f, 0xfd]);
    let image = push::push_image(&reg.addr, "ocp/release", "4.0.0", vec![layer], true)
        .await
        .expect("push");
    // The manifest names the layer tar+zstd.
    let digest = image.rsplit_once('@').expect("digest").1;
    let manifest: serde_json::Value = reqwest_manifest(&reg.addr, "ocp/release", digest).await;
    assert_eq!(
        manifest["layers"][0]["mediaType"],
        "application/vnd.oci.image.layer.v1.tar+zstd"
    );
    let got = Retriever::new(options(&work.path().join("cache")))
        .retrieve(&image, "4.0.0", &|_| {})
        .await
        .expect("pulled");
    assert_eq!(got.version, "4.0.0");
    assert_eq!(
        std::fs::read(got.dir.join("release-manifests/0000_10_mirror_configmap.yaml")).expect("read"),
        std::fs::read(p.join("release-manifests/0000_10_mirror_configmap.yaml")).expect("read")
    );
}

/// The manifest `repo@digest` from the registry at `addr`, as JSON.
async fn reqwest_manifest(addr: &str, repo: &str, digest: &str) -> serde_json::Value {
    cvo::reconcile::payload::retrieve::install_crypto_provider();
    let body = reqwest::Client::new()
        .get(format!("http://{addr}/v2/{repo}/manifests/{digest}"))
        .header("Accept", "application/vnd.oci.image.manifest.v1+json")
        .send()
        .await
        .expect("GET manifest")
        .bytes()
        .await
        .expect("body");
    serde_json::from_slice(&body).expect("manifest JSON")
}

/// Sets the status of the cluster Proxy object (created when absent) in `sim`.
async fn set_cluster_proxy(client: &kube::Client, status: serde_json::Value) {
    let ar = kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
        "config.openshift.io",
        "v1",
        "Proxy",
    ));
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(client.clone(), &ar);
    if api.get_opt("cluster").await.expect("get").is_none() {
        let o: kube::api::DynamicObject = serde_json::from_value(json!({
            "apiVersion": "config.openshift.io/v1", "kind": "Proxy",
            "metadata": {"name": "cluster"}, "spec": {}
        }))
        .expect("object");
        api.create(&Default::default(), &o).await.expect("create");
    }
    api.patch_status(
        "cluster",
        &Default::default(),
        &kube::api::Patch::Merge(json!({ "status": status })),
    )
    .await
    .expect("status");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_proxy_carries_registry_pulls_and_no_proxy_bypasses_it() {
    let Some(reg) = Registry::start("the_cluster_proxy_carries_registry_pulls_and_no_proxy_bypasses_it")
    else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let p = work.path().join("p");
    write_payload(&p, "5.0.0");
    let layer = push::payload_layer(&p).expect("layer");
    let pushed = push::push_image(&reg.addr, "ocp/release", "5.0.0", vec![layer], true)
        .await
        .expect("push");
    let digest = pushed.rsplit_once('@').expect("digest").1.to_string();
    // The registry by a name only the proxy resolves (plain HTTP: listed insecure).
    let port = reg.addr.rsplit_once(':').expect("port").1;
    let name = format!("registry.test:{port}");
    let image = format!("{name}/ocp/release@{digest}");
    let proxy = common::Proxy::start(common::Protocol::Connect);
    let sim = Simulator::new();
    let client = kube::Client::new(sim.clone(), "default");
    let retrieve = |cache: &str| {
        let client = client.clone();
        let (cache, name, image) = (work.path().join(cache), name.clone(), image.clone());
        async move {
            let mut o = options(&cache);
            o.insecure_registries = vec![name];
            cvo::reconcile::payload::retrieve::egress::ClusterEgress::read(&client)
                .await
                .apply(&mut o);
            Retriever::new(o).retrieve(&image, "5.0.0", &|_| {}).await
        }
    };

    set_cluster_proxy(
        &client,
        json!({"httpProxy": proxy.url("http"), "httpsProxy": proxy.url("http"), "noProxy": ".cluster.local,10.0.0.0/16"}),
    )
    .await;
    let got = retrieve("cache-1").await.expect("pulled through the proxy");
    assert_eq!(got.version, "5.0.0");
    let targets = proxy.targets();
    assert!(!targets.is_empty());
    assert!(targets.iter().all(|t| *t == name), "{targets:?}");

    // noProxy covering the registry: a direct connection, which cannot resolve the name.
    set_cluster_proxy(
        &client,
        json!({"httpProxy": proxy.url("http"), "httpsProxy": proxy.url("http"), "noProxy": "registry.test"}),
    )
    .await;
    let n = proxy.targets().len();
    let err = retrieve("cache-2").await.expect_err("direct").to_string();
    assert!(
        err.starts_with(&format!("pulling {image} from {name}: ")),
        "{err}"
    );
    assert!(err.contains("dns error"), "the cause is named: {err}");
    assert_eq!(proxy.targets().len(), n, "noProxy was not honoured");
}
