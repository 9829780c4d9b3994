//! The simulated API server (`cvo::sim::Simulator`) through a real `kube::Client`: CRUD,
//! kube-apiserver error reasons and messages, optimistic concurrency, generation, the status
//! subresource, selectors, pagination, watches and bookmarks, strategic merge order, what
//! custom resources need (`apiVersion`/`kind`, their CRD's schema), server-side defaults, CRD
//! establishment, and cvo's own live feed against a simulator loaded with the
//! `oc adm upgrade status` fixtures.
//!
//! With `CVO_TEST_KUBECONFIG` every case runs on that cluster instead (the expected values
//! are what kube-apiserver v1.36.2 answers), but the `sim_*` ones: they check simulator
//! internals (audit log, event log size, bookmark interval, establish delay, built-in
//! OpenShift kinds) and always run on a simulator.

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

/// Where a test runs: the in-process simulator, or the real cluster `CVO_TEST_KUBECONFIG`
/// names. Either way the test gets its own namespace (random suffix), removed by [`Env::done`].
struct Env {
    sim: Option<Simulator>,
    client: Client,
    ns: String,
    crds: std::sync::Mutex<Vec<String>>,
}

/// A random-enough lowercase suffix for names that must not collide on a shared cluster.
/// Creates namespace `a` (the simulator-only tests' namespace: a fresh simulator has no other
/// test in it).
async fn create_namespace_a(c: &Client) {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "a"}})).expect("ns");
    within(
        "ns",
        Api::<Namespace>::all(c.clone()).create(&PostParams::default(), &ns),
    )
    .await
    .expect("ns created");
}

fn suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64 ^ d.as_secs());
    let n = nanos
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(
            N.fetch_add(1, Ordering::Relaxed)
                .wrapping_mul(1_442_695_040_888_963_407),
        )
        .wrapping_add(u64::from(std::process::id()));
    format!("{:08x}", n >> 32)
}

async fn real_client() -> Option<Client> {
    let path = std::env::var_os("CVO_TEST_KUBECONFIG")?;
    let kc = kube::config::Kubeconfig::read_from(&path).expect("CVO_TEST_KUBECONFIG readable");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .expect("kubeconfig usable");
    Some(Client::try_from(cfg).expect("client"))
}

/// A fresh environment with an empty namespace of its own.
async fn env() -> Env {
    let (sim, client) = match real_client().await {
        Some(c) => (None, c),
        None => {
            let sim = Simulator::new();
            (Some(sim.clone()), client(&sim))
        }
    };
    let ns = format!("cvo-conf-{}", suffix());
    let obj: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).expect("namespace");
    within(
        "create namespace",
        Api::<Namespace>::all(client.clone()).create(&PostParams::default(), &obj),
    )
    .await
    .expect("namespace created");
    Env {
        sim,
        client,
        ns,
        crds: std::sync::Mutex::new(Vec::new()),
    }
}

impl Env {
    fn cms(&self) -> Api<ConfigMap> {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// Creates an established CRD `widgets.<unique group>` (kind Widget, v1, status
    /// subresource) of `scope`; returns its ApiResource.
    async fn widget_crd(&self, scope: &str) -> ApiResource {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
        self.crd_with_schema(scope, schema).await
    }

    /// Creates an established CRD `widgets.<unique group>` (kind Widget, v1, status
    /// subresource) of `scope` with `schema` as its `openAPIV3Schema`; returns its ApiResource.
    async fn crd_with_schema(&self, scope: &str, schema: serde_json::Value) -> ApiResource {
        let group = format!("t{}.cvo.example.com", suffix());
        let name = format!("widgets.{group}");
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name},
            "spec": {"group": group, "scope": scope,
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": schema}}]},
        });
        let api = crd_api(&self.client);
        let obj: DynamicObject = serde_json::from_value(crd).expect("crd");
        within("create crd", api.create(&PostParams::default(), &obj))
            .await
            .expect("crd created");
        self.crds.lock().expect("crds").push(name.clone());
        poll("crd established", || async {
            let c = api.get(&name).await.ok()?;
            let conds = c.data["status"]["conditions"].as_array()?.clone();
            conds
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
                .then_some(())
        })
        .await;
        // Discovery and the new endpoints follow a moment later on a real server.
        let gvk = GroupVersionKind::gvk(&group, "v1", "Widget");
        let ar = ApiResource::from_gvk_with_plural(&gvk, "widgets");
        let probe: Api<DynamicObject> = Api::all_with(self.client.clone(), &ar);
        poll("crd served", || async {
            probe.list(&ListParams::default()).await.ok().map(|_| ())
        })
        .await;
        ar
    }

    /// Removes the namespace and CRDs this test made.
    async fn done(self) {
        let crds = crd_api(&self.client);
        let names = self.crds.lock().expect("crds").clone();
        for n in names {
            let _ = crds.delete(&n, &DeleteParams::default()).await;
        }
        let _ = Api::<Namespace>::all(self.client.clone())
            .delete(&self.ns, &DeleteParams::default())
            .await;
    }
}

fn crd_api(c: &Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    Api::all_with(
        c.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, "customresourcedefinitions"),
    )
}

fn dyn_api(c: &Client, ar: &ApiResource, ns: Option<&str>) -> Api<DynamicObject> {
    match ns {
        Some(ns) => Api::namespaced_with(c.clone(), ns, ar),
        None => Api::all_with(c.clone(), ar),
    }
}

/// Polls `f` every 100 ms until it gives `Some`, failing the test after 60 s (a real
/// cluster's controllers take a moment).
async fn poll<T, F, Fut>(what: &str, f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    common::poll(what, Duration::from_secs(60), Duration::from_millis(100), f).await
}

fn cm(name: &str, labels: serde_json::Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}))
        .expect("configmap")
}

fn api_error(r: Result<impl std::fmt::Debug, kube::Error>) -> (u16, String) {
    let (code, reason, _) = api_error_full(r);
    (code, reason)
}

/// `(code, reason, message)` of the Status a failed request got.
fn api_error_full(r: Result<impl std::fmt::Debug, kube::Error>) -> (u16, String, String) {
    match r {
        Err(kube::Error::Api(s)) => (s.code, s.reason.clone(), s.message.clone()),
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
    let e = env().await;
    let api = e.cms();
    let created = within("create", api.create(&PostParams::default(), &cm("a", json!({}))))
        .await
        .expect("created");
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(created.metadata.namespace.as_deref(), Some(e.ns.as_str()));
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
    e.done().await;
}

/// Simulator only (its audit log): every request is recorded with its verb.
#[tokio::test]
async fn sim_audit_log_counts_requests_by_verb() {
    let sim = Simulator::new();
    let c = client(&sim);
    create_namespace_a(&c).await;
    let api: Api<ConfigMap> = Api::namespaced(c, "a");
    within("create", api.create(&PostParams::default(), &cm("a", json!({}))))
        .await
        .expect("created");
    within("get", api.get("a")).await.expect("get");
    within("list", api.list(&ListParams::default()))
        .await
        .expect("list");
    within("delete", api.delete("a", &DeleteParams::default()))
        .await
        .expect("deleted");
    let missing = within("get missing", api.get("a")).await;
    assert_eq!(api_error(missing), (404, "NotFound".into()));
    let audit = sim.audit();
    assert_eq!(
        (
            audit.count("create"),
            audit.count("get"),
            audit.count("list"),
            audit.count("delete")
        ),
        (2, 2, 1, 1)
    );
    assert_eq!(audit.writes(), 3);
    assert_eq!(audit.entries.last().map(|e| e.code), Some(404));
}

#[tokio::test]
async fn duplicate_create_is_already_exists_and_generate_name_works() {
    let e = env().await;
    let api = e.cms();
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
    e.done().await;
}

#[tokio::test]
async fn stale_update_is_conflict() {
    let e = env().await;
    let api = e.cms();
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
    e.done().await;
}

#[tokio::test]
async fn generation_bumps_on_spec_change_only() {
    let e = env().await;
    let ar = e.widget_crd("Namespaced").await;
    let api = dyn_api(&e.client, &ar, Some(&e.ns));
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": ar.api_version, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1},
    }))
    .expect("widget");
    let created = within("create", api.create(&PostParams::default(), &w))
        .await
        .expect("created");
    assert_eq!(created.metadata.generation, Some(1));
    let p = PatchParams::default();
    let labelled = within(
        "label patch",
        api.patch(
            "w",
            &p,
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        ),
    )
    .await
    .expect("patched");
    assert_eq!(labelled.metadata.generation, Some(1));
    let status = within(
        "status patch",
        api.patch_status("w", &p, &Patch::Merge(json!({"status": {"seen": 1}}))),
    )
    .await
    .expect("status patched");
    assert_eq!(status.metadata.generation, Some(1));
    let spec = within(
        "spec patch",
        api.patch("w", &p, &Patch::Merge(json!({"spec": {"size": 2}}))),
    )
    .await
    .expect("spec patched");
    assert_eq!(spec.metadata.generation, Some(2));
    assert_eq!(spec.data["spec"]["size"], 2);
    // ConfigMaps do not keep a generation at all.
    let c = within("cm", e.cms().create(&PostParams::default(), &cm("a", json!({}))))
        .await
        .expect("cm");
    assert_eq!(c.metadata.generation, None);
    e.done().await;
}

