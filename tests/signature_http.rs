//! Release signature verification against HTTP signature stores: a stub store on loopback
//! (started in the test) serving atomic container signatures made by OpenPGP keys generated in
//! the test, in the `<store>/sha256=<hex>/signature-<N>` layout.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use cvo::{
    openshift::config_v1::SignatureStore,
    reconcile::signature::{Keyring, Store, Verifier, VerifierConfig, VerifyError},
};
use pgp::{
    composed::{KeyType, MessageBuilder, SecretKeyParamsBuilder, SignedSecretKey},
    crypto::hash::HashAlgorithm,
    types::Password,
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};

mod common;

const DIGEST: &str = "sha256:4f3e6b09b7a1d2c4e5f60718293a4b5c6d7e8f9012345678abcdef0123456789";

fn generate_key(name: &str) -> SignedSecretKey {
    let params = SecretKeyParamsBuilder::default()
        .key_type(KeyType::Ed25519Legacy)
        .can_certify(true)
        .can_sign(true)
        .primary_user_id(format!("{name} <{name}@example.com>"))
        .build()
        .expect("key params");
    params.generate(rand::thread_rng()).expect("key")
}

fn keyring(name: &str, key: &SignedSecretKey) -> Keyring {
    // Through the armored text, as a ConfigMap carries it.
    let armored = key
        .to_public_key()
        .to_armored_string(Default::default())
        .expect("armor");
    Keyring::parse(name, armored.as_bytes()).expect("keyring")
}

fn document(kind: &str, digest: &str) -> Vec<u8> {
    format!(
        r#"{{"critical":{{"type":"{kind}","image":{{"docker-manifest-digest":"{digest}"}},"identity":{{"docker-reference":"quay.io/openshift-release-dev/ocp-release:4.16.5-x86_64"}}}},"optional":{{"creator":"test","timestamp":1722000000}}}}"#
    )
    .into_bytes()
}

fn sign(key: &SignedSecretKey, content: Vec<u8>) -> Vec<u8> {
    let mut builder = MessageBuilder::from_bytes("", content);
    builder.sign(&key.primary_key, Password::empty(), HashAlgorithm::Sha256);
    builder.to_vec(rand::thread_rng()).expect("signed message")
}

fn good(key: &SignedSecretKey) -> Vec<u8> {
    sign(key, document("atomic container signature", DIGEST))
}

/// What the stub answers for a path.
#[derive(Clone)]
enum Reply {
    Body(Vec<u8>),
    Status(u16, &'static str),
    Slow(Duration),
    /// A body of this many bytes, with (`true`) or without a Content-Length header.
    Huge(usize, bool),
}

/// A one-connection-per-request HTTP/1.1 store on 127.0.0.1; unknown paths get 404.
struct Stub {
    base: String,
    requests: Arc<Mutex<Vec<String>>>,
}

async fn stub(prefix: &str, routes: BTreeMap<String, Reply>) -> Stub {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let routes = routes.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&got).to_string();
                let path = head.split(' ').nth(1).unwrap_or_default().to_string();
                seen.lock().expect("lock").push(path.clone());
                let reply = routes
                    .get(&path)
                    .cloned()
                    .unwrap_or(Reply::Status(404, "Not Found"));
                let (status, body, length) = match reply {
                    Reply::Body(b) => ("200 OK".to_string(), b, true),
                    Reply::Status(code, text) => (format!("{code} {text}"), Vec::new(), true),
                    Reply::Slow(d) => {
                        tokio::time::sleep(d).await;
                        ("200 OK".to_string(), b"late".to_vec(), true)
                    }
                    Reply::Huge(n, with_length) => ("200 OK".to_string(), vec![b'x'; n], with_length),
                };
                let mut head = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
                if length {
                    head.push_str(&format!("Content-Length: {}\r\n", body.len()));
                }
                head.push_str("\r\n");
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    Stub {
        base: format!("http://{addr}{prefix}"),
        requests,
    }
}

