//! The workload contract: what every workload is (`Entry`, `Workload`), what it sees while it
//! resolves, prepares, checks and runs (the contexts), the options every workload shares
//! (`args`), the shard keys, and the SQL helpers workloads share (`sql`: DDL files split into
//! table and index statements, the metadata table that says what was loaded, post-load
//! housekeeping). It knows no workload and nothing above it: the harness drives a workload
//! through `Workload::run` and the `Harness` context defined here; the registry
//! (`crate::registry`) names the workloads.
//!
//! Adding a workload: its folder under `src/workload/` (options, resolve, drivers, report
//! sections) and one line in `crate::registry::builtins()`; docs/architecture.md has the list.

pub mod args;
mod driver;
pub mod parse;
mod run;
pub mod shard;
mod sql;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::LocalBoxFuture;

use crate::model::LoadOptions;

/// A kind of workload in the registry: what `list`, `--help` and the commands find by name.
pub trait Entry: Sync {
    /// Every name it answers to, in `list` order (the sysbench family has eleven, workload
    /// files one per built-in file).
    fn names(&self) -> Vec<&'static str>;
    /// `list`: a heading and the operations (name, what it does).
    fn listing(&self) -> Listing;
    /// Who to name when another workload is given one of its options ("the tpcc workload").
    fn label(&self) -> &'static str;
    /// Adds its own options (a clap `Args` struct) to a command that has the common ones.
    fn args(&self, cmd: clap::Command) -> clap::Command;
    /// Builds workload `name` from the parsed options (its own and the common ones in `m`),
    /// checks them (no I/O) and adjusts the run's shape to its defaults.
    fn resolve(
        &self,
        name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>>;
    /// True when it takes a command without a workload name (a workload file: `run
    /// --workload-file FILE`).
    fn claims_unnamed(&self, _argv: &[String]) -> bool {
        false
    }
    /// False when its workloads run on one connection by count and refuse `--threads`
    /// (sql-bench): a suite then passes no `--threads`, and its sections take `threads = [1]`.
    fn takes_threads(&self) -> bool {
        true
    }
    /// Its workloads' consistency conditions in a few words, when they have some (`check`;
    /// `check --help` lists them).
    fn check_conditions(&self) -> Option<&'static str> {
        None
    }
    /// What it adds to the outputs of its results (HTML sections, terminal lines, tables).
    fn report(&self) -> Option<&'static dyn SectionOwner> {
        None
    }
}

/// `list`'s lines of one registry entry.
pub struct Listing {
    pub heading: String,
    pub operations: Vec<(String, String)>,
}

// The resolve context and the run's shape are plain settings that the config builds and reads
// back, so they live in the model, below both.
pub use crate::model::{Given, Purpose, ResolveCx, Shape};
// A fleet's steps in a prepare (`PrepareCx::fleet`), implemented by the fleet's meeting.
pub use crate::model::fleet_load::{FleetLoad, Role};
pub use run::{Counted, Harness, HostSample, MeasureBody, RunSettings, Span, Tally, Watch};
// A workload's whole interface in one place, so that a workload written outside enginebench
// imports the contract (and `runner::start` for its workers): what the methods above take and
// return, what its drivers run on (`Driver`, `Step`, the connection), the session its `start`
// returns (`Session`, a phase's `PhaseResult`) and what its report sections read (the result
// model, `SectionOwner`, `Labeled`).
pub use crate::db::{Conn, DbError, DbResult, StmtId, TargetSpec, Value};
pub use crate::error::{Error, Result};
pub use crate::model::{
    KindTick, Labeled, LoadStats, Pacing, PhaseResult, Point, ResultDoc, RunRecord, SectionOwner,
};
pub use driver::{Access, Driver, Session, SessionConfig, Step, StopHandle};

/// What `prepare` gets.
pub struct PrepareCx<'a> {
    pub conn: &'a mut Conn,
    pub target: &'a TargetSpec,
    /// The storage engine to create tables with (checked against the server).
    pub engine: Option<&'a str>,
    pub load: &'a LoadOptions,
    /// `prepare --shard I/N` (or a fleet's run finding its tables missing): this process
    /// loads its share with the other shards (`model::fleet_load`'s steps, begin .. done); `load.shard`
    /// is set too. None: one process prepares alone.
    pub fleet: Option<&'a dyn FleetLoad>,
}

/// What `Workload::planned` reads of a run's configuration: the thread counts, the warm-up,
/// a measured run's length and how many runs.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub threads: Vec<usize>,
    pub warmup: Duration,
    pub duration: Duration,
    pub runs: u32,
}

/// The outcome of `check`: every failed condition, and the line that sums it up.
pub struct Checked {
    pub failures: Vec<String>,
    pub summary: String,
}

