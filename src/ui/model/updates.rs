//! The Updates view's model: the targets the ClusterVersion offers (recommended, then
//! conditional with their risks), what is requested, the channels the current release lists,
//! and, when there is nothing to offer, why — worded and coloured for the screen.
//!
//! The facts are the [`UpdateOffer`] of [`crate::assess::updates`] (the one reading of
//! `status.availableUpdates`, `status.conditionalUpdates` and `RetrievedUpdates`, shared with
//! `cvo upgrade recommend`); this module adds the severities, the words and the notes, and
//! what the embedded engine's update-service client fetched ([`FetchedUpdates`]).

use crate::l10n::{tr, trf};
use chrono::{DateTime, Utc};

use crate::{
    assess::updates::{ChannelProblem, Target, TargetKind, TargetRisk, UpdateOffer},
    openshift::{ClusterVersion, ConditionStatus, Release},
    reconcile::api::{FetchedUpdates, NotOffered, WhyNotOffered, updates::last_good_answer},
    ui::theme::Level,
};

/// At most this many releases not offered are named in the note; the rest are counted.
const NOT_OFFERED_NAMED: usize = 6;

/// Whether a target is a plain (recommended) edge or a conditional one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKind {
    /// In `status.availableUpdates`.
    Recommended,
    /// In `status.conditionalUpdates`.
    Conditional,
}

impl UpdateKind {
    /// The word the table shows.
    pub fn word(self) -> &'static str {
        match self {
            Self::Recommended => tr!("update-kind-recommended", "recommended"),
            Self::Conditional => tr!("update-kind-conditional", "conditional"),
        }
    }
}

/// One risk of a conditional update, shown in full.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RiskRow {
    /// CamelCase name.
    pub name: String,
    /// What the risk is.
    pub message: String,
    /// Where it is described.
    pub url: String,
    /// Whether `spec.desiredUpdate.acceptRisks` names it already.
    pub accepted: bool,
}

/// One update target.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateRow {
    /// The target release (version, image, url, channels).
    pub release: Release,
    /// Recommended or conditional.
    pub kind: UpdateKind,
    /// The `Recommended` condition of a conditional update: status, reason, message.
    pub recommended: Option<(ConditionStatus, String, String)>,
    /// Its risks (none for a recommended update).
    pub risks: Vec<RiskRow>,
    /// Whether `spec.desiredUpdate` asks for this release.
    pub requested: bool,
    /// Severity of the row: Ok for recommended, Warn for a conditional update that is not
    /// recommended here (or whose evaluation failed), Ok when its risks do not apply.
    pub level: Level,
}

impl UpdateRow {
    /// The RECOMMENDED column: `yes`, or the condition's status and reason.
    pub fn recommended_word(&self) -> String {
        match (&self.kind, &self.recommended) {
            (UpdateKind::Recommended, _) => tr!("recommended-yes", "yes").into(),
            (UpdateKind::Conditional, None) => tr!("recommended-unknown", "unknown").into(),
            (UpdateKind::Conditional, Some((s, r, _))) => {
                let w = match s {
                    ConditionStatus::True => tr!("recommended-yes", "yes"),
                    ConditionStatus::False => tr!("recommended-no", "no"),
                    ConditionStatus::Unknown => tr!("recommended-unknown", "unknown"),
                };
                if r.is_empty() {
                    w.into()
                } else {
                    format!("{w} ({r})")
                }
            }
        }
    }
}

/// Everything the Updates view and the overview line show.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpdatesModel {
    /// There is a ClusterVersion to read.
    pub present: bool,
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
    /// `spec.desiredUpdate` when it names a release other than the one applied: (version,
    /// image).
    pub requested: Option<(String, String)>,
    /// `spec.desiredUpdate.acceptRisks` names.
    pub accepted: Vec<String>,
    /// The `RetrievedUpdates` condition: status, reason, message, last transition.
    pub retrieved: Option<(ConditionStatus, String, String, Option<DateTime<Utc>>)>,
    /// The targets: recommended first, then conditional, each by version order (newest
    /// first).
    pub rows: Vec<UpdateRow>,
    /// Why there is no target, or why the list may be stale: lines with a severity.
    pub notes: Vec<(String, Level)>,
    /// What the embedded engine's update-service client fetched for this release and channel
    /// (`None` without an engine that asks, or when it asked for another release or channel).
    pub fetched: Option<FetchedSummary>,
    /// Why the update service is not asked, or cannot answer for this release.
    pub channel_problem: Option<ChannelProblem>,
}

