//! Fault injection for the [`Simulator`](super::Simulator): added latency, error answers per verb (429 with
//! `Retry-After`, 500, 503, and timeouts that hang then answer 504), watches cut short,
//! forced `410 Gone` on watches and forced `409 Conflict` on writes. Decisions come from a
//! seeded RNG, so a test that sends the same requests in the same order sees the same faults.
//!
//! Faults are set at runtime with [`Simulator::set_faults`](super::Simulator::set_faults) (in-process tests) or read from a
//! scenario file / `cvo sim serve` flags. Every injected fault is named in the request's
//! [`AuditEntry::fault`].
//!
//! The injected answers are what kube-apiserver sends in those cases: `Status` bodies with
//! reasons `TooManyRequests` (apiserver max-in-flight filter, `Retry-After` header),
//! `InternalError`, `ServiceUnavailable`, `Timeout` (504), `Conflict` (optimistic
//! concurrency, `k8s.io/apiserver/pkg/registry/generic/registry/store.go`), and for an expired
//! watch a `200` stream holding one `ERROR` event whose object is a `410 Expired` `Status`
//! (`k8s.io/apiserver/pkg/storage/cacher`).
//!
//! YAML form (the `faults:` key of a scenario file; every field optional):
//!
//! ```yaml
//! seed: 42                 # RNG seed (default 0)
//! latency_ms: 50           # added to every request
//! jitter_ms: 20            # plus a uniform 0..=jitter_ms
//! errors:                  # per verb: get list watch create update patch delete, or "*"
//!   - {verb: list, code: 429, rate: 0.1}
//!   - {verb: "*", code: 500, rate: 0.01}
//!   - {verb: get, code: 504, rate: 0.05}   # 504 = a timeout: hang timeout_ms, then 504
//! retry_after_secs: 1      # Retry-After of a 429 (default 1)
//! timeout_ms: 3000         # how long a timeout hangs (default 3000)
//! watch:
//!   drop_after_events: 5   # close every watch after 5 events
//!   drop_after_secs: 10    # ... or after 10 s, whichever comes first
//!   gone_next: 2           # the next 2 watches get 410 Expired
//!   gone_rate: 0.1         # then each watch with this probability
//!   event_delay_ms: 300    # deliver each watch event 300 ms after it happened (a lagging watch)
//! conflict_next: 3         # the next 3 updates/patches get 409 Conflict
//! timed:                   # scripted outages, seconds after the faults were set (see Timed)
//!   - {from: 20, drop_watches: true}
//!   - {from: 45, until: 70, error: 503}
//!   - {from: 70, verb: watch, resource: nodes, gone_http_next: 1}
//! ```

use std::{
    convert::Infallible,
    pin::Pin,
    sync::{Mutex, MutexGuard},
    time::Duration,
};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use http::{Response, header};
use http_body::Frame;
use http_body_util::{BodyExt, BodyStream, Full, StreamBody};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{
    audit::AuditEntry,
    response::{ResponseBody, json_response},
};

/// The verbs faults can be aimed at.
pub const VERBS: [&str; 7] = ["get", "list", "watch", "create", "update", "patch", "delete"];

/// Error codes an [`ErrorRule`] may inject.
pub const CODES: [u16; 4] = [429, 500, 503, 504];

/// What faults to inject. `Default` injects none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// Seed of the RNG deciding rate-based faults.
    pub seed: u64,
    /// Latency added to every request (milliseconds).
    pub latency_ms: u64,
    /// Extra latency, uniform in `0..=jitter_ms` milliseconds.
    pub jitter_ms: u64,
    /// Error answers per verb; the first rule that fires wins.
    pub errors: Vec<ErrorRule>,
    /// `Retry-After` of an injected 429 (seconds).
    pub retry_after_secs: u64,
    /// How long an injected timeout hangs before its 504 (milliseconds).
    pub timeout_ms: u64,
    /// Watch faults.
    pub watch: WatchFaults,
    /// The next N updates and patches (status included) get `409 Conflict`.
    pub conflict_next: u32,
    /// Scripted outages: faults in force between two moments, optionally for one resource
    /// or verb (see [`Timed`]).
    pub timed: Vec<Timed>,
}

