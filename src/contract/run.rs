//! What a workload's `run` works with: the `Harness`, a trait the harness (a floor above)
//! implements. It gives the run's settings, the admin connection, the loader's options and the
//! result being written, and measures phases: the shared sweep (`sweep`, `sweep_of`, or
//! `sweep_me` to have it once `run` returns), `phase` (one run of an operation on the shared
//! runner, as the sweep measures it), `measure` (a phase the workload drives itself, counted in
//! a `Tally`) and `span` (a span it measures and records itself, `Span`). Host and server CPU,
//! disturbance, counters, live output and the record are the harness's business; a workload
//! that runs sessions of its own shows them live through `watch`.

use std::sync::Arc;
use std::time::Duration;

use super::{Access, Pacing, Session, SessionConfig, Workload};
use crate::db::{Conn, TargetSpec};
use crate::error::Result;
// What a workload's own phases count and sample is measured on a floor below.
pub use crate::measure::{Counted, HostSample, Tally};
use crate::model::{IntervalSample, LoadOptions, PhaseInfo, PhaseResult, ResultDoc, RunRecord};

/// What a workload's run reads of the run's settings (the harness fills it from the command
/// line and the managed server).
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The workload's name as the command named it.
    pub workload: String,
    pub target: TargetSpec,
    /// `--threads`: the thread counts, in order.
    pub threads: Vec<usize>,
    /// `--engine` as given (None: the server's default).
    pub engine: Option<String>,
    /// When operations start (`--rate`, `--arrivals`; closed loop by default).
    pub pacing: Pacing,
    /// Live outputs' and the time series' interval (`--report-interval`).
    pub report_interval: Duration,
    /// Percentiles reported beyond the standard ones (`--percentile`).
    pub extra_percentiles: Vec<f64>,
    /// The server's CPU profile's sampling rate (`--profile-server`), if one is taken.
    pub profile_hz: Option<u32>,
}

/// What a workload's run shape works with (`Workload::run`). `'a` is the run's: the settings
/// and the runtime outlive every borrow of the harness.
pub trait Harness<'a> {
    /// The run's settings.
    fn settings(&self) -> &'a RunSettings;
    /// The runtime the admin connection and a workload's own connections run on.
    fn rt(&self) -> &'a tokio::runtime::Runtime;
    /// The workload being run.
    fn workload(&self) -> Arc<dyn Workload>;
    /// The loader's options, for workloads that load during the run.
    fn load(&self) -> &LoadOptions;
    /// `--engine` as the server spells it.
    fn engine(&self) -> Option<&str>;
    /// The benchmark table's engine, for SHOW ENGINE ... STATUS.
    fn table_engine(&self) -> &str;
    /// Another table engine from here on (a workload that measures one format at a time).
    fn set_table_engine(&mut self, engine: &str);
    /// The server process sampled per run (managed, or --server-pid).
    fn server_pid(&self) -> Option<u32>;
    /// The result so far; `save` writes it.
    fn doc(&mut self) -> &mut ResultDoc;
    /// Write the result as it is now (atomically: a reader never sees half a file).
    fn save(&mut self) -> Result<()>;
    /// The admin connection (an error once it was lost).
    fn conn(&mut self) -> Result<&mut Conn>;
    /// The run's workload swept: every operation x thread count on the shared runner.
    fn sweep(&mut self) -> Result<()>;
    /// The sweep of another workload value (a part of it, e.g. one storage format at a time).
    fn sweep_of(&mut self, w: &dyn Workload) -> Result<()>;
    /// Ask for the shared sweep once `run` returns: what a workload without phases of its
    /// own does.
    fn sweep_me(&mut self);
    /// One measured run of operation `op` of the run's workload at `threads` connections for
    /// `duration` on the shared runner, measured as the sweep measures its runs; it lands in
    /// the result as point `name` (saved) and its record is returned. None when a signal
    /// ended it before anything ran; an error when every connection was lost (the point is
    /// kept).
    fn phase(
        &mut self,
        name: &str,
        op: usize,
        threads: usize,
        duration: Duration,
    ) -> Result<Option<RunRecord>>;
    /// `measure` with its body boxed (call `measure`).
    fn measure_boxed(
        &mut self,
        name: &str,
        threads: usize,
        body: MeasureBody<'a, '_>,
    ) -> Result<RunRecord>;
    /// A span the workload measures and records itself, begun now (`Span::record` ends it).
    fn span(&self) -> Span;
    /// How a session of the workload's own lays out `threads` connections (client threads,
    /// faults, a fleet's numbering), as the sweep's sessions.
    fn session_config(&self, threads: usize, pacing: Pacing, access: Access) -> SessionConfig;
    /// The live outputs, for phases of sessions the workload runs itself.
    fn watch(&self) -> Arc<dyn Watch>;
    /// A shard of a fleet meets the other shards before measured point `point` (they start
    /// together); false without a fleet.
    fn meet(&mut self, point: u32) -> Result<bool>;
}

/// A self-driven phase's body (`Harness::measure`), boxed for the trait object.
pub type MeasureBody<'a, 'b> = Box<dyn FnOnce(&mut dyn Harness<'a>) -> Result<Tally> + 'b>;

impl<'a> dyn Harness<'a> + '_ {
    /// A phase the workload drives itself: `body` runs it (on `conn()`, or connections of
    /// its own) and returns what it counted; the harness measures the time, the CPU of the
    /// client, the server and the host, and the server's counters around it. It lands in
    /// the result as point `name` at `threads` connections (saved); its record is returned.
    pub fn measure<F>(&mut self, name: &str, threads: usize, body: F) -> Result<RunRecord>
    where
        F: FnOnce(&mut dyn Harness<'a>) -> Result<Tally>,
    {
        self.measure_boxed(name, threads, Box::new(body))
    }
}

/// The live outputs (progress, `--format jsonl`, `--metrics-addr`) as a workload's own
/// session phases reach them: each phase is seen by every output, and `on_interval` is the
/// caller's own per-interval work.
pub trait Watch: Send + Sync {
    #[allow(clippy::too_many_arguments)]
    fn phase(
        &self,
        session: &mut dyn Session,
        info: &PhaseInfo,
        w: &dyn Workload,
        duration: Duration,
        events: Option<u64>,
        interval: Duration,
        on_interval: &mut dyn FnMut(&IntervalSample),
    ) -> Result<PhaseResult>;
}

/// A span a workload measures itself (a sql-bench run, an iiBench run of windows, a
/// schema-change timeline): the host, this process and the server sampled at its start
/// (`Harness::span`); `Span::sample` and `Span::record` (the harness's) end it.
pub struct Span {
    pub start: HostSample,
    pub(crate) server_pid: Option<u32>,
    pub(crate) disturbed_above_cpus: f64,
}