/// The part of the engine's [`FetchedUpdates`] the Updates view explains with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FetchedSummary {
    /// The update service asked.
    pub upstream: String,
    /// When it last answered with a usable graph.
    pub last_success: Option<DateTime<Utc>>,
    /// Whether its last attempt failed.
    pub failed: bool,
    /// The newer releases of the channel it does not offer, newest first.
    pub not_offered: Vec<NotOffered>,
}

impl RiskRow {
    fn of(r: &TargetRisk) -> Self {
        Self {
            name: r.risk.name.clone(),
            message: r.risk.message.clone(),
            url: r.risk.url.clone(),
            accepted: r.accepted,
        }
    }
}

impl UpdateRow {
    fn of(t: &Target) -> Self {
        let recommended = t
            .recommended
            .as_ref()
            .map(|c| (c.status, c.reason().to_string(), c.message().to_string()));
        let (kind, level) = match t.kind {
            TargetKind::Recommended => (UpdateKind::Recommended, Level::Ok),
            TargetKind::Conditional => (
                UpdateKind::Conditional,
                match t.recommended_status() {
                    Some(ConditionStatus::True) => Level::Ok,
                    _ => Level::Warn,
                },
            ),
        };
        Self {
            release: t.release.clone(),
            kind,
            recommended,
            risks: t.risks.iter().map(RiskRow::of).collect(),
            requested: t.requested,
            level,
        }
    }
}

impl UpdatesModel {
    /// Builds the model from the ClusterVersion (`None`: no ClusterVersion): the
    /// [`UpdateOffer`] it makes, worded and coloured for the screen.
    pub fn build(cv: Option<&ClusterVersion>, now: DateTime<Utc>) -> Self {
        let Some(cv) = cv else {
            return Self {
                notes: vec![(
                    tr!("updates-note-no-cv", "no ClusterVersion: nothing to update").into(),
                    Level::Warn,
                )],
                ..Self::default()
            };
        };
        let offer = UpdateOffer::from_cluster_version(cv);
        let retrieved = offer.retrieval.status().zip(offer.retrieval.parts()).map(
            |(status, (reason, message, since))| (status, reason.to_string(), message.to_string(), since),
        );
        let mut m = Self {
            present: true,
            current: offer.current.clone(),
            updating_from: offer.updating_from.clone(),
            channel: offer.channel.clone(),
            channels: offer.channels.clone(),
            upstream: offer.upstream.clone(),
            requested: offer
                .requested
                .as_ref()
                .map(|r| (r.version.clone(), r.image.clone())),
            accepted: offer.accepted.clone(),
            retrieved,
            rows: offer.targets().map(UpdateRow::of).collect(),
            notes: Vec::new(),
            fetched: None,
            channel_problem: offer.channel_problem(),
        };
        m.notes = m.explain(now);
        m
    }

    /// Adds what the engine's update-service client fetched (`f`), when it was asked for this
    /// release and channel, and explains again at `now`.
    pub fn with_fetched(&mut self, f: Option<&FetchedUpdates>, now: DateTime<Utc>) {
        let fetched = f
            .filter(|f| self.present && f.version == self.current && f.channel == self.channel)
            .map(|f| FetchedSummary {
                upstream: f.upstream.clone(),
                last_success: f.last_success,
                failed: f.retrieved_error.is_some(),
                not_offered: f.not_offered.clone(),
            });
        if fetched != self.fetched {
            self.fetched = fetched;
            self.notes = self.explain(now);
        }
    }

