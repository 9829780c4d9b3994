//! The simulated API server (`cvo::sim::Simulator`) through a real `kube::Client`: CRUD,
//! kube-apiserver error reasons, optimistic concurrency, generation, the status subresource,
//! selectors, pagination, watches, the audit log, and cvo's own live feed against a simulator
//! loaded with the `oc adm upgrade status` fixtures.

use std::{future::Future, time::Duration};

use cvo::sim::Simulator;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::{
    Api, Client,
    api::{
        ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
        PostParams, WatchEvent, WatchParams,
    },
};
use serde_json::json;

mod common;

const LIMIT: Duration = Duration::from_secs(10);

/// Awaits `f`, failing the test after 10 s.
async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out: {what}"),
    }
}

fn client(sim: &Simulator) -> Client {
    Client::new(sim.clone(), "default")
}

/// A simulator with namespace `ns` and a client for it.
async fn with_namespace() -> (Simulator, Client) {
    let sim = Simulator::new();
    let c = client(&sim);
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "ns"}})).expect("namespace");
    within(
        "create namespace",
        Api::<Namespace>::all(c.clone()).create(&PostParams::default(), &ns),
    )
    .await
    .expect("namespace created");
    (sim, c)
}

fn cm(name: &str, labels: serde_json::Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}))
        .expect("configmap")
}

fn api_error(r: Result<impl std::fmt::Debug, kube::Error>) -> (u16, String) {
    match r {
        Err(kube::Error::Api(s)) => (s.code, s.reason.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn cv_api(c: &Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("config.openshift.io", "v1", "ClusterVersion");
    Api::all_with(
        c.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, "clusterversions"),
    )
}

fn cv_object(channel: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": channel, "clusterID": "c"},
        "status": {"desired": {"version": "9.9.9"}},
    }))
    .expect("clusterversion")
}

