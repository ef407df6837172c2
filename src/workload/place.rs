//! Creating and loading a workload's tables where they live: on one server, or on a MariaDB
//! Spider head and its backends (`?spider=h1:p1,h2:p2` in the target URL; docs/clusters.md).
//! Where each table lives is the contract's (`contract::shard`: `Workload::shard_keys`); this
//! is what the workloads that declare keys create and load their tables through. It is no
//! workload (no `entry.rs`, no registry line): tpcc, linkbench, micro-read and sbtest use it.
//!
//! A prepare creates tables through [`Place`] and loads them through [`Loader`]; on one server
//! both do what a plain prepare does, on a Spider target:
//! - a sharded table is created on every backend as an ordinary table (the workload's engine)
//!   and on the head as `ENGINE=SPIDER ... PARTITION BY HASH (key)`, partition *k* on backend
//!   *k* (`CREATE OR REPLACE SERVER` on the head names each backend);
//! - its rows are loaded into the backends directly, all of them at once, each backend getting
//!   exactly the rows of its partition (key mod N = k, MariaDB's rule for `HASH`);
//! - a head table is an ordinary table on the head.
//!
//! `open_schema` and `Opened::finish` are the first and last steps of a prepare from one
//! schema file, with or without a fleet (`crate::fleet`'s steps).

use std::sync::Arc;
use std::time::Instant;

use crate::contract::shard::{server_name, Placement, ShardKeys};
use crate::db::url::Endpoint;
use crate::db::{Conn, TargetSpec, Value};
use crate::error::{Context, Error, Result};
use crate::load::{self, RowSource};
use crate::model::fleet_load::{self, FleetLoad};
use crate::model::LoadOptions;
use crate::model::LoadStats;

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// `CREATE OR REPLACE SERVER` for backend `k` (the password goes into the head's
/// mysql.servers, which only its administrators read; it is never shown).
fn create_server_sql(target: &TargetSpec, k: usize, b: &Endpoint) -> String {
    let place = match b {
        Endpoint::Tcp(h, p) => format!("HOST {}, PORT {p}", quote(h)),
        Endpoint::Socket(s) => format!("HOST 'localhost', SOCKET {}", quote(s)),
    };
    format!(
        "CREATE OR REPLACE SERVER {} FOREIGN DATA WRAPPER mysql OPTIONS ({place}, USER {}, PASSWORD {}, DATABASE {})",
        server_name(&target.database, k),
        quote(&target.user),
        quote(target.password.as_deref().unwrap_or("")),
        quote(&target.database)
    )
}

/// The head's table options and partitions of a sharded table.
fn spider_suffix(target: &TargetSpec, table: &str, key: &str) -> String {
    let parts: Vec<String> = (0..target.spider.len())
        .map(|k| {
            format!(
                "PARTITION p{k} COMMENT = 'srv \"{}\"'",
                server_name(&target.database, k)
            )
        })
        .collect();
    format!(
        " COMMENT = 'wrapper \"mysql\", table \"{table}\"' PARTITION BY HASH ({key}) ({})",
        parts.join(", ")
    )
}

/// The table a `CREATE TABLE` statement creates.
fn created_table(sql: &str) -> Option<&str> {
    let rest = sql.trim_start().strip_prefix("CREATE TABLE")?.trim_start();
    let rest = rest
        .strip_prefix("IF NOT EXISTS")
        .map_or(rest, str::trim_start);
    let end = rest.find(|c: char| c.is_whitespace() || c == '(')?;
    Some(rest[..end].trim_matches('`'))
}

/// The table an index statement changes: `CREATE [UNIQUE] INDEX i ON t (...)` or
/// `ALTER TABLE t ...`.
fn indexed_table(sql: &str) -> Option<&str> {
    let s = sql.trim_start();
    let rest = if let Some(r) = s.strip_prefix("ALTER TABLE") {
        r
    } else {
        let on = s.find(" ON ")?;
        &s[on + 4..]
    }
    .trim_start();
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '(')
        .unwrap_or(rest.len());
    Some(rest[..end].trim_matches('`'))
}

/// A unique index on the head's Spider table would have to include the partition key
/// (MariaDB's rule for partitioned tables); the backends enforce it within each backend.
fn without_unique(sql: &str) -> String {
    sql.replace("UNIQUE KEY", "KEY")
        .replace("UNIQUE INDEX", "INDEX")
        .replace("ADD UNIQUE ", "ADD ")
}

