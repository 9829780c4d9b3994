//! Per-kind merge ("ensure") functions on k8s-openapi types (upstream
//! `lib/resourcemerge/{apps,batch,core,rbac,apiext,admissionregistration}.go`). Each sets
//! `*modified` when it changed the live object ("existing") toward the manifest ("required").

use k8s_openapi::{
    ByteString,
    api::{
        admissionregistration::v1::{
            MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhook,
            ValidatingWebhookConfiguration,
        },
        apps::v1::{DaemonSet, Deployment, DeploymentStrategy, RollingUpdateDeployment},
        batch::v1::{CronJob, Job, JobSpec},
        core::v1::{ConfigMap, Namespace, Service, ServiceAccount, ServicePort},
        rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceConversion, CustomResourceDefinition, CustomResourceDefinitionSpec,
    },
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};

use super::{
    merge::{
        ensure_object_meta, ensure_object_meta_opt, ensure_selector, merge_map, set, set_defaulted,
        set_if_set,
    },
    podspec::ensure_pod_template_spec,
};
use crate::reconcile::errors::UpdateError;

/// Annotation that keeps the live, injected CA bundle on CRDs and webhook configurations.
pub(crate) const INJECT_CABUNDLE: &str = "service.beta.openshift.io/inject-cabundle";

fn annotated_true(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, key: &str) -> bool {
    meta.annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .is_some_and(|v| v == "true")
}

/// Namespace: metadata only.
pub(crate) fn ensure_namespace(modified: &mut bool, existing: &mut Namespace, required: &Namespace) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
}

/// ServiceAccount: metadata and automountServiceAccountToken (replaced when different).
pub(crate) fn ensure_service_account(
    modified: &mut bool,
    existing: &mut ServiceAccount,
    required: &ServiceAccount,
) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    set(
        modified,
        &mut existing.automount_service_account_token,
        &required.automount_service_account_token,
    );
}

/// ConfigMap: metadata, `data` and `binaryData` key-merged (extra live keys kept).
pub(crate) fn ensure_config_map(modified: &mut bool, existing: &mut ConfigMap, required: &ConfigMap) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    merge_map(modified, &mut existing.data, &required.data);
    merge_map(modified, &mut existing.binary_data, &required.binary_data);
}

fn port_defaults(p: &ServicePort) -> (Option<String>, i32, String, IntOrString) {
    (
        p.name.clone().filter(|n| !n.is_empty()),
        p.port,
        p.protocol
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "TCP".to_owned()),
        p.target_port.clone().unwrap_or(IntOrString::Int(p.port)),
    )
}

/// Service ports (upstream `lib/resourcemerge/core_test.go` `TestEnsureServicePorts`): matched by
/// name; live ports the manifest does not list are removed, new ones appended; protocol defaults to
/// `TCP` and targetPort to the port; a live nodePort is kept unless the manifest sets one.
pub(crate) fn ensure_service_ports(
    modified: &mut bool,
    existing: &mut Option<Vec<ServicePort>>,
    required: &Option<Vec<ServicePort>>,
) {
    let req = required.as_deref().unwrap_or_default();
    let mut e = existing.take().unwrap_or_default();
    let before = e.len();
    e.retain(|p| req.iter().any(|r| r.name == p.name));
    if e.len() != before {
        *modified = true;
    }
    for r in req {
        match e.iter_mut().find(|p| p.name == r.name) {
            Some(p) => {
                if port_defaults(p) != port_defaults(r)
                    || (r.node_port.is_some() && p.node_port != r.node_port)
                    || (r.app_protocol.is_some() && p.app_protocol != r.app_protocol)
                {
                    let node_port = r.node_port.or(p.node_port);
                    *p = r.clone();
                    p.node_port = node_port;
                    *modified = true;
                }
            }
            None => {
                e.push(r.clone());
                *modified = true;
            }
        }
    }
    *existing = (!e.is_empty()).then_some(e);
}

