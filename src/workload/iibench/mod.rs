//! `iibench`: the insert benchmark (Tokutek's iiBench as iibench.py v0 of mdcallag/mytools
//! implements it): rows go into `purchases_index` in multi-row batches while its three
//! secondary indexes are maintained; optional query threads read through those indexes.
//!
//! The result is a curve, not a point: the insert rate over each last `--window-rows` rows
//! against the cumulative rows (the report's "average insertion rate for the last 2 million
//! rows"), with the server's bytes written per row and the write amplification per window
//! (`run.rs`, `wear.rs`). It has a run shape of its own: iiBench is one long run bounded by rows
//! or time, not a sweep, so `run.rs` makes each window one phase of the shared runner
//! (`driver.rs`: the insert and query drivers). What differs from iibench.py is in
//! docs/iibench.md.

mod driver;
mod entry;
pub mod options;
mod report;
pub mod result;
pub mod run;
pub mod wear;

pub use entry::{IibenchEntry, ENTRY};
pub use options::IibenchArgs;
pub use report::Report;

use std::time::{Duration, SystemTime};

use crate::db::{Conn, DbResult, Dbms, StmtId, Value};
use crate::error::{Context, Result};
use crate::model::fleet_load::FleetLoad;
use crate::model::LoadStats;
use crate::rng::Rng;
use crate::workload::textgen::TextGen;

pub const NAME: &str = "iibench";
pub const TABLE: &str = "purchases_index";

const SCHEMA_MYSQL: &str = include_str!("schema/mysql.sql");
const SCHEMA_POSTGRES: &str = include_str!("schema/postgres.sql");
const SCHEMA_SQLITE: &str = include_str!("schema/sqlite.sql");

// iibench.py's defaults (v0): value ranges of the generated columns and rows per query.
pub const CASHREGISTERS: u64 = 1000;
pub const PRODUCTS: u64 = 10_000;
pub const CUSTOMERS: u64 = 100_000;
pub const MAX_PRICE: u64 = 500;
pub const ROWS_PER_QUERY: i64 = 10;
pub const DEFAULT_ROWS_PER_COMMIT: u64 = 1000;
pub const DEFAULT_DATA_LENGTH: usize = 10;
/// Window when the run is bounded by time (the issue: 100,000 rows).
pub const DEFAULT_TIME_WINDOW_ROWS: u64 = 100_000;

/// Logical bytes of a row apart from `data`: transactionid (8, bigint), dateandtime (8),
/// cashregisterid, customerid, productid (4 each), price (4, float).
pub const FIXED_ROW_BYTES: u64 = 8 + 8 + 4 * 3 + 4;

const COLUMNS: [&str; 6] = [
    "dateandtime",
    "cashregisterid",
    "customerid",
    "productid",
    "price",
    "data",
];

/// The resolved options of an iibench run.
#[derive(Debug, Clone)]
pub struct Spec {
    pub seed: u64,
    pub rows_per_commit: u64,
    /// Stop after this many rows (`--max-rows`).
    pub max_rows: Option<u64>,
    /// Stop after this long (`--duration`/`--time`).
    pub max_time: Option<Duration>,
    pub window_rows: u64,
    pub inserters: usize,
    pub query_threads: usize,
    /// The generator of the `data` column (lengths and compressibility).
    pub text: TextGen,
    /// `--max-table-rows`: after each batch, delete the rows inserted this many rows earlier.
    pub max_table_rows: Option<u64>,
    /// `run --shard I/N`: this shard inserts the fleet's rows numbered I+1, I+1+N, ... (their
    /// contents; the server numbers them all), and its share of `max_rows`.
    pub shard: Option<crate::model::Shard>,
}

impl Spec {
    /// The fleet's number of this shard's row `i` (1-based), whose contents it inserts.
    pub fn fleet_row(&self, i: u64) -> u64 {
        match self.shard {
            Some(s) => (i - 1) * s.count as u64 + s.index as u64 + 1,
            None => i,
        }
    }

    /// The rows this shard inserts at most: its rows among the fleet's `--max-rows`.
    pub fn shard_max_rows(&self) -> Option<u64> {
        let m = self.max_rows?;
        Some(match self.shard {
            Some(s) if m <= s.index as u64 => 0,
            Some(s) => (m - s.index as u64 - 1) / s.count as u64 + 1,
            None => m,
        })
    }

