//! The dashboard's views, in tab order: the vocabulary the state, the model and the render
//! code share.

/// The views, in tab order (`1`–`6`; `7`–`8` only with an embedded engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tab {
    /// Completion, ClusterVersion conditions, insights summary.
    #[default]
    Overview,
    /// The ClusterOperators table.
    Operators,
    /// Pools and nodes.
    Nodes,
    /// Update history.
    History,
    /// Update-health insights.
    Health,
    /// Update targets (recommended and conditional, with risks), channel, requests.
    Updates,
    /// The engine's task graph: run levels as rows, components as cells.
    Tasks,
    /// The engine's drift records (what would change, or what changed).
    Drift,
}

impl Tab {
    /// All tabs in order.
    pub const ALL: [Tab; 8] = [
        Tab::Overview,
        Tab::Operators,
        Tab::Nodes,
        Tab::History,
        Tab::Health,
        Tab::Updates,
        Tab::Tasks,
        Tab::Drift,
    ];

    /// The tabs without an engine.
    pub const CLUSTER: [Tab; 6] = [
        Tab::Overview,
        Tab::Operators,
        Tab::Nodes,
        Tab::History,
        Tab::Health,
        Tab::Updates,
    ];

    /// Position in [`Tab::ALL`].
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    /// The tab's label.
    pub fn title(self) -> &'static str {
        use crate::l10n::tr;
        match self {
            Tab::Overview => tr!("tab-overview", "Overview"),
            Tab::Operators => tr!("tab-operators", "Operators"),
            Tab::Nodes => tr!("tab-nodes", "Nodes"),
            Tab::History => tr!("tab-history", "History"),
            Tab::Health => tr!("tab-health", "Health"),
            Tab::Updates => tr!("tab-updates", "Updates"),
            Tab::Tasks => tr!("tab-tasks", "Tasks"),
            Tab::Drift => tr!("tab-drift", "Drift"),
        }
    }
}
