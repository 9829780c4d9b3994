//! Port of pkg/payload/task_graph.go and the `Task` naming of pkg/payload/task.go: tasks, the
//! task graph (split on Jobs, parallelised by run level and component), node ordering for
//! reconciling, and `run_graph`.
//!
//! Node ids and `in`/`out` edges are numbered exactly as upstream numbers them: the graph starts
//! as one node 0 holding every task; `split` and `parallelize` append new nodes at the end.

use std::{fmt, sync::Arc};

use futures::{FutureExt, StreamExt, future::BoxFuture, stream::FuturesUnordered};
use rand::{Rng, SeedableRng, seq::SliceRandom};
use regex::Regex;
use tokio_util::sync::CancellationToken;

use super::manifest::Manifest;

/// One manifest to apply, with its 1-based position in the payload (upstream `Task`).
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// 1-based index among the payload's tasks.
    pub index: usize,
    /// Number of tasks in the payload.
    pub total: usize,
    /// The manifest.
    pub manifest: Arc<Manifest>,
}

impl Task {
    /// Tasks for `manifests`, numbered 1..=n of n.
    pub fn from_manifests(manifests: &[Arc<Manifest>]) -> Vec<Task> {
        let total = manifests.len();
        manifests
            .iter()
            .enumerate()
            .map(|(i, m)| Task {
                index: i + 1,
                total,
                manifest: m.clone(),
            })
            .collect()
    }
}

impl fmt::Display for Task {
    /// `{lowercase kind} "{ns/}{name}" ({index} of {total})`; the name falls back to the file
    /// name (task.go `Task.String`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.manifest;
        let name = if m.id.name.is_empty() {
            m.file.as_str()
        } else {
            m.id.name.as_str()
        };
        let ns = if m.id.namespace.is_empty() {
            String::new()
        } else {
            format!("{}/", m.id.namespace)
        };
        write!(
            f,
            "{} \"{ns}{name}\" ({} of {})",
            m.id.kind.to_lowercase(),
            self.index,
            self.total
        )
    }
}

/// A node of the task graph: tasks run in order by one worker once every `in` node succeeded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskNode {
    /// Prerequisite node ids.
    pub in_: Vec<usize>,
    /// Tasks, run serially.
    pub tasks: Vec<Task>,
    /// Dependent node ids.
    pub out: Vec<usize>,
}

impl TaskNode {
    fn replace_in(&mut self, index: usize, with: usize) {
        for x in &mut self.in_ {
            if *x == index {
                *x = with;
            }
        }
    }
    fn replace_out(&mut self, index: usize, with: usize) {
        for x in &mut self.out {
            if *x == index {
                *x = with;
            }
        }
    }
    fn append_out(&mut self, items: &[usize]) {
        for i in items {
            if !self.out.contains(i) {
                self.out.push(*i);
            }
        }
    }
}

/// The task graph (upstream `TaskGraph`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskGraph {
    /// Nodes by id.
    pub nodes: Vec<TaskNode>,
}

/// Splits a task list into buckets run one after the other, each holding nodes run in parallel
/// (upstream `BreakFunc`). `None` means "leave the node as it is".
pub type Buckets = Option<Vec<Vec<TaskNode>>>;

/// How the payload is being applied (pkg/payload `State`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PayloadState {
    /// Moving to a new release: strict order, 16 workers.
    Updating,
    /// At level: flattened and shuffled order, 2 workers.
    Reconciling,
    /// First install: flattened order, one worker per node.
    Initializing,
}

impl fmt::Display for PayloadState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PayloadState::Updating => "Updating",
            PayloadState::Reconciling => "Reconciling",
            PayloadState::Initializing => "Initializing",
        })
    }
}

/// Workers while updating (cvo.go `Run`).
pub(crate) const UPDATING_WORKERS: usize = 16;
/// Workers while reconciling.
pub(crate) const RECONCILING_WORKERS: usize = 2;

static RUN_LEVEL_RE: std::sync::LazyLock<Option<Regex>> =
    std::sync::LazyLock::new(|| Regex::new(r"^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_").ok());

/// Run level and component of a file name `0000_NN_component_rest`, e.g.
/// `0000_50_cluster-ingress-operator_02.yaml` → `(50, "cluster-ingress-operator")`.
pub fn run_level_and_component(file: &str) -> Option<(u32, String)> {
    let re = RUN_LEVEL_RE.as_ref()?;
    let c = re.captures(file)?;
    let level = c.get(1)?.as_str().parse().ok()?;
    Some((level, c.get(2)?.as_str().to_string()))
}

fn matches(tasks: &[Task]) -> Vec<Option<(String, String)>> {
    let re = RUN_LEVEL_RE.as_ref();
    tasks
        .iter()
        .map(|t| {
            let c = re?.captures(&t.manifest.file)?;
            Some((c.get(1)?.as_str().to_string(), c.get(2)?.as_str().to_string()))
        })
        .collect()
}

