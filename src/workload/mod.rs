//! Workloads: one folder per benchmark, each behind the contract below, and the registry that
//! names them. Shared here too: DDL files split into table and index statements, the metadata
//! table that says what was loaded, and post-load housekeeping.
//!
//! Adding a workload: its folder (options, resolve, drivers, report sections) and one line in
//! `registry()`; docs/architecture.md has the list.

pub mod args;
pub mod compression;
pub mod custom;
pub mod iibench;
pub mod linkbench;
pub mod micro_read;
pub mod oltp;
pub mod schema_change;
pub mod shard;
pub mod sqlbench;
pub mod textgen;
pub mod tpcc;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::LocalBoxFuture;

use crate::cli::Method;
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Context, Error, Result};
use crate::harness::Harness;
use crate::load::{LoadOptions, LoadStats};
use crate::report::{RunRecord, SectionOwner};
use crate::runner::{KindTick, Pacing, Session, SessionConfig};

/// The table that records what each workload loaded (size, seed, engine), so that `run`
/// reuses a prepared table only when it is exactly what the run asks for.
pub const META_TABLE: &str = "enginebench_meta";

/// A kind of workload in the registry: what `list`, `--help` and the commands find by name.
pub trait Entry: Sync {
    /// Every name it answers to, in `list` order (the sysbench family has eleven, workload
    /// files one per built-in file).
    fn names(&self) -> Vec<&'static str>;
    /// `list`: a heading and the operations (name, what it does).
    fn listing(&self) -> Listing;
    /// Who to name when another workload is given one of its options ("the tpcc workload").
    fn label(&self) -> &'static str;
    /// Adds its own options (a clap `Args` struct) to a command that has the common ones.
    fn args(&self, cmd: clap::Command) -> clap::Command;
    /// Builds workload `name` from the parsed options (its own and the common ones in `m`),
    /// checks them (no I/O) and adjusts the run's shape to its defaults.
    fn resolve(
        &self,
        name: &str,
        m: &clap::ArgMatches,
        cx: &mut ResolveCx,
    ) -> Result<Arc<dyn Workload>>;
    /// True when it takes a command without a workload name (a workload file: `run
    /// --workload-file FILE`).
    fn claims_unnamed(&self, _argv: &[String]) -> bool {
        false
    }
    /// False when its workloads run on one connection by count and refuse `--threads`
    /// (sql-bench): a suite then passes no `--threads`, and its sections take `threads = [1]`.
    fn takes_threads(&self) -> bool {
        true
    }
    /// True when its workloads have consistency conditions (`check`).
    fn has_check(&self) -> bool {
        false
    }
    /// What it adds to the outputs of its results (HTML sections, terminal lines, tables).
    fn report(&self) -> Option<&'static dyn SectionOwner> {
        None
    }
}

/// `list`'s lines of one registry entry.
pub struct Listing {
    pub heading: String,
    pub operations: Vec<(String, String)>,
}

/// Which command the workload is resolved for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Run,
    Prepare,
    Cleanup,
    Check,
}

/// What a workload sees while it resolves: the common settings, and the shape of the run that
/// it may adjust to its own defaults (a flag the user gave always wins: see `given`).
#[derive(Debug, Clone)]
pub struct ResolveCx {
    pub purpose: Purpose,
    pub dbms: Dbms,
    pub method: Method,
    pub seed: u64,
    /// `--engine` as typed.
    pub engine: Option<String>,
    pub shape: Shape,
    /// `--shard I/N`: this process runs shard I of a fleet of N; the workload takes its share
    /// (and says how in `Workload::partition`).
    pub shard: Option<crate::fleet::Shard>,
}

