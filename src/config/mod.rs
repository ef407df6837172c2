//! The resolved, validated run configuration. Stage one (here) checks what the user typed
//! without any I/O; stage two (commands) connects and builds what the runner needs.

use std::time::Duration;

use serde::Serialize;

use crate::cli::{FleetArgs, Method, RunArgs, TargetArgs};
use crate::db::{Dbms, TargetSpec, DEFAULT_TARGET};
use crate::error::{Error, Result};
use crate::model::{
    Arrivals, ConnectMode, Faults, Given, LoadStep, Pacing, Purpose, ResolveCx, Shape, Shard,
    INDEX_ENV,
};
use crate::report::terminal::Pick;
use crate::runner::steps;
use crate::units;

/// Values a method preset fills in when the flag is not given.
struct Preset {
    threads: &'static [usize],
    warmup: Duration,
    duration: Duration,
    runs: u32,
    aggregate: Pick,
}

fn preset(m: Method) -> Preset {
    match m {
        Method::Quick => Preset {
            threads: &[1, 4, 16],
            warmup: Duration::from_secs(1),
            duration: Duration::from_secs(1),
            runs: 2,
            aggregate: Pick::Max,
        },
        // The 2007 read report: 1..256 threads, 180 s warm-up, 3 x 60 s, max kept (its
        // 1,000,000 rows are micro-read's: workload::args::method_rows).
        Method::Classic => Preset {
            threads: &[1, 4, 16, 64, 128, 256],
            warmup: Duration::from_secs(180),
            duration: Duration::from_secs(60),
            runs: 3,
            aggregate: Pick::Max,
        },
    }
}

#[derive(Clone, Serialize)]
pub struct RunConfig {
    pub workload: String,
    /// The target URL, password redacted.
    pub target: String,
    #[serde(skip)]
    pub target_spec: TargetSpec,
    pub engine: Option<String>,
    pub method: Method,
    pub table_size: u64,
    pub seed: u64,
    pub threads: Vec<usize>,
    pub warmup_s: f64,
    pub duration_s: f64,
    pub runs: u32,
    pub aggregate: Pick,
    /// The operations measured, in order (micro-read: its queries).
    pub operations: Vec<String>,
    /// Options specific to the workload.
    pub workload_options: serde_json::Value,
    pub report_interval_s: f64,
    /// Whether interval lines are printed while running.
    pub live_report: bool,
    pub client_threads: usize,
    pub sched_batch: bool,
    /// Closed loop, or a fixed total rate (open loop).
    pub pacing: Pacing,
    /// `--connect`: one connection per thread for the run, or a new one per operation.
    #[serde(skip_serializing_if = "ConnectMode::is_per_run")]
    pub connect: ConnectMode,
    /// Load steps of every measured run (`--threads N@T,...`, `--rate R@T,...`); empty: one
    /// load for the whole run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<LoadStep>,
    /// The steps set the thread count (else each point's thread count works in every step).
    #[serde(skip)]
    pub step_threads: bool,
    pub load_connections: usize,
    pub load_method: crate::model::LoadMethod,
    /// `--statements`: how the workload's statements travel (absent: prepared, as in every
    /// result made before the option).
    #[serde(skip_serializing_if = "crate::db::StatementMode::is_prepared")]
    pub statements: crate::db::StatementMode,
    /// `--table-options` of every benchmark table (empty: none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub table_options: String,
    pub results_dir: String,
    /// The private server started for this run (`--server`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::server::ServerSpec>,
    /// Pid of an existing server to sample (`--server-pid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_pid: Option<u32>,
    /// `--profile-server[=HZ]`: the server is sampled with perf at HZ during measured runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile_hz: Option<u32>,
    /// CPU pinning (`--pin`); absent when not pinned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<Pin>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_label: Option<String>,
    /// `--events N` (sysbench): each measured run ends after N operations over all
    /// connections, or at `duration_s`, whichever comes first (`duration_s` 0: no time limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// `--percentile P` (sysbench): percentiles reported besides the fixed set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_percentiles: Vec<f64>,
    /// `--query-timeout`: longest wait for one operation before it counts as `query_timeout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_timeout_s: Option<f64>,
    /// `--reconnect`: lost connections are re-opened with back-off and the run goes on.
    pub reconnect: bool,
    /// `--connect-timeout`: how long refused connects are retried while a session opens.
    pub connect_timeout_s: f64,
    /// `--disturbed-above`: other processes' CPUs over which a measurement is `disturbed`.
    pub disturbed_above_cpus: f64,
    /// `--metrics-addr`: where the live metrics endpoint listens (HOST:PORT).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics_addr: Option<String>,
    /// `--shard`, `--run-id`, `--start-at`, `--fleet-timeout`: this run is one shard of a fleet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<crate::fleet::Fleet>,
}

