//! Reading the catalog: the filters `history`, `compare --baseline catalog:...` and
//! `report --trend` share, and the rows they read (one per measured point of a result).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::store::Val;
use super::{Catalog, HistoryRow, Sameness};
use crate::error::{Error, Result};

/// Which results to read. Every field narrows; an empty filter reads everything.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub workload: Option<String>,
    pub operation: Option<String>,
    /// Compared without case (InnoDB, innodb).
    pub engine: Option<String>,
    /// RFC 3339 (normalized by [`Filter::since`]).
    pub since: Option<String>,
    /// The target's kind (sqlite, mariadb, postgres) or a part of its URL.
    pub target: Option<String>,
    pub host: Option<String>,
    pub threads: Option<usize>,
    /// Server settings that must have exactly these values.
    pub settings: Vec<(String, String)>,
    /// Results of this status only (complete, failed, interrupted).
    pub status: Option<String>,
    /// The newest N results that pass the rest.
    pub last: Option<usize>,
    /// Results of this configuration only (its identity, `Sameness::key`).
    pub config: Option<String>,
}

impl Filter {
    /// `--since`: a date (2026-11-01), a time (2026-11-01T12:00:00Z) or an age (7d, 12h).
    pub fn since(v: &str) -> Result<String> {
        let v = v.trim();
        let bad = || {
            Error::usage(format!(
                "--since {v}: give a date (2026-11-01), a time (2026-11-01T12:00:00Z) or an age (7d, 12h)"
            ))
        };
        if let Ok(d) = humantime::parse_duration(v) {
            let t = std::time::SystemTime::now()
                .checked_sub(d)
                .ok_or_else(bad)?;
            return Ok(humantime::format_rfc3339_seconds(t).to_string());
        }
        let t = if v.len() == 10 {
            format!("{v}T00:00:00Z")
        } else {
            v.to_string()
        };
        let parsed = humantime::parse_rfc3339_weak(t.trim_end_matches('Z')).map_err(|_| bad())?;
        Ok(humantime::format_rfc3339_seconds(parsed).to_string())
    }

    /// `--where KEY=VALUE`.
    pub fn setting(v: &str) -> Result<(String, String)> {
        match v.split_once('=') {
            Some((k, val)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), val.trim().to_string()))
            }
            _ => Err(Error::usage(format!(
                "--where {v}: give a server setting as KEY=VALUE, e.g. innodb_buffer_pool_size=1073741824"
            ))),
        }
    }

    /// The conditions on a result (`r`) and on its points (`p`), with their parameters.
    fn conditions(&self, pg: bool) -> (Vec<String>, Vec<String>, Vec<Val>, Vec<Val>) {
        let (mut on_r, mut on_p, mut pr, mut pp) = (vec![], vec![], vec![], vec![]);
        let mut r = |sql: &str, vals: Vec<Val>| {
            on_r.push(sql.to_string());
            pr.extend(vals);
        };
        if let Some(w) = &self.workload {
            r("r.workload = ?", vec![w.as_str().into()]);
        }
        if let Some(e) = &self.engine {
            r("lower(r.engine) = lower(?)", vec![e.as_str().into()]);
        }
        if let Some(s) = &self.since {
            r("r.started_at >= ?", vec![s.as_str().into()]);
        }
        if let Some(t) = &self.target {
            r(
                "(r.dbms = ? OR r.target LIKE ?)",
                vec![t.as_str().into(), format!("%{t}%").into()],
            );
        }
        if let Some(h) = &self.host {
            r("r.host = ?", vec![h.as_str().into()]);
        }
        if let Some(s) = &self.status {
            r("r.status = ?", vec![s.as_str().into()]);
        }
        if let Some(c) = &self.config {
            r("r.config_id = ?", vec![c.as_str().into()]);
        }
        for (k, v) in &self.settings {
            if pg {
                r(
                    "(r.settings::jsonb ->> CAST(? AS TEXT)) = CAST(? AS TEXT)",
                    vec![k.as_str().into(), v.as_str().into()],
                );
            } else {
                let path = format!("$.{}", serde_json::Value::String(k.clone()));
                r(
                    "json_extract(r.settings, ?) = ?",
                    vec![path.into(), v.as_str().into()],
                );
            }
        }
        if let Some(o) = &self.operation {
            on_p.push("p.operation = ?".to_string());
            pp.push(o.as_str().into());
        }
        if let Some(t) = self.threads {
            on_p.push("p.threads = ?".to_string());
            pp.push(Val::Int(t as i64));
        }
        (on_r, on_p, pr, pp)
    }

    /// `WHERE ...` selecting the results (and their points) and its parameters.
    fn sql(&self, pg: bool) -> (String, Vec<Val>) {
        let (on_r, on_p, pr, pp) = self.conditions(pg);
        let mut all: Vec<String> = on_r.clone();
        all.extend(on_p.iter().cloned());
        let mut params = pr.clone();
        params.extend(pp.iter().cloned());
        if let Some(n) = self.last {
            // The newest N results that have a point passing the point filters.
            let mut inner = on_r.clone();
            if !on_p.is_empty() {
                inner.push(format!(
                    "EXISTS (SELECT 1 FROM points p WHERE p.result_id = r.id AND {})",
                    on_p.join(" AND ")
                ));
            }
            all.push(format!(
                "r.id IN (SELECT r.id FROM results r{} ORDER BY r.started_at DESC, r.id DESC LIMIT ?)",
                where_of(&inner)
            ));
            params.extend(pr);
            params.extend(pp);
            params.push(Val::Int(n as i64));
        }
        (where_of(&all), params)
    }
}