/// The run's shape: thread counts, phase lengths, repeats, and the size the result shows.
#[derive(Debug, Clone)]
pub struct Shape {
    pub threads: Vec<usize>,
    pub warmup: Duration,
    pub duration: Duration,
    pub runs: u32,
    /// The workload's size for the result (rows per table, warehouses, maxid1, ...).
    pub size: u64,
    /// Whether SCHED_BATCH may be used for its client threads.
    pub sched_batch: bool,
    /// Which of the above the user gave on the command line.
    pub given: Given,
}

/// Common flags the user typed (a workload's defaults give way to them).
#[derive(Debug, Clone, Copy, Default)]
pub struct Given {
    pub threads: bool,
    pub warmup: bool,
    pub duration: bool,
    pub runs: bool,
    pub rate: bool,
    pub pin: bool,
}

/// What `prepare` gets.
pub struct PrepareCx<'a> {
    pub conn: &'a mut Conn,
    pub target: &'a TargetSpec,
    /// The storage engine to create tables with (checked against the server).
    pub engine: Option<&'a str>,
    pub load: &'a LoadOptions,
    /// `prepare --shard I/N` (or a fleet's run finding its tables missing): this process
    /// loads its share with the other shards (`crate::fleet::begin` .. `done`); `load.shard`
    /// is set too. None: one process prepares alone.
    pub fleet: Option<&'a crate::fleet::LoadFleet>,
}

/// The outcome of `check`: every failed condition, and the line that sums it up.
pub struct Checked {
    pub failures: Vec<String>,
    pub summary: String,
}

