//! The iiBench part of the HTML report, from each point's `sections["iibench"]`: the insert
//! rate against cumulative rows inserted (the report's curve, one line per result), bytes
//! written per row per window when the server's writes were sampled, the query rate when query
//! threads ran, and the summary and per-window tables (CSV from the same rows).

use std::fmt::Write;

use serde_json::Value;

use super::result::{IibenchResult, Window};
use super::NAME;
use crate::model::{Point, ResultDoc};
use crate::report::html::Labeled;
use crate::report::svg::{auto_scale, escape, Chart, Series};
use crate::report::tables::{Cell, Table};
use crate::report::SectionOwner;

/// iiBench's part of every output.
pub struct Report;

impl SectionOwner for Report {
    fn key(&self) -> &'static str {
        NAME
    }

    fn claim_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "iibench.rows_per_s",
                "insert rate over the whole run (rows/s)",
            ),
            (
                "iibench.last_window_rows_per_s",
                "insert rate at the end: the last three full windows, one sample each (rows/s)",
            ),
            (
                "iibench.first_window_rows_per_s",
                "insert rate at the start: the first three full windows, one sample each (rows/s)",
            ),
            (
                "iibench.written_bytes_per_row",
                "bytes the server wrote per inserted row",
            ),
            (
                "iibench.avg_write_bytes",
                "average size of one write to the data's block device (bytes)",
            ),
            (
                "iibench.disk_bytes_per_row",
                "growth of the data on disk per inserted row (bytes)",
            ),
        ]
    }

    fn claim_value(
        &self,
        doc: &ResultDoc,
        metric: &str,
        op: Option<&str>,
    ) -> Option<crate::report::MetricValues> {
        let (_, ii) = claimed(doc, op)?;
        // The rate at either end of the curve: three full windows, each a sample, so that the
        // claim sees the spread of the rate there (one window alone has none).
        let full: Vec<f64> = ii
            .windows
            .iter()
            .filter(|w| !w.partial)
            .map(|w| w.rows_per_s)
            .collect();
        let ends = |last: bool| {
            let k = full.len().min(END_WINDOWS);
            let v = if last {
                full[full.len() - k..].to_vec()
            } else {
                full[..k].to_vec()
            };
            (!v.is_empty()).then_some(crate::report::MetricValues::PerRun(v))
        };
        let v = match metric {
            "iibench.last_window_rows_per_s" => return ends(true),
            "iibench.first_window_rows_per_s" => return ends(false),
            "iibench.rows_per_s" => ii.rows_per_s,
            "iibench.written_bytes_per_row" => ii.wear.written_bytes_per_row?,
            "iibench.avg_write_bytes" => ii.wear.device.as_ref()?.avg_write_bytes,
            "iibench.disk_bytes_per_row" => ii.wear.disk_growth_bytes_per_row?,
            _ => return None,
        };
        Some(crate::report::MetricValues::Once(v))
    }

    /// The flags of the windows the end rates read (unknown in results made before windows
    /// were checked); the run's for the whole-run metrics.
    fn claim_disturbed(&self, doc: &ResultDoc, metric: &str, op: Option<&str>) -> Option<bool> {
        let (p, ii) = claimed(doc, op)?;
        match metric {
            // The windows the end rates read (see claim_value).
            "iibench.last_window_rows_per_s" | "iibench.first_window_rows_per_s" => {
                let full: Vec<&Window> = ii.windows.iter().filter(|w| !w.partial).collect();
                let k = full.len().min(END_WINDOWS);
                let read = if metric.contains("last") {
                    &full[full.len() - k..]
                } else {
                    &full[..k]
                };
                read.iter()
                    .all(|w| w.others_cpus.is_some())
                    .then(|| read.iter().any(|w| w.disturbed))
            }
            m if self.claim_metrics().iter().any(|(n, _)| *n == m) => {
                (!p.runs.is_empty()).then(|| p.runs.iter().any(|r| r.disturbed))
            }
            _ => None,
        }
    }

    /// Disturbed windows of every iiBench point (the runs are the points' own).
    fn disturbed_parts(&self, doc: &ResultDoc) -> usize {
        doc.points
            .iter()
            .filter_map(|p| p.section::<IibenchResult>(NAME))
            .map(|ii| ii.windows.iter().filter(|w| w.disturbed).count())
            .sum()
    }

    fn html(&self, results: &[Labeled]) -> String {
        let mut h = String::new();
        section(&mut h, results);
        h
    }

    fn tables(&self, results: &[Labeled]) -> Vec<Table> {
        tables(results)
    }

    /// v1 kept each point's section in its `iibench` field.
    fn upgrade_v1(&self, doc: &mut Value) {
        for p in crate::report::points_mut(doc) {
            crate::report::move_into(p, "iibench", "sections", NAME);
        }
    }
}