/// Where a prepare creates its tables: the admin connection's server, or a Spider head and its
/// backends.
pub struct Place<'a> {
    /// The admin connection (the head of a Spider target).
    pub head: &'a mut Conn,
    target: &'a TargetSpec,
    keys: Arc<ShardKeys>,
    backends: Vec<Conn>,
}

impl<'a> Place<'a> {
    /// On a Spider target: check that the head has the Spider engine, connect to every
    /// backend and (re)define them on the head. `keys` is the workload's `shard_keys()`.
    pub async fn open(
        head: &'a mut Conn,
        target: &'a TargetSpec,
        keys: Option<ShardKeys>,
    ) -> Result<Place<'a>> {
        if !target.is_spider() {
            return Ok(Place {
                head,
                target,
                keys: Arc::new(Vec::new()),
                backends: Vec::new(),
            });
        }
        let Some(keys) = keys else {
            return Err(Error::usage(
                "this workload declares no sharding key: it cannot run on a Spider target",
            ));
        };
        let engines = crate::contract::mysql_engines(head).await?;
        if !engines.iter().any(|e| e.eq_ignore_ascii_case("SPIDER")) {
            return Err(Error::usage(format!(
                "the Spider head {} has no SPIDER engine: start it with plugin_load_add=ha_spider (package mariadb-plugin-spider)",
                target.node_label(0)
            )));
        }
        let mut backends = Vec::new();
        for k in 0..target.spider.len() {
            let b = target.spider_backend(k);
            let conn = Conn::connect(&b).await.map_err(|e| {
                Error::usage(format!(
                    "cannot connect to Spider backend {k} ({}): {}",
                    b.display,
                    target.scrub(&e.message)
                ))
            })?;
            backends.push(conn);
        }
        for (k, b) in target.spider.iter().enumerate() {
            head.execute(&create_server_sql(target, k, b))
                .await
                .map_err(|e| {
                    Error::run(format!(
                        "defining Spider backend {k} ({b}) on the head: {}",
                        target.scrub(&e.message)
                    ))
                })?;
        }
        Ok(Place {
            head,
            target,
            keys: Arc::new(keys),
            backends,
        })
    }

    fn placement(&self, table: &str) -> Result<Placement> {
        self.keys
            .iter()
            .find(|(t, _)| t == table)
            .map(|(_, p)| *p)
            .ok_or_else(|| {
                Error::run(format!(
                    "table {table} has no placement on a Spider target (the workload's shard_keys() misses it)"
                ))
            })
    }

    /// A failed statement, as `Context::ctx` words it (the password scrubbed).
    fn db_err(&self, what: &str, e: crate::db::DbError) -> Error {
        Error::usage(format!(
            "{what}: {}",
            crate::error::one_line(&self.target.scrub(&e.to_string()))
        ))
    }

    /// Create one table: `make(clause)` is its `CREATE TABLE` with the given table options
    /// (`clause`: the engine and `--table-options`). On a Spider target a sharded table is
    /// created on every backend (dropped there first) with `clause`, and on the head with
    /// `ENGINE=SPIDER` and its partitions.
    pub async fn create(&mut self, make: &dyn Fn(&str) -> String, clause: &str) -> Result<()> {
        let sql = make(clause);
        let what = format!(
            "creating table {}",
            created_table(&sql).unwrap_or("(unnamed)")
        );
        if !self.target.is_spider() {
            return self
                .head
                .execute(&sql)
                .await
                .map_err(|e| self.db_err(&what, e));
        }
        let table = created_table(&sql)
            .ok_or_else(|| Error::run(format!("not a CREATE TABLE statement: {sql}")))?
            .to_string();
        match self.placement(&table)? {
            Placement::Head => self
                .head
                .execute(&sql)
                .await
                .map_err(|e| self.db_err(&what, e)),
            Placement::Key(key) => {
                for k in 0..self.backends.len() {
                    let on = format!("{what} on Spider backend {k}");
                    let r = self.backends[k]
                        .execute(&format!("DROP TABLE IF EXISTS {table}"))
                        .await;
                    let r = match r {
                        Ok(()) => self.backends[k].execute(&sql).await,
                        Err(e) => Err(e),
                    };
                    r.map_err(|e| self.db_err(&on, e))?;
                }
                let head_sql = make("ENGINE=SPIDER") + &spider_suffix(self.target, &table, key);
                self.head
                    .execute(&head_sql)
                    .await
                    .map_err(|e| self.db_err(&format!("{what} on the Spider head"), e))
            }
        }
    }

    /// Create every table of a schema file (the table part of `crate::contract::ddl`); returns its
    /// index statements for `index` after the load.
    pub async fn create_schema(&mut self, schema: &str, clause: &str) -> Result<Vec<String>> {
        let (tables, indexes) = crate::contract::ddl(schema, clause);
        for i in 0..tables.len() {
            let make = |c: &str| crate::contract::ddl(schema, c).0[i].clone();
            self.create(&make, clause).await?;
        }
        Ok(indexes)
    }

    /// Run an index statement: on a Spider target on every backend that holds the table and
    /// on the head (a unique index there without UNIQUE: see `without_unique`).
    pub async fn index(&mut self, sql: &str, what: &str) -> Result<()> {
        if !self.target.is_spider() {
            return self
                .head
                .execute(sql)
                .await
                .map_err(|e| self.db_err(what, e));
        }
        let table = indexed_table(sql)
            .ok_or_else(|| Error::run(format!("{what}: cannot tell the table of '{sql}'")))?
            .to_string();
        if let Placement::Key(_) = self.placement(&table)? {
            for k in 0..self.backends.len() {
                let r = self.backends[k].execute(sql).await;
                r.map_err(|e| self.db_err(&format!("{what} on Spider backend {k}"), e))?;
            }
            let head_sql = without_unique(sql);
            return self
                .head
                .execute(&head_sql)
                .await
                .map_err(|e| self.db_err(&format!("{what} on the Spider head"), e));
        }
        self.head
            .execute(sql)
            .await
            .map_err(|e| self.db_err(what, e))
    }

    /// After the load: `crate::contract::after_load` on the head, and on every backend for the sharded
    /// tables (fresh statistics where the rows are).
    pub async fn after_load(&mut self, tables: &[&str]) -> Result<()> {
        crate::contract::after_load(self.head, tables).await?;
        let sharded: Vec<&str> = tables
            .iter()
            .copied()
            .filter(|t| matches!(self.placement(t), Ok(Placement::Key(_))))
            .collect();
        for b in &mut self.backends {
            crate::contract::after_load(b, &sharded).await?;
        }
        Ok(())
    }

    /// What loads the tables (usable from several threads at once).
    pub fn loader(&self) -> Loader<'a> {
        Loader {
            target: self.target,
            keys: self.keys.clone(),
        }
    }
}

