//! The apply layer of the reconcile engine (upstream
//! `lib/resourceapply`, `lib/resourcemerge`, `lib/resourcebuilder`, `lib/resourcedelete`,
//! `pkg/cvo/internal`).
//!
//! [`Applier::apply`] runs one manifest: GET → CREATE if absent → stop if create-only → merge the
//! manifest into the live object with the per-kind "ensure" rules ([`kinds`], [`podspec`]) →
//! UPDATE only if modified → readiness check ([`readiness`]). ClusterOperator manifests get the
//! health check instead; deletion manifests ([`delete`]) a DELETE in Updating mode. In watch-only
//! (dry-run) mode nothing is written: the outcome's [`Drift`] says what would change. With the
//! [`watch_cache`] started for a pass, an object unchanged since verified is skipped and one
//! known absent is created without the GET; a watch-only pass reads every object from the
//! cache's full objects instead of a GET.

// `UpdateError` keeps upstream's shape (reason, message, effect, nested, name, task); it is only
// built on failure paths, so its size does not matter.
#![allow(clippy::result_large_err)]

#[cfg(test)]
mod absent_zero_tests;
pub mod builders;
mod create;
pub mod delete;
pub mod diff;
mod discovery;
#[cfg(test)]
mod discovery_tests;
pub mod kinds;
pub mod kube_applier;
pub mod merge;
pub mod openshift_kinds;
pub mod podspec;
pub mod readiness;
pub mod watch_cache;
mod watch_store;

use std::{borrow::Cow, sync::Mutex, time::Duration};

use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, GroupVersionKind, PostParams},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

pub use builders::{ProxyStatus, TlsProfile, build_required};
pub use delete::DeletionTracker;
pub use diff::{Drift, FieldChange, diff_values};
pub use kube_applier::{KubeApplier, TaskApplier, TaskContext, TaskOutcome};

use crate::{
    openshift::config_v1::ClusterOperator,
    reconcile::{
        errors::{ApiErrorKind, UpdateError},
        payload::PayloadState,
    },
};

/// Cluster facts and switches for one apply pass.
#[derive(Clone, Debug)]
pub struct ApplyContext {
    /// Sync mode of the pass (upstream `State`: Initializing / Updating / Reconciling), which
    /// changes readiness, deletion and ClusterOperator handling.
    pub mode: PayloadState,
    /// Watch-only: send no write request, report [`Drift`] instead.
    pub dry_run: bool,
    /// UID of ClusterVersion `version`; when set every manifest gets the owner reference (upstream
    /// `pkg/cvo/cvo.go` `ownerReferenceModifier`).
    pub cluster_version_uid: Option<String>,
    /// Cluster proxy for `config.openshift.io/inject-proxy`.
    pub proxy: ProxyStatus,
    /// `(host, port)` of the internal API load balancer for the CVO Deployment rewrite.
    pub internal_lb: Option<(String, String)>,
    /// TLS profile for `config.openshift.io/inject-tls`.
    pub tls_profile: TlsProfile,
}

impl Default for ApplyContext {
    fn default() -> Self {
        Self {
            mode: PayloadState::Reconciling,
            dry_run: false,
            cluster_version_uid: None,
            proxy: ProxyStatus::default(),
            internal_lb: None,
            tls_profile: TlsProfile::intermediate(),
        }
    }
}

/// What [`Applier::apply`] did (or, dry-run, would do) for one manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct ApplyOutcome {
    /// The change: created, updated with field diffs, deleted, or none.
    pub drift: Drift,
    /// Whether a write request was sent (always false in dry-run).
    pub wrote: bool,
    /// The live object after the apply (the merged object in dry-run), if it exists.
    pub live: Option<Value>,
}

/// The identity of a manifest: apiVersion, kind, namespace (empty if cluster-scoped), name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ManifestId {
    /// `group/version` or `v1`.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ManifestId {
    /// Reads apiVersion, kind, metadata.namespace and metadata.name.
    ///
    /// Errors (`UpdatePayloadFailed`) naming the missing field when apiVersion, kind or name is
    /// absent.
    pub fn of(manifest: &Value) -> Result<Self, UpdateError> {
        let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        Self::checked(Self {
            api_version: s(&manifest["apiVersion"]),
            kind: s(&manifest["kind"]),
            namespace: s(&manifest["metadata"]["namespace"]),
            name: s(&manifest["metadata"]["name"]),
        })
    }

    /// `id` when apiVersion, kind and name are set; errors as [`Self::of`].
    fn checked(id: Self) -> Result<Self, UpdateError> {
        for (field, v) in [
            ("apiVersion", &id.api_version),
            ("kind", &id.kind),
            ("metadata.name", &id.name),
        ] {
            if v.is_empty() {
                return Err(UpdateError::failed(format!("manifest has no {field}")));
            }
        }
        Ok(id)
    }

    /// API group (empty for the core group).
    pub fn group(&self) -> &str {
        self.api_version.rsplit_once('/').map_or("", |(g, _)| g)
    }

    /// API version without group.
    pub fn version(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map_or(self.api_version.as_str(), |(_, v)| v)
    }

    /// Upstream's task wording: `{kind lowercase} "{ns}/{name}"` (`"{name}"` when cluster-scoped).
    pub fn task(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {:?}", self.kind.to_lowercase(), self.name)
        } else {
            format!(
                "{} \"{}/{}\"",
                self.kind.to_lowercase(),
                self.namespace,
                self.name
            )
        }
    }
}

