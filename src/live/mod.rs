//! Live output of a run, for every workload at once: the progress lines on a terminal, the
//! `--live-report` lines, `--format jsonl` on stdout and the `--metrics-addr` endpoint.
//!
//! One observer (`Live`), owned by the harness, sees everything a run does as it happens:
//! each phase's start and end (with a label and its planned length), each finished interval
//! with its latency histogram, and the loader's progress. Every measured phase goes through
//! `Live::phase`, a wrapper of `Session::phase` that the sweep calls, and the workloads with
//! run shapes of their own (iibench, schema-change) through the contract's `Watch`; the loader reports through the
//! `LoadOptions` it is given. Nothing here runs per operation: the collector hands each
//! interval over once, when every worker has left it (runner/recorder.rs). docs/live.md.

pub mod metrics;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::contract::Session;
use crate::error::{Error, Result};
use crate::measure::{CpuTimes, LatencyHist, LatencySummary};
use crate::model::{
    IntervalSample, KindTick, LoadStep, LoadTrack, LoadWatch, PhaseInfo, PhaseKind, PhasePlan,
    PhaseResult,
};

/// What the live outputs need of a run, given by the harness (live stands below the config
/// and the workloads, so it takes plain settings).
#[derive(Debug, Clone)]
pub struct Settings {
    pub workload: String,
    /// The DBMS's name for the metrics' labels.
    pub dbms: &'static str,
    pub metrics_addr: Option<String>,
    /// Progress bars on stderr when it is a terminal (the table and CSV formats).
    pub terminal: bool,
    /// One JSON line per interval on stdout.
    pub jsonl: bool,
    /// Interval lines on stderr (`--report-interval`).
    pub live_report: bool,
    pub interval: Duration,
    /// The run has load steps (`--threads N@T,...`, `--rate R@T,...`): its measured runs go
    /// through `Live::phase_plan`, and a phase of a workload's own is refused.
    pub stepped: bool,
}

/// What the live outputs ask of the workload during a phase: its operation kinds and its
/// figures of one interval (TPC-C: tpmC). The contract implements it for every workload.
pub trait Figures {
    fn phase_kinds(&self) -> Vec<&'static str>;
    fn figures(&self, kinds: &[KindTick], len_s: f64) -> Vec<(String, f64)>;
}

/// The observer: cheap to clone (one shared part).
#[derive(Clone)]
pub struct Live(Arc<Inner>);

struct Inner {
    /// `--format jsonl`: interval and progress lines on stdout.
    jsonl: bool,
    /// Progress lines on stderr (a terminal, and not `--format json|jsonl`).
    terminal: bool,
    /// `--live-report`: a line per interval of each measured run on stderr.
    live_report: bool,
    interval: Duration,
    metrics: Option<metrics::Endpoint>,
    bar: Mutex<Option<indicatif::ProgressBar>>,
    stepped: bool,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("jsonl", &self.0.jsonl)
            .field("terminal", &self.0.terminal)
            .field("metrics", &self.metrics_addr())
            .finish_non_exhaustive()
    }
}

impl Default for Live {
    /// Progress on a terminal only (`prepare`, library use).
    fn default() -> Self {
        Live::new(false, std::io::stderr().is_terminal(), false, None)
    }
}

impl Live {
    fn new(
        jsonl: bool,
        terminal: bool,
        live_report: bool,
        metrics: Option<metrics::Endpoint>,
    ) -> Self {
        Live(Arc::new(Inner {
            jsonl,
            terminal,
            live_report,
            interval: Duration::from_secs(1),
            metrics,
            bar: Mutex::new(None),
            stepped: false,
        }))
    }

    /// Nothing live at all.
    pub fn off() -> Self {
        Live::new(false, false, false, None)
    }

