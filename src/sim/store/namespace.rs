//! The namespace lifecycle (kubernetes `pkg/controller/namespace`): a terminating namespace
//! is removed once its objects are gone.

use serde_json::json;

use super::{ApiError, NamespaceState, ResourceType, Store, TypeRef, WriteMode};

impl Store {
    /// Whether namespace `ns` exists and takes new objects.
    pub fn namespace_state(&self, ns: &str) -> NamespaceState {
        let key = ("/namespaces".to_owned(), (String::new(), ns.to_owned()));
        match self.objects.get(&key.0).and_then(|o| o.get(&key.1)) {
            None => NamespaceState::Missing,
            Some(o) if o.value()["metadata"]["deletionTimestamp"].is_string() => NamespaceState::Terminating,
            Some(_) => NamespaceState::Active,
        }
    }

    /// `(kind, name)` of every object in namespace `ns`.
    pub(super) fn namespace_contents(&self, ns: &str) -> Vec<(TypeRef, String)> {
        let mut out = Vec::new();
        for (key, objs) in &self.objects {
            let Some(t) = self
                .types
                .iter()
                .find(|t| t.namespaced && &t.storage_key() == key)
            else {
                continue;
            };
            for ((_, name), _) in objs
                .range((ns.to_owned(), String::new())..)
                .take_while(|((n, _), _)| n == ns)
            {
                out.push((t.clone(), name.clone()));
            }
        }
        out
    }

    pub(super) fn after_removal(&mut self, t: &ResourceType, ns: &str) {
        if t.namespaced && self.namespace_state(ns) == NamespaceState::Terminating {
            // Errors here would only mean the namespace vanished meanwhile.
            let _ = self.finalize_namespace(ns);
        }
    }

    /// Removes a terminating namespace's `kubernetes` finalizer once it holds no objects
    /// (what the namespace controller does through `/finalize`).
    pub(super) fn finalize_namespace(&mut self, ns: &str) -> Result<(), ApiError> {
        if !self.namespace_contents(ns).is_empty() {
            return Ok(());
        }
        let Some(t) = self.find_plural("", "namespaces") else {
            return Ok(());
        };
        let Some(mut obj) = self.get(&t, "", ns) else {
            return Ok(());
        };
        if obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
        {
            obj["spec"]["finalizers"] = json!([]);
            self.write(&t, "", ns, obj, WriteMode::All)?;
        }
        Ok(())
    }
}
