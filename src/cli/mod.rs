//! The command line. Doc comments here are the `--help` text.

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::terminal::Pick;

mod catalog;

// The options of the commands that read and record the catalog (`history`, `catalog`).
pub use catalog::*;

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
    /// `enginebench prepare WORKLOAD --help` lists the workload's options.
    Prepare(WorkloadArgv),
    /// Run a workload: for every operation and thread count, a warm-up (not recorded), then the
    /// measured runs; prints a table of ops/s and writes a JSON result.
    /// `enginebench run WORKLOAD --help` lists the workload's own options and the common ones.
    Run(WorkloadArgv),
    /// Drop a workload's tables.
    Cleanup(WorkloadArgv),
    /// List the workloads and their operations.
    List,
    /// Make one self-contained HTML page (or CSV, or HdrHistogram .hgrm files) from one or more
    /// results: charts of throughput vs threads, latency, time series, and what differs between
    /// the servers.
    Report(ReportArgs),
    /// Compare two results: the ratio B/A for every metric both have. Each result is one
    /// server start: a difference is called significant only against a measured spread between
    /// starts (--between-start calibration.json, or a catalog baseline's results); otherwise
    /// "significance unknown". With --fail-on, a regression gate: exit 0 when it passes (or is
    /// UNKNOWN), 1 when it fails, 2 on bad input.
    Compare(CompareArgs),
    /// Merge the results of a fleet's shards (`run --shard I/N`, one run id) into one result
    /// of the same schema: operations, errors and client CPU summed (and kept per shard),
    /// latency histograms added, the server's settings and counters taken once, intervals
    /// added. Shards missing or ended early are recorded as lost. Results of different runs,
    /// workloads or settings are refused (exit 2). docs/fleet.md.
    Merge(MergeArgs),
    /// Start, stop or inspect a private MariaDB / PostgreSQL server (own folder, free port on
    /// 127.0.0.1, own socket; no systemd).
    Server(ServerArgs),
    /// Run a plan: a matrix of servers/profiles x engines x thread counts from a TOML file, one
    /// result folder per cell; re-running resumes (the sections with unfinished cells are run
    /// again whole: see --passes).
    Suite(SuiteArgs),
    /// Redo one of the classic storage-engine reports with one command: its built-in plan
    /// (servers, workloads, formats, thread counts), then its claims checked against the
    /// measured results (holds / does not hold / not measured) at the top of summary.md and
    /// report.html. `enginebench reproduce --list` names them; docs/reproductions.md.
    Reproduce(ReproduceArgs),
    /// Check a loaded workload's data for consistency (the workloads that have conditions
    /// and what they are: `check --help`).
    /// Exit 0 when every condition holds, 1 when one fails (each failure is printed, naming
    /// the warehouse and district), 2 when the tables are missing or the target unreachable.
    Check(WorkloadArgv),
    /// Write a commented example workload file to start your own from (run it with
    /// `enginebench run --workload-file FILE`; docs/workload-files.md).
    InitWorkload(InitWorkloadArgs),
    /// The results recorded in the catalog, one line per measured point, oldest first
    /// (filters narrow them); `history import DIR...` adds result folders made elsewhere or
    /// before the catalog existed (a result already there is not added twice).
    /// docs/catalog.md.
    History(HistoryArgs),
    /// The catalog every run records its result in: `enginebench catalog path` prints where it
    /// is (docs/catalog.md).
    Catalog(CatalogCommandArgs),
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

/// A workload command's words after the subcommand: the workload name, its own options and
/// the common ones. They are parsed once the workload is known, so that each workload's
/// `--help` shows its own options and nothing of the others.
#[derive(Debug, Clone, Args)]
#[command(disable_help_flag = true)]
pub struct WorkloadArgv {
    /// The workload (see `enginebench list`), then its options; `WORKLOAD --help` lists them.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..,
        value_name = "WORKLOAD [OPTIONS]"
    )]
    pub args: Vec<String>,
}

