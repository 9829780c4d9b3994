//! The manifests in `install/`: every YAML parses; the Deployment runs non-root with a
//! read-only root filesystem, no privilege escalation and no capabilities, mounts every path it
//! writes, probes the operator's health endpoints and passes flags `cvo operator start`
//! accepts; the RBAC grants exactly the operator's verbs, reads only to dashboard users and
//! ClusterVersion patches only to update requesters; the Service and ServiceMonitor reach the
//! metrics port.

use std::path::Path;

use clap::Parser;
use serde_json::Value;

fn install_docs() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("install");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("install/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    let mut docs = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        for d in serde_norway::Deserializer::from_str(&text) {
            let v: Value = serde::Deserialize::deserialize(d)
                .unwrap_or_else(|e| panic!("{}: not YAML: {e}", f.display()));
            if v.is_null() {
                continue;
            }
            for key in ["apiVersion", "kind"] {
                assert!(v[key].is_string(), "{}: no {key}", f.display());
            }
            assert!(
                v["metadata"]["name"].is_string(),
                "{}: no metadata.name",
                f.display()
            );
            docs.push((
                f.file_name().unwrap_or_default().to_string_lossy().into_owned(),
                v,
            ));
        }
    }
    docs
}

fn find<'a>(docs: &'a [(String, Value)], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .map(|(_, v)| v)
        .find(|v| v["kind"] == kind && v["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in install/"))
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[derive(Parser)]
struct Start {
    #[command(flatten)]
    args: cvo::cli::operator::StartArgs,
}

