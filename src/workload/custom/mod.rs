//! Workload files: your own tables, data generators and weighted transactions (TOML), run
//! exactly like a built-in workload (same loader, runner, method, results). YCSB core
//! workloads A-F and pgbench's TPC-B-like script are built-ins written as such files
//! (workloads/*.toml, compiled in). The format: docs/workload-files.md and
//! schema/workload-v1.schema.json.

pub mod driver;
mod entry;
pub mod expr;
pub mod file;
pub mod gen;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::db::{Conn, Dbms, ErrorClass, TargetSpec, Value};
use crate::error::{Context, Error, Result};
use crate::load::{self, RowSource};
use crate::model::LoadOptions;
use crate::model::LoadStats;
use crate::model::Pacing;
use crate::rng::Rng;
use crate::workload::textgen::TextGen;

pub use driver::CustomDriver;
pub use entry::{CustomArgs, CustomEntry, ENTRY};
pub use gen::{Format, Gen};

/// The built-in workload files, by name.
pub const BUILTINS: [(&str, &str); 7] = [
    ("ycsb-a", include_str!("../../../workloads/ycsb-a.toml")),
    ("ycsb-b", include_str!("../../../workloads/ycsb-b.toml")),
    ("ycsb-c", include_str!("../../../workloads/ycsb-c.toml")),
    ("ycsb-d", include_str!("../../../workloads/ycsb-d.toml")),
    ("ycsb-e", include_str!("../../../workloads/ycsb-e.toml")),
    ("ycsb-f", include_str!("../../../workloads/ycsb-f.toml")),
    ("tpcb", include_str!("../../../workloads/tpcb.toml")),
];

/// What `init-workload` writes: a commented example to start from.
pub const EXAMPLE: &str = include_str!("../../../workloads/example.toml");

/// The names of the built-in workload files.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|(n, _)| *n)
}

pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// How a table's DDL is made.
#[derive(Debug, Clone)]
pub enum Ddl {
    /// From the columns' portable types, primary key and `{engine}`.
    Portable,
    /// Given per DBMS (`{engine}` substituted on MySQL).
    Raw {
        mysql: Option<String>,
        postgres: Option<String>,
        sqlite: Option<String>,
    },
}

#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub ty: Option<String>,
    pub gen: Gen,
    pub fmt: Format,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub rows: u64,
    pub columns: Vec<Column>,
    pub col_names: Vec<&'static str>,
    pub primary_key: Vec<String>,
    pub indexes: Vec<Vec<String>>,
    pub ddl: Ddl,
    /// The start of the table's first `sequence` column: its keys are start..start+rows.
    pub key_start: Option<i64>,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    pub gen: Gen,
    pub fmt: Format,
    /// An inline choice: the texts written into the SQL (one prepared statement per value).
    pub inline: Option<Vec<String>>,
}

#[derive(Debug, Clone)]
pub struct Stmt {
    /// The SQL with `?` placeholders, one per value of the inline parameter (or one).
    pub variants: Vec<String>,
    /// The parameter whose (inline) value picks the variant.
    pub inline: Option<usize>,
    /// The slots bound to the `?`s, in order.
    pub binds: Vec<usize>,
    /// The slots that receive the first row's columns.
    pub capture: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Txn {
    pub name: String,
    pub weight: u32,
    pub params: Vec<Param>,
    pub statements: Vec<Stmt>,
    /// BEGIN ... COMMIT around the statements.
    pub transaction: bool,
    /// `pipeline = true`: statements without captures are sent without waiting for the
    /// previous reply (PostgreSQL lean client; only inside BEGIN ... COMMIT).
    pub pipeline: bool,
    /// Some statement is not a SELECT (SQLite then starts with BEGIN IMMEDIATE).
    pub writes: bool,
    pub retry_on: Vec<ErrorClass>,
    pub retry_max: u32,
    /// Parameters plus captured values.
    pub slots: usize,
}

#[derive(Debug, Clone)]
pub struct Phase {
    pub name: String,
    pub duration: Option<Duration>,
    pub rate: Option<f64>,
    /// Per transaction, in `Spec::txns` order.
    pub weights: Vec<u32>,
}

/// A resolved workload file.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: String,
    /// The name and main table for the `&'static str` interfaces of `Workload`.
    pub name_static: &'static str,
    pub main_table_static: &'static str,
    pub description: String,
    /// Workloads with the same dataset share their loaded tables (YCSB A-F).
    pub dataset: String,
    pub notes: Vec<String>,
    pub vars: BTreeMap<String, i64>,
    pub tables: Vec<Table>,
    pub txns: Vec<Txn>,
    pub phases: Vec<Phase>,
    pub seed: u64,
    pub kinds: Vec<&'static str>,
    /// The file's path, or `built-in:NAME`.
    pub source: String,
    pub text: String,
    /// `--compressed-fraction`: the `string` generators it applies to ("table.column" or
    /// "transaction.param") and the calibrated generator of each.
    pub compressed_text: Vec<(String, Arc<TextGen>)>,
    /// Per table: keys taken with `next_key` by transactions that succeeded, over every
    /// connection of this client (shared by the drivers; `latest` follows it).
    pub inserted: std::sync::Arc<Vec<std::sync::atomic::AtomicI64>>,
}

