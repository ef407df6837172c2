//! `schema-change`: a running OLTP workload (sysbench's oltp_insert by default) for T1
//! (`--before`), then `ALTER TABLE ... ADD COLUMN` issued from another connection while it
//! runs, T2 (`--after`), `DROP COLUMN`, T2 again. One timeline per algorithm the engine
//! accepts (MariaDB: INSTANT, NOCOPY, INPLACE, COPY; PostgreSQL: ADD COLUMN without default,
//! with a constant default, with a volatile default; SQLite: ADD COLUMN + DROP COLUMN), each
//! on a freshly loaded table.
//!
//! The timeline is a chain of short measured phases on the same connections (1 s, shortened
//! to end on T1/T2 boundaries); the per-interval samples of all phases form the throughput
//! series. docs/schema-change.md says what this approximates.

mod entry;
mod report;
pub mod timeline;

pub use entry::{SchemaChangeArgs, SchemaChangeEntry, ENTRY};
pub use report::Report;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::contract::Session;
use crate::contract::{Access, Counted, Harness, RunSettings, Span, Watch};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Error, Result};
use crate::interrupt;
use crate::measure::{CpuTimes, ErrorCounts, LatencyHist};
use crate::model::{Aggregate, IntervalSample, PhaseInfo, PhaseKind, Point, RunRecord};
use crate::runner;
use crate::workload::sbtest;
use timeline::Slot;

pub const NAME: &str = "schema-change";
/// The column the DDL adds and drops.
pub const COLUMN: &str = "eb_added";
const TABLE: &str = "sbtest1";
/// Longest single phase of the chain.
const PHASE: Duration = Duration::from_secs(1);

/// One way of changing the table: the ADD and the DROP statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Algorithm {
    pub name: &'static str,
    pub add: &'static str,
    pub drop: &'static str,
}

const MYSQL: [Algorithm; 4] = [
    Algorithm {
        name: "instant",
        add: "ALTER TABLE sbtest1 ADD COLUMN eb_added INT NOT NULL DEFAULT 0, ALGORITHM=INSTANT",
        drop: "ALTER TABLE sbtest1 DROP COLUMN eb_added, ALGORITHM=INSTANT",
    },
    Algorithm {
        name: "nocopy",
        add: "ALTER TABLE sbtest1 ADD COLUMN eb_added INT NOT NULL DEFAULT 0, ALGORITHM=NOCOPY",
        drop: "ALTER TABLE sbtest1 DROP COLUMN eb_added, ALGORITHM=NOCOPY",
    },
    Algorithm {
        name: "inplace",
        add: "ALTER TABLE sbtest1 ADD COLUMN eb_added INT NOT NULL DEFAULT 0, ALGORITHM=INPLACE",
        drop: "ALTER TABLE sbtest1 DROP COLUMN eb_added, ALGORITHM=INPLACE",
    },
    Algorithm {
        name: "copy",
        add: "ALTER TABLE sbtest1 ADD COLUMN eb_added INT NOT NULL DEFAULT 0, ALGORITHM=COPY",
        drop: "ALTER TABLE sbtest1 DROP COLUMN eb_added, ALGORITHM=COPY",
    },
];
const POSTGRES: [Algorithm; 3] = [
    Algorithm {
        name: "add-null",
        add: "ALTER TABLE sbtest1 ADD COLUMN eb_added INTEGER",
        drop: "ALTER TABLE sbtest1 DROP COLUMN eb_added",
    },
    Algorithm {
        name: "add-default",
        add: "ALTER TABLE sbtest1 ADD COLUMN eb_added INTEGER NOT NULL DEFAULT 0",
        drop: "ALTER TABLE sbtest1 DROP COLUMN eb_added",
    },
    Algorithm {
        name: "add-volatile-default",
        add: "ALTER TABLE sbtest1 ADD COLUMN eb_added DOUBLE PRECISION DEFAULT random()",
        drop: "ALTER TABLE sbtest1 DROP COLUMN eb_added",
    },
];
const SQLITE: [Algorithm; 1] = [Algorithm {
    name: "add-drop",
    add: "ALTER TABLE sbtest1 ADD COLUMN eb_added INTEGER NOT NULL DEFAULT 0",
    drop: "ALTER TABLE sbtest1 DROP COLUMN eb_added",
}];

pub fn algorithms(dbms: Dbms) -> &'static [Algorithm] {
    match dbms {
        Dbms::Mysql => &MYSQL,
        Dbms::Postgres => &POSTGRES,
        Dbms::Sqlite => &SQLITE,
    }
}

