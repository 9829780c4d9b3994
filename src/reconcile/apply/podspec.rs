//! Pod template merge (upstream `lib/resourcemerge/core.go` `ensurePodTemplateSpec`,
//! `ensurePodSpec`, `ensureContainer`...).

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{
        Container, ContainerPort, EnvVar, PodSecurityContext, PodSpec, PodTemplateSpec, Probe,
        ResourceRequirements, SELinuxOptions, SecurityContext, Toleration, Volume, VolumeMount,
    },
    apimachinery::pkg::api::resource::Quantity,
};

use super::merge::{ensure_object_meta_opt, merge_map, set, set_defaulted, set_if_set, set_list};

/// Ensures a pod template: metadata merge plus [`ensure_pod_spec`].
pub(crate) fn ensure_pod_template_spec(
    modified: &mut bool,
    existing: &mut PodTemplateSpec,
    required: &PodTemplateSpec,
) {
    ensure_object_meta_opt(modified, &mut existing.metadata, &required.metadata);
    if existing.spec.is_none() && required.spec.is_none() {
        return;
    }
    let req = required.spec.clone().unwrap_or_default();
    ensure_pod_spec(modified, existing.spec.get_or_insert_with(Default::default), &req);
}

/// Ensures a pod spec as upstream `ensurePodSpec` does: containers and init containers by name,
/// volumes by name, pod security context (additive lists), affinity when required, tolerations,
/// node selector key-merge, and the scalar fields with their server defaults (dnsPolicy
/// `ClusterFirst`, terminationGracePeriodSeconds 30).
pub(crate) fn ensure_pod_spec(modified: &mut bool, existing: &mut PodSpec, required: &PodSpec) {
    let host_network = required.host_network.unwrap_or(false);
    ensure_containers(
        modified,
        &mut existing.containers,
        &required.containers,
        host_network,
    );
    let mut init = existing.init_containers.take().unwrap_or_default();
    ensure_containers(
        modified,
        &mut init,
        required.init_containers.as_deref().unwrap_or_default(),
        host_network,
    );
    existing.init_containers = (!init.is_empty()).then_some(init);
    ensure_volumes(modified, &mut existing.volumes, &required.volumes);
    if let Some(r) = &required.security_context {
        ensure_pod_security_context(
            modified,
            existing.security_context.get_or_insert_with(Default::default),
            r,
        );
    }
    if required.affinity.is_some() {
        set(modified, &mut existing.affinity, &required.affinity);
    }
    ensure_tolerations(modified, &mut existing.tolerations, &required.tolerations);
    merge_map(modified, &mut existing.node_selector, &required.node_selector);
    set_if_set(modified, &mut existing.restart_policy, &required.restart_policy);
    set_if_set(
        modified,
        &mut existing.service_account_name,
        &required.service_account_name,
    );
    set_defaulted(
        modified,
        &mut existing.host_network,
        &required.host_network,
        false,
    );
    if required.host_users.is_some() {
        set(modified, &mut existing.host_users, &required.host_users);
    }
    set_if_set(
        modified,
        &mut existing.priority_class_name,
        &required.priority_class_name,
    );
    set_if_set(modified, &mut existing.priority, &required.priority);
    set_defaulted(
        modified,
        &mut existing.share_process_namespace,
        &required.share_process_namespace,
        false,
    );
    set_defaulted(
        modified,
        &mut existing.dns_policy,
        &required.dns_policy,
        "ClusterFirst".to_owned(),
    );
    set_defaulted(
        modified,
        &mut existing.termination_grace_period_seconds,
        &required.termination_grace_period_seconds,
        30,
    );
}