impl std::fmt::Debug for RunConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunConfig")
            .field("workload", &self.workload)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// `--pin client=CPUS,server=CPUS`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Pin {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cpus: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<Vec<usize>>,
}

impl Pin {
    /// Parse `client=0,server=1-3` (a CPU list may hold commas: `client=0,2,server=1`).
    pub fn parse(s: &str) -> Result<Pin> {
        let mut pin = Pin::default();
        let mut cur: Option<(&str, String)> = None;
        let mut done: Vec<(&str, String)> = Vec::new();
        for tok in s.split(',') {
            if let Some((k, v)) = tok.split_once('=') {
                if let Some(c) = cur.take() {
                    done.push(c);
                }
                let k = match k.trim() {
                    "client" => "client",
                    "server" => "server",
                    other => {
                        return Err(Error::usage(format!(
                            "--pin: unknown part '{other}' (use client=CPUS,server=CPUS)"
                        )))
                    }
                };
                cur = Some((k, v.to_string()));
            } else if let Some((_, v)) = cur.as_mut() {
                v.push(',');
                v.push_str(tok);
            } else {
                return Err(Error::usage(format!(
                    "--pin: '{s}' is not client=CPUS,server=CPUS"
                )));
            }
        }
        done.extend(cur);
        for (k, v) in done {
            let cpus = crate::measure::proc::parse_cpu_list(&v)
                .map_err(|e| Error::usage(format!("--pin {k}: {e}")))?;
            let n = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            if let Some(c) = cpus.iter().find(|&&c| c >= n) {
                return Err(Error::usage(format!(
                    "--pin {k}: CPU {c} does not exist (this machine has CPUs 0-{})",
                    n - 1
                )));
            }
            match k {
                "client" => pin.client_cpus = Some(cpus),
                _ => pin.server_cpus = Some(cpus),
            }
        }
        Ok(pin)
    }
}

impl RunConfig {
    pub fn warmup(&self) -> Duration {
        Duration::from_secs_f64(self.warmup_s)
    }
    /// A measured run's time limit; `--time 0` with `--events` means none (a century).
    pub fn duration(&self) -> Duration {
        if self.duration_s == 0.0 {
            Duration::from_secs(100 * 365 * 86_400)
        } else {
            Duration::from_secs_f64(self.duration_s)
        }
    }
    /// Query timeout and re-connection for the runner.
    pub fn faults(&self) -> Faults {
        Faults {
            query_timeout: self.query_timeout_s.map(Duration::from_secs_f64),
            reconnect: self.reconnect,
            connect_timeout: Duration::from_secs_f64(self.connect_timeout_s),
            connect: self.connect,
        }
    }
    /// The fleet-wide number of this process's first connection at `threads` connections
    /// per shard (`SessionConfig::first_worker`).
    pub fn first_worker(&self, threads: usize) -> usize {
        self.fleet
            .as_ref()
            .map_or(0, |f| f.shard.index as usize * threads)
    }
    pub fn report_interval(&self) -> Duration {
        Duration::from_secs_f64(self.report_interval_s)
    }
}

fn flag<T>(name: &str, r: std::result::Result<T, String>) -> Result<T> {
    r.map_err(|e| Error::usage(format!("{name}: {e}")))
}

/// Parse the target (default: embedded SQLite) and check `--engine` applies to it.
pub fn resolve_target(t: &TargetArgs) -> Result<TargetSpec> {
    let raw = t.target.as_deref().unwrap_or(DEFAULT_TARGET);
    let spec = TargetSpec::parse(raw, |d| {
        let var = if d == Dbms::Postgres {
            "PGPASSWORD"
        } else {
            "MYSQL_PWD"
        };
        std::env::var(var).ok()
    })
    .map_err(|e| Error::usage(format!("--target: {e}")))?;
    let mut spec = spec;
    spec.statements = t.statements;
    spec.statements.check(spec.dbms).map_err(Error::usage)?;
    if t.engine.is_some() && spec.dbms != Dbms::Mysql {
        return Err(Error::usage(format!(
            "--engine applies to MySQL/MariaDB targets only; {} has no storage-engine choice",
            spec.dbms.name()
        )));
    }
    if let Some(e) = &t.engine {
        if e.is_empty() || !e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(Error::usage(format!(
                "--engine: '{e}' is not an engine name (letters, digits, _)"
            )));
        }
    }
    Ok(spec)
}