#[tokio::test]
async fn configmap_create_get_list_delete() {
    let (sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    let created = within("create", api.create(&PostParams::default(), &cm("a", json!({}))))
        .await
        .expect("created");
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(created.metadata.namespace.as_deref(), Some("ns"));
    let got = within("get", api.get("a")).await.expect("get");
    assert_eq!(got.data, created.data);
    let list = within("list", api.list(&ListParams::default()))
        .await
        .expect("list");
    assert_eq!(list.items.len(), 1);
    within("delete", api.delete("a", &DeleteParams::default()))
        .await
        .expect("deleted");
    assert!(
        within("get_opt", api.get_opt("a"))
            .await
            .expect("get_opt")
            .is_none()
    );
    assert_eq!(
        api_error(within("get", api.get("a")).await),
        (404, "NotFound".into())
    );
    let audit = sim.audit();
    assert_eq!(audit.count("create"), 2);
    assert_eq!(audit.count("delete"), 1);
    assert_eq!(audit.writes(), 3);
}

#[tokio::test]
async fn duplicate_create_is_already_exists_and_generate_name_works() {
    let (_sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    within("create", api.create(&PostParams::default(), &cm("a", json!({}))))
        .await
        .expect("created");
    let again = within(
        "create again",
        api.create(&PostParams::default(), &cm("a", json!({}))),
    )
    .await;
    assert_eq!(api_error(again), (409, "AlreadyExists".into()));
    let mut generated = cm("", json!({}));
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("gen-".into());
    let g = within("generateName", api.create(&PostParams::default(), &generated))
        .await
        .expect("generated");
    assert!(
        g.metadata
            .name
            .is_some_and(|n| n.starts_with("gen-") && n.len() > 4)
    );
    // An invalid name is Invalid (422).
    let r = within(
        "bad name",
        api.create(&PostParams::default(), &cm("Bad_Name", json!({}))),
    )
    .await;
    assert_eq!(api_error(r), (422, "Invalid".into()));
    // A namespaced create into a missing namespace is NotFound.
    let other: Api<ConfigMap> = Api::namespaced(api.clone().into_client(), "missing");
    let r = within(
        "create in missing ns",
        other.create(&PostParams::default(), &cm("a", json!({}))),
    )
    .await;
    assert_eq!(api_error(r).0, 404);
}

#[tokio::test]
async fn stale_update_is_conflict() {
    let (_sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    let first = within("create", api.create(&PostParams::default(), &cm("a", json!({}))))
        .await
        .expect("created");
    let mut changed = first.clone();
    changed.data = Some([("k".to_owned(), "w".to_owned())].into());
    let second = within("replace", api.replace("a", &PostParams::default(), &changed))
        .await
        .expect("replaced");
    assert_ne!(second.metadata.resource_version, first.metadata.resource_version);
    let stale = within("stale replace", api.replace("a", &PostParams::default(), &first)).await;
    assert_eq!(api_error(stale), (409, "Conflict".into()));
}

#[tokio::test]
async fn generation_bumps_on_spec_change_only() {
    let sim = Simulator::new();
    let api = cv_api(&client(&sim));
    let cv = within("create", api.create(&PostParams::default(), &cv_object("a")))
        .await
        .expect("created");
    assert_eq!(cv.metadata.generation, Some(1));
    let p = PatchParams::default();
    let labelled = within(
        "label patch",
        api.patch(
            "version",
            &p,
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        ),
    )
    .await
    .expect("patched");
    assert_eq!(labelled.metadata.generation, Some(1));
    let status = within(
        "status patch",
        api.patch_status(
            "version",
            &p,
            &Patch::Merge(json!({"status": {"desired": {"version": "1"}}})),
        ),
    )
    .await
    .expect("status patched");
    assert_eq!(status.metadata.generation, Some(1));
    let spec = within(
        "spec patch",
        api.patch("version", &p, &Patch::Merge(json!({"spec": {"channel": "b"}}))),
    )
    .await
    .expect("spec patched");
    assert_eq!(spec.metadata.generation, Some(2));
    assert_eq!(spec.data["spec"]["channel"], "b");
}

#[tokio::test]
async fn status_subresource_is_isolated() {
    let sim = Simulator::new();
    let api = cv_api(&client(&sim));
    let p = PostParams::default();
    let cv = within("create", api.create(&p, &cv_object("a")))
        .await
        .expect("created");
    assert!(
        cv.data.get("status").is_none(),
        "create ignores status: {:?}",
        cv.data
    );
    // A status write changes only status.
    let mut s = cv.clone();
    s.data["status"] = json!({"desired": {"version": "4.16.1"}});
    s.data["spec"]["channel"] = json!("ignored");
    let after = within("replace_status", api.replace_status("version", &p, &s))
        .await
        .expect("status replaced");
    assert_eq!(after.data["status"]["desired"]["version"], "4.16.1");
    assert_eq!(after.data["spec"]["channel"], "a");
    // A main-resource write ignores status.
    let mut m = after.clone();
    m.data["status"] = json!({"desired": {"version": "0.0.0"}});
    m.data["spec"]["channel"] = json!("b");
    let after = within("replace", api.replace("version", &p, &m))
        .await
        .expect("replaced");
    assert_eq!(after.data["status"]["desired"]["version"], "4.16.1");
    assert_eq!(after.data["spec"]["channel"], "b");
    // ConfigMaps have no status subresource.
    let (_sim, c) = with_namespace().await;
    let cms: Api<ConfigMap> = Api::namespaced(c, "ns");
    within("create cm", cms.create(&p, &cm("a", json!({}))))
        .await
        .expect("cm created");
    let r = within(
        "cm status",
        cms.patch_status("a", &PatchParams::default(), &Patch::Merge(json!({"status": {}}))),
    )
    .await;
    assert_eq!(api_error(r).0, 404);
}

#[tokio::test]
async fn label_and_field_selectors() {
    let (_sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c.clone(), "ns");
    let p = PostParams::default();
    for (n, l) in [
        ("a", json!({"app": "web", "tier": "a"})),
        ("b", json!({"app": "web", "tier": "b"})),
        ("c", json!({"app": "db"})),
    ] {
        within("create", api.create(&p, &cm(n, l)))
            .await
            .expect("created");
    }
    let names = |l: kube::api::ObjectList<ConfigMap>| -> Vec<String> {
        l.items.into_iter().filter_map(|o| o.metadata.name).collect()
    };
    for (sel, want) in [
        ("app=web", vec!["a", "b"]),
        ("app==db", vec!["c"]),
        ("app!=web", vec!["c"]),
        ("tier", vec!["a", "b"]),
        ("!tier", vec!["c"]),
        ("tier in (b,z)", vec!["b"]),
        ("app=web,tier notin (a)", vec!["b"]),
    ] {
        let l = within(sel, api.list(&ListParams::default().labels(sel)))
            .await
            .expect("list");
        assert_eq!(names(l), want, "labelSelector {sel}");
    }
    let l = within(
        "field",
        api.list(&ListParams::default().fields("metadata.name=b")),
    )
    .await
    .expect("list");
    assert_eq!(names(l), ["b"]);
    let all: Api<ConfigMap> = Api::all(c);
    let l = within(
        "ns field",
        all.list(&ListParams::default().fields("metadata.namespace=other")),
    )
    .await
    .expect("list");
    assert!(l.items.is_empty());
    let r = within("bad field", api.list(&ListParams::default().fields("data.k=v"))).await;
    assert_eq!(api_error(r), (400, "BadRequest".into()));
}

#[tokio::test]
async fn pagination_with_limit_and_continue() {
    let (_sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    for n in ["e", "d", "c", "b", "a"] {
        within("create", api.create(&PostParams::default(), &cm(n, json!({}))))
            .await
            .expect("created");
    }
    let mut params = ListParams::default().limit(2);
    let mut pages = Vec::new();
    loop {
        let page = within("page", api.list(&params)).await.expect("page");
        pages.push(
            page.items
                .iter()
                .filter_map(|o| o.metadata.name.clone())
                .collect::<Vec<_>>(),
        );
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(t) => params = params.continue_token(&t),
            None => break,
        }
        assert!(pages.len() < 10, "pagination does not end");
    }
    assert_eq!(pages, [vec!["a", "b"], vec!["c", "d"], vec!["e"]]);
}

#[tokio::test]
async fn watch_sees_added_modified_deleted() {
    let (_sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    let rv = within("list", api.list(&ListParams::default()))
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("list rv");
    let stream = within("watch", api.watch(&WatchParams::default().timeout(5), &rv))
        .await
        .expect("watch");
    let mut stream = stream.boxed();
    let p = PostParams::default();
    let created = within("create", api.create(&p, &cm("a", json!({}))))
        .await
        .expect("created");
    let mut changed = created.clone();
    changed.data = Some([("k".to_owned(), "w".to_owned())].into());
    within("replace", api.replace("a", &p, &changed))
        .await
        .expect("replaced");
    within("delete", api.delete("a", &DeleteParams::default()))
        .await
        .expect("deleted");
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match within("event", stream.try_next()).await.expect("event") {
            Some(WatchEvent::Added(o)) => seen.push(("ADDED", o.metadata.name)),
            Some(WatchEvent::Modified(o)) => seen.push(("MODIFIED", o.metadata.name)),
            Some(WatchEvent::Deleted(o)) => seen.push(("DELETED", o.metadata.name)),
            Some(other) => panic!("unexpected event {other:?}"),
            None => panic!("watch ended early after {seen:?}"),
        }
    }
    let a = Some("a".to_owned());
    assert_eq!(
        seen,
        [("ADDED", a.clone()), ("MODIFIED", a.clone()), ("DELETED", a)]
    );
}

#[tokio::test]
async fn watch_timeout_ends_the_stream() {
    let (sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    let quiet = WatchParams {
        bookmarks: false,
        ..WatchParams::default().timeout(1)
    };
    let stream = within("watch", api.watch(&quiet, "0")).await.expect("watch");
    let rest: Vec<_> = within("stream end", stream.collect::<Vec<_>>()).await;
    assert!(rest.is_empty(), "no events expected: {rest:?}");
    // With bookmarks, the stream ends with one carrying the current version.
    let with = WatchParams {
        bookmarks: true,
        ..WatchParams::default().timeout(1)
    };
    let stream = within("watch", api.watch(&with, "0")).await.expect("watch");
    let rest: Vec<_> = within("stream end", stream.collect::<Vec<_>>()).await;
    match rest.as_slice() {
        [Ok(WatchEvent::Bookmark(b))] => {
            assert_eq!(b.metadata.resource_version, sim.resource_version().to_string());
        }
        other => panic!("expected one bookmark, got {other:?}"),
    }
}

#[tokio::test]
async fn watch_from_too_old_version_is_expired() {
    let sim = Simulator::with_event_capacity(2);
    let c = client(&sim);
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "ns"}})).expect("ns");
    within(
        "ns",
        Api::<Namespace>::all(c.clone()).create(&PostParams::default(), &ns),
    )
    .await
    .expect("ns created");
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    for n in ["a", "b", "c", "d"] {
        within("create", api.create(&PostParams::default(), &cm(n, json!({}))))
            .await
            .expect("created");
    }
    let stream = within("watch", api.watch(&WatchParams::default().timeout(5), "1"))
        .await
        .expect("watch");
    let mut stream = stream.boxed();
    match within("first event", stream.try_next()).await {
        Ok(Some(WatchEvent::Error(s))) => {
            assert_eq!((s.code, s.reason.as_str()), (410, "Expired"));
        }
        other => panic!("expected a 410 Expired error event, got {other:?}"),
    }
}

