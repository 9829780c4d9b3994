//! The update requests (`--to`, `--to-image`, `--to-latest`): target resolution against the
//! listed updates, oc's client guards, and the cluster-side preconditions.
//!
//! Upstream: `Options.Run` and `checkForUpgrade` in `pkg/cli/admin/upgrade/upgrade.go` (openshift/oc);
//! `pkg/payload/precondition/clusterversion/upgradeable.go`, `rollback.go` and `gianthop.go`
//! (openshift/cluster-version-operator).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{
    Flags, Outcome, Plan, Refusal, Request, Verdict, VerdictState, Waiver, cv_name, no_change,
    pullspec::PullSpec, recommended, sort_releases_desc, target_match,
};
use crate::l10n::{tr, trf};
use crate::openshift::{
    ClusterVersion, Condition, ConditionStatus, ConditionalUpdate, ConditionalUpdateRisk, Release,
};

fn force_warning() -> String {
    tr!(
        "req-force-warning",
        "--force overrides cluster verification of your supplied release image and waives any update precondition failures. Only use this if you are testing unsigned release images or you are working around a known bug in the cluster-version operator and you have verified the authenticity of the provided image yourself."
    )
    .to_string()
}

/// Indents every line after the first by two spaces (oc's `Message:` blocks).
fn indent(message: &str) -> String {
    message.replace('\n', "\n  ")
}

fn refuse(
    name: &'static str,
    waiver: Option<Waiver>,
    message: String,
    mut verdicts: Vec<Verdict>,
) -> Refusal {
    verdicts.push(Verdict {
        name,
        state: VerdictState::Blocking(waiver),
        message: message.clone(),
    });
    Refusal {
        precondition: name,
        message,
        waiver,
        verdicts,
    }
}

