//! `cvo upgrade recommend`: the update recommendations of `oc adm upgrade recommend`, with its
//! text: the Failing and Progressing blocks, alert prechecks, condition summaries, then the
//! updates grouped by minor version (two per minor unless `--show-outdated-releases`), or the
//! one release of `--version V` with the issues that were not `--accept`ed.
//!
//! The targets, channel facts and `RetrievedUpdates` come from the cluster's
//! [`UpdateOffer`] ([`crate::assess::updates`], the reading the dashboard's Updates view
//! shares); this module keeps oc's grouping, its Upgradeable=False risk and its text.
//!
//! Upstream: `pkg/cli/admin/upgrade/recommend/recommend.go`, `precheck.go` and `alerts.go` in
//! openshift/oc.

use std::collections::{BTreeMap, BTreeSet};

use crate::{
    assess::{
        alerts::{Alert, Alerts},
        updates::{Retrieval, Target, UpdateOffer},
    },
    cli::tabwriter,
    l10n::{tr, trf},
    openshift::{ClusterVersion, Condition, ConditionStatus, ConditionalUpdateRisk, Release},
};

/// Where the alert prechecks get their alerts from.
#[derive(Clone, Debug)]
pub enum AlertSource {
    /// A Prometheus `/api/v1/alerts` response.
    Alerts(Alerts),
    /// Offline without alert data: one Unknown `recommended/Alert` condition (acceptance name
    /// `AlertNoTestData`) whose message is this text.
    NoData(String),
    /// The alerts could not be retrieved: `Failed to check for at least some preconditions:`
    /// this text, and the issue `FailedToCompletePrecheck`.
    Failed(String),
}

/// The flags of `cvo upgrade recommend`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--version V`: show this release only.
    pub version: Option<semver::Version>,
    /// `--show-outdated-releases`: every release of each minor, as a table.
    pub show_outdated: bool,
    /// `--accept`: issue names accepted.
    pub accept: Vec<String>,
    /// `--quiet` (with `--version`): stdout stays empty.
    pub quiet: bool,
}

/// What the command prints, and its error (exit 1) if any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// Standard output.
    pub stdout: String,
    /// Warnings for standard error (each line ends with `\n`).
    pub stderr: String,
    /// The error that ends the command, without the `error: ` prefix.
    pub error: Option<String>,
}

/// A precheck condition: `{type, status, reason, message}` and the name `--accept` takes.
struct Check {
    type_: String,
    status: ConditionStatus,
    reason: String,
    message: String,
    acceptance: Option<String>,
}

/// One candidate update in a minor-version bucket.
struct Entry {
    release: Release,
    risks: Vec<ConditionalUpdateRisk>,
    recommended: Option<Condition>,
}

fn indent(s: &str) -> String {
    s.replace('\n', "\n  ")
}