/// Steps of `--rate R@T,...` or `--threads N@T,...`, if the flag has them.
type Steps<T> = Option<Vec<(T, Duration)>>;

/// `--rate` / `--arrivals` as a pacing mode (a shard of a fleet of N runs 1/N of the rate),
/// and the rate's steps (`--rate 1000@60s,2000@60s`: the first rate is the pacing's).
fn pacing(a: &RunArgs, shard: Option<Shard>) -> Result<(Pacing, Steps<f64>)> {
    let Some(raw) = a.rate.as_deref() else {
        return Ok((Pacing::ClosedLoop, None));
    };
    let share = shard.map_or(1.0, |s| s.count as f64);
    let stepped = steps::parse(raw, units::rate, units::duration)
        .transpose()
        .map_err(|e| Error::usage(format!("--rate: {e}")))?
        .map(|v| {
            v.into_iter()
                .map(|(r, d)| (r / share, d))
                .collect::<Vec<_>>()
        });
    let ops_per_s = match &stepped {
        Some(v) => v[0].0,
        None => flag("--rate", units::rate(raw))? / share,
    };
    let pacing = Pacing::FixedRate {
        ops_per_s,
        arrivals: a.arrivals.unwrap_or(Arrivals::Poisson),
    };
    Ok((pacing, stepped))
}

/// `--threads`: a sweep of thread counts, or steps within each run (`4@2m,16@2m`).
fn threads(a: &RunArgs, preset: &[usize]) -> Result<(Vec<usize>, Steps<usize>)> {
    let Some(raw) = a.threads.as_deref() else {
        return Ok((preset.to_vec(), None));
    };
    let one = |v: &str| units::thread_list(v).map(|l| l[0]);
    match steps::parse(raw, one, units::duration) {
        Some(r) => {
            let st = flag("--threads", r)?;
            let max = st.iter().map(|s| s.0).max().unwrap_or(1);
            Ok((vec![max], Some(st)))
        }
        None => Ok((flag("--threads", units::thread_list(raw))?, None)),
    }
}

/// The length of a run of steps; `--duration` and `--events` do not go with them.
fn steps_length(a: &RunArgs, t: &Steps<usize>, r: &Steps<f64>) -> Result<Option<Duration>> {
    let Some(v) = t
        .as_ref()
        .map(|t| t.iter().map(|s| s.1).collect::<Vec<_>>())
        .or_else(|| r.as_ref().map(|r| r.iter().map(|s| s.1).collect()))
    else {
        return Ok(None);
    };
    let total: Duration = v.iter().sum();
    if let Some(d) = &a.duration {
        if flag("--duration", units::duration(d))? != total {
            return Err(Error::usage(format!(
                "--duration {d}: the steps of --threads/--rate make each run {} s long; leave --duration out",
                total.as_secs_f64()
            )));
        }
    }
    if a.events.is_some_and(|n| n > 0) {
        return Err(Error::usage(
            "--events ends a run by count; load steps run by time: leave one out",
        ));
    }
    Ok(Some(total))
}

/// True when the user typed `id`'s flag (not an environment variable or a default).
pub fn typed(m: &clap::ArgMatches, id: &str) -> bool {
    m.try_get_raw(id).is_ok_and(|v| v.is_some())
        && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
}

/// `--fleet-timeout` (default 60 s).
pub fn fleet_timeout(v: Option<&str>) -> Result<Duration> {
    flag("--fleet-timeout", units::duration(v.unwrap_or("60s")))
}

