//! Manifest modifiers applied before the merge (tests in upstream
//! `lib/resourcebuilder/podspec_test.go`, `core_test.go`): proxy
//! injection, the CVO Deployment's internal load-balancer rewrite, TLS profile injection into
//! ConfigMaps, the ClusterVersion owner reference, and cvo's handover (the upstream CVO's
//! Deployment kept at 0 replicas). Upstream: `lib/resourcebuilder/podspec.go`,
//! `lib/resourcebuilder/core.go`, `lib/resourcebuilder/apps.go`, `pkg/cvo/cvo.go`
//! `ownerReferenceModifier`.

use k8s_openapi::{
    api::{
        apps::v1::{DaemonSet, Deployment},
        core::v1::{ConfigMap, Container, EnvVar, PodSpec},
    },
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};
use serde_json::Value;

use super::{ApplyContext, ManifestId, decode, encode};
use crate::reconcile::errors::UpdateError;

/// Annotation listing containers that get the cluster proxy environment.
pub(crate) const INJECT_PROXY: &str = "config.openshift.io/inject-proxy";
/// Annotation asking for TLS profile injection into a ConfigMap.
pub(crate) const INJECT_TLS: &str = "config.openshift.io/inject-tls";
/// Annotation making a manifest create-only.
pub(crate) const CREATE_ONLY: &str = "release.openshift.io/create-only";

/// The cluster-wide proxy, from `proxies.config.openshift.io/cluster` `status`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyStatus {
    /// `status.httpProxy`.
    pub http_proxy: String,
    /// `status.httpsProxy`.
    pub https_proxy: String,
    /// `status.noProxy`.
    pub no_proxy: String,
}

impl ProxyStatus {
    /// Reads `status` of a Proxy object; missing fields are empty.
    pub fn from_object(obj: &Value) -> Self {
        let s = |k: &str| obj["status"][k].as_str().unwrap_or_default().to_owned();
        Self {
            http_proxy: s("httpProxy"),
            https_proxy: s("httpsProxy"),
            no_proxy: s("noProxy"),
        }
    }
}

/// Whether `meta` carries `release.openshift.io/create-only: true` (case-insensitive).
pub(crate) fn is_create_only(meta: &Value) -> bool {
    meta["annotations"][CREATE_ONLY]
        .as_str()
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Appends `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY` (the non-empty ones) to each container and
/// init container named in `names` (upstream `podspec_test.go` `TestUpdatePodSpecWithProxy`).
/// Nothing happens when all three values are empty.
///
/// Errors with `requested injection for non-existent container: "{c}"` for a name that is neither
/// a container nor an init container.
pub fn inject_proxy(spec: &mut PodSpec, names: &[&str], proxy: &ProxyStatus) -> Result<(), UpdateError> {
    if proxy.http_proxy.is_empty() && proxy.https_proxy.is_empty() && proxy.no_proxy.is_empty() {
        return Ok(());
    }
    let vars: Vec<EnvVar> = [
        ("HTTP_PROXY", &proxy.http_proxy),
        ("HTTPS_PROXY", &proxy.https_proxy),
        ("NO_PROXY", &proxy.no_proxy),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_empty())
    .map(|(n, v)| EnvVar {
        name: n.to_owned(),
        value: Some(v.clone()),
        value_from: None,
    })
    .collect();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let mut found = false;
        let inits = spec.init_containers.get_or_insert_with(Vec::new);
        for c in spec
            .containers
            .iter_mut()
            .chain(inits.iter_mut())
            .filter(|c| c.name == name)
        {
            c.env.get_or_insert_with(Vec::new).extend(vars.iter().cloned());
            found = true;
        }
        if spec.init_containers.as_ref().is_some_and(Vec::is_empty) {
            spec.init_containers = None;
        }
        if !found {
            return Err(UpdateError::failed(format!(
                "requested injection for non-existent container: {name:?}"
            )));
        }
    }
    Ok(())
}

/// Host and port of `infrastructures.config.openshift.io/cluster` `status.apiServerInternalURL`
/// (`https://api-int.example.com:6443` ⇒ (`api-int.example.com`, `6443`)); port `443` when the
/// URL has none; `None` when there is no host.
pub fn internal_lb_from_url(url: &str) -> Option<(String, String)> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let hostport = rest.split('/').next().unwrap_or_default();
    if hostport.is_empty() {
        return None;
    }
    // IPv6 literal in brackets
    if let Some(stripped) = hostport.strip_prefix('[') {
        let (h, after) = stripped.split_once(']')?;
        let port = after.strip_prefix(':').filter(|p| !p.is_empty()).unwrap_or("443");
        return Some((h.to_owned(), port.to_owned()));
    }
    match hostport.rsplit_once(':') {
        Some((h, p)) if !p.is_empty() => Some((h.to_owned(), p.to_owned())),
        Some((h, _)) => Some((h.to_owned(), "443".to_owned())),
        None => Some((hostport.to_owned(), "443".to_owned())),
    }
}

