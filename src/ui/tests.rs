//! Dashboard tests: `TestBackend` + insta snapshots, cell-style asserts, field notes.

use std::sync::Arc;

use ratatui::{Terminal, backend::TestBackend, buffer::Buffer};

use super::{app::App, theme::Palette, view};
use crate::cluster::{ClusterState, demo::demo_state};

fn demo() -> Arc<ClusterState> {
    Arc::new(demo_state().expect("demo assets load"))
}

fn app_for(state: Arc<ClusterState>, w: u16, h: u16) -> App {
    App::new(state, None, None, Palette::color(), (w, h))
}

fn draw(app: &App) -> Terminal<TestBackend> {
    let (w, h) = app.size;
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| view::render(app, f)).expect("draw");
    t
}

fn buffer_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut skip = 0;
        for x in 0..area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            out.push_str(sym);
            skip = unicode_width::UnicodeWidthStr::width(sym).saturating_sub(1);
        }
        out.push('\n');
    }
    out
}

#[test]
fn print_demo() {
    let app = app_for(demo(), 120, 40);
    let t = draw(&app);
    println!("{}", buffer_text(t.backend().buffer()));
}

#[test]
fn print_tabs() {
    for (w, h) in [(120u16, 40u16), (80, 24)] {
        let mut app = app_for(demo(), w, h);
        for t in super::app::Tab::ALL {
            app.update(super::app::Action::GotoTab(t));
            println!("{}", buffer_text(draw(&app).backend().buffer()));
        }
    }
}
