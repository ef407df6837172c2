//! The subcommands: connect, prepare, run the points, write results after every point.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use crate::cli::{
    CheckArgs, CleanupArgs, CompareArgs, Format, PrepareArgs, ReportArgs, ReportFormat, RunArgs,
};
use crate::config::{self, RunConfig};
use crate::error::{Context, Error, Failure, Result};
use crate::load::{LoadMethod, LoadOptions};
use crate::measure::host::HostFacts;
use crate::measure::proc::{self, ProcSample};
use crate::measure::LatencyHist;
use crate::report::{
    self, Aggregate, ClientCpu, HostCpu, KindRecord, PhaseSummary, Point, ResultDoc, RunRecord,
    ServerInfo, ServerProcess, Status, TargetInfo, ToolInfo,
};
use crate::runner::admin::Admin;
use crate::runner::{interrupt, IntervalSample, Session, SessionConfig};
use crate::server::{capture, Server};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::workload::Workload;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn warn_password(spec: &TargetSpec) {
    if spec.password_in_url {
        let var = if spec.dbms == Dbms::Postgres {
            "PGPASSWORD"
        } else {
            "MYSQL_PWD"
        };
        eprintln!("warning: a password on the command line can be seen by other users of this machine; set {var} instead");
    }
}

/// Open the admin connection: failures here are the user's to fix (exit 2).
async fn connect(spec: &TargetSpec) -> Result<Conn> {
    Conn::connect(spec)
        .await
        .map_err(|e| Error::usage(format!("cannot connect to {}: {}", spec.display, e.message)))
}

/// The engine to create tables with (validated against the server), if one was asked for.
async fn engine(conn: &mut Conn, wanted: Option<&str>) -> Result<Option<String>> {
    match wanted {
        Some(e) => crate::workload::resolve_engine(conn, e).await.map(Some),
        None => Ok(None),
    }
}

fn load_options(spec: &TargetSpec, connections: usize, method: LoadMethod) -> LoadOptions {
    LoadOptions {
        method,
        connections,
        batch_rows: if spec.dbms == Dbms::Sqlite {
            10_000
        } else {
            1_000
        },
        session_sql: match spec.dbms {
            // Session-level only: global durability settings stay as the server has them.
            Dbms::Mysql => vec!["SET SESSION unique_checks=0, foreign_key_checks=0".into()],
            _ => vec![],
        },
        progress: true,
        journal: Default::default(),
    }
}

pub fn prepare(a: &PrepareArgs) -> Result<ExitCode> {
    let spec = config::resolve_target(&a.target)?;
    let rows = config::table_size_for(&a.workload, &a.data, a.method)?;
    let workload = config::workload(
        &a.workload,
        rows,
        a.data.seed,
        None,
        &a.oltp,
        a.target.engine.as_deref(),
        &config::Extra::from_data(&a.data, a.method, spec.dbms),
    )?;
    warn_password(&spec);
    interrupt::install();
    runtime().block_on(async {
        let mut conn = connect(&spec).await?;
        let engine = engine(&mut conn, a.target.engine.as_deref()).await?;
        let opts = load_options(&spec, a.data.load_connections, a.data.load_method);
        let loaded =
            prepare_interruptibly(&workload, &mut conn, &spec, engine.as_deref(), &opts).await?;
        if loaded.is_empty() {
            eprintln!(
                "{} already prepared with the same size and seed {}: nothing to do",
                workload.name(),
                a.data.seed
            );
        }
        report_loads(&loaded);
        Ok(ExitCode::SUCCESS)
    })
}

/// A workload's prepare that a signal ends within moments, also while the admin connection
/// builds an index or analyzes a table after the load (the loader itself stops on its own).
async fn prepare_interruptibly(
    w: &Workload,
    conn: &mut Conn,
    spec: &TargetSpec,
    engine: Option<&str>,
    opts: &LoadOptions,
) -> Result<Vec<crate::load::LoadStats>> {
    match crate::load::unless_interrupted(w.prepare(conn, spec, engine, opts)).await {
        Some(r) => r,
        None => Err(Error {
            failure: Failure::Interrupted(interrupt::signal().unwrap_or(libc::SIGINT)),
            message: "interrupted while preparing the tables".into(),
        }),
    }
}

pub fn cleanup(a: &CleanupArgs) -> Result<ExitCode> {
    let workload = config::workload(
        &a.workload,
        1,
        0,
        None,
        &a.oltp,
        None,
        &config::Extra {
            workload_file: a.workload_file.as_deref(),
            ..config::Extra::default()
        },
    )?;
    let spec = config::resolve_target(&a.target)?;
    warn_password(&spec);
    runtime().block_on(async {
        let mut conn = connect(&spec).await?;
        workload.cleanup(&mut conn).await?;
        eprintln!("dropped the tables of {}", workload.name());
        Ok(ExitCode::SUCCESS)
    })
}

/// `check`: the workload's consistency conditions; exit 1 when one fails.
pub fn check(a: &CheckArgs) -> Result<ExitCode> {
    let name = config::check_workload(&a.workload)?;
    if name == crate::workload::linkbench::NAME {
        return check_linkbench(a);
    }
    if name != crate::workload::tpcc::NAME {
        return Err(Error::usage(format!(
            "check: {name} has no consistency conditions (only tpcc and linkbench have)"
        )));
    }
    let spec = config::resolve_target(&a.target)?;
    warn_password(&spec);
    runtime().block_on(async {
        let mut conn = connect(&spec).await?;
        let r = crate::workload::tpcc::check::run(&mut conn).await?;
        for f in &r.failures {
            println!("FAILED: {f}");
        }
        if r.failures.is_empty() {
            println!(
                "tpcc consistency: conditions 3.3.2.1 to 3.3.2.4 hold for {} warehouse(s), {} district(s)",
                r.warehouses, r.districts
            );
            Ok(ExitCode::SUCCESS)
        } else {
            Err(Error::run(format!(
                "tpcc consistency: {} condition(s) failed (listed above)",
                r.failures.len()
            )))
        }
    })
}

