//! `cvo status`: the text of `oc adm upgrade status` and a stable JSON form.

use crate::assess::Assessment;

/// `--details`: which sections get their detailed form.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Details {
    /// Every section.
    All,
    /// Node tables.
    Nodes,
    /// Update-health insights.
    Health,
    /// Updating operators.
    Operators,
}

/// Renders the text form. (Stub.)
pub fn render_text(_a: &Assessment, _details: Option<Details>) -> String {
    String::new()
}

/// Renders the JSON form.
///
/// # Errors
/// Only if serialisation fails.
pub fn render_json(a: &Assessment) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(a)? + "\n")
}
