//! A plan: the servers, the sections (each one workload's matrix of variants × engines ×
//! thread counts with its own run flags), and the claims of the report it redoes.
//!
//! The one-workload form of earlier plans (`workload`, `engines`, `threads`, `run`, `variants`
//! at the top) is one section whose cells keep their old names, so a suite started with an
//! older enginebench resumes.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::claim::Claim;
use crate::error::{Error, Result};
use crate::server::ServerSpec;

/// A server of the matrix: one started privately (`server = "mariadb:PROFILE"`) or one that
/// already runs (`url = "mysql://user@host:3306/db"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    /// `mariadb:PROFILE` or `postgres:PROFILE`: started by the suite, stopped after its cells.
    #[serde(default)]
    pub server: Option<String>,
    /// An existing server (MySQL, a cloud instance): its cells run against it as it is. A
    /// password is better given by MYSQL_PWD / PGPASSWORD than in the file.
    #[serde(default)]
    pub url: Option<String>,
    /// Name of this server in cell names and claims (default: the profile as `kind-profile`;
    /// required with `url`).
    #[serde(default)]
    pub name: Option<String>,
    /// `--server-opt` settings (started servers only).
    #[serde(default)]
    pub opts: Vec<String>,
}

impl ServerEntry {
    /// Its name in cells and claims.
    pub fn name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| self.server.as_deref().unwrap_or("server").replace(':', "-"))
    }

    /// The server's kind as cells need it: PostgreSQL has no engine axis.
    pub fn is_postgres(&self) -> bool {
        let s = self.server.as_deref().or(self.url.as_deref()).unwrap_or("");
        s.starts_with("postgres") || s.starts_with("pg")
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    #[serde(default)]
    pub run: BTreeMap<String, toml::Value>,
}

// The scale is a flag's value (`--scale`), so it lives with the command line (a floor below).
pub use crate::cli::Scale;

/// Values that replace a section's at a smaller scale (`[sections.quick]`,
/// `[sections.standard]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaledSection {
    #[serde(default)]
    pub engines: Option<Vec<String>>,
    #[serde(default)]
    pub threads: Option<Vec<usize>>,
    #[serde(default)]
    pub variants: Option<Vec<Variant>>,
    #[serde(default)]
    pub repeats: Option<u32>,
    /// Merged over `run` (keys here win).
    #[serde(default)]
    pub run: BTreeMap<String, toml::Value>,
}

/// One workload's matrix.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    /// The section's name in cell names and claims (default: the workload's).
    #[serde(default)]
    pub name: String,
    pub workload: String,
    /// MariaDB storage engines (ignored for PostgreSQL, which has one).
    #[serde(default)]
    pub engines: Vec<String>,
    #[serde(default = "one_thread")]
    pub threads: Vec<usize>,
    /// Flags given to every cell's `run` (`table_size = "1M"` → `--table-size 1M`).
    #[serde(default)]
    pub run: BTreeMap<String, toml::Value>,
    /// Further axis: named sets of extra `run` flags (storage formats, settings).
    #[serde(default)]
    pub variants: Vec<Variant>,
    /// Names of the servers this section runs on (default: every server of the plan).
    #[serde(default)]
    pub servers: Vec<String>,
    /// How many times each cell's `run` is done, each its own result (default 1): a metric
    /// measured once per run (load time, sizes, sql-bench totals) then has a spread.
    #[serde(default = "one_repeat")]
    pub repeats: u32,
    #[serde(default)]
    pub quick: Option<ScaledSection>,
    #[serde(default)]
    pub standard: Option<ScaledSection>,
}

impl Section {
    fn scaled(&self, scale: Scale) -> Option<&ScaledSection> {
        match scale {
            Scale::Full => None,
            Scale::Quick => self.quick.as_ref(),
            Scale::Standard => self.standard.as_ref(),
        }
    }
}

fn one_repeat() -> u32 {
    1
}

fn one_thread() -> Vec<usize> {
    vec![1]
}

