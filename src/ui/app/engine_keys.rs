//! The engine keys: `m` (the mode switch, with the CVO Lease shown first), and why an engine
//! key cannot act (no engine attached) instead of silence.

use super::{App, Popup, PopupKind};
use crate::l10n::{tr, trf};
use crate::{
    reconcile::api::{Command, EngineMode},
    ui::{engine, keys, theme::Level},
};
use ratatui::crossterm::event::KeyEvent;

impl App {
    /// `m`: reads the Lease (the engine answers in its next snapshot) and asks to confirm the
    /// switch; `--read-only` refuses the switch to active-apply at once.
    pub(super) fn switch_mode(&mut self) -> bool {
        let Some(e) = &self.engine else { return false };
        let to = engine::other_mode(e.snap.mode);
        if self.read_only && to == EngineMode::ActiveApply {
            self.flash = Some((
                "--read-only: the switch to active-apply is refused (it would write)".into(),
                Level::Error,
            ));
            return true;
        }
        if to == EngineMode::ActiveApply && e.snap.lease.is_some() {
            self.send(Command::CheckLease);
        }
        self.popup = Some(Popup {
            title: trf!("switch-title", "switch to {mode}?", mode = engine::mode_word(to)),
            kind: PopupKind::Confirm(to),
            scroll: 0,
            yaml: None,
        });
        true
    }

    /// A confirmed switch: refused here when the Lease as last read is held by another live
    /// CVO (the engine checks again anyway), else sent.
    pub(super) fn confirm_switch(&mut self, to: EngineMode) {
        let blocked = self
            .engine
            .as_ref()
            .filter(|_| to == EngineMode::ActiveApply)
            .and_then(|e| e.snap.lease.as_ref())
            .and_then(|l| l.blocks_switch());
        match blocked {
            Some(why) => {
                self.flash = Some((
                    trf!("switch-refused", "not switched: {why}", why = why),
                    Level::Error,
                ))
            }
            None => self.send(Command::SetMode(to)),
        }
    }

    /// A key that only acts with an embedded engine, pressed without one: the footer says why.
    /// Returns whether it did.
    pub(super) fn engine_key_without_engine(&mut self, ev: &KeyEvent) -> bool {
        if self.engine.is_some() {
            return false;
        }
        let Some(b) = keys::lookup(self.mode(), true, ev).filter(|b| b.engine_only) else {
            return false;
        };
        let why = if self.state.feed == crate::cluster::FeedStatus::Static {
            tr!("engine-key-snapshot", "a snapshot (--from) has no engine")
        } else {
            tr!(
                "engine-key-no-engine",
                "this dashboard runs without the engine (--no-engine, or it could not start: the log says why)"
            )
        };
        self.flash = Some((format!("{}: {why}", b.label), Level::Warn));
        true
    }
}
