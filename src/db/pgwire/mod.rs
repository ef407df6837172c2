//! A lean PostgreSQL client for the hot path: the frontend/backend protocol v3 (PostgreSQL
//! docs, "Frontend/Backend Protocol") over a Unix socket or TCP, without TLS.
//!
//! Why: `tokio-postgres` drives each socket from a separate connection task, so every query
//! costs an extra task wake-up and a channel hop, plus allocation per statement, row and
//! value. Here the I/O happens in the calling task: a prepared statement is executed with
//! Bind + Execute + Sync in one `write` from a reused buffer, and the reply (to
//! ReadyForQuery) is read into a reused buffer and walked in place. Statements are prepared
//! once per connection (Parse + Describe + Sync); BEGIN/COMMIT and other unprepared SQL go
//! through the simple Query message.
//!
//! Values travel in the text format both ways (format code 0 for every parameter and every
//! result column): the server parses parameters with the input function of the type it
//! inferred at Parse, exactly as for a literal, and `exec_ints` parses decimal text. Binary
//! would save the server a few nanoseconds of integer parsing per value and cost a per-type
//! encoder here; text keeps one code path for every type.
//!
//! The socket (`db::sock`, shared with the MariaDB client) is watched for readability
//! only, and a read that drained it clears the readiness, so the next reply is awaited directly
//! instead of being preceded by a `recv` that fails with EAGAIN.
//!
//! Authentication: trust, cleartext password, md5 and SCRAM-SHA-256 (crypto from the
//! `postgres-protocol` crate). Whatever this client does not speak (TLS, GSSAPI, SSPI,
//! SCRAM-SHA-256-PLUS only) makes `connect` return `Unsupported`, and the caller falls back to
//! `tokio-postgres`.

pub mod msg;
mod unprepared;

use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};

use super::sock::{self, Sock};
use super::{
    numbered_placeholders, DbError, DbResult, ErrorClass, StatementMode, TargetSpec, Value,
};
use msg::Reader;

/// Why a wire connection could not be made: a real failure, or something this client does
/// not implement (the caller then uses `tokio-postgres`).
pub enum ConnectError {
    Db(DbError),
    Unsupported(String),
}

impl From<DbError> for ConnectError {
    fn from(e: DbError) -> Self {
        ConnectError::Db(e)
    }
}

/// What one prepared statement needs on each execution.
struct Stmt {
    name: String,
    params: usize,
}

/// Bytes of deferred requests after which `defer_exec` writes the queue and reads its
/// replies before queueing more (far below a socket's buffer, so the write cannot block
/// while the server waits for its replies to be read).
const MAX_DEFERRED: usize = 16 * 1024;

pub struct PgWireConn {
    sock: sock::Stream,
    r: sock::ReadBuf,
    wbuf: Vec<u8>,
    stmts: Vec<Stmt>,
    /// Query messages queued by `defer`, written together with the next command.
    deferred: Vec<u8>,
    /// Replies of deferred statements not read yet; read before the next command's reply.
    owed: u32,
    /// DataRows in the replies of deferred statements, read by `read_owed`, not yet taken.
    owed_rows: u64,
    /// `deferred` ends with Bind + Execute messages not yet closed by a Sync.
    pipe_open: bool,
    /// Parameterless statements (BEGIN, COMMIT) prepared for pipelines: SQL and index.
    utility: Vec<(String, usize)>,
    /// Whether `Conn::begin` defers BEGIN to the next command (`?begin=`).
    pub pipeline_begin: bool,
    /// Whether `Conn::exec_pipelined` defers statements (`?pipeline=`).
    pub pipeline_statements: bool,
    /// `server_version` as the server reported it at startup.
    pub server_version: String,
    /// `--statements`: named prepared statements, or none (`unprepared.rs`).
    mode: crate::db::StatementMode,
    /// Text and extended modes' statements (the SQL cut at its placeholders), by index.
    texts: Vec<crate::db::text::TextStmt>,
    /// Extended mode: each statement's SQL with `$1..$n`, parsed as the unnamed statement on
    /// every execution.
    unnamed: Vec<String>,
}