fn node(tasks: &[Task]) -> TaskNode {
    TaskNode {
        tasks: tasks.to_vec(),
        ..TaskNode::default()
    }
}

/// Upstream `ByNumberAndComponent` (Updating): consecutive tasks of one run level with several
/// components become a bucket of parallel nodes (one per component chunk); everything else
/// (single-component levels, unparseable names) coalesces into serial nodes, each its own
/// bucket. Fewer than two tasks ⇒ `None`.
pub fn by_number_and_component(tasks: &[Task]) -> Buckets {
    split_by_number_and_component(tasks, false)
}

/// Upstream `FlattenByNumberAndComponent` (Initializing / Reconciling): one bucket; every
/// (level, component) chunk of a multi-component level is a node, and the runs in between
/// coalesce into one node each. Fewer than two tasks ⇒ `None`.
pub fn flatten_by_number_and_component(tasks: &[Task]) -> Buckets {
    split_by_number_and_component(tasks, true)
}

fn split_by_number_and_component(tasks: &[Task], flatten: bool) -> Buckets {
    let count = tasks.len();
    if count <= 1 {
        return None;
    }
    let ms = matches(tasks);
    let mut buckets: Vec<Vec<TaskNode>> = Vec::new();
    let mut flat: Vec<TaskNode> = Vec::new();
    // Index of the coalescing serial node: (bucket index or flat index).
    let mut last: Option<usize> = None;
    let mut i = 0;
    while i < count {
        let mut base = ms[i].clone();
        let mut j = i + 1;
        let mut groups: Vec<TaskNode> = Vec::new();
        while j < count {
            let next = &ms[j];
            let (Some(b), Some(n)) = (&base, next) else { break };
            if b.0 != n.0 {
                break;
            }
            if b.1 != n.1 {
                groups.push(node(&tasks[i..j]));
                i = j;
            }
            base = next.clone();
            j += 1;
        }
        if !groups.is_empty() {
            groups.push(node(&tasks[i..j]));
            i = j;
            last = None;
            if flatten {
                flat.extend(groups);
            } else {
                buckets.push(groups);
            }
            continue;
        }
        match last {
            None => {
                if flatten {
                    flat.push(node(&tasks[i..j]));
                    last = Some(flat.len() - 1);
                } else {
                    buckets.push(vec![node(&tasks[i..j])]);
                    last = Some(buckets.len() - 1);
                }
            }
            Some(k) => {
                let target = if flatten {
                    flat.get_mut(k)
                } else {
                    buckets.get_mut(k).and_then(|b| b.first_mut())
                };
                if let Some(n) = target {
                    n.tasks.extend_from_slice(&tasks[i..j]);
                }
            }
        }
        i = j;
    }
    if flatten { Some(vec![flat]) } else { Some(buckets) }
}

/// Upstream `ShiftOrder`: rotates each bucket left by `step % len` (len < stride) or by
/// `floor(step·len/stride) % len`.
pub fn shift_order(buckets: Buckets, step: usize, stride: usize) -> Buckets {
    buckets.map(|bs| {
        bs.into_iter()
            .map(|mut b| {
                let max = b.len();
                if max == 0 {
                    return b;
                }
                let shift = if max < stride {
                    step % max
                } else {
                    ((step as f64) * (max as f64) / (stride.max(1) as f64)) as usize % max
                };
                b.rotate_left(shift);
                b
            })
            .collect()
    })
}

/// Upstream `PermuteOrder`: shuffles each bucket with `rng`. (The sequence differs from Go's
/// `math/rand`; only "a seeded shuffle" is preserved.)
pub fn permute_order<R: Rng + ?Sized>(buckets: Buckets, rng: &mut R) -> Buckets {
    buckets.map(|bs| {
        bs.into_iter()
            .map(|mut b| {
                b.shuffle(rng);
                b
            })
            .collect()
    })
}

impl TaskGraph {
    /// One node (id 0) holding every task (upstream `NewTaskGraph`).
    pub fn new(tasks: Vec<Task>) -> TaskGraph {
        TaskGraph {
            nodes: vec![TaskNode {
                tasks,
                ..TaskNode::default()
            }],
        }
    }

    fn replace_in_of(&mut self, index: usize, with: usize) {
        let ins = self.nodes[index].in_.clone();
        for p in ins {
            self.nodes[p].replace_out(index, with);
        }
    }

    fn replace_out_of(&mut self, index: usize, with: usize) {
        let outs = self.nodes[index].out.clone();
        for p in outs {
            self.nodes[p].replace_in(index, with);
        }
    }