/// What a workload's `cleanup` is, for `open_schema` (drops its tables and metadata).
pub type Cleanup = for<'c> fn(&'c mut Conn) -> futures_util::future::LocalBoxFuture<'c, Result<()>>;

/// A workload's tables as `open_schema` creates them from one schema file.
pub struct Tables<'s> {
    /// The workload's name in the metadata table.
    pub workload: &'static str,
    /// What the metadata says of the tables asked for (the workload's `meta_info`); the
    /// table options and a Spider layout are added to it here.
    pub info: String,
    /// The table that, with matching metadata, says the tables are loaded already.
    pub check: &'s str,
    /// The workload's schema for the target's dbms (`CREATE TABLE`s and indexes).
    pub schema: &'s str,
    pub keys: ShardKeys,
    /// Drops the workload's tables and metadata.
    pub cleanup: Cleanup,
}

/// Tables opened for loading: where to load, the index statements to run after the load,
/// and the metadata to write once loaded.
pub struct Opened<'a> {
    pub place: Place<'a>,
    pub indexes: Vec<String>,
    pub meta: String,
    workload: &'static str,
}

/// The first steps of a prepare whose tables come from one schema file, with or without a
/// fleet (`crate::fleet`'s steps) and on one server or a Spider target: None when the tables
/// are already there as asked and nothing is to be done; else where to load. The process that
/// creates the tables (shard 0, or the only one) drops the old ones first and tells the other
/// shards.
pub async fn open_schema<'a>(
    conn: &'a mut Conn,
    target: &'a TargetSpec,
    tables: Tables<'_>,
    engine: Option<&str>,
    opts: &LoadOptions,
    fleet: Option<&dyn FleetLoad>,
) -> Result<Option<Opened<'a>>> {
    use crate::model::fleet_load::Role;
    let meta = crate::contract::with_layout(
        crate::contract::with_table_options(tables.info, opts),
        target,
    );
    let loaded =
        crate::contract::already_loaded(conn, [tables.check], tables.workload, &meta).await?;
    let clause = crate::contract::table_clause(engine, opts);
    let role = fleet_load::begin(fleet, conn, loaded).await?;
    if let Role::Skip = role {
        return Ok(None);
    }
    let mut place = Place::open(conn, target, Some(tables.keys)).await?;
    let indexes = match role {
        Role::Create => {
            (tables.cleanup)(place.head).await?;
            let indexes = place.create_schema(tables.schema, &clause).await?;
            fleet_load::tables_ready(fleet, place.head).await?;
            indexes
        }
        _ => crate::contract::ddl(tables.schema, &clause).1,
    };
    Ok(Some(Opened {
        place,
        indexes,
        meta,
        workload: tables.workload,
    }))
}

