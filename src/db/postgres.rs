//! PostgreSQL over the extended protocol (prepared statements): through enginebench's own lean
//! client (`pgwire`, the default, cheapest in client CPU per query) or `tokio-postgres`
//! (`?driver=tokio_postgres`, TLS targets, and the fallback when the lean client cannot talk
//! to a server).

use bytes::BytesMut;
use futures_util::TryStreamExt;
use tokio_postgres::types::{IsNull, ToSql, Type};
use tokio_postgres::{NoTls, Statement};

use super::pgwire::{ConnectError, PgWireConn};
use super::text::{Quoting, StatementMode, TextStmt};
use super::tls::SslMode;
use super::url::PgDriver;
use super::{numbered_placeholders, DbError, DbResult, ErrorClass, StmtId, TargetSpec, Value};

/// One PostgreSQL connection, through one of the two clients.
pub enum PgConn {
    Wire(PgWireConn),
    Tokio(TokioPgConn),
}

impl PgConn {
    pub async fn connect(spec: &TargetSpec) -> DbResult<Self> {
        // TLS goes through tokio-postgres; the lean client stays plain (src/db/tls.rs).
        if spec.ssl_mode == SslMode::Disable && spec.pg_driver == PgDriver::Wire {
            match PgWireConn::connect(spec).await {
                Ok(c) => return Ok(PgConn::Wire(c)),
                Err(ConnectError::Db(e)) => return Err(e),
                // Something the lean client does not speak: the general driver does.
                Err(ConnectError::Unsupported(_)) => {}
            }
        }
        TokioPgConn::connect(spec).await.map(PgConn::Tokio)
    }

    /// Which client this connection uses ("wire" or "tokio_postgres").
    pub fn driver(&self) -> &'static str {
        match self {
            PgConn::Wire(_) => "wire",
            PgConn::Tokio(_) => "tokio_postgres",
        }
    }

    pub async fn copy_tsv(
        &mut self,
        table: &str,
        columns: &[&str],
        data: bytes::Bytes,
    ) -> DbResult<()> {
        match self {
            PgConn::Wire(c) => c.copy_tsv(table, columns, &data).await,
            PgConn::Tokio(c) => c.copy_tsv(table, columns, data).await,
        }
    }
}

forward_to_client!(PgConn, Tokio);

impl TokioPgConn {
    /// Binary values as text, for the types a capture can hold: integers, floats, numerics
    /// (as text through a cast in the SQL), text types, booleans and dates.
    pub async fn exec_text(
        &mut self,
        id: StmtId,
        params: &[Value],
        out: &mut Vec<Option<String>>,
    ) -> DbResult<u64> {
        if self.mode == StatementMode::Text {
            let rows = self.simple_rows(id, params).await?;
            for r in &rows {
                out.extend((0..r.len()).map(|i| r.get(i).map(str::to_string)));
            }
            return Ok(rows.len() as u64);
        }
        let rows: Vec<tokio_postgres::Row> = self
            .stream(id, params)
            .await?
            .try_collect()
            .await
            .map_err(err)?;
        for row in &rows {
            for (i, c) in row.columns().iter().enumerate() {
                let v = match *c.type_() {
                    Type::INT2 => row
                        .try_get::<_, Option<i16>>(i)
                        .map(|v| v.map(|x| x.to_string())),
                    Type::INT4 => row
                        .try_get::<_, Option<i32>>(i)
                        .map(|v| v.map(|x| x.to_string())),
                    Type::INT8 => row
                        .try_get::<_, Option<i64>>(i)
                        .map(|v| v.map(|x| x.to_string())),
                    Type::FLOAT4 => row
                        .try_get::<_, Option<f32>>(i)
                        .map(|v| v.map(|x| x.to_string())),
                    Type::FLOAT8 => row
                        .try_get::<_, Option<f64>>(i)
                        .map(|v| v.map(|x| x.to_string())),
                    Type::BOOL => row
                        .try_get::<_, Option<bool>>(i)
                        .map(|v| v.map(|x| if x { "t" } else { "f" }.to_string())),
                    _ => row.try_get::<_, Option<String>>(i),
                };
                out.push(v.map_err(|e| {
                    DbError::new(
                        ErrorClass::Other,
                        format!(
                            "column {} ({}) cannot be read as text: {e} (cast it in the SQL)",
                            c.name(),
                            c.type_()
                        ),
                    )
                })?);
            }
        }
        Ok(rows.len() as u64)
    }
}

