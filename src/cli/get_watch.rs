//! `cvo get KIND [NAME] -w`: the objects as `cvo get` prints them, then one line (or document)
//! per change, as `kubectl get -w` does: a table's header once and then the row of each object
//! added, changed or deleted (a deleted object's last row); `-o json|yaml|name|jsonpath|
//! custom-columns` print the changed object alone. The watch is kube-runtime's watcher (relists
//! after an expired resourceVersion, backs off after errors); a relist prints only what changed.
//!
//! It ends with Ctrl-C, when standard output is closed (`cvo get co -w | head`, exit 0), after
//! `--request-timeout` (exit 0, as kubectl's watch ends), or when the first list fails (exit 1;
//! later errors are reported on stderr and the watch goes on).

use std::{collections::BTreeMap, fmt::Debug, process::ExitCode};

use chrono::Utc;
use futures::TryStreamExt as _;
use k8s_openapi::api::core::v1::Node;
use kube::{
    Api, Resource, ResourceExt as _,
    runtime::{WatchStreamExt as _, watcher},
};
use serde::de::DeserializeOwned;

use super::{
    args::GetArgs,
    get::{GetOutput, Kind, render},
    out,
};
use crate::{
    cluster::ClusterState,
    openshift::{ClusterOperator, ClusterVersion, MachineConfigPool},
};

/// `cvo get -w`.
///
/// # Errors
/// A usage error of the connection flags; the cluster cannot be reached or the first list
/// fails; a closed standard output ([`out::StdoutClosed`], which `main` ends quietly).
pub fn watch(a: &GetArgs, kind: Kind) -> anyhow::Result<ExitCode> {
    super::runtime()?.block_on(async {
        let conn = a.source.cluster.connect().await?;
        let mut cfg = watcher::Config::default();
        if let Some(sel) = &a.selector {
            cfg = cfg.labels_from(sel);
        }
        if let Some(n) = &a.name {
            cfg = cfg.fields(&format!("metadata.name={n}"));
        }
        let printer = Printer {
            kind,
            output: a.output.clone(),
            first: true,
        };
        let client = conn.client.clone();
        let run = async move {
            match kind {
                Kind::ClusterVersion => {
                    watch_kind::<ClusterVersion>(client, cfg, printer, |s, v| {
                        s.cluster_version = v.into_iter().next()
                    })
                    .await
                }
                Kind::ClusterOperator => {
                    watch_kind::<ClusterOperator>(client, cfg, printer, |s, v| s.cluster_operators = v).await
                }
                Kind::MachineConfigPool => {
                    watch_kind::<MachineConfigPool>(client, cfg, printer, |s, v| s.machine_config_pools = v)
                        .await
                }
                Kind::Node => watch_kind::<Node>(client, cfg, printer, |s, v| s.nodes = v).await,
            }
        };
        let limit = a.source.cluster.request_timeout.filter(|d| !d.is_zero());
        let until_closed = async {
            tokio::select! {
                r = run => r,
                () = out::closed() => Err(out::StdoutClosed.into()),
            }
        };
        match limit {
            Some(d) => match tokio::time::timeout(d, until_closed).await {
                Ok(r) => r,
                Err(_) => Ok(ExitCode::SUCCESS),
            },
            None => until_closed.await,
        }
        .map_err(|e| {
            if out::is_stdout_closed(&e) {
                e
            } else {
                e.context(conn.describe())
            }
        })
    })
}

/// What is printed and how.
struct Printer {
    kind: Kind,
    output: Option<GetOutput>,
    /// Nothing printed yet: the first listing prints everything (with the header).
    first: bool,
}

impl Printer {
    /// Prints the state after the first listing: what `cvo get` prints.
    fn all(&mut self, state: &ClusterState) -> anyhow::Result<()> {
        self.first = false;
        let empty = match self.kind {
            Kind::ClusterVersion => state.cluster_version.is_none(),
            Kind::ClusterOperator => state.cluster_operators.is_empty(),
            Kind::MachineConfigPool => state.machine_config_pools.is_empty(),
            Kind::Node => state.nodes.is_empty(),
        };
        if empty {
            eprintln!("{}", crate::l10n::tr!("get-no-resources", "No resources found"));
            return Ok(());
        }
        out::print(&render(state, self.kind, None, self.output.as_ref(), Utc::now())?)
    }

