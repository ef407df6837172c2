//! A report's claims as data, and their verdicts computed from the measured results.
//!
//! A claim compares one metric between two selections of cells (`a` and `b`), at each thread
//! count it names: `a > b`, `a < b` or `a ~ b`, with a band for the ratio a/b derived from the
//! report's own figure (`figure_ratio` and a stated `tolerance`, or `min_ratio`/`max_ratio`).
//! Its verdict is computed from the results on disk every time, never stored.
//!
//! The unit of evidence is the server start (a pass): each pass gives one value per side, the
//! two sides of a pass are paired, and the interval of a/b rests on the per-pass ratios
//! (`evidence`). Two judgements are made apart: the *direction* (the claimed way, the other
//! way, or inside the noise: the interval holds 1) and the *size* (a/b inside the band, the
//! whole interval beyond it, or undetermined). The verdict follows from both by one table
//! (`verdict`): `holds`, `holds in direction only`, `not the report's size`, `does not hold`,
//! `not measured` (why: a cell missing, partial or disturbed, one server start, the
//! difference inside the noise), `undecidable here` (the claim needs what this machine or
//! scale lacks). `a ~ b` is decided by two one-sided tests against its band. A side divided by
//! another thread count (`per_threads`) is divided start by start; a side divided by another
//! metric (`per_metric`) gives one value per result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::evidence::{self, Observed, StartValue};
use super::plan::{Cell, Plan};
use crate::report::{Owners, Point, ResultDoc, RunRecord, Status};

/// A figure of the report as a ratio a/b: one number or a range.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum FigureRatio {
    One(f64),
    Range([f64; 2]),
}

impl FigureRatio {
    fn bounds(self) -> (f64, f64) {
        match self {
            FigureRatio::One(x) => (x, x),
            FigureRatio::Range([a, b]) => (a.min(b), a.max(b)),
        }
    }
}

/// What a claim needs to be decided at all; short of it the verdict is `undecidable here`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Needs {
    /// CPUs of the host (scaling claims: no query scales past the cores).
    #[serde(default)]
    pub cores: Option<usize>,
    /// Run settings with a lower bound, read from the compared results' config
    /// (`table_size = 100000`: a full scan long enough to be scan-bound).
    #[serde(default)]
    pub config_min: BTreeMap<String, f64>,
    /// Run settings per connection with a lower bound (`warehouses = 1`: at least one TPC-C
    /// warehouse per connection, as the report had).
    #[serde(default)]
    pub config_per_thread: BTreeMap<String, f64>,
    /// Why, in the reader's words.
    #[serde(default)]
    pub why: Option<String>,
}

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
    /// The report's figure as a ratio a/b (one number or a range), from which the band is
    /// derived with `tolerance`.
    #[serde(default)]
    pub figure_ratio: Option<FigureRatio>,
    /// How far from the report's figure our ratio may lie and still count as the same size,
    /// as a factor: 0.25 widens [lo, hi] to [lo / 1.25, hi × 1.25]. Stated in the plan, with
    /// why, beside every figure.
    #[serde(default)]
    pub tolerance: Option<f64>,
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
    /// Bounds of the ratio a/b when they do not come from a figure (`a ~ b`: "comparable").
    #[serde(default)]
    pub min_ratio: Option<f64>,
    #[serde(default)]
    pub max_ratio: Option<f64>,
    /// How the rule reads the report's words, when that is not obvious.
    #[serde(default)]
    pub reading: Option<String>,
    /// A server the claim needs that the plan may lack (the report's MySQL, which is not
    /// installable here): without it the claim is `not measured`, not a bad plan.
    #[serde(default)]
    pub needs_server: Option<String>,
    /// What the claim needs to be decided (cores, sizes): short of it, `undecidable here`.
    #[serde(default)]
    pub needs: Option<Needs>,
    /// Our own check, not the report's: shown apart, labelled as ours.
    #[serde(default)]
    pub ours: bool,
    /// Where the report's prose and its own figures disagree, what the prose said (the claim
    /// encodes the figures).
    #[serde(default)]
    pub contradicts: Option<String>,
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
    /// Divide by another metric of the same cells (a collapse: the last window's rate over
    /// the first's).
    #[serde(default)]
    pub per_metric: Option<String>,
    /// A constant instead of cells (a scaling claim against 1: "falls past 64 threads").
    #[serde(default)]
    pub value: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Holds,
    HoldsInDirection,
    /// The direction inside the noise, the whole interval beyond the band.
    NotInSize,
    DoesNotHold,
    NotMeasured,
    Undecidable,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Holds => "holds",
            Outcome::HoldsInDirection => "holds in direction only",
            Outcome::NotInSize => "not the report's size",
            Outcome::DoesNotHold => "does not hold",
            Outcome::NotMeasured => "not measured",
            Outcome::Undecidable => "undecidable here",
        }
    }

    /// Whether the claim was decided (any verdict but not measured / undecidable).
    pub fn decided(self) -> bool {
        self.rank().is_some()
    }

    /// How far a decided verdict goes the claim's way (the other way 0 … holds 3); `None`
    /// for the undecided. The verdict table keeps it monotone: for a ratio on the claimed
    /// side of 1, a tighter interval never gives a lower rank.
    pub fn rank(self) -> Option<u8> {
        match self {
            Outcome::DoesNotHold => Some(0),
            Outcome::NotInSize => Some(1),
            Outcome::HoldsInDirection => Some(2),
            Outcome::Holds => Some(3),
            Outcome::NotMeasured | Outcome::Undecidable => None,
        }
    }

    fn class(self) -> &'static str {
        match self {
            Outcome::Holds => "holds",
            Outcome::HoldsInDirection => "direction",
            Outcome::NotInSize | Outcome::DoesNotHold => "fails",
            Outcome::NotMeasured | Outcome::Undecidable => "unmeasured",
        }
    }
}

/// The verdict from the two judgements (docs/reproductions.md, "The verdict table").
/// `a > b` / `a < b`: the other way decides against the claim whatever the size; the claimed
/// way holds when a/b lies inside the band (or there is none) and holds in direction only
/// otherwise; inside the noise, an interval wholly beyond the band still says "not the
/// report's size". `a ~ b`: the direction level is the equivalence test itself.
pub fn verdict(equal: bool, direction: Direction, size: Size) -> Outcome {
    use Direction::{Claimed, Opposite, Unclear};
    if equal {
        return match direction {
            Claimed => Outcome::Holds,
            Opposite => Outcome::DoesNotHold,
            Unclear => Outcome::NotMeasured,
        };
    }
    match (direction, size) {
        (Opposite, _) => Outcome::DoesNotHold,
        (Claimed, Size::Inside | Size::NoBand) => Outcome::Holds,
        (Claimed, Size::Outside | Size::Undetermined) => Outcome::HoldsInDirection,
        (Unclear, Size::Outside) => Outcome::NotInSize,
        (Unclear, _) => Outcome::NotMeasured,
    }
}

/// Which evidence one evaluation reads and at what level: every pass up to `max_pass`, the
/// two-sided `alpha`.
#[derive(Debug, Clone, Copy)]
pub struct Look {
    pub max_pass: u32,
    pub alpha: f64,
}

impl Look {
    /// Every pass at 95 %: a fixed number of passes, judged once.
    pub const ALL: Look = Look {
        max_pass: u32::MAX,
        alpha: 0.05,
    };
}

/// The direction level of a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The claimed way, significant (`a ~ b`: equivalent inside the band).
    Claimed,
    /// The other way, significant (`a ~ b`: significantly outside the band).
    Opposite,
    /// Not decided by the evidence.
    Unclear,
}

/// The size level of a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    /// a/b inside the band.
    Inside,
    /// The whole interval beyond the band.
    Outside,
    /// a/b outside the band, its interval reaching into it.
    Undetermined,
    /// The claim has no figure to size it by.
    NoBand,
}

