//! `enginebench run sqlbench`: resolve the options, start a private server if asked, run the
//! selected operations on each engine in turn, save the result after every group, print the
//! table.

use std::process::ExitCode;

use serde::Serialize;

use super::exec::{EngineRun, OpStatus, Runner, Section, Totals};
use super::Spec;
use crate::cli::{Format, RunArgs};
use crate::error::{Context, Error, Failure, Result};
use crate::measure::host::HostFacts;
use crate::report::{self, ResultDoc, ServerInfo, Status, TargetInfo, ToolInfo};
use crate::runner::interrupt;
use crate::server::{capture, Server, ServerSpec};
use crate::db::{Conn, DbError, Dbms, TargetSpec};

/// The resolved configuration, serialized into the result.
#[derive(Debug, Clone, Serialize)]
struct Config {
    workload: &'static str,
    target: String,
    #[serde(skip)]
    target_spec: TargetSpec,
    /// `--engine` (one engine) when `--engines` is not given.
    engine: Option<String>,
    /// The selected operations, in run order.
    operations: Vec<String>,
    /// scale, engines, and the planned tests per selected operation.
    workload_options: Options,
    results_dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<ServerSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_pid: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
struct Options {
    #[serde(flatten)]
    spec: Spec,
    plan: Vec<super::Planned>,
}

/// Flags of `run` that mean nothing to a count-based sequential suite.
fn reject_unused(a: &RunArgs) -> Result<()> {
    let unused = [
        (a.threads.is_some(), "--threads"),
        (a.duration.is_some(), "--duration"),
        (a.warmup.is_some(), "--warmup"),
        (a.runs.is_some(), "--runs"),
        (a.rate.is_some(), "--rate"),
        (a.queries.is_some(), "--queries (use --ops)"),
        (a.weights.is_some(), "--weights"),
        (a.isolation.is_some(), "--isolation"),
        (a.data.table_size.is_some(), "--table-size"),
        (a.data.warehouses.is_some(), "--warehouses"),
        (a.server.pin.is_some(), "--pin"),
    ];
    for (given, flag) in unused {
        if given {
            return Err(Error::usage(format!(
                "{flag} does not apply to sqlbench: it runs a fixed number of tests per operation, one after the other (size it with --scale)"
            )));
        }
    }
    Ok(())
}

fn resolve(a: &RunArgs) -> Result<Config> {
    reject_unused(a)?;
    let s = &a.sqlbench;
    let spec = Spec::parse(
        s.scale,
        s.ops.as_deref(),
        s.groups.as_deref(),
        s.engines.as_deref(),
    )?;
    let sa = &a.server;
    let server = match &sa.server {
        Some(x) => Some(ServerSpec::parse(
            x,
            &sa.server_opt,
            sa.datadir.as_deref(),
            sa.keep_datadir,
        )?),
        None => None,
    };
    let target_spec = match &server {
        Some(sv) => {
            let mut t = a.target.clone();
            t.target = Some(
                match sv.kind {
                    crate::server::Kind::Mariadb => {
                        "mysql://root@localhost/enginebench?socket=/pending"
                    }
                    crate::server::Kind::Postgres => {
                        "postgres://postgres@localhost/enginebench?host=/pending"
                    }
                }
                .into(),
            );
            crate::config::resolve_target(&t)?
        }
        None => crate::config::resolve_target(&a.target)?,
    };
    if !spec.engines.is_empty() {
        if target_spec.dbms != Dbms::Mysql {
            return Err(Error::usage(format!(
                "--engines applies to MySQL/MariaDB targets only; {} has no storage-engine choice",
                target_spec.dbms.name()
            )));
        }
        if a.target.engine.is_some() {
            return Err(Error::usage("give either --engine or --engines, not both"));
        }
    }
    if let Some(pid) = sa.server_pid {
        if !crate::measure::proc::alive(pid) {
            return Err(Error::usage(format!("--server-pid: no process {pid}")));
        }
    }
    Ok(Config {
        workload: super::NAME,
        target: target_spec.display.clone(),
        target_spec,
        engine: a.target.engine.clone(),
        operations: spec.operations.clone(),
        workload_options: Options {
            plan: spec.plan(),
            spec,
        },
        results_dir: a.results_dir.clone(),
        server,
        server_pid: sa.server_pid,
    })
}

pub fn run(a: &RunArgs) -> Result<ExitCode> {
    let mut cfg = resolve(a)?;
    if a.sqlbench.dry_run {
        print!("{}", super::dry_run_text(&cfg.workload_options.spec));
        return Ok(ExitCode::SUCCESS);
    }
    interrupt::install();
    let server = match &cfg.server {
        Some(s) => {
            eprintln!(
                "starting a private {} server (profile {})",
                s.kind.name(),
                s.profile
            );
            let sv = Server::start(s)?;
            cfg.target_spec = TargetSpec::parse(&sv.url, |_| None).map_err(Error::usage)?;
            cfg.target = sv.url.clone();
            Some(sv)
        }
        None => None,
    };
    let out = run_on(a, &cfg, server.as_ref());
    let out = match (&server, out) {
        (Some(sv), Err(e)) if !sv.alive() && !matches!(e.failure, Failure::Interrupted(_)) => {
            Err(Error::run(format!(
                "the {} ended during the run: {}",
                sv.describe(),
                e.message
            )))
        }
        (_, o) => o,
    };
    if let Some(mut sv) = server {
        if sv.pid != 0 && !sv.alive() {
            sv.keep_folder();
        }
        let stopped = sv.stop();
        if cfg.server.as_ref().is_some_and(|s| s.keep_datadir) {
            eprintln!("server folder kept: {}", sv.root.display());
        }
        stopped?;
    }
    out
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

async fn connect(spec: &TargetSpec) -> Result<Conn> {
    Conn::connect(spec)
        .await
        .map_err(|e| Error::usage(format!("cannot connect to {}: {}", spec.display, e.message)))
}

/// (engine as the server names it, whether it has transactions) for the tables to create.
async fn engine_facts(conn: &mut Conn, wanted: Option<&str>) -> Result<(String, bool)> {
    match conn.dbms() {
        Dbms::Postgres => Ok(("heap".into(), true)),
        Dbms::Sqlite => Ok(("sqlite-btree".into(), true)),
        Dbms::Mysql => {
            let name = match wanted {
                Some(w) => crate::workload::resolve_engine(conn, w).await?,
                None => conn
                    .query_one("SELECT @@default_storage_engine")
                    .await
                    .ctx("reading the default storage engine")?
                    .unwrap_or_default(),
            };
            // information_schema.ENGINES says whether the engine supports transactions
            // (InnoDB, RocksDB: YES; MyISAM, Aria, MEMORY: NO).
            let trx = conn
                .query_one(&format!(
                    "SELECT TRANSACTIONS FROM information_schema.ENGINES WHERE ENGINE = '{name}'"
                ))
                .await
                .ctx("reading the engine's transaction support")?;
            Ok((name, trx.as_deref() == Some("YES")))
        }
    }
}

fn run_on(a: &RunArgs, cfg: &Config, server: Option<&Server>) -> Result<ExitCode> {
    let spec = &cfg.target_spec;
    let server_pid = server.map(|s| s.pid).or(cfg.server_pid);
    let rt = runtime();
    let mut admin = rt.block_on(connect(spec))?;
    let version = rt
        .block_on(admin.server_version())
        .ctx("reading the server version")?;
    let settings = rt.block_on(capture::settings(&mut admin));
    // Engines to run: --engines, else --engine, else the server's default.
    let wanted: Vec<Option<String>> = if cfg.workload_options.spec.engines.is_empty() {
        vec![cfg.engine.clone()]
    } else {
        cfg.workload_options
            .spec
            .engines
            .iter()
            .cloned()
            .map(Some)
            .collect()
    };
    let mut engines = Vec::new();
    for w in &wanted {
        engines.push(rt.block_on(engine_facts(&mut admin, w.as_deref()))?);
    }
    let folder = crate::commands::result_folder(&cfg.results_dir, super::NAME, spec.dbms)?;
    let path = folder.join("result.json");
    let mut notes = cfg.workload_options.spec.notes();
    if let Conn::Mysql(m) = &admin {
        notes.push(format!("MySQL client: {}.", m.driver()));
    }
    let mut doc = ResultDoc {
        schema_version: report::SCHEMA_VERSION,
        tool: ToolInfo {
            name: "enginebench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        status: Status::Running,
        error: None,
        started_at: crate::commands::now_rfc3339(),
        finished_at: None,
        config: serde_json::to_value(cfg).expect("config serializes"),
        target: TargetInfo {
            dbms: spec.dbms.name().into(),
            url: spec.display.clone(),
            server_version: version,
            engine: engines
                .iter()
                .map(|e| e.0.clone())
                .collect::<Vec<_>>()
                .join(","),
            max_connections: None,
            settings: settings.values,
            settings_non_default: settings.non_default,
            server: match (server, server_pid) {
                (Some(sv), _) => Some(ServerInfo {
                    managed: true,
                    profile: Some(format!("{}:{}", sv.kind.name(), sv.profile)),
                    pid: Some(sv.pid),
                    options_file: Some(sv.options_text.clone()),
                    pinned_cpus: None,
                }),
                (None, Some(pid)) => Some(ServerInfo {
                    managed: false,
                    profile: a.server.server_label.clone(),
                    pid: Some(pid),
                    options_file: None,
                    pinned_cpus: None,
                }),
                _ => None,
            },
        },
        host: HostFacts::collect(),
        load: Vec::new(),
        points: Vec::new(),
        notes,
        sqlbench: Some(Section {
            scale: cfg.workload_options.spec.scale,
            engines: Vec::new(),
        }),
        compression: None,
        schema_change: None,
    };
    let save = |doc: &ResultDoc| report::json::write_atomic(&path, doc);
    save(&doc)?;
    let plan_tests: u64 = cfg.workload_options.plan.iter().map(|p| p.tests).sum();
    eprintln!(
        "sqlbench: {} operation(s), {} tests per engine (--scale {}), engine(s) {}; results in {}",
        cfg.workload_options.plan.len(),
        plan_tests,
        cfg.workload_options.spec.scale,
        engines
            .iter()
            .map(|e| e.0.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        folder.display()
    );
    let mut outcome: Result<()> = Ok(());
    for (engine, transactional) in &engines {
        if interrupt::signal().is_some() {
            break;
        }
        eprintln!(
            "== {engine} ({}transactional)",
            if *transactional { "" } else { "not " }
        );
        let clause = match spec.dbms {
            Dbms::Mysql => format!("ENGINE={engine}"),
            _ => String::new(),
        };
        let res = rt.block_on(run_engine(
            cfg,
            &mut doc,
            &path,
            engine,
            *transactional,
            clause,
            server_pid,
        ));
        if let Err(e) = res {
            outcome = Err(e);
            break;
        }
    }
    doc.finished_at = Some(crate::commands::now_rfc3339());
    let code = match &outcome {
        Ok(()) if interrupt::signal().is_some() => {
            doc.status = Status::Interrupted;
            doc.error =
                Some("interrupted by a signal; the operations that finished are kept".into());
            ExitCode::from(128 + interrupt::signal().unwrap_or(2) as u8)
        }
        Ok(()) => {
            doc.status = Status::Complete;
            ExitCode::SUCCESS
        }
        Err(e) => {
            doc.status = Status::Failed;
            doc.error = Some(spec.scrub(&e.message));
            ExitCode::from(e.exit_code())
        }
    };
    save(&doc)?;
    match a.format {
        Format::Json => println!("{}", report::json::to_string(&doc)),
        _ => print!("{}", super::table::render(std::slice::from_ref(&doc))),
    }
    eprintln!("result: {}", path.display());
    outcome.map(|()| code)
}

/// The suite on one engine; the result is saved after every group.
async fn run_engine(
    cfg: &Config,
    doc: &mut ResultDoc,
    path: &std::path::Path,
    engine: &str,
    transactional: bool,
    clause: String,
    server_pid: Option<u32>,
) -> Result<()> {
    let spec = &cfg.target_spec;
    let conn = connect(spec).await?;
    // Counters are read on their own connection, so that reading them is not in the work
    // connection's session statistics. SQLite has none.
    let admin = match spec.dbms {
        Dbms::Sqlite => None,
        _ => Some(connect(spec).await?),
    };
    let mut r = Runner::new(
        conn,
        admin,
        &cfg.workload_options.spec,
        spec,
        clause,
        transactional,
        server_pid,
    );
    let idx = doc.sqlbench.as_ref().map_or(0, |s| s.engines.len());
    let dbms = spec.dbms.name().to_string();
    let publish = |doc: &mut ResultDoc, r: &Runner<'_>| {
        let s = doc.sqlbench.get_or_insert_with(|| Section {
            scale: cfg.workload_options.spec.scale,
            engines: Vec::new(),
        });
        let run = EngineRun {
            engine: engine.to_string(),
            dbms: dbms.clone(),
            transactions: transactional,
            ops: r.results.clone(),
            totals: Totals::of(&r.results),
        };
        if s.engines.len() > idx {
            s.engines[idx] = run;
        } else {
            s.engines.push(run);
        }
    };
    let mut failure: Option<DbError> = None;
    for group in super::GROUPS {
        if interrupt::signal().is_some() {
            break;
        }
        let res = match group {
            "alter" => super::misc::alter(&mut r).await,
            "atis" => super::atis::atis(&mut r).await,
            "big-tables" => super::misc::big_tables(&mut r).await,
            "connect" => super::misc::connect(&mut r).await,
            "create" => super::misc::create(&mut r).await,
            "insert" => super::insert::insert(&mut r).await,
            "select" => super::select::select(&mut r).await,
            "transactions" => super::trx::transactions(&mut r).await,
            _ => super::wisconsin::wisconsin(&mut r).await,
        };
        if let Err(e) = res {
            if e.class == crate::db::ErrorClass::ConnectionLost {
                failure = Some(e);
                break;
            }
            // The group's setup failed (a statement the engine refuses): its operations not
            // yet recorded fail with that message; the other groups still run.
            let msg = spec.scrub(&e.message);
            eprintln!("sqlbench {group} on {engine}: {msg}");
            let _ = r.conn.execute("ROLLBACK").await;
            for p in cfg
                .workload_options
                .plan
                .iter()
                .filter(|p| p.group == group)
            {
                if !r.results.iter().any(|o| o.name == p.name) {
                    r.skip(&p.name, OpStatus::Failed, &msg);
                }
            }
        }
        publish(doc, &r);
        report::json::write_atomic(path, doc)?;
    }
    // Every selected operation has a row: those not reached say why.
    let why = match &failure {
        Some(e) => format!("not reached: {}", spec.scrub(&e.message)),
        None => "not reached: interrupted".to_string(),
    };
    for p in &cfg.workload_options.plan {
        if !r.results.iter().any(|o| o.name == p.name) {
            r.skip(&p.name, OpStatus::NotRun, &why);
        }
    }
    // Keep the run order of the plan.
    let order: Vec<&str> = cfg
        .workload_options
        .plan
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    r.results.sort_by_key(|o| {
        order
            .iter()
            .position(|n| *n == o.name)
            .unwrap_or(usize::MAX)
    });
    publish(doc, &r);
    report::json::write_atomic(path, doc)?;
    match failure {
        Some(e) => Err(Error::run(format!(
            "sqlbench on {engine}: {}",
            spec.scrub(&e.message)
        ))),
        None => Ok(()),
    }
}
