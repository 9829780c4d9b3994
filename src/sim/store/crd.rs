//! CustomResourceDefinitions as apiextensions-apiserver's controllers handle them: the kinds
//! a CRD defines, the status it gets, and the cleanup of its objects when it is deleted.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Value, json};

use super::schema::{Root, admit};
use super::{
    ApiError, CRD_CLEANUP_FINALIZER, EventType, ResourceType, Store, Stored, TypeRef, WriteMode, meta_str,
};

/// The kinds a CustomResourceDefinition defines (one per served version), or the `Invalid`
/// detail naming the bad field.
pub(super) fn crd_types(crd: &Value) -> Result<Vec<ResourceType>, String> {
    let spec = &crd["spec"];
    let name = meta_str(crd, "name").unwrap_or_default();
    let field = |f: &str| -> Result<String, String> {
        match spec.pointer(f).and_then(Value::as_str) {
            Some(s) if !s.is_empty() => Ok(s.to_owned()),
            _ => Err(format!("spec{}: Required value", f.replace('/', "."))),
        }
    };
    let group = field("/group")?;
    let plural = field("/names/plural")?;
    let kind = field("/names/kind")?;
    if name != format!("{plural}.{group}") {
        return Err(format!(
            "metadata.name: Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"
        ));
    }
    let namespaced = match spec["scope"].as_str() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        other => {
            return Err(format!(
                "spec.scope: Unsupported value: {:?}: supported values: \"Cluster\", \"Namespaced\"",
                other.unwrap_or_default()
            ));
        }
    };
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        return Err(
            "spec.versions: Invalid value: null: must have exactly one version marked as storage version"
                .into(),
        );
    }
    let singular = spec["names"]["singular"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map_or_else(|| kind.to_lowercase(), str::to_owned);
    let short_names: Vec<String> = spec["names"]["shortNames"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for v in &versions {
        let Some(version) = v["name"].as_str().filter(|s| !s.is_empty()) else {
            return Err("spec.versions[].name: Required value".into());
        };
        if v["served"].as_bool() != Some(true) {
            continue;
        }
        out.push(ResourceType {
            group: group.clone(),
            version: version.to_owned(),
            plural: plural.clone(),
            singular: singular.clone(),
            kind: kind.clone(),
            short_names: short_names.clone(),
            namespaced,
            status_subresource: v["subresources"]["status"].is_object(),
            generation: true,
            crd: Some(name.to_owned()),
        });
    }
    Ok(out)
}

/// The status kube-apiserver's CRD controllers give an accepted CustomResourceDefinition;
/// `old` keeps condition transition times; new ones are `now`.
fn crd_status(crd: &Value, now: &str) -> Value {
    let names = &crd["spec"]["names"];
    let kind = names["kind"].as_str().unwrap_or_default();
    let mut accepted = names.clone();
    if accepted["singular"].as_str().is_none_or(str::is_empty) {
        accepted["singular"] = json!(kind.to_lowercase());
    }
    if accepted["listKind"].as_str().is_none_or(str::is_empty) {
        accepted["listKind"] = json!(format!("{kind}List"));
    }
    let old = &crd["status"]["conditions"];
    let time = |ty: &str| -> Value {
        old.as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == ty && c["status"] == "True"))
            .map_or_else(|| json!(now), |c| c["lastTransitionTime"].clone())
    };
    let stored: Vec<Value> = crd["spec"]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"].as_bool() == Some(true))
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": time("NamesAccepted")},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": time("Established")},
        ],
        "acceptedNames": accepted,
        "storedVersions": stored,
    })
}

