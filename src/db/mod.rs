//! Database targets: one file per DBMS, one enum to pick one. Workloads write SQL with `?`
//! placeholders; each target adapts it (PostgreSQL gets `$1..$n`).

/// The methods a connection that holds one of two clients forwards to the one it holds: the
/// lean client (`Wire`, statements by index) or the general driver (statements by `StmtId`).
/// MySQL's and PostgreSQL's connections are the same here; what differs is written beside them.
macro_rules! forward_to_client {
    ($conn:ident, $other:ident) => {
        impl $conn {
            pub async fn prepare(&mut self, sql: &str) -> DbResult<StmtId> {
                match self {
                    $conn::Wire(c) => c.prepare(sql).await.map(StmtId),
                    $conn::$other(c) => c.prepare(sql).await,
                }
            }

            pub async fn exec_rows(&mut self, id: StmtId, params: &[Value]) -> DbResult<u64> {
                match self {
                    $conn::Wire(c) => c.exec_rows(id.0, params).await,
                    $conn::$other(c) => c.exec_rows(id, params).await,
                }
            }

            /// Every column of every row as an integer (NULL as `None`); returns the row count.
            pub async fn exec_ints(
                &mut self,
                id: StmtId,
                params: &[Value],
                out: &mut Vec<Option<i64>>,
            ) -> DbResult<u64> {
                match self {
                    $conn::Wire(c) => c.exec_ints(id.0, params, out).await,
                    $conn::$other(c) => c.exec_ints(id, params, out).await,
                }
            }

            /// Every column of every row as text (NULL as `None`); returns the row count.
            pub async fn exec_text(
                &mut self,
                id: StmtId,
                params: &[Value],
                out: &mut Vec<Option<String>>,
            ) -> DbResult<u64> {
                match self {
                    $conn::Wire(c) => {
                        let rows = c.exec_fetch(id.0, params).await?;
                        let n = rows.len() as u64;
                        out.extend(rows.into_iter().flatten());
                        Ok(n)
                    }
                    $conn::$other(c) => c.exec_text(id, params, out).await,
                }
            }

            pub async fn execute(&mut self, sql: &str) -> DbResult<()> {
                match self {
                    $conn::Wire(c) => c.execute(sql).await,
                    $conn::$other(c) => c.execute(sql).await,
                }
            }

            pub async fn query(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
                match self {
                    $conn::Wire(c) => c.query(sql).await,
                    $conn::$other(c) => c.query(sql).await,
                }
            }
        }
    };
}

pub mod mysql;
pub mod mysqlwire;
pub mod peer;
pub mod pgwire;
pub mod postgres;
pub mod ring;
pub(crate) mod sock;
pub mod sqlite;
pub mod text;
pub mod tls;
pub mod url;

use serde::Serialize;

pub use text::StatementMode;
pub use url::{TargetSpec, DEFAULT_TARGET};

/// Which kind of server a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dbms {
    Sqlite,
    Mysql,
    Postgres,
}

impl Dbms {
    pub fn name(self) -> &'static str {
        match self {
            Dbms::Sqlite => "sqlite",
            Dbms::Mysql => "mysql",
            Dbms::Postgres => "postgres",
        }
    }
}

/// A value bound to a statement or inserted by the loader.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
    /// A calendar date (proleptic Gregorian).
    Date {
        y: i32,
        m: u8,
        d: u8,
    },
}

// The class lives in the ground (error.rs): measure counts it and must not import db.
pub use crate::error::ErrorClass;

/// A database error: its class and the driver's message (one line, password scrubbed by callers).
#[derive(Debug, Clone)]
pub struct DbError {
    pub class: ErrorClass,
    pub message: String,
    /// Which of the workload's operation kinds failed (index into `Workload::kinds()`); set by
    /// the driver before it returns the error, 0 otherwise.
    pub kind: u8,
}

