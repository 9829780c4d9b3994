//! Registry credentials in the docker config format (`{"auths": {"HOST": {"auth":
//! base64(user:password)}}}`): a `--registry-auth` / `REGISTRY_AUTH_FILE` file or the cluster's
//! `openshift-config/pull-secret` `.dockerconfigjson` (upstream hands the pull secret to the
//! node's container runtime, which reads the same format). Credentials are never logged nor
//! printed: [`DockerAuth`]'s `Debug` shows registry names only.

use std::collections::BTreeMap;

use base64::Engine as _;

/// One registry's credentials.
#[derive(Clone, PartialEq, Eq)]
struct Credential {
    username: String,
    password: String,
}

/// Parsed credentials, by registry host (`quay.io`, `127.0.0.1:5000`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct DockerAuth {
    by_registry: BTreeMap<String, Credential>,
}

impl std::fmt::Debug for DockerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DockerAuth")
            .field("registries", &self.by_registry.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The registry key of a docker config entry: scheme and path dropped (`https://index.docker.io/v1/`
/// ⇒ `index.docker.io`), Docker Hub's names unified as `docker.io`.
fn registry_key(k: &str) -> String {
    let k = k
        .strip_prefix("https://")
        .or_else(|| k.strip_prefix("http://"))
        .unwrap_or(k);
    let host = k.split('/').next().unwrap_or(k);
    match host {
        "index.docker.io" | "registry-1.docker.io" => "docker.io".to_string(),
        h => h.to_string(),
    }
}

impl DockerAuth {
    /// Parses a docker config JSON document. `source` names it in errors.
    ///
    /// # Errors
    /// Not JSON, no `auths` object, or an `auth` value that is not base64 of `user:password`
    /// (the message names the registry, never the value).
    pub fn parse(json: &[u8], source: &str) -> Result<Self, String> {
        let v: serde_json::Value =
            serde_json::from_slice(json).map_err(|e| format!("{source}: not a docker config JSON: {e}"))?;
        let auths = v
            .get("auths")
            .and_then(|a| a.as_object())
            .ok_or_else(|| format!("{source}: no \"auths\" object"))?;
        let mut by_registry = BTreeMap::new();
        for (reg, entry) in auths {
            let (mut username, mut password) = (String::new(), String::new());
            if let Some(a) = entry
                .get("auth")
                .and_then(|a| a.as_str())
                .filter(|a| !a.is_empty())
            {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(a.trim())
                    .map_err(|_| format!("{source}: auths.{reg}.auth is not base64"))?;
                let text =
                    String::from_utf8(raw).map_err(|_| format!("{source}: auths.{reg}.auth is not UTF-8"))?;
                let (u, p) = text
                    .split_once(':')
                    .ok_or_else(|| format!("{source}: auths.{reg}.auth is not \"user:password\""))?;
                username = u.to_string();
                password = p.to_string();
            }
            if let Some(u) = entry.get("username").and_then(|u| u.as_str()) {
                username = u.to_string();
            }
            if let Some(p) = entry.get("password").and_then(|p| p.as_str()) {
                password = p.to_string();
            }
            if username.is_empty() && password.is_empty() {
                continue;
            }
            by_registry.insert(registry_key(reg), Credential { username, password });
        }
        Ok(Self { by_registry })
    }

    /// Reads and parses a docker config file.
    ///
    /// # Errors
    /// The file cannot be read, or [`Self::parse`] fails.
    pub fn from_file(path: &std::path::Path) -> Result<Self, String> {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&data, &path.display().to_string())
    }

    /// The registries that have credentials.
    pub fn registries(&self) -> Vec<String> {
        self.by_registry.keys().cloned().collect()
    }

    /// Whether there are no credentials.
    pub fn is_empty(&self) -> bool {
        self.by_registry.is_empty()
    }

    /// The credentials for `registry` (as `oci-client` resolves it: `docker.io` for Docker
    /// Hub, `host:port` otherwise), anonymous when there are none.
    pub fn for_registry(&self, registry: &str) -> oci_client::secrets::RegistryAuth {
        match self.by_registry.get(&registry_key(registry)) {
            Some(c) => oci_client::secrets::RegistryAuth::Basic(c.username.clone(), c.password.clone()),
            None => oci_client::secrets::RegistryAuth::Anonymous,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_auth_and_username_password_entries() {
        let auth = base64::engine::general_purpose::STANDARD.encode("robot:s3cret");
        let json = format!(
            r#"{{"auths":{{"quay.io":{{"auth":"{auth}","email":"x"}},"https://index.docker.io/v1/":{{"username":"u","password":"p"}},"127.0.0.1:5000":{{}}}}}}"#
        );
        let a = DockerAuth::parse(json.as_bytes(), "pull-secret").expect("parses");
        assert_eq!(a.registries(), ["docker.io", "quay.io"]);
        assert_eq!(
            a.for_registry("quay.io"),
            oci_client::secrets::RegistryAuth::Basic("robot".into(), "s3cret".into())
        );
        assert_eq!(
            a.for_registry("docker.io"),
            oci_client::secrets::RegistryAuth::Basic("u".into(), "p".into())
        );
        assert_eq!(
            a.for_registry("127.0.0.1:5000"),
            oci_client::secrets::RegistryAuth::Anonymous
        );
        let dbg = format!("{a:?}");
        assert!(!dbg.contains("s3cret") && dbg.contains("quay.io"), "{dbg}");
    }

    #[test]
    fn bad_entries_name_the_registry_not_the_value() {
        let e = DockerAuth::parse(br#"{"auths":{"quay.io":{"auth":"!!notbase64!!"}}}"#, "f.json")
            .expect_err("refused");
        assert_eq!(e, "f.json: auths.quay.io.auth is not base64");
        let e = DockerAuth::parse(b"[]", "f.json").expect_err("refused");
        assert_eq!(e, "f.json: no \"auths\" object");
    }
}