#[tokio::test]
async fn status_subresource_is_isolated() {
    let e = env().await;
    let ar = e.widget_crd("Cluster").await;
    let api = dyn_api(&e.client, &ar, None);
    let p = PostParams::default();
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": ar.api_version, "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"channel": "a"}, "status": {"version": "ignored"},
    }))
    .expect("widget");
    let created = within("create", api.create(&p, &w)).await.expect("created");
    assert!(
        created.data.get("status").is_none(),
        "create ignores status: {:?}",
        created.data
    );
    assert_eq!(created.metadata.namespace, None, "cluster-scoped");
    // A status write changes only status.
    let mut s = created.clone();
    s.data["status"] = json!({"version": "4.16.1"});
    s.data["spec"]["channel"] = json!("ignored");
    let after = within("replace_status", api.replace_status("w", &p, &s))
        .await
        .expect("status replaced");
    assert_eq!(after.data["status"]["version"], "4.16.1");
    assert_eq!(after.data["spec"]["channel"], "a");
    // A main-resource write ignores status.
    let mut m = after.clone();
    m.data["status"] = json!({"version": "0.0.0"});
    m.data["spec"]["channel"] = json!("b");
    let after = within("replace", api.replace("w", &p, &m))
        .await
        .expect("replaced");
    assert_eq!(after.data["status"]["version"], "4.16.1");
    assert_eq!(after.data["spec"]["channel"], "b");
    // ConfigMaps have no status subresource.
    let cms = e.cms();
    within("create cm", cms.create(&p, &cm("a", json!({}))))
        .await
        .expect("cm created");
    let r = within(
        "cm status",
        cms.patch_status("a", &PatchParams::default(), &Patch::Merge(json!({"status": {}}))),
    )
    .await;
    assert_eq!(api_error(r), (404, "NotFound".into()));
    e.done().await;
}

/// Simulator only: it serves the OpenShift kinds built in (a real server needs their CRDs).
#[tokio::test]
async fn sim_serves_cluster_version_without_set_up() {
    let sim = Simulator::new();
    let api = cv_api(&client(&sim));
    let cv = within(
        "create",
        api.create(&PostParams::default(), &cv_object("stable-4.16")),
    )
    .await
    .expect("created");
    assert_eq!((cv.metadata.generation, cv.data.get("status")), (Some(1), None));
    // The status is held to upstream's CRD schema, as on a cluster with the CRD installed
    // (kube-apiserver v1.36 gave these causes for this patch).
    let (code, _, message) = api_error_full(
        within(
            "bad status",
            api.patch_status(
                "version",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"desired": {"version": "4.16.1"}}})),
            ),
        )
        .await,
    );
    assert_eq!(
        (code, message.as_str()),
        (
            422,
            "ClusterVersion.config.openshift.io \"version\" is invalid: [status.desired.image: Required value, \
             status.availableUpdates: Required value, status.observedGeneration: Required value, \
             status.versionHash: Required value, <nil>: Invalid value: null: some validation rules were not \
             checked because the object was invalid; correct the existing errors to complete validation]"
        )
    );
    let st = within(
        "status",
        api.patch_status(
            "version",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"desired": {"version": "4.16.1", "image": "quay.io/x@sha256:1"},
                "availableUpdates": [], "observedGeneration": 1, "versionHash": "h"}}),
            ),
        ),
    )
    .await
    .expect("status patched");
    assert_eq!(st.data["status"]["desired"]["version"], "4.16.1");
}

#[tokio::test]
async fn label_and_field_selectors() {
    let e = env().await;
    let api = e.cms();
    let c = e.client.clone();
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
    e.done().await;
}

#[tokio::test]
async fn pagination_with_limit_and_continue() {
    let e = env().await;
    let api = e.cms();
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
    e.done().await;
}

#[tokio::test]
async fn watch_sees_added_modified_deleted() {
    let e = env().await;
    let api = e.cms();
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
    e.done().await;
}

/// The resourceVersion of `api`'s list (the current version of the store).
async fn list_rv(api: &Api<ConfigMap>) -> String {
    within("list", api.list(&ListParams::default()))
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("list rv")
}

/// `(type, resourceVersion, initial-events-end annotation)` of watch events.
fn event_summary(events: &[Result<WatchEvent<ConfigMap>, kube::Error>]) -> Vec<(String, String, bool)> {
    events
        .iter()
        .map(|e| match e {
            Ok(WatchEvent::Bookmark(b)) => (
                "BOOKMARK".to_owned(),
                b.metadata.resource_version.clone(),
                b.metadata
                    .annotations
                    .get("k8s.io/initial-events-end")
                    .is_some_and(|v| v == "true"),
            ),
            Ok(WatchEvent::Added(o)) => (
                "ADDED".to_owned(),
                o.metadata.name.clone().unwrap_or_default(),
                false,
            ),
            other => (format!("{other:?}"), String::new(), false),
        })
        .collect()
}

#[tokio::test]
async fn watch_timeout_ends_the_stream() {
    let e = env().await;
    let api = e.cms();
    let quiet = WatchParams {
        bookmarks: false,
        ..WatchParams::default().timeout(1)
    };
    let stream = within("watch", api.watch(&quiet, "0")).await.expect("watch");
    let rest: Vec<_> = within("stream end", stream.collect::<Vec<_>>()).await;
    assert!(rest.is_empty(), "no events expected: {rest:?}");
    // With bookmarks, a watch from "0" gets its initial events (none here) and then at once
    // a bookmark marking their end, with the current version. kube-apiserver's watch cache
    // may also send one timed bookmark as the deadline nears (its bookmark timer ticks every
    // second and picks watchers within 2 s of their deadline, `pkg/storage/cacher`), so a
    // real server sends it or not depending on that tick; the simulator never does.
    let before: u64 = list_rv(&api).await.parse().expect("numeric rv");
    let with = WatchParams {
        bookmarks: true,
        ..WatchParams::default().timeout(1)
    };
    let stream = within("watch", api.watch(&with, "0")).await.expect("watch");
    let rest: Vec<_> = within("stream end", stream.collect::<Vec<_>>()).await;
    let summary = event_summary(&rest);
    let (initial, timed) = match summary.as_slice() {
        [first] => (first, None),
        [first, (t, rv, false)] if t == "BOOKMARK" && e.sim.is_none() => (first, Some(rv)),
        other => panic!("expected one initial-events-end bookmark, got {other:?}"),
    };
    if let Some(timed) = timed {
        let timed: u64 = timed.parse().expect("numeric timed bookmark rv");
        let first: u64 = initial.1.parse().expect("numeric bookmark rv");
        assert!(timed >= first, "timed bookmark at {timed} before {first}");
    }
    match initial {
        (t, rv, true) if t == "BOOKMARK" => {
            let rv: u64 = rv.parse().expect("numeric bookmark rv");
            assert!(rv >= before, "bookmark at {rv}, list was at {before}");
            if let Some(sim) = &e.sim {
                assert_eq!(rv, sim.resource_version());
            }
        }
        other => panic!("expected one initial-events-end bookmark, got {other:?}"),
    }
    // From a given version: only changes (none here), and no initial-events-end bookmark; a
    // real server may send its timed bookmark (above), the simulator sends nothing.
    let rv = list_rv(&api).await;
    let stream = within("watch", api.watch(&with, &rv)).await.expect("watch");
    let rest: Vec<_> = within("stream end", stream.collect::<Vec<_>>()).await;
    let summary = event_summary(&rest);
    match summary.as_slice() {
        [] => {}
        [(t, _, false)] if t == "BOOKMARK" && e.sim.is_none() => {}
        other => panic!("no events expected from {rv}: {other:?}"),
    }
    e.done().await;
}