/// `--var NAME=VALUE` (VALUE an integer, k/M/G suffixes allowed).
pub fn parse_var(s: &str) -> Result<(String, i64)> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| Error::usage(format!("--var: '{s}' is not NAME=VALUE")))?;
    let t = v.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let n = crate::units::count(t).map_err(|e| Error::usage(format!("--var {}: {e}", k.trim())))?;
    let n = i64::try_from(n).map_err(|_| Error::usage(format!("--var {}: too large", k.trim())))?;
    Ok((k.trim().to_string(), if neg { -n } else { n }))
}

fn read(path: &str) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("--workload-file: cannot read {path}: {e}")))
}

/// Resolve a workload file (`file`, with `name` "") or a built-in one (`name`).
pub fn resolve(name: &str, file: Option<&str>, vars: &[String], seed: u64) -> Result<Spec> {
    if file.is_some() && !name.is_empty() {
        return Err(Error::usage(format!(
            "give either a workload name ('{name}') or --workload-file, not both"
        )));
    }
    let overrides = vars
        .iter()
        .map(|v| parse_var(v))
        .collect::<Result<Vec<_>>>()?;
    let (label, text) = match file {
        Some(p) => (p.to_string(), read(p)?),
        None => (
            format!("built-in:{name}"),
            builtin(name)
                .ok_or_else(|| Error::usage(format!("unknown workload '{name}'")))?
                .to_string(),
        ),
    };
    file::parse(&label, &text, &overrides, seed).map_err(Error::usage)
}

impl Spec {
    /// `--compressed-fraction` as typed: every `string` generator (loaded columns and
    /// parameters) draws from the shared generator instead, one calibration per length range.
    pub fn with_compressed_fraction(mut self, fraction: Option<&str>) -> Result<Spec> {
        let Some(f) = crate::workload::textgen::fraction_flag(fraction)? else {
            return Ok(self);
        };
        let mut by_len: BTreeMap<(usize, usize), Arc<TextGen>> = BTreeMap::new();
        let seed = self.seed;
        let mut attach = |gen: &mut Gen, what: String, out: &mut Vec<(String, Arc<TextGen>)>| {
            if let Gen::Text {
                min_len,
                max_len,
                text,
            } = gen
            {
                if *max_len == 0 {
                    return;
                }
                let g = by_len
                    .entry((*min_len, *max_len))
                    .or_insert_with(|| Arc::new(TextGen::new(f, seed, *min_len, *max_len)))
                    .clone();
                *text = Some(g.clone());
                out.push((what, g));
            }
        };
        let mut used = Vec::new();
        for t in &mut self.tables {
            for c in &mut t.columns {
                attach(&mut c.gen, format!("{}.{}", t.name, c.name), &mut used);
            }
        }
        for t in &mut self.txns {
            for p in &mut t.params {
                attach(&mut p.gen, format!("{}.{}", t.name, p.name), &mut used);
            }
        }
        if used.is_empty() {
            return Err(Error::usage(format!(
                "--compressed-fraction: workload {} has no `string` generator to apply it to",
                self.name
            )));
        }
        self.compressed_text = used;
        Ok(self)
    }

