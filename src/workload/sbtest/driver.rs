//! One connection's sysbench event loop: each `step` is one event (a transaction for
//! oltp_read_only / read_write / write_only), built as a plan of prepared statements with their
//! parameters and then executed.
//!
//! Failures (docs/oltp.md, "Errors and retries"): a deadlock, lock wait timeout, serialization
//! failure or busy error rolls the transaction back and the same plan is retried at the next
//! step, so every failed attempt is counted under its class by the runner and the transaction
//! is counted once, when it commits. Outside a transaction (autocommit, or a non-transactional
//! engine such as MyISAM) the retry resumes at the failed statement, because the statements
//! before it are already applied. A duplicate key is retried inside a transaction (PostgreSQL
//! raises it when two delete-insert pairs race on one id) and only counted outside one (MyISAM:
//! the other thread's insert won; retrying would fail again).

use super::data::text_value;
use super::data::{C_GROUPS, PAD_GROUPS};
use super::rand::{uniform, Dist};
use super::{Kind, Spec};
use crate::contract::{Driver, Step};
use crate::db::{Conn, DbError, DbResult, Dbms, ErrorClass, StmtId, Value};
use crate::rng::Rng;

/// The statements sysbench prepares per table (oltp_common.lua's stmt_defs), in our order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum S {
    Point,
    Simple,
    Sum,
    Order,
    Distinct,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    /// oltp_insert with --auto-inc: the id is left to the server.
    InsertAuto,
    RandomPoints,
    RandomRanges,
}
const NS: usize = 12;

fn sql(s: S, t: u32, spec: &Spec) -> String {
    match s {
        S::Point => format!("SELECT c FROM sbtest{t} WHERE id=?"),
        S::Simple => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
        S::Sum => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
        S::Order => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
        S::Distinct => {
            format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
        }
        S::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
        S::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
        S::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
        S::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
        S::InsertAuto => format!("INSERT INTO sbtest{t} (k, c, pad) VALUES (?, ?, ?)"),
        S::RandomPoints => {
            let marks = vec!["?"; spec.random_points as usize].join(", ");
            format!("SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({marks})")
        }
        S::RandomRanges => {
            let ranges = vec!["k BETWEEN ? AND ?"; spec.number_of_ranges as usize].join(" OR ");
            format!("SELECT count(k) FROM sbtest1 WHERE {ranges}")
        }
    }
}

/// Which statements a workload prepares.
fn needs(kind: Kind, spec: &Spec) -> Vec<S> {
    let reads = {
        let mut v = vec![S::Point];
        if spec.range_selects {
            v.extend([S::Simple, S::Sum, S::Order, S::Distinct]);
        }
        v
    };
    let writes = vec![S::IndexUpdate, S::NonIndexUpdate, S::Delete, S::Insert];
    match kind {
        Kind::OltpPointSelect => vec![S::Point],
        Kind::OltpReadOnly => reads,
        Kind::OltpReadWrite => [reads, writes].concat(),
        Kind::OltpWriteOnly => writes,
        Kind::OltpUpdateIndex => vec![S::IndexUpdate],
        Kind::OltpUpdateNonIndex => vec![S::NonIndexUpdate],
        Kind::OltpDelete => vec![S::Delete],
        Kind::OltpInsert if spec.auto_inc => vec![S::InsertAuto],
        Kind::OltpInsert => vec![S::Insert],
        Kind::SelectRandomPoints => vec![S::RandomPoints],
        Kind::SelectRandomRanges => vec![S::RandomRanges],
        Kind::BulkInsert => vec![],
    }
}

/// One statement of a plan: which prepared statement, and its slice of `params`.
#[derive(Debug, Clone, Copy)]
struct Op {
    stmt: StmtId,
    p0: usize,
    p1: usize,
}

pub struct OltpDriver {
    spec: Spec,
    worker: usize,
    threads: usize,
    rng: Rng,
    dist: Dist,
    /// Prepared statements: `stmts[table - 1][S as usize]`.
    stmts: Vec<[Option<StmtId>; NS]>,
    plan: Vec<Op>,
    params: Vec<Value>,
    /// A failed event to run again from this statement (None: build a new one).
    pending: Option<usize>,
    /// BEGIN text when events run in a transaction, else None (autocommit, skip_trx, or a
    /// non-transactional engine).
    begin: Option<&'static str>,
    /// oltp_insert without --auto-inc: this worker's next id (stride: the thread count).
    next_id: i64,
    /// bulk_insert: rows inserted so far into this worker's table.
    bulk_done: u64,
    buf: String,
}

