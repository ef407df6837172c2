//! The iibench section of a result point (`points[].sections["iibench"]`): the window curve, the queries
//! and the write amplification. Counts add across clients; rates are derived from them.

use serde::{Deserialize, Serialize};

use crate::measure::LatencySummary;
use crate::model::DiskUsage;

use super::wear::DeviceWrites;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IibenchResult {
    /// Rows inserted (committed) by the run.
    pub rows: u64,
    /// INSERT statements that committed.
    pub batches: u64,
    pub rows_per_commit: u64,
    pub window_rows: u64,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
    /// Sum over rows of 32 bytes (key, datetime, three ints, float) + the data length.
    pub logical_bytes: u64,
    /// The insert rate per last `window_rows` rows against cumulative rows.
    pub windows: Vec<Window>,
    /// rows_per_s of the last complete window (the curve's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_window_rows_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queries: Option<Queries>,
    pub wear: Wear,
    /// `--max-table-rows`: the DELETEs that keep the table size bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletes: Option<Deletes>,
}

/// The deletes of `--max-table-rows` over the whole run (counts add across clients).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Deletes {
    pub max_table_rows: u64,
    /// DELETE statements that succeeded.
    pub statements: u64,
    /// Rows in their primary-key ranges (the rows deleted while ids are the row numbers).
    pub range_rows: u64,
    pub errors: u64,
    pub latency_us: LatencySummary,
    /// The DELETE latency histogram (HdrHistogram V2, base64).
    pub histogram_hdr_v2: String,
    /// SELECT COUNT(*) of the table after the run (the server's count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_rows_end: Option<u64>,
}

/// One window of the curve.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Window {
    /// Cumulative rows at the end of the window.
    pub rows_end: u64,
    pub rows: u64,
    pub batches: u64,
    pub errors: u64,
    /// End of the window, seconds from the start of the run.
    pub t_s: f64,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
    /// Batch latency within the window.
    pub latency_us: LatencySummary,
    pub logical_bytes: u64,
    /// Queries finished during the window (all query threads).
    pub queries: u64,
    pub queries_per_s: f64,
    /// Bytes the server process wrote during the window (/proc/PID/io), when its pid is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_written_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_bytes_per_row: Option<f64>,
    /// server_written_bytes / logical_bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_amplification: Option<f64>,
    /// True for the last window when it holds fewer than window_rows rows.
    pub partial: bool,
    /// CPUs other processes used on this host from the previous window's end to this one's
    /// (1.0: one whole CPU); absent in results made before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpus: Option<f64>,
    /// They disturbed the window's rate (`harness::disturbed`).
    #[serde(default)]
    pub disturbed: bool,
}

/// The query threads over the whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Queries {
    pub threads: usize,
    pub queries: u64,
    /// Rows the queries returned.
    pub rows: u64,
    pub errors: u64,
    pub queries_per_s: f64,
    pub latency_us: LatencySummary,
    /// The query latency histogram (HdrHistogram V2, base64): merges exactly across clients.
    pub histogram_hdr_v2: String,
}

/// Write amplification and space: what the server wrote for the rows, and what they occupy.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Wear {
    /// Server bytes written during the run (no forced flush).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_written_bytes_run: Option<u64>,
    /// Server bytes written from the start of the run to the end of the forced flush after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_written_bytes_total: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_bytes_per_row: Option<f64>,
    /// server_written_bytes_total / logical bytes inserted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_amplification: Option<f64>,
    /// The data folder (SQLite: the database file and its WAL) before the run, after a forced
    /// flush of the freshly created table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_before: Option<DiskUsage>,
    /// The same after the run and the final forced flush.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_after: Option<DiskUsage>,
    /// disk_after - disk_before (allocated bytes; may be negative when files shrink).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_growth_bytes: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_growth_bytes_per_row: Option<f64>,
    /// disk growth / logical bytes inserted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space_amplification: Option<f64>,
    /// The block device holding the data, from the start of the run to the end of the final
    /// flush (/proc/diskstats): device-wide, so other processes' writes are included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceWrites>,
}