#[derive(Debug, Clone)]
pub struct Spec {
    /// The running workload (an OLTP kind on sbtest1).
    pub oltp: sbtest::Spec,
    pub algorithms: Vec<Algorithm>,
    pub before: Duration,
    pub after: Duration,
}

impl Spec {
    /// `only`: `--queries`, a comma-separated subset of the DBMS's algorithms.
    pub fn new(
        oltp: sbtest::Spec,
        dbms: Dbms,
        only: Option<&str>,
        before: Duration,
        after: Duration,
    ) -> Result<Spec> {
        if oltp.kind == sbtest::Kind::BulkInsert {
            return Err(Error::usage(
                "--during bulk_insert: bulk_insert creates its own tables; use oltp_insert, oltp_read_write, oltp_write_only, ...",
            ));
        }
        if oltp.tables != 1 {
            return Err(Error::usage(
                "--tables: schema-change alters sbtest1 and runs on one table only",
            ));
        }
        let all = algorithms(dbms);
        let what = format!("schema-change algorithm of {}", dbms.name());
        let algorithms = crate::contract::args::pick(all, |a| a.name, only, &what)?;
        Ok(Spec {
            oltp,
            algorithms,
            before,
            after,
        })
    }

    pub fn operations(&self) -> Vec<String> {
        self.algorithms.iter().map(|a| a.name.to_string()).collect()
    }

    pub fn options(&self) -> serde_json::Value {
        serde_json::json!({
            "during": self.oltp.kind.name(),
            "before_s": self.before.as_secs_f64(),
            "after_s": self.after.as_secs_f64(),
            "algorithms": self.algorithms.iter().map(|a| serde_json::json!({"name": a.name, "add": a.add, "drop": a.drop})).collect::<Vec<_>>(),
            "oltp": self.oltp.options_json(),
        })
    }

    pub fn notes(&self) -> Vec<String> {
        let mut n = vec![
            "schema-change: each timeline is a chain of measured phases of at most 1 s on the same connections; between two phases every connection finishes its operation in flight, so a connection that finishes early waits for the slowest one (at most one operation), and the few milliseconds between phases are in no interval.".to_string(),
            "schema-change: longest_stall_s is the longest run of intervals in which no operation finished (resolution: --report-interval); max_latency_us is the slowest operation that finished in an interval overlapping the DDL.".to_string(),
            "schema-change: lost_ops = the rate of the window before the DDL x the DDL's duration - the operations finished during it (intervals straddling its start or end counted by the share of their length inside).".to_string(),
            "schema-change: MariaDB takes ALGORITHM= as the least efficient algorithm allowed and may use a cheaper one (except COPY); each timeline starts on a freshly loaded table.".to_string(),
        ];
        n.extend(self.oltp.notes());
        n
    }
}

/// One DDL statement of a timeline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DdlEvent {
    pub statement: String,
    pub start_s: f64,
    /// When the statement returned (success or error).
    pub end_s: f64,
    pub duration_s: f64,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The workload's rate in the window before the DDL (T1, or T2 after the previous DDL).
    pub baseline_ops_per_s: f64,
    /// Its rate while the DDL ran.
    pub during_ops_per_s: f64,
    /// baseline × duration − ops finished during the DDL.
    pub lost_ops: f64,
    /// lost_ops / (baseline × duration); 0 when the DDL took no measurable time.
    pub lost_fraction: f64,
    pub max_latency_us: u64,
}

/// The result's `schema_change` section: one timeline per (algorithm, thread count). Its
/// throughput series is the `intervals` of the point with the same operation and threads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timeline {
    pub algorithm: String,
    pub threads: usize,
    pub engine: String,
    pub during: String,
    pub table_rows: u64,
    pub before_s: f64,
    pub after_s: f64,
    pub elapsed_s: f64,
    /// complete, rejected (the server refused the ADD: the algorithm is not available for
    /// this engine) or interrupted.
    pub status: String,
    pub ddl: Vec<DdlEvent>,
    pub longest_stall_s: f64,
    pub longest_stall_start_s: f64,
}

struct DdlDone {
    /// Index in the plan's statements.
    i: usize,
    start: Instant,
    end: Instant,
    result: std::result::Result<(), String>,
}

/// What the DDL connection runs: `statements[0]` at `first_at`, every next one `gap` after
/// the previous one returned; it stops after a statement fails.
struct Plan {
    first_at: Instant,
    gap: Duration,
    statements: Vec<String>,
}

