//! `compare A B`: for every metric both results have, the ratio B/A and whether the difference
//! is larger than the run-to-run noise (Welch's t-test over the measured runs, 95 %).
//! `--fail-on` bounds on these rows are in [`super::gate`].

use serde::Serialize;

use super::{Point, ResultDoc};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The difference is larger than the noise between runs (95 %).
    Significant,
    /// Within the noise of the runs.
    WithinNoise,
    /// At least one side has a single run: no significance can be computed.
    SingleRun,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Significant => "significant",
            Verdict::WithinNoise => "within noise",
            Verdict::SingleRun => "single run: no significance",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub operation: String,
    pub threads: usize,
    pub metric: &'static str,
    pub a: f64,
    pub b: f64,
    /// b / a
    pub ratio: f64,
    pub verdict: Verdict,
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

pub(crate) fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, var)
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

/// Welch's t-test: is the difference of means of `a` and `b` significant at 95 %?
pub fn welch(a: &[f64], b: &[f64]) -> Verdict {
    if a.len() < 2 || b.len() < 2 {
        return Verdict::SingleRun;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se = (sa + sb).sqrt();
    if se == 0.0 {
        return if ma == mb {
            Verdict::WithinNoise
        } else {
            Verdict::Significant
        };
    }
    let t = (mb - ma).abs() / se;
    let df = (sa + sb).powi(2)
        / (sa.powi(2) / (a.len() as f64 - 1.0) + sb.powi(2) / (b.len() as f64 - 1.0));
    if t > t_critical(df) {
        Verdict::Significant
    } else {
        Verdict::WithinNoise
    }
}

fn find<'a>(doc: &'a ResultDoc, op: &str, threads: usize) -> Option<&'a Point> {
    doc.points
        .iter()
        .find(|p| p.operation == op && p.threads == threads)
}

/// Compare every (operation, threads, metric) that both results have, in A's order.
pub fn compare(a: &ResultDoc, b: &ResultDoc) -> Vec<Row> {
    let mut rows = Vec::new();
    for pa in &a.points {
        let Some(pb) = find(b, &pa.operation, pa.threads) else {
            continue;
        };
        for (metric, f) in METRICS {
            let va: Vec<f64> = pa.runs.iter().filter_map(f).collect();
            let vb: Vec<f64> = pb.runs.iter().filter_map(f).collect();
            if va.is_empty() || vb.is_empty() {
                continue;
            }
            let (ma, _) = mean_var(&va);
            let (mb, _) = mean_var(&vb);
            rows.push(Row {
                operation: pa.operation.clone(),
                threads: pa.threads,
                metric,
                a: ma,
                b: mb,
                ratio: if ma != 0.0 { mb / ma } else { f64::NAN },
                verdict: welch(&va, &vb),
                disturbed: pa.runs.iter().chain(pb.runs.iter()).any(|r| r.disturbed),
            });
        }
    }
    rows
}