/// The common options of `check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Result files (result.json) or result folders.
    #[arg(required_unless_present = "trend", value_name = "RESULT")]
    pub results: Vec<std::path::PathBuf>,
    /// A trend page from the catalog instead of result files: per workload, operation and
    /// thread count, the headline metric over time with each result's run-to-run spread,
    /// disturbed results marked and changes of server setting or version annotated (the
    /// filters choose the results; docs/catalog.md).
    #[arg(long, conflicts_with_all = ["results", "table"])]
    pub trend: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// Where to write the report ("-" for stdout; default: report.html, or report.csv with
    /// --format csv, report.txt with --format table). With --format hgrm a folder (created;
    /// default: report-hgrm).
    #[arg(long, short = 'o', value_name = "FILE|DIR")]
    pub output: Option<String>,
    /// html: the page; csv: one line per measured run of every result; table: sqlbench
    /// results side by side (operation x engine seconds); hgrm: one HdrHistogram
    /// percentile-distribution file per point, values in microseconds (docs/report.md).
    #[arg(long, value_enum, default_value_t = ReportFormat::Html)]
    pub format: ReportFormat,
    /// With --format csv: one of the report's tables instead of the runs (their names:
    /// `report --help`).
    #[arg(long, value_name = "NAME")]
    pub table: Option<String>,
}

impl ReportArgs {
    /// The file to write: `--output`, or a name that says the format.
    pub fn output_path(&self) -> String {
        self.output.clone().unwrap_or_else(|| {
            match (self.trend, self.format) {
                (false, ReportFormat::Csv) => "report.csv",
                (false, ReportFormat::Table) => "report.txt",
                (false, ReportFormat::Hgrm) => "report-hgrm",
                _ => "report.html",
            }
            .to_string()
        })
    }
}

#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// The shards' result files (result.json) or result folders.
    #[arg(required = true, value_name = "RESULT")]
    pub results: Vec<std::path::PathBuf>,
    /// The folder to write the merged result.json and report.html into (created).
    /// Default: enginebench-results/merge-RUN_ID.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub catalog: CatalogArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Html,
    Csv,
    /// sqlbench results: seconds per operation, every engine of every result side by side.
    Table,
    /// One HdrHistogram percentile-distribution file (.hgrm) per point (operation@threads),
    /// from the runs' merged histograms; values in microseconds; -o names a folder.
    Hgrm,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The baseline result (A); with --baseline, the result compared (B).
    pub a: std::path::PathBuf,
    /// The result compared with it (B).
    #[arg(required_unless_present = "baseline")]
    pub b: Option<std::path::PathBuf>,
    /// The baseline from the catalog instead of a file: 'catalog:last=N' takes the newest N
    /// complete results like the compared one (same workload, target kind, engine and host,
    /// started before it; the filters below narrow them further). Each result is one server
    /// start: the spread of their means is the between-start spread the verdicts use (N - 1
    /// degrees of freedom; N of 2 or more for a verdict).
    #[arg(long, value_name = "catalog:last=N", conflicts_with = "b")]
    pub baseline: Option<String>,
    /// A measured between-start spread for comparing one server start with another: the
    /// calibration.json (or its folder) that 'enginebench reproduce NAME --calibrate' writes
    /// (its pooled_start_sd: how much ln(a/b) of ops_per_s varies between two starts of one
    /// configuration). Each result is one server start, and its runs share the start's
    /// speed, so without this (or a catalog baseline) the significance of A vs B is unknown.
    /// It covers ops_per_s only: the other metrics stay unknown. A missing or malformed file
    /// is exit 2. Or 'catalog:last=N': the spread of the newest N catalogued results like A
    /// (same workload, target kind, engine and host; the filters narrow them) started before
    /// A and B, each one server start, pooled over the compared points (N of 2 or more).
    #[arg(long, value_name = "calibration.json|catalog:last=N")]
    pub between_start: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// What to print.
    #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,
    /// A regression gate: exit 1 when a metric of B is worse than its bound *and* the
    /// difference is significant between server starts (95 %; --between-start or a catalog
    /// baseline), e.g. 'ops_per_s=-5%,p99_us=+10%'. A row worse than its bound whose
    /// significance is unknown is reported as UNKNOWN (exit 0 when no row fails).
    /// Metrics: ops_per_s (worse: lower), p50_us, p95_us, p99_us, client_us_per_op,
    /// server_us_per_op, errors (worse: higher). A bound without % is in the metric's unit
    /// (p99_us=+500: 500 µs; errors=0: any significant increase).
    #[arg(long, value_name = "METRIC=BOUND,...")]
    pub fail_on: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// One line per operation × threads × metric.
    Table,
    /// The rows as JSON (with a "gate" object on bounded rows).
    Json,
    /// The rows as CSV (with gate columns under --fail-on).
    Csv,
    /// A GitHub-flavoured markdown table with the gate's verdict line, for a pull-request
    /// comment.
    Markdown,
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
    /// mariadb, postgres, or a cluster: mariadb-galera:N (N nodes, 3 to 9),
    /// postgres-replicas:N (a primary and N streaming replicas) or mariadb-spider:N (a Spider
    /// head and N backends, 1 to 9); start prints its (multi-host or ?spider=) target URL.
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
    /// start: listen on this address instead of 127.0.0.1, e.g. 0.0.0.0 for clients on other
    /// machines (a fleet's shards: docs/fleet.md). The root user has no password: open it on
    /// a private network only.
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ReproduceArgs {
    /// The report to redo (`enginebench reproduce --list` names them: the plans in plans/).
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// The report's matrix scaled down to minutes (each report within about 20 minutes on
    /// 2 cores): the same as --scale quick; without either the plan's full scale runs (hours;
    /// the estimate is printed first).
    #[arg(long, conflicts_with = "scale")]
    pub quick: bool,
    #[command(flatten)]
    pub suite: SuiteRunArgs,
    /// Folder of the results (one sub-folder per cell). Default:
    /// enginebench-results/suite-<name>[-quick|-standard]; running again resumes (see
    /// --passes for which cells a resumed run measures again).
    #[arg(long, value_name = "DIR")]
    pub results_dir: Option<String>,
    /// List the reproductions and exit.
    #[arg(long)]
    pub list: bool,
    /// Print the plan's cells and the time estimate, run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// An A/A check of the claims' statistics instead of the report: the plan's first server
    /// started as two "servers" (a and b) in every pass, each section with its first engine
    /// and variant, and every operation x thread count compared between them as if they were
    /// two engines. Such comparisons are false by construction: the share the claims'
    /// statistics call significant is their real false-direction rate, printed with its 95 %
    /// interval for each number of passes and for the sequential rule (calibration.md).
    #[arg(long, conflicts_with_all = ["until_decided", "export", "list"])]
    pub calibrate: bool,
    /// Serve every cell's live metrics on HOST:PORT (OpenMetrics; docs/live.md).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// Write the built-in plan to this file (to edit it, e.g. to add your MySQL by URL, and
    /// run it with `enginebench suite FILE`), run nothing.
    #[arg(long, value_name = "FILE")]
    pub export: Option<String>,
    /// Give every cell's run `--profile-server[=HZ]`: where each cell's server CPU went
    /// (perf), the functions that differ most beside each claim (docs/profile.md).
    #[arg(long, value_name = "HZ", num_args = 0..=1, default_missing_value = "199")]
    pub profile_server: Option<u32>,
}

