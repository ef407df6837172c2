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

use serde::Deserialize;

use crate::cli::SuiteArgs;
use crate::error::{Error, Failure, Result};
use crate::runner::interrupt;
use crate::server::{capture, Server, ServerSpec};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub name: String,
    pub workload: String,
    pub servers: Vec<ServerEntry>,
    /// MariaDB storage engines (ignored for PostgreSQL, which has one).
    #[serde(default)]
    pub engines: Vec<String>,
    pub threads: Vec<usize>,
    /// Flags given to every cell's `run` (`table_size = "1M"` → `--table-size 1M`).
    #[serde(default)]
    pub run: BTreeMap<String, toml::Value>,
    /// Further axis: named sets of extra `run` flags.
    #[serde(default)]
    pub variants: Vec<Variant>,
    /// Values that replace the ones above with `--quick`.
    #[serde(default)]
    pub quick: Option<Quick>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    /// `mariadb:PROFILE` or `postgres:PROFILE`.
    pub server: String,
    /// Name of this server in cell names (default: the profile spelled `kind-profile`).
    #[serde(default)]
    pub name: Option<String>,
    /// `--server-opt` settings.
    #[serde(default)]
    pub opts: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    #[serde(default)]
    pub run: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quick {
    #[serde(default)]
    pub servers: Option<Vec<ServerEntry>>,
    #[serde(default)]
    pub engines: Option<Vec<String>>,
    #[serde(default)]
    pub threads: Option<Vec<usize>>,
    /// Merged over `run` (keys here win).
    #[serde(default)]
    pub run: BTreeMap<String, toml::Value>,
}

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub name: String,
    pub server: usize,
    pub engine: Option<String>,
    pub variant: Option<usize>,
    pub threads: usize,
}

impl Plan {
    pub fn load(path: &str, quick: bool) -> Result<Plan> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::usage(format!("cannot read plan {path}: {e}")))?;
        Self::from_text(&text, path, quick)
    }

    /// Parse and validate a plan's text (`path` only names it in errors); also the fuzz entry.
    pub fn from_text(text: &str, path: &str, quick: bool) -> Result<Plan> {
        let mut p: Plan = toml::from_str(text).map_err(|e| {
            Error::usage(format!(
                "plan {path}: {}",
                crate::error::one_line(&e.to_string())
            ))
        })?;
        if quick {
            let q = p.quick.clone().ok_or_else(|| {
                Error::usage(format!("--quick: plan {path} has no [quick] section"))
            })?;
            if let Some(s) = q.servers {
                p.servers = s;
            }
            if let Some(e) = q.engines {
                p.engines = e;
            }
            if let Some(t) = q.threads {
                p.threads = t;
            }
            p.run.extend(q.run);
        }
        p.validate(path)?;
        Ok(p)
    }

    fn validate(&self, path: &str) -> Result<()> {
        let reg = crate::workload::Registry::default();
        if reg.find(&self.workload).is_none() {
            return Err(Error::usage(format!(
                "plan {path}: unknown workload '{}'; known workloads: {} (see `enginebench list`)",
                self.workload,
                reg.names().join(", ")
            )));
        }
        if self.servers.is_empty() || self.threads.is_empty() {
            return Err(Error::usage(format!(
                "plan {path}: needs at least one [[servers]] entry and one thread count"
            )));
        }
        if self.threads.contains(&0) {
            return Err(Error::usage(format!(
                "plan {path}: thread counts start at 1"
            )));
        }
        for s in &self.servers {
            ServerSpec::parse(&s.server, &s.opts, None, false)
                .map_err(|e| e.context(format!("plan {path}")))?;
        }
        for (k, v) in self
            .run
            .iter()
            .chain(self.variants.iter().flat_map(|v| v.run.iter()))
        {
            if FORBIDDEN.contains(&k.as_str()) {
                return Err(Error::usage(format!(
                    "plan {path}: '{k}' is set by the suite itself (per cell); remove it from [run]"
                )));
            }
            flag_value(k, v).map_err(|e| e.context(format!("plan {path}")))?;
        }
        Ok(())
    }

    fn server_name(&self, i: usize) -> String {
        let s = &self.servers[i];
        s.name.clone().unwrap_or_else(|| s.server.replace(':', "-"))
    }

    /// The cells in the order they run: server, variant, engine, threads.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        let variants: Vec<Option<usize>> = if self.variants.is_empty() {
            vec![None]
        } else {
            (0..self.variants.len()).map(Some).collect()
        };
        for (si, s) in self.servers.iter().enumerate() {
            let is_pg = s.server.starts_with("postgres") || s.server.starts_with("pg");
            let engines: Vec<Option<String>> = if is_pg || self.engines.is_empty() {
                vec![None]
            } else {
                self.engines.iter().cloned().map(Some).collect()
            };
            for v in &variants {
                for e in &engines {
                    for &t in &self.threads {
                        let mut name = self.server_name(si);
                        if let Some(v) = v {
                            name.push('-');
                            name.push_str(&self.variants[*v].name);
                        }
                        name.push('-');
                        name.push_str(e.as_deref().unwrap_or("default"));
                        name.push_str(&format!("-t{t}"));
                        let name: String = name
                            .chars()
                            .map(|c| {
                                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                                    c
                                } else {
                                    '_'
                                }
                            })
                            .collect();
                        out.push(Cell {
                            name: name.to_ascii_lowercase(),
                            server: si,
                            engine: e.clone(),
                            variant: *v,
                            threads: t,
                        });
                    }
                }
            }
        }
        out
    }
}

