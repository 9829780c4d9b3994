//! `cvo upgrade accept RISK,RISK-`: which conditional-update risks the cluster accepts
//! (`spec.desiredUpdate.acceptRisks`), edited as `oc adm upgrade accept` edits it: by default
//! the named risks are added to the accepted ones and `RISK-` removes one; `--replace` makes the
//! list exactly the named risks; `--clear` empties it.
//!
//! Upstream: `pkg/cli/admin/upgrade/accept/accept.go` in openshift/oc (the flags, the checks of
//! the list and its texts). The cluster takes the list only when its FeatureGate enables
//! `ClusterUpdateAcceptRisks` (checked by [`crate::cluster::update_request`]).

use crate::l10n::{tr, trf};
use std::collections::BTreeSet;

use clap::Args;

use super::super::{UsageError, args::KubeconfigArgs};

/// Flags of `cvo upgrade accept`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  # Accept RiskA and RiskB and stop accepting RiskC if accepted
  cvo upgrade accept RiskA,RiskB,RiskC-

  # Accept RiskA and RiskB and nothing else
  cvo upgrade accept --replace RiskA,RiskB

  # Accept no risks
  cvo upgrade accept --clear")]
pub struct AcceptArgs {
    /// Risk names separated by commas; a name ending in `-` stops accepting that risk.
    #[arg(value_name = "RISK,RISK-,...", required_unless_present = "clear")]
    pub risks: Option<String>,
    /// Replace the accepted risks with the named ones instead of adding to them.
    #[arg(long, conflicts_with = "clear")]
    pub replace: bool,
    /// Remove every accepted risk.
    #[arg(long, conflicts_with = "risks")]
    pub clear: bool,
    /// Check and show the request (the preconditions and the patch), write nothing.
    #[arg(long)]
    pub read_only: bool,
    #[command(flatten)]
    pub cluster: KubeconfigArgs,
}

/// The risks to add and to remove, as the argument names them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Edit {
    /// Names to accept.
    pub add: BTreeSet<String>,
    /// Names to stop accepting (`NAME-`).
    pub remove: BTreeSet<String>,
    /// `--replace`: the list becomes `add`.
    pub replace: bool,
    /// `--clear`: the list becomes empty.
    pub clear: bool,
}

impl AcceptArgs {
    /// The edit the flags ask for, checked as oc checks it.
    ///
    /// # Errors
    /// [`UsageError`] for an empty name or a lone `-`, a risk both added and removed, and
    /// `NAME-` with `--replace`.
    pub fn edit(&self) -> Result<Edit, UsageError> {
        let mut edit = Edit {
            replace: self.replace,
            clear: self.clear,
            ..Edit::default()
        };
        if self.clear {
            return Ok(edit);
        }
        for part in self.risks.as_deref().unwrap_or("").split(',') {
            let name = part.trim();
            if name.is_empty() || name == "-" {
                return Err(UsageError(trf!(
                    "accept-illegal-risk",
                    "illegal risk {name:?}",
                    name = name
                )));
            }
            match name.strip_suffix('-') {
                Some(n) => edit.remove.insert(n.to_owned()),
                None => edit.add.insert(name.to_owned()),
            };
        }
        let both: Vec<&str> = edit.add.intersection(&edit.remove).map(String::as_str).collect();
        if !both.is_empty() {
            return Err(UsageError(trf!(
                "accept-both",
                "requested risks with both Risk and Risk-: {list}",
                list = both.join(",")
            )));
        }
        if self.replace && !edit.remove.is_empty() {
            return Err(UsageError(
                tr!(
                    "accept-replace-suffix",
                    "The suffix '-' on risks is not allowed if --replace is specified"
                )
                .into(),
            ));
        }
        Ok(edit)
    }
}

impl Edit {
    /// The accepted risks after the edit of `existing`: kept in their order (less the removed
    /// ones, none with `--replace`), then the added ones not there yet, sorted (oc's
    /// `getAcceptRisks`).
    pub fn apply(&self, existing: &[String]) -> Vec<String> {
        if self.clear {
            return Vec::new();
        }
        let mut out: Vec<String> = if self.replace {
            Vec::new()
        } else {
            existing
                .iter()
                .filter(|n| !self.remove.contains(*n))
                .cloned()
                .collect()
        };
        for name in &self.add {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(risks: Option<&str>, replace: bool, clear: bool) -> AcceptArgs {
        AcceptArgs {
            risks: risks.map(str::to_owned),
            replace,
            clear,
            read_only: false,
            cluster: KubeconfigArgs::default(),
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn adds_and_removes_keeping_the_existing_order() {
        let e = args(Some("RiskB,RiskA, RiskC-"), false, false)
            .edit()
            .expect("valid");
        assert_eq!(
            e.apply(&names(&["RiskC", "Old", "RiskB"])),
            names(&["Old", "RiskB", "RiskA"])
        );
        let e = args(Some("RiskB,RiskA"), true, false).edit().expect("valid");
        assert_eq!(e.apply(&names(&["Old"])), names(&["RiskA", "RiskB"]));
        let e = args(None, false, true).edit().expect("valid");
        assert!(e.apply(&names(&["Old"])).is_empty());
        // Removing a risk that is not accepted is no change.
        let e = args(Some("Nope-"), false, false).edit().expect("valid");
        assert_eq!(e.apply(&names(&["Old"])), names(&["Old"]));
    }

    #[test]
    fn bad_lists_are_usage_errors_in_ocs_words() {
        let err = |a: AcceptArgs| a.edit().expect_err("usage error").0;
        assert_eq!(err(args(Some("A,,B"), false, false)), "illegal risk \"\"");
        assert_eq!(err(args(Some("A,-"), false, false)), "illegal risk \"-\"");
        assert_eq!(
            err(args(Some("A,B,A-"), false, false)),
            "requested risks with both Risk and Risk-: A"
        );
        assert_eq!(
            err(args(Some("A,B-"), true, false)),
            "The suffix '-' on risks is not allowed if --replace is specified"
        );
    }
}
