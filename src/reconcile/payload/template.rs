//! Port of pkg/payload/render.go `renderManifest`: the Go text/template rendering of the CVO's own
//! `/manifests` files.
//!
//! Only the subset the CVO's manifests use is implemented (own renderer: the Go-template crates
//! are unmaintained or pull in a large runtime for this): actions `{{.ReleaseImage}}`,
//! `{{.ClusterProfile}}`, `{{.Images.<tag>}}`, `{{index .Images "<tag>"}}`, and string literals
//! (`{{ "..." }}` with Go escapes, `` {{ `...` }} ``), each with optional `{{-`/`-}}` trimming,
//! and `{{/* comments */}}`. Anything else (an unknown field, a function, a control structure)
//! is a render error, and the loader skips that file with a warning, as upstream does for files
//! that use fields it does not know.

use std::collections::BTreeMap;

/// The data a CVO manifest is rendered with (render.go `manifestRenderConfig`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderConfig {
    /// `.ReleaseImage`: the pull spec of the release image.
    pub release_image: String,
    /// `.ClusterProfile`: the cluster profile.
    pub cluster_profile: String,
    /// `.Images`: image-references tag name → pull spec.
    pub images: BTreeMap<String, String>,
}

/// Why a manifest template could not be rendered (upstream renders with Go `text/template`,
/// `pkg/payload/render.go`; this is the subset the payload uses).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `{{` without a matching `}}`.
    #[error("unclosed action")]
    UnclosedAction,
    /// An action outside the supported subset; `action` is its trimmed text.
    #[error("template: manifest: can't evaluate {{{{{action}}}}}: unsupported field or function")]
    Unsupported {
        /// The action's text, e.g. `index .FutureField "k"`.
        action: String,
    },
    /// A string literal with an escape Go's `strconv.Unquote` would need but this subset lacks.
    #[error("template: unsupported escape \\{escape} in {literal}")]
    UnsupportedEscape {
        /// The character after the backslash.
        escape: char,
        /// The whole literal.
        literal: String,
    },
    /// A string literal ending in a lone backslash.
    #[error("template: unterminated escape in {literal}")]
    UnterminatedEscape {
        /// The whole literal.
        literal: String,
    },
}

/// Renders `text`; the error names the action that could not be rendered.
///
/// # Errors
/// An unterminated action, or an action outside the supported subset.
pub fn render(text: &str, cfg: &RenderConfig) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let mut before = &rest[..start];
        let after_open = &rest[start + 2..];
        let (trim_left, body_start) = match after_open.strip_prefix("- ") {
            Some(b) => (true, b),
            None => (false, after_open),
        };
        if trim_left {
            before = before.trim_end();
        }
        out.push_str(before);
        let (action, after, trim_right) = split_action(body_start)?;
        let mut after = after;
        if trim_right {
            after = after.trim_start();
        }
        out.push_str(&eval(action.trim(), cfg)?);
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

/// Finds the end of an action, skipping `}}` inside string literals. Returns the action body,
/// the text after `}}` and whether the action ended with ` -}}`.
fn split_action(s: &str) -> Result<(&str, &str, bool), TemplateError> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'`' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'`' {
                    i += 1;
                }
            }
            b'}' if bytes.get(i + 1) == Some(&b'}') => {
                let body = &s[..i];
                let after = &s[i + 2..];
                return Ok(match body.strip_suffix(" -") {
                    Some(b) => (b, after, true),
                    None => (body, after, false),
                });
            }
            _ => {}
        }
        i += 1;
    }
    Err(TemplateError::UnclosedAction)
}

fn eval(action: &str, cfg: &RenderConfig) -> Result<String, TemplateError> {
    if action.starts_with("/*") && action.ends_with("*/") {
        return Ok(String::new());
    }
    if let Some(lit) = parse_literal(action)? {
        return Ok(lit);
    }
    match action {
        ".ReleaseImage" => return Ok(cfg.release_image.clone()),
        ".ClusterProfile" => return Ok(cfg.cluster_profile.clone()),
        _ => {}
    }
    if let Some(tag) = action.strip_prefix(".Images.")
        && !tag.is_empty()
        && tag.chars().all(|c| c.is_alphanumeric() || c == '_')
    {
        return Ok(cfg.images.get(tag).cloned().unwrap_or_default());
    }
    if let Some(args) = action.strip_prefix("index ") {
        let args = args.trim();
        if let Some(key) = args.strip_prefix(".Images ")
            && let Some(k) = parse_literal(key.trim())?
        {
            return Ok(cfg.images.get(&k).cloned().unwrap_or_default());
        }
    }
    Err(TemplateError::Unsupported {
        action: action.to_owned(),
    })
}

/// A Go string literal (`"..."` with escapes or `` `...` ``), `None` if `s` is not one.
fn parse_literal(s: &str) -> Result<Option<String>, TemplateError> {
    if s.len() >= 2 && s.starts_with('`') && s.ends_with('`') {
        return Ok(Some(s[1..s.len() - 1].to_string()));
    }
    if !(s.len() >= 2 && s.starts_with('"') && s.ends_with('"')) {
        return Ok(None);
    }
    let inner = &s[1..s.len() - 1];
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '"' {
            return Ok(None);
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('\'') => out.push('\''),
            Some(other) => {
                return Err(TemplateError::UnsupportedEscape {
                    escape: other,
                    literal: s.to_owned(),
                });
            }
            None => {
                return Err(TemplateError::UnterminatedEscape {
                    literal: s.to_owned(),
                });
            }
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn cfg() -> RenderConfig {
        RenderConfig {
            release_image: "quay.io/r:1".into(),
            cluster_profile: "hypershift".into(),
            images: [("cli".to_string(), "quay.io/cli@sha256:1".to_string())].into(),
        }
    }

    #[test]
    fn renders_fields_and_images() {
        let t = "image: '{{.ReleaseImage}}'\np: '{{ .ClusterProfile }}'\nc: {{index .Images \"cli\"}} {{.Images.cli}}";
        assert_eq!(
            render(t, &cfg()).unwrap(),
            "image: 'quay.io/r:1'\np: 'hypershift'\nc: quay.io/cli@sha256:1 quay.io/cli@sha256:1"
        );
    }

    #[test]
    fn string_literals_pass_prometheus_templates_through() {
        let t = r#"d: {{ "{{ $labels.name }} is \"x\"" }}."#;
        assert_eq!(render(t, &cfg()).unwrap(), r#"d: {{ $labels.name }} is "x"."#);
    }

    #[test]
    fn error_messages() {
        let e = render("{{index .FutureField \"k\"}}", &cfg()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "template: manifest: can't evaluate {{index .FutureField \"k\"}}: unsupported field or function"
        );
        let e = render(r#"{{ "a\qb" }}"#, &cfg()).unwrap_err();
        assert_eq!(e.to_string(), r#"template: unsupported escape \q in "a\qb""#);
        assert_eq!(
            render("{{ .ReleaseImage", &cfg()).unwrap_err().to_string(),
            "unclosed action"
        );
    }

    #[test]
    fn unknown_field_is_an_error() {
        let e = render("{{index .FutureField \"k\"}}", &cfg()).unwrap_err();
        assert!(e.to_string().contains("FutureField"), "{e}");
        assert!(render("{{ .ReleaseImage", &cfg()).is_err());
    }

    #[test]
    fn trim_markers() {
        assert_eq!(
            render("a  {{- .ClusterProfile -}}  b", &cfg()).unwrap(),
            "ahypershiftb"
        );
    }
}