    /// The observer of one `run`: starts the metrics endpoint (a usage error when it cannot
    /// listen) before anything else happens, so that the load is seen too.
    pub fn for_run(set: &Settings) -> Result<Live> {
        let metrics = match &set.metrics_addr {
            Some(addr) => {
                let shared = Arc::new(metrics::Shared::default());
                {
                    let mut st = shared.state();
                    st.info = vec![
                        ("workload", set.workload.clone()),
                        ("dbms", set.dbms.to_string()),
                        ("version", env!("CARGO_PKG_VERSION").to_string()),
                    ];
                    st.current.phase = "idle";
                }
                let ep = metrics::Endpoint::start(addr, shared)?;
                eprintln!("metrics: http://{}/metrics", ep.addr);
                Some(ep)
            }
            None => None,
        };
        let terminal = set.terminal && std::io::stderr().is_terminal();
        let mut inner = Inner {
            jsonl: set.jsonl,
            terminal,
            live_report: set.live_report,
            interval: set.interval,
            metrics,
            bar: Mutex::new(None),
            stepped: set.stepped,
        };
        inner.interval = inner.interval.max(Duration::from_millis(100));
        Ok(Live(Arc::new(inner)))
    }

    /// Where the metrics endpoint listens, if it does.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.0.metrics.as_ref().map(|m| m.addr)
    }

    fn metrics(&self) -> Option<std::sync::MutexGuard<'_, metrics::State>> {
        self.0.metrics.as_ref().map(|m| m.shared.state())
    }

    /// One phase of `session` (`Session::phase`'s arguments), seen by every live output.
    /// `on_interval` is the caller's own per-interval work.
    #[allow(clippy::too_many_arguments)]
    pub fn phase(
        &self,
        session: &mut dyn Session,
        info: &PhaseInfo,
        w: &(impl Figures + ?Sized),
        duration: Duration,
        events: Option<u64>,
        interval: Duration,
        on_interval: impl FnMut(&IntervalSample),
    ) -> Result<PhaseResult> {
        if self.0.stepped {
            return Err(Error::usage(format!(
                "load steps (--threads N@T,... / --rate R@T,...) run in the sweep's measured runs; {} is a phase of the workload's own: give one --threads / --rate",
                info.operation
            )));
        }
        let plan = PhasePlan::simple(duration, events, interval);
        self.phase_plan(session, info, w, &plan, on_interval)
    }

    /// One phase of `session` run to `plan` (its load steps are labelled in every output).
    pub fn phase_plan(
        &self,
        session: &mut dyn Session,
        info: &PhaseInfo,
        w: &(impl Figures + ?Sized),
        plan: &PhasePlan,
        mut on_interval: impl FnMut(&IntervalSample),
    ) -> Result<PhaseResult> {
        self.phase_start(info);
        let kinds = w.phase_kinds();
        let res = session.phase_plan(plan, &mut |s, hist| {
            self.interval(info, s, hist, w, (&kinds[..], &plan.steps[..]));
            on_interval(s);
        });
        self.phase_end(info);
        res
    }

    fn phase_start(&self, info: &PhaseInfo) {
        if !info.shown {
            return;
        }
        if let Some(mut m) = self.metrics() {
            m.current = metrics::Current {
                phase: info.kind.name(),
                operation: info.operation.clone(),
                threads: info.threads,
                run: info.run,
                step: 0,
            };
            m.touch();
        }
        if self.0.terminal {
            let what = match info.kind {
                PhaseKind::Warmup => "warm-up".to_string(),
                PhaseKind::Run => format!("run {}/{}", info.run, info.runs),
            };
            let prefix = format!("{what} {} {} thds", info.operation, info.threads);
            let bar = match info.planned {
                Some(d) => {
                    let b = indicatif::ProgressBar::new(d.as_millis().max(1) as u64);
                    b.set_style(
                        indicatif::ProgressStyle::with_template("{prefix} [{wide_bar}] {msg}")
                            .expect("valid template")
                            .progress_chars("=> "),
                    );
                    b
                }
                None => {
                    let b = indicatif::ProgressBar::new_spinner();
                    b.set_style(
                        indicatif::ProgressStyle::with_template("{prefix} {msg}")
                            .expect("valid template"),
                    );
                    b
                }
            };
            b_init(&bar, prefix, info);
            *self.bar() = Some(bar);
        }
    }

    fn bar(&self) -> std::sync::MutexGuard<'_, Option<indicatif::ProgressBar>> {
        self.0.bar.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn phase_end(&self, info: &PhaseInfo) {
        if !info.shown {
            return;
        }
        if let Some(b) = self.bar().take() {
            b.finish_and_clear();
        }
        if let Some(mut m) = self.metrics() {
            m.current.phase = "idle";
            m.client_cpu_s = CpuTimes::now().total_s();
            m.touch();
        }
    }

    fn interval(
        &self,
        info: &PhaseInfo,
        s: &IntervalSample,
        hist: &LatencyHist,
        w: &(impl Figures + ?Sized),
        (kinds, steps): (&[&'static str], &[LoadStep]),
    ) {
        let t_s = info.offset_s + s.t_s;
        let step = s.step.unwrap_or(0);
        if let Some(mut m) = self.metrics() {
            m.interval(
                (&info.operation, info.threads, info.kind.name(), step),
                s.ops,
                &s.error_classes,
                hist,
            );
            if let (true, Some(st)) = (info.shown, steps.get((step as usize).wrapping_sub(1))) {
                m.current.step = step;
                m.current.threads = st.threads;
            }
            m.client_cpu_s = CpuTimes::now().total_s();
        }
        if self.0.jsonl {
            let mut by_kind = BTreeMap::new();
            let mut figures = BTreeMap::new();
            if kinds.len() > 1 {
                for (k, name) in kinds.iter().enumerate() {
                    by_kind.insert(*name, s.kind_ticks.get(k).copied().unwrap_or_default());
                }
                if s.len_s > 0.0 {
                    figures.extend(w.figures(&s.kind_ticks, s.len_s));
                }
            }
            line(&IntervalLine {
                kind: "interval",
                operation: &info.operation,
                threads: info.threads,
                run: info.run,
                phase: info.kind.name(),
                step: s.step,
                t_s,
                len_s: s.len_s,
                ops: s.ops,
                errors: s.errors,
                errors_by_class: s.error_classes.to_map(),
                ops_per_s: s.ops_per_s,
                latency_us: &s.latency_us,
                by_kind,
                figures,
            });
        }
        let report = (self.0.live_report && info.kind == PhaseKind::Run).then(|| {
            format!(
                "[ {:>6.1}s ] {} thds: {} run {}{}  ops/s: {:.1}  p95: {} us  err/s: {:.1}",
                t_s,
                info.operation,
                info.threads,
                info.run,
                s.step.map(|k| format!(" step {k}")).unwrap_or_default(),
                s.ops_per_s,
                s.latency_us.p95_us,
                s.errors as f64 / s.len_s.max(1e-9)
            )
        });
        let bar = self.bar();
        match (bar.as_ref(), report) {
            (Some(b), report) if info.shown => {
                if let Some(r) = report {
                    b.println(r);
                }
                b.set_position((t_s * 1000.0) as u64);
                // A phase's last interval may last a few ms: its rate says little.
                if s.len_s >= self.0.interval.as_secs_f64() / 2.0 {
                    b.set_message(phase_message(info, t_s, s));
                }
            }
            (_, Some(r)) => eprintln!("{r}"),
            _ => {}
        }
    }

    /// Add one measured run's server counter deltas to the endpoint (read between runs).
    pub fn server_counters(&self, delta: &BTreeMap<String, f64>) {
        if let Some(mut m) = self.metrics() {
            m.server_counters(delta);
        }
    }

    /// The run is over: a `result` line for jsonl, and the endpoint stays up until a scraper
    /// has read the final numbers (`metrics::Endpoint::linger`).
    pub fn finish(&self, status: &str, path: &std::path::Path, exit_code: u8) {
        if self.0.jsonl {
            line(&ResultLine {
                kind: "result",
                status,
                path: &path.display().to_string(),
                exit_code,
            });
        }
        if let Some(ep) = &self.0.metrics {
            {
                let mut m = ep.shared.state();
                m.current.phase = "done";
                m.client_cpu_s = CpuTimes::now().total_s();
                m.touch();
            }
            let waited = ep.linger();
            if waited > Duration::from_millis(500) {
                eprintln!(
                    "metrics: served the final numbers after {:.1} s",
                    waited.as_secs_f64()
                );
            }
        }
    }
}

fn b_init(bar: &indicatif::ProgressBar, prefix: String, info: &PhaseInfo) {
    bar.set_prefix(prefix);
    bar.set_position((info.offset_s * 1000.0) as u64);
    bar.set_message(match info.planned {
        Some(d) => format!("{:.0}/{:.0} s", info.offset_s, d.as_secs_f64()),
        None => format!("{:.0} s", info.offset_s),
    });
}

/// The progress line's text: elapsed of planned, the last interval's rate, errors.
fn phase_message(info: &PhaseInfo, t_s: f64, s: &IntervalSample) -> String {
    let time = match info.planned {
        Some(d) => format!("{t_s:.0}/{:.0} s", d.as_secs_f64()),
        None => format!("{t_s:.0} s"),
    };
    format!("{time}  {:.0} ops/s  errors {}", s.ops_per_s, s.errors)
}

/// Print one JSON line on stdout (line-buffered: each line is whole when it appears).
fn line<T: Serialize>(v: &T) {
    use std::io::Write;
    let text = serde_json::to_string(v).expect("live lines serialize");
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// `--format jsonl`: one finished interval (schema/live-line-v1.schema.json).
#[derive(Serialize)]
struct IntervalLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    operation: &'a str,
    threads: usize,
    run: u32,
    phase: &'static str,
    /// The load step (from 1) of a run with steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    step: Option<u32>,
    t_s: f64,
    len_s: f64,
    ops: u64,
    errors: u64,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    errors_by_class: BTreeMap<&'static str, u64>,
    ops_per_s: f64,
    latency_us: &'a LatencySummary,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    by_kind: BTreeMap<&'static str, KindTick>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    figures: BTreeMap<String, f64>,
}

/// `--format jsonl`: a table's load, once per report interval and when it ends.
#[derive(Serialize)]
struct ProgressLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    phase: &'static str,
    table: &'a str,
    rows: u64,
    total_rows: u64,
    elapsed_s: f64,
    rows_per_s: f64,
    done: bool,
}