/// A connection in its own thread that runs the DDL on its own clock, so that a statement
/// starts on time even while the workload's connections are blocked.
struct DdlRunner {
    tx: Option<mpsc::Sender<Plan>>,
    rx: mpsc::Receiver<DdlDone>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl DdlRunner {
    fn start(target: &TargetSpec) -> Result<DdlRunner> {
        let (tx, cmd_rx) = mpsc::channel::<Plan>();
        let (done_tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let target = target.clone();
        let handle = std::thread::Builder::new()
            .name("eb-ddl".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(async {
                    let mut conn = match Conn::connect(&target).await {
                        Ok(c) => {
                            let _ = ready_tx.send(Ok(()));
                            c
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(target.scrub(&e.message)));
                            return;
                        }
                    };
                    while let Ok(plan) = cmd_rx.recv() {
                        let mut at = plan.first_at;
                        for (i, sql) in plan.statements.iter().enumerate() {
                            // In steps, so that Ctrl-C is seen.
                            while Instant::now() < at && interrupt::signal().is_none() {
                                let step = (at - Instant::now()).min(Duration::from_millis(50));
                                tokio::time::sleep(step).await;
                            }
                            if interrupt::signal().is_some() {
                                return;
                            }
                            let start = Instant::now();
                            let r = conn.execute(sql).await;
                            let end = Instant::now();
                            let result = r.map_err(|e| target.scrub(&e.message));
                            let failed = result.is_err();
                            let done = DdlDone {
                                i,
                                start,
                                end,
                                result,
                            };
                            if done_tx.send(done).is_err() || failed {
                                break;
                            }
                            at = end + plan.gap;
                        }
                    }
                });
            })
            .map_err(|e| Error::run(format!("cannot start the DDL thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(DdlRunner {
                tx: Some(tx),
                rx,
                handle: Some(handle),
            }),
            Ok(Err(e)) => Err(Error::run(format!("the DDL connection failed: {e}"))),
            Err(_) => Err(Error::run("the DDL thread ended before connecting")),
        }
    }
}

