//! Release images pulled from a real registry: Debian's `docker-registry` (the CNCF
//! distribution registry) started by each test on a random loopback port with its own storage.
//! The tests build release images themselves (a tar.gz layer of a generated payload, an OCI
//! config and manifest, pushed with `oci-client`): no prebuilt blobs. They pull them by tag and
//! digest, serve a second use from the cache with the registry stopped, refuse hostile layers
//! and a corrupted blob with nothing written outside the cache, and run the engine through an
//! update whose target is a registry digest (with a refusing verifier, then forced).
//!
//! Without `docker-registry` on the PATH (or `/usr/bin`) the tests skip with a printed reason;
//! under CI that is a failure.

mod common;

use common::Registry;
use std::{
    io::Write as _,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use cvo::{
    openshift::condition::find,
    reconcile::{
        Engine, EngineConfig, EngineTimings,
        api::{LocalPayloads, PullProgress},
        payload::retrieve::{RegistryPayloads, ReleaseVerifier, RetrieveOptions, Retriever},
    },
    sim::Simulator,
};
use serde_json::json;

/// The payload these tests push for `version`.
fn write_payload(dir: &Path, version: &str) {
    common::write_small_release(dir, version, "reg", "openshift-reg", "settings");
}

/// A gzip tar layer holding `dir`'s `manifests/` and `release-manifests/` plus a filler file
/// outside them.
fn payload_layer(dir: &Path) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    b.append_dir_all("manifests", dir.join("manifests")).expect("tar");
    b.append_dir_all("release-manifests", dir.join("release-manifests"))
        .expect("tar");
    let filler = vec![0x5au8; 64 << 10];
    let mut h = tar::Header::new_gnu();
    h.set_path("usr/share/filler").expect("path");
    h.set_size(filler.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    b.append(&h, &filler[..]).expect("tar");
    b.into_inner().expect("tar").finish().expect("gzip")
}

/// A gzip tar layer of raw entries `(name, type, size claim, data, link target)`; the names
/// are written as raw header bytes, so hostile ones go through.
fn raw_layer(entries: &[(&str, tar::EntryType, u64, &[u8], &str)], truncate: bool) -> Vec<u8> {
    let mut tarball = Vec::new();
    for (name, kind, size, data, link) in entries {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
        h.set_entry_type(*kind);
        h.set_size(*size);
        h.set_mode(0o644);
        h.set_cksum();
        tarball.extend_from_slice(h.as_bytes());
        tarball.extend_from_slice(data);
        let pad = (512 - data.len() % 512) % 512;
        tarball.extend(std::iter::repeat_n(0u8, pad));
    }
    if !truncate {
        tarball.extend_from_slice(&[0u8; 1024]);
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tarball).expect("gzip");
    gz.finish().expect("gzip")
}

/// Pushes an image of `layers` as `addr/repo:tag` (the library's builder); returns
/// `addr/repo@digest`.
async fn push(addr: &str, repo: &str, tag: &str, layers: Vec<Vec<u8>>) -> String {
    cvo::reconcile::payload::retrieve::push::push_image(addr, repo, tag, layers, true)
        .await
        .expect("push")
}

fn options(cache: &Path) -> RetrieveOptions {
    let mut o = RetrieveOptions::new(Some(cache.to_path_buf()));
    o.http_proxy = None;
    o.https_proxy = None;
    o
}

/// Every path under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(base).expect("prefix").display().to_string());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(base, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_by_tag_and_digest_then_from_the_cache_without_the_registry() {
    let Some(mut reg) = Registry::start("pull_by_tag_and_digest_then_from_the_cache_without_the_registry")
    else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let payload = work.path().join("payload");
    write_payload(&payload, "2.0.0");
    let by_digest = push(&reg.addr, "ocp/release", "2.0.0", vec![payload_layer(&payload)]).await;
    let cache = work.path().join("cache");
    let r = Retriever::new(options(&cache));
    let seen = Mutex::new(Vec::<PullProgress>::new());
    let report = |p: &PullProgress| seen.lock().expect("lock").push(p.clone());
    let tag = format!("{}/ocp/release:2.0.0", reg.addr);
    let got = r.retrieve(&tag, "2.0.0", &report).await.expect("pull by tag");
    let digest = by_digest.rsplit_once('@').expect("digest").1.to_string();
    assert_eq!(got.resolved.digest, digest);
    assert_eq!(got.resolved.by_digest, by_digest);
    assert_eq!(got.version, "2.0.0");
    assert!(!got.from_cache);
    assert_eq!(got.dir, cache.join(digest.replace(':', "-")));
    assert_eq!(
        tree(&got.dir),
        [
            "manifests",
            "manifests/0000_00_cvo_namespace.yaml",
            "release-manifests",
            "release-manifests/0000_00_reg_namespace.yaml",
            "release-manifests/0000_10_reg_configmap.yaml",
            "release-manifests/image-references",
            "release-manifests/release-metadata",
        ]
    );
    assert_eq!(
        std::fs::read(got.dir.join("release-manifests/0000_10_reg_configmap.yaml")).expect("read"),
        std::fs::read(payload.join("release-manifests/0000_10_reg_configmap.yaml")).expect("read")
    );
    // Only the entry and nothing temporary is left in the cache.
    assert_eq!(
        tree(&cache).iter().filter(|p| !p.contains('/')).count(),
        1,
        "{:?}",
        tree(&cache)
    );
    let last = seen.lock().expect("lock").last().cloned().expect("progress");
    assert_eq!((last.layers_done, last.layers_total), (1, 1));
    assert_eq!(last.bytes_done, last.bytes_total);
    assert!(last.bytes_total > 0);
    assert_eq!(last.digest.as_deref(), Some(digest.as_str()));

    // A wrong expected version is refused with upstream's wording.
    let err = r
        .retrieve(&by_digest, "2.0.1", &|_| {})
        .await
        .expect_err("version");
    assert_eq!(
        err.to_string(),
        "release image version 2.0.0 does not match the expected upstream version 2.0.1"
    );

    // The same digest again, registry stopped: from the cache.
    reg.stop();
    let again = r.retrieve(&by_digest, "", &|_| {}).await.expect("from the cache");
    assert!(again.from_cache);
    assert_eq!(again.dir, got.dir);
    // A tag needs the registry: it is resolved, so this fails now.
    let err = r.retrieve(&tag, "", &|_| {}).await.expect_err("registry down");
    assert!(
        err.to_string()
            .starts_with(&format!("pulling {tag} from {}: ", reg.addr)),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_layers_are_refused_with_nothing_written_outside_the_cache() {
    let Some(reg) = Registry::start("hostile_layers_are_refused_with_nothing_written_outside_the_cache")
    else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let payload = work.path().join("payload");
    write_payload(&payload, "2.0.0");
    let good = payload_layer(&payload);
    let marker = format!("cvo-hostile-{}", std::process::id());
    let etc = format!("/tmp/{marker}");
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "dotdot",
            raw_layer(&[("release-manifests/../../../x", tar::EntryType::Regular, 1, b"x", "")], false),
            "layer entry \"release-manifests/../../../x\" escapes the image root (\"..\")".into(),
        ),
        (
            "absolute",
            raw_layer(&[(etc.as_str(), tar::EntryType::Regular, 1, b"x", "")], false),
            format!("layer entry \"{etc}\" is an absolute path"),
        ),
        (
            "symlink",
            raw_layer(
                &[
                    ("release-manifests/evil", tar::EntryType::Symlink, 0, b"", "/tmp"),
                    (&format!("release-manifests/evil/{marker}"), tar::EntryType::Regular, 1, b"x", ""),
                ],
                false,
            ),
            "layer entry \"release-manifests/evil\" links to \"/tmp\", outside manifests/ and release-manifests/".into(),
        ),
        (
            "hardlink",
            raw_layer(&[("release-manifests/passwd", tar::EntryType::Link, 0, b"", "etc/passwd")], false),
            "layer entry \"release-manifests/passwd\" links to \"etc/passwd\", outside manifests/ and release-manifests/".into(),
        ),
        (
            "huge",
            raw_layer(&[("release-manifests/huge", tar::EntryType::Regular, 10 << 30, b"", "")], true),
            "layer entry \"release-manifests/huge\" claims 10737418240 bytes, over the 67108864-byte cap for one file".into(),
        ),
    ];
    for (name, layer, want) in cases {
        let image = push(&reg.addr, "ocp/hostile", name, vec![good.clone(), layer]).await;
        let root = tempfile::tempdir().expect("tempdir");
        let cache = root.path().join("cache");
        let r = Retriever::new(options(&cache));
        let err = r.retrieve(&image, "", &|_| {}).await.expect_err(name).to_string();
        assert!(err.ends_with(&want), "{name}: {err}");
        // Nothing but the (empty) cache directory, nothing at the escape targets.
        assert_eq!(tree(root.path()), ["cache"], "{name}");
        assert!(
            !Path::new(&etc).exists() && !Path::new("/tmp").join(&marker).exists(),
            "{name}"
        );
        assert!(
            !root.path().join("x").exists() && !work.path().join("x").exists(),
            "{name}"
        );
    }

    // A blob corrupted in the registry's storage: the digest check refuses it.
    let image = push(&reg.addr, "ocp/corrupt", "1", vec![good.clone()]).await;
    let layer_digest = format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(&good));
    let blob = reg
        .storage
        .join("docker/registry/v2/blobs/sha256")
        .join(&layer_digest[..2])
        .join(&layer_digest)
        .join("data");
    let mut bytes = std::fs::read(&blob).expect("blob");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&blob, &bytes).expect("corrupt");
    let root = tempfile::tempdir().expect("tempdir");
    let cache = root.path().join("cache");
    let err = Retriever::new(options(&cache))
        .retrieve(&image, "", &|_| {})
        .await
        .expect_err("corrupt")
        .to_string();
    assert!(
        err.contains(&format!("layer sha256:{layer_digest} does not match its digest")),
        "{err}"
    );
    assert_eq!(tree(root.path()), ["cache"]);
}