/// Containers matched by name: live containers the manifest does not list are removed, missing
/// ones appended, matching ones ensured field by field.
pub(crate) fn ensure_containers(
    modified: &mut bool,
    existing: &mut Vec<Container>,
    required: &[Container],
    host_network: bool,
) {
    let before = existing.len();
    existing.retain(|e| required.iter().any(|r| r.name == e.name));
    if existing.len() != before {
        *modified = true;
    }
    for r in required {
        match existing.iter_mut().find(|e| e.name == r.name) {
            Some(e) => ensure_container(modified, e, r, host_network),
            None => {
                existing.push(r.clone());
                *modified = true;
            }
        }
    }
}

/// One container: image, command, args, env (whole list when different, fieldRef apiVersion
/// default `v1`), envFrom, workingDir if set, resources (quantities compared by value), ports,
/// volume mounts, liveness/readiness probes (with server defaults), security context.
pub(crate) fn ensure_container(
    modified: &mut bool,
    existing: &mut Container,
    required: &Container,
    host_network: bool,
) {
    set(modified, &mut existing.image, &required.image);
    set_list(modified, &mut existing.command, &required.command);
    set_list(modified, &mut existing.args, &required.args);
    ensure_env(modified, &mut existing.env, &required.env);
    set_list(modified, &mut existing.env_from, &required.env_from);
    set_if_set(modified, &mut existing.working_dir, &required.working_dir);
    ensure_resources(modified, &mut existing.resources, &required.resources);
    ensure_container_ports(modified, &mut existing.ports, &required.ports, host_network);
    ensure_volume_mounts(modified, &mut existing.volume_mounts, &required.volume_mounts);
    ensure_probe(modified, &mut existing.liveness_probe, &required.liveness_probe);
    ensure_probe(modified, &mut existing.readiness_probe, &required.readiness_probe);
    if let Some(r) = &required.security_context {
        ensure_security_context(
            modified,
            existing.security_context.get_or_insert_with(Default::default),
            r,
        );
    }
}

fn normalize_env(env: &Option<Vec<EnvVar>>) -> Vec<EnvVar> {
    env.iter()
        .flatten()
        .map(|v| {
            let mut v = v.clone();
            if v.value.as_deref() == Some("") {
                v.value = None;
            }
            if let Some(f) = v.value_from.as_mut().and_then(|s| s.field_ref.as_mut())
                && f.api_version.as_deref().unwrap_or("").is_empty()
            {
                f.api_version = Some("v1".to_owned());
            }
            v
        })
        .collect()
}

/// Env list replaced when different, after defaulting `valueFrom.fieldRef.apiVersion` to `v1` on
/// both sides (upstream `lib/resourcemerge/core_test.go` `TestEnsureEnvVar`).
pub fn ensure_env(modified: &mut bool, existing: &mut Option<Vec<EnvVar>>, required: &Option<Vec<EnvVar>>) {
    let r = normalize_env(required);
    if normalize_env(existing) != r {
        *existing = (!r.is_empty()).then_some(r);
        *modified = true;
    }
}

/// The value of a Kubernetes quantity (`100m`, `1Gi`, `2e3`), or `None` if it does not parse.
pub(crate) fn quantity_value(q: &str) -> Option<f64> {
    let q = q.trim();
    let split = q
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(q.len());
    let (num, suffix) = q.split_at(split);
    let mult = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return None,
    };
    num.parse::<f64>().ok().map(|n| n * mult)
}

fn quantities_equal(a: &Option<BTreeMap<String, Quantity>>, b: &Option<BTreeMap<String, Quantity>>) -> bool {
    let empty = BTreeMap::new();
    let (a, b) = (a.as_ref().unwrap_or(&empty), b.as_ref().unwrap_or(&empty));
    a.len() == b.len()
        && a.iter().all(|(k, qa)| {
            b.get(k).is_some_and(|qb| {
                qa == qb
                    || matches!((quantity_value(&qa.0), quantity_value(&qb.0)),
                        (Some(x), Some(y)) if (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0))
            })
        })
}