/// A connection through `tokio-postgres` (binary values).
pub struct TokioPgConn {
    client: tokio_postgres::Client,
    stmts: Vec<Statement>,
    /// `--statements`: prepared (`stmts`), or kept here (`texts`) and sent as a simple Query
    /// with literals (text) or parsed as the unnamed statement each time (extended).
    mode: StatementMode,
    texts: Vec<TextStmt>,
    /// Extended mode: each statement's SQL with `$1..$n`.
    unnamed: Vec<String>,
    /// Extended mode's parameter type: none given (oid 0), so that the server infers it at
    /// Parse as it does for a prepared statement.
    untyped: Type,
}

/// A parameter sent in the text format with its type left to the server (extended mode): its
/// text form is what the lean client binds (`pgwire::msg::put_text`).
#[derive(Debug)]
struct Untyped<'a>(&'a Value);

impl ToSql for Untyped<'_> {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        if let Value::Null = self.0 {
            return Ok(IsNull::Yes);
        }
        let mut v = Vec::new();
        super::pgwire::msg::put_text(&mut v, self.0);
        out.extend_from_slice(&v);
        Ok(IsNull::No)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    fn encode_format(&self, _: &Type) -> tokio_postgres::types::Format {
        tokio_postgres::types::Format::Text
    }
    tokio_postgres::types::to_sql_checked!();
}

/// Map a driver error to its class by SQLSTATE.
pub fn classify(e: &tokio_postgres::Error) -> ErrorClass {
    if e.is_closed() {
        return ErrorClass::ConnectionLost;
    }
    match e.code() {
        Some(c) => super::pgwire::msg::class_of_sqlstate(c.code()),
        None => ErrorClass::ConnectionLost,
    }
}

fn err(e: tokio_postgres::Error) -> DbError {
    // The Display of a server error is terse ("db error"); the source carries the message.
    let msg = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut s = e.to_string();
            if let Some(src) = std::error::Error::source(&e) {
                s = format!("{s}: {src}");
            }
            s
        }
    };
    DbError::new(classify(&e), msg)
}

/// Days from 1970-01-01 to y-m-d (Howard Hinnant's civil-from-days inverse).
fn days_from_civil(y: i32, m: u8, d: u8) -> i32 {
    let (m, d) = (m as i32, d as i32);
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT8 => i.to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::NUMERIC | Type::TEXT | Type::VARCHAR | Type::BPCHAR => {
                    i.to_string().as_str().to_sql(ty, out)
                }
                _ => Err(format!("cannot bind an integer to a {ty} parameter").into()),
            },
            // Captured values are text; a numeric parameter gets them parsed.
            Value::Text(t) => match *ty {
                Type::INT2 => t.trim().parse::<i16>()?.to_sql(ty, out),
                Type::INT4 => t.trim().parse::<i32>()?.to_sql(ty, out),
                Type::INT8 => t.trim().parse::<i64>()?.to_sql(ty, out),
                Type::FLOAT4 => t.trim().parse::<f32>()?.to_sql(ty, out),
                Type::FLOAT8 => t.trim().parse::<f64>()?.to_sql(ty, out),
                _ => t.as_str().to_sql(ty, out),
            },
            Value::Date { y, m, d } => {
                if *ty != Type::DATE {
                    return Err(format!("cannot bind a date to a {ty} parameter").into());
                }
                // Binary DATE: days since 2000-01-01 as a big-endian i32.
                (days_from_civil(*y, *m, *d) - days_from_civil(2000, 1, 1)).to_sql(&Type::INT4, out)
            }
        }
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    tokio_postgres::types::to_sql_checked!();
}