#[tokio::test]
async fn discovery_lists_served_kinds() {
    let sim = Simulator::new();
    let c = client(&sim);
    let core = within("core", c.list_core_api_versions()).await.expect("/api");
    assert_eq!(core.versions, ["v1"]);
    let v1 = within("v1", c.list_core_api_resources("v1"))
        .await
        .expect("/api/v1");
    assert!(
        v1.resources
            .iter()
            .any(|r| r.name == "configmaps" && r.namespaced)
    );
    let groups = within("groups", c.list_api_groups()).await.expect("/apis");
    let names: Vec<&str> = groups.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(
        names,
        ["apps", "config.openshift.io", "machineconfiguration.openshift.io"]
    );
    let cfg = within("config", c.list_api_group_resources("config.openshift.io/v1"))
        .await
        .expect("/apis/config.openshift.io/v1");
    assert!(cfg.resources.iter().any(|r| r.name == "clusterversions/status"));
}

#[tokio::test]
async fn unsupported_methods_are_method_not_allowed_and_delete_collection_works() {
    let (sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    let p = PostParams::default();
    for (n, app) in [("a", "web"), ("b", "web"), ("c", "db")] {
        within("create", api.create(&p, &cm(n, json!({"app": app}))))
            .await
            .expect("created");
    }
    within(
        "delete collection",
        api.delete_collection(&DeleteParams::default(), &ListParams::default().labels("app=web")),
    )
    .await
    .expect("collection deleted");
    let left = within("list", api.list(&ListParams::default()))
        .await
        .expect("list");
    assert_eq!(left.items.len(), 1);
    // POST to a named object is not a route kube-apiserver serves: 405 with a Status body.
    let req = http::Request::post("/api/v1/namespaces/ns/configmaps/c")
        .header("content-type", "application/json")
        .body(kube::client::Body::from(b"{}".to_vec()))
        .expect("request");
    let resp = within("raw post", tower::ServiceExt::oneshot(sim.clone(), req))
        .await
        .expect("infallible");
    assert_eq!(resp.status().as_u16(), 405);
    let body = within("body", http_body_util::BodyExt::collect(resp.into_body()))
        .await
        .expect("body")
        .to_bytes();
    let status: serde_json::Value = serde_json::from_slice(&body).expect("json status");
    assert_eq!(
        (
            &status["kind"],
            &status["status"],
            &status["reason"],
            &status["code"]
        ),
        (
            &json!("Status"),
            &json!("Failure"),
            &json!("MethodNotAllowed"),
            &json!(405)
        )
    );
    assert_eq!(sim.audit().entries.last().map(|e| e.code), Some(405));
}

/// `cvo status` text for `state` at the fixture's moment.
fn render(state: &cvo::cluster::ClusterState) -> String {
    let now = state.snapshot_time().expect("fixture has condition times");
    cvo::cli::status::render_text(&cvo::assess::assess(state, None, now), None)
}

const SCENARIO: &str = "4.14.1-degraded";

#[tokio::test]
async fn fetch_state_over_the_simulator_renders_the_fixture_output() {
    let Some(dir) = common::shared_fixture("oc-upgrade-status", "fetch_state_over_the_simulator") else {
        return;
    };
    let sim = Simulator::from_snapshot(&common::scenario_inputs(&dir, SCENARIO)).expect("fixture loads");
    let state = within(
        "fetch_state",
        cvo::cluster::live::fetch_state(&client(&sim), "sim"),
    )
    .await
    .expect("fetch_state");
    let expected = std::fs::read_to_string(dir.join(format!("{SCENARIO}.output"))).expect("expected output");
    assert_eq!(render(&state), expected);
    let audit = sim.audit();
    assert_eq!(audit.writes(), 0, "fetch_state wrote: {:?}", audit.entries);
    // ClusterVersion and the MCO Deployment are read with get; four kinds are listed.
    assert_eq!(
        (audit.count("get"), audit.count("list")),
        (2, 4),
        "{:?}",
        audit.counts()
    );
}

#[tokio::test]
async fn every_fixture_round_trips_through_the_simulator() {
    let Some(dir) = common::shared_fixture("oc-upgrade-status", "every_fixture_round_trips") else {
        return;
    };
    let mut scenarios: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixture dir")
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".output")
                .map(str::to_owned)
        })
        .collect();
    scenarios.sort();
    assert!(!scenarios.is_empty());
    for s in scenarios {
        let mut snapshot =
            cvo::cluster::snapshot::load(&common::scenario_inputs(&dir, &s)).expect("fixture loads");
        let sim = Simulator::from_state(&snapshot).expect("simulator loads");
        let state = within(
            "fetch_state",
            cvo::cluster::live::fetch_state(&client(&sim), "sim"),
        )
        .await
        .expect("fetch_state");
        // The API lists in name order; the snapshot keeps file order.
        snapshot.sort_all_by_name();
        assert_eq!(render(&state), render(&snapshot), "scenario {s}");
    }
}

