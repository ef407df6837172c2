//! The runner: `Workers` holds N connected workers and runs phases on them (warm-up, measured
//! runs); it is the `driver::Session` every workload's `start` returns. Between phases every
//! worker is idle, so the caller can read server counters that cover exactly one phase.
//! Workers record into their own histograms (no shared lock per operation) and hand them over
//! when an interval or a phase ends.
//!
//! Threads: network targets run all connections as tasks on a few event-loop threads
//! (`client_threads`, default 1; measured in shared/notes/client-efficiency.md as the cheapest
//! design); SQLite runs one OS thread per connection because its calls block.
//!
//! The contract with workloads (`Driver`, `Step`, `Session`) is in `crate::contract`, and the
//! types a phase is asked for and reports (`PhasePlan`, `PhaseResult`, ...) in `crate::model`.
//! Here: the workers in `session.rs`, one worker's loop in `worker.rs`, the per-loop latency
//! recorder in `recorder.rs`, and which node a worker connects to.

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
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::contract::{Access, Driver, Session, SessionConfig, Step, StopHandle};
use crate::db::{url::ReadRoute, Conn, DbError, DbResult, Dbms, TargetSpec};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::measure::{CpuTimes, ErrorCounts, LatencyHist};
use crate::model::{
    ConnectMode, ConnectStats, Faults, IntervalSample, KindStats, KindTick, NodeStats, Pacing,
    PhasePlan, PhaseResult, ScheduleStats, StepStats, TxConnect,
};

use pacing::{Schedule, LATE};
use recorder::{LoopRecorder, PhaseHists, Slot};
pub use session::Workers;
use worker::{run_worker, set_sched_batch, sleep_until, WorkerArgs};

/// Connect `cfg.threads` workers running the drivers `factory` builds (`Workers::start`),
/// as the session the contract hands around.
pub fn start<D, F>(target: &TargetSpec, cfg: &SessionConfig, factory: F) -> Result<Box<dyn Session>>
where
    D: Driver + 'static,
    F: Fn(usize) -> D + Send + Sync + 'static,
{
    Ok(Box::new(Workers::start(target, cfg, factory)?))
}

/// Which node worker `w` of `workers` connects to: round robin, as sysbench spreads its
/// threads over a `--mysql-host` list.
pub fn node_of(w: usize, nodes: usize) -> usize {
    w % nodes.max(1)
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
