//! The write path of `cvo tui` without an engine: the dashboard's confirmed requests
//! ([`Command::Request`], decided by [`crate::cluster::update_request`]) written to the
//! ClusterVersion by [`crate::spec_request::send`] (one JSON merge patch each), and each
//! outcome sent back for the screen. Nothing else is written: any other command is answered
//! with a refusal and no request.

use chrono::Utc;
use kube::Client;
use tokio::sync::mpsc;

use crate::{
    reconcile::api::{Command, CommandOutcome},
    spec_request::send,
};

/// Starts the writer for the ClusterVersion `name`: commands in, outcomes out. It stops when
/// the command sender is dropped.
pub fn spawn(client: Client, name: String) -> (mpsc::Sender<Command>, mpsc::Receiver<CommandOutcome>) {
    let (tx, mut rx) = mpsc::channel::<Command>(4);
    let (out_tx, out_rx) = mpsc::channel(4);
    tokio::spawn(async move {
        while let Some(cmd) = rx.recv().await {
            let text = cmd.to_string();
            let result = match cmd {
                Command::Request(r) => send(client.clone(), &name, &r.patch, false)
                    .await
                    .map(|_| format!("ClusterVersion {name} spec patched"))
                    .map_err(|e| format!("patching ClusterVersion {name}: {e}")),
                other => Err(format!("no engine here: {other} is not available in cvo tui")),
            };
            match &result {
                Ok(m) => tracing::info!(command = %text, "{m}"),
                Err(e) => tracing::warn!(command = %text, "{e}"),
            }
            let outcome = CommandOutcome {
                command: text,
                result,
                at: Utc::now(),
            };
            if out_tx.send(outcome).await.is_err() {
                break;
            }
        }
    });
    (tx, out_rx)
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;
    use crate::{
        openshift::ClusterVersion,
        spec_request::{Request, SpecPatch},
    };
    use kube::Api;

    #[tokio::test]
    async fn one_patch_per_request_and_nothing_else() -> anyhow::Result<()> {
        let sim = crate::sim::demo_cluster::demo_cluster()?;
        let client = Client::new(sim.clone(), "default");
        let (tx, mut outcomes) = spawn(client.clone(), "version".into());
        let before = sim.audit().writes();
        tx.send(Command::Request(Request {
            patch: SpecPatch::channel("fast-4.16"),
            summary: "upgrade channel fast-4.16".into(),
        }))
        .await?;
        let out = outcomes.recv().await.expect("an outcome");
        assert_eq!(out.command, "upgrade channel fast-4.16");
        assert_eq!(out.result, Ok("ClusterVersion version spec patched".to_string()));
        assert_eq!(sim.audit().writes() - before, 1);
        let cv: ClusterVersion = Api::all(client).get("version").await?;
        assert_eq!(cv.spec.channel.as_deref(), Some("fast-4.16"));
        tx.send(Command::ReconcileNow).await?;
        let no_engine = outcomes.recv().await.expect("an outcome");
        assert_eq!(
            no_engine.result,
            Err("no engine here: reconcile now is not available in cvo tui".to_string())
        );
        assert_eq!(sim.audit().writes() - before, 1, "no further write");
        Ok(())
    }
}
