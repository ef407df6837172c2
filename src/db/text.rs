//! How statements travel (`--statements prepared|text|extended`), and what the modes without a
//! server-side prepare need: the statement's SQL cut at its `?` placeholders, and each
//! parameter written into it as a literal, quoted and escaped for the server (the way
//! sysbench's `--db-ps-mode=disable` and pgbench's `-M simple` send their statements).
//!
//! Literals, by target:
//! - MariaDB/MySQL: integers as digits, text in `'...'` with `'` doubled and, unless the session
//!   runs with `NO_BACKSLASH_ESCAPES`, `\` and NUL escaped (`\\`, `\0`): what
//!   `mysql_real_escape_string` guards against. The connection's character set is utf8mb4, in
//!   which no multi-byte character ends in a byte that reads as a quote or a backslash.
//! - PostgreSQL: every non-NULL value as a quoted literal of no type (`'42'`), which the server
//!   resolves from its context exactly as it resolves a parameter whose type the client left
//!   open at Parse (what the prepared path does): so a statement means the same in both modes.
//!   Text with a backslash is written as an escape string (`E'a\\b'`), right whatever
//!   `standard_conforming_strings` says; a NUL, which PostgreSQL text cannot hold, is an error.
//! - SQLite: as MySQL with backslashes taken literally (SQLite has no backslash escapes).

use super::{DbError, DbResult, Dbms, ErrorClass, Value};

/// How a connection sends a workload's statements.
/// (The doc comments of the variants are `--statements`' help.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StatementMode {
    /// Prepared once per connection on the server, executed by id.
    #[default]
    Prepared,
    /// No server-side prepare: each execution is one text query with its parameters written
    /// in as quoted literals (MySQL COM_QUERY, PostgreSQL simple Query).
    #[value(alias = "simple")]
    Text,
    /// PostgreSQL only: the unnamed statement parsed on every execution (Parse, Bind,
    /// Execute, Sync).
    Extended,
}

impl StatementMode {
    pub fn name(self) -> &'static str {
        match self {
            StatementMode::Prepared => "prepared",
            StatementMode::Text => "text",
            StatementMode::Extended => "extended",
        }
    }

    /// The default (for `skip_serializing_if`: results of prepared runs stay as they were).
    pub fn is_prepared(&self) -> bool {
        *self == StatementMode::Prepared
    }

    /// Whether `dbms` can send statements this way; the one-line refusal otherwise.
    pub fn check(self, dbms: Dbms) -> Result<(), String> {
        match (self, dbms) {
            (StatementMode::Extended, Dbms::Postgres) | (StatementMode::Prepared, _) => Ok(()),
            (StatementMode::Text, _) => Ok(()),
            (StatementMode::Extended, other) => Err(format!(
                "--statements extended is PostgreSQL's (the unnamed statement parsed on every execution, as pgbench -M extended); {} takes prepared or text",
                match other {
                    Dbms::Mysql => "MariaDB/MySQL",
                    _ => "SQLite",
                }
            )),
        }
    }
}

/// How literals are written for one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quoting {
    /// MariaDB/MySQL; `backslash`: the session's string literals take backslash escapes (no
    /// `NO_BACKSLASH_ESCAPES` in its sql_mode).
    Mysql {
        backslash: bool,
    },
    Postgres,
    Sqlite,
}

/// A statement's SQL and where its `?` placeholders are (byte offsets), found outside quoted
/// strings, quoted identifiers and comments.
#[derive(Debug, Clone)]
pub struct TextStmt {
    sql: String,
    holes: Vec<usize>,
}

impl TextStmt {
    pub fn new(sql: &str, dbms: Dbms) -> TextStmt {
        TextStmt {
            holes: placeholders(sql, dbms),
            sql: sql.to_string(),
        }
    }

    /// The SQL as given (with `?`).
    pub fn sql(&self) -> &str {
        &self.sql
    }

    pub fn params(&self) -> usize {
        self.holes.len()
    }

    /// An error unless `params` fills the statement's placeholders exactly.
    pub fn check_params(&self, params: &[Value]) -> DbResult<()> {
        DbError::check_param_count(self.holes.len(), params.len())
    }

    /// The SQL with `$1..$n` in place of its placeholders (PostgreSQL's Parse).
    pub fn numbered(&self) -> String {
        let b = &self.sql;
        let mut out = String::with_capacity(b.len() + 2 * self.holes.len());
        let mut at = 0;
        for (n, &h) in self.holes.iter().enumerate() {
            out.push_str(&b[at..h]);
            out.push('$');
            out.push_str(&(n + 1).to_string());
            at = h + 1;
        }
        out.push_str(&b[at..]);
        out
    }

