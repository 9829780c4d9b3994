//! Which proxy, if any, carries the Kubernetes API traffic, decided as kubectl decides it
//! (client-go's `rest.Config.Proxy` and Go's `net/http.ProxyFromEnvironment`,
//! `golang.org/x/net/http/httpproxy`):
//!
//! 1. the kubeconfig cluster's `proxy-url`, whatever the server and `NO_PROXY` are;
//! 2. else `HTTPS_PROXY` (or `https_proxy`) for an `https://` server, `HTTP_PROXY` (or
//!    `http_proxy`) for an `http://` one, unless the server is `localhost` or a loopback
//!    address, or `NO_PROXY` (or `no_proxy`) covers it;
//! 3. else a direct connection.
//!
//! kube's own loader reads `HTTPS_PROXY` but matches `NO_PROXY` against the proxy's address
//! rather than the server's and ignores `HTTP_PROXY` and the loopback rule, so
//! [`super::live::connect`] replaces its choice with [`for_server`]'s. Proxy schemes: `http`,
//! `https` (HTTP CONNECT) and `socks5`; a value without a scheme is `http://`, as Go reads it.

use std::net::IpAddr;

/// The proxy the API client uses and where it was configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiProxy {
    /// The proxy URL (`http`, `https` or `socks5` scheme; may carry `user:password@`).
    pub url: http::Uri,
    /// Where it came from: `kubeconfig proxy-url` or the environment variable's name.
    pub from: String,
}

impl ApiProxy {
    /// The URL without credentials, for logs and messages.
    pub fn redacted(&self) -> String {
        redact(&self.url.to_string())
    }
}

/// The proxy schemes the API client supports.
const SCHEMES: [&str; 3] = ["http", "https", "socks5"];

/// Parses a proxy URL as Go's `httpproxy` does (no scheme ⇒ `http://`) and checks its scheme.
///
/// # Errors
/// One line naming `field` (the kubeconfig field or environment variable) and the value with
/// any credentials hidden.
pub fn parse_proxy_url(field: &str, value: &str) -> Result<http::Uri, String> {
    let value = value.trim();
    let text = if value.contains("://") {
        value.to_owned()
    } else {
        format!("http://{value}")
    };
    let shown = redact(value);
    let uri: http::Uri = text
        .parse()
        .map_err(|e| format!("{field} {shown:?}: not a URL ({e})"))?;
    let scheme = uri.scheme_str().unwrap_or_default().to_ascii_lowercase();
    if !SCHEMES.contains(&scheme.as_str()) {
        return Err(format!(
            "{field} {shown:?}: unsupported proxy scheme {scheme:?} (http, https or socks5)"
        ));
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(format!("{field} {shown:?}: no proxy host"));
    }
    Ok(uri)
}

