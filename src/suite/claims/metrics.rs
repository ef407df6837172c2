//! The metrics a claim can compare, and the value of one in a cell's result.

use super::*;

/// Metrics of every run record: (name, what it is, lower is better).
pub const METRICS: &[(&str, &str)] = &[
    ("ops_per_s", "operations per second, per run"),
    ("p50_us", "median latency (µs), per run"),
    ("p95_us", "95th percentile latency (µs), per run"),
    ("p99_us", "99th percentile latency (µs), per run"),
    (
        "client_cpu_us_per_op",
        "client CPU per operation (µs), per run",
    ),
    (
        "server_cpu_us_per_op",
        "server CPU per operation (µs), per run",
    ),
    (
        "server_written_bytes_per_op",
        "bytes the server wrote per operation, per run",
    ),
    ("errors_per_op", "errors per operation, per run"),
    ("load_s", "time to load the data (s), once per cell"),
    ("load_rows_per_s", "rows loaded per second, once per cell"),
    (
        "counter:NAME",
        "server counter NAME per operation (e.g. counter:Innodb_pages_read), per run",
    ),
    (
        "figure:NAME",
        "a workload's figure of the run (e.g. figure:tpm_c), per run",
    ),
];

pub use crate::report::MetricValues as Values;

pub(super) fn run_metric(name: &str, r: &RunRecord) -> Option<f64> {
    let per_op = |x: f64| x / r.ops.max(1) as f64;
    Some(match name {
        "ops_per_s" => r.ops_per_s,
        "p50_us" => r.latency_us.p50_us as f64,
        "p95_us" => r.latency_us.p95_us as f64,
        "p99_us" => r.latency_us.p99_us as f64,
        "client_cpu_us_per_op" => r.client_cpu.us_per_op,
        "server_cpu_us_per_op" => r.server_process.as_ref()?.cpu_us_per_op,
        "server_written_bytes_per_op" => r.server_process.as_ref()?.written_bytes_per_op,
        "errors_per_op" => per_op(r.errors_total as f64),
        _ => {
            if let Some(c) = name.strip_prefix("counter:") {
                per_op(*r.server_counters.get(c)?)
            } else if let Some(f) = name.strip_prefix("figure:") {
                *r.figures.get(f)?
            } else {
                return None;
            }
        }
    })
}

/// Whether `name` is a metric some claim can read (built in, or a workload's).
pub fn known_metric(name: &str, owners: Owners) -> bool {
    let base = name.split(':').next().unwrap_or(name);
    METRICS
        .iter()
        .any(|(m, _)| *m == name || m.strip_suffix(":NAME") == Some(base) && name.contains(':'))
        || owners.iter().any(|o| {
            o.claim_metrics()
                .iter()
                .any(|(m, _)| *m == base || *m == name)
        })
}

/// The values of `metric` in one cell's result (`op`: the operation, when the cell has
/// several); `Err` says why there are none.
pub fn values(
    doc: &ResultDoc,
    metric: &str,
    op: Option<&str>,
    owners: Owners,
) -> Result<Values, String> {
    match metric {
        _ if is_load_metric(metric) => {
            let s: f64 = doc.load.iter().map(|l| l.elapsed_s).sum();
            let rows: u64 = doc.load.iter().map(|l| l.rows).sum();
            if doc.load.is_empty() || s <= 0.0 {
                return Err("the cell loaded no data".into());
            }
            return Ok(Values::Once(if metric == "load_s" {
                s
            } else {
                rows as f64 / s
            }));
        }
        _ => {}
    }
    let base = metric.split(':').next().unwrap_or(metric);
    for o in owners {
        if o.claim_metrics()
            .iter()
            .any(|(m, _)| *m == base || *m == metric)
        {
            return o
                .claim_value(doc, metric, op)
                .ok_or_else(|| format!("the result has no {metric}"));
        }
    }
    let point = pick_point(doc, op)?;
    let runs: Vec<f64> = point
        .runs
        .iter()
        .filter_map(|r| run_metric(metric, r))
        .collect();
    if runs.is_empty() {
        return Err(format!(
            "no run of {} at {} threads has {metric}",
            point.operation, point.threads
        ));
    }
    Ok(Values::PerRun(runs))
}

pub(super) fn pick_point<'a>(doc: &'a ResultDoc, op: Option<&str>) -> Result<&'a Point, String> {
    match op {
        Some(op) => doc
            .points
            .iter()
            .find(|p| p.operation.eq_ignore_ascii_case(op))
            .ok_or_else(|| format!("no point of {op}")),
        None => match doc.points.as_slice() {
            [p] => Ok(p),
            [] => Err("no measured point".into()),
            _ => Err("several operations: the claim must name one".into()),
        },
    }
}

/// The metrics read from a result's loads rather than its runs.
pub(super) fn is_load_metric(metric: &str) -> bool {
    matches!(metric, "load_s" | "load_rows_per_s")
}

/// The values a side reads in one result, and whether the measurement was disturbed.
pub(super) fn doc_values(
    doc: &ResultDoc,
    metric: &str,
    op: Option<&str>,
    owners: Owners,
) -> Result<(Vec<f64>, bool), String> {
    let v = values(doc, metric, op, owners)?;
    let base = metric.split(':').next().unwrap_or(metric);
    let owned = owners.iter().find(|o| {
        o.claim_metrics()
            .iter()
            .any(|(m, _)| *m == base || *m == metric)
    });
    let disturbed = match owned.and_then(|o| o.claim_disturbed(doc, metric, op)) {
        Some(d) => d,
        // A load time is read from the loads, and so is its disturbance.
        None if is_load_metric(metric) => doc.load.iter().any(|l| l.disturbed),
        None => match pick_point(doc, op) {
            Ok(p) => p.runs.iter().any(|r| r.disturbed),
            // Sections without points: no run to read the flag from.
            Err(_) => false,
        },
    };
    Ok((
        match v {
            Values::PerRun(v) => v,
            Values::Once(x) => vec![x],
        },
        disturbed,
    ))
}

pub(super) fn status_label(s: &Status) -> &'static str {
    match s {
        Status::Running => "running (unfinished)",
        Status::Complete => "complete",
        Status::Interrupted => "interrupted",
        Status::Failed => "failed",
    }
}

/// A JSON number anywhere in a result's config under `key` (the first found, depth first).
pub(super) fn config_number(v: &serde_json::Value, key: &str) -> Option<f64> {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(x) = m.get(key) {
                if let Some(n) = x.as_f64() {
                    return Some(n);
                }
                if let Some(s) = x.as_str() {
                    if let Ok(n) = crate::units::count(s) {
                        return Some(n as f64);
                    }
                }
            }
            m.values().find_map(|x| config_number(x, key))
        }
        serde_json::Value::Array(a) => a.iter().find_map(|x| config_number(x, key)),
        _ => None,
    }
}