/// The kinds with a typed merge (upstream `lib/resourcebuilder/resourcebuilder.go`) and the plural
/// / scope used to reach them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Typed {
    Namespace,
    ServiceAccount,
    ConfigMap,
    Service,
    Deployment,
    DaemonSet,
    Job,
    CronJob,
    ClusterRole,
    ClusterRoleBinding,
    Role,
    RoleBinding,
    Crd,
    ValidatingWebhook,
    MutatingWebhook,
    ClusterOperator,
    ImageStream,
    OperatorGroup,
    SecurityContextConstraints,
}

fn typed_kind(group: &str, kind: &str) -> Option<(Typed, &'static str, bool)> {
    Some(match (group, kind) {
        ("", "Namespace") => (Typed::Namespace, "namespaces", false),
        ("", "ServiceAccount") => (Typed::ServiceAccount, "serviceaccounts", true),
        ("", "ConfigMap") => (Typed::ConfigMap, "configmaps", true),
        ("", "Service") => (Typed::Service, "services", true),
        ("apps", "Deployment") => (Typed::Deployment, "deployments", true),
        ("apps", "DaemonSet") => (Typed::DaemonSet, "daemonsets", true),
        ("batch", "Job") => (Typed::Job, "jobs", true),
        ("batch", "CronJob") => (Typed::CronJob, "cronjobs", true),
        ("rbac.authorization.k8s.io", "ClusterRole") => (Typed::ClusterRole, "clusterroles", false),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            (Typed::ClusterRoleBinding, "clusterrolebindings", false)
        }
        ("rbac.authorization.k8s.io", "Role") => (Typed::Role, "roles", true),
        ("rbac.authorization.k8s.io", "RoleBinding") => (Typed::RoleBinding, "rolebindings", true),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            (Typed::Crd, "customresourcedefinitions", false)
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            (Typed::ValidatingWebhook, "validatingwebhookconfigurations", false)
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            (Typed::MutatingWebhook, "mutatingwebhookconfigurations", false)
        }
        ("config.openshift.io", "ClusterOperator") => (Typed::ClusterOperator, "clusteroperators", false),
        ("image.openshift.io", "ImageStream") => (Typed::ImageStream, "imagestreams", true),
        ("operators.coreos.com", "OperatorGroup") => (Typed::OperatorGroup, "operatorgroups", true),
        ("security.openshift.io", "SecurityContextConstraints") => (
            Typed::SecurityContextConstraints,
            "securitycontextconstraints",
            false,
        ),
        _ => return None,
    })
}

/// Discovery retries for a kind the server does not list (yet).
pub(crate) const DISCOVERY_RETRIES: u32 = 3;
/// First backoff of those retries; each next one is three times longer (0.1, 0.3, 0.9 s).
const DISCOVERY_BACKOFF: Duration = Duration::from_millis(100);
/// How long an apply that wrote a CRD waits for it to become `Established`.
pub(crate) const CRD_ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(10);
/// Poll interval of that wait.
const CRD_POLL: Duration = Duration::from_millis(50);
/// How long kube-apiserver holds a create of a custom resource whose CRD became `Established`
/// less than this long ago (whole seconds of the condition's `lastTransitionTime`).
pub(crate) const CR_CREATE_HOLD: Duration = Duration::from_secs(2);
/// Added to [`CR_CREATE_HOLD`] before such a create, for the server's clock reading.
const CR_CREATE_MARGIN: Duration = Duration::from_millis(50);

/// Whether a CRD (as JSON) has `Established=True`.
fn crd_established(crd: &Value) -> bool {
    crd["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    })
}

/// Whether `id` is a CustomResourceDefinition.
fn is_crd(id: &ManifestId) -> bool {
    id.group() == "apiextensions.k8s.io" && id.kind == "CustomResourceDefinition"
}

/// Applies manifests through one `kube::Client`: typed kinds by their known resource, every
/// other kind through discovery (cached for [`DISCOVERY_TTL`], asked again on a miss), deletions
/// tracked across calls. Cheap to share behind an `Arc`; all methods take `&self`.
pub struct Applier {
    client: Client,
    discovery: discovery::Discovery,
    deletions: Mutex<DeletionTracker>,
    cache: watch_cache::WatchCaches,
}

impl std::fmt::Debug for Applier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applier").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn decode<K: DeserializeOwned>(task: &str, what: &str, v: &Value) -> Result<K, UpdateError> {
    serde_path_to_error::deserialize(v.clone())
        .map_err(|e| UpdateError::failed(format!("{task}: {what} field {}: {}", e.path(), e.inner())))
}

