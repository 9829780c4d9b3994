//! The reconcile engine (see design.md): payload loading, resource apply, sync worker and the
//! ClusterVersion status writer. Compiles without the `tui` feature and never imports `crate::sim`.

pub mod apply;
