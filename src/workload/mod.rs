//! Workloads: one folder per benchmark. Shared here: DDL files split into table and index
//! statements, the metadata table that says what was loaded, and post-load housekeeping.

pub mod compression;
pub mod custom;
pub mod iibench;
pub mod linkbench;
pub mod micro_read;
pub mod oltp;
pub mod rng;
pub mod schema_change;
pub mod sqlbench;
pub mod textgen;
pub mod tpcc;

use crate::error::{Context, Error, Result};
use crate::load::{LoadOptions, LoadStats};
use crate::runner::{Driver, Step};
use crate::db::{Conn, DbResult, Dbms, TargetSpec};

/// The table that records what each workload loaded (size, seed, engine), so that `run`
/// reuses a prepared table only when it is exactly what the run asks for.
pub const META_TABLE: &str = "enginebench_meta";

/// The workloads this build knows, in the order `list` shows them.
pub fn names() -> impl Iterator<Item = &'static str> {
    std::iter::once(micro_read::NAME)
        .chain(oltp::Kind::NAMES)
        .chain(std::iter::once(tpcc::NAME))
        .chain(std::iter::once(linkbench::NAME))
        .chain(custom::names())
        .chain(std::iter::once(iibench::NAME))
        .chain([compression::NAME, schema_change::NAME])
        .chain(std::iter::once(sqlbench::NAME))
}

/// A resolved workload: its name and options, validated. Every workload plugs in here.
#[derive(Debug, Clone)]
pub enum Workload {
    MicroRead(micro_read::Spec),
    Oltp(oltp::Spec),
    Tpcc(tpcc::Spec),
    Linkbench(Box<linkbench::Spec>),
    /// A workload file (`--workload-file`, or a built-in one such as ycsb-a or tpcb).
    Custom(std::sync::Arc<custom::Spec>),
    Iibench(iibench::Spec),
    Compression(compression::Spec),
    SchemaChange(schema_change::Spec),
}

/// One connection's driver, for whichever workload runs (enum dispatch: no boxing per call).
/// Variants differ in size; there is one driver per connection and it never moves while
/// running, so the size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyDriver {
    MicroRead(micro_read::MicroDriver),
    Oltp(oltp::OltpDriver),
    Tpcc(Box<tpcc::TpccDriver>),
    Linkbench(Box<linkbench::LinkbenchDriver>),
    Custom(Box<custom::CustomDriver>),
    Iibench(Box<iibench::driver::IibenchDriver>),
    Compression(compression::CompressionDriver),
}

