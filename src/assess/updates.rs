//! The update offer: what a ClusterVersion says about the releases the cluster can update to,
//! read once from `spec` and `status` for every view that shows it (`cvo upgrade recommend`,
//! the dashboard's Updates view and overview line).
//!
//! The facts: the targets of `status.availableUpdates` (recommended) and
//! `status.conditionalUpdates` (each with its `Recommended` condition and its risks, the risks
//! named in `riskNames` resolved against `status.conditionalUpdateRisks`), which of them
//! `spec.desiredUpdate` requests and which risks it accepts, the channel facts (`spec.channel`,
//! `status.desired.channels`, `spec.upstream`), the `RetrievedUpdates` condition, and why
//! nothing may be offered (no channel, the current release not in the channel). Upstream
//! writes them in `pkg/cvo/availableupdates.go` of openshift/cluster-version-operator.
//!
//! Pure: no I/O, no text for a screen. The views word and colour these facts themselves.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};

use crate::{
    cluster::update_request::compare_versions_desc,
    openshift::{
        ClusterVersion, Condition, ConditionStatus, ConditionalUpdateRisk, Release, condition::find,
    },
};

/// The condition type the CVO reports update retrieval with.
pub const RETRIEVED_UPDATES: &str = "RetrievedUpdates";
/// The condition type of a conditional update.
pub const RECOMMENDED: &str = "Recommended";

/// Whether a target is a plain (recommended) edge or a conditional one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// In `status.availableUpdates`.
    Recommended,
    /// In `status.conditionalUpdates`.
    Conditional,
}

/// One risk of a conditional update.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TargetRisk {
    /// The risk: from the update's `risks`, or from `status.conditionalUpdateRisks` for a name
    /// in its `riskNames`; only the name when neither describes it.
    pub risk: ConditionalUpdateRisk,
    /// Whether some description of the risk exists (`false`: a name in `riskNames` that
    /// `status.conditionalUpdateRisks` does not list).
    pub described: bool,
    /// Whether `spec.desiredUpdate.acceptRisks` names it.
    pub accepted: bool,
}

/// One update target.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The target release (version, image, url, channels).
    pub release: Release,
    /// Recommended or conditional.
    pub kind: TargetKind,
    /// The `Recommended` condition of a conditional update (`None` for a recommended one, or
    /// a conditional one without the condition).
    pub recommended: Option<Condition>,
    /// Its risks, in the update's order: `risks` first, then the `riskNames` not among them
    /// (none for a recommended update).
    pub risks: Vec<TargetRisk>,
    /// Whether `spec.desiredUpdate` asks for this release.
    pub requested: bool,
    /// For a recommended target: a conditional update names the same release (the same
    /// image, or the same version when either has no image). The CVO adds a conditional
    /// update whose `Recommended` is True to `availableUpdates` as well.
    pub also_conditional: bool,
    /// Position in its status list (`availableUpdates` or `conditionalUpdates`).
    pub status_index: usize,
}

impl Target {
    /// The `Recommended` condition's status, `None` without one.
    pub fn recommended_status(&self) -> Option<ConditionStatus> {
        self.recommended.as_ref().map(|c| c.status)
    }
}

/// The release `spec.desiredUpdate` asks for, when it is not the one applied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestedUpdate {
    /// `spec.desiredUpdate.version` (may be empty).
    pub version: String,
    /// `spec.desiredUpdate.image` (may be empty).
    pub image: String,
}

/// The `RetrievedUpdates` condition, reduced to what decides the views.
#[derive(Clone, Debug, PartialEq)]
pub enum Retrieval {
    /// No condition: no CVO has asked the update service yet.
    NotAsked,
    /// `True`: the last retrieval succeeded.
    Ok {
        /// Reason (may be empty).
        reason: String,
        /// Message (may be empty).
        message: String,
        /// Last transition.
        since: Option<DateTime<Utc>>,
    },
    /// `False`: the last retrieval failed; the targets, if any, are an earlier answer.
    Failed {
        /// Reason (e.g. `RemoteFailed`, `NoChannel`).
        reason: String,
        /// Message (e.g. the service's status code and URL).
        message: String,
        /// Last transition.
        since: Option<DateTime<Utc>>,
    },
    /// `Unknown`.
    Unknown {
        /// Reason.
        reason: String,
        /// Message.
        message: String,
        /// Last transition.
        since: Option<DateTime<Utc>>,
    },
}

