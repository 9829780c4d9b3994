//! `--read-only` of `cvo upgrade` and its subcommands: a dry run. The request is decided as
//! it would be ([`crate::cluster::update_request::plan`]) and the verdict of every
//! precondition is printed, with the merge patch that would be sent; nothing is written.

use crate::cluster::update_request::{Plan, Refusal, Verdict, VerdictState};
use crate::l10n::{Lang, tr, trf};

/// One verdict as a line (continuation lines of oc's indented messages indented below it):
/// `  passed    NAME: message`, `  waived    NAME (by --flag): ...`,
/// `  blocking  NAME (--flag would waive it): ...`, `  warning   ...`, `  unchecked ...`.
pub fn verdict_line(v: &Verdict) -> String {
    let (state, note) = match v.state {
        VerdictState::Passed => (tr!("dry-passed", "passed"), String::new()),
        VerdictState::Waived(w) => (
            tr!("dry-waived", "waived"),
            trf!("dry-waived-by", " (by {flag})", flag = w.flag()),
        ),
        VerdictState::Blocking(Some(w)) => (
            tr!("dry-blocking", "blocking"),
            trf!("dry-would-waive", " ({flag} would waive it)", flag = w.flag()),
        ),
        VerdictState::Blocking(None) => (
            tr!("dry-blocking", "blocking"),
            tr!("dry-no-waiver", " (no flag waives it)").to_string(),
        ),
        VerdictState::Warning => (tr!("dry-warning", "warning"), String::new()),
        VerdictState::Unchecked => (
            tr!("dry-unchecked", "unchecked"),
            tr!("dry-cluster-checks", " (the cluster checks it)").to_string(),
        ),
    };
    // The state column: 10 cells in English (the longest word and a space), 13 for Russian's
    // longest ("не проверено"); Cyrillic letters are one cell each.
    let width = match crate::l10n::current() {
        Lang::En => 10,
        Lang::Ru => 13,
    };
    let continuation = format!("\n{}", " ".repeat(width + 4));
    let message = v
        .message
        .trim_end()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(&continuation);
    format!("  {state:<width$}{}{note}: {message}\n", v.name)
}

fn verdicts_block(verdicts: &[Verdict]) -> String {
    let mut out = String::from(tr!(
        "dry-preconditions",
        "Preconditions (--read-only: checked, nothing written):"
    ));
    out.push('\n');
    if verdicts.is_empty() {
        out += tr!("dry-none-apply", "  (none apply to this request)");
        out.push('\n');
    }
    for v in verdicts {
        out += &verdict_line(v);
    }
    out
}

/// What a dry run of an allowed request prints on stdout: the verdicts, the fields the patch
/// would write, and the line a write would have printed.
pub fn plan_text(plan: &Plan) -> String {
    let mut out = verdicts_block(&plan.verdicts);
    out += &trf!(
        "dry-would-patch",
        "Would patch clusterversion/{name} (JSON merge patch):",
        name = plan.name
    );
    out.push('\n');
    for line in plan.written() {
        out += &format!("  {line}\n");
    }
    if !plan.done.is_empty() {
        out += &trf!("dry-then", "Then: {done}", done = plan.done);
        out.push('\n');
    }
    out
}

/// What a dry run of a refused request prints on stdout before the refusal (the error).
pub fn refusal_text(refusal: &Refusal) -> String {
    verdicts_block(&refusal.verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::update_request::Waiver;

    #[test]
    fn verdicts_read_as_one_line_each() {
        let v = |state, message: &str| Verdict {
            name: "Failing",
            state,
            message: message.into(),
        };
        assert_eq!(
            verdict_line(&v(VerdictState::Passed, "the cluster is not failing")),
            "  passed    Failing: the cluster is not failing\n"
        );
        assert_eq!(
            verdict_line(&v(
                VerdictState::Blocking(Some(Waiver::AllowUpgradeWithWarnings)),
                "the cluster is experiencing an error:\n\n  Reason: R\n  Message: M"
            )),
            "  blocking  Failing (--allow-upgrade-with-warnings would waive it): the cluster is experiencing an error:\n                Reason: R\n                Message: M\n"
        );
        assert_eq!(
            verdict_line(&v(VerdictState::Waived(Waiver::Force), "x")),
            "  waived    Failing (by --force): x\n"
        );
    }

    #[test]
    fn a_plan_shows_what_it_would_write() {
        let plan = Plan {
            name: "version".into(),
            patch: serde_json::json!({"spec": {"channel": "fast-4.16"}}),
            target: None,
            verdicts: Vec::new(),
            waived_risks: Vec::new(),
            warnings: Vec::new(),
            done: String::new(),
        };
        assert_eq!(
            plan_text(&plan),
            "Preconditions (--read-only: checked, nothing written):\n  (none apply to this request)\nWould patch clusterversion/version (JSON merge patch):\n  spec.channel = \"fast-4.16\"\n"
        );
    }

    /// `--lang ru`: the states and notes in Russian, in a column wide enough for the longest
    /// word; the precondition names, flags and patch lines as they are.
    #[test]
    fn the_dry_run_in_russian() {
        use crate::l10n::{Lang, scoped};
        let v = |state, message: &str| Verdict {
            name: "Failing",
            state,
            message: message.into(),
        };
        let line = |v: &Verdict| scoped(Lang::Ru, || verdict_line(v));
        assert_eq!(line(&v(VerdictState::Passed, "x")), "  пройдено     Failing: x\n");
        assert_eq!(
            line(&v(VerdictState::Blocking(Some(Waiver::Force)), "a\nb")),
            "  блокирует    Failing (--force снял бы его): a\n                 b\n"
        );
        assert_eq!(
            line(&v(VerdictState::Unchecked, "x")),
            "  не проверено Failing (проверяет кластер): x\n"
        );
        let plan = Plan {
            name: "version".into(),
            patch: serde_json::json!({"spec": {"channel": "fast-4.16"}}),
            target: None,
            verdicts: Vec::new(),
            waived_risks: Vec::new(),
            warnings: Vec::new(),
            done: "Запрошено обновление до 4.16.4".into(),
        };
        assert_eq!(
            scoped(Lang::Ru, || plan_text(&plan)),
            "Предусловия (--read-only: проверены, ничего не записано):\n  (к этому запросу ни одно не относится)\nБыл бы отправлен патч clusterversion/version (JSON merge patch):\n  spec.channel = \"fast-4.16\"\nЗатем: Запрошено обновление до 4.16.4\n"
        );
    }
}
