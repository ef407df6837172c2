//! The subcommands: each finds its workload in the registry, resolves it and hands it to the
//! harness (run) or calls its contract (prepare, cleanup, check); none knows any workload.

use std::path::Path;
use std::process::ExitCode;

use crate::cli::{
    CheckArgs, CleanupArgs, CompareArgs, CompareFormat, PrepareArgs, ReportArgs, ReportFormat,
    RunArgs, WorkloadArgv,
};
use crate::config;
use crate::contract::{Purpose, ResolveCx, Shape, Workload};
use crate::error::{Error, Result};
use crate::harness::{self, connect, runtime, warn_password};
use crate::interrupt;
use crate::registry::{parse_workload, Registry};
use crate::report;
use crate::server::Server;

/// Resolve the workload of a command other than `run` (its options; the run's shape is unused).
fn resolve_for(
    p: &crate::contract::parse::Parsed<impl Sized>,
    purpose: Purpose,
    dbms: crate::db::Dbms,
    method: crate::cli::Method,
    seed: u64,
    engine: Option<&str>,
) -> Result<std::sync::Arc<dyn Workload>> {
    let mut cx = ResolveCx {
        purpose,
        dbms,
        method,
        seed,
        engine: engine.map(str::to_string),
        shape: Shape {
            threads: vec![1],
            warmup: std::time::Duration::ZERO,
            duration: std::time::Duration::from_secs(1),
            runs: 1,
            size: 0,
            sched_batch: false,
            given: Default::default(),
        },
        shard: None,
    };
    p.entry.resolve(&p.name, &p.matches, &mut cx)
}