/// `check linkbench`: counttable against the visible links; exit 1 on any difference.
fn check_linkbench(a: &CheckArgs) -> Result<ExitCode> {
    let spec = config::resolve_target(&a.target)?;
    warn_password(&spec);
    runtime().block_on(async {
        let mut conn = connect(&spec).await?;
        let r = crate::workload::linkbench::check::run(&mut conn).await?;
        for (id1, t, n, c) in r.mismatches.iter().take(20) {
            println!("FAILED: id1 {id1} link_type {t}: {n} visible link(s) but counttable says {c}");
        }
        if r.mismatches.is_empty() {
            println!(
                "linkbench consistency: counttable equals the visible links for all {} (id1, link_type) pairs ({} visible links)",
                r.pairs, r.visible_links
            );
            Ok(ExitCode::SUCCESS)
        } else {
            Err(Error::run(format!(
                "linkbench consistency: {} (id1, link_type) pair(s) disagree with counttable (up to 20 listed above)",
                r.mismatches.len()
            )))
        }
    })
}

pub fn report(a: &ReportArgs) -> Result<ExitCode> {
    let docs = a
        .results
        .iter()
        .map(|p| report::load(p))
        .collect::<Result<Vec<_>>>()?;
    if a.table.is_some() && a.format != ReportFormat::Csv {
        return Err(Error::usage("--table goes with --format csv"));
    }
    let text = match a.format {
        ReportFormat::Html => report::html::render(&docs),
        ReportFormat::Csv if a.table.is_some() => {
            report::tables::csv_of(&docs, a.table.as_deref().unwrap_or_default())
                .map_err(Error::usage)?
        }
        ReportFormat::Csv => {
            let mut out = String::new();
            for (i, d) in docs.iter().enumerate() {
                let csv = report::csv::to_string(d);
                // One header for all results.
                out.push_str(if i == 0 {
                    &csv
                } else {
                    csv.split_once('\n').map(|x| x.1).unwrap_or("")
                });
            }
            out
        }
        ReportFormat::Table => {
            if crate::workload::sqlbench::table::engines(&docs).is_empty() {
                return Err(Error::usage(
                    "--format table shows sqlbench results; none of these results has any",
                ));
            }
            crate::workload::sqlbench::table::render(&docs)
        }
    };
    if a.output == "-" {
        print!("{text}");
    } else {
        report::json::write_text_atomic(Path::new(&a.output), &text)
            .map_err(|e| Error::usage(format!("--output: cannot write {}: {e}", a.output)))?;
        eprintln!("report: {} ({} KiB)", a.output, text.len().div_ceil(1024));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn compare(a: &CompareArgs) -> Result<ExitCode> {
    let (da, db) = (report::load(&a.a)?, report::load(&a.b)?);
    let rows = report::compare::compare(&da, &db);
    if rows.is_empty() {
        return Err(Error::usage(
            "the two results have no (operation, threads) point in common",
        ));
    }
    let labels = report::html::labels(&[da.clone(), db.clone()]);
    match a.format {
        Format::Table => print!("{}", report::compare::render(&rows, &labels[0], &labels[1])),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&rows).expect("rows serialize")
        ),
        Format::Csv => {
            println!("operation,threads,metric,a,b,ratio,verdict,disturbed");
            for r in &rows {
                println!(
                    "{},{},{},{},{},{},{},{}",
                    r.operation,
                    r.threads,
                    r.metric,
                    r.a,
                    r.b,
                    r.ratio,
                    r.verdict.label(),
                    r.disturbed
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn list() -> Result<ExitCode> {
    println!(
        "micro-read   the 13-query read micro-benchmark of the 2007 InnoDB/MyISAM/Falcon report"
    );
    for q in crate::workload::micro_read::Query::ALL {
        println!("  {:<30} {}", q.name(), q.sql());
    }
    println!("sysbench OLTP workloads (sysbench 1.0.20's names, schema and queries; docs/oltp.md)");
    for k in crate::workload::oltp::Kind::ALL {
        println!("  {:<30} {}", k.name(), k.describe());
    }
    println!("tpcc         TPC-C: the five transactions in the 45/43/4/4/4 mix (no keying or think times)");
    println!(
        "  {:<30} {}",
        "mix",
        crate::workload::tpcc::KINDS.join(", ")
    );
    println!("linkbench    LinkBench: a social graph of --maxid1 nodes and the 10 request types in its production mix");
    println!(
        "  {:<30} {}",
        "requests",
        crate::workload::linkbench::KINDS.join(", ")
    );
    println!("iibench      iiBench: batched inserts into purchases_index with 3 secondary indexes, rate per window of rows (docs/iibench.md)");
    println!("  {:<30} multi-row INSERTs of --rows-per-commit rows; --query-threads run the 3 iiBench queries", "insert");
    println!("workload files (workloads/*.toml, built in; your own: --workload-file FILE, see `enginebench init-workload`)");
    for (name, text) in crate::workload::custom::BUILTINS {
        let desc = crate::workload::custom::file::parse(name, text, &[], 1)
            .map(|s| s.description)
            .unwrap_or_default();
        println!("  {name:<30} {desc}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `init-workload`: write the commented example workload file.
pub fn init_workload(a: &crate::cli::InitWorkloadArgs) -> Result<ExitCode> {
    let text = crate::workload::custom::EXAMPLE;
    if a.file == "-" {
        print!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let p = Path::new(&a.file);
    if p.exists() && !a.force {
        return Err(Error::usage(format!(
            "{} exists; choose another name or add --force to overwrite it",
            a.file
        )));
    }
    std::fs::write(p, text).map_err(|e| Error::usage(format!("cannot write {}: {e}", a.file)))?;
    eprintln!(
        "wrote {}: edit it, then run it with: enginebench run --workload-file {}",
        a.file, a.file
    );
    println!("compression  the same log rows in every storage format: size, ratio to raw, load time, read/write speed");
    for d in [Dbms::Mysql, Dbms::Postgres, Dbms::Sqlite] {
        let names: Vec<&str> = crate::workload::compression::formats::for_dbms(d)
            .iter()
            .map(|f| f.name)
            .collect();
        println!("  {:<30} {}", d.name(), names.join(", "));
    }
    println!("schema-change  ADD/DROP COLUMN while an OLTP workload runs: throughput timeline, stall, lost ops");
    for d in [Dbms::Mysql, Dbms::Postgres, Dbms::Sqlite] {
        let names: Vec<&str> = crate::workload::schema_change::algorithms(d)
            .iter()
            .map(|a| a.name)
            .collect();
        println!("  {:<30} {}", d.name(), names.join(", "));
    }
    println!("sqlbench     MySQL's sql-bench: 95 named operations, seconds per operation (docs/sqlbench.md)");
    println!(
        "  {:<30} {} (--dry-run lists every operation)",
        "groups",
        crate::workload::sqlbench::GROUPS.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}

/// Other processes using more than this many CPUs during a run flag it `disturbed`.
const DISTURBED_CPUS: f64 = 0.10;

/// Name each interval's per-kind counts after the workload's kinds and, for TPC-C, add the
/// interval's tpmC (committed NewOrders per minute).
fn name_interval_kinds(
    mut intervals: Vec<crate::runner::IntervalSample>,
    workload: &crate::workload::Workload,
) -> Vec<crate::runner::IntervalSample> {
    let kinds = workload.kinds();
    if kinds.len() < 2 {
        return intervals;
    }
    let tpcc = matches!(workload, crate::workload::Workload::Tpcc(_));
    for i in &mut intervals {
        let ticks = std::mem::take(&mut i.kind_ticks);
        for (k, name) in kinds.iter().enumerate() {
            i.by_kind
                .insert(name.to_string(), ticks.get(k).copied().unwrap_or_default());
        }
        if tpcc && i.len_s > 0.0 {
            let no = ticks
                .get(crate::workload::tpcc::NEW_ORDER as usize)
                .copied()
                .unwrap_or_default();
            i.tpm_c = Some((no.ops - no.rolled_back) as f64 * 60.0 / i.len_s);
        }
    }
    intervals
}

/// TPC-C: the run's response-time and mix conditions, from its per-type records.
fn tpcc_constraints(
    rec: &RunRecord,
    workload: &crate::workload::Workload,
) -> crate::workload::tpcc::constraints::Constraints {
    use crate::workload::tpcc::{constraints, KINDS};
    let weights = match workload {
        crate::workload::Workload::Tpcc(t) => t.weights,
        _ => crate::workload::tpcc::DEFAULT_WEIGHTS,
    };
    let figures = std::array::from_fn(|k| {
        rec.by_kind
            .get(KINDS[k])
            .map_or_else(Default::default, |r| constraints::KindFigures {
                ops: r.ops,
                p90_us: r.latency_us.p90_us,
            })
    });
    constraints::check_spec(&figures, &weights)
}

fn server_process(a: Option<ProcSample>, b: Option<ProcSample>, ops: u64) -> Option<ServerProcess> {
    let (a, b) = (a?, b?);
    let user_s = (b.user_s - a.user_s).max(0.0);
    let sys_s = (b.sys_s - a.sys_s).max(0.0);
    let written = b.write_bytes.saturating_sub(a.write_bytes);
    Some(ServerProcess {
        user_s,
        sys_s,
        cpu_us_per_op: (user_s + sys_s) * 1e6 / ops.max(1) as f64,
        read_bytes: b.read_bytes.saturating_sub(a.read_bytes),
        written_bytes: written,
        written_bytes_per_op: written as f64 / ops.max(1) as f64,
        rss_bytes: b.rss_bytes,
    })
}

fn delta(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    after
        .iter()
        .filter_map(|(k, a)| {
            let d = a - before.get(k).copied().unwrap_or(0.0);
            (d != 0.0).then(|| (k.clone(), d))
        })
        .collect()
}

fn report_loads(loaded: &[crate::load::LoadStats]) {
    for s in loaded {
        eprintln!(
            "loaded {} rows into {} in {:.1} s ({:.0} rows/s, {} connection(s))",
            s.rows, s.table, s.elapsed_s, s.rows_per_s, s.connections
        );
    }
}

pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// A new folder for this invocation's results: DIR/YYYYMMDDTHHMMSS-workload-dbms[-n].
pub(crate) fn result_folder(dir: &str, workload: &str, dbms: Dbms) -> Result<PathBuf> {
    let stamp: String = now_rfc3339()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(15)
        .collect();
    let base = Path::new(dir);
    for n in 0..1000 {
        let name = if n == 0 {
            format!("{stamp}-{workload}-{}", dbms.name())
        } else {
            format!("{stamp}-{workload}-{}-{n}", dbms.name())
        };
        let p = base.join(name);
        match std::fs::create_dir_all(base).and_then(|_| std::fs::create_dir(&p)) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Error::usage(format!(
                    "--results-dir: cannot create {}: {e}",
                    p.display()
                )))
            }
        }
    }
    Err(Error::usage(format!(
        "--results-dir: too many result folders for {stamp} in {dir}"
    )))
}

/// Connections the run needs at once: the largest thread count plus the admin connection.
async fn check_connection_limit(conn: &mut Conn, cfg: &RunConfig) -> Result<Option<u64>> {
    let need = cfg.threads.iter().copied().max().unwrap_or(1) as u64 + 1;
    let (limit, how) = match conn.dbms() {
        Dbms::Mysql => {
            let v = conn
                .query_one("SELECT @@max_connections")
                .await
                .ctx("reading max_connections")?;
            (
                v.and_then(|s| s.parse::<u64>().ok()),
                "start mariadbd with --max-connections=N (or SET GLOBAL max_connections=N)",
            )
        }
        Dbms::Postgres => {
            let v = conn
                .query_one("SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int")
                .await
                .ctx("reading max_connections")?;
            (
                v.and_then(|s| s.parse::<u64>().ok()),
                "set max_connections=N in postgresql.conf (or -c max_connections=N) and restart",
            )
        }
        Dbms::Sqlite => return Ok(None),
    };
    if let Some(l) = limit {
        if need > l {
            return Err(Error::usage(format!(
                "--threads {} needs {need} connections but the server allows {l}: {how}, with N at least {need}",
                cfg.threads.iter().max().unwrap_or(&1)
            )));
        }
    }
    Ok(limit)
}

struct RunState {
    doc: ResultDoc,
    path: PathBuf,
    /// The server process to sample per run (managed, or --server-pid).
    server_pid: Option<u32>,
    /// The table's engine, for SHOW ENGINE ... STATUS.
    engine: String,
}

impl RunState {
    fn save(&self) -> Result<()> {
        report::json::write_atomic(&self.path, &self.doc)
    }
}

pub fn run(a: &RunArgs) -> Result<ExitCode> {
    if a.workload == crate::workload::sqlbench::NAME {
        // Count-based and sequential: its own executor (src/workload/sqlbench).
        return crate::workload::sqlbench::run::run(a);
    }
    let mut cfg = RunConfig::resolve(a)?;
    interrupt::install();
    let server = match &cfg.server {
        Some(s) => {
            eprintln!(
                "starting a private {} server (profile {})",
                s.kind.name(),
                s.profile
            );
            let sv = Server::start(s)?;
            eprintln!(
                "{} server pid {} on 127.0.0.1:{}, folder {}{}",
                sv.kind.name(),
                sv.pid,
                sv.port,
                sv.root.display(),
                if s.keep_datadir {
                    " (kept)"
                } else {
                    " (removed afterwards)"
                }
            );
            cfg.target_spec =
                crate::db::TargetSpec::parse(&sv.url, |_| None).map_err(Error::usage)?;
            cfg.target = sv.url.clone();
            Some(sv)
        }
        None => None,
    };
    let out = run_on(a, &cfg, server.as_ref());
    // Stop the throwaway server whatever happened; a server that died is named in the error.
    let out = out.map_err(|e| name_dead_server(e, server.as_ref()));
    if let Some(mut sv) = server {
        if sv.pid != 0 && !sv.alive() {
            // Keep the log of a server that died: it says why.
            sv.keep_folder();
            eprintln!(
                "the server ended on its own; its folder is kept for the log: {}",
                sv.root.display()
            );
        }
        let stopped = sv.stop();
        if cfg.server.as_ref().is_some_and(|s| s.keep_datadir) {
            eprintln!("server folder kept: {}", sv.root.display());
        }
        stopped?;
    }
    out
}

/// When the managed server is gone, say so (and which one): the driver's message alone
/// ("connection lost") does not tell the user why.
fn name_dead_server(e: Error, server: Option<&Server>) -> Error {
    match server {
        Some(sv)
            if !sv.alive()
                && !matches!(e.failure, Failure::Interrupted(_))
                && !e.message.contains(&sv.describe()) =>
        {
            Error::run(format!(
                "the {} ended during the run: {}",
                sv.describe(),
                e.message
            ))
        }
        _ => e,
    }
}

fn run_on(a: &RunArgs, cfg: &RunConfig, server: Option<&Server>) -> Result<ExitCode> {
    let spec = cfg.target_spec.clone();
    warn_password(&spec);
    let server_pid = server.map(|s| s.pid).or(cfg.server_pid);
    if let Some(pin) = &cfg.pin {
        // Client: the calling thread; every client thread started later inherits the mask.
        if let Some(c) = &pin.client_cpus {
            proc::set_affinity(0, c).map_err(|e| Error::usage(format!("--pin client: {e}")))?;
        }
        if let (Some(c), Some(pid)) = (&pin.server_cpus, server_pid) {
            proc::pin_tree(pid, c).map_err(|e| Error::usage(format!("--pin server: {e}")))?;
        }
    }
    let rt = runtime();
    let mut admin = rt.block_on(connect(&spec))?;
    let (version, engine, max_conn) = rt.block_on(async {
        let version = admin
            .server_version()
            .await
            .ctx("reading the server version")?;
        let engine = engine(&mut admin, cfg.engine.as_deref()).await?;
        let max_conn = check_connection_limit(&mut admin, cfg).await?;
        Ok::<_, Error>((version, engine, max_conn))
    })?;
    let settings = rt.block_on(capture::settings(&mut admin));
    if cfg.method == crate::cli::Method::Classic {
        eprintln!(
            "classic method: the 2007 report's settings; {} per engine",
            human(cfg.estimate())
        );
    } else if a.threads.is_none() && a.duration.is_none() && a.warmup.is_none() && a.runs.is_none()
    {
        eprintln!("quick method: a small table and short runs for a first look (use --method classic for the report's method)");
    }

    let opts = load_options(&spec, cfg.load_connections, cfg.load_method);
    let loaded: Result<Vec<crate::load::LoadStats>> = match &cfg.workload_spec {
        // They load during the measurement (each format / timeline its own fresh table).
        Workload::Compression(_) | Workload::SchemaChange(_) => Ok(Vec::new()),
        w => rt.block_on(prepare_interruptibly(
            w,
            &mut admin,
            &spec,
            engine.as_deref(),
            &opts,
        )),
    };
    // Interrupted while loading: the result file is still written (the loads so far, no
    // points) before the tool exits 130 / 143; other load failures end the command here.
    let (loaded, load_interrupted) = match loaded {
        Ok(l) => (l, None),
        Err(e) if matches!(e.failure, Failure::Interrupted(_)) => (opts.journal.entries(), Some(e)),
        Err(e) => return Err(e),
    };
    report_loads(&loaded);
    let table_engine = match spec.dbms {
        // The admin connection may be mid-statement (an index build it abandoned).
        _ if load_interrupted.is_some() => cfg.engine.clone().unwrap_or_default(),
        Dbms::Mysql => rt
            .block_on(admin.query_one(
                &format!(
                    "SELECT ENGINE FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{}'",
                    cfg.workload_spec.main_table()
                ),
            ))
            .ctx("reading the table's engine")?
            .unwrap_or_default(),
        Dbms::Postgres => "heap".to_string(),
        Dbms::Sqlite => "sqlite-btree".to_string(),
    };

    let folder = result_folder(&cfg.results_dir, &cfg.workload, spec.dbms)?;
    let mut state = RunState {
        path: folder.join("result.json"),
        doc: ResultDoc {
            schema_version: report::SCHEMA_VERSION,
            tool: ToolInfo {
                name: "enginebench".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            status: Status::Running,
            error: None,
            started_at: now_rfc3339(),
            finished_at: None,
            config: serde_json::to_value(&cfg).expect("config serializes"),
            target: TargetInfo {
                dbms: spec.dbms.name().into(),
                url: spec.display.clone(),
                server_version: version,
                engine: table_engine.clone(),
                max_connections: max_conn,
                settings: settings.values,
                settings_non_default: settings.non_default,
                server: match (server, server_pid) {
                    (Some(sv), _) => Some(ServerInfo {
                        managed: true,
                        profile: Some(format!("{}:{}", sv.kind.name(), sv.profile)),
                        pid: Some(sv.pid),
                        options_file: Some(sv.options_text.clone()),
                        pinned_cpus: cfg.pin.as_ref().and_then(|p| p.server_cpus.clone()),
                    }),
                    (None, Some(pid)) => Some(ServerInfo {
                        managed: false,
                        profile: cfg.server_label.clone(),
                        pid: Some(pid),
                        options_file: None,
                        pinned_cpus: cfg.pin.as_ref().and_then(|p| p.server_cpus.clone()),
                    }),
                    _ => None,
                },
            },
            host: HostFacts::collect(),
            load: loaded,
            points: Vec::new(),
            compression: None,
            schema_change: None,
            sqlbench: None,
            notes: {
                let mut n = notes(cfg);
                if let Conn::Mysql(m) = &admin {
                    // The lean client falls back to mysql_async silently; say which one ran.
                    n.push(format!("MySQL client: {} (connections use the same client as this admin connection).", m.driver()));
                }
                if let Conn::Postgres(p) = &admin {
                    n.push(format!("PostgreSQL client: {} (connections use the same client as this admin connection).", p.driver()));
                }
                n
            },
        },
        server_pid,
        engine: table_engine,
    };
    state.save()?;
    eprintln!(
        "{}: {} operation(s) x threads {:?}, warm-up {} + {} x {} per point, about {}; results in {}",
        cfg.workload,
        cfg.operations.len(),
        cfg.threads,
        human_s(cfg.warmup_s),
        cfg.runs,
        match cfg.events {
            Some(n) if cfg.duration_s == 0.0 => format!("{n} events"),
            Some(n) => format!("({n} events or {})", human_s(cfg.duration_s)),
            None => human_s(cfg.duration_s),
        },
        human(cfg.estimate()),
        folder.display()
    );

    let mut admin = Admin::new(admin, spec.clone(), cfg.faults());
    let outcome = match &cfg.workload_spec {
        _ if load_interrupted.is_some() => {
            state.doc.notes.push(interrupt::load_note());
            Err(load_interrupted.expect("checked"))
        }
        crate::workload::Workload::Iibench(s) => {
            let (server_pid, engine) = (state.server_pid, state.engine.clone());
            match admin.conn_mut() {
                Some(conn) => crate::workload::iibench::run::measure(
                    crate::workload::iibench::run::Ctx {
                        cfg,
                        spec: s,
                        rt: &rt,
                        admin: conn,
                        server_pid,
                        engine: &engine,
                    },
                    &mut |p| {
                        state.doc.points = vec![p];
                        state.save()
                    },
                ),
                None => Err(Error::run("the admin connection to the target was lost")),
            }
        }
        Workload::Compression(s) => measure_compression(s, cfg, &rt, &mut admin, &mut state, &opts),
        Workload::SchemaChange(s) => crate::workload::schema_change::measure(
            s,
            cfg,
            &rt,
            admin
                .conn_mut()
                .ok_or_else(|| Error::run("the admin connection to the target was lost"))?,
            &mut state.doc,
            &state.path,
            server_pid,
            engine.as_deref(),
            &opts,
        ),
        _ => measure_all(cfg, &rt, &mut admin, &mut state),
    }
    .map_err(|e| name_dead_server(e, server));
    state.doc.finished_at = Some(now_rfc3339());
    let code = match &outcome {
        Ok(()) if interrupt::signal().is_some() => {
            state.doc.status = Status::Interrupted;
            state.doc.error =
                Some("interrupted by a signal; the points that finished are kept".into());
            state.doc.notes.push(interrupt::note());
            ExitCode::from(128 + interrupt::signal().unwrap_or(2) as u8)
        }
        Ok(()) => {
            state.doc.status = Status::Complete;
            ExitCode::SUCCESS
        }
        Err(e) => {
            state.doc.status = if matches!(e.failure, Failure::Interrupted(_)) {
                Status::Interrupted
            } else {
                Status::Failed
            };
            state.doc.error = Some(e.message.clone());
            ExitCode::from(e.exit_code())
        }
    };
    // Results first: whatever happened, what was measured is on disk before anything is reported.
    state.save()?;
    let html = folder.join("report.html");
    if let Err(e) = report::json::write_text_atomic(
        &html,
        &report::html::render(std::slice::from_ref(&state.doc)),
    ) {
        eprintln!("warning: cannot write {}: {e}", html.display());
    }
    // A signal that arrived while the files were written: every point had finished (the
    // status stays complete), but the run did not end normally: say so and exit 128 + N.
    let mut code = code;
    if let (Some(sig), Status::Complete) = (interrupt::signal(), state.doc.status) {
        state.doc.notes.push(format!(
            "{} arrived while the result files were written: every point finished; report.html may be missing.",
            interrupt::name(sig)
        ));
        state.save()?;
        code = ExitCode::from(128 + sig as u8);
    }
    match a.format {
        Format::Table => print!("{}", report::table::render(&state.doc, cfg.aggregate)),
        Format::Json => println!("{}", report::json::to_string(&state.doc)),
        Format::Csv => print!("{}", report::csv::to_string(&state.doc)),
    }
    eprintln!("result: {}", state.path.display());
    outcome.map(|()| code)
}

fn notes(cfg: &RunConfig) -> Vec<String> {
    let mut n = vec![
        "A measured run counts every operation started before its deadline; elapsed_s runs from the start of the run to the end of its last operation.".to_string(),
        "client_cpu is the whole client process (all threads) over the run window, from getrusage.".to_string(),
    ];
    if cfg.target_spec.dbms == Dbms::Postgres {
        n.push("PostgreSQL statistics counters are flushed lazily by the server; their per-run deltas are approximate.".into());
    }
    n.extend(cfg.workload_spec.notes());
    if let Workload::Custom(w) = &cfg.workload_spec {
        let piped: Vec<&str> = w
            .txns
            .iter()
            .filter(|t| t.pipeline && t.transaction)
            .map(|t| t.name.as_str())
            .collect();
        if !piped.is_empty() {
            let t = &cfg.target_spec;
            let on = t.dbms == Dbms::Postgres
                && t.pg_driver == crate::db::url::PgDriver::Wire
                && t.pipeline_statements;
            n.push(format!(
                "{}: transactions {} are marked `pipeline`: {}",
                w.name,
                piped.join(", "),
                if on {
                    "statements without captures were written without waiting for the previous reply (one Sync for each run of them; docs/workload-files.md, \"Pipelined statements\"), so such a transaction took one round trip (with BEGIN sent alongside) instead of one per statement"
                } else {
                    "this run sent them one at a time (pipelining applies to the PostgreSQL lean client only, and ?pipeline=off turns it off)"
                }
            ));
        }
    }
    n
}

fn measure_all(
    cfg: &RunConfig,
    rt: &tokio::runtime::Runtime,
    admin: &mut Admin,
    state: &mut RunState,
) -> Result<()> {
    let spec = &cfg.target_spec;
    for (op_index, op_name) in cfg.operations.iter().enumerate() {
        let op_name = op_name.as_str();
        for &threads in &cfg.threads {
            if interrupt::signal().is_some() {
                return Ok(());
            }
            // A workload file's phase may set its own rate and length.
            let pacing = cfg
                .workload_spec
                .phase_pacing(op_index)
                .unwrap_or(cfg.pacing);
            let duration = cfg
                .workload_spec
                .phase_duration(op_index)
                .unwrap_or(cfg.duration());
            let scfg = SessionConfig {
                threads,
                client_threads: cfg.client_threads,
                sched_batch: cfg.sched_batch && pacing == crate::runner::Pacing::ClosedLoop,
                pacing,
                faults: cfg.faults(),
            };
            let workload = cfg.workload_spec.clone();
            let mut session =
                Session::start(spec, &scfg, move |w| workload.driver(op_index, w, threads))
                    .map_err(|e| e.context(format!("{op_name} at {threads} threads")))?;
            let interval = cfg.report_interval();
            let warmup = if cfg.warmup_s > 0.0 {
                let w = session.phase(cfg.warmup(), None, interval, |_| {})?;
                if let Some(why) = w.lost_all {
                    return Err(Error::run(format!("{why} (in the warm-up)")));
                }
                Some(PhaseSummary {
                    ops: w.ops,
                    elapsed_s: w.elapsed.as_secs_f64(),
                    ops_per_s: w.ops as f64 / w.elapsed.as_secs_f64().max(1e-9),
                    errors: w.errors.total(),
                })
            } else {
                None
            };
            let mut runs = Vec::new();
            let mut merged = LatencyHist::new();
            let mut merged_response: Option<LatencyHist> = None;
            // Set when every connection was lost: the run so far is kept, then the run fails.
            let mut lost_all: Option<String> = None;
            for r in 1..=cfg.runs {
                if interrupt::signal().is_some() {
                    break;
                }
                let before = admin.counters(rt);
                let proc0 = state.server_pid.and_then(ProcSample::of_tree);
                let busy0 = proc::host_busy_s();
                let live = cfg.live_report;
                let label = format!("{} thds: {threads} run {r}", op_name);
                let res = session.phase(duration, cfg.events, interval, |s: &IntervalSample| {
                    if live {
                        eprintln!(
                            "[ {:>6.1}s ] {label}  ops/s: {:.1}  p95: {} us  err/s: {:.1}",
                            s.t_s,
                            s.ops_per_s,
                            s.latency_us.p95_us,
                            s.errors as f64 / cfg.report_interval_s
                        );
                    }
                })?;
                let busy1 = proc::host_busy_s();
                let proc1 = state.server_pid.and_then(ProcSample::of_tree);
                let after = admin.counters(rt);
                if res.interrupted && res.ops == 0 && res.errors.total() == 0 {
                    break;
                }
                lost_all = res.lost_all.clone();
                merged.add(&res.hist);
                let open_loop = open_loop_record(pacing, &res, &mut merged_response);
                let elapsed_s = res.elapsed.as_secs_f64();
                let rec = RunRecord {
                    run: r,
                    ops: res.ops,
                    rows: res.rows,
                    rows_per_op: res.rows as f64 / res.ops.max(1) as f64,
                    statements: res.statements,
                    elapsed_s,
                    ops_per_s: res.ops as f64 / elapsed_s.max(1e-9),
                    statements_per_s: res.statements as f64 / elapsed_s.max(1e-9),
                    errors_total: res.errors.total(),
                    errors: res
                        .errors
                        .to_map()
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                    error_samples: res.error_samples.clone(),
                    latency_us: res.hist.summary(),
                    response_us: open_loop.as_ref().map(|(r, _)| r.clone()),
                    open_loop: open_loop.map(|(_, o)| o),
                    client_cpu: ClientCpu::new(res.client_cpu, res.ops),
                    server_process: server_process(proc0, proc1, res.ops),
                    client_cpu_share: None,
                    host_cpu: HostCpu::default(),
                    disturbed: false,
                    // Counters that reset with a server restart, or missing on one side (the
                    // admin connection failed), give no honest delta.
                    server_counters: if res.reconnects == 0
                        && !before.is_empty()
                        && !after.is_empty()
                    {
                        delta(&before, &after)
                    } else {
                        BTreeMap::new()
                    },
                    intervals: name_interval_kinds(res.intervals, &cfg.workload_spec),
                    workers_lost: res.workers_lost,
                    interrupted: res.interrupted,
                    histogram_hdr_v2: res.hist.encode(),
                    by_kind: BTreeMap::new(),
                    tpm_c: None,
                    tpm_total: None,
                    workload_counters: res.counters.clone(),
                    percentiles_us: res.hist.percentiles_us(&cfg.extra_percentiles),
                    reconnects: res.reconnects,
                    reconnect_failures: res.reconnect_failures,
                    constraints: None,
                };
                let mut rec = rec;
                let client_s = res.client_cpu.total_s();
                let server_s = rec.server_process.as_ref().map(|p| p.user_s + p.sys_s);
                if let Some(sv) = server_s {
                    if client_s + sv > 0.0 {
                        rec.client_cpu_share = Some(client_s / (client_s + sv));
                    }
                }
                let busy_s = (busy1 - busy0).max(0.0);
                let others_s = (busy_s - client_s - server_s.unwrap_or(0.0)).max(0.0);
                rec.host_cpu = HostCpu {
                    busy_s,
                    others_s,
                    others_cpus: others_s / elapsed_s.max(1e-9),
                };
                // Noise guard: others using > 10 % of one CPU may have taken CPU from the run.
                rec.disturbed = rec.host_cpu.others_cpus > DISTURBED_CPUS;
                let server_part = match (&rec.server_process, rec.client_cpu_share) {
                    (Some(p), Some(share)) => format!(
                        "  server {:.1} us/op  client share {:.0}%",
                        p.cpu_us_per_op,
                        share * 100.0
                    ),
                    _ => String::new(),
                };
                let kinds = cfg.workload_spec.kinds();
                if kinds.len() > 1 {
                    for (k, name) in kinds.iter().enumerate() {
                        let ks = res.by_kind.get(k);
                        rec.by_kind.insert(
                            name.to_string(),
                            KindRecord {
                                ops: ks.map_or(0, |s| s.ops),
                                rolled_back: ks.map_or(0, |s| s.rolled_back),
                                errors: ks.map_or(0, |s| s.errors),
                                latency_us: ks.map_or_else(
                                    || LatencyHist::new().summary(),
                                    |s| s.hist.summary(),
                                ),
                            },
                        );
                    }
                }
                if let crate::workload::Workload::Tpcc(_) = &cfg.workload_spec {
                    let per_min = 60.0 / elapsed_s.max(1e-9);
                    let no = res.by_kind.get(crate::workload::tpcc::NEW_ORDER as usize);
                    let committed = no.map_or(0, |s| s.ops - s.rolled_back);
                    rec.tpm_c = Some(committed as f64 * per_min);
                    rec.tpm_total = Some(res.ops as f64 * per_min);
                    rec.constraints = Some(tpcc_constraints(&rec, &cfg.workload_spec));
                }
                if let (Some(c), Some(t)) = (rec.tpm_c, rec.tpm_total) {
                    let extra: String = rec
                        .workload_counters
                        .iter()
                        .map(|(k, v)| format!("  {k} {v}"))
                        .collect();
                    eprintln!(
                        "tpcc threads {threads} run {r}: tpmC {c:.0}  tpmTotal {t:.0}{extra}"
                    );
                    if let Some(k) = &rec.constraints {
                        eprintln!(
                            "tpcc threads {threads} run {r}: constraints {}",
                            crate::workload::tpcc::constraints::summary_line(k)
                        );
                    }
                }
                let extra: String = rec
                    .percentiles_us
                    .iter()
                    .map(|(k, v)| format!("  {} {v:>7} us", k.replace('_', ".")))
                    .collect();
                eprintln!(
                    "{:<30} threads {:>4}  run {r}/{}  {:>10.1} ops/s  p95 {:>7} us{extra}  {:.1} rows/op  client {:.1} us/op{server_part}{}{}{}",
                    op_name,
                    threads,
                    cfg.runs,
                    rec.ops_per_s,
                    rec.latency_us.p95_us,
                    rec.rows_per_op,
                    rec.client_cpu.us_per_op,
                    if rec.disturbed { format!("  DISTURBED (others {:.2} CPU)", rec.host_cpu.others_cpus) } else { String::new() },
                    if rec.errors_total > 0 { format!("  errors {}", rec.errors_total) } else { String::new() },
                    if rec.reconnects > 0 { format!("  reconnects {}", rec.reconnects) } else { String::new() }
                );
                if let (Some(r), Some(o)) = (&rec.response_us, &rec.open_loop) {
                    eprintln!(
                        "{:<30} open loop at {:.1} ops/s: response p95 {} us  max lag {} us  late {}  backlog {}",
                        "", o.rate_ops_per_s, r.p95_us, o.max_lag_us, o.late_ops, o.backlog_ops
                    );
                }
                runs.push(rec);
                if lost_all.is_some() {
                    break;
                }
            }
            drop(session);
            if runs.is_empty() {
                return Ok(());
            }
            let mut aggregate = Aggregate::of(&runs, merged.summary());
            aggregate.response_us = merged_response.map(|h| h.summary());
            aggregate.percentiles_us = merged.percentiles_us(&cfg.extra_percentiles);
            // After the point's last run, with every worker idle.
            let (engine_status, table_sizes, disk_usage) = if lost_all.is_some() {
                (None, Vec::new(), None)
            } else {
                (
                    admin.engine_status(rt, &state.engine),
                    admin.table_sizes(rt),
                    // The forced flush can take many seconds: not after a signal, which must
                    // stop the client within a few.
                    if interrupt::signal().is_none() {
                        admin.disk_usage(rt)
                    } else {
                        None
                    },
                )
            };
            state.doc.points.push(Point {
                workload: cfg.workload.clone(),
                operation: op_name.into(),
                threads,
                warmup,
                runs,
                aggregate,
                engine_status,
                table_sizes,
                disk_usage,
                iibench: None,
            });
            state.save()?;
            if let Some(why) = lost_all {
                return Err(Error::run(why));
            }
        }
    }
    Ok(())
}

/// compression: per format, load it and size it (compression.rs), then its read/write points
/// through the ordinary measurement (`measure_all` on the one format), saving after each.
fn measure_compression(
    s: &crate::workload::compression::Spec,
    cfg: &RunConfig,
    rt: &tokio::runtime::Runtime,
    admin: &mut Admin,
    state: &mut RunState,
    opts: &LoadOptions,
) -> Result<()> {
    use crate::workload::compression;
    let lost = || Error::run("the admin connection to the target was lost");
    let mut report = compression::start(s);
    for (i, f) in s.formats.iter().enumerate() {
        if interrupt::signal().is_some() {
            return Ok(());
        }
        let loaded = rt.block_on(compression::load_format(
            admin.conn_mut().ok_or_else(lost)?,
            &cfg.target_spec,
            s,
            f,
            report.raw_bytes,
            opts,
        ))?;
        state.doc.load.extend(loaded.load);
        let available = loaded.result.available;
        report.formats.push(loaded.result);
        state.doc.compression = Some(report.clone());
        state.save()?;
        if !available {
            continue;
        }
        let mut one = cfg.clone();
        one.workload_spec = Workload::Compression(s.only(i));
        one.operations = vec![f.name.to_string()];
        state.engine = f.engine().to_string();
        let r = measure_all(&one, rt, admin, state);
        if let Some(conn) = admin.conn_mut() {
            rt.block_on(compression::finish_format(conn, loaded.restore.as_deref()));
        }
        r?;
        compression::fill_runs(&mut report, &state.doc.points);
        state.doc.compression = Some(report.clone());
        state.save()?;
    }
    Ok(())
}

fn human(d: std::time::Duration) -> String {
    human_s(d.as_secs_f64())
}

fn human_s(s: f64) -> String {
    if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 120.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}

/// `enginebench server start|stop|status KIND`.
pub fn server(a: &crate::cli::ServerArgs) -> Result<ExitCode> {
    use crate::cli::ServerAction;
    let kind = crate::server::Kind::parse(&a.kind)?;
    match a.action {
        ServerAction::Start => {
            let mut spec = crate::server::ServerSpec::parse(
                &format!("{}:{}", kind.name(), a.profile),
                &a.server_opt,
                a.datadir.as_deref(),
                true,
            )?;
            // It must outlive this command.
            spec.die_with_parent = false;
            interrupt::install();
            let sv = Server::start(&spec)?;
            eprintln!(
                "{} server running: pid {}, port {}, folder {} (stop: enginebench server stop {} --datadir {})",
                kind.name(),
                sv.pid,
                sv.port,
                sv.root.display(),
                kind.name(),
                sv.root.display()
            );
            println!("{}", sv.url);
            sv.detach();
            Ok(ExitCode::SUCCESS)
        }
        ServerAction::Stop | ServerAction::Status => {
            if !a.server_opt.is_empty() {
                return Err(Error::usage("--server-opt applies to `server start` only"));
            }
            let dir = a.datadir.as_deref().ok_or_else(|| {
                Error::usage("--datadir DIR is required: the folder `server start` printed")
            })?;
            let root = Path::new(dir);
            let st = match crate::server::read_state(root) {
                Ok(st) => st,
                Err(_) if root.join("data").is_dir() => {
                    eprintln!("no {} server running in {dir}", kind.name());
                    return Ok(ExitCode::from(if a.action == ServerAction::Stop {
                        0
                    } else {
                        1
                    }));
                }
                Err(e) => return Err(e),
            };
            if st.kind != kind {
                return Err(Error::usage(format!(
                    "the server in {dir} is {}, not {}",
                    st.kind.name(),
                    kind.name()
                )));
            }
            if a.action == ServerAction::Stop {
                match crate::server::stop_in(root)? {
                    Some(st) => eprintln!("stopped {} server pid {}", st.kind.name(), st.pid),
                    None => eprintln!("no {} server running in {dir}", kind.name()),
                }
                Ok(ExitCode::SUCCESS)
            } else {
                match crate::server::status(root)? {
                    Some(st) => {
                        eprintln!(
                            "{} server running: pid {}, port {}",
                            st.kind.name(),
                            st.pid,
                            st.port
                        );
                        println!("{}", st.url);
                        Ok(ExitCode::SUCCESS)
                    }
                    None => {
                        eprintln!("no {} server running in {dir}", kind.name());
                        Ok(ExitCode::from(1))
                    }
                }
            }
        }
    }
}

/// The open-loop part of a run record (response time and schedule), if the run was paced;
/// adds the run's response histogram to `merged`.
fn open_loop_record(
    pacing: crate::runner::Pacing,
    res: &crate::runner::PhaseResult,
    merged: &mut Option<LatencyHist>,
) -> Option<(
    crate::measure::LatencySummary,
    crate::report::model::OpenLoop,
)> {
    let (response, sched) = res.open_loop.as_ref()?;
    let crate::runner::Pacing::FixedRate {
        ops_per_s,
        arrivals,
    } = pacing
    else {
        return None;
    };
    merged.get_or_insert_with(LatencyHist::new).add(response);
    Some((
        response.summary(),
        crate::report::model::OpenLoop {
            rate_ops_per_s: ops_per_s,
            arrivals: arrivals.name().to_string(),
            intended_ops: sched.intended,
            backlog_ops: sched.backlog,
            late_ops: sched.late,
            max_lag_us: sched.max_lag.as_micros() as u64,
        },
    ))
}