fn lost(e: impl std::fmt::Display) -> DbError {
    DbError::new(
        ErrorClass::ConnectionLost,
        format!("connection to the server lost: {e}"),
    )
}

/// A message this client did not expect: the protocol state is unknown, so the connection is
/// given up (ConnectionLost makes the runner drop it).
fn unexpected(ty: u8, during: &str) -> DbError {
    DbError::new(
        ErrorClass::ConnectionLost,
        format!(
            "unexpected message '{}' from the server during {during}; connection dropped",
            ty as char
        ),
    )
}

/// An ErrorResponse as a DbError ("ERROR: message", as the tokio-postgres path shows it).
/// A FATAL or PANIC error ends the session, whatever its SQLSTATE.
fn server_error(body: &[u8], in_session: bool) -> DbError {
    let e = msg::parse_error(body);
    let mut class = msg::class_of_sqlstate(&e.code);
    if in_session && matches!(e.severity_raw.as_str(), "FATAL" | "PANIC") {
        class = ErrorClass::ConnectionLost;
    }
    DbError::new(class, format!("{}: {}", e.severity, e.message))
}

impl PgWireConn {
    /// The connected socket (the server's pid is its peer's on a Unix socket).
    pub(crate) fn socket(&self) -> &Sock {
        self.sock.get_ref()
    }

    pub async fn connect(spec: &TargetSpec) -> Result<Self, ConnectError> {
        let sock = match &spec.socket {
            Some(dir) => {
                // libpq's convention: the socket is DIR/.s.PGSQL.PORT.
                let path = format!("{}/.s.PGSQL.{}", dir.trim_end_matches('/'), spec.port);
                sock::connect_unix(&path)
                    .await
                    .map_err(|e| sock::connect_error(&format!("socket {path}"), &e))?
            }
            None => sock::connect_tcp(&spec.host, spec.port)
                .await
                .map_err(|e| sock::connect_error(&format!("{}:{}", spec.host, spec.port), &e))?,
        };
        let mut c = PgWireConn {
            sock,
            r: sock::ReadBuf::new(),
            wbuf: Vec::with_capacity(4096),
            stmts: Vec::new(),
            deferred: Vec::new(),
            owed: 0,
            owed_rows: 0,
            pipe_open: false,
            utility: Vec::new(),
            pipeline_begin: spec.pipeline_begin,
            pipeline_statements: spec.pipeline_statements,
            server_version: String::new(),
            mode: spec.statements,
            texts: Vec::new(),
            unnamed: Vec::new(),
        };
        c.startup(spec).await?;
        Ok(c)
    }