#[tokio::test]
async fn watch_from_an_old_version_replays_the_changes_after_it() {
    let e = env().await;
    let api = e.cms();
    let rv = list_rv(&api).await;
    for n in ["a", "b", "c", "d"] {
        within("create", api.create(&PostParams::default(), &cm(n, json!({}))))
            .await
            .expect("created");
    }
    let params = WatchParams {
        bookmarks: true,
        ..WatchParams::default().timeout(2)
    };
    let events: Vec<_> = within("watch", api.watch(&params, &rv))
        .await
        .expect("watch")
        .collect()
        .await;
    let names: Vec<(String, String, bool)> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| ("ADDED".to_owned(), (*n).to_owned(), false))
        .collect();
    // A real server's watch cache may add its timed bookmark near the deadline (see
    // `watch_timeout_ends_the_stream`); the simulator never does.
    let summary: Vec<_> = event_summary(&events)
        .into_iter()
        .filter(|(t, _, end)| e.sim.is_some() || t != "BOOKMARK" || *end)
        .collect();
    assert_eq!(summary, names);
    e.done().await;
}

/// Simulator only: a real server keeps every version until etcd is compacted (every 5
/// minutes), so a test cannot make one too old there.
#[tokio::test]
async fn sim_watch_from_a_compacted_version_is_expired() {
    let sim = Simulator::with_event_capacity(2);
    let c = client(&sim);
    create_namespace_a(&c).await;
    let api = Api::<ConfigMap>::namespaced(c, "a");
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
            assert_eq!(
                (s.code, s.reason.as_str(), s.message.as_str()),
                (410, "Expired", "too old resource version: 1 (3)")
            );
        }
        other => panic!("expected a 410 Expired error event, got {other:?}"),
    }
}

#[tokio::test]
async fn discovery_lists_served_kinds() {
    let e = env().await;
    let c = &e.client;
    let core = within("core", c.list_core_api_versions()).await.expect("/api");
    assert_eq!(core.versions, ["v1"]);
    let v1 = within("v1", c.list_core_api_resources("v1"))
        .await
        .expect("/api/v1");
    let has = |l: &k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList, name: &str, ns: bool| {
        l.resources.iter().any(|r| r.name == name && r.namespaced == ns)
    };
    for (name, ns) in [
        ("configmaps", true),
        ("namespaces", false),
        ("namespaces/status", false),
        ("pods/status", true),
        ("services", true),
        ("serviceaccounts", true),
        ("nodes", false),
    ] {
        assert!(has(&v1, name, ns), "/api/v1 lacks {name}");
    }
    let groups = within("groups", c.list_api_groups()).await.expect("/apis");
    let names: Vec<&str> = groups.groups.iter().map(|g| g.name.as_str()).collect();
    for g in [
        "apps",
        "batch",
        "coordination.k8s.io",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        "policy",
        "scheduling.k8s.io",
    ] {
        assert!(names.contains(&g), "/apis lacks {g}: {names:?}");
    }
    for (gv, name, ns) in [
        ("apps/v1", "deployments/status", true),
        ("apps/v1", "daemonsets", true),
        ("apps/v1", "statefulsets", true),
        ("apps/v1", "replicasets", true),
        ("batch/v1", "jobs", true),
        ("batch/v1", "cronjobs", true),
        ("coordination.k8s.io/v1", "leases", true),
        ("rbac.authorization.k8s.io/v1", "roles", true),
        ("rbac.authorization.k8s.io/v1", "clusterrolebindings", false),
        (
            "apiextensions.k8s.io/v1",
            "customresourcedefinitions/status",
            false,
        ),
        (
            "admissionregistration.k8s.io/v1",
            "validatingwebhookconfigurations",
            false,
        ),
        ("policy/v1", "poddisruptionbudgets/status", true),
        ("scheduling.k8s.io/v1", "priorityclasses", false),
    ] {
        let l = within(gv, c.list_api_group_resources(gv))
            .await
            .expect("group resources");
        assert!(has(&l, name, ns), "/apis/{gv} lacks {name} (namespaced {ns})");
    }
    if e.sim.is_some() {
        let cfg = within("config", c.list_api_group_resources("config.openshift.io/v1"))
            .await
            .expect("/apis/config.openshift.io/v1");
        for name in [
            "clusterversions/status",
            "clusteroperators",
            "infrastructures",
            "featuregates",
        ] {
            assert!(has(&cfg, name, false), "config.openshift.io lacks {name}");
        }
    }
    e.done().await;
}

#[tokio::test]
async fn unsupported_methods_are_method_not_allowed_and_delete_collection_works() {
    let e = env().await;
    let api = e.cms();
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
    let req = http::Request::post(format!("/api/v1/namespaces/{}/configmaps/c", e.ns))
        .header("content-type", "application/json")
        .body(kube::client::Body::from(b"{}".to_vec()))
        .expect("request");
    let resp = within("raw post", e.client.send(req)).await.expect("response");
    assert_eq!(resp.status().as_u16(), 405);
    let body = within("body", http_body_util::BodyExt::collect(resp.into_body()))
        .await
        .expect("body")
        .to_bytes();
    let status: serde_json::Value = serde_json::from_slice(&body).expect("json status");
    assert_eq!(
        status,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server does not allow this method on the requested resource",
            "reason": "MethodNotAllowed", "details": {}, "code": 405})
    );
    if let Some(sim) = &e.sim {
        assert_eq!(sim.audit().entries.last().map(|e| e.code), Some(405));
    }
    e.done().await;
}

/// `cvo status` text for `state` at the fixture's moment.
fn render(state: &cvo::cluster::ClusterState) -> String {
    let now = state.snapshot_time().expect("fixture has condition times");
    cvo::cli::status::render_text(&cvo::assess::assess(state, None, now), None)
}

const SCENARIO: &str = "4.14.1-degraded";

#[tokio::test]
async fn fetch_state_over_the_simulator_renders_the_fixture_output() {
    let Some(dir) = common::upstream_fixture("oc-upgrade-status", "fetch_state_over_the_simulator") else {
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
    let Some(dir) = common::upstream_fixture("oc-upgrade-status", "every_fixture_round_trips") else {
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
    let Some(dir) = common::upstream_fixture("oc-upgrade-status", "watch_state_over_the_simulator") else {
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
    let e = env().await;
    let api = e.cms();
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
    e.done().await;
}

#[tokio::test]
async fn watch_with_selector_reports_objects_entering_and_leaving() {
    let e = env().await;
    let api = e.cms();
    let p = PatchParams::default();
    within(
        "create",
        api.create(&PostParams::default(), &cm("a", json!({"app": "db"}))),
    )
    .await
    .expect("created");
    let stream = within(
        "watch",
        api.watch(&WatchParams::default().labels("app=web").timeout(30), "0"),
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
    while seen.len() < 3 {
        match within("event", stream.try_next()).await.expect("event") {
            Some(WatchEvent::Added(_)) => seen.push("ADDED"),
            Some(WatchEvent::Modified(_)) => seen.push("MODIFIED"),
            Some(WatchEvent::Deleted(_)) => seen.push("DELETED"),
            Some(WatchEvent::Bookmark(b))
                if b.metadata
                    .annotations
                    .get("k8s.io/initial-events-end")
                    .is_some_and(|v| v == "true") =>
            {
                seen.push("INITIAL-EVENTS-END");
            }
            // kube-apiserver sends other bookmarks when it likes (periodically, and shortly
            // before the watch's timeout): they carry only a resourceVersion.
            Some(WatchEvent::Bookmark(_)) => {}
            other => panic!("unexpected {other:?} after {seen:?}"),
        }
    }
    // From "0" with bookmarks: no initial events (a does not match), their end, then a
    // entering and leaving the selection.
    assert_eq!(seen, ["INITIAL-EVENTS-END", "ADDED", "DELETED"]);
    e.done().await;
}

#[tokio::test]
async fn server_side_apply_creates_then_merges() {
    let e = env().await;
    let api = e.cms();
    let body =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "1"}});
    let pp = PatchParams::apply("cvo-test");
    let first = within("apply create", api.patch("applied", &pp, &Patch::Apply(&body)))
        .await
        .expect("applied");
    assert_eq!(first.data, Some([("a".to_owned(), "1".to_owned())].into()));
    let more =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"b": "2"}});
    // Another manager's apply merges with the first one's fields.
    let second = within(
        "apply update",
        api.patch("applied", &PatchParams::apply("cvo-test-2"), &Patch::Apply(&more)),
    )
    .await
    .expect("applied again");
    assert_eq!(second.data.map(|d| d.len()), Some(2));
    let r = within(
        "apply without manager",
        api.patch("applied", &PatchParams::default(), &Patch::Apply(&more)),
    )
    .await;
    assert_eq!(api_error(r), (422, "Invalid".into()));
    e.done().await;
}

