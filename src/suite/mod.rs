//! `enginebench suite PLAN.toml`: a matrix of servers/profiles × variants × engines × thread
//! counts, run in a stable order, one result folder per cell, resumable.
//!
//! The suite starts one private server per `[[servers]]` entry and keeps it for all of that
//! server's cells (engines and thread counts share it, as in the reports); each cell is one
//! `enginebench run` child process pointed at it (`--target URL --server-pid PID`), so every
//! cell's result is a normal, schema-checked result file. A cell counts as finished when its
//! folder holds as many `complete` results as its section's `repeats`; a disturbed run is run
//! again in place; `--passes 2` runs the matrix again in reverse order on fresh servers.
//! Re-running the suite resumes, measuring again whole the sections it must resume (see
//! `pass_todo`).
//! Ctrl-C: the suite forwards one SIGINT to the running cell (which writes what it measured),
//! stops the server and exits 130; running it again resumes.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

pub mod calibrate;
pub mod claim;
pub mod claims;
mod disk;
pub mod evidence;
pub mod plan;
mod summary;

pub use disk::{cell_docs, pass_dir, passes_on_disk};
pub use plan::{Cell, Plan, Scale, ServerEntry};
pub use summary::summarize;

use disk::*;

use crate::cli::SuiteArgs;
use crate::error::{Error, Failure, Result};
use crate::interrupt;
use crate::model::ResultDoc;
use crate::report::Owners;
use crate::server::{capture, Server, ServerSpec};

/// The suite's HTML page: the claims table first, then the cells of one (section, server,
/// variant, engine), which differ only in their thread count, merged into one series named
/// after the cell group. Each cell shows pass 1's first complete result.
fn write_report(
    plan: &Plan,
    cells: &[Cell],
    out_dir: &Path,
    owners: crate::report::Owners,
    claims_html: &str,
) {
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
    // A reproduction's page leads with the report it redoes.
    let heading = plan
        .title
        .clone()
        .unwrap_or_else(|| format!("Suite {}", plan.name));
    let html = crate::report::html::render_with_preface(
        &docs,
        labels,
        owners,
        Some(&heading),
        claims_html,
    );
    match crate::report::json::write_text_atomic(&path, &html) {
        Ok(()) => eprintln!(
            "report: {} ({} KiB)",
            path.display(),
            html.len().div_ceil(1024)
        ),
        Err(e) => eprintln!("warning: cannot write {}: {e}", path.display()),
    }
}

fn cell_dir_result(dir: &Path, owners: Owners) -> Option<ResultDoc> {
    let kept = kept_results(dir);
    let first = kept
        .iter()
        .find(|p| result_status(p).as_deref() == Some("complete"))
        .or(kept.first())?;
    crate::report::load(&first.join("result.json"), owners).ok()
}

enum CellEnd {
    /// The run ended well: its result folder.
    Complete(PathBuf),
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

/// The reports enginebench redoes: (name, plan), the oldest report first. The plans are
/// compiled in (build.rs: `plans/*.toml` and a workload's own `src/workload/<name>/plans/*.toml`),
/// so `reproduce` works from any folder and the list is the files.
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
    let scale = a.suite.scale(a.quick);
    let mut plan = Plan::from_text(text, &format!("{name} (built in)"), scale)?;
    if a.calibrate {
        plan = calibrate::plan(&plan)?;
    }
    if a.dry_run {
        let cells = plan.cells();
        for c in &cells {
            println!("{}", c.name);
        }
        eprintln!("{}", estimate(&plan, &cells, reg));
        return Ok(ExitCode::SUCCESS);
    }
    let o = Options {
        results_dir: a.results_dir.as_deref(),
        metrics_addr: a.metrics_addr.as_deref(),
        ..Options::of(&a.suite, a.quick)
    };
    if a.calibrate {
        return calibrate(&plan, &o, reg);
    }
    run_plan(&plan, &o, reg)
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
            .and_then(|p| crate::harness::resolve_run(&p.common, p.entry, &p.name, &p.matches).ok())
            .and_then(|(cfg, w)| {
                w.planned(&crate::contract::RunPlan {
                    threads: cfg.threads.clone(),
                    warmup: cfg.warmup(),
                    duration: cfg.duration(),
                    runs: cfg.runs,
                })
            });
        match planned {
            Some(d) => total += d * plan.sections[c.section].repeats,
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
    let scale = a.suite.scale(a.quick);
    let plan = Plan::load(&a.plan, scale)?;
    run_plan(
        &plan,
        &Options {
            results_dir: a.results_dir.as_deref(),
            metrics_addr: a.metrics_addr.as_deref(),
            ..Options::of(&a.suite, a.quick)
        },
        reg,
    )
}

/// How a plan is run (from `suite` or `reproduce`).
pub struct Options<'a> {
    pub scale: Scale,
    /// Passes over the whole matrix, each on freshly started servers (even passes in reverse
    /// order).
    pub passes: u32,
    /// `--until-decided --budget`: more passes, for the cells of undecided claims only, within
    /// this wall time.
    pub until_decided: Option<Duration>,
    pub results_dir: Option<&'a str>,
    pub metrics_addr: Option<&'a str>,
}

