//! What a load is asked to do (`LoadOptions`: the harness makes them, the loader and the
//! workloads' prepares take them) and what it did: how rows travelled, and each table's
//! figures.

use std::sync::{Arc, Mutex};

/// How rows travel to the server.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum LoadMethod {
    /// Multi-row INSERT statements of `batch_rows` rows.
    Insert,
    /// Streamed: MySQL `LOAD DATA LOCAL INFILE`, PostgreSQL `COPY FROM STDIN`, one statement per
    /// chunk of `10 x batch_rows` rows (SQLite: the same as insert).
    Stream,
    /// Multi-row INSERT statements of `batch_rows` rows, prepared once per connection and
    /// executed with the rows as parameters (MySQL/MariaDB binary protocol, PostgreSQL
    /// extended protocol): the server parses no values. SQLite: the same as insert.
    Prepared,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LoadStats {
    pub table: String,
    pub rows: u64,
    pub connections: usize,
    /// How the rows were sent: `insert` when the server refused a streamed load (for example
    /// MySQL with local_infile=OFF) and the loader fell back.
    pub method: LoadMethod,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
    /// Cut short by SIGINT / SIGTERM: `rows` is what was loaded until then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Other processes used more of the CPU than `run --disturbed-above` while the tables
    /// loaded (the harness measures the whole prepare phase): a load time that claims must not
    /// read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    /// The CPUs other processes used meanwhile (when measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpus: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub method: LoadMethod,
    /// Loader connections (SQLite always uses one).
    pub connections: usize,
    /// Rows per INSERT statement / per SQLite transaction.
    pub batch_rows: usize,
    /// Statements each loader connection runs first (MySQL: unique_checks=0, ...).
    pub session_sql: Vec<String>,
    /// Draw this load's progress bar on a terminal (a workload may follow only its big table).
    pub progress: bool,
    /// `--table-options`: appended to every benchmark table's CREATE TABLE (MariaDB/MySQL).
    pub table_options: String,
    /// Where the progress goes (terminal bar, `--format jsonl` lines, live metrics: the live
    /// outputs, a floor above the loader).
    pub live: Arc<dyn LoadWatch>,
    /// Every table's load as it ends, finished or cut short by a signal (shared by clones).
    pub journal: LoadJournal,
    /// `prepare --shard I/N`: load only this shard's block of each table's ids (whole
    /// groups); the other shards load the rest, and since every row is made from its id the
    /// tables end up as one process would have loaded them.
    pub shard: Option<super::Shard>,
}

/// What the loads of one command did so far, so that a run interrupted while loading can
/// still say in its result how far the load got (a workload's `prepare` returns its stats only
/// when every table is loaded).
#[derive(Debug, Clone, Default)]
pub struct LoadJournal(Arc<Mutex<Vec<LoadStats>>>);

impl LoadJournal {
    /// Add one table's load (the sharded loader records a table's loads on every backend as
    /// one).
    pub(crate) fn record(&self, s: LoadStats) {
        self.push(s);
    }

    /// Add one table's load (the loader, as each table ends).
    pub(crate) fn push(&self, s: LoadStats) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(s);
    }

    /// Every load recorded so far, in the order they ended.
    pub fn entries(&self) -> Vec<LoadStats> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Where a load's progress goes. The live outputs (`Live`, a floor above) implement it.
pub trait LoadWatch: std::fmt::Debug + Send + Sync {
    /// The progress of loading `rows` rows into `table` over `connections` connections;
    /// `bar`: draw it on a terminal (a workload may follow only its big table).
    fn load(&self, table: &str, rows: u64, connections: usize, bar: bool) -> Box<dyn LoadTrack>;
}

/// One table's load as its watcher sees it: the loader calls `update` on its progress tick
/// (every 100 ms) and `finish` at the end.
pub trait LoadTrack: Send {
    fn update(&mut self, done: u64);
    fn finish(self: Box<Self>, done: u64);
}