/// The status kube-apiserver gives a CustomResourceDefinition it has just stored, before its
/// controllers accept the names and establish it.
pub(super) fn initial_crd_status(crd: &Value) -> Value {
    let stored: Vec<Value> = crd["spec"]["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"].as_bool() == Some(true))
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    json!({"conditions": null, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": stored})
}

impl Store {
    /// Establishes the CRDs created more than the establish delay ago (see
    /// [`Store::set_establish_delay`]); whether any was.
    pub fn establish_due(&mut self, now: std::time::Instant) -> bool {
        let due: Vec<String> = self
            .pending_crds
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(n, _)| n.clone())
            .collect();
        let Some(t) = self.find_plural(super::types::CRD_GROUP, "customresourcedefinitions") else {
            return false;
        };
        for name in &due {
            self.pending_crds.remove(name);
            // A CRD that became invalid meanwhile simply stays unestablished.
            let _ = self.sync_crd(&t, name);
        }
        !due.is_empty()
    }

    /// When the next created CRD is due to be established, if any is waiting.
    pub fn next_establish(&self) -> Option<std::time::Instant> {
        self.pending_crds.values().min().copied()
    }

    /// How long after its creation a CRD gets `NamesAccepted` / `Established` and its kinds
    /// are served (discovery, endpoints); zero (the default) does it within the create.
    pub fn set_establish_delay(&mut self, delay: std::time::Duration) {
        self.establish_delay = delay;
    }

    /// The cluster's feature set: `spec.featureSet` of the `config.openshift.io` FeatureGate
    /// `cluster` (`""`, the default, when there is none). It picks the variant of the
    /// feature-gated built-in CRDs ([`super::builtin_schemas::crd_of`]).
    pub fn feature_set(&self) -> String {
        self.find_plural("config.openshift.io", "featuregates")
            .and_then(|t| self.get_stored(&t, "", "cluster").map(|o| o.value()))
            .and_then(|fg| fg["spec"]["featureSet"].as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    /// The `openAPIV3Schema` of kind `t`'s version: its stored CRD's, or for the built-in
    /// OpenShift kinds the embedded upstream CRD's ([`super::builtin_schemas`]).
    pub fn schema_of(&self, t: &ResourceType) -> Option<Cow<'static, Value>> {
        let Some(crd_name) = t.crd.as_deref() else {
            // Most built-in kinds have no schema: skip the FeatureGate lookup for them.
            super::builtin_schemas::crd_of(&t.group, &t.plural, "")?;
            let set = self.feature_set();
            return super::builtin_schemas::schema_of(&t.group, &t.plural, &t.version, &set)
                .map(Cow::Borrowed);
        };
        let crd_type = self.find_plural(super::types::CRD_GROUP, "customresourcedefinitions")?;
        let crd = self.get(&crd_type, "", crd_name)?;
        crd["spec"]["versions"]
            .as_array()?
            .iter()
            .find(|v| v["name"] == t.version.as_str())
            .map(|v| v["schema"]["openAPIV3Schema"].clone())
            .filter(Value::is_object)
            .map(Cow::Owned)
    }

    /// Prunes, defaults and validates a custom resource (all of it, or its `status`) against
    /// its CRD's schema, then runs the schema's validation rules ([`super::rules`]; `old` is
    /// the stored object on an update, for transition rules), as apiextensions-apiserver does
    /// on every write.
    ///
    /// # Errors
    /// `422 Invalid` with one cause per bad field or failed rule.
    pub(super) fn admit_custom(
        &self,
        t: &ResourceType,
        name: &str,
        obj: &mut Value,
        old: Option<&Value>,
        root: Root,
    ) -> Result<(), ApiError> {
        let Some(schema) = self.schema_of(t) else {
            return Ok(());
        };
        let mut causes = admit(&schema, obj, root);
        // Ratcheting: on an update, a failure at a value the update leaves as it was is not
        // counted, so a schema that tightened does not lock its old objects.
        if let Some(old) = old {
            causes.retain(|c| !unchanged(old, obj, c));
        }
        // The rules run over the whole object on a /status write too, as kube-apiserver's
        // status strategy validates it.
        super::rules::check(&schema, obj, old, "", &mut causes);
        if let Some(old) = old {
            causes.retain(|c| !unchanged(old, obj, c));
        }
        if causes.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid_causes(t, &t.kind, name, causes))
        }
    }

    /// Registers the kinds of CRD `name` (replacing earlier ones) and writes its accepted
    /// status when it changed.
    pub(super) fn sync_crd(&mut self, t: &TypeRef, name: &str) -> Result<(), ApiError> {
        let Some(crd) = self.get(t, "", name) else {
            return Ok(());
        };
        if crd["metadata"]["deletionTimestamp"].is_string() {
            return Ok(());
        }
        let types = crd_types(&crd).map_err(|d| ApiError::invalid(t, name, &d))?;
        self.types.retain(|x| x.crd.as_deref() != Some(name));
        self.types.extend(types.into_iter().map(Arc::new));
        let status = crd_status(&crd, &self.now());
        if crd["status"] != status {
            let mut with = crd.clone();
            with["status"] = status;
            self.write(t, "", name, with, WriteMode::Status)?;
        }
        Ok(())
    }

    /// Deletes every object of a deleted CRD's kinds, unregisters them, and drops the cleanup
    /// finalizer (what apiextensions-apiserver's finalizer controller does).
    pub(super) fn cleanup_crd(&mut self, t: &TypeRef, name: &str) -> Result<(), ApiError> {
        let kinds: Vec<TypeRef> = self
            .types
            .iter()
            .filter(|x| x.crd.as_deref() == Some(name))
            .cloned()
            .collect();
        if let Some(ct) = kinds.first() {
            let targets: Vec<(String, String)> = self
                .objects
                .get(&ct.storage_key())
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            for (ns, n) in targets {
                if let Some(before) = self.remove_object(ct, &ns, &n) {
                    self.rv += 1;
                    let mut o = before.value();
                    o["metadata"]["resourceVersion"] = json!(self.rv.to_string());
                    self.record(ct, EventType::Deleted, Arc::new(Stored::new(&o)), Some(before));
                    self.after_removal(ct, &ns);
                }
            }
        }
        self.types.retain(|x| x.crd.as_deref() != Some(name));
        if let Some(mut crd) = self.get(t, "", name) {
            if let Some(f) = crd["metadata"]["finalizers"].as_array_mut() {
                f.retain(|x| x != CRD_CLEANUP_FINALIZER);
            }
            self.write(t, "", name, crd, WriteMode::All)?;
        }
        Ok(())
    }
}