/// A resolved workload: its options checked, ready to prepare and run. Every workload (built
/// in, a workload file, or one registered by a program that embeds enginebench) is one.
pub trait Workload: Send + Sync + 'static {
    fn name(&self) -> &str;
    /// The operations measured one after the other (one point per operation and thread count).
    fn operations(&self) -> Vec<String>;
    /// The kinds of operation a step reports (`Step::kind` indexes this list); results break
    /// counts and latencies down by kind when there is more than one.
    fn kinds(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// The table whose storage engine the result reports ("" when there is no single one).
    fn main_table(&self) -> &str;
    /// Its options for the result's config (beyond the common ones). What differs between the
    /// shards of a fleet goes under the key "shard" (the merge compares the rest).
    fn options(&self) -> serde_json::Value;
    /// How a fleet's shards split this workload (`--shard I/N`), in one line for the result;
    /// None when it cannot be split: `run --shard` then refuses it (exit 2) rather than run it
    /// twice over.
    fn partition(&self) -> Option<String> {
        None
    }
    /// How a fleet's shards split its `prepare` (`prepare --shard I/N`), in one line; None
    /// when they cannot: `prepare --shard` then refuses it (exit 2) rather than load it twice.
    /// A workload that can follows the steps of `model::fleet_load` (begin, tables_ready,
    /// loaded, done) and loads through `crate::load`, which takes the shard's ids.
    fn load_partition(&self) -> Option<String> {
        None
    }
    /// Where each of its tables lives on a sharded target (a Spider head and its backends,
    /// `shard::Placement`): every table its `prepare` creates, split by an integer column or
    /// kept on the head. None, the default, makes a Spider target refuse it (exit 2); a
    /// workload that declares keys creates and loads its tables through `workload::place`.
    fn shard_keys(&self) -> Option<shard::ShardKeys> {
        None
    }
    /// What is approximate or differs from the original, for the result's notes.
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        Vec::new()
    }
    /// Create and load the tables unless identical ones are there; returns what was loaded.
    fn prepare<'a>(&'a self, cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>>;
    /// True when it loads during `run` (the load is part of what it measures): `run` does not
    /// call `prepare` first.
    fn loads_in_run(&self) -> bool {
        false
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>>;
    /// Its consistency conditions, if it has any.
    fn check<'a>(&'a self, _conn: &'a mut Conn) -> Option<LocalBoxFuture<'a, Result<Checked>>> {
        None
    }
    /// Connect `threads` workers running operation `op`. Each builds its driver inside its own
    /// thread (the runner's workers, generic over the workload's driver type: no virtual call
    /// per step); the session they make is called once per phase.
    fn start(
        &self,
        _op: usize,
        _threads: usize,
        _target: &TargetSpec,
        _cfg: &SessionConfig,
    ) -> Result<Box<dyn Session>> {
        Err(Error::usage(format!(
            "{} has no operations to sweep",
            self.name()
        )))
    }
    /// Whether operation `op` only reads: a target with `?read=replicas` then sends its
    /// connections to the replicas (every other operation goes to the primary).
    fn access(&self, _op: usize) -> Access {
        Access::ReadWrite
    }
    /// The length of operation `op` when the workload sets it (a workload file's phase).
    fn phase_duration(&self, _op: usize) -> Option<Duration> {
        None
    }
    /// The pacing of operation `op` when the workload sets it (a phase's rate).
    fn phase_pacing(&self, _op: usize) -> Option<Pacing> {
        None
    }
    /// Printed instead of running (sqlbench's --dry-run): nothing is connected.
    fn preview(&self) -> Option<String> {
        None
    }
    /// The run's plan line, when the generic one (operations x threads x runs) does not fit.
    fn plan_line(&self) -> Option<String> {
        None
    }
    /// The run: by default a sweep of operations x thread counts on the shared runner; a
    /// workload with phases of its own (iibench, schema-change, compression, sqlbench) builds
    /// them from the harness's pieces.
    fn run(&self, h: &mut dyn Harness) -> Result<()> {
        h.sweep_me();
        Ok(())
    }
    /// How long its measured phases take in `run` (loads not included), for the estimate a
    /// suite prints before it starts; None when it runs by rows or tests, not by time. The
    /// default is the sweep's: per operation and thread count, the warm-up and the runs.
    fn planned(&self, run: &RunPlan) -> Option<Duration> {
        let mut total = Duration::ZERO;
        for i in 0..self.operations().len() {
            let one = self.phase_duration(i).unwrap_or(run.duration);
            total += (run.warmup + one * run.runs) * run.threads.len() as u32;
        }
        Some(total)
    }
    /// Its derived figures of one measured run at `threads` connections (TPC-C: tpmC and its
    /// constraints), from the run's common record; returns lines to print with the run's line.
    fn derive(&self, _threads: usize, _run: &mut RunRecord) -> Vec<String> {
        Vec::new()
    }
    /// Its figures of one interval (TPC-C: tpmC), from the per-kind counts.
    fn interval_figures(&self, _kinds: &[KindTick], _len_s: f64) -> Vec<(String, f64)> {
        Vec::new()
    }
}

pub use sql::*;
