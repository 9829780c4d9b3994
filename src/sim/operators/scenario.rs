//! Operator scenarios: how fast simulated time runs and how individual cluster operators
//! misbehave during an update. The file is a superset of the `cvo sim serve --scenario`
//! format ([`crate::sim::serve::Scenario`]): it may also hold `faults:` and `changes:`.
//!
//! ```yaml
//! speed: 10                 # every delay divided by 10
//! seed: 7                   # the per-operator delay draws
//! operators:
//!   machine-config: {delay: 60s}       # fixed delay instead of the drawn one
//!   monitoring: {degrade: {after: 5s, reason: UpdateFailed, message: "..."}}
//!   console: {stall: true}             # stays Progressing, never reaches the new version
//!   authentication: {crashloop: true}  # its new Deployment never becomes ready
//! ```

use std::{collections::BTreeMap, path::Path, time::Duration};

use anyhow::Context;
use serde::{Deserialize, Deserializer};

use crate::sim::{Faults, serve::Change};

/// A duration written as seconds (`5`, `0.5`) or with units (`500ms`, `5s`, `2m`, `1m30s`,
/// `1h`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SimDuration(pub Duration);

fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(n) = s.parse::<f64>() {
        return secs(n);
    }
    let mut total = 0.0;
    let mut rest = s;
    if rest.is_empty() {
        return Err("empty duration".into());
    }
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("{s:?}: missing unit (ms, s, m, h)"))?;
        let n: f64 = rest[..end]
            .parse()
            .map_err(|_| format!("{s:?}: expected a number before the unit"))?;
        rest = &rest[end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_end] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            u => return Err(format!("{s:?}: unknown unit {u:?} (use ms, s, m, h)")),
        };
        total += n * factor;
        rest = &rest[unit_end..];
    }
    secs(total)
}

fn secs(n: f64) -> Result<Duration, String> {
    if (0.0..1e9).contains(&n) {
        Ok(Duration::from_secs_f64(n))
    } else {
        Err(format!("{n}: must be a number of seconds >= 0"))
    }
}

impl<'de> Deserialize<'de> for SimDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(f64),
            S(String),
        }
        let d = match Raw::deserialize(d)? {
            Raw::N(n) => secs(n),
            Raw::S(s) => parse_duration(&s),
        };
        d.map(SimDuration).map_err(serde::de::Error::custom)
    }
}

/// Degraded=True after a while; the operator never reaches the new version.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Degrade {
    /// Time after the operator starts working on the new version (scaled by speed).
    #[serde(default)]
    pub after: SimDuration,
    /// The Degraded condition's reason (default `UpdateFailed`).
    #[serde(default = "default_reason")]
    pub reason: String,
    /// The Degraded condition's message (default names the operator and the version).
    #[serde(default)]
    pub message: String,
}

fn default_reason() -> String {
    "UpdateFailed".into()
}

/// How one cluster operator behaves during an update.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorBehaviour {
    /// Time from its Deployment running the new version to the ClusterOperator reaching it,
    /// instead of the drawn one (at speed 1).
    #[serde(default)]
    pub delay: Option<SimDuration>,
    /// Goes Degraded instead of finishing.
    #[serde(default)]
    pub degrade: Option<Degrade>,
    /// Stays Progressing forever.
    #[serde(default)]
    pub stall: bool,
    /// Its new Deployment never becomes ready (CrashLoopBackOff): readyReplicas 0,
    /// Available=False, then Progressing=False `ProgressDeadlineExceeded`.
    #[serde(default)]
    pub crashloop: bool,
}