    /// Append the statement with `params` written in as literals to `out`.
    pub fn render(&self, out: &mut Vec<u8>, q: Quoting, params: &[Value]) -> DbResult<()> {
        self.check_params(params)?;
        let b = self.sql.as_bytes();
        let mut at = 0;
        for (&h, v) in self.holes.iter().zip(params) {
            out.extend_from_slice(&b[at..h]);
            push_param(out, q, v)?;
            at = h + 1;
        }
        out.extend_from_slice(&b[at..]);
        Ok(())
    }

    /// The statement with `params` written in, as a string (the general drivers' path).
    pub fn render_string(&self, q: Quoting, params: &[Value]) -> DbResult<String> {
        let mut out = Vec::with_capacity(self.sql.len() + 16 * params.len());
        self.render(&mut out, q, params)?;
        // Only valid UTF-8 went in: the SQL, the values (Strings) and ASCII around them.
        String::from_utf8(out)
            .map_err(|_| DbError::new(ErrorClass::Other, "statement text is not UTF-8"))
    }
}

/// Append `v` as a literal for a session quoted as `q`.
pub fn push_param(out: &mut Vec<u8>, q: Quoting, v: &Value) -> DbResult<()> {
    use std::io::Write;
    let quoted_numbers = q == Quoting::Postgres;
    match v {
        Value::Null => out.extend_from_slice(b"NULL"),
        Value::Int(i) if quoted_numbers => {
            let _ = write!(out, "'{i}'");
        }
        Value::Int(i) => {
            // `x-?` with -5 must not read `x--5`: a comment in PostgreSQL and SQLite.
            if *i < 0 && out.last() == Some(&b'-') {
                out.push(b' ');
            }
            let _ = write!(out, "{i}");
        }
        Value::Text(t) => push_text(out, q, t)?,
        Value::Date { y, m, d } => {
            let _ = write!(out, "'{y:04}-{m:02}-{d:02}'");
        }
    }
    Ok(())
}

fn push_text(out: &mut Vec<u8>, q: Quoting, t: &str) -> DbResult<()> {
    let backslash = match q {
        Quoting::Mysql { backslash } => backslash,
        Quoting::Postgres => {
            if t.as_bytes().contains(&0) {
                return Err(DbError::new(
                    ErrorClass::Other,
                    "a text parameter holds a NUL character, which PostgreSQL text cannot hold",
                ));
            }
            let escape = t.as_bytes().contains(&b'\\');
            if escape {
                out.push(b'E');
            }
            escape
        }
        Quoting::Sqlite => false,
    };
    out.push(b'\'');
    for &c in t.as_bytes() {
        match c {
            b'\'' => out.extend_from_slice(b"''"),
            b'\\' if backslash => out.extend_from_slice(b"\\\\"),
            0 if backslash => out.extend_from_slice(b"\\0"),
            _ => out.push(c),
        }
    }
    out.push(b'\'');
    Ok(())
}

