//! Text and JSON output of the one-shot commands.

pub mod demo;
pub mod get;
pub mod payload;
pub mod reconcile;
pub mod status;
pub mod tabwriter;