/// A verifier that refuses every release, naming what it tried, once the test lets it answer
/// (so the test sees the retrieval pending).
struct Refuse(Arc<tokio::sync::Semaphore>);

impl ReleaseVerifier for Refuse {
    fn verify<'a>(
        &'a self,
        _pullspec: &'a str,
        digest: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let _permit = self.0.acquire().await.map_err(|e| e.to_string())?;
            Err(format!(
                "no signature for {digest} in stores [test-store] with keys [test-key]"
            ))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_updates_to_a_registry_digest_refused_unverified_then_forced() {
    let Some(reg) = Registry::start("the_engine_updates_to_a_registry_digest_refused_unverified_then_forced")
    else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let (p1, p2) = (work.path().join("p1"), work.path().join("p2"));
    write_payload(&p1, "1.0.0");
    write_payload(&p2, "2.0.0");
    let image = push(&reg.addr, "ocp/release", "2.0.0", vec![payload_layer(&p2)]).await;
    let sim = Simulator::new();
    let own = LocalPayloads::pseudo_pull_spec(&p1).expect("pseudo");
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let resolver = RegistryPayloads::new(
        LocalPayloads {
            own_image: own.clone(),
            own_dir: p1.clone(),
            ..LocalPayloads::default()
        },
        Retriever::new(options(&work.path().join("cache"))),
    )
    .with_verifier(Arc::new(Refuse(gate.clone())));
    let mut cfg = EngineConfig::local(p1.clone(), Some(own.clone())).expect("config");
    cfg.payloads = Arc::new(resolver);
    cfg.timings = EngineTimings::scaled(0.05);
    let client = kube::Client::new(sim.clone(), "default");
    let h = Engine::spawn(client.clone(), cfg);
    let cvs: kube::Api<cvo::openshift::ClusterVersion> = kube::Api::all(client.clone());
    let limit = Duration::from_secs(30);
    common::wait_until("1.0.0 completed", limit, || h.status.borrow().is_completed()).await;

    let digest = image.rsplit_once('@').expect("digest").1;
    let patch = |force: bool| json!({"spec": {"desiredUpdate": {"version": "2.0.0", "image": image, "force": force}}});
    cvs.patch(
        "version",
        &Default::default(),
        &kube::api::Patch::Merge(patch(false)),
    )
    .await
    .expect("patch");
    // While the verifier has not answered: ReleaseAccepted Unknown with upstream's message,
    // the pull's digest in the snapshot, the running release still reconciled.
    let retrieving = format!("Retrieving and verifying payload version=\"2.0.0\" image=\"{image}\"");
    common::wait_until("ReleaseAccepted Unknown (retrieving)", limit, || {
        let s = h.status.borrow();
        s.cluster_version
            .as_ref()
            .and_then(|c| find(&c.conditions, "ReleaseAccepted").cloned())
            .is_some_and(|c| {
                c.status == cvo::openshift::ConditionStatus::Unknown && c.message() == retrieving
            })
            && s.payload_pull
                .as_ref()
                .is_some_and(|p| p.digest.as_deref() == Some(digest))
    })
    .await;
    let s = h.status.borrow().clone();
    let pull = s.payload_pull.clone().expect("pull");
    assert_eq!((pull.image.as_str(), pull.layers_done), (image.as_str(), 0));
    assert!(
        s.desired.as_ref().is_some_and(|d| d.version == "1.0.0"),
        "{:?}",
        s.desired
    );
    gate.add_permits(1000);
    let want = format!(
        "Retrieving payload failed version=\"2.0.0\" image=\"{image}\" failure=The update cannot be verified: no signature for {digest} in stores [test-store] with keys [test-key]"
    );
    common::wait_until("ReleaseAccepted False (unverified)", limit, || {
        let s = h.status.borrow();
        s.cluster_version
            .as_ref()
            .and_then(|c| find(&c.conditions, "ReleaseAccepted").cloned())
            .is_some_and(|c| c.is_false() && c.message() == want)
    })
    .await;
    assert_eq!(h.status.borrow().payload_error.as_deref(), Some(want.as_str()));

    cvs.patch(
        "version",
        &Default::default(),
        &kube::api::Patch::Merge(patch(true)),
    )
    .await
    .expect("patch");
    common::wait_until("2.0.0 completed", limit, || {
        let s = h.status.borrow();
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.image == image)
    })
    .await;
    let s = h.status.borrow().clone();
    let cv = s.cluster_version.as_ref().expect("cv");
    let top = &cv.history[0];
    assert_eq!(
        (top.version.as_str(), top.image.as_str()),
        ("2.0.0", image.as_str())
    );
    assert!(!top.verified);
    let risks = top.accepted_risks.clone().unwrap_or_default();
    // First the verification failure, then the preconditions forced through (no channel).
    assert_eq!(
        risks.lines().next().unwrap_or_default(),
        format!(
            "Target release version=\"2.0.0\" image=\"{image}\" cannot be verified, but continuing anyway because the update was forced: no signature for {digest} in stores [test-store] with keys [test-key]"
        )
    );
    assert!(risks.contains("\nForced through blocking failures: "), "{risks}");
    let accepted = find(&cv.conditions, "ReleaseAccepted").expect("ReleaseAccepted");
    assert!(accepted.is_true(), "{accepted:?}");
    assert!(s.payload_pull.is_none());
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cvo_payload_pull_and_inspect_take_a_pull_spec() {
    let Some(reg) = Registry::start("cvo_payload_pull_and_inspect_take_a_pull_spec") else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let payload = work.path().join("payload");
    write_payload(&payload, "3.1.0");
    let image = push(&reg.addr, "ocp/release", "3.1.0", vec![payload_layer(&payload)]).await;
    let tag = format!("{}/ocp/release:3.1.0", reg.addr);
    let cache = work.path().join("cache");
    let out_dir = work.path().join("out");
    let out = common::cvo()
        .args(["payload", "pull", &tag])
        .arg(&out_dir)
        .arg("--cache-dir")
        .arg(&cache)
        .args(["--expect-version", "3.1.0"])
        .env_remove("REGISTRY_AUTH_FILE")
        .output()
        .expect("run cvo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), image);
    let digest = image.rsplit_once('@').expect("digest").1;
    assert!(
        stderr.contains(&format!("cvo: pulling {digest}: layers 1/1, ")),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(out_dir.join("release-manifests/release-metadata")).expect("read"),
        std::fs::read(payload.join("release-manifests/release-metadata")).expect("read")
    );
    // Again into a non-empty directory: refused before any pull.
    let out = common::cvo()
        .args(["payload", "pull", &tag])
        .arg(&out_dir)
        .output()
        .expect("run cvo");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("cvo: {}: exists and is not an empty directory", out_dir.display())
    );
    // Inspect by digest: from the cache, the release is the image's.
    let out = common::cvo()
        .args(["payload", "inspect", &image, "-o", "json", "--cache-dir"])
        .arg(&cache)
        .output()
        .expect("run cvo");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["release"]["version"], "3.1.0");
    assert!(String::from_utf8_lossy(&out.stderr).contains(", from the cache"));
}

