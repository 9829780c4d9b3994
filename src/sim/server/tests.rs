use serde_json::json;

use super::route::{Route, decode_continue, encode_continue, parse_query, route};
use crate::sim::store::{ApiError, Store};

#[test]
fn query_and_continue_round_trip() -> Result<(), ApiError> {
    let q = parse_query("labelSelector=app%3Dweb%2Ctier+in+(a%2Cb)&limit=2");
    assert_eq!(
        q.get("labelSelector").map(String::as_str),
        Some("app=web,tier in (a,b)")
    );
    let k = ("ns".to_owned(), "name".to_owned());
    assert_eq!(decode_continue(&encode_continue(&k))?, k);
    assert!(decode_continue("zz").is_err());
    assert_eq!(parse_query("k=%").get("k").map(String::as_str), Some("%"));
    assert_eq!(parse_query("k=a%2").get("k").map(String::as_str), Some("a%2"));
    Ok(())
}

#[test]
fn merge_patch_rfc7386() {
    let mut t = json!({"a": 1, "b": {"c": 2, "d": 3}});
    json_patch::merge(&mut t, &json!({"a": null, "b": {"c": 4}, "e": [1]}));
    assert_eq!(t, json!({"b": {"c": 4, "d": 3}, "e": [1]}));
}

#[test]
fn routes() {
    let s = Store::default();
    assert!(matches!(
        route("/api/v1/namespaces/ns/configmaps/x", &s),
        Ok(Route::Resource {
            ns: Some(_),
            name: Some(_),
            sub: None,
            ..
        })
    ));
    assert!(matches!(
        route("/api/v1/namespaces/ns/status", &s),
        Ok(Route::Resource {
            ns: None,
            sub: Some(_),
            ..
        })
    ));
    assert!(matches!(
        route("/apis/config.openshift.io/v1/clusterversions/version/status", &s),
        Ok(Route::Resource { sub: Some(_), .. })
    ));
    assert!(route("/apis/config.openshift.io/v1/namespaces/x/clusterversions", &s).is_err());
    assert!(route("/api/v1/configmaps/x/status", &s).is_err());
    assert!(route("/apis/nope/v1", &s).is_err());
}

/// In the live demo the API server stamps what it writes on the demo's simulated clock
/// ([`super::Simulator::set_clock`]): `creationTimestamp`, `managedFields` times and
/// `deletionTimestamp`, and a CRD's condition transitions.
#[tokio::test]
async fn writes_are_stamped_on_the_simulators_clock() -> anyhow::Result<()> {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::{Api, DeleteParams, PostParams};
    let start = chrono::DateTime::parse_from_rfc3339("2030-01-01T00:00:00Z")?.with_timezone(&chrono::Utc);
    let sim = super::Simulator::new();
    sim.set_clock(crate::clock::Clock::simulated_from(start, 1.0));
    let client = kube::Client::new(sim.clone(), "default");
    let pp = PostParams::default();
    Api::<Namespace>::all(client.clone())
        .create(&pp, &serde_json::from_value(json!({"metadata": {"name": "ns"}}))?)
        .await?;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "ns");
    let cm = serde_json::from_value(json!({"metadata": {"name": "c", "finalizers": ["x/y"]}}))?;
    let cm = serde_json::to_value(cms.create(&pp, &cm).await?)?;
    let year = |v: &serde_json::Value| v.as_str().map(|s| s[..4].to_string());
    assert_eq!(
        year(&cm["metadata"]["creationTimestamp"]).as_deref(),
        Some("2030"),
        "{cm:#}"
    );
    assert_eq!(
        year(&cm["metadata"]["managedFields"][0]["time"]).as_deref(),
        Some("2030"),
        "{cm:#}"
    );
    cms.delete("c", &DeleteParams::default()).await?;
    let held = serde_json::to_value(cms.get("c").await?)?;
    assert_eq!(
        year(&held["metadata"]["deletionTimestamp"]).as_deref(),
        Some("2030"),
        "{held:#}"
    );
    let crds = client.request::<serde_json::Value>(
        http::Request::post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&json!({
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object",
                            "x-kubernetes-preserve-unknown-fields": true}}}]}
            }))?)?,
    );
    crds.await?;
    let crd = sim
        .get(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            "widgets.example.com",
        )
        .expect("the CRD is stored");
    let established = crd["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Established"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        year(&established["lastTransitionTime"]).as_deref(),
        Some("2030"),
        "{crd:#}"
    );
    Ok(())
}