impl<'a> Options<'a> {
    fn of(a: &crate::cli::SuiteRunArgs, quick: bool) -> Options<'a> {
        Options {
            scale: a.scale(quick),
            passes: a.passes(),
            until_decided: a.until_decided.then_some(a.budget),
            results_dir: None,
            metrics_addr: None,
        }
    }
}

/// The most passes `--until-decided` runs, whatever its budget.
const MAX_PASSES: u32 = 20;

/// Where a plan's results go: `--results-dir`, or enginebench-results/suite-NAME[-SCALE].
fn out_dir(plan: &Plan, o: &Options) -> PathBuf {
    PathBuf::from(o.results_dir.map(str::to_string).unwrap_or_else(|| {
        format!(
            "enginebench-results/suite-{}{}",
            plan.name,
            o.scale.table().map(|t| format!("-{t}")).unwrap_or_default()
        )
    }))
}

/// `reproduce NAME --calibrate`: the A/A plan (`calibrate::plan`) run like any plan, then every comparison
/// between its two starts judged (calibration.md and calibration.json beside the cells).
fn calibrate(aa: &Plan, o: &Options, reg: &crate::registry::Registry) -> Result<ExitCode> {
    let code = run_plan(aa, o, reg)?;
    let dir = out_dir(aa, o);
    let owners = reg.owners();
    let c = calibrate::evaluate(aa, &dir, &owners);
    let md = calibrate::markdown(&c);
    let _ = crate::report::json::write_text_atomic(&dir.join("calibration.md"), &md);
    let json = serde_json::to_string_pretty(&c).unwrap_or_default();
    let _ = crate::report::json::write_text_atomic(&dir.join("calibration.json"), &json);
    print!("{md}");
    eprintln!("calibration: {}", dir.join("calibration.md").display());
    Ok(code)
}

/// Run a parsed plan's cells that are not complete yet, pass after pass, then write the
/// summary (claims first) and the page from every cell's results.
pub fn run_plan(plan: &Plan, o: &Options, reg: &crate::registry::Registry) -> Result<ExitCode> {
    if let Some(addr) = o.metrics_addr {
        crate::live::metrics::check_addr(addr)?;
    }
    let out_dir = out_dir(plan, o);
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| Error::usage(format!("--results-dir {}: {e}", out_dir.display())))?;
    interrupt::install();
    let cells = plan.cells();
    eprintln!("{}", estimate(plan, &cells, reg));
    let owners = reg.owners();
    let mut suite = Suite {
        plan,
        reg,
        owners: &owners,
        exe: std::env::current_exe()
            .map_err(|e| Error::usage(format!("cannot find the enginebench binary: {e}")))?,
        metrics_addr: o.metrics_addr,
        failed: Vec::new(),
        started: std::time::Instant::now(),
        done: 0,
        total: 0,
    };
    // Every pass's cells are known before the first runs, so that the time left counts them.
    let mut passes = Vec::new();
    for pass in 1..=o.passes {
        let dir = pass_dir(&out_dir, pass);
        let mut todo = pass_todo(plan, &cells, &dir, pass);
        if pass % 2 == 0 {
            // The other order: a cell's neighbour (and what it left in the caches) changes.
            todo.reverse();
        }
        eprintln!(
            "suite {}{}: {} cell(s), {} already complete, {} to run; results in {}",
            plan.name,
            if o.passes > 1 {
                format!(" pass {pass} of {}", o.passes)
            } else {
                String::new()
            },
            cells.len(),
            cells.len() - todo.len(),
            todo.len(),
            dir.display()
        );
        suite.total += todo
            .iter()
            .map(|c| plan.sections[c.section].repeats as usize)
            .sum::<usize>();
        passes.push((pass, dir, todo));
    }
    let mut interrupted = false;
    for (pass, dir, todo) in &passes {
        if suite.run_pass(*pass, dir, todo)? {
            interrupted = true;
            break;
        }
    }
    let design = if o.until_decided.is_some() {
        claims::Design::Sequential
    } else {
        claims::Design::Fixed
    };
    if let (Some(budget), false) = (o.until_decided, interrupted) {
        interrupted = suite.until_decided(&out_dir, o.passes, budget)?;
    }
    let failed = std::mem::take(&mut suite.failed);
    let on_disk = passes_on_disk(&out_dir).max(o.passes);
    let doc_of = |c: &Cell| cell_docs(&out_dir, c, on_disk, &owners);
    let evals = claims::evaluate_all(plan, &cells, &doc_of, &owners, design);
    if !evals.is_empty() {
        let text = serde_json::to_string_pretty(&evals).unwrap_or_default();
        let _ = crate::report::json::write_text_atomic(&out_dir.join("claims.json"), &text);
    }
    let summary = summarize(plan, &cells, &out_dir, on_disk, &evals);
    let path = out_dir.join("summary.md");
    let _ = crate::report::json::write_text_atomic(&path, &summary);
    print!("{summary}");
    eprintln!("summary: {}", path.display());
    write_report(plan, &cells, &out_dir, &owners, &claims::html(&evals));
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