/// Resource limits and requests, each replaced when it differs by value (so `1000m` equals `1`).
pub(crate) fn ensure_resources(
    modified: &mut bool,
    existing: &mut Option<ResourceRequirements>,
    required: &Option<ResourceRequirements>,
) {
    let r = required.clone().unwrap_or_default();
    let e = existing.get_or_insert_with(Default::default);
    if !quantities_equal(&e.limits, &r.limits) {
        e.limits = r.limits.clone();
        *modified = true;
    }
    if !quantities_equal(&e.requests, &r.requests) {
        e.requests = r.requests.clone();
        *modified = true;
    }
    if *e == ResourceRequirements::default() && required.is_none() {
        *existing = None;
    }
}

fn normalize_ports(ports: &Option<Vec<ContainerPort>>, host_network: bool) -> Vec<ContainerPort> {
    let mut v: Vec<ContainerPort> = ports
        .iter()
        .flatten()
        .map(|p| {
            let mut p = p.clone();
            if p.protocol.as_deref().unwrap_or("").is_empty() {
                p.protocol = Some("TCP".to_owned());
            }
            if host_network && p.host_port.is_none() {
                p.host_port = Some(p.container_port);
            }
            p
        })
        .collect();
    v.sort_by(|a, b| (&a.name, a.container_port).cmp(&(&b.name, b.container_port)));
    v
}

/// Container ports matched by name (order-insensitive), protocol default `TCP`, hostPort =
/// containerPort under hostNetwork; replaced by the manifest's when different.
pub(crate) fn ensure_container_ports(
    modified: &mut bool,
    existing: &mut Option<Vec<ContainerPort>>,
    required: &Option<Vec<ContainerPort>>,
    host_network: bool,
) {
    if normalize_ports(existing, host_network) != normalize_ports(required, host_network) {
        let mut r = normalize_ports(required, host_network);
        // keep the manifest's order
        if let Some(req) = required {
            r.sort_by_key(|p| {
                req.iter()
                    .position(|q| q.name == p.name && q.container_port == p.container_port)
            });
        }
        *existing = (!r.is_empty()).then_some(r);
        *modified = true;
    }
}

fn normalize_mounts(m: &Option<Vec<VolumeMount>>) -> BTreeMap<String, VolumeMount> {
    m.iter()
        .flatten()
        .map(|v| {
            let mut v = v.clone();
            if v.read_only == Some(false) {
                v.read_only = None;
            }
            (v.mount_path.clone(), v)
        })
        .collect()
}

/// Volume mounts matched by mountPath (extras removed); replaced when different.
pub(crate) fn ensure_volume_mounts(
    modified: &mut bool,
    existing: &mut Option<Vec<VolumeMount>>,
    required: &Option<Vec<VolumeMount>>,
) {
    if normalize_mounts(existing) != normalize_mounts(required) {
        *existing = required.clone().filter(|v| !v.is_empty());
        *modified = true;
    }
}

/// A probe with the server's defaults filled in: timeout 1 s, period 10 s, success 1,
/// failure 3, HTTP scheme `HTTP`.
pub(crate) fn default_probe(p: &Probe) -> Probe {
    let mut p = p.clone();
    p.timeout_seconds.get_or_insert(1);
    p.period_seconds.get_or_insert(10);
    p.success_threshold.get_or_insert(1);
    p.failure_threshold.get_or_insert(3);
    if let Some(h) = p.http_get.as_mut() {
        h.scheme.get_or_insert_with(|| "HTTP".to_owned());
    }
    p
}

/// A probe compared with defaults; replaced (or removed) when the manifest's differs.
pub(crate) fn ensure_probe(modified: &mut bool, existing: &mut Option<Probe>, required: &Option<Probe>) {
    match (existing.as_ref(), required) {
        (None, None) => {}
        (Some(_), None) => {
            *existing = None;
            *modified = true;
        }
        (e, Some(r)) => {
            let r = default_probe(r);
            if e.map(default_probe).as_ref() != Some(&r) {
                *existing = Some(r);
                *modified = true;
            }
        }
    }
}

