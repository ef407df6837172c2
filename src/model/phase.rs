//! What a session of workers is asked for and answers with: how operations start (`Pacing`),
//! what to do when the server misbehaves (`Faults`, `ConnectMode`), the plan of one phase
//! (`PhasePlan`, its `LoadStep`s), and what a phase measured (`PhaseResult` and its parts).
//! The runner fills them; the config, the contract, the harness, the live outputs and the
//! workloads with phases of their own read them, so they live here, below all of them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use super::{ConnectRecord, IntervalSample};
use crate::measure::{CpuTimes, ErrorCounts, LatencyHist};

/// How intended starts are spread in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process): independent users, the usual model of load.
    Poisson,
    /// Equal gaps.
    Uniform,
}

impl Arrivals {
    pub fn name(self) -> &'static str {
        match self {
            Arrivals::Poisson => "poisson",
            Arrivals::Uniform => "uniform",
        }
    }
}

/// When operations start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum Pacing {
    /// Each worker starts its next operation as soon as the previous one ends.
    ClosedLoop,
    /// Operations start on a schedule: `ops_per_s` in total over all workers of the session.
    FixedRate { ops_per_s: f64, arrivals: Arrivals },
}

/// `--connect-timeout` when not given.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How workers deal with a server that stops answering, goes away, or cannot take their
/// connections yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Faults {
    /// Longest wait for one operation; it then counts as a `query_timeout` error and the
    /// connection (whose protocol state is unknown) is dropped.
    pub query_timeout: Option<Duration>,
    /// Re-open a lost connection (back-off from 10 ms doubling to 1 s) instead of ending the
    /// worker.
    pub reconnect: bool,
    /// How long a session keeps retrying connections the server refuses for now (listen
    /// queue full, no free connection slot) before it gives up (`--connect-timeout`).
    pub connect_timeout: Duration,
    /// One connection per worker, or a new one per operation (`--connect`).
    pub connect: ConnectMode,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            query_timeout: None,
            reconnect: false,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            connect: ConnectMode::PerRun,
        }
    }
}

/// How workers use connections (`--connect`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectMode {
    /// One connection per worker for the whole session (opened before the phases).
    #[default]
    PerRun,
    /// A new connection for each operation (pgbench -C, sysbench's reconnect mode): connect,
    /// the driver's setup (its prepares and settings), the operation, then a goodbye the
    /// server sees (`Conn::close`). The set-up counts in the operation's latency and is
    /// measured on its own too (`PhaseResult::per_transaction`).
    PerTransaction,
}

impl ConnectMode {
    pub fn name(self) -> &'static str {
        match self {
            ConnectMode::PerRun => "per-run",
            ConnectMode::PerTransaction => "per-transaction",
        }
    }

    pub fn is_per_run(&self) -> bool {
        *self == ConnectMode::PerRun
    }
}

/// How a session's connections were opened (for the result: `Point::connect`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ConnectStats {
    pub connections: usize,
    /// Connect attempts refused for now (listen queue full, no free slot) and retried.
    pub retries: u64,
    /// From the first connect to the last connection ready (setup included).
    pub elapsed: Duration,
}

/// The result's record of how a point's connections were opened.
impl From<ConnectStats> for ConnectRecord {
    fn from(c: ConnectStats) -> Self {
        ConnectRecord {
            connections: c.connections,
            retries: c.retries,
            elapsed_s: c.elapsed.as_secs_f64(),
        }
    }
}

impl ConnectStats {
    /// Say how long opening the connections took when it is worth knowing (many connections,
    /// or refused attempts retried).
    pub fn report(&self) {
        if self.retries > 0 || self.connections >= 256 || self.elapsed.as_secs_f64() >= 1.0 {
            eprintln!(
                "opened {} connection(s) in {:.2} s ({} refused attempt(s) retried)",
                self.connections,
                self.elapsed.as_secs_f64(),
                self.retries
            );
        }
    }
}

/// One step of a load profile (`--threads 4@2m,16@2m`, `--rate 1000@60s,2000@60s`:
/// runner/steps.rs parses them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LoadStep {
    pub duration_s: f64,
    /// Connections doing work in this step.
    pub threads: usize,
    /// Open loop: the total rate during this step (operations per second over all
    /// connections); None in a closed loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ops_per_s: Option<f64>,
}

impl LoadStep {
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_s)
    }

    /// "16 threads", "2000 ops/s", "16 threads, 2000 ops/s": how the outputs name it.
    pub fn label(&self, stepped_threads: bool) -> String {
        match (stepped_threads, self.rate_ops_per_s) {
            (true, Some(r)) => format!("{} threads, {r} ops/s", self.threads),
            (false, Some(r)) => format!("{r} ops/s"),
            (_, None) => format!("{} threads", self.threads),
        }
    }
}

