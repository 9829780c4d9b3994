//! An API error as one sentence ([`ApiFailure`]): what was being done, and the server's
//! `Status` message, reason and code, as `kubectl` shows them (`Error from server
//! (InternalError): ...`). kube's `Error::Api` prints the Status twice, once as a Rust debug
//! struct; the informers' health, the dashboard and the one-shot commands show this line
//! instead.

/// What failed, and the server's answer: `Display` is one line, `{what}: {message} (reason
/// {reason}, code {code})`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {message}{}", detail(*.code, .reason))]
pub struct ApiFailure {
    /// What cvo was doing, e.g. `list clusteroperators`.
    pub what: String,
    /// The HTTP status code of the answer (`None`: no answer: connection, TLS, timeout).
    pub code: Option<u16>,
    /// The Status `reason` (`InternalError`, `NotFound`, ...), empty when none.
    pub reason: String,
    /// The Status `message` (or the transport error, flattened to one line).
    pub message: String,
}

fn detail(code: Option<u16>, reason: &str) -> String {
    match (code, reason.is_empty()) {
        (Some(c), false) => format!(" (reason {reason}, code {c})"),
        (Some(c), true) => format!(" (code {c})"),
        (None, _) => String::new(),
    }
}

impl ApiFailure {
    /// The failure of `what` from a kube error.
    pub fn new(what: impl Into<String>, e: &kube::Error) -> Self {
        let what = what.into();
        match e {
            kube::Error::Api(s) => ApiFailure {
                what,
                code: Some(s.code),
                reason: s.reason.clone(),
                message: if s.message.is_empty() {
                    http::StatusCode::from_u16(s.code)
                        .ok()
                        .and_then(|c| c.canonical_reason())
                        .unwrap_or("no message")
                        .to_owned()
                } else {
                    one_line(&s.message)
                },
            },
            other => ApiFailure {
                what,
                code: None,
                reason: String::new(),
                message: error_chain(other),
            },
        }
    }

    /// Whether the server may answer differently if asked again: any 5xx, and 429.
    pub fn is_transient(&self) -> bool {
        self.code.is_some_and(|c| c == 429 || c >= 500)
    }

    /// The failure of `what` from a `Status` the server sent (e.g. a watch's `ERROR` event).
    pub fn from_status(what: impl Into<String>, s: &kube::core::Status) -> Self {
        ApiFailure {
            what: what.into(),
            code: Some(s.code),
            reason: s.reason.clone(),
            message: s.message.clone(),
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An error and its sources on one line (`outer: cause: root cause`), each source once (a
/// cause the text so far already contains is skipped) and runs of whitespace, newlines
/// included, collapsed to one space. The one rendering of an error chain for messages and
/// conditions across cvo.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let t = inner.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = inner.source();
    }
    one_line(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, reason: &str, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, reason)
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn a_500_is_one_sentence_with_message_reason_and_code() {
        let f = ApiFailure::new(
            "list clusteroperators",
            &status(
                500,
                "InternalError",
                "Internal error occurred: etcd\nleader changed",
            ),
        );
        assert_eq!(
            f.to_string(),
            "list clusteroperators: Internal error occurred: etcd leader changed (reason InternalError, code 500)"
        );
        assert!(f.is_transient());
        let text = f.to_string();
        assert!(!text.contains("Status {") && !text.contains("ApiError"), "{text}");
    }

    #[test]
    fn only_5xx_and_429_are_transient() {
        assert!(ApiFailure::new("x", &status(429, "TooManyRequests", "slow down")).is_transient());
        assert!(ApiFailure::new("x", &status(502, "", "")).is_transient());
        let f = ApiFailure::new("x", &status(403, "Forbidden", "no"));
        assert!(!f.is_transient());
        assert_eq!(f.to_string(), "x: no (reason Forbidden, code 403)");
        let f = ApiFailure::new("x", &status(502, "", ""));
        assert_eq!(f.to_string(), "x: Bad Gateway (code 502)");
    }
}