impl Opened<'_> {
    /// After the rows, in the process that finishes the load (the last shard, or the only
    /// process: `fleet::loaded`): the statements of `first` (SQL, what it does), the indexes
    /// (`what` names them in the progress line), the statistics of `tables`, the metadata;
    /// then the fleet is told.
    pub async fn finish(
        &mut self,
        first: &[(&str, &str)],
        what: &str,
        tables: &[&str],
        fleet: Option<&dyn FleetLoad>,
    ) -> Result<()> {
        if !fleet_load::loaded(fleet, self.place.head).await? {
            return Ok(());
        }
        for (sql, doing) in first {
            self.place.head.query(sql).await.ctx(doing)?;
        }
        for st in &self.indexes {
            self.place.index(st, what).await?;
        }
        self.place.after_load(tables).await?;
        crate::contract::write_meta(self.place.head, self.workload, &self.meta).await?;
        fleet_load::done(fleet, self.place.head).await
    }
}

/// Loads a workload's tables where they live: on one server `load::load`; on a Spider target
/// a sharded table's rows go straight to the backends, in parallel.
#[derive(Clone)]
pub struct Loader<'a> {
    target: &'a TargetSpec,
    keys: Arc<ShardKeys>,
}

impl Loader<'_> {
    /// Load rows 1..=`rows` of `src` into its (empty) table.
    pub fn load(&self, src: &dyn RowSource, rows: u64, opts: &LoadOptions) -> Result<LoadStats> {
        let placement = self
            .keys
            .iter()
            .find(|(t, _)| t == src.table())
            .map(|(_, p)| *p);
        if self.target.is_spider() && opts.shard.is_some() {
            return Err(Error::usage(
                "a fleet's shards cannot load a Spider target: prepare it from one process (its load already goes to every backend in parallel)",
            ));
        }
        let key = match placement {
            Some(Placement::Key(k)) if self.target.is_spider() => k,
            _ => return load::load(self.target, src, rows, opts),
        };
        let col = src
            .columns()
            .iter()
            .position(|c| *c == key)
            .ok_or_else(|| {
                Error::run(format!(
                    "table {}: its sharding key {key} is not among the loaded columns",
                    src.table()
                ))
            })?;
        let n = self.target.spider.len();
        // The loader connections are shared out over the backends (at least one each).
        let per_backend = opts.connections.max(1).div_ceil(n);
        let start = Instant::now();
        let results: Vec<Result<LoadStats>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|k| {
                    let target = self.target.spider_backend(k);
                    let mut o = opts.clone();
                    o.connections = per_backend;
                    // One progress bar (backend 0's: every backend walks all the ids).
                    o.progress = opts.progress && k == 0;
                    o.journal = Default::default();
                    s.spawn(move || {
                        let part = Partition {
                            src,
                            col,
                            k: k as u64,
                            n: n as u64,
                        };
                        load::load(&target, &part, rows, &o)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::run("a loader thread panicked")))
                })
                .collect()
        });
        let elapsed = start.elapsed().as_secs_f64();
        let mut total = LoadStats {
            table: src.table().to_string(),
            rows: 0,
            connections: 0,
            method: opts.method,
            elapsed_s: elapsed,
            rows_per_s: 0.0,
            interrupted: false,
            disturbed: false,
            others_cpus: None,
        };
        let mut first_err = None;
        for r in results {
            match r {
                Ok(s) => {
                    total.rows += s.rows;
                    total.connections += s.connections;
                    total.method = s.method;
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        total.rows_per_s = total.rows as f64 / elapsed.max(1e-9);
        if let Some(e) = first_err {
            if matches!(e.failure, crate::error::Failure::Interrupted(_)) {
                opts.journal.record(LoadStats {
                    interrupted: true,
                    ..total
                });
            }
            return Err(e);
        }
        opts.journal.record(total.clone());
        Ok(total)
    }
}

/// The rows of one backend: the source's rows whose key mod N is k (the others are left
/// empty, which the loader skips).
struct Partition<'s> {
    src: &'s dyn RowSource,
    col: usize,
    k: u64,
    n: u64,
}