    /// Upstream `Split`: in every node with more than one task, the first task `on` matches
    /// gets a node of its own; tasks before it move to a new predecessor node and tasks after
    /// it to a new successor node (appended in that order).
    pub fn split(&mut self, on: impl Fn(&Task) -> bool) {
        let mut i = 0;
        while i < self.nodes.len() {
            let tasks = self.nodes[i].tasks.clone();
            if tasks.len() > 1
                && let Some(j) = tasks.iter().position(&on)
            {
                if j > 0 {
                    let next = self.nodes.len();
                    self.nodes.push(TaskNode {
                        in_: self.nodes[i].in_.clone(),
                        tasks: tasks[..j].to_vec(),
                        out: vec![i],
                    });
                    self.replace_in_of(i, next);
                    self.nodes[i].in_ = vec![next];
                }
                if j + 1 < tasks.len() {
                    let next = self.nodes.len();
                    self.nodes.push(TaskNode {
                        in_: vec![i],
                        tasks: tasks[j + 1..].to_vec(),
                        out: self.nodes[i].out.clone(),
                    });
                    self.replace_out_of(i, next);
                    self.nodes[i].out = vec![next];
                }
                self.nodes[i].tasks = vec![tasks[j].clone()];
            }
            i += 1;
        }
    }

    fn bulk_add(&mut self, nodes: Vec<TaskNode>, in_nodes: &[usize]) -> Vec<usize> {
        let from = self.nodes.len();
        self.nodes.extend(nodes);
        let next: Vec<usize> = (from..self.nodes.len()).collect();
        if in_nodes.is_empty() {
            return next;
        }
        for k in &next {
            self.nodes[*k].in_ = in_nodes.to_vec();
        }
        for k in in_nodes {
            self.nodes[*k].append_out(&next);
        }
        next
    }

    /// Upstream `Parallelize`: replaces each node's tasks by chains of `break_fn`'s buckets. The
    /// node becomes an empty left anchor; an empty spacer node joins two consecutive
    /// multi-node buckets; if the node had successors, a new empty right anchor joins the last
    /// bucket to them. `None` or a single bucket with one node leaves the node as it is.
    pub(crate) fn parallelize(&mut self, mut break_fn: impl FnMut(&[Task]) -> Buckets) {
        let mut i = 0;
        while i < self.nodes.len() {
            let results = break_fn(&self.nodes[i].tasks);
            let Some(results) = results else {
                i += 1;
                continue;
            };
            if results.is_empty() || (results.len() == 1 && results[0].len() == 1) {
                i += 1;
                continue;
            }
            self.nodes[i].tasks.clear();
            let out = std::mem::take(&mut self.nodes[i].out);
            let mut ins = vec![i];
            for bucket in results {
                if bucket.is_empty() {
                    continue;
                }
                if ins.len() == 1 || bucket.len() == 1 {
                    ins = self.bulk_add(bucket, &ins);
                } else {
                    ins = self.bulk_add(vec![TaskNode::default()], &ins);
                    ins = self.bulk_add(bucket, &ins);
                }
            }
            if !out.is_empty() {
                let next = self.nodes.len();
                self.nodes.push(TaskNode {
                    out: out.clone(),
                    ..TaskNode::default()
                });
                for j in &out {
                    self.nodes[*j].replace_in(i, next);
                }
                for j in &ins {
                    self.nodes[*j].out = vec![next];
                    self.nodes[next].in_.push(*j);
                }
            }
            i += 1;
        }
    }

    /// Node ids without prerequisites.
    pub fn roots(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|i| self.nodes[*i].in_.is_empty())
            .collect()
    }

    /// Every task in the graph, in node order.
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.nodes.iter().flat_map(|n| n.tasks.iter())
    }
}

/// The graph and worker count the sync worker uses for `state` (sync_worker.go `apply`): split
/// on Jobs, then parallelised with [`by_number_and_component`] (Updating, 16 workers),
/// [`flatten_by_number_and_component`] (Initializing, one worker per node), or the flattened
/// buckets shuffled with a generator seeded by `attempt / 8` and rotated by
/// `shift_order(attempt % 8, 8)` (Reconciling, 2 workers).
pub fn graph_for_state(tasks: Vec<Task>, state: PayloadState, attempt: u64) -> (TaskGraph, usize) {
    let mut g = TaskGraph::new(tasks);
    g.split(|t| t.manifest.is_job());
    match state {
        PayloadState::Updating => {
            g.parallelize(by_number_and_component);
            (g, UPDATING_WORKERS)
        }
        PayloadState::Initializing => {
            g.parallelize(flatten_by_number_and_component);
            let n = g.nodes.len();
            (g, n)
        }
        PayloadState::Reconciling => {
            let mut rng = rand::rngs::StdRng::seed_from_u64(attempt / 8);
            let step = (attempt % 8) as usize;
            g.parallelize(|t| {
                shift_order(
                    permute_order(flatten_by_number_and_component(t), &mut rng),
                    step,
                    8,
                )
            });
            (g, RECONCILING_WORKERS)
        }
    }
}

