//! `compare A B`: for every metric both results have, the ratio B/A and whether the difference
//! is larger than the noise between server starts (95 %). `--fail-on` bounds on these rows are
//! in [`super::gate`].
//!
//! The unit of significance is the server start. A result is one start (a fresh server
//! process, or the one server a run used): a start has a speed of its own, shared by every run
//! on it, so the runs of one result agree with each other far more closely than two starts of
//! one configuration do, and pooling them as independent samples calls two starts of the same
//! thing "significantly different" most of the time. A verdict therefore rests on a spread
//! between starts ([`judge`]): the spread of one side's results when it has several (a catalog
//! baseline: each catalogued result is one observation), or, when each side is one start, a
//! between-start spread measured apart (`--between-start calibration.json`, written by
//! `enginebench reproduce NAME --calibrate`: ops_per_s only). Without one the verdict is
//! "significance unknown", never a claim either way.

use std::path::Path;

use serde::Serialize;

use super::{Point, ResultDoc};
use crate::model::mean_var;

/// The unit every verdict counts: one result, measured on one server start.
pub const UNIT: &str = "server start";

/// Why significance is unknown when each side is one server start and no spread was given.
pub const NO_SPREAD: &str =
    "each side is one server start; give --between-start calibration.json or a catalog baseline";

/// Why significance is unknown for the metrics a calibration does not cover.
pub const OPS_ONLY: &str =
    "each side is one server start; the --between-start calibration covers ops_per_s only";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The difference is larger than the noise between server starts (95 %).
    Significant,
    /// Within the noise between server starts.
    WithinNoise,
    /// No between-start spread to judge by (each side one start, no calibration): nothing is
    /// claimed either way. The row's `why` says what is missing.
    Unknown,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Significant => "significant",
            Verdict::WithinNoise => "within noise",
            Verdict::Unknown => "significance unknown",
        }
    }
}

/// A between-start spread measured apart from the compared results: the standard deviation of
/// ln(a/b) of `ops_per_s` between two server starts of one configuration, each side one start,
/// and its degrees of freedom (`pooled_start_sd` and `pooled_df` of the `calibration.json`
/// that `enginebench reproduce NAME --calibrate` writes).
#[derive(Debug, Clone, PartialEq)]
pub struct BetweenStart {
    pub sd: f64,
    pub df: usize,
    /// The file it was read from, or the catalog query it was computed from.
    pub source: String,
    /// A calibration, or past results of the configuration.
    pub from: SpreadFrom,
}

impl BetweenStart {
    /// Read `calibration.json` (or the folder holding it). The error is one line naming the
    /// file and what is wrong with it.
    pub fn read(path: &Path) -> Result<BetweenStart, String> {
        let file = if path.is_dir() {
            path.join("calibration.json")
        } else {
            path.to_path_buf()
        };
        let shown = file.display().to_string();
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("--between-start {shown}: cannot read it: {e}"))?;
        BetweenStart::parse(&text, &shown)
    }

    /// Parse the text of a calibration.json read from `source`.
    pub fn parse(text: &str, source: &str) -> Result<BetweenStart, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            format!("--between-start {source}: not a calibration.json (reproduce NAME --calibrate writes one): {e}")
        })?;
        let Some(obj) = v.as_object() else {
            return Err(format!(
                "--between-start {source}: not a calibration.json (reproduce NAME --calibrate writes one): not a JSON object"
            ));
        };
        if !obj.contains_key("pooled_start_sd") {
            return Err(format!(
                "--between-start {source}: no pooled_start_sd (a calibration.json of an older enginebench, or another file): run reproduce NAME --calibrate again"
            ));
        }
        let sd = &obj["pooled_start_sd"];
        let df = obj.get("pooled_df").and_then(|d| d.as_u64());
        match (sd.as_f64(), df) {
            (Some(sd), Some(df)) if sd.is_finite() && sd >= 0.0 && df > 0 => Ok(BetweenStart {
                sd,
                df: df as usize,
                source: source.to_string(),
                from: SpreadFrom::Calibration,
            }),
            _ if sd.is_null() || df == Some(0) => Err(format!(
                "--between-start {source}: the calibration measured no between-start spread (it needs 2 or more passes per comparison): run reproduce NAME --calibrate --passes 3"
            )),
            _ => Err(format!(
                "--between-start {source}: pooled_start_sd must be a number >= 0 and pooled_df a whole number > 0"
            )),
        }
    }
}