    pub fn options(&self) -> serde_json::Value {
        let (lo, hi) = self.text.len_range();
        serde_json::json!({
            "rows_per_commit": self.rows_per_commit,
            "max_rows": self.max_rows,
            "max_time_s": self.max_time.map(|d| d.as_secs_f64()),
            "window_rows": self.window_rows,
            "insert_connections": self.inserters,
            "query_threads": self.query_threads,
            "rows_per_query": ROWS_PER_QUERY,
            "secondary_indexes": 3,
            "data_length_min": lo,
            "data_length_max": hi,
            "compressed_fraction": self.text.fraction,
            "max_table_rows": self.max_table_rows,
            "shard": self.shard.map(|s| serde_json::json!({"index": s.index, "count": s.count})),
            "data_compression": {
                "random_share": self.text.random_share,
                "ratios": self.text.ratios,
            },
        })
    }

    pub fn notes(&self) -> Vec<String> {
        let r = self.text.ratios;
        let mut n = vec![
            "iibench: one operation is one multi-row INSERT of --rows-per-commit rows in its own transaction (autocommit; SQLite: one transaction of prepared inserts); latency is per batch. Query threads are counted apart, in the iibench section.".into(),
            "iibench: a window is one phase of the insert connections that ends at the first batch reaching its row boundary, so windows hold whole batches; windows are back to back with the runner's barrier between them (about 0.2-0.3 ms), outside their rates; the last window may be partial (marked). The table starts empty every run.".into(),
            "iibench: server bytes written come from /proc/PID/io write_bytes of the server (PostgreSQL: the postmaster and its live children) without forcing any flush during the run, so a window's figure is what reached the storage layer then; the total adds one forced flush at the end. Logical bytes per row are 32 + the data length (bigint key, datetime, three ints, a float).".into(),
            format!(
                "iibench: data column compressibility: requested {:.2} of the raw size with zstd level 3; achieved on an independent 256 KiB sample of values: zstd-3 {:.3}, lz4 {:.3}, zlib-6 {:.3} (text of 64 symbols cannot go below about 0.76 of its size when random: docs/iibench.md).",
                self.text.fraction, r.zstd3, r.lz4, r.zlib6
            ),
            "iibench: values as iibench.py draws them (cash register 0..999, product 0..9999, customer 0..99999, price (random*500 + customer)/100), but from enginebench's generator and seed; dateandtime is the batch's start time in UTC seconds.".into(),
        ];
        if let Some(m) = self.max_table_rows {
            n.push(format!("iibench: --max-table-rows {m}: after each committed batch of rows r..s the same connection deletes transactionid r-{m}..s-{m} (one DELETE by primary-key range), so the table holds about {m} rows once {m} are inserted (iibench.py --with_max_table_rows: it deletes the oldest --rows-per-commit rows after each batch once the table passes the limit; the same in steady state). Ids are the row numbers only while no insert fails: auto-increment gaps after a failed batch shift the ranges. Inserted rows, windows and rates count inserts only; the deletes' time is in them and in the batch latency (same connection, same operation), their count and latency are in deletes."));
        }
        n
    }

    /// The DELETE that keeps the table at `max_table_rows` after rows `first..first + n` (None
    /// while the table is smaller): the rows inserted `max_table_rows` rows earlier.
    pub fn delete_for(&self, first: u64, n: u64) -> Option<(u64, u64, String)> {
        let m = self.max_table_rows?;
        let last = first + n - 1;
        if last <= m {
            return None;
        }
        let (lo, hi) = (first.saturating_sub(m).max(1), last - m);
        Some((
            lo,
            hi,
            format!("DELETE FROM {TABLE} WHERE transactionid BETWEEN {lo} AND {hi}"),
        ))
    }

