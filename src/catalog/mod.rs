//! The catalog: every result recorded in one place (an SQLite file per user by default, or a
//! team's PostgreSQL database), with the columns people filter on indexed beside the result
//! itself, so that `history`, trends and a gate against the recent past need no folders.
//! docs/catalog.md.
//!
//! This module stands low: it reads the result model and talks to its store, and knows no
//! command line, harness, suite or workload.

mod columns;
mod query;
mod same;
mod store;
pub mod trend;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{mean_var, ResultDoc, Status};
use crate::report::Owners;
pub use columns::{Figures, HistoryRow};
pub use query::{
    csv as history_csv, short_version, table as history_table, wide as history_wide, Filter,
};
pub use same::{short as short_part, Sameness};
pub use store::{default_path, SCHEMA_VERSION};
use store::{Store, Val};

/// The environment variable naming the catalog (a path or a postgres:// URL; `off` for none).
pub const ENV: &str = "ENGINEBENCH_CATALOG";

/// Where the catalog is.
#[derive(Debug, Clone, PartialEq)]
pub enum Location {
    Sqlite(PathBuf),
    /// A PostgreSQL URL (it may hold a password: show it with [`Location::display`]).
    Postgres(String),
    /// `--no-catalog` or ENGINEBENCH_CATALOG=off: nothing is recorded.
    Off,
}

impl Location {
    /// From `--catalog`, `--no-catalog`, then ENGINEBENCH_CATALOG, then the user's default.
    /// A value that cannot name a catalog is a usage error (checked before any run).
    pub fn choose(flag: Option<&str>, off: bool) -> Result<Location> {
        if off {
            return Ok(Location::Off);
        }
        let (given, from) = match flag {
            Some(f) => (Some(f.to_string()), "--catalog"),
            None => (
                std::env::var(ENV).ok().filter(|v| !v.trim().is_empty()),
                ENV,
            ),
        };
        match given {
            Some(v) => Location::parse(v.trim()).map_err(|e| Error::usage(format!("{from}: {e}"))),
            None => Ok(default_path().map_or(Location::Off, Location::Sqlite)),
        }
    }

    fn parse(v: &str) -> std::result::Result<Location, String> {
        if matches!(v, "off" | "none") {
            return Ok(Location::Off);
        }
        if v.starts_with("postgres://") || v.starts_with("postgresql://") {
            return Ok(Location::Postgres(v.to_string()));
        }
        if let Some(p) = v.strip_prefix("sqlite://") {
            if p.is_empty() {
                return Err("sqlite:// needs a path, e.g. sqlite:///var/lib/eb/catalog.db".into());
            }
            return Ok(Location::Sqlite(PathBuf::from(p)));
        }
        if let Some((scheme, _)) = v.split_once("://") {
            return Err(format!(
                "a catalog is an SQLite file (a path or sqlite:///path) or a postgres:// URL, not {scheme}://"
            ));
        }
        Ok(Location::Sqlite(PathBuf::from(v)))
    }

    /// Where it is, for the user: a path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(u) => match url::Url::parse(u) {
                Ok(mut p) => {
                    if p.password().is_some() {
                        let _ = p.set_password(Some("***"));
                    }
                    p.to_string()
                }
                Err(_) => "a postgres:// URL".into(),
            },
            Location::Off => "off".into(),
        }
    }
}

/// An open catalog.
pub struct Catalog {
    store: Store,
    pub location: Location,
    /// The headline figures its owners declare (columns of `points`).
    figures: Vec<String>,
}

/// What recording a result did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Added(i64),
    /// The same result (same content) was already there, under this id.
    Already(i64),
}

impl Catalog {
    /// Open (creating and migrating) the catalog at `loc`. Errors are one line, without the
    /// password of a URL. `owners` say which workload options are not the work (a migration
    /// computes the identities of the results the catalog holds).
    pub fn open(loc: &Location, owners: Owners) -> Result<Catalog> {
        let store = match loc {
            Location::Sqlite(p) => Store::sqlite(p),
            Location::Postgres(u) => Store::postgres(u),
            Location::Off => {
                return Err(Error::usage(
                    "the catalog is off (--no-catalog or ENGINEBENCH_CATALOG=off)",
                ))
            }
        };
        let fail = |e: String| Error::usage(format!("catalog {}: {e}", loc.display()));
        let figures = columns::headline(owners).map_err(fail)?;
        let mut store = store.map_err(fail)?;
        store
            .migrate(|store, had| {
                fill_new_columns(store, had, owners)?;
                let added = columns::add_figure_columns(store, &figures)?;
                fill_figures(store, &added, owners)
            })
            .map_err(fail)?;
        Ok(Catalog {
            store,
            location: loc.clone(),
            figures,
        })
    }