#[test]
fn the_deployment_is_locked_down_and_runs_the_operator() {
    let docs = install_docs();
    let d = find(&docs, "Deployment", "cvo");
    let ns = d["metadata"]["namespace"].as_str().expect("namespace");
    find(&docs, "Namespace", ns);
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    let grace = pod["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("grace period");
    assert!(
        grace > cvo::cli::operator::GRACE.as_secs(),
        "the pod must outlive the operator's own {}s shutdown",
        cvo::cli::operator::GRACE.as_secs()
    );
    let sa = pod["serviceAccountName"].as_str().expect("serviceAccountName");
    find(&docs, "ServiceAccount", sa);
    let containers = pod["containers"].as_array().expect("containers");
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    let sc = &c["securityContext"];
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["runAsNonRoot"], true);
    assert_eq!(strs(&sc["capabilities"]["drop"]), ["ALL"]);
    assert!(sc["capabilities"]["add"].is_null());
    assert!(sc["privileged"].is_null() || sc["privileged"] == false);
    // Requests and limits set; the limit above the request.
    let mem = |v: &Value| -> u64 {
        let s = v.as_str().expect("memory quantity");
        let n: u64 = s.trim_end_matches("Mi").parse().expect("Mi");
        n
    };
    let req = mem(&c["resources"]["requests"]["memory"]);
    let lim = mem(&c["resources"]["limits"]["memory"]);
    assert!(req >= 40 && lim >= 2 * req, "requests {req}Mi, limits {lim}Mi");
    assert!(c["resources"]["requests"]["cpu"].is_string());
    // The flags are the operator's own: parse them with its clap definition.
    let args = strs(&c["args"]);
    assert_eq!(&args[..2], ["operator", "start"]);
    let argv = std::iter::once("cvo")
        .chain(args[2..].iter().copied())
        .map(|a| a.replace("$(RELEASE_IMAGE)", "quay.io/x/release@sha256:00"));
    let parsed = Start::try_parse_from(argv).unwrap_or_else(|e| panic!("the Deployment's args: {e}"));
    let a = parsed.args;
    assert_eq!(a.listen.port(), 9099);
    assert!(a.release_image.is_some() && a.payload.is_none() && !a.watch_only);
    // Every path the operator writes is a mounted volume (the root filesystem is read-only).
    let mounts: Vec<&str> = c["volumeMounts"]
        .as_array()
        .expect("volumeMounts")
        .iter()
        .filter(|m| m["readOnly"] != true)
        .filter_map(|m| m["mountPath"].as_str())
        .collect();
    let cache = a.registry.cache_dir.expect("--cache-dir set");
    assert!(
        mounts.iter().any(|m| cache.starts_with(m)),
        "{cache:?} not on a volume: {mounts:?}"
    );
    assert!(mounts.contains(&"/tmp"), "{mounts:?}");
    for p in [
        a.serving_cert_file.expect("cert"),
        a.serving_key_file.expect("key"),
    ] {
        let on = c["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["mountPath"].as_str().is_some_and(|mp| p.starts_with(mp)));
        assert!(on, "{p:?} is not mounted");
    }
    // The probes ask the operator's endpoints on its port, over HTTPS (a cert is given).
    let port = &c["ports"][0];
    assert_eq!(port["containerPort"], 9099);
    for (probe, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")] {
        let g = &c[probe]["httpGet"];
        assert_eq!(g["path"], path, "{probe}");
        assert_eq!(g["port"], port["name"], "{probe}");
        assert_eq!(g["scheme"], "HTTPS", "{probe}");
    }
    // The env names are the upstream ones the flags read.
    let env: Vec<&str> = c["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str())
        .collect();
    for n in ["NODE_NAME", "CVO_NAMESPACE", "CVO_NAME", "RELEASE_IMAGE"] {
        assert!(env.contains(&n), "{env:?}");
    }
}

#[test]
fn rbac_grants_exactly_what_each_role_needs() {
    let docs = install_docs();
    let op = find(&docs, "ClusterRole", "cvo-operator");
    let rules = op["rules"].as_array().expect("rules");
    let all = rules
        .iter()
        .find(|r| strs(&r["resources"]) == ["*"])
        .expect("a rule over every resource");
    assert_eq!(
        strs(&all["verbs"]),
        ["get", "list", "watch", "create", "update", "patch", "delete"],
        "exactly the verbs the engine sends (no deletecollection, no '*')"
    );
    for r in rules {
        assert!(!strs(&r["verbs"]).contains(&"*"), "no wildcard verb: {r}");
        assert!(!strs(&r["verbs"]).contains(&"impersonate"), "{r}");
    }
    let b = find(&docs, "ClusterRoleBinding", "cvo-operator");
    assert_eq!(b["roleRef"]["name"], "cvo-operator");
    assert_eq!(b["subjects"][0]["name"], "cvo");

    let reader = find(&docs, "ClusterRole", "cvo-reader");
    for r in reader["rules"].as_array().expect("rules") {
        assert!(
            strs(&r["verbs"])
                .iter()
                .all(|v| ["get", "list", "watch"].contains(v)),
            "{r}"
        );
        assert!(
            !strs(&r["resources"]).contains(&"secrets"),
            "no Secret reads: {r}"
        );
        assert!(!strs(&r["resources"]).contains(&"*"), "{r}");
    }
    let req = find(&docs, "ClusterRole", "cvo-update-requester");
    let rules = req["rules"].as_array().expect("rules");
    let writes: Vec<&Value> = rules
        .iter()
        .filter(|r| {
            strs(&r["verbs"])
                .iter()
                .any(|v| !["get", "list", "watch"].contains(v))
        })
        .collect();
    assert_eq!(writes.len(), 1, "{rules:?}");
    assert_eq!(strs(&writes[0]["verbs"]), ["patch"]);
    assert_eq!(strs(&writes[0]["resources"]), ["clusterversions"]);
    assert_eq!(strs(&writes[0]["resourceNames"]), ["version"]);
    for r in rules {
        assert_eq!(strs(&r["resources"]), ["clusterversions"], "{r}");
    }
}

#[test]
fn the_service_and_servicemonitor_reach_the_metrics_port() {
    let docs = install_docs();
    let d = find(&docs, "Deployment", "cvo");
    let labels = &d["spec"]["template"]["metadata"]["labels"];
    // Upstream's Service (decisions of issue 27): Prometheus' job label is its name.
    let svc = find(&docs, "Service", "cluster-version-operator");
    assert_eq!(svc["metadata"]["namespace"], "openshift-cluster-version");
    assert_eq!(svc["metadata"]["labels"]["k8s-app"], "cluster-version-operator");
    for (k, v) in svc["spec"]["selector"].as_object().expect("selector") {
        assert_eq!(&labels[k], v, "the Service selects the pods");
    }
    let port = &svc["spec"]["ports"][0];
    assert_eq!(port["name"], "metrics");
    assert_eq!(port["port"], 9099);
    assert_eq!(
        port["targetPort"],
        d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"]
    );
    let cert = svc["metadata"]["annotations"]["service.beta.openshift.io/serving-cert-secret-name"].clone();
    assert_eq!(cert, "cluster-version-operator-serving-cert");
    let vols = d["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .expect("volumes");
    assert!(
        vols.iter().any(|v| v["secret"]["secretName"] == cert),
        "the serving cert Secret is mounted"
    );
    // The ServiceMonitor lives apart (its CRD may be absent) and is shaped as upstream's.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("install/monitoring/servicemonitor.yaml");
    let text = std::fs::read_to_string(&path).expect("install/monitoring/servicemonitor.yaml");
    let sm: Value = serde_norway::from_str(&text).expect("YAML");
    assert_eq!(sm["kind"], "ServiceMonitor");
    assert_eq!(sm["metadata"]["name"], "cluster-version-operator");
    assert!(sm["spec"]["jobLabel"].is_null(), "job is the Service name");
    assert_eq!(sm["spec"]["scrapeClass"], "tls-client-certificate-auth");
    let ep = &sm["spec"]["endpoints"][0];
    assert_eq!(ep["port"], port["name"]);
    assert_eq!(ep["scheme"], "https");
    for (k, v) in sm["spec"]["selector"]["matchLabels"]
        .as_object()
        .expect("matchLabels")
    {
        assert_eq!(
            &svc["metadata"]["labels"][k], v,
            "the ServiceMonitor selects the Service"
        );
    }
    assert_eq!(
        ep["tlsConfig"]["serverName"],
        format!(
            "{}.{}.svc",
            svc["metadata"]["name"].as_str().unwrap_or_default(),
            svc["metadata"]["namespace"].as_str().unwrap_or_default()
        )
    );
}

#[test]
fn the_containerfile_builds_the_operator_without_the_dashboard_or_simulator() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Containerfile"))
        .expect("Containerfile");
    assert!(
        text.contains("--no-default-features --features operator"),
        "{text}"
    );
    assert!(text.contains("--locked"), "{text}");
    let user = text
        .lines()
        .find(|l| l.starts_with("USER "))
        .expect("a USER line");
    assert!(!user.contains("root") && !user.contains(" 0"), "{user}");
    assert!(text.contains("ENTRYPOINT [\"/usr/bin/cvo\"]"), "{text}");
}
