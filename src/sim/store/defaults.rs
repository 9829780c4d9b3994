//! Server-side defaults of the built-in kinds, as kube-apiserver v1.36 applies them on create
//! and update (upstream: `pkg/apis/core/v1/defaults.go`, `pkg/apis/apps/v1/defaults.go`,
//! `pkg/apis/batch/v1/defaults.go`, `pkg/apis/scheduling/v1/defaults.go` and the registry
//! strategies in kubernetes/kubernetes), and the zero values Go's `omitempty` drops from what
//! the server returns (a PriorityClass's `globalDefault: false` comes back absent).
//!
//! Covered: pod templates (Deployment, DaemonSet, StatefulSet, ReplicaSet, Job, CronJob) and
//! Pods, Deployment, DaemonSet, StatefulSet, Job, CronJob, Service (with a cluster IP from
//! 172.30.0.0/16 and node ports from 30000-32767), Secret, Namespace, PriorityClass, and empty
//! `metadata` maps and lists. Not covered: the defaults of other kinds and of rarely used
//! fields (ephemeral containers, volume sources but ConfigMap/Secret/projected/downwardAPI/
//! hostPath, probes but `httpGet`/`tcpSocket`/`exec`/`grpc` timings).

use serde_json::{Map, Value, json};

use super::ResourceType;

/// Sets `m[k]` to `v` when absent (or null).
fn default(m: &mut Map<String, Value>, k: &str, v: Value) {
    if m.get(k).is_none_or(Value::is_null) {
        m.insert(k.to_owned(), v);
    }
}

/// Removes `m[k]` when it equals `zero` (what `omitempty` does on the wire).
fn omit_zero(m: &mut Map<String, Value>, k: &str, zero: &Value) {
    if m.get(k) == Some(zero) {
        m.remove(k);
    }
}

fn obj<'a>(v: &'a mut Value, k: &str) -> Option<&'a mut Map<String, Value>> {
    v.get_mut(k)?.as_object_mut()
}

/// `spec[key]`, the update strategy of a Deployment, DaemonSet or StatefulSet: its `type`
/// defaults to `RollingUpdate`, also in an empty strategy (`{}`, what `kubectl create
/// deployment` sends), and a rolling update gets `rollingUpdate` with `defaults`
/// (`SetDefaults_Deployment`, `SetDefaults_DaemonSet`, `SetDefaults_StatefulSet` in
/// `pkg/apis/apps/v1/defaults.go`).
fn rolling_update(m: &mut Map<String, Value>, key: &str, defaults: &[(&str, Value)]) {
    default(m, key, json!({}));
    let Some(s) = m.get_mut(key).and_then(Value::as_object_mut) else {
        return;
    };
    default(s, "type", json!("RollingUpdate"));
    if s["type"] != "RollingUpdate" {
        return;
    }
    default(s, "rollingUpdate", json!({}));
    if let Some(r) = s.get_mut("rollingUpdate").and_then(Value::as_object_mut) {
        for (k, v) in defaults {
            default(r, k, v.clone());
        }
    }
}

/// Whether kube-apiserver would pull `image` always (`:latest` or no tag, and no digest).
fn pulls_always(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
    }
}

fn probe(p: &mut Value) {
    let Some(m) = p.as_object_mut() else {
        return;
    };
    default(m, "timeoutSeconds", json!(1));
    default(m, "periodSeconds", json!(10));
    default(m, "successThreshold", json!(1));
    default(m, "failureThreshold", json!(3));
    if let Some(h) = m.get_mut("httpGet").and_then(Value::as_object_mut) {
        default(h, "scheme", json!("HTTP"));
        default(h, "path", json!("/"));
    }
    if let Some(g) = m.get_mut("grpc").and_then(Value::as_object_mut) {
        default(g, "service", json!(""));
    }
}