/// Plans `--to`, `--to-image` or `--to-latest`.
pub(super) fn update(cv: &ClusterVersion, request: &Request, flags: &Flags) -> Result<Outcome, Refusal> {
    let desired = &cv.status.desired;
    let (to, to_image, latest) = match request {
        Request::ToVersion { version, image } => (Some(version.as_str()), image.as_deref(), false),
        Request::ToImage { pullspec } => (None, Some(pullspec.as_str()), false),
        _ => (None, None, true),
    };
    let explicit_image = matches!(request, Request::ToImage { .. });
    if let Some(v) = to.filter(|v| *v == desired.version) {
        return Ok(no_change(trf!(
            "req-already-at-version",
            "info: Cluster is already at version {v}",
            v = v
        )));
    }
    if let Some(i) = to_image.filter(|i| explicit_image && *i == desired.image) {
        return Ok(no_change(trf!(
            "req-already-at",
            "info: Cluster is already at {i}",
            i = i
        )));
    }

    let mut verdicts = Vec::new();
    let mut warnings = Vec::new();
    if let (Some(image), true) = (to_image, explicit_image) {
        check_pullspec(image, flags, &mut verdicts, &mut warnings)?;
    }

    // Target resolution, in oc's order: the recommended updates, then the conditional updates
    // that are not recommended, then an explicit image.
    let mut target: Option<Release> = None;
    let mut waived_risks = Vec::new();
    let mut possible: Vec<Release> = Vec::new();
    let mut not_recommended: HashMap<String, &ConditionalUpdate> = HashMap::new();
    for available in cv.status.available_updates.iter().flatten() {
        if target_match(available, to, to_image) {
            let mut t = available.clone();
            if explicit_image {
                // Keep the pull spec as asked (it may name a mirror of the same digest).
                t.image = to_image.unwrap_or_default().to_string();
            }
            verdicts.push(Verdict::passed(
                "Recommended",
                trf!(
                    "req-recommended",
                    "{version} is a recommended update",
                    version = t.version
                ),
            ));
            target = Some(t);
            break;
        }
        possible.push(available.clone());
    }
    if target.is_none() {
        for cu in &cv.status.conditional_updates {
            let Some(c) = recommended(cu).filter(|c| c.status != ConditionStatus::True) else {
                continue;
            };
            if target_match(&cu.release, to, to_image) {
                verdicts.push(not_recommended_verdict(cu, c, flags));
                if flags.allow_not_recommended {
                    warnings.push(bypass_warning(&cu.release.version, c));
                    waived_risks = risks_of(cv, cu);
                }
                target = Some(cu.release.clone());
                break;
            }
            if flags.allow_not_recommended {
                possible.push(cu.release.clone());
                not_recommended.insert(cu.release.image.clone(), cu);
            }
        }
    }
    if target.is_none() && explicit_image && flags.allow_explicit_upgrade {
        let image = to_image.unwrap_or_default().to_string();
        warnings.push(
            tr!(
                "req-explicit-upgrade-warning",
                "The requested upgrade image is not one of the available updates. You have used --allow-explicit-upgrade for the update to proceed anyway"
            )
            .to_string(),
        );
        verdicts.push(Verdict {
            name: "ListedTarget",
            state: VerdictState::Waived(Waiver::AllowExplicitUpgrade),
            message: trf!(
                "req-not-listed",
                "{image} is not one of the available updates",
                image = image
            ),
        });
        target = Some(Release {
            image,
            ..Release::default()
        });
    }
    sort_releases_desc(&mut possible);
    if latest && let Some(first) = possible.first() {
        if let Some(cu) = not_recommended.get(&first.image)
            && let Some(c) = recommended(cu)
        {
            verdicts.push(not_recommended_verdict(cu, c, flags));
            warnings.push(bypass_warning(&first.version, c));
            waived_risks = risks_of(cv, cu);
        } else {
            verdicts.push(Verdict::passed(
                "Recommended",
                trf!(
                    "req-recommended",
                    "{version} is a recommended update",
                    version = first.version
                ),
            ));
        }
        target = Some(first.clone());
    }
    let Some(target) = target else {
        return no_target(cv, &possible, explicit_image, latest, flags, verdicts);
    };
    if !explicit_image {
        check_listed_pullspec(&target, flags, &mut verdicts, &mut warnings)?;
    }

    if flags.force {
        warnings.push(force_warning());
    }
    client_guards(cv, flags, &mut verdicts, &mut warnings);
    cluster_preconditions(cv, &target.version, flags, &mut verdicts, &mut warnings);
    for v in verdicts
        .iter()
        .filter(|v| v.state == VerdictState::Waived(Waiver::Force))
    {
        if v.name.starts_with("ClusterVersion") {
            warnings.push(trf!(
                "req-force-waiving",
                "--force is waiving: {message}",
                message = v.message
            ));
        }
    }

    if let Some(refusal) = first_blocking(&verdicts) {
        return Err(refusal);
    }
    let patch = desired_update_patch(cv, &target, flags.force);
    let done = if target.version.is_empty() {
        trf!(
            "req-done-image",
            "Requested update to release image {image}",
            image = target.image
        )
    } else {
        trf!(
            "req-done-version",
            "Requested update to {version}",
            version = target.version
        )
    };
    Ok(Outcome::Plan(Plan {
        name: cv_name(cv),
        patch,
        target: Some(target),
        verdicts,
        waived_risks,
        warnings,
        done,
    }))
}

/// The `architecture` value of a multi-architecture update request.
pub(super) const MULTI: &str = "Multi";

