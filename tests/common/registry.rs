//! A real registry for the tests: Debian's `docker-registry` (the CNCF distribution
//! registry) on a random loopback port with its own storage, killed on drop.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

/// A `docker-registry` process on 127.0.0.1, killed on drop. Its log (level `info`: one
/// `response completed` line per request, with `http.request.method` and `http.request.uri`)
/// goes to [`Registry::log_path`].
pub struct Registry {
    child: Option<Child>,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The registry's storage root (`docker/registry/v2/...` below it).
    pub storage: PathBuf,
    /// Its log file.
    pub log_path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Registry {
    /// Starts one, or skips `test` ([`super::skip`]: a failure under CI) when the binary is
    /// absent (`/usr/bin`, `/usr/local/bin`, then the `PATH`).
    pub fn start(test: &str) -> Option<Registry> {
        let bin = ["/usr/bin/docker-registry", "/usr/local/bin/docker-registry"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .or_else(|| {
                std::env::var_os("PATH").and_then(|p| {
                    std::env::split_paths(&p)
                        .map(|d| d.join("docker-registry"))
                        .find(|p| p.is_file())
                })
            });
        let Some(bin) = bin else {
            super::skip(
                test,
                "docker-registry not found (Debian: apt-get install docker-registry)",
            );
            return None;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let storage = dir.path().join("storage");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {addr}\n",
                storage.display()
            ),
        )
        .expect("config");
        let log_path = dir.path().join("registry.log");
        let log = std::fs::File::create(&log_path).expect("log file");
        let child = Command::new(bin)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn docker-registry");
        let reg = Registry {
            child: Some(child),
            addr,
            storage,
            log_path,
            _dir: dir,
        };
        let limit = std::time::Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&reg.addr).is_err() {
            assert!(
                std::time::Instant::now() < limit,
                "docker-registry did not listen on {}",
                reg.addr
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(reg)
    }

    /// The requests the registry completed so far, as `METHOD URI` (from its log).
    pub fn requests(&self) -> Vec<String> {
        let log = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        let field = |line: &str, name: &str| -> Option<String> {
            let at = line.find(&format!("{name}="))? + name.len() + 1;
            let rest = &line[at..];
            let rest = rest.strip_prefix('"').unwrap_or(rest);
            Some(rest.split(['"', ' ']).next().unwrap_or_default().to_string())
        };
        log.lines()
            .filter(|l| l.contains("response completed"))
            .filter_map(|l| {
                Some(format!(
                    "{} {}",
                    field(l, "http.request.method")?,
                    field(l, "http.request.uri")?
                ))
            })
            .collect()
    }

    /// Kills the registry (idempotent).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A small release payload for `version` in `dir`, as the registry tests push it: release
/// metadata (no previous versions), image references, Namespace `namespace` and ConfigMap
/// `namespace/configmap` (`data.version` = `version`) in `release-manifests/` (files named
/// after `tag`), and the CVO's namespace in `manifests/`.
pub fn write_small_release(dir: &Path, version: &str, tag: &str, namespace: &str, configmap: &str) {
    let ann = super::ANN;
    super::PayloadDir::new(dir, version)
        .file(
            &format!("0000_00_{tag}_namespace.yaml"),
            &format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {namespace}\n{ann}"),
        )
        .file(
            &format!("0000_10_{tag}_configmap.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {configmap}\n  namespace: {namespace}\n{ann}data:\n  version: \"{version}\"\n"
            ),
        )
        .own_file(
            "0000_00_cvo_namespace.yaml",
            &format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-cluster-version\n{ann}"),
        );
}