    /// Build the next batch's INSERT statement (rows `first..first + n`, 1-based) into `sql`,
    /// or into `rows` for SQLite; returns the logical bytes of the batch.
    pub fn batch(
        &self,
        dbms: Dbms,
        first: u64,
        n: u64,
        sql: &mut String,
        rows: &mut Vec<Vec<Value>>,
    ) -> u64 {
        let now = now_literal(SystemTime::now());
        let mut data = Vec::with_capacity(self.text.len_range().1);
        let mut logical = 0;
        sql.clear();
        rows.clear();
        if dbms != Dbms::Sqlite {
            sql.push_str("INSERT INTO purchases_index (dateandtime,cashregisterid,customerid,productid,price,data) VALUES ");
        }
        for i in first..first + n {
            let mut r = Rng::keyed(self.seed, 6000, self.fleet_row(i));
            let cash = r.range(0, CASHREGISTERS - 1);
            let product = r.range(0, PRODUCTS - 1);
            let customer = r.range(0, CUSTOMERS - 1);
            // iibench.py: price = ((random * max_price) + customerid) / 100, printed with %.2f.
            let cents = customer + r.range(0, MAX_PRICE);
            data.clear();
            let len = self.text.draw_len(&mut r);
            self.text.fill(&mut r, len, &mut data);
            logical += FIXED_ROW_BYTES + len as u64;
            // The alphabet is ASCII without quotes or backslashes: no escaping needed.
            let text = std::str::from_utf8(&data).expect("ASCII");
            if dbms == Dbms::Sqlite {
                rows.push(vec![
                    Value::Text(now.clone()),
                    Value::Int(cash as i64),
                    Value::Int(customer as i64),
                    Value::Int(product as i64),
                    Value::Text(format!("{}.{:02}", cents / 100, cents % 100)),
                    Value::Text(text.to_string()),
                ]);
            } else {
                use std::fmt::Write;
                if i != first {
                    sql.push(',');
                }
                let _ = write!(
                    sql,
                    "('{now}',{cash},{customer},{product},{}.{:02},'{text}')",
                    cents / 100,
                    cents % 100
                );
            }
        }
        logical
    }

    pub fn columns() -> &'static [&'static str] {
        &COLUMNS
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of a time, for the datetime column.
pub fn now_literal(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's civil_from_days).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The three iiBench queries (iibench.py: one drawn at random per query, LIMIT 10, the index
/// forced on MySQL). Prices are bound as integer hundredths and divided in SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// (price, dateandtime, customerid) from price >= p.
    Pdc,
    /// (price, customerid) from price >= p.
    Market,
    /// (cashregisterid, price, customerid) from cashregisterid > c.
    Register,
}

impl Query {
    pub const ALL: [Query; 3] = [Query::Pdc, Query::Market, Query::Register];

    pub fn sql(self, dbms: Dbms) -> String {
        let force = |idx: &str| match dbms {
            Dbms::Mysql => format!(" FORCE INDEX (purchases_index_{idx})"),
            _ => String::new(),
        };
        let price = match dbms {
            Dbms::Mysql => "? / 100",
            Dbms::Postgres => "CAST(? AS DOUBLE PRECISION) / 100",
            Dbms::Sqlite => "? / 100.0",
        };
        match self {
            Query::Pdc => format!(
                "SELECT price,dateandtime,customerid FROM purchases_index{} WHERE price >= {price} ORDER BY price,dateandtime,customerid LIMIT {ROWS_PER_QUERY}",
                force("pdc")
            ),
            Query::Market => format!(
                "SELECT price,customerid FROM purchases_index{} WHERE price >= {price} ORDER BY price,customerid LIMIT {ROWS_PER_QUERY}",
                force("marketsegment")
            ),
            Query::Register => format!(
                "SELECT cashregisterid,price,customerid FROM purchases_index{} WHERE cashregisterid > ? ORDER BY cashregisterid,price,customerid LIMIT {ROWS_PER_QUERY}",
                force("registersegment")
            ),
        }
    }

    /// Draw a query and its parameter as iibench.py does.
    pub fn draw(r: &mut Rng) -> (Query, i64) {
        let q = *r.pick(&Query::ALL);
        let p = match q {
            Query::Register => r.range(0, CASHREGISTERS - 1),
            _ => r.range(0, CUSTOMERS - 1) + r.range(0, MAX_PRICE),
        };
        (q, p as i64)
    }
}

/// Prepare the three queries on a connection, in `Query::ALL` order.
pub async fn prepare_queries(conn: &mut Conn) -> DbResult<Vec<StmtId>> {
    let mut ids = Vec::new();
    for q in Query::ALL {
        let sql = q.sql(conn.dbms());
        ids.push(conn.prepare(&sql).await?);
    }
    Ok(ids)
}

fn schema(dbms: Dbms) -> &'static str {
    match dbms {
        Dbms::Mysql => SCHEMA_MYSQL,
        Dbms::Postgres => SCHEMA_POSTGRES,
        Dbms::Sqlite => SCHEMA_SQLITE,
    }
}

