//! A lean MySQL/MariaDB client for the hot path: the classic protocol (MySQL client/server
//! protocol, "Protocol::HandshakeV10", "COM_STMT_EXECUTE", "Binary Protocol Resultset") over
//! a Unix socket or TCP, with `mysql_native_password` authentication (or none).
//!
//! Why: with one event-loop thread the client's cost per point select is the system calls and
//! a little protocol work; a general driver adds allocation per row, per value and per
//! statement (shared/notes/client-efficiency.md). Here every query is one `write` of a packet
//! built in a reused buffer and usually one `read` into a reused buffer; rows are walked in
//! place, never allocated. Whatever this client does not speak (TLS, other authentication
//! plugins) makes `connect` return `Unsupported`, and the caller falls back to `mysql_async`.

mod handshake;
mod packet;
mod rows;
mod stmt;

use super::sock::{self, Sock};
use super::{DbError, DbResult, ErrorClass, TargetSpec, Value};
use packet::{lenenc_int, lenenc_str, put_lenenc_str, Reader};
use rows::*;
use stmt::row_text;

// Capability flags (MySQL protocol, "Capabilities Flags").
const CLIENT_LONG_PASSWORD: u32 = 1; // also MariaDB's CLIENT_MYSQL: no extended capabilities
const CLIENT_LONG_FLAG: u32 = 4;
const CLIENT_CONNECT_WITH_DB: u32 = 8;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_SSL: u32 = 0x800;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_MULTI_STATEMENTS: u32 = 0x1_0000;
const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
const CLIENT_PS_MULTI_RESULTS: u32 = 0x4_0000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
/// MariaDB's extended capabilities (the handshakes' third capability word, present when the
/// server does not set CLIENT_MYSQL, which is bit 0 = CLIENT_LONG_PASSWORD).
/// MARIADB_CLIENT_CACHE_METADATA (1 << 36): an execution of a prepared statement whose result
/// columns have not changed comes without column definitions.
const MARIADB_CACHE_METADATA: u32 = 1 << (36 - 32);

const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;
const SERVER_STATUS_IN_TRANS: u16 = 0x0001;
const SERVER_STATUS_AUTOCOMMIT: u16 = 0x0002;
const SERVER_STATUS_NO_BACKSLASH_ESCAPES: u16 = 0x0200;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;

/// utf8mb4_general_ci, as mysql_async and libmariadb use by default.
const CHARSET_UTF8MB4: u8 = 45;
const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// Why a wire connection could not be made: a real failure, or something this client does
/// not implement (the caller then uses the general driver).
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
    id: u32,
    params: u16,
    /// The result's columns as the server last described them (prepare, or an execution
    /// whose metadata changed): used when an execution's metadata is cached.
    cols: Vec<Col>,
    /// Parameter types sent with the last execution; the next one with the same types says
    /// "no new types" and sends none (as libmariadb does), so the server keeps its bindings.
    bound: Vec<u8>,
}

/// Column facts used to walk binary rows.
#[derive(Clone, Copy)]
struct Col {
    ty: u8,
    flags: u16,
    decimals: u8,
}

pub struct WireConn {
    /// Registered with the loop's epoll for readability only (`db::sock`).
    stream: sock::Stream,
    r: sock::ReadBuf,
    wbuf: Vec<u8>,
    seq: u8,
    stmts: Vec<Stmt>,
    /// Columns of the result being read (reused).
    cols: Vec<Col>,
    /// Text statements queued by `defer` (whole COM_QUERY packets), written together with the
    /// next command.
    deferred: Vec<u8>,
    /// Replies of deferred statements written but not read yet; read before the next
    /// command's own reply.
    owed: u32,
    /// Whether `Conn::begin` defers BEGIN to the next command (`?begin=`).
    pub pipeline_begin: bool,
    /// MariaDB caches result metadata of prepared statements for this connection
    /// (MARIADB_CLIENT_CACHE_METADATA, as libmariadb asks for): the column-count packet then
    /// carries a byte saying whether column definitions follow.
    cache_metadata: bool,
    pub server_version: String,
    /// Whether `Conn::exec_pipelined` may defer statements (`?pipeline=`).
    pub pipeline_statements: bool,
    /// The session's autocommit as the server's last status flags said.
    autocommit: bool,
    /// `--statements`: prepared on the server, or text (`stmt.rs`).
    mode: crate::db::StatementMode,
    /// Text mode's statements (the SQL cut at its placeholders), by index.
    texts: Vec<crate::db::text::TextStmt>,
    /// The session's sql_mode has NO_BACKSLASH_ESCAPES, as the server's last status flags said
    /// (text mode's literals then escape no backslash).
    no_backslash_escapes: bool,
}

