//! iibench's run shape: one run bounded by rows or time whose result is a curve over the rows
//! inserted, built from the shared runner's pieces. It still writes the standard result (one
//! point, one run record, plus the `iibench` section with the window curve and the write
//! amplification).
//!
//! Each window of `--window-rows` rows is one phase of the insert session
//! (`InsertDriver`, one batch per operation) with a budget of exactly the batches that reach
//! the window's row boundary, so the window's rate is the phase's rows over its elapsed time,
//! and the server's write counter is read between phases (no flush is forced during the
//! run). Between two phases the inserters are idle for the runner's barrier: the windows are
//! back to back with a gap of about 0.2-0.3 ms (median, release build, SQLite and MariaDB, 2
//! inserters and a query connection; a few ms more when the partial result is saved there,
//! every `SAVE_EVERY`), which the windows' rates leave out and the run's rate (wall time)
//! keeps (docs/iibench.md). The query connections
//! (`--query-threads`) are a second session whose one phase lasts as long as the inserts: it
//! runs on a scoped thread and the inserts end it through the session's `StopHandle`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::contract::Session;
use crate::contract::{Access, Counted, Harness, HostSample, RunSettings, Span};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::measure::profile::{self, ServerProfile};
use crate::measure::{delta, disturbed, CpuTimes, ErrorCounts, LatencyHist};
use crate::model::{
    Aggregate, DiskUsage, IntervalSample, Pacing, PhaseInfo, PhaseKind, PhaseResult, Point,
};
use crate::runner::Workers;
use crate::server::capture;

use super::driver::{InsertDriver, QueryDriver, Shared};
use super::result::{Deletes, IibenchResult, Queries, Wear, Window};
use super::{wear, Spec};

/// Keep at most this many distinct error messages.
const ERROR_SAMPLES: usize = 5;
/// Save the partial result at most this often while running.
const SAVE_EVERY: Duration = Duration::from_secs(2);
/// A phase's length when only rows bound the run (as the sweep's `--time 0`).
const UNBOUNDED: Duration = Duration::from_secs(100 * 365 * 86_400);

