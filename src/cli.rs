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
    /// Start, stop or inspect a private MariaDB / PostgreSQL server (own folder, free port on
    /// 127.0.0.1, own socket; no systemd).
    Server(ServerArgs),
    /// Run a plan: a matrix of servers/profiles x engines x thread counts from a TOML file, one
    /// result folder per cell; re-running skips the cells already complete.
    Suite(SuiteArgs),
    /// Check a loaded workload's data for consistency (tpcc: TPC-C 3.3.2.1 to 3.3.2.4;
    /// linkbench: counttable equals the visible links per (id1, link_type)).
    /// Exit 0 when every condition holds, 1 when one fails (each failure is printed, naming
    /// the warehouse and district), 2 when the tables are missing or the target unreachable.
    Check(CheckArgs),
    /// Write a commented example workload file to start your own from (run it with
    /// `enginebench run --workload-file FILE`; docs/workload-files.md).
    InitWorkload(InitWorkloadArgs),
}

#[derive(Debug, Clone, Args)]
pub struct InitWorkloadArgs {
    /// Where to write it ("-" for stdout).
    #[arg(default_value = "workload.toml", value_name = "FILE")]
    pub file: String,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    pub force: bool,
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
    /// html: the page; csv: one line per measured run of every result; table: sqlbench
    /// results side by side (operation x engine seconds).
    #[arg(long, value_enum, default_value_t = ReportFormat::Html)]
    pub format: ReportFormat,
    /// With --format csv: one of the report's tables instead of the runs (iibench,
    /// iibench-windows, compression, sqlbench, sqlbench-ops, kinds, cpu, server-settings).
    #[arg(long, value_name = "NAME")]
    pub table: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Html,
    Csv,
    /// sqlbench results: seconds per operation, every engine of every result side by side.
    Table,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServerAction {
    /// Start a server in the background and print the target URL to use.
    Start,
    /// Stop the server of --datadir cleanly.
    Stop,
    /// Say whether the server of --datadir runs, and its URL.
    Status,
}

#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    pub action: ServerAction,
    /// mariadb or postgres.
    pub kind: String,
    /// Config profile (profiles/<kind>/<name>.cnf|conf, built in; or a path to an option file).
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub profile: String,
    /// The server's folder (data, log, option file). start: default a new folder under /tmp
    /// (printed); stop/status: required.
    #[arg(long, value_name = "DIR")]
    pub datadir: Option<String>,
    /// Override one server setting (repeatable), e.g. --server-opt innodb_buffer_pool_size=1G.
    #[arg(long = "server-opt", value_name = "KEY=VALUE")]
    pub server_opt: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct SuiteArgs {
    /// The plan (TOML), e.g. plans/read-2007.toml.
    pub plan: String,
    /// Use the plan's [quick] values: the same matrix scaled down to minutes.
    #[arg(long)]
    pub quick: bool,
    /// Folder of the suite's results (one sub-folder per cell). Default: enginebench-results/suite-<plan name>[-quick].
    #[arg(long, value_name = "DIR")]
    pub results_dir: Option<String>,
}

/// Flags of `run` that start a private server or describe the server behind --target.
#[derive(Debug, Clone, Args, Default)]
pub struct RunServerArgs {
    /// Start a throwaway private server for this run and point the target at it:
    /// mariadb[:PROFILE] or postgres[:PROFILE] (profiles: default, small, read-2007, oltp-2014
    /// for MariaDB; default, small for PostgreSQL; or a path to an option file).
    #[arg(long, value_name = "KIND:PROFILE", conflicts_with = "target")]
    pub server: Option<String>,
    /// Override one setting of the --server profile (repeatable), e.g. innodb_buffer_pool_size=1G.
    #[arg(long = "server-opt", value_name = "KEY=VALUE", requires = "server")]
    pub server_opt: Vec<String>,
    /// Keep the throwaway server's folder (its path is printed) instead of removing it.
    #[arg(long, requires = "server")]
    pub keep_datadir: bool,
    /// Folder of the --server (created, or reused when it holds data); kept afterwards.
    #[arg(long, value_name = "DIR", requires = "server")]
    pub datadir: Option<String>,
    /// Pid of the server behind --target (a server enginebench did not start), to record its
    /// CPU, I/O and memory per run. PostgreSQL: the postmaster's pid.
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
    /// Pin the client and/or the server to CPUs, e.g. client=0,server=1 (lists as taskset -c:
    /// 0-1,3). The server needs --server or --server-pid.
    #[arg(long, value_name = "client=CPUS,server=CPUS")]
    pub pin: Option<String>,
    /// Recorded as the server's profile (used by `suite`, which starts the servers itself).
    #[arg(long, hide = true)]
    pub server_label: Option<String>,
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
    /// engine the server lists). Default: the server's default engine. sysbench's
    /// --mysql-storage-engine is an alias.
    #[arg(long, value_name = "NAME", alias = "mysql-storage-engine")]
    pub engine: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// Rows in the benchmark table, per table for the sysbench workloads (k/M suffixes
    /// allowed). Default: sysbench workloads 10000 (sysbench's default); micro-read 100k with
    /// --method quick, 1M with --method classic.
    #[arg(long, value_name = "ROWS")]
    pub table_size: Option<String>,