impl BetweenStart {
    /// The between-start spread of one configuration from its past results, each one server
    /// start (`--between-start catalog:last=N`): for every (operation, threads) of `points`,
    /// ln of each result's mean `ops_per_s`; the variance of one start pooled over the points
    /// (each point its own mean), so df = Σ (results at the point − 1). The spread of ln(B/A)
    /// between two starts is that of one start times √2, the same quantity a calibration's
    /// `pooled_start_sd` is. Points with fewer than two results add nothing; none with two is
    /// an error naming what is missing.
    pub fn from_results(
        docs: &[ResultDoc],
        points: &[(String, usize)],
        source: &str,
    ) -> Result<BetweenStart, String> {
        let (mut squares, mut df) = (0.0, 0usize);
        for (op, threads) in points {
            let logs: Vec<f64> = docs
                .iter()
                .filter_map(|d| find(d, op, *threads))
                .filter_map(|p| {
                    let v: Vec<f64> = p.runs.iter().map(|r| r.ops_per_s).collect();
                    let m = if v.is_empty() { 0.0 } else { mean_var(&v).0 };
                    (m > 0.0).then(|| m.ln())
                })
                .collect();
            if logs.len() >= 2 {
                let (_, var) = mean_var(&logs);
                squares += var * (logs.len() - 1) as f64;
                df += logs.len() - 1;
            }
        }
        if df == 0 {
            return Err(format!(
                "--between-start {source}: fewer than two comparable results at every compared point, so no between-start spread: record more results of this configuration first"
            ));
        }
        Ok(BetweenStart {
            sd: (2.0 * squares / df as f64).sqrt(),
            df,
            source: source.to_string(),
            from: SpreadFrom::History,
        })
    }
}

/// Where the between-start spread of a verdict came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpreadFrom {
    /// `--between-start calibration.json`: two starts of one configuration, measured apart.
    Calibration,
    /// `--between-start catalog:last=N`: the catalogued past results of the compared
    /// configuration, one server start each, measured apart from the compared pair.
    History,
    /// The compared results themselves: a side of several results (a catalog baseline), one
    /// observation each.
    Results,
}

/// The between-start spread a verdict used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    pub from: SpreadFrom,
    /// `log` (the values' logarithms: differences are ratios) or `linear` (a value of zero).
    pub scale: &'static str,
    /// The standard deviation between starts on `scale`: of ln(B/A) for a calibration, of one
    /// result's value for a side of several results (none for Welch's test over two such
    /// sides).
    pub sd: Option<f64>,
    pub df: f64,
    /// The difference (on `scale`) beyond which it is significant at 95 %.
    pub half_width: f64,
}

/// What a verdict rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Basis {
    /// Always [`UNIT`]: one result, one server start.
    pub unit: &'static str,
    /// The results (server starts) on each side, A and B.
    pub starts: [usize; 2],
    /// The between-start spread used; none when significance is unknown.
    pub spread: Option<Spread>,
    /// Why significance is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub operation: String,
    pub threads: usize,
    pub metric: &'static str,
    /// The mean over A's results of each one's mean over its runs; likewise B.
    pub a: f64,
    pub b: f64,
    /// b / a
    pub ratio: f64,
    pub verdict: Verdict,
    #[serde(flatten)]
    pub basis: Basis,
    /// Some run of either side was flagged as disturbed by other processes.
    pub disturbed: bool,
}

impl Row {
    /// The verdict as shown, with a note when some run was disturbed.
    pub fn verdict_text(&self) -> String {
        format!(
            "{}{}",
            self.verdict.label(),
            if self.disturbed {
                " (disturbed runs)"
            } else {
                ""
            }
        )
    }

