use super::types::CRD_GROUP;
use super::*;

fn typ(s: &Store, group: &str, plural: &str) -> TypeRef {
    s.find_plural(group, plural).expect("served")
}

#[test]
fn rbac_names_are_path_segments_others_dns_subdomains() -> Result<(), ApiError> {
    let mut s = Store::default();
    let cr = typ(&s, "rbac.authorization.k8s.io", "clusterroles");
    let o = s.create(
        &cr,
        "",
        json!({"metadata":{"name":"system:openshift:scc:privileged"}}),
        WriteMode::Main,
    )?;
    assert_eq!(meta_str(&o, "name"), Some("system:openshift:scc:privileged"));
    let slash = s.create(&cr, "", json!({"metadata":{"name":"a/b"}}), WriteMode::Main);
    assert_eq!(slash.map_err(|e| e.code), Err(422));
    let cm = typ(&s, "", "configmaps");
    let colon = s.create(&cm, "ns", json!({"metadata":{"name":"a:b"}}), WriteMode::Main);
    assert_eq!(colon.map_err(|e| e.code), Err(422));
    Ok(())
}

#[test]
fn create_update_delete_semantics() -> Result<(), ApiError> {
    let mut s = Store::default();
    let cm = typ(&s, "", "configmaps");
    let o = s.create(
        &cm,
        "ns",
        json!({"metadata":{"name":"a"},"data":{"k":"v"}}),
        WriteMode::Main,
    )?;
    assert_eq!(meta_str(&o, "resourceVersion"), Some("1"));
    assert!(
        o["metadata"].get("generation").is_none(),
        "ConfigMaps have no generation"
    );
    let dup = s.create(&cm, "ns", json!({"metadata":{"name":"a"}}), WriteMode::Main);
    assert_eq!(dup.map_err(|e| e.reason), Err("AlreadyExists"));
    let g = s.create(
        &cm,
        "ns",
        json!({"metadata":{"generateName":"x-"}}),
        WriteMode::Main,
    )?;
    assert!(meta_str(&g, "name").is_some_and(|n| n.starts_with("x-") && n.len() == 7));
    let mut upd = o.clone();
    upd["metadata"]["labels"] = json!({"l": "1"});
    let u = s.update(&cm, "ns", "a", upd, WriteMode::Main)?;
    let stale = s.update(&cm, "ns", "a", o.clone(), WriteMode::Main);
    assert_eq!(stale.map_err(|e| e.code), Err(409));
    s.delete(&cm, "ns", "a")?;
    assert!(s.get(&cm, "ns", "a").is_none());
    assert_eq!(u["metadata"]["labels"]["l"], "1");
    let kinds: Vec<_> = s.events_since(0).map(|e| e.event_type).collect();
    assert_eq!(
        kinds,
        [
            EventType::Added,
            EventType::Added,
            EventType::Modified,
            EventType::Deleted
        ]
    );
    Ok(())
}

#[test]
fn generation_tracks_spec_of_kinds_that_keep_it() -> Result<(), ApiError> {
    let mut s = Store::default();
    let d = typ(&s, "apps", "deployments");
    let o = s.create(
        &d,
        "ns",
        json!({"metadata":{"name":"a"},"spec":{"replicas":1}}),
        WriteMode::Main,
    )?;
    assert_eq!(o["metadata"]["generation"], json!(1));
    let mut upd = o.clone();
    upd["metadata"]["labels"] = json!({"l": "1"});
    let u = s.update(&d, "ns", "a", upd, WriteMode::Main)?;
    assert_eq!(u["metadata"]["generation"], json!(1));
    let mut upd = u.clone();
    upd["spec"]["replicas"] = json!(2);
    let u = s.update(&d, "ns", "a", upd, WriteMode::Main)?;
    assert_eq!(u["metadata"]["generation"], json!(2));
    let mut st = u.clone();
    st["status"] = json!({"replicas": 2});
    let u = s.update(&d, "ns", "a", st, WriteMode::Status)?;
    assert_eq!(u["metadata"]["generation"], json!(2));
    Ok(())
}

#[test]
fn finalizers_delay_deletion() -> Result<(), ApiError> {
    let mut s = Store::default();
    let cm = typ(&s, "", "configmaps");
    s.create(
        &cm,
        "ns",
        json!({"metadata":{"name":"a","finalizers":["f"]}}),
        WriteMode::Main,
    )?;
    let d = s.delete(&cm, "ns", "a")?;
    assert!(d["metadata"]["deletionTimestamp"].is_string());
    let mut u = d.clone();
    u["metadata"]["finalizers"] = json!([]);
    s.update(&cm, "ns", "a", u, WriteMode::Main)?;
    assert!(s.get(&cm, "ns", "a").is_none());
    Ok(())
}