    /// Seed of the data and parameter generators: the same seed gives the same data.
    /// sysbench's --rand-seed is an alias (0 is an ordinary seed here, not the clock).
    #[arg(long, default_value_t = 1, alias = "rand-seed")]
    pub seed: u64,

    /// Loader connections (the id range is split across them; SQLite always uses one).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub load_connections: usize,

    /// How the loader sends rows: multi-row INSERTs as text, streamed (MySQL LOAD DATA LOCAL
    /// INFILE, PostgreSQL COPY FROM STDIN), or multi-row INSERTs prepared once per
    /// connection with the rows as binary parameters; SQLite always inserts. BENCHMARKS.md
    /// has the measurements behind the default.
    #[arg(long, value_enum, default_value_t = crate::load::LoadMethod::Stream)]
    pub load_method: crate::load::LoadMethod,
    /// tpcc: warehouses to load (default 1 with --method quick, 10 with --method classic).
    #[arg(long, value_name = "N")]
    pub warehouses: Option<u32>,
    /// linkbench: LinkBench's maxid1, the graph size: nodes 1..maxid1-1 (k/M suffixes
    /// allowed; default 100001 with --method quick, 10000001 with --method classic).
    #[arg(long, value_name = "N")]
    pub maxid1: Option<String>,
    /// linkbench: a workload file of LinkBench `key = value` settings (its .properties files
    /// or flat TOML) over the built-in defaults of FBWorkload.properties; docs/linkbench.md.
    #[arg(long, value_name = "FILE")]
    pub linkbench_config: Option<String>,
    /// Run your own workload file (TOML: tables, generators, transactions; see
    /// `enginebench init-workload` and docs/workload-files.md) instead of a named workload.
    #[arg(long, value_name = "FILE")]
    pub workload_file: Option<String>,
    /// Workload files: set a variable of the file (repeatable), e.g. --var scale=10 for tpcb,
    /// --var recordcount=1M for ycsb-*.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Generated text compresses to about F of its raw size with zstd level 3 (0 < F <= 1;
    /// 1 = random text, which compresses to about 0.76: docs/compressed-fraction.md). Used by
    /// iibench's data, the oltp_* workloads' c and pad, compression's params and workload
    /// files' `string` columns [default: each workload's own text].
    #[arg(long, value_name = "F")]
    pub compressed_fraction: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct PrepareArgs {
    /// Workload name (see `enginebench list`); leave it out with --workload-file.
    #[arg(default_value = "", hide_default_value = true)]
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub oltp: OltpArgs,
    /// Which method's table size to use when --table-size is not given.
    #[arg(long, value_enum, default_value_t = Method::Quick)]
    pub method: Method,
}

#[derive(Debug, Clone, Args)]
pub struct CleanupArgs {
    /// Workload name (see `enginebench list`); leave it out with --workload-file.
    #[arg(default_value = "", hide_default_value = true)]
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub oltp: OltpArgs,
    /// The workload file whose tables to drop.
    #[arg(long, value_name = "FILE")]
    pub workload_file: Option<String>,
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
    /// Workload name (see `enginebench list`); leave it out with --workload-file.
    #[arg(default_value = "", hide_default_value = true)]
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub oltp: OltpArgs,

    /// Method preset; flags below override its values.
    #[arg(long, value_enum, default_value_t = Method::Quick)]
    pub method: Method,

    /// Thread counts to sweep, comma-separated (one connection per thread), e.g. 1,4,16,64.
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,

    /// Warm-up before the measured runs of each point, not recorded (e.g. 180s, 3m; 0 for none).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,

    /// Length of each measured run (e.g. 60s). sysbench's --time N (seconds) is an alias.
    #[arg(long, value_name = "DURATION", aliases = ["time", "maxtime"])]
    pub duration: Option<String>,

