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
mod entry;
pub mod new_order;
pub mod order_status;
pub mod payment;
mod report;
pub mod stock_level;

pub use entry::{TpccArgs, ENTRY};
pub use report::{constraints as constraints_of, Report, RunSection, TPM_C, TPM_TOTAL};

use crate::contract::shard::{open_schema, Placement, ShardKeys, Tables};
use crate::db::{Conn, DbError, DbResult, Dbms, ErrorClass, StmtId, TargetSpec, Value};
use crate::error::{Context, Error, Result};
use crate::load::{LoadOptions, LoadStats};
use crate::rng::Rng;
use crate::runner::{Driver, Step};
use std::time::{Duration, Instant};

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
    pub shard: Option<crate::fleet::Shard>,
    /// `--terminals N`: N terminals share the run's connections (`--threads`); None: every
    /// connection is one terminal.
    pub terminals: Option<u32>,
    /// `--load-tables`: the nine tables at once (each in one transaction) or one by one.
    pub load_tables: crate::load::TableOrder,
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
        serde_json::json!({
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
        })
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

/// The mix: a deck with `weights[k]` cards of kind k, reshuffled when used up, so that
/// every full deck has the configured shares exactly (like tpcc-mysql's card deck).
#[derive(Debug, Clone)]
pub struct Deck {
    cards: Vec<u8>,
    next: usize,
}

impl Deck {
    pub fn new(weights: &[u32; 5]) -> Self {
        let mut cards = Vec::new();
        for (k, w) in weights.iter().enumerate() {
            cards.extend(std::iter::repeat_n(k as u8, *w as usize));
        }
        let next = cards.len();
        Deck { cards, next }
    }

