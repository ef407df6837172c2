//! MariaDB / MySQL over the binary protocol (prepared statements): through enginebench's own
//! lean client (`mysqlwire`, the default, cheapest in client CPU per query) or `mysql_async`
//! (`?driver=mysql_async`, and the fallback when the lean client cannot talk to a server).

use mysql_async::prelude::Queryable;
use mysql_async::{Opts, OptsBuilder, Params, Statement};

use super::mysqlwire::{ConnectError, WireConn};
use super::text::{Quoting, StatementMode, TextStmt};
use super::tls::SslMode;
use super::url::MysqlDriver;
use super::{DbError, DbResult, ErrorClass, StmtId, TargetSpec, Value};

/// One MySQL connection, through one of the two clients.
pub enum MysqlConn {
    Wire(WireConn),
    Async(AsyncConn),
}

impl MysqlConn {
    pub async fn connect(spec: &TargetSpec) -> DbResult<Self> {
        spec.statements
            .check(super::Dbms::Mysql)
            .map_err(|e| DbError::new(ErrorClass::Other, e))?;
        match spec.ssl_mode {
            SslMode::Disable => {}
            // TLS goes through mysql_async; the lean client stays plain (src/db/tls.rs).
            SslMode::Prefer => match AsyncConn::connect(spec, true).await {
                // mysql_async: "Client asked for SSL but server does not have this capability".
                Err(e) if e.message.contains("server does not have this capability") => {}
                r => return r.map(MysqlConn::Async),
            },
            _ => return AsyncConn::connect(spec, true).await.map(MysqlConn::Async),
        }
        if spec.mysql_driver == MysqlDriver::Wire {
            match WireConn::connect(spec).await {
                Ok(c) => return Ok(MysqlConn::Wire(c)),
                Err(ConnectError::Db(e)) => return Err(e),
                // Something the lean client does not speak: the general driver does.
                Err(ConnectError::Unsupported(_)) => {}
            }
        }
        AsyncConn::connect(spec, false).await.map(MysqlConn::Async)
    }

    /// Which client this connection uses ("wire" or "mysql_async").
    pub fn driver(&self) -> &'static str {
        match self {
            MysqlConn::Wire(_) => "wire",
            MysqlConn::Async(_) => "mysql_async",
        }
    }
}

forward_to_client!(MysqlConn, Async);

/// A connection through `mysql_async`.
pub struct AsyncConn {
    conn: mysql_async::Conn,
    stmts: Vec<Statement>,
    /// Text mode (`--statements text`): the statements' SQL, sent as text queries with the
    /// parameters written in (`db::text`); `stmts` then stays empty.
    texts: Option<Vec<TextStmt>>,
    /// Text mode: the session's sql_mode has NO_BACKSLASH_ESCAPES (read at connect, and again
    /// after a statement run through `execute` that names sql_mode).
    no_backslash_escapes: bool,
}

/// Prepared statement `id`, checked against `params` here: mysql_async takes a count that does
/// not fit for a broken connection and closes it.
fn checked<'s>(stmts: &'s [Statement], id: StmtId, params: &[Value]) -> DbResult<&'s Statement> {
    let s = stmts
        .get(id.0)
        .ok_or_else(|| DbError::new(ErrorClass::Other, "unknown prepared statement"))?;
    DbError::check_param_count(s.num_params() as usize, params.len())?;
    Ok(s)
}

/// Statement parameters for mysql_async (it takes them by value, so a new vector each time).
fn bind(params: &[Value]) -> Params {
    if params.is_empty() {
        Params::Empty
    } else {
        Params::Positional(params.iter().map(to_mysql).collect())
    }
}

/// Map a driver error to its class (server error codes from the MariaDB manual).
pub fn classify(e: &mysql_async::Error) -> ErrorClass {
    match e {
        mysql_async::Error::Server(s) => super::mysqlwire::class_of_code(s.code),
        mysql_async::Error::Io(_) => ErrorClass::ConnectionLost,
        mysql_async::Error::Driver(
            mysql_async::DriverError::ConnectionClosed | mysql_async::DriverError::PoolDisconnected,
        ) => ErrorClass::ConnectionLost,
        _ => ErrorClass::Other,
    }
}

fn err(e: mysql_async::Error) -> DbError {
    DbError::new(classify(&e), e.to_string())
}

fn to_mysql(v: &Value) -> mysql_async::Value {
    match v {
        Value::Null => mysql_async::Value::NULL,
        Value::Int(i) => mysql_async::Value::Int(*i),
        Value::Text(t) => mysql_async::Value::Bytes(t.as_bytes().to_vec()),
        Value::Date { y, m, d } => mysql_async::Value::Date(*y as u16, *m, *d, 0, 0, 0, 0),
    }
}

