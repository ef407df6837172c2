//! What a workload's connections run and what runs them, as the contract sees it: a `Driver`
//! (one connection's operations, a `Step` each), the layout of a session's workers
//! (`SessionConfig`, `Access`), and `Session`, what a started session of workers answers to
//! (its phases, its connections, a `StopHandle`). The runner (a floor above) implements
//! `Session` with its workers (`runner::Workers`), generic over the driver, so the per-step
//! path has no virtual call; the harness and the live outputs hold a `Box<dyn Session>` and
//! call it once per phase.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::db::{Conn, DbResult};
use crate::error::Result;
use crate::measure::LatencyHist;
use crate::model::{ConnectStats, Faults, IntervalSample, Pacing, PhasePlan, PhaseResult};

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

/// Whether an operation only reads (the workload says so: `Workload::access`): with a target's
/// `?read=replicas` its connections go to the replicas, and the others' to the primary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    #[default]
    ReadWrite,
    ReadOnly,
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

/// A started session: N connected workers, ready to run phases (warm-up, measured runs).
/// Between phases every worker is idle, so the caller can read server counters that cover
/// exactly one phase. Stopped (its threads joined) by `stop` or when dropped.
pub trait Session: Send {
    /// How the connections were opened: how many, refused attempts retried, how long.
    fn connect_stats(&self) -> ConnectStats;
    /// Workers whose connection is still up.
    fn alive(&self) -> usize;
    /// A handle that ends this session's running phase early, from any thread.
    fn stop_handle(&mut self) -> StopHandle;
    /// One phase of `plan`: its length (or `events` operations over all workers, whichever
    /// comes first), per-interval samples, and the load's steps (their figures are in
    /// `PhaseResult::by_step`). `on_interval` sees each interval, with its merged latency
    /// histogram, as soon as every worker has moved past it (the collector has the histogram
    /// anyway; the live metrics add it to their fixed buckets); it is dropped after the call:
    /// the phase keeps only each interval's summary.
    fn phase_plan(
        &mut self,
        plan: &PhasePlan,
        on_interval: &mut dyn FnMut(&IntervalSample, &LatencyHist),
    ) -> Result<PhaseResult>;
    /// Stop every worker and join the client threads.
    fn stop(&mut self);
}

/// A boxed session is one too: a `&mut Box<dyn Session>` goes where a `&mut dyn Session` is
/// asked for (one more indirection per phase, none per operation).
impl<S: Session + ?Sized> Session for Box<S> {
    fn connect_stats(&self) -> ConnectStats {
        (**self).connect_stats()
    }
    fn alive(&self) -> usize {
        (**self).alive()
    }
    fn stop_handle(&mut self) -> StopHandle {
        (**self).stop_handle()
    }
    fn phase_plan(
        &mut self,
        plan: &PhasePlan,
        on_interval: &mut dyn FnMut(&IntervalSample, &LatencyHist),
    ) -> Result<PhaseResult> {
        (**self).phase_plan(plan, on_interval)
    }
    fn stop(&mut self) {
        (**self).stop()
    }
}

impl dyn Session + '_ {
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

    /// `phase`, with each interval's merged latency histogram given to `on_interval` too
    /// (as in `phase_plan`).
    pub fn phase_with_hists(
        &mut self,
        duration: Duration,
        events: Option<u64>,
        interval: Duration,
        mut on_interval: impl FnMut(&IntervalSample, &LatencyHist),
    ) -> Result<PhaseResult> {
        let plan = PhasePlan::simple(duration, events, interval);
        self.phase_plan(&plan, &mut on_interval)
    }
}

/// Ends a session's running phase from another thread: for a phase that lasts as long as
/// something the caller runs elsewhere (a second session's phases). The workers see it
/// through the phase's operation budget (the `--events` ticket each takes before an
/// operation), so a session that never asked for a handle pays nothing, and one that did pays
/// that one ticket per operation, as with `--events`.
#[derive(Clone, Default)]
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
        let mut s = self.state();
        match &s.budget {
            Some(b) => b.store(0, Ordering::Relaxed),
            None => s.requested = true,
        }
    }

    /// The session's side: a phase starts with operation budget `budget`, which `stop` empties
    /// (at once, if a stop came between phases).
    pub fn phase_started(&self, budget: &Arc<AtomicI64>) {
        let mut s = self.state();
        if std::mem::take(&mut s.requested) {
            budget.store(0, Ordering::Relaxed);
        }
        s.budget = Some(budget.clone());
    }

    /// The session's side: the phase is over; a `stop` from now on ends the next one.
    pub fn phase_ended(&self) {
        self.state().budget = None;
    }

    fn state(&self) -> std::sync::MutexGuard<'_, StopState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