/// Plans `--to-multi-arch` as oc does: the client guards (waived by
/// `--allow-upgrade-with-warnings`), then `desiredUpdate` = the current version with
/// `architecture: Multi` (no image; `force` when given; accepted risks kept). A request already
/// made is no change.
pub(super) fn multi_arch(cv: &ClusterVersion, flags: &Flags) -> Result<Outcome, Refusal> {
    let current = cv.spec.desired_update.clone().unwrap_or_default();
    if current.architecture.as_deref() == Some(MULTI) {
        return Ok(no_change(tr!(
            "req-multi-already",
            "info: Update to multi cluster architecture has already been requested"
        )));
    }
    let version = &cv.status.desired.version;
    let mut verdicts = Vec::new();
    let mut warnings = Vec::new();
    if version.is_empty() {
        return Err(refuse(
            "TargetFound",
            None,
            tr!(
                "req-multi-no-version",
                "the ClusterVersion's status.desired has no version to request as multi-architecture"
            )
            .into(),
            verdicts,
        ));
    }
    verdicts.push(Verdict::passed(
        "Architecture",
        trf!(
            "req-multi-passed",
            "{version} is requested as a multi-architecture release",
            version = version
        ),
    ));
    client_guards(cv, flags, &mut verdicts, &mut warnings);
    if flags.force {
        warnings.push(force_warning());
    }
    if let Some(refusal) = first_blocking(&verdicts) {
        return Err(refusal);
    }
    let mut du = Map::new();
    du.insert("architecture".into(), Value::String(MULTI.into()));
    du.insert("version".into(), Value::String(version.clone()));
    if current.image.is_some() {
        du.insert("image".into(), Value::Null);
    }
    if flags.force {
        du.insert("force".into(), Value::Bool(true));
    } else if current.force {
        du.insert("force".into(), Value::Null);
    }
    Ok(Outcome::Plan(Plan {
        name: cv_name(cv),
        patch: json!({"spec": {"desiredUpdate": Value::Object(du)}}),
        target: Some(Release {
            version: version.clone(),
            architecture: Some(MULTI.into()),
            ..Release::default()
        }),
        verdicts,
        waived_risks: Vec::new(),
        warnings,
        done: tr!("req-multi-done", "Requested update to multi cluster architecture").into(),
    }))
}

fn by_tag_warning() -> String {
    tr!(
        "req-by-tag-warning",
        "Using by-tag pull specs is dangerous, and while we still allow it in combination with --force for backward compatibility, it would be much safer to pass a by-digest pull spec instead"
    )
    .to_string()
}

/// The scheme or local path a text names instead of a registry image (`file://…`, `/dir`,
/// `./dir`), if it does: such a target is refused whatever the flags, as the cluster could
/// not verify it and would read it from its own disk.
fn local_or_scheme(image: &str) -> Option<&str> {
    if let Some((scheme, _)) = image.split_once("://") {
        return Some(scheme);
    }
    image.starts_with(['/', '.', '~']).then_some("a local path")
}

fn check_pullspec(
    image: &str,
    flags: &Flags,
    verdicts: &mut Vec<Verdict>,
    warnings: &mut Vec<String>,
) -> Result<(), Refusal> {
    if let Some(what) = local_or_scheme(image) {
        return Err(refuse(
            "PullSpec",
            None,
            trf!(
                "req-not-registry",
                "--to-image must be a registry pull spec, not {what}: {image}",
                what = scheme_text(what),
                image = image
            ),
            verdicts.clone(),
        ));
    }
    let spec = PullSpec::parse(image).map_err(|e| {
        refuse(
            "PullSpec",
            None,
            trf!(
                "req-invalid-pullspec",
                "--to-image must be a valid image pull spec: {e}",
                e = e.to_string()
            ),
            verdicts.clone(),
        )
    })?;
    by_digest(image, &spec, flags, verdicts, warnings, || {
        tr!(
            "req-by-digest-needed",
            "--to-image must be a by-digest pull spec, unless --force is also set, because release images that are not accessed via digest cannot be verified by the cluster.  Even when --force is set, using tags is not recommended, although we continue to allow it for backwards compatibility"
        )
        .to_string()
    })
}