    /// The verdict with why significance is unknown, when it is (one cell of CSV).
    pub fn verdict_full(&self) -> String {
        match &self.basis.why {
            Some(why) => format!("{} ({why})", self.verdict_text()),
            None => self.verdict_text(),
        }
    }

    /// The row's cells as every table shows them: operation, threads, metric, A, B, B/A,
    /// verdict.
    pub fn cells(&self) -> [String; 7] {
        [
            self.operation.clone(),
            self.threads.to_string(),
            self.metric.to_string(),
            value_text(self.metric, self.a),
            value_text(self.metric, self.b),
            format!("{:.3}", self.ratio),
            self.verdict_text(),
        ]
    }
}

/// A metric's value as the tables print it: counts per operation (well below one) with three
/// decimals, everything else with one.
fn value_text(metric: &str, v: f64) -> String {
    if metric.starts_with("server_sleeps") || metric.starts_with("server_preempts") {
        format!("{v:.3}")
    } else {
        format!("{v:.1}")
    }
}

/// The per-run values of each compared metric; None where a run lacks it (the server's CPU
/// of a run whose server process was not known).
type Metric = (&'static str, fn(&super::RunRecord) -> Option<f64>);
pub const METRICS: [Metric; 10] = [
    ("ops_per_s", |r| Some(r.ops_per_s)),
    ("p50_us", |r| Some(r.latency_us.p50_us as f64)),
    ("p95_us", |r| Some(r.latency_us.p95_us as f64)),
    ("p99_us", |r| Some(r.latency_us.p99_us as f64)),
    ("client_cpu_us_per_op", |r| Some(r.client_cpu.us_per_op)),
    // Why the client's CPU per operation moved: its threads sleeping (and being woken).
    ("client_sleeps_per_op", |r| r.client_cpu.voluntary_cs_per_op),
    ("server_cpu_us_per_op", |r| {
        r.server_process.as_ref().map(|s| s.cpu_us_per_op)
    }),
    // Why the server's CPU per operation moved: its threads sleeping (and being woken) or
    // being preempted per operation (docs/method.md, "Server CPU per operation").
    ("server_sleeps_per_op", |r| {
        r.server_process.as_ref()?.voluntary_cs_per_op
    }),
    ("server_preempts_per_op", |r| {
        r.server_process.as_ref()?.preempted_cs_per_op
    }),
    // Errors of the measured run (every class): runs of one point have one length.
    ("errors", |r| Some(r.errors_total as f64)),
];

/// Which way is better for a metric: throughput up, everything else (latency, CPU, errors)
/// down.
pub fn higher_is_better(metric: &str) -> bool {
    metric == "ops_per_s"
}

/// Two-sided 97.5 % quantile of Student's t for `df` degrees of freedom (df rounded down: a
/// conservative choice).
pub(crate) fn t_critical(df: f64) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    let d = df.floor().max(1.0) as usize;
    if d <= 30 {
        T[d - 1]
    } else {
        1.96
    }
}

/// Significant at 95 % when the difference is beyond the half-width.
fn verdict_of(diff: f64, half_width: f64) -> Verdict {
    if diff.abs() > half_width {
        Verdict::Significant
    } else {
        Verdict::WithinNoise
    }
}

