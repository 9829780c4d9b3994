//! The manifests in `install/`: every YAML parses; the Deployment runs non-root with a
//! read-only root filesystem, no privilege escalation and no capabilities, mounts every path it
//! writes, probes the operator's health endpoints and passes flags `cvo operator start`
//! accepts; it runs where and as upstream's runs its own (host network, DNS, tolerations,
//! priority, requests without a memory limit, serving-cert Secret, update service and PromQL
//! target), in a namespace whose pod security admits upstream's pod; the operator is bound to
//! cluster-admin as upstream's is, dashboard users get reads only and update requesters
//! ClusterVersion patches only; the Service and ServiceMonitor reach the metrics port.

use std::path::Path;

use clap::Parser;
use serde_json::{Value, json};

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

/// Upstream's install manifests (`tests/fixtures/upstream/cvo-repo/install/`, openshift/
/// cluster-version-operator `install/`), every document.
fn upstream_docs() -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream/cvo-repo/install");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("upstream install/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut docs = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        for d in serde_norway::Deserializer::from_str(&text) {
            let v: Value = serde::Deserialize::deserialize(d)
                .unwrap_or_else(|e| panic!("{}: not YAML: {e}", f.display()));
            if !v.is_null() {
                docs.push(v);
            }
        }
    }
    docs
}

/// The one document of `kind` named `name` in upstream's install manifests.
fn upstream<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|v| v["kind"] == kind && v["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in upstream's install/"))
}