fn encode<K: Serialize>(task: &str, k: &K) -> Result<Value, UpdateError> {
    serde_json::to_value(k).map_err(|e| UpdateError::failed(format!("{task}: cannot encode: {e}")))
}

/// Merges `required` into `live` as `K` with `ensure`; returns (modified, live as K re-encoded,
/// merged). When unmodified both values are `live` itself (no re-encoding).
fn merge_as<K: Serialize + DeserializeOwned + Clone>(
    task: &str,
    live: &Value,
    required: &Value,
    ensure: impl FnOnce(&mut bool, &mut K, &K) -> Result<(), UpdateError>,
) -> Result<(bool, Value, Value), UpdateError> {
    let before: K = decode(task, "live object", live)?;
    let req: K = decode(task, "manifest", required)?;
    let mut merged = before.clone();
    let mut modified = false;
    ensure(&mut modified, &mut merged, &req)?;
    if !modified {
        return Ok((false, live.clone(), live.clone()));
    }
    let (before, merged) = (encode(task, &before)?, encode(task, &merged)?);
    // The Rust types keep a stated zero (`readOnly: false`, `apiGroup: ""`) where upstream's Go
    // value fields cannot tell it from absent, and the server leaves such zeros out: a merge
    // that differs only there changes nothing (upstream `lib/resourcemerge` compares values).
    if merge::equal_absent_as_zero(&before, &merged) {
        return Ok((false, live.clone(), live.clone()));
    }
    Ok((true, before, merged))
}

fn ok<T>(
    f: impl FnOnce(&mut bool, &mut T, &T),
) -> impl FnOnce(&mut bool, &mut T, &T) -> Result<(), UpdateError> {
    move |m, e, r| {
        f(m, e, r);
        Ok(())
    }
}

/// Merges a manifest into a live object with the rule of its kind (typed kinds of upstream
/// `lib/resourcebuilder`, the
/// generic rule otherwise). Returns (modified, live as the merge sees it, merged object); when
/// unmodified both objects are `live` as given. Pure.
///
/// Errors when either side does not decode as the kind (`UpdatePayloadFailed` naming the field)
/// or the kind's rule rejects the manifest (a Job with `spec.selector`).
pub fn merge_manifest(
    mode: PayloadState,
    live: &Value,
    required: &Value,
) -> Result<(bool, Value, Value), UpdateError> {
    use kinds::*;
    let id = ManifestId::of(required)?;
    let task = id.task();
    let t = &task;
    let Some((typed, _, _)) = typed_kind(id.group(), &id.kind) else {
        let mut merged = live.clone();
        let mut modified = false;
        ensure_generic(&mut modified, &mut merged, required);
        return Ok((modified, live.clone(), merged));
    };
    match typed {
        Typed::Namespace => merge_as(t, live, required, ok(ensure_namespace)),
        Typed::ServiceAccount => merge_as(t, live, required, ok(ensure_service_account)),
        Typed::ConfigMap => merge_as(t, live, required, ok(ensure_config_map)),
        Typed::Service => merge_as(t, live, required, ok(ensure_service)),
        Typed::Deployment => merge_as(t, live, required, ok(ensure_deployment)),
        Typed::DaemonSet => merge_as(t, live, required, ok(ensure_daemon_set)),
        Typed::Job => merge_as(t, live, required, ensure_job),
        Typed::CronJob => merge_as(t, live, required, ensure_cron_job),
        Typed::ClusterRole => merge_as(t, live, required, ok(ensure_cluster_role)),
        Typed::ClusterRoleBinding => merge_as(t, live, required, ok(ensure_cluster_role_binding)),
        Typed::Role => merge_as(t, live, required, ok(ensure_role)),
        Typed::RoleBinding => merge_as(t, live, required, ok(ensure_role_binding)),
        Typed::Crd => merge_as(t, live, required, ok(ensure_custom_resource_definition)),
        Typed::ValidatingWebhook => merge_as(t, live, required, ok(ensure_validating_webhook_configuration)),
        Typed::MutatingWebhook => merge_as(t, live, required, ok(ensure_mutating_webhook_configuration)),
        Typed::ImageStream | Typed::OperatorGroup | Typed::SecurityContextConstraints => {
            let ensure = match typed {
                Typed::ImageStream => openshift_kinds::ensure_image_stream,
                Typed::OperatorGroup => openshift_kinds::ensure_operator_group,
                _ => openshift_kinds::ensure_security_context_constraints,
            };
            let mut merged = live.clone();
            let mut modified = false;
            ensure(&mut modified, &mut merged, required);
            Ok((modified, live.clone(), merged))
        }
        Typed::ClusterOperator => {
            // metadata only, and only when reconciling (upstream internal/operatorstatus.go);
            // status is never written
            let before: ClusterOperator = decode(t, "live object", live)?;
            let req: ClusterOperator = decode(t, "manifest", required)?;
            let mut merged = before.clone();
            let mut modified = false;
            if mode == PayloadState::Reconciling {
                merge::ensure_object_meta(&mut modified, &mut merged.metadata, &req.metadata);
            }
            Ok((modified, encode(t, &before)?, encode(t, &merged)?))
        }
    }
}