    fn err(&self, e: String) -> Error {
        Error::usage(format!("catalog {}: {e}", self.location.display()))
    }

    /// Record one result file's text (`source`: where it came from). The same content
    /// recorded twice is kept once. v1 results are upgraded by `owners` for the indexed
    /// columns; the text is stored as it was.
    pub fn record(&mut self, text: &str, source: &str, owners: Owners) -> Result<Recorded> {
        let not_result = |e: serde_json::Error| {
            Error::usage(format!("{source} is not an enginebench result: {e}"))
        };
        let value: Value = serde_json::from_str(text).map_err(not_result)?;
        let id = identity(&value);
        // Results record no commit yet; one that does (tool.commit) gets it indexed.
        let commit = value
            .pointer("/tool/commit")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut upgraded = value;
        if upgraded.get("schema_version").and_then(Value::as_u64) == Some(1) {
            crate::report::upgrade_v1(&mut upgraded, owners);
        }
        let doc: ResultDoc = serde_json::from_value(upgraded).map_err(not_result)?;
        let zipped = zstd::encode_all(text.as_bytes(), 3)
            .map_err(|e| Error::run(format!("compressing {source}: {e}")))?;
        let cols = Columns::of(&doc, commit, owners);
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        self.store.begin_write().map_err(|e| self.err(e))?;
        let r = self.insert(&id, &now, source, &cols, zipped, &doc);
        match r {
            Ok(r) => {
                self.store.commit().map_err(|e| self.err(e))?;
                Ok(r)
            }
            Err(e) => {
                let _ = self.store.rollback();
                Err(self.err(e))
            }
        }
    }

    fn insert(
        &mut self,
        id: &str,
        now: &str,
        source: &str,
        c: &Columns,
        zipped: Vec<u8>,
        doc: &ResultDoc,
    ) -> std::result::Result<Recorded, String> {
        let rows = self.store.query(
            "INSERT INTO results (identity, recorded_at, started_at, finished_at, status, workload,
                dbms, target, server_version, engine, options, profile, settings_fingerprint,
                settings, host, host_cores, host_memory_bytes, tool_version, tool_commit, fleet,
                disturbed, source, doc_zstd, config_id, work_id, config_parts)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (identity) DO NOTHING RETURNING id",
            &[
                id.into(),
                now.into(),
                doc.started_at.as_str().into(),
                doc.finished_at.clone().into(),
                status_name(doc.status).into(),
                c.workload.clone().into(),
                doc.target.dbms.as_str().into(),
                doc.target.url.as_str().into(),
                doc.target.server_version.as_str().into(),
                doc.target.engine.as_str().into(),
                c.options.clone().into(),
                c.profile.clone().into(),
                c.fingerprint.clone().into(),
                c.settings.clone().into(),
                doc.host.hostname.as_str().into(),
                Val::Int(doc.host.cores as i64),
                Val::Int(doc.host.memory_bytes as i64),
                doc.tool.version.as_str().into(),
                c.commit.clone().into(),
                c.fleet.clone().into(),
                Val::Int(c.disturbed as i64),
                source.into(),
                Val::Blob(zipped),
                c.same.key().into(),
                c.same.work_key().into(),
                c.same.to_json().into(),
            ],
        )?;
        let Some(new_id) = rows.first().and_then(|r| r[0].int()) else {
            let old = self
                .store
                .query("SELECT id FROM results WHERE identity = ?", &[id.into()])?;
            let old = old.first().and_then(|r| r[0].int()).unwrap_or(0);
            return Ok(Recorded::Already(old));
        };
        for (seq, p) in doc.points.iter().enumerate() {
            let cols = PointStats::of(p, &self.figures).columns();
            let mut vals = vec![
                Val::Int(new_id),
                Val::Int(seq as i64),
                p.operation.as_str().into(),
                Val::Int(p.threads as i64),
                Val::Int(p.runs.len() as i64),
            ];
            vals.extend(cols.iter().map(|(_, v)| v.clone()));
            self.store.exec(&columns::insert_point(&cols), &vals)?;
        }
        Ok(Recorded::Added(new_id))
    }

    /// How many results the catalog holds.
    pub fn count(&mut self) -> Result<u64> {
        let r = self
            .store
            .query("SELECT count(*) FROM results", &[])
            .map_err(|e| self.err(e))?;
        Ok(r.first().and_then(|r| r[0].int()).unwrap_or(0) as u64)
    }

    /// The stored result `id`, as recorded (v1 results upgraded by `owners`).
    pub fn doc(&mut self, id: i64, owners: Owners) -> Result<ResultDoc> {
        let mut v = stored(&mut self.store, id).map_err(|e| self.err(e))?;
        if v.get("schema_version").and_then(Value::as_u64) == Some(1) {
            crate::report::upgrade_v1(&mut v, owners);
        }
        serde_json::from_value(v).map_err(|e| self.err(format!("result #{id}: {e}")))
    }
}

