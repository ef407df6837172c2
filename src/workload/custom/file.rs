//! The workload file: its TOML form (serde, with spans), and its validation into a resolved
//! `Spec`. Every error names the file, the line and the key path
//! (`my.toml:12: transactions.payment.statements[2]: unknown parameter `c_id``); array
//! indexes in paths count from 0. The file's documentation is docs/workload-files.md and
//! schema/workload-v1.schema.json.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

use super::gen::{self, Format, Gen, Zipf};
use super::{Column, Ddl, Param, Phase, Spec, Stmt, Table, Txn};
use crate::db::{Dbms, ErrorClass, Value};

mod checks;
mod generators;
mod locate;
mod raw;
use generators::resolve_gen;
use locate::*;
pub use raw::Ordered;
use raw::*;

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// The portable column types and their spelling per DBMS.
pub fn sql_type(ty: &str, dbms: Dbms) -> Option<String> {
    let t = ty.trim().to_ascii_lowercase();
    let (base, args) = match t.split_once('(') {
        Some((b, rest)) => {
            let args = rest.strip_suffix(')')?;
            if !args
                .split(',')
                .all(|a| !a.trim().is_empty() && a.trim().chars().all(|c| c.is_ascii_digit()))
            {
                return None;
            }
            (b.trim(), Some(args.replace(' ', "")))
        }
        None => (t.as_str(), None),
    };
    use Dbms::*;
    let s = match (base, &args, dbms) {
        ("int" | "integer", None, Sqlite) => "INTEGER".into(),
        ("int" | "integer", None, Mysql) => "INT".into(),
        ("int" | "integer", None, Postgres) => "INTEGER".into(),
        ("bigint", None, Sqlite) => "INTEGER".into(),
        ("bigint", None, _) => "BIGINT".into(),
        ("smallint", None, Sqlite) => "INTEGER".into(),
        ("smallint", None, _) => "SMALLINT".into(),
        ("text", None, _) => "TEXT".into(),
        ("varchar", Some(n), _) => format!("VARCHAR({n})"),
        ("char", Some(n), _) => format!("CHAR({n})"),
        ("date", None, Sqlite) => "TEXT".into(),
        ("date", None, _) => "DATE".into(),
        ("timestamp", None, Sqlite) => "TEXT".into(),
        ("timestamp", None, Mysql) => "DATETIME".into(),
        ("timestamp", None, Postgres) => "TIMESTAMP".into(),
        ("double", None, Sqlite) => "REAL".into(),
        ("double", None, Mysql) => "DOUBLE".into(),
        ("double", None, Postgres) => "DOUBLE PRECISION".into(),
        ("decimal", Some(a), Postgres) => format!("NUMERIC({a})"),
        ("decimal", Some(a), _) => format!("DECIMAL({a})"),
        _ => return None,
    };
    Some(s)
}

const PORTABLE_TYPES: &str =
    "int, bigint, smallint, text, varchar(N), char(N), date, timestamp, double, decimal(P,S)";

/// What the generators of one table/transaction can see.
struct Ctx<'a> {
    loc: &'a Loc<'a>,
    vars: &'a BTreeMap<String, i64>,
    tables: &'a [Table],
    /// Rows of the table being loaded (columns), `None` for parameters.
    own_rows: Option<u64>,
    seed: u64,
}

fn num(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn literal(v: &toml::Value) -> Option<Value> {
    match v {
        toml::Value::Integer(i) => Some(Value::Int(*i)),
        toml::Value::String(s) => Some(Value::Text(s.clone())),
        _ => None,
    }
}

/// `:name` placeholders of a statement: the SQL with `?` (inline parameters written in with
/// `inline_value`), and the names in order. Quoted text and `::` casts are left alone.
pub fn placeholders(sql: &str) -> (String, Vec<String>) {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut names = Vec::new();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                out.push(c as char);
                i += 1;
            }
            None if c == b'\'' || c == b'"' || c == b'`' => {
                quote = Some(c);
                out.push(c as char);
                i += 1;
            }
            None if c == b':' && i + 1 < b.len() && b[i + 1] == b':' => {
                out.push_str("::");
                i += 2;
            }
            None if c == b':'
                && i + 1 < b.len()
                && (b[i + 1].is_ascii_alphabetic() || b[i + 1] == b'_') =>
            {
                let s = i + 1;
                let mut e = s;
                while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
                    e += 1;
                }
                names.push(sql[s..e].to_string());
                out.push('\u{0}');
                i = e;
            }
            None => {
                // Copy one UTF-8 character whole.
                let ch = sql[i..].chars().next().expect("in bounds");
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    (out, names)
}

