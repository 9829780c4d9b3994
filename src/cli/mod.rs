//! Text and JSON output of the one-shot commands.

pub mod get;
pub mod tabwriter;
pub mod status;
