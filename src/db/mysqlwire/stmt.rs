//! Statements: prepared on the server (COM_STMT_PREPARE, then COM_STMT_EXECUTE with binary
//! parameters), or in text mode (`--statements text`) kept here and sent as COM_QUERY with
//! their parameters written in as literals (`db::text`), their rows then in the text protocol.

use super::*;
use crate::db::text::{Quoting, StatementMode, TextStmt};
use crate::db::Dbms;

impl WireConn {
    /// Prepare a statement written with `?` placeholders; returns its index. In text mode
    /// (`--statements text`) nothing is sent: the SQL is kept, cut at its placeholders.
    pub async fn prepare(&mut self, sql: &str) -> DbResult<usize> {
        if self.mode == StatementMode::Text {
            self.texts.push(TextStmt::new(sql, Dbms::Mysql));
            return Ok(self.texts.len() - 1);
        }
        self.settle().await?;
        let w = self.begin(0);
        w.push(COM_STMT_PREPARE);
        w.extend_from_slice(sql.as_bytes());
        self.send().await?;
        let p = self.packet().await?;
        let pk = &self.r.buf[p];
        match pk.first() {
            Some(0x00) if pk.len() >= 12 => {}
            Some(0xFF) => return Err(server_error(pk)),
            _ => return Err(proto("prepare response")),
        }
        let mut r = Reader::new(pk);
        r.skip(1);
        let id = r.u32();
        let ncols = r.u16();
        let nparams = r.u16();
        // Parameter definitions (not needed here), then the result's columns; each block
        // ended by EOF.
        if nparams > 0 {
            for _ in 0..nparams {
                self.packet().await?;
            }
            self.expect_eof().await?;
        }
        let mut cols = Vec::with_capacity(ncols as usize);
        if ncols > 0 {
            for _ in 0..ncols {
                let p = self.packet().await?;
                cols.push(parse_column(&self.r.buf[p]));
            }
            self.expect_eof().await?;
        }
        self.stmts.push(Stmt {
            id,
            params: nparams,
            cols,
            bound: Vec::new(),
        });
        Ok(self.stmts.len() - 1)
    }

    pub(super) async fn expect_eof(&mut self) -> DbResult<u16> {
        let p = self.packet().await?;
        let pk = &self.r.buf[p];
        if pk.first() == Some(&0xFE) && pk.len() < 9 {
            Ok(eof_status(pk))
        } else if pk.first() == Some(&0xFF) {
            Err(server_error(pk))
        } else {
            Err(proto("expected EOF"))
        }
    }

    /// The packet that executes statement `idx` with `params`, in `wbuf`: COM_STMT_EXECUTE,
    /// or in text mode COM_QUERY with the parameters written into the SQL as literals.
    pub(super) fn write_execute(&mut self, idx: usize, params: &[Value]) -> DbResult<()> {
        if self.mode == StatementMode::Text {
            return self.write_text_query(idx, params);
        }
        let Some(st) = self.stmts.get(idx) else {
            return Err(DbError::new(
                ErrorClass::Other,
                "unknown prepared statement",
            ));
        };
        DbError::check_param_count(st.params as usize, params.len())?;
        let id = st.id;
        // Types as the server last saw them for this statement: then none are sent again.
        let same_types = st.bound.len() == params.len()
            && st
                .bound
                .iter()
                .zip(params)
                .all(|(t, v)| *t == param_type(v));
        if !same_types {
            let st = &mut self.stmts[idx];
            st.bound.clear();
            st.bound.extend(params.iter().map(param_type));
        }
        let w = self.begin(0);
        w.push(COM_STMT_EXECUTE);
        w.extend_from_slice(&id.to_le_bytes());
        w.push(0); // CURSOR_TYPE_NO_CURSOR
        w.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        if !params.is_empty() {
            let nb = params.len().div_ceil(8);
            let at = w.len();
            w.resize(at + nb, 0);
            for (i, v) in params.iter().enumerate() {
                if matches!(v, Value::Null) {
                    w[at + i / 8] |= 1 << (i % 8);
                }
            }
            if same_types {
                w.push(0); // new-params-bound: the server keeps the types of the last execution
            } else {
                w.push(1); // new-params-bound: types follow
                for v in params {
                    w.extend_from_slice(&[param_type(v), 0]);
                }
            }
            for v in params {
                match v {
                    Value::Null => {}
                    Value::Int(i) => w.extend_from_slice(&i.to_le_bytes()),
                    Value::Text(t) => put_lenenc_str(w, t.as_bytes()),
                    Value::Date { y, m, d } => {
                        w.push(4);
                        w.extend_from_slice(&(*y as u16).to_le_bytes());
                        w.push(*m);
                        w.push(*d);
                    }
                }
            }
        }
        Ok(())
    }

    fn write_text_query(&mut self, idx: usize, params: &[Value]) -> DbResult<()> {
        let Some(st) = self.texts.get(idx) else {
            return Err(DbError::new(ErrorClass::Other, "unknown statement"));
        };
        let q = Quoting::Mysql {
            backslash: !self.no_backslash_escapes,
        };
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0, 0, 0, 0, COM_QUERY]);
        st.render(&mut self.wbuf, q, params)
    }

    /// The statement whose execution a reply answers, as `read_results` takes it: None in
    /// text mode (a text query's reply: text rows, no cached metadata).
    pub(super) fn replying(&self, idx: usize) -> Option<usize> {
        (self.mode != StatementMode::Text).then_some(idx)
    }

    /// Forget the parameter types the server holds for statement `idx` (prepared mode), so the
    /// next execution sends them.
    pub(super) fn unbind(&mut self, idx: usize) {
        if let Some(st) = self.stmts.get_mut(idx) {
            st.bound.clear();
        }
    }
}

/// A row of a reply as text values: binary rows (prepared statements) formatted the way the
/// text protocol shows each type, text rows as they are.
pub(super) fn row_text(binary: bool, cols: &[Col], row: &[u8]) -> Vec<Option<String>> {
    if binary {
        decode_binary_row(cols, row)
    } else {
        decode_text_row(cols.len(), row)
    }
}
