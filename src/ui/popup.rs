//! Popups (help, row details, YAML, the mode-switch confirm): what is open, its content as
//! styled lines wrapped to a width, and its size. The state uses the line count to keep the
//! scroll in range; the render code draws the same lines.

use ratatui::{
    layout::Rect,
    text::{Line, Span},
};

use super::request::RequestView;
use super::{
    engine::{self, EngineModel},
    keys::{self, BINDINGS, COMMANDS},
    layout,
    model::{STATUS_WORDS, detail::DetailLine},
    text,
    theme::{Level, Palette},
};
use crate::{
    clock::Clock,
    l10n::{tr, trf},
    reconcile::api::EngineMode,
};

/// What a popup shows.
#[derive(Clone, Debug, PartialEq)]
pub enum PopupKind {
    /// The key help, generated from the key registry.
    Help,
    /// Details of a row: labelled values.
    Detail(Vec<DetailLine>),
    /// An object's YAML.
    Yaml(String),
    /// Confirm switching the engine to this mode.
    Confirm(EngineMode),
    /// Confirm an administrator's request (update, channel, clear, accept risks): what will
    /// be written, the preconditions' verdicts, the risks accepted, or why nothing will be.
    Request(Box<RequestView>),
    /// Choose a channel from those the current release lists; the popup's `scroll` is the
    /// selected index.
    Channels(Vec<String>),
}

impl PopupKind {
    /// Whether the popup asks for a yes/no (`y`/Enter, `n`/Esc).
    pub fn is_confirm(&self) -> bool {
        matches!(self, Self::Confirm(_) | Self::Request(_))
    }
}

/// An open popup.
#[derive(Clone, Debug, PartialEq)]
pub struct Popup {
    /// Title.
    pub title: String,
    /// Content.
    pub kind: PopupKind,
    /// First visible line.
    pub scroll: usize,
    /// The object the popup is about, to offer its YAML with `y`.
    pub yaml: Option<(String, String)>,
}

/// What popup content reads besides the popup itself (the app gives it,
/// `App::popup_inputs`).
pub(crate) struct PopupInputs<'a> {
    /// The attached engine's model, if any.
    pub attached: Option<&'a EngineModel>,
    /// The clock the dashboard shows (the Lease in the switch popup is judged on the wall
    /// clock through it).
    pub clock: &'a Clock,
    /// Colours.
    pub palette: &'a Palette,
    /// The cluster a confirmed request or mode switch acts on, e.g. `context admin@prod ·
    /// cluster ID 5d2b…`.
    pub target: String,
}

impl PopupInputs<'_> {
    /// Why the open confirm popup cannot be confirmed (`y` is then not offered): a request
    /// refused, or a switch to active-apply while another CVO's Lease is alive (or the Lease
    /// cannot be read). `None` for other popups and for a confirmable one.
    pub fn refusal(&self, popup: &Popup) -> Option<String> {
        match &popup.kind {
            PopupKind::Request(v) => v.refusal.clone(),
            PopupKind::Confirm(EngineMode::ActiveApply) => self
                .attached
                .and_then(|e| e.snap.lease.as_ref())
                .and_then(crate::reconcile::api::LeaseInfo::blocks_switch),
            _ => None,
        }
    }
}