/// Service: metadata, ports ([`ensure_service_ports`]), type (default `ClusterIP`; an unset live
/// type is set, upstream `core_test.go` `TestEnsureServiceType`), selector replaced when different.
pub fn ensure_service(modified: &mut bool, existing: &mut Service, required: &Service) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    let req = required.spec.clone().unwrap_or_default();
    let e = existing.spec.get_or_insert_with(Default::default);
    ensure_service_ports(modified, &mut e.ports, &req.ports);
    let want = req
        .type_
        .clone()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "ClusterIP".to_owned());
    if e.type_.as_deref() != Some(want.as_str()) {
        e.type_ = Some(want);
        *modified = true;
    }
    let norm = |s: &Option<std::collections::BTreeMap<String, String>>| s.clone().filter(|m| !m.is_empty());
    if norm(&e.selector) != norm(&req.selector) {
        e.selector = norm(&req.selector);
        *modified = true;
    }
}

/// The Deployment strategy with server defaults: `RollingUpdate` with maxSurge and
/// maxUnavailable `25%`.
pub(crate) fn default_strategy(s: &Option<DeploymentStrategy>) -> DeploymentStrategy {
    let mut s = s.clone().unwrap_or_default();
    let t = s.type_.get_or_insert_with(|| "RollingUpdate".to_owned());
    if t == "RollingUpdate" {
        let ru = s
            .rolling_update
            .get_or_insert_with(RollingUpdateDeployment::default);
        ru.max_surge
            .get_or_insert_with(|| IntOrString::String("25%".into()));
        ru.max_unavailable
            .get_or_insert_with(|| IntOrString::String("25%".into()));
    }
    s
}

/// Deployment (upstream `lib/resourcemerge/apps_test.go` `TestEnsureDeployment`): metadata;
/// replicas (unset ⇒ 1), selector, paused, minReadySeconds, revisionHistoryLimit and
/// progressDeadlineSeconds only if set, strategy (default RollingUpdate 25 %/25 %), pod template.
pub fn ensure_deployment(modified: &mut bool, existing: &mut Deployment, required: &Deployment) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    let req = required.spec.clone();
    let e = &mut existing.spec;
    set_defaulted(modified, &mut e.replicas, &req.replicas, 1);
    ensure_selector(modified, &mut e.selector, &req.selector);
    set_defaulted(modified, &mut e.paused, &req.paused, false);
    set_defaulted(modified, &mut e.min_ready_seconds, &req.min_ready_seconds, 0);
    set_if_set(
        modified,
        &mut e.revision_history_limit,
        &req.revision_history_limit,
    );
    set_if_set(
        modified,
        &mut e.progress_deadline_seconds,
        &req.progress_deadline_seconds,
    );
    let want = default_strategy(&req.strategy);
    if default_strategy(&e.strategy) != want {
        e.strategy = Some(want);
        *modified = true;
    }
    ensure_pod_template_spec(modified, &mut e.template, &req.template);
}

/// DaemonSet: metadata, selector, pod template.
pub(crate) fn ensure_daemon_set(modified: &mut bool, existing: &mut DaemonSet, required: &DaemonSet) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    let req = required.spec.clone();
    let e = &mut existing.spec;
    ensure_selector(modified, &mut e.selector, &req.selector);
    ensure_pod_template_spec(modified, &mut e.template, &req.template);
}

/// Job spec: parallelism (1), completions, activeDeadlineSeconds, backoffLimit (6),
/// manualSelector, ttlSecondsAfterFinished, suspend (false), completionMode (`NonIndexed`),
/// podFailurePolicy, template.
///
/// Errors (upstream `lib/resourcemerge/batch_test.go` `TestEnsureJob_JobSpec_Selector`; upstream
/// panics) when the manifest sets `spec.selector`, which the server generates.
pub(crate) fn ensure_job_spec(
    modified: &mut bool,
    existing: &mut JobSpec,
    required: &JobSpec,
) -> Result<(), UpdateError> {
    if required.selector.is_some() {
        return Err(UpdateError::failed(
            "spec.selector: a Job manifest must not set a selector (the server generates it)",
        ));
    }
    set_defaulted(modified, &mut existing.parallelism, &required.parallelism, 1);
    if required.completions.is_some() {
        set(modified, &mut existing.completions, &required.completions);
    }
    set(
        modified,
        &mut existing.active_deadline_seconds,
        &required.active_deadline_seconds,
    );
    set_defaulted(modified, &mut existing.backoff_limit, &required.backoff_limit, 6);
    set_defaulted(
        modified,
        &mut existing.manual_selector,
        &required.manual_selector,
        false,
    );
    set(
        modified,
        &mut existing.ttl_seconds_after_finished,
        &required.ttl_seconds_after_finished,
    );
    set_defaulted(modified, &mut existing.suspend, &required.suspend, false);
    set_defaulted(
        modified,
        &mut existing.completion_mode,
        &required.completion_mode,
        "NonIndexed".to_owned(),
    );
    set(
        modified,
        &mut existing.pod_failure_policy,
        &required.pod_failure_policy,
    );
    ensure_pod_template_spec(modified, &mut existing.template, &required.template);
    Ok(())
}

