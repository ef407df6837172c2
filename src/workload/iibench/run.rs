//! iibench's own run loop. The shared runner measures timed phases of a thread sweep; iiBench
//! is one run bounded by rows or time whose result is a curve over the rows inserted, so it
//! drives its connections itself and still writes the standard result (one point, one run
//! record, plus the `iibench` section with the window curve and the write amplification).
//!
//! Threads: each insert and query connection has its own thread with a current-thread
//! runtime (SQLite calls block; there are only a few connections). Inserters claim batches
//! of row numbers from one counter, so rows are partitioned across connections and the data
//! is the same whatever their number. Each committed batch is reported to the coordinator
//! (this thread), which closes a window when the cumulative rows reach its boundary and then
//! reads the server's write counter: no flush is forced during the run.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};

use crate::config::RunConfig;
use crate::db::{Conn, DbError, Dbms, ErrorClass, TargetSpec, Value};
use crate::error::{Error, Result};
use crate::harness::{delta, host_cpu, runtime, server_process, Harness, DISTURBED_CPUS};
use crate::measure::proc::{self, ProcSample};
use crate::measure::{CpuTimes, ErrorCounts, LatencyHist};
use crate::report::{Aggregate, ClientCpu, Point, RunRecord};
use crate::runner::{interrupt, IntervalSample};
use crate::server::capture::{self, DiskUsage};

use super::result::{Deletes, IibenchResult, Queries, Wear, Window};
use super::{wear, Query, Spec};

/// Keep at most this many distinct error messages.
const ERROR_SAMPLES: usize = 5;
/// Save the partial result at most this often while running.
const SAVE_EVERY: Duration = Duration::from_secs(2);

enum Msg {
    Ready,
    ConnectFailed(DbError),
    Batch {
        rows: u64,
        logical: u64,
        end: Instant,
        us: u64,
    },
    BatchFailed {
        error: DbError,
        end: Instant,
    },
    /// `--max-table-rows`: a DELETE of `rows` ids committed.
    Deleted {
        rows: u64,
        us: u64,
    },
    DeleteFailed {
        error: DbError,
        end: Instant,
    },
    /// An inserter finished (limit reached, stopped, or its connection was lost).
    Done {
        lost: Option<DbError>,
    },
}

/// State shared by the worker threads (atomics only: nothing is locked per batch or query).
struct Shared {
    next_row: AtomicU64,
    stop: AtomicBool,
    queries: AtomicU64,
}

/// What a query thread hands back when it ends.
struct QueryStats {
    hist: LatencyHist,
    queries: u64,
    rows: u64,
    errors: ErrorCounts,
}