/// A fault in force from `from` to `until` seconds after the faults were set (for `cvo sim
/// serve`: after the server is ready), for the requests matching `verb` and `resource`.
/// Each field below `resource` is one effect; several may be combined.
///
/// ```yaml
/// timed:
///   - {from: 20, drop_watches: true}                   # every open watch ends at t=20
///   - {from: 45, until: 70, error: 503}                # all requests answer 503 in 45..70
///   - {from: 70, verb: watch, resource: nodes, gone_http_next: 1}  # then one HTTP 410
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Timed {
    /// Start, seconds (default 0).
    pub from: f64,
    /// End, seconds (default: never).
    pub until: Option<f64>,
    /// A verb of [`VERBS`], or `*` (default).
    pub verb: Option<String>,
    /// A resource: its plural (`nodes`) or `plural.group` (`clusteroperators.config.openshift.io`);
    /// default all.
    pub resource: Option<String>,
    /// Answer with this code (one of [`CODES`]) ...
    pub error: Option<u16>,
    /// ... with this probability (default 1).
    pub rate: Option<f64>,
    /// Close every matching watch open at `from` (and any opened before `until`, at once).
    pub drop_watches: bool,
    /// The next N matching watches (from `from`) get a `410 Expired` ERROR event.
    pub gone_next: u32,
    /// The next N matching watches (from `from`) get an HTTP `410 Expired` answer.
    pub gone_http_next: u32,
}

impl Timed {
    fn validate(&self) -> Result<(), String> {
        if !(self.from.is_finite() && self.from >= 0.0) {
            return Err(format!("from {}: must be a number of seconds >= 0", self.from));
        }
        if let Some(u) = self.until
            && !(u.is_finite() && u > self.from)
        {
            return Err(format!("until {u}: must be after from ({})", self.from));
        }
        if let Some(v) = &self.verb
            && v != "*"
            && !VERBS.contains(&v.as_str())
        {
            return Err(format!("verb {v:?}: use one of {} or *", VERBS.join(", ")));
        }
        if let Some(c) = self.error
            && !CODES.contains(&c)
        {
            return Err(format!("error {c}: use 429, 500, 503 or 504"));
        }
        if let Some(r) = self.rate {
            check_rate("rate", r)?;
        }
        if self.error.is_none() && !self.drop_watches && self.gone_next == 0 && self.gone_http_next == 0 {
            return Err("no effect: set error, drop_watches, gone_next or gone_http_next".into());
        }
        Ok(())
    }

    /// Whether the fault is in force `t` seconds after the start.
    fn active(&self, t: f64) -> bool {
        t >= self.from && self.until.is_none_or(|u| t < u)
    }

    /// Whether a request with `verb` on `resource` (`plural.group`) matches.
    fn matches(&self, verb: &str, resource: &str) -> bool {
        let verb_ok = self.verb.as_deref().is_none_or(|v| v == "*" || v == verb);
        let res_ok = self
            .resource
            .as_deref()
            .is_none_or(|r| r == resource || resource.split_once('.').map_or(resource, |(p, _)| p) == r);
        verb_ok && res_ok
    }
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            seed: 0,
            latency_ms: 0,
            jitter_ms: 0,
            errors: Vec::new(),
            retry_after_secs: 1,
            timeout_ms: 3000,
            watch: WatchFaults::default(),
            conflict_next: 0,
            timed: Vec::new(),
        }
    }
}

/// An error answer injected into a share of the requests with one verb.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorRule {
    /// A verb of [`VERBS`], or `*` for all.
    pub verb: String,
    /// HTTP code, one of [`CODES`]; 504 hangs [`Faults::timeout_ms`] first.
    pub code: u16,
    /// Share of the requests answered so, `0.0..=1.0`.
    pub rate: f64,
}

