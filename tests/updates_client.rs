//! The update-service client against a local stub (a std `TcpListener` in a thread): real
//! graphs from `tests/fixtures/upstream/`, hostile responses, the polling loop's reasons and
//! cache, a stub Prometheus, and every blocked-edge risk declaration of
//! openshift/cincinnati-graph-data.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    sync::{Arc, Mutex},
    time::Duration,
};

use cvo::reconcile::updates::{
    self, FetchedUpdates, UpdateInputs, UpdatesConfig,
    client::{self, Egress, GraphQuery, PrometheusApi},
    risks::{BlockedEdge, NoPrometheus, PromQlEvaluator},
};

mod common;

/// What the stub answers to one request.
#[derive(Clone)]
enum Reply {
    /// Status line, body.
    Json(u16, Vec<u8>),
    /// Headers announcing `announced` bytes, then `sent` bytes of `x`, then close.
    Lying { announced: u64, sent: usize },
    /// A chunked body of `total` bytes of spaces.
    Chunked { total: usize },
    /// Wait this long before answering 200 `{}`.
    Slow(Duration),
}

/// A one-thread HTTP/1.1 server answering every request with `reply(request head)`; records
/// each request's head.
struct Stub {
    addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Stub {
    fn start(reply: impl Fn(&str) -> Reply + Send + 'static) -> Stub {
        let l = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = l.local_addr().unwrap_or_else(|e| panic!("addr: {e}"));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let h = heads.clone();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(s) = s else { break };
                let head = read_head(&s);
                if let Ok(mut v) = h.lock() {
                    v.push(head.clone());
                }
                // Errors writing to a client that gave up are expected (timeouts, caps).
                let _ = answer(s, reply(&head));
            }
        });
        Stub { addr, heads }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

fn read_head(s: &TcpStream) -> String {
    let mut r = BufReader::new(s);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    head
}

fn answer(mut s: TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::Json(code, body) => {
            let reason = match code {
                200 => "OK",
                500 => "Internal Server Error",
                404 => "Not Found",
                _ => "Whatever",
            };
            write!(
                s,
                "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )?;
            s.write_all(&body)?;
        }
        Reply::Lying { announced, sent } => {
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {announced}\r\nConnection: close\r\n\r\n"
            )?;
            s.write_all(&vec![b'x'; sent])?;
        }
        Reply::Chunked { total } => {
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            )?;
            let chunk = vec![b' '; 64 * 1024];
            let mut left = total;
            while left > 0 {
                let n = left.min(chunk.len());
                write!(s, "{n:x}\r\n")?;
                s.write_all(&chunk[..n])?;
                s.write_all(b"\r\n")?;
                left -= n;
            }
            s.write_all(b"0\r\n\r\n")?;
        }
        Reply::Slow(d) => {
            std::thread::sleep(d);
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")?;
        }
    }
    s.flush()?;
    // Close our side, then drain the client's until it closes too (no reset on unread data).
    s.shutdown(std::net::Shutdown::Write)?;
    s.set_read_timeout(Some(Duration::from_secs(1)))?;
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    Ok(())
}