/// Is the difference between sides `a` and `b` significant at 95 %, with the server start as
/// the unit? `a` and `b` hold one value per result (its mean over its measured runs): each is
/// one server start, whatever its number of runs.
///
/// - A side of several results gives the spread itself (on the log scale, where every value
///   is positive: differences are ratios; else linear). One result against n: is it outside
///   the 95 % prediction interval of the n, mean ± t(n − 1) · s · sqrt(1 + 1/n)? Several on
///   both sides: Welch's t-test over the results' values.
/// - One result per side: only a between-start spread measured apart can judge it —
///   `between`, the spread of ln(B/A) between two starts, for ops_per_s: |ln(B/A)| beyond
///   t(df) · sd is significant. Without one (or for another metric) significance is unknown.
pub fn judge(
    metric: &str,
    a: &[f64],
    b: &[f64],
    between: Option<&BetweenStart>,
) -> (Verdict, Basis) {
    let starts = [a.len(), b.len()];
    let basis = |spread, why: Option<&str>| Basis {
        unit: UNIT,
        starts,
        spread,
        why: why.map(str::to_string),
    };
    if a.is_empty() || b.is_empty() {
        return (Verdict::Unknown, basis(None, Some("a side has no value")));
    }
    if a.len() >= 2 || b.len() >= 2 {
        let log = a.iter().chain(b).all(|v| *v > 0.0);
        let scaled =
            |v: &[f64]| -> Vec<f64> { v.iter().map(|x| if log { x.ln() } else { *x }).collect() };
        let (sa, sb) = (scaled(a), scaled(b));
        let (diff, sd, df, half) = if sa.len() >= 2 && sb.len() >= 2 {
            let (ma, va) = mean_var(&sa);
            let (mb, vb) = mean_var(&sb);
            let (ea, eb) = (va / sa.len() as f64, vb / sb.len() as f64);
            let se = (ea + eb).sqrt();
            let df = if se > 0.0 {
                (ea + eb).powi(2)
                    / (ea.powi(2) / (sa.len() as f64 - 1.0) + eb.powi(2) / (sb.len() as f64 - 1.0))
            } else {
                (sa.len() + sb.len() - 2) as f64
            };
            (mb - ma, None, df, t_critical(df) * se)
        } else {
            // One result against several: B's value against A's, or A's against B's.
            let (many, one, sign) = if sa.len() >= 2 {
                (&sa, sb[0], 1.0)
            } else {
                (&sb, sa[0], -1.0)
            };
            let n = many.len() as f64;
            let (m, var) = mean_var(many);
            let s = var.sqrt();
            let df = n - 1.0;
            (
                sign * (one - m),
                Some(s),
                df,
                t_critical(df) * s * (1.0 + 1.0 / n).sqrt(),
            )
        };
        let spread = Spread {
            from: SpreadFrom::Results,
            scale: if log { "log" } else { "linear" },
            sd,
            df,
            half_width: half,
        };
        return (verdict_of(diff, half), basis(Some(spread), None));
    }
    match between {
        Some(c) if metric == "ops_per_s" => {
            if a[0] <= 0.0 || b[0] <= 0.0 {
                return (
                    Verdict::Unknown,
                    basis(None, Some("a side has no throughput: no ratio to judge")),
                );
            }
            let half = t_critical(c.df as f64) * c.sd;
            let spread = Spread {
                from: c.from,
                scale: "log",
                sd: Some(c.sd),
                df: c.df as f64,
                half_width: half,
            };
            (
                verdict_of((b[0] / a[0]).ln(), half),
                basis(Some(spread), None),
            )
        }
        Some(_) => (Verdict::Unknown, basis(None, Some(OPS_ONLY))),
        None => (Verdict::Unknown, basis(None, Some(NO_SPREAD))),
    }
}

pub(super) fn find<'a>(doc: &'a ResultDoc, op: &str, threads: usize) -> Option<&'a Point> {
    doc.points
        .iter()
        .find(|p| p.operation == op && p.threads == threads)
}

/// Compare two results, each one server start: significance unknown for every row (no
/// between-start spread), as the HTML page's comparison shows it.
pub fn compare(a: &ResultDoc, b: &ResultDoc) -> Vec<Row> {
    compare_sides(std::slice::from_ref(a), std::slice::from_ref(b), None)
}