/// The shard of `--shard I/N`, checked (no I/O); None without --shard, when the fleet flags
/// that would then do nothing are refused rather than ignored: `--run-id` given on the command
/// line (a run id from ENGINEBENCH_RUN_ID alone, set for a fleet's pods, is ignored),
/// `--fleet-timeout` and the command's `others`.
pub fn fleet_shard(
    f: &FleetArgs,
    m: &clap::ArgMatches,
    others: &[(&str, bool)],
) -> Result<Option<Shard>> {
    use crate::fleet;
    let Some(s) = &f.shard else {
        let given = [
            ("--run-id", typed(m, "run_id")),
            ("--fleet-timeout", f.fleet_timeout.is_some()),
        ];
        if let Some((flag, _)) = others.iter().chain(given.iter()).find(|(_, g)| *g) {
            return Err(Error::usage(format!(
                "{flag} goes with --shard I/N (a fleet's shards); without --shard, leave it out"
            )));
        }
        return Ok(None);
    };
    if let Some(id) = &f.run_id {
        fleet::check_run_id(id)?;
    }
    let index_env = std::env::var(INDEX_ENV).ok();
    Shard::parse(s, index_env.as_deref()).map(Some)
}

/// The fleet flags of `run`, checked (no I/O).
/// `--client-threads`, or its default for the DBMS.
fn client_threads(a: &RunArgs, dbms: Dbms) -> Result<usize> {
    // PostgreSQL: with one loop for 16 connections the backends (processes) waited for
    // the client about a sixth of the time; two loops reached 1.05x sysbench's point-select
    // QPS against 0.88x (BENCHMARKS.md, 2026-11-25). MariaDB's threads did not (a second
    // loop cost 15 % more client CPU per query and no QPS).
    let n = match a.client_threads {
        Some(0) => return Err(Error::usage("--client-threads: must be at least 1")),
        Some(n) => n,
        None if dbms == Dbms::Postgres => 2,
        None => 1,
    };
    Ok(n)
}

/// A measured run's length: at least 100ms, or 0 (no limit) with `--events`.
fn check_duration(
    a: &RunArgs,
    duration: Duration,
    events: Option<u64>,
    previews: bool,
) -> Result<()> {
    // sysbench: --time 0 is "no time limit", which only makes sense with --events.
    if duration.is_zero() && events.is_none() && !previews {
        if a.duration.is_some() {
            return Err(Error::usage(
                "--duration 0 (no time limit) needs --events N to end each run",
            ));
        }
    } else if !duration.is_zero() && duration < Duration::from_millis(100) {
        return Err(Error::usage(
            "--duration: a measured run must last at least 100ms",
        ));
    }
    Ok(())
}

/// The server side of a run: a private server (`--server`), the target (until the server
/// runs, a placeholder URL of its DBMS), `--pin`, `--profile-server` and `--server-pid`.
struct ServerSide {
    server: Option<crate::server::ServerSpec>,
    spec: TargetSpec,
    pin: Option<Pin>,
    profile_hz: Option<u32>,
}

fn server_side(a: &RunArgs) -> Result<ServerSide> {
    let sa = &a.server;
    let server = match &sa.server {
        Some(s) => Some(crate::server::ServerSpec::parse(
            s,
            &sa.server_opt,
            sa.datadir.as_deref(),
            sa.keep_datadir,
        )?),
        None => None,
    };
    let spec = match &server {
        // The real URL is known once the server runs; this one has the right DBMS.
        Some(sv) => {
            let mut t = a.target.clone();
            t.target = Some(sv.kind.placeholder_url().into());
            resolve_target(&t)?
        }
        None => resolve_target(&a.target)?,
    };
    let pin = match &sa.pin {
        Some(p) => Some(Pin::parse(p)?),
        None => None,
    };
    if pin.as_ref().is_some_and(|p| p.server_cpus.is_some())
        && server.is_none()
        && sa.server_pid.is_none()
    {
        return Err(Error::usage(
            "--pin server=...: needs --server (a private server) or --server-pid PID",
        ));
    }
    let profile_hz = match sa.profile_server {
        Some(hz) if !(1..=10_000).contains(&hz) => {
            return Err(Error::usage(format!(
                "--profile-server={hz}: the sampling rate must be 1 to 10000 per second"
            )))
        }
        hz => hz,
    };
    if let Some(pid) = sa.server_pid {
        if !crate::measure::proc::alive(pid) {
            return Err(Error::usage(format!("--server-pid: no process {pid}")));
        }
    }
    Ok(ServerSide {
        server,
        spec,
        pin,
        profile_hz,
    })
}

/// The run's checks and time limits: `--percentile`, `--disturbed-above`, the connect and
/// query timeouts, `--metrics-addr` and the live report's interval.
struct Limits {
    extra_percentiles: Vec<f64>,
    connect_timeout: Duration,
    query_timeout: Option<f64>,
    report_interval: Duration,
    live: bool,
}

