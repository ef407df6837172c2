//! Outputs, all read from one result model: JSON (the result file), CSV, terminal table.

pub mod csv;
pub mod json;
pub mod model;
pub mod table;

pub use model::*;
