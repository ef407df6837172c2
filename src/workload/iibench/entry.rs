//! iibench in the registry: its options, the run shape it takes (one run bounded by rows or
//! time, one number of insert connections), and the contract that `run`, `prepare` and
//! `cleanup` call.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};

use super::options::{self, IibenchArgs};
use super::{Spec, NAME, TABLE};
use crate::contract::args;
use crate::contract::Harness;
use crate::contract::{Entry, Listing, PrepareCx, ResolveCx, Workload};
use crate::db::{Conn, TargetSpec};
use crate::error::{Error, Result};
use crate::model::LoadStats;

pub struct IibenchEntry;

/// The registry's line.
pub static ENTRY: IibenchEntry = IibenchEntry;

impl Entry for IibenchEntry {
    fn names(&self) -> Vec<&'static str> {
        vec![NAME]
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "iibench      iiBench: batched inserts into purchases_index with 3 secondary indexes, rate per window of rows (docs/iibench.md)".into(),
            operations: vec![(
                "insert".into(),
                "multi-row INSERTs of --rows-per-commit rows; --query-threads run the 3 iiBench queries".into(),
            )],
        }
    }
    fn label(&self) -> &'static str {
        "the iibench workload"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        IibenchArgs::augment_args(cmd)
    }
    fn resolve(
        &self,
        _name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        let a: IibenchArgs = args::of(m)?;
        let given = cx.shape.given;
        // --duration when given explicitly: a time bound.
        let time = given.duration.then_some(cx.shape.duration);
        let mut s = options::spec(
            &a,
            cx.seed,
            a.text.compressed_fraction.as_deref(),
            time,
            Some(cx.method),
        )?;
        // iibench is one run bounded by rows or time: no warm-up, no repeated runs, one
        // number of insert connections.
        let shape = &mut cx.shape;
        let warmup_given = given.warmup && shape.warmup > Duration::ZERO;
        if warmup_given || (given.runs && shape.runs != 1) || given.rate {
            return Err(Error::usage(
                "iibench is one run from an empty table: --warmup, --runs and --rate do not apply (bound it with --max-rows or --duration)",
            ));
        }
        if !given.threads {
            shape.threads = vec![1];
        }
        if shape.threads.len() != 1 {
            return Err(Error::usage(
                "--threads: iibench takes one number (its insert connections), not a list",
            ));
        }
        s.inserters = shape.threads[0];
        if let Some(sh) = cx.shard {
            if s.max_table_rows.is_some() {
                return Err(Error::usage(
                    "--max-table-rows with --shard: not supported yet (each shard's deletes would cover the other shards' rows); run it from one process",
                ));
            }
            s.shard = Some(sh);
        }
        shape.warmup = Duration::ZERO;
        shape.runs = 1;
        shape.size = 0;
        shape.duration = s.max_time.unwrap_or(Duration::ZERO);
        // One wake-up per batch of tens of milliseconds, so SCHED_BATCH saves nothing, and on
        // a loaded machine its wake-ups wait (measured: BENCHMARKS.md, iibench).
        shape.sched_batch = false;
        Ok(Arc::new(s))
    }
    fn report(&self) -> Option<&'static dyn crate::report::SectionOwner> {
        Some(&super::Report)
    }
}

impl Workload for Spec {
    fn name(&self) -> &str {
        NAME
    }
    fn operations(&self) -> Vec<String> {
        vec!["insert".to_string()]
    }
    fn main_table(&self) -> &str {
        TABLE
    }
    fn options(&self) -> serde_json::Value {
        Spec::options(self)
    }
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        Spec::notes(self)
    }
    fn partition(&self) -> Option<String> {
        let s = self.shard?;
        Some(format!(
            "the server numbers the rows (auto-increment transactionid), so no two shards insert the same key; shard {} inserts the contents of the fleet's rows {}, {}, ... (every {}th), --max-rows is the fleet's total and windows count the shard's own rows",
            s.index,
            s.index + 1,
            s.index + 1 + s.count,
            s.count
        ))
    }
    fn load_partition(&self) -> Option<String> {
        Some("shard 0 creates the empty table; nothing is loaded".into())
    }
    fn prepare<'a>(&'a self, cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
        super::prepare(cx.conn, cx.engine, cx.load, cx.fleet).boxed_local()
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        super::cleanup(conn).boxed_local()
    }
    /// One run from the empty table, its window curve saved as it grows.
    /// It runs by rows or tests, not by time.
    fn planned(&self, _run: &crate::contract::RunPlan) -> Option<std::time::Duration> {
        None
    }
    fn run(&self, h: &mut dyn Harness) -> Result<()> {
        super::run::measure(h, self)
    }
}