    async fn startup(&mut self, spec: &TargetSpec) -> Result<(), ConnectError> {
        self.wbuf.clear();
        msg::startup(
            &mut self.wbuf,
            &[
                ("user", &spec.user),
                ("database", &spec.database),
                ("application_name", "enginebench"),
                ("client_encoding", "UTF8"),
            ],
        );
        self.flush().await?;
        let password = spec.password.as_deref().unwrap_or("").as_bytes();
        let mut scram: Option<ScramSha256> = None;
        loop {
            let (ty, body) = self.message().await?;
            let body = &self.r.buf[body];
            match ty {
                b'R' => {
                    let mut r = Reader::new(body);
                    let code = r.i32();
                    let data = r.rest();
                    self.wbuf.clear();
                    match code {
                        0 => continue, // AuthenticationOk
                        3 => {
                            if password.is_empty() {
                                return Err(no_password().into());
                            }
                            let mut p = password.to_vec();
                            p.push(0);
                            msg::password(&mut self.wbuf, &p);
                        }
                        5 if data.len() == 4 => {
                            if password.is_empty() {
                                return Err(no_password().into());
                            }
                            let salt = [data[0], data[1], data[2], data[3]];
                            let hash = postgres_protocol::authentication::md5_hash(
                                spec.user.as_bytes(),
                                password,
                                salt,
                            );
                            let mut p = hash.into_bytes();
                            p.push(0);
                            msg::password(&mut self.wbuf, &p);
                        }
                        10 => {
                            let mut r = Reader::new(data);
                            let mut found = false;
                            loop {
                                let m = r.cstr();
                                if m.is_empty() || r.failed() {
                                    break;
                                }
                                found |= m == SCRAM_SHA_256.as_bytes();
                            }
                            if !found {
                                return Err(ConnectError::Unsupported(
                                    "SASL without SCRAM-SHA-256".into(),
                                ));
                            }
                            if password.is_empty() {
                                return Err(no_password().into());
                            }
                            let s = ScramSha256::new(password, ChannelBinding::unsupported());
                            msg::sasl_initial(&mut self.wbuf, SCRAM_SHA_256, s.message());
                            scram = Some(s);
                        }
                        11 => {
                            let Some(s) = scram.as_mut() else {
                                return Err(unexpected(b'R', "authentication").into());
                            };
                            s.update(data).map_err(|e| {
                                DbError::new(
                                    ErrorClass::AccessDenied,
                                    format!("SCRAM authentication failed: {e}"),
                                )
                            })?;
                            msg::password(&mut self.wbuf, s.message());
                        }
                        12 => {
                            let Some(s) = scram.as_mut() else {
                                return Err(unexpected(b'R', "authentication").into());
                            };
                            s.finish(data).map_err(|e| {
                                DbError::new(
                                    ErrorClass::AccessDenied,
                                    format!("SCRAM server signature rejected: {e}"),
                                )
                            })?;
                            continue;
                        }
                        other => {
                            return Err(ConnectError::Unsupported(format!(
                                "authentication request {other}"
                            )))
                        }
                    }
                    self.flush().await?;
                }
                b'E' => {
                    let mut e = server_error(body, false);
                    if e.class == ErrorClass::AccessDenied {
                        e.message
                            .push_str(" (check the user and the password: set it with PGPASSWORD)");
                    }
                    return Err(e.into());
                }
                b'S' => {
                    let mut r = Reader::new(body);
                    if r.cstr() == b"server_version" {
                        self.server_version = String::from_utf8_lossy(r.cstr()).into_owned();
                    }
                }
                // BackendKeyData (for cancel requests, which this client does not send),
                // notices, protocol-version negotiation: nothing to do.
                b'K' | b'N' | b'v' => {}
                b'Z' => return Ok(()),
                other => return Err(unexpected(other, "startup").into()),
            }
        }
    }

    // ---- I/O ------------------------------------------------------------------------------

    /// Write all of `wbuf`, after any deferred statements (in the same write).
    async fn flush(&mut self) -> DbResult<()> {
        self.close_pipe();
        if !self.deferred.is_empty() {
            let mut d = std::mem::take(&mut self.deferred);
            d.extend_from_slice(&self.wbuf);
            std::mem::swap(&mut d, &mut self.wbuf);
            d.clear();
            self.deferred = d;
        }
        sock::write_all(&self.sock, &self.wbuf).await.map_err(lost)
    }

    async fn write_bytes(&mut self, buf: &[u8]) -> DbResult<()> {
        sock::write_all(&self.sock, buf).await.map_err(lost)
    }

    /// Make at least `n` bytes available from `r.pos` (reading as much as the socket has).
    async fn fill(&mut self, n: usize) -> DbResult<()> {
        self.r.fill(&self.sock, n).await.map_err(lost)
    }

