//! The runner: a `Session` holds N connected workers and runs phases on them (warm-up, measured
//! runs). Between phases every worker is idle, so the caller can read server counters that
//! cover exactly one phase. Workers record into their own histograms (no shared lock per
//! operation) and hand them over when an interval or a phase ends.
//!
//! Threads: network targets run all connections as tasks on a few event-loop threads
//! (`client_threads`, default 1; measured in shared/notes/client-efficiency.md as the cheapest
//! design); SQLite runs one OS thread per connection because its calls block.

pub mod admin;
pub mod connect;
pub mod faults;
pub mod pacing;
mod recorder;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::db::{url::ReadRoute, Conn, DbError, DbResult, Dbms, TargetSpec};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::measure::{CpuTimes, ErrorCounts, LatencyHist, LatencySummary};

pub use connect::ConnectStats;
pub use faults::Faults;
pub use pacing::{Arrivals, Pacing, ScheduleStats};
use pacing::{Schedule, LATE};
use recorder::{LoopRecorder, PhaseHists, Slot};

/// What a workload does on one connection. Created inside the worker's thread, so it need
/// not be `Send`.
#[allow(async_fn_in_trait)]
pub trait Driver {
    /// Prepare statements on a fresh connection (before any phase; never measured).
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()>;
    /// One operation (a query, or a whole transaction); says what it did.
    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step>;
    /// The workload's own cumulative counters (TPC-C: retries, Delivery's skipped districts).
    /// The runner reports how much each grew during a phase, summed over workers.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// Closed loop only: how long the emulated user waits before the next operation (TPC-C's
    /// think and keying times). The wait is outside every latency; a wait that reaches past
    /// the phase's end ends the worker's phase at the deadline.
    fn pause(&mut self) -> Option<Duration> {
        None
    }
    /// Closed loop, asked after `pause`: when the next operation's emulated user has been
    /// waiting for this connection since (a driver whose connection serves several users, such
    /// as TPC-C's terminals behind a TP monitor, found it busy when the user was due). The
    /// operation's latency then counts from that instant (the user's response time), not from
    /// its start; never from before the phase's start. None (the default): from its start.
    fn waiting_since(&self) -> Option<Instant> {
        None
    }
    /// A driver with a bounded amount of work (rows numbered up to a limit) says it has none
    /// left: its worker ends the phase without taking another operation. Asked before every
    /// operation; the default (every other driver) never finishes, and compiles to nothing.
    fn finished(&self) -> bool {
        false
    }
}

/// What one operation did: rows the client read and statements it sent (a transaction of
/// sysbench's oltp_read_write is one operation of 18 statements).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Step {
    pub rows: u64,
    pub statements: u64,
    /// Which of the workload's operation kinds this was (index into `Workload::kinds()`).
    pub kind: u8,
    /// The operation ended in a rollback the workload asked for (TPC-C's 1 % of NewOrders):
    /// a success of the benchmark, counted apart from commits, never an error.
    pub rolled_back: bool,
}

impl Step {
    pub fn query(rows: u64) -> Self {
        Step {
            rows,
            statements: 1,
            ..Step::default()
        }
    }
}

/// Per operation kind (TPC-C's transaction types): counts and latencies of one worker or of
/// all, merged with `add` like the totals.
#[derive(Debug, Clone)]
pub struct KindStats {
    pub ops: u64,
    pub rolled_back: u64,
    pub errors: u64,
    pub hist: LatencyHist,
}

impl KindStats {
    fn new() -> Self {
        KindStats {
            ops: 0,
            rolled_back: 0,
            errors: 0,
            hist: LatencyHist::new(),
        }
    }
    pub fn add(&mut self, o: &KindStats) {
        self.ops += o.ops;
        self.rolled_back += o.rolled_back;
        self.errors += o.errors;
        self.hist.add(&o.hist);
    }
}

/// One node of a multi-host target over a phase: what its connections did.
#[derive(Debug, Clone)]
pub struct NodeStats {
    /// `host:port` as the URL gave it.
    pub label: String,
    pub connections: usize,
    pub ops: u64,
    pub errors: ErrorCounts,
    pub hist: LatencyHist,
    /// Connections to this node lost for good in the phase.
    pub workers_lost: usize,
    /// Connections re-established (`--reconnect`).
    pub reconnects: u64,
}

/// Which node worker `w` of `workers` connects to: round robin, as sysbench spreads its
/// threads over a `--mysql-host` list.
pub fn node_of(w: usize, nodes: usize) -> usize {
    w % nodes.max(1)
}

/// Whether an operation only reads (the workload says so: `Workload::access`): with a target's
/// `?read=replicas` its connections go to the replicas, and the others' to the primary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    #[default]
    ReadWrite,
    ReadOnly,
}

