//! The resolved, validated run configuration. Stage one (here) checks what the user typed
//! without any I/O; stage two (commands) connects and builds what the runner needs.

pub mod parse;

use std::time::Duration;

use serde::Serialize;

use crate::cli::{DataArgs, IibenchArgs, Method, OltpArgs, RunArgs, TargetArgs};
use crate::error::{Error, Result};
use crate::report::table::Pick;
use crate::runner::{Arrivals, Pacing};
use crate::db::{Dbms, TargetSpec, DEFAULT_TARGET};
use crate::workload::{
    compression, iibench, linkbench, micro_read, oltp, schema_change, tpcc, Workload,
};

/// Values a method preset fills in when the flag is not given.
struct Preset {
    table_size: u64,
    threads: &'static [usize],
    warmup: Duration,
    duration: Duration,
    runs: u32,
    aggregate: Pick,
}

fn preset(m: Method) -> Preset {
    match m {
        Method::Quick => Preset {
            table_size: 100_000,
            threads: &[1, 4, 16],
            warmup: Duration::from_secs(1),
            duration: Duration::from_secs(1),
            runs: 2,
            aggregate: Pick::Max,
        },
        // The 2007 read report: 1,000,000 rows, 1..256 threads, 180 s warm-up, 3 x 60 s, max kept.
        Method::Classic => Preset {
            table_size: 1_000_000,
            threads: &[1, 4, 16, 64, 128, 256],
            warmup: Duration::from_secs(180),
            duration: Duration::from_secs(60),
            runs: 3,
            aggregate: Pick::Max,
        },
    }
}

#[derive(Debug, Clone, Serialize)]
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
    #[serde(skip)]
    pub workload_spec: Workload,
    pub report_interval_s: f64,
    /// Whether interval lines are printed while running.
    pub live_report: bool,
    pub client_threads: usize,
    pub sched_batch: bool,
    /// Closed loop, or a fixed total rate (open loop).
    pub pacing: Pacing,
    pub load_connections: usize,
    pub load_method: crate::load::LoadMethod,
    pub results_dir: String,
    /// The private server started for this run (`--server`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::server::ServerSpec>,
    /// Pid of an existing server to sample (`--server-pid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_pid: Option<u32>,
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
    pub fn faults(&self) -> crate::runner::Faults {
        crate::runner::Faults {
            query_timeout: self.query_timeout_s.map(Duration::from_secs_f64),
            reconnect: self.reconnect,
        }
    }
    pub fn report_interval(&self) -> Duration {
        Duration::from_secs_f64(self.report_interval_s)
    }
}

fn flag<T>(name: &str, r: std::result::Result<T, String>) -> Result<T> {
    r.map_err(|e| Error::usage(format!("{name}: {e}")))
}

/// Flags that only some workloads take (all `None`/false: each workload's defaults).
#[derive(Debug, Clone, Default)]
pub struct Extra<'a> {
    pub method: Option<Method>,
    /// `--table-size` was given (tpcc sizes its data by warehouses instead).
    pub table_size_given: bool,
    pub warehouses: Option<u32>,
    pub weights: Option<&'a str>,
    pub isolation: Option<&'a str>,
    pub spec_timing: bool,
    pub dbms: Option<Dbms>,
    pub maxid1: Option<&'a str>,
    pub linkbench_config: Option<&'a str>,
    /// `--workload-file` and its `--var`s.
    pub workload_file: Option<&'a str>,
    pub vars: &'a [String],
    /// `--compressed-fraction` as typed (workloads with generated text).
    pub compressed_fraction: Option<&'a str>,
    /// iibench's flags (run only).
    pub iibench: Option<&'a IibenchArgs>,
    /// `--duration` when given explicitly (iibench: a time bound).
    pub duration: Option<Duration>,
    /// schema-change: `--before`, `--after`, `--during`.
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
    pub during: Option<&'a str>,
}

impl<'a> Extra<'a> {
    pub fn from_data(d: &'a DataArgs, method: Method, dbms: Dbms) -> Self {
        Extra {
            method: Some(method),
            table_size_given: d.table_size.is_some(),
            warehouses: d.warehouses,
            dbms: Some(dbms),
            maxid1: d.maxid1.as_deref(),
            linkbench_config: d.linkbench_config.as_deref(),
            workload_file: d.workload_file.as_deref(),
            vars: &d.vars,
            compressed_fraction: d.compressed_fraction.as_deref(),
            ..Extra::default()
        }
    }
}

