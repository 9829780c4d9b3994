//! Small terminals: every view at 80x24 and 100x30 (snapshots), what the Overview must show
//! first there (Failing, Progressing and Available, the worst insight), and number columns
//! (ages, durations, versions) never cut.

use super::{
    engine::{engine_app, mid_update},
    *,
};
use crate::{reconcile::api::EngineMode, ui::theme::Level};

const SIZES: [(u16, u16); 2] = [(80, 24), (100, 30)];

/// Columns whose values are numbers: shown whole or not at all.
const NUMBER_COLUMNS: [&str; 4] = ["SINCE", "EST", "DURATION", "VERSION"];

/// Every cell of a number column (found by its header) that was cut with `…`.
fn cut_numbers(lines: &[String]) -> Vec<String> {
    let mut cut = Vec::new();
    for (y, line) in lines.iter().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let words: Vec<(usize, String)> = {
            let mut v = Vec::new();
            let mut start = None;
            for (x, ch) in chars.iter().enumerate() {
                match (ch.is_ascii_uppercase(), start) {
                    (true, None) => start = Some(x),
                    (false, Some(s)) => {
                        v.push((s, chars[s..x].iter().collect()));
                        start = None;
                    }
                    _ => {}
                }
            }
            if let Some(s) = start {
                v.push((s, chars[s..].iter().collect()));
            }
            v
        };
        // A table header has at least two upper-case words, one of them a number column.
        if words.len() < 2 {
            continue;
        }
        for (i, (x, w)) in words.iter().enumerate() {
            if !NUMBER_COLUMNS.contains(&w.as_str()) {
                continue;
            }
            let end = words.get(i + 1).map_or(chars.len(), |(nx, _)| *nx);
            for row in lines.iter().skip(y + 1) {
                let rc: Vec<char> = row.chars().collect();
                let first = rc.iter().find(|c| **c != ' ').copied().unwrap_or(' ');
                if rc.len() < end || first == '└' || first == '─' || rc.get(*x) == Some(&'─') {
                    break;
                }
                let cell: String = rc[*x..end].iter().collect();
                if cell.contains('…') {
                    cut.push(format!("{w} at row {}: {row}", y + 1));
                }
            }
        }
    }
    cut
}

#[test]
fn every_view_at_80x24_and_100x30() {
    for (w, h) in SIZES {
        let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), w, h);
        for tab in app.tabs().to_vec() {
            app.update(Action::GotoTab(tab));
            let t = draw(&app);
            let name = format!("small_{}_{w}x{h}", tab.title().to_lowercase());
            insta::assert_snapshot!(name.clone(), t.backend());
            let lines = screen_text(t.backend().buffer());
            let cut = cut_numbers(&lines);
            assert!(cut.is_empty(), "{name}: numbers cut:\n{}", cut.join("\n"));
        }
    }
}

#[test]
fn the_cut_detector_sees_a_cut_age() {
    let lines = vec![
        "│TYPE      STATUS SINCE MESSAGE │".to_string(),
        "│Failing   True   11d1… x       │".to_string(),
        "└──────────────────────────────┘".to_string(),
    ];
    assert_eq!(cut_numbers(&lines).len(), 1);
}

/// Rows (y) where each text starts, `None` when it is not on screen.
fn rows_of(buf: &Buffer, texts: &[&str]) -> Vec<Option<u16>> {
    texts.iter().map(|t| find(buf, t).map(|(_, y)| y)).collect()
}

#[test]
fn overview_at_80x24_shows_failing_progressing_available_first_and_the_worst_insight() {
    let (mut app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 80, 24);
    // Put a warning first in the assessment's order: the Overview still shows the error.
    let worst = app
        .dash
        .insights
        .iter()
        .position(|i| i.level == Level::Error)
        .expect("the demo has an error insight");
    let error = app.dash.insights.remove(worst);
    app.dash.insights.push(error.clone());
    let t = draw(&app);
    let buf = t.backend().buffer();
    let text = screen_text(buf).join("\n");
    let rows = rows_of(
        buf,
        &[
            "Failing  ",
            "Progressing  ",
            "Available  ",
            "sync (engine) ─",
            "control plane ─",
        ],
    );
    assert!(rows.iter().all(Option::is_some), "{rows:?}\n{text}");
    let y: Vec<u16> = rows.into_iter().flatten().collect();
    assert!(
        y[0] < y[1] && y[1] < y[2],
        "Failing, Progressing, Available in order:\n{text}"
    );
    assert!(
        y[3] < y[4] && y[4] < y[0],
        "sync gauge, then completion, then conditions:\n{text}"
    );
    let prefix: String = error.message.chars().take(30).collect();
    assert!(
        text.contains(&prefix),
        "the worst insight ({prefix}) is shown:\n{text}"
    );
    // The Failing row keeps its error colour in the compact table.
    let (x, fy) = find(buf, "Failing  ").expect("Failing row");
    assert_eq!(buf[(x, fy)].fg, Palette::color().err.fg.unwrap_or_default());
    assert!(text.contains("more below: pools, health"), "{text}");
}

#[test]
fn overview_panels_are_compact_below_30_rows_only() {
    for (h, compact) in [(24, true), (29, true), (30, false), (48, false)] {
        let (app, _rx) = engine_app(mid_update(EngineMode::ActiveApply), 100, h);
        let t = draw(&app);
        let buf = t.backend().buffer();
        let (_, y) = find(buf, " sync (engine) ").expect("sync panel");
        let corner = buf[(0, y)].symbol().to_string();
        assert_eq!(corner == "┌", !compact, "{h} rows: {corner:?}");
    }
}
