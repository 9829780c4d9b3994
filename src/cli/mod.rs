//! Text and JSON output of the one-shot commands.

pub mod get;
pub mod payload;
pub mod status;
pub mod tabwriter;
