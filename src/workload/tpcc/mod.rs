//! `tpcc`: TPC-C (clauses 1 to 4 of the specification) without keying and think times.
//!
//! Data: the nine tables of tpcc-mysql (schema files per DBMS under `schema/`), loaded per
//! clause 4.3 through the shared loader (`data.rs`). Run: one operation, "mix", in which each
//! connection is a terminal that draws the five transactions from a shuffled deck of the
//! weights (45/43/4/4/4 by default). Terminal k has home warehouse (k mod W) + 1 and, for
//! StockLevel, the fixed district (k div W) mod 10 + 1. `check` verifies the consistency
//! conditions 3.3.2.1 to 3.3.2.4. What differs from the spec and from tpcc-mysql is in
//! docs/tpcc.md.

pub mod check;
pub mod constraints;
pub mod data;
pub mod delivery;
mod driver;
mod entry;
pub mod new_order;
pub mod order_status;
pub mod payment;
pub mod procedures;
mod report;
pub mod stock_level;

pub use driver::{Deck, TpccDriver};
pub use entry::{TpccArgs, ENTRY};
pub use report::{constraints as constraints_of, Report, RunSection, TPM_C, TPM_TOTAL};

use crate::contract::shard::{Placement, ShardKeys};
use crate::contract::Step;
use crate::db::{Conn, DbError, DbResult, Dbms, StmtId, TargetSpec, Value};
use crate::error::{Context, Error, Result};
use crate::model::fleet_load::FleetLoad;
use crate::model::LoadOptions;
use crate::model::LoadStats;
use crate::rng::Rng;
use crate::workload::place::{open_schema, Tables};

pub use data::CConst;

pub const NAME: &str = "tpcc";

/// The transaction types, in the order of `--weights` and of `Step::kind`.
pub const KINDS: [&str; 5] = [
    "NewOrder",
    "Payment",
    "OrderStatus",
    "Delivery",
    "StockLevel",
];
pub const NEW_ORDER: u8 = 0;
pub const PAYMENT: u8 = 1;
pub const ORDER_STATUS: u8 = 2;
pub const DELIVERY: u8 = 3;
pub const STOCK_LEVEL: u8 = 4;

/// TPC-C 5.2.3: the minimum mix (45 % NewOrder is what remains).
pub const DEFAULT_WEIGHTS: [u32; 5] = [45, 43, 4, 4, 4];

const SCHEMA_MYSQL: &str = include_str!("schema/mysql.sql");
const SCHEMA_POSTGRES: &str = include_str!("schema/postgres.sql");
const SCHEMA_SQLITE: &str = include_str!("schema/sqlite.sql");

/// Transaction isolation set on every session (`None`: the server's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Isolation {
    pub fn parse(s: &str, dbms: Dbms) -> Result<Isolation> {
        let i = match s {
            "read-committed" => Isolation::ReadCommitted,
            "repeatable-read" => Isolation::RepeatableRead,
            "serializable" => Isolation::Serializable,
            _ => {
                return Err(Error::usage(format!(
                "--isolation: unknown level '{s}'; use read-committed, repeatable-read or serializable"
            )))
            }
        };
        if dbms == Dbms::Sqlite && i != Isolation::Serializable {
            return Err(Error::usage(
                "--isolation: SQLite transactions are always serializable; use --isolation serializable or leave it out",
            ));
        }
        Ok(i)
    }

    fn sql(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }
}

/// `--weights`: five non-negative integers in KINDS order, not all zero.
pub fn parse_weights(s: &str) -> Result<[u32; 5]> {
    let bad = |why: &str| {
        Error::usage(format!(
            "--weights: {why}; give five integers for {} (e.g. 45,43,4,4,4)",
            KINDS.join(",")
        ))
    };
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 5 {
        return Err(bad(&format!("'{s}' has {} values, not 5", parts.len())));
    }
    let mut w = [0u32; 5];
    for (slot, p) in w.iter_mut().zip(&parts) {
        *slot = p
            .parse::<u32>()
            .ok()
            .filter(|v| *v <= 10_000)
            .ok_or_else(|| bad(&format!("'{p}' is not an integer in 0..=10000")))?;
    }
    if w.iter().all(|v| *v == 0) {
        return Err(bad("all weights are 0"));
    }
    Ok(w)
}