fn set_env(c: &mut Container, name: &str, value: &str) {
    let env = c.env.get_or_insert_with(Vec::new);
    match env.iter_mut().find(|e| e.name == name) {
        Some(e) => {
            e.value = Some(value.to_owned());
            e.value_from = None;
        }
        None => env.push(EnvVar {
            name: name.to_owned(),
            value: Some(value.to_owned()),
            value_from: None,
        }),
    }
}

/// Points container `container` at the internal API load balancer (upstream `podspec_test.go`
/// `TestUpdatePodSpecWithInternalLoadBalancerKubeService`): existing `KUBERNETES_SERVICE_PORT` /
/// `KUBERNETES_SERVICE_HOST` values are replaced and missing ones appended (PORT before HOST);
/// an empty host changes nothing; an empty port means `443`.
pub fn update_pod_spec_with_internal_lb(spec: &mut PodSpec, container: &str, host: &str, port: &str) {
    if host.is_empty() {
        return;
    }
    let port = if port.is_empty() { "443" } else { port };
    for c in spec.containers.iter_mut().filter(|c| c.name == container) {
        set_env(c, "KUBERNETES_SERVICE_PORT", port);
        set_env(c, "KUBERNETES_SERVICE_HOST", host);
    }
}

/// The upstream CVO's own Deployment in the release payload: namespace, name and container
/// (upstream `install/0000_00_cluster-version-operator_30_deployment.yaml`; the internal
/// load-balancer rewrite of `lib/resourcebuilder/apps.go` targets it by these names).
pub const UPSTREAM_CVO_DEPLOYMENT: (&str, &str, &str) = (
    "openshift-cluster-version",
    "cluster-version-operator",
    "cluster-version-operator",
);

/// The handover to cvo (cvo only; upstream's CVO applies this Deployment to run itself): the
/// payload's [`UPSTREAM_CVO_DEPLOYMENT`] is applied with `spec.replicas: 0`, whatever the
/// manifest says (it leaves replicas unset, which means 1).
///
/// cvo replaces that operator, so applying the manifest as it is would start the upstream CVO
/// again beside cvo, or scale it back up after the administrator scaled it to 0, and the two
/// would take turns at the Lease and the cluster. Applying the rest of it keeps its spec (image,
/// flags, env) tracking the release cvo applies, so a rollback stays "scale it to 1, delete
/// cvo's Deployment" and starts the upstream CVO of the release the cluster runs. Returns
/// whether `d` is that Deployment (and now has 0 replicas).
pub fn hand_over_upstream_cvo(d: &mut Deployment) -> bool {
    let (ns, name, _) = UPSTREAM_CVO_DEPLOYMENT;
    if d.metadata.namespace.as_deref() != Some(ns) || d.metadata.name.as_deref() != Some(name) {
        return false;
    }
    d.spec.replicas = Some(0);
    true
}

/// Watch-only (dry run) judges the handover against the live object: while the upstream CVO's
/// Deployment runs (live `spec.replicas` not 0) the manifest's replicas stand (upstream's
/// states none, which means 1), so a watch-only engine beside the upstream CVO (the
/// dashboard's, `--watch-only`) reports no drift for the operator that runs the cluster;
/// scaled to 0 (cvo runs it) the 0 stands. Active-apply keeps [`hand_over_upstream_cvo`]'s 0
/// whatever the live object says. Returns `required`, changed only for that Deployment in a
/// dry run.
pub(crate) fn dry_run_handover(
    ctx: &ApplyContext,
    manifest: &Value,
    mut required: Value,
    live: &Value,
) -> Value {
    let (ns, name, _) = UPSTREAM_CVO_DEPLOYMENT;
    let m = &required["metadata"];
    let is_it = required["kind"] == "Deployment"
        && required["apiVersion"] == "apps/v1"
        && m["namespace"] == ns
        && m["name"] == name;
    if ctx.dry_run && is_it && live["spec"]["replicas"].as_i64().unwrap_or(1) != 0 {
        match (manifest["spec"].get("replicas"), required["spec"].as_object_mut()) {
            (Some(r), Some(spec)) => {
                spec.insert("replicas".to_owned(), r.clone());
            }
            (None, Some(spec)) => {
                spec.remove("replicas");
            }
            _ => {}
        }
    }
    required
}