/// TPC-C warehouses by method when --warehouses is not given.
fn default_warehouses(m: Option<Method>) -> u32 {
    match m {
        Some(Method::Classic) => 10,
        _ => 1,
    }
}

/// Build the workload of `name` with its options (`queries`: a comma-separated subset of
/// micro-read's; `oltp`: the sysbench options; `engine`: as typed, for tables drivers create;
/// `x`: the flags only some workloads take).
pub fn workload(
    name: &str,
    table_size: u64,
    seed: u64,
    queries: Option<&str>,
    o: &OltpArgs,
    engine: Option<&str>,
    x: &Extra,
) -> Result<Workload> {
    if x.workload_file.is_some() || crate::workload::custom::builtin(name).is_some() {
        return custom_workload(name, seed, queries, x);
    }
    if !x.vars.is_empty() {
        return Err(Error::usage(
            "--var applies to workload files (--workload-file, ycsb-*, tpcb) only",
        ));
    }
    let name = check_workload(name)?;
    if name != linkbench::NAME {
        for (given, flag) in [
            (x.maxid1.is_some(), "--maxid1"),
            (x.linkbench_config.is_some(), "--linkbench-config"),
        ] {
            if given {
                return Err(Error::usage(format!(
                    "{flag} applies to the linkbench workload only"
                )));
            }
        }
    }
    if name != iibench::NAME {
        check_compressed_fraction(name, x)?;
        if let Some(flag) = x.iibench.and_then(iibench::options::any_given) {
            return Err(Error::usage(format!(
                "{flag} applies to the iibench workload only"
            )));
        }
    } else {
        if x.table_size_given {
            return Err(Error::usage(
                "--table-size does not apply to iibench: it starts from an empty table; bound it with --max-rows or --duration",
            ));
        }
        if queries.is_some() {
            return Err(Error::usage(
                "--queries does not apply to iibench: add query connections with --query-threads",
            ));
        }
        let args = x.iibench.cloned().unwrap_or_default();
        return iibench::options::spec(&args, seed, x.compressed_fraction, x.duration, x.method)
            .map(Workload::Iibench);
    }
    if name == linkbench::NAME {
        return linkbench_spec(seed, queries, x);
    }
    if name == crate::workload::sqlbench::NAME {
        return Err(Error::usage(
            "sqlbench creates, fills and drops its tables itself during `run sqlbench`: there is nothing to prepare or clean up",
        ));
    }
    if name != tpcc::NAME {
        for (given, flag) in [
            (x.warehouses.is_some(), "--warehouses"),
            (x.weights.is_some(), "--weights"),
            (x.isolation.is_some(), "--isolation"),
            (x.spec_timing, "--spec-timing"),
        ] {
            if given {
                return Err(Error::usage(format!(
                    "{flag} applies to the tpcc workload only"
                )));
            }
        }
    }
    for (given, flag) in [
        (x.before.is_some(), "--before"),
        (x.after.is_some(), "--after"),
        (x.during.is_some(), "--during"),
    ] {
        if given && name != schema_change::NAME {
            return Err(Error::usage(format!(
                "{flag} applies to the schema-change workload only"
            )));
        }
    }
    if name == compression::NAME {
        if engine.is_some() {
            return Err(Error::usage(
                "--engine does not apply to compression: it loads every storage format the server offers (pick formats with --queries)",
            ));
        }
        return Ok(Workload::Compression(
            compression::Spec::new(table_size, seed, x.dbms.unwrap_or(Dbms::Sqlite), queries)?
                .with_text(x.compressed_fraction)?,
        ));
    }
    if name == schema_change::NAME {
        return schema_change_spec(table_size, seed, queries, o, engine, x);
    }
    if name == tpcc::NAME {
        if x.table_size_given {
            return Err(Error::usage(
                "--table-size does not apply to tpcc: its size is --warehouses",
            ));
        }
        if queries.is_some() {
            return Err(Error::usage(
                "--queries does not apply to tpcc: set the transaction mix with --weights",
            ));
        }
        let warehouses = x.warehouses.unwrap_or(default_warehouses(x.method));
        if warehouses == 0 || warehouses > 10_000 {
            return Err(Error::usage(format!(
                "--warehouses: {warehouses} is out of range (1 to 10000)"
            )));
        }
        return Ok(Workload::Tpcc(tpcc::Spec {
            warehouses,
            seed,
            weights: match x.weights {
                Some(w) => tpcc::parse_weights(w)?,
                None => tpcc::DEFAULT_WEIGHTS,
            },
            isolation: match x.isolation {
                Some(i) => Some(tpcc::Isolation::parse(i, x.dbms.unwrap_or(Dbms::Mysql))?),
                None => None,
            },
            spec_timing: x.spec_timing,
        }));
    }
    if name == micro_read::NAME {
        return Ok(Workload::MicroRead(micro_read::Spec {
            table_size,
            seed,
            queries: match queries {
                Some(list) => list
                    .split(',')
                    .map(micro_read::Query::parse)
                    .collect::<Result<Vec<_>>>()?,
                None => micro_read::Query::ALL.to_vec(),
            },
        }));
    }
    let kind = oltp::Kind::parse(name)
        .ok_or_else(|| Error::usage(format!("unknown workload '{name}'")))?;
    if queries.is_some() {
        return Err(Error::usage(format!(
            "--queries applies to micro-read only; {name} runs one kind of event (see docs/oltp.md)"
        )));
    }
    let at_least_1 = [
        ("--tables", o.tables),
        ("--range-size", o.range_size),
        ("--rand-spec-iter", o.rand_spec_iter),
        ("--random-points", o.random_points),
        ("--number-of-ranges", o.number_of_ranges),
        ("--bulk-rows", o.bulk_rows),
    ];
    for (flag, v) in at_least_1 {
        if v == 0 {
            return Err(Error::usage(format!("{flag}: must be at least 1")));
        }
    }
    if o.tables > 10_000 {
        return Err(Error::usage("--tables: at most 10000"));
    }
    if o.rand_spec_pct > 100 || o.rand_spec_res >= 100 {
        return Err(Error::usage(
            "--rand-spec-pct must be 0..100 and --rand-spec-res 0..99 (percentages)",
        ));
    }
    if !(o.rand_pareto_h > 0.0 && o.rand_pareto_h < 1.0) {
        return Err(Error::usage(
            "--rand-pareto-h: must be between 0 and 1 (exclusive)",
        ));
    }
    if matches!(
        kind,
        oltp::Kind::SelectRandomPoints | oltp::Kind::SelectRandomRanges
    ) && o.tables != 1
    {
        return Err(Error::usage(format!(
            "{name} supports --tables 1 only (as in sysbench)"
        )));
    }
    if table_size > i32::MAX as u64 {
        return Err(Error::usage(
            "--table-size: at most 2147483647 rows per table (sysbench's id is a signed INTEGER)",
        ));
    }
    Ok(Workload::Oltp(oltp::Spec {
        kind,
        seed,
        table_size: table_size as u32,
        tables: o.tables,
        range_size: o.range_size,
        point_selects: o.point_selects,
        simple_ranges: o.simple_ranges,
        sum_ranges: o.sum_ranges,
        order_ranges: o.order_ranges,
        distinct_ranges: o.distinct_ranges,
        index_updates: o.index_updates,
        non_index_updates: o.non_index_updates,
        delete_inserts: o.delete_inserts,
        range_selects: o.range_selects,
        skip_trx: o.skip_trx,
        auto_inc: o.auto_inc,
        secondary: o.secondary,
        create_secondary: o.create_secondary,
        rand_type: o.rand_type,
        rand_spec_iter: o.rand_spec_iter,
        rand_spec_pct: o.rand_spec_pct,
        rand_spec_res: o.rand_spec_res,
        rand_pareto_h: o.rand_pareto_h,
        random_points: o.random_points,
        number_of_ranges: o.number_of_ranges,
        delta: o.delta,
        bulk_rows: o.bulk_rows,
        engine: engine.map(str::to_string),
        text: oltp::data::SbText::from_flag(x.compressed_fraction, seed)?,
    }))
}

