//! `enginebench suite PLAN.toml`: a matrix of servers/profiles × variants × engines × thread
//! counts, run in a stable order, one result folder per cell, resumable.
//!
//! The suite starts one private server per `[[servers]]` entry and keeps it for all of that
//! server's cells (engines and thread counts share it, as in the reports); each cell is one
//! `enginebench run` child process pointed at it (`--target URL --server-pid PID`), so every
//! cell's result is a normal, schema-checked result file. A cell counts as finished when its
//! folder holds a result whose status is `complete`; re-running the suite skips those.
//! Ctrl-C: the suite forwards one SIGINT to the running cell (which writes what it measured),
//! stops the server and exits 130; running it again resumes.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

pub mod claims;
pub mod plan;

pub use plan::{Cell, Plan, ServerEntry};

use crate::cli::SuiteArgs;
use crate::error::{Error, Failure, Result};
use crate::interrupt;
use crate::server::{capture, Server, ServerSpec};

/// The status of the result in a cell's folder, if any.
fn cell_status(dir: &Path) -> Option<String> {
    let rd = std::fs::read_dir(dir).ok()?;
    for e in rd.flatten() {
        let p = e.path().join("result.json");
        if let Ok(text) = std::fs::read_to_string(&p) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                return v["status"].as_str().map(str::to_string);
            }
        }
    }
    None
}

fn cell_result(dir: &Path) -> Option<serde_json::Value> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path().join("result.json");
        if let Ok(text) = std::fs::read_to_string(&p) {
            return serde_json::from_str(&text).ok();
        }
    }
    None
}

/// The suite's HTML page: the claims table first, then the cells of one (section, server,
/// variant, engine), which differ only in their thread count, merged into one series named
/// after the cell group.
fn write_report(cells: &[Cell], out_dir: &Path, owners: crate::report::Owners, claims_html: &str) {
    let mut groups: Vec<(String, crate::report::ResultDoc)> = Vec::new();
    for c in cells {
        let Some(doc) = cell_dir_result(&out_dir.join(&c.name), owners) else {
            continue;
        };
        let group = c.group().to_string();
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, merged)) => merged.points.extend(doc.points),
            None => groups.push((group, doc)),
        }
    }
    if groups.is_empty() {
        return;
    }
    for (_, d) in &mut groups {
        d.points.sort_by_key(|p| p.threads);
    }
    let (labels, docs): (Vec<String>, Vec<crate::report::ResultDoc>) = groups.into_iter().unzip();
    let path = out_dir.join("report.html");
    let html = crate::report::html::render_with_preface(&docs, labels, owners, claims_html);
    match crate::report::json::write_text_atomic(&path, &html) {
        Ok(()) => eprintln!(
            "report: {} ({} KiB)",
            path.display(),
            html.len().div_ceil(1024)
        ),
        Err(e) => eprintln!("warning: cannot write {}: {e}", path.display()),
    }
}

fn cell_dir_result(dir: &Path, owners: crate::report::Owners) -> Option<crate::report::ResultDoc> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path().join("result.json");
        if p.exists() {
            return crate::report::load(&p, owners).ok();
        }
    }
    None
}

enum CellEnd {
    Complete,
    Failed(String),
    Interrupted,
}

/// A server of the plan while its cells run: started by the suite, or given by URL.
enum Running {
    Managed(Server),
    Existing { url: String, name: String },
}

impl Running {
    fn describe(&self) -> String {
        match self {
            Running::Managed(s) => s.describe(),
            Running::Existing { name, .. } => format!("server {name}"),
        }
    }
    fn alive(&mut self) -> bool {
        match self {
            Running::Managed(s) => s.alive(),
            Running::Existing { .. } => true,
        }
    }
}

/// The reports enginebench redoes: (name, plan), the oldest report first. The plans are compiled in (build.rs:
/// `plans/*.toml` and a workload's own `src/workload/<name>/plans/*.toml`), so `reproduce`
/// works from any folder and the list is the files.
pub const REPRODUCTIONS: &[(&str, &str)] = crate::files::PLANS;