/// `[quick]` / `[standard]` values of the whole plan.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scaled {
    #[serde(default)]
    pub servers: Option<Vec<ServerEntry>>,
    /// One-workload plans: the section's scaled values at the top.
    #[serde(default)]
    pub engines: Option<Vec<String>>,
    #[serde(default)]
    pub threads: Option<Vec<usize>>,
    #[serde(default)]
    pub repeats: Option<u32>,
    #[serde(default)]
    pub run: BTreeMap<String, toml::Value>,
}

impl Scaled {
    /// The one-workload form: the top-level values as the section's.
    fn section(&self) -> ScaledSection {
        ScaledSection {
            engines: self.engines.clone(),
            threads: self.threads.clone(),
            variants: None,
            repeats: self.repeats,
            run: self.run.clone(),
        }
    }
}

/// The plan file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    name: String,
    #[serde(default)]
    title: Option<String>,
    /// The report redone: where it was published and what it measured.
    #[serde(default)]
    report: Option<String>,
    /// How the report's sizes were scaled to this plan's (ratios kept).
    #[serde(default)]
    scale: Option<String>,
    servers: Vec<ServerEntry>,
    #[serde(default)]
    workload: Option<String>,
    #[serde(default)]
    engines: Vec<String>,
    #[serde(default)]
    threads: Vec<usize>,
    #[serde(default)]
    run: BTreeMap<String, toml::Value>,
    #[serde(default)]
    variants: Vec<Variant>,
    #[serde(default = "one_repeat")]
    repeats: u32,
    #[serde(default)]
    sections: Vec<Section>,
    #[serde(default)]
    claims: Vec<Claim>,
    #[serde(default)]
    quick: Option<Scaled>,
    #[serde(default)]
    standard: Option<Scaled>,
}

impl RawPlan {
    fn scaled(&self, scale: Scale) -> Option<&Scaled> {
        match scale {
            Scale::Full => None,
            Scale::Quick => self.quick.as_ref(),
            Scale::Standard => self.standard.as_ref(),
        }
    }
}

/// A parsed, checked plan (with `--quick` or `--scale` applied when asked).
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub title: Option<String>,
    pub report: Option<String>,
    pub scale: Option<String>,
    pub servers: Vec<ServerEntry>,
    pub sections: Vec<Section>,
    pub claims: Vec<Claim>,
    /// Written in the one-workload form: cells are named without the section.
    pub single: bool,
    /// An A/A calibration's plan: the claims of the report's plan it was made from, whose
    /// metrics (beyond each operation's ops_per_s) it compares too. Empty otherwise.
    pub calibrates: Vec<Claim>,
}

/// One cell of the matrix: one `enginebench run`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub name: String,
    pub section: usize,
    pub server: usize,
    pub engine: Option<String>,
    pub variant: Option<usize>,
    pub threads: usize,
}

impl Cell {
    /// The name shared by the cells that differ only in their thread count (one series of the
    /// page).
    pub fn group(&self) -> &str {
        self.name
            .rsplit_once("-t")
            .map(|(g, _)| g)
            .unwrap_or(&self.name)
    }
}

/// More repeats of one cell than this are a typo, not a plan (each is a whole `run`).
const MAX_REPEATS: u32 = 20;

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