/// Run iiBench on the prepared (empty) table; the point is saved while running (the part
/// measured so far, at most every `SAVE_EVERY`) and at the end.
pub fn measure(h: &mut Harness, spec: &Spec) -> Result<()> {
    let (cfg, rt, server_pid) = (h.cfg, h.rt, h.server_pid);
    // The table's engine as the server reports it (for SHOW ENGINE ... STATUS).
    let engine = h.table_engine.clone();
    let target = &cfg.target_spec;
    let admin = h.conn()?;
    // Space before: the empty table after a forced flush, so that growth is the rows'.
    let disk_before = rt.block_on(disk_now(admin, target));
    let device = disk_before
        .as_ref()
        .and_then(|d| wear::device_of(std::path::Path::new(&d.path)));

    let shared = Arc::new(Shared {
        next_row: AtomicU64::new(1),
        stop: AtomicBool::new(false),
        queries: AtomicU64::new(0),
    });
    let workers = spec.inserters + spec.query_threads;
    let go = Arc::new(Barrier::new(workers + 1));
    let (tx, rx) = mpsc::channel();
    let mut inserters = Vec::new();
    for w in 0..spec.inserters {
        let (target, spec, shared, tx, go) = (
            target.clone(),
            spec.clone(),
            shared.clone(),
            tx.clone(),
            go.clone(),
        );
        inserters.push(
            std::thread::Builder::new()
                .name(format!("eb-iib-ins-{w}"))
                .spawn(move || inserter(target, spec, shared, tx, go))
                .map_err(|e| Error::run(format!("cannot start a client thread: {e}")))?,
        );
    }
    let mut queriers = Vec::new();
    for q in 0..spec.query_threads {
        let (target, shared, tx, go) = (target.clone(), shared.clone(), tx.clone(), go.clone());
        let seed = spec.seed;
        queriers.push(
            std::thread::Builder::new()
                .name(format!("eb-iib-q-{q}"))
                .spawn(move || querier(q, seed, target, shared, tx, go))
                .map_err(|e| Error::run(format!("cannot start a client thread: {e}")))?,
        );
    }
    drop(tx);
    // Every connection is open (or failed) before the clock starts.
    let mut failure = None;
    for _ in 0..workers {
        match rx.recv() {
            Ok(Msg::ConnectFailed(e)) => {
                failure.get_or_insert(e);
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    if failure.is_some() {
        shared.stop.store(true, Ordering::SeqCst);
    }
    // The admin connection is only lost by a failed read, and none ran since the one above.
    let before = match h.conn() {
        Ok(c) => rt.block_on(capture::counters(c)),
        Err(_) => BTreeMap::new(),
    };
    let proc0 = server_pid.and_then(ProcSample::of_tree);
    let disk0 = device
        .as_ref()
        .and_then(|(_, ma, mi)| wear::sample(*ma, *mi));
    let busy0 = proc::host_busy_s();
    let cpu0 = CpuTimes::now();
    let t0 = Instant::now();
    go.wait();
    if let Some(e) = failure {
        join_all(inserters, queriers);
        return Err(Error::usage(format!(
            "iibench: a connection to {} failed: {}",
            target.display,
            target.scrub(&e.message)
        )));
    }

    let mut st = State::new(cfg, spec, t0, proc0);
    let deadline = spec.max_time.map(|d| t0 + d);
    let mut done = 0;
    let mut last_save = Instant::now();
    let mut lost: Option<DbError> = None;
    while done < spec.inserters {
        let msg = rx.recv_timeout(Duration::from_millis(100));
        if deadline.is_some_and(|d| Instant::now() >= d) || interrupt::signal().is_some() {
            shared.stop.store(true, Ordering::SeqCst);
        }
        match msg {
            Ok(Msg::Batch {
                rows,
                logical,
                end,
                us,
            }) => {
                st.batch(rows, logical, end, us);
                if st.rows >= st.next_boundary {
                    st.close_window(end, server_pid, &shared, false);
                }
            }
            Ok(Msg::BatchFailed { error, end }) => st.failed(error, end, target),
            Ok(Msg::Deleted { rows, us }) => {
                st.del_statements += 1;
                st.del_rows += rows;
                st.del_hist.record_us(us);
            }
            Ok(Msg::DeleteFailed { error, end }) => {
                st.del_errors += 1;
                st.failed(error, end, target);
            }
            Ok(Msg::Done { lost: l }) => {
                done += 1;
                if let Some(e) = l {
                    st.workers_lost += 1;
                    lost = Some(e);
                }
            }
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if last_save.elapsed() >= SAVE_EVERY {
            last_save = Instant::now();
            save(h, st.point(cfg, spec, None))?;
        }
    }
    // The run ends with the last committed batch; the query threads stop now.
    shared.stop.store(true, Ordering::SeqCst);
    let t_end = st.last_end;
    if st.rows > st.window_start_rows {
        st.close_window(t_end, server_pid, &shared, true);
    }
    let cpu = CpuTimes::now().since(cpu0);
    let busy1 = proc::host_busy_s();
    let proc_run = server_pid.and_then(ProcSample::of_tree);
    let disk_run = device
        .as_ref()
        .and_then(|(_, ma, mi)| wear::sample(*ma, *mi));
    let admin = h.conn()?;
    let after = rt.block_on(capture::counters(admin));
    let qstats = join_all(inserters, queriers);

    // One forced flush at the end: the total bytes written for the rows, and their size.
    let disk_after = rt.block_on(disk_now(admin, target));
    let proc_total = server_pid.and_then(ProcSample::of_tree);
    let disk_total = device
        .as_ref()
        .and_then(|(_, ma, mi)| wear::sample(*ma, *mi));
    let table_rows_end = match spec.max_table_rows {
        Some(_) => rt
            .block_on(admin.query_one(&format!("SELECT COUNT(*) FROM {}", super::TABLE)))
            .ok()
            .flatten()
            .and_then(|v| v.parse().ok()),
        None => None,
    };
    let (engine_status, table_sizes) = rt.block_on(async {
        (
            capture::engine_status(admin, &engine).await,
            capture::table_sizes(admin).await,
        )
    });

    let elapsed_s = t_end.duration_since(t0).as_secs_f64().max(1e-9);
    let mut fin = Final {
        elapsed_s,
        cpu,
        counters: delta(&before, &after),
        server: match (proc0, proc_run) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        },
        busy_s: (busy1 - busy0).max(0.0),
        queries: None,
        wear: Wear::default(),
        table_rows_end,
    };
    if spec.query_threads > 0 {
        let mut q = QueryStats {
            hist: LatencyHist::new(),
            queries: 0,
            rows: 0,
            errors: ErrorCounts::default(),
        };
        for s in &qstats {
            q.hist.add(&s.hist);
            q.queries += s.queries;
            q.rows += s.rows;
            q.errors.merge(&s.errors);
        }
        fin.queries = Some(Queries {
            threads: spec.query_threads,
            queries: q.queries,
            rows: q.rows,
            errors: q.errors.total(),
            queries_per_s: q.queries as f64 / elapsed_s,
            latency_us: q.hist.summary(),
            histogram_hdr_v2: q.hist.encode(),
        });
    }
    let w = &mut fin.wear;
    if let (Some(a), Some(b), Some(c)) = (proc0, proc_run, proc_total) {
        w.server_written_bytes_run = Some(b.write_bytes.saturating_sub(a.write_bytes));
        let total = c.write_bytes.saturating_sub(a.write_bytes);
        w.server_written_bytes_total = Some(total);
        w.written_bytes_per_row = Some(total as f64 / st.rows.max(1) as f64);
        w.write_amplification = Some(total as f64 / st.logical.max(1) as f64);
    }
    if let (Some(a), Some(b)) = (&disk_before, &disk_after) {
        let growth = b.allocated_bytes as i64 - a.allocated_bytes as i64;
        w.disk_growth_bytes = Some(growth);
        w.disk_growth_bytes_per_row = Some(growth as f64 / st.rows.max(1) as f64);
        w.space_amplification = Some(growth as f64 / st.logical.max(1) as f64);
    }
    w.disk_before = disk_before;
    w.disk_after = disk_after.clone();
    if let (Some((name, _, _)), Some(a), Some(b)) = (&device, disk0, disk_total) {
        w.device = Some(wear::between(name, a, b));
    }
    let _ = disk_run; // the device counters are reported over run + flush only
    let mut point = st.point(cfg, spec, Some(&fin));
    point.engine_status = engine_status;
    point.table_sizes = table_sizes;
    point.disk_usage = disk_after;
    print_summary(&point);
    save(h, point)?;
    if st.workers_lost == spec.inserters && st.workers_lost > 0 {
        let why = lost.map(|e| e.message).unwrap_or_default();
        return Err(Error::run(format!(
            "every insert connection to the target was lost during the run: {}",
            target.scrub(&why)
        )));
    }
    Ok(())
}

/// The result's one point, as measured so far.
fn save(h: &mut Harness, p: Point) -> Result<()> {
    h.doc.points = vec![p];
    h.save()
}

fn join_all(
    inserters: Vec<std::thread::JoinHandle<()>>,
    queriers: Vec<std::thread::JoinHandle<QueryStats>>,
) -> Vec<QueryStats> {
    for h in inserters {
        let _ = h.join();
    }
    queriers.into_iter().filter_map(|h| h.join().ok()).collect()
}

/// Force the data to disk and measure it: the shared capture for servers; for SQLite a WAL
/// checkpoint and the database file with its WAL.
async fn disk_now(admin: &mut Conn, target: &TargetSpec) -> Option<DiskUsage> {
    if admin.dbms() != Dbms::Sqlite {
        return capture::disk_usage(admin).await;
    }
    let t = Instant::now();
    let flushed = admin.query("PRAGMA wal_checkpoint(TRUNCATE)").await.is_ok();
    let path = &target.sqlite_path;
    let mut bytes = 0;
    for suffix in ["", "-wal"] {
        use std::os::unix::fs::MetadataExt;
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        if let Ok(m) = std::fs::metadata(&p) {
            bytes += m.blocks() * 512;
        }
    }
    Some(DiskUsage {
        path: path.display().to_string(),
        allocated_bytes: bytes,
        flushed,
        flush_s: t.elapsed().as_secs_f64(),
    })
}

/// Retried with the same rows: the batch was rolled back whole.
fn inserter(
    target: TargetSpec,
    spec: Spec,
    shared: Arc<Shared>,
    tx: mpsc::Sender<Msg>,
    go: Arc<Barrier>,
) {
    runtime().block_on(async {
        let mut conn = match Conn::connect(&target).await {
            Ok(c) => {
                let _ = tx.send(Msg::Ready);
                c
            }
            Err(e) => {
                let _ = tx.send(Msg::ConnectFailed(e));
                go.wait();
                return;
            }
        };
        go.wait();
        let dbms = conn.dbms();
        let (mut sql, mut rows): (String, Vec<Vec<Value>>) = (String::new(), Vec::new());
        let mut pending: Option<(u64, u64)> = None;
        let mut lost = None;
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                break;
            }
            let (first, n) = match pending.take() {
                Some(b) => b,
                None => {
                    let first = shared
                        .next_row
                        .fetch_add(spec.rows_per_commit, Ordering::SeqCst);
                    let n = match spec.max_rows {
                        Some(max) if first > max => break,
                        Some(max) => spec.rows_per_commit.min(max - first + 1),
                        None => spec.rows_per_commit,
                    };
                    (first, n)
                }
            };
            let logical = spec.batch(dbms, first, n, &mut sql, &mut rows);
            let t0 = Instant::now();
            let r = if dbms == Dbms::Sqlite {
                conn.insert_rows(super::TABLE, super::Spec::columns(), &rows)
                    .await
            } else {
                conn.execute(&sql).await
            };
            let end = Instant::now();
            match r {
                Ok(()) => {
                    let us = end.duration_since(t0).as_micros() as u64;
                    let _ = tx.send(Msg::Batch {
                        rows: n,
                        logical,
                        end,
                        us,
                    });
                }
                Err(e) => {
                    let class = e.class;
                    let _ = tx.send(Msg::BatchFailed {
                        error: e.clone(),
                        end,
                    });
                    if class == ErrorClass::ConnectionLost {
                        lost = Some(e);
                        break;
                    }
                    if class.retryable() {
                        pending = Some((first, n));
                    }
                    continue;
                }
            }
            // --max-table-rows: the same connection deletes the rows max_table_rows behind
            // (retried a few times when the server asks for it; then its rows stay).
            if let Some((lo, hi, dsql)) = spec.delete_for(first, n) {
                for _ in 0..3 {
                    let t0 = Instant::now();
                    let r = conn.execute(&dsql).await;
                    let end = Instant::now();
                    match r {
                        Ok(()) => {
                            let us = end.duration_since(t0).as_micros() as u64;
                            let _ = tx.send(Msg::Deleted {
                                rows: hi - lo + 1,
                                us,
                            });
                            break;
                        }
                        Err(e) => {
                            let class = e.class;
                            let _ = tx.send(Msg::DeleteFailed {
                                error: e.clone(),
                                end,
                            });
                            if class == ErrorClass::ConnectionLost {
                                lost = Some(e);
                            }
                            if !class.retryable() {
                                break;
                            }
                        }
                    }
                }
                if lost.is_some() {
                    break;
                }
            }
        }
        let _ = tx.send(Msg::Done { lost });
    });
}

fn querier(
    idx: usize,
    seed: u64,
    target: TargetSpec,
    shared: Arc<Shared>,
    tx: mpsc::Sender<Msg>,
    go: Arc<Barrier>,
) -> QueryStats {
    let mut st = QueryStats {
        hist: LatencyHist::new(),
        queries: 0,
        rows: 0,
        errors: ErrorCounts::default(),
    };
    runtime().block_on(async {
        let prepared = match Conn::connect(&target).await {
            Ok(mut c) => match super::prepare_queries(&mut c).await {
                Ok(ids) => Ok((c, ids)),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        let (mut conn, ids) = match prepared {
            Ok(x) => {
                let _ = tx.send(Msg::Ready);
                x
            }
            Err(e) => {
                let _ = tx.send(Msg::ConnectFailed(e));
                go.wait();
                return;
            }
        };
        drop(tx);
        go.wait();
        let mut r = crate::workload::rng::Rng::keyed(seed, 7000, idx as u64);
        let mut params = [Value::Int(0)];
        while !shared.stop.load(Ordering::Relaxed) {
            let (q, p) = Query::draw(&mut r);
            params[0] = Value::Int(p);
            let id = ids[Query::ALL.iter().position(|x| *x == q).unwrap_or(0)];
            let t0 = Instant::now();
            match conn.exec_rows(id, &params).await {
                Ok(n) => {
                    st.hist.record_us(t0.elapsed().as_micros() as u64);
                    st.queries += 1;
                    st.rows += n;
                    shared.queries.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    st.errors.add(e.class);
                    if e.class == ErrorClass::ConnectionLost {
                        break;
                    }
                }
            }
        }
    });
    st
}

/// Totals measured after the run, for the final point.
struct Final {
    elapsed_s: f64,
    cpu: CpuTimes,
    counters: BTreeMap<String, f64>,
    server: Option<(ProcSample, ProcSample)>,
    busy_s: f64,
    queries: Option<Queries>,
    wear: Wear,
    table_rows_end: Option<u64>,
}

/// The coordinator's running totals.
struct State {
    t0: Instant,
    last_end: Instant,
    rows: u64,
    batches: u64,
    logical: u64,
    hist: LatencyHist,
    errors: ErrorCounts,
    error_samples: Vec<String>,
    workers_lost: usize,
    windows: Vec<Window>,
    window_rows: u64,
    next_boundary: u64,
    window_start_rows: u64,
    window_start_t: Instant,
    window_batches: u64,
    window_errors: u64,
    window_logical: u64,
    window_hist: LatencyHist,
    window_queries0: u64,
    window_proc: Option<ProcSample>,
    interval: Duration,
    live: bool,
    intervals: Vec<IntervalSample>,
    cur_idx: u32,
    cur_ops: u64,
    cur_errors: u64,
    cur_hist: LatencyHist,
    del_statements: u64,
    del_rows: u64,
    del_errors: u64,
    del_hist: LatencyHist,
}

impl State {
    fn new(cfg: &RunConfig, spec: &Spec, t0: Instant, proc0: Option<ProcSample>) -> State {
        State {
            t0,
            last_end: t0,
            rows: 0,
            batches: 0,
            logical: 0,
            hist: LatencyHist::new(),
            errors: ErrorCounts::default(),
            error_samples: Vec::new(),
            workers_lost: 0,
            windows: Vec::new(),
            window_rows: spec.window_rows,
            next_boundary: spec.window_rows,
            window_start_rows: 0,
            window_start_t: t0,
            window_batches: 0,
            window_errors: 0,
            window_logical: 0,
            window_hist: LatencyHist::new(),
            window_queries0: 0,
            window_proc: proc0,
            interval: cfg.report_interval(),
            live: cfg.live_report,
            intervals: Vec::new(),
            cur_idx: 0,
            cur_ops: 0,
            cur_errors: 0,
            cur_hist: LatencyHist::new(),
            del_statements: 0,
            del_rows: 0,
            del_errors: 0,
            del_hist: LatencyHist::new(),
        }
    }

    /// Move the per-interval sample forward to the interval of `end`.
    fn advance_interval(&mut self, end: Instant) {
        let idx = (end.duration_since(self.t0).as_nanos() / self.interval.as_nanos().max(1)) as u32;
        while idx > self.cur_idx {
            self.push_interval(None);
        }
    }

    fn push_interval(&mut self, end: Option<Instant>) {
        let len = self.interval.as_secs_f64();
        let mut t_s = (self.cur_idx + 1) as f64 * len;
        let mut span = len;
        if let Some(end) = end {
            let end_s = end.duration_since(self.t0).as_secs_f64();
            if end_s < t_s {
                span = (end_s - self.cur_idx as f64 * len).max(1e-6);
                t_s = end_s;
            }
        }
        let s = IntervalSample {
            t_s,
            ops: self.cur_ops,
            errors: self.cur_errors,
            ops_per_s: self.cur_ops as f64 / span,
            latency_us: self.cur_hist.summary(),
            by_kind: BTreeMap::new(),
            figures: BTreeMap::new(),
            kind_ticks: Vec::new(),
            len_s: span,
        };
        if self.live {
            eprintln!(
                "[ {:>6.1}s ] iibench  batches/s: {:.1}  p95: {} us  err/s: {:.1}",
                s.t_s,
                s.ops_per_s,
                s.latency_us.p95_us,
                s.errors as f64 / span
            );
        }
        self.intervals.push(s);
        self.cur_idx += 1;
        self.cur_ops = 0;
        self.cur_errors = 0;
        self.cur_hist.reset();
    }

    fn batch(&mut self, rows: u64, logical: u64, end: Instant, us: u64) {
        self.advance_interval(end);
        self.rows += rows;
        self.batches += 1;
        self.logical += logical;
        self.hist.record_us(us);
        self.window_batches += 1;
        self.window_logical += logical;
        self.window_hist.record_us(us);
        self.cur_ops += 1;
        self.cur_hist.record_us(us);
        self.last_end = self.last_end.max(end);
    }

    fn failed(&mut self, e: DbError, end: Instant, target: &TargetSpec) {
        self.advance_interval(end);
        self.errors.add(e.class);
        self.window_errors += 1;
        self.cur_errors += 1;
        let msg = format!("{}: {}", e.class.name(), target.scrub(&e.message));
        if self.error_samples.len() < ERROR_SAMPLES && !self.error_samples.contains(&msg) {
            self.error_samples.push(msg);
        }
    }

    fn close_window(&mut self, end: Instant, pid: Option<u32>, shared: &Shared, partial: bool) {
        let p = pid.and_then(ProcSample::of_tree);
        let rows = self.rows - self.window_start_rows;
        let elapsed_s = end
            .duration_since(self.window_start_t)
            .as_secs_f64()
            .max(1e-9);
        let queries_now = shared.queries.load(Ordering::Relaxed);
        let queries = queries_now - self.window_queries0;
        let written = match (self.window_proc, p) {
            (Some(a), Some(b)) => Some(b.write_bytes.saturating_sub(a.write_bytes)),
            _ => None,
        };
        let w = Window {
            rows_end: self.rows,
            rows,
            batches: self.window_batches,
            errors: self.window_errors,
            t_s: end.duration_since(self.t0).as_secs_f64(),
            elapsed_s,
            rows_per_s: rows as f64 / elapsed_s,
            latency_us: self.window_hist.summary(),
            logical_bytes: self.window_logical,
            queries,
            queries_per_s: queries as f64 / elapsed_s,
            server_written_bytes: written,
            written_bytes_per_row: written.map(|b| b as f64 / rows.max(1) as f64),
            write_amplification: written.map(|b| b as f64 / self.window_logical.max(1) as f64),
            partial,
        };
        eprintln!(
            "iibench rows {:>12}  last {} rows: {:>10.0} rows/s{}{}",
            w.rows_end,
            w.rows,
            w.rows_per_s,
            w.written_bytes_per_row
                .map(|b| format!("  server wrote {b:.0} B/row"))
                .unwrap_or_default(),
            if queries > 0 {
                format!("  {:.0} queries/s", w.queries_per_s)
            } else {
                String::new()
            }
        );
        self.windows.push(w);
        self.window_start_rows = self.rows;
        self.window_start_t = end;
        self.window_batches = 0;
        self.window_errors = 0;
        self.window_logical = 0;
        self.window_hist.reset();
        self.window_queries0 = queries_now;
        self.window_proc = p;
        while self.next_boundary <= self.rows {
            self.next_boundary += self.window_rows;
        }
    }

    /// The point as measured so far (`fin`: the totals after the run, when it has ended).
    fn point(&self, cfg: &RunConfig, spec: &Spec, fin: Option<&Final>) -> Point {
        let elapsed_s = fin.map_or_else(
            || self.last_end.duration_since(self.t0).as_secs_f64(),
            |f| f.elapsed_s,
        );
        let elapsed_s = elapsed_s.max(1e-9);
        let mut intervals = self.intervals.clone();
        if fin.is_some() && self.cur_ops + self.cur_errors > 0 {
            // The last, possibly short interval (its rate uses its real length).
            let len = self.interval.as_secs_f64();
            let span = (elapsed_s - self.cur_idx as f64 * len).max(1e-6);
            intervals.push(IntervalSample {
                t_s: elapsed_s.max(self.cur_idx as f64 * len),
                ops: self.cur_ops,
                errors: self.cur_errors,
                ops_per_s: self.cur_ops as f64 / span,
                latency_us: self.cur_hist.summary(),
                by_kind: BTreeMap::new(),
                figures: BTreeMap::new(),
                kind_ticks: Vec::new(),
                len_s: span,
            });
        }
        let cpu = fin.map(|f| f.cpu).unwrap_or_default();
        let server = fin.and_then(|f| f.server);
        let server_process =
            server_process(server.map(|(a, _)| a), server.map(|(_, b)| b), self.batches);
        let client_s = cpu.total_s();
        let server_s = server_process.as_ref().map(|p| p.user_s + p.sys_s);
        let busy_s = fin.map_or(0.0, |f| f.busy_s);
        let host_cpu = host_cpu(busy_s, client_s, server_s, elapsed_s);
        let rec = RunRecord {
            run: 1,
            ops: self.batches,
            rows: self.rows,
            rows_per_op: self.rows as f64 / self.batches.max(1) as f64,
            statements: self.batches,
            elapsed_s,
            ops_per_s: self.batches as f64 / elapsed_s,
            statements_per_s: self.batches as f64 / elapsed_s,
            errors_total: self.errors.total(),
            errors: self
                .errors
                .to_map()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            error_samples: self.error_samples.clone(),
            latency_us: self.hist.summary(),
            response_us: None,
            open_loop: None,
            client_cpu: ClientCpu::new(cpu, self.batches),
            server_counters: fin.map(|f| f.counters.clone()).unwrap_or_default(),
            client_cpu_share: server_s
                .filter(|s| client_s + s > 0.0)
                .map(|s| client_s / (client_s + s)),
            server_process,
            disturbed: host_cpu.others_cpus > DISTURBED_CPUS,
            host_cpu,
            intervals,
            workers_lost: self.workers_lost,
            interrupted: interrupt::signal().is_some(),
            histogram_hdr_v2: self.hist.encode(),
            by_kind: BTreeMap::new(),
            workload_counters: BTreeMap::new(),
            percentiles_us: self.hist.percentiles_us(&cfg.extra_percentiles),
            reconnects: 0,
            reconnect_failures: 0,
            ..Default::default()
        };
        let aggregate = Aggregate::of(std::slice::from_ref(&rec), self.hist.summary());
        let last_full = self.windows.iter().rev().find(|w| !w.partial);
        let mut point = Point {
            workload: cfg.workload.clone(),
            operation: "insert".into(),
            threads: spec.inserters,
            runs: vec![rec],
            aggregate,
            ..Default::default()
        };
        point.set_section(
            super::NAME,
            &IibenchResult {
                rows: self.rows,
                batches: self.batches,
                rows_per_commit: spec.rows_per_commit,
                window_rows: spec.window_rows,
                elapsed_s,
                rows_per_s: self.rows as f64 / elapsed_s,
                logical_bytes: self.logical,
                windows: self.windows.clone(),
                last_window_rows_per_s: last_full.map(|w| w.rows_per_s),
                queries: fin.and_then(|f| f.queries.clone()),
                wear: fin.map(|f| f.wear.clone()).unwrap_or_default(),
                deletes: spec.max_table_rows.map(|m| Deletes {
                    max_table_rows: m,
                    statements: self.del_statements,
                    range_rows: self.del_rows,
                    errors: self.del_errors,
                    latency_us: self.del_hist.summary(),
                    histogram_hdr_v2: self.del_hist.encode(),
                    table_rows_end: fin.and_then(|f| f.table_rows_end),
                }),
            },
        );
        point
    }
}

fn print_summary(p: &Point) {
    let Some(ii) = p.section::<IibenchResult>(super::NAME) else {
        return;
    };
    let w = &ii.wear;
    eprintln!(
        "iibench: {} rows in {:.1} s = {:.0} rows/s{}; {} windows, last full window {}",
        ii.rows,
        ii.elapsed_s,
        ii.rows_per_s,
        ii.queries
            .as_ref()
            .map(|q| format!(", {:.0} queries/s", q.queries_per_s))
            .unwrap_or_default(),
        ii.windows.len(),
        ii.last_window_rows_per_s
            .map(|r| format!("{r:.0} rows/s"))
            .unwrap_or_else(|| "none".into()),
    );
    if let (Some(b), Some(wa)) = (w.written_bytes_per_row, w.write_amplification) {
        eprintln!(
            "iibench: server wrote {b:.0} B/row after the final flush (write amplification {wa:.1}){}",
            w.disk_growth_bytes_per_row
                .map(|g| format!("; on disk +{g:.0} B/row"))
                .unwrap_or_default()
        );
    }
}
