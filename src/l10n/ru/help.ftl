# Russian texts of help (Fluent; see src/l10n/mod.rs). One message per key.