#[tokio::test]
async fn dry_run_writes_change_nothing() {
    let e = env().await;
    let api = e.cms();
    if let Some(sim) = &e.sim {
        sim.clear_audit();
    }
    let rv = e.sim.as_ref().map(Simulator::resource_version);
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
    if let Some(sim) = &e.sim {
        // The simulator's own books agree: no version used, a dry-run create audited.
        assert_eq!(Some(sim.resource_version()), rv);
        let audit = sim.audit();
        assert_eq!((audit.count("create"), audit.writes()), (1, 0));
        assert!(audit.entries.iter().any(|e| e.dry_run));
    }
    e.done().await;
}

fn managers(o: &kube::api::ObjectMeta) -> Vec<(String, String)> {
    o.managed_fields
        .iter()
        .flatten()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test]
async fn built_in_kinds_are_served_with_their_scope() {
    let e = env().await;
    let p = PostParams::default();
    let rbac = |kind: &str, plural: &str| {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("rbac.authorization.k8s.io", "v1", kind),
            plural,
        )
    };
    let lease = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("coordination.k8s.io", "v1", "Lease"),
        "leases",
    );
    let sa = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("", "v1", "ServiceAccount"),
        "serviceaccounts",
    );
    for (ar, body) in [
        (lease, json!({"spec": {"holderIdentity": "cvo"}})),
        (sa, json!({})),
        (rbac("Role", "roles"), json!({"rules": []})),
    ] {
        let api = dyn_api(&e.client, &ar, Some(&e.ns));
        let mut o = body;
        o["apiVersion"] = json!(ar.api_version);
        o["kind"] = json!(ar.kind);
        o["metadata"] = json!({"name": "x"});
        let obj: DynamicObject = serde_json::from_value(o).expect("object");
        let made = within("create", api.create(&p, &obj)).await.expect("created");
        assert_eq!(
            made.metadata.namespace.as_deref(),
            Some(e.ns.as_str()),
            "{}",
            ar.kind
        );
        assert!(made.metadata.uid.is_some() && made.metadata.creation_timestamp.is_some());
        let got = within("get", api.get("x")).await.expect("get");
        assert_eq!(got.metadata.uid, made.metadata.uid);
    }
    // A cluster-scoped kind has no namespace.
    let name = format!("cvo-conf-{}", suffix());
    let cr = dyn_api(&e.client, &rbac("ClusterRole", "clusterroles"), None);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name}, "rules": [],
    }))
    .expect("clusterrole");
    let made = within("create clusterrole", cr.create(&p, &obj))
        .await
        .expect("created");
    assert_eq!(made.metadata.namespace, None);
    within("delete clusterrole", cr.delete(&name, &DeleteParams::default()))
        .await
        .expect("deleted");
    e.done().await;
}

#[tokio::test]
async fn crd_defines_a_served_kind_until_deleted() {
    let e = env().await;
    let ar = e.widget_crd("Namespaced").await;
    let crd_name = format!("widgets.{}", ar.group);
    let crd = within("get crd", crd_api(&e.client).get(&crd_name))
        .await
        .expect("crd");
    let status = &crd.data["status"];
    for t in ["Established", "NamesAccepted"] {
        let c = status["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == t))
            .unwrap_or_else(|| panic!("no {t} condition: {status}"));
        assert_eq!(c["status"], "True", "{t}");
    }
    assert_eq!(status["acceptedNames"]["kind"], "Widget");
    assert_eq!(status["acceptedNames"]["plural"], "widgets");
    let groups = within("groups", e.client.list_api_groups()).await.expect("/apis");
    assert!(groups.groups.iter().any(|g| g.name == ar.group));
    let gv = format!("{}/v1", ar.group);
    let l = within("resources", e.client.list_api_group_resources(&gv))
        .await
        .expect("group resources");
    let names: Vec<(&str, bool)> = l
        .resources
        .iter()
        .map(|r| (r.name.as_str(), r.namespaced))
        .collect();
    assert!(
        names.contains(&("widgets", true)) && names.contains(&("widgets/status", true)),
        "{names:?}"
    );
    // Served, namespaced; strategic merge is refused for custom resources.
    let api = dyn_api(&e.client, &ar, Some(&e.ns));
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": ar.api_version, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"a": 1},
    }))
    .expect("widget");
    within("create", api.create(&PostParams::default(), &w))
        .await
        .expect("created");
    let r = within(
        "strategic on CR",
        api.patch(
            "w",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"a": 2}})),
        ),
    )
    .await;
    assert_eq!(api_error(r), (415, "UnsupportedMediaType".into()));
    // Deleting the CRD deletes its objects (a watcher sees DELETED) and the kind.
    let rv = within("list", api.list(&ListParams::default()))
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("rv");
    let mut stream = within("watch", api.watch(&WatchParams::default().timeout(30), &rv))
        .await
        .expect("watch")
        .boxed();
    within(
        "delete crd",
        crd_api(&e.client).delete(&crd_name, &DeleteParams::default()),
    )
    .await
    .expect("crd deleted");
    loop {
        match within("event", stream.try_next()).await {
            Ok(Some(WatchEvent::Deleted(o))) => {
                assert_eq!(o.metadata.name.as_deref(), Some("w"));
                break;
            }
            Ok(Some(WatchEvent::Modified(_) | WatchEvent::Bookmark(_))) => {}
            other => panic!("expected DELETED of w, got {other:?}"),
        }
    }
    let crds = crd_api(&e.client);
    poll("crd gone", || async {
        crds.get_opt(&crd_name)
            .await
            .ok()
            .flatten()
            .is_none()
            .then_some(())
    })
    .await;
    let client = e.client.clone();
    poll("group gone", || async {
        let g = client.list_api_groups().await.ok()?;
        (!g.groups.iter().any(|g| g.name == ar.group)).then_some(())
    })
    .await;
    e.done().await;
}

fn deployment(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                {"name": "app", "image": "registry.example/app:1",
                 "env": [{"name": "A", "value": "1"}], "ports": [{"containerPort": 8080}]},
                {"name": "side", "image": "registry.example/side:1"},
            ]}}},
    })
}

#[tokio::test]
async fn json_and_strategic_merge_patches() {
    let e = env().await;
    let api: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(e.client.clone(), &e.ns);
    let d = serde_json::from_value(deployment("d")).expect("deployment");
    let made = within("create", api.create(&PostParams::default(), &d))
        .await
        .expect("created");
    assert_eq!(made.metadata.generation, Some(1));
    let p = PatchParams::default();
    // Strategic merge: containers by name, env by name, ports by containerPort, $patch delete.
    let smp = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "registry.example/app:2", "env": [{"name": "B", "value": "2"}],
         "ports": [{"containerPort": 9090}]},
        {"name": "side", "$patch": "delete"},
    ]}}}});
    let after = within("strategic", api.patch("d", &p, &Patch::Strategic(smp)))
        .await
        .expect("patched");
    let v = serde_json::to_value(&after).expect("json");
    let cs = &v["spec"]["template"]["spec"]["containers"];
    assert_eq!(cs.as_array().map(Vec::len), Some(1), "{cs}");
    assert_eq!(cs[0]["image"], "registry.example/app:2");
    let env_names: Vec<&str> = cs[0]["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str())
        .collect();
    // New items go first (kube-apiserver's strategic merge order).
    assert_eq!(env_names, ["B", "A"]);
    let ports: Vec<i64> = cs[0]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["containerPort"].as_i64())
        .collect();
    assert_eq!(ports, [9090, 8080]);
    assert_eq!(after.metadata.generation, Some(2));
    // JSON patch: test + replace; a failed test is 422 Invalid.
    let jp: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/replicas", "value": 0},
        {"op": "replace", "path": "/spec/replicas", "value": 0},
        {"op": "add", "path": "/metadata/labels", "value": {"patched": "yes"}},
    ]))
    .expect("json patch");
    let after = within("json patch", api.patch("d", &p, &Patch::<()>::Json(jp)))
        .await
        .expect("patched");
    assert_eq!(
        after
            .metadata
            .labels
            .and_then(|l| l.get("patched").cloned())
            .as_deref(),
        Some("yes")
    );
    assert_eq!(after.metadata.generation, Some(2), "labels are not spec");
    let bad: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/spec/replicas", "value": 5}]))
            .expect("json patch");
    let r = within("failed test op", api.patch("d", &p, &Patch::<()>::Json(bad))).await;
    assert_eq!(api_error(r), (422, "Invalid".into()));
    e.done().await;
}

