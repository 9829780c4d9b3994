//! [`Stored`]: one object as the store keeps it, its JSON text plus the few fields selectors
//! read, instead of a `serde_json::Value` tree.
//!
//! A `Value` object is a `BTreeMap` whose every node is a fixed ~630-byte allocation, plus one
//! allocation per key and per string: a 1.5 KB ConfigMap with `managedFields` takes ~8 KiB as
//! a tree (9 maps), ~1.6 KiB as text. Reads parse the text (a GET answers it as it is; a
//! list or a watch event embeds it without parsing); writes parse the stored object once.

use serde_json::Value;

/// One stored object: its compact JSON (keys in `Value`'s sorted order, so answers are
/// byte for byte what serializing the tree gave), its name and namespace (`""` for
/// cluster-scoped kinds) and its labels (what label and field selectors read). Immutable:
/// the store and the event log share one `Arc<Stored>` per version of an object.
#[derive(Debug, PartialEq, Eq)]
pub struct Stored {
    json: Box<str>,
    namespace: Box<str>,
    name: Box<str>,
    /// `metadata.labels` with string values, in key order.
    labels: Box<[(Box<str>, Box<str>)]>,
}

impl Stored {
    /// The compact form of `o`.
    pub fn new(o: &Value) -> Self {
        let meta = &o["metadata"];
        let text = |v: &Value| -> Box<str> { v.as_str().unwrap_or_default().into() };
        let mut labels: Vec<(Box<str>, Box<str>)> = meta["labels"]
            .as_object()
            .map(|l| {
                l.iter()
                    .filter_map(|(k, v)| Some((k.as_str().into(), v.as_str()?.into())))
                    .collect()
            })
            .unwrap_or_default();
        labels.sort();
        Self {
            // Serializing a `Value` cannot fail (its keys are strings).
            json: serde_json::to_string(o).unwrap_or_default().into_boxed_str(),
            namespace: text(&meta["namespace"]),
            name: text(&meta["name"]),
            labels: labels.into_boxed_slice(),
        }
    }

    /// The object's JSON text.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The object as a `Value` (parsed from its text, which the store wrote: `Null` can only
    /// come from a bug).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `metadata.namespace` (`""` for cluster-scoped objects).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The value of label `key`, if set.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &*self.labels[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_the_json_and_what_selectors_read() {
        let o = json!({"kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n",
            "labels": {"z": "1", "app": "x", "b": "2"}}, "data": {"k": "v"}});
        let s = Stored::new(&o);
        assert_eq!(s.value(), o);
        assert_eq!(s.json(), serde_json::to_string(&o).unwrap_or_default());
        assert_eq!((s.name(), s.namespace()), ("a", "n"));
        assert_eq!(
            (s.label("app"), s.label("z"), s.label("b")),
            (Some("x"), Some("1"), Some("2"))
        );
        assert_eq!(s.label("c"), None);
        let bare = Stored::new(&json!({"metadata": {"name": "c"}}));
        assert_eq!((bare.namespace(), bare.label("app")), ("", None));
    }
}
