//! sysbench's OLTP workloads as parts: sysbench 1.0.20's schema (sbtest1..N: id, k with index
//! k_N, c char(120), pad char(60)), value format, options, defaults and statements per
//! transaction, their load and their driver. Shared by the workloads that run them: `oltp`
//! (each under its own name, `oltp_read_write`, `oltp_point_select`, ...) and `schema-change`
//! (the load during its DDL); it is no workload itself, so neither imports the other. What
//! differs on purpose is listed in docs/oltp.md and in `Spec::notes`.

pub mod args;
pub mod data;
pub mod driver;
pub mod rand;

use serde::Serialize;

use crate::contract::shard::{Placement, ShardKeys};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Context, Result};
use crate::model::fleet_load::FleetLoad;
use crate::model::LoadOptions;
use crate::model::LoadStats;
use crate::workload::place::Place;

pub use driver::OltpDriver;
use rand::{Dist, RandType};

/// The workloads, by sysbench's script names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    OltpPointSelect,
    OltpReadOnly,
    OltpReadWrite,
    OltpWriteOnly,
    OltpUpdateIndex,
    OltpUpdateNonIndex,
    OltpInsert,
    OltpDelete,
    SelectRandomPoints,
    SelectRandomRanges,
    BulkInsert,
}

impl Kind {
    pub const ALL: [Kind; 11] = [
        Kind::OltpPointSelect,
        Kind::OltpReadOnly,
        Kind::OltpReadWrite,
        Kind::OltpWriteOnly,
        Kind::OltpUpdateIndex,
        Kind::OltpUpdateNonIndex,
        Kind::OltpInsert,
        Kind::OltpDelete,
        Kind::SelectRandomPoints,
        Kind::SelectRandomRanges,
        Kind::BulkInsert,
    ];
    pub const NAMES: [&'static str; 11] = [
        "oltp_point_select",
        "oltp_read_only",
        "oltp_read_write",
        "oltp_write_only",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_insert",
        "oltp_delete",
        "select_random_points",
        "select_random_ranges",
        "bulk_insert",
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Self::ALL[i])
    }

    pub fn describe(self) -> &'static str {
        match self {
            Kind::OltpPointSelect => "1 point SELECT per event, autocommit",
            Kind::OltpReadOnly => "BEGIN, 10 point + 4 range SELECTs, COMMIT (16 queries)",
            Kind::OltpReadWrite => {
                "BEGIN, 10 point + 4 range SELECTs, 2 UPDATEs, DELETE + INSERT, COMMIT (20 queries)"
            }
            Kind::OltpWriteOnly => "BEGIN, 2 UPDATEs, DELETE + INSERT, COMMIT (6 queries)",
            Kind::OltpUpdateIndex => "1 UPDATE of the indexed column k per event, autocommit",
            Kind::OltpUpdateNonIndex => "1 UPDATE of c per event, autocommit",
            Kind::OltpInsert => "1 INSERT per event, autocommit",
            Kind::OltpDelete => "1 DELETE per event, autocommit",
            Kind::SelectRandomPoints => "SELECT ... WHERE k IN (10 random values), sbtest1 only",
            Kind::SelectRandomRanges => {
                "SELECT count(k) WHERE 10 OR-ed k BETWEEN ranges, sbtest1 only"
            }
            Kind::BulkInsert => "multi-row INSERTs of (id, k) into one table per thread",
        }
    }

    /// Whether the workload changes the tables.
    pub fn writes(self) -> bool {
        !matches!(
            self,
            Kind::OltpPointSelect
                | Kind::OltpReadOnly
                | Kind::SelectRandomPoints
                | Kind::SelectRandomRanges
        )
    }
}