    /// Read one whole backend message: its type and where its body is in `r.buf` (valid until
    /// the next read).
    async fn message(&mut self) -> DbResult<(u8, std::ops::Range<usize>)> {
        self.fill(msg::HEADER).await?;
        let h = self.r.pos;
        let ty = self.r.buf[h];
        let len = u32::from_be_bytes([
            self.r.buf[h + 1],
            self.r.buf[h + 2],
            self.r.buf[h + 3],
            self.r.buf[h + 4],
        ]) as usize;
        if !(4..=msg::MAX_MESSAGE).contains(&len) {
            return Err(lost(format!("bad message length {len}")));
        }
        self.fill(1 + len).await?;
        let start = self.r.pos + msg::HEADER;
        let end = self.r.pos + 1 + len;
        if ty == b'Z' && len == 5 {
            // ReadyForQuery: 'I' idle, 'T' in a transaction, 'E' in a failed one.
            self.sock.in_transaction(self.r.buf[start] != b'I');
        }
        self.r.pos = end;
        if self.r.pos == self.r.end {
            // All consumed: the next read starts at the front (the body stays in place until
            // then).
            self.r.pos = 0;
            self.r.end = 0;
        }
        Ok((ty, start..end))
    }

    // ---- commands -------------------------------------------------------------------------

    /// Queue a text statement (BEGIN) to be written in the same `write` as the next command,
    /// saving its round trip: the server runs the two in order, and its reply is read before
    /// the command's. An error from it is returned by that command (after the command's own
    /// reply is read, so the connection stays in step).
    pub fn defer(&mut self, sql: &str) {
        self.close_pipe();
        msg::query(&mut self.deferred, sql);
        self.owed += 1;
        // The statement opens a transaction: from its write on, the batched I/O path holds
        // none of this loop's replies (the reply to BEGIN and the locking statement written
        // with it was held, as the server's "in a transaction" came only with that reply).
        self.sock.in_transaction(true);
    }

    /// End the run of deferred Bind + Execute messages with its Sync (one reply up to
    /// ReadyForQuery is then owed for all of them).
    fn close_pipe(&mut self) {
        if self.pipe_open {
            msg::sync(&mut self.deferred);
            self.owed += 1;
            self.pipe_open = false;
        }
    }

    /// Queue Bind + Execute of prepared statement `idx`, to be written with the next command,
    /// like `defer`; for statements inside a transaction block (BEGIN sent). Consecutive
    /// deferred statements share one Sync, written before the next command, as in libpq's
    /// pipeline mode: the server answers them with one write. After an error the server skips
    /// the rest up to that Sync; inside a transaction block they would have failed anyway
    /// ("current transaction is aborted"), and COMMIT then rolls back. The error comes back
    /// from the next command that reads replies; the DataRows of the deferred replies are
    /// counted for `take_owed_rows`. At most `MAX_DEFERRED` bytes wait: beyond that the queue
    /// is written and its replies read first, so a long transaction never has more unread
    /// requests than the socket holds.
    pub async fn defer_exec(&mut self, idx: usize, params: &[Value]) -> DbResult<()> {
        if self.deferred.len() > MAX_DEFERRED {
            self.settle().await?;
        }
        if self.mode != StatementMode::Prepared {
            return self.defer_unprepared(idx, params);
        }
        let name = checked(&self.stmts, idx, params)?;
        let d = &mut self.deferred;
        msg::bind(d, name, params);
        msg::execute(d);
        self.pipe_open = true;
        Ok(())
    }

    /// Queue BEGIN (`sql`) at the head of a pipeline of `defer_exec` statements, under the same
    /// Sync, so that the server answers them all with one write. BEGIN and COMMIT are named
    /// prepared statements of this connection (prepared on first use, before anything is
    /// queued), as in pgbench's pipeline mode with `-M prepared`: no Parse per transaction.
    pub async fn begin_in_pipe(&mut self, sql: &str) -> DbResult<()> {
        if self.mode != StatementMode::Prepared {
            self.begin_unprepared(sql);
            return Ok(());
        }
        let b = self.utility(sql).await?;
        self.utility("COMMIT").await?;
        let d = &mut self.deferred;
        msg::bind(d, &self.stmts[b].name, &[]);
        msg::execute(d);
        self.pipe_open = true;
        // As in `defer`: the loop holds no reply from the write of this BEGIN on.
        self.sock.in_transaction(true);
        Ok(())
    }

