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
pub mod merge;
pub mod svg;
pub mod svg_bar;
pub mod tables;
pub mod terminal;

// The result model every output reads, and what a workload adds to the outputs
// (`SectionOwner`, its tables and chart series), live a floor below: the contract and the
// runner use them too.
pub use crate::model::*;

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

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