/// Byte offsets of the `?` placeholders of `sql`: outside '...' and "..." (and MySQL's `...`,
/// PostgreSQL's $tag$...$tag$), `-- ` / `#` (MySQL) and `--` (others) line comments and
/// /* */ comments. Backslashes escape in MySQL's quoted strings and PostgreSQL's E'...'.
pub fn placeholders(sql: &str, dbms: Dbms) -> Vec<usize> {
    let b = sql.as_bytes();
    let mysql = dbms == Dbms::Mysql;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    let mut holes = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'?' => holes.push(i),
            b'\'' | b'"' | b'`' if c != b'`' || mysql => {
                let escapes = mysql
                    || (c == b'\''
                        && i > 0
                        && (b[i - 1] == b'E' || b[i - 1] == b'e')
                        && (i < 2 || !ident(b[i - 2])));
                i += 1;
                while i < b.len() && b[i] != c {
                    if escapes && b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-')
                && (!mysql || b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace())) =>
            {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'#' if mysql => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 1;
            }
            b'$' if dbms == Dbms::Postgres && (i == 0 || !ident(b[i - 1])) => {
                // A dollar quote's tag: $$ or $name$ (a name does not start with a digit).
                let start = i;
                let mut j = i + 1;
                while j < b.len() && ident(b[j]) && !(j == i + 1 && b[j].is_ascii_digit()) {
                    j += 1;
                }
                if b.get(j) == Some(&b'$') {
                    let tag = &b[start..=j];
                    i = j + 1;
                    while i < b.len() && !b[i..].starts_with(tag) {
                        i += 1;
                    }
                    i += tag.len() - 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    holes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(sql: &str, dbms: Dbms, q: Quoting, params: &[Value]) -> String {
        TextStmt::new(sql, dbms).render_string(q, params).unwrap()
    }

    const MY: Quoting = Quoting::Mysql { backslash: true };
    const MY_NBE: Quoting = Quoting::Mysql { backslash: false };

    #[test]
    fn mysql_literals_escape_quotes_and_backslashes() {
        let p = [
            Value::Int(-7),
            Value::Text("O'Br\\x'; DROP TABLE t; -- ".into()),
            Value::Null,
            Value::Date {
                y: 2001,
                m: 2,
                d: 3,
            },
        ];
        assert_eq!(
            render("SELECT ?, ?, ?, ?", Dbms::Mysql, MY, &p),
            r"SELECT -7, 'O''Br\\x''; DROP TABLE t; -- ', NULL, '2001-02-03'"
        );
        // NO_BACKSLASH_ESCAPES: a backslash is an ordinary character.
        assert_eq!(
            render("SELECT ?", Dbms::Mysql, MY_NBE, &p[1..2]),
            r"SELECT 'O''Br\x''; DROP TABLE t; -- '"
        );
        // A backslash at the end cannot escape the closing quote; NUL is escaped.
        assert_eq!(
            render("SELECT ?", Dbms::Mysql, MY, &[Value::Text("a\\".into())]),
            r"SELECT 'a\\'"
        );
        assert_eq!(
            render("SELECT ?", Dbms::Mysql, MY, &[Value::Text("a\0b".into())]),
            r"SELECT 'a\0b'"
        );
    }

    #[test]
    fn postgres_literals_are_untyped_and_escape_strings_for_backslashes() {
        let p = [
            Value::Int(-7),
            Value::Text("it's".into()),
            Value::Text(r"a\'b".into()),
            Value::Null,
        ];
        assert_eq!(
            render("SELECT ?, ?, ?, ?", Dbms::Postgres, Quoting::Postgres, &p),
            r"SELECT '-7', 'it''s', E'a\\''b', NULL"
        );
        let e = TextStmt::new("SELECT ?", Dbms::Postgres)
            .render_string(Quoting::Postgres, &[Value::Text("a\0b".into())])
            .unwrap_err();
        assert!(e.message.contains("NUL"), "{}", e.message);
    }

    #[test]
    fn a_negative_number_after_a_minus_is_not_a_comment() {
        assert_eq!(
            render(
                "SELECT 1-?",
                Dbms::Sqlite,
                Quoting::Sqlite,
                &[Value::Int(-5)]
            ),
            "SELECT 1- -5"
        );
        assert_eq!(
            render(
                "SELECT ?",
                Dbms::Sqlite,
                Quoting::Sqlite,
                &[Value::Text(r"a\b".into())]
            ),
            r"SELECT 'a\b'"
        );
    }

    #[test]
    fn placeholders_outside_strings_and_comments() {
        let my = "SELECT '?', \"?\", `?`, 'it\\'s ?', ? /* ? */ -- ?\n # ?\n, ?--?";
        let holes = placeholders(my, Dbms::Mysql);
        assert_eq!(holes.len(), 3, "{holes:?}");
        assert_eq!(&my[holes[0]..], "? /* ? */ -- ?\n # ?\n, ?--?");
        let pg = "SELECT '?', E'\\'?', $$ ? $$, $t$ ? $t$, ? -- ?\n, ?::int, ?";
        assert_eq!(placeholders(pg, Dbms::Postgres).len(), 3);
        assert_eq!(
            TextStmt::new("SELECT '?', ? -- ?\n, ?", Dbms::Postgres).numbered(),
            "SELECT '?', $1 -- ?\n, $2"
        );
        // Standard strings: a backslash does not escape the quote.
        assert_eq!(placeholders("SELECT 'a\\', ?", Dbms::Postgres).len(), 1);
        assert_eq!(
            TextStmt::new("SELECT ?", Dbms::Mysql)
                .render_string(MY, &[])
                .unwrap_err()
                .message,
            "statement takes 1 parameters, 0 given"
        );
    }

    #[test]
    fn modes_by_target() {
        assert!(StatementMode::Extended.check(Dbms::Postgres).is_ok());
        assert!(StatementMode::Text.check(Dbms::Sqlite).is_ok());
        let e = StatementMode::Extended.check(Dbms::Mysql).unwrap_err();
        assert!(e.contains("MariaDB/MySQL takes prepared or text"), "{e}");
        assert_eq!(StatementMode::Extended.name(), "extended");
    }
}
