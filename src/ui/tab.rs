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
        match self {
            Tab::Overview => "Overview",
            Tab::Operators => "Operators",
            Tab::Nodes => "Nodes",
            Tab::History => "History",
            Tab::Health => "Health",
            Tab::Updates => "Updates",
            Tab::Tasks => "Tasks",
            Tab::Drift => "Drift",
        }
    }
}