/// What one phase runs: its length, its stop conditions, its interval, and how the load
/// changes over it (how the runner runs its steps: runner/steps.rs).
#[derive(Debug, Clone)]
pub struct PhasePlan {
    pub duration: Duration,
    /// `--events N`: operations over all connections, at most.
    pub events: Option<u64>,
    pub interval: Duration,
    /// The load's steps (empty: the session's threads and pacing for the whole phase).
    pub steps: Vec<LoadStep>,
    /// Open loop: the rate rises linearly from 0 over this long from the phase's start, then
    /// holds (a warm-up's ramp); ignored in a closed loop.
    pub ramp: Option<Duration>,
}

impl PhasePlan {
    /// One load for the whole phase.
    pub fn simple(duration: Duration, events: Option<u64>, interval: Duration) -> Self {
        PhasePlan {
            duration,
            events,
            interval,
            steps: Vec::new(),
            ramp: None,
        }
    }

    /// Seconds from the phase's start to the start of each step.
    pub fn step_starts(&self) -> Vec<f64> {
        let mut t = 0.0;
        self.steps
            .iter()
            .map(|s| {
                let start = t;
                t += s.duration_s;
                start
            })
            .collect()
    }

    /// The step at `offset_s` seconds from the phase's start (the last one after the end).
    pub fn step_at(&self, offset_s: f64) -> usize {
        let mut end = 0.0;
        for (i, s) in self.steps.iter().enumerate() {
            end += s.duration_s;
            if offset_s < end {
                return i;
            }
        }
        self.steps.len().saturating_sub(1)
    }

    /// Closed loop: whether connection `w` works at `offset_s`; if not, when it next does
    /// (seconds from the phase's start), None when it does not any more.
    pub fn next_active(&self, w: usize, offset_s: f64) -> Option<f64> {
        if self.steps.is_empty() {
            return Some(offset_s);
        }
        let starts = self.step_starts();
        let first = self.step_at(offset_s);
        (first..self.steps.len())
            .find(|&i| w < self.steps[i].threads)
            .map(|i| if i == first { offset_s } else { starts[i] })
    }

    /// Open loop: connection `w`'s expected operations per second over the phase, as pieces
    /// (length s, rate at the start, rate at the end) with the last one lasting for ever;
    /// `rate` and `workers` are the session's when the steps do not set them.
    pub fn worker_rates(&self, w: usize, workers: usize, rate: f64) -> Vec<(f64, f64, f64)> {
        let share = |total: f64, n: usize| if w < n { total / n.max(1) as f64 } else { 0.0 };
        let mut out = Vec::new();
        let first = self.steps.first().map_or(share(rate, workers), |s| {
            share(s.rate_ops_per_s.unwrap_or(rate), s.threads)
        });
        if let Some(r) = self.ramp.filter(|r| !r.is_zero()) {
            out.push((r.as_secs_f64(), 0.0, first));
        }
        for s in &self.steps {
            let v = share(s.rate_ops_per_s.unwrap_or(rate), s.threads);
            out.push((s.duration_s, v, v));
        }
        let last = out.last().map_or(first, |p| p.2);
        out.push((f64::INFINITY, last, last));
        out
    }
}

/// What the schedule of one phase looked like (open loop only); adds across workers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScheduleStats {
    /// Intended starts before the deadline (started + backlog).
    pub intended: u64,
    /// Intended starts before the deadline that had not started when the phase ended.
    pub backlog: u64,
    /// Operations that started later than their intended start by more than the runner's
    /// `pacing::LATE`.
    pub late: u64,
    /// The largest delay of an actual start behind its intended start.
    pub max_lag: Duration,
}

impl ScheduleStats {
    pub fn merge(&mut self, o: &ScheduleStats) {
        self.intended += o.intended;
        self.backlog += o.backlog;
        self.late += o.late;
        self.max_lag = self.max_lag.max(o.max_lag);
    }
}

/// Per operation kind (TPC-C's transaction types): counts and latencies of one worker or of
/// all, merged with `add` like the totals.
#[derive(Debug, Clone)]
pub struct KindStats {
    pub ops: u64,
    pub rolled_back: u64,
    pub errors: u64,
    pub hist: LatencyHist,
}

impl KindStats {
    /// Nothing counted yet.
    pub fn new() -> Self {
        KindStats {
            ops: 0,
            rolled_back: 0,
            errors: 0,
            hist: LatencyHist::new(),
        }
    }
    pub fn add(&mut self, o: &KindStats) {
        self.ops += o.ops;
        self.rolled_back += o.rolled_back;
        self.errors += o.errors;
        self.hist.add(&o.hist);
    }
}