impl std::str::FromStr for ErrorRule {
    type Err = String;

    /// Parses `VERB=CODE:RATE`, e.g. `list=429:0.1` or `*=500:0.05`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?}: expected VERB=CODE:RATE, e.g. list=429:0.1");
        let (verb, rest) = s.split_once('=').ok_or_else(bad)?;
        let (code, rate) = rest.split_once(':').ok_or_else(bad)?;
        let rule = Self {
            verb: verb.trim().to_owned(),
            code: code.trim().parse().map_err(|_| bad())?,
            rate: rate.trim().parse().map_err(|_| bad())?,
        };
        rule.validate().map_err(|e| format!("{s:?}: {e}"))?;
        Ok(rule)
    }
}

impl ErrorRule {
    fn validate(&self) -> Result<(), String> {
        if self.verb != "*" && !VERBS.contains(&self.verb.as_str()) {
            return Err(format!(
                "verb {:?}: use one of {} or *",
                self.verb,
                VERBS.join(", ")
            ));
        }
        if !CODES.contains(&self.code) {
            return Err(format!("code {}: use 429, 500, 503 or 504", self.code));
        }
        check_rate("rate", self.rate)
    }

    fn applies(&self, verb: &str) -> bool {
        self.verb == "*" || self.verb == verb
    }
}

fn check_rate(field: &str, r: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&r) {
        Ok(())
    } else {
        Err(format!("{field} {r}: must be between 0 and 1"))
    }
}

/// Faults of watch requests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WatchFaults {
    /// Close every watch stream after this many events (bookmarks count).
    pub drop_after_events: Option<u64>,
    /// Close every watch stream after this many seconds.
    pub drop_after_secs: Option<f64>,
    /// The next N watches get a `410 Expired` ERROR event and end.
    pub gone_next: u32,
    /// After those, each watch gets one with this probability (`0.0..=1.0`).
    pub gone_rate: f64,
    /// Deliver each watch event this many milliseconds after the server produced it (order
    /// kept): a loaded kube-apiserver's watch lags its writes, so a client that just wrote an
    /// object may not see it in its watch cache yet.
    pub event_delay_ms: u64,
}

impl Faults {
    /// Checks ranges: rates in `0..=1`, known verbs and codes, positive drop limits.
    ///
    /// # Errors
    /// A one-line message naming the field.
    pub fn validate(&self) -> Result<(), String> {
        for (i, r) in self.errors.iter().enumerate() {
            r.validate().map_err(|e| format!("errors[{i}]: {e}"))?;
        }
        check_rate("watch.gone_rate", self.watch.gone_rate)?;
        if self.watch.drop_after_events == Some(0) {
            return Err("watch.drop_after_events: must be at least 1".into());
        }
        if let Some(s) = self.watch.drop_after_secs
            && !(s.is_finite() && s > 0.0)
        {
            return Err(format!("watch.drop_after_secs {s}: must be a positive number"));
        }
        for (i, t) in self.timed.iter().enumerate() {
            t.validate().map_err(|e| format!("timed[{i}]: {e}"))?;
        }
        Ok(())
    }

    /// Whether any fault is configured.
    pub fn is_empty(&self) -> bool {
        self.latency_ms == 0
            && self.jitter_ms == 0
            && self.errors.iter().all(|r| r.rate == 0.0)
            && self.watch.drop_after_events.is_none()
            && self.watch.drop_after_secs.is_none()
            && self.watch.gone_next == 0
            && self.watch.gone_rate == 0.0
            && self.watch.event_delay_ms == 0
            && self.conflict_next == 0
            && self.timed.is_empty()
    }
}

