//! A claim of a report as its plan states it (`[[claims]]`): the data the plan file holds,
//! below the plan that reads it and the verdicts (`claims`) that judge it.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A figure of the report as a ratio a/b: one number or a range.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum FigureRatio {
    One(f64),
    Range([f64; 2]),
}

impl FigureRatio {
    pub fn bounds(self) -> (f64, f64) {
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