/// Computes the output of `oc adm upgrade recommend` for `cv`.
pub fn recommend(cv: &ClusterVersion, alerts: &AlertSource, opts: &Options) -> Output {
    let mut out = Output::default();
    let mut stdout = String::new();
    let accepted = |name: &str| opts.accept.iter().any(|a| a == name);
    let acc = |name: &str| {
        if accepted(name) {
            tr!("recommend-accepted-prefix", "accepted ")
        } else {
            ""
        }
    };
    let mut issues: BTreeSet<String> = BTreeSet::new();

    match cv.condition("Failing") {
        Some(c) if c.status != ConditionStatus::False => {
            stdout += acc("Failing");
            stdout += &trf!(
                "upgrade-failing",
                "Failing={status}:\n\n  Reason: {reason}\n  Message: {message}\n\n",
                status = c.status.as_str(),
                reason = c.reason(),
                message = indent(c.message())
            );
            issues.insert("Failing".into());
        }
        Some(_) => {}
        None => {
            out.stderr += acc("Failing");
            out.stderr += tr!(
                "upgrade-no-failing-info",
                "warning: No current Failing info, see `oc describe clusterversion` for more details."
            );
            out.stderr.push('\n');
            issues.insert("Failing".into());
        }
    }
    if let Some(c) = cv
        .condition("Progressing")
        .filter(|c| c.is_true() && !c.message().is_empty())
    {
        stdout += acc("Progressing");
        stdout += &trf!(
            "recommend-in-progress",
            "info: An update is in progress.  You may wish to let this update complete before requesting a new update.\n  {message}\n\n",
            message = indent(c.message())
        );
        issues.insert("Progressing".into());
    }

    let checks = match alerts {
        AlertSource::Alerts(a) => alert_checks(&a.data.alerts),
        AlertSource::NoData(message) => vec![Check {
            type_: "recommended/Alert".into(),
            status: ConditionStatus::Unknown,
            reason: "NoTestData".into(),
            message: message.clone(),
            acceptance: Some("AlertNoTestData".into()),
        }],
        AlertSource::Failed(e) => {
            stdout += &trf!(
                "recommend-precheck-failed",
                "Failed to check for at least some preconditions: {e}",
                e = e.to_string()
            );
            stdout.push('\n');
            issues.insert("FailedToCompletePrecheck".into());
            Vec::new()
        }
    };
    let (mut happy, mut accepted_list, mut unhappy) = (Vec::new(), Vec::new(), Vec::new());
    for c in &checks {
        if c.status == ConditionStatus::True {
            happy.push(format!("{} ({})", c.type_, c.reason));
            continue;
        }
        let name = c.acceptance.clone().unwrap_or_default();
        issues.insert(name.clone());
        if accepted(&name) {
            accepted_list.push(c.type_.clone());
        } else {
            unhappy.push(c.type_.clone());
        }
    }
    for list in [&mut happy, &mut accepted_list, &mut unhappy] {
        list.sort();
    }
    if !happy.is_empty() {
        stdout += &trf!(
            "recommend-happy",
            "The following conditions found no cause for concern in updating this cluster to later releases: {list}\n\n",
            list = happy.join(", ")
        );
    }
    if !accepted_list.is_empty() {
        stdout += &trf!(
            "recommend-accepted",
            "The following conditions found cause for concern in updating this cluster to later releases, but were explicitly accepted via --accept: {list}\n\n",
            list = accepted_list.join(", ")
        );
    }
    if !unhappy.is_empty() {
        stdout += &trf!(
            "recommend-unhappy",
            "The following conditions found cause for concern in updating this cluster to later releases: {list}\n\n",
            list = unhappy.join(", ")
        );
        for c in checks.iter().filter(|c| c.status != ConditionStatus::True) {
            stdout += &trf!(
                "recommend-check",
                "{type_}={status}:\n\n  Reason: {reason}\n  Message: {message}\n\n",
                type_ = c.type_,
                status = c.status.as_str(),
                reason = c.reason,
                message = indent(&c.message)
            );
        }
    }

    let offer = UpdateOffer::from_cluster_version(cv);
    if let Retrieval::Failed { reason, message, .. } | Retrieval::Unknown { reason, message, .. } =
        &offer.retrieval
    {
        out.stderr += &trf!(
            "recommend-cannot-refresh",
            "warning: Cannot refresh available updates:\n  Reason: {reason}\n  Message: {message}\n\n",
            reason = reason,
            message = indent(message)
        );
        issues.insert("CannotRetrieveUpdates".into());
    }
    if !offer.channel.is_empty() {
        if offer.upstream.is_empty() {
            stdout += tr!(
                "recommend-upstream-unset",
                "Upstream update service is unset, so the cluster will use an appropriate default."
            );
        } else {
            stdout += &trf!(
                "recommend-upstream",
                "Upstream update service: {url}",
                url = offer.upstream
            );
        }
        stdout.push('\n');
        stdout += &trf!("upgrade-channel", "Channel: {c}", c = offer.channel);
        if !offer.channels.is_empty() {
            stdout += &trf!(
                "upgrade-available-channels",
                " (available channels: {channels})",
                channels = offer.channels.join(", ")
            );
        }
        stdout.push('\n');
    }

    let buckets = buckets(cv, &offer, &mut out.stderr);
    let result = match &opts.version {
        Some(v) => version_mode(&buckets, v, opts, &mut stdout, &mut issues),
        None if buckets.is_empty() => {
            stdout += tr!(
                "upgrade-none",
                "No updates available. You may still upgrade to a specific release image with --to-image or wait for new updates to be available."
            );
            stdout.push('\n');
            Ok(())
        }
        None => {
            listing(&buckets, opts.show_outdated, &mut stdout);
            Ok(())
        }
    };
    if let Err(e) = result {
        out.error = Some(e);
    }
    out.stdout = if opts.quiet { String::new() } else { stdout };
    out
}

