//! The command line. Doc comments here are the `--help` text.

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::table::Pick;

/// enginebench — a storage-engine benchmark lab.
///
/// Runs the classic storage-engine benchmarks against embedded SQLite (the default: nothing to
/// install), MariaDB/MySQL (InnoDB, MyISAM, Aria, RocksDB, ...) and PostgreSQL, with warm-up
/// that is excluded, repeated measured runs, thread sweeps, HDR latency percentiles and
/// versioned JSON results.
///
/// Start with: enginebench run micro-read
#[derive(Debug, Parser)]
#[command(
    name = "enginebench",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a workload's tables and load them (run does this too when they are missing).
    Prepare(PrepareArgs),
    /// Run a workload: for every operation and thread count, a warm-up (not recorded), then the
    /// measured runs; prints a table of ops/s and writes a JSON result.
    Run(RunArgs),
    /// Drop a workload's tables.
    Cleanup(CleanupArgs),
    /// List the workloads and their operations.
    List,
    /// Make one self-contained HTML page (or CSV) from one or more results: charts of
    /// throughput vs threads, latency, time series, and what differs between the servers.
    Report(ReportArgs),
    /// Compare two results: the ratio B/A for every metric both have, with a significance
    /// verdict from the repeated runs (Welch's t-test).
    Compare(CompareArgs),
    /// Check a loaded workload's data for consistency (tpcc: TPC-C 3.3.2.1 to 3.3.2.4).
    /// Exit 0 when every condition holds, 1 when one fails (each failure is printed, naming
    /// the warehouse and district), 2 when the tables are missing or the target unreachable.
    Check(CheckArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Workload name (only tpcc has consistency conditions).
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Result files (result.json) or result folders.
    #[arg(required = true, value_name = "RESULT")]
    pub results: Vec<std::path::PathBuf>,
    /// Where to write the report ("-" for stdout).
    #[arg(long, short = 'o', default_value = "report.html", value_name = "FILE")]
    pub output: String,
    /// html: the page; csv: one line per measured run of every result.
    #[arg(long, value_enum, default_value_t = ReportFormat::Html)]
    pub format: ReportFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Html,
    Csv,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The baseline result (A).
    pub a: std::path::PathBuf,
    /// The result compared with it (B).
    pub b: std::path::PathBuf,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// Where to run: sqlite:///path.db, mysql://user@host:port/db, mysql://user@localhost/db?socket=/path.sock,
    /// postgres://user@host:port/db or postgres://user@localhost/db?host=/socket/dir.
    /// Passwords: set MYSQL_PWD or PGPASSWORD rather than writing them in the URL.
    /// [default: sqlite://enginebench-data/enginebench.db]
    #[arg(long, short = 't', env = "ENGINEBENCH_TARGET", value_name = "URL")]
    pub target: Option<String>,

    /// Storage engine for created tables on MySQL/MariaDB (InnoDB, MyISAM, Aria, RocksDB, or any
    /// engine the server lists). Default: the server's default engine.
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// Rows in the benchmark table (k/M suffixes allowed). Default: 100k with --method quick,
    /// 1M with --method classic.
    #[arg(long, value_name = "ROWS")]
    pub table_size: Option<String>,

    /// Seed of the data and parameter generators: the same seed gives the same data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Loader connections (the id range is split across them; SQLite always uses one).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub load_connections: usize,

    /// tpcc: warehouses to load (default 1 with --method quick, 10 with --method classic).
    #[arg(long, value_name = "N")]
    pub warehouses: Option<u32>,
}

#[derive(Debug, Clone, Args)]
pub struct PrepareArgs {
    /// Workload name (see `enginebench list`).
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub data: DataArgs,
    /// Which method's table size to use when --table-size is not given.
    #[arg(long, value_enum, default_value_t = Method::Quick)]
    pub method: Method,
}

#[derive(Debug, Clone, Args)]
pub struct CleanupArgs {
    /// Workload name (see `enginebench list`).
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// A preset of the run method; any flag given explicitly overrides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// About two minutes: 100k rows, threads 1,4,16, 1 s warm-up, 2 runs of 1 s.
    Quick,
    /// The 2007 read report exactly: 1M rows, threads 1,4,16,64,128,256, 180 s warm-up,
    /// 3 runs of 60 s, the maximum kept (about 8 hours for all 13 queries).
    Classic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The raw-numbers table (operations × thread counts).
    Table,
    /// The whole result document.
    Json,
    /// One line per measured run.
    Csv,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Workload name (see `enginebench list`).
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub data: DataArgs,

    /// Method preset; flags below override its values.
    #[arg(long, value_enum, default_value_t = Method::Quick)]
    pub method: Method,

    /// Thread counts to sweep, comma-separated (one connection per thread), e.g. 1,4,16,64.
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,

    /// Warm-up before the measured runs of each point, not recorded (e.g. 180s, 3m; 0 for none).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,

    /// Length of each measured run (e.g. 60s).
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,

    /// Measured runs per point.
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,

    /// Operations to run, comma-separated (default: all of the workload's, in order).
    #[arg(long, value_name = "LIST")]
    pub queries: Option<String>,

    /// tpcc: the transaction mix as five weights for NewOrder, Payment, OrderStatus, Delivery,
    /// StockLevel [default: 45,43,4,4,4].
    #[arg(long, value_name = "LIST")]
    pub weights: Option<String>,

    /// tpcc: transaction isolation set on every connection: read-committed, repeatable-read or
    /// serializable [default: the server's].
    #[arg(long, value_name = "LEVEL")]
    pub isolation: Option<String>,

    /// tpcc: keying and think times of TPC-C 5.2.5 (not implemented: rejected).
    #[arg(long)]
    pub spec_timing: bool,

    /// Print a line per interval while running (e.g. 1s, 10s); the per-interval time series in
    /// the result uses this length too [default: 1s, not printed].
    #[arg(long, value_name = "DURATION")]
    pub report_interval: Option<String>,

    /// Which aggregate of the runs the table shows (the report kept the maximum).
    #[arg(long, value_enum)]
    pub aggregate: Option<Pick>,

    /// Client event-loop threads for MySQL/PostgreSQL targets (connections are spread over
    /// them; one is the cheapest in CPU per query on 2 cores).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub client_threads: usize,

    /// Do not run client threads under SCHED_BATCH (which spares a context switch per query).
    #[arg(long)]
    pub no_sched_batch: bool,

    /// Folder under which each invocation writes its own result folder.
    #[arg(long, default_value = "enginebench-results", value_name = "DIR")]
    pub results_dir: String,

    /// What to print on stdout when done.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}