fn lost(e: impl std::fmt::Display) -> DbError {
    DbError::new(
        ErrorClass::ConnectionLost,
        format!("connection to the server lost: {e}"),
    )
}

fn proto(what: &str) -> DbError {
    DbError::new(
        ErrorClass::Other,
        format!("unexpected packet from the server: {what}"),
    )
}

/// Error classes from server error codes (MariaDB manual, "MariaDB Error Codes").
pub fn class_of_code(code: u16) -> ErrorClass {
    match code {
        1213 => ErrorClass::Deadlock,
        1205 => ErrorClass::LockWaitTimeout,
        1062 | 1586 => ErrorClass::DuplicateKey,
        1040 | 1203 => ErrorClass::TooManyConnections,
        1044 | 1045 | 1698 => ErrorClass::AccessDenied,
        1927 | 2006 | 2013 | 1053 => ErrorClass::ConnectionLost,
        3024 | 1969 | 1317 => ErrorClass::QueryTimeout,
        _ => ErrorClass::Other,
    }
}

/// An ERR packet as a DbError: "ERROR 1064 (42000): message".
fn server_error(p: &[u8]) -> DbError {
    let mut r = Reader::new(p);
    r.skip(1);
    let code = r.u16();
    let rest = r.rest();
    let (state, msg) = if rest.first() == Some(&b'#') && rest.len() >= 6 {
        (
            String::from_utf8_lossy(&rest[1..6]).into_owned(),
            &rest[6..],
        )
    } else {
        ("HY000".to_string(), rest)
    };
    DbError::new(
        class_of_code(code),
        format!("ERROR {code} ({state}): {}", String::from_utf8_lossy(msg)),
    )
}

impl WireConn {
    /// The connected socket (the server's pid is its peer's on a Unix socket).
    pub(crate) fn socket(&self) -> &Sock {
        self.stream.get_ref()
    }

    // ---- packets -------------------------------------------------------------------------