/// A resolved workload: its options checked, ready to prepare and run. Every workload (built
/// in, a workload file, or one registered by a program that embeds enginebench) is one.
pub trait Workload: Send + Sync + 'static {
    fn name(&self) -> &str;
    /// The operations measured one after the other (one point per operation and thread count).
    fn operations(&self) -> Vec<String>;
    /// The kinds of operation a step reports (`Step::kind` indexes this list); results break
    /// counts and latencies down by kind when there is more than one.
    fn kinds(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// The table whose storage engine the result reports ("" when there is no single one).
    fn main_table(&self) -> &str;
    /// Its options for the result's config (beyond the common ones). What differs between the
    /// shards of a fleet goes under the key "shard" (the merge compares the rest).
    fn options(&self) -> serde_json::Value;
    /// How a fleet's shards split this workload (`--shard I/N`), in one line for the result;
    /// None when it cannot be split: `run --shard` then refuses it (exit 2) rather than run it
    /// twice over.
    fn partition(&self) -> Option<String> {
        None
    }
    /// How a fleet's shards split its `prepare` (`prepare --shard I/N`), in one line; None
    /// when they cannot: `prepare --shard` then refuses it (exit 2) rather than load it twice.
    /// A workload that can follows the steps of `crate::fleet` (begin, tables_ready, loaded,
    /// done) and loads through `crate::load`, which takes the shard's ids.
    fn load_partition(&self) -> Option<String> {
        None
    }
    /// Where each of its tables lives on a sharded target (a Spider head and its backends,
    /// `shard::Placement`): every table its `prepare` creates, split by an integer column or
    /// kept on the head. None, the default, makes a Spider target refuse it (exit 2); a
    /// workload that declares keys creates and loads its tables through `shard::Place`.
    fn shard_keys(&self) -> Option<shard::ShardKeys> {
        None
    }
    /// What is approximate or differs from the original, for the result's notes.
    fn notes(&self, _target: &TargetSpec) -> Vec<String> {
        Vec::new()
    }
    /// Create and load the tables unless identical ones are there; returns what was loaded.
    fn prepare<'a>(&'a self, cx: PrepareCx<'a>) -> LocalBoxFuture<'a, Result<Vec<LoadStats>>>;
    /// True when it loads during `run` (the load is part of what it measures): `run` does not
    /// call `prepare` first.
    fn loads_in_run(&self) -> bool {
        false
    }
    fn cleanup<'a>(&'a self, conn: &'a mut Conn) -> LocalBoxFuture<'a, Result<()>>;
    /// Its consistency conditions, if it has any.
    fn check<'a>(&'a self, _conn: &'a mut Conn) -> Option<LocalBoxFuture<'a, Result<Checked>>> {
        None
    }
    /// Connect `threads` workers running operation `op`. Each builds its driver inside its own
    /// thread (`Session::start` with the workload's driver type: no virtual call per step).
    fn start(
        &self,
        _op: usize,
        _threads: usize,
        _target: &TargetSpec,
        _cfg: &SessionConfig,
    ) -> Result<Session> {
        Err(Error::usage(format!(
            "{} has no operations to sweep",
            self.name()
        )))
    }
    /// Whether operation `op` only reads: a target with `?read=replicas` then sends its
    /// connections to the replicas (every other operation goes to the primary).
    fn access(&self, _op: usize) -> crate::runner::Access {
        crate::runner::Access::ReadWrite
    }
    /// The length of operation `op` when the workload sets it (a workload file's phase).
    fn phase_duration(&self, _op: usize) -> Option<Duration> {
        None
    }
    /// The pacing of operation `op` when the workload sets it (a phase's rate).
    fn phase_pacing(&self, _op: usize) -> Option<Pacing> {
        None
    }
    /// Printed instead of running (sqlbench's --dry-run): nothing is connected.
    fn preview(&self) -> Option<String> {
        None
    }
    /// The run's plan line, when the generic one (operations x threads x runs) does not fit.
    fn plan_line(&self) -> Option<String> {
        None
    }
    /// The run: by default a sweep of operations x thread counts on the shared runner; a
    /// workload with phases of its own (iibench, schema-change, compression, sqlbench) builds
    /// them from the harness's pieces.
    fn run(&self, h: &mut Harness) -> Result<()> {
        h.sweep()
    }
    /// How long its measured phases take with `cfg` (loads not included), for the estimate
    /// a suite prints before it starts; None when it runs by rows or tests, not by time. The
    /// default is the sweep's: per operation and thread count, the warm-up and the runs.
    fn planned(&self, cfg: &crate::config::RunConfig) -> Option<std::time::Duration> {
        let mut total = std::time::Duration::ZERO;
        for i in 0..self.operations().len() {
            let run = self.phase_duration(i).unwrap_or(cfg.duration());
            total += (cfg.warmup() + run * cfg.runs) * cfg.threads.len() as u32;
        }
        Some(total)
    }
    /// Its derived figures of one measured run at `threads` connections (TPC-C: tpmC and its
    /// constraints), from the run's common record; returns lines to print with the run's line.
    fn derive(&self, _threads: usize, _run: &mut RunRecord) -> Vec<String> {
        Vec::new()
    }
    /// Its figures of one interval (TPC-C: tpmC), from the per-kind counts.
    fn interval_figures(&self, _kinds: &[KindTick], _len_s: f64) -> Vec<(String, f64)> {
        Vec::new()
    }
}

/// The built-in workloads, in `list` order.
pub fn builtins() -> Vec<&'static dyn Entry> {
    vec![
        &micro_read::ENTRY,
        &oltp::ENTRY,
        &tpcc::ENTRY,
        &linkbench::ENTRY,
        &custom::ENTRY,
        &iibench::ENTRY,
        &compression::ENTRY,
        &schema_change::ENTRY,
        &sqlbench::ENTRY,
    ]
}

/// The workloads a command can find by name: the built-in ones, and any a program that embeds
/// enginebench adds (`Registry::with`).
#[derive(Clone)]
pub struct Registry {
    entries: Vec<&'static dyn Entry>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            entries: builtins(),
        }
    }
}