/// A container's env value by name.
fn env_value<'a>(c: &'a Value, name: &str) -> Option<&'a str> {
    c["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str())
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
    // Requests set, and no memory limit: an OOM kill mid-update is worse than more memory.
    assert!(c["resources"]["requests"]["memory"].is_string());
    assert!(c["resources"]["requests"]["cpu"].is_string());
    assert!(
        c["resources"]["limits"]["memory"].is_null(),
        "no memory limit: {}",
        c["resources"]
    );
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

/// Issue 27 point 3: the pod runs where and as upstream's CVO pod runs, read from upstream's
/// own manifests (`install/0000_00_cluster-version-operator_{00_namespace,30_deployment}.yaml`).
#[test]
fn the_deployment_runs_as_upstream_runs_its_own() {
    let docs = install_docs();
    let up = upstream_docs();
    let d = find(&docs, "Deployment", "cvo");
    let ud = upstream(&up, "Deployment", "cluster-version-operator");
    let pod = &d["spec"]["template"]["spec"];
    let upod = &ud["spec"]["template"]["spec"];
    // Host network with the node's resolver, on the control plane, at upstream's priority.
    assert_eq!(pod["hostNetwork"], true);
    for k in ["hostNetwork", "dnsPolicy", "priorityClassName", "nodeSelector"] {
        assert_eq!(pod[k], upod[k], "spec.template.spec.{k}");
    }
    assert_eq!(pod["dnsPolicy"], "Default");
    assert_eq!(pod["priorityClassName"], "system-cluster-critical");
    // Every toleration of upstream's, and no other.
    let tol = |p: &Value| -> Vec<String> {
        let mut v: Vec<String> = p["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                format!(
                    "{}/{}/{}/{}",
                    t["key"].as_str().unwrap_or_default(),
                    t["operator"].as_str().unwrap_or_default(),
                    t["effect"].as_str().unwrap_or_default(),
                    t["tolerationSeconds"]
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(tol(pod), tol(upod));
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/network-unavailable",
    ] {
        assert!(
            tol(pod).iter().any(|t| t.starts_with(key)),
            "{key}: {:?}",
            tol(pod)
        );
    }
    let c = &pod["containers"][0];
    let uc = &upod["containers"][0];
    // Upstream's requests; no limit at all (an OOM kill mid-update is worse than memory use).
    assert_eq!(c["resources"]["requests"], uc["resources"]["requests"]);
    assert!(c["resources"]["limits"].is_null(), "{}", c["resources"]);
    assert!(uc["resources"]["limits"].is_null());
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("install/03-deployment.yaml"))
            .expect("03-deployment.yaml");
    assert!(
        text.contains("no memory") && text.contains("OOM"),
        "the manifest says why"
    );
    // The API server of its own node, as upstream's pod reaches it.
    for n in ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"] {
        assert_eq!(env_value(c, n), env_value(uc, n), "{n}");
        assert!(env_value(c, n).is_some(), "{n}");
    }
    // The serving certificate upstream's Service asks the service CA for.
    let secret = |p: &Value| -> Vec<String> {
        p["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["secret"]["secretName"].as_str().map(String::from))
            .collect()
    };
    assert_eq!(secret(pod), ["cluster-version-operator-serving-cert"]);
    assert_eq!(secret(pod), secret(upod));
    let usvc = upstream(&up, "Service", "cluster-version-operator");
    assert_eq!(
        usvc["metadata"]["annotations"]["service.beta.openshift.io/serving-cert-secret-name"],
        "cluster-version-operator-serving-cert"
    );
    // Labels per decisions: selected by our `app`, scraped by upstream's `k8s-app`.
    let labels = &d["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["app"], "cvo");
    assert_eq!(d["spec"]["selector"]["matchLabels"], json!({"app": "cvo"}));
    assert_eq!(
        labels["k8s-app"],
        ud["spec"]["template"]["metadata"]["labels"]["k8s-app"]
    );
    assert_eq!(
        usvc["spec"]["selector"],
        json!({"k8s-app": labels["k8s-app"].clone()}),
        "upstream's Service selects our pod"
    );

    // Updates: --fetch-updates with no --update-service (spec.upstream, else the default), and
    // PromQL risks against upstream's target: the Thanos querier's service name and port, the
    // pod's ServiceAccount token, the service CA bundle (upstream
    // pkg/clusterconditions/clusterconditions.go `DefaultPromQLTarget`).
    let args = strs(&c["args"]);
    let argv = std::iter::once("cvo")
        .chain(args[2..].iter().copied())
        .map(|a| a.replace("$(RELEASE_IMAGE)", "quay.io/x/release@sha256:00"));
    let a = Start::try_parse_from(argv)
        .unwrap_or_else(|e| panic!("the Deployment's args: {e}"))
        .args;
    assert!(a.updates.fetch_updates);
    assert_eq!(a.updates.update_service, None, "spec.upstream decides");
    assert_eq!(
        a.updates.prometheus_url.as_deref(),
        Some("https://thanos-querier.openshift-monitoring.svc.cluster.local:9091")
    );
    let token = a.updates.prometheus_token_file.expect("--prometheus-token-file");
    assert_eq!(
        token,
        Path::new("/var/run/secrets/kubernetes.io/serviceaccount/token"),
        "the pod's own ServiceAccount token"
    );
    assert_eq!(pod["automountServiceAccountToken"], true);
    // Upstream does not resolve the name (`--use-dns-for-services=false`): the node's
    // resolver (dnsPolicy Default) does not know service names; it connects to the Service's
    // ClusterIP.
    assert_eq!(
        a.updates.prometheus_service.as_deref(),
        Some("openshift-monitoring/thanos-querier")
    );
    let ca = a.updates.prometheus_ca_file.expect("--prometheus-ca-file");
    assert_eq!(ca, Path::new("/etc/tls/service-ca/service-ca.crt"));
    // The CA file comes from upstream's service-ca ConfigMap, mounted where upstream mounts it.
    let mount_of = |p: &Value, c: &Value, path: &Path| -> Option<Value> {
        let m = c["volumeMounts"]
            .as_array()?
            .iter()
            .find(|m| m["mountPath"].as_str().is_some_and(|mp| path.starts_with(mp)))?;
        p["volumes"]
            .as_array()?
            .iter()
            .find(|v| v["name"] == m["name"])
            .map(|v| v["configMap"].clone())
    };
    let cm = mount_of(pod, c, &ca).expect("the CA file is on a volume");
    assert_eq!(cm["name"], "openshift-service-ca.crt");
    assert_eq!(Some(cm), mount_of(upod, uc, &ca), "as upstream's");
}

/// Issue 27 point 3: the namespace lets upstream's pod (host network, hostPath volumes) start
/// again after a rollback: pod security `privileged` like upstream's own namespace manifest.
#[test]
fn the_namespace_admits_upstreams_pod() {
    let docs = install_docs();
    let ns = find(&docs, "Namespace", "openshift-cluster-version");
    let up = upstream_docs();
    let uns = upstream(&up, "Namespace", "openshift-cluster-version");
    for mode in ["enforce", "audit", "warn"] {
        let k = format!("pod-security.kubernetes.io/{mode}");
        assert_eq!(ns["metadata"]["labels"][&k], "privileged", "{k}");
        assert_eq!(ns["metadata"]["labels"][&k], uns["metadata"]["labels"][&k], "{k}");
    }
    // What needs it: upstream's pod uses the host network and hostPath volumes, which the
    // `baseline` and `restricted` levels refuse; ours uses the host network.
    let ud = upstream(&up, "Deployment", "cluster-version-operator");
    assert_eq!(ud["spec"]["template"]["spec"]["hostNetwork"], true);
    assert!(
        ud["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|v| v["hostPath"].is_object())
    );
    assert_eq!(
        ns["metadata"]["labels"]["openshift.io/cluster-monitoring"],
        "true"
    );
}

#[test]
fn rbac_grants_cluster_admin_to_the_operator_as_upstream_and_little_to_people() {
    let docs = install_docs();
    // The operator: cluster-admin, as upstream binds its own ServiceAccount.
    let d = find(&docs, "Deployment", "cvo");
    let sa = d["spec"]["template"]["spec"]["serviceAccountName"]
        .as_str()
        .expect("serviceAccountName");
    let ns = d["metadata"]["namespace"].as_str().expect("namespace");
    let bindings: Vec<&Value> = docs
        .iter()
        .map(|(_, v)| v)
        .filter(|v| v["kind"] == "ClusterRoleBinding" || v["kind"] == "RoleBinding")
        .filter(|v| {
            v["subjects"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["kind"] == "ServiceAccount" && s["name"] == sa && s["namespace"] == ns)
        })
        .collect();
    assert_eq!(bindings.len(), 1, "one binding of {ns}/{sa}: {bindings:?}");
    let b = bindings[0];
    assert_eq!(b["kind"], "ClusterRoleBinding");
    assert_eq!(b["roleRef"]["kind"], "ClusterRole");
    assert_eq!(b["roleRef"]["name"], "cluster-admin");
    let up = upstream_docs();
    let up_binding = up
        .iter()
        .find(|v| v["kind"] == "ClusterRoleBinding" && v["subjects"][0]["name"] == "cluster-version-operator")
        .expect("upstream's binding of its ServiceAccount");
    assert_eq!(b["roleRef"], up_binding["roleRef"], "the same role as upstream's");
    // No role of our own pretends to be least privilege for the operator.
    assert!(
        !docs
            .iter()
            .any(|(_, v)| v["kind"] == "ClusterRole" && v["metadata"]["name"] == "cvo-operator"),
        "no cvo-operator ClusterRole"
    );
    // The file says why.
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("install/02-rbac.yaml"))
        .expect("02-rbac.yaml");
    assert!(
        text.contains("cluster-admin") && text.contains("escalate"),
        "{text}"
    );

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
