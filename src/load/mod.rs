//! The shared parallel loader: every workload fills its tables through it.
//!
//! Rows are numbered 1..=N and generated from (seed, row number) alone, so the data is the
//! same whatever the number of loader connections. The id range is cut into chunks that the
//! connections claim in turn (so one big table is loaded in parallel too); each chunk is sent
//! as multi-row INSERTs (MySQL, PostgreSQL) or as prepared inserts in one transaction per batch
//! (SQLite, which has one writer: one connection). Secondary indexes are built by the caller
//! after the load, which is cheaper than maintaining them row by row.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::db::{Conn, Dbms, ErrorClass, TargetSpec, Value};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::model::{LoadMethod, LoadOptions, LoadStats};

/// Where the rows of one table come from.
pub trait RowSource: Send + Sync {
    fn table(&self) -> &str;
    fn columns(&self) -> &[&'static str];
    /// Fill `out` with the values of row `id` (1-based), in `columns()` order. Leaving `out`
    /// empty means "no row for this id" (fixed id slots per parent row, e.g. TPC-C's 5..15
    /// order lines per order in 15 slots): the loader skips it.
    fn row(&self, id: u64, out: &mut Vec<Value>);
    /// Rows that belong together (TPC-C: one warehouse's): a fleet's shard loads whole
    /// groups (`LoadOptions::shard`).
    fn group_rows(&self) -> u64 {
        1
    }
    /// Append row `id` in the streamed text form (`db::push_tsv`'s, ended by a newline) to
    /// `out`; false, with nothing appended, when there is no such row. The default goes
    /// through `row` (`scratch` is its reused list); a source may write the text directly,
    /// which saves a `Value` and a `String` per field.
    fn row_text(&self, id: u64, out: &mut Vec<u8>, scratch: &mut Vec<Value>) -> bool {
        scratch.clear();
        self.row(id, scratch);
        if scratch.is_empty() {
            return false;
        }
        crate::db::push_tsv(out, scratch);
        true
    }
}

/// Whether a workload's tables load all at once or one after another.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum TableOrder {
    /// Every table at once, the biggest first: each loader connection takes the next table
    /// and loads it whole in one transaction (MariaDB's bulk path into an empty table), its
    /// rows written straight into the streamed text form (`load_tables`).
    #[default]
    AtOnce,
    /// One table after another, each table's ids split over every loader connection (`load`).
    OneByOne,
}

/// Load rows 1..=`rows` of `src` into an existing table (with `opts.shard`: this shard's
/// block of them).
pub fn load(
    target: &TargetSpec,
    src: &dyn RowSource,
    all_rows: u64,
    opts: &LoadOptions,
) -> Result<LoadStats> {
    let (first_id, last_id) = match opts.shard {
        Some(s) => s.range(all_rows, src.group_rows()),
        None => (1, all_rows),
    };
    // Ids this process loads (the progress counts them).
    let rows = (last_id + 1).saturating_sub(first_id);
    let conns = if target.dbms == Dbms::Sqlite {
        1
    } else {
        opts.connections.max(1)
    };
    let chunk = opts.batch_rows.max(1) as u64 * 10;
    // A streamed load sends a whole chunk per statement.
    let batch = match opts.method {
        LoadMethod::Stream if target.dbms != Dbms::Sqlite => chunk,
        // Both protocols count a statement's placeholders in 16 bits.
        LoadMethod::Prepared => {
            (opts.batch_rows.max(1) as u64).min((65_535 / src.columns().len().max(1)) as u64)
        }
        _ => opts.batch_rows.max(1) as u64,
    };
    let next = AtomicU64::new(first_id);
    let done = AtomicU64::new(0);
    let inserted = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let fell_back = AtomicBool::new(false);
    let first_error: Mutex<Option<String>> = Mutex::new(None);
    let start = Instant::now();
    let mut progress = opts.live.load(src.table(), rows, conns, opts.progress);

    let waiter = std::thread::current();
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
                    last_id,
                    batch,
                    chunk,
                    &next,
                    &done,
                    &inserted,
                    &failed,
                    &opts.session_sql,
                    opts.method,
                    &fell_back,
                ));
                if let Err(e) = r {
                    failed.store(true, Ordering::SeqCst);
                    first_error.lock().unwrap().get_or_insert(e);
                }
                // The progress loop below may be parked: the table can be done now.
                waiter.unpark();
            });
        }
        // The scope's own thread draws the progress bar until the workers are done.
        while done.load(Ordering::Relaxed) < rows && !failed.load(Ordering::Relaxed) {
            progress.update(done.load(Ordering::Relaxed));
            if interrupt::signal().is_some() {
                failed.store(true, Ordering::SeqCst);
                break;
            }
            // Woken early when a worker ends, so a small table does not wait out the tick.
            std::thread::park_timeout(Duration::from_millis(100));
        }
    });
    progress.finish(done.load(Ordering::Relaxed));
    let elapsed = start.elapsed().as_secs_f64();
    let loaded = inserted.load(Ordering::SeqCst);
    let stats = LoadStats {
        table: src.table().to_string(),
        rows: loaded,
        connections: conns,
        method: if fell_back.load(Ordering::Relaxed) || target.dbms == Dbms::Sqlite {
            LoadMethod::Insert
        } else {
            opts.method
        },
        elapsed_s: elapsed,
        rows_per_s: loaded as f64 / elapsed.max(1e-9),
        interrupted: false,
        disturbed: false,
        others_cpus: None,
    };
    if let Some(sig) = interrupt::signal() {
        opts.journal.push(LoadStats {
            interrupted: true,
            ..stats
        });
        return Err(Error {
            failure: crate::error::Failure::Interrupted(sig),
            message: format!(
                "interrupted while loading table {} ({loaded} of {rows} rows loaded)",
                src.table()
            ),
        });
    }
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(Error::run(format!(
            "loading table {} failed: {}",
            src.table(),
            target.scrub(&e)
        )));
    }
    opts.journal.push(stats.clone());
    Ok(stats)
}

