//! Workload files in the registry: the built-in files (ycsb-a..f, tpcb) by name, and your own
//! with `--workload-file FILE`; their options, and the contract that `run`, `prepare` and
//! `cleanup` call.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};

use super::{file, CustomDriver, Spec, BUILTINS};
use crate::contract::args::{self, TextArgs};
use crate::contract::{Entry, Listing, PrepareCx, ResolveCx, Workload};
use crate::contract::{Session, SessionConfig};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::Result;
use crate::model::LoadStats;
use crate::model::Pacing;
use crate::runner;

/// The options of workload files.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "workload file options")]
pub struct CustomArgs {
    /// Run your own workload file (TOML: tables, generators, transactions; see
    /// `enginebench init-workload` and docs/workload-files.md) instead of a named workload.
    #[arg(long, value_name = "FILE")]
    pub workload_file: Option<String>,
    /// Workload files: set a variable of the file (repeatable), e.g. --var scale=10 for tpcb,
    /// --var recordcount=1M for ycsb-*.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    #[command(flatten)]
    pub text: TextArgs,
}

pub struct CustomEntry;

/// The registry's line.
pub static ENTRY: CustomEntry = CustomEntry;

impl Entry for CustomEntry {
    fn names(&self) -> Vec<&'static str> {
        super::names().collect()
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "workload files (workloads/*.toml, built in; your own: --workload-file FILE, see `enginebench init-workload`)".into(),
            operations: BUILTINS
                .iter()
                .map(|(name, text)| {
                    let desc = file::parse(name, text, &[], 1)
                        .map(|s| s.description)
                        .unwrap_or_default();
                    (name.to_string(), desc)
                })
                .collect(),
        }
    }
    fn label(&self) -> &'static str {
        "workload files (--workload-file, ycsb-*, tpcb)"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        CustomArgs::augment_args(cmd)
    }
    fn claims_unnamed(&self, argv: &[String]) -> bool {
        argv.iter()
            .any(|a| a == "--workload-file" || a.starts_with("--workload-file="))
    }
    fn resolve(
        &self,
        name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        let a: CustomArgs = args::of(m)?;
        let spec = super::resolve(name, a.workload_file.as_deref(), &a.vars, cx.seed)?
            .with_compressed_fraction(a.text.compressed_fraction.as_deref())?;
        // A workload file's size is its largest table's rows.
        cx.shape.size = spec.main_rows();
        Ok(Arc::new(spec))
    }
}

impl Workload for Spec {
    fn name(&self) -> &str {
        self.name_static
    }
    fn operations(&self) -> Vec<String> {
        Spec::operations(self)
    }
    fn kinds(&self) -> Vec<&'static str> {
        self.kinds.clone()
    }
    fn main_table(&self) -> &str {
        self.main_table_static
    }
    fn options(&self) -> serde_json::Value {
        Spec::options(self)
    }
    fn notes(&self, target: &TargetSpec) -> Vec<String> {
        let mut n = Spec::notes(self);
        let piped: Vec<&str> = self
            .txns
            .iter()
            .filter(|t| t.pipeline && t.transaction)
            .map(|t| t.name.as_str())
            .collect();
        if !piped.is_empty() {
            let on = target.dbms == Dbms::Postgres
                && target.pg_driver == crate::db::url::PgDriver::Wire
                && target.pipeline_statements;
            n.push(format!(
                "{}: transactions {} are marked `pipeline`: {}",
                self.name,
                piped.join(", "),
                if on {
                    "statements without captures were written without waiting for the previous reply (one Sync for each run of them; docs/workload-files.md, \"Pipelined statements\"), so such a transaction took one round trip (with BEGIN sent alongside) instead of one per statement"
                } else {
                    "this run sent them one at a time (pipelining applies to the PostgreSQL lean client only, and ?pipeline=off turns it off)"
                }
            ));
        }
        n
    }
    fn prepare<'a>(&'a self, cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
        Spec::prepare(self, cx.conn, cx.target, cx.engine, cx.load).boxed_local()
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        Spec::cleanup(self, conn).boxed_local()
    }
    /// An operation (phase) is read-only when every transaction it runs (weight above 0)
    /// has only SELECT statements (YCSB's workload C, the read phases of a file).
    fn access(&self, op: usize) -> crate::contract::Access {
        let weights = self.weights(op);
        let writes = self
            .txns
            .iter()
            .zip(weights)
            .any(|(t, w)| w > 0 && t.writes);
        if writes {
            crate::contract::Access::ReadWrite
        } else {
            crate::contract::Access::ReadOnly
        }
    }
    fn start(
        &self,
        op: usize,
        threads: usize,
        target: &TargetSpec,
        cfg: &SessionConfig,
    ) -> Result<Box<dyn Session>> {
        // The clone shares the client's insert counters (`inserted` is one Arc) and text
        // generators with every other operation of the run.
        let spec = Arc::new(self.clone());
        runner::start(target, cfg, move |w| {
            CustomDriver::new(spec.clone(), op, w, threads)
        })
    }
    fn phase_duration(&self, op: usize) -> Option<Duration> {
        Spec::phase_duration(self, op)
    }
    fn phase_pacing(&self, op: usize) -> Option<Pacing> {
        Spec::phase_pacing(self, op)
    }
}