impl Stub {
    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

fn sig_path(prefix: &str, n: usize) -> String {
    format!("{prefix}/{}/signature-{n}", DIGEST.replace(':', "="))
}

fn verifier(rings: Vec<Keyring>, stores: &[&str]) -> Verifier {
    let stores = stores.iter().map(|s| Store::parse(s).expect("store")).collect();
    Verifier::new(VerifierConfig {
        keyrings: rings,
        stores,
    })
    .expect("verifier")
}

#[tokio::test]
async fn a_bad_signature_1_then_a_good_signature_2_verifies_and_the_search_stops() {
    let release = generate_key("release");
    let stranger = generate_key("stranger");
    let store = stub(
        "/sigs",
        BTreeMap::from([
            (sig_path("/sigs", 1), Reply::Body(good(&stranger))),
            (sig_path("/sigs", 2), Reply::Body(good(&release))),
            (sig_path("/sigs", 3), Reply::Body(good(&release))),
        ]),
    )
    .await;
    let v = verifier(
        vec![keyring("verifier-public-key-test", &release)],
        &[&store.base],
    );
    let ok = v.verify(DIGEST).await.expect("signature-2 verifies");
    assert_eq!(
        ok.by[0].source,
        format!("{}{}", store.base.trim_end_matches("/sigs"), sig_path("/sigs", 2))
    );
    assert_eq!(ok.by[0].key, keyring("x", &release).fingerprints()[0]);
    assert_eq!(
        ok.by[0].identity,
        "quay.io/openshift-release-dev/ocp-release:4.16.5-x86_64"
    );
    assert_eq!(store.requests(), [sig_path("/sigs", 1), sig_path("/sigs", 2)]);
    // The second time comes from the cache: no request.
    assert!(v.verify(DIGEST).await.expect("cached").cached);
    assert_eq!(store.requests().len(), 2);
}

fn message(e: VerifyError) -> String {
    assert!(matches!(e, VerifyError::Unverified(_)), "{e:?}");
    e.to_string()
}

#[tokio::test]
async fn a_404_at_signature_1_is_unsigned_and_names_the_store_and_key() {
    let release = generate_key("release");
    let store = stub("/sigs", BTreeMap::new()).await;
    let ring = keyring("verifier-public-key-test", &release);
    let fpr = ring.fingerprints()[0].clone();
    let v = verifier(vec![ring], &[&store.base]);
    let msg = message(v.verify(DIGEST).await.expect_err("unsigned"));
    assert_eq!(
        msg,
        format!(
            "unable to verify {DIGEST} against keyrings: verifier-public-key-test (keys: verifier-public-key-test ({fpr} release <release@example.com>)); stores tried: {}: no signatures",
            store.base
        )
    );
    assert_eq!(store.requests(), [sig_path("/sigs", 1)]);
}

#[tokio::test]
async fn a_server_error_a_wrong_type_and_an_unknown_key_are_each_named() {
    let release = generate_key("release");
    let stranger = generate_key("stranger");
    let broken = stub(
        "/a",
        BTreeMap::from([(sig_path("/a", 1), Reply::Status(500, "Internal Server Error"))]),
    )
    .await;
    let odd = stub(
        "/b",
        BTreeMap::from([
            (
                sig_path("/b", 1),
                Reply::Body(sign(
                    &release,
                    document("cosign container image signature", DIGEST),
                )),
            ),
            (sig_path("/b", 2), Reply::Body(good(&stranger))),
            (sig_path("/b", 3), Reply::Body(Vec::new())),
        ]),
    )
    .await;
    let v = verifier(
        vec![keyring("verifier-public-key-test", &release)],
        &[&broken.base, &odd.base],
    );
    let msg = message(v.verify(DIGEST).await.expect_err("no valid signature"));
    let stranger_id = keyring("s", &stranger).fingerprints()[0].clone();
    let tail = msg
        .split_once("stores tried: ")
        .map(|(_, t)| t)
        .unwrap_or_default();
    assert_eq!(
        tail,
        format!(
            "{}: signature-1: HTTP 500 Internal Server Error; {}: signature-1: verifier-public-key-test: signature is not the correct type (type \"cosign container image signature\"), signature-2: verifier-public-key-test: signed by unknown key {stranger_id}, signature-3: empty, skipped",
            broken.base, odd.base
        ),
        "{msg}"
    );
}

#[tokio::test]
async fn a_slow_store_is_cut_at_the_deadline() {
    let release = generate_key("release");
    let slow = stub(
        "/slow",
        BTreeMap::from([(sig_path("/slow", 1), Reply::Slow(Duration::from_secs(20)))]),
    )
    .await;
    let v = verifier(vec![keyring("k", &release)], &[&slow.base]).with_timeout(Duration::from_millis(400));
    let start = Instant::now();
    let msg = message(v.verify(DIGEST).await.expect_err("timed out"));
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
    assert!(
        msg.ends_with(&format!(
            "{}: signature-1: timed out (verification deadline 400ms)",
            slow.base
        )),
        "{msg}"
    );
}

#[tokio::test]
async fn huge_bodies_are_capped_with_or_without_a_length() {
    let release = generate_key("release");
    let store = stub(
        "/big",
        BTreeMap::from([(sig_path("/big", 1), Reply::Huge(10 * 1024 * 1024, true))]),
    )
    .await;
    let streamed = stub(
        "/stream",
        BTreeMap::from([(sig_path("/stream", 1), Reply::Huge(4 * 1024 * 1024, false))]),
    )
    .await;
    let v = verifier(vec![keyring("k", &release)], &[&store.base, &streamed.base]);
    let msg = message(v.verify(DIGEST).await.expect_err("too big"));
    assert!(
        msg.contains(&format!(
            "{}: signature-1: body of 10485760 bytes is over the 51200-byte limit",
            store.base
        )),
        "{msg}"
    );
    assert!(
        msg.contains(&format!(
            "{}: signature-1: body is over the 51200-byte limit",
            streamed.base
        )),
        "{msg}"
    );
}

#[tokio::test]
async fn every_keyring_needs_its_own_signature() {
    let a = generate_key("alpha");
    let b = generate_key("beta");
    let store = stub(
        "/s",
        BTreeMap::from([
            (sig_path("/s", 1), Reply::Body(good(&a))),
            (sig_path("/s", 2), Reply::Body(good(&b))),
        ]),
    )
    .await;
    let v = verifier(
        vec![
            keyring("verifier-public-key-a", &a),
            keyring("verifier-public-key-b", &b),
        ],
        &[&store.base],
    );
    let ok = v.verify(DIGEST).await.expect("both signed");
    let by: Vec<(&str, bool)> = ok
        .by
        .iter()
        .map(|x| (x.keyring.as_str(), x.source.ends_with("signature-2")))
        .collect();
    assert_eq!(
        by,
        [("verifier-public-key-a", false), ("verifier-public-key-b", true)]
    );
    assert_eq!(ok.signatures.len(), 2);
}

#[tokio::test]
async fn signature_stores_of_the_cluster_version_replace_the_default_stores() {
    let release = generate_key("release");
    let default = stub(
        "/default",
        BTreeMap::from([(sig_path("/default", 1), Reply::Body(good(&release)))]),
    )
    .await;
    let custom = stub("/custom", BTreeMap::new()).await;
    let cm = k8s_openapi::api::core::v1::ConfigMap {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some("release-verification".into()),
            namespace: Some("openshift-config-managed".into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([
            (
                "verifier-public-key-test".to_string(),
                release
                    .to_public_key()
                    .to_armored_string(Default::default())
                    .expect("armor"),
            ),
            ("store-default".to_string(), default.base.clone()),
        ])),
        ..Default::default()
    };
    let spec = [SignatureStore {
        url: custom.base.clone(),
        ca: None,
    }];
    let v = Verifier::from_cluster(Some(&cm), Some(&spec), |_| None, Vec::new()).expect("verifier");
    let msg = message(v.verify(DIGEST).await.expect_err("custom store is empty"));
    assert!(
        msg.ends_with(&format!(
            "{}: no signatures; ClusterVersion spec.signatureStores: exhausted without finding a valid signature (the default stores are not consulted while it is set)",
            custom.base
        )),
        "{msg}"
    );
    assert!(default.requests().is_empty());

    let v = Verifier::from_cluster(Some(&cm), Some(&[]), |_| None, Vec::new()).expect("verifier");
    let msg = message(v.verify(DIGEST).await.expect_err("empty list"));
    assert!(msg.ends_with("ClusterVersion spec.signatureStores: is an empty array; unset signatureStores entirely to enable the default signature stores"), "{msg}");

    // Unset: the default store verifies.
    let v = Verifier::from_cluster(Some(&cm), None, |_| None, Vec::new()).expect("verifier");
    assert!(v.verify(DIGEST).await.is_ok());
    assert_eq!(default.requests(), [sig_path("/default", 1)]);
}

#[tokio::test]
async fn stores_are_reached_through_the_cluster_proxy_unless_no_proxy_covers_them() {
    use cvo::reconcile::payload::retrieve::egress::ClusterEgress;
    let release = generate_key("release");
    let store = stub(
        "/sigs",
        BTreeMap::from([(sig_path("/sigs", 1), Reply::Body(good(&release)))]),
    )
    .await;
    // The store by a name only the proxy resolves.
    let port = store
        .base
        .rsplit_once(':')
        .expect("port")
        .1
        .trim_end_matches("/sigs");
    let named = format!("http://sigs.test:{port}/sigs");
    let proxy = common::Proxy::start(common::Protocol::Connect);
    let verifier = |no_proxy: &str| {
        let egress = ClusterEgress {
            http_proxy: Some(proxy.url("http")),
            https_proxy: Some(proxy.url("http")),
            no_proxy: Some(no_proxy.to_string()),
            ..ClusterEgress::default()
        };
        Verifier::with_egress(
            VerifierConfig {
                keyrings: vec![keyring("verifier-public-key-test", &release)],
                stores: vec![Store::parse(&named).expect("store")],
            },
            egress,
        )
        .expect("verifier")
    };
    let ok = verifier(".cluster.local")
        .verify(DIGEST)
        .await
        .expect("verified through the proxy");
    assert_eq!(
        ok.by[0].source,
        format!("http://sigs.test:{port}{}", sig_path("/sigs", 1))
    );
    assert_eq!(proxy.targets(), [format!("sigs.test:{port}")]);
    assert_eq!(store.requests(), [sig_path("/sigs", 1)]);

    // noProxy covering the store: a direct connection, which cannot resolve the name.
    let msg = message(verifier("sigs.test").verify(DIGEST).await.expect_err("direct"));
    assert!(msg.contains(&named), "{msg}");
    assert_eq!(proxy.targets().len(), 1, "noProxy was not honoured");
}