    pub fn draw(&mut self, r: &mut Rng) -> u8 {
        if self.next >= self.cards.len() {
            // Fisher-Yates.
            for i in (1..self.cards.len()).rev() {
                let j = r.range(0, i as u64) as usize;
                self.cards.swap(i, j);
            }
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

#[derive(Debug, Clone)]
enum Input {
    NewOrder(new_order::Input),
    Payment(payment::Input),
    OrderStatus(order_status::Input),
    Delivery(delivery::Input),
    StockLevel(stock_level::Input),
}

impl Input {
    fn kind(&self) -> u8 {
        match self {
            Input::NewOrder(_) => NEW_ORDER,
            Input::Payment(_) => PAYMENT,
            Input::OrderStatus(_) => ORDER_STATUS,
            Input::Delivery(_) => DELIVERY,
            Input::StockLevel(_) => STOCK_LEVEL,
        }
    }
}

struct Stmts {
    new_order: new_order::Stmts,
    payment: payment::Stmts,
    order_status: order_status::Stmts,
    delivery: delivery::Stmts,
    stock_level: stock_level::Stmts,
}

/// One emulated terminal: its home warehouse and StockLevel district, its random stream and
/// deck, and (spec timing) its own keying/think cycle.
struct Terminal {
    home_w: i64,
    stock_d: i64,
    rng: Rng,
    deck: Deck,
    /// The input of a transaction that failed with a retryable error: run again next.
    pending: Option<Input>,
    /// Failed attempts in a row of the pending input (sets the back-off).
    attempts: u32,
    /// Spec timing: the input drawn with the keying time (which depends on it), run next.
    next: Option<Input>,
    /// Spec timing: the kind of the last finished transaction, whose think time comes next.
    last_kind: Option<u8>,
    /// Spec timing: when its think and keying times end and its next transaction is due.
    due: Option<Instant>,
}

impl Terminal {
    /// Terminal `k` of `terminals` in this process.
    fn new(spec: &Spec, k: usize, terminals: usize) -> Self {
        let (first, last) = spec.homes();
        let w = (last - first + 1) as usize;
        // A shard's terminals draw their own random streams (keyed by their fleet-wide number).
        let key = spec.shard.map_or(k, |s| s.worker(k, terminals).0);
        Terminal {
            home_w: (k % w) as i64 + first as i64,
            stock_d: ((k / w) % 10) as i64 + 1,
            rng: Rng::keyed(spec.seed, 5000, key as u64),
            deck: Deck::new(&spec.weights),
            pending: None,
            attempts: 0,
            next: None,
            last_kind: None,
            due: None,
        }
    }

    fn next_input(&mut self, warehouses: u32, c: &CConst) -> Input {
        let r = &mut self.rng;
        let w = self.home_w;
        let ws = warehouses as i64;
        match self.deck.draw(r) {
            NEW_ORDER => Input::NewOrder(new_order::input(r, w, ws, c)),
            PAYMENT => Input::Payment(payment::input(r, w, ws, c)),
            ORDER_STATUS => Input::OrderStatus(order_status::input(r, w, c)),
            DELIVERY => Input::Delivery(delivery::input(r, w)),
            _ => Input::StockLevel(stock_level::input(r, w, self.stock_d)),
        }
    }

    /// Spec timing: the think time of the last transaction, then the keying time of the next
    /// (drawn here). A retry follows its failure without either.
    fn cycle(&mut self, warehouses: u32, c: &CConst) -> Duration {
        if self.pending.is_some() {
            return Duration::ZERO;
        }
        let think = match self.last_kind.take() {
            Some(k) => think_time(&mut self.rng, THINK_MEAN_S[k as usize]),
            None => Duration::ZERO,
        };
        let next = self.next_input(warehouses, c);
        let keying = Duration::from_secs_f64(KEYING_S[next.kind() as usize]);
        self.next = Some(next);
        think + keying
    }
}

/// One connection's driver: one terminal (the default), or several terminals sharing the
/// connection like the terminals of a TP monitor (`--terminals N` over `--threads M`). With
/// several, the connection runs the transaction of whichever terminal has been due longest;
/// a terminal that became due while the connection was busy waits, and its transaction's
/// latency counts from when it was due (`Driver::waiting_since`): its response time.
pub struct TpccDriver {
    spec: Spec,
    c: CConst,
    terms: Vec<Terminal>,
    /// The terminal whose transaction runs next (chosen by `pause`).
    cur: usize,
    /// A transaction ran since the last `pause`: false only at the start of a phase.
    ran: bool,
    /// The chosen terminal has been due since then, waiting for the connection.
    waiting: Option<Instant>,
    stmts: Option<Stmts>,
    cx: Ctx,
    pub retries: u64,
    pub delivery_skipped: u64,
    /// Transactions whose terminal waited for the connection (several terminals only).
    pub connection_waits: u64,
}

impl TpccDriver {
    /// Terminal `worker` of `threads` in this process, alone on its connection.
    pub fn new(spec: &Spec, worker: usize, threads: usize) -> Self {
        Self::shared(spec, [worker], threads)
    }

    /// The terminals `ks` (of `terminals` in this process) sharing one connection.
    pub fn shared(spec: &Spec, ks: impl IntoIterator<Item = usize>, terminals: usize) -> Self {
        let terms: Vec<Terminal> = ks
            .into_iter()
            .map(|k| Terminal::new(spec, k, terminals))
            .collect();
        assert!(
            !terms.is_empty(),
            "a connection serves at least one terminal"
        );
        TpccDriver {
            c: spec.c(),
            spec: spec.clone(),
            terms,
            cur: 0,
            ran: false,
            waiting: None,
            stmts: None,
            cx: Ctx {
                dbms: Dbms::Sqlite,
                ints: Vec::with_capacity(16),
                texts: Vec::with_capacity(64),
                counts: Vec::with_capacity(16),
                rows: 0,
                statements: 0,
            },
            retries: 0,
            delivery_skipped: 0,
            connection_waits: 0,
        }
    }
}

impl Driver for TpccDriver {
    /// Spec timing: the terminal that just ran starts its think and keying times (at the start
    /// of a phase every terminal starts over with a keying time); the wait is until the
    /// earliest terminal is due, none if one already is. Without spec timing the terminals
    /// take turns (a retry stays on its terminal).
    fn pause(&mut self) -> Option<Duration> {
        self.waiting = None;
        let ran = std::mem::take(&mut self.ran);
        if !self.spec.spec_timing {
            if ran && self.terms[self.cur].pending.is_none() {
                self.cur = (self.cur + 1) % self.terms.len();
            }
            return None;
        }
        let now = Instant::now();
        let (ws, c) = (self.spec.warehouses, &self.c);
        if ran {
            let t = &mut self.terms[self.cur];
            t.due = Some(now + t.cycle(ws, c));
        } else {
            for t in &mut self.terms {
                t.due = Some(now + t.cycle(ws, c));
            }
        }
        let (i, due) = self
            .terms
            .iter()
            .enumerate()
            .map(|(i, t)| (i, t.due.unwrap_or(now)))
            .min_by_key(|(_, due)| *due)
            .expect("at least one terminal");
        self.cur = i;
        if due > now {
            return Some(due - now);
        }
        if due < now {
            self.waiting = Some(due);
            self.connection_waits += 1;
        }
        None
    }

    fn waiting_since(&self) -> Option<Instant> {
        self.waiting
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("retries", self.retries),
            ("delivery_skipped_districts", self.delivery_skipped),
        ];
        if self.spec.terminals.is_some() {
            v.push(("connection_waits", self.connection_waits));
        }
        v
    }

    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.cx.dbms = conn.dbms();
        if conn.dbms() == Dbms::Mysql {
            // Every transaction here begins and commits explicitly. With autocommit off, the
            // statements sent ahead of a failed one (`Ctx::pipe`) run in a transaction the
            // rollback undoes, also after a deadlock ended the first one: MySQL's lean client
            // sends statements ahead only then (`Conn::exec_pipelined`).
            conn.execute("SET SESSION autocommit = 0").await?;
        }
        if let Some(i) = self.spec.isolation {
            match conn.dbms() {
                Dbms::Mysql => {
                    conn.execute(&format!(
                        "SET SESSION TRANSACTION ISOLATION LEVEL {}",
                        i.sql()
                    ))
                    .await?
                }
                Dbms::Postgres => {
                    conn.execute(&format!(
                        "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {}",
                        i.sql()
                    ))
                    .await?
                }
                Dbms::Sqlite => {}
            }
        }
        self.stmts = Some(Stmts {
            new_order: new_order::Stmts::prepare(conn).await?,
            payment: payment::Stmts::prepare(conn).await?,
            order_status: order_status::Stmts::prepare(conn).await?,
            delivery: delivery::Stmts::prepare(conn).await?,
            stock_level: stock_level::Stmts::prepare(conn).await?,
        });
        Ok(())
    }

    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        self.ran = true;
        let t = &mut self.terms[self.cur];
        let input = match t.pending.take() {
            Some(i) => {
                self.retries += 1;
                i
            }
            None => match t.next.take() {
                Some(i) => i,
                None => t.next_input(self.spec.warehouses, &self.c),
            },
        };
        let kind = input.kind();
        self.cx.rows = 0;
        self.cx.statements = 0;
        let st = self.stmts.as_ref().expect("setup ran");
        let cx = &mut self.cx;
        let r = match &input {
            Input::NewOrder(i) => new_order::run(&st.new_order, cx, conn, i).await,
            Input::Payment(i) => payment::run(&st.payment, cx, conn, i).await,
            Input::OrderStatus(i) => order_status::run(&st.order_status, cx, conn, i).await,
            Input::Delivery(i) => {
                delivery::run(&st.delivery, cx, conn, i, &mut self.delivery_skipped).await
            }
            Input::StockLevel(i) => stock_level::run(&st.stock_level, cx, conn, i).await,
        };
        match r {
            Ok(step) => {
                t.attempts = 0;
                t.last_kind = Some(kind);
                Ok(Step { kind, ..step })
            }
            Err(mut e) => {
                if e.class != ErrorClass::ConnectionLost {
                    // Whatever the server still holds of the transaction goes.
                    let _ = conn.execute("ROLLBACK").await;
                    conn.take_pipelined_rows();
                }
                if e.class.retryable() {
                    t.pending = Some(input);
                    t.attempts += 1;
                    // Back off before the retry, so that conflicting terminals do not collide
                    // again at once. The wait belongs to the failed attempt: it is in the
                    // run's wall time, not in any success latency.
                    let wait = backoff(t.attempts, &mut t.rng);
                    tokio::time::sleep(wait).await;
                } else {
                    t.attempts = 0;
                    t.last_kind = Some(kind);
                }
                e.kind = kind;
                Err(e)
            }
        }
    }
}