impl Driver for AnyDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        match self {
            AnyDriver::MicroRead(d) => d.setup(conn).await,
            AnyDriver::Oltp(d) => d.setup(conn).await,
            AnyDriver::Tpcc(d) => d.setup(conn).await,
            AnyDriver::Linkbench(d) => d.setup(conn).await,
            AnyDriver::Custom(d) => d.setup(conn).await,
            AnyDriver::Iibench(d) => d.setup(conn).await,
            AnyDriver::Compression(d) => d.setup(conn).await,
        }
    }
    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        match self {
            AnyDriver::MicroRead(d) => d.step(conn).await,
            AnyDriver::Oltp(d) => d.step(conn).await,
            AnyDriver::Tpcc(d) => d.step(conn).await,
            AnyDriver::Linkbench(d) => d.step(conn).await,
            AnyDriver::Custom(d) => d.step(conn).await,
            AnyDriver::Iibench(d) => d.step(conn).await,
            AnyDriver::Compression(d) => d.step(conn).await,
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        match self {
            AnyDriver::Tpcc(d) => d.counters(),
            #[allow(unreachable_patterns)]
            _ => Vec::new(),
        }
    }
    fn pause(&mut self) -> Option<std::time::Duration> {
        match self {
            AnyDriver::Tpcc(d) => d.pause(),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

impl Workload {
    pub fn name(&self) -> &'static str {
        match self {
            Workload::MicroRead(_) => micro_read::NAME,
            Workload::Oltp(s) => s.kind.name(),
            Workload::Tpcc(_) => tpcc::NAME,
            Workload::Linkbench(_) => linkbench::NAME,
            Workload::Custom(s) => s.name_static,
            Workload::Iibench(_) => iibench::NAME,
            Workload::Compression(_) => compression::NAME,
            Workload::SchemaChange(_) => schema_change::NAME,
        }
    }

    /// The kinds of operation a step reports (`Step::kind` indexes this list); results break
    /// counts and latencies down by kind when there is more than one.
    pub fn kinds(&self) -> Vec<&'static str> {
        match self {
            Workload::MicroRead(_) | Workload::Oltp(_) => Vec::new(),
            Workload::Tpcc(_) => tpcc::KINDS.to_vec(),
            Workload::Linkbench(_) => linkbench::KINDS.to_vec(),
            Workload::Custom(s) => s.kinds.clone(),
            Workload::Iibench(_) => Vec::new(),
            Workload::Compression(_) => compression::KINDS.to_vec(),
            Workload::SchemaChange(_) => Vec::new(),
        }
    }

    /// The operations measured one after the other (one point per operation and thread count).
    pub fn operations(&self) -> Vec<String> {
        match self {
            Workload::MicroRead(s) => s.queries.iter().map(|q| q.name().to_string()).collect(),
            // One point per thread count: the event (transaction) is the operation.
            Workload::Oltp(s) => vec![s.kind.name().to_string()],
            Workload::Tpcc(_) => vec!["mix".to_string()],
            // LinkBench's request phase: the ten request types, drawn per request.
            Workload::Linkbench(_) => vec!["requests".to_string()],
            Workload::Custom(s) => s.operations(),
            Workload::Iibench(_) => vec!["insert".to_string()],
            Workload::Compression(s) => s.operations(),
            Workload::SchemaChange(s) => s.operations(),
        }
    }

    /// The table whose storage engine the result reports.
    pub fn main_table(&self) -> &'static str {
        match self {
            Workload::MicroRead(_) => "normal",
            Workload::Oltp(_) => "sbtest1",
            Workload::Tpcc(_) => "stock",
            Workload::Linkbench(_) => "linktable",
            Workload::Custom(s) => s.main_table_static,
            Workload::Iibench(_) => iibench::TABLE,
            // Each format / timeline has its own table; the result's sections name them.
            Workload::Compression(_) => "",
            Workload::SchemaChange(_) => "sbtest1",
        }
    }

    /// Workload options for the result's config (beyond the common ones).
    pub fn options(&self) -> serde_json::Value {
        match self {
            Workload::MicroRead(_) => serde_json::json!({}),
            Workload::Oltp(s) => s.options_json(),
            Workload::Tpcc(s) => s.options(),
            Workload::Linkbench(s) => s.options(),
            Workload::Custom(s) => s.options(),
            Workload::Iibench(s) => s.options(),
            Workload::Compression(s) => s.options(),
            Workload::SchemaChange(s) => s.options(),
        }
    }

    /// Create and load the tables unless identical ones are there; returns what was loaded.
    pub async fn prepare(
        &self,
        conn: &mut Conn,
        target: &TargetSpec,
        engine: Option<&str>,
        opts: &LoadOptions,
    ) -> Result<Vec<LoadStats>> {
        match self {
            Workload::MicroRead(s) => {
                Ok(
                    micro_read::prepare(conn, target, s.table_size, s.seed, engine, opts)
                        .await?
                        .into_iter()
                        .collect(),
                )
            }
            Workload::Oltp(s) => oltp::prepare(s, conn, target, engine, opts).await,
            Workload::Tpcc(s) => tpcc::prepare(conn, target, s, engine, opts).await,
            Workload::Linkbench(s) => linkbench::prepare(conn, target, s, engine, opts).await,
            Workload::Custom(s) => s.prepare(conn, target, engine, opts).await,
            Workload::Iibench(_) => iibench::prepare(conn, engine).await,
            // Both load during `run` (the load is part of what they measure, and each format
            // or timeline needs its own fresh table).
            Workload::Compression(_) | Workload::SchemaChange(_) => Err(Error::usage(format!(
                "{} loads its tables during `run` (the load is part of the measurement): nothing to prepare",
                self.name()
            ))),
        }
    }

    pub async fn cleanup(&self, conn: &mut Conn) -> Result<()> {
        match self {
            Workload::MicroRead(_) => micro_read::cleanup(conn).await,
            Workload::Oltp(s) => oltp::cleanup(s, conn).await,
            Workload::Tpcc(_) => tpcc::cleanup(conn).await,
            Workload::Linkbench(_) => linkbench::cleanup(conn).await,
            Workload::Custom(s) => s.cleanup(conn).await,
            Workload::Iibench(_) => iibench::cleanup(conn).await,
            Workload::Compression(_) => compression::cleanup(conn).await,
            Workload::SchemaChange(s) => oltp::cleanup(&s.oltp, conn).await,
        }
    }

    /// The driver of connection `worker` (of `threads`) for operation number `op` of
    /// `operations()`.
    pub fn driver(&self, op: usize, worker: usize, threads: usize) -> AnyDriver {
        match self {
            Workload::MicroRead(s) => AnyDriver::MicroRead(micro_read::MicroDriver::new(
                s.queries[op],
                s.table_size,
                s.seed,
                worker,
            )),
            Workload::Oltp(s) => AnyDriver::Oltp(oltp::OltpDriver::new(s, worker, threads)),
            Workload::Tpcc(s) => AnyDriver::Tpcc(Box::new(tpcc::TpccDriver::new(s, worker))),
            Workload::Linkbench(s) => AnyDriver::Linkbench(Box::new(
                linkbench::LinkbenchDriver::new(s, worker, threads),
            )),
            Workload::Custom(s) => AnyDriver::Custom(Box::new(custom::CustomDriver::new(
                s.clone(),
                op,
                worker,
                threads,
            ))),
            Workload::Iibench(s) => AnyDriver::Iibench(Box::new(
                iibench::driver::IibenchDriver::new(s, worker, threads),
            )),
            Workload::Compression(s) => {
                AnyDriver::Compression(compression::CompressionDriver::new(s, op, worker, threads))
            }
            // Its timelines run the OLTP driver (schema_change::measure), never this path.
            Workload::SchemaChange(s) => {
                AnyDriver::Oltp(oltp::OltpDriver::new(&s.oltp, worker, threads))
            }
        }
    }

    /// What is approximate or differs from the original, for the result's notes.
    pub fn notes(&self) -> Vec<String> {
        match self {
            Workload::MicroRead(s) => s.notes(),
            Workload::Oltp(s) => s.notes(),
            Workload::Tpcc(s) => s.notes(),
            Workload::Linkbench(s) => s.notes(),
            Workload::Custom(s) => s.notes(),
            Workload::Iibench(s) => s.notes(),
            Workload::Compression(s) => s.notes(),
            Workload::SchemaChange(s) => s.notes(),
        }
    }

    /// The length of operation `op` when the workload sets it (a workload file's phase),
    /// else `None` (--duration).
    pub fn phase_duration(&self, op: usize) -> Option<std::time::Duration> {
        match self {
            Workload::Custom(s) => s.phase_duration(op),
            _ => None,
        }
    }

    /// The pacing of operation `op` when the workload sets it (a phase's rate), else `None`.
    pub fn phase_pacing(&self, op: usize) -> Option<crate::runner::Pacing> {
        match self {
            Workload::Custom(s) => s.phase_pacing(op),
            _ => None,
        }
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
