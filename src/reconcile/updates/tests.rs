//! Unit tests of the update-service client (conformance cases of upstream pkg/cincinnati, pkg/cvo, pkg/clusterconditions).