#[tokio::test]
async fn server_side_apply_tracks_field_managers_and_conflicts() {
    let e = env().await;
    let api = e.cms();
    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1", "b": "1"}});
    let first = within(
        "apply",
        api.patch("ssa", &PatchParams::apply("mgr-a"), &Patch::Apply(&applied)),
    )
    .await
    .expect("applied");
    assert_eq!(
        managers(&first.metadata),
        [("mgr-a".to_owned(), "Apply".to_owned())]
    );
    let mf = &first.metadata.managed_fields.as_ref().expect("managed fields")[0];
    assert_eq!(mf.fields_type.as_deref(), Some("FieldsV1"));
    assert_eq!(mf.api_version.as_deref(), Some("v1"));
    assert!(mf.time.is_some());
    let f = mf.fields_v1.as_ref().map(|f| f.0.clone()).expect("fieldsV1");
    assert!(
        f["f:data"]["f:a"].is_object() && f["f:data"]["f:b"].is_object(),
        "{f}"
    );
    // Another manager changes data.a with a merge patch: an Update entry.
    let other = PatchParams {
        field_manager: Some("mgr-b".into()),
        ..PatchParams::default()
    };
    let changed = within(
        "merge by b",
        api.patch("ssa", &other, &Patch::Merge(json!({"data": {"a": "2"}}))),
    )
    .await
    .expect("patched");
    assert!(managers(&changed.metadata).contains(&("mgr-b".to_owned(), "Update".to_owned())));
    // Re-applying a's value conflicts, naming b and the field.
    let r = within(
        "conflicting apply",
        api.patch("ssa", &PatchParams::apply("mgr-a"), &Patch::Apply(&applied)),
    )
    .await;
    let (code, reason, message) = api_error_full(r);
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    assert!(
        message.contains("conflict with \"mgr-b\"") && message.contains(".data.a"),
        "{message}"
    );
    // Forced, a takes the field back.
    let forced = within(
        "forced apply",
        api.patch(
            "ssa",
            &PatchParams::apply("mgr-a").force(),
            &Patch::Apply(&applied),
        ),
    )
    .await
    .expect("forced");
    assert_eq!(
        forced.data.as_ref().and_then(|d| d.get("a")).map(String::as_str),
        Some("1")
    );
    assert_eq!(
        managers(&forced.metadata),
        [("mgr-a".to_owned(), "Apply".to_owned())]
    );
    // Dropping a field from the applied configuration removes it.
    let less =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"a": "1"}});
    let after = within(
        "apply less",
        api.patch("ssa", &PatchParams::apply("mgr-a"), &Patch::Apply(&less)),
    )
    .await
    .expect("applied");
    assert_eq!(
        after.data.map(|d| d.into_keys().collect::<Vec<_>>()),
        Some(vec!["a".to_owned()])
    );
    e.done().await;
}

#[tokio::test]
async fn namespace_deletion_terminates_then_removes_it() {
    let e = env().await;
    let api = e.cms();
    let mut held = cm("held", json!({}));
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    within("create held", api.create(&PostParams::default(), &held))
        .await
        .expect("created");
    within(
        "create free",
        api.create(&PostParams::default(), &cm("free", json!({}))),
    )
    .await
    .expect("created");
    let nss: Api<Namespace> = Api::all(e.client.clone());
    within("delete ns", nss.delete(&e.ns, &DeleteParams::default()))
        .await
        .expect("delete accepted");
    let ns = within("get ns", nss.get(&e.ns)).await.expect("terminating ns");
    assert!(ns.metadata.deletion_timestamp.is_some());
    assert_eq!(ns.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));
    let r = within(
        "create in terminating",
        api.create(&PostParams::default(), &cm("late", json!({}))),
    )
    .await;
    let (code, reason, message) = api_error_full(r);
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert!(message.contains("because it is being terminated"), "{message}");
    poll("free deleted", || async {
        api.get_opt("free").await.ok().flatten().is_none().then_some(())
    })
    .await;
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
    poll("namespace gone", || async {
        nss.get_opt(&e.ns).await.ok().flatten().is_none().then_some(())
    })
    .await;
    e.done().await;
}

/// Simulator only: the bookmark interval is a simulator setting.
#[tokio::test]
async fn sim_idle_watches_get_periodic_bookmarks() {
    let sim = Simulator::new();
    let c = client(&sim);
    create_namespace_a(&c).await;
    sim.set_bookmark_interval(Duration::from_millis(200));
    let api = Api::<ConfigMap>::namespaced(c, "a");
    let with = WatchParams {
        bookmarks: true,
        ..WatchParams::default().timeout(1)
    };
    let events: Vec<_> = within("watch", api.watch(&with, "0"))
        .await
        .expect("watch")
        .collect()
        .await;
    let bookmarks = events
        .iter()
        .filter(|e| matches!(e, Ok(WatchEvent::Bookmark(_))))
        .count();
    assert!(
        (3..=7).contains(&bookmarks),
        "expected the initial-events-end and ~4 periodic bookmarks: {events:?}"
    );
}

/// `o` without what differs between servers and runs (uid, resourceVersion, timestamps,
/// managedFields, cluster IPs); the object's uid and the test namespace read `UID` and `NS`.
fn comparable(o: &serde_json::Value, ns: &str) -> serde_json::Value {
    fn walk(v: &mut serde_json::Value, uid: &str, ns: &str) {
        match v {
            serde_json::Value::String(s) if !uid.is_empty() && s == uid => *s = "UID".into(),
            serde_json::Value::String(s) if s == ns => *s = "NS".into(),
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, uid, ns)),
            serde_json::Value::Object(m) => m.values_mut().for_each(|x| walk(x, uid, ns)),
            _ => {}
        }
    }
    let mut o = o.clone();
    let uid = o["metadata"]["uid"].as_str().unwrap_or_default().to_owned();
    if let Some(m) = o["metadata"].as_object_mut() {
        for k in ["uid", "resourceVersion", "creationTimestamp", "managedFields"] {
            m.remove(k);
        }
    }
    if let Some(s) = o.get_mut("spec").and_then(serde_json::Value::as_object_mut) {
        for k in ["clusterIP", "clusterIPs"] {
            s.remove(k);
        }
    }
    walk(&mut o, &uid, ns);
    o
}

/// Creates `body` (namespaced unless `cluster`) and checks what the server returns, and then
/// reads back, against `want` (as kube-apiserver v1.36.2 returned it; see [`comparable`]).
async fn assert_defaults(
    e: &Env,
    plural: &str,
    body: serde_json::Value,
    cluster: bool,
    want: serde_json::Value,
) {
    let api_version = body["apiVersion"].as_str().expect("apiVersion").to_owned();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let kind = body["kind"].as_str().expect("kind").to_owned();
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, &kind), plural);
    let api = dyn_api(&e.client, &ar, (!cluster).then_some(e.ns.as_str()));
    let obj: DynamicObject = serde_json::from_value(body).expect("object");
    let name = obj.metadata.name.clone().expect("name");
    let made = within("create", api.create(&PostParams::default(), &obj))
        .await
        .expect("created");
    let made = serde_json::to_value(&made).expect("json");
    assert_eq!(comparable(&made, &e.ns), want, "{kind} as created");
    let got = serde_json::to_value(within("get", api.get(&name)).await.expect("get")).expect("json");
    assert_eq!(comparable(&got, &e.ns), want, "{kind} as read");
    if cluster {
        within("delete", api.delete(&name, &DeleteParams::default()))
            .await
            .expect("deleted");
    }
}

fn pod_template(labels: serde_json::Value, containers: serde_json::Value) -> serde_json::Value {
    json!({"metadata": {"labels": labels}, "spec": {"containers": containers}})
}