#[tokio::test]
async fn watch_state_over_the_simulator_follows_changes() {
    let Some(dir) = common::shared_fixture("oc-upgrade-status", "watch_state_over_the_simulator") else {
        return;
    };
    let sim = Simulator::from_snapshot(&common::scenario_inputs(&dir, SCENARIO)).expect("fixture loads");
    let mut rx = cvo::cluster::live::watch_state(client(&sim), "sim".into());
    let synced = common::wait_for(&mut rx, "synced", |s| {
        matches!(s.feed, cvo::cluster::FeedStatus::Live { synced: true, .. })
    })
    .await;
    let expected = std::fs::read_to_string(dir.join(format!("{SCENARIO}.output"))).expect("expected output");
    let mut state = (*synced).clone();
    state.feed = cvo::cluster::FeedStatus::Static;
    assert_eq!(render(&state), expected);
    assert!(state.mco_deployment.is_some() == dir.join(format!("{SCENARIO}-mco-deployment.yaml")).is_file());
    // A change on the server shows up in the next state.
    let mut cv = sim
        .get("config.openshift.io", "clusterversions", "", "version")
        .expect("cv stored");
    cv["spec"]["channel"] = json!("sim-test-channel");
    sim.insert(cv).expect("cv updated");
    common::wait_for(&mut rx, "channel change", |s| {
        s.cluster_version
            .as_ref()
            .and_then(|cv| cv.spec.channel.as_deref())
            == Some("sim-test-channel")
    })
    .await;
    assert_eq!(sim.audit().writes(), 0);
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let (_sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    let mut held = cm("held", json!({}));
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    within("create", api.create(&PostParams::default(), &held))
        .await
        .expect("created");
    within("delete", api.delete("held", &DeleteParams::default()))
        .await
        .expect("delete accepted");
    let marked = within("get", api.get("held")).await.expect("still there");
    assert!(marked.metadata.deletion_timestamp.is_some());
    within(
        "drop finalizer",
        api.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        ),
    )
    .await
    .expect("patched");
    assert!(
        within("get_opt", api.get_opt("held"))
            .await
            .expect("get_opt")
            .is_none()
    );
}

