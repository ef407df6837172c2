//! The harness's side of a run: `Bench` holds what the lifecycle set up (the configuration,
//! the admin connection, the live outputs, the result and its file) and implements the
//! contract's `Harness`, the one face a workload's `run` sees.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::{note_loops, sweep};
use crate::config::RunConfig;
use crate::contract::{
    Access, Harness, MeasureBody, Pacing, RunSettings, Session, SessionConfig, Span, Watch,
    Workload,
};
use crate::db::Conn;
use crate::error::{Error, Result};
use crate::live::Live;
use crate::model::{IntervalSample, LoadOptions, PhaseInfo, PhaseResult, ResultDoc, RunRecord};
use crate::report;
use crate::runner::admin::Admin;

/// One run's harness: what `run` set up for the workload, and the result being written.
pub struct Bench<'a> {
    pub cfg: &'a RunConfig,
    /// What a workload reads of `cfg` (`Harness::settings`).
    pub settings: &'a RunSettings,
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
    /// The result file's path.
    pub path: PathBuf,
    /// The server process to sample per run (managed, or --server-pid).
    pub server_pid: Option<u32>,
    /// The benchmark table's engine, for SHOW ENGINE ... STATUS.
    pub table_engine: String,
    /// The live outputs (progress, `--format jsonl`, `--metrics-addr`): every measured phase
    /// goes through `live.phase`.
    pub live: Live,
    /// Set by `sweep_me`: the harness sweeps the workload once `run` returns.
    pub sweep_asked: bool,
}

impl Bench<'_> {
    /// Write the result as it is now (atomically: a reader never sees half a file).
    pub fn save(&mut self) -> Result<()> {
        if let Some(c) = self.doc.client.as_mut() {
            note_loops(c, crate::db::ring::loop_paths());
        }
        report::json::write_atomic(&self.path, &self.doc)
    }
    /// The admin connection (an error once it was lost).
    pub fn conn(&mut self) -> Result<&mut Conn> {
        self.admin
            .conn_mut()
            .ok_or_else(|| Error::run("the admin connection to the target was lost"))
    }
    /// The run's workload swept: every operation x thread count on the shared runner.
    pub fn sweep(&mut self) -> Result<()> {
        let w = self.workload.clone();
        sweep::sweep(self, w.as_ref())
    }
    /// The sweep of another workload value (a part of it, e.g. one storage format at a time).
    pub fn sweep_of(&mut self, w: &dyn Workload) -> Result<()> {
        sweep::sweep(self, w)
    }
}

/// What a workload reads of the run's configuration.
pub(super) fn settings_of(cfg: &RunConfig) -> RunSettings {
    RunSettings {
        workload: cfg.workload.clone(),
        target: cfg.target_spec.clone(),
        threads: cfg.threads.clone(),
        engine: cfg.engine.clone(),
        pacing: cfg.pacing,
        report_interval: cfg.report_interval(),
        extra_percentiles: cfg.extra_percentiles.clone(),
        profile_hz: cfg.profile_hz,
    }
}

impl<'a> Harness<'a> for Bench<'a> {
    fn settings(&self) -> &'a RunSettings {
        self.settings
    }
    fn rt(&self) -> &'a tokio::runtime::Runtime {
        self.rt
    }
    fn workload(&self) -> Arc<dyn Workload> {
        self.workload.clone()
    }
    fn load(&self) -> &LoadOptions {
        &self.load
    }
    fn engine(&self) -> Option<&str> {
        self.engine.as_deref()
    }
    fn table_engine(&self) -> &str {
        &self.table_engine
    }
    fn set_table_engine(&mut self, engine: &str) {
        self.table_engine = engine.to_string();
    }
    fn server_pid(&self) -> Option<u32> {
        self.server_pid
    }
    fn doc(&mut self) -> &mut ResultDoc {
        &mut self.doc
    }
    fn save(&mut self) -> Result<()> {
        Bench::save(self)
    }
    fn conn(&mut self) -> Result<&mut Conn> {
        Bench::conn(self)
    }
    fn sweep(&mut self) -> Result<()> {
        Bench::sweep(self)
    }
    fn sweep_of(&mut self, w: &dyn Workload) -> Result<()> {
        Bench::sweep_of(self, w)
    }
    fn sweep_me(&mut self) {
        self.sweep_asked = true;
    }
    fn phase(
        &mut self,
        name: &str,
        op: usize,
        threads: usize,
        duration: Duration,
    ) -> Result<Option<RunRecord>> {
        Bench::phase(self, name, op, threads, duration)
    }
    fn measure_boxed(
        &mut self,
        name: &str,
        threads: usize,
        body: MeasureBody<'a, '_>,
    ) -> Result<RunRecord> {
        Bench::measure(self, name, threads, |b| body(b))
    }
    fn span(&self) -> Span {
        Bench::span(self)
    }
    fn session_config(&self, threads: usize, pacing: Pacing, access: Access) -> SessionConfig {
        SessionConfig {
            threads,
            client_threads: self.cfg.client_threads,
            sched_batch: self.cfg.sched_batch,
            pacing,
            faults: self.cfg.faults(),
            access,
            first_worker: self.cfg.first_worker(threads),
        }
    }
    fn watch(&self) -> Arc<dyn Watch> {
        Arc::new(self.live.clone())
    }
    fn meet(&mut self, point: u32) -> Result<bool> {
        let (cfg, rt) = (self.cfg, self.rt);
        match &cfg.fleet {
            Some(f) => {
                rt.block_on(crate::fleet::meet(f, Bench::conn(self)?, point))?;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

// A workload's own sessions reach the live outputs as the sweep's do.
impl Watch for Live {
    fn phase(
        &self,
        session: &mut dyn Session,
        info: &PhaseInfo,
        w: &dyn Workload,
        duration: Duration,
        events: Option<u64>,
        interval: Duration,
        on_interval: &mut dyn FnMut(&IntervalSample),
    ) -> Result<PhaseResult> {
        Live::phase(
            self,
            session,
            info,
            w,
            duration,
            events,
            interval,
            on_interval,
        )
    }
}
