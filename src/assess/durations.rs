//! Go `time.Duration` arithmetic and text, as `oc adm upgrade status` prints durations
//! (`openshift/oc pkg/cli/admin/upgrade/status/status.go` `shortDuration`, Go `time.Duration.String`).
//!
//! Durations are signed nanoseconds (`i64`), like Go's `time.Duration`.

/// One second in nanoseconds.
pub const SECOND: i64 = 1_000_000_000;
/// One minute in nanoseconds.
pub const MINUTE: i64 = 60 * SECOND;
/// One hour in nanoseconds.
pub const HOUR: i64 = 60 * MINUTE;

/// Formats `v` (an integer scaled by `10^prec`) as `int[.frac]`, trailing zeros trimmed.
fn frac(v: u64, prec: u32) -> String {
    let p = 10u64.pow(prec);
    let (int, mut fr) = (v / p, v % p);
    if fr == 0 {
        return int.to_string();
    }
    let mut digits = prec as usize;
    while fr % 10 == 0 {
        fr /= 10;
        digits -= 1;
    }
    format!("{int}.{fr:0digits$}")
}

/// Go `time.Duration.String()`: `0s`, `368.975µs`, `1.5ms`, `4m41.000368975s`, `1h0m17s`.
pub fn go_string(d: i64) -> String {
    let neg = d < 0;
    let u = d.unsigned_abs();
    let body = if u < SECOND as u64 {
        if u == 0 {
            return "0s".to_owned();
        } else if u < 1_000 {
            format!("{u}ns")
        } else if u < 1_000_000 {
            format!("{}µs", frac(u, 3))
        } else {
            format!("{}ms", frac(u, 6))
        }
    } else {
        let secs_total = u / SECOND as u64;
        let sub = u % SECOND as u64;
        let s = secs_total % 60;
        let mins_total = secs_total / 60;
        let sec_text = frac(s * SECOND as u64 + sub, 9);
        if mins_total == 0 {
            format!("{sec_text}s")
        } else {
            let m = mins_total % 60;
            let h = mins_total / 60;
            if h == 0 {
                format!("{m}m{sec_text}s")
            } else {
                format!("{h}h{m}m{sec_text}s")
            }
        }
    };
    if neg { format!("-{body}") } else { body }
}

/// Parses the subset of Go duration syntax `short` produces: `[-][Nh][Nm]Ns`.
fn parse_hms(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let n_end = rest.find(|c: char| !c.is_ascii_digit())?;
        let n: i64 = rest[..n_end].parse().ok()?;
        rest = &rest[n_end..];
        let unit = if rest.starts_with('h') {
            rest = &rest[1..];
            HOUR
        } else if rest.starts_with('m') {
            rest = &rest[1..];
            MINUTE
        } else if rest.starts_with('s') {
            rest = &rest[1..];
            SECOND
        } else {
            return None;
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    Some(if neg { -total } else { total })
}

/// `shortDuration`: Go's string with `0s` → `now`, zero minutes/seconds dropped, and any
/// fraction cut off (the text before the first `.` read as seconds, so `368.975µs` → `6m8s`).
pub fn short(d: i64) -> String {
    let s = go_string(d);
    if s == "0s" {
        return "now".to_owned();
    }
    if let Some(p) = s.strip_suffix("h0m0s") {
        return format!("{p}h");
    }
    if let Some(p) = s.strip_suffix("m0s") {
        return format!("{p}m");
    }
    if let Some(i) = s.find('.') {
        return match parse_hms(&format!("{}s", &s[..i])) {
            Some(v) => short(v),
            None => s,
        };
    }
    s
}

/// Go `Duration.Round(unit)`: to the nearest multiple, halves away from zero.
pub fn round(d: i64, unit: i64) -> i64 {
    if unit <= 0 {
        return d;
    }
    let r = d % unit;
    if d < 0 {
        let r = -r;
        if r + r < unit {
            d + r
        } else {
            d.saturating_add(r - unit)
        }
    } else if r + r < unit {
        d - r
    } else {
        d.saturating_add(unit - r)
    }
}

/// Go `Duration.Truncate(unit)`: toward zero.
pub fn trunc(d: i64, unit: i64) -> i64 {
    if unit <= 0 { d } else { d - d % unit }
}

/// Nanoseconds between two instants (`a − b`), saturating.
pub fn between(a: chrono::DateTime<chrono::Utc>, b: chrono::DateTime<chrono::Utc>) -> i64 {
    (a - b)
        .num_nanoseconds()
        .unwrap_or(if a > b { i64::MAX } else { i64::MIN })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_strings() {
        assert_eq!(go_string(0), "0s");
        assert_eq!(go_string(368_975), "368.975µs");
        assert_eq!(go_string(1_500_000), "1.5ms");
        assert_eq!(go_string(500_000), "500µs");
        assert_eq!(go_string(999), "999ns");
        assert_eq!(go_string(HOUR + 17 * SECOND), "1h0m17s");
        assert_eq!(go_string(4 * MINUTE + 41 * SECOND + 368_975), "4m41.000368975s");
        assert_eq!(go_string(-(35 * MINUTE + 12 * SECOND)), "-35m12s");
    }

    #[test]
    fn shorts() {
        assert_eq!(short(0), "now");
        assert_eq!(short(HOUR), "1h");
        assert_eq!(short(2 * MINUTE), "2m");
        assert_eq!(short(HOUR + 5 * MINUTE), "1h5m");
        assert_eq!(short(HOUR + 4 * MINUTE + 41 * SECOND + 368_975), "1h4m41s");
        assert_eq!(short(2 * MINUTE + 368_975), "2m");
        assert_eq!(short(368_975), "6m8s");
        assert_eq!(short(1_500_000), "1s");
        assert_eq!(short(58 * MINUTE + 18 * SECOND), "58m18s");
        assert_eq!(short(-(35 * MINUTE + 12 * SECOND)), "-35m12s");
        assert_eq!(short(500_000), "500µs");
    }

    #[test]
    fn rounding() {
        assert_eq!(round(90 * SECOND, MINUTE), 2 * MINUTE);
        assert_eq!(round(89 * SECOND, MINUTE), MINUTE);
        assert_eq!(round(-90 * SECOND, MINUTE), -2 * MINUTE);
        assert_eq!(trunc(-90 * SECOND, MINUTE), -MINUTE);
        assert_eq!(trunc(90 * SECOND, MINUTE), MINUTE);
    }
}
