//! Text and JSON output of the one-shot commands.

pub mod get;
pub mod status;
pub mod tabwriter;