/// A test OpenPGP key (Ed25519), generated for each run.
fn generate_key() -> pgp::composed::SignedSecretKey {
    cvo::reconcile::signature::sign::generate_signing_key("release test <release@example.com>").expect("key")
}

/// An atomic container signature of `image` (`repo@digest`) by `key`.
fn sign_release(key: &pgp::composed::SignedSecretKey, image: &str) -> Vec<u8> {
    let (reference, digest) = image.rsplit_once('@').expect("digest");
    cvo::reconcile::signature::sign::atomic_signature(key, reference, digest, "registry_pull test")
        .expect("signed message")
}

/// A signature store on 127.0.0.1 serving `routes` (path → body), 404 elsewhere; returns its
/// URL and the paths asked for.
async fn signature_store(
    routes: std::collections::BTreeMap<String, Vec<u8>>,
) -> (String, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/sigs", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let (routes, log) = (routes.clone(), log.clone());
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 2048];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&got).to_string();
                let path = head.split(' ').nth(1).unwrap_or_default().to_string();
                log.lock().expect("lock").push(path.clone());
                let (status, body) = match routes.get(&path) {
                    Some(b) => ("200 OK", b.clone()),
                    None => ("404 Not Found", Vec::new()),
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
                let _ = sock.write_all(&body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (url, seen)
}

/// `release-manifests/` of `dir` gets the verification ConfigMap (the key of `key` and the
/// store at `store`) and its namespace.
fn add_verification_config_map(dir: &Path, key: &pgp::composed::SignedSecretKey, store: &str) {
    let armored = key
        .to_public_key()
        .to_armored_string(Default::default())
        .expect("armor");
    let cm = cvo::reconcile::signature::sign::verification_config_map(
        "verifier-public-key-test",
        &armored,
        "store-local",
        store,
    );
    std::fs::write(
        dir.join("release-manifests/0000_90_verification_configmap.json"),
        cm.to_string(),
    )
    .expect("write");
    std::fs::write(
        dir.join("release-manifests/0000_00_config_managed_namespace.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-config-managed\n  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n",
    )
    .expect("write");
}

/// The whole path on a cluster, as `cvo reconcile --payload DIR` builds it: the running
/// release from a directory whose verification ConfigMap names a key generated here and a stub
/// HTTP store; a signed release in the registry is pulled, verified and applied, and its
/// signature saved into `signatures-managed`; an unsigned one is refused (ReleaseAccepted
/// False, the store and key named, nothing applied); forced, it is applied with the risk in
/// history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_releases_apply_unsigned_are_refused_until_forced() {
    let Some(reg) = Registry::start("signed_releases_apply_unsigned_are_refused_until_forced") else {
        return;
    };
    let key = generate_key();
    let work = tempfile::tempdir().expect("tempdir");
    let (p1, p2, p3) = (
        work.path().join("p1"),
        work.path().join("p2"),
        work.path().join("p3"),
    );
    write_payload(&p2, "1.1.0");
    write_payload(&p3, "1.2.0");
    let signed = push(&reg.addr, "ocp/release", "1.1.0", vec![payload_layer(&p2)]).await;
    let unsigned = push(&reg.addr, "ocp/release", "1.2.0", vec![payload_layer(&p3)]).await;
    let signed_digest = signed.rsplit_once('@').expect("digest").1.to_string();
    let unsigned_digest = unsigned.rsplit_once('@').expect("digest").1.to_string();
    let sig = sign_release(&key, &signed);
    let (store, asked) = signature_store(
        [(
            format!("/sigs/{}/signature-1", signed_digest.replace(':', "=")),
            sig.clone(),
        )]
        .into(),
    )
    .await;
    write_payload(&p1, "1.0.0");
    add_verification_config_map(&p1, &key, &store);

    let sim = Simulator::new();
    let client = kube::Client::new(sim.clone(), "default");
    let own = LocalPayloads::pseudo_pull_spec(&p1).expect("pseudo");
    let payloads = cvo::cli::payload::cluster_resolver(
        client.clone(),
        &p1,
        Some(own.clone()),
        options(&work.path().join("cache")),
        true,
        "version",
    )
    .expect("resolver");
    let mut cfg = EngineConfig::local(p1.clone(), Some(own.clone())).expect("config");
    cfg.payloads = payloads;
    cfg.timings = EngineTimings::scaled(0.05);
    let h = Engine::spawn(client.clone(), cfg);
    let cvs: kube::Api<cvo::openshift::ClusterVersion> = kube::Api::all(client.clone());
    let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(client.clone(), "openshift-reg");
    let settings = |cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap>| async move {
        cms.get("settings")
            .await
            .ok()
            .and_then(|c| c.data)
            .and_then(|d| d.get("version").cloned())
    };
    let limit = Duration::from_secs(60);
    common::wait_until("1.0.0 completed", limit, || h.status.borrow().is_completed()).await;
    let to = |image: &str, version: &str, force: bool| json!({"spec": {"desiredUpdate": {"version": version, "image": image, "force": force}}});
    let patch = |v: serde_json::Value| {
        let cvs = cvs.clone();
        async move {
            cvs.patch("version", &Default::default(), &kube::api::Patch::Merge(v))
                .await
                .expect("patch");
        }
    };

    // Signed: pulled, verified, applied.
    patch(to(&signed, "1.1.0", false)).await;
    common::wait_until("1.1.0 completed", limit, || {
        let s = h.status.borrow();
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.image == signed)
    })
    .await;
    let cv = h.status.borrow().cluster_version.clone().expect("cv");
    assert_eq!(
        (cv.history[0].version.as_str(), cv.history[0].verified),
        ("1.1.0", true)
    );
    // Only the unset channel is a (non-blocking) risk: the signature verified.
    let risks = cv.history[0].accepted_risks.clone().unwrap_or_default();
    assert!(!risks.contains("cannot be verified"), "{risks}");
    assert_eq!(settings(cms.clone()).await.as_deref(), Some("1.1.0"));
    assert!(
        asked
            .lock()
            .expect("lock")
            .contains(&format!("/sigs/{}/signature-1", signed_digest.replace(':', "="))),
        "{:?}",
        asked.lock().expect("lock")
    );
    // The verified signature is saved where upstream keeps it (active-apply).
    let saved_key = format!("{}-0", signed_digest.replace(':', "-"));
    let managed: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(client.clone(), "openshift-config-managed");
    common::poll(
        "signatures-managed saved",
        limit,
        Duration::from_millis(100),
        || {
            let managed = managed.clone();
            let (saved_key, sig) = (saved_key.clone(), sig.clone());
            async move {
                let cm = managed.get_opt("signatures-managed").await.ok().flatten()?;
                let data = cm.binary_data?;
                (data.get(&saved_key)?.0 == sig).then_some(())
            }
        },
    )
    .await;

    // Unsigned: refused with the store and key named; 1.1.0 stays applied.
    patch(to(&unsigned, "1.2.0", false)).await;
    let failed = format!(
        "Retrieving payload failed version=\"1.2.0\" image=\"{unsigned}\" failure=The update cannot be verified: unable to verify {unsigned_digest} against keyrings: verifier-public-key-test"
    );
    common::wait_until("ReleaseAccepted False (unverified)", limit, || {
        let s = h.status.borrow();
        s.cluster_version
            .as_ref()
            .and_then(|c| find(&c.conditions, "ReleaseAccepted").cloned())
            .is_some_and(|c| c.is_false() && c.message().starts_with(&failed))
    })
    .await;
    let s = h.status.borrow().clone();
    let cond = find(
        &s.cluster_version.as_ref().expect("cv").conditions,
        "ReleaseAccepted",
    )
    .expect("ReleaseAccepted")
    .clone();
    assert_eq!(cond.reason.as_deref(), Some("RetrievePayload"));
    let msg = cond.message().to_string();
    assert!(msg.contains("(keys: verifier-public-key-test ("), "{msg}");
    assert!(
        msg.ends_with(&format!(
            "stores tried: config maps in openshift-config-managed with label \"release.openshift.io/verification-signatures\": no signatures; {store}: no signatures"
        )),
        "{msg}"
    );
    assert_eq!(s.payload_error.as_deref(), Some(msg.as_str()));
    assert!(
        s.desired.as_ref().is_some_and(|d| d.version == "1.1.0"),
        "{:?}",
        s.desired
    );
    assert_eq!(settings(cms.clone()).await.as_deref(), Some("1.1.0"));

    // Forced: applied, the verification failure recorded as the accepted risk.
    patch(to(&unsigned, "1.2.0", true)).await;
    common::wait_until("1.2.0 completed", limit, || {
        let s = h.status.borrow();
        s.is_completed() && s.desired.as_ref().is_some_and(|d| d.image == unsigned)
    })
    .await;
    let cv = h.status.borrow().cluster_version.clone().expect("cv");
    let top = &cv.history[0];
    assert_eq!((top.version.as_str(), top.verified), ("1.2.0", false));
    let risks = top.accepted_risks.clone().unwrap_or_default();
    assert!(
        risks.starts_with(&format!(
            "Target release version=\"1.2.0\" image=\"{unsigned}\" cannot be verified, but continuing anyway because the update was forced: unable to verify {unsigned_digest} against keyrings: verifier-public-key-test"
        )),
        "{risks}"
    );
    assert_eq!(settings(cms).await.as_deref(), Some("1.2.0"));
    h.shutdown().await;
}