/// A TLS profile (`apiservers.config.openshift.io/cluster` `spec.tlsSecurityProfile`, resolved).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsProfile {
    /// `VersionTLS12` etc.; `None` removes the field.
    pub min_tls_version: Option<String>,
    /// Cipher names; `None` removes the field.
    pub cipher_suites: Option<Vec<String>>,
}

impl TlsProfile {
    /// The default (Intermediate) profile of openshift/api `config/v1/types_tlssecurityprofile.go`,
    /// used when the APIServer object is missing or names no profile.
    pub(crate) fn intermediate() -> Self {
        Self {
            min_tls_version: Some("VersionTLS12".to_owned()),
            cipher_suites: Some(
                [
                    "TLS_AES_128_GCM_SHA256",
                    "TLS_AES_256_GCM_SHA384",
                    "TLS_CHACHA20_POLY1305_SHA256",
                    "ECDHE-ECDSA-AES128-GCM-SHA256",
                    "ECDHE-RSA-AES128-GCM-SHA256",
                    "ECDHE-ECDSA-AES256-GCM-SHA384",
                    "ECDHE-RSA-AES256-GCM-SHA384",
                    "ECDHE-ECDSA-CHACHA20-POLY1305",
                    "ECDHE-RSA-CHACHA20-POLY1305",
                ]
                .map(String::from)
                .to_vec(),
            ),
        }
    }

    /// The profile of an APIServer object (`spec.tlsSecurityProfile`): `Custom` uses its
    /// `custom` fields, `Intermediate`, a missing object or no profile give [`Self::intermediate`];
    /// `Old` and `Modern` use their `old`/`modern` blocks when present, otherwise the defaults.
    pub fn from_apiserver(obj: Option<&Value>) -> Self {
        let Some(p) = obj.map(|o| &o["spec"]["tlsSecurityProfile"]) else {
            return Self::intermediate();
        };
        let block = match p["type"].as_str().unwrap_or_default() {
            "Custom" => &p["custom"],
            "Old" => &p["old"],
            "Modern" => &p["modern"],
            _ => return Self::intermediate(),
        };
        if !block.is_object() {
            return Self::intermediate();
        }
        Self {
            min_tls_version: block["minTLSVersion"].as_str().map(str::to_owned),
            cipher_suites: block["ciphers"]
                .as_array()
                .map(|a| a.iter().filter_map(|c| c.as_str().map(str::to_owned)).collect()),
        }
    }
}

/// Injects the TLS profile into a ConfigMap annotated `config.openshift.io/inject-tls: "true"`
/// (upstream `lib/resourcebuilder/core_test.go` `TestModifyConfigMap`): each data entry holding a
/// `GenericOperatorConfig` (`operator.openshift.io/v1alpha1`) or `GenericControllerConfig`
/// (`config.openshift.io/v1`) gets `servingInfo.minTLSVersion` and `servingInfo.cipherSuites` set
/// (or removed when the profile lacks them). Entries that do not parse as YAML, other kinds, wrong
/// apiVersions, and entries that already match are left byte-for-byte untouched. Returns whether it
/// changed `cm`.
pub fn inject_tls(cm: &mut ConfigMap, profile: &TlsProfile) -> bool {
    let annotated = cm
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(INJECT_TLS))
        .is_some_and(|v| v == "true");
    if !annotated {
        return false;
    }
    let mut changed = false;
    for text in cm.data.iter_mut().flat_map(|d| d.values_mut()) {
        let Ok(mut doc) = serde_norway::from_str::<Value>(text) else {
            continue;
        };
        let kind = doc["kind"].as_str().unwrap_or_default();
        let api = doc["apiVersion"].as_str().unwrap_or_default();
        let matches = matches!(
            (kind, api),
            ("GenericOperatorConfig", "operator.openshift.io/v1alpha1")
                | ("GenericControllerConfig", "config.openshift.io/v1")
        );
        if !matches {
            continue;
        }
        let Some(obj) = doc.as_object_mut() else { continue };
        let serving = obj
            .entry("servingInfo")
            .or_insert_with(|| Value::Object(Default::default()));
        let Some(s) = serving.as_object_mut() else {
            continue;
        };
        let before = s.clone();
        match &profile.min_tls_version {
            Some(v) => s.insert("minTLSVersion".into(), Value::String(v.clone())),
            None => s.remove("minTLSVersion"),
        };
        match &profile.cipher_suites {
            Some(v) => s.insert("cipherSuites".into(), Value::from(v.clone())),
            None => s.remove("cipherSuites"),
        };
        if *s == before {
            continue;
        }
        if let Ok(out) = serde_norway::to_string(&doc) {
            *text = out;
            changed = true;
        }
    }
    changed
}