impl OltpDriver {
    pub fn new(spec: &Spec, worker: usize, threads: usize) -> Self {
        OltpDriver {
            rng: Rng::keyed(spec.seed, 3000 + spec.kind as u64, worker as u64),
            dist: spec.dist(),
            spec: spec.clone(),
            worker,
            threads: threads.max(1),
            stmts: Vec::new(),
            plan: Vec::with_capacity(32),
            params: Vec::with_capacity(64),
            pending: None,
            begin: None,
            next_id: 0,
            bulk_done: 0,
            buf: String::with_capacity(128),
        }
    }

    fn id(&mut self) -> i64 {
        self.dist.draw(&mut self.rng, 1, self.spec.table_size) as i64
    }

    fn table(&mut self) -> usize {
        uniform(&mut self.rng, 1, self.spec.tables) as usize
    }

    fn text(&mut self, groups: usize) -> Value {
        text_value(
            self.spec.text.as_ref(),
            groups,
            &mut self.rng,
            &mut self.buf,
        );
        Value::Text(self.buf.clone())
    }

    fn push(&mut self, t: usize, s: S, values: impl IntoIterator<Item = Value>) {
        let p0 = self.params.len();
        self.params.extend(values);
        let stmt = self.stmts[t - 1][s as usize].expect("statement prepared in setup");
        self.plan.push(Op {
            stmt,
            p0,
            p1: self.params.len(),
        });
    }

    fn points(&mut self) {
        let t = self.table();
        let n = if self.spec.kind == Kind::OltpPointSelect {
            1 // oltp_point_select forces --point-selects=1
        } else {
            self.spec.point_selects
        };
        for _ in 0..n {
            let id = self.id();
            self.push(t, S::Point, [Value::Int(id)]);
        }
    }

    fn ranges(&mut self, s: S, n: u32) {
        let t = self.table();
        for _ in 0..n {
            let id = self.id();
            let hi = id + self.spec.range_size as i64 - 1;
            self.push(t, s, [Value::Int(id), Value::Int(hi)]);
        }
    }

    fn index_updates(&mut self) {
        let t = self.table();
        for _ in 0..self.spec.index_updates {
            let id = self.id();
            self.push(t, S::IndexUpdate, [Value::Int(id)]);
        }
    }

    fn non_index_updates(&mut self) {
        let t = self.table();
        for _ in 0..self.spec.non_index_updates {
            let c = self.text(C_GROUPS);
            let id = self.id();
            self.push(t, S::NonIndexUpdate, [c, Value::Int(id)]);
        }
    }

    fn delete_inserts(&mut self) {
        let t = self.table();
        for _ in 0..self.spec.delete_inserts {
            let id = self.id();
            let k = self.id();
            let c = self.text(C_GROUPS);
            let pad = self.text(PAD_GROUPS);
            self.push(t, S::Delete, [Value::Int(id)]);
            self.push(t, S::Insert, [Value::Int(id), Value::Int(k), c, pad]);
        }
    }

    /// This thread's segment of the key range (select_random_*: sysbench partitions the table
    /// into one segment per thread so that the threads' ranges do not overlap).
    fn segment(&self) -> (u32, u32) {
        let rlen = self.spec.table_size as f64 / self.threads as f64;
        let rmin = rlen * (self.worker % self.threads) as f64;
        (rmin as u32, (rmin + rlen) as u32)
    }

    /// Build the next event's plan (oltp_*.lua's event()).
    fn build(&mut self) {
        self.plan.clear();
        self.params.clear();
        let range_selects = self.spec.range_selects;
        match self.spec.kind {
            Kind::OltpPointSelect => self.points(),
            Kind::OltpReadOnly | Kind::OltpReadWrite => {
                self.points();
                if range_selects {
                    self.ranges(S::Simple, self.spec.simple_ranges);
                    self.ranges(S::Sum, self.spec.sum_ranges);
                    self.ranges(S::Order, self.spec.order_ranges);
                    self.ranges(S::Distinct, self.spec.distinct_ranges);
                }
                if self.spec.kind == Kind::OltpReadWrite {
                    self.index_updates();
                    self.non_index_updates();
                    self.delete_inserts();
                }
            }
            Kind::OltpWriteOnly => {
                self.index_updates();
                self.non_index_updates();
                self.delete_inserts();
            }
            Kind::OltpUpdateIndex => self.index_updates(),
            Kind::OltpUpdateNonIndex => self.non_index_updates(),
            Kind::OltpDelete => {
                let t = self.table();
                let id = self.id();
                self.push(t, S::Delete, [Value::Int(id)]);
            }
            Kind::OltpInsert => {
                let t = self.table();
                let k = self.id();
                let c = self.text(C_GROUPS);
                let pad = self.text(PAD_GROUPS);
                if self.spec.auto_inc {
                    self.push(t, S::InsertAuto, [Value::Int(k), c, pad]);
                } else {
                    let id = self.next_id;
                    self.next_id += self.threads as i64;
                    self.push(t, S::Insert, [Value::Int(id), Value::Int(k), c, pad]);
                }
            }
            Kind::SelectRandomPoints => {
                let (lo, hi) = self.segment();
                let mut v = Vec::with_capacity(self.spec.random_points as usize);
                for _ in 0..self.spec.random_points {
                    v.push(Value::Int(self.dist.draw(&mut self.rng, lo, hi) as i64));
                }
                self.push(1, S::RandomPoints, v);
            }
            Kind::SelectRandomRanges => {
                let (lo, hi) = self.segment();
                let mut v = Vec::with_capacity(2 * self.spec.number_of_ranges as usize);
                for _ in 0..self.spec.number_of_ranges {
                    let x = self.dist.draw(&mut self.rng, lo, hi) as i64;
                    v.extend([Value::Int(x), Value::Int(x + self.spec.delta as i64)]);
                }
                self.push(1, S::RandomRanges, v);
            }
            Kind::BulkInsert => {}
        }
    }

