//! Discovery of kinds without a typed table entry, over a scripted API server: a kind the
//! server lists only a moment after its CRD is asked again (bounded), a kind that never shows
//! fails with `UpdatePayloadResourceTypeMissing`, nothing is cached negatively, and an apply
//! that writes a CRD waits for `Established`.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicUsize, Ordering},
};

use http::{Method, Request, Response, StatusCode};
use kube::{Client, client::Body};
use serde_json::{Value, json};

use super::{Applier, ApplyContext, DISCOVERY_RETRIES, ManifestId};
use crate::reconcile::payload::PayloadState;

/// Requests the fake server saw, as `METHOD path`.
type Seen = Arc<Mutex<Vec<String>>>;

fn reply(code: StatusCode, body: &Value) -> Response<Body> {
    let mut r = Response::new(Body::from(body.to_string().into_bytes()));
    *r.status_mut() = code;
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn not_found() -> Response<Body> {
    reply(
        StatusCode::NOT_FOUND,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "the server could not find the requested resource", "reason": "NotFound", "code": 404}),
    )
}

fn gadget_resources() -> Value {
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "example.com/v1",
           "resources": [{"name": "gadgets", "singularName": "gadget", "namespaced": true, "kind": "Gadget",
                          "verbs": ["get", "list", "create", "update", "delete", "watch"]},
                         {"name": "gadgets/status", "singularName": "", "namespaced": true, "kind": "Gadget",
                          "verbs": ["get", "update"]},
                         {"name": "widgets", "singularName": "widget", "namespaced": false, "kind": "Widget",
                          "verbs": ["get", "list", "create", "update", "delete", "watch"]}]})
}

/// A server where group `example.com/v1` is listed after `hidden_for` discovery requests
/// (never with `usize::MAX`), Gadgets are absent and created on POST, and CRD
/// `gadgets.example.com` becomes `Established` on its second GET.
fn server(hidden_for: usize) -> (Client, Seen) {
    let seen: Seen = Arc::default();
    let discovery = Arc::new(AtomicUsize::new(0));
    let crd_gets = Arc::new(AtomicUsize::new(0));
    let s2 = seen.clone();
    let svc = tower::service_fn(move |req: Request<Body>| {
        let seen = s2.clone();
        let discovery = discovery.clone();
        let crd_gets = crd_gets.clone();
        async move {
            let path = req.uri().path().to_owned();
            let method = req.method().clone();
            seen.lock().expect("lock").push(format!("{method} {path}"));
            let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "gadgets.example.com", "resourceVersion": "1"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                         "names": {"kind": "Gadget", "plural": "gadgets"},
                         "versions": [{"name": "v1", "served": true, "storage": true}]}});
            let r = match (method, path.as_str()) {
                (Method::GET, "/apis/example.com/v1") => {
                    if discovery.fetch_add(1, Ordering::SeqCst) < hidden_for {
                        not_found()
                    } else {
                        reply(StatusCode::OK, &gadget_resources())
                    }
                }
                (Method::GET, "/apis/example.com/v1/namespaces/ns/gadgets/g1") => not_found(),
                (Method::POST, "/apis/example.com/v1/namespaces/ns/gadgets") => reply(
                    StatusCode::CREATED,
                    &json!({"apiVersion": "example.com/v1", "kind": "Gadget",
                            "metadata": {"name": "g1", "namespace": "ns", "resourceVersion": "2"}}),
                ),
                (
                    Method::GET,
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com",
                ) => {
                    if crd_gets.fetch_add(1, Ordering::SeqCst) == 0 {
                        not_found()
                    } else {
                        let mut c = crd;
                        c["status"] = json!({"conditions": [
                            {"type": "NamesAccepted", "status": "True"},
                            {"type": "Established", "status": "True"}]});
                        reply(StatusCode::OK, &c)
                    }
                }
                (Method::POST, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions") => {
                    reply(StatusCode::CREATED, &crd)
                }
                _ => not_found(),
            };
            Ok::<_, std::convert::Infallible>(r)
        }
    });
    (Client::new(svc, "default"), seen)
}

