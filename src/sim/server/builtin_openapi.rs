//! The OpenAPI v3 schemas of the built-in Kubernetes kinds, as kube-apiserver publishes them
//! (`components.schemas` named `io.k8s.api.apps.v1.Deployment`, ..., with `$ref`s between
//! them), so `kubectl explain deployment.spec.template.spec.containers` works on the
//! simulator. Upstream: `k8s.io/kube-openapi/pkg/handler3`, `api/openapi-spec/v3/` in
//! kubernetes/kubernetes.
//!
//! The schemas are k8s-openapi's `schemars` implementations (generated from the same upstream
//! OpenAPI document) rendered with schemars' OpenAPI 3 settings, stored once in
//! `assets/openapi/builtin-kinds.json.gz` (one map of every schema by name, 0.1 MB
//! compressed) and read on the first `/openapi` request. They are an asset, not code the
//! binary carries: rendering them at run time linked 1.45 MB of schemars code, all of it
//! resident in every process (issue 18's idle-memory budget). The unit test below renders
//! them again and fails when the asset is stale; `CVO_REFRESH_ASSETS=1 cargo test --lib
//! builtin_openapi` rewrites it.

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The built-in kinds with a schema: `(group, plural, schema name)`.
const KINDS: [(&str, &str, &str); NKINDS] = [
    ("", "namespaces", "io.k8s.api.core.v1.Namespace"),
    ("", "configmaps", "io.k8s.api.core.v1.ConfigMap"),
    ("", "secrets", "io.k8s.api.core.v1.Secret"),
    ("", "nodes", "io.k8s.api.core.v1.Node"),
    ("", "pods", "io.k8s.api.core.v1.Pod"),
    ("", "services", "io.k8s.api.core.v1.Service"),
    ("", "serviceaccounts", "io.k8s.api.core.v1.ServiceAccount"),
    ("", "events", "io.k8s.api.core.v1.Event"),
    ("apps", "deployments", "io.k8s.api.apps.v1.Deployment"),
    ("apps", "daemonsets", "io.k8s.api.apps.v1.DaemonSet"),
    ("apps", "replicasets", "io.k8s.api.apps.v1.ReplicaSet"),
    ("apps", "statefulsets", "io.k8s.api.apps.v1.StatefulSet"),
    ("batch", "jobs", "io.k8s.api.batch.v1.Job"),
    ("batch", "cronjobs", "io.k8s.api.batch.v1.CronJob"),
    (
        "coordination.k8s.io",
        "leases",
        "io.k8s.api.coordination.v1.Lease",
    ),
    ("rbac.authorization.k8s.io", "roles", "io.k8s.api.rbac.v1.Role"),
    (
        "rbac.authorization.k8s.io",
        "rolebindings",
        "io.k8s.api.rbac.v1.RoleBinding",
    ),
    (
        "rbac.authorization.k8s.io",
        "clusterroles",
        "io.k8s.api.rbac.v1.ClusterRole",
    ),
    (
        "rbac.authorization.k8s.io",
        "clusterrolebindings",
        "io.k8s.api.rbac.v1.ClusterRoleBinding",
    ),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
        "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration",
    ),
    (
        "policy",
        "poddisruptionbudgets",
        "io.k8s.api.policy.v1.PodDisruptionBudget",
    ),
    (
        "scheduling.k8s.io",
        "priorityclasses",
        "io.k8s.api.scheduling.v1.PriorityClass",
    ),
    ("events.k8s.io", "events", "io.k8s.api.events.v1.Event"),
    (
        "apiregistration.k8s.io",
        "apiservices",
        "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService",
    ),
];
const NKINDS: usize = 26;

/// The asset's path in the repository (for the test that checks it and rewrites it).
#[cfg(test)]
const ASSET_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/openapi/builtin-kinds.json.gz"
);

/// Every schema of the built-in kinds and of what they refer to, by name: gzip of a JSON
/// object.
static ASSET: &[u8] = include_bytes!("../../../assets/openapi/builtin-kinds.json.gz");

/// One kind's schemas: the name of its own schema and every schema it refers to (its own
/// included), by name.
pub(super) struct KindSchemas {
    /// The kind's schema name (`io.k8s.api.apps.v1.Deployment`).
    pub name: &'static str,
    /// `components.schemas` entries.
    pub schemas: Map<String, Value>,
}

/// The asset, read once. An asset that does not read (a broken build) leaves the built-in
/// kinds without schemas, with a warning; the unit test keeps that from happening.
fn all() -> &'static Map<String, Value> {
    static ALL: OnceLock<Map<String, Value>> = OnceLock::new();
    ALL.get_or_init(
        || match serde_json::from_reader(flate2::read::GzDecoder::new(ASSET)) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!("the embedded OpenAPI schemas of the built-in kinds do not read: {e}");
                Map::new()
            }
        },
    )
}