/// `--format jsonl`: the last line; the result itself is in the result file.
#[derive(Serialize)]
struct ResultLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    status: &'a str,
    path: &'a str,
    exit_code: u8,
}

impl LoadWatch for Live {
    /// The progress of loading `rows` rows into `table` over `connections` connections;
    /// `bar`: draw it on a terminal (a workload may follow only its big table).
    fn load(&self, table: &str, rows: u64, connections: usize, bar: bool) -> Box<dyn LoadTrack> {
        if let Some(mut m) = self.metrics() {
            m.current = metrics::Current {
                phase: "load",
                operation: table.to_string(),
                threads: connections,
                run: 0,
                step: 0,
            };
            m.load(table, 0, rows);
        }
        let bar = (bar && self.0.terminal).then(|| {
            let b = indicatif::ProgressBar::new(rows);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{prefix} [{wide_bar}] {human_pos}/{human_len} rows  {msg}  ETA {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b.set_prefix(format!("loading {table}"));
            b
        });
        Box::new(LoadProgress {
            live: self.clone(),
            table: table.to_string(),
            rows,
            start: Instant::now(),
            last_line: Instant::now(),
            bar,
        })
    }
}

/// One table's load as the live outputs see it; the loader calls `update` on its progress
/// tick (every 100 ms) and `finish` at the end.
pub struct LoadProgress {
    live: Live,
    table: String,
    rows: u64,
    start: Instant,
    last_line: Instant,
    bar: Option<indicatif::ProgressBar>,
}

impl LoadTrack for LoadProgress {
    fn update(&mut self, done: u64) {
        self.show(done, false);
    }

    fn finish(mut self: Box<Self>, done: u64) {
        self.show(done, true);
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl LoadProgress {
    fn show(&mut self, done: u64, end: bool) {
        let elapsed_s = self.start.elapsed().as_secs_f64();
        let rate = done as f64 / elapsed_s.max(1e-9);
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_message(format!("{:.0} rows/s", rate));
        }
        if let Some(mut m) = self.live.metrics() {
            m.load(&self.table, done, self.rows);
            if end {
                m.current.phase = "idle";
            }
        }
        if self.live.0.jsonl && (end || self.last_line.elapsed() >= self.live.0.interval) {
            self.last_line = Instant::now();
            line(&ProgressLine {
                kind: "progress",
                phase: "load",
                table: &self.table,
                rows: done,
                total_rows: self.rows,
                elapsed_s,
                rows_per_s: rate,
                done: end,
            });
        }
    }
}
