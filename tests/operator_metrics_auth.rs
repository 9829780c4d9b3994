//! Issue 27 point 2 on the real kube-apiserver (`CVO_TEST_KUBECONFIG`; skipped with a reason
//! otherwise, a failure under `CI`): `cvo operator start` serves `/metrics` over HTTPS only to
//! callers the API server authenticates and authorizes, as upstream's operator does.
//!
//! A ServiceAccount bound to the shipped ClusterRole `cvo-metrics-reader`
//! (`install/05-metrics-reader.yaml`) and one without it get tokens from the TokenRequest API:
//! the first gets 200 and the metrics text, the second 403, no token or a made-up one 401;
//! `/healthz` and `/readyz` need none; the kubeconfig's client certificate (signed by the
//! cluster's client CA, group `system:masters`) is accepted without a token; plain HTTP to the
//! port gets no answer. A second test replaces the certificate files and sees the new
//! certificate served after the reload.

use std::{
    io::BufRead as _,
    path::{Path, PathBuf},
    process::{Child, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::api::{
    authentication::v1::{TokenRequest, TokenRequestSpec},
    core::v1::{Namespace, ServiceAccount},
    rbac::v1::{ClusterRole, ClusterRoleBinding, RoleRef, Subject},
};
use kube::{
    Api, Client,
    api::{DeleteParams, PostParams},
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject as _};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

mod common;

fn kubeconfig(test: &str) -> Option<PathBuf> {
    match std::env::var_os("CVO_TEST_KUBECONFIG").filter(|v| !v.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            common::skip(test, "CVO_TEST_KUBECONFIG is not set (a real kube-apiserver)");
            None
        }
    }
}

async fn client(path: &Path) -> Client {
    let kc = kube::config::Kubeconfig::read_from(path).expect("CVO_TEST_KUBECONFIG readable");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .expect("kubeconfig usable");
    Client::try_from(cfg).expect("client")
}

fn suffix() -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
        ^ std::process::id();
    format!("{n:08x}")
}

/// A self-signed serving certificate for `localhost` / 127.0.0.1: (cert PEM, key PEM).
fn serving_pair() -> (String, String) {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .expect("certificate");
    (ck.cert.pem(), ck.signing_key.serialize_pem())
}

/// `cvo operator start` over HTTPS with authentication; SIGKILLed on drop.
struct Op {
    child: Child,
    port: u16,
}

impl Op {
    /// Starts it; its stderr goes to `log`.
    fn start(kc: &Path, cert: &Path, key: &Path, log: &Path) -> Op {
        let payload = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/payloads/4.16.3");
        let mut child = common::cvo()
            .args(["operator", "start", "--watch-only", "--listen", "127.0.0.1:0"])
            .arg("--serving-cert-file")
            .arg(cert)
            .arg("--serving-key-file")
            .arg(key)
            .arg("--payload")
            .arg(payload)
            .arg("--kubeconfig")
            .arg(kc)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).expect("log file"))
            .spawn()
            .expect("cvo operator starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the ready line");
        let port = line
            .trim()
            .strip_prefix("cvo operator serving https://127.0.0.1:")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("ready line: {line:?}"));
        Op { child, port }
    }
}

impl Drop for Op {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client certificate and key.
type ClientCert = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// One HTTPS GET trusting only `trust`: (status, body), or the TLS / connection error.
async fn get(
    port: u16,
    path: &str,
    token: Option<&str>,
    trust: &str,
    cert: Option<ClientCert>,
) -> Result<(u16, String), String> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(trust.as_bytes()) {
        roots
            .add(c.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let b = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    let cfg = match cert {
        Some((chain, key)) => b.with_client_auth_cert(chain, key).map_err(|e| e.to_string())?,
        None => b.with_no_client_auth(),
    };
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    let mut s = tokio_rustls::TlsConnector::from(Arc::new(cfg))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS: {e}"))?;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n").as_bytes(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let mut resp = Vec::new();
    // With TLS 1.3 a refused client certificate shows only when reading.
    s.read_to_end(&mut resp).await.map_err(|e| format!("TLS: {e}"))?;
    let resp = String::from_utf8_lossy(&resp).into_owned();
    let code = resp
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("no status line: {resp:?}"))?;
    let body = resp
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((code, body))
}

/// A token of `ns/sa` from the TokenRequest API (10 minutes).
async fn token(client: &Client, ns: &str, sa: &str) -> String {
    let api: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    let req = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    api.create_token_request(sa, &PostParams::default(), &req)
        .await
        .expect("TokenRequest")
        .status
        .expect("token status")
        .token
        .expect("a token")
}

/// The kubeconfig's client certificate and key (the real server's admin, `system:masters`).
fn kubeconfig_client_cert(kc: &Path) -> ClientCert {
    use base64::Engine as _;
    let text = std::fs::read_to_string(kc).expect("kubeconfig");
    let v: serde_json::Value = serde_norway::from_str(&text).expect("kubeconfig YAML");
    let user = &v["users"][0]["user"];
    let dec = |k: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(user[k].as_str().unwrap_or_else(|| panic!("kubeconfig: no {k}")))
            .expect("base64")
    };
    let chain = CertificateDer::pem_slice_iter(&dec("client-certificate-data"))
        .collect::<Result<Vec<_>, _>>()
        .expect("client certificate");
    let key = PrivateKeyDer::from_pem_slice(&dec("client-key-data")).expect("client key");
    (chain, key)
}