impl Registry {
    /// The built-in workloads plus `entry`.
    pub fn with(mut self, entry: &'static dyn Entry) -> Self {
        self.entries.push(entry);
        self
    }
    pub fn entries(&self) -> &[&'static dyn Entry] {
        &self.entries
    }
    /// Every workload name, in `list` order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().flat_map(|e| e.names()).collect()
    }
    pub fn find(&self, name: &str) -> Option<&'static dyn Entry> {
        self.entries
            .iter()
            .copied()
            .find(|e| e.names().contains(&name))
    }
    /// The report sections of every workload that has some.
    pub fn owners(&self) -> Vec<&'static dyn SectionOwner> {
        self.entries.iter().filter_map(|e| e.report()).collect()
    }
}

/// Split a schema file into (table statements, index statements) at the `-- indexes` line,
/// dropping comments, and substitute `{engine}`.
pub fn ddl(schema: &str, engine_clause: &str) -> (Vec<String>, Vec<String>) {
    let (tables, indexes) = schema.split_once("-- indexes").unwrap_or((schema, ""));
    let split = |s: &str| -> Vec<String> {
        let body: String = s
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .map(|l| format!("{l}\n"))
            .collect();
        body.split(';')
            .map(|st| st.trim().replace("{engine}", engine_clause))
            .filter(|st| !st.is_empty())
            .collect()
    };
    (split(tables), split(indexes))
}

/// `ENGINE=<name>` for MySQL when an engine was chosen, else nothing (the server's default).
pub fn engine_clause(engine: Option<&str>) -> String {
    engine.map(|e| format!("ENGINE={e}")).unwrap_or_default()
}

/// The clause every benchmark table is created with: the engine, then `--table-options`
/// (e.g. `ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8`, `PAGE_COMPRESSED=1`), for every workload.
pub fn table_clause(engine: Option<&str>, opts: &LoadOptions) -> String {
    let mut c = engine_clause(engine);
    if !opts.table_options.is_empty() {
        if !c.is_empty() {
            c.push(' ');
        }
        c.push_str(&opts.table_options);
    }
    c
}

/// A workload's metadata with the table options in it, so that tables made with other
/// options are not taken as already loaded.
pub fn with_table_options(info: String, opts: &LoadOptions) -> String {
    if opts.table_options.is_empty() {
        info
    } else {
        format!("{info} table_options={}", opts.table_options)
    }
}

/// A workload's metadata with the target's layout in it: tables prepared on a Spider head and
/// its backends are not the tables of a plain server (nor of other backends), and the other
/// way round.
pub fn with_layout(info: String, target: &TargetSpec) -> String {
    if !target.is_spider() {
        return info;
    }
    let backends: Vec<String> = target.spider.iter().map(|b| b.to_string()).collect();
    format!("{info} spider={}", backends.join(","))
}

/// True when every table of `tables` exists and the metadata of `workload` says they hold
/// exactly `want`: then `prepare` keeps them.
pub async fn already_loaded<S: AsRef<str>>(
    conn: &mut Conn,
    tables: impl IntoIterator<Item = S>,
    workload: &str,
    want: &str,
) -> Result<bool> {
    for t in tables {
        if !conn
            .table_exists(t.as_ref())
            .await
            .ctx("checking for the tables")?
        {
            return Ok(false);
        }
    }
    Ok(read_meta(conn, workload).await?.as_deref() == Some(want))
}

pub async fn read_meta(conn: &mut Conn, workload: &str) -> Result<Option<String>> {
    if !conn
        .table_exists(META_TABLE)
        .await
        .ctx("reading the metadata table")?
    {
        return Ok(None);
    }
    conn.query_one(&format!(
        "SELECT info FROM {META_TABLE} WHERE workload = '{workload}'"
    ))
    .await
    .ctx("reading the metadata table")
}

pub async fn write_meta(conn: &mut Conn, workload: &str, info: &str) -> Result<()> {
    let create = format!("CREATE TABLE IF NOT EXISTS {META_TABLE} (workload varchar(64) PRIMARY KEY, info varchar(2000))");
    conn.execute(&create)
        .await
        .ctx("creating the metadata table")?;
    let info = info.replace('\'', "''");
    conn.execute(&format!(
        "DELETE FROM {META_TABLE} WHERE workload = '{workload}'"
    ))
    .await
    .ctx("writing metadata")?;
    conn.execute(&format!(
        "INSERT INTO {META_TABLE} (workload, info) VALUES ('{workload}', '{info}')"
    ))
    .await
    .ctx("writing metadata")
}

