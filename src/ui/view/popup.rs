//! Popups, drawn last over the view: a bordered box with the popup's title, its content lines
//! (built by the state side, [`crate::ui::popup`]) scrolled, and the keys that apply.

use ratatui::{
    Frame,
    layout::Rect,
    style::Modifier,
    text::Line,
    widgets::{Block, Clear, Paragraph},
};

use crate::ui::{
    app::App,
    layout,
    popup::{self as content, PopupKind},
    text,
};

pub(super) fn render(app: &App, frame: &mut Frame, area: Rect) {
    let p = &app.palette;
    let Some(popup) = &app.popup else { return };
    let inputs = app.popup_inputs();
    let rect = match popup.kind {
        PopupKind::Confirm(_) | PopupKind::Request(_) | PopupKind::Channels(_) => {
            content::confirm_area(popup, &inputs, area)
        }
        _ => layout::popup_area(area, content::max_width(&popup.kind)),
    };
    frame.render_widget(Clear, rect);
    let refused = inputs.refusal(popup).is_some();
    let hint = match popup.kind {
        PopupKind::Detail(_) if popup.yaml.is_some() => {
            crate::l10n::tr!("popup-hint-detail", " j/k scroll · y yaml · Esc close ")
        }
        PopupKind::Confirm(_) if refused => crate::l10n::tr!("popup-hint-close", " n close "),
        PopupKind::Confirm(_) => crate::l10n::tr!("popup-hint-confirm", " y confirm · n cancel "),
        PopupKind::Request(_) if refused => {
            crate::l10n::tr!("popup-hint-request-refused", " j/k scroll · n close ")
        }
        PopupKind::Request(_) => {
            crate::l10n::tr!("popup-hint-request", " y confirm · n cancel · j/k scroll ")
        }
        PopupKind::Channels(_) => {
            crate::l10n::tr!("popup-hint-channels", " j/k choose · Enter review · Esc cancel ")
        }
        _ => crate::l10n::tr!("popup-hint-scroll", " j/k scroll · Esc close "),
    };
    let block = Block::bordered()
        .border_style(p.title.remove_modifier(Modifier::BOLD))
        .title(Line::styled(
            text::fit(
                &format!(" {} ", popup.title),
                usize::from(rect.width.saturating_sub(4)),
            ),
            p.title,
        ))
        .title_bottom(Line::styled(hint, p.muted));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let lines = content::lines(popup, &inputs, usize::from(inner.width));
    let max = lines.len().saturating_sub(usize::from(inner.height));
    let scroll = if matches!(popup.kind, PopupKind::Channels(_)) {
        0
    } else {
        popup.scroll.min(max)
    };
    let shown: Vec<Line> = lines
        .into_iter()
        .skip(scroll)
        .take(usize::from(inner.height))
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}