/// The value of the first of `names` that is set and not empty, with its name.
fn first_env(
    env: &dyn Fn(&str) -> Option<String>,
    names: [&'static str; 2],
) -> Option<(&'static str, String)> {
    names
        .into_iter()
        .find_map(|n| env(n).filter(|v| !v.trim().is_empty()).map(|v| (n, v)))
}

/// Checks the proxy environment variables parse, whatever server they would serve: a bad
/// value is an error even before a connection is tried.
///
/// # Errors
/// As [`parse_proxy_url`], naming the variable.
pub fn check_env(env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    for names in [["HTTPS_PROXY", "https_proxy"], ["HTTP_PROXY", "http_proxy"]] {
        if let Some((name, v)) = first_env(env, names) {
            parse_proxy_url(name, &v)?;
        }
    }
    Ok(())
}

/// The proxy for API server `server` (see the module documentation). `proxy_url` is the
/// kubeconfig cluster's `proxy-url` (field name for errors, value); `env` reads an environment
/// variable.
///
/// # Errors
/// A proxy URL that does not parse or has an unsupported scheme, naming its field or variable.
pub fn for_server(
    server: &http::Uri,
    proxy_url: Option<(&str, &str)>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ApiProxy>, String> {
    if let Some((field, value)) = proxy_url.filter(|(_, v)| !v.trim().is_empty()) {
        return Ok(Some(ApiProxy {
            url: parse_proxy_url(field, value)?,
            from: "kubeconfig proxy-url".to_owned(),
        }));
    }
    let names = if server.scheme_str() == Some("http") {
        ["HTTP_PROXY", "http_proxy"]
    } else {
        ["HTTPS_PROXY", "https_proxy"]
    };
    let Some((name, value)) = first_env(env, names) else {
        return Ok(None);
    };
    let url = parse_proxy_url(name, &value)?;
    let host = server.host().unwrap_or_default();
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()) {
        return Ok(None);
    }
    let port = server
        .port_u16()
        .unwrap_or(if server.scheme_str() == Some("http") {
            80
        } else {
            443
        });
    if let Some((_, no_proxy)) = first_env(env, ["NO_PROXY", "no_proxy"])
        && no_proxy_covers(&no_proxy, &host, port)
    {
        return Ok(None);
    }
    Ok(Some(ApiProxy {
        url,
        from: name.to_owned(),
    }))
}

/// Whether the `NO_PROXY` list covers `host` (lowercase, no brackets) on `port`, by Go's
/// `httpproxy` rules: `*` covers everything; an IP address or CIDR covers addresses (any
/// port); `name` covers it and its subdomains, `.name` and `*.name` only subdomains; an entry
/// with `:port` only that port. Empty entries are skipped.
pub fn no_proxy_covers(list: &str, host: &str, port: u16) -> bool {
    let ip = host.parse::<IpAddr>().ok();
    list.split(',')
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| !e.is_empty())
        .any(|entry| {
            if entry == "*" {
                return true;
            }
            if let Some((net, bits)) = entry.split_once('/')
                && let (Ok(net), Ok(bits)) = (net.parse::<IpAddr>(), bits.parse::<u8>())
            {
                return ip.is_some_and(|ip| in_cidr(ip, net, bits));
            }
            let bare = entry.trim_start_matches('[').trim_end_matches(']');
            if let Ok(e) = bare.parse::<IpAddr>() {
                return ip == Some(e);
            }
            let (name, entry_port) = match entry.rsplit_once(':') {
                Some((h, p)) if !h.contains(':') => match p.parse::<u16>() {
                    Ok(p) => (h.trim_start_matches('[').trim_end_matches(']'), Some(p)),
                    Err(_) => return false,
                },
                _ => (entry.as_str(), None),
            };
            if let Ok(e) = name.parse::<IpAddr>() {
                return ip == Some(e) && entry_port.is_none_or(|p| p == port);
            }
            let name = name.strip_prefix('*').unwrap_or(name);
            let matches = match name.strip_prefix('.') {
                Some(domain) => host.ends_with(&format!(".{domain}")),
                None => host == name || host.ends_with(&format!(".{name}")),
            };
            matches && entry_port.is_none_or(|p| p == port)
        })
}