/// The shipped scraper ClusterRole, created when absent.
async fn shipped_reader_role(client: &Client) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("install/05-metrics-reader.yaml");
    let text = std::fs::read_to_string(&path).expect("install/05-metrics-reader.yaml");
    let role: ClusterRole = serde_norway::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).expect("YAML"))
        .find_map(|v: serde_json::Value| {
            (v["kind"] == "ClusterRole").then(|| serde_json::from_value(v).expect("ClusterRole"))
        })
        .expect("a ClusterRole in install/05-metrics-reader.yaml");
    let name = role.metadata.name.clone().expect("name");
    let api: Api<ClusterRole> = Api::all(client.clone());
    match api.create(&PostParams::default(), &role).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => panic!("create ClusterRole {name}: {e}"),
    }
    name
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real kube-apiserver (CVO_TEST_KUBECONFIG): .ci/run's real-server step runs it with --include-ignored"]
async fn metrics_need_an_authorized_token_or_client_certificate_on_the_real_apiserver() {
    let test = "metrics_need_an_authorized_token_or_client_certificate_on_the_real_apiserver";
    let Some(kc) = kubeconfig(test) else { return };
    let client = client(&kc).await;
    let ns = format!("cvo-metrics-{}", suffix());
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).expect("ns"),
    )
    .await
    .expect("create namespace");
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), &ns);
    for sa in ["scraper", "other"] {
        sas.create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": sa}})).expect("sa"),
        )
        .await
        .expect("create ServiceAccount");
    }
    let role = shipped_reader_role(&client).await;
    let crbs: Api<ClusterRoleBinding> = Api::all(client.clone());
    let binding = ClusterRoleBinding {
        metadata: kube::api::ObjectMeta {
            name: Some(ns.clone()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: role,
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: "scraper".into(),
            namespace: Some(ns.clone()),
            ..Default::default()
        }]),
    };
    crbs.create(&PostParams::default(), &binding)
        .await
        .expect("create ClusterRoleBinding");
    let (allowed, other) = (
        token(&client, &ns, "scraper").await,
        token(&client, &ns, "other").await,
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let (cert_pem, key_pem) = serving_pair();
    std::fs::write(&cert, &cert_pem).expect("write");
    std::fs::write(&key, &key_pem).expect("write");
    let log = dir.path().join("op.log");
    let op = Op::start(&kc, &cert, &key, &log);
    let p = op.port;

    let (code, body) = get(p, "/metrics", Some(&allowed), &cert_pem, None)
        .await
        .expect("GET");
    assert_eq!(code, 200, "{body}");
    assert!(
        body.lines().any(|l| l.starts_with("cluster_operator_up{")),
        "metric text: {body}"
    );
    assert!(body.lines().any(|l| l.starts_with("cvo_ready ")), "{body}");
    let (code, body) = get(p, "/metrics", None, &cert_pem, None).await.expect("GET");
    assert_eq!(
        (code, body.as_str()),
        (401, "Unauthorized: no client certificate and no bearer token\n")
    );
    let (code, body) = get(p, "/metrics", Some("not-a-token"), &cert_pem, None)
        .await
        .expect("GET");
    assert_eq!(
        (code, body.as_str()),
        (401, "Unauthorized: the token was not accepted\n")
    );
    let (code, body) = get(p, "/metrics", Some(&other), &cert_pem, None)
        .await
        .expect("GET");
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body,
        format!(
            "Forbidden: \"system:serviceaccount:{ns}:other\" may not get the non-resource URL /metrics\n"
        )
    );
    // The decision is cached: a second request answers the same.
    let (code, _) = get(p, "/metrics", Some(&allowed), &cert_pem, None)
        .await
        .expect("GET");
    assert_eq!(code, 200);
    // Probes need no credentials.
    let (code, body) = get(p, "/healthz", None, &cert_pem, None).await.expect("GET");
    assert_eq!((code, body.as_str()), (200, "ok\n"));
    let (code, _) = get(p, "/readyz", None, &cert_pem, None).await.expect("GET");
    assert!(
        code == 200 || code == 503,
        "/readyz answers without credentials: {code}"
    );
    // A client certificate of the cluster's client CA (the kubeconfig's, system:masters).
    let deadline = Instant::now() + Duration::from_secs(20);
    let (code, body) = loop {
        // The client CA is read from the API server just after start.
        match get(p, "/metrics", None, &cert_pem, Some(kubeconfig_client_cert(&kc))).await {
            Ok((200, b)) => break (200, b),
            r if Instant::now() > deadline => panic!("client certificate: {r:?}"),
            _ => tokio::time::sleep(Duration::from_millis(300)).await,
        }
    };
    assert_eq!(code, 200);
    assert!(body.contains("cluster_operator_up{"), "{body}");
    // A client certificate the cluster's CA did not sign fails the handshake.
    let stranger = rcgen::generate_simple_self_signed(vec!["stranger".to_owned()]).expect("cert");
    let r = get(
        p,
        "/metrics",
        Some(&allowed),
        &cert_pem,
        Some((
            vec![stranger.cert.der().clone()],
            PrivateKeyDer::from_pem_slice(stranger.signing_key.serialize_pem().as_bytes()).expect("key"),
        )),
    )
    .await;
    assert!(r.as_ref().is_err_and(|e| e.starts_with("TLS: ")), "{r:?}");
    // Plain HTTP to the HTTPS port gets no HTTP answer.
    let mut plain = tokio::net::TcpStream::connect(("127.0.0.1", p))
        .await
        .expect("connect");
    plain
        .write_all(
            format!("GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {allowed}\r\n\r\n")
                .as_bytes(),
        )
        .await
        .expect("write");
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(3), plain.read_to_end(&mut buf)).await;
    assert!(!String::from_utf8_lossy(&buf).contains("HTTP/1.1"), "{buf:?}");

    drop(op);
    let log = std::fs::read_to_string(&log).expect("log");
    for t in [&allowed, &other] {
        assert!(!log.contains(t.as_str()), "a token in the log");
    }
    let _ = crbs.delete(&ns, &DeleteParams::default()).await;
    let _ = nss.delete(&ns, &DeleteParams::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real kube-apiserver (CVO_TEST_KUBECONFIG): .ci/run's real-server step runs it with --include-ignored"]
async fn a_replaced_serving_certificate_is_served_after_the_reload() {
    let test = "a_replaced_serving_certificate_is_served_after_the_reload";
    let Some(kc) = kubeconfig(test) else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let (c1, k1) = serving_pair();
    std::fs::write(&cert, &c1).expect("write");
    std::fs::write(&key, &k1).expect("write");
    let log = dir.path().join("op.log");
    let op = Op::start(&kc, &cert, &key, &log);
    let (code, _) = get(op.port, "/healthz", None, &c1, None).await.expect("GET");
    assert_eq!(code, 200);
    // A key that does not match is refused: the first certificate stays.
    let (c2, k2) = serving_pair();
    std::fs::write(&cert, &c2).expect("write");
    tokio::time::sleep(cvo::cli::operator::tls_files::RELOAD_EVERY + Duration::from_secs(2)).await;
    assert_eq!(
        get(op.port, "/healthz", None, &c1, None).await.map(|r| r.0),
        Ok(200)
    );
    // The matching key: the second certificate is served within one reload period.
    std::fs::write(&key, &k2).expect("write");
    let started = Instant::now();
    let deadline = started + cvo::cli::operator::tls_files::RELOAD_EVERY + Duration::from_secs(5);
    loop {
        if let Ok((200, _)) = get(op.port, "/healthz", None, &c2, None).await {
            break;
        }
        assert!(Instant::now() < deadline, "the new certificate is not served");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let r = get(op.port, "/healthz", None, &c1, None).await;
    assert!(
        r.as_ref().is_err_and(|e| e.starts_with("TLS: ")),
        "the old certificate is gone: {r:?}"
    );
    eprintln!(
        "new certificate served {:.1}s after the key was replaced",
        started.elapsed().as_secs_f64()
    );
    drop(op);
    let log = std::fs::read_to_string(&log).expect("log");
    let warned: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("serving certificate not reloaded"))
        .collect();
    assert_eq!(warned.len(), 1, "one warning for the mismatched pair: {log}");
    assert!(
        warned[0].contains(&format!("--serving-key-file {}: does not match", key.display())),
        "{log}"
    );
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("serving certificate reloaded"))
            .count(),
        1,
        "{log}"
    );
}

