# Russian texts of commands (Fluent; see src/l10n/mod.rs). One message per key.