/// `--compressed-fraction` (docs/compressed-fraction.md) is for workloads that generate text:
/// iibench, the OLTP family, compression, schema-change and workload files.
fn check_compressed_fraction(name: &str, x: &Extra) -> Result<()> {
    let without_text = [
        micro_read::NAME,
        tpcc::NAME,
        linkbench::NAME,
        crate::workload::sqlbench::NAME,
        "bulk_insert",
    ];
    if x.compressed_fraction.is_some() && without_text.contains(&name) {
        return Err(Error::usage(format!(
            "--compressed-fraction applies to iibench, the oltp_* workloads, compression, schema-change and workload files; {name} does not generate text with it"
        )));
    }
    Ok(())
}

/// A workload file (`--workload-file`) or a built-in one (ycsb-a, tpcb, ...): the flags of
/// other workloads do not apply; sizes come from the file's variables (`--var`).
fn custom_workload(name: &str, seed: u64, queries: Option<&str>, x: &Extra) -> Result<Workload> {
    for (given, flag) in [
        (x.warehouses.is_some(), "--warehouses"),
        (x.weights.is_some(), "--weights"),
        (x.isolation.is_some(), "--isolation"),
        (x.spec_timing, "--spec-timing"),
        (queries.is_some(), "--queries"),
        (x.table_size_given, "--table-size"),
    ] {
        if given {
            return Err(Error::usage(format!(
                "{flag} does not apply to a workload file; its sizes and mix are in the file (set its variables with --var NAME=VALUE)"
            )));
        }
    }
    let spec = crate::workload::custom::resolve(name, x.workload_file, x.vars, seed)?
        .with_compressed_fraction(x.compressed_fraction)?;
    Ok(Workload::Custom(std::sync::Arc::new(spec)))
}

