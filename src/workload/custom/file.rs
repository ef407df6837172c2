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

mod locate;
mod raw;
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

fn resolve_gen(
    def: &Spanned<GenDef>,
    path: &str,
    cx: &Ctx,
) -> Result<(Gen, Format, Option<Vec<String>>), String> {
    let span = def.span();
    let d = def.get_ref();
    let bad = |msg: String| cx.loc.err(&span, path, msg);
    let is_param = cx.own_rows.is_none();
    let kind = d.kind.as_deref().ok_or_else(|| {
        bad("missing `kind` (sequence, uniform, zipf, latest, next_key, gaussian, nurand, const, null, string, date, choice, fk)".into())
    })?;
    let allowed: &[&str] = match kind {
        "sequence" => &["start"],
        "uniform" => &["min", "max"],
        "zipf" => &["min", "max", "theta", "scrambled"],
        "latest" => &["table", "theta"],
        "next_key" => &["table"],
        "gaussian" => &["min", "max", "mean", "stddev"],
        "nurand" => &["a", "min", "max", "c"],
        "const" => &["value"],
        "null" => &[],
        "string" => &["len", "min_len", "max_len"],
        "date" => &["min", "max"],
        "choice" => &["values", "weights", "inline"],
        "fk" => &["table", "order"],
        other => {
            return Err(bad(format!(
                "unknown kind `{other}` (sequence, uniform, zipf, latest, next_key, gaussian, nurand, const, null, string, date, choice, fk)"
            )))
        }
    };
    let int_kind = matches!(
        kind,
        "sequence" | "uniform" | "zipf" | "latest" | "next_key" | "gaussian" | "nurand" | "fk"
    );
    for f in d.present() {
        let common = (f == "format" || f == "hash") && int_kind;
        if !allowed.contains(&f) && !common {
            return Err(bad(format!("`{f}` does not apply to kind `{kind}`")));
        }
    }
    match (kind, is_param) {
        ("sequence", true) => {
            return Err(bad(
                "kind `sequence` numbers loaded rows; for new keys in a transaction use `next_key`"
                    .into(),
            ))
        }
        ("latest" | "next_key", false) => {
            return Err(bad(format!(
                "kind `{kind}` is for transaction parameters, not loaded columns"
            )))
        }
        _ => {}
    }
    if d.inline.is_some() && is_param && kind != "choice" {
        return Err(bad("`inline` applies to kind `choice` only".into()));
    }
    if d.inline.is_some() && !is_param {
        return Err(bad("`inline` applies to transaction parameters only".into()));
    }
    let ev = |what: &str, src: &str| -> Result<i64, String> {
        super::expr::eval(src, cx.vars).map_err(|e| bad(format!("{what}: {e}")))
    };
    let ev_opt = |what: &str, v: &Option<toml::Value>| -> Result<Option<i64>, String> {
        match v {
            None => Ok(None),
            Some(v) => {
                let s = num(v).ok_or_else(|| {
                    bad(format!(
                        "`{what}` must be an integer or an expression string"
                    ))
                })?;
                ev(&format!("`{what}`"), &s).map(Some)
            }
        }
    };
    let need = |what: &str, v: Option<i64>| -> Result<i64, String> {
        v.ok_or_else(|| bad(format!("kind `{kind}` needs `{what}`")))
    };
    let bounds = || -> Result<(i64, i64), String> {
        let min = need("min", ev_opt("min", &d.min)?)?;
        let max = need("max", ev_opt("max", &d.max)?)?;
        if min > max {
            return Err(bad(format!("`min` ({min}) is above `max` ({max})")));
        }
        Ok((min, max))
    };
    let table_of = |name: &Option<String>| -> Result<(usize, &Table), String> {
        let name = name
            .as_deref()
            .ok_or_else(|| bad(format!("kind `{kind}` needs `table`")))?;
        cx.tables
            .iter()
            .enumerate()
            .find(|(_, t)| t.name == name)
            .ok_or_else(|| {
                bad(format!(
                    "unknown table `{name}` (a foreign key or key generator names a table defined before it; known: {})",
                    cx.tables.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                ))
            })
    };
    let key_start = |t: &Table| -> Result<i64, String> {
        t.key_start.ok_or_else(|| {
            bad(format!(
                "table `{}` has no `sequence` column, so its keys are unknown",
                t.name
            ))
        })
    };
    let theta = d.theta.unwrap_or(gen::YCSB_THETA);
    if !(theta > 0.0 && theta < 1.0) && d.theta.is_some() {
        return Err(bad(format!(
            "`theta` must be between 0 and 1 (exclusive), not {theta}"
        )));
    }
    let mut inline = None;
    let g = match kind {
        "sequence" => Gen::Sequence {
            start: match &d.start {
                Some(s) => ev("`start`", &s.0)?,
                None => 1,
            },
        },
        "uniform" => {
            let (min, max) = bounds()?;
            Gen::Uniform { min, max }
        }
        "zipf" => {
            let (min, max) = bounds()?;
            let n = (max - min + 1) as u64;
            if d.scrambled == Some(true) {
                if d.theta.is_some_and(|t| t != gen::YCSB_THETA) {
                    return Err(bad(
                        "`scrambled` uses YCSB's fixed theta 0.99; leave `theta` out".into(),
                    ));
                }
                gen::scrambled_zipf(min, n)
            } else {
                Gen::Zipf {
                    min,
                    n,
                    zipf: Box::new(Zipf::new(n, theta)),
                    scrambled: false,
                }
            }
        }
        "latest" => {
            let (i, t) = table_of(&d.table)?;
            key_start(t)?;
            Gen::Latest { table: i, theta }
        }
        "next_key" => {
            let (i, t) = table_of(&d.table)?;
            key_start(t)?;
            Gen::NextKey { table: i }
        }
        "gaussian" => {
            let (min, max) = bounds()?;
            let mean = d.mean.unwrap_or((min + max) as f64 / 2.0);
            let stddev = d.stddev.unwrap_or((max - min) as f64 / 6.0);
            if stddev <= 0.0 && max > min {
                return Err(bad("`stddev` must be positive".into()));
            }
            Gen::Gaussian {
                min,
                max,
                mean,
                stddev,
            }
        }
        "nurand" => {
            let (min, max) = bounds()?;
            let a = match &d.a {
                Some(a) => ev("`a`", &a.0)?,
                None => {
                    return Err(bad(
                        "kind `nurand` needs `a` (TPC-C: 255, 1023 or 8191)".into()
                    ))
                }
            };
            if a < 0 {
                return Err(bad("`a` must not be negative".into()));
            }
            let c = match &d.c {
                Some(c) => ev("`c`", &c.0)?,
                // TPC-C 2.1.6: C is a run-time constant in 0..=A, here drawn from the seed.
                None => crate::rng::Rng::keyed(cx.seed, 0xC0, a as u64).range(0, a as u64) as i64,
            };
            Gen::NuRand { a, min, max, c }
        }
        "const" => {
            let v = d
                .value
                .as_ref()
                .ok_or_else(|| bad("kind `const` needs `value`".into()))?;
            Gen::Const(
                literal(v).ok_or_else(|| bad("`value` must be an integer or a string".into()))?,
            )
        }
        "null" => Gen::Const(Value::Null),
        "string" => {
            let (lo, hi) = match (&d.len, &d.min_len, &d.max_len) {
                (Some(l), None, None) => {
                    let l = ev("`len`", &l.0)?;
                    (l, l)
                }
                (None, Some(a), Some(b)) => (ev("`min_len`", &a.0)?, ev("`max_len`", &b.0)?),
                _ => {
                    return Err(bad(
                        "kind `string` needs `len`, or `min_len` and `max_len`".into()
                    ))
                }
            };
            if lo < 0 || lo > hi || hi > 1 << 24 {
                return Err(bad(format!(
                    "string lengths {lo}..{hi} are not a range within 0..16777216"
                )));
            }
            Gen::Text {
                min_len: lo as usize,
                max_len: hi as usize,
                text: None,
            }
        }
        "date" => {
            let day = |what: &str, v: &Option<toml::Value>| -> Result<i64, String> {
                let s = match v {
                    Some(toml::Value::String(s)) => s.clone(),
                    Some(toml::Value::Datetime(dt)) => dt.to_string(),
                    Some(_) => {
                        return Err(bad(format!("`{what}` must be a date such as 2024-01-31")))
                    }
                    None => return Err(bad(format!("kind `date` needs `{what}`"))),
                };
                gen::parse_date(&s)
                    .ok_or_else(|| bad(format!("`{what}`: `{s}` is not a date (YYYY-MM-DD)")))
            };
            let (min_day, max_day) = (day("min", &d.min)?, day("max", &d.max)?);
            if min_day > max_day {
                return Err(bad("`min` is after `max`".into()));
            }
            Gen::Date { min_day, max_day }
        }
        "choice" => {
            let raw = d
                .values
                .as_ref()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| bad("kind `choice` needs a non-empty `values` list".into()))?;
            let values = raw
                .iter()
                .map(|v| {
                    literal(v).ok_or_else(|| bad("`values` must be integers or strings".into()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let cum = match &d.weights {
                None => Vec::new(),
                Some(w) => {
                    if w.len() != values.len() {
                        return Err(bad(format!(
                            "`weights` has {} entries for {} values",
                            w.len(),
                            values.len()
                        )));
                    }
                    let mut acc = 0u64;
                    let cum: Vec<u64> = w
                        .iter()
                        .map(|x| {
                            acc += x;
                            acc
                        })
                        .collect();
                    if acc == 0 {
                        return Err(bad("`weights` are all 0".into()));
                    }
                    cum
                }
            };
            if d.inline == Some(true) {
                let texts = values
                    .iter()
                    .map(|v| match v {
                        Value::Int(i) => Ok(i.to_string()),
                        Value::Text(t) if is_ident(t) => Ok(t.clone()),
                        _ => Err(bad(
                            "inline `values` must be integers or identifiers (they are written into the SQL)".into(),
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if texts.len() > 64 {
                    return Err(bad(
                        "an inline choice has at most 64 values (one prepared statement each)"
                            .into(),
                    ));
                }
                inline = Some(texts);
            }
            Gen::Choice { values, cum }
        }
        "fk" => {
            let (_, t) = table_of(&d.table)?;
            let start = key_start(t)?;
            if t.rows == 0 {
                return Err(bad(format!("table `{}` has no rows to refer to", t.name)));
            }
            let spread = match d.order.as_deref() {
                None | Some("random") => false,
                Some("spread") if !is_param => true,
                Some("spread") => {
                    return Err(bad(
                        "`order = \"spread\"` applies to loaded columns only".into()
                    ))
                }
                Some(o) => return Err(bad(format!("unknown `order` `{o}` (random or spread)"))),
            };
            Gen::Fk {
                start,
                rows: t.rows as i64,
                spread,
                own_rows: cx.own_rows.unwrap_or(1) as i64,
            }
        }
        _ => unreachable!("kinds are checked above"),
    };
    let mut fmt = Format {
        hash: d.hash == Some(true),
        ..Format::default()
    };
    if let Some(f) = &d.format {
        let (p, s) = f
            .split_once("{}")
            .filter(|(_, s)| !s.contains("{}"))
            .ok_or_else(|| {
                bad(format!(
                    "`format` must hold `{{}}` once (e.g. \"user{{}}\"), not `{f}`"
                ))
            })?;
        fmt.prefix = p.to_string();
        fmt.suffix = s.to_string();
        fmt.text = true;
    }
    Ok((g, fmt, inline))
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

    let mut tables: Vec<Table> = Vec::new();
    for (tname, tdef) in &def.tables.0 {
        let tpath = format!("tables.{tname}");
        let span = tdef.span();
        let t = tdef.get_ref();
        if !is_ident(tname) {
            return Err(loc.err(&span, &tpath, "not a table name (letters, digits, _)"));
        }
        if tables.iter().any(|x| &x.name == tname) {
            return Err(loc.err(&span, &tpath, "defined twice"));
        }
        let rows_src = &t.rows.get_ref().0;
        let rows = super::expr::eval(rows_src, &vars)
            .map_err(|e| loc.err(&t.rows.span(), &format!("{tpath}.rows"), e))?;
        if rows < 0 {
            return Err(loc.err(
                &t.rows.span(),
                &format!("{tpath}.rows"),
                format!("{rows} rows: must not be negative"),
            ));
        }
        if t.columns.0.is_empty() {
            return Err(loc.err(
                &span,
                &format!("{tpath}.columns"),
                "a table needs at least one column",
            ));
        }
        let ddl = match &t.ddl {
            Some(d) => {
                let dd = d.get_ref();
                Ddl::Raw {
                    mysql: dd.mysql.clone(),
                    postgres: dd.postgres.clone(),
                    sqlite: dd.sqlite.clone(),
                }
            }
            None => Ddl::Portable,
        };
        let cx = Ctx {
            loc: &loc,
            vars: &vars,
            tables: &tables,
            own_rows: Some(rows as u64),
            seed,
        };
        let mut columns = Vec::new();
        for (cname, cdef) in &t.columns.0 {
            let cpath = format!("{tpath}.columns.{cname}");
            if !is_ident(cname) {
                return Err(loc.err(
                    &cdef.span(),
                    &cpath,
                    "not a column name (letters, digits, _)",
                ));
            }
            if columns.iter().any(|c: &Column| &c.name == cname) {
                return Err(loc.err(&cdef.span(), &cpath, "defined twice"));
            }
            let ty = cdef.get_ref().ty.clone();
            match (&ty, &ddl) {
                (None, Ddl::Portable) => {
                    return Err(loc.err(
                        &cdef.span(),
                        &cpath,
                        format!("missing `type` ({PORTABLE_TYPES}), or give the table's DDL under [{tpath}.ddl]"),
                    ))
                }
                (Some(ty), Ddl::Portable) if sql_type(ty, Dbms::Sqlite).is_none() => {
                    return Err(loc.err(
                        &cdef.span(),
                        &cpath,
                        format!("unknown type `{ty}` (portable types: {PORTABLE_TYPES}; for others give the table's DDL under [{tpath}.ddl])"),
                    ))
                }
                _ => {}
            }
            if cdef.get_ref().kind.is_none() && ty.is_some() {
                return Err(loc.err(
                    &cdef.span(),
                    &cpath,
                    "missing `kind`: how the column is filled (sequence, uniform, string, ...)",
                ));
            }
            let (gen, fmt, _) = resolve_gen(cdef, &cpath, &cx)?;
            columns.push(Column {
                name: cname.clone(),
                ty,
                gen,
                fmt,
            });
        }
        for k in &t.primary_key {
            if !columns.iter().any(|c| &c.name == k) {
                return Err(loc.err(
                    &span,
                    &format!("{tpath}.primary_key"),
                    format!("unknown column `{k}`"),
                ));
            }
        }
        let mut indexes = Vec::new();
        for (i, ix) in t.indexes.iter().enumerate() {
            let cols: Vec<String> = ix
                .get_ref()
                .split(',')
                .map(|s| s.trim().to_string())
                .collect();
            if let Some(c) = cols.iter().find(|c| !columns.iter().any(|x| &x.name == *c)) {
                return Err(loc.err(
                    &ix.span(),
                    &format!("{tpath}.indexes[{i}]"),
                    format!("unknown column `{c}`"),
                ));
            }
            indexes.push(cols);
        }
        let key_start = columns.iter().find_map(|c| match (&c.gen, &c.fmt) {
            (Gen::Sequence { start }, _) => Some(*start),
            _ => None,
        });
        tables.push(Table {
            name: tname.clone(),
            rows: rows as u64,
            col_names: columns.iter().map(|c| leak(&c.name)).collect(),
            columns,
            primary_key: t.primary_key.clone(),
            indexes,
            ddl,
            key_start,
        });
    }

    if def.transactions.0.is_empty() {
        return Err(format!(
            "{label}:1: transactions: a workload needs at least one transaction ([transactions.NAME] with statements)"
        ));
    }
    if def.transactions.0.len() > 200 {
        return Err(format!("{label}:1: transactions: at most 200 transactions"));
    }
    let mut txns = Vec::new();
    for (xname, xdef) in &def.transactions.0 {
        let xpath = format!("transactions.{xname}");
        let x = xdef.get_ref();
        if !is_ident(xname) {
            return Err(loc.err(
                &xdef.span(),
                &xpath,
                "not a transaction name (letters, digits, _)",
            ));
        }
        let cx = Ctx {
            loc: &loc,
            vars: &vars,
            tables: &tables,
            own_rows: None,
            seed,
        };
        let mut params = Vec::new();
        for (pname, pdef) in &x.params.0 {
            let ppath = format!("{xpath}.params.{pname}");
            if !is_ident(pname) {
                return Err(loc.err(
                    &pdef.span(),
                    &ppath,
                    "not a parameter name (letters, digits, _)",
                ));
            }
            if pdef.get_ref().ty.is_some() {
                return Err(loc.err(
                    &pdef.span(),
                    &ppath,
                    "`type` applies to table columns, not parameters",
                ));
            }
            let (gen, fmt, inline) = resolve_gen(pdef, &ppath, &cx)?;
            params.push(Param {
                name: pname.clone(),
                gen,
                fmt,
                inline,
            });
        }
        if x.statements.is_empty() {
            return Err(loc.err(
                &xdef.span(),
                &format!("{xpath}.statements"),
                "a transaction needs at least one statement",
            ));
        }
        // Slots: the parameters, then each captured value.
        let mut slots: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
        let mut statements = Vec::new();
        let mut writes = false;
        for (i, sdef) in x.statements.iter().enumerate() {
            let spath = format!("{xpath}.statements[{i}]");
            let s = sdef.get_ref();
            let sql = s.sql.get_ref();
            let sspan = s.sql.span();
            if sql.trim().is_empty() {
                return Err(loc.err(&sspan, &spath, "empty `sql`"));
            }
            let (body, names) = placeholders(sql);
            let mut binds = Vec::new();
            let mut inline: Option<usize> = None;
            for n in &names {
                let later = x.statements[i..]
                    .iter()
                    .any(|st| st.get_ref().capture.contains(n));
                let slot = slots.iter().position(|s| s == n).ok_or_else(|| {
                    if later {
                        loc.err(&sspan, &spath, format!("parameter `{n}` is captured by this or a later statement, so it has no value yet"))
                    } else {
                        loc.err(&sspan, &spath, format!("unknown parameter `{n}` (parameters: {})", if slots.is_empty() { "none".to_string() } else { slots.join(", ") }))
                    }
                })?;
                if slot < params.len() && params[slot].inline.is_some() {
                    if inline.is_some_and(|p| p != slot) {
                        return Err(loc.err(
                            &sspan,
                            &spath,
                            "a statement may use one inline parameter only",
                        ));
                    }
                    inline = Some(slot);
                    binds.push(usize::MAX);
                } else {
                    binds.push(slot);
                }
            }
            // The SQL per inline value (or one), with `?` for the bound parameters.
            let variants: Vec<String> = match inline {
                Some(p) => params[p]
                    .inline
                    .as_ref()
                    .expect("inline parameter")
                    .iter()
                    .map(|v| fill(&body, &binds, v))
                    .collect(),
                None => vec![fill(&body, &binds, "")],
            };
            binds.retain(|b| *b != usize::MAX);
            let mut capture = Vec::new();
            for c in &s.capture {
                if !is_ident(c) {
                    return Err(loc.err(
                        &sdef.span(),
                        &format!("{spath}.capture"),
                        format!("`{c}` is not a name (letters, digits, _)"),
                    ));
                }
                if slots.contains(c) {
                    return Err(loc.err(
                        &sdef.span(),
                        &format!("{spath}.capture"),
                        format!("`{c}` is already a parameter or captured"),
                    ));
                }
                slots.push(c.clone());
                capture.push(slots.len() - 1);
            }
            let first = sql
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_uppercase();
            if !matches!(first.as_str(), "SELECT" | "WITH" | "SHOW" | "VALUES") {
                writes = true;
            }
            statements.push(Stmt {
                variants,
                inline,
                binds,
                capture,
            });
        }
        let (retry_on, retry_max) = match &x.retry {
            None => (default_retry(), 10),
            Some(r) => {
                let rr = r.get_ref();
                let on = match &rr.on {
                    None => default_retry(),
                    Some(list) => list
                        .iter()
                        .map(|n| {
                            ErrorClass::ALL
                                .iter()
                                .copied()
                                .find(|c| c.name() == n)
                                .ok_or_else(|| {
                                    loc.err(
                                        &r.span(),
                                        &format!("{xpath}.retry.on"),
                                        format!(
                                            "unknown error class `{n}` ({})",
                                            ErrorClass::ALL
                                                .iter()
                                                .map(|c| c.name())
                                                .collect::<Vec<_>>()
                                                .join(", ")
                                        ),
                                    )
                                })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                };
                (on, rr.max.unwrap_or(10))
            }
        };
        txns.push(Txn {
            name: xname.clone(),
            weight: x.weight.unwrap_or(1),
            params,
            transaction: x.transaction.unwrap_or(statements.len() > 1),
            pipeline: x.pipeline.unwrap_or(false),
            statements,
            writes,
            retry_on,
            retry_max,
            slots: slots.len(),
        });
    }
    if txns.iter().all(|t| t.weight == 0) {
        return Err(format!("{label}:1: transactions: every `weight` is 0"));
    }

    let mut phases = Vec::new();
    for (i, p) in def.phases.iter().enumerate() {
        let ppath = format!("phases[{i}]");
        let pd = p.get_ref();
        let name = pd
            .name
            .as_ref()
            .map(|n| n.get_ref().clone())
            .unwrap_or_else(|| format!("phase{}", i + 1));
        let name_span = pd.name.as_ref().map_or(p.span(), |n| n.span());
        if phases.iter().any(|x: &Phase| x.name == name) {
            return Err(loc.err(
                &name_span,
                &format!("{ppath}.name"),
                format!("`{name}` is used by an earlier phase"),
            ));
        }
        let duration = match &pd.duration {
            Some(d) => {
                let v = crate::config::parse::duration(d.get_ref())
                    .map_err(|e| loc.err(&d.span(), &format!("{ppath}.duration"), e))?;
                if v < std::time::Duration::from_millis(100) {
                    return Err(loc.err(
                        &d.span(),
                        &format!("{ppath}.duration"),
                        "a phase must last at least 100ms",
                    ));
                }
                Some(v)
            }
            None => None,
        };
        if let Some(r) = &pd.rate {
            let v = *r.get_ref();
            if !(v > 0.0 && v.is_finite()) {
                return Err(loc.err(
                    &r.span(),
                    &format!("{ppath}.rate"),
                    "must be a positive number of transactions per second",
                ));
            }
        }
        let weights = match &pd.weights {
            None => txns.iter().map(|t| t.weight).collect(),
            Some(w) => {
                let mut v = vec![0u32; txns.len()];
                for (k, x) in &w.get_ref().0 {
                    let j = txns.iter().position(|t| &t.name == k).ok_or_else(|| {
                        loc.err(
                            &w.span(),
                            &format!("{ppath}.weights.{k}"),
                            format!("unknown transaction `{k}`"),
                        )
                    })?;
                    v[j] = *x;
                }
                if v.iter().all(|x| *x == 0) {
                    return Err(loc.err(
                        &w.span(),
                        &format!("{ppath}.weights"),
                        "every weight is 0",
                    ));
                }
                v
            }
        };
        phases.push(Phase {
            name,
            duration,
            rate: pd.rate.as_ref().map(|r| *r.get_ref()),
            weights,
        });
    }

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
