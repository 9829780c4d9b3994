//! The one clock a process reads for the times it writes and the ages it shows.
//!
//! [`Clock::wall`] is the system clock (every command but `cvo demo`). [`Clock::simulated`] is the
//! demo's: it starts at the wall time of its creation and runs `speed` times as fast
//! (`start + elapsed × speed`), so at `--speed 10` a 3-minute update ages 30 minutes in the
//! history, the "since" columns, the assessment's duration and estimate, and the 30/40/90-minute
//! rules of the engine and the assessment, exactly as it would on a real cluster. Timers (the
//! engine's intervals) are scaled separately; the clock only answers "what time is it".
//!
//! Cloning a clock shares it: every clone answers the same time. Uses nothing else of the crate.

use std::{sync::Arc, time::Instant};

use chrono::{DateTime, Utc};

/// A source of "now": the wall clock, or a simulated clock running `speed` times as fast from
/// the moment it was created.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    sim: Option<Arc<Simulated>>,
}

#[derive(Debug)]
struct Simulated {
    /// Wall time at creation (the simulated clock's origin).
    start: DateTime<Utc>,
    /// Monotonic instant at creation (elapsed time is measured from it).
    origin: Instant,
    /// Wall time at creation (equal to `start` for [`Clock::simulated`]).
    wall_origin: DateTime<Utc>,
    /// Simulated seconds per real second (> 0, finite).
    speed: f64,
}