    /// Why the list is empty (or may be stale), most decisive first: no channel, the current
    /// release not in the channel, RetrievedUpdates=False with its reason and message (e.g.
    /// the service's status code and URL), the age of the last good retrieval.
    fn explain(&self, now: DateTime<Utc>) -> Vec<(String, Level)> {
        let mut notes = Vec::new();
        let cur = if self.current.is_empty() {
            tr!("updates-current-release", "the current release")
        } else {
            &self.current
        };
        match &self.channel_problem {
            Some(ChannelProblem::NoChannel) => notes.push((
                tr!(
                    "updates-note-no-channel",
                    "No channel is set (spec.channel), so the update service is not asked: choose one with c."
                )
                .into(),
                Level::Warn,
            )),
            Some(ChannelProblem::NotListed { channel, listed }) => notes.push((
                trf!(
                    "updates-note-not-listed",
                    "{cur} is not in channel {channel}: it lists {listed}; choose one of those with c.",
                    cur = cur,
                    channel = channel,
                    listed = listed.join(", ")
                ),
                Level::Warn,
            )),
            None => {}
        }
        let since = |t: &Option<DateTime<Utc>>| crate::ui::text::age(*t, now);
        match &self.retrieved {
            Some((ConditionStatus::False, reason, msg, t)) => {
                notes.push((
                    trf!(
                        "updates-note-retrieved-false",
                        "RetrievedUpdates=False ({reason}) for {age}: {msg}",
                        reason = reason,
                        age = since(t),
                        msg = msg
                    ),
                    Level::Error,
                ));
                if !self.rows.is_empty() {
                    // The engine's own record, else the time a cvo operator wrote into the
                    // message, else at least the failure's age.
                    let recorded = self
                        .fetched
                        .as_ref()
                        .filter(|f| f.failed)
                        .and_then(|f| f.last_success.map(|t| (f.upstream.clone(), t)))
                        .or_else(|| last_good_answer(msg));
                    let note = match recorded {
                        Some((url, at)) => trf!(
                            "updates-note-last-good",
                            "The targets below are the last good answer of {url}, {age} ago ({at}).",
                            url = url,
                            age = since(&Some(at)),
                            at = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                        ),
                        None => trf!(
                            "updates-note-last-good-unknown",
                            "The targets below are from the last good retrieval, more than {age} ago.",
                            age = since(t)
                        ),
                    };
                    notes.push((note, Level::Warn));
                }
            }
            Some((ConditionStatus::True, _, _, _))
                if self.rows.is_empty()
                    && self.fetched.as_ref().is_some_and(|f| f.not_offered.is_empty()) =>
            {
                let url = self
                    .fetched
                    .as_ref()
                    .map(|f| f.upstream.as_str())
                    .unwrap_or_default();
                notes.push((
                    trf!(
                        "updates-note-none-newer",
                        "No updates: {url} lists no release newer than {cur} in channel {channel}.",
                        url = url,
                        cur = cur,
                        channel = self.channel
                    ),
                    Level::Info,
                ));
            }
            Some((ConditionStatus::True, _, _, _)) if self.rows.is_empty() && self.fetched.is_some() => {}
            Some((ConditionStatus::True, _, _, t)) if self.rows.is_empty() => {
                let service = if self.upstream.is_empty() {
                    tr!("updates-default-service", "the default update service").to_string()
                } else {
                    self.upstream.clone()
                };
                notes.push((
                    trf!(
                        "updates-note-no-edge",
                        "No updates: {service} lists no edge from {cur} in channel {channel} (retrieved OK, \
                         condition unchanged for {age}). Newer releases may exist without a path from here yet.",
                        service = service,
                        cur = cur,
                        channel = self.channel,
                        age = since(t)
                    ),
                    Level::Info,
                ));
            }
            Some((ConditionStatus::Unknown, reason, msg, _)) => {
                notes.push((
                    trf!(
                        "updates-note-retrieved-unknown",
                        "RetrievedUpdates=Unknown ({reason}): {msg}",
                        reason = reason,
                        msg = msg
                    ),
                    Level::Warn,
                ));
            }
            None if self.rows.is_empty() && !self.channel.is_empty() => notes.push((
                tr!(
                    "updates-note-no-condition",
                    "No updates: the ClusterVersion has no RetrievedUpdates condition yet (no CVO has asked the \
                     update service)."
                )
                .into(),
                Level::Info,
            )),
            _ => {}
        }
        if let Some(f) = self.fetched.as_ref().filter(|f| !f.not_offered.is_empty()) {
            notes.push((not_offered_note(f, cur, &self.channel), Level::Info));
        }
        notes
    }