fn gadget() -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1", "namespace": "ns"}})
}

fn count(seen: &Seen, what: &str) -> usize {
    seen.lock().expect("lock").iter().filter(|s| *s == what).count()
}

#[tokio::test]
async fn a_kind_listed_a_moment_late_is_found_by_the_retry() {
    let (client, seen) = server(2);
    let a = Applier::new(client);
    let out = a
        .apply(&ApplyContext::default(), &gadget())
        .await
        .expect("applies");
    assert!(out.wrote);
    assert_eq!(count(&seen, "GET /apis/example.com/v1"), 3);
    assert_eq!(count(&seen, "POST /apis/example.com/v1/namespaces/ns/gadgets"), 1);
}

#[tokio::test]
async fn a_kind_never_listed_fails_after_bounded_retries_and_is_not_cached() {
    let (client, seen) = server(usize::MAX);
    let a = Applier::new(client);
    let err = a
        .apply(&ApplyContext::default(), &gadget())
        .await
        .expect_err("no such kind");
    assert_eq!(err.reason, "UpdatePayloadResourceTypeMissing");
    let tries = usize::try_from(DISCOVERY_RETRIES).expect("small") + 1;
    assert_eq!(count(&seen, "GET /apis/example.com/v1"), tries);
    // No negative cache: the next apply asks again.
    let _ = a.apply(&ApplyContext::default(), &gadget()).await;
    assert_eq!(count(&seen, "GET /apis/example.com/v1"), 2 * tries);
}

#[tokio::test]
async fn concurrent_lookups_and_kinds_of_one_group_version_share_one_request() {
    let (client, seen) = server(0);
    let a = Applier::new(client);
    let ctx = ApplyContext::default();
    let g = gadget();
    let outs = futures::future::join_all((0..8).map(|_| a.apply(&ctx, &g))).await;
    assert!(outs.iter().all(|o| o.as_ref().is_ok_and(|o| o.wrote)), "{outs:?}");
    assert_eq!(count(&seen, "GET /apis/example.com/v1"), 1);
    // Another kind of the same group-version comes from the same document; the status
    // subresource is not taken for the kind.
    let (ar, namespaced) = a
        .resource(
            &ManifestId::of(&json!({"apiVersion": "example.com/v1", "kind": "Widget",
                                           "metadata": {"name": "w"}}))
            .expect("id"),
        )
        .await
        .expect("Widget is listed");
    assert_eq!((ar.plural.as_str(), namespaced), ("widgets", false));
    let (ar, namespaced) = a
        .resource(&ManifestId::of(&gadget()).expect("id"))
        .await
        .expect("Gadget is listed");
    assert_eq!((ar.plural.as_str(), namespaced), ("gadgets", true));
    assert_eq!(count(&seen, "GET /apis/example.com/v1"), 1);
}

#[tokio::test]
async fn creating_a_crd_waits_until_it_is_established() {
    let (client, seen) = server(0);
    let a = Applier::new(client);
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Gadget", "plural": "gadgets"},
                 "versions": [{"name": "v1", "served": true, "storage": true}]}});
    // Initializing: no readiness check, yet the apply returns only once the CRD is Established.
    let ctx = ApplyContext {
        mode: PayloadState::Initializing,
        ..ApplyContext::default()
    };
    let out = a.apply(&ctx, &crd).await.expect("applies");
    assert!(out.wrote);
    let live = out.live.expect("live CRD");
    assert!(super::crd_established(&live), "{live}");
    let crd_path = "GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com";
    // The GET before the create, then the polls until Established.
    assert_eq!(count(&seen, crd_path), 2);
    // Updating mode: the readiness check passes on the object read after the wait.
    let out = a
        .apply(
            &ApplyContext {
                mode: PayloadState::Updating,
                ..ApplyContext::default()
            },
            &gadget(),
        )
        .await;
    assert!(out.expect("the custom resource applies").wrote);
}