/// Plain HTTP only when asked: the default listener without certificates, and `--insecure-http`
/// with token checks, are refused with one line naming the flags (exit 2, before any cluster
/// is contacted).
#[test]
fn plain_http_needs_insecure_http_and_no_token_checks() {
    let payload = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/payloads/4.16.3");
    let run = |extra: &[&str]| {
        let out = common::cvo()
            .args([
                "operator",
                "start",
                "--kubeconfig",
                "/nonexistent/kubeconfig",
                "--payload",
            ])
            .arg(&payload)
            .args(extra)
            .output()
            .expect("cvo runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(
        run(&[]),
        (
            Some(2),
            "cvo: --listen 0.0.0.0:9099: HTTPS needs --serving-cert-file and --serving-key-file \
             (plain HTTP only with --insecure-http)\n"
                .to_string()
        )
    );
    assert_eq!(
        run(&["--insecure-http"]),
        (
            Some(2),
            "cvo: --insecure-http: scrapers' bearer tokens would cross the network in clear; add \
             --metrics-auth=none, or serve HTTPS with --serving-cert-file/--serving-key-file\n"
                .to_string()
        )
    );
    // Asked explicitly, it gets past the endpoint to the (missing) kubeconfig.
    let (code, err) = run(&[
        "--insecure-http",
        "--metrics-auth=none",
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("/nonexistent/kubeconfig"), "{err}");
}

#[derive(clap::Parser)]
struct Start {
    #[command(flatten)]
    args: cvo::cli::operator::StartArgs,
}

/// The Deployment of `install/` serves HTTPS from the Service's serving-cert Secret, checks
/// scrapers (the default `--metrics-auth kube`) and probes only the open paths.
#[test]
fn the_deployment_serves_https_with_the_services_certificate_and_checks_scrapers() {
    use clap::Parser as _;
    let read = |f: &str| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("install").join(f))
            .unwrap_or_else(|e| panic!("install/{f}: {e}"));
        serde_norway::Deserializer::from_str(&text)
            .map(|d| serde::Deserialize::deserialize(d).expect("YAML"))
            .collect()
    };
    let d = read("03-deployment.yaml")
        .into_iter()
        .find(|d| d["kind"] == "Deployment")
        .expect("Deployment");
    let svc = read("04-service.yaml")
        .into_iter()
        .find(|d| d["kind"] == "Service")
        .expect("Service");
    let pod = &d["spec"]["template"]["spec"];
    let c = &pod["containers"][0];
    let args: Vec<String> = c["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(|a| {
            a.as_str()
                .map(|s| s.replace("$(RELEASE_IMAGE)", "quay.io/x/release@sha256:00"))
        })
        .collect();
    let parsed = Start::try_parse_from(std::iter::once("cvo".to_string()).chain(args[2..].iter().cloned()))
        .unwrap_or_else(|e| panic!("the Deployment's args: {e}"));
    let a = parsed.args;
    assert_eq!(a.metrics_auth, cvo::cli::operator::MetricsAuth::Kube);
    assert!(!a.insecure_http);
    let (cert, key) = cvo::cli::operator::transport(&a)
        .expect("accepted")
        .expect("HTTPS");
    let secret = svc["metadata"]["annotations"]["service.beta.openshift.io/serving-cert-secret-name"]
        .as_str()
        .expect("serving-cert annotation");
    let vol = pod["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .find(|v| v["secret"]["secretName"] == secret)
        .expect("the Secret is a volume");
    let mount = c["volumeMounts"]
        .as_array()
        .expect("volumeMounts")
        .iter()
        .find(|m| m["name"] == vol["name"])
        .expect("mounted");
    let dir = Path::new(mount["mountPath"].as_str().expect("mountPath"));
    assert_eq!(
        (cert.as_path(), key.as_path()),
        (dir.join("tls.crt").as_path(), dir.join("tls.key").as_path())
    );
    for probe in ["readinessProbe", "livenessProbe"] {
        let g = &c[probe]["httpGet"];
        assert_eq!(g["scheme"], "HTTPS", "{probe}");
        assert!(
            ["/readyz", "/healthz"].contains(&g["path"].as_str().unwrap_or_default()),
            "{probe}"
        );
    }
}
