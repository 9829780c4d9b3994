//! The upstream operator's cluster metrics (`pkg/cvo/metrics.go` in
//! openshift/cluster-version-operator), computed from the ClusterVersion, the ClusterOperators,
//! the installer ConfigMaps and the release the engine applies: pure, no I/O, no clock.
//!
//! Every value that is a time is in seconds since the Unix epoch, as upstream's gauges are.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::openshift::{
    UpdateState,
    condition::{Condition, ConditionStatus, find},
    config_v1::{ClusterOperator, ClusterVersion, UpdateHistory},
};

/// One sample: the family name, its labels in order, the value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Metric name, e.g. `cluster_version`.
    pub name: &'static str,
    /// Label pairs in the order upstream declares them.
    pub labels: Vec<(&'static str, String)>,
    /// The value.
    pub value: f64,
}

/// How the cluster was installed, from the `openshift-config` ConfigMaps
/// `openshift-install` (type `openshift-install`) or, when it is absent,
/// `openshift-install-manifests` (type `other`); their `version` and `invoker` keys, each
/// `<missing>` when the key is absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Installer {
    /// Neither ConfigMap exists: upstream's sample with empty labels.
    #[default]
    Unknown,
    /// One of them exists.
    Known {
        /// `openshift-install` or `other`.
        kind: &'static str,
        /// `data.version`.
        version: Option<String>,
        /// `data.invoker`.
        invoker: Option<String>,
    },
}

/// The release the operator runs: upstream's "current" (the payload it applies).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CurrentRelease {
    /// Release version (empty while unknown).
    pub version: String,
    /// Release image pull spec.
    pub image: String,
    /// When the release image was created; `None` ⇒ the `current` sample is 0.
    pub created: Option<DateTime<Utc>>,
}

/// The engine's progress through the payload, for `cluster_version_payload` and
/// `cluster_operator_payload_errors`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PayloadProgress {
    /// Version being applied.
    pub version: String,
    /// Tasks done in the current pass.
    pub done: usize,
    /// Tasks in the payload (0 ⇒ no payload loaded: no samples).
    pub total: usize,
    /// Failed manifests of the current pass.
    pub errors: usize,
}

/// What the cluster metrics are computed from.
#[derive(Clone, Debug, Default)]
pub struct ClusterInputs {
    /// The `version` ClusterVersion, `None` when absent.
    pub cluster_version: Option<ClusterVersion>,
    /// All ClusterOperators.
    pub cluster_operators: Vec<ClusterOperator>,
    /// The installer ConfigMaps.
    pub installer: Installer,
    /// The release the operator applies.
    pub current: CurrentRelease,
    /// `--update-service` when given (it wins over `spec.upstream` in the `upstream` label).
    pub update_service: Option<String>,
    /// The engine's payload progress.
    pub payload: PayloadProgress,
    /// When the update service last answered with a usable graph.
    pub update_retrieval: Option<DateTime<Utc>>,
}

fn secs(t: Option<DateTime<Utc>>) -> f64 {
    t.map_or(0.0, |t| t.timestamp() as f64)
}

fn sample(name: &'static str, labels: &[(&'static str, &str)], value: f64) -> Sample {
    Sample {
        name,
        labels: labels.iter().map(|(k, v)| (*k, (*v).to_string())).collect(),
        value,
    }
}

/// The latest time the ClusterVersion records: its creation, any condition's last transition,
/// any history entry's start or completion (upstream `mostRecentTimestamp`).
fn most_recent(cv: &ClusterVersion) -> Option<DateTime<Utc>> {
    let created = cv
        .metadata
        .creation_timestamp
        .as_ref()
        .and_then(|t| to_chrono(&t.0));
    let conds = cv.status.conditions.iter().filter_map(|c| c.last_transition_time);
    let hist = cv
        .status
        .history
        .iter()
        .flat_map(|h| [h.started_time, h.completion_time])
        .flatten();
    created.into_iter().chain(conds).chain(hist).max()
}

fn to_chrono(t: &k8s_openapi::jiff::Timestamp) -> Option<DateTime<Utc>> {
    DateTime::<Utc>::from_timestamp(t.as_second(), 0)
}