    /// After a failed statement `at` (plan.len() = the COMMIT): roll back if in a transaction
    /// and decide whether the same event runs again.
    async fn fail(&mut self, conn: &mut Conn, at: usize, e: DbError) -> DbError {
        let in_trx = self.begin.is_some();
        if e.class == ErrorClass::ConnectionLost {
            self.pending = None;
            return e;
        }
        if in_trx {
            let _ = conn.execute("ROLLBACK").await;
        }
        let retry = match e.class {
            ErrorClass::Deadlock
            | ErrorClass::LockWaitTimeout
            | ErrorClass::SerializationFailure
            | ErrorClass::Busy => true,
            ErrorClass::DuplicateKey => in_trx,
            _ => false,
        };
        self.pending = match (retry, in_trx) {
            (false, _) => None,
            (true, true) => Some(0),
            (true, false) => Some(at.min(self.plan.len().saturating_sub(1))),
        };
        e
    }

    async fn bulk(&mut self, conn: &mut Conn) -> DbResult<Step> {
        let n = self.spec.bulk_rows as u64;
        let first = self.bulk_done + 1;
        let rows: Vec<Vec<Value>> = (first..first + n)
            .map(|i| vec![Value::Int(i as i64), Value::Int(i as i64)])
            .collect();
        let table = format!("sbtest{}", self.worker + 1);
        conn.insert_rows(&table, &["id", "k"], &rows).await?;
        self.bulk_done += n;
        Ok(Step {
            rows: 0,
            statements: 1,
            ..Step::default()
        })
    }
}

/// Whether the table's engine supports transactions (MySQL: MyISAM, Aria, MEMORY do not).
async fn transactional(conn: &mut Conn) -> DbResult<bool> {
    if conn.dbms() != Dbms::Mysql {
        return Ok(true);
    }
    let v = conn
        .query_one(
            "SELECT e.TRANSACTIONS FROM information_schema.TABLES t JOIN information_schema.ENGINES e ON e.ENGINE = t.ENGINE \
             WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME = 'sbtest1'",
        )
        .await?;
    Ok(v.as_deref() != Some("NO"))
}

