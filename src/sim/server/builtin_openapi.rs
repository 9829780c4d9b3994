//! The OpenAPI v3 schemas of the built-in Kubernetes kinds, as kube-apiserver publishes them
//! (`components.schemas` named `io.k8s.api.apps.v1.Deployment`, ..., with `$ref`s between
//! them), so `kubectl explain deployment.spec.template.spec.containers` works on the
//! simulator. They come from k8s-openapi's `schemars` implementations (generated from the same
//! upstream OpenAPI document), rendered once with schemars' OpenAPI 3 settings.
//! Upstream: `k8s.io/kube-openapi/pkg/handler3`, `api/openapi-spec/v3/` in
//! kubernetes/kubernetes.

use std::collections::HashMap;
use std::sync::OnceLock;

use k8s_openapi::api::{
    admissionregistration::v1 as admission, apps::v1 as apps, batch::v1 as batch,
    coordination::v1 as coordination, core::v1 as core, events::v1 as events, policy::v1 as policy,
    rbac::v1 as rbac, scheduling::v1 as scheduling,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// One kind's schemas: the name of its own schema and every schema it refers to (its own
/// included), by name.
pub(super) struct KindSchemas {
    /// The kind's schema name (`io.k8s.api.apps.v1.Deployment`).
    pub name: String,
    /// `components.schemas` entries.
    pub schemas: Map<String, Value>,
}

fn of<T: JsonSchema>() -> KindSchemas {
    let mut generator = SchemaSettings::openapi3().into_generator();
    let _ = generator.subschema_for::<T>();
    KindSchemas {
        name: T::schema_name().into_owned(),
        schemas: generator.take_definitions(true),
    }
}

/// The schemas of every built-in kind with one, by `(group, plural)`; rendered on first use.
fn all() -> &'static HashMap<(&'static str, &'static str), KindSchemas> {
    static ALL: OnceLock<HashMap<(&'static str, &'static str), KindSchemas>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut m = HashMap::new();
        m.insert(("", "namespaces"), of::<core::Namespace>());
        m.insert(("", "configmaps"), of::<core::ConfigMap>());
        m.insert(("", "secrets"), of::<core::Secret>());
        m.insert(("", "nodes"), of::<core::Node>());
        m.insert(("", "pods"), of::<core::Pod>());
        m.insert(("", "services"), of::<core::Service>());
        m.insert(("", "serviceaccounts"), of::<core::ServiceAccount>());
        m.insert(("", "events"), of::<core::Event>());
        m.insert(("apps", "deployments"), of::<apps::Deployment>());
        m.insert(("apps", "daemonsets"), of::<apps::DaemonSet>());
        m.insert(("apps", "replicasets"), of::<apps::ReplicaSet>());
        m.insert(("apps", "statefulsets"), of::<apps::StatefulSet>());
        m.insert(("batch", "jobs"), of::<batch::Job>());
        m.insert(("batch", "cronjobs"), of::<batch::CronJob>());
        m.insert(("coordination.k8s.io", "leases"), of::<coordination::Lease>());
        m.insert(("rbac.authorization.k8s.io", "roles"), of::<rbac::Role>());
        m.insert(
            ("rbac.authorization.k8s.io", "rolebindings"),
            of::<rbac::RoleBinding>(),
        );
        m.insert(
            ("rbac.authorization.k8s.io", "clusterroles"),
            of::<rbac::ClusterRole>(),
        );
        m.insert(
            ("rbac.authorization.k8s.io", "clusterrolebindings"),
            of::<rbac::ClusterRoleBinding>(),
        );
        m.insert(
            ("apiextensions.k8s.io", "customresourcedefinitions"),
            of::<CustomResourceDefinition>(),
        );
        m.insert(
            ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
            of::<admission::ValidatingWebhookConfiguration>(),
        );
        m.insert(
            ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
            of::<admission::MutatingWebhookConfiguration>(),
        );
        m.insert(
            ("policy", "poddisruptionbudgets"),
            of::<policy::PodDisruptionBudget>(),
        );
        m.insert(
            ("scheduling.k8s.io", "priorityclasses"),
            of::<scheduling::PriorityClass>(),
        );
        m.insert(("events.k8s.io", "events"), of::<events::Event>());
        m.insert(("apiregistration.k8s.io", "apiservices"), of::<APIService>());
        m
    })
}

/// The schemas of the built-in kind `group`/`plural`, if it is a Kubernetes kind.
pub(super) fn schemas(group: &str, plural: &str) -> Option<&'static KindSchemas> {
    all()
        .iter()
        .find(|((g, p), _)| *g == group && *p == plural)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_schemas_refer_to_their_parts_by_kube_names() {
        let d = schemas("apps", "deployments").expect("deployment");
        assert_eq!(d.name, "io.k8s.api.apps.v1.Deployment");
        let own = &d.schemas[&d.name];
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