/// Run iiBench on the prepared (empty) table; the point is saved while running (the windows
/// finished so far, at most every `SAVE_EVERY`) and at the end.
pub fn measure(h: &mut dyn Harness, spec: &Spec) -> Result<()> {
    let (cfg, rt, server_pid) = (h.settings(), h.rt(), h.server_pid());
    // The table's engine as the server reports it (for SHOW ENGINE ... STATUS).
    let engine = h.table_engine().to_string();
    let target = &cfg.target;
    let admin = h.conn()?;
    // Space before: the empty table after a forced flush, so that growth is the rows'.
    let disk_before = rt.block_on(disk_now(admin, target));
    let device = disk_before
        .as_ref()
        .and_then(|d| wear::device_of(std::path::Path::new(&d.path)));

    let shared = Arc::new(Shared::new());
    // Every connection is open before the clock starts.
    let (mut inserts, mut queries) = sessions(h, spec, &shared)?;
    // A shard of a fleet starts inserting with the others (docs/fleet.md).
    let started = h.meet(0)?;
    // The admin connection is only lost by a failed read, and none ran since the one above.
    let before = match h.conn() {
        Ok(c) => rt.block_on(capture::counters(c)),
        Err(_) => BTreeMap::new(),
    };
    // Started before the first sample: perf takes a moment to attach.
    let profiler = profile::start_for_run(cfg.profile_hz, server_pid);
    let span = h.span();
    let disk0 = device
        .as_ref()
        .and_then(|(_, ma, mi)| wear::sample(*ma, *mi));
    let (t0, proc0) = (span.start.at, span.start.server);
    let deadline = spec.max_time.map(|d| t0 + d);
    let interval = cfg.report_interval;

    let mut st = State::new(cfg, spec, span);
    st.started = started.then(crate::fleet::now_unix_s);
    let (live, w) = (h.watch(), h.workload());
    let (ran, qres) = std::thread::scope(|s| {
        let query_phase = queries.as_mut().map(|qs| {
            let stop = qs.stop_handle();
            let length = deadline.map_or(UNBOUNDED, |d| d.saturating_duration_since(t0));
            // Counted live beside the inserts, not drawn (the inserts' line is the run's).
            let info = PhaseInfo {
                shown: false,
                ..PhaseInfo::new(PhaseKind::Run, "query", spec.query_threads, (1, 1))
            };
            let phase =
                move || live.phase(qs, &info, w.as_ref(), length, None, interval, &mut |_| {});
            (stop, s.spawn(phase))
        });
        let ran = insert_windows(h, spec, &shared, &mut inserts, &mut st, deadline);
        // The run ends with the last committed batch; the queries stop now.
        let qres = query_phase.map(|(stop, j)| {
            stop.stop();
            j.join()
                .unwrap_or_else(|_| Err(Error::run("the query phase panicked")))
        });
        (ran, qres)
    });
    let lost_all = ran?;
    let qres = qres.transpose()?;
    drop(queries);
    drop(inserts);

    let t_end = st.last_end;
    if st.w.rows > 0 {
        st.close_window(server_pid, &shared, true);
    }
    let end = st.span.sample();
    let proc_run = end.server;
    let profile = profile::stop_for_run(profiler, st.batches);
    let admin = h.conn()?;
    let after = rt.block_on(capture::counters(admin));

    // One forced flush at the end: the total bytes written for the rows, and their size.
    let disk_after = rt.block_on(disk_now(admin, target));
    let proc_total = st.span.sample().server;
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
        cpu: end.client.since(st.span.start.client),
        counters: delta(&before, &after),
        end,
        queries: None,
        wear: Wear::default(),
        table_rows_end,
        profile,
    };
    fin.queries = qres.map(|q| queries_of(&q, spec.query_threads, elapsed_s));
    let w = &mut fin.wear;
    if let (Some(a), Some(b), Some(c)) = (proc0, proc_run, proc_total) {
        // A process of the server that exits during the run (PostgreSQL's autovacuum workers)
        // takes its byte counts out of the tree's sum, so the difference of the first and last
        // samples can fall short of what was written; the windows' deltas, each between two
        // close samples, add up to a lower bound of the run's.
        let windows: u64 = st
            .windows
            .iter()
            .filter_map(|x| x.server_written_bytes)
            .sum();
        let run = b.write_bytes.saturating_sub(a.write_bytes).max(windows);
        w.server_written_bytes_run = Some(run);
        let total = c.write_bytes.saturating_sub(a.write_bytes).max(run);
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
    let mut point = st.point(cfg, spec, &shared, Some(&fin), &[]);
    point.engine_status = engine_status;
    point.table_sizes = table_sizes;
    point.disk_usage = disk_after;
    print_summary(&point);
    save(h, point)?;
    if let Some(why) = lost_all {
        return Err(Error::run(format!(
            "every insert connection to the target was lost during the run: {}",
            target.scrub(&why)
        )));
    }
    Ok(())
}

/// The insert session (`--inserters` connections) and the query session (`--query-threads`,
/// none without), every connection open.
fn sessions(
    h: &dyn Harness,
    spec: &Spec,
    shared: &Arc<Shared>,
) -> Result<(Workers, Option<Workers>)> {
    let target = &h.settings().target;
    let session_cfg = |threads| h.session_config(threads, Pacing::ClosedLoop, Access::ReadWrite);
    let inserts = {
        let (spec, shared) = (Arc::new(spec.clone()), shared.clone());
        Workers::start(target, &session_cfg(spec.inserters), move |_| {
            InsertDriver::new(spec.clone(), shared.clone())
        })
        .map_err(|e| e.context("iibench insert connections"))?
    };
    let queries = match spec.query_threads {
        0 => None,
        n => {
            let (seed, shared) = (spec.seed, shared.clone());
            let s = Workers::start(target, &session_cfg(n), move |q| {
                QueryDriver::new(seed, q, shared.clone())
            })
            .map_err(|e| e.context("iibench query connections"))?;
            Some(s)
        }
    };
    Ok((inserts, queries))
}