/// The owner reference every applied object gets (upstream `pkg/cvo/cvo.go`
/// `ownerReferenceModifier`): ClusterVersion `version` with `uid`, `controller: true` unless the
/// manifest is create-only.
pub(crate) fn cluster_version_owner_ref(uid: &str, create_only: bool) -> OwnerReference {
    OwnerReference {
        api_version: "config.openshift.io/v1".to_owned(),
        kind: "ClusterVersion".to_owned(),
        name: "version".to_owned(),
        uid: uid.to_owned(),
        controller: (!create_only).then_some(true),
        block_owner_deletion: None,
    }
}

/// Adds the ClusterVersion owner reference to a manifest's metadata (upstream
/// `ownerReferenceModifier`), unless the manifest already lists owners that are not the
/// ClusterVersion (those are kept as they are).
pub(crate) fn add_owner_reference(meta: &mut ObjectMeta, uid: &str, create_only: bool) {
    let refs = meta.owner_references.get_or_insert_with(Vec::new);
    if refs.iter().any(|r| r.kind != "ClusterVersion") {
        return;
    }
    refs.retain(|r| r.kind != "ClusterVersion");
    refs.push(cluster_version_owner_ref(uid, create_only));
}

/// [`add_owner_reference`] on a raw manifest (`metadata.ownerReferences`).
pub(crate) fn add_owner_reference_value(manifest: &mut Value, uid: &str, create_only: bool) {
    let mut meta: ObjectMeta = serde_json::from_value(manifest["metadata"].clone()).unwrap_or_default();
    add_owner_reference(&mut meta, uid, create_only);
    if let (Some(m), Ok(refs)) = (
        manifest["metadata"].as_object_mut(),
        serde_json::to_value(&meta.owner_references),
    ) {
        m.insert("ownerReferences".to_owned(), refs);
    }
}

/// Applies the manifest modifiers (upstream `lib/resourcebuilder`, `pkg/cvo/cvo.go`) to a copy of
/// `manifest`: ClusterVersion owner reference, `inject-proxy` and the CVO Deployment's internal LB
/// rewrite on Deployments/DaemonSets, `inject-tls` on ConfigMaps; and cvo's handover, the
/// upstream CVO's Deployment at 0 replicas ([`hand_over_upstream_cvo`]).
///
/// Errors: an unknown container in `inject-proxy`, or a manifest that does not decode as its
/// kind.
pub fn build_required(ctx: &ApplyContext, manifest: &Value) -> Result<Value, UpdateError> {
    let id = ManifestId::of(manifest)?;
    let task = id.task();
    let mut required = manifest.clone();
    let create_only = is_create_only(&manifest["metadata"]);
    if let Some(uid) = &ctx.cluster_version_uid {
        add_owner_reference_value(&mut required, uid, create_only);
    }
    let proxy_names: Option<Vec<String>> =
        manifest["metadata"]["annotations"][INJECT_PROXY]
            .as_str()
            .map(|s| {
                s.split(',')
                    .map(|n| n.trim().to_owned())
                    .filter(|n| !n.is_empty())
                    .collect()
            });
    match (id.group(), id.kind.as_str()) {
        ("apps", "Deployment") => {
            let mut d: Deployment = decode(&task, "manifest", &required)?;
            hand_over_upstream_cvo(&mut d);
            if let Some(spec) = d.spec.template.spec.as_mut() {
                if let Some(names) = &proxy_names {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    inject_proxy(spec, &names, &ctx.proxy)?;
                }
                let (ns, name, container) = UPSTREAM_CVO_DEPLOYMENT;
                if id.namespace == ns
                    && id.name == name
                    && let Some((host, port)) = &ctx.internal_lb
                {
                    update_pod_spec_with_internal_lb(spec, container, host, port);
                }
            }
            required = encode(&task, &d)?;
        }
        ("apps", "DaemonSet") => {
            if let Some(names) = &proxy_names {
                let mut d: DaemonSet = decode(&task, "manifest", &required)?;
                if let Some(spec) = d.spec.template.spec.as_mut() {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    inject_proxy(spec, &names, &ctx.proxy)?;
                }
                required = encode(&task, &d)?;
            }
        }
        ("", "ConfigMap") => {
            let mut cm: ConfigMap = decode(&task, "manifest", &required)?;
            if inject_tls(&mut cm, &ctx.tls_profile) {
                required = encode(&task, &cm)?;
            }
        }
        _ => {}
    }
    Ok(required)
}