/// Compare every (operation, threads, metric) that both sides have, in the order A's results
/// first have them. A side is one result or several (a catalog baseline), each result one
/// server start: a row's values are the means over the side's results of each one's mean
/// over its runs, and its verdict is [`judge`]'s.
pub fn compare_sides(a: &[ResultDoc], b: &[ResultDoc], between: Option<&BetweenStart>) -> Vec<Row> {
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for d in a {
        for p in &d.points {
            if !keys.contains(&(p.operation.as_str(), p.threads)) {
                keys.push((p.operation.as_str(), p.threads));
            }
        }
    }
    let mut rows = Vec::new();
    for (op, threads) in keys {
        let pa: Vec<&Point> = a.iter().filter_map(|d| find(d, op, threads)).collect();
        let pb: Vec<&Point> = b.iter().filter_map(|d| find(d, op, threads)).collect();
        if pb.is_empty() {
            continue;
        }
        for (metric, f) in METRICS {
            // One value per result: the mean over its runs that have the metric.
            let per_result = |ps: &[&Point]| -> Vec<f64> {
                ps.iter()
                    .filter_map(|p| {
                        let v: Vec<f64> = p.runs.iter().filter_map(f).collect();
                        (!v.is_empty()).then(|| mean_var(&v).0)
                    })
                    .collect()
            };
            let (xa, xb) = (per_result(&pa), per_result(&pb));
            if xa.is_empty() || xb.is_empty() {
                continue;
            }
            let (ma, _) = mean_var(&xa);
            let (mb, _) = mean_var(&xb);
            let (verdict, basis) = judge(metric, &xa, &xb, between);
            rows.push(Row {
                operation: op.to_string(),
                threads,
                metric,
                a: ma,
                b: mb,
                ratio: if ma != 0.0 { mb / ma } else { f64::NAN },
                verdict,
                basis,
                disturbed: pa
                    .iter()
                    .chain(&pb)
                    .flat_map(|p| &p.runs)
                    .any(|r| r.disturbed),
            });
        }
    }
    rows
}