impl TokioPgConn {
    pub async fn connect(spec: &TargetSpec) -> DbResult<Self> {
        let mut cfg = tokio_postgres::Config::new();
        cfg.user(&spec.user)
            .dbname(&spec.database)
            .application_name("enginebench");
        if let Some(p) = &spec.password {
            cfg.password(p);
        }
        match &spec.socket {
            Some(dir) => cfg.host_path(dir).port(spec.port),
            None => cfg.host(&spec.host).port(spec.port),
        };
        let connected = match spec.ssl_mode {
            SslMode::Disable => cfg.connect(NoTls).await.map(|(client, connection)| {
                // The connection object drives the socket; it ends when the client is dropped.
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                client
            }),
            mode => {
                cfg.ssl_mode(if mode == SslMode::Prefer {
                    tokio_postgres::config::SslMode::Prefer
                } else {
                    tokio_postgres::config::SslMode::Require
                });
                let tls = super::tls::pg_connector(mode, spec.ssl_ca.as_ref())?;
                cfg.connect(tls).await.map(|(client, connection)| {
                    tokio::spawn(async move {
                        let _ = connection.await;
                    });
                    client
                })
            }
        };
        let client = connected.map_err(|e| {
            let mut d = err(e);
            if d.class == ErrorClass::AccessDenied {
                d.message
                    .push_str(" (check the user and the password: set it with PGPASSWORD)");
            } else if d.class == ErrorClass::ConnectionLost
                && !super::sock::busy_or_out_of_fds(&d.message)
            {
                d.message
                    .push_str(" (is the server running, and are host, port or socket right?)");
            }
            d
        })?;
        Ok(Self {
            client,
            stmts: Vec::new(),
            mode: spec.statements,
            texts: Vec::new(),
            unnamed: Vec::new(),
            untyped: Type::new(
                "unknown".into(),
                0,
                tokio_postgres::types::Kind::Simple,
                "pg_catalog".into(),
            ),
        })
    }

    /// The rows of one execution of statement `id` (binary values): the prepared statement,
    /// or in extended mode the unnamed statement parsed with it.
    async fn stream(&self, id: StmtId, params: &[Value]) -> DbResult<tokio_postgres::RowStream> {
        if self.mode != StatementMode::Extended {
            let stmt = &self.stmts[id.0];
            return self
                .client
                .query_raw(stmt, params.iter())
                .await
                .map_err(err);
        }
        let (Some(st), Some(sql)) = (self.texts.get(id.0), self.unnamed.get(id.0)) else {
            return Err(DbError::new(ErrorClass::Other, "unknown statement"));
        };
        st.check_params(params)?;
        let ty = &self.untyped;
        self.client
            .query_typed_raw(sql, params.iter().map(|v| (Untyped(v), ty.clone())))
            .await
            .map_err(err)
    }