impl Default for KindStats {
    fn default() -> Self {
        KindStats::new()
    }
}

/// One node of a multi-host target over a phase: what its connections did.
#[derive(Debug, Clone)]
pub struct NodeStats {
    /// `host:port` as the URL gave it.
    pub label: String,
    pub connections: usize,
    pub ops: u64,
    pub errors: ErrorCounts,
    pub hist: LatencyHist,
    /// Connections to this node lost for good in the phase.
    pub workers_lost: usize,
    /// Connections re-established (`--reconnect`).
    pub reconnects: u64,
}

/// One load step of a phase over all workers.
#[derive(Debug, Clone)]
pub struct StepStats {
    pub step: LoadStep,
    /// Seconds from the phase's start to the step's start.
    pub start_s: f64,
    pub ops: u64,
    pub errors: u64,
    /// Service time of the step's operations.
    pub hist: LatencyHist,
    /// Open loop: response time, and the schedule's starts due and never started.
    pub response: Option<LatencyHist>,
    pub intended: u64,
    pub backlog: u64,
}

/// `--connect per-transaction` over a phase: connections opened and each one's set-up time
/// (connect and the driver's setup; inside each operation's latency too).
#[derive(Debug, Clone)]
pub struct TxConnect {
    pub opened: u64,
    pub setup: LatencyHist,
}

/// What one phase measured.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub ops: u64,
    pub rows: u64,
    pub statements: u64,
    pub errors: ErrorCounts,
    /// Service time: from the actual start of each operation to its end.
    pub hist: LatencyHist,
    /// Open loop only: response time, from the intended start of each operation to its end
    /// (service time plus the time it waited behind schedule), and how the schedule went.
    pub open_loop: Option<(LatencyHist, ScheduleStats)>,
    /// From the phase start to the end of the last operation (every op started before the
    /// deadline is finished and counted, so server-side counts match exactly).
    pub elapsed: Duration,
    pub client_cpu: CpuTimes,
    pub intervals: Vec<IntervalSample>,
    pub workers_lost: usize,
    pub error_samples: Vec<String>,
    pub interrupted: bool,
    /// Per operation kind, indexed like `Workload::kinds()` (may be shorter).
    pub by_kind: Vec<KindStats>,
    /// Growth of the workload's own counters during the phase, summed over workers.
    pub counters: BTreeMap<String, u64>,
    /// Connections re-established during the phase (`--reconnect`), and failed attempts.
    pub reconnects: u64,
    pub reconnect_failures: u64,
    /// Set when every connection was lost in this phase (the run cannot go on): why. What the
    /// phase measured until then is still here, so that it can be kept.
    pub lost_all: Option<String>,
    /// Per node of a multi-host target, in the URL's order (empty for one node).
    pub by_node: Vec<NodeStats>,
    /// Per load step (empty without steps).
    pub by_step: Vec<StepStats>,
    /// `--connect per-transaction` only: connections opened and their set-up times.
    pub per_transaction: Option<TxConnect>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_say_where_each_connection_works() {
        let p = PhasePlan {
            steps: vec![
                LoadStep {
                    duration_s: 2.0,
                    threads: 1,
                    rate_ops_per_s: None,
                },
                LoadStep {
                    duration_s: 3.0,
                    threads: 4,
                    rate_ops_per_s: None,
                },
            ],
            ..PhasePlan::simple(Duration::from_secs(5), None, Duration::from_secs(1))
        };
        assert_eq!(p.step_at(1.9), 0);
        assert_eq!(p.step_at(2.0), 1);
        assert_eq!(p.step_at(9.0), 1);
        assert_eq!(p.next_active(0, 0.5), Some(0.5));
        assert_eq!(p.next_active(2, 0.5), Some(2.0));
        assert_eq!(p.next_active(5, 0.5), None);
        let rates = PhasePlan {
            steps: vec![
                LoadStep {
                    duration_s: 2.0,
                    threads: 2,
                    rate_ops_per_s: Some(100.0),
                },
                LoadStep {
                    duration_s: 2.0,
                    threads: 4,
                    rate_ops_per_s: Some(400.0),
                },
            ],
            ramp: Some(Duration::from_secs(1)),
            ..p
        };
        let r = rates.worker_rates(3, 4, 0.0);
        assert_eq!(r[0], (1.0, 0.0, 0.0));
        assert_eq!(r[1], (2.0, 0.0, 0.0));
        assert_eq!(r[2], (2.0, 100.0, 100.0));
        assert_eq!(r[3].1, 100.0);
        let r0 = rates.worker_rates(0, 4, 0.0);
        assert_eq!(r0[0], (1.0, 0.0, 50.0));
    }
}