/// What the rows' verdicts rest on, a few lines for under a table: the unit and the number
/// of results per side, then for each rule used (or each reason significance is unknown) the
/// metrics it applies to.
pub fn basis_lines(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(first) = rows.first() else {
        return out;
    };
    let range = |i: usize| {
        let lo = rows.iter().map(|r| r.basis.starts[i]).min().unwrap_or(0);
        let hi = rows.iter().map(|r| r.basis.starts[i]).max().unwrap_or(0);
        if lo == hi {
            format!("{lo} result(s)")
        } else {
            format!("{lo} to {hi} results per point")
        }
    };
    out.push(format!(
        "unit of significance: the {} (a result is one start; its runs share the start's speed and are not independent samples); A: {}, B: {}",
        first.basis.unit,
        range(0),
        range(1)
    ));
    let mut rules: Vec<(String, Vec<&'static str>)> = Vec::new();
    for r in rows {
        let rule = match (&r.basis.spread, &r.basis.why) {
            (_, Some(why)) => format!("significance unknown ({why})"),
            (Some(s), None) => match (s.from, s.sd) {
                (from @ (SpreadFrom::Calibration | SpreadFrom::History), sd) => format!(
                    "judged by the between-start spread of {} (sd of ln(B/A) {:.1} %, {} df): |ln(B/A)| beyond {:.1} % is significant at 95 %",
                    if from == SpreadFrom::Calibration {
                        "the calibration"
                    } else {
                        "past results of the configuration, measured apart"
                    },
                    sd.unwrap_or(0.0) * 100.0,
                    s.df,
                    s.half_width * 100.0
                ),
                (SpreadFrom::Results, Some(_)) => "judged by the spread of the side with several results, one value per result: the other side's value outside their 95 % prediction interval, mean ± t(n − 1) · sd · sqrt(1 + 1/n) (log scale where every value is positive), is significant".to_string(),
                (SpreadFrom::Results, None) => "judged by Welch's t-test over the results' values, one per result, at 95 %".to_string(),
            },
            (None, None) => continue,
        };
        match rules.iter_mut().find(|(k, _)| *k == rule) {
            Some((_, metrics)) => {
                if !metrics.contains(&r.metric) {
                    metrics.push(r.metric);
                }
            }
            None => rules.push((rule, vec![r.metric])),
        }
    }
    for (rule, metrics) in rules {
        out.push(format!("{}: {rule}", metrics.join(", ")));
    }
    out
}

/// The terminal table of a comparison; with `gates` (one cell per row, from `--fail-on`:
/// [`super::gate::cells`]) a last column says what the gate made of each bounded row. Under
/// the table: what the verdicts rest on ([`basis_lines`]).
pub fn render(rows: &[Row], gates: Option<&[String]>, a_label: &str, b_label: &str) -> String {
    let mut out = format!(
        "B/A with B = {b_label}, A = {a_label} (means over runs; significance at 95 % with the server start as the unit)\n"
    );
    let width = rows
        .iter()
        .map(|r| r.verdict_text().chars().count())
        .max()
        .unwrap_or(0)
        .max(12);
    out.push_str(&format!(
        "{:<30} {:>7} {:<22} {:>12} {:>12} {:>7}  {:<width$}{}\n",
        "operation",
        "threads",
        "metric",
        "A",
        "B",
        "B/A",
        "verdict",
        if gates.is_some() { "  gate" } else { "" }
    ));
    for (i, r) in rows.iter().enumerate() {
        let verdict = r.verdict_text();
        let gate = gates
            .and_then(|g| g.get(i))
            .filter(|g| !g.is_empty())
            .map(|g| format!("  {g}"))
            .unwrap_or_default();
        let line = format!(
            "{:<30} {:>7} {:<22} {:>12} {:>12} {:>7.3}  {verdict:<width$}{gate}",
            r.operation,
            r.threads,
            r.metric,
            value_text(r.metric, r.a),
            value_text(r.metric, r.b),
            r.ratio,
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for line in basis_lines(rows) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One result (one server start): a point "op" at 2 threads whose runs have these ops/s
    /// and a p99 of `p99` µs.
    fn start(ops: &[f64], p99: u64) -> ResultDoc {
        ResultDoc {
            points: vec![Point {
                operation: "op".into(),
                threads: 2,
                runs: ops
                    .iter()
                    .map(|o| crate::report::RunRecord {
                        ops_per_s: *o,
                        latency_us: crate::measure::hist::LatencySummary {
                            p99_us: p99,
                            ..Default::default()
                        },
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn row<'a>(rows: &'a [Row], metric: &str) -> &'a Row {
        rows.iter().find(|r| r.metric == metric).unwrap()
    }

    /// Runs within a start agree to ±0.1 %: pooled as samples they made a 3 % difference
    /// "significant". With the start as the unit and a calibrated between-start spread of 8 %
    /// a 3 % difference is noise and a 40 % one is significant, whatever the runs.
    #[test]
    fn a_calibrated_between_start_spread_judges_one_start_per_side() {
        let cal = BetweenStart::parse(
            r#"{"plan": "read-2007-calibration", "passes": 3, "pooled_start_sd": 0.08, "pooled_df": 20, "comparisons": []}"#,
            "calibration.json",
        )
        .unwrap();
        assert_eq!((cal.sd, cal.df), (0.08, 20));
        let base = start(&[999.0, 1000.0, 1001.0], 500);
        let rows = compare_sides(
            std::slice::from_ref(&base),
            &[start(&[1029.0, 1030.0, 1031.0], 400)],
            Some(&cal),
        );
        let ops = row(&rows, "ops_per_s");
        assert_eq!(ops.verdict, Verdict::WithinNoise, "{ops:?}");
        assert_eq!(ops.basis.starts, [1, 1]);
        let spread = ops.basis.spread.as_ref().unwrap();
        assert_eq!(
            (spread.from, spread.scale),
            (SpreadFrom::Calibration, "log")
        );
        // t(20) = 2.086: beyond 16.7 % of ln(B/A).
        assert!(
            (spread.half_width - 2.086 * 0.08).abs() < 1e-9,
            "{spread:?}"
        );
        let rows = compare_sides(
            std::slice::from_ref(&base),
            &[start(&[1399.0, 1400.0, 1401.0], 500)],
            Some(&cal),
        );
        assert_eq!(row(&rows, "ops_per_s").verdict, Verdict::Significant);
        // A single run per side is one start per side too: the same verdict.
        let rows = compare_sides(
            &[start(&[1000.0], 500)],
            &[start(&[1400.0], 500)],
            Some(&cal),
        );
        assert_eq!(row(&rows, "ops_per_s").verdict, Verdict::Significant);
        // A 40 % slowdown is as significant as a 40 % speed-up (|ln| of 0.6 is larger).
        let rows = compare_sides(
            &[start(&[1000.0], 500)],
            &[start(&[600.0], 500)],
            Some(&cal),
        );
        assert_eq!(row(&rows, "ops_per_s").verdict, Verdict::Significant);
        // The calibration measured ops_per_s: a 20 % better p99 stays unknown, and says why.
        let p99 = row(&rows, "p99_us");
        assert_eq!(p99.verdict, Verdict::Unknown);
        assert_eq!(p99.basis.why.as_deref(), Some(OPS_ONLY));
        assert!(p99.basis.spread.is_none());
        let text = render(&rows, None, "a", "b");
        assert!(
            text.contains("ops_per_s: judged by the between-start spread of the calibration (sd of ln(B/A) 8.0 %, 20 df)"),
            "{text}"
        );
        assert!(
            text.contains("\np50_us, p95_us, p99_us, client_cpu_us_per_op, errors: significance unknown (each side is one server start; the --between-start calibration covers ops_per_s only)\n"),
            "{text}"
        );
    }

    /// Without a between-start spread one start per side claims nothing either way, however
    /// large the difference and however tight the runs; every format says so.
    #[test]
    fn one_start_per_side_without_a_spread_is_unknown() {
        let a = start(&[999.0, 1000.0, 1001.0], 500);
        let b = start(&[1399.0, 1400.0, 1401.0], 900);
        let rows = compare(&a, &b);
        assert!(!rows.is_empty());
        for r in &rows {
            assert_eq!(r.verdict, Verdict::Unknown, "{r:?}");
            assert_eq!(r.basis.starts, [1, 1]);
            assert_eq!(r.basis.why.as_deref(), Some(NO_SPREAD));
        }
        let ops = row(&rows, "ops_per_s");
        assert_eq!(
            ops.verdict_full(),
            "significance unknown (each side is one server start; give --between-start calibration.json or a catalog baseline)"
        );
        let json = serde_json::to_value(ops).unwrap();
        assert_eq!(json["verdict"], "unknown");
        assert_eq!(json["unit"], "server start");
        assert_eq!(json["starts"], serde_json::json!([1, 1]));
        assert_eq!(json["why"], NO_SPREAD);
        assert!(json["spread"].is_null());
        let text = render(&rows, None, "a", "b");
        assert!(text.contains("1.400  significance unknown"), "{text}");
        assert!(
            text.contains("unit of significance: the server start"),
            "{text}"
        );
        assert!(
            text.contains(": significance unknown (each side is one server start; give --between-start calibration.json or a catalog baseline)"),
            "{text}"
        );
    }

    /// A side of several results (a catalog baseline) is its own between-start spread, one
    /// value per result: one result against them by the prediction interval, several against
    /// several by Welch's test over the results.
    #[test]
    fn several_results_per_side_are_the_units() {
        let v = |a: &[f64], b: &[f64]| judge("ops_per_s", a, b, None).0;
        assert_eq!(
            v(&[100.0, 101.0, 99.0], &[150.0, 151.0, 149.0]),
            Verdict::Significant
        );
        assert_eq!(
            v(&[100.0, 120.0, 80.0], &[105.0, 125.0, 85.0]),
            Verdict::WithinNoise
        );
        assert_eq!(v(&[5.0, 5.0], &[5.0, 5.0]), Verdict::WithinNoise);
        assert_eq!(v(&[5.0, 5.0], &[6.0, 6.0]), Verdict::Significant);
        // One against five whose log values spread by 10 %: t(4) · 0.1 · sqrt(1.2) = 30 %.
        let five: Vec<f64> = [
            -1.6f64.sqrt(),
            -0.4f64.sqrt(),
            0.0,
            0.4f64.sqrt(),
            1.6f64.sqrt(),
        ]
        .iter()
        .map(|z| 1000.0 * (0.1 * z).exp())
        .collect();
        let (verdict, basis) = judge("ops_per_s", &five, &[950.0], None);
        assert_eq!(verdict, Verdict::WithinNoise);
        assert_eq!(basis.starts, [5, 1]);
        let s = basis.spread.unwrap();
        assert_eq!((s.from, s.scale, s.df), (SpreadFrom::Results, "log", 4.0));
        assert!((s.sd.unwrap() - 0.1).abs() < 1e-9, "{s:?}");
        assert!((s.half_width - 2.776 * 0.1 * 1.2f64.sqrt()).abs() < 1e-9);
        assert_eq!(
            judge("ops_per_s", &five, &[600.0], None).0,
            Verdict::Significant
        );
        // Either side may be the one: A one result, B five.
        assert_eq!(
            judge("ops_per_s", &[600.0], &five, None).0,
            Verdict::Significant
        );
        // Errors are often zero: the linear scale, and any increase over a constant zero.
        let (verdict, basis) = judge("errors", &[0.0, 0.0, 0.0], &[3.0], None);
        assert_eq!(verdict, Verdict::Significant);
        assert_eq!(basis.spread.unwrap().scale, "linear");
        assert_eq!(
            judge("errors", &[0.0, 0.0], &[0.0], None).0,
            Verdict::WithinNoise
        );
    }

    #[test]
    fn a_calibration_that_is_not_one_is_a_one_line_error() {
        for (text, says) in [
            ("{", "not a calibration.json"),
            ("[1, 2]", "not a JSON object"),
            (r#"{"plan": "x"}"#, "no pooled_start_sd"),
            (
                r#"{"pooled_start_sd": null, "pooled_df": 0}"#,
                "measured no between-start spread",
            ),
            (
                r#"{"pooled_start_sd": -0.1, "pooled_df": 4}"#,
                "must be a number >= 0",
            ),
            (
                r#"{"pooled_start_sd": 0.1, "pooled_df": 2.5}"#,
                "must be a number >= 0",
            ),
        ] {
            let e = BetweenStart::parse(text, "c.json").unwrap_err();
            assert!(
                e.starts_with("--between-start c.json: ") && e.contains(says),
                "{text}: {e}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
        let dir = tempfile::tempdir().unwrap();
        let e = BetweenStart::read(&dir.path().join("none.json")).unwrap_err();
        assert!(e.contains("cannot read it") && !e.contains('\n'), "{e}");
        // A folder stands for the calibration.json in it.
        std::fs::write(
            dir.path().join("calibration.json"),
            r#"{"pooled_start_sd": 0.05, "pooled_df": 6}"#,
        )
        .unwrap();
        let c = BetweenStart::read(dir.path()).unwrap();
        assert_eq!((c.sd, c.df), (0.05, 6));
        assert!(c.source.ends_with("calibration.json"));
    }

    fn doc(server_us: &[Option<f64>]) -> ResultDoc {
        let runs = server_us
            .iter()
            .map(|s| crate::report::RunRecord {
                ops_per_s: 100.0,
                server_process: s.map(|us| crate::report::ServerProcess {
                    cpu_us_per_op: us,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        ResultDoc {
            points: vec![Point {
                operation: "op".into(),
                threads: 2,
                runs,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn server_cpu_only_where_both_have_it() {
        let metrics = |a: &ResultDoc, b: &ResultDoc| -> Vec<&'static str> {
            compare(a, b).iter().map(|r| r.metric).collect()
        };
        let with = doc(&[Some(40.0), Some(42.0)]);
        let without = doc(&[None, None]);
        assert!(metrics(&with, &with).contains(&"server_cpu_us_per_op"));
        assert!(!metrics(&with, &without).contains(&"server_cpu_us_per_op"));
        assert!(!metrics(&without, &with).contains(&"server_cpu_us_per_op"));
        assert!(metrics(&without, &with).contains(&"client_cpu_us_per_op"));
        let r = compare(&with, &doc(&[Some(80.0), Some(84.0)]));
        let row = r
            .iter()
            .find(|r| r.metric == "server_cpu_us_per_op")
            .unwrap();
        // Each side is one server start: twice the CPU, but no between-start spread.
        assert_eq!((row.a, row.b, row.verdict), (41.0, 82.0, Verdict::Unknown));
    }
}
