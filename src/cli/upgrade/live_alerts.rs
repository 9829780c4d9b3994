//! The cluster's firing alerts for `cvo upgrade recommend` on a live cluster, read where
//! `oc adm upgrade recommend` reads them: the Route `openshift-monitoring/thanos-querier`,
//! `GET https://<status.ingress[].host>/api/v1/alerts` with the user's bearer token (the
//! platform Thanos takes no other credential), trusting the kubeconfig's certificate
//! authorities and the system's, through the API traffic's proxy.
//!
//! Upstream: `pkg/cli/admin/inspectalerts/inspectalerts.go` (`GetAlerts`,
//! `ValidateRESTConfig`) in openshift/oc, whose error texts these are.

use std::time::Duration;

use kube::{
    Api,
    api::{ApiResource, DynamicObject},
};

use crate::{
    assess::alerts::{self, Alerts},
    cluster::live::Connection,
    reconcile::updates::client::{Egress, ProxySettings, http_client},
};

/// Namespace and name of the Route of the platform Thanos querier.
pub const ROUTE: (&str, &str) = ("openshift-monitoring", "thanos-querier");

/// How long the alerts request may take when `--request-timeout` does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest alerts response read (a cluster's alerts are well under 1 MiB).
const MAX_BODY: usize = 16 << 20;

/// Reads the alerts of the cluster of `conn`.
///
/// # Errors
/// Why they could not be read, in oc's words: `no token is currently in use for this
/// session`, or `failed to get alerts from Thanos: ...` (the Route, each host's answer, or a
/// response that is not an alerts document).
pub async fn fetch(conn: &Connection, timeout: Duration) -> Result<Alerts, String> {
    let token = match &conn.http.bearer {
        Some(b) => b.current()?,
        None => return Err("no token is currently in use for this session".into()),
    };
    let body = get_alerts(conn, &token, timeout)
        .await
        .map_err(|e| format!("failed to get alerts from Thanos: {e}"))?;
    alerts::parse(&String::from_utf8_lossy(&body)).map_err(|e| format!("parsing alerts: {e}"))
}

async fn get_alerts(conn: &Connection, token: &str, timeout: Duration) -> Result<Vec<u8>, String> {
    let (ns, name) = ROUTE;
    let ar = ApiResource {
        group: "route.openshift.io".into(),
        version: "v1".into(),
        api_version: "route.openshift.io/v1".into(),
        kind: "Route".into(),
        plural: "routes".into(),
    };
    let routes: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), ns, &ar);
    let route = routes.get(name).await.map_err(|e| match e {
        kube::Error::Api(s) => s.message,
        other => other.to_string(),
    })?;
    let hosts: Vec<String> = route.data["status"]["ingress"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["host"].as_str().map(str::to_owned))
        .collect();
    let client = http_client(&egress(conn)?, timeout)?;
    let mut errors = Vec::new();
    for host in &hosts {
        match checked_get(&client, host, token).await {
            Ok(body) => return Ok(body),
            Err(e) => errors.push(format!("{host}->{e}")),
        }
    }
    Err(match errors.len() {
        0 => format!("the {ns}/{name} Route has no status.ingress host"),
        1 => format!(
            "unable to get /api/v1/alerts from URI in the {ns}/{name} Route: {}",
            errors[0]
        ),
        n => format!(
            "unable to get /api/v1/alerts from any of {n} URIs in the {ns}/{name} Route: [{}]",
            errors.join(", ")
        ),
    })
}

/// The kubeconfig's authorities (added to the system's) and the API traffic's proxy.
fn egress(conn: &Connection) -> Result<Egress, String> {
    use base64::Engine as _;
    let mut pem = Vec::new();
    for der in &conn.http.ca_der {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        pem.extend_from_slice(b"-----BEGIN CERTIFICATE-----\n");
        for line in b64.as_bytes().chunks(64) {
            pem.extend_from_slice(line);
            pem.push(b'\n');
        }
        pem.extend_from_slice(b"-----END CERTIFICATE-----\n");
    }
    if let Some(f) = &conn.http.ca_file {
        pem.extend(std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    Ok(Egress {
        proxy: conn.http.proxy.as_ref().map(|p| ProxySettings {
            https_proxy: Some(p.to_string()),
            ..ProxySettings::default()
        }),
        ca_bundle: (!pem.is_empty()).then_some(pem),
    })
}

async fn checked_get(client: &reqwest::Client, host: &str, token: &str) -> Result<Vec<u8>, String> {
    let url = format!("https://{host}/api/v1/alerts");
    let resp = client
        .get(&url)
        .bearer_auth(token)
        .header(http::header::USER_AGENT, crate::user_agent())
        .send()
        .await
        .map_err(|e| one_line(&e))?;
    let status = resp.status();
    let body = resp.bytes().await.map_err(|e| one_line(&e))?;
    if body.len() > MAX_BODY {
        return Err(format!("response larger than {MAX_BODY} bytes"));
    }
    if status != reqwest::StatusCode::OK {
        return Err(format!("GET status code={}", status.as_u16()));
    }
    Ok(body.to_vec())
}

fn one_line(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    s
}
