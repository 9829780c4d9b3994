//! Small helpers over JSON objects shared by the simulated controllers: conditions, field
//! access by pointer, stable hashes and timer arithmetic.

use chrono::Utc;
use serde_json::{Value, json};
use tokio::time::Instant;

tokio::task_local! {
    /// The clock of the simulated operators' task ([`super::OperatorSimConfig::clock`]).
    pub(super) static CLOCK: crate::clock::Clock;
}

/// Now on the operators' clock (the wall clock outside their task).
pub(super) fn now() -> chrono::DateTime<Utc> {
    CLOCK
        .try_with(crate::clock::Clock::now)
        .unwrap_or_else(|_| Utc::now())
}

pub(super) fn now_str() -> String {
    now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Sets condition `type_` in `conds` (a JSON array), keeping `lastTransitionTime` when the
/// status does not change.
pub(super) fn set_condition(conds: &mut Value, type_: &str, status: &str, reason: &str, message: &str) {
    if !conds.is_array() {
        *conds = json!([]);
    }
    let Some(list) = conds.as_array_mut() else { return };
    let now = now_str();
    let same = |c: &Value, k: &str, want: &str| c[k].as_str().unwrap_or_default() == want;
    match list.iter_mut().find(|c| c["type"] == type_) {
        Some(c) if same(c, "status", status) && same(c, "reason", reason) && same(c, "message", message) => {}
        Some(c) => {
            if c["status"] != status {
                c["lastTransitionTime"] = json!(now);
            }
            c["status"] = json!(status);
            c["reason"] = json!(reason);
            c["message"] = json!(message);
        }
        None => list.push(json!({
            "type": type_, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": now,
        })),
    }
}

pub(super) fn condition<'a>(o: &'a Value, type_: &str) -> Option<&'a Value> {
    o["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// FNV-1a, for stable per-operator seeds and rendered-config names.
pub(super) fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

pub(super) fn str_at<'a>(o: &'a Value, ptr: &str) -> &'a str {
    o.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

pub(super) fn int_at(o: &Value, ptr: &str) -> Option<i64> {
    o.pointer(ptr).and_then(Value::as_i64)
}

/// The earlier of a pending wake-up time and `b`.
pub(super) fn earliest(a: Option<Instant>, b: Instant) -> Option<Instant> {
    Some(a.map_or(b, |a| a.min(b)))
}