/// The node worker `w` connects to on `target` for an operation of `access`: round robin over
/// every node; with `?read=replicas`, round robin over the replicas (nodes 1..) for a
/// read-only operation, and the primary (node 0) for any other.
pub fn node_for(w: usize, nodes: usize, read: ReadRoute, access: Access) -> usize {
    match (read, access) {
        (ReadRoute::Replicas, Access::ReadOnly) if nodes > 1 => 1 + w % (nodes - 1),
        (ReadRoute::Replicas, _) => 0,
        (ReadRoute::Spread, _) => node_of(w, nodes),
    }
}

/// The slot of `kind`, grown on first use (workloads without kinds only ever use slot 0).
fn kind_slot(v: &mut Vec<KindStats>, kind: u8) -> &mut KindStats {
    let k = kind as usize;
    if v.len() <= k {
        v.resize_with(k + 1, KindStats::new);
    }
    &mut v[k]
}

/// How workers are laid out on client threads.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub threads: usize,
    /// Event-loop threads for network targets (ignored for SQLite: one thread per connection).
    pub client_threads: usize,
    /// Run worker threads under SCHED_BATCH (cuts preemption right after each send).
    pub sched_batch: bool,
    /// When operations start (closed loop, or a fixed total rate split over the workers).
    pub pacing: Pacing,
    /// Query timeout and re-connection (`--query-timeout`, `--reconnect`).
    pub faults: Faults,
    /// What the operation does, for a target that routes reads (`?read=replicas`).
    pub access: Access,
    /// The fleet-wide number of this process's first connection (shard I of a fleet with T
    /// connections per shard: I × T; 0 for a process alone). A multi-host target's node is
    /// chosen by that number, so that a fleet spreads over the nodes as one process with all
    /// the fleet's connections would, instead of every shard starting on node 0.
    pub first_worker: usize,
}

#[derive(Debug, Clone)]
enum Command {
    Idle,
    Phase {
        id: u64,
        start: Instant,
        deadline: Instant,
        interval: Duration,
        /// `--events N`: operations left to start in this phase, over all workers.
        budget: Option<Arc<AtomicI64>>,
    },
    Stop,
}

enum Msg {
    Ready {
        /// Connect attempts refused for now and retried (connect.rs).
        retries: u64,
    },
    ConnectFailed {
        worker: usize,
        error: DbError,
        retries: u64,
    },
    Interval {
        worker: usize,
        idx: u32,
        ops: u64,
        errors: u64,
        /// The interval's errors by class (all zero when `errors` is 0).
        error_classes: ErrorCounts,
        /// Latencies of the intervals every worker of the sender's loop has left (recorder.rs).
        hists: Vec<(u32, LatencyHist)>,
        kinds: Vec<KindTick>,
    },
    PhaseDone {
        worker: usize,
        /// Boxed: sent once per worker and phase, and it is by far the largest message.
        stats: Box<WorkerStats>,
    },
}

struct WorkerStats {
    ops: u64,
    rows: u64,
    statements: u64,
    errors: ErrorCounts,
    /// The latencies of every worker of the loop (service time, open loop's response time,
    /// per kind): sent by the last worker of the loop to finish the phase (recorder.rs).
    hists: Option<PhaseHists>,
    schedule: ScheduleStats,
    end: Instant,
    error_samples: Vec<String>,
    /// Set when the worker's connection was lost; the worker has exited.
    lost: Option<DbError>,
    /// Counts per kind (their latencies are in the loop's `hists`).
    by_kind: Vec<KindTick>,
    kind_errors: Vec<u64>,
    /// Growth of the driver's own counters during the phase.
    counters: Vec<(&'static str, u64)>,
    /// Connections re-established (`--reconnect`) and attempts that failed.
    reconnects: u64,
    reconnect_failures: u64,
    /// The node of a multi-host target this worker is connected to.
    node: Option<usize>,
}

/// Operations of one kind in one interval (indexed like `Workload::kinds()`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KindTick {
    pub ops: u64,
    pub rolled_back: u64,
}

fn add_ticks(into: &mut Vec<KindTick>, from: &[KindTick]) {
    if into.len() < from.len() {
        into.resize(from.len(), KindTick::default());
    }
    for (a, b) in into.iter_mut().zip(from) {
        a.ops += b.ops;
        a.rolled_back += b.rolled_back;
    }
}

/// What the workers reported for one interval index so far.
#[derive(Default)]
struct Tick {
    ops: u64,
    errors: u64,
    error_classes: ErrorCounts,
    hist: LatencyHist,
    kinds: Vec<KindTick>,
}

/// One finished interval of a phase: counts add across workers (and across machines).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct IntervalSample {
    /// End of the interval, seconds from the start of the phase.
    pub t_s: f64,
    pub ops: u64,
    pub errors: u64,
    pub ops_per_s: f64,
    pub latency_us: LatencySummary,
    /// Operations per kind in this interval, by kind name (workloads with several kinds).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_kind: BTreeMap<String, KindTick>,
    /// Figures the workload derives from the interval, by name (TPC-C: "tpm_c").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub figures: BTreeMap<String, f64>,
    /// Per kind, indexed like `Workload::kinds()`; named into `by_kind` by the caller.
    #[serde(skip)]
    pub kind_ticks: Vec<KindTick>,
    /// The interval's errors by class (the live metrics count them per class).
    #[serde(skip)]
    pub error_classes: ErrorCounts,
    /// Length of the interval (the last one of a phase may be shorter).
    #[serde(skip)]
    pub len_s: f64,
}

