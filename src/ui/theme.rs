//! The dashboard's colours: a [`Palette`] of named styles, never colour literals in views.
//!
//! Only the 16 ANSI colours are used, so the palette looks the same in tmux, in 256-colour and
//! in true-colour terminals; plain text keeps the terminal's own foreground
//! and background, so light terminals stay readable. `NO_COLOR` selects
//! [`Palette::mono`], which marks state with bold/underline/reverse only; every state also
//! carries a status word, so colour is never the only signal.

use ratatui::style::{Color, Modifier, Style};

/// Named styles for every kind of text the dashboard draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Palette {
    /// Plain text (terminal default colours).
    pub text: Style,
    /// Secondary text: labels, ages, empty values.
    pub muted: Style,
    /// Healthy / done.
    pub ok: Style,
    /// Progressing / pending / warnings.
    pub warn: Style,
    /// Degraded, unavailable, failing, errors.
    pub err: Style,
    /// Upgradeable=False and other "blocks the next update" states.
    pub highlight: Style,
    /// Panel titles and the tab in front.
    pub title: Style,
    /// Key names in hints and help.
    pub key: Style,
    /// Table header rows.
    pub header: Style,
    /// The selected table row.
    pub selected: Style,
    /// Panel borders.
    pub border: Style,
    /// The filled part of the completion gauge.
    pub gauge: Style,
    /// The engine mode `watch-only` (reads only).
    pub watch_only: Style,
    /// The engine mode `active-apply` (writes): reversed, so it never looks like watch-only.
    pub active_apply: Style,
}

impl Palette {
    /// The default palette for dark and light terminals alike (ANSI colours only).
    pub fn color() -> Self {
        Self {
            text: Style::new(),
            // Dim instead of a grey colour: "bright black" is invisible on some dark themes
            // (Solarized), and dim degrades to normal text where unsupported.
            muted: Style::new().add_modifier(Modifier::DIM),
            ok: Style::new().fg(Color::Green),
            warn: Style::new().fg(Color::Yellow),
            err: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            highlight: Style::new().fg(Color::Magenta),
            title: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            key: Style::new().fg(Color::Cyan),
            header: Style::new().add_modifier(Modifier::BOLD),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            border: Style::new().add_modifier(Modifier::DIM),
            gauge: Style::new().fg(Color::Cyan),
            watch_only: Style::new().fg(Color::LightBlue).add_modifier(Modifier::BOLD),
            active_apply: Style::new()
                .fg(Color::Magenta)
                .add_modifier(Modifier::BOLD.union(Modifier::REVERSED)),
        }
    }

    /// No colour at all (`NO_COLOR`): bold for errors, underline for warnings.
    pub fn mono() -> Self {
        Self {
            text: Style::new(),
            muted: Style::new(),
            ok: Style::new(),
            warn: Style::new().add_modifier(Modifier::UNDERLINED),
            err: Style::new().add_modifier(Modifier::BOLD),
            highlight: Style::new().add_modifier(Modifier::ITALIC),
            title: Style::new().add_modifier(Modifier::BOLD),
            key: Style::new().add_modifier(Modifier::BOLD),
            header: Style::new().add_modifier(Modifier::BOLD),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            border: Style::new(),
            gauge: Style::new(),
            watch_only: Style::new().add_modifier(Modifier::BOLD),
            active_apply: Style::new().add_modifier(Modifier::BOLD.union(Modifier::REVERSED)),
        }
    }

    /// [`Palette::mono`] when `NO_COLOR` is set to a non-empty value (no-color.org), else
    /// [`Palette::color`].
    pub fn from_env() -> Self {
        Self::for_no_color(std::env::var_os("NO_COLOR").as_deref())
    }

    /// The palette for a given `NO_COLOR` value (testable without touching the environment).
    pub fn for_no_color(no_color: Option<&std::ffi::OsStr>) -> Self {
        match no_color {
            Some(v) if !v.is_empty() => Self::mono(),
            _ => Self::color(),
        }
    }

    /// The style of an engine mode.
    pub fn mode(&self, mode: crate::reconcile::api::EngineMode) -> Style {
        match mode {
            crate::reconcile::api::EngineMode::WatchOnly => self.watch_only,
            crate::reconcile::api::EngineMode::ActiveApply => self.active_apply,
        }
    }

    /// The style of a [`Level`].
    pub fn level(&self, level: Level) -> Style {
        match level {
            Level::Ok => self.ok,
            Level::Info => self.text,
            Level::Warn => self.warn,
            Level::Error => self.err,
            Level::Blocked => self.highlight,
            Level::Unknown => self.muted,
        }
    }
}

/// Severity of a row or value; the view picks the style from the [`Palette`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Level {
    /// Healthy / done.
    Ok,
    /// Neutral information.
    #[default]
    Info,
    /// Unknown or missing data.
    Unknown,
    /// Blocks the next update but not this one (Upgradeable=False).
    Blocked,
    /// Progressing, pending, warning.
    Warn,
    /// Failing, degraded, unavailable.
    Error,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_selects_mono() {
        assert_eq!(
            Palette::for_no_color(Some(std::ffi::OsStr::new("1"))),
            Palette::mono()
        );
        assert_eq!(
            Palette::for_no_color(Some(std::ffi::OsStr::new(""))),
            Palette::color()
        );
        assert_eq!(Palette::for_no_color(None), Palette::color());
        let mono = Palette::mono();
        for s in [
            mono.ok,
            mono.warn,
            mono.err,
            mono.highlight,
            mono.muted,
            mono.title,
            mono.gauge,
            mono.watch_only,
            mono.active_apply,
        ] {
            assert_eq!(s.fg, None);
            assert_eq!(s.bg, None);
        }
    }
}