    /// Prints the object `name` of `state` (changed, added, or about to be deleted).
    fn one(&mut self, state: &ClusterState, name: &str) -> anyhow::Result<()> {
        if self.first {
            return Ok(());
        }
        let now = Utc::now();
        let text = match &self.output {
            None | Some(GetOutput::Wide) => {
                // The object's row of the whole table, so its columns line up with the header.
                let table = render(state, self.kind, None, self.output.as_ref(), now)?;
                table
                    .lines()
                    .skip(1)
                    .find(|l| l.split_whitespace().next() == Some(name))
                    .map(|l| format!("{l}\n"))
                    .unwrap_or_default()
            }
            Some(GetOutput::CustomColumns(_)) => {
                let one = render(state, self.kind, Some(name), self.output.as_ref(), now)?;
                one.lines().skip(1).map(|l| format!("{l}\n")).collect()
            }
            Some(GetOutput::Yaml) => format!(
                "---\n{}",
                render(state, self.kind, Some(name), self.output.as_ref(), now)?
            ),
            Some(_) => render(state, self.kind, Some(name), self.output.as_ref(), now)?,
        };
        out::print(&text)
    }
}

/// Watches the objects of `K` (all of them; `cfg` selects), keeping them in a [`ClusterState`]
/// through `put`, and prints as [`Printer`] says. Returns only on an error (the first list
/// failing, or a closed standard output).
async fn watch_kind<K>(
    client: kube::Client,
    cfg: watcher::Config,
    mut printer: Printer,
    put: impl Fn(&mut ClusterState, Vec<K>),
) -> anyhow::Result<ExitCode>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let api: Api<K> = Api::all(client);
    let stream = watcher(api, cfg).default_backoff();
    futures::pin_mut!(stream);
    let mut objects: BTreeMap<String, K> = BTreeMap::new();
    let mut listing: Option<BTreeMap<String, K>> = None;
    let state_of = |objects: &BTreeMap<String, K>| {
        let mut s = ClusterState::default();
        put(&mut s, objects.values().cloned().collect());
        s.sort();
        s
    };
    loop {
        let event = match stream.try_next().await {
            Ok(Some(e)) => e,
            Ok(None) => return Ok(ExitCode::SUCCESS),
            Err(e) if printer.first => return Err(anyhow::anyhow!("watch: {e}")),
            Err(e) => {
                eprintln!("cvo: watch: {e} (retrying)");
                continue;
            }
        };
        match event {
            watcher::Event::Init => listing = Some(BTreeMap::new()),
            watcher::Event::InitApply(o) => {
                listing.get_or_insert_with(BTreeMap::new).insert(o.name_any(), o);
            }
            watcher::Event::InitDone => {
                let new = listing.take().unwrap_or_default();
                if printer.first {
                    objects = new;
                    printer.all(&state_of(&objects))?;
                    continue;
                }
                // A relist: print what changed while the watch was down.
                let gone: Vec<String> = objects
                    .keys()
                    .filter(|k| !new.contains_key(*k))
                    .cloned()
                    .collect();
                for name in gone {
                    printer.one(&state_of(&objects), &name)?;
                }
                let changed: Vec<String> = new
                    .iter()
                    .filter(|(k, o)| {
                        objects
                            .get(*k)
                            .is_none_or(|old| old.resource_version() != o.resource_version())
                    })
                    .map(|(k, _)| k.clone())
                    .collect();
                objects = new;
                for name in changed {
                    printer.one(&state_of(&objects), &name)?;
                }
            }
            watcher::Event::Apply(o) => {
                let name = o.name_any();
                objects.insert(name.clone(), o);
                printer.one(&state_of(&objects), &name)?;
            }
            watcher::Event::Delete(o) => {
                let name = o.name_any();
                objects.insert(name.clone(), o);
                printer.one(&state_of(&objects), &name)?;
                objects.remove(&name);
            }
        }
    }
}
