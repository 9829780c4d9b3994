//! Unit tests of the watch caches' hashing, record and verification.

use super::*;
use crate::reconcile::payload::digest::object_digest;

#[test]
fn each_cluster_version_keeps_its_own_record() {
    assert_eq!(record_name("version"), "cvo-verified-manifests");
    assert_eq!(record_name("cv-1a2b"), "cvo-verified-manifests-cv-1a2b");
}

fn id(kind: &str, name: &str) -> ManifestId {
    ManifestId {
        api_version: "v1".into(),
        kind: kind.into(),
        namespace: "ns".into(),
        name: name.into(),
    }
}

#[test]
fn fnv_is_stable_and_separates_parts() {
    assert_eq!(fnv(&[]), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv(&["a"]), 0x089b_e207_b544_f1e4);
    assert_ne!(fnv(&["ab", "c"]), fnv(&["a", "bc"]));
}

#[test]
fn streaming_lists_from_1_34() {
    assert!(streams_lists("1", "36"));
    assert!(streams_lists("1", "34+"));
    assert!(!streams_lists("1", "33"));
    assert!(!streams_lists("", ""));
    assert!(!streams_lists("2", "x"));
}

#[test]
fn manifest_hash_changes_with_the_manifest_and_the_build_inputs() {
    let ctx = ApplyContext::default();
    let a = serde_json::json!({"kind": "ConfigMap", "data": {"k": "1"}});
    let b = serde_json::json!({"kind": "ConfigMap", "data": {"k": "2"}});
    let (da, db) = (object_digest(&a), object_digest(&b));
    assert_eq!(da, object_digest(&a.clone()));
    assert_ne!(da, db);
    assert_ne!(manifest_hash(&ctx, da), manifest_hash(&ctx, db));
    // Streamed as serde_json writes it: the digest of the compact text.
    let mut h = Fnv::new();
    h.bytes(a.to_string().as_bytes());
    assert_eq!(da, h.0);
    // Each input of build_required changes the hash.
    let uid = ApplyContext {
        cluster_version_uid: Some("uid-1".into()),
        ..ApplyContext::default()
    };
    let mut proxy = ApplyContext::default();
    proxy.proxy.http_proxy = "http://proxy:3128".into();
    let lb = ApplyContext {
        internal_lb: Some(("api-int".into(), "6443".into())),
        ..ApplyContext::default()
    };
    let mut tls = ApplyContext::default();
    tls.tls_profile.min_tls_version = Some("VersionTLS13".into());
    for other in [uid, proxy, lb, tls] {
        assert_ne!(manifest_hash(&ctx, da), manifest_hash(&other, da), "{other:?}");
    }
}

#[test]
fn a_manifest_keeps_its_digest() {
    let m = crate::reconcile::payload::Manifest::from_object(
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
        "0000_50_a.yaml",
        0,
    )
    .expect("manifest");
    assert_eq!(m.digest(), object_digest(&m.object()));
    // Equal manifests stay equal whether or not their digest was computed.
    let fresh =
        crate::reconcile::payload::Manifest::from_object(m.object(), "0000_50_a.yaml", 0).expect("manifest");
    assert_eq!(m, fresh);
}

#[test]
fn record_round_trips_and_skips_bad_lines() {
    let mut r = Record::default();
    r.entries.insert(1, (2, "17".into()));
    r.entries.insert(0xffff_ffff_ffff_ffff, (3, "9".into()));
    let text = r.render();
    assert_eq!(
        text,
        "0000000000000001 0000000000000002 17\nffffffffffffffff 0000000000000003 9\n"
    );
    let mut back = Record::default();
    back.parse(&format!("{text}garbage\nzz 01 5\n01 02\n01 02 3 4\n"));
    assert_eq!(back.entries, r.entries);
}

#[test]
fn cacheable_excludes_only_cluster_operators() {
    let co = ManifestId {
        api_version: "config.openshift.io/v1".into(),
        kind: "ClusterOperator".into(),
        namespace: String::new(),
        name: "x".into(),
    };
    let dep = ManifestId {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: "ns".into(),
        name: "d".into(),
    };
    assert!(!cacheable(&co));
    assert!(cacheable(&dep));
    assert!(cacheable(&id("ConfigMap", "c")));
}

#[tokio::test]
async fn verification_needs_same_hash_and_resource_version() {
    let client = Client::new(
        tower::service_fn(|_req: http::Request<kube::client::Body>| async {
            Err::<http::Response<kube::client::Body>, std::io::Error>(std::io::Error::other("no server"))
        }),
        "default",
    );
    let c = WatchCaches::new(client, "version");
    let cm = id("ConfigMap", "c");
    assert!(!c.is_verified(&cm, 7, "10"));
    c.verified(&cm, 7, "10");
    assert!(c.is_verified(&cm, 7, "10"));
    assert!(!c.is_verified(&cm, 8, "10"), "another manifest");
    assert!(!c.is_verified(&cm, 7, "11"), "the object changed");
    assert!(!c.is_verified(&id("ConfigMap", "d"), 7, "10"), "another object");
    c.verified(&cm, 7, "");
    assert!(
        c.is_verified(&cm, 7, "10"),
        "an empty resourceVersion records nothing"
    );
    c.forget(&cm);
    assert!(!c.is_verified(&cm, 7, "10"));
    // Unwatched kinds are unknown.
    let ar = ApiResource::erase::<ConfigMap>(&());
    assert_eq!(c.known(&cm, &ar, true), Known::Unknown);
    assert!(
        c.watched().is_empty(),
        "nothing is watched until a pass names its kinds"
    );
    // A failed save keeps the record dirty for the next pass; a clean one sends nothing.
    c.verified(&cm, 7, "12");
    assert!(!c.save_record().await, "the server is unreachable");
    assert!(lock(&c.record).dirty);
    lock(&c.record).dirty = false;
    assert!(!c.save_record().await);
}