fn add_missing<T: PartialEq + Clone>(
    modified: &mut bool,
    existing: &mut Option<Vec<T>>,
    required: &Option<Vec<T>>,
) {
    for r in required.iter().flatten() {
        let e = existing.get_or_insert_with(Vec::new);
        if !e.contains(r) {
            e.push(r.clone());
            *modified = true;
        }
    }
}

/// Container security context: capabilities add/drop additive, SELinux fields if set, the
/// other fields replaced when the manifest sets them.
pub(crate) fn ensure_security_context(
    modified: &mut bool,
    existing: &mut SecurityContext,
    required: &SecurityContext,
) {
    if let Some(rc) = &required.capabilities {
        let ec = existing.capabilities.get_or_insert_with(Default::default);
        add_missing(modified, &mut ec.add, &rc.add);
        add_missing(modified, &mut ec.drop, &rc.drop);
    }
    ensure_se_linux_options(
        modified,
        &mut existing.se_linux_options,
        &required.se_linux_options,
    );
    set_if_set(modified, &mut existing.privileged, &required.privileged);
    set_if_set(
        modified,
        &mut existing.read_only_root_filesystem,
        &required.read_only_root_filesystem,
    );
    set_if_set(modified, &mut existing.run_as_non_root, &required.run_as_non_root);
    set_if_set(modified, &mut existing.run_as_user, &required.run_as_user);
    set_if_set(modified, &mut existing.run_as_group, &required.run_as_group);
    set_if_set(
        modified,
        &mut existing.allow_privilege_escalation,
        &required.allow_privilege_escalation,
    );
    set_if_set(modified, &mut existing.proc_mount, &required.proc_mount);
    if required.seccomp_profile.is_some() {
        set(modified, &mut existing.seccomp_profile, &required.seccomp_profile);
    }
}

/// SELinux options of a container or pod security context: each field the manifest sets.
fn ensure_se_linux_options(
    modified: &mut bool,
    existing: &mut Option<SELinuxOptions>,
    required: &Option<SELinuxOptions>,
) {
    if let Some(rs) = required {
        let es = existing.get_or_insert_with(Default::default);
        set_if_set(modified, &mut es.user, &rs.user);
        set_if_set(modified, &mut es.role, &rs.role);
        set_if_set(modified, &mut es.type_, &rs.type_);
        set_if_set(modified, &mut es.level, &rs.level);
    }
}

/// Pod security context: supplementalGroups and sysctls additive, SELinux fields if set, the
/// other fields replaced when the manifest sets them.
pub(crate) fn ensure_pod_security_context(
    modified: &mut bool,
    existing: &mut PodSecurityContext,
    required: &PodSecurityContext,
) {
    add_missing(
        modified,
        &mut existing.supplemental_groups,
        &required.supplemental_groups,
    );
    add_missing(modified, &mut existing.sysctls, &required.sysctls);
    ensure_se_linux_options(
        modified,
        &mut existing.se_linux_options,
        &required.se_linux_options,
    );
    set_if_set(modified, &mut existing.run_as_user, &required.run_as_user);
    set_if_set(modified, &mut existing.run_as_group, &required.run_as_group);
    set_if_set(modified, &mut existing.run_as_non_root, &required.run_as_non_root);
    set_if_set(modified, &mut existing.fs_group, &required.fs_group);
    set_if_set(
        modified,
        &mut existing.fs_group_change_policy,
        &required.fs_group_change_policy,
    );
    if required.seccomp_profile.is_some() {
        set(modified, &mut existing.seccomp_profile, &required.seccomp_profile);
    }
}

