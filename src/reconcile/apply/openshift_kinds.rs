//! Merges for the OpenShift kinds with a typed builder upstream
//! (`lib/resourcebuilder/resourcebuilder.go`): ImageStream, OperatorGroup and
//! SecurityContextConstraints (upstream `lib/resourcemerge/imagestream.go`, `operatorgroup.go`,
//! `security.go`). They work on `serde_json::Value` since cvo has no Rust types for these kinds;
//! metadata follows the common rule.

use serde_json::{Value, json};

use super::merge::ensure_object_meta;

fn meta_merge(modified: &mut bool, existing: &mut Value, required: &Value) {
    let mut em: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta =
        serde_json::from_value(existing["metadata"].clone()).unwrap_or_default();
    let rm = serde_json::from_value(required["metadata"].clone()).unwrap_or_default();
    let mut m = false;
    ensure_object_meta(&mut m, &mut em, &rm);
    if m && let Ok(v) = serde_json::to_value(&em) {
        existing["metadata"] = v;
        *modified = true;
    }
}

/// `null` and empty lists/maps/strings and `false` compare equal.
fn norm(v: &Value) -> Value {
    match v {
        Value::Array(a) if a.is_empty() => Value::Null,
        Value::Object(o) if o.is_empty() => Value::Null,
        Value::String(s) if s.is_empty() => Value::Null,
        Value::Bool(false) => Value::Null,
        other => other.clone(),
    }
}

fn set_field(modified: &mut bool, existing: &mut Value, key: &str, want: &Value) {
    if norm(&existing[key]) != norm(want) {
        if want.is_null() {
            if let Some(o) = existing.as_object_mut() {
                o.remove(key);
            }
        } else {
            existing[key] = want.clone();
        }
        *modified = true;
    }
}

/// ImageStream: metadata; `spec.lookupPolicy` when set; tags matched by name — a missing tag is
/// appended, an existing one gets `from` and `importPolicy` (importMode default `Legacy`) when
/// they differ; live tags are never removed.
pub(crate) fn ensure_image_stream(modified: &mut bool, existing: &mut Value, required: &Value) {
    meta_merge(modified, existing, required);
    if !existing["spec"].is_object() {
        existing["spec"] = json!({});
    }
    let rs = &required["spec"];
    if !rs["lookupPolicy"].is_null() {
        set_field(
            modified,
            &mut existing["spec"],
            "lookupPolicy",
            &rs["lookupPolicy"],
        );
    }
    let import_policy = |t: &Value| {
        let mut p = t["importPolicy"].clone();
        if !p.is_object() {
            p = json!({});
        }
        if p["importMode"].as_str().unwrap_or("").is_empty() {
            p["importMode"] = json!("Legacy");
        }
        p
    };
    for rt in rs["tags"].as_array().into_iter().flatten() {
        if !existing["spec"]["tags"].is_array() {
            existing["spec"]["tags"] = json!([]);
        }
        let Some(tags) = existing["spec"]["tags"].as_array_mut() else {
            return;
        };
        match tags.iter_mut().find(|t| t["name"] == rt["name"]) {
            None => {
                tags.push(rt.clone());
                *modified = true;
            }
            Some(t) => {
                if t["from"] != rt["from"] {
                    t["from"] = rt["from"].clone();
                    *modified = true;
                }
                let want = import_policy(rt);
                if import_policy(t) != want {
                    t["importPolicy"] = want;
                    *modified = true;
                }
            }
        }
    }
}

/// OperatorGroup: metadata; `spec.selector`, `spec.targetNamespaces`, `spec.serviceAccountName`
/// (when set), `spec.staticProvidedAPIs`, `spec.upgradeStrategy` (default `{name: Default}`).
pub(crate) fn ensure_operator_group(modified: &mut bool, existing: &mut Value, required: &Value) {
    meta_merge(modified, existing, required);
    if !existing["spec"].is_object() {
        existing["spec"] = json!({});
    }
    let rs = &required["spec"];
    let es = &mut existing["spec"];
    set_field(modified, es, "selector", &rs["selector"]);
    set_field(modified, es, "targetNamespaces", &rs["targetNamespaces"]);
    if !norm(&rs["serviceAccountName"]).is_null() {
        set_field(modified, es, "serviceAccountName", &rs["serviceAccountName"]);
    }
    set_field(modified, es, "staticProvidedAPIs", &rs["staticProvidedAPIs"]);
    let strategy = |v: &Value| {
        if v.is_null() {
            json!({"name": "Default"})
        } else {
            v.clone()
        }
    };
    let want = strategy(&rs["upgradeStrategy"]);
    if strategy(&es["upgradeStrategy"]) != want {
        es["upgradeStrategy"] = want;
        *modified = true;
    }
}

