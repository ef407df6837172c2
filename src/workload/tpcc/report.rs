//! TPC-C's part of the outputs. Its figures live in each run's `figures` (`tpm_c`,
//! `tpm_total`; an interval's `figures.tpm_c`) and its checks in the run's
//! `sections["tpcc"].constraints`. HTML: tpmC against threads, committed NewOrders per interval
//! (the reports' curve over time), and per-transaction counts and latencies; terminal: tpmC,
//! tpmTotal and the constraints line per thread count.

use std::fmt::Write;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::constraints::Constraints;
use super::NAME;
use crate::model::{Point, ResultDoc, RunRecord};
use crate::report::html::Labeled;
use crate::report::svg::{escape, Chart, Scale, Series};
use crate::report::terminal::Pick;
use crate::report::SectionOwner;

/// Committed NewOrders per minute (run and interval figure).
pub const TPM_C: &str = "tpm_c";
/// Finished transactions of every type per minute, user rollbacks included (run figure).
pub const TPM_TOTAL: &str = "tpm_total";

/// A run's `sections["tpcc"]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunSection {
    /// Response-time limits (5.2.5.3) and mix minimums (5.2.3), pass/fail per type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<Constraints>,
    /// Emulated terminals of the run and the connections they shared (equal unless
    /// `--terminals`); absent in results written before they were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminals: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
}

/// TPC-C's part of every output.
pub struct Report;

impl SectionOwner for Report {
    fn key(&self) -> &'static str {
        NAME
    }

    fn html(&self, results: &[Labeled]) -> String {
        let mut h = String::new();
        section(&mut h, results);
        h
    }

    fn terminal(&self, doc: &ResultDoc, pick: Pick) -> String {
        terminal(doc, pick)
    }

    /// tpmC, the figure a TPC-C run is known by, is kept per point in the catalog.
    fn headline_figures(&self) -> &'static [&'static str] {
        &[TPM_C]
    }

    /// v1: `tpm_c`, `tpm_total` and `constraints` on each run, `tpm_c` on each interval.
    fn upgrade_v1(&self, doc: &mut Value) {
        use crate::report::move_into;
        for run in crate::report::runs_mut(doc) {
            move_into(run, "tpm_c", "figures", TPM_C);
            move_into(run, "tpm_total", "figures", TPM_TOTAL);
            if let Some(c) = run.as_object_mut().and_then(|o| o.remove("constraints")) {
                if !c.is_null() {
                    let s = serde_json::json!({ "constraints": c });
                    let o = run.as_object_mut().expect("an object");
                    let m = o
                        .entry("sections")
                        .or_insert_with(|| Value::Object(Default::default()));
                    if let Some(m) = m.as_object_mut() {
                        m.insert(NAME.into(), s);
                    }
                }
            }
            if let Some(is) = run.get_mut("intervals").and_then(Value::as_array_mut) {
                for i in is {
                    move_into(i, "tpm_c", "figures", TPM_C);
                }
            }
        }
    }
}

/// A run's constraints (None: not checked).
pub fn constraints(run: &RunRecord) -> Option<Constraints> {
    run.section::<RunSection>(NAME)?.constraints
}

/// Points of a result that carry tpmC.
fn tpcc_points<'a>(r: &'a Labeled) -> impl Iterator<Item = &'a Point> {
    r.doc
        .points
        .iter()
        .filter(|p| p.runs.iter().any(|run| run.figure(TPM_C).is_some()))
}

/// The terminal lines: tpmC and tpmTotal per thread count (the aggregate the table's cells
/// use), and the constraints of TPC-C 5.2.5.3 and 5.2.3.
/// Whether the result ran in the stored-procedure mode (`--procedures`).
fn procedures(doc: &ResultDoc) -> bool {
    doc.config["workload_options"]["procedures"] == Value::Bool(true)
}

