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
