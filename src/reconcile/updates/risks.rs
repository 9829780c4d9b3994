//! Conditional-update risks: matching rules (`Always`, `PromQL`; upstream
//! `pkg/clusterconditions/clusterconditions.go`, `always/always.go`, `promql/promql.go`), the
//! PromQL throttle and cache (`pkg/clusterconditions/cache/cache.go`) and the `Recommended`
//! condition of each conditional update (`pkg/cvo/availableupdates.go`
//! `evaluateConditionalUpdate`, `newRecommendedReason`), all in openshift/cluster-version-operator.

use std::{collections::HashMap, sync::Arc, time::Duration};

use futures::future::BoxFuture;
use serde::Deserialize;
use tokio::{sync::Mutex, time::Instant};

use crate::openshift::{
    condition::{Condition, ConditionStatus},
    config_v1::{ClusterCondition, ConditionalUpdate, ConditionalUpdateRisk},
};

/// The `Recommended` condition type of a conditional update.
pub const RECOMMENDED: &str = "Recommended";
/// Recommended=True: no risk applies.
pub const NOT_EXPOSED: &str = "NotExposedToRisks";
/// Recommended=Unknown: a risk could not be evaluated.
pub const EVALUATION_FAILED: &str = "EvaluationFailed";
/// Recommended=False with a risk whose name cannot be a reason.
pub const EXPOSED: &str = "ExposedToRisks";
/// Recommended=True although risks apply: the administrator accepted them all.
pub const ALL_ACCEPTED: &str = "AllExposedRisksAccepted";
/// Several reasons at once.
pub const MULTIPLE_REASONS: &str = "MultipleReasons";
/// The message of Recommended=True `NotExposedToRisks`.
pub const NOT_EXPOSED_MESSAGE: &str =
    "The update is recommended, because none of the conditional update risks apply to this cluster.";
/// The message of Recommended=True `AllExposedRisksAccepted`.
pub const ACCEPTED_MESSAGE: &str = "The update is recommended, because either risk does not apply to this cluster or it is accepted by cluster admins.";

/// Answers PromQL queries for risk evaluation: `Ok(true)` the cluster is exposed (the query
/// gave 1), `Ok(false)` it is not (0), `Err(text)` the query could not be answered or gave
/// anything else. [`PrometheusApi`] asks a Prometheus-compatible HTTP API; tests and the demo
/// answer in-process.
pub trait PromQlEvaluator: Send + Sync {
    /// Evaluates one query.
    fn evaluate<'a>(&'a self, promql: &'a str) -> BoxFuture<'a, Result<bool, String>>;
}

/// No query API configured: every PromQL rule fails to evaluate, saying so.
#[derive(Debug, Default)]
pub struct NoPrometheus;

impl PromQlEvaluator for NoPrometheus {
    fn evaluate<'a>(&'a self, _promql: &'a str) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async {
            Err("no Prometheus-compatible query API is configured (--prometheus-url)".to_string())
        })
    }
}

/// Whether `name` may be a condition reason (`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`).
pub fn reason_safe(name: &str) -> bool {
    let b = name.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphabetic()
        && (last.is_ascii_alphanumeric() || *last == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"_,:".contains(c))
}

/// Whether `name` is a valid risk name (`^[A-Z][A-Za-z0-9.-]*$`).
pub fn risk_name_valid(name: &str) -> bool {
    let b = name.as_bytes();
    b.first().is_some_and(u8::is_ascii_uppercase)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'.' || *c == b'-')
}

/// Why a matching rule is unusable (`Valid` of each condition type), or `None` when it is a
/// recognized, valid rule.
fn rule_problem(rule: &ClusterCondition) -> Option<String> {
    match rule.type_.as_str() {
        "Always" => rule
            .promql
            .is_some()
            .then(|| "the Always condition type must not have a promql property".to_string()),
        "PromQL" => match &rule.promql {
            None => Some("the PromQL condition type requires a promql property".to_string()),
            Some(p) if p.promql.is_empty() => {
                Some("the PromQL condition type requires a non-empty promql query".to_string())
            }
            Some(_) => None,
        },
        other => Some(format!("unrecognized cluster condition type {other:?}")),
    }
}

/// Keeps the recognized, valid rules (upstream `PruneInvalid`), with the problems of the
/// others.
pub fn prune_invalid(rules: &[ClusterCondition]) -> (Vec<ClusterCondition>, Vec<String>) {
    let mut kept = Vec::new();
    let mut errs = Vec::new();
    for r in rules {
        match rule_problem(r) {
            None => kept.push(r.clone()),
            Some(e) => errs.push(e),
        }
    }
    (kept, errs)
}