/// Adds to `out` the names `v` refers to (`{"$ref": "#/components/schemas/NAME"}`).
fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix("#/components/schemas/") {
                            out.push(name);
                        }
                    }
                    _ => refs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// The schemas of the built-in kind `group`/`plural` (its own and all it refers to,
/// transitively), if it is a Kubernetes kind.
pub(super) fn schemas(group: &str, plural: &str) -> Option<KindSchemas> {
    let (_, _, name) = KINDS.iter().find(|(g, p, _)| *g == group && *p == plural)?;
    let all = all();
    all.get(*name)?;
    let mut schemas = Map::new();
    let mut todo = vec![*name];
    while let Some(n) = todo.pop() {
        if schemas.contains_key(n) {
            continue;
        }
        if let Some(s) = all.get(n) {
            refs(s, &mut todo);
            schemas.insert(n.to_owned(), s.clone());
        }
    }
    Some(KindSchemas { name, schemas })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::{
        admissionregistration::v1 as admission, apps::v1 as apps, batch::v1 as batch,
        coordination::v1 as coordination, core::v1 as core, events::v1 as events, policy::v1 as policy,
        rbac::v1 as rbac, scheduling::v1 as scheduling,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
    use schemars::JsonSchema;
    use schemars::generate::SchemaSettings;

    use super::*;

    /// schemars' rendering of `T`: its schema name and its definitions.
    fn of<T: JsonSchema>() -> (String, Map<String, Value>) {
        let mut generator = SchemaSettings::openapi3().into_generator();
        let _ = generator.subschema_for::<T>();
        (T::schema_name().into_owned(), generator.take_definitions(true))
    }

    /// The kinds of [`KINDS`], rendered, in the same order.
    fn rendered() -> [(String, Map<String, Value>); NKINDS] {
        [
            of::<core::Namespace>(),
            of::<core::ConfigMap>(),
            of::<core::Secret>(),
            of::<core::Node>(),
            of::<core::Pod>(),
            of::<core::Service>(),
            of::<core::ServiceAccount>(),
            of::<core::Event>(),
            of::<apps::Deployment>(),
            of::<apps::DaemonSet>(),
            of::<apps::ReplicaSet>(),
            of::<apps::StatefulSet>(),
            of::<batch::Job>(),
            of::<batch::CronJob>(),
            of::<coordination::Lease>(),
            of::<rbac::Role>(),
            of::<rbac::RoleBinding>(),
            of::<rbac::ClusterRole>(),
            of::<rbac::ClusterRoleBinding>(),
            of::<CustomResourceDefinition>(),
            of::<admission::ValidatingWebhookConfiguration>(),
            of::<admission::MutatingWebhookConfiguration>(),
            of::<policy::PodDisruptionBudget>(),
            of::<scheduling::PriorityClass>(),
            of::<events::Event>(),
            of::<APIService>(),
        ]
    }

    #[test]
    fn the_asset_is_k8s_openapis_schemas_and_each_kind_has_its_own() {
        let rendered = rendered();
        let mut merged = Map::new();
        for (k, (name, defs)) in KINDS.iter().zip(&rendered) {
            assert_eq!(k.2, name, "KINDS names {}/{} by its schema name", k.0, k.1);
            for (n, s) in defs {
                merged.entry(n.clone()).or_insert_with(|| s.clone());
            }
        }
        if std::env::var_os("CVO_REFRESH_ASSETS").is_some() {
            let f = std::fs::File::create(ASSET_PATH).expect("create the asset");
            let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::best());
            serde_json::to_writer(&mut gz, &merged).expect("write the asset");
            gz.finish().expect("finish the asset");
            return;
        }
        assert!(
            *all() == merged,
            "{ASSET_PATH} is not what k8s-openapi renders: run \
             CVO_REFRESH_ASSETS=1 cargo test --lib builtin_openapi"
        );
        // A kind's closure over `$ref` is what schemars names for it, no more, no less.
        for (k, (_, defs)) in KINDS.iter().zip(rendered) {
            let got = schemas(k.0, k.1).expect("a kind of KINDS");
            assert_eq!(got.schemas, defs, "schemas of {}/{}", k.0, k.1);
        }
    }

    #[test]
    fn deployment_schemas_refer_to_their_parts_by_kube_names() {
        let d = schemas("apps", "deployments").expect("deployment");
        assert_eq!(d.name, "io.k8s.api.apps.v1.Deployment");
        let own = &d.schemas[d.name];
        // A `$ref` with a description beside it (kube wraps such refs in `allOf`).
        let spec_ref = own["properties"]["spec"].to_string();
        assert!(
            spec_ref.contains("\"#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec\""),
            "{spec_ref}"
        );
        let spec = &d.schemas["io.k8s.api.apps.v1.DeploymentSpec"];
        assert_eq!(spec["properties"]["replicas"]["type"], "integer");
        assert!(d.schemas.contains_key("io.k8s.api.core.v1.Container"));
        assert!(schemas("", "configmaps").is_some());
        assert!(schemas("config.openshift.io", "clusterversions").is_none());
    }
}