/// Faults in force and what is left of the "next N" counters.
struct FaultState {
    faults: Faults,
    rng: StdRng,
    gone_left: u32,
    conflict_left: u32,
    /// When the faults were set: `t = 0` of the timed faults.
    start: tokio::time::Instant,
    /// Per timed fault, what is left of its `gone_next` and `gone_http_next`.
    timed_left: Vec<(u32, u32)>,
}

/// Where new audit entries go.
pub(super) type AuditSink = Box<dyn Fn(&AuditEntry) + Send + Sync>;

/// Per-simulator fault state and audit sink (held by the simulator's shared state).
#[derive(Default)]
pub(crate) struct Hooks {
    state: Mutex<Option<FaultState>>,
    sink: Mutex<Option<AuditSink>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A fault decided for one request.
enum Injected {
    Error(u16),
    Conflict,
    Gone,
    GoneHttp,
}

impl Hooks {
    /// Puts `faults` in force (resetting the RNG to its seed and the "next N" counters);
    /// empty faults switch injection off. See [`Simulator::set_faults`](super::Simulator::set_faults).
    ///
    /// # Errors
    /// A one-line message when [`Faults::validate`] fails; the faults in force do not change.
    pub(super) fn set_faults(&self, faults: Faults) -> Result<(), String> {
        faults.validate()?;
        let mut st = lock(&self.state);
        *st = if faults.is_empty() {
            None
        } else {
            Some(FaultState {
                start: tokio::time::Instant::now(),
                timed_left: faults
                    .timed
                    .iter()
                    .map(|t| (t.gone_next, t.gone_http_next))
                    .collect(),
                rng: StdRng::seed_from_u64(faults.seed),
                gone_left: faults.watch.gone_next,
                conflict_left: faults.conflict_next,
                faults,
            })
        };
        Ok(())
    }

    /// The faults in force (`Faults::default()` when none).
    pub(super) fn faults(&self) -> Faults {
        lock(&self.state)
            .as_ref()
            .map(|s| s.faults.clone())
            .unwrap_or_default()
    }

    /// Sets the audit sink, replacing an earlier one.
    pub(super) fn on_audit(&self, sink: AuditSink) {
        *lock(&self.sink) = Some(sink);
    }

    /// Sends a new audit entry to the sink, if one is set.
    pub(super) fn audited(&self, e: &AuditEntry) {
        if let Some(sink) = lock(&self.sink).as_ref() {
            sink(e);
        }
    }