/// The container of [`pod_template`]s as kube-apiserver defaults it.
fn defaulted_container(name: &str, image: &str, pull: &str, ports: serde_json::Value) -> serde_json::Value {
    let mut c = json!({"name": name, "image": image, "imagePullPolicy": pull, "resources": {},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"});
    if !ports.is_null() {
        c["ports"] = ports;
    }
    c
}

fn defaulted_pod_spec(restart: &str, containers: serde_json::Value) -> serde_json::Value {
    json!({"containers": containers, "dnsPolicy": "ClusterFirst", "restartPolicy": restart,
        "schedulerName": "default-scheduler", "securityContext": {}, "terminationGracePeriodSeconds": 30})
}

#[tokio::test]
async fn server_side_defaults_of_deployments() {
    let e = env().await;
    let body = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {}},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": pod_template(json!({"app": "d"}),
            json!([{"name": "app", "image": "registry.example/app:1", "ports": [{"containerPort": 8080}]},
                   {"name": "side", "image": "registry.example/side", "tty": false}]))}});
    let want = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "NS", "generation": 1},
        "spec": {"replicas": 1, "progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "d"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": defaulted_pod_spec("Always", json!([
                defaulted_container("app", "registry.example/app:1", "IfNotPresent",
                    json!([{"containerPort": 8080, "protocol": "TCP"}])),
                defaulted_container("side", "registry.example/side", "Always", serde_json::Value::Null)]))}},
        "status": {}});
    assert_defaults(&e, "deployments", body, false, want).await;
    e.done().await;
}

#[tokio::test]
async fn server_side_defaults_of_daemonsets_and_statefulsets() {
    let e = env().await;
    let containers = json!([{"name": "c", "image": "img:1", "ports": [{"containerPort": 80}]}]);
    let defaulted = json!([defaulted_container(
        "c",
        "img:1",
        "IfNotPresent",
        json!([{"containerPort": 80, "protocol": "TCP"}])
    )]);
    let body = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": pod_template(json!({"app": "x"}), containers.clone())}});
    let want = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "NS", "generation": 1,
            "annotations": {"deprecated.daemonset.template.generation": "1"}},
        "spec": {"revisionHistoryLimit": 10, "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": defaulted_pod_spec("Always", defaulted.clone())},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}},
        "status": {"currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberMisscheduled": 0, "numberReady": 0}});
    assert_defaults(&e, "daemonsets", body, false, want).await;
    let body = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "ss"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "serviceName": "svc",
            "template": pod_template(json!({"app": "x"}), containers)}});
    let want = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "ss", "namespace": "NS", "generation": 1},
        "spec": {"replicas": 1, "podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10,
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "selector": {"matchLabels": {"app": "x"}}, "serviceName": "svc",
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": defaulted_pod_spec("Always", defaulted)},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}},
        "status": {"availableReplicas": 0, "replicas": 0}});
    assert_defaults(&e, "statefulsets", body, false, want).await;
    e.done().await;
}

#[tokio::test]
async fn server_side_defaults_of_jobs() {
    let e = env().await;
    let body = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "img:latest"}]}}}});
    let labels = json!({"batch.kubernetes.io/controller-uid": "UID", "batch.kubernetes.io/job-name": "job",
        "controller-uid": "UID", "job-name": "job"});
    let want = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "job", "namespace": "NS", "generation": 1, "labels": labels},
        "spec": {"backoffLimit": 6, "completionMode": "NonIndexed", "completions": 1, "manualSelector": false,
            "parallelism": 1, "podReplacementPolicy": "TerminatingOrFailed", "suspend": false,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "UID"}},
            "template": {"metadata": {"labels": labels}, "spec": defaulted_pod_spec("Never",
                json!([defaulted_container("c", "img:latest", "Always", serde_json::Value::Null)]))}},
        "status": {}});
    assert_defaults(&e, "jobs", body, false, want).await;
    e.done().await;
}

#[tokio::test]
async fn server_side_defaults_of_services() {
    let e = env().await;
    let body = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
        "spec": {"selector": {"app": "x"}, "ports": [{"name": "https", "port": 443}, {"name": "m", "port": 8443, "targetPort": "metrics"}]}});
    let want = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "NS"},
        "spec": {"internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 443},
                      {"name": "m", "port": 8443, "protocol": "TCP", "targetPort": "metrics"}],
            "selector": {"app": "x"}, "sessionAffinity": "None", "type": "ClusterIP"},
        "status": {"loadBalancer": {}}});
    assert_defaults(&e, "services", body, false, want).await;
    e.done().await;
}

#[tokio::test]
async fn server_side_defaults_of_priority_classes_secrets_and_namespaces() {
    let e = env().await;
    let name = format!("cvo-conf-{}", suffix());
    let body = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": name}, "value": 1000, "globalDefault": false});
    // globalDefault: false comes back absent (a zero value); generation is kept.
    let want = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": name, "generation": 1}, "value": 1000, "preemptionPolicy": "PreemptLowerPriority"});
    assert_defaults(&e, "priorityclasses", body, true, want).await;
    let body =
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"a": "b"}});
    let want = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "NS"},
        "data": {"a": "Yg=="}, "type": "Opaque"});
    assert_defaults(&e, "secrets", body, false, want).await;
    let ns = within("get ns", Api::<Namespace>::all(e.client.clone()).get(&e.ns))
        .await
        .expect("namespace");
    let ns = comparable(&serde_json::to_value(&ns).expect("json"), &e.ns);
    assert_eq!(
        ns,
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "NS", "labels": {"kubernetes.io/metadata.name": "NS"}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
    );
    e.done().await;
}

/// Sends `body` with `method` to `path` (a raw request, so the body is exactly what kube-apiserver
/// sees); returns the status code and the JSON answer.
async fn raw(e: &Env, method: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(kube::client::Body::from(body.as_bytes().to_vec()))
        .expect("request");
    let resp = within("raw request", e.client.send(req)).await.expect("response");
    let code = resp.status().as_u16();
    let bytes = within("body", http_body_util::BodyExt::collect(resp.into_body()))
        .await
        .expect("body")
        .to_bytes();
    (code, serde_json::from_slice(&bytes).expect("json answer"))
}

/// `(code, reason, message)` of a Status answer.
fn status_of(answer: &(u16, serde_json::Value)) -> (u16, &str, &str) {
    let s = &answer.1;
    (
        answer.0,
        s["reason"].as_str().unwrap_or_default(),
        s["message"].as_str().unwrap_or_default(),
    )
}