/// sysbench's workload options, with its names and defaults (see docs/oltp.md).
#[derive(Debug, Clone, Serialize)]
pub struct Spec {
    pub kind: Kind,
    pub seed: u64,
    pub table_size: u32,
    pub tables: u32,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub skip_trx: bool,
    pub auto_inc: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub rand_type: RandType,
    pub rand_spec_iter: u32,
    pub rand_spec_pct: u32,
    pub rand_spec_res: u32,
    pub rand_pareto_h: f64,
    /// select_random_points: values in the IN() list.
    pub random_points: u32,
    /// select_random_ranges: BETWEEN ranges per SELECT, and their width.
    pub number_of_ranges: u32,
    pub delta: u32,
    /// bulk_insert: rows per INSERT statement (sysbench fills a 512 KiB buffer instead).
    pub bulk_rows: u32,
    /// The storage engine asked for (MySQL), for tables created by drivers (bulk_insert).
    #[serde(skip)]
    pub engine: Option<String>,
    /// `--compressed-fraction`: c and pad from the shared generator (None: sysbench's digits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<data::SbText>,
    /// `--shard I/N`: this process's workers are workers shard*threads.. of the fleet's
    /// threads*N (random streams and insert ids then differ between shards).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::model::Shard>,
}

impl Spec {
    pub fn dist(&self) -> Dist {
        Dist::new(
            self.rand_type,
            self.rand_spec_iter,
            self.rand_spec_pct,
            self.rand_spec_res,
            self.rand_pareto_h,
        )
    }

    /// Queries per transaction as sysbench counts them (BEGIN and COMMIT included).
    pub fn queries_per_event(&self) -> u64 {
        let trx = if self.skip_trx { 0 } else { 2 };
        let ranges = if self.range_selects {
            (self.simple_ranges + self.sum_ranges + self.order_ranges + self.distinct_ranges) as u64
        } else {
            0
        };
        let writes = (self.index_updates + self.non_index_updates + 2 * self.delete_inserts) as u64;
        match self.kind {
            Kind::OltpPointSelect => 1,
            Kind::OltpReadOnly => trx + self.point_selects as u64 + ranges,
            Kind::OltpReadWrite => trx + self.point_selects as u64 + ranges + writes,
            Kind::OltpWriteOnly => trx + writes,
            Kind::OltpUpdateIndex => self.index_updates as u64,
            Kind::OltpUpdateNonIndex => self.non_index_updates as u64,
            Kind::OltpInsert | Kind::OltpDelete => 1,
            Kind::SelectRandomPoints | Kind::SelectRandomRanges | Kind::BulkInsert => 1,
        }
    }

    pub fn options_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    pub fn notes(&self) -> Vec<String> {
        let mut n = vec![
            format!(
                "{}: one operation is one sysbench event (a transaction); statements count sysbench's queries, BEGIN and COMMIT included ({} per event).",
                self.kind.name(),
                self.queries_per_event()
            ),
            "sysbench-compatible statements and shapes of the random distributions; the random sequences differ (own generator, deterministic for --seed).".into(),
            "A transaction that fails with a deadlock, lock wait timeout, serialization failure, busy or (transactional tables) duplicate key is rolled back and retried with the same parameters; each failed attempt is counted under its error class, the transaction once when it succeeds (its latency is that of the successful attempt).".into(),
        ];
        if matches!(
            self.kind,
            Kind::OltpReadOnly | Kind::OltpReadWrite | Kind::OltpWriteOnly
        ) && !self.skip_trx
        {
            n.push("On non-transactional engines (MyISAM, Aria, MEMORY) no BEGIN/COMMIT is sent (2 fewer statements per transaction than sysbench); a duplicate key from racing delete-insert pairs is counted under duplicate_key and the transaction ends there.".into());
        }
        if self.kind.writes() {
            n.push("Write workloads change the tables; a later run reuses them as they are (like sysbench). Run cleanup + prepare for the same starting data.".into());
        }
        if self.kind == Kind::BulkInsert {
            n.push(format!(
                "bulk_insert: one operation is one INSERT of {} rows (sysbench counts one event per row and sends a statement per 512 KiB); rows/s = ops/s x {}.",
                self.bulk_rows, self.bulk_rows
            ));
        }
        if let Some(t) = &self.text {
            n.push(t.c.note("oltp: column c (loaded and written)"));
            n.push(t.pad.note("oltp: column pad (loaded and written)"));
        }
        if self.kind == Kind::OltpInsert {
            n.push("oltp_insert uses a prepared INSERT (sysbench sends it as text); the statement count is the same.".into());
        }
        n
    }