fn container(c: &mut Value) {
    let Some(m) = c.as_object_mut() else {
        return;
    };
    let image = m
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    default(
        m,
        "imagePullPolicy",
        json!(if pulls_always(&image) {
            "Always"
        } else {
            "IfNotPresent"
        }),
    );
    default(m, "terminationMessagePath", json!("/dev/termination-log"));
    default(m, "terminationMessagePolicy", json!("File"));
    default(m, "resources", json!({}));
    for k in ["stdin", "stdinOnce", "tty"] {
        omit_zero(m, k, &json!(false));
    }
    for p in m
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(p) = p.as_object_mut() {
            default(p, "protocol", json!("TCP"));
        }
    }
    for e in m
        .get_mut("env")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(f) = e
            .pointer_mut("/valueFrom/fieldRef")
            .and_then(Value::as_object_mut)
        {
            default(f, "apiVersion", json!("v1"));
        }
    }
    for k in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = m.get_mut(k) {
            probe(p);
        }
    }
}

/// The defaults of a PodSpec (also in pod templates).
fn pod_spec(spec: &mut Value) {
    let Some(m) = spec.as_object_mut() else {
        return;
    };
    default(m, "restartPolicy", json!("Always"));
    default(m, "terminationGracePeriodSeconds", json!(30));
    default(m, "dnsPolicy", json!("ClusterFirst"));
    default(m, "securityContext", json!({}));
    default(m, "schedulerName", json!("default-scheduler"));
    for k in ["hostNetwork", "hostPID", "hostIPC"] {
        omit_zero(m, k, &json!(false));
    }
    for k in ["containers", "initContainers"] {
        for c in m.get_mut(k).and_then(Value::as_array_mut).into_iter().flatten() {
            container(c);
        }
    }
    for v in m
        .get_mut("volumes")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for k in ["configMap", "secret", "projected", "downwardAPI"] {
            if let Some(src) = v.get_mut(k).and_then(Value::as_object_mut) {
                default(src, "defaultMode", json!(420));
            }
        }
        if let Some(h) = v.get_mut("hostPath").and_then(Value::as_object_mut) {
            default(h, "type", json!(""));
        }
    }
}

fn template(spec: &mut Map<String, Value>) {
    if let Some(t) = spec.get_mut("template")
        && let Some(s) = t.get_mut("spec")
    {
        pod_spec(s);
    }
}

