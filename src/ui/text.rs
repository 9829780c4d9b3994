//! Text helpers for cells: sanitising, width-aware truncation with an ellipsis, wrapping,
//! and short ages.
//!
//! Table cells are one line each and never carry characters whose width a
//! terminal and ratatui may disagree on: control characters become spaces,
//! zero-width joiners, variation selectors and emoji modifiers are dropped, regional-indicator
//! letters become ASCII letters. What remains has a width `unicode-width` and terminals agree on.

use chrono::{DateTime, Utc};
use unicode_width::UnicodeWidthChar;

/// The ellipsis that marks truncated text (one column wide).
pub const ELLIPSIS: char = '…';

/// Whether `c` is dropped from displayed text: zero-width joiners/spaces, bidi marks,
/// variation selectors, emoji skin-tone modifiers, tag characters and the BOM.
fn is_dropped(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FEFF}'
        | '\u{1F3FB}'..='\u{1F3FF}'
        | '\u{E0000}'..='\u{E007F}'
        | '\u{E0100}'..='\u{E01EF}')
}

/// Maps one character to what is displayed, or `None` to drop it.
fn display_char(c: char) -> Option<char> {
    if c.is_control() {
        return Some(' ');
    }
    if is_dropped(c) {
        return None;
    }
    if ('\u{1F1E6}'..='\u{1F1FF}').contains(&c) {
        // Regional indicators: a flag pair renders two cells wide in some terminals and
        // four in others; show the ASCII letters instead.
        let letter = u32::from(c) - 0x1F1E6 + u32::from(b'A');
        return char::from_u32(letter);
    }
    Some(c)
}

/// Display width of one (already sanitised) character.
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Display width of a sanitised string.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// One line for a table cell: the first non-empty line of `s` (a multi-line message shows its
/// first line, marked with an ellipsis when more lines follow), sanitised.
pub fn one_line(s: &str) -> String {
    let mut lines = s.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    let mut out = sanitize(first);
    if lines.next().is_some() {
        out.push(' ');
        out.push(ELLIPSIS);
    }
    out
}

/// Sanitises one line: control characters (newlines included) become spaces, characters of
/// disputed width are dropped or replaced.
pub fn sanitize(s: &str) -> String {
    s.chars().filter_map(display_char).collect()
}

