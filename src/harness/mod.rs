//! The run harness: one lifecycle for every workload. It starts the private server, connects,
//! loads, opens the result folder and writes the result's header, hands the workload a
//! `Harness` (the contract's trait, implemented by `Bench`) to run its shape in (the sweep, or phases of its own), saves after every finished
//! point, and turns the outcome into the result's status and the exit code. No workload writes
//! result files itself, and nothing here knows any workload.

mod bench;
mod client;
mod phase;
mod steps;
mod sweep;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::SystemTime;

use crate::cli::{RunArgs, RunFormat};
use crate::config::RunConfig;
use crate::contract::{PrepareCx, Workload};
use crate::db::peer::{self, FoundBy, Lookup};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Context, Error, Failure, Result};
use crate::interrupt;
use crate::live::Live;
use crate::measure::host::HostFacts;
use crate::measure::{disturbed_above, proc, HostSample};
use crate::model::fleet_load::FleetLoad;
use crate::model::LoadOptions;
use crate::model::{
    LoadMethod, LoadStats, NodeInfo, ResultDoc, ServerInfo, Status, TargetInfo, ToolInfo,
};
use crate::report;
use crate::runner::admin::Admin;
use crate::server::{capture, cluster::Cluster, Server};

// The context a workload's run works with: the contract's `Harness`, implemented here.
use crate::contract::Harness;
pub use bench::Bench;

use client::{client_info, client_note, note_loops};
pub use sweep::{record, record_counted, server_process};

// A connection for a command, opened as a workload opens one of its own (the contract's).
pub use crate::contract::connect;

// The contract knows no command line: `run`'s options are resolved here, above it.
/// `run`'s options resolved: the common ones (the config) and the workload's own (`entry`,
/// named `name`, from `m`), which may adjust the run's shape to its defaults.
pub fn resolve_run(
    a: &crate::cli::RunArgs,
    entry: &dyn crate::contract::Entry,
    name: &str,
    m: &clap::ArgMatches,
) -> Result<(crate::config::RunConfig, Arc<dyn Workload>)> {
    let mut workload = None;
    let cfg = crate::config::RunConfig::resolve(a, m, |cx, spec| {
        let w = entry.resolve(name, m, cx)?;
        if cx.shard.is_some()
            && (w.partition().is_none() || (w.load_partition().is_none() && !w.loads_in_run()))
        {
            return Err(Error::usage(format!(
                "--shard: {} cannot be split between the shards of a fleet (its work would run N times over); run it from one process",
                w.name()
            )));
        }
        crate::contract::shard::refuse_unsharded(w.as_ref(), spec)?;
        let resolved = crate::config::Resolved {
            name: w.name().to_string(),
            operations: w.operations(),
            options: w.options(),
            previews: w.preview().is_some(),
        };
        workload = Some(w);
        Ok(resolved)
    })?;
    let workload = workload.expect("the config resolves the workload before it returns");
    Ok((cfg, workload))
}

// The live outputs see a workload through its kinds and interval figures only.
impl<W: Workload + ?Sized> crate::live::Figures for W {
    fn phase_kinds(&self) -> Vec<&'static str> {
        self.kinds()
    }
    fn figures(&self, kinds: &[crate::model::KindTick], len_s: f64) -> Vec<(String, f64)> {
        self.interval_figures(kinds, len_s)
    }
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

pub(crate) fn warn_password(spec: &TargetSpec) {
    if spec.password_in_url {
        let var = if spec.dbms == Dbms::Postgres {
            "PGPASSWORD"
        } else {
            "MYSQL_PWD"
        };
        eprintln!("warning: a password on the command line can be seen by other users of this machine; set {var} instead");
    }
}

/// The engine to create tables with (validated against the server), if one was asked for.
pub(crate) async fn engine(conn: &mut Conn, wanted: Option<&str>) -> Result<Option<String>> {
    match wanted {
        Some(e) => crate::contract::resolve_engine(conn, e).await.map(Some),
        None => Ok(None),
    }
}

pub(crate) fn load_options(
    spec: &TargetSpec,
    connections: usize,
    method: LoadMethod,
    table_options: &str,
) -> LoadOptions {
    LoadOptions {
        table_options: table_options.trim().to_string(),
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
        live: Arc::new(Live::default()),
        journal: Default::default(),
        shard: None,
    }
}