/// Joins errors the way upstream's aggregate error prints: one alone as itself, several as
/// `[a, b]`.
fn aggregate(errs: &[String]) -> String {
    match errs {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Evaluates matching rules with a throttle and cache for PromQL (upstream `Match`): rules in
/// order, unrecognized types skipped, the first rule that evaluates without error decides; no
/// rule ⇒ no match; only errors ⇒ the errors aggregated.
pub struct RiskEvaluator {
    promql: Arc<dyn PromQlEvaluator>,
    cache: Mutex<PromQlCache>,
    timings: PromQlTimings,
}

impl std::fmt::Debug for RiskEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RiskEvaluator")
            .field("timings", &self.timings)
            .finish_non_exhaustive()
    }
}

/// The PromQL throttle and cache intervals (upstream `pkg/clusterconditions/promql`): at least
/// `min_between` between any two queries, the same query at most once per `min_per_query`,
/// results dropped after `expiry`, each query given `timeout`.
#[derive(Clone, Debug)]
pub struct PromQlTimings {
    /// Minimum time between two queries (1 s).
    pub min_between: Duration,
    /// Minimum time before the same query is asked again (1 h).
    pub min_per_query: Duration,
    /// A cached result older than this is forgotten (24 h).
    pub expiry: Duration,
    /// One query's timeout (5 min).
    pub timeout: Duration,
}

impl PromQlTimings {
    /// Upstream's values.
    pub fn upstream() -> Self {
        Self {
            min_between: Duration::from_secs(1),
            min_per_query: Duration::from_secs(3600),
            expiry: Duration::from_secs(24 * 3600),
            timeout: Duration::from_secs(300),
        }
    }
}

#[derive(Debug, Default)]
struct PromQlCache {
    last_query: Option<Instant>,
    entries: HashMap<String, CacheEntry>,
}

#[derive(Debug, Default)]
struct CacheEntry {
    result: Option<(Result<bool, String>, Instant)>,
    queued: Option<Instant>,
}

impl RiskEvaluator {
    /// An evaluator over `promql` with `timings`.
    pub fn new(promql: Arc<dyn PromQlEvaluator>, timings: PromQlTimings) -> Self {
        Self {
            promql,
            cache: Mutex::new(PromQlCache::default()),
            timings,
        }
    }

    /// Whether `rules` match this cluster (upstream `conditionRegistry.Match`).
    ///
    /// # Errors
    /// Every evaluable rule failed: the failures, aggregated.
    pub async fn matches(&self, rules: &[ClusterCondition]) -> Result<bool, String> {
        let mut errs = Vec::new();
        for r in rules {
            let res = match r.type_.as_str() {
                "Always" => match rule_problem(r) {
                    None => Ok(true),
                    Some(e) => Err(e),
                },
                "PromQL" => match &r.promql {
                    Some(p) if !p.promql.is_empty() => self.promql_cached(&p.promql).await,
                    _ => Err(rule_problem(r).unwrap_or_default()),
                },
                other => {
                    tracing::debug!("skipping unrecognized cluster condition type {other:?}");
                    continue;
                }
            };
            match res {
                Ok(m) => return Ok(m),
                Err(e) => errs.push(e),
            }
        }
        if errs.is_empty() {
            Ok(false)
        } else {
            Err(aggregate(&errs))
        }
    }