fn fixture(rel: &str, test: &str) -> Option<Vec<u8>> {
    let p = common::upstream_fixture(rel, test)?;
    Some(std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

const ID: &str = "01234567-0123-0123-0123-0123456789ab";

fn config(upstream: &str) -> UpdatesConfig {
    let mut c = UpdatesConfig::new(Arc::new(NoPrometheus), Duration::from_secs(180));
    c.upstream_override = Some(upstream.to_string());
    c.arch = "amd64".into();
    c.egress = Some(Egress::default());
    c
}

fn inputs(version: &str, channel: &str) -> UpdateInputs {
    UpdateInputs {
        channel: channel.into(),
        cluster_id: ID.into(),
        version: version.into(),
        ..Default::default()
    }
}

/// Fetches and computes the next hops from `version` (no risk evaluation).
async fn hops(
    cfg: &UpdatesConfig,
    inp: &UpdateInputs,
) -> Result<updates::graph::NextHops, updates::UpdateError> {
    let http = client::http_client(
        cfg.egress.as_ref().unwrap_or(&Egress::default()),
        cfg.timings.request_timeout,
    )
    .map_err(|e| updates::UpdateError::new("InvalidRequest", e))?;
    let (q, v) = inp.query(cfg)?;
    updates::fetch_next_hops(&http, cfg, inp, &q, &v).await
}

#[tokio::test]
async fn a_real_graph_from_the_fixtures_gives_upstreams_next_hops() {
    let t = "a_real_graph_from_the_fixtures_gives_upstreams_next_hops";
    let Some(body) = fixture("cincinnati-graphs/oc-mirror-amd64-stable-4.13.json", t) else {
        return;
    };
    let stub = Stub::start(move |_| Reply::Json(200, body.clone()));
    let cfg = config(&stub.url("/api/upgrades_info/v1/graph"));
    let h = hops(&cfg, &inputs("4.13.0", "stable-4.13"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // 16 plain edges leave 4.13.0, 5 of them also conditional (kept only as conditional); 29
    // conditional edges.
    assert_eq!(h.updates.len(), 11);
    assert_eq!(h.conditional.len(), 29);
    assert!(h.current.channels.contains(&"stable-4.13".to_string()));
    assert_eq!(
        h.current.url.as_deref(),
        Some("https://access.redhat.com/errata/RHSA-2023:1326")
    );
    let cu = h
        .conditional
        .iter()
        .find(|c| c.release.version == "4.13.9")
        .unwrap_or_else(|| panic!("4.13.9 is a conditional update"));
    assert_eq!(cu.risks[0].name, "AWSMintModeWithoutCredentials");
    assert_eq!(cu.risks[0].matching_rules[0].type_, "PromQL");
    let heads = stub.heads();
    let first = heads[0].lines().next().unwrap_or_default().to_string();
    assert_eq!(
        first,
        format!(
            "GET /api/upgrades_info/v1/graph?arch=amd64&channel=stable-4.13&id={ID}&version=4.13.0 HTTP/1.1"
        )
    );
    let lower = heads[0].to_ascii_lowercase();
    assert!(lower.contains("\r\naccept: application/json\r\n"), "{}", heads[0]);
    assert!(
        lower.contains("\r\nuser-agent: clusterversionoperator/"),
        "{}",
        heads[0]
    );
}

#[tokio::test]
async fn policy_engine_responses_parse() {
    let t = "policy_engine_responses_parse";
    for (file, version, arch) in [
        (
            "134475077ed4eeaedf3c339f12915b9cdaf7d194_stable-4.9_amd64_v1.json",
            "4.8.14",
            "",
        ),
        (
            "134475077ed4eeaedf3c339f12915b9cdaf7d194_candidate-4.12_multi_v1.json",
            "4.12.0-rc.0",
            "Multi",
        ),
    ] {
        let Some(body) = fixture(&format!("cincinnati-repo/e2e/tests/testdata/{file}"), t) else {
            return;
        };
        let g = updates::graph::Graph::parse(&body).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(g.nodes.len() >= 5, "{file}");
        if let Ok(h) = g.next_hops(&semver::Version::new(4, 0, 0), arch, arch, "c") {
            panic!("{file}: 4.0.0 is not in the graph, got {h:?}");
        }
        let v = semver::Version::parse(version).unwrap_or_else(|e| panic!("{e}"));
        {
            assert!(
                g.nodes.iter().any(|n| n.version == v),
                "{file}: {version} is in the graph"
            );
            let h = g
                .next_hops(&v, arch, arch, "c")
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(
                !h.updates.is_empty() || !h.conditional.is_empty(),
                "{file}: {version} has next hops"
            );
        }
    }
}

#[test]
fn every_blocked_edge_declaration_parses_as_a_risk() {
    let t = "every_blocked_edge_declaration_parses_as_a_risk";
    let Some(dir) = common::upstream_fixture("cincinnati-graph-data/blocked-edges", t) else {
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    files.sort();
    let (mut risks, mut promql, mut always) = (0, 0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let b = BlockedEdge::parse(&f.display().to_string(), &text).unwrap_or_else(|e| panic!("{e}"));
        if let Some(r) = b.risk() {
            risks += 1;
            match r.matching_rules[0].type_.as_str() {
                "PromQL" => promql += 1,
                "Always" => always += 1,
                other => panic!("{}: first rule {other}", f.display()),
            }
        }
    }
    assert_eq!(files.len(), 1717);
    assert_eq!(risks, 1601);
    assert_eq!(promql + always, risks);
    assert!(promql > 900 && always > 500, "{promql} PromQL, {always} Always");
    // A bad one is refused with a reason naming the file.
    let e = BlockedEdge::parse(
        "x.yaml",
        "to: 4.1.0\nfrom: .*\nname: bad name\nurl: u\nmatchingRules: [{type: Always}]\n",
    )
    .err()
    .unwrap_or_default();
    assert_eq!(e, "x.yaml: invalid risk name \"bad name\"");
    let e = BlockedEdge::parse(
        "y.yaml",
        "to: 4.1.0\nfrom: .*\nname: Good\nurl: u\nmatchingRules: [{type: Nope}]\n",
    )
    .err()
    .unwrap_or_default();
    assert!(
        e.starts_with("y.yaml: risk Good has no usable matching rule"),
        "{e}"
    );
}

#[tokio::test]
async fn hostile_and_failing_responses_give_clear_reasons() {
    let inp = inputs("4.1.0", "c");
    let reason = |cfg: UpdatesConfig| {
        let inp = inp.clone();
        async move {
            hops(&cfg, &inp)
                .await
                .err()
                .map(|e| (e.reason, e.message))
                .unwrap_or_default()
        }
    };
    // HTTP 500 (TestOperator_availableUpdatesSync).
    let stub = Stub::start(|_| Reply::Json(500, b"oops".to_vec()));
    assert_eq!(
        reason(config(&stub.url("/graph"))).await,
        (
            "ResponseFailed".into(),
            "unexpected HTTP status: 500 Internal Server Error".into()
        )
    );
    // Malformed JSON.
    let stub = Stub::start(|_| Reply::Json(200, b"{\"nodes\": [".to_vec()));
    let (r, m) = reason(config(&stub.url("/graph"))).await;
    assert_eq!(r, "ResponseInvalid");
    assert!(m.contains("EOF"), "{m}");
    // A 10 MB body (chunked, no length announced): abandoned at the 8 MiB cap.
    let stub = Stub::start(|_| Reply::Chunked { total: 10_000_000 });
    let (r, m) = reason(config(&stub.url("/graph"))).await;
    assert_eq!(r, "ResponseInvalid");
    assert_eq!(
        m,
        format!(
            "the response from {} is larger than 8388608 bytes; abandoned",
            stub.url("/graph")
        )
    );
    // A lying Content-Length of 1 TB: refused before any read or allocation.
    let stub = Stub::start(|_| Reply::Lying {
        announced: 1 << 40,
        sent: 10,
    });
    let (r, _) = reason(config(&stub.url("/graph"))).await;
    assert_eq!(r, "ResponseInvalid");
    // A smaller lie under the cap: the body ends early, a read failure.
    let stub = Stub::start(|_| Reply::Lying {
        announced: 1000,
        sent: 10,
    });
    let (r, m) = reason(config(&stub.url("/graph"))).await;
    assert_eq!(r, "ResponseFailed");
    assert!(m.starts_with("reading the response from "), "{m}");
    // Slower than the timeout.
    let stub = Stub::start(|_| Reply::Slow(Duration::from_secs(3)));
    let mut cfg = config(&stub.url("/graph"));
    cfg.timings.request_timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let (r, m) = reason(cfg).await;
    assert_eq!(r, "RemoteFailed");
    assert!(m.contains("timed out") || m.contains("timeout"), "{m}");
    assert!(started.elapsed() < Duration::from_secs(2));
    // Nobody listening.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(1);
    let (r, m) = reason(config(&format!("http://127.0.0.1:{port}/graph"))).await;
    assert_eq!(r, "RemoteFailed");
    assert!(
        m.starts_with(&format!("GET http://127.0.0.1:{port}/graph: ")),
        "{m}"
    );
    // Duplicate nodes and an edge out of range.
    let stub = Stub::start(|_| {
        Reply::Json(
            200,
            br#"{"nodes":[{"version":"4.1.0","payload":"a"},{"version":"4.1.0","payload":"b"}]}"#.to_vec(),
        )
    });
    assert_eq!(
        reason(config(&stub.url("/graph"))).await,
        (
            "ResponseInvalid".into(),
            "nodes[0] and nodes[1] both have version 4.1.0".into()
        )
    );
    let stub = Stub::start(|_| {
        Reply::Json(
            200,
            br#"{"nodes":[{"version":"4.1.0","payload":"a"}],"edges":[[0,1]]}"#.to_vec(),
        )
    });
    assert_eq!(
        reason(config(&stub.url("/graph"))).await,
        (
            "ResponseInvalid".into(),
            "edges[0] = [0, 1] names a node past the 1 nodes".into()
        )
    );
}

async fn next(rx: &mut tokio::sync::watch::Receiver<Option<Arc<FetchedUpdates>>>) -> Arc<FetchedUpdates> {
    tokio::time::timeout(Duration::from_secs(10), rx.changed())
        .await
        .unwrap_or_else(|_| panic!("no result within 10 s"))
        .unwrap_or_else(|e| panic!("{e}"));
    rx.borrow_and_update()
        .clone()
        .unwrap_or_else(|| panic!("published None"))
}

/// 4.0.1 → 4.0.2, and 4.0.3 with no edge from either.
const SMALL: &str = r#"{"nodes":[{"version":"4.0.1","payload":"img-401"},{"version":"4.0.2","payload":"img-402"},{"version":"4.0.3","payload":"img-403"}],"edges":[[0,1]]}"#;

#[tokio::test]
async fn the_polling_loop_reports_reasons_and_keeps_the_last_good_graph() {
    // cvo_test.go TestOperator_availableUpdatesSync: VersionNotFound against the "fast" channel.
    let fail = Arc::new(Mutex::new(false));
    let f = fail.clone();
    let stub = Stub::start(move |_| {
        if f.lock().is_ok_and(|f| *f) {
            Reply::Json(500, Vec::new())
        } else {
            Reply::Json(200, SMALL.as_bytes().to_vec())
        }
    });
    let mut cfg = config(&stub.url("/graph"));
    cfg.timings.interval = Duration::from_millis(200);
    let (tx, rx) = tokio::sync::watch::channel(Some(inputs("4.0.9", "fast")));
    let stop = tokio_util::sync::CancellationToken::new();
    let mut out = updates::spawn(cfg, rx, None, stop.clone());
    let r = next(&mut out).await;
    assert_eq!(
        r.retrieved_error,
        Some((
            "VersionNotFound".into(),
            "Unable to retrieve available updates: currently reconciling cluster version 4.0.9 not found in the \"fast\" channel".into()
        ))
    );
    assert_eq!(r.available, None);
    // No channel: a pre-check, no request.
    tx.send_replace(Some(inputs("4.0.1", "")));
    let r = next(&mut out).await;
    assert_eq!(
        r.retrieved_error,
        Some((
            "NoChannel".into(),
            "The update channel has not been configured.".into()
        ))
    );
    assert!(stub.heads().iter().all(|h| h.contains("channel=fast&")));
    // A good graph.
    tx.send_replace(Some(inputs("4.0.1", "fast")));
    let r = next(&mut out).await;
    assert_eq!(r.retrieved_error, None);
    let got: Vec<_> = r.available.iter().flatten().map(|r| r.version.as_str()).collect();
    assert_eq!(got, ["4.0.2"]);
    assert_eq!(r.upstream, stub.url("/graph"));
    // The channel's newer release no edge reaches is named, with why (issue 29).
    let not_offered: Vec<_> = r
        .not_offered
        .iter()
        .map(|n| (n.release.version.as_str(), n.release.image.as_str(), &n.why))
        .collect();
    assert_eq!(
        not_offered,
        [(
            "4.0.3",
            "img-403",
            &cvo::reconcile::api::WhyNotOffered::NoEdge { via: None }
        )]
    );
    let good_at = r
        .last_success
        .unwrap_or_else(|| panic!("a good answer has a time"));
    // The service starts failing: RetrievedUpdates=False ResponseFailed, updates kept.
    if let Ok(mut f) = fail.lock() {
        *f = true;
    }
    let r = next(&mut out).await;
    // The message says whose and how old the kept answer is (cvo's sentence after upstream's).
    let note = format!(
        "The updates listed are the last good answer of {}, at {}.",
        stub.url("/graph"),
        good_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    assert_eq!(
        r.retrieved_error.as_ref().map(|(r, m)| (r.as_str(), m.as_str())),
        Some((
            "ResponseFailed",
            format!("Unable to retrieve available updates: unexpected HTTP status: 500 Internal Server Error {note}")
                .as_str()
        ))
    );
    let msg = r
        .retrieved_error
        .as_ref()
        .map(|(_, m)| m.as_str())
        .unwrap_or_default();
    assert_eq!(
        cvo::reconcile::api::updates::last_good_answer(msg).map(|(u, t)| (u, t.timestamp())),
        Some((stub.url("/graph"), good_at.timestamp()))
    );
    let got: Vec<_> = r.available.iter().flatten().map(|r| r.version.as_str()).collect();
    assert_eq!(got, ["4.0.2"], "the last good graph is kept");
    assert_eq!(r.not_offered.len(), 1, "and what it did not offer");
    assert!(r.last_success.is_some() && r.last_attempt > r.last_success);
    stop.cancel();
}

/// Answers PromQL in-process (the evaluation trait tests and the demo use).
struct Exposed;

impl PromQlEvaluator for Exposed {
    fn evaluate<'a>(&'a self, promql: &'a str) -> futures::future::BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move { Ok(promql.contains("exposed")) })
    }
}

#[tokio::test]
async fn accepted_risks_make_a_conditional_update_recommended_without_a_refetch() {
    let graph = r#"{"nodes":[{"version":"4.0.1","payload":"img-401"},{"version":"4.0.2","payload":"img-402"}],"edges":[],
      "conditionalEdges":[{"edges":[{"from":"4.0.1","to":"4.0.2"}],"risks":[
        {"name":"Exposed","url":"https://bug/1","message":"Breaks things.","matchingRules":[{"type":"PromQL","promql":{"promql":"exposed"}}]}]}]}"#;
    let stub = Stub::start(move |_| Reply::Json(200, graph.as_bytes().to_vec()));
    let mut cfg = config(&stub.url("/graph"));
    cfg.promql = Arc::new(Exposed);
    let (tx, rx) = tokio::sync::watch::channel(Some(inputs("4.0.1", "fast")));
    let stop = tokio_util::sync::CancellationToken::new();
    let mut out = updates::spawn(cfg, rx, None, stop.clone());
    let r = next(&mut out).await;
    assert_eq!(r.available, None);
    let c = &r.conditional[0].conditions[0];
    assert_eq!(
        (c.reason(), c.message()),
        ("Exposed", "Breaks things. https://bug/1")
    );
    tx.send_replace(Some(UpdateInputs {
        accepted: vec!["Exposed".into()],
        ..inputs("4.0.1", "fast")
    }));
    let r = next(&mut out).await;
    assert_eq!(r.conditional[0].conditions[0].reason(), "AllExposedRisksAccepted");
    let got: Vec<_> = r.available.iter().flatten().map(|r| r.version.as_str()).collect();
    assert_eq!(got, ["4.0.2"]);
    assert_eq!(
        stub.heads().len(),
        1,
        "accepting a risk re-evaluates without a new request"
    );
    stop.cancel();
}

#[tokio::test]
async fn prometheus_api_sends_the_query_and_token_and_reads_the_sample() {
    let body = br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"1"]}]}}"#;
    let stub = Stub::start(move |head| {
        if head.contains("topk") {
            Reply::Json(
                400,
                br#"{"status":"error","errorType":"bad_data","error":"parse error at char 5"}"#.to_vec(),
            )
        } else {
            Reply::Json(200, body.to_vec())
        }
    });
    let p = PrometheusApi::new(
        &stub.url(""),
        Some("s3cret".into()),
        &Egress::default(),
        Duration::from_secs(5),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !format!("{p:?}").contains("s3cret"),
        "the token stays out of Debug"
    );
    assert_eq!(p.evaluate("max(up{_id=\"\"})").await, Ok(true));
    let head = stub.heads()[0].clone();
    assert!(
        head.starts_with("GET /api/v1/query?query=max%28up%7B_id%3D%22%22%7D%29 HTTP/1.1"),
        "{head}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("\r\nauthorization: bearer s3cret\r\n"),
        "{head}"
    );
    assert_eq!(
        p.evaluate("topk(").await,
        Err("executing PromQL query: bad_data: parse error at char 5".into())
    );
}

