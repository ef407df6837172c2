//! What a workload's `run` works with: the pieces of the harness a workload may use. The
//! harness (a floor above) builds it and implements its methods: `save`, `conn`, `sweep`,
//! `sweep_of`, and the measured phases of a workload's own: `phase` (one run of an operation
//! on the shared runner, as the sweep measures it), `measure` (a phase the workload drives
//! itself, counted in a `Tally`) and `span` (a span it measures and records itself, `Span`).
//! Host and server CPU, disturbance, counters, live output and the record are the harness's
//! business. A workload asks for the shared sweep with `sweep_me`.

use std::path::PathBuf;
use std::sync::Arc;

use super::Workload;
// What a workload's own phases count and sample is measured on a floor below.
use crate::config::RunConfig;
use crate::live::Live;
pub use crate::measure::{Counted, HostSample, Tally};
use crate::model::LoadOptions;
use crate::model::ResultDoc;
use crate::runner::admin::Admin;

/// What a workload's run shape works with: the configuration, the admin connection, the
/// loader's options and the result being written.
pub struct Harness<'a> {
    pub cfg: &'a RunConfig,
    /// The workload being run.
    pub workload: Arc<dyn Workload>,
    pub rt: &'a tokio::runtime::Runtime,
    pub admin: Admin,
    /// The loader's options, for workloads that load during the run.
    pub load: LoadOptions,
    /// `--engine` as the server spells it.
    pub engine: Option<String>,
    /// The result so far; `save` writes it.
    pub doc: ResultDoc,
    /// The result file's path (`path()`).
    pub(crate) path: PathBuf,
    /// The server process to sample per run (managed, or --server-pid).
    pub server_pid: Option<u32>,
    /// The benchmark table's engine, for SHOW ENGINE ... STATUS.
    pub table_engine: String,
    /// The live outputs (progress, `--format jsonl`, `--metrics-addr`): every measured phase
    /// goes through `live.phase`.
    pub live: Live,
    /// Set by `sweep_me`: the harness sweeps the workload once `run` returns.
    pub(crate) sweep_asked: bool,
}

impl Harness<'_> {
    /// Ask the harness for the shared sweep (every operation x thread count on the shared
    /// runner) once `run` returns: what a workload without phases of its own does.
    pub fn sweep_me(&mut self) {
        self.sweep_asked = true;
    }
}

/// A span a workload measures itself (a sql-bench run, an iiBench run of windows, a
/// schema-change timeline): the host, this process and the server sampled at its start
/// (`Harness::span`); `Span::sample` and `Span::record` (the harness's) end it.
pub struct Span {
    pub start: HostSample,
    pub(crate) server_pid: Option<u32>,
    pub(crate) disturbed_above_cpus: f64,
}