/// `1` True, `0` False, `None` for Unknown (upstream skips those).
fn truth(c: &Condition) -> Option<f64> {
    match c.status {
        ConditionStatus::True => Some(1.0),
        ConditionStatus::False => Some(0.0),
        _ => None,
    }
}

/// The `cluster_version` samples (and the `cluster_operator_up` of `version`), upstream's
/// `Collect` for the ClusterVersion.
fn version_samples(inp: &ClusterInputs, out: &mut Vec<Sample>) {
    const CV: &str = "cluster_version";
    let cur = &inp.current;
    let completed_entry: Option<(usize, &UpdateHistory)> = inp.cluster_version.as_ref().and_then(|cv| {
        cv.status
            .history
            .iter()
            .enumerate()
            .find(|(_, h)| h.state == UpdateState::Completed)
    });
    let completed = completed_entry.map_or("", |(_, h)| h.version.as_str());
    if let Some(cv) = &inp.cluster_version {
        let history = &cv.status.history;
        if let Some((i, h)) = completed_entry {
            let previous = history[i + 1..]
                .iter()
                .find(|p| p.state == UpdateState::Completed)
                .map_or("", |p| p.version.as_str());
            out.push(sample(
                CV,
                &[
                    ("type", "completed"),
                    ("version", &h.version),
                    ("image", &h.image),
                    ("from_version", previous),
                ],
                secs(h.completion_time),
            ));
        }
        let created = secs(
            cv.metadata
                .creation_timestamp
                .as_ref()
                .and_then(|t| to_chrono(&t.0)),
        );
        let initial = history.last();
        let (iv, ii) = initial.map_or(("", ""), |h| (h.version.as_str(), h.image.as_str()));
        out.push(sample(
            CV,
            &[
                ("type", "initial"),
                ("version", iv),
                ("image", ii),
                ("from_version", ""),
            ],
            created,
        ));
        let from = if completed.is_empty() { "" } else { iv };
        out.push(sample(
            CV,
            &[
                ("type", "cluster"),
                ("version", &cur.version),
                ("image", &cur.image),
                ("from_version", from),
            ],
            created,
        ));
        if let Some(d) = &cv.spec.desired_update {
            let image = d.image.as_deref().unwrap_or_default();
            if image != cur.image {
                out.push(sample(
                    CV,
                    &[
                        ("type", "desired"),
                        ("version", d.version.as_deref().unwrap_or_default()),
                        ("image", image),
                        ("from_version", completed),
                    ],
                    secs(most_recent(cv)),
                ));
            }
        }
        if let Some(f) = find(&cv.status.conditions, "Failing").filter(|c| c.is_true()) {
            out.push(sample(
                CV,
                &[
                    ("type", "failure"),
                    ("version", &cur.version),
                    ("image", &cur.image),
                    ("from_version", completed),
                ],
                secs(f.last_transition_time),
            ));
        }
        if let Some(h) = history.first().filter(|h| h.state == UpdateState::Partial) {
            out.push(sample(
                CV,
                &[
                    ("type", "updating"),
                    ("version", &h.version),
                    ("image", &h.image),
                    ("from_version", completed),
                ],
                secs(h.started_time),
            ));
        }
    }
    out.push(sample(
        CV,
        &[
            ("type", "current"),
            ("version", &cur.version),
            ("image", &cur.image),
            ("from_version", completed),
        ],
        secs(cur.created),
    ));
}