/// (Re)create the empty table with its three secondary indexes: every iiBench run starts from
/// an empty table (the curve is against the rows inserted so far).
/// A fleet's shard 0 makes it, the others wait until it is there.
pub async fn prepare(
    conn: &mut Conn,
    engine: Option<&str>,
    opts: &crate::model::LoadOptions,
    fleet: Option<&dyn FleetLoad>,
) -> Result<Vec<LoadStats>> {
    use crate::model::fleet_load::{self, Role};
    if fleet_load::begin(fleet, conn, false).await? == Role::Create {
        cleanup(conn).await?;
        let (tables, indexes) = crate::contract::ddl(
            schema(conn.dbms()),
            &crate::contract::table_clause(engine, opts),
        );
        for st in tables.iter().chain(&indexes) {
            conn.execute(st)
                .await
                .ctx("creating the iibench table purchases_index")?;
        }
        fleet_load::tables_ready(fleet, conn).await?;
    }
    if fleet_load::loaded(fleet, conn).await? {
        fleet_load::done(fleet, conn).await?;
    }
    Ok(vec![LoadStats {
        table: TABLE.into(),
        rows: 0,
        connections: 1,
        method: crate::model::LoadMethod::Insert,
        elapsed_s: 0.0,
        rows_per_s: 0.0,
        interrupted: false,
        disturbed: false,
        others_cpus: None,
    }])
}

pub async fn cleanup(conn: &mut Conn) -> Result<()> {
    conn.execute(&format!("DROP TABLE IF EXISTS {TABLE}"))
        .await
        .ctx("dropping table purchases_index")?;
    crate::contract::delete_meta(conn, NAME).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec {
            seed: 1,
            rows_per_commit: 3,
            max_rows: Some(10),
            max_time: None,
            window_rows: 5,
            inserters: 1,
            query_threads: 0,
            text: TextGen::new(1.0, 1, 10, 10),
            max_table_rows: None,
            shard: None,
        }
    }

    /// Deleting the rows max_table_rows behind each batch keeps max_table_rows rows and
    /// deletes every row once, in order.
    #[test]
    fn deletes_keep_the_table_size() {
        let s = Spec {
            max_table_rows: Some(25),
            rows_per_commit: 10,
            ..spec()
        };
        assert_eq!(spec().delete_for(1, 3), None);
        let mut deleted = Vec::new();
        let mut first = 1;
        for _ in 0..10 {
            if let Some((lo, hi, sql)) = s.delete_for(first, 10) {
                assert!(sql.ends_with(&format!("BETWEEN {lo} AND {hi}")));
                deleted.extend(lo..=hi);
            }
            first += 10;
            let inserted = first - 1;
            assert_eq!(inserted - deleted.len() as u64, inserted.min(25));
        }
        assert_eq!(deleted, (1..=75).collect::<Vec<u64>>());
    }

    #[test]
    fn dates() {
        assert_eq!(now_literal(SystemTime::UNIX_EPOCH), "1970-01-01 00:00:00");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400 + 3661);
        assert_eq!(now_literal(t), "2000-02-29 01:01:01");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_798_761_599);
        assert_eq!(now_literal(t), "2026-12-31 23:59:59");
    }

    #[test]
    fn batches_are_deterministic_and_well_formed() {
        let s = spec();
        let (mut a, mut b, mut rows) = (String::new(), String::new(), Vec::new());
        let la = s.batch(Dbms::Mysql, 4, 3, &mut a, &mut rows);
        s.batch(Dbms::Mysql, 4, 3, &mut b, &mut rows);
        assert_eq!(la, 3 * (FIXED_ROW_BYTES + 10));
        // Same rows, same values (the time literal aside).
        let strip = |s: &str| {
            s.split("'),")
                .map(|r| r[r.find(',').unwrap()..].to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&a), strip(&b));
        assert_eq!(a.matches("),(").count(), 2);
        assert!(a.starts_with("INSERT INTO purchases_index (dateandtime,"));
        let n = s.batch(Dbms::Sqlite, 1, 2, &mut a, &mut rows);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].len(), COLUMNS.len());
        assert_eq!(n, 2 * (FIXED_ROW_BYTES + 10));
        assert!(a.is_empty());
    }

    #[test]
    fn queries_draw_all_three_with_iibench_ranges() {
        let mut r = Rng::new(5);
        let mut seen = [0u32; 3];
        for _ in 0..3000 {
            let (q, p) = Query::draw(&mut r);
            let k = Query::ALL.iter().position(|x| *x == q).unwrap();
            seen[k] += 1;
            match q {
                Query::Register => assert!((0..1000).contains(&p)),
                _ => assert!((0..=100_499).contains(&p)),
            }
        }
        assert!(seen.iter().all(|&c| c > 800), "{seen:?}");
        assert!(Query::Pdc
            .sql(Dbms::Mysql)
            .contains("FORCE INDEX (purchases_index_pdc)"));
        assert!(!Query::Pdc.sql(Dbms::Postgres).contains("FORCE"));
    }
}
