//! sqlbench in the registry: its options, the checks of the common ones it does not take, and
//! the contract that `run` calls (it creates, fills and drops its tables itself).

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};
use serde::Serialize;

use super::{dry_run_text, Planned, Spec, GROUPS, NAME};
use crate::contract::args;
use crate::contract::Harness;
use crate::contract::{Entry, Listing, PrepareCx, Purpose, ResolveCx, Workload};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Error, Result};
use crate::model::LoadStats;

/// sql-bench's options (the sqlbench workload only).
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "sqlbench options")]
pub struct SqlbenchArgs {
    /// sqlbench: multiply every operation's test count by F (1 = the report's counts; each
    /// operation at least 1 test).
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    pub scale: f64,
    /// sqlbench: operations to run, comma-separated (`--dry-run` lists them) [default: all 95].
    #[arg(long, value_name = "LIST")]
    pub ops: Option<String>,
    /// sqlbench: groups to run, comma-separated: alter, atis, big-tables, connect, create,
    /// insert, select, transactions, wisconsin.
    #[arg(long, value_name = "LIST")]
    pub groups: Option<String>,
    /// sqlbench: run the suite on each of these MySQL/MariaDB engines in turn (one result,
    /// engines side by side), e.g. InnoDB,MyISAM,Aria,RocksDB.
    #[arg(long, value_name = "LIST")]
    pub engines: Option<String>,
    /// sqlbench: print the planned tests of every selected operation and their total; connect
    /// to nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub struct SqlbenchEntry;

/// The registry's line.
pub static ENTRY: SqlbenchEntry = SqlbenchEntry;

impl Entry for SqlbenchEntry {
    fn takes_threads(&self) -> bool {
        false
    }

    fn names(&self) -> Vec<&'static str> {
        vec![NAME]
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "sqlbench     MySQL's sql-bench: 95 named operations, seconds per operation (docs/sqlbench.md)".into(),
            operations: vec![(
                "groups".into(),
                format!("{} (--dry-run lists every operation)", GROUPS.join(", ")),
            )],
        }
    }
    fn label(&self) -> &'static str {
        "the sqlbench workload"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        SqlbenchArgs::augment_args(cmd)
    }
    fn resolve(
        &self,
        _name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        if cx.purpose != Purpose::Run {
            return Err(Error::usage(
                "sqlbench creates, fills and drops its tables itself during `run sqlbench`: there is nothing to prepare or clean up",
            ));
        }
        let a: SqlbenchArgs = args::of(m)?;
        // Flags of `run` that mean nothing to a count-based sequential suite.
        let g = cx.shape.given;
        let unused = [
            (g.threads, "--threads"),
            (g.duration, "--duration"),
            (g.warmup, "--warmup"),
            (g.runs, "--runs"),
            (g.rate, "--rate"),
            (g.pin, "--pin"),
        ];
        for (given, flag) in unused {
            if given {
                return Err(Error::usage(format!(
                    "{flag} does not apply to sqlbench: it runs a fixed number of tests per operation, one after the other (size it with --scale)"
                )));
            }
        }
        let spec = Spec::parse(
            a.scale,
            a.ops.as_deref(),
            a.groups.as_deref(),
            a.engines.as_deref(),
        )?;
        if !spec.engines.is_empty() {
            if cx.dbms != Dbms::Mysql {
                return Err(Error::usage(format!(
                    "--engines applies to MySQL/MariaDB targets only; {} has no storage-engine choice",
                    cx.dbms.name()
                )));
            }
            if cx.engine.is_some() {
                return Err(Error::usage("give either --engine or --engines, not both"));
            }
        }
        // One work connection at a time, no timed phases.
        let shape = &mut cx.shape;
        shape.threads = vec![1];
        shape.warmup = Duration::ZERO;
        shape.duration = Duration::ZERO;
        shape.runs = 1;
        shape.size = 0;
        Ok(Arc::new(Sqlbench {
            plan: spec.plan(),
            spec,
            dry_run: a.dry_run,
        }))
    }
    fn report(&self) -> Option<&'static dyn crate::report::SectionOwner> {
        Some(&super::Report)
    }
}

/// The resolved sqlbench run: the selection and its planned tests.
#[derive(Debug, Clone)]
pub struct Sqlbench {
    pub spec: Spec,
    /// The selected operations with their tests, in run order.
    pub plan: Vec<Planned>,
    /// `--dry-run`: print the plan, connect to nothing.
    pub dry_run: bool,
}

/// The result's workload options: scale, engines, and the planned tests per selected operation.
#[derive(Serialize)]
struct Options<'a> {
    #[serde(flatten)]
    spec: &'a Spec,
    plan: &'a [Planned],
}

impl Workload for Sqlbench {
    fn name(&self) -> &str {
        NAME
    }
    fn operations(&self) -> Vec<String> {
        self.spec.operations.clone()
    }
    /// Each engine has its own tables: the result's target names the engines.
    fn main_table(&self) -> &str {
        ""
    }
    fn options(&self) -> serde_json::Value {
        serde_json::to_value(Options {
            spec: &self.spec,
            plan: &self.plan,
        })
        .expect("options serialize")
    }
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        self.spec.notes()
    }
    /// Never called: the groups create and fill their tables during `run`.
    fn prepare<'a>(&'a self, _cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
        async { Ok(Vec::new()) }.boxed_local()
    }
    fn loads_in_run(&self) -> bool {
        true
    }
    /// Nothing: every group drops what it created.
    fn cleanup<'a>(&'a self, _conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        async { Ok(()) }.boxed_local()
    }
    fn preview(&self) -> Option<String> {
        self.dry_run.then(|| dry_run_text(&self.spec))
    }
    /// The engines are known once connected: `run` names them on a line of their own.
    fn plan_line(&self) -> Option<String> {
        Some(format!(
            "sqlbench: {} operation(s), {} tests per engine (--scale {})",
            self.plan.len(),
            self.plan.iter().map(|p| p.tests).sum::<u64>(),
            self.spec.scale
        ))
    }
    /// It runs by rows or tests, not by time.
    fn planned(&self, _run: &crate::contract::RunPlan) -> Option<std::time::Duration> {
        None
    }
    fn run(&self, h: &mut dyn Harness) -> Result<()> {
        super::run::run(&self.spec, h)
    }
}