fn where_of(conds: &[String]) -> String {
    if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    }
}

impl Catalog {
    /// Every point of the results `f` selects, oldest first.
    pub fn history(&mut self, f: &Filter) -> Result<Vec<HistoryRow>> {
        let (cond, params) = f.sql(self.store.is_postgres());
        let sql = format!(
            "SELECT {} FROM results r JOIN points p ON p.result_id = r.id{cond}
             ORDER BY r.started_at, r.id, p.seq",
            HistoryRow::select(&self.figures)
        );
        let rows = self.store.query(&sql, &params).map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| HistoryRow::read(r, &self.figures))
            .collect())
    }

    /// The headline figures its rows carry (declared by the owners it was opened with).
    pub fn figures(&self) -> &[String] {
        &self.figures
    }

    /// The ids of the newest `n` complete results that `f` selects, started no later than
    /// `before` and other than the result `identity` (the one being gated), newest first.
    pub fn baseline(
        &mut self,
        f: &Filter,
        identity: &str,
        before: &str,
        n: usize,
    ) -> Result<Vec<i64>> {
        let mut f = f.clone();
        f.last = None;
        f.status = Some("complete".into());
        let (cond, mut params) = f.sql(self.store.is_postgres());
        let glue = if cond.is_empty() { " WHERE" } else { " AND" };
        let sql = format!(
            "SELECT r.id FROM results r{cond}{glue} r.identity <> ? AND r.started_at <= ?
               AND EXISTS (SELECT 1 FROM points p WHERE p.result_id = r.id)
             ORDER BY r.started_at DESC, r.id DESC LIMIT ?"
        );
        // Point conditions in `cond` refer to `p`: select through the points when present.
        let sql = if f.operation.is_some() || f.threads.is_some() {
            sql.replacen(
                "FROM results r",
                "FROM results r JOIN points p ON p.result_id = r.id",
                1,
            )
            .replacen("SELECT r.id", "SELECT DISTINCT r.id, r.started_at", 1)
        } else {
            sql
        };
        params.push(identity.into());
        params.push(before.into());
        params.push(Val::Int(n as i64));
        let rows = self.store.query(&sql, &params).map_err(|e| self.err(e))?;
        Ok(rows.iter().filter_map(|r| r[0].int()).collect())
    }

    /// The configuration's parts of result `id` (empty: no such result).
    pub fn config_parts(&mut self, id: i64) -> Result<Sameness> {
        let rows = self
            .store
            .query(
                "SELECT config_parts FROM results WHERE id = ?",
                &[Val::Int(id)],
            )
            .map_err(|e| self.err(e))?;
        Ok(Sameness::from_json(
            &rows.first().map(|r| r[0].text()).unwrap_or_default(),
        ))
    }

    /// The configuration's identity of result `id` (None: no such result).
    pub fn config_of(&mut self, id: i64) -> Result<Option<String>> {
        let rows = self
            .store
            .query(
                "SELECT config_id FROM results WHERE id = ?",
                &[Val::Int(id)],
            )
            .map_err(|e| self.err(e))?;
        Ok(rows.first().map(|r| r[0].text()))
    }

    /// The compared server settings of result `id`.
    pub fn settings(&mut self, id: i64) -> Result<BTreeMap<String, String>> {
        let rows = self
            .store
            .query("SELECT settings FROM results WHERE id = ?", &[Val::Int(id)])
            .map_err(|e| self.err(e))?;
        let text = rows.first().map(|r| r[0].text()).unwrap_or_default();
        Ok(serde_json::from_str(&text).unwrap_or_default())
    }
}