/// The confirm popup's rectangle: just high enough for its text.
pub(crate) fn confirm_area(popup: &Popup, inputs: &PopupInputs<'_>, area: Rect) -> Rect {
    let w = area.width.saturating_sub(4).min(max_width(&popup.kind));
    let inner_w = usize::from(w.saturating_sub(2));
    let lines = u16::try_from(lines(popup, inputs, inner_w).len()).unwrap_or(u16::MAX);
    let h = lines.saturating_add(2).min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Help is narrow text; details and YAML use the width they get.
pub(crate) fn max_width(kind: &PopupKind) -> u16 {
    match kind {
        PopupKind::Help => 84,
        PopupKind::Confirm(_) | PopupKind::Channels(_) => 64,
        PopupKind::Request(_) => 96,
        _ => u16::MAX,
    }
}

/// The popup's content as lines, wrapped to `width`.
pub(crate) fn lines(popup: &Popup, inputs: &PopupInputs<'_>, width: usize) -> Vec<Line<'static>> {
    let (attached, clock, p) = (inputs.attached, inputs.clock, inputs.palette);
    let mut out = Vec::new();
    match &popup.kind {
        PopupKind::Help => {
            let mut section = "";
            for b in BINDINGS.iter().filter(|b| attached.is_some() || !b.engine_only) {
                if b.section.get() != section {
                    if !section.is_empty() {
                        out.push(Line::default());
                    }
                    section = b.section.get();
                    out.push(Line::styled(section.to_string(), p.title));
                }
                for (i, line) in text::wrap(b.desc.get(), width.saturating_sub(14))
                    .into_iter()
                    .enumerate()
                {
                    let key = if i == 0 {
                        format!("  {:<11} ", b.label)
                    } else {
                        " ".repeat(14)
                    };
                    out.push(Line::from(vec![
                        Span::styled(key, p.key),
                        Span::styled(line, p.text),
                    ]));
                }
            }
            out.push(Line::default());
            out.push(Line::styled(tr!("help-filtering", "Filtering (/)"), p.title));
            for line in text::wrap(keys::FILTER_HELP.get(), width.saturating_sub(2)) {
                out.push(Line::from(vec![Span::raw("  "), Span::styled(line, p.text)]));
            }
            out.push(Line::default());
            out.push(Line::styled(
                tr!(
                    "help-status-words",
                    "Operator status words (colour is never the only signal)"
                ),
                p.title,
            ));
            for (word, meaning) in STATUS_WORDS {
                for (i, line) in text::wrap(meaning.get(), width.saturating_sub(14))
                    .into_iter()
                    .enumerate()
                {
                    let key = if i == 0 {
                        format!("  {word:<11} ")
                    } else {
                        " ".repeat(14)
                    };
                    out.push(Line::from(vec![
                        Span::styled(key, p.key),
                        Span::styled(line, p.text),
                    ]));
                }
            }
            out.push(Line::default());
            out.push(Line::styled(tr!("help-commands", "Commands (after :)"), p.title));
            for (aliases, desc) in COMMANDS {
                let names = aliases.join(" ");
                for (i, line) in text::wrap(&format!("{names}: {}", desc.get()), width.saturating_sub(2))
                    .into_iter()
                    .enumerate()
                {
                    let lead = if i == 0 { "  " } else { "    " };
                    out.push(Line::from(vec![Span::raw(lead), Span::styled(line, p.text)]));
                }
            }
        }
        PopupKind::Detail(lines) => {
            let label_w = lines
                .iter()
                .map(|l| text::width(&l.label))
                .max()
                .unwrap_or(0)
                .min(24);
            for l in lines {
                if l.label.is_empty() {
                    out.push(Line::default());
                    out.push(Line::styled(text::fit(&l.value, width), p.title));
                    continue;
                }
                let avail = width.saturating_sub(label_w + 2).max(8);
                let value = if l.value.is_empty() {
                    "-".to_string()
                } else {
                    l.value.clone()
                };
                let style = match l.level {
                    Level::Info | Level::Ok => p.text,
                    other => p.level(other),
                };
                for (i, part) in value.split('\n').flat_map(|v| text::wrap(v, avail)).enumerate() {
                    let label = if i == 0 {
                        format!("{:<label_w$}  ", text::fit(&l.label, label_w))
                    } else {
                        " ".repeat(label_w + 2)
                    };
                    out.push(Line::from(vec![
                        Span::styled(label, p.key),
                        Span::styled(part, style),
                    ]));
                }
            }
        }
        PopupKind::Confirm(to) => {
            let from = attached.map(|e| e.snap.mode);
            let mut head = vec![Span::styled(
                tr!("confirm-switch-from", "Switch the engine from "),
                p.text,
            )];
            if let Some(f) = from {
                head.push(Span::styled(engine::mode_word(f), p.mode(f)));
                head.push(Span::styled(tr!("confirm-switch-to", " to "), p.text));
            }
            head.push(Span::styled(engine::mode_word(*to), p.mode(*to)));
            head.push(Span::styled("?", p.text));
            out.push(Line::from(head));
            target_line(&inputs.target, p, width, &mut out);
            out.push(Line::default());
            for l in text::wrap(engine::switch_explanation(*to), width) {
                out.push(Line::styled(l, p.text));
            }
            if let Some((l, at)) = attached.and_then(|e| Some((e.snap.lease.as_ref()?, e.snap.at?))) {
                out.push(Line::default());
                // Judged at the snapshot's time (rendering reads no clock).
                let (words, level) = engine::lease_words(l, at, clock);
                for w in text::wrap(
                    &trf!(
                        "confirm-lease",
                        "Lease {lease}: {words}",
                        lease = l.lease,
                        words = words
                    ),
                    width,
                ) {
                    out.push(Line::styled(w, p.level(level)));
                }
            }
            let refusal = inputs.refusal(popup);
            if let Some(why) = &refusal {
                for w in text::wrap(
                    &trf!(
                        "confirm-switch-refused",
                        "The switch is refused: {why}",
                        why = why
                    ),
                    width,
                ) {
                    out.push(Line::styled(w, p.err));
                }
            }
            out.push(Line::default());
            // A refused switch offers no `y`: closing is all there is to do.
            out.push(Line::from(match refusal {
                Some(_) => vec![
                    Span::styled("n/Esc", p.key),
                    Span::styled(tr!("confirm-close-unsent", " close (nothing is sent)"), p.text),
                ],
                None => vec![
                    Span::styled("y/Enter", p.key),
                    Span::styled(tr!("confirm-switch-key", " switch   "), p.text),
                    Span::styled("n/Esc", p.key),
                    Span::styled(tr!("confirm-cancel-unsent", " cancel (nothing is sent)"), p.text),
                ],
            }));
        }
        PopupKind::Request(v) => request_lines(v, &inputs.target, p, width, &mut out),
        PopupKind::Channels(list) => {
            out.push(Line::styled(
                tr!("channels-listed", "Channels the current release lists:"),
                p.text,
            ));
            out.push(Line::default());
            for (i, c) in list.iter().enumerate() {
                let style = if i == popup.scroll { p.selected } else { p.text };
                out.push(Line::styled(text::fit(&format!("  {c}"), width), style));
            }
            out.push(Line::default());
            out.push(Line::from(vec![
                Span::styled("j/k", p.key),
                Span::styled(tr!("channels-choose", " choose   "), p.text),
                Span::styled("Enter", p.key),
                Span::styled(tr!("channels-review", " review the change   "), p.text),
                Span::styled("Esc", p.key),
                Span::styled(tr!("channels-cancel", " cancel"), p.text),
            ]));
        }
        PopupKind::Yaml(y) => {
            for line in y.lines() {
                let indent = line.len() - line.trim_start().len();
                for (i, part) in text::wrap(line, width.saturating_sub(2)).into_iter().enumerate() {
                    let part = if i == 0 {
                        part
                    } else {
                        format!("{}  {}", " ".repeat(indent.min(20)), part.trim_start())
                    };
                    out.push(Line::styled(text::fit(&part, width), p.text));
                }
            }
        }
    }
    out
}

/// The request popup's lines: the request, what will be written, the verdicts, the risks
/// accepted, warnings, and the keys (or the refusal).
fn request_lines(v: &RequestView, target: &str, p: &Palette, width: usize, out: &mut Vec<Line<'static>>) {
    let wrapped = |s: &str, indent: usize, style, out: &mut Vec<Line<'static>>| {
        for l in text::wrap(s, width.saturating_sub(indent).max(8)) {
            out.push(Line::styled(format!("{}{l}", " ".repeat(indent)), style));
        }
    };
    out.push(Line::from(vec![
        Span::styled(tr!("request-label", "Request  "), p.muted),
        Span::styled(v.request.command_line(), p.text),
    ]));
    target_line(target, p, width, out);
    out.push(Line::default());
    if v.writes.is_empty() {
        out.push(Line::styled(
            tr!("request-writes-nothing", "Writes nothing."),
            p.title,
        ));
    } else {
        out.push(Line::styled(
            tr!(
                "request-writes",
                "Writes (JSON merge patch of clusterversion/version):"
            ),
            p.title,
        ));
        for w in &v.writes {
            wrapped(w, 2, p.text, out);
        }
    }
    if !v.verdicts.is_empty() {
        out.push(Line::default());
        out.push(Line::styled(
            tr!("request-preconditions", "Preconditions"),
            p.title,
        ));
        for (level, line) in &v.verdicts {
            let mark = match level {
                Level::Ok => "✓ ",
                Level::Error | Level::Blocked => "✗ ",
                _ => "! ",
            };
            let mut first = true;
            for l in text::wrap(line, width.saturating_sub(4).max(8)) {
                let lead = if first { mark } else { "  " };
                first = false;
                out.push(Line::from(vec![
                    Span::raw("  "),
                    Span::styled(format!("{lead}{l}"), p.level(*level)),
                ]));
            }
        }
    }
    if !v.risks.is_empty() {
        out.push(Line::default());
        out.push(Line::styled(
            tr!("request-risks", "Risks you accept by confirming"),
            p.title,
        ));
        for r in &v.risks {
            out.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(r.name.clone(), p.warn),
            ]));
            wrapped(&r.message, 4, p.text, out);
            if !r.url.is_empty() {
                wrapped(&r.url, 4, p.key, out);
            }
        }
    }
    for w in &v.warnings {
        out.push(Line::default());
        wrapped(&trf!("request-warning", "warning: {w}", w = w), 0, p.warn, out);
    }
    out.push(Line::default());
    match &v.refusal {
        Some(why) => {
            wrapped(
                &trf!("request-refused", "Refused: {why}", why = why),
                0,
                p.err,
                out,
            );
            out.push(Line::from(vec![
                Span::styled("n/Esc", p.key),
                Span::styled(tr!("request-close", " close (nothing is written)"), p.text),
            ]));
        }
        None => out.push(Line::from(vec![
            Span::styled("y/Enter", p.key),
            Span::styled(tr!("request-write-it", " write it   "), p.text),
            Span::styled("n/Esc", p.key),
            Span::styled(tr!("request-cancel", " cancel (nothing is written)"), p.text),
        ])),
    }
}