/// Settings in which the two results' nodes of the same index differ (both results of
/// several nodes: `target.nodes`), one line each: a node's value is its `settings_differ` entry,
/// else node 0's. What names a private server (paths, ports) is left out, as in the
/// comparison of suites; nodes that could not be read are skipped.
pub fn node_setting_lines(a: &ResultDoc, b: &ResultDoc) -> Vec<String> {
    let value = |d: &ResultDoc, i: usize, k: &str| -> String {
        let n = &d.target.nodes[i];
        n.settings_differ
            .get(k)
            .or_else(|| d.target.settings.get(k))
            .cloned()
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    let pairs = a.target.nodes.iter().zip(&b.target.nodes).enumerate();
    for (i, (na, nb)) in pairs {
        if na.error.is_some() || nb.error.is_some() {
            continue;
        }
        let names: std::collections::BTreeSet<&String> = (a.target.settings.keys())
            .chain(b.target.settings.keys())
            .chain(na.settings_differ.keys())
            .chain(nb.settings_differ.keys())
            .collect();
        for k in names {
            if crate::server::capture::LIFECYCLE.contains(&k.as_str()) {
                continue;
            }
            let (va, vb) = (value(a, i, k), value(b, i, k));
            if va != vb {
                out.push(format!(
                    "node {i} ({} / {}): {k} A={va} B={vb}",
                    na.node, nb.node
                ));
            }
        }
    }
    out
}

/// `--profile-server` on both sides: per common point, the server functions whose self time
/// per operation differs most (the mean over each side's runs), as lines for the terminal.
pub fn function_lines(a: &ResultDoc, b: &ResultDoc, per_point: usize) -> Vec<String> {
    use crate::measure::profile;
    let mean = |p: &Point| {
        let v: Vec<_> = p
            .runs
            .iter()
            .filter_map(|r| r.server_profile.as_ref())
            .collect();
        profile::mean(&v)
    };
    let mut out = Vec::new();
    for pa in &a.points {
        let Some(pb) = find(b, &pa.operation, pa.threads) else {
            continue;
        };
        let (Some(fa), Some(fb)) = (mean(pa), mean(pb)) else {
            continue;
        };
        out.push(format!(
            "{} at {} threads: server CPU {:.1} -> {:.1} us/op by perf, which saw {} -> {} of it (/proc); functions (self us/op, A -> B):",
            pa.operation,
            pa.threads,
            fa.cpu_us_per_op,
            fb.cpu_us_per_op,
            profile::coverage_text(&fa),
            profile::coverage_text(&fb)
        ));
        for (name, x, y) in profile::differing_functions(&fa, &fb, per_point) {
            out.push(format!(
                "  {name:<50} {x:>9.2} -> {y:>9.2}  ({:+.2})",
                y - x
            ));
        }
    }
    out
}

/// The terminal table of a comparison; with `checks` (one per row, from `--fail-on`) a last
/// column says what the gate made of each bounded row.
pub fn render(
    rows: &[Row],
    checks: Option<&[Option<super::gate::Check>]>,
    a_label: &str,
    b_label: &str,
) -> String {
    let mut out =
        format!("B/A with B = {b_label}, A = {a_label} (means over runs; Welch's t-test, 95 %)\n");
    out.push_str(&format!(
        "{:<30} {:>7} {:<22} {:>12} {:>12} {:>7}  {:<28}{}\n",
        "operation",
        "threads",
        "metric",
        "A",
        "B",
        "B/A",
        "verdict",
        if checks.is_some() { "  gate" } else { "" }
    ));
    for (i, r) in rows.iter().enumerate() {
        let verdict = r.verdict_text();
        let gate = checks
            .and_then(|c| c.get(i)?.as_ref())
            .map(|c| format!("  {}", c.reason(r.verdict)))
            .unwrap_or_default();
        let line = format!(
            "{:<30} {:>7} {:<22} {:>12} {:>12} {:>7.3}  {verdict:<28}{gate}",
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_verdicts() {
        assert_eq!(welch(&[100.0], &[200.0, 210.0]), Verdict::SingleRun);
        assert_eq!(
            welch(&[100.0, 101.0, 99.0], &[150.0, 151.0, 149.0]),
            Verdict::Significant
        );
        assert_eq!(
            welch(&[100.0, 120.0, 80.0], &[105.0, 125.0, 85.0]),
            Verdict::WithinNoise
        );
        assert_eq!(welch(&[5.0, 5.0], &[5.0, 5.0]), Verdict::WithinNoise);
        assert_eq!(welch(&[5.0, 5.0], &[6.0, 6.0]), Verdict::Significant);
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
    fn node_settings_of_the_same_index() {
        use crate::report::NodeInfo;
        use std::collections::BTreeMap;
        let two = |buffer1: &str, port1: &str| {
            let mut d = doc(&[None]);
            d.target.settings = BTreeMap::from([
                ("buffer".to_string(), "1G".to_string()),
                ("port".to_string(), "3306".to_string()),
            ]);
            d.target.nodes = vec![
                NodeInfo {
                    node: "h1:3306".into(),
                    ..NodeInfo::default()
                },
                NodeInfo {
                    node: "h2:3307".into(),
                    settings_differ: [("buffer", buffer1), ("port", port1)]
                        .iter()
                        .filter(|(_, v)| !v.is_empty())
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                    ..NodeInfo::default()
                },
            ];
            d
        };
        let a = two("2G", "3307");
        assert!(node_setting_lines(&a, &a).is_empty());
        // Node 1 of B has node 0's buffer; ports never count.
        assert_eq!(
            node_setting_lines(&a, &two("", "3308")),
            vec!["node 1 (h2:3307 / h2:3307): buffer A=2G B=1G"]
        );
        // A one-node result: nothing to line up.
        assert!(node_setting_lines(&a, &doc(&[None])).is_empty());
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
        assert_eq!(
            (row.a, row.b, row.verdict),
            (41.0, 82.0, Verdict::Significant)
        );
    }
}