    fn meta_info(&self, engine: Option<&str>) -> String {
        let mut m = serde_json::json!({
            "tables": self.tables,
            "table_size": self.table_size,
            "seed": self.seed,
            "engine": engine,
            "auto_inc": self.auto_inc,
            "secondary": self.secondary,
            "create_secondary": self.create_secondary,
            "rand_type": self.rand_type,
            "data_version": 1,
            // oltp_insert without --auto-inc starts from empty tables (as sysbench does).
            "empty": self.empty_tables(),
        });
        // Only when given, so that tables loaded before the option existed are still reused.
        if let Some(t) = &self.text {
            m["compressed_fraction"] = t.c.fraction.into();
        }
        m.to_string()
    }

    /// sysbench's oltp_insert prepares empty tables when --auto-inc is off (its random unique
    /// ids would collide with the loaded ones).
    fn empty_tables(&self) -> bool {
        self.kind == Kind::OltpInsert && !self.auto_inc
    }

    /// On a Spider target every sbtest table is split by id (bulk_insert's drivers create
    /// their own tables: it has none).
    pub fn shard_keys(&self) -> Option<ShardKeys> {
        (self.kind != Kind::BulkInsert).then(|| {
            self.table_names()
                .into_iter()
                .map(|t| (t, Placement::Key("id")))
                .collect()
        })
    }

    pub fn table_names(&self) -> Vec<String> {
        (1..=self.tables).map(|i| format!("sbtest{i}")).collect()
    }
}

/// The key under which every sbtest workload records what it loaded: they share the tables.
const META_KEY: &str = "sysbench-oltp";

/// CREATE TABLE for sbtestN in sysbench's schema for this DBMS.
pub fn create_table_sql(
    dbms: Dbms,
    n: u32,
    auto_inc: bool,
    secondary: bool,
    engine: &str,
) -> String {
    let id_def = match (dbms, auto_inc) {
        (Dbms::Mysql, true) => "INTEGER NOT NULL AUTO_INCREMENT",
        (Dbms::Postgres, true) => "SERIAL",
        // SQLite: INTEGER PRIMARY KEY is the rowid, which numbers new rows itself.
        (Dbms::Sqlite, true) if !secondary => "INTEGER",
        _ => "INTEGER NOT NULL",
    };
    let key = match (dbms, secondary) {
        (_, false) => ",\n  PRIMARY KEY (id)".to_string(),
        // MySQL needs the key inline: an AUTO_INCREMENT column must be a key.
        (Dbms::Mysql, true) => ",\n  KEY xid (id)".to_string(),
        // PostgreSQL and SQLite have no inline KEY: xid_N is created after the load.
        (_, true) => String::new(),
    };
    let tail = match dbms {
        Dbms::Mysql => engine.to_string(),
        _ => String::new(),
    };
    format!(
        "CREATE TABLE sbtest{n} (\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{key}\n) {tail}"
    )
}

/// Indexes built after the load: k_N (`--create-secondary`, on by default) and, for
/// `--secondary` outside MySQL, the secondary index on id.
pub fn index_sql(dbms: Dbms, n: u32, secondary: bool, create_secondary: bool) -> Vec<String> {
    let mut v = Vec::new();
    if secondary && dbms != Dbms::Mysql {
        v.push(format!("CREATE INDEX xid_{n} ON sbtest{n} (id)"));
    }
    if create_secondary {
        v.push(format!("CREATE INDEX k_{n} ON sbtest{n} (k)"));
    }
    v
}

