//! A report's claims as data, and their verdicts computed from the measured results.
//!
//! A claim compares one metric between two selections of cells (`a` and `b`), at each thread
//! count it names: `a > b`, `a < b` or `a ~ b`, optionally with a band for the ratio a/b. Its
//! verdict is computed from the results on disk every time, never stored:
//!
//! - `holds`: at every compared thread count the difference goes the claimed way and is
//!   significant (Welch's t-test over the runs, 95 %, the test `compare` uses), and the ratio
//!   lies in the band; for `a ~ b`, the ratio lies in the band (or, without a band, the
//!   difference is inside the noise);
//! - `does not hold`: at some thread count the measured difference contradicts the claim
//!   significantly (or lies outside its band);
//! - `not measured`: a cell or a point is missing, a run was flagged disturbed, a side has a
//!   single value of a per-run metric, or the difference is inside the noise.
//!
//! Metrics measured once per cell (load time, sizes, a suite's total) have no run-to-run
//! spread: for them a difference counts as significant when the ratio is further from 1 than
//! the claim's `noise` (default 10 %), which the page says beside the verdict.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::plan::{Cell, Plan};
use crate::report::compare::{welch, Verdict};
use crate::report::{Owners, Point, ResultDoc, RunRecord};

/// One claim of the report, and the rule that checks it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Its number in the report's list (e.g. "R2.4").
    pub id: String,
    /// What the report says, in our words.
    pub says: String,
    /// The report's figure, as it gave it.
    #[serde(default)]
    pub figure: Option<String>,
    /// The section whose cells it reads (default: the plan's only section).
    #[serde(default)]
    pub section: Option<String>,
    /// The metric compared (see `METRICS` and the workloads' claim metrics).
    pub metric: String,
    /// The operation whose points are read (default: the cell's only operation).
    #[serde(default)]
    pub operation: Option<String>,
    pub a: Selector,
    pub b: Selector,
    /// Thread counts compared: a at t against b at t (default: the section's thread counts,
    /// unless both sides fix theirs).
    #[serde(default)]
    pub threads: Vec<usize>,
    /// `a > b`, `a < b` or `a ~ b`.
    pub expect: String,
    /// Bounds of the ratio a/b for the claim to hold.
    #[serde(default)]
    pub min_ratio: Option<f64>,
    #[serde(default)]
    pub max_ratio: Option<f64>,
    /// For metrics measured once per cell: the relative difference that counts as real.
    #[serde(default)]
    pub noise: Option<f64>,
    /// How the rule reads the report's words, when that is not obvious.
    #[serde(default)]
    pub reading: Option<String>,
    /// A server the claim needs that the plan may lack (the report's MySQL, which is not
    /// installable here): without it the claim is `not measured`, not a bad plan.
    #[serde(default)]
    pub needs_server: Option<String>,
}

/// Which cells one side of a claim reads; a field left out must leave one cell per thread
/// count.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selector {
    #[serde(default)]
    pub server: Option<String>,
    #[serde(default)]
    pub engine: Option<String>,
    #[serde(default)]
    pub variant: Option<String>,
    /// Fix this side's thread count (scaling claims compare two thread counts).
    #[serde(default)]
    pub threads: Option<usize>,
    /// This side's operation (default: the claim's).
    #[serde(default)]
    pub operation: Option<String>,
    /// This side's metric (default: the claim's), e.g. one storage format of a cell.
    #[serde(default)]
    pub metric: Option<String>,
    /// Divide by the same selection's mean at this thread count (scaling: ops/s at 16
    /// threads relative to 1).
    #[serde(default)]
    pub per_threads: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Holds,
    DoesNotHold,
    NotMeasured,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Holds => "holds",
            Outcome::DoesNotHold => "does not hold",
            Outcome::NotMeasured => "not measured",
        }
    }
}

/// A claim's verdict at one thread count.
#[derive(Debug, Clone, Serialize)]
pub struct PairEval {
    pub threads: usize,
    pub outcome: Outcome,
    /// Means of a and b, and a/b.
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub ratio: Option<f64>,
    pub why: String,
}