    /// Applies latency, then answers with an injected fault if one fires: the response and
    /// the fault's name. `None`: serve the request normally. `resource_version` gives the
    /// store's current resourceVersion (named in a forced `410 Expired`).
    pub(super) async fn before(
        &self,
        resource_version: impl Fn() -> u64,
        parts: &http::request::Parts,
        verb: &'static str,
    ) -> Option<(Response<ResponseBody>, String)> {
        let (delay, injected, faults) = {
            let mut guard = lock(&self.state);
            let st = guard.as_mut()?;
            let f = &st.faults;
            let jitter = if f.jitter_ms > 0 {
                st.rng.gen_range(0..=f.jitter_ms)
            } else {
                0
            };
            let delay = Duration::from_millis(f.latency_ms + jitter);
            let mut injected = None;
            let (resource, _) = resource_and_name(parts.uri.path());
            let t = st.start.elapsed().as_secs_f64();
            for (i, tf) in f.timed.iter().enumerate() {
                if injected.is_some() || !tf.active(t) || !tf.matches(verb, &resource) {
                    continue;
                }
                let left = &mut st.timed_left[i];
                if verb == "watch" && left.1 > 0 {
                    left.1 -= 1;
                    injected = Some(Injected::GoneHttp);
                } else if verb == "watch" && left.0 > 0 {
                    left.0 -= 1;
                    injected = Some(Injected::Gone);
                } else if let Some(code) = tf.error
                    && st.rng.gen_bool(tf.rate.unwrap_or(1.0))
                {
                    injected = Some(Injected::Error(code));
                }
            }
            if injected.is_some() {
            } else if matches!(verb, "update" | "patch") && st.conflict_left > 0 {
                st.conflict_left -= 1;
                injected = Some(Injected::Conflict);
            } else if verb == "watch" && st.gone_left > 0 {
                st.gone_left -= 1;
                injected = Some(Injected::Gone);
            } else if verb == "watch" && f.watch.gone_rate > 0.0 && st.rng.gen_bool(f.watch.gone_rate) {
                injected = Some(Injected::Gone);
            }
            if injected.is_none() {
                for r in f.errors.iter().filter(|r| r.applies(verb) && r.rate > 0.0) {
                    if st.rng.gen_bool(r.rate.min(1.0)) {
                        injected = Some(Injected::Error(r.code));
                        break;
                    }
                }
            }
            (delay, injected, st.faults.clone())
        };
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Some(match injected? {
            Injected::Error(429) => {
                let secs = faults.retry_after_secs;
                let mut r = json_response(
                    429,
                    &status(
                        429,
                        "TooManyRequests",
                        "Too many requests, please try again later.",
                        json!({"retryAfterSeconds": secs}),
                    ),
                );
                r.headers_mut()
                    .insert(header::RETRY_AFTER, http::HeaderValue::from(secs));
                (r, "error 429".to_owned())
            }
            Injected::Error(504) => {
                tokio::time::sleep(Duration::from_millis(faults.timeout_ms)).await;
                let msg = "the server was unable to return a response in the time allotted, \
                           but may still be processing the request";
                (
                    json_response(504, &status(504, "Timeout", msg, json!({}))),
                    "timeout".to_owned(),
                )
            }
            Injected::Error(code) => {
                let (reason, msg) = if code == 503 {
                    (
                        "ServiceUnavailable",
                        "the server is currently unable to handle the request",
                    )
                } else {
                    ("InternalError", "Internal error occurred: injected fault")
                };
                (
                    json_response(code, &status(code, reason, msg, json!({}))),
                    format!("error {code}"),
                )
            }
            Injected::Conflict => {
                let (resource, name) = resource_and_name(parts.uri.path());
                let msg = format!(
                    "Operation cannot be fulfilled on {resource} {name:?}: the object has been \
                     modified; please apply your changes to the latest version and try again"
                );
                let (kind, group) = resource.split_once('.').unwrap_or((resource.as_str(), ""));
                let details = json!({"name": name, "group": group, "kind": kind});
                (
                    json_response(409, &status(409, "Conflict", &msg, details)),
                    "conflict".to_owned(),
                )
            }
            Injected::GoneHttp => {
                let msg = too_old(parts, resource_version());
                (
                    json_response(410, &status(410, "Expired", &msg, json!({}))),
                    "gone (HTTP 410)".to_owned(),
                )
            }
            Injected::Gone => {
                let msg = too_old(parts, resource_version());
                let event = json!({"type": "ERROR", "object": status(410, "Expired", &msg, json!({}))});
                let mut line = serde_json::to_vec(&event).unwrap_or_default();
                line.push(b'\n');
                let mut r = Response::new(Full::new(Bytes::from(line)).boxed_unsync());
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/json"),
                );
                (r, "gone".to_owned())
            }
        })
    }