/// Create and load sbtest1..N unless identical tables are there.
pub async fn prepare(
    spec: &Spec,
    conn: &mut Conn,
    target: &TargetSpec,
    engine: Option<&str>,
    opts: &LoadOptions,
    fleet: Option<&dyn FleetLoad>,
) -> Result<Vec<LoadStats>> {
    use crate::model::fleet_load::{self, Role};
    if spec.kind == Kind::BulkInsert {
        // bulk_insert's drivers create their own sbtestN (id, k) tables, one per thread: the
        // OLTP tables of the same names are gone afterwards.
        crate::contract::delete_meta(conn, META_KEY).await?;
        return Ok(Vec::new());
    }
    let want = crate::contract::with_layout(
        crate::contract::with_table_options(spec.meta_info(engine), opts),
        target,
    );
    let loaded = crate::contract::already_loaded(conn, spec.table_names(), META_KEY, &want).await?;
    let dbms = conn.dbms();
    let engine_clause = crate::contract::table_clause(engine, opts);
    let rows = if spec.empty_tables() {
        0
    } else {
        spec.table_size as u64
    };
    // Every table is created before any is loaded (a fleet's shards load into them all),
    // and indexed after all are loaded.
    let role = fleet_load::begin(fleet, conn, loaded).await?;
    if let Role::Skip = role {
        return Ok(Vec::new());
    }
    let mut place = Place::open(conn, target, spec.shard_keys()).await?;
    if let Role::Create = role {
        cleanup(spec, place.head).await?;
        for n in 1..=spec.tables {
            let make =
                |clause: &str| create_table_sql(dbms, n, spec.auto_inc, spec.secondary, clause);
            place.create(&make, &engine_clause).await?;
        }
        fleet_load::tables_ready(fleet, place.head).await?;
    }
    let loader = place.loader();
    let sources: Vec<data::SbRows> = (1..=spec.tables)
        .filter(|_| rows > 0)
        .map(|n| data::SbRows {
            table: format!("sbtest{n}"),
            table_num: n,
            seed: spec.seed,
            table_size: spec.table_size,
            dist: spec.dist(),
            text: spec.text.clone(),
        })
        .collect();
    // Several tables load at once, each by one loader connection in one transaction
    // (`load::load_tables`: MariaDB's bulk path); one table is split over every connection, as
    // is a Spider target's table, whose rows go to its backends.
    let stats = if sources.len() > 1 && !target.is_spider() {
        let tables: Vec<(&dyn crate::load::RowSource, u64)> = sources
            .iter()
            .map(|s| (s as &dyn crate::load::RowSource, rows))
            .collect();
        crate::load::load_tables(target, &tables, opts)?
    } else {
        let mut stats = Vec::new();
        for src in &sources {
            stats.push(loader.load(src, rows, opts)?);
        }
        stats
    };
    if !fleet_load::loaded(fleet, place.head).await? {
        return Ok(stats);
    }
    for n in 1..=spec.tables {
        let t = format!("sbtest{n}");
        for st in index_sql(dbms, n, spec.secondary, spec.create_secondary) {
            place
                .index(&st, &format!("creating the indexes of {t}"))
                .await?;
        }
        if dbms == Dbms::Postgres && spec.auto_inc {
            // Rows were loaded with explicit ids: move the SERIAL sequence past them, as
            // sysbench's own prepare (which lets the sequence number the rows) leaves it.
            place.head.query(&format!(
                "SELECT setval(pg_get_serial_sequence('{t}', 'id'), (SELECT coalesce(max(id), 0) + 1 FROM {t}), false)"
            ))
            .await
            .ctx(format!("setting the id sequence of {t}"))?;
        }
    }
    let names = spec.table_names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    place.after_load(&refs).await?;
    crate::contract::write_meta(place.head, META_KEY, &want).await?;
    fleet_load::done(fleet, place.head).await?;
    Ok(stats)
}

/// Drop sbtest1..N (and any further sbtestN that follow without a gap, such as bulk_insert's
/// per-thread tables) and the metadata.
pub async fn cleanup(spec: &Spec, conn: &mut Conn) -> Result<()> {
    let mut n = 1;
    loop {
        let t = format!("sbtest{n}");
        let exists = conn.table_exists(&t).await.ctx("checking for the tables")?;
        if !exists && n > spec.tables {
            break;
        }
        if exists {
            conn.execute(&format!("DROP TABLE IF EXISTS {t}"))
                .await
                .ctx(format!("dropping table {t}"))?;
        }
        n += 1;
    }
    crate::contract::delete_meta(conn, META_KEY).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()), Some(k));
        }
        assert_eq!(Kind::parse("oltp_nope"), None);
    }

    #[test]
    fn ddl_matches_sysbench() {
        let s = create_table_sql(Dbms::Mysql, 3, true, false, "ENGINE=InnoDB");
        assert!(s.contains("id INTEGER NOT NULL AUTO_INCREMENT"));
        assert!(s.contains("c CHAR(120) DEFAULT '' NOT NULL"));
        assert!(s.contains("PRIMARY KEY (id)"));
        assert!(s.ends_with("ENGINE=InnoDB"));
        assert!(create_table_sql(Dbms::Postgres, 1, true, false, "").contains("id SERIAL"));
        assert_eq!(
            index_sql(Dbms::Mysql, 2, false, true),
            vec!["CREATE INDEX k_2 ON sbtest2 (k)"]
        );
    }
}