/// The alert prechecks, in alert order, then one happy condition per category without alerts.
fn alert_checks(alerts: &[Alert]) -> Vec<Check> {
    const CRITICAL: &str = "recommended/CriticalAlerts";
    const PDB: &str = "recommended/PodDisruptionBudgetAlerts";
    const PULL: &str = "recommended/PodImagePullAlerts";
    const NODE: &str = "recommended/NodeAlerts";
    const PRECHECK: &str = "recommended/UpdatePrecheckAlerts";
    const VIRT: &str = "recommended/VirtAlerts";
    const SLOW_REDISTRIBUTION: &str = "which may slow workload redistribution during rolling node updates.";
    let mut checks = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for alert in alerts {
        let name = alert.labels.alertname.as_str();
        if name.is_empty() || alert.state == "pending" {
            continue;
        }
        let an = &alert.annotations;
        let mut summary = if an.summary.is_empty() {
            name.to_string()
        } else {
            an.summary.clone()
        };
        if !summary.ends_with('.') {
            summary.push('.');
        }
        let descr = match (an.description.is_empty(), an.message.is_empty()) {
            (false, false) => format!(" The alert description is: {} | {}", an.description, an.message),
            (false, true) => format!(" The alert description is: {}", an.description),
            (true, false) => format!(" The alert description is: {}", an.message),
            (true, true) => " The alert has no description.".to_string(),
        };
        let runbook = if an.runbook_url.is_empty() {
            "<alert does not have a runbook_url annotation>"
        } else {
            an.runbook_url.as_str()
        };
        let details = format!("{summary}{descr} {runbook}");
        let pdb_prefix = format!(
            "Namespace={}, PodDisruptionBudget={}. ",
            alert.labels.namespace, alert.labels.poddisruptionbudget
        );
        let (category, phrase, prefixed) = if alert.labels.severity == "critical" {
            if name == "PodDisruptionBudgetLimit" {
                seen.insert(PDB);
            }
            (
                CRITICAL,
                "suggesting significant cluster issues worth investigating.",
                name == "PodDisruptionBudgetLimit",
            )
        } else if name == "PodDisruptionBudgetAtLimit" {
            (PDB, "which might slow node drains.", true)
        } else if name == "KubeContainerWaiting" {
            (PULL, SLOW_REDISTRIBUTION, false)
        } else if [
            "KubeletHealthState",
            "KubeNodeNotReady",
            "KubeNodeReadinessFlapping",
            "KubeNodeUnreachable",
        ]
        .contains(&name)
        {
            (NODE, SLOW_REDISTRIBUTION, false)
        } else if alert.labels.open_shift_update_precheck == "true" {
            (
                PRECHECK,
                "suggesting issues worth investigating before updating the cluster.",
                false,
            )
        } else if ["VirtHandlerDaemonSetRolloutFailing", "VMCannotBeEvicted"].contains(&name) {
            (VIRT, SLOW_REDISTRIBUTION, false)
        } else {
            continue;
        };
        seen.insert(category);
        let prefix = if prefixed { pdb_prefix.as_str() } else { "" };
        checks.push(Check {
            type_: format!("{category}/{name}/{}", checks.len()),
            status: ConditionStatus::False,
            reason: format!("Alert:{}", alert.state),
            message: format!(
                "{} alert {name} {}, {phrase} {prefix}{details}",
                alert.labels.severity, alert.state
            ),
            acceptance: Some(name.to_string()),
        });
    }
    for category in [CRITICAL, PDB, PULL, NODE, PRECHECK] {
        if !seen.contains(category) {
            checks.push(Check {
                type_: category.to_string(),
                status: ConditionStatus::True,
                reason: "AsExpected".into(),
                message: String::new(),
                acceptance: None,
            });
        }
    }
    checks
}

type Buckets = BTreeMap<(u64, u64), Vec<Entry>>;

/// `targets` in the order of their status list.
fn in_status_order(targets: &[Target]) -> Vec<&Target> {
    let mut v: Vec<&Target> = targets.iter().collect();
    v.sort_by_key(|t| t.status_index);
    v
}