#[tokio::test]
async fn custom_resources_need_api_version_and_kind() {
    let e = env().await;
    let ar = e.widget_crd("Namespaced").await;
    let path = format!("/apis/{}/v1/namespaces/{}/widgets", ar.group, e.ns);
    let av = &ar.api_version;
    let r = raw(
        &e,
        "POST",
        &path,
        r#"{"metadata":{"name":"w"},"spec":{"size":1}}"#,
    )
    .await;
    assert_eq!(
        status_of(&r),
        (
            400,
            "BadRequest",
            "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{\"metadata\":{\"name\":\"w\"},\"spec\":{\"size\":1}}' ({\"metadata\":{\"name\":\"w\"},\"spec ...)"
        )
    );
    let r = raw(&e, "POST", &path, r#"{"kind":"Widget","metadata":{"name":"w"}}"#).await;
    let want = format!("the API version in the data () does not match the expected API version ({av})");
    assert_eq!(status_of(&r), (400, "BadRequest", want.as_str()));
    let other = format!("{}/v2", ar.group);
    let r = raw(
        &e,
        "POST",
        &path,
        &format!(r#"{{"apiVersion":"{other}","kind":"Widget","metadata":{{"name":"w"}}}}"#),
    )
    .await;
    let want =
        format!("the API version in the data ({other}) does not match the expected API version ({av})");
    assert_eq!(status_of(&r), (400, "BadRequest", want.as_str()));
    let r = raw(
        &e,
        "POST",
        &path,
        &format!(r#"{{"apiVersion":"{av}","kind":"Gadget","metadata":{{"name":"w"}}}}"#),
    )
    .await;
    let want = format!(
        "Gadget.{} \"w\" is invalid: kind: Invalid value: \"Gadget\": must be Widget",
        ar.group
    );
    assert_eq!(status_of(&r), (422, "Invalid", want.as_str()));
    assert_eq!(
        r.1["details"],
        json!({"name": "w", "group": ar.group, "kind": "Gadget", "causes": [
            {"reason": "FieldValueInvalid", "message": "Invalid value: \"Gadget\": must be Widget", "field": "kind"}]})
    );
    // Created properly, a replace (main resource or status) needs the same, and a
    // resourceVersion: custom resources allow no unconditional update.
    let ok =
        format!(r#"{{"apiVersion":"{av}","kind":"Widget","metadata":{{"name":"w"}},"spec":{{"size":1}}}}"#);
    assert_eq!(raw(&e, "POST", &path, &ok).await.0, 201);
    let r = raw(
        &e,
        "PUT",
        &format!("{path}/w/status"),
        r#"{"metadata":{"name":"w"},"status":{}}"#,
    )
    .await;
    assert_eq!((r.0, r.1["reason"].as_str()), (400, Some("BadRequest")));
    let r = raw(&e, "PUT", &format!("{path}/w"), &ok).await;
    let want = format!(
        "widgets.{} \"w\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update",
        ar.group
    );
    assert_eq!(status_of(&r), (422, "Invalid", want.as_str()));
    assert_eq!(r.1["details"]["kind"], "widgets");
    // Built-in kinds take a body without them (the endpoint says which kind it is) but refuse
    // another kind.
    let cms = format!("/api/v1/namespaces/{}/configmaps", e.ns);
    let r = raw(&e, "POST", &cms, r#"{"metadata":{"name":"c"},"data":{"a":"b"}}"#).await;
    assert_eq!(
        (r.0, &r.1["kind"], &r.1["apiVersion"]),
        (201, &json!("ConfigMap"), &json!("v1"))
    );
    let r = raw(
        &e,
        "PUT",
        &format!("{cms}/c"),
        r#"{"metadata":{"name":"c"},"data":{"a":"c"}}"#,
    )
    .await;
    assert_eq!((r.0, &r.1["data"]["a"]), (200, &json!("c")));
    let r = raw(
        &e,
        "POST",
        &cms,
        r#"{"apiVersion":"v1","kind":"Foo","metadata":{"name":"d"}}"#,
    )
    .await;
    let (code, reason, message) = status_of(&r);
    assert_eq!((code, reason), (400, "BadRequest"));
    assert!(
        message.starts_with("Foo in version \"v1\" cannot be handled as a ConfigMap: "),
        "{message}"
    );
    e.done().await;
}

fn gadget_schema() -> serde_json::Value {
    json!({"type": "object", "properties": {
        "spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "integer", "minimum": 0},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "label": {"type": "string", "nullable": true},
            "on": {"type": "boolean"},
            "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "port": {"x-kubernetes-int-or-string": true},
            "nested": {"type": "object", "properties": {"a": {"type": "string", "default": "dflt"}}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}}}},
        "status": {"type": "object", "required": ["phase", "history"], "properties": {
            "phase": {"type": "string"},
            "history": {"type": "array", "items": {"type": "object",
                "required": ["state", "completionTime"], "properties": {
                    "state": {"type": "string"},
                    "completionTime": {"type": "string", "format": "date-time", "nullable": true}}}}}}}})
}

/// The causes of an Invalid answer as sorted `field: message` lines (kube-apiserver lists
/// them in no fixed order).
fn causes(answer: &(u16, serde_json::Value)) -> Vec<String> {
    let mut v: Vec<String> = answer.1["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{} {}: {}",
                c["reason"].as_str().unwrap_or_default(),
                c["field"].as_str().unwrap_or_default(),
                c["message"].as_str().unwrap_or_default()
            )
        })
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn custom_resources_are_pruned_defaulted_and_validated_against_their_schema() {
    let e = env().await;
    let ar = e.crd_with_schema("Namespaced", gadget_schema()).await;
    let path = format!("/apis/{}/v1/namespaces/{}/widgets", ar.group, e.ns);
    let av = ar.api_version.clone();
    let body = |name: &str, spec: serde_json::Value| -> String {
        json!({"apiVersion": av, "kind": "Widget", "metadata": {"name": name}, "spec": spec, "extra": 1})
            .to_string()
    };
    // Unknown fields pruned, nulls dropped unless nullable, defaults filled in.
    let r = raw(
        &e,
        "POST",
        &path,
        &body(
            "g1",
            json!({"size": 1, "unknown": 2, "free": {"x": {"y": 1}},
        "nested": {"b": 2}, "label": null, "mode": null, "port": "http"}),
        ),
    )
    .await;
    assert_eq!(r.0, 201, "{}", r.1);
    assert_eq!(r.1.get("extra"), None);
    assert_eq!(
        r.1["spec"],
        json!({"size": 1, "free": {"x": {"y": 1}}, "nested": {"a": "dflt"}, "label": null, "port": "http"})
    );
    // One bad field: its message; more: all of them.
    let r = raw(&e, "POST", &path, &body("g2", json!({}))).await;
    let want = format!("Widget.{} \"g2\" is invalid: spec.size: Required value", ar.group);
    assert_eq!(status_of(&r), (422, "Invalid", want.as_str()));
    assert_eq!(causes(&r), ["FieldValueRequired spec.size: Required value"]);
    let r = raw(
        &e,
        "POST",
        &path,
        &body(
            "g3",
            json!({"size": "big", "mode": "c", "on": "yes",
        "tags": [1, "a", "b"], "nested": "s", "m": {"k": 1}, "port": 1.5}),
        ),
    )
    .await;
    assert_eq!((r.0, r.1["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        causes(&r),
        [
            "FieldValueNotSupported spec.mode: Unsupported value: \"c\": supported values: \"a\", \"b\"",
            "FieldValueTooMany spec.tags: Too many: 3: must have at most 2 items",
            "FieldValueTypeInvalid spec.m.k: Invalid value: \"integer\": spec.m.k in body must be of type string: \"integer\"",
            "FieldValueTypeInvalid spec.nested: Invalid value: \"string\": spec.nested in body must be of type object: \"string\"",
            "FieldValueTypeInvalid spec.on: Invalid value: \"string\": spec.on in body must be of type boolean: \"string\"",
            "FieldValueTypeInvalid spec.port: Invalid value: \"number\": spec.port in body must be of type integer,string: \"number\"",
            "FieldValueTypeInvalid spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
            "FieldValueTypeInvalid spec.tags[0]: Invalid value: \"integer\": spec.tags[0] in body must be of type string: \"integer\"",
        ]
    );
    let r = raw(&e, "POST", &path, &body("g3", json!({"size": -1}))).await;
    assert_eq!(
        causes(&r),
        [
            "FieldValueInvalid spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0"
        ]
    );
    // The status subresource is validated too, its messages relative to status; a required
    // key that is null is present.
    let g1 = format!("{path}/g1");
    let rv = raw(&e, "GET", &g1, "").await.1["metadata"]["resourceVersion"].clone();
    let status = |s: serde_json::Value| -> String {
        json!({"apiVersion": av, "kind": "Widget", "metadata": {"name": "g1", "resourceVersion": rv}, "status": s}).to_string()
    };
    let r = raw(&e, "PUT", &format!("{g1}/status"), &status(json!({"phase": "x"}))).await;
    let want = format!(
        "Widget.{} \"g1\" is invalid: status.history: Required value",
        ar.group
    );
    assert_eq!(status_of(&r), (422, "Invalid", want.as_str()));
    let r = raw(
        &e,
        "PUT",
        &format!("{g1}/status"),
        &status(json!({"phase": 5, "history": [
        {"state": "a"}, {"state": "b", "completionTime": "yesterday"}]})),
    )
    .await;
    assert_eq!(
        causes(&r),
        [
            "FieldValueRequired status.history[0].completionTime: Required value",
            "FieldValueTypeInvalid status.history[1].completionTime: Invalid value: \"yesterday\": history[1].completionTime in body must be of type date-time: \"yesterday\"",
            "FieldValueTypeInvalid status.phase: Invalid value: \"integer\": phase in body must be of type string: \"integer\"",
        ]
    );
    let r = raw(
        &e,
        "PUT",
        &format!("{g1}/status"),
        &status(json!({"phase": "x", "junk": 1,
        "history": [{"state": "a", "completionTime": null}]})),
    )
    .await;
    assert_eq!(r.0, 200, "{}", r.1);
    assert_eq!(
        r.1["status"],
        json!({"phase": "x", "history": [{"state": "a", "completionTime": null}]})
    );
    // Patches are validated as well.
    let api = dyn_api(&e.client, &ar, Some(&e.ns));
    let bad = within(
        "bad merge patch",
        api.patch(
            "g1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": "x"}})),
        ),
    )
    .await;
    assert_eq!(api_error(bad), (422, "Invalid".into()));
    e.done().await;
}