#[derive(Debug, Clone, Args)]
pub struct SuiteArgs {
    /// The plan (TOML), e.g. plans/read-2007.toml.
    pub plan: String,
    /// Use the plan's [quick] values: the same matrix scaled down to minutes (the same as
    /// --scale quick).
    #[arg(long, conflicts_with = "scale")]
    pub quick: bool,
    #[command(flatten)]
    pub suite: SuiteRunArgs,
    /// Folder of the suite's results (one sub-folder per cell). Default:
    /// enginebench-results/suite-<plan name>[-quick|-standard]; running again resumes (see
    /// --passes for which cells a resumed run measures again).
    #[arg(long, value_name = "DIR")]
    pub results_dir: Option<String>,
    /// Give every cell's run `--metrics-addr HOST:PORT` (the cells run one after another, so
    /// they share the address).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// Give every cell's run `--profile-server[=HZ]`: where each cell's server CPU went
    /// (perf), the functions that differ most beside each claim (docs/profile.md).
    #[arg(long, value_name = "HZ", num_args = 0..=1, default_missing_value = "199")]
    pub profile_server: Option<u32>,
}

/// How `suite` and `reproduce` run a plan's matrix.
#[derive(Debug, Clone, Args)]
pub struct SuiteRunArgs {
    /// The plan's scale: full (its own values), standard (its [standard] values) or quick
    /// (its [quick] values). A scale the plan has no values for is refused.
    #[arg(long, value_enum, value_name = "SCALE")]
    pub scale: Option<Scale>,
    /// Run the whole matrix this many times, each pass on freshly started servers (default
    /// 3): a server start is the unit of a claim's evidence, and three starts are the fewest
    /// whose spread can decide anything (two give one degree of freedom: t = 12.7 at 95 %).
    /// Even passes run the cells in reverse order; pass N's results go to DIR/pass-N/ (pass 1
    /// to DIR/). A cell whose run was disturbed by other processes is run again at once, on the
    /// same server, up to 3 tries. Resuming: when a pass runs again some unfinished cells of a
    /// section on a server, it runs again every cell of that section on that server (the old
    /// results are set aside as resumed-*): the cells a claim compares are then all measured
    /// on one server process, never a fresh one against warm ones.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=50))]
    pub passes: Option<u32>,
    /// After the passes, add passes (re-measuring only the cells that undecided claims compare)
    /// until every decidable claim is decided or --budget is spent. The claims are then judged
    /// by a sequential rule (look j after pass 3, 4, ... at level 5 % / 2^j), so that looking
    /// again does not raise the rate of false verdicts; the page says at which pass each
    /// verdict was decided.
    #[arg(long)]
    pub until_decided: bool,
    /// --until-decided: the wall time this invocation may take (e.g. 2h, 90m); a pass that
    /// would not end within it (estimated from the passes so far) is not started.
    #[arg(long, value_name = "DURATION", default_value = "2h", value_parser = humantime::parse_duration, requires = "until_decided")]
    pub budget: std::time::Duration,
}