impl Driver for OltpDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        let spec = self.spec.clone();
        if spec.kind == Kind::BulkInsert {
            let t = self.worker + 1;
            let engine = match spec.engine.as_deref() {
                Some(e) if conn.dbms() == Dbms::Mysql => {
                    let e = if e.eq_ignore_ascii_case("myrocks") {
                        "ROCKSDB"
                    } else {
                        e
                    };
                    format!(" ENGINE={e}")
                }
                _ => String::new(),
            };
            conn.execute(&format!("DROP TABLE IF EXISTS sbtest{t}"))
                .await?;
            conn.execute(&format!(
                "CREATE TABLE sbtest{t} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id)){engine}"
            ))
            .await?;
            return Ok(());
        }
        let needed = needs(spec.kind, &spec);
        let tables = match spec.kind {
            Kind::SelectRandomPoints | Kind::SelectRandomRanges => 1,
            _ => spec.tables,
        };
        self.stmts = vec![[None; NS]; spec.tables as usize];
        for t in 1..=tables {
            for &s in &needed {
                let id = conn.prepare(&sql(s, t, &spec)).await?;
                self.stmts[t as usize - 1][s as usize] = Some(id);
            }
        }
        let trx_kind = matches!(
            spec.kind,
            Kind::OltpReadOnly | Kind::OltpReadWrite | Kind::OltpWriteOnly
        );
        self.begin = if trx_kind && !spec.skip_trx && transactional(conn).await? {
            Some(match (conn.dbms(), spec.kind) {
                // SQLite has one writer: take the write lock at BEGIN, so a conflict is a busy
                // retry of the whole transaction rather than a deadlock in its middle.
                (Dbms::Sqlite, Kind::OltpReadWrite | Kind::OltpWriteOnly) => "BEGIN IMMEDIATE",
                _ => "BEGIN",
            })
        } else {
            None
        };
        if spec.kind == Kind::OltpInsert && !spec.auto_inc {
            // Client-made ids: past every id there now, one residue class per worker, so
            // workers, shards and later runs never collide (sysbench draws unique random 32-bit ids).
            let mut max = 0i64;
            for t in 1..=spec.tables {
                let m = conn
                    .query_one(&format!("SELECT coalesce(max(id), 0) FROM sbtest{t}"))
                    .await?
                    .and_then(|s| s.parse::<i64>().ok())
                    .unwrap_or(0);
                max = max.max(m);
            }
            // Residue class (worker + 1) mod threads, whatever max each worker read: the
            // workers of a fleet's shards, which read max at different moments, never meet.
            let w = self.threads as i64;
            self.next_id = (max / w + 1) * w + self.worker as i64 + 1;
        }
        Ok(())
    }

    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        if self.spec.kind == Kind::BulkInsert {
            return self.bulk(conn).await;
        }
        let start = match self.pending.take() {
            Some(i) => i,
            None => {
                self.build();
                0
            }
        };
        let trx = self.begin;
        if let Some(begin) = trx {
            if let Err(e) = conn.begin(begin).await {
                return Err(self.fail(conn, 0, e).await);
            }
        }
        let mut rows = 0;
        for i in start..self.plan.len() {
            let op = self.plan[i];
            match conn.exec_rows(op.stmt, &self.params[op.p0..op.p1]).await {
                Ok(n) => rows += n,
                Err(e) => return Err(self.fail(conn, i, e).await),
            }
        }
        if trx.is_some() {
            if let Err(e) = conn.execute("COMMIT").await {
                let at = self.plan.len();
                return Err(self.fail(conn, at, e).await);
            }
        }
        Ok(Step {
            rows,
            statements: self.plan.len() as u64 + if trx.is_some() { 2 } else { 0 },
            ..Step::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::sbtest::rand::RandType;

    pub fn spec(kind: Kind) -> Spec {
        Spec {
            shard: None,
            kind,
            seed: 1,
            table_size: 10_000,
            tables: 1,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            skip_trx: false,
            auto_inc: true,
            secondary: false,
            create_secondary: true,
            rand_type: RandType::Special,
            rand_spec_iter: 12,
            rand_spec_pct: 1,
            rand_spec_res: 75,
            rand_pareto_h: 0.2,
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
            bulk_rows: 1000,
            engine: None,
            text: None,
        }
    }

    /// The plan of one event has sysbench's statements in sysbench's order.
    #[test]
    fn plans_have_sysbench_counts() {
        for kind in Kind::ALL {
            if kind == Kind::BulkInsert {
                continue;
            }
            let s = spec(kind);
            let mut d = OltpDriver::new(&s, 0, 1);
            d.stmts = vec![[Some(StmtId(0)); NS]];
            d.build();
            let trx = matches!(
                kind,
                Kind::OltpReadOnly | Kind::OltpReadWrite | Kind::OltpWriteOnly
            );
            assert_eq!(
                d.plan.len() as u64 + if trx { 2 } else { 0 },
                s.queries_per_event(),
                "{kind:?}"
            );
        }
        assert_eq!(spec(Kind::OltpReadWrite).queries_per_event(), 20);
        assert_eq!(spec(Kind::OltpReadOnly).queries_per_event(), 16);
        assert_eq!(spec(Kind::OltpWriteOnly).queries_per_event(), 6);
    }

    #[test]
    fn statement_texts() {
        let s = spec(Kind::SelectRandomRanges);
        assert_eq!(
            sql(S::RandomPoints, 1, &s),
            "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        );
        assert!(sql(S::RandomRanges, 1, &s).ends_with("k BETWEEN ? AND ? OR k BETWEEN ? AND ?"));
        assert_eq!(sql(S::Point, 3, &s), "SELECT c FROM sbtest3 WHERE id=?");
    }

    #[test]
    fn segments_cover_the_table() {
        let s = spec(Kind::SelectRandomPoints);
        let a = OltpDriver::new(&s, 0, 4).segment();
        let b = OltpDriver::new(&s, 3, 4).segment();
        assert_eq!(a, (0, 2500));
        assert_eq!(b, (7500, 10_000));
    }
}