/// What one phase measured.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub ops: u64,
    pub rows: u64,
    pub statements: u64,
    pub errors: ErrorCounts,
    /// Service time: from the actual start of each operation to its end.
    pub hist: LatencyHist,
    /// Open loop only: response time, from the intended start of each operation to its end
    /// (service time plus the time it waited behind schedule), and how the schedule went.
    pub open_loop: Option<(LatencyHist, ScheduleStats)>,
    /// From the phase start to the end of the last operation (every op started before the
    /// deadline is finished and counted, so server-side counts match exactly).
    pub elapsed: Duration,
    pub client_cpu: CpuTimes,
    pub intervals: Vec<IntervalSample>,
    pub workers_lost: usize,
    pub error_samples: Vec<String>,
    pub interrupted: bool,
    /// Per operation kind, indexed like `Workload::kinds()` (may be shorter).
    pub by_kind: Vec<KindStats>,
    /// Growth of the workload's own counters during the phase, summed over workers.
    pub counters: BTreeMap<String, u64>,
    /// Connections re-established during the phase (`--reconnect`), and failed attempts.
    pub reconnects: u64,
    pub reconnect_failures: u64,
    /// Set when every connection was lost in this phase (the run cannot go on): why. What the
    /// phase measured until then is still here, so that it can be kept.
    pub lost_all: Option<String>,
    /// Per node of a multi-host target, in the URL's order (empty for one node).
    pub by_node: Vec<NodeStats>,
}

/// Connected workers, ready to run phases.
pub struct Session {
    pacing: Pacing,
    cmd: watch::Sender<Command>,
    rx: mpsc::Receiver<Msg>,
    handles: Vec<std::thread::JoinHandle<()>>,
    alive: Vec<bool>,
    next_phase: u64,
    /// Set once `stop_handle` was asked for: the phases of this session can be ended early.
    stop: Option<Arc<Mutex<StopState>>>,
    connect: ConnectStats,
    /// `host:port` of each node of a multi-host target (empty for one node).
    nodes: Vec<String>,
}

/// Ends a session's running phase from another thread: for a phase that lasts as long as
/// something the caller runs elsewhere (a second session's phases). The workers see it
/// through the phase's operation budget (the `--events` ticket each takes before an
/// operation), so a session that never asked for a handle pays nothing, and one that did pays
/// that one ticket per operation, as with `--events`.
#[derive(Clone)]
pub struct StopHandle(Arc<Mutex<StopState>>);

#[derive(Default)]
struct StopState {
    /// The running phase's budget (None between phases).
    budget: Option<Arc<AtomicI64>>,
    /// `stop` came while no phase was running: the next phase ends at once.
    requested: bool,
}

impl StopHandle {
    /// End the running phase: every worker finishes the operation it is in and starts no
    /// other, and `Session::phase` returns what the phase measured. Called between phases,
    /// it ends the next phase at once.
    pub fn stop(&self) {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match &s.budget {
            Some(b) => b.store(0, Ordering::Relaxed),
            None => s.requested = true,
        }
    }
}

/// Keep at most this many distinct error messages per phase (examples for the result).
const ERROR_SAMPLES: usize = 5;