#[tokio::test]
async fn watch_with_selector_reports_objects_entering_and_leaving() {
    let (_sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    let p = PatchParams::default();
    within(
        "create",
        api.create(&PostParams::default(), &cm("a", json!({"app": "db"}))),
    )
    .await
    .expect("created");
    let stream = within(
        "watch",
        api.watch(&WatchParams::default().labels("app=web").timeout(5), "0"),
    )
    .await
    .expect("watch");
    let mut stream = stream.boxed();
    for app in ["web", "db"] {
        let labels = json!({"metadata": {"labels": {"app": app}}});
        within("relabel", api.patch("a", &p, &Patch::Merge(labels)))
            .await
            .expect("patched");
    }
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match within("event", stream.try_next()).await.expect("event") {
            Some(WatchEvent::Added(_)) => seen.push("ADDED"),
            Some(WatchEvent::Modified(_)) => seen.push("MODIFIED"),
            Some(WatchEvent::Deleted(_)) => seen.push("DELETED"),
            other => panic!("unexpected {other:?} after {seen:?}"),
        }
    }
    assert_eq!(seen, ["ADDED", "DELETED"]);
}

#[tokio::test]
async fn server_side_apply_creates_then_merges() {
    let (_sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    let body =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "1"}});
    let pp = PatchParams::apply("cvo-test");
    let first = within("apply create", api.patch("applied", &pp, &Patch::Apply(&body)))
        .await
        .expect("applied");
    assert_eq!(first.data, Some([("a".to_owned(), "1".to_owned())].into()));
    let more =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"b": "2"}});
    let second = within("apply update", api.patch("applied", &pp, &Patch::Apply(&more)))
        .await
        .expect("applied again");
    assert_eq!(second.data.map(|d| d.len()), Some(2));
    let r = within(
        "apply without manager",
        api.patch("applied", &PatchParams::default(), &Patch::Apply(&more)),
    )
    .await;
    assert_eq!(api_error(r), (422, "Invalid".into()));
}

#[tokio::test]
async fn dry_run_writes_change_nothing() {
    let (sim, c) = with_namespace().await;
    let api: Api<ConfigMap> = Api::namespaced(c, "ns");
    sim.clear_audit();
    let rv = sim.resource_version();
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let would = within("dry create", api.create(&dry, &cm("a", json!({}))))
        .await
        .expect("dry create answers");
    assert_eq!(would.metadata.name.as_deref(), Some("a"));
    assert!(
        within("get_opt", api.get_opt("a"))
            .await
            .expect("get_opt")
            .is_none()
    );
    assert_eq!(sim.resource_version(), rv);
    let audit = sim.audit();
    assert_eq!((audit.count("create"), audit.writes()), (1, 0));
    assert!(audit.entries.iter().any(|e| e.dry_run));
}
