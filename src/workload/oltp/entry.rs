//! The sysbench OLTP family in the registry: eleven names, one set of options.

use std::sync::Arc;

use clap::Args;
use futures_util::future::{FutureExt, LocalBoxFuture};

use crate::contract::args::{self, SizeArgs, TextArgs};
use crate::contract::{Entry, Listing, PrepareCx, ResolveCx, Workload};
use crate::contract::{Session, SessionConfig};
use crate::db::{Conn, TargetSpec};
use crate::error::Result;
use crate::model::LoadStats;
use crate::runner;
use crate::workload::sbtest::args::{spec, OltpArgs};
use crate::workload::sbtest::{self, Kind, OltpDriver, Spec};

/// sysbench's default rows per table.
const SYSBENCH_TABLE_SIZE: u64 = 10_000;

/// The OLTP workloads' options: sysbench's, and the table size and text.
#[derive(Debug, Clone, Args)]
pub struct SysbenchArgs {
    #[command(flatten)]
    pub size: SizeArgs,
    #[command(flatten)]
    pub text: TextArgs,
    #[command(flatten)]
    pub oltp: OltpArgs,
}

pub struct OltpEntry;

/// The registry's line.
pub static ENTRY: OltpEntry = OltpEntry;

impl Entry for OltpEntry {
    fn names(&self) -> Vec<&'static str> {
        Kind::NAMES.to_vec()
    }
    fn listing(&self) -> Listing {
        Listing {
            heading: "sysbench OLTP workloads (sysbench 1.0.20's names, schema and queries; docs/oltp.md)".into(),
            operations: Kind::ALL
                .iter()
                .map(|k| (k.name().to_string(), k.describe().to_string()))
                .collect(),
        }
    }
    fn label(&self) -> &'static str {
        "the sysbench OLTP workloads (oltp_*, select_random_*, bulk_insert)"
    }
    fn args(&self, cmd: clap::Command) -> clap::Command {
        SysbenchArgs::augment_args(cmd)
    }
    fn resolve(
        &self,
        name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>> {
        let a: SysbenchArgs = args::of(m)?;
        let kind = Kind::parse(name).expect("the registry found this name");
        if kind == Kind::BulkInsert && a.text.compressed_fraction.is_some() {
            return Err(crate::error::Error::usage(
                "--compressed-fraction: bulk_insert does not generate text with it",
            ));
        }
        let rows = a.size.rows(SYSBENCH_TABLE_SIZE)?;
        cx.shape.size = rows;
        let mut s = spec(
            kind,
            &a.oltp,
            rows,
            cx.seed,
            cx.engine.as_deref(),
            a.text.compressed_fraction.as_deref(),
        )?;
        s.shard = cx.shard;
        Ok(Arc::new(s))
    }
}

impl Workload for Spec {
    fn name(&self) -> &str {
        self.kind.name()
    }
    /// One point per thread count: the event (transaction) is the operation.
    fn operations(&self) -> Vec<String> {
        vec![self.kind.name().to_string()]
    }
    fn main_table(&self) -> &str {
        "sbtest1"
    }
    fn options(&self) -> serde_json::Value {
        self.options_json()
    }
    fn partition(&self) -> Option<String> {
        match self.kind {
            // One table per worker, numbered from 1 in every process.
            Kind::BulkInsert => None,
            Kind::OltpInsert if !self.auto_inc => Some(
                "each shard's workers take their own ids (worker k of the fleet's W, counted from 0, inserts the ids congruent to k+1 modulo W past the table's largest)".into(),
            ),
            Kind::OltpInsert => Some(
                "the server assigns the inserted ids (--auto-inc); each worker of the fleet has its own random stream".into(),
            ),
            _ => Some(
                "the shards' workers draw from the whole table like the threads of one process, each with its own random stream".into(),
            ),
        }
    }
    fn load_partition(&self) -> Option<String> {
        match self.kind {
            // Its drivers make their own tables.
            Kind::BulkInsert => None,
            _ => Some("each shard loads its block of the row ids of every sbtest table".into()),
        }
    }
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        Spec::notes(self)
    }
    fn shard_keys(&self) -> Option<crate::contract::shard::ShardKeys> {
        Spec::shard_keys(self)
    }
    fn prepare<'a>(&'a self, cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>> {
        sbtest::prepare(self, cx.conn, cx.target, cx.engine, cx.load, cx.fleet).boxed_local()
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>> {
        sbtest::cleanup(self, conn).boxed_local()
    }
    /// The read-only kinds (point select, read only, random points/ranges) may go to replicas.
    fn access(&self, _op: usize) -> crate::contract::Access {
        if self.kind.writes() {
            crate::contract::Access::ReadWrite
        } else {
            crate::contract::Access::ReadOnly
        }
    }
    fn start(
        &self,
        _op: usize,
        threads: usize,
        target: &TargetSpec,
        cfg: &SessionConfig,
    ) -> Result<Box<dyn Session>> {
        let spec = self.clone();
        runner::start(target, cfg, move |w| {
            let (w, all) = spec.shard.map_or((w, threads), |s| s.worker(w, threads));
            OltpDriver::new(&spec, w, all)
        })
    }
}
