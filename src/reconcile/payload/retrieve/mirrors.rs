//! Registry mirrors for pulls by digest (disconnected clusters): the cluster's
//! `ImageDigestMirrorSet`s (config.openshift.io/v1, `spec.imageDigestMirrors[]: {source,
//! mirrors[], mirrorSourcePolicy}`) and `ImageContentSourcePolicy`s
//! (operator.openshift.io/v1alpha1, `spec.repositoryDigestMirrors[]: {source, mirrors[]}`).
//!
//! On a cluster the machine-config operator writes these into the nodes'
//! `/etc/containers/registries.conf`, and the container runtime that pulls the release image
//! for upstream's CVO follows them; here the retriever follows them itself, by the same rules
//! (containers-registries.conf(5)): a source matches a repository equal to it or under it at a
//! `/` boundary (`quay.io/ocp` matches `quay.io/ocp/release`, not `quay.io/ocpx`), the longest
//! matching source wins, its mirrors are tried in order and then the source itself unless
//! `mirrorSourcePolicy: NeverContactSource`. Rules of the same source from several objects are
//! merged (mirrors in object-name order, each once; the source is blocked when any object says
//! so), as the machine-config operator merges them. The digest is the identity: whoever serves
//! the image, the manifest must hash to it, and signatures are checked for the original pull
//! spec.

use kube::{
    Api,
    api::{ApiResource, DynamicObject, GroupVersionKind, ListParams},
};

/// The mirrors of one source repository.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MirrorRule {
    /// The source: `registry[:port]` or `registry[:port]/repository`.
    pub source: String,
    /// The mirrors in the order they are tried, each replacing `source` in a pull spec.
    pub mirrors: Vec<String>,
    /// `mirrorSourcePolicy: NeverContactSource`: the source itself is never tried.
    pub never_contact_source: bool,
    /// The objects that set this rule (`ImageDigestMirrorSet/NAME`, ...), for messages.
    pub from: Vec<String>,
}

/// One place to try a pull by digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// `registry/repository@digest`.
    pub pull_spec: String,
    /// Whether it is a mirror (else the pull spec's own repository).
    pub mirror: bool,
}

/// Where to pull `by_digest` (`registry/repository@sha256:<hex>`) from, in order, and the
/// rule that decided it (`None`: no rule matched, the image's own repository alone).
pub fn candidates<'a>(by_digest: &str, rules: &'a [MirrorRule]) -> (Vec<Candidate>, Option<&'a MirrorRule>) {
    let own = vec![Candidate {
        pull_spec: by_digest.to_string(),
        mirror: false,
    }];
    let Some((repo, digest)) = by_digest.split_once('@') else {
        return (own, None);
    };
    let rule = rules
        .iter()
        .filter(|r| !r.source.is_empty() && under(repo, &r.source).is_some())
        .max_by_key(|r| r.source.len());
    let Some(rule) = rule else {
        return (own, None);
    };
    let rest = under(repo, &rule.source).unwrap_or_default();
    let mut out: Vec<Candidate> = rule
        .mirrors
        .iter()
        .map(|m| Candidate {
            pull_spec: format!("{}{rest}@{digest}", m.trim_end_matches('/')),
            mirror: true,
        })
        .collect();
    if !rule.never_contact_source {
        out.extend(own);
    }
    (out, Some(rule))
}

/// The part of `repo` after `source` (`""` or `/more`) when `repo` is `source` or under it.
fn under<'r>(repo: &'r str, source: &str) -> Option<&'r str> {
    let rest = repo.strip_prefix(source.trim_end_matches('/'))?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

/// Merges `(object, source, mirrors, never_contact_source)` entries into one rule per source
/// (see the module documentation). Entries without a source are ignored.
pub fn merge(entries: impl IntoIterator<Item = (String, String, Vec<String>, bool)>) -> Vec<MirrorRule> {
    let mut rules: Vec<MirrorRule> = Vec::new();
    for (object, source, mirrors, never) in entries {
        let source = source.trim().trim_end_matches('/').to_string();
        if source.is_empty() {
            continue;
        }
        let i = match rules.iter().position(|r| r.source == source) {
            Some(i) => i,
            None => {
                rules.push(MirrorRule {
                    source,
                    ..MirrorRule::default()
                });
                rules.len() - 1
            }
        };
        let rule = &mut rules[i];
        for m in mirrors {
            let m = m.trim().trim_end_matches('/').to_string();
            if !m.is_empty() && !rule.mirrors.contains(&m) {
                rule.mirrors.push(m);
            }
        }
        rule.never_contact_source |= never;
        if !rule.from.contains(&object) {
            rule.from.push(object);
        }
    }
    rules
}

/// The rules of `ImageDigestMirrorSet` / `ImageContentSourcePolicy` objects (their JSON), in
/// the order given.
pub fn rules_from_objects<'a>(
    objects: impl IntoIterator<Item = (&'a str, &'a serde_json::Value)>,
) -> Vec<MirrorRule> {
    let mut entries = Vec::new();
    for (kind, obj) in objects {
        let name = obj
            .pointer("/metadata/name")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let list = if kind == "ImageContentSourcePolicy" {
            "/spec/repositoryDigestMirrors"
        } else {
            "/spec/imageDigestMirrors"
        };
        for m in obj
            .pointer(list)
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            let text = |k: &str| m.get(k).and_then(serde_json::Value::as_str).unwrap_or_default();
            let mirrors = m
                .get("mirrors")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            entries.push((
                format!("{kind}/{name}"),
                text("source").to_string(),
                mirrors,
                text("mirrorSourcePolicy") == "NeverContactSource",
            ));
        }
    }
    merge(entries)
}

