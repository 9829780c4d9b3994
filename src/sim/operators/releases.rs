//! What the simulated operators know of each release payload: which Deployment runs which
//! ClusterOperator, and the versions each ClusterOperator reports once it runs that release
//! (the payload ClusterOperator manifest's `status.versions`, which is what the engine's health
//! check waits for: upstream `pkg/cvo/internal/operatorstatus.go`).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use anyhow::Context;
use serde::Deserialize;
use serde_json::Value;

/// Operators and versions of the releases the simulated operators can run.
#[derive(Clone, Debug, Default)]
pub struct Releases {
    /// Release version -> ClusterOperator name -> `(name, version)` pairs, in manifest order.
    versions: BTreeMap<String, BTreeMap<String, Vec<(String, String)>>>,
    /// `(namespace, name)` of an operator Deployment -> its ClusterOperator's name.
    deployments: BTreeMap<(String, String), String>,
}

/// `0000_NN_<component>_NN_...`: the component part of a payload manifest file name.
fn component(file: &str) -> Option<&str> {
    let rest = file.strip_prefix("0000_")?;
    let (level, rest) = rest.split_once('_')?;
    if level.len() != 2 || !level.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // The component ends before the next `_NN_`.
    let bytes = rest.as_bytes();
    (0..bytes.len()).find_map(|i| {
        let tail = bytes.get(i..i + 4)?;
        (tail[0] == b'_' && tail[1].is_ascii_digit() && tail[2].is_ascii_digit() && tail[3] == b'_')
            .then(|| &rest[..i])
    })
}

impl Releases {
    /// Reads the payloads in `dirs` (release image roots: `release-manifests/release-metadata`
    /// and the `0000_NN_<component>_*.yaml` manifests).
    ///
    /// # Errors
    /// A one-line error naming the file that cannot be read or parsed.
    pub fn from_payload_dirs(dirs: &[PathBuf]) -> anyhow::Result<Self> {
        let mut r = Self::default();
        for d in dirs {
            r.add_payload_dir(d)?;
        }
        Ok(r)
    }

    /// Adds the payload in `dir`: for each component, the Deployment and the ClusterOperator
    /// manifest it ships, and the manifest's `status.versions`.
    ///
    /// # Errors
    /// A one-line error naming the file that cannot be read or parsed, or a payload without a
    /// version in `release-metadata`.
    pub fn add_payload_dir(&mut self, dir: &Path) -> anyhow::Result<()> {
        let rm = dir.join("release-manifests");
        let meta_path = rm.join("release-metadata");
        let meta: Value = serde_json::from_str(
            &std::fs::read_to_string(&meta_path).with_context(|| meta_path.display().to_string())?,
        )
        .with_context(|| meta_path.display().to_string())?;
        let version = meta["version"]
            .as_str()
            .filter(|v| !v.is_empty())
            .with_context(|| format!("{}: no version", meta_path.display()))?
            .to_owned();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&rm)
            .with_context(|| rm.display().to_string())?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            })
            .collect();
        files.sort();
        // Component -> (deployments, cluster operators with versions).
        type Found = (Vec<(String, String)>, Vec<(String, Vec<(String, String)>)>);
        let mut by_component: BTreeMap<String, Found> = BTreeMap::new();
        for p in files {
            let file = p.file_name().and_then(|f| f.to_str()).unwrap_or_default();
            let Some(comp) = component(file) else { continue };
            let text = std::fs::read_to_string(&p).with_context(|| p.display().to_string())?;
            for (i, de) in serde_norway::Deserializer::from_str(&text).enumerate() {
                let v = Value::deserialize(de).with_context(|| format!("{}: document {i}", p.display()))?;
                let s = |ptr: &str| {
                    v.pointer(ptr)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                let entry = by_component.entry(comp.to_owned()).or_default();
                match (s("/apiVersion").as_str(), s("/kind").as_str()) {
                    ("apps/v1", "Deployment") => {
                        entry.0.push((s("/metadata/namespace"), s("/metadata/name")));
                    }
                    ("config.openshift.io/v1", "ClusterOperator") => {
                        let versions = v
                            .pointer("/status/versions")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .map(|e| {
                                let f = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
                                (f("name"), f("version"))
                            })
                            .collect();
                        entry.1.push((s("/metadata/name"), versions));
                    }
                    _ => {}
                }
            }
        }
        let table = self.versions.entry(version).or_default();
        for (deps, cos) in by_component.into_values() {
            if let ([dep], [(co, _)]) = (deps.as_slice(), cos.as_slice()) {
                self.deployments.insert(dep.clone(), co.clone());
            }
            for (co, versions) in cos {
                table.insert(co, versions);
            }
        }
        Ok(())
    }

    /// Whether no payload was read.
    pub fn is_empty(&self) -> bool {
        self.versions.is_empty()
    }

    /// The versions ClusterOperator `co` reports when it runs release `release`, if known.
    pub fn versions(&self, release: &str, co: &str) -> Option<&[(String, String)]> {
        self.versions.get(release)?.get(co).map(Vec::as_slice)
    }

    /// The ClusterOperator the Deployment `namespace/name` runs, if known.
    pub fn operator_of(&self, namespace: &str, name: &str) -> Option<&str> {
        self.deployments
            .get(&(namespace.to_owned(), name.to_owned()))
            .map(String::as_str)
    }

    /// The operator Deployment `(namespace, name)` of ClusterOperator `co`, if known.
    pub fn deployment_of(&self, co: &str) -> Option<(&str, &str)> {
        self.deployments
            .iter()
            .find(|(_, c)| c.as_str() == co)
            .map(|((ns, n), _)| (ns.as_str(), n.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_of_file_names() {
        assert_eq!(
            component("0000_20_kube-apiserver-operator_06_deployment.yaml"),
            Some("kube-apiserver-operator")
        );
        assert_eq!(component("0000_90_x_01_a_02_b.yaml"), Some("x"));
        assert_eq!(component("image-references"), None);
        assert_eq!(component("0000_ab_x_01_y.yaml"), None);
    }

    #[test]
    fn demo_payload_tables() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/payloads/4.16.4");
        let r = Releases::from_payload_dirs(&[dir]).expect("payload");
        assert_eq!(
            r.operator_of("openshift-kube-apiserver-operator", "kube-apiserver-operator"),
            Some("kube-apiserver")
        );
        assert_eq!(
            r.deployment_of("network"),
            Some(("openshift-network-operator", "cluster-network-operator"))
        );
        let v = r.versions("4.16.4", "kube-apiserver").expect("versions");
        assert!(v.contains(&("kube-apiserver".into(), "1.29.7".into())), "{v:?}");
        assert!(v.contains(&("operator".into(), "4.16.4".into())));
        assert_eq!(r.deployments.len(), 33);
    }
}