impl RowSource for Partition<'_> {
    fn table(&self) -> &str {
        self.src.table()
    }
    fn columns(&self) -> &[&'static str] {
        self.src.columns()
    }
    fn row(&self, id: u64, out: &mut Vec<Value>) {
        self.src.row(id, out);
        if out.is_empty() {
            return;
        }
        if partition_of(out.get(self.col), self.n) != self.k {
            out.clear();
        }
    }
}

/// MariaDB's `PARTITION BY HASH (col)`: partition = col mod N (NULL goes to partition 0).
fn partition_of(v: Option<&Value>, n: u64) -> u64 {
    let key = match v {
        Some(Value::Int(i)) => i.unsigned_abs(),
        Some(Value::Text(t)) => t.trim().parse::<i64>().map_or(0, i64::unsigned_abs),
        _ => 0,
    };
    key % n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::shard::tests::spider_target;

    #[test]
    fn statements() {
        let t = spider_target();
        assert_eq!(
            create_server_sql(&t, 1, &t.spider[1]),
            "CREATE OR REPLACE SERVER eb_eb_1 FOREIGN DATA WRAPPER mysql OPTIONS (HOST 'localhost', SOCKET '/tmp/b1.sock', USER 'root', PASSWORD 'pw', DATABASE 'eb')"
        );
        assert_eq!(
            spider_suffix(&t, "stock", "s_w_id"),
            " COMMENT = 'wrapper \"mysql\", table \"stock\"' PARTITION BY HASH (s_w_id) (PARTITION p0 COMMENT = 'srv \"eb_eb_0\"', PARTITION p1 COMMENT = 'srv \"eb_eb_1\"')"
        );
        assert_eq!(quote("a'b\\"), "'a\\'b\\\\'");
        assert_eq!(server_name("my-db", 0), "eb_my_db_0");
    }

    #[test]
    fn table_names() {
        assert_eq!(
            created_table("CREATE TABLE sbtest1 (\n id int)"),
            Some("sbtest1")
        );
        assert_eq!(
            created_table("CREATE TABLE IF NOT EXISTS `t`(x int)"),
            Some("t")
        );
        assert_eq!(created_table("DROP TABLE x"), None);
        assert_eq!(
            indexed_table("CREATE INDEX k_1 ON sbtest1 (k)"),
            Some("sbtest1")
        );
        assert_eq!(
            indexed_table("ALTER TABLE normal ADD UNIQUE KEY email (email)"),
            Some("normal")
        );
        assert_eq!(
            without_unique("ALTER TABLE normal ADD UNIQUE KEY email (email), ADD KEY c (c)"),
            "ALTER TABLE normal ADD KEY email (email), ADD KEY c (c)"
        );
        assert_eq!(
            without_unique("CREATE UNIQUE INDEX u ON t (a)"),
            "CREATE INDEX u ON t (a)"
        );
    }

    #[test]
    fn hash_partitions() {
        assert_eq!(partition_of(Some(&Value::Int(3)), 2), 1);
        assert_eq!(partition_of(Some(&Value::Int(4)), 2), 0);
        assert_eq!(partition_of(Some(&Value::Text("5".into())), 3), 2);
        assert_eq!(partition_of(Some(&Value::Null), 3), 0);
    }
}