/// A workload's prepare that a signal ends within moments, also while the admin connection
/// builds an index or analyzes a table after the load (the loader itself stops on its own).
pub(crate) async fn prepare_interruptibly(
    w: &dyn Workload,
    conn: &mut Conn,
    spec: &TargetSpec,
    engine: Option<&str>,
    opts: &LoadOptions,
    fleet: Option<&dyn FleetLoad>,
) -> Result<Vec<LoadStats>> {
    let cx = PrepareCx {
        conn,
        target: spec,
        engine,
        load: opts,
        fleet,
    };
    match crate::load::unless_interrupted(w.prepare(cx)).await {
        Some(r) => r,
        None => Err(Error {
            failure: Failure::Interrupted(interrupt::signal().unwrap_or(libc::SIGINT)),
            message: "interrupted while preparing the tables".into(),
        }),
    }
}

/// Each table loaded since `before` carries what other processes used meanwhile, and whether
/// that disturbed it (the same rule as a measured run's).
fn mark_load_disturbance(
    mut loaded: Vec<LoadStats>,
    before: &HostSample,
    server_pid: Option<u32>,
    bound: f64,
) -> Vec<LoadStats> {
    if loaded.is_empty() {
        return loaded;
    }
    let after = HostSample::now(server_pid);
    let elapsed = after.at.duration_since(before.at).as_secs_f64();
    let others = after.host_cpu_since(before).others_cpus;
    let disturbed = disturbed_above(others, elapsed, bound);
    for l in &mut loaded {
        l.others_cpus = Some(others);
        l.disturbed = disturbed;
    }
    loaded
}