/// Truncates `s` to at most `max` columns, ending with `…` when something was cut.
/// `s` is sanitised first, so the result is always safe for a single cell.
pub fn fit(s: &str, max: usize) -> String {
    let clean = sanitize(s);
    if width(&clean) <= max {
        return clean;
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in clean.chars() {
        let w = char_width(c);
        if used + w > max - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push(ELLIPSIS);
    out
}

/// Word-wraps sanitised text to `max` columns; long words are split. Existing line breaks
/// are kept. Always returns at least one line.
pub fn wrap(s: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut out = Vec::new();
    for raw in s.split('\n') {
        let line = sanitize(raw.trim_end_matches('\r'));
        if width(&line) <= max {
            out.push(line);
            continue;
        }
        let mut cur = String::new();
        let mut cur_w = 0;
        for word in line.split_inclusive(' ') {
            let ww = width(word);
            if cur_w + ww <= max {
                cur.push_str(word);
                cur_w += ww;
                continue;
            }
            if !cur.is_empty() {
                out.push(cur.trim_end().to_owned());
                cur = String::new();
                cur_w = 0;
            }
            for c in word.chars() {
                let w = char_width(c);
                if cur_w + w > max {
                    out.push(std::mem::take(&mut cur));
                    cur_w = 0;
                }
                cur.push(c);
                cur_w += w;
            }
        }
        out.push(cur.trim_end().to_owned());
    }
    if out.is_empty() {
        out.push(String::new());
    }
    out
}

/// A short age like kubectl prints: `45s`, `12m`, `3h4m`, `2d5h`; `-` for no time, `0s` for
/// times in the future.
pub fn age(since: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    let Some(since) = since else { return "-".into() };
    let secs = (now - since).num_seconds().max(0);
    let (d, h, m, s) = (secs / 86_400, (secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    if secs < 120 {
        format!("{secs}s")
    } else if secs < 3600 {
        if m < 10 {
            format!("{m}m{s}s")
        } else {
            format!("{m}m")
        }
    } else if secs < 86_400 {
        format!("{h}h{m}m")
    } else {
        format!("{d}d{h}h")
    }
}

/// A duration in the same short form (`1h59m`, `14m`, `45s`); negative values keep the sign.
pub fn duration(d: chrono::Duration) -> String {
    let neg = d < chrono::Duration::zero();
    let secs = d.num_seconds().abs();
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    let body = if secs < 60 {
        format!("{s}s")
    } else if secs < 3600 {
        if m < 10 && s != 0 {
            format!("{m}m{s}s")
        } else {
            format!("{m}m")
        }
    } else {
        format!("{h}h{m}m")
    };
    if neg { format!("-{body}") } else { body }
}

/// A timestamp as `YYYY-MM-DD HH:MM` UTC, or `-`.
pub fn timestamp(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(|| "-".into(), |t| t.format("%Y-%m-%d %H:%M").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_truncates_with_ellipsis_by_width() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 3), "abc");
        assert_eq!(fit("abc", 0), "");
        // CJK characters are two columns wide: never split one in half.
        assert_eq!(fit("日本語テキスト", 5), "日本…");
        assert!(width(&fit("日本語テキスト", 6)) <= 6);
    }

    #[test]
    fn sanitize_drops_joiners_and_selectors() {
        // family emoji (ZWJ sequence) becomes three plain emoji, each two columns.
        let s = sanitize("👨\u{200D}👩\u{200D}👧");
        assert_eq!(s, "👨👩👧");
        assert_eq!(width(&s), 6);
        assert_eq!(sanitize("⚠\u{FE0F} x"), "⚠ x");
        assert_eq!(sanitize("a\tb\nc"), "a b c");
        assert_eq!(sanitize("\u{1F1E9}\u{1F1EA}"), "DE");
    }

    #[test]
    fn one_line_marks_more_lines() {
        assert_eq!(one_line("first\nsecond"), "first …");
        assert_eq!(one_line("\n\n  only  \n"), "only");
        assert_eq!(one_line(""), "");
    }

    #[test]
    fn wrap_respects_width() {
        let lines = wrap("the quick brown fox jumps over the lazy dog", 10);
        assert!(lines.iter().all(|l| width(l) <= 10), "{lines:?}");
        assert_eq!(lines.join(" "), "the quick brown fox jumps over the lazy dog");
        let long = wrap("aaaaaaaaaaaaaaaaaaaaaaaaa", 10);
        assert_eq!(long.len(), 3);
        assert_eq!(wrap("", 10), vec![String::new()]);
        let cjk = wrap("日本語日本語日本語", 5);
        assert!(cjk.iter().all(|l| width(l) <= 5), "{cjk:?}");
    }

    #[test]
    fn ages() {
        let now = DateTime::parse_from_rfc3339("2024-01-02T00:00:00Z")
            .map(|t| t.to_utc())
            .ok();
        let now = now.unwrap_or_default();
        let ago = |s: i64| Some(now - chrono::Duration::seconds(s));
        assert_eq!(age(None, now), "-");
        assert_eq!(age(ago(5), now), "5s");
        assert_eq!(age(ago(-50), now), "0s");
        assert_eq!(age(ago(125), now), "2m5s");
        assert_eq!(age(ago(725), now), "12m");
        assert_eq!(age(ago(3 * 3600 + 240), now), "3h4m");
        assert_eq!(age(ago(2 * 86_400 + 5 * 3600), now), "2d5h");
        assert_eq!(duration(chrono::Duration::seconds(7140)), "1h59m");
        assert_eq!(duration(chrono::Duration::seconds(-45)), "-45s");
    }
}
