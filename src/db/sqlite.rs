//! Embedded SQLite (compiled in through rusqlite's `bundled` feature).
//!
//! How the SQLite target runs: every worker has its own connection to the same file in WAL
//! mode, so readers never block each other or the writer; `synchronous=NORMAL` (durable at
//! checkpoints, the usual WAL setting); a busy timeout of 5 s, after which the statement fails
//! with the `busy` error class and is counted, not fatal. Writes take the single write lock:
//! write workloads start their transactions with `BEGIN IMMEDIATE` so that lock conflicts
//! show up as counted busy retries at the start of a transaction, not as deadlocks in the middle.

use rusqlite::{types::ToSqlOutput, types::ValueRef, Connection, ErrorCode};

use super::text::{Quoting, StatementMode, TextStmt};
use super::{DbError, DbResult, ErrorClass, StmtId, TargetSpec, Value};

pub struct SqliteConn {
    conn: Connection,
    /// Statement texts by id; rusqlite's statement cache holds the prepared forms.
    stmts: Vec<String>,
    /// Text mode (`--statements text`): the statements cut at their placeholders, compiled
    /// anew from their text with the parameters written in on every execution.
    texts: Option<Vec<TextStmt>>,
}

fn err(e: rusqlite::Error) -> DbError {
    let class = match &e {
        rusqlite::Error::SqliteFailure(f, _) => match f.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => ErrorClass::Busy,
            ErrorCode::ConstraintViolation => ErrorClass::DuplicateKey,
            ErrorCode::CannotOpen | ErrorCode::NotADatabase => ErrorClass::ConnectionLost,
            _ => ErrorClass::Other,
        },
        _ => ErrorClass::Other,
    };
    DbError::new(class, e.to_string())
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            // Dates are stored as ISO-8601 text, SQLite's usual date form; they sort correctly.
            Value::Date { y, m, d } => ToSqlOutput::Owned(rusqlite::types::Value::Text(format!(
                "{y:04}-{m:02}-{d:02}"
            ))),
        })
    }
}

/// Turn off SQLite's global memory statistics before its first use: they take one process-wide
/// mutex on every allocation, which serializes concurrent readers (measured here: 4 threads
/// used 3x the CPU per query of one thread with it on).
fn configure_library() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sqlite3_config is called once, before any connection is opened by this
        // process; if SQLite was already initialized it returns SQLITE_MISUSE and changes nothing.
        unsafe {
            rusqlite::ffi::sqlite3_config(
                rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS,
                0 as std::os::raw::c_int,
            );
        }
    });
}