fn limits(a: &RunArgs) -> Result<Limits> {
    let mut extra_percentiles = Vec::new();
    if let Some(p) = a.percentile {
        if !(p > 0.0 && p <= 100.0) {
            return Err(Error::usage(format!(
                "--percentile {p}: must be above 0 and at most 100"
            )));
        }
        // sysbench's 0 disables its percentile; 100 is the max, always reported.
        if !crate::measure::hist::PERCENTILES.contains(&p) && p < 100.0 {
            extra_percentiles.push(p);
        }
    }
    if !a.disturbed_above.is_finite() {
        return Err(Error::usage(
            "--disturbed-above: give a number of CPUs, e.g. 0.1",
        ));
    }
    let connect_timeout = flag("--connect-timeout", units::duration(&a.connect_timeout))?;
    if connect_timeout < Duration::from_millis(100) {
        return Err(Error::usage("--connect-timeout: must be at least 100ms"));
    }
    let query_timeout = match &a.query_timeout {
        Some(s) => {
            let t = flag("--query-timeout", units::duration(s))?;
            if t < Duration::from_millis(10) {
                return Err(Error::usage("--query-timeout: must be at least 10ms"));
            }
            Some(t.as_secs_f64())
        }
        None => None,
    };
    if let Some(addr) = &a.metrics_addr {
        crate::live::metrics::check_addr(addr)?;
    }
    let (report_interval, live) = match &a.report_interval {
        Some(s) => (flag("--report-interval", units::duration(s))?, true),
        None => (Duration::from_secs(1), false),
    };
    if report_interval < Duration::from_millis(100) {
        return Err(Error::usage("--report-interval: must be at least 100ms"));
    }
    Ok(Limits {
        extra_percentiles,
        connect_timeout,
        query_timeout,
        report_interval,
        live,
    })
}

fn fleet(a: &RunArgs, m: &clap::ArgMatches) -> Result<Option<crate::fleet::Fleet>> {
    use crate::fleet;
    let Some(shard) = fleet_shard(&a.fleet, m, &[("--start-at", a.start_at.is_some())])? else {
        return Ok(None);
    };
    if a.server.server.is_some() {
        return Err(Error::usage(
            "--shard with --server: every shard would start its own server; start one server and give every shard its --target",
        ));
    }
    let start_at = a
        .start_at
        .as_deref()
        .map(fleet::parse_start_at)
        .transpose()?;
    if a.fleet.run_id.is_some() == start_at.is_some() {
        return Err(Error::usage(
            "--shard needs either --run-id ID (the shards meet in the target's enginebench_fleet table) or --start-at TIME (a start time every shard is given)",
        ));
    }
    let timeout = fleet_timeout(a.fleet.fleet_timeout.as_deref())?;
    Ok(Some(fleet::Fleet {
        shard,
        run_id: a.fleet.run_id.clone(),
        start_at_unix_s: start_at,
        timeout_s: timeout.as_secs_f64(),
    }))
}

/// What the config keeps of the workload it resolves (the workload itself stays with the
/// caller: the config stands below the workload contract).
pub struct Resolved {
    pub name: String,
    pub operations: Vec<String>,
    pub options: serde_json::Value,
    /// It prints instead of running (`Workload::preview`).
    pub previews: bool,
}