/// A scenario for the simulated operators (see the module docs for the format).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorScenario {
    /// Time speed (10 = ten times faster); `None` keeps the caller's.
    #[serde(default)]
    pub speed: Option<f64>,
    /// Seed of the delay draws; `None` keeps the caller's.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Behaviour by ClusterOperator name.
    #[serde(default)]
    pub operators: BTreeMap<String, OperatorBehaviour>,
    /// Simulator faults, as in `cvo sim serve --scenario`.
    #[serde(default)]
    pub faults: Faults,
    /// Scripted changes, as in `cvo sim serve --scenario` (seconds of wall time).
    #[serde(default)]
    pub changes: Vec<Change>,
}

impl OperatorScenario {
    /// Reads and checks a scenario file.
    ///
    /// # Errors
    /// A one-line error naming the file and the field, e.g.
    /// `scenario x.yaml: operators.console.delay: "5q": unknown unit "q" (use ms, s, m, h)`.
    pub fn from_file(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("scenario {}", path.display()))?;
        Self::from_yaml(&text).map_err(|e| anyhow::anyhow!("scenario {}: {e}", path.display()))
    }

    /// Parses and checks scenario text; the error names the field.
    ///
    /// # Errors
    /// One line: `field.path: what is wrong`.
    pub fn from_yaml(text: &str) -> anyhow::Result<Self> {
        let de = serde_norway::Deserializer::from_str(text);
        let s: Self = serde_path_to_error::deserialize(de).map_err(|e| {
            let at = e.path().to_string();
            let msg = e.into_inner().to_string();
            let msg = msg.split_whitespace().collect::<Vec<_>>().join(" ");
            if at == "." {
                anyhow::anyhow!("{msg}")
            } else {
                anyhow::anyhow!("{at}: {msg}")
            }
        })?;
        if let Some(sp) = s.speed
            && !(sp.is_finite() && sp > 0.0)
        {
            anyhow::bail!("speed: {sp}: must be a number > 0");
        }
        s.faults.validate().map_err(|e| anyhow::anyhow!("faults.{e}"))?;
        for (name, b) in &s.operators {
            let set = [b.degrade.is_some(), b.stall, b.crashloop]
                .iter()
                .filter(|x| **x)
                .count();
            if set > 1 {
                anyhow::bail!("operators.{name}: give at most one of degrade, stall, crashloop");
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert!(parse_duration("5q").is_err());
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn parses_behaviours() {
        let s = OperatorScenario::from_yaml(
            "speed: 10\nseed: 3\noperators:\n  machine-config: {delay: 60s}\n  monitoring: {degrade: {after: 5s, message: boom}}\n  console: {stall: true}\n  authentication: {crashloop: true}\n",
        )
        .expect("parse");
        assert_eq!(s.speed, Some(10.0));
        assert_eq!(s.seed, Some(3));
        assert_eq!(
            s.operators["machine-config"].delay,
            Some(SimDuration(Duration::from_secs(60)))
        );
        let d = s.operators["monitoring"].degrade.clone().expect("degrade");
        assert_eq!(d.reason, "UpdateFailed");
        assert_eq!(d.after.0, Duration::from_secs(5));
        assert!(s.operators["console"].stall);
        assert!(s.operators["authentication"].crashloop);
    }

    #[test]
    fn errors_name_the_field() {
        let e = OperatorScenario::from_yaml("operators:\n  console: {delay: 5q}\n")
            .expect_err("bad unit")
            .to_string();
        assert!(e.starts_with("operators.console.delay: "), "{e}");
        let e = OperatorScenario::from_yaml("operators:\n  console: {stal: true}\n")
            .expect_err("unknown field")
            .to_string();
        assert!(e.starts_with("operators.console.stal: "), "{e}");
        assert!(e.contains("unknown field `stal`"), "{e}");
        let e = OperatorScenario::from_yaml("speed: 0\n")
            .expect_err("speed")
            .to_string();
        assert_eq!(e, "speed: 0: must be a number > 0");
        let e = OperatorScenario::from_yaml("operators:\n  x: {stall: true, crashloop: true}\n")
            .expect_err("two")
            .to_string();
        assert!(e.contains("operators.x: give at most one"), "{e}");
    }
}