/// Lists the cluster's ImageDigestMirrorSets, then its ImageContentSourcePolicies, each sorted
/// by name, into rules. A kind the cluster does not serve (no CRD) or cannot be read is no
/// rule (logged at debug).
pub async fn read(client: &kube::Client) -> Vec<MirrorRule> {
    let kinds = [
        ("config.openshift.io", "v1", "ImageDigestMirrorSet"),
        ("operator.openshift.io", "v1alpha1", "ImageContentSourcePolicy"),
    ];
    let mut objects: Vec<(&str, serde_json::Value)> = Vec::new();
    for (group, version, kind) in kinds {
        let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        match api.list(&ListParams::default()).await {
            Ok(list) => {
                let mut items: Vec<serde_json::Value> = list
                    .items
                    .into_iter()
                    .filter_map(|o| serde_json::to_value(o).ok())
                    .collect();
                items.sort_by(|a, b| {
                    let n = |v: &serde_json::Value| {
                        v.pointer("/metadata/name")
                            .and_then(|n| n.as_str())
                            .map(str::to_string)
                    };
                    n(a).cmp(&n(b))
                });
                objects.extend(items.into_iter().map(|o| (kind, o)));
            }
            Err(e) => tracing::debug!("listing {kind}s: {e}"),
        }
    }
    rules_from_objects(objects.iter().map(|(k, o)| (*k, o)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const D: &str = "sha256:0123";

    fn specs(c: &[Candidate]) -> Vec<&str> {
        c.iter().map(|c| c.pull_spec.as_str()).collect()
    }

    #[test]
    fn sources_match_at_repository_boundaries_and_the_longest_wins() {
        let rules = merge([
            (
                "a".into(),
                "quay.io/ocp".into(),
                vec!["m1.local/ocp4".into()],
                false,
            ),
            (
                "b".into(),
                "quay.io/ocp/release".into(),
                vec!["m2.local/rel".into(), "m3.local:5000/rel/".into()],
                false,
            ),
            (
                "c".into(),
                "registry.example:5000".into(),
                vec!["m4.local".into()],
                true,
            ),
        ]);
        let (c, rule) = candidates(&format!("quay.io/ocp/release@{D}"), &rules);
        assert_eq!(
            specs(&c),
            [
                format!("m2.local/rel@{D}"),
                format!("m3.local:5000/rel@{D}"),
                format!("quay.io/ocp/release@{D}")
            ]
        );
        assert_eq!(rule.map(|r| r.from.clone()), Some(vec!["b".to_string()]));
        let (c, _) = candidates(&format!("quay.io/ocp/other/deep@{D}"), &rules);
        assert_eq!(
            specs(&c),
            [
                format!("m1.local/ocp4/other/deep@{D}"),
                format!("quay.io/ocp/other/deep@{D}")
            ]
        );
        // Not at a boundary: no rule.
        let (c, rule) = candidates(&format!("quay.io/ocpx/release@{D}"), &rules);
        assert_eq!(specs(&c), [format!("quay.io/ocpx/release@{D}")]);
        assert!(rule.is_none());
        // A registry-wide source, never contacted.
        let (c, _) = candidates(&format!("registry.example:5000/x/y@{D}"), &rules);
        assert_eq!(specs(&c), [format!("m4.local/x/y@{D}")]);
        assert!(c.iter().all(|c| c.mirror));
    }

    #[test]
    fn idms_and_icsp_objects_merge_per_source() {
        let idms = json!({"metadata": {"name": "a"}, "spec": {"imageDigestMirrors": [
            {"source": "quay.io/ocp/release", "mirrors": ["m1/r", "m2/r"]},
            {"source": "quay.io/ocp/art", "mirrors": ["m1/art"], "mirrorSourcePolicy": "AllowContactingSource"}
        ]}});
        let idms2 = json!({"metadata": {"name": "b"}, "spec": {"imageDigestMirrors": [
            {"source": "quay.io/ocp/release", "mirrors": ["m2/r", "m3/r"], "mirrorSourcePolicy": "NeverContactSource"},
            {"mirrors": ["ignored"]}
        ]}});
        let icsp = json!({"metadata": {"name": "c"}, "spec": {"repositoryDigestMirrors": [
            {"source": "quay.io/ocp/release", "mirrors": ["m4/r"]}
        ]}});
        let rules = rules_from_objects([
            ("ImageDigestMirrorSet", &idms),
            ("ImageDigestMirrorSet", &idms2),
            ("ImageContentSourcePolicy", &icsp),
        ]);
        assert_eq!(rules.len(), 2);
        assert_eq!(
            rules[0],
            MirrorRule {
                source: "quay.io/ocp/release".into(),
                mirrors: vec!["m1/r".into(), "m2/r".into(), "m3/r".into(), "m4/r".into()],
                never_contact_source: true,
                from: vec![
                    "ImageDigestMirrorSet/a".into(),
                    "ImageDigestMirrorSet/b".into(),
                    "ImageContentSourcePolicy/c".into()
                ],
            }
        );
        assert!(!rules[1].never_contact_source);
    }
}
