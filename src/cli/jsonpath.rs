//! kubectl's JSONPath templates (`-o jsonpath=...`, and the expressions of
//! `-o custom-columns=...`) over JSON values, evaluated with the `jsonpath-rust` crate (RFC 9535
//! JSONPath).
//!
//! A template is text with actions in braces: `{.items[*].metadata.name}`, quoted literals
//! `{"\t"}` / `{'\n'}`, `{range EXPR}...{end}` (the inner actions are relative to each
//! item), `{@}` (the current value) and `{$.kind}` (the root). An expression is kubectl's
//! path syntax: `.name` (with `\.` for a dot inside a name: `labels.kubernetes\.io/hostname`),
//! `['name']`, `..name`, `*`, `[N]`, `[start:end:step]`, `[A,B]`, `[?(@.type=="Ready")]`;
//! each is translated to RFC 9535 and handed to `jsonpath-rust`.
//!
//! Printing follows kubectl's `get`: the results of one action are joined with a space;
//! strings print as they are, objects and lists as compact JSON; a missing key prints nothing
//! (`--allow-missing-template-keys`, on by default in kubectl); no newline is added.
//!
//! Upstream: `k8s.io/client-go/util/jsonpath` (the template language) and kubectl's
//! `get` printers (`k8s.io/cli-runtime/pkg/printers/jsonpath.go`).

use jsonpath_rust::JsonPath as _;
use serde_json::Value;

/// One piece of a parsed template.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// Text printed as it is.
    Text(String),
    /// An expression whose results are printed.
    Expr(Expr),
    /// `{range EXPR}BODY{end}`.
    Range(Expr, Vec<Node>),
}

/// An expression: RFC 9535 JSONPath, evaluated on the root or on the current value.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// The RFC 9535 path, always starting with `$`.
    path: String,
    /// `$...` in the template: evaluated on the root, not the current value.
    from_root: bool,
}

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub struct Template(Vec<Node>);

impl Template {
    /// Parses kubectl's template syntax.
    ///
    /// # Errors
    /// One line naming what is wrong: an unclosed `{`, `{end}` without `{range}`, a `{range}`
    /// without `{end}`, an unclosed quote, an expression that is not a path.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut stack: Vec<(Expr, Vec<Node>)> = Vec::new();
        let mut nodes: Vec<Node> = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                nodes.push(Node::Text(rest.to_string()));
                break;
            };
            if open > 0 {
                nodes.push(Node::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 1..];
            let close = closing_brace(after).ok_or_else(|| format!("unclosed action {:?}", &rest[open..]))?;
            let action = after[..close].trim();
            rest = &after[close + 1..];
            if action == "end" {
                let (expr, outer) = stack.pop().ok_or("{end} without a {range}")?;
                let body = std::mem::replace(&mut nodes, outer);
                nodes.push(Node::Range(expr, body));
            } else if let Some(e) = action.strip_prefix("range ") {
                stack.push((Expr::parse(e.trim())?, std::mem::take(&mut nodes)));
            } else if action.starts_with(['"', '\'']) {
                nodes.push(Node::Text(unquote(action)?));
            } else if action.is_empty() {
                return Err("an empty action {}".into());
            } else {
                nodes.push(Node::Expr(Expr::parse(action)?));
            }
        }
        if !stack.is_empty() {
            return Err("a {range} without its {end}".into());
        }
        Ok(Self(nodes))
    }

    /// The template applied to `root`.
    ///
    /// # Errors
    /// An expression `jsonpath-rust` cannot evaluate, naming it.
    pub fn render(&self, root: &Value) -> Result<String, String> {
        let mut out = String::new();
        render_nodes(&self.0, root, root, &mut out)?;
        Ok(out)
    }
}

fn render_nodes(nodes: &[Node], root: &Value, current: &Value, out: &mut String) -> Result<(), String> {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Expr(e) => {
                let texts: Vec<String> = e.eval(root, current)?.into_iter().map(text_of).collect();
                out.push_str(&texts.join(" "));
            }
            Node::Range(e, body) => {
                for item in e.eval(root, current)? {
                    render_nodes(body, root, item, out)?;
                }
            }
        }
    }
    Ok(())
}