/// Wait on `f` unless SIGINT / SIGTERM arrives first (checked every 20 ms): then `None`, and
/// `f` is dropped, which abandons a statement in flight (a big multi-row INSERT, LOAD DATA or
/// COPY), so that the client stops within moments, not when the server is done. The abandoned
/// connection is closed; the server rolls the statement back (or finishes it) on its own.
pub async fn unless_interrupted<T>(f: impl Future<Output = T>) -> Option<T> {
    let watch = async {
        while interrupt::signal().is_none() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::select! {
        v = f => Some(v),
        () = watch => None,
    }
}

#[allow(clippy::too_many_arguments)]
async fn load_worker(
    target: &TargetSpec,
    src: &dyn RowSource,
    last_id: u64,
    batch: u64,
    chunk: u64,
    next: &AtomicU64,
    done: &AtomicU64,
    inserted: &AtomicU64,
    failed: &AtomicBool,
    session_sql: &[String],
    mut method: LoadMethod,
    fell_back: &AtomicBool,
) -> std::result::Result<(), String> {
    // The lean MySQL client does not speak LOAD DATA LOCAL INFILE: streamed loads go through
    // mysql_async (loader connections are separate from the measured ones).
    let mut t = target.clone();
    // The loader keeps its own methods whatever `--statements` says.
    t.statements = crate::db::StatementMode::Prepared;
    if method == LoadMethod::Stream && target.dbms == Dbms::Mysql {
        t.mysql_driver = crate::db::url::MysqlDriver::MysqlAsync;
    }
    // A signal ends the worker at once; `load` then reports the interruption.
    let Some(conn) = unless_interrupted(Conn::connect(&t)).await else {
        return Ok(());
    };
    let mut conn = conn.map_err(|e| e.message)?;
    for sql in session_sql {
        match unless_interrupted(conn.execute(sql)).await {
            Some(r) => r.map_err(|e| e.message)?,
            None => return Ok(()),
        }
    }
    let mut buf: Vec<Vec<Value>> = Vec::with_capacity(batch as usize);
    // Prepared: one statement per batch size seen (the full one and the last, shorter one),
    // and the batch's values in one reused list.
    let mut prepared: Vec<(usize, crate::db::StmtId)> = Vec::new();
    let mut params: Vec<Value> = Vec::new();
    loop {
        let first = next.fetch_add(chunk, Ordering::SeqCst);
        if first > last_id || failed.load(Ordering::Relaxed) {
            // A goodbye the server sees (mysql_async sends none when dropped).
            let _ = conn.close().await;
            return Ok(());
        }
        let last = (first + chunk - 1).min(last_id);
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
            if n > 0 {
                loop {
                    let rows = &buf[..n];
                    let r = match method {
                        LoadMethod::Insert => {
                            unless_interrupted(conn.insert_rows(src.table(), src.columns(), rows))
                                .await
                        }
                        LoadMethod::Stream => {
                            unless_interrupted(conn.load_rows(src.table(), src.columns(), rows))
                                .await
                        }
                        LoadMethod::Prepared if conn.dbms() == Dbms::Sqlite => {
                            unless_interrupted(conn.insert_rows(src.table(), src.columns(), rows))
                                .await
                        }
                        LoadMethod::Prepared => {
                            params.clear();
                            for r in rows {
                                params.extend(r.iter().cloned());
                            }
                            let known = prepared.iter().find(|p| p.0 == n).map(|p| p.1);
                            let stmt = match known {
                                Some(id) => Some(Ok(id)),
                                None => {
                                    let sql = prepared_insert_sql(src.table(), src.columns(), n);
                                    unless_interrupted(conn.prepare(&sql)).await
                                }
                            };
                            match stmt {
                                None => None,
                                Some(Err(e)) => Some(Err(e)),
                                Some(Ok(id)) => {
                                    if known.is_none() {
                                        prepared.push((n, id));
                                    }
                                    unless_interrupted(conn.exec_rows(id, &params))
                                        .await
                                        .map(|r| r.map(|_| ()))
                                }
                            }
                        }
                    };
                    let Some(r) = r else { return Ok(()) };
                    match r {
                        Ok(()) => break,
                        // The server does not allow LOAD DATA LOCAL (1148, 3948, 4166): insert
                        // instead. Nothing of the batch was loaded, so it is sent again.
                        Err(e)
                            if method == LoadMethod::Stream && refuses_local_infile(&e.message) =>
                        {
                            method = LoadMethod::Insert;
                            fell_back.store(true, Ordering::Relaxed);
                        }
                        // MariaDB's bulk insert into an empty table (unique_checks=0) locks the
                        // table, so the first concurrent multi-row INSERTs can deadlock (seen with
                        // TPC-C's tables); the statement was rolled back whole: send it again.
                        Err(e) if e.class == ErrorClass::Deadlock && attempt < 10 => attempt += 1,
                        Err(e) => return Err(e.message),
                    }
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

/// `INSERT INTO t (a, b) VALUES (?, ?), (?, ?), ...` for `rows` rows (placeholders as `?`;
/// the PostgreSQL client numbers them).
fn prepared_insert_sql(table: &str, columns: &[&str], rows: usize) -> String {
    let one = format!("({})", vec!["?"; columns.len()].join(", "));
    format!(
        "INSERT INTO {table} ({}) VALUES {}",
        columns.join(", "),
        vec![one.as_str(); rows].join(", ")
    )
}

fn refuses_local_infile(msg: &str) -> bool {
    ["ERROR 1148", "ERROR 3948", "ERROR 4166", "ERROR 2068"]
        .iter()
        .any(|c| msg.contains(c))
}

/// Load several tables at once (`TableOrder::AtOnce`): the tables are taken biggest first by
/// `opts.connections` loader connections, each table by one connection in one transaction of
/// streamed statements (MySQL `LOAD DATA LOCAL INFILE`, PostgreSQL `COPY FROM STDIN`), the rows
/// written straight into the text form by `RowSource::row_text`. On MariaDB the first statement
/// of a transaction into an empty table with `unique_checks=0` (the loader's session settings)
/// takes the bulk path: no undo log per row, indexes built by sorting at commit, and the one
/// table lock it takes is held by the only connection that loads the table. Where that does
/// not apply (SQLite's one writer, `--load-method insert|prepared`) the tables are loaded one
/// after another by `load`. Returns each table's stats in the order of `tables`.
pub fn load_tables(
    target: &TargetSpec,
    tables: &[(&dyn RowSource, u64)],
    opts: &LoadOptions,
) -> Result<Vec<LoadStats>> {
    if target.dbms == Dbms::Sqlite || opts.method != LoadMethod::Stream {
        return tables
            .iter()
            .map(|(src, rows)| load(target, *src, *rows, opts))
            .collect();
    }
    let mut order: Vec<usize> = (0..tables.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(tables[i].1));
    let conns = opts.connections.max(1).min(tables.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let done: Mutex<Vec<Option<LoadStats>>> = Mutex::new(vec![None; tables.len()]);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..conns {
            s.spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                let r = rt.block_on(async {
                    let Some(mut conn) = loader_conn(target, opts).await? else {
                        return Ok(());
                    };
                    loop {
                        let k = next.fetch_add(1, Ordering::SeqCst);
                        if k >= order.len() || failed.load(Ordering::Relaxed) {
                            // A goodbye the server sees (mysql_async sends none when dropped).
                            let _ = conn.close().await;
                            return Ok(());
                        }
                        let (src, rows) = tables[order[k]];
                        // The biggest table, taken first, draws the progress bar.
                        let stats = load_in_one_transaction(
                            &mut conn,
                            target,
                            src,
                            rows,
                            opts,
                            k == 0,
                            &failed,
                        )
                        .await?;
                        done.lock().unwrap()[order[k]] = Some(stats);
                    }
                });
                if let Err(e) = r {
                    failed.store(true, Ordering::SeqCst);
                    first_error.lock().unwrap().get_or_insert(e);
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    let done = done.into_inner().unwrap();
    // Every table ended without an error: all are loaded (a signal is an error above).
    Ok(done.into_iter().flatten().collect())
}

/// A loader connection with the session settings run (None: a signal arrived meanwhile).
async fn loader_conn(target: &TargetSpec, opts: &LoadOptions) -> Result<Option<Conn>> {
    // The lean MySQL client does not speak LOAD DATA LOCAL INFILE (see `load_worker`).
    let mut t = target.clone();
    t.statements = crate::db::StatementMode::Prepared;
    if target.dbms == Dbms::Mysql {
        t.mysql_driver = crate::db::url::MysqlDriver::MysqlAsync;
    }
    let fail = |what: &str, e: crate::db::DbError| {
        Error::run(format!("{what}: {}", target.scrub(&e.message)))
    };
    let Some(conn) = unless_interrupted(Conn::connect(&t)).await else {
        return Ok(None);
    };
    let mut conn = conn.map_err(|e| fail("connecting a loader connection", e))?;
    for sql in &opts.session_sql {
        match unless_interrupted(conn.execute(sql)).await {
            Some(r) => r.map_err(|e| fail(sql, e))?,
            None => return Ok(None),
        }
    }
    Ok(Some(conn))
}

/// One table's rows (this shard's block of them) in one transaction on `conn`. A server that
/// refuses LOAD DATA LOCAL gets the table by `load` with multi-row INSERTs instead.
async fn load_in_one_transaction(
    conn: &mut Conn,
    target: &TargetSpec,
    src: &dyn RowSource,
    all_rows: u64,
    opts: &LoadOptions,
    bar: bool,
    failed: &AtomicBool,
) -> Result<LoadStats> {
    let (first_id, last_id) = match opts.shard {
        Some(s) => s.range(all_rows, src.group_rows()),
        None => (1, all_rows),
    };
    let rows = (last_id + 1).saturating_sub(first_id);
    let table = src.table();
    let chunk = opts.batch_rows.max(1) as u64 * 10;
    let start = Instant::now();
    let mut progress = opts.live.load(table, rows, 1, opts.progress && bar);
    let mut inserted = 0u64;
    let mut scratch = Vec::new();
    let interrupted = |inserted: u64, sig| {
        opts.journal.push(LoadStats {
            table: table.to_string(),
            rows: inserted,
            connections: 1,
            method: opts.method,
            elapsed_s: start.elapsed().as_secs_f64(),
            rows_per_s: 0.0,
            interrupted: true,
            disturbed: false,
            others_cpus: None,
        });
        Error {
            failure: crate::error::Failure::Interrupted(sig),
            message: format!(
                "interrupted while loading table {table} ({inserted} of {rows} rows loaded)"
            ),
        }
    };
    let fail = |e: crate::db::DbError| {
        Error::run(format!(
            "loading table {table} failed: {}",
            target.scrub(&e.message)
        ))
    };
    let begin = match conn.dbms() {
        Dbms::Mysql => "START TRANSACTION",
        _ => "BEGIN",
    };
    conn.execute(begin).await.map_err(fail)?;
    let mut id = first_id;
    while id <= last_id {
        if let Some(sig) = interrupt::signal() {
            return Err(interrupted(inserted, sig));
        }
        if failed.load(Ordering::Relaxed) {
            // Another table failed: the load ends with its error; this one is rolled back.
            let _ = conn.execute("ROLLBACK").await;
            return Err(Error::run(format!("loading table {table} stopped")));
        }
        let end = (id + chunk - 1).min(last_id);
        let mut buf = Vec::with_capacity(chunk as usize * 128);
        let mut n = 0u64;
        for i in id..=end {
            n += src.row_text(i, &mut buf, &mut scratch) as u64;
        }
        if n > 0 {
            let data = bytes::Bytes::from(buf);
            let r = unless_interrupted(conn.load_text(table, src.columns(), data)).await;
            match r {
                None => {
                    let sig = interrupt::signal().unwrap_or(libc::SIGINT);
                    return Err(interrupted(inserted, sig));
                }
                Some(Ok(())) => {}
                Some(Err(e)) if inserted == 0 && refuses_local_infile(&e.message) => {
                    let _ = conn.execute("ROLLBACK").await;
                    let o = LoadOptions {
                        method: LoadMethod::Insert,
                        connections: 1,
                        progress: opts.progress && bar,
                        ..opts.clone()
                    };
                    return load(target, src, all_rows, &o);
                }
                Some(Err(e)) => return Err(fail(e)),
            }
        }
        inserted += n;
        id = end + 1;
        progress.update(id - first_id);
    }
    conn.execute("COMMIT").await.map_err(fail)?;
    progress.finish(rows);
    let elapsed = start.elapsed().as_secs_f64();
    let stats = LoadStats {
        table: table.to_string(),
        rows: inserted,
        connections: 1,
        method: opts.method,
        elapsed_s: elapsed,
        rows_per_s: inserted as f64 / elapsed.max(1e-9),
        interrupted: false,
        disturbed: false,
        others_cpus: None,
    };
    opts.journal.push(stats.clone());
    Ok(stats)
}