/// The query connections' figures over the run.
fn queries_of(q: &PhaseResult, threads: usize, elapsed_s: f64) -> Queries {
    Queries {
        threads,
        queries: q.ops,
        rows: q.rows,
        errors: q.errors.total(),
        queries_per_s: q.ops as f64 / elapsed_s,
        latency_us: q.hist.summary(),
        histogram_hdr_v2: q.hist.encode(),
    }
}

/// The windows, one insert phase each (a window takes more than one phase only when failed
/// batches wait for their retry), until `--max-rows`, the deadline, a signal or the loss of
/// every insert connection (then: why).
fn insert_windows(
    h: &mut dyn Harness,
    spec: &Spec,
    shared: &Shared,
    session: &mut dyn Session,
    st: &mut State,
    deadline: Option<Instant>,
) -> Result<Option<String>> {
    let (cfg, server_pid) = (h.settings(), h.server_pid());
    let rpc = spec.rows_per_commit;
    let mut last_save = Instant::now();
    let mut save_error = None;
    loop {
        if interrupt::signal().is_some() {
            return Ok(None);
        }
        // Every worker is idle here: the counts are exact.
        let claimed = shared.claimed();
        let retries = shared.retries.load(std::sync::atomic::Ordering::SeqCst);
        // A fleet's shard stops at its share of --max-rows.
        let boundary = spec
            .shard_max_rows()
            .map_or(st.next_boundary, |m| m.min(st.next_boundary));
        let batches = boundary.saturating_sub(claimed).div_ceil(rpc) + retries;
        if batches == 0 {
            let last = spec.shard_max_rows().is_some_and(|m| claimed >= m);
            st.close_window(server_pid, shared, last && st.rows < st.next_boundary);
            if last {
                return Ok(None);
            }
            while st.next_boundary <= claimed {
                st.next_boundary += spec.window_rows;
            }
            continue;
        }
        let now = Instant::now();
        let length = match deadline {
            Some(d) if now >= d => return Ok(None),
            Some(d) => d - now,
            None => UNBOUNDED,
        };
        let offset_s = now.duration_since(st.t0).as_secs_f64();
        let mut so_far = Vec::new();
        // Each window is a phase; the live outputs count the run's time across them.
        let info = PhaseInfo {
            offset_s,
            planned: spec.max_time,
            ..PhaseInfo::new(PhaseKind::Run, "insert", spec.inserters, (1, 1))
        };
        let (live, w) = (h.watch(), h.workload());
        let mut on_interval = |s: &IntervalSample| {
            let mut s = s.clone();
            s.t_s += offset_s;
            so_far.push(s);
            // Long windows: the windows finished so far and this one's intervals.
            if last_save.elapsed() >= SAVE_EVERY && save_error.is_none() {
                last_save = Instant::now();
                let p = st.point(cfg, spec, shared, None, &so_far);
                save_error = save(h, p).err();
            }
        };
        let res = live.phase(
            session,
            &info,
            w.as_ref(),
            length,
            Some(batches),
            st.interval,
            &mut on_interval,
        )?;
        if let Some(e) = save_error.take() {
            return Err(e);
        }
        st.add_phase(&res, now);
        if let Some(why) = res.lost_all {
            return Ok(Some(why));
        }
        if last_save.elapsed() >= SAVE_EVERY {
            last_save = Instant::now();
            save(h, st.point(cfg, spec, shared, None, &[]))?;
        }
    }
}