impl Session {
    /// Connect `threads` workers and run each driver's setup, at most `connect::WINDOW` at a
    /// time, retrying what the server refuses for now until `--connect-timeout`
    /// (connect.rs). Fails (usage error) if any connection cannot be made, naming the limit
    /// that stopped it and the setting to change.
    pub fn start<D, F>(target: &TargetSpec, cfg: &SessionConfig, factory: F) -> Result<Session>
    where
        D: Driver + 'static,
        F: Fn(usize) -> D + Send + Sync + 'static,
    {
        let n = cfg.threads;
        if target.dbms != Dbms::Sqlite {
            // Every connection is a descriptor: check before opening hundreds only to fail.
            let (soft, _) = connect::fd_limit();
            if n as u64 + connect::FD_HEADROOM > soft {
                return Err(Error::usage(format!(
                    "{n} connections to {} cannot open: {}",
                    target.display,
                    connect::Limit::OpenFiles.advice(target, n)
                )));
            }
        }
        let connect_start = Instant::now();
        let window = Arc::new(tokio::sync::Semaphore::new(connect::WINDOW));
        let loops = if target.dbms == Dbms::Sqlite {
            n
        } else {
            cfg.client_threads.clamp(1, n)
        };
        let (cmd, cmd_rx) = watch::channel(Command::Idle);
        let (tx, rx) = mpsc::channel();
        let factory = Arc::new(factory);
        let multi = target.node_count() > 1;
        let node_targets: Arc<Vec<Arc<TargetSpec>>> = Arc::new(
            (0..target.node_count())
                .map(|i| Arc::new(target.node(i)))
                .collect(),
        );
        let mut handles = Vec::with_capacity(loops);
        for l in 0..loops {
            // Worker w runs on loop w % loops.
            let ids: Vec<usize> = (l..n).step_by(loops).collect();
            let (factory, node_targets, cmd_rx, tx, window) = (
                factory.clone(),
                node_targets.clone(),
                cmd_rx.clone(),
                tx.clone(),
                window.clone(),
            );
            let sched_batch = cfg.sched_batch;
            let (read, access, first_worker) = (target.read, cfg.access, cfg.first_worker);
            let pacing = cfg.pacing;
            let faults = cfg.faults;
            let h = std::thread::Builder::new()
                .name(format!("eb-loop-{l}"))
                .spawn(move || {
                    if sched_batch {
                        set_sched_batch();
                    }
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("tokio runtime");
                    let local = tokio::task::LocalSet::new();
                    let rec = Rc::new(RefCell::new(LoopRecorder::new(ids.len())));
                    for (slot, w) in ids.into_iter().enumerate() {
                        let driver = factory(w);
                        let node = node_for(first_worker + w, node_targets.len(), read, access);
                        let target = node_targets[node].clone();
                        let (cmd_rx, tx) = (cmd_rx.clone(), tx.clone());
                        let node = multi.then_some(node);
                        let place = (rec.clone(), slot);
                        let opening = window.clone();
                        local.spawn_local(worker(
                            (w, node),
                            n,
                            pacing,
                            faults,
                            target,
                            driver,
                            cmd_rx,
                            tx,
                            place,
                            opening,
                        ));
                    }
                    rt.block_on(local);
                })
                .map_err(|e| Error::run(format!("cannot start a client thread: {e}")))?;
            handles.push(h);
        }
        drop(tx);
        let mut session = Session {
            pacing: cfg.pacing,
            cmd,
            rx,
            handles,
            alive: vec![true; n],
            next_phase: 1,
            stop: None,
            connect: ConnectStats::default(),
            nodes: if multi {
                (0..target.node_count())
                    .map(|i| target.node_label(i))
                    .collect()
            } else {
                Vec::new()
            },
        };
        let mut answered = 0;
        let mut retries = 0;
        let mut failure: Option<(usize, DbError)> = None;
        while answered < n {
            match session.rx.recv() {
                Ok(Msg::Ready { retries: r }) => {
                    answered += 1;
                    retries += r;
                }
                Ok(Msg::ConnectFailed {
                    worker,
                    error,
                    retries: r,
                }) => {
                    answered += 1;
                    retries += r;
                    session.alive[worker] = false;
                    failure.get_or_insert((worker, error));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        session.connect = ConnectStats {
            connections: n,
            retries,
            elapsed: connect_start.elapsed(),
        };
        if let Some((worker, error)) = failure {
            session.stop();
            let opened = session.alive.iter().filter(|a| **a).count();
            let hint = match connect::Limit::of(&error) {
                Some(l) => format!(" — {}", l.advice(target, n)),
                None => String::new(),
            };
            let tried = if retries > 0 {
                format!(
                    ", {retries} refused attempt(s) retried over {:.1} s",
                    session.connect.elapsed.as_secs_f64()
                )
            } else {
                String::new()
            };
            let to = target.node(node_for(
                cfg.first_worker + worker,
                target.node_count(),
                target.read,
                cfg.access,
            ));
            return Err(Error::usage(format!(
                "connection {} of {n} to {} failed ({opened} opened{tried}): {}{hint}",
                worker + 1,
                to.display,
                target.scrub(&error.message)
            )));
        }
        Ok(session)
    }

    /// How the connections were opened: how many, refused attempts retried, how long.
    pub fn connect_stats(&self) -> ConnectStats {
        self.connect
    }

    pub fn alive(&self) -> usize {
        self.alive.iter().filter(|a| **a).count()
    }

    /// A handle that ends this session's running phase early, from any thread.
    pub fn stop_handle(&mut self) -> StopHandle {
        StopHandle(self.stop.get_or_insert_with(Default::default).clone())
    }

    /// Run one phase of `duration` (or until `events` operations have started over all
    /// workers, whichever comes first), collecting per-interval samples of `interval` length.
    /// `on_interval` sees each interval as soon as every worker has moved past it.
    pub fn phase(
        &mut self,
        duration: Duration,
        events: Option<u64>,
        interval: Duration,
        mut on_interval: impl FnMut(&IntervalSample),
    ) -> Result<PhaseResult> {
        self.phase_with_hists(duration, events, interval, |s, _| on_interval(s))
    }

    /// `phase`, with each interval's merged latency histogram given to `on_interval` too (the
    /// collector has it anyway; the live metrics add it to their fixed buckets). It is dropped
    /// after the call: the phase keeps only each interval's summary.
    pub fn phase_with_hists(
        &mut self,
        duration: Duration,
        events: Option<u64>,
        interval: Duration,
        mut on_interval: impl FnMut(&IntervalSample, &LatencyHist),
    ) -> Result<PhaseResult> {
        let live = self.alive();
        if live == 0 {
            return Err(Error::run("every connection to the target was lost"));
        }
        let id = self.next_phase;
        self.next_phase += 1;
        let cpu0 = CpuTimes::now();
        let start = Instant::now();
        let interval = interval.max(Duration::from_millis(10));
        // A stoppable session's phase always has a budget (unbounded without --events): the
        // stop handle ends the phase by emptying it.
        let budget = match (events, &self.stop) {
            (Some(n), _) => Some(Arc::new(AtomicI64::new(n.min(i64::MAX as u64) as i64))),
            (None, Some(_)) => Some(Arc::new(AtomicI64::new(i64::MAX))),
            (None, None) => None,
        };
        if let (Some(st), Some(b)) = (&self.stop, &budget) {
            let mut st = st.lock().unwrap_or_else(|e| e.into_inner());
            if std::mem::take(&mut st.requested) {
                b.store(0, Ordering::Relaxed);
            }
            st.budget = Some(b.clone());
        }
        let _ = self.cmd.send(Command::Phase {
            id,
            start,
            deadline: start + duration,
            interval,
            budget,
        });

        // Latest interval index each worker has reported; u32::MAX once it has finished.
        let mut latest: Vec<u32> = self
            .alive
            .iter()
            .map(|a| if *a { 0 } else { u32::MAX })
            .collect();
        let mut pending: BTreeMap<u32, Tick> = Default::default();
        let mut next_final: u32 = 0;
        let mut intervals = Vec::new();
        let mut total = WorkerStats {
            ops: 0,
            rows: 0,
            statements: 0,
            errors: ErrorCounts::default(),
            hists: Some(PhaseHists {
                hist: LatencyHist::new(),
                response: LatencyHist::new(),
                by_kind: Vec::new(),
                by_node: Vec::new(),
            }),
            schedule: ScheduleStats::default(),
            end: start,
            error_samples: Vec::new(),
            lost: None,
            by_kind: Vec::new(),
            kind_errors: Vec::new(),
            counters: Vec::new(),
            reconnects: 0,
            reconnect_failures: 0,
            node: None,
        };
        let mut by_node: Vec<NodeStats> = self
            .nodes
            .iter()
            .map(|label| NodeStats {
                label: label.clone(),
                connections: 0,
                ops: 0,
                errors: ErrorCounts::default(),
                hist: LatencyHist::new(),
                workers_lost: 0,
                reconnects: 0,
            })
            .collect();
        let mut done = 0;
        let mut lost = 0;
        let interval_s = interval.as_secs_f64();
        let mut finalize = |upto: u32,
                            end: Option<Instant>,
                            pending: &mut BTreeMap<u32, Tick>,
                            next_final: &mut u32,
                            intervals: &mut Vec<IntervalSample>| {
            while *next_final < upto {
                let idx = *next_final;
                *next_final += 1;
                let tick = pending.remove(&idx).unwrap_or_default();
                let (ops, errors) = (tick.ops, tick.errors);
                let mut t_s = (idx + 1) as f64 * interval_s;
                let mut len_s = interval_s;
                if let Some(end) = end {
                    let end_s = end.duration_since(start).as_secs_f64();
                    if end_s < t_s {
                        len_s = (end_s - idx as f64 * interval_s).max(1e-6);
                        t_s = end_s;
                    }
                }
                let s = IntervalSample {
                    t_s,
                    ops,
                    errors,
                    ops_per_s: ops as f64 / len_s,
                    latency_us: tick.hist.summary(),
                    by_kind: BTreeMap::new(),
                    figures: BTreeMap::new(),
                    kind_ticks: tick.kinds,
                    error_classes: tick.error_classes,
                    len_s,
                };
                on_interval(&s, &tick.hist);
                intervals.push(s);
            }
        };
        while done < live {
            let msg = match self.rx.recv_timeout(Duration::from_millis(200)) {
                Ok(m) => m,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            match msg {
                Msg::Interval {
                    worker,
                    idx,
                    ops,
                    errors,
                    error_classes,
                    hists,
                    kinds,
                } => {
                    for (i, h) in hists {
                        pending.entry(i).or_default().hist.add(&h);
                    }
                    let e = pending.entry(idx).or_default();
                    e.ops += ops;
                    e.errors += errors;
                    e.error_classes.merge(&error_classes);
                    add_ticks(&mut e.kinds, &kinds);
                    latest[worker] = latest[worker].max(idx);
                }
                Msg::PhaseDone { worker, mut stats } => {
                    latest[worker] = u32::MAX;
                    let node = stats.node.and_then(|i| by_node.get_mut(i));
                    if let Some(nd) = node {
                        nd.connections += 1;
                        nd.ops += stats.ops;
                        nd.errors.merge(&stats.errors);
                        nd.reconnects += stats.reconnects;
                        nd.workers_lost += stats.lost.is_some() as usize;
                    }
                    if let Some(error) = stats.lost.take() {
                        self.alive[worker] = false;
                        lost += 1;
                        total.lost = Some(error);
                    }
                    merge_stats(&mut total, *stats);
                    done += 1;
                }
                Msg::Ready { .. } | Msg::ConnectFailed { .. } => {}
            }
            let min_latest = latest.iter().copied().min().unwrap_or(u32::MAX);
            if min_latest != u32::MAX && min_latest > next_final {
                finalize(
                    min_latest,
                    None,
                    &mut pending,
                    &mut next_final,
                    &mut intervals,
                );
            }
        }
        if let Some(st) = &self.stop {
            st.lock().unwrap_or_else(|e| e.into_inner()).budget = None;
        }
        let elapsed = total.end.duration_since(start);
        let hists = total.hists.take().expect("the collector's own");
        let mut by_kind = Vec::new();
        for (k, t) in total.by_kind.iter().enumerate() {
            let ks = kind_slot(&mut by_kind, k as u8);
            ks.ops = t.ops;
            ks.rolled_back = t.rolled_back;
        }
        for (k, e) in total.kind_errors.iter().enumerate() {
            kind_slot(&mut by_kind, k as u8).errors = *e;
        }
        for (k, h) in hists.by_kind.iter().enumerate() {
            kind_slot(&mut by_kind, k as u8).hist.add(h);
        }
        for (nd, h) in by_node.iter_mut().zip(&hists.by_node) {
            nd.hist.add(h);
        }
        let last = pending
            .keys()
            .next_back()
            .map(|k| k + 1)
            .unwrap_or(next_final);
        finalize(
            last,
            Some(total.end),
            &mut pending,
            &mut next_final,
            &mut intervals,
        );
        let client_cpu = CpuTimes::now().since(cpu0);
        let lost_all = (lost > 0 && self.alive() == 0).then(|| {
            let why = total.lost.map(|e| e.message).unwrap_or_default();
            format!("every connection to the target was lost during the run: {why}")
        });
        Ok(PhaseResult {
            ops: total.ops,
            rows: total.rows,
            statements: total.statements,
            errors: total.errors,
            hist: hists.hist,
            open_loop: match self.pacing {
                Pacing::ClosedLoop => None,
                Pacing::FixedRate { .. } => Some((hists.response, total.schedule)),
            },
            elapsed,
            client_cpu,
            intervals,
            workers_lost: lost,
            error_samples: total.error_samples,
            interrupted: interrupt::signal().is_some(),
            by_kind,
            counters: total
                .counters
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            reconnects: total.reconnects,
            reconnect_failures: total.reconnect_failures,
            lost_all,
            by_node,
        })
    }

    /// Stop every worker and join the client threads.
    pub fn stop(&mut self) {
        let _ = self.cmd.send(Command::Stop);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop();
    }
}

fn merge_stats(total: &mut WorkerStats, s: WorkerStats) {
    total.ops += s.ops;
    total.rows += s.rows;
    total.statements += s.statements;
    total.errors.merge(&s.errors);
    if let (Some(t), Some(h)) = (total.hists.as_mut(), s.hists) {
        t.hist.add(&h.hist);
        t.response.add(&h.response);
        for (k, kh) in h.by_kind.iter().enumerate() {
            recorder::grown(&mut t.by_kind, k).add(kh);
        }
        for (i, nh) in h.by_node.iter().enumerate() {
            recorder::grown(&mut t.by_node, i).add(nh);
        }
    }
    total.schedule.merge(&s.schedule);
    total.end = total.end.max(s.end);
    add_ticks(&mut total.by_kind, &s.by_kind);
    if total.kind_errors.len() < s.kind_errors.len() {
        total.kind_errors.resize(s.kind_errors.len(), 0);
    }
    for (a, b) in total.kind_errors.iter_mut().zip(&s.kind_errors) {
        *a += b;
    }
    for (name, v) in s.counters {
        match total.counters.iter_mut().find(|(n, _)| *n == name) {
            Some(c) => c.1 += v,
            None => total.counters.push((name, v)),
        }
    }
    total.reconnects += s.reconnects;
    total.reconnect_failures += s.reconnect_failures;
    for e in s.error_samples {
        if total.error_samples.len() < ERROR_SAMPLES && !total.error_samples.contains(&e) {
            total.error_samples.push(e);
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn worker<D: Driver>(
    (w, node): (usize, Option<usize>),
    workers: usize,
    pacing: Pacing,
    faults: Faults,
    target: Arc<TargetSpec>,
    mut driver: D,
    mut cmd: watch::Receiver<Command>,
    tx: mpsc::Sender<Msg>,
    (rec, slot): (Rc<RefCell<LoopRecorder>>, Slot),
    window: Arc<tokio::sync::Semaphore>,
) {
    let mut retries = 0;
    let first = connect::open(w, &target, &mut driver, &faults, &window, &mut retries).await;
    drop(window);
    // None while a lost connection waits to be re-established (--reconnect).
    let mut conn = match first {
        Ok(c) => Some(c),
        Err(error) => {
            rec.borrow_mut().set_gone(slot);
            let _ = tx.send(Msg::ConnectFailed {
                worker: w,
                error,
                retries,
            });
            return;
        }
    };
    let _ = tx.send(Msg::Ready { retries });
    let mut seen_phase = 0;
    // When the connection was lost (--reconnect), for the message when it is back.
    let mut lost_at: Option<Instant> = None;
    loop {
        let command = cmd.borrow_and_update().clone();
        let (start, deadline, interval, budget) = match command {
            Command::Stop => return,
            Command::Phase {
                id,
                start,
                deadline,
                interval,
                budget,
            } if id > seen_phase => {
                seen_phase = id;
                (start, deadline, interval, budget)
            }
            _ => {
                if cmd.changed().await.is_err() {
                    return;
                }
                continue;
            }
        };
        rec.borrow_mut().start_phase(seen_phase);
        // The phase id seeds the arrivals, so that warm-up and runs differ.
        let mut schedule = Schedule::new(&pacing, w, workers, start, seen_phase);
        let mut sched = ScheduleStats::default();
        let interval_ns = interval.as_nanos().max(1);
        let mut stats_errors = ErrorCounts::default();
        let (mut ops, mut rows, mut statements, mut iops, mut ierr) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
        let (mut reconnects, mut reconnect_failures) = (0u64, 0u64);
        let mut cur_idx = 0u32;
        let mut samples: Vec<String> = Vec::new();
        let mut lost: Option<DbError> = None;
        let mut end = start;
        let mut by_kind: Vec<KindTick> = Vec::new();
        let mut kind_errors: Vec<u64> = Vec::new();
        let mut ikinds: Vec<KindTick> = Vec::new();
        let mut iclasses = ErrorCounts::default();
        let counters0 = driver.counters();
        // Ended before the deadline (--events reached, or a signal): the schedule's backlog
        // then counts up to now, not up to a deadline that may be far away (--time 0).
        let mut ended_early = false;
        loop {
            if conn.is_none() {
                match faults::reconnect(
                    &target,
                    &mut driver,
                    &faults,
                    deadline,
                    &mut reconnect_failures,
                )
                .await
                {
                    Some(r) => {
                        conn = Some(r.conn);
                        reconnects += 1;
                        let down = lost_at.take().map(|t| t.elapsed()).unwrap_or_default();
                        eprintln!(
                            "connection {}: re-established after {:.1} s ({} attempt(s))",
                            w + 1,
                            down.as_secs_f64(),
                            r.attempts
                        );
                    }
                    None => {
                        // Tried until the deadline: the run's time includes the outage.
                        end = end.max(Instant::now().min(deadline));
                        break;
                    }
                }
            }
            let intended = match &schedule {
                Some(s) => {
                    let due = s.due();
                    if due >= deadline || !sleep_until(due).await {
                        break;
                    }
                    Some(due)
                }
                None => {
                    if let Some(wait) = driver.pause() {
                        let until = Instant::now() + wait;
                        if until >= deadline {
                            // The user is still thinking when the phase ends: the worker was
                            // part of the whole phase.
                            sleep_until(deadline).await;
                            end = end.max(deadline);
                            break;
                        }
                        if !sleep_until(until).await {
                            ended_early = true;
                            break;
                        }
                    }
                    None
                }
            };
            let t0 = Instant::now();
            // The latency's origin: the operation's start, or when its user began to wait for
            // this connection (several users per connection), within this phase.
            let from = match (&schedule, driver.waiting_since()) {
                (None, Some(w)) => w.max(start).min(t0),
                _ => t0,
            };
            // An operation due before the deadline may start in the timer's last tick after it
            // (else the tick's lateness would show as backlog); one behind by more does not.
            let stop_at = match intended {
                Some(_) => deadline + LATE,
                None => deadline,
            };
            if t0 >= stop_at {
                break;
            }
            if interrupt::signal().is_some() || driver.finished() {
                ended_early = true;
                break;
            }
            // --events: every worker takes a ticket before each operation; none left, done.
            if let Some(b) = &budget {
                if b.fetch_sub(1, Ordering::Relaxed) <= 0 {
                    ended_early = true;
                    break;
                }
            }
            if let (Some(s), Some(due)) = (schedule.as_mut(), intended) {
                s.advance();
                sched.intended += 1;
                let lag = t0.saturating_duration_since(due);
                sched.max_lag = sched.max_lag.max(lag);
                if lag > LATE {
                    sched.late += 1;
                }
            }
            let c = conn.as_mut().expect("connected above");
            let r = faults.timed(driver.step(c)).await;
            let t1 = Instant::now();
            end = t1;
            let idx = (t1.duration_since(start).as_nanos() / interval_ns) as u32;
            if idx != cur_idx {
                let hists = rec.borrow_mut().move_to(slot, idx);
                let _ = tx.send(Msg::Interval {
                    worker: w,
                    idx: cur_idx,
                    ops: iops,
                    errors: ierr,
                    error_classes: std::mem::take(&mut iclasses),
                    hists,
                    kinds: std::mem::take(&mut ikinds),
                });
                (iops, ierr, cur_idx) = (0, 0, idx);
            }
            match r {
                Ok(step) => {
                    let us = t1.duration_since(from).as_micros() as u64;
                    let response_us = intended.map(|due| t1.duration_since(due).as_micros() as u64);
                    rec.borrow_mut()
                        .record(idx, step.kind, node, us, response_us);
                    ops += 1;
                    iops += 1;
                    rows += step.rows;
                    statements += step.statements;
                    let i = step.kind as usize;
                    for v in [&mut by_kind, &mut ikinds] {
                        if v.len() <= i {
                            v.resize(i + 1, KindTick::default());
                        }
                        v[i].ops += 1;
                        v[i].rolled_back += step.rolled_back as u64;
                    }
                }
                Err(e) => {
                    stats_errors.add(e.class);
                    let i = e.kind as usize;
                    if kind_errors.len() <= i {
                        kind_errors.resize(i + 1, 0);
                    }
                    kind_errors[i] += 1;
                    ierr += 1;
                    iclasses.add(e.class);
                    let message = target.scrub(&e.message);
                    if samples.len() < ERROR_SAMPLES
                        && !samples.iter().any(|s| s.ends_with(&message))
                    {
                        samples.push(format!("{}: {message}", e.class.name()));
                    }
                    if faults::breaks_connection(&e) {
                        // Dropping the connection closes it (a timed-out one mid-reply too).
                        conn = None;
                        if !faults.reconnect {
                            lost = Some(e);
                            break;
                        }
                        lost_at = Some(Instant::now());
                        eprintln!(
                            "connection {}: {}: {message}; re-connecting with back-off (--reconnect)",
                            w + 1,
                            e.class.name()
                        );
                    }
                }
            }
        }
        // Finished: every interval the loop's other workers have also left goes with this.
        let hists = rec.borrow_mut().move_to(slot, u32::MAX);
        let _ = tx.send(Msg::Interval {
            worker: w,
            idx: cur_idx,
            ops: iops,
            errors: ierr,
            error_classes: std::mem::take(&mut iclasses),
            hists,
            kinds: std::mem::take(&mut ikinds),
        });
        if let Some(s) = schedule.as_mut() {
            // What was due before the deadline but never started: the backlog.
            let until = if ended_early || interrupt::signal().is_some() {
                Instant::now().min(deadline)
            } else {
                deadline
            };
            sched.backlog = s.pending_before(until);
            sched.intended += sched.backlog;
        }
        let stats = WorkerStats {
            ops,
            rows,
            statements,
            errors: stats_errors,
            hists: rec.borrow_mut().finish(slot, lost.is_some()),
            schedule: sched,
            end,
            error_samples: samples,
            lost: lost.map(|e| DbError::new(e.class, target.scrub(&e.message))),
            by_kind,
            kind_errors,
            counters: counter_growth(&counters0, driver.counters()),
            reconnects,
            reconnect_failures,
            node,
        };
        let was_lost = stats.lost.is_some();
        let _ = tx.send(Msg::PhaseDone {
            worker: w,
            stats: Box::new(stats),
        });
        if was_lost {
            return;
        }
    }
}

/// How much each counter grew from `before` to `after` (a counter new since `before` counts
/// from 0).
fn counter_growth(
    before: &[(&'static str, u64)],
    after: Vec<(&'static str, u64)>,
) -> Vec<(&'static str, u64)> {
    after
        .into_iter()
        .map(|(name, v)| {
            let v0 = before.iter().find(|(n, _)| *n == name).map_or(0, |c| c.1);
            (name, v.saturating_sub(v0))
        })
        .collect()
}

/// SCHED_BATCH for the calling thread: the kernel stops preempting it in favour of the server
/// thread it just woke, which halves context switches per query (client-efficiency notes).
fn set_sched_batch() {
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a zeroed, valid param.
    unsafe {
        let param: libc::sched_param = std::mem::zeroed();
        libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
    }
}

/// Wait until `t` in steps of at most 100 ms, so that Ctrl-C is seen even at low rates.
/// Returns false when interrupted. Tokio's timer has 1 ms ticks: a wake-up can be up to about
/// 1 ms late, and that delay counts in the response time (it is the client's, honestly kept).
async fn sleep_until(t: Instant) -> bool {
    loop {
        if interrupt::signal().is_some() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        let step = (t - now).min(Duration::from_millis(100));
        tokio::time::sleep_until(tokio::time::Instant::from_std(now + step)).await;
    }
}