impl SuiteRunArgs {
    /// Passes when --passes is not given.
    pub const DEFAULT_PASSES: u32 = 3;

    /// The passes asked for (at least the sequential rule's first look with --until-decided).
    pub fn passes(&self) -> u32 {
        let n = self.passes.unwrap_or(Self::DEFAULT_PASSES);
        if self.until_decided {
            n.max(3)
        } else {
            n
        }
    }

    /// The scale asked for, `--quick` included.
    pub fn scale(&self, quick: bool) -> Scale {
        match (quick, self.scale) {
            (true, _) => Scale::Quick,
            (false, s) => s.unwrap_or_default(),
        }
    }
}

/// Flags of `run` that start a private server or describe the server behind --target.
#[derive(Debug, Clone, Args, Default)]
pub struct RunServerArgs {
    /// Start a throwaway private server for this run and point the target at it:
    /// mariadb[:PROFILE] or postgres[:PROFILE] (profiles: default, small, read-2007, oltp-2014
    /// for MariaDB; default, small for PostgreSQL; or a path to an option file). A cluster on
    /// this machine: mariadb-galera:N[:PROFILE] (N nodes, 3 to 9; profile galera by default)
    /// or postgres-replicas:N[:PROFILE] (a primary and N streaming replicas, 1 to 9), or
    /// mariadb-spider:N[:PROFILE] (a Spider head and N backends, 1 to 9; needs the package
    /// mariadb-plugin-spider; the connections go to the head); the connections spread over
    /// its nodes and every node is stopped afterwards (docs/clusters.md).
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
    /// CPU, I/O and memory per run. PostgreSQL: the postmaster's pid. Without it a server on
    /// this machine is found from the connection's socket or its listening port.
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
    /// Pin the client and/or the server to CPUs, e.g. client=0,server=1 (lists as taskset -c:
    /// 0-1,3). The server needs --server or --server-pid.
    #[arg(long, value_name = "client=CPUS,server=CPUS")]
    pub pin: Option<String>,
    /// Sample the server's CPU with perf during each measured run (all its threads;
    /// PostgreSQL: the postmaster and its backends) and record where it went: top functions,
    /// system calls, kernel/lock/I/O/engine shares, folded stacks (docs/profile.md). HZ is
    /// the sampling rate [default: 199; its cost: docs/profile.md]. Needs perf (Debian:
    /// linux-perf; ENGINEBENCH_PERF names another binary) and permission; without them the
    /// run goes on and says why. The server needs --server or a pid (--server-pid, or found).
    #[arg(
        long,
        value_name = "HZ",
        num_args = 0..=1,
        default_missing_value = "199",
        env = "ENGINEBENCH_PROFILE_SERVER"
    )]
    pub profile_server: Option<u32>,
    /// Recorded as the server's profile (used by `suite`, which starts the servers itself).
    #[arg(long, hide = true)]
    pub server_label: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// Where to run: sqlite:///path.db, mysql://user@host:port/db, mysql://user@localhost/db?socket=/path.sock,
    /// postgres://user@host:port/db or postgres://user@localhost/db?host=/socket/dir.
    /// Several hosts (the nodes of a cluster): mysql://user@h1:3306,h2:3306,h3:3306/db or
    /// postgres://user@h1:5432,h2:5432/db (TCP only; a host without :port takes 3306/5432):
    /// connection N goes to host N mod hosts (round robin, as sysbench's --mysql-host list),
    /// and each run records ops/s, errors and latency (µs) per host as well as in total.
    /// Spider shards: mysql://user@head:3306/db?spider=b1:3306,b2:3306 (or socket paths): the
    /// host is a MariaDB with the Spider engine, the backends hold the rows (same user and
    /// database); prepare splits each table by the workload's sharding key over the backends
    /// (row key mod backends) and loads them directly; runs go through the head
    /// (docs/clusters.md).
    /// Passwords: set MYSQL_PWD or PGPASSWORD rather than writing them in the URL.
    /// [default: sqlite://enginebench-data/enginebench.db]
    #[arg(long, short = 't', env = "ENGINEBENCH_TARGET", value_name = "URL")]
    pub target: Option<String>,

    /// Storage engine for created tables on MySQL/MariaDB (InnoDB, MyISAM, Aria, RocksDB, or any
    /// engine the server lists). Default: the server's default engine. sysbench's
    /// --mysql-storage-engine is an alias.
    #[arg(long, value_name = "NAME", alias = "mysql-storage-engine")]
    pub engine: Option<String>,

    /// How the workload's statements travel, as sysbench's --db-ps-mode and pgbench's -M:
    /// text is --db-ps-mode=disable and -M simple, extended is -M extended. Loading keeps its
    /// --load-method (docs/method.md).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = crate::db::StatementMode::Prepared)]
    pub statements: crate::db::StatementMode,
}