    /// Text mode: one execution of statement `id` as a simple Query; its rows (text values).
    async fn simple_rows(
        &self,
        id: StmtId,
        params: &[Value],
    ) -> DbResult<Vec<tokio_postgres::SimpleQueryRow>> {
        let st = self
            .texts
            .get(id.0)
            .ok_or_else(|| DbError::new(ErrorClass::Other, "unknown statement"))?;
        let sql = st.render_string(Quoting::Postgres, params)?;
        let msgs = self.client.simple_query(&sql).await.map_err(err)?;
        Ok(msgs
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => Some(r),
                _ => None,
            })
            .collect())
    }

    pub async fn prepare(&mut self, sql: &str) -> DbResult<StmtId> {
        if self.mode != StatementMode::Prepared {
            let st = TextStmt::new(sql, super::Dbms::Postgres);
            if self.mode == StatementMode::Extended {
                self.unnamed.push(st.numbered());
            }
            self.texts.push(st);
            return Ok(StmtId(self.texts.len() - 1));
        }
        let s = self
            .client
            .prepare(&numbered_placeholders(sql))
            .await
            .map_err(err)?;
        self.stmts.push(s);
        Ok(StmtId(self.stmts.len() - 1))
    }

    pub async fn exec_rows(&mut self, id: StmtId, params: &[Value]) -> DbResult<u64> {
        if self.mode == StatementMode::Text {
            let rows = self.simple_rows(id, params).await?;
            std::hint::black_box(&rows);
            return Ok(rows.len() as u64);
        }
        let stream = self.stream(id, params).await?;
        futures_util::pin_mut!(stream);
        let mut n = 0u64;
        while let Some(row) = stream.try_next().await.map_err(err)? {
            std::hint::black_box(&row);
            n += 1;
        }
        Ok(n)
    }

    pub async fn exec_ints(
        &mut self,
        id: StmtId,
        params: &[Value],
        out: &mut Vec<Option<i64>>,
    ) -> DbResult<u64> {
        if self.mode == StatementMode::Text {
            let rows = self.simple_rows(id, params).await?;
            for r in &rows {
                for i in 0..r.len() {
                    out.push(match r.get(i) {
                        None => None,
                        Some(t) => {
                            Some(super::pgwire::msg::parse_int(t.as_bytes()).ok_or_else(|| {
                                DbError::new(
                                    ErrorClass::Other,
                                    "exec_ints: a column is not an integer",
                                )
                            })?)
                        }
                    });
                }
            }
            return Ok(rows.len() as u64);
        }
        let stream = self.stream(id, params).await?;
        futures_util::pin_mut!(stream);
        let mut n = 0u64;
        while let Some(row) = stream.try_next().await.map_err(err)? {
            for (i, c) in row.columns().iter().enumerate() {
                let v = match *c.type_() {
                    Type::INT2 => row.try_get::<_, Option<i16>>(i).map(|v| v.map(i64::from)),
                    Type::INT4 => row.try_get::<_, Option<i32>>(i).map(|v| v.map(i64::from)),
                    Type::INT8 => row.try_get::<_, Option<i64>>(i),
                    ref t => {
                        return Err(DbError::new(
                            ErrorClass::Other,
                            format!("column {} is {t}, not an integer type", c.name()),
                        ))
                    }
                };
                out.push(v.map_err(err)?);
            }
            n += 1;
        }
        Ok(n)
    }

    pub async fn execute(&mut self, sql: &str) -> DbResult<()> {
        self.client.batch_execute(sql).await.map_err(err)
    }

    pub async fn query(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        let msgs = self.client.simple_query(sql).await.map_err(err)?;
        let mut out = Vec::new();
        for m in msgs {
            if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
                out.push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
            }
        }
        Ok(out)
    }
}

impl TokioPgConn {
    /// `COPY table (columns) FROM STDIN` of `data` (tab-separated text rows, see
    /// `db::push_tsv`).
    pub async fn copy_tsv(
        &mut self,
        table: &str,
        columns: &[&str],
        data: bytes::Bytes,
    ) -> DbResult<()> {
        use futures_util::SinkExt;
        let sql = format!("COPY {table} ({}) FROM STDIN", columns.join(","));
        let sink = self
            .client
            .copy_in::<_, bytes::Bytes>(&sql)
            .await
            .map_err(err)?;
        futures_util::pin_mut!(sink);
        sink.send(data).await.map_err(err)?;
        sink.as_mut().finish().await.map_err(err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_days() {
        assert_eq!(super::days_from_civil(1970, 1, 1), 0);
        assert_eq!(super::days_from_civil(2000, 1, 1), 10957);
        assert_eq!(super::days_from_civil(1969, 12, 31), -1);
    }
}