/// Applies the server-side defaults of `t` to `o` (create or update of the main resource).
/// `uid` is the object's uid (a Job's generated selector names it); `create` says whether the
/// object is new (status defaults apply then).
pub fn apply(t: &ResourceType, o: &mut Value, uid: &str, create: bool) {
    metadata(o);
    if t.crd.is_some() {
        return;
    }
    match (t.group.as_str(), t.kind.as_str()) {
        ("", "Pod") => {
            if let Some(s) = o.get_mut("spec") {
                pod_spec(s);
                if let Some(m) = s.as_object_mut() {
                    default(m, "enableServiceLinks", json!(true));
                }
            }
        }
        ("", "Service") => service(o, uid),
        ("", "Secret") => {
            if let Some(m) = o.as_object_mut() {
                default(m, "type", json!("Opaque"));
                if let Some(sd) = m.remove("stringData")
                    && let Some(sd) = sd.as_object()
                {
                    use base64::Engine as _;
                    let data = m.entry("data").or_insert_with(|| json!({}));
                    for (k, v) in sd {
                        let text = v.as_str().unwrap_or_default();
                        data[k] = json!(base64::engine::general_purpose::STANDARD.encode(text));
                    }
                }
            }
        }
        ("", "Namespace") => {
            let name = o["metadata"]["name"].as_str().unwrap_or_default().to_owned();
            o["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
        }
        ("apps", "Deployment") => {
            if let Some(m) = obj(o, "spec") {
                default(m, "replicas", json!(1));
                rolling_update(
                    m,
                    "strategy",
                    &[("maxUnavailable", json!("25%")), ("maxSurge", json!("25%"))],
                );
                default(m, "revisionHistoryLimit", json!(10));
                default(m, "progressDeadlineSeconds", json!(600));
                omit_zero(m, "paused", &json!(false));
                template(m);
            }
            status_default(o, create, json!({}));
        }
        ("apps", "DaemonSet") => {
            if let Some(m) = obj(o, "spec") {
                rolling_update(
                    m,
                    "updateStrategy",
                    &[("maxUnavailable", json!(1)), ("maxSurge", json!(0))],
                );
                default(m, "revisionHistoryLimit", json!(10));
                template(m);
            }
            if create {
                // The template generation the DaemonSet controller tracks (registry strategy).
                o["metadata"]["annotations"]["deprecated.daemonset.template.generation"] = json!("1");
            }
            status_default(
                o,
                create,
                json!({"currentNumberScheduled": 0, "numberMisscheduled": 0,
                       "desiredNumberScheduled": 0, "numberReady": 0}),
            );
        }
        ("apps", "StatefulSet") => {
            if let Some(m) = obj(o, "spec") {
                default(m, "replicas", json!(1));
                default(m, "podManagementPolicy", json!("OrderedReady"));
                rolling_update(m, "updateStrategy", &[("partition", json!(0))]);
                default(m, "revisionHistoryLimit", json!(10));
                default(
                    m,
                    "persistentVolumeClaimRetentionPolicy",
                    json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
                );
                template(m);
            }
            status_default(o, create, json!({"replicas": 0, "availableReplicas": 0}));
        }
        ("apps", "ReplicaSet") => {
            if let Some(m) = obj(o, "spec") {
                default(m, "replicas", json!(1));
                template(m);
            }
            status_default(o, create, json!({"replicas": 0}));
        }
        ("batch", "Job") => job(o, uid, create),
        ("batch", "CronJob") => {
            if let Some(m) = obj(o, "spec") {
                default(m, "concurrencyPolicy", json!("Allow"));
                default(m, "suspend", json!(false));
                default(m, "successfulJobsHistoryLimit", json!(3));
                default(m, "failedJobsHistoryLimit", json!(1));
                if let Some(js) = m
                    .get_mut("jobTemplate")
                    .and_then(|j| j.get_mut("spec"))
                    .and_then(Value::as_object_mut)
                {
                    template(js);
                }
            }
            status_default(o, create, json!({}));
        }
        ("scheduling.k8s.io", "PriorityClass") => {
            if let Some(m) = o.as_object_mut() {
                default(m, "preemptionPolicy", json!("PreemptLowerPriority"));
                omit_zero(m, "globalDefault", &json!(false));
            }
        }
        _ => {}
    }
}

/// `status` as a new object of a kind with a non-pointer status struct comes back.
fn status_default(o: &mut Value, create: bool, status: Value) {
    if let Some(m) = o.as_object_mut()
        && create
    {
        default(m, "status", status);
    }
}

/// Empty `metadata` maps and lists are dropped (`omitempty`).
fn metadata(o: &mut Value) {
    if let Some(m) = obj(o, "metadata") {
        for k in ["labels", "annotations"] {
            if m.get(k)
                .is_some_and(|v| v.as_object().is_some_and(Map::is_empty) || v.is_null())
            {
                m.remove(k);
            }
        }
        for k in ["finalizers", "ownerReferences"] {
            if m.get(k)
                .is_some_and(|v| v.as_array().is_some_and(Vec::is_empty) || v.is_null())
            {
                m.remove(k);
            }
        }
        for k in ["generateName", "namespace"] {
            omit_zero(m, k, &json!(""));
        }
    }
}

fn service(o: &mut Value, uid: &str) {
    // A cluster IP and node ports derived from the uid counter (the simulator's uids end in
    // a counter), so they are stable and distinct.
    let n = u64::from_str_radix(uid.rsplit('-').next().unwrap_or("0"), 16).unwrap_or(0);
    let Some(m) = obj(o, "spec") else {
        return;
    };
    default(m, "type", json!("ClusterIP"));
    default(m, "sessionAffinity", json!("None"));
    let ty = m["type"].as_str().unwrap_or_default().to_owned();
    if ty != "ExternalName" {
        default(m, "internalTrafficPolicy", json!("Cluster"));
        let ip = format!("172.30.{}.{}", (n >> 8) % 256, n % 254 + 1);
        default(m, "clusterIP", json!(ip));
        let ip = m["clusterIP"].clone();
        default(m, "clusterIPs", json!([ip]));
        default(m, "ipFamilies", json!(["IPv4"]));
        default(m, "ipFamilyPolicy", json!("SingleStack"));
    }
    if ty == "NodePort" || ty == "LoadBalancer" {
        default(m, "externalTrafficPolicy", json!("Cluster"));
    }
    omit_zero(m, "publishNotReadyAddresses", &json!(false));
    for (i, p) in m
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(p) = p.as_object_mut() {
            default(p, "protocol", json!("TCP"));
            let port = p.get("port").cloned().unwrap_or(Value::Null);
            default(p, "targetPort", port);
            if ty == "NodePort" || ty == "LoadBalancer" {
                default(p, "nodePort", json!(30000 + (n * 7 + i as u64) % 2768));
            }
        }
    }
    if let Some(m) = o.as_object_mut() {
        default(m, "status", json!({"loadBalancer": {}}));
    }
}

