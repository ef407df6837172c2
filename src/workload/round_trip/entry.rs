//! round-trip in the registry: its options, and the contract that `run`, `prepare` and
//! `cleanup` call.

use std::sync::Arc;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};

use super::{RoundTripDriver, Spec, NAME, OPERATION};
use crate::contract::{args, Entry, Listing, PrepareCx, ResolveCx, Workload};
use crate::contract::{Session, SessionConfig};
use crate::db::{Conn, TargetSpec};
use crate::error::{Error, Result};
use crate::model::LoadStats;
use crate::report::SectionOwner;
use crate::runner;

/// round-trip's own options.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "round-trip options")]
pub struct RoundTripArgs {
    /// Constants each SELECT returns (1 to 1000): a wider row costs the protocol more.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub round_trip_columns: u32,
}

pub struct RoundTripEntry;

/// The registry's line.
pub static ENTRY: RoundTripEntry = RoundTripEntry;

impl Entry for RoundTripEntry {
    fn names(&self) -> Vec<&'static str> {
        vec![NAME]
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "round-trip   one constant SELECT per operation, no table: the floor every statement pays".into(),
            operations: vec![(OPERATION.into(), "SELECT 1[, 2, ...] (--round-trip-columns)".into())],
        }
    }
    fn label(&self) -> &'static str {
        "round-trip"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        RoundTripArgs::augment_args(cmd)
    }
    fn resolve(
        &self,
        _name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        let a: RoundTripArgs = args::of(m)?;
        if !(1..=1000).contains(&a.round_trip_columns) {
            return Err(Error::usage(format!(
                "--round-trip-columns {}: must be from 1 to 1000",
                a.round_trip_columns
            )));
        }
        // No table: the result's size is 0 rows.
        cx.shape.size = 0;
        Ok(Arc::new(Spec {
            columns: a.round_trip_columns,
        }))
    }
    fn report(&self) -> Option<&'static dyn SectionOwner> {
        Some(&super::report::REPORT)
    }
}

impl Workload for Spec {
    fn name(&self) -> &str {
        NAME
    }
    fn operations(&self) -> Vec<String> {
        vec![OPERATION.into()]
    }
    fn main_table(&self) -> &str {
        ""
    }
    fn options(&self) -> serde_json::Value {
        serde_json::json!({ "columns": self.columns })
    }
    fn partition(&self) -> Option<String> {
        Some("every shard runs its own connections; there are no rows to split".into())
    }
    fn load_partition(&self) -> Option<String> {
        Some("nothing to load".into())
    }
    fn prepare<'a>(&'a self, _cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
        async move { Ok(Vec::new()) }.boxed_local()
    }
    fn cleanup<'a>(&'a self, _conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        async move { Ok(()) }.boxed_local()
    }
    /// A constant SELECT reads nothing: replicas may serve it.
    fn access(&self, _op: usize) -> crate::contract::Access {
        crate::contract::Access::ReadOnly
    }
    fn start(
        &self,
        _op: usize,
        _threads: usize,
        target: &TargetSpec,
        cfg: &SessionConfig,
    ) -> Result<Box<dyn Session>> {
        let sql = self.sql();
        runner::start(target, cfg, move |_w| RoundTripDriver {
            sql: sql.clone(),
            stmt: crate::db::StmtId(0),
        })
    }
}