pub async fn delete_meta(conn: &mut Conn, workload: &str) -> Result<()> {
    if conn
        .table_exists(META_TABLE)
        .await
        .ctx("reading the metadata table")?
    {
        conn.execute(&format!(
            "DELETE FROM {META_TABLE} WHERE workload = '{workload}'"
        ))
        .await
        .ctx("writing metadata")?;
    }
    Ok(())
}

/// After a load: fresh statistics, and on PostgreSQL a vacuum (so that autovacuum does not
/// disturb the first timed run) and a checkpoint when the role may run one.
pub async fn after_load(conn: &mut Conn, tables: &[&str]) -> Result<()> {
    for t in tables {
        let sql = match conn.dbms() {
            Dbms::Mysql => format!("ANALYZE TABLE {t}"),
            Dbms::Postgres => format!("VACUUM ANALYZE {t}"),
            Dbms::Sqlite => format!("ANALYZE {t}"),
        };
        conn.query(&sql).await.ctx(format!("analyzing {t}"))?;
    }
    match conn.dbms() {
        Dbms::Postgres => {
            let _ = conn.execute("CHECKPOINT").await;
        }
        Dbms::Sqlite => {
            let _ = conn.query("PRAGMA wal_checkpoint(TRUNCATE)").await;
        }
        Dbms::Mysql => {}
    }
    Ok(())
}

/// The storage engine of `table` as the server reports it (PostgreSQL: heap; SQLite: its
/// b-tree).
pub async fn table_engine(conn: &mut Conn, table: &str) -> Result<String> {
    Ok(match conn.dbms() {
        Dbms::Mysql => conn
            .query_one(&format!(
                "SELECT ENGINE FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{table}'"
            ))
            .await
            .ctx("reading the table's engine")?
            .unwrap_or_default(),
        Dbms::Postgres => "heap".to_string(),
        Dbms::Sqlite => "sqlite-btree".to_string(),
    })
}

/// The storage engines a MySQL-family server offers, canonical names.
pub async fn mysql_engines(conn: &mut Conn) -> Result<Vec<String>> {
    let rows = conn
        .query("SHOW ENGINES")
        .await
        .ctx("listing the server's storage engines")?;
    Ok(rows
        .into_iter()
        .filter(|r| {
            matches!(
                r.get(1).cloned().flatten().as_deref(),
                Some("YES" | "DEFAULT")
            )
        })
        .filter_map(|r| r.into_iter().next().flatten())
        .collect())
}

/// Check `--engine` against what the server offers; returns the server's spelling.
pub async fn resolve_engine(conn: &mut Conn, wanted: &str) -> Result<String> {
    let engines = mysql_engines(conn).await?;
    let alias = if wanted.eq_ignore_ascii_case("myrocks") {
        "ROCKSDB"
    } else {
        wanted
    };
    engines.iter().find(|e| e.eq_ignore_ascii_case(alias)).cloned().ok_or_else(|| {
        Error::usage(format!(
            "the server has no storage engine '{wanted}'; it offers: {} (RocksDB needs the mariadb-plugin-rocksdb package and plugin-load-add=ha_rocksdb)",
            engines.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ddl_split() {
        let (t, i) = super::ddl(
            "-- c\nCREATE TABLE a (x int) {engine};\n-- indexes\nCREATE INDEX i ON a (x);\n",
            "ENGINE=MyISAM",
        );
        assert_eq!(t, vec!["CREATE TABLE a (x int) ENGINE=MyISAM"]);
        assert_eq!(i, vec!["CREATE INDEX i ON a (x)"]);
    }
}
