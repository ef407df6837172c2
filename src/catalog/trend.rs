//! `report --trend`: the catalogued results over time, one small chart per workload,
//! operation and thread count.

use super::{Catalog, HistoryRow};
use crate::error::Result;

/// The trend page of `rows` (oldest first).
pub fn page(rows: &[HistoryRow], _cat: &mut Catalog, _from: &str) -> Result<String> {
    Ok(format!(
        "<!doctype html><title>trend</title><p>{} points</p>",
        rows.len()
    ))
}
