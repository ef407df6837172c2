//! `micro-read`: the 13-query read micro-benchmark of the 2007 InnoDB / MyISAM / Falcon report
//! (PHPTestSuite), over the "normal" table.
//!
//! Rows returned per query on average (documented in docs/micro-read.md): PK point 1; key point
//! ~80 (LIMIT 5: 5); PK range 1 aggregate row over 100 ids; key range ~60 (LIMIT 50: <= 50);
//! full scan 1 aggregate row.

pub mod data;
mod entry;

pub use entry::{MicroArgs, ENTRY};

use serde::Serialize;

use crate::contract::shard::{Placement, ShardKeys};
use crate::contract::{Driver, Step};
use crate::db::{Conn, DbResult, Dbms, StmtId, TargetSpec, Value};
use crate::error::{Context, Error, Result};
use crate::model::fleet_load::FleetLoad;
use crate::model::LoadOptions;
use crate::model::LoadStats;
use crate::rng::Rng;
use crate::workload::place::{open_schema, Tables};

pub use data::NormalRows;

pub const NAME: &str = "micro-read";

const SCHEMA_MYSQL: &str = include_str!("schema/mysql.sql");
const SCHEMA_POSTGRES: &str = include_str!("schema/postgres.sql");
const SCHEMA_SQLITE: &str = include_str!("schema/sqlite.sql");

/// The resolved options of a micro-read run.
#[derive(Debug, Clone)]
pub struct Spec {
    pub table_size: u64,
    pub seed: u64,
    pub queries: Vec<Query>,
}

impl Spec {
    pub fn notes(&self) -> Vec<String> {
        let mut n = vec![format!(
            "micro-read: ~{} rows per country_id, READ_KEY_RANGE covers {} of {} states, READ_PK_RANGE covers {} ids (the report does not state its range width).",
            data::ROWS_PER_COUNTRY, data::STATE_RANGE, data::STATES, data::PK_RANGE
        )];
        if data::countries(self.table_size) == 65_535
            && self.table_size > 65_535 * data::ROWS_PER_COUNTRY
        {
            n.push("country_id is capped at 65,535 distinct values (smallint unsigned): READ_KEY_* queries return more rows per key than the documented ~80.".into());
        }
        n
    }
}

/// The 13 queries, under the report's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Query {
    #[serde(rename = "READ_PK_POINT")]
    PkPoint,
    #[serde(rename = "READ_PK_POINT_INDEX")]
    PkPointIndex,
    #[serde(rename = "READ_KEY_POINT")]
    KeyPoint,
    #[serde(rename = "READ_KEY_POINT_LIMIT")]
    KeyPointLimit,
    #[serde(rename = "READ_KEY_POINT_NO_DATA")]
    KeyPointNoData,
    #[serde(rename = "READ_KEY_POINT_NO_DATA_LIMIT")]
    KeyPointNoDataLimit,
    #[serde(rename = "READ_PK_RANGE")]
    PkRange,
    #[serde(rename = "READ_PK_RANGE_INDEX")]
    PkRangeIndex,
    #[serde(rename = "READ_KEY_RANGE")]
    KeyRange,
    #[serde(rename = "READ_KEY_RANGE_LIMIT")]
    KeyRangeLimit,
    #[serde(rename = "READ_KEY_RANGE_NO_DATA")]
    KeyRangeNoData,
    #[serde(rename = "READ_KEY_RANGE_NO_DATA_LIMIT")]
    KeyRangeNoDataLimit,
    #[serde(rename = "READ_FTS")]
    Fts,
}

/// What a query's placeholders stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Params {
    Id,
    Country,
    IdRange,
    CountryStates,
    None,
}

use Query::*;