/// The `PullSpec` verdict of a parsed pull spec: passed by digest; by tag, waived by `--force`
/// (with oc's warning) or refused with `refusal()`'s text.
fn by_digest(
    image: &str,
    spec: &PullSpec,
    flags: &Flags,
    verdicts: &mut Vec<Verdict>,
    warnings: &mut Vec<String>,
    refusal: impl FnOnce() -> String,
) -> Result<(), Refusal> {
    if spec.is_by_digest() {
        verdicts.push(Verdict::passed(
            "PullSpec",
            trf!("req-by-digest", "{image} is a by-digest pull spec", image = image),
        ));
    } else if flags.force {
        warnings.push(by_tag_warning());
        verdicts.push(Verdict {
            name: "PullSpec",
            state: VerdictState::Waived(Waiver::Force),
            message: trf!("req-by-tag", "{image} is a by-tag pull spec", image = image),
        });
    } else {
        return Err(refuse(
            "PullSpec",
            Some(Waiver::Force),
            refusal(),
            verdicts.clone(),
        ));
    }
    Ok(())
}

fn scheme_text(what: &str) -> String {
    if what == "a local path" {
        tr!("req-local-path", "a local path").to_string()
    } else {
        trf!("req-scheme-location", "a {what}:// location", what = what)
    }
}

/// The pull-spec check of `--to-image`, applied to a target the update service listed
/// (`--to`, `--to-latest`, a row picked in the dashboard): the cluster verifies a release by
/// the digest of its pull spec, so a listed image must be a registry pull spec by digest (by
/// tag only with `--force`, as `--to-image`); a `file://` or other scheme, a local path or
/// text that is no pull spec is refused whatever the flags, so that an update service cannot
/// get the cluster to apply content it cannot verify.
fn check_listed_pullspec(
    target: &Release,
    flags: &Flags,
    verdicts: &mut Vec<Verdict>,
    warnings: &mut Vec<String>,
) -> Result<(), Refusal> {
    let (version, image) = (&target.version, &target.image);
    let refused = |why: String, verdicts: &Vec<Verdict>| {
        refuse(
            "PullSpec",
            None,
            trf!(
                "req-listed-refused",
                "the update service lists {version} with release image {image:?}, which {why}; refusing it",
                version = version,
                image = image,
                why = why
            ),
            verdicts.clone(),
        )
    };
    if let Some(what) = local_or_scheme(image) {
        return Err(refused(
            trf!(
                "req-listed-not-registry",
                "is {what} and not a registry pull spec",
                what = scheme_text(what)
            ),
            verdicts,
        ));
    }
    let spec = PullSpec::parse(image).map_err(|e| {
        refused(
            trf!(
                "req-listed-invalid",
                "is not a valid pull spec ({e})",
                e = e.to_string()
            ),
            verdicts,
        )
    })?;
    by_digest(image, &spec, flags, verdicts, warnings, || {
        trf!(
            "req-listed-by-tag",
            "the update service lists {version} with release image {image}, which is not a by-digest pull spec; it is accepted only with --force, because release images that are not accessed via digest cannot be verified by the cluster",
            version = version,
            image = image
        )
    })
}

fn not_recommended_verdict(cu: &ConditionalUpdate, c: &Condition, flags: &Flags) -> Verdict {
    let message = trf!(
        "req-not-recommended",
        "the update {version} is not one of the recommended updates, but is available as a conditional update. To accept the Recommended={status} risk and to proceed with update use --allow-not-recommended.\n  Reason: {reason}\n  Message: {message}\n",
        version = cu.release.version,
        status = c.status.as_str(),
        reason = c.reason(),
        message = indent(c.message())
    );
    Verdict::failed("Recommended", Some(Waiver::AllowNotRecommended), flags, message)
}

/// How [`bypass_warning`] starts, in the current language (a confirm popup that lists the
/// risks itself leaves the warning out).
pub fn bypass_warning_start() -> &'static str {
    tr!(
        "req-bypass-start",
        "with --allow-not-recommended you have accepted the risks with "
    )
}