/// The candidates by (major, minor), from the cluster's [`UpdateOffer`]: conditional updates
/// (their described risks), then available updates whose image no conditional update has (oc's
/// rule, `recommend.go`); Upgradeable=False injected as a risk into minor and major updates.
/// Versions that are not semver are left out with a warning, in the order of the status lists.
fn buckets(cv: &ClusterVersion, offer: &UpdateOffer, stderr: &mut String) -> Buckets {
    let mut buckets: Buckets = BTreeMap::new();
    let conditional = in_status_order(&offer.conditional);
    let available = in_status_order(&offer.recommended).into_iter().filter(|r| {
        !offer
            .conditional
            .iter()
            .any(|c| c.release.image == r.release.image)
    });
    for t in conditional.into_iter().chain(available) {
        match semver::Version::parse(&t.release.version) {
            Ok(v) => buckets.entry((v.major, v.minor)).or_default().push(Entry {
                release: t.release.clone(),
                risks: t
                    .risks
                    .iter()
                    .filter(|r| r.described)
                    .map(|r| r.risk.clone())
                    .collect(),
                recommended: t.recommended.clone(),
            }),
            Err(e) => {
                *stderr += &trf!(
                    "recommend-bad-available",
                    "warning: Cannot parse SemVer available update {version:?}: {e}",
                    version = t.release.version,
                    e = e.to_string()
                )
            }
        }
    }
    if let Some(u) = cv.condition("Upgradeable").filter(|u| u.is_false()) {
        match semver::Version::parse(&offer.current) {
            Ok(current) => {
                for (&(major, minor), entries) in buckets.iter_mut() {
                    if major > current.major || (major == current.major && minor > current.minor) {
                        for e in entries.iter_mut() {
                            inject_upgradeable(e, u);
                        }
                    }
                }
            }
            Err(e) => {
                *stderr += &trf!(
                    "recommend-cannot-inject",
                    "warning: Cannot inject Upgradeable=False as a conditional update risk: {e}",
                    e = e.to_string()
                );
                stderr.push('\n');
            }
        }
    }
    for entries in buckets.values_mut() {
        entries.sort_by(|a, b| {
            crate::cluster::update_request::compare_versions_desc(&a.release.version, &b.release.version)
        });
    }
    buckets
}

fn inject_upgradeable(e: &mut Entry, u: &Condition) {
    if e.risks.iter().any(|r| r.message.contains(u.message())) {
        return;
    }
    e.risks.push(ConditionalUpdateRisk {
        name: "UpgradeableFalse".into(),
        message: u.message().to_string(),
        matching_rules: vec![crate::openshift::ClusterCondition {
            type_: "Always".into(),
            promql: None,
        }],
        ..ConditionalUpdateRisk::default()
    });
    match &mut e.recommended {
        Some(c) if c.is_true() => {
            c.status = ConditionStatus::False;
            c.reason = u.reason.clone();
            c.message = u.message.clone();
        }
        Some(c) => {
            c.status = ConditionStatus::False;
            c.message = Some(format!("{}\n\n{}", u.message(), c.message()));
            c.reason = Some("MultipleReasons".into());
        }
        None => {
            e.recommended = Some(Condition {
                type_: "Recommended".into(),
                status: ConditionStatus::False,
                reason: u.reason.clone(),
                message: u.message.clone(),
                ..Condition::default()
            });
        }
    }
}

/// The condition that makes an entry not recommended, or `None` when it is recommended.
fn not_recommended(e: &Entry) -> Option<Condition> {
    if e.risks.is_empty() {
        return None;
    }
    match &e.recommended {
        Some(c) if c.is_true() => None,
        Some(c) => Some(c.clone()),
        None => {
            // oc builds the list with n empty names before the n risk names.
            let mut names: Vec<&str> = vec![""; e.risks.len()];
            names.extend(e.risks.iter().map(|r| r.name.as_str()));
            names.sort_unstable();
            Some(Condition {
                type_: "Recommended".into(),
                status: ConditionStatus::Unknown,
                reason: Some("NoConditions".into()),
                message: Some(format!(
                    "Conditional update to {} has risks ({}), but no conditions.",
                    e.release.version,
                    names.join(", ")
                )),
                ..Condition::default()
            })
        }
    }
}