/// How data is generated and loaded, for every workload.
#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
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
    #[arg(long, value_enum, default_value_t = crate::model::LoadMethod::Stream)]
    pub load_method: crate::model::LoadMethod,

    /// Table options appended to every benchmark table's CREATE TABLE, for every workload
    /// (MariaDB/MySQL), e.g. "ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8" or "PAGE_COMPRESSED=1":
    /// the storage format is then an axis like the engine. Tables made with other options are
    /// reloaded.
    #[arg(long, value_name = "OPTIONS", default_value = "")]
    pub table_options: String,
}

impl LoadArgs {
    /// `--table-options` checked against the target: only MariaDB/MySQL take them, and only
    /// as table options (no statement separators or comments).
    pub fn check_table_options(&self, dbms: crate::db::Dbms) -> crate::error::Result<()> {
        let o = self.table_options.trim();
        if o.is_empty() {
            return Ok(());
        }
        if dbms != crate::db::Dbms::Mysql {
            return Err(crate::error::Error::usage(format!(
                "--table-options applies to MariaDB/MySQL targets only, not {}",
                dbms.name()
            )));
        }
        if o.contains(';') || o.contains("--") || o.contains("/*") {
            return Err(crate::error::Error::usage(
                "--table-options: give table options only, e.g. \"ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8\"",
            ));
        }
        Ok(())
    }
}

/// The common options of `prepare`.
#[derive(Debug, Clone, Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub data: LoadArgs,
    /// Which method's sizes to use when the workload's size options are not given.
    #[arg(long, value_enum, default_value_t = Method::Quick)]
    pub method: Method,

    #[command(flatten)]
    pub fleet: FleetArgs,
}

/// The common options of `cleanup`.
#[derive(Debug, Clone, Args)]
pub struct CleanupArgs {
    #[command(flatten)]
    pub target: TargetArgs,
}

// The method preset is the measuring method's word, on the ground (measure).
pub use crate::measure::Method;