/// Job: metadata and [`ensure_job_spec`].
pub fn ensure_job(modified: &mut bool, existing: &mut Job, required: &Job) -> Result<(), UpdateError> {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    let req = required.spec.clone().unwrap_or_default();
    ensure_job_spec(modified, existing.spec.get_or_insert_with(Default::default), &req)
}

/// CronJob: metadata; schedule, timeZone, concurrencyPolicy (`Allow`), startingDeadlineSeconds,
/// suspend (false), successful/failed history limits (3/1), job template (metadata and
/// [`ensure_job_spec`]).
pub(crate) fn ensure_cron_job(
    modified: &mut bool,
    existing: &mut CronJob,
    required: &CronJob,
) -> Result<(), UpdateError> {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    let req = required.spec.clone();
    let e = &mut existing.spec;
    set(modified, &mut e.schedule, &req.schedule);
    set(modified, &mut e.time_zone, &req.time_zone);
    set_defaulted(
        modified,
        &mut e.concurrency_policy,
        &req.concurrency_policy,
        "Allow".to_owned(),
    );
    set(
        modified,
        &mut e.starting_deadline_seconds,
        &req.starting_deadline_seconds,
    );
    set_defaulted(modified, &mut e.suspend, &req.suspend, false);
    set_defaulted(
        modified,
        &mut e.successful_jobs_history_limit,
        &req.successful_jobs_history_limit,
        3,
    );
    set_defaulted(
        modified,
        &mut e.failed_jobs_history_limit,
        &req.failed_jobs_history_limit,
        1,
    );
    ensure_object_meta_opt(modified, &mut e.job_template.metadata, &req.job_template.metadata);
    let rj = req.job_template.spec.clone().unwrap_or_default();
    ensure_job_spec(
        modified,
        e.job_template.spec.get_or_insert_with(Default::default),
        &rj,
    )
}

/// ClusterRole: metadata; aggregationRule; rules (skipped when aggregationRule is set, the
/// controller fills them).
pub(crate) fn ensure_cluster_role(modified: &mut bool, existing: &mut ClusterRole, required: &ClusterRole) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    set(
        modified,
        &mut existing.aggregation_rule,
        &required.aggregation_rule,
    );
    if required.aggregation_rule.is_none() {
        super::merge::set_list(modified, &mut existing.rules, &required.rules);
    }
}

/// Role: metadata and rules.
pub(crate) fn ensure_role(modified: &mut bool, existing: &mut Role, required: &Role) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    super::merge::set_list(modified, &mut existing.rules, &required.rules);
}

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

fn default_role_ref(r: &RoleRef) -> RoleRef {
    let mut r = r.clone();
    if r.api_group.as_deref().unwrap_or("").is_empty() {
        r.api_group = Some(RBAC_GROUP.to_owned());
    }
    r
}

fn default_subjects(s: &Option<Vec<Subject>>) -> Vec<Subject> {
    s.iter()
        .flatten()
        .map(|s| {
            let mut s = s.clone();
            if (s.kind == "User" || s.kind == "Group") && s.api_group.as_deref().unwrap_or("").is_empty() {
                s.api_group = Some(RBAC_GROUP.to_owned());
            }
            s
        })
        .collect()
}

fn ensure_binding(
    modified: &mut bool,
    e_subjects: &mut Option<Vec<Subject>>,
    e_ref: &mut RoleRef,
    r_subjects: &Option<Vec<Subject>>,
    r_ref: &RoleRef,
) {
    let want = default_subjects(r_subjects);
    if default_subjects(e_subjects) != want {
        *e_subjects = (!want.is_empty()).then_some(want);
        *modified = true;
    }
    let want = default_role_ref(r_ref);
    if default_role_ref(e_ref) != want {
        *e_ref = want;
        *modified = true;
    }
}