    /// Arms the watch drop on a served watch: the response with its stream cut short, and the
    /// fault's name.
    pub(super) fn after(
        &self,
        parts: &http::request::Parts,
        verb: &'static str,
        response: Response<ResponseBody>,
    ) -> (Response<ResponseBody>, Option<String>) {
        if verb != "watch" || response.status() != http::StatusCode::OK {
            return (response, None);
        }
        let (w, drop_in) = match lock(&self.state).as_ref() {
            Some(st) => {
                let (resource, _) = resource_and_name(parts.uri.path());
                let t = st.start.elapsed().as_secs_f64();
                // The earliest scripted drop still to come (or in force now) for this watch.
                let drop_in = st
                    .faults
                    .timed
                    .iter()
                    .filter(|tf| tf.drop_watches && tf.matches(verb, &resource))
                    .filter_map(|tf| {
                        if t < tf.from {
                            Some(tf.from - t)
                        } else if tf.until.is_some() && tf.active(t) {
                            Some(0.0)
                        } else {
                            None
                        }
                    })
                    .reduce(f64::min);
                (st.faults.watch.clone(), drop_in)
            }
            None => return (response, None),
        };
        if w.drop_after_events.is_none()
            && w.drop_after_secs.is_none()
            && drop_in.is_none()
            && w.event_delay_ms == 0
        {
            return (response, None);
        }
        let (head, body) = response.into_parts();
        type Frames = Pin<Box<dyn Stream<Item = Result<Frame<Bytes>, Infallible>> + Send>>;
        let mut frames: Frames = Box::pin(BodyStream::new(body));
        let mut name = Vec::new();
        if w.event_delay_ms > 0 {
            // Each frame is stamped when the server produced it and released that much later
            // (`buffered` polls the body ahead, so the stamps are the production times).
            let lag = Duration::from_millis(w.event_delay_ms);
            frames = Box::pin(
                frames
                    .map(move |f| {
                        let at = tokio::time::Instant::now() + lag;
                        async move {
                            tokio::time::sleep_until(at).await;
                            f
                        }
                    })
                    .buffered(4096),
            );
        }
        if let Some(n) = w.drop_after_events {
            frames = Box::pin(frames.take(usize::try_from(n).unwrap_or(usize::MAX)));
            name.push(format!("{n} events"));
        }
        if let Some(s) = w.drop_after_secs {
            frames = Box::pin(frames.take_until(tokio::time::sleep(Duration::from_secs_f64(s))));
            name.push(format!("{s} s"));
        }
        if let Some(s) = drop_in {
            frames = Box::pin(frames.take_until(tokio::time::sleep(Duration::from_secs_f64(s))));
            name.push(format!("{s:.1} s (scripted)"));
        }
        let fault = if name.is_empty() {
            format!("watch events {} ms late", w.event_delay_ms)
        } else {
            format!("watch drop after {}", name.join(" or "))
        };
        (
            Response::from_parts(head, StreamBody::new(frames).boxed_unsync()),
            Some(fault),
        )
    }
}

/// kube-apiserver's message for an expired resourceVersion.
fn too_old(parts: &http::request::Parts, current: u64) -> String {
    let query = parts.uri.query().unwrap_or_default();
    let from = query
        .split('&')
        .find_map(|p| p.strip_prefix("resourceVersion="))
        .unwrap_or("0");
    format!("too old resource version: {from} ({current})")
}

/// A kube-apiserver `Status` failure body.
fn status(code: u16, reason: &str, message: &str, details: Value) -> Value {
    let mut s = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    });
    if details.as_object().is_some_and(|d| !d.is_empty()) {
        s["details"] = details;
    }
    s
}