impl SqliteConn {
    pub fn open(spec: &TargetSpec) -> DbResult<Self> {
        configure_library();
        let path = &spec.sqlite_path;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                DbError::new(
                    ErrorClass::ConnectionLost,
                    format!("cannot create folder {}: {e}", dir.display()),
                )
            })?;
        }
        let conn = Connection::open(path).map_err(|e| {
            DbError::new(
                ErrorClass::ConnectionLost,
                format!("cannot open SQLite file {}: {e}", path.display()),
            )
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        conn.set_prepared_statement_cache_capacity(64);
        // journal_mode returns a row, so it is read with a query rather than executed.
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(DbError::new(
                ErrorClass::Other,
                format!("SQLite refused WAL mode (got {mode})"),
            ));
        }
        conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY;")
            .map_err(err)?;
        spec.statements
            .check(super::Dbms::Sqlite)
            .map_err(|e| DbError::new(ErrorClass::Other, e))?;
        Ok(Self {
            conn,
            stmts: Vec::new(),
            texts: (spec.statements == StatementMode::Text).then(Vec::new),
        })
    }

    /// Run statement `id` with `params` and hand its rows and column count to `f`: the cached
    /// prepared statement, or in text mode the SQL with the parameters written in, compiled
    /// for this execution only.
    fn with_rows<T>(
        &mut self,
        id: StmtId,
        params: &[Value],
        f: impl FnOnce(&mut rusqlite::Rows<'_>, usize) -> DbResult<T>,
    ) -> DbResult<T> {
        if let Some(texts) = &self.texts {
            let st = texts
                .get(id.0)
                .ok_or_else(|| DbError::new(ErrorClass::Other, "unknown statement"))?;
            let sql = st.render_string(Quoting::Sqlite, params)?;
            let mut stmt = self.conn.prepare(&sql).map_err(err)?;
            let cols = stmt.column_count();
            let mut rows = stmt.query([]).map_err(err)?;
            return f(&mut rows, cols);
        }
        let mut stmt = self.conn.prepare_cached(&self.stmts[id.0]).map_err(err)?;
        let cols = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(err)?;
        f(&mut rows, cols)
    }

    pub fn prepare(&mut self, sql: &str) -> DbResult<StmtId> {
        if let Some(texts) = &mut self.texts {
            texts.push(TextStmt::new(sql, super::Dbms::Sqlite));
            return Ok(StmtId(texts.len() - 1));
        }
        self.conn.prepare_cached(sql).map_err(err)?;
        self.stmts.push(sql.to_string());
        Ok(StmtId(self.stmts.len() - 1))
    }

    pub fn exec_rows(&mut self, id: StmtId, params: &[Value]) -> DbResult<u64> {
        self.with_rows(id, params, |rows, _| {
            let mut n = 0u64;
            while let Some(row) = rows.next().map_err(err)? {
                // Touch the first column so that the value is really produced for the client.
                std::hint::black_box(row.get_ref(0).map_err(err)?);
                n += 1;
            }
            Ok(n)
        })
    }

    pub fn exec_ints(
        &mut self,
        id: StmtId,
        params: &[Value],
        out: &mut Vec<Option<i64>>,
    ) -> DbResult<u64> {
        self.with_rows(id, params, |rows, cols| {
            let mut n = 0u64;
            while let Some(row) = rows.next().map_err(err)? {
                for i in 0..cols {
                    out.push(match row.get_ref(i).map_err(err)? {
                        ValueRef::Null => None,
                        ValueRef::Integer(v) => Some(v),
                        ValueRef::Real(v) => Some(v.round() as i64),
                        ValueRef::Text(t) | ValueRef::Blob(t) => Some(
                            std::str::from_utf8(t)
                                .ok()
                                .and_then(|s| s.trim().parse().ok())
                                .ok_or_else(|| {
                                    DbError::new(ErrorClass::Other, "expected an integer column")
                                })?,
                        ),
                    });
                }
                n += 1;
            }
            Ok(n)
        })
    }

    /// Every column of every row as text (integers and reals in their decimal form).
    pub fn exec_text(
        &mut self,
        id: StmtId,
        params: &[Value],
        out: &mut Vec<Option<String>>,
    ) -> DbResult<u64> {
        self.with_rows(id, params, |rows, cols| {
            let mut n = 0u64;
            while let Some(row) = rows.next().map_err(err)? {
                for i in 0..cols {
                    out.push(cell_text(row.get_ref(i).map_err(err)?));
                }
                n += 1;
            }
            Ok(n)
        })
    }

    pub fn execute(&mut self, sql: &str) -> DbResult<()> {
        self.conn.execute_batch(sql).map_err(err)
    }

    pub fn query(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        let mut stmt = self.conn.prepare(sql).map_err(err)?;
        let cols = stmt.column_count();
        let mut rows = stmt.query([]).map_err(err)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(err)? {
            let mut r = Vec::with_capacity(cols);
            for i in 0..cols {
                r.push(cell_text(row.get_ref(i).map_err(err)?));
            }
            out.push(r);
        }
        Ok(out)
    }

    /// One transaction per batch with a cached prepared INSERT: SQLite's fastest bulk path.
    pub fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Value>],
    ) -> DbResult<()> {
        let marks = vec!["?"; columns.len()].join(",");
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({marks})",
            columns.join(",")
        );
        let tx = self.conn.transaction().map_err(err)?;
        {
            let mut stmt = tx.prepare_cached(&sql).map_err(err)?;
            for row in rows {
                stmt.execute(rusqlite::params_from_iter(row.iter()))
                    .map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }
}

/// A cell as text: integers and reals in their decimal form, NULL as None.
fn cell_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(v) => Some(v.to_string()),
        ValueRef::Real(v) => Some(v.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}