/// Runs the readiness check of the object's kind (upstream `lib/resourcebuilder/apps.go`,
/// `apiext.go`, `batch.go`) on a live object; kinds without a
/// check are ready.
pub(crate) fn check_readiness(live: &Value) -> Result<(), UpdateError> {
    let id = ManifestId::of(live)?;
    let task = id.task();
    match (id.group(), id.kind.as_str()) {
        ("apps", "Deployment") => readiness::check_deployment(&decode(&task, "live object", live)?),
        ("apps", "DaemonSet") => readiness::check_daemon_set(&decode(&task, "live object", live)?),
        ("batch", "Job") => readiness::check_job(&decode::<Job>(&task, "live object", live)?),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            readiness::check_custom_resource_definition(&decode(&task, "live object", live)?)
        }
        _ => Ok(()),
    }
}

/// The readiness check of `live` ([`check_readiness`]) after an apply, deciding what the
/// record keeps: returns `hash` when the check passed, `None` (record nothing) when it failed
/// while Initializing (where it does not fail the apply).
///
/// Errors: the check's error, except while Initializing.
fn ready_to_record(ctx: &ApplyContext, hash: Option<u64>, live: &Value) -> Result<Option<u64>, UpdateError> {
    match check_readiness(live) {
        Ok(()) => Ok(hash),
        Err(_) if ctx.mode == PayloadState::Initializing => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether `manifest` is a deletion manifest (`release.openshift.io/delete: "true"`).
///
/// Errors with `invalid delete annotation "{key}" with value "{v}"` for any other value.
pub(crate) fn is_delete_manifest(manifest: &Value) -> Result<bool, UpdateError> {
    delete_annotation(manifest["metadata"]["annotations"][delete::DELETE_ANNOTATION].as_str())
}

/// Whether the value of the delete annotation (`None`: absent or not a string) asks for
/// deletion; any value but `true` is an error (lib/resourcedelete `ValidDeleteAnnotation`).
fn delete_annotation(value: Option<&str>) -> Result<bool, UpdateError> {
    match value {
        None => Ok(false),
        Some("true") => Ok(true),
        Some(v) => Err(UpdateError::failed(format!(
            "invalid delete annotation {:?} with value {v:?}",
            delete::DELETE_ANNOTATION
        ))),
    }
}

/// A manifest as the apply layer reads it: its identity, delete annotation and digest come
/// without the object, which is asked for only when a request or a drift is built from it.
/// A loaded payload keeps each object as compact text
/// ([`crate::reconcile::payload::Manifest::object_text`]), so a converged pass, which finds
/// almost every object verified, parses almost none.
pub(crate) trait PayloadObject: Sync {
    /// apiVersion, kind, namespace and name; errors as [`ManifestId::of`].
    fn identity(&self) -> Result<ManifestId, UpdateError>;
    /// Whether `release.openshift.io/delete` asks for deletion; errors as
    /// [`is_delete_manifest`].
    fn deletes(&self) -> Result<bool, UpdateError>;
    /// [`crate::reconcile::payload::digest::object_digest`] of the object.
    fn object_digest(&self) -> u64;
    /// The object (parsed for a loaded manifest, borrowed for a `Value`).
    fn required(&self) -> Cow<'_, Value>;
}

impl PayloadObject for Value {
    fn identity(&self) -> Result<ManifestId, UpdateError> {
        ManifestId::of(self)
    }

    fn deletes(&self) -> Result<bool, UpdateError> {
        is_delete_manifest(self)
    }

    fn object_digest(&self) -> u64 {
        crate::reconcile::payload::digest::object_digest(self)
    }

    fn required(&self) -> Cow<'_, Value> {
        Cow::Borrowed(self)
    }
}

impl PayloadObject for crate::reconcile::payload::Manifest {
    fn identity(&self) -> Result<ManifestId, UpdateError> {
        let api_version = if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        };
        ManifestId::checked(ManifestId {
            api_version,
            kind: self.id.kind.clone(),
            namespace: self.id.namespace.clone(),
            name: self.id.name.clone(),
        })
    }

    fn deletes(&self) -> Result<bool, UpdateError> {
        delete_annotation(
            self.annotations
                .get(delete::DELETE_ANNOTATION)
                .map(String::as_str),
        )
    }

    fn object_digest(&self) -> u64 {
        self.digest()
    }

    fn required(&self) -> Cow<'_, Value> {
        Cow::Owned(self.object())
    }
}