/// The resolved options of a tpcc run.
#[derive(Debug, Clone)]
pub struct Spec {
    pub warehouses: u32,
    pub seed: u64,
    pub weights: [u32; 5],
    pub isolation: Option<Isolation>,
    /// Keying and think times of TPC-C 5.2.5 (`--spec-timing`).
    pub spec_timing: bool,
    /// `--shard I/N`: this shard's terminals have their home warehouses in its block only.
    pub shard: Option<crate::model::Shard>,
    /// `--terminals N`: N terminals share the run's connections (`--threads`); None: every
    /// connection is one terminal.
    pub terminals: Option<u32>,
    /// `--load-tables`: the nine tables at once (each in one transaction) or one by one.
    pub load_tables: crate::load::TableOrder,
    /// `--procedures`: each transaction is one CALL of a stored procedure (MariaDB/MySQL).
    pub procedures: bool,
}

/// TPC-C 5.2.5.7: minimum keying time per transaction type (KINDS order).
pub const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
/// TPC-C 5.2.5.7: minimum mean think time per transaction type (KINDS order).
pub const THINK_MEAN_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];
/// TPC-C 5.2.5.3: 90th-percentile response-time limit per transaction type (KINDS order;
/// Delivery's is for queueing the deferred transaction, which runs inline here).
pub const RESPONSE_LIMIT_S: [f64; 5] = [5.0, 5.0, 5.0, 5.0, 20.0];

/// TPC-C 5.2.5.4: think time drawn from a negative exponential distribution with mean `mean_s`,
/// truncated at 10 times the mean.
pub fn think_time(r: &mut Rng, mean_s: f64) -> std::time::Duration {
    // Uniform in (0, 1]: -ln(u) is finite.
    let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let u = 1.0 - u;
    std::time::Duration::from_secs_f64((-u.ln() * mean_s).min(10.0 * mean_s))
}

impl Spec {
    /// The home warehouses of this process's terminals (first, last): all of them, or the
    /// shard's block (`resolve` checked that every shard has one).
    pub fn homes(&self) -> (u32, u32) {
        match self.shard {
            Some(s) => s
                .block(self.warehouses as u64, "--warehouses")
                .map_or((1, self.warehouses), |(lo, hi)| (lo as u32, hi as u32)),
            None => (1, self.warehouses.max(1)),
        }
    }

    pub fn c(&self) -> CConst {
        CConst::from_seed(self.seed)
    }

    pub fn options(&self) -> serde_json::Value {
        let mut o = serde_json::json!({
            "warehouses": self.warehouses,
            "weights": KINDS.iter().zip(self.weights).map(|(k, w)| (k.to_string(), serde_json::json!(w))).collect::<serde_json::Map<_, _>>(),
            "isolation": self.isolation,
            "c_constants": self.c(),
            "keying_and_think_times": self.spec_timing,
            "terminals": self.terminals,
            "shard": self.shard.map(|s| serde_json::json!({
                "index": s.index,
                "count": s.count,
                "home_warehouses": self.homes(),
            })),
        });
        // Only when set: a result of the statement mode stays comparable with earlier ones.
        if self.procedures {
            o["procedures"] = serde_json::json!(true);
        }
        o
    }