/// The stored result file `id`, as recorded.
fn stored(store: &mut Store, id: i64) -> std::result::Result<Value, String> {
    let rows = store.query("SELECT doc_zstd FROM results WHERE id = ?", &[Val::Int(id)])?;
    let Some(Val::Blob(z)) = rows.into_iter().next().and_then(|r| r.into_iter().next()) else {
        return Err(format!("no result #{id}"));
    };
    let text =
        zstd::decode_all(z.as_slice()).map_err(|e| format!("result #{id} cannot be read: {e}"))?;
    serde_json::from_slice(&text).map_err(|e| format!("result #{id} cannot be read: {e}"))
}

/// Fill the columns a migration added from the result files the catalog holds, for the results
/// recorded before (`had`: the schema version the catalog had).
fn fill_new_columns(
    store: &mut Store,
    had: usize,
    owners: Owners,
) -> std::result::Result<(), String> {
    if had == 1 {
        fill_client_sleeps(store)?;
    }
    if (1..3).contains(&had) {
        fill_identities(store, owners)?;
    }
    Ok(())
}

/// Version 3: each result's identity (its configuration's parts, `same`) and its settings
/// without what names one server start, recomputed from its stored file exactly as a new
/// record computes them.
fn fill_identities(store: &mut Store, owners: Owners) -> std::result::Result<(), String> {
    let ids = store.query("SELECT id, tool_commit FROM results ORDER BY id", &[])?;
    for row in &ids {
        let Some(id) = row[0].int() else { continue };
        let doc = stored(store, id).and_then(|mut v| {
            if v.get("schema_version").and_then(Value::as_u64) == Some(1) {
                crate::report::upgrade_v1(&mut v, owners);
            }
            serde_json::from_value::<ResultDoc>(v).map_err(|e| e.to_string())
        });
        // A file that no longer reads is its own configuration: nothing is comparable to it.
        let cols = match doc {
            Ok(doc) => Columns::of(&doc, row[1].opt_text(), owners),
            Err(_) => {
                store.exec(
                    "UPDATE results SET config_id = ?, work_id = ? WHERE id = ?",
                    &[
                        format!("unread-{id}").into(),
                        format!("unread-{id}").into(),
                        Val::Int(id),
                    ],
                )?;
                continue;
            }
        };
        store.exec(
            "UPDATE results SET config_id = ?, work_id = ?, config_parts = ?, settings = ?,
                settings_fingerprint = ? WHERE id = ?",
            &[
                cols.same.key().into(),
                cols.same.work_key().into(),
                cols.same.to_json().into(),
                cols.settings.clone().into(),
                cols.fingerprint.clone().into(),
                Val::Int(id),
            ],
        )?;
    }
    Ok(())
}