impl Retrieval {
    /// The condition's status (`None`: no condition).
    pub fn status(&self) -> Option<ConditionStatus> {
        match self {
            Self::NotAsked => None,
            Self::Ok { .. } => Some(ConditionStatus::True),
            Self::Failed { .. } => Some(ConditionStatus::False),
            Self::Unknown { .. } => Some(ConditionStatus::Unknown),
        }
    }

    /// Reason, message and last transition of the condition, when there is one.
    pub fn parts(&self) -> Option<(&str, &str, Option<DateTime<Utc>>)> {
        match self {
            Self::NotAsked => None,
            Self::Ok {
                reason,
                message,
                since,
            }
            | Self::Failed {
                reason,
                message,
                since,
            }
            | Self::Unknown {
                reason,
                message,
                since,
            } => Some((reason, message, *since)),
        }
    }
}

/// Why the update service is not asked, or cannot answer for this release: the channel facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChannelProblem {
    /// `spec.channel` is empty: the CVO does not ask the update service.
    NoChannel,
    /// The current release lists channels (`status.desired.channels`) and `spec.channel` is
    /// not among them.
    NotListed {
        /// The channel set.
        channel: String,
        /// The channels the current release lists.
        listed: Vec<String>,
    },
}

/// Everything a ClusterVersion says about updating from its current release.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateOffer {
    /// The release the cluster runs or applies (`status.desired.version`): the update
    /// service is asked for updates from it.
    pub current: String,
    /// The newest Completed release in history, when it differs from `current` (an update
    /// is in progress from it).
    pub updating_from: Option<String>,
    /// `spec.channel` (empty: none).
    pub channel: String,
    /// The channels the current release lists (`status.desired.channels`).
    pub channels: Vec<String>,
    /// `spec.upstream` (empty: the default update service).
    pub upstream: String,
    /// `spec.desiredUpdate` when it names a release other than the one applied.
    pub requested: Option<RequestedUpdate>,
    /// `spec.desiredUpdate.acceptRisks` names.
    pub accepted: Vec<String>,
    /// The `RetrievedUpdates` condition.
    pub retrieval: Retrieval,
    /// `status.availableUpdates`, newest first (ties in status order).
    pub recommended: Vec<Target>,
    /// `status.conditionalUpdates`, newest first (ties in status order).
    pub conditional: Vec<Target>,
}

/// Newest first by semantic-version precedence, versions that are not semver last (by text,
/// descending); ties keep their order.
fn newest_first(a: &Target, b: &Target) -> Ordering {
    compare_versions_desc(&a.release.version, &b.release.version)
}

/// Whether two releases are the same: the same image when both have one, else the same
/// version.
fn same_release(a: &Release, b: &Release) -> bool {
    if a.image.is_empty() || b.image.is_empty() {
        a.version == b.version
    } else {
        a.image == b.image
    }
}