    pub fn notes(&self) -> Vec<String> {
        let timing = if self.spec_timing {
            "tpcc: keying and think times of TPC-C 5.2.5 (keying 18/3/2/2/2 s, negative-exponential think times with means 12/12/10/5/5 s, truncated at 10x) are waited between transactions, outside the measured latency; run 10 terminals per warehouse (--threads, or --terminals over fewer connections) for the spec's terminal count (maximum about 12.86 tpmC per warehouse). Still not an audited TPC-C: no screens, no deferred Delivery queue, no 8-hour steady state."
        } else {
            "tpcc: no keying or think times (every terminal runs transactions back to back), so tpmC is not comparable with audited TPC-C results; terminals are not 10 per warehouse."
        };
        let mut notes = vec![timing.to_string()];
        if let Some(n) = self.terminals {
            notes.push(format!("tpcc: {n} terminals share the run's connections (--terminals): terminal k runs on connection k mod connections; each keeps its own home warehouse, district, random stream and keying/think times, and a terminal that is due while its connection is busy waits for it, that wait counted in its transaction's latency (its response time at the terminal). connection_waits counts the transactions that waited."));
        }
        if self.procedures {
            notes.push("tpcc: stored-procedure mode (--procedures): each transaction is one CALL of a procedure created at prepare time from the statement mode's own statements (same rows, locks and isolation), as HammerDB runs TPC-C; its figures are a different mode's, not comparable with the statement mode's.".into());
        }
        notes.extend([
            "tpcc: tpmC counts committed NewOrders per minute (the 1 % user rollbacks excluded); tpmTotal counts every finished transaction, rollbacks included. Transactions failed by deadlock, lock-wait timeout, serialization failure or busy are counted as errors of their type and retried with the same input.".into(),
            "tpcc: the mix is drawn from a shuffled deck of the weights per terminal, so each terminal's shares are exact over every full deck.".into(),
            "tpcc: constraints judge each type's 90th-percentile service time of the finished attempt against TPC-C 5.2.5.3 (5 s; StockLevel 20 s; Delivery inline, so held to 5 s), without the failed attempts of retried transactions; the mix judges the configured weights against 5.2.3's minimums (measured shares are reported beside them).".into(),
            "tpcc: money is read as integer cents and written as cents / 100.0 by the SQL; SQLite stores DECIMAL columns as REAL.".into(),
        ]);
        notes
    }
}

/// Statement template tokens: `{int}` an integer type for CAST, `{text}` a text type,
/// `{for_update}` a locking read where the DBMS has one (SQLite has none: BEGIN IMMEDIATE
/// takes the write lock for the whole transaction instead).
pub fn sql_for(dbms: Dbms, template: &str) -> String {
    let (int, text, fu) = match dbms {
        Dbms::Mysql => ("SIGNED", "CHAR", " FOR UPDATE"),
        Dbms::Postgres => ("BIGINT", "TEXT", " FOR UPDATE"),
        Dbms::Sqlite => ("INTEGER", "TEXT", ""),
    };
    template
        .replace("{int}", int)
        .replace("{text}", text)
        .replace("{for_update}", fu)
}

async fn prep(conn: &mut Conn, template: &str) -> DbResult<StmtId> {
    let sql = sql_for(conn.dbms(), template);
    conn.prepare(&sql).await
}

/// Per-step scratch: reused buffers and what the step did.
pub struct Ctx {
    dbms: Dbms,
    ints: Vec<Option<i64>>,
    /// The last text result (`texts`).
    texts: Vec<Option<String>>,
    /// Row counts of the last batch (`batch`), one per statement.
    counts: Vec<u64>,
    rows: u64,
    statements: u64,
}

impl Ctx {
    /// Column `i` of the last integer result (NULL as 0).
    fn int(&self, i: usize) -> i64 {
        self.ints.get(i).copied().flatten().unwrap_or(0)
    }

    async fn exec(&mut self, conn: &mut Conn, id: StmtId, params: &[Value]) -> DbResult<u64> {
        self.statements += 1;
        let n = conn.exec_rows(id, params).await?;
        self.rows += n;
        Ok(n)
    }

    /// Execute a statement whose reply nothing below depends on (no rows: INSERT, UPDATE,
    /// DELETE): the lean clients send it with the next statement instead of waiting for its
    /// reply (`Conn::exec_pipelined`); an error of it comes back from that statement or from
    /// `commit`, and the transaction is rolled back like any other failed one.
    async fn pipe(&mut self, conn: &mut Conn, id: StmtId, params: &[Value]) -> DbResult<()> {
        self.statements += 1;
        self.rows += conn.exec_pipelined(id, params).await?;
        Ok(())
    }

