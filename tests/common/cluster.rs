//! The cluster an engine test runs against: the in-process simulator, or the real
//! kube-apiserver of `CVO_TEST_KUBECONFIG` (docs/testing.md; `../shared/tools/kube-apiserver/up.sh`
//! starts one).
//!
//! On the real server tests run in parallel on one shared cluster, so every object a test names
//! gets a unique suffix ([`Handle::name`]: `op` becomes `op-1a2b3c4d`; on the simulator names
//! stay as given), the ClusterVersion and ClusterOperator CRDs (`tests/fixtures/crds/`) are
//! installed once per test (idempotent, waiting for `Established`), and [`TestCluster`] deletes
//! what the test named when it is dropped. Reads and writes go through a `kube::Client` on both
//! servers, except where the simulator has an unaudited fast path ([`Handle::put_status`],
//! [`Handle::edit`]): playing an operator there must not show up in the request audit.

#![allow(dead_code)]

use std::{path::PathBuf, time::Duration};

use cvo::sim::Simulator;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{
    Api, Client,
    api::{ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams},
};
use serde_json::Value;

/// A kind the tests read or write: group, version, kind, plural, namespaced.
#[derive(Clone, Copy, Debug)]
pub struct Res(
    pub &'static str,
    pub &'static str,
    pub &'static str,
    pub &'static str,
    pub bool,
);

/// ClusterVersion.
pub const CV: Res = Res(
    "config.openshift.io",
    "v1",
    "ClusterVersion",
    "clusterversions",
    false,
);
/// ClusterOperator.
pub const CO: Res = Res(
    "config.openshift.io",
    "v1",
    "ClusterOperator",
    "clusteroperators",
    false,
);
/// Namespace.
pub const NAMESPACE: Res = Res("", "v1", "Namespace", "namespaces", false);
/// ConfigMap.
pub const CONFIGMAP: Res = Res("", "v1", "ConfigMap", "configmaps", true);
/// CustomResourceDefinition.
pub const CRD: Res = Res(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
    false,
);
/// Lease.
pub const LEASE: Res = Res("coordination.k8s.io", "v1", "Lease", "leases", true);

/// The namespace of the CVO Lease.
pub const LEASE_NS: &str = "openshift-cluster-version";

impl Res {
    fn resource(self) -> ApiResource {
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(self.0, self.1, self.2), self.3)
    }
}

/// What a test uses of its cluster; cheap to clone into tasks (it deletes nothing when dropped,
/// [`TestCluster`] does).
#[derive(Clone)]
pub struct Handle {
    client: Client,
    sim: Option<Simulator>,
    suffix: String,
}

impl Handle {
    /// A client of the cluster (a new one per call on the simulator, like the tests always did).
    pub fn client(&self) -> Client {
        match &self.sim {
            Some(sim) => Client::new(sim.clone(), "default"),
            None => self.client.clone(),
        }
    }

    /// The simulator, when the test runs on it.
    pub fn sim(&self) -> Option<&Simulator> {
        self.sim.as_ref()
    }

    /// Whether this is the real kube-apiserver.
    pub fn is_real(&self) -> bool {
        self.sim.is_none()
    }

    /// The name this test uses for `base`: `base` on the simulator, `base-<suffix>` on the real
    /// server.
    pub fn name(&self, base: &str) -> String {
        if self.suffix.is_empty() {
            base.to_owned()
        } else {
            format!("{base}-{}", self.suffix)
        }
    }

    fn api(&self, r: Res, ns: &str) -> Api<DynamicObject> {
        if r.4 {
            Api::namespaced_with(self.client(), ns, &r.resource())
        } else {
            Api::all_with(self.client(), &r.resource())
        }
    }

    /// The object, if it exists (simulator: its store; real: a GET).
    pub async fn get(&self, r: Res, ns: &str, name: &str) -> Option<Value> {
        if let Some(sim) = &self.sim {
            return sim.get(r.0, r.3, ns, name);
        }
        match self.api(r, ns).get_opt(name).await {
            Ok(o) => o.map(|o| serde_json::to_value(o).expect("object encodes")),
            Err(e) => panic!("GET {} {ns}/{name}: {e}", r.2),
        }
    }

    /// Creates `obj` (with apiVersion, kind, metadata.name and, for namespaced kinds,
    /// metadata.namespace). Panics on failure.
    pub async fn create(&self, r: Res, obj: Value) {
        if let Some(sim) = &self.sim {
            sim.insert(obj).expect("insert into the simulator");
            return;
        }
        let ns = obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let o: DynamicObject = serde_json::from_value(obj).expect("a DynamicObject");
        self.api(r, &ns)
            .create(&PostParams::default(), &o)
            .await
            .unwrap_or_else(|e| panic!("create {}: {e}", r.2));
    }