    /// One PromQL query through the throttle and cache: a fresh cached answer is returned as
    /// is; a query slot (one per `min_between`) goes to the most stale waiting query (never
    /// answered first, then the oldest answer), so a busy cluster still refreshes every
    /// query in turn; a query that does not get the slot returns its cached answer or a
    /// throttling error.
    async fn promql_cached(&self, query: &str) -> Result<bool, String> {
        let now = Instant::now();
        let t = &self.timings;
        let pick = {
            let mut c = self.cache.lock().await;
            c.entries.retain(|_, e| {
                e.result
                    .as_ref()
                    .is_none_or(|(_, at)| now.duration_since(*at) < t.expiry)
                    || e.queued.is_some()
            });
            for e in c.entries.values_mut() {
                if e.result
                    .as_ref()
                    .is_some_and(|(_, at)| now.duration_since(*at) >= t.expiry)
                {
                    e.result = None;
                }
            }
            let e = c.entries.entry(query.to_string()).or_default();
            if let Some((r, at)) = &e.result
                && now.duration_since(*at) < t.min_per_query
            {
                return r.clone();
            }
            e.queued.get_or_insert(now);
            if c.last_query
                .is_some_and(|l| now.duration_since(l) < t.min_between)
            {
                return throttled(&c, query, t.min_between);
            }
            let pick = c
                .entries
                .iter()
                .filter(|(_, e)| e.queued.is_some())
                .min_by_key(|(_, e)| (e.result.as_ref().map(|(_, at)| *at), e.queued))
                .map(|(k, _)| k.clone())
                .unwrap_or_else(|| query.to_string());
            c.last_query = Some(now);
            pick
        };
        let res = match tokio::time::timeout(t.timeout, self.promql.evaluate(&pick)).await {
            Ok(r) => r,
            Err(_) => Err(format!("PromQL query timed out after {:?}", t.timeout)),
        };
        let mut c = self.cache.lock().await;
        let done = Instant::now();
        c.last_query = Some(done);
        let e = c.entries.entry(pick.clone()).or_default();
        e.result = Some((res.clone(), done));
        e.queued = None;
        if pick == query {
            res
        } else {
            throttled(&c, query, t.min_between)
        }
    }
}

fn throttled(c: &PromQlCache, query: &str, min_between: Duration) -> Result<bool, String> {
    match c.entries.get(query).and_then(|e| e.result.as_ref()) {
        Some((r, _)) => r.clone(),
        None => Err(format!(
            "client-side throttling: at most one PromQL query per {min_between:?}; this query is queued"
        )),
    }
}

/// Combines Recommended reasons (upstream `newRecommendedReason`).
pub fn combine_reason(now: &str, want: &str) -> String {
    let r = if now == NOT_EXPOSED
        || now == want
        || (now == ALL_ACCEPTED && want != NOT_EXPOSED)
        || (now == EVALUATION_FAILED && want == EXPOSED)
    {
        want
    } else if want == NOT_EXPOSED
        || (now == EVALUATION_FAILED && want == ALL_ACCEPTED)
        || (now == EXPOSED && (want == ALL_ACCEPTED || want == EVALUATION_FAILED))
    {
        now
    } else {
        MULTIPLE_REASONS
    };
    r.to_string()
}

/// Whether a risk applies: `True` (`Match`), `False` (`NotMatch`) or `Unknown`
/// (`EvaluationFailed`, with the message upstream writes).
#[derive(Clone, Debug, PartialEq)]
pub struct Applies {
    /// True, False or Unknown.
    pub status: ConditionStatus,
    /// For Unknown: `Could not evaluate exposure to update risk {name} ({err})` plus the
    /// risk's description and URL.
    pub message: String,
}

/// Evaluates each distinct risk (by name) of `updates` once, ordered by the highest target
/// version it affects (descending), then name (upstream `evaluateConditionalUpdates`).
pub async fn evaluate_risks(eval: &RiskEvaluator, updates: &[ConditionalUpdate]) -> HashMap<String, Applies> {
    let mut by_name: HashMap<&str, (Option<semver::Version>, &ConditionalUpdateRisk)> = HashMap::new();
    for cu in updates {
        let v = semver::Version::parse(&cu.release.version).ok();
        for r in &cu.risks {
            let e = by_name.entry(r.name.as_str()).or_insert((v.clone(), r));
            if v > e.0 {
                e.0 = v.clone();
            }
        }
    }
    let mut order: Vec<_> = by_name.into_values().collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    let mut out = HashMap::new();
    for (_, r) in order {
        let applies = match eval.matches(&r.matching_rules).await {
            Ok(true) => Applies {
                status: ConditionStatus::True,
                message: String::new(),
            },
            Ok(false) => Applies {
                status: ConditionStatus::False,
                message: String::new(),
            },
            Err(e) => Applies {
                status: ConditionStatus::Unknown,
                message: format!(
                    "Could not evaluate exposure to update risk {n} ({e})\n  {n} description: {m}\n  {n} URL: {u}",
                    n = r.name,
                    m = r.message,
                    u = r.url
                ),
            },
        };
        out.insert(r.name.clone(), applies);
    }
    out
}