impl AsyncConn {
    /// Connect through mysql_async; with `tls`, as `spec.ssl_mode` says.
    pub async fn connect(spec: &TargetSpec, tls: bool) -> DbResult<Self> {
        let mut b = OptsBuilder::default()
            .user(Some(spec.user.clone()))
            .pass(spec.password.clone())
            .db_name(Some(spec.database.clone()))
            // Statements are prepared once per connection and kept by us.
            .stmt_cache_size(0)
            // Honour the URL: a TCP URL stays on TCP, a socket URL uses the socket.
            .prefer_socket(false);
        b = match &spec.socket {
            Some(sock) => b.socket(Some(sock.clone())),
            None => b
                .ip_or_hostname(spec.host.clone())
                .tcp_port(spec.port)
                .tcp_nodelay(true),
        };
        if tls {
            b = b.ssl_opts(Some(super::tls::mysql_ssl_opts(
                spec.ssl_mode,
                spec.ssl_ca.as_ref(),
            )?));
        }
        let conn = mysql_async::Conn::new(Opts::from(b)).await.map_err(|e| {
            let class = classify(&e);
            let hint = match class {
                ErrorClass::AccessDenied => {
                    " (check the user and the password: set it with MYSQL_PWD)"
                }
                ErrorClass::ConnectionLost if !super::sock::busy_or_out_of_fds(&e.to_string()) => {
                    " (is the server running, and are host, port or socket right?)"
                }
                _ => "",
            };
            DbError::new(class, format!("{e}{hint}"))
        })?;
        let text = spec.statements == StatementMode::Text;
        let mut c = Self {
            conn,
            stmts: Vec::new(),
            texts: text.then(Vec::new),
            no_backslash_escapes: false,
        };
        if text {
            c.read_sql_mode().await?;
        }
        Ok(c)
    }

    /// Whether the session's string literals take backslash escapes (text mode's quoting).
    async fn read_sql_mode(&mut self) -> DbResult<()> {
        let v: Option<i64> = self
            .conn
            .query_first("SELECT @@SESSION.sql_mode LIKE '%NO_BACKSLASH_ESCAPES%'")
            .await
            .map_err(err)?;
        self.no_backslash_escapes = v == Some(1);
        Ok(())
    }

    /// Text mode: statement `id` with `params` written in.
    fn text_sql(&self, id: StmtId, params: &[Value]) -> DbResult<Option<String>> {
        let Some(texts) = &self.texts else {
            return Ok(None);
        };
        let st = texts
            .get(id.0)
            .ok_or_else(|| DbError::new(ErrorClass::Other, "unknown statement"))?;
        let q = Quoting::Mysql {
            backslash: !self.no_backslash_escapes,
        };
        st.render_string(q, params).map(Some)
    }

    pub async fn prepare(&mut self, sql: &str) -> DbResult<StmtId> {
        if let Some(texts) = &mut self.texts {
            texts.push(TextStmt::new(sql, super::Dbms::Mysql));
            return Ok(StmtId(texts.len() - 1));
        }
        let s = self.conn.prep(sql).await.map_err(err)?;
        self.stmts.push(s);
        Ok(StmtId(self.stmts.len() - 1))
    }

    pub async fn exec_rows(&mut self, id: StmtId, params: &[Value]) -> DbResult<u64> {
        let mut n = 0u64;
        if let Some(sql) = self.text_sql(id, params)? {
            let mut result = self.conn.query_iter(sql).await.map_err(err)?;
            result
                .for_each(|row| {
                    std::hint::black_box(&row);
                    n += 1
                })
                .await
                .map_err(err)?;
            return Ok(n);
        }
        let stmt = checked(&self.stmts, id, params)?;
        let mut result = self.conn.exec_iter(stmt, bind(params)).await.map_err(err)?;
        result
            .for_each(|row| {
                std::hint::black_box(&row);
                n += 1
            })
            .await
            .map_err(err)?;
        Ok(n)
    }

    /// Every column of every row as text (NULL as `None`); returns the row count.
    pub async fn exec_text(
        &mut self,
        id: StmtId,
        params: &[Value],
        out: &mut Vec<Option<String>>,
    ) -> DbResult<u64> {
        let rows: Vec<mysql_async::Row> = match self.text_sql(id, params)? {
            Some(sql) => self.conn.query(sql).await.map_err(err)?,
            None => {
                let stmt = checked(&self.stmts, id, params)?;
                self.conn.exec(stmt, bind(params)).await.map_err(err)?
            }
        };
        let n = rows.len() as u64;
        for row in rows {
            out.extend(row.unwrap().into_iter().map(|v| match v {
                mysql_async::Value::NULL => None,
                mysql_async::Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                other => Some(other.as_sql(true).trim_matches('\'').to_string()),
            }));
        }
        Ok(n)
    }

