//! The shared parallel loader: every workload fills its tables through it.
//!
//! Rows are numbered 1..=N and generated from (seed, row number) alone, so the data is the
//! same whatever the number of loader connections. The id range is cut into chunks that the
//! connections claim in turn (so one big table is loaded in parallel too); each chunk is sent
//! as multi-row INSERTs (MySQL, PostgreSQL) or as prepared inserts in one transaction per batch
//! (SQLite, which has one writer: one connection). Secondary indexes are built by the caller
//! after the load, which is cheaper than maintaining them row by row.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::runner::interrupt;
use crate::target::{Conn, Dbms, ErrorClass, TargetSpec, Value};

/// Where the rows of one table come from.
pub trait RowSource: Send + Sync {
    fn table(&self) -> &str;
    fn columns(&self) -> &[&'static str];
    /// Fill `out` with the values of row `id` (1-based), in `columns()` order. Leaving `out`
    /// empty means "no row for this id" (fixed id slots per parent row, e.g. TPC-C's 5..15
    /// order lines per order in 15 slots): the loader skips it.
    fn row(&self, id: u64, out: &mut Vec<Value>);
}

#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Loader connections (SQLite always uses one).
    pub connections: usize,
    /// Rows per INSERT statement / per SQLite transaction.
    pub batch_rows: usize,
    /// Statements each loader connection runs first (MySQL: unique_checks=0, ...).
    pub session_sql: Vec<String>,
    pub progress: bool,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LoadStats {
    pub table: String,
    pub rows: u64,
    pub connections: usize,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
}

/// Load rows 1..=`rows` of `src` into an existing, empty table.
pub fn load(
    target: &TargetSpec,
    src: &dyn RowSource,
    rows: u64,
    opts: &LoadOptions,
) -> Result<LoadStats> {
    let conns = if target.dbms == Dbms::Sqlite {
        1
    } else {
        opts.connections.max(1)
    };
    let batch = opts.batch_rows.max(1) as u64;
    let chunk = batch * 10;
    let next = AtomicU64::new(1);
    let done = AtomicU64::new(0);
    let inserted = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<String>> = Mutex::new(None);
    let start = Instant::now();
    let bar = opts.progress.then(|| progress_bar(src.table(), rows));

    std::thread::scope(|s| {
        for _ in 0..conns {
            s.spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                let r = rt.block_on(load_worker(
                    target,
                    src,
                    rows,
                    batch,
                    chunk,
                    &next,
                    &done,
                    &inserted,
                    &failed,
                    &opts.session_sql,
                ));
                if let Err(e) = r {
                    failed.store(true, Ordering::SeqCst);
                    first_error.lock().unwrap().get_or_insert(e);
                }
            });
        }
        // The scope's own thread draws the progress bar until the workers are done.
        while done.load(Ordering::Relaxed) < rows && !failed.load(Ordering::Relaxed) {
            if let Some(b) = &bar {
                b.set_position(done.load(Ordering::Relaxed));
            }
            if interrupt::signal().is_some() {
                failed.store(true, Ordering::SeqCst);
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    if let Some(b) = &bar {
        b.set_position(done.load(Ordering::Relaxed));
        b.finish_and_clear();
    }
    if let Some(sig) = interrupt::signal() {
        return Err(Error {
            failure: crate::error::Failure::Interrupted(sig),
            message: "interrupted while loading".into(),
        });
    }
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(Error::run(format!(
            "loading table {} failed: {}",
            src.table(),
            target.scrub(&e)
        )));
    }
    let elapsed = start.elapsed().as_secs_f64();
    let rows = inserted.load(Ordering::SeqCst);
    Ok(LoadStats {
        table: src.table().to_string(),
        rows,
        connections: conns,
        elapsed_s: elapsed,
        rows_per_s: rows as f64 / elapsed.max(1e-9),
    })
}

#[allow(clippy::too_many_arguments)]
async fn load_worker(
    target: &TargetSpec,
    src: &dyn RowSource,
    rows: u64,
    batch: u64,
    chunk: u64,
    next: &AtomicU64,
    done: &AtomicU64,
    inserted: &AtomicU64,
    failed: &AtomicBool,
    session_sql: &[String],
) -> std::result::Result<(), String> {
    let mut conn = Conn::connect(target).await.map_err(|e| e.message)?;
    for sql in session_sql {
        conn.execute(sql).await.map_err(|e| e.message)?;
    }
    let mut buf: Vec<Vec<Value>> = Vec::with_capacity(batch as usize);
    loop {
        let first = next.fetch_add(chunk, Ordering::SeqCst);
        if first > rows || failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let last = (first + chunk - 1).min(rows);
        let mut id = first;
        while id <= last {
            let end = (id + batch - 1).min(last);
            buf.resize_with((end - id + 1) as usize, Vec::new);
            for (row, i) in buf.iter_mut().zip(id..=end) {
                row.clear();
                src.row(i, row);
            }
            // Compact: rows left empty do not exist; swapping keeps every buffer's allocation.
            let mut n = 0;
            for i in 0..buf.len() {
                if !buf[i].is_empty() {
                    buf.swap(n, i);
                    n += 1;
                }
            }
            let mut attempt = 0;
            loop {
                if n == 0 {
                    break;
                }
                match conn
                    .insert_rows(src.table(), src.columns(), &buf[..n])
                    .await
                {
                    Ok(()) => break,
                    // MariaDB's bulk insert into an empty table (unique_checks=0) locks the
                    // table, so the first concurrent multi-row INSERTs can deadlock (seen with
                    // TPC-C's tables); the statement was rolled back whole: send it again.
                    Err(e) if e.class == ErrorClass::Deadlock && attempt < 10 => attempt += 1,
                    Err(e) => return Err(e.message),
                }
            }
            inserted.fetch_add(n as u64, Ordering::Relaxed);
            done.fetch_add(end - id + 1, Ordering::Relaxed);
            id = end + 1;
            if failed.load(Ordering::Relaxed) {
                return Ok(());
            }
        }
    }
}

/// A progress bar on stderr with rows/s and ETA (hidden when stderr is not a terminal).
pub fn progress_bar(what: &str, len: u64) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::new(len);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:30}] {human_pos}/{human_len} rows  {per_sec}  ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    b.set_prefix(format!("loading {what}"));
    b
}
