use serde_json::json;

use super::*;

/// The time written into `managedFields` entries.
const NOW: &str = "2026-01-01T00:00:00Z";

fn pod_type() -> ResourceType {
    ResourceType {
        group: String::new(),
        version: "v1".into(),
        plural: "pods".into(),
        singular: "pod".into(),
        kind: "Pod".into(),
        short_names: vec![],
        namespaced: true,
        status_subresource: true,
        generation: true,
        crd: None,
    }
}

#[test]
fn strategic_merge_uses_merge_keys_and_directives() -> Result<(), ApiError> {
    let mut pod = json!({"metadata": {"finalizers": ["a"]}, "spec": {"containers": [
        {"name": "app", "image": "x:1", "env": [{"name": "A", "value": "1"}], "ports": [{"containerPort": 80}]},
        {"name": "side", "image": "s:1"},
    ], "tolerations": [{"key": "k1"}]}});
    strategic_merge(
        &mut pod,
        &json!({"metadata": {"finalizers": ["b"]}, "spec": {"containers": [
            {"name": "app", "image": "x:2", "env": [{"name": "B", "value": "2"}], "ports": [{"containerPort": 443}]},
            {"name": "side", "$patch": "delete"},
        ], "tolerations": [{"key": "k2"}]}}),
    )?;
    // Items new to a list go first, as kube-apiserver orders them.
    assert_eq!(pod["metadata"]["finalizers"], json!(["b", "a"]));
    let c = &pod["spec"]["containers"];
    assert_eq!(c.as_array().map(Vec::len), Some(1));
    assert_eq!(c[0]["image"], "x:2");
    assert_eq!(
        c[0]["env"],
        json!([{"name": "B", "value": "2"}, {"name": "A", "value": "1"}])
    );
    assert_eq!(
        c[0]["ports"],
        json!([{"containerPort": 443}, {"containerPort": 80}])
    );
    assert_eq!(
        pod["spec"]["tolerations"],
        json!([{"key": "k2"}]),
        "tolerations are atomic"
    );
    strategic_merge(
        &mut pod,
        &json!({"spec": {"containers": [{"$patch": "replace"}, {"name": "only"}], "x": {"$patch": "replace", "y": 1}},
                "$deleteFromPrimitiveList/metadata": [], "metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
    )?;
    assert_eq!(pod["spec"]["containers"], json!([{"name": "only"}]));
    assert_eq!(pod["spec"]["x"], json!({"y": 1}));
    assert_eq!(pod["metadata"]["finalizers"], json!(["b"]));
    Ok(())
}

/// The orders kube-apiserver v1.36 gave the same patches (checked with kubectl against it).
#[test]
fn strategic_merge_orders_lists_as_kube_apiserver() -> Result<(), ApiError> {
    let env = |names: &[&str]| -> serde_json::Value {
        json!({"spec": {"containers": [{"name": "app", "env":
            names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()}]}})
    };
    let names = |pod: &serde_json::Value| -> Vec<String> {
        pod["spec"]["containers"][0]["env"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["name"].as_str().map(str::to_owned))
            .collect()
    };
    let mut pod = env(&["A", "B"]);
    strategic_merge(
        &mut pod,
        &json!({"spec": {"containers": [{"name": "app",
            "$setElementOrder/env": [{"name": "A"}, {"name": "C"}, {"name": "B"}],
            "env": [{"name": "C"}]}]}}),
    )?;
    assert_eq!(names(&pod), ["A", "C", "B"]);
    strategic_merge(&mut pod, &env(&["D", "C"]))?;
    assert_eq!(names(&pod), ["D", "A", "C", "B"]);
    let mut cm = json!({"metadata": {"finalizers": ["b.io/x", "a.io/y"]}});
    strategic_merge(
        &mut cm,
        &json!({"metadata": {"finalizers": ["c.io/z", "a.io/y"]}}),
    )?;
    assert_eq!(
        cm["metadata"]["finalizers"],
        json!(["c.io/z", "b.io/x", "a.io/y"])
    );
    // An order alone reorders.
    strategic_merge(
        &mut pod,
        &json!({"spec": {"containers": [{"name": "app",
            "$setElementOrder/env": [{"name": "B"}, {"name": "A"}, {"name": "C"}, {"name": "D"}]}]}}),
    )?;
    assert_eq!(names(&pod), ["B", "A", "C", "D"]);
    Ok(())
}

#[test]
fn fields_v1_round_trips() {
    let t = pod_type();
    let pod = json!({"metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
    let set = fields_of(&t, &pod, Part::Main);
    let v1 = to_fields_v1(&set);
    assert_eq!(
        v1,
        json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:containers": {
            "k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}}}})
    );
    assert_eq!(from_fields_v1(&v1), set);
}

#[test]
fn apply_conflicts_and_force() -> Result<(), ApiError> {
    let t = pod_type();
    let a = apply(
        &t,
        None,
        &json!({"spec": {"x": 1, "y": 1}}),
        "one",
        Part::Main,
        false,
        NOW,
    )?;
    let mut b = a.clone();
    b["spec"]["x"] = json!(2);
    managed_update(&t, Some(&a), &mut b, "editor", Part::Main, NOW);
    let again = apply(
        &t,
        Some(&b),
        &json!({"spec": {"x": 1, "y": 1}}),
        "one",
        Part::Main,
        false,
        NOW,
    );
    let e = again.expect_err("conflict");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            409,
            "Apply failed with 1 conflict: conflict with \"editor\" using v1: .spec.x"
        )
    );
    let forced = apply(
        &t,
        Some(&b),
        &json!({"spec": {"x": 1}}),
        "one",
        Part::Main,
        true,
        NOW,
    )?;
    assert_eq!(forced["spec"], json!({"x": 1}), "y was dropped by its only owner");
    let managers: Vec<&str> = forced["metadata"]["managedFields"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["manager"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(managers, ["one"], "editor lost its only field");
    Ok(())
}