impl Query {
    pub const ALL: [Query; 13] = [
        PkPoint,
        PkPointIndex,
        KeyPoint,
        KeyPointLimit,
        KeyPointNoData,
        KeyPointNoDataLimit,
        PkRange,
        PkRangeIndex,
        KeyRange,
        KeyRangeLimit,
        KeyRangeNoData,
        KeyRangeNoDataLimit,
        Fts,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PkPoint => "READ_PK_POINT",
            PkPointIndex => "READ_PK_POINT_INDEX",
            KeyPoint => "READ_KEY_POINT",
            KeyPointLimit => "READ_KEY_POINT_LIMIT",
            KeyPointNoData => "READ_KEY_POINT_NO_DATA",
            KeyPointNoDataLimit => "READ_KEY_POINT_NO_DATA_LIMIT",
            PkRange => "READ_PK_RANGE",
            PkRangeIndex => "READ_PK_RANGE_INDEX",
            KeyRange => "READ_KEY_RANGE",
            KeyRangeLimit => "READ_KEY_RANGE_LIMIT",
            KeyRangeNoData => "READ_KEY_RANGE_NO_DATA",
            KeyRangeNoDataLimit => "READ_KEY_RANGE_NO_DATA_LIMIT",
            Fts => "READ_FTS",
        }
    }

    pub fn parse(s: &str) -> Result<Query> {
        let up = s.trim().to_ascii_uppercase();
        Query::ALL
            .iter()
            .copied()
            .find(|q| q.name() == up)
            .ok_or_else(|| {
                Error::usage(format!(
                    "unknown query '{s}' for micro-read; known queries: {}",
                    Query::ALL.map(Query::name).join(",")
                ))
            })
    }

    pub fn sql(self) -> &'static str {
        match self {
            PkPoint => "SELECT name FROM normal WHERE id = ?",
            PkPointIndex => "SELECT id FROM normal WHERE id = ?",
            KeyPoint => "SELECT name FROM normal WHERE country_id = ?",
            KeyPointLimit => "SELECT name FROM normal WHERE country_id = ? LIMIT 5",
            KeyPointNoData => "SELECT state_id FROM normal WHERE country_id = ?",
            KeyPointNoDataLimit => "SELECT state_id FROM normal WHERE country_id = ? LIMIT 5",
            PkRange => "SELECT min(dob) FROM normal WHERE id BETWEEN ? AND ?",
            PkRangeIndex => "SELECT count(id) FROM normal WHERE id BETWEEN ? AND ?",
            KeyRange => "SELECT name FROM normal WHERE country_id = ? AND state_id BETWEEN ? AND ?",
            KeyRangeLimit => {
                "SELECT name FROM normal WHERE country_id = ? AND state_id BETWEEN ? AND ? LIMIT 50"
            }
            KeyRangeNoData => {
                "SELECT city FROM normal WHERE country_id = ? AND state_id BETWEEN ? AND ?"
            }
            KeyRangeNoDataLimit => {
                "SELECT city FROM normal WHERE country_id = ? AND state_id BETWEEN ? AND ? LIMIT 50"
            }
            Fts => "SELECT min(dob) FROM normal",
        }
    }

    fn params_kind(self) -> Params {
        match self {
            PkPoint | PkPointIndex => Params::Id,
            KeyPoint | KeyPointLimit | KeyPointNoData | KeyPointNoDataLimit => Params::Country,
            PkRange | PkRangeIndex => Params::IdRange,
            KeyRange | KeyRangeLimit | KeyRangeNoData | KeyRangeNoDataLimit => {
                Params::CountryStates
            }
            Fts => Params::None,
        }
    }

    /// Draw this query's parameters for a table of `rows` rows.
    pub fn params(self, r: &mut Rng, rows: u64, out: &mut Vec<Value>) {
        out.clear();
        match self.params_kind() {
            Params::Id => out.push(Value::Int(r.range(1, rows) as i64)),
            Params::Country => out.push(Value::Int(r.range(1, data::countries(rows)) as i64)),
            Params::IdRange => {
                let lo = r.range(1, rows.saturating_sub(data::PK_RANGE - 1).max(1));
                out.extend([
                    Value::Int(lo as i64),
                    Value::Int((lo + data::PK_RANGE - 1) as i64),
                ]);
            }
            Params::CountryStates => {
                let c = r.range(1, data::countries(rows));
                let s = r.range(1, data::STATES - data::STATE_RANGE + 1);
                out.extend([
                    Value::Int(c as i64),
                    Value::Int(s as i64),
                    Value::Int((s + data::STATE_RANGE - 1) as i64),
                ]);
            }
            Params::None => {}
        }
    }
}

/// Runs one query in a loop on one connection.
pub struct MicroDriver {
    query: Query,
    rows: u64,
    rng: Rng,
    stmt: StmtId,
    params: Vec<Value>,
}

impl MicroDriver {
    pub fn new(query: Query, rows: u64, seed: u64, worker: usize) -> Self {
        Self {
            query,
            rows,
            rng: Rng::keyed(seed, 1000 + query as u64, worker as u64),
            stmt: StmtId(0),
            params: Vec::with_capacity(3),
        }
    }
}

impl Driver for MicroDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.stmt = conn.prepare(self.query.sql()).await?;
        Ok(())
    }

    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        self.query
            .params(&mut self.rng, self.rows, &mut self.params);
        conn.exec_rows(self.stmt, &self.params)
            .await
            .map(Step::query)
    }
}

/// What a prepared table must match to be reused.
fn meta_info(rows: u64, seed: u64, engine: Option<&str>) -> String {
    serde_json::json!({ "table_size": rows, "seed": seed, "engine": engine, "data_version": 1 })
        .to_string()
}

/// Create and load the table unless an identical one is already there. Returns the load
/// statistics when it loaded.
pub async fn prepare(
    conn: &mut Conn,
    target: &TargetSpec,
    rows: u64,
    seed: u64,
    engine: Option<&str>,
    opts: &LoadOptions,
    fleet: Option<&dyn FleetLoad>,
) -> Result<Option<LoadStats>> {
    use futures_util::FutureExt;
    let tables = Tables {
        workload: NAME,
        info: meta_info(rows, seed, engine),
        check: "normal",
        schema: match conn.dbms() {
            Dbms::Mysql => SCHEMA_MYSQL,
            Dbms::Postgres => SCHEMA_POSTGRES,
            Dbms::Sqlite => SCHEMA_SQLITE,
        },
        keys: shard_keys(),
        cleanup: |c| cleanup(c).boxed_local(),
    };
    let Some(mut opened) = open_schema(conn, target, tables, engine, opts, fleet).await? else {
        return Ok(None);
    };
    let src = NormalRows {
        seed,
        countries: data::countries(rows),
    };
    // The loader runs on its own threads and connections; this connection waits.
    let stats = opened.place.loader().load(&src, rows, opts)?;
    opened
        .finish(&[], "creating the indexes of normal", &["normal"], fleet)
        .await?;
    Ok(Some(stats))
}

/// On a Spider target the table is split by id (the unique index on email is then unique
/// within each backend only).
pub fn shard_keys() -> ShardKeys {
    vec![("normal".to_string(), Placement::Key("id"))]
}

/// Drop the table and its metadata.
pub async fn cleanup(conn: &mut Conn) -> Result<()> {
    conn.execute("DROP TABLE IF EXISTS normal")
        .await
        .ctx("dropping table normal")?;
    crate::contract::delete_meta(conn, NAME).await
}
