//! Workloads with several kinds of operation (request types, a custom workload's
//! transactions): ops/s of each kind per interval and each kind's count, share, rate, errors
//! and latency; CSV from the same rows. Points whose runs carry derived figures belong to a
//! workload whose own section shows its kinds next to those figures, and are left out here.

use std::fmt::Write;

use super::svg::{auto_scale, escape, Chart, Scale, Series};
use super::tables::{Cell, Table};
use crate::model::{full_intervals, Labeled};
use crate::model::{Point, RunRecord};

/// Points drawn per line at most: longer runs are drawn with consecutive intervals merged
/// (operations and time added, so a merged point's rate is exact for its span).
const MAX_POINTS: usize = 150;

fn kind_points<'a>(r: &'a Labeled) -> impl Iterator<Item = &'a Point> {
    r.doc.points.iter().filter(|p| {
        p.runs.iter().all(|run| run.figures.is_empty())
            && p.runs.iter().any(|run| !run.by_kind.is_empty())
    })
}

/// The run whose ops/s is the median of the point's runs (the lower one for an even count).
fn median_run(p: &Point) -> Option<&RunRecord> {
    let mut runs: Vec<&RunRecord> = p.runs.iter().filter(|r| !r.by_kind.is_empty()).collect();
    runs.sort_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s));
    runs.get(runs.len().saturating_sub(1) / 2).copied()
}

/// One line per kind: (end of span s, ops/s of the kind over the span).
fn per_kind_series(run: &RunRecord) -> Vec<Series> {
    let mut spans: Vec<(f64, f64, &crate::model::IntervalSample)> = Vec::new();
    let mut prev = 0.0;
    for i in &run.intervals {
        spans.push((prev, i.t_s, i));
        prev = i.t_s;
    }
    // The same intervals the other time series draw (a short last one left out).
    let keep: Vec<f64> = full_intervals(run).map(|i| i.t_s).collect();
    spans.retain(|s| keep.contains(&s.1));
    let k = spans.len().div_ceil(MAX_POINTS).max(1);
    run.by_kind
        .keys()
        .map(|kind| Series {
            name: kind.clone(),
            points: spans
                .chunks(k)
                .filter_map(|c| {
                    let (start, end) = (c.first()?.0, c.last()?.1);
                    let ops: u64 = c
                        .iter()
                        .map(|s| s.2.by_kind.get(kind).map_or(0, |t| t.ops))
                        .sum();
                    (end > start).then(|| (end, ops as f64 / (end - start)))
                })
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// Writes the section when any result holds such points; nothing otherwise.
pub fn section(h: &mut String, rs: &[Labeled]) {
    if !rs.iter().any(|r| kind_points(r).next().is_some()) {
        return;
    }
    h.push_str("<h2>Operations by kind</h2><p class=note>For workloads with several kinds of operation (request types, transactions): ops/s of each kind per interval of the median run (by ops/s) at each operation's highest thread count, and each kind's count, share, rate and latency in the median run of every point. A kind that never ran in an interval plots as 0; a log scale is used when the kinds' rates span more than two decades, and then zero is drawn at the axis's bottom. Long runs are drawn with consecutive intervals merged (at most 150 points per line).</p><div class=charts>");
    for r in rs {
        let mut ops: Vec<&str> = Vec::new();
        for p in kind_points(r) {
            if !ops.contains(&p.operation.as_str()) {
                ops.push(&p.operation);
            }
        }
        for op in ops {
            let Some(p) = kind_points(r)
                .filter(|p| p.operation == op)
                .max_by_key(|p| p.threads)
            else {
                continue;
            };
            let Some(run) = median_run(p) else { continue };
            let series = per_kind_series(run);
            if series.is_empty() {
                continue;
            }
            let y_scale = match auto_scale(series.iter().flat_map(|s| s.points.iter().map(|x| x.1)))
            {
                Scale::Linear => Scale::Linear,
                _ => Scale::Log10,
            };
            let chart = Chart {
                title: format!(
                    "{} {} by kind — {}, {} threads, run {}",
                    p.workload, op, r.label, p.threads, run.run
                ),
                x_label: "time s".into(),
                y_label: "ops/s".into(),
                x_scale: Scale::Linear,
                y_scale,
                series,
            };
            h.push_str(&chart.to_svg());
        }
    }
    h.push_str("</div>");
    for t in tables(rs) {
        h.push_str(&t.to_html());
    }
    let _ = write!(
        h,
        "<p class=note>{}</p>",
        escape("Latency per kind is that of the median run (per-kind histograms are not kept across runs); the aggregate latency of all kinds merged is in the Latency section.")
    );
}

/// One row per result, point and kind (the median run of the point).
pub fn tables(rs: &[Labeled]) -> Vec<Table> {
    let mut t = Table::new(
        "kinds",
        &[
            ("result", "result"),
            ("operation", "operation"),
            ("threads", "threads"),
            ("run", "run"),
            ("kind", "kind"),
            ("ops", "ops"),
            ("share", "share %"),
            ("ops_per_s", "ops/s"),
            ("rolled_back", "rolled back"),
            ("errors", "errors"),
            ("p50_us", "p50 µs"),
            ("p90_us", "p90 µs"),
            ("p99_us", "p99 µs"),
            ("p99_9_us", "p99.9 µs"),
            ("max_us", "max µs"),
        ],
    );
    for r in rs {
        for p in kind_points(r) {
            let Some(run) = median_run(p) else { continue };
            let total: u64 = run.by_kind.values().map(|k| k.ops).sum();
            for (kind, k) in &run.by_kind {
                let l = &k.latency_us;
                t.rows.push(vec![
                    Cell::text(&r.label),
                    Cell::text(&p.operation),
                    Cell::Int(p.threads as u64),
                    Cell::Int(run.run as u64),
                    Cell::text(kind),
                    Cell::Int(k.ops),
                    Cell::Num(100.0 * k.ops as f64 / total.max(1) as f64, 1),
                    Cell::Num(k.ops as f64 / run.elapsed_s.max(1e-9), 1),
                    Cell::Int(k.rolled_back),
                    Cell::Int(k.errors),
                    Cell::Int(l.p50_us),
                    Cell::Int(l.p90_us),
                    Cell::Int(l.p99_us),
                    Cell::Int(l.p99_9_us),
                    Cell::Int(l.max_us),
                ]);
            }
        }
    }
    vec![t]
}
