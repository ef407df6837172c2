//! The runner: a `Session` holds N connected workers and runs phases on them (warm-up, measured
//! runs). Between phases every worker is idle, so the caller can read server counters that
//! cover exactly one phase. Workers record into their own histograms (no shared lock per
//! operation) and hand them over when an interval or a phase ends.
//!
//! Threads: network targets run all connections as tasks on a few event-loop threads
//! (`client_threads`, default 1; measured in shared/notes/client-efficiency.md as the cheapest
//! design); SQLite runs one OS thread per connection because its calls block.
//!
//! Here: the contract with workloads (`Driver`, `Step`) and the types a phase reports; the
//! session in `session.rs`, one worker's loop in `worker.rs`, the per-loop latency recorder in
//! `recorder.rs`.

pub mod admin;
pub mod connect;
pub mod faults;
pub mod pacing;
mod recorder;
mod session;
pub mod steps;
mod worker;

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
use crate::measure::{CpuTimes, ErrorCounts, LatencyHist};
use crate::model::{IntervalSample, KindTick};

pub use connect::{ConnectMode, ConnectStats};
pub use faults::Faults;
pub use pacing::{Arrivals, Pacing, ScheduleStats};
use pacing::{Schedule, LATE};
use recorder::{LoopRecorder, PhaseHists, Slot};
pub use session::{Session, StopHandle};
pub use steps::{LoadStep, PhasePlan};
use worker::{run_worker, set_sched_batch, sleep_until, WorkerArgs};

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

/// Keep at most this many distinct error messages per phase (examples for the result).
const ERROR_SAMPLES: usize = 5;

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
        /// `--events N`: operations left to start in this phase, over all workers.
        budget: Option<Arc<AtomicI64>>,
        /// The interval and the load's steps.
        plan: Arc<PhasePlan>,
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
    /// Per load step of the phase (empty without steps).
    steps: Vec<StepTick>,
    /// `--connect per-transaction`: connections opened (one per operation that got one).
    connects: u64,
}

/// One worker's counts in one load step; add across workers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct StepTick {
    ops: u64,
    errors: u64,
    /// Open loop: starts due in the step (started + backlog), and those never started.
    intended: u64,
    backlog: u64,
}

/// One load step of a phase over all workers.
#[derive(Debug, Clone)]
pub struct StepStats {
    pub step: LoadStep,
    /// Seconds from the phase's start to the step's start.
    pub start_s: f64,
    pub ops: u64,
    pub errors: u64,
    /// Service time of the step's operations.
    pub hist: LatencyHist,
    /// Open loop: response time, and the schedule's starts due and never started.
    pub response: Option<LatencyHist>,
    pub intended: u64,
    pub backlog: u64,
}

/// `--connect per-transaction` over a phase: connections opened and each one's set-up time
/// (connect and the driver's setup; inside each operation's latency too).
#[derive(Debug, Clone)]
pub struct TxConnect {
    pub opened: u64,
    pub setup: LatencyHist,
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
    /// Per load step (empty without steps).
    pub by_step: Vec<StepStats>,
    /// `--connect per-transaction` only: connections opened and their set-up times.
    pub per_transaction: Option<TxConnect>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `?read=replicas` sends read-only work to the replicas in turn and writes to the
    /// primary; `all` spreads reads over every node.
    #[test]
    fn read_replicas_route() {
        let nodes: Vec<usize> = (0..4)
            .map(|w| node_for(w, 3, ReadRoute::Replicas, Access::ReadOnly))
            .collect();
        assert_eq!(nodes, vec![1, 2, 1, 2]);
        assert_eq!(node_for(3, 3, ReadRoute::Replicas, Access::ReadWrite), 0);
        assert_eq!(node_for(4, 3, ReadRoute::Spread, Access::ReadOnly), 1);
    }
}
