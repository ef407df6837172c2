//! micro-read in the registry: its options, and the contract that `run`, `prepare` and
//! `cleanup` call.

use std::sync::Arc;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};

use super::{MicroDriver, Query, Spec, NAME};
use crate::contract::args::{self, method_rows, SizeArgs};
use crate::contract::{Entry, Listing, PrepareCx, ResolveCx, Workload};
use crate::contract::{Session, SessionConfig};
use crate::db::{Conn, TargetSpec};
use crate::error::Result;
use crate::model::LoadStats;
use crate::runner;

/// micro-read's own options.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "micro-read options")]
pub struct MicroArgs {
    #[command(flatten)]
    pub size: SizeArgs,
    /// Queries to run, comma-separated (default: all 13, in the report's order; `enginebench
    /// list` names them).
    #[arg(long, value_name = "LIST")]
    pub queries: Option<String>,
}

pub struct MicroEntry;

/// The registry's line.
pub static ENTRY: MicroEntry = MicroEntry;

impl Entry for MicroEntry {
    fn names(&self) -> Vec<&'static str> {
        vec![NAME]
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "micro-read   the 13-query read micro-benchmark of the 2007 InnoDB/MyISAM/Falcon report".into(),
            operations: Query::ALL
                .iter()
                .map(|q| (q.name().to_string(), q.sql().to_string()))
                .collect(),
        }
    }
    fn label(&self) -> &'static str {
        "micro-read"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        MicroArgs::augment_args(cmd)
    }
    fn resolve(
        &self,
        _name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        let a: MicroArgs = args::of(m)?;
        let table_size = a.size.rows(method_rows(cx.method))?;
        cx.shape.size = table_size;
        let queries = match &a.queries {
            Some(list) => list
                .split(',')
                .map(Query::parse)
                .collect::<Result<Vec<_>>>()?,
            None => Query::ALL.to_vec(),
        };
        Ok(Arc::new(Spec {
            table_size,
            seed: cx.seed,
            queries,
        }))
    }
}

impl Workload for Spec {
    fn name(&self) -> &str {
        NAME
    }
    fn operations(&self) -> Vec<String> {
        self.queries.iter().map(|q| q.name().to_string()).collect()
    }
    fn main_table(&self) -> &str {
        "normal"
    }
    fn options(&self) -> serde_json::Value {
        serde_json::json!({})
    }
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        Spec::notes(self)
    }
    fn load_partition(&self) -> Option<String> {
        Some("each shard loads its block of the row ids of table normal".into())
    }
    fn shard_keys(&self) -> Option<crate::contract::shard::ShardKeys> {
        Some(super::shard_keys())
    }
    fn prepare<'a>(&'a self, cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
        async move {
            let loaded = super::prepare(
                cx.conn,
                cx.target,
                self.table_size,
                self.seed,
                cx.engine,
                cx.load,
                cx.fleet,
            )
            .await?;
            Ok(loaded.into_iter().collect())
        }
        .boxed_local()
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        super::cleanup(conn).boxed_local()
    }
    /// Every query of the micro-read benchmark is a SELECT.
    fn access(&self, _op: usize) -> crate::contract::Access {
        crate::contract::Access::ReadOnly
    }
    fn start(
        &self,
        op: usize,
        _threads: usize,
        target: &TargetSpec,
        cfg: &SessionConfig,
    ) -> Result<Box<dyn Session>> {
        let (query, rows, seed) = (self.queries[op], self.table_size, self.seed);
        runner::start(target, cfg, move |w| MicroDriver::new(query, rows, seed, w))
    }
}
