//! The resolved, validated run configuration. Stage one (here) checks what the user typed
//! without any I/O; stage two (commands) connects and builds what the runner needs.

pub mod parse;

use std::time::Duration;

use serde::Serialize;

use crate::cli::{DataArgs, Method, RunArgs, TargetArgs};
use crate::error::{Error, Result};
use crate::report::table::Pick;
use crate::target::{Dbms, TargetSpec, DEFAULT_TARGET};
use crate::workload::{micro_read, tpcc, Workload, WORKLOADS};

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
    pub load_connections: usize,
    pub results_dir: String,
}

impl RunConfig {
    pub fn warmup(&self) -> Duration {
        Duration::from_secs_f64(self.warmup_s)
    }
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_s)
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
}

impl<'a> Extra<'a> {
    pub fn from_data(d: &DataArgs, method: Method, dbms: Dbms) -> Self {
        Extra {
            method: Some(method),
            table_size_given: d.table_size.is_some(),
            warehouses: d.warehouses,
            dbms: Some(dbms),
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

/// Build the workload of `name` with its options (`queries`: a comma-separated subset).
pub fn workload(
    name: &str,
    table_size: u64,
    seed: u64,
    queries: Option<&str>,
    x: &Extra,
) -> Result<Workload> {
    let name = check_workload(name)?;
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
    match name {
        tpcc::NAME => {
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
            if x.spec_timing {
                return Err(Error::usage(
                    "--spec-timing (keying and think times of TPC-C 5.2.5) is not implemented yet; run without it (see docs/tpcc.md)",
                ));
            }
            let warehouses = x.warehouses.unwrap_or(default_warehouses(x.method));
            if warehouses == 0 || warehouses > 10_000 {
                return Err(Error::usage(format!(
                    "--warehouses: {warehouses} is out of range (1 to 10000)"
                )));
            }
            Ok(Workload::Tpcc(tpcc::Spec {
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
            }))
        }
        micro_read::NAME => Ok(Workload::MicroRead(micro_read::Spec {
            table_size,
            seed,
            queries: match queries {
                Some(list) => list
                    .split(',')
                    .map(micro_read::Query::parse)
                    .collect::<Result<Vec<_>>>()?,
                None => micro_read::Query::ALL.to_vec(),
            },
        })),
        other => Err(Error::usage(format!("unknown workload '{other}'"))),
    }
}

pub fn check_workload(name: &str) -> Result<&'static str> {
    WORKLOADS
        .iter()
        .copied()
        .find(|w| *w == name)
        .ok_or_else(|| {
            Error::usage(format!(
                "unknown workload '{name}'; known workloads: {} (see `enginebench list`)",
                WORKLOADS.join(", ")
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

impl RunConfig {
    pub fn resolve(a: &RunArgs) -> Result<Self> {
        let workload = check_workload(&a.workload)?.to_string();
        let spec = resolve_target(&a.target)?;
        let p = preset(a.method);
        let threads = match &a.threads {
            Some(s) => flag("--threads", parse::thread_list(s))?,
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
        if duration < Duration::from_millis(100) {
            return Err(Error::usage(
                "--duration: a measured run must last at least 100ms",
            ));
        }
        let runs = a.runs.unwrap_or(p.runs);
        if runs == 0 {
            return Err(Error::usage("--runs: at least one measured run is needed"));
        }
        let mut table_size = table_size(&a.data, a.method)?;
        let extra = Extra {
            weights: a.weights.as_deref(),
            isolation: a.isolation.as_deref(),
            spec_timing: a.spec_timing,
            ..Extra::from_data(&a.data, a.method, spec.dbms)
        };
        let workload_spec = self::workload(
            &workload,
            table_size,
            a.data.seed,
            a.queries.as_deref(),
            &extra,
        )?;
        // tpcc's size is its number of warehouses.
        if let Workload::Tpcc(t) = &workload_spec {
            table_size = t.warehouses as u64;
        }
        let (report_interval, live) = match &a.report_interval {
            Some(s) => (flag("--report-interval", parse::duration(s))?, true),
            None => (Duration::from_secs(1), false),
        };
        if report_interval < Duration::from_millis(100) {
            return Err(Error::usage("--report-interval: must be at least 100ms"));
        }
        if a.client_threads == 0 {
            return Err(Error::usage("--client-threads: must be at least 1"));
        }
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
            client_threads: a.client_threads,
            sched_batch: !a.no_sched_batch,
            load_connections: a.data.load_connections,
            results_dir: a.results_dir.clone(),
        })
    }

    /// Wall time the measurement will take (without loading), for the plan line.
    pub fn estimate(&self) -> Duration {
        let per_point = self.warmup_s + self.runs as f64 * self.duration_s;
        Duration::from_secs_f64(per_point * (self.operations.len() * self.threads.len()) as f64)
    }
}
