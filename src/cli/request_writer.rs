//! The write path of `cvo tui`, which has no engine: the dashboard's confirmed requests
//! ([`Command::RequestPatch`], decided by [`crate::cluster::update_request`]) written to the
//! ClusterVersion as one JSON merge patch each, and each outcome sent back for the screen.
//! Nothing else is written: any other command is answered with a refusal and no request.

use chrono::Utc;
use kube::{
    Api, Client,
    api::{Patch, PatchParams},
};
use tokio::sync::mpsc;

use crate::{
    openshift::ClusterVersion,
    reconcile::api::{Command, CommandOutcome},
};

/// Whether `patch` touches only `spec.desiredUpdate` and `spec.channel` (what a request may
/// write).
fn in_scope(patch: &serde_json::Value) -> bool {
    patch
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get("spec"))
        .and_then(serde_json::Value::as_object)
        .is_some_and(|s| !s.is_empty() && s.keys().all(|k| k == "desiredUpdate" || k == "channel"))
}

/// Starts the writer for the ClusterVersion `name`: commands in, outcomes out. It stops when
/// the command sender is dropped.
pub fn spawn(client: Client, name: String) -> (mpsc::Sender<Command>, mpsc::Receiver<CommandOutcome>) {
    let (tx, mut rx) = mpsc::channel::<Command>(4);
    let (out_tx, out_rx) = mpsc::channel(4);
    tokio::spawn(async move {
        let api: Api<ClusterVersion> = Api::all(client);
        while let Some(cmd) = rx.recv().await {
            let text = cmd.to_string();
            let result = match cmd {
                Command::RequestPatch { patch, .. } if in_scope(&patch) => api
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map(|_| format!("ClusterVersion {name} spec patched"))
                    .map_err(|e| format!("patching ClusterVersion {name}: {e}")),
                Command::RequestPatch { .. } => {
                    Err("refused: a request may patch only spec.desiredUpdate and spec.channel".into())
                }
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

    #[tokio::test]
    async fn one_patch_per_request_and_none_out_of_scope() -> anyhow::Result<()> {
        let sim = crate::sim::demo_cluster::demo_cluster()?;
        let client = Client::new(sim.clone(), "default");
        let (tx, mut outcomes) = spawn(client.clone(), "version".into());
        let before = sim.audit().writes();
        tx.send(Command::RequestPatch {
            patch: serde_json::json!({"spec": {"channel": "fast-4.16"}}),
            summary: "upgrade channel fast-4.16".into(),
        })
        .await?;
        let out = outcomes.recv().await.expect("an outcome");
        assert_eq!(out.command, "upgrade channel fast-4.16");
        assert_eq!(out.result, Ok("ClusterVersion version spec patched".to_string()));
        assert_eq!(sim.audit().writes() - before, 1);
        let cv: ClusterVersion = Api::all(client).get("version").await?;
        assert_eq!(cv.spec.channel.as_deref(), Some("fast-4.16"));
        tx.send(Command::RequestPatch {
            patch: serde_json::json!({"spec": {"upstream": "https://evil.example.com"}}),
            summary: "x".into(),
        })
        .await?;
        tx.send(Command::ReconcileNow).await?;
        let refused = outcomes.recv().await.expect("an outcome");
        assert!(
            refused
                .result
                .is_err_and(|e| e.starts_with("refused: a request may patch only"))
        );
        let no_engine = outcomes.recv().await.expect("an outcome");
        assert_eq!(
            no_engine.result,
            Err("no engine here: reconcile now is not available in cvo tui".to_string())
        );
        assert_eq!(sim.audit().writes() - before, 1, "no further write");
        Ok(())
    }
}