fn bypass_warning(version: &str, c: &Condition) -> String {
    let rest = trf!(
        "req-bypass-rest",
        "{version} and bypassed Recommended={status} {reason}: {message}",
        version = version,
        status = c.status.as_str(),
        reason = c.reason(),
        message = c.message()
    );
    format!("{}{rest}", bypass_warning_start())
}

/// The risks of a conditional update: its own list, or (feature gate
/// ClusterUpdateAcceptRisks) the named entries of `status.conditionalUpdateRisks`; risks whose
/// `Applies` condition is False are left out.
fn risks_of(cv: &ClusterVersion, cu: &ConditionalUpdate) -> Vec<ConditionalUpdateRisk> {
    let mut risks = cu.risks.clone();
    for name in &cu.risk_names {
        if !risks.iter().any(|r| &r.name == name)
            && let Some(r) = cv
                .status
                .conditional_update_risks
                .iter()
                .find(|r| &r.name == name)
        {
            risks.push(r.clone());
        }
    }
    risks.retain(|r| {
        crate::openshift::condition::find(&r.conditions, "Applies").is_none_or(|c| !c.is_false())
    });
    risks
}

fn no_target(
    cv: &ClusterVersion,
    possible: &[Release],
    explicit_image: bool,
    latest: bool,
    flags: &Flags,
    verdicts: Vec<Verdict>,
) -> Result<Outcome, Refusal> {
    let (option, waiver) = if explicit_image {
        ("--allow-explicit-upgrade", Some(Waiver::AllowExplicitUpgrade))
    } else {
        ("--to-image", None)
    };
    let next = if latest {
        trf!(
            "req-next-an",
            "{option} to continue with an update",
            option = option
        )
    } else {
        trf!(
            "req-next-the",
            "{option} to continue with the update",
            option = option
        )
    };
    let retrieved = cv.condition("RetrievedUpdates");
    let message = match retrieved {
        Some(c) if c.status != ConditionStatus::True => trf!(
            "req-cannot-refresh",
            "cannot refresh available updates:\n  Reason: {reason}\n  Message: {message}\n\nspecify {next}.",
            reason = c.reason(),
            message = indent(c.message()),
            next = next
        ),
        _ if possible.is_empty() && flags.allow_not_recommended => trf!(
            "req-no-updates-at-all",
            "no recommended or conditional updates, specify {next} or wait for new updates to be available.",
            next = next
        ),
        _ if possible.is_empty() && latest => {
            return Ok(no_change(trf!(
                "req-already-latest",
                "info: Cluster is already at the latest available version {version}",
                version = cv.status.desired.version
            )));
        }
        _ if possible.is_empty() => trf!(
            "req-no-recommended",
            "no recommended updates, specify {next} or wait for new updates to be available.",
            next = next
        ),
        _ => {
            let versions: Vec<&str> = possible.iter().map(|r| r.version.as_str()).collect();
            trf!(
                "req-not-a-target",
                "the update is not one of the possible targets: {versions}. specify {next}.",
                versions = versions.join(", "),
                next = next
            )
        }
    };
    Err(refuse("TargetFound", waiver, message, verdicts))
}

