//! A re-implementation of Go's `text/tabwriter` (left-aligned, space padding) as `oc` uses it
//! for every table (`openshift/oc pkg/cli/admin/upgrade/status/*.go` `tabwriter.NewWriter`).
//!
//! Cells end at `\t`; the text after a line's last `\t` is never padded. A line without any
//! `\t` flushes everything buffered so far, so rows after it are aligned independently (this is
//! how an embedded newline "breaks" a table upstream). Widths count Unicode scalar values.

/// Formats `text` like a Go `tabwriter.NewWriter(w, minwidth, 0, padding, ' ', 0)` that is
/// written `text` and then flushed.
pub fn format(text: &str, minwidth: usize, padding: usize) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut lines: Vec<&str> = text.split('\n').collect();
    // `split` yields a final "" when the text ends with '\n': that is "no unterminated line".
    let last = lines.pop().unwrap_or("");
    let mut segment: Vec<Vec<&str>> = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split('\t').collect();
        let flush = cells.len() == 1;
        segment.push(cells);
        if flush {
            emit(&segment, minwidth, padding, &mut out, true);
            segment.clear();
        }
    }
    if !segment.is_empty() {
        emit(&segment, minwidth, padding, &mut out, true);
    }
    if !last.is_empty() {
        let cells: Vec<&str> = last.split('\t').collect();
        emit(&[cells], minwidth, padding, &mut out, false);
    }
    out
}

fn width(s: &str) -> usize {
    s.chars().count()
}

fn emit(lines: &[Vec<&str>], minwidth: usize, padding: usize, out: &mut String, newline: bool) {
    let mut widths = Vec::new();
    let mut rendered = vec![false; lines.len()];
    format_block(lines, 0, lines.len(), &mut widths, minwidth, padding, out, &mut rendered);
    if !newline && out.ends_with('\n') {
        out.pop();
    }
}

#[allow(clippy::too_many_arguments)]
fn format_block(
    lines: &[Vec<&str>],
    mut line0: usize,
    line1: usize,
    widths: &mut Vec<usize>,
    minwidth: usize,
    padding: usize,
    out: &mut String,
    rendered: &mut [bool],
) {
    let column = widths.len();
    let mut this = line0;
    while this < line1 {
        if column + 1 >= lines[this].len() {
            this += 1;
            continue;
        }
        write_lines(lines, line0, this, widths, out);
        line0 = this;
        let mut w = minwidth;
        while this < line1 {
            let line = &lines[this];
            if column + 1 >= line.len() {
                break;
            }
            w = w.max(width(line[column]) + padding);
            this += 1;
        }
        widths.push(w);
        format_block(lines, line0, this, widths, minwidth, padding, out, rendered);
        widths.pop();
        line0 = this;
    }
    write_lines(lines, line0, line1, widths, out);
}

fn write_lines(lines: &[Vec<&str>], line0: usize, line1: usize, widths: &[usize], out: &mut String) {
    for line in &lines[line0..line1] {
        for (j, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if j < widths.len() && j + 1 < line.len() {
                let w = width(cell);
                for _ in w..widths[j] {
                    out.push(' ');
                }
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_and_keeps_trailing_spaces() {
        let t = format("A\tBB\tC\nxxxx\t\tz\n", 0, 3);
        assert_eq!(t, "A      BB   C\nxxxx        z\n");
    }

    #[test]
    fn tabless_line_breaks_alignment() {
        let t = format("a\tb\nline\nlonger\tc\n", 0, 3);
        assert_eq!(t, "a   b\nline\nlonger   c\n");
    }
}
