//! Outputs, all read from one result model: JSON (the result file), CSV, terminal table, the
//! HTML report, HdrHistogram percentile files (.hgrm), and comparisons.
//!
//! This module knows no workload. What only one workload produces (its sections, derived
//! figures, tables and terminal lines) is written by that workload, and every output asks the
//! [`SectionOwner`]s it is given for their part.

pub mod compare;
pub mod csv;
pub mod differences;
pub mod flame;
pub mod gate;
pub mod hgrm;
pub mod html;
mod html_fairness;
mod html_fleet;
mod html_kinds;
mod html_nodes;
mod html_summary;
pub mod json;
pub mod labeled;
pub mod merge;
pub mod svg;
pub mod svg_bar;
pub mod tables;
pub mod terminal;

// The result model every output reads lives a floor below (the contract and the runner write
// it too).
pub use crate::model::*;

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use labeled::Labeled;
use tables::Table;
use terminal::Pick;

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
    fn markers(&self, _doc: &ResultDoc, _point: &Point) -> Vec<svg::Series> {
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
            MetricValues::PerRun(v) if !v.is_empty() => compare::mean_var(v).0,
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

pub type Owners<'a> = &'a [&'a dyn SectionOwner];

/// Read a result file (or the result.json inside a result folder). A schema_version 1 result
/// is upgraded on the way in: every owner moves its v1 fields into its sections.
pub fn load(path: &Path, owners: Owners) -> Result<ResultDoc> {
    let file = if path.is_dir() {
        path.join("result.json")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Error::usage(format!("cannot read {}: {e}", file.display())))?;
    let not_result = |e: serde_json::Error| {
        Error::usage(format!(
            "{} is not an enginebench result: {e}",
            file.display()
        ))
    };
    let mut value: Value = serde_json::from_str(&text).map_err(not_result)?;
    match value.get("schema_version").and_then(Value::as_u64) {
        Some(1) => upgrade_v1(&mut value, owners),
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => {
            return Err(Error::usage(format!(
                "{} has schema_version {v}; this enginebench reads 1 and {SCHEMA_VERSION}",
                file.display()
            )))
        }
        None => {}
    }
    let doc: ResultDoc = serde_json::from_value(value).map_err(not_result)?;
    Ok(doc)
}

/// v1 → v2: each owner moves its fields, then the version says 2.
pub fn upgrade_v1(doc: &mut Value, owners: Owners) {
    for o in owners {
        o.upgrade_v1(doc);
    }
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
    }
}

/// For upgrades: move `obj[field]` (when present and not null) to `obj[map][key]`, creating
/// the map. `obj` is any object of the result (the document, a point, a run, an interval).
pub fn move_into(obj: &mut Value, field: &str, map: &str, key: &str) {
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    let Some(v) = o.remove(field) else { return };
    if v.is_null() {
        return;
    }
    let m = o
        .entry(map)
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(m) = m.as_object_mut() {
        m.insert(key.to_string(), v);
    }
}

/// For upgrades: every point object of a v1 result.
pub fn points_mut(doc: &mut Value) -> impl Iterator<Item = &mut Value> {
    doc.get_mut("points")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// For upgrades: every run object of a v1 result.
pub fn runs_mut(doc: &mut Value) -> impl Iterator<Item = &mut Value> {
    points_mut(doc).flat_map(|p| {
        p.get_mut("runs")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_into_creates_the_map_and_skips_null() {
        let mut v = serde_json::json!({"a": 1, "b": null, "m": {"x": 0}});
        move_into(&mut v, "a", "m", "y");
        move_into(&mut v, "b", "n", "z");
        move_into(&mut v, "c", "n", "z");
        assert_eq!(v, serde_json::json!({"m": {"x": 0, "y": 1}}));
    }
}