/// What `run` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    /// When done: the raw-numbers table (operations × thread counts).
    Table,
    /// When done: the whole result document.
    Json,
    /// When done: one line per measured run.
    Csv,
    /// While running: one JSON line per report interval (and per second of a load), then a
    /// last line with the status and the result file's path (schema/live-line-v1.schema.json).
    Jsonl,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub data: LoadArgs,

    /// Method preset; flags below override its values.
    #[arg(long, value_enum, default_value_t = Method::Quick)]
    pub method: Method,

    /// Thread counts to sweep, comma-separated (one connection per thread), e.g. 1,4,16,64.
    /// With @DURATION on each item, steps within every measured run instead of a sweep:
    /// 4@2m,16@2m,64@2m (docs/method.md, "Load steps").
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,

    /// Warm-up before the measured runs of each point, not recorded (e.g. 180s, 3m; 0 for none).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,

    /// A measurement is flagged `disturbed` when other processes on the host used more than
    /// this many CPUs during it (1.0 is one whole CPU); a suite runs a disturbed cell again.
    /// A negative bound flags every measurement (to try a suite's re-runs).
    #[arg(long, value_name = "CPUS", default_value_t = crate::measure::DISTURBED_CPUS, allow_negative_numbers = true)]
    pub disturbed_above: f64,

    /// Length of each measured run (e.g. 60s). sysbench's --time N (seconds) is an alias.
    #[arg(long, value_name = "DURATION", aliases = ["time", "maxtime"])]
    pub duration: Option<String>,

    /// sysbench's --events N: each measured run ends after N operations over all connections
    /// or at --duration, whichever comes first (--duration 0: no time limit; 0 events: none).
    #[arg(long, value_name = "N", alias = "requests")]
    pub events: Option<u64>,

    /// sysbench's --percentile P: report the P-th latency percentile too (besides p50, p90,
    /// p95, p99, p99.9 and max, which are always reported).
    #[arg(long, value_name = "P")]
    pub percentile: Option<f64>,

    /// Measured runs per point.
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,

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

    /// How the lean MariaDB and PostgreSQL clients do their I/O. io_uring: one system call
    /// hands every connection's sends to the kernel and collects their replies, and a closed
    /// loop whose connections all wait wakes once per several replies. epoll: a send and a
    /// receive per query, a wake-up per reply. auto: io_uring for a client loop of 8
    /// connections or more where the kernel and sandbox allow it (Linux 6.1+), epoll for a
    /// smaller loop (where the ring costs more CPU per query) and where io_uring cannot start.
    /// The path taken is in the result (client.io, client.loops).
    #[arg(long, value_name = "PATH", env = "EB_CLIENT_IO", default_value = "auto",
          value_parser = ["auto", "io_uring", "epoll"])]
    pub client_io: String,

    /// Open loop: start operations on a schedule at this total rate (operations per second over
    /// all connections, k/M suffixes allowed), whatever the server's speed; latency is then
    /// also measured from each operation's intended start (response time). Default: closed
    /// loop (each connection starts its next operation when the last one ends).
    #[arg(long, value_name = "OPS_PER_S")]
    pub rate: Option<String>,

    /// How the intended starts of --rate are spread: poisson (exponential gaps) or uniform.
    #[arg(long, value_enum, requires = "rate")]
    pub arrivals: Option<crate::model::Arrivals>,

    /// Folder under which each invocation writes its own result folder.
    #[arg(long, default_value = "enginebench-results", value_name = "DIR")]
    pub results_dir: String,

    /// What to print on stdout: table, json or csv when done; jsonl while running. With
    /// json and jsonl no progress lines are drawn on the terminal.
    #[arg(long, value_enum, default_value_t = RunFormat::Table)]
    pub format: RunFormat,

    /// Serve live metrics over HTTP while the run runs, at http://HOST:PORT/metrics, in the
    /// OpenMetrics text format (Prometheus scrapes it): operations and errors as counters,
    /// latency as a histogram in seconds with fixed buckets, client CPU seconds, the current
    /// phase. Updated once per --report-interval (default 1 s). Port 0 picks a free port
    /// (printed). At the end the endpoint stays up until a scraper has read the final numbers
    /// (at most two of its scrape intervals, 30 s at most). docs/live.md.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,

    #[command(flatten)]
    pub server: RunServerArgs,

    #[command(flatten)]
    pub catalog: CatalogArgs,

    /// Give up on an operation after this long (e.g. 2s): it counts as a query_timeout error
    /// and its connection is closed (a server that stops answering cannot hang the run).
    #[arg(long, value_name = "DURATION")]
    pub query_timeout: Option<String>,

    /// Re-open lost connections (back-off from 10 ms to 1 s) and go on with the run; without
    /// it a lost connection ends its worker and the run fails when all are lost.
    #[arg(long)]
    pub reconnect: bool,

    /// per-run: one connection per thread for the whole run. per-transaction: a new connection
    /// for every operation (pgbench -C): connect and the workload's setup (prepares,
    /// settings) count in its latency and are reported on their own, and each connection is
    /// closed with a goodbye the server sees (docs/connections.md).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = crate::model::ConnectMode::PerRun)]
    pub connect: crate::model::ConnectMode,

    /// How long opening one connection may take, from its first attempt (e.g. 30s, 2m).
    /// Connections open at most 16 at a time (waiting for a turn does not count); one the
    /// server refuses for now (listen queue full, max_connections reached) is retried with
    /// back-off until then, and the retries are counted in the result.
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub connect_timeout: String,

    #[command(flatten)]
    pub fleet: FleetArgs,

    /// With --shard and no --run-id: start the first point at this wall-clock time
    /// (2026-11-26T03:00:00Z, or seconds since the epoch) instead of meeting in the target
    /// (the tables must then be loaded before). The shards' clocks must agree (NTP;
    /// docs/fleet.md). Refused without --shard (exit 2).
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
}