/// A headline figure's column added to a catalog that holds results: filled from the stored
/// result files (v1 ones upgraded by `owners`), as a new record of the same file fills it.
fn fill_figures(
    store: &mut Store,
    added: &[String],
    owners: Owners,
) -> std::result::Result<(), String> {
    if added.is_empty() {
        return Ok(());
    }
    let ids = store.query("SELECT id FROM results ORDER BY id", &[])?;
    for id in ids.iter().filter_map(|r| r[0].int()) {
        // A file that no longer reads keeps its figures empty.
        let Ok(doc) = stored(store, id).and_then(|mut v| {
            if v.get("schema_version").and_then(Value::as_u64) == Some(1) {
                crate::report::upgrade_v1(&mut v, owners);
            }
            serde_json::from_value::<ResultDoc>(v).map_err(|e| e.to_string())
        }) else {
            continue;
        };
        for (seq, p) in doc.points.iter().enumerate() {
            for (name, v) in PointStats::of(p, added).figures.0 {
                if let Some(v) = v {
                    store.exec(
                        &columns::update_figure(&name),
                        &[Val::Real(v), Val::Int(id), Val::Int(seq as i64)],
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// Version 2: the client's sleeps per operation, where the result counted them.
fn fill_client_sleeps(store: &mut Store) -> std::result::Result<(), String> {
    let ids = store.query("SELECT id FROM results ORDER BY id", &[])?;
    for id in ids.iter().filter_map(|r| r[0].int()) {
        // A file that no longer reads keeps its points empty, as before the migration.
        let Ok(doc) = stored(store, id) else {
            continue;
        };
        let points = doc.get("points").and_then(Value::as_array);
        for (seq, p) in points.into_iter().flatten().enumerate() {
            // Points of version-1 files do not read as today's, and counted no sleeps.
            let Ok(p) = crate::report::Point::deserialize(p) else {
                continue;
            };
            let Some(sleeps) = PointStats::of(&p, &[]).client_sleeps_per_op else {
                continue;
            };
            store.exec(
                "UPDATE points SET client_sleeps_per_op = ? WHERE result_id = ? AND seq = ?",
                &[Val::Real(sleeps), Val::Int(id), Val::Int(seq as i64)],
            )?;
        }
    }
    Ok(())
}

/// A result's identity: the SHA-1 of its content with every object's keys sorted, so the
/// same result recorded by its run and imported later (or twice) is one entry.
pub fn identity(v: &Value) -> String {
    use sha1::{Digest, Sha1};
    let mut text = String::new();
    canonical(v, &mut text);
    let d = Sha1::digest(text.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

pub(crate) fn status_name(s: Status) -> &'static str {
    match s {
        Status::Running => "running",
        Status::Complete => "complete",
        Status::Interrupted => "interrupted",
        Status::Failed => "failed",
    }
}

/// The indexed columns of a result that are not plain fields of it.
struct Columns {
    same: Sameness,
    workload: String,
    options: String,
    profile: Option<String>,
    fingerprint: String,
    settings: String,
    commit: Option<String>,
    fleet: Option<String>,
    disturbed: bool,
}

impl Columns {
    fn of(doc: &ResultDoc, commit: Option<String>, owners: Owners) -> Columns {
        let cfg = &doc.config;
        let workload = cfg
            .get("workload")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| doc.points.first().map(|p| p.workload.clone()))
            .unwrap_or_default();
        let mut options = String::new();
        if let Some(o) = cfg
            .get("workload_options")
            .filter(|o| !(o.is_null() || o.as_object().is_some_and(|m| m.is_empty())))
        {
            canonical(o, &mut options);
        }
        let text = settings_text(&settings_compared(doc));
        Columns {
            same: Sameness::of(doc, owners),
            workload,
            options,
            profile: doc.target.server.as_ref().and_then(|s| s.profile.clone()),
            fingerprint: fingerprint_text(&text),
            settings: text,
            commit,
            fleet: fleet_of(doc),
            disturbed: doc.points.iter().flat_map(|p| &p.runs).any(|r| r.disturbed),
        }
    }
}

/// The 12-hex-digit fingerprint of compared settings (the same settings, the same fingerprint).
pub(crate) fn fingerprint_of(settings: &std::collections::BTreeMap<String, String>) -> String {
    fingerprint_text(&settings_text(settings))
}

/// Compared settings as the catalog stores them: canonical JSON.
fn settings_text(settings: &std::collections::BTreeMap<String, String>) -> String {
    let mut text = String::new();
    canonical(
        &serde_json::to_value(settings).unwrap_or_default(),
        &mut text,
    );
    text
}

fn fingerprint_text(text: &str) -> String {
    use sha1::{Digest, Sha1};
    let d = Sha1::digest(text.as_bytes());
    d.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// A fleet result's shape: `merge of N` shards, or `shard I/N`; None for a lone run.
pub(crate) fn fleet_of(doc: &ResultDoc) -> Option<String> {
    match (&doc.fleet, doc.config.get("fleet")) {
        (Some(f), _) => Some(format!("merge of {}", f.shards)),
        (None, Some(f)) if !f.is_null() => f
            .get("shard")
            .map(|s| {
                let i = s.get("index").and_then(Value::as_u64);
                let n = s.get("count").and_then(Value::as_u64);
                match (i, n) {
                    (Some(i), Some(n)) => format!("shard {i}/{n}"),
                    _ => "shard".to_string(),
                }
            })
            .or(Some("shard".into())),
        _ => None,
    }
}

/// The server's settings as compared between results: what names one server start (its paths,
/// ports, pid file, ids) is left out, as `compare` leaves it out.
pub fn settings_compared(doc: &ResultDoc) -> std::collections::BTreeMap<String, String> {
    doc.target
        .settings
        .iter()
        .filter(|(k, v)| !crate::server::capture::ephemeral(k, v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The headline figures of one point, over its measured runs.
#[derive(Debug, Clone, Default)]
pub struct PointStats {
    pub ops_per_s: Option<f64>,
    pub ops_per_s_sd: Option<f64>,
    pub ops_per_s_min: Option<f64>,
    pub ops_per_s_max: Option<f64>,
    pub p99_us: Option<f64>,
    pub client_us_per_op: Option<f64>,
    /// Over the runs that counted them.
    pub client_sleeps_per_op: Option<f64>,
    pub server_us_per_op: Option<f64>,
    /// The headline figures asked for (`Catalog::figures`), by name.
    pub figures: Figures,
    pub disturbed: bool,
}

impl PointStats {
    /// The figures of `p`, with the headline `figures` named.
    pub fn of(p: &crate::report::Point, figures: &[String]) -> PointStats {
        let mean = |v: Vec<f64>| (!v.is_empty()).then(|| mean_var(&v).0);
        let ops: Vec<f64> = p.runs.iter().map(|r| r.ops_per_s).collect();
        let (m, var) = if ops.is_empty() {
            (None, None)
        } else {
            let (m, v) = mean_var(&ops);
            (Some(m), Some(v.sqrt()))
        };
        PointStats {
            ops_per_s: m,
            ops_per_s_sd: var,
            ops_per_s_min: ops.iter().copied().reduce(f64::min),
            ops_per_s_max: ops.iter().copied().reduce(f64::max),
            p99_us: mean(p.runs.iter().map(|r| r.latency_us.p99_us as f64).collect()),
            client_us_per_op: mean(p.runs.iter().map(|r| r.client_cpu.us_per_op).collect()),
            client_sleeps_per_op: mean(
                p.runs
                    .iter()
                    .filter_map(|r| r.client_cpu.voluntary_cs_per_op)
                    .collect(),
            ),
            server_us_per_op: mean(
                p.runs
                    .iter()
                    .filter_map(|r| r.server_process.as_ref().map(|s| s.cpu_us_per_op))
                    .collect(),
            ),
            figures: Figures(
                figures
                    .iter()
                    .map(|n| {
                        (
                            n.clone(),
                            mean(p.runs.iter().filter_map(|r| r.figure(n)).collect()),
                        )
                    })
                    .collect(),
            ),
            disturbed: p.runs.iter().any(|r| r.disturbed),
        }
    }

    /// The columns of `points` these fill (beside its place: result, seq, operation,
    /// threads, runs), with their values.
    fn columns(&self) -> Vec<(String, Val)> {
        let mut c: Vec<(String, Val)> = [
            ("ops_per_s", self.ops_per_s),
            ("ops_per_s_sd", self.ops_per_s_sd),
            ("ops_per_s_min", self.ops_per_s_min),
            ("ops_per_s_max", self.ops_per_s_max),
            ("p99_us", self.p99_us),
            ("client_us_per_op", self.client_us_per_op),
            ("server_us_per_op", self.server_us_per_op),
            ("client_sleeps_per_op", self.client_sleeps_per_op),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v.into()))
        .collect();
        c.push(("disturbed".into(), Val::Int(self.disturbed as i64)));
        c.extend(self.figures.0.iter().map(|(n, v)| (n.clone(), (*v).into())));
        c
    }
}

/// Record a finished run's result file in the catalog chosen for it. A catalog that cannot
/// be opened or written costs the run nothing: its result folder is already on disk, and one
/// line on stderr says why the catalog was skipped.
pub fn record_file(loc: &Location, path: &Path, owners: Owners) {
    if *loc == Location::Off {
        return;
    }
    let r = std::fs::read_to_string(path)
        .map_err(|e| Error::run(format!("cannot read {}: {e}", path.display())))
        .and_then(|text| {
            let mut c = Catalog::open(loc, owners)?;
            c.record(&text, &path.display().to_string(), owners)
        });
    match r {
        Ok(Recorded::Added(id)) => eprintln!("catalog: result #{id} in {}", loc.display()),
        Ok(Recorded::Already(id)) => {
            eprintln!(
                "catalog: already there as result #{id} in {}",
                loc.display()
            )
        }
        Err(e) => eprintln!(
            "catalog skipped ({}); the result is in {}",
            crate::error::one_line(&e.message),
            path.parent().unwrap_or(path).display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_ignores_key_order_and_spacing() {
        let a: Value = serde_json::from_str(r#"{"a": 1, "b": {"y": [1, 2.5], "x": "s"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":{"x":"s","y":[1,2.5]},"a":1}"#).unwrap();
        let c: Value = serde_json::from_str(r#"{"b":{"x":"s","y":[1,2.6]},"a":1}"#).unwrap();
        assert_eq!(identity(&a), identity(&b));
        assert_ne!(identity(&a), identity(&c));
    }

    #[test]
    fn locations() {
        let p = |v: &str| Location::parse(v);
        assert_eq!(p("off"), Ok(Location::Off));
        assert_eq!(p("/x/c.db"), Ok(Location::Sqlite("/x/c.db".into())));
        assert_eq!(
            p("sqlite:///x/c.db"),
            Ok(Location::Sqlite("/x/c.db".into()))
        );
        assert!(p("mysql://u@h/db").is_err());
        let pg = p("postgres://u:secret@h:5432/db").unwrap();
        assert!(!pg.display().contains("secret"));
        assert!(matches!(pg, Location::Postgres(_)));
    }

    #[test]
    fn migrate_twice_and_record_once() {
        let dir = tempfile::tempdir().unwrap();
        let loc = Location::Sqlite(dir.path().join("sub/c.db"));
        let doc = ResultDoc {
            schema_version: 2,
            started_at: "2026-11-27T10:00:00Z".into(),
            config: serde_json::json!({"workload": "w"}),
            points: vec![crate::report::Point {
                operation: "op".into(),
                threads: 2,
                runs: vec![
                    crate::report::RunRecord {
                        ops_per_s: 100.0,
                        ..Default::default()
                    },
                    crate::report::RunRecord {
                        ops_per_s: 110.0,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let text = crate::report::json::to_string(&doc);
        let mut c = Catalog::open(&loc, &[]).unwrap();
        let first = c.record(&text, "a", &[]).unwrap();
        drop(c);
        let mut c = Catalog::open(&loc, &[]).unwrap();
        let Recorded::Added(id) = first else {
            panic!("{first:?}")
        };
        assert_eq!(c.record(&text, "b", &[]).unwrap(), Recorded::Already(id));
        assert_eq!(c.count().unwrap(), 1);
        assert_eq!(c.doc(id, &[]).unwrap().points[0].runs.len(), 2);
    }

    /// What version 3 added, taken away again (SQLite).
    const UNDO_3: &str = "DROP INDEX results_config; ALTER TABLE results DROP COLUMN config_id;
        ALTER TABLE results DROP COLUMN work_id; ALTER TABLE results DROP COLUMN config_parts;";

    /// A catalog of schema version 2 gains the identities: recomputed from the stored files,
    /// the same a new record of the same file gets; the settings column loses what names
    /// one server start.
    #[test]
    fn version_2_gains_identities_a_new_record_would_get() {
        let dir = tempfile::tempdir().unwrap();
        let doc = |ops: f64, port: &str, size: u64| {
            let mut d = ResultDoc {
                schema_version: 2,
                started_at: format!("2026-11-27T10:00:{:02}Z", ops as u64 % 60),
                config: serde_json::json!({"workload": "w", "table_size": size}),
                points: vec![crate::report::Point {
                    operation: "op".into(),
                    threads: 2,
                    runs: vec![crate::report::RunRecord {
                        ops_per_s: ops,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            };
            d.target.settings.insert("port".into(), port.into());
            d.target.settings.insert("buffer".into(), "1G".into());
            d.target.settings.insert("report_port".into(), port.into());
            crate::report::json::to_string(&d)
        };
        let texts = [doc(1.0, "1", 10), doc(2.0, "2", 10), doc(3.0, "3", 20)];
        let (old, new) = (dir.path().join("old.db"), dir.path().join("new.db"));
        let mut c = Catalog::open(&Location::Sqlite(old.clone()), &[]).unwrap();
        for t in &texts {
            c.record(t, "x", &[]).unwrap();
        }
        drop(c);
        let raw = rusqlite::Connection::open(&old).unwrap();
        raw.execute_batch(&format!(
            "{UNDO_3} UPDATE catalog_meta SET value = '2' WHERE key = 'schema_version';
             UPDATE results SET settings = '{{\"buffer\":\"1G\",\"report_port\":\"9\"}}'"
        ))
        .unwrap();
        drop(raw);
        let ids = |path: &Path| {
            let mut c = Catalog::open(&Location::Sqlite(path.to_path_buf()), &[]).unwrap();
            let rows = c.history(&Filter::default()).unwrap();
            let settings = c.settings(rows[0].id).unwrap();
            (
                rows.iter()
                    .map(|r| (r.config_id.clone(), r.work_id.clone()))
                    .collect::<Vec<_>>(),
                settings,
            )
        };
        let (migrated, settings) = ids(&old);
        let mut c = Catalog::open(&Location::Sqlite(new.clone()), &[]).unwrap();
        for t in &texts {
            c.record(t, "x", &[]).unwrap();
        }
        drop(c);
        let (fresh, _) = ids(&new);
        assert_eq!(migrated, fresh);
        assert_eq!(migrated[0], migrated[1], "two ports, one configuration");
        assert_ne!(migrated[0], migrated[2], "another table size, another work");
        assert_eq!(settings.keys().collect::<Vec<_>>(), ["buffer"]);
    }

    /// A catalog of schema version 1 gains the client's sleeps per operation: filled from the
    /// stored result files for the points it held (empty where a file counted none), the
    /// mean over the runs for the points recorded after.
    #[test]
    fn version_1_gains_client_sleeps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let loc = Location::Sqlite(path.clone());
        let doc = |started_at: &str, sleeps: [Option<f64>; 2]| {
            let run = |sleeps: Option<f64>| crate::report::RunRecord {
                ops_per_s: 100.0,
                client_cpu: crate::report::ClientCpu {
                    voluntary_cs_per_op: sleeps,
                    ..Default::default()
                },
                ..Default::default()
            };
            let point = |operation: &str, threads, runs| crate::report::Point {
                operation: operation.into(),
                threads,
                runs,
                ..Default::default()
            };
            crate::report::json::to_string(&ResultDoc {
                schema_version: 2,
                started_at: started_at.into(),
                config: serde_json::json!({"workload": "w"}),
                points: vec![
                    point("op", 2, vec![run(sleeps[0]), run(sleeps[1])]),
                    point("op", 4, vec![run(None)]),
                ],
                ..Default::default()
            })
        };
        let mut c = Catalog::open(&loc, &[]).unwrap();
        let before = doc("2026-11-27T10:00:00Z", [Some(0.25), Some(0.75)]);
        c.record(&before, "a", &[]).unwrap();
        drop(c);
        let raw = rusqlite::Connection::open(&path).unwrap();
        raw.execute_batch(&format!(
            "ALTER TABLE points DROP COLUMN client_sleeps_per_op; {}
             UPDATE catalog_meta SET value = '1' WHERE key = 'schema_version'",
            UNDO_3
        ))
        .unwrap();
        drop(raw);
        let mut c = Catalog::open(&loc, &[]).unwrap();
        let after = doc("2026-11-27T11:00:00Z", [Some(0.25), Some(0.5)]);
        c.record(&after, "b", &[]).unwrap();
        let rows = c.history(&Filter::default()).unwrap();
        let sleeps: Vec<Option<f64>> = rows.iter().map(|r| r.client_sleeps_per_op).collect();
        assert_eq!(sleeps, [Some(0.5), None, Some(0.375), None]);
        assert!(query::csv(&rows, c.figures())
            .lines()
            .nth(3)
            .unwrap()
            .contains(",0.375,"));
        let table = query::wide(&rows);
        assert!(
            table.lines().nth(1).unwrap().contains(" 0.50  config "),
            "{table}"
        );
    }
}