impl Plan {
    pub fn load(path: &str, scale: Scale) -> Result<Plan> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::usage(format!("cannot read plan {path}: {e}")))?;
        Self::from_text(&text, path, scale)
    }

    /// Parse and validate a plan's text (`path` only names it in errors); also the fuzz entry.
    pub fn from_text(text: &str, path: &str, scale: impl Into<Scale>) -> Result<Plan> {
        let scale = scale.into();
        let raw: RawPlan = toml::from_str(text).map_err(|e| {
            Error::usage(format!(
                "plan {path}: {}",
                crate::error::one_line(&e.to_string())
            ))
        })?;
        // Claims are checked against the full matrix: a quick run lacks some cells (the
        // report's highest thread counts), and its claims on them say `not measured`.
        let full = Self::from_raw(raw.clone(), path, Scale::Full)?;
        full.validate(path, true)?;
        if scale == Scale::Full {
            return Ok(full);
        }
        let plan = Self::from_raw(raw, path, scale)?;
        plan.validate(path, false)?;
        Ok(plan)
    }

    fn from_raw(mut raw: RawPlan, path: &str, scale: Scale) -> Result<Plan> {
        let single = raw.workload.is_some();
        let mut sections = std::mem::take(&mut raw.sections);
        match (raw.workload.take(), sections.is_empty()) {
            (Some(workload), true) => sections.push(Section {
                name: String::new(),
                workload,
                engines: std::mem::take(&mut raw.engines),
                threads: std::mem::take(&mut raw.threads),
                run: std::mem::take(&mut raw.run),
                variants: std::mem::take(&mut raw.variants),
                servers: Vec::new(),
                repeats: raw.repeats,
                quick: raw.quick.as_ref().map(Scaled::section),
                standard: raw.standard.as_ref().map(Scaled::section),
            }),
            (Some(_), false) => {
                return Err(Error::usage(format!(
                    "plan {path}: give either `workload` at the top or [[sections]], not both"
                )))
            }
            (None, true) => {
                return Err(Error::usage(format!(
                    "plan {path}: no workload: give `workload = \"...\"` or [[sections]]"
                )))
            }
            (None, false) => {
                if !raw.engines.is_empty()
                    || !raw.threads.is_empty()
                    || !raw.run.is_empty()
                    || !raw.variants.is_empty()
                    || raw.repeats != 1
                {
                    return Err(Error::usage(format!(
                        "plan {path}: with [[sections]], engines, threads, run, variants and repeats belong to each section"
                    )));
                }
            }
        }
        for s in &mut sections {
            if s.name.is_empty() && !single {
                s.name = s.workload.clone();
            }
        }
        let mut servers = std::mem::take(&mut raw.servers);
        if let Some(table) = scale.table() {
            let top = raw.scaled(scale);
            if top.is_none() && sections.iter().all(|s| s.scaled(scale).is_none()) {
                return Err(Error::usage(format!(
                    "--{}: plan {path} has no [{table}] values",
                    if scale == Scale::Quick {
                        "quick".to_string()
                    } else {
                        format!("scale {table}")
                    }
                )));
            }
            if let Some(s) = top.and_then(|q| q.servers.clone()) {
                servers = s;
            }
            for s in &mut sections {
                let Some(q) = s.scaled(scale).cloned() else {
                    continue;
                };
                if let Some(e) = q.engines {
                    s.engines = e;
                }
                if let Some(t) = q.threads {
                    s.threads = t;
                }
                if let Some(v) = q.variants {
                    s.variants = v;
                }
                if let Some(r) = q.repeats {
                    s.repeats = r;
                }
                s.run.extend(q.run);
            }
        }
        Ok(Plan {
            name: raw.name,
            title: raw.title,
            report: raw.report,
            scale: raw.scale,
            servers,
            sections,
            claims: raw.claims,
            single,
            calibrates: Vec::new(),
        })
    }

    fn validate(&self, path: &str, claim_cells: bool) -> Result<()> {
        let bad = |m: String| Error::usage(format!("plan {path}: {m}"));
        let reg = crate::registry::Registry::default();
        if self.servers.is_empty() {
            return Err(bad("needs at least one [[servers]] entry".into()));
        }
        let mut names = Vec::new();
        for s in &self.servers {
            match (&s.server, &s.url) {
                (Some(kind), None) => {
                    let spec = ServerSpec::parse(kind, &s.opts, None, false)
                        .map_err(|e| e.context(format!("plan {path}")))?;
                    if !spec.topology.is_single() {
                        return Err(bad(format!(
                            "server {kind}: a suite does not start clusters yet; start it with `enginebench server start {kind}` and give its URL as `url`"
                        )));
                    }
                }
                (None, Some(url)) => {
                    if s.name.is_none() {
                        return Err(bad(format!(
                            "the server at {} needs a `name`",
                            crate::db::url::redact_raw(url)
                        )));
                    }
                    if !s.opts.is_empty() {
                        return Err(bad(format!(
                            "server {}: `opts` apply only to servers the suite starts",
                            s.name()
                        )));
                    }
                    crate::db::TargetSpec::parse(url, |_| None).map_err(|e| {
                        bad(format!(
                            "server {}: {}",
                            s.name(),
                            crate::error::one_line(&e)
                        ))
                    })?;
                }
                _ => {
                    return Err(bad(
                        "each [[servers]] entry needs exactly one of `server` (started by the suite) or `url` (an existing server)".into(),
                    ))
                }
            }
            let n = s.name();
            if names.contains(&n) {
                return Err(bad(format!("two servers are named '{n}'")));
            }
            names.push(n);
        }
        let mut section_names = Vec::new();
        for (si, s) in self.sections.iter().enumerate() {
            let label = if s.name.is_empty() {
                s.workload.clone()
            } else {
                s.name.clone()
            };
            let Some(entry) = reg.find(&s.workload) else {
                return Err(bad(format!(
                    "section {label}: unknown workload '{}'; known workloads: {} (see `enginebench list`)",
                    s.workload,
                    reg.names().join(", ")
                )));
            };
            if section_names.contains(&s.name) {
                return Err(bad(format!("two sections are named '{}'", s.name)));
            }
            section_names.push(s.name.clone());
            if !(1..=MAX_REPEATS).contains(&s.repeats) {
                return Err(bad(format!(
                    "section {label}: repeats = {} (give 1 to {MAX_REPEATS})",
                    s.repeats
                )));
            }
            if s.threads.is_empty() || s.threads.contains(&0) {
                return Err(bad(format!(
                    "section {label}: needs thread counts, each at least 1"
                )));
            }
            if !entry.takes_threads() && s.threads != [1] {
                return Err(bad(format!(
                    "section {label}: {} runs on one connection and takes no thread count; use threads = [1]",
                    s.workload
                )));
            }
            if let Some(n) = s.servers.iter().find(|n| !names.contains(n)) {
                return Err(bad(format!(
                    "section {label}: no server is named '{n}' (servers: {})",
                    names.join(", ")
                )));
            }
            for (k, v) in s
                .run
                .iter()
                .chain(s.variants.iter().flat_map(|v| v.run.iter()))
            {
                if FORBIDDEN.contains(&k.as_str()) {
                    return Err(bad(format!(
                        "section {label}: '{k}' is set by the suite itself (per cell); remove it from run"
                    )));
                }
                flag_value(k, v).map_err(|e| e.context(format!("plan {path}")))?;
            }
            // Every cell's flags as `run` will read them: a misspelt or foreign option is
            // refused now, not after hours of other cells.
            let variants: Vec<Option<usize>> = if s.variants.is_empty() {
                vec![None]
            } else {
                (0..s.variants.len()).map(Some).collect()
            };
            for v in variants {
                let mut argv = vec![s.workload.clone()];
                argv.extend(self.section_flags(si, v)?);
                crate::registry::parse_workload::<crate::cli::RunArgs>(&reg, "run", &argv)
                    .map_err(|e| {
                        let within = v.map_or(String::new(), |v| {
                            format!(" variant {}", s.variants[v].name)
                        });
                        bad(format!("section {label}{within}: {}", e.message))
                    })?;
            }
        }
        let cells = self.cells();
        let owners = reg.owners();
        for c in &self.claims {
            c.validate(self, &cells, &owners, claim_cells)
                .map_err(|m| bad(format!("claim {}: {m}", c.id)))?;
        }
        Ok(())
    }

    /// The servers a section runs on.
    pub fn section_servers(&self, si: usize) -> Vec<usize> {
        let s = &self.sections[si];
        (0..self.servers.len())
            .filter(|&i| s.servers.is_empty() || s.servers.contains(&self.servers[i].name()))
            .collect()
    }

    /// The cells in the order they run: server, section, variant, engine, threads.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        for (vi, server) in self.servers.iter().enumerate() {
            for (si, s) in self.sections.iter().enumerate() {
                if !self.section_servers(si).contains(&vi) {
                    continue;
                }
                let variants: Vec<Option<usize>> = if s.variants.is_empty() {
                    vec![None]
                } else {
                    (0..s.variants.len()).map(Some).collect()
                };
                let engines: Vec<Option<String>> = if server.is_postgres() || s.engines.is_empty() {
                    vec![None]
                } else {
                    s.engines.iter().cloned().map(Some).collect()
                };
                for v in &variants {
                    for e in &engines {
                        for &t in &s.threads {
                            let mut parts = Vec::new();
                            if !s.name.is_empty() {
                                parts.push(s.name.clone());
                            }
                            parts.push(server.name());
                            if let Some(v) = v {
                                parts.push(s.variants[*v].name.clone());
                            }
                            parts.push(e.clone().unwrap_or_else(|| "default".into()));
                            parts.push(format!("t{t}"));
                            out.push(Cell {
                                name: file_name(&parts.join("-")),
                                section: si,
                                server: vi,
                                engine: e.clone(),
                                variant: *v,
                                threads: t,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// The `run` flags of a cell, from its section and variant.
    pub fn cell_flags(&self, c: &Cell) -> Result<Vec<String>> {
        self.section_flags(c.section, c.variant)
    }

    /// The `run` flags of a section with one of its variants (or none).
    fn section_flags(&self, section: usize, variant: Option<usize>) -> Result<Vec<String>> {
        let s = &self.sections[section];
        let mut flags = s.run.clone();
        if let Some(v) = variant {
            flags.extend(s.variants[v].run.clone());
        }
        let mut out = Vec::new();
        for (k, v) in &flags {
            out.extend(flag_value(k, v)?);
        }
        Ok(out)
    }
}

/// A name safe as a folder name: ASCII letters, digits, `-_.`; lower case.
fn file_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

pub(super) fn flag_value(k: &str, v: &toml::Value) -> Result<Vec<String>> {
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
                "run {k}: use a string, number, boolean or list"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_in_stable_order_and_quick_overrides() {
        let text = r#"
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
"#;
        let full = Plan::from_text(text, "p.toml", false).unwrap();
        let names: Vec<String> = full.cells().into_iter().map(|c| c.name).collect();
        assert_eq!(names.len(), 2 * 3 + 3);
        assert_eq!(names[0], "mariadb-read-2007-innodb-t1");
        assert_eq!(names[8], "postgres-default-default-t16");
        let q = Plan::from_text(text, "p.toml", true).unwrap();
        assert_eq!(q.cells().len(), 4);
        assert_eq!(q.sections[0].run["table_size"].as_str(), Some("2k"));
        assert_eq!(q.sections[0].repeats, 1);
        // No [standard] table: --scale standard is refused, naming it.
        let m = Plan::from_text(text, "p.toml", Scale::Standard)
            .unwrap_err()
            .message;
        assert!(
            m.contains("--scale standard: plan p.toml has no [standard] values"),
            "{m}"
        );
        // [standard] has [quick]'s shape and is laid over the full plan the same way;
        // repeats come from the top (one-workload form) or the scale's table.
        let standard = text
            .replace("threads = [1, 4, 16]\n", "threads = [1, 4, 16]\nrepeats = 2\n")
            .replace(
                "[quick]\n",
                "[standard]\nthreads = [4]\nrepeats = 3\n[standard.run]\ntable_size = \"100k\"\n[quick]\n",
            );
        let full = Plan::from_text(&standard, "p.toml", Scale::Full).unwrap();
        assert_eq!(full.sections[0].repeats, 2);
        let st = Plan::from_text(&standard, "p.toml", Scale::Standard).unwrap();
        assert_eq!(st.sections[0].threads, [4]);
        assert_eq!(st.sections[0].repeats, 3);
        assert_eq!(st.sections[0].run["table_size"].as_str(), Some("100k"));
        assert_eq!(st.cells().len(), 3);
        let q = Plan::from_text(&standard, "p.toml", Scale::Quick).unwrap();
        assert_eq!(q.sections[0].repeats, 2);
        let zero = standard.replace("repeats = 3", "repeats = 0");
        let m = Plan::from_text(&zero, "p.toml", Scale::Standard)
            .unwrap_err()
            .message;
        assert!(m.contains("repeats = 0 (give 1 to 20)"), "{m}");
        let forbidden = "name='x'\nworkload='micro-read'\nthreads=[1]\nservers=[{server='mariadb'}]\n[run]\nthreads='1'\n";
        assert!(Plan::from_text(forbidden, "p.toml", false).is_err());
    }

    #[test]
    fn sections_run_in_order_on_their_servers() {
        let text = r#"
name = "t"
[[servers]]
server = "mariadb:small"
[[servers]]
url = "mysql://bench:secret@db.example:3306/x"
name = "mysql80"
[[sections]]
workload = "tpcc"
threads = [1, 8]
variants = [{ name = "plain" }, { name = "lz4", run = { table_options = "PAGE_COMPRESSED=1" } }]
[sections.quick]
threads = [2]
[[sections]]
name = "lb"
workload = "linkbench"
servers = ["mariadb-small"]
repeats = 3
[sections.standard]
repeats = 2
"#;
        let p = Plan::from_text(text, "p.toml", false).unwrap();
        let names: Vec<String> = p.cells().into_iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "tpcc-mariadb-small-plain-default-t1",
                "tpcc-mariadb-small-plain-default-t8",
                "tpcc-mariadb-small-lz4-default-t1",
                "tpcc-mariadb-small-lz4-default-t8",
                "lb-mariadb-small-default-t1",
                "tpcc-mysql80-plain-default-t1",
                "tpcc-mysql80-plain-default-t8",
                "tpcc-mysql80-lz4-default-t1",
                "tpcc-mysql80-lz4-default-t8",
            ]
        );
        let lz4 = &p.cells()[2];
        assert_eq!(
            p.cell_flags(lz4).unwrap(),
            ["--table-options", "PAGE_COMPRESSED=1"]
        );
        let q = Plan::from_text(text, "p.toml", true).unwrap();
        assert_eq!(q.cells().len(), 2 + 1 + 2);
        assert_eq!(q.sections[1].repeats, 3);
        // A section's [sections.standard] alone makes the plan's standard scale.
        let st = Plan::from_text(text, "p.toml", Scale::Standard).unwrap();
        assert_eq!(
            (st.sections[0].threads.len(), st.sections[1].repeats),
            (2, 2)
        );
        // Bad plans: one line each, never the password.
        let bad = |t: &str| Plan::from_text(t, "p.toml", false).unwrap_err().message;
        let m = bad(&text.replace(
            "threads = [1, 8]",
            "threads = [1, 8]\nrun = { maxid1 = 10 }",
        ));
        assert!(
            m.contains("section tpcc variant plain: --maxid1 does not apply to tpcc"),
            "{m}"
        );
        let m = bad(&text.replace("workload = \"linkbench\"", "workload = \"linkbnch\""));
        assert!(m.contains("unknown workload 'linkbnch'"), "{m}");
        let m = bad(&text.replace(
            "mysql://bench:secret@db.example:3306/x",
            "mysql//bench:secret@db",
        ));
        assert!(m.contains("server mysql80") && !m.contains("secret"), "{m}");
        let m = bad(&text.replace("servers = [\"mariadb-small\"]", "servers = [\"nope\"]"));
        assert!(m.contains("no server is named 'nope'"), "{m}");
        let m = bad(&text.replace("name = \"mysql80\"\n", ""));
        assert!(m.contains("needs a `name`") && !m.contains("secret"), "{m}");
        // sql-bench takes no thread count: a section gives [1] or is refused.
        let sql = |threads: &str| {
            text.replace(
                "workload = \"linkbench\"",
                &format!("workload = \"sqlbench\"\nthreads = {threads}"),
            )
        };
        assert!(Plan::from_text(&sql("[1]"), "p.toml", false).is_ok());
        let m = bad(&sql("[1, 4]"));
        assert!(
            m.contains("section lb: sqlbench runs on one connection"),
            "{m}"
        );
    }
}
