//! `report --format hgrm`: one HdrHistogram percentile-distribution file per point (operation ×
//! thread count), the text that HdrHistogram's `outputPercentileDistribution` prints and its
//! plotters read. Values are microseconds (the histograms record µs; scaling ratio 1).
//!
//! Every row's value follows the result's own rule (`LatencyHist::summary`: the highest value
//! of the first bucket whose cumulative count reaches ⌈q·N⌉), and the rows include the levels
//! 50, 99 and 99.9 exactly, so the file's p50, p99 and p99.9 are the result's.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;

use hdrhistogram::Histogram;

use super::{Point, ResultDoc};
use crate::error::{Error, Result};
use crate::measure::LatencyHist;

/// HdrHistogram's default: each halving of the distance to 100 % gets this many rows.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// Levels (percent) always written, besides the ticks: the result's p50, p99 and p99.9. The
/// ticks pass 50 but not 99 or 99.9 (they step 98.90625, 99.0625, …).
const EXACT_PERCENTS: [f64; 3] = [50.0, 99.0, 99.9];

/// The files for these results: (file name, text), in the results' and points' order. A point
/// whose runs measured no operation gets no file; a result with no histogram is an error.
pub fn files(docs: &[ResultDoc], sources: &[String]) -> Result<Vec<(String, String)>> {
    let labels = crate::model::labels(docs);
    let mut out = Vec::new();
    let mut taken = BTreeSet::new();
    for ((doc, label), source) in docs.iter().zip(&labels).zip(sources) {
        let mut written = 0;
        for p in &doc.points {
            let h = merged(p).map_err(|e| Error::usage(format!("{source}: {e}")))?;
            if h.count() == 0 {
                eprintln!(
                    "report: {source}: {}@{} measured no operation: no .hgrm file",
                    p.operation, p.threads
                );
                continue;
            }
            let mut stem = sanitize(&format!("{}@{}", p.operation, p.threads));
            if docs.len() > 1 {
                stem = format!("{}-{stem}", sanitize(label));
            }
            // Two points whose names sanitize alike keep both files, the later one numbered.
            let mut name = format!("{stem}.hgrm");
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{stem}-{n}.hgrm");
                n += 1;
            }
            out.push((name, distribution(h.hdr())));
            written += 1;
        }
        if written == 0 {
            return Err(Error::usage(format!(
                "{source}: no latency histogram with a measured operation; --format hgrm needs the points of a `run` result"
            )));
        }
    }
    Ok(out)
}

/// Write the files into `dir` (created when missing; a regular file there is an error), said
/// on stderr. Every result is read before anything is written.
pub fn write_dir(docs: &[ResultDoc], sources: &[String], dir: &str) -> Result<()> {
    if dir == "-" {
        return Err(Error::usage(
            "--format hgrm writes one file per point: -o names a folder, not stdout",
        ));
    }
    let path = Path::new(dir);
    if path.exists() && !path.is_dir() {
        return Err(Error::usage(format!(
            "--output: {dir} is not a folder; --format hgrm writes one .hgrm file per point into a folder"
        )));
    }
    let files = files(docs, sources)?;
    std::fs::create_dir_all(path)
        .map_err(|e| Error::usage(format!("--output: cannot create the folder {dir}: {e}")))?;
    for (name, text) in &files {
        super::json::write_text_atomic(&path.join(name), text)
            .map_err(|e| Error::usage(format!("--output: cannot write {dir}/{name}: {e}")))?;
    }
    eprintln!(
        "report: {dir}/ ({} .hgrm files, values in microseconds)",
        files.len()
    );
    Ok(())
}

/// The point's measured runs' histograms added (exact, as the result's aggregate is made).
fn merged(p: &Point) -> std::result::Result<LatencyHist, String> {
    let mut all = LatencyHist::new();
    for r in &p.runs {
        if r.histogram_hdr_v2.is_empty() {
            return Err(format!(
                "{}@{} run {} has no latency histogram (histogram_hdr_v2)",
                p.operation, p.threads, r.run
            ));
        }
        let h = LatencyHist::decode(&r.histogram_hdr_v2).map_err(|e| {
            format!(
                "{}@{} run {}: histogram_hdr_v2 cannot be read: {e}",
                p.operation, p.threads, r.run
            )
        })?;
        all.add(&h);
    }
    Ok(all)
}

/// A file name part: letters, digits and `.@_-` kept, each run of anything else one `_`.
fn sanitize(s: &str) -> String {
    let mut t = String::new();
    let mut replaced = false;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || "@._-".contains(c) {
            t.push(c);
            replaced = false;
        } else if !replaced {
            t.push('_');
            replaced = true;
        }
    }
    // Never a hidden file or a path step.
    t.trim_start_matches('.').to_string()
}

/// One row: the level iterated to (percent), its value and the count up to its bucket.
struct Row {
    percent: f64,
    value_us: u64,
    total: u64,
}