    /// The prepared statement for a parameterless utility statement, prepared on first use.
    async fn utility(&mut self, sql: &str) -> DbResult<usize> {
        if let Some(&(_, i)) = self.utility.iter().find(|(s, _)| s == sql) {
            return Ok(i);
        }
        let i = self.prepare(sql).await?;
        self.utility.push((sql.to_string(), i));
        Ok(i)
    }

    /// COMMIT at the end of a pipeline: queued in it under its Sync, then the whole queue is
    /// written and every reply read; the first error of the queue is returned (the server then
    /// skipped the rest, COMMIT included, and the transaction block is left failed: the caller
    /// rolls back, as after any error). With nothing queued it is a plain COMMIT.
    pub async fn commit_pipelined(&mut self) -> DbResult<()> {
        if !self.pipe_open {
            return self.execute("COMMIT").await;
        }
        let d = &mut self.deferred;
        match self.utility.iter().find(|(s, _)| s == "COMMIT") {
            Some(&(_, i)) => msg::bind(d, &self.stmts[i].name, &[]),
            None => {
                msg::parse(d, "", "COMMIT");
                msg::bind(d, "", &[]);
            }
        }
        msg::execute(d);
        self.settle().await
    }

    /// DataRows in the replies of deferred statements read since the last call.
    pub fn take_owed_rows(&mut self) -> u64 {
        std::mem::take(&mut self.owed_rows)
    }

    /// Write queued statements now and read their replies (before a command whose reply is
    /// not read through `read_reply`).
    async fn settle(&mut self) -> DbResult<()> {
        if self.owed == 0 && !self.pipe_open {
            return Ok(());
        }
        self.wbuf.clear();
        self.flush().await?;
        self.read_owed().await
    }