/// The flags of a fleet's shard, the same for `prepare` and `run` (docs/fleet.md).
#[derive(Debug, Clone, Args)]
pub struct FleetArgs {
    /// Be shard I of a fleet of N enginebench processes (0-based, I < N), each on its own
    /// machine or pod, against one target. `prepare`: each shard loads its block of every
    /// table's rows (TPC-C: whole warehouses); shard 0 creates the tables first and builds the
    /// secondary indexes and the metadata once every shard has loaded, so the tables are the
    /// same as one `prepare` makes. `run`: each runs its share of the workload (TPC-C: its
    /// block of home warehouses; inserts: keys no other shard writes; --rate: 1/N of it;
    /// --threads: per shard, as given); merge the shards' results with `enginebench merge`.
    /// `/N` takes I from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job). A workload that
    /// cannot be split says so (exit 2). docs/fleet.md.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,

    /// With --shard: the fleet's name, the same for every shard and new for every prepare or
    /// run (letters, digits, '.', '_', '-'). The shards meet in the table enginebench_fleet of
    /// the target; a run's shards meet there before every point and start it together, 1.5 s
    /// after the last one arrived, and tables not loaded yet are loaded by all shards together
    /// first (as `prepare --shard`). Given without --shard it is refused (exit 2);
    /// ENGINEBENCH_RUN_ID is then ignored.
    #[arg(long, value_name = "ID", env = "ENGINEBENCH_RUN_ID")]
    pub run_id: Option<String>,

    /// With --shard: how long a shard waits for the others to check in, or hears nothing from
    /// one (each writes a heartbeat every second while it loads), before it gives up and names
    /// the missing ones (e.g. 60s, 5m) [default: 60s]. Refused without --shard (exit 2).
    #[arg(long, value_name = "DURATION")]
    pub fleet_timeout: Option<String>,
}

/// The scale a plan runs at: its full matrix, or the values of its `[quick]` or `[standard]`
/// tables (the same shape) laid over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Scale {
    /// The plan's own values: the report's matrix (hours).
    #[default]
    Full,
    /// `[quick]` / `[sections.quick]`: minutes.
    Quick,
    /// `[standard]` / `[sections.standard]`: between the two (at most about 2 hours).
    Standard,
}

impl Scale {
    pub const ALL: [Scale; 3] = [Scale::Full, Scale::Quick, Scale::Standard];

    /// The name of the plan's table (and of the flag's value); none for the full scale.
    pub fn table(self) -> Option<&'static str> {
        match self {
            Scale::Full => None,
            Scale::Quick => Some("quick"),
            Scale::Standard => Some("standard"),
        }
    }
}

/// Callers written before `--scale` pass `--quick` as a bool (the claims' tests, the fuzzer).
impl From<bool> for Scale {
    fn from(quick: bool) -> Scale {
        if quick {
            Scale::Quick
        } else {
            Scale::Full
        }
    }
}