impl Applier {
    /// An applier talking through `client`, for the ClusterVersion `version`.
    pub fn new(client: Client) -> Self {
        Self::for_cluster_version(client, "version")
    }

    /// An applier talking through `client` for the ClusterVersion `cluster_version` (names
    /// its watch caches' verification record, [`watch_cache::record_name`]).
    pub fn for_cluster_version(client: Client, cluster_version: &str) -> Self {
        Self {
            cache: watch_cache::WatchCaches::new(client.clone(), cluster_version),
            client,
            discovery: discovery::Discovery::default(),
            deletions: Mutex::new(DeletionTracker::default()),
        }
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The counter the watch caches bump at each change of a payload object seen by a
    /// watch-only pass's full-object watches ([`watch_cache::WatchCaches::payload_changes`]).
    pub fn payload_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.cache.payload_changes()
    }

    /// Deletions requested but not yet verified, as `{kind lowercase} "{ns/name}"`, sorted (feeds
    /// risk `ResourceDeletionInProgress`, upstream `pkg/risk/deletion`).
    pub fn deletions_in_progress(&self) -> Vec<String> {
        lock(&self.deletions).in_progress()
    }

    /// The resource of `id` and whether it is namespaced: the typed table, else an
    /// `Established` CRD of the synced CRD watch that serves the kind, else discovery (cached
    /// for [`DISCOVERY_TTL`]; a miss is never cached). A kind the server does not list
    /// is asked again [`DISCOVERY_RETRIES`] times with a short backoff before failing, so a
    /// custom resource applied right after its CRD (whose discovery document the server
    /// publishes a moment after `Established`) does not fail its pass.
    ///
    /// Errors: `UpdatePayloadResourceTypeMissing` when the kind is still unknown after the
    /// retries; other API errors as upstream `pkg/payload/task.go` maps them.
    async fn resource(&self, id: &ManifestId) -> Result<(ApiResource, bool), UpdateError> {
        self.resource_with_retries(id, DISCOVERY_RETRIES).await
    }

    /// [`Self::resource`] asking discovery again at most `retries` times for a kind the server
    /// does not list (0: answer at once, as the watch caches do before a pass, where a kind whose
    /// CRD does not exist yet is started at its first manifest instead).
    async fn resource_with_retries(
        &self,
        id: &ManifestId,
        retries: u32,
    ) -> Result<(ApiResource, bool), UpdateError> {
        let gvk = GroupVersionKind::gvk(id.group(), id.version(), &id.kind);
        if let Some((_, plural, namespaced)) = typed_kind(id.group(), &id.kind) {
            return Ok((ApiResource::from_gvk_with_plural(&gvk, plural), namespaced));
        }
        // A kind an Established CRD serves, from the CRD watch: no discovery request. A kind
        // a CRD of the payload defines is waited for (its CRD may not be created or
        // established yet while a first pass applies components in parallel), unless the
        // caller wants an answer at once.
        if let Some(found) = self.cache.served_kind(id.group(), id.version(), &id.kind) {
            return Ok(found);
        }
        if retries > 0
            && let Some(found) = self
                .cache
                .wait_served(id.group(), id.version(), &id.kind, CRD_ESTABLISHED_TIMEOUT)
                .await
        {
            return Ok(found);
        }
        let mut attempt = 0;
        loop {
            let found = self
                .discovery
                .lookup(&self.client, id.group(), id.version(), &id.kind)
                .await;
            let e = match found {
                Ok(discovery::Lookup::Found(ar, ns)) => return Ok((ar, ns)),
                Ok(discovery::Lookup::Missing) => {
                    kube::Error::Discovery(kube::error::DiscoveryError::MissingKind(format!("{gvk:?}")))
                }
                Err(e) => e,
            };
            let kind = ApiErrorKind::of(&e);
            if kind == ApiErrorKind::NoKindMatch && attempt < retries {
                tokio::time::sleep(crate::clock::jittered(DISCOVERY_BACKOFF * 3u32.pow(attempt), 0.2)).await;
                attempt += 1;
                continue;
            }
            return Err(UpdateError::from_api_kind(&id.task(), kind, &e));
        }
    }

    /// Forgets what discovery said about `group`/`kind` (every version): after a CRD of it was
    /// written, or when a request to its resource answered 404 (the CRD is gone or renamed).
    fn forget_discovery(&self, group: &str) {
        self.discovery.forget_group(group);
    }

