//! What a load did: how rows travelled, and each table's figures.

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