    pub fn operations(&self) -> Vec<String> {
        if self.phases.is_empty() {
            vec!["mix".to_string()]
        } else {
            self.phases.iter().map(|p| p.name.clone()).collect()
        }
    }

    /// The mix weights of operation (phase) `op`.
    pub fn weights(&self, op: usize) -> Vec<u32> {
        match self.phases.get(op) {
            Some(p) => p.weights.clone(),
            None => self.txns.iter().map(|t| t.weight).collect(),
        }
    }

    pub fn phase_duration(&self, op: usize) -> Option<Duration> {
        self.phases.get(op).and_then(|p| p.duration)
    }

    /// A phase's own rate: open loop at that many transactions per second (Poisson arrivals).
    pub fn phase_pacing(&self, op: usize) -> Option<Pacing> {
        self.phases
            .get(op)
            .and_then(|p| p.rate)
            .map(|r| Pacing::FixedRate {
                ops_per_s: r,
                arrivals: crate::model::Arrivals::Poisson,
            })
    }

    pub fn main_rows(&self) -> u64 {
        self.tables.iter().map(|t| t.rows).max().unwrap_or(0)
    }

    pub fn options(&self) -> serde_json::Value {
        serde_json::json!({
            "file": self.source,
            "dataset": self.dataset,
            "vars": self.vars,
            "tables": self.tables.iter().map(|t| (t.name.clone(), serde_json::json!({"rows": t.rows}))).collect::<serde_json::Map<_, _>>(),
            "transactions": self.txns.iter().map(|t| (t.name.clone(), serde_json::json!({
                "weight": t.weight,
                "statements": t.statements.len(),
                "transaction": t.transaction,
            }))).collect::<serde_json::Map<_, _>>(),
            "phases": self.phases.iter().map(|p| serde_json::json!({
                "name": p.name,
                "duration_s": p.duration.map(|d| d.as_secs_f64()),
                "rate_ops_per_s": p.rate,
                "weights": self.txns.iter().zip(&p.weights).map(|(t, w)| (t.name.clone(), serde_json::json!(w))).collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
            // The whole file: a result says exactly how it was made.
            "file_text": self.text,
            "compressed_text": self.compressed_text.iter().map(|(w, g)| (w.clone(), g.summary())).collect::<serde_json::Map<_, _>>(),
        })
    }

    pub fn notes(&self) -> Vec<String> {
        let mut n = vec![format!(
            "{}: a workload file ({}); one operation is one transaction of the mix (weighted random choice per connection); transactions failed by {} are counted by class and run again with the same parameters (at most `retry.max` times).",
            self.name,
            self.source,
            "the classes of their `retry.on`"
        )];
        if self.txns.iter().any(|t| {
            t.params
                .iter()
                .any(|p| matches!(p.gen, Gen::NextKey { .. } | Gen::Latest { .. }))
        }) {
            n.push(format!(
                "{}: new keys (next_key) continue after the existing ones, found when the connections open (the row count, then past any key an earlier run inserted beyond it); connection w of W takes keys base + w, base + w + W, ... (disjoint across the connections of one client; several client machines would need their own ranges). `latest` follows the client's global insert counter (one atomic shared by its connections, counting next_key transactions that succeeded): newest key = base + inserts so far - 1, as if the inserted keys were contiguous; with W connections up to W - 1 keys below it may still be in flight, so a read may ask for a key not yet there (0 rows, not an error).",
                self.name
            ));
        }
        for (what, g) in &self.compressed_text {
            n.push(g.note(&format!("{}: string generator {what}", self.name)));
        }
        n.extend(self.notes.iter().map(|x| format!("{}: {x}", self.name)));
        n
    }

    /// The metadata that must match for loaded tables to be reused.
    fn meta_info(&self, engine: Option<&str>) -> String {
        use sha1::Digest;
        let mut h = sha1::Sha1::new();
        for t in &self.tables {
            h.update(format!("{t:?}").as_bytes());
        }
        let digest: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        serde_json::json!({
            "tables": self.tables.iter().map(|t| (t.name.clone(), t.rows)).collect::<BTreeMap<_, _>>(),
            "definition_sha1": digest,
            "seed": self.seed,
            "engine": engine,
            "data_version": 1,
        })
        .to_string()
    }

    fn meta_key(&self) -> String {
        format!("file:{}", self.dataset)
    }

    /// CREATE TABLE per DBMS.
    fn create_sql(&self, t: &Table, dbms: Dbms, engine: &str) -> Result<String> {
        match &t.ddl {
            Ddl::Raw {
                mysql,
                postgres,
                sqlite,
            } => {
                let d = match dbms {
                    Dbms::Mysql => mysql,
                    Dbms::Postgres => postgres,
                    Dbms::Sqlite => sqlite,
                };
                d.as_ref()
                    .map(|s| s.replace("{engine}", engine))
                    .ok_or_else(|| {
                        Error::usage(format!(
                            "{}: tables.{}.ddl has no `{}` statement for this target",
                            self.source,
                            t.name,
                            dbms.name()
                        ))
                    })
            }
            Ddl::Portable => {
                let mut cols: Vec<String> = t
                    .columns
                    .iter()
                    .map(|c| {
                        let ty = c.ty.as_deref().unwrap_or("text");
                        format!(
                            "{} {}",
                            c.name,
                            file::sql_type(ty, dbms).unwrap_or_else(|| ty.to_string())
                        )
                    })
                    .collect();
                if !t.primary_key.is_empty() {
                    cols.push(format!("PRIMARY KEY ({})", t.primary_key.join(", ")));
                }
                Ok(format!(
                    "CREATE TABLE {} ({}){}",
                    t.name,
                    cols.join(", "),
                    if dbms == Dbms::Mysql && !engine.is_empty() {
                        format!(" {engine}")
                    } else {
                        String::new()
                    }
                ))
            }
        }
    }

    /// Create and load the tables unless identical ones are there.
    pub async fn prepare(
        &self,
        conn: &mut Conn,
        target: &TargetSpec,
        engine: Option<&str>,
        opts: &LoadOptions,
    ) -> Result<Vec<LoadStats>> {
        if self.tables.is_empty() {
            return Ok(Vec::new());
        }
        let want = crate::contract::with_table_options(self.meta_info(engine), opts);
        let mut all = true;
        for t in &self.tables {
            all &= conn
                .table_exists(&t.name)
                .await
                .ctx("checking for the tables")?;
        }
        if all
            && crate::contract::read_meta(conn, &self.meta_key())
                .await?
                .as_deref()
                == Some(want.as_str())
        {
            return Ok(Vec::new());
        }
        self.cleanup(conn).await?;
        let engine_clause = crate::contract::table_clause(engine, opts);
        for t in &self.tables {
            let sql = self.create_sql(t, conn.dbms(), &engine_clause)?;
            conn.execute(&sql)
                .await
                .ctx(format!("creating table {} ({})", t.name, self.source))?;
        }
        let mut stats = Vec::new();
        for (ti, t) in self.tables.iter().enumerate() {
            if t.rows == 0 {
                continue;
            }
            let src = Rows {
                table: t,
                seed: self.seed,
                stream: ti as u64,
            };
            stats.push(load::load(target, &src, t.rows, opts)?);
        }
        for t in &self.tables {
            for (i, cols) in t.indexes.iter().enumerate() {
                conn.execute(&format!(
                    "CREATE INDEX {}_i{} ON {} ({})",
                    t.name,
                    i + 1,
                    t.name,
                    cols.join(", ")
                ))
                .await
                .ctx(format!("creating index {} of {}", i + 1, t.name))?;
            }
        }
        let names: Vec<&str> = self.tables.iter().map(|t| t.name.as_str()).collect();
        crate::contract::after_load(conn, &names).await?;
        crate::contract::write_meta(conn, &self.meta_key(), &want).await?;
        Ok(stats)
    }

    /// Drop the tables (in reverse order: children first) and their metadata.
    pub async fn cleanup(&self, conn: &mut Conn) -> Result<()> {
        for t in self.tables.iter().rev() {
            conn.execute(&format!("DROP TABLE IF EXISTS {}", t.name))
                .await
                .ctx(format!("dropping table {}", t.name))?;
        }
        crate::contract::delete_meta(conn, &self.meta_key()).await
    }
}

/// The loader's view of one table: each column from its generator, keyed by (seed, table,
/// column, row) so that a row never depends on the loader's chunking.
struct Rows<'a> {
    table: &'a Table,
    seed: u64,
    stream: u64,
}

impl RowSource for Rows<'_> {
    fn table(&self) -> &str {
        &self.table.name
    }
    fn columns(&self) -> &[&'static str] {
        &self.table.col_names
    }
    fn row(&self, id: u64, out: &mut Vec<Value>) {
        for (ci, c) in self.table.columns.iter().enumerate() {
            let mut r = Rng::keyed(self.seed, 0xF11E_0000 + self.stream * 1024 + ci as u64, id);
            out.push(c.gen.draw(&mut r, id, &c.fmt));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse() {
        for (name, text) in BUILTINS {
            let s = file::parse(name, text, &[], 1).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.name, name);
        }
        file::parse("example.toml", EXAMPLE, &[], 1).unwrap();
    }

    #[test]
    fn tpcb_scale_rules() {
        let s = file::parse("tpcb", builtin("tpcb").unwrap(), &[("scale".into(), 3)], 1).unwrap();
        let rows: Vec<(&str, u64)> = s.tables.iter().map(|t| (t.name.as_str(), t.rows)).collect();
        assert_eq!(
            rows,
            vec![
                ("pgbench_branches", 3),
                ("pgbench_tellers", 30),
                ("pgbench_accounts", 300_000),
                ("pgbench_history", 0)
            ]
        );
        // BEGIN + 5 statements + END, as pgbench's script.
        assert_eq!(s.txns[0].statements.len(), 5);
        assert!(s.txns[0].transaction);
    }

    #[test]
    fn vars() {
        assert_eq!(parse_var("scale=10").unwrap(), ("scale".into(), 10));
        assert_eq!(parse_var("n=1M").unwrap(), ("n".into(), 1_000_000));
        assert!(parse_var("scale").is_err());
        assert!(parse_var("scale=x").is_err());
        let e =
            file::parse("tpcb", builtin("tpcb").unwrap(), &[("scal".into(), 3)], 1).unwrap_err();
        assert!(e.contains("--var scal"), "{e}");
    }

    #[test]
    fn load_rows_are_deterministic_and_keyed() {
        let s = file::parse("tpcb", builtin("tpcb").unwrap(), &[], 1).unwrap();
        let t = &s.tables[1];
        let src = Rows {
            table: t,
            seed: 1,
            stream: 1,
        };
        let mut a = Vec::new();
        src.row(7, &mut a);
        assert_eq!(a[0], Value::Int(7));
        assert_eq!(a[1], Value::Int(1));
        let mut b = Vec::new();
        src.row(7, &mut b);
        assert_eq!(a, b);
    }

    /// The test: with --compressed-fraction 0.3 the loaded `string` columns of YCSB's
    /// usertable compress with zstd-3 to 30 % ± 10 %, and its update parameters are from the
    /// same generator.
    #[test]
    fn compressed_fraction_applies_to_string_generators() {
        let s = file::parse("ycsb-a", builtin("ycsb-a").unwrap(), &[], 4)
            .unwrap()
            .with_compressed_fraction(Some("0.3"))
            .unwrap();
        assert!(s
            .compressed_text
            .iter()
            .any(|(w, _)| w == "usertable.field0"));
        let t = s.tables.iter().find(|t| t.name == "usertable").unwrap();
        let src = Rows {
            table: t,
            seed: 4,
            stream: 0,
        };
        let mut text = Vec::new();
        let mut v = Vec::new();
        for id in 1..=1000 {
            v.clear();
            src.row(id, &mut v);
            for x in &v {
                if let Value::Text(t) = x {
                    if t.len() == 100 {
                        text.extend_from_slice(t.as_bytes());
                    }
                }
            }
        }
        assert!(
            text.len() >= 900_000,
            "{} bytes of string columns",
            text.len()
        );
        let r = crate::workload::textgen::zstd_ratio(&text);
        assert!((r - 0.3).abs() <= 0.03, "zstd-3 ratio {r:.3}");
        // Without the option the same columns barely compress.
        let plain = file::parse("ycsb-a", builtin("ycsb-a").unwrap(), &[], 4).unwrap();
        assert!(plain.compressed_text.is_empty());
        assert!(file::parse("ycsb-a", builtin("ycsb-a").unwrap(), &[], 4)
            .unwrap()
            .with_compressed_fraction(Some("1.5"))
            .is_err());
    }
}