/// SecurityContextConstraints: metadata; priority, privileged containers, capability lists,
/// volumes, host flags, allowPrivilegeEscalation (unset ⇒ true), the four strategies,
/// users/groups, seccomp and sysctl lists, read-only root filesystem — each replaced when it
/// differs (unset, empty and `false` compare equal).
pub(crate) fn ensure_security_context_constraints(
    modified: &mut bool,
    existing: &mut Value,
    required: &Value,
) {
    meta_merge(modified, existing, required);
    const FIELDS: [&str; 23] = [
        "priority",
        "allowPrivilegedContainer",
        "defaultAddCapabilities",
        "requiredDropCapabilities",
        "allowedCapabilities",
        "allowHostDirVolumePlugin",
        "volumes",
        "allowedFlexVolumes",
        "allowHostNetwork",
        "allowHostPorts",
        "allowHostPID",
        "allowHostIPC",
        "defaultAllowPrivilegeEscalation",
        "seLinuxContext",
        "runAsUser",
        "supplementalGroups",
        "fsGroup",
        "readOnlyRootFilesystem",
        "users",
        "groups",
        "seccompProfiles",
        "allowedUnsafeSysctls",
        "forbiddenSysctls",
    ];
    for f in FIELDS {
        set_field(modified, existing, f, &required[f]);
    }
    let ape = |v: &Value| v.as_bool().unwrap_or(true);
    if ape(&existing["allowPrivilegeEscalation"]) != ape(&required["allowPrivilegeEscalation"]) {
        existing["allowPrivilegeEscalation"] = json!(ape(&required["allowPrivilegeEscalation"]));
        *modified = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_stream_tags_are_never_removed_and_import_mode_defaults() {
        let mut e = json!({"metadata": {"name": "is"}, "spec": {"tags": [
            {"name": "a", "from": {"kind": "DockerImage", "name": "q/a:1"}, "importPolicy": {"importMode": "Legacy"}},
            {"name": "extra", "from": {"kind": "DockerImage", "name": "q/x"}}]}});
        let r = json!({"metadata": {"name": "is"}, "spec": {"tags": [
            {"name": "a", "from": {"kind": "DockerImage", "name": "q/a:1"}}]}});
        let mut m = false;
        ensure_image_stream(&mut m, &mut e, &r);
        assert!(!m);
        let r2 = json!({"metadata": {"name": "is"}, "spec": {"tags": [
            {"name": "a", "from": {"kind": "DockerImage", "name": "q/a:2"}}, {"name": "b"}]}});
        ensure_image_stream(&mut m, &mut e, &r2);
        assert!(m);
        let names: Vec<_> = e["spec"]["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(names, [json!("a"), json!("extra"), json!("b")]);
        assert_eq!(e["spec"]["tags"][0]["from"]["name"], "q/a:2");
    }

    #[test]
    fn scc_allow_privilege_escalation_defaults_true() {
        let mut e = json!({"metadata": {"name": "s"}, "allowPrivilegeEscalation": true, "users": []});
        let mut m = false;
        ensure_security_context_constraints(&mut m, &mut e, &json!({"metadata": {"name": "s"}}));
        assert!(!m);
        ensure_security_context_constraints(
            &mut m,
            &mut e,
            &json!({"metadata": {"name": "s"}, "allowPrivilegeEscalation": false, "priority": 10}),
        );
        assert!(m);
        assert_eq!(
            (e["allowPrivilegeEscalation"].clone(), e["priority"].clone()),
            (json!(false), json!(10))
        );
    }

    #[test]
    fn operator_group_upgrade_strategy_defaults() {
        let mut e = json!({"metadata": {"name": "og"}, "spec": {"upgradeStrategy": {"name": "Default"}}});
        let mut m = false;
        ensure_operator_group(&mut m, &mut e, &json!({"metadata": {"name": "og"}, "spec": {}}));
        assert!(!m);
        ensure_operator_group(
            &mut m,
            &mut e,
            &json!({"metadata": {"name": "og"}, "spec": {"targetNamespaces": ["a"]}}),
        );
        assert!(m);
        assert_eq!(e["spec"]["targetNamespaces"], json!(["a"]));
    }
}