    /// sysbench's --events N (stop after N events): not supported yet; runs are timed
    /// (--duration). Given a value other than 0, the run stops with exit code 2.
    #[arg(long, value_name = "N", hide_short_help = true, alias = "requests")]
    /// sysbench's --events N: each measured run ends after N operations over all connections
    /// or at --duration, whichever comes first (--duration 0: no time limit; 0 events: none).
    #[arg(long, value_name = "N")]
    pub events: Option<u64>,

    /// sysbench's --percentile P: report the P-th latency percentile too (besides p50, p90,
    /// p95, p99, p99.9 and max, which are always reported).
    #[arg(long, value_name = "P")]
    pub percentile: Option<f64>,

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

    /// tpcc: wait TPC-C 5.2.5's keying and think times between transactions (outside the
    /// latency), like the spec's terminals; use 10 connections per warehouse.
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
    /// them). Default: 1 for MySQL/MariaDB (the cheapest in CPU per query on 2 cores), 2 for
    /// PostgreSQL (one loop left its backends idle a sixth of the time); BENCHMARKS.md.
    #[arg(long, value_name = "N")]
    pub client_threads: Option<usize>,

    /// Do not run client threads under SCHED_BATCH (which spares a context switch per query).
    /// Open-loop runs (--rate) never use it: it delays the timer wake-ups of the schedule.
    #[arg(long)]
    pub no_sched_batch: bool,

    /// Open loop: start operations on a schedule at this total rate (operations per second over
    /// all connections, k/M suffixes allowed), whatever the server's speed; latency is then
    /// also measured from each operation's intended start (response time). Default: closed
    /// loop (each connection starts its next operation when the last one ends).
    #[arg(long, value_name = "OPS_PER_S")]
    pub rate: Option<String>,

    /// How the intended starts of --rate are spread: poisson (exponential gaps) or uniform.
    #[arg(long, value_enum, requires = "rate")]
    pub arrivals: Option<crate::runner::Arrivals>,

    /// Folder under which each invocation writes its own result folder.
    #[arg(long, default_value = "enginebench-results", value_name = "DIR")]
    pub results_dir: String,

    /// What to print on stdout when done.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    #[command(flatten)]
    pub server: RunServerArgs,

    /// linkbench: requesters (connections), LinkBench's name for --threads [default: 64, as
    /// in the MariaDB-vs-MySQL report].
    #[arg(long, value_name = "N", conflicts_with = "threads")]
    pub requesters: Option<usize>,
    /// Give up on an operation after this long (e.g. 2s): it counts as a query_timeout error
    /// and its connection is closed (a server that stops answering cannot hang the run).
    #[arg(long, value_name = "DURATION")]
    pub query_timeout: Option<String>,

    /// Re-open lost connections (back-off from 10 ms to 1 s) and go on with the run; without
    /// it a lost connection ends its worker and the run fails when all are lost.
    #[arg(long)]
    pub reconnect: bool,
    /// schema-change: how long the workload runs before the ADD COLUMN (T1) [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub before: Option<String>,

    /// schema-change: how long the workload runs after each DDL returns (T2) [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub after: Option<String>,

    /// schema-change: the OLTP workload that runs while the table is altered
    /// [default: oltp_insert].
    #[arg(long, value_name = "WORKLOAD")]
    pub during: Option<String>,
    #[command(flatten)]
    pub iibench: IibenchArgs,
    #[command(flatten)]
    pub sqlbench: SqlbenchArgs,
}

/// iiBench's options, with iibench.py's names and defaults (docs/iibench.md maps them).
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "iibench options")]
pub struct IibenchArgs {
    /// Rows to insert (k/M/G suffixes); the run also stops at --duration when that is given.
    /// Default without --duration: 100k with --method quick, 1G (the report's billion) with classic.
    #[arg(long, value_name = "ROWS")]
    pub max_rows: Option<String>,
    /// Rows per INSERT statement, each its own transaction [default: 1000, as iibench.py].
    #[arg(long, value_name = "N")]
    pub rows_per_commit: Option<u64>,
    /// The insert rate is reported per last N rows [default: 2 % of --max-rows, or 100000 when
    /// the run is bounded by --duration].
    #[arg(long, value_name = "ROWS")]
    pub window_rows: Option<String>,
    /// Connections running the three iiBench queries while the inserts run [default: 0].
    #[arg(long, value_name = "N")]
    pub query_threads: Option<usize>,
    /// Shortest value of the data column [default: 10, as iibench.py].
    #[arg(long, value_name = "BYTES")]
    pub data_length_min: Option<usize>,
    /// Longest value of the data column, at most 4000 [default: 10, as iibench.py].
    #[arg(long, value_name = "BYTES")]
    pub data_length_max: Option<usize>,
    /// Keep the table at N rows: after each batch delete the rows inserted N rows earlier, by
    /// primary-key range (iibench.py's --with_max_table_rows --max_table_rows N) [default: no deletes].
    #[arg(long, value_name = "ROWS")]
    pub max_table_rows: Option<String>,
}