/// schema-change: the OLTP workload of `--during` and the timeline's windows.
fn schema_change_spec(
    table_size: u64,
    seed: u64,
    queries: Option<&str>,
    o: &OltpArgs,
    engine: Option<&str>,
    x: &Extra,
) -> Result<Workload> {
    let during = x.during.unwrap_or("oltp_insert");
    let inner = Extra {
        dbms: x.dbms,
        method: x.method,
        compressed_fraction: x.compressed_fraction,
        ..Extra::default()
    };
    let Workload::Oltp(os) = workload(during, table_size, seed, None, o, engine, &inner)? else {
        return Err(Error::usage(format!(
            "--during: '{during}' is not an OLTP workload (use oltp_insert, oltp_read_write, oltp_write_only, ...)"
        )));
    };
    let window = |v: Option<&str>, f: &str| -> Result<Duration> {
        match v {
            Some(s) => flag(f, parse::duration(s)),
            None => Ok(Duration::from_secs(5)),
        }
    };
    Ok(Workload::SchemaChange(schema_change::Spec::new(
        os,
        x.dbms.unwrap_or(Dbms::Sqlite),
        queries,
        window(x.before, "--before")?,
        window(x.after, "--after")?,
    )?))
}

/// `--table-size`, or the workload's default: sysbench's 10000 rows per table for the
/// sysbench workloads, the method's size for micro-read.
pub fn table_size_for(workload: &str, d: &DataArgs, method: Method) -> Result<u64> {
    let n = table_size(d, method)?;
    let method_sized = [micro_read::NAME, compression::NAME, schema_change::NAME];
    if d.table_size.is_none() && !method_sized.contains(&workload) {
        return Ok(10_000);
    }
    Ok(n)
}

pub fn check_workload(name: &str) -> Result<&'static str> {
    if name.is_empty() {
        return Err(Error::usage(
            "give a workload name (see `enginebench list`) or --workload-file FILE",
        ));
    }
    crate::workload::names()
        .find(|w| *w == name)
        .ok_or_else(|| {
            Error::usage(format!(
                "unknown workload '{name}'; known workloads: {} (see `enginebench list`)",
                crate::workload::names().collect::<Vec<_>>().join(", ")
            ))
        })
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

pub fn table_size(d: &DataArgs, method: Method) -> Result<u64> {
    let n = match &d.table_size {
        Some(s) => flag("--table-size", parse::count(s))?,
        None => preset(method).table_size,
    };
    if n == 0 || n > u32::MAX as u64 {
        return Err(Error::usage(format!(
            "--table-size: {n} is out of range (1 to 4294967295 rows)"
        )));
    }
    if d.load_connections == 0 {
        return Err(Error::usage("--load-connections: must be at least 1"));
    }
    Ok(n)
}

