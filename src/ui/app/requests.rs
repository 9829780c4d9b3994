//! The administrator's requests from the Updates view: which popup each key opens (update
//! target, channel list, clear, accept risks), whether this dashboard may write at all, and
//! what a confirmed request sends (one [`Command::Request`]); what the popups read
//! besides the popup (the cluster a confirmation acts on, why it cannot be confirmed).

use super::{App, Popup, PopupKind, Tab};
use crate::l10n::{tr, trf};
use crate::{
    reconcile::api::Command,
    ui::{
        model::updates::{RiskRow, UpdateKind, UpdateRow},
        request::{RequestView, UiRequest},
        theme::Level,
    },
};

impl App {
    /// Whether this dashboard may write a request: `Err` says why not (shown in the popup).
    pub fn writer(&self) -> Result<(), String> {
        if self.read_only {
            return Err(tr!(
                "requests-read-only",
                "--read-only: this dashboard refuses every write; nothing is sent."
            )
            .into());
        }
        if self.commands.is_none() {
            return Err(if self.state.feed == crate::cluster::FeedStatus::Static {
                tr!(
                    "requests-snapshot",
                    "a snapshot (--from) cannot be written to; nothing is sent."
                )
                .into()
            } else {
                tr!(
                    "requests-no-writer",
                    "this dashboard has no writer for the cluster; use `cvo upgrade`."
                )
                .into()
            });
        }
        Ok(())
    }

    /// Whether the cluster enables `ClusterUpdateAcceptRisks` for its current version, as the
    /// attached engine read it from the FeatureGate `cluster` (`None`: no engine, or not read).
    pub fn accept_risks_gate(&self) -> Option<bool> {
        self.engine.as_ref().and_then(|e| e.snap.accept_risks_gate)
    }

    /// Why `a` (accept risks) is not offered, or `None` when it is.
    pub fn accept_risks_unavailable(&self) -> Option<String> {
        let gate = crate::openshift::feature_gate::CLUSTER_UPDATE_ACCEPT_RISKS;
        match self.accept_risks_gate() {
            Some(true) => None,
            Some(false) => Some(trf!(
                "requests-gate-off",
                "accepting risks needs the feature gate {gate}, which the FeatureGate \"cluster\" does not enable for {current}; Enter takes a conditional update with its risks waived",
                gate = gate,
                current = self.dash.updates.current
            )),
            None => Some(trf!(
                "requests-gate-unknown",
                "accepting risks needs the feature gate {gate}, and no engine has read the FeatureGate \"cluster\"; Enter takes a conditional update with its risks waived",
                gate = gate
            )),
        }
    }

    /// Opens the confirm popup for `req`, decided against the ClusterVersion as read.
    pub(super) fn open_request(&mut self, req: UiRequest, risks: Vec<RiskRow>) {
        let title = req.title();
        let gate = self.accept_risks_gate() == Some(true);
        let v = RequestView::build(
            self.state.cluster_version.as_ref(),
            req,
            risks,
            self.writer(),
            gate,
        );
        self.popup = Some(Popup {
            title,
            kind: PopupKind::Request(Box::new(v)),
            scroll: 0,
            yaml: None,
        });
    }

    /// The selected row of the Updates view.
    fn selected_update(&self) -> Option<&UpdateRow> {
        if self.tab != Tab::Updates {
            return None;
        }
        self.selected_row().and_then(|i| self.dash.updates.rows.get(i))
    }

    pub(super) fn request_selected(&mut self) -> bool {
        let Some(row) = self.selected_update().cloned() else {
            self.flash = Some((
                tr!("requests-none-selected", "no update selected: nothing to request").into(),
                Level::Warn,
            ));
            return true;
        };
        // A conditional update that is Recommended (its risks do not apply, or all are
        // accepted) is requested like a recommended one: nothing to waive.
        let conditional = row.kind == UpdateKind::Conditional
            && !matches!(
                row.recommended,
                Some((crate::openshift::ConditionStatus::True, _, _))
            );
        let risks = if conditional {
            row.risks.clone()
        } else {
            Vec::new()
        };
        self.open_request(
            UiRequest::To {
                version: row.release.version.clone(),
                image: row.release.image.clone(),
                conditional,
            },
            risks,
        );
        true
    }