impl Drop for DdlRunner {
    fn drop(&mut self) {
        // Closing the channel ends the thread once its plan is done.
        self.tx.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Everything measured on one timeline, before it becomes a run record.
struct Measured {
    slots: Vec<Slot>,
    intervals: Vec<IntervalSample>,
    ops: u64,
    rows: u64,
    statements: u64,
    errors: ErrorCounts,
    samples: Vec<String>,
    hist: LatencyHist,
    cpu: CpuTimes,
    lost_workers: usize,
    interrupted: bool,
    elapsed_s: f64,
}

/// Run every (algorithm, thread count) timeline; each point is saved as soon as it is done.
pub fn measure(spec: &Spec, h: &mut dyn Harness) -> Result<()> {
    let (cfg, rt) = (h.settings(), h.rt());
    let engine = h.engine().map(str::to_string);
    let opts = h.load().clone();
    let target = &cfg.target;
    let mut timelines: Vec<Timeline> = Vec::new();
    for alg in &spec.algorithms {
        for &threads in &cfg.threads {
            if interrupt::signal().is_some() {
                return Ok(());
            }
            // A fresh table for every timeline: the same size whatever ran before.
            let admin = h.conn()?;
            rt.block_on(sbtest::cleanup(&spec.oltp, admin))?;
            let loaded = rt.block_on(sbtest::prepare(
                &spec.oltp,
                admin,
                target,
                engine.as_deref(),
                &opts,
                None,
            ))?;
            h.doc().load.extend(loaded);
            let admin = h.conn()?;
            // Only for the result: a failed read leaves it empty.
            let table_engine = rt
                .block_on(crate::contract::table_engine(admin, TABLE))
                .unwrap_or_default();
            let scfg = h.session_config(threads, cfg.pacing, Access::ReadWrite);
            let o = spec.oltp.clone();
            let mut session = runner::start(target, &scfg, move |w| {
                sbtest::OltpDriver::new(&o, w, threads)
            })
            .map_err(|e| e.context(format!("{} at {threads} threads", alg.name)))?;
            let connect = session.connect_stats();
            connect.report();
            let ddl = DdlRunner::start(target)?;
            let span = h.span();
            eprintln!(
                "schema-change {}: {} for {:.0} s, then: {}",
                alg.name,
                spec.oltp.kind.name(),
                spec.before.as_secs_f64(),
                alg.add
            );
            let (m, events, status) = run_timeline(
                spec,
                alg,
                cfg,
                &mut session,
                &ddl,
                (h.watch().as_ref(), threads),
            )?;
            let end = span.sample();
            drop(ddl);
            drop(session);
            let (stall, stall_at) = timeline::longest_stall(&m.slots);
            let tl = Timeline {
                algorithm: alg.name.into(),
                threads,
                engine: table_engine,
                during: spec.oltp.kind.name().into(),
                table_rows: spec.oltp.table_size as u64,
                before_s: spec.before.as_secs_f64(),
                after_s: spec.after.as_secs_f64(),
                elapsed_s: m.elapsed_s,
                status: status.into(),
                ddl: events,
                longest_stall_s: stall,
                longest_stall_start_s: stall_at,
            };
            let rec = record(&m, &span, &end);
            let others = rec.disturbed.then_some(rec.host_cpu.others_cpus);
            eprint!("{}", render_one(&tl, others));
            let runs = vec![rec];
            let aggregate = Aggregate::of(&runs, m.hist.summary());
            let table_sizes = rt.block_on(crate::server::capture::table_sizes(h.conn()?));
            h.doc().points.push(Point {
                workload: NAME.into(),
                operation: alg.name.into(),
                threads,
                runs,
                aggregate,
                table_sizes,
                connect: Some(connect.into()),
                ..Default::default()
            });
            timelines.push(tl);
            h.doc().set_section(NAME, &timelines);
            h.save()?;
        }
    }
    Ok(())
}

/// Drive one timeline: phases of at most 1 s on the workload's connections while the DDL
/// connection runs the ADD at T1 and the DROP T2 after the ADD returned; the timeline ends
/// T2 after the DROP returned (or as soon as the ADD is refused).
fn run_timeline(
    spec: &Spec,
    alg: &Algorithm,
    cfg: &RunSettings,
    session: &mut dyn Session,
    ddl: &DdlRunner,
    (live, threads): (&dyn Watch, usize),
) -> Result<(Measured, Vec<DdlEvent>, &'static str)> {
    let interval = cfg.report_interval;
    let t0 = Instant::now();
    let secs = |t: Instant| t.duration_since(t0).as_secs_f64();
    let mut m = Measured {
        slots: Vec::new(),
        intervals: Vec::new(),
        ops: 0,
        rows: 0,
        statements: 0,
        errors: ErrorCounts::default(),
        samples: Vec::new(),
        hist: LatencyHist::new(),
        cpu: CpuTimes::default(),
        lost_workers: 0,
        interrupted: false,
        elapsed_s: 0.0,
    };
    let statements = [alg.add, alg.drop];
    if let Some(tx) = &ddl.tx {
        let _ = tx.send(Plan {
            first_at: t0 + spec.before,
            gap: spec.after,
            statements: statements.iter().map(|s| s.to_string()).collect(),
        });
    }
    let mut done: Vec<DdlDone> = Vec::new();
    let mut end_at: Option<f64> = None;
    let mut status = "complete";
    loop {
        while let Ok(d) = ddl.rx.try_recv() {
            let end_s = secs(d.end);
            if d.result.is_err() && d.i == 0 {
                // The ADD was refused: nothing to drop, and nothing more to learn.
                status = "rejected";
                end_at = Some(end_s);
            } else if d.i + 1 == statements.len() || d.result.is_err() {
                end_at = Some(end_s + spec.after.as_secs_f64());
            }
            done.push(d);
        }
        let now_s = secs(Instant::now());
        let len = match end_at {
            Some(e) if now_s >= e => break,
            Some(e) => Duration::from_secs_f64((e - now_s).max(0.05)).min(PHASE),
            None => PHASE,
        };
        let phase_start = Instant::now();
        let off = secs(phase_start);
        // The timeline is one run made of short phases; its length depends on the DDL's.
        let info = PhaseInfo {
            offset_s: off,
            ..PhaseInfo::new(PhaseKind::Run, alg.name, threads, (1, 1))
        };
        let res = live.phase(session, &info, spec, len, None, interval, &mut |_| {})?;
        let mut start_s = off;
        for s in &res.intervals {
            let end_s = off + s.t_s;
            m.slots.push(Slot {
                start_s,
                end_s,
                ops: s.ops,
                max_latency_us: if s.ops > 0 { s.latency_us.max_us } else { 0 },
            });
            m.intervals.push(IntervalSample {
                t_s: end_s,
                ..s.clone()
            });
            start_s = end_s;
        }
        m.ops += res.ops;
        m.rows += res.rows;
        m.statements += res.statements;
        m.errors.merge(&res.errors);
        m.hist.add(&res.hist);
        m.cpu.add(res.client_cpu);
        m.lost_workers += res.workers_lost;
        for e in res.error_samples {
            if m.samples.len() < 5 && !m.samples.contains(&e) {
                m.samples.push(e);
            }
        }
        m.elapsed_s = m.slots.last().map_or(0.0, |s| s.end_s);
        if res.interrupted || interrupt::signal().is_some() {
            m.interrupted = true;
            status = "interrupted";
            break;
        }
    }
    let mut events = Vec::new();
    let mut window_start = 0.0;
    for d in done {
        let (start_s, end_s) = (secs(d.start), secs(d.end));
        let baseline = timeline::rate(&m.slots, window_start, start_s);
        let dur = end_s - start_s;
        let lost = timeline::lost_ops(&m.slots, baseline, start_s, end_s);
        let expected = baseline * dur;
        events.push(DdlEvent {
            statement: statements[d.i].to_string(),
            start_s,
            end_s,
            duration_s: dur,
            ok: d.result.is_ok(),
            error: d.result.err(),
            baseline_ops_per_s: baseline,
            during_ops_per_s: timeline::rate(&m.slots, start_s, end_s),
            lost_ops: lost,
            lost_fraction: if expected > 0.0 { lost / expected } else { 0.0 },
            max_latency_us: timeline::max_latency_us(&m.slots, start_s, end_s),
        });
        window_start = end_s;
    }
    Ok((m, events, status))
}

/// The timeline's run record: the common one, from its chain of phases.
fn record(m: &Measured, span: &Span, end: &crate::contract::HostSample) -> RunRecord {
    let counted = Counted {
        run: 1,
        ops: m.ops,
        rows: m.rows,
        statements: m.statements,
        elapsed_s: m.elapsed_s,
        errors: &m.errors,
        error_samples: &m.samples,
        hist: &m.hist,
        client_cpu: m.cpu,
        workers_lost: m.lost_workers,
        interrupted: m.interrupted,
    };
    let mut rec = span.record(counted, Some(end));
    rec.intervals = m.intervals.clone();
    rec
}

/// `disturbed`: what other processes used (CPUs) when they disturbed the timeline's run.
pub(crate) fn render_one(t: &Timeline, disturbed: Option<f64>) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "{:<22} {:>3} thr  {:<8} {}  stall {:.1} s at {:.1} s{}\n",
        t.algorithm,
        t.threads,
        t.engine,
        t.status,
        t.longest_stall_s,
        t.longest_stall_start_s,
        disturbed
            .map(|c| format!("  DISTURBED (others {c:.2} CPU)"))
            .unwrap_or_default()
    );
    for d in &t.ddl {
        let what = if d.statement.contains(" ADD ") {
            "ADD COLUMN"
        } else {
            "DROP COLUMN"
        };
        let _ = writeln!(
            out,
            "    {what:<12} at {:>6.2} s  took {:>7.3} s  ops/s {:>9.0} before, {:>9.0} during  lost {:>8.0} ops ({:>5.1} %)  slowest op {:.3} s{}",
            d.start_s,
            d.duration_s,
            d.baseline_ops_per_s,
            d.during_ops_per_s,
            d.lost_ops,
            d.lost_fraction * 100.0,
            d.max_latency_us as f64 / 1e6,
            d.error.as_ref().map(|e| format!("  ERROR: {e}")).unwrap_or_default()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithms_by_name() {
        use clap::{Args, FromArgMatches};
        let m =
            sbtest::args::OltpArgs::augment_args(clap::Command::new("x")).get_matches_from(["x"]);
        let a = sbtest::args::OltpArgs::from_arg_matches(&m).unwrap();
        let o = sbtest::args::spec(sbtest::Kind::OltpInsert, &a, 1000, 1, None, None).unwrap();
        let s = Spec::new(
            o.clone(),
            Dbms::Mysql,
            Some("copy,instant"),
            Duration::ZERO,
            Duration::ZERO,
        )
        .unwrap();
        assert_eq!(s.operations(), vec!["copy", "instant"]);
        assert!(Spec::new(
            o,
            Dbms::Sqlite,
            Some("copy"),
            Duration::ZERO,
            Duration::ZERO
        )
        .is_err());
        for d in [Dbms::Mysql, Dbms::Postgres, Dbms::Sqlite] {
            for a in algorithms(d) {
                assert!(a.add.contains(COLUMN) && a.drop.contains(COLUMN) && a.add.contains(TABLE));
            }
        }
    }
}