    /// What follows every create of `id` (`created` is the server's answer to it): for a CRD,
    /// the note that its kinds are new ([`watch_cache::WatchCaches::crd_created`]) and the
    /// wait for `Established`; the readiness check (failing the apply except while
    /// Initializing, recorded only when it passed); the watch cache's verification record.
    /// Both create paths (after a GET found the object absent,
    /// and the cache's create without a GET) end here.
    ///
    /// Errors: an undecodable answer `UpdatePayloadFailed`, the readiness check's error.
    async fn after_create(
        &self,
        ctx: &ApplyContext,
        api: &Api<DynamicObject>,
        id: &ManifestId,
        hash: Option<u64>,
        created: &DynamicObject,
    ) -> Result<ApplyOutcome, UpdateError> {
        let mut created = encode(&id.task(), created)?;
        if is_crd(id) {
            self.cache.crd_created(&created);
            created = self.wait_established(api, created).await;
        }
        let hash = ready_to_record(ctx, hash, &created)?;
        let drift = Drift::Create { object: None };
        self.cache.after_apply(id, hash, &drift, true, &created);
        Ok(ApplyOutcome {
            drift,
            wrote: true,
            live: Some(created),
        })
    }

    /// The error of a create/update of `id`, forgetting a discovery answer a 404 shows stale.
    fn write_error(&self, id: &ManifestId, e: &kube::Error) -> UpdateError {
        if matches!(e, kube::Error::Api(s) if s.code == 404) {
            self.forget_discovery(id.group());
        }
        UpdateError::from_api(&id.task(), e)
    }

    fn api(&self, ar: &ApiResource, namespaced: bool, ns: &str) -> Api<DynamicObject> {
        if namespaced {
            Api::namespaced_with(self.client.clone(), ns, ar)
        } else {
            Api::all_with(self.client.clone(), ar)
        }
    }

    async fn get(&self, api: &Api<DynamicObject>, id: &ManifestId) -> Result<Option<Value>, UpdateError> {
        match api.get_opt(&id.name).await {
            Ok(o) => o.map(|o| encode(&id.task(), &o)).transpose(),
            Err(e) => Err(UpdateError::from_api(&id.task(), &e)),
        }
    }

    /// Applies one manifest (upstream `lib/resourceapply`): GET; absent ⇒ CREATE (dry-run:
    /// [`Drift::Create`]); create-only ⇒ stop; merge ([`merge_manifest`]); UPDATE only if modified
    /// (dry-run: [`Drift::Update`] with the field diff); then the readiness check (not while
    /// Initializing). ClusterOperator manifests are not created here: they get the metadata merge
    /// (Reconciling) and the health check ([`readiness::check_operator_health`]). Deletion
    /// manifests go to [`Self::delete`].
    ///
    /// Errors: API errors mapped as upstream `pkg/payload/task.go` does (`Could not update {task}:
    /// {cause}`), an unknown kind `UpdatePayloadResourceTypeMissing`, undecodable manifests
    /// `UpdatePayloadFailed`, readiness and health check errors as [`readiness`] documents.
    pub async fn apply(&self, ctx: &ApplyContext, manifest: &Value) -> Result<ApplyOutcome, UpdateError> {
        self.apply_object(ctx, manifest).await
    }

