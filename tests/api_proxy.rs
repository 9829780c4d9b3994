//! The Kubernetes API through proxies, as kubectl reaches it: `cvo status` and `cvo get`
//! against `cvo sim serve` (and the real kube-apiserver of `CVO_TEST_KUBECONFIG` when set)
//! through a kubeconfig `proxy-url` (HTTP CONNECT and SOCKS5) and through `HTTPS_PROXY`;
//! `NO_PROXY` covering the server bypasses the proxy; a proxy URL with a bad scheme is one line
//! naming its field or variable.
//!
//! The server is named `cvo-sim.test` in the kubeconfigs (with `tls-server-name` the
//! certificate's name): a name no resolver knows, so a command that succeeds was carried by the
//! proxy, which is the only one that maps it (any host) to 127.0.0.1. The test's proxies count
//! every tunnel and record the target it asked for.

mod common;

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use common::{Protocol, Proxy};
use serde_json::Value;

/// The made-up name the kubeconfigs give the server.
const HOST: &str = "cvo-sim.test";
/// The proxy variables cleared for every run (the test's environment must not leak in).
const PROXY_VARS: [&str; 6] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// A running `cvo sim serve` of a settled snapshot; killed on drop.
struct Sim {
    child: std::process::Child,
    kubeconfig: PathBuf,
    dir: tempfile::TempDir,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Sim {
    fn start() -> Sim {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        let snap = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/snapshots/settled-no-machineconfigs.yaml");
        let args = [std::ffi::OsStr::new("--from"), snap.as_os_str()];
        let (child, _) = common::spawn_sim_serve(&kubeconfig, &args, Stdio::null(), Duration::from_secs(10));
        Sim {
            child,
            kubeconfig,
            dir,
        }
    }
}

/// Writes `dst`: the kubeconfig `src` with its (first) cluster's server renamed `host` (same
/// port; `tls-server-name` keeps the certificate's name) and `proxy_url` set when given.
/// Returns the server's port.
fn kubeconfig_via(src: &Path, dst: &Path, host: &str, proxy_url: Option<&str>) -> u16 {
    let text = std::fs::read_to_string(src).expect("kubeconfig");
    let mut kc: Value = serde_norway::from_str(&text).expect("kubeconfig YAML");
    let cluster = kc
        .pointer_mut("/clusters/0/cluster")
        .and_then(Value::as_object_mut)
        .expect("a cluster");
    let server: http::Uri = cluster["server"]
        .as_str()
        .expect("server")
        .parse()
        .expect("server URL");
    let port = server.port_u16().expect("port");
    let original = server.host().expect("host").to_owned();
    cluster.insert("server".into(), format!("https://{host}:{port}").into());
    cluster.insert("tls-server-name".into(), original.into());
    if let Some(p) = proxy_url {
        cluster.insert("proxy-url".into(), p.into());
    }
    std::fs::write(dst, serde_json::to_string(&kc).expect("json")).expect("write kubeconfig");
    port
}

/// Runs `cvo ARGS` with the proxy variables cleared, then `env` set: (success, stdout, stderr).
fn cvo(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = common::cvo();
    cmd.args(args).env_remove("KUBECONFIG");
    for v in PROXY_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("cvo runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `cvo status` and `cvo get co` with `kubeconfig` and `env` succeed, all through `proxy`,
/// whose tunnels all asked for `want_target`.
fn status_and_get_through(proxy: &Proxy, kubeconfig: &Path, env: &[(&str, &str)], want_target: &str) {
    let before = proxy.targets().len();
    let (ok, out, err) = cvo(&["status", "--kubeconfig", s(kubeconfig)], env);
    assert!(ok, "cvo status: {err}");
    assert!(out.contains("The cluster is not updating."), "{out}");
    let after_status = proxy.targets().len();
    assert!(after_status > before, "cvo status opened no tunnel");
    let (ok, out, err) = cvo(&["get", "co", "--kubeconfig", s(kubeconfig)], env);
    assert!(ok, "cvo get co: {err}");
    assert!(out.lines().count() > 1, "{out}");
    let targets = proxy.targets();
    assert!(targets.len() > after_status, "cvo get opened no tunnel");
    for t in &targets[before..] {
        assert_eq!(t, want_target);
    }
}

#[test]
fn status_and_get_through_a_kubeconfig_proxy_url_connect_and_socks5() {
    let sim = Sim::start();
    for (protocol, scheme) in [(Protocol::Connect, "http"), (Protocol::Socks5, "socks5")] {
        let proxy = Proxy::start(protocol);
        let kc = sim.dir.path().join(format!("via-{scheme}"));
        let port = kubeconfig_via(&sim.kubeconfig, &kc, HOST, Some(&proxy.url(scheme)));
        // NO_PROXY does not apply to a kubeconfig's proxy-url (kubectl's rule), nor does the
        // environment's proxy.
        let env = [("NO_PROXY", HOST), ("HTTPS_PROXY", "http://127.0.0.1:9")];
        status_and_get_through(&proxy, &kc, &env, &format!("{HOST}:{port}"));
    }
}

#[test]
fn status_and_get_through_https_proxy_and_no_proxy_bypasses_it() {
    let sim = Sim::start();
    let proxy = Proxy::start(Protocol::Connect);
    let kc = sim.dir.path().join("renamed");
    let port = kubeconfig_via(&sim.kubeconfig, &kc, HOST, None);
    let via = proxy.url("http");
    status_and_get_through(
        &proxy,
        &kc,
        &[("HTTPS_PROXY", &via), ("NO_PROXY", "example.com,10.0.0.0/8")],
        &format!("{HOST}:{port}"),
    );
    // The lowercase name is honoured too.
    status_and_get_through(&proxy, &kc, &[("https_proxy", &via)], &format!("{HOST}:{port}"));

    // NO_PROXY covering the server: a direct connection, which cannot resolve the made-up name.
    let before = proxy.targets().len();
    for no_proxy in [HOST, ".test", "*.test", "example.com, cvo-sim.test"] {
        let (ok, _, err) = cvo(
            &["get", "co", "--kubeconfig", s(&kc)],
            &[("HTTPS_PROXY", &via), ("NO_PROXY", no_proxy)],
        );
        assert!(!ok, "NO_PROXY={no_proxy}: succeeded without the proxy?");
        assert!(err.contains(HOST), "NO_PROXY={no_proxy}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    assert_eq!(proxy.targets().len(), before, "NO_PROXY was not honoured");

    // A proxy that is down: one line naming the proxy and where it was configured.
    let (ok, _, err) = cvo(
        &["get", "co", "--kubeconfig", s(&kc)],
        &[("HTTPS_PROXY", "http://user:hunter2@127.0.0.1:9")],
    );
    assert!(!ok);
    assert!(
        err.starts_with(&format!(
            "cvo: https://{HOST}:{port}/ (context \"cvo-sim\", through proxy http://user:***@127.0.0.1:9/ from HTTPS_PROXY): "
        )),
        "{err}"
    );
    assert!(
        !err.contains("hunter2") && err.trim_end().lines().count() == 1,
        "{err}"
    );

    // The server on loopback is never proxied by the environment (Go's rule, so kubectl's).
    let (ok, _, err) = cvo(
        &["get", "co", "--kubeconfig", s(&sim.kubeconfig)],
        &[("HTTPS_PROXY", &via)],
    );
    assert!(ok, "{err}");
    assert_eq!(proxy.targets().len(), before);
}

#[test]
fn a_bad_proxy_url_is_one_line_naming_its_field_or_variable() {
    let sim = Sim::start();
    let kc = sim.dir.path().join("ftp");
    kubeconfig_via(&sim.kubeconfig, &kc, HOST, Some("ftp://proxy.example:21"));
    let (ok, _, err) = cvo(&["status", "--kubeconfig", s(&kc)], &[]);
    assert!(!ok);
    assert_eq!(
        err.trim_end(),
        format!(
            "cvo: kubeconfig {}: cluster \"cvo-sim\" proxy-url \"ftp://proxy.example:21\": unsupported proxy scheme \"ftp\" (http, https or socks5)",
            kc.display()
        )
    );
    let (ok, _, err) = cvo(
        &["get", "co", "--kubeconfig", s(&sim.kubeconfig)],
        &[("HTTPS_PROXY", "socks4://user:hunter2@proxy.example:1080")],
    );
    assert!(!ok);
    assert_eq!(
        err.trim_end(),
        "cvo: HTTPS_PROXY \"socks4://user:***@proxy.example:1080\": unsupported proxy scheme \"socks4\" (http, https or socks5)"
    );
    // kube's loader parses NO_PROXY whenever HTTPS_PROXY is set, and refuses an empty entry
    // (Go skips it): one line naming the variable.
    let (ok, _, err) = cvo(
        &["get", "co", "--kubeconfig", s(&sim.kubeconfig)],
        &[
            ("HTTPS_PROXY", "http://proxy.example:3128"),
            ("NO_PROXY", "example.com,"),
        ],
    );
    assert!(!ok);
    assert_eq!(
        err.trim_end(),
        "cvo: NO_PROXY \"example.com,\": comma-separated value is empty (remove empty entries)"
    );
}

/// The same against the real kube-apiserver of `CVO_TEST_KUBECONFIG`: `cvo get nodes` (a
/// bare kube-apiserver has no ClusterVersion) through a kubeconfig `proxy-url`, through
/// `HTTPS_PROXY`, and `NO_PROXY` bypassing it.
#[test]
#[ignore = "needs a real kube-apiserver (CVO_TEST_KUBECONFIG): .ci/run's real-server step runs it with --include-ignored"]
fn the_real_apiserver_through_proxies() {
    let test = "the_real_apiserver_through_proxies";
    let Some(real) = std::env::var_os("CVO_TEST_KUBECONFIG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
    else {
        common::skip(test, "CVO_TEST_KUBECONFIG is not set (a real kube-apiserver)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    for (protocol, scheme) in [(Protocol::Connect, "http"), (Protocol::Socks5, "socks5")] {
        let proxy = Proxy::start(protocol);
        let kc = dir.path().join(format!("via-{scheme}"));
        let port = kubeconfig_via(&real, &kc, "cvo-real.test", Some(&proxy.url(scheme)));
        let (ok, out, err) = cvo(&["get", "nodes", "--kubeconfig", s(&kc)], &[]);
        assert!(ok, "{scheme}: {err}");
        assert!(!out.is_empty() || !err.is_empty());
        let targets = proxy.targets();
        assert!(!targets.is_empty(), "{scheme}: no tunnel");
        assert!(
            targets.iter().all(|t| *t == format!("cvo-real.test:{port}")),
            "{targets:?}"
        );
    }
    let proxy = Proxy::start(Protocol::Connect);
    let kc = dir.path().join("renamed");
    kubeconfig_via(&real, &kc, "cvo-real.test", None);
    let via = proxy.url("http");
    let (ok, _, err) = cvo(
        &["get", "nodes", "--kubeconfig", s(&kc)],
        &[("HTTPS_PROXY", &via)],
    );
    assert!(ok, "{err}");
    let n = proxy.targets().len();
    assert!(n > 0, "HTTPS_PROXY: no tunnel");
    let (ok, _, err) = cvo(
        &["get", "nodes", "--kubeconfig", s(&kc)],
        &[("HTTPS_PROXY", &via), ("NO_PROXY", ".test")],
    );
    assert!(!ok && err.contains("cvo-real.test"), "{err}");
    assert_eq!(proxy.targets().len(), n, "NO_PROXY was not honoured");
}