fn established(crd: &serde_json::Value) -> bool {
    crd["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    })
}

fn widget_crd_body(group: &str) -> serde_json::Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {"group": group, "scope": "Cluster", "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}})
}

/// A created CRD is not established yet in the create answer (kube-apiserver's controllers
/// accept its names and establish it afterwards); it is soon, and then its kind is served.
#[tokio::test]
async fn crd_create_answer_is_not_yet_established() {
    let e = env().await;
    let group = format!("t{}.cvo.example.com", suffix());
    let r = raw(
        &e,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &widget_crd_body(&group).to_string(),
    )
    .await;
    e.crds.lock().expect("crds").push(format!("widgets.{group}"));
    assert_eq!(r.0, 201, "{}", r.1);
    assert_eq!(
        r.1["status"],
        json!({"conditions": null, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]})
    );
    let name = format!("widgets.{group}");
    let crds = crd_api(&e.client);
    poll("established", || async {
        let c = crds.get(&name).await.ok()?;
        established(&serde_json::to_value(&c).ok()?).then_some(())
    })
    .await;
    let path = format!("/apis/{group}/v1/widgets");
    poll("served", || async {
        (raw(&e, "GET", &path, "").await.0 == 200).then_some(())
    })
    .await;
    e.done().await;
}

/// Simulator only (the delay is a simulator setting): with an establish delay, a new CRD's
/// kind is not served, nor in discovery, until it is established; a watcher of CRDs sees the
/// establishment without any other request.
#[tokio::test]
async fn sim_crd_establish_delay_serves_the_kind_later() {
    let sim = Simulator::new();
    sim.set_crd_establish_delay(Duration::from_millis(300));
    let c = client(&sim);
    let crds = crd_api(&c);
    let rv = within("list", crds.list(&ListParams::default()))
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("rv");
    let mut stream = within("watch", crds.watch(&WatchParams::default().timeout(10), &rv))
        .await
        .expect("watch")
        .boxed();
    let obj: DynamicObject = serde_json::from_value(widget_crd_body("w.example.com")).expect("crd");
    let made = within("create", crds.create(&PostParams::default(), &obj))
        .await
        .expect("created");
    assert!(!established(&serde_json::to_value(&made).expect("json")));
    let gvk = GroupVersionKind::gvk("w.example.com", "v1", "Widget");
    let widgets: Api<DynamicObject> =
        Api::all_with(c.clone(), &ApiResource::from_gvk_with_plural(&gvk, "widgets"));
    let r = within("list too early", widgets.list(&ListParams::default())).await;
    assert_eq!(api_error(r), (404, "NotFound".into()));
    let groups = within("groups", c.list_api_groups()).await.expect("/apis");
    assert!(!groups.groups.iter().any(|g| g.name == "w.example.com"));
    let started = std::time::Instant::now();
    loop {
        match within("event", stream.try_next()).await {
            // (The store is empty: the watch from "0" starts with an initial-events-end bookmark.)
            Ok(Some(WatchEvent::Added(_) | WatchEvent::Bookmark(_))) => {}
            Ok(Some(WatchEvent::Modified(o))) if established(&serde_json::to_value(&o).expect("json")) => {
                break;
            }
            other => panic!("expected the CRD established, got {other:?}"),
        }
    }
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "{:?}",
        started.elapsed()
    );
    within("list", widgets.list(&ListParams::default()))
        .await
        .expect("served once established");
    let groups = within("groups", c.list_api_groups()).await.expect("/apis");
    assert!(groups.groups.iter().any(|g| g.name == "w.example.com"));
}

/// Names of a list answer's items.
fn item_names(list: &serde_json::Value) -> Vec<&str> {
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|o| o["metadata"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn lists_honour_resource_version_match() {
    let e = env().await;
    let api = e.cms();
    let p = PostParams::default();
    let a = within("create a", api.create(&p, &cm("a", json!({}))))
        .await
        .expect("a");
    let rv_a = a.metadata.resource_version.clone().expect("rv of a");
    within("create b", api.create(&p, &cm("b", json!({}))))
        .await
        .expect("b");
    let mut changed = a.clone();
    changed.data = Some([("k".to_owned(), "later".to_owned())].into());
    within("replace a", api.replace("a", &p, &changed))
        .await
        .expect("a replaced");
    let base = format!("/api/v1/namespaces/{}/configmaps", e.ns);

    // Exact: the list as it was at a's creation, answered at that version.
    let exact = raw(
        &e,
        "GET",
        &format!("{base}?resourceVersion={rv_a}&resourceVersionMatch=Exact"),
        "",
    )
    .await;
    assert_eq!(exact.0, 200, "{}", exact.1);
    assert_eq!(exact.1["metadata"]["resourceVersion"], json!(rv_a));
    assert_eq!(item_names(&exact.1), ["a"]);
    assert_ne!(exact.1["items"][0]["data"]["k"], "later", "a before its change");
    // NotOlderThan: the latest state.
    let newer = raw(
        &e,
        "GET",
        &format!("{base}?resourceVersion={rv_a}&resourceVersionMatch=NotOlderThan"),
        "",
    )
    .await;
    assert_eq!(newer.0, 200, "{}", newer.1);
    assert_eq!(item_names(&newer.1), ["a", "b"]);
    let newer_rv: u64 = newer.1["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("rv");
    assert!(newer_rv > rv_a.parse::<u64>().expect("numeric rv"));

    // Status bodies of invalid list options, as kube-apiserver words them.
    let no_rv = raw(&e, "GET", &format!("{base}?resourceVersionMatch=Exact"), "").await;
    assert_eq!(no_rv.0, 422);
    assert_eq!(
        no_rv.1["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: \
         resourceVersionMatch is forbidden unless resourceVersion is provided"
    );
    assert_eq!(no_rv.1["reason"], "Invalid");
    assert_eq!(no_rv.1["details"]["causes"][0]["reason"], "FieldValueForbidden");
    assert_eq!(no_rv.1["details"]["kind"], "ListOptions");
    let bogus = raw(
        &e,
        "GET",
        &format!("{base}?resourceVersion={rv_a}&resourceVersionMatch=Bogus"),
        "",
    )
    .await;
    assert_eq!(bogus.0, 422);
    assert_eq!(
        bogus.1["details"]["causes"][0]["reason"],
        "FieldValueNotSupported"
    );
    assert_eq!(
        bogus.1["details"]["causes"][0]["message"],
        "Unsupported value: \"Bogus\": supported values: \"Exact\", \"NotOlderThan\", \"\""
    );

    // Once compacted (forced on the simulator; etcd compacts every 5 minutes, so on a real
    // server only a version from before the last compaction shows it), Exact is 410 Expired.
    if let Some(sim) = &e.sim {
        sim.compact();
        let gone = raw(
            &e,
            "GET",
            &format!("{base}?resourceVersion={rv_a}&resourceVersionMatch=Exact"),
            "",
        )
        .await;
        assert_eq!(
            (gone.0, gone.1["reason"].as_str(), gone.1["message"].as_str()),
            (
                410,
                Some("Expired"),
                Some("The resourceVersion for the provided list is too old.")
            )
        );
    }
    e.done().await;
}

#[tokio::test]
async fn a_watch_without_a_version_ends_its_initial_events_with_a_bookmark() {
    let e = env().await;
    let api = e.cms();
    let p = PostParams::default();
    for n in ["a", "b"] {
        within("create", api.create(&p, &cm(n, json!({}))))
            .await
            .expect("created");
    }
    // The bookmark carries the version the initial state was read at: no older than a list
    // taken before the watch, no newer than one taken after it. On a shared real server other
    // tests write meanwhile, so the two lists may differ; on a private simulator they are equal
    // and this pins the bookmark exactly.
    let before = list_rv(&api).await;
    let params = WatchParams {
        bookmarks: true,
        ..WatchParams::default().timeout(1)
    };
    let mut stream = within("watch", api.watch(&params, ""))
        .await
        .expect("watch")
        .boxed();
    let mut events = Vec::new();
    while events.len() < 3 {
        match within("event", stream.next()).await {
            Some(ev) => events.push(ev),
            None => break,
        }
    }
    let after = list_rv(&api).await;
    let summary = event_summary(&events);
    assert_eq!(
        summary
            .iter()
            .map(|(t, n, end)| (t.as_str(), if t == "BOOKMARK" { "" } else { n.as_str() }, *end))
            .collect::<Vec<_>>(),
        [
            ("ADDED", "a", false),
            ("ADDED", "b", false),
            ("BOOKMARK", "", true)
        ]
    );
    let num = |rv: &str| rv.parse::<u64>().expect("numeric resourceVersion");
    let bookmark = num(&summary[2].1);
    assert!(
        (num(&before)..=num(&after)).contains(&bookmark),
        "bookmark at {bookmark}, lists at {before} and {after}"
    );
    if e.sim.is_some() {
        assert_eq!(bookmark, num(&before), "a private simulator has no other writers");
    }
    e.done().await;
}