    /// Column `i` of the last text result, parsed as an integer (0 if it is not one).
    fn text_int(&self, i: usize) -> i64 {
        self.texts
            .get(i)
            .and_then(|v| v.as_deref())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    fn step(&self) -> Step {
        Step {
            rows: self.rows,
            statements: self.statements,
            ..Step::default()
        }
    }
}

/// Run a prepared statement whose columns are integers into `cx.ints`; returns the row count.
async fn ints(cx: &mut Ctx, conn: &mut Conn, id: StmtId, params: &[Value]) -> DbResult<u64> {
    cx.statements += 1;
    cx.ints.clear();
    let n = conn.exec_ints(id, params, &mut cx.ints).await?;
    cx.rows += n;
    Ok(n)
}

/// Run a prepared statement into `cx.texts` (every column as text); returns the row count.
async fn texts(cx: &mut Ctx, conn: &mut Conn, id: StmtId, params: &[Value]) -> DbResult<u64> {
    cx.statements += 1;
    cx.texts.clear();
    let n = conn.exec_text(id, params, &mut cx.texts).await?;
    cx.rows += n;
    Ok(n)
}

/// Run reads that do not depend on each other, in one round trip where the client can
/// (`Conn::exec_ints_batch`): their integer columns into `cx.ints`, one after another, and
/// each statement's row count into `cx.counts`.
async fn batch(cx: &mut Ctx, conn: &mut Conn, calls: &[(StmtId, &[Value])]) -> DbResult<()> {
    cx.statements += calls.len() as u64;
    cx.ints.clear();
    cx.counts.clear();
    conn.exec_ints_batch(calls, &mut cx.ints, &mut cx.counts)
        .await?;
    cx.rows += cx.counts.iter().sum::<u64>();
    Ok(())
}

/// Start a transaction. SQLite: BEGIN IMMEDIATE for the read-write ones, so that lock
/// conflicts show up as busy at the start rather than as deadlocks in the middle.
async fn begin(cx: &mut Ctx, conn: &mut Conn, writes: bool) -> DbResult<()> {
    cx.statements += 1;
    conn.begin(match (cx.dbms, writes) {
        (Dbms::Sqlite, true) => "BEGIN IMMEDIATE",
        (Dbms::Sqlite, false) => "BEGIN",
        (Dbms::Mysql, _) => "START TRANSACTION",
        (Dbms::Postgres, _) => "BEGIN",
    })
    .await
}

/// COMMIT, sent only once every statement sent ahead (`Ctx::pipe`) came back clean
/// (`Conn::commit_pipelined`).
async fn commit(cx: &mut Ctx, conn: &mut Conn) -> DbResult<()> {
    cx.statements += 1;
    conn.commit_pipelined().await?;
    cx.rows += conn.take_pipelined_rows();
    Ok(())
}

/// What a prepared database must match to be reused.
fn meta_info(spec: &Spec, engine: Option<&str>) -> String {
    serde_json::json!({
        "warehouses": spec.warehouses,
        "seed": spec.seed,
        "engine": engine,
        "c_constants": spec.c(),
        "data_version": 1,
    })
    .to_string()
}

fn schema(dbms: Dbms) -> &'static str {
    match dbms {
        Dbms::Mysql => SCHEMA_MYSQL,
        Dbms::Postgres => SCHEMA_POSTGRES,
        Dbms::Sqlite => SCHEMA_SQLITE,
    }
}

/// The load time as a timestamp literal every DBMS accepts.
fn now_literal() -> String {
    literal(std::time::SystemTime::now())
}

fn literal(t: std::time::SystemTime) -> String {
    let s = humantime::format_rfc3339_seconds(t).to_string();
    s.trim_end_matches('Z').replace('T', " ")
}

/// Create and load the nine tables unless identical ones are there (per-table load stats),
/// and with `--procedures` (re-)create the stored procedures.
pub async fn prepare(
    conn: &mut Conn,
    target: &TargetSpec,
    spec: &Spec,
    engine: Option<&str>,
    opts: &LoadOptions,
    fleet: Option<&dyn FleetLoad>,
) -> Result<Vec<LoadStats>> {
    let stats = load(conn, target, spec, engine, opts, fleet).await?;
    if spec.procedures {
        procedures::create(conn).await?;
    }
    Ok(stats)
}