/// The per-minor listing, with oc's mix of direct writes and a buffered table.
fn listing(buckets: &Buckets, show_outdated: bool, out: &mut String) {
    let header = format!(
        "  {}\t{}\n",
        tr!("upgrade-col-version", "VERSION"),
        tr!("recommend-col-issues", "ISSUES")
    );
    for (&(major, minor), entries) in buckets.iter().rev() {
        out.push('\n');
        *out += &trf!(
            "recommend-updates-to",
            "Updates to {major}.{minor}:",
            major = major,
            minor = minor
        );
        out.push('\n');
        let mut table = header.clone();
        let mut header_queued = true;
        let mut last_was_long = false;
        for (i, e) in entries.iter().enumerate() {
            let c = not_recommended(e);
            if last_was_long || (c.is_some() && !show_outdated) {
                out.push('\n');
                if c.is_none() && !header_queued {
                    table += &header;
                    header_queued = true;
                }
                last_was_long = false;
            }
            if i == 2 && !show_outdated {
                *out += &trf!(
                    "recommend-older",
                    "And {count} older {major}.{minor} updates you can see with '--show-outdated-releases' or '--version VERSION'.",
                    count = entries.len() - 2,
                    major = major,
                    minor = minor
                );
                out.push('\n');
                table.clear();
                break;
            }
            match c {
                None => {
                    table += &format!(
                        "  {}\t{}\n",
                        e.release.version,
                        tr!("recommend-no-issues", "no known issues relevant to this cluster")
                    );
                    if !show_outdated {
                        header_queued = false;
                        *out += &tabwriter::format(&table, 14, 1);
                        table.clear();
                    }
                }
                Some(c) if show_outdated => table += &format!("  {}\t{}\n", e.release.version, c.reason()),
                Some(c) => {
                    *out += &trf!(
                        "recommend-long-entry",
                        "  Version: {version}\n  Image: {image}\n  Reason: {reason}\n  Message: {message}\n",
                        version = e.release.version,
                        image = e.release.image,
                        reason = c.reason(),
                        message = indent(c.message().trim())
                    );
                    last_was_long = true;
                }
            }
        }
        if show_outdated {
            *out += &tabwriter::format(&table, 14, 1);
        }
    }
}

/// `--version V`: the one release, then the error naming the issues not accepted.
fn version_mode(
    buckets: &Buckets,
    v: &semver::Version,
    opts: &Options,
    out: &mut String,
    issues: &mut BTreeSet<String>,
) -> Result<(), String> {
    let tail = trf!(
        "recommend-no-context",
        "so cannot display context for the requested release {v}",
        v = v.to_string()
    );
    if buckets.is_empty() {
        return Err(trf!(
            "recommend-none-available",
            "no updates available, {tail}",
            tail = tail
        ));
    }
    if !buckets.keys().any(|&(major, _)| major == v.major) {
        return Err(trf!(
            "recommend-none-to-major",
            "no updates to {major} available, {tail}",
            major = v.major,
            tail = tail
        ));
    }
    let Some(entries) = buckets.get(&(v.major, v.minor)) else {
        return Err(trf!(
            "recommend-none-to-minor",
            "no updates to {major}.{minor} available, {tail}",
            major = v.major,
            minor = v.minor,
            tail = tail
        ));
    };
    let wanted = v.to_string();
    let Some(e) = entries
        .iter()
        .find(|e| semver::Version::parse(&e.release.version).is_ok_and(|x| x.to_string() == wanted))
    else {
        return Err(trf!(
            "recommend-none-to-version",
            "no update to {v} available, so cannot display context for the requested release",
            v = v.to_string()
        ));
    };
    out.push('\n');
    let url = e.release.url.as_deref().unwrap_or("");
    match not_recommended(e) {
        None => {
            *out += &trf!(
                "recommend-version-clean",
                "Update to {version} has no known issues relevant to this cluster.\nImage: {image}\nRelease URL: {url}\n",
                version = e.release.version,
                image = e.release.image,
                url = url
            );
        }
        Some(c) => {
            let reason = if opts.accept.iter().any(|a| a == "ConditionalUpdateRisk") {
                trf!(
                    "recommend-accepted-via",
                    "accepted {reason} via ConditionalUpdateRisk",
                    reason = c.reason()
                )
            } else {
                c.reason().to_string()
            };
            *out += &trf!(
                "recommend-version-risk",
                "Update to {version} {type_}={status}:\nImage: {image}\nRelease URL: {url}\nReason: {reason}\nMessage: {message}\n",
                version = e.release.version,
                type_ = c.type_,
                status = c.status.as_str(),
                image = e.release.image,
                url = url,
                reason = reason,
                message = indent(c.message())
            );
            issues.insert("ConditionalUpdateRisk".into());
        }
    }
    let unaccepted: Vec<&str> = issues
        .iter()
        .filter(|i| !opts.accept.iter().any(|a| a == *i))
        .map(String::as_str)
        .collect();
    if !unaccepted.is_empty() {
        return Err(trf!(
            "recommend-not-accepted",
            "issues that apply to this cluster but which were not included in --accept: {list}",
            list = unaccepted.join(",")
        ));
    }
    if !issues.is_empty() {
        let all: Vec<&str> = issues.iter().map(String::as_str).collect();
        *out += &trf!(
            "recommend-clean-but-accepted",
            "Update to {version} has no known issues relevant to this cluster other than the accepted {list}.",
            version = e.release.version,
            list = all.join(",")
        );
        out.push('\n');
    }
    Ok(())
}