/// Applies one task; implemented by the sync worker (and by tests).
pub trait TaskRunner: Sync {
    /// The error a failed task reports.
    type Error: Send;
    /// Runs `task`. `cancel` fires when the graph run is cancelled; a long task should stop
    /// and return an error then.
    fn run<'a>(
        &'a self,
        cancel: &'a CancellationToken,
        task: &'a Task,
    ) -> BoxFuture<'a, Result<(), Self::Error>>;
}

/// One error of [`run_graph`].
#[derive(Debug, PartialEq)]
pub enum GraphError<E> {
    /// A node's first failing task.
    Task(E),
    /// No node failed but some never ran: `{count} incomplete task nodes, beginning with {task}`.
    Incomplete {
        /// Nodes that never ran (empty anchor nodes included).
        count: usize,
        /// The first task of the first node with tasks that never ran.
        first: String,
    },
    /// The run was cancelled (`context canceled`); follows `Incomplete`.
    Canceled,
}

impl<E: fmt::Display> fmt::Display for GraphError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::Task(e) => e.fmt(f),
            GraphError::Incomplete { count, first } => {
                write!(f, "{count} incomplete task nodes, beginning with {first}")
            }
            GraphError::Canceled => f.write_str("context canceled"),
        }
    }
}

/// Runs the graph with at most `max_parallelism` nodes at once (upstream `RunGraph`).
///
/// A node starts when every `in` node finished without error, lowest id first; its tasks run in
/// order and the node stops at its first failing task. Dependents of a failed node never run,
/// independent branches continue. After `cancel` fires no node and no task starts: running tasks
/// finish (the runner sees `cancel`), and a node stopped before its last task counts as never
/// run. Returns every failed node's error in node-id order; if none failed but nodes never ran,
/// `Incomplete` (plus `Canceled` if `cancel` fired). Empty = success.
#[tracing::instrument(level = "debug", skip_all, fields(nodes = graph.nodes.len(), workers = max_parallelism))]
pub async fn run_graph<R: TaskRunner + ?Sized>(
    graph: &TaskGraph,
    max_parallelism: usize,
    cancel: &CancellationToken,
    runner: &R,
) -> Vec<GraphError<R::Error>> {
    let n = graph.nodes.len();
    let max = max_parallelism.max(1);
    let nested = cancel.child_token();
    let mut submitted = vec![false; n];
    let mut results: Vec<Option<Result<(), R::Error>>> = (0..n).map(|_| None).collect();
    let mut inflight = FuturesUnordered::new();

    let next_node = |submitted: &[bool], results: &[Option<Result<(), R::Error>>]| {
        (0..n).find(|&i| {
            !submitted[i]
                && graph.nodes[i]
                    .in_
                    .iter()
                    .all(|p| matches!(results.get(*p), Some(Some(Ok(())))))
        })
    };

    loop {
        while inflight.len() < max && !cancel.is_cancelled() {
            let Some(i) = next_node(&submitted, &results) else {
                break;
            };
            submitted[i] = true;
            let nested = &nested;
            let tasks = &graph.nodes[i].tasks;
            inflight.push(
                async move {
                    for t in tasks {
                        // Upstream's node function checks the context before each task
                        // (`contextIsCancelled` in sync_worker.go `apply`): once cancelled,
                        // no further task of a running node starts; the node is incomplete.
                        if nested.is_cancelled() {
                            return (i, None);
                        }
                        if let Err(e) = runner.run(nested, t).await {
                            return (i, Some(Err(e)));
                        }
                    }
                    (i, Some(Ok(())))
                }
                .boxed(),
            );
        }
        if inflight.is_empty() {
            break;
        }
        if let Some((i, r)) = inflight.next().await {
            results[i] = r;
        }
    }
    nested.cancel();

    let mut errs = Vec::new();
    let mut first_incomplete: Option<&TaskNode> = None;
    let mut incomplete = 0;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            None => {
                if first_incomplete.is_none() && !graph.nodes[i].tasks.is_empty() {
                    first_incomplete = Some(&graph.nodes[i]);
                }
                incomplete += 1;
            }
            Some(Err(e)) => errs.push(GraphError::Task(e)),
            Some(Ok(())) => {}
        }
    }
    if errs.is_empty()
        && let Some(node) = first_incomplete
        && let Some(t) = node.tasks.first()
    {
        errs.push(GraphError::Incomplete {
            count: incomplete,
            first: t.to_string(),
        });
        if cancel.is_cancelled() {
            errs.push(GraphError::Canceled);
        }
    }
    errs
}