/// The Recommended condition of a conditional update with `risks` (upstream
/// `evaluateConditionalUpdate`): True `NotExposedToRisks` to start; an Unknown risk makes it
/// Unknown (False stays False) with `EvaluationFailed`; an applying risk named in `accepted`
/// gives `AllExposedRisksAccepted`; any other applying risk makes it False with the risk's
/// name as reason (or `ExposedToRisks` when the name cannot be a reason) and `{message}
/// {url}`; reasons combine by [`combine_reason`], messages join with a blank line. A risk
/// missing from `applies` counts as Unknown.
pub fn recommended(
    risks: &[ConditionalUpdateRisk],
    applies: &HashMap<String, Applies>,
    accepted: &[String],
) -> Condition {
    let mut status = ConditionStatus::True;
    let mut reason = NOT_EXPOSED.to_string();
    let mut message = NOT_EXPOSED_MESSAGE.to_string();
    let mut msgs: Vec<String> = Vec::new();
    for r in risks {
        let a = applies.get(&r.name).cloned().unwrap_or_else(|| Applies {
            status: ConditionStatus::Unknown,
            message: format!(
                "Could not evaluate exposure to update risk {} (not evaluated yet)",
                r.name
            ),
        });
        match a.status {
            ConditionStatus::Unknown => {
                if status != ConditionStatus::False {
                    status = ConditionStatus::Unknown;
                }
                reason = combine_reason(&reason, EVALUATION_FAILED);
                msgs.push(a.message);
            }
            ConditionStatus::True if accepted.contains(&r.name) => {
                reason = combine_reason(&reason, ALL_ACCEPTED);
                message = ACCEPTED_MESSAGE.to_string();
            }
            ConditionStatus::True => {
                status = ConditionStatus::False;
                let want = if reason_safe(&r.name) {
                    r.name.as_str()
                } else {
                    EXPOSED
                };
                reason = combine_reason(&reason, want);
                msgs.push(format!("{} {}", r.message, r.url));
            }
            ConditionStatus::False => {}
        }
    }
    if !msgs.is_empty() {
        message = msgs.join("\n\n");
    }
    Condition {
        type_: RECOMMENDED.into(),
        status,
        last_transition_time: None,
        reason: Some(reason),
        message: Some(message),
        observed_generation: None,
    }
}

/// A risk declaration of openshift/cincinnati-graph-data `blocked-edges/*.yaml`: the target
/// `to`, a regular expression `from`, and (except in the oldest files, which block an edge
/// outright) the risk's `name`, `message`, `url` and `matchingRules`; `fixedIn` optional.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlockedEdge {
    /// Target version.
    pub to: semver::Version,
    /// Regular expression over origin versions.
    pub from: String,
    /// Risk name.
    #[serde(default)]
    pub name: Option<String>,
    /// Risk description.
    #[serde(default)]
    pub message: Option<String>,
    /// Link to the risk's description.
    #[serde(default)]
    pub url: Option<String>,
    /// The first version with the fix.
    #[serde(default)]
    pub fixed_in: Option<String>,
    /// When the risk applies.
    #[serde(default)]
    pub matching_rules: Vec<ClusterCondition>,
}

impl BlockedEdge {
    /// Parses and checks one declaration: `from` compiles, and a declaration with a name has
    /// an identifier for a name (a letter, then letters, digits, `.`, `-` or `_`: the published
    /// data has `DTK_4_16_58_KernelMismatch`), a URL and at least one recognized valid matching
    /// rule.
    ///
    /// # Errors
    /// One line naming `source` and what is wrong.
    pub fn parse(source: &str, text: &str) -> Result<Self, String> {
        let b: BlockedEdge = serde_norway::from_str(text).map_err(|e| format!("{source}: {e}"))?;
        regex::Regex::new(&b.from).map_err(|e| format!("{source}: from {:?}: {e}", b.from))?;
        if let Some(name) = &b.name {
            let ident = name.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
                && name
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b".-_".contains(&c));
            if !ident {
                return Err(format!("{source}: invalid risk name {name:?}"));
            }
            if b.url.as_deref().is_none_or(str::is_empty) {
                return Err(format!("{source}: risk {name} has no url"));
            }
            let (kept, errs) = prune_invalid(&b.matching_rules);
            if kept.is_empty() {
                return Err(format!(
                    "{source}: risk {name} has no usable matching rule ({})",
                    errs.join(", ")
                ));
            }
        }
        Ok(b)
    }

    /// The risk as the update service would send it, when the declaration names one.
    pub fn risk(&self) -> Option<ConditionalUpdateRisk> {
        Some(ConditionalUpdateRisk {
            url: self.url.clone().unwrap_or_default(),
            name: self.name.clone()?,
            message: self.message.clone().unwrap_or_default(),
            matching_rules: self.matching_rules.clone(),
            conditions: Vec::new(),
        })
    }
}
