//! What a workload adds to the outputs of its results: the parts of the result it owns
//! ([`SectionOwner`]) and what it draws them with (tables, chart series, the aggregate the
//! terminal table picks, a claim's values). The outputs (`crate::report`) render them; the
//! contract names them; they stand here, beside the model they read, under both.

use serde_json::Value;

use super::{Labeled, Point, ResultDoc};

/// A workload that contributes output of its own: the parts of the result it owns (keyed by
/// [`SectionOwner::key`] in `sections`) and how each output shows them.
pub trait SectionOwner {
    /// The workload name its sections are keyed by.
    fn key(&self) -> &'static str;

    /// HTML sections of the page for these results (empty when none of them has its sections).
    fn html(&self, _results: &[Labeled]) -> String {
        String::new()
    }

    /// Tables for the page and for `report --format csv --table NAME` (empty ones are left out).
    fn tables(&self, _results: &[Labeled]) -> Vec<Table> {
        Vec::new()
    }

    /// Lines printed after the terminal table of one result (`run` and the run's report).
    fn terminal(&self, _doc: &ResultDoc, _pick: Pick) -> String {
        String::new()
    }

    /// Extra series on a point's time-series chart (schema-change: its DDL markers).
    fn markers(&self, _doc: &ResultDoc, _point: &Point) -> Vec<Series> {
        Vec::new()
    }

    /// `report --format table`: results side by side, when this owner has such a view and
    /// these results have its sections.
    fn side_by_side(&self, _docs: &[ResultDoc]) -> Option<String> {
        None
    }

    /// Rewrite a v1 result (JSON) into v2 form: move this owner's v1 fields into its
    /// sections/figures.
    fn upgrade_v1(&self, _doc: &mut Value) {}

    /// Options of this workload (top-level keys of `workload_options`) that do not change its
    /// work, so two results differing only in them are the same configuration (the catalog's
    /// identity, catalog/same.rs). Every other option counts; `shard` and `seed` never do.
    fn not_the_work(&self) -> &'static [&'static str] {
        &[]
    }

    /// Its headline figures: names in a run's `figures` that the catalog keeps per point (the
    /// mean over the runs, one column each, beside the common figures) for `history` and its
    /// CSV and JSON. Lower-case words joined by `_` (`tpm_c`); the catalog names no workload.
    fn headline_figures(&self) -> &'static [&'static str] {
        &[]
    }

    /// Metrics of its sections that a plan's claims may read: (name, what it is). A name may
    /// take an argument after a colon (`compression.bytes_per_row:innodb-page-lz4`).
    fn claim_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// The value of one of `claim_metrics` in a result (`op`: the claim's operation, if any).
    fn claim_value(
        &self,
        _doc: &ResultDoc,
        _metric: &str,
        _op: Option<&str>,
    ) -> Option<MetricValues> {
        None
    }

    /// Whether the measurement behind one of `claim_metrics` was disturbed (other processes
    /// used more CPU than the run's bound while it was taken): `None` when this owner does not
    /// know, and the claim falls back to the runs of the point it reads.
    fn claim_disturbed(&self, _doc: &ResultDoc, _metric: &str, _op: Option<&str>) -> Option<bool> {
        None
    }

    /// How many of the measurements in this owner's sections of `doc` were disturbed (a
    /// suite re-runs such a cell in place).
    fn disturbed_parts(&self, _doc: &ResultDoc) -> usize {
        0
    }
}

pub type Owners<'a> = &'a [&'a dyn SectionOwner];

/// A metric's values in one result, for a claim: one per measured run (their spread is the
/// noise), or one for the whole result (load time, sizes, a suite's totals).
#[derive(Debug, Clone, PartialEq)]
pub enum MetricValues {
    PerRun(Vec<f64>),
    Once(f64),
}

impl MetricValues {
    /// The mean over the runs (the value itself for `Once`).
    pub fn mean(&self) -> f64 {
        match self {
            MetricValues::PerRun(v) if !v.is_empty() => super::mean_var(v).0,
            MetricValues::PerRun(_) => 0.0,
            MetricValues::Once(x) => *x,
        }
    }

    /// Every value divided by `by`.
    pub fn scaled(self, by: f64) -> MetricValues {
        match self {
            MetricValues::PerRun(v) => {
                MetricValues::PerRun(v.into_iter().map(|x| x / by).collect())
            }
            MetricValues::Once(x) => MetricValues::Once(x / by),
        }
    }
}

/// Which aggregate goes in the cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Pick {
    Max,
    Median,
}

impl Pick {
    /// The picked aggregate of per-run values (0 when there are none).
    pub fn of(self, v: &[f64]) -> f64 {
        match self {
            Pick::Max => v.iter().copied().fold(0.0, f64::max),
            Pick::Median => super::median(v),
        }
    }
}

/// One cell: what it shows in HTML and what it holds in CSV.
#[derive(Debug, Clone)]
pub enum Cell {
    Text(String),
    /// A number shown with `decimals` digits in HTML; CSV keeps the full value.
    Num(f64, usize),
    Int(u64),
    /// No value (the result does not have it).
    Empty,
}

#[derive(Debug, Clone)]
pub struct Table {
    /// The name `--table` selects it by (lowercase, dashes).
    pub name: &'static str,
    /// CSV column names (snake_case, unit in the name).
    pub columns: Vec<String>,
    /// HTML column headers, same length as `columns`.
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Rows shown in bold after the others (totals); part of the CSV too.
    pub footer: Vec<Vec<Cell>>,
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}