impl DbError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        Self {
            class,
            message: crate::error::one_line(&message.into()),
            kind: 0,
        }
    }

    /// A statement executed with `given` parameters where it takes `takes`: refused before
    /// anything is sent, so the connection stays in step (every client says it the same way).
    pub fn check_param_count(takes: usize, given: usize) -> DbResult<()> {
        if takes == given {
            return Ok(());
        }
        Err(DbError::new(
            ErrorClass::Other,
            format!("statement takes {takes} parameters, {given} given"),
        ))
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type DbResult<T> = Result<T, DbError>;

/// Index of a statement prepared on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StmtId(pub usize);

/// One open connection to a target.
pub enum Conn {
    Sqlite(sqlite::SqliteConn),
    Mysql(mysql::MysqlConn),
    Postgres(postgres::PgConn),
}

impl Conn {
    pub async fn connect(spec: &TargetSpec) -> DbResult<Conn> {
        raise_fd_limit();
        let r = match spec.dbms {
            Dbms::Sqlite => sqlite::SqliteConn::open(spec).map(Conn::Sqlite),
            Dbms::Mysql => mysql::MysqlConn::connect(spec).await.map(Conn::Mysql),
            Dbms::Postgres => postgres::PgConn::connect(spec).await.map(Conn::Postgres),
        };
        r.map_err(|e| DbError {
            class: e.class,
            message: spec.scrub(&e.message),
            kind: 0,
        })
    }

    pub fn dbms(&self) -> Dbms {
        match self {
            Conn::Sqlite(_) => Dbms::Sqlite,
            Conn::Mysql(_) => Dbms::Mysql,
            Conn::Postgres(_) => Dbms::Postgres,
        }
    }

    /// Close the connection with a goodbye the server sees. The lean clients send theirs when
    /// dropped; mysql_async only when asked and awaited (else `Aborted_clients` grows).
    pub async fn close(self) -> DbResult<()> {
        match self {
            Conn::Mysql(mysql::MysqlConn::Async(c)) => c.disconnect().await,
            other => {
                drop(other);
                Ok(())
            }
        }
    }

    /// Prepare a statement written with `?` placeholders.
    pub async fn prepare(&mut self, sql: &str) -> DbResult<StmtId> {
        match self {
            Conn::Sqlite(c) => c.prepare(sql),
            Conn::Mysql(c) => c.prepare(sql).await,
            Conn::Postgres(c) => c.prepare(sql).await,
        }
    }

    /// Execute a prepared statement and read every row of its result; returns the row count.
    pub async fn exec_rows(&mut self, id: StmtId, params: &[Value]) -> DbResult<u64> {
        match self {
            Conn::Sqlite(c) => c.exec_rows(id, params),
            Conn::Mysql(c) => c.exec_rows(id, params).await,
            Conn::Postgres(c) => c.exec_rows(id, params).await,
        }
    }

    /// Execute a prepared statement inside a transaction block whose result nobody reads (no
    /// rows: INSERT, UPDATE, DELETE). The lean clients (unless the URL says `?pipeline=off`)
    /// queue it to be written with the next command instead of waiting for its reply, and
    /// return 0: PostgreSQL's rows are counted by `take_pipelined_rows` once read, and an error
    /// in it is returned by the next command (COMMIT at the latest). Everywhere else it is
    /// `exec_rows`.
    ///
    /// PostgreSQL refuses the rest of a transaction block after a failed statement. MySQL runs
    /// the statements already sent, and after a deadlock (which rolls the whole transaction
    /// back) they would run and commit one by one in autocommit mode: so MySQL queues them only
    /// in a session whose autocommit is off (the workload sets it, as tpcc does), where they
    /// open a new transaction that the caller's ROLLBACK undoes, and `commit_pipelined` sends
    /// COMMIT only after every queued reply came back clean.
    pub async fn exec_pipelined(&mut self, id: StmtId, params: &[Value]) -> DbResult<u64> {
        match self {
            Conn::Postgres(postgres::PgConn::Wire(c)) if c.pipeline_statements => {
                c.defer_exec(id.0, params).await?;
                Ok(0)
            }
            Conn::Mysql(mysql::MysqlConn::Wire(c))
                if c.pipeline_statements && c.autocommit_off() =>
            {
                c.defer_exec(id.0, params)?;
                Ok(0)
            }
            _ => self.exec_rows(id, params).await,
        }
    }

    /// BEGIN of a transaction whose statements go through `exec_pipelined`: the PostgreSQL
    /// lean client queues it in the same pipeline (one Sync, one reply for BEGIN and the
    /// statements); otherwise `begin`.
    pub async fn begin_pipelined(&mut self, sql: &str) -> DbResult<()> {
        match self {
            Conn::Postgres(postgres::PgConn::Wire(c))
                if c.pipeline_statements && c.pipeline_begin =>
            {
                c.begin_in_pipe(sql).await
            }
            _ => self.begin(sql).await,
        }
    }

    /// COMMIT of a transaction whose statements went through `exec_pipelined`: the PostgreSQL
    /// lean client queues it at the end of the pipeline and reads every reply; an error of
    /// any queued statement is returned here. The MySQL lean client first reads the replies
    /// of every queued statement and sends COMMIT only if none failed (the caller then rolls
    /// back). Otherwise a plain COMMIT.
    pub async fn commit_pipelined(&mut self) -> DbResult<()> {
        match self {
            Conn::Postgres(postgres::PgConn::Wire(c)) if c.pipeline_statements => {
                c.commit_pipelined().await
            }
            Conn::Mysql(mysql::MysqlConn::Wire(c)) => {
                c.flush_deferred().await?;
                c.execute("COMMIT").await
            }
            _ => self.execute("COMMIT").await,
        }
    }

    /// Execute prepared statements whose columns are integers and that do not depend on each
    /// other's results (reads of one transaction): every column of every row appended to
    /// `out`, each statement's row count to `counts`. The lean MySQL client (unless the URL
    /// says `?pipeline=off`) writes them in one write, after any statements queued by
    /// `exec_pipelined`, and reads every reply in order: one round trip for all; an error is
    /// returned once every reply is read. Elsewhere they run one after another (PostgreSQL's
    /// queued statements go out with the first).
    pub async fn exec_ints_batch(
        &mut self,
        calls: &[(StmtId, &[Value])],
        out: &mut Vec<Option<i64>>,
        counts: &mut Vec<u64>,
    ) -> DbResult<()> {
        match self {
            Conn::Mysql(mysql::MysqlConn::Wire(c)) if c.pipeline_statements => {
                let calls: Vec<(usize, &[Value])> =
                    calls.iter().map(|(id, p)| (id.0, *p)).collect();
                c.exec_ints_many(&calls, out, counts).await
            }
            _ => {
                for (id, params) in calls {
                    let n = self.exec_ints(*id, params, out).await?;
                    counts.push(n);
                }
                Ok(())
            }
        }
    }

    /// Rows of statements run through `exec_pipelined` whose replies were read since the
    /// last call.
    pub fn take_pipelined_rows(&mut self) -> u64 {
        match self {
            Conn::Postgres(postgres::PgConn::Wire(c)) => c.take_owed_rows(),
            _ => 0,
        }
    }

    /// Execute a prepared statement and append every column of every row to `out` as an
    /// integer (NULL as `None`); returns the row count. For values the client must read
    /// (ids, counters, money as integer cents): the SQL casts them to an integer type.
    pub async fn exec_ints(
        &mut self,
        id: StmtId,
        params: &[Value],
        out: &mut Vec<Option<i64>>,
    ) -> DbResult<u64> {
        match self {
            Conn::Sqlite(c) => c.exec_ints(id, params, out),
            Conn::Mysql(c) => c.exec_ints(id, params, out).await,
            Conn::Postgres(c) => c.exec_ints(id, params, out).await,
        }
    }

    /// Run one or more statements given as text (DDL, session settings), discarding results.
    pub async fn execute(&mut self, sql: &str) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => c.execute(sql),
            Conn::Mysql(c) => c.execute(sql).await,
            Conn::Postgres(c) => c.execute(sql).await,
        }
    }

    /// Start a transaction with `sql` (BEGIN, START TRANSACTION, BEGIN IMMEDIATE). With the
    /// lean MySQL and PostgreSQL clients it is written in the same `write` as the next
    /// statement (unless the URL says `?begin=separate`), which saves one round trip per
    /// transaction; an error from it is returned by that statement. Elsewhere it runs now.
    pub async fn begin(&mut self, sql: &str) -> DbResult<()> {
        match self {
            Conn::Mysql(mysql::MysqlConn::Wire(c)) if c.pipeline_begin => {
                c.defer(sql);
                Ok(())
            }
            Conn::Postgres(postgres::PgConn::Wire(c)) if c.pipeline_begin => {
                c.defer(sql);
                Ok(())
            }
            _ => self.execute(sql).await,
        }
    }

    /// Run a text query and return its rows as strings (NULL as `None`); for admin queries.
    pub async fn query(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        match self {
            Conn::Sqlite(c) => c.query(sql),
            Conn::Mysql(c) => c.query(sql).await,
            Conn::Postgres(c) => c.query(sql).await,
        }
    }

    /// First column of the first row, if any.
    pub async fn query_one(&mut self, sql: &str) -> DbResult<Option<String>> {
        Ok(self
            .query(sql)
            .await?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }

    /// Insert rows in one statement (or one transaction on SQLite), in the target's fastest form.
    pub async fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Value>],
    ) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => c.insert_rows(table, columns, rows),
            Conn::Mysql(c) => {
                c.execute(&insert_sql(Dbms::Mysql, table, columns, rows))
                    .await
            }
            Conn::Postgres(c) => {
                c.execute(&insert_sql(Dbms::Postgres, table, columns, rows))
                    .await
            }
        }
    }

    /// Bulk-load rows by streaming them: MySQL `LOAD DATA LOCAL INFILE`, PostgreSQL
    /// `COPY ... FROM STDIN` (text format); SQLite has no such path and inserts.
    pub async fn load_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Value>],
    ) -> DbResult<()> {
        if let Conn::Sqlite(c) = self {
            return c.insert_rows(table, columns, rows);
        }
        let mut buf = Vec::with_capacity(rows.len() * 200);
        for row in rows {
            push_tsv(&mut buf, row);
        }
        let data = bytes::Bytes::from(buf);
        match self {
            Conn::Mysql(c) => c.load_tsv(table, columns, data).await,
            Conn::Postgres(c) => c.copy_tsv(table, columns, data).await,
            Conn::Sqlite(_) => unreachable!("handled above"),
        }
    }

    /// Stream rows already in `push_tsv`'s text form (`data`: whole lines): MySQL `LOAD DATA
    /// LOCAL INFILE` (through mysql_async), PostgreSQL `COPY ... FROM STDIN`. SQLite has no such
    /// path (`load_rows` inserts there).
    pub async fn load_text(
        &mut self,
        table: &str,
        columns: &[&str],
        data: bytes::Bytes,
    ) -> DbResult<()> {
        match self {
            Conn::Mysql(c) => c.load_tsv(table, columns, data).await,
            Conn::Postgres(c) => c.copy_tsv(table, columns, data).await,
            Conn::Sqlite(_) => Err(DbError::new(
                ErrorClass::Other,
                "SQLite has no streamed load: insert the rows (load_rows)",
            )),
        }
    }

    /// The server's version string.
    pub async fn server_version(&mut self) -> DbResult<String> {
        let sql = match self.dbms() {
            Dbms::Sqlite => "SELECT 'SQLite ' || sqlite_version()",
            Dbms::Mysql => "SELECT VERSION()",
            Dbms::Postgres => "SELECT version()",
        };
        Ok(self.query_one(sql).await?.unwrap_or_default())
    }

    /// Execute a prepared statement and append every column of every row to `out` as text
    /// the way the server shows it (NULL as `None`); returns the row count. For values
    /// captured by workload files (not the hot path: one string per value).
    pub async fn exec_text(
        &mut self,
        id: StmtId,
        params: &[Value],
        out: &mut Vec<Option<String>>,
    ) -> DbResult<u64> {
        match self {
            Conn::Sqlite(c) => c.exec_text(id, params, out),
            Conn::Mysql(c) => c.exec_text(id, params, out).await,
            Conn::Postgres(c) => c.exec_text(id, params, out).await,
        }
    }

    /// Whether a table exists in the target's current database/schema.
    pub async fn table_exists(&mut self, table: &str) -> DbResult<bool> {
        let sql = match self.dbms() {
            Dbms::Sqlite => format!("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='{table}'"),
            Dbms::Mysql => format!(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{table}'"
            ),
            Dbms::Postgres => format!("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = '{table}'"),
        };
        Ok(self.query_one(&sql).await?.as_deref() != Some("0"))
    }
}

