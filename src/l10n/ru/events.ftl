# Russian texts of events (Fluent; see src/l10n/mod.rs). One message per key.