/// Exponential back-off with jitter: 0.5–1 ms after the first failure, doubling up to
/// 32–64 ms.
fn backoff(attempts: u32, rng: &mut Rng) -> std::time::Duration {
    let cap_us = 1000u64 << attempts.saturating_sub(1).min(6);
    std::time::Duration::from_micros(rng.range(cap_us / 2, cap_us))
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

/// Create and load the nine tables unless identical ones are there; per-table load stats.
pub async fn prepare(
    conn: &mut Conn,
    target: &TargetSpec,
    spec: &Spec,
    engine: Option<&str>,
    opts: &LoadOptions,
    fleet: Option<&crate::fleet::LoadFleet>,
) -> Result<Vec<LoadStats>> {
    use crate::fleet;
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
    let now = fleet::load_time_ms(fleet).map_or_else(now_literal, |ms| {
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
    fn deck_shares_are_exact_per_deck_and_within_1pp_over_10000() {
        let w = DEFAULT_WEIGHTS;
        let mut deck = Deck::new(&w);
        let mut r = Rng::new(7);
        let n = 10_050; // not a whole number of decks on purpose
        let mut counts = [0u64; 5];
        for _ in 0..n {
            counts[deck.draw(&mut r) as usize] += 1;
        }
        let total: u32 = w.iter().sum();
        for k in 0..5 {
            let got = counts[k] as f64 / n as f64 * 100.0;
            let want = w[k] as f64 / total as f64 * 100.0;
            assert!(
                (got - want).abs() < 1.0,
                "{}: {got:.2} % vs {want} %",
                KINDS[k]
            );
        }
    }

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
    fn terminals_home_warehouse_and_district() {
        let spec = Spec {
            warehouses: 3,
            seed: 1,
            weights: DEFAULT_WEIGHTS,
            isolation: None,
            spec_timing: false,
            shard: None,
            terminals: None,
            load_tables: Default::default(),
        };
        let homes: Vec<i64> = (0..7)
            .map(|k| TpccDriver::new(&spec, k, 7).terms[0].home_w)
            .collect();
        assert_eq!(homes, vec![1, 2, 3, 1, 2, 3, 1]);
        assert_eq!(TpccDriver::new(&spec, 4, 7).terms[0].stock_d, 2);
        // Shard 1 of 2 of 5 warehouses: homes 3..5 only.
        let spec = Spec {
            warehouses: 5,
            shard: Some(crate::fleet::Shard { index: 1, count: 2 }),
            ..spec
        };
        let homes: Vec<i64> = (0..4)
            .map(|k| TpccDriver::new(&spec, k, 4).terms[0].home_w)
            .collect();
        assert_eq!(homes, vec![3, 4, 5, 3]);
    }

    /// Several terminals on one connection: each keeps the home of its own number; the
    /// connection runs the terminal due longest, and says since when it has waited.
    #[test]
    fn shared_connection_picks_the_longest_waiting_terminal() {
        let spec = Spec {
            warehouses: 3,
            seed: 1,
            weights: DEFAULT_WEIGHTS,
            isolation: None,
            spec_timing: true,
            shard: None,
            terminals: Some(7),
            load_tables: Default::default(),
        };
        // Connection 1 of 3 serves terminals 1, 4 and 7 of 9.
        let mut d = TpccDriver::shared(&spec, (1..9).step_by(3), 9);
        let homes: Vec<i64> = d.terms.iter().map(|t| t.home_w).collect();
        assert_eq!(homes, vec![2, 2, 2]);
        let stock: Vec<i64> = d.terms.iter().map(|t| t.stock_d).collect();
        assert_eq!(stock, vec![1, 2, 3]);
        // The start of a phase: every terminal keys (at least 2 s), none is waiting.
        let wait = d.pause().expect("a keying time");
        assert!(wait >= Duration::from_secs(2), "{wait:?}");
        assert!(d.terms.iter().all(|t| t.due.is_some() && t.next.is_some()));
        assert_eq!(d.waiting_since(), None);
        // Terminal 0 just ran; terminals 1 and 2 became due while it did, 2 first.
        let now = Instant::now();
        let (t1, t2) = (
            now - Duration::from_millis(5),
            now - Duration::from_millis(9),
        );
        d.terms[1].due = Some(t1);
        d.terms[2].due = Some(t2);
        d.cur = 0;
        d.ran = true;
        assert_eq!(d.pause(), None, "a terminal is already due");
        assert_eq!(d.cur, 2);
        assert_eq!(d.waiting_since(), Some(t2));
        assert!(d.terms[0].due.unwrap() >= now + Duration::from_secs(2));
        assert_eq!(d.connection_waits, 1);
        // Terminal 2 ran: terminal 1 is next, still waiting since t1.
        d.ran = true;
        assert_eq!(d.pause(), None);
        assert_eq!((d.cur, d.waiting_since()), (1, Some(t1)));
        assert_eq!(d.counters().last(), Some(&("connection_waits", 2)));
        // Without spec timing the terminals take turns.
        let spec = Spec {
            spec_timing: false,
            ..spec
        };
        let mut d = TpccDriver::shared(&spec, [0, 3, 6], 9);
        let mut order = Vec::new();
        for _ in 0..4 {
            assert_eq!(d.pause(), None);
            order.push(d.cur);
            d.ran = true;
        }
        assert_eq!(order, vec![0, 1, 2, 0]);
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