/// sysbench's on/off option values.
fn sb_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{s}' is not on or off")),
    }
}

/// sysbench's OLTP workload options, with sysbench 1.0.20's names and defaults (they apply to
/// the oltp_*, select_random_* and bulk_insert workloads; docs/oltp.md maps every flag).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "sysbench OLTP options")]
pub struct OltpArgs {
    /// Number of tables sbtest1..N.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub tables: u32,
    /// Rows per range SELECT (id BETWEEN x AND x + N - 1).
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub range_size: u32,
    /// Point SELECTs per transaction (oltp_point_select always runs 1).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub point_selects: u32,
    /// Simple range SELECTs per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub simple_ranges: u32,
    /// SELECT SUM(k) ranges per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub sum_ranges: u32,
    /// SELECT ... ORDER BY c ranges per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub order_ranges: u32,
    /// SELECT DISTINCT ... ORDER BY c ranges per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub distinct_ranges: u32,
    /// UPDATEs of the indexed column k per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub index_updates: u32,
    /// UPDATEs of c per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub non_index_updates: u32,
    /// DELETE + INSERT pairs per transaction.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub delete_inserts: u32,
    /// Run the range SELECTs at all.
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub range_selects: bool,
    /// No BEGIN/COMMIT: every statement in autocommit mode.
    #[arg(long, default_value = "off", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub skip_trx: bool,
    /// id is AUTO_INCREMENT (MySQL) / SERIAL (PostgreSQL) / rowid (SQLite); off: client ids.
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub auto_inc: bool,
    /// A secondary index on id (xid) in place of the primary key.
    #[arg(long, default_value = "off", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub secondary: bool,
    /// Create the secondary index k_N on k (after the load).
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = sb_bool, num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub create_secondary: bool,
    /// Distribution of ids and k values (sysbench 1.0.20's default: special).
    #[arg(long, value_enum, default_value_t = crate::workload::oltp::rand::RandType::Special)]
    pub rand_type: crate::workload::oltp::rand::RandType,
    /// Uniform draws summed by the gaussian and special distributions.
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub rand_spec_iter: u32,
    /// special: percentage of the range where the 'special' values fall.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub rand_spec_pct: u32,
    /// special: percentage of draws that are 'special' values.
    #[arg(long, default_value_t = 75, value_name = "N")]
    pub rand_spec_res: u32,
    /// pareto: shape parameter h (0 < h < 1).
    #[arg(long, default_value_t = 0.2, value_name = "H")]
    pub rand_pareto_h: f64,
    /// select_random_points: values in the IN() list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub random_points: u32,
    /// select_random_ranges: BETWEEN ranges per SELECT.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub number_of_ranges: u32,
    /// select_random_ranges: width of each BETWEEN range.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub delta: u32,
    /// bulk_insert: rows per INSERT statement (enginebench's unit of one operation).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub bulk_rows: u32,
}

/// sql-bench's options (the sqlbench workload only).
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "sqlbench options")]
pub struct SqlbenchArgs {
    /// sqlbench: multiply every operation's test count by F (1 = the report's counts; each
    /// operation at least 1 test).
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    pub scale: f64,
    /// sqlbench: operations to run, comma-separated (`--dry-run` lists them) [default: all 95].
    #[arg(long, value_name = "LIST")]
    pub ops: Option<String>,
    /// sqlbench: groups to run, comma-separated: alter, atis, big-tables, connect, create,
    /// insert, select, transactions, wisconsin.
    #[arg(long, value_name = "LIST")]
    pub groups: Option<String>,
    /// sqlbench: run the suite on each of these MySQL/MariaDB engines in turn (one result,
    /// engines side by side), e.g. InnoDB,MyISAM,Aria,RocksDB.
    #[arg(long, value_name = "LIST")]
    pub engines: Option<String>,
    /// sqlbench: print the planned tests of every selected operation and their total; connect
    /// to nothing.
    #[arg(long)]
    pub dry_run: bool,
}