    /// [`Self::apply`] of a manifest that may keep its object as text (a loaded payload's
    /// [`crate::reconcile::payload::Manifest`], whose digest is kept too): the object is parsed
    /// only when the watch cache does not show it verified.
    ///
    /// Errors: as [`Self::apply`].
    pub(crate) async fn apply_object(
        &self,
        ctx: &ApplyContext,
        payload_object: &dyn PayloadObject,
    ) -> Result<ApplyOutcome, UpdateError> {
        if payload_object.deletes()? {
            return self.delete(ctx, &payload_object.required()).await;
        }
        let id = payload_object.identity()?;
        let task = id.task();
        let (ar, namespaced) = self.resource(&id).await?;
        let api = self.api(&ar, namespaced, &id.namespace);
        let is_co = id.group() == "config.openshift.io" && id.kind == "ClusterOperator";
        if is_co {
            let required = build_required(ctx, &payload_object.required())?;
            let live = match self.cached(ctx, &id, &ar, namespaced) {
                Some(cached) => cached,
                None => match self.shared_cluster_operator(ctx, &id, &ar) {
                    // Read from the shared informer: a write needs the newest object (its
                    // resourceVersion), so one that would be merged is read again first.
                    Some(shared) => {
                        let (modified, _, _) = merge_manifest(ctx.mode, &shared, &required)?;
                        if modified {
                            self.get(&api, &id).await?
                        } else {
                            Some(shared)
                        }
                    }
                    None => self.get(&api, &id).await?,
                },
            };
            return self.apply_cluster_operator(ctx, &api, &id, &required, live).await;
        }
        // The watch cache: skip an object unchanged since verified against this manifest; do
        // not GET one the cache knows absent (a 409 on create then falls back to the GET).
        // The hash covers everything the build reads, so a verified manifest is not built.
        let hash = watch_cache::cacheable(&id)
            .then(|| watch_cache::manifest_hash(ctx, payload_object.object_digest()));
        let known = self.cache.known(&id, &ar, namespaced);
        if let watch_cache::Known::Present { resource_version, .. } = &known
            && hash.is_some_and(|h| self.cache.is_verified(&id, h, resource_version))
        {
            return Ok(ApplyOutcome {
                drift: Drift::None,
                wrote: false,
                live: None,
            });
        }
        let object = payload_object.required();
        let manifest: &Value = &object;
        let required = build_required(ctx, manifest)?;
        let known_absent = known == watch_cache::Known::Absent;
        let mut live = match known {
            watch_cache::Known::Absent => None,
            // Watch-only: the drift from the cached object, exactly as from a GET.
            watch_cache::Known::Present {
                object: Some(cached), ..
            } if ctx.dry_run => Some(cached),
            _ => self.get(&api, &id).await?,
        };
        if known_absent && !ctx.dry_run {
            match self.create_known_absent(ctx, &api, &id, &required, hash).await? {
                Ok(outcome) => return Ok(outcome),
                Err(existing) => live = Some(existing),
            }
        }
        let Some(live) = live else {
            if ctx.dry_run {
                return Ok(ApplyOutcome {
                    drift: Drift::Create {
                        object: Some(required.into()),
                    },
                    wrote: false,
                    live: None,
                });
            }
            let obj: DynamicObject = decode(&task, "manifest", &required)?;
            drop(required);
            let created = self
                .create(&api, &id, &obj)
                .await
                .map_err(|e| self.write_error(&id, &e))?;
            return self.after_create(ctx, &api, &id, hash, &created).await;
        };
        if builders::is_create_only(&manifest["metadata"]) {
            return Ok(ApplyOutcome {
                drift: Drift::None,
                wrote: false,
                live: Some(live),
            });
        }
        let required = builders::dry_run_handover(ctx, manifest, required, &live);
        let (modified, before, merged) = merge_manifest(ctx.mode, &live, &required)?;
        let (drift, wrote, after) = if !modified {
            (Drift::None, false, live)
        } else {
            let diff = diff_values(&before, &merged);
            if ctx.dry_run {
                (Drift::Update { diff }, false, merged)
            } else {
                let obj: DynamicObject = decode(&task, "merged object", &merged)?;
                let updated = api
                    .replace(&id.name, &PostParams::default(), &obj)
                    .await
                    .map_err(|e| self.write_error(&id, &e))?;
                let mut updated = encode(&task, &updated)?;
                if is_crd(&id) {
                    updated = self.wait_established(&api, updated).await;
                }
                (Drift::Update { diff }, true, updated)
            }
        };
        let hash = ready_to_record(ctx, hash, &after)?;
        self.cache.after_apply(&id, hash, &drift, wrote, &after);
        Ok(ApplyOutcome {
            drift,
            wrote,
            live: Some(after),
        })
    }

    async fn apply_cluster_operator(
        &self,
        ctx: &ApplyContext,
        api: &Api<DynamicObject>,
        id: &ManifestId,
        required: &Value,
        live: Option<Value>,
    ) -> Result<ApplyOutcome, UpdateError> {
        let task = id.task();
        let expected: ClusterOperator = decode(&task, "manifest", required)?;
        let mut drift = Drift::None;
        let mut wrote = false;
        let mut after = live.clone();
        if let Some(live) = &live {
            let (modified, before, merged) = merge_manifest(ctx.mode, live, required)?;
            if modified {
                drift = Drift::Update {
                    diff: diff_values(&before, &merged),
                };
                if ctx.dry_run {
                    after = Some(merged);
                } else {
                    let obj: DynamicObject = decode(&task, "merged object", &merged)?;
                    let updated = api
                        .replace(&id.name, &PostParams::default(), &obj)
                        .await
                        .map_err(|e| UpdateError::from_api(&task, &e))?;
                    after = Some(encode(&task, &updated)?);
                    wrote = true;
                }
            }
        }
        let live_co: Option<ClusterOperator> = after
            .as_ref()
            .map(|v| decode(&task, "live object", v))
            .transpose()?;
        readiness::check_operator_health(&expected, live_co.as_ref(), ctx.mode)?;
        Ok(ApplyOutcome {
            drift,
            wrote,
            live: after,
        })
    }