/// The dashboard's engine (`cvo tui`, watch-only) verifies release images as the cluster's
/// CVO would: on a cluster at the release of a directory whose verification ConfigMap names a
/// key, a desired update to an unsigned image in the registry is refused (the payload error
/// names the key and the stores tried), and the engine writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_engine_refuses_an_unsigned_desired_update() {
    use cvo::cli::{
        args::RegistryArgs,
        tui::{PayloadSource, spawn_engine},
    };
    let Some(reg) = Registry::start("the_dashboard_engine_refuses_an_unsigned_desired_update") else {
        return;
    };
    let key = generate_key();
    let work = tempfile::tempdir().expect("tempdir");
    let (p1, p3) = (work.path().join("p1"), work.path().join("p3"));
    write_payload(&p3, "1.2.0");
    let unsigned = push(&reg.addr, "ocp/release", "1.2.0", vec![payload_layer(&p3)]).await;
    let unsigned_digest = unsigned.rsplit_once('@').expect("digest").1.to_string();
    let (store, _asked) = signature_store(Default::default()).await;
    write_payload(&p1, "1.0.0");
    add_verification_config_map(&p1, &key, &store);
    let own = LocalPayloads::pseudo_pull_spec(&p1).expect("pseudo");

    // A cluster at 1.0.0 (the directory's release) asked to go to the unsigned 1.2.0.
    let sim = Simulator::new();
    let cv = json!({
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"clusterID": "00000000-0000-4000-8000-000000000001",
            "desiredUpdate": {"version": "1.2.0", "image": unsigned}},
        "status": {"desired": {"version": "1.0.0", "image": own},
            "history": [{"state": "Completed", "version": "1.0.0", "image": own, "verified": false,
                "startedTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T01:00:00Z"}],
            "observedGeneration": 1, "versionHash": "", "availableUpdates": null}
    });
    sim.insert(cv).expect("ClusterVersion");
    let client = kube::Client::new(sim.clone(), "default");
    let registry = RegistryArgs {
        cache_dir: Some(work.path().join("cache")),
        ..RegistryArgs::default()
    };
    let writes_before = sim
        .audit()
        .entries
        .iter()
        .filter(|e| e.verb != "get" && e.verb != "list" && e.verb != "watch")
        .count();
    let h = spawn_engine(
        client,
        &PayloadSource::Dir(p1.clone()),
        &registry,
        EngineTimings::scaled(0.05),
    )
    .await
    .expect("engine");
    let failed = format!(
        "Retrieving payload failed version=\"1.2.0\" image=\"{unsigned}\" failure=The update cannot be verified: unable to verify {unsigned_digest} against keyrings: verifier-public-key-test"
    );
    // Watch-only writes no conditions: the refusal is the engine's payload error, which the
    // dashboard shows as the reason the update does not start.
    common::wait_until("the refusal", Duration::from_secs(60), || {
        h.status
            .borrow()
            .payload_error
            .as_deref()
            .is_some_and(|e| e.starts_with(&failed))
    })
    .await;
    let err = h.status.borrow().payload_error.clone().expect("payload error");
    assert!(err.contains("(keys: verifier-public-key-test ("), "{err}");
    assert!(err.ends_with(&format!("{store}: no signatures")), "{err}");
    let writes = sim
        .audit()
        .entries
        .iter()
        .filter(|e| e.verb != "get" && e.verb != "list" && e.verb != "watch")
        .count();
    assert_eq!(writes, writes_before, "the dashboard's engine wrote");
    h.shutdown().await;
}

