//! compression in the registry: its options, and its run (per storage format: load, size,
//! then the read/write sweep on the format's table).

use std::sync::Arc;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};

use super::{formats, CompressionDriver, Spec, KINDS, NAME};
use crate::contract::args::{self, method_rows, SizeArgs, TextArgs};
use crate::contract::Harness;
use crate::contract::{Entry, Listing, PrepareCx, ResolveCx, Workload};
use crate::contract::{Session, SessionConfig};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::model::LoadStats;
use crate::report::SectionOwner;
use crate::runner;

/// compression's own options.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "compression options")]
pub struct CompressionArgs {
    #[command(flatten)]
    pub size: SizeArgs,
    #[command(flatten)]
    pub text: TextArgs,
    /// Storage formats to run, comma-separated (default: all the server offers; `enginebench
    /// list` names them).
    #[arg(long, value_name = "LIST")]
    pub queries: Option<String>,
}

pub struct CompressionEntry;

/// The registry's line.
pub static ENTRY: CompressionEntry = CompressionEntry;

impl Entry for CompressionEntry {
    fn names(&self) -> Vec<&'static str> {
        vec![NAME]
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "compression  the same log rows in every storage format: size, ratio to raw, load time, read/write speed".into(),
            operations: [Dbms::Mysql, Dbms::Postgres, Dbms::Sqlite]
                .iter()
                .map(|d| {
                    let names: Vec<&str> =
                        formats::for_dbms(*d).iter().map(|f| f.name).collect();
                    (d.name().to_string(), names.join(", "))
                })
                .collect(),
        }
    }
    fn label(&self) -> &'static str {
        "compression"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        CompressionArgs::augment_args(cmd)
    }
    fn resolve(
        &self,
        _name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        let a: CompressionArgs = args::of(m)?;
        if cx.engine.is_some() {
            return Err(Error::usage(
                "--engine does not apply to compression: it loads every storage format the server offers (pick formats with --queries)",
            ));
        }
        let size = a.size.rows(method_rows(cx.method))?;
        cx.shape.size = size;
        Ok(Arc::new(
            Spec::new(size, cx.seed, cx.dbms, a.queries.as_deref())?
                .with_text(a.text.compressed_fraction.as_deref())?,
        ))
    }
    fn report(&self) -> Option<&'static dyn SectionOwner> {
        Some(&super::Report)
    }
}

impl Workload for Spec {
    fn name(&self) -> &str {
        NAME
    }
    /// One operation per storage format.
    fn operations(&self) -> Vec<String> {
        Spec::operations(self)
    }
    fn kinds(&self) -> Vec<&'static str> {
        KINDS.to_vec()
    }
    /// Each format has its own table.
    fn main_table(&self) -> &str {
        ""
    }
    fn options(&self) -> serde_json::Value {
        Spec::options(self)
    }
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        Spec::notes(self)
    }
    /// Nothing to prepare: every format is loaded (and timed) during the run.
    fn prepare<'a>(&'a self, _cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
        async move {
            Err(Error::usage(format!(
                "{NAME} loads its tables during `run` (the load is part of the measurement): nothing to prepare"
            )))
        }
        .boxed_local()
    }
    fn loads_in_run(&self) -> bool {
        true
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        super::cleanup(conn).boxed_local()
    }
    fn start(
        &self,
        op: usize,
        threads: usize,
        target: &TargetSpec,
        cfg: &SessionConfig,
    ) -> Result<Box<dyn Session>> {
        let spec = self.clone();
        runner::start(target, cfg, move |w| {
            CompressionDriver::new(&spec, op, w, threads)
        })
    }
    /// Per format: load it and size it, then its read/write points (one format at a time, so
    /// each point's engine is the format's).
    /// It runs by rows or tests, not by time.
    fn planned(&self, _run: &crate::contract::RunPlan) -> Option<std::time::Duration> {
        None
    }
    fn run(&self, h: &mut dyn Harness) -> Result<()> {
        let (rt, cfg) = (h.rt(), h.settings());
        let mut report = super::start(self);
        for (i, f) in self.formats.iter().enumerate() {
            if interrupt::signal().is_some() {
                return Ok(());
            }
            let (load, server_pid) = (h.load().clone(), h.server_pid());
            let conn = h.conn()?;
            let loaded = rt.block_on(super::load_format(
                conn,
                &cfg.target,
                self,
                f,
                report.raw_bytes,
                &load,
                server_pid,
            ))?;
            h.doc().load.extend(loaded.load);
            let available = loaded.result.available;
            report.formats.push(loaded.result);
            h.doc().set_section(NAME, &report);
            h.save()?;
            if !available {
                continue;
            }
            h.set_table_engine(f.engine());
            let r = h.sweep_of(&self.only(i));
            if let Ok(conn) = h.conn() {
                rt.block_on(super::finish_format(conn, loaded.restore.as_deref()));
            }
            r?;
            super::fill_runs(&mut report, &h.doc().points);
            h.doc().set_section(NAME, &report);
            h.save()?;
        }
        Ok(())
    }
}