/// oc's `checkForUpgrade`: Invalid=True, Failing=True and Progressing=True, waived by
/// `--allow-upgrade-with-warnings`.
fn client_guards(
    cv: &ClusterVersion,
    flags: &Flags,
    verdicts: &mut Vec<Verdict>,
    warnings: &mut Vec<String>,
) {
    let waiver = Some(Waiver::AllowUpgradeWithWarnings);
    let mut bypassed = Vec::new();
    match cv.condition("Invalid").filter(|c| c.is_true()) {
        Some(c) => {
            let m = trf!(
                "req-invalid",
                "the cluster version object is invalid, you must correct the invalid state first:\n\n  Reason: {reason}\n  Message: {message}",
                reason = c.reason(),
                message = indent(c.message())
            );
            bypassed.push(m.clone());
            verdicts.push(Verdict::failed("Invalid", waiver, flags, m));
        }
        None => verdicts.push(Verdict::passed(
            "Invalid",
            tr!("req-valid", "the ClusterVersion is valid"),
        )),
    }
    match cv.condition("Failing").filter(|c| c.is_true()) {
        Some(c) => {
            let desired = &cv.status.desired;
            let target = [&desired.version, &desired.image]
                .into_iter()
                .find(|s| !s.is_empty())
                .cloned()
                .unwrap_or_else(|| {
                    tr!(
                        "req-desired-empty",
                        "ClusterVersion status.desired has neither a version nor image; please open a bug"
                    )
                    .to_string()
                });
            let m = trf!(
                "req-failing",
                "the cluster is experiencing an error reconciling {target:?}:\n\n  Reason: {reason}\n  Message: {message}",
                target = target,
                reason = c.reason(),
                message = indent(c.message())
            );
            bypassed.push(m.clone());
            verdicts.push(Verdict::failed("Failing", waiver, flags, m));
        }
        None => verdicts.push(Verdict::passed(
            "Failing",
            tr!("req-not-failing", "the cluster is not failing"),
        )),
    }
    match cv.condition("Progressing").filter(|c| c.is_true()) {
        Some(c) => {
            let m = trf!(
                "req-upgrading",
                "the cluster is already upgrading:\n\n  Reason: {reason}\n  Message: {message}",
                reason = c.reason(),
                message = indent(c.message())
            );
            bypassed.push(m.clone());
            verdicts.push(Verdict::failed("UpdateInProgress", waiver, flags, m));
        }
        None => verdicts.push(Verdict::passed(
            "UpdateInProgress",
            tr!("req-not-upgrading", "no update is in progress"),
        )),
    }
    if flags.allow_upgrade_with_warnings && !bypassed.is_empty() {
        warnings.push(trf!(
            "req-bypassing",
            "--allow-upgrade-with-warnings is bypassing: {list}",
            list = bypassed.join("\n\n")
        ));
    }
}

/// The CVO's ClusterVersionUpgradeable, ClusterVersionRollback and ClusterVersionGiantHop
/// preconditions, against `status.desired.version` as the current target: the checks the
/// cluster runs when it loads the release ([`crate::openshift::precondition`]). A blocking
/// failure is waived by `--force`; a non-blocking one (the cluster records it as an accepted
/// risk) is a [`VerdictState::Warning`] naming its reason, and a warning with the cluster's
/// whole text.
fn cluster_preconditions(
    cv: &ClusterVersion,
    target: &str,
    flags: &Flags,
    verdicts: &mut Vec<Verdict>,
    warnings: &mut Vec<String>,
) {
    use crate::openshift::precondition::{self as pc, GIANT_HOP, ROLLBACK, UPGRADEABLE};
    let names = [UPGRADEABLE, ROLLBACK, GIANT_HOP];
    if target.is_empty() {
        for name in names {
            verdicts.push(Verdict {
                name,
                state: VerdictState::Unchecked,
                message: tr!(
                    "req-target-unknown",
                    "the target version is unknown until the cluster loads the release image; the cluster checks it then"
                )
                .to_string(),
            });
        }
        return;
    }
    let current = &cv.status.desired.version;
    for name in names {
        let check = match name {
            UPGRADEABLE => pc::upgradeable,
            ROLLBACK => pc::rollback,
            _ => pc::giant_hop,
        };
        let verdict = match check(cv, target) {
            None => Verdict::passed(name, passed_message(name, cv, current, target)),
            Some(e) if e.non_blocking => {
                warnings.push(e.to_string());
                Verdict {
                    name,
                    state: VerdictState::Warning,
                    message: trf!(
                        "req-non-blocking",
                        "{reason} does not block; the cluster records it in the update's accepted risks",
                        reason = e.reason.to_string()
                    ),
                }
            }
            Some(e) => Verdict::failed(name, Some(Waiver::Force), flags, e.to_string()),
        };
        verdicts.push(verdict);
    }
}