/// Parse and validate a workload file. `label` names it in errors; `overrides` are `--var`
/// values (each must name a declared variable).
pub fn parse(
    label: &str,
    text: &str,
    overrides: &[(String, i64)],
    seed: u64,
) -> Result<Spec, String> {
    let def: FileDef = toml::from_str(text).map_err(|e| toml_error(label, text, &e))?;
    let loc = Loc { label, text };
    let name = def.name.get_ref();
    if name.is_empty()
        || name.len() > 48
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(loc.err(
            &def.name.span(),
            "name",
            format!("`{name}` is not a workload name (1 to 48 letters, digits, - and _)"),
        ));
    }
    let mut vars = BTreeMap::new();
    for (k, v) in &def.vars.0 {
        if !is_ident(k) {
            return Err(loc.err(
                &v.span(),
                &format!("vars.{k}"),
                "not a variable name (letters, digits, _)",
            ));
        }
        vars.insert(k.clone(), *v.get_ref());
    }
    for (k, v) in overrides {
        if !vars.contains_key(k) {
            return Err(format!(
                "--var {k}: {label} has no variable `{k}` (it declares: {})",
                if vars.is_empty() {
                    "none".to_string()
                } else {
                    vars.keys().cloned().collect::<Vec<_>>().join(", ")
                }
            ));
        }
        vars.insert(k.clone(), *v);
    }

    let tables = checks::tables(&def, &loc, &vars, seed)?;
    let cx = Ctx {
        loc: &loc,
        vars: &vars,
        tables: &tables,
        own_rows: None,
        seed,
    };
    let txns = checks::transactions(&def, label, &cx)?;
    let phases = checks::phases(&def, &txns, &loc)?;

    // The table the result names the engine of: the largest one.
    let main_table = tables
        .iter()
        .max_by_key(|t| t.rows)
        .map(|t| t.name.as_str())
        .unwrap_or("");
    let n_tables = tables.len();
    Ok(Spec {
        name_static: leak(name),
        main_table_static: leak(main_table),
        name: name.clone(),
        description: def.description.clone().unwrap_or_default(),
        dataset: def
            .dataset
            .as_ref()
            .map(|d| d.get_ref().clone())
            .unwrap_or_else(|| name.clone()),
        notes: def.notes.clone(),
        vars,
        kinds: txns.iter().map(|t| leak(&t.name)).collect(),
        tables,
        txns,
        phases,
        seed,
        source: label.to_string(),
        inserted: std::sync::Arc::new((0..n_tables).map(|_| Default::default()).collect()),
        text: text.to_string(),
        compressed_text: Vec::new(),
    })
}

fn default_retry() -> Vec<ErrorClass> {
    vec![
        ErrorClass::Deadlock,
        ErrorClass::LockWaitTimeout,
        ErrorClass::SerializationFailure,
        ErrorClass::Busy,
    ]
}

/// Put `?` for each bound placeholder (marked NUL by `placeholders`) and `inline` for the
/// inline one.
fn fill(body: &str, binds: &[usize], inline: &str) -> String {
    let mut out = String::with_capacity(body.len() + 16);
    let mut k = 0;
    for ch in body.chars() {
        if ch == '\u{0}' {
            out.push_str(if binds[k] == usize::MAX { inline } else { "?" });
            k += 1;
        } else {
            out.push(ch);
        }
    }
    out
}

/// Names live as long as the process: the runner's kinds and the loader's columns are
/// `&'static str`, and a process resolves a workload file a handful of times.
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_placeholders() {
        let (b, n) =
            placeholders("UPDATE t SET a = a + :delta WHERE id = :id AND s = ':x' AND c::int = 1");
        assert_eq!(n, vec!["delta", "id"]);
        assert_eq!(
            fill(&b, &[0, 1], ""),
            "UPDATE t SET a = a + ? WHERE id = ? AND s = ':x' AND c::int = 1"
        );
    }

    #[test]
    fn types_per_dbms() {
        assert_eq!(sql_type("int", Dbms::Mysql).unwrap(), "INT");
        assert_eq!(
            sql_type("varchar(255)", Dbms::Postgres).unwrap(),
            "VARCHAR(255)"
        );
        assert_eq!(
            sql_type("decimal(12, 2)", Dbms::Postgres).unwrap(),
            "NUMERIC(12,2)"
        );
        assert_eq!(sql_type("timestamp", Dbms::Mysql).unwrap(), "DATETIME");
        assert!(sql_type("varchar", Dbms::Mysql).is_none());
        assert!(sql_type("blob", Dbms::Mysql).is_none());
    }

    #[test]
    fn path_of_an_offset() {
        let text = "name = \"x\"\n[tables.t]\nrows = 1\n[tables.t.columns]\nid = { type = \"int\", kind = \"sequence\", bogus = 1 }\n";
        let off = text.find("bogus").unwrap();
        assert_eq!(
            path_at(text, off).as_deref(),
            Some("tables.t.columns.id.bogus")
        );
    }
}