/// `--rate` / `--arrivals` as a pacing mode.
fn pacing(a: &RunArgs) -> Result<Pacing> {
    let Some(raw) = a.rate.as_deref() else {
        return Ok(Pacing::ClosedLoop);
    };
    let ops_per_s = flag("--rate", parse::rate(raw))?;
    Ok(Pacing::FixedRate {
        ops_per_s,
        arrivals: a.arrivals.unwrap_or(Arrivals::Poisson),
    })
}

impl RunConfig {
    pub fn resolve(a: &RunArgs) -> Result<Self> {
        let workload =
            match crate::workload::custom::name_of(&a.workload, a.data.workload_file.as_deref())? {
                Some(n) => n,
                None => check_workload(&a.workload)?.to_string(),
            };
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
                let placeholder = match sv.kind {
                    crate::server::Kind::Mariadb => {
                        "mysql://root@localhost/enginebench?socket=/pending"
                    }
                    crate::server::Kind::Postgres => {
                        "postgres://postgres@localhost/enginebench?host=/pending"
                    }
                };
                let mut t = a.target.clone();
                t.target = Some(placeholder.into());
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
        if let Some(pid) = sa.server_pid {
            if !crate::measure::proc::alive(pid) {
                return Err(Error::usage(format!("--server-pid: no process {pid}")));
            }
        }
        let p = preset(a.method);
        if a.requesters.is_some() && workload != linkbench::NAME {
            return Err(Error::usage(
                "--requesters applies to linkbench only; use --threads",
            ));
        }
        let threads = match &a.threads {
            Some(s) => flag("--threads", parse::thread_list(s))?,
            None if workload == linkbench::NAME => Vec::new(), // set below, from its spec
            None => p.threads.to_vec(),
        };
        let warmup = match &a.warmup {
            Some(s) => flag("--warmup", parse::duration(s))?,
            None => p.warmup,
        };
        let duration = match &a.duration {
            Some(s) => flag("--duration", parse::duration(s))?,
            None => p.duration,
        };
        let events = a.events.filter(|n| *n > 0);
        // sysbench: --time 0 is "no time limit", which only makes sense with --events.
        if duration.is_zero() && events.is_none() {
            return Err(Error::usage(
                "--duration 0 (no time limit) needs --events N to end each run",
            ));
        }
        if !duration.is_zero() && duration < Duration::from_millis(100) {
            return Err(Error::usage(
                "--duration: a measured run must last at least 100ms",
            ));
        }
        let runs = a.runs.unwrap_or(p.runs);
        if runs == 0 {
            return Err(Error::usage("--runs: at least one measured run is needed"));
        }
        let mut table_size = table_size_for(&workload, &a.data, a.method)?;
        let extra = Extra {
            maxid1: a.data.maxid1.as_deref(),
            linkbench_config: a.data.linkbench_config.as_deref(),
            weights: a.weights.as_deref(),
            isolation: a.isolation.as_deref(),
            spec_timing: a.spec_timing,
            iibench: Some(&a.iibench),
            duration: a.duration.as_ref().map(|_| duration),
            before: a.before.as_deref(),
            after: a.after.as_deref(),
            during: a.during.as_deref(),
            ..Extra::from_data(&a.data, a.method, spec.dbms)
        };
        let mut workload_spec = self::workload(
            &workload,
            table_size,
            a.data.seed,
            a.queries.as_deref(),
            &a.oltp,
            a.target.engine.as_deref(),
            &extra,
        )?;
        // tpcc's size is its number of warehouses.
        if let Workload::Tpcc(t) = &workload_spec {
            table_size = t.warehouses as u64;
        }
        // linkbench: its size is maxid1; requesters, maxtime and warmup_time may come from its
        // workload file when the flags are not given.
        let (mut threads, mut warmup, mut duration) = (threads, warmup, duration);
        if let Workload::Linkbench(l) = &workload_spec {
            table_size = l.maxid1;
            let setting = |k: &str| l.setting(k);
            if threads.is_empty() {
                threads = vec![match (a.requesters, setting("requesters")) {
                    (Some(n), _) => n,
                    (None, Some(v)) => v.parse::<usize>().map_err(|_| {
                        Error::usage(format!(
                            "--linkbench-config: requesters = '{v}' is not a count"
                        ))
                    })?,
                    (None, None) => linkbench::DEFAULT_REQUESTERS,
                }];
                if threads[0] == 0 || threads[0] > 10_000 {
                    return Err(Error::usage("--requesters: 1 to 10000"));
                }
            }
            if let (None, Some(v)) = (&a.duration, setting("maxtime")) {
                duration = flag("maxtime (--linkbench-config)", parse::duration(v))?;
            }
            if let (None, Some(v)) = (&a.warmup, setting("warmup_time")) {
                warmup = flag("warmup_time (--linkbench-config)", parse::duration(v))?;
            }
            if setting("requests").is_some() {
                return Err(Error::usage(
                    "--linkbench-config: the requests key is not read; give --requests N (requests over all requesters) or set maxtime",
                ));
            }
        }
        // iibench is one run bounded by rows or time: no warm-up, no repeated runs, one
        // number of insert connections.
        let mut runs = runs;
        if let Workload::Iibench(s) = &mut workload_spec {
            let warmup_given = a.warmup.is_some() && warmup > Duration::ZERO;
            if warmup_given || a.runs.is_some_and(|r| r != 1) || a.rate.is_some() {
                return Err(Error::usage(
                    "iibench is one run from an empty table: --warmup, --runs and --rate do not apply (bound it with --max-rows or --duration)",
                ));
            }
            if a.threads.is_none() {
                threads = vec![1];
            }
            if threads.len() != 1 {
                return Err(Error::usage(
                    "--threads: iibench takes one number (its insert connections), not a list",
                ));
            }
            s.inserters = threads[0];
            (warmup, runs, table_size) = (Duration::ZERO, 1, 0);
            duration = s.max_time.unwrap_or(Duration::ZERO);
        }
        // A workload file's size is its largest table's rows.
        if let Workload::Custom(c) = &workload_spec {
            table_size = c.main_rows();
        }
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
        let query_timeout = match &a.query_timeout {
            Some(s) => {
                let t = flag("--query-timeout", parse::duration(s))?;
                if t < Duration::from_millis(10) {
                    return Err(Error::usage("--query-timeout: must be at least 10ms"));
                }
                Some(t.as_secs_f64())
            }
            None => None,
        };
        let (report_interval, live) = match &a.report_interval {
            Some(s) => (flag("--report-interval", parse::duration(s))?, true),
            None => (Duration::from_secs(1), false),
        };
        if report_interval < Duration::from_millis(100) {
            return Err(Error::usage("--report-interval: must be at least 100ms"));
        }
        // PostgreSQL: with one loop for 16 connections the backends (processes) waited for
        // the client about a sixth of the time; two loops reached 1.05x sysbench's point-select
        // QPS against 0.88x (BENCHMARKS.md, 2026-11-25). MariaDB's threads did not (a second
        // loop cost 15 % more client CPU per query and no QPS).
        let client_threads = match a.client_threads {
            Some(0) => return Err(Error::usage("--client-threads: must be at least 1")),
            Some(n) => n,
            None if spec.dbms == Dbms::Postgres => 2,
            None => 1,
        };
        let pacing = pacing(a)?;
        // iibench: one wake-up per batch of tens of milliseconds, so SCHED_BATCH saves nothing,
        // and on a loaded machine its wake-ups wait (measured: BENCHMARKS.md, iibench).
        let batch_ok = !matches!(workload_spec, Workload::Iibench(_));
        Ok(RunConfig {
            workload,
            target: spec.display.clone(),
            engine: a.target.engine.clone(),
            target_spec: spec,
            method: a.method,
            table_size,
            seed: a.data.seed,
            threads,
            warmup_s: warmup.as_secs_f64(),
            duration_s: duration.as_secs_f64(),
            runs,
            aggregate: a.aggregate.unwrap_or(p.aggregate),
            operations: workload_spec.operations(),
            workload_options: workload_spec.options(),
            workload_spec,
            report_interval_s: report_interval.as_secs_f64(),
            live_report: live,
            client_threads,
            // Open loop: SCHED_BATCH delays timer wake-ups on a busy machine (measured here: 5x
            // more starts over 2 ms late at 2000/s), which would count as response time.
            sched_batch: !a.no_sched_batch && pacing == Pacing::ClosedLoop && batch_ok,
            pacing,
            load_connections: a.data.load_connections,
            load_method: a.data.load_method,
            results_dir: a.results_dir.clone(),
            server,
            server_pid: sa.server_pid,
            pin,
            server_label: sa.server_label.clone(),
            events,
            extra_percentiles,
            query_timeout_s: query_timeout,
            reconnect: a.reconnect,
        })
    }