/// The point a claim reads (the first iiBench point of its operation) and its section.
fn claimed<'d>(doc: &'d ResultDoc, op: Option<&str>) -> Option<(&'d Point, IibenchResult)> {
    doc.points
        .iter()
        .filter(|p| op.is_none_or(|o| p.operation.eq_ignore_ascii_case(o)))
        .find_map(|p| Some((p, p.section(NAME)?)))
}

/// Windows read as samples of the rate at the start or the end of the curve (claims).
const END_WINDOWS: usize = 3;

/// The window behind `last_window_rows_per_s` in the tables: the last one that is not partial.
fn last_full(ii: &IibenchResult) -> Option<&Window> {
    ii.windows.iter().rev().find(|w| !w.partial)
}

/// Points plotted per line at most: longer curves are merged in runs of consecutive windows
/// (rows and time added, so a merged point's rate is exact for its span).
const MAX_POINTS: usize = 300;
/// Windows listed in the page's per-window table at most (all of them are in the CSV).
const MAX_HTML_WINDOWS: usize = 100;

/// (result, point, its iibench section) for every iibench point, with the line's name.
fn curves<'a>(rs: &'a [Labeled]) -> Vec<(String, &'a Point, IibenchResult)> {
    let mut out = Vec::new();
    for r in rs {
        let pts: Vec<(&Point, IibenchResult)> = r
            .doc
            .points
            .iter()
            .filter_map(|p| Some((p, p.section(NAME)?)))
            .collect();
        let several = pts.len() > 1;
        for (p, ii) in pts {
            let name = if several {
                format!("{} {} thr", r.label, p.threads)
            } else {
                r.label.clone()
            };
            out.push((name, p, ii));
        }
    }
    out
}

/// Full windows (a short last one only when it is the only window).
fn full_windows(ii: &IibenchResult) -> Vec<&Window> {
    let full: Vec<&Window> = ii.windows.iter().filter(|w| !w.partial).collect();
    if full.is_empty() {
        ii.windows.iter().collect()
    } else {
        full
    }
}

/// One merged point: (rows at its end, rows, elapsed s, server bytes written if every window
/// had them, queries).
struct Span {
    rows_end: u64,
    rows: u64,
    elapsed_s: f64,
    written: Option<u64>,
    queries: u64,
}

fn spans(ws: &[&Window]) -> Vec<Span> {
    let k = ws.len().div_ceil(MAX_POINTS).max(1);
    ws.chunks(k)
        .map(|c| Span {
            rows_end: c.last().map_or(0, |w| w.rows_end),
            rows: c.iter().map(|w| w.rows).sum(),
            elapsed_s: c.iter().map(|w| w.elapsed_s).sum(),
            written: c
                .iter()
                .map(|w| w.server_written_bytes)
                .sum::<Option<u64>>(),
            queries: c.iter().map(|w| w.queries).sum(),
        })
        .collect()
}