fn job(o: &mut Value, uid: &str, create: bool) {
    let name = o["metadata"]["name"].as_str().unwrap_or_default().to_owned();
    let Some(m) = obj(o, "spec") else {
        return;
    };
    default(m, "parallelism", json!(1));
    default(m, "completions", json!(1));
    default(m, "backoffLimit", json!(6));
    default(m, "completionMode", json!("NonIndexed"));
    default(m, "suspend", json!(false));
    default(m, "podReplacementPolicy", json!("TerminatingOrFailed"));
    default(m, "manualSelector", json!(false));
    if create && m["manualSelector"] != json!(true) {
        // The Job controller's generated selector and labels (pkg/registry/batch/job/strategy.go).
        let labels = json!({
            "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
            "controller-uid": uid, "job-name": name,
        });
        m.insert(
            "selector".into(),
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
        );
        let tl = &mut m["template"]["metadata"]["labels"];
        if !tl.is_object() {
            *tl = json!({});
        }
        if let (Some(tl), Some(add)) = (tl.as_object_mut(), labels.as_object()) {
            for (k, v) in add {
                tl.insert(k.clone(), v.clone());
            }
        }
    }
    template(m);
    let tl = o["spec"]["template"]["metadata"]["labels"].clone();
    if create && o["metadata"]["labels"].as_object().is_none_or(Map::is_empty) && tl.is_object() {
        o["metadata"]["labels"] = tl;
    }
    status_default(o, create, json!({}));
}

/// What an update of a Service without them keeps from the stored one: the allocated cluster
/// IPs, IP families and node ports (kube-apiserver `pkg/registry/core/service/storage`,
/// `patchAllocatedValues`).
pub fn keep_allocated(t: &ResourceType, old: &Value, new: &mut Value) {
    if !(t.group.is_empty() && t.kind == "Service") {
        return;
    }
    let (Some(o), Some(n)) = (
        old["spec"].as_object(),
        new.get_mut("spec").and_then(Value::as_object_mut),
    ) else {
        return;
    };
    for k in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
        if let Some(v) = o.get(k) {
            default(n, k, v.clone());
        }
    }
    let old_ports = o
        .get("ports")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for p in n
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let Some(pm) = p.as_object_mut() else {
            continue;
        };
        if let Some(np) = old_ports
            .iter()
            .find(|op| op["port"] == pm["port"])
            .and_then(|op| op.get("nodePort"))
        {
            default(pm, "nodePort", np.clone());
        }
    }
}

/// A DaemonSet update keeps its `deprecated.daemonset.template.generation` annotation, one
/// higher when the pod template changed (kube-apiserver `pkg/registry/apps/daemonset/strategy.go`).
pub fn track_template(t: &ResourceType, old: &Value, new: &mut Value) {
    if !(t.group == "apps" && t.kind == "DaemonSet") {
        return;
    }
    const KEY: &str = "deprecated.daemonset.template.generation";
    let Some(before) = old["metadata"]["annotations"][KEY]
        .as_str()
        .and_then(|g| g.parse::<u64>().ok())
    else {
        return;
    };
    let now = if old["spec"]["template"] == new["spec"]["template"] {
        before
    } else {
        before + 1
    };
    if let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        let a = m.entry("annotations").or_insert_with(|| json!({}));
        if let Some(a) = a.as_object_mut() {
            a.insert(KEY.to_owned(), json!(now.to_string()));
        }
    }
}