/// `run` flags that the suite sets per cell.
const FORBIDDEN: &[&str] = &[
    "target",
    "engine",
    "threads",
    "results_dir",
    "results-dir",
    "server",
    "server_pid",
    "server-pid",
    "format",
    "metrics_addr",
    "metrics-addr",
];

fn flag_value(k: &str, v: &toml::Value) -> Result<Vec<String>> {
    let flag = format!("--{}", k.replace('_', "-"));
    Ok(match v {
        toml::Value::String(s) => vec![flag, s.clone()],
        toml::Value::Integer(i) => vec![flag, i.to_string()],
        toml::Value::Float(f) => vec![flag, f.to_string()],
        toml::Value::Boolean(true) => vec![flag],
        toml::Value::Boolean(false) => vec![],
        toml::Value::Array(a) => vec![
            flag,
            a.iter()
                .map(|x| match x {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(","),
        ],
        _ => {
            return Err(Error::usage(format!(
                "[run] {k}: use a string, number, boolean or list"
            )))
        }
    })
}

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

/// The suite's HTML report: the cells of one (server, variant, engine) differ only in their
/// thread count, so their points are merged into one series named after the cell group.
fn write_report(cells: &[Cell], out_dir: &Path, owners: crate::report::Owners) {
    let mut groups: Vec<(String, crate::report::ResultDoc)> = Vec::new();
    for c in cells {
        let Some(doc) = cell_dir_result(&out_dir.join(&c.name), owners) else {
            continue;
        };
        let group = c
            .name
            .rsplit_once("-t")
            .map(|(g, _)| g.to_string())
            .unwrap_or_else(|| c.name.clone());
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
    let html = crate::report::html::render_labeled(&docs, labels, owners);
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

pub fn run(a: &SuiteArgs, reg: &crate::workload::Registry) -> Result<ExitCode> {
    let plan = Plan::load(&a.plan, a.quick)?;
    if let Some(addr) = &a.metrics_addr {
        crate::live::metrics::check_addr(addr)?;
    }
    let out_dir = PathBuf::from(a.results_dir.clone().unwrap_or_else(|| {
        format!(
            "enginebench-results/suite-{}{}",
            plan.name,
            if a.quick { "-quick" } else { "" }
        )
    }));
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| Error::usage(format!("--results-dir {}: {e}", out_dir.display())))?;
    interrupt::install();
    let cells = plan.cells();
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
    // Cells run in this invocation and their time: the ETA of the rest.
    let (mut ran, mut ran_s) = (0usize, 0.0f64);
    'servers: for si in 0..plan.servers.len() {
        let mine: Vec<&&Cell> = todo.iter().filter(|c| c.server == si).collect();
        if mine.is_empty() {
            continue;
        }
        let entry = &plan.servers[si];
        let spec = ServerSpec::parse(&entry.server, &entry.opts, None, false)?;
        eprintln!(
            "suite: starting {} for {} cell(s)",
            entry.server,
            mine.len()
        );
        let mut server = match Server::start(&spec) {
            Ok(s) => s,
            Err(e) if matches!(e.failure, Failure::Interrupted(_)) => {
                interrupted = true;
                break 'servers;
            }
            Err(e) => {
                failed.push(format!("{}: {}", entry.server, e.message));
                continue;
            }
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
            let mut args: Vec<String> = vec![
                "run".into(),
                plan.workload.clone(),
                "--target".into(),
                server.url.clone(),
                "--server-pid".into(),
                server.pid.to_string(),
                "--server-label".into(),
                format!("{}:{}", spec.kind.name(), spec.profile),
                "--threads".into(),
                cell.threads.to_string(),
                "--results-dir".into(),
                dir.display().to_string(),
                // stdout is not kept; table keeps the cell's progress lines on a terminal.
                "--format".into(),
                "table".into(),
            ];
            if let Some(addr) = &a.metrics_addr {
                args.extend(["--metrics-addr".into(), addr.clone()]);
            }
            if let Some(e) = &cell.engine {
                args.extend(["--engine".into(), e.clone()]);
            }
            let mut flags = plan.run.clone();
            if let Some(v) = cell.variant {
                flags.extend(plan.variants[v].run.clone());
            }
            for (k, v) in &flags {
                args.extend(flag_value(k, v)?);
            }
            let eta = match ran {
                0 => String::new(),
                n => format!(
                    ", ETA {}",
                    human_eta(ran_s / n as f64 * (todo.len() - ran) as f64)
                ),
            };
            eprintln!("suite: cell {}/{} {}{eta}", ran + 1, todo.len(), cell.name);
            let t0 = std::time::Instant::now();
            let end = run_cell(&exe, &args, &dir);
            ran += 1;
            ran_s += t0.elapsed().as_secs_f64();
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
        eprintln!("suite: stopping the {}", server.describe());
        server.stop()?;
    }
    let summary = summarize(&plan, &cells, &out_dir);
    let path = out_dir.join("summary.md");
    let _ = crate::report::json::write_text_atomic(&path, &summary);
    print!("{summary}");
    eprintln!("summary: {}", path.display());
    write_report(&cells, &out_dir, &reg.owners());
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

/// A time left, roughly: "40 s", "12 min", "3.5 h".
fn human_eta(s: f64) -> String {
    if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 120.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}

/// Run one cell as a child `enginebench run`, in its own process group: a Ctrl-C reaches only
/// the suite, which forwards exactly one SIGINT (two would end the child before it saves).
fn run_cell(exe: &Path, args: &[String], dir: &Path) -> CellEnd {
    let mut c = Command::new(exe);
    c.args(args).stdin(Stdio::null()).stdout(Stdio::null());
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

/// The suite's summary (Markdown): ops/s per operation × cell, CPU per op and client share,
/// and the settings that differ between the servers (or are equal but not default).
pub fn summarize(plan: &Plan, cells: &[Cell], out_dir: &Path) -> String {
    let mut s = format!("# Suite {} ({})\n\n", plan.name, plan.workload);
    s.push_str("| cell | status | operation | threads | ops/s (max) | p95 us | client us/op | server us/op | client share | disturbed runs |\n|---|---|---|---|---|---|---|---|---|---|\n");
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
            plan.server_name(c.server),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_in_stable_order_and_quick_overrides() {
        let dir = tempfile_dir();
        let p = dir.join("p.toml");
        std::fs::write(
            &p,
            r#"
name = "t"
workload = "micro-read"
engines = ["InnoDB", "MyISAM"]
threads = [1, 4, 16]
[[servers]]
server = "mariadb:read-2007"
[[servers]]
server = "postgres:default"
[run]
table_size = "1M"
[quick]
threads = [1, 2]
servers = [{ server = "mariadb:small" }]
[quick.run]
table_size = "2k"
"#,
        )
        .unwrap();
        let full = Plan::load(p.to_str().unwrap(), false).unwrap();
        let names: Vec<String> = full.cells().into_iter().map(|c| c.name).collect();
        assert_eq!(names.len(), 2 * 3 + 3);
        assert_eq!(names[0], "mariadb-read-2007-innodb-t1");
        assert_eq!(names[8], "postgres-default-default-t16");
        let q = Plan::load(p.to_str().unwrap(), true).unwrap();
        assert_eq!(q.cells().len(), 4);
        assert_eq!(q.run["table_size"].as_str(), Some("2k"));
        std::fs::write(&p, "name='x'\nworkload='micro-read'\nthreads=[1]\nservers=[{server='mariadb'}]\n[run]\nthreads='1'\n").unwrap();
        assert!(Plan::load(p.to_str().unwrap(), false).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("eb-plan-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