    /// Replaces `obj` as a test's edit of the cluster (simulator: straight into the store,
    /// unaudited; real: a PUT with the object's resourceVersion). Returns whether it was
    /// written (a conflict on the real server is not).
    pub async fn edit(&self, r: Res, obj: Value) -> bool {
        if let Some(sim) = &self.sim {
            sim.insert(obj).expect("insert into the simulator");
            return true;
        }
        let ns = obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let name = obj["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        let o: DynamicObject = serde_json::from_value(obj).expect("a DynamicObject");
        match self.api(r, &ns).replace(&name, &PostParams::default(), &o).await {
            Ok(_) => true,
            Err(kube::Error::Api(s)) if s.code == 409 => false,
            Err(e) => panic!("replace {} {name}: {e}", r.2),
        }
    }

    /// Writes `obj.status` as an operator would (simulator: straight into the store,
    /// unaudited; real: PUT `/status` with the object's resourceVersion). Returns whether it
    /// was written (a conflict on the real server is not: the caller tries again).
    pub async fn put_status(&self, r: Res, obj: Value) -> bool {
        if let Some(sim) = &self.sim {
            sim.insert(obj).expect("insert into the simulator");
            return true;
        }
        let ns = obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let name = obj["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        let o: DynamicObject = serde_json::from_value(obj).expect("a DynamicObject");
        match self
            .api(r, &ns)
            .replace_status(&name, &PostParams::default(), &o)
            .await
        {
            Ok(_) => true,
            Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => false,
            Err(e) => panic!("replace {} {name}/status: {e}", r.2),
        }
    }

    /// Deletes the object if it exists.
    pub async fn delete(&self, r: Res, ns: &str, name: &str) {
        match self.api(r, ns).delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => panic!("delete {} {ns}/{name}: {e}", r.2),
        }
    }
}

/// A test's cluster; on the real server, deletes what [`Self::clean_up`] lists when dropped.
pub struct TestCluster {
    /// The cluster.
    pub h: Handle,
    kubeconfig: Option<PathBuf>,
    cleanup: Vec<(Res, String, String)>,
}

impl std::ops::Deref for TestCluster {
    type Target = Handle;
    fn deref(&self) -> &Handle {
        &self.h
    }
}

/// The kubeconfig of the real server the tests run against, if `CVO_TEST_KUBECONFIG` names one.
pub fn real_kubeconfig() -> Option<PathBuf> {
    std::env::var_os("CVO_TEST_KUBECONFIG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

async fn real_client(path: &std::path::Path) -> Client {
    let kc = kube::config::Kubeconfig::read_from(path)
        .unwrap_or_else(|e| panic!("CVO_TEST_KUBECONFIG={}: {e}", path.display()));
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap_or_else(|e| panic!("CVO_TEST_KUBECONFIG={}: {e}", path.display()));
    Client::try_from(config).expect("a client")
}

/// `tests/fixtures/crds/*.crd.yaml`.
fn crd_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/crds");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".crd.yaml"))
        .collect();
    v.sort();
    v
}

/// Creates the CRDs of `tests/fixtures/crds/` that are absent and waits until each is
/// `Established` (at most 30 s).
pub async fn install_crds(client: &Client) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for f in crd_files() {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let crd: CustomResourceDefinition =
            serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = crd.metadata.name.clone().expect("CRD name");
        if api.get_opt(&name).await.expect("GET CRD").is_none() {
            match api.create(&PostParams::default(), &crd).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(e) => panic!("create CRD {name}: {e}"),
            }
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let c = api.get(&name).await.expect("GET CRD");
            let established = c
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            if established {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "CRD {name} not Established in 30 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl TestCluster {
    /// The simulator, or the real server of `CVO_TEST_KUBECONFIG` with the CRDs installed.
    pub async fn new() -> Self {
        let Some(path) = real_kubeconfig() else {
            let sim = Simulator::new();
            return Self {
                h: Handle {
                    client: Client::new(sim.clone(), "default"),
                    sim: Some(sim),
                    suffix: String::new(),
                },
                kubeconfig: None,
                cleanup: Vec::new(),
            };
        };
        let client = real_client(&path).await;
        install_crds(&client).await;
        let suffix = uuid_suffix();
        Self {
            h: Handle {
                client,
                sim: None,
                suffix,
            },
            kubeconfig: Some(path),
            cleanup: Vec::new(),
        }
    }

    /// Deletes `r` `ns/name` when the test ends (real server only; the simulator goes away
    /// with the test).
    pub fn clean_up(&mut self, r: Res, ns: &str, name: &str) {
        self.cleanup.push((r, ns.to_owned(), name.to_owned()));
    }
}

fn uuid_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let n = u64::from(nanos) ^ (u64::from(std::process::id()) << 32) ^ rand_u64();
    format!("{:08x}", n & 0xffff_ffff)
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    h.finish()
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        let Some(path) = self.kubeconfig.clone() else {
            return;
        };
        let items = std::mem::take(&mut self.cleanup);
        let suffix = self.h.suffix.clone();
        // Its own thread and runtime: the test's runtime may be shutting down.
        let done = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                let h = Handle {
                    client: real_client(&path).await,
                    sim: None,
                    suffix,
                };
                for (r, ns, name) in items {
                    if let Err(e) =
                        tokio::time::timeout(Duration::from_secs(10), h.delete(r, &ns, &name)).await
                    {
                        eprintln!("cleaning up {} {ns}/{name}: {e}", r.2);
                    }
                }
            });
        })
        .join();
        if done.is_err() {
            eprintln!("cleaning up the test's objects failed");
        }
    }
}