impl PartialEq for Clock {
    fn eq(&self, other: &Self) -> bool {
        match (&self.sim, &other.sim) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Clock {
    /// The system clock.
    pub fn wall() -> Self {
        Self::default()
    }

    /// A simulated clock starting now at the wall time and running `speed` times as fast.
    /// A speed that is not a positive finite number gives the wall clock (the callers validate
    /// `--speed` first; the clock never panics).
    pub fn simulated(speed: f64) -> Self {
        Self::simulated_from(Utc::now(), speed)
    }

    /// A simulated clock that reads `start` now and runs `speed` times as fast (tests).
    pub fn simulated_from(start: DateTime<Utc>, speed: f64) -> Self {
        if !(speed.is_finite() && speed > 0.0) {
            return Self::wall();
        }
        Self {
            sim: Some(Arc::new(Simulated {
                start,
                origin: Instant::now(),
                wall_origin: Utc::now(),
                speed,
            })),
        }
    }

    /// The current time: the wall clock's, or `start + elapsed × speed`.
    pub fn now(&self) -> DateTime<Utc> {
        match &self.sim {
            None => Utc::now(),
            Some(s) => s.at(s.origin.elapsed()),
        }
    }

    /// The simulated time `elapsed` (real time) after the clock's creation; the wall time
    /// `elapsed` from now for the wall clock.
    pub fn after(&self, elapsed: std::time::Duration) -> DateTime<Utc> {
        match &self.sim {
            None => Utc::now() + chrono::Duration::from_std(elapsed).unwrap_or(chrono::Duration::MAX),
            Some(s) => s.at(elapsed),
        }
    }

    /// The wall-clock time at which this clock read `t`: `t` itself for the wall clock; for a
    /// simulated one, its wall time at creation plus `(t − start) / speed`. Reads no clock, so
    /// a view can judge a wall-clock time (the CVO Lease's `renewTime`, which stays real in
    /// the demo) against the simulated "now" it renders with.
    pub fn wall_time_of(&self, t: DateTime<Utc>) -> DateTime<Utc> {
        match &self.sim {
            None => t,
            Some(s) => {
                // Milliseconds never overflow a chrono duration; saturates like `at`.
                let nanos = (t - s.start).num_milliseconds() as f64 * 1e6 / s.speed;
                let nanos = if nanos.is_finite() && nanos.abs() < i64::MAX as f64 {
                    nanos as i64
                } else if nanos < 0.0 {
                    i64::MIN
                } else {
                    i64::MAX
                };
                s.wall_origin + chrono::Duration::nanoseconds(nanos)
            }
        }
    }

    /// The speed of a simulated clock; `None` for the wall clock.
    pub fn speed(&self) -> Option<f64> {
        self.sim.as_ref().map(|s| s.speed)
    }

    /// Whether this is a simulated clock.
    pub fn is_simulated(&self) -> bool {
        self.sim.is_some()
    }

    /// How long simulated time `simulated` lasts in real time (itself for the wall clock): the
    /// real interval after which an age shown to the second changes by `simulated`.
    pub fn real(&self, simulated: std::time::Duration) -> std::time::Duration {
        match &self.sim {
            None => simulated,
            Some(s) => simulated.div_f64(s.speed),
        }
    }
}

impl Simulated {
    fn at(&self, elapsed: std::time::Duration) -> DateTime<Utc> {
        let nanos = elapsed.as_secs_f64() * self.speed * 1e9;
        // Saturates after ~292 years of simulated time.
        let nanos = if nanos.is_finite() && nanos < i64::MAX as f64 {
            nanos as i64
        } else {
            i64::MAX
        };
        self.start + chrono::Duration::nanoseconds(nanos)
    }
}

/// `d` scaled by a random factor in `[1 - fraction, 1 + fraction)`, so that clients retrying
/// after a shared failure (an API server outage) do not all come back at the same instant;
/// `fraction` is clamped to `[0, 1)` (`0` ⇒ `d`). Every retry and backoff wait of the crate
/// goes through this (or through kube-runtime's `DefaultBackoff`, jittered too).
pub fn jittered(d: std::time::Duration, fraction: f64) -> std::time::Duration {
    use rand::Rng;
    let f = if fraction.is_finite() {
        fraction.clamp(0.0, 0.99)
    } else {
        0.0
    };
    if f == 0.0 {
        return d;
    }
    d.mul_f64(rand::thread_rng().gen_range((1.0 - f)..(1.0 + f)))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn simulated_time_runs_speed_times_as_fast_from_its_start() {
        let start = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .map(|d| d.with_timezone(&Utc))
            .unwrap_or_default();
        let c = Clock::simulated_from(start, 20.0);
        assert_eq!(
            c.after(Duration::from_secs(3)),
            start + chrono::Duration::seconds(60)
        );
        assert_eq!(
            c.after(Duration::from_millis(1500)),
            start + chrono::Duration::seconds(30)
        );
        assert_eq!(c.speed(), Some(20.0));
        assert!(c.now() >= start);
        assert_eq!(c.real(Duration::from_secs(60)), Duration::from_secs(3));
        // A simulated time maps back to the wall time at which the clock read it.
        let wall = c.wall_time_of(start + chrono::Duration::seconds(60));
        let wall_origin = c.wall_time_of(start);
        assert_eq!(wall - wall_origin, chrono::Duration::seconds(3));
        assert!((Utc::now() - wall_origin).abs() < chrono::Duration::seconds(5));
        assert_eq!(Clock::wall().wall_time_of(start), start);
        // Clones share the clock; a new clock is a different one.
        assert_eq!(c.clone(), c);
        assert_ne!(Clock::simulated_from(start, 20.0), c);
    }

    #[test]
    fn a_bad_speed_gives_the_wall_clock() {
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let c = Clock::simulated(s);
            assert!(!c.is_simulated(), "{s}");
            assert_eq!(c, Clock::wall());
        }
        let before = Utc::now();
        let now = Clock::wall().now();
        assert!(now >= before && now - before < chrono::Duration::seconds(5));
        assert_eq!(Clock::wall().speed(), None);
    }

    #[test]
    fn jittered_waits_differ_and_stay_within_bounds() {
        use std::time::Duration;
        let d = Duration::from_secs(10);
        let a: Vec<Duration> = (0..20).map(|_| jittered(d, 0.2)).collect();
        let b: Vec<Duration> = (0..20).map(|_| jittered(d, 0.2)).collect();
        assert_ne!(a, b, "two retry sequences differ");
        for x in a.iter().chain(&b) {
            assert!(
                *x >= Duration::from_secs(8) && *x < Duration::from_secs(12),
                "{x:?}"
            );
        }
        assert_eq!(jittered(d, 0.0), d);
        assert_eq!(jittered(d, f64::NAN), d);
        assert!(jittered(d, 5.0) < Duration::from_secs(20));
    }
}
