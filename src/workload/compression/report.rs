//! The compression part of the outputs, from the result's `sections["compression"]`: in HTML,
//! bars of on-disk size ÷ raw size per format, load rows/s per format, and the short
//! read/write run's throughput per format when it ran, one bar per result in each format, and
//! the table (CSV from the same rows); in the terminal, one line per format.

use std::fmt::Write;

use serde_json::Value;

use super::{CompressionReport, FormatResult, NAME};
use crate::report::html::Labeled;
use crate::report::svg_bar::BarChart;
use crate::report::tables::{Cell, Table};
use crate::report::terminal::Pick;
use crate::report::{ResultDoc, SectionOwner};

/// The compression workload's part of every output.
pub struct Report;

impl SectionOwner for Report {
    fn key(&self) -> &'static str {
        NAME
    }

    fn claim_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("compression.size_bytes", "one format's size on disk (bytes): compression.size_bytes:innodb-row-compressed-4k"),
            ("compression.size_ratio", "one format's size on disk over the raw bytes"),
            ("compression.load_s", "one format's load time (s)"),
        ]
    }

    fn claim_value(
        &self,
        doc: &ResultDoc,
        metric: &str,
        _op: Option<&str>,
    ) -> Option<crate::report::MetricValues> {
        let (m, format) = metric.split_once(':')?;
        let r: CompressionReport = doc.section(NAME)?;
        let f = r
            .formats
            .iter()
            .find(|f| f.format == format && f.available)?;
        let v = match m {
            "compression.size_bytes" => f.size_bytes? as f64,
            "compression.size_ratio" => f.size_ratio?,
            "compression.load_s" => f.load_s?,
            _ => return None,
        };
        Some(crate::report::MetricValues::Once(v))
    }

    fn html(&self, results: &[Labeled]) -> String {
        let mut h = String::new();
        section(&mut h, &of(results));
        h
    }

    fn tables(&self, results: &[Labeled]) -> Vec<Table> {
        tables(&of(results))
    }

    fn terminal(&self, doc: &ResultDoc, _pick: Pick) -> String {
        doc.section::<CompressionReport>(NAME)
            .map(|c| super::render(&c))
            .unwrap_or_default()
    }

    /// v1 kept the table in the document's `compression` field.
    fn upgrade_v1(&self, doc: &mut Value) {
        crate::report::move_into(doc, "compression", "sections", NAME);
    }
}

/// A result's label with its compression table, for the results that have one.
struct Of {
    label: String,
    c: CompressionReport,
}

fn of(rs: &[Labeled]) -> Vec<Of> {
    rs.iter()
        .filter_map(|r| {
            Some(Of {
                label: r.label.clone(),
                c: r.doc.section(NAME)?,
            })
        })
        .collect()
}

/// Formats measured in any result, in first-seen order.
fn formats(rs: &[Of]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rs {
        for f in &r.c.formats {
            if f.available && !out.contains(&f.format) {
                out.push(f.format.clone());
            }
        }
    }
    out
}

fn bars(
    rs: &[Of],
    cats: &[String],
    v: impl Fn(&FormatResult) -> Option<f64>,
) -> Vec<(String, Vec<Option<f64>>)> {
    rs.iter()
        .filter_map(|r| {
            let c = &r.c;
            let vals: Vec<Option<f64>> = cats
                .iter()
                .map(|name| {
                    c.formats
                        .iter()
                        .find(|f| &f.format == name && f.available)
                        .and_then(&v)
                })
                .collect();
            vals.iter()
                .any(Option::is_some)
                .then(|| (r.label.clone(), vals))
        })
        .collect()
}

/// Writes the section when any result holds a compression table; nothing otherwise.
fn section(h: &mut String, rs: &[Of]) {
    if rs.is_empty() {
        return;
    }
    let cats = formats(rs);
    h.push_str("<h2>Compression</h2>");
    for r in rs {
        let c = &r.c;
        let _ = write!(
            h,
            "<p class=note>{}: {} rows of {:.1} raw bytes each ({:.2} MB raw, seed {}).</p>",
            crate::report::svg::escape(&r.label),
            c.rows,
            c.raw_bytes_per_row,
            c.raw_bytes as f64 / 1e6,
            c.seed
        );
    }
    h.push_str("<p class=note>Size: allocated bytes on disk after a forced flush (how each was measured is in the table) divided by the raw bytes of the rows; below the dashed line the format is smaller than the raw data. Load: rows per second of the parallel load. Read/write: median ops/s of the short mixed run on the format's table at its highest thread count.</p><div class=charts>");
    let charts = [
        BarChart {
            title: "On-disk size ÷ raw size per format".into(),
            y_label: "size ratio (on disk ÷ raw)".into(),
            categories: cats.clone(),
            series: bars(rs, &cats, |f| f.size_ratio),
            reference: Some((1.0, "raw size".into())),
        },
        BarChart {
            title: "Load speed per format".into(),
            y_label: "rows/s loaded".into(),
            categories: cats.clone(),
            series: bars(rs, &cats, |f| f.load_rows_per_s),
            reference: None,
        },
        BarChart {
            title: "Read/write run per format".into(),
            y_label: "ops/s".into(),
            categories: cats.clone(),
            series: bars(rs, &cats, |f| f.read_write_ops_per_s),
            reference: None,
        },
    ];
    for c in charts.iter().filter(|c| c.bar_count() > 0) {
        h.push_str(&c.to_svg());
    }
    h.push_str("</div>");
    for t in tables(rs) {
        h.push_str(&t.to_html());
    }
}

/// One row per result and format (formats not available here too, with the reason).
fn tables(rs: &[Of]) -> Vec<Table> {
    let mut t = Table::new(
        "compression",
        &[
            ("result", "result"),
            ("format", "format"),
            ("engine", "engine"),
            ("definition", "definition"),
            ("rows", "rows"),
            ("size_bytes", "size B"),
            ("size_ratio", "size ÷ raw"),
            ("size_method", "size from"),
            ("load_s", "load s"),
            ("load_rows_per_s", "load rows/s"),
            ("read_write_ops_per_s", "r/w ops/s"),
            ("read_write_threads", "r/w threads"),
            ("not_available_because", "not available because"),
        ],
    );
    for r in rs {
        for f in &r.c.formats {
            t.rows.push(vec![
                Cell::text(&r.label),
                Cell::text(&f.format),
                Cell::text(&f.engine),
                Cell::text(&f.definition),
                f.rows.map_or(Cell::Empty, Cell::Int),
                f.size_bytes.map_or(Cell::Empty, Cell::Int),
                Cell::opt(f.size_ratio, 3),
                f.size_method.as_deref().map_or(Cell::Empty, Cell::text),
                Cell::opt(f.load_s, 2),
                Cell::opt(f.load_rows_per_s, 0),
                Cell::opt(f.read_write_ops_per_s, 0),
                f.read_write_threads
                    .map_or(Cell::Empty, |n| Cell::Int(n as u64)),
                if f.available {
                    Cell::Empty
                } else {
                    Cell::text(f.reason.as_deref().unwrap_or("not available"))
                },
            ]);
        }
    }
    vec![t]
}