    pub(super) fn accept_risks(&mut self) -> bool {
        let Some(row) = self.selected_update().cloned() else {
            self.flash = Some((
                tr!(
                    "requests-select-conditional",
                    "select a conditional update on the Updates view ([6]) first"
                )
                .into(),
                Level::Warn,
            ));
            return true;
        };
        if row.risks.is_empty() {
            self.flash = Some((
                format!("{} has no risks to accept", row.release.version),
                Level::Warn,
            ));
            return true;
        }
        if let Some(why) = self.accept_risks_unavailable() {
            self.flash = Some((why, Level::Warn));
            return true;
        }
        let mut names = self.dash.updates.accepted.clone();
        for r in &row.risks {
            if !names.contains(&r.name) {
                names.push(r.name.clone());
            }
        }
        self.open_request(UiRequest::AcceptRisks(names), row.risks);
        true
    }

    pub(super) fn open_channels(&mut self) -> bool {
        let list = self.dash.updates.channels.clone();
        if list.is_empty() {
            self.flash = Some((
                tr!(
                    "requests-no-channels",
                    "the current release lists no channels (status.desired.channels)"
                )
                .into(),
                Level::Warn,
            ));
            return true;
        }
        let current = list
            .iter()
            .position(|c| *c == self.dash.updates.channel)
            .unwrap_or(0);
        self.popup = Some(Popup {
            title: tr!("requests-channel-title", "change the channel").into(),
            kind: PopupKind::Channels(list),
            scroll: current,
            yaml: None,
        });
        true
    }

    pub(super) fn choose_channel(&mut self) -> bool {
        let Some(Popup {
            kind: PopupKind::Channels(list),
            scroll,
            ..
        }) = &self.popup
        else {
            return false;
        };
        let Some(c) = list.get(*scroll).cloned() else {
            return false;
        };
        self.open_request(UiRequest::Channel(c), Vec::new());
        true
    }

    /// Sends a confirmed request, or says why nothing was sent.
    pub(super) fn send_request(&mut self, v: RequestView) {
        match (v.refusal, v.patch) {
            (Some(why), _) => {
                self.flash = Some((
                    trf!("requests-refused", "refused, nothing written: {why}", why = why),
                    Level::Error,
                ))
            }
            (None, Some(patch)) => match crate::spec_request::SpecPatch::new(patch) {
                Ok(patch) => self.send(Command::Request(crate::spec_request::Request {
                    patch,
                    summary: v.request.command_line(),
                })),
                Err(e) => {
                    self.flash = Some((
                        trf!("requests-failed", "nothing written: {e}", e = e.to_string()),
                        Level::Error,
                    ))
                }
            },
            (None, None) => {
                self.flash = Some((tr!("requests-nothing", "nothing to write").into(), Level::Info))
            }
        }
    }

    /// What the popup content reads besides the popup: the engine, the clock, the colours and
    /// the cluster a confirmation acts on ([`Self::target_words`]).
    pub(crate) fn popup_inputs(&self) -> crate::ui::popup::PopupInputs<'_> {
        crate::ui::popup::PopupInputs {
            attached: self.engine.as_ref(),
            clock: &self.clock,
            palette: &self.palette,
            target: self.target_words(),
        }
    }

    /// The cluster this dashboard's requests and mode switches act on, as the confirm popups
    /// name it: the source (`context admin@prod`) and the ClusterVersion's `spec.clusterID`
    /// when it has one, e.g. `context admin@prod · cluster ID 5d2b7f30-…`.
    pub fn target_words(&self) -> String {
        let id = self
            .state
            .cluster_version
            .as_ref()
            .and_then(|cv| cv.spec.cluster_id.as_deref())
            .filter(|id| !id.is_empty());
        match id {
            Some(id) => format!("{} · cluster ID {id}", self.dash.source),
            None => self.dash.source.clone(),
        }
    }

    /// Why the open confirm popup cannot be confirmed ([`crate::ui::popup::PopupInputs::refusal`]).
    pub fn confirm_refusal(&self) -> Option<String> {
        self.popup.as_ref().and_then(|p| self.popup_inputs().refusal(p))
    }
}