pub(crate) fn report_loads(loaded: &[LoadStats]) {
    for s in loaded {
        eprintln!(
            "loaded {} rows into {} in {:.1} s ({:.0} rows/s, {} connection(s))",
            s.rows, s.table, s.elapsed_s, s.rows_per_s, s.connections
        );
    }
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// A new folder for this invocation's results: DIR/YYYYMMDDTHHMMSS-workload-dbms[-n].
fn result_folder(dir: &str, workload: &str, dbms: Dbms) -> Result<PathBuf> {
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
    if let Some(w) = listen_queue_warning(conn, need - 1, cfg.connect_timeout_s).await {
        eprintln!("{w}");
    }
    Ok(limit)
}

/// A warning when the server's listen queue is shorter than the run's connections: they
/// still open (paced, retried: runner/connect.rs), but may take longer. MariaDB's back_log,
/// capped by the kernel's net.core.somaxconn (PostgreSQL's queue is twice max_connections,
/// which the check above already made large enough).
async fn listen_queue_warning(
    conn: &mut Conn,
    connections: u64,
    connect_timeout_s: f64,
) -> Option<String> {
    let back_log = match conn.dbms() {
        Dbms::Mysql => conn
            .query_one("SELECT @@back_log")
            .await
            .ok()
            .flatten()
            .and_then(|s| s.parse::<u64>().ok()),
        _ => None,
    };
    let somaxconn = crate::runner::connect::somaxconn();
    let queue = match (back_log, somaxconn) {
        (Some(b), Some(k)) => b.min(k),
        (Some(b), None) => b,
        (None, Some(k)) => k,
        (None, None) => return None,
    };
    (queue < connections).then(|| {
        format!(
            "warning: the server's listen queue holds {queue} connects (back_log {}, net.core.somaxconn {}), fewer than the {connections} connections of this run: they open {} at a time and a refused connect is retried for up to {connect_timeout_s} s (--connect-timeout); raise back_log to open them faster",
            back_log.map_or("-".into(), |v| v.to_string()),
            somaxconn.map_or("?".into(), |v| v.to_string()),
            crate::runner::connect::WINDOW,
        )
    })
}

/// `enginebench run`: the whole lifecycle of one run of `cfg`'s workload.
pub fn run(
    a: &RunArgs,
    mut cfg: RunConfig,
    workload: Arc<dyn Workload>,
    owners: &[&'static dyn report::SectionOwner],
) -> Result<ExitCode> {
    // A --catalog that cannot name one is refused before anything runs.
    a.catalog.location()?;
    if let Some(text) = workload.preview() {
        print!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    interrupt::install();
    // Before the server and the load: a metrics address that cannot be used ends the command
    // at once (exit 2), and the load is seen live too.
    let live = Live::for_run(&crate::live::Settings {
        workload: cfg.workload.clone(),
        dbms: cfg.target_spec.dbms.name(),
        metrics_addr: cfg.metrics_addr.clone(),
        terminal: matches!(a.format, RunFormat::Table | RunFormat::Csv),
        jsonl: a.format == RunFormat::Jsonl,
        live_report: cfg.live_report,
        interval: cfg.report_interval(),
        stepped: !cfg.steps.is_empty(),
    })?;
    let server = match &cfg.server {
        Some(s) => {
            eprintln!(
                "starting a private {} server (profile {})",
                s.topology.name(s.kind),
                s.profile
            );
            // Room for the run's connections, unless the user sized it (--server-opt).
            let mut s = s.clone();
            s.fit_connections = cfg.threads.iter().copied().max().unwrap_or(1);
            let sv = Cluster::start(&s)?;
            let pids: Vec<String> = sv.nodes.iter().map(|n| n.pid.to_string()).collect();
            let ports: Vec<String> = sv.nodes.iter().map(|n| n.port.to_string()).collect();
            eprintln!(
                "{} server pid {} on 127.0.0.1:{}, folder {}{}",
                sv.topology.name(sv.kind),
                pids.join(","),
                ports.join(","),
                sv.root.display(),
                if s.keep_datadir {
                    " (kept)"
                } else {
                    " (removed afterwards)"
                }
            );
            // A cluster's URL names every node: connections spread over them.
            let statements = cfg.target_spec.statements;
            cfg.target_spec = TargetSpec::parse(&sv.url, |_| None).map_err(Error::usage)?;
            cfg.target_spec.statements = statements;
            cfg.target = sv.url.clone();
            Some(sv)
        }
        None => None,
    };
    let first = server.as_ref().and_then(|c| c.first());
    let out = run_on(a, &cfg, workload, first, server.as_ref(), owners, &live);
    // Stop the throwaway server whatever happened; a server that died is named in the error.
    let out = out.map_err(|e| name_dead_server(e, first));
    if let Some(mut sv) = server {
        let dead = sv.dead_nodes();
        if !dead.is_empty() {
            // Keep the log of a server that died: it says why.
            sv.keep_folder();
            let which = if sv.topology.is_single() {
                "the server ended on its own; its folder is kept for the log".to_string()
            } else {
                let dead: Vec<String> = dead.iter().map(|n| n.to_string()).collect();
                format!(
                    "node {} of the cluster ended on its own; the folders are kept for the logs",
                    dead.join(", ")
                )
            };
            eprintln!("{which}: {}", sv.root.display());
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

#[allow(clippy::too_many_arguments)]
fn run_on(
    a: &RunArgs,
    cfg: &RunConfig,
    workload: Arc<dyn Workload>,
    server: Option<&Server>,
    cluster: Option<&Cluster>,
    owners: &[&'static dyn report::SectionOwner],
    live: &Live,
) -> Result<ExitCode> {
    let spec = cfg.target_spec.clone();
    warn_password(&spec);
    pin(cfg, server.map(|s| s.pid).or(cfg.server_pid))?;
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
    // A third source of the server's pid, after --server and --server-pid: the server on this
    // machine behind the admin connection, so every run records the server's CPU per op.
    let (server_pid, found_by, lookup_note) = match (server, cfg.server_pid) {
        (Some(sv), _) => (Some(sv.pid), Some(FoundBy::Managed), None),
        (None, Some(pid)) => (Some(pid), Some(FoundBy::ServerPidFlag), None),
        (None, None) => match peer::find_server(&admin, &spec) {
            Lookup::Found { pid, by } => (Some(pid), Some(by), None),
            Lookup::NotFound(why) => (None, None, Some(why)),
            Lookup::NotLocal => (None, None, None),
        },
    };
    let settings = rt.block_on(capture::settings(&mut admin));
    let nodes = crate::runner::admin::node_infos(&rt, &spec, &cfg.faults(), &version, &settings);
    say_method(a, cfg, workload.as_ref());

    let (opts, loaded, load_interrupted) = load_tables(
        cfg,
        workload.as_ref(),
        &rt,
        &mut admin,
        engine.as_deref(),
        server_pid,
        live,
    )?;
    let main_table = workload.main_table().to_string();
    let table_engine = match () {
        // The admin connection may be mid-statement (an index build it abandoned).
        _ if load_interrupted.is_some() => cfg.engine.clone().unwrap_or_default(),
        // No single benchmark table (each format or engine has its own).
        _ if main_table.is_empty() => String::new(),
        _ => rt.block_on(crate::contract::table_engine(&mut admin, &main_table))?,
    };

    let folder = result_folder(&cfg.results_dir, &cfg.workload, spec.dbms)?;
    let mut notes = notes(cfg, workload.as_ref());
    notes.extend(lookup_note);
    notes.extend(client_note(&admin));
    let doc = ResultDoc {
        schema_version: report::SCHEMA_VERSION,
        tool: ToolInfo {
            name: "enginebench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        status: Status::Running,
        started_at: now_rfc3339(),
        config: serde_json::to_value(cfg).expect("config serializes"),
        target: TargetInfo {
            dbms: spec.dbms.name().into(),
            url: spec.display.clone(),
            server_version: version,
            engine: table_engine.clone(),
            max_connections: max_conn,
            settings: settings.values,
            settings_non_default: settings.non_default,
            server: server_info(cfg, server, cluster, server_pid, found_by),
            nodes,
        },
        host: HostFacts::collect(),
        load: loaded,
        notes,
        client: client_info(&admin),
        ..ResultDoc::default()
    };
    let settings = bench::settings_of(cfg);
    let mut h = Bench {
        cfg,
        settings: &settings,
        workload: workload.clone(),
        rt: &rt,
        admin: Admin::new(admin, spec.clone(), cfg.faults()),
        load: opts,
        engine,
        doc,
        path: folder.join("result.json"),
        server_pid,
        table_engine,
        live: live.clone(),
        sweep_asked: false,
    };
    h.save()?;
    say_plan(cfg, workload.as_ref(), &folder);

    let outcome = match load_interrupted {
        Some(e) => {
            h.doc.notes.push(interrupt::load_note());
            Err(e)
        }
        None => {
            // Reads sent to replicas need the tables a load just wrote on the primary.
            h.admin
                .wait_replicas_caught_up(&rt, std::time::Duration::from_secs(60));
            // A workload without phases of its own asks for the shared sweep.
            workload
                .run(&mut h as &mut dyn Harness)
                .and_then(|()| match h.sweep_asked {
                    true => h.sweep(),
                    false => Ok(()),
                })
        }
    }
    .map_err(|e| name_dead_server(e, server));
    steps::note_unapplied(&mut h);
    if let Some(c) = cluster {
        let notes = NodeInfo::mark_exited(&mut h.doc.target.nodes, &c.dead_nodes());
        h.doc.notes.extend(notes);
    }
    let done = finish(&mut h, outcome, a.format, &a.catalog, owners);
    h.admin.close(&rt);
    done
}

/// The loader's options, and the workload's tables prepared unless it loads during the run:
/// what was loaded (each table marked when others disturbed it), and the signal's error when
/// one ended the load (the result is still written).
fn load_tables(
    cfg: &RunConfig,
    workload: &dyn Workload,
    rt: &tokio::runtime::Runtime,
    admin: &mut Conn,
    engine: Option<&str>,
    server_pid: Option<u32>,
    live: &Live,
) -> Result<(LoadOptions, Vec<LoadStats>, Option<Error>)> {
    let spec = &cfg.target_spec;
    let mut opts = load_options(
        spec,
        cfg.load_connections,
        cfg.load_method,
        &cfg.table_options,
    );
    opts.live = Arc::new(live.clone());
    // A fleet's shards load missing tables together (shard 0 creates them), or, with
    // --start-at, find them loaded: never N loads of the same tables.
    let load_fleet = cfg
        .fleet
        .as_ref()
        .map(|f| crate::fleet::LoadFleet::of(f, spec));
    opts.shard = cfg.fleet.as_ref().map(|f| f.shard);
    // What other processes used while the tables loaded: a load time is a measurement too.
    let before_load = HostSample::now(server_pid);
    let loaded = if workload.loads_in_run() {
        Ok(Vec::new())
    } else {
        let r = rt.block_on(prepare_interruptibly(
            workload,
            admin,
            spec,
            engine,
            &opts,
            load_fleet.as_ref().map(|f| f as &dyn FleetLoad),
        ));
        if let (Err(_), Some(lf)) = (&r, &load_fleet) {
            rt.block_on(lf.failed());
        }
        r
    };
    drop(load_fleet);
    // Interrupted while loading: the result file is still written (the loads so far, no
    // points) before the tool exits 130 / 143; other load failures end the command here.
    let (loaded, load_interrupted) = match loaded {
        Ok(l) => (l, None),
        Err(e) if matches!(e.failure, Failure::Interrupted(_)) => (opts.journal.entries(), Some(e)),
        Err(e) => return Err(e),
    };
    let loaded = mark_load_disturbance(loaded, &before_load, server_pid, cfg.disturbed_above_cpus);
    report_loads(&loaded);
    Ok((opts, loaded, load_interrupted))
}

/// `--pin`: the client (the calling thread; every client thread started later inherits the
/// mask) and the server's process tree on their CPUs.
fn pin(cfg: &RunConfig, server_pid: Option<u32>) -> Result<()> {
    let Some(pin) = &cfg.pin else {
        return Ok(());
    };
    if let Some(c) = &pin.client_cpus {
        proc::set_affinity(0, c).map_err(|e| Error::usage(format!("--pin client: {e}")))?;
    }
    if let (Some(c), Some(pid)) = (&pin.server_cpus, server_pid) {
        proc::pin_tree(pid, c).map_err(|e| Error::usage(format!("--pin server: {e}")))?;
    }
    Ok(())
}

/// One line on the method when the user gave no sizes of their own.
fn say_method(a: &RunArgs, cfg: &RunConfig, workload: &dyn Workload) {
    if workload.plan_line().is_some() {
        // The workload says what it will run (e.g. tests per operation instead of timed runs).
    } else if cfg.method == crate::cli::Method::Classic {
        eprintln!(
            "classic method: the 2007 report's settings; {} per engine",
            human(cfg.estimate())
        );
    } else if a.threads.is_none() && a.duration.is_none() && a.warmup.is_none() && a.runs.is_none()
    {
        eprintln!("quick method: a small table and short runs for a first look (use --method classic for the report's method)");
    }
}

/// The result's server part: a managed server (its profile and options file) or one named by
/// its pid.
fn server_info(
    cfg: &RunConfig,
    server: Option<&Server>,
    cluster: Option<&Cluster>,
    server_pid: Option<u32>,
    found_by: Option<FoundBy>,
) -> Option<ServerInfo> {
    let pinned_cpus = cfg.pin.as_ref().and_then(|p| p.server_cpus.clone());
    let found_by = found_by.map(|f| f.name().to_string());
    match (server, server_pid) {
        (Some(sv), _) => Some(ServerInfo {
            managed: true,
            profile: Some(match cluster {
                Some(c) if !c.topology.is_single() => c.label(),
                _ => format!("{}:{}", sv.kind.name(), sv.profile),
            }),
            pid: Some(sv.pid),
            options_file: Some(sv.options_text.clone()),
            pinned_cpus,
            found_by,
        }),
        (None, Some(pid)) => Some(ServerInfo {
            managed: false,
            profile: cfg.server_label.clone(),
            pid: Some(pid),
            options_file: None,
            pinned_cpus,
            found_by,
        }),
        _ => None,
    }
}

/// What the run is about to do, and where its results go.
fn say_plan(cfg: &RunConfig, workload: &dyn Workload, folder: &Path) {
    match workload.plan_line() {
        Some(line) => eprintln!("{line}; results in {}", folder.display()),
        None => eprintln!(
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
        ),
    }
}

/// Status and exit code from the outcome; the result is on disk before anything is printed.
fn finish(
    h: &mut Bench,
    outcome: Result<()>,
    format: RunFormat,
    catalog: &crate::cli::CatalogArgs,
    owners: &[&'static dyn report::SectionOwner],
) -> Result<ExitCode> {
    let spec = &h.cfg.target_spec;
    // A failure after a signal is the signal's doing (a statement cut short, a server stopped
    // by the same Ctrl-C): the run was interrupted, not failed.
    let outcome = outcome.map_err(|e| match (interrupt::signal(), &e.failure) {
        (Some(sig), Failure::Run | Failure::Usage) => Error {
            failure: Failure::Interrupted(sig),
            message: e.message,
        },
        _ => e,
    });
    h.doc.finished_at = Some(now_rfc3339());
    let code_u8: u8 = match &outcome {
        Ok(()) if interrupt::signal().is_some() => {
            h.doc.status = Status::Interrupted;
            h.doc.error = Some("interrupted by a signal; the points that finished are kept".into());
            h.doc.notes.push(interrupt::note());
            128 + interrupt::signal().unwrap_or(2) as u8
        }
        Ok(()) => {
            h.doc.status = Status::Complete;
            0
        }
        Err(e) => {
            h.doc.status = if matches!(e.failure, Failure::Interrupted(_)) {
                let note = interrupt::note();
                if !h
                    .doc
                    .notes
                    .iter()
                    .any(|n| n.starts_with("This run was interrupted"))
                {
                    h.doc.notes.push(note);
                }
                Status::Interrupted
            } else {
                Status::Failed
            };
            h.doc.error = Some(spec.scrub(&e.message));
            e.exit_code()
        }
    };
    // Results first: whatever happened, what was measured is on disk before anything is reported.
    h.save()?;
    let folder = h.path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let html = folder.join("report.html");
    if let Err(e) = report::json::write_text_atomic(
        &html,
        &report::html::render(std::slice::from_ref(&h.doc), owners),
    ) {
        eprintln!("warning: cannot write {}: {e}", html.display());
    }
    // A signal that arrived while the files were written: every point had finished (the
    // status stays complete), but the run did not end normally: say so and exit 128 + N.
    let mut code_u8 = code_u8;
    if let (Some(sig), Status::Complete) = (interrupt::signal(), h.doc.status) {
        h.doc.notes.push(format!(
            "{} arrived while the result files were written: every point finished; report.html may be missing.",
            interrupt::name(sig)
        ));
        h.save()?;
        code_u8 = 128 + sig as u8;
    }
    let code = ExitCode::from(code_u8);
    match format {
        RunFormat::Table => print!(
            "{}",
            report::terminal::render(&h.doc, h.cfg.aggregate, owners)
        ),
        RunFormat::Json => println!("{}", report::json::to_string(&h.doc)),
        RunFormat::Csv => print!("{}", report::csv::to_string(&h.doc)),
        // The intervals went out while running; the last line says where the result is.
        RunFormat::Jsonl => {}
    }
    eprintln!("result: {}", h.path.display());
    // After the result is complete on disk: the catalog gets the final file, and a catalog
    // that cannot be written costs the run nothing (one line says why).
    if let Ok(loc) = catalog.location() {
        crate::catalog::record_file(&loc, &h.path, owners);
    }
    let exit = match &outcome {
        Ok(()) => code_u8,
        Err(e) => e.exit_code(),
    };
    let status = serde_json::to_value(h.doc.status).expect("a status serializes");
    h.live
        .finish(status.as_str().unwrap_or("failed"), &h.path, exit);
    outcome.map(|()| code)
}

fn notes(cfg: &RunConfig, workload: &dyn Workload) -> Vec<String> {
    let mut n = vec![
        "A measured run counts every operation started before its deadline; elapsed_s runs from the start of the run to the end of its last operation.".to_string(),
        "client_cpu is the whole client process (all threads) over the run window, from getrusage.".to_string(),
    ];
    if cfg.target_spec.dbms == Dbms::Postgres {
        n.push("PostgreSQL statistics counters are flushed lazily by the server; their per-run deltas are approximate.".into());
    }
    n.extend(workload.notes(&cfg.target_spec));
    if let Some(keys) = workload.shard_keys() {
        n.extend(crate::contract::shard::note(&cfg.target_spec, &keys));
    }
    if let (Some(f), Some(how)) = (&cfg.fleet, workload.partition()) {
        n.push(crate::fleet::shard_note(f, &how));
    }
    n
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