/// The result's one point, as measured so far.
fn save(h: &mut dyn Harness, p: Point) -> Result<()> {
    h.doc().points = vec![p];
    h.save()
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

/// Totals measured after the run, for the final point.
struct Final {
    elapsed_s: f64,
    cpu: CpuTimes,
    counters: BTreeMap<String, f64>,
    /// The host, this process and the server at the run's end.
    end: HostSample,
    queries: Option<Queries>,
    wear: Wear,
    table_rows_end: Option<u64>,
    /// `--profile-server`: where the server's CPU went over the run.
    profile: Option<ServerProfile>,
}

/// The window being measured: what its phases added up to so far.
#[derive(Default)]
struct Open {
    rows: u64,
    batches: u64,
    errors: u64,
    logical: u64,
    hist: LatencyHist,
    /// The phases' elapsed times (the gaps between them are not the window's).
    elapsed: Duration,
}

/// The insert phases' running totals and the windows.
struct State {
    t0: Instant,
    last_end: Instant,
    rows: u64,
    batches: u64,
    statements: u64,
    logical: u64,
    hist: LatencyHist,
    errors: ErrorCounts,
    error_samples: Vec<String>,
    workers_lost: usize,
    reconnects: u64,
    reconnect_failures: u64,
    windows: Vec<Window>,
    next_boundary: u64,
    w: Open,
    window_queries0: u64,
    /// The host, this process and the server when the open window started: its server writes
    /// and what other processes used during it are counted from here.
    window_start: HostSample,
    /// The run's span: its start, and how its record is made.
    span: Span,
    interval: Duration,
    intervals: Vec<IntervalSample>,
    /// A fleet's shard: when the run started (seconds since the epoch).
    started: Option<f64>,
}

impl State {
    fn new(cfg: &RunSettings, spec: &Spec, span: Span) -> State {
        let start = span.start;
        State {
            t0: start.at,
            last_end: start.at,
            rows: 0,
            batches: 0,
            statements: 0,
            logical: 0,
            hist: LatencyHist::new(),
            errors: ErrorCounts::default(),
            error_samples: Vec::new(),
            workers_lost: 0,
            reconnects: 0,
            reconnect_failures: 0,
            windows: Vec::new(),
            next_boundary: spec.window_rows,
            w: Open::default(),
            window_queries0: 0,
            window_start: start,
            span,
            interval: cfg.report_interval,
            intervals: Vec::new(),
            started: None,
        }
    }

    /// Add one insert phase that started at `start`.
    fn add_phase(&mut self, res: &PhaseResult, start: Instant) {
        let offset_s = start.duration_since(self.t0).as_secs_f64();
        let logical = res.counters.get("logical_bytes").copied().unwrap_or(0);
        self.rows += res.rows;
        self.batches += res.ops;
        self.statements += res.statements;
        self.logical += logical;
        self.hist.add(&res.hist);
        self.errors.merge(&res.errors);
        for e in &res.error_samples {
            if self.error_samples.len() < ERROR_SAMPLES && !self.error_samples.contains(e) {
                self.error_samples.push(e.clone());
            }
        }
        self.workers_lost += res.workers_lost;
        self.reconnects += res.reconnects;
        self.reconnect_failures += res.reconnect_failures;
        self.w.rows += res.rows;
        self.w.batches += res.ops;
        self.w.errors += res.errors.total();
        self.w.logical += logical;
        self.w.hist.add(&res.hist);
        self.w.elapsed += res.elapsed;
        self.last_end = self.last_end.max(start + res.elapsed);
        self.intervals.extend(res.intervals.iter().map(|s| {
            let mut s = s.clone();
            s.t_s += offset_s;
            s
        }));
    }

    fn close_window(&mut self, pid: Option<u32>, shared: &Shared, partial: bool) {
        let now = HostSample::now(pid);
        // Others' CPU over the window's whole span (its phases and the gaps between them).
        let others = now.host_cpu_since(&self.window_start).others_cpus;
        let span_s = now.at.duration_since(self.window_start.at).as_secs_f64();
        let w = std::mem::take(&mut self.w);
        let elapsed_s = w.elapsed.as_secs_f64().max(1e-9);
        let queries_now = shared.queries.load(std::sync::atomic::Ordering::Relaxed);
        let queries = queries_now - self.window_queries0;
        let written = match (self.window_start.server, now.server) {
            (Some(a), Some(b)) => Some(b.write_bytes.saturating_sub(a.write_bytes)),
            _ => None,
        };
        let win = Window {
            rows_end: self.rows,
            rows: w.rows,
            batches: w.batches,
            errors: w.errors,
            t_s: self.last_end.duration_since(self.t0).as_secs_f64(),
            elapsed_s,
            rows_per_s: w.rows as f64 / elapsed_s,
            latency_us: w.hist.summary(),
            logical_bytes: w.logical,
            queries,
            queries_per_s: queries as f64 / elapsed_s,
            server_written_bytes: written,
            written_bytes_per_row: written.map(|b| b as f64 / w.rows.max(1) as f64),
            write_amplification: written.map(|b| b as f64 / w.logical.max(1) as f64),
            partial,
            others_cpus: Some(others),
            disturbed: disturbed(others, span_s),
        };
        eprintln!(
            "iibench rows {:>12}  last {} rows: {:>10.0} rows/s{}{}{}",
            win.rows_end,
            win.rows,
            win.rows_per_s,
            win.written_bytes_per_row
                .map(|b| format!("  server wrote {b:.0} B/row"))
                .unwrap_or_default(),
            if queries > 0 {
                format!("  {:.0} queries/s", win.queries_per_s)
            } else {
                String::new()
            },
            if win.disturbed {
                format!("  DISTURBED (others {others:.2} CPU)")
            } else {
                String::new()
            }
        );
        self.windows.push(win);
        self.window_queries0 = queries_now;
        self.window_start = now;
    }

    /// The point as measured so far (`fin`: the totals after the run, when it has ended;
    /// `running`: the intervals of the phase running now).
    fn point(
        &self,
        cfg: &RunSettings,
        spec: &Spec,
        shared: &Shared,
        fin: Option<&Final>,
        running: &[IntervalSample],
    ) -> Point {
        let elapsed_s = fin.map_or_else(
            || self.last_end.duration_since(self.t0).as_secs_f64(),
            |f| f.elapsed_s,
        );
        let elapsed_s = elapsed_s.max(1e-9);
        let mut intervals = self.intervals.clone();
        intervals.extend_from_slice(running);
        let del = shared
            .deletes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        // A failed DELETE is an error of the run too (its batch committed).
        let mut errors = self.errors.clone();
        errors.merge(&del.errors);
        let counted = Counted {
            run: 1,
            ops: self.batches,
            rows: self.rows,
            statements: self.statements,
            elapsed_s,
            errors: &errors,
            error_samples: &self.error_samples,
            hist: &self.hist,
            client_cpu: fin.map(|f| f.cpu).unwrap_or_default(),
            workers_lost: self.workers_lost,
            interrupted: interrupt::signal().is_some(),
        };
        let mut rec = self.span.record(counted, fin.map(|f| &f.end));
        rec.server_counters = fin.map(|f| f.counters.clone()).unwrap_or_default();
        rec.server_profile = profile::with_coverage(
            fin.and_then(|f| f.profile.clone()),
            rec.server_process.as_ref().map(|s| s.cpu_us_per_op),
        );
        rec.intervals = intervals;
        rec.percentiles_us = self.hist.percentiles_us(&cfg.extra_percentiles);
        rec.reconnects = self.reconnects;
        rec.reconnect_failures = self.reconnect_failures;
        rec.started_at_unix_s = self.started;
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
                    statements: del.statements,
                    range_rows: del.rows,
                    errors: del.errors.total(),
                    latency_us: del.hist.summary(),
                    histogram_hdr_v2: del.hist.encode(),
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
