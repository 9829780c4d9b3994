//! Absent equals zero, per kind: each manifest of `tests/fixtures/real-apiserver/absent-zero.json`
//! states zero values explicitly (`globalDefault: false`, `paused: false`, `stdin: false`,
//! `data: {}`, ...); its `live` object is what kube-apiserver v1.36.2 returned after creating
//! it, with those zeros left out and its defaults filled in. Merging the manifest into that live
//! object must change nothing, or the engine rewrites the object on every pass.

use serde_json::Value;

use super::{diff_values, merge_manifest};
use crate::reconcile::payload::PayloadState;

fn pairs() -> Vec<(String, Value, Value)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/real-apiserver/absent-zero.json"
    );
    let text = std::fs::read_to_string(path).expect("fixture");
    let v: Vec<Value> = serde_json::from_str(&text).expect("fixture JSON");
    v.into_iter()
        .map(|p| {
            let kind = p["manifest"]["kind"].as_str().unwrap_or_default().to_owned();
            (kind, p["manifest"].clone(), p["live"].clone())
        })
        .collect()
}

fn unchanged(kind: &str) {
    let all = pairs();
    let matching: Vec<_> = all.iter().filter(|(k, _, _)| k == kind).collect();
    assert_eq!(matching.len(), 1, "one {kind} in the fixture");
    let (_, manifest, live) = matching[0];
    for mode in [PayloadState::Reconciling, PayloadState::Updating] {
        let (modified, before, merged) = merge_manifest(mode, live, manifest).expect("merges");
        assert!(
            !modified,
            "{kind} ({mode:?}) rewritten although only zero values differ: {:?}",
            diff_values(&before, &merged)
        );
    }
}

#[test]
fn fixture_covers_every_kind_below() {
    let kinds: Vec<String> = pairs().into_iter().map(|(k, _, _)| k).collect();
    assert_eq!(kinds.len(), 17, "{kinds:?}");
}

macro_rules! per_kind {
    ($($name:ident => $kind:literal),+ $(,)?) => {
        $(
            #[test]
            fn $name() {
                unchanged($kind);
            }
        )+
    };
}

per_kind! {
    namespace => "Namespace",
    service_account => "ServiceAccount",
    config_map => "ConfigMap",
    service => "Service",
    deployment => "Deployment",
    daemon_set => "DaemonSet",
    job => "Job",
    cron_job => "CronJob",
    cluster_role => "ClusterRole",
    cluster_role_binding => "ClusterRoleBinding",
    role => "Role",
    role_binding => "RoleBinding",
    custom_resource_definition => "CustomResourceDefinition",
    validating_webhook_configuration => "ValidatingWebhookConfiguration",
    mutating_webhook_configuration => "MutatingWebhookConfiguration",
    priority_class_generic => "PriorityClass",
    secret_generic => "Secret",
}

#[test]
fn a_real_difference_is_still_one() {
    let (_, mut manifest, live) = pairs()
        .into_iter()
        .find(|(k, _, _)| k == "PriorityClass")
        .expect("PriorityClass");
    manifest["globalDefault"] = Value::Bool(true);
    let (modified, before, merged) =
        merge_manifest(PayloadState::Reconciling, &live, &manifest).expect("merges");
    assert!(modified);
    let d = diff_values(&before, &merged);
    let paths: Vec<(&str, Option<&Value>)> = d.iter().map(|c| (c.path.as_str(), c.to.as_ref())).collect();
    // The generic rule writes the manifest's top-level keys, its stated zeros included.
    assert_eq!(
        paths,
        [
            (".description", Some(&Value::String(String::new()))),
            (".globalDefault", Some(&Value::Bool(true)))
        ]
    );
}