    /// Every column of every row as an integer (NULL as `None`); returns the row count.
    pub async fn exec_ints(
        &mut self,
        id: StmtId,
        params: &[Value],
        out: &mut Vec<Option<i64>>,
    ) -> DbResult<u64> {
        let mut n = 0u64;
        let mut bad = false;
        let mut on_row = |row: mysql_async::Row| {
            for v in row.unwrap_raw() {
                out.push(match v {
                    None | Some(mysql_async::Value::NULL) => None,
                    Some(mysql_async::Value::Int(i)) => Some(i),
                    Some(mysql_async::Value::UInt(u)) => Some(u as i64),
                    Some(mysql_async::Value::Bytes(b)) => {
                        let parsed = std::str::from_utf8(&b)
                            .ok()
                            .and_then(|s| s.trim().parse::<i64>().ok());
                        bad |= parsed.is_none();
                        parsed
                    }
                    Some(_) => {
                        bad = true;
                        None
                    }
                });
            }
            n += 1
        };
        match self.text_sql(id, params)? {
            // Text rows: every value arrives as bytes.
            Some(sql) => {
                let mut result = self.conn.query_iter(sql).await.map_err(err)?;
                result.for_each(&mut on_row).await.map_err(err)?;
            }
            None => {
                let stmt = checked(&self.stmts, id, params)?;
                let mut result = self.conn.exec_iter(stmt, bind(params)).await.map_err(err)?;
                result.for_each(&mut on_row).await.map_err(err)?;
            }
        }
        if bad {
            return Err(DbError::new(
                ErrorClass::Other,
                "expected integer columns in the result",
            ));
        }
        Ok(n)
    }

    pub async fn execute(&mut self, sql: &str) -> DbResult<()> {
        self.conn.query_drop(sql).await.map_err(err)?;
        if self.texts.is_some() && sql.to_ascii_lowercase().contains("sql_mode") {
            self.read_sql_mode().await?;
        }
        Ok(())
    }

    /// End the session with COM_QUIT and wait until it is closed: a mysql_async connection
    /// that is only dropped sends no goodbye, and the server counts it in `Aborted_clients`.
    pub async fn disconnect(self) -> DbResult<()> {
        self.conn.disconnect().await.map_err(err)
    }

    pub async fn query(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        let rows: Vec<mysql_async::Row> = self.conn.query(sql).await.map_err(err)?;
        Ok(rows
            .into_iter()
            .map(|row| {
                row.unwrap()
                    .into_iter()
                    .map(|v| match v {
                        mysql_async::Value::NULL => None,
                        mysql_async::Value::Bytes(b) => {
                            Some(String::from_utf8_lossy(&b).into_owned())
                        }
                        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
                    })
                    .collect()
            })
            .collect())
    }
}

impl MysqlConn {
    /// Streamed bulk load; only through mysql_async (the loader connects with it for this).
    pub async fn load_tsv(
        &mut self,
        table: &str,
        columns: &[&str],
        data: bytes::Bytes,
    ) -> DbResult<()> {
        match self {
            MysqlConn::Async(c) => c.load_tsv(table, columns, data).await,
            MysqlConn::Wire(_) => Err(DbError::new(
                ErrorClass::Other,
                "LOAD DATA LOCAL INFILE is not supported by the lean MySQL client (use ?driver=mysql_async)",
            )),
        }
    }
}

/// Streamed bulk load (the loader's `stream` method), kept apart from the query path above.
impl AsyncConn {
    /// `LOAD DATA LOCAL INFILE` of `data` (tab-separated rows, see `db::push_tsv`) into
    /// `table`: the client hands the rows over from memory, no file is written.
    pub async fn load_tsv(
        &mut self,
        table: &str,
        columns: &[&str],
        data: bytes::Bytes,
    ) -> DbResult<()> {
        use futures_util::StreamExt;
        self.conn.set_infile_handler(async move {
            Ok(futures_util::stream::once(async move { Ok(data) }).boxed())
        });
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'enginebench-rows' INTO TABLE {table} ({})",
            columns.join(",")
        );
        self.conn.query_drop(sql).await.map_err(err)
    }
}