/// Every upstream cluster sample, in upstream's order of families (unsorted within a family).
pub fn samples(inp: &ClusterInputs) -> Vec<Sample> {
    let mut out = Vec::new();
    version_samples(inp, &mut out);
    let completed = inp.cluster_version.as_ref().and_then(|cv| {
        cv.status
            .history
            .iter()
            .find(|h| h.state == UpdateState::Completed)
            .map(|h| h.version.clone())
    });
    if let Some(cv) = &inp.cluster_version {
        let st = &cv.status;
        let retrieved = find(&st.conditions, "RetrievedUpdates").is_some_and(|c| c.is_true());
        let n = st.available_updates.as_ref().map_or(0, Vec::len);
        let upstream = cv.spec.upstream.as_deref().filter(|u| !u.is_empty());
        if upstream.is_some() || n > 0 || retrieved {
            let label = inp
                .update_service
                .as_deref()
                .filter(|u| !u.is_empty())
                .or(upstream)
                .unwrap_or("<default>");
            out.push(sample(
                "cluster_version_available_updates",
                &[
                    ("upstream", label),
                    ("channel", cv.spec.channel.as_deref().unwrap_or_default()),
                ],
                n as f64,
            ));
        }
        for name in &st.capabilities.known_capabilities {
            let on = st.capabilities.enabled_capabilities.contains(name);
            out.push(sample(
                "cluster_version_capability",
                &[("name", name)],
                f64::from(u8::from(on)),
            ));
        }
        for cu in &st.conditional_updates {
            for c in &cu.conditions {
                out.push(sample(
                    "cluster_version_conditional_update_condition_seconds",
                    &[
                        ("version", &cu.release.version),
                        ("condition", &c.type_),
                        ("status", c.status.as_str()),
                        ("reason", c.reason()),
                    ],
                    secs(c.last_transition_time),
                ));
            }
        }
        // Only with the ClusterUpdateAcceptRisks gate: the engine fills
        // `status.conditionalUpdateRisks` (each risk once, with its `Applies` condition) only
        // then, so an empty list means the gate is off (upstream checks the gate itself).
        for risk in &st.conditional_update_risks {
            for c in risk.conditions.iter().filter(|c| c.type_ == "Applies") {
                let value = match c.status {
                    ConditionStatus::True => 1.0,
                    ConditionStatus::False => 0.0,
                    ConditionStatus::Unknown => -1.0,
                };
                out.push(sample(
                    "cluster_version_risk_conditions",
                    &[
                        ("condition", &c.type_),
                        ("risk", &risk.name),
                        ("reason", c.reason()),
                    ],
                    value,
                ));
            }
        }
    }
    for co in &inp.cluster_operators {
        let name = co.metadata.name.as_deref().unwrap_or_default();
        let version = co
            .status
            .versions
            .iter()
            .find(|v| v.name == "operator")
            .map_or("", |v| v.version.as_str());
        let avail = find(&co.status.conditions, "Available");
        out.push(sample(
            "cluster_operator_up",
            &[
                ("name", name),
                ("version", version),
                ("reason", avail.map_or("NoAvailableCondition", Condition::reason)),
            ],
            avail.map_or(0.0, |c| f64::from(u8::from(c.is_true()))),
        ));
    }
    match &inp.cluster_version {
        Some(cv) => {
            let avail = find(&cv.status.conditions, "Available");
            out.push(sample(
                "cluster_operator_up",
                &[
                    ("name", "version"),
                    ("version", completed.as_deref().unwrap_or_default()),
                    ("reason", avail.map_or("NoAvailableCondition", Condition::reason)),
                ],
                avail.map_or(0.0, |c| f64::from(u8::from(c.is_true()))),
            ));
        }
        None => out.push(sample(
            "cluster_operator_up",
            &[
                ("name", "version"),
                ("version", ""),
                ("reason", "ClusterVersionNotFound"),
            ],
            0.0,
        )),
    }
    for co in &inp.cluster_operators {
        let name = co.metadata.name.as_deref().unwrap_or_default();
        for c in &co.status.conditions {
            if let Some(v) = truth(c) {
                out.push(sample(
                    "cluster_operator_conditions",
                    &[("name", name), ("condition", &c.type_), ("reason", c.reason())],
                    v,
                ));
            }
        }
    }
    match &inp.cluster_version {
        Some(cv) => {
            for c in &cv.status.conditions {
                if let Some(v) = truth(c) {
                    out.push(sample(
                        "cluster_operator_conditions",
                        &[
                            ("name", "version"),
                            ("condition", &c.type_),
                            ("reason", c.reason()),
                        ],
                        v,
                    ));
                }
            }
        }
        None => out.push(sample(
            "cluster_operator_conditions",
            &[
                ("name", "version"),
                ("condition", "Available"),
                ("reason", "ClusterVersionNotFound"),
            ],
            0.0,
        )),
    }
    match &inp.installer {
        Installer::Unknown => out.push(sample(
            "cluster_installer",
            &[("type", ""), ("version", ""), ("invoker", "")],
            1.0,
        )),
        Installer::Known {
            kind,
            version,
            invoker,
        } => out.push(sample(
            "cluster_installer",
            &[
                ("type", kind),
                ("version", version.as_deref().unwrap_or("<missing>")),
                ("invoker", invoker.as_deref().unwrap_or("<missing>")),
            ],
            1.0,
        )),
    }
    let p = &inp.payload;
    if p.total > 0 {
        out.push(sample(
            "cluster_version_payload",
            &[("version", &p.version), ("type", "applied")],
            p.done as f64,
        ));
        out.push(sample(
            "cluster_version_payload",
            &[("version", &p.version), ("type", "pending")],
            p.total.saturating_sub(p.done) as f64,
        ));
        if p.errors > 0 {
            out.push(sample(
                "cluster_operator_payload_errors",
                &[("version", &p.version)],
                p.errors as f64,
            ));
        }
    }
    if let Some(t) = inp.update_retrieval {
        out.push(sample(
            "cluster_version_operator_update_retrieval_timestamp_seconds",
            &[("name", "")],
            t.timestamp() as f64,
        ));
    }
    out
}