    /// Wall time the measurement will take (without loading), for the plan line.
    pub fn estimate(&self) -> Duration {
        let per_point = self.warmup_s + self.runs as f64 * self.duration_s;
        Duration::from_secs_f64(per_point * (self.operations.len() * self.threads.len()) as f64)
    }
}

/// The linkbench workload: LinkBench's defaults, a workload file over them, then --maxid1.
fn linkbench_spec(seed: u64, queries: Option<&str>, x: &Extra) -> Result<Workload> {
    if x.table_size_given {
        return Err(Error::usage(
            "--table-size does not apply to linkbench: its size is --maxid1",
        ));
    }
    if queries.is_some() {
        return Err(Error::usage(
            "--queries does not apply to linkbench: set the request mix in a --linkbench-config file",
        ));
    }
    let (props, file_cli) = match x.linkbench_config {
        Some(f) => {
            let text = std::fs::read_to_string(f)
                .map_err(|e| Error::usage(format!("--linkbench-config: cannot read {f}: {e}")))?;
            linkbench::props::parse(&text, f)?
        }
        None => (linkbench::Props::default(), Vec::new()),
    };
    let from_file = file_cli
        .iter()
        .find(|(k, _)| k == "maxid1")
        .map(|(_, v)| v.as_str());
    let maxid1 = match x.maxid1.or(from_file) {
        Some(s) => flag("--maxid1", parse::count(s))?,
        None => match x.method {
            // FBWorkload.properties' default graph (about 10 GB in LinkBench's words).
            Some(Method::Classic) => 10_000_001,
            _ => 100_001,
        },
    };
    let mut spec =
        linkbench::Spec::new(maxid1, seed, props, x.linkbench_config.map(str::to_string))?;
    spec.file_settings = file_cli;
    Ok(Workload::Linkbench(Box::new(spec)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(args: &[&str]) -> Result<RunConfig> {
        use clap::Parser;
        let mut argv = vec!["enginebench", "run"];
        argv.extend_from_slice(args);
        match crate::cli::Cli::try_parse_from(argv)
            .expect("valid flags")
            .command
        {
            crate::cli::Command::Run(a) => RunConfig::resolve(&a),
            _ => unreachable!("run was parsed"),
        }
    }

    /// Client loops: 2 for PostgreSQL, 1 otherwise, unless --client-threads says; 0 refused.
    #[test]
    fn client_threads_default_per_dbms() {
        let pg = [
            "oltp_point_select",
            "--target",
            "postgres://u@127.0.0.1:5432/db",
        ];
        let my = [
            "oltp_point_select",
            "--target",
            "mysql://u@127.0.0.1:3306/db",
        ];
        assert_eq!(resolved(&pg).unwrap().client_threads, 2);
        assert_eq!(resolved(&my).unwrap().client_threads, 1);
        assert_eq!(resolved(&["oltp_point_select"]).unwrap().client_threads, 1);
        let mut pg1 = pg.to_vec();
        pg1.extend(["--client-threads", "1"]);
        assert_eq!(resolved(&pg1).unwrap().client_threads, 1);
        let mut my3 = my.to_vec();
        my3.extend(["--client-threads", "3"]);
        assert_eq!(resolved(&my3).unwrap().client_threads, 3);
        let mut zero = my.to_vec();
        zero.extend(["--client-threads", "0"]);
        assert!(resolved(&zero).is_err());
    }

    #[test]
    fn pin_lists() {
        let p = Pin::parse("client=0,server=1").unwrap();
        assert_eq!(p.client_cpus, Some(vec![0]));
        assert_eq!(p.server_cpus, Some(vec![1]));
        let p = Pin::parse("server=0").unwrap();
        assert_eq!((p.client_cpus, p.server_cpus), (None, Some(vec![0])));
        assert!(Pin::parse("0,1").is_err());
        assert!(Pin::parse("cpu=1").is_err());
        assert!(Pin::parse("client=99999").is_err());
    }
}