/// ClusterRoleBinding: metadata; subjects; roleRef (apiGroup default `rbac.authorization.k8s.io`).
pub(crate) fn ensure_cluster_role_binding(
    modified: &mut bool,
    existing: &mut ClusterRoleBinding,
    required: &ClusterRoleBinding,
) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    ensure_binding(
        modified,
        &mut existing.subjects,
        &mut existing.role_ref,
        &required.subjects,
        &required.role_ref,
    );
}

/// RoleBinding: metadata; subjects; roleRef (apiGroup default `rbac.authorization.k8s.io`).
pub(crate) fn ensure_role_binding(modified: &mut bool, existing: &mut RoleBinding, required: &RoleBinding) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    ensure_binding(
        modified,
        &mut existing.subjects,
        &mut existing.role_ref,
        &required.subjects,
        &required.role_ref,
    );
}

fn crd_spec_defaults(s: &CustomResourceDefinitionSpec) -> CustomResourceDefinitionSpec {
    let mut s = s.clone();
    if s.names.singular.as_deref().unwrap_or("").is_empty() {
        s.names.singular = Some(s.names.kind.to_lowercase());
    }
    if s.names.list_kind.as_deref().unwrap_or("").is_empty() {
        s.names.list_kind = Some(format!("{}List", s.names.kind));
    }
    if s.conversion.is_none() {
        s.conversion = Some(CustomResourceConversion {
            strategy: "None".to_owned(),
            webhook: None,
        });
    }
    s
}

fn crd_ca_bundle(s: &CustomResourceDefinitionSpec) -> Option<ByteString> {
    s.conversion
        .as_ref()?
        .webhook
        .as_ref()?
        .client_config
        .as_ref()?
        .ca_bundle
        .clone()
}

/// CustomResourceDefinition v1 (upstream `lib/resourcemerge/apiext_test.go`
/// `TestEnsureCustomResourceDefinitionV1`): metadata; the whole
/// spec replaced when different, with names.singular defaulting to the lowercase kind, listKind
/// to `{Kind}List`, conversion to strategy `None`, and the live conversion webhook caBundle kept
/// when the live object is annotated `service.beta.openshift.io/inject-cabundle: "true"`.
pub fn ensure_custom_resource_definition(
    modified: &mut bool,
    existing: &mut CustomResourceDefinition,
    required: &CustomResourceDefinition,
) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    let mut want = crd_spec_defaults(&required.spec);
    if annotated_true(&existing.metadata, INJECT_CABUNDLE)
        && let Some(bundle) = crd_ca_bundle(&existing.spec)
        && let Some(cc) = want
            .conversion
            .as_mut()
            .and_then(|c| c.webhook.as_mut())
            .and_then(|w| w.client_config.as_mut())
    {
        cc.ca_bundle = Some(bundle);
    }
    if crd_spec_defaults(&existing.spec) != want {
        existing.spec = want;
        *modified = true;
    }
}

fn default_rules(rules: &mut Option<Vec<RuleWithOperations>>) {
    for r in rules.iter_mut().flatten() {
        if r.scope.as_deref().unwrap_or("").is_empty() {
            r.scope = Some("*".to_owned());
        }
    }
}

fn empty_selector(s: &mut Option<LabelSelector>) {
    let s = s.get_or_insert_with(Default::default);
    *s = super::merge::normalize_selector(s);
}

fn default_validating(w: &ValidatingWebhook) -> ValidatingWebhook {
    let mut w = w.clone();
    w.failure_policy.get_or_insert_with(|| "Fail".to_owned());
    w.match_policy.get_or_insert_with(|| "Equivalent".to_owned());
    w.timeout_seconds.get_or_insert(10);
    empty_selector(&mut w.namespace_selector);
    empty_selector(&mut w.object_selector);
    default_rules(&mut w.rules);
    w
}