/// Counts ClusterOperator condition status changes seen between observations
/// (`cluster_operator_condition_transitions{name, condition}`; upstream counts them in its
/// ClusterOperator informer's update handler). The first observation of an operator counts
/// nothing.
#[derive(Clone, Debug, Default)]
pub struct Transitions {
    last: BTreeMap<(String, String), ConditionStatus>,
    counts: BTreeMap<(String, String), u64>,
}

impl Transitions {
    /// Records the operators' current condition statuses, counting every change since the
    /// previous observation.
    pub fn observe(&mut self, operators: &[ClusterOperator]) {
        for co in operators {
            let name = co.metadata.name.clone().unwrap_or_default();
            for c in &co.status.conditions {
                let key = (name.clone(), c.type_.clone());
                if let Some(prev) = self.last.insert(key.clone(), c.status)
                    && prev != c.status
                {
                    *self.counts.entry(key).or_default() += 1;
                }
            }
        }
    }

    /// The `cluster_operator_condition_transitions` samples.
    pub fn samples(&self) -> Vec<Sample> {
        self.counts
            .iter()
            .map(|((n, c), v)| {
                sample(
                    "cluster_operator_condition_transitions",
                    &[("name", n), ("condition", c)],
                    *v as f64,
                )
            })
            .collect()
    }
}

/// Help texts of the upstream families, by name (upstream's wording shortened).
pub fn help(name: &str) -> &'static str {
    match name {
        "cluster_version" => {
            "Reports the version of the cluster in terms of seconds since the epoch. Type 'current' is the version being applied, 'initial' the version installed, 'cluster' the current version with the cluster's creation time, 'desired' a requested update not yet reached, 'failure' a failing update, 'completed' the last completed update and 'updating' the update in progress."
        }
        "cluster_version_available_updates" => {
            "Report the count of available versions for an upstream and channel."
        }
        "cluster_version_capability" => {
            "Report currently enabled (1) and known-but-disabled (0) cluster capabilities."
        }
        "cluster_version_conditional_update_condition_seconds" => {
            "Time of the last transition of each condition of each conditional update, in seconds since the epoch."
        }
        "cluster_version_risk_conditions" => {
            "Report the risk conditions for cluster versions: 1 True, 0 False, -1 Unknown."
        }
        "cluster_operator_up" => {
            "1 if a cluster operator is Available=True, 0 otherwise, with its operator version and the Available reason."
        }
        "cluster_operator_conditions" => {
            "Report the conditions of cluster operators (and of the ClusterVersion as 'version'): 1 True, 0 False."
        }
        "cluster_operator_condition_transitions" => {
            "Reports the number of times a cluster operator condition changed status."
        }
        "cluster_installer" => {
            "Reports info about the installation process and, if applicable, the install tool."
        }
        "cluster_version_payload" => "Report the number of entries in the payload applied and pending.",
        "cluster_operator_payload_errors" => "Report the number of errors encountered applying the payload.",
        "cluster_version_operator_update_retrieval_timestamp_seconds" => {
            "Reports the last time the update service was reached successfully, in seconds since the epoch."
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests;