impl UpdateOffer {
    /// Reads the offer from a ClusterVersion.
    pub fn from_cluster_version(cv: &ClusterVersion) -> Self {
        let spec = &cv.spec;
        let status = &cv.status;
        let accepted: Vec<String> = spec
            .desired_update
            .iter()
            .flat_map(|d| d.accept_risks.iter().map(|r| r.name.clone()))
            .collect();
        let requested = spec.desired_update.as_ref().and_then(|d| {
            let version = d.version.clone().unwrap_or_default();
            let image = d.image.clone().unwrap_or_default();
            let applied = (!image.is_empty() && image == status.desired.image)
                || (image.is_empty() && !version.is_empty() && version == status.desired.version);
            let empty = version.is_empty() && image.is_empty();
            (!(applied || empty)).then_some(RequestedUpdate { version, image })
        });
        let is_requested = |r: &Release| {
            requested.as_ref().is_some_and(|q| {
                (!q.image.is_empty() && q.image == r.image) || (q.image.is_empty() && q.version == r.version)
            })
        };
        let mut conditional: Vec<Target> = status
            .conditional_updates
            .iter()
            .enumerate()
            .map(|(i, u)| {
                let mut risks: Vec<TargetRisk> = u
                    .risks
                    .iter()
                    .map(|r| TargetRisk {
                        risk: r.clone(),
                        described: true,
                        accepted: accepted.contains(&r.name),
                    })
                    .collect();
                // Newer APIs name the risks and describe them once in conditionalUpdateRisks.
                for name in &u.risk_names {
                    if risks.iter().any(|r| &r.risk.name == name) {
                        continue;
                    }
                    let found = status.conditional_update_risks.iter().find(|r| &r.name == name);
                    risks.push(TargetRisk {
                        risk: found.cloned().unwrap_or_else(|| ConditionalUpdateRisk {
                            name: name.clone(),
                            ..ConditionalUpdateRisk::default()
                        }),
                        described: found.is_some(),
                        accepted: accepted.contains(name),
                    });
                }
                Target {
                    release: u.release.clone(),
                    kind: TargetKind::Conditional,
                    recommended: find(&u.conditions, RECOMMENDED).cloned(),
                    risks,
                    requested: is_requested(&u.release),
                    also_conditional: false,
                    status_index: i,
                }
            })
            .collect();
        let mut recommended: Vec<Target> = status
            .available_updates
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, r)| Target {
                release: r.clone(),
                kind: TargetKind::Recommended,
                recommended: None,
                risks: Vec::new(),
                requested: is_requested(r),
                also_conditional: status
                    .conditional_updates
                    .iter()
                    .any(|c| same_release(&c.release, r)),
                status_index: i,
            })
            .collect();
        recommended.sort_by(newest_first);
        conditional.sort_by(newest_first);
        let retrieval = match find(&status.conditions, RETRIEVED_UPDATES) {
            None => Retrieval::NotAsked,
            Some(c) => {
                let (reason, message, since) = (
                    c.reason().to_string(),
                    c.message().to_string(),
                    c.last_transition_time,
                );
                match c.status {
                    ConditionStatus::True => Retrieval::Ok {
                        reason,
                        message,
                        since,
                    },
                    ConditionStatus::False => Retrieval::Failed {
                        reason,
                        message,
                        since,
                    },
                    ConditionStatus::Unknown => Retrieval::Unknown {
                        reason,
                        message,
                        since,
                    },
                }
            }
        };
        Self {
            current: status.desired.version.clone(),
            updating_from: cv
                .current_version()
                .filter(|v| *v != status.desired.version)
                .map(str::to_string),
            channel: spec.channel.clone().unwrap_or_default(),
            channels: status.desired.channels.clone(),
            upstream: spec.upstream.clone().unwrap_or_default(),
            requested,
            accepted,
            retrieval,
            recommended,
            conditional,
        }
    }

    /// The targets once each, as the dashboard lists them: recommended targets that no
    /// conditional update names, then the conditional ones (which keep their risks); each
    /// group newest first.
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        self.recommended
            .iter()
            .filter(|t| !t.also_conditional)
            .chain(&self.conditional)
    }

    /// Whether no target at all is offered.
    pub fn is_empty(&self) -> bool {
        self.recommended.is_empty() && self.conditional.is_empty()
    }

    /// Why the update service is not asked or cannot answer for this release, if it is so.
    pub fn channel_problem(&self) -> Option<ChannelProblem> {
        if self.channel.is_empty() {
            Some(ChannelProblem::NoChannel)
        } else if !self.channels.is_empty() && !self.channels.contains(&self.channel) {
            Some(ChannelProblem::NotListed {
                channel: self.channel.clone(),
                listed: self.channels.clone(),
            })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests;