/// `Cluster  {target}` (the cluster the popup's `y` acts on), wrapped under its label.
fn target_line(target: &str, p: &Palette, width: usize, out: &mut Vec<Line<'static>>) {
    let label_text = tr!("popup-cluster-label", "Cluster  ");
    let label_w = text::width(label_text);
    for (i, l) in text::wrap(target, width.saturating_sub(label_w).max(8))
        .into_iter()
        .enumerate()
    {
        let label = if i == 0 {
            label_text.to_string()
        } else {
            " ".repeat(label_w)
        };
        out.push(Line::from(vec![
            Span::styled(label, p.muted),
            Span::styled(l, p.text.add_modifier(ratatui::style::Modifier::BOLD)),
        ]));
    }
}

/// The largest scroll offset that still fills the popup on a terminal of `size`.
pub(crate) fn max_scroll(popup: &Popup, inputs: &PopupInputs<'_>, size: (u16, u16)) -> usize {
    if let PopupKind::Channels(c) = &popup.kind {
        return c.len().saturating_sub(1);
    }
    let screen = Rect::new(0, 0, size.0, size.1);
    let area = if popup.kind.is_confirm() {
        confirm_area(popup, inputs, screen)
    } else {
        layout::popup_area(screen, max_width(&popup.kind))
    };
    let (w, h) = (
        usize::from(area.width.saturating_sub(2)),
        usize::from(area.height.saturating_sub(2)),
    );
    lines(popup, inputs, w).len().saturating_sub(h)
}
