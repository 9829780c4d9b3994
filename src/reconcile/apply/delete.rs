//! Deletion bookkeeping (upstream `lib/resourcedelete`): which deletions were
//! requested and which are verified gone.

use std::collections::BTreeMap;

/// Annotation marking a deletion manifest.
pub(crate) const DELETE_ANNOTATION: &str = "release.openshift.io/delete";

/// State of one deletion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeletionState {
    /// DELETE sent, the object is still there.
    Requested,
    /// The object is gone.
    Verified,
}

/// Deletions by task key (`deployment "ns/name"`), kept in memory for the process lifetime.
#[derive(Clone, Debug, Default)]
pub struct DeletionTracker {
    states: BTreeMap<String, DeletionState>,
}

impl DeletionTracker {
    /// Records a sent DELETE.
    pub fn requested(&mut self, key: &str) {
        self.states.insert(key.to_owned(), DeletionState::Requested);
    }

    /// Records that the object is gone.
    pub fn verified(&mut self, key: &str) {
        self.states.insert(key.to_owned(), DeletionState::Verified);
    }

    /// Whether a DELETE was sent and not yet verified.
    pub(crate) fn is_requested(&self, key: &str) -> bool {
        self.states.get(key) == Some(&DeletionState::Requested)
    }

    /// Keys of deletions in progress, sorted.
    pub(crate) fn in_progress(&self) -> Vec<String> {
        self.states
            .iter()
            .filter(|(_, s)| **s == DeletionState::Requested)
            .map(|(k, _)| k.clone())
            .collect()
    }
}