/// The percentile distribution of a non-empty histogram in HdrHistogram's text format.
pub fn distribution(h: &Histogram<u64>) -> String {
    let digits = usize::from(h.sigfig());
    let mut out = format!(
        "{:>12} {:>14} {:>10} {:>14}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    for r in rows(h) {
        let q = r.percent / 100.0;
        let _ = write!(
            out,
            "{:12.digits$} {q:2.12} {:10}",
            r.value_us as f64, r.total
        );
        if r.percent < 100.0 {
            let _ = write!(out, " {:14.2}", 1.0 / (1.0 - q));
        }
        out.push('\n');
    }
    let sub_buckets = (2 * 10u64.pow(u32::from(h.sigfig()))).next_power_of_two();
    let _ = writeln!(
        out,
        "#[Mean    = {:12.digits$}, StdDeviation   = {:12.digits$}]",
        h.mean(),
        h.stdev()
    );
    let _ = writeln!(
        out,
        "#[Max     = {:12.digits$}, Total count    = {:12}]",
        h.max() as f64,
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    );
    out
}

/// The rows: HdrHistogram's ticks (0 %, then steps that halve with each halving of the
/// distance to 100 %, until the last bucket is reached), the exact levels, and 100 %.
fn rows(h: &Histogram<u64>) -> Vec<Row> {
    // (highest value of the bucket, count up to and including it) for every non-empty bucket.
    let mut cumulative = Vec::new();
    let mut sum = 0;
    for v in h.iter_recorded() {
        sum += v.count_at_value();
        cumulative.push((v.value_iterated_to(), sum));
    }
    let n = h.len();
    let at = |percent: f64| -> Row {
        // The result's rule (LatencyHist::summary calls value_at_quantile(p / 100)); at 0 %
        // the first bucket's highest value, as HdrHistogram's own listing shows it.
        let value_us = if percent == 0.0 {
            cumulative.first().map_or(0, |c| c.0)
        } else {
            h.value_at_quantile(percent / 100.0)
        };
        let i = cumulative.partition_point(|c| c.0 < value_us);
        Row {
            percent,
            value_us,
            total: cumulative.get(i).map_or(n, |c| c.1),
        }
    };
    let mut levels = Vec::new();
    let mut percent: f64 = 0.0;
    // Bounded: a histogram of 2^64 values needs fewer than 2 × 64 × 5 ticks.
    for _ in 0..10_000 {
        levels.push(percent);
        if percent >= 100.0 || at(percent).total >= n {
            break;
        }
        let halvings = (100.0 / (100.0 - percent)).log2().floor();
        let ticks = f64::from(TICKS_PER_HALF_DISTANCE) * 2f64.powf(halvings + 1.0);
        percent += 100.0 / ticks;
    }
    levels.extend(EXACT_PERCENTS);
    levels.push(100.0);
    levels.retain(|&p| p <= 100.0);
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    levels.into_iter().map(at).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the first row at or above `percent`, as a reader of the file finds it.
    fn read_back(text: &str, percent: f64) -> u64 {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .skip(2)
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            // The file has 12 decimals: 0.999000000000 is the level 99.9 / 100.
            .find(|c| c[1].parse::<f64>().unwrap() >= percent / 100.0 - 1e-12)
            .map(|c| c[0].parse::<f64>().unwrap() as u64)
            .unwrap()
    }

    #[test]
    fn percentiles_read_back_are_the_summary_ones() {
        let mut h = LatencyHist::new();
        for i in 1..=100_000u64 {
            // A long tail: most values small, a few up to seconds.
            h.record_us(i % 997 + 1 + if i % 1000 == 0 { i * 50 } else { 0 });
        }
        let text = distribution(h.hdr());
        let s = h.summary();
        assert_eq!(read_back(&text, 50.0), s.p50_us);
        assert_eq!(read_back(&text, 99.0), s.p99_us);
        assert_eq!(read_back(&text, 99.9), s.p99_9_us);
        assert_eq!(read_back(&text, 100.0), s.max_us);
    }

    #[test]
    fn the_format_is_hdrhistograms() {
        let mut h = LatencyHist::new();
        for v in 1..=10u64 {
            h.record_us(v * 100);
        }
        let text = distribution(h.hdr());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "       Value     Percentile TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines[1], "");
        assert_eq!(
            lines[2],
            "     100.000 0.000000000000          1           1.00"
        );
        assert!(
            lines.contains(&"     500.000 0.500000000000          5           2.00"),
            "{text}"
        );
        // 99 % of 10 values: the 10th; the last row has no 1/(1-p).
        assert!(
            lines.contains(&"    1000.000 0.990000000000         10         100.00"),
            "{text}"
        );
        let n = lines.len();
        assert_eq!(lines[n - 4], "    1000.000 1.000000000000         10");
        assert!(
            lines[n - 3].starts_with("#[Mean    =      550.000, StdDeviation   = "),
            "{text}"
        );
        assert_eq!(
            lines[n - 2],
            "#[Max     =     1000.000, Total count    =           10]"
        );
        assert!(lines[n - 1].starts_with("#[Buckets = "), "{text}");
        assert!(lines[n - 1].ends_with(", SubBuckets     =         2048]"));
        // Percentiles rise and values never fall.
        let rows: Vec<(f64, f64)> = lines[2..n - 3]
            .iter()
            .map(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                (c[1].parse().unwrap(), c[0].parse().unwrap())
            })
            .collect();
        assert!(rows.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    }

    #[test]
    fn names_are_sanitized() {
        assert_eq!(sanitize("READ_KEY_POINT@4"), "READ_KEY_POINT@4");
        assert_eq!(sanitize("../a b/c@1"), "_a_b_c@1");
        assert_eq!(sanitize("sqlite #2"), "sqlite_2");
    }
}