/// A result as kubectl prints it: strings as they are, anything else as compact JSON.
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Expr {
    /// Parses one kubectl path expression (`.a.b[*]`, `$.kind`, `@`, `..name`); braces around
    /// it are allowed (`{.a}`), as custom-columns takes both.
    ///
    /// # Errors
    /// One line naming the expression when it is not a path `jsonpath-rust` accepts.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let t = t
            .strip_prefix('{')
            .and_then(|x| x.strip_suffix('}'))
            .map(str::trim)
            .unwrap_or(t);
        let (from_root, body) = match t.strip_prefix('$') {
            Some(b) => (true, b),
            None => (false, t.strip_prefix('@').unwrap_or(t)),
        };
        let path = format!("${}", translate(body).map_err(|e| format!("{t:?}: {e}"))?);
        // Parse once now, so a bad path fails before anything is read.
        Value::Null
            .query(&path)
            .map_err(|e| format!("{t:?}: not a JSONPath expression ({})", one_line(&e.to_string())))?;
        Ok(Self { path, from_root })
    }

    /// The values the expression selects from `current` (or `root` for `$...`).
    ///
    /// # Errors
    /// The path, when `jsonpath-rust` fails on it.
    pub fn eval<'a>(&self, root: &'a Value, current: &'a Value) -> Result<Vec<&'a Value>, String> {
        let base = if self.from_root { root } else { current };
        base.query(&self.path)
            .map_err(|e| format!("{}: {}", self.path, one_line(&e.to_string())))
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The index of the `}` closing an action (quotes and brackets skipped).
fn closing_brace(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            match c {
                '\\' if !escaped => escaped = true,
                _ if escaped => escaped = false,
                _ if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '}' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// A quoted literal with its escapes (`\n`, `\t`, `\r`, `\\`, `\"`, `\'`).
fn unquote(s: &str) -> Result<String, String> {
    let q = s.chars().next().unwrap_or('"');
    let inner = s
        .strip_prefix(q)
        .and_then(|x| x.strip_suffix(q))
        .filter(|_| s.len() >= 2)
        .ok_or_else(|| format!("unclosed quote in {{{s}}}"))?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    Ok(out)
}

/// Whether `name` may follow a `.` in RFC 9535 (member-name-shorthand).
fn is_shorthand(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || !c.is_ascii())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii())
}

/// A member name as an RFC 9535 segment: `.name`, or `['name']` when it has other characters.
fn member(name: &str) -> String {
    if is_shorthand(name) {
        format!(".{name}")
    } else {
        format!("['{}']", name.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// kubectl's path after the leading `$`/`@`, as RFC 9535 segments.
fn translate(body: &str) -> Result<String, String> {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    // A leading bare name (`{kind}`) reads as `.kind`.
    let mut expect_name = !chars.is_empty() && chars[0] != '.' && chars[0] != '[';
    while i < chars.len() || expect_name {
        let mut descendant = false;
        if !expect_name {
            match chars[i] {
                '.' if chars.get(i + 1) == Some(&'.') => {
                    descendant = true;
                    i += 2;
                }
                '.' => i += 1,
                '[' => {
                    let end = closing_bracket(&chars, i).ok_or("unclosed [")?;
                    out.extend(&chars[i..=end]);
                    i = end + 1;
                    continue;
                }
                c if c.is_whitespace() => return Err(format!("unexpected space at {:?}", tail(&chars, i))),
                _ => return Err(format!("unexpected {:?}", tail(&chars, i))),
            }
        }
        expect_name = false;
        if descendant {
            out.push_str("..");
            if chars.get(i) == Some(&'[') {
                continue;
            }
        }
        // A name (with `\.` and `\\` escapes) or `*`, up to the next `.` or `[`.
        let mut name = String::new();
        while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
            if chars[i] == '\\' && i + 1 < chars.len() {
                name.push(chars[i + 1]);
                i += 2;
            } else {
                name.push(chars[i]);
                i += 1;
            }
        }
        if name.is_empty() {
            if i >= chars.len() && !descendant && out.is_empty() {
                // `.` alone: the value itself.
                break;
            }
            return Err("a name is missing after '.'".into());
        }
        if name.chars().any(char::is_whitespace) {
            return Err(format!("unexpected space in {name:?}"));
        }
        if name == "*" {
            out.push_str(if descendant { "*" } else { ".*" });
        } else if descendant {
            out.push_str(member(&name).trim_start_matches('.'));
        } else {
            out.push_str(&member(&name));
        }
    }
    Ok(out)
}

fn tail(chars: &[char], i: usize) -> String {
    chars[i..].iter().collect()
}

/// The index of the `]` closing the `[` at `start` (quotes and nested brackets skipped).
fn closing_bracket(chars: &[char], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut i = start;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            if c == '\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                '"' | '\'' => quote = Some(c),
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The document of kubectl's JSONPath reference page (kubernetes.io "JSONPath Support").
    fn doc() -> Value {
        json!({
          "kind": "List",
          "items": [
            {"kind": "None", "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
             "status": {"capacity": {"cpu": "4"}, "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]}},
            {"kind": "None", "metadata": {"name": "127.0.0.2"},
             "status": {"capacity": {"cpu": "8"}, "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.2"}, {"type": "another", "address": "127.0.0.3"}]}}
          ],
          "users": [
            {"name": "myself", "user": {}},
            {"name": "e2e", "user": {"username": "admin", "password": "secret"}}
          ]
        })
    }

    fn run(t: &str) -> String {
        Template::parse(t)
            .and_then(|t| t.render(&doc()))
            .unwrap_or_else(|e| panic!("{t}: {e}"))
    }

    #[test]
    fn the_forms_of_kubectls_reference_page() {
        assert_eq!(run("kind is {.kind}"), "kind is List");
        assert_eq!(run("{['kind']}"), "List");
        assert_eq!(run("{.items[*].metadata.name}"), "127.0.0.1 127.0.0.2");
        assert_eq!(run("{.users[0].name}"), "myself");
        assert_eq!(run("{.users[?(@.name==\"e2e\")].user.password}"), "secret");
        assert_eq!(run("{.items[-1:].metadata.name}"), "127.0.0.2");
        assert_eq!(run("{.items[0:1].metadata.name}"), "127.0.0.1");
        assert_eq!(
            run("{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}"),
            "[127.0.0.1, {\"cpu\":\"4\"}] [127.0.0.2, {\"cpu\":\"8\"}] "
        );
        assert_eq!(
            run("{range .items[*]}{.metadata.name}{\"\\t\"}{end}"),
            "127.0.0.1\t127.0.0.2\t"
        );
        assert_eq!(
            run("{range .items[*]}{.metadata.name}{'\\n'}{end}"),
            "127.0.0.1\n127.0.0.2\n"
        );
        assert_eq!(
            run("{.items[0].metadata.labels.kubernetes\\.io/hostname}"),
            "127.0.0.1"
        );
        assert_eq!(
            run("{.items[*].status.addresses[*].address}"),
            "127.0.0.1 127.0.0.2 127.0.0.3"
        );
        assert_eq!(run("{.users[*]['name']}"), "myself e2e");
        assert_eq!(run("{.users[0]}"), "{\"name\":\"myself\",\"user\":{}}");
        assert_eq!(run("{@.kind}"), "List");
        assert_eq!(
            run("{range .items[*]}{$.kind}:{.kind} {end}"),
            "List:None List:None "
        );
    }

    #[test]
    fn recursive_descent_and_missing_keys() {
        let v = json!({"a": {"name": "x", "b": [{"name": "y"}]}});
        let t = Template::parse("{..name}").expect("parses");
        let mut names: Vec<String> = t
            .render(&v)
            .expect("renders")
            .split(' ')
            .map(str::to_owned)
            .collect();
        names.sort();
        assert_eq!(names, ["x", "y"]);
        assert_eq!(run("<{.nope.deeper}>"), "<>");
        assert_eq!(run("{.items[5].metadata.name}"), "");
    }

    #[test]
    fn bad_templates_are_one_line_errors() {
        let err = |t: &str| Template::parse(t).expect_err(t);
        assert_eq!(err("{.kind"), "unclosed action \"{.kind\"");
        assert_eq!(err("{end}"), "{end} without a {range}");
        assert_eq!(err("{range .items[*]}{.a}"), "a {range} without its {end}");
        assert_eq!(err("{}"), "an empty action {}");
        assert!(
            err("{.items[0}").starts_with("unclosed action"),
            "{}",
            err("{.items[0}")
        );
        assert!(err("{.a b}").contains("unexpected space"), "{}", err("{.a b}"));
        assert!(err("{.a..}").contains("a name is missing"), "{}", err("{.a..}"));
        for t in ["{.items[?(@.x ==)]}", "{.items[1:2:3:4]}"] {
            let e = err(t);
            assert!(
                e.contains("not a JSONPath expression") && !e.contains('\n'),
                "{t}: {e}"
            );
        }
    }

    #[test]
    fn names_that_are_not_shorthand_are_quoted() {
        assert_eq!(
            translate(".metadata.labels.app-name"),
            Ok(".metadata.labels['app-name']".into())
        );
        assert_eq!(translate(".a\\.b"), Ok("['a.b']".into()));
        assert_eq!(translate("..name"), Ok("..name".into()));
        assert_eq!(translate(".items[*].x"), Ok(".items[*].x".into()));
        assert_eq!(translate("kind"), Ok(".kind".into()));
        assert_eq!(translate("."), Ok(String::new()));
        assert_eq!(translate(".*"), Ok(".*".into()));
    }
}