#[test]
fn graph_query_rejects_a_bad_upstream() {
    let q = GraphQuery {
        upstream: "not a url".into(),
        arch: "amd64".into(),
        channel: "c".into(),
        id: ID.into(),
        version: "1.0.0".into(),
    };
    let e = q.url().err().unwrap_or_else(|| updates::UpdateError::new("", ""));
    assert_eq!(e.reason, "InvalidURI");
}

/// Upstream's default PromQL target (`PromQL.Host`, `--use-dns-for-services=false`): the
/// client connects to the ClusterIP of the Thanos querier's Service, read from the API, while
/// the URL's host name stays the HTTP host (and the TLS name); the token file is read before
/// every query (a rotated ServiceAccount token).
#[tokio::test]
async fn prometheus_api_connects_to_the_services_cluster_ip_and_rereads_the_token_file() {
    let body = br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"1"]}]}}"#;
    let stub = Stub::start(move |_| Reply::Json(200, body.to_vec()));
    let sim = cvo::sim::Simulator::new();
    sim.insert(serde_json::json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "thanos-querier", "namespace": "openshift-monitoring"},
        "spec": {"clusterIP": "127.0.0.1", "ports": [{"name": "web", "port": 9091}]}
    }))
    .expect("insert the Service");
    let kube = kube::Client::new(sim.clone(), "default");
    let tmp = tempfile::tempdir().expect("tempdir");
    let token = tmp.path().join("token");
    std::fs::write(&token, "first-token\n").expect("write token");
    // A name no resolver knows: only the Service's address can reach the stub.
    let host = "thanos-querier.openshift-monitoring.svc.cluster.local";
    let url = format!("http://{host}:{}", stub.addr.port());
    let service = |name: &str| client::ServiceAddress {
        kube: kube.clone(),
        namespace: "openshift-monitoring".into(),
        name: name.into(),
    };
    let p = PrometheusApi::with(
        &url,
        client::BearerToken::File(token.clone()),
        &Egress::default(),
        Duration::from_secs(5),
        Some(service("thanos-querier")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.evaluate("vector(1)").await, Ok(true));
    std::fs::write(&token, "second-token\n").expect("rotate token");
    assert_eq!(p.evaluate("vector(1)").await, Ok(true));
    let heads: Vec<String> = stub.heads().iter().map(|h| h.to_ascii_lowercase()).collect();
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert!(
        heads[0].contains(&format!("\r\nhost: {host}:{}\r\n", stub.addr.port())),
        "{}",
        heads[0]
    );
    assert!(
        heads[0].contains("\r\nauthorization: bearer first-token\r\n"),
        "{}",
        heads[0]
    );
    assert!(
        heads[1].contains("\r\nauthorization: bearer second-token\r\n"),
        "{}",
        heads[1]
    );
    let debug = format!("{p:?}");
    assert!(
        !debug.contains("first-token") && !debug.contains("second-token"),
        "{debug}"
    );

    // No such Service: the query fails naming it, as upstream's "failure determine thanos IP".
    let absent = PrometheusApi::with(
        &url,
        client::BearerToken::None,
        &Egress::default(),
        Duration::from_secs(5),
        Some(service("absent")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let err = absent.evaluate("vector(1)").await.expect_err("no Service");
    assert!(
        err.contains("failure determine thanos IP: Service openshift-monitoring/absent"),
        "{err}"
    );
    // An unreadable token file is an error of the query, naming the file.
    std::fs::remove_file(&token).expect("rm token");
    let err = p.evaluate("vector(1)").await.expect_err("no token file");
    assert!(err.contains(&token.display().to_string()), "{err}");
    assert_eq!(stub.heads().len(), 2, "nothing sent without the token");
}

#[tokio::test]
async fn the_update_service_is_reached_through_the_cluster_proxy_unless_no_proxy_covers_it() {
    let t = "the_update_service_is_reached_through_the_cluster_proxy_unless_no_proxy_covers_it";
    let Some(body) = fixture("cincinnati-graphs/oc-mirror-amd64-stable-4.13.json", t) else {
        return;
    };
    let stub = Stub::start(move |_| Reply::Json(200, body.clone()));
    let proxy = common::Proxy::start(common::Protocol::Connect);
    // The service by a name only the proxy resolves.
    let upstream = format!("http://graph.test:{}/graph", stub.addr.port());
    let with_no_proxy = |no_proxy: &str| {
        let mut cfg = config(&upstream);
        cfg.egress = Some(Egress {
            proxy: Some(client::ProxySettings {
                http_proxy: Some(proxy.url("http")),
                https_proxy: Some(proxy.url("http")),
                no_proxy: Some(no_proxy.to_string()),
            }),
            ca_bundle: None,
        });
        cfg
    };
    let h = hops(&with_no_proxy(".cluster.local"), &inputs("4.13.0", "stable-4.13"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.updates.len(), 11);
    assert_eq!(proxy.targets(), [format!("graph.test:{}", stub.addr.port())]);
    let first = stub.heads()[0].lines().next().unwrap_or_default().to_string();
    assert!(first.starts_with("GET /graph?arch=amd64&"), "{first}");

    // noProxy covering it: a direct connection, which cannot resolve the name.
    let err = hops(&with_no_proxy("graph.test"), &inputs("4.13.0", "stable-4.13"))
        .await
        .expect_err("direct");
    assert_eq!(err.reason, "RemoteFailed", "{err:?}");
    assert_eq!(proxy.targets().len(), 1, "noProxy was not honoured");
}