fn chart(title: &str, y_label: &str, series: Vec<Series>) -> Chart {
    let x_scale = auto_scale(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let y_scale = auto_scale(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    Chart {
        title: title.into(),
        x_label: "rows inserted".into(),
        y_label: y_label.into(),
        x_scale,
        y_scale,
        series,
    }
}

/// Writes the section when any result holds iibench points; nothing otherwise.
fn section(h: &mut String, rs: &[Labeled]) {
    let cs = curves(rs);
    if cs.is_empty() {
        return;
    }
    h.push_str("<h2>iiBench: insert rate vs rows inserted</h2><p class=note>Rows per second of each window of rows against the rows inserted so far (the window ends there), one line per result; a short last window is left out. Long curves are drawn with consecutive windows merged (at most 300 points per line); the CSV (<code>--format csv --table iibench-windows</code>) has every window. Bytes written are the server process's writes (/proc/PID/io) during the window, so they lag the inserts that caused them (flushes, compaction). Disturbed: other processes used more than 0.1 CPU during the run or the window.</p><div class=charts>");
    let line = |f: &dyn Fn(&Span) -> Option<f64>| -> Vec<Series> {
        cs.iter()
            .map(|(name, _, ii)| Series {
                name: name.clone(),
                points: spans(&full_windows(ii))
                    .iter()
                    .filter_map(|s| Some((s.rows_end as f64, f(s)?)))
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let rate = line(&|s| (s.elapsed_s > 0.0).then(|| s.rows as f64 / s.elapsed_s));
    h.push_str(&chart("Insert rate vs rows inserted", "rows/s", rate).to_svg());
    let written = line(&|s| Some(s.written? as f64 / s.rows.max(1) as f64));
    if !written.is_empty() {
        h.push_str(
            &chart(
                "Bytes written per row inserted",
                "server bytes written/row",
                written,
            )
            .to_svg(),
        );
    }
    if cs.iter().any(|(_, _, ii)| ii.queries.is_some()) {
        let q = line(&|s| (s.elapsed_s > 0.0).then(|| s.queries as f64 / s.elapsed_s));
        if !q.is_empty() {
            h.push_str(&chart("Query rate while inserting", "queries/s", q).to_svg());
        }
    }
    h.push_str("</div>");
    let tables = tables(rs);
    h.push_str(&tables[0].to_html());
    let windows = &tables[1];
    if windows.rows.len() <= MAX_HTML_WINDOWS {
        let _ = write!(
            h,
            "<details><summary>Every window ({} rows)</summary>{}</details>",
            windows.rows.len(),
            windows.to_html()
        );
    } else {
        let _ = write!(
            h,
            "<p class=note>{} windows: too many for the page; <code>{}</code> lists them.</p>",
            windows.rows.len(),
            escape("enginebench report RESULT --format csv --table iibench-windows -o -")
        );
    }
}

/// The summary (one row per result and point) and every window.
fn tables(rs: &[Labeled]) -> Vec<Table> {
    let mut sum = Table::new(
        "iibench",
        &[
            ("result", "result"),
            ("threads", "threads"),
            ("rows", "rows"),
            ("rows_per_s", "rows/s"),
            ("last_window_rows_per_s", "last window rows/s"),
            ("written_bytes_per_row", "written B/row"),
            ("write_amplification", "write amp."),
            ("disk_growth_bytes_per_row", "disk growth B/row"),
            ("space_amplification", "space amp."),
            ("queries_per_s", "queries/s"),
            ("query_p99_us", "query p99 µs"),
            ("disturbed", "disturbed"),
        ],
    );
    let mut win = Table::new(
        "iibench-windows",
        &[
            ("result", "result"),
            ("threads", "threads"),
            ("rows_end", "rows inserted"),
            ("rows", "rows"),
            ("t_s", "t s"),
            ("rows_per_s", "rows/s"),
            ("batch_p99_us", "batch p99 µs"),
            ("errors", "errors"),
            ("queries_per_s", "queries/s"),
            ("server_written_bytes", "written B"),
            ("written_bytes_per_row", "written B/row"),
            ("write_amplification", "write amp."),
            ("partial", "partial"),
            ("others_cpus", "others' CPUs"),
            ("disturbed", "disturbed"),
        ],
    );
    for (name, p, ii) in curves(rs) {
        let w = &ii.wear;
        let q = ii.queries.as_ref();
        sum.rows.push(vec![
            Cell::text(&name),
            Cell::Int(p.threads as u64),
            Cell::Int(ii.rows),
            Cell::Num(ii.rows_per_s, 0),
            Cell::opt(ii.last_window_rows_per_s, 0),
            Cell::opt(w.written_bytes_per_row, 1),
            Cell::opt(w.write_amplification, 2),
            Cell::opt(w.disk_growth_bytes_per_row, 1),
            Cell::opt(w.space_amplification, 2),
            Cell::opt(q.map(|q| q.queries_per_s), 1),
            q.map_or(Cell::Empty, |q| Cell::Int(q.latency_us.p99_us)),
            disturbed_cell(p, &ii),
        ]);
        for x in &ii.windows {
            win.rows.push(vec![
                Cell::text(&name),
                Cell::Int(p.threads as u64),
                Cell::Int(x.rows_end),
                Cell::Int(x.rows),
                Cell::Num(x.t_s, 3),
                Cell::Num(x.rows_per_s, 0),
                Cell::Int(x.latency_us.p99_us),
                Cell::Int(x.errors),
                Cell::Num(x.queries_per_s, 1),
                x.server_written_bytes.map_or(Cell::Empty, Cell::Int),
                Cell::opt(x.written_bytes_per_row, 1),
                Cell::opt(x.write_amplification, 2),
                Cell::text(if x.partial { "yes" } else { "no" }),
                Cell::opt(x.others_cpus, 2),
                Cell::text(if x.disturbed { "yes" } else { "" }),
            ]);
        }
    }
    vec![sum, win]
}

/// The summary's mark: which of the point's measurements other processes disturbed.
fn disturbed_cell(p: &Point, ii: &IibenchResult) -> Cell {
    let mut parts = Vec::new();
    if p.runs.iter().any(|r| r.disturbed) {
        parts.push("run".to_string());
    }
    if last_full(ii).is_some_and(|w| w.disturbed) {
        parts.push("last window".into());
    }
    let n = ii.windows.iter().filter(|w| w.disturbed).count();
    if n > 0 {
        parts.push(format!("{n} of {} windows", ii.windows.len()));
    }
    if parts.is_empty() {
        Cell::Empty
    } else {
        Cell::text(parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunRecord;

    fn window(rows_end: u64, others_cpus: Option<f64>, partial: bool) -> Window {
        Window {
            rows_end,
            rows: 1000,
            batches: 10,
            errors: 0,
            t_s: rows_end as f64 / 1000.0,
            elapsed_s: 1.0,
            rows_per_s: 1000.0,
            latency_us: Default::default(),
            logical_bytes: 32_000,
            queries: 0,
            queries_per_s: 0.0,
            server_written_bytes: None,
            written_bytes_per_row: None,
            write_amplification: None,
            partial,
            others_cpus,
            disturbed: others_cpus.is_some_and(|c| crate::measure::disturbed(c, 1.0)),
        }
    }

    fn doc(windows: Vec<Window>, run_disturbed: bool) -> ResultDoc {
        let mut p = Point {
            operation: "insert".into(),
            runs: vec![RunRecord {
                disturbed: run_disturbed,
                ..Default::default()
            }],
            ..Default::default()
        };
        p.set_section(
            NAME,
            &IibenchResult {
                rows: 3000,
                batches: 30,
                rows_per_commit: 100,
                window_rows: 1000,
                elapsed_s: 3.0,
                rows_per_s: 1000.0,
                logical_bytes: 96_000,
                last_window_rows_per_s: Some(1000.0),
                windows,
                queries: None,
                wear: Default::default(),
                deletes: None,
            },
        );
        ResultDoc {
            points: vec![p],
            ..Default::default()
        }
    }

    #[test]
    fn last_window_has_its_own_flag() {
        // The second window disturbed; the last three full ones quiet; a partial one after
        // them disturbed (not one the end rate reads).
        let d = doc(
            vec![
                window(1000, Some(0.0), false),
                window(2000, Some(0.9), false),
                window(3000, Some(0.0), false),
                window(4000, Some(0.0), false),
                window(5000, Some(0.02), false),
                window(5100, Some(0.5), true),
            ],
            true,
        );
        let r = Report;
        let dis = |m: &str| r.claim_disturbed(&d, m, None);
        assert_eq!(dis("iibench.last_window_rows_per_s"), Some(false));
        // The start rate reads the first three full windows, the second of them disturbed.
        assert_eq!(dis("iibench.first_window_rows_per_s"), Some(true));
        // Whole-run metrics: the run's flag.
        assert_eq!(dis("iibench.rows_per_s"), Some(true));
        assert_eq!(dis("iibench.written_bytes_per_row"), Some(true));
        assert_eq!(dis("iibench.nope"), None);
        assert_eq!(
            r.claim_disturbed(&d, "iibench.rows_per_s", Some("select")),
            None
        );
        assert_eq!(r.disturbed_parts(&d), 2);

        let last = doc(
            vec![
                window(1000, Some(0.0), false),
                window(2000, Some(0.9), false),
            ],
            false,
        );
        assert_eq!(
            r.claim_disturbed(&last, "iibench.last_window_rows_per_s", None),
            Some(true)
        );
        assert_eq!(
            r.claim_disturbed(&last, "iibench.rows_per_s", None),
            Some(false)
        );
        let ls = Labeled {
            label: "a".into(),
            doc: &last,
        };
        let t = tables(std::slice::from_ref(&ls));
        assert!(
            matches!(t[0].rows[0].last(), Some(Cell::Text(s)) if s == "last window, 1 of 2 windows"),
            "{:?}",
            t[0].rows[0]
        );

        // Windows made before they were checked: unknown.
        let old = doc(vec![window(1000, None, false)], false);
        assert_eq!(
            r.claim_disturbed(&old, "iibench.last_window_rows_per_s", None),
            None
        );
        assert_eq!(r.disturbed_parts(&old), 0);
    }
}