impl RunConfig {
    /// Check the common options of `run`, then let the workload resolve its own options
    /// (`workload`, called with the context it may adjust and the target) and set its
    /// defaults for what the user did not give.
    pub fn resolve(
        a: &RunArgs,
        m: &clap::ArgMatches,
        workload: impl FnOnce(&mut ResolveCx, &TargetSpec) -> Result<Resolved>,
    ) -> Result<Self> {
        let sa = &a.server;
        let ServerSide {
            server,
            spec,
            pin,
            profile_hz,
        } = server_side(a)?;
        let p = preset(a.method);
        let (threads, thread_steps) = threads(a, p.threads)?;
        let warmup = match &a.warmup {
            Some(s) => flag("--warmup", units::duration(s))?,
            None => p.warmup,
        };
        let duration = match &a.duration {
            Some(s) => flag("--duration", units::duration(s))?,
            None => p.duration,
        };
        let runs = a.runs.unwrap_or(p.runs);
        if runs == 0 {
            return Err(Error::usage("--runs: at least one measured run is needed"));
        }
        if a.data.load_connections == 0 {
            return Err(Error::usage("--load-connections: must be at least 1"));
        }
        a.data.check_table_options(spec.dbms)?;
        let fleet = fleet(a, m)?;
        let shard = fleet.as_ref().map(|f| f.shard);
        let (pacing, rate_steps) = pacing(a, shard)?;
        let steps_len = steps_length(a, &thread_steps, &rate_steps)?;
        let duration = steps_len.unwrap_or(duration);
        let mut cx = ResolveCx {
            purpose: Purpose::Run,
            dbms: spec.dbms,
            method: a.method,
            seed: a.data.seed,
            engine: a.target.engine.clone(),
            shape: Shape {
                threads,
                warmup,
                duration,
                runs,
                size: 0,
                // Open loop: SCHED_BATCH delays timer wake-ups on a busy machine (measured
                // here: 5x more starts over 2 ms late at 2000/s), which would count as
                // response time.
                sched_batch: !a.no_sched_batch && pacing == Pacing::ClosedLoop,
                given: Given {
                    threads: a.threads.is_some(),
                    warmup: a.warmup.is_some(),
                    duration: a.duration.is_some() || steps_len.is_some(),
                    runs: a.runs.is_some(),
                    rate: a.rate.is_some(),
                    pin: a.server.pin.is_some(),
                },
            },
            shard,
        };
        crate::db::ring::choose(match a.client_io.as_str() {
            "io_uring" => crate::db::ring::IoChoice::IoUring,
            "epoll" => crate::db::ring::IoChoice::Epoll,
            _ => crate::db::ring::IoChoice::Auto,
        })
        .map_err(Error::usage)?;
        let resolved = workload(&mut cx, &spec)?;
        let Shape {
            threads,
            warmup,
            duration,
            runs,
            size,
            sched_batch,
            ..
        } = cx.shape;
        let events = a.events.filter(|n| *n > 0);
        let fixed_rate = match pacing {
            Pacing::FixedRate { ops_per_s, .. } => Some(ops_per_s),
            Pacing::ClosedLoop => None,
        };
        let max_threads = threads.iter().copied().max().unwrap_or(1);
        let load_steps = steps::combine(
            thread_steps.as_deref(),
            rate_steps.as_deref(),
            max_threads,
            fixed_rate,
        )
        .map_err(Error::usage)?;
        check_duration(a, duration, events, resolved.previews)?;
        let Limits {
            extra_percentiles,
            connect_timeout,
            query_timeout,
            report_interval,
            live,
        } = limits(a)?;
        let client_threads = client_threads(a, spec.dbms)?;
        let statements = spec.statements;
        Ok(RunConfig {
            workload: resolved.name,
            target: spec.display.clone(),
            engine: a.target.engine.clone(),
            target_spec: spec,
            method: a.method,
            table_size: size,
            seed: a.data.seed,
            threads,
            warmup_s: warmup.as_secs_f64(),
            duration_s: duration.as_secs_f64(),
            runs,
            aggregate: a.aggregate.unwrap_or(p.aggregate),
            operations: resolved.operations,
            workload_options: resolved.options,
            report_interval_s: report_interval.as_secs_f64(),
            live_report: live,
            client_threads,
            sched_batch,
            pacing,
            connect: a.connect,
            steps: load_steps,
            step_threads: thread_steps.is_some(),
            load_connections: a.data.load_connections,
            load_method: a.data.load_method,
            statements,
            table_options: a.data.table_options.trim().to_string(),
            results_dir: a.results_dir.clone(),
            server,
            server_pid: sa.server_pid,
            profile_hz,
            pin,
            server_label: sa.server_label.clone(),
            events,
            extra_percentiles,
            query_timeout_s: query_timeout,
            reconnect: a.reconnect,
            connect_timeout_s: connect_timeout.as_secs_f64(),
            disturbed_above_cpus: a.disturbed_above,
            metrics_addr: a.metrics_addr.clone(),
            fleet,
        })
    }

    /// Wall time the measurement will take (without loading), for the plan line.
    pub fn estimate(&self) -> Duration {
        let per_point = self.warmup_s + self.runs as f64 * self.duration_s;
        Duration::from_secs_f64(per_point * (self.operations.len() * self.threads.len()) as f64)
    }
}