    /// Read the replies of deferred statements already written; the first error is returned
    /// after all of them are read.
    async fn read_owed(&mut self) -> DbResult<()> {
        let mut first = Ok(());
        let mut rows = 0;
        while self.owed > 0 {
            self.owed -= 1;
            let r = self.read_one(&mut |_| rows += 1).await;
            self.owed_rows += std::mem::take(&mut rows);
            if let Err(e) = r {
                if e.class == ErrorClass::ConnectionLost {
                    return Err(e);
                }
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }

    /// Prepare a statement written with `?` placeholders; returns its index. In text and
    /// extended modes nothing is sent: the SQL is kept for its executions.
    pub async fn prepare(&mut self, sql: &str) -> DbResult<usize> {
        if self.mode != StatementMode::Prepared {
            return Ok(self.keep_unprepared(sql));
        }
        self.settle().await?;
        let name = format!("s{}", self.stmts.len());
        self.wbuf.clear();
        msg::parse(&mut self.wbuf, &name, &numbered_placeholders(sql));
        msg::describe_statement(&mut self.wbuf, &name);
        msg::sync(&mut self.wbuf);
        self.flush().await?;
        let mut params = 0;
        let mut error = None;
        loop {
            let (ty, body) = self.message().await?;
            let body = &self.r.buf[body];
            match ty {
                b'1' | b'T' | b'n' => {}
                b't' => params = Reader::new(body).i16().max(0) as usize,
                b'E' => error = Some(server_error(body, true)),
                b'Z' => break,
                b'N' | b'S' | b'A' => {}
                other => return Err(unexpected(other, "prepare")),
            }
        }
        if let Some(e) = error {
            return Err(e);
        }
        self.stmts.push(Stmt { name, params });
        Ok(self.stmts.len() - 1)
    }

    /// Bind + Execute + Sync of statement `idx`, in `wbuf`, then one write.
    async fn send_execute(&mut self, idx: usize, params: &[Value]) -> DbResult<()> {
        self.wbuf.clear();
        if self.mode != StatementMode::Prepared {
            self.write_unprepared(idx, params)?;
            return self.flush().await;
        }
        let name = checked(&self.stmts, idx, params)?;
        msg::bind(&mut self.wbuf, name, params);
        msg::execute(&mut self.wbuf);
        msg::sync(&mut self.wbuf);
        self.flush().await
    }

    /// Read the reply to a command up to ReadyForQuery, calling `on_row` with the body of
    /// every DataRow. An error is returned after ReadyForQuery, so the connection stays usable.
    async fn read_reply(&mut self, mut on_row: impl FnMut(&[u8])) -> DbResult<()> {
        if self.owed > 0 {
            let before = self.read_owed().await;
            if matches!(&before, Err(e) if e.class == ErrorClass::ConnectionLost) {
                return before;
            }
            let r = self.read_one(&mut on_row).await;
            return before.and(r);
        }
        self.read_one(&mut on_row).await
    }

    /// The reply to one command, up to ReadyForQuery.
    async fn read_one(&mut self, on_row: &mut impl FnMut(&[u8])) -> DbResult<()> {
        let mut error = None;
        loop {
            let (ty, body) = self.message().await?;
            let body = &self.r.buf[body];
            match ty {
                b'D' => on_row(body),
                b'1' | b'2' | b'C' | b'T' | b'I' | b'n' | b's' => {}
                b'E' => {
                    let e = server_error(body, true);
                    if e.class == ErrorClass::ConnectionLost {
                        // FATAL: the server closes the session; no ReadyForQuery follows.
                        return Err(e);
                    }
                    error.get_or_insert(e);
                }
                b'Z' => break,
                b'N' | b'S' | b'A' => {}
                // COPY started through a text command: refuse it, the server then errors.
                b'G' => {
                    self.wbuf.clear();
                    let at = msg::begin(&mut self.wbuf, b'f');
                    msg::put_cstr(&mut self.wbuf, b"COPY FROM STDIN is not supported here");
                    msg::finish(&mut self.wbuf, at);
                    self.flush().await?;
                }
                // COPY TO STDOUT through a text command: its data is discarded.
                b'H' | b'd' | b'c' => {}
                other => return Err(unexpected(other, "a query")),
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Execute a prepared statement and walk every row; returns the row count.
    pub async fn exec_rows(&mut self, idx: usize, params: &[Value]) -> DbResult<u64> {
        self.send_execute(idx, params).await?;
        let mut rows = 0u64;
        let mut bad = false;
        self.read_reply(|row| {
            rows += 1;
            bad |= !msg::walk_data_row(row, |v| {
                std::hint::black_box(v);
            });
        })
        .await?;
        if bad {
            return Err(lost("malformed DataRow"));
        }
        Ok(rows)
    }

    /// Execute a prepared statement; append every column of every row as an integer (NULL as
    /// `None`) and return the row count. A value that is not an integer is an error.
    pub async fn exec_ints(
        &mut self,
        idx: usize,
        params: &[Value],
        out: &mut Vec<Option<i64>>,
    ) -> DbResult<u64> {
        self.send_execute(idx, params).await?;
        let mut rows = 0u64;
        let mut bad = false;
        self.read_reply(|row| {
            rows += 1;
            bad |= !msg::walk_data_row(row, |v| match v {
                None => out.push(None),
                Some(b) => {
                    let p = msg::parse_int(b);
                    bad |= p.is_none();
                    out.push(p);
                }
            });
        })
        .await?;
        if bad {
            return Err(DbError::new(
                ErrorClass::Other,
                "exec_ints: a column is not an integer",
            ));
        }
        Ok(rows)
    }

    /// Execute a prepared statement and return its rows as text (NULL as `None`); for tests
    /// and captures, not the hot path.
    pub async fn exec_fetch(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> DbResult<Vec<Vec<Option<String>>>> {
        self.send_execute(idx, params).await?;
        let mut out = Vec::new();
        self.read_reply(|row| out.push(text_row(row))).await?;
        Ok(out)
    }

    /// Run one or more statements as text (simple Query), discarding results.
    pub async fn execute(&mut self, sql: &str) -> DbResult<()> {
        self.wbuf.clear();
        msg::query(&mut self.wbuf, sql);
        self.flush().await?;
        self.read_reply(|_| {}).await
    }

    /// A text query's rows as strings (NULL as `None`).
    pub async fn query(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        self.wbuf.clear();
        msg::query(&mut self.wbuf, sql);
        self.flush().await?;
        let mut out = Vec::new();
        self.read_reply(|row| out.push(text_row(row))).await?;
        Ok(out)
    }

    /// `COPY table (columns) FROM STDIN` of `data` (tab-separated text rows, see
    /// `db::push_tsv`), sent as one CopyData message.
    pub async fn copy_tsv(&mut self, table: &str, columns: &[&str], data: &[u8]) -> DbResult<()> {
        self.settle().await?;
        self.wbuf.clear();
        msg::query(
            &mut self.wbuf,
            &format!("COPY {table} ({}) FROM STDIN", columns.join(",")),
        );
        self.flush().await?;
        let mut error = None;
        loop {
            let (ty, body) = self.message().await?;
            let body = &self.r.buf[body];
            match ty {
                b'G' => {
                    self.wbuf.clear();
                    self.wbuf.push(b'd');
                    self.wbuf
                        .extend_from_slice(&((data.len() + 4) as u32).to_be_bytes());
                    self.flush().await?;
                    self.write_bytes(data).await?;
                    self.wbuf.clear();
                    self.wbuf.extend_from_slice(&[b'c', 0, 0, 0, 4]);
                    self.flush().await?;
                }
                b'C' | b'N' | b'S' | b'A' => {}
                b'E' => {
                    if error.is_none() {
                        error = Some(server_error(body, true));
                    }
                }
                b'Z' => break,
                other => return Err(unexpected(other, "COPY")),
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The name of prepared statement `idx`, if `params` fit it.
fn checked<'a>(stmts: &'a [Stmt], idx: usize, params: &[Value]) -> DbResult<&'a str> {
    let Some(st) = stmts.get(idx) else {
        return Err(DbError::new(
            ErrorClass::Other,
            "unknown prepared statement",
        ));
    };
    if params.len() != st.params {
        return Err(DbError::new(
            ErrorClass::Other,
            format!(
                "statement takes {} parameters, {} given",
                st.params,
                params.len()
            ),
        ));
    }
    Ok(&st.name)
}

/// A DataRow in text format as strings.
fn text_row(body: &[u8]) -> Vec<Option<String>> {
    let mut v = Vec::new();
    msg::walk_data_row(body, |c| {
        v.push(c.map(|b| String::from_utf8_lossy(b).into_owned()))
    });
    v
}

fn no_password() -> DbError {
    DbError::new(
        ErrorClass::AccessDenied,
        "the server asks for a password and none was given (set it with PGPASSWORD)",
    )
}

impl Drop for PgWireConn {
    fn drop(&mut self) {
        // Best effort Terminate, so the server logs a clean disconnect.
        let mut t = Vec::with_capacity(5);
        msg::terminate(&mut t);
        sock::goodbye(&self.sock, &t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As mysqlwire's: a deferred BEGIN counts the session inside a transaction before its
    /// write, not after its reply was read (by then the reply could have been held).
    #[test]
    fn a_deferred_begin_counts_the_session_in_a_transaction_before_its_write() {
        if !crate::db::ring::ring_here() {
            return;
        }
        let (ours, _theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        crate::db::ring::install(64, crate::db::ring::Policy { batch: true }).unwrap();
        let mut c = PgWireConn {
            sock: sock::Stream::for_test(ours).unwrap(),
            r: sock::ReadBuf::new(),
            wbuf: Vec::new(),
            stmts: Vec::new(),
            deferred: Vec::new(),
            owed: 0,
            owed_rows: 0,
            pipe_open: false,
            utility: Vec::new(),
            pipeline_begin: true,
            pipeline_statements: true,
            server_version: String::new(),
            mode: StatementMode::Prepared,
            texts: Vec::new(),
            unnamed: Vec::new(),
        };
        assert_eq!(crate::db::ring::sessions_in_transaction(), Some(0));
        c.defer("BEGIN");
        assert_eq!(crate::db::ring::sessions_in_transaction(), Some(1));
        drop(c);
        crate::db::ring::uninstall();
    }
}
