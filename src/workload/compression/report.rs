//! The compression part of the outputs, from the result's `sections["compression"]`: in HTML,
//! bars of on-disk size ÷ raw size per format, load rows/s per format, and the short
//! read/write run's throughput per format when it ran, one bar per result in each format, and
//! the table (CSV from the same rows); in the terminal, one line per format.

use std::fmt::Write;

use serde_json::Value;

use super::{CompressionReport, FormatResult, NAME};
use crate::model::ResultDoc;
use crate::report::html::Labeled;
use crate::report::svg_bar::BarChart;
use crate::report::tables::{Cell, Table};
use crate::report::terminal::Pick;
use crate::report::SectionOwner;

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
        let (m, f) = claimed(doc, metric)?;
        let v = match m {
            "compression.size_bytes" => f.size_bytes? as f64,
            "compression.size_ratio" => f.size_ratio?,
            "compression.load_s" => f.load_s?,
            _ => return None,
        };
        Some(crate::report::MetricValues::Once(v))
    }

    /// Sizes: the size measurement's flag; the load time: the load's. Unknown in results
    /// made before they were measured.
    fn claim_disturbed(&self, doc: &ResultDoc, metric: &str, _op: Option<&str>) -> Option<bool> {
        let (m, f) = claimed(doc, metric)?;
        match m {
            "compression.size_bytes" | "compression.size_ratio" => {
                f.size_others_cpus.map(|_| f.size_disturbed)
            }
            "compression.load_s" => f.load_others_cpus.map(|_| f.load_disturbed),
            _ => None,
        }
    }

    /// Disturbed loads and size measurements of every format (the read/write runs are the
    /// points' own).
    fn disturbed_parts(&self, doc: &ResultDoc) -> usize {
        doc.section::<CompressionReport>(NAME).map_or(0, |r| {
            r.formats.iter().map(|f| f.disturbed_parts().len()).sum()
        })
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

/// A claim's metric name and the measured format it names (`compression.load_s:innodb`).
fn claimed<'m>(doc: &ResultDoc, metric: &'m str) -> Option<(&'m str, FormatResult)> {
    let (m, format) = metric.split_once(':')?;
    let r: CompressionReport = doc.section(NAME)?;
    let f = r
        .formats
        .into_iter()
        .find(|f| f.format == format && f.available)?;
    Some((m, f))
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
    h.push_str("<p class=note>Size: allocated bytes on disk after a forced flush (how each was measured is in the table) divided by the raw bytes of the rows; below the dashed line the format is smaller than the raw data. Load: rows per second of the parallel load. Read/write: median ops/s of the short mixed run on the format's table at its highest thread count. Disturbed: other processes used more than 0.1 CPU during the format's load or its size measurement.</p><div class=charts>");
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
            ("disturbed", "disturbed"),
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
                match f.disturbed_parts() {
                    p if p.is_empty() => Cell::Empty,
                    p => Cell::text(p.join(", ")),
                },
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

#[cfg(test)]
mod tests {
    use super::*;

    fn format(name: &str, load: Option<(f64, bool)>, size: Option<(f64, bool)>) -> FormatResult {
        FormatResult {
            format: name.into(),
            engine: "InnoDB".into(),
            definition: String::new(),
            available: true,
            reason: None,
            server_options: None,
            rows: Some(1000),
            load_s: Some(2.0),
            load_rows_per_s: Some(500.0),
            size_bytes: Some(65536),
            size_method: Some("files_allocated".into()),
            server_reported_bytes: None,
            size_ratio: Some(0.5),
            flush_s: Some(0.1),
            pages_compressed: None,
            page_compression_saved_bytes: None,
            page_compressed_ratio: None,
            read_write_ops_per_s: None,
            read_write_threads: None,
            load_others_cpus: load.map(|l| l.0),
            load_disturbed: load.is_some_and(|l| l.1),
            size_others_cpus: size.map(|s| s.0),
            size_disturbed: size.is_some_and(|s| s.1),
        }
    }

    fn doc(formats: Vec<FormatResult>) -> ResultDoc {
        let mut d = ResultDoc::default();
        d.set_section(
            NAME,
            &CompressionReport {
                rows: 1000,
                seed: 1,
                raw_bytes: 131072,
                raw_bytes_per_row: 131.072,
                formats,
            },
        );
        d
    }

    #[test]
    fn claims_read_the_load_or_the_size_flag() {
        let d = doc(vec![
            format("innodb", Some((0.8, true)), Some((0.0, false))),
            format("innodb-page-lz4", Some((0.0, false)), Some((0.9, true))),
            format("aria", None, None),
        ]);
        let r = Report;
        let dis = |m: &str| r.claim_disturbed(&d, m, None);
        assert_eq!(dis("compression.load_s:innodb"), Some(true));
        assert_eq!(dis("compression.size_bytes:innodb"), Some(false));
        assert_eq!(dis("compression.size_ratio:innodb"), Some(false));
        assert_eq!(dis("compression.load_s:innodb-page-lz4"), Some(false));
        assert_eq!(dis("compression.size_ratio:innodb-page-lz4"), Some(true));
        // Made before the measure; a format not in the result; no format named.
        assert_eq!(dis("compression.load_s:aria"), None);
        assert_eq!(dis("compression.load_s:rocksdb"), None);
        assert_eq!(dis("compression.load_s"), None);
        assert_eq!(r.disturbed_parts(&d), 2);
        let c: CompressionReport = d.section(NAME).unwrap();
        let t = super::super::render(&c);
        assert!(
            t.contains("DISTURBED (load)") && t.contains("DISTURBED (size)"),
            "{t}"
        );
        let quiet = doc(vec![format(
            "innodb",
            Some((0.0, false)),
            Some((0.0, false)),
        )]);
        assert_eq!(r.disturbed_parts(&quiet), 0);
        assert!(!super::super::render(&quiet.section(NAME).unwrap()).contains("DISTURBED"));
    }
}