/// Raise the soft limit of open files to the hard limit, once: every connection is a file
/// descriptor, and the usual soft limit (1024) is below a 1,024-connection run plus its files.
pub fn raise_fd_limit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit with a valid resource and a pointer to a local struct.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
                lim.rlim_cur = lim.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            }
        }
    });
}

/// A multi-row INSERT with literal values (the cheapest form for the server to parse in bulk).
pub fn insert_sql(dbms: Dbms, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(64 + rows.len() * 160);
    let _ = write!(s, "INSERT INTO {table} ({}) VALUES ", columns.join(","));
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('(');
        for (j, v) in row.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            push_literal(&mut s, dbms, v);
        }
        s.push(')');
    }
    s
}

/// Append a value as an SQL literal. Text is quoted with `'` doubled; MySQL also escapes `\`.
pub fn push_literal(s: &mut String, dbms: Dbms, v: &Value) {
    use std::fmt::Write;
    match v {
        Value::Null => s.push_str("NULL"),
        Value::Int(i) => {
            let _ = write!(s, "{i}");
        }
        Value::Text(t) => {
            s.push('\'');
            for c in t.chars() {
                match c {
                    '\'' => s.push_str("''"),
                    '\\' if dbms == Dbms::Mysql => s.push_str("\\\\"),
                    _ => s.push(c),
                }
            }
            s.push('\'');
        }
        Value::Date { y, m, d } => {
            let _ = write!(s, "'{y:04}-{m:02}-{d:02}'");
        }
    }
}

