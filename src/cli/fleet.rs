//! `cvo fleet`: every cluster of a kubeconfig at once (cvo only). One-shot (`-o table|json`,
//! or stdout not a terminal): the table once every cluster has answered or `--timeout` has
//! passed, a silent cluster being a row marked unreachable; `--watch` prints it again at each
//! change. In a terminal without `-o`: the live fleet view (`ui::fleet`), where Enter opens
//! the cluster's dashboard over the member's own client and Esc or `q` comes back.
//!
//! Per cluster: one client and three watches, ClusterVersion, ClusterOperators and the CVO
//! Lease ([`crate::cluster::fleet`]); the rows are [`crate::assess::fleet::row`]s.

use std::{process::ExitCode, time::Duration};

use chrono::Utc;
use serde::Serialize;

use super::{
    UsageError,
    args::{FleetArgs, FleetOutput, FleetSort},
    runtime,
};
use crate::{
    assess::fleet::{FleetRow, RowState, SortKey, compare, row},
    cluster::{
        FeedError,
        fleet::{ContextPick, FleetState, Member, Reach, pick_contexts, read_kubeconfig, watch_fleet},
    },
};

/// Default of `--timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The JSON document of `cvo fleet -o json` (one per line with `--watch`).
#[derive(Debug, Serialize)]
pub struct FleetTable {
    /// One row per cluster, in `--sort` order.
    pub clusters: Vec<FleetRow>,
}

/// The sort key of a `--sort` value.
pub fn sort_key(s: FleetSort) -> SortKey {
    match s {
        FleetSort::Name => SortKey::Name,
        FleetSort::Version => SortKey::Version,
        FleetSort::State => SortKey::State,
    }
}

/// The rows of `f` at the wall clock, sorted by `key`; members that have not answered are
/// marked unreachable with `silent` as their error when given (the one-shot table at its
/// timeout).
pub fn rows(f: &FleetState, key: SortKey, silent: Option<&str>) -> Vec<FleetRow> {
    let now = Utc::now();
    let mut rows: Vec<FleetRow> = f
        .members
        .iter()
        .map(|m| match (silent, &m.reach) {
            (Some(why), Reach::Connecting) => {
                let mut m: Member = (**m).clone();
                m.reach = Reach::Unreachable(FeedError {
                    message: why.to_owned(),
                    since: now,
                });
                row(&m, now)
            }
            _ => row(m, now),
        })
        .collect();
    rows.sort_by(|a, b| compare(a, b, key));
    rows
}

/// The table's STATE word of a row (the JSON's `state` value).
fn state_word(s: RowState) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The text table: one line per cluster, `-` for an empty cell, the error or the Failing
/// reason last.
pub fn render_table(rows: &[FleetRow]) -> String {
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
    let mut text = String::from(
        "CONTEXT\tREACHABLE\tSTATE\tVERSION\tCHANNEL\tDESIRED\tPROGRESS\tFAILING\tPROGRESSING\tUPDATES\tCONDITIONAL\tRISKS\tDEGRADED\tUNAVAILABLE\tLEASE\tMESSAGE\n",
    );
    for r in rows {
        let progress = r
            .progress_percent
            .map_or_else(|| "-".to_owned(), |p| format!("{p:.0}%"));
        let lease = match (&r.lease_holder, r.lease_alive) {
            (Some(h), true) => h.clone(),
            (Some(h), false) => format!("{h}(expired)"),
            (None, _) => "-".to_owned(),
        };
        let message = r
            .error
            .clone()
            .or_else(|| r.failing.as_ref().map(|f| format!("{}: {}", f.reason, f.message)))
            .map_or_else(String::new, |m| flat(&m));
        let yn = |b: bool| if b { "True" } else { "False" };
        text.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            r.context,
            yn(r.reachable),
            state_word(r.state),
            dash(&r.version),
            dash(&r.channel),
            dash(&r.desired),
            progress,
            yn(r.failing.is_some()),
            yn(r.progressing),
            r.updates_recommended,
            r.updates_conditional,
            r.conditional_risks,
            r.operators_degraded,
            r.operators_unavailable,
            lease,
            message,
        ));
    }
    super::tabwriter::format(&text, 6, 3)
}

fn render(rows: Vec<FleetRow>, output: FleetOutput, watch: bool) -> anyhow::Result<String> {
    Ok(match output {
        FleetOutput::Table => render_table(&rows),
        FleetOutput::Json if watch => serde_json::to_string(&FleetTable { clusters: rows })? + "\n",
        FleetOutput::Json => serde_json::to_string_pretty(&FleetTable { clusters: rows })? + "\n",
    })
}

/// Whether stdin and stdout are a terminal (then `cvo fleet` without `-o` is the live view).
pub fn on_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::io::stdin().is_terminal()
}