/// A claim's verdict at one thread count.
#[derive(Debug, Clone, Serialize)]
pub struct PairEval {
    pub threads: usize,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    /// Means of a and b, and a/b.
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub ratio: Option<f64>,
    /// The confidence interval of a/b at `level` (95 %; 90 % for `a ~ b`, the two one-sided
    /// tests; higher at the later looks of `--until-decided`), from the per-start ratios.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<[f64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<f64>,
    /// Values behind a and b (runs × repeats × passes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<[usize; 2]>,
    /// Server starts (passes) the interval rests on: its unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts: Option<usize>,
    /// The two variance components of log a/b, as standard deviations (≈ relative): between
    /// server starts (beyond what the runs inside a start explain), and within a start (the
    /// standard error of one start's log a/b from its runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub between_start_sd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within_start_sd: Option<f64>,
    /// a/b of each pass (server start).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<PassRatio>,
    pub why: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct PassRatio {
    pub pass: u32,
    pub ratio: f64,
}

/// One counter per operation on both sides.
#[derive(Debug, Clone, Serialize)]
pub struct CounterDiff {
    pub name: String,
    pub a: f64,
    pub b: f64,
}

/// The engine's own status text of a compared cell (SHOW ENGINE ... STATUS at the end of the
/// point read).
#[derive(Debug, Clone, Serialize)]
pub struct EngineStatus {
    pub side: String,
    pub cell: String,
    pub text: String,
}

/// A claim's verdict and the evidence beside it.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    pub id: String,
    pub says: String,
    pub figure: Option<String>,
    /// The band a/b must lie in for the size to hold, and how it came about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band: Option<[Option<f64>; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band_from: Option<String>,
    pub metric: String,
    /// Our own check, not the report's.
    pub ours_check: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contradicts: Option<String>,
    pub outcome: Outcome,
    /// The direction and size levels (over every compared thread count).
    pub direction: Option<Direction>,
    pub size: Option<Size>,
    /// Our figure, e.g. "a/b 1.12 (4 thr), 0.97 (16 thr)".
    pub ours: String,
    pub why: String,
    /// The fewest server starts any compared thread count rests on.
    pub starts: Option<usize>,
    /// The two-sided level the verdict was tested at (0.05: 95 %).
    pub alpha: f64,
    /// `--until-decided`: the passes the verdict was decided at (or the last looked at).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub looks: Option<u32>,
    /// Not decided, and more passes could decide it (every compared cell is in the plan).
    pub open: bool,
    pub pairs: Vec<PairEval>,
    /// Server settings that differ between the compared cells (name, a, b).
    pub settings: Vec<(String, String, String)>,
    /// Server counters per operation that differ most between them.
    pub counters: Vec<CounterDiff>,
    /// SHOW ENGINE ... STATUS of the compared cells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub engine_status: Vec<EngineStatus>,
    /// `--profile-server`: the server functions whose µs/op differ most between the cells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<crate::report::flame::FunctionDiff>,
    /// Their table and the cells' flame graphs, for html().
    #[serde(skip)]
    pub functions_html: String,
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

/// The metrics read from a result's loads rather than its runs.
fn is_load_metric(metric: &str) -> bool {
    matches!(metric, "load_s" | "load_rows_per_s")
}

/// The values a side reads in one result, and whether the measurement was disturbed.
fn doc_values(
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

fn status_label(s: &Status) -> &'static str {
    match s {
        Status::Running => "running (unfinished)",
        Status::Complete => "complete",
        Status::Interrupted => "interrupted",
        Status::Failed => "failed",
    }
}

/// A JSON number anywhere in a result's config under `key` (the first found, depth first).
fn config_number(v: &serde_json::Value, key: &str) -> Option<f64> {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(x) = m.get(key) {
                if let Some(n) = x.as_f64() {
                    return Some(n);
                }
                if let Some(s) = x.as_str() {
                    if let Ok(n) = crate::config::parse::count(s) {
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

/// The results of one cell, each with the cell's name.
type NamedDocs = Vec<(String, ResultDoc)>;

/// What evaluating a claim reads: the plan, its cells, where their results are, and the
/// last pass it may read (a look of the sequential rule reads the passes up to its own).
struct Ctx<'a> {
    plan: &'a Plan,
    cells: &'a [Cell],
    si: usize,
    doc_of: &'a dyn Fn(&Cell) -> Vec<CellDoc>,
    owners: Owners<'a>,
    max_pass: u32,
}

/// Everything read for one side at one thread count.
struct Side {
    /// Its value in each server start, or a constant.
    obs: Observed,
    /// Values behind it (runs × repeats × passes).
    n: usize,
    docs: NamedDocs,
    /// Passes left out: their result was partial or disturbed.
    left_out: Vec<u32>,
}

impl Side {
    /// The mean over the starts (a constant: itself).
    fn mean(&self) -> Option<f64> {
        match &self.obs {
            Observed::Constant(c) => Some(*c),
            Observed::Starts(s) if s.is_empty() => None,
            Observed::Starts(s) => Some(s.values().map(|v| v.mean).sum::<f64>() / s.len() as f64),
        }
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
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

    /// The band a/b must lie in for the size to hold, and how it was derived.
    pub fn band(&self) -> Option<([Option<f64>; 2], String)> {
        if let Some(f) = self.figure_ratio {
            let (lo, hi) = f.bounds();
            let tol = self.tolerance.unwrap_or(0.0);
            let from = if lo == hi {
                format!("the report's {lo:.3}")
            } else {
                format!("the report's {lo:.3} to {hi:.3}")
            };
            return Some((
                [Some(lo / (1.0 + tol)), Some(hi * (1.0 + tol))],
                format!(
                    "{from}, ×/÷ {:.2} (tolerance {:.0} %)",
                    1.0 + tol,
                    tol * 100.0
                ),
            ));
        }
        if self.min_ratio.is_some() || self.max_ratio.is_some() {
            return Some((
                [self.min_ratio, self.max_ratio],
                "stated in the plan".to_string(),
            ));
        }
        None
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
            .chain(self.a.per_metric.as_ref())
            .chain(self.b.per_metric.as_ref())
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
        if self.expect == "a ~ b" && self.band().is_none() {
            return Err(
                "expect = \"a ~ b\" needs a band (min_ratio and max_ratio, or figure_ratio with a tolerance): equality is decided against it"
                    .into(),
            );
        }
        if let Some(t) = self.tolerance {
            if !(0.0..=10.0).contains(&t) || self.figure_ratio.is_none() {
                return Err(format!(
                    "tolerance = {t}: a factor from 0 to 10 that widens figure_ratio (which the claim must have)"
                ));
            }
        }
        if let Some(FigureRatio::One(x) | FigureRatio::Range([x, _])) = self.figure_ratio {
            if x <= 0.0 {
                return Err(format!("figure_ratio {x}: a ratio a/b above 0"));
            }
        }
        if !check_cells || self.missing_server(plan).is_some() {
            return Ok(());
        }
        for t in self.thread_counts(plan, si) {
            for (side, sel) in [("a", &self.a), ("b", &self.b)] {
                if sel.value.is_some() {
                    continue;
                }
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

    /// The cells one side reads at thread count `t`: the selected cell, and the base cell
    /// of `per_threads`.
    fn cells_of<'c>(
        &self,
        plan: &Plan,
        cells: &'c [Cell],
        si: usize,
        sel: &Selector,
        t: usize,
    ) -> Result<Vec<&'c Cell>, String> {
        let mut out = vec![select(plan, cells, si, sel, t)?];
        if let Some(pt) = sel.per_threads {
            let base = Selector {
                threads: Some(pt),
                ..sel.clone()
            };
            out.push(select(plan, cells, si, &base, pt)?);
        }
        Ok(out)
    }

    /// Every cell the claim compares (both sides, every thread count), as far as the plan
    /// has them: what another pass must measure again to decide it.
    pub fn cells_compared<'c>(&self, plan: &Plan, cells: &'c [Cell]) -> Vec<&'c Cell> {
        let Ok(si) = self.section_index(plan) else {
            return Vec::new();
        };
        let mut out: Vec<&Cell> = Vec::new();
        for t in self.thread_counts(plan, si) {
            for sel in [&self.a, &self.b] {
                if sel.value.is_some() {
                    continue;
                }
                for c in self.cells_of(plan, cells, si, sel, t).unwrap_or_default() {
                    if !out.iter().any(|x| x.name == c.name) {
                        out.push(c);
                    }
                }
            }
        }
        out
    }

    /// Why the claim cannot be decided with these results, if so (`needs`).
    fn undecidable(&self, docs: &[&ResultDoc], threads: &[usize]) -> Option<String> {
        let needs = self.needs.as_ref()?;
        let why = needs
            .why
            .as_deref()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        if let Some(c) = needs.cores {
            let have = docs.iter().map(|d| d.host.cores).max().unwrap_or(0);
            if have > 0 && have < c {
                return Some(format!(
                    "needs at least {c} cores, this host has {have}{why}"
                ));
            }
        }
        for (k, min) in &needs.config_min {
            for d in docs {
                if let Some(v) = config_number(&d.config, k) {
                    if v < *min {
                        return Some(format!(
                            "needs {k} of at least {min}, the cells have {v}{why}"
                        ));
                    }
                }
            }
        }
        let most = threads.iter().copied().max().unwrap_or(1).max(1) as f64;
        for (k, min) in &needs.config_per_thread {
            for d in docs {
                if let Some(v) = config_number(&d.config, k) {
                    if v / most < *min {
                        return Some(format!(
                            "needs {k} of at least {min} per connection, the cells have {v} for {most} connections{why}"
                        ));
                    }
                }
            }
        }
        None
    }

    /// One side at thread count `t`: its value in each server start (pass), or a constant.
    fn side(&self, cx: &Ctx, sel: &Selector, t: usize) -> Result<Side, String> {
        let Ctx {
            plan,
            cells,
            si,
            doc_of,
            owners,
            max_pass,
        } = *cx;
        if let Some(x) = sel.value {
            return Ok(Side {
                obs: Observed::Constant(x),
                n: 0,
                docs: Vec::new(),
                left_out: Vec::new(),
            });
        }
        let metric = sel.metric.as_deref().unwrap_or(&self.metric);
        let op = sel.operation.as_deref().or(self.operation.as_deref());
        let per = sel.per_metric.as_deref();
        // Passes left out of this side (partial or disturbed).
        let notes: std::cell::RefCell<Vec<u32>> = Default::default();
        // Every value of one cell, by pass: the runs and repeats of one server start
        // together. With `per_metric`, each result gives one value: its metric over the other
        // (the first and last windows of one run are one measurement, not two samples).
        let read = |cell: &Cell, docs: &mut NamedDocs| -> Result<BTreeMap<u32, Vec<f64>>, String> {
            let found: Vec<CellDoc> = doc_of(cell)
                .into_iter()
                .filter(|d| d.pass <= max_pass)
                .collect();
            if found.is_empty() {
                return Err(format!("cell {} has no result", cell.name));
            }
            let mut by_pass: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
            // A start whose measurement is partial or disturbed is left out of the evidence
            // (the other starts still count); with none left, the claim says why.
            let mut left_out: BTreeMap<u32, String> = BTreeMap::new();
            for d in found {
                if left_out.contains_key(&d.pass) {
                    continue;
                }
                if d.doc.status != Status::Complete {
                    by_pass.remove(&d.pass);
                    left_out.insert(
                        d.pass,
                        format!(
                            "cell {} (pass {}) has a result that is {}: a partial result decides nothing",
                            cell.name,
                            d.pass,
                            status_label(&d.doc.status)
                        ),
                    );
                    continue;
                }
                let in_cell = |e: String| format!("cell {}: {e}", cell.name);
                let (mut v, mut disturbed) =
                    doc_values(&d.doc, metric, op, owners).map_err(in_cell)?;
                if let Some(pm) = per {
                    let (w, also) = doc_values(&d.doc, pm, op, owners).map_err(in_cell)?;
                    disturbed |= also;
                    let (mv, mw) = (mean(&v), mean(&w));
                    if mw == 0.0 {
                        return Err(in_cell(format!("{pm} is 0: no ratio")));
                    }
                    v = vec![mv / mw];
                }
                if disturbed {
                    by_pass.remove(&d.pass);
                    left_out.insert(
                        d.pass,
                        format!(
                            "cell {} (pass {}): the measurement of {} this claim reads was disturbed (other processes used the CPU)",
                            cell.name,
                            d.pass,
                            op.unwrap_or(metric)
                        ),
                    );
                    continue;
                }
                by_pass.entry(d.pass).or_default().extend(v);
                docs.push((cell.name.clone(), d.doc));
            }
            if by_pass.is_empty() {
                if let Some(why) = left_out.values().next() {
                    return Err(why.clone());
                }
            }
            for p in left_out.keys() {
                if !notes.borrow().contains(p) {
                    notes.borrow_mut().push(*p);
                }
            }
            Ok(by_pass)
        };
        let starts_of = |by: &BTreeMap<u32, Vec<f64>>| -> BTreeMap<u32, StartValue> {
            by.iter()
                .filter_map(|(p, v)| Some((*p, StartValue::of(v)?)))
                .collect()
        };
        let cell = select(plan, cells, si, sel, t)?;
        let mut docs = Vec::new();
        let by_pass = read(cell, &mut docs)?;
        let mut starts = starts_of(&by_pass);
        let mut n: usize = by_pass.values().map(Vec::len).sum();
        // The divisor: the same selection at another thread count, start by start (both
        // cells ran on the same server process).
        if let Some(pt) = sel.per_threads {
            let base_sel = Selector {
                threads: Some(pt),
                ..sel.clone()
            };
            let bcell = select(plan, cells, si, &base_sel, pt)?;
            let mut bdocs = Vec::new();
            let base = starts_of(&read(bcell, &mut bdocs)?);
            starts = starts
                .into_iter()
                .filter_map(|(p, s)| {
                    let b = base.get(&p)?;
                    (b.mean != 0.0).then(|| (p, s.over(*b)))
                })
                .collect();
            n = n.min(base.values().map(|s| s.n).sum());
            docs.extend(bdocs);
        }
        let mut left_out = notes.into_inner();
        left_out.sort_unstable();
        Ok(Side {
            obs: Observed::Starts(starts),
            n,
            docs,
            left_out,
        })
    }
    /// The verdict from the results `doc_of` finds for each cell (every pass and repeat).
    pub fn evaluate(
        &self,
        plan: &Plan,
        cells: &[Cell],
        doc_of: &dyn Fn(&Cell) -> Vec<CellDoc>,
        owners: Owners,
        look: Look,
    ) -> Evaluation {
        let band = self.band();
        let mut eval = Evaluation {
            id: self.id.clone(),
            says: self.says.clone(),
            figure: self.figure.clone(),
            band: band.as_ref().map(|b| b.0),
            band_from: band.as_ref().map(|b| b.1.clone()),
            metric: self.metric.clone(),
            ours_check: self.ours,
            contradicts: self.contradicts.clone(),
            outcome: Outcome::NotMeasured,
            direction: None,
            size: None,
            ours: String::new(),
            why: String::new(),
            starts: None,
            alpha: look.alpha,
            looks: None,
            open: false,
            pairs: Vec::new(),
            settings: Vec::new(),
            counters: Vec::new(),
            engine_status: Vec::new(),
            functions: Vec::new(),
            functions_html: String::new(),
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
        let threads = self.thread_counts(plan, si);
        let mut evidence: Option<(NamedDocs, NamedDocs)> = None;
        let cx = Ctx {
            plan,
            cells,
            si,
            doc_of,
            owners,
            max_pass: look.max_pass,
        };
        let mut seen_docs: Vec<ResultDoc> = Vec::new();
        for &t in &threads {
            let a = self.side(&cx, &self.a, t);
            let b = self.side(&cx, &self.b, t);
            for s in [&a, &b].into_iter().flatten() {
                seen_docs.extend(s.docs.iter().map(|d| d.1.clone()));
            }
            let pair = match (a, b) {
                (Ok(a), Ok(b)) => {
                    let p = self.judge(t, &a, &b, look.alpha);
                    if evidence.is_none() {
                        evidence = Some((a.docs, b.docs));
                    }
                    p
                }
                (Err(e), _) | (_, Err(e)) => PairEval {
                    threads: t,
                    outcome: Outcome::NotMeasured,
                    direction: None,
                    size: None,
                    a: None,
                    b: None,
                    ratio: None,
                    ci: None,
                    level: None,
                    n: None,
                    starts: None,
                    between_start_sd: None,
                    within_start_sd: None,
                    passes: Vec::new(),
                    why: e,
                },
            };
            eval.pairs.push(pair);
        }
        // What the claim needs is read from every result of the cells it selects, whether
        // they decided anything or not (a disturbed cell still says how many cores it had).
        for &t in &threads {
            for sel in [&self.a, &self.b] {
                if sel.value.is_some() {
                    continue;
                }
                if let Ok(c) = select(plan, cells, si, sel, t) {
                    seen_docs.extend(doc_of(c).into_iter().map(|d| d.doc));
                }
            }
        }
        let refs: Vec<&ResultDoc> = seen_docs.iter().collect();
        if let Some(why) = self.undecidable(&refs, &threads) {
            eval.outcome = Outcome::Undecidable;
            eval.why = why;
        } else {
            let outcomes: Vec<Outcome> = eval.pairs.iter().map(|p| p.outcome).collect();
            let all = |o: Outcome| !outcomes.is_empty() && outcomes.iter().all(|x| *x == o);
            // Over the thread counts: the other way anywhere decides; then any `not measured`;
            // then the weakest verdict.
            eval.outcome = if outcomes.contains(&Outcome::DoesNotHold) {
                Outcome::DoesNotHold
            } else if outcomes.contains(&Outcome::NotMeasured) || outcomes.is_empty() {
                Outcome::NotMeasured
            } else if all(Outcome::Holds) {
                Outcome::Holds
            } else {
                *outcomes
                    .iter()
                    .min_by_key(|o| o.rank())
                    .unwrap_or(&Outcome::NotMeasured)
            };
            // More passes can decide it when every cell it compares is in the plan at this
            // scale and nothing but the evidence is missing.
            eval.open = eval.outcome == Outcome::NotMeasured
                && threads.iter().all(|&t| {
                    [&self.a, &self.b]
                        .iter()
                        .all(|s| s.value.is_some() || self.cells_of(plan, cells, si, s, t).is_ok())
                });
            let several = eval.pairs.len() > 1;
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
        }
        let decided: Vec<&PairEval> = eval
            .pairs
            .iter()
            .filter(|p| p.direction.is_some())
            .collect();
        if !decided.is_empty() && decided.len() == eval.pairs.len() {
            let dirs: Vec<Direction> = decided.iter().filter_map(|p| p.direction).collect();
            eval.direction = Some(if dirs.contains(&Direction::Opposite) {
                Direction::Opposite
            } else if dirs.iter().all(|d| *d == Direction::Claimed) {
                Direction::Claimed
            } else {
                Direction::Unclear
            });
            let sizes: Vec<Size> = decided.iter().filter_map(|p| p.size).collect();
            eval.size = Some(if sizes.contains(&Size::NoBand) {
                Size::NoBand
            } else if sizes.iter().all(|s| *s == Size::Inside) {
                Size::Inside
            } else if sizes.contains(&Size::Outside) {
                Size::Outside
            } else {
                Size::Undetermined
            });
        }
        eval.starts = eval.pairs.iter().filter_map(|p| p.starts).min();
        let several = eval.pairs.len() > 1;
        eval.ours = eval
            .pairs
            .iter()
            .filter_map(|p| {
                let r = p.ratio?;
                let ci =
                    p.ci.map(|[l, h]| format!(" [{}, {}]", fmt_ratio(l), fmt_ratio(h)))
                        .unwrap_or_default();
                let passes = if p.passes.len() > 1 {
                    format!(
                        "; {} starts: {}",
                        p.passes.len(),
                        p.passes
                            .iter()
                            .map(|x| format!("pass {} {}", x.pass, fmt_ratio(x.ratio)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                } else {
                    String::new()
                };
                Some(if several {
                    format!("a/b {}{ci} ({} thr{passes})", fmt_ratio(r), p.threads)
                } else if passes.is_empty() {
                    format!("a/b {}{ci}", fmt_ratio(r))
                } else {
                    format!("a/b {}{ci} ({})", fmt_ratio(r), &passes[2..])
                })
            })
            .collect::<Vec<_>>()
            .join(", ");
        if let Some((da, db)) = evidence {
            if let (Some(a), Some(b)) = (da.first(), db.first()) {
                eval.settings = settings_differ(&a.1, &b.1);
                let op_a = self.a.operation.as_deref().or(self.operation.as_deref());
                let op_b = self.b.operation.as_deref().or(self.operation.as_deref());
                eval.counters = counters_differ(&a.1, op_a, &b.1, op_b, 6);
                let prof = |d: &ResultDoc, op| {
                    pick_point(d, op)
                        .ok()
                        .and_then(crate::report::flame::point_profile)
                };
                if let (Some(pa), Some(pb)) = (prof(&a.1, op_a), prof(&b.1, op_b)) {
                    use crate::report::flame;
                    eval.functions = flame::functions_differ(&pa, &pb, 8);
                    eval.functions_html = flame::why_html(&pa, &pb, &eval.functions);
                }
                for (side, (cell, doc), op) in [("a", a, op_a), ("b", b, op_b)] {
                    let text = pick_point(doc, op)
                        .ok()
                        .and_then(|p| p.engine_status.clone())
                        .or_else(|| doc.points.iter().find_map(|p| p.engine_status.clone()));
                    if let Some(text) = text {
                        if !eval
                            .engine_status
                            .iter()
                            .any(|e| e.cell == *cell && e.side != side)
                        {
                            eval.engine_status.push(EngineStatus {
                                side: side.into(),
                                cell: cell.clone(),
                                text,
                            });
                        }
                    }
                }
            }
        }
        eval
    }

    /// The verdict at one thread count, at two-sided level `alpha` (`a ~ b`: two one-sided
    /// tests at `alpha` each).
    fn judge(&self, threads: usize, a: &Side, b: &Side, alpha: f64) -> PairEval {
        let equal = self.expect == "a ~ b";
        let mut p = PairEval {
            threads,
            outcome: Outcome::NotMeasured,
            direction: None,
            size: None,
            a: a.mean(),
            b: b.mean(),
            ratio: None,
            ci: None,
            level: None,
            n: Some([a.n, b.n]),
            starts: None,
            between_start_sd: None,
            within_start_sd: None,
            passes: Vec::new(),
            why: String::new(),
        };
        let level_alpha = if equal { 2.0 * alpha } else { alpha };
        let iv = match evidence::interval(&a.obs, &b.obs, level_alpha) {
            Ok(iv) => iv,
            Err(e) => {
                p.why = e;
                return p;
            }
        };
        p.ratio = Some(iv.ratio);
        p.ci = Some(iv.ci);
        p.level = Some(1.0 - level_alpha);
        p.starts = Some(iv.starts);
        p.between_start_sd = Some(iv.between_sd);
        p.within_start_sd = Some(iv.within_sd);
        p.passes = iv
            .per_start
            .iter()
            .map(|&(pass, ratio)| PassRatio { pass, ratio })
            .collect();
        let band = self.band().map(|b| b.0);
        let [lo, hi] = band.unwrap_or([None, None]);
        let below = lo.is_some_and(|lo| iv.ci[1] < lo);
        let above = hi.is_some_and(|hi| iv.ci[0] > hi);
        let size = if band.is_none() {
            Size::NoBand
        } else if lo.is_none_or(|lo| iv.ratio >= lo) && hi.is_none_or(|hi| iv.ratio <= hi) {
            Size::Inside
        } else if below || above {
            Size::Outside
        } else {
            Size::Undetermined
        };
        let direction = if equal {
            let inside = lo.is_none_or(|lo| iv.ci[0] >= lo) && hi.is_none_or(|hi| iv.ci[1] <= hi);
            if inside {
                Direction::Claimed
            } else if below || above {
                Direction::Opposite
            } else {
                Direction::Unclear
            }
        } else {
            let (up, down) = (iv.ci[0] > 1.0, iv.ci[1] < 1.0);
            let want_up = self.expect == "a > b";
            if (up && want_up) || (down && !want_up) {
                Direction::Claimed
            } else if up || down {
                Direction::Opposite
            } else {
                Direction::Unclear
            }
        };
        p.outcome = verdict(equal, direction, size);
        p.direction = Some(direction);
        p.size = Some(size);
        let ratio = fmt_ratio(iv.ratio);
        let ci = format!(
            "{} % CI [{}, {}] over {} server starts",
            fmt_pct(1.0 - level_alpha),
            fmt_ratio(iv.ci[0]),
            fmt_ratio(iv.ci[1]),
            iv.starts
        );
        let band_text = match band {
            Some([Some(lo), Some(hi)]) => format!("[{}, {}]", fmt_ratio(lo), fmt_ratio(hi)),
            Some([Some(lo), None]) => format!("≥ {}", fmt_ratio(lo)),
            Some([None, Some(hi)]) => format!("≤ {}", fmt_ratio(hi)),
            _ => String::new(),
        };
        let side_of_band = if below { "below" } else { "above" };
        p.why = match (equal, p.outcome, size) {
            (true, Outcome::Holds, _) => {
                format!("a/b {ratio}, {ci} inside the band {band_text} (two one-sided tests)")
            }
            (true, Outcome::DoesNotHold, _) => {
                format!("a/b {ratio}, {ci} outside the band {band_text}")
            }
            (true, _, _) => format!(
                "a/b {ratio}: the evidence is too weak to call them equal ({ci} reaches outside the band {band_text})"
            ),
            (false, Outcome::Holds, Size::NoBand) => format!(
                "a/b {ratio}, significant ({ci}); the report gives no figure to size it by"
            ),
            (false, Outcome::Holds, _) => {
                format!("a/b {ratio} inside the band {band_text}, significant ({ci})")
            }
            (false, Outcome::HoldsInDirection, Size::Outside) => format!(
                "the claimed way, significant ({ci}), but beyond the band {band_text}: not the report's size"
            ),
            (false, Outcome::HoldsInDirection, _) => format!(
                "the claimed way, significant ({ci}); a/b {ratio} is outside the band {band_text} but the interval reaches into it: size undetermined"
            ),
            (false, Outcome::NotInSize, _) => format!(
                "not the report's size: the whole {ci} lies {side_of_band} the band {band_text}; the direction itself is inside the noise"
            ),
            (false, Outcome::DoesNotHold, _) => {
                format!("the other way: a/b {ratio}, significant ({ci})")
            }
            _ => format!("a/b {ratio}: the difference is inside the noise ({ci} holds 1)"),
        };
        let mut left: Vec<u32> = a.left_out.iter().chain(&b.left_out).copied().collect();
        left.sort_unstable();
        left.dedup();
        if !left.is_empty() {
            p.why.push_str(&format!(
                " (left out, partial or disturbed: pass {})",
                left.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        p
    }
}

/// A ratio with the digits that matter at its size.
fn fmt_ratio(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else if x.abs() >= 0.1 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A confidence level as a percentage with the digits that tell it apart (95, 97.5, 98.75).
fn fmt_pct(level: f64) -> String {
    let pct = level * 100.0;
    let text = format!("{pct:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
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
/// where the work differs (pages read, rows read, bytes written). Each side reads its own
/// operation (claims across queries compare two).
fn counters_differ(
    a: &ResultDoc,
    op_a: Option<&str>,
    b: &ResultDoc,
    op_b: Option<&str>,
    n: usize,
) -> Vec<CounterDiff> {
    let per_op = |doc: &ResultDoc, op: Option<&str>| -> BTreeMap<String, f64> {
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
    let (ca, cb) = (per_op(a, op_a), per_op(b, op_b));
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
        .map(|(name, a, b, _)| CounterDiff { name, a, b })
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

/// How the passes are judged: once, over all of them (a fixed number of passes), or by the
/// sequential rule of `--until-decided`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Design {
    Fixed,
    /// Looked at after each pass from `evidence::FIRST_LOOK` on, look j at level
    /// `evidence::sequential_alpha(0.05, j)`; a claim keeps the verdict of the first look
    /// that decided it.
    Sequential,
}

/// The nominal two-sided level of every verdict.
pub const ALPHA: f64 = 0.05;

/// Every claim of the plan, evaluated.
pub fn evaluate_all(
    plan: &Plan,
    cells: &[Cell],
    doc_of: &dyn Fn(&Cell) -> Vec<CellDoc>,
    owners: Owners,
    design: Design,
) -> Vec<Evaluation> {
    plan.claims
        .iter()
        .map(|c| evaluate_one(c, plan, cells, doc_of, owners, design))
        .collect()
}

/// One claim under a design.
pub fn evaluate_one(
    c: &Claim,
    plan: &Plan,
    cells: &[Cell],
    doc_of: &dyn Fn(&Cell) -> Vec<CellDoc>,
    owners: Owners,
    design: Design,
) -> Evaluation {
    if design == Design::Fixed {
        return c.evaluate(plan, cells, doc_of, owners, Look::ALL);
    }
    // The passes any compared cell has.
    let last = c
        .cells_compared(plan, cells)
        .iter()
        .flat_map(|cell| doc_of(cell).into_iter().map(|d| d.pass))
        .max()
        .unwrap_or(0);
    let mut looked: Option<Evaluation> = None;
    let mut look = 0;
    let mut seen_starts = 0;
    for k in evidence::FIRST_LOOK..=last {
        // A look is a pass that added a start to this claim's evidence.
        let probe = c.evaluate(
            plan,
            cells,
            doc_of,
            owners,
            Look {
                max_pass: k,
                alpha: ALPHA,
            },
        );
        let starts = probe.starts.unwrap_or(0);
        if starts <= seen_starts && looked.is_some() {
            continue;
        }
        seen_starts = starts;
        look += 1;
        let mut e = c.evaluate(
            plan,
            cells,
            doc_of,
            owners,
            Look {
                max_pass: k,
                alpha: evidence::sequential_alpha(ALPHA, look),
            },
        );
        e.looks = Some(k);
        let decided = e.outcome.decided() || e.outcome == Outcome::Undecidable;
        looked = Some(e);
        if decided {
            break;
        }
    }
    looked.unwrap_or_else(|| {
        let mut e = c.evaluate(plan, cells, doc_of, owners, Look::ALL);
        if e.outcome.decided() {
            // Fewer passes than the first look: the sequential rule has not looked yet.
            e.outcome = Outcome::NotMeasured;
            e.direction = None;
            e.size = None;
            e.why = format!(
                "{} pass(es): --until-decided first looks after pass {}",
                last,
                evidence::FIRST_LOOK
            );
            e.open = true;
        }
        e
    })
}

/// "3 hold, 1 holds in direction only, ..." for a list of verdicts.
pub fn tally(evals: &[&Evaluation]) -> String {
    let count = |o: Outcome| evals.iter().filter(|e| e.outcome == o).count();
    let decided = evals.iter().filter(|e| e.outcome.decided()).count();
    format!(
        "{} hold, {} hold in direction only, {} not the report's size, {} do not hold, {} not measured, {} undecidable here ({decided} of {} decided)",
        count(Outcome::Holds),
        count(Outcome::HoldsInDirection),
        count(Outcome::NotInSize),
        count(Outcome::DoesNotHold),
        count(Outcome::NotMeasured),
        count(Outcome::Undecidable),
        evals.len()
    )
}

fn dir_label(d: Option<Direction>) -> &'static str {
    match d {
        Some(Direction::Claimed) => "the claimed way",
        Some(Direction::Opposite) => "the other way",
        Some(Direction::Unclear) => "inside the noise",
        None => "–",
    }
}

fn size_label(s: Option<Size>) -> &'static str {
    match s {
        Some(Size::Inside) => "inside the band",
        Some(Size::Outside) => "beyond the band",
        Some(Size::Undetermined) => "undetermined",
        Some(Size::NoBand) => "no figure",
        None => "–",
    }
}

/// The report's claims first, then our own checks, each group with its tally.
fn groups(evals: &[Evaluation]) -> Vec<(&'static str, Vec<&Evaluation>)> {
    let report: Vec<&Evaluation> = evals.iter().filter(|e| !e.ours_check).collect();
    let ours: Vec<&Evaluation> = evals.iter().filter(|e| e.ours_check).collect();
    let mut out = Vec::new();
    if !report.is_empty() {
        out.push(("Claims of the report", report));
    }
    if !ours.is_empty() {
        out.push(("Our own checks (not the report's)", ours));
    }
    out
}

/// The claims table in Markdown (the suite's summary opens with it).
pub fn markdown(evals: &[Evaluation]) -> String {
    if evals.is_empty() {
        return String::new();
    }
    let cell = |x: &str| x.replace('|', "\\|").replace('\n', " ");
    let mut s = String::from("## Claims\n\n");
    for (title, list) in groups(evals) {
        s.push_str(&format!("### {title}\n\n| claim | the report says | its figure | band a/b | ours | evidence | direction | size | verdict | why |\n|---|---|---|---|---|---|---|---|---|---|\n"));
        for e in &list {
            let says = match &e.contradicts {
                Some(c) => format!("{} (the report's prose: {c})", e.says),
                None => e.says.clone(),
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | **{}** | {} |\n",
                cell(&e.id),
                cell(&says),
                cell(e.figure.as_deref().unwrap_or("")),
                cell(&band_text(e)),
                cell(&e.ours),
                cell(&evidence_text(e)),
                dir_label(e.direction),
                size_label(e.size),
                e.outcome.label(),
                cell(&e.why)
            ));
        }
        s.push_str(&format!("\n{}.\n\n", tally(&list)));
    }
    s
}

/// The evidence a verdict rests on: server starts, the spread between starts and within a
/// start (the largest over the compared thread counts), and the pass that decided it.
fn evidence_text(e: &Evaluation) -> String {
    let Some(n) = e.starts else {
        return "–".into();
    };
    let max = |f: fn(&PairEval) -> Option<f64>| e.pairs.iter().filter_map(f).reduce(f64::max);
    let pct = |x: Option<f64>| {
        x.map(|v| format!("±{:.1} %", v * 100.0))
            .unwrap_or_else(|| "–".into())
    };
    let mut t = format!(
        "{n} starts; between {}, within {}",
        pct(max(|p| p.between_start_sd)),
        pct(max(|p| p.within_start_sd))
    );
    if let Some(k) = e.looks {
        t.push_str(&format!("; looked at after pass {k}"));
    }
    t
}

fn band_text(e: &Evaluation) -> String {
    match e.band {
        Some([Some(lo), Some(hi)]) => format!("[{}, {}]", fmt_ratio(lo), fmt_ratio(hi)),
        Some([Some(lo), None]) => format!("≥ {}", fmt_ratio(lo)),
        Some([None, Some(hi)]) => format!("≤ {}", fmt_ratio(hi)),
        _ => "–".into(),
    }
}

/// The claims tables for the top of the page: the report's figure and ours, the direction and
/// the size verdicts, and under each claim the settings that differ between the compared
/// cells, the counters per operation that differ most and the engines' own status (folded).
pub fn html(evals: &[Evaluation]) -> String {
    use crate::report::svg::escape;
    if evals.is_empty() {
        return String::new();
    }
    let mut h = String::from("<section id=\"claims\"><h2>Claims</h2><p class=\"note\">Each verdict is computed from the results below. The unit of evidence is the <b>server start</b> (a pass of the suite): each start gives one value per side, the two sides of a start are paired, and the interval of a/b rests on the per-start ratios (its degrees of freedom: starts − 1); the spread between starts and within a start are shown beside it. Two judgements are made apart: the <b>direction</b> (the claimed way or the other way when the interval excludes 1, otherwise inside the noise) and the <b>size</b> (a/b inside the band derived from the report's figure, the whole interval beyond it, or undetermined). <b>holds</b>: the claimed way, inside the band (or no figure); <b>holds in direction only</b>: the claimed way, outside the band; <b>not the report's size</b>: the direction inside the noise, the whole interval beyond the band; <b>does not hold</b>: the other way; <b>not measured</b>: a cell missing, partial or disturbed, one server start, or the difference inside the noise; <b>undecidable here</b>: the claim needs what this host or scale lacks. \"a ~ b\" holds when the 90 % interval lies inside the band (two one-sided tests). A tighter interval never gives a worse verdict to a ratio on the claimed side. a/b: the claim's first side over its second.</p>");
    for (title, list) in groups(evals) {
        h.push_str(&format!("<h3>{}</h3><p class=\"note\">{}.</p><table class=\"claims\"><tr><th>claim</th><th>the report says</th><th>its figure</th><th>band a/b</th><th>ours</th><th>evidence</th><th>direction</th><th>size</th><th>verdict</th><th>why</th></tr>", escape(title), escape(&tally(&list))));
        for e in &list {
            let says = match &e.contradicts {
                Some(c) => format!(
                    "{}<br><i>The report's prose: {}</i>",
                    escape(&e.says),
                    escape(c)
                ),
                None => escape(&e.says),
            };
            h.push_str(&format!(
                "<tr><td>{}</td><td>{says}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\"><b>{}</b></td><td>{}</td></tr>",
                escape(&e.id),
                escape(e.figure.as_deref().unwrap_or("")),
                escape(&band_text(e)),
                escape(&e.ours),
                escape(&evidence_text(e)),
                dir_label(e.direction),
                size_label(e.size),
                e.outcome.class(),
                e.outcome.label(),
                escape(&e.why),
            ));
            let mut why = String::new();
            if !e.settings.is_empty() {
                why.push_str("<p><b>Settings that differ</b> (a / b): ");
                let list: Vec<String> = e
                    .settings
                    .iter()
                    .take(12)
                    .map(|(k, a, b)| format!("{}: {} / {}", escape(k), escape(a), escape(b)))
                    .collect();
                why.push_str(&list.join("; "));
                if e.settings.len() > 12 {
                    why.push_str(&format!(" (+{} more)", e.settings.len() - 12));
                }
                why.push_str("</p>");
            }
            if !e.counters.is_empty() {
                why.push_str("<table class=\"counters\"><tr><th>server counter per operation</th><th>a</th><th>b</th><th>a/b</th></tr>");
                for c in &e.counters {
                    let r = if c.b > 0.0 {
                        fmt_ratio(c.a / c.b)
                    } else {
                        "–".into()
                    };
                    why.push_str(&format!(
                        "<tr><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{r}</td></tr>",
                        escape(&c.name),
                        c.a,
                        c.b
                    ));
                }
                why.push_str("</table>");
            }
            why.push_str(&e.functions_html);
            for s in &e.engine_status {
                why.push_str(&format!(
                    "<details><summary>Engine status of {} ({})</summary><pre>{}</pre></details>",
                    escape(&s.side),
                    escape(&s.cell),
                    escape(&s.text)
                ));
            }
            if !why.is_empty() {
                h.push_str(&format!(
                    "<tr class=\"why\"><td></td><td colspan=\"9\"><details><summary>why: settings, counters, engine status</summary>{why}</details></td></tr>"
                ));
            }
        }
        h.push_str("</table>");
    }
    h.push_str("</section>");
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
threads = [1, 4, 16]
[[servers]]
server = "mariadb:small"
[[claims]]
{claim}
"#
        );
        Plan::from_text(&text, "t.toml", false).unwrap()
    }

    fn point(op: &str, threads: usize, ops: &[f64], disturbed: bool) -> Point {
        Point {
            operation: op.into(),
            threads,
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
        }
    }

    fn doc(ops: &[f64], disturbed: bool) -> ResultDoc {
        ResultDoc {
            status: Status::Complete,
            points: vec![point("READ_PK_POINT", 4, ops, disturbed)],
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

    /// The verdict with each engine's cells (every thread count) given by `of`.
    fn verdict_by(p: &Plan, of: &dyn Fn(&str, usize) -> Vec<CellDoc>) -> Evaluation {
        let cells = p.cells();
        let doc_of = |c: &Cell| of(c.engine.as_deref().unwrap_or(""), c.threads);
        p.claims[0].evaluate(p, &cells, &doc_of, &[], Look::ALL)
    }

    /// The same result in each of three passes (three server starts that agree).
    fn verdict(p: &Plan, innodb: Option<ResultDoc>, myisam: Option<ResultDoc>) -> Evaluation {
        verdict_by(p, &|e, _| {
            match e {
                "InnoDB" => innodb.clone(),
                "MyISAM" => myisam.clone(),
                _ => None,
            }
            .map(|doc| {
                (1..=3)
                    .map(|pass| CellDoc {
                        pass,
                        doc: doc.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
        })
    }

    /// One value per pass for each side.
    fn by_pass(a: &[f64], b: &[f64]) -> impl Fn(&str, usize) -> Vec<CellDoc> {
        let (a, b) = (a.to_vec(), b.to_vec());
        move |e, _| {
            let v = if e == "InnoDB" { &a } else { &b };
            v.iter()
                .enumerate()
                .map(|(i, x)| CellDoc {
                    pass: i as u32 + 1,
                    doc: doc(&[*x], false),
                })
                .collect()
        }
    }

    #[test]
    fn a_claim_follows_the_measured_results() {
        let p = plan(CLAIM);
        let fast = doc(&[1000.0, 1010.0, 990.0], false);
        let slow = doc(&[800.0, 810.0, 790.0], false);
        let e = verdict(&p, Some(fast.clone()), Some(slow.clone()));
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        assert_eq!(e.size, Some(Size::NoBand));
        assert!(e.ours.starts_with("a/b 1.25 ["), "{}", e.ours);
        // The same claim against swapped measurements.
        let e = verdict(&p, Some(slow.clone()), Some(fast.clone()));
        assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
        assert_eq!(e.direction, Some(Direction::Opposite));
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
    fn a_disturbed_run_outside_the_compared_points_voids_nothing() {
        let p = plan(CLAIM);
        let mut fast = doc(&[1000.0, 1010.0, 990.0], false);
        // Another query of the same cell was disturbed: the claim does not read it.
        fast.points
            .push(point("READ_FTS", 4, &[10.0, 11.0, 12.0], true));
        let e = verdict(&p, Some(fast), Some(doc(&[800.0, 810.0, 790.0], false)));
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    }

    #[test]
    fn a_partial_result_decides_nothing() {
        let p = plan(CLAIM);
        let mut fast = doc(&[1000.0, 1010.0, 990.0], false);
        fast.status = Status::Interrupted;
        let e = verdict(&p, Some(fast), Some(doc(&[800.0, 810.0, 790.0], false)));
        assert_eq!(e.outcome, Outcome::NotMeasured);
        assert!(e.why.contains("partial result"), "{}", e.why);
    }

    #[test]
    fn direction_and_size_from_the_reports_figure() {
        let banded = format!("{CLAIM}\nfigure_ratio = [1.06, 1.09]\ntolerance = 0.05");
        let p = plan(&banded);
        let steady = doc(&[1000.0, 1001.0, 999.0], false);
        let e = verdict(
            &p,
            Some(doc(&[1070.0, 1075.0, 1080.0], false)),
            Some(steady.clone()),
        );
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        assert_eq!(e.size, Some(Size::Inside));
        // 1.5x: the claimed way, but far larger than the report's figure.
        let e = verdict(
            &p,
            Some(doc(&[1500.0, 1510.0, 1490.0], false)),
            Some(steady.clone()),
        );
        assert_eq!(e.outcome, Outcome::HoldsInDirection, "{}", e.why);
        assert_eq!(e.direction, Some(Direction::Claimed));
        assert_eq!(e.size, Some(Size::Outside));
        assert!(e.why.contains("beyond the band"), "{}", e.why);
        // Inside the noise, but the whole interval below the report's figure: not that size.
        let big = format!("{CLAIM}\nfigure_ratio = 1.58\ntolerance = 0.15");
        let p2 = plan(&big);
        let e = verdict(
            &p2,
            Some(doc(&[900.0, 1100.0, 1300.0, 900.0, 1100.0, 1300.0], false)),
            Some(doc(&[1000.0, 1010.0, 990.0, 1000.0, 1010.0, 990.0], false)),
        );
        assert_eq!(e.outcome, Outcome::NotInSize, "{}", e.why);
        assert_eq!(e.direction, Some(Direction::Unclear));
        assert_eq!(e.size, Some(Size::Outside));
        assert!(e.why.contains("not the report's size"), "{}", e.why);
        // ... and an interval that reaches the band decides nothing.
        let e = verdict(
            &p2,
            Some(doc(&[700.0, 1100.0, 1500.0, 700.0, 1100.0, 1500.0], false)),
            Some(doc(&[1000.0, 1010.0, 990.0, 1000.0, 1010.0, 990.0], false)),
        );
        assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
        let (band, from) = p.claims[0].band().unwrap();
        assert!((band[0].unwrap() - 1.06 / 1.05).abs() < 1e-9, "{from}");
    }

    #[test]
    fn equality_is_an_equivalence_test() {
        let same = format!(
            "{}\nmin_ratio = 0.9\nmax_ratio = 1.1",
            CLAIM.replace("a > b", "a ~ b")
        );
        let p = plan(&same);
        let steady = doc(&[1000.0, 1001.0, 999.0], false);
        // Two tight, equal sides: equivalent inside the band.
        let e = verdict(
            &p,
            Some(doc(&[1020.0, 1021.0, 1019.0], false)),
            Some(steady.clone()),
        );
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        // Two noisy sides of the same mean: weak evidence, not "equal".
        let e = verdict(
            &p,
            Some(doc(&[800.0, 1000.0, 1200.0], false)),
            Some(doc(&[1200.0, 1000.0, 800.0], false)),
        );
        assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
        assert!(e.why.contains("too weak"), "{}", e.why);
        // Tightly 1.5x: not equal.
        let e = verdict(
            &p,
            Some(doc(&[1500.0, 1501.0, 1499.0], false)),
            Some(steady),
        );
        assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
        // Equality without a band is refused when the plan is read.
        let text = format!(
            "name='t'\nworkload='micro-read'\nengines=['InnoDB','MyISAM']\nthreads=[4]\n[[servers]]\nserver='mariadb:small'\n[[claims]]\n{}",
            CLAIM.replace("a > b", "a ~ b")
        );
        let m = Plan::from_text(&text, "t.toml", false).unwrap_err().message;
        assert!(m.contains("needs a band"), "{m}");
    }

    #[test]
    fn per_threads_carries_the_base_cells_spread() {
        let claim = r#"id = "S"
says = "MyISAM scales worse than InnoDB"
metric = "ops_per_s"
operation = "READ_PK_POINT"
a = { engine = "MyISAM", threads = 16, per_threads = 1 }
b = { engine = "InnoDB", threads = 16, per_threads = 1 }
expect = "a < b""#;
        let p = plan(claim);
        let run = |e: &str, t: usize, noisy_base: bool| -> Vec<CellDoc> {
            let ops: Vec<f64> = match (e, t) {
                // MyISAM 1.6x from 1 to 16 threads, InnoDB 2x: tight at 16 threads.
                ("MyISAM", 16) => vec![1600.0, 1601.0, 1599.0],
                ("InnoDB", 16) => vec![2000.0, 2001.0, 1999.0],
                ("MyISAM", 1) if noisy_base => vec![500.0, 1000.0, 1500.0],
                _ => vec![1000.0, 1001.0, 999.0],
            };
            let d = ResultDoc {
                status: Status::Complete,
                points: vec![point("READ_PK_POINT", t, &ops, false)],
                ..Default::default()
            };
            (1..=3)
                .map(|pass| CellDoc {
                    pass,
                    doc: d.clone(),
                })
                .collect()
        };
        let e = verdict_by(&p, &|e, t| run(e, t, false));
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        // The same 16-thread cells over a noisy 1-thread cell: the ratio of ratios is not
        // significant any more.
        let e = verdict_by(&p, &|e, t| run(e, t, true));
        assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
        assert!(e.why.contains("inside the noise"), "{}", e.why);
    }

    #[test]
    fn the_server_start_is_the_unit() {
        let p = plan(CLAIM);
        // One value per start: three starts that agree decide.
        let e = verdict_by(
            &p,
            &by_pass(&[1000.0, 1010.0, 990.0], &[800.0, 805.0, 795.0]),
        );
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        assert_eq!(e.pairs[0].n, Some([3, 3]));
        assert_eq!(e.starts, Some(3));
        assert!(e.why.contains("over 3 server starts"), "{}", e.why);
        // Tight runs inside one start decide nothing: the spread between starts is unknown.
        let e = verdict(&p, None, None);
        assert_eq!(e.outcome, Outcome::NotMeasured);
        let one = |pass| CellDoc {
            pass,
            doc: doc(&[1000.0, 1001.0, 999.0, 1000.0], false),
        };
        let e = verdict_by(&p, &|e, _| match e {
            "InnoDB" => vec![one(1)],
            _ => vec![CellDoc {
                pass: 1,
                doc: doc(&[800.0, 801.0, 799.0, 800.0], false),
            }],
        });
        assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
        assert!(e.why.contains("one server start"), "{}", e.why);
        // Two starts that disagree (1.25 and 0.88), each from tight runs: the old pooling
        // of every run called this significant; between starts it is noise.
        let e = verdict_by(&p, &|e, _| match e {
            "InnoDB" => vec![
                CellDoc {
                    pass: 1,
                    doc: doc(&[1000.0, 1001.0, 999.0], false),
                },
                CellDoc {
                    pass: 2,
                    doc: doc(&[700.0, 701.0, 699.0], false),
                },
            ],
            _ => vec![
                CellDoc {
                    pass: 1,
                    doc: doc(&[800.0, 801.0, 799.0], false),
                },
                CellDoc {
                    pass: 2,
                    doc: doc(&[800.0, 801.0, 799.0], false),
                },
            ],
        });
        assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
        assert!(e.why.contains("inside the noise"), "{}", e.why);
        assert!(e.ours.contains("pass 1 1.25, pass 2 0.88"), "{}", e.ours);
        let pair = &e.pairs[0];
        assert!(pair.between_start_sd.unwrap() > 0.2, "{pair:?}");
        assert!(pair.within_start_sd.unwrap() < 0.01, "{pair:?}");
    }

    /// A disturbed pass is left out of the evidence; the other starts still decide.
    #[test]
    fn a_disturbed_pass_is_left_out() {
        let p = plan(CLAIM);
        let e = verdict_by(&p, &|e, _| {
            (1..=3)
                .map(|pass| CellDoc {
                    pass,
                    doc: if e == "InnoDB" {
                        doc(&[1000.0, 1010.0, 990.0], pass == 2)
                    } else {
                        doc(&[800.0, 810.0, 790.0], false)
                    },
                })
                .collect()
        });
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        assert_eq!(e.starts, Some(2));
        assert!(
            e.why.contains("left out, partial or disturbed: pass 2"),
            "{}",
            e.why
        );
    }

    /// For a ratio on the claimed side of 1, a tighter interval never gives a worse verdict;
    /// for one on the other side, never a better one; and no tighter interval turns a decided
    /// verdict into an undecided one.
    #[test]
    fn a_tighter_interval_never_gives_a_worse_verdict() {
        for band in [
            "",
            "\nfigure_ratio = 1.58\ntolerance = 0.15",
            "\nmin_ratio = 0.8\nmax_ratio = 1.2",
        ] {
            let p = plan(&format!("{CLAIM}{band}"));
            let claim = &p.claims[0];
            for r in [0.5, 0.8, 0.95, 1.05, 1.1, 1.3, 1.4, 1.6, 1.9, 2.5] {
                let mut last: Option<Outcome> = None;
                // Three starts at r·e^-s, r, r·e^s: the same ratio, a narrower interval as s falls.
                for s in [0.8f64, 0.4, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.001] {
                    let side = |x: &[f64]| Side {
                        obs: Observed::Starts(
                            x.iter()
                                .enumerate()
                                .map(|(i, m)| {
                                    (
                                        i as u32 + 1,
                                        StartValue {
                                            mean: *m,
                                            within: 0.0,
                                            n: 1,
                                        },
                                    )
                                })
                                .collect(),
                        ),
                        n: 3,
                        docs: Vec::new(),
                        left_out: Vec::new(),
                    };
                    let a = side(&[r * (-s).exp(), r, r * s.exp()]);
                    let b = side(&[1.0, 1.0, 1.0]);
                    let o = claim.judge(4, &a, &b, ALPHA).outcome;
                    if let Some(prev) = last {
                        if let Some(pr) = prev.rank() {
                            let now = o.rank();
                            assert!(now.is_some(), "r {r} s {s}{band}: {prev:?} -> {o:?}");
                            let now = now.unwrap();
                            if r > 1.0 {
                                assert!(now >= pr, "r {r} s {s}{band}: {prev:?} -> {o:?}");
                            } else {
                                assert!(now <= pr, "r {r} s {s}{band}: {prev:?} -> {o:?}");
                            }
                        }
                    }
                    last = Some(o);
                }
            }
        }
    }

    /// R1.3's case: an imprecise 1.10 below the band is "not the report's size", the same
    /// ratio measured tightly "holds in direction only": never "does not hold".
    #[test]
    fn direction_inside_the_noise_never_fails_the_claim() {
        let p = plan(&format!("{CLAIM}\nfigure_ratio = 1.58\ntolerance = 0.15"));
        let wide = verdict_by(
            &p,
            &by_pass(&[1050.0, 1150.0, 1100.0], &[1000.0, 1000.0, 1000.0]),
        );
        let tight = verdict_by(
            &p,
            &by_pass(&[1100.0, 1102.0, 1098.0], &[1000.0, 1000.0, 1000.0]),
        );
        assert_eq!(wide.outcome, Outcome::NotInSize, "{}", wide.why);
        assert_eq!(tight.outcome, Outcome::HoldsInDirection, "{}", tight.why);
        assert!(tight.outcome.rank() > wide.outcome.rank());
    }

    /// `a ~ b`: passes at 1.02 and 0.99, both inside the band, are equivalence evidence,
    /// not "unstable".
    #[test]
    fn equality_absorbs_passes_on_both_sides_of_one() {
        let same = format!(
            "{}\nmin_ratio = 0.8\nmax_ratio = 1.25",
            CLAIM.replace("a > b", "a ~ b")
        );
        let p = plan(&same);
        let e = verdict_by(
            &p,
            &by_pass(&[1020.0, 990.0, 1005.0], &[1000.0, 1000.0, 1000.0]),
        );
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
    }

    /// A load that other processes disturbed voids the load-time claims that read it.
    #[test]
    fn a_disturbed_load_voids_load_claims() {
        let p = plan(&CLAIM.replace("ops_per_s", "load_s"));
        let loaded = |s: f64, disturbed: bool| {
            let mut d = doc(&[1000.0], false);
            d.load = vec![crate::load::LoadStats {
                table: "t".into(),
                rows: 1000,
                connections: 1,
                method: crate::load::LoadMethod::Insert,
                elapsed_s: s,
                rows_per_s: 1000.0 / s,
                interrupted: false,
                disturbed,
                others_cpus: Some(if disturbed { 0.5 } else { 0.0 }),
            }];
            d
        };
        let e = verdict(&p, Some(loaded(3.0, false)), Some(loaded(2.0, false)));
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        let e = verdict(&p, Some(loaded(3.0, true)), Some(loaded(2.0, false)));
        assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
        assert!(e.why.contains("disturbed"), "{}", e.why);
    }

    /// `per_metric`: a result's metric over its other metric is one value (the first and
    /// last windows of one run are one measurement), its spread from the starts.
    #[test]
    fn per_metric_is_one_value_per_result() {
        let claim = r#"id = "C"
says = "a's ratio below b's"
metric = "p99_us"
operation = "READ_PK_POINT"
a = { engine = "InnoDB", per_metric = "p50_us" }
b = { engine = "MyISAM", per_metric = "p50_us" }
threads = [4]
expect = "a > b""#;
        let p = plan(claim);
        let with = |p50: u64, p99: u64| {
            let mut d = doc(&[1000.0, 1000.0, 1000.0], false);
            for r in &mut d.points[0].runs {
                r.latency_us.p50_us = p50;
                r.latency_us.p99_us = p99;
            }
            d
        };
        let e = verdict(&p, Some(with(100, 400)), Some(with(100, 200)));
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        assert_eq!(e.pairs[0].n, Some([3, 3]), "one value per result");
    }

    /// A side that can be 0 (a stall that did not happen) is judged against a bound.
    #[test]
    fn a_zero_valued_side_is_judged_as_a_bound() {
        let claim = r#"id = "O"
says = "no stall"
metric = "ops_per_s"
operation = "READ_PK_POINT"
a = { engine = "InnoDB" }
b = { value = 0.5 }
threads = [4]
expect = "a < b""#;
        let p = plan(claim);
        let e = verdict_by(&p, &by_pass(&[0.0, 0.0, 0.0], &[]));
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        let e = verdict_by(&p, &by_pass(&[2.0, 2.1, 1.9], &[]));
        assert_eq!(e.outcome, Outcome::DoesNotHold, "{}", e.why);
    }

    /// Equal values in every start on both sides: not a zero standard error.
    #[test]
    fn zero_variance_is_not_significance() {
        let p = plan(CLAIM);
        let e = verdict_by(
            &p,
            &by_pass(&[1003.0, 1003.0, 1003.0], &[1000.0, 1000.0, 1000.0]),
        );
        assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
        assert!(e.pairs[0].ci.unwrap()[0] < 1.0, "{:?}", e.pairs[0]);
    }

    /// The sequential rule: a look later than the first tests at a stricter level, and a
    /// claim keeps the verdict of the pass that decided it.
    #[test]
    fn until_decided_looks_at_a_falling_level() {
        let p = plan(CLAIM);
        let cells = p.cells();
        let of = by_pass(
            &[1300.0, 1310.0, 1290.0, 1305.0],
            &[1000.0, 1000.0, 1000.0, 1000.0],
        );
        let doc_of = |c: &Cell| of(c.engine.as_deref().unwrap_or(""), c.threads);
        let e = evaluate_one(&p.claims[0], &p, &cells, &doc_of, &[], Design::Sequential);
        assert_eq!(e.outcome, Outcome::Holds, "{}", e.why);
        assert_eq!(e.looks, Some(3), "decided at the first look");
        assert!((e.alpha - 0.025).abs() < 1e-12, "{}", e.alpha);
        assert!(e.why.contains("97.5 % CI"), "{}", e.why);
        // Two passes only: the rule has not looked.
        let of2 = by_pass(&[1300.0, 1310.0], &[1000.0, 1000.0]);
        let doc_of2 = |c: &Cell| of2(c.engine.as_deref().unwrap_or(""), c.threads);
        let e = evaluate_one(&p.claims[0], &p, &cells, &doc_of2, &[], Design::Sequential);
        assert_eq!(e.outcome, Outcome::NotMeasured, "{}", e.why);
        assert!(e.open);
    }

    #[test]
    fn a_claim_that_needs_more_cores_is_undecidable_here() {
        let p = plan(&format!(
            "{CLAIM}\nneeds = {{ cores = 8, why = \"scaling\" }}"
        ));
        let mut fast = doc(&[1000.0, 1010.0, 990.0], false);
        fast.host.cores = 2;
        let e = verdict(&p, Some(fast), Some(doc(&[800.0, 810.0, 790.0], false)));
        assert_eq!(e.outcome, Outcome::Undecidable, "{}", e.why);
        assert!(
            e.why.contains("at least 8 cores, this host has 2"),
            "{}",
            e.why
        );
        let p = plan(&format!(
            "{CLAIM}\nneeds = {{ config_per_thread = {{ warehouses = 1.0 }} }}"
        ));
        let mut few = doc(&[1000.0, 1010.0, 990.0], false);
        few.config = serde_json::json!({ "workload": { "warehouses": 2 } });
        let e = verdict(&p, Some(few), Some(doc(&[800.0, 810.0, 790.0], false)));
        assert_eq!(e.outcome, Outcome::Undecidable, "{}", e.why);
        assert!(e.why.contains("warehouses"), "{}", e.why);
    }

    /// Every claim of the four reports whose figure has a number carries a band from it, and
    /// the reports' claims and ours are told apart.
    #[test]
    fn every_figure_of_the_reports_has_a_band() {
        for (name, text) in crate::suite::REPRODUCTIONS {
            let p = Plan::from_text(text, name, false).unwrap();
            for c in &p.claims {
                let numbered = c
                    .figure
                    .as_deref()
                    .is_some_and(|f| f.chars().any(|ch| ch.is_ascii_digit()));
                // Figures that only name sizes or thread counts to compare ("4k < 8k",
                // "past 64 threads") give no ratio.
                let ratio_words = ["%", " x", " vs ", "s vs", "KB", "equal", "about"];
                let is_ratio = c
                    .figure
                    .as_deref()
                    .is_some_and(|f| ratio_words.iter().any(|w| f.contains(w)));
                if numbered && is_ratio && !c.ours {
                    assert!(c.band().is_some(), "{name} {}: figure without a band", c.id);
                }
                if c.tolerance.is_some() {
                    assert!(c.figure_ratio.is_some(), "{name} {}", c.id);
                }
            }
            assert!(p.claims.iter().any(|c| !c.ours), "{name}");
        }
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
        let m = bad(&format!("{CLAIM}\ntolerance = 0.2"));
        assert!(m.contains("figure_ratio"), "{m}");
    }
}