async fn load(
    conn: &mut Conn,
    target: &TargetSpec,
    spec: &Spec,
    engine: Option<&str>,
    opts: &LoadOptions,
    fleet: Option<&dyn FleetLoad>,
) -> Result<Vec<LoadStats>> {
    use crate::model::fleet_load;
    use futures_util::FutureExt;
    let tables = Tables {
        workload: NAME,
        info: meta_info(spec, engine),
        check: "order_line",
        schema: schema(conn.dbms()),
        keys: shard_keys(),
        cleanup: |c| cleanup(c).boxed_local(),
    };
    let Some(mut opened) = open_schema(conn, target, tables, engine, opts, fleet).await? else {
        return Ok(Vec::new());
    };
    let loader = opened.place.loader();
    // A fleet's shards stamp their rows with shard 0's time: the tables are as one load's.
    let now = fleet_load::load_time_ms(fleet).map_or_else(now_literal, |ms| {
        literal(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms as u64))
    });
    let sources: Vec<data::Table> = data::TABLES
        .into_iter()
        .map(|name| data::Table {
            name,
            seed: spec.seed,
            c: spec.c(),
            now: now.clone(),
        })
        .collect();
    let rows = |t: &data::Table| data::row_count(t.name, spec.warehouses as u64);
    // A Spider target's loader sends each table's rows to its backends: one table at a time.
    let stats = if spec.load_tables == crate::load::TableOrder::AtOnce && !target.is_spider() {
        let tables: Vec<(&dyn crate::load::RowSource, u64)> = sources
            .iter()
            .map(|t| (t as &dyn crate::load::RowSource, rows(t)))
            .collect();
        crate::load::load_tables(target, &tables, opts)?
    } else {
        let mut stats = Vec::new();
        for src in &sources {
            stats.push(loader.load(src, rows(src), opts)?);
        }
        stats
    };
    opened
        .finish(
            &[],
            "creating the TPC-C secondary indexes",
            &data::TABLES,
            fleet,
        )
        .await?;
    Ok(stats)
}

/// On a Spider target every table is split by its warehouse column, except item: it is not
/// per warehouse, is only read, and is read alone (NewOrder's `i_id IN (...)`), so it stays
/// whole on the head, where that read costs no round trip to a backend.
pub fn shard_keys() -> ShardKeys {
    [
        ("item", Placement::Head),
        ("warehouse", Placement::Key("w_id")),
        ("district", Placement::Key("d_w_id")),
        ("customer", Placement::Key("c_w_id")),
        ("history", Placement::Key("h_w_id")),
        ("new_orders", Placement::Key("no_w_id")),
        ("orders", Placement::Key("o_w_id")),
        ("order_line", Placement::Key("ol_w_id")),
        ("stock", Placement::Key("s_w_id")),
    ]
    .into_iter()
    .map(|(t, p)| (t.to_string(), p))
    .collect()
}

/// Drop the tables and their metadata.
pub async fn cleanup(conn: &mut Conn) -> Result<()> {
    for t in data::TABLES {
        conn.execute(&format!("DROP TABLE IF EXISTS {t}"))
            .await
            .ctx(format!("dropping table {t}"))?;
    }
    if conn.dbms() == Dbms::Mysql {
        procedures::drop_all(conn).await?;
    }
    crate::contract::delete_meta(conn, NAME).await
}

/// Map a DbError of the admin connection into a run error.
pub fn db(e: DbError, what: &str) -> Error {
    Error::run(format!("{what}: {}", e.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_parse() {
        assert_eq!(parse_weights("45,43,4,4,4").unwrap(), DEFAULT_WEIGHTS);
        assert_eq!(parse_weights(" 1, 0,0,0,0").unwrap(), [1, 0, 0, 0, 0]);
        assert!(parse_weights("1,2,3").is_err());
        assert!(parse_weights("0,0,0,0,0").is_err());
        assert!(parse_weights("a,1,1,1,1").is_err());
        assert!(Isolation::parse("read-committed", Dbms::Sqlite).is_err());
        assert!(Isolation::parse("serializable", Dbms::Sqlite).is_ok());
        assert!(Isolation::parse("snapshot", Dbms::Mysql).is_err());
    }

    /// 5.2.5.4: negative exponential with the given mean, truncated at 10x the mean.
    #[test]
    fn think_time_mean_and_cap() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let mut sum = 0.0;
        let mut max: f64 = 0.0;
        for _ in 0..n {
            let t = think_time(&mut r, 12.0).as_secs_f64();
            sum += t;
            max = max.max(t);
        }
        let mean = sum / n as f64;
        // Truncation at 10x removes e^-10 of the mass: the mean stays within 0.5 % of 12 s.
        assert!((mean - 12.0).abs() < 0.12, "mean {mean}");
        assert!(max <= 120.0 && max > 100.0, "max {max}");
    }

    #[test]
    fn templates() {
        assert_eq!(
            sql_for(Dbms::Sqlite, "CAST(? AS {int}) FROM t{for_update}"),
            "CAST(? AS INTEGER) FROM t"
        );
        assert_eq!(sql_for(Dbms::Mysql, "x{for_update}"), "x FOR UPDATE");
    }
}