/// `enginebench reproduce NAME [--quick]`: the report's built-in plan, run as a suite.
pub fn reproduce(
    a: &crate::cli::ReproduceArgs,
    reg: &crate::registry::Registry,
) -> Result<ExitCode> {
    profile_cells(a.profile_server);
    let names: Vec<&str> = REPRODUCTIONS.iter().map(|r| r.0).collect();
    if a.list {
        for (name, text) in REPRODUCTIONS {
            let title = Plan::from_text(text, name, false)
                .ok()
                .and_then(|p| p.title)
                .unwrap_or_default();
            println!("{name:<24} {title}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let name = a.name.as_deref().unwrap_or_default();
    let Some((_, text)) = REPRODUCTIONS.iter().find(|r| r.0 == name) else {
        return Err(Error::usage(format!(
            "unknown reproduction '{name}'; known: {} (enginebench reproduce --list)",
            names.join(", ")
        )));
    };
    if let Some(path) = &a.export {
        std::fs::write(path, text).map_err(|e| Error::usage(format!("--export {path}: {e}")))?;
        eprintln!("wrote {path}: edit it, then run `enginebench suite {path}`");
        return Ok(ExitCode::SUCCESS);
    }
    let plan = Plan::from_text(text, &format!("{name} (built in)"), a.quick)?;
    if a.dry_run {
        let cells = plan.cells();
        for c in &cells {
            println!("{}", c.name);
        }
        eprintln!("{}", estimate(&plan, &cells, reg));
        return Ok(ExitCode::SUCCESS);
    }
    run_plan(
        &plan,
        a.quick,
        a.results_dir.as_deref(),
        a.metrics_addr.as_deref(),
        reg,
    )
}

/// What the measured phases of every cell will take, from each workload's own plan of its
/// run (loads and the workloads that run by rows or tests are named, not timed).
pub fn estimate(plan: &Plan, cells: &[Cell], reg: &crate::registry::Registry) -> String {
    let mut total = Duration::ZERO;
    let mut untimed: Vec<String> = Vec::new();
    for c in cells {
        let s = &plan.sections[c.section];
        let mut argv = vec![s.workload.clone()];
        argv.extend(threads_flag(reg, &s.workload, c.threads));
        argv.extend([
            // Resolving needs a target of the right kind; nothing connects to it.
            "--target".into(),
            if plan.servers[c.server].is_postgres() {
                "postgres://estimate@localhost/estimate".into()
            } else {
                "mysql://estimate@localhost/estimate".into()
            },
        ]);
        argv.extend(plan.cell_flags(c).unwrap_or_default());
        let planned = crate::registry::parse_workload::<crate::cli::RunArgs>(reg, "run", &argv)
            .ok()
            .flatten()
            .and_then(|p| {
                crate::contract::resolve_run(&p.common, p.entry, &p.name, &p.matches).ok()
            })
            .and_then(|(cfg, w)| w.planned(&cfg));
        match planned {
            Some(d) => total += d,
            None if !untimed.contains(&s.workload) => untimed.push(s.workload.clone()),
            None => {}
        }
    }
    let mut out = format!(
        "estimate: {} of measured phases over {} cell(s)",
        humantime::format_duration(Duration::from_secs(total.as_secs())),
        cells.len()
    );
    out.push_str(", plus loading the data and starting the servers");
    if !untimed.is_empty() {
        out.push_str(&format!(
            ", plus {} (they run by rows or tests, not by time)",
            untimed.join(", ")
        ));
    }
    out
}

/// `--threads N` for a cell, or nothing for a workload that takes no thread count.
fn threads_flag(reg: &crate::registry::Registry, workload: &str, threads: usize) -> Vec<String> {
    match reg.find(workload) {
        Some(e) if !e.takes_threads() => Vec::new(),
        _ => vec!["--threads".into(), threads.to_string()],
    }
}

/// `--profile-server[=HZ]` of suite and reproduce reaches every cell's run through the
/// environment (run reads ENGINEBENCH_PROFILE_SERVER), so that the cells' arguments stay as
/// the plan gives them.
fn profile_cells(hz: Option<u32>) {
    if let Some(hz) = hz {
        std::env::set_var("ENGINEBENCH_PROFILE_SERVER", hz.to_string());
    }
}

pub fn run(a: &SuiteArgs, reg: &crate::registry::Registry) -> Result<ExitCode> {
    profile_cells(a.profile_server);
    let plan = Plan::load(&a.plan, a.quick)?;
    run_plan(
        &plan,
        a.quick,
        a.results_dir.as_deref(),
        a.metrics_addr.as_deref(),
        reg,
    )
}

/// Run a parsed plan's cells that are not complete yet, then write the summary (claims first)
/// and the page from every cell's result.
pub fn run_plan(
    plan: &Plan,
    quick: bool,
    results_dir: Option<&str>,
    metrics_addr: Option<&str>,
    reg: &crate::registry::Registry,
) -> Result<ExitCode> {
    if let Some(addr) = metrics_addr {
        crate::live::metrics::check_addr(addr)?;
    }
    let out_dir = PathBuf::from(results_dir.map(str::to_string).unwrap_or_else(|| {
        format!(
            "enginebench-results/suite-{}{}",
            plan.name,
            if quick { "-quick" } else { "" }
        )
    }));
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| Error::usage(format!("--results-dir {}: {e}", out_dir.display())))?;
    interrupt::install();
    let cells = plan.cells();
    eprintln!("{}", estimate(plan, &cells, reg));
    let todo: Vec<&Cell> = cells
        .iter()
        .filter(|c| cell_status(&out_dir.join(&c.name)).as_deref() != Some("complete"))
        .collect();
    eprintln!(
        "suite {}: {} cell(s), {} already complete, {} to run; results in {}",
        plan.name,
        cells.len(),
        cells.len() - todo.len(),
        todo.len(),
        out_dir.display()
    );
    let exe = std::env::current_exe()
        .map_err(|e| Error::usage(format!("cannot find the enginebench binary: {e}")))?;
    let mut failed = Vec::new();
    let mut interrupted = false;
    let started = std::time::Instant::now();
    let mut done = 0usize;
    'servers: for si in 0..plan.servers.len() {
        let mine: Vec<&&Cell> = todo.iter().filter(|c| c.server == si).collect();
        if mine.is_empty() {
            continue;
        }
        let entry = &plan.servers[si];
        let mut server = match (&entry.server, &entry.url) {
            (Some(kind), _) => {
                let spec = ServerSpec::parse(kind, &entry.opts, None, false)?;
                eprintln!("suite: starting {kind} for {} cell(s)", mine.len());
                match Server::start(&spec) {
                    Ok(s) => Running::Managed(s),
                    Err(e) if matches!(e.failure, Failure::Interrupted(_)) => {
                        interrupted = true;
                        break 'servers;
                    }
                    Err(e) => {
                        failed.push(format!("{kind}: {}", e.message));
                        continue;
                    }
                }
            }
            (None, url) => Running::Existing {
                url: url.clone().unwrap_or_default(),
                name: entry.name(),
            },
        };
        for cell in mine {
            if interrupt::signal().is_some() {
                interrupted = true;
                break 'servers;
            }
            if !server.alive() {
                failed.push(format!("{}: the {} is gone", cell.name, server.describe()));
                continue;
            }
            let dir = out_dir.join(&cell.name);
            // An unfinished cell starts over.
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::usage(format!("{}: {e}", dir.display())))?;
            let section = &plan.sections[cell.section];
            let mut args: Vec<String> = vec!["run".into(), section.workload.clone()];
            // An existing server's URL goes through the environment: a password in it stays
            // out of the process list.
            let mut env_target = None;
            match &server {
                Running::Managed(s) => args.extend([
                    "--target".into(),
                    s.url.clone(),
                    "--server-pid".into(),
                    s.pid.to_string(),
                    "--server-label".into(),
                    entry.server.clone().unwrap_or_default(),
                ]),
                Running::Existing { url, name } => {
                    env_target = Some(url.clone());
                    args.extend(["--server-label".into(), name.clone()]);
                }
            }
            args.extend(threads_flag(reg, &section.workload, cell.threads));
            args.extend([
                "--results-dir".into(),
                dir.display().to_string(),
                // stdout is not kept; table keeps the cell's progress lines on a terminal.
                "--format".into(),
                "table".into(),
            ]);
            if let Some(addr) = metrics_addr {
                args.extend(["--metrics-addr".into(), addr.to_string()]);
            }
            if let Some(e) = &cell.engine {
                args.extend(["--engine".into(), e.clone()]);
            }
            args.extend(plan.cell_flags(cell)?);
            let eta = (done > 0).then(|| {
                let per = started.elapsed().as_secs_f64() / done as f64;
                format!(
                    ", about {} left",
                    humantime::format_duration(Duration::from_secs(
                        (per * (todo.len() - done) as f64) as u64
                    ))
                )
            });
            eprintln!(
                "suite: cell {} of {}: {}{}",
                done + 1,
                todo.len(),
                cell.name,
                eta.unwrap_or_default()
            );
            let end = run_cell(&exe, &args, env_target.as_deref(), &dir);
            done += 1;
            match end {
                CellEnd::Complete => {}
                CellEnd::Interrupted => {
                    interrupted = true;
                    break 'servers;
                }
                CellEnd::Failed(why) => {
                    eprintln!("suite: cell {} failed: {why}", cell.name);
                    failed.push(format!("{}: {why}", cell.name));
                }
            }
        }
        if let Running::Managed(mut s) = server {
            eprintln!("suite: stopping the {}", s.describe());
            s.stop()?;
        }
    }
    let owners = reg.owners();
    let doc_of = |c: &Cell| {
        cell_dir_result(&out_dir.join(&c.name), &owners)
            .map(|doc| vec![claims::CellDoc { pass: 1, doc }])
            .unwrap_or_default()
    };
    let evals = claims::evaluate_all(plan, &cells, &doc_of, &owners);
    if !evals.is_empty() {
        let text = serde_json::to_string_pretty(&evals).unwrap_or_default();
        let _ = crate::report::json::write_text_atomic(&out_dir.join("claims.json"), &text);
    }
    let summary = summarize(plan, &cells, &out_dir, &evals);
    let path = out_dir.join("summary.md");
    let _ = crate::report::json::write_text_atomic(&path, &summary);
    print!("{summary}");
    eprintln!("summary: {}", path.display());
    write_report(&cells, &out_dir, &owners, &claims::html(&evals));
    if interrupted {
        eprintln!("suite interrupted: run the same command again to resume");
        return Ok(ExitCode::from(128 + interrupt::signal().unwrap_or(2) as u8));
    }
    if !failed.is_empty() {
        return Err(Error::run(format!(
            "{} cell(s) failed: {}",
            failed.len(),
            failed.join("; ")
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// Run one cell as a child `enginebench run`, in its own process group: a Ctrl-C reaches only
/// the suite, which forwards exactly one SIGINT (two would end the child before it saves).
fn run_cell(exe: &Path, args: &[String], target: Option<&str>, dir: &Path) -> CellEnd {
    let mut c = Command::new(exe);
    c.args(args).stdin(Stdio::null()).stdout(Stdio::null());
    if let Some(t) = target {
        c.env("ENGINEBENCH_TARGET", t);
    }
    c.process_group(0);
    let mut child = match c.spawn() {
        Ok(ch) => ch,
        Err(e) => return CellEnd::Failed(format!("cannot start {}: {e}", exe.display())),
    };
    let mut forwarded = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) => {}
            Err(e) => return CellEnd::Failed(e.to_string()),
        }
        if !forwarded && interrupt::signal().is_some() {
            // SAFETY: kill with our own child's pid.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            forwarded = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    match (status.code(), cell_status(dir).as_deref()) {
        (Some(0), Some("complete")) => CellEnd::Complete,
        _ if forwarded || interrupt::signal().is_some() => CellEnd::Interrupted,
        (code, st) => CellEnd::Failed(format!(
            "exit {} (result status {})",
            code.map(|c| c.to_string())
                .unwrap_or_else(|| "by signal".into()),
            st.unwrap_or("missing")
        )),
    }
}

fn f(v: &serde_json::Value) -> Option<f64> {
    v.as_f64()
}

/// The suite's summary (Markdown): the claims and their verdicts, ops/s per operation × cell,
/// CPU per op and client share, and the settings that differ between the servers (or are
/// equal but not default).
pub fn summarize(
    plan: &Plan,
    cells: &[Cell],
    out_dir: &Path,
    evals: &[claims::Evaluation],
) -> String {
    let workloads: Vec<&str> = plan.sections.iter().map(|s| s.workload.as_str()).collect();
    let mut s = format!("# Suite {} ({})\n\n", plan.name, workloads.join(", "));
    if let Some(t) = &plan.title {
        s.push_str(&format!("{t}\n\n"));
    }
    s.push_str(&claims::markdown(evals));
    s.push_str("## Cells\n\n| cell | status | operation | threads | ops/s (max) | p95 us | client us/op | server us/op | client share | disturbed runs |\n|---|---|---|---|---|---|---|---|---|---|\n");
    // Settings per server name (first result of each server).
    let mut settings: BTreeMap<String, (BTreeMap<String, String>, Vec<String>)> = BTreeMap::new();
    for c in cells {
        let dir = out_dir.join(&c.name);
        let Some(doc) = cell_result(&dir) else {
            s.push_str(&format!("| {} | not run | | | | | | | | |\n", c.name));
            continue;
        };
        let status = doc["status"].as_str().unwrap_or("?");
        let server_key = format!(
            "{}{}",
            plan.servers[c.server].name(),
            c.engine
                .as_deref()
                .map(|e| format!(" {e}"))
                .unwrap_or_default()
        );
        if let Some(m) = doc["target"]["settings"].as_object() {
            settings.entry(server_key).or_insert_with(|| {
                (
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                        .collect(),
                    doc["target"]["settings_non_default"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default(),
                )
            });
        }
        let points = doc["points"].as_array().cloned().unwrap_or_default();
        if points.is_empty() {
            s.push_str(&format!("| {} | {status} | | | | | | | | |\n", c.name));
        }
        for p in points {
            let a = &p["aggregate"];
            let opt = |v: Option<f64>, scale: f64, digits: usize| {
                v.map(|x| format!("{:.*}", digits, x * scale))
                    .unwrap_or_else(|| "–".into())
            };
            s.push_str(&format!(
                "| {} | {status} | {} | {} | {:.0} | {} | {} | {} | {} | {} |\n",
                c.name,
                p["operation"].as_str().unwrap_or(""),
                p["threads"],
                f(&a["ops_per_s_max"]).unwrap_or(0.0),
                a["latency_us"]["p95_us"],
                opt(f(&a["client_cpu_us_per_op_median"]), 1.0, 1),
                opt(f(&a["server_cpu_us_per_op_median"]), 1.0, 1),
                opt(f(&a["client_cpu_share_median"]), 100.0, 0) + "%",
                a["disturbed_runs"],
            ));
        }
    }
    if settings.len() > 1 {
        let names: Vec<&String> = settings.keys().collect();
        let list: Vec<(&BTreeMap<String, String>, &[String])> = settings
            .values()
            .map(|(v, nd)| (v, nd.as_slice()))
            .collect();
        let d = capture::diff(&list);
        s.push_str("\n## Settings that differ\n\n| setting | ");
        s.push_str(
            &names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(" | "),
        );
        s.push_str(" |\n|---|");
        s.push_str(&"---|".repeat(names.len()));
        s.push('\n');
        for (k, vals) in &d.differ {
            s.push_str(&format!("| {k} | {} |\n", vals.join(" | ")));
        }
        if d.differ.is_empty() {
            s.push_str("\n(none: the same server settings everywhere)\n");
        }
        s.push_str("\n## Settings equal everywhere but not at their default\n\n");
        for (k, v) in &d.equal_non_default {
            s.push_str(&format!("- {k} = {v}\n"));
        }
    } else if let Some((_, (vals, nd))) = settings.iter().next() {
        s.push_str("\n## Settings not at their default\n\n");
        for k in nd {
            s.push_str(&format!(
                "- {k} = {}\n",
                vals.get(k).map(String::as_str).unwrap_or("")
            ));
        }
    }
    s
}
