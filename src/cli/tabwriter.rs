//! Go `text/tabwriter` alignment (left-aligned, space padding) as `oc` and `kubectl` use it for
//! every table (`openshift/oc pkg/cli/admin/upgrade/status/*.go` `tabwriter.NewWriter`), via
//! the `tabwriter` crate, a port of Go's elastic tabstops.
//!
//! Cells end at `\t`; the text after a line's last `\t` is never padded; a line without any
//! `\t` ends the column blocks above it (how an embedded newline "breaks" a table upstream).

use std::io::Write;

/// Formats `text` like a Go `tabwriter.NewWriter(w, minwidth, 0, padding, ' ', 0)` that is
/// written `text` and then flushed. `minwidth` counts the padding, as in Go.
pub fn format(text: &str, minwidth: usize, padding: usize) -> String {
    let mut tw = tabwriter::TabWriter::new(Vec::with_capacity(text.len() + 64))
        .minwidth(minwidth.saturating_sub(padding))
        .padding(padding);
    // Writing into a Vec cannot fail.
    let _ = tw.write_all(text.as_bytes());
    String::from_utf8_lossy(&tw.into_inner().unwrap_or_default()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn aligns_like_go() {
        assert_eq!(
            format("a\tbb\tc\nccc\td\te\n", 0, 3),
            "a     bb   c\nccc   d    e\n"
        );
        assert_eq!(
            format("NAME\tX\nversion\t1\n", 6, 3),
            "NAME      X\nversion   1\n"
        );
    }

    #[test]
    fn line_without_tab_breaks_the_table() {
        assert_eq!(format("a\tb\nlong\nccccc\td\n", 0, 3), "a   b\nlong\nccccc   d\n");
    }
}
