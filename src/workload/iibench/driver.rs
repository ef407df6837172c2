//! iibench's drivers on the shared runner: one insert connection (`InsertDriver`: a batch of
//! `--rows-per-commit` rows per operation, and the DELETE of `--max-table-rows` after it) and
//! one query connection (`QueryDriver`: one of the three iiBench queries per operation).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::contract::{Driver, Step};
use crate::db::{Conn, DbResult, Dbms, StmtId, Value};
use crate::measure::{ErrorCounts, LatencyHist};
use crate::rng::Rng;

use super::{Query, Spec, TABLE};

/// State the connections share. Inserters claim batches of row numbers from one counter, so
/// rows are partitioned across connections and the data is the same whatever their number;
/// a batch that failed with a retryable error is retried with the same rows by the
/// connection that sent it, and counted in `retries` until then (so that the run knows how
/// many operations a window still needs). Nothing here is locked per batch or per query.
pub struct Shared {
    /// The next row number to claim (1-based).
    pub next_row: AtomicU64,
    /// Batches waiting to be retried.
    pub retries: AtomicU64,
    /// Queries finished, all query connections (the windows' query counts).
    pub queries: AtomicU64,
    /// `--max-table-rows`: the deletes (locked once per DELETE, not per batch).
    pub deletes: Mutex<DeleteStats>,
}

impl Shared {
    pub fn new() -> Shared {
        Shared {
            next_row: AtomicU64::new(1),
            retries: AtomicU64::new(0),
            queries: AtomicU64::new(0),
            deletes: Mutex::new(DeleteStats::default()),
        }
    }
    /// Row numbers claimed so far.
    pub fn claimed(&self) -> u64 {
        self.next_row.load(Ordering::SeqCst) - 1
    }
}

#[derive(Default, Clone)]
pub struct DeleteStats {
    pub statements: u64,
    pub rows: u64,
    /// Failed DELETEs by class (they count in the run's errors too).
    pub errors: ErrorCounts,
    pub hist: LatencyHist,
}

/// One insert connection.
pub struct InsertDriver {
    spec: Arc<Spec>,
    shared: Arc<Shared>,
    sql: String,
    rows: Vec<Vec<Value>>,
    /// A batch that failed with a retryable error: sent again, same rows.
    pending: Option<(u64, u64)>,
    /// Logical bytes of the committed batches (the runner reports their growth per phase).
    logical: u64,
}

impl InsertDriver {
    pub fn new(spec: Arc<Spec>, shared: Arc<Shared>) -> InsertDriver {
        InsertDriver {
            spec,
            shared,
            sql: String::new(),
            rows: Vec::new(),
            pending: None,
            logical: 0,
        }
    }

    /// The next batch: the pending retry, or new row numbers (None when `--max-rows` are all
    /// claimed).
    fn claim(&mut self) -> Option<(u64, u64)> {
        if let Some(b) = self.pending.take() {
            self.shared.retries.fetch_sub(1, Ordering::SeqCst);
            return Some(b);
        }
        let rpc = self.spec.rows_per_commit;
        let first = self.shared.next_row.fetch_add(rpc, Ordering::SeqCst);
        match self.spec.shard_max_rows() {
            Some(max) if first > max => None,
            Some(max) => Some((first, rpc.min(max - first + 1))),
            None => Some((first, rpc)),
        }
    }

    /// `--max-table-rows`: the same connection deletes the rows max_table_rows behind
    /// (retried a few times when the server asks for it; then its rows stay). Its time is in
    /// the operation's (the batch's) latency; its own latency, count and failures go to
    /// `deletes`. A failure does not fail the operation: the batch committed (a lost
    /// connection shows at the next batch, which the runner counts). Returns the statements
    /// sent.
    async fn delete_after(&mut self, conn: &mut Conn, first: u64, n: u64) -> u64 {
        let Some((lo, hi, dsql)) = self.spec.delete_for(first, n) else {
            return 0;
        };
        let mut sent = 0;
        for _ in 0..3 {
            let t0 = Instant::now();
            let r = conn.execute(&dsql).await;
            let us = t0.elapsed().as_micros() as u64;
            sent += 1;
            let mut d = self
                .shared
                .deletes
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            match r {
                Ok(()) => {
                    d.statements += 1;
                    d.rows += hi - lo + 1;
                    d.hist.record_us(us);
                    break;
                }
                Err(e) => {
                    d.errors.add(e.class);
                    if !e.class.retryable() {
                        break;
                    }
                }
            }
        }
        sent
    }
}

impl Driver for InsertDriver {
    async fn setup(&mut self, _conn: &mut Conn) -> DbResult<()> {
        Ok(())
    }

    /// One batch of rows in its own transaction (one multi-row INSERT; SQLite: one
    /// transaction of prepared inserts), then its DELETE under `--max-table-rows`.
    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        let Some((first, n)) = self.claim() else {
            // Only reached when a retry was counted in a phase's budget but another
            // connection took the ticket; `finished` ends this worker's phase next.
            return Ok(Step::default());
        };
        let dbms = conn.dbms();
        let logical = self
            .spec
            .batch(dbms, first, n, &mut self.sql, &mut self.rows);
        let r = if dbms == Dbms::Sqlite {
            conn.insert_rows(TABLE, Spec::columns(), &self.rows).await
        } else {
            conn.execute(&self.sql).await
        };
        if let Err(e) = r {
            // Rolled back whole: a retryable failure is sent again with the same rows.
            if e.class.retryable() {
                self.pending = Some((first, n));
                self.shared.retries.fetch_add(1, Ordering::SeqCst);
            }
            return Err(e);
        }
        self.logical += logical;
        let deletes = self.delete_after(conn, first, n).await;
        Ok(Step {
            rows: n,
            statements: 1 + deletes,
            ..Step::default()
        })
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("logical_bytes", self.logical)]
    }

    fn finished(&self) -> bool {
        self.pending.is_none()
            && self
                .spec
                .shard_max_rows()
                .is_some_and(|max| self.shared.next_row.load(Ordering::Relaxed) > max)
    }
}

/// One query connection: the three iiBench queries drawn at random, as iibench.py does.
pub struct QueryDriver {
    rng: Rng,
    shared: Arc<Shared>,
    ids: Vec<StmtId>,
    params: [Value; 1],
}

impl QueryDriver {
    pub fn new(seed: u64, idx: usize, shared: Arc<Shared>) -> QueryDriver {
        QueryDriver {
            rng: Rng::keyed(seed, 7000, idx as u64),
            shared,
            ids: Vec::new(),
            params: [Value::Int(0)],
        }
    }
}

impl Driver for QueryDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.ids = super::prepare_queries(conn).await?;
        Ok(())
    }

    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        let (q, p) = Query::draw(&mut self.rng);
        self.params[0] = Value::Int(p);
        let id = self.ids[Query::ALL.iter().position(|x| *x == q).unwrap_or(0)];
        let n = conn.exec_rows(id, &self.params).await?;
        self.shared.queries.fetch_add(1, Ordering::Relaxed);
        Ok(Step::query(n))
    }
}