    /// The overview's one line: the targets by kind, or why there are none.
    pub fn summary(&self) -> (String, Level) {
        if !self.present {
            return (
                tr!("updates-summary-no-cv", "Updates: no ClusterVersion").into(),
                Level::Warn,
            );
        }
        let mut parts = Vec::new();
        let rec: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| r.kind == UpdateKind::Recommended)
            .map(|r| r.release.version.as_str())
            .collect();
        if !rec.is_empty() {
            parts.push(trf!(
                "updates-summary-recommended",
                "{versions} recommended",
                versions = rec.join(", ")
            ));
        }
        for r in self.rows.iter().filter(|r| r.kind == UpdateKind::Conditional) {
            let names: Vec<&str> = r.risks.iter().map(|k| k.name.as_str()).collect();
            parts.push(trf!(
                "updates-summary-conditional",
                "{version} conditional (risk: {risks})",
                version = r.release.version,
                risks = if names.is_empty() {
                    "-".into()
                } else {
                    names.join(", ")
                }
            ));
        }
        let mut line = if parts.is_empty() {
            let why = self.notes.first().map_or_else(
                || tr!("updates-summary-none-offered", "none offered").to_string(),
                |(n, _)| n.clone(),
            );
            trf!("updates-summary-none", "Updates (6): none. {why}", why = why)
        } else {
            trf!(
                "updates-summary",
                "Updates (6): {parts}",
                parts = parts.join(" · ")
            )
        };
        if let Some((v, i)) = &self.requested {
            let what = if v.is_empty() { i } else { v };
            line.push_str(&trf!(
                "updates-summary-requested",
                " · requested {what}",
                what = what
            ));
        }
        let level = if parts.is_empty() {
            self.notes.first().map_or(Level::Info, |(_, l)| *l)
        } else if self.notes.iter().any(|(_, l)| *l == Level::Error) {
            Level::Warn
        } else {
            Level::Ok
        };
        (line, level)
    }
}

/// The note naming the newer releases the service does not offer and why: `Not offered from
/// 4.16.3 in channel stable-4.16 (URL): 4.16.6 (no edge; update to 4.16.4 first), 4.16.5 (risk
/// R applies; in the table) …` (never suggesting `--force`).
fn not_offered_note(f: &FetchedSummary, cur: &str, channel: &str) -> String {
    let words: Vec<String> = f
        .not_offered
        .iter()
        .take(NOT_OFFERED_NAMED)
        .map(|n| {
            let why = match &n.why {
                WhyNotOffered::NoEdge { via: Some(v) } => trf!(
                    "not-offered-via",
                    "no edge from {cur}; update to {v} first",
                    cur = cur,
                    v = v
                ),
                WhyNotOffered::NoEdge { via: None } => {
                    trf!("not-offered-no-edge", "no edge from {cur}", cur = cur)
                }
                WhyNotOffered::UnusableConditionalEdge => {
                    tr!("not-offered-unusable", "its conditional edge is unusable").to_string()
                }
                WhyNotOffered::Blocked { risks, recommended } => {
                    let names: Vec<&str> = risks.iter().map(|r| r.name.as_str()).collect();
                    let state = match recommended.as_ref().map(|c| c.status) {
                        Some(ConditionStatus::False) => tr!("not-offered-risk-applies", "applies"),
                        Some(_) => tr!("not-offered-risk-not-evaluated", "not evaluated"),
                        None => tr!("not-offered-risk-not-yet", "not evaluated yet"),
                    };
                    trf!(
                        "not-offered-risk",
                        "risk {names} {state}; see the table",
                        names = names.join(", "),
                        state = state
                    )
                }
            };
            format!("{} ({why})", n.release.version)
        })
        .collect();
    let more = f.not_offered.len().saturating_sub(NOT_OFFERED_NAMED);
    let tail = if more > 0 {
        trf!("not-offered-more", ", and {more} older", more = more)
    } else {
        String::new()
    };
    trf!(
        "not-offered",
        "Not offered from {cur} in channel {channel} ({upstream}): {words}{tail}.",
        cur = cur,
        channel = channel,
        upstream = f.upstream,
        words = words.join(", "),
        tail = tail
    )
}