#[test]
fn event_capacity_expires_old_versions() -> Result<(), ApiError> {
    let mut s = Store::with_event_capacity(2);
    let cm = typ(&s, "", "configmaps");
    for n in ["a", "b", "c"] {
        s.create(&cm, "ns", json!({"metadata":{"name":n}}), WriteMode::Main)?;
    }
    assert_eq!(s.oldest_watchable(), 1);
    Ok(())
}

#[test]
fn crd_registers_and_cleans_up_its_kind() -> Result<(), ApiError> {
    let mut s = Store::default();
    let crd_t = typ(&s, CRD_GROUP, "customresourcedefinitions");
    let crd = json!({"metadata": {"name": "widgets.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}}],
    }});
    s.create(&crd_t, "", crd, WriteMode::Main)?;
    let w = s.find_type("example.com", "v1", "widgets").expect("registered");
    assert!(w.namespaced && w.status_subresource && w.crd.is_some());
    let stored = s.get(&crd_t, "", "widgets.example.com").expect("crd");
    assert_eq!(stored["status"]["conditions"][1]["type"], "Established");
    assert_eq!(stored["status"]["acceptedNames"]["listKind"], "WidgetList");
    s.create(&w, "ns", json!({"metadata": {"name": "w1"}}), WriteMode::Main)?;
    let rv = s.resource_version();
    s.delete(&crd_t, "", "widgets.example.com")?;
    assert!(s.find_type("example.com", "v1", "widgets").is_none());
    assert!(s.get(&w, "ns", "w1").is_none());
    assert!(s.get(&crd_t, "", "widgets.example.com").is_none());
    let deleted: Vec<_> = s
        .events_since(rv)
        .filter(|e| e.event_type == EventType::Deleted)
        .map(|e| e.resource.kind.clone())
        .collect();
    assert_eq!(deleted, ["Widget", "CustomResourceDefinition"]);
    let bad = json!({"metadata": {"name": "x"}, "spec": {"group": "g.io", "scope": "Cluster",
        "names": {"plural": "ys", "kind": "Y"}, "versions": [{"name": "v1", "served": true}]}});
    assert_eq!(
        s.create(&crd_t, "", bad, WriteMode::Main).map_err(|e| e.code),
        Err(422)
    );
    Ok(())
}

#[test]
fn namespace_terminates_after_its_objects_go() -> Result<(), ApiError> {
    let mut s = Store::default();
    let ns_t = typ(&s, "", "namespaces");
    let cm = typ(&s, "", "configmaps");
    let ns = s.create(&ns_t, "", json!({"metadata": {"name": "n"}}), WriteMode::Main)?;
    assert_eq!(
        (ns["status"]["phase"].as_str(), &ns["spec"]["finalizers"]),
        (Some("Active"), &json!(["kubernetes"]))
    );
    s.create(
        &cm,
        "n",
        json!({"metadata": {"name": "held", "finalizers": ["f"]}}),
        WriteMode::Main,
    )?;
    s.create(&cm, "n", json!({"metadata": {"name": "free"}}), WriteMode::Main)?;
    let d = s.delete(&ns_t, "", "n")?;
    assert_eq!(d["status"]["phase"], "Terminating");
    assert_eq!(s.namespace_state("n"), NamespaceState::Terminating);
    assert!(s.get(&cm, "n", "free").is_none());
    let mut held = s.get(&cm, "n", "held").expect("held by finalizer");
    held["metadata"]["finalizers"] = json!([]);
    s.update(&cm, "n", "held", held, WriteMode::Main)?;
    assert_eq!(s.namespace_state("n"), NamespaceState::Missing);
    Ok(())
}

#[test]
fn the_event_window_shares_the_stored_versions() -> Result<(), ApiError> {
    let mut s = Store::default();
    let cm = typ(&s, "", "configmaps");
    let o = s.create(
        &cm,
        "ns",
        json!({"metadata":{"name":"a","labels":{"app":"x"}},"data":{"k":"v"}}),
        WriteMode::Main,
    )?;
    let mut upd = o.clone();
    upd["data"]["k"] = json!("w");
    let u = s.update(&cm, "ns", "a", upd, WriteMode::Main)?;
    let events: Vec<&Event> = s.events_since(0).collect();
    let stored = s.get_stored(&cm, "ns", "a").expect("stored");
    // One allocation per version: the store's object is the last event's, and an event's
    // `previous` is the event before it, not copies.
    assert!(Arc::ptr_eq(stored, &events[1].object));
    assert!(
        events[1]
            .previous
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(p, &events[0].object))
    );
    assert_eq!(events[0].object.value(), o);
    assert_eq!(stored.value(), u);
    assert_eq!(stored.json(), serde_json::to_string(&u).unwrap_or_default());
    assert_eq!(
        (stored.name(), stored.namespace(), stored.label("app")),
        ("a", "ns", Some("x"))
    );
    Ok(())
}