fn terminal(doc: &ResultDoc, pick: Pick) -> String {
    let mut out = String::new();
    if procedures(doc) {
        out.push_str("mode: stored procedures (--procedures: one CALL per transaction)\n");
    }
    for p in &doc.points {
        let tpm: Vec<(f64, f64)> = p
            .runs
            .iter()
            .filter_map(|r| Some((r.figure(TPM_C)?, r.figure(TPM_TOTAL)?)))
            .collect();
        if tpm.is_empty() {
            continue;
        }
        let c = pick.of(&tpm.iter().map(|t| t.0).collect::<Vec<_>>());
        let t = pick.of(&tpm.iter().map(|t| t.1).collect::<Vec<_>>());
        out.push_str(&format!(
            "threads {:>4}: tpmC {c:.0}  tpmTotal {t:.0}\n",
            p.threads
        ));
        // The first failing run's line, or the first run's.
        let checks: Vec<Constraints> = p.runs.iter().filter_map(constraints).collect();
        if let Some(first) = checks.first() {
            let passed = checks.iter().filter(|c| c.pass).count();
            let shown = checks.iter().find(|c| !c.pass).unwrap_or(first);
            out.push_str(&format!(
                "threads {:>4}: constraints {passed}/{} runs pass: {}\n",
                p.threads,
                checks.len(),
                super::constraints::summary_line(shown)
            ));
        }
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The run whose tpmC is the median of the point's runs (the lower one for an even count).
fn median_run(p: &Point) -> Option<&RunRecord> {
    let mut runs: Vec<&RunRecord> = p
        .runs
        .iter()
        .filter(|r| r.figure(TPM_C).is_some())
        .collect();
    runs.sort_by(|a, b| {
        let (x, y) = (a.figure(TPM_C), b.figure(TPM_C));
        x.unwrap_or(0.0).total_cmp(&y.unwrap_or(0.0))
    });
    runs.get(runs.len().saturating_sub(1) / 2).copied()
}

/// The run's TPC-C checks for one transaction type: the p90 limit and the mix minimum, each
/// with its verdict (empty cells when the run has no checks).
fn constraint_cells(run: &RunRecord, name: &str) -> (String, String) {
    use super::constraints::Verdict;
    let Some(c) = constraints(run) else {
        return Default::default();
    };
    let mark = |v: Verdict| match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "<b>FAIL</b>",
        Verdict::NoData => "no data",
    };
    let limit = c
        .response_time
        .iter()
        .find(|r| r.transaction == name)
        .map(|r| format!("≤ {} s: {}", r.limit_us as f64 / 1e6, mark(r.verdict)))
        .unwrap_or_default();
    let minimum = c
        .mix
        .iter()
        .find(|m| m.transaction == name)
        .map(|m| match (m.minimum_pct, m.verdict) {
            (Some(min), Some(v)) => format!("weight {:.1}% ≥ {min}%: {}", m.weight_pct, mark(v)),
            _ => "not counted".into(),
        })
        .unwrap_or_default();
    (limit, minimum)
}

/// Writes the section when any result holds TPC-C runs; nothing otherwise.
fn section(h: &mut String, rs: &[Labeled]) {
    if !rs.iter().any(|r| tpcc_points(r).next().is_some()) {
        return;
    }
    h.push_str("<h2>TPC-C</h2><p class=note>tpmC: committed NewOrder transactions per minute (the 1 % the spec rolls back are not counted); no keying or think times, so tpmC here is a throughput figure, not a TPC-C result. Median over the measured runs of each point.</p>");
    let procs: Vec<String> = rs
        .iter()
        .filter(|r| procedures(r.doc))
        .map(|r| escape(&r.label))
        .collect();
    if !procs.is_empty() {
        let _ = write!(
            h,
            "<p class=note>Stored-procedure mode (--procedures: one CALL per transaction, as HammerDB runs TPC-C; not comparable with the statement mode): {}</p>",
            procs.join(", ")
        );
    }

    let series: Vec<Series> = rs
        .iter()
        .map(|r| Series {
            name: r.label.clone(),
            points: tpcc_points(r)
                .map(|p| {
                    let v = p.runs.iter().filter_map(|run| run.figure(TPM_C)).collect();
                    (p.threads as f64, median(v))
                })
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let chart = Chart {
        title: "tpmC vs threads".into(),
        x_label: "threads".into(),
        y_label: "tpmC (NewOrders/min)".into(),
        x_scale: Scale::Log2,
        y_scale: Scale::Linear,
        series,
    };
    let _ = write!(h, "<div class=charts>{}", chart.to_svg());

    // Over time: committed NewOrders per interval, at each result's highest thread count.
    for r in rs {
        let Some(p) = tpcc_points(r).max_by_key(|p| p.threads) else {
            continue;
        };
        let series: Vec<Series> = p
            .runs
            .iter()
            .map(|run| Series {
                name: format!("run {}", run.run),
                points: crate::report::html::full_intervals(run)
                    .filter_map(|i| Some((i.t_s, *i.figures.get(TPM_C)?)))
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        let chart = Chart {
            title: format!("NewOrders over time — {} at {} threads", r.label, p.threads),
            x_label: "time s".into(),
            y_label: "tpmC (NewOrders/min)".into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            series,
        };
        h.push_str(&chart.to_svg());
    }
    h.push_str("</div>");

    // Per transaction type: share, outcomes and latency of the median run of each point.
    h.push_str("<table><tr><th class=l>result</th><th>threads</th><th>tpmC</th><th class=l>transaction</th><th>count</th><th>share</th><th>rolled back</th><th>errors</th><th>p50 µs</th><th>p90 µs</th><th>p99 µs</th><th>max µs</th><th>p90 limit (5.2.5.3)</th><th>mix minimum (5.2.3)</th></tr>");
    for r in rs {
        for p in tpcc_points(r) {
            let Some(run) = median_run(p) else { continue };
            let total: u64 = run.by_kind.values().map(|k| k.ops).sum();
            let mut first = true;
            for (name, k) in &run.by_kind {
                let (label, threads, tpm) = if first {
                    (
                        escape(&r.label),
                        p.threads.to_string(),
                        format!("{:.0}", run.figure(TPM_C).unwrap_or(0.0)),
                    )
                } else {
                    Default::default()
                };
                first = false;
                let l = &k.latency_us;
                let (limit, minimum) = constraint_cells(run, name);
                let _ = write!(
                    h,
                    "<tr><td class=l>{label}</td><td>{threads}</td><td>{tpm}</td><td class=l>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{limit}</td><td>{minimum}</td></tr>",
                    escape(name),
                    k.ops,
                    100.0 * k.ops as f64 / total.max(1) as f64,
                    k.rolled_back,
                    k.errors,
                    l.p50_us,
                    l.p90_us,
                    l.p99_us,
                    l.max_us
                );
            }
            if !run.workload_counters.is_empty() {
                let counters: Vec<String> = run
                    .workload_counters
                    .iter()
                    .map(|(k, v)| format!("{} {v}", escape(k)))
                    .collect();
                let _ = write!(
                    h,
                    "<tr><td></td><td></td><td></td><td class=l colspan=11>run {}: {}</td></tr>",
                    run.run,
                    counters.join(", ")
                );
            }
        }
    }
    h.push_str("</table>");
}