/// Whether `ip` is in `net/bits` (same address family only).
fn in_cidr(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// `url` with the password of any `user:password@` replaced by `***`.
pub fn redact(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").map_or(("", url), |(s, r)| (s, r));
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let user = userinfo.split(':').next().unwrap_or_default();
    let sep = if scheme.is_empty() { "" } else { "://" };
    format!("{scheme}{sep}{user}:***@{host}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
        move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    fn chosen(server: &str, proxy_url: Option<&str>, vars: &[(&str, &str)]) -> Option<String> {
        let server: http::Uri = server.parse().expect("server");
        for_server(&server, proxy_url.map(|v| ("proxy-url", v)), &env(vars))
            .expect("valid")
            .map(|p| format!("{} {}", p.from, p.url))
    }

    #[test]
    fn kubeconfig_proxy_url_wins_and_ignores_no_proxy() {
        let vars = [
            ("HTTPS_PROXY", "http://env:3128"),
            ("NO_PROXY", "api.example.com"),
        ];
        assert_eq!(
            chosen("https://api.example.com:6443", Some("socks5://kc:1080"), &vars).as_deref(),
            Some("kubeconfig proxy-url socks5://kc:1080/")
        );
        assert_eq!(chosen("https://api.example.com:6443", None, &vars), None);
        assert_eq!(
            chosen("https://api.other.com:6443", None, &vars).as_deref(),
            Some("HTTPS_PROXY http://env:3128/")
        );
    }

    #[test]
    fn the_servers_scheme_picks_the_variable_and_loopback_is_direct() {
        let vars = [
            ("https_proxy", "secure:3128"),
            ("HTTP_PROXY", "http://plain:3128"),
        ];
        assert_eq!(
            chosen("https://api.example.com", None, &vars).as_deref(),
            Some("https_proxy http://secure:3128/")
        );
        assert_eq!(
            chosen("http://api.example.com", None, &vars).as_deref(),
            Some("HTTP_PROXY http://plain:3128/")
        );
        for s in [
            "https://127.0.0.1:6443",
            "https://localhost:6443",
            "https://[::1]:6443",
        ] {
            assert_eq!(chosen(s, None, &vars), None, "{s}");
        }
        // An explicit proxy-url is used even for loopback (kubectl does).
        assert!(chosen("https://127.0.0.1:6443", Some("http://p:1"), &vars).is_some());
    }

    #[test]
    fn no_proxy_entries_follow_gos_rules() {
        let cases = [
            ("*", "anything.example", 443, true),
            ("example.com", "example.com", 443, true),
            ("example.com", "api.example.com", 443, true),
            ("example.com", "notexample.com", 443, false),
            (".example.com", "example.com", 443, false),
            (".example.com", "api.example.com", 443, true),
            ("*.example.com", "api.example.com", 443, true),
            ("example.com:6443", "api.example.com", 6443, true),
            ("example.com:6443", "api.example.com", 443, false),
            ("10.0.0.0/16", "10.0.7.1", 443, true),
            ("10.0.0.0/16", "10.1.0.1", 443, false),
            ("fd00::/8", "fd00::2", 443, true),
            ("192.0.2.2", "192.0.2.2", 6443, true),
            ("[fd00::2]", "fd00::2", 6443, true),
            ("a.test,, .svc ,api.example.com", "api.example.com", 443, true),
            ("API.Example.COM", "api.example.com", 443, true),
            ("10.0.0.0/99", "10.0.0.1", 443, false),
        ];
        for (list, host, port, want) in cases {
            assert_eq!(no_proxy_covers(list, host, port), want, "{list:?} {host}:{port}");
        }
    }

    #[test]
    fn bad_proxy_urls_are_one_line_naming_the_field() {
        let server: http::Uri = "https://api.example.com".parse().expect("uri");
        let err = for_server(
            &server,
            Some(("kubeconfig k: cluster \"c\" proxy-url", "ftp://p:21")),
            &env(&[]),
        )
        .expect_err("bad scheme");
        assert_eq!(
            err,
            "kubeconfig k: cluster \"c\" proxy-url \"ftp://p:21\": unsupported proxy scheme \"ftp\" (http, https or socks5)"
        );
        let err = check_env(&env(&[("HTTPS_PROXY", "socks4://user:secret@p:1080")])).expect_err("bad");
        assert_eq!(
            err,
            "HTTPS_PROXY \"socks4://user:***@p:1080\": unsupported proxy scheme \"socks4\" (http, https or socks5)"
        );
        assert!(!err.contains("secret"));
        assert!(
            check_env(&env(&[
                ("HTTP_PROXY", "http://p:3128"),
                ("HTTPS_PROXY", "p:3128")
            ]))
            .is_ok()
        );
    }

    #[test]
    fn credentials_are_redacted() {
        assert_eq!(redact("http://u:pw@p:3128/"), "http://u:***@p:3128/");
        assert_eq!(redact("http://p:3128"), "http://p:3128");
        assert_eq!(redact("u:p@w@host:1"), "u:***@host:1");
    }
}