/// A plan while it runs: what every cell needs, the failures so far and the progress.
struct Suite<'a> {
    plan: &'a Plan,
    reg: &'a crate::registry::Registry,
    owners: Owners<'a>,
    exe: PathBuf,
    metrics_addr: Option<&'a str>,
    failed: Vec<String>,
    started: std::time::Instant,
    /// Runs done and to do (a cell of N repeats is N runs), for the time left.
    done: usize,
    total: usize,
}

impl Suite<'_> {
    /// One pass over `todo` (grouped by server: each server is started for its cells and
    /// stopped after them). True when interrupted.
    fn run_pass(&mut self, pass: u32, dir: &Path, todo: &[&Cell]) -> Result<bool> {
        for mine in todo.chunk_by(|a, b| a.server == b.server) {
            let entry = &self.plan.servers[mine[0].server];
            let mut server = match (&entry.server, &entry.url) {
                (Some(kind), _) => {
                    let spec = ServerSpec::parse(kind, &entry.opts, None, false)?;
                    eprintln!("suite: starting {kind} for {} cell(s)", mine.len());
                    match Server::start(&spec) {
                        Ok(s) => Running::Managed(s),
                        Err(e) if matches!(e.failure, Failure::Interrupted(_)) => return Ok(true),
                        Err(e) => {
                            self.failed.push(format!("{kind}: {}", e.message));
                            continue;
                        }
                    }
                }
                (None, url) => Running::Existing {
                    url: url.clone().unwrap_or_default(),
                    name: entry.name(),
                },
            };
            let mut interrupted = false;
            for cell in mine {
                if interrupt::signal().is_some() || self.run_cell(pass, dir, cell, &mut server)? {
                    interrupted = true;
                    break;
                }
            }
            if let Running::Managed(mut s) = server {
                eprintln!("suite: stopping the {}", s.describe());
                s.stop()?;
            }
            if interrupted {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `--until-decided`: after the first passes, another pass at a time for the cells of the
    /// claims that are still open, until none is, the budget would be overrun or MAX_PASSES is
    /// reached. True when interrupted.
    fn until_decided(&mut self, out_dir: &Path, first: u32, budget: Duration) -> Result<bool> {
        let cells = self.plan.cells();
        loop {
            let on_disk = passes_on_disk(out_dir).max(first);
            let owners = self.owners;
            let doc_of = |c: &Cell| cell_docs(out_dir, c, on_disk, owners);
            let evals = claims::evaluate_all(
                self.plan,
                &cells,
                &doc_of,
                owners,
                claims::Design::Sequential,
            );
            let open: Vec<&str> = evals
                .iter()
                .filter(|e| e.open)
                .map(|e| e.id.as_str())
                .collect();
            let mut needed: Vec<Cell> = Vec::new();
            for c in self
                .plan
                .claims
                .iter()
                .filter(|c| open.contains(&c.id.as_str()))
            {
                for cell in c.cells_compared(self.plan, &cells) {
                    if !needed.iter().any(|n| n.name == cell.name) {
                        needed.push(cell.clone());
                    }
                }
            }
            // Plan order, as a pass runs them.
            needed.sort_by_key(|n| cells.iter().position(|c| c.name == n.name));
            if needed.is_empty() {
                eprintln!(
                    "suite: until decided: every claim that more passes could decide is decided after {on_disk} pass(es)"
                );
                return Ok(false);
            }
            // An unfinished pass is finished first; then a new one.
            let last_dir = pass_dir(out_dir, on_disk);
            let unfinished = needed.iter().any(|c| {
                complete_results(&last_dir.join(&c.name))
                    < self.plan.sections[c.section].repeats as usize
            });
            let pass = if unfinished { on_disk } else { on_disk + 1 };
            if pass > MAX_PASSES {
                eprintln!(
                    "suite: until decided: {} claim(s) still open after {MAX_PASSES} passes, the most it runs: {}",
                    open.len(),
                    open.join(", ")
                );
                return Ok(false);
            }
            let dir = pass_dir(out_dir, pass);
            let mut todo = pass_todo(self.plan, &needed, &dir, pass);
            if pass % 2 == 0 {
                todo.reverse();
            }
            let runs: usize = todo
                .iter()
                .map(|c| self.plan.sections[c.section].repeats as usize)
                .sum();
            let spent = self.started.elapsed();
            let per_run = (self.done > 0).then(|| spent.as_secs_f64() / self.done as f64);
            if let Some(per) = per_run {
                let next = Duration::from_secs_f64(per * runs as f64);
                if spent + next > budget {
                    eprintln!(
                        "suite: until decided: the budget is spent ({} of {}; pass {pass} would take about {}): {} claim(s) still open: {}",
                        humantime::format_duration(Duration::from_secs(spent.as_secs())),
                        humantime::format_duration(budget),
                        humantime::format_duration(Duration::from_secs(next.as_secs())),
                        open.len(),
                        open.join(", ")
                    );
                    return Ok(false);
                }
            }
            eprintln!(
                "suite {} pass {pass} (until decided): {} claim(s) open ({}), {} cell(s) to run; results in {}",
                self.plan.name,
                open.len(),
                open.join(", "),
                todo.len(),
                dir.display()
            );
            self.total += runs;
            if self.run_pass(pass, &dir, &todo)? {
                return Ok(true);
            }
            if !self.failed.is_empty() {
                return Ok(false);
            }
        }
    }

    /// A cell's repeats, each run again in place while other processes disturb it (at most
    /// ATTEMPTS tries). True when interrupted.
    fn run_cell(
        &mut self,
        pass: u32,
        pass_dir: &Path,
        cell: &Cell,
        server: &mut Running,
    ) -> Result<bool> {
        let dir = pass_dir.join(&cell.name);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::usage(format!("{}: {e}", dir.display())))?;
        // The cell starts over: what it measured before was on another server process (set
        // aside), or did not end well (removed).
        for old in kept_results(&dir) {
            if result_status(&old).as_deref() == Some("complete") {
                set_aside(&old, "resumed-")
                    .map_err(|e| Error::usage(format!("{}: {e}", old.display())))?;
            } else {
                let _ = std::fs::remove_dir_all(&old);
            }
        }
        let (args, env_target) = self.cell_args(cell, server, &dir)?;
        let repeats = self.plan.sections[cell.section].repeats;
        for repeat in 1..=repeats {
            for attempt in 1..=ATTEMPTS {
                if interrupt::signal().is_some() {
                    return Ok(true);
                }
                if !server.alive() {
                    self.failed
                        .push(format!("{}: the {} is gone", cell.name, server.describe()));
                    return Ok(false);
                }
                if attempt == 1 {
                    self.announce(pass, cell, repeat, repeats);
                }
                // Each repeat draws its own data (another seed), so that a workload loads it
                // again and a load time, measured once per run, gets a spread; a seed the plan
                // sets is kept.
                let mut args = args.clone();
                if repeats > 1 && !args.iter().any(|a| a == "--seed") {
                    args.extend(["--seed".into(), repeat.to_string()]);
                }
                let end = run_child(&self.exe, &args, env_target.as_deref(), &dir);
                if attempt == 1 {
                    self.done += 1;
                }
                let result = match end {
                    CellEnd::Complete(result) => result,
                    CellEnd::Interrupted => return Ok(true),
                    CellEnd::Failed(why) => {
                        eprintln!("suite: cell {} failed: {why}", cell.name);
                        self.failed.push(format!("{}: {why}", cell.name));
                        return Ok(false);
                    }
                };
                let disturbed = crate::report::load(&result.join("result.json"), self.owners)
                    .ok()
                    .and_then(|doc| disturbance(&doc, self.owners));
                let Some(others) = disturbed else {
                    break;
                };
                let others = others
                    .map(|c| format!("others used {c:.2} CPU"))
                    .unwrap_or_else(|| "others used the CPU".into());
                if attempt == ATTEMPTS {
                    eprintln!(
                        "suite: cell {}: run disturbed ({others}) {ATTEMPTS} times; the last is kept (the claims comparing it say not measured)",
                        cell.name
                    );
                    break;
                }
                set_aside(&result, "disturbed-")
                    .map_err(|e| Error::usage(format!("{}: {e}", result.display())))?;
                eprintln!(
                    "suite: cell {}: run disturbed ({others}), again in place (try {} of {ATTEMPTS})",
                    cell.name,
                    attempt + 1
                );
            }
        }
        Ok(false)
    }

    fn announce(&self, pass: u32, cell: &Cell, repeat: u32, repeats: u32) {
        let eta = (self.done > 0).then(|| {
            let per = self.started.elapsed().as_secs_f64() / self.done as f64;
            format!(
                ", about {} left",
                humantime::format_duration(Duration::from_secs(
                    (per * (self.total - self.done) as f64) as u64
                ))
            )
        });
        let which = match (pass, repeats) {
            (1, 1) => String::new(),
            (p, 1) => format!(" (pass {p})"),
            (1, n) => format!(" (repeat {repeat} of {n})"),
            (p, n) => format!(" (pass {p}, repeat {repeat} of {n})"),
        };
        eprintln!(
            "suite: cell {} of {}: {}{which}{}",
            self.done + 1,
            self.total,
            cell.name,
            eta.unwrap_or_default()
        );
    }

    /// The cell's `enginebench run` arguments, and an existing server's URL for the
    /// environment (a password in it stays out of the process list).
    fn cell_args(
        &self,
        cell: &Cell,
        server: &Running,
        dir: &Path,
    ) -> Result<(Vec<String>, Option<String>)> {
        let section = &self.plan.sections[cell.section];
        let entry = &self.plan.servers[cell.server];
        let mut args: Vec<String> = vec!["run".into(), section.workload.clone()];
        let mut env_target = None;
        match server {
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
        args.extend(threads_flag(self.reg, &section.workload, cell.threads));
        args.extend([
            "--results-dir".into(),
            dir.display().to_string(),
            // stdout is not kept; table keeps the cell's progress lines on a terminal.
            "--format".into(),
            "table".into(),
        ]);
        if let Some(addr) = self.metrics_addr {
            args.extend(["--metrics-addr".into(), addr.to_string()]);
        }
        if let Some(e) = &cell.engine {
            args.extend(["--engine".into(), e.clone()]);
        }
        args.extend(self.plan.cell_flags(cell)?);
        Ok((args, env_target))
    }
}

/// Run one cell as a child `enginebench run`, in its own process group: a Ctrl-C reaches only
/// the suite, which forwards exactly one SIGINT (two would end the child before it saves).
/// The run's result is the folder it made in `dir`.
fn run_child(exe: &Path, args: &[String], target: Option<&str>, dir: &Path) -> CellEnd {
    let before = kept_results(dir);
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
    let made = kept_results(dir).into_iter().find(|p| !before.contains(p));
    let st = made.as_deref().and_then(result_status);
    match (status.code(), st.as_deref(), made) {
        (Some(0), Some("complete"), Some(result)) => CellEnd::Complete(result),
        _ if forwarded || interrupt::signal().is_some() => CellEnd::Interrupted,
        (code, st, _) => CellEnd::Failed(format!(
            "exit {} (result status {})",
            code.map(|c| c.to_string())
                .unwrap_or_else(|| "by signal".into()),
            st.unwrap_or("missing")
        )),
    }
}