/// A `cvo sim serve` cluster and a registry for the `--payload DIR` tests: the running release
/// 1.0.0 in a directory (no verification ConfigMap), 1.1.0 pushed to the registry.
struct PayloadDirCluster {
    _reg: Registry,
    work: tempfile::TempDir,
    p1: PathBuf,
    rt: tokio::runtime::Runtime,
    image: String,
    kc: PathBuf,
    server: Child,
}

impl PayloadDirCluster {
    /// Starts both, or skips `test` (a failure under CI) without the registry binary.
    fn start(test: &str) -> Option<Self> {
        let reg = Registry::start(test)?;
        let work = tempfile::tempdir().expect("tempdir");
        let (p1, p2) = (work.path().join("p1"), work.path().join("p2"));
        write_payload(&p1, "1.0.0");
        write_payload(&p2, "1.1.0");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let image = rt.block_on(push(&reg.addr, "ocp/release", "1.1.0", vec![payload_layer(&p2)]));
        let kc = work.path().join("kubeconfig");
        let (server, _) = common::spawn_sim_serve(&kc, &[], Stdio::null(), Duration::from_secs(10));
        Some(Self {
            _reg: reg,
            work,
            p1,
            rt,
            image,
            kc,
            server,
        })
    }

    /// `cvo ARGS --payload p1 --kubeconfig K --cache-dir C`, without registry credentials or
    /// proxies from the environment.
    fn cvo(&self, args: &[&str]) -> Command {
        let mut c = common::cvo();
        c.args(args)
            .arg("--payload")
            .arg(&self.p1)
            .arg("--kubeconfig")
            .arg(&self.kc)
            .arg("--cache-dir")
            .arg(self.work.path().join("cache"))
            .env_remove("KUBECONFIG")
            .env_remove("REGISTRY_AUTH_FILE")
            .env_remove("HTTP_PROXY")
            .env_remove("HTTPS_PROXY");
        c
    }