/// A claim's verdict and the evidence beside it.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    pub id: String,
    pub says: String,
    pub figure: Option<String>,
    pub metric: String,
    pub outcome: Outcome,
    /// Our figure, e.g. "a/b 1.12 (4 thr), 0.97 (16 thr)".
    pub ours: String,
    pub why: String,
    pub pairs: Vec<PairEval>,
    /// Server settings that differ between the compared cells (name, a, b).
    pub settings: Vec<(String, String, String)>,
    /// Server counters per operation that differ most between them (name, a, b).
    pub counters: Vec<(String, f64, f64)>,
}

/// One result of a cell: a cell has one per pass and repeat (`reproduce --passes 2`, a
/// section's `repeats`); a claim pools them.
#[derive(Debug, Clone)]
pub struct CellDoc {
    /// 1 for the first pass, 2 for the second.
    pub pass: u32,
    pub doc: ResultDoc,
}

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

fn run_metric(name: &str, r: &RunRecord) -> Option<f64> {
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
        "load_s" | "load_rows_per_s" => {
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

fn pick_point<'a>(doc: &'a ResultDoc, op: Option<&str>) -> Result<&'a Point, String> {
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

impl Claim {
    fn section_index(&self, plan: &Plan) -> Result<usize, String> {
        match &self.section {
            Some(n) => plan
                .sections
                .iter()
                .position(|s| &s.name == n || s.workload == *n)
                .ok_or_else(|| format!("no section is named '{n}'")),
            None if plan.sections.len() == 1 => Ok(0),
            None => Err("the plan has several sections: name one with `section`".into()),
        }
    }

    /// Why the claim cannot be measured with this plan's servers, if so.
    fn missing_server(&self, plan: &Plan) -> Option<String> {
        let n = self.needs_server.as_ref()?;
        (!plan.servers.iter().any(|s| s.name() == *n)).then(|| {
            format!(
                "needs a server named '{n}': add it to [[servers]] (url = \"...\", name = \"{n}\")"
            )
        })
    }

    /// The thread counts compared.
    fn thread_counts(&self, plan: &Plan, si: usize) -> Vec<usize> {
        if !self.threads.is_empty() {
            return self.threads.clone();
        }
        match (self.a.threads, self.b.threads) {
            (Some(t), _) | (None, Some(t)) => vec![t],
            (None, None) => plan.sections[si].threads.clone(),
        }
    }

    /// Checked when the plan is read: the section, the metric, the expectation, and that each
    /// side selects exactly one cell at each compared thread count.
    pub fn validate(
        &self,
        plan: &Plan,
        cells: &[Cell],
        owners: Owners,
        check_cells: bool,
    ) -> Result<(), String> {
        let si = self.section_index(plan)?;
        for m in [&self.metric]
            .into_iter()
            .chain(self.a.metric.as_ref())
            .chain(self.b.metric.as_ref())
        {
            if !known_metric(m, owners) {
                return Err(format!(
                    "unknown metric '{m}' (metrics: {})",
                    metric_names(owners).join(", ")
                ));
            }
        }
        if !["a > b", "a < b", "a ~ b"].contains(&self.expect.as_str()) {
            return Err(format!(
                "expect = '{}': use \"a > b\", \"a < b\" or \"a ~ b\"",
                self.expect
            ));
        }
        if !check_cells || self.missing_server(plan).is_some() {
            return Ok(());
        }
        for t in self.thread_counts(plan, si) {
            for (side, sel) in [("a", &self.a), ("b", &self.b)] {
                select(plan, cells, si, sel, t).map_err(|e| format!("{side}: {e}"))?;
                if let Some(pt) = sel.per_threads {
                    let base = Selector {
                        threads: Some(pt),
                        ..sel.clone()
                    };
                    select(plan, cells, si, &base, pt)
                        .map_err(|e| format!("{side} per_threads: {e}"))?;
                }
            }
        }
        Ok(())
    }

    /// The verdict from the results `doc_of` finds for each cell (None: not run or unreadable).
    pub fn evaluate(
        &self,
        plan: &Plan,
        cells: &[Cell],
        doc_of: &dyn Fn(&Cell) -> Vec<CellDoc>,
        owners: Owners,
    ) -> Evaluation {
        let mut eval = Evaluation {
            id: self.id.clone(),
            says: self.says.clone(),
            figure: self.figure.clone(),
            metric: self.metric.clone(),
            outcome: Outcome::NotMeasured,
            ours: String::new(),
            why: String::new(),
            pairs: Vec::new(),
            settings: Vec::new(),
            counters: Vec::new(),
        };
        let si = match self.section_index(plan) {
            Ok(s) => s,
            Err(e) => {
                eval.why = e;
                return eval;
            }
        };
        if let Some(why) = self.missing_server(plan) {
            eval.why = why;
            return eval;
        }
        let mut evidence: Option<(ResultDoc, ResultDoc)> = None;
        for t in self.thread_counts(plan, si) {
            let side = |sel: &Selector| -> Result<(Values, ResultDoc), String> {
                let cell = select(plan, cells, si, sel, t)?;
                let doc = doc_of(cell)
                    .into_iter()
                    .next()
                    .map(|d| d.doc)
                    .ok_or_else(|| format!("cell {} has no result", cell.name))?;
                if doc
                    .points
                    .iter()
                    .any(|p| p.runs.iter().any(|r| r.disturbed))
                {
                    return Err(format!("cell {} has runs flagged disturbed", cell.name));
                }
                let metric = sel.metric.as_deref().unwrap_or(&self.metric);
                let op = sel.operation.as_deref().or(self.operation.as_deref());
                let mut v = values(&doc, metric, op, owners)
                    .map_err(|e| format!("cell {}: {e}", cell.name))?;
                if let Some(pt) = sel.per_threads {
                    let base_sel = Selector {
                        threads: Some(pt),
                        ..sel.clone()
                    };
                    let base_cell = select(plan, cells, si, &base_sel, pt)?;
                    let base_doc = doc_of(base_cell)
                        .into_iter()
                        .next()
                        .map(|d| d.doc)
                        .ok_or_else(|| format!("cell {} has no result", base_cell.name))?;
                    let base = values(&base_doc, metric, op, owners)
                        .map_err(|e| format!("cell {}: {e}", base_cell.name))?
                        .mean();
                    if base == 0.0 {
                        return Err(format!("cell {}: {metric} is 0", base_cell.name));
                    }
                    v = v.scaled(base);
                }
                Ok((v, doc))
            };
            let pair = match (side(&self.a), side(&self.b)) {
                (Ok((va, da)), Ok((vb, db))) => {
                    let p = self.judge(t, &va, &vb);
                    if evidence.is_none() {
                        evidence = Some((da, db));
                    }
                    p
                }
                (Err(e), _) | (_, Err(e)) => PairEval {
                    threads: t,
                    outcome: Outcome::NotMeasured,
                    a: None,
                    b: None,
                    ratio: None,
                    why: e,
                },
            };
            eval.pairs.push(pair);
        }
        let outcomes: Vec<Outcome> = eval.pairs.iter().map(|p| p.outcome).collect();
        eval.outcome = if outcomes.contains(&Outcome::DoesNotHold) {
            Outcome::DoesNotHold
        } else if !outcomes.is_empty() && outcomes.iter().all(|o| *o == Outcome::Holds) {
            Outcome::Holds
        } else {
            Outcome::NotMeasured
        };
        let several = eval.pairs.len() > 1;
        eval.ours = eval
            .pairs
            .iter()
            .filter_map(|p| {
                let r = p.ratio?;
                Some(if several {
                    format!("a/b {r:.2} ({} thr)", p.threads)
                } else {
                    format!("a/b {r:.2}")
                })
            })
            .collect::<Vec<_>>()
            .join(", ");
        eval.why = eval
            .pairs
            .iter()
            .find(|p| p.outcome == eval.outcome)
            .or(eval.pairs.first())
            .map(|p| {
                if several {
                    format!("{} thr: {}", p.threads, p.why)
                } else {
                    p.why.clone()
                }
            })
            .unwrap_or_default();
        if let Some((da, db)) = evidence {
            eval.settings = settings_differ(&da, &db);
            eval.counters = counters_differ(&da, &db, self.operation.as_deref(), 3);
        }
        eval
    }

    /// The verdict at one thread count.
    fn judge(&self, threads: usize, a: &Values, b: &Values) -> PairEval {
        let (ma, mb) = (a.mean(), b.mean());
        let ratio = (mb != 0.0).then(|| ma / mb);
        let mut p = PairEval {
            threads,
            outcome: Outcome::NotMeasured,
            a: Some(ma),
            b: Some(mb),
            ratio,
            why: String::new(),
        };
        let Some(r) = ratio else {
            p.why = "b is 0: no ratio".into();
            return p;
        };
        let noise = self.noise.unwrap_or(0.10);
        let significant = match (a, b) {
            (Values::PerRun(x), Values::PerRun(y)) => match welch(x, y) {
                Verdict::Significant => Some(true),
                Verdict::WithinNoise => Some(false),
                Verdict::SingleRun => None,
            },
            _ => Some((r - 1.0).abs() > noise),
        };
        let Some(significant) = significant else {
            p.why = "a side has a single run: no significance".into();
            return p;
        };
        let test = match (a, b) {
            (Values::PerRun(_), Values::PerRun(_)) => "Welch's t-test, 95 %".to_string(),
            _ => format!("measured once: noise band ±{:.0} %", noise * 100.0),
        };
        let in_band =
            self.min_ratio.is_none_or(|lo| r >= lo) && self.max_ratio.is_none_or(|hi| r <= hi);
        let band = match (self.min_ratio, self.max_ratio) {
            (Some(lo), Some(hi)) => format!(" [{lo}, {hi}]"),
            (Some(lo), None) => format!(" ≥ {lo}"),
            (None, Some(hi)) => format!(" ≤ {hi}"),
            (None, None) => String::new(),
        };
        let (outcome, why) = match self.expect.as_str() {
            // With a band, the band decides; a ratio outside it but inside the noise decides
            // nothing (two noisy runs must not make a claim of equality hold).
            "a ~ b" if !band.is_empty() && in_band => (
                Outcome::Holds,
                format!("a/b {r:.2} inside the band{band} ({test})"),
            ),
            "a ~ b" if !band.is_empty() && !significant => (
                Outcome::NotMeasured,
                format!("a/b {r:.2} outside the band{band} but inside the noise ({test})"),
            ),
            "a ~ b" if !significant => (Outcome::Holds, format!("inside the noise ({test})")),
            "a ~ b" => (
                Outcome::DoesNotHold,
                format!("a/b {r:.2} differs significantly ({test})"),
            ),
            _ if !significant => (
                Outcome::NotMeasured,
                format!("a/b {r:.2}: the difference is inside the noise ({test})"),
            ),
            exp => {
                let right_way = (exp == "a > b") == (r > 1.0);
                match (right_way, in_band) {
                    (true, true) => (
                        Outcome::Holds,
                        format!(
                            "a/b {r:.2}{}, significant ({test})",
                            if band.is_empty() {
                                String::new()
                            } else {
                                format!(" inside{band}")
                            }
                        ),
                    ),
                    (true, false) => (
                        Outcome::DoesNotHold,
                        format!("the right way, but a/b {r:.2} is outside{band} ({test})"),
                    ),
                    (false, _) => (
                        Outcome::DoesNotHold,
                        format!("the other way: a/b {r:.2}, significant ({test})"),
                    ),
                }
            }
        };
        p.outcome = outcome;
        p.why = why;
        p
    }
}

/// The one cell a selector picks at thread count `t`.
fn select<'a>(
    plan: &Plan,
    cells: &'a [Cell],
    si: usize,
    sel: &Selector,
    t: usize,
) -> Result<&'a Cell, String> {
    let threads = sel.threads.unwrap_or(t);
    let section = &plan.sections[si];
    let found: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.section == si && c.threads == threads)
        .filter(|c| {
            sel.server
                .as_ref()
                .is_none_or(|s| plan.servers[c.server].name() == *s)
        })
        .filter(|c| {
            sel.engine.as_ref().is_none_or(|e| {
                c.engine
                    .as_ref()
                    .is_some_and(|ce| ce.eq_ignore_ascii_case(e))
            })
        })
        .filter(|c| {
            sel.variant
                .as_ref()
                .is_none_or(|v| c.variant.is_some_and(|cv| section.variants[cv].name == *v))
        })
        .collect();
    match found.as_slice() {
        [c] => Ok(c),
        [] => Err(format!(
            "no cell of the plan matches {} at {threads} threads",
            describe(sel)
        )),
        _ => Err(format!(
            "{} at {threads} threads matches {} cells ({}); name server, engine or variant",
            describe(sel),
            found.len(),
            found
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn describe(sel: &Selector) -> String {
    let mut parts = Vec::new();
    for (k, v) in [
        ("server", &sel.server),
        ("engine", &sel.engine),
        ("variant", &sel.variant),
    ] {
        if let Some(v) = v {
            parts.push(format!("{k}={v}"));
        }
    }
    if parts.is_empty() {
        "{ }".into()
    } else {
        format!("{{ {} }}", parts.join(", "))
    }
}

fn metric_names(owners: Owners) -> Vec<String> {
    METRICS
        .iter()
        .map(|(m, _)| m.to_string())
        .chain(
            owners
                .iter()
                .flat_map(|o| o.claim_metrics().iter().map(|(m, _)| m.to_string())),
        )
        .collect()
}

/// Settings whose values differ between two results (name, a, b).
fn settings_differ(a: &ResultDoc, b: &ResultDoc) -> Vec<(String, String, String)> {
    let d = crate::server::capture::diff(&[
        (&a.target.settings, a.target.settings_non_default.as_slice()),
        (&b.target.settings, b.target.settings_non_default.as_slice()),
    ]);
    let mut out: Vec<(String, String, String)> = d
        .differ
        .into_iter()
        .map(|(k, v)| (k, v[0].clone(), v[1].clone()))
        .collect();
    if a.target.engine != b.target.engine {
        out.insert(
            0,
            (
                "(table engine)".into(),
                a.target.engine.clone(),
                b.target.engine.clone(),
            ),
        );
    }
    out
}

/// The server counters per operation (median over runs) whose a/b ratio is furthest from 1:
/// where the work differs (pages read, rows read, bytes written).
fn counters_differ(
    a: &ResultDoc,
    b: &ResultDoc,
    op: Option<&str>,
    n: usize,
) -> Vec<(String, f64, f64)> {
    let per_op = |doc: &ResultDoc| -> BTreeMap<String, f64> {
        let Ok(p) = pick_point(doc, op) else {
            return BTreeMap::new();
        };
        let mut sums: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in &p.runs {
            for (k, v) in &r.server_counters {
                sums.entry(k.clone())
                    .or_default()
                    .push(v / r.ops.max(1) as f64);
            }
        }
        sums.into_iter()
            .map(|(k, mut v)| {
                v.sort_by(f64::total_cmp);
                (k, v[v.len() / 2])
            })
            .collect()
    };
    let (ca, cb) = (per_op(a), per_op(b));
    let mut rows: Vec<(String, f64, f64, f64)> = ca
        .iter()
        .filter_map(|(k, &x)| {
            let y = cb.get(k).copied().unwrap_or(0.0);
            // Counters below 0.01 per operation on both sides say nothing about the work.
            if x.max(y) < 0.01 || is_uninformative(k) {
                return None;
            }
            let score = ((x + 1e-3) / (y + 1e-3)).ln().abs();
            Some((k.clone(), x, y, score))
        })
        .collect();
    rows.sort_by(|l, r| r.3.total_cmp(&l.3));
    rows.into_iter()
        .take(n)
        .map(|(k, x, y, _)| (k, x, y))
        .collect()
}

/// Counters that move with time or with the client, not with the work of an operation.
fn is_uninformative(name: &str) -> bool {
    const SKIP: &[&str] = &[
        "Uptime",
        "Bytes_",
        "Questions",
        "Queries",
        "Com_",
        "Handler_commit",
        "Threads_",
        "Connections",
        "Memory_used",
        "Max_used",
        "Open",
        "Opened",
    ];
    SKIP.iter().any(|s| name.starts_with(s))
}

/// Every claim of the plan, evaluated.
pub fn evaluate_all(
    plan: &Plan,
    cells: &[Cell],
    doc_of: &dyn Fn(&Cell) -> Vec<CellDoc>,
    owners: Owners,
) -> Vec<Evaluation> {
    plan.claims
        .iter()
        .map(|c| c.evaluate(plan, cells, doc_of, owners))
        .collect()
}

/// The claims table in Markdown (the suite's summary opens with it).
pub fn markdown(evals: &[Evaluation]) -> String {
    if evals.is_empty() {
        return String::new();
    }
    let mut s = String::from("## Claims\n\n| claim | the report says | its figure | ours | verdict | why |\n|---|---|---|---|---|---|\n");
    let cell = |x: &str| x.replace('|', "\\|").replace('\n', " ");
    for e in evals {
        s.push_str(&format!(
            "| {} | {} | {} | {} | **{}** | {} |\n",
            cell(&e.id),
            cell(&e.says),
            cell(e.figure.as_deref().unwrap_or("")),
            cell(&e.ours),
            e.outcome.label(),
            cell(&e.why)
        ));
    }
    let count = |o: Outcome| evals.iter().filter(|e| e.outcome == o).count();
    s.push_str(&format!(
        "\n{} hold, {} do not hold, {} not measured.\n\n",
        count(Outcome::Holds),
        count(Outcome::DoesNotHold),
        count(Outcome::NotMeasured)
    ));
    s
}

/// The claims table for the top of the page, with the settings and counters that differ
/// between the compared cells beside each claim.
pub fn html(evals: &[Evaluation]) -> String {
    use crate::report::svg::escape;
    if evals.is_empty() {
        return String::new();
    }
    let mut h = String::from("<section id=\"claims\"><h2>Claims of the report</h2><p class=\"note\">Each verdict is computed from the results below: <b>holds</b> (the difference goes the claimed way and is significant), <b>does not hold</b> (it goes the other way, or outside the claimed band), <b>not measured</b> (a cell missing, a run disturbed, or the difference inside the noise). a/b: the claim's first side over its second.</p><table class=\"claims\"><tr><th>claim</th><th>the report says</th><th>its figure</th><th>ours</th><th>verdict</th><th>why</th><th>settings that differ</th><th>counters per op that differ most</th></tr>");
    for e in evals {
        let settings: Vec<String> = e
            .settings
            .iter()
            .take(6)
            .map(|(k, a, b)| format!("{}: {} / {}", escape(k), escape(a), escape(b)))
            .collect();
        let more = e.settings.len().saturating_sub(6);
        let counters: Vec<String> = e
            .counters
            .iter()
            .map(|(k, a, b)| format!("{}: {:.3} / {:.3}", escape(k), a, b))
            .collect();
        let class = match e.outcome {
            Outcome::Holds => "holds",
            Outcome::DoesNotHold => "fails",
            Outcome::NotMeasured => "unmeasured",
        };
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\"><b>{}</b></td><td>{}</td><td>{}{}</td><td>{}</td></tr>",
            escape(&e.id),
            escape(&e.says),
            escape(e.figure.as_deref().unwrap_or("")),
            escape(&e.ours),
            e.outcome.label(),
            escape(&e.why),
            settings.join("<br>"),
            if more > 0 { format!("<br>(+{more} more)") } else { String::new() },
            counters.join("<br>")
        ));
    }
    h.push_str("</table></section>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Point, RunRecord};

    fn plan(claim: &str) -> Plan {
        let text = format!(
            r#"
name = "t"
workload = "micro-read"
engines = ["InnoDB", "MyISAM"]
threads = [4, 16]
[[servers]]
server = "mariadb:small"
[[claims]]
{claim}
"#
        );
        Plan::from_text(&text, "t.toml", false).unwrap()
    }

    fn doc(ops: &[f64], disturbed: bool) -> ResultDoc {
        ResultDoc {
            points: vec![Point {
                operation: "READ_PK_POINT".into(),
                threads: 4,
                runs: ops
                    .iter()
                    .map(|&o| RunRecord {
                        ops: 1000,
                        ops_per_s: o,
                        disturbed,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    const CLAIM: &str = r#"id = "R1.1"
says = "InnoDB faster than MyISAM"
metric = "ops_per_s"
operation = "READ_PK_POINT"
a = { engine = "InnoDB" }
b = { engine = "MyISAM" }
threads = [4]
expect = "a > b""#;

    fn verdict(p: &Plan, innodb: Option<ResultDoc>, myisam: Option<ResultDoc>) -> Evaluation {
        let cells = p.cells();
        let doc_of = |c: &Cell| -> Vec<CellDoc> {
            match c.engine.as_deref() {
                Some("InnoDB") => innodb.clone(),
                Some("MyISAM") => myisam.clone(),
                _ => None,
            }
            .map(|doc| vec![CellDoc { pass: 1, doc }])
            .unwrap_or_default()
        };
        p.claims[0].evaluate(p, &cells, &doc_of, &[])
    }

    #[test]
    fn a_claim_follows_the_measured_results() {
        let p = plan(CLAIM);
        let fast = doc(&[1000.0, 1010.0, 990.0], false);
        let slow = doc(&[800.0, 810.0, 790.0], false);
        let e = verdict(&p, Some(fast.clone()), Some(slow.clone()));
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        assert_eq!(e.ours, "a/b 1.25");
        // The same claim against swapped measurements.
        let e = verdict(&p, Some(slow.clone()), Some(fast.clone()));
        assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
        // A missing cell, a disturbed run, a difference inside the noise.
        let e = verdict(&p, Some(fast.clone()), None);
        assert_eq!(e.outcome, Outcome::NotMeasured);
        assert!(e.why.contains("has no result"), "{}", e.why);
        let e = verdict(&p, Some(doc(&[1000.0, 1010.0], true)), Some(slow.clone()));
        assert_eq!(e.outcome, Outcome::NotMeasured);
        assert!(e.why.contains("disturbed"), "{}", e.why);
        let noisy = doc(&[1000.0, 700.0, 1300.0], false);
        let e = verdict(&p, Some(noisy), Some(doc(&[990.0, 1010.0, 1000.0], false)));
        assert_eq!(e.outcome, Outcome::NotMeasured);
        assert!(e.why.contains("inside the noise"), "{}", e.why);
    }

    #[test]
    fn bands_and_similarity() {
        let banded = format!("{CLAIM}\nmin_ratio = 1.06\nmax_ratio = 1.09");
        let p = plan(&banded);
        let e = verdict(
            &p,
            Some(doc(&[1070.0, 1075.0, 1080.0], false)),
            Some(doc(&[1000.0, 1001.0, 999.0], false)),
        );
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        let e = verdict(
            &p,
            Some(doc(&[1500.0, 1510.0, 1490.0], false)),
            Some(doc(&[1000.0, 1001.0, 999.0], false)),
        );
        assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
        let same = CLAIM.replace("a > b", "a ~ b");
        let p = plan(&same);
        let e = verdict(
            &p,
            Some(doc(&[1000.0, 900.0, 1100.0], false)),
            Some(doc(&[1010.0, 910.0, 1090.0], false)),
        );
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        let e = verdict(
            &p,
            Some(doc(&[2000.0, 2001.0], false)),
            Some(doc(&[1000.0, 1001.0], false)),
        );
        assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
        // "Comparable" with a band: the band decides, and noise outside it decides nothing.
        let p = plan(&format!("{same}\nmin_ratio = 0.9\nmax_ratio = 1.1"));
        let steady = doc(&[1000.0, 1001.0, 999.0], false);
        let e = verdict(
            &p,
            Some(doc(&[1050.0, 1040.0, 1060.0], false)),
            Some(steady.clone()),
        );
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        let e = verdict(
            &p,
            Some(doc(&[800.0, 500.0, 1300.0], false)),
            Some(steady.clone()),
        );
        assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
        let e = verdict(
            &p,
            Some(doc(&[1500.0, 1501.0, 1499.0], false)),
            Some(steady),
        );
        assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
    }

    #[test]
    fn bad_claims_are_refused_when_the_plan_is_read() {
        let bad = |claim: &str| {
            let text = format!(
                "name='t'\nworkload='micro-read'\nengines=['InnoDB','MyISAM']\nthreads=[4]\n[[servers]]\nserver='mariadb:small'\n[[claims]]\n{claim}"
            );
            Plan::from_text(&text, "t.toml", false).unwrap_err().message
        };
        let m = bad(&CLAIM.replace("ops_per_s", "speed"));
        assert!(m.contains("unknown metric 'speed'"), "{m}");
        let m = bad(&CLAIM.replace("\"MyISAM\" }", "\"Falcon\" }"));
        assert!(
            m.contains("no cell of the plan matches { engine=Falcon }"),
            "{m}"
        );
        let m = bad(&CLAIM.replace("b = { engine = \"MyISAM\" }", "b = { }"));
        assert!(m.contains("matches 2 cells"), "{m}");
        let m = bad(&CLAIM.replace("a > b", "a >> b"));
        assert!(m.contains("expect"), "{m}");
    }
}