    /// Start a packet with sequence number `seq`; returns the buffer to append the payload to.
    fn begin(&mut self, seq: u8) -> &mut Vec<u8> {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0, 0, 0, seq]);
        &mut self.wbuf
    }

    /// Send the packet built in `wbuf` (split into 16 MB parts if it is larger).
    async fn send(&mut self) -> DbResult<()> {
        let len = self.wbuf.len() - 4;
        let seq = self.wbuf[3];
        if len < MAX_PAYLOAD {
            self.wbuf[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.seq = seq.wrapping_add(1);
            if !self.deferred.is_empty() {
                // Deferred statements go first, in the same write.
                return self.write_deferred(true).await;
            }
            let buf = std::mem::take(&mut self.wbuf);
            let r = self.write_all(&buf).await;
            self.wbuf = buf;
            return r;
        }
        if !self.deferred.is_empty() {
            self.write_deferred(false).await?;
        }
        // Split: parts of MAX_PAYLOAD bytes, then a last part shorter than that (maybe empty).
        let payload = self.wbuf[4..].to_vec();
        let mut out = Vec::with_capacity(payload.len() + 4 * (payload.len() / MAX_PAYLOAD + 1));
        let mut s = seq;
        let mut chunks = payload.chunks(MAX_PAYLOAD).peekable();
        let mut last_len = 0;
        while let Some(ch) = chunks.next() {
            out.extend_from_slice(&(ch.len() as u32).to_le_bytes()[..3]);
            out.push(s);
            out.extend_from_slice(ch);
            s = s.wrapping_add(1);
            last_len = ch.len();
            if chunks.peek().is_none() && last_len == MAX_PAYLOAD {
                out.extend_from_slice(&[0, 0, 0, s]);
                s = s.wrapping_add(1);
            }
        }
        let _ = last_len;
        self.seq = s;
        self.write_all(&out).await
    }

    async fn write_all(&mut self, buf: &[u8]) -> DbResult<()> {
        sock::write_all(&self.stream, buf).await.map_err(lost)
    }

    /// Make at least `n` bytes available from `r.pos` (reading as much as the socket has).
    async fn fill(&mut self, n: usize) -> DbResult<()> {
        self.r.fill(&self.stream, n).await.map_err(lost)
    }

    /// Read one whole packet (parts of a > 16 MB packet are joined in place); returns where its
    /// payload is in `r.buf` (valid until the next read).
    async fn packet(&mut self) -> DbResult<std::ops::Range<usize>> {
        self.fill(4).await?;
        let h = self.r.pos;
        let mut last = packet::u24(&self.r.buf[h..]);
        self.seq = self.r.buf[h + 3].wrapping_add(1);
        let mut total = last;
        self.fill(4 + total).await?;
        while last == MAX_PAYLOAD {
            self.fill(4 + total + 4).await?;
            let hdr = self.r.pos + 4 + total;
            last = packet::u24(&self.r.buf[hdr..]);
            self.seq = self.r.buf[hdr + 3].wrapping_add(1);
            self.fill(4 + total + 4 + last).await?;
            let hdr = self.r.pos + 4 + total;
            self.r.buf.copy_within(hdr + 4..self.r.end, hdr);
            self.r.end -= 4;
            total += last;
        }
        let start = self.r.pos + 4;
        self.r.pos = start + total;
        if self.r.pos == self.r.end {
            // Everything consumed: start at the front again (no compaction needed later).
            self.r.pos = 0;
            self.r.end = 0;
            // The payload is still in place: the buffer is only overwritten by the next read.
        }
        Ok(start..start + total)
    }

    // ---- commands ------------------------------------------------------------------------

    /// Queue a text statement (BEGIN, START TRANSACTION) to be written in the same `write`
    /// as the next command, saving its round trip: the server runs the two in order, and its
    /// reply is read before the command's. An error from it is returned by that command
    /// (after the command's own reply is read, so the connection stays in step).
    pub fn defer(&mut self, sql: &str) {
        let len = 1 + sql.len();
        debug_assert!(len < MAX_PAYLOAD);
        self.deferred
            .extend_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.deferred.push(0);
        self.deferred.push(COM_QUERY);
        self.deferred.extend_from_slice(sql.as_bytes());
        self.owed += 1;
        // The statement opens a transaction: from its write on, the batched I/O path holds
        // none of this loop's replies (the reply to BEGIN and the locking statement written
        // with it was held, as the server's "in a transaction" came only with that reply).
        self.stream.in_transaction(true);
    }

    /// Write queued statements now and read their replies (before a command whose reply is
    /// not read through `read_results`).
    async fn settle(&mut self) -> DbResult<()> {
        if !self.deferred.is_empty() {
            self.write_deferred(false).await?;
        }
        self.read_owed().await
    }

    /// Write the deferred statements, followed by the packet in `wbuf` when `with_wbuf`, in
    /// one write; the queue is then empty (its allocation is kept).
    async fn write_deferred(&mut self, with_wbuf: bool) -> DbResult<()> {
        let mut d = std::mem::take(&mut self.deferred);
        if with_wbuf {
            d.extend_from_slice(&self.wbuf);
        }
        let r = self.write_all(&d).await;
        d.clear();
        self.deferred = d;
        r
    }

    /// Read the replies of deferred statements already written; the first error is returned
    /// after all of them are read.
    async fn read_owed(&mut self) -> DbResult<()> {
        let mut first = Ok(());
        while self.owed > 0 {
            self.owed -= 1;
            if let Err(e) = self.read_one(None, &mut |_, _| {}).await {
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

    /// Queue an execution of a prepared statement that returns no rows (INSERT, UPDATE,
    /// DELETE), to be written with the next command like `defer`; an error of it is returned
    /// by that command once every reply is read (`read_owed`). Its parameter types are sent
    /// with it and again with the next execution, since a failed execution may leave the
    /// server without them and nobody reads this one's reply in time to know.
    pub fn defer_exec(&mut self, idx: usize, params: &[Value]) -> DbResult<()> {
        self.unbind(idx);
        self.write_execute(idx, params)?;
        self.unbind(idx);
        let len = self.wbuf.len() - 4;
        if len >= MAX_PAYLOAD {
            return Err(DbError::new(
                ErrorClass::Other,
                "a pipelined statement's parameters exceed one packet",
            ));
        }
        self.wbuf[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.deferred.extend_from_slice(&self.wbuf);
        self.owed += 1;
        Ok(())
    }

    /// Execute several prepared statements in one write (after any queued ones) and read their
    /// results in order: every column of every row as an integer appended to `out`, each
    /// statement's row count to `counts`. The first error is returned once every reply is read,
    /// so that the connection stays in step. Parameter types are sent with each execution (see
    /// `defer_exec`).
    pub async fn exec_ints_many(
        &mut self,
        calls: &[(usize, &[Value])],
        out: &mut Vec<Option<i64>>,
        counts: &mut Vec<u64>,
    ) -> DbResult<()> {
        // Nothing is written before every execution is built: a call that fails to build
        // leaves the queue as it was.
        let mark = self.deferred.len();
        for &(idx, params) in calls {
            self.unbind(idx);
            if let Err(e) = self.write_execute(idx, params) {
                self.deferred.truncate(mark);
                return Err(e);
            }
            self.unbind(idx);
            let len = self.wbuf.len() - 4;
            if len >= MAX_PAYLOAD {
                self.deferred.truncate(mark);
                return Err(DbError::new(
                    ErrorClass::Other,
                    "a batched statement's parameters exceed one packet",
                ));
            }
            self.wbuf[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.deferred.extend_from_slice(&self.wbuf);
        }
        self.write_deferred(false).await?;
        let before = self.read_owed().await;
        if matches!(&before, Err(e) if e.class == ErrorClass::ConnectionLost) {
            return before;
        }
        let mut first = before;
        let mut bad = false;
        for &(idx, _) in calls {
            let mut rows = 0;
            let stmt = self.replying(idx);
            let r = self
                .read_one(stmt, &mut |cols, row| {
                    rows += 1;
                    for v in row_text(stmt.is_some(), cols, row) {
                        out.push(v.and_then(|s| {
                            let p = s.trim().parse::<i64>().ok();
                            bad |= p.is_none();
                            p
                        }));
                    }
                })
                .await;
            counts.push(rows);
            match r {
                Err(e) if e.class == ErrorClass::ConnectionLost => return Err(e),
                Err(e) if first.is_ok() => first = Err(e),
                _ => {}
            }
        }
        if bad && first.is_ok() {
            first = Err(DbError::new(
                ErrorClass::Other,
                "exec_ints_many: a column is not an integer",
            ));
        }
        first
    }

    /// Write the queued statements and read every reply now; the first error is returned
    /// after all of them are read.
    pub async fn flush_deferred(&mut self) -> DbResult<()> {
        self.settle().await
    }

    /// Whether the server's last status said autocommit is off for this session: then a
    /// statement that runs after a deadlock rolled the transaction back opens a new
    /// transaction instead of committing on its own.
    pub fn autocommit_off(&self) -> bool {
        !self.autocommit
    }

    /// Whether the server caches this connection's result metadata (MariaDB 10.6+).
    pub fn caches_metadata(&self) -> bool {
        self.cache_metadata
    }

    /// Execute a prepared statement and walk every row of its results; returns the row count.
    pub async fn exec_rows(&mut self, idx: usize, params: &[Value]) -> DbResult<u64> {
        self.write_execute(idx, params)?;
        self.send().await?;
        let mut rows = 0;
        self.read_results(self.replying(idx), |_, _| rows += 1)
            .await?;
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
        self.write_execute(idx, params)?;
        self.send().await?;
        let mut rows = 0;
        let mut bad = false;
        let stmt = self.replying(idx);
        self.read_results(stmt, |cols, row| {
            rows += 1;
            for v in row_text(stmt.is_some(), cols, row) {
                out.push(v.and_then(|s| {
                    let p = s.trim().parse::<i64>().ok();
                    bad |= p.is_none();
                    p
                }));
            }
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

    /// Execute a prepared statement and return its rows, values as text the way the text
    /// protocol shows them (for tests and checks; not the hot path).
    pub async fn exec_fetch(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> DbResult<Vec<Vec<Option<String>>>> {
        self.write_execute(idx, params)?;
        self.send().await?;
        let mut out = Vec::new();
        let stmt = self.replying(idx);
        self.read_results(stmt, |cols, row| {
            out.push(row_text(stmt.is_some(), cols, row))
        })
        .await?;
        Ok(out)
    }

    /// Run text statements (several separated by `;` allowed), discarding results.
    pub async fn execute(&mut self, sql: &str) -> DbResult<()> {
        self.send_query(sql).await?;
        self.read_results(None, |_, _| {}).await
    }

    /// A text query's rows as strings (NULL as None).
    pub async fn query(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        self.send_query(sql).await?;
        let mut out = Vec::new();
        self.read_results(None, |cols, row| out.push(decode_text_row(cols.len(), row)))
            .await?;
        Ok(out)
    }

    async fn send_query(&mut self, sql: &str) -> DbResult<()> {
        let w = self.begin(0);
        w.push(COM_QUERY);
        w.extend_from_slice(sql.as_bytes());
        self.send().await
    }

    /// Read every result of a command (result sets or OK packets, while the server says more
    /// follow), calling `on_row` for each row. After an error the command's remaining results
    /// are not sent by the server, so the connection stays usable.
    /// `stmt`: the prepared statement whose execution this is (binary rows), or None for a
    /// text command.
    async fn read_results(
        &mut self,
        stmt: Option<usize>,
        mut on_row: impl FnMut(&[Col], &[u8]),
    ) -> DbResult<()> {
        if self.owed > 0 {
            let before = self.read_owed().await;
            if matches!(&before, Err(e) if e.class == ErrorClass::ConnectionLost) {
                return before;
            }
            let r = self.read_one(stmt, &mut on_row).await;
            return before.and(self.after_execution(stmt, r));
        }
        let r = self.read_one(stmt, &mut on_row).await;
        self.after_execution(stmt, r)
    }

    /// After a failed execution the server may not have kept the parameter types: the next
    /// one sends them again.
    fn after_execution(&mut self, stmt: Option<usize>, r: DbResult<()>) -> DbResult<()> {
        if r.is_err() {
            if let Some(st) = stmt.and_then(|i| self.stmts.get_mut(i)) {
                st.bound.clear();
            }
        }
        r
    }

    /// Every result of one command.
    async fn read_one(
        &mut self,
        stmt: Option<usize>,
        on_row: &mut impl FnMut(&[Col], &[u8]),
    ) -> DbResult<()> {
        loop {
            let p = self.packet().await?;
            let pk = &self.r.buf[p];
            let status = match pk.first() {
                Some(0x00) => ok_status(pk),
                Some(0xFF) => return Err(server_error(pk)),
                Some(0xFB) => return Err(proto("LOCAL INFILE is not supported")),
                Some(_) => {
                    let mut r = Reader::new(pk);
                    let n = lenenc_int(&mut r) as usize;
                    // With the metadata cache a byte after the count says whether column
                    // definitions follow (0: they are those the statement had last time).
                    let described = !(self.cache_metadata && !r.is_empty() && r.u8() == 0);
                    let mut cols = std::mem::take(&mut self.cols);
                    cols.clear();
                    if described {
                        for _ in 0..n {
                            let p = self.packet().await?;
                            cols.push(parse_column(&self.r.buf[p]));
                        }
                        if let Some(st) = stmt.and_then(|i| self.stmts.get_mut(i)) {
                            st.cols.clone_from(&cols);
                        }
                    } else {
                        match stmt.and_then(|i| self.stmts.get(i)) {
                            Some(st) if st.cols.len() == n => cols.extend_from_slice(&st.cols),
                            _ => {
                                self.cols = cols;
                                return Err(proto("result without column definitions"));
                            }
                        }
                    }
                    let r = self.read_rows(stmt.is_some(), &cols, on_row).await;
                    self.cols = cols;
                    r?
                }
                None => return Err(proto("empty packet")),
            };
            self.stream
                .in_transaction(status & SERVER_STATUS_IN_TRANS != 0);
            self.autocommit = status & SERVER_STATUS_AUTOCOMMIT != 0;
            self.no_backslash_escapes = status & SERVER_STATUS_NO_BACKSLASH_ESCAPES != 0;
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(());
            }
        }
    }

    /// Rows of one result set, after its column definitions; returns the final status flags.
    async fn read_rows(
        &mut self,
        binary: bool,
        cols: &[Col],
        on_row: &mut impl FnMut(&[Col], &[u8]),
    ) -> DbResult<u16> {
        self.expect_eof().await?;
        loop {
            let p = self.packet().await?;
            let pk = &self.r.buf[p];
            match pk.first() {
                Some(0xFE) if pk.len() < 9 => return Ok(eof_status(pk)),
                Some(0xFF) => return Err(server_error(pk)),
                Some(0x00) if binary => {
                    if !walk_binary_row(cols, pk) {
                        return Err(proto("malformed binary row"));
                    }
                    on_row(cols, pk)
                }
                Some(_) if !binary => on_row(cols, pk),
                _ => return Err(proto("row")),
            }
        }
    }
}

impl Drop for WireConn {
    fn drop(&mut self) {
        // Best effort COM_QUIT so that the server does not count an aborted connection.
        let quit = [1, 0, 0, 0, COM_QUIT];
        sock::goodbye(&self.stream, &quit);
    }
}

fn ok_status(pk: &[u8]) -> u16 {
    let mut r = Reader::new(pk);
    r.skip(1);
    lenenc_int(&mut r); // affected rows
    lenenc_int(&mut r); // last insert id
    r.u16()
}

fn eof_status(pk: &[u8]) -> u16 {
    if pk.len() >= 5 {
        u16::from_le_bytes([pk[3], pk[4]])
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::handshake::native_password;
    use super::*;

    /// A BEGIN deferred to the next statement (`?begin=pipeline`, the default): the loop
    /// counts the session inside a transaction from then on, before that write, so the reply
    /// to BEGIN and its locking statement is not held for a batch. The server's "in a
    /// transaction" came only with that reply: one reply late.
    #[test]
    fn a_deferred_begin_counts_the_session_in_a_transaction_before_its_write() {
        if !crate::db::ring::ring_here() {
            return;
        }
        let (ours, _theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        crate::db::ring::install(64, crate::db::ring::Policy { batch: true }).unwrap();
        let mut c = WireConn {
            stream: sock::Stream::for_test(ours).unwrap(),
            r: sock::ReadBuf::new(),
            wbuf: Vec::new(),
            seq: 0,
            stmts: Vec::new(),
            cols: Vec::new(),
            deferred: Vec::new(),
            owed: 0,
            pipeline_begin: true,
            cache_metadata: false,
            server_version: String::new(),
            pipeline_statements: false,
            autocommit: true,
            mode: crate::db::StatementMode::Prepared,
            texts: Vec::new(),
            no_backslash_escapes: false,
        };
        assert_eq!(crate::db::ring::sessions_in_transaction(), Some(0));
        c.defer("BEGIN");
        assert_eq!(crate::db::ring::sessions_in_transaction(), Some(1));
        drop(c);
        crate::db::ring::uninstall();
    }

    #[test]
    fn native_password_known_answer() {
        // Empty password: empty response (the protocol's rule).
        assert!(native_password(b"", b"12345678901234567890").is_empty());
        // SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))): 20 bytes, reversible with the scramble.
        let r = native_password(b"secret", b"abcdefghijklmnopqrst");
        assert_eq!(r.len(), 20);
    }

    #[test]
    fn binary_row_walk() {
        let cols = [
            Col {
                ty: 8,
                flags: 0,
                decimals: 0,
            },
            Col {
                ty: 253,
                flags: 0,
                decimals: 0,
            },
            Col {
                ty: 253,
                flags: 0,
                decimals: 0,
            },
            Col {
                ty: 10,
                flags: 0,
                decimals: 0,
            },
        ];
        // header, null bitmap (3rd column NULL: bit 2+2), int 7, "hé", date 2001-02-03
        let mut row = vec![0x00, 0b0001_0000];
        row.extend_from_slice(&7i64.to_le_bytes());
        row.extend_from_slice(&[3, b'h', 0xC3, 0xA9]);
        row.extend_from_slice(&[4, 0xD1, 0x07, 2, 3]);
        assert!(walk_binary_row(&cols, &row));
        assert_eq!(
            decode_binary_row(&cols, &row),
            vec![
                Some("7".into()),
                Some("hé".into()),
                None,
                Some("2001-02-03".into())
            ]
        );
        assert!(!walk_binary_row(&cols, &row[..row.len() - 1]));
    }
}