/// What a passed cluster precondition found, for the confirm popup.
fn passed_message(name: &str, cv: &ClusterVersion, current: &str, target: &str) -> String {
    use crate::openshift::precondition::{ROLLBACK, UPGRADEABLE, parse_version};
    let (Ok(c), Ok(t)) = (parse_version(current), parse_version(target)) else {
        return tr!("req-upgradeable-ok", "Upgradeable is not False").to_string();
    };
    let (lower, major) = (t.cmp_precedence(&c).is_lt(), t.major > c.major);
    let (c, t) = (c.to_string(), t.to_string());
    match name {
        UPGRADEABLE if cv.condition("Upgradeable").is_some_and(|u| u.is_false()) => {
            trf!(
                "req-upgradeable-same-minor",
                "Upgradeable=False does not block {c} to {t} (same minor or lower)",
                c = c,
                t = t
            )
        }
        UPGRADEABLE => tr!("req-upgradeable-ok", "Upgradeable is not False").to_string(),
        ROLLBACK if lower => trf!(
            "req-rollback-previous",
            "{t} is the cluster's previous version, in the same minor",
            t = t
        ),
        ROLLBACK => trf!("req-rollback-ok", "{t} is not lower than {c}", t = t, c = c),
        _ if major => trf!(
            "req-giant-hop-major",
            "{c} to {t} is the one major version update allowed (4.y to 5.0)",
            c = c,
            t = t
        ),
        _ => trf!(
            "req-giant-hop-ok",
            "{c} to {t} is within one minor version",
            c = c,
            t = t
        ),
    }
}

/// The refusal for the first blocking verdict; the client guards are reported together, as
/// oc does.
fn first_blocking(verdicts: &[Verdict]) -> Option<Refusal> {
    let first = verdicts.iter().find(|v| v.is_blocking())?;
    let VerdictState::Blocking(waiver) = first.state else {
        return None;
    };
    let message = match waiver {
        Some(Waiver::AllowUpgradeWithWarnings) => {
            let all: Vec<&str> = verdicts
                .iter()
                .filter(|v| v.state == VerdictState::Blocking(Some(Waiver::AllowUpgradeWithWarnings)))
                .map(|v| v.message.as_str())
                .collect();
            trf!(
                "req-refused-guards",
                "{list}\n\nIf you want to upgrade anyway, use --allow-upgrade-with-warnings.",
                list = all.join("\n\n")
            )
        }
        Some(Waiver::Force) => trf!(
            "req-refused-force",
            "{message}\n\nIf you want to update anyway, use --force (it also skips the cluster's verification of the release image).",
            message = first.message
        ),
        _ => first.message.trim_end().to_string(),
    };
    Some(Refusal {
        precondition: first.name,
        message,
        waiver,
        verdicts: verdicts.to_vec(),
    })
}

/// `{"spec":{"desiredUpdate":{…}}}`: the target's version and image, `force` when given, and
/// `null` for each field of the current desiredUpdate the request no longer sets
/// (`acceptRisks` is left as it is).
fn desired_update_patch(cv: &ClusterVersion, target: &Release, force: bool) -> Value {
    let current = cv.spec.desired_update.clone().unwrap_or_default();
    let mut du = Map::new();
    let mut set = |key: &str, value: Option<Value>, present: bool| match value {
        Some(v) => {
            du.insert(key.to_string(), v);
        }
        None if present => {
            du.insert(key.to_string(), Value::Null);
        }
        None => {}
    };
    set("architecture", None, current.architecture.is_some());
    let version = (!target.version.is_empty()).then(|| Value::String(target.version.clone()));
    set("version", version, current.version.is_some());
    set("image", Some(Value::String(target.image.clone())), true);
    set("force", force.then_some(Value::Bool(true)), current.force);
    json!({"spec": {"desiredUpdate": Value::Object(du)}})
}