    async fn cluster_versions(&self) -> kube::Api<cvo::openshift::ClusterVersion> {
        let conn = cvo::cluster::live::connect(Some(&self.kc), None)
            .await
            .expect("connect");
        kube::Api::all(conn.client)
    }

    /// Asks for 1.1.0 by image, `force` as given.
    fn request_update(&self, force: bool) {
        self.rt.block_on(async {
            self.cluster_versions()
                .await
                .patch(
                    "version",
                    &Default::default(),
                    &kube::api::Patch::Merge(
                        json!({"spec": {"desiredUpdate": {"version": "1.1.0", "image": self.image, "force": force}}}),
                    ),
                )
                .await
                .expect("patch");
        });
    }

    /// `status.history` of ClusterVersion `version` (empty while there is none).
    fn history(&self) -> Vec<cvo::openshift::UpdateHistory> {
        self.rt.block_on(async {
            self.cluster_versions()
                .await
                .get_opt("version")
                .await
                .ok()
                .flatten()
                .map(|cv| cv.status.history)
                .unwrap_or_default()
        })
    }

    /// Waits (90 s at most) until `history[0]` is `version` Completed; returns the history.
    fn wait_completed(&self, version: &str) -> Vec<cvo::openshift::UpdateHistory> {
        let limit = std::time::Instant::now() + Duration::from_secs(90);
        loop {
            let h = self.history();
            if h.first()
                .is_some_and(|e| e.version == version && e.state == cvo::openshift::UpdateState::Completed)
            {
                return h;
            }
            assert!(
                std::time::Instant::now() < limit,
                "timed out waiting for {version} completed: {h:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Asserts that `history[0]` is 1.1.0 by image, forced past "verification is not possible".
    fn assert_forced_into_history(&self, history: &[cvo::openshift::UpdateHistory]) {
        assert_eq!(
            (history[0].version.as_str(), history[0].image.as_str()),
            ("1.1.0", self.image.as_str())
        );
        assert!(
            history[0]
                .accepted_risks
                .as_deref()
                .unwrap_or_default()
                .starts_with(&format!("Target release version=\"1.1.0\" image=\"{}\" cannot be verified, but continuing anyway because the update was forced: verification is not possible", self.image)),
            "{:?}",
            history[0].accepted_risks
        );
    }
}

impl Drop for PayloadDirCluster {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// `cvo reconcile --payload DIR` follows a desired update by image: the running release comes
/// from the directory, the target is pulled from the registry. The directory has no
/// verification ConfigMap, so the update is refused ("verification is not possible") until
/// forced, and then applied with that risk in history.
#[test]
fn cvo_reconcile_with_a_payload_directory_pulls_a_desired_update_by_image() {
    let Some(c) =
        PayloadDirCluster::start("cvo_reconcile_with_a_payload_directory_pulls_a_desired_update_by_image")
    else {
        return;
    };
    let reconcile = || {
        let out = c
            .cvo(&["reconcile", "--until-complete", "--timeout", "60"])
            .output()
            .expect("run cvo");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = reconcile();
    assert_eq!(code, Some(0), "{out}{err}");
    c.request_update(false);
    let (code, out, err) = reconcile();
    assert_eq!(code, Some(5), "{out}{err}");
    assert_eq!(
        err.lines().last().unwrap_or_default(),
        format!(
            "cvo: Retrieving payload failed version=\"1.1.0\" image=\"{}\" failure=The update cannot be verified: verification is not possible",
            c.image
        ),
        "{err}"
    );
    c.request_update(true);
    let (code, out, err) = reconcile();
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("outcome: complete\n"), "{out}");
    assert!(out.contains(&format!("release: 1.1.0 ({})", c.image)), "{out}");
    c.assert_forced_into_history(&c.history());
}

/// `cvo operator start --payload DIR` follows a desired update by image: the running release
/// comes from the directory, the target is pulled from the registry (the directory has no
/// verification ConfigMap, so the update is forced) and applied, with the risk in history.
#[test]
fn the_operator_with_a_payload_directory_pulls_a_desired_update_by_image() {
    use std::io::BufRead as _;
    let Some(c) =
        PayloadDirCluster::start("the_operator_with_a_payload_directory_pulls_a_desired_update_by_image")
    else {
        return;
    };
    let mut op = c
        .cvo(&[
            "operator",
            "start",
            "--listen",
            "127.0.0.1:0",
            "--insecure-http",
            "--metrics-auth=none",
            "--resync-interval",
            "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cvo operator starts");
    let mut line = String::new();
    std::io::BufReader::new(op.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("ready line");
    assert!(line.starts_with("cvo operator serving "), "{line:?}");
    c.wait_completed("1.0.0");
    c.request_update(true);
    let history = c.wait_completed("1.1.0");
    let _ = op.kill();
    let _ = op.wait();
    c.assert_forced_into_history(&history);
}

/// `cvo rehearse --to-image`: the target release is pulled from a registry by tag into the
/// cache (as `cvo payload pull` pulls it), then rehearsed on the aws must-gather to
/// Completed; the report names the pull spec as given, and the payload came from the image
/// (265 manifests of 4.16.4). Nothing but the registry is contacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cvo_rehearse_pulls_its_to_image_target_from_a_registry() {
    let Some(reg) = Registry::start("cvo_rehearse_pulls_its_to_image_target_from_a_registry") else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let image = push(
        &reg.addr,
        "ocp/release",
        "4.16.4",
        vec![payload_layer(&root.join("assets/payloads/4.16.4"))],
    )
    .await;
    let tag = format!("{}/ocp/release:4.16.4", reg.addr);
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");
    let out = common::cvo()
        .args(["rehearse", "--from"])
        .arg(root.join("tests/fixtures/upstream/must-gather-clean-snapshots/aws"))
        .args(["--to-image", &tag, "--speed", "200", "-o", "json", "--cache-dir"])
        .arg(&cache)
        .env_remove("REGISTRY_AUTH_FILE")
        .output()
        .expect("run cvo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let digest = image.rsplit_once('@').expect("digest").1;
    assert!(
        stderr.contains(&format!("cvo: pulling {digest}: layers 1/1, ")),
        "{stderr}"
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(r["toImage"], tag.as_str());
    assert_eq!(r["toVersion"], "4.16.4");
    assert_eq!(r["payloadManifests"], 265);
    assert_eq!(r["outcome"]["completed"], true, "{:#}", r["outcome"]);
    let pull = r["preconditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"].as_str().is_some_and(|n| n.starts_with("PullSpec")))
        .expect("the PullSpec verdict");
    assert!(
        pull["message"].as_str().is_some_and(|m| m.contains(&tag)),
        "{pull:#}"
    );
    // The requests went to the registry: the manifest by tag, then the layer by digest.
    let requests = reg.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.contains("/v2/ocp/release/manifests/4.16.4")),
        "{requests:?}"
    );
}