    /// Creates a ClusterOperator of the payload that does not exist yet, with the manifest's
    /// `status.relatedObjects` written through `/status` (upstream pre-creation before a run
    /// level, Initializing and Updating modes). Returns whether it wrote; dry-run never writes.
    ///
    /// Errors: API errors mapped as upstream `pkg/payload/task.go` does.
    pub async fn precreate_cluster_operator(
        &self,
        ctx: &ApplyContext,
        manifest: &Value,
    ) -> Result<bool, UpdateError> {
        let id = ManifestId::of(manifest)?;
        let task = id.task();
        let (ar, namespaced) = self.resource(&id).await?;
        let api = self.api(&ar, namespaced, &id.namespace);
        // One the shared informer holds exists: no GET (upstream reads its lister).
        if ctx.dry_run
            || self.cache.shared_cluster_operator_exists(&id.name)
            || self.get(&api, &id).await?.is_some()
        {
            return Ok(false);
        }
        let mut obj = manifest.clone();
        let related = manifest["status"]["relatedObjects"].clone();
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
            // The CRD requires `spec` (upstream's ClusterOperatorSpec is an empty struct).
            o.entry("spec").or_insert_with(|| serde_json::json!({}));
        }
        let obj: DynamicObject = decode(&task, "manifest", &obj)?;
        let mut created = api
            .create(&PostParams::default(), &obj)
            .await
            .map_err(|e| self.write_error(&id, &e))?;
        if related.is_array() {
            created.data["status"] = serde_json::json!({ "relatedObjects": related });
            api.replace_status(&id.name, &PostParams::default(), &created)
                .await
                .map_err(|e| UpdateError::from_api(&task, &e))?;
        }
        Ok(true)
    }

    /// A deletion manifest (upstream `lib/resourcedelete`): only in Updating mode, GET; present and
    /// not yet requested ⇒ DELETE (dry-run: [`Drift::Delete`], nothing sent) and remember it;
    /// absent ⇒ verified. Never creates anything and never blocks.
    ///
    /// Errors: API errors of the GET or DELETE mapped as upstream `pkg/payload/task.go` does.
    pub async fn delete(&self, ctx: &ApplyContext, manifest: &Value) -> Result<ApplyOutcome, UpdateError> {
        let id = ManifestId::of(manifest)?;
        let task = id.task();
        if ctx.mode != PayloadState::Updating {
            return Ok(ApplyOutcome {
                drift: Drift::None,
                wrote: false,
                live: None,
            });
        }
        let (ar, namespaced) = self.resource(&id).await?;
        let api = self.api(&ar, namespaced, &id.namespace);
        let live = match self.cached(ctx, &id, &ar, namespaced) {
            Some(cached) => cached,
            None => self.get(&api, &id).await?,
        };
        let key = id.task();
        let Some(live) = live else {
            lock(&self.deletions).verified(&key);
            return Ok(ApplyOutcome {
                drift: Drift::None,
                wrote: false,
                live: None,
            });
        };
        if ctx.dry_run {
            return Ok(ApplyOutcome {
                drift: Drift::Delete,
                wrote: false,
                live: Some(live),
            });
        }
        if lock(&self.deletions).is_requested(&key) {
            return Ok(ApplyOutcome {
                drift: Drift::None,
                wrote: false,
                live: Some(live),
            });
        }
        api.delete(&id.name, &Default::default())
            .await
            .map_err(|e| UpdateError::from_api(&task, &e))?;
        lock(&self.deletions).requested(&key);
        Ok(ApplyOutcome {
            drift: Drift::Delete,
            wrote: true,
            live: Some(live),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod payload_object_tests {
    use serde_json::json;

    use super::{PayloadObject, UpdateError};
    use crate::reconcile::payload::{Manifest, digest::object_digest};

    fn both(v: serde_json::Value) -> (serde_json::Value, Manifest) {
        let m = Manifest::from_object(v.clone(), "0000_50_x.yaml", 0).unwrap();
        (v, m)
    }

    fn message<T: std::fmt::Debug>(r: Result<T, UpdateError>) -> String {
        r.unwrap_err().message
    }

    #[test]
    fn a_loaded_manifest_reads_as_its_object_does() {
        for v in [
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}}),
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "xs.example.com",
                    "annotations": {"release.openshift.io/delete": "true"}}}),
            json!({"apiVersion": "a/b/c", "kind": "K", "metadata": {"name": "n"}}),
        ] {
            let (v, m) = both(v);
            assert_eq!(m.identity().unwrap(), v.identity().unwrap());
            assert_eq!(m.deletes().unwrap(), v.deletes().unwrap());
            assert_eq!(m.object_digest(), object_digest(&v));
            assert_eq!(*m.required(), v);
        }
        // The same errors, word for word, whichever form the manifest has.
        let (v, m) = both(json!({"kind": "ConfigMap", "metadata": {"name": "a",
            "annotations": {"release.openshift.io/delete": "yes"}}}));
        assert_eq!(message(m.identity()), "manifest has no apiVersion");
        assert_eq!(message(m.identity()), message(v.identity()));
        assert_eq!(
            message(m.deletes()),
            "invalid delete annotation \"release.openshift.io/delete\" with value \"yes\""
        );
        assert_eq!(message(m.deletes()), message(v.deletes()));
    }
}