/// The width `history`'s table keeps to (a terminal's, 80 columns).
const WIDTH: usize = 80;

/// Parts every group heading names in its first line (the rest only where groups differ).
const HEADLINE: &[&str] = &["workload", "target", "server", "engine_used", "host"];

/// `history`'s table, at most 80 columns: the points grouped by configuration (each group
/// headed by its identity and the parts that tell it from the other groups shown), one line
/// per point, the spread of its runs beside the mean. `--wide` and the CSV have every column.
pub fn table(rows: &[HistoryRow]) -> String {
    let mut groups: Vec<(&str, Vec<&HistoryRow>)> = Vec::new();
    for r in rows {
        match groups.iter_mut().find(|(id, _)| *id == r.config_id) {
            Some((_, g)) => g.push(r),
            None => groups.push((&r.config_id, vec![r])),
        }
    }
    // The parts whose values are not the same in every group shown.
    let firsts: Vec<&Sameness> = groups.iter().map(|(_, g)| &g[0].config).collect();
    let names: std::collections::BTreeSet<&String> = firsts
        .iter()
        .flat_map(|s| s.work.keys().chain(s.setup.keys()))
        .collect();
    let part = |s: &Sameness, k: &str| s.work.get(k).or_else(|| s.setup.get(k)).cloned();
    let telling: Vec<&String> = names
        .into_iter()
        .filter(|k| !HEADLINE.contains(&k.as_str()))
        .filter(|k| firsts.iter().any(|s| part(s, k) != part(firsts[0], k)))
        .collect();
    let mut out = format!(
        "{:>6} {:<16}  {:<22} {:>3} {:>10} {:>6} {:>9}\n",
        "id", "started", "operation", "thr", "ops/s", "±sd", "p99 µs"
    );
    let mut flags = std::collections::BTreeSet::new();
    for (id, g) in &groups {
        let s = &g[0].config;
        let get = |k: &str| part(s, k).unwrap_or_default();
        let head = format!(
            "config {id}: {} on {} {} {}, host {}",
            get("workload"),
            get("target"),
            short_version(&get("server")),
            get("engine_used"),
            get("host")
        );
        out.push_str(&fit(&head, WIDTH));
        out.push('\n');
        let words: Vec<String> = telling
            .iter()
            .map(|k| {
                let v = part(s, k).map_or_else(|| "(none)".into(), |v| super::short_part(&v));
                format!("{k}={v}")
            })
            .collect();
        for line in wrap(&words, "  ", WIDTH) {
            out.push_str(&line);
            out.push('\n');
        }
        for r in g {
            let flag = match r.status.as_str() {
                "failed" => 'x',
                "interrupted" => 'i',
                "running" => 'r',
                _ if r.disturbed => '!',
                _ => ' ',
            };
            if flag != ' ' {
                flags.insert(flag);
            }
            let sd = match (r.ops_per_s, r.ops_per_s_sd) {
                (Some(m), Some(s)) if m > 0.0 && r.runs > 1 => format!("{:.1}%", s / m * 100.0),
                _ => "-".into(),
            };
            let started: String = r
                .started_at
                .replacen('T', " ", 1)
                .chars()
                .take(16)
                .collect();
            let line = format!(
                "{:>6}{flag}{:<16}  {:<22} {:>3} {:>10} {:>6} {:>9}",
                r.id,
                started,
                fit(&r.operation, 22),
                r.threads,
                num(r.ops_per_s, 1),
                sd,
                num(r.p99_us, 0),
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    let results: std::collections::BTreeSet<i64> = rows.iter().map(|r| r.id).collect();
    let _ = writeln!(
        out,
        "{} point(s) of {} result(s) in {} configuration(s)",
        rows.len(),
        results.len(),
        groups.len()
    );
    if !flags.is_empty() {
        let legend: Vec<&str> = flags
            .iter()
            .map(|f| match f {
                'x' => "x failed",
                'i' => "i interrupted",
                'r' => "r running",
                _ => "! disturbed runs",
            })
            .collect();
        let _ = writeln!(out, "{}", legend.join(", "));
    }
    out
}

/// At most `n` characters, the last one an ellipsis when cut (a table's cell, a chart's title).
pub(super) fn fit(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

/// `words` joined by " · " in lines of at most `width` characters, each after `indent`.
fn wrap(words: &[String], indent: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for w in words {
        let w = fit(w, width - indent.len());
        let len = |s: &str| s.chars().count();
        if !line.is_empty() && len(&line) + 3 + len(&w) > width {
            lines.push(std::mem::take(&mut line));
        }
        if line.is_empty() {
            line = format!("{indent}{w}");
        } else {
            line = format!("{line} · {w}");
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `history --wide`: one line per point with every headline column (wider than a terminal).
pub fn wide(rows: &[HistoryRow]) -> String {
    let mut out = format!(
        "{:>6}  {:<20} {:<8} {:<14} {:<24} {:>7}  {:<18} {:<12} {:<14} {:>4} {:>12} {:>7} {:>9} {:>9} {:>9}  {}\n",
        "id", "started", "status", "workload", "operation", "threads", "target", "engine", "host",
        "runs", "ops/s", "±sd", "p99 µs", "cpu µs/op", "sleeps/op", "notes"
    );
    for r in rows {
        let sd = match (r.ops_per_s, r.ops_per_s_sd) {
            (Some(m), Some(s)) if m > 0.0 && r.runs > 1 => format!("{:.1}%", s / m * 100.0),
            _ => "-".into(),
        };
        let mut notes = Vec::new();
        if r.disturbed {
            notes.push("disturbed".to_string());
        }
        if let Some(f) = &r.fleet {
            notes.push(f.clone());
        }
        notes.push(format!("config {}", r.config_id));
        let line = format!(
            "{:>6}  {:<20} {:<8} {:<14} {:<24} {:>7}  {:<18} {:<12} {:<14} {:>4} {:>12} {:>7} {:>9} {:>9} {:>9}  {}",
            r.id,
            r.started_at,
            r.status,
            r.workload,
            r.operation,
            r.threads,
            format!("{} {}", r.dbms, short_version(&r.server_version)),
            r.engine,
            r.host,
            r.runs,
            num(r.ops_per_s, 1),
            sd,
            num(r.p99_us, 0),
            num(r.client_us_per_op, 1),
            num(r.client_sleeps_per_op, 2),
            notes.join("; ")
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let results: std::collections::BTreeSet<i64> = rows.iter().map(|r| r.id).collect();
    let _ = writeln!(
        out,
        "{} point(s) of {} result(s)",
        rows.len(),
        results.len()
    );
    out
}

/// `history --format csv`: every column of the rows (`figures`: their headline figures,
/// [`Catalog::figures`]).
pub fn csv(rows: &[HistoryRow], figures: &[String]) -> String {
    let mut out = HistoryRow::header(figures).join(",");
    out.push('\n');
    for r in rows {
        let line: Vec<String> = r.cells().iter().map(|c| csv_cell(c)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: Option<f64>, decimals: usize) -> String {
    v.map(|x| format!("{x:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

/// A server version's number (MariaDB's is long: 10.11.6-MariaDB-0+deb12u1-log; SQLite's and
/// PostgreSQL's start with their name: SQLite 3.50.2).
pub fn short_version(v: &str) -> &str {
    let mut words = v.split([' ', '-']);
    words
        .clone()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .or_else(|| words.next())
        .unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_forms() {
        assert_eq!(Filter::since("2026-11-01").unwrap(), "2026-11-01T00:00:00Z");
        assert_eq!(
            Filter::since("2026-11-01T12:30:00Z").unwrap(),
            "2026-11-01T12:30:00Z"
        );
        assert!(Filter::since("7d").unwrap().ends_with('Z'));
        assert!(Filter::since("yesterday-ish").is_err());
        assert!(Filter::setting("a=1").is_ok());
        assert!(Filter::setting("=1").is_err());
        assert_eq!(short_version("10.11.6-MariaDB-0+deb12u1-log"), "10.11.6");
        assert_eq!(short_version("SQLite 3.50.2"), "3.50.2");
        assert_eq!(short_version("PostgreSQL 16.4 (Debian 16.4-1)"), "16.4");
    }
}