/// The value at a cause's field path (`spec.size`, `status.history[0].state`, `[2]`) in `v`;
/// `None` when the path leads nowhere. The empty path is `v` itself.
fn value_at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        let (name, mut rest) = match seg.find('[') {
            Some(i) => (&seg[..i], &seg[i..]),
            None => (seg, ""),
        };
        if !name.is_empty() {
            cur = cur.get(name)?;
        }
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let index: usize = r[..end].parse().ok()?;
            cur = cur.get(index)?;
            rest = &r[end + 1..];
        }
    }
    Some(cur)
}

/// Whether an update leaves the value a validation failure is about as it was (CRD validation
/// ratcheting, GA in kube-apiserver 1.33: `staging/src/k8s.io/apiextensions-apiserver/pkg/`
/// `apiserver/validation/ratcheting.go` in kubernetes/kubernetes): the failing field itself,
/// or, for a missing required field, the object that lacks it. A failure without a field (the
/// "some validation rules were not checked" note) is never ratcheted.
fn unchanged(old: &Value, new: &Value, c: &super::Cause) -> bool {
    if c.field.is_empty() || c.field == "<nil>" {
        return false;
    }
    let path = if c.reason == "FieldValueRequired" {
        c.field.rsplit_once('.').map_or("", |(parent, _)| parent)
    } else {
        c.field.as_str()
    };
    match (value_at(old, path), value_at(new, path)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod ratcheting_tests {
    use super::*;
    use crate::sim::store::Cause;

    #[test]
    fn a_failure_is_ratcheted_only_where_the_value_is_unchanged() {
        let old = json!({"spec": {"size": "0123456789", "items": [{"n": "a"}, {"n": "bb"}]}});
        let new = json!({"spec": {"size": "0123456789", "items": [{"n": "a"}, {"n": "cc"}], "x": 1}});
        let cause = |field: &str, message: &str| Cause::parse(&format!("{field}: {message}"));
        assert!(unchanged(
            &old,
            &new,
            &cause("spec.size", "Too long: may not be more than 5 bytes")
        ));
        assert!(unchanged(
            &old,
            &new,
            &cause("spec.items[0].n", "Invalid value: \"a\": x")
        ));
        assert!(!unchanged(
            &old,
            &new,
            &cause("spec.items[1].n", "Invalid value: \"cc\": x")
        ));
        // A missing required field: ratcheted only when the object lacking it is unchanged.
        let required = cause("spec.items[0].m", "Required value");
        assert_eq!(required.reason, "FieldValueRequired");
        assert!(unchanged(&old, &new, &required));
        assert!(!unchanged(&old, &new, &cause("spec.m", "Required value")));
        // A value that was not there before is new: never ratcheted.
        assert!(!unchanged(&old, &new, &cause("spec.x", "Invalid value: 1: x")));
        assert_eq!(value_at(&new, "spec.items[1].n"), Some(&json!("cc")));
        assert_eq!(value_at(&new, "spec.items[7]"), None);
    }
}
