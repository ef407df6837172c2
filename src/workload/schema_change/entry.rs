//! schema-change in the registry: its options (the timeline's windows, the algorithms, and
//! the options of the OLTP workload that runs meanwhile), and the contract that `run` and
//! `cleanup` call.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};

use super::{algorithms, Spec, NAME};
use crate::contract::args::{self, method_rows, SizeArgs, TextArgs};
use crate::contract::Harness;
use crate::contract::{Entry, Listing, PrepareCx, ResolveCx, Workload};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Error, Result};
use crate::model::LoadStats;
use crate::units;
use crate::workload::sbtest::{self, args::OltpArgs};

/// schema-change's own options, and those of the OLTP workload it runs (`--during`).
#[derive(Debug, Clone, Args)]
pub struct SchemaChangeArgs {
    #[command(flatten)]
    pub size: SizeArgs,
    #[command(flatten)]
    pub text: TextArgs,
    /// Algorithms to run, comma-separated (default: all of the DBMS's, in order; `enginebench
    /// list` names them).
    #[arg(long, value_name = "LIST", help_heading = "schema-change options")]
    pub queries: Option<String>,
    /// schema-change: how long the workload runs before the ADD COLUMN (T1) [default: 5s].
    #[arg(long, value_name = "DURATION", help_heading = "schema-change options")]
    pub before: Option<String>,
    /// schema-change: how long the workload runs after each DDL returns (T2) [default: 5s].
    #[arg(long, value_name = "DURATION", help_heading = "schema-change options")]
    pub after: Option<String>,
    /// schema-change: the OLTP workload that runs while the table is altered
    /// [default: oltp_insert].
    #[arg(long, value_name = "WORKLOAD", help_heading = "schema-change options")]
    pub during: Option<String>,
    #[command(flatten)]
    pub oltp: OltpArgs,
}

pub struct SchemaChangeEntry;

/// The registry's line.
pub static ENTRY: SchemaChangeEntry = SchemaChangeEntry;

impl Entry for SchemaChangeEntry {
    fn names(&self) -> Vec<&'static str> {
        vec![NAME]
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "schema-change  ADD/DROP COLUMN while an OLTP workload runs: throughput timeline, stall, lost ops".into(),
            operations: [Dbms::Mysql, Dbms::Postgres, Dbms::Sqlite]
                .iter()
                .map(|d| {
                    let names: Vec<&str> = algorithms(*d).iter().map(|a| a.name).collect();
                    (d.name().to_string(), names.join(", "))
                })
                .collect(),
        }
    }
    fn label(&self) -> &'static str {
        "the schema-change workload"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        SchemaChangeArgs::augment_args(cmd)
    }
    fn resolve(
        &self,
        _name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        let a: SchemaChangeArgs = args::of(m)?;
        let rows = a.size.rows(method_rows(cx.method))?;
        cx.shape.size = rows;
        let during = a.during.as_deref().unwrap_or("oltp_insert");
        let kind = sbtest::Kind::parse(during).ok_or_else(|| {
            Error::usage(format!(
                "--during: '{during}' is not an OLTP workload (use oltp_insert, oltp_read_write, oltp_write_only, ...)"
            ))
        })?;
        let os = sbtest::args::spec(
            kind,
            &a.oltp,
            rows,
            cx.seed,
            cx.engine.as_deref(),
            a.text.compressed_fraction.as_deref(),
        )?;
        let window = |v: Option<&str>, f: &str| -> Result<Duration> {
            match v {
                Some(s) => units::duration(s).map_err(|e| Error::usage(format!("{f}: {e}"))),
                None => Ok(Duration::from_secs(5)),
            }
        };
        Ok(Arc::new(Spec::new(
            os,
            cx.dbms,
            a.queries.as_deref(),
            window(a.before.as_deref(), "--before")?,
            window(a.after.as_deref(), "--after")?,
        )?))
    }
    fn report(&self) -> Option<&'static dyn crate::report::SectionOwner> {
        Some(&super::Report)
    }
}

impl Workload for Spec {
    fn name(&self) -> &str {
        NAME
    }
    /// One timeline per algorithm (and thread count).
    fn operations(&self) -> Vec<String> {
        Spec::operations(self)
    }
    fn main_table(&self) -> &str {
        "sbtest1"
    }
    fn options(&self) -> serde_json::Value {
        Spec::options(self)
    }
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        Spec::notes(self)
    }
    /// Never called: every timeline loads its own fresh table during `run`.
    fn prepare<'a>(&'a self, _cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
        async { Ok(Vec::new()) }.boxed_local()
    }
    fn loads_in_run(&self) -> bool {
        true
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        sbtest::cleanup(&self.oltp, conn).boxed_local()
    }
    /// Per algorithm and thread count: the time before the ADD, and after it and after the
    /// DROP (the DDL's own time is not known beforehand).
    fn planned(&self, run: &crate::contract::RunPlan) -> Option<std::time::Duration> {
        let per = self.before + self.after * 2;
        Some(per * (self.algorithms.len() * run.threads.len()) as u32)
    }
    fn run(&self, h: &mut dyn Harness) -> Result<()> {
        super::measure(self, h)
    }
}