pub fn prepare(argv: &WorkloadArgv, reg: &Registry) -> Result<ExitCode> {
    let Some(p) = parse_workload::<PrepareArgs>(reg, "prepare", &argv.args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let a = &p.common;
    let spec = config::resolve_target(&a.target)?;
    if a.data.load_connections == 0 {
        return Err(Error::usage("--load-connections: must be at least 1"));
    }
    let workload = resolve_for(
        &p,
        Purpose::Prepare,
        spec.dbms,
        a.method,
        a.data.seed,
        a.target.engine.as_deref(),
    )?;
    crate::contract::shard::refuse_unsharded(workload.as_ref(), &spec)?;
    if workload.loads_in_run() {
        return Err(Error::usage(format!(
            "{} loads its tables during `run` (the load is part of the measurement): nothing to prepare",
            workload.name()
        )));
    }
    a.data.check_table_options(spec.dbms)?;
    let fleet = prepare_fleet(a, &p.matches, workload.as_ref(), &spec)?;
    warn_password(&spec);
    interrupt::install();
    runtime().block_on(async {
        let mut conn = connect(&spec).await?;
        let engine = harness::engine(&mut conn, a.target.engine.as_deref()).await?;
        let mut opts = harness::load_options(
            &spec,
            a.data.load_connections,
            a.data.load_method,
            &a.data.table_options,
        );
        opts.shard = fleet.as_ref().map(|f| f.shard);
        let r = harness::prepare_interruptibly(
            workload.as_ref(),
            &mut conn,
            &spec,
            engine.as_deref(),
            &opts,
            fleet
                .as_ref()
                .map(|f| f as &dyn crate::model::fleet_load::FleetLoad),
        )
        .await;
        if let (Err(_), Some(f)) = (&r, &fleet) {
            f.failed().await;
        }
        let loaded = r?;
        if let Some(f) = &fleet {
            if !loaded.is_empty() {
                eprintln!(
                    "shard {}: loaded its share; the tables are complete",
                    f.shard.label()
                );
            }
        }
        if loaded.is_empty() {
            eprintln!(
                "{} already prepared with the same size and seed {}: nothing to do",
                workload.name(),
                a.data.seed
            );
        }
        harness::report_loads(&loaded);
        Ok(ExitCode::SUCCESS)
    })
}

/// `prepare --shard I/N --run-id ID`: this process's part in a fleet's load, checked (no
/// I/O); None without --shard (then --run-id and --fleet-timeout are refused, as by `run`).
fn prepare_fleet(
    a: &PrepareArgs,
    m: &clap::ArgMatches,
    w: &dyn Workload,
    spec: &crate::db::TargetSpec,
) -> Result<Option<crate::fleet::LoadFleet>> {
    use crate::fleet;
    let Some(shard) = config::fleet_shard(&a.fleet, m, &[])? else {
        return Ok(None);
    };
    if spec.dbms == crate::db::Dbms::Sqlite {
        return Err(Error::usage(
            "prepare --shard: a fleet loads one database server over the network; an SQLite file is prepared by one process",
        ));
    }
    if spec.is_spider() {
        return Err(Error::usage(
            "prepare --shard: a Spider target is loaded from one process (its load already goes to every backend in parallel)",
        ));
    }
    if w.load_partition().is_none() {
        return Err(Error::usage(format!(
            "prepare --shard: the load of {} cannot be split between the shards of a fleet; prepare it from one process",
            w.name()
        )));
    }
    let id = a.fleet.run_id.as_deref().ok_or_else(|| {
        Error::usage(
            "prepare --shard needs --run-id ID (or ENGINEBENCH_RUN_ID): the shards meet in the target's enginebench_fleet table",
        )
    })?;
    let timeout = config::fleet_timeout(a.fleet.fleet_timeout.as_deref())?;
    Ok(Some(fleet::LoadFleet::new(
        shard,
        Some(id.to_string()),
        timeout.as_secs_f64(),
        spec,
    )))
}

pub fn cleanup(argv: &WorkloadArgv, reg: &Registry) -> Result<ExitCode> {
    let Some(p) = parse_workload::<CleanupArgs>(reg, "cleanup", &argv.args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let spec = config::resolve_target(&p.common.target)?;
    let workload = resolve_for(
        &p,
        Purpose::Cleanup,
        spec.dbms,
        crate::cli::Method::Quick,
        0,
        None,
    )?;
    warn_password(&spec);
    runtime().block_on(async {
        let mut conn = connect(&spec).await?;
        workload.cleanup(&mut conn).await?;
        // A Spider head's tables are links: the rows live on the backends.
        for k in 0..spec.spider.len() {
            let mut b = connect(&spec.spider_backend(k)).await?;
            workload.cleanup(&mut b).await?;
        }
        eprintln!("dropped the tables of {}", workload.name());
        Ok(ExitCode::SUCCESS)
    })
}

/// `check`: the workload's consistency conditions; exit 1 when one fails.
pub fn check(argv: &WorkloadArgv, reg: &Registry) -> Result<ExitCode> {
    let Some(p) = parse_workload::<CheckArgs>(reg, "check", &argv.args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let spec = config::resolve_target(&p.common.target)?;
    let workload = resolve_for(
        &p,
        Purpose::Check,
        spec.dbms,
        crate::cli::Method::Quick,
        0,
        None,
    )?;
    warn_password(&spec);
    runtime().block_on(async {
        let mut conn = connect(&spec).await?;
        let Some(check) = workload.check(&mut conn) else {
            let with: Vec<&str> = reg
                .entries()
                .iter()
                .filter(|e| e.check_conditions().is_some())
                .flat_map(|e| e.names())
                .collect();
            return Err(Error::usage(format!(
                "check: {} has no consistency conditions (only {} have)",
                workload.name(),
                with.join(" and ")
            )));
        };
        let r = check.await?;
        for f in &r.failures {
            println!("FAILED: {f}");
        }
        if r.failures.is_empty() {
            println!("{}", r.summary);
            Ok(ExitCode::SUCCESS)
        } else {
            Err(Error::run(r.summary))
        }
    })
}

/// `run`: resolve the common options and the workload's, then the harness runs it.
pub fn run(argv: &WorkloadArgv, reg: &Registry) -> Result<ExitCode> {
    let Some(p) = parse_workload::<RunArgs>(reg, "run", &argv.args)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let (cfg, workload) = harness::resolve_run(&p.common, p.entry, &p.name, &p.matches)?;
    harness::run(&p.common, cfg, workload, &reg.owners())
}

pub fn report(a: &ReportArgs, reg: &Registry) -> Result<ExitCode> {
    if a.trend {
        return crate::catalog_commands::trend(a, reg);
    }
    let owners = reg.owners();
    let docs = a
        .results
        .iter()
        .map(|p| report::load(p, &owners))
        .collect::<Result<Vec<_>>>()?;
    if a.table.is_some() && a.format != ReportFormat::Csv {
        return Err(Error::usage("--table goes with --format csv"));
    }
    let text = match a.format {
        ReportFormat::Hgrm => {
            let sources: Vec<String> = a.results.iter().map(|p| p.display().to_string()).collect();
            report::hgrm::write_dir(&docs, &sources, &a.output_path())?;
            return Ok(ExitCode::SUCCESS);
        }
        ReportFormat::Html => report::html::render(&docs, &owners),
        ReportFormat::Csv if a.table.is_some() => {
            report::csv::table(&docs, a.table.as_deref().unwrap_or_default(), &owners)
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
        ReportFormat::Table => owners
            .iter()
            .find_map(|o| o.side_by_side(&docs))
            .ok_or_else(|| {
                Error::usage(
                    "--format table shows the results of workloads with a side-by-side view (see `enginebench report --help`); none of these results has one",
                )
            })?,
    };
    report::json::write_report(&a.output_path(), &text)?;
    Ok(ExitCode::SUCCESS)
}

/// `merge RESULT...`: the shards of one fleet run as one result (and its page).
pub fn merge(a: &crate::cli::MergeArgs, reg: &Registry) -> Result<ExitCode> {
    let catalog = a.catalog.location()?;
    let owners = reg.owners();
    let inputs = a
        .results
        .iter()
        .map(|p| {
            Ok(report::merge::Input {
                file: p.display().to_string(),
                doc: report::load(p, &owners)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let doc = report::merge::merge(inputs)?;
    let fleet = doc.fleet.as_ref().expect("a merge has its fleet part");
    let dir = a.output.clone().unwrap_or_else(|| {
        Path::new("enginebench-results").join(format!("merge-{}", fleet.run_id))
    });
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::usage(format!("--output: cannot create {}: {e}", dir.display())))?;
    let path = dir.join("result.json");
    report::json::write_atomic(&path, &doc)?;
    let html = dir.join("report.html");
    if let Err(e) = report::json::write_text_atomic(
        &html,
        &report::html::render(std::slice::from_ref(&doc), &owners),
    ) {
        eprintln!("warning: cannot write {}: {e}", html.display());
    }
    if let Some(e) = &doc.error {
        eprintln!("warning: {e}");
    }
    eprintln!(
        "merged {} of {} shard(s) of {}: {}",
        fleet.merged.len(),
        fleet.shards,
        fleet.run_id,
        path.display()
    );
    crate::catalog::record_file(&catalog, &path, &owners);
    Ok(ExitCode::SUCCESS)
}

/// `compare A B`; with `--fail-on` a regression gate: exit 1 when a bounded row is worse than
/// its bound and significant (the output is printed first), 2 on bad input. Significance
/// counts server starts (one per result): with one result per side it needs
/// `--between-start calibration.json`, else it is unknown (the gate says UNKNOWN, exit 0).
pub fn compare(a: &CompareArgs, reg: &Registry) -> Result<ExitCode> {
    use report::gate;
    // The bounds and the calibration are checked before any result is read (bad syntax, a
    // missing or malformed file: one line, exit 2).
    let bounds = a
        .fail_on
        .as_deref()
        .map(gate::parse)
        .transpose()
        .map_err(Error::usage)?;
    let owners = reg.owners();
    let between = match a.between_start.as_deref() {
        Some(p) if p.to_string_lossy().starts_with("catalog:") => Some(
            crate::catalog_commands::between_start(a, &p.to_string_lossy(), &owners)?,
        ),
        Some(p) => Some(report::compare::BetweenStart::read(p).map_err(Error::usage)?),
        None => None,
    };
    // Side A: one result, or the catalogued results of a baseline (one observation each);
    // `da` stands for it where one document is shown (settings, profiles).
    let (da, side_a, db) = match (&a.baseline, &a.b) {
        (Some(spec), _) => crate::catalog_commands::baseline(a, spec, &owners)?,
        (None, Some(b)) => {
            let da = report::load(&a.a, &owners)?;
            (da.clone(), vec![da], report::load(b, &owners)?)
        }
        (None, None) => {
            return Err(Error::usage(
                "compare needs two results, or one and --baseline catalog:last=N",
            ))
        }
    };
    let rows = report::compare::compare_sides(&side_a, std::slice::from_ref(&db), between.as_ref());
    if rows.is_empty() {
        return Err(Error::usage(
            "the two results have no (operation, threads) point in common",
        ));
    }
    let checks = bounds.as_deref().map(|b| gate::check(b, &rows));
    let outcome = bounds
        .as_deref()
        .zip(checks.as_deref())
        .map(|(b, c)| gate::Outcome::of(b, &rows, c));
    // On stderr: the table, Markdown and JSON on stdout stay as they are. Two different
    // servers may differ in hundreds: the first few say enough.
    for line in report::differences::config_lines(&da, &db) {
        eprintln!("client differs: {line}");
    }
    let differ = report::differences::node_setting_lines(&da, &db);
    for line in differ.iter().take(20) {
        eprintln!("node setting differs: {line}");
    }
    if differ.len() > 20 {
        eprintln!("node settings: {} more differ", differ.len() - 20);
    }
    let mut labels = crate::model::labels(&[da.clone(), db.clone()]);
    if let Some(spec) = &a.baseline {
        labels[0] = format!("the {} results of {spec}", side_a.len());
    }
    match a.format {
        CompareFormat::Table => {
            let gates = checks.as_deref().map(|c| gate::cells(&rows, c));
            print!(
                "{}",
                report::compare::render(&rows, gates.as_deref(), &labels[0], &labels[1])
            );
            for line in report::differences::function_lines(&da, &db, 10) {
                println!("{line}");
            }
            for line in report::differences::batch_lines(&da, &db) {
                println!("{line}");
            }
            if let Some(o) = &outcome {
                println!("{}", o.line());
            }
        }
        CompareFormat::Markdown => print!(
            "{}",
            gate::markdown(
                &rows,
                checks.as_deref(),
                outcome.as_ref(),
                &labels[0],
                &labels[1]
            )
        ),
        CompareFormat::Json => {
            #[derive(serde::Serialize)]
            struct Gated<'a> {
                #[serde(flatten)]
                row: &'a report::compare::Row,
                #[serde(skip_serializing_if = "Option::is_none")]
                gate: Option<&'a gate::Check>,
            }
            let out: Vec<Gated> = rows
                .iter()
                .enumerate()
                .map(|(i, row)| Gated {
                    row,
                    gate: checks.as_ref().and_then(|c| c[i].as_ref()),
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&out).expect("rows serialize")
            );
        }
        CompareFormat::Csv => {
            let gated = checks.is_some();
            println!(
                "operation,threads,metric,a,b,ratio,verdict,disturbed{}",
                if gated { ",bound,change,gate" } else { "" }
            );
            for (i, r) in rows.iter().enumerate() {
                let gate = match checks.as_ref().map(|c| c[i].as_ref()) {
                    None => String::new(),
                    Some(None) => ",,,".into(),
                    Some(Some(c)) => format!(",{},{},{}", c.bound, c.change, c.state()),
                };
                // The verdict with why it is unknown, quoted when that has a comma.
                let verdict = r.verdict_full();
                let verdict = if verdict.contains([',', '"']) {
                    format!("\"{}\"", verdict.replace('"', "\"\""))
                } else {
                    verdict
                };
                println!(
                    "{},{},{},{},{},{},{verdict},{}{gate}",
                    r.operation, r.threads, r.metric, r.a, r.b, r.ratio, r.disturbed
                );
            }
        }
    }
    match outcome {
        Some(o) if !o.passed() => {
            // The verdict also goes to stderr, so a CI log shows it next to the exit code.
            eprintln!("enginebench: {}", o.line());
            Ok(ExitCode::from(1))
        }
        Some(o) if o.unknown > 0 => {
            // Not a failure (exit 0), but not a pass either: the CI log says so.
            eprintln!("enginebench: {}", o.line());
            Ok(ExitCode::SUCCESS)
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

pub fn list(reg: &Registry) -> Result<ExitCode> {
    for e in reg.entries() {
        let l = e.listing();
        println!("{}", l.heading);
        for (name, what) in l.operations {
            println!("  {name:<30} {what}");
        }
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
    Ok(ExitCode::SUCCESS)
}

/// `enginebench server start|stop|status KIND`.
pub fn server(a: &crate::cli::ServerArgs) -> Result<ExitCode> {
    use crate::cli::ServerAction;
    let (kind_word, _) = a.kind.split_once(':').unwrap_or((a.kind.as_str(), ""));
    let kind = match kind_word {
        "mariadb-galera" | "mariadb-spider" => crate::server::Kind::Mariadb,
        "postgres-replicas" => crate::server::Kind::Postgres,
        k => crate::server::Kind::parse(k)?,
    };
    match a.action {
        ServerAction::Start => {
            // `mariadb`, `mariadb-galera:3` (the profile: its default, or --profile).
            let word = match a.profile.as_str() {
                "default" => a.kind.clone(),
                p => format!("{}:{p}", a.kind),
            };
            let mut spec =
                crate::server::ServerSpec::parse(&word, &a.server_opt, a.datadir.as_deref(), true)?;
            // It must outlive this command.
            spec.die_with_parent = false;
            if let Some(b) = &a.bind {
                if b.parse::<std::net::IpAddr>().is_err() {
                    return Err(Error::usage(format!(
                        "--bind {b}: give an IP address (0.0.0.0 for every interface)"
                    )));
                }
                spec.bind = Some(b.clone());
            }
            interrupt::install();
            if !spec.topology.is_single() {
                let c = crate::server::cluster::Cluster::start(&spec)?;
                let name = c.topology.name(kind);
                for (i, n) in c.nodes.iter().enumerate() {
                    eprintln!(
                        "node {}: pid {}, port {}, folder {}",
                        i + 1,
                        n.pid,
                        n.port,
                        n.root.display()
                    );
                }
                eprintln!(
                    "{name} running in {} (stop: enginebench server stop {name} --datadir {})",
                    c.root.display(),
                    c.root.display()
                );
                println!("{}", c.url);
                c.detach();
                return Ok(ExitCode::SUCCESS);
            }
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
            if !a.server_opt.is_empty() || a.bind.is_some() {
                return Err(Error::usage(
                    "--server-opt and --bind apply to `server start` only",
                ));
            }
            let dir = a.datadir.as_deref().ok_or_else(|| {
                Error::usage("--datadir DIR is required: the folder `server start` printed")
            })?;
            let root = Path::new(dir);
            if let Some(cs) = crate::server::cluster::read_state(root) {
                if cs.kind != kind {
                    return Err(Error::usage(format!(
                        "the cluster in {dir} is {}, not {}",
                        cs.server,
                        kind.name()
                    )));
                }
                return cluster_stop_status(a.action, &cs);
            }
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

/// `server stop|status` of a cluster started by `server start mariadb-galera:N` (and the like).
fn cluster_stop_status(
    action: crate::cli::ServerAction,
    cs: &crate::server::cluster::ClusterState,
) -> Result<ExitCode> {
    use crate::server::cluster;
    if action == crate::cli::ServerAction::Stop {
        let stopped = cluster::stop_in(cs)?;
        let pids: Vec<String> = stopped.iter().map(|s| s.pid.to_string()).collect();
        eprintln!(
            "stopped {}: {} node(s) (pid {})",
            cs.server,
            stopped.len(),
            pids.join(", ")
        );
        return Ok(ExitCode::SUCCESS);
    }
    let nodes = cluster::status(cs);
    let running = nodes.iter().filter(|(_, s)| s.is_some()).count();
    for (i, (dir, st)) in nodes.iter().enumerate() {
        match st {
            Some(st) => eprintln!("node {}: running, pid {}, port {}", i + 1, st.pid, st.port),
            None => eprintln!("node {}: not running ({})", i + 1, dir.display()),
        }
    }
    eprintln!(
        "{}: {running} of {} node(s) running",
        cs.server,
        nodes.len()
    );
    if running == nodes.len() {
        println!("{}", cs.url);
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(1))
    }
}