fn default_mutating(w: &MutatingWebhook) -> MutatingWebhook {
    let mut w = w.clone();
    w.failure_policy.get_or_insert_with(|| "Fail".to_owned());
    w.match_policy.get_or_insert_with(|| "Equivalent".to_owned());
    w.timeout_seconds.get_or_insert(10);
    w.reinvocation_policy.get_or_insert_with(|| "Never".to_owned());
    empty_selector(&mut w.namespace_selector);
    empty_selector(&mut w.object_selector);
    default_rules(&mut w.rules);
    w
}

/// ValidatingWebhookConfiguration: metadata; webhooks replaced when different after server
/// defaults (failurePolicy `Fail`, matchPolicy `Equivalent`, empty selectors, timeoutSeconds 10,
/// rule scope `*`); with the live object annotated inject-cabundle, live caBundles are kept.
pub(crate) fn ensure_validating_webhook_configuration(
    modified: &mut bool,
    existing: &mut ValidatingWebhookConfiguration,
    required: &ValidatingWebhookConfiguration,
) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    let keep = annotated_true(&existing.metadata, INJECT_CABUNDLE);
    let live = existing.webhooks.clone().unwrap_or_default();
    let mut want: Vec<ValidatingWebhook> = required
        .webhooks
        .iter()
        .flatten()
        .map(default_validating)
        .collect();
    if keep {
        for w in &mut want {
            if let Some(l) = live.iter().find(|l| l.name == w.name) {
                w.client_config.ca_bundle = l.client_config.ca_bundle.clone();
            }
        }
    }
    let have: Vec<ValidatingWebhook> = live.iter().map(default_validating).collect();
    if have != want {
        existing.webhooks = (!want.is_empty()).then_some(want);
        *modified = true;
    }
}

/// MutatingWebhookConfiguration: as [`ensure_validating_webhook_configuration`], plus
/// reinvocationPolicy default `Never`.
pub(crate) fn ensure_mutating_webhook_configuration(
    modified: &mut bool,
    existing: &mut MutatingWebhookConfiguration,
    required: &MutatingWebhookConfiguration,
) {
    ensure_object_meta(modified, &mut existing.metadata, &required.metadata);
    let keep = annotated_true(&existing.metadata, INJECT_CABUNDLE);
    let live = existing.webhooks.clone().unwrap_or_default();
    let mut want: Vec<MutatingWebhook> = required.webhooks.iter().flatten().map(default_mutating).collect();
    if keep {
        for w in &mut want {
            if let Some(l) = live.iter().find(|l| l.name == w.name) {
                w.client_config.ca_bundle = l.client_config.ca_bundle.clone();
            }
        }
    }
    let have: Vec<MutatingWebhook> = live.iter().map(default_mutating).collect();
    if have != want {
        existing.webhooks = (!want.is_empty()).then_some(want);
        *modified = true;
    }
}

/// Generic rule for every kind without a typed merge (upstream
/// `pkg/cvo/internal/generic.go`): compares every top-level key of the manifest except
/// apiVersion/kind/metadata/status with the live object (a key the server left out equals a
/// zero value in the manifest, [`super::merge::equal_absent_as_zero`]); on any difference copies those keys
/// and replaces labels, annotations and ownerReferences with the manifest's.
pub(crate) fn ensure_generic(
    modified: &mut bool,
    existing: &mut serde_json::Value,
    required: &serde_json::Value,
) {
    const SKIP: [&str; 4] = ["apiVersion", "kind", "metadata", "status"];
    let (Some(req), Some(e)) = (required.as_object(), existing.as_object_mut()) else {
        return;
    };
    let differs = req
        .iter()
        .filter(|(k, _)| !SKIP.contains(&k.as_str()))
        .any(|(k, v)| !super::merge::equal_absent_as_zero(e.get(k).unwrap_or(&serde_json::Value::Null), v));
    if !differs {
        return;
    }
    for (k, v) in req.iter().filter(|(k, _)| !SKIP.contains(&k.as_str())) {
        e.insert(k.clone(), v.clone());
    }
    let meta = e.entry("metadata").or_insert_with(|| serde_json::json!({}));
    if let Some(m) = meta.as_object_mut() {
        for key in ["labels", "annotations", "ownerReferences"] {
            match required["metadata"].get(key) {
                Some(v) => m.insert(key.to_owned(), v.clone()),
                None => m.remove(key),
            };
        }
    }
    *modified = true;
}