/// Append one row in the tab-separated text form that MySQL's LOAD DATA (default FIELDS and
/// LINES options) and PostgreSQL's COPY text format both read: `\N` for NULL, backslash
/// escapes for backslash, tab, newline and carriage return.
pub fn push_tsv(out: &mut Vec<u8>, row: &[Value]) {
    use std::io::Write;
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        match v {
            Value::Null => out.extend_from_slice(b"\\N"),
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Text(t) => {
                for &b in t.as_bytes() {
                    match b {
                        b'\\' => out.extend_from_slice(b"\\\\"),
                        b'\t' => out.extend_from_slice(b"\\t"),
                        b'\n' => out.extend_from_slice(b"\\n"),
                        b'\r' => out.extend_from_slice(b"\\r"),
                        _ => out.push(b),
                    }
                }
            }
            Value::Date { y, m, d } => {
                let _ = write!(out, "{y:04}-{m:02}-{d:02}");
            }
        }
    }
    out.push(b'\n');
}

/// Rewrite `?` placeholders (outside quotes) as `$1..$n` for PostgreSQL.
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c)
            }
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c)
            }
            (None, '?') => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert_eq!(
            numbered_placeholders("a = ? AND b BETWEEN ? AND ?"),
            "a = $1 AND b BETWEEN $2 AND $3"
        );
        assert_eq!(
            numbered_placeholders("x = '?' AND y = ?"),
            "x = '?' AND y = $1"
        );
    }

    #[test]
    fn tsv() {
        let mut out = Vec::new();
        push_tsv(
            &mut out,
            &[
                Value::Int(-3),
                Value::Text("a\tb\\c\nd".into()),
                Value::Null,
                Value::Date {
                    y: 2001,
                    m: 2,
                    d: 3,
                },
            ],
        );
        assert_eq!(out, b"-3\ta\\tb\\\\c\\nd\t\\N\t2001-02-03\n");
    }

    #[test]
    fn literals() {
        let rows = vec![vec![
            Value::Int(1),
            Value::Text("O'Br\\x".into()),
            Value::Null,
            Value::Date {
                y: 1990,
                m: 2,
                d: 3,
            },
        ]];
        assert_eq!(
            insert_sql(Dbms::Mysql, "t", &["a", "b", "c", "d"], &rows),
            "INSERT INTO t (a,b,c,d) VALUES (1,'O''Br\\\\x',NULL,'1990-02-03')"
        );
        assert_eq!(
            insert_sql(Dbms::Postgres, "t", &["a", "b", "c", "d"], &rows),
            "INSERT INTO t (a,b,c,d) VALUES (1,'O''Br\\x',NULL,'1990-02-03')"
        );
    }
}