/// `cvo fleet`.
///
/// # Errors
/// [`UsageError`] for `--context`, `--server` or `--token` (a fleet is many contexts), a bad
/// `--timeout`, an unknown `--contexts` name or a `--contexts-regex` that does not parse or
/// matches nothing; a kubeconfig that cannot be read or has no context (exit 1); terminal
/// failures of the view. Unreachable clusters are rows, never errors.
pub fn run(a: FleetArgs) -> anyhow::Result<ExitCode> {
    for (given, flag) in [
        (a.cluster.context.is_some(), "--context"),
        (a.cluster.server.is_some(), "--server"),
        (a.cluster.token.is_some(), "--token"),
    ] {
        if given {
            return Err(UsageError(format!(
                "{flag}: `cvo fleet` reaches every context of the kubeconfig with its own server and credentials; choose contexts with --contexts or --contexts-regex"
            ))
            .into());
        }
    }
    let timeout = super::run::timeout_flag(a.timeout)?.unwrap_or(DEFAULT_TIMEOUT);
    let overrides = a.cluster.overrides()?;
    let pick = match (&a.contexts_regex, a.contexts.is_empty()) {
        (Some(re), _) => ContextPick::Regex(
            regex::Regex::new(re).map_err(|e| UsageError(format!("--contexts-regex {re:?}: {e}")))?,
        ),
        (None, false) => ContextPick::Names(a.contexts.clone()),
        (None, true) => ContextPick::All,
    };
    let (kc, origin) = read_kubeconfig(a.cluster.kubeconfig.as_deref())?;
    if kc.contexts.is_empty() {
        anyhow::bail!("kubeconfig {origin}: no contexts");
    }
    let contexts = pick_contexts(&kc, &pick).map_err(UsageError)?;
    drop(kc);
    let key = sort_key(a.sort);
    let interactive = cfg!(feature = "tui") && a.output.is_none() && on_terminal();
    let rt = runtime()?;
    let result = rt.block_on(async {
        let fleet = watch_fleet(a.cluster.kubeconfig.clone(), &contexts, &overrides);
        if interactive {
            #[cfg(feature = "tui")]
            return view(&fleet, key, a.read_only).await;
        }
        one_shot(
            fleet,
            key,
            a.output.unwrap_or(FleetOutput::Table),
            a.watch,
            timeout,
        )
        .await
    });
    rt.shutdown_timeout(Duration::from_secs(1));
    result?;
    Ok(ExitCode::SUCCESS)
}

/// The table once every member answered or at `timeout`; with `watch`, again at each change.
async fn one_shot(
    fleet: crate::cluster::fleet::Fleet,
    key: SortKey,
    output: FleetOutput,
    watch: bool,
    timeout: Duration,
) -> anyhow::Result<()> {
    let mut rx = fleet.rx.clone();
    let answered = tokio::time::timeout(timeout, rx.wait_for(|f| f.all_answered()))
        .await
        .map(|r| r.is_ok())
        .unwrap_or(false);
    let silent = format!("no answer within {}s", timeout.as_secs_f64());
    let state = rx.borrow_and_update().clone();
    let silent = (!answered).then_some(silent.as_str());
    let first = rows(&state, key, silent);
    super::out::print(&render(first.clone(), output, watch)?)?;
    if !watch {
        return Ok(());
    }
    let mut last = first;
    // Each member's row, recomputed only when the member changed (a new `Arc`).
    let mut cache: Vec<(std::sync::Arc<Member>, FleetRow)> = Vec::new();
    let stop = crate::signals::stop_requested();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return Ok(()),
            r = rx.changed() => if r.is_err() {
                return Ok(());
            },
        }
        let state = rx.borrow_and_update().clone();
        let now = Utc::now();
        if cache.len() != state.members.len() {
            cache.clear();
        }
        for (i, m) in state.members.iter().enumerate() {
            match cache.get_mut(i) {
                Some((old, _)) if std::sync::Arc::ptr_eq(old, m) => {}
                Some(slot) => *slot = (m.clone(), row(m, now)),
                None => cache.push((m.clone(), row(m, now))),
            }
        }
        let mut now_rows: Vec<FleetRow> = cache.iter().map(|(_, r)| r.clone()).collect();
        now_rows.sort_by(|a, b| compare(a, b, key));
        if now_rows != last {
            super::out::print(&render(now_rows.clone(), output, watch)?)?;
            last = now_rows;
        }
    }
}

/// The live view; Enter opens a member's dashboard and comes back to the view.
#[cfg(feature = "tui")]
async fn view(fleet: &crate::cluster::fleet::Fleet, key: SortKey, read_only: bool) -> anyhow::Result<()> {
    use crate::ui::fleet::{Exit, FleetApp, run};
    let mut app = FleetApp::from_env();
    app.sort = key;
    loop {
        match run(&mut app, fleet.rx.clone()).await? {
            Exit::Quit => return Ok(()),
            Exit::Open(i) => {
                let Some((client, context)) = fleet.connection(i) else {
                    let state = fleet.rx.borrow().clone();
                    let (ctx, why) = state.members.get(i).map_or_else(
                        || (String::new(), String::new()),
                        |m| {
                            let why = match &m.reach {
                                Reach::Unreachable(e) | Reach::Denied(e) => e.message.clone(),
                                _ => "not connected yet".to_owned(),
                            };
                            (m.context.clone(), why)
                        },
                    );
                    app.notice = Some(crate::ui::fleet::words::cannot_open(&ctx, &why));
                    continue;
                };
                dashboard(client, context, read_only).await?;
            }
        }
    }
}

/// The dashboard of one member, over its client with a registry of its own (its watches stop
/// when it closes), without the engine; Esc or `q` comes back.
#[cfg(feature = "tui")]
async fn dashboard(client: kube::Client, context: String, read_only: bool) -> anyhow::Result<()> {
    let informers = crate::informers::Informers::new(client.clone());
    let feed = crate::cluster::live::watch_state_from(&informers, context);
    let requests = (!read_only).then(|| super::request_writer::spawn(client, "version".into()));
    crate::ui::run(crate::ui::UiOptions {
        feed,
        alerts: None,
        now: None,
        engine: None,
        requests,
        read_only,
        clock: crate::clock::Clock::wall(),
        release_source: None,
        banner: None,
        back_leaves: true,
    })
    .await
}

/// `s` on one line (runs of whitespace, newlines included, become one space).
fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