/// `plural.group` and the object name of a request path, e.g.
/// `("clusteroperators.config.openshift.io", "dns")`.
fn resource_and_name(path: &str) -> (String, String) {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest): (&str, &[&str]) = match segs.as_slice() {
        ["api", _, rest @ ..] => ("", rest),
        ["apis", g, _, rest @ ..] => (g, rest),
        _ => ("", &[]),
    };
    let rest = match (group, rest) {
        // A namespace itself and its own subresources: /api/v1/namespaces/{name}[/status].
        ("", ["namespaces", _] | ["namespaces", _, "status" | "finalize"]) => rest,
        // A namespaced resource: its collection (list, watch) or one object of it.
        (_, ["namespaces", _, r @ ..]) if !r.is_empty() => r,
        (_, r) => r,
    };
    let plural = rest.first().copied().unwrap_or_default();
    let name = rest.get(1).copied().unwrap_or_default().to_owned();
    let resource = if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    };
    (resource, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_rule_parses_and_checks() {
        let r: ErrorRule = "list=429:0.25".parse().expect("parses");
        assert_eq!((r.verb.as_str(), r.code, r.rate), ("list", 429, 0.25));
        assert!("*=504:1".parse::<ErrorRule>().is_ok());
        assert!("list=418:0.1".parse::<ErrorRule>().is_err());
        assert!("lists=429:0.1".parse::<ErrorRule>().is_err());
        assert!("list=429:1.5".parse::<ErrorRule>().is_err());
        assert!("list429".parse::<ErrorRule>().is_err());
    }

    #[test]
    fn resource_and_name_of_paths() {
        assert_eq!(
            resource_and_name("/apis/config.openshift.io/v1/clusteroperators/dns/status"),
            ("clusteroperators.config.openshift.io".into(), "dns".into())
        );
        assert_eq!(
            resource_and_name("/api/v1/namespaces/ns/configmaps/x"),
            ("configmaps".into(), "x".into())
        );
        // A namespaced collection (list, watch) names its resource, not `namespaces`.
        assert_eq!(
            resource_and_name("/apis/coordination.k8s.io/v1/namespaces/ns/leases"),
            ("leases.coordination.k8s.io".into(), String::new())
        );
        assert_eq!(
            resource_and_name("/api/v1/namespaces/ns/configmaps"),
            ("configmaps".into(), String::new())
        );
        // A namespace itself and its status.
        assert_eq!(
            resource_and_name("/api/v1/namespaces/ns/status"),
            ("namespaces".into(), "ns".into())
        );
        assert_eq!(
            resource_and_name("/api/v1/namespaces/ns"),
            ("namespaces".into(), "ns".into())
        );
    }

    #[test]
    fn faults_yaml_round_trip() {
        let f: Faults = serde_norway::from_str(
            "seed: 7\nerrors: [{verb: list, code: 429, rate: 0.5}]\nwatch: {gone_next: 2}\n",
        )
        .expect("parses");
        assert_eq!(f.seed, 7);
        assert_eq!(f.watch.gone_next, 2);
        assert_eq!(f.retry_after_secs, 1);
        assert!(!f.is_empty());
        assert!(Faults::default().is_empty());
        assert!(serde_norway::from_str::<Faults>("latency: 5\n").is_err());
    }

    #[test]
    fn timed_faults_parse_check_and_match() {
        let f: Faults = serde_norway::from_str(
            "timed:\n  - {from: 20, drop_watches: true}\n  - {from: 45, until: 70, error: 503}\n  - {from: 70, verb: watch, resource: nodes, gone_http_next: 1}\n",
        )
        .expect("parses");
        assert!(f.validate().is_ok());
        assert!(!f.is_empty());
        let outage = &f.timed[1];
        assert!(!outage.active(44.9) && outage.active(45.0) && !outage.active(70.0));
        assert!(outage.matches("list", "clusteroperators.config.openshift.io"));
        let gone = &f.timed[2];
        assert!(gone.matches("watch", "nodes") && !gone.matches("list", "nodes"));
        assert!(!gone.matches("watch", "configmaps"));
        let bad = |y: &str| {
            serde_norway::from_str::<Faults>(y)
                .expect("yaml")
                .validate()
                .expect_err(y)
        };
        assert_eq!(
            bad("timed: [{from: 5}]\n"),
            "timed[0]: no effect: set error, drop_watches, gone_next or gone_http_next"
        );
        assert_eq!(
            bad("timed: [{from: 5, until: 2, error: 503}]\n"),
            "timed[0]: until 2: must be after from (5)"
        );
        assert_eq!(
            bad("timed: [{error: 418}]\n"),
            "timed[0]: error 418: use 429, 500, 503 or 504"
        );
    }
}
