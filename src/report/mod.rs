//! Outputs, all read from one result model: JSON (the result file), CSV, terminal table, the
//! HTML report, and comparisons.

pub mod compare;
pub mod csv;
pub mod html;
mod html_compression;
mod html_fairness;
mod html_iibench;
mod html_kinds;
mod html_sqlbench;
mod html_tpcc;
pub mod json;
pub mod model;
pub mod svg;
pub mod svg_bar;
pub mod table;
pub mod tables;

pub use model::*;

use std::path::Path;

use crate::error::{Error, Result};

/// Read a result file (or the result.json inside a result folder).
pub fn load(path: &Path) -> Result<ResultDoc> {
    let file = if path.is_dir() {
        path.join("result.json")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Error::usage(format!("cannot read {}: {e}", file.display())))?;
    let doc: ResultDoc = serde_json::from_str(&text).map_err(|e| {
        Error::usage(format!(
            "{} is not an enginebench result: {e}",
            file.display()
        ))
    })?;
    if doc.schema_version != SCHEMA_VERSION {
        return Err(Error::usage(format!(
            "{} has schema_version {}; this enginebench reads {SCHEMA_VERSION}",
            file.display(),
            doc.schema_version
        )));
    }
    Ok(doc)
}