/// A volume with the server's defaults: no source ⇒ `emptyDir`, configMap/secret/projected/
/// downwardAPI `defaultMode` 0644, projected service account token `expirationSeconds` 3600.
pub(crate) fn default_volume(v: &Volume) -> Volume {
    let mut v = v.clone();
    let has_source = serde_json::to_value(&v)
        .ok()
        .and_then(|j| j.as_object().map(|o| o.keys().any(|k| k != "name")))
        .unwrap_or(true);
    if !has_source {
        v.empty_dir = Some(Default::default());
    }
    const MODE: i32 = 0o644;
    if let Some(c) = v.config_map.as_mut() {
        c.default_mode.get_or_insert(MODE);
    }
    if let Some(s) = v.secret.as_mut() {
        s.default_mode.get_or_insert(MODE);
    }
    if let Some(d) = v.downward_api.as_mut() {
        d.default_mode.get_or_insert(MODE);
    }
    if let Some(p) = v.projected.as_mut() {
        p.default_mode.get_or_insert(MODE);
        for s in p.sources.iter_mut().flatten() {
            if let Some(t) = s.service_account_token.as_mut() {
                t.expiration_seconds.get_or_insert(3600);
            }
        }
    }
    v
}

/// Volumes matched by name (extras removed), compared with defaults; replaced when different.
pub(crate) fn ensure_volumes(
    modified: &mut bool,
    existing: &mut Option<Vec<Volume>>,
    required: &Option<Vec<Volume>>,
) {
    let norm = |vs: &Option<Vec<Volume>>| -> BTreeMap<String, Volume> {
        vs.iter()
            .flatten()
            .map(|v| (v.name.clone(), default_volume(v)))
            .collect()
    };
    if norm(existing) != norm(required) {
        let r: Vec<Volume> = required.iter().flatten().map(default_volume).collect();
        *existing = (!r.is_empty()).then_some(r);
        *modified = true;
    }
}

/// Tolerations (upstream `lib/resourcemerge/core_test.go` `TestEnsureTolerations`): nothing happens
/// when the manifest has none; otherwise exact duplicates on the live object are dropped and
/// missing required tolerations appended; extra live tolerations are kept.
pub fn ensure_tolerations(
    modified: &mut bool,
    existing: &mut Option<Vec<Toleration>>,
    required: &Option<Vec<Toleration>>,
) {
    let req = required.as_deref().unwrap_or_default();
    if req.is_empty() {
        return;
    }
    let mut out: Vec<Toleration> = Vec::new();
    for t in existing.iter().flatten() {
        if out.contains(t) {
            *modified = true;
        } else {
            out.push(t.clone());
        }
    }
    for r in req {
        if !out.contains(r) {
            out.push(r.clone());
            *modified = true;
        }
    }
    *existing = Some(out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tol(v: serde_json::Value) -> Vec<Toleration> {
        serde_json::from_value(v).expect("tolerations")
    }

    #[test]
    fn quantities_compare_by_value() {
        assert_eq!(quantity_value("1000m"), Some(1.0));
        assert_eq!(quantity_value("1Gi"), Some(1073741824.0));
        assert_eq!(quantity_value("2e3"), Some(2000.0));
        assert_eq!(quantity_value("1x"), None);
    }

    #[test]
    fn env_fieldref_api_version_defaults_to_v1() {
        let mut m = false;
        let mut e = Some(tol_env(
            json!([{"name": "A", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "x"}}}]),
        ));
        ensure_env(
            &mut m,
            &mut e,
            &Some(tol_env(
                json!([{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]),
            )),
        );
        assert!(!m);
    }

    fn tol_env(v: serde_json::Value) -> Vec<EnvVar> {
        serde_json::from_value(v).expect("env")
    }

    #[test]
    fn tolerations_same_set_other_order_unmodified() {
        let a = json!({"key": "a", "operator": "Exists", "effect": "NoSchedule"});
        let b = json!({"key": "b", "operator": "Exists", "effect": "NoExecute"});
        let mut m = false;
        let mut e = Some(tol(json!([a, b])));
        ensure_tolerations(&mut m, &mut e, &Some(tol(json!([b, a]))));
        assert!(!m);
        assert_eq!(e, Some(tol(json!([a, b]))));
    }
}
